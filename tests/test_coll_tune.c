/* Tuner tests: NCCL's cost model (FS_TUNE_NCCL) against hand-computed
 * cases with NCCL 2.20.3's constants (docs/model-coll-tune.md), the group
 * shape read off real topologies, the simulating policy (FS_TUNE_SIM)
 * choosing what it chose before the NCCL model existed, and `--tune`. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim/coll.h"
#include "fabricsim/topo.h"
#include "test.h"

/* 16 servers of 8 GPUs: NVLink 3600 Gb/s, NIC path 400 Gb/s (50 GB/s). */
static const fs_coll_nccl_shape S128 = {128, 16, 1, 3600, 400};
/* 2 servers of 4 GPUs, same links. */
static const fs_coll_nccl_shape S8 = {8, 2, 1, 3600, 400};

static fs_coll_params params(fs_coll_op op, double bytes) {
  fs_coll_params prm;
  fs_coll_params_init(&prm);
  prm.op = op;
  prm.bytes = bytes;
  return prm;
}

/* The least-time pair over NCCL's candidates, by fs_coll_nccl_time. */
static void argmin(const fs_coll_nccl_shape *s, const fs_coll_params *prm, fs_coll_algo *algo,
                   fs_coll_proto *proto, double *best) {
  static const fs_coll_algo cand[] = {FS_ALGO_TREE, FS_ALGO_RING, FS_ALGO_DIRECT};
  *best = INFINITY;
  for (int i = 0; i < 3; i++)
    for (int p = 0; p < FS_PROTO_N; p++) {
      double t = fs_coll_nccl_time(s, prm, cand[i], (fs_coll_proto)p);
      if (t < *best) *best = t, *algo = cand[i], *proto = (fs_coll_proto)p;
    }
}

TEST(test_coll_nccl_small_allreduce_is_tree_ll) {
  fs_coll_params prm = params(FS_COLL_ALLREDUCE, 4096);
  /* Tree/LL by hand: bus 50 GB/s x 0.92 (tree) / 3.8 (LL, under llMaxBw
   * 20.4 for > 2 nodes) x 0.5 (bus -> alg) x 0.7 (treeCorrectionFactor LL,
   * log2(4096 / 64) = 6); latency baseLat 6.8 + 2 ((128/16 - 1) x 0.6
   * NVLink + log2(16) x 5.0 net) = 55.2 us. */
  double want_us = 55.2 + 4096 / (1000 * (50 * 0.92 / 3.8 * 0.5 * 0.7));
  CHECK_REL(fs_coll_nccl_time(&S128, &prm, FS_ALGO_TREE, FS_PROTO_LL) * 1e6, want_us, 1e-12,
            "us");
  /* Its rivals' latencies alone exceed it: tree LL128 14 + 2 (7 x 1.25 +
   * 4 x 8.5) = 99.5 us; ring LL 6.6 + 222 x max(0.6, 1.0 net overhead) +
   * 32 x 2.7 = 315 us (254 steps, 2 x 16 of them between nodes). */
  CHECK(fs_coll_nccl_time(&S128, &prm, FS_ALGO_TREE, FS_PROTO_LL128) * 1e6 > 99.5);
  CHECK(fs_coll_nccl_time(&S128, &prm, FS_ALGO_RING, FS_PROTO_LL) * 1e6 > 315);
  fs_coll_algo a = FS_ALGO_AUTO;
  fs_coll_proto p = FS_PROTO_N;
  double best;
  argmin(&S128, &prm, &a, &p, &best);
  CHECK_EQ_INT(a, FS_ALGO_TREE);
  CHECK_EQ_INT(p, FS_PROTO_LL);
}

TEST(test_coll_nccl_large_allreduce_many_nodes_is_ring_simple) {
  double n = 1073741824.0; /* 1 GiB */
  fs_coll_params prm = params(FS_COLL_ALLREDUCE, n);
  /* Ring/Simple by hand: latency (8.4 + 222 x max(3.4, 3 x 1.0 net
   * overhead) + 32 x 14.0) x 1.4 (plateau: n / 128 >= 64) = 1695.68 us;
   * bandwidth 50 x 128 / 254 GB/s. */
  double ring_us = (8.4 + 222 * 3.4 + 32 * 14.0) * 1.4 + n / (1000 * 50.0 * 128 / 254);
  CHECK_REL(fs_coll_nccl_time(&S128, &prm, FS_ALGO_RING, FS_PROTO_SIMPLE) * 1e6, ring_us, 1e-12,
            "us");
  /* Tree/Simple: 2 (7 x 28 + 4 x 28) us, 50 x 0.92 x 0.5 GB/s (no
   * correction above 256 MiB): slower. */
  double tree_us = 2 * (7 * 28.0 + 4 * 28.0) + n / (1000 * 50 * 0.92 * 0.5);
  CHECK_REL(fs_coll_nccl_time(&S128, &prm, FS_ALGO_TREE, FS_PROTO_SIMPLE) * 1e6, tree_us, 1e-12,
            "us");
  CHECK(ring_us < tree_us);
  fs_coll_algo a = FS_ALGO_AUTO;
  fs_coll_proto p = FS_PROTO_N;
  double best;
  argmin(&S128, &prm, &a, &p, &best);
  CHECK_EQ_INT(a, FS_ALGO_RING);
  CHECK_EQ_INT(p, FS_PROTO_SIMPLE);
  CHECK_REL(best * 1e6, ring_us, 1e-12, "us");
}

TEST(test_coll_nccl_time_by_hand) {
  /* All-gather of 1 MiB, ring, 2 servers x 4 GPUs: 7 steps, 1 between
   * servers. Simple: 8.4 + 6 x max(3.4, 3.0) + 14.0 = 42.8 us, bus 50 GB/s
   * (the NIC: the slower of NVLink and NIC for > 1 server) x 8/7. */
  fs_coll_params prm = params(FS_COLL_ALLGATHER, 1 << 20);
  CHECK_REL(fs_coll_nccl_time(&S8, &prm, FS_ALGO_RING, FS_PROTO_SIMPLE) * 1e6,
            42.8 + 1048576 / (1000 * 50.0 * 8 / 7), 1e-12, "us");
  /* LL: 6.6 + 6 x max(0.6, 1.0) + 2.7 = 15.3 us; bus min(39.0 llMaxBw at 2
   * nodes, 50 / 4) = 12.5 GB/s. */
  CHECK_REL(fs_coll_nccl_time(&S8, &prm, FS_ALGO_RING, FS_PROTO_LL) * 1e6,
            15.3 + 1048576 / (1000 * 12.5 * 8 / 7), 1e-12, "us");
  /* LL128: 14 + 6 x 1.9 + 4.0 = 29.4 us; bus 50 x 0.92 (4 GPUs a server). */
  CHECK_REL(fs_coll_nccl_time(&S8, &prm, FS_ALGO_RING, FS_PROTO_LL128) * 1e6,
            29.4 + 1048576 / (1000 * 50 * 0.92 * 8 / 7), 1e-12, "us");
  /* One server (NVLink only, 450 GB/s): broadcast is a ring of p steps
   * whose latency NCCL counts once (sameChannels): 8.4 + 3.4 us. */
  fs_coll_nccl_shape one = {4, 1, 1, 3600, 400};
  fs_coll_params bc = params(FS_COLL_BROADCAST, 1 << 20);
  CHECK_REL(fs_coll_nccl_time(&one, &bc, FS_ALGO_RING, FS_PROTO_SIMPLE) * 1e6,
            8.4 + 3.4 + 1048576 / (1000 * 450.0 * 4 / 4), 1e-12, "us");
  /* All-to-all of 1 MiB per rank (fabricsim's point-to-point estimate):
   * 3 peers of 128 KiB over NVLink, 4 over the NIC, all at once; Simple:
   * 8.4 + 14.0 us + max(3 x 131072 / 450e3, 4 x 131072 / 50e3) us. */
  fs_coll_params a2a = params(FS_COLL_ALLTOALL, 1 << 20);
  CHECK_REL(fs_coll_nccl_time(&S8, &a2a, FS_ALGO_DIRECT, FS_PROTO_SIMPLE) * 1e6,
            22.4 + 4 * 131072 / 50e3, 1e-12, "us");
  /* What NCCL does not run has no estimate. */
  CHECK(isnan(fs_coll_nccl_time(&S8, &prm, FS_ALGO_TREE, FS_PROTO_SIMPLE)));
  CHECK(isnan(fs_coll_nccl_time(&S8, &prm, FS_ALGO_DIRECT, FS_PROTO_SIMPLE)));
  CHECK(isnan(fs_coll_nccl_time(&S8, &a2a, FS_ALGO_PAIRWISE, FS_PROTO_SIMPLE)));
  CHECK(isnan(fs_coll_nccl_time(&S8, &prm, FS_ALGO_RD, FS_PROTO_SIMPLE)));
  /* 1 rank: nothing to move. */
  fs_coll_nccl_shape solo = {1, 1, 1, 3600, 400};
  CHECK_EQ_INT(fs_coll_nccl_time(&solo, &prm, FS_ALGO_RING, FS_PROTO_LL) == 0, 1);
}

TEST(test_coll_nccl_shape_of_servers) {
  fs_err err = {0, ""};
  fs_topo *t = NULL;
  fs_server_params sv = fs_server_defaults(8); /* NVLink 3600, PCIe 512 */
  CHECK_OK(fs_topo_star_servers(32, 400, 1000, &sv, &t, &err), &err);
  if (!t) return;
  int32_t hosts[32];
  for (int32_t i = 0; i < 32; i++) hosts[i] = i;
  fs_coll_group g = {32, hosts};
  fs_coll_nccl_shape s;
  CHECK_OK(fs_coll_nccl_shape_of(t, &g, &s, &err), &err);
  CHECK_EQ_INT(s.ranks, 32);
  CHECK_EQ_INT(s.nodes, 4);
  CHECK_EQ_INT(s.nvlink, 1);
  CHECK_REL(s.intra_gbps, 3600, 1e-12, "Gb/s");
  CHECK_REL(s.inter_gbps, 400, 1e-12, "Gb/s"); /* min(PCIe 512, NIC 400) */
  /* One GPU per server (a data-parallel rail group), out of order. */
  int32_t rail[4] = {24, 0, 16, 8};
  fs_coll_group gr = {4, rail};
  CHECK_OK(fs_coll_nccl_shape_of(t, &gr, &s, &err), &err);
  CHECK_EQ_INT(s.nodes, 4);
  int32_t bad[2] = {0, 32};
  fs_coll_group gb = {2, bad};
  CHECK_EQ_INT(fs_coll_nccl_shape_of(t, &gb, &s, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "host 32") != NULL);
  fs_topo_free(t);
  /* Plain hosts: each is its own server, no NVLink. */
  CHECK_OK(fs_topo_star(8, 100, 1000, &t, &err), &err);
  if (!t) return;
  g.p = 8;
  CHECK_OK(fs_coll_nccl_shape_of(t, &g, &s, &err), &err);
  CHECK_EQ_INT(s.nodes, 8);
  CHECK_EQ_INT(s.nvlink, 0);
  CHECK_REL(s.inter_gbps, 100, 1e-12, "Gb/s");
  /* One rank: NCCL's ring/Simple at no cost, whatever the op. */
  g.p = 1;
  fs_coll_params one = params(FS_COLL_ALLREDUCE, 4096);
  fs_coll_algo a = FS_ALGO_AUTO;
  fs_coll_proto p = FS_PROTO_N;
  double est = -1;
  CHECK_OK(fs_coll_nccl_choose(t, &one, &g, &a, &p, &est, &err), &err);
  CHECK_EQ_INT(a, FS_ALGO_RING);
  CHECK_EQ_INT(p, FS_PROTO_SIMPLE);
  CHECK(est == 0);
  fs_topo_free(t);
}

/* The issue: at dp 128 the simulating tuner picked `direct` all-gather and
 * reduce-scatter (128 x 127 flows). The default policy picks the ring. */
TEST(test_coll_nccl_allgather_128_ranks_is_ring) {
  fs_err err = {0, ""};
  fs_topo *t = NULL;
  fs_server_params sv = fs_server_defaults(2);
  CHECK_OK(fs_topo_star_servers(256, 400, 1000, &sv, &t, &err), &err);
  if (!t) return;
  int32_t hosts[128];
  for (int32_t i = 0; i < 128; i++) hosts[i] = 2 * i; /* one GPU per server */
  fs_coll_group g = {128, hosts};
  fs_coll_tuner *tu = NULL;
  CHECK_OK(fs_coll_tuner_new(t, FS_ROUTE_ECMP, 1, &tu, &err), &err);
  if (!tu) return;
  CHECK_EQ_INT(fs_coll_tuner_policy(tu), FS_TUNE_NCCL);
  static const double sizes[] = {4096, 1 << 20, 64 << 20, 1 << 30};
  for (int op = 0; op < 2; op++)
    for (size_t i = 0; i < 4; i++) {
      fs_coll_params prm = params(op ? FS_COLL_REDUCESCATTER : FS_COLL_ALLGATHER, sizes[i]);
      fs_coll_algo a = FS_ALGO_AUTO;
      fs_coll_proto p = FS_PROTO_N;
      int cached = -1;
      CHECK_OK(fs_coll_tuner_choose2(tu, &prm, &g, &a, &p, &cached, &err), &err);
      CHECK_EQ_INT(a, FS_ALGO_RING);
      CHECK_EQ_INT(cached, op + i > 0); /* the group's shape, after the first call */
      /* the same as the tuner-free entry point, with its estimate */
      fs_coll_algo a2 = FS_ALGO_AUTO;
      fs_coll_proto p2 = FS_PROTO_N;
      double est = -1;
      CHECK_OK(fs_coll_nccl_choose(t, &prm, &g, &a2, &p2, &est, &err), &err);
      CHECK_EQ_INT(a2, a);
      CHECK_EQ_INT(p2, p);
      CHECK(est > 0 && isfinite(est));
    }
  /* 1 GiB at one rank per server: LL128 is 0.7 of the wire (ppn < 2),
   * Simple wins. */
  fs_coll_params big = params(FS_COLL_ALLGATHER, 1 << 30);
  fs_coll_algo a;
  fs_coll_proto p;
  CHECK_OK(fs_coll_tuner_choose2(tu, &big, &g, &a, &p, NULL, &err), &err);
  CHECK_EQ_INT(p, FS_PROTO_SIMPLE);
  /* all-to-all is NCCL's grouped point to point: direct; protocol by the
   * P2P LL threshold (16 KiB per peer). */
  fs_coll_params a2a = params(FS_COLL_ALLTOALL, 128 * 16384.0);
  CHECK_OK(fs_coll_nccl_choose(t, &a2a, &g, &a, &p, NULL, &err), &err);
  CHECK_EQ_INT(a, FS_ALGO_DIRECT);
  CHECK_EQ_INT(p, FS_PROTO_LL);
  a2a.bytes *= 2;
  CHECK_OK(fs_coll_nccl_choose(t, &a2a, &g, &a, &p, NULL, &err), &err);
  CHECK_EQ_INT(p, FS_PROTO_SIMPLE);
  /* Bad params fail and leave the outputs alone. */
  fs_coll_params bad = params(FS_COLL_BROADCAST, 1 << 20);
  bad.root = 128;
  a = FS_ALGO_HIER;
  CHECK_EQ_INT(fs_coll_nccl_choose(t, &bad, &g, &a, NULL, NULL, &err), FS_EINVAL);
  CHECK_EQ_INT(a, FS_ALGO_HIER);
  fs_coll_tuner_free(tu);
  fs_topo_free(t);
}

/* FS_TUNE_SIM chooses what `auto` chose before the NCCL model (pinned from
 * the previous build's `fabricsim coll` on star:hosts=8). */
TEST(test_coll_tuner_sim_policy_unchanged) {
  fs_err err = {0, ""};
  fs_topo *t = NULL;
  CHECK_OK(fs_topo_star(8, 100, 1000, &t, &err), &err);
  if (!t) return;
  int32_t hosts[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  fs_coll_group g = {8, hosts};
  fs_coll_tuner *tu = NULL;
  CHECK_OK(fs_coll_tuner_new2(t, FS_ROUTE_ECMP, 1, FS_TUNE_SIM, &tu, &err), &err);
  if (!tu) return;
  static const struct {
    fs_coll_op op;
    double bytes;
    fs_coll_algo want;
  } cases[] = {
      {FS_COLL_ALLREDUCE, 1024, FS_ALGO_RD},         {FS_COLL_ALLREDUCE, 16 << 20, FS_ALGO_RHD},
      {FS_COLL_ALLGATHER, 1024, FS_ALGO_DIRECT},     {FS_COLL_REDUCESCATTER, 1024, FS_ALGO_RHD},
      {FS_COLL_BROADCAST, 1024, FS_ALGO_BINOMIAL},   {FS_COLL_BROADCAST, 16 << 20, FS_ALGO_RING},
      {FS_COLL_ALLTOALL, 16 << 20, FS_ALGO_DIRECT},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    fs_coll_params prm = params(cases[i].op, cases[i].bytes);
    fs_coll_algo a = FS_ALGO_AUTO;
    fs_coll_proto p = FS_PROTO_N;
    CHECK_OK(fs_coll_tuner_choose2(tu, &prm, &g, &a, &p, NULL, &err), &err);
    CHECK_EQ_CTX(a, cases[i].want, fs_coll_op_name(cases[i].op));
    CHECK_EQ_INT(p, FS_PROTO_SIMPLE);
  }
  fs_coll_tuner_free(tu);
  CHECK_EQ_INT(fs_coll_tuner_new2(t, FS_ROUTE_ECMP, 1, FS_TUNE_N, &tu, &err), FS_EINVAL);
  fs_topo_free(t);
  fs_coll_tune_policy pol;
  CHECK_EQ_INT(fs_coll_tune_policy_parse("sim", &pol), 0);
  CHECK_EQ_INT(pol, FS_TUNE_SIM);
  CHECK_EQ_INT(fs_coll_tune_policy_parse("fast", &pol), FS_EINVAL);
  fs_coll_proto pr;
  CHECK_EQ_INT(fs_coll_proto_parse("ll128", &pr), 0);
  CHECK_EQ_INT(pr, FS_PROTO_LL128);
}

TEST(test_cli_coll_tune_option) {
  static char out[8192];
  CHECK_EQ_INT(test_run_cli("coll --op allgather --ranks 8 --topo star:hosts=8 --sizes 1K "
                            "--tune fast",
                            "2>&1", out, sizeof(out)),
               2);
  CHECK(strstr(out, "--tune") != NULL);
  CHECK(strstr(out, "'fast'") != NULL);
  CHECK(strchr(out, '\n') && strchr(out, '\n')[1] == '\0'); /* one line */
  CHECK_EQ_INT(test_run_cli("coll --op allgather --ranks 8 --topo star:hosts=8 --sizes 1K "
                            "--tune sim --format csv",
                            "2>&1", out, sizeof(out)),
               0);
  CHECK(strstr(out, ",direct,") != NULL); /* as before the NCCL model */
  CHECK_EQ_INT(test_run_cli("coll --op allgather --ranks 8 --topo star:hosts=8 --sizes 1K "
                            "--format csv",
                            "2>&1", out, sizeof(out)),
               0);
  CHECK(strstr(out, ",ring,") != NULL);
  CHECK(strstr(out, ",ll,none,-1\n") != NULL); /* proto, then redop and root */
}
