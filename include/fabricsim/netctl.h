/* The network controller: what changes the network while a simulation runs
 * (issue 6). It fails cables at given times and re-routes the flows that
 * crossed them once the failure is detected, and it periodically
 * re-optimises routes for the traffic it observes (Cohen et al., "Routing
 * for Large ML Models", arXiv 2503.05324: training traffic repeats, so what
 * ran in the last interval predicts the next one).
 *
 * Every `interval_s` the controller takes the flows that started in the
 * last interval or are still in flight, sums their bytes per (source,
 * destination) pair, runs a routing optimiser (routeopt.h) on those pairs as
 * one phase, and gives every flow of a pair whose path changed the new path
 * (pending flows: free; flows in flight: they carry nothing for
 * `reconfig_s`, the reconfiguration cost). docs/model-route.md has the
 * model and its limits. Not safe for concurrent use. */
#ifndef FABRICSIM_NETCTL_H
#define FABRICSIM_NETCTL_H

#include <stdint.h>

#include "fabricsim/err.h"
#include "fabricsim/route.h"
#include "fabricsim/routeopt.h"
#include "fabricsim/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A cable fails (both directions) at at_s. */
typedef struct fs_netctl_failure {
  double at_s;
  int32_t link; /* either direction's link id */
} fs_netctl_failure;

typedef struct fs_netctl_opts {
  /* Routing of re-computed routes after a failure: shortest, ecmp or
   * spray; a family mode falls back to ecmp (the family's structure is
   * broken by the failure). seed as fs_route_ecmp. */
  fs_route_mode mode;
  uint64_t seed;
  /* Periodic re-optimisation; off when interval_s is 0. */
  double interval_s;
  fs_routeopt_kind optimizer; /* greedy is the one meant for this */
  double reconfig_s;          /* hold of a flow in flight whose path changes */
  /* Failures (copied) and the time from a failure to re-routing. */
  const fs_netctl_failure *failures;
  int32_t n_failures;
  double detect_s;
  /* Per simulation item, or NULL: nonzero = a flow whose path was given
   * (explicit): re-optimisation neither sees nor moves it; a failure on
   * its path still re-routes it. Read during fs_netctl_new only. */
  const uint8_t *pinned;
} fs_netctl_opts;

/* Defaults: ecmp, seed 1, no re-optimisation, greedy, no hold, no
 * failures, detection 0. */
void fs_netctl_opts_init(fs_netctl_opts *o);

typedef struct fs_netctl_stats {
  int32_t reopts;          /* re-optimisations run (intervals with traffic) */
  int64_t pairs_moved;     /* (source, destination) pairs given a new path */
  int64_t flows_rerouted;  /* flows given a new route, by either cause */
  int64_t flows_held;      /* of which in flight (paid reconfig_s) */
  int32_t cables_failed;
  int64_t failure_reroutes;/* flows moved off failed cables */
  double opt_wall_s;       /* wall time inside the optimiser (not deterministic) */
  double opt_wall_max_s;   /* the longest single re-optimisation */
} fs_netctl_stats;

typedef struct fs_netctl fs_netctl;

/* Attaches a controller to s (before its run): indexes its flows and arms
 * timers. s and its topology must outlive the controller. Fails with
 * FS_EINVAL (a bad option or failure, with err saying which) or
 * FS_ENOMEM; nothing is armed then. During the run, a failure that leaves
 * some flow without a path aborts the run (FS_EINVAL, naming the hosts),
 * as does an optimiser error. */
int fs_netctl_new(fs_sim *s, const fs_netctl_opts *o, fs_netctl **out, fs_err *err);
void fs_netctl_stats_get(const fs_netctl *c, fs_netctl_stats *out);
void fs_netctl_free(fs_netctl *c); /* NULL is a no-op */

/* Parses "a-b" cable names (node names as fs_topo_node_name writes them,
 * e.g. "leaf0-spine1") or a switch name ("spine1": all its cables) into
 * link ids: writes up to max links (one direction per cable) and returns
 * the count, or FS_EINVAL with err naming what is unknown. */
int32_t fs_netctl_parse_target(const fs_topo *t, const char *what, int32_t *links, int32_t max,
                               fs_err *err);

/* Whether m can be the routing before re-optimisation: ecmp, shortest or
 * spray, the modes netctl can also route around failures with (a family
 * mode's structure breaks when a cable fails). */
int fs_netctl_base_mode_ok(fs_route_mode m);

/* ---- the file formats' sections that ask for routing control ----
 * Job files (`fabricsim train`) and scenario files (`fabricsim sim`) share
 * one reader of "routing" and one of "failures": the same keys, rules and
 * messages; only their time keys differ (job files: interval_ms,
 * reconfig_us, detect_ms, at_ms; scenario files: whole nanoseconds,
 * interval_ns, reconfig_ns, detect_ns, at_ns). root is the parsed document
 * (cjson/cJSON.h); file labels the messages ("FILE: $.routing.mode: ...").
 * Each returns 0, FS_EINVAL with err naming the JSON path and the value,
 * or FS_ENOMEM. */
struct cJSON;

/* How a time is written: its key, the seconds per unit, whether it must be
 * an integer, its range and its default (when it may be absent). */
typedef struct fs_netctl_time_key {
  const char *key;
  double unit_s;
  int integer;
  double min, max, def;
} fs_netctl_time_key;

/* root["failures"], if present: an array of objects {AT: T, "cable":
 * "a-b"} or {AT: T, "switch": "name"}, names resolved on t by
 * fs_netctl_parse_target (a switch stands for all its cables). Appends one
 * fs_netctl_failure per cable to *failures (grown, freed by the caller with
 * free(); *n counts them); on failure the entries already appended stay
 * there, counted, for the caller to free. */
int fs_netctl_failures_from_json(const struct cJSON *root, const char *file, const fs_topo *t,
                                 const fs_netctl_time_key *at, fs_netctl_failure **failures,
                                 int32_t *n, fs_err *err);

/* root["routing"], if present: {"mode", "seed", DETECT} and, with mode
 * "optimized", {"base", INTERVAL, "optimizer", RECONFIG}. */
typedef struct fs_netctl_routing_format {
  fs_netctl_time_key interval, reconfig, detect;
  int allow_explicit;  /* mode "explicit" (scenario flows carry their paths) */
  const fs_topo *topo; /* if not NULL, the mode must suit it (fs_route_mode_check) */
} fs_netctl_routing_format;
typedef struct fs_netctl_routing {
  fs_route_mode mode; /* with optimized: the base routing before the first re-optimisation */
  uint64_t seed;
  int optimized;
  fs_routeopt_kind optimizer;
  double interval, reconfig, detect; /* in their keys' units */
} fs_netctl_routing;
int fs_netctl_routing_from_json(const struct cJSON *root, const char *file,
                                const fs_netctl_routing_format *fmt, fs_netctl_routing *out,
                                fs_err *err);

#ifdef __cplusplus
}
#endif

#endif
