/* Collectives on the replica-shift quotient (qcoll.h).
 *
 * The template holds, per kept item, its kind, members and bytes or
 * duration, and the kept dependencies as (before, after, sent) in template
 * indices. Building it costs one full lowering of the collective (n (n - 1)
 * flows for a ring reduce-scatter) and O(items + deps) hashing; a template
 * is built once per distinct collective and reused for every group. */
#include "qcoll.h"

#include <stdlib.h>
#include <string.h>

#include "../base/base.h"

typedef struct qitem {
  uint8_t kind;      /* FS_ITEM_FLOW or FS_ITEM_TASK */
  int32_t a, b;      /* flow: source and destination members; task: host member */
  double value;      /* flow bytes or task seconds */
} qitem;

struct fs__qcoll {
  fs_coll_params prm;
  int32_t n, shift;
  int32_t ring_g; /* fs_coll_ring_server_size of the group it was built on (ring), else 0 */
  qitem *items;
  int32_t n_items;
  int32_t (*deps)[3];
  int64_t n_deps;
  int32_t start, done; /* template indices */
  fs_sim_plan *plan;    /* the template as a plan (lazy lowering), made on first use */
};

/* kind | a | b | occurrence, 1 + 21 + 21 + 21 bits. */
static uint64_t item_key(int kind, int32_t a, int32_t b, int32_t occ) {
  return (uint64_t)kind << 63 | (uint64_t)a << 42 | (uint64_t)b << 21 | (uint64_t)occ;
}

void fs__qcoll_free(fs__qcoll *q) {
  if (!q) return;
  fs_sim_plan_free(q->plan);
  FS__FREE_ALL(q->items, q->deps, q);
}

int fs__qcoll_matches(const fs__qcoll *q, const fs_coll_params *prm, int32_t n,
                      int32_t ring_g, int32_t shift) {
  return q->n == n && q->shift == shift && q->ring_g == ring_g && q->prm.op == prm->op &&
         q->prm.algo == prm->algo &&
         q->prm.bytes == prm->bytes && q->prm.chunks == prm->chunks &&
         q->prm.channels == prm->channels && q->prm.gamma_s_per_byte == prm->gamma_s_per_byte &&
         q->prm.root == prm->root && q->prm.node_size == prm->node_size &&
         q->prm.servers == prm->servers && q->prm.step_latency_s == prm->step_latency_s;
}

/* The working state of fs__qcoll_new: the template under construction, the
 * scratch simulation holding one full lowering of the collective (N items,
 * E dependencies) and, per item, its occurrence among equal keys, its
 * image under the shift, its orbit's representative and its index among
 * the kept items. count and where index items by (kind, a, b, occurrence);
 * depset holds the dependencies. */
typedef struct qbuild {
  fs__qcoll *q;
  fs_sim *sim;
  int32_t n, shift, N;
  int64_t E;
  int32_t *img, *rep, *keep, *occ_of;
  int32_t kept;
  fs__u64map count, where, depset;
} qbuild;

/* Items in member terms (member: host -> member, -1 outside the group),
 * each with its occurrence among equal keys, indexed in where. Returns 0
 * or FS_ENOMEM (err set). */
static int read_items(qbuild *x, const int32_t *member, fs_err *err) {
  for (int32_t i = 0; i < x->N; i++) {
    qitem *it = &x->q->items[i];
    it->kind = (uint8_t)fs_sim_item_kind(x->sim, i);
    if (it->kind == FS_ITEM_FLOW) {
      int32_t src, dst;
      fs_sim_flow_ends(x->sim, i, &src, &dst);
      it->a = member[src];
      it->b = member[dst];
      it->value = fs_sim_flow_bytes(x->sim, i);
    } else {
      int32_t h;
      fs_sim_task_info(x->sim, i, &h, &it->value);
      it->a = it->b = member[h];
    }
    uint64_t k0 = item_key(it->kind, it->a, it->b, 0);
    int32_t c = 0;
    fs__u64map_get(&x->count, k0, &c);
    x->occ_of[i] = c;
    if (c >= (1 << 21) || fs__u64map_put(&x->count, k0, c + 1) ||
        fs__u64map_put(&x->where, item_key(it->kind, it->a, it->b, c), i))
      return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  return 0;
}

/* The shift's image of every item (img); only the start and done tasks
 * may be fixed. Returns 0, or FS_EINVAL naming an item without an image
 * of the same size. */
static int map_items(qbuild *x, const fs_coll_params *prm, fs_err *err) {
  const fs__qcoll *q = x->q;
  int32_t n = x->n, shift = x->shift;
  for (int32_t i = 0; i < x->N; i++) {
    const qitem *it = &q->items[i];
    int32_t j = -1;
    if (i == q->start || i == q->done) {
      x->img[i] = i;
      continue;
    }
    if (!fs__u64map_get(&x->where, item_key(it->kind, (it->a + shift) % n, (it->b + shift) % n,
                                             x->occ_of[i]), &j) ||
        q->items[j].value != it->value || j == q->start || j == q->done)
      return fs_err_set(err, FS_EINVAL,
                        "%s over %d ranks is not invariant under a shift of %d ranks: item %d "
                        "(members %d -> %d) has no image",
                        fs_coll_op_name(prm->op), n, shift, i, it->a, it->b);
    x->img[i] = j;
  }
  return 0;
}

/* Dependencies map onto dependencies (of the same kind). Fills depset.
 * Returns 0, FS_ENOMEM, or FS_EINVAL naming a dependency without an
 * image. */
static int map_deps(qbuild *x, const fs_coll_params *prm, fs_err *err) {
  for (int64_t e = 0; e < x->E; e++) {
    int32_t a, b;
    int sent;
    fs_sim_dep(x->sim, e, &a, &b, &sent);
    if (fs__u64map_put(&x->depset, (uint64_t)a << 32 | (uint64_t)(uint32_t)b, sent))
      return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  for (int64_t e = 0; e < x->E; e++) {
    int32_t a, b, s2;
    int sent;
    fs_sim_dep(x->sim, e, &a, &b, &sent);
    if (!fs__u64map_get(&x->depset, (uint64_t)x->img[a] << 32 | (uint64_t)(uint32_t)x->img[b],
                        &s2) ||
        s2 != sent)
      return fs_err_set(err, FS_EINVAL,
                        "%s over %d ranks is not invariant under a shift of %d ranks: dependency "
                        "%d -> %d has no image",
                        fs_coll_op_name(prm->op), x->n, x->shift, a, b);
  }
  return 0;
}

/* Representatives: members below shift; walks each orbit from its
 * representative to label every member of it (rep), and numbers the kept
 * items (keep, kept). Returns 0, or FS_EINVAL naming an item whose orbit
 * does not close or that is in none. */
static int find_orbits(qbuild *x, const fs_coll_params *prm, fs_err *err) {
  int32_t N = x->N, n = x->n, shift = x->shift;
  for (int32_t i = 0; i < N; i++) x->rep[i] = -1;
  int32_t kept = 0;
  for (int32_t i = 0; i < N; i++) {
    if (x->img[i] == i) {
      x->rep[i] = i;
      x->keep[i] = kept++;
      continue;
    }
    if (x->q->items[i].a >= shift) continue;
    x->keep[i] = kept++;
    int32_t y = i;
    for (int32_t steps = 0; steps < n / shift; steps++, y = x->img[y]) x->rep[y] = i;
    if (y != i) /* n / shift shifts must bring the orbit back */
      return fs_err_set(err, FS_EINVAL, "%s over %d ranks: the orbit of item %d does not close",
                        fs_coll_op_name(prm->op), n, i);
  }
  x->kept = kept;
  for (int32_t i = 0; i < N; i++)
    if (x->rep[i] < 0)
      return fs_err_set(err, FS_EINVAL, "%s over %d ranks: item %d is in no orbit of the shift",
                        fs_coll_op_name(prm->op), n, i);
  return 0;
}

/* Compact: the kept items in order, their dependencies redirected to the
 * representatives and deduplicated (depset is reused for that). Returns 0,
 * or FS_ENOMEM (err set) with q->items unchanged. */
static int compact_template(qbuild *x, fs_err *err) {
  fs__qcoll *q = x->q;
  const int32_t *rep = x->rep, *keep = x->keep;
  qitem *items = fs__malloc((size_t)x->kept, sizeof(qitem));
  q->deps = fs__malloc((size_t)(x->E > 0 ? x->E : 1), sizeof(*q->deps));
  if (!items || !q->deps) {
    free(items);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  for (int32_t i = 0; i < x->N; i++)
    if (rep[i] == i) items[keep[i]] = q->items[i];
  fs__u64map_free(&x->depset);
  fs__u64map_init(&x->depset);
  for (int64_t e = 0; e < x->E; e++) {
    int32_t a, b, dummy;
    int sent;
    fs_sim_dep(x->sim, e, &a, &b, &sent);
    if (rep[b] != b) continue; /* another member's copy of a kept item */
    int32_t ka = keep[rep[a]], kb = keep[b];
    uint64_t key = (uint64_t)ka << 33 | (uint64_t)kb << 1 | (uint64_t)sent;
    if (fs__u64map_get(&x->depset, key, &dummy)) continue;
    if (fs__u64map_put(&x->depset, key, 1)) {
      free(items);
      return fs_err_set(err, FS_ENOMEM, "out of memory");
    }
    q->deps[q->n_deps][0] = ka;
    q->deps[q->n_deps][1] = kb;
    q->deps[q->n_deps][2] = sent;
    q->n_deps++;
  }
  q->start = keep[q->start];
  q->done = keep[q->done];
  free(q->items);
  q->items = items;
  q->n_items = x->kept;
  return 0;
}

int fs__qcoll_new(const fs_topo *t, fs_router *router, uint64_t seed,
                  const fs_coll_params *prm, const fs_coll_group *g, int32_t shift,
                  fs__qcoll **out, fs_err *err) {
  int32_t n = g->p;
  if (shift < 1 || n % shift || n >= (1 << 21))
    return fs_err_set(err, FS_EINVAL, "replica shift %d does not divide the group of %d", shift, n);
  qbuild x;
  memset(&x, 0, sizeof(x));
  x.n = n;
  x.shift = shift;
  fs_route_cache *paths = NULL;
  fs__qcoll *q = x.q = calloc(1, sizeof(*q));
  int32_t *member = fs__malloc((size_t)t->n_hosts, sizeof(int32_t));
  fs__u64map_init(&x.count);
  fs__u64map_init(&x.where);
  fs__u64map_init(&x.depset);
  int rc = q && member ? fs_sim_new(t, &x.sim, err) : fs_err_set(err, FS_ENOMEM, "out of memory");
  if (rc) goto done;
  q->ring_g = prm->algo == FS_ALGO_RING ? fs_coll_ring_server_size(t, g) : 0;
  if (q->ring_g < 0) {
    rc = fs_err_set(err, q->ring_g, "out of memory");
    goto done;
  }
  for (int32_t h = 0; h < t->n_hosts; h++) member[h] = -1;
  for (int32_t k = 0; k < n; k++) member[g->hosts[k]] = k;
  /* The template keeps endpoints, sizes and dependencies, not routes: the
   * scratch flows borrow one shortest path per pair instead of a copy of
   * their real route each (a 1024-rank ring is 1 M flows). */
  if ((rc = fs_route_cache_new(router, FS_ROUTE_SHORTEST, seed, 0, &paths, err))) goto done;
  fs_coll_lowering l;
  fs_coll_lowering_init(&l, x.sim, router, FS_ROUTE_SHORTEST, seed);
  l.routes = paths;
  if ((rc = fs_coll_lower(prm, g, &l, err))) goto done;
  int32_t N = x.N = fs_sim_n_items(x.sim);
  q->prm = *prm;
  q->n = n;
  q->shift = shift;
  q->items = fs__malloc((size_t)N, sizeof(qitem));
  x.img = fs__malloc((size_t)N, sizeof(int32_t));
  x.rep = fs__malloc((size_t)N, sizeof(int32_t));
  x.keep = fs__malloc((size_t)N, sizeof(int32_t));
  x.occ_of = fs__malloc((size_t)N, sizeof(int32_t));
  if (!q->items || !x.img || !x.rep || !x.keep || !x.occ_of) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto done;
  }
  if ((rc = read_items(&x, member, err))) goto done;
  q->start = l.first_item;
  q->done = l.done;
  x.E = fs_sim_n_deps(x.sim);
  if ((rc = map_items(&x, prm, err)) || (rc = map_deps(&x, prm, err)) ||
      (rc = find_orbits(&x, prm, err)))
    goto done;
  rc = compact_template(&x, err);
done:
  fs__u64map_free(&x.count);
  fs__u64map_free(&x.where);
  fs__u64map_free(&x.depset);
  FS__FREE_ALL(member, x.img, x.rep, x.keep, x.occ_of);
  fs_sim_free(x.sim);
  fs_route_cache_free(paths); /* after the flows that borrow its routes */
  if (rc) {
    fs__qcoll_free(q);
    return rc;
  }
  *out = q;
  return 0;
}

int fs__qcoll_add(const fs__qcoll *q, fs_sim *sim, fs_route_cache *routes, const int32_t *hosts,
                  const int32_t *after, int32_t n_after, int32_t *first, int32_t *done,
                  fs_err *err) {
  int32_t base = fs_sim_n_items(sim);
  int rc;
  for (int32_t i = 0; i < q->n_items; i++) {
    const qitem *it = &q->items[i];
    int32_t id;
    if (it->kind == FS_ITEM_FLOW) {
      const fs_route *route;
      if ((rc = fs_route_cache_get(routes, hosts[it->a], hosts[it->b], &route, err))) return rc;
      id = fs_sim_add_flow_ref(sim, hosts[it->a], hosts[it->b], it->value, 0, route, err);
    } else {
      id = fs_sim_add_task_s(sim, hosts[it->a], 0, it->value, err);
    }
    if (id < 0) return id;
  }
  for (int64_t e = 0; e < q->n_deps; e++) {
    int32_t a = base + q->deps[e][0], b = base + q->deps[e][1];
    rc = q->deps[e][2] ? fs_sim_add_dep_sent(sim, a, b, err) : fs_sim_add_dep(sim, a, b, err);
    if (rc) return rc;
  }
  for (int32_t i = 0; i < n_after; i++)
    if ((rc = fs_sim_add_dep(sim, after[i], base + q->start, err))) return rc;
  *first = base;
  *done = base + q->done;
  return 0;
}

/* The template as a plan of the simulation (sim.h), on first use. */
static int qcoll_plan(fs__qcoll *q, fs_err *err) {
  if (q->plan) return 0;
  fs_sim_plan_item *items = fs__malloc((size_t)q->n_items, sizeof(*items));
  if (!items) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int32_t i = 0; i < q->n_items; i++)
    items[i] = (fs_sim_plan_item){q->items[i].kind, q->items[i].a, q->items[i].b,
                                  q->items[i].value};
  int rc = fs_sim_plan_new(items, q->n_items, (const int32_t(*)[3])q->deps, q->n_deps, q->start,
                           q->done, q->n, &q->plan, err);
  free(items);
  return rc;
}

int fs__qcoll_add_lazy(fs__qcoll *q, fs_sim *sim, fs_route_cache *routes, const int32_t *hosts,
                       const int32_t *after, int32_t n_after, int32_t *first, int32_t *done,
                       int64_t *flows, int64_t *tasks, fs_err *err) {
  int rc = qcoll_plan(q, err);
  if (rc || (rc = fs_sim_add_plan(sim, q->plan, hosts, routes, first, done, err))) return rc;
  fs_sim_plan_counts(q->plan, flows, tasks);
  for (int32_t i = 0; i < n_after; i++)
    if ((rc = fs_sim_add_dep(sim, after[i], *first, err))) return rc;
  return 0;
}


int fs__qcoll_wire_bytes(const fs__qcoll *q, fs_route_cache *routes, const fs_topo *t,
                         const int32_t *hosts, int32_t me, double *sum, fs_err *err) {
  for (int32_t i = q->start; i < q->done; i++) { /* (the eager copy's [first, done)) */
    const qitem *it = &q->items[i];
    if (it->kind != FS_ITEM_FLOW) continue;
    const fs_route *r;
    int rc = fs_route_cache_get(routes, hosts[it->a], hosts[it->b], &r, err);
    if (rc) return rc;
    if (r->n && t->links[r->links[0]].from == me) *sum += it->value;
  }
  return 0;
}
