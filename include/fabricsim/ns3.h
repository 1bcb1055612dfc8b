/* The ns-3 validation backend of `fabricsim sim --backend ns3`: a scenario
 * routed by fabricsim is written to an exchange file (docs/formats.md, "The
 * ns-3 exchange file"), run by the packet-level program build/fabricsim-ns3
 * (tools/ns3/fabricsim_ns3.cc, `make ns3`), and its item times are read back
 * into the scenario's simulation, so the usual reports print ns-3's times.
 *
 * ns-3 pins each flow to one path and has no routing control, so scenarios
 * with re-optimisation, failures or flows spread over several paths are
 * refused (FS_EINVAL, naming the file, the JSON path and the value). */
#ifndef FABRICSIM_NS3_H
#define FABRICSIM_NS3_H

#include <stddef.h>
#include <stdio.h>

#include "fabricsim/err.h"
#include "fabricsim/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Before fs_scenario_run: 0, or FS_EINVAL if the scenario asks for routing
 * control ($.routing.mode optimized, $.failures) or spraying ($.routing.mode
 * spray). sc is not changed. */
int fs_ns3_check(const fs_scenario *sc, fs_err *err);

/* After fs_scenario_run: writes the exchange file of sc (nodes, directed
 * links, flows with their routed paths, tasks, dependencies) to f. Fails
 * with FS_EINVAL if a flow's route spreads over several paths (naming
 * $.flows[i]), FS_EIO if writing failed. sc is not changed. */
int fs_ns3_write(FILE *f, const fs_scenario *sc, fs_err *err);

/* Parses a result file (`text`, NUL-terminated, `len` bytes; `file` labels
 * errors: "file:line: what, got value") and replaces the times of every item
 * of sc's simulation with it; each link's busy time becomes the length of
 * the union of [start, finish] of the flows crossing it. Every item must be
 * listed exactly once with 0 <= start <= finish. On error (FS_EINVAL,
 * FS_ENOMEM) sc is unchanged. */
int fs_ns3_read(const char *text, size_t len, const char *file, fs_scenario *sc, fs_err *err);

/* Runs `program` on sc (after fs_scenario_run): writes the exchange file to
 * a temporary file, runs `program --in=IN --out=OUT` (its stderr is the
 * caller's), reads OUT with fs_ns3_read and removes both files. FS_EINVAL
 * if the program is missing, exits with status 2 (it refused the input) or
 * cannot be started; FS_EIO if it failed otherwise or the files could not
 * be written; errors of fs_ns3_write and fs_ns3_read. */
int fs_ns3_run(fs_scenario *sc, const char *program, fs_err *err);

#ifdef __cplusplus
}
#endif

#endif
