/* Collective communication: algorithms lowered into flows, step by step,
 * so that contention on the real topology shows, and each algorithm's
 * closed-form alpha-beta-gamma time beside it (docs/model.md).
 *
 * A group is p ranks mapped to host node ids. A collective's size `bytes`
 * follows nccl-tests: the buffer of all-reduce, broadcast, reduce and
 * send/recv; the total receive buffer of all-gather (each rank contributes
 * bytes/p); the total send buffer of reduce-scatter (each rank ends with
 * bytes/p); the per-rank send buffer of all-to-all (bytes/p to each rank).
 *
 * Lowering conventions, shared by every algorithm so the closed forms hold:
 * a rank's sends on one step go out together; a rank's next send waits for
 * the data it forwards to have arrived, for its own previous send to have
 * left (fs_sim_add_dep_sent), and for any reduction (a task of
 * bytes * gamma seconds on the receiver) of that data. Algorithms whose
 * ranks receive from several peers at once (tree reduce, double tree,
 * binomial) lower in synchronous steps joined by a zero-cost barrier, so
 * each step's sharing is fixed and the closed form exact; this only delays
 * flows (docs/model.md says by how much). */
#ifndef FABRICSIM_COLL_H
#define FABRICSIM_COLL_H

#include <stdint.h>

#include "fabricsim/err.h"
#include "fabricsim/route.h"
#include "fabricsim/sim.h"
#include "fabricsim/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FS_COLL_OP_MAP(XX)                     \
  XX(ALLREDUCE, "allreduce")                   \
  XX(ALLGATHER, "allgather")                   \
  XX(REDUCESCATTER, "reducescatter")           \
  XX(BROADCAST, "broadcast")                   \
  XX(REDUCE, "reduce")                         \
  XX(ALLTOALL, "alltoall")                     \
  XX(SENDRECV, "sendrecv")

typedef enum fs_coll_op {
#define XX(name, str) FS_COLL_##name,
  FS_COLL_OP_MAP(XX)
#undef XX
  FS_COLL_N_OPS
} fs_coll_op;

#define FS_COLL_ALGO_MAP(XX)                                                   \
  XX(AUTO, "auto", "chosen by the tuner (NCCL model or simulation)")            \
  XX(RING, "ring", "NCCL-style ring(s), pipelined in chunks")                   \
  XX(TREE, "tree", "NCCL double binary tree, pipelined")                       \
  XX(RD, "rd", "recursive doubling")                                           \
  XX(RHD, "rhd", "recursive halving-doubling (Rabenseifner)")                  \
  XX(BINOMIAL, "binomial", "binomial tree")                                    \
  XX(BRUCK, "bruck", "Bruck (log p rounds)")                                   \
  XX(PAIRWISE, "pairwise", "pairwise exchange, p-1 rounds")                    \
  XX(DIRECT, "direct", "all messages at once")                                 \
  XX(HIER, "hier", "two-level: inside scale-up nodes, then across per rail")   \
  XX(INC, "inc", "in-network aggregation at a capable switch")                 \
  XX(PS, "ps", "parameter servers: shards pushed to S server ranks, reduced, pulled")

typedef enum fs_coll_algo {
#define XX(name, str, desc) FS_ALGO_##name,
  FS_COLL_ALGO_MAP(XX)
#undef XX
  FS_ALGO_N
} fs_coll_algo;

const char *fs_coll_op_name(fs_coll_op op);
int fs_coll_op_parse(const char *name, fs_coll_op *out); /* 0 or FS_EINVAL */
const char *fs_coll_algo_name(fs_coll_algo algo);
const char *fs_coll_algo_description(fs_coll_algo algo);
int fs_coll_algo_parse(const char *name, fs_coll_algo *out);
/* 1 if `algo` implements `op` (AUTO implements every op). */
int fs_coll_supports(fs_coll_algo algo, fs_coll_op op);

typedef struct fs_coll_params {
  fs_coll_op op;
  fs_coll_algo algo;
  double bytes;            /* > 0, nccl-tests convention (above) */
  int32_t root;            /* broadcast/reduce root; sendrecv: sender (peer root+1) */
  int32_t chunks;          /* pipelining chunks C; 0 = the algorithm's default */
  int32_t channels;        /* parallel rings/trees; 0 = 1, or G for a node-aware
                              ring (fs_coll_ring_channels) */
  double gamma_s_per_byte; /* reduction cost per byte; 0 = free */
  int32_t node_size;       /* hierarchical: consecutive ranks per scale-up node */
  int32_t servers;         /* ps: server ranks S (rank floor(j p / S) is server
                              j); 0 = every rank */
  double step_latency_s;   /* a message between two servers (or between plain
                              hosts) is usable step_latency_s after it
                              arrives: a collective library's per-step
                              software latency (fs_coll_nccl_step_latency_s);
                              0 = none. The closed forms leave it out. */
} fs_coll_params;

/* Defaults: allreduce, auto, 1 MiB, root 0, algorithm chunks, 1 channel. */
void fs_coll_params_init(fs_coll_params *p);

/* Checks params against a group of p ranks: bytes > 0, root in range,
 * algorithm supports op, p >= 1 (2 for sendrecv), chunks >= 0 ... */
int fs_coll_params_check(const fs_coll_params *prm, int32_t p, fs_err *err);

typedef struct fs_coll_group {
  int32_t p;
  const int32_t *hosts; /* rank -> host node id, p distinct hosts */
} fs_coll_group;

/* The ranks of a group from the JSON file at path: an array of host ids,
 * rank i on the i-th (docs/formats.md). 0 with *hosts (*p entries,
 * malloc'd, the caller frees) and *p set; or FS_EIO (unreadable),
 * FS_EINVAL (not a non-empty array of integers in [0, 2^31), err names
 * the file, JSON path and value) or FS_ENOMEM, with *hosts and *p
 * untouched. Whether the hosts are distinct hosts of a topology is
 * checked where the group meets one (fs_coll_run). */
int fs_coll_ranks_from_file(const char *path, int32_t **hosts, int32_t *p, fs_err *err);

/* Optional checking of what the lowering moves, for tests: the data each
 * rank holds is tracked symbolically (which ranks' contributions each unit
 * of the buffer carries) through every send, in DAG order. After the run,
 * fs_coll_verify() checks each rank ends with exactly what the operation
 * defines and that no send left before the data it carries had arrived. */
typedef struct fs_coll_tracker fs_coll_tracker;

typedef struct fs_coll_lowering {
  fs_sim *sim;
  fs_router *router;
  fs_route_mode mode;      /* shortest, ecmp or spray */
  uint64_t seed;           /* ECMP seed */
  uint64_t key;            /* distinguishes this collective's flows in ECMP */
  const int32_t *after;    /* items the collective waits for */
  int32_t n_after;
  fs_coll_tracker *track;  /* optional (NULL) */
  /* Optional (NULL: one of its own per lowering, salted by key): a route
   * cache to share across lowerings, for routing modes whose routes do not
   * depend on the key (shortest, spray), where every lowering would
   * otherwise recompute the same routes. The flows borrow its routes
   * (fs_sim_add_flow_ref): it must outlive every use of the simulation. */
  fs_route_cache *routes;
  /* out */
  int32_t done;            /* a task that finishes when every rank is done */
  int32_t first_item, n_items;
  int64_t n_flows;
} fs_coll_lowering;

/* A lowering into sim routed by (router, mode, seed), every optional field
 * (key, after, track, routes) and output zero. */
void fs_coll_lowering_init(fs_coll_lowering *l, fs_sim *sim, fs_router *router,
                           fs_route_mode mode, uint64_t seed);

/* Adds the collective's flows and tasks to l->sim. Fails with FS_EINVAL on
 * bad params (as fs_coll_params_check) or if algo is AUTO (choose first). */
int fs_coll_lower(const fs_coll_params *prm, const fs_coll_group *g,
                  fs_coll_lowering *l, fs_err *err);

/* ---- node-aware rings (docs/model.md, "Ring") ----
 * A ring all-reduce, all-gather or reduce-scatter over whole scale-up
 * servers gives each channel its own rank order, as NCCL's per-channel
 * ring graphs do, so that the channels leave and enter every server
 * through different GPUs and NICs. */

/* G > 1 when the group's ranks come in n > 1 consecutive runs of G ranks,
 * each run on one scale-up switch (FS_NODE_SCALEUP) of its own; 0 when not
 * (every channel then follows the ranks' order, the flat ring); FS_ENOMEM
 * (negative) when out of memory. t and g unchanged. O(p log p + the ranks'
 * degrees). */
int32_t fs_coll_ring_server_size(const fs_topo *t, const fs_coll_group *g);
/* Channel k's ring of p ranks in server blocks of G: order[i] is the rank
 * at position i. Inside block j the ranks j G .. j G + G - 1 rotated by
 * k mod G, reversed on odd j; G < 2, or G not dividing p, or G = p: the
 * ranks' order 0 .. p-1. */
void fs_coll_ring_order(int32_t p, int32_t G, int32_t k, int32_t *order);
/* The channels a ring all-reduce, all-gather or reduce-scatter lowers
 * with for server size G (fs_coll_ring_server_size): prm->channels when
 * > 0, else G when G > 1, else 1. */
int32_t fs_coll_ring_channels(const fs_coll_params *prm, int32_t G);

/* ---- running one collective alone ---- */
typedef struct fs_coll_result {
  fs_coll_algo algo;   /* the algorithm run (the choice, for AUTO) */
  int32_t chunks;      /* chunks used */
  double time_s;       /* from start to the last rank done */
  int64_t flows;
  uint64_t events;
} fs_coll_result;

/* Simulates the collective alone on topology t; AUTO runs every algorithm
 * supporting the op and keeps the fastest (ties: the lower enum value). */
int fs_coll_run(const fs_topo *t, fs_route_mode mode, uint64_t seed,
                const fs_coll_params *prm, const fs_coll_group *g,
                fs_coll_result *out, fs_err *err);
/* The same under a transport model (sim.h; NULL: fluid). */
int fs_coll_run2(const fs_topo *t, fs_route_mode mode, uint64_t seed, const fs_transport *tp,
                 const fs_coll_params *prm, const fs_coll_group *g, fs_coll_result *out,
                 fs_err *err);

/* ---- automatic choice ----
 * Two policies (docs/model-coll-tune.md):
 *  FS_TUNE_NCCL (the default) follows NCCL's own selection: a per
 *   (algorithm, protocol) latency + bytes / bandwidth cost model with
 *   NCCL's constants, over the algorithms NCCL runs (ring and double binary
 *   tree for all-reduce, ring for the rest, point-to-point `direct` for
 *   all-to-all and send/recv). Nothing is simulated.
 *  FS_TUNE_SIM simulates every algorithm implementing the op on the real
 *   topology and keeps the fastest (fs_coll_run with AUTO). */
typedef enum fs_coll_tune_policy {
  FS_TUNE_NCCL = 0,
  FS_TUNE_SIM,
  FS_TUNE_N
} fs_coll_tune_policy;

const char *fs_coll_tune_policy_name(fs_coll_tune_policy policy); /* "nccl", "sim" */
int fs_coll_tune_policy_parse(const char *name, fs_coll_tune_policy *out); /* 0 or FS_EINVAL */

/* NCCL's protocols. The engine moves bytes at the wire rate, so a protocol
 * only steers the choice (its efficiency and latency are in the NCCL
 * model's estimate, not in the simulated flows). */
#define FS_COLL_PROTO_MAP(XX)                                            \
  XX(LL, "ll", "8-byte lines: 4 data bytes + 4 flag bytes, lowest latency") \
  XX(LL128, "ll128", "128-byte lines carrying 120 data bytes")             \
  XX(SIMPLE, "simple", "plain copies with fences, full bandwidth")

typedef enum fs_coll_proto {
#define XX(name, str, desc) FS_PROTO_##name,
  FS_COLL_PROTO_MAP(XX)
#undef XX
  FS_PROTO_N
} fs_coll_proto;

const char *fs_coll_proto_name(fs_coll_proto proto);
int fs_coll_proto_parse(const char *name, fs_coll_proto *out); /* 0 or FS_EINVAL */

/* What NCCL's model reads of a group on a topology. A server is the
 * gpus_per_node consecutive GPUs of one scale-up switch (plain hosts: each
 * host is its own server). */
typedef struct fs_coll_nccl_shape {
  int32_t ranks;     /* p */
  int32_t nodes;     /* distinct servers among the group's hosts */
  int32_t nvlink;    /* 1: GPUs of a server meet at a scale-up switch */
  double intra_gbps; /* slowest rank's link to its scale-up switch (0 if none) */
  double inter_gbps; /* slowest rank's way out of its server: min(PCIe, NIC) */
} fs_coll_nccl_shape;

/* Fills *out for group g on t. Fails with FS_EINVAL (a rank outside the
 * hosts, a host without links, p < 1) and leaves *out unchanged. O(p log p
 * + the ranks' and their NICs' degrees). */
int fs_coll_nccl_shape_of(const fs_topo *t, const fs_coll_group *g, fs_coll_nccl_shape *out,
                          fs_err *err);

/* NCCL's estimated time in seconds of prm (prm->algo ignored) run with
 * (algo, proto) on a group of that shape; prm->channels (0 = 1) is NCCL's
 * channel count where the model uses it. NAN when NCCL has no such
 * combination for the op (e.g. tree all-gather) or the shape is unusable. */
double fs_coll_nccl_time(const fs_coll_nccl_shape *s, const fs_coll_params *prm,
                         fs_coll_algo algo, fs_coll_proto proto);

/* NCCL's choice for prm (prm->algo ignored) on group g of topology t,
 * without simulating: the (algorithm, protocol) of least estimated time
 * (ties as NCCL: tree before ring, LL before LL128 before Simple).
 * all-to-all and send/recv are point to point (`direct`, protocol by
 * NCCL's P2P LL threshold). proto and est_s may be NULL. Fails with
 * FS_EINVAL on bad params or group (outputs untouched). */
int fs_coll_nccl_choose(const fs_topo *t, const fs_coll_params *prm, const fs_coll_group *g,
                        fs_coll_algo *algo, fs_coll_proto *proto, double *est_s,
                        fs_err *err);

typedef struct fs_coll_tuner fs_coll_tuner;

/* A tuner for one topology and routing, with a policy. t must outlive it.
 * FS_TUNE_SIM caches its choices per (op, size bucket = floor(log2 bytes),
 * group, params); FS_TUNE_NCCL caches each group's shape and evaluates the
 * model for each size (it is a few dozen flops). Fails with FS_EINVAL on an
 * unknown policy, FS_ENOMEM; *out untouched on failure. */
int fs_coll_tuner_new2(const fs_topo *t, fs_route_mode mode, uint64_t seed,
                       fs_coll_tune_policy policy, fs_coll_tuner **out, fs_err *err);
/* fs_coll_tuner_new2 with FS_TUNE_NCCL. */
int fs_coll_tuner_new(const fs_topo *t, fs_route_mode mode, uint64_t seed,
                      fs_coll_tuner **out, fs_err *err);
void fs_coll_tuner_free(fs_coll_tuner *tu); /* NULL: no-op */
fs_coll_tune_policy fs_coll_tuner_policy(const fs_coll_tuner *tu);

/* Picks the algorithm for prm (its algo is ignored) on group g under the
 * tuner's policy, and the protocol (FS_TUNE_SIM: FS_PROTO_SIMPLE, the wire
 * rate the engine moves bytes at). *cached (may be NULL) says whether the
 * answer (SIM) or the group's shape (NCCL) came from the cache. proto may
 * be NULL. On failure the outputs are untouched and nothing is cached. */
int fs_coll_tuner_choose2(fs_coll_tuner *tu, const fs_coll_params *prm,
                          const fs_coll_group *g, fs_coll_algo *algo, fs_coll_proto *proto,
                          int *cached, fs_err *err);
/* NCCL's per-step latency of a network step (NCCL 2.20.3's hwLat[NET]) for
 * algorithm algo (tree: the tree's; any other: the ring's) and protocol, in
 * seconds: what a step costs beyond moving its bytes, for
 * fs_coll_params.step_latency_s (docs/model-coll-tune.md). */
double fs_coll_nccl_step_latency_s(fs_coll_algo algo, fs_coll_proto proto);

/* fs_coll_tuner_choose2 without the protocol. */
int fs_coll_tuner_choose(fs_coll_tuner *tu, const fs_coll_params *prm,
                         const fs_coll_group *g, fs_coll_algo *out, int *cached,
                         fs_err *err);

/* ---- closed forms ---- */
typedef struct fs_coll_cost {
  double alpha_s;          /* per message: latency */
  double beta_s_per_byte;  /* per byte: 1 / bandwidth */
  double gamma_s_per_byte; /* per byte reduced */
} fs_coll_cost;

/* The algorithm's closed-form time for p ranks (the same conventions as the
 * lowering, so on a contention-free network they agree exactly). NAN if the
 * algorithm does not support the op or is AUTO. */
double fs_coll_model_time(const fs_coll_params *prm, int32_t p,
                          const fs_coll_cost *cost);

/* The chunk count the algorithm uses when prm->chunks is 0. */
int32_t fs_coll_default_chunks(const fs_coll_params *prm, int32_t p);
/* The flows fs_coll_lower adds for prm over p ranks, known before lowering
 * for the algorithms whose count grows fastest: ring all-reduce (2 (p-1) p
 * K C), all-gather and reduce-scatter ((p-1) p K C) with K channels as
 * given (else 1: a node-aware ring may use more), direct and pairwise
 * all-to-all and all-gather (p (p-1)), Bruck (p ceil(lg p)); 0 for the
 * rest (not estimated). For refusing, up front, a run that cannot fit. */
int64_t fs_coll_flows_estimate(const fs_coll_params *prm, int32_t p);

/* nccl-tests bus bandwidth factor: all-reduce 2(p-1)/p; all-gather,
 * reduce-scatter, all-to-all (p-1)/p; broadcast, reduce, send/recv 1. */
double fs_coll_busbw_factor(fs_coll_op op, int32_t p);

/* ---- nccl-tests' conventions (docs/formats.md, "coll") ----
 * The element types and reduction operations nccl-tests offers (-d, -o),
 * by its names (src/common.cu: test_typenames, test_opnames). The
 * simulation moves bytes: the type sets the element size, hence the
 * count and how a size is rounded; the operation is carried to the
 * output. A reduction costs gamma seconds per byte whatever the type and
 * operation: NCCL's reduction kernels stream both operands from memory
 * and are bandwidth-bound (docs/model.md, "the reduction cost"). */
#define FS_COLL_DTYPE_MAP(XX) \
  XX(INT8, "int8", 1)         \
  XX(UINT8, "uint8", 1)       \
  XX(INT32, "int32", 4)       \
  XX(UINT32, "uint32", 4)     \
  XX(INT64, "int64", 8)       \
  XX(UINT64, "uint64", 8)     \
  XX(HALF, "half", 2)         \
  XX(FLOAT, "float", 4)       \
  XX(DOUBLE, "double", 8)     \
  XX(BFLOAT16, "bfloat16", 2) \
  XX(F8E4M3, "f8e4m3", 1)     \
  XX(F8E5M2, "f8e5m2", 1)

typedef enum fs_coll_dtype {
#define XX(name, str, size) FS_COLL_DT_##name,
  FS_COLL_DTYPE_MAP(XX)
#undef XX
  FS_COLL_N_DTYPES
} fs_coll_dtype;

/* nccl-tests' order (sum prod max min avg mulsum); mulsum is NCCL's
 * pre-multiplied sum (ncclRedOpCreatePreMulSum). */
#define FS_COLL_REDOP_MAP(XX) \
  XX(SUM, "sum")              \
  XX(PROD, "prod")            \
  XX(MAX, "max")              \
  XX(MIN, "min")              \
  XX(AVG, "avg")              \
  XX(MULSUM, "mulsum")

typedef enum fs_coll_redop {
#define XX(name, str) FS_COLL_REDOP_##name,
  FS_COLL_REDOP_MAP(XX)
#undef XX
  FS_COLL_N_REDOPS
} fs_coll_redop;

const char *fs_coll_dtype_name(fs_coll_dtype t);
/* Bytes per element: 1, 2, 4 or 8 (0 for a value out of range). */
int32_t fs_coll_dtype_size(fs_coll_dtype t);
/* nccl-tests' names, and NCCL's aliases of them (nccl.h: char = int8,
 * int = int32, float16 = half, float32 = float, float64 = double).
 * 0 or FS_EINVAL. */
int fs_coll_dtype_parse(const char *name, fs_coll_dtype *out);
const char *fs_coll_redop_name(fs_coll_redop r);
int fs_coll_redop_parse(const char *name, fs_coll_redop *out); /* 0 or FS_EINVAL */
/* What nccl-tests prints in its redop column for op: the operation for
 * all-reduce, reduce-scatter, reduce and send/recv (its sendrecv test
 * takes one though nothing is reduced), "none" for the rest. */
const char *fs_coll_redop_column(fs_coll_op op, fs_coll_redop r);
/* 1 for the ops nccl-tests runs with a root (broadcast, reduce), whose
 * root column is the root; the others print -1. */
int fs_coll_rooted(fs_coll_op op);

/* A requested size as nccl-tests runs it over p ranks with elements of
 * elt bytes (src/common.cu setupArgs and each test's GetCollByteCount):
 * n = floor(requested / elt) elements; all-reduce, broadcast, reduce and
 * send/recv move n (count n, size n elt); all-gather, reduce-scatter and
 * all-to-all give each rank (or each pair, all-to-all) the per-rank count
 * c = floor(n / p) rounded down to a multiple of 16 / elt elements (16-byte
 * aligned), and size c p elt. *bytes: the size (fs_coll_params.bytes, 0
 * when the rounding leaves nothing); *count: nccl-tests' count column.
 * requested in [0, 1e18], elt 1, 2, 4 or 8, p >= 1. */
void fs_coll_nccl_tests_size(fs_coll_op op, int32_t p, int32_t elt, double requested,
                             double *bytes, double *count);

/* ---- tracking ---- */
int fs_coll_tracker_new(fs_coll_tracker **out, fs_err *err);
void fs_coll_tracker_free(fs_coll_tracker *t);
/* After the simulation ran: 0, or FS_EINVAL with err saying what is wrong
 * (first rank and unit found). recv_bytes, if not NULL, gets p entries: the
 * bytes each rank received. */
int fs_coll_verify(const fs_coll_tracker *t, const fs_sim *sim, double *recv_bytes,
                   fs_err *err);

#ifdef __cplusplus
}
#endif

#endif
