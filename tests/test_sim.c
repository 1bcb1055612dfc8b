/* Engine tests: closed forms (exact to 1e-9 relative), then properties on
 * random scenarios checked by an independent max-min optimality checker. */
#include <stdlib.h>
#include <string.h>

#include "../src/base/base.h"
#include "../src/topo/internal.h"
#include "fabricsim/route.h"
#include "fabricsim/sim.h"
#include "test.h"

#define REL 1e-9

static fs_topo *star(int hosts, double gbps, int64_t lat) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_star(hosts, gbps, lat, &t, &err), &err);
  return t;
}

/* Adds a flow over the deterministic shortest path. */
static int32_t add_flow(fs_sim *s, fs_router *r, int32_t src, int32_t dst,
                        double bytes, int64_t start_ns) {
  fs_route route;
  fs_route_init(&route);
  fs_err err = {0, ""};
  CHECK_OK(fs_route_shortest(r, src, dst, &route, &err), &err);
  int32_t id = fs_sim_add_flow(s, src, dst, bytes, start_ns, &route, &err);
  CHECK(id >= 0);
  fs_route_free(&route);
  return id;
}

TEST(test_sim_one_flow_alone) {
  fs_topo *t = star(2, 100, 1000);
  fs_router *r;
  fs_sim *s;
  fs_err err = {0, ""};
  fs_router_new(t, &r, &err);
  fs_sim_new(t, &s, &err);
  double B = 33554432;
  int32_t a = add_flow(s, r, 0, 1, B, 0);
  CHECK_OK(fs_sim_run(s, NULL, &err), &err);
  /* bytes*8/C plus two 1000 ns hops. */
  CHECK_REL(fs_sim_finish_s(s, a), B * 8 / 100e9 + 2e-6, REL, "s");
  CHECK_REL(fs_sim_start_s(s, a), 0, REL, "s");
  CHECK_REL(fs_sim_links(s)[0].bytes, B, REL, "B");
  CHECK_REL(fs_sim_links(s)[0].busy_s, B * 8 / 100e9, REL, "s");
  fs_sim_free(s);
  fs_router_free(r);
  fs_topo_free(t);
}

TEST(test_sim_incast_shares_equally) {
  for (int n = 2; n <= 9; n++) {
    fs_topo *t = star(n + 1, 40, 500);
    fs_router *r;
    fs_sim *s;
    fs_err err = {0, ""};
    fs_router_new(t, &r, &err);
    fs_sim_new(t, &s, &err);
    double B = 1e6;
    int32_t ids[16];
    for (int i = 0; i < n; i++) ids[i] = add_flow(s, r, i + 1, 0, B, 0);
    CHECK_OK(fs_sim_run(s, NULL, &err), &err);
    /* Each gets C/n for its whole life: all finish at n*B*8/C + 2 hops. */
    for (int i = 0; i < n; i++)
      CHECK_REL(fs_sim_finish_s(s, ids[i]), n * B * 8 / 40e9 + 1e-6, REL, "s");
    fs_sim_free(s);
    fs_router_free(r);
    fs_topo_free(t);
  }
}

/* Chain of k+1 switches joined by links of capacity caps[i]; host i hangs on
 * switch i (host links 10x faster than any chain link). */
static fs_topo *chain(int k, const double *caps_gbps, int64_t lat) {
  fs_topo_builder b;
  fs_err err = {0, ""};
  fs_topo_builder_init(&b, "chain", 2 * (k + 1), 4 * (k + 1), &err);
  for (int i = 0; i <= k; i++) fs_topo_builder_node(&b, FS_NODE_HOST, 0, i, -1);
  for (int i = 0; i <= k; i++) fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, i, -1);
  for (int i = 0; i <= k; i++) fs_topo_builder_cable(&b, i, k + 1 + i, 1e13, lat);
  for (int i = 0; i < k; i++)
    fs_topo_builder_cable(&b, k + 1 + i, k + 2 + i, caps_gbps[i] * 1e9, lat);
  fs_topo *t = NULL;
  CHECK_OK(fs_topo_builder_finish(&b, &t, &err), &err);
  return t;
}

TEST(test_sim_parking_lot) {
  /* One long flow over k chain links, one short flow on each chain link.
   * Max-min: every chain link is shared by two flows. With capacities c_i the
   * long flow gets min_i c_i / 2 and short flow i gets c_i - that. */
  enum { K = 4 };
  double caps[K] = {100, 60, 80, 100};
  fs_topo *t = chain(K, caps, 0);
  fs_router *r;
  fs_sim *s;
  fs_err err = {0, ""};
  fs_router_new(t, &r, &err);
  fs_sim_new(t, &s, &err);
  double B = 1e9; /* large: nobody finishes early in the window we check */
  int32_t lng = add_flow(s, r, 0, K, B, 0);
  int32_t sh[K];
  for (int i = 0; i < K; i++) sh[i] = add_flow(s, r, i, i + 1, B, 0);
  CHECK_OK(fs_sim_run(s, NULL, &err), &err);
  /* The schedule by hand: rates long 30, short {70, 30, 50, 70} Gb/s. */
  double rl = 30e9 / 8, rs[K] = {70e9 / 8, 30e9 / 8, 50e9 / 8, 70e9 / 8};
  /* Short flows 0 and 3 (70) finish first at B/rs0; then link 0 and 3 only
   * carry the long flow, which is still bottlenecked at link 1 (30+30=60). */
  double t0 = B / rs[0];
  CHECK_REL(fs_sim_finish_s(s, sh[0]), t0, REL, "s");
  CHECK_REL(fs_sim_finish_s(s, sh[3]), t0, REL, "s");
  /* Short flow 2 at 50 until t0, then still 50 (link 2: 80 - 30). */
  double t2 = B / rs[2];
  CHECK_REL(fs_sim_finish_s(s, sh[2]), t2, REL, "s");
  /* Long and short-1 both at 30 on link 1 until they finish together. */
  CHECK_REL(fs_sim_finish_s(s, sh[1]), B / rs[1], REL, "s");
  CHECK_REL(fs_sim_finish_s(s, lng), B / rl, REL, "s");
  fs_sim_free(s);
  fs_router_free(r);
  fs_topo_free(t);
}

TEST(test_sim_parking_lot_rates_change) {
  /* Equal capacities C on 3 links; short flows of S < B bytes. All at C/2
   * until the shorts drain at t1 = S/(C/2); the long flow then runs at C:
   * finish = t1 + (B - S)/C + its path latency (5 hops). */
  double caps[3] = {10, 10, 10};
  fs_topo *t = chain(3, caps, 100);
  fs_router *r;
  fs_sim *s;
  fs_err err = {0, ""};
  fs_router_new(t, &r, &err);
  fs_sim_new(t, &s, &err);
  double B = 5e6, S = 1e6, C = 10e9 / 8;
  int32_t lng = add_flow(s, r, 0, 3, B, 0);
  int32_t sh = add_flow(s, r, 1, 2, S, 0);
  add_flow(s, r, 0, 1, S, 0);
  add_flow(s, r, 2, 3, S, 0);
  CHECK_OK(fs_sim_run(s, NULL, &err), &err);
  double t1 = S / (C / 2);
  CHECK_REL(fs_sim_finish_s(s, sh), t1 + 3 * 100e-9, REL, "s");
  CHECK_REL(fs_sim_finish_s(s, lng), t1 + (B - S) / C + 5 * 100e-9, REL, "s");
  fs_sim_free(s);
  fs_router_free(r);
  fs_topo_free(t);
}

TEST(test_sim_staggered_arrival) {
  /* a alone on the shared downlink until tb, then a and b share it. */
  fs_topo *t = star(3, 100, 250);
  fs_router *r;
  fs_sim *s;
  fs_err err = {0, ""};
  fs_router_new(t, &r, &err);
  fs_sim_new(t, &s, &err);
  double B = 12.5e6, C = 100e9 / 8;
  int64_t tb_ns = 400000;
  double tb = tb_ns * 1e-9;
  int32_t a = add_flow(s, r, 0, 2, B, 0);
  int32_t b = add_flow(s, r, 1, 2, B, tb_ns);
  CHECK_OK(fs_sim_run(s, NULL, &err), &err);
  double ta = tb + (B - C * tb) / (C / 2);
  double sent_b = (C / 2) * (ta - tb);
  double tbd = ta + (B - sent_b) / C;
  CHECK_REL(fs_sim_start_s(s, b), tb, REL, "s");
  CHECK_REL(fs_sim_finish_s(s, a), ta + 500e-9, REL, "s");
  CHECK_REL(fs_sim_finish_s(s, b), tbd + 500e-9, REL, "s");
  CHECK_REL(fs_sim_makespan_s(s), tbd + 500e-9, REL, "s");
  fs_sim_free(s);
  fs_router_free(r);
  fs_topo_free(t);
}

typedef struct last_progress {
  double now_s;
  int calls;
} last_progress;

static void record_progress(void *ctx, const fs_sim_progress *p) {
  last_progress *lp = ctx;
  lp->now_s = p->now_s;
  lp->calls++;
}

TEST(test_sim_clock_stops_at_last_event) {
  /* big and small share one downlink at C/2; small drains at 2*Bs/C and big
   * speeds up to C. Its first drain prediction (2*Bb/C) is then superseded
   * and lies well after the end (Bb+Bs)/C + latency: it must not move the
   * clock, neither in the progress report nor in fs_sim_now_s. */
  fs_topo *t = star(3, 100, 250);
  fs_router *r;
  fs_sim *s;
  fs_err err = {0, ""};
  fs_router_new(t, &r, &err);
  fs_sim_new(t, &s, &err);
  double Bb = 10e6, Bs = 1e6, C = 100e9 / 8;
  int32_t big = add_flow(s, r, 0, 2, Bb, 0);
  add_flow(s, r, 1, 2, Bs, 0);
  last_progress lp = {-1, 0};
  fs_sim_opts o = {0};
  o.progress = record_progress;
  o.progress_ctx = &lp;
  CHECK_OK(fs_sim_run(s, &o, &err), &err);
  double end = (Bb + Bs) / C + 500e-9;
  CHECK_REL(fs_sim_finish_s(s, big), end, REL, "s");
  CHECK_REL(fs_sim_makespan_s(s), end, REL, "s");
  CHECK(lp.calls >= 1);
  CHECK_REL(lp.now_s, fs_sim_makespan_s(s), REL, "s");
  CHECK_REL(fs_sim_now_s(s), fs_sim_makespan_s(s), REL, "s");
  fs_sim_free(s);
  fs_router_free(r);
  fs_topo_free(t);
}

TEST(test_sim_queue_memory_follows_flows_not_reratings) {
  /* n flows arrive one by one on one downlink and each arrival re-rates
   * every flow in flight: ~n^2/2 drain predictions over the run, of which
   * at most n are live at a time. Holding the dead ones would take
   * ~36 bytes x 2e6 = 72 MB here; the engine must stay near its O(n)
   * state (flows, routes, per-link lists: well under 1 MiB). */
  enum { N = 2000 };
  fs_topo *t = star(N + 1, 100, 250);
  fs_router *r;
  fs_sim *s;
  fs_err err = {0, ""};
  fs_router_new(t, &r, &err);
  fs_sim_new(t, &s, &err);
  for (int32_t i = 0; i < N; i++) add_flow(s, r, i + 1, 0, 1e9, (int64_t)i * 1000);
  CHECK_OK(fs_sim_run(s, NULL, &err), &err);
  fs_sim_counters c = fs_sim_get_counters(s);
  CHECK(c.flows_rerated > (uint64_t)N * N / 2);
  CHECK(c.max_active == N);
  CHECK(c.memory_bytes < 2u * 1024 * 1024);
  fs_sim_free(s);
  fs_router_free(r);
  fs_topo_free(t);
}

TEST(test_sim_chain_and_diamond_with_tasks) {
  /* task t0 (3 us) -> flow a -> {flow b, flow c} -> task d (2 us) -> flow e.
   * Flows use disjoint host pairs, so no contention: each takes B/C + 2L. */
  fs_topo *t = star(8, 50, 700);
  fs_router *r;
  fs_sim *s;
  fs_err err = {0, ""};
  fs_router_new(t, &r, &err);
  fs_sim_new(t, &s, &err);
  double B = 2e6, C = 50e9 / 8, f = B / C + 1400e-9;
  int32_t t0 = fs_sim_add_task(s, 0, 0, 3000, &err);
  int32_t a = add_flow(s, r, 0, 1, B, 0);
  int32_t b = add_flow(s, r, 2, 3, B, 0);
  int32_t c = add_flow(s, r, 4, 5, B, 0);
  int32_t d = fs_sim_add_task(s, 5, 0, 2000, &err);
  int32_t e = add_flow(s, r, 6, 7, B, 0);
  fs_sim_add_dep(s, t0, a, &err);
  fs_sim_add_dep(s, a, b, &err);
  fs_sim_add_dep(s, a, c, &err);
  fs_sim_add_dep(s, b, d, &err);
  fs_sim_add_dep(s, c, d, &err);
  fs_sim_add_dep(s, d, e, &err);
  CHECK_OK(fs_sim_run(s, NULL, &err), &err);
  CHECK_REL(fs_sim_finish_s(s, t0), 3e-6, REL, "s");
  CHECK_REL(fs_sim_finish_s(s, a), 3e-6 + f, REL, "s");
  CHECK_REL(fs_sim_start_s(s, b), 3e-6 + f, REL, "s");
  CHECK_REL(fs_sim_finish_s(s, c), 3e-6 + 2 * f, REL, "s");
  CHECK_REL(fs_sim_finish_s(s, d), 5e-6 + 2 * f, REL, "s");
  CHECK_REL(fs_sim_finish_s(s, e), 5e-6 + 3 * f, REL, "s");
  fs_sim_free(s);
  fs_router_free(r);
  fs_topo_free(t);
}

TEST(test_sim_start_time_after_deps_and_zero_bytes) {
  /* A flow whose earliest start is later than its dependency's finish waits;
   * a zero-byte flow takes just its latency. */
  fs_topo *t = star(4, 10, 1000);
  fs_router *r;
  fs_sim *s;
  fs_err err = {0, ""};
  fs_router_new(t, &r, &err);
  fs_sim_new(t, &s, &err);
  int32_t z = add_flow(s, r, 0, 1, 0, 0);
  int32_t late = add_flow(s, r, 2, 3, 1e4, 50000);
  fs_sim_add_dep(s, z, late, &err);
  CHECK_OK(fs_sim_run(s, NULL, &err), &err);
  CHECK_REL(fs_sim_finish_s(s, z), 2e-6, REL, "s");
  CHECK_REL(fs_sim_start_s(s, late), 50e-6, REL, "s");
  CHECK_REL(fs_sim_finish_s(s, late), 50e-6 + 1e4 * 8 / 10e9 + 2e-6, REL, "s");
  fs_sim_free(s);
  fs_router_free(r);
  fs_topo_free(t);
}

TEST(test_sim_detects_cycle) {
  fs_topo *t = star(2, 10, 0);
  fs_sim *s;
  fs_err err = {0, ""};
  fs_sim_new(t, &s, &err);
  int32_t x = fs_sim_add_task(s, 0, 0, 1, &err);
  int32_t y = fs_sim_add_task(s, 0, 0, 1, &err);
  int32_t z = fs_sim_add_task(s, 0, 0, 1, &err);
  fs_sim_add_dep(s, x, y, &err);
  fs_sim_add_dep(s, y, z, &err);
  fs_sim_add_dep(s, z, y, &err);
  CHECK_EQ_INT(fs_sim_run(s, NULL, &err), FS_ECYCLE);
  int32_t cyc[8];
  CHECK_EQ_INT(fs_sim_cycle(s, cyc, 8), 2);
  CHECK((cyc[0] == y && cyc[1] == z) || (cyc[0] == z && cyc[1] == y));
  fs_sim_free(s);
  fs_topo_free(t);
}

TEST(test_sim_sent_dependency_pipelines_messages) {
  /* b waits for a's last byte to leave (B/C), not for a to arrive (+2L);
   * c waits for b to arrive. A task cannot be a 'sent' predecessor. */
  fs_topo *t = star(3, 10, 5000);
  fs_router *r;
  fs_sim *s;
  fs_err err = {0, ""};
  fs_router_new(t, &r, &err);
  fs_sim_new(t, &s, &err);
  double B = 1e5, C = 10e9 / 8;
  int32_t a = add_flow(s, r, 0, 1, B, 0);
  int32_t b = add_flow(s, r, 0, 2, B, 0);
  int32_t c = add_flow(s, r, 0, 1, 0, 0);
  int32_t task = fs_sim_add_task(s, 0, 0, 1, &err);
  CHECK_OK(fs_sim_add_dep_sent(s, a, b, &err), &err);
  CHECK_OK(fs_sim_add_dep_sent(s, c, task, &err), &err);
  CHECK_OK(fs_sim_add_dep(s, b, c, &err), &err);
  CHECK_EQ_INT(fs_sim_add_dep_sent(s, task, a, &err), FS_EINVAL);
  CHECK_OK(fs_sim_run(s, NULL, &err), &err);
  CHECK_REL(fs_sim_start_s(s, b), B / C, REL, "s");
  CHECK_REL(fs_sim_finish_s(s, b), 2 * B / C + 10e-6, REL, "s");
  CHECK_REL(fs_sim_start_s(s, task), 2 * B / C + 10e-6, REL, "s"); /* 0-byte c: sent at start */
  fs_sim_free(s);
  fs_router_free(r);
  fs_topo_free(t);
}
