/* Tests of recursive doubling (rd) and recursive halving-doubling (rhd): on a
 * star the simulated time equals the closed form for every p up to 33 and a
 * few larger, chunked or not, with and without a reduction cost; the closed
 * forms equal hand computations for p = 4 and 6; every rank receives the
 * bytes the algorithm moves; flows go to the right partner at the right time. */
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

static void params(fs_coll_params *prm, fs_coll_algo algo, fs_coll_op op, double bytes,
                   int32_t chunks, double gamma) {
  fs_coll_params_init(prm);
  prm->algo = algo;
  prm->op = op;
  prm->bytes = bytes;
  prm->chunks = chunks;
  prm->gamma_s_per_byte = gamma;
}

static double model(const fs_coll_params *prm, int32_t p) {
  fs_coll_cost cost = {ALPHA, BETA, prm->gamma_s_per_byte};
  return fs_coll_model_time(prm, p, &cost);
}

static const struct {
  fs_coll_algo algo;
  fs_coll_op op;
} cases[] = {{FS_ALGO_RD, FS_COLL_ALLREDUCE},
             {FS_ALGO_RD, FS_COLL_ALLGATHER},
             {FS_ALGO_RHD, FS_COLL_ALLREDUCE},
             {FS_ALGO_RHD, FS_COLL_REDUCESCATTER}};
#define N_CASES (int)(sizeof(cases) / sizeof(cases[0]))

TEST(test_coll_rd_sim_equals_closed_form_every_p) {
  /* Sizes where latency dominates, where they balance (a 64 KiB block is
   * ~5 us, alpha 1 us) and where bandwidth dominates, so every max() in the
   * closed forms takes both branches somewhere. */
  static const double sizes[] = {4096, 3 << 16, 1 << 26};
  static const int32_t chunks[] = {1, 2, 5};
  int32_t ps[40], np = 0;
  for (int32_t p = 2; p <= 33; p++) ps[np++] = p;
  ps[np++] = 48;
  ps[np++] = 64;
  ps[np++] = 100;
  ps[np++] = 129;
  int checked = 0;
  for (int ci = 0; ci < N_CASES; ci++)
    for (int32_t pi = 0; pi < np; pi++)
      for (int si = 0; si < 3; si++)
        for (int k = 0; k < 3; k++)
          for (int gi = 0; gi < 2; gi++) {
            if (ps[pi] > 64 && (si != 2 || gi == 0)) continue; /* keep it quick */
            fs_coll_params prm;
            params(&prm, cases[ci].algo, cases[ci].op, sizes[si], chunks[k], gi ? 2e-11 : 0);
            coll_run run;
            memset(&run, 0, sizeof(run));
            fs_err err = {0, ""};
            if (coll_run_star(&STAR, NULL, &prm, ps[pi], &run, &err)) {
              test_fail(__FILE__, __LINE__, "%s %s p=%d: %s", fs_coll_algo_name(prm.algo),
                        fs_coll_op_name(prm.op), ps[pi], err.msg);
              continue;
            }
            double want = model(&prm, ps[pi]);
            if (!(fabs(run.time_s - want) <= 1e-9 * want))
              test_fail(__FILE__, __LINE__,
                        "%s %s p=%d bytes=%g chunks=%d gamma=%g: simulated %.17g s, closed "
                        "form %.17g s",
                        fs_coll_algo_name(prm.algo), fs_coll_op_name(prm.op), ps[pi], prm.bytes,
                        prm.chunks, prm.gamma_s_per_byte, run.time_s, want);
            if (run.verified)
              test_fail(__FILE__, __LINE__, "%s %s p=%d chunks=%d: data check: %s",
                        fs_coll_algo_name(prm.algo), fs_coll_op_name(prm.op), ps[pi],
                        prm.chunks, run.why);
            checked++;
          }
  CHECK(checked > 1000);
}

/* Checks the closed form and the simulation against a hand value. */
static void by_hand(fs_coll_algo algo, fs_coll_op op, int32_t p, double n, int32_t C,
                    double gamma, double want, int line) {
  fs_coll_params prm;
  params(&prm, algo, op, n, C, gamma);
  double got = model(&prm, p);
  if (!(fabs(got - want) <= 1e-12 * want))
    test_fail(__FILE__, line, "%s %s p=%d n=%g C=%d: closed form %.17g s, by hand %.17g s",
              fs_coll_algo_name(algo), fs_coll_op_name(op), p, n, C, got, want);
  coll_run run;
  memset(&run, 0, sizeof(run));
  fs_err err = {0, ""};
  CHECK_OK(coll_run_star(&STAR, NULL, &prm, p, &run, &err), &err);
  if (!(fabs(run.time_s - want) <= 1e-9 * want))
    test_fail(__FILE__, line, "%s %s p=%d n=%g C=%d: simulated %.17g s, by hand %.17g s",
              fs_coll_algo_name(algo), fs_coll_op_name(op), p, n, C, run.time_s, want);
}

TEST(test_coll_rd_closed_forms_by_hand) {
  const double a = ALPHA, be = BETA, ga = 2e-11;
  for (int si = 0; si < 2; si++) {
    double n = si ? 6 << 20 : 6144; /* divisible by 4 and 6 */
    /* rd all-reduce, p = 4: two rounds of the whole buffer (Thakur et al.
     * lg p (alpha + n beta + n gamma)). */
    by_hand(FS_ALGO_RD, FS_COLL_ALLREDUCE, 4, n, 1, ga, 2 * (a + n * be + n * ga), __LINE__);
    /* Two chunks: chunk 0 of round 1 waits for the round-0 chunk 0 to
     * arrive and be reduced, and for chunk 1 of round 0 to have left. */
    double d = n / 2 * be, h = a + n / 2 * ga;
    by_hand(FS_ALGO_RD, FS_COLL_ALLREDUCE, 4, n, 2, ga, fmax(2 * d, d + h) + 2 * d + h,
            __LINE__);
    /* p = 6 = 4 + 2: pre step (reduced), 2 rounds, post step (not reduced). */
    by_hand(FS_ALGO_RD, FS_COLL_ALLREDUCE, 6, n, 1, ga, 3 * (a + n * be + n * ga) + a + n * be,
            __LINE__);
    by_hand(FS_ALGO_RD, FS_COLL_ALLREDUCE, 6, n, 2, ga, 3 * fmax(2 * d, d + h) + 2 * d + a,
            __LINE__);
    /* rd all-gather, p = 4: blocks of b = n/4, rounds of 1 and 2 blocks. */
    double b = n / 4 * be;
    by_hand(FS_ALGO_RD, FS_COLL_ALLGATHER, 4, n, 1, 0, 2 * a + 3 * b, __LINE__);
    /* Two chunks of half-blocks: round 1's first chunk waits for round 0's
     * second to leave (b) or its first to arrive (b/2 + alpha). */
    by_hand(FS_ALGO_RD, FS_COLL_ALLGATHER, 4, n, 2, 0, fmax(b, b / 2 + a) + 2 * b + a, __LINE__);
    /* p = 6, b = n/6: ranks 1 and 3 hold two blocks after the pre step.
     * Round 0: 1 <-> 3 swap 2 blocks each (4 <-> 5 swap one, earlier).
     * Round 1: 1 -> 4 four blocks, 4 -> 1 two: rank 1 has its data after
     * 2 blocks + alpha but its link is busy for 4 blocks; then 1 -> 0 the
     * 5 blocks rank 0 lacks. */
    b = n / 6 * be;
    by_hand(FS_ALGO_RD, FS_COLL_ALLGATHER, 6, n, 1, 0,
            (b + a) + (2 * b + a) + fmax(4 * b, 2 * b + a) + 5 * b + a, __LINE__);
    /* rhd all-reduce, p = 4: halving n/2, n/4 (reduced), doubling n/4, n/2
     * (Thakur et al. 2 lg p alpha + 2 (p-1)/p n beta + (p-1)/p n gamma). */
    double rhd4 = (a + n / 2 * (be + ga)) + (a + n / 4 * (be + ga)) + (a + n / 4 * be) +
                  (a + n / 2 * be);
    by_hand(FS_ALGO_RHD, FS_COLL_ALLREDUCE, 4, n, 1, ga, rhd4, __LINE__);
    by_hand(FS_ALGO_RHD, FS_COLL_ALLREDUCE, 4, n, 3, ga, rhd4, __LINE__); /* chunks ignored */
    /* p = 6: the whole buffer in (reduced) and out around the p = 4 part. */
    by_hand(FS_ALGO_RHD, FS_COLL_ALLREDUCE, 6, n, 1, ga,
            (a + n * (be + ga)) + rhd4 + (a + n * be), __LINE__);
    /* rhd reduce-scatter, p = 4: the halving half of the above. */
    by_hand(FS_ALGO_RHD, FS_COLL_REDUCESCATTER, 4, n, 1, ga,
            (a + n / 2 * (be + ga)) + (a + n / 4 * (be + ga)), __LINE__);
    /* p = 6, blocks of n/6: new ranks 0, 1 (old 1, 3) hold blocks {0,1},
     * {2,3}; 2, 3 (old 4, 5) blocks 4, 5. Round 0: old 1 keeps blocks 0..3
     * and receives 4 of them from old 4; round 1: old 1 keeps {0,1} and
     * receives 2 from old 3; then it sends block 0 to old 0. */
    double bb = n / 6;
    by_hand(FS_ALGO_RHD, FS_COLL_REDUCESCATTER, 6, n, 1, ga,
            (a + n * (be + ga)) + (a + 4 * bb * (be + ga)) + (a + 2 * bb * (be + ga)) +
                (a + bb * be),
            __LINE__);
  }
}

TEST(test_coll_rd_bytes_received) {
  const double n = 6e6;
  for (int32_t p = 2; p <= 20; p++) {
    int32_t L = 0;
    while (2 << L <= p) L++;
    int32_t m = 1 << L, r = p - m;
    for (int ci = 0; ci < N_CASES; ci++) {
      fs_coll_params prm;
      params(&prm, cases[ci].algo, cases[ci].op, n, ci == 1 ? 3 : 1, 0);
      coll_run run;
      memset(&run, 0, sizeof(run));
      fs_err err = {0, ""};
      CHECK_OK(coll_run_star(&STAR, NULL, &prm, p, &run, &err), &err);
      CHECK_EQ_INT(run.verified, 0);
      for (int32_t q = 0; q < p; q++) {
        int even = q < 2 * r && q % 2 == 0, odd = q < 2 * r && q % 2 == 1;
        int32_t i = odd ? q / 2 : q - r; /* new rank */
        double want = 0;
        switch (ci) {
          case 0: /* rd all-reduce: the buffer per round, plus pre/post */
            want = even ? n : (L + odd) * n;
            break;
          case 1: /* rd all-gather: everything the rank lacks */
            want = (double)(p - 1) / p * n;
            break;
          case 2: /* rhd all-reduce: 2 (m-1)/m n among m, plus pre/post */
            want = even ? n : 2.0 * (m - 1) / m * n + odd * n;
            break;
          default: { /* rhd reduce-scatter: the half kept, every round */
            if (even) {
              want = n / p;
              break;
            }
            want = odd * n;
            for (int32_t D = m / 2; D >= 1; D /= 2) {
              int32_t j0 = i / D * D, blocks = 0; /* new ranks j0 .. j0+D-1 */
              for (int32_t j = j0; j < j0 + D; j++) blocks += j < r ? 2 : 1;
              want += blocks * n / p;
            }
          }
        }
        if (!(fabs(run.recv[q] - want) <= 1e-9 * want))
          test_fail(__FILE__, __LINE__, "%s %s p=%d rank %d: received %.17g B, expected %.17g B",
                    fs_coll_algo_name(prm.algo), fs_coll_op_name(prm.op), p, q, run.recv[q],
                    want);
      }
    }
  }
}

TEST(test_coll_rd_flow_counts) {
  for (int32_t p = 2; p <= 40; p++) {
    int32_t L = 0;
    while (2 << L <= p) L++;
    int32_t m = 1 << L, r = p - m;
    for (int32_t C = 1; C <= 3; C++) {
      int64_t want[N_CASES] = {(int64_t)(m * L + 2 * r) * C, (int64_t)(m * L + 2 * r) * C,
                               2 * m * L + 2 * r, m * L + 2 * r};
      for (int ci = 0; ci < N_CASES; ci++) {
        fs_coll_params prm;
        params(&prm, cases[ci].algo, cases[ci].op, 1e6, C, 0);
        coll_run run;
        memset(&run, 0, sizeof(run));
        fs_err err = {0, ""};
        CHECK_OK(coll_run_star(&STAR, NULL, &prm, p, &run, &err), &err);
        if (run.flows != want[ci])
          test_fail(__FILE__, __LINE__, "%s %s p=%d C=%d: %lld flows, expected %lld",
                    fs_coll_algo_name(prm.algo), fs_coll_op_name(prm.op), p, C,
                    (long long)run.flows, (long long)want[ci]);
      }
    }
  }
}

/* Every expected (src, dst, start, bytes) is matched by exactly one flow of
 * the log, and there are no others. */
static void check_schedule(const char *what, const coll_run *run, const coll_flow *want,
                           int32_t n_want, int line) {
  if (run->log_n != n_want) {
    test_fail(__FILE__, line, "%s: %d flows, expected %d", what, run->log_n, n_want);
    return;
  }
  uint8_t used[256] = {0};
  for (int32_t e = 0; e < n_want; e++) {
    int found = 0;
    for (int32_t f = 0; f < run->log_n && !found; f++) {
      const coll_flow *g = &run->log[f];
      if (!used[f] && g->src == want[e].src && g->dst == want[e].dst &&
          fabs(g->start_s - want[e].start_s) <= 1e-12 + 1e-9 * want[e].start_s &&
          fabs(g->bytes - want[e].bytes) <= 1e-9 * want[e].bytes)
        used[f] = 1, found = 1;
    }
    if (!found)
      test_fail(__FILE__, line, "%s: no flow %d -> %d of %g B starting at %.9g s", what,
                want[e].src, want[e].dst, want[e].bytes, want[e].start_s);
  }
}

TEST(test_coll_rd_partner_schedule) {
  const double n = 1 << 20, a = ALPHA, be = BETA;
  coll_flow log[256], want[256];
  int32_t nw;
  fs_coll_params prm;
  fs_err err = {0, ""};
  coll_run run;
  memset(&run, 0, sizeof(run));
  run.log = log;
  run.log_cap = 256;

  /* rd all-reduce, p = 8: round k pairs r with r ^ 2^k, both directions at
   * k (n beta + alpha). */
  params(&prm, FS_ALGO_RD, FS_COLL_ALLREDUCE, n, 1, 0);
  CHECK_OK(coll_run_star(&STAR, NULL, &prm, 8, &run, &err), &err);
  nw = 0;
  for (int32_t k = 0; k < 3; k++)
    for (int32_t q = 0; q < 8; q++)
      want[nw++] = (coll_flow){q, q ^ (1 << k), k * (n * be + a), n};
  check_schedule("rd allreduce p=8", &run, want, nw, __LINE__);

  /* p = 6: 0 -> 1 and 2 -> 3 first; new ranks 0..3 are old 1, 3, 4, 5.
   * Round 0: 1 <-> 3 once their data arrived, 4 <-> 5 at once (nobody
   * waits for them); round 1: 1 <-> 4, 3 <-> 5; then 1 -> 0, 3 -> 2. */
  CHECK_OK(coll_run_star(&STAR, NULL, &prm, 6, &run, &err), &err);
  double s = n * be + a;
  coll_flow w6[] = {{0, 1, 0, n},     {2, 3, 0, n},     {1, 3, s, n},     {3, 1, s, n},
                    {4, 5, 0, n},     {5, 4, 0, n},     {1, 4, 2 * s, n}, {4, 1, 2 * s, n},
                    {3, 5, 2 * s, n}, {5, 3, 2 * s, n}, {1, 0, 3 * s, n}, {3, 2, 3 * s, n}};
  check_schedule("rd allreduce p=6", &run, w6, (int32_t)(sizeof(w6) / sizeof(w6[0])), __LINE__);

  /* rhd all-reduce, p = 8: halving at distances 4, 2, 1 with n/2, n/4,
   * n/8; doubling at distances 1, 2, 4 with n/8, n/4, n/2. */
  params(&prm, FS_ALGO_RHD, FS_COLL_ALLREDUCE, n, 1, 0);
  CHECK_OK(coll_run_star(&STAR, NULL, &prm, 8, &run, &err), &err);
  nw = 0;
  double t = 0;
  for (int32_t k = 0; k < 3; k++) {
    double bytes = n / (2 << k);
    for (int32_t q = 0; q < 8; q++) want[nw++] = (coll_flow){q, q ^ (4 >> k), t, bytes};
    t += bytes * be + a;
  }
  for (int32_t k = 0; k < 3; k++) {
    double bytes = n / 8 * (1 << k);
    for (int32_t q = 0; q < 8; q++) want[nw++] = (coll_flow){q, q ^ (1 << k), t, bytes};
    t += bytes * be + a;
  }
  check_schedule("rhd allreduce p=8", &run, want, nw, __LINE__);

  /* rd all-gather, p = 8, two chunks: round k's chunks of 2^k blocks / 2
   * start back to back; round k+1's first waits for round k's last to
   * leave (here it arrives sooner than the next round could start). */
  params(&prm, FS_ALGO_RD, FS_COLL_ALLGATHER, n, 2, 0);
  CHECK_OK(coll_run_star(&STAR, NULL, &prm, 8, &run, &err), &err);
  nw = 0;
  t = 0;
  for (int32_t k = 0; k < 3; k++) {
    double chunk = n / 8 * (1 << k) / 2;
    for (int32_t c = 0; c < 2; c++)
      for (int32_t q = 0; q < 8; q++)
        want[nw++] = (coll_flow){q, q ^ (1 << k), t + c * chunk * be, chunk};
    t += fmax(2 * chunk * be, chunk * be + a);
  }
  check_schedule("rd allgather p=8 C=2", &run, want, nw, __LINE__);
}
