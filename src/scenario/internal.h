/* What the scenario's backends share (ns3.c, packet.c). */
#ifndef FABRICSIM_SCENARIO_INTERNAL_H
#define FABRICSIM_SCENARIO_INTERNAL_H

#include "fabricsim/scenario.h"

/* Each link's busy time (busy: n_links entries) as the length of the union
 * of [st[i], fin[i]] over the flows i crossing it; FS_ENOMEM or 0. */
int fs__scenario_busy_times(const fs_scenario *sc, const double *st, const double *fin,
                            double *busy);

#endif
