/* Optical circuit switches (OCS) and circuit scheduling over time (issue 7;
 * docs/model-ocs.md defines everything here with its sources).
 *
 * Two views of one device:
 *  - the physical switch (fs_ocs): P duplex ports, a configuration is a
 *    matching of ports (each port in at most one circuit, a circuit joins two
 *    ports and carries `gbps` each way); changing it costs `reconfig_s`, during
 *    which the circuits that change carry nothing (unchanged ones keep
 *    carrying, as on a MEMS switch whose untouched mirrors stay put). Used to
 *    build topologies (TopoOpt, TPU slices).
 *  - the scheduling view (Sirius / Solstice): N nodes, node i's transmitter
 *    and node j's receiver on an OCS; a configuration is a partial
 *    permutation dst[i] = j (or -1): at most one circuit per transmitter and
 *    per receiver, i -> j a permutation-matrix entry. A node with d optical
 *    ports attaches to d OCSes (d parallel permutations).
 *
 * Hybrid (c-Through / Helios): optionally an electrical packet switch beside
 * the circuits carries what they do not (fs_ocs_params.eps_*).
 *
 * Traffic is integral bytes (int64), so stuffing and Birkhoff-von Neumann
 * decomposition are exact: the weighted matchings sum to the stuffed matrix
 * entry for entry, with no rounding. Time is double seconds. */
#ifndef FABRICSIM_OCS_H
#define FABRICSIM_OCS_H

#include <stddef.h>
#include <stdint.h>

#include "fabricsim/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defaults (docs/model-ocs.md, delays table). */
#define FS_OCS_DEFAULT_DELAY_S 10e-3 /* 3D MEMS OCS, order of 10 ms */
#define FS_OCS_MAX_NODES 256         /* scheduling view; decomposition is O(n^4) worst */
#define FS_OCS_MAX_BYTES (1LL << 50) /* per matrix entry, so row sums fit int64 */

/* ---- the physical switch ----------------------------------------------- */
typedef struct fs_ocs {
  int32_t n_ports;
  int32_t *peer;     /* peer[p]: the port joined to p, or -1 (free) */
  double gbps;       /* per circuit, each direction */
  double reconfig_s; /* delay of one reconfiguration */
} fs_ocs;

/* An OCS with n_ports (>= 2) free ports. Returns 0, FS_EINVAL (n_ports,
 * gbps <= 0 or reconfig_s < 0, not finite) or FS_ENOMEM; on failure o is
 * left empty (fs_ocs_free is still safe). */
int fs_ocs_init(fs_ocs *o, int32_t n_ports, double gbps, double reconfig_s, fs_err *err);
void fs_ocs_free(fs_ocs *o); /* leaves it empty; safe on an empty or zeroed one */

/* Joins ports a and b. Refuses (FS_EINVAL, o unchanged) a port out of range,
 * a == b, or a port already in a circuit ("port 3 already has a circuit to
 * port 7"). */
int fs_ocs_connect(fs_ocs *o, int32_t a, int32_t b, fs_err *err);
/* Frees port a and its peer (no-op if a is free). FS_EINVAL if out of range. */
int fs_ocs_disconnect(fs_ocs *o, int32_t a, fs_err *err);

/* Replaces the whole configuration by peer[0..n_ports) (a symmetric matching:
 * peer[a] = b <=> peer[b] = a, -1 free). *n_changed (if not NULL) receives the
 * number of circuits present in only one of old and new configurations (torn
 * down + set up) and *dark_s the time those circuits carry nothing
 * (reconfig_s if any changed, else 0). Refuses (FS_EINVAL, o unchanged) a
 * non-symmetric peer array, naming the port that would get two circuits. */
int fs_ocs_apply(fs_ocs *o, const int32_t *peer, int32_t *n_changed, double *dark_s,
                 fs_err *err);

/* ---- the scheduling view ----------------------------------------------- */

/* Checks that dst[0..n) is a partial permutation: each dst[i] in [-1, n),
 * no self circuit, no receiver in two circuits. Returns 0 or FS_EINVAL with a
 * message naming the port ("receiver 5 would get two circuits (from
 * transmitters 1 and 4)"). */
int fs_ocs_config_check(int32_t n, const int32_t *dst, fs_err *err);

/* Builds dst[0..n) from n_circ (src, dst) pairs (pairs[2k], pairs[2k+1]).
 * Refuses (FS_EINVAL, dst unspecified) a node out of range, a self circuit,
 * or a transmitter or receiver in two circuits. */
int fs_ocs_config_from_pairs(int32_t n, const int32_t *pairs, int32_t n_circ, int32_t *dst,
                             fs_err *err);

/* A traffic job: phases run one after the other (a phase starts when the
 * previous one has delivered every byte); each phase is an n x n matrix of
 * bytes, row-major, zero diagonal. */
typedef struct fs_ocs_phase {
  char name[48];
  int64_t *bytes; /* n*n */
} fs_ocs_phase;

typedef struct fs_ocs_traffic {
  int32_t n;
  int32_t n_phases;
  fs_ocs_phase *phases;
} fs_ocs_traffic;

void fs_ocs_traffic_free(fs_ocs_traffic *tr); /* leaves it empty; safe on zeroed */

/* Appends a phase. pattern: "alltoall" (every ordered pair i != j gets
 * floor(bytes/(n-1))), "ring" (i -> i+1 mod n gets bytes), "pipeline"
 * (i -> i+1 for i < n-1), "permutation" (a seeded random derangement, bytes
 * per pair), "random" (each off-diagonal entry uniform in [0, 2 bytes/(n-1)]),
 * "skewed" (each row: 4 seeded destinations share 70% of bytes, the others
 * 30% evenly; Solstice's few-large-many-small shape). bytes is a node's
 * send volume, in [0, FS_OCS_MAX_BYTES]. Returns 0, FS_EINVAL (unknown
 * pattern, bad n or bytes) or FS_ENOMEM; tr unchanged on failure. tr->n must
 * be set (2..FS_OCS_MAX_NODES). */
int fs_ocs_traffic_add_pattern(fs_ocs_traffic *tr, const char *name, const char *pattern,
                               int64_t bytes, uint64_t seed, fs_err *err);

/* Parses a traffic file (docs/model-ocs.md):
 *   {"nodes": N, "matrix": [[...], ...]}                      one phase
 *   {"nodes": N, "pattern": P, "bytes": B, "seed": S}          one phase
 *   {"nodes": N, "phases": [{"name":..., "matrix"|"pattern"...}, ...]}
 * Unknown keys, a non-integral or out-of-range entry, a wrong row length or a
 * non-zero diagonal are errors naming `file`, the JSON path and the value
 * (FS_EINVAL). On success *out owns the phases (fs_ocs_traffic_free); on
 * failure *out is empty. */
int fs_ocs_matrix_from_json(const char *text, const char *file, fs_ocs_traffic *out,
                            fs_err *err);
/* The same from a file (FS_EIO naming it if unreadable). */
int fs_ocs_matrix_from_file(const char *path, fs_ocs_traffic *out, fs_err *err);

/* Birkhoff-von Neumann stuffing: out = m plus non-negative additions so that
 * every row and column sums to L = max(max row sum, max column sum); entries
 * already positive are raised first (fewer new circuits), then any entry
 * (diagonal included). Returns L. Never fails; m and out may not alias. */
int64_t fs_ocs_stuff(int32_t n, const int64_t *m, int64_t *out);

typedef enum fs_ocs_algo {
  FS_OCS_BVN = 0,  /* any perfect matching on the support, weight = min entry */
  FS_OCS_SOLSTICE, /* perfect matching on entries >= r, r halving (Liu et al.) */
  FS_OCS_STATIC,   /* one configuration for the whole job, multi-hop */
  FS_OCS_N_ALGOS
} fs_ocs_algo;

const char *fs_ocs_algo_name(fs_ocs_algo a);
/* 0 and *out, or -1 for an unknown name ("bvn", "solstice", "static"). */
int fs_ocs_algo_parse(const char *s, fs_ocs_algo *out);

/* A decomposition: stuffed = sum_k weight[k] * P_k, P_k the permutation
 * perm[k*n .. k*n+n) (perm[k*n+i] = j). Weights > 0. */
typedef struct fs_ocs_decomp {
  int32_t n, n_perm;
  int64_t *weight; /* n_perm */
  int32_t *perm;   /* n_perm * n */
  size_t cap;
} fs_ocs_decomp;

void fs_ocs_decomp_free(fs_ocs_decomp *d);

/* Decomposes a matrix with equal row and column sums (fs_ocs_stuff's output)
 * with algo BVN or SOLSTICE. Returns 0, FS_EINVAL (unequal sums, negative
 * entry, algo STATIC) or FS_ENOMEM; *out empty on failure. Cost: at most
 * n^2 - 2n + 2 permutations, each found by repairing the previous matching
 * with augmenting paths (O(n^2) per freed row). */
int fs_ocs_decompose(fs_ocs_algo algo, int32_t n, const int64_t *stuffed, fs_ocs_decomp *out,
                     fs_err *err);

/* Fabric parameters of a schedule. */
typedef struct fs_ocs_params {
  double gbps;    /* per circuit (> 0) */
  double delay_s; /* reconfiguration delay (>= 0) */
  int32_t degree; /* optical ports per node = parallel OCSes (>= 1) */
  int all_stop;   /* 1: every circuit of an OCS is dark while it reconfigures
                     (Solstice's model); 0: only changed circuits (default) */
  /* Hybrid (c-Through / Helios; docs/model-ocs.md "Hybrid"): every node also
   * has one port of eps_gbps on an electrical packet switch (EPS), a
   * non-blocking switch shared max-min fairly by the pairs it carries.
   * All zero = no EPS, the pure OCS model. */
  double eps_gbps;        /* per-node EPS ingress and egress rate (0 = no EPS) */
  double eps_threshold_s; /* a configuration whose circuits would be live for
                             less than this (weight * 8 / gbps) is not
                             scheduled: its traffic goes to the EPS. 0 keeps
                             every configuration; > 0 needs eps_gbps > 0 */
  int eps_balance;        /* 1: instead of eps_threshold_s, leave to the EPS the
                             k smallest configurations, k minimising
                             max(sum kept (delay + weight*8/gbps) / degree,
                             sum left weight * 8 / eps_gbps) (Solstice's
                             balance of circuit and packet time; k = 0 is
                             the pure schedule). Needs eps_gbps > 0 */
  int eps_residual_only;  /* 0 (default): the EPS carries every pair that has
                             demand left and no live circuit at the moment
                             (dark, waiting or unscheduled: spill); 1: only
                             pairs with no circuit left in the schedule */
} fs_ocs_params;

/* One slot of a schedule: OCS `ocs` holds configuration dst for delay_s +
 * duration_s (the delay first). */
typedef struct fs_ocs_slot {
  int32_t ocs;
  double duration_s;
  int32_t *dst; /* n entries, -1 = no circuit */
} fs_ocs_slot;

typedef struct fs_ocs_schedule {
  int32_t n, n_ocs, n_slots;
  fs_ocs_slot *slots; /* each OCS runs its slots in array order */
  size_t cap;
  int32_t n_to_eps; /* configurations of the decomposition left to the EPS by
                       eps_threshold_s (fs_ocs_schedule_from_decomp) */
} fs_ocs_schedule;

void fs_ocs_schedule_free(fs_ocs_schedule *s); /* leaves it empty */
/* Appends a slot (dst copied). FS_EINVAL if ocs is out of range or the
 * duration negative or not finite; FS_ENOMEM. s->n and s->n_ocs must be set.
 * dst is not checked here (fs_ocs_execute checks every slot). */
int fs_ocs_schedule_add(fs_ocs_schedule *s, int32_t ocs, double duration_s, const int32_t *dst,
                        fs_err *err);

/* Builds a schedule from a decomposition: each permutation (self circuits
 * dropped, consecutive equal ones merged) becomes a slot of duration
 * weight*8/(gbps*1e9); with p->eps_threshold_s > 0 the merged ones shorter
 * than it (with p->eps_balance the k smallest, k by the balance rule) are
 * left out (counted in out->n_to_eps) for the EPS to carry. With degree d > 1 the slots are spread over the d
 * OCSes either by McNaughton's wrap-around (runs of equal bytes, a slot cut
 * at a run boundary runs on two OCSes) or by LPT (whole slots, longest
 * first, to the least loaded OCS), whichever ends first counting delays.
 * Returns 0, FS_EINVAL (bad params) or FS_ENOMEM; *out empty on failure. */
int fs_ocs_schedule_from_decomp(const fs_ocs_params *p, const fs_ocs_decomp *d,
                                fs_ocs_schedule *out, fs_err *err);

/* Result of running a schedule (or a static configuration) on a matrix. */
typedef struct fs_ocs_result {
  double completion_s;  /* last byte delivered (inf if some demand never is) */
  double schedule_s;    /* end of the last slot: max over OCSes of sum(delay + duration) */
  double reconfig_s;    /* delay time on the OCS that ends last */
  int32_t n_reconfig;   /* slots over all OCSes (each pays one delay) */
  double lower_bound_s; /* max(row sum, col sum) * 8 / (degree * gbps * 1e9) */
  double util;          /* demand bytes / (n * degree * rate * completion) */
  double delivered_bytes, undelivered_bytes;
  /* hybrid (eps_gbps > 0; with no EPS circuit_bytes = delivered, the rest 0) */
  double circuit_bytes; /* delivered on circuits */
  double eps_bytes;     /* delivered on the EPS */
  double eps_busy_s;    /* time the EPS carries something (summed over phases) */
  int32_t n_to_eps;     /* configurations left to the EPS by the threshold */
} fs_ocs_result;

/* One piece of a circuit's time line (fs_ocs_execute's trace). */
typedef struct fs_ocs_seg {
  int32_t ocs, slot, src, dst;
  int dark; /* 1 during the reconfiguration delay of a changed circuit (or all_stop) */
  double t0_s, t1_s, bytes;
} fs_ocs_seg;

/* Executes schedule s on matrix m (s->n x s->n): every OCS runs its slots
 * back to back from t = 0; in each slot the delay comes first, with the
 * circuits that differ from the OCS's previous slot (all of them for the
 * first slot, every one with all_stop) dark; a live circuit i -> j carries
 * gbps while i -> j has demand left (shared by all OCSes' live i -> j
 * circuits). Every slot is checked with fs_ocs_config_check first. If segs is
 * not NULL, *segs receives the per-circuit time line (caller frees) and
 * *n_segs its length. Returns 0, FS_EINVAL (a bad slot, named; bad params) or
 * FS_ENOMEM; *res unspecified on failure. */
int fs_ocs_execute(const fs_ocs_params *p, const fs_ocs_schedule *s, const int64_t *m,
                   fs_ocs_result *res, fs_ocs_seg **segs, size_t *n_segs, fs_err *err);
/* fs_ocs_execute, and with p->eps_gbps > 0 the EPS beside the circuits: in
 * every interval between events, the pairs with demand left and no live
 * circuit (with eps_residual_only: and no slot of theirs still to come) share
 * the EPS by max-min fairness on per-node egress and ingress ports of
 * eps_gbps; after the last slot the EPS carries what is left. If eps_pair is
 * not NULL it receives (n*n doubles, caller's array) the bytes each pair sent
 * on the EPS. Same failures as fs_ocs_execute; FS_EINVAL also for a
 * negative or non-finite eps_gbps / eps_threshold_s or a threshold without
 * an EPS. With eps_gbps == 0 the result is fs_ocs_execute's, bit for bit. */
int fs_ocs_execute_hybrid(const fs_ocs_params *p, const fs_ocs_schedule *s, const int64_t *m,
                          fs_ocs_result *res, fs_ocs_seg **segs, size_t *n_segs,
                          double *eps_pair, fs_err *err);

/* Static: one configuration per OCS for the whole job: OCS k holds the stride
 * permutation i -> i + stride[k] mod n; strides are the d largest by direct
 * bytes of m, one of them coprime with n so every pair is reachable.
 * strides[0..degree) receives them (strides may be NULL). */
int fs_ocs_static_strides(const fs_ocs_params *p, int32_t n, const int64_t *m, int32_t *strides,
                          fs_err *err);
/* Routes m over the static circulant graph (every pair on one shortest path
 * in hops, forwarded through nodes) and times it: completion = delay (one
 * initial configuration) + max circuit load * 8 / (gbps * 1e9), fluid rates
 * proportional to demand. n_reconfig = degree. Returns 0 or FS_EINVAL /
 * FS_ENOMEM. */
int fs_ocs_static_eval(const fs_ocs_params *p, int32_t n, const int32_t *strides,
                       const int64_t *m, fs_ocs_result *res, fs_err *err);

/* A job prepared once for many runs (a delay sweep): the decompositions of
 * every phase (they do not depend on the rate or the delay) for the
 * algorithms in the bit mask `algos` (1u << FS_OCS_BVN | ...) and the
 * static strides for `degree`. Returns 0, FS_EINVAL or FS_ENOMEM; *out is
 * NULL on failure. tr must outlive the plan. */
typedef struct fs_ocs_plan fs_ocs_plan;
int fs_ocs_plan_new(const fs_ocs_traffic *tr, int32_t degree, unsigned algos, fs_ocs_plan **out,
                    fs_err *err);
void fs_ocs_plan_free(fs_ocs_plan *pl); /* NULL is a no-op */
/* fs_ocs_run on a plan: p->degree must be the plan's, algo in its mask
 * (FS_EINVAL otherwise; also for STATIC with p->eps_gbps > 0: the static
 * configuration has no hybrid mode). */
int fs_ocs_plan_run(const fs_ocs_plan *pl, const fs_ocs_params *p, fs_ocs_algo algo,
                    fs_ocs_result *res, fs_err *err);

/* The whole job under one algorithm: for BVN and SOLSTICE each phase is
 * stuffed, decomposed and executed in turn (phase times add up); for STATIC
 * the strides are chosen on the sum of all phases once and each phase runs
 * on them, paying the delay once. res sums the phases (lower_bound_s too;
 * util over the whole job). With p->eps_gbps > 0 (BVN, SOLSTICE only) each
 * phase runs hybrid (fs_ocs_execute_hybrid); lower_bound_s is then
 * max line sum * 8 / (degree * gbps + eps_gbps) and util counts the EPS
 * ports as capacity; with eps_balance each phase also runs its whole
 * schedule (no cut, the EPS spilling only) and keeps the faster of the two,
 * so it is never slower than the pure OCS. Returns 0 or an error as above. */
int fs_ocs_run(const fs_ocs_params *p, fs_ocs_algo algo, const fs_ocs_traffic *tr,
               fs_ocs_result *res, fs_err *err);

#ifdef __cplusplus
}
#endif

#endif
