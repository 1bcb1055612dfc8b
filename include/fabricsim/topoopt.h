/* TopoOpt-style topology optimisation for one training job on a direct-
 * connect optical fabric (Wang et al., NSDI'23): n GPU servers, each with
 * d optical ports of B Gb/s patched through an OCS or patch panel whose
 * circuits stay fixed for the job. A topology is a multigraph on servers
 * with degree <= d (circuit multiplicities x_uv). The job's traffic becomes
 * a server x server byte matrix (data-parallel ring all-reduce + model-
 * parallel sends); the topology is chosen by TotientPerms rings + greedy
 * b-matching + local search, or exactly by a GLPK MILP on small instances,
 * all scored by one objective: the time to carry the iteration's matrix
 * with optimal multipath routing (max concurrent flow, docs/model-topoopt.md).
 *
 * Sizes in mind: n <= a few hundred servers for the heuristic (each
 * objective evaluation is an LP of (servers with traffic) x (directed
 * circuits) columns); the exact MILP only for n <= 12. */
#ifndef FABRICSIM_TOPOOPT_H
#define FABRICSIM_TOPOOPT_H

#include <stdint.h>

#include "fabricsim/err.h"
#include "fabricsim/topo.h"
#include "fabricsim/work.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- traffic ---------------------------------------------------------- */

/* Bytes per iteration between servers: ar[u * n + v] is data-parallel
 * all-reduce traffic (ring in rank order, as coll's ring runs it), mp the
 * rest (pipeline sends, expert all-to-alls, tensor parallelism that spans
 * servers, the tied-embedding all-reduce). Diagonals are 0 (traffic inside
 * a server stays on its scale-up domain). groups lists the server-level
 * all-reduce groups (servers in ring order) TotientPerms builds rings for. */
typedef struct fs_topoopt_traffic {
  int32_t n;
  double *ar, *mp;
  int32_t n_groups;
  int32_t *group_start; /* n_groups + 1 offsets into group_servers */
  int32_t *group_servers;
  double *group_bytes;  /* ring bytes each member sends per iteration */
} fs_topoopt_traffic;

/* A zero matrix on n >= 2 servers. Returns 0, FS_EINVAL (n out of
 * [2, FS_TOPOOPT_MAX_SERVERS]) or FS_ENOMEM; *out untouched on failure. */
enum { FS_TOPOOPT_MAX_SERVERS = 4096 };
int fs_topoopt_traffic_new(int32_t n, fs_topoopt_traffic **out, fs_err *err);
/* Adds an all-reduce group: `m` distinct servers in ring order, each
 * sending `bytes` to its successor (ar += bytes on each ring edge; m = 2:
 * both ways). Returns 0 or FS_EINVAL (bad server, duplicate, m < 2, bytes
 * < 0) / FS_ENOMEM with the traffic unchanged. */
int fs_topoopt_traffic_add_group(fs_topoopt_traffic *t, const int32_t *servers, int32_t m,
                                 double bytes, fs_err *err);
/* The traffic of one iteration of job on its servers (G = gpus_per_node
 * consecutive GPUs, packed placement; docs/model-topoopt.md lists each
 * kind's pairs and bytes from work.h's per-stage volumes). Fails with
 * FS_EINVAL if the job spans fewer than 2 servers or more than the limit. */
int fs_topoopt_traffic_from_job(const fs_job *job, fs_topoopt_traffic **out, fs_err *err);
void fs_topoopt_traffic_free(fs_topoopt_traffic *t); /* NULL is a no-op */
double fs_topoopt_traffic_total(const fs_topoopt_traffic *t); /* bytes, ar + mp */

/* ---- topologies ------------------------------------------------------- */

enum { FS_TOPOOPT_MAX_RINGS = 64 };
typedef struct fs_topoopt_graph {
  int32_t n, degree;
  int32_t *mult; /* n x n symmetric circuit counts, diagonal 0 */
  /* TotientPerms rings the heuristic laid (group index, stride). */
  int32_t n_rings;
  int32_t ring_group[FS_TOPOOPT_MAX_RINGS], ring_stride[FS_TOPOOPT_MAX_RINGS];
} fs_topoopt_graph;

/* An empty graph (no circuits). 0, FS_EINVAL (n or degree out of range:
 * degree in [1, FS_TOPOOPT_MAX_DEGREE]) or FS_ENOMEM. */
enum { FS_TOPOOPT_MAX_DEGREE = 64 };
int fs_topoopt_graph_new(int32_t n, int32_t degree, fs_topoopt_graph **out, fs_err *err);
void fs_topoopt_graph_free(fs_topoopt_graph *g); /* NULL is a no-op */
/* 0 if g is a circuit configuration an OCS can hold: symmetric, no self
 * circuit, no negative count, every server at most `degree` circuits;
 * else FS_EINVAL naming the first violation. */
int fs_topoopt_graph_check(const fs_topoopt_graph *g, fs_err *err);
int32_t fs_topoopt_graph_circuits(const fs_topoopt_graph *g); /* sum over u < v */

/* ---- the objective ----------------------------------------------------- */

/* The common score of every topology: the largest alpha such that
 * alpha x (ar + mp) is routable as a multicommodity flow over the circuits
 * (each B Gb/s per direction, multi-hop through servers' forwarding), so
 * time_s = 1 / alpha is the shortest time to move the iteration's matrix.
 * time_s is INFINITY when some demand has no path, 0 with no traffic.
 * Optimisers compare (unserved_frac, time_s) lexicographically, so a
 * disconnected candidate still ranks by how much it leaves unserved. */
typedef struct fs_topoopt_eval {
  double time_s;
  double ideal_s;  /* lower bound: max over servers of bytes out or in / (d B) */
  double direct_frac; /* share of the demand whose endpoints share a circuit */
  double unserved_frac; /* share with no path at all (time_s is then INFINITY) */
} fs_topoopt_eval;
/* Solves the LP with GLPK. Fails with FS_EINVAL on mismatched sizes or
 * gbps <= 0, FS_EINTERNAL if GLPK fails, FS_ENOMEM. */
int fs_topoopt_evaluate(const fs_topoopt_traffic *t, const fs_topoopt_graph *g, double gbps,
                        fs_topoopt_eval *out, fs_err *err);

/* ---- optimisers -------------------------------------------------------- */

typedef struct fs_topoopt_opts {
  int32_t degree;     /* d >= 1 optical ports per server */
  double gbps;        /* B per circuit and direction */
  uint64_t seed;      /* local search and the random baseline */
  int32_t ar_rings;   /* rings per all-reduce group; -1 = try 0 .. d/2 and keep the best */
  int32_t ls_evals;   /* local-search objective evaluations; -1 = default (docs) */
  double time_limit_s;/* exact only (0: 60 s) */
} fs_topoopt_opts;
void fs_topoopt_opts_init(fs_topoopt_opts *o, int32_t degree, double gbps);

/* The heuristic: TotientPerms rings for each all-reduce group, greedy
 * b-matching (weight decayed per circuit already given) for the rest,
 * spare ports filled, then seeded local search (circuit swaps kept only if
 * the objective improves). *out gets a new graph and *ev its score.
 * Errors: FS_EINVAL (bad opts), FS_ENOMEM, FS_EINTERNAL (GLPK). */
int fs_topoopt_optimize(const fs_topoopt_traffic *t, const fs_topoopt_opts *o,
                        fs_topoopt_graph **out, fs_topoopt_eval *ev, fs_err *err);

/* The baseline: a random multigraph of degree <= d (configuration model:
 * every server's d port stubs shuffled with the seed and paired in order;
 * a stub paired with its own server stays unused). */
int fs_topoopt_random(int32_t n, int32_t degree, uint64_t seed, fs_topoopt_graph **out,
                      fs_err *err);

/* The exact optimum of the same objective by a GLPK MILP (integer x_uv,
 * source-aggregated flows on every ordered pair). FS_ERANGE if the
 * instance exceeds FS_TOPOOPT_EXACT_MAX_SERVERS or is not proven optimal
 * within the time limit; other errors as fs_topoopt_optimize. */
enum { FS_TOPOOPT_EXACT_MAX_SERVERS = 12 };
int fs_topoopt_exact(const fs_topoopt_traffic *t, const fs_topoopt_opts *o,
                     fs_topoopt_graph **out, fs_topoopt_eval *ev, fs_err *err);

/* TotientPerms strides for a ring group of m servers: up to r strides k in
 * [1, m/2] with gcd(k, m) = 1, k = 1 first and the rest spread
 * geometrically (the nearest unused coprime to m^(i/r)). Returns how many
 * it wrote into strides (fewer than r if m has fewer such strides). */
int32_t fs_topoopt_totient_strides(int32_t m, int32_t r, int32_t *strides);

/* ---- the fabric ----------------------------------------------------------- */

/* Builds the direct-connect topology of g for job's servers: GPUs 0..N-1
 * (N = n x gpus_per_node) with NICs and a scale-up switch per server as
 * the zoo families do, each server's NICs (nics_per_gpu x nic_gbps each)
 * on one forwarding node (a tier-1 switch, index = server) that owns the d
 * optical ports; every circuit is a cable of gbps between two such nodes.
 * Family "topoopt". Errors: FS_EINVAL (sizes), FS_ENOMEM. */
int fs_topoopt_build_topo(const fs_topoopt_graph *g, const fs_job *job, double gbps,
                          int64_t latency_ns, fs_topo **out, fs_err *err);

/* OCS / patch-panel cost and power per port (estimates, docs/model-topoopt.md). */
typedef struct fs_topoopt_ocs_part {
  double usd_per_port, watts_per_port;
} fs_topoopt_ocs_part;
typedef enum fs_topoopt_switch { FS_TOPOOPT_PATCH_PANEL = 0, FS_TOPOOPT_OCS } fs_topoopt_switch;
fs_topoopt_ocs_part fs_topoopt_ocs_defaults(fs_topoopt_switch kind);

/* The optical fabric's parts: per server d NIC ports of gbps, per circuit
 * two transceivers (reach by fabric_m), fiber, and two OCS ports, priced
 * with the table `c` and `ocs`. Unused ports are still bought (d per
 * server). Cannot fail. */
void fs_topoopt_cost(const fs_topoopt_graph *g, double gbps, const fs_cost_table *c,
                     fs_topoopt_ocs_part ocs, fs_topo_cost *out, double *ocs_usd,
                     double *ocs_watts);

#ifdef __cplusplus
}
#endif

#endif
