/* The network controller (netctl.h): failures and periodic re-optimisation
 * driven by engine timers.
 *
 * Flows are indexed once by (source, destination) pair (CSR: pair -> its
 * items), so a decision for a pair reaches all its flows, pending or in
 * flight. A tick costs O(flows seen in the window + their pairs' items)
 * plus the optimiser; a failure costs one scan of every flow's route and a
 * copy of the topology without the failed cables, on which routes (and
 * later optimisations) are computed and mapped back to the real link ids. */
#include "fabricsim/netctl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"

typedef struct fail_ev {
  fs_netctl *c;
  int32_t idx;
} fail_ev;

struct fs_netctl {
  fs_sim *sim;
  const fs_topo *t;
  fs_netctl_opts o;
  fs_netctl_failure *failures;
  fail_ev *fail_evs;
  /* pairs */
  fs__u64map pair_of;
  int32_t n_pairs;
  int32_t *pair_src, *pair_dst;
  int32_t *pair_start, *pair_items; /* CSR */
  int32_t *item_pair;               /* per item, -1 for tasks and pinned flows */
  int32_t *pinned, n_pinned;        /* pinned flows: only failures move them */
  /* window */
  int32_t seen_started;
  int32_t *live, n_live; /* started flows not finished at the last tick */
  double *pair_bytes;
  uint32_t *pair_stamp, stamp;
  int32_t *win_pairs, n_win;
  /* failures */
  uint8_t *down;     /* per link */
  fs_topo *deg;      /* t without the failed cables, NULL before any */
  int32_t *deg_map;  /* deg link -> t link */
  fs_router *router; /* on deg, or on t */
  fs_route rt;
  fs_netctl_stats st;
};

void fs_netctl_opts_init(fs_netctl_opts *o) {
  memset(o, 0, sizeof(*o));
  o->mode = FS_ROUTE_ECMP;
  o->seed = 1;
  o->optimizer = FS_ROUTEOPT_GREEDY;
}

static const fs_topo *cur_topo(const fs_netctl *c) { return c->deg ? c->deg : c->t; }

/* Rewrites the links of a route found on the current topology to t's ids. */
static void map_back(const fs_netctl *c, fs_route *r) {
  if (!c->deg) return;
  for (int32_t k = 0; k < r->n; k++) r->links[k] = c->deg_map[r->links[k]];
}

static int same_route(const fs_sim *s, int32_t item, const fs_route *r) {
  const int32_t *links;
  const double *w;
  int32_t n;
  fs_sim_flow_route(s, item, &links, &w, &n);
  if (n != r->n) return 0;
  for (int32_t k = 0; k < n; k++)
    if (links[k] != r->links[k] || w[k] != r->weights[k]) return 0;
  return 1;
}

/* Gives every unfinished flow of pair p route r (if it differs). */
static int move_pair(fs_netctl *c, int32_t p, const fs_route *r, double hold_s, int64_t *moved,
                     fs_err *err) {
  for (int32_t k = c->pair_start[p]; k < c->pair_start[p + 1]; k++) {
    int32_t it = c->pair_items[k];
    if (fs_sim_item_finished(c->sim, it) || same_route(c->sim, it, r)) continue;
    int rc = fs_sim_reroute(c->sim, it, r, hold_s, err);
    if (rc < 0) return rc;
    c->st.flows_rerouted++;
    c->st.flows_held += rc;
    if (moved) (*moved)++;
  }
  return 0;
}

/* ---- periodic re-optimisation ---- */
static void window_add(fs_netctl *c, int32_t item) {
  int32_t p = c->item_pair[item];
  if (p < 0) return;
  if (c->pair_stamp[p] != c->stamp) {
    c->pair_stamp[p] = c->stamp;
    c->pair_bytes[p] = 0;
    c->win_pairs[c->n_win++] = p;
  }
  c->pair_bytes[p] += fs_sim_flow_bytes(c->sim, item);
}

#define NO_CHOICE (-2)

/* The candidate index of the route window pair i's first unfinished flow
 * is on (FS_ROUTEOPT_SPLIT for a spread route), or NO_CHOICE if it is not
 * a candidate (or the pair's flows are on different routes). */
static int32_t current_choice(const fs_netctl *c, fs_routeopt_problem *prob, int32_t i) {
  int32_t p = c->win_pairs[i], first = -1;
  for (int32_t k = c->pair_start[p]; k < c->pair_start[p + 1]; k++)
    if (!fs_sim_item_finished(c->sim, c->pair_items[k])) {
      first = c->pair_items[k];
      break;
    }
  if (first < 0) return NO_CHOICE;
  const int32_t *links;
  const double *w;
  int32_t n;
  fs_sim_flow_route(c->sim, first, &links, &w, &n);
  for (int32_t k = c->pair_start[p]; k < c->pair_start[p + 1]; k++) {
    int32_t it = c->pair_items[k];
    if (it == first || fs_sim_item_finished(c->sim, it)) continue;
    const int32_t *l2;
    const double *w2;
    int32_t n2;
    fs_sim_flow_route(c->sim, it, &l2, &w2, &n2);
    if (n2 != n || memcmp(l2, links, (size_t)n * sizeof(int32_t))) return NO_CHOICE;
  }
  int32_t np = fs_routeopt_n_paths(prob, i);
  for (int32_t k = 0; k < n; k++)
    if (w[k] != 1.0) return np > 1 ? FS_ROUTEOPT_SPLIT : NO_CHOICE;
  for (int32_t cand = 0; cand < np; cand++) {
    int32_t hops;
    const int32_t *pl = fs_routeopt_path(prob, i, cand, &hops);
    if (hops != n) continue;
    int same = 1;
    for (int32_t k = 0; k < n && same; k++)
      same = (c->deg ? c->deg_map[pl[k]] : pl[k]) == links[k];
    if (same) return cand;
  }
  return NO_CHOICE;
}

static int reoptimise(fs_netctl *c, fs_err *err) {
  fs_routeopt_traffic tr;
  fs_routeopt_traffic_init(&tr);
  fs_routeopt_problem *prob = NULL;
  fs_routeopt_flow *fl = fs__malloc((size_t)c->n_win, sizeof(*fl));
  int32_t *choice = fs__malloc((size_t)c->n_win, sizeof(int32_t));
  int32_t *cur = fs__malloc((size_t)c->n_win, sizeof(int32_t));
  int rc = 0;
  if (!fl || !choice || !cur) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory re-optimising routes");
    goto done;
  }
  for (int32_t i = 0; i < c->n_win; i++) {
    int32_t p = c->win_pairs[i];
    fl[i] = (fs_routeopt_flow){c->pair_src[p], c->pair_dst[p], c->pair_bytes[p], 0};
  }
  fs_routeopt_opts oo = {c->o.optimizer, c->o.seed, 0, 0};
  fs_routeopt_stats os;
  if ((rc = fs_routeopt_traffic_add_phase_job(&tr, "observed", fl, c->n_win, 1, err)) ||
      (rc = fs_routeopt_problem_new(cur_topo(c), &tr, &prob, err)) ||
      (rc = fs_routeopt_optimize(prob, &oo, choice, &os, err)))
    goto done;
  double dt = os.time_s; /* the optimiser times itself */
  c->st.opt_wall_s += dt;
  if (dt > c->st.opt_wall_max_s) c->st.opt_wall_max_s = dt;
  c->st.reopts++;
  /* Keep the routes in force unless the optimiser's are strictly better:
   * an equally good reshuffle would only cost holds. */
  int keep = 1;
  for (int32_t i = 0; i < c->n_win && keep; i++) {
    cur[i] = current_choice(c, prob, i);
    keep = cur[i] != NO_CHOICE;
  }
  if (keep) {
    fs_routeopt_metric mo, mc;
    if ((rc = fs_routeopt_evaluate(prob, choice, &mo, NULL, NULL, err)) ||
        (rc = fs_routeopt_evaluate(prob, cur, &mc, NULL, NULL, err)))
      goto done;
    if (fs_routeopt_metric_cmp(&mo, &mc) <= 0) goto done;
  }
  for (int32_t i = 0; i < c->n_win && !rc; i++) {
    if ((rc = fs_routeopt_route(prob, choice, i, &c->rt, err))) break;
    map_back(c, &c->rt);
    int64_t moved = 0;
    rc = move_pair(c, c->win_pairs[i], &c->rt, c->o.reconfig_s, &moved, err);
    c->st.pairs_moved += moved > 0;
  }
done:
  fs_routeopt_problem_free(prob);
  fs_routeopt_traffic_free(&tr);
  FS__FREE_ALL(fl, choice, cur);
  if (rc && rc != FS_ENOMEM) {
    fs_err e = *err;
    fs_err_set(err, rc, "re-optimising routes at %.9g s: %s", fs_sim_now_s(c->sim), e.msg);
  }
  return rc;
}

static int tick(void *ctx, fs_sim *s, double now, fs_err *err) {
  fs_netctl *c = ctx;
  if (++c->stamp == 0) {
    memset(c->pair_stamp, 0, (size_t)c->n_pairs * sizeof(uint32_t));
    c->stamp = 1;
  }
  c->n_win = 0;
  /* The window: flows that started since the last tick, and those still
   * unfinished from before (in flight, held, or in their last latency). */
  int32_t ns = fs_sim_n_started(s), kept = 0;
  for (int32_t i = 0; i < c->n_live; i++)
    if (!fs_sim_item_finished(s, c->live[i])) c->live[kept++] = c->live[i];
  for (int32_t i = c->seen_started; i < ns; i++) c->live[kept++] = fs_sim_started_flow(s, i);
  c->n_live = kept;
  c->seen_started = ns;
  for (int32_t i = 0; i < c->n_live; i++) window_add(c, c->live[i]);
  int rc = c->n_win ? reoptimise(c, err) : 0;
  if (!rc && !fs_sim_idle(s)) rc = fs_sim_add_timer(s, now + c->o.interval_s, tick, c, err);
  return rc;
}

/* ---- failures ---- */
static int route_around(fs_netctl *c, int32_t item, fs_err *err) {
  int32_t src, dst;
  fs_sim_flow_ends(c->sim, item, &src, &dst);
  fs_route_mode m = c->o.mode;
  if (m != FS_ROUTE_SHORTEST && m != FS_ROUTE_SPRAY) m = FS_ROUTE_ECMP;
  int rc = fs_route_by_mode(c->router, m, src, dst, c->o.seed, (uint64_t)item, &c->rt, err);
  if (rc) {
    char a[64], b[64];
    fs_topo_node_name(c->t, src, a, (int)sizeof(a));
    fs_topo_node_name(c->t, dst, b, (int)sizeof(b));
    return fs_err_set(err, FS_EINVAL, "after the link failures at %.9g s no path is left from %s to %s",
                      fs_sim_now_s(c->sim), a, b);
  }
  map_back(c, &c->rt);
  rc = fs_sim_reroute(c->sim, item, &c->rt, 0, err);
  if (rc < 0) return rc;
  c->st.flows_rerouted++;
  c->st.failure_reroutes++;
  return 0;
}

static int uses_down(const fs_netctl *c, int32_t item) {
  const int32_t *links;
  const double *w;
  int32_t n;
  fs_sim_flow_route(c->sim, item, &links, &w, &n);
  for (int32_t k = 0; k < n; k++)
    if (c->down[links[k]]) return 1;
  return 0;
}

/* Detection done: routes on the topology without the failed cables. */
static int reroute_failed(void *ctx, fs_sim *s, double now, fs_err *err) {
  (void)s;
  (void)now;
  fs_netctl *c = ctx;
  fs_topo *deg = NULL;
  int32_t *map = fs__malloc((size_t)c->t->n_links, sizeof(int32_t));
  fs_router *r = NULL;
  int rc = map ? 0 : FS_ENOMEM;
  if (!rc) rc = fs_topo_without_cables(c->t, c->down, &deg, map, err);
  if (!rc) rc = fs_router_new(deg, &r, err);
  if (rc) {
    free(map);
    fs_topo_free(deg);
    return fs_err_set(err, rc, "out of memory routing around failures");
  }
  fs_router_free(c->router);
  fs_topo_free(c->deg);
  free(c->deg_map);
  c->router = r;
  c->deg = deg;
  c->deg_map = map;
  for (int32_t p = 0; p < c->n_pairs && !rc; p++)
    for (int32_t k = c->pair_start[p]; k < c->pair_start[p + 1] && !rc; k++) {
      int32_t it = c->pair_items[k];
      if (!fs_sim_item_finished(c->sim, it) && uses_down(c, it)) rc = route_around(c, it, err);
    }
  for (int32_t k = 0; k < c->n_pinned && !rc; k++) {
    int32_t it = c->pinned[k];
    if (!fs_sim_item_finished(c->sim, it) && uses_down(c, it)) rc = route_around(c, it, err);
  }
  return rc;
}

static int fail_now(void *ctx, fs_sim *s, double now, fs_err *err) {
  fail_ev *ev = ctx;
  fs_netctl *c = ev->c;
  const fs_topo *t = c->t;
  int32_t l = c->failures[ev->idx].link;
  int rc = 0;
  if (!c->down[l]) {
    c->st.cables_failed++;
    c->down[l] = c->down[t->links[l].reverse] = 1;
    if ((rc = fs_sim_set_link_capacity(s, l, 0, err)) ||
        (rc = fs_sim_set_link_capacity(s, t->links[l].reverse, 0, err)))
      return rc;
  }
  return fs_sim_add_timer(s, now + c->o.detect_s, reroute_failed, c, err);
}

/* ---- setup ---- */
static int index_pairs(fs_netctl *c, fs_err *err) {
  int32_t n = fs_sim_n_items(c->sim);
  c->item_pair = fs__malloc((size_t)n, sizeof(int32_t));
  c->pinned = fs__malloc((size_t)n + 1, sizeof(int32_t));
  int32_t *count = NULL;
  size_t cap = 0, cap2 = 0;
  if (!c->item_pair || !c->pinned) goto oom;
  for (int32_t i = 0; i < n; i++) {
    c->item_pair[i] = -1;
    if (fs_sim_item_kind(c->sim, i) != FS_ITEM_FLOW) continue;
    int32_t src, dst, p;
    if (c->o.pinned && c->o.pinned[i]) {
      c->pinned[c->n_pinned++] = i;
      continue;
    }
    fs_sim_flow_ends(c->sim, i, &src, &dst);
    if (src >= c->t->n_hosts || dst >= c->t->n_hosts) continue; /* not host traffic */
    uint64_t key = (uint64_t)(uint32_t)src << 32 | (uint32_t)dst;
    if (!fs__u64map_get(&c->pair_of, key, &p)) {
      p = c->n_pairs;
      size_t c1 = cap, c2 = cap;
      if (fs__grow(&c->pair_src, &c1, (size_t)p + 1, sizeof(int32_t)) ||
          fs__grow(&c->pair_dst, &c2, (size_t)p + 1, sizeof(int32_t)) ||
          fs__grow(&count, &cap2, (size_t)p + 1, sizeof(int32_t)) ||
          fs__u64map_put(&c->pair_of, key, p))
        goto oom;
      cap = c1;
      c->pair_src[p] = src;
      c->pair_dst[p] = dst;
      count[p] = 0;
      c->n_pairs++;
    }
    c->item_pair[i] = p;
    count[p]++;
  }
  size_t np = (size_t)c->n_pairs;
  c->pair_start = calloc(np + 1, sizeof(int32_t));
  c->pair_items = fs__malloc((size_t)n, sizeof(int32_t));
  c->pair_bytes = fs__malloc(np + 1, sizeof(double));
  c->pair_stamp = calloc(np + 1, sizeof(uint32_t));
  c->win_pairs = fs__malloc(np + 1, sizeof(int32_t));
  c->live = fs__malloc((size_t)n + 1, sizeof(int32_t));
  if (!c->pair_start || !c->pair_items || !c->pair_bytes || !c->pair_stamp || !c->win_pairs ||
      !c->live)
    goto oom;
  for (size_t p = 0; p < np; p++) c->pair_start[p + 1] = c->pair_start[p] + count[p];
  for (size_t p = 0; p < np; p++) count[p] = 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t p = c->item_pair[i];
    if (p >= 0) c->pair_items[c->pair_start[p] + count[p]++] = i;
  }
  free(count);
  return 0;
oom:
  free(count);
  return fs_err_set(err, FS_ENOMEM, "out of memory indexing flows for the controller");
}

int fs_netctl_new(fs_sim *s, const fs_netctl_opts *o, fs_netctl **out, fs_err *err) {
  const fs_topo *t = fs_sim_topo(s);
  if (!(o->interval_s >= 0) || !isfinite(o->interval_s) || !(o->reconfig_s >= 0) ||
      !isfinite(o->reconfig_s) || !(o->detect_s >= 0) || !isfinite(o->detect_s))
    return fs_err_set(err, FS_EINVAL,
                      "controller times must be finite and >= 0 (interval %g s, reconfiguration "
                      "%g s, detection %g s)",
                      o->interval_s, o->reconfig_s, o->detect_s);
  if (o->interval_s > 0 && o->interval_s < 1e-9)
    return fs_err_set(err, FS_EINVAL, "re-optimisation interval %g s is below 1 ns",
                      o->interval_s);
  for (int32_t i = 0; i < o->n_failures; i++)
    if (o->failures[i].link < 0 || o->failures[i].link >= t->n_links ||
        !(o->failures[i].at_s >= 0) || !isfinite(o->failures[i].at_s))
      return fs_err_set(err, FS_EINVAL, "failure %d: link %d at %g s is out of range", i,
                        o->failures[i].link, o->failures[i].at_s);
  fs_netctl *c = calloc(1, sizeof(*c));
  if (!c) return fs_err_set(err, FS_ENOMEM, "out of memory creating the controller");
  c->sim = s;
  c->t = t;
  c->o = *o;
  fs__u64map_init(&c->pair_of);
  fs_route_init(&c->rt);
  int rc;
  c->down = calloc((size_t)t->n_links + 1, 1);
  c->failures = fs__malloc((size_t)o->n_failures + 1, sizeof(*c->failures));
  c->fail_evs = fs__malloc((size_t)o->n_failures + 1, sizeof(*c->fail_evs));
  if (!c->down || !c->failures || !c->fail_evs) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory creating the controller");
    goto fail;
  }
  if (o->n_failures) memcpy(c->failures, o->failures, (size_t)o->n_failures * sizeof(*c->failures));
  c->o.failures = c->failures;
  c->o.pinned = o->pinned; /* read by index_pairs only */
  if ((rc = index_pairs(c, err)) || (rc = fs_router_new(t, &c->router, err))) goto fail;
  for (int32_t i = 0; i < o->n_failures; i++) {
    c->fail_evs[i] = (fail_ev){c, i};
    if ((rc = fs_sim_add_timer(s, c->failures[i].at_s, fail_now, &c->fail_evs[i], err))) goto fail;
  }
  if (o->interval_s > 0 && (rc = fs_sim_add_timer(s, o->interval_s, tick, c, err))) goto fail;
  *out = c;
  return 0;
fail:
  fs_netctl_free(c);
  return rc;
}

void fs_netctl_stats_get(const fs_netctl *c, fs_netctl_stats *out) { *out = c->st; }

void fs_netctl_free(fs_netctl *c) {
  if (!c) return;
  fs__u64map_free(&c->pair_of);
  fs_route_free(&c->rt);
  fs_router_free(c->router);
  fs_topo_free(c->deg);
  FS__FREE_ALL(c->deg_map, c->down, c->failures, c->fail_evs, c->pair_src, c->pair_dst,
               c->pair_start, c->pair_items, c->item_pair, c->pinned, c->pair_bytes, c->pair_stamp,
               c->win_pairs, c->live, c);
}

int32_t fs_netctl_parse_target(const fs_topo *t, const char *what, int32_t *links, int32_t max,
                               fs_err *err) {
  char a[64], b[64];
  const char *dash = strchr(what, '-');
  if (!dash) {
    int32_t v = fs_topo_node_find(t, what);
    if (v < 0 || t->nodes[v].kind == FS_NODE_HOST)
      return fs_err_set(err, FS_EINVAL, "no switch named '%s' (names as 'fabricsim topo' prints them)", what);
    int32_t n = 0;
    for (int32_t k = t->out_start[v]; k < t->out_start[v + 1]; k++)
      if (n < max) links[n++] = t->out_links[k];
    return n;
  }
  size_t la = (size_t)(dash - what);
  if (la >= sizeof(a) || strlen(dash + 1) >= sizeof(b))
    return fs_err_set(err, FS_EINVAL, "cable name '%s' is too long", what);
  memcpy(a, what, la);
  a[la] = 0;
  snprintf(b, sizeof(b), "%s", dash + 1);
  int32_t u = fs_topo_node_find(t, a), v = fs_topo_node_find(t, b);
  if (u < 0 || v < 0)
    return fs_err_set(err, FS_EINVAL, "cable '%s': no node named '%s'", what, u < 0 ? a : b);
  int32_t n = 0;
  for (int32_t k = t->out_start[u]; k < t->out_start[u + 1]; k++)
    if (t->links[t->out_links[k]].to == v && n < max) links[n++] = t->out_links[k];
  if (!n) return fs_err_set(err, FS_EINVAL, "no cable joins %s and %s", a, b);
  return n;
}
