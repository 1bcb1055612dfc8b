/* Automatic algorithm choice, two policies (docs/model-coll-tune.md).
 *
 * FS_TUNE_NCCL follows NCCL's selection (src/graph/tuning.cc of NCCL
 * 2.20.3): for each (algorithm, protocol) NCCL runs for the op, a latency
 * (base + per-step hardware latency x steps) and a bandwidth (the group's
 * bottleneck link x protocol and algorithm factors), time = latency +
 * bytes / bandwidth, least time wins. The constants below are NCCL's, each
 * table named after NCCL's; the code is ours. The inputs come from the
 * topology: ranks, servers (gpus_per_node consecutive GPUs on one scale-up
 * switch), the slowest rank's NVLink and NIC path. Cost: O(p log p) for
 * the shape (cached per group by the tuner), O(1) per size.
 *
 * FS_TUNE_SIM simulates every algorithm that implements the op on the real
 * topology and keeps the fastest (fs_coll_run with AUTO), caching the
 * answer per (op, size bucket, group, params): contention on the actual
 * fabric counts, at the price of simulating p^2 flows for `direct`. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- names ---- */
const char *fs_coll_tune_policy_name(fs_coll_tune_policy policy) {
  switch (policy) {
    case FS_TUNE_NCCL: return "nccl";
    case FS_TUNE_SIM: return "sim";
    case FS_TUNE_N: break;
  }
  return "?";
}

int fs_coll_tune_policy_parse(const char *name, fs_coll_tune_policy *out) {
  for (int i = 0; i < FS_TUNE_N; i++)
    if (strcmp(name, fs_coll_tune_policy_name((fs_coll_tune_policy)i)) == 0) {
      *out = (fs_coll_tune_policy)i;
      return 0;
    }
  return FS_EINVAL;
}

const char *fs_coll_proto_name(fs_coll_proto proto) {
  switch (proto) {
#define XX(name, str, desc) \
  case FS_PROTO_##name: return str;
    FS_COLL_PROTO_MAP(XX)
#undef XX
    case FS_PROTO_N: break;
  }
  return "?";
}

int fs_coll_proto_parse(const char *name, fs_coll_proto *out) {
  for (int i = 0; i < FS_PROTO_N; i++)
    if (strcmp(name, fs_coll_proto_name((fs_coll_proto)i)) == 0) {
      *out = (fs_coll_proto)i;
      return 0;
    }
  return FS_EINVAL;
}

/* ---- NCCL's constants (NCCL 2.20.3, src/graph/tuning.cc) ----
 * Indexed [algorithm][protocol] with NCCL's orders: tree 0, ring 1; LL 0,
 * LL128 1, Simple 2 (the same order as fs_coll_proto). Latencies in us,
 * bandwidths in GB/s (1e9 bytes/s), as NCCL writes them. */
enum { NT = 0, NR = 1 };              /* NCCL_ALGO_TREE, NCCL_ALGO_RING */
enum { HW_NVLINK, HW_PCI, HW_NET };   /* NCCL_HW_* */

static const double base_lat_us[2][3] = {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}}; /* baseLat */
static const double hw_lat_us[3][2][3] = {                                  /* hwLat */
    {{.6, 1.25, 28}, {.6, 1.9, 3.4}},    /* NVLink */
    {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}},   /* PCI */
    {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}}}; /* network */
/* llMaxBws: one node of Hopper GPUs; 2 nodes, > 2 nodes of Intel CPUs. */
static const double ll_max_bw_gBps[3] = {87.7, 39.0, 20.4};
/* getNetOverhead(): x86 Intel (and NCCL's default), tripled for Simple. */
static const double net_overhead_us = 1.0;
/* treeCorrectionFactor, by log2(bytes / 64) for 64 B .. 256 MiB. */
static const double tree_correction[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
/* Ring Simple multi-node all-reduce "plateau effect": latency x 1.4 for
 * compute capability >= 8.0, once bytes / (channels x ranks) >= 64. */
static const double ring_plateau = 1.4;
/* NCCL_P2P_LL_THRESHOLD (src/enqueue.cc): point-to-point messages up to
 * this size use LL, larger ones Simple. */
static const double p2p_ll_threshold_bytes = 16384;
/* Wire efficiency of a protocol for fabricsim's point-to-point estimate:
 * LL carries 4 data bytes per 8-byte line; Simple the full wire. */
static const double p2p_eff[3] = {0.5, 120.0 / 128.0, 1.0};

double fs_coll_nccl_step_latency_s(fs_coll_algo algo, fs_coll_proto proto) {
  int p = proto >= FS_PROTO_LL && proto <= FS_PROTO_SIMPLE ? (int)proto : (int)FS_PROTO_SIMPLE;
  return hw_lat_us[HW_NET][algo == FS_ALGO_TREE ? NT : NR][p] * 1e-6;
}

static int log2i(double x) { /* NCCL's log2i: floor(log2), 0 for x < 2 */
  int l = 0;
  while (x >= 2) x /= 2, l++;
  return l;
}

/* ---- the shape of a group ---- */
static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* A rank's NVLink (0 if none) and way out of its server in bit/s: the
 * fastest link that does not go to the scale-up switch; through a NIC, the
 * slower of the GPU-NIC link and the NIC's fastest link onwards. */
static void rank_links(const fs_topo *t, int32_t h, double *nvl_bps, double *out_bps) {
  *nvl_bps = 0;
  *out_bps = 0;
  for (int32_t i = t->out_start[h]; i < t->out_start[h + 1]; i++) {
    const fs_link *l = &t->links[t->out_links[i]];
    fs_node_kind k = t->nodes[l->to].kind;
    double c = l->capacity_bps;
    if (k == FS_NODE_SCALEUP) {
      *nvl_bps = fmax(*nvl_bps, c);
      continue;
    }
    if (k == FS_NODE_NIC) {
      double onward = 0;
      for (int32_t j = t->out_start[l->to]; j < t->out_start[l->to + 1]; j++) {
        const fs_link *m = &t->links[t->out_links[j]];
        if (m->to != h) onward = fmax(onward, m->capacity_bps);
      }
      c = fmin(c, onward);
    }
    *out_bps = fmax(*out_bps, c);
  }
}

int fs_coll_nccl_shape_of(const fs_topo *t, const fs_coll_group *g, fs_coll_nccl_shape *out,
                          fs_err *err) {
  if (g->p < 1) return fs_err_set(err, FS_EINVAL, "ranks must be >= 1, got %d", g->p);
  int32_t G = t->gpus_per_node > 1 ? t->gpus_per_node : 1;
  int32_t *srv = fs__malloc((size_t)g->p, sizeof(int32_t));
  if (!srv) return fs_err_set(err, FS_ENOMEM, "out of memory");
  double intra = INFINITY, inter = INFINITY;
  int nvlink = G > 1;
  for (int32_t r = 0; r < g->p; r++) {
    int32_t h = g->hosts[r];
    if (h < 0 || h >= t->n_hosts) {
      free(srv);
      return fs_err_set(err, FS_EINVAL, "rank %d maps to host %d, outside [0, %d)", r, h,
                        t->n_hosts);
    }
    double nvl, net;
    rank_links(t, h, &nvl, &net);
    if (!(net > 0) && !(nvl > 0)) {
      free(srv);
      return fs_err_set(err, FS_EINVAL, "rank %d: host %d has no links", r, h);
    }
    if (nvl > 0) intra = fmin(intra, nvl);
    else nvlink = 0;
    inter = fmin(inter, net > 0 ? net : nvl);
    srv[r] = h / G;
  }
  qsort(srv, (size_t)g->p, sizeof(int32_t), cmp_i32);
  int32_t nodes = 1;
  for (int32_t r = 1; r < g->p; r++) nodes += srv[r] != srv[r - 1];
  free(srv);
  out->ranks = g->p;
  out->nodes = nodes;
  out->nvlink = nvlink;
  out->intra_gbps = nvlink ? intra / 1e9 : 0;
  out->inter_gbps = inter / 1e9;
  return 0;
}

/* ---- the model ---- */
/* NCCL's algorithm index for ours, -1 if NCCL's model has none for op. */
static int nccl_algo(fs_coll_algo a, fs_coll_op op) {
  if (a == FS_ALGO_RING && op != FS_COLL_ALLTOALL && op != FS_COLL_SENDRECV) return NR;
  if (a == FS_ALGO_TREE && op == FS_COLL_ALLREDUCE) return NT;
  return -1;
}

/* Point-to-point (all-to-all, send/recv): NCCL posts every peer's send and
 * receive in one group and has no cost model for it; this estimate is
 * fabricsim's, built from NCCL's ring constants (docs). */
static double p2p_time_s(const fs_coll_nccl_shape *s, const fs_coll_params *prm,
                         fs_coll_proto proto) {
  int32_t p = s->ranks;
  double intra_gBps = (s->nvlink ? s->intra_gbps : s->inter_gbps) / 8;
  double inter_gBps = s->inter_gbps / 8;
  double intra_b, inter_b;
  if (prm->op == FS_COLL_ALLTOALL) {
    double ppn = (double)p / s->nodes, m = prm->bytes / p;
    intra_b = (ppn - 1) * m;
    inter_b = (p - ppn) * m;
  } else { /* send/recv: one message, inside a server only if the group is */
    intra_b = s->nodes == 1 ? prm->bytes : 0;
    inter_b = s->nodes == 1 ? 0 : prm->bytes;
  }
  int hw = s->nodes == 1 ? (s->nvlink ? HW_NVLINK : HW_PCI) : HW_NET;
  double lat_us = base_lat_us[NR][proto] + hw_lat_us[hw][NR][proto];
  double bw_us = fmax(intra_b / (1000 * intra_gBps), inter_b / (1000 * inter_gBps));
  return (lat_us + bw_us / p2p_eff[proto]) * 1e-6;
}

double fs_coll_nccl_time(const fs_coll_nccl_shape *s, const fs_coll_params *prm,
                         fs_coll_algo algo, fs_coll_proto proto) {
  if ((unsigned)proto >= FS_PROTO_N || (unsigned)prm->op >= FS_COLL_N_OPS) return NAN;
  if (s->ranks < 1 || s->nodes < 1 || s->nodes > s->ranks || !(s->inter_gbps > 0) ||
      (s->nvlink && !(s->intra_gbps > 0)) || !(prm->bytes > 0))
    return NAN;
  fs_coll_op op = prm->op;
  if (op == FS_COLL_ALLTOALL || op == FS_COLL_SENDRECV) {
    if (algo != FS_ALGO_DIRECT) return NAN;
    return s->ranks == 1 ? 0 : p2p_time_s(s, prm, proto);
  }
  int a = nccl_algo(algo, op);
  if (a < 0) return NAN;
  if (s->ranks == 1) return 0;
  int32_t nr = s->ranks, nn = s->nodes, pr = (int32_t)proto;
  double ppn = (double)nr / nn;
  int reduce_like = op == FS_COLL_ALLREDUCE || op == FS_COLL_REDUCE;
  int32_t nsteps = op == FS_COLL_ALLREDUCE ? 2 * (nr - 1)
                   : op == FS_COLL_REDUCESCATTER || op == FS_COLL_ALLGATHER ? nr - 1 : nr;
  int32_t ninter = op == FS_COLL_ALLREDUCE ? (nn > 1 ? 2 * nn : 0)
                   : op == FS_COLL_REDUCESCATTER || op == FS_COLL_ALLGATHER ? nn - 1 : nn;

  /* Bandwidth: the bottleneck per rank (NVLink on one server, else the
   * slower of NVLink and the NIC path) stands for NCCL's nChannels x
   * per-channel graph bandwidth. */
  double bus = (!s->nvlink ? s->inter_gbps
                : nn == 1   ? s->intra_gbps
                            : fmin(s->intra_gbps, s->inter_gbps)) / 8;
  double ll_max = ll_max_bw_gBps[nn <= 2 ? nn - 1 : 2];
  if (a == NR && pr == FS_PROTO_LL) bus = fmin(ll_max, bus * (nn > 1 || reduce_like ? 0.25 : 1.0 / 3));
  if (a == NR && pr == FS_PROTO_LL128) bus *= ppn < 2 ? 0.7 : 0.92;
  if (a == NT) bus *= 0.92;
  if (a == NT && pr == FS_PROTO_LL) bus = fmin(bus / 3.8, ll_max);
  if (a == NT && pr == FS_PROTO_LL128) bus *= nn == 1 ? 7.0 / 9 : 120.0 / 128;
  double bw = bus * (a == NR ? (double)nr / nsteps : 0.5); /* bus -> algorithm bandwidth */

  /* Latency. */
  int intra_hw = s->nvlink ? HW_NVLINK : HW_PCI;
  double lat = base_lat_us[a][pr];
  double intra_lat = hw_lat_us[intra_hw][a][pr];
  double inter_lat = hw_lat_us[HW_NET][a][pr]; /* + the net's own latency: 0 (IB) */
  if (a == NR) {
    if (op == FS_COLL_BROADCAST || op == FS_COLL_REDUCE) {
      lat += hw_lat_us[nn == 1 ? intra_hw : HW_NET][a][pr]; /* sameChannels */
    } else {
      if (nn > 1) intra_lat = fmax(intra_lat, net_overhead_us * (pr == FS_PROTO_SIMPLE ? 3 : 1));
      /* NCCL counts 2 nodes inter steps for all-reduce, which exceeds
       * nsteps at one rank per node: clamp the intra steps at 0. */
      int32_t nintra = nsteps - ninter > 0 ? nsteps - ninter : 0;
      lat += nintra * intra_lat + ninter * inter_lat;
    }
  } else {
    lat += 2 * ((nr / nn - 1) * intra_lat + log2i(nn) * inter_lat);
  }

  /* ncclTopoGetAlgoTime's corrections. */
  int log_size = log2i(floor(prm->bytes / 64));
  if (a == NT && log_size < 23) bw *= tree_correction[pr][log_size];
  int32_t channels = prm->channels > 0 ? prm->channels : 1;
  if (a == NR && pr == FS_PROTO_SIMPLE && nn > 1 && op == FS_COLL_ALLREDUCE &&
      prm->bytes / ((double)channels * nr) >= 64)
    lat *= ring_plateau;
  return (lat + prm->bytes / (1000 * bw)) * 1e-6;
}

/* The least-time (algorithm, protocol) for prm on shape s, among those that
 * fabricsim can lower for this group. */
static int nccl_pick(const fs_coll_nccl_shape *s, const fs_coll_params *prm, fs_coll_algo *algo,
                     fs_coll_proto *proto, double *est_s, fs_err *err) {
  static const fs_coll_algo cand[] = {FS_ALGO_TREE, FS_ALGO_RING, FS_ALGO_DIRECT};
  fs_coll_params q = *prm;
  if (prm->op == FS_COLL_ALLTOALL || prm->op == FS_COLL_SENDRECV) {
    /* NCCL's point-to-point protocol is a threshold, not a cost choice. */
    double msg = prm->op == FS_COLL_ALLTOALL ? prm->bytes / s->ranks : prm->bytes;
    fs_coll_proto pr = msg <= p2p_ll_threshold_bytes ? FS_PROTO_LL : FS_PROTO_SIMPLE;
    q.algo = FS_ALGO_DIRECT;
    int rc = fs_coll_params_check(&q, s->ranks, err);
    if (rc) return rc;
    *algo = FS_ALGO_DIRECT;
    if (proto) *proto = pr;
    if (est_s) *est_s = fs_coll_nccl_time(s, prm, FS_ALGO_DIRECT, pr);
    return 0;
  }
  if (s->ranks == 1) { /* NCCL: one rank costs nothing, as ring/Simple */
    q.algo = FS_ALGO_RING;
    int rc = fs_coll_params_check(&q, 1, err);
    if (rc) return rc;
    *algo = FS_ALGO_RING;
    if (proto) *proto = FS_PROTO_SIMPLE;
    if (est_s) *est_s = 0;
    return 0;
  }
  double best = INFINITY;
  fs_coll_algo ba = FS_ALGO_AUTO;
  fs_coll_proto bp = FS_PROTO_SIMPLE;
  for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
    q.algo = cand[i];
    fs_err ignore = {0, ""};
    if (!fs_coll_supports(q.algo, q.op) || fs_coll_params_check(&q, s->ranks, &ignore)) continue;
    for (int pr = 0; pr < FS_PROTO_N; pr++) {
      double t = fs_coll_nccl_time(s, prm, cand[i], (fs_coll_proto)pr);
      if (t < best) { /* strict: ties keep NCCL's order */
        best = t;
        ba = cand[i];
        bp = (fs_coll_proto)pr;
      }
    }
  }
  if (ba == FS_ALGO_AUTO)
    return fs_err_set(err, FS_EINVAL, "NCCL's model has no algorithm for %s on %d ranks",
                      fs_coll_op_name(prm->op), s->ranks);
  *algo = ba;
  if (proto) *proto = bp;
  if (est_s) *est_s = best;
  return 0;
}

int fs_coll_nccl_choose(const fs_topo *t, const fs_coll_params *prm, const fs_coll_group *g,
                        fs_coll_algo *algo, fs_coll_proto *proto, double *est_s,
                        fs_err *err) {
  fs_coll_params q = *prm;
  q.algo = FS_ALGO_AUTO;
  fs_coll_nccl_shape s;
  int rc = fs_coll_params_check(&q, g->p, err);
  if (!rc) rc = fs_coll_nccl_shape_of(t, g, &s, err);
  if (!rc) rc = nccl_pick(&s, &q, algo, proto, est_s, err);
  return rc;
}

/* ---- the tuner ---- */
struct fs_coll_tuner {
  const fs_topo *t;
  fs_route_mode mode;
  uint64_t seed;
  fs_coll_tune_policy policy;
  fs__u64map cache;           /* SIM: tune_key -> algorithm; NCCL: group_key -> shape */
  fs_coll_nccl_shape *shapes; /* NCCL: the groups' shapes */
  size_t n_shapes, shapes_cap;
};

int fs_coll_tuner_new2(const fs_topo *t, fs_route_mode mode, uint64_t seed,
                       fs_coll_tune_policy policy, fs_coll_tuner **out, fs_err *err) {
  if ((unsigned)policy >= FS_TUNE_N)
    return fs_err_set(err, FS_EINVAL, "unknown tuning policy %d", (int)policy);
  fs_coll_tuner *tu = calloc(1, sizeof(*tu));
  if (!tu) return fs_err_set(err, FS_ENOMEM, "out of memory");
  tu->t = t;
  tu->mode = mode;
  tu->seed = seed;
  tu->policy = policy;
  fs__u64map_init(&tu->cache);
  *out = tu;
  return 0;
}

int fs_coll_tuner_new(const fs_topo *t, fs_route_mode mode, uint64_t seed,
                      fs_coll_tuner **out, fs_err *err) {
  return fs_coll_tuner_new2(t, mode, seed, FS_TUNE_NCCL, out, err);
}

void fs_coll_tuner_free(fs_coll_tuner *tu) {
  if (!tu) return;
  fs__u64map_free(&tu->cache);
  free(tu->shapes);
  free(tu);
}

fs_coll_tune_policy fs_coll_tuner_policy(const fs_coll_tuner *tu) { return tu->policy; }

static uint64_t group_key(const fs_coll_group *g) {
  uint64_t h = fs__mix64(0x6e63636cu ^ (uint64_t)g->p);
  for (int32_t r = 0; r < g->p; r++) h = fs__mix64(h ^ (uint64_t)(uint32_t)g->hosts[r]);
  return h;
}

/* The key covers everything the simulated choice depends on besides the
 * topology. */
static uint64_t tune_key(const fs_coll_params *prm, const fs_coll_group *g) {
  int bucket = (int)floor(log2(prm->bytes));
  uint64_t h = fs__mix64((uint64_t)prm->op * 1000003u + (uint64_t)(bucket + 64));
  h = fs__mix64(h ^ (uint64_t)g->p);
  for (int32_t r = 0; r < g->p; r++) h = fs__mix64(h ^ (uint64_t)(uint32_t)g->hosts[r]);
  h = fs__mix64(h ^ ((uint64_t)prm->chunks << 20) ^ ((uint64_t)prm->channels << 40) ^
                (uint64_t)prm->root ^ ((uint64_t)prm->node_size << 50));
  return fs__mix64(h ^ (uint64_t)llround(prm->gamma_s_per_byte * 1e15));
}

static int choose_sim(fs_coll_tuner *tu, const fs_coll_params *prm, const fs_coll_group *g,
                      fs_coll_algo *out, int *cached, fs_err *err) {
  uint64_t key = tune_key(prm, g);
  int32_t known;
  if (fs__u64map_get(&tu->cache, key, &known)) {
    *out = (fs_coll_algo)known;
    *cached = 1;
    return 0;
  }
  fs_coll_params q = *prm;
  q.algo = FS_ALGO_AUTO;
  fs_coll_result r;
  int rc = fs_coll_run(tu->t, tu->mode, tu->seed, &q, g, &r, err);
  if (rc) return rc;
  if (fs__u64map_put(&tu->cache, key, (int32_t)r.algo))
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  *out = r.algo;
  *cached = 0;
  return 0;
}

static int choose_nccl(fs_coll_tuner *tu, const fs_coll_params *prm, const fs_coll_group *g,
                       fs_coll_algo *algo, fs_coll_proto *proto, int *cached, fs_err *err) {
  fs_coll_params q = *prm;
  q.algo = FS_ALGO_AUTO;
  int rc = fs_coll_params_check(&q, g->p, err);
  if (rc) return rc;
  uint64_t key = group_key(g);
  int32_t idx;
  fs_coll_nccl_shape s;
  int known = fs__u64map_get(&tu->cache, key, &idx);
  if (known) {
    s = tu->shapes[idx];
  } else if ((rc = fs_coll_nccl_shape_of(tu->t, g, &s, err))) {
    return rc;
  }
  if ((rc = nccl_pick(&s, &q, algo, proto, NULL, err))) return rc;
  if (!known) {
    if (tu->n_shapes >= INT32_MAX ||
        fs__grow(&tu->shapes, &tu->shapes_cap, tu->n_shapes + 1, sizeof(*tu->shapes)))
      return fs_err_set(err, FS_ENOMEM, "out of memory");
    tu->shapes[tu->n_shapes] = s;
    if (fs__u64map_put(&tu->cache, key, (int32_t)tu->n_shapes))
      return fs_err_set(err, FS_ENOMEM, "out of memory");
    tu->n_shapes++;
  }
  *cached = known;
  return 0;
}

int fs_coll_tuner_choose2(fs_coll_tuner *tu, const fs_coll_params *prm,
                          const fs_coll_group *g, fs_coll_algo *algo, fs_coll_proto *proto,
                          int *cached, fs_err *err) {
  int c = 0, rc;
  fs_coll_algo a = FS_ALGO_AUTO;
  fs_coll_proto pr = FS_PROTO_SIMPLE;
  if (tu->policy == FS_TUNE_SIM) rc = choose_sim(tu, prm, g, &a, &c, err);
  else rc = choose_nccl(tu, prm, g, &a, &pr, &c, err);
  if (rc) return rc;
  *algo = a;
  if (proto) *proto = pr;
  if (cached) *cached = c;
  return 0;
}

int fs_coll_tuner_choose(fs_coll_tuner *tu, const fs_coll_params *prm,
                         const fs_coll_group *g, fs_coll_algo *out, int *cached,
                         fs_err *err) {
  return fs_coll_tuner_choose2(tu, prm, g, out, NULL, cached, err);
}
