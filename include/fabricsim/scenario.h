/* Scenario files: a topology, a routing mode and a DAG of flows and tasks
 * (the input of `fabricsim sim`; the format is in docs/formats.md).
 * Loading validates everything that can be checked without simulating and
 * reports the first problem as "file: $.json.path: what, got value".
 * Running routes every flow, simulates and keeps the results. */
#ifndef FABRICSIM_SCENARIO_H
#define FABRICSIM_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "fabricsim/err.h"
#include "fabricsim/route.h"
#include "fabricsim/sim.h"
#include "fabricsim/topo.h"

typedef struct fs_scenario_flow {
  const char *id;
  int32_t src, dst;   /* host ids */
  double bytes;
  int64_t start_ns;   /* earliest start */
  int32_t *path;      /* explicit node path or NULL */
  int32_t path_len;
  double n_paths;     /* after the run: paths the route spreads over */
} fs_scenario_flow;

typedef struct fs_scenario_task {
  const char *id;
  int32_t host;
  int64_t start_ns, duration_ns;
} fs_scenario_task;

typedef struct fs_scenario_mem fs_scenario_mem;

/* Items are numbered flows first (item i = flows[i]), then tasks
 * (item n_flows + j = tasks[j]); the simulation uses the same ids. */
typedef struct fs_scenario {
  char file[256];
  fs_topo *topo;
  fs_router *router;
  fs_route_mode mode;
  uint64_t seed;
  fs_scenario_flow *flows;
  int32_t n_flows;
  fs_scenario_task *tasks;
  int32_t n_tasks;
  int32_t (*deps)[2]; /* (before, after) item pairs */
  int32_t n_deps;
  fs_sim *sim;        /* set by fs_scenario_run */
  fs_scenario_mem *mem;
} fs_scenario;

/* Parses NUL-terminated `text` of `len` bytes; `file` labels errors. */
int fs_scenario_parse(const char *text, size_t len, const char *file,
                      fs_scenario **out, fs_err *err);
/* Reads and parses a file. */
int fs_scenario_load(const char *path, fs_scenario **out, fs_err *err);
void fs_scenario_free(fs_scenario *sc); /* NULL is a no-op */

/* Routes every flow with sc->mode / sc->seed (change them first to
 * override the file), builds the DAG and simulates it. A dependency cycle
 * fails with FS_ECYCLE naming the ids: "$.flows[0].after: a -> b -> a". */
int fs_scenario_run(fs_scenario *sc, const fs_sim_opts *opts, fs_err *err);

#endif
