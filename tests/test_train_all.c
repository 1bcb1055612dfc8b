/* Tests of the all-traffic iteration (train.h, comm all): its exact
 * shortcuts against the full simulation (private TP links, rail symmetry),
 * the isolated model where nothing can contend, the ring-attention exchange
 * against its closed form, and EP contending with data-parallel traffic. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim/train.h"
#include "test.h"
#include "train_harness.h"


/* 8-layer GPT, tp x pp x dp (x cp) on a leaf-spine of 4-GPU servers
 * (2 servers per leaf), placement and routing as given. */
static fs_job *leafspine_job(int tp, int pp, int dp, int cp, const char *placement,
                             const char *routing, int leaves, double fabric_gbps) {
  char text[2048];
  snprintf(text, sizeof(text),
           "{\"model\": {\"layers\": 8, \"hidden\": 1024, \"heads\": 16, \"seq_len\": 1024,"
           " \"vocab\": 32000},"
           " \"training\": {\"global_batch\": %d, \"micro_batch\": 1},"
           " \"parallelism\": {\"tp\": %d, \"pp\": %d, \"dp\": %d, \"cp\": %d,"
           " \"sequence_parallel\": true},"
           " \"hardware\": {\"gpu_tflops\": 100, \"hbm_gib\": 80},"
           " \"topology\": {\"type\": \"leafspine\", \"leaves\": %d, \"spines\": 2,"
           " \"hosts_per_leaf\": 8, \"host_gbps\": 100, \"fabric_gbps\": %g,"
           " \"gpus_per_node\": 4},"
           " \"placement\": \"%s\", \"routing\": {\"mode\": \"%s\"}}",
           4 * dp * pp, tp, pp, dp, cp, leaves, fabric_gbps, placement, routing);
  return test_parse_job(text);
}

/* TP inside a server on links nothing else uses: the shortcut (tasks of
 * the time alone on those links) equals lowering every TP collective. */
TEST(test_train_private_tp_links_equal_flows) {
  fs_job *job = leafspine_job(4, 2, 2, 1, "packed", "ecmp", 2, 100);
  fs_train_result a, b;
  fs_train_opts o = {.no_compare = 1};
  CHECK_EQ_INT(test_train_run(job, &o, &a), 0);
  o.tp_flows = 1;
  CHECK_EQ_INT(test_train_run(job, &o, &b), 0);
  CHECK(a.tp_private && !b.tp_private);
  CHECK(a.flows < b.flows); /* the shortcut simulates fewer flows */
  CHECK_EQ_INT(a.flows_represented, b.flows_represented);
  CHECK_REL(a.iter_s, b.iter_s, 1e-9, "s");
  CHECK_REL(a.kind[FS_PAR_TP].exposed_s, b.kind[FS_PAR_TP].exposed_s, 1e-9, "s");
  fs_job_free(job);
}

/* tp 4 x pp 2 x dp 4 on a rail-optimized fabric of 8 four-GPU servers in
 * 2 scalable units (spines per rail switch as given), rail-aligned;
 * sequence parallelism as given, and the algorithm of one kind (\"dp\" or
 * \"tp\"). */
static fs_job *railopt_job_algo(const char *routing, int spines, int sp, const char *kind,
                                const char *algo) {
  char text[2048];
  snprintf(text, sizeof(text),
           "{\"model\": {\"layers\": 8, \"hidden\": 1024, \"heads\": 16, \"seq_len\": 1024,"
           " \"vocab\": 32000},"
           " \"training\": {\"global_batch\": 32, \"micro_batch\": 1},"
           " \"parallelism\": {\"tp\": 4, \"pp\": 2, \"dp\": 4, \"zero\": 0,"
           " \"sequence_parallel\": %s, \"algorithms\": {\"%s\": \"%s\"}},"
           " \"hardware\": {\"gpu_tflops\": 100, \"hbm_gib\": 80},"
           " \"topology\": {\"type\": \"railopt\", \"servers\": 8, \"servers_per_su\": 4,"
           " \"spines\": %d, \"host_gbps\": 100, \"gpus_per_node\": 4},"
           " \"placement\": \"rail_aligned\", \"routing\": {\"mode\": \"%s\"}}",
           sp ? "true" : "false", kind, algo, spines, routing);
  return test_parse_job(text);
}
static fs_job *railopt_job(const char *routing, int spines) {
  return railopt_job_algo(routing, spines, 1, "dp", "auto");
}

/* Rail rotation and replica shift: simulating TP rank 0 of data-parallel
 * rank 0 on quotient routes (the gradient rings from their shift-invariant
 * templates) gives the full simulation's times (spraying on a rail-aligned
 * fabric). Under a transport model too: each simulated flow is timed by
 * its expanded route (hops, round trip, store and forward) and the queues
 * of a link orbit are kept at its representative (each flow's share times
 * orbit / |O|, spread over a sprayed level as its packets are): fluid
 * (kind 0), tcp with new connections (handshakes and slow-start rounds
 * waiting behind the switch queues), with persistent ones, rdma, tcp
 * with the source fair queue, and tcp with a shared-link efficiency (a
 * representative link counts the flows of each link of its orbit). */
TEST(test_train_rail_symmetry_equals_expanded) {
  for (int over = 0; over < 2; over++)
    for (int kind = 0; kind < 6; kind++) {
      /* non-blocking (4 spines), then 4:1 (1 spine per rail switch) */
      fs_job *job = railopt_job("spray", over ? 1 : 4);
      if (kind) {
        fs_transport_defaults(kind == 3 ? FS_TRANSPORT_RDMA : FS_TRANSPORT_TCP, &job->transport);
        if (kind != 3) job->transport.persistent = kind == 2; /* rdma's queue pairs are */
        job->transport.source_fq = kind == 4;
        if (kind == 5) job->transport.efficiency = 0.9;
      }
      fs_train_result a;
      fs_train_opts o = {.no_compare = 1};
      /* rail rotation (4 TP ranks) x replica shift (4 servers of a unit) */
      CHECK_EQ_INT(test_train_symmetry_exact(job, &o, 16, &a, NULL), 0);
      CHECK(strstr(a.symmetry, "rail rotation") && strstr(a.symmetry, "replica shift"));
      fs_job_free(job);
    }
  /* ECMP hashing is not equivariant: refused, and said so */
  fs_job *job = railopt_job("ecmp", 4);
  fs_train_result r;
  fs_train_opts o = {.no_compare = 1};
  CHECK_EQ_INT(test_train_run(job, &o, &r), 0);
  CHECK(strstr(r.symmetry, "refused") != NULL);
  fs_job_free(job);
}

/* TP lowered as flows: the rail rotation maps each TP collective onto
 * itself (a shift of one TP rank), so only rank 0's flows of it are kept;
 * times as in the full simulation. A TP algorithm that is not invariant
 * under that shift (recursive halving-doubling all-reduce, without
 * sequence parallelism: it pairs r with r xor 2^k) is refused: rebuilt
 * with the replica shift alone, said so, still exact. */
TEST(test_train_rail_symmetry_with_tp_flows) {
  static const char *const algos[] = {"ring", "rhd"};
  for (int i = 0; i < 2; i++) {
    fs_job *job = railopt_job_algo("spray", 4, !i, "tp", algos[i]);
    if (!job) continue;
    fs_train_result a, b;
    fs_train_opts o = {.no_compare = 1, .tp_flows = 1};
    CHECK_EQ_INT(test_train_symmetry_exact(job, &o, i ? 4 : 16, &a, &b), 0);
    CHECK(!a.tp_private && !b.tp_private);
    CHECK(strstr(a.symmetry, "replica shift") != NULL);
    CHECK(strstr(a.symmetry, i ? "rail rotation refused" : "rail rotation (") != NULL);
    fs_job_free(job);
  }
}

/* Without sequence parallelism a pipeline message is scattered over the
 * t ranks and all-gathered over NVLink by the receivers before their op.
 * tp 2 x pp 2, one micro-batch, each stage a 2-GPU server: stage 0 waits
 * for two transfers and two such all-gathers (before stage 1's forward and
 * before its own backward), so doubling the NVLink rate lowers its exposed
 * PP time by two all-gathers' bandwidth terms, 2 x (t - 1)/t b s h D / r -
 * the same at 2r = b s h D / (2 r); with SP there is no all-gather and the
 * NVLink rate leaves the exposed PP time as it is. */
static fs_job *gather_job(int sp, double nvlink_gbps) {
  char text[2048];
  snprintf(text, sizeof(text),
           "{\"model\": {\"layers\": 4, \"hidden\": 1024, \"heads\": 16, \"seq_len\": 1024,"
           " \"vocab\": 32000},"
           " \"training\": {\"global_batch\": 1, \"micro_batch\": 1},"
           " \"parallelism\": {\"tp\": 2, \"pp\": 2, \"dp\": 1, \"sequence_parallel\": %s},"
           " \"hardware\": {\"gpu_tflops\": 100, \"hbm_gib\": 80, \"nvlink_gbps\": %g},"
           " \"topology\": {\"type\": \"leafspine\", \"leaves\": 1, \"spines\": 1,"
           " \"hosts_per_leaf\": 4, \"host_gbps\": 100, \"fabric_gbps\": 100,"
           " \"gpus_per_node\": 2, \"nvlink_gbps\": %g}, \"placement\": \"packed\"}",
           sp ? "true" : "false", nvlink_gbps, nvlink_gbps);
  return test_parse_job(text);
}

TEST(test_train_pp_scatter_gather_all_gather) {
  for (int sp = 0; sp < 2; sp++) {
    fs_job *slow = gather_job(sp, 1000), *fast = gather_job(sp, 2000);
    if (!slow || !fast) {
      fs_job_free(slow);
      fs_job_free(fast);
      continue;
    }
    fs_train_result a, b;
    fs_train_opts o = {.no_compare = 1};
    CHECK_EQ_INT(test_train_run(slow, &o, &a), 0);
    CHECK_EQ_INT(test_train_run(fast, &o, &b), 0);
    double bytes = 1.0 * 1024 * 1024 * 2; /* b s h D, fp16 */
    double want = sp ? 0 : bytes / (2 * 1000e9 / 8);
    CHECK_EQ_INT(a.device_stage, 0);
    double got = a.kind[FS_PAR_PP].exposed_s - b.kind[FS_PAR_PP].exposed_s;
    if (sp)
      CHECK(fabs(got) < 1e-12);
    else
      CHECK_REL(got, want, 1e-6, "s");
    fs_job_free(slow);
    fs_job_free(fast);
  }
}

/* Where no other traffic can share TP's links and there is no EP, CP or
 * ZeRO-3, the all-traffic iteration is the isolated one exactly. */
/* Recursive halving-doubling pairs rank r with r xor 2^k: not invariant
 * under a shift of the data-parallel ranks. The template check refuses
 * the replica shift, the job is rebuilt with the rail rotation alone, the
 * report says so, and the times are still the full simulation's. */
TEST(test_train_replica_shift_refused_for_rhd) {
  fs_job *job = railopt_job_algo("spray", 4, 1, "dp", "rhd");
  fs_train_result a;
  fs_train_opts o = {.no_compare = 1};
  CHECK_EQ_INT(test_train_symmetry_exact(job, &o, 4, &a, NULL), 0);
  CHECK(strstr(a.symmetry, "replica shift refused") != NULL);
  CHECK(strstr(a.symmetry, "rail rotation") != NULL);
  fs_job_free(job);
}

TEST(test_train_all_equals_isolated_without_shared_links) {
  fs_job *job = leafspine_job(4, 2, 2, 1, "packed", "ecmp", 2, 100);
  fs_train_result a;
  fs_train_opts o = {0};
  CHECK_EQ_INT(test_train_run(job, &o, &a), 0);
  CHECK(a.isolated_iter_s > 0);
  CHECK_REL(a.iter_s, a.isolated_iter_s, 1e-12, "s");
  CHECK(a.congestion_aware & (1u << FS_TRAIN_SP));
  CHECK(a.congestion_aware & (1u << FS_TRAIN_PP));
  CHECK(a.congestion_aware & (1u << FS_TRAIN_DP));
  fs_job_free(job);
}

/* Ring attention on 2 plain hosts of a star (tp 1, cp 2, pp 1, dp 1):
 * per layer and pass cp - 1 = 1 step, both ranks sending their K/V block
 * to the other at once (full duplex, no contention): a step takes
 * bytes / link rate + the 2-link path latency. The exposed CP time is
 * micro-batches x layers x (forward step + backward step of twice the
 * bytes). The gradient all-reduce over the cp group runs after the
 * backward (overlap_dp false), so no bucket shares the links with the
 * last backward's ring steps. */
TEST(test_train_cp_ring_closed_form) {
  const char *text =
      "{\"model\": {\"layers\": 4, \"hidden\": 1024, \"heads\": 16, \"kv_heads\": 4,"
      " \"seq_len\": 2048, \"vocab\": 32000},"
      " \"training\": {\"global_batch\": 3, \"micro_batch\": 1},"
      " \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 1, \"cp\": 2, \"overlap_dp\": false},"
      " \"hardware\": {\"gpu_tflops\": 100, \"hbm_gib\": 80, \"gpus_per_node\": 1,"
      " \"nvlink_gbps\": 1000},"
      " \"topology\": {\"type\": \"star\", \"hosts\": 2, \"gbps\": 100, \"latency_ns\": 700}}";
  fs_job *job = test_parse_job(text);
  double fwd = 2.0 * 1 * (2048 / 2) * (1024 * 4 / 16) * 2; /* K and V: 2 b (s/cp) h_kv D / tp */
  CHECK_REL(fs_work_cp_step_bytes(job, FS_PASS_FWD), fwd, 1e-12, "bytes");
  double step_f = fwd * 8 / 100e9 + 2 * 700e-9, step_b = 2 * fwd * 8 / 100e9 + 2 * 700e-9;
  double want = 3.0 * 4 * (step_f + step_b);
  fs_train_opts o = {0};
  fs_train_result a;
  CHECK_EQ_INT(test_train_run(job, &o, &a), 0);
  CHECK_REL(a.kind[FS_PAR_CP].exposed_s, want, 1e-9, "s");
  CHECK_REL(a.isolated_iter_s, a.iter_s, 1e-9, "s"); /* nothing else to contend with */
  CHECK(a.congestion_aware & (1u << FS_TRAIN_CP));
  CHECK_EQ_INT(a.kind[FS_PAR_CP].colls, 3 * 4 * 2);
  fs_job_free(job);
}

/* An MoE job (8 experts, EP 8 of DP 16, all layers MoE) on a 2:1 leaf-spine
 * of 2-GPU servers. */
static const char *const MOE_JOB =
    "{\"model\": {\"layers\": 4, \"hidden\": 1024, \"heads\": 16, \"seq_len\": 1024,"
    " \"vocab\": 32000, \"experts\": 8, \"top_k\": 2},"
    " \"training\": {\"global_batch\": 16, \"micro_batch\": 1},"
    " \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 16, \"ep\": 8},"
    " \"hardware\": {\"gpu_tflops\": 100, \"hbm_gib\": 80},"
    " \"topology\": {\"type\": \"leafspine\", \"leaves\": 4, \"spines\": 1,"
    " \"hosts_per_leaf\": 4, \"host_gbps\": 100, \"fabric_gbps\": 200, \"gpus_per_node\": 2},"
    " \"placement\": \"packed\"}";

/* MoE with EP across servers on a 2:1 leaf-spine under ECMP: the EP
 * all-to-alls are flows beside the DP reductions, so the iteration is no
 * faster than with EP timed alone, and EP is reported congestion-aware. */
TEST(test_train_ep_contends_with_dp) {
  fs_job *job = test_parse_job(MOE_JOB);
  fs_train_opts o = {0};
  fs_train_result a;
  CHECK_EQ_INT(test_train_run(job, &o, &a), 0);
  CHECK(a.congestion_aware & (1u << FS_TRAIN_EP));
  CHECK(a.kind[FS_PAR_EP].exposed_s > 0);
  CHECK(a.iter_s >= a.isolated_iter_s * (1 - 1e-12));
  fs_job_free(job);
}

TEST(test_train_comm_bad_options_exit_2) {
  static char out[4096];
  CHECK_EQ_INT(test_run_cli("train examples/gpt-13b.json --comm fast", "2>&1", out, sizeof(out)),
               2);
  CHECK(strstr(out, "--comm") && strstr(out, "fast"));
  CHECK_EQ_INT(test_run_cli("train examples/gpt-13b.json --tune best", "2>&1", out, sizeof(out)),
               2);
  CHECK(strstr(out, "--tune") && strstr(out, "best"));
}

/* ZeRO++ (Wang et al., ICLR 2024) on ZeRO-3: 8 data-parallel ranks, tp 1,
 * on 2 servers of 4 GPUs (NVLink 2400 Gb/s, NICs 100 Gb/s), packed. qwZ
 * gathers the weights in int8 (half the fp16 bytes), hpZ gathers the
 * backward's inside each server (4 ranks) from a secondary copy (a quarter
 * of the weights more per GPU), qgZ reduce-scatters the gradients in int4
 * (a quarter of the fp16 bytes): the analytic volumes, the memory, and the
 * simulated iteration (faster with each, in both --comm modes). */
static fs_job *zpp_job(const char *zeropp) {
  char text[2048];
  snprintf(text, sizeof(text),
           "{\"model\": {\"layers\": 4, \"hidden\": 2048, \"heads\": 16, \"seq_len\": 1024,"
           " \"vocab\": 32000},"
           " \"training\": {\"global_batch\": 16, \"micro_batch\": 1},"
           " \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 8, \"zero\": 3%s},"
           " \"hardware\": {\"gpu_tflops\": 100, \"hbm_gib\": 80},"
           " \"topology\": {\"type\": \"railopt\", \"servers\": 2, \"spines\": 1,"
           " \"host_gbps\": 100, \"gpus_per_node\": 4, \"nvlink_gbps\": 2400},"
           " \"placement\": \"packed\", \"routing\": {\"mode\": \"spray\"}}",
           zeropp);
  return test_parse_job(text);
}

TEST(test_train_zeropp) {
  const char *variants[] = {"", ", \"zeropp\": {\"qwz\": true}", ", \"zeropp\": {\"hpz\": true}",
                            ", \"zeropp\": {\"qgz\": true}"};
  double iter[2][4], wire[4], weights[4];
  for (int v = 0; v < 4; v++) {
    fs_job *job = zpp_job(variants[v]);
    if (!job) return;
    if (v == 2) CHECK_EQ_INT(fs_work_hpz_group(job), 4);
    fs_work_comm cm;
    fs_work_comm_stage(job, 0, &cm);
    wire[v] = cm.kind[FS_PAR_DP].wire_bytes;
    fs_work_mem mem;
    fs_work_memory(job, 0, &mem);
    weights[v] = mem.weight_bytes;
    for (int comm = 0; comm < 2; comm++) {
      fs_train_opts o = {.no_compare = 1, .comm = comm ? FS_COMM_ISOLATED : FS_COMM_ALL};
      fs_train_result a;
      CHECK_EQ_INT(test_train_run(job, &o, &a), 0);
      iter[comm][v] = a.iter_s;
    }
    fs_job_free(job);
  }
  /* per micro-batch: forward gather g, backward gather g, reduce-scatter g
   * (no recomputation); qwZ halves the first two, hpZ takes the backward's
   * off the fabric, qgZ quarters the third */
  CHECK_REL(wire[1], wire[0] * (0.5 + 0.5 + 1) / 3, 1e-12, "B");
  CHECK_REL(wire[2], wire[0] * 2 / 3, 1e-12, "B");
  CHECK_REL(wire[3], wire[0] * (1 + 1 + 0.25) / 3, 1e-12, "B");
  /* hpZ's secondary copy: the weights over 4 ranks again, besides 1/8 */
  CHECK_REL(weights[2], weights[0] * (1 + 8.0 / 4), 1e-12, "B");
  CHECK_REL(weights[1], weights[0], 0, "B");
  for (int comm = 0; comm < 2; comm++)
    for (int v = 1; v < 4; v++) CHECK(iter[comm][v] < iter[comm][0]);
  /* ZeRO++ is ZeRO-3's */
  char text[2048];
  snprintf(text, sizeof(text),
           "{\"model\": {\"layers\": 4, \"hidden\": 2048, \"heads\": 16, \"seq_len\": 1024,"
           " \"vocab\": 32000}, \"training\": {\"global_batch\": 16, \"micro_batch\": 1},"
           " \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 8, \"zero\": 1,"
           " \"zeropp\": {\"qgz\": true}}, \"hardware\": {\"gpu_tflops\": 100, \"hbm_gib\": 80,"
           " \"gpus_per_node\": 4, \"nvlink_gbps\": 2400},"
           " \"topology\": {\"type\": \"star\", \"hosts\": 8, \"gbps\": 100}}");
  fs_err err = {0, ""};
  fs_job *bad = NULL;
  CHECK_EQ_INT(fs_job_parse(text, strlen(text), "job.json", &bad, &err), FS_EINVAL);
  CHECK(strcmp(err.msg, "job.json: $.parallelism.zeropp: ZeRO++ applies to ZeRO stage 3; zero is "
                        "1") == 0);
}

/* Parameter servers for the gradients (algorithms.dp "ps"): 8 data-parallel
 * ranks on a star push their gradients to S servers among them and pull the
 * sums back. The servers' links carry the incast: with S = 2 each server
 * link carries 7 shards of n / 2 each way, 4x the bytes of S = 8 (7 of
 * n / 8), so the gradient exchange takes longer; both are refused beside
 * ZeRO 1 (no reduce-scatter) and ps_servers is refused without "ps". */
TEST(test_train_parameter_servers) {
  double busy[2];
  const int servers[2] = {8, 2};
  const char *fmt =
      "{\"model\": {\"layers\": 2, \"hidden\": 1024, \"heads\": 16, \"seq_len\": 2048,"
      " \"vocab\": 32000},"
      " \"training\": {\"global_batch\": 8, \"micro_batch\": 1},"
      " \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 8, \"overlap_dp\": false%s,"
      " \"algorithms\": {\"dp\": \"%s\"}, \"ps_servers\": %d},"
      " \"hardware\": {\"gpu_tflops\": 10, \"hbm_gib\": 80, \"gpus_per_node\": 1,"
      " \"nvlink_gbps\": 1000},"
      " \"topology\": {\"type\": \"star\", \"hosts\": 8, \"gbps\": 100,"
      " \"latency_ns\": 700}}";
  for (int i = 0; i < 2; i++) {
    char text[1024];
    snprintf(text, sizeof(text), fmt, "", "ps", servers[i]);
    fs_job *job = test_parse_job(text);
    if (!job) return;
    fs_train_opts o = {.no_compare = 1};
    fs_train_result a;
    CHECK_EQ_INT(test_train_run(job, &o, &a), 0);
    CHECK(a.kind[FS_PAR_DP].colls > 0);
    busy[i] = a.kind[FS_PAR_DP].exposed_s;
    fs_job_free(job);
  }
  /* 4x the bytes through each server link, the same latencies */
  CHECK(busy[1] > 3.5 * busy[0] && busy[1] < 4.5 * busy[0]);
  char text[1024];
  fs_err err = {0, ""};
  fs_job *bad = NULL;
  snprintf(text, sizeof(text), fmt, ", \"zero\": 1", "ps", 2);
  CHECK_EQ_INT(fs_job_parse(text, strlen(text), "job.json", &bad, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "$.parallelism.algorithms.dp: does not implement reducescatter") != NULL);
  snprintf(text, sizeof(text), fmt, "", "ring", 2);
  CHECK_EQ_INT(fs_job_parse(text, strlen(text), "job.json", &bad, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "$.parallelism.ps_servers: applies to parameter servers") != NULL);
}

/* 2 data-parallel ranks of a star, one micro-batch, 4 gradient buckets
 * (the overlap tests below). */
static fs_job *bucket_job_pg(int recompute, int zero, int overlap, int param_gather);

static fs_job *bucket_job(int recompute, int zero, int overlap) {
  return bucket_job_pg(recompute, zero, overlap, 0);
}

static fs_job *bucket_job_pg(int recompute, int zero, int overlap, int param_gather) {
  char text[1024];
  snprintf(text, sizeof(text),
           "{\"model\": {\"layers\": 2, \"hidden\": 1024, \"heads\": 16, \"seq_len\": 2048,"
           " \"vocab\": 32000},"
           " \"training\": {\"global_batch\": 2, \"micro_batch\": 1},"
           " \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 2, \"recompute\": %s, \"zero\": %d,"
           " \"overlap_dp\": %s, \"grad_bucket_bytes\": 30000000%s},"
           " \"hardware\": {\"gpu_tflops\": 10, \"hbm_gib\": 80, \"gpus_per_node\": 1,"
           " \"nvlink_gbps\": 1000},"
           " \"topology\": {\"type\": \"star\", \"hosts\": 2, \"gbps\": 100,"
           " \"latency_ns\": 700}}",
           recompute ? "true" : "false", zero, overlap ? "true" : "false",
           param_gather ? ", \"overlap_param_gather\": true" : "");
  return test_parse_job(text);
}

/* The weights' all-gathers under the next iteration's forward
 * (overlap_param_gather, Megatron-Core's --overlap-param-gather): the job
 * above with ZeRO 1 and overlapped reduce-scatters exposes one
 * reduce-scatter and four all-gathers after its compute C: C + 5 x. With
 * the all-gathers overlapped, two iterations run (the second reported):
 * it starts when the first's compute and last reduce-scatter are done, its
 * forward waits for the first bucket's all-gather (x), the op after it for
 * all four (done under the forward, which is longer than 3 x), and it ends
 * with its own last reduce-scatter: C + 2 x. */
TEST(test_train_overlap_param_gather) {
  fs_job *base = bucket_job_pg(0, 1, 1, 0), *pg = bucket_job_pg(0, 1, 1, 1);
  if (!base || !pg) return;
  fs_train_opts o = {.no_compare = 1};
  fs_train_result a, b;
  CHECK_EQ_INT(test_train_run(base, &o, &a), 0);
  CHECK_EQ_INT(test_train_run(pg, &o, &b), 0);
  CHECK_EQ_INT(b.iterations, 2);
  double x = a.kind[FS_PAR_DP].exposed_s / 5;
  CHECK(x > 0 && 3 * x < a.compute_s / 3);
  CHECK_REL(b.iter_s, a.iter_s - 3 * x, 1e-9, "s");
  fs_job_free(base);
  fs_job_free(pg);
  /* refused without the distributed optimizer */
  char text[512];
  fs_err err = {0, ""};
  fs_job *bad = NULL;
  snprintf(text, sizeof(text),
           "{\"model\": {\"layers\": 2, \"hidden\": 1024, \"heads\": 16, \"seq_len\": 2048,"
           " \"vocab\": 32000}, \"training\": {\"global_batch\": 2},"
           " \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 2, \"overlap_param_gather\": true},"
           " \"hardware\": {\"gpu_tflops\": 10, \"hbm_gib\": 80, \"gpus_per_node\": 1,"
           " \"nvlink_gbps\": 1000}, \"topology\": {\"type\": \"star\", \"hosts\": 2}}");
  CHECK_EQ_INT(fs_job_parse(text, strlen(text), "job.json", &bad, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "$.parallelism.overlap_param_gather: overlaps the distributed optimizer's "
                        "all-gathers: needs zero 1") != NULL);
}

/* The distributed optimizer's reduce-scatter buckets overlap the backward
 * (overlap_dp, ZeRO 1; Megatron-Core's --overlap-grad-reduce): the job of
 * the test below with zero 1. Without overlap the 4 buckets run
 * reduce-scatter then all-gather back to back after the backward:
 * 4 (rs + ag). With it, reduce-scatters 0-2 finish under the backward, the
 * last one after it, then the 4 all-gathers of the updated weights after
 * the optimizer step: rs + 4 ag. On 2 ranks a reduce-scatter and an
 * all-gather of the same bytes both send half of them once: rs = ag, so
 * the exposed time is 5/8 of the exposure without overlap. */
TEST(test_train_zero1_reduce_scatter_overlaps_backward) {
  double exposed[2];
  for (int ov = 0; ov < 2; ov++) {
    fs_job *job = bucket_job(0, 1, ov);
    fs_train_opts o = {.no_compare = 1};
    fs_train_result a;
    CHECK_EQ_INT(test_train_run(job, &o, &a), 0);
    CHECK_EQ_INT(a.kind[FS_PAR_DP].colls, 8);
    CHECK(a.kind[FS_PAR_DP].busy_s / 8 < a.compute_s / 8);
    exposed[ov] = a.kind[FS_PAR_DP].exposed_s;
    fs_job_free(job);
  }
  CHECK(exposed[0] > 0);
  CHECK_REL(exposed[1], exposed[0] * 5 / 8, 1e-9, "s");
}

/* Gradient buckets overlap the backward (overlap_dp, ZeRO 0): 2 ranks of a
 * star, one micro-batch, 4 equal buckets whose all-reduce x is far shorter
 * than a quarter of the backward B. Bucket b is ready (b + 1) B / 4 into it,
 * so buckets 0-2 finish under it and only the last, started at its end on
 * an idle network, is exposed: a quarter of the exposed time without
 * overlap (4 x back to back after the backward). With recomputation the
 * buckets wait for the recomputed forward first; the result is the same. */
TEST(test_train_dp_buckets_overlap_backward) {
  for (int rec = 0; rec < 2; rec++) {
    double exposed[2], iter[2];
    for (int ov = 0; ov < 2; ov++) {
      fs_job *job = bucket_job(rec, 0, ov);
      fs_train_opts o = {.no_compare = 1};
      fs_train_result a;
      CHECK_EQ_INT(test_train_run(job, &o, &a), 0);
      CHECK_EQ_INT(a.kind[FS_PAR_DP].colls, 4);
      /* x is a quarter of the serial busy time; it must be short */
      CHECK(a.kind[FS_PAR_DP].busy_s / 4 < a.compute_s / 8);
      exposed[ov] = a.kind[FS_PAR_DP].exposed_s;
      iter[ov] = a.iter_s;
      fs_job_free(job);
    }
    CHECK(exposed[0] > 0);
    CHECK_REL(exposed[1], exposed[0] / 4, 1e-9, "s");
    CHECK_REL(iter[0] - iter[1], 3 * exposed[0] / 4, 1e-9, "s");
  }
}

/* The report's and the trace's link utilisation from the symmetric run:
 * every link reads its orbit representative's bytes and busy time, and
 * every link bin too, as the expanded run measures them (to 1e-9), for
 * the fluid model and under tcp; the trace's link-group counters sum the
 * representatives' loads times their orbits' sizes
 * (fs_sim_link_multiplicity), equal to the expanded flows' sums. */
TEST(test_train_symmetric_link_stats_expand) {
  for (int kind = 0; kind < 2; kind++) {
    fs_job *job = railopt_job("spray", 1);
    if (!job) return;
    if (kind) fs_transport_defaults(FS_TRANSPORT_TCP, &job->transport);
    fs_sim_opts so = {0};
    so.link_bins = 64;
    fs_train *tr[2] = {NULL, NULL};
    fs_train_result r[2];
    fs_err err = {0, ""};
    for (int full = 0; full < 2; full++) { /* (the trace reads every flow: keep_flows) */
      fs_train_opts o = {.no_compare = 1, .no_symmetry = full, .sim = &so, .keep_flows = 1};
      CHECK_OK(fs_train_new(job, &o, &tr[full], &err), &err);
      if (tr[full]) CHECK_OK(fs_train_run(tr[full], &r[full], &err), &err);
    }
    if (tr[0] && tr[1]) {
      CHECK(r[0].flows * 16 == r[1].flows);
      const fs_sim *a = fs_train_sim(tr[0]), *b = fs_train_sim(tr[1]);
      const fs_topo *t = fs_sim_topo(a);
      const fs_sim_link_stats *la = fs_sim_links(a), *lb = fs_sim_links(b);
      double total = 0, counted = 0, full_sum = 0;
      int loaded = 0;
      for (int32_t l = 0; l < t->n_links; l++) {
        CHECK(fabs(la[l].bytes - lb[l].bytes) <= 1e-9 * (1 + lb[l].bytes));
        CHECK(fabs(la[l].busy_s - lb[l].busy_s) <= 1e-9 * (1 + lb[l].busy_s));
        loaded += lb[l].bytes > 0;
        total += lb[l].bytes;
      }
      CHECK(loaded > 16);
      fs_sim_link_bins ba, bb;
      CHECK_EQ_INT(fs_sim_get_link_bins(a, &ba), 0);
      CHECK_EQ_INT(fs_sim_get_link_bins(b, &bb), 0);
      CHECK_EQ_INT(ba.n_bins, bb.n_bins);
      for (int32_t k = 0; k < ba.n_bins && ba.n_bins == bb.n_bins; k++)
        for (int32_t l = 0; l < t->n_links; l++) {
          double x = ba.bytes[(size_t)k * ba.stride + l], y = bb.bytes[(size_t)k * bb.stride + l];
          CHECK(fabs(x - y) <= 1e-9 * (1 + y));
        }
      /* the flows' loads, weighted by multiplicity, sum to every link's */
      for (int run = 0; run < 2; run++) {
        const fs_sim *s = run ? b : a;
        double sum = 0;
        for (int32_t it = 0; it < fs_sim_n_items(s); it++) {
          if (fs_sim_item_kind(s, it) != FS_ITEM_FLOW) continue;
          const int32_t *links;
          const double *w;
          int32_t nl;
          fs_sim_flow_route(s, it, &links, &w, &nl);
          for (int32_t j = 0; j < nl; j++)
            sum += fs_sim_flow_bytes(s, it) * w[j] * fs_sim_link_multiplicity(s, links[j]);
        }
        if (run) full_sum = sum;
        else counted = sum;
      }
      CHECK_REL(counted, full_sum, 1e-9, "B");
      if (!kind) CHECK_REL(full_sum, total, 1e-9, "B");
    }
    fs_train_free(tr[0]);
    fs_train_free(tr[1]);
    fs_job_free(job);
  }
}

/* opts.max_memory_bytes: the expert all-to-alls' flows, kept as flows
 * (keep_flows), are a lower bound of what the iteration lowers, so a
 * budget above every flow's cost never refuses, and one below the
 * all-to-alls' refuses before building, naming the estimate and --comm
 * isolated. Lowered lazily (the default) the same budget runs. */
TEST(test_train_refuses_what_cannot_fit) {
  fs_job *job = test_parse_job(MOE_JOB);
  if (!job) return;
  fs_train_opts o = {.no_compare = 1, .keep_flows = 1};
  fs_train_result a;
  CHECK_EQ_INT(test_train_run(job, &o, &a), 0);
  o.max_memory_bytes = (double)a.flows * FS_SIM_FLOW_BYTES * 1.001;
  fs_train_result b;
  CHECK_EQ_INT(test_train_run(job, &o, &b), 0);
  CHECK_REL(b.iter_s, a.iter_s, 0, "s");
  /* 4 layers, all MoE: 1 micro-batch (16 sequences over 16 replicas) x
   * (forward + backward) x 4 layers x 2 all-to-alls of 8 x 7 flows, in each
   * of the 2 EP groups: 1,792 */
  o.max_memory_bytes = 1792 * FS_SIM_FLOW_BYTES * 0.999;
  fs_train *tr = NULL;
  fs_err err = {0, ""};
  CHECK_EQ_INT(fs_train_new(job, &o, &tr, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "lowers at least 1792 flows for its expert all-to-alls") != NULL);
  CHECK(strstr(err.msg, "--comm isolated") != NULL);
  CHECK(a.flows > 1792);
  fs_train_free(tr);
  o.max_memory_bytes = 1792 * FS_SIM_FLOW_BYTES * 1.001;
  CHECK_EQ_INT(test_train_run(job, &o, &b), 0);
  o.max_memory_bytes = 1792 * FS_SIM_FLOW_BYTES * 0.999;
  o.keep_flows = 0;
  CHECK_EQ_INT(test_train_run(job, &o, &b), 0);
  CHECK_REL(b.iter_s, a.iter_s, 0, "s");
  fs_job_free(job);
}
