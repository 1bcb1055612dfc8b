/* Routing optimisation for training traffic: the problem (routeopt.h) —
 * every flow's candidate paths and its demand — its accessors, and the
 * routes a choice gives. The optimisers are in their own files (greedy and
 * ECMP: opt_greedy.c, the MILP: opt_exact.c, edge colouring:
 * opt_edgecolor.c), dispatched by optimize.c.
 *
 * Candidates come from the spraying DAG of fs_route_spray: a depth-first walk
 * over its links, in link order, lists every shortest path once; with
 * k-shortest candidates, a flow with fewer than K of those gets Yen's K
 * shortest loop-free paths instead (opt_kpaths.c). Memory is sum over flows
 * of paths x hops (the 2048-host leaf-spine benchmark: 2048 flows x 32
 * paths x 4 hops = 1 MB), plus 8 bytes per path for its offset. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "opt_internal.h"

/* ---- problem --------------------------------------------------------------- */

void fs_routeopt_problem_free(fs_routeopt_problem *p) {
  if (!p) return;
  fs_router_free(p->router);
  FS__FREE_ALL(p->n_paths, p->path0, p->pstart, p->links, p->ideal_start, p->ideal_links,
               p->demand_bps, p->ideal_phase_s, p->mm_start, p->mm_link, p->mm_w, p->mm_rate,
               p->mm_res, p->mm_wsum, p->mm_frozen, p);
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

