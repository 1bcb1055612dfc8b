/* Routing and wavelength / spectrum assignment on the optical WAN: Yen's k
 * shortest loopless paths by km (Yen 1971), then per demand the first path
 * in reach of a format with free spectrum, assigned first-fit or most-used
 * with continuity (same units on every fibre) and contiguity (adjacent
 * slots) enforced, slices kept apart; and restoration after a fibre cut.
 * Cost per demand: k (V Dijkstra O(V^2)) for the paths, plus
 * O(k hops units) to scan spectrum. State: a fibres x units owner table. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/wan.h"
#include "wan_internal.h"

/* ---- paths ---- */

typedef struct graph {
  const fs_wan *w;
  int32_t *adj_start, *adj_fibre; /* CSR: fibres at each site, by neighbour id */
  double *dist;
  int32_t *hops, *prev_fibre;
  uint8_t *done, *ban_node, *ban_fibre;
} graph;

static void graph_free(graph *g) {
  FS__FREE_ALL(g->adj_start, g->adj_fibre, g->dist, g->hops, g->prev_fibre, g->done, g->ban_node,
               g->ban_fibre);
}

static int32_t other_end(const fs_wan *w, int32_t f, int32_t v) {
  return w->fibres[f].a == v ? w->fibres[f].b : w->fibres[f].a;
}

static int graph_init(graph *g, const fs_wan *w) {
  int32_t V = w->n_sites, E = w->n_fibres;
  memset(g, 0, sizeof(*g));
  g->w = w;
  g->adj_start = fs__calloc((size_t)V + 1, sizeof(int32_t));
  g->adj_fibre = fs__calloc((size_t)2 * E + 1, sizeof(int32_t));
  g->dist = fs__calloc((size_t)V, sizeof(double));
  g->hops = fs__calloc((size_t)V, sizeof(int32_t));
  g->prev_fibre = fs__calloc((size_t)V, sizeof(int32_t));
  g->done = fs__calloc((size_t)V, 1);
  g->ban_node = fs__calloc((size_t)V, 1);
  g->ban_fibre = fs__calloc((size_t)E + 1, 1);
  if (!g->adj_start || !g->adj_fibre || !g->dist || !g->hops || !g->prev_fibre || !g->done ||
      !g->ban_node || !g->ban_fibre) {
    graph_free(g);
    return FS_ENOMEM;
  }
  for (int32_t f = 0; f < E; f++) {
    g->adj_start[w->fibres[f].a + 1]++;
    g->adj_start[w->fibres[f].b + 1]++;
  }
  for (int32_t v = 0; v < V; v++) g->adj_start[v + 1] += g->adj_start[v];
  int32_t *fill = fs__calloc((size_t)V + 1, sizeof(int32_t));
  if (!fill) {
    graph_free(g);
    return FS_ENOMEM;
  }
  for (int32_t f = 0; f < E; f++) {
    int32_t a = w->fibres[f].a, b = w->fibres[f].b;
    g->adj_fibre[g->adj_start[a] + fill[a]++] = f;
    g->adj_fibre[g->adj_start[b] + fill[b]++] = f;
  }
  free(fill);
  return 0;
}

/* Dijkstra by km from s to t avoiding banned sites and fibres; ties on km
 * go to fewer hops, then to the first relaxation (lowest site id settled
 * first, fibres in id order): deterministic. Fills path (caller frees its
 * arrays) and returns 1, 0 if t is unreachable, or FS_ENOMEM. */
static int dijkstra(graph *g, int32_t s, int32_t t, fs_wan_path *path) {
  const fs_wan *w = g->w;
  int32_t V = w->n_sites;
  for (int32_t v = 0; v < V; v++) {
    g->dist[v] = INFINITY;
    g->done[v] = 0;
    g->prev_fibre[v] = -1;
    g->hops[v] = 0;
  }
  g->dist[s] = 0;
  for (;;) {
    int32_t u = -1;
    for (int32_t v = 0; v < V; v++) {
      if (g->done[v] || g->ban_node[v] || !isfinite(g->dist[v])) continue;
      if (u < 0 || g->dist[v] < g->dist[u] || (g->dist[v] == g->dist[u] && g->hops[v] < g->hops[u]))
        u = v;
    }
    if (u < 0) return 0;
    if (u == t) break;
    g->done[u] = 1;
    for (int32_t i = g->adj_start[u]; i < g->adj_start[u + 1]; i++) {
      int32_t f = g->adj_fibre[i], v = other_end(w, f, u);
      if (g->ban_fibre[f] || g->ban_node[v] || g->done[v]) continue;
      double nd = g->dist[u] + w->fibres[f].km;
      if (nd < g->dist[v] || (nd == g->dist[v] && g->hops[u] + 1 < g->hops[v])) {
        g->dist[v] = nd;
        g->hops[v] = g->hops[u] + 1;
        g->prev_fibre[v] = f;
      }
    }
  }
  int32_t h = g->hops[t];
  path->hops = h;
  path->nodes = fs__malloc((size_t)h + 1, sizeof(int32_t));
  path->fibres = fs__malloc((size_t)h + 1, sizeof(int32_t));
  if (!path->nodes || !path->fibres) {
    free(path->nodes);
    free(path->fibres);
    return FS_ENOMEM;
  }
  int32_t v = t;
  path->nodes[h] = t;
  for (int32_t i = h - 1; i >= 0; i--) {
    int32_t f = g->prev_fibre[v];
    path->fibres[i] = f;
    v = other_end(w, f, v);
    path->nodes[i] = v;
  }
  path->km = g->dist[t];
  return 1;
}

void fs_wan_paths_free(fs_wan_path *p, int32_t n) {
  if (!p) return;
  for (int32_t i = 0; i < n; i++) {
    free(p[i].nodes);
    free(p[i].fibres);
  }
  free(p);
}

/* km summed from the source, so equal paths always get equal sums. */
static double path_km(const fs_wan *w, const fs_wan_path *p) {
  double km = 0;
  for (int32_t i = 0; i < p->hops; i++) km += w->fibres[p->fibres[i]].km;
  return km;
}

static int path_cmp(const fs_wan_path *a, const fs_wan_path *b) {
  if (a->km != b->km) return a->km < b->km ? -1 : 1;
  if (a->hops != b->hops) return a->hops < b->hops ? -1 : 1;
  for (int32_t i = 0; i <= a->hops; i++)
    if (a->nodes[i] != b->nodes[i]) return a->nodes[i] < b->nodes[i] ? -1 : 1;
  return 0;
}

static int path_same(const fs_wan_path *a, const fs_wan_path *b) {
  if (a->hops != b->hops) return 0;
  return memcmp(a->nodes, b->nodes, ((size_t)a->hops + 1) * sizeof(int32_t)) == 0;
}

static int push_path(fs_wan_path **arr, int32_t *n, size_t *cap, fs_wan_path p) {
  if (fs__grow(arr, cap, (size_t)*n + 1, sizeof(**arr))) return FS_ENOMEM;
  (*arr)[(*n)++] = p;
  return 0;
}

static int ksp(graph *g, int32_t src, int32_t dst, int32_t k, int32_t cut, fs_wan_path **out,
               int32_t *n_out) {
  const fs_wan *w = g->w;
  fs_wan_path *A = NULL, *B = NULL;
  int32_t nA = 0, nB = 0;
  size_t capA = 0, capB = 0;
  int rc = 0;
  memset(g->ban_node, 0, (size_t)w->n_sites);
  memset(g->ban_fibre, 0, (size_t)w->n_fibres);
  if (cut >= 0) g->ban_fibre[cut] = 1;
  fs_wan_path p0 = {0, NULL, NULL, 0};
  rc = dijkstra(g, src, dst, &p0);
  if (rc < 0) goto fail;
  if (rc == 1) {
    p0.km = path_km(w, &p0);
    if ((rc = push_path(&A, &nA, &capA, p0))) {
      free(p0.nodes), free(p0.fibres);
      goto fail;
    }
  }
  rc = 0;
  while (nA > 0 && nA < k) {
    const fs_wan_path *prev = &A[nA - 1];
    for (int32_t j = 0; j < prev->hops; j++) {
      memset(g->ban_node, 0, (size_t)w->n_sites);
      memset(g->ban_fibre, 0, (size_t)w->n_fibres);
      if (cut >= 0) g->ban_fibre[cut] = 1;
      /* Paths already found that share this root may not leave the spur
       * node by the same fibre; the root's nodes are off limits. */
      for (int32_t a = 0; a < nA; a++)
        if (A[a].hops > j &&
            memcmp(A[a].nodes, prev->nodes, ((size_t)j + 1) * sizeof(int32_t)) == 0)
          g->ban_fibre[A[a].fibres[j]] = 1;
      for (int32_t i = 0; i < j; i++) g->ban_node[prev->nodes[i]] = 1;
      fs_wan_path sp = {0, NULL, NULL, 0};
      rc = dijkstra(g, prev->nodes[j], dst, &sp);
      if (rc < 0) goto fail;
      if (rc == 0) continue;
      rc = 0;
      fs_wan_path tot = {j + sp.hops, fs__malloc((size_t)(j + sp.hops) + 1, sizeof(int32_t)),
                         fs__malloc((size_t)(j + sp.hops) + 1, sizeof(int32_t)), 0};
      if (!tot.nodes || !tot.fibres) {
        free(tot.nodes), free(tot.fibres), free(sp.nodes), free(sp.fibres);
        rc = FS_ENOMEM;
        goto fail;
      }
      memcpy(tot.nodes, prev->nodes, (size_t)j * sizeof(int32_t));
      memcpy(tot.fibres, prev->fibres, (size_t)j * sizeof(int32_t));
      memcpy(tot.nodes + j, sp.nodes, ((size_t)sp.hops + 1) * sizeof(int32_t));
      memcpy(tot.fibres + j, sp.fibres, (size_t)sp.hops * sizeof(int32_t));
      free(sp.nodes), free(sp.fibres);
      tot.km = path_km(w, &tot);
      int dup = 0;
      for (int32_t a = 0; a < nA && !dup; a++) dup = path_same(&A[a], &tot);
      for (int32_t b = 0; b < nB && !dup; b++) dup = path_same(&B[b], &tot);
      if (dup || push_path(&B, &nB, &capB, tot)) {
        free(tot.nodes), free(tot.fibres);
        if (!dup) {
          rc = FS_ENOMEM;
          goto fail;
        }
      }
    }
    if (nB == 0) break;
    int32_t best = 0;
    for (int32_t b = 1; b < nB; b++)
      if (path_cmp(&B[b], &B[best]) < 0) best = b;
    if ((rc = push_path(&A, &nA, &capA, B[best]))) goto fail;
    B[best] = B[--nB];
  }
  fs_wan_paths_free(B, nB);
  *out = A;
  *n_out = nA;
  return 0;
fail:
  fs_wan_paths_free(A, nA);
  fs_wan_paths_free(B, nB);
  return rc < 0 ? rc : FS_ENOMEM;
}

int fs_wan_k_shortest(const fs_wan *w, int32_t src, int32_t dst, int32_t k, int32_t cut,
                      fs_wan_path **out, int32_t *n, fs_err *err) {
  *out = NULL;
  *n = 0;
  if (src < 0 || src >= w->n_sites || dst < 0 || dst >= w->n_sites || src == dst)
    return fs_err_set(err, FS_EINVAL, "k shortest paths: bad sites %d -> %d", src, dst);
  if (k < 1 || k > FS_WAN_MAX_K)
    return fs_err_set(err, FS_EINVAL, "k shortest paths: k must be in [1, %d], got %d",
                      FS_WAN_MAX_K, k);
  if (cut < -1 || cut >= w->n_fibres)
    return fs_err_set(err, FS_EINVAL, "k shortest paths: bad fibre %d", cut);
  graph g;
  if (graph_init(&g, w)) return fs_err_set(err, FS_ENOMEM, "out of memory");
  int rc = ksp(&g, src, dst, k, cut, out, n);
  graph_free(&g);
  if (rc) return fs_err_set(err, rc, "out of memory in k shortest paths");
  return 0;
}

/* ---- provisioning ---- */

int fs_wan_algo_parse(const char *name, fs_wan_algo *out) {
  if (strcmp(name, "first-fit") == 0) *out = FS_WAN_FIRST_FIT;
  else if (strcmp(name, "most-used") == 0) *out = FS_WAN_MOST_USED;
  else return FS_EINVAL;
  return 0;
}

const char *fs_wan_algo_name(fs_wan_algo a) {
  return a == FS_WAN_MOST_USED ? "most-used" : "first-fit";
}

const char *fs_wan_status_name(fs_wan_status s) {
  switch (s) {
    case FS_WAN_OK: return "ok";
    case FS_WAN_BLOCKED_SPECTRUM: return "spectrum";
    case FS_WAN_BLOCKED_REACH: return "reach";
    default: return "no-path";
  }
}

/* Working state of a provisioning run. */
typedef struct prov {
  fs_wan_plan *p;
  graph g;
  int32_t *slice_of; /* [fibre * units + u]: slice id or -1 */
  int32_t *usage;    /* [u]: fibres on which unit u is held */
  int32_t *cand;     /* [units] scratch */
} prov;

void fs_wan_plan_free(fs_wan_plan *p) {
  if (!p) return;
  for (int32_t i = 0; i < p->n_lps; i++) {
    free(p->lps[i].path.nodes);
    free(p->lps[i].path.fibres);
  }
  FS__FREE_ALL(p->lps, p->demands, p->status, p->lp_first, p->lp_n, p->owner, p);
}

static fs_wan_plan *plan_new(const fs_wan *w, const fs_wan_demand *d, int32_t n,
                             const fs_wan_prov_opts *o) {
  fs_wan_plan *p = fs__calloc(1, sizeof(*p));
  if (!p) return NULL;
  p->w = w;
  p->opts = *o;
  p->n_demands = n;
  size_t cells = (size_t)w->n_fibres * (size_t)w->grid.units;
  p->demands = fs__malloc((size_t)n + 1, sizeof(*p->demands));
  p->status = fs__calloc((size_t)n + 1, sizeof(*p->status));
  p->lp_first = fs__calloc((size_t)n + 1, sizeof(int32_t));
  p->lp_n = fs__calloc((size_t)n + 1, sizeof(int32_t));
  p->owner = fs__malloc(cells, sizeof(int32_t));
  if (!p->demands || !p->status || !p->lp_first || !p->lp_n || !p->owner) {
    fs_wan_plan_free(p);
    return NULL;
  }
  if (n) memcpy(p->demands, d, (size_t)n * sizeof(*d));
  for (size_t i = 0; i < cells; i++) p->owner[i] = -1;
  return p;
}

static void prov_free(prov *s) {
  graph_free(&s->g);
  FS__FREE_ALL(s->slice_of, s->usage, s->cand);
}

static int prov_init(prov *s, fs_wan_plan *p) {
  const fs_wan *w = p->w;
  int32_t U = w->grid.units;
  memset(s, 0, sizeof(*s));
  s->p = p;
  size_t cells = (size_t)w->n_fibres * (size_t)U;
  s->slice_of = fs__malloc(cells, sizeof(int32_t));
  s->usage = fs__calloc((size_t)U, sizeof(int32_t));
  s->cand = fs__calloc((size_t)U, sizeof(int32_t));
  if (!s->slice_of || !s->usage || !s->cand || graph_init(&s->g, w)) {
    free(s->slice_of), free(s->usage), free(s->cand);
    return FS_ENOMEM;
  }
  for (size_t i = 0; i < cells; i++) s->slice_of[i] = -1;
  for (int32_t i = 0; i < w->n_slices; i++) {
    const fs_wan_slice *sl = &w->slices[i];
    for (int32_t x = 0; x < sl->n_fibres; x++)
      for (int32_t u = sl->first; u < sl->first + sl->count; u++)
        s->slice_of[(size_t)sl->fibres[x] * U + u] = i;
  }
  for (size_t i = 0; i < cells; i++)
    if (p->owner[i] >= 0) s->usage[i % (size_t)U]++;
  return 0;
}

/* Unit u free for demand d on every fibre of path (continuity). */
static int unit_free(const prov *s, const fs_wan_path *path, int32_t slice, int32_t u) {
  int32_t U = s->p->w->grid.units;
  for (int32_t i = 0; i < path->hops; i++) {
    size_t c = (size_t)path->fibres[i] * U + u;
    if (s->p->owner[c] >= 0 || s->slice_of[c] != slice) return 0;
  }
  return 1;
}

static int add_lp(fs_wan_plan *p, const fs_wan_lightpath *lp) {
  if (fs__grow(&p->lps, &p->lps_cap, (size_t)p->n_lps + 1, sizeof(*p->lps)))
    return FS_ENOMEM;
  p->lps[p->n_lps++] = *lp;
  return 0;
}

int fs__wan_path_dup(const fs_wan_path *a, fs_wan_path *b) {
  *b = *a;
  b->nodes = fs__malloc((size_t)a->hops + 1, sizeof(int32_t));
  b->fibres = fs__malloc((size_t)a->hops + 1, sizeof(int32_t));
  if (!b->nodes || !b->fibres) {
    free(b->nodes), free(b->fibres);
    b->nodes = b->fibres = NULL;
    return FS_ENOMEM;
  }
  memcpy(b->nodes, a->nodes, ((size_t)a->hops + 1) * sizeof(int32_t));
  memcpy(b->fibres, a->fibres, (size_t)a->hops * sizeof(int32_t));
  return 0;
}

/* Appends a lightpath on `path` holding units [first, first + count) and
 * marks them on every fibre of the path. */
static int commit(prov *s, int32_t di, const fs_wan_path *path, int32_t m, int32_t first,
                  int32_t count, int32_t guard, double line, double gbps) {
  fs_wan_plan *p = s->p;
  int32_t U = p->w->grid.units;
  fs_wan_lightpath lp;
  memset(&lp, 0, sizeof(lp));
  lp.demand = di;
  lp.mod = m;
  lp.first = first;
  lp.count = count;
  lp.guard = guard;
  lp.line_gbps = line;
  lp.gbps = gbps;
  if (fs__wan_path_dup(path, &lp.path)) return FS_ENOMEM;
  if (add_lp(p, &lp)) {
    free(lp.path.nodes), free(lp.path.fibres);
    return FS_ENOMEM;
  }
  for (int32_t i = 0; i < path->hops; i++)
    for (int32_t u = first; u < first + count; u++)
      p->owner[(size_t)path->fibres[i] * U + u] = p->n_lps - 1;
  for (int32_t u = first; u < first + count; u++) s->usage[u] += path->hops;
  p->lp_n[di]++;
  return 0;
}

/* Places demand di on the first of its candidate paths (fibre cut
 * excluded) that is in reach and has the spectrum; sets its status.
 * Returns 0 or FS_ENOMEM. */
static int place(prov *s, int32_t di, int32_t cut) {
  fs_wan_plan *p = s->p;
  const fs_wan *w = p->w;
  const fs_wan_demand *d = &p->demands[di];
  int32_t U = w->grid.units;
  fs_wan_path *paths = NULL;
  int32_t np = 0;
  int rc = ksp(&s->g, d->src, d->dst, p->opts.k, cut, &paths, &np);
  if (rc) return rc;
  p->lp_first[di] = p->n_lps;
  p->lp_n[di] = 0;
  p->status[di] = np == 0 ? FS_WAN_BLOCKED_NOPATH : FS_WAN_BLOCKED_REACH;
  for (int32_t i = 0; i < np && p->status[di] != FS_WAN_OK; i++) {
    const fs_wan_path *path = &paths[i];
    int32_t m = fs_wan_mod_for_km(w, path->km);
    if (m < 0) continue;
    p->status[di] = FS_WAN_BLOCKED_SPECTRUM;
    double rate = fs_wan_unit_gbps(w, m);
    double needf = ceil(d->gbps / rate - 1e-9);
    int32_t guard = w->grid.kind == FS_WAN_FLEX ? w->grid.guard : 0;
    if (needf < 1) needf = 1;
    if (needf + guard > U) continue;
    int32_t need = (int32_t)needf, nc = 0;
    for (int32_t u = 0; u < U; u++) s->cand[u] = unit_free(s, path, d->slice, u);
    if (w->grid.kind == FS_WAN_FIXED) {
      /* Wavelengths one by one: the lowest free (first-fit) or the one
       * held on the most fibres, ties to the lowest (most-used). */
      for (int32_t u = 0; u < U; u++) nc += s->cand[u];
      if (nc < need) continue;
      double left = d->gbps;
      for (int32_t t = 0; t < need; t++) {
        int32_t best = -1;
        for (int32_t u = 0; u < U; u++) {
          if (!s->cand[u]) continue;
          if (best < 0 || (p->opts.algo == FS_WAN_MOST_USED && s->usage[u] > s->usage[best]))
            best = u;
          if (p->opts.algo == FS_WAN_FIRST_FIT) break;
        }
        s->cand[best] = 0;
        double g = left < rate ? left : rate;
        left -= g;
        if ((rc = commit(s, di, path, m, best, 1, 0, rate, g))) goto out;
      }
      p->status[di] = FS_WAN_OK;
    } else {
      /* Blocks of cnt adjacent free slots: the lowest start (first-fit)
       * or the one whose slots are held on the most fibres in total, ties
       * to the lowest start (most-used). */
      int32_t cnt = need + guard, run = 0, best = -1;
      int64_t sum = 0, best_sum = -1;
      for (int32_t u = 0; u < U; u++) {
        run = s->cand[u] ? run + 1 : 0;
        sum += s->usage[u];
        if (u >= cnt) sum -= s->usage[u - cnt];
        if (run < cnt) continue;
        if (best < 0 || (p->opts.algo == FS_WAN_MOST_USED && sum > best_sum)) {
          best = u - cnt + 1;
          best_sum = sum;
        }
        if (p->opts.algo == FS_WAN_FIRST_FIT) break;
      }
      if (best < 0) continue;
      if ((rc = commit(s, di, path, m, best, cnt, guard, need * rate, d->gbps))) goto out;
      p->status[di] = FS_WAN_OK;
    }
  }
out:
  fs_wan_paths_free(paths, np);
  return rc;
}

static void tally(fs_wan_plan *p) {
  p->blocked = 0;
  p->offered_gbps = p->blocked_gbps = 0;
  for (int32_t i = 0; i < p->n_demands; i++) {
    p->offered_gbps += p->demands[i].gbps;
    if (p->status[i] != FS_WAN_OK) {
      p->blocked++;
      p->blocked_gbps += p->demands[i].gbps;
    }
  }
}

static int check_opts(const fs_wan *w, const fs_wan_demand *d, int32_t n,
                      const fs_wan_prov_opts *o, fs_err *err) {
  if (o->k < 1 || o->k > FS_WAN_MAX_K)
    return fs_err_set(err, FS_EINVAL, "k must be in [1, %d], got %d", FS_WAN_MAX_K, o->k);
  if (o->algo != FS_WAN_FIRST_FIT && o->algo != FS_WAN_MOST_USED)
    return fs_err_set(err, FS_EINVAL, "unknown assignment algorithm %d", (int)o->algo);
  if (o->cut < -1 || o->cut >= w->n_fibres)
    return fs_err_set(err, FS_EINVAL, "cut: no fibre %d", o->cut);
  for (int32_t i = 0; i < n; i++)
    if (d[i].src < 0 || d[i].src >= w->n_sites || d[i].dst < 0 || d[i].dst >= w->n_sites ||
        d[i].src == d[i].dst || !(d[i].gbps > 0) || d[i].slice < -1 || d[i].slice >= w->n_slices)
      return fs_err_set(err, FS_EINVAL, "demand %d: bad sites, rate or slice", i);
  return 0;
}

int fs_wan_provision(const fs_wan *w, const fs_wan_demand *d, int32_t n,
                     const fs_wan_prov_opts *o, fs_wan_plan **out, fs_err *err) {
  *out = NULL;
  int rc = check_opts(w, d, n, o, err);
  if (rc) return rc;
  fs_wan_plan *p = plan_new(w, d, n, o);
  prov s;
  if (!p || prov_init(&s, p)) {
    fs_wan_plan_free(p);
    return fs_err_set(err, FS_ENOMEM, "out of memory provisioning");
  }
  p->opts.cut = o->cut;
  for (int32_t i = 0; i < n && !rc; i++) rc = place(&s, i, o->cut);
  prov_free(&s);
  if (rc) {
    fs_wan_plan_free(p);
    return fs_err_set(err, rc, "out of memory provisioning");
  }
  tally(p);
  *out = p;
  return 0;
}

static int uses_fibre(const fs_wan_path *path, int32_t f) {
  for (int32_t i = 0; i < path->hops; i++)
    if (path->fibres[i] == f) return 1;
  return 0;
}

int fs_wan_restore(const fs_wan_plan *before, int32_t cut, fs_wan_plan **out, fs_err *err) {
  const fs_wan *w = before->w;
  *out = NULL;
  if (before->opts.cut != -1)
    return fs_err_set(err, FS_EINVAL, "restore: the plan already has a cut fibre");
  if (cut < 0 || cut >= w->n_fibres) return fs_err_set(err, FS_EINVAL, "restore: no fibre %d", cut);
  fs_wan_prov_opts o = before->opts;
  o.cut = cut;
  int32_t n = before->n_demands, U = w->grid.units;
  fs_wan_plan *p = plan_new(w, before->demands, n, &o);
  fs_wan_lightpath *kept = NULL;
  uint8_t *affected = fs__calloc((size_t)n + 1, 1);
  prov s;
  int have_s = 0, rc = 0;
  if (!p || !affected) goto oom;
  memcpy(p->status, before->status, (size_t)n * sizeof(*p->status));
  memcpy(p->lp_first, before->lp_first, (size_t)n * sizeof(int32_t));
  memcpy(p->lp_n, before->lp_n, (size_t)n * sizeof(int32_t));
  memcpy(p->owner, before->owner, (size_t)w->n_fibres * U * sizeof(int32_t));
  for (int32_t j = 0; j < before->n_lps; j++) {
    fs_wan_lightpath lp = before->lps[j];
    if (fs__wan_path_dup(&before->lps[j].path, &lp.path) || add_lp(p, &lp)) {
      free(lp.path.nodes), free(lp.path.fibres);
      goto oom;
    }
  }
  if (prov_init(&s, p)) goto oom;
  have_s = 1;
  /* Old spectrum stays held while the affected demands are re-placed in
   * their original order: each then sees at least the occupancy it saw
   * when first placed, so it never gets a shorter path (model-wan.md). */
  for (int32_t di = 0; di < n; di++) {
    if (p->status[di] != FS_WAN_OK) continue;
    for (int32_t j = 0; j < p->lp_n[di] && !affected[di]; j++)
      affected[di] = (uint8_t)uses_fibre(&p->lps[p->lp_first[di] + j].path, cut);
    if (!affected[di]) continue;
    p->restored += p->lp_n[di];
    if ((rc = place(&s, di, cut))) goto oom;
  }
  /* Release the old lightpaths: keep each demand's current ones, in
   * demand order, and rebuild the owner table. */
  kept = fs__malloc((size_t)p->n_lps + 1, sizeof(*kept));
  uint8_t *keep = fs__calloc((size_t)p->n_lps + 1, 1);
  if (!kept || !keep) {
    free(keep);
    goto oom;
  }
  int32_t nk = 0;
  for (int32_t di = 0; di < n; di++) {
    int32_t f = p->lp_first[di];
    p->lp_first[di] = nk;
    for (int32_t j = 0; j < p->lp_n[di]; j++) {
      keep[f + j] = 1;
      kept[nk++] = p->lps[f + j];
    }
  }
  for (int32_t j = 0; j < p->n_lps; j++)
    if (!keep[j]) free(p->lps[j].path.nodes), free(p->lps[j].path.fibres);
  free(keep);
  free(p->lps);
  p->lps = kept;
  kept = NULL;
  p->n_lps = nk;
  p->lps_cap = (size_t)nk + 1;
  for (size_t i = 0; i < (size_t)w->n_fibres * U; i++) p->owner[i] = -1;
  for (int32_t j = 0; j < nk; j++) {
    const fs_wan_lightpath *lp = &p->lps[j];
    for (int32_t i = 0; i < lp->path.hops; i++)
      for (int32_t u = lp->first; u < lp->first + lp->count; u++)
        p->owner[(size_t)lp->path.fibres[i] * U + u] = j;
  }
  prov_free(&s);
  free(affected);
  tally(p);
  *out = p;
  return 0;
oom:
  if (have_s) prov_free(&s);
  free(affected);
  free(kept);
  fs_wan_plan_free(p);
  return fs_err_set(err, FS_ENOMEM, "out of memory restoring");
}

int fs_wan_plan_check(const fs_wan_plan *p, fs_err *err) {
  const fs_wan *w = p->w;
  int32_t U = w->grid.units;
  size_t cells = (size_t)w->n_fibres * U, held = 0, owned = 0;
  int32_t *slice_of = fs__malloc(cells + 1, sizeof(int32_t));
  if (!slice_of) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (size_t i = 0; i < cells; i++) slice_of[i] = -1;
  for (int32_t i = 0; i < w->n_slices; i++)
    for (int32_t x = 0; x < w->slices[i].n_fibres; x++)
      for (int32_t u = w->slices[i].first; u < w->slices[i].first + w->slices[i].count; u++)
        slice_of[(size_t)w->slices[i].fibres[x] * U + u] = i;
  int rc = 0;
#define BAD(...)                                        \
  do {                                                  \
    rc = fs_err_set(err, FS_EINTERNAL, __VA_ARGS__);    \
    goto out;                                           \
  } while (0)
  for (int32_t di = 0; di < p->n_demands; di++) {
    const fs_wan_demand *d = &p->demands[di];
    double sum = 0;
    if ((p->status[di] == FS_WAN_OK) != (p->lp_n[di] > 0))
      BAD("demand %d: status %s with %d lightpaths", di, fs_wan_status_name(p->status[di]),
          p->lp_n[di]);
    for (int32_t j = p->lp_first[di]; j < p->lp_first[di] + p->lp_n[di]; j++) {
      if (j < 0 || j >= p->n_lps) BAD("demand %d: lightpath %d out of range", di, j);
      const fs_wan_lightpath *lp = &p->lps[j];
      const fs_wan_path *pa = &lp->path;
      if (lp->demand != di) BAD("lightpath %d: demand %d, listed under %d", j, lp->demand, di);
      if (pa->hops < 1 || pa->nodes[0] != d->src || pa->nodes[pa->hops] != d->dst)
        BAD("lightpath %d: does not join the demand's sites", j);
      double km = 0;
      for (int32_t i = 0; i < pa->hops; i++) {
        int32_t f = pa->fibres[i];
        if (f < 0 || f >= w->n_fibres || f == p->opts.cut)
          BAD("lightpath %d: hop %d on fibre %d (cut %d)", j, i, f, p->opts.cut);
        const fs_wan_fibre *fb = &w->fibres[f];
        if (!((fb->a == pa->nodes[i] && fb->b == pa->nodes[i + 1]) ||
              (fb->b == pa->nodes[i] && fb->a == pa->nodes[i + 1])))
          BAD("lightpath %d: hop %d: fibre %d does not join its sites", j, i, f);
        for (int32_t x = 0; x < i; x++)
          if (pa->nodes[x] == pa->nodes[i + 1]) BAD("lightpath %d: visits a site twice", j);
        km += fb->km;
        if (lp->first < 0 || lp->count < 1 || lp->first + lp->count > U)
          BAD("lightpath %d: units [%d, %d) outside the grid", j, lp->first,
              lp->first + lp->count);
        /* continuity and contiguity: the same adjacent units on every fibre */
        for (int32_t u = lp->first; u < lp->first + lp->count; u++) {
          size_t c = (size_t)f * U + u;
          if (p->owner[c] != j)
            BAD("lightpath %d: unit %d on fibre %d held by %d", j, u, f, p->owner[c]);
          if (slice_of[c] != d->slice)
            BAD("lightpath %d: unit %d on fibre %d in slice %d, demand's %d", j, u, f,
                slice_of[c], d->slice);
          held++;
        }
      }
      if (fabs(km - pa->km) > 1e-9 * (1 + km)) BAD("lightpath %d: km %g, fibres sum %g", j, pa->km, km);
      if (lp->mod < 0 || lp->mod >= w->n_mods || w->mods[lp->mod].reach_km < km)
        BAD("lightpath %d: format %d out of reach for %g km", j, lp->mod, km);
      if (w->grid.kind == FS_WAN_FIXED && lp->count != 1)
        BAD("lightpath %d: %d wavelengths", j, lp->count);
      if (lp->gbps > lp->line_gbps * (1 + 1e-12) ||
          fabs(lp->line_gbps - (lp->count - lp->guard) * fs_wan_unit_gbps(w, lp->mod)) >
              1e-9 * lp->line_gbps)
        BAD("lightpath %d: rate %g over line rate %g", j, lp->gbps, lp->line_gbps);
      sum += lp->gbps;
    }
    if (p->status[di] == FS_WAN_OK && fabs(sum - d->gbps) > 1e-9 * d->gbps)
      BAD("demand %d: lightpaths carry %g of %g Gb/s", di, sum, d->gbps);
  }
  for (size_t i = 0; i < cells; i++) owned += p->owner[i] >= 0;
  if (owned != held) BAD("%zu units held in the table, %zu by lightpaths", owned, held);
#undef BAD
out:
  free(slice_of);
  return rc;
}
