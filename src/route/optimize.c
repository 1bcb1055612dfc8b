/* Routing optimisation for training traffic: the problem (every flow's
 * candidate paths, its demand), the optimisers behind fs_routeopt_optimize
 * and the baselines (docs/model-route.md; edge colouring in
 * opt_edgecolor.c, the MILP in opt_exact.c).
 *
 * Candidates come from the spraying DAG of fs_route_spray: a depth-first walk
 * over its links, in link order, lists every shortest path once; with
 * k-shortest candidates, a flow with fewer than K of those gets Yen's K
 * shortest loop-free paths instead (opt_kpaths.c). Memory is sum over flows
 * of paths x hops (the 2048-host leaf-spine benchmark: 2048 flows x 32
 * paths x 4 hops = 1 MB), plus 8 bytes per path for its offset.
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
#include <time.h>

#include "../base/base.h"
#include "opt_internal.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- problem --------------------------------------------------------------- */

void fs_routeopt_problem_free(fs_routeopt_problem *p) {
  if (!p) return;
  fs_router_free(p->router);
  free(p->n_paths);
  free(p->path0);
  free(p->pstart);
  free(p->links);
  free(p->ideal_start);
  free(p->ideal_links);
  free(p->demand_bps);
  free(p->ideal_phase_s);
  free(p->mm_start);
  free(p->mm_link);
  free(p->mm_w);
  free(p->mm_rate);
  free(p->mm_res);
  free(p->mm_wsum);
  free(p->mm_frozen);
  free(p);
}

/* Appends every path of the DAG `dag` from v (depth d of hops) to p->links;
 * stack holds the links so far. */
static int enumerate(fs_routeopt_problem *p, const fs_route *dag, int32_t v, int32_t dst, int32_t d,
                     int32_t hops, int32_t *stack, size_t *n, size_t *cap) {
  if (d == hops) {
    if (v != dst) return 0;
    if (fs__grow(&p->links, cap, *n + (size_t)hops, sizeof(int32_t))) return FS_ENOMEM;
    memcpy(p->links + *n, stack, (size_t)hops * sizeof(int32_t));
    *n += (size_t)hops;
    return 0;
  }
  for (int32_t i = 0; i < dag->n; i++) {
    const fs_link *l = &p->t->links[dag->links[i]];
    if (l->from != v) continue;
    stack[d] = dag->links[i];
    int rc = enumerate(p, dag, l->to, dst, d + 1, hops, stack, n, cap);
    if (rc) return rc;
  }
  return 0;
}

static int is_edge_link(const fs_topo *t, int32_t l) {
  return t->nodes[t->links[l].from].kind != FS_NODE_SWITCH ||
         t->nodes[t->links[l].to].kind != FS_NODE_SWITCH;
}

const char *fs_routeopt_paths_name(fs_routeopt_paths x) {
  return x == FS_ROUTEOPT_PATHS_KSHORTEST ? "kshortest" : x == FS_ROUTEOPT_PATHS_ECMP ? "ecmp" : "?";
}

int fs_routeopt_paths_parse(const char *name, fs_routeopt_paths *out) {
  if (strcmp(name, "ecmp") == 0) *out = FS_ROUTEOPT_PATHS_ECMP;
  else if (strcmp(name, "kshortest") == 0) *out = FS_ROUTEOPT_PATHS_KSHORTEST;
  else return FS_EINVAL;
  return 0;
}

int fs_routeopt_problem_new(const fs_topo *t, const fs_routeopt_traffic *tr,
                            fs_routeopt_problem **out, fs_err *err) {
  return fs_routeopt_problem_new_opts(t, tr, NULL, out, err);
}

/* Records path number np (its links end at n) and grows pstart. */
static int end_path(fs_routeopt_problem *p, size_t *pcap, int32_t np, size_t n) {
  if (fs__grow(&p->pstart, pcap, (size_t)np + 2, sizeof(int64_t))) return FS_ENOMEM;
  p->pstart[np + 1] = (int64_t)n;
  return 0;
}

int fs_routeopt_problem_new_opts(const fs_topo *t, const fs_routeopt_traffic *tr,
                                 const fs_routeopt_problem_opts *o, fs_routeopt_problem **out,
                                 fs_err *err) {
  fs_routeopt_paths kind = o ? o->paths : FS_ROUTEOPT_PATHS_ECMP;
  int32_t K = o && kind == FS_ROUTEOPT_PATHS_KSHORTEST ? o->k : 1;
  if (kind != FS_ROUTEOPT_PATHS_ECMP && kind != FS_ROUTEOPT_PATHS_KSHORTEST)
    return fs_err_set(err, FS_EINVAL, "unknown candidate path kind %d", (int)kind);
  if (K < 1 || K > FS_ROUTEOPT_MAX_K)
    return fs_err_set(err, FS_EINVAL, "k-shortest: K must be in [1, %d], got %d",
                      FS_ROUTEOPT_MAX_K, K);
  fs_routeopt_problem *p = calloc(1, sizeof(*p));
  fs_route dag;
  fs_route_init(&dag);
  int32_t *stack = NULL, *yhops = NULL;
  fs__routeopt_yen *yen = NULL;
  int rc = 0;
  if (!p) return fs_err_set(err, FS_ENOMEM, "out of memory");
  p->t = t;
  p->tr = tr;
  p->paths = kind;
  p->k = K;
  p->n_flows = tr->n_flows;
  p->n_sets = 1;
  for (int32_t j = 0; j < tr->n_jobs; j++)
    if (tr->jobs[j].n_phases > p->n_sets) p->n_sets = tr->jobs[j].n_phases;
  size_t F = (size_t)tr->n_flows, L = (size_t)t->n_links;
  p->n_paths = fs__malloc(F + 1, sizeof(int32_t));
  p->path0 = fs__malloc(F + 1, sizeof(int32_t));
  p->ideal_start = fs__malloc(F + 1, sizeof(int32_t));
  p->demand_bps = fs__malloc(F + 1, sizeof(double));
  p->ideal_phase_s = fs__malloc((size_t)tr->n_phases + 1, sizeof(double));
  p->mm_start = fs__malloc(F + 1, sizeof(int32_t));
  p->mm_rate = fs__malloc(F + 1, sizeof(double));
  p->mm_frozen = fs__malloc(F + 1, 1);
  p->mm_res = fs__malloc(L + 1, sizeof(double));
  p->mm_wsum = fs__malloc(L + 1, sizeof(double));
  stack = fs__malloc((size_t)t->n_nodes + 1, sizeof(int32_t));
  yhops = fs__malloc((size_t)FS_ROUTEOPT_MAX_K, sizeof(int32_t));
  if (!p->n_paths || !p->path0 || !p->ideal_start || !p->demand_bps || !p->ideal_phase_s ||
      !p->mm_start || !p->mm_rate || !p->mm_frozen || !p->mm_res || !p->mm_wsum || !stack ||
      !yhops)
    goto oom;
  if (kind == FS_ROUTEOPT_PATHS_KSHORTEST && fs__routeopt_yen_new(t, K, &yen)) goto oom;
  if ((rc = fs_router_new(t, &p->router, err))) goto fail;
  size_t n = 0, cap = 0, ni = 0, icap = 0, pcap = 0;
  int32_t np = 0;
  if (fs__grow(&p->pstart, &pcap, 1, sizeof(int64_t))) goto oom;
  p->pstart[0] = 0;
  for (int32_t f = 0; f < tr->n_flows; f++) {
    const fs_routeopt_flow *fl = &tr->flows[f];
    if (fl->src < 0 || fl->src >= t->n_hosts || fl->dst < 0 || fl->dst >= t->n_hosts) {
      rc = fs_err_set(err, FS_EINVAL, "flow %d: host %d -> %d out of range (hosts: %d)", f, fl->src,
                      fl->dst, t->n_hosts);
      goto fail;
    }
    if ((rc = fs_route_spray(p->router, fl->src, fl->dst, &dag, err))) goto fail;
    if (dag.n_paths > FS_ROUTEOPT_MAX_PATHS) {
      rc = fs_err_set(err, FS_ERANGE,
                      "flow %d (host %d -> %d) has %.0f equal-cost paths, more than the %d "
                      "the optimiser keeps",
                      f, fl->src, fl->dst, dag.n_paths, FS_ROUTEOPT_MAX_PATHS);
      goto fail;
    }
    p->path0[f] = np;
    size_t first = n;
    if (dag.n_paths >= (double)K) {
      /* the equal-cost paths, in link order (Yen would list the same) */
      if ((rc = enumerate(p, &dag, fl->src, fl->dst, 0, dag.hops, stack, &n, &cap))) goto oom;
      p->n_paths[f] = (int32_t)((n - first) / (size_t)dag.hops);
      if (p->n_paths[f] != (int32_t)dag.n_paths) {
        rc = fs_err_set(err, FS_EINTERNAL, "flow %d: enumerated %d paths, expected %.0f", f,
                        p->n_paths[f], dag.n_paths);
        goto fail;
      }
      for (int32_t c = 0; c < p->n_paths[f]; c++)
        if (end_path(p, &pcap, np++, first + (size_t)(c + 1) * (size_t)dag.hops)) goto oom;
    } else {
      int32_t found;
      rc = fs__routeopt_kshortest(yen, fl->src, fl->dst, K, &p->links, &n, &cap, yhops, &found);
      if (rc == FS_ENOMEM) goto oom;
      if (rc || found < (int32_t)dag.n_paths || yhops[0] != dag.hops) {
        rc = fs_err_set(err, FS_EINTERNAL, "flow %d: k-shortest found %d paths of %d hops, "
                        "expected at least %.0f of %d", f, found, found ? yhops[0] : 0,
                        dag.n_paths, dag.hops);
        goto fail;
      }
      p->n_paths[f] = found;
      size_t at_ = first;
      for (int32_t c = 0; c < found; c++) {
        at_ += (size_t)yhops[c];
        if (end_path(p, &pcap, np++, at_)) goto oom;
      }
    }
    p->ideal_start[f] = (int32_t)ni;
    const int32_t *p0 = p->links + first;
    for (int32_t i = 0; i < dag.hops; i++) {
      if (!is_edge_link(t, p0[i])) continue;
      if (fs__grow(&p->ideal_links, &icap, ni + 1, sizeof(int32_t))) goto oom;
      p->ideal_links[ni++] = p0[i];
    }
  }
  p->path0[F] = np;
  p->ideal_start[F] = (int32_t)ni;
  if (!p->ideal_links && !(p->ideal_links = malloc(sizeof(int32_t)))) goto oom;
  if (!p->links && !(p->links = malloc(sizeof(int32_t)))) goto oom;
  if (fs__routeopt_phase_times(p, NULL, 1, p->ideal_phase_s, NULL)) goto oom;
  for (int32_t f = 0; f < tr->n_flows; f++) {
    double s = p->ideal_phase_s[tr->flows[f].phase];
    p->demand_bps[f] = s > 0 ? tr->flows[f].bytes * 8 / s : 0;
  }
  fs_route_free(&dag);
  free(stack);
  free(yhops);
  fs__routeopt_yen_free(yen);
  *out = p;
  return 0;
oom:
  rc = fs_err_set(err, FS_ENOMEM, "out of memory");
fail:
  fs_route_free(&dag);
  free(stack);
  free(yhops);
  fs__routeopt_yen_free(yen);
  fs_routeopt_problem_free(p);
  return rc;
}

int32_t fs_routeopt_n_flows(const fs_routeopt_problem *p) { return p->n_flows; }
int32_t fs_routeopt_n_paths(const fs_routeopt_problem *p, int32_t flow) { return p->n_paths[flow]; }
double fs_routeopt_demand_bps(const fs_routeopt_problem *p, int32_t flow) {
  return p->demand_bps[flow];
}

const int32_t *fs_routeopt_path(const fs_routeopt_problem *p, int32_t flow, int32_t k,
                                int32_t *hops) {
  int32_t i = p->path0[flow] + k;
  *hops = (int32_t)(p->pstart[i + 1] - p->pstart[i]);
  return p->links + p->pstart[i];
}

/* Appends (link, w) to out, or adds w to the link's entry. */
static int route_add(fs_route *out, int32_t link, double w) {
  for (int32_t e = 0; e < out->n; e++)
    if (out->links[e] == link) {
      out->weights[e] += w;
      return 0;
    }
  if (out->n == out->cap) {
    int32_t nc = out->cap ? 2 * out->cap : 16;
    int32_t *nl = realloc(out->links, (size_t)nc * sizeof(*nl));
    if (!nl) return FS_ENOMEM;
    out->links = nl;
    double *nw = realloc(out->weights, (size_t)nc * sizeof(*nw));
    if (!nw) return FS_ENOMEM;
    out->weights = nw;
    out->cap = nc;
  }
  out->links[out->n] = link;
  out->weights[out->n++] = w;
  return 0;
}

/* The route of candidates c0 .. c1 - 1 of a flow, evenly split: each link
 * carries the share of those candidates through it (as the metric counts
 * it; equal-cost candidates give fs_route_spray's fractions). One
 * candidate gives its path in order, each link once (paths are simple).
 * The links are taken as they are, so the right one of parallel cables is
 * kept (fs_route_explicit would take the lowest-id one). */
static int candidates_route(fs_routeopt_problem *p, int32_t flow, int32_t c0, int32_t c1,
                            fs_route *out, fs_err *err) {
  out->n = 0;
  out->hops = 0;
  out->latency_ns = 0;
  for (int32_t c = c0; c < c1; c++) {
    int32_t h;
    const int32_t *pl = fs_routeopt_path(p, flow, c, &h);
    int64_t lat = 0;
    if (h > out->hops) out->hops = h;
    for (int32_t i = 0; i < h; i++) {
      lat += p->t->links[pl[i]].latency_ns;
      if (route_add(out, pl[i], 1.0 / (c1 - c0))) return fs_err_set(err, FS_ENOMEM, "out of memory");
    }
    if (lat > out->latency_ns) out->latency_ns = lat;
  }
  out->n_paths = c1 - c0;
  return 0;
}

int fs_routeopt_route(fs_routeopt_problem *p, const int32_t *choice, int32_t flow, fs_route *out,
                      fs_err *err) {
  const fs_routeopt_flow *f = &p->tr->flows[flow];
  if (choice[flow] == FS_ROUTEOPT_SPLIT) {
    if (p->paths == FS_ROUTEOPT_PATHS_ECMP)
      return fs_route_spray(p->router, f->src, f->dst, out, err);
    return candidates_route(p, flow, 0, p->n_paths[flow], out, err);
  }
  return candidates_route(p, flow, choice[flow], choice[flow] + 1, out, err);
}

/* ---- kinds --------------------------------------------------------------- */

const char *fs_routeopt_kind_name(fs_routeopt_kind k) {
  switch (k) {
#define XX(name, str, desc) \
  case FS_ROUTEOPT_##name:  \
    return str;
    FS_ROUTEOPT_KIND_MAP(XX)
#undef XX
    case FS_ROUTEOPT_N_KINDS:
      break;
  }
  return "?";
}

int fs_routeopt_kind_parse(const char *name, fs_routeopt_kind *out) {
  for (int k = 0; k < FS_ROUTEOPT_N_KINDS; k++)
    if (strcmp(name, fs_routeopt_kind_name((fs_routeopt_kind)k)) == 0) {
      *out = (fs_routeopt_kind)k;
      return 0;
    }
  return FS_EINVAL;
}

/* ---- baselines ----------------------------------------------------------- */

static int route_ecmp(fs_routeopt_problem *p, uint64_t seed, int32_t *choice, fs_err *err) {
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

static int route_greedy(fs_routeopt_problem *p, int32_t *choice, fs_routeopt_stats *st,
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
  free(g.on);
  free(g.load);
  free(g.in_chain);
  free(g.stack);
  free(g.was);
  free(g.marked);
  free(g.blk);
  free(order);
  return rc;
}

int fs_routeopt_optimize(fs_routeopt_problem *p, const fs_routeopt_opts *o, int32_t *choice,
                         fs_routeopt_stats *stats, fs_err *err) {
  fs_routeopt_stats st;
  memset(&st, 0, sizeof(st));
  double t0 = now_s();
  int rc = 0;
  switch (o->kind) {
    case FS_ROUTEOPT_EXACT: rc = fs__routeopt_exact(p, o, choice, &st, err); break;
    case FS_ROUTEOPT_GREEDY: rc = route_greedy(p, choice, &st, err); break;
    case FS_ROUTEOPT_ECMP: rc = route_ecmp(p, o->seed, choice, err); break;
    case FS_ROUTEOPT_SPRAY:
      for (int32_t f = 0; f < p->n_flows; f++)
        choice[f] = p->n_paths[f] > 1 ? FS_ROUTEOPT_SPLIT : 0;
      break;
    case FS_ROUTEOPT_EDGECOLOR: rc = fs__routeopt_edgecolor(p, choice, err); break;
    case FS_ROUTEOPT_RANDOM: {
      fs__rng rng;
      fs__rng_seed(&rng, o->seed);
      for (int32_t f = 0; f < p->n_flows; f++)
        choice[f] = (int32_t)fs__rng_below(&rng, (uint64_t)p->n_paths[f]);
      break;
    }
    default: rc = fs_err_set(err, FS_EINVAL, "unknown optimiser %d", (int)o->kind);
  }
  st.time_s = now_s() - t0;
  if (stats) *stats = st;
  return rc;
}
