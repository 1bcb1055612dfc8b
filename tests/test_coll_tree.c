/* Tests of the tree algorithms (tree: double binary tree all-reduce, single
 * pipelined tree broadcast and reduce; binomial: broadcast, reduce,
 * all-reduce): the two trees' shapes for every p up to 130; simulated time
 * equals closed form on a star over p, chunks, channels, gamma and root;
 * the closed forms against hand computations for p = 4 and 5; the bytes
 * each rank receives; flow counts, the edges used and the step structure. */
#include <stdlib.h>
#include <string.h>

#include "../src/coll/internal.h"
#include "coll_harness.h"
#include "fabricsim/coll.h"
#include "test.h"

#define LAT_NS 500
#define GBPS 100.0
#define ALPHA (2 * LAT_NS * 1e-9) /* host -> switch -> host */
#define BETA (8 / (GBPS * 1e9))
#define MAXP 130

static const coll_star STAR = {LAT_NS, GBPS, COLL_SWITCH_PLAIN};

static fs_coll_params params(fs_coll_algo algo, fs_coll_op op, double bytes, int32_t chunks,
                             int32_t channels, double gamma, int32_t root) {
  fs_coll_params prm;
  fs_coll_params_init(&prm);
  prm.algo = algo;
  prm.op = op;
  prm.bytes = bytes;
  prm.chunks = chunks;
  prm.channels = channels;
  prm.gamma_s_per_byte = gamma;
  prm.root = root;
  return prm;
}

static double model(const fs_coll_params *prm, int32_t p) {
  fs_coll_cost cost = {ALPHA, BETA, prm->gamma_s_per_byte};
  return fs_coll_model_time(prm, p, &cost);
}

static int32_t expected_height(int32_t p) {
  int32_t leaves = (p + 1) / 2, h = 0;
  while ((1 << h) < leaves) h++;
  return h + (p % 2 == 0);
}

/* Depth of r by walking up; -1 if the walk does not reach a root in p
 * steps (a cycle) or leaves the range. */
static int32_t depth_of(const int32_t *parent, int32_t p, int32_t r) {
  int32_t d = 0;
  while (parent[r] >= 0) {
    if (parent[r] >= p || ++d > p) return -1;
    r = parent[r];
  }
  return d;
}

TEST(test_coll_tree_double_tree_shapes) {
  int32_t pa[MAXP], pb[MAXP], kids[2][MAXP];
  for (int32_t p = 2; p <= MAXP; p++) {
    int32_t h = -1;
    CHECK_EQ_INT(fs__coll_double_tree(p, pa, pb, &h), 0);
    CHECK_EQ_INT(h, expected_height(p));
    const int32_t *par[2] = {pa, pb};
    for (int t = 0; t < 2; t++) {
      int32_t roots = 0, maxd = 0;
      memset(kids[t], 0, sizeof(kids[t]));
      for (int32_t r = 0; r < p; r++) {
        if (par[t][r] < 0) {
          roots++;
          continue;
        }
        CHECK(par[t][r] != r);
        kids[t][par[t][r]]++;
        int32_t d = depth_of(par[t], p, r);
        CHECK(d >= 1); /* every rank reaches the root: it is in the tree once */
        if (d > maxd) maxd = d;
      }
      CHECK_EQ_INT(roots, 1);
      CHECK_EQ_INT(maxd, h);
      for (int32_t r = 0; r < p; r++) CHECK(kids[t][r] <= 2);
    }
    /* interior in at most one tree; odd p: rank 0 is the one leaf of both */
    int32_t neither = 0;
    for (int32_t r = 0; r < p; r++) {
      if (kids[0][r] > 0 && kids[1][r] > 0)
        test_fail(__FILE__, __LINE__, "p=%d: rank %d is interior in both trees", p, r);
      if (kids[0][r] == 0 && kids[1][r] == 0) {
        neither++;
        CHECK_EQ_INT(r, 0);
      }
    }
    CHECK_EQ_INT(neither, p % 2);
    /* only the extra roots of even p have one child: otherwise full trees */
    int32_t one_child = 0;
    for (int t = 0; t < 2; t++)
      for (int32_t r = 0; r < p; r++) one_child += kids[t][r] == 1;
    CHECK_EQ_INT(one_child, p % 2 == 0 ? 2 : 0);
  }
}

/* Every op of both algorithms, on a star, over p, chunks, channels, gamma
 * and root: simulation equals the closed form to 1e-9 and the tracker
 * accepts the data movement. */
TEST(test_coll_tree_sim_equals_closed_form_sweep) {
  static const int32_t ps[] = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                               21, 31, 32, 33, 47, 63, 64, 65, 100};
  static const fs_coll_op ops[] = {FS_COLL_ALLREDUCE, FS_COLL_BROADCAST, FS_COLL_REDUCE};
  static const int32_t cs[] = {1, 2, 5};
  int checked = 0;
  for (int a = 0; a < 2; a++)
    for (size_t pi = 0; pi < sizeof(ps) / sizeof(ps[0]); pi++)
      for (int o = 0; o < 3; o++)
        for (int ci = 0; ci < 3; ci++)
          for (int v = 0; v < 2; v++) {
            int32_t p = ps[pi];
            if (a == 1 && ci > 0) continue; /* binomial ignores chunks */
            if (p > 33 && (ci == 1 || v == 1)) continue; /* keep it quick */
            fs_coll_params prm =
                params(a ? FS_ALGO_BINOMIAL : FS_ALGO_TREE, ops[o], v ? 3e6 : 1e5, cs[ci],
                       v ? 3 : 1, v ? 3e-11 : 0, (int32_t)((pi * 7 + 3) % p));
            coll_run run = {0};
            fs_err err = {0, ""};
            if (coll_run_star(&STAR, NULL, &prm, p, &run, &err)) {
              test_fail(__FILE__, __LINE__, "%s %s p=%d: %s", fs_coll_algo_name(prm.algo),
                        fs_coll_op_name(prm.op), p, err.msg);
              continue;
            }
            double want = model(&prm, p);
            if (!(fabs(run.time_s - want) <= 1e-9 * want))
              test_fail(__FILE__, __LINE__,
                        "%s %s p=%d C=%d K=%d root=%d: simulated %.17g s, closed form %.17g s",
                        fs_coll_algo_name(prm.algo), fs_coll_op_name(prm.op), p, prm.chunks,
                        prm.channels, prm.root, run.time_s, want);
            if (run.verified)
              test_fail(__FILE__, __LINE__, "%s %s p=%d: data check: %s",
                        fs_coll_algo_name(prm.algo), fs_coll_op_name(prm.op), p, run.why);
            checked++;
          }
  CHECK(checked > 300);
}

/* The closed forms written out by hand for p = 4 and p = 5, n = 8 MiB,
 * C = 2, K = 1, gamma = 2e-11 s/B, alpha = 1 us, beta = 8e-11 s/B; the
 * simulation agrees too. */
TEST(test_coll_tree_closed_forms_by_hand) {
  const double n = 8 << 20, a = 1e-6, b = 8e-11, gm = 2e-11;
  /* tree all-reduce: each tree carries n/2 in 2 chunks of 2 MiB */
  const double d2 = 2097152 * b, g2 = 2097152 * gm; /* 1.6777216e-4 s, 4.194304e-5 s */
  /* single tree: 2 chunks of 4 MiB */
  const double d1 = 4194304 * b, g1 = 4194304 * gm;
  const double nb = n * b, ng = n * gm;
  struct {
    fs_coll_algo algo;
    fs_coll_op op;
    int32_t p;
    double want;
  } cases[] = {
      /* p = 5: tree A 3 -> {1, 4}, 1 -> {0, 2}; tree B 4 -> {2, 0}, 2 -> {1, 3}; H = 2.
       * Reduce: steps 0..2 (C + H - 1), in each some rank's downlink carries
       * two children's flows: 2 d + alpha + g. Broadcast: steps 0..2, in each
       * some rank sends to two children: 2 d + alpha. */
      {FS_ALGO_TREE, FS_COLL_ALLREDUCE, 5,
       (2 * d2 + a + g2) + (2 * d2 + a + g2) + (2 * d2 + a + g2) + (2 * d2 + a) + (2 * d2 + a) +
           (2 * d2 + a)},
      /* p = 4: tree A 3 -> 1 -> {0, 2}; tree B 0 -> 2 -> {3, 1}; H = 2.
       * Reduce steps 0, 1: two children into 1 and into 2; step 2: only
       * 1 -> 3 and 2 -> 0, one flow per link: d + alpha + g. Broadcast
       * step 0: only 3 -> 1 and 0 -> 2: d + alpha; steps 1, 2: 2 d + alpha. */
      {FS_ALGO_TREE, FS_COLL_ALLREDUCE, 4,
       (2 * d2 + a + g2) + (2 * d2 + a + g2) + (d2 + a + g2) + (d2 + a) + (2 * d2 + a) +
           (2 * d2 + a)},
      /* Broadcast, dataflow: hops at 2 d + alpha (two children each), then
       * the second chunk one slowest hop later. */
      {FS_ALGO_TREE, FS_COLL_BROADCAST, 5, (2 * d1 + a) + (2 * d1 + a) + 2 * d1},
      /* p = 4: the root has one child (d + alpha), then 2 d + alpha. */
      {FS_ALGO_TREE, FS_COLL_BROADCAST, 4, (d1 + a) + (2 * d1 + a) + 2 * d1},
      /* Reduce over tree A: three steps of two flows into one downlink. */
      {FS_ALGO_TREE, FS_COLL_REDUCE, 5, 3 * (2 * d1 + a + g1)},
      /* p = 4: the last step is the one child of the root alone. */
      {FS_ALGO_TREE, FS_COLL_REDUCE, 4, 2 * (2 * d1 + a + g1) + (d1 + a + g1)},
      /* binomial: ceil(log2 p) rounds of one whole-buffer message */
      {FS_ALGO_BINOMIAL, FS_COLL_BROADCAST, 5, 3 * (nb + a)},
      {FS_ALGO_BINOMIAL, FS_COLL_BROADCAST, 4, 2 * (nb + a)},
      {FS_ALGO_BINOMIAL, FS_COLL_REDUCE, 5, 3 * (nb + a + ng)},
      {FS_ALGO_BINOMIAL, FS_COLL_REDUCE, 4, 2 * (nb + a + ng)},
      {FS_ALGO_BINOMIAL, FS_COLL_ALLREDUCE, 5, 3 * (nb + a + ng) + 3 * (nb + a)},
      {FS_ALGO_BINOMIAL, FS_COLL_ALLREDUCE, 4, 2 * (nb + a + ng) + 2 * (nb + a)},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    fs_coll_params prm = params(cases[i].algo, cases[i].op, n, 2, 1, gm, 1);
    fs_coll_cost cost = {a, b, gm};
    CHECK_REL(fs_coll_model_time(&prm, cases[i].p, &cost), cases[i].want, 1e-12, "s");
    coll_run run = {0};
    fs_err err = {0, ""};
    CHECK_OK(coll_run_star(&STAR, NULL, &prm, cases[i].p, &run, &err), &err);
    CHECK_REL(run.time_s, cases[i].want, 1e-9, "s");
    CHECK_EQ_INT(run.verified, 0);
  }
  /* the trees of the comments above */
  int32_t pa[5], pb[5], h;
  CHECK_EQ_INT(fs__coll_double_tree(5, pa, pb, &h), 0);
  const int32_t wa5[] = {1, 3, 1, -1, 3}, wb5[] = {4, 2, 4, 2, -1};
  for (int r = 0; r < 5; r++) {
    CHECK_EQ_INT(pa[r], wa5[r]);
    CHECK_EQ_INT(pb[r], wb5[r]);
  }
  CHECK_EQ_INT(fs__coll_double_tree(4, pa, pb, &h), 0);
  const int32_t wa4[] = {1, 3, 1, -1}, wb4[] = {-1, 2, 0, 2};
  for (int r = 0; r < 4; r++) {
    CHECK_EQ_INT(pa[r], wa4[r]);
    CHECK_EQ_INT(pb[r], wb4[r]);
  }
}

/* Bytes received per rank, from the trees: in the double tree a rank gets
 * n/2 from each child in its interior tree and n/2 from each parent; a
 * single tree's broadcast gives n to every non-root, its reduce n per
 * child; binomial x gets n per child (reduce) and n from its parent. */
TEST(test_coll_tree_bytes_received) {
  const double n = 6e6;
  int32_t pa[64], pb[64], h;
  for (int32_t p = 2; p <= 40; p++) {
    CHECK_EQ_INT(fs__coll_double_tree(p, pa, pb, &h), 0);
    int32_t kids_a[64] = {0}, kids_b[64] = {0};
    int32_t root_a = -1;
    for (int32_t r = 0; r < p; r++) {
      if (pa[r] >= 0) kids_a[pa[r]]++;
      else root_a = r;
      if (pb[r] >= 0) kids_b[pb[r]]++;
    }
    coll_run run = {0};
    fs_err err = {0, ""};
    fs_coll_params prm = params(FS_ALGO_TREE, FS_COLL_ALLREDUCE, n, 3, 2, 0, 0);
    CHECK_OK(coll_run_star(&STAR, NULL, &prm, p, &run, &err), &err);
    for (int32_t r = 0; r < p; r++)
      CHECK_REL(run.recv[r], n / 2 * (kids_a[r] + kids_b[r] + (pa[r] >= 0) + (pb[r] >= 0)),
                1e-12, "B");
    /* single trees: tree A rotated so that its root is `root` */
    int32_t root = p / 3, shift = ((root - root_a) % p + p) % p;
    prm = params(FS_ALGO_TREE, FS_COLL_BROADCAST, n, 2, 1, 0, root);
    CHECK_OK(coll_run_star(&STAR, NULL, &prm, p, &run, &err), &err);
    for (int32_t r = 0; r < p; r++) CHECK_REL(run.recv[r], r == root ? 0 : n, 1e-12, "B");
    prm.op = FS_COLL_REDUCE;
    CHECK_OK(coll_run_star(&STAR, NULL, &prm, p, &run, &err), &err);
    for (int32_t r = 0; r < p; r++)
      CHECK_REL(run.recv[r], n * kids_a[((r - shift) % p + p) % p], 1e-12, "B");
    /* binomial, relative rank x = r - root */
    for (int o = 0; o < 3; o++) {
      fs_coll_op op = o == 0 ? FS_COLL_BROADCAST : o == 1 ? FS_COLL_REDUCE : FS_COLL_ALLREDUCE;
      int32_t broot = op == FS_COLL_ALLREDUCE ? 0 : root;
      prm = params(FS_ALGO_BINOMIAL, op, n, 0, 0, 0, broot);
      CHECK_OK(coll_run_star(&STAR, NULL, &prm, p, &run, &err), &err);
      CHECK_EQ_INT(run.verified, 0);
      for (int32_t r = 0; r < p; r++) {
        int32_t x = ((r - broot) % p + p) % p, kids = 0;
        for (int32_t m = 1; m < p && !(x & m); m <<= 1) kids += x + m < p;
        double want = (op != FS_COLL_BROADCAST ? kids : 0) + (op != FS_COLL_REDUCE && x != 0);
        CHECK_REL(run.recv[r], n * want, 1e-12, "B");
      }
    }
  }
}

/* Flow counts, the edges the double tree uses (both trees, both ways), and
 * its steps: all flows of a step start at the same instant, so an
 * all-reduce has exactly 2 (C + H - 1) distinct start times. */
TEST(test_coll_tree_edges_and_steps) {
  coll_flow log[4 * 40 * 3 * 2];
  int32_t pa[40], pb[40], h;
  for (int32_t p = 2; p <= 40; p++) {
    const int32_t C = 3, K = 2;
    CHECK_EQ_INT(fs__coll_double_tree(p, pa, pb, &h), 0);
    coll_run run = {0};
    run.log = log;
    run.log_cap = (int32_t)(sizeof(log) / sizeof(log[0]));
    fs_err err = {0, ""};
    fs_coll_params prm = params(FS_ALGO_TREE, FS_COLL_ALLREDUCE, 1e6, C, K, 1e-11, 0);
    CHECK_OK(coll_run_star(&STAR, NULL, &prm, p, &run, &err), &err);
    CHECK_EQ_INT(run.flows, 4LL * (p - 1) * C * K);
    CHECK_EQ_INT(run.log_n, run.flows);
    int32_t use[40][40];
    memset(use, 0, sizeof(use));
    double starts[4 * 40 * 3 * 2];
    int32_t ns = 0;
    for (int32_t i = 0; i < run.log_n && i < run.log_cap; i++) {
      int32_t s = log[i].src, d = log[i].dst;
      int edge = pa[s] == d || pa[d] == s || pb[s] == d || pb[d] == s;
      if (!edge) test_fail(__FILE__, __LINE__, "p=%d: flow %d -> %d is no tree edge", p, s, d);
      use[s][d]++;
      int seen = 0;
      for (int32_t j = 0; j < ns && !seen; j++) seen = fabs(starts[j] - log[i].start_s) < 1e-15;
      if (!seen) starts[ns++] = log[i].start_s;
    }
    /* each tree edge carries C K flows up and C K down (p = 2: one pair is
     * an edge of both trees) */
    for (int32_t r = 0; r < p; r++)
      for (int32_t s = r + 1; s < p; s++) {
        int edges = (pa[r] == s) + (pa[s] == r) + (pb[r] == s) + (pb[s] == r);
        CHECK_EQ_INT(use[r][s] + use[s][r], 2 * C * K * edges);
      }
    CHECK_EQ_INT(ns, 2 * (C + h - 1));
    /* single trees and binomial */
    prm.op = FS_COLL_BROADCAST;
    CHECK_OK(coll_run_star(&STAR, NULL, &prm, p, &run, &err), &err);
    CHECK_EQ_INT(run.flows, (int64_t)(p - 1) * C * K);
    prm.op = FS_COLL_REDUCE;
    CHECK_OK(coll_run_star(&STAR, NULL, &prm, p, &run, &err), &err);
    CHECK_EQ_INT(run.flows, (int64_t)(p - 1) * C * K);
    prm.algo = FS_ALGO_BINOMIAL;
    CHECK_OK(coll_run_star(&STAR, NULL, &prm, p, &run, &err), &err);
    CHECK_EQ_INT(run.flows, p - 1);
    prm.op = FS_COLL_ALLREDUCE;
    CHECK_OK(coll_run_star(&STAR, NULL, &prm, p, &run, &err), &err);
    CHECK_EQ_INT(run.flows, 2 * (p - 1));
  }
}

/* Chunk defaults: at most 1 MiB per chunk per tree, and up to 4 (H - 1)
 * chunks of at least 64 KiB for deep trees, 1 to 64; binomial 1.
 * With many chunks the double tree approaches its bandwidth term 2 n beta
 * (every rank sends and receives 2n), and binomial is Thakur's
 * ceil(log2 p) (alpha + n beta) for broadcast. */
TEST(test_coll_tree_defaults_and_limits) {
  fs_coll_params prm = params(FS_ALGO_TREE, FS_COLL_ALLREDUCE, 64 << 20, 0, 0, 0, 0);
  CHECK_EQ_INT(fs_coll_default_chunks(&prm, 8), 32);
  prm.op = FS_COLL_BROADCAST;
  CHECK_EQ_INT(fs_coll_default_chunks(&prm, 8), 64);
  prm.bytes = 4096;
  CHECK_EQ_INT(fs_coll_default_chunks(&prm, 8), 1);
  prm.bytes = 1e12;
  CHECK_EQ_INT(fs_coll_default_chunks(&prm, 8), 64);
  /* 1 MiB all-reduce: 512 KiB per tree is one 1 MiB chunk, but H = 6
   * (p = 64) or 10 (p = 1024) asks for 20 or 36 chunks, and 64 KiB chunks
   * allow 8; p = 2 has nothing to fill */
  prm.op = FS_COLL_ALLREDUCE;
  prm.bytes = 1 << 20;
  CHECK_EQ_INT(fs_coll_default_chunks(&prm, 64), 8);
  CHECK_EQ_INT(fs_coll_default_chunks(&prm, 1024), 8);
  CHECK_EQ_INT(fs_coll_default_chunks(&prm, 2), 1);
  prm.bytes = 4 << 20; /* 2 MiB per tree: 32 chunks of 64 KiB allowed */
  CHECK_EQ_INT(fs_coll_default_chunks(&prm, 8), 8);   /* H = 3: 4 (H - 1) */
  CHECK_EQ_INT(fs_coll_default_chunks(&prm, 64), 20); /* H = 6 */
  prm.algo = FS_ALGO_BINOMIAL;
  CHECK_EQ_INT(fs_coll_default_chunks(&prm, 8), 1);
  fs_coll_cost nolat = {0, BETA, 0};
  prm = params(FS_ALGO_TREE, FS_COLL_ALLREDUCE, 1e9, 4096, 1, 0, 0);
  for (int32_t p = 3; p <= 65; p += 31) {
    double t = fs_coll_model_time(&prm, p, &nolat), bw = 2 * 1e9 * BETA;
    CHECK(t >= bw && t <= bw * (1 + 8.0 / 4096));
  }
  fs_coll_cost cost = {ALPHA, BETA, 0};
  prm = params(FS_ALGO_BINOMIAL, FS_COLL_BROADCAST, 1e6, 0, 0, 0, 0);
  for (int32_t p = 2; p <= 1000; p += 37)
    CHECK_REL(fs_coll_model_time(&prm, p, &cost), ceil(log2(p)) * (ALPHA + 1e6 * BETA), 1e-12,
              "s");
  /* p = 1: nothing to do */
  CHECK_EQ_INT(fs_coll_model_time(&prm, 1, &cost) == 0, 1);
}
