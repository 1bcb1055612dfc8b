/* The dependency graph of a simulation and what a run reports (sim.h):
 * items (flows and compute tasks), their routes (borrowed or copied into
 * the run's arena), `after` edges in CSR form once the run starts, the
 * cycle check, and the accessors of results. Costs: O(1) amortised per
 * item or edge added; the CSR build and the cycle check O(items + edges),
 * once per run. Sizes: up to 10^7 items and edges. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* A copy of a route's arrays in the arena (stable for the run). */
static int arena_route(fs_sim *s, const fs_route *route, const int32_t **links,
                       const double **w) {
  int32_t *l = fs__arena_alloc(&s->arena, (size_t)route->n, sizeof(int32_t));
  double *x = fs__arena_alloc(&s->arena, (size_t)route->n, sizeof(double));
  if (!l || !x) return FS_ENOMEM;
  memcpy(l, route->links, (size_t)route->n * sizeof(int32_t));
  memcpy(x, route->weights, (size_t)route->n * sizeof(double));
  *links = l;
  *w = x;
  return 0;
}

int fs__copy_route(fs_sim *s, fs__flow *f, const fs_route *route) {
  if (arena_route(s, route, &f->links, &f->w)) return FS_ENOMEM;
  f->owned_cap = route->n;
  return 0;
}

static int32_t new_item(fs_sim *s, uint8_t kind, int32_t idx, int64_t start_ns,
                        fs_err *err) {
  if (s->ran) return fs_err_set(err, FS_EINVAL, "simulation already ran");
  if (s->n_items >= INT32_MAX ||
      fs__grow(&s->items, &s->items_cap, s->n_items + 1, sizeof(*s->items)))
    return fs_err_set(err, FS_ENOMEM, "out of memory adding item");
  s->items[s->n_items] = (sim_item){kind, ST_WAIT, idx, 0, start_ns, NAN, NAN};
  return (int32_t)s->n_items++;
}

int fs__paths_reserve(fs_sim *s) {
  if (s->paths && s->paths_cap >= s->flows_cap) return 0;
  size_t cap = s->flows_cap ? s->flows_cap : 1;
  fs__fpath *np = realloc(s->paths, cap * sizeof(*np)); /* every flow has an entry, zero if none */
  if (!np) return FS_ENOMEM;
  memset(np + s->paths_cap, 0, (cap - s->paths_cap) * sizeof(*np));
  s->paths = np;
  s->paths_cap = cap;
  return 0;
}

/* Flow fi's route is a quotient: keeps the route its packets take (the
 * expanded one, borrowed or copied as the flow's own route) and its orbit. */
static int add_path(fs_sim *s, size_t fi, const fs_route *route, int borrow) {
  const fs_route *x = route->expanded;
  if (fs__paths_reserve(s)) return FS_ENOMEM;
  if (!x) return 0;
  fs__fpath *p = &s->paths[fi];
  p->n = x->n;
  p->orbit = route->flow_orbit > 0 ? (double)route->flow_orbit : 1;
  if (!borrow) return arena_route(s, x, &p->links, &p->w);
  p->links = x->links;
  p->w = x->weights;
  return 0;
}

/* The first entry of a route whose link is out of range or whose weight is
 * not finite and > 0; -1 if none. */
int32_t fs__bad_entry(const fs_topo *t, const fs_route *route) {
  for (int32_t k = 0; k < route->n; k++)
    if (route->links[k] < 0 || route->links[k] >= t->n_links ||
        !(route->weights[k] > 0 && isfinite(route->weights[k])))
      return k;
  return -1;
}

static int32_t add_flow(fs_sim *s, int32_t src, int32_t dst, double bytes, int64_t start_ns,
                        const fs_route *route, int borrow, fs_err *err) {
  fs__simcore *c = &s->core;
  int rc;
  if (!(bytes >= 0) || !isfinite(bytes))
    return fs_err_set(err, FS_EINVAL, "flow bytes must be finite and >= 0, got %g", bytes);
  if (start_ns < 0)
    return fs_err_set(err, FS_EINVAL, "flow start must be >= 0 ns, got %lld",
                      (long long)start_ns);
  if (src < 0 || src >= c->t->n_nodes || dst < 0 || dst >= c->t->n_nodes || src == dst)
    return fs_err_set(err, FS_EINVAL, "flow endpoints %d -> %d invalid", src, dst);
  if (!route || route->n < 1)
    return fs_err_set(err, FS_EINVAL, "flow %d -> %d has an empty route", src, dst);
  int32_t bad = fs__bad_entry(c->t, route);
  if (bad >= 0)
    return fs_err_set(err, FS_EINVAL, "flow %d -> %d: bad route entry %d", src, dst, bad);
  if (route->expanded && (bad = fs__bad_entry(c->t, route->expanded)) >= 0)
    return fs_err_set(err, FS_EINVAL, "flow %d -> %d: bad expanded route entry %d", src, dst,
                      bad);
  size_t nflows = (size_t)c->n_flows;
  if (fs__grow(&c->flows, &s->flows_cap, nflows + 1, sizeof(*c->flows)))
    return fs_err_set(err, FS_ENOMEM, "out of memory adding flow");
  fs__flow *f = &c->flows[nflows];
  memset(f, 0, sizeof(*f));
  if (borrow) {
    f->links = route->links;
    f->w = route->weights;
  } else if (fs__copy_route(s, f, route)) {
    return fs_err_set(err, FS_ENOMEM, "out of memory adding flow");
  }
  int32_t id = new_item(s, FS_ITEM_FLOW, c->n_flows, start_ns, err);
  if (id < 0) return id;
  c->n_flows++;
  f->item = id;
  f->src = src;
  f->dst = dst;
  f->n = route->n;
  f->active_idx = -1;
  f->pos = -1;
  f->rid = -1;
  f->bytes = bytes;
  f->latency_s = (double)route->latency_ns * 1e-9;
  if ((route->expanded || s->paths) && (rc = add_path(s, nflows, route, borrow)))
    return fs_err_set(err, rc, "out of memory adding flow");
  return id;
}

int32_t fs_sim_add_flow(fs_sim *s, int32_t src, int32_t dst, double bytes,
                        int64_t start_ns, const fs_route *route, fs_err *err) {
  return add_flow(s, src, dst, bytes, start_ns, route, 0, err);
}

int32_t fs_sim_add_flow_ref(fs_sim *s, int32_t src, int32_t dst, double bytes,
                            int64_t start_ns, const fs_route *route, fs_err *err) {
  return add_flow(s, src, dst, bytes, start_ns, route, 1, err);
}

int32_t fs_sim_add_task_s(fs_sim *s, int32_t host, int64_t start_ns,
                          double duration_s, fs_err *err) {
  if (host < 0 || host >= s->core.t->n_nodes)
    return fs_err_set(err, FS_EINVAL, "task host %d out of range", host);
  if (!(duration_s >= 0) || !isfinite(duration_s) || start_ns < 0)
    return fs_err_set(err, FS_EINVAL, "task start and duration must be finite and >= 0");
  if (fs__grow(&s->tasks, &s->tasks_cap, s->n_tasks + 1, sizeof(*s->tasks)))
    return fs_err_set(err, FS_ENOMEM, "out of memory adding task");
  int32_t id = new_item(s, FS_ITEM_TASK, (int32_t)s->n_tasks, start_ns, err);
  if (id < 0) return id;
  s->tasks[s->n_tasks++] = (task){host, duration_s};
  return id;
}

int32_t fs_sim_add_task(fs_sim *s, int32_t host, int64_t start_ns,
                        int64_t duration_ns, fs_err *err) {
  if (duration_ns < 0)
    return fs_err_set(err, FS_EINVAL, "task duration must be >= 0 ns, got %lld",
                      (long long)duration_ns);
  return fs_sim_add_task_s(s, host, start_ns, (double)duration_ns * 1e-9, err);
}

static int add_edge(fs_sim *s, int32_t before, int32_t after, int32_t kind,
                    fs_err *err) {
  if (s->ran) return fs_err_set(err, FS_EINVAL, "simulation already ran");
  if (before < 0 || (size_t)before >= s->n_items || after < 0 ||
      (size_t)after >= s->n_items)
    return fs_err_set(err, FS_EINVAL, "dependency %d -> %d names an unknown item",
                      before, after);
  if (kind == DEP_SENT && s->items[before].kind != FS_ITEM_FLOW)
    return fs_err_set(err, FS_EINVAL, "item %d is not a flow: it has no 'sent' time", before);
  if (fs__grow(&s->edges, &s->edges_cap, s->n_edges + 1, sizeof(*s->edges)))
    return fs_err_set(err, FS_ENOMEM, "out of memory adding dependency");
  s->edges[s->n_edges][0] = before;
  s->edges[s->n_edges][1] = after;
  s->edges[s->n_edges][2] = kind;
  s->n_edges++;
  return 0;
}

int fs_sim_add_dep(fs_sim *s, int32_t before, int32_t after, fs_err *err) {
  return add_edge(s, before, after, DEP_DONE, err);
}

int fs_sim_add_dep_sent(fs_sim *s, int32_t flow, int32_t after, fs_err *err) {
  return add_edge(s, flow, after, DEP_SENT, err);
}

/* Dependents in CSR form, in the order dependencies were added; a plan
 * instance's start lists first the instance, as -(index + 1) (its own
 * items' edges were the first from it, lazy.c). */
int fs__build_deps(fs_sim *s) {
  size_t n = s->n_items, ni = s->lazy.n_inst;
  s->dep_start = calloc(n + 1, sizeof(int32_t));
  s->dep_list = fs__malloc(s->n_edges + ni + 1, sizeof(int32_t));
  int32_t *fill = calloc(n + 1, sizeof(int32_t));
  if (!s->dep_start || !s->dep_list || !fill) {
    free(fill);
    return FS_ENOMEM;
  }
  for (size_t e = 0; e < s->n_edges; e++) {
    s->dep_start[s->edges[e][0] + 1]++;
    s->items[s->edges[e][1]].deps_left++;
  }
  for (size_t i = 0; i < ni; i++) s->dep_start[s->lazy.inst[i].start + 1]++;
  for (size_t i = 0; i < n; i++) s->dep_start[i + 1] += s->dep_start[i];
  for (size_t i = 0; i < ni; i++) {
    int32_t b = s->lazy.inst[i].start;
    s->dep_list[s->dep_start[b] + fill[b]++] = -(int32_t)i - 1;
  }
  for (size_t e = 0; e < s->n_edges; e++) {
    int32_t b = s->edges[e][0];
    s->dep_list[s->dep_start[b] + fill[b]++] = s->edges[e][1] * 2 + s->edges[e][2];
  }
  free(fill);
  return 0;
}

/* The item a dependents' entry leads to: a plan instance's done. */
static int32_t dep_target(const fs_sim *s, int32_t entry) {
  return entry < 0 ? s->lazy.inst[-entry - 1].done : entry / 2;
}

/* Kahn's algorithm; on a cycle, walks predecessors inside the unresolved
 * set until a node repeats, and records that loop. */
int fs__check_acyclic(fs_sim *s, fs_err *err) {
  size_t n = s->n_items;
  int32_t *indeg = fs__malloc(n, sizeof(int32_t));
  int32_t *queue = fs__malloc(n, sizeof(int32_t));
  if (!indeg || !queue) {
    free(indeg);
    free(queue);
    return fs_err_set(err, FS_ENOMEM, "out of memory checking dependencies");
  }
  size_t head = 0, tail = 0;
  /* (a plan instance stands between its start and done: an edge) */
  for (size_t i = 0; i < s->lazy.n_inst; i++) s->items[s->lazy.inst[i].done].deps_left++;
  for (size_t i = 0; i < n; i++) {
    indeg[i] = s->items[i].deps_left;
    if (!indeg[i]) queue[tail++] = (int32_t)i;
  }
  for (size_t i = 0; i < s->lazy.n_inst; i++) s->items[s->lazy.inst[i].done].deps_left--;
  while (head < tail) {
    int32_t u = queue[head++];
    for (int32_t k = s->dep_start[u]; k < s->dep_start[u + 1]; k++) {
      int32_t a = dep_target(s, s->dep_list[k]);
      if (--indeg[a] == 0) queue[tail++] = a;
    }
  }
  if (tail == n) {
    free(indeg);
    free(queue);
    return 0;
  }
  /* pred[v] = some unresolved predecessor of unresolved v. */
  int32_t *pred = queue; /* reuse */
  for (size_t i = 0; i < n; i++) pred[i] = -1;
  for (size_t e = 0; e < s->n_edges; e++) {
    int32_t b = s->edges[e][0], a = s->edges[e][1];
    if (indeg[b] > 0 && indeg[a] > 0 && pred[a] < 0) pred[a] = b;
  }
  for (size_t i = 0; i < s->lazy.n_inst; i++) {
    int32_t b = s->lazy.inst[i].start, a = s->lazy.inst[i].done;
    if (indeg[b] > 0 && indeg[a] > 0 && pred[a] < 0) pred[a] = b;
  }
  int32_t v = -1;
  for (size_t i = 0; i < n && v < 0; i++)
    if (indeg[i] > 0) v = (int32_t)i;
  /* Walking back n steps from any unresolved node lands inside a cycle. */
  for (size_t i = 0; i < n; i++) v = pred[v];
  int32_t len = 0;
  int32_t u = v;
  do {
    len++;
    u = pred[u];
  } while (u != v);
  s->cycle = malloc((size_t)len * sizeof(int32_t));
  if (s->cycle) {
    /* pred points backwards; store in dependency order. */
    u = v;
    for (int32_t i = len - 1; i >= 0; i--) {
      s->cycle[i] = u;
      u = pred[u];
    }
    s->cycle_len = len;
  }
  free(indeg);
  free(queue);
  return fs_err_set(err, FS_ECYCLE, "dependency cycle through %d items (first: item %d)",
                    len, v);
}

int32_t fs_sim_cycle(const fs_sim *s, int32_t *items, int32_t max) {
  int32_t n = s->cycle_len < max ? s->cycle_len : max;
  if (n > 0) memcpy(items, s->cycle, (size_t)n * sizeof(int32_t));
  return s->cycle_len;
}

/* ---- accessors ---- */
const fs_topo *fs_sim_topo(const fs_sim *s) { return s->core.t; }

int32_t fs_sim_n_items(const fs_sim *s) { return (int32_t)s->n_items; }

fs_item_kind fs_sim_item_kind(const fs_sim *s, int32_t item) {
  return (fs_item_kind)s->items[item].kind;
}

double fs_sim_start_s(const fs_sim *s, int32_t item) { return s->items[item].start_s; }

double fs_sim_finish_s(const fs_sim *s, int32_t item) { return s->items[item].finish_s; }

double fs_sim_makespan_s(const fs_sim *s) { return s->makespan; }

const fs_sim_link_stats *fs_sim_links(const fs_sim *s) { return s->link_stats; }

double fs_sim_link_multiplicity(const fs_sim *s, int32_t link) {
  if (!s->lrep) return 1;
  return s->lrep[link] == link ? s->lorb[link] : 0;
}

int fs_sim_get_link_bins(const fs_sim *s, fs_sim_link_bins *out) {
  memset(out, 0, sizeof(*out));
  if (!s->bins.n || !s->bins.used) return FS_EINVAL;
  out->n_bins = s->bins.used;
  out->stride = s->bins.L;
  out->width_s = s->bins.width;
  out->bytes = s->bins.b;
  return 0;
}

fs_sim_counters fs_sim_get_counters(const fs_sim *s) {
  fs_sim_counters c = s->counters;
  size_t L = (size_t)s->core.t->n_links, F = (size_t)s->core.n_flows;
  size_t bytes = s->items_cap * sizeof(sim_item) + s->flows_cap * sizeof(fs__flow) +
                 s->core.pos_cap * sizeof(int32_t) +
                 (size_t)s->core.n_proutes * sizeof(fs__proute) + s->arena.total +
                 L * (sizeof(fs__link_active) + sizeof(fs_sim_link_stats) + 5 * sizeof(double)) +
                 s->core.pos_len * 2 * sizeof(int32_t) /* link active lists, at most */ +
                 L * (size_t)s->bins.n * sizeof(double) +
                 (s->heap.runs.cap * sizeof(evrun) + s->heap.pl_cap * sizeof(evpl)) + s->n_edges * 4 * sizeof(int32_t);
  if (s->tf_slot) /* the tcp records and what the routes fix per flow */
    bytes += (size_t)s->tf_pool.n_chunks * FS__POOL_CHUNK * (sizeof(fs__tflow) + 2 * sizeof(int32_t)) +
             F * (sizeof(int32_t) + sizeof(double) + (s->tf_conn ? sizeof(fs__tconn) : 0));
  c.memory_bytes = bytes;
  c.tcp_records = s->tf_pool.used;
  c.packets = 0;
  for (int32_t i = 0; i < s->n_model; i++)
    if (s->model[i].m->counters) s->model[i].m->counters(s, s->model[i].st, &c);
  return c;
}

int32_t fs_sim_n_active(const fs_sim *s) { return s->n_active; }

int32_t fs_sim_active_flow(const fs_sim *s, int32_t i) {
  return s->core.flows[s->active_list[i]].item;
}

double fs_sim_flow_rate_bps(const fs_sim *s, int32_t item) {
  return s->core.flows[s->items[item].idx].rate * 8.0;
}

double fs_sim_flow_bytes(const fs_sim *s, int32_t item) {
  if (s->payload) return s->payload[s->items[item].idx]; /* f->bytes are on the wire */
  return s->core.flows[s->items[item].idx].bytes;
}

void fs_sim_flow_route(const fs_sim *s, int32_t item, const int32_t **links,
                       const double **weights, int32_t *n) {
  const fs__flow *f = &s->core.flows[s->items[item].idx];
  if (f->rid >= 0) { /* the route as added, not its rating part */
    const fs__proute *p = &s->core.proutes[f->rid];
    *links = p->links;
    *weights = p->w;
    *n = p->n;
    return;
  }
  *links = f->links;
  *weights = f->w;
  *n = f->n;
}

int32_t fs_sim_n_started(const fs_sim *s) { return s->n_started; }

int32_t fs_sim_started_flow(const fs_sim *s, int32_t i) { return s->started[i]; }

void fs_sim_flow_ends(const fs_sim *s, int32_t item, int32_t *src, int32_t *dst) {
  const fs__flow *f = &s->core.flows[s->items[item].idx];
  *src = f->src;
  *dst = f->dst;
}

int fs_sim_item_finished(const fs_sim *s, int32_t item) {
  return s->items[item].state == ST_DONE;
}

double fs_sim_now_s(const fs_sim *s) { return s->now; }

/* ---- the DAG as built ---- */
int64_t fs_sim_n_deps(const fs_sim *s) { return (int64_t)s->n_edges; }

void fs_sim_dep(const fs_sim *s, int64_t i, int32_t *before, int32_t *after, int *sent) {
  *before = s->edges[i][0];
  *after = s->edges[i][1];
  *sent = s->edges[i][2] == DEP_SENT;
}

void fs_sim_task_info(const fs_sim *s, int32_t item, int32_t *host, double *duration_s) {
  const task *t = &s->tasks[s->items[item].idx];
  *host = t->host;
  *duration_s = t->duration_s;
}

int fs_sim_replace_times(fs_sim *s, const double *start_s, const double *finish_s,
                         const double *busy_s, fs_err *err) {
  if (!s->ran) return fs_err_set(err, FS_EINVAL, "replacing the times of a simulation not run");
  double makespan = 0;
  for (size_t i = 0; i < s->n_items; i++) {
    s->items[i].start_s = start_s[i];
    s->items[i].finish_s = finish_s[i];
    if (finish_s[i] > makespan) makespan = finish_s[i];
  }
  s->makespan = makespan;
  if (busy_s)
    for (int32_t l = 0; l < s->core.t->n_links; l++) s->link_stats[l].busy_s = busy_s[l];
  return 0;
}
