/* What the files of a training iteration share (train.c and its rooms:
 * train_symm.c, train_alone.c, train_lower.c, train_result.c, cluster.c):
 * struct fs_train, the records of its items, and the functions one room
 * calls in another. Nothing here is public: train.h is the way in. */
#ifndef FABRICSIM_WORK_TRAIN_INTERNAL_H
#define FABRICSIM_WORK_TRAIN_INTERNAL_H

#include <stdint.h>

#include "../base/base.h"
#include "fabricsim/compute.h"
#include "fabricsim/symm.h"
#include "fabricsim/train.h"
#include "qcoll.h"

#define NVLINK_HOP_NS 250 /* per NVLink hop (GPU -> NVSwitch), docs/model.md */

typedef struct op_items {
  int32_t z3;                   /* ZeRO-3 parameter gather before the compute, or -1 */
  int32_t compute, tp, ep, end; /* items; tp/ep -1 if none; end = last of them */
  /* The item whose end starts the z3 / tp / ep part (-1: the device's
   * start); equal to the part's own item when that is a task timed alone
   * (its span is then its own start to finish). */
  int32_t z3_from, tp_from, ep_from;
  int32_t cp, cp_from; /* ring attention exchange (context parallelism), as tp */
} op_items;

/* How an op's TP communication is simulated. */
enum { TP_NONE = 0, TP_STAR, TP_PRIVATE, TP_FLOWS };

typedef struct dp_coll {
  int32_t stage, tp_rank, first_item, done;
  double bytes;
  /* overlap_param_gather: the weights' all-gather of (chunk, bucket), which
   * the next iteration's forward waits for instead of the iteration */
  int32_t chunk, bucket;
  uint8_t param_gather;
  /* a plan instance of this template on these routes (lazy lowering), or NULL */
  const fs__qcoll *tmpl;
  fs_route_cache *routes;
} dp_coll;

typedef struct keyed_cache {
  uint64_t key;
  fs_route_cache *routes;
} keyed_cache;

typedef struct pp_flow {
  int32_t item, stage; /* sending device's stage (dp 0 devices only kept) */
  uint8_t tp_rank;
} pp_flow;

typedef struct cached_time {
  fs_coll_op op;
  fs_coll_algo algo_asked;
  double bytes;
  int32_t group_key; /* which group: 0 TP star, 1 + gpu of EP/DP group base,
                        -(1 + i) TP group with scale-up signature i */
  double time_s;
  fs_coll_algo algo;
  int64_t flows;
} cached_time;

typedef struct cp_time {
  int pass;
  int64_t layers;
  double time_s;
} cp_time;

struct fs_train {
  const fs_job *job;
  fs_train_opts opts;
  int fabric_free; /* pipeline and data-parallel traffic free (for the bubble) */
  int32_t p, d, t, v, m, V, n_ops;
  int32_t c;   /* context-parallel ranks: a device is t x c GPUs */
  fs_sim *sim;
  int own_sim;               /* 0: a cluster's shared simulation */
  int32_t item_lo, item_hi;  /* this job's items in sim */
  int32_t iterations;        /* simulated back to back (opts.iterations) */
  int32_t *gate;             /* per device: the item its current iteration
                                waits for (the previous one's end), or -1 */
  int32_t *iter_hi;          /* per iteration: its items end before this id */
  fs_netctl *ctl; /* failures and re-optimisation, if the job asks (alone) */
  fs_ocsctl *ocs;     /* the OCS layer's controller, if the job has one */
  fs_topo *ocs_topo;  /* the job's topology with the layer's links (owned) */
  fs_router *router;
  fs_route_cache *routes;
  fs_coll_tuner *tuner;
  int32_t *host_of_gpu;
  fs_pipe_op *order;  /* [stage][n_ops] */
  op_items *ops;      /* [device][n_ops] */
  int32_t *op_index;  /* [stage][dir][mb][chunk] -> index in the order */
  dp_coll *dp;
  /* overlap_dp with ZeRO 0: per (stage, dp rank, chunk), the items after
   * which gradient buckets 0 .. nb - 2 are ready (the last is the op's end):
   * marks[((s * d + r) * v + chunk) * maxb + b]; NULL when not needed. */
  int32_t *dp_marks;
  int32_t *dp_last; /* [stage][chunk]: index of the chunk's last backward op */
  size_t n_dp, dp_cap;
  /* overlap_param_gather: the previous iteration's weight all-gathers
   * (the next forward of each chunk waits for them), and the item ranges
   * [lo, hi) of every iteration's, left out of the iteration times */
  dp_coll *pg;
  size_t n_pg, pg_cap;
  int32_t *pg_ranges;
  size_t n_pg_ranges, pg_ranges_cap;
  pp_flow *pp;
  size_t n_pp, pp_cap;
  cached_time *times;
  size_t n_times, times_cap;
  double *tp_fwd_s, *tp_bwd_s; /* TP_STAR: per virtual stage, TP seconds per op */
  fs_coll_algo last_algo;    /* the algorithm coll_time last measured */
  int64_t last_flows;        /* and its flow count */
  fs_train_kind kinds[FS_PAR_N];
  int tp_mode;               /* TP_* */
  double *tp_dev_f, *tp_dev_b; /* TP_PRIVATE: per device and chunk, TP seconds per op */
  int64_t *tp_dev_nf, *tp_dev_nb; /* and the flows each stands for */
  double *sigs;              /* TP_PRIVATE: distinct scale-up link signatures */
  size_t n_sigs, sigs_cap;
  int64_t represented;       /* flows a shortcut stands for (not simulated) */
  cp_time cp_alone[8];       /* CP exchanges timed alone (comm isolated) */
  int n_cp_alone;
  /* Rail symmetry (docs/model-alltraffic.md): with it only TP rank 0's lanes
   * and rails are simulated, on quotient routes; lane_step = t, rails = 1. */
  fs_symm *symm;
  int32_t lane_step, rails;
  int32_t ds;       /* data-parallel ranks simulated: g with the replica
                       shift S (ranks 0 .. g-1 stand for all), else d */
  int32_t shift_g;  /* S's shift in data-parallel ranks, 0 = none */
  int64_t orbit;    /* flows each simulated flow stands for */
  fs__qcoll **qc;   /* gradient-collective templates under S */
  size_t n_qc, qc_cap;
  int shift_refused; /* a collective was not S-invariant: rebuild with a larger S */
  int rot_refused;   /* a TP collective lowered as flows was not R-invariant:
                      * rebuild without R (no_rotation) */
  int no_rotation;   /* R is not tried (a build before this one refused it) */
  int32_t min_shift; /* shifts up to this one were refused: try only larger ones */
  char symm_note[240]; /* why the shortcut was refused, or "" */
  double build_wall_s;
  /* Lazy lowering (sim.h "plans"): templates go into the simulation as
   * plan instances, whose flows exist only while they run. On unless
   * opts.keep_flows, a transport model or routing control needs every flow
   * as an item. lazy_flows/lazy_tasks: the items they make (not in the
   * simulation's list); last_qc: the template lower_coll last used, -1 if
   * it lowered eagerly. */
  int lazy;
  int64_t lazy_flows, lazy_tasks;
  const fs__qcoll *last_qc;
  fs_route_cache *last_routes;
  keyed_cache *kcache; /* lazy, routes not shared: one cache per lowering key */
  size_t n_kcache, kcache_cap;
};

/* ---- a device's GPUs and hosts, its items ---- */
static inline int32_t gpu_of(const fs_train *tr, int32_t tp, int32_t dp, int32_t pp) {
  fs_rank_coords c = {tp, dp, pp, 0, 0, 0};
  return fs_job_gpu_of(tr->job, &c);
}

static inline int32_t host(const fs_train *tr, int32_t tp, int32_t dp, int32_t pp) {
  return tr->host_of_gpu[gpu_of(tr, tp, dp, pp)];
}

/* A device's GPUs are its tp x cp lanes: lane q is TP rank q % tp of CP
 * rank q / tp (cp = 1: lane = TP rank). */
static inline int32_t gpu_lane(const fs_train *tr, int32_t q, int32_t dp, int32_t pp) {
  fs_rank_coords c = {q % tr->t, dp, pp, 0, 0, q / tr->t};
  return fs_job_gpu_of(tr->job, &c);
}
static inline int32_t host_lane(const fs_train *tr, int32_t q, int32_t dp, int32_t pp) {
  return tr->host_of_gpu[gpu_lane(tr, q, dp, pp)];
}

/* Member k of TP rank j's gradient group at stage pp: the dp x cp ranks
 * holding the same weights, CP rank fastest (Megatron's dp-cp group). */
static inline int32_t gpu_dpcp(const fs_train *tr, int32_t j, int32_t k, int32_t pp) {
  return gpu_lane(tr, j + tr->t * (k % tr->c), k / tr->c, pp);
}
static inline int32_t host_dpcp(const fs_train *tr, int32_t j, int32_t k, int32_t pp) {
  return tr->host_of_gpu[gpu_dpcp(tr, j, k, pp)];
}

/* The job's server (gpus_per_node consecutive GPUs) of member k of TP
 * rank j's gradient group at stage pp. */
static inline int64_t server_dpcp(const fs_train *tr, int32_t j, int32_t k, int32_t pp) {
  int64_t G = tr->job->hw.gpus_per_node > 0 ? tr->job->hw.gpus_per_node : 1;
  return gpu_dpcp(tr, j, k, pp) / G;
}

/* ZeRO++'s hpZ: the members of TP rank j's gradient group at stage pp on
 * the server of device (data-parallel rank) r, in order: their hosts into
 * hosts[] (room for dp x cp), their number returned. */
static inline int32_t hpz_members(const fs_train *tr, int32_t j, int32_t r, int32_t pp,
                                  int32_t *hosts) {
  int64_t server = server_dpcp(tr, j, r * tr->c, pp);
  int32_t n = 0;
  for (int32_t k = 0; k < tr->d * tr->c; k++)
    if (server_dpcp(tr, j, k, pp) == server) hosts[n++] = host_dpcp(tr, j, k, pp);
  return n;
}

/* Layers of virtual stage vs (pipeline chunks may be uneven, work.h), and
 * its first layer in *first. */
static inline int64_t vs_layers(const fs_train *tr, int32_t vs, int64_t *first) {
  return fs_work_chunk_layers(tr->job, vs, first);
}

/* Expert all-to-alls an op of virtual stage vs runs: a dispatch and a
 * combine per MoE layer of its chunk, again for the recomputed forward of
 * a backward under full recomputation (0 without MoE layers). */
static inline int64_t op_alltoalls(const fs_train *tr, int32_t vs, int backward) {
  int64_t first, per = vs_layers(tr, vs, &first);
  int passes = backward && tr->job->par.recompute ? 2 : 1;
  return fs_work_moe_layers(&tr->job->model, first, per) * 2 * passes;
}

static inline int32_t add_task(fs_train *tr, int32_t dev_host, double seconds, fs_err *err) {
  return fs_sim_add_task_s(tr->sim, dev_host, 0, seconds, err);
}

static inline size_t idx3(const fs_train *tr, int32_t s, int dir, int32_t mb, int32_t chunk) {
  return (((size_t)s * 2 + dir) * tr->m + mb) * tr->v + chunk;
}

/* ---- train.c ---- */
/* The routing control a job asks for (routing "optimized", failures). */
void fs__train_ctl_opts(const fs_job *job, fs_netctl_opts *co);
/* A job's fs_train built into `shared` (a cluster's simulation) or, NULL,
 * its own; fabric_free: pipeline and data-parallel traffic take no time
 * (the run that measures the bubble). 0, or a code with err set. */
int fs__train_new(const fs_job *job, const fs_train_opts *opts, int fabric_free,
                  fs_sim *shared, fs_train **out, fs_err *err);

/* ---- train_symm.c ---- */
/* The job's route cache when routes do not depend on the collective's key
 * (the same routes, computed once for all collectives), else NULL. */
fs_route_cache *fs__train_shared_routes(const fs_train *tr);
/* The symmetries of the iteration (docs/model-alltraffic.md):
 *   rail rotation R: every device's TP ranks j -> j + 1 mod t;
 *   replica shift S: data-parallel ranks r -> r + g mod d, for the
 *     smallest g (a multiple of ep, dividing d) that the topology allows.
 * Both map the iteration's traffic onto itself: every per-lane and
 * per-rail item is built the same way for each TP rank, every device the
 * same way for each data-parallel rank, EP groups onto EP groups (ep | g),
 * the gradient collectives onto themselves under S and, when TP is lowered
 * as flows, each TP collective onto itself under R (checked per
 * collective: qcoll.h; one that is not is rebuilt without that generator).
 * When the generators extend to automorphisms of the topology
 * (fs_symm_new verifies them link by link) and routing is equivariant
 * (spraying; checked over the orbits of the traffic's pairs), only TP rank
 * 0's lanes and rails (R) of data-parallel ranks 0 .. g-1 (S) are
 * simulated, each flow on its quotient route, and max-min gives every
 * member of an orbit the same times (model-symm.md); under a transport
 * model each flow is timed by its expanded route and the switch queues
 * are folded too. Both are refused for other routing modes, routing
 * control or failures, a cluster, a trace (its link utilisation needs
 * every link), or no automorphism; the report then says why and the full
 * simulation runs. */
int fs__train_symm_setup(fs_train *tr, int shared, fs_err *err);

/* ---- train_alone.c ---- */
/* prm's algorithm (AUTO: the tuner's) and, with the framework's NCCL step
 * latency, NCCL's latency of a network step for it and the protocol the
 * tuner picks (Simple for an algorithm the job names). */
int fs__train_choose_algo(fs_train *tr, fs_coll_params *prm, const fs_coll_group *g,
                          fs_err *err);

/* Time of one collective run alone, cached by (op, bytes, group). hosts
 * NULL: the TP group, a switch at NVLink speed. */
int fs__train_coll_time(fs_train *tr, fs_coll_op op, fs_coll_algo algo, double bytes,
                        const int32_t *hosts, int32_t p, int32_t group_key, double *out,
                        fs_err *err);
/* TP seconds per op of a chunk of chunk_layers layers (pass): its
 * collectives timed alone on the TP group's star at NVLink speed. */
int fs__train_tp_seconds(fs_train *tr, fs_work_pass pass, int64_t chunk_layers, double *out,
                         fs_err *err);
/* EP seconds per op of virtual stage vs (pass): dispatch and combine
 * all-to-alls per MoE layer, over the EP group of dp rank r's GPUs. */
int fs__train_ep_seconds(fs_train *tr, int32_t vs, int32_t r, int backward, double *out,
                         fs_err *err);
/* ZeRO-3 gathers a chunk's parameters (its GPU's tensor-parallel shard)
 * from the data-parallel group before using them: seconds of one gather,
 * measured alone on the real topology. */
/* ZeRO-3: seconds of the weights' all-gather before an op of device r of
 * stage s (backward: before the backward, with ZeRO++'s hpZ inside the
 * server), timed alone. */
int fs__train_z3_seconds(fs_train *tr, int32_t s, int32_t r, int backward, double *out,
                         fs_err *err);
/* Decides how TP is simulated and, for the shortcut, times each device's
 * TP alone on its own scale-up links. Once per train (not per iteration). */
int fs__train_tp_setup(fs_train *tr, fs_err *err);
/* comm isolated: seconds of an op's ring-attention exchange simulated alone
 * (device (0, 0)'s, on the job's topology), cached by (pass, layers). */
int fs__train_cp_seconds(fs_train *tr, fs_work_pass pass, int64_t layers, int32_t vs, double *out,
                         fs_err *err);

/* ---- train_lower.c ---- */
/* comm all: the op's TP collectives as flows over the device's GPUs, one
 * after another after `after`; *end is the last one's done task (or after,
 * if there are none). */
int fs__train_tp_flows(fs_train *tr, int32_t s, int32_t r, int32_t vs, fs_work_pass pass,
                       int32_t after, int32_t *end, fs_err *err);
/* The op's ring-attention exchange (context parallelism, Liu et al. 2023;
 * docs/model-work.md): per layer of virtual stage vs, cp - 1 steps; at step
 * k every lane (TP rank j, CP rank c) of device (s, r) sends the K/V block
 * it holds to (j, c + 1), once it has received it at step k - 1; a layer's
 * exchange starts when the previous layer's is done. Flows go into `sim`
 * (the job's, or a scratch one to time it alone); *end is the last item
 * (after, if there is nothing to send). */
int fs__train_cp_ring(fs_train *tr, fs_sim *sim, int32_t s, int32_t r, int32_t vs,
                      fs_work_pass pass, int32_t after, int32_t *end, fs_err *err);
/* The iteration's DAG into tr->sim (the file note of train_lower.c): every
 * device's ops in its pipeline order, their TP/EP/CP/ZeRO-3 parts, the
 * pipeline sends and the data-parallel collectives. 0, or a code with err
 * set (FS_EINVAL naming what the topology cannot hold). */
int fs__train_build_dag(fs_train *tr, fs_err *err);
/* The iterations back to back: a device starts iteration k + 1 when it has
 * finished its ops of iteration k and its stage's data-parallel
 * collectives (the optimizer step needs the reduced gradients; its own
 * time is not modelled). The breakdown then describes the last iteration;
 * pipeline and data-parallel records of earlier ones are dropped. */
int fs__train_build_iterations(fs_train *tr, fs_err *err);

/* ---- train_result.c ---- */
/* Each iteration ends with its last item; returns the last iteration's
 * time (steady state when several run back to back) and the first's and
 * the mean in *first, *mean (either may be NULL). */
double fs__train_iteration_times(const fs_train *tr, double *first, double *mean);
/* The results of one job after its simulation ran. */
int fs__train_collect(fs_train *tr, fs_train_result *out, fs_err *err);

#endif
