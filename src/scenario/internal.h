/* What the scenario's backends share (ns3.c, packet.c). */
#ifndef FABRICSIM_SCENARIO_INTERNAL_H
#define FABRICSIM_SCENARIO_INTERNAL_H

#include "fabricsim/err.h"
#include "fabricsim/scenario.h"

/* 0, or FS_EINVAL naming the file, the JSON path and the value if sc asks
 * for what a backend that pins each flow to one path cannot run: routing
 * control ($.routing.mode optimized, $.failures) or spraying. `backend`
 * names it in the message ("the ns-3 backend"). */
int fs__scenario_single_path_check(const fs_scenario *sc, const char *backend, fs_err *err);

/* After the run: 0, or FS_EINVAL naming $.flows[i] if flow i is routed over
 * several paths (or none), which `backend` cannot run. */
int fs__scenario_flow_single_path(const fs_scenario *sc, int32_t i, const char *backend,
                                  fs_err *err);

/* Each link's busy time (busy: n_links entries) as the length of the union
 * of [st[i], fin[i]] over the flows i crossing it; FS_ENOMEM or 0. */
int fs__scenario_busy_times(const fs_scenario *sc, const double *st, const double *fin,
                            double *busy);

#endif
