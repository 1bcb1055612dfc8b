/* Property tests of the engine on random seeded scenarios. An observer
 * checks, at every batch, that no link is over capacity and that the rates
 * are max-min fair (every flow has a saturated link on which no other flow
 * has a higher rate: the bottleneck characterisation of max-min fairness,
 * Bertsekas & Gallager, Data Networks, 6.5.2). It also integrates each
 * flow's rate over time, which must add up to the flow's bytes. */
#include <stdlib.h>
#include <string.h>

#include "../src/base/base.h"
#include "fabricsim/route.h"
#include "fabricsim/sim.h"
#include "test.h"

#define TOL 1e-9

typedef struct alloc_view {
  int32_t n;
  const int32_t **links;
  const double **w;
  const int32_t *nl;
  const double *rate_bps;
} alloc_view;

/* Returns the number of violations; `load` is scratch of n_links doubles;
 * cap the capacity of each link (NULL: the topology's). */
static int check_maxmin(const fs_topo *t, const double *cap, const alloc_view *a, double *load) {
  int bad = 0;
  memset(load, 0, (size_t)t->n_links * sizeof(double));
  double *maxr = calloc((size_t)t->n_links, sizeof(double));
  for (int32_t i = 0; i < a->n; i++)
    for (int32_t k = 0; k < a->nl[i]; k++) {
      int32_t l = a->links[i][k];
      load[l] += a->w[i][k] * a->rate_bps[i];
      if (a->rate_bps[i] > maxr[l]) maxr[l] = a->rate_bps[i];
    }
  for (int32_t l = 0; l < t->n_links; l++)
    if (load[l] > (cap ? cap[l] : t->links[l].capacity_bps) * (1 + TOL)) bad++;
  for (int32_t i = 0; i < a->n; i++) {
    int has_bottleneck = 0;
    for (int32_t k = 0; k < a->nl[i]; k++) {
      int32_t l = a->links[i][k];
      int saturated = load[l] >= (cap ? cap[l] : t->links[l].capacity_bps) * (1 - TOL);
      if (saturated && a->rate_bps[i] >= maxr[l] * (1 - TOL)) has_bottleneck = 1;
    }
    if (!has_bottleneck) bad++;
  }
  free(maxr);
  return bad;
}

typedef struct observer {
  const fs_topo *t;
  double *delivered; /* per item */
  int32_t *prev_items;
  double *prev_rate;
  int32_t n_prev;
  double prev_t;
  double *load;
  int violations;
  int batches;
  /* optional: bytes per link integrated from the rates, with the routes in
   * force over each interval (copied, as a re-route replaces them) */
  double *link_bytes;
  int32_t *prev_links;
  double *prev_w;
  size_t prev_len, prev_cap;
} observer;

static void observer_free(observer *o) {
  free(o->delivered);
  free(o->prev_items);
  free(o->prev_rate);
  free(o->load);
  free(o->link_bytes);
  free(o->prev_links);
  free(o->prev_w);
}

static void observe(void *ctx, const fs_sim *s, double now) {
  observer *o = ctx;
  for (int32_t i = 0; i < o->n_prev; i++)
    o->delivered[o->prev_items[i]] += o->prev_rate[i] / 8 * (now - o->prev_t);
  if (o->link_bytes) {
    size_t at = 0;
    for (int32_t i = 0; i < o->n_prev; i++) {
      int32_t nl = o->prev_links[at++];
      for (int32_t k = 0; k < nl; k++, at++)
        o->link_bytes[o->prev_links[at]] += o->prev_w[at] * o->prev_rate[i] / 8 * (now - o->prev_t);
    }
    o->prev_len = 0;
  }
  int32_t n = fs_sim_n_active(s);
  alloc_view a = {n, malloc((size_t)n * sizeof(int32_t *) + 1),
                  malloc((size_t)n * sizeof(double *) + 1),
                  malloc((size_t)n * sizeof(int32_t) + 1), NULL};
  double *rate = malloc((size_t)n * sizeof(double) + 1);
  for (int32_t i = 0; i < n; i++) {
    int32_t it = fs_sim_active_flow(s, i);
    fs_sim_flow_route(s, it, &a.links[i], &a.w[i], (int32_t *)&a.nl[i]);
    rate[i] = fs_sim_flow_rate_bps(s, it);
    if (o->link_bytes) {
      size_t need = o->prev_len + 1 + (size_t)a.nl[i];
      if (need > o->prev_cap) {
        o->prev_cap = need * 2;
        o->prev_links = realloc(o->prev_links, o->prev_cap * sizeof(int32_t));
        o->prev_w = realloc(o->prev_w, o->prev_cap * sizeof(double));
      }
      o->prev_links[o->prev_len++] = a.nl[i];
      for (int32_t k = 0; k < a.nl[i]; k++, o->prev_len++) {
        o->prev_links[o->prev_len] = a.links[i][k];
        o->prev_w[o->prev_len] = a.w[i][k];
      }
    }
    o->prev_items[i] = it;
    o->prev_rate[i] = rate[i];
  }
  a.rate_bps = rate;
  double *cap = malloc((size_t)o->t->n_links * sizeof(double));
  for (int32_t l = 0; l < o->t->n_links; l++) cap[l] = fs_sim_link_capacity_bps(s, l);
  o->violations += check_maxmin(o->t, cap, &a, o->load);
  free(cap);
  o->n_prev = n;
  o->prev_t = now;
  o->batches++;
  free(a.links);
  free(a.w);
  free((void *)a.nl);
  free(rate);
}

TEST(test_props_checker_catches_bad_allocations) {
  /* Two flows on one 100 Gb/s link (a star, host 1 and 2 -> host 0). */
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  fs_topo_star(3, 100, 0, &t, &err);
  int32_t l1[] = {2, 1}, l2[] = {4, 1}; /* host->switch, switch->host0 */
  const int32_t *links[] = {l1, l2};
  double ones[] = {1, 1};
  const double *w[] = {ones, ones};
  int32_t nl[] = {2, 2};
  double load[16];
  double fair[] = {50e9, 50e9}, unfair_slack[] = {25e9, 50e9}, over[] = {50e9, 100e9},
         unequal[] = {40e9, 60e9};
  alloc_view a = {2, links, w, nl, fair};
  CHECK_EQ_INT(check_maxmin(t, NULL, &a, load), 0);
  a.rate_bps = unfair_slack; /* link not saturated: nobody is bottlenecked */
  CHECK(check_maxmin(t, NULL, &a, load) > 0);
  a.rate_bps = over;
  CHECK(check_maxmin(t, NULL, &a, load) > 0);
  a.rate_bps = unequal; /* saturated, but the 40 flow is not maximal on it */
  CHECK(check_maxmin(t, NULL, &a, load) > 0);
  fs_topo_free(t);
}

static fs_topo *random_topo(fs__rng *g) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  switch (fs__rng_below(g, 3)) {
    case 0:
      fs_topo_star(2 + (int)fs__rng_below(g, 10), 10 + 90 * fs__rng_unit(g),
                   (int64_t)fs__rng_below(g, 2000), &t, &err);
      break;
    case 1: {
      fs_leafspine_params p = {2 + (int32_t)fs__rng_below(g, 4), 1 + (int32_t)fs__rng_below(g, 3),
                               1 + (int32_t)fs__rng_below(g, 6), 100,
                               25 + 75 * fs__rng_unit(g), 1 + (int32_t)fs__rng_below(g, 2),
                               (int64_t)fs__rng_below(g, 1000)};
      fs_topo_leafspine(&p, &t, &err);
      break;
    }
    default:
      fs_topo_fattree(4, 40, (int64_t)fs__rng_below(g, 1000), &t, &err);
  }
  return t;
}

/* Builds a random DAG scenario into s and returns the item count. */
static int32_t random_scenario(fs__rng *g, const fs_topo *t, fs_router *r, fs_sim *s,
                               fs_route_mode mode, uint64_t seed, uint64_t max_extra) {
  int32_t n_items = 5 + (int32_t)fs__rng_below(g, max_extra);
  fs_route rt;
  fs_route_init(&rt);
  fs_err err = {0, ""};
  for (int32_t i = 0; i < n_items; i++) {
    int64_t start = fs__rng_below(g, 3) == 0 ? (int64_t)fs__rng_below(g, 200000) : 0;
    if (fs__rng_below(g, 6) == 0) {
      fs_sim_add_task(s, (int32_t)fs__rng_below(g, (uint64_t)t->n_hosts), start,
                      (int64_t)fs__rng_below(g, 50000), &err);
    } else {
      int32_t src = (int32_t)fs__rng_below(g, (uint64_t)t->n_hosts);
      int32_t dst = (int32_t)fs__rng_below(g, (uint64_t)t->n_hosts - 1);
      if (dst >= src) dst++;
      if (mode == FS_ROUTE_SPRAY)
        fs_route_spray(r, src, dst, &rt, &err);
      else if (mode == FS_ROUTE_ECMP)
        fs_route_ecmp(r, src, dst, seed, (uint64_t)i, &rt, &err);
      else
        fs_route_shortest(r, src, dst, &rt, &err);
      double bytes = fs__rng_below(g, 10) == 0 ? 0 : 1e3 + fs__rng_unit(g) * 5e6;
      CHECK(fs_sim_add_flow(s, src, dst, bytes, start, &rt, &err) >= 0);
    }
    /* up to 2 dependencies on earlier items keep it a DAG */
    for (int d = 0; i > 0 && d < 2; d++)
      if (fs__rng_below(g, 3) == 0)
        fs_sim_add_dep(s, (int32_t)fs__rng_below(g, (uint64_t)i), i, &err);
  }
  fs_route_free(&rt);
  return n_items;
}

TEST(test_props_random_scenarios) {
  for (uint64_t seed = 1; seed <= 100; seed++) {
    fs__rng g;
    fs__rng_seed(&g, seed);
    fs_topo *t = random_topo(&g);
    CHECK(t != NULL);
    if (!t) continue;
    fs_route_mode mode = (fs_route_mode)fs__rng_below(&g, 3);
    fs_router *r;
    fs_sim *s;
    fs_err err = {0, ""};
    fs_router_new(t, &r, &err);
    fs_sim_new(t, &s, &err);
    int32_t n = random_scenario(&g, t, r, s, mode, seed, seed % 4 ? 40 : 400);
    observer o = {t, calloc((size_t)n, sizeof(double)), calloc((size_t)n, sizeof(int32_t)),
                  calloc((size_t)n, sizeof(double)), 0, 0,
                  calloc((size_t)t->n_links, sizeof(double)), 0, 0, NULL, NULL, NULL, 0, 0};
    fs_sim_opts opts = {0};
    opts.observe = observe;
    opts.observe_ctx = &o;
    CHECK_OK(fs_sim_run(s, &opts, &err), &err);
    if (o.violations) fprintf(stderr, "  seed %llu: %d violations\n", (unsigned long long)seed,
                              o.violations);
    CHECK_EQ_INT(o.violations, 0);
    CHECK_EQ_INT(o.n_prev, 0); /* nothing in flight at the end */
    for (int32_t i = 0; i < n; i++) {
      CHECK(fs_sim_finish_s(s, i) >= fs_sim_start_s(s, i));
      if (fs_sim_item_kind(s, i) == FS_ITEM_FLOW)
        CHECK_REL(o.delivered[i], fs_sim_flow_bytes(s, i), 1e-9, "bytes");
    }
    observer_free(&o);
    fs_sim_free(s);
    fs_router_free(r);
    fs_topo_free(t);
  }
}

/* Staggered arrivals at scale: hundreds of flows in flight, each arrival
 * and departure at its own instant, which is where the re-rating walks
 * furthest from the change (the B5 benchmark's shape). Fat-tree with ECMP,
 * an oversubscribed leaf-spine with ECMP, and the fat-tree with spray (flows
 * of fractional weight on many links). */
TEST(test_props_staggered_arrivals) {
  for (int variant = 0; variant < 3; variant++) {
    fs__rng g;
    fs__rng_seed(&g, 77 + (uint64_t)variant);
    fs_topo *t = NULL;
    fs_err err = {0, ""};
    if (variant == 1) {
      fs_leafspine_params p = {8, 4, 8, 100, 100, 1, 1000}; /* 2:1 */
      CHECK_OK(fs_topo_leafspine(&p, &t, &err), &err);
    } else {
      CHECK_OK(fs_topo_fattree(8, 100, 1000, &t, &err), &err);
    }
    if (!t) continue;
    fs_router *r;
    fs_sim *s;
    fs_router_new(t, &r, &err);
    fs_sim_new(t, &s, &err);
    enum { N = 1500 };
    fs_route rt;
    fs_route_init(&rt);
    for (int32_t i = 0; i < N; i++) {
      int32_t src = (int32_t)fs__rng_below(&g, (uint64_t)t->n_hosts);
      int32_t dst = (int32_t)fs__rng_below(&g, (uint64_t)t->n_hosts - 1);
      if (dst >= src) dst++;
      if (variant == 2)
        CHECK_OK(fs_route_spray(r, src, dst, &rt, &err), &err);
      else
        CHECK_OK(fs_route_ecmp(r, src, dst, 1, (uint64_t)i, &rt, &err), &err);
      double bytes = 1e5 + fs__rng_unit(&g) * 1.5e6;
      int64_t start = (int64_t)fs__rng_below(&g, 1000000);
      CHECK(fs_sim_add_flow(s, src, dst, bytes, start, &rt, &err) >= 0);
    }
    fs_route_free(&rt);
    observer o = {t, calloc(N, sizeof(double)), calloc(N, sizeof(int32_t)),
                  calloc(N, sizeof(double)), 0, 0,
                  calloc((size_t)t->n_links, sizeof(double)), 0, 0, NULL, NULL, NULL, 0, 0};
    fs_sim_opts opts = {0};
    opts.observe = observe;
    opts.observe_ctx = &o;
    CHECK_OK(fs_sim_run(s, &opts, &err), &err);
    fs_sim_counters c = fs_sim_get_counters(s);
    CHECK(c.max_active >= 200); /* the case this test is for */
    CHECK(o.batches > N);       /* arrivals and departures mostly apart */
    if (o.violations) fprintf(stderr, "  variant %d: %d violations\n", variant, o.violations);
    CHECK_EQ_INT(o.violations, 0);
    for (int32_t i = 0; i < N; i++) CHECK_REL(o.delivered[i], fs_sim_flow_bytes(s, i), 1e-9, "bytes");
    observer_free(&o);
    fs_sim_free(s);
    fs_router_free(r);
    fs_topo_free(t);
  }
}

/* Every item's start and finish, interleaved (a new array). */
static double *item_times(const fs_sim *s, int32_t n) {
  double *x = malloc((size_t)n * 2 * sizeof(double));
  for (int32_t i = 0; x && i < n; i++) {
    x[2 * i] = fs_sim_start_s(s, i);
    x[2 * i + 1] = fs_sim_finish_s(s, i);
  }
  return x;
}

/* Two runs of the same random scenario give bit-identical times. */
TEST(test_props_deterministic) {
  for (uint64_t seed = 100; seed < 110; seed++) {
    double *times[2] = {NULL, NULL};
    int32_t n = 0;
    for (int run = 0; run < 2; run++) {
      fs__rng g;
      fs__rng_seed(&g, seed);
      fs_topo *t = random_topo(&g);
      fs_router *r;
      fs_sim *s;
      fs_err err = {0, ""};
      fs_router_new(t, &r, &err);
      fs_sim_new(t, &s, &err);
      n = random_scenario(&g, t, r, s, FS_ROUTE_ECMP, seed, 200);
      CHECK_OK(fs_sim_run(s, NULL, &err), &err);
      times[run] = item_times(s, n);
      fs_sim_free(s);
      fs_router_free(r);
      fs_topo_free(t);
    }
    CHECK(memcmp(times[0], times[1], (size_t)n * 2 * sizeof(double)) == 0);
    free(times[0]);
    free(times[1]);
  }
}

/* Leaving out the links that cannot bind (src/sim/prune.c) changes no time
 * and no link statistic: random scenarios run once on every link and once
 * pruned, on the random topologies plus non-blocking fabrics with spraying
 * (where every link but the hosts' is left out) and the same fabrics with
 * thinner cores (where the core links must stay); seeds 61-120 under tcp
 * (new connections: handshakes and rounds behind the switch queues). */
TEST(test_props_pruning_is_exact) {
  int pruned_runs = 0, kept_runs = 0;
  for (uint64_t seed = 1; seed <= 120; seed++) {
    double *times[2] = {NULL, NULL};
    fs_sim_link_stats *links[2] = {NULL, NULL};
    int64_t left_out[2] = {0, 0};
    int32_t n = 0, n_links = 0;
    for (int run = 0; run < 2; run++) {
      fs__rng g;
      fs__rng_seed(&g, seed);
      fs_topo *t = NULL;
      fs_err err = {0, ""};
      fs_route_mode mode;
      int kind = (int)(seed % 3);
      if (kind == 0) {
        t = random_topo(&g);
        mode = (fs_route_mode)fs__rng_below(&g, 3);
      } else {
        /* 1:1 or 2:1 (kind 2: half the spine links' speed) */
        fs_leafspine_params p = {4, 4, 4, 100, kind == 1 ? 100 : 50, 1, 500};
        CHECK_OK(fs_topo_leafspine(&p, &t, &err), &err);
        mode = FS_ROUTE_SPRAY;
      }
      if (!t) break;
      fs_router *r;
      fs_sim *s;
      fs_router_new(t, &r, &err);
      fs_sim_new(t, &s, &err);
      n = random_scenario(&g, t, r, s, mode, seed, seed % 4 ? 60 : 300);
      if (seed > 60) {
        fs_transport tp;
        fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
        tp.packet_bytes = 0; /* the fluid tcp model alone */
        CHECK_OK(fs_sim_set_transport(s, &tp, &err), &err);
      }
      fs_sim_opts opts = {0};
      opts.rate_all_links = run == 0;
      CHECK_OK(fs_sim_run(s, &opts, &err), &err);
      left_out[run] = fs_sim_get_counters(s).links_left_out;
      n_links = t->n_links;
      times[run] = item_times(s, n);
      links[run] = malloc((size_t)n_links * sizeof(fs_sim_link_stats));
      memcpy(links[run], fs_sim_links(s), (size_t)n_links * sizeof(fs_sim_link_stats));
      fs_sim_free(s);
      fs_router_free(r);
      fs_topo_free(t);
    }
    if (!times[1]) {
      free(times[0]);
      free(links[0]);
      continue;
    }
    CHECK_EQ_INT(left_out[0], 0);
    if (seed % 3 == 1) CHECK(left_out[1] > 0); /* non-blocking, sprayed: the fabric's links */
    pruned_runs += left_out[1] > 0;
    kept_runs += left_out[1] == 0;
    for (int32_t i = 0; i < 2 * n; i++)
      CHECK_REL(times[1][i], times[0][i], 1e-9, "start/finish with links left out");
    for (int32_t l = 0; l < n_links; l++) {
      CHECK_REL(links[1][l].bytes, links[0][l].bytes, 1e-9, "link bytes");
      CHECK_REL(links[1][l].busy_s, links[0][l].busy_s, 1e-9, "link busy time");
    }
    free(times[0]);
    free(times[1]);
    free(links[0]);
    free(links[1]);
  }
  CHECK(pruned_runs > 10);
  CHECK(kept_runs > 0);
}

/* The incremental re-rating under tcp, with and without the source's fair
 * queue (a link's waiting windows as one share rising past their flows'
 * rates), gives at every batch the rates and shares of a fill from scratch
 * (opts.check_rerate): random scenarios with several flows per source at
 * once. The queue must change some times (else this checks nothing of it). */
static double *tcp_times(uint64_t seed, int source_fq, int32_t *n, uint64_t *mismatches) {
  fs__rng g;
  fs__rng_seed(&g, seed);
  fs_topo *t = random_topo(&g);
  if (!t) return NULL;
  fs_route_mode mode = (fs_route_mode)fs__rng_below(&g, 3);
  fs_router *r;
  fs_sim *s;
  fs_err err = {0, ""};
  fs_router_new(t, &r, &err);
  fs_sim_new(t, &s, &err);
  *n = random_scenario(&g, t, r, s, mode, seed, 200);
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  tp.packet_bytes = 0; /* the fluid tcp model alone */
  tp.source_fq = source_fq;
  CHECK_OK(fs_sim_set_transport(s, &tp, &err), &err);
  fs_sim_opts opts = {0};
  opts.check_rerate = 1;
  CHECK_OK(fs_sim_run(s, &opts, &err), &err);
  *mismatches = fs_sim_get_counters(s).rerate_mismatches;
  double *x = item_times(s, *n);
  fs_sim_free(s);
  fs_router_free(r);
  fs_topo_free(t);
  return x;
}

TEST(test_props_source_queue_rerating_is_exact) {
  int differs = 0;
  for (uint64_t seed = 1; seed <= 40; seed++) {
    int32_t n = 0;
    uint64_t bad_fq = 0, bad_off = 0;
    double *fq = tcp_times(seed, 1, &n, &bad_fq), *off = tcp_times(seed, 0, &n, &bad_off);
    if (fq && off) {
      CHECK_EQ_INT(bad_fq, 0);
      CHECK_EQ_INT(bad_off, 0);
      for (int32_t i = 0; i < 2 * n && !differs; i++)
        differs = fabs(fq[i] - off[i]) > 1e-9 * fmax(fabs(off[i]), 1e-9);
    }
    free(fq);
    free(off);
  }
  CHECK(differs);
}

/* ---- the same under a changing network ----------------------------------
 * Timers at random instants lower, fail (0) or restore link capacities and
 * re-route random flows (new ECMP draw, random hold). The allocation must
 * stay max-min fair under the capacities in force, every flow must deliver
 * exactly its bytes, and the links must carry exactly the bytes sent over
 * them (sum over links = sum over flows of bytes x hops, as every re-route
 * is a shortest path of the same length). */
typedef struct chaos {
  fs__rng g;
  const fs_topo *t;
  fs_router *r;
  int32_t n_items;
  int32_t failed; /* link set to 0, or -1 */
  int fired;
} chaos;

static int chaos_timer(void *ctx, fs_sim *s, double now, fs_err *err) {
  chaos *c = ctx;
  c->fired++;
  if (c->failed >= 0) { /* restore what the last timer failed */
    int rc = fs_sim_set_link_capacity(s, c->failed, c->t->links[c->failed].capacity_bps, err);
    if (rc) return rc;
    c->failed = -1;
  }
  int32_t l = (int32_t)fs__rng_below(&c->g, (uint64_t)c->t->n_links);
  double frac = fs__rng_below(&c->g, 4) == 0 ? 0 : 0.2 + 0.8 * fs__rng_unit(&c->g);
  int rc = fs_sim_set_link_capacity(s, l, c->t->links[l].capacity_bps * frac, err);
  if (rc) return rc;
  if (frac == 0) c->failed = l;
  fs_route rt;
  fs_route_init(&rt);
  for (int k = 0; k < 3 && !rc; k++) {
    int32_t it = (int32_t)fs__rng_below(&c->g, (uint64_t)c->n_items);
    if (fs_sim_item_kind(s, it) != FS_ITEM_FLOW) continue;
    int32_t src, dst;
    fs_sim_flow_ends(s, it, &src, &dst);
    rc = fs_route_ecmp(c->r, src, dst, fs__rng_next(&c->g), (uint64_t)it, &rt, err);
    double hold = fs__rng_below(&c->g, 2) ? 0 : 5e-5 * fs__rng_unit(&c->g);
    if (!rc && (rc = fs_sim_reroute(s, it, &rt, hold, err)) > 0) rc = 0;
  }
  fs_route_free(&rt);
  /* The next change, while work remains; a failed link is always restored
   * by one, so nothing stalls for good. */
  if (!rc && (!fs_sim_idle(s) || c->failed >= 0))
    rc = fs_sim_add_timer(s, now + 1e-4 * fs__rng_unit(&c->g), chaos_timer, c, err);
  return rc;
}

TEST(test_props_random_dynamics) {
  int total_fired = 0;
  for (uint64_t seed = 1; seed <= 60; seed++) {
    fs__rng g;
    fs__rng_seed(&g, seed ^ 0xd1ce);
    fs_topo *t = random_topo(&g);
    CHECK(t != NULL);
    if (!t) continue;
    fs_router *r;
    fs_sim *s;
    fs_err err = {0, ""};
    fs_router_new(t, &r, &err);
    fs_sim_new(t, &s, &err);
    int32_t n = random_scenario(&g, t, r, s, FS_ROUTE_ECMP, seed, 60);
    chaos c = {g, t, r, n, -1, 0};
    CHECK_OK(fs_sim_add_timer(s, 1e-5, chaos_timer, &c, &err), &err);
    observer o = {t, calloc((size_t)n, sizeof(double)), calloc((size_t)n, sizeof(int32_t)),
                  calloc((size_t)n, sizeof(double)), 0, 0,
                  calloc((size_t)t->n_links, sizeof(double)), 0, 0,
                  calloc((size_t)t->n_links, sizeof(double)), NULL, NULL, 0, 0};
    fs_sim_opts opts = {0};
    opts.observe = observe;
    opts.observe_ctx = &o;
    CHECK_OK(fs_sim_run(s, &opts, &err), &err);
    total_fired += c.fired;
    CHECK_EQ_INT(o.violations, 0);
    double want = 0, got = 0;
    for (int32_t i = 0; i < n; i++) {
      CHECK(fs_sim_finish_s(s, i) >= fs_sim_start_s(s, i));
      if (fs_sim_item_kind(s, i) != FS_ITEM_FLOW) continue;
      CHECK_REL(o.delivered[i], fs_sim_flow_bytes(s, i), 1e-9, "bytes");
      const int32_t *links;
      const double *w;
      int32_t nl;
      fs_sim_flow_route(s, i, &links, &w, &nl);
      double hops = 0;
      for (int32_t k = 0; k < nl; k++) hops += w[k];
      want += fs_sim_flow_bytes(s, i) * hops;
    }
    int bad_links = 0;
    for (int32_t l = 0; l < t->n_links; l++) {
      got += fs_sim_links(s)[l].bytes;
      double d = fabs(fs_sim_links(s)[l].bytes - o.link_bytes[l]);
      bad_links += d > 1e-9 * fmax(o.link_bytes[l], 1.0);
    }
    CHECK_REL(got, want, 1e-9, "link bytes");
    CHECK_EQ_INT(bad_links, 0); /* each link carried what flowed over it */
    observer_free(&o);
    fs_sim_free(s);
    fs_router_free(r);
    fs_topo_free(t);
  }
  CHECK(total_fired > 100); /* the network did change, many times */
}
