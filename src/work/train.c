/* The training iteration DAG (train.h) and its breakdown.
 *
 * Devices are (stage s, data-parallel rank r), index s * dp + r; each runs
 * the 2 m v ops of its pipeline order. An op is a compute task, then (if
 * any) a TP task and an EP task of durations measured once per distinct
 * collective by simulating it alone (cached), then its pipeline sends: one
 * flow per TP rank to the next (forward) or previous (backward) virtual
 * stage's device, which the receiving op waits for. Data-parallel gradient
 * reductions are collectives lowered into the same simulation (so they
 * contend with pipeline traffic), per model chunk, in up to max_buckets
 * buckets run one after another, per TP rank (rail).
 *
 * With comm "all" (train.h) the TP collectives are flows too, lowered after
 * the op's compute, unless the exact private-links shortcut applies; EP
 * all-to-alls and ZeRO-3 gathers couple the devices of their group, so a
 * device's op gets a zero-time gate task that waits for the group's
 * collective, lowered once every device of the group has built that op.
 *
 * Sizes: GPT-3 175B on 1024 GPUs is 128 devices x 384 ops, ~0.4 M pipeline
 * flows and ~0.25 M data-parallel flows. */
#include "fabricsim/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "../base/base.h"
#include "fabricsim/compute.h"
#include "fabricsim/symm.h"
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
} dp_coll;

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
};

static int32_t gpu_of(const fs_train *tr, int32_t tp, int32_t dp, int32_t pp) {
  fs_rank_coords c = {tp, dp, pp, 0, 0, 0};
  return fs_job_gpu_of(tr->job, &c);
}

static int32_t host(const fs_train *tr, int32_t tp, int32_t dp, int32_t pp) {
  return tr->host_of_gpu[gpu_of(tr, tp, dp, pp)];
}

/* A device's GPUs are its tp x cp lanes: lane q is TP rank q % tp of CP
 * rank q / tp (cp = 1: lane = TP rank). */
static int32_t host_lane(const fs_train *tr, int32_t q, int32_t dp, int32_t pp) {
  fs_rank_coords c = {q % tr->t, dp, pp, 0, 0, q / tr->t};
  return tr->host_of_gpu[fs_job_gpu_of(tr->job, &c)];
}

/* Member k of TP rank j's gradient group at stage pp: the dp x cp ranks
 * holding the same weights, CP rank fastest (Megatron's dp-cp group). */
static int32_t host_dpcp(const fs_train *tr, int32_t j, int32_t k, int32_t pp) {
  return host_lane(tr, j + tr->t * (k % tr->c), k / tr->c, pp);
}

/* The job's route cache when routes do not depend on the collective's key
 * (the same routes, computed once for all collectives), else NULL. */
static fs_route_cache *shared_routes(const fs_train *tr) {
  return tr->job->mode == FS_ROUTE_SPRAY || tr->job->mode == FS_ROUTE_SHORTEST ? tr->routes
                                                                                 : NULL;
}

/* Route transform of the symmetric quotient: every simulated flow stands
 * for its orbit of tr->orbit flows (the group acts freely on them). */
static int quotient_route(void *ctx, const fs_route *in, fs_route *out, fs_err *err) {
  const fs_train *tr = ctx;
  return fs_symm_quotient_route(tr->symm, in, tr->orbit, out, err);
}

static void symm_refuse(fs_train *tr, const char *why) {
  snprintf(tr->symm_note, sizeof(tr->symm_note), "%s", why);
}

/* perm[host] = its image when every GPU of the job moves rot TP ranks and
 * shift data-parallel ranks on (mod tp, dp); hosts outside the job stay. */
static void lane_perm(const fs_train *tr, int32_t rot, int32_t shift, int32_t *perm) {
  for (int32_t h = 0; h < tr->job->topo->n_hosts; h++) perm[h] = h;
  for (int32_t s = 0; s < tr->p; s++)
    for (int32_t r = 0; r < tr->d; r++)
      for (int32_t q = 0; q < tr->t * tr->c; q++) {
        int32_t q2 = q - q % tr->t + (q % tr->t + rot) % tr->t;
        perm[host_lane(tr, q, r, s)] = host_lane(tr, q2, (r + shift) % tr->d, s);
      }
}

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
static int symm_setup(fs_train *tr, int shared, fs_err *err) {
  const fs_job *job = tr->job;
  tr->lane_step = 1;
  tr->rails = tr->t;
  tr->ds = tr->d;
  tr->shift_g = 0;
  tr->orbit = 1;
  tr->symm_note[0] = '\0';
  if ((tr->t < 2 && tr->d < 2) || tr->opts.free_comm || tr->fabric_free) return 0;
  if (tr->opts.no_symmetry) return symm_refuse(tr, "off (--no-symmetry)"), 0;
  if (job->mode != FS_ROUTE_SPRAY)
    return symm_refuse(tr, "refused: routing is not spray (per-flow hashing breaks it)"), 0;
  if (shared) return symm_refuse(tr, "refused: several jobs share the cluster"), 0;
  /* a transport model times each flow by its expanded route (kept by the
   * route cache) and keeps each link orbit's queues and flow counts at its
   * representative (fs_sim_set_symmetry) */
  if (job->reopt_interval_s > 0 || job->n_failures > 0)
    return symm_refuse(tr, "refused: routing control or failures"), 0;
  const fs_topo *t = job->topo;
  /* with TP lowered as flows, R maps each TP collective onto itself (a
   * shift of one rank), so only its representatives are kept (qcoll.h) */
  int use_r = tr->t >= 2 && !tr->no_rotation;
  int32_t *perm_r = fs__malloc((size_t)t->n_hosts, sizeof(int32_t));
  int32_t *perm_s = fs__malloc((size_t)t->n_hosts, sizeof(int32_t));
  if (!perm_r || !perm_s) {
    free(perm_r);
    free(perm_s);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  lane_perm(tr, 1, 0, perm_r);
  fs_err why = {0, ""};
  char note[240] = "";
  int rc = FS_EINVAL;
  int32_t ep = (int32_t)job->par.ep, g = 0;
  /* The smallest replica shift the topology allows (with R if used). */
  for (int32_t cand = ep; !tr->opts.no_replica_shift && cand < tr->d; cand += ep) {
    if (tr->d % cand || cand <= tr->min_shift) continue;
    lane_perm(tr, 0, cand, perm_s);
    const int32_t *gens[2] = {perm_s, perm_r};
    rc = fs_symm_new(t, gens, use_r ? 2 : 1, &tr->symm, &why);
    if (rc == FS_ENOMEM) break;
    if (!rc) {
      g = cand;
      break;
    }
  }
  if (!g && rc != FS_ENOMEM && use_r) {
    const int32_t *gens[1] = {perm_r};
    rc = fs_symm_new(t, gens, 1, &tr->symm, &why);
  }
  free(perm_r);
  free(perm_s);
  if (rc == FS_ENOMEM) return fs_err_set(err, rc, "%s", why.msg);
  if (rc || (!g && !use_r)) {
    snprintf(note, sizeof(note), "refused: %.200s",
             rc ? why.msg : "TP collectives are lowered as flows and no replica shift fits");
    return symm_refuse(tr, note), 0;
  }
  /* Routes of the traffic's pairs (lane 0 of dp 0: pipeline, CP, EP;
   * rail 0 of stage 0: ring neighbours of the gradient group), checked
   * over their whole orbits on plain routes. */
  int32_t N = tr->d * tr->c, n = 0, cap = 2 * (tr->p + N + ep + tr->c) + tr->t + 8;
  /* A node-aware ring (coll.h) joins other pairs than neighbours in rank
   * order: every rotation's, G orders in all. */
  int32_t *grp = fs__malloc((size_t)N, sizeof(int32_t)), G = 0;
  if (!grp) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int32_t k = 0; k < N; k++) grp[k] = host_dpcp(tr, 0, k, 0);
  if (N > 1) G = fs_coll_ring_server_size(t, &(fs_coll_group){N, grp});
  if (G < 0) {
    free(grp);
    return fs_err_set(err, G, "out of memory");
  }
  if (G > 1) cap += G * N;
  int32_t *pairs = fs__malloc((size_t)cap * 2, sizeof(int32_t));
  int32_t *ord = fs__malloc((size_t)N, sizeof(int32_t));
  fs_route_cache *plain = NULL;
  if (!pairs || !ord) {
    free(grp);
    free(pairs);
    free(ord);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  for (int32_t k = 0; G > 1 && k < G; k++) {
    fs_coll_ring_order(N, G, k, ord);
    for (int32_t i = 0; i < N; i++)
      pairs[2 * n] = grp[ord[i]], pairs[2 * n + 1] = grp[ord[(i + 1) % N]], n++;
  }
  free(grp);
  free(ord);
  for (int32_t s = 0; s + 1 < tr->p; s++) {
    pairs[2 * n] = host_lane(tr, 0, 0, s), pairs[2 * n + 1] = host_lane(tr, 0, 0, s + 1), n++;
    pairs[2 * n] = host_lane(tr, 0, 0, s + 1), pairs[2 * n + 1] = host_lane(tr, 0, 0, s), n++;
  }
  for (int32_t k = 0; N > 1 && k < N; k++)
    pairs[2 * n] = host_dpcp(tr, 0, k, 0), pairs[2 * n + 1] = host_dpcp(tr, 0, (k + 1) % N, 0), n++;
  for (int32_t e = 1; e < ep && e < tr->d; e++)
    pairs[2 * n] = host_lane(tr, 0, 0, 0), pairs[2 * n + 1] = host_lane(tr, 0, e, 0), n++;
  for (int32_t j = 0; tr->tp_mode == TP_FLOWS && use_r && j < tr->t; j++)
    pairs[2 * n] = host_lane(tr, j, 0, 0), pairs[2 * n + 1] = host_lane(tr, (j + 1) % tr->t, 0, 0),
    n++;
  for (int32_t c = 0; tr->c > 1 && c < tr->c; c++)
    pairs[2 * n] = host_lane(tr, tr->t * c, 0, 0),
    pairs[2 * n + 1] = host_lane(tr, tr->t * ((c + 1) % tr->c), 0, 0), n++;
  rc = fs_route_cache_new(tr->router, job->mode, job->seed, 0x70, &plain, err);
  if (!rc) {
    rc = fs_symm_check_routes(tr->symm, pairs, n, fs_symm_route_cache_fn, plain, "spray", &why);
    if (rc && rc != FS_ENOMEM) {
      snprintf(note, sizeof(note), "refused: %.200s", why.msg);
      symm_refuse(tr, note);
      fs_symm_free(tr->symm);
      tr->symm = NULL;
      rc = 0;
    } else if (rc) {
      fs_err_set(err, rc, "%s", why.msg);
    }
  }
  fs_route_cache_free(plain);
  free(pairs);
  if (rc || !tr->symm) return rc;
  if (use_r) {
    tr->lane_step = tr->t;
    tr->rails = 1;
    tr->orbit *= tr->t;
  }
  if (g) {
    tr->shift_g = g;
    tr->ds = g;
    tr->orbit *= tr->d / g;
  }
  fs_route_cache_set_transform(tr->routes, quotient_route, tr);
  if (tr->job->transport.kind == FS_TRANSPORT_FLUID) return 0;
  fs_route_cache_keep_expanded(tr->routes); /* what the transport times */
  return fs_sim_set_symmetry(tr->sim, tr->symm, err);
}

/* Time of one collective run alone, cached by (op, bytes, group). hosts
 * NULL: the TP group, a switch at NVLink speed. */
static int coll_time(fs_train *tr, fs_coll_op op, fs_coll_algo algo, double bytes,
                     const int32_t *hosts, int32_t p, int32_t group_key, double *out,
                     fs_err *err) {
  tr->last_flows = 0;
  if (p < 2 || bytes <= 0 || tr->opts.free_comm) {
    *out = 0;
    return 0;
  }
  for (size_t i = 0; i < tr->n_times; i++) {
    const cached_time *c = &tr->times[i];
    if (c->op == op && c->bytes == bytes && c->group_key == group_key && c->algo_asked == algo) {
      *out = c->time_s;
      tr->last_algo = c->algo;
      tr->last_flows = c->flows;
      return 0;
    }
  }
  fs_coll_params prm;
  fs_coll_params_init(&prm);
  prm.op = op;
  prm.algo = algo;
  prm.bytes = bytes;
  fs_coll_result res;
  int rc;
  int nccl = algo == FS_ALGO_AUTO && tr->opts.tune == FS_TUNE_NCCL;
  if (!hosts) {
    fs_topo *star = NULL;
    int32_t *ids = malloc((size_t)p * sizeof(int32_t));
    if (!ids) return fs_err_set(err, FS_ENOMEM, "out of memory");
    for (int32_t i = 0; i < p; i++) ids[i] = i;
    fs_coll_group g = {p, ids};
    rc = fs_topo_star(p, tr->job->hw.nvlink_gbps, NVLINK_HOP_NS, &star, err);
    if (!rc && nccl) rc = fs_coll_nccl_choose(star, &prm, &g, &prm.algo, NULL, NULL, err);
    if (!rc)
      rc = fs_coll_run2(star, FS_ROUTE_SHORTEST, 1, &tr->job->transport, &prm, &g, &res, err);
    fs_topo_free(star);
    free(ids);
  } else {
    fs_coll_group g = {p, hosts};
    rc = nccl ? fs_coll_nccl_choose(tr->job->topo, &prm, &g, &prm.algo, NULL, NULL, err) : 0;
    if (!rc)
      rc = fs_coll_run2(tr->job->topo, tr->job->mode, tr->job->seed, &tr->job->transport, &prm,
                        &g, &res, err);
  }
  if (rc) return rc;
  if (fs__grow(&tr->times, &tr->times_cap, tr->n_times + 1, sizeof(*tr->times)))
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  tr->times[tr->n_times++] =
      (cached_time){op, algo, bytes, group_key, res.time_s, res.algo, res.flows};
  tr->last_algo = res.algo;
  tr->last_flows = res.flows;
  *out = res.time_s;
  return 0;
}

/* TP seconds per op of one chunk in a pass: its collectives times their
 * measured time (docs/model-work.md counts them). */
/* TP seconds per op of one chunk in a pass on the group `hosts` (NULL: an
 * NVLink star), each collective simulated alone (cached under key), and the
 * flows those simulations had (*flows, what the op's TP stands for). */
static int tp_seconds_on(fs_train *tr, fs_work_pass pass, const int32_t *hosts, int32_t key,
                         int64_t chunk_layers, double *out, int64_t *flows_out, fs_err *err) {
  const fs_job *job = tr->job;
  int n = fs_work_tp_colls_per_layer(job, pass);
  double layers = (double)chunk_layers, bytes = fs_work_tp_bytes(job), t1, t2;
  fs_coll_algo a = job->par.algo[FS_PAR_TP];
  int rc;
  int64_t flows;
  if (job->par.sequence_parallel) {
    if ((rc = coll_time(tr, FS_COLL_ALLGATHER, a, bytes, hosts, tr->t, key, &t1, err))) return rc;
    flows = tr->last_flows;
    if ((rc = coll_time(tr, FS_COLL_REDUCESCATTER, a, bytes, hosts, tr->t, key, &t2, err)))
      return rc;
    *out = layers * n / 2.0 * (t1 + t2);
    *flows_out = (int64_t)(layers * n / 2.0) * (flows + tr->last_flows);
  } else {
    if ((rc = coll_time(tr, FS_COLL_ALLREDUCE, a, bytes, hosts, tr->t, key, &t1, err))) return rc;
    *out = layers * n * t1;
    *flows_out = (int64_t)(layers * n) * tr->last_flows;
  }
  if (tr->t > 1 && n > 0) tr->kinds[FS_PAR_TP].algo = tr->last_algo;
  return 0;
}

static int tp_seconds(fs_train *tr, fs_work_pass pass, int64_t chunk_layers, double *out,
                      fs_err *err) {
  int64_t flows;
  return tp_seconds_on(tr, pass, NULL, 0, chunk_layers, out, &flows, err);
}

/* Layers of virtual stage vs (pipeline chunks may be uneven, work.h), and
 * its first layer in *first. */
static int64_t vs_layers(const fs_train *tr, int32_t vs, int64_t *first) {
  return fs_work_chunk_layers(tr->job, vs, first);
}

/* EP seconds per op of virtual stage vs (pass): dispatch and combine
 * all-to-alls per MoE layer, over the EP group of dp rank r's GPUs. */
static int ep_seconds(fs_train *tr, int32_t vs, int32_t r, int backward, double *out,
                      fs_err *err) {
  const fs_job *job = tr->job;
  *out = 0;
  int64_t first, per = vs_layers(tr, vs, &first);
  int64_t moe = fs_work_moe_layers(&job->model, first, per);
  int32_t ep = (int32_t)job->par.ep;
  if (!moe || ep < 2) return 0;
  int32_t hosts[4096], stage = vs % tr->p, base = (r / ep) * ep;
  if (ep > 4096) return fs_err_set(err, FS_EINVAL, "ep > 4096 is not supported");
  for (int32_t e = 0; e < ep; e++) hosts[e] = host(tr, 0, base + e, stage);
  double t1;
  int rc = coll_time(tr, FS_COLL_ALLTOALL, job->par.algo[FS_PAR_EP], fs_work_ep_bytes(job),
                     hosts, ep, 1 + gpu_of(tr, 0, base, stage), &t1, err);
  if (rc) return rc;
  if (t1 > 0) tr->kinds[FS_PAR_EP].algo = tr->last_algo;
  int passes = backward ? (job->par.recompute ? 2 : 1) : 1;
  *out = (double)moe * 2 * passes * t1;
  return 0;
}

static int32_t add_task(fs_train *tr, int32_t dev_host, double seconds, fs_err *err) {
  return fs_sim_add_task_s(tr->sim, dev_host, 0, seconds, err);
}

/* Pipeline sends of op (device s, r) to device (s2, r): one flow per TP
 * rank, each waiting for the op's end; returns them in flows[t]. */
static int pp_sends(fs_train *tr, int32_t s, int32_t s2, int32_t r, int32_t after,
                    int32_t *flows, fs_err *err) {
  double bytes = fs_work_pp_bytes(tr->job);
  for (int32_t j = 0; j < tr->t * tr->c; j += tr->lane_step) {
    int32_t src = host_lane(tr, j, r, s), dst = host_lane(tr, j, r, s2);
    const fs_route *route;
    int rc = fs_route_cache_get(tr->routes, src, dst, &route, err);
    if (rc) return rc;
    int32_t f = fs_sim_add_flow_ref(tr->sim, src, dst, bytes, 0, route, err);
    if (f < 0) return f;
    if ((rc = fs_sim_add_dep(tr->sim, after, f, err))) return rc;
    flows[j] = f;
    if (r == 0 && j < tr->t) {
      if (fs__grow(&tr->pp, &tr->pp_cap, tr->n_pp + 1, sizeof(*tr->pp)))
        return fs_err_set(err, FS_ENOMEM, "out of memory");
      tr->pp[tr->n_pp++] = (pp_flow){f, s, (uint8_t)(j < 255 ? j : 255)};
    }
  }
  return 0;
}

static size_t idx3(const fs_train *tr, int32_t s, int dir, int32_t mb, int32_t chunk) {
  return (((size_t)s * 2 + dir) * tr->m + mb) * tr->v + chunk;
}

/* Lowers one collective into the job's simulation after `after`: on the
 * replica-shift quotient when shift (in group members) > 0 (only the
 * representatives, from a template built once per distinct collective),
 * on the rail rotation's when shift is -1 (a TP group, R moving each rank
 * one on), else in full. A collective that is not invariant sets
 * shift_refused (rot_refused for R) and returns 1, so that train_new
 * rebuilds with a larger shift or none (without R). */
static int lower_coll(fs_train *tr, const fs_coll_params *prm, const fs_coll_group *g,
                      const int32_t *after, int32_t n_after, uint64_t key, int32_t shift,
                      int32_t *first, int32_t *done, fs_err *err) {
  /* shift -1: the rail rotation R over a TP group, a shift of one rank */
  int is_rot = shift < 0;
  if (is_rot) shift = 1;
  const fs_job *job = tr->job;
  int rc;
  if (shift > 0 && shift < g->p) {
    fs__qcoll *q = NULL;
    /* A ring's lowering depends on how its ranks sit in servers (coll.h,
     * node-aware rings): a template serves only groups that sit alike. */
    int32_t G = prm->algo == FS_ALGO_RING ? fs_coll_ring_server_size(job->topo, g) : 0;
    if (G < 0) return fs_err_set(err, G, "out of memory");
    for (size_t i = 0; i < tr->n_qc && !q; i++)
      if (fs__qcoll_matches(tr->qc[i], prm, g->p, G, shift)) q = tr->qc[i];
    if (!q) {
      fs_err why = {0, ""};
      rc = fs__qcoll_new(job->topo, tr->router, job->seed, prm, g, shift, &q, &why);
      if (rc == FS_EINVAL) {
        *(is_rot ? &tr->rot_refused : &tr->shift_refused) = 1;
        snprintf(tr->symm_note, sizeof(tr->symm_note), "%s refused: %.180s",
                 is_rot ? "rail rotation" : "replica shift", why.msg);
        return 1;
      }
      if (rc) return fs_err_set(err, rc, "%s", why.msg);
      if (fs__grow(&tr->qc, &tr->qc_cap, tr->n_qc + 1, sizeof(*tr->qc))) {
        fs__qcoll_free(q);
        return fs_err_set(err, FS_ENOMEM, "out of memory");
      }
      tr->qc[tr->n_qc++] = q;
    }
    return fs__qcoll_add(q, tr->sim, tr->routes, g->hosts, after, n_after, first, done, err);
  }
  fs_coll_lowering l;
  fs_coll_lowering_init(&l, tr->sim, tr->router, job->mode, job->seed);
  l.key = key;
  l.routes = shared_routes(tr);
  l.after = after;
  l.n_after = n_after;
  if ((rc = fs_coll_lower(prm, g, &l, err))) return rc;
  *first = l.first_item;
  *done = l.done;
  return 0;
}

static int32_t dp_max_buckets(const fs_train *tr) {
  return tr->opts.max_buckets > 0 ? tr->opts.max_buckets : 4;
}

/* Gradient buckets of `bytes`: grad_bucket_bytes each, at most max_buckets. */
static int32_t dp_buckets(const fs_train *tr, double bytes) {
  int32_t maxb = dp_max_buckets(tr);
  int32_t nb = (int32_t)ceil(bytes / tr->job->par.grad_bucket_bytes);
  if (nb < 1) nb = 1;
  return nb > maxb ? maxb : nb;
}

/* Gradient bytes of one model chunk of stage s on one GPU. */
static double dp_chunk_bytes(const fs_train *tr, int32_t s) {
  fs_work_shard sh;
  fs_work_stage_params(tr->job, s, &sh);
  return (double)(sh.dense + sh.expert) * (double)tr->job->model.dtype_bytes / tr->v;
}

/* Data-parallel collectives of `bytes` for stage s, per TP rank (rail), in
 * up to max_buckets buckets run one after another, each bucket doing ops[]
 * in order. Bucket b starts after the previous one and after marks[b *
 * n_after ..] (items of every dp device of the stage) for b < nb - 1 when
 * marks is given; the last bucket (every bucket without marks) after
 * `after`. */
static int dp_collectives(fs_train *tr, int32_t s, double bytes, const int32_t *after,
                          const int32_t *marks, int32_t n_after, const fs_coll_op *ops,
                          int n_ops, fs_err *err) {
  const fs_job *job = tr->job;
  int32_t N = tr->d * tr->c; /* the gradient group: dp x cp ranks */
  if (N < 2 || bytes <= 0 || n_ops == 0) return 0;
  int32_t nb = dp_buckets(tr, bytes);
  int32_t *deps = malloc(((size_t)n_after + 1) * sizeof(int32_t));
  if (!deps) return fs_err_set(err, FS_ENOMEM, "out of memory");
  int32_t *hosts = malloc((size_t)N * sizeof(int32_t));
  if (!hosts) {
    free(deps);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  int rc = 0;
  for (int32_t j = 0; j < tr->rails && !rc; j++) {
    for (int32_t k = 0; k < N; k++) hosts[k] = host_dpcp(tr, j, k, s);
    fs_coll_group g = {N, hosts};
    int32_t prev = -1;
    for (int32_t b = 0; b < nb && !rc; b++)
      for (int ph = 0; ph < n_ops && !rc; ph++) {
        /* what this phase waits for: the previous phase, and the first
         * phase of a bucket its gradients */
        int32_t nd = 0;
        if (prev >= 0) deps[nd++] = prev;
        if (ph == 0 && (prev < 0 || marks)) {
          const int32_t *ready = marks && b < nb - 1 ? marks + (size_t)b * n_after : after;
          for (int32_t r = 0; r < n_after; r++) deps[nd++] = ready[r];
        }
        fs_coll_params prm;
        fs_coll_params_init(&prm);
        prm.op = ops[ph];
        prm.bytes = bytes / nb;
        prm.algo = job->par.algo[FS_PAR_DP];
        if (prm.algo == FS_ALGO_AUTO &&
            (rc = fs_coll_tuner_choose(tr->tuner, &prm, &g, &prm.algo, NULL, err)))
          break;
        int32_t first, done;
        if ((rc = lower_coll(tr, &prm, &g, deps, nd, (uint64_t)(s * 131 + j),
                             tr->shift_g * tr->c, &first, &done, err)))
          break;
        prev = done;
        if (fs__grow(&tr->dp, &tr->dp_cap, tr->n_dp + 1, sizeof(*tr->dp))) {
          rc = fs_err_set(err, FS_ENOMEM, "out of memory");
          break;
        }
        tr->dp[tr->n_dp++] = (dp_coll){s, j, first, done, prm.bytes};
        tr->kinds[FS_PAR_DP].algo = prm.algo;
      }
  }
  free(hosts);
  free(deps);
  return rc;
}

/* ZeRO-3 gathers a chunk's parameters (its GPU's tensor-parallel shard)
 * from the data-parallel group before using them: seconds of one gather,
 * measured alone on the real topology. */
static int z3_seconds(fs_train *tr, int32_t s, double *out, fs_err *err) {
  *out = 0;
  int32_t N = tr->d * tr->c;
  if (tr->job->par.zero < 3 || N < 2) return 0;
  fs_work_shard sh;
  fs_work_stage_params(tr->job, s, &sh);
  double bytes = (double)(sh.dense + sh.expert) * (double)tr->job->model.dtype_bytes / tr->v;
  int32_t *hosts = malloc((size_t)N * sizeof(int32_t));
  if (!hosts) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int32_t k = 0; k < N; k++) hosts[k] = host_dpcp(tr, 0, k, s);
  int rc = coll_time(tr, FS_COLL_ALLGATHER, tr->job->par.algo[FS_PAR_DP], bytes, hosts, N,
                     1 + gpu_of(tr, 0, 0, s), out, err);
  free(hosts);
  return rc;
}

/* 1 if no flow of the simulation other than a device's own TP collectives
 * can cross its TP GPUs' scale-up links (so those collectives, alone on
 * their links, take exactly the time they take simulated alone there):
 * every TP group inside one server of a topology that models servers,
 * and no other kind of traffic between two GPUs of one server (GPUs never
 * forward, so only such pairs use a GPU's scale-up links), and no failure
 * of a scale-up cable. Conservative: any pipeline neighbour pair, any two
 * members of a data-parallel group (which holds the EP and ZeRO groups). */
static int tp_private_ok(const fs_train *tr) {
  const fs_topo *t = tr->job->topo;
  int32_t G = t->gpus_per_node;
  if (G < 2 || t->scaleup0 < 0) return 0;
  for (int32_t i = 0; i < tr->job->n_failures; i++) {
    const fs_link *l = &t->links[tr->job->failures[i].link];
    if (t->nodes[l->from].kind == FS_NODE_SCALEUP || t->nodes[l->to].kind == FS_NODE_SCALEUP)
      return 0;
  }
  /* stamp[server] = the last (stage, rail) group that had a member there */
  int32_t servers = t->n_hosts / G, ok = 1;
  int64_t *stamp = fs__malloc((size_t)servers, sizeof(int64_t));
  if (!stamp) return 0;
  for (int32_t k = 0; k < servers; k++) stamp[k] = -1;
  /* (the dp x cp group of a TP rank holds its device's CP ranks, so a CP
   * ring inside a server also fails the stamp test) */
  for (int32_t s = 0; s < tr->p && ok; s++)
    for (int32_t j = 0; j < tr->t && ok; j++)
      for (int32_t k = 0; k < tr->d * tr->c && ok; k++) {
        int32_t h = host_dpcp(tr, j, k, s), sv = h / G;
        int64_t group = (int64_t)s * tr->t + j;
        if (sv != host_dpcp(tr, 0, k, s) / G) ok = 0; /* TP spans servers */
        if (tr->p > 1 && sv == host_dpcp(tr, j, k, (s + 1) % tr->p) / G) ok = 0;
        if (stamp[sv] == group) ok = 0; /* two DP/CP members in one server */
        stamp[sv] = group;
      }
  free(stamp);
  return ok;
}

/* Index of device (s, r)'s TP scale-up signature (per rank: capacity and
 * latency of its GPU's link up to the server's switch and back) in tr->sigs,
 * adding it if new: groups with equal signatures are isomorphic sub-networks
 * and so take equal times alone. */
static int tp_signature(fs_train *tr, int32_t s, int32_t r, int32_t c, int32_t *idx,
                        fs_err *err) {
  const fs_topo *t = tr->job->topo;
  size_t w = (size_t)4 * tr->t;
  double sig[4 * 256];
  if (tr->t > 256) return fs_err_set(err, FS_EINVAL, "tp > 256 is not supported");
  for (int32_t j = 0; j < tr->t; j++) {
    int32_t h = host_lane(tr, j + tr->t * c, r, s), sw = t->scaleup0 + h / t->gpus_per_node;
    double *e = sig + 4 * j;
    e[0] = e[1] = e[2] = e[3] = -1;
    for (int32_t k = t->out_start[h]; k < t->out_start[h + 1]; k++) {
      const fs_link *l = &t->links[t->out_links[k]];
      if (l->to != sw) continue;
      e[0] = l->capacity_bps;
      e[1] = (double)l->latency_ns;
      e[2] = t->links[l->reverse].capacity_bps;
      e[3] = (double)t->links[l->reverse].latency_ns;
      break;
    }
  }
  for (size_t i = 0; i < tr->n_sigs; i++)
    if (!memcmp(tr->sigs + i * w, sig, w * sizeof(double))) {
      *idx = (int32_t)i;
      return 0;
    }
  if (fs__grow(&tr->sigs, &tr->sigs_cap, (tr->n_sigs + 1) * w, sizeof(double)))
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  memcpy(tr->sigs + tr->n_sigs * w, sig, w * sizeof(double));
  *idx = (int32_t)tr->n_sigs++;
  return 0;
}

/* Decides how TP is simulated and, for the shortcut, times each device's
 * TP alone on its own scale-up links. Once per train (not per iteration). */
static int tp_setup(fs_train *tr, fs_err *err) {
  int rc;
  if (tr->t < 2 || tr->opts.free_comm) {
    tr->tp_mode = TP_NONE;
    return 0;
  }
  const fs_topo *t = tr->job->topo;
  if (tr->opts.comm == FS_COMM_ISOLATED || tr->fabric_free ||
      (t->gpus_per_node < 2 && tr->job->hw.gpus_per_node > 1)) {
    tr->tp_mode = TP_STAR;
    return 0;
  }
  if (tr->opts.tp_flows || !tp_private_ok(tr)) {
    tr->tp_mode = TP_FLOWS;
    return 0;
  }
  tr->tp_mode = TP_PRIVATE;
  size_t devs = (size_t)tr->p * tr->d * tr->v;
  tr->tp_dev_f = fs__malloc(devs, sizeof(double));
  tr->tp_dev_b = fs__malloc(devs, sizeof(double));
  tr->tp_dev_nf = fs__malloc(devs, sizeof(int64_t));
  tr->tp_dev_nb = fs__malloc(devs, sizeof(int64_t));
  int32_t *hosts = fs__malloc((size_t)tr->t, sizeof(int32_t));
  if (!tr->tp_dev_f || !tr->tp_dev_b || !tr->tp_dev_nf || !tr->tp_dev_nb || !hosts) {
    free(hosts);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  rc = 0;
  for (int32_t s = 0; s < tr->p && !rc; s++)
    for (int32_t r = 0; r < tr->ds && !rc; r++) {
      int32_t sig, sig_c;
      for (int32_t j = 0; j < tr->t; j++) hosts[j] = host(tr, j, r, s);
      if ((rc = tp_signature(tr, s, r, 0, &sig, err))) break;
      /* every CP rank's TP group must be isomorphic to CP rank 0's */
      for (int32_t c = 1; c < tr->c && !rc; c++)
        if (!(rc = tp_signature(tr, s, r, c, &sig_c, err)) && sig_c != sig) {
          tr->tp_mode = TP_FLOWS;
          free(hosts);
          return 0;
        }
      if (rc) break;
      for (int32_t c = 0; c < tr->v && !rc; c++) {
        size_t k = ((size_t)s * tr->d + r) * tr->v + c;
        int64_t L = vs_layers(tr, c * tr->p + s, NULL), nf, nb, nr;
        double f, b, rec;
        if ((rc = tp_seconds_on(tr, FS_PASS_FWD, hosts, -1 - sig, L, &f, &nf, err)) ||
            (rc = tp_seconds_on(tr, FS_PASS_BWD, hosts, -1 - sig, L, &b, &nb, err)) ||
            (rc = tp_seconds_on(tr, FS_PASS_RECOMPUTE, hosts, -1 - sig, L, &rec, &nr, err)))
          break;
        tr->tp_dev_f[k] = f;
        tr->tp_dev_b[k] = b + rec;
        tr->tp_dev_nf[k] = nf;
        tr->tp_dev_nb[k] = nb + nr;
      }
    }
  free(hosts);
  return rc;
}

/* Lowers `count` collectives (op, bytes each) one after another over
 * `hosts`, the first after the items `after`; *done is the last one's done
 * task, *flows adds their flows. algo AUTO asks the tuner. */
static int coll_chain(fs_train *tr, fs_coll_op op, fs_coll_algo algo, double bytes,
                      const int32_t *hosts, int32_t n, const int32_t *after, int32_t n_after,
                      int32_t count, uint64_t key, int32_t shift, int32_t *first, int32_t *done,
                      fs_err *err) {
  fs_coll_group g = {n, hosts};
  fs_coll_params prm;
  fs_coll_params_init(&prm);
  prm.op = op;
  prm.bytes = bytes;
  prm.algo = algo;
  int rc;
  if (prm.algo == FS_ALGO_AUTO &&
      (rc = fs_coll_tuner_choose(tr->tuner, &prm, &g, &prm.algo, NULL, err)))
    return rc;
  tr->last_algo = prm.algo;
  int32_t prev = -1;
  *first = -1;
  for (int32_t c = 0; c < count; c++) {
    int32_t f, d;
    if ((rc = lower_coll(tr, &prm, &g, prev >= 0 ? &prev : after, prev >= 0 ? 1 : n_after, key,
                         shift, &f, &d, err)))
      return rc;
    if (*first < 0) *first = f;
    prev = d;
  }
  *done = prev;
  return 0;
}

/* comm all: the op's TP collectives as flows over the device's GPUs, one
 * after another after `after`; *end is the last one's done task (or after,
 * if there are none). */
static int tp_flows(fs_train *tr, int32_t s, int32_t r, int32_t vs, fs_work_pass pass,
                    int32_t after, int32_t *end, fs_err *err) {
  const fs_job *job = tr->job;
  int n = fs_work_tp_colls_per_layer(job, pass);
  int64_t layers = vs_layers(tr, vs, NULL);
  int32_t first, prev = after, join = -1;
  double bytes = fs_work_tp_bytes(job);
  uint64_t key = 0x7000000000ull + (uint64_t)(s * tr->d + r);
  int32_t *hosts = fs__malloc((size_t)tr->t, sizeof(int32_t));
  if (!hosts) return fs_err_set(err, FS_ENOMEM, "out of memory");
  int rc = 0;
  for (int32_t c = 0; c < tr->c && !rc; c++) {
    prev = after;
    for (int32_t j = 0; j < tr->t; j++) hosts[j] = host_lane(tr, j + tr->t * c, r, s);
    for (int64_t L = 0; L < layers * n && !rc; L++) {
      fs_coll_op op = !job->par.sequence_parallel ? FS_COLL_ALLREDUCE
                      : L % 2 == 0                ? FS_COLL_ALLGATHER
                                                  : FS_COLL_REDUCESCATTER;
      /* under R only TP rank 0's lane is simulated: the TP collective's
       * representatives, R being a shift of one rank of the group */
      rc = coll_chain(tr, op, job->par.algo[FS_PAR_TP], bytes, hosts, tr->t, &prev, 1, 1, key,
                      tr->rails == 1 ? -1 : 0, &first, &prev, err);
      tr->kinds[FS_PAR_TP].algo = tr->last_algo;
    }
    if (rc || tr->c == 1) break;
    /* CP ranks' TP groups run side by side: join them */
    if (join < 0 && (join = fs_sim_add_task_s(tr->sim, host(tr, 0, r, s), 0, 0, err)) < 0) {
      rc = join;
      break;
    }
    if (prev != after) rc = fs_sim_add_dep(tr->sim, prev, join, err);
    if (!rc && c == tr->c - 1) rc = fs_sim_add_dep(tr->sim, after, join, err);
  }
  free(hosts);
  if (rc) return rc;
  *end = tr->c > 1 ? join : prev;
  return 0;
}


/* The op's ring-attention exchange (context parallelism, Liu et al. 2023;
 * docs/model-work.md): per layer of virtual stage vs, cp - 1 steps; at step
 * k every lane (TP rank j, CP rank c) of device (s, r) sends the K/V block
 * it holds to (j, c + 1), once it has received it at step k - 1; a layer's
 * exchange starts when the previous layer's is done. Flows go into `sim`
 * (the job's, or a scratch one to time it alone); *end is the last item
 * (after, if there is nothing to send). */
static int cp_ring(fs_train *tr, fs_sim *sim, int32_t s, int32_t r, int32_t vs,
                   fs_work_pass pass, int32_t after, int32_t *end, fs_err *err) {
  const fs_job *job = tr->job;
  int steps = fs_work_cp_steps_per_layer(job, pass);
  double bytes = fs_work_cp_step_bytes(job, pass);
  int64_t layers = vs_layers(tr, vs, NULL);
  int32_t lanes = tr->t * tr->c, prev = after;
  *end = after;
  if (tr->c < 2 || steps <= 0 || bytes <= 0) return 0;
  int32_t *buf = fs__malloc((size_t)lanes * 2, sizeof(int32_t)), *got = buf, *next = buf + lanes;
  if (!buf) return fs_err_set(err, FS_ENOMEM, "out of memory");
  int rc = 0;
  for (int64_t L = 0; L < layers && !rc; L++) {
    for (int32_t q = 0; q < lanes; q++) got[q] = prev;
    for (int k = 0; k < steps && !rc; k++) {
      for (int32_t q = 0; q < lanes && !rc; q += tr->lane_step) {
        int32_t to = (q + tr->t) % lanes; /* same TP rank, next CP rank */
        int32_t src = host_lane(tr, q, r, s), dst = host_lane(tr, to, r, s);
        const fs_route *route;
        int32_t f;
        if ((rc = fs_route_cache_get(tr->routes, src, dst, &route, err))) break;
        if ((f = fs_sim_add_flow_ref(sim, src, dst, bytes, 0, route, err)) < 0) {
          rc = f;
          break;
        }
        if (got[q] >= 0) rc = fs_sim_add_dep(sim, got[q], f, err);
        next[to] = f;
      }
      int32_t *tmp = got;
      got = next;
      next = tmp;
    }
    int32_t done = rc ? -1 : fs_sim_add_task_s(sim, host(tr, 0, r, s), 0, 0, err);
    if (!rc && done < 0) rc = done;
    for (int32_t q = 0; q < lanes && !rc; q += tr->lane_step)
      rc = fs_sim_add_dep(sim, got[q], done, err);
    prev = done;
  }
  free(buf);
  if (!rc) *end = prev;
  return rc;
}

/* comm isolated: seconds of an op's ring-attention exchange simulated alone
 * (device (0, 0)'s, on the job's topology), cached by (pass, layers). */
static int cp_seconds(fs_train *tr, fs_work_pass pass, int64_t layers, int32_t vs, double *out,
                      fs_err *err) {
  *out = 0;
  if (tr->c < 2 || tr->opts.free_comm || fs_work_cp_steps_per_layer(tr->job, pass) <= 0) return 0;
  for (int i = 0; i < tr->n_cp_alone; i++)
    if (tr->cp_alone[i].pass == (int)pass && tr->cp_alone[i].layers == layers) {
      *out = tr->cp_alone[i].time_s;
      return 0;
    }
  fs_sim *sim = NULL;
  int32_t end;
  int rc = fs_sim_new(tr->job->topo, &sim, err);
  if (!rc) rc = fs_sim_set_transport(sim, &tr->job->transport, err);
  if (!rc && tr->symm) rc = fs_sim_set_symmetry(sim, tr->symm, err);
  if (!rc) rc = cp_ring(tr, sim, 0, 0, vs, pass, -1, &end, err);
  if (!rc) rc = fs_sim_run(sim, NULL, err);
  if (!rc) *out = fs_sim_makespan_s(sim);
  fs_sim_free(sim);
  if (!rc && tr->n_cp_alone < 8)
    tr->cp_alone[tr->n_cp_alone++] = (cp_time){(int)pass, layers, *out};
  return rc;
}

static int32_t add_gate(fs_train *tr, int32_t dev_host, int32_t after, fs_err *err) {
  int32_t g = fs_sim_add_task_s(tr->sim, dev_host, 0, 0, err);
  if (g >= 0 && after >= 0) {
    int rc = fs_sim_add_dep(tr->sim, after, g, err);
    if (rc) return rc;
  }
  return g;
}

/* comm all: the collectives that couple devices, for op i of stage s, once
 * every device of the stage has built it: per MoE layer the dispatch and
 * combine all-to-alls of each EP group, per TP rank (rail); before the
 * compute, the ZeRO-3 gathers of the whole data-parallel group, per rail.
 * Each device's gate waits for its group's collectives on every rail. */
static int group_colls(fs_train *tr, int32_t s, int32_t i, fs_err *err) {
  const fs_job *job = tr->job;
  const fs_pipe_op *o = &tr->order[(size_t)s * tr->n_ops + i];
  int32_t d = tr->d, n = tr->n_ops, N = d * tr->c;
  int32_t *hosts = fs__malloc((size_t)N, sizeof(int32_t));
  int32_t *after = fs__malloc((size_t)d, sizeof(int32_t));
  if (!hosts || !after) {
    free(hosts);
    free(after);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  int rc = 0;
  op_items *first = &tr->ops[(size_t)(s * d) * n + i];
  if (first->z3 >= 0 && first->z3_from != first->z3) {
    fs_work_shard sh;
    fs_work_stage_params(job, s, &sh);
    double bytes = (double)(sh.dense + sh.expert) * (double)job->model.dtype_bytes / tr->v;
    int gathers = o->backward && job->par.recompute ? 2 : 1;
    for (int32_t r = 0; r < tr->ds; r++) after[r] = tr->ops[(size_t)(s * d + r) * n + i].z3_from;
    int32_t n_after = 0;
    for (int32_t r = 0; r < tr->ds; r++)
      if (after[r] >= 0) after[n_after++] = after[r];
    for (int32_t j = 0; j < tr->rails && !rc; j++) {
      int32_t f, done;
      for (int32_t k = 0; k < N; k++) hosts[k] = host_dpcp(tr, j, k, s);
      rc = coll_chain(tr, FS_COLL_ALLGATHER, job->par.algo[FS_PAR_DP], bytes, hosts, N, after,
                      n_after, gathers, 0x5300000000ull + (uint64_t)(s * 131 + j),
                      tr->shift_g * tr->c, &f, &done, err);
      for (int32_t r = 0; r < tr->ds && !rc; r++)
        rc = fs_sim_add_dep(tr->sim, done, tr->ops[(size_t)(s * d + r) * n + i].z3, err);
    }
  }
  if (!rc && first->ep >= 0 && first->ep_from != first->ep) {
    int32_t ep = (int32_t)job->par.ep, vs = o->chunk * tr->p + s;
    int64_t lo, per = vs_layers(tr, vs, &lo);
    int64_t moe = fs_work_moe_layers(&job->model, lo, per);
    int passes = o->backward ? (job->par.recompute ? 2 : 1) : 1;
    for (int32_t base = 0; base < tr->ds && !rc; base += ep) {
      for (int32_t e = 0; e < ep; e++)
        after[e] = tr->ops[(size_t)(s * d + base + e) * n + i].ep_from;
      for (int32_t j = 0; j < tr->t * tr->c && !rc; j += tr->lane_step) {
        int32_t f, done;
        for (int32_t e = 0; e < ep; e++) hosts[e] = host_lane(tr, j, base + e, s);
        rc = coll_chain(tr, FS_COLL_ALLTOALL, job->par.algo[FS_PAR_EP], fs_work_ep_bytes(job),
                        hosts, ep, after, ep, (int32_t)(moe * 2 * passes),
                        0x4500000000ull + (uint64_t)((s * d + base) * 257 + j), 0, &f, &done,
                        err);
        tr->kinds[FS_PAR_EP].algo = tr->last_algo;
        for (int32_t e = 0; e < ep && !rc; e++)
          rc = fs_sim_add_dep(tr->sim, done, tr->ops[(size_t)(s * d + base + e) * n + i].ep, err);
      }
    }
  }
  free(hosts);
  free(after);
  return rc;
}

/* overlap_dp: gradients come out during the backward pass, the last layers'
 * first, so (PyTorch DDP, Megatron-LM's overlapped reduction) bucket b of
 * nb is ready (b + 1) / nb of the way through the backward proper of the
 * chunk's last backward op, after its recomputed forward. A zero-cost task
 * per bucket but the last, started with the op's compute (tasks do not
 * contend), lasts until then; the last bucket waits for the op's end. */
static int dp_bucket_marks(fs_train *tr, int32_t s, int32_t r, int32_t chunk, int32_t vs,
                           int32_t prev, int32_t dev_host, fs_err *err) {
  const fs_job *job = tr->job;
  int32_t nb = dp_buckets(tr, dp_chunk_bytes(tr, s)), maxb = dp_max_buckets(tr);
  double op_s = fs_compute_op_s(job, vs, 1), rec_s = fs_compute_recompute_s(job, vs);
  for (int32_t b = 0; b + 1 < nb; b++) {
    int32_t t = add_task(tr, dev_host, rec_s + (op_s - rec_s) * (b + 1) / nb, err);
    if (t < 0) return t;
    int rc = prev >= 0 ? fs_sim_add_dep(tr->sim, prev, t, err) : 0;
    if (rc) return rc;
    tr->dp_marks[((size_t)(s * tr->d + r) * tr->v + chunk) * maxb + b] = t;
  }
  return 0;
}

/* Sets up tr->dp_marks and dp_last when buckets overlap the backward:
 * overlap_dp, ZeRO 0 and a data-parallel group that is simulated. */
static int dp_marks_setup(fs_train *tr, fs_err *err) {
  const fs_job *job = tr->job;
  if (tr->dp_marks || !job->par.overlap_dp || job->par.zero != 0 || tr->d * tr->c < 2 ||
      tr->fabric_free || tr->opts.free_comm)
    return 0;
  int32_t p = tr->p, v = tr->v, n = tr->n_ops;
  tr->dp_marks = fs__malloc((size_t)p * tr->d * v * dp_max_buckets(tr), sizeof(int32_t));
  tr->dp_last = fs__malloc((size_t)p * v, sizeof(int32_t));
  if (!tr->dp_marks || !tr->dp_last) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int32_t k = 0; k < p * v; k++) tr->dp_last[k] = -1;
  for (int32_t s = 0; s < p; s++)
    for (int32_t i = 0; i < n; i++) {
      const fs_pipe_op *o = &tr->order[(size_t)s * n + i];
      if (o->backward) tr->dp_last[(size_t)s * v + o->chunk] = i;
    }
  return 0;
}

static int build(fs_train *tr, fs_err *err) {
  /* (one iteration; tr->gate chains it after the previous one) */
  const fs_job *job = tr->job;
  int32_t p = tr->p, d = tr->d, v = tr->v, m = tr->m, V = tr->V, n = tr->n_ops;
  int all = tr->opts.comm == FS_COMM_ALL && !tr->fabric_free && !tr->opts.free_comm;
  int rc;
  /* Per-op durations: compute by chunk and pass; TP (timed alone on a
   * star) the same for all. */
  for (int32_t vs = 0; vs < V && tr->tp_mode == TP_STAR; vs++) {
    double tp_f = 0, tp_b = 0, tp_r = 0;
    int64_t L = vs_layers(tr, vs, NULL);
    if ((rc = tp_seconds(tr, FS_PASS_FWD, L, &tp_f, err)) ||
        (rc = tp_seconds(tr, FS_PASS_BWD, L, &tp_b, err)) ||
        (rc = tp_seconds(tr, FS_PASS_RECOMPUTE, L, &tp_r, err)))
      return rc;
    tr->tp_fwd_s[vs] = tp_f;
    tr->tp_bwd_s[vs] = tp_b + tp_r;
  }
  if ((rc = dp_marks_setup(tr, err))) return rc;
  int need_groups = 0;
  /* Ops, device by device, in schedule order. */
  for (int32_t s = 0; s < p; s++)
    for (int32_t r = 0; r < tr->ds; r++) {
      int32_t dev = s * d + r, dev_host = host(tr, 0, r, s);
      int32_t prev = tr->gate[dev];
      double z3_s = 0;
      if (!all && !tr->opts.free_comm && !tr->fabric_free && (rc = z3_seconds(tr, s, &z3_s, err)))
        return rc;
      int z3_flows = all && job->par.zero >= 3 && d * tr->c > 1;
      for (int32_t i = 0; i < n; i++) {
        const fs_pipe_op *o = &tr->order[(size_t)s * n + i];
        int32_t vs = o->chunk * p + s;
        /* compute.h: FLOPs / (peak mfu), or the per-operation roofline; the
         * device's last op (a backward) also runs the optimizer step. */
        double compute_s = fs_compute_op_s(job, vs, o->backward) +
                           (i == n - 1 ? fs_compute_step_s(job, s) : 0);
        double tp_s = 0, ep_s = 0;
        if (tr->tp_mode == TP_STAR) tp_s = o->backward ? tr->tp_bwd_s[vs] : tr->tp_fwd_s[vs];
        if (tr->tp_mode == TP_PRIVATE) {
          size_t k = (size_t)dev * v + o->chunk;
          tp_s = o->backward ? tr->tp_dev_b[k] : tr->tp_dev_f[k];
          tr->represented += o->backward ? tr->tp_dev_nb[k] : tr->tp_dev_nf[k];
        }
        int ep_flows = 0;
        if (all) {
          int64_t lo, per = vs_layers(tr, vs, &lo);
          ep_flows = job->par.ep >= 2 && fs_work_moe_layers(&job->model, lo, per) > 0;
        } else if ((rc = ep_seconds(tr, vs, r, o->backward, &ep_s, err))) {
          return rc;
        }
        op_items *it = &tr->ops[(size_t)dev * n + i];
        /* ZeRO-3: gather the weights first (twice before a backward with
         * recomputation: for the recomputed forward and the backward). */
        it->z3 = it->z3_from = -1;
        if (z3_s > 0) {
          int gathers = o->backward && job->par.recompute ? 2 : 1;
          it->z3 = add_task(tr, dev_host, gathers * z3_s, err);
          if (it->z3 < 0) return it->z3;
          if (prev >= 0 && (rc = fs_sim_add_dep(tr->sim, prev, it->z3, err))) return rc;
          it->z3_from = it->z3;
          prev = it->z3;
        } else if (z3_flows) {
          it->z3_from = prev;
          it->z3 = add_gate(tr, dev_host, prev, err);
          if (it->z3 < 0) return it->z3;
          prev = it->z3;
          need_groups = 1;
        }
        it->compute = add_task(tr, dev_host, compute_s, err);
        if (it->compute < 0) return it->compute;
        if (prev >= 0 && (rc = fs_sim_add_dep(tr->sim, prev, it->compute, err))) return rc;
        if (tr->dp_marks && o->backward && i == tr->dp_last[(size_t)s * v + o->chunk] &&
            (rc = dp_bucket_marks(tr, s, r, o->chunk, vs, prev, dev_host, err)))
          return rc;
        it->end = it->compute;
        it->tp = it->ep = it->tp_from = it->ep_from = -1;
        if (tp_s > 0) {
          it->tp = add_task(tr, dev_host, tp_s, err);
          if (it->tp < 0) return it->tp;
          if ((rc = fs_sim_add_dep(tr->sim, it->end, it->tp, err))) return rc;
          it->tp_from = it->tp;
          it->end = it->tp;
        } else if (tr->tp_mode == TP_FLOWS) {
          fs_work_pass pass = o->backward ? FS_PASS_BWD : FS_PASS_FWD;
          int32_t e = it->end;
          if ((rc = tp_flows(tr, s, r, vs, pass, e, &e, err))) return rc;
          if (o->backward && (rc = tp_flows(tr, s, r, vs, FS_PASS_RECOMPUTE, e, &e, err)))
            return rc;
          if (e != it->end) {
            it->tp_from = it->end;
            it->tp = it->end = e;
          }
        }
        it->cp = it->cp_from = -1;
        if (tr->c > 1 && !tr->opts.free_comm) {
          if (all) {
            int32_t e = it->end;
            if ((rc = cp_ring(tr, tr->sim, s, r, vs, o->backward ? FS_PASS_BWD : FS_PASS_FWD, e,
                              &e, err)))
              return rc;
            if (o->backward &&
                (rc = cp_ring(tr, tr->sim, s, r, vs, FS_PASS_RECOMPUTE, e, &e, err)))
              return rc;
            if (e != it->end) {
              it->cp_from = it->end;
              it->cp = it->end = e;
            }
          } else {
            int64_t L = vs_layers(tr, vs, NULL);
            double c1, c2 = 0;
            if ((rc = cp_seconds(tr, o->backward ? FS_PASS_BWD : FS_PASS_FWD, L, vs, &c1, err)) ||
                (o->backward && (rc = cp_seconds(tr, FS_PASS_RECOMPUTE, L, vs, &c2, err))))
              return rc;
            if (c1 + c2 > 0) {
              it->cp = add_task(tr, dev_host, c1 + c2, err);
              if (it->cp < 0) return it->cp;
              if ((rc = fs_sim_add_dep(tr->sim, it->end, it->cp, err))) return rc;
              it->cp_from = it->cp;
              it->end = it->cp;
            }
          }
        }
        if (ep_s > 0) {
          it->ep = add_task(tr, dev_host, ep_s, err);
          if (it->ep < 0) return it->ep;
          if ((rc = fs_sim_add_dep(tr->sim, it->end, it->ep, err))) return rc;
          it->ep_from = it->ep;
          it->end = it->ep;
        } else if (ep_flows) {
          it->ep_from = it->end;
          it->ep = add_gate(tr, dev_host, it->end, err);
          if (it->ep < 0) return it->ep;
          it->end = it->ep;
          need_groups = 1;
        }
        prev = it->end;
      }
    }
  for (int32_t s = 0; s < p && need_groups; s++)
    for (int32_t i = 0; i < n; i++)
      if ((rc = group_colls(tr, s, i, err))) return rc;
  /* Cross-device dependencies: activations forward, gradients backward. */
  double gather_s = 0;
  if (p > 1 && tr->t > 1 && !job->par.sequence_parallel && !tr->fabric_free &&
      !tr->opts.free_comm &&
      (rc = coll_time(tr, FS_COLL_ALLGATHER, FS_ALGO_AUTO, fs_work_tp_bytes(job), NULL, tr->t,
                      0, &gather_s, err)))
    return rc;
  int32_t *flows = malloc((size_t)tr->t * tr->c * sizeof(int32_t));
  if (!flows) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int32_t r = 0; r < tr->ds && !rc; r++)
    for (int32_t mb = 0; mb < m && !rc; mb++)
      for (int32_t k = 0; k < V && !rc; k++) {
        int32_t s = k % p, c = k / p;
        for (int dir = 0; dir < 2 && !rc; dir++) {
          int32_t k2 = dir ? k - 1 : k + 1;
          if (k2 < 0 || k2 >= V) continue;
          int32_t s2 = k2 % p, c2 = k2 / p;
          const op_items *from = &tr->ops[(size_t)(s * d + r) * n + tr->op_index[idx3(tr, s, dir, mb, c)]];
          const op_items *to = &tr->ops[(size_t)(s2 * d + r) * n + tr->op_index[idx3(tr, s2, dir, mb, c2)]];
          if (tr->fabric_free || tr->opts.free_comm || s == s2) {
            rc = fs_sim_add_dep(tr->sim, from->end, to->compute, err);
            continue;
          }
          if ((rc = pp_sends(tr, s, s2, r, from->end, flows, err))) break;
          /* Without sequence parallelism each TP rank sends 1 / t of the
           * activation and the receivers all-gather it over NVLink before
           * the op (Megatron-LM's scatter/gather, Narayanan et al. 2021,
           * sec. 4.1): a task of that all-gather's time alone (an NCCL
           * all-gather, torch.distributed's, so the tuner's algorithm). */
          int32_t into = to->compute;
          if (gather_s > 0) {
            into = add_task(tr, host(tr, 0, r, s2), gather_s, err);
            if (into < 0 || (rc = fs_sim_add_dep(tr->sim, into, to->compute, err))) {
              rc = into < 0 ? into : rc;
              break;
            }
          }
          for (int32_t j = 0; j < tr->t * tr->c && !rc; j += tr->lane_step)
            rc = fs_sim_add_dep(tr->sim, flows[j], into, err);
          /* (a ZeRO-3 gather may run before the data arrives; ZeRO-3 needs
           * pp = 1, so this never happens today) */
        }
        /* The backward of a micro-batch on a virtual stage follows its forward. */
        if (!rc) {
          const op_items *f = &tr->ops[(size_t)(s * d + r) * n + tr->op_index[idx3(tr, s, 0, mb, c)]];
          const op_items *b = &tr->ops[(size_t)(s * d + r) * n + tr->op_index[idx3(tr, s, 1, mb, c)]];
          rc = fs_sim_add_dep(tr->sim, f->end, b->compute, err);
        }
      }
  free(flows);
  if (rc) return rc;
  /* Data-parallel traffic per ZeRO stage (docs/model-work.md):
   *   0: all-reduce each chunk's gradients once, after every replica's last
   *      backward of the chunk (overlap) or its last op;
   *   1: reduce-scatter them, then all-gather the updated weights;
   *   2, 3: reduce-scatter every micro-batch's gradients after its backward
   *      (sharded gradients cannot accumulate), then (2) all-gather the
   *      weights at the end; 3 gathers weights per op instead (above). */
  if (tr->fabric_free || tr->opts.free_comm) return 0;
  int32_t *after = malloc((size_t)d * sizeof(int32_t));
  if (!after) return fs_err_set(err, FS_ENOMEM, "out of memory");
  static const fs_coll_op AR[] = {FS_COLL_ALLREDUCE}, RS_AG[] = {FS_COLL_REDUCESCATTER,
                                                                  FS_COLL_ALLGATHER};
  int zero = job->par.zero;
  int32_t maxb = dp_max_buckets(tr);
  int32_t *marks = tr->dp_marks ? malloc((size_t)maxb * tr->ds * sizeof(int32_t)) : NULL;
  if (tr->dp_marks && !marks) {
    free(after);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  for (int32_t s = 0; s < p && !rc; s++) {
    double chunk_bytes = dp_chunk_bytes(tr, s);
    if (zero >= 2)
      for (int32_t i = 0; i < n && !rc; i++) {
        const fs_pipe_op *o = &tr->order[(size_t)s * n + i];
        if (!o->backward) continue;
        for (int32_t r = 0; r < tr->ds; r++) after[r] = tr->ops[(size_t)(s * d + r) * n + i].end;
        rc = dp_collectives(tr, s, chunk_bytes, after, NULL, tr->ds, RS_AG, 1, err);
      }
    for (int32_t c = 0; c < v && !rc; c++) {
      for (int32_t r = 0; r < tr->ds; r++) {
        int32_t last = n - 1;
        if (job->par.overlap_dp)
          for (int32_t i = n - 1; i >= 0; i--) {
            const fs_pipe_op *o = &tr->order[(size_t)s * n + i];
            if (o->backward && o->chunk == c) {
              last = i;
              break;
            }
          }
        after[r] = tr->ops[(size_t)(s * d + r) * n + last].end;
      }
      int32_t na = tr->ds;
      if (zero == 0 && marks) {
        int32_t nb = dp_buckets(tr, chunk_bytes);
        for (int32_t b = 0; b + 1 < nb; b++)
          for (int32_t r = 0; r < na; r++)
            marks[(size_t)b * na + r] = tr->dp_marks[((size_t)(s * d + r) * v + c) * maxb + b];
      }
      if (zero == 0) rc = dp_collectives(tr, s, chunk_bytes, after, marks, na, AR, 1, err);
      else if (zero == 1) rc = dp_collectives(tr, s, chunk_bytes, after, NULL, na, RS_AG, 2, err);
      else if (zero == 2)
        rc = dp_collectives(tr, s, chunk_bytes, after, NULL, na, RS_AG + 1, 1, err);
    }
  }
  free(marks);
  free(after);
  return rc;
}

/* The iterations back to back: a device starts iteration k + 1 when it has
 * finished its ops of iteration k and its stage's data-parallel
 * collectives (the optimizer step needs the reduced gradients; its own
 * time is not modelled). The breakdown then describes the last iteration;
 * pipeline and data-parallel records of earlier ones are dropped. */
static int build_iterations(fs_train *tr, fs_err *err) {
  int32_t devs = tr->p * tr->d, n = tr->n_ops;
  for (int32_t dev = 0; dev < devs; dev++) tr->gate[dev] = -1;
  /* (only simulated devices: data-parallel rank below ds) */
  for (int32_t k = 0; k < tr->iterations; k++) {
    int rc = build(tr, err);
    if (rc) return rc;
    if (k + 1 < tr->iterations) {
      for (int32_t dev = 0; dev < devs; dev++) {
        if (dev % tr->d >= tr->ds) continue;
        int32_t g = fs_sim_add_task_s(tr->sim, tr->host_of_gpu[gpu_of(tr, 0, dev % tr->d, dev / tr->d)],
                                      0, 0, err);
        if (g < 0) return g;
        if ((rc = fs_sim_add_dep(tr->sim, tr->ops[(size_t)dev * n + n - 1].end, g, err)))
          return rc;
        for (size_t i = 0; i < tr->n_dp; i++)
          if (tr->dp[i].stage == dev / tr->d &&
              (rc = fs_sim_add_dep(tr->sim, tr->dp[i].done, g, err)))
            return rc;
        tr->gate[dev] = g;
      }
      tr->n_dp = tr->n_pp = 0;
    }
    tr->iter_hi[k] = fs_sim_n_items(tr->sim);
  }
  return 0;
}

/* The routing control a job asks for (routing "optimized", failures). */
static void ctl_opts(const fs_job *job, fs_netctl_opts *co) {
  fs_netctl_opts_init(co);
  co->mode = job->mode;
  co->seed = job->seed;
  co->interval_s = job->reopt_interval_s;
  co->optimizer = job->reopt_optimizer;
  co->reconfig_s = job->reopt_reconfig_s;
  co->failures = job->failures;
  co->n_failures = job->n_failures;
  co->detect_s = job->detect_s;
}

static double wall_since(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

/* shared: build into that simulation (a cluster's), else into a new one. */
static int train_build(const fs_job *job, const fs_train_opts *opts, int fabric_free,
                       fs_sim *shared, int32_t min_shift, int no_rotation, fs_train **out,
                       fs_err *err) {
  fs_train *tr = calloc(1, sizeof(*tr));
  if (!tr) return fs_err_set(err, FS_ENOMEM, "out of memory");
  tr->job = job;
  tr->min_shift = min_shift;
  tr->no_rotation = no_rotation;
  if (opts) tr->opts = *opts;
  tr->fabric_free = fabric_free;
  tr->p = (int32_t)job->par.pp;
  tr->d = (int32_t)job->par.dp;
  tr->t = (int32_t)job->par.tp;
  tr->c = (int32_t)job->par.cp;
  tr->v = (int32_t)job->par.virtual_stages;
  tr->m = (int32_t)fs_work_microbatches(job);
  tr->V = tr->p * tr->v;
  tr->n_ops = 2 * tr->m * tr->v;
  for (int k = 0; k < FS_PAR_N; k++) tr->kinds[k].algo = job->par.algo[k];
  int rc = 0;
  if (!job->topo) {
    rc = fs_err_set(err, FS_EINVAL, "%s: the job has no topology", job->file);
    goto fail;
  }
  size_t gpus = (size_t)fs_job_gpus(job), devs = (size_t)tr->p * tr->d, n = (size_t)tr->n_ops;
  tr->host_of_gpu = fs__malloc(gpus, sizeof(int32_t));
  tr->order = fs__malloc((size_t)tr->p * n, sizeof(fs_pipe_op));
  tr->ops = fs__malloc(devs * n, sizeof(op_items));
  tr->op_index = fs__malloc((size_t)tr->p * 2 * tr->m * tr->v, sizeof(int32_t));
  tr->iterations = tr->opts.iterations > 0 ? tr->opts.iterations : 1;
  tr->gate = fs__malloc(devs, sizeof(int32_t));
  tr->tp_fwd_s = fs__malloc((size_t)tr->V, sizeof(double));
  tr->tp_bwd_s = fs__malloc((size_t)tr->V, sizeof(double));
  tr->iter_hi = fs__malloc((size_t)tr->iterations, sizeof(int32_t));
  if (!tr->host_of_gpu || !tr->order || !tr->ops || !tr->op_index || !tr->gate || !tr->iter_hi ||
      !tr->tp_fwd_s || !tr->tp_bwd_s) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory building the iteration");
    goto fail;
  }
  if ((rc = fs_job_place(job, tr->host_of_gpu, err))) goto fail;
  for (int32_t s = 0; s < tr->p; s++) {
    if ((rc = fs_pipe_order(job->par.schedule, tr->p, tr->m, tr->v, s, tr->order + (size_t)s * n,
                            err)))
      goto fail;
    for (int32_t i = 0; i < tr->n_ops; i++) {
      const fs_pipe_op *o = &tr->order[(size_t)s * n + i];
      tr->op_index[idx3(tr, s, o->backward, o->mb, o->chunk)] = i;
    }
  }
  tr->own_sim = !shared;
  tr->sim = shared;
  struct timespec w0;
  clock_gettime(CLOCK_MONOTONIC, &w0);
  if ((!shared && ((rc = fs_sim_new(job->topo, &tr->sim, err)) ||
                   (rc = fs_sim_set_transport(tr->sim, &job->transport, err)))) ||
      (rc = fs_router_new(job->topo, &tr->router, err)) ||
      (rc = fs_route_cache_new(tr->router, job->mode, job->seed, 0x70, &tr->routes, err)) ||
      (rc = fs_coll_tuner_new2(job->topo, job->mode, job->seed, tr->opts.tune, &tr->tuner, err)) ||
      (tr->lane_step = 1, tr->rails = tr->t, tr->ds = tr->d, tr->orbit = 1,
       rc = tp_setup(tr, err)) ||
      (rc = symm_setup(tr, shared != NULL, err)) ||
      (tr->item_lo = fs_sim_n_items(tr->sim), rc = build_iterations(tr, err)))
    goto fail;
  tr->item_hi = fs_sim_n_items(tr->sim);
  tr->build_wall_s = wall_since(&w0);
  if (!shared && !fabric_free && !tr->opts.free_comm &&
      (job->reopt_interval_s > 0 || job->n_failures > 0)) {
    fs_netctl_opts co;
    ctl_opts(job, &co);
    if ((rc = fs_netctl_new(tr->sim, &co, &tr->ctl, err))) goto fail;
  }
  *out = tr;
  return 0;
fail:
  if (rc == 1 && (tr->rot_refused || tr->shift_refused)) {
    /* A collective is not invariant under a generator: a TP collective
     * lowered as flows under R (the same build without R), or a gradient
     * collective under this shift (try the larger ones: a node-aware ring's
     * snake holds under a shift of two servers, not one; then none). Each
     * try is at most one more build, and there are at most d / ep shift
     * candidates. */
    int rot = tr->rot_refused;
    int32_t next_min = rot ? min_shift : tr->shift_g;
    char note[240];
    snprintf(note, sizeof(note), "%s", tr->symm_note);
    fs_train_free(tr);
    rc = train_build(job, opts, fabric_free, shared, next_min, no_rotation || rot, out, err);
    if (rc) return rc;
    char *said = (*out)->symm_note;
    if (!rot && (*out)->shift_g)
      snprintf(said, sizeof((*out)->symm_note), "smaller %.200s", note);
    else if (rot ? !said[0] : !strstr(said, "replica shift refused"))
      snprintf(said, sizeof((*out)->symm_note), "%s", note);
    return 0;
  }
  fs_train_free(tr);
  return rc;
}

static int train_new(const fs_job *job, const fs_train_opts *opts, int fabric_free,
                     fs_sim *shared, fs_train **out, fs_err *err) {
  return train_build(job, opts, fabric_free, shared, 0, 0, out, err);
}

int fs_train_new(const fs_job *job, const fs_train_opts *opts, fs_train **out, fs_err *err) {
  return train_new(job, opts, 0, NULL, out, err);
}

void fs_train_free(fs_train *tr) {
  if (!tr) return;
  fs_netctl_free(tr->ctl);
  fs_coll_tuner_free(tr->tuner);
  if (tr->own_sim) fs_sim_free(tr->sim); /* before the routes its flows borrow */
  fs_route_cache_free(tr->routes);
  fs_router_free(tr->router);
  for (size_t i = 0; i < tr->n_qc; i++) fs__qcoll_free(tr->qc[i]);
  free(tr->qc);
  free(tr->host_of_gpu);
  free(tr->order);
  free(tr->ops);
  free(tr->op_index);
  free(tr->gate);
  free(tr->iter_hi);
  free(tr->dp);
  free(tr->dp_marks);
  free(tr->dp_last);
  free(tr->pp);
  free(tr->times);
  fs_symm_free(tr->symm);
  free(tr->tp_fwd_s);
  free(tr->tp_bwd_s);
  free(tr->tp_dev_f);
  free(tr->tp_dev_b);
  free(tr->tp_dev_nf);
  free(tr->tp_dev_nb);
  free(tr->sigs);
  free(tr);
}

/* When the device's (last simulated) iteration could start: the end of
 * its previous one, or 0. */
static double dev_start(const fs_train *tr, int32_t dev) {
  return tr->gate[dev] >= 0 ? fs_sim_finish_s(tr->sim, tr->gate[dev]) : 0;
}

/* The device's compute, TP, EP and (since its iteration's start) last-op
 * end in its last simulated iteration, after a run. */
/* How long part `item` of an op took: a task timed alone (from == item)
 * from its start, else from the end of `from` (-1: the device's start t0). */
static double part_s(const fs_train *tr, int32_t item, int32_t from, double t0) {
  if (item < 0) return 0;
  if (from == item) return fs_sim_finish_s(tr->sim, item) - fs_sim_start_s(tr->sim, item);
  return fs_sim_finish_s(tr->sim, item) - (from >= 0 ? fs_sim_finish_s(tr->sim, from) : t0);
}

static void device_profile(const fs_train *tr, int32_t dev, double *compute, double *tp,
                           double *ep, double *z3, double *cp, double *last_end) {
  *compute = *tp = *ep = *z3 = *cp = *last_end = 0;
  double t0 = dev_start(tr, dev);
  for (int32_t i = 0; i < tr->n_ops; i++) {
    const op_items *it = &tr->ops[(size_t)dev * tr->n_ops + i];
    *z3 += part_s(tr, it->z3, it->z3_from, t0);
    *compute += fs_sim_finish_s(tr->sim, it->compute) - fs_sim_start_s(tr->sim, it->compute);
    *tp += part_s(tr, it->tp, it->tp_from, t0);
    *ep += part_s(tr, it->ep, it->ep_from, t0);
    *cp += part_s(tr, it->cp, it->cp_from, t0);
    double e = fs_sim_finish_s(tr->sim, it->end) - t0;
    if (e > *last_end) *last_end = e;
  }
}

/* Each iteration ends with its last item; returns the last iteration's
 * time (steady state when several run back to back) and the first's and
 * the mean in *first, *mean (either may be NULL). */
static double iteration_times(const fs_train *tr, double *first, double *mean) {
  double prev_end = 0, T = 0, sum = 0;
  int32_t lo = tr->item_lo;
  for (int32_t k = 0; k < tr->iterations; k++) {
    double end = prev_end;
    for (int32_t i = lo; i < tr->iter_hi[k]; i++) end = fmax(end, fs_sim_finish_s(tr->sim, i));
    T = end - prev_end;
    sum += T;
    if (k == 0 && first) *first = T;
    prev_end = end;
    lo = tr->iter_hi[k];
  }
  if (mean) *mean = sum / tr->iterations;
  return T;
}

const char *fs_train_comm_name(fs_train_comm c) {
  return c == FS_COMM_ISOLATED ? "isolated" : "all";
}

int fs_train_comm_parse(const char *name, fs_train_comm *out) {
  if (!strcmp(name, "all")) *out = FS_COMM_ALL;
  else if (!strcmp(name, "isolated")) *out = FS_COMM_ISOLATED;
  else return FS_EINVAL;
  return 0;
}

const char *fs_train_kind_name(int k) {
  static const char *const names[FS_TRAIN_KINDS] = {"tp", "sp", "cp", "ep", "pp", "dp"};
  return k >= 0 && k < FS_TRAIN_KINDS ? names[k] : "?";
}

/* Which kinds of traffic the job has and whose contention its simulation
 * modelled: pipeline and data-parallel always (as flows); TP (and SP, its
 * sequence-parallel form) when lowered or on private links; EP and ZeRO-3
 * gathers when lowered (comm all). */
static uint32_t congestion_kinds(const fs_train *tr) {
  const fs_job *job = tr->job;
  uint32_t k = 0;
  if (tr->opts.free_comm) return 0;
  if (tr->tp_mode == TP_FLOWS || tr->tp_mode == TP_PRIVATE)
    k |= 1u << (job->par.sequence_parallel ? FS_TRAIN_SP : FS_TRAIN_TP);
  if (tr->opts.comm == FS_COMM_ALL && job->par.ep >= 2 && job->model.experts > 1)
    k |= 1u << FS_TRAIN_EP;
  if (tr->opts.comm == FS_COMM_ALL && tr->c > 1) k |= 1u << FS_TRAIN_CP;
  if (tr->p > 1) k |= 1u << FS_TRAIN_PP;
  if (tr->d > 1) k |= 1u << FS_TRAIN_DP;
  return k;
}

static int64_t peak_rss_bytes(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (int64_t)ru.ru_maxrss * 1024; /* Linux: KiB */
}

/* The results of one job after its simulation ran. */
static int collect(fs_train *tr, fs_train_result *out, fs_err *err) {
  const fs_job *job = tr->job;
  int rc;
  out->comm = tr->opts.comm;
  out->congestion_aware = congestion_kinds(tr);
  out->tp_private = tr->tp_mode == TP_PRIVATE;
  out->peak_rss_bytes = peak_rss_bytes();
  out->iterations = tr->iterations;
  double T = iteration_times(tr, &out->first_iter_s, &out->mean_iter_s);
  out->iter_s = T;
  out->tokens_per_s = (double)job->train.global_batch * job->model.seq_len / T;
  out->model_tflops_per_gpu = fs_work_model_flops(job) / T / (double)fs_job_gpus(job) / 1e12;
  out->mfu = fs_work_mfu(job, T);
  out->hw_tflops_per_gpu = fs_work_hw_flops(job) / T / (double)fs_job_gpus(job) / 1e12;
  out->hfu = out->hw_tflops_per_gpu / job->hw.gpu_tflops;
  out->counters = fs_sim_get_counters(tr->sim);
  if (tr->ctl) fs_netctl_stats_get(tr->ctl, &out->ctl);
  int64_t flows = 0;
  for (int32_t i = tr->item_lo; i < tr->item_hi; i++)
    flows += fs_sim_item_kind(tr->sim, i) == FS_ITEM_FLOW;
  out->flows = flows;
  /* (the TP shortcut's flows were counted on the simulated devices: each
   * stands for d / ds devices) */
  out->flows_represented = flows * tr->orbit + tr->represented * (tr->d / tr->ds);
  if (tr->symm)
    snprintf(out->symmetry, sizeof(out->symmetry), "%s%s%s (each simulated flow stands for %lld)%s%.150s",
             tr->rails == 1 ? "rail rotation (TP rank 0 for all)" : "",
             tr->rails == 1 && tr->shift_g ? " x " : "",
             tr->shift_g ? "replica shift" : "", (long long)tr->orbit,
             tr->symm_note[0] ? "; " : "", tr->symm_note);
  else
    snprintf(out->symmetry, sizeof(out->symmetry), "%s", tr->symm_note);
  out->tasks = tr->item_hi - tr->item_lo - flows;
  /* The device reported: dp rank 0 of the stage that finishes last. */
  int32_t best = 0;
  double best_end = -1;
  for (int32_t s = 0; s < tr->p; s++) {
    double c, tp, ep, z3, e;
    double cpx;
    device_profile(tr, s * tr->d, &c, &tp, &ep, &z3, &cpx, &e);
    double t0 = dev_start(tr, s * tr->d);
    for (size_t i = 0; i < tr->n_dp; i++)
      if (tr->dp[i].stage == s) e = fmax(e, fs_sim_finish_s(tr->sim, tr->dp[i].done) - t0);
    if (e > best_end + 1e-12) best = s, best_end = e;
  }
  double compute, tp, ep, z3, last_end;
  double cp;
  device_profile(tr, best * tr->d, &compute, &tp, &ep, &z3, &cp, &last_end);
  out->device_stage = best;
  out->compute_s = compute;
  memcpy(out->kind, tr->kinds, sizeof(out->kind));
  out->kind[FS_PAR_TP].exposed_s = tp;
  out->kind[FS_PAR_EP].exposed_s = ep;
  /* Bubble: the same device's idle time with pipeline and data-parallel
   * traffic free (an identical DAG without those flows). */
  fs_train *free_tr = NULL;
  fs_train_opts o = tr->opts;
  o.sim = NULL;
  if ((rc = train_new(job, &o, 1, NULL, &free_tr, err))) return rc;
  if ((rc = fs_sim_run(free_tr->sim, NULL, err))) {
    fs_train_free(free_tr);
    return rc;
  }
  double fc, ftp, fep, fz3, fend;
  double fcp;
  device_profile(free_tr, best * tr->d, &fc, &ftp, &fep, &fz3, &fcp, &fend);
  fs_train_free(free_tr);
  out->bubble_s = fmax(0, fend - fc - ftp - fep - fz3 - fcp);
  /* With routing control: the same job without it (its base routing, no
   * failures, no re-optimisation), so the report can say what it cost or
   * bought. A shallow copy: it borrows the topology. */
  if (tr->ctl) {
    fs_job plain = *job;
    plain.reopt_interval_s = 0;
    plain.failures = NULL;
    plain.n_failures = 0;
    fs_train *btr = NULL;
    if ((rc = train_new(&plain, &o, 0, NULL, &btr, err)) ||
        (rc = fs_sim_run(btr->sim, NULL, err))) {
      fs_train_free(btr);
      return rc;
    }
    out->baseline_iter_s = iteration_times(btr, NULL, NULL);
    fs_train_free(btr);
  }
  /* comm all: the same job with TP, EP and ZeRO-3 timed alone, so the
   * report says what the contention among all the traffic costs. */
  if (tr->own_sim && tr->opts.comm == FS_COMM_ALL && !tr->opts.no_compare && !tr->opts.free_comm) {
    fs_train_opts io = o;
    io.comm = FS_COMM_ISOLATED;
    fs_train *itr = NULL;
    if ((rc = train_new(job, &io, 0, NULL, &itr, err)) ||
        (rc = fs_sim_run(itr->sim, NULL, err))) {
      fs_train_free(itr);
      return rc;
    }
    out->isolated_iter_s = iteration_times(itr, NULL, NULL);
    fs_train_free(itr);
  }
  double idle = fmax(0, last_end - compute - tp - ep - z3 - cp);
  out->kind[FS_PAR_CP].exposed_s = cp;
  out->kind[FS_PAR_CP].busy_s = cp;
  out->kind[FS_PAR_PP].exposed_s = fmax(0, idle - out->bubble_s);
  double dp_end = last_end, t0 = dev_start(tr, best * tr->d);
  for (size_t i = 0; i < tr->n_dp; i++) {
    const dp_coll *c = &tr->dp[i];
    double st = fs_sim_start_s(tr->sim, c->first_item), fin = fs_sim_finish_s(tr->sim, c->done);
    if (c->stage == best) dp_end = fmax(dp_end, fin - t0);
    if (c->stage == best && c->tp_rank == 0) {
      out->kind[FS_PAR_DP].colls++;
      out->kind[FS_PAR_DP].bytes += c->bytes;
      out->kind[FS_PAR_DP].busy_s += fin - st;
      int32_t me = host(tr, 0, 0, best);
      for (int32_t it = c->first_item; it < c->done; it++) {
        const int32_t *links;
        const double *w;
        int32_t nl;
        if (fs_sim_item_kind(tr->sim, it) != FS_ITEM_FLOW) continue;
        fs_sim_flow_route(tr->sim, it, &links, &w, &nl);
        if (nl && job->topo->links[links[0]].from == me)
          out->kind[FS_PAR_DP].wire_bytes += fs_sim_flow_bytes(tr->sim, it);
      }
    }
  }
  out->kind[FS_PAR_DP].exposed_s = fmax(0, dp_end - last_end) + z3;
  /* Pipeline sends of the device's TP rank 0. */
  for (size_t i = 0; i < tr->n_pp; i++) {
    const pp_flow *f = &tr->pp[i];
    if (f->stage != best || f->tp_rank != 0) continue;
    out->kind[FS_PAR_PP].colls++;
    out->kind[FS_PAR_PP].bytes += fs_work_pp_bytes(job);
    out->kind[FS_PAR_PP].wire_bytes += fs_work_pp_bytes(job);
    out->kind[FS_PAR_PP].busy_s += fs_sim_finish_s(tr->sim, f->item) - fs_sim_start_s(tr->sim, f->item);
  }
  /* TP/EP collective counts of one op set of the device. */
  int64_t stage_layers = 0;
  for (int32_t c = 0; c < tr->v; c++) stage_layers += vs_layers(tr, c * tr->p + best, NULL);
  out->kind[FS_PAR_TP].colls =
      tr->t > 1 ? (int64_t)tr->m * stage_layers *
                      (fs_work_tp_colls_per_layer(job, FS_PASS_FWD) +
                       fs_work_tp_colls_per_layer(job, FS_PASS_BWD) +
                       fs_work_tp_colls_per_layer(job, FS_PASS_RECOMPUTE))
                : 0;
  out->kind[FS_PAR_TP].bytes = out->kind[FS_PAR_TP].colls * fs_work_tp_bytes(job);
  /* EP: dispatch + combine per MoE layer of the op's chunk, per pass. */
  for (int32_t i = 0; i < tr->n_ops; i++) {
    const fs_pipe_op *op = &tr->order[(size_t)best * tr->n_ops + i];
    if (tr->ops[(size_t)(best * tr->d) * tr->n_ops + i].ep < 0) continue;
    int64_t lo, per = vs_layers(tr, op->chunk * tr->p + best, &lo);
    int64_t moe = fs_work_moe_layers(&job->model, lo, per);
    int passes = op->backward ? (job->par.recompute ? 2 : 1) : 1;
    out->kind[FS_PAR_EP].colls += moe * 2 * passes;
  }
  out->kind[FS_PAR_EP].bytes = out->kind[FS_PAR_EP].colls * fs_work_ep_bytes(job);
  /* CP: ring steps per layer and pass, each a K/V block (x2 backward). */
  if (tr->c > 1) {
    static const fs_work_pass passes[] = {FS_PASS_FWD, FS_PASS_BWD, FS_PASS_RECOMPUTE};
    for (int k = 0; k < 3; k++) {
      int64_t n = (int64_t)tr->m * stage_layers * fs_work_cp_steps_per_layer(job, passes[k]);
      out->kind[FS_PAR_CP].colls += n;
      out->kind[FS_PAR_CP].bytes += (double)n * fs_work_cp_step_bytes(job, passes[k]);
    }
    out->kind[FS_PAR_CP].wire_bytes = out->kind[FS_PAR_CP].bytes;
  }
  out->kind[FS_PAR_TP].busy_s = tp;
  out->kind[FS_PAR_EP].busy_s = ep;
  return 0;
}

int fs_train_run(fs_train *tr, fs_train_result *out, fs_err *err) {
  memset(out, 0, sizeof(*out));
  if (!tr->own_sim)
    return fs_err_set(err, FS_EINVAL, "%s: part of a cluster: run the cluster", tr->job->file);
  struct timespec w0;
  clock_gettime(CLOCK_MONOTONIC, &w0);
  int rc = fs_sim_run(tr->sim, tr->opts.sim, err);
  double run_s = wall_since(&w0);
  if (rc) return rc;
  rc = collect(tr, out, err);
  out->wall_s = tr->build_wall_s + run_s;
  return rc;
}

/* ---- several jobs on one cluster ---- */
struct fs_cluster {
  fs_job **jobs;
  int32_t n;
  fs_train_opts opts;
  fs_sim *sim;
  fs_train **trs;
  fs_netctl *ctl;
};

/* Builds the jobs into one simulation; with_ctl attaches the first job's
 * routing control. */
static int cluster_build(fs_cluster *c, int with_ctl, fs_err *err) {
  const fs_job *j0 = c->jobs[0];
  int rc = fs_sim_new(j0->topo, &c->sim, err);
  if (!rc) rc = fs_sim_set_transport(c->sim, &j0->transport, err);
  for (int32_t k = 0; k < c->n && !rc; k++)
    rc = train_new(c->jobs[k], &c->opts, 0, c->sim, &c->trs[k], err);
  if (!rc && with_ctl && !c->opts.free_comm && (j0->reopt_interval_s > 0 || j0->n_failures > 0)) {
    fs_netctl_opts co;
    ctl_opts(j0, &co);
    rc = fs_netctl_new(c->sim, &co, &c->ctl, err);
  }
  return rc;
}

static void cluster_clear(fs_cluster *c) {
  fs_netctl_free(c->ctl);
  c->ctl = NULL;
  for (int32_t k = 0; k < c->n; k++) {
    fs_train_free(c->trs[k]);
    c->trs[k] = NULL;
  }
  fs_sim_free(c->sim);
  c->sim = NULL;
}

static int same_routing(const fs_job *a, const fs_job *b) {
  if (a->mode != b->mode || a->seed != b->seed || a->reopt_interval_s != b->reopt_interval_s ||
      a->reopt_reconfig_s != b->reopt_reconfig_s || a->detect_s != b->detect_s ||
      (a->reopt_interval_s > 0 && a->reopt_optimizer != b->reopt_optimizer) ||
      a->n_failures != b->n_failures || memcmp(&a->transport, &b->transport, sizeof(a->transport)))
    return 0;
  for (int32_t i = 0; i < a->n_failures; i++)
    if (a->failures[i].link != b->failures[i].link || a->failures[i].at_s != b->failures[i].at_s)
      return 0;
  return 1;
}

int fs_cluster_new(fs_job *const *jobs, int32_t n, const fs_train_opts *opts, fs_cluster **out,
                   fs_err *err) {
  if (n < 1) return fs_err_set(err, FS_EINVAL, "a cluster needs at least one job");
  const fs_job *j0 = jobs[0];
  int64_t G = j0->hw.gpus_per_node, next = 0;
  for (int32_t k = 0; k < n; k++) {
    const fs_job *j = jobs[k];
    if (!j->topo || strcmp(j->topo->spec, j0->topo->spec) != 0)
      return fs_err_set(err, FS_EINVAL,
                        "%s: $.topology: jobs sharing a cluster need the same topology, and "
                        "this one differs from %s's (%s)",
                        j->file, j0->file, j0->topo->spec);
    if (j->hw.gpus_per_node != G)
      return fs_err_set(err, FS_EINVAL,
                        "%s: $.hardware.gpus_per_node: must be %lld as in %s (one cluster, one "
                        "server size), got %lld",
                        j->file, (long long)G, j0->file, (long long)j->hw.gpus_per_node);
    if (j->hw.nvlink_eff != j0->hw.nvlink_eff)
      return fs_err_set(err, FS_EINVAL,
                        "%s: $.hardware.nvlink_efficiency: must be %g as in %s (one cluster, "
                        "one NVLink), got %g",
                        j->file, j0->hw.nvlink_eff, j0->file, j->hw.nvlink_eff);
    if (!same_routing(j, j0))
      return fs_err_set(err, FS_EINVAL,
                        "%s: $.routing: the cluster's routing, failures and transport are %s's; "
                        "give every job the same \"routing\", \"failures\" and \"transport\"",
                        j->file, j0->file);
  }
  /* Whole servers, one job after another. */
  for (int32_t k = 0; k < n; k++) {
    jobs[k]->gpu_offset = next;
    next += (fs_job_gpus(jobs[k]) + G - 1) / G * G;
    if (next > j0->topo->n_hosts)
      return fs_err_set(err, FS_EINVAL,
                        "%s: the jobs up to this one need %lld GPUs (in whole servers of %lld), "
                        "more than the topology's %d hosts",
                        jobs[k]->file, (long long)next, (long long)G, j0->topo->n_hosts);
    int rc = fs_job_place(jobs[k], NULL, err);
    if (rc) return rc;
  }
  fs_cluster *c = calloc(1, sizeof(*c));
  fs_train **trs = calloc((size_t)n, sizeof(*trs));
  if (!c || !trs) {
    free(c);
    free(trs);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  c->jobs = (fs_job **)jobs;
  c->n = n;
  c->trs = trs;
  if (opts) c->opts = *opts;
  int rc = cluster_build(c, 1, err);
  if (rc) {
    fs_cluster_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

int fs_cluster_run(fs_cluster *c, fs_train_result *results, fs_err *err) {
  for (int32_t k = 0; k < c->n; k++) memset(&results[k], 0, sizeof(results[k]));
  int rc = fs_sim_run(c->sim, c->opts.sim, err);
  for (int32_t k = 0; k < c->n && !rc; k++) {
    rc = collect(c->trs[k], &results[k], err);
    if (!rc && c->ctl) fs_netctl_stats_get(c->ctl, &results[k].ctl);
  }
  if (rc || !c->ctl) return rc;
  /* The same cluster without routing control, for the comparison. */
  fs_cluster b = {c->jobs, c->n, c->opts, NULL, NULL, NULL};
  b.opts.sim = NULL;
  b.trs = calloc((size_t)c->n, sizeof(*b.trs));
  if (!b.trs) return fs_err_set(err, FS_ENOMEM, "out of memory");
  if (!(rc = cluster_build(&b, 0, err)) && !(rc = fs_sim_run(b.sim, NULL, err)))
    for (int32_t k = 0; k < c->n; k++) results[k].baseline_iter_s = iteration_times(b.trs[k], NULL, NULL);
  cluster_clear(&b);
  free(b.trs);
  return rc;
}

const fs_train *fs_cluster_job(const fs_cluster *c, int32_t k) { return c->trs[k]; }

void fs_cluster_free(fs_cluster *c) {
  if (!c) return;
  cluster_clear(c);
  free(c->trs);
  free(c);
}

const fs_sim *fs_train_sim(const fs_train *tr) { return tr->sim; }

/* The segments the trace draws, as data (train.h). */
int fs_train_segments(const fs_train *tr, fs_train_segment **out, int64_t *n) {
  size_t cap = (size_t)tr->p * (size_t)tr->n_ops * 3 + tr->n_pp + tr->n_dp + 1, k = 0;
  fs_train_segment *v = malloc(cap * sizeof(*v));
  *out = NULL;
  *n = 0;
  if (!v) return FS_ENOMEM;
  for (int32_t s = 0; s < tr->p; s++)
    for (int32_t i = 0; i < tr->n_ops; i++) {
      const fs_pipe_op *o = &tr->order[(size_t)s * tr->n_ops + i];
      const op_items *it = &tr->ops[(size_t)(s * tr->d) * tr->n_ops + i];
      double st = fs_sim_start_s(tr->sim, it->compute);
      v[k++] = (fs_train_segment){s, o->backward ? FS_TRAIN_SEG_BWD : FS_TRAIN_SEG_FWD,
                                  o->mb, o->chunk, st, fs_sim_finish_s(tr->sim, it->compute) - st,
                                  0, -1};
      if (it->tp >= 0) {
        double len = part_s(tr, it->tp, it->tp_from, 0);
        v[k++] = (fs_train_segment){s, FS_TRAIN_SEG_TP, o->mb, o->chunk,
                                    fs_sim_finish_s(tr->sim, it->tp) - len, len, 0, -1};
      }
      if (it->ep >= 0) {
        double len = part_s(tr, it->ep, it->ep_from, 0);
        v[k++] = (fs_train_segment){s, FS_TRAIN_SEG_EP, o->mb, o->chunk,
                                    fs_sim_finish_s(tr->sim, it->ep) - len, len, 0, -1};
      }
    }
  for (size_t i = 0; i < tr->n_pp; i++) {
    const pp_flow *pf = &tr->pp[i];
    if (pf->tp_rank != 0) continue;
    double st = fs_sim_start_s(tr->sim, pf->item);
    v[k++] = (fs_train_segment){pf->stage, FS_TRAIN_SEG_PP, -1, -1, st,
                                fs_sim_finish_s(tr->sim, pf->item) - st,
                                fs_sim_flow_bytes(tr->sim, pf->item), (int64_t)i};
  }
  for (size_t i = 0; i < tr->n_dp; i++) {
    const dp_coll *c = &tr->dp[i];
    if (c->tp_rank != 0) continue;
    double st = fs_sim_start_s(tr->sim, c->first_item);
    v[k++] = (fs_train_segment){c->stage, FS_TRAIN_SEG_DP, -1, -1, st,
                                fs_sim_finish_s(tr->sim, c->done) - st, c->bytes, (int64_t)i};
  }
  *out = v;
  *n = (int64_t)k;
  return 0;
}

int32_t fs_train_stages(const fs_train *tr) { return tr->p; }
