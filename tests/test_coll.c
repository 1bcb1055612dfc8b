/* Collective tests: for every implemented algorithm and op, on a star (a
 * contention-free switch: each rank's only constraint is its own link), the
 * simulated time equals the closed form to 1e-9, and the symbolic data
 * tracker confirms every rank ends with what the operation defines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/coll/internal.h"
#include "coll_harness.h"
#include "fabricsim/coll.h"
#include "test.h"

#define LAT_NS 500
#define GBPS 100.0

/* A switch that can aggregate (algorithm inc); the broken lowerings run on
 * a plain one. */
static const coll_star STAR = {LAT_NS, GBPS, COLL_SWITCH_INC};
static const coll_star STAR_PLAIN = {LAT_NS, GBPS, COLL_SWITCH_PLAIN};

TEST(test_coll_sim_equals_closed_form_on_star) {
  static const int32_t ps[] = {2, 3, 4, 5, 7, 8, 16, 64};
  static const double sizes[] = {4096, 1 << 26};
  fs_coll_cost cost = {2 * LAT_NS * 1e-9, 8 / (GBPS * 1e9), 0};
  int checked = 0;
  for (int a = 1; a < FS_ALGO_N; a++)
    for (int op = 0; op < FS_COLL_N_OPS; op++) {
      if (!fs_coll_supports((fs_coll_algo)a, (fs_coll_op)op)) continue;
      for (size_t pi = 0; pi < sizeof(ps) / sizeof(ps[0]); pi++)
        for (size_t si = 0; si < 2; si++)
          for (int variant = 0; variant < 2; variant++) {
            fs_coll_params prm;
            fs_coll_params_init(&prm);
            prm.op = (fs_coll_op)op;
            prm.algo = (fs_coll_algo)a;
            prm.bytes = sizes[si];
            prm.root = ps[pi] > 2 ? 1 : 0;
            /* hier: ranks per scale-up node (it ignores node_size 1 or p) */
            prm.node_size = ps[pi] % 4 == 0 ? 4 : ps[pi] % 2 == 0 ? 2 : 1;
            /* variant 1: explicit chunks, two channels, a reduction cost */
            if (variant) {
              prm.chunks = 3;
              prm.channels = 2;
              prm.gamma_s_per_byte = 2e-11;
            }
            fs_err err = {0, ""};
            if (fs_coll_params_check(&prm, ps[pi], &err)) continue; /* e.g. needs a power of 2 */
            coll_run tr = {0};
            int rc = coll_run_star(&STAR, NULL, &prm, ps[pi], &tr, &err);
            if (rc) {
              test_fail(__FILE__, __LINE__, "%s %s p=%d: %s", fs_coll_algo_name(prm.algo),
                        fs_coll_op_name(prm.op), ps[pi], err.msg);
              continue;
            }
            cost.gamma_s_per_byte = prm.gamma_s_per_byte;
            double model = fs_coll_model_time(&prm, ps[pi], &cost);
            if (!(fabs(tr.time_s - model) <= 1e-9 * model))
              test_fail(__FILE__, __LINE__,
                        "%s %s p=%d bytes=%g chunks=%d: simulated %.17g s, closed form %.17g s",
                        fs_coll_algo_name(prm.algo), fs_coll_op_name(prm.op), ps[pi],
                        prm.bytes, prm.chunks, tr.time_s, model);
            if (tr.verified)
              test_fail(__FILE__, __LINE__, "%s %s p=%d: data check: %s",
                        fs_coll_algo_name(prm.algo), fs_coll_op_name(prm.op), ps[pi], tr.why);
            checked++;
          }
    }
  CHECK(checked > 0);
}

TEST(test_coll_ring_bytes_received) {
  /* Ring all-reduce: every rank receives 2(p-1)/p of the buffer; ring
   * all-gather and reduce-scatter (p-1)/p; a chain broadcast: all but the
   * root receive the whole buffer. */
  for (int32_t p = 2; p <= 9; p++) {
    fs_coll_params prm;
    fs_coll_params_init(&prm);
    prm.algo = FS_ALGO_RING;
    prm.bytes = 6e6;
    struct { fs_coll_op op; double per_rank; } cases[] = {
        {FS_COLL_ALLREDUCE, 2.0 * (p - 1) / p * 6e6},
        {FS_COLL_ALLGATHER, (double)(p - 1) / p * 6e6},
        {FS_COLL_REDUCESCATTER, (double)(p - 1) / p * 6e6}};
    for (int c = 0; c < 3; c++) {
      prm.op = cases[c].op;
      coll_run tr = {0};
      fs_err err = {0, ""};
      CHECK_OK(coll_run_star(&STAR, NULL, &prm, p, &tr, &err), &err);
      CHECK_EQ_INT(tr.verified, 0);
      for (int32_t r = 0; r < p; r++) CHECK_REL(tr.recv[r], cases[c].per_rank, 1e-12, "B");
    }
    prm.op = FS_COLL_BROADCAST;
    prm.root = p - 1;
    coll_run tr = {0};
    fs_err err = {0, ""};
    CHECK_OK(coll_run_star(&STAR, NULL, &prm, p, &tr, &err), &err);
    for (int32_t r = 0; r < p; r++) CHECK_REL(tr.recv[r], r == p - 1 ? 0 : 6e6, 1e-12, "B");
  }
}

/* Broken lowerings for the tracker to catch. */
static int broken_variant;

static int broken_lower(fs__cb *cb) {
  int32_t p = cb->p;
  int rc = fs__cb_units(cb, p);
  fs__msg m, prev = {-1, -1};
  /* A "ring all-gather" with one bug per variant. */
  for (int32_t t = 0; t < p - 1 && !rc; t++)
    for (int32_t r = 0; r < p && !rc; r++) {
      if (broken_variant == 0 && t == p - 2 && r == 0) continue; /* a step skipped */
      int32_t blk = ((r - t) % p + p) % p;
      if (broken_variant == 2) blk = (r + t + 1) % p; /* a block it lacks */
      /* variant 1: forwards without waiting for the data to arrive */
      const int32_t *dep = broken_variant == 1 ? NULL : &prev.ready;
      rc = fs__cb_send_range(cb, r, (r + 1) % p, blk, 1, 0, dep,
                             dep ? 1 : 0, NULL, 0, &m);
      if (r == p - 1) prev = m;
    }
  return rc;
}

TEST(test_coll_tracker_catches_broken_algorithm) {
  const fs__coll_algo_impl broken = {FS_ALGO_RING, FS__OP(FS_COLL_ALLGATHER), broken_lower,
                                     coll_zero_model, NULL, NULL};
  const char *expect[] = {"ends with", "before it was ready", "does not hold"};
  for (broken_variant = 0; broken_variant < 3; broken_variant++) {
    fs_err err = {0, ""};
    fs_coll_params prm;
    fs_coll_params_init(&prm);
    prm.op = FS_COLL_ALLGATHER;
    prm.algo = FS_ALGO_RING;
    coll_run run = {0};
    CHECK_OK(coll_run_star(&STAR_PLAIN, &broken, &prm, 4, &run, &err), &err);
    CHECK_EQ_INT(run.verified, FS_EINVAL);
    if (!strstr(run.why, expect[broken_variant]))
      test_fail(__FILE__, __LINE__, "variant %d: expected '%s' in '%s'", broken_variant,
                expect[broken_variant], run.why);
  }
}

/* fs_coll_ranks_from_file (coll --ranks-file): the hosts in order; a
 * file that is not a non-empty array of integers in [0, 2^31) fails with
 * FS_EINVAL naming the file and JSON path, a missing one with FS_EIO,
 * and neither touches the outputs. */
TEST(test_coll_ranks_from_file) {
  char dir[] = "/tmp/fs-coll-ranks-XXXXXX";
  if (!mkdtemp(dir)) {
    test_fail(__FILE__, __LINE__, "mkdtemp failed");
    return;
  }
  char path[96];
  fs_err err = {0, ""};
  int32_t *hosts = NULL, p = 0;
  snprintf(path, sizeof(path), "%s/good.json", dir);
  CHECK(test_write_file(path, "[0, 8, 16, 24]") == 0);
  CHECK_OK(fs_coll_ranks_from_file(path, &hosts, &p, &err), &err);
  CHECK_EQ_INT(p, 4);
  if (hosts && p == 4) {
    for (int32_t i = 0; i < 4; i++) CHECK_EQ_INT(hosts[i], 8 * i);
  }
  free(hosts);
  static const char *const bad[][2] = {{"[]", "$"},          {"{\"a\": 1}", "$"},
                                       {"[0, \"x\"]", "$[1]"}, {"[0, -1]", "$[1]"},
                                       {"[2.5]", "$[0]"},     {"[0, 2147483648]", "$[1]"}};
  for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
    int32_t *h = (int32_t *)&p, n = -7;
    CHECK(test_write_file(path, bad[k][0]) == 0);
    CHECK_EQ_INT(fs_coll_ranks_from_file(path, &h, &n, &err), FS_EINVAL);
    CHECK(h == (int32_t *)&p && n == -7);
    if (!strstr(err.msg, path) || !strstr(err.msg, bad[k][1]))
      test_fail(__FILE__, __LINE__, "%s: expected the file and %s in: %s", bad[k][0], bad[k][1],
                err.msg);
  }
  remove(path);
  CHECK_EQ_INT(fs_coll_ranks_from_file(path, &hosts, &p, &err), FS_EIO);
  CHECK(strstr(err.msg, path) != NULL);
  rmdir(dir);
}

TEST(test_coll_bad_params) {
  fs_coll_params prm;
  fs_err err = {0, ""};
  fs_coll_params_init(&prm);
  CHECK_EQ_INT(fs_coll_params_check(&prm, 0, &err), FS_EINVAL);
  prm.bytes = 0;
  CHECK_EQ_INT(fs_coll_params_check(&prm, 4, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "size") != NULL);
  prm.bytes = -5;
  CHECK_EQ_INT(fs_coll_params_check(&prm, 4, &err), FS_EINVAL);
  fs_coll_params_init(&prm);
  prm.algo = FS_ALGO_RING;
  prm.op = FS_COLL_ALLTOALL;
  CHECK_EQ_INT(fs_coll_params_check(&prm, 4, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "does not implement") != NULL);
  fs_coll_algo a;
  CHECK_EQ_INT(fs_coll_algo_parse("nosuch", &a), FS_EINVAL);
  prm.op = FS_COLL_BROADCAST;
  prm.root = 4;
  CHECK_EQ_INT(fs_coll_params_check(&prm, 4, &err), FS_EINVAL);
}

/* Ring all-reduce with every hop crossing leaves (rank r on leaf r mod 4)
 * and spraying: on a 2:1 oversubscribed leaf-spine each leaf's 4 crossing
 * flows share 200 Gb/s of uplinks, 50 Gb/s each, so beta doubles; on the
 * non-blocking one they run at the host rate. Both match the closed form with
 * the bottleneck's beta, and the ratio tends to 2 for large messages. */
TEST(test_coll_ring_oversubscription_factor) {
  double times[2];
  for (int nb = 0; nb < 2; nb++) {
    fs_leafspine_params lp = {4, 2, 4, 100, nb ? 200 : 100, 1, 250};
    fs_topo *t = NULL;
    fs_err err = {0, ""};
    CHECK_OK(fs_topo_leafspine(&lp, &t, &err), &err);
    int32_t hosts[16];
    for (int32_t r = 0; r < 16; r++) hosts[r] = (r % 4) * 4 + r / 4;
    fs_coll_group g = {16, hosts};
    fs_coll_params prm;
    fs_coll_params_init(&prm);
    prm.algo = FS_ALGO_RING;
    prm.bytes = 256e6;
    fs_coll_result res;
    CHECK_OK(fs_coll_run(t, FS_ROUTE_SPRAY, 1, &prm, &g, &res, &err), &err);
    fs_coll_cost cost = {4 * 250e-9, 8 / ((nb ? 100 : 50) * 1e9), 0};
    CHECK_REL(res.time_s, fs_coll_model_time(&prm, 16, &cost), 1e-9, "s");
    times[nb] = res.time_s;
    fs_topo_free(t);
  }
  double ratio = times[0] / times[1];
  CHECK(ratio > 1.99 && ratio < 2.0);
}

/* The simulating policy (FS_TUNE_SIM, the default before the NCCL model):
 * its pick is the fastest simulated algorithm, cached per size bucket. */
TEST(test_coll_tuner_picks_fastest_and_caches) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  fs_topo_fattree(4, 100, 500, &t, &err);
  int32_t hosts[8] = {0, 5, 10, 15, 2, 7, 8, 13};
  fs_coll_group g = {8, hosts};
  fs_coll_tuner *tu;
  CHECK_OK(fs_coll_tuner_new2(t, FS_ROUTE_ECMP, 3, FS_TUNE_SIM, &tu, &err), &err);
  CHECK_EQ_INT(fs_coll_tuner_policy(tu), FS_TUNE_SIM);
  for (int op = 0; op < FS_COLL_N_OPS; op++) {
    fs_coll_params prm;
    fs_coll_params_init(&prm);
    prm.op = (fs_coll_op)op;
    prm.bytes = 3 << 20;
    fs_coll_algo pick;
    int cached = -1;
    CHECK_OK(fs_coll_tuner_choose(tu, &prm, &g, &pick, &cached, &err), &err);
    CHECK_EQ_INT(cached, 0);
    /* The pick is no slower than any algorithm implementing the op (ps, a
     * parameter-server deployment, is run only when named). */
    prm.algo = pick;
    fs_coll_result best;
    CHECK_OK(fs_coll_run(t, FS_ROUTE_ECMP, 3, &prm, &g, &best, &err), &err);
    for (int a = 1; a < FS_ALGO_N; a++) {
      fs_coll_params q = prm;
      q.algo = (fs_coll_algo)a;
      fs_err ignore = {0, ""};
      if (q.algo == FS_ALGO_PS || !fs_coll_supports(q.algo, q.op) ||
          fs_coll_params_check(&q, 8, &ignore))
        continue;
      fs_coll_result r;
      if (fs_coll_run(t, FS_ROUTE_ECMP, 3, &q, &g, &r, &ignore)) continue;
      CHECK(best.time_s <= r.time_s);
    }
    /* Same op and size bucket (3 MiB and 2.5 MiB share floor(log2)): cached. */
    prm.bytes = 2.5 * (1 << 20);
    fs_coll_algo again;
    CHECK_OK(fs_coll_tuner_choose(tu, &prm, &g, &again, &cached, &err), &err);
    CHECK_EQ_INT(cached, 1);
    CHECK_EQ_INT(again, pick);
  }
  fs_coll_tuner_free(tu);
  fs_topo_free(t);
}

/* Parameter servers (algorithm ps) with fewer servers than ranks: server
 * j's down link carries p - 1 pushes of n / S and its up link p - 1 pulls,
 * so on a star T = 2 (p - 1) (n / S) beta + 2 alpha + gamma n / S exactly;
 * the tracker confirms an all-reduce. AUTO never chooses it. */
TEST(test_coll_ps_servers_incast) {
  fs_coll_cost cost = {2 * LAT_NS * 1e-9, 8 / (GBPS * 1e9), 0};
  static const int32_t S[] = {1, 2, 3, 5, 8};
  for (size_t i = 0; i < sizeof(S) / sizeof(S[0]); i++) {
    fs_coll_params prm;
    fs_coll_params_init(&prm);
    prm.algo = FS_ALGO_PS;
    prm.bytes = 3 << 20;
    prm.servers = S[i];
    prm.gamma_s_per_byte = i % 2 ? 1e-11 : 0;
    fs_err err = {0, ""};
    coll_run tr = {0};
    CHECK_OK(coll_run_star(&STAR, NULL, &prm, 8, &tr, &err), &err);
    cost.gamma_s_per_byte = prm.gamma_s_per_byte;
    double shard = prm.bytes / S[i];
    double want = 2 * 7 * shard * cost.beta_s_per_byte + 2 * cost.alpha_s +
                  shard * prm.gamma_s_per_byte;
    CHECK_REL(tr.time_s, want, 1e-9, "s");
    CHECK_REL(fs_coll_model_time(&prm, 8, &cost), want, 1e-12, "s");
    CHECK(!tr.verified);
  }
  /* more servers than ranks is refused */
  fs_coll_params prm;
  fs_coll_params_init(&prm);
  prm.algo = FS_ALGO_PS, prm.servers = 9;
  fs_err err = {0, ""};
  CHECK_EQ_INT(fs_coll_params_check(&prm, 8, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "servers must be in [0, 8]") != NULL);
  /* AUTO (every algorithm simulated, the fastest kept) never runs ps, even
   * where it would win: 2 ranks, one server, 1 byte */
  fs_topo *t = NULL;
  CHECK_OK(fs_topo_star(2, GBPS, LAT_NS, &t, &err), &err);
  if (!t) return;
  int32_t hosts[2] = {0, 1};
  fs_coll_group g = {2, hosts};
  prm.algo = FS_ALGO_AUTO, prm.servers = 0, prm.bytes = 1;
  fs_coll_result r;
  CHECK_OK(fs_coll_run(t, FS_ROUTE_SHORTEST, 1, &prm, &g, &r, &err), &err);
  CHECK(r.algo != FS_ALGO_PS);
  fs_topo_free(t);
}

/* A per-step latency (fs_coll_params.step_latency_s, NCCL's hwLat of a
 * network step): an unpipelined ring all-reduce on 8 plain hosts waits for
 * it at each of its 2 (p - 1) = 14 steps, exactly; on 2 servers of 4 GPUs
 * only the steps between servers pay it; NCCL's figures are its table's. */
TEST(test_coll_step_latency) {
  fs_err err = {0, ""};
  fs_topo *t = NULL;
  CHECK_OK(fs_topo_star(8, GBPS, LAT_NS, &t, &err), &err);
  if (!t) return;
  int32_t hosts[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  fs_coll_group g = {8, hosts};
  fs_coll_params prm;
  fs_coll_params_init(&prm);
  prm.algo = FS_ALGO_RING, prm.bytes = 1 << 24, prm.chunks = 1;
  fs_coll_result r0, r1;
  CHECK_OK(fs_coll_run(t, FS_ROUTE_SHORTEST, 1, &prm, &g, &r0, &err), &err);
  prm.step_latency_s = fs_coll_nccl_step_latency_s(FS_ALGO_RING, FS_PROTO_SIMPLE);
  CHECK_REL(prm.step_latency_s, 14e-6, 1e-12, "s"); /* hwLat[NET][RING][SIMPLE] */
  CHECK_REL(fs_coll_nccl_step_latency_s(FS_ALGO_TREE, FS_PROTO_LL), 5e-6, 1e-12, "s");
  CHECK_OK(fs_coll_run(t, FS_ROUTE_SHORTEST, 1, &prm, &g, &r1, &err), &err);
  CHECK_REL(r1.time_s - r0.time_s, 14 * 14e-6, 1e-9, "s");
  fs_topo_free(t);
  /* 2 servers of 4: only steps between servers pay (4 ranks inside one
   * server: none; the 8 ranks: some, the rest hidden behind the slower
   * hops between servers, at most every step) */
  fs_server_params sv = {4, 2400, 250, 512, 250, 0};
  CHECK_OK(fs_topo_star_servers(8, GBPS, LAT_NS, &sv, &t, &err), &err);
  if (!t) return;
  prm.step_latency_s = 0;
  CHECK_OK(fs_coll_run(t, FS_ROUTE_SHORTEST, 1, &prm, &g, &r0, &err), &err);
  prm.step_latency_s = 14e-6;
  CHECK_OK(fs_coll_run(t, FS_ROUTE_SHORTEST, 1, &prm, &g, &r1, &err), &err);
  CHECK(r1.time_s - r0.time_s > 0.9 * 14e-6 && r1.time_s - r0.time_s < 14 * 14e-6);
  fs_coll_group g4 = {4, hosts};
  prm.step_latency_s = 0;
  CHECK_OK(fs_coll_run(t, FS_ROUTE_SHORTEST, 1, &prm, &g4, &r0, &err), &err);
  prm.step_latency_s = 14e-6;
  CHECK_OK(fs_coll_run(t, FS_ROUTE_SHORTEST, 1, &prm, &g4, &r1, &err), &err);
  CHECK_REL(r1.time_s, r0.time_s, 0, "s");
  fs_topo_free(t);
  prm.step_latency_s = -1;
  CHECK_EQ_INT(fs_coll_params_check(&prm, 8, &err), FS_EINVAL);
}

/* fs_coll_flows_estimate (what `coll` refuses up front on) is the count
 * fs_coll_lower adds, for every algorithm and op it estimates, over ranks
 * 2..17 with chunks and channels varied; 0 where it does not estimate. */
TEST(test_coll_flows_estimate_is_exact) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_star(17, 100, 500, &t, &err), &err);
  if (!t) return;
  int32_t hosts[17];
  for (int32_t r = 0; r < 17; r++) hosts[r] = r;
  static const fs_coll_algo algos[] = {FS_ALGO_RING, FS_ALGO_DIRECT, FS_ALGO_PAIRWISE,
                                       FS_ALGO_BRUCK, FS_ALGO_TREE};
  static const fs_coll_op ops[] = {FS_COLL_ALLREDUCE, FS_COLL_ALLGATHER, FS_COLL_REDUCESCATTER,
                                   FS_COLL_ALLTOALL};
  int checked = 0;
  for (int32_t p = 2; p <= 17; p += 3)
    for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++)
      for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
        fs_coll_params prm;
        fs_coll_params_init(&prm);
        prm.algo = algos[a], prm.op = ops[o], prm.bytes = 1 << 20;
        prm.chunks = 1 + p % 3, prm.channels = 1 + p % 2;
        fs_err ignore = {0, ""};
        if (!fs_coll_supports(prm.algo, prm.op) || fs_coll_params_check(&prm, p, &ignore))
          continue;
        fs_coll_group g = {p, hosts};
        fs_coll_result res;
        CHECK_OK(fs_coll_run(t, FS_ROUTE_SHORTEST, 1, &prm, &g, &res, &err), &err);
        int64_t est = fs_coll_flows_estimate(&prm, p);
        if (est == 0) {
          CHECK(prm.algo == FS_ALGO_TREE);
          continue;
        }
        if (est != res.flows)
          test_fail(__FILE__, __LINE__, "%s %s p=%d: estimate %lld, lowered %lld",
                    fs_coll_algo_name(prm.algo), fs_coll_op_name(prm.op), p, (long long)est,
                    (long long)res.flows);
        checked++;
      }
  CHECK(checked > 20);
  fs_topo_free(t);
}

/* Rank rotation (coll.c run_rotated): a ring over a star, a ring topology
 * or a star with hosts outside the group simulates rank 0's flows only and
 * gives the full lowering's time (coll_run_on: every flow) to 1e-12, with
 * the full flow count, for all-reduce, all-gather and reduce-scatter,
 * chunks, channels, a reduction cost and a shuffled host order; a torus
 * line order that is no automorphism, and ECMP over a fat-tree, fall back
 * to the full simulation (the same time by construction). */
TEST(test_coll_rotation_is_exact) {
  fs_err err = {0, ""};
  static const fs_coll_op ops[] = {FS_COLL_ALLREDUCE, FS_COLL_ALLGATHER, FS_COLL_REDUCESCATTER};
  /* (on the 13-ring only all 13 hosts rotate onto themselves) */
  const char *topos[] = {"star:hosts=24,gbps=100,latency_ns=700", "ring:n=13,gbps=50",
                         "torus:dims=4x4,gbps=100", "fattree:k=4,gbps=100"};
  int checked = 0;
  for (int ti = 0; ti < 4; ti++) {
    fs_topo *t = NULL;
    CHECK_OK(fs_topo_from_spec(topos[ti], &t, &err), &err);
    if (!t) continue;
    for (int32_t p = 3; p <= (t->n_hosts < 13 ? t->n_hosts : 13); p += 5)
      for (size_t o = 0; o < 3; o++)
        for (int variant = 0; variant < 3; variant++) {
          int32_t hosts[24];
          for (int32_t r = 0; r < p; r++)
            hosts[r] = variant == 2 && ti == 0 ? (r * 7 + 3) % t->n_hosts : r;
          fs_coll_params prm;
          fs_coll_params_init(&prm);
          prm.algo = FS_ALGO_RING, prm.op = ops[o], prm.bytes = 3e6 + p;
          prm.chunks = variant == 1 ? 3 : 0, prm.channels = variant == 1 ? 2 : 0;
          prm.gamma_s_per_byte = variant == 2 ? 1e-11 : 0;
          fs_coll_group g = {p, hosts};
          fs_coll_result fast;
          coll_run full;
          memset(&full, 0, sizeof(full));
          CHECK_OK(fs_coll_run(t, FS_ROUTE_SHORTEST, 1, &prm, &g, &fast, &err), &err);
          CHECK_OK(coll_run_on(t, NULL, &prm, hosts, p, &full, &err), &err);
          CHECK_REL(fast.time_s, full.time_s, 1e-12, topos[ti]);
          CHECK_EQ_INT(fast.flows, full.flows);
          /* the star (any host order) and the whole ring simulate 1 / p of
           * the flows: fewer events than flows (a full run has more) */
          int symmetric = ti == 0 || (ti == 1 && p == t->n_hosts);
          if (symmetric && p >= 8) CHECK(fast.events < (uint64_t)fast.flows);
          else if (ti >= 2) CHECK(fast.events >= (uint64_t)fast.flows);
          checked++;
        }
    fs_topo_free(t);
  }
  CHECK(checked > 40);
}
