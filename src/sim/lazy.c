/* Lazy lowering (sim.h, "plans"; docs/model.md, "Lazy lowering").
 *
 * A training iteration lowers tens of millions of flows of which a few
 * hundred are in flight at any time (bench T4: 33.6 M flows, at most 385 at
 * once). A plan instance keeps what every flow of a collective shares (the
 * plan: items in member terms, dependencies; its binding, shared by the
 * instances on the same hosts and route cache: hosts and one route per
 * member pair) and makes each item only when its dependencies
 * are met: it takes an item id and a flow or task slot from the ones given
 * back, the flow its route (pruned where the pruning left links out), and
 * gives them back when it finishes. Memory follows the flows in flight.
 *
 * Why it is exactly the run of the same items added one by one (tested bit
 * for bit, tests/test_lazy.c). The engine's order of work never looks at
 * item ids or flow indices: events tie on their push order, the re-rating
 * walks links' active lists in the order flows joined them, and the
 * dependents of an item are released in the order their dependencies were
 * added. Here an item's dependents are its plan's, in the plan's order;
 * the start's come first (added eagerly, the start's own edges precede
 * any added later); the done task counts the plan's edges into it. A slot
 * given back keeps its version counter, one up, so no event of its
 * earlier flow is alive for the new one. What does look at the flows'
 * order is reproduced: the pruning numbers distinct routes in the order
 * flows bring them (each instance's pairs take their place, prune.c), and
 * the link bytes are charged after the run in the flows' order
 * (fs__lazy_charge, in each instance's plan order at its place). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "model.h"

/* ---- plans ---- */

void fs_sim_plan_free(fs_sim_plan *p) {
  if (!p) return;
  FS__FREE_ALL(p->items, p->pair_of, p->pairs, p->dep_start, p->dep_list, p->indeg, p);
}

void fs_sim_plan_counts(const fs_sim_plan *p, int64_t *flows, int64_t *tasks) {
  *flows = p->n_flows;
  *tasks = p->n_items - p->n_flows;
}

/* The plan's shape: kinds, members, values, dependencies. */
static int plan_check(const fs_sim_plan_item *items, int32_t n, const int32_t (*deps)[3],
                      int64_t n_deps, int32_t start, int32_t done, int32_t members, fs_err *err) {
  if (n < 2 || members < 1 || start < 0 || start >= n || done < 0 || done >= n || start == done)
    return fs_err_set(err, FS_EINVAL, "plan: %d items, start %d, done %d, %d members", n, start,
                      done, members);
  if (items[start].kind != FS_ITEM_TASK || items[done].kind != FS_ITEM_TASK)
    return fs_err_set(err, FS_EINVAL, "plan: its start and done must be tasks");
  for (int32_t i = 0; i < n; i++) {
    const fs_sim_plan_item *it = &items[i];
    int flow = it->kind == FS_ITEM_FLOW;
    if ((!flow && it->kind != FS_ITEM_TASK) || it->a < 0 || it->a >= members ||
        (flow && (it->b < 0 || it->b >= members || it->b == it->a)) ||
        !(it->value >= 0) || !isfinite(it->value))
      return fs_err_set(err, FS_EINVAL, "plan: item %d (kind %d, members %d -> %d, value %g)", i,
                        it->kind, it->a, it->b, it->value);
  }
  for (int64_t e = 0; e < n_deps; e++) {
    int32_t a = deps[e][0], b = deps[e][1];
    if (a < 0 || a >= n || b < 0 || b >= n || (deps[e][2] && items[a].kind != FS_ITEM_FLOW) ||
        b == start)
      return fs_err_set(err, FS_EINVAL, "plan: dependency %lld (%d -> %d, sent %d)",
                        (long long)e, a, b, deps[e][2]);
  }
  return 0;
}

/* Dependents in CSR form, in the order given; indeg; Kahn's check that
 * they have no cycle and that everything but start depends on something. */
static int plan_graph(fs_sim_plan *p, const int32_t (*deps)[3], int64_t n_deps, fs_err *err) {
  int32_t n = p->n_items;
  p->dep_start = calloc((size_t)n + 1, sizeof(int32_t));
  p->dep_list = fs__malloc(n_deps > 0 ? (size_t)n_deps : 1, sizeof(int32_t));
  p->indeg = calloc((size_t)n, sizeof(int32_t));
  int32_t *fill = calloc((size_t)n + 1, sizeof(int32_t)), *queue = fs__malloc((size_t)n, 4);
  int32_t *left = fs__malloc((size_t)n, sizeof(int32_t));
  int rc = 0;
  if (!p->dep_start || !p->dep_list || !p->indeg || !fill || !queue || !left) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  for (int64_t e = 0; e < n_deps; e++) {
    p->dep_start[deps[e][0] + 1]++;
    p->indeg[deps[e][1]]++;
  }
  for (int32_t i = 0; i < n; i++) p->dep_start[i + 1] += p->dep_start[i];
  for (int64_t e = 0; e < n_deps; e++) {
    int32_t a = deps[e][0];
    p->dep_list[p->dep_start[a] + fill[a]++] = deps[e][1] * 2 + (deps[e][2] != 0);
  }
  for (int32_t i = 0; i < n; i++)
    if (i != p->start && p->indeg[i] == 0) {
      rc = fs_err_set(err, FS_EINVAL, "plan: item %d depends on nothing (only start may)", i);
      goto out;
    }
  int32_t head = 0, tail = 0;
  memcpy(left, p->indeg, (size_t)n * sizeof(int32_t));
  queue[tail++] = p->start;
  while (head < tail) {
    int32_t u = queue[head++];
    for (int32_t k = p->dep_start[u]; k < p->dep_start[u + 1]; k++)
      if (--left[p->dep_list[k] / 2] == 0) queue[tail++] = p->dep_list[k] / 2;
  }
  if (tail != n) rc = fs_err_set(err, FS_EINVAL, "plan: its dependencies have a cycle");
out:
  FS__FREE_ALL(fill, queue, left);
  return rc;
}

/* Its flows' distinct member pairs, in order of first use. */
static int plan_pairs(fs_sim_plan *p, fs_err *err) {
  fs__u64map seen;
  fs__u64map_init(&seen);
  size_t cap = 0;
  int rc = 0;
  p->pair_of = fs__malloc((size_t)p->n_items, sizeof(int32_t));
  if (!p->pair_of) rc = FS_ENOMEM;
  for (int32_t i = 0; i < p->n_items && !rc; i++) {
    const fs_sim_plan_item *it = &p->items[i];
    p->pair_of[i] = -1;
    if (it->kind != FS_ITEM_FLOW) continue;
    p->n_flows++;
    uint64_t key = (uint64_t)it->a << 32 | (uint32_t)it->b;
    int32_t q;
    if (!fs__u64map_get(&seen, key, &q)) {
      q = p->n_pairs;
      if (fs__grow(&p->pairs, &cap, (size_t)q + 1, sizeof(*p->pairs)) ||
          fs__u64map_put(&seen, key, q)) {
        rc = FS_ENOMEM;
        break;
      }
      p->pairs[q][0] = it->a;
      p->pairs[q][1] = it->b;
      p->n_pairs++;
    }
    p->pair_of[i] = q;
  }
  fs__u64map_free(&seen);
  return rc ? fs_err_set(err, rc, "out of memory") : 0;
}

int fs_sim_plan_new(const fs_sim_plan_item *items, int32_t n_items, const int32_t (*deps)[3],
                    int64_t n_deps, int32_t start, int32_t done, int32_t n_members,
                    fs_sim_plan **out, fs_err *err) {
  int rc = plan_check(items, n_items, deps, n_deps, start, done, n_members, err);
  if (rc) return rc;
  fs_sim_plan *p = calloc(1, sizeof(*p));
  if (!p || !(p->items = fs__malloc((size_t)n_items, sizeof(*items)))) {
    free(p);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  memcpy(p->items, items, (size_t)n_items * sizeof(*items));
  p->n_items = n_items;
  p->n_members = n_members;
  p->start = start;
  p->done = done;
  if ((rc = plan_graph(p, deps, n_deps, err)) || (rc = plan_pairs(p, err))) {
    fs_sim_plan_free(p);
    return rc;
  }
  *out = p;
  return 0;
}

/* ---- instances ---- */

static void bind_free(fs__lzbind *b) {
  if (b) FS__FREE_ALL(b->hosts, b->route, b->rid, b);
}

/* A new binding of p on hosts with routes from the cache: each pair's
 * route checked and kept. */
static int bind_new(fs_sim *s, const fs_sim_plan *p, const int32_t *hosts,
                    fs_route_cache *routes, fs__lzbind **out, fs_err *err) {
  const fs_topo *t = s->core.t;
  size_t np = p->n_pairs > 0 ? (size_t)p->n_pairs : 1;
  fs__lzbind *b = calloc(1, sizeof(*b));
  if (!b || !(b->hosts = fs__malloc((size_t)p->n_members, sizeof(int32_t))) ||
      !(b->route = fs__malloc(np, sizeof(*b->route))) ||
      !(b->rid = fs__malloc(np, sizeof(int32_t)))) {
    bind_free(b);
    return fs_err_set(err, FS_ENOMEM, "out of memory adding a plan instance");
  }
  b->plan = p;
  b->cache = routes;
  memcpy(b->hosts, hosts, (size_t)p->n_members * sizeof(int32_t));
  int rc = 0, expanded = 0;
  for (int32_t q = 0; q < p->n_pairs && !rc; q++) {
    int32_t a = hosts[p->pairs[q][0]], c = hosts[p->pairs[q][1]];
    const fs_route *r;
    if ((rc = fs_route_cache_get(routes, a, c, &r, err))) break;
    if (a == c || r->n < 1 || fs__bad_entry(t, r) >= 0 ||
        (r->expanded && fs__bad_entry(t, r->expanded) >= 0)) {
      rc = fs_err_set(err, FS_EINVAL, "plan instance: no valid route %d -> %d", a, c);
      break;
    }
    fs__lzroute *lr = &b->route[q];
    *lr = (fs__lzroute){r->links, r->weights, r->n, (double)r->latency_ns * 1e-9, NULL, NULL,
                        0, 0};
    if (r->expanded) {
      lr->x_links = r->expanded->links;
      lr->x_w = r->expanded->weights;
      lr->x_n = r->expanded->n;
      lr->orbit = r->flow_orbit > 0 ? (double)r->flow_orbit : 1;
    }
    b->rid[q] = -1;
    expanded |= r->expanded != NULL;
  }
  if (!rc && expanded && fs__paths_reserve(s))
    rc = fs_err_set(err, FS_ENOMEM, "out of memory adding a plan instance");
  if (rc) {
    bind_free(b);
    return rc;
  }
  *out = b;
  return 0;
}

/* The binding of p on hosts with routes: one made before, or a new one.
 * Found by a hash of the three, checked in full (another binding under
 * the same hash is not shared). */
static int bind_get(fs_sim *s, const fs_sim_plan *p, const int32_t *hosts,
                    fs_route_cache *routes, fs__lzbind **out, fs_err *err) {
  fs__lazy *lz = &s->lazy;
  uint64_t h = fs__mix64((uint64_t)(uintptr_t)p ^ fs__mix64((uint64_t)(uintptr_t)routes));
  for (int32_t k = 0; k < p->n_members; k++) h = fs__mix64(h ^ (uint64_t)(uint32_t)hosts[k]);
  int32_t i;
  if (fs__u64map_get(&lz->bind_of, h, &i)) {
    fs__lzbind *b = lz->bind[i];
    if (b->plan == p && b->cache == routes &&
        memcmp(b->hosts, hosts, (size_t)p->n_members * sizeof(int32_t)) == 0) {
      *out = b;
      return 0;
    }
    h = 0; /* (a collision: unshared) */
  }
  if (fs__grow(&lz->bind, &lz->bind_cap, lz->n_bind + 1, sizeof(*lz->bind)))
    return fs_err_set(err, FS_ENOMEM, "out of memory adding a plan instance");
  int rc = bind_new(s, p, hosts, routes, out, err);
  if (rc) return rc;
  if (h && fs__u64map_put(&lz->bind_of, h, (int32_t)lz->n_bind)) {
    bind_free(*out);
    return fs_err_set(err, FS_ENOMEM, "out of memory adding a plan instance");
  }
  lz->bind[lz->n_bind++] = *out;
  return 0;
}

int fs_sim_add_plan(fs_sim *s, const fs_sim_plan *p, const int32_t *hosts,
                    fs_route_cache *routes, int32_t *start, int32_t *done, fs_err *err) {
  if (s->ran) return fs_err_set(err, FS_EINVAL, "simulation already ran");
  const fs_topo *t = s->core.t;
  for (int32_t k = 0; k < p->n_members; k++)
    if (hosts[k] < 0 || hosts[k] >= t->n_nodes)
      return fs_err_set(err, FS_EINVAL, "plan instance: member %d on node %d, out of range", k,
                        hosts[k]);
  fs__lazy *lz = &s->lazy;
  fs__lzbind *b = NULL;
  int rc = bind_get(s, p, hosts, routes, &b, err);
  if (rc) return rc;
  if (fs__grow(&lz->inst, &lz->inst_cap, lz->n_inst + 1, sizeof(*lz->inst)))
    return fs_err_set(err, FS_ENOMEM, "out of memory adding a plan instance");
  const fs_sim_plan_item *st = &p->items[p->start], *dn = &p->items[p->done];
  int32_t a = fs_sim_add_task_s(s, hosts[st->a], 0, st->value, err);
  if (a < 0) return a;
  int32_t d = fs_sim_add_task_s(s, hosts[dn->a], 0, dn->value, err);
  if (d < 0) return d;
  /* (its start and done are the last two items: at_flow counts the flows
   * before them, as the added copy's flows would follow them) */
  lz->inst[lz->n_inst++] = (fs__lzinst){b, a, d, s->core.n_flows, NULL, 0, -INFINITY};
  *start = a;
  *done = d;
  return 0;
}

void fs__lazy_free(fs_sim *s) {
  fs__lazy *lz = &s->lazy;
  for (size_t i = 0; i < lz->n_inst; i++) free(lz->inst[i].cnt);
  for (size_t i = 0; i < lz->n_bind; i++) bind_free(lz->bind[i]);
  fs__u64map_free(&lz->bind_of);
  FS__FREE_ALL(lz->inst, lz->bind, lz->of, lz->free_flow, lz->free_task);
  memset(lz, 0, sizeof(*lz));
}

int fs__lazy_setup(fs_sim *s, fs_err *err) {
  fs__lazy *lz = &s->lazy;
  if (!lz->n_inst) return 0;
  if (s->tp.kind != FS_TRANSPORT_FLUID || s->n_timers)
    return fs_err_set(err, FS_EINVAL,
                      "plan instances run only under the fluid transport and without timers");
  lz->base = (int32_t)s->n_items;
  lz->n_added = s->core.n_flows;
  lz->slots = (size_t)s->core.n_flows;
  for (size_t i = 0; i < lz->n_inst; i++) {
    const fs__lzinst *in = &lz->inst[i];
    s->items[in->done].deps_left += in->bind->plan->indeg[in->bind->plan->done];
  }
  return 0;
}

/* Per-flow arrays sized for at least n flows (the run's own, sized for
 * the flows added; growing by doubling). */
static int grow_slots(fs_sim *s, size_t n) {
  fs__lazy *lz = &s->lazy;
  if (n <= lz->slots) return 0;
  size_t cap = lz->slots ? lz->slots : 64;
  while (cap < n) cap *= 2;
  int32_t *al = realloc(s->active_list, cap * sizeof(int32_t));
  if (!al) return FS_ENOMEM;
  s->active_list = al;
  if (fs__maxmin_grow(&s->mm, lz->slots, cap) ||
      (s->check_rerate && fs__maxmin_grow(&s->mm_check, lz->slots, cap)))
    return FS_ENOMEM;
  lz->slots = cap;
  return 0;
}

/* A new item id of its own slot (kind): a flow (the next of core.flows)
 * or a task (the next of tasks). */
static int32_t new_id(fs_sim *s, int32_t kind) {
  fs__lazy *lz = &s->lazy;
  fs__simcore *c = &s->core;
  size_t id = (size_t)lz->base + (size_t)lz->n_ids;
  if (id >= INT32_MAX || fs__grow(&s->items, &s->items_cap, id + 1, sizeof(*s->items)) ||
      fs__grow(&lz->of, &lz->of_cap, (size_t)lz->n_ids + 1, sizeof(*lz->of)))
    return FS_ENOMEM;
  int32_t idx;
  if (kind == FS_ITEM_FLOW) {
    size_t fi = (size_t)c->n_flows;
    if (fs__grow(&c->flows, &s->flows_cap, fi + 1, sizeof(*c->flows)) ||
        grow_slots(s, fi + 1) || (s->paths && fs__paths_reserve(s)))
      return FS_ENOMEM;
    memset(&c->flows[fi], 0, sizeof(c->flows[fi]));
    idx = c->n_flows++;
  } else {
    if (fs__grow(&s->tasks, &s->tasks_cap, s->n_tasks + 1, sizeof(*s->tasks))) return FS_ENOMEM;
    idx = (int32_t)s->n_tasks++;
  }
  s->items[id].idx = idx;
  lz->n_ids++;
  return (int32_t)id;
}

/* Flow f of pair q of binding b: its pruned route's id and the route it is
 * rated and charged on (what the pruning kept, prune.c, or the whole). */
static void rating_route(const fs_sim *s, const fs__lzbind *b, int32_t q, fs__flow *f) {
  f->rid = b->rid[q];
  if (f->rid >= 0) {
    const fs__proute *pr = &s->core.proutes[f->rid];
    f->links = pr->kept;
    f->w = pr->kept_w;
    f->n = pr->n_kept;
  } else {
    f->links = b->route[q].links;
    f->w = b->route[q].w;
    f->n = b->route[q].n;
  }
}

/* Makes item pi of instance i (its dependencies met) and readies it. */
static int make(fs_sim *s, int32_t i, int32_t pi) {
  fs__lazy *lz = &s->lazy;
  fs__lzinst *in = &lz->inst[i];
  const fs_sim_plan *p = in->bind->plan;
  const fs_sim_plan_item *it = &p->items[pi];
  int flow = it->kind == FS_ITEM_FLOW;
  int32_t id;
  if (flow ? lz->n_free_flow : lz->n_free_task)
    id = flow ? lz->free_flow[--lz->n_free_flow] : lz->free_task[--lz->n_free_task];
  else if ((id = new_id(s, it->kind)) < 0)
    return id;
  int32_t idx = s->items[id].idx;
  if (flow) {
    fs__flow *f = &s->core.flows[idx];
    uint32_t version = f->version + 1; /* no event of its slot's last flow lives on */
    int32_t q = p->pair_of[pi];
    const fs__lzroute *r = &in->bind->route[q];
    memset(f, 0, sizeof(*f));
    f->version = version;
    f->item = id;
    f->src = in->bind->hosts[it->a];
    f->dst = in->bind->hosts[it->b];
    rating_route(s, in->bind, q, f);
    f->pos = f->active_idx = -1;
    f->bytes = it->value;
    f->latency_s = r->latency_s;
    if (s->paths) {
      fs__fpath *fp = &s->paths[idx];
      memset(fp, 0, sizeof(*fp));
      if (r->x_links) *fp = (fs__fpath){r->x_links, r->x_w, r->x_n, r->orbit};
    }
  } else {
    s->tasks[idx] = (task){in->bind->hosts[it->a], it->value};
  }
  s->items[id] = (sim_item){(uint8_t)it->kind, ST_WAIT, idx, 0, 0, NAN, NAN};
  lz->of[id - lz->base][0] = i;
  lz->of[id - lz->base][1] = pi;
  return fs__item_ready(s, id);
}

/* One of instance i's dependencies of plan item d is met. */
static int met(fs_sim *s, int32_t i, int32_t d) {
  fs__lzinst *in = &s->lazy.inst[i];
  if (d == in->bind->plan->done)
    return --s->items[in->done].deps_left == 0 ? fs__item_ready(s, in->done) : 0;
  return --in->cnt[d] == 0 ? make(s, i, d) : 0;
}

/* Plan item pi of instance i released its dependents waiting on kind. */
static int release_row(fs_sim *s, int32_t i, int32_t pi, int32_t kind) {
  const fs_sim_plan *p = s->lazy.inst[i].bind->plan;
  for (int32_t k = p->dep_start[pi]; k < p->dep_start[pi + 1]; k++) {
    if (p->dep_list[k] % 2 != kind) continue;
    int rc = met(s, i, p->dep_list[k] / 2);
    if (rc) return rc;
  }
  return 0;
}

int fs__lazy_begin(fs_sim *s, int32_t i) {
  fs__lzinst *in = &s->lazy.inst[i];
  const fs_sim_plan *p = in->bind->plan;
  if (!(in->cnt = fs__malloc((size_t)p->n_items, sizeof(int32_t)))) return FS_ENOMEM;
  memcpy(in->cnt, p->indeg, (size_t)p->n_items * sizeof(int32_t));
  in->left = p->n_items - 2;
  if (in->left == 0) {
    free(in->cnt);
    in->cnt = NULL;
  }
  return release_row(s, i, p->start, DEP_DONE);
}

int fs__lazy_release(fs_sim *s, int32_t id, int32_t kind, int finished) {
  fs__lazy *lz = &s->lazy;
  int32_t i = lz->of[id - lz->base][0], pi = lz->of[id - lz->base][1];
  int rc = release_row(s, i, pi, kind);
  if (rc || !finished) return rc;
  int flow = s->items[id].kind == FS_ITEM_FLOW;
  int32_t **list = flow ? &lz->free_flow : &lz->free_task;
  size_t *n = flow ? &lz->n_free_flow : &lz->n_free_task;
  if (fs__grow(list, flow ? &lz->free_flow_cap : &lz->free_task_cap, *n + 1, sizeof(int32_t)))
    return FS_ENOMEM;
  (*list)[(*n)++] = id;
  fs__lzinst *in = &lz->inst[i];
  in->end_s = fmax(in->end_s, s->now);
  if (--in->left == 0) {
    free(in->cnt);
    in->cnt = NULL;
  }
  return 0;
}

void fs__lazy_charge(fs_sim *s, size_t *next, int32_t fi) {
  fs__lazy *lz = &s->lazy;
  for (; *next < lz->n_inst && lz->inst[*next].at_flow == fi; (*next)++) {
    const fs__lzinst *in = &lz->inst[*next];
    const fs_sim_plan *p = in->bind->plan;
    for (int32_t pi = 0; pi < p->n_items; pi++) {
      const fs_sim_plan_item *it = &p->items[pi];
      if (it->kind != FS_ITEM_FLOW) continue;
      fs__flow f;
      memset(&f, 0, sizeof(f));
      f.bytes = it->value;
      rating_route(s, in->bind, p->pair_of[pi], &f);
      fs__charge(s, &f);
    }
  }
}

double fs_sim_last_finish_s(const fs_sim *s, int32_t item) {
  double f = s->items[item].finish_s;
  const fs__lazy *lz = &s->lazy;
  size_t lo = 0, hi = lz->n_inst; /* (instances in the order added: starts ascend) */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (lz->inst[mid].start < item) lo = mid + 1;
    else hi = mid;
  }
  return lo < lz->n_inst && lz->inst[lo].start == item ? fmax(f, lz->inst[lo].end_s) : f;
}

int64_t fs_sim_n_plans(const fs_sim *s) { return (int64_t)s->lazy.n_inst; }
