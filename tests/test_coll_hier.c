/* Tests of the hierarchical (hier) and in-network aggregation (inc)
 * collectives: simulated time equals the closed form on a star for every
 * node size dividing p, the closed forms equal hand computations, degenerate
 * node sizes are exactly the flat ring, and on leaf-spines the times follow
 * from the bottleneck link (expected factors derived in each test). */
#include <stdlib.h>
#include <string.h>

#include "coll_harness.h"
#include "fabricsim/coll.h"
#include "test.h"

#define LAT_NS 500
#define GBPS 100.0
#define ALPHA (2 * LAT_NS * 1e-9) /* host -> switch -> host on the star */
#define BETA (8 / (GBPS * 1e9))

/* The star's switch can aggregate (algorithm inc). */
static const coll_star STAR = {LAT_NS, GBPS, COLL_SWITCH_INC};

static fs_coll_params params(fs_coll_algo a, fs_coll_op op, double bytes, int32_t node_size) {
  fs_coll_params prm;
  fs_coll_params_init(&prm);
  prm.algo = a;
  prm.op = op;
  prm.bytes = bytes;
  prm.node_size = node_size;
  return prm;
}

static double model(const fs_coll_params *prm, int32_t p, double alpha, double beta) {
  fs_coll_cost cost = {alpha, beta, prm->gamma_s_per_byte};
  return fs_coll_model_time(prm, p, &cost);
}

/* Simulated run time of prm alone on t (no tracking). */
static double run_time(const fs_topo *t, const fs_coll_params *prm, const int32_t *hosts,
                       int32_t p) {
  fs_coll_group g = {p, hosts};
  fs_coll_result res;
  fs_err err = {0, ""};
  int rc = fs_coll_run(t, FS_ROUTE_SHORTEST, 1, prm, &g, &res, &err);
  if (rc) {
    test_fail(__FILE__, __LINE__, "%s %s: %s", fs_coll_algo_name(prm->algo),
              fs_coll_op_name(prm->op), err.msg);
    return NAN;
  }
  return res.time_s;
}

/* Every node size dividing p (and 0), every op, both sizes, three variants
 * (defaults; chunks 3 with 2 channels and gamma; chunks 5 with root p-1):
 * the star's simulation equals the closed form and the data checks out.
 * The generic test covers node sizes 1, 2 and 4 only. */
TEST(test_coll_hier_inc_sim_equals_closed_form_every_node_size) {
  static const int32_t ps[] = {2, 3, 4, 6, 8, 12, 16, 24, 64};
  static const fs_coll_algo algos[] = {FS_ALGO_HIER, FS_ALGO_INC};
  int checked = 0;
  for (size_t ai = 0; ai < 2; ai++)
    for (int op = 0; op < FS_COLL_N_OPS; op++) {
      if (!fs_coll_supports(algos[ai], (fs_coll_op)op)) continue;
      for (size_t pi = 0; pi < sizeof(ps) / sizeof(ps[0]); pi++) {
        int32_t p = ps[pi];
        for (int32_t q = 0; q <= p; q++) {
          if ((q > 0 && p % q) || (algos[ai] == FS_ALGO_INC && q > 0)) continue;
          if (p == 64 && q != 0 && q != 8) continue; /* keep the run short */
          for (int si = 0; si < 2; si++)
            for (int variant = 0; variant < 3; variant++) {
              fs_coll_params prm = params(algos[ai], (fs_coll_op)op, si ? 1 << 26 : 4096, q);
              if (variant == 1) {
                prm.chunks = 3;
                prm.channels = 2;
                prm.gamma_s_per_byte = 2e-11;
              } else if (variant == 2) {
                prm.chunks = 5;
                prm.root = p - 1;
              }
              coll_run r = {0};
              fs_err err = {0, ""};
              if (coll_run_star(&STAR, NULL, &prm, p, &r, &err)) {
                test_fail(__FILE__, __LINE__, "%s %s p=%d q=%d: %s", fs_coll_algo_name(prm.algo),
                          fs_coll_op_name(prm.op), p, q, err.msg);
                continue;
              }
              double want = model(&prm, p, ALPHA, BETA);
              if (!(fabs(r.time_s - want) <= 1e-9 * want))
                test_fail(__FILE__, __LINE__,
                          "%s %s p=%d q=%d bytes=%g variant %d: simulated %.17g s, closed form "
                          "%.17g s",
                          fs_coll_algo_name(prm.algo), fs_coll_op_name(prm.op), p, q, prm.bytes,
                          variant, r.time_s, want);
              if (r.verified)
                test_fail(__FILE__, __LINE__, "%s %s p=%d q=%d: data check: %s",
                          fs_coll_algo_name(prm.algo), fs_coll_op_name(prm.op), p, q, r.why);
              checked++;
            }
        }
      }
    }
  CHECK(checked > 500);
}

/* The closed forms against hand computations (docs/model-coll-hier.md). */
TEST(test_coll_hier_inc_closed_forms_by_hand) {
  const double n = 8e6, a = ALPHA, b = BETA, g = 2e-11;
  /* p = 8 in 2 nodes of 4, one chunk, one channel: a node-level ring of 3
   * steps of n/4, a rail-level ring all-reduce of 2 steps of n/8, and 3
   * node-level steps again. */
  fs_coll_params prm = params(FS_ALGO_HIER, FS_COLL_ALLREDUCE, n, 4);
  CHECK_REL(model(&prm, 8, a, b), 6 * (a + n / 4 * b) + 2 * (a + n / 8 * b), 1e-12, "s");
  prm.gamma_s_per_byte = g;
  CHECK_REL(model(&prm, 8, a, b),
            3 * (a + n / 4 * (b + g)) + (a + n / 8 * (b + g)) + (a + n / 8 * b) +
                3 * (a + n / 4 * b),
            1e-12, "s");
  prm.op = FS_COLL_REDUCESCATTER;
  CHECK_REL(model(&prm, 8, a, b), 3 * (a + n / 4 * (b + g)) + (a + n / 8 * (b + g)), 1e-12,
            "s");
  prm.op = FS_COLL_ALLGATHER;
  CHECK_REL(model(&prm, 8, a, b), (a + n / 8 * b) + 3 * (a + n / 4 * b), 1e-12, "s");
  /* Chunked: each level is its own ring pipeline (fs__pipeline_time with
   * one link): C = 4 chunks, K = 1, gamma = 0, p = 8 in 4 nodes of 2. The
   * node level has 1 step of n/2 (d1 = n/8 beta per chunk), the rail level
   * 6 steps of n/8 (d2 = n/32 beta); a step after the first costs
   * max(C d, d + alpha). */
  prm = params(FS_ALGO_HIER, FS_COLL_ALLREDUCE, n, 2);
  prm.chunks = 4;
  double d1 = n / 8 * b, d2 = n / 32 * b;
  double level1 = 4 * d1 + a, level2 = 5 * fmax(4 * d2, d2 + a) + 4 * d2 + a;
  CHECK_REL(model(&prm, 8, a, b), 2 * level1 + level2, 1e-12, "s");
  /* inc: up and down stages pipelined, alpha/2 each: (C + 1) n/C beta + alpha
   * whatever p, op and gamma. */
  static const fs_coll_op inc_ops[] = {FS_COLL_ALLREDUCE, FS_COLL_REDUCE, FS_COLL_BROADCAST};
  for (int i = 0; i < 3; i++) {
    prm = params(FS_ALGO_INC, inc_ops[i], n, 0);
    prm.chunks = 4;
    prm.gamma_s_per_byte = g;
    CHECK_REL(model(&prm, 16, a, b), 5 * n / 4 * b + a, 1e-12, "s");
    CHECK_REL(model(&prm, 3, a, b), 5 * n / 4 * b + a, 1e-12, "s");
  }
  /* Default chunks: hier one (a ring), inc 1 MiB chunks up to 64. */
  prm = params(FS_ALGO_HIER, FS_COLL_ALLREDUCE, 1 << 30, 4);
  CHECK_EQ_INT(fs_coll_default_chunks(&prm, 8), 1);
  prm = params(FS_ALGO_INC, FS_COLL_ALLREDUCE, 3.5 * (1 << 20), 0);
  CHECK_EQ_INT(fs_coll_default_chunks(&prm, 8), 4);
  prm.bytes = 1 << 30;
  CHECK_EQ_INT(fs_coll_default_chunks(&prm, 8), 64);
}

/* node_size 0 (one node), 1 (one rank per node) and p leave one level: the
 * lowering is then exactly ring.c's ring, so the times are equal. */
TEST(test_coll_hier_degenerate_node_sizes_are_the_ring) {
  static const fs_coll_op ops[] = {FS_COLL_ALLREDUCE, FS_COLL_REDUCESCATTER, FS_COLL_ALLGATHER};
  for (int i = 0; i < 3; i++)
    for (int32_t p = 2; p <= 9; p += 7)
      for (int variant = 0; variant < 2; variant++) {
        fs_coll_params ring = params(FS_ALGO_RING, ops[i], 3e6, 0);
        if (variant) {
          ring.chunks = 3;
          ring.channels = 2;
          ring.gamma_s_per_byte = 2e-11;
        }
        coll_run want = {0}, got = {0};
        fs_err err = {0, ""};
        CHECK_OK(coll_run_star(&STAR, NULL, &ring, p, &want, &err), &err);
        int32_t sizes[] = {0, 1, p};
        for (int k = 0; k < 3; k++) {
          fs_coll_params h = ring;
          h.algo = FS_ALGO_HIER;
          h.node_size = sizes[k];
          CHECK_OK(coll_run_star(&STAR, NULL, &h, p, &got, &err), &err);
          CHECK_REL(got.time_s, want.time_s, 1e-12, "s");
          CHECK_EQ_INT(got.flows, want.flows);
          CHECK_REL(model(&h, p, ALPHA, BETA), model(&ring, p, ALPHA, BETA), 1e-12, "s");
        }
      }
}

/* Each rank receives what the flat ring's rank does (the two levels move
 * the same volume: 2(q-1)/q n + 2(N-1)/N n/q = 2(p-1)/p n), and the flow
 * count is p K C times the steps, 2(q-1) + 2(N-1) for all-reduce. */
TEST(test_coll_hier_bytes_and_flows) {
  const double n = 6e6;
  for (int32_t q = 2; q <= 4; q += 2) {
    int32_t p = 8, N = p / q;
    struct {
      fs_coll_op op;
      double per_rank;
      int32_t steps;
    } cases[] = {{FS_COLL_ALLREDUCE, 2.0 * (p - 1) / p * n, 2 * (q - 1) + 2 * (N - 1)},
                 {FS_COLL_REDUCESCATTER, (double)(p - 1) / p * n, q - 1 + N - 1},
                 {FS_COLL_ALLGATHER, (double)(p - 1) / p * n, q - 1 + N - 1}};
    for (int c = 0; c < 3; c++) {
      fs_coll_params prm = params(FS_ALGO_HIER, cases[c].op, n, q);
      prm.chunks = 3;
      prm.channels = 2;
      coll_run r = {0};
      fs_err err = {0, ""};
      CHECK_OK(coll_run_star(&STAR, NULL, &prm, p, &r, &err), &err);
      CHECK_EQ_INT(r.verified, 0);
      CHECK_EQ_INT(r.flows, (int64_t)p * 2 * 3 * cases[c].steps);
      for (int32_t k = 0; k < p; k++) CHECK_REL(r.recv[k], cases[c].per_rank, 1e-12, "B");
    }
  }
  /* inc broadcast: every rank but the root gets the buffer once; all-reduce:
   * every rank but the root (which holds the switch's virtual accumulator
   * for tracking, docs/model-coll-hier.md) gets the result once. */
  fs_coll_params prm = params(FS_ALGO_INC, FS_COLL_BROADCAST, n, 0);
  prm.root = 2;
  coll_run r = {0};
  fs_err err = {0, ""};
  CHECK_OK(coll_run_star(&STAR, NULL, &prm, 5, &r, &err), &err);
  CHECK_EQ_INT(r.verified, 0);
  CHECK_EQ_INT(r.flows, 6 + 4 * 6); /* 6 MB: 6 chunks up, 4 x 6 down */
  for (int32_t k = 0; k < 5; k++) CHECK_REL(r.recv[k], k == 2 ? 0 : n, 1e-12, "B");
  prm.op = FS_COLL_ALLREDUCE;
  CHECK_OK(coll_run_star(&STAR, NULL, &prm, 5, &r, &err), &err);
  CHECK_EQ_INT(r.verified, 0);
  CHECK_EQ_INT(r.flows, 5 * 6 + 5 * 6);
  for (int32_t k = 0; k < 5; k++)
    if (k != 2) CHECK_REL(r.recv[k], n, 1e-12, "B");
}

TEST(test_coll_hier_rejects_partial_nodes) {
  fs_coll_params prm = params(FS_ALGO_HIER, FS_COLL_ALLREDUCE, 1e6, 3);
  fs_err err = {0, ""};
  CHECK_EQ_INT(fs_coll_params_check(&prm, 8, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "node size") != NULL && strstr(err.msg, "got 3") != NULL);
  prm.node_size = 16;
  CHECK_EQ_INT(fs_coll_params_check(&prm, 8, &err), FS_EINVAL);
  prm.node_size = 4;
  CHECK_EQ_INT(fs_coll_params_check(&prm, 8, &err), 0);
  prm.node_size = 0;
  CHECK_EQ_INT(fs_coll_params_check(&prm, 7, &err), 0);
}

/* 4 leaves x 4 hosts, one spine, 100 Gb/s everywhere: each leaf's uplink
 * (100 Gb/s) serves 400 Gb/s of hosts, 4:1. A 256 MiB all-reduce.
 *
 * hier with the leaves as nodes: the node level runs at the host rate
 * (6 steps of n/4, 2 links); at the rail level the 4 rails of a leaf cross
 * its uplink at once, 25 Gb/s each (6 steps of n/16, 4 links), so
 *   T_hier = 6 (n/4 / 100G + 1 us) + 6 (n/16 / 25G + 2 us)  ~ 3.0 n / 100G.
 * A flat ring over ranks placed round-robin across the leaves (rank r on
 * leaf r mod 4, as a topology-unaware launcher places them) crosses the
 * spine on every hop: 4 flows per uplink, 25 Gb/s each, 30 steps of n/16:
 *   T_ring = 30 (n/16 / 25G + 2 us)  ~ 7.5 n / 100G,
 * so hier is 2.5x faster; the latencies move the ratio by under 0.04%
 * (2 us against 5.4 ms steps), so 0.2% is a safe tolerance. Both are also
 * checked exactly. But a flat ring over leaf-ordered ranks crosses each
 * uplink with a single flow, never slowed by the 4:1: it takes
 * 30 n/16 / 100G ~ 1.875 n / 100G plus at most 30 x 2 us of latency
 * (0.15%), and hier is 3 / 1.875 = 1.6x slower than it (0.5% tolerance). */
TEST(test_coll_hier_4to1_leafspine_against_flat_rings) {
  fs_leafspine_params lp = {4, 1, 4, 100, 100, 1, LAT_NS};
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_leafspine(&lp, &t, &err), &err);
  if (!t) return;
  const double n = 256.0 * (1 << 20), us = 1e-6;
  int32_t leaf_order[16], round_robin[16];
  for (int32_t r = 0; r < 16; r++) leaf_order[r] = r, round_robin[r] = (r % 4) * 4 + r / 4;
  fs_coll_params prm = params(FS_ALGO_HIER, FS_COLL_ALLREDUCE, n, 4);
  double hier = run_time(t, &prm, leaf_order, 16);
  prm.algo = FS_ALGO_RING;
  double ring_rr = run_time(t, &prm, round_robin, 16);
  double ring_leaf = run_time(t, &prm, leaf_order, 16);
  double d_node = n / 4 * 8 / 100e9, d_rail = n / 16 * 8 / 25e9;
  CHECK_REL(hier, 6 * (d_node + us) + 6 * (d_rail + 2 * us), 1e-9, "s");
  CHECK_REL(ring_rr, 30 * (d_rail + 2 * us), 1e-9, "s");
  CHECK_REL(ring_rr / hier, 2.5, 2e-3, "x");
  CHECK_REL(hier / ring_leaf, 1.6, 5e-3, "x");
  /* The data still checks out on the leaf-spine (asymmetric latencies). */
  coll_run r = {0};
  prm.algo = FS_ALGO_HIER;
  prm.chunks = 3;
  prm.channels = 2;
  CHECK_OK(coll_run_on(t, NULL, &prm, leaf_order, 16, &r, &err), &err);
  CHECK_EQ_INT(r.verified, 0);
  fs_topo_free(t);
}

/* Where hier beats even the leaf-ordered ring: a scale-up domain faster than
 * the way out. 2 leaves x 4 hosts on 400 Gb/s links, one 100 Gb/s uplink
 * per leaf (host : uplink rate rho = 4). The leaf-ordered ring is held to
 * 100 Gb/s on its crossing hop: ~ 14 n/8 / 100G = 1.75 n / 100G. hier: the
 * node level at 400 Gb/s, 6 (n/4 / 400G) = 0.375 n / 100G, and the rail
 * level's 4 flows share the uplink, 2 (n/8 / 25G) = 1.0 n / 100G, in all
 * 1.375 n / 100G: 1.75 / 1.375 = 1.2727x faster (latencies < 0.1%). In
 * general hier wins over an aligned ring when rho > N, the number of nodes
 * (docs/model-coll-hier.md). */
TEST(test_coll_hier_fast_scaleup_beats_aligned_ring) {
  fs_leafspine_params lp = {2, 1, 4, 400, 100, 1, LAT_NS};
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_leafspine(&lp, &t, &err), &err);
  if (!t) return;
  const double n = 256.0 * (1 << 20), us = 1e-6;
  int32_t hosts[8];
  for (int32_t r = 0; r < 8; r++) hosts[r] = r;
  fs_coll_params prm = params(FS_ALGO_HIER, FS_COLL_ALLREDUCE, n, 4);
  double hier = run_time(t, &prm, hosts, 8);
  CHECK_REL(hier, 6 * (n / 4 * 8 / 400e9 + us) + 2 * (n / 8 * 8 / 25e9 + 2 * us), 1e-9, "s");
  prm.algo = FS_ALGO_RING;
  double ring = run_time(t, &prm, hosts, 8);
  CHECK_REL(ring / hier, 1.75 / 1.375, 5e-3, "x");
  fs_topo_free(t);
}

TEST(test_coll_inc_needs_capable_switch) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_star(4, GBPS, LAT_NS, &t, &err), &err);
  if (!t) return;
  int32_t hosts[4] = {0, 1, 2, 3};
  fs_coll_group g = {4, hosts};
  fs_coll_params prm = params(FS_ALGO_INC, FS_COLL_ALLREDUCE, 1e6, 0);
  fs_coll_result res;
  CHECK_EQ_INT(fs_coll_run(t, FS_ROUTE_SHORTEST, 1, &prm, &g, &res, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "inc") != NULL && strstr(err.msg, "aggregate") != NULL);
  /* Marked: it runs. */
  fs_topo_mark_inc(t, "top");
  CHECK_OK(fs_coll_run(t, FS_ROUTE_SHORTEST, 1, &prm, &g, &res, &err), &err);
  fs_topo_free(t);
}

/* The aggregation switch is the capable one nearest the group in the worst
 * case. Leaf-spine 2 x 4 hosts, 2 spines, fat 400 Gb/s fabric links, every
 * switch capable. Ranks inside leaf 1: its leaf switch, one link away, so
 * the star's closed form holds (alpha = 2 x 500 ns). Ranks on both leaves:
 * a leaf is 3 links from the far hosts, a spine 2, so spine 0: alpha doubles
 * (2 links up, 2 down), and no link is shared beyond its capacity (two
 * 100 Gb/s flows per 400 Gb/s cable). */
TEST(test_coll_inc_picks_nearest_switch) {
  fs_leafspine_params lp = {2, 2, 4, 100, 400, 1, LAT_NS};
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_leafspine(&lp, &t, &err), &err);
  if (!t) return;
  fs_topo_mark_inc(t, "all");
  int32_t in_leaf[4] = {4, 5, 6, 7}, across[4] = {0, 1, 4, 5};
  static const fs_coll_op ops[] = {FS_COLL_ALLREDUCE, FS_COLL_REDUCE, FS_COLL_BROADCAST};
  for (int i = 0; i < 3; i++) {
    fs_coll_params prm = params(FS_ALGO_INC, ops[i], 5e6, 0);
    prm.root = 3;
    coll_run r = {0};
    CHECK_OK(coll_run_on(t, NULL, &prm, in_leaf, 4, &r, &err), &err);
    CHECK_EQ_INT(r.verified, 0);
    CHECK_REL(r.time_s, model(&prm, 4, ALPHA, BETA), 1e-9, "s");
    CHECK_OK(coll_run_on(t, NULL, &prm, across, 4, &r, &err), &err);
    CHECK_EQ_INT(r.verified, 0);
    CHECK_REL(r.time_s, model(&prm, 4, 2 * ALPHA, BETA), 1e-9, "s");
  }
  fs_topo_free(t);
}

/* inc at the spine of the 4:1 leaf-spine (4 leaves x 4 hosts, one spine,
 * 100 Gb/s): all 16 buffers go up, 4 per leaf uplink at 25 Gb/s, and the
 * results come down 4 per downlink, so beta is 4x the host's and
 * T = (C + 1) n/C / 25G + 2 us exactly (C = 64 chunks for 256 MiB): about
 * 4.06 n / 100G, slower than hier's 3.0 n / 100G there: aggregating above
 * an oversubscribed tier moves the whole buffer through it. */
TEST(test_coll_inc_oversubscribed_spine) {
  fs_leafspine_params lp = {4, 1, 4, 100, 100, 1, LAT_NS};
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_leafspine(&lp, &t, &err), &err);
  if (!t) return;
  fs_topo_mark_inc(t, "top");
  int32_t hosts[16];
  for (int32_t r = 0; r < 16; r++) hosts[r] = r;
  const double n = 256.0 * (1 << 20);
  fs_coll_params prm = params(FS_ALGO_INC, FS_COLL_ALLREDUCE, n, 0);
  double inc = run_time(t, &prm, hosts, 16);
  CHECK_REL(inc, 65 * (n / 64) * 8 / 25e9 + 2e-6, 1e-9, "s");
  CHECK_REL(inc, model(&prm, 16, 2 * ALPHA, 8 / 25e9), 1e-9, "s");
  prm.algo = FS_ALGO_HIER;
  prm.node_size = 4;
  double hier = run_time(t, &prm, hosts, 16);
  CHECK_REL(inc / hier, 65.0 / 64 * 4 / 3, 1e-3, "x");
  fs_topo_free(t);
}
