/* Scenario files: a topology, a routing mode and a DAG of flows and tasks
 * (the input of `fabricsim sim`; the format is in docs/formats.md), and
 * optionally routing control (netctl.h): periodic re-optimisation (routing
 * mode "optimized") and timed cable/switch failures.
 * Loading validates everything that can be checked without simulating and
 * reports the first problem as "file: $.json.path: what, got value".
 * Running routes every flow, simulates (with the controller attached when
 * the scenario asks for one) and keeps the results. */
#ifndef FABRICSIM_SCENARIO_H
#define FABRICSIM_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "fabricsim/err.h"
#include "fabricsim/netctl.h"
#include "fabricsim/route.h"
#include "fabricsim/sim.h"
#include "fabricsim/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fs_scenario_flow {
  const char *id;
  int32_t src, dst;   /* host ids */
  double bytes;
  int64_t start_ns;   /* earliest start */
  int32_t *path;      /* explicit node path or NULL */
  int32_t path_len;
  double n_paths;     /* after the run: paths the final route spreads over */
  int moved;          /* after the run: 1 if the controller changed its route */
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
  fs_route_mode mode; /* with optimized: the base routing before re-optimising */
  uint64_t seed;
  fs_transport transport; /* "transport" (fluid when absent) */
  /* Routing control. optimized: re-optimise every interval_ns with
   * `optimizer`, a flow in flight that moves pays reconfig_ns. Failures
   * (one per cable, a switch expanded to its cables) are routed around
   * detect_ns after they happen. */
  int optimized;
  int64_t interval_ns, reconfig_ns, detect_ns;
  fs_routeopt_kind optimizer;
  fs_netctl_failure *failures; /* owned */
  int32_t n_failures;
  int controlled;              /* after the run: a controller was attached */
  fs_netctl_stats control;     /* after the run: what it did (if controlled) */
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

/* Overrides the file's routing with a mode name: "optimized" (periodic
 * re-optimisation on top of the file's base routing if it has one, else
 * ecmp, with the file's interval/optimizer/reconfiguration or the defaults
 * 1 ms/greedy/0) or any fs_route_mode name (re-optimisation off; failures
 * stay). Returns 0, or FS_EINVAL (unknown name, or a mode the topology
 * cannot route: err says why, without a prefix); sc is unchanged then. */
int fs_scenario_set_routing(fs_scenario *sc, const char *name, fs_err *err);

/* 1 if a run attaches a controller (optimized or failures given). */
int fs_scenario_has_control(const fs_scenario *sc);

/* Routes every flow with sc->mode / sc->seed (change them first to
 * override the file), builds the DAG, attaches the controller if
 * fs_scenario_has_control, and simulates it. A dependency cycle fails with
 * FS_ECYCLE naming the ids: "$.flows[0].after: a -> b -> a"; a failure that
 * leaves a flow without a path fails with FS_EINVAL naming its hosts. On
 * any failure the results are not valid (sc->sim may be partial). */
int fs_scenario_run(fs_scenario *sc, const fs_sim_opts *opts, fs_err *err);

#ifdef __cplusplus
}
#endif

#endif
