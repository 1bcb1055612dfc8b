/* The greedy optimiser and the ECMP baseline (docs/model-route.md).
 *
 * Greedy works on the load proxy load(k, l) = sum of the demands routed over
 * link l in concurrent set k, over its capacity: a set whose max load is Z
 * lets every flow reach at least 1/Z of its demand (if all flows scale
 * alike), so minimising Z maximises the minimum normalised throughput,
 * the first level of the objective. Placing a flow costs O(paths x hops).
 * Improvement moves a flow off a most loaded link by an ejection chain
 * (depth-first, flows displaced from at most two links per step, a budget
 * of 20000 steps): each kept chain lowers (max load, links at the max)
 * lexicographically, so the loop ends; it stops at a lower bound. On the
 * benchmark: ~70 chains, ~4.5 ms. Memory: n_sets x n_links loads and flow
 * lists, small next to the candidate paths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "opt_internal.h"

/* ---- baselines ----------------------------------------------------------- */

int fs__routeopt_ecmp(fs_routeopt_problem *p, uint64_t seed, int32_t *choice, fs_err *err) {
  fs_route r;
  fs_route_init(&r);
  int rc = 0;
  for (int32_t f = 0; f < p->n_flows && !rc; f++) {
    const fs_routeopt_flow *fl = &p->tr->flows[f];
    /* one connection per peer pair, as fs_route_cache keys it */
    uint64_t key = fs__mix64(((uint64_t)(uint32_t)fl->src << 32 | (uint32_t)fl->dst) + 1);
    if ((rc = fs_route_ecmp(p->router, fl->src, fl->dst, seed, key, &r, err))) break;
    choice[f] = -2;
    for (int32_t c = 0; c < p->n_paths[f] && choice[f] < 0; c++) {
      int32_t h;
      const int32_t *pl = fs_routeopt_path(p, f, c, &h);
      if (h == r.n && memcmp(pl, r.links, (size_t)h * sizeof(int32_t)) == 0) choice[f] = c;
    }
    if (choice[f] < 0)
      rc = fs_err_set(err, FS_EINTERNAL, "flow %d: ECMP path is not a candidate", f);
  }
  fs_route_free(&r);
  return rc;
}

/* ---- greedy -------------------------------------------------------------- */

/* The flows on one link in one set (a handful: a ring flow per host). */
typedef struct on_list {
  int32_t *v;
  int32_t n, cap;
} on_list;

typedef struct greedy {
  fs_routeopt_problem *p;
  double *load;    /* n_sets x n_links, demand / capacity */
  on_list *on;     /* n_sets x n_links: flows routed over the link */
  int32_t *choice; /* current path of each placed flow */
  uint8_t *in_chain;
  int64_t budget;  /* search steps left for this improvement */
  double lb;       /* no routing has a lower max load (fixed loads, and
                      each flow alone on its best path) */
  int32_t *stack;  /* flows a chain still has to place */
  int32_t *was;    /* per flow: the path a chain took it off */
  int32_t *marked, n_marked; /* flows with in_chain set */
  uint8_t *blk;      /* FRAMES x max_paths: blocked counts per nested call */
  int32_t frame;      /* place_all calls in progress */
  int32_t max_paths;
  int oom;
} greedy;

static size_t at(const greedy *g, int32_t k, int32_t l) {
  return (size_t)k * (size_t)g->p->t->n_links + (size_t)l;
}

static double *load_at(greedy *g, int32_t k) {
  return g->load + at(g, k, 0);
}

/* Adds (sign > 0) or removes flow f on path c, in every set it runs in. */
static void apply(greedy *g, int32_t f, int32_t c, double sign) {
  fs_routeopt_problem *p = g->p;
  int32_t h;
  const int32_t *pl = fs_routeopt_path(p, f, c, &h);
  for (int32_t k = 0; k < p->n_sets; k++) {
    if (!fs__routeopt_in_set(p, f, k)) continue;
    for (int32_t i = 0; i < h; i++) {
      size_t x = at(g, k, pl[i]);
      g->load[x] += sign * p->demand_bps[f] / p->t->links[pl[i]].capacity_bps;
      on_list *o = &g->on[x];
      if (sign > 0) {
        if (o->n == o->cap) {
          int32_t nc = o->cap ? 2 * o->cap : 4;
          int32_t *nv = realloc(o->v, (size_t)nc * sizeof(*nv));
          if (!nv) {
            g->oom = 1;
            continue;
          }
          o->v = nv;
          o->cap = nc;
        }
        o->v[o->n++] = f;
      } else {
        for (int32_t m = 0; m < o->n; m++)
          if (o->v[m] == f) {
            o->v[m] = o->v[--o->n];
            break;
          }
      }
    }
  }
}

/* The max load on path c if flow f (not placed) were added; *sum gets the
 * sum of those loads (a tie-breaker that prefers emptier paths). */
static double path_cost(greedy *g, int32_t f, int32_t c, double *sum) {
  fs_routeopt_problem *p = g->p;
  int32_t h;
  const int32_t *pl = fs_routeopt_path(p, f, c, &h);
  double mx = 0, s = 0;
  for (int32_t k = 0; k < p->n_sets; k++) {
    if (!fs__routeopt_in_set(p, f, k)) continue;
    const double *ld = load_at(g, k);
    for (int32_t i = 0; i < h; i++) {
      double v = ld[pl[i]] + p->demand_bps[f] / p->t->links[pl[i]].capacity_bps;
      if (v > mx) mx = v;
      s += v;
    }
  }
  *sum = s;
  return mx;
}

/* The best path for f (not placed): least max load, then least summed
 * load, then lowest index. */
static int32_t best_path(greedy *g, int32_t f) {
  int32_t best = 0;
  double bm = INFINITY, bs = INFINITY;
  for (int32_t c = 0; c < g->p->n_paths[f]; c++) {
    double s, m = path_cost(g, f, c, &s);
    if (m < bm - 1e-12 || (m <= bm + 1e-12 && s < bs - 1e-12)) {
      best = c;
      bm = m;
      bs = s;
    }
  }
  return best;
}

static double max_load(greedy *g, int32_t *arg_k, int32_t *arg_l) {
  double mx = 0;
  size_t L = (size_t)g->p->t->n_links;
  *arg_k = 0;
  *arg_l = -1;
  for (int32_t k = 0; k < g->p->n_sets; k++) {
    const double *ld = load_at(g, k);
    for (size_t l = 0; l < L; l++)
      if (ld[l] > mx + 1e-12) {
        mx = ld[l];
        *arg_k = k;
        *arg_l = (int32_t)l;
      }
  }
  return mx;
}

enum { CHAIN_MAX = 256, EJECT_MAX = 64, BLOCK_MAX = 2 };
/* Nested place_all calls at most: each ejects (depth + 1, at most
 * CHAIN_MAX) or places one pending flow (at most BLOCK_MAX per ejection). */
enum { FRAMES = CHAIN_MAX * (BLOCK_MAX + 1) + 2 };

/* Marks y as moved by the current chain (undone by unmark_all). */
static void mark(greedy *g, int32_t y) {
  g->in_chain[y] = 1;
  g->marked[g->n_marked++] = y;
}

static void unmark_all(greedy *g) {
  while (g->n_marked > 0) g->in_chain[g->marked[--g->n_marked]] = 0;
}

/* The (set, link) pairs of path c that adding flow x would bring to lo or
 * above, at most BLOCK_MAX + 1 of them; returns their count. */
static int32_t blocked_on(greedy *g, int32_t x, int32_t c, double lo, int32_t *bk, int32_t *bl) {
  fs_routeopt_problem *p = g->p;
  int32_t h, n = 0;
  const int32_t *pl = fs_routeopt_path(p, x, c, &h);
  for (int32_t k = 0; k < p->n_sets; k++) {
    if (!fs__routeopt_in_set(p, x, k)) continue;
    for (int32_t i = 0; i < h && n <= BLOCK_MAX; i++)
      if (load_at(g, k)[pl[i]] + p->demand_bps[x] / p->t->links[pl[i]].capacity_bps >= lo) {
        bk[n] = k;
        bl[n++] = pl[i];
      }
  }
  return n;
}

/* Whether y may be ejected: movable and not yet moved by this chain. */
static int ejectable(const greedy *g, int32_t y) {
  return !g->in_chain[y] && g->p->n_paths[y] > 1;
}

static int place_all(greedy *g, int32_t n, double z, int depth);
static int place_pass(greedy *g, int32_t n, int32_t x, int32_t pass, const uint8_t *nb,
                      double z, int depth);

/* Tries x (top of the pending stack, n entries) on path c after ejecting
 * y1 and y2 (-1: none; y2 != y1), then places the rest. On failure
 * everything is as on entry. */
static int try_path(greedy *g, int32_t n, int32_t x, int32_t c, int32_t y1, int32_t y2, double z,
                    int depth) {
  double lo = z - 1e-9, s;
  int32_t c1 = y1 >= 0 ? g->choice[y1] : -1, c2 = y2 >= 0 ? g->choice[y2] : -1;
  if (y1 >= 0) apply(g, y1, c1, -1);
  if (y2 >= 0) apply(g, y2, c2, -1);
  int ok = 0;
  if (path_cost(g, x, c, &s) < lo) {
    apply(g, x, c, +1);
    g->choice[x] = c;
    int32_t m = n - 1;
    int32_t saved = g->stack[m];
    if (y1 >= 0) {
      mark(g, y1);
      g->was[y1] = c1;
      g->stack[m++] = y1;
    }
    if (y2 >= 0) {
      mark(g, y2);
      g->was[y2] = c2;
      g->stack[m++] = y2;
    }
    ok = place_all(g, m, z, depth + (y1 >= 0));
    if (!ok) {
      g->stack[n - 1] = saved;
      if (n < m) g->stack[n] = -1;
      apply(g, x, c, -1);
    }
  }
  if (!ok) {
    if (y2 >= 0) {
      apply(g, y2, c2, +1);
      g->choice[y2] = c2;
    }
    if (y1 >= 0) {
      apply(g, y1, c1, +1);
      g->choice[y1] = c1;
    }
  }
  return ok;
}

/* Places every flow of the pending stack (n entries; each was removed from
 * the path g->was[x]) so that no link reaches z: the top flow takes a path
 * where it fits, else a path where one or two links would reach z, ejecting
 * one flow from each (not already moved by this chain) onto the stack,
 * depth first. In a 2-tier Clos with unit demands this finds the Kempe
 * chains of bipartite edge colouring, which single moves cannot make; the
 * two-link case covers the up and down halves of a 3-tier path. Every link
 * a chain loads ends below z, so a successful chain lowers (max load, links
 * at it) and the improvement loop ends. */
static int place_all(greedy *g, int32_t n, double z, int depth) {
  if (n == 0) return 1;
  if (--g->budget < 0) return 0;
  fs_routeopt_problem *p = g->p;
  int32_t x = g->stack[n - 1], avoid = g->was[x];
  double lo = z - 1e-9;
  /* blocked-link counts of x's paths, once: this call's row of g->blk */
  if (g->frame >= FRAMES) return 0;
  uint8_t *nb = g->blk + (size_t)g->frame++ * (size_t)g->max_paths;
  int ok = 0;
  for (int32_t c = 0; c < p->n_paths[x]; c++) {
    int32_t bk[BLOCK_MAX + 1], bl[BLOCK_MAX + 1];
    nb[c] = c == avoid ? BLOCK_MAX + 1 : (uint8_t)blocked_on(g, x, c, lo, bk, bl);
  }
  for (int32_t pass = 0; pass <= BLOCK_MAX && !ok; pass++) {
    if (pass > 0 && depth >= CHAIN_MAX) break;
    ok = place_pass(g, n, x, pass, nb, z, depth);
  }
  g->frame--;
  return ok;
}

/* The paths of x with `pass` blocked links (nb: counts per path), tried in
 * index order; see place_all. */
static int place_pass(greedy *g, int32_t n, int32_t x, int32_t pass, const uint8_t *nb,
                      double z, int depth) {
  fs_routeopt_problem *p = g->p;
  double lo = z - 1e-9;
  for (int32_t c = 0; c < p->n_paths[x]; c++) {
    int32_t bk[BLOCK_MAX + 1], bl[BLOCK_MAX + 1];
    if (nb[c] != pass || blocked_on(g, x, c, lo, bk, bl) != pass) continue;
    if (pass == 0) {
      if (try_path(g, n, x, c, -1, -1, z, depth)) return 1;
      continue;
    }
    const on_list *o1 = &g->on[at(g, bk[0], bl[0])];
    int32_t cand[EJECT_MAX], nc = 0;
    for (int32_t m = 0; m < o1->n && nc < EJECT_MAX; m++) cand[nc++] = o1->v[m];
    for (int32_t m = 0; m < nc; m++) {
      int32_t y1 = cand[m];
      if (y1 == x || !ejectable(g, y1)) continue;
      if (try_path(g, n, x, c, y1, -1, z, depth)) return 1;
      if (g->budget < 0) return 0;
      if (pass < 2) continue;
      const on_list *o2 = &g->on[at(g, bk[1], bl[1])];
      int32_t cand2[EJECT_MAX], nc2 = 0;
      for (int32_t q = 0; q < o2->n && nc2 < EJECT_MAX; q++) cand2[nc2++] = o2->v[q];
      for (int32_t q = 0; q < nc2; q++) {
        int32_t y2 = cand2[q];
        if (y2 == x || y2 == y1 || !ejectable(g, y2)) continue;
        if (try_path(g, n, x, c, y1, y2, z, depth)) return 1;
        if (g->budget < 0) return 0;
      }
    }
  }
  return 0;
}

/* One improving chain from a flow on a most loaded link. Returns 1 if
 * something moved. */
static int improve_once(greedy *g, int64_t *moves) {
  fs_routeopt_problem *p = g->p;
  int32_t zk, zl;
  double z = max_load(g, &zk, &zl);
  /* at most 1: every flow can get its demand; at lb: optimal */
  if (zl < 0 || z <= fmax(1, g->lb) + 1e-9) return 0;
  const on_list *o = &g->on[at(g, zk, zl)];
  int32_t cand[EJECT_MAX], nc = 0;
  for (int32_t m = 0; m < o->n && nc < EJECT_MAX; m++) cand[nc++] = o->v[m];
  g->budget = 20000;
  for (int32_t m = 0; m < nc; m++) {
    int32_t f = cand[m], cur = g->choice[f];
    if (p->n_paths[f] < 2) continue;
    apply(g, f, cur, -1);
    mark(g, f);
    g->was[f] = cur;
    g->stack[0] = f;
    int ok = place_all(g, 1, z, 0);
    unmark_all(g);
    if (ok) {
      ++*moves;
      return 1;
    }
    apply(g, f, cur, +1);
    g->choice[f] = cur;
    if (g->budget < 0) break;
  }
  return 0;
}

typedef struct by_size {
  double bytes;
  int32_t flow;
} by_size;

/* Largest first, then by flow id: a total order, so the result does not
 * depend on qsort's algorithm. */
static int cmp_bytes_desc(const void *a, const void *b) {
  const by_size *x = a, *y = b;
  if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
  return (x->flow > y->flow) - (x->flow < y->flow);
}

int fs__routeopt_greedy(fs_routeopt_problem *p, int32_t *choice, fs_routeopt_stats *st,
                        fs_err *err) {
  size_t KL = (size_t)p->n_sets * (size_t)p->t->n_links;
  greedy g = {p, NULL, NULL, choice, NULL, 0, 0, NULL, NULL, NULL, 0, NULL, 0, 1, 0};
  for (int32_t f = 0; f < p->n_flows; f++)
    if (p->n_paths[f] > g.max_paths) g.max_paths = p->n_paths[f];
  by_size *order = fs__malloc((size_t)p->n_flows + 1, sizeof(*order));
  g.load = fs__calloc(KL + 1, sizeof(double));
  g.on = fs__calloc(KL + 1, sizeof(on_list));
  g.in_chain = fs__calloc((size_t)p->n_flows + 1, 1);
  g.stack = fs__malloc((size_t)p->n_flows + CHAIN_MAX * BLOCK_MAX + 2, sizeof(int32_t));
  g.was = fs__malloc((size_t)p->n_flows + 1, sizeof(int32_t));
  g.marked = fs__malloc((size_t)p->n_flows + 1, sizeof(int32_t));
  g.blk = fs__malloc((size_t)FRAMES * (size_t)g.max_paths, 1);
  int rc = 0;
  if (!order || !g.load || !g.on || !g.in_chain || !g.stack || !g.was || !g.marked || !g.blk)
    goto oom;
  int32_t n = 0;
  for (int32_t f = 0; f < p->n_flows; f++) {
    if (p->n_paths[f] == 1) {
      choice[f] = 0;
      apply(&g, f, 0, +1);
    } else {
      order[n].bytes = p->tr->flows[f].bytes;
      order[n++].flow = f;
    }
  }
  for (int32_t i = 0; i < n; i++) {
    double alone = INFINITY, s;
    for (int32_t c = 0; c < p->n_paths[order[i].flow]; c++)
      alone = fmin(alone, path_cost(&g, order[i].flow, c, &s));
    g.lb = fmax(g.lb, alone);
  }
  {
    int32_t zk, zl;
    g.lb = fmax(g.lb, max_load(&g, &zk, &zl));
  }
  qsort(order, (size_t)n, sizeof(*order), cmp_bytes_desc);
  for (int32_t i = 0; i < n; i++) {
    int32_t f = order[i].flow;
    choice[f] = best_path(&g, f);
    apply(&g, f, choice[f], +1);
  }
  int64_t moves = 0;
  while (!g.oom && improve_once(&g, &moves)) {
  }
  if (g.oom) goto oom;
  if (st) {
    int32_t zk, zl;
    st->moves = moves;
    st->objective = max_load(&g, &zk, &zl);
  }
  goto out;
oom:
  rc = fs_err_set(err, FS_ENOMEM, "out of memory");
out:
  if (g.on)
    for (size_t i = 0; i < KL; i++) free(g.on[i].v);
  FS__FREE_ALL(g.on, g.load, g.in_chain, g.stack, g.was, g.marked, g.blk, order);
  return rc;
}

