/* Tests of the all-to-all family (Bruck, pairwise, direct): simulated time
 * on a star equals the closed form for every p up to 20 and a few larger,
 * the closed forms equal hand computations, each rank receives the bytes
 * the algorithm moves, and the tracker catches a misdelivered all-to-all. */
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

static const coll_star STAR = {LAT_NS, GBPS, COLL_SWITCH_PLAIN};

static fs_coll_params params(fs_coll_algo a, fs_coll_op op, double bytes) {
  fs_coll_params prm;
  fs_coll_params_init(&prm);
  prm.algo = a;
  prm.op = op;
  prm.bytes = bytes;
  return prm;
}

static double model(const fs_coll_params *prm, int32_t p) {
  fs_coll_cost cost = {ALPHA, BETA, prm->gamma_s_per_byte};
  return fs_coll_model_time(prm, p, &cost);
}

static const struct {
  fs_coll_algo algo;
  fs_coll_op op;
} cases[] = {
    {FS_ALGO_BRUCK, FS_COLL_ALLGATHER},  {FS_ALGO_BRUCK, FS_COLL_ALLTOALL},
    {FS_ALGO_PAIRWISE, FS_COLL_ALLTOALL}, {FS_ALGO_DIRECT, FS_COLL_ALLTOALL},
    {FS_ALGO_DIRECT, FS_COLL_ALLGATHER}, {FS_ALGO_DIRECT, FS_COLL_SENDRECV},
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

TEST(test_coll_a2a_sim_equals_closed_form_every_p) {
  /* Every p from 2 to 20 (all the non-powers of two Bruck's partial last
   * round and bit counts depend on) and a few larger, with chunks and
   * channels that only send/recv honours. */
  static const int32_t ps[] = {2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                               14, 15, 16, 17, 18, 19, 20, 31, 33, 48, 64, 100};
  for (size_t c = 0; c < N_CASES; c++)
    for (size_t pi = 0; pi < sizeof(ps) / sizeof(ps[0]); pi++)
      for (int v = 0; v < 3; v++) {
        int32_t p = ps[pi];
        fs_coll_params prm = params(cases[c].algo, cases[c].op, v == 2 ? 3e7 + 1 : 1e6);
        prm.chunks = v == 0 ? 0 : v == 1 ? 5 : 2;
        prm.channels = v == 0 ? 0 : v == 1 ? 3 : 1;
        prm.root = p > 3 ? p - 1 : 0; /* send/recv wraps to rank 0 */
        if (cases[c].op == FS_COLL_ALLTOALL && p > 64 && v) continue; /* keep it quick */
        coll_run run = {0};
        fs_err err = {0, ""};
        int rc = coll_run_star(&STAR, NULL, &prm, p, &run, &err);
        if (rc) {
          test_fail(__FILE__, __LINE__, "%s %s p=%d: %s", fs_coll_algo_name(prm.algo),
                    fs_coll_op_name(prm.op), p, err.msg);
          continue;
        }
        double want = model(&prm, p);
        if (!(fabs(run.time_s - want) <= 1e-9 * want))
          test_fail(__FILE__, __LINE__,
                    "%s %s p=%d chunks=%d channels=%d: simulated %.17g s, closed form %.17g s",
                    fs_coll_algo_name(prm.algo), fs_coll_op_name(prm.op), p, prm.chunks,
                    prm.channels, run.time_s, want);
        if (run.verified)
          test_fail(__FILE__, __LINE__, "%s %s p=%d: data check: %s",
                    fs_coll_algo_name(prm.algo), fs_coll_op_name(prm.op), p, run.why);
      }
}

TEST(test_coll_a2a_closed_forms_by_hand) {
  const double n = 6e6, a = ALPHA, b = BETA;
  fs_coll_params prm;
  /* Bruck all-to-all, p = 5: indexes 1..4 = 001 010 011 100; round 0
   * moves {1,3}, round 1 {2,3}, round 2 {4}: 2 + 2 + 1 blocks of n/5. */
  prm = params(FS_ALGO_BRUCK, FS_COLL_ALLTOALL, n);
  CHECK_REL(model(&prm, 5), 3 * a + 5 * (n / 5) * b, 1e-15, "s");
  /* p = 6: {1,3,5}, {2,3}, {4,5}: 7 blocks. p = 7: {1,3,5}, {2,3,6}, {4,5,6}: 9. */
  CHECK_REL(model(&prm, 6), 3 * a + 7 * (n / 6) * b, 1e-15, "s");
  CHECK_REL(model(&prm, 7), 3 * a + 9 * (n / 7) * b, 1e-15, "s");
  /* p = 3: {1}, {2}: 2 blocks in 2 rounds. */
  CHECK_REL(model(&prm, 3), 2 * a + 2 * (n / 3) * b, 1e-15, "s");
  /* Powers of two: Thakur et al.'s lg p alpha + (n/2) lg p beta. */
  for (int32_t lg = 1; lg <= 10; lg++)
    CHECK_REL(model(&prm, 1 << lg), lg * a + n / 2 * lg * b, 1e-14, "s");
  /* Bruck all-gather: ceil(lg p) alpha + (p-1)/p n beta for every p; p = 5
   * by hand: rounds of 1, 2, 1 blocks of n/5 (the last one partial). */
  prm = params(FS_ALGO_BRUCK, FS_COLL_ALLGATHER, n);
  CHECK_REL(model(&prm, 5), 3 * a + 4 * (n / 5) * b, 1e-15, "s");
  for (int32_t p = 2; p <= 70; p++) {
    int32_t lg = 0;
    while ((1 << lg) < p) lg++;
    CHECK_REL(model(&prm, p), lg * a + (double)(p - 1) / p * n * b, 1e-14, "s");
  }
  /* Pairwise and direct: Thakur's (p-1) alpha + (p-1)/p n beta, and the
   * shared-link alpha + (p-1)/p n beta. */
  for (int32_t p = 2; p <= 70; p++) {
    prm = params(FS_ALGO_PAIRWISE, FS_COLL_ALLTOALL, n);
    CHECK_REL(model(&prm, p), (p - 1) * a + (double)(p - 1) / p * n * b, 1e-14, "s");
    prm = params(FS_ALGO_DIRECT, FS_COLL_ALLTOALL, n);
    CHECK_REL(model(&prm, p), a + (double)(p - 1) / p * n * b, 1e-14, "s");
    prm.op = FS_COLL_ALLGATHER;
    CHECK_REL(model(&prm, p), a + (double)(p - 1) / p * n * b, 1e-14, "s");
  }
  /* Send/recv: alpha + n beta whatever the chunks and channels. */
  prm = params(FS_ALGO_DIRECT, FS_COLL_SENDRECV, n);
  for (int32_t c = 0; c <= 9; c++) {
    prm.chunks = c;
    prm.channels = c % 4;
    CHECK_REL(model(&prm, 4), a + n * b, 1e-15, "s");
  }
  /* One rank: nothing to do. */
  prm = params(FS_ALGO_BRUCK, FS_COLL_ALLTOALL, n);
  CHECK_REL(model(&prm, 1) + 1, 1, 0, "s");
}

TEST(test_coll_a2a_simulated_by_hand) {
  /* The engine, not just the closed form, against hand arithmetic: Bruck
   * all-to-all, p = 5, n = 5 MB: 3 rounds of 1 us latency, 2 + 2 + 1 MB at
   * 12.5 GB/s = 400 us. Pairwise p = 5: 4 rounds of 1 MB: 4 us + 320 us.
   * Direct: 4 messages of 1 MB share the link: 1 us + 320 us. */
  struct { fs_coll_algo algo; double want_s; } c[] = {
      {FS_ALGO_BRUCK, 3e-6 + 400e-6}, {FS_ALGO_PAIRWISE, 4e-6 + 320e-6},
      {FS_ALGO_DIRECT, 1e-6 + 320e-6}};
  for (int i = 0; i < 3; i++) {
    fs_coll_params prm = params(c[i].algo, FS_COLL_ALLTOALL, 5e6);
    coll_run run = {0};
    fs_err err = {0, ""};
    CHECK_OK(coll_run_star(&STAR, NULL, &prm, 5, &run, &err), &err);
    CHECK_REL(run.time_s, c[i].want_s, 1e-9, "s");
  }
}

TEST(test_coll_a2a_bytes_received) {
  const double n = 6e6;
  for (int32_t p = 2; p <= 17; p++) {
    /* Pairwise and direct all-to-all, direct and Bruck all-gather: every
     * rank receives exactly (p-1)/p n, the minimum. */
    static const fs_coll_algo a2a[] = {FS_ALGO_PAIRWISE, FS_ALGO_DIRECT};
    for (int i = 0; i < 4; i++) {
      fs_coll_params prm = i < 2 ? params(a2a[i], FS_COLL_ALLTOALL, n)
                                 : params(i == 2 ? FS_ALGO_DIRECT : FS_ALGO_BRUCK,
                                          FS_COLL_ALLGATHER, n);
      coll_run run = {0};
      fs_err err = {0, ""};
      CHECK_OK(coll_run_star(&STAR, NULL, &prm, p, &run, &err), &err);
      CHECK_EQ_INT(run.verified, 0);
      for (int32_t r = 0; r < p; r++)
        CHECK_REL(run.recv[r], (double)(p - 1) / p * n, 1e-12, "B");
    }
  }
  /* Bruck all-to-all trades bandwidth for rounds: by hand, p = 5 moves
   * 2 + 2 + 1 blocks of n/5 into each rank (n in all, vs 4/5 n), p = 6
   * 3 + 2 + 2 blocks of n/6, p = 8 three rounds of 4 blocks of n/8. */
  struct { int32_t p; double per_rank; } bruck[] = {
      {5, n}, {6, 7 * n / 6}, {8, 12 * n / 8}, {2, n / 2}, {3, 2 * n / 3}};
  for (int i = 0; i < 5; i++) {
    fs_coll_params prm = params(FS_ALGO_BRUCK, FS_COLL_ALLTOALL, n);
    coll_run run = {0};
    fs_err err = {0, ""};
    CHECK_OK(coll_run_star(&STAR, NULL, &prm, bruck[i].p, &run, &err), &err);
    CHECK_EQ_INT(run.verified, 0);
    for (int32_t r = 0; r < bruck[i].p; r++) CHECK_REL(run.recv[r], bruck[i].per_rank, 1e-12, "B");
  }
  /* Send/recv: only root + 1 receives, the whole buffer. */
  fs_coll_params prm = params(FS_ALGO_DIRECT, FS_COLL_SENDRECV, n);
  prm.root = 4;
  prm.chunks = 4;
  prm.channels = 2;
  coll_run run = {0};
  fs_err err = {0, ""};
  CHECK_OK(coll_run_star(&STAR, NULL, &prm, 5, &run, &err), &err);
  CHECK_EQ_INT(run.verified, 0);
  for (int32_t r = 0; r < 5; r++) CHECK_REL(run.recv[r], r == 0 ? n : 0, 1e-12, "B");
}

TEST(test_coll_a2a_flow_counts) {
  /* Bruck: one message per rank per round; pairwise and direct p (p-1);
   * send/recv one flow per chunk per channel. */
  for (int32_t p = 2; p <= 9; p++) {
    int32_t lg = 0;
    while ((1 << lg) < p) lg++;
    struct { fs_coll_algo algo; fs_coll_op op; int64_t flows; } c[] = {
        {FS_ALGO_BRUCK, FS_COLL_ALLTOALL, (int64_t)p * lg},
        {FS_ALGO_BRUCK, FS_COLL_ALLGATHER, (int64_t)p * lg},
        {FS_ALGO_PAIRWISE, FS_COLL_ALLTOALL, (int64_t)p * (p - 1)},
        {FS_ALGO_DIRECT, FS_COLL_ALLTOALL, (int64_t)p * (p - 1)},
        {FS_ALGO_DIRECT, FS_COLL_SENDRECV, 6}};
    for (int i = 0; i < 5; i++) {
      fs_coll_params prm = params(c[i].algo, c[i].op, 1e5);
      prm.chunks = 3; /* ignored but by send/recv */
      prm.channels = 2;
      coll_run run = {0};
      fs_err err = {0, ""};
      CHECK_OK(coll_run_star(&STAR, NULL, &prm, p, &run, &err), &err);
      CHECK_EQ_INT(run.flows, c[i].flows);
    }
  }
}

/* A direct all-to-all that delivers one block to the wrong rank: rank 0
 * sends its block for rank 1 to rank 2 (and nothing to rank 1). */
static int misdeliver_lower(fs__cb *cb) {
  int32_t p = cb->p;
  int rc = fs__cb_units(cb, p);
  for (int32_t r = 0; r < p && !rc; r++)
    for (int32_t d = 0; d < p && !rc; d++) {
      if (d == r || (r == 0 && d == 2)) continue;
      int32_t unit = r * p + d, to = r == 0 && d == 1 ? 2 : d;
      fs__msg m;
      rc = fs__cb_send(cb, r, to, &unit, 1, 0, NULL, 0, NULL, 0, &m);
    }
  return rc;
}

TEST(test_coll_a2a_tracker_catches_misdelivery) {
  const fs__coll_algo_impl bad = {FS_ALGO_DIRECT, FS__OP(FS_COLL_ALLTOALL), misdeliver_lower,
                                  coll_zero_model, NULL, NULL};
  fs_coll_params prm = params(FS_ALGO_DIRECT, FS_COLL_ALLTOALL, 4e4);
  coll_run run = {0};
  fs_err err = {0, ""};
  CHECK_OK(coll_run_star(&STAR, &bad, &prm, 4, &run, &err), &err);
  CHECK_EQ_INT(run.verified, FS_EINVAL);
  if (!strstr(run.why, "rank 1 ends with unit 1 "))
    test_fail(__FILE__, __LINE__, "expected rank 1 missing unit 1 (0 -> 1), got '%s'", run.why);
  /* The same run with the real lowering passes. */
  CHECK_OK(coll_run_star(&STAR, NULL, &prm, 4, &run, &err), &err);
  CHECK_EQ_INT(run.verified, 0);
}
