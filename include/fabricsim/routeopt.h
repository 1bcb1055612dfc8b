/* Routing optimisation for training traffic (issue 6; Cohen et al.,
 * "Routing for Large ML Models", arXiv 2503.05324). docs/model-route.md
 * defines everything here with its reasons.
 *
 * Traffic model. A job is a list of phases; a phase is a set of flows
 * (src host, dst host, bytes) that run together, repeated `repeat` times in a
 * row (step t of a ring all-reduce over p ranks is p flows r -> r+1 of n/p
 * bytes, and all 2(p-1) steps have that pattern: one phase, repeat 2(p-1)).
 * Jobs run their phases in lockstep: concurrent set k (k = 0..K-1, K the
 * most phases of any job) holds phase k mod n_j of every job j.
 *
 * Metric. Under a routing (one candidate path per flow, or an even split
 * over all of them), each concurrent set gets max-min fair rates; a phase
 * lasts as long as its slowest flow. Against the ideal fabric (only links
 * touching a host, NIC or scale-up switch constrain) this gives per-job
 * slowdown, network efficiency, max link utilisation and load, Jain's index
 * and the two-level max-min objective (min over jobs, then over flows).
 *
 * Optimisers choose one candidate path per flow among the equal-cost
 * shortest paths (or the K shortest loop-free paths, for fabrics with few
 * equal-cost paths): exact (GLPK MILP minimising the max link load, i.e.
 * maximising the minimum normalised flow throughput), greedy (largest flows
 * first, then moves off the bottleneck), and the baselines ECMP, random,
 * spray and, on a 2-tier Clos, bipartite edge colouring. A problem is not
 * safe for concurrent use. */
#ifndef FABRICSIM_ROUTEOPT_H
#define FABRICSIM_ROUTEOPT_H

#include <stdint.h>

#include "fabricsim/err.h"
#include "fabricsim/route.h"
#include "fabricsim/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- traffic ------------------------------------------------------------ */
typedef struct fs_routeopt_flow {
  int32_t src, dst; /* host node ids */
  double bytes;
  int32_t phase;    /* index into fs_routeopt_traffic.phases */
} fs_routeopt_flow;

typedef struct fs_routeopt_phase {
  int32_t job;
  int32_t first_flow, n_flows;
  int32_t repeat; /* consecutive runs of the same flows (>= 1) */
} fs_routeopt_phase;

typedef struct fs_routeopt_job {
  char name[64];
  int32_t first_phase, n_phases;
  int32_t first_rank, n_ranks; /* into fs_routeopt_traffic.rank_hosts */
  double bytes;                /* collective size (nccl-tests convention) */
  char collective[16];         /* "allreduce", "allgather", "reducescatter", "custom" */
} fs_routeopt_job;

typedef struct fs_routeopt_traffic {
  fs_routeopt_job *jobs;
  fs_routeopt_phase *phases;
  fs_routeopt_flow *flows;
  int32_t *rank_hosts;
  int32_t n_jobs, n_phases, n_flows, n_rank_hosts;
  size_t cap_jobs, cap_phases, cap_flows, cap_ranks;
} fs_routeopt_traffic;

/* Empty traffic: all zero. */
void fs_routeopt_traffic_init(fs_routeopt_traffic *tr);
void fs_routeopt_traffic_free(fs_routeopt_traffic *tr); /* leaves it empty */

/* Appends a job of ring steps over hosts[0..p) (p >= 2, distinct hosts):
 * collective "allreduce" (one phase of p flows r -> r+1 mod p of bytes/p,
 * repeat 2(p-1)), "allgather" or "reducescatter" (the same, repeat p-1).
 * Returns 0, FS_EINVAL (bad name or p) or FS_ENOMEM; tr is unchanged on
 * failure. */
int fs_routeopt_traffic_add_ring(fs_routeopt_traffic *tr, const char *name, const char *collective,
                                 const int32_t *hosts, int32_t p, double bytes, fs_err *err);

/* Appends a job with one phase of explicit flows (src, dst, bytes triples in
 * flows[0..n)), repeated `repeat` times. Errors as above. */
int fs_routeopt_traffic_add_phase_job(fs_routeopt_traffic *tr, const char *name,
                                      const fs_routeopt_flow *flows, int32_t n, int32_t repeat,
                                      fs_err *err);

/* Appends one more phase (flows[0..n), repeated `repeat` times) to the last
 * job added, which must have been added by fs_routeopt_traffic_add_phase_job
 * (a job of several phase patterns, e.g. a pipeline's sends then a
 * data-parallel all-reduce). Errors as above, and FS_EINVAL if there is no
 * such job. */
int fs_routeopt_traffic_add_phase(fs_routeopt_traffic *tr, const fs_routeopt_flow *flows,
                                  int32_t n, int32_t repeat, fs_err *err);

/* Reads a jobs file (docs/model-route.md):
 *   {"seed": 1, "jobs": [{"name": "a", "ranks": [0, 1, ...] | "placement":
 *    "packed|random|rail", "size": P, "collective": "allreduce", "algo":
 *    "ring", "bytes": 1e9}, ...]}
 * placing ranks on the hosts of t not taken by earlier jobs. Errors name the
 * file, the JSON path and the value (FS_EINVAL); *tr must be empty and is
 * left empty on failure. */
int fs_routeopt_traffic_from_json(const char *text, const char *file, const fs_topo *t,
                                  fs_routeopt_traffic *tr, fs_err *err);
int fs_routeopt_traffic_from_file(const char *path, const fs_topo *t, fs_routeopt_traffic *tr,
                                  fs_err *err);

/* ---- problem: traffic + candidate paths on a topology ------------------- */
typedef struct fs_routeopt_problem fs_routeopt_problem;

/* Most equal-cost paths kept per flow; a pair with more is refused. */
#define FS_ROUTEOPT_MAX_PATHS 4096

/* Which candidate paths a flow gets. */
typedef enum fs_routeopt_paths {
  FS_ROUTEOPT_PATHS_ECMP = 0,  /* all equal-cost shortest paths (default) */
  FS_ROUTEOPT_PATHS_KSHORTEST  /* the K shortest loop-free paths by hop count
                                  (Yen), and at least every equal-cost one */
} fs_routeopt_paths;

/* Most K of k-shortest candidates. */
#define FS_ROUTEOPT_MAX_K 64

typedef struct fs_routeopt_problem_opts {
  fs_routeopt_paths paths;
  int32_t k; /* k-shortest: K in [1, FS_ROUTEOPT_MAX_K] */
} fs_routeopt_problem_opts;

/* "ecmp" or "kshortest"; parse returns 0 or FS_EINVAL (*out untouched). */
const char *fs_routeopt_paths_name(fs_routeopt_paths x);
int fs_routeopt_paths_parse(const char *name, fs_routeopt_paths *out);

/* Enumerates every flow's equal-cost shortest paths and the ideal (host
 * links only) rates. t and tr must outlive the problem. Fails with FS_EINVAL
 * (a flow with no path, src == dst, host out of range), FS_ERANGE (more than
 * FS_ROUTEOPT_MAX_PATHS paths) or FS_ENOMEM; *out is then untouched. */
int fs_routeopt_problem_new(const fs_topo *t, const fs_routeopt_traffic *tr,
                            fs_routeopt_problem **out, fs_err *err);

/* The same with a choice of candidates (o == NULL: equal-cost, exactly as
 * fs_routeopt_problem_new). K-shortest: a flow's candidates are its K
 * shortest paths that never forward through a host nor repeat a node,
 * sorted by (hops, link ids) -- but never fewer than its equal-cost shortest
 * paths (then exactly those), so the ECMP baseline's path is always a
 * candidate and k-shortest never offers less than equal-cost. Fails as
 * above, and with FS_EINVAL for a K out of range or an unknown kind. */
int fs_routeopt_problem_new_opts(const fs_topo *t, const fs_routeopt_traffic *tr,
                                 const fs_routeopt_problem_opts *o, fs_routeopt_problem **out,
                                 fs_err *err);
void fs_routeopt_problem_free(fs_routeopt_problem *p); /* NULL is a no-op */

int32_t fs_routeopt_n_flows(const fs_routeopt_problem *p);
int32_t fs_routeopt_n_paths(const fs_routeopt_problem *p, int32_t flow);
/* The links of candidate path k of a flow, in path order; *hops gets their
 * count. */
const int32_t *fs_routeopt_path(const fs_routeopt_problem *p, int32_t flow, int32_t k,
                                int32_t *hops);
/* The rate (bit/s) a flow needs to finish with its phase on the ideal
 * fabric: bytes * 8 / ideal phase time. The optimisers' demand. */
double fs_routeopt_demand_bps(const fs_routeopt_problem *p, int32_t flow);

/* A routing: choice[f] = candidate path index of flow f, or FS_ROUTEOPT_SPLIT for
 * an even split over all of its candidates (ideal packet spraying). */
#define FS_ROUTEOPT_SPLIT (-1)

/* The flow's route for the engine (fs_sim_add_flow). 0 or FS_ENOMEM. */
int fs_routeopt_route(fs_routeopt_problem *p, const int32_t *choice, int32_t flow, fs_route *out,
                      fs_err *err);

/* ---- metric ------------------------------------------------------------- */
typedef struct fs_routeopt_metric {
  /* the two-level max-min objective (normalised: ideal = 1) */
  double min_job_tput;  /* min over jobs of ideal time / time */
  double min_flow_tput; /* min over flows and sets of rate / demand */
  double efficiency;    /* sum_j W_j / T_j over sum_j W_j / T*_j */
  double jain;          /* Jain's index of the jobs' normalised throughputs */
  double max_link_util; /* max over links of carried rate / capacity */
  double max_link_load; /* max over links of demand routed / capacity */
  double worst_slowdown, mean_slowdown;
} fs_routeopt_metric;

/* Evaluates a routing. job_time_s and job_ideal_s (n_jobs entries each, or
 * NULL) get each job's time for all its phases under the routing and on the
 * ideal fabric. 0 or FS_ENOMEM / FS_EINVAL (a choice out of range). */
int fs_routeopt_evaluate(fs_routeopt_problem *p, const int32_t *choice, fs_routeopt_metric *m,
                         double *job_time_s, double *job_ideal_s, fs_err *err);

/* Lexicographic two-level comparison: > 0 if a is better than b, < 0 if
 * worse, 0 if equal to rel 1e-9 (min job throughput, then min flow
 * throughput, then efficiency). */
int fs_routeopt_metric_cmp(const fs_routeopt_metric *a, const fs_routeopt_metric *b);

/* ---- optimisers --------------------------------------------------------- */
#define FS_ROUTEOPT_KIND_MAP(XX)                                         \
  XX(EXACT, "exact", "MILP over all candidate paths (GLPK)")             \
  XX(GREEDY, "greedy", "largest flows first, then moves off bottleneck") \
  XX(ECMP, "ecmp", "per-flow per-hop seeded hash")                       \
  XX(SPRAY, "spray", "even split over all candidate paths")              \
  XX(RANDOM, "random", "a uniformly random candidate per flow")          \
  XX(EDGECOLOR, "edgecolor", "bipartite edge colouring (2-tier Clos)")

typedef enum fs_routeopt_kind {
#define XX(name, str, desc) FS_ROUTEOPT_##name,
  FS_ROUTEOPT_KIND_MAP(XX)
#undef XX
  FS_ROUTEOPT_N_KINDS
} fs_routeopt_kind;

const char *fs_routeopt_kind_name(fs_routeopt_kind k);
int fs_routeopt_kind_parse(const char *name, fs_routeopt_kind *out); /* 0 or FS_EINVAL */

/* The exact MILP refuses instances with more binary variables (flows x
 * candidates, counting only flows with a choice) than this. */
#define FS_ROUTEOPT_EXACT_MAX_VARS 20000

typedef struct fs_routeopt_opts {
  fs_routeopt_kind kind;
  uint64_t seed;       /* ECMP and random */
  double time_limit_s; /* exact: 0 = 60 s */
  int32_t max_vars;    /* exact: 0 = FS_ROUTEOPT_EXACT_MAX_VARS */
} fs_routeopt_opts;

typedef struct fs_routeopt_stats {
  double time_s;      /* wall time of the optimisation */
  int64_t moves;      /* greedy: improving moves made */
  int32_t vars, rows; /* exact: MILP size */
  double objective;   /* exact and greedy: max link load reached */
} fs_routeopt_stats;

/* Fills choice[0..n_flows) with the optimiser's routing. Fails with
 * FS_ERANGE (exact: instance too large or not solved within the time
 * limit, with a message saying which), FS_EINVAL (edgecolor on a topology
 * that is not a 2-tier Clos, see fs_routeopt_edgecolor_check) or
 * FS_ENOMEM; choice is then unspecified. stats may be NULL. */
int fs_routeopt_optimize(fs_routeopt_problem *p, const fs_routeopt_opts *o, int32_t *choice,
                         fs_routeopt_stats *stats, fs_err *err);

/* 0 if t is a 2-tier Clos the edge-colouring baseline applies to: fabric
 * switches are leaves (cabled to hosts or NICs) and spines (not), every
 * switch-to-switch cable joins a leaf and a spine, and every leaf has the
 * same number c >= 1 of cables to every spine (links_per_spine); hosts may
 * be GPUs behind NICs and scale-up switches. Otherwise FS_EINVAL with a
 * message saying what breaks the shape. */
int fs_routeopt_edgecolor_check(const fs_topo *t, fs_err *err);

#ifdef __cplusplus
}
#endif

#endif
