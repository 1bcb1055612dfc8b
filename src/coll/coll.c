/* The collective framework: names, parameter checks, the lowering builder
 * shared by every algorithm, symbolic data tracking, running one collective
 * alone (and choosing the fastest algorithm), closed-form dispatch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/symm.h"
#include "internal.h"

static const fs__coll_algo_impl *const registry[] = {
    &fs__coll_ring,
    &fs__coll_tree,
    &fs__coll_rd,
    &fs__coll_rhd,
    &fs__coll_binomial,
    &fs__coll_bruck,
    &fs__coll_pairwise,
    &fs__coll_direct,
    &fs__coll_hier,
    &fs__coll_inc,
    &fs__coll_ps,
};

static const fs__coll_algo_impl *impl_of(fs_coll_algo a) {
  for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++)
    if (registry[i]->algo == a) return registry[i];
  return NULL;
}

/* ---- names ---- */
const char *fs_coll_op_name(fs_coll_op op) {
  switch (op) {
#define XX(name, str) \
  case FS_COLL_##name: return str;
    FS_COLL_OP_MAP(XX)
#undef XX
    case FS_COLL_N_OPS: break;
  }
  return "?";
}

int fs_coll_op_parse(const char *name, fs_coll_op *out) {
  for (int i = 0; i < FS_COLL_N_OPS; i++)
    if (strcmp(name, fs_coll_op_name((fs_coll_op)i)) == 0) {
      *out = (fs_coll_op)i;
      return 0;
    }
  return FS_EINVAL;
}

const char *fs_coll_algo_name(fs_coll_algo a) {
  switch (a) {
#define XX(name, str, desc) \
  case FS_ALGO_##name: return str;
    FS_COLL_ALGO_MAP(XX)
#undef XX
    case FS_ALGO_N: break;
  }
  return "?";
}

const char *fs_coll_algo_description(fs_coll_algo a) {
  switch (a) {
#define XX(name, str, desc) \
  case FS_ALGO_##name: return desc;
    FS_COLL_ALGO_MAP(XX)
#undef XX
    case FS_ALGO_N: break;
  }
  return "?";
}

int fs_coll_algo_parse(const char *name, fs_coll_algo *out) {
  for (int i = 0; i < FS_ALGO_N; i++)
    if (strcmp(name, fs_coll_algo_name((fs_coll_algo)i)) == 0) {
      *out = (fs_coll_algo)i;
      return 0;
    }
  return FS_EINVAL;
}

int fs_coll_supports(fs_coll_algo a, fs_coll_op op) {
  if (a == FS_ALGO_AUTO) return 1;
  const fs__coll_algo_impl *im = impl_of(a);
  return im && (im->ops & FS__OP(op));
}

void fs_coll_params_init(fs_coll_params *p) {
  memset(p, 0, sizeof(*p));
  p->op = FS_COLL_ALLREDUCE;
  p->algo = FS_ALGO_AUTO;
  p->bytes = 1 << 20;
}

int fs_coll_params_check(const fs_coll_params *prm, int32_t p, fs_err *err) {
  if ((unsigned)prm->op >= FS_COLL_N_OPS)
    return fs_err_set(err, FS_EINVAL, "unknown collective op %d", (int)prm->op);
  if ((unsigned)prm->algo >= FS_ALGO_N)
    return fs_err_set(err, FS_EINVAL, "unknown algorithm %d", (int)prm->algo);
  if (p < 1) return fs_err_set(err, FS_EINVAL, "ranks must be >= 1, got %d", p);
  if (prm->op == FS_COLL_SENDRECV && p < 2)
    return fs_err_set(err, FS_EINVAL, "sendrecv needs at least 2 ranks, got %d", p);
  if (!(prm->bytes > 0) || !isfinite(prm->bytes) || prm->bytes > 1e18)
    return fs_err_set(err, FS_EINVAL, "size must be in (0, 1e18] bytes, got %g", prm->bytes);
  if (prm->root < 0 || prm->root >= p)
    return fs_err_set(err, FS_EINVAL, "root must be a rank in [0, %d), got %d", p, prm->root);
  if (prm->chunks < 0 || prm->chunks > 4096)
    return fs_err_set(err, FS_EINVAL, "chunks must be in [0, 4096], got %d", prm->chunks);
  if (prm->channels < 0 || prm->channels > 64)
    return fs_err_set(err, FS_EINVAL, "channels must be in [0, 64], got %d", prm->channels);
  if (!(prm->gamma_s_per_byte >= 0) || !isfinite(prm->gamma_s_per_byte))
    return fs_err_set(err, FS_EINVAL, "gamma must be >= 0 s/byte, got %g", prm->gamma_s_per_byte);
  if (prm->node_size < 0)
    return fs_err_set(err, FS_EINVAL, "node size must be >= 0, got %d", prm->node_size);
  if (!(prm->step_latency_s >= 0) || !isfinite(prm->step_latency_s) || prm->step_latency_s > 1)
    return fs_err_set(err, FS_EINVAL, "step latency must be in [0, 1] s, got %g",
                      prm->step_latency_s);
  if (prm->servers < 0 || prm->servers > p)
    return fs_err_set(err, FS_EINVAL, "servers must be in [0, %d] (the ranks), got %d", p,
                      prm->servers);
  if (prm->algo == FS_ALGO_AUTO) return 0;
  const fs__coll_algo_impl *im = impl_of(prm->algo);
  if (!im)
    return fs_err_set(err, FS_EINVAL, "algorithm '%s' is not implemented",
                      fs_coll_algo_name(prm->algo));
  if (!(im->ops & FS__OP(prm->op)))
    return fs_err_set(err, FS_EINVAL, "algorithm '%s' does not implement %s",
                      fs_coll_algo_name(prm->algo), fs_coll_op_name(prm->op));
  return im->check ? im->check(prm, p, err) : 0;
}

double fs_coll_busbw_factor(fs_coll_op op, int32_t p) {
  switch (op) {
    case FS_COLL_ALLREDUCE: return 2.0 * (p - 1) / p;
    case FS_COLL_ALLGATHER:
    case FS_COLL_REDUCESCATTER:
    case FS_COLL_ALLTOALL: return (double)(p - 1) / p;
    default: return 1.0;
  }
}

int32_t fs_coll_default_chunks(const fs_coll_params *prm, int32_t p) {
  const fs__coll_algo_impl *im = impl_of(prm->algo);
  if (!im || !im->default_chunks) return 1;
  return im->default_chunks(prm, p);
}

static int32_t resolve_chunks(const fs_coll_params *prm, int32_t p) {
  return prm->chunks > 0 ? prm->chunks : fs_coll_default_chunks(prm, p);
}

int64_t fs_coll_flows_estimate(const fs_coll_params *prm, int32_t p) {
  int64_t P = p, C = resolve_chunks(prm, p), K = prm->channels > 0 ? prm->channels : 1;
  if (p < 2) return 0;
  switch (prm->algo) {
    case FS_ALGO_RING:
      if (prm->op == FS_COLL_ALLREDUCE) return 2 * (P - 1) * P * K * C;
      if (prm->op == FS_COLL_ALLGATHER || prm->op == FS_COLL_REDUCESCATTER)
        return (P - 1) * P * K * C;
      return 0;
    case FS_ALGO_DIRECT:
    case FS_ALGO_PAIRWISE:
      return prm->op == FS_COLL_ALLTOALL || prm->op == FS_COLL_ALLGATHER ? P * (P - 1) : 0;
    case FS_ALGO_BRUCK: {
      int64_t r = 0;
      while (((int64_t)1 << r) < P) r++;
      return prm->op == FS_COLL_ALLTOALL || prm->op == FS_COLL_ALLGATHER ? P * r : 0;
    }
    default: return 0;
  }
}

double fs_coll_model_time(const fs_coll_params *prm, int32_t p, const fs_coll_cost *cost) {
  const fs__coll_algo_impl *im = impl_of(prm->algo);
  if (!im || !(im->ops & FS__OP(prm->op))) return NAN;
  if (p == 1) return 0;
  return im->model(prm, p, resolve_chunks(prm, p), cost);
}

double fs__pipeline_time(int32_t stages, int32_t chunks, double d,
                         const double *hop_delay, int one_link) {
  if (stages <= 0) return 0;
  double t = 0, cd = chunks * d;
  if (!one_link) {
    for (int32_t s = 0; s < stages; s++) t += d + hop_delay[s];
    return t + (chunks - 1) * d;
  }
  for (int32_t s = 1; s < stages; s++) t += fmax(cd, d + hop_delay[s - 1]);
  return t + cd + hop_delay[stages - 1];
}

/* ---- tracking ---- */
typedef struct order_check {
  int32_t send, writer;
} order_check;

struct fs_coll_tracker {
  int armed;
  fs_coll_op op;
  int32_t p, root, units, total; /* total = units, or p * units for alltoall */
  uint64_t *mask;                /* [rank * total + unit]: contributors held */
  int32_t *writer;               /* item after which that data is usable */
  double *recv_bytes;
  order_check *order;
  size_t n_order, order_cap;
  char why[256];                 /* first problem seen while lowering */
};

int fs_coll_tracker_new(fs_coll_tracker **out, fs_err *err) {
  *out = calloc(1, sizeof(**out));
  return *out ? 0 : fs_err_set(err, FS_ENOMEM, "out of memory");
}

void fs_coll_tracker_free(fs_coll_tracker *t) {
  if (!t) return;
  FS__FREE_ALL(t->mask, t->writer, t->recv_bytes, t->order, t);
}

static void track_fail(fs_coll_tracker *t, const char *why) {
  if (!t->why[0]) snprintf(t->why, sizeof(t->why), "%s", why);
}

static int32_t owner(const fs_coll_tracker *t, int32_t u) {
  return (int32_t)((int64_t)u * t->p / t->units);
}

static int track_arm(fs__cb *cb, fs_coll_tracker *t) {
  int32_t p = cb->p;
  if (p > 64)
    return fs_err_set(cb->err, FS_EINVAL, "data tracking supports at most 64 ranks, got %d", p);
  FS__FREE_ALL(t->mask, t->writer, t->recv_bytes, t->order);
  memset(t, 0, sizeof(*t));
  t->armed = 1;
  t->op = cb->prm->op;
  t->p = p;
  t->root = cb->prm->root;
  t->units = cb->units;
  t->total = t->op == FS_COLL_ALLTOALL ? p * cb->units : cb->units;
  size_t n = (size_t)p * (size_t)t->total;
  t->mask = calloc(n, sizeof(uint64_t));
  t->writer = fs__malloc(n, sizeof(int32_t));
  t->recv_bytes = calloc((size_t)p, sizeof(double));
  if (!t->mask || !t->writer || !t->recv_bytes)
    return fs_err_set(cb->err, FS_ENOMEM, "out of memory tracking");
  for (size_t i = 0; i < n; i++) t->writer[i] = -1;
  for (int32_t r = 0; r < p; r++)
    for (int32_t u = 0; u < t->total; u++) {
      int holds;
      switch (t->op) {
        case FS_COLL_ALLGATHER: holds = owner(t, u) == r; break;
        case FS_COLL_BROADCAST:
        case FS_COLL_SENDRECV: holds = r == t->root; break;
        case FS_COLL_ALLTOALL: holds = u / t->units == r; break;
        default: holds = 1; /* reductions: everyone contributes everything */
      }
      if (holds) t->mask[(size_t)r * t->total + u] = 1ull << r;
    }
  return 0;
}

static int track_move(fs__cb *cb, int32_t from, int32_t to, const int32_t *units, int32_t n,
                      int reduce, int32_t sender, int32_t ready) {
  fs_coll_tracker *t = cb->l->track;
  if (!t || !t->armed) return 0;
  char why[256];
  int32_t last_writer = -2;
  for (int32_t i = 0; i < n; i++) {
    int32_t u = units[i];
    if (u < 0 || u >= t->total) {
      snprintf(why, sizeof(why), "rank %d sends unit %d outside [0, %d)", from, u, t->total);
      track_fail(t, why);
      continue;
    }
    size_t a = (size_t)from * t->total + u, b = (size_t)to * t->total + u;
    if (!t->mask[a]) {
      snprintf(why, sizeof(why), "rank %d sends unit %d that it does not hold", from, u);
      track_fail(t, why);
    }
    if (reduce) {
      if (t->mask[a] & t->mask[b]) {
        snprintf(why, sizeof(why),
                 "rank %d reduces unit %d from rank %d twice over the same contribution", to,
                 u, from);
        track_fail(t, why);
      }
      t->mask[b] |= t->mask[a];
    } else {
      t->mask[b] = t->mask[a];
    }
    if (t->writer[a] >= 0 && t->writer[a] != last_writer) {
      if (fs__grow(&t->order, &t->order_cap, t->n_order + 1, sizeof(*t->order)))
        return fs_err_set(cb->err, FS_ENOMEM, "out of memory tracking");
      t->order[t->n_order++] = (order_check){sender, t->writer[a]};
      last_writer = t->writer[a];
    }
    t->writer[b] = ready;
  }
  t->recv_bytes[to] += n * cb->unit_bytes;
  return 0;
}

int fs__cb_track_move(fs__cb *cb, int32_t from, int32_t to, const int32_t *units,
                      int32_t n, int reduce, int32_t sender, int32_t ready) {
  return track_move(cb, from, to, units, n, reduce, sender, ready);
}

int fs_coll_verify(const fs_coll_tracker *t, const fs_sim *sim, double *recv_bytes,
                   fs_err *err) {
  if (!t->armed) return fs_err_set(err, FS_EINVAL, "nothing was tracked");
  if (recv_bytes) memcpy(recv_bytes, t->recv_bytes, (size_t)t->p * sizeof(double));
  if (t->why[0]) return fs_err_set(err, FS_EINVAL, "%s", t->why);
  for (size_t i = 0; i < t->n_order; i++) {
    double s = fs_sim_start_s(sim, t->order[i].send), w = fs_sim_finish_s(sim, t->order[i].writer);
    if (s < w - 1e-12 * fmax(w, 1e-9))
      return fs_err_set(err, FS_EINVAL,
                        "item %d sent data at %.9g s before it was ready (item %d, %.9g s)",
                        t->order[i].send, s, t->order[i].writer, w);
  }
  uint64_t all = t->p == 64 ? ~0ull : (1ull << t->p) - 1;
  for (int32_t r = 0; r < t->p; r++)
    for (int32_t u = 0; u < t->total; u++) {
      uint64_t m = t->mask[(size_t)r * t->total + u];
      int ok = 1;
      const char *want = "";
      switch (t->op) {
        case FS_COLL_ALLREDUCE: ok = m == all; want = "the sum over all ranks"; break;
        case FS_COLL_REDUCE:
          if (r == t->root) ok = m == all, want = "the sum over all ranks";
          break;
        case FS_COLL_REDUCESCATTER:
          if (owner(t, u) == r) ok = m == all, want = "the sum over all ranks";
          break;
        case FS_COLL_ALLGATHER:
          ok = m == 1ull << owner(t, u), want = "its owner's block";
          break;
        case FS_COLL_BROADCAST: ok = m == 1ull << t->root, want = "the root's data"; break;
        case FS_COLL_SENDRECV:
          if (r == (t->root + 1) % t->p) ok = m == 1ull << t->root, want = "the sender's data";
          break;
        case FS_COLL_ALLTOALL: {
          int32_t origin = u / t->units, dst = owner(t, u % t->units);
          if (dst == r) ok = m == 1ull << origin, want = "the data its origin sent it";
          break;
        }
        case FS_COLL_N_OPS: break;
      }
      if (!ok)
        return fs_err_set(err, FS_EINVAL,
                          "%s: rank %d ends with unit %d holding contributions %#llx, not %s",
                          fs_coll_op_name(t->op), r, u, (unsigned long long)m, want);
    }
  return 0;
}

/* ---- the builder ---- */
static int mark_used(fs__cb *cb, int32_t item) {
  if (item < cb->l->first_item) return 0; /* outside this collective */
  size_t i = (size_t)(item - cb->l->first_item);
  size_t old = cb->hd_cap;
  if (fs__grow(&cb->has_dependent, &cb->hd_cap, i + 1, 1))
    return fs_err_set(cb->err, FS_ENOMEM, "out of memory lowering collective");
  if (cb->hd_cap > old) memset(cb->has_dependent + old, 0, cb->hd_cap - old);
  cb->has_dependent[i] = 1;
  return 0;
}

/* Dependencies are on items of this collective, which all follow its start,
 * so only an item with none waits for the start directly (one edge instead
 * of one per message). */
static int add_deps(fs__cb *cb, int32_t item, const int32_t *done, int32_t n_done,
                    const int32_t *sent, int32_t n_sent) {
  int rc = 0, any = 0;
  for (int32_t i = 0; i < n_done; i++) any |= done[i] >= 0;
  for (int32_t i = 0; i < n_sent; i++) any |= sent[i] >= 0;
  if (!any) {
    rc = fs_sim_add_dep(cb->l->sim, cb->start, item, cb->err);
    if (!rc) rc = mark_used(cb, cb->start);
  }
  for (int32_t i = 0; i < n_done && !rc; i++)
    if (done[i] >= 0 && !(rc = fs_sim_add_dep(cb->l->sim, done[i], item, cb->err)))
      rc = mark_used(cb, done[i]);
  for (int32_t i = 0; i < n_sent && !rc; i++)
    if (sent[i] >= 0 && !(rc = fs_sim_add_dep_sent(cb->l->sim, sent[i], item, cb->err)))
      rc = mark_used(cb, sent[i]);
  return rc;
}

int fs__cb_units(fs__cb *cb, int32_t units) {
  if (units < 1) return fs_err_set(cb->err, FS_EINTERNAL, "units must be >= 1");
  cb->units = units;
  cb->unit_bytes = cb->prm->bytes / units;
  if (cb->l->track) return track_arm(cb, cb->l->track);
  return 0;
}

int fs__cb_flow(fs__cb *cb, int32_t src_node, int32_t dst_node, double bytes,
                const int32_t *done, int32_t n_done, const int32_t *sent, int32_t n_sent,
                int32_t *flow) {
  const fs_route *route;
  fs_err inner = {0, ""};
  int rc = fs_route_cache_get(cb->routes, src_node, dst_node, &route, &inner);
  if (rc) return fs_err_set(cb->err, rc, "collective: %s", inner.msg);
  /* a cache of the caller's outlives the simulation (coll.h); our own dies
   * with the lowering */
  int32_t id = cb->routes == cb->l->routes
                   ? fs_sim_add_flow_ref(cb->l->sim, src_node, dst_node, bytes, 0, route, cb->err)
                   : fs_sim_add_flow(cb->l->sim, src_node, dst_node, bytes, 0, route, cb->err);
  if (id < 0) return id;
  cb->l->n_flows++;
  *flow = id;
  return add_deps(cb, id, done, n_done, sent, n_sent);
}

int32_t fs__cb_task(fs__cb *cb, int32_t rank, double seconds, const int32_t *done,
                    int32_t n_done) {
  int32_t id = fs_sim_add_task_s(cb->l->sim, cb->g->hosts[rank], 0, seconds, cb->err);
  if (id < 0) return id;
  int rc = add_deps(cb, id, done, n_done, NULL, 0);
  return rc ? rc : id;
}

int32_t fs__cb_join(fs__cb *cb, int32_t rank, const int32_t *items, int32_t n) {
  return fs__cb_task(cb, rank, 0, items, n);
}

int fs__cb_send(fs__cb *cb, int32_t from, int32_t to, const int32_t *units, int32_t n,
                int reduce, const int32_t *done, int32_t n_done, const int32_t *sent,
                int32_t n_sent, fs__msg *out) {
  int32_t flow;
  int rc = fs__cb_flow(cb, cb->g->hosts[from], cb->g->hosts[to], n * cb->unit_bytes, done,
                       n_done, sent, n_sent, &flow);
  if (rc) return rc;
  int32_t ready = flow;
  /* the receiver adds the data in (gamma), and across servers the
   * library's per-step latency passes before the next step can use it */
  double red = reduce && cb->prm->gamma_s_per_byte > 0
                   ? n * cb->unit_bytes * cb->prm->gamma_s_per_byte
                   : 0;
  int32_t G = cb->t->gpus_per_node;
  double lat = cb->prm->step_latency_s > 0 &&
                       (G < 2 || cb->g->hosts[from] / G != cb->g->hosts[to] / G)
                   ? cb->prm->step_latency_s
                   : 0;
  if (red > 0 || lat > 0) {
    ready = fs__cb_task(cb, to, red + lat, &flow, 1);
    if (ready < 0) return ready;
  }
  out->flow = flow;
  out->ready = ready;
  return track_move(cb, from, to, units, n, reduce, flow, ready);
}

int fs__cb_send_range(fs__cb *cb, int32_t from, int32_t to, int32_t u0, int32_t n,
                      int reduce, const int32_t *done, int32_t n_done, const int32_t *sent,
                      int32_t n_sent, fs__msg *out) {
  if (fs__grow(&cb->scratch, &cb->scratch_cap, (size_t)n, sizeof(int32_t)))
    return fs_err_set(cb->err, FS_ENOMEM, "out of memory lowering collective");
  for (int32_t i = 0; i < n; i++) cb->scratch[i] = u0 + i;
  return fs__cb_send(cb, from, to, cb->scratch, n, reduce, done, n_done, sent, n_sent, out);
}

int fs_coll_lower(const fs_coll_params *prm, const fs_coll_group *g, fs_coll_lowering *l,
                  fs_err *err) {
  int rc = fs_coll_params_check(prm, g->p, err);
  if (rc) return rc;
  if (prm->algo == FS_ALGO_AUTO)
    return fs_err_set(err, FS_EINVAL, "choose an algorithm before lowering (auto)");
  return fs__coll_lower_impl(impl_of(prm->algo), prm, g, l, err);
}

static int lower(const fs__coll_algo_impl *im, const fs_coll_params *prm, const fs_coll_group *g,
                 fs_coll_lowering *l, int rotated, fs_err *err);

int fs__coll_lower_impl(const fs__coll_algo_impl *im, const fs_coll_params *prm,
                        const fs_coll_group *g, fs_coll_lowering *l, fs_err *err) {
  return lower(im, prm, g, l, 0, err);
}

int fs__coll_lower_rotated(const fs_coll_params *prm, const fs_coll_group *g,
                           fs_coll_lowering *l, fs_err *err) {
  int ring_op = prm->op == FS_COLL_ALLREDUCE || prm->op == FS_COLL_ALLGATHER ||
                prm->op == FS_COLL_REDUCESCATTER;
  if (prm->algo != FS_ALGO_RING || !ring_op || l->track)
    return fs_err_set(err, FS_EINVAL, "no rotation quotient for %s %s",
                      fs_coll_algo_name(prm->algo), fs_coll_op_name(prm->op));
  return lower(&fs__coll_ring, prm, g, l, 1, err);
}

static int lower(const fs__coll_algo_impl *im, const fs_coll_params *prm, const fs_coll_group *g,
                 fs_coll_lowering *l, int rotated, fs_err *err) {
  int rc = 0;
  fs__cb cb;
  memset(&cb, 0, sizeof(cb));
  cb.rotated = rotated;
  cb.prm = prm;
  cb.g = g;
  cb.l = l;
  cb.err = err;
  cb.t = fs_sim_topo(l->sim);
  cb.p = g->p;
  cb.chunks = resolve_chunks(prm, g->p);
  cb.channels = prm->channels > 0 ? prm->channels : 1;
  if (l->routes)
    cb.routes = l->routes;
  else if ((rc = fs_route_cache_new(l->router, l->mode, l->seed, l->key, &cb.routes, err)))
    return rc;
  l->n_flows = 0;
  l->first_item = fs_sim_n_items(l->sim);
  /* The start: waits for l->after; everything first depends on it. */
  cb.start = fs_sim_add_task_s(l->sim, g->hosts[0], 0, 0, err);
  if (cb.start < 0) return cb.start;
  for (int32_t i = 0; i < l->n_after && !rc; i++)
    rc = fs_sim_add_dep(l->sim, l->after[i], cb.start, err);
  if (!rc && g->p > 1) rc = im->lower(&cb);
  if (!rc && g->p == 1 && l->track) rc = fs__cb_units(&cb, 1);
  if (!rc) {
    /* done joins every item of the collective that nothing else waits for. */
    int32_t end = fs_sim_n_items(l->sim);
    int32_t *sinks = fs__malloc((size_t)(end - l->first_item), sizeof(int32_t));
    int32_t ns = 0;
    if (!sinks) {
      rc = fs_err_set(err, FS_ENOMEM, "out of memory lowering collective");
    } else {
      for (int32_t it = l->first_item; it < end; it++) {
        size_t i = (size_t)(it - l->first_item);
        if (i >= cb.hd_cap || !cb.has_dependent[i]) sinks[ns++] = it;
      }
      int32_t done = fs_sim_add_task_s(l->sim, g->hosts[0], 0, 0, err);
      if (done < 0) rc = done;
      for (int32_t i = 0; i < ns && !rc; i++) rc = fs_sim_add_dep(l->sim, sinks[i], done, err);
      l->done = done;
      free(sinks);
    }
  }
  l->n_items = fs_sim_n_items(l->sim) - l->first_item;
  if (cb.routes != l->routes) fs_route_cache_free(cb.routes);
  free(cb.scratch);
  free(cb.has_dependent);
  return rc;
}

void fs_coll_lowering_init(fs_coll_lowering *l, fs_sim *sim, fs_router *router,
                           fs_route_mode mode, uint64_t seed) {
  memset(l, 0, sizeof(*l));
  l->sim = sim;
  l->router = router;
  l->mode = mode;
  l->seed = seed;
}

/* ---- running alone ---- */
/* ---- rank rotation (docs/model-symm.md) -------------------------------------
 * A ring all-reduce, all-gather or reduce-scatter over the ranks' own order
 * is invariant under r -> r + 1: every rank's messages are the images of
 * rank 0's, with the same dependencies. When that rotation of the ranks'
 * hosts extends to an automorphism of the topology (fs_symm_new verifies
 * it: a star, a ring, a torus line, ...) and the routes of (h_r, h_{r+1})
 * are its images (fs_symm_check_routes: not per-flow ECMP hashing over
 * several paths), only rank 0's flows are simulated, each standing for its
 * p images on quotient routes: the same max-min rates and times (symm.h),
 * p times fewer flows. Fluid transport only (the proof is for max-min),
 * and a per-step latency only where every hop pays it. */
typedef struct rot_ctx {
  const fs_symm *symm;
  int64_t orbit;
} rot_ctx;

static int rot_route(void *ctx, const fs_route *in, fs_route *out, fs_err *err) {
  const rot_ctx *c = ctx;
  return fs_symm_quotient_route(c->symm, in, c->orbit, out, err);
}

/* Lowers prm into a new simulation on routes (a cache of the caller's,
 * which must outlive it: the flows borrow its routes), rank 0's messages
 * only when rotated (fs__coll_lower_rotated), runs it and fills *out (its
 * flows: those lowered). 0 or a negative code with err set. */
static int simulate(const fs_topo *t, fs_router *router, fs_route_mode mode, uint64_t seed,
                    const fs_transport *tp, const fs_coll_params *prm, const fs_coll_group *g,
                    fs_route_cache *routes, int rotated, fs_coll_result *out, fs_err *err) {
  fs_sim *sim = NULL;
  int rc = fs_sim_new(t, &sim, err);
  if (!rc && tp) rc = fs_sim_set_transport(sim, tp, err);
  fs_coll_lowering l;
  if (!rc) {
    fs_coll_lowering_init(&l, sim, router, mode, seed);
    l.routes = routes;
    rc = rotated ? fs__coll_lower_rotated(prm, g, &l, err) : fs_coll_lower(prm, g, &l, err);
  }
  if (!rc) rc = fs_sim_run(sim, NULL, err);
  if (!rc) {
    out->algo = prm->algo;
    out->chunks = resolve_chunks(prm, g->p);
    out->time_s = fs_sim_finish_s(sim, l.done);
    out->flows = l.n_flows;
    out->events = fs_sim_get_counters(sim).events;
  }
  fs_sim_free(sim);
  return rc;
}

/* 1 with *out filled, 0 when the rotation does not apply (nothing done),
 * or a negative code with err set. */
static int run_rotated(const fs_topo *t, fs_router *router, fs_route_mode mode, uint64_t seed,
                       const fs_transport *tp, const fs_coll_params *prm,
                       const fs_coll_group *g, fs_coll_result *out, fs_err *err) {
  int32_t p = g->p;
  int ring_op = prm->op == FS_COLL_ALLREDUCE || prm->op == FS_COLL_ALLGATHER ||
                prm->op == FS_COLL_REDUCESCATTER;
  if (prm->algo != FS_ALGO_RING || !ring_op || p < 3 || (tp && tp->kind != FS_TRANSPORT_FLUID) ||
      (t->gpus_per_node > 1 && prm->step_latency_s > 0) || fs_coll_ring_server_size(t, g) != 0)
    return 0;
  int32_t *perm = fs__malloc((size_t)t->n_hosts, sizeof(int32_t));
  if (!perm) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int32_t h = 0; h < t->n_hosts; h++) perm[h] = h;
  for (int32_t r = 0; r < p; r++) perm[g->hosts[r]] = g->hosts[(r + 1) % p];
  fs_symm *symm = NULL;
  fs_route_cache *plain = NULL, *rot = NULL;
  fs_err why = {0, ""};
  const int32_t *gens[1] = {perm};
  int32_t pair[2] = {g->hosts[0], g->hosts[1]};
  int rc = fs_symm_new(t, gens, 1, &symm, &why);
  if (rc == FS_ENOMEM) rc = fs_err_set(err, rc, "%s", why.msg);
  else if (rc) rc = 1; /* no automorphism: not applicable */
  if (!rc) rc = fs_route_cache_new(router, mode, seed, 0, &plain, err);
  if (!rc && fs_symm_check_routes(symm, pair, 1, fs_symm_route_cache_fn, plain,
                                  fs_route_mode_name(mode), &why))
    rc = 1; /* routes not equivariant */
  rot_ctx ctx = {symm, p};
  if (!rc) rc = fs_route_cache_new(router, mode, seed, 0, &rot, err);
  if (!rc) {
    fs_route_cache_set_transform(rot, rot_route, &ctx);
    rc = simulate(t, router, mode, seed, tp, prm, g, rot, 1, out, err);
  }
  if (!rc) out->flows = fs_coll_flows_estimate(prm, p); /* those it stands for */
  fs_route_cache_free(rot);
  fs_route_cache_free(plain);
  fs_symm_free(symm);
  free(perm);
  return rc == 1 ? 0 : rc < 0 ? rc : 1;
}

static int run_one(const fs_topo *t, fs_router *router, fs_route_mode mode, uint64_t seed,
                   const fs_transport *tp, const fs_coll_params *prm, const fs_coll_group *g,
                   fs_coll_result *out, fs_err *err) {
  int done = run_rotated(t, router, mode, seed, tp, prm, g, out, err);
  if (done) return done < 0 ? done : 0;
  /* the lowering's own routes (key 0), kept here so that the flows borrow
   * them instead of copying one per flow */
  fs_route_cache *routes = NULL;
  int rc = fs_route_cache_new(router, mode, seed, 0, &routes, err);
  if (!rc) rc = simulate(t, router, mode, seed, tp, prm, g, routes, 0, out, err);
  fs_route_cache_free(routes);
  return rc;
}

static int check_group(const fs_topo *t, const fs_coll_group *g, fs_err *err) {
  if (g->p < 1) return fs_err_set(err, FS_EINVAL, "ranks must be >= 1, got %d", g->p);
  uint8_t *seen = calloc((size_t)t->n_nodes, 1);
  if (!seen) return fs_err_set(err, FS_ENOMEM, "out of memory");
  int rc = 0;
  for (int32_t r = 0; r < g->p && !rc; r++) {
    int32_t h = g->hosts[r];
    if (h < 0 || h >= t->n_hosts)
      rc = fs_err_set(err, FS_EINVAL, "rank %d maps to host %d, outside [0, %d)", r, h,
                      t->n_hosts);
    else if (seen[h]++)
      rc = fs_err_set(err, FS_EINVAL, "rank %d maps to host %d, already used by another rank",
                      r, h);
  }
  free(seen);
  return rc;
}

int fs_coll_run(const fs_topo *t, fs_route_mode mode, uint64_t seed, const fs_coll_params *prm,
                const fs_coll_group *g, fs_coll_result *out, fs_err *err) {
  return fs_coll_run2(t, mode, seed, NULL, prm, g, out, err);
}

int fs_coll_run2(const fs_topo *t, fs_route_mode mode, uint64_t seed, const fs_transport *tp,
                 const fs_coll_params *prm, const fs_coll_group *g, fs_coll_result *out,
                 fs_err *err) {
  int rc = fs_coll_params_check(prm, g->p, err);
  if (!rc) rc = check_group(t, g, err);
  if (rc) return rc;
  fs_router *router = NULL;
  if ((rc = fs_router_new(t, &router, err))) return rc;
  if (prm->algo != FS_ALGO_AUTO) {
    rc = run_one(t, router, mode, seed, tp, prm, g, out, err);
  } else {
    int found = 0;
    for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]) && !rc; i++) {
      fs_coll_params q = *prm;
      q.algo = registry[i]->algo;
      fs_err ignore = {0, ""};
      /* parameter servers are a deployment, not an algorithm to choose */
      if (registry[i]->algo == FS_ALGO_PS || !(registry[i]->ops & FS__OP(q.op)) ||
          fs_coll_params_check(&q, g->p, &ignore))
        continue;
      fs_coll_result r;
      rc = run_one(t, router, mode, seed, tp, &q, g, &r, err);
      if (rc == FS_EINVAL) { /* does not apply here, e.g. inc without a capable switch */
        rc = 0;
        continue;
      }
      if (!rc && (!found || r.time_s < out->time_s)) *out = r;
      found |= !rc;
    }
    if (!rc && !found)
      rc = fs_err_set(err, FS_EINVAL, "no algorithm implements %s for %d ranks",
                      fs_coll_op_name(prm->op), g->p);
  }
  fs_router_free(router);
  return rc;
}
