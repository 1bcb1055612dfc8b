/* Tests of the optical fabrics (awgr, sirius; docs/model.md, "Optical
 * fabrics"): counts, hop statistics against the BFS oracle, bisection and
 * per-pair rates against hand-computed closed forms, slot-wait latency,
 * Sirius minimal and Valiant routes (Valiant at most twice the direct
 * latency), the cost by hand, and collectives that run on both. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fabricsim/coll.h"
#include "fabricsim/route.h"
#include "fabricsim/topo.h"
#include "test.h"
#include "topo_oracle.h"

static void stats_of(const fs_topo *t, fs_topo_stats *st) {
  fs_err err = {0, ""};
  memset(st, 0, sizeof(*st));
  CHECK_OK(fs_topo_stats_compute(t, st, &err), &err);
}

TEST(test_topo_optical_awgr_counts_hops_bisection) {
  static const int sizes[] = {2, 3, 5, 16};
  for (int i = 0; i < 4; i++) {
    int n = sizes[i];
    char s[64];
    snprintf(s, sizeof(s), "awgr:hosts=%d", n);
    fs_topo *t = oracle_spec(s);
    if (!t) continue;
    /* no switch: hosts only, one channel cable per pair */
    CHECK_EQ_CTX(t->n_nodes, n, s);
    CHECK_EQ_CTX(t->n_hosts, n, s);
    CHECK_EQ_CTX(t->n_links / 2, n * (n - 1) / 2, s);
    fs_topo_stats st;
    stats_of(t, &st);
    CHECK_EQ_CTX(st.switches, 0, s);
    CHECK_EQ_CTX(st.diameter_hops, 1, s);
    CHECK_REL(st.avg_hops, 1.0, 1e-12, "hops");
    int d;
    double avg;
    oracle_hops(t, 0, &d, &avg);
    CHECK_EQ_CTX(d, 1, s);
    /* floor(n/2) * ceil(n/2) channels of 25 Gb/s cross the cut */
    double want = (double)(n / 2) * (double)(n - n / 2) * 25e9;
    CHECK_REL(st.bisection_bps, want, 1e-9, "bps");
    CHECK_REL(fs_topo_bisection_formula(t), want, 1e-12, "bps");
    fs_topo_free(t);
  }
  /* 16 hosts: 8 x 8 = 64 channels, 1600 Gb/s; port_gbps=300 splits into
   * 300 / 15 = 20 Gb/s channels, 64 x 20 = 1280 Gb/s */
  fs_topo *t = oracle_spec("awgr:hosts=16,port_gbps=300,latency_ns=250");
  if (t) {
    CHECK_REL(t->links[0].capacity_bps, 20e9, 1e-12, "bps");
    CHECK_EQ_INT(t->links[0].latency_ns, 250);
    fs_topo_stats st;
    stats_of(t, &st);
    CHECK_REL(st.bisection_bps, 1280e9, 1e-9, "bps");
  }
  fs_topo_free(t);
}

TEST(test_topo_optical_sirius_rates_and_slot_latency) {
  fs_topo *t = oracle_spec("sirius:hosts=16");
  if (t) {
    CHECK_EQ_INT(t->n_nodes, 32);
    CHECK_EQ_INT(t->n_links / 2, 16 + 120);
    /* host cable: the 50 Gb/s port, in-node; node pair: 50 / 15 Gb/s and
     * 300 ns of fibre + 15 slots x 100 ns / 2 = 1050 ns */
    CHECK_REL(t->links[0].capacity_bps, 50e9, 1e-12, "bps");
    CHECK_EQ_INT(t->links[0].latency_ns, 0);
    for (int32_t l = 2 * 16; l < t->n_links; l++) {
      CHECK_REL(t->links[l].capacity_bps, 50e9 / 15, 1e-12, "bps");
      CHECK_EQ_INT(t->links[l].latency_ns, 1050);
    }
    fs_topo_stats st;
    stats_of(t, &st);
    CHECK_EQ_INT(st.switches, 16);
    CHECK_EQ_INT(st.diameter_hops, 3);
    int d;
    double avg;
    oracle_hops(t, 0, &d, &avg);
    CHECK_EQ_INT(d, 3);
    CHECK_REL(avg, 3.0, 1e-12, "hops");
    /* 8 x 8 pairs x 50/15 Gb/s = 213.33 Gb/s: what a cycle gives the cut */
    CHECK_REL(st.bisection_bps, 64 * 50e9 / 15, 1e-9, "bps");
  }
  fs_topo_free(t);
  /* hand case: 5 nodes, 40 Gb/s: 10 Gb/s a pair, 4 slots of 30 ns: 60 ns
   * wait + 100 ns */
  t = oracle_spec("sirius:hosts=5,port_gbps=40,slot_ns=30,latency_ns=100");
  if (t) {
    CHECK_REL(t->links[2 * 5].capacity_bps, 10e9, 1e-12, "bps");
    CHECK_EQ_INT(t->links[2 * 5].latency_ns, 160);
  }
  fs_topo_free(t);
  CHECK_EQ_INT(fs_sirius_hop_ns(4, 0, 3), 5); /* 3 x 3 / 2 = 4.5, rounded up */
}

static int64_t route_ns(const fs_topo *t, const fs_route *rt) {
  int64_t ns = 0;
  for (int32_t i = 0; i < rt->n; i++) ns += t->links[rt->links[i]].latency_ns;
  return ns;
}

TEST(test_topo_optical_sirius_valiant_at_most_twice_direct) {
  fs_topo *t = oracle_spec("sirius:hosts=6");
  fs_router *r = NULL;
  fs_err err = {0, ""};
  fs_route a, b;
  fs_route_init(&a);
  fs_route_init(&b);
  if (t) CHECK_OK(fs_router_new(t, &r, &err), &err);
  CHECK_OK(fs_route_mode_check(FS_ROUTE_VALIANT, t, &err), &err);
  int seen[6] = {0};
  for (int32_t s = 0; r && s < 6; s++)
    for (int32_t d = 0; d < 6; d++) {
      if (s == d) continue;
      CHECK_OK(fs_route_by_mode(r, FS_ROUTE_MINIMAL, s, d, 1, (uint64_t)(s * 6 + d), &a, &err),
               &err);
      CHECK_OK(fs_route_by_mode(r, FS_ROUTE_VALIANT, s, d, 1, (uint64_t)(s * 6 + d), &b, &err),
               &err);
      CHECK_EQ_INT(a.hops, 3);
      CHECK_EQ_INT(b.hops, 4);
      /* direct: one slot hop of 300 + 5 x 100 / 2 = 550 ns; VLB: two */
      CHECK_EQ_INT(route_ns(t, &a), 550);
      CHECK_EQ_INT(route_ns(t, &b), 1100);
      CHECK(route_ns(t, &b) <= 2 * route_ns(t, &a));
      /* the intermediate is a third node */
      int32_t mid = t->links[b.links[1]].to - 6;
      CHECK(mid != s && mid != d && mid >= 0 && mid < 6);
      if (mid >= 0 && mid < 6) seen[mid]++;
    }
  /* the hash spreads over every node */
  for (int i = 0; i < 6; i++) CHECK(seen[i] > 0);
  fs_route_free(&a);
  fs_route_free(&b);
  fs_router_free(r);
  fs_topo_free(t);
  /* two nodes: no third, Valiant is direct */
  t = oracle_spec("sirius:hosts=2");
  r = NULL;
  fs_route_init(&a);
  if (t) CHECK_OK(fs_router_new(t, &r, &err), &err);
  if (r) {
    CHECK_OK(fs_route_by_mode(r, FS_ROUTE_VALIANT, 0, 1, 1, 1, &a, &err), &err);
    CHECK_EQ_INT(a.hops, 3);
  }
  fs_route_free(&a);
  fs_router_free(r);
  fs_topo_free(t);
  /* Valiant needs a node that forwards: not on awgr */
  t = oracle_spec("awgr:hosts=4");
  if (t) CHECK_EQ_INT(fs_route_mode_check(FS_ROUTE_VALIANT, t, &err), FS_EINVAL);
  fs_topo_free(t);
}

TEST(test_topo_optical_cost_by_hand) {
  fs_topo_cost c;
  /* awgr 16 x 25 Gb/s channels: a 375 Gb/s port, the 400 row: NIC $1800
   * 25 W, transceiver $700 11 W; 2 x 30 m of fibre at $1.5; grating $100
   * a port: 16 x (1800 + 700 + 90 + 100) = $43,040, 16 x 36 = 576 W */
  fs_topo *t = oracle_spec("awgr:hosts=16");
  if (t) {
    fs_topo_cost_compute(t, &c);
    CHECK_REL(c.usd, 43040, 1e-12, "usd");
    CHECK_REL(c.watts, 576, 1e-12, "W");
    CHECK_EQ_INT(c.part[FS_PART_SWITCH_PORT].count, 0);
    CHECK_EQ_INT(c.part[FS_PART_XCVR_DR].count, 16);
  }
  fs_topo_free(t);
  /* sirius 16 x 50 Gb/s: the 100 row, $700 15 W + $200 3.5 W:
   * 16 x (700 + 200 + 90 + 100) = $17,440, 16 x 18.5 = 296 W */
  t = oracle_spec("sirius:hosts=16");
  if (t) {
    fs_topo_cost_compute(t, &c);
    CHECK_REL(c.usd, 17440, 1e-12, "usd");
    CHECK_REL(c.watts, 296, 1e-12, "W");
  }
  fs_topo_free(t);
}

/* A training job runs on a fabric without switches: a GPU's port is what
 * it sends over its direct channels (63 x 400/63 Gb/s on a 64-GPU AWGR),
 * so the job's 400 Gb/s NIC is accepted and the iteration is timed. */
TEST(test_topo_optical_train_on_awgr) {
  static char out[1 << 14];
  CHECK_EQ_INT(test_run_cli("train examples/gpt-13b-awgr.json --no-compare", "2>&1", out,
                            sizeof(out)),
               0);
  CHECK(strstr(out, "iteration time:") != NULL);
  CHECK(strstr(out, "awgr:hosts=64") != NULL);
}
