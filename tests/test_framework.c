/* Tests of the framework presets (compute.h; docs/model-compute.md,
 * "Framework presets"): the GEMM tile overhead against its closed form, the
 * memory-bound kernels' HBM share beside the GEMMs' own, the kernel count
 * of a layer and its launch gaps by hand, the presets' defaults and
 * overrides, and bad framework sections exiting 2 with the JSON path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim/compute.h"
#include "fabricsim/train.h"
#include "fabricsim/work.h"
#include "compute_harness.h"
#include "test.h"
#include "train_harness.h"

TEST(test_framework_gemm_tile_overhead) {
  fs_hardware hw = toy_hw();
  fs_gemm_time g0, g;
  /* 10 x 10 tiles of 256 x 128 on 10 SMs: 10 full waves. A tile's fixed
   * cost of k0 steps makes each wave (k + k0) / k as long. */
  fs_compute_gemm(&hw, 2560, 1280, 1024, 1, 2, 2, &g0);
  hw.gemm_k_overhead = 256;
  fs_compute_gemm(&hw, 2560, 1280, 1024, 1, 2, 2, &g);
  double flops = 2.0 * 2560 * 1280 * 1024;
  CHECK_REL(g0.compute_s, flops / 50e12, 1e-12, "s");
  CHECK_REL(g.compute_s, flops / 50e12 * (1024.0 + 256) / 1024, 1e-12, "s");
  CHECK_REL(g.quant_eff, 1024.0 / (1024 + 256), 1e-12, "");
  /* The overhead weighs on a short k more: k = 64 takes (64 + 256) / 64. */
  fs_compute_gemm(&hw, 2560, 1280, 64, 1, 2, 2, &g);
  CHECK_REL(g.compute_s, 2.0 * 2560 * 1280 * 64 / 50e12 * 5, 1e-12, "s");
}

TEST(test_framework_kernel_hbm_share) {
  fs_hardware hw = toy_hw();
  fs_gemm_time g;
  hw.kernel_hbm_eff = 0.5;
  /* Memory-bound kernels at half the bandwidth; a GEMM's operands still
   * stream at hbm_eff (1): the memory-bound shape of test_compute. */
  CHECK_REL(fs_compute_mem_s(&hw, 1e9), 1e9 / 500e9, 1e-15, "s");
  fs_compute_gemm(&hw, 4096, 4096, 16, 1, 2, 2, &g);
  double bytes = 4096.0 * 16 * 2 * 2 + 4096.0 * 4096 * 2;
  CHECK_REL(g.memory_s, bytes / 1000e9, 1e-12, "s");
}

static int parse_hw(const char *framework, const char *parallelism, const char *hw_extra,
                    fs_job **out, fs_err *err) {
  char text[2048];
  snprintf(
      text, sizeof(text),
      "{\"model\": {\"layers\": 8, \"hidden\": 512, \"heads\": 8, \"seq_len\": 256,"
      " \"vocab\": 1024}, \"training\": {\"global_batch\": 32, \"micro_batch\": 2},"
      " \"parallelism\": {\"tp\": 2, \"pp\": 2, \"dp\": 2%s},"
      " \"hardware\": {\"preset\": \"a100-80\", \"gpus_per_node\": 4, \"nvlink_gbps\": 2400%s}%s,"
      " \"topology\": {\"type\": \"leafspine\", \"leaves\": 4, \"spines\": 2,"
      " \"hosts_per_leaf\": 4, \"host_gbps\": 200}}",
      parallelism, hw_extra, framework);
  return fs_job_parse(text, strlen(text), "job.json", out, err);
}

static int parse(const char *framework, const char *parallelism, fs_job **out, fs_err *err) {
  return parse_hw(framework, parallelism, "", out, err);
}

/* A layer's kernels counted by hand: forward QKV, output, scores, softmax,
 * dropout, weighted sum, MLP up and down, 2 norms, 2 dropout-adds and the
 * GeLU: 13. Backward without gradient accumulation fusion: 4 linears x
 * (input grad, weight grad, the add into the main gradient) = 12, attention
 * 6 (4 GEMMs, dropout, softmax), the 5 memory-bound ones: 23. With fusion:
 * 4 x 2 + 6 + 5 = 19. */
TEST(test_framework_kernel_gaps) {
  fs_err err = {0, ""};
  fs_job *j = NULL;
  CHECK_OK(parse(", \"framework\": {\"preset\": \"megatron-2021\", \"kernel_gap_us\": 10}", "",
                 &j, &err), &err);
  if (!j) return;
  CHECK(j->model.attention == FS_ATTN_UNFUSED && !j->par.grad_accum_fusion);
  fs_compute_parts f, b;
  fs_compute_layer(j, 0, FS_PASS_FWD, &f);
  fs_compute_layer(j, 0, FS_PASS_BWD, &b);
  CHECK_REL(f.kernels, 13, 0, "");
  CHECK_REL(b.kernels, 23, 0, "");
  CHECK_REL(f.overhead_s, 13 * 10e-6, 1e-12, "s");
  CHECK_REL(f.total_s, f.gemm_s + f.attn_s + f.mem_s + 13 * 10e-6, 1e-12, "s");
  /* Without the gap the same layer is exactly 13 gaps shorter. */
  j->hw.kernel_gap_s = 0;
  fs_compute_parts f0;
  fs_compute_layer(j, 0, FS_PASS_FWD, &f0);
  CHECK_REL(f.total_s - f0.total_s, 13 * 10e-6, 1e-9, "s");
  j->par.grad_accum_fusion = 1;
  fs_compute_layer(j, 0, FS_PASS_BWD, &b);
  CHECK_REL(b.kernels, 19, 0, "");
  fs_job_free(j);
}

TEST(test_framework_presets_defaults_and_overrides) {
  fs_err err = {0, ""};
  fs_job *j = NULL;
  int n = 0;
  for (const fs_framework_preset *p; (p = fs_compute_framework_at(n)); n++) {
    CHECK(fs_compute_framework(p->name) == p);
    CHECK(p->gemm_k_overhead >= 0 && p->kernel_hbm_eff > 0 && p->kernel_hbm_eff <= 1);
  }
  CHECK(n >= 3);
  /* deepspeed-2022: blocking pipeline sends by default */
  CHECK_OK(parse(", \"framework\": {\"preset\": \"deepspeed-2022\"}", "", &j, &err), &err);
  if (j) {
    CHECK_EQ_INT(j->par.blocking_p2p, 1);
    fs_job_free(j);
  }
  CHECK(fs_compute_framework("pytorch-2030") == NULL);
  /* megatron-2022: its figures into the hardware, its defaults into the job */
  CHECK_OK(parse(", \"framework\": {\"preset\": \"megatron-2022\"}", "", &j, &err), &err);
  if (j) {
    const fs_framework_preset *p = fs_compute_framework("megatron-2022");
    CHECK(strcmp(j->hw.framework, "megatron-2022") == 0);
    CHECK_REL(j->hw.gemm_k_overhead, p->gemm_k_overhead, 0, "");
    CHECK_REL(j->hw.kernel_hbm_eff, p->kernel_hbm_eff, 0, "");
    CHECK_REL(j->hw.kernel_gap_s, p->kernel_gap_us * 1e-6, 1e-15, "s");
    CHECK(j->model.attention == p->attention); /* not the hardware preset's flash */
    CHECK_EQ_INT(j->par.grad_accum_fusion, p->grad_accum_fusion);
    CHECK_EQ_INT(j->par.overlap_dp, p->overlap_dp);
    fs_job_free(j);
  }
  /* every figure and default overridable */
  CHECK_OK(parse(", \"framework\": {\"preset\": \"megatron-2021\", \"gemm_k_overhead\": 0,"
                 " \"kernel_hbm_efficiency\": 0.9, \"kernel_gap_us\": 0}",
                 ", \"grad_accum_fusion\": true, \"overlap_dp\": true", &j, &err), &err);
  if (j) {
    CHECK_REL(j->hw.gemm_k_overhead, 0, 0, "");
    CHECK_REL(j->hw.kernel_hbm_eff, 0.9, 0, "");
    CHECK_EQ_INT(j->par.grad_accum_fusion, 1);
    CHECK_EQ_INT(j->par.overlap_dp, 1);
    fs_job_free(j);
  }
  /* a framework without a preset: its figures alone, named "custom" */
  CHECK_OK(parse(", \"framework\": {\"gemm_k_overhead\": 64}", "", &j, &err), &err);
  if (j) {
    CHECK(strcmp(j->hw.framework, "custom") == 0);
    CHECK_REL(j->hw.gemm_k_overhead, 64, 0, "");
    CHECK(j->model.attention == FS_ATTN_FLASH); /* the hardware preset's default */
    fs_job_free(j);
  }
}

TEST(test_framework_bad_sections) {
  fs_err err = {0, ""};
  fs_job *j = NULL;
  CHECK_EQ_INT(parse(", \"framework\": {\"preset\": \"pytorch-2030\"}", "", &j, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "job.json: $.framework.preset: unknown framework preset (one of: "
                        "megatron-2021, megatron-2022") != NULL);
  CHECK(strstr(err.msg, "got \"pytorch-2030\"") != NULL);
  CHECK_EQ_INT(parse(", \"framework\": {\"kernel_hbm_efficiency\": 1.5}", "", &j, &err),
               FS_EINVAL);
  CHECK(strstr(err.msg, "$.framework.kernel_hbm_efficiency") != NULL);
  CHECK_EQ_INT(parse(", \"framework\": {\"kernel_gap\": 1}", "", &j, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "$.framework.kernel_gap: unknown key") != NULL);
  /* the figures are the per-operation model's: refused beside mfu_matmul */
  test_cli_train_error("tests/data/bad-jobs/framework-with-mfu.json",
                       "$.framework: applies to the per-operation compute model: give "
                       "hardware.preset (or hbm_gb_per_s and sms) and no hardware.mfu_matmul",
                       __FILE__, __LINE__);
}

/* E[max of n standard normals]: the closed forms for n = 2, 3 (1/sqrt(pi),
 * 3 / (2 sqrt(pi))) and the tabled values for 4, 5, 10 and 100 (Harter,
 * "Expected values of normal order statistics", Biometrika 1961). */
TEST(test_framework_expected_max_normal) {
  const double pi = 3.14159265358979323846;
  CHECK_REL(fs_expected_max_normal(1), 0, 0, "");
  CHECK_REL(fs_expected_max_normal(2), 1 / sqrt(pi), 1e-9, "");
  CHECK_REL(fs_expected_max_normal(3), 3 / (2 * sqrt(pi)), 1e-9, "");
  CHECK_REL(fs_expected_max_normal(4), 1.02937537, 1e-7, "");
  CHECK_REL(fs_expected_max_normal(5), 1.16296447, 1e-7, "");
  CHECK_REL(fs_expected_max_normal(10), 1.53875273, 1e-7, "");
  CHECK_REL(fs_expected_max_normal(100), 2.50759364, 1e-7, "");
  /* it grows like sqrt(2 ln n), slowly and without end */
  CHECK(fs_expected_max_normal(100000) > fs_expected_max_normal(10000));
  CHECK(fs_expected_max_normal(100000) < sqrt(2 * log(100000.0)));
}

/* A job at its slowest GPU's pace: every compute op (and the optimizer
 * step) times 1 + cv E[max of its GPUs], exactly 1 with cv 0. */
TEST(test_framework_stragglers_scale_compute) {
  fs_err err = {0, ""};
  fs_job *j = NULL;
  CHECK_OK(parse("", "", &j, &err), &err);
  if (!j) return;
  double f0 = fs_compute_op_s(j, 0, 0), b0 = fs_compute_op_s(j, 1, 1);
  double s0 = fs_compute_step_s(j, 0);
  CHECK_REL(fs_compute_straggler_factor(j), 1, 0, "");
  j->hw.speed_cv = 0.02;
  double k = 1 + 0.02 * fs_expected_max_normal(8); /* tp 2 x pp 2 x dp 2 */
  CHECK_REL(fs_compute_straggler_factor(j), k, 1e-15, "");
  CHECK_REL(fs_compute_op_s(j, 0, 0), f0 * k, 1e-12, "s");
  CHECK_REL(fs_compute_op_s(j, 1, 1), b0 * k, 1e-12, "s");
  CHECK_REL(fs_compute_step_s(j, 0), s0 * k, 1e-12, "s");
  fs_job_free(j);
  /* read from the job file, bounded */
  CHECK_OK(parse_hw("", "", ", \"speed_cv\": 0.03", &j, &err), &err);
  if (j) CHECK_REL(j->hw.speed_cv, 0.03, 0, "");
  fs_job_free(j);
  CHECK_EQ_INT(parse_hw("", "", ", \"speed_cv\": 0.9", &j, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "$.hardware.speed_cv") != NULL && strstr(err.msg, "0.9") != NULL);
}

/* Fewer key/value heads than tensor-parallel ranks (multi-query attention
 * at tp 4): each rank holds one K and one V head, replicated, as
 * Megatron-Core runs num_query_groups < tp. Its QKV GEMM has a / t + 2
 * heads of output, its weights 2 h^2 / t + 2 h d; a tp that neither
 * divides kv_heads nor is a multiple of it is refused. */
static int parse_mqa(int64_t kv, int64_t tp, fs_job **out, fs_err *err) {
  char text[2048];
  snprintf(text, sizeof(text),
           "{\"model\": {\"layers\": 4, \"hidden\": 768, \"heads\": 12, \"kv_heads\": %lld,"
           " \"seq_len\": 256, \"vocab\": 1024, \"bias\": false},"
           " \"training\": {\"global_batch\": 8, \"micro_batch\": 2},"
           " \"parallelism\": {\"tp\": %lld, \"pp\": 1, \"dp\": 1},"
           " \"hardware\": {\"preset\": \"a100-80\", \"gpus_per_node\": 4, \"nvlink_gbps\": 2400},"
           " \"topology\": {\"type\": \"star\", \"hosts\": 4, \"gbps\": 200}}",
           (long long)kv, (long long)tp);
  return fs_job_parse(text, strlen(text), "job.json", out, err);
}

TEST(test_framework_kv_heads_replicated_below_tp) {
  fs_err err = {0, ""};
  fs_job *one = NULL, *four = NULL;
  CHECK_OK(parse_mqa(1, 4, &one, &err), &err);  /* 1 KV head, 4 replicas */
  CHECK_OK(parse_mqa(4, 4, &four, &err), &err); /* 4 KV heads, one each */
  if (one && four) {
    /* a rank's weights and QKV work are the same: one K and one V head */
    fs_work_shard a, b;
    fs_work_stage_params(one, 0, &a);
    fs_work_stage_params(four, 0, &b);
    CHECK_EQ_INT(a.dense, b.dense);
    const int64_t h = 768, d = 64;
    int64_t attn_rank = 2 * h * h / 4 + 2 * h * d; /* Q, O split; K, V one head */
    int64_t mlp_rank = 8 * h * h / 4;              /* ffn 4h, not gated */
    CHECK(a.dense >= 4 * (attn_rank + mlp_rank));
    fs_compute_parts p1, p4;
    fs_compute_layer(one, 0, FS_PASS_FWD, &p1);
    fs_compute_layer(four, 0, FS_PASS_FWD, &p4);
    CHECK_REL(p1.gemm_s, p4.gemm_s, 1e-12, "s");
  }
  fs_job_free(one);
  fs_job_free(four);
  /* 3 KV heads on 2 ranks: neither divides the other */
  fs_job *bad = NULL;
  CHECK_EQ_INT(parse_mqa(3, 2, &bad, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "$.parallelism.tp: must divide kv_heads (3) or be a multiple of it") !=
        NULL);
}

/* Fine-grained and shared experts (DeepSeekMoE; DeepSeek-V3: 256 routed of
 * 2048 and 1 shared, top-8, the first 3 layers dense), counted by hand on a
 * small model: 4 layers, hidden 64, dense ffn 256, 8 routed experts of 32
 * and 1 shared, top 2, the first layer dense, SwiGLU, no biases. */
TEST(test_framework_fine_grained_shared_experts) {
  fs_model m;
  memset(&m, 0, sizeof(m));
  m.layers = 4, m.hidden = 64, m.ffn = 256, m.heads = 4, m.kv_heads = 4, m.seq_len = 128;
  m.vocab = 1000, m.experts = 8, m.top_k = 2, m.moe_every = 1, m.dtype_bytes = 2;
  m.gated = 1, m.bias = 0, m.learned_pos = 0, m.tied_embeddings = 1;
  m.expert_ffn = 32, m.shared_experts = 1, m.first_dense = 1;
  CHECK(!fs_work_layer_is_moe(&m, 0) && fs_work_layer_is_moe(&m, 1) && fs_work_layer_is_moe(&m, 3));
  CHECK_EQ_INT(fs_work_moe_layers(&m, 0, 4), 3);
  CHECK_EQ_INT(fs_work_moe_layers(&m, 0, 1), 0);
  CHECK_EQ_INT(fs_work_moe_layers(&m, 2, 2), 2);
  const int64_t attn = 4 * 64 * 64, norms = 2 * 64, dense_mlp = 3 * 64 * 256;
  const int64_t expert = 3 * 64 * 32, router = 64 * 8;
  int64_t layers = 4 * (attn + norms) + dense_mlp + 3 * ((8 + 1) * expert + router);
  int64_t rest = 1000 * 64 + 64; /* tied embedding, final norm */
  CHECK_EQ_INT(fs_work_params(&m), layers + rest);
  int64_t active = 4 * (attn + norms) + dense_mlp + 3 * ((2 + 1) * expert + router);
  CHECK_EQ_INT(fs_work_active_params(&m), active + rest);
  /* a token's matmuls in an MoE layer: attention, 2 routed + 1 shared
   * expert, the router; scores and weighted sum 4 b s^2 h */
  double bs = 2.0 * 128;
  CHECK_REL(fs_work_layer_fwd_flops(&m, 1, 2),
            2 * bs * (double)(attn + 3 * expert + router) + 4 * bs * 128 * 64, 1e-15, "FLOP");
  CHECK_REL(fs_work_layer_fwd_flops(&m, 0, 2),
            2 * bs * (double)(attn + dense_mlp) + 4 * bs * 128 * 64, 1e-15, "FLOP");
}

TEST(test_framework_expert_keys_need_experts) {
  fs_err err = {0, ""};
  fs_job *j = NULL;
  const char *text =
      "{\"model\": {\"layers\": 4, \"hidden\": 512, \"heads\": 8, \"seq_len\": 256,"
      " \"vocab\": 1024, \"shared_experts\": 1},"
      " \"training\": {\"global_batch\": 8, \"micro_batch\": 2},"
      " \"parallelism\": {\"tp\": 2, \"pp\": 1, \"dp\": 2},"
      " \"hardware\": {\"preset\": \"a100-80\", \"gpus_per_node\": 4, \"nvlink_gbps\": 2400},"
      " \"topology\": {\"type\": \"star\", \"hosts\": 4, \"gbps\": 200}}";
  CHECK_EQ_INT(fs_job_parse(text, strlen(text), "job.json", &j, &err), FS_EINVAL);
  CHECK(strcmp(err.msg, "job.json: $.model.shared_experts: applies to an MoE model (experts > "
                        "1), got 1") == 0);
}

/* Explicit first and last stage layers (Megatron-LM's
 * --decoder-first/last-pipeline-num-layers), with and without interleaving,
 * counted by hand; a split that does not divide is refused naming the key. */
static int parse_stages(int64_t layers, int64_t pp, int64_t v, int64_t first, int64_t last,
                        fs_job **out, fs_err *err) {
  char text[2048];
  snprintf(text, sizeof(text),
           "{\"model\": {\"layers\": %lld, \"hidden\": 512, \"heads\": 8, \"seq_len\": 256,"
           " \"vocab\": 1024}, \"training\": {\"global_batch\": 16, \"micro_batch\": 1},"
           " \"parallelism\": {\"tp\": 1, \"pp\": %lld, \"dp\": 1%s, \"virtual_stages\": %lld,"
           " \"first_stage_layers\": %lld, \"last_stage_layers\": %lld},"
           " \"hardware\": {\"gpu_tflops\": 100, \"hbm_gib\": 80, \"gpus_per_node\": 4,"
           " \"nvlink_gbps\": 2400},"
           " \"topology\": {\"type\": \"star\", \"hosts\": 4, \"gbps\": 200}}",
           (long long)layers, (long long)pp, v > 1 ? ", \"schedule\": \"interleaved\"" : "",
           (long long)v, (long long)first, (long long)last);
  return fs_job_parse(text, strlen(text), "job.json", out, err);
}

TEST(test_framework_first_last_stage_layers) {
  fs_err err = {0, ""};
  fs_job *j = NULL;
  /* 30 layers on 4 stages: 6, 9, 9, 6 */
  CHECK_OK(parse_stages(30, 4, 1, 6, 6, &j, &err), &err);
  if (j) {
    const int64_t n[] = {6, 9, 9, 6}, f[] = {0, 6, 15, 24};
    for (int c = 0; c < 4; c++) {
      int64_t first;
      CHECK_EQ_INT(fs_work_chunk_layers(j, c, &first), n[c]);
      CHECK_EQ_INT(first, f[c]);
    }
    fs_train_opts o = {.no_compare = 1};
    fs_train_result a;
    CHECK_EQ_INT(test_train_run(j, &o, &a), 0);
    fs_job_free(j);
  }
  /* 32 layers, 4 stages of 2 chunks: stages 6, 10, 10, 6, chunks half of
   * each, virtual stage c p + s in layer order */
  CHECK_OK(parse_stages(32, 4, 2, 6, 6, &j, &err), &err);
  if (j) {
    const int64_t n[] = {3, 5, 5, 3, 3, 5, 5, 3}, f[] = {0, 3, 8, 13, 16, 19, 24, 29};
    for (int c = 0; c < 8; c++) {
      int64_t first;
      CHECK_EQ_INT(fs_work_chunk_layers(j, c, &first), n[c]);
      CHECK_EQ_INT(first, f[c]);
    }
    fs_work_shard sh;
    fs_work_stage_params(j, 0, &sh);
    CHECK_EQ_INT(sh.layers, 6);
    fs_job_free(j);
  }
  /* only the last given: the first stage is a middle one */
  CHECK_OK(parse_stages(30, 4, 1, 0, 3, &j, &err), &err);
  if (j) {
    CHECK_EQ_INT(fs_work_chunk_layers(j, 0, NULL), 9);
    CHECK_EQ_INT(fs_work_chunk_layers(j, 3, NULL), 3);
    fs_job_free(j);
  }
  CHECK_EQ_INT(parse_stages(32, 4, 2, 5, 6, &j, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "$.parallelism.first_stage_layers: must be a multiple of virtual_stages "
                        "(2)") != NULL);
  CHECK_EQ_INT(parse_stages(30, 4, 1, 5, 6, &j, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "leaves 19 layers, which do not split into 2 middle stages") != NULL);
  CHECK_EQ_INT(parse_stages(30, 2, 1, 10, 10, &j, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "must add up to the model's layers (30)") != NULL);
}

/* Parallel attention and MLP (GPT-J, PaLM): one norm a layer (its
 * parameters and its kernel), one TP exchange a pass (with SP an
 * all-gather and a reduce-scatter instead of two each), 6 s b h of
 * replicated activations instead of 10, the same FLOPs. */
TEST(test_framework_parallel_block) {
  fs_err err = {0, ""};
  fs_job *seq = NULL, *par = NULL;
  const char *fmt =
      "{\"model\": {\"layers\": 4, \"hidden\": 512, \"heads\": 8, \"seq_len\": 256,"
      " \"vocab\": 1024, \"parallel_block\": %s}, \"training\": {\"global_batch\": 8,"
      " \"micro_batch\": 2}, \"parallelism\": {\"tp\": 2, \"pp\": 1, \"dp\": 2,"
      " \"sequence_parallel\": true}, \"hardware\": {\"preset\": \"a100-80\","
      " \"gpus_per_node\": 4, \"nvlink_gbps\": 2400},"
      " \"topology\": {\"type\": \"star\", \"hosts\": 4, \"gbps\": 200}}";
  char text[1024];
  snprintf(text, sizeof(text), fmt, "false");
  CHECK_OK(fs_job_parse(text, strlen(text), "job.json", &seq, &err), &err);
  snprintf(text, sizeof(text), fmt, "true");
  CHECK_OK(fs_job_parse(text, strlen(text), "job.json", &par, &err), &err);
  if (!seq || !par) return;
  CHECK_EQ_INT(fs_work_tp_colls_per_layer(seq, FS_PASS_FWD), 4);
  CHECK_EQ_INT(fs_work_tp_colls_per_layer(par, FS_PASS_FWD), 2);
  /* one LayerNorm (weight and bias, 2 h) fewer per layer */
  CHECK_EQ_INT(fs_work_params(&seq->model) - fs_work_params(&par->model), 4 * 2 * 512);
  CHECK_REL(fs_work_layer_fwd_flops(&seq->model, 0, 2), fs_work_layer_fwd_flops(&par->model, 0, 2),
            0, "FLOP");
  /* replicated activations 10 -> 6 s b h (split over t = 2 with SP) */
  double sbh = 256.0 * 2 * 512;
  CHECK_REL(fs_work_act_layer_bytes(seq, 0, 0) - fs_work_act_layer_bytes(par, 0, 0),
            4 * sbh / 2, 1e-12, "B");
  fs_compute_parts a, b;
  fs_compute_layer(seq, 0, FS_PASS_FWD, &a);
  fs_compute_layer(par, 0, FS_PASS_FWD, &b);
  CHECK_REL(a.kernels - b.kernels, 1, 0, "");
  CHECK(b.mem_s < a.mem_s);
  CHECK_REL(a.gemm_s, b.gemm_s, 0, "s");
  fs_job_free(seq);
  fs_job_free(par);
}

/* framework.step_latency "nccl": the job's collectives pay NCCL's latency
 * of a network step between servers; on 8 plain hosts every step of the
 * gradient all-reduce does, so its exposed time grows. Allowed beside
 * mfu_matmul (it is no compute figure); another value is refused. */
TEST(test_framework_nccl_step_latency) {
  const char *fmt =
      "{\"model\": {\"layers\": 2, \"hidden\": 1024, \"heads\": 16, \"seq_len\": 2048,"
      " \"vocab\": 32000}, \"training\": {\"global_batch\": 8, \"micro_batch\": 1},"
      " \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 8, \"overlap_dp\": false},"
      " \"hardware\": {\"gpu_tflops\": 10, \"mfu_matmul\": 0.5, \"hbm_gib\": 80,"
      " \"gpus_per_node\": 1, \"nvlink_gbps\": 1000}%s,"
      " \"topology\": {\"type\": \"star\", \"hosts\": 8, \"gbps\": 100, \"latency_ns\": 700}}";
  double dp[2];
  for (int v = 0; v < 2; v++) {
    char text[1024];
    snprintf(text, sizeof(text), fmt, v ? ", \"framework\": {\"step_latency\": \"nccl\"}" : "");
    fs_err err = {0, ""};
    fs_job *j = NULL;
    CHECK_OK(fs_job_parse(text, strlen(text), "job.json", &j, &err), &err);
    if (!j) return;
    CHECK_EQ_INT(j->hw.nccl_step_latency, v);
    fs_train_opts o = {.no_compare = 1};
    fs_train_result a;
    CHECK_EQ_INT(test_train_run(j, &o, &a), 0);
    dp[v] = a.kind[FS_PAR_DP].exposed_s;
    fs_job_free(j);
  }
  CHECK(dp[1] > dp[0]);
  /* the collectives timed alone too (--comm isolated: the expert
   * all-to-alls, which only that path times) */
  const char *z3 =
      "{\"model\": {\"layers\": 2, \"hidden\": 1024, \"heads\": 16, \"seq_len\": 2048,"
      " \"vocab\": 32000, \"experts\": 8}, \"training\": {\"global_batch\": 8, \"micro_batch\": 1},"
      " \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 8, \"ep\": 8},"
      " \"hardware\": {\"gpu_tflops\": 10, \"mfu_matmul\": 0.5, \"hbm_gib\": 80,"
      " \"gpus_per_node\": 1, \"nvlink_gbps\": 1000}%s,"
      " \"topology\": {\"type\": \"star\", \"hosts\": 8, \"gbps\": 100, \"latency_ns\": 700}}";
  for (int v = 0; v < 2; v++) {
    char text[1024];
    snprintf(text, sizeof(text), z3, v ? ", \"framework\": {\"step_latency\": \"nccl\"}" : "");
    fs_err err = {0, ""};
    fs_job *j = NULL;
    CHECK_OK(fs_job_parse(text, strlen(text), "job.json", &j, &err), &err);
    if (!j) return;
    fs_train_opts o = {.no_compare = 1, .comm = FS_COMM_ISOLATED};
    fs_train_result a;
    CHECK_EQ_INT(test_train_run(j, &o, &a), 0);
    dp[v] = a.kind[FS_PAR_EP].exposed_s;
    fs_job_free(j);
  }
  CHECK(dp[1] > dp[0]);
  char text[1024];
  snprintf(text, sizeof(text), fmt, ", \"framework\": {\"step_latency\": \"mpi\"}");
  fs_err err = {0, ""};
  fs_job *j = NULL;
  CHECK_EQ_INT(fs_job_parse(text, strlen(text), "job.json", &j, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "$.framework.step_latency: must be \"nccl\" or \"none\", got \"mpi\"") !=
        NULL);
}

/* training.fp8_comm: with FP8 training, sequence parallelism's all-gathers
 * and the MoE dispatch carry FP8 (1 byte), the reduce-scatters and the
 * combine D bytes: on average (1 + D) / (2 D) of the bytes; the analytic
 * volumes and the job's exposed TP follow; refused without FP8 training. */
TEST(test_framework_fp8_comm) {
  const char *fmt =
      "{\"model\": {\"layers\": 4, \"hidden\": 2048, \"heads\": 16, \"seq_len\": 2048,"
      " \"vocab\": 32000}, \"training\": {\"global_batch\": 8, \"micro_batch\": 1,"
      " \"precision\": \"%s\", \"fp8_comm\": %s},"
      " \"parallelism\": {\"tp\": 4, \"pp\": 1, \"dp\": 2, \"sequence_parallel\": true},"
      " \"hardware\": {\"preset\": \"h100-sxm\", \"gpus_per_node\": 4, \"nvlink_gbps\": 400},"
      " \"topology\": {\"type\": \"star\", \"hosts\": 8, \"gbps\": 400}}";
  double wire[2], exposed[2];
  for (int v = 0; v < 2; v++) {
    char text[1024];
    snprintf(text, sizeof(text), fmt, "fp8", v ? "true" : "false");
    fs_err err = {0, ""};
    fs_job *j = NULL;
    CHECK_OK(fs_job_parse(text, strlen(text), "job.json", &j, &err), &err);
    if (!j) return;
    CHECK_REL(fs_work_fp8_share(j, FS_PAR_TP), v ? 0.75 : 1, 0, "");
    CHECK_REL(fs_work_fp8_share(j, FS_PAR_DP), 1, 0, "");
    fs_work_comm cm;
    fs_work_comm_stage(j, 0, &cm);
    wire[v] = cm.kind[FS_PAR_TP].wire_bytes;
    fs_train_opts o = {.no_compare = 1};
    fs_train_result a;
    CHECK_EQ_INT(test_train_run(j, &o, &a), 0);
    exposed[v] = a.kind[FS_PAR_TP].exposed_s;
    fs_job_free(j);
  }
  CHECK_REL(wire[1], 0.75 * wire[0], 1e-12, "B");
  CHECK(exposed[1] < exposed[0]);
  char text[1024];
  snprintf(text, sizeof(text), fmt, "bf16", "true");
  fs_err err = {0, ""};
  fs_job *j = NULL;
  CHECK_EQ_INT(fs_job_parse(text, strlen(text), "job.json", &j, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "$.training.fp8_comm: sends activations in FP8: needs FP8 training") !=
        NULL);
}

/* parallelism.p2p "blocking" (DeepSpeed's pipeline engine): a transfer
 * starts when the receiver has posted its receive and the sender's next op
 * waits for it. Never faster than the asynchronous sends; no cycle under
 * 1F1B or GPipe; refused with the interleaved schedule. */
TEST(test_framework_blocking_p2p) {
  const char *fmt =
      "{\"model\": {\"layers\": 8, \"hidden\": 4096, \"heads\": 32, \"seq_len\": 2048,"
      " \"vocab\": 32000}, \"training\": {\"global_batch\": 8, \"micro_batch\": 1},"
      " \"parallelism\": {\"tp\": 1, \"pp\": 4, \"dp\": 1, \"schedule\": \"%s\","
      " \"p2p\": \"%s\"%s},"
      " \"hardware\": {\"gpu_tflops\": 100, \"hbm_gib\": 80, \"gpus_per_node\": 1,"
      " \"nvlink_gbps\": 100},"
      " \"topology\": {\"type\": \"star\", \"hosts\": 4, \"gbps\": 25, \"latency_ns\": 1000}}";
  const char *sched[2] = {"1f1b", "gpipe"};
  for (int k = 0; k < 2; k++) {
    double it[2];
    for (int b = 0; b < 2; b++) {
      char text[1024];
      snprintf(text, sizeof(text), fmt, sched[k], b ? "blocking" : "async", "");
      fs_err err = {0, ""};
      fs_job *j = NULL;
      CHECK_OK(fs_job_parse(text, strlen(text), "job.json", &j, &err), &err);
      if (!j) return;
      fs_train_opts o = {.no_compare = 1};
      fs_train_result a;
      CHECK_EQ_INT(test_train_run(j, &o, &a), 0);
      it[b] = a.iter_s;
      fs_job_free(j);
    }
    CHECK(it[1] > it[0]);
  }
  char text[1024];
  snprintf(text, sizeof(text), fmt, "interleaved", "blocking", ", \"virtual_stages\": 2");
  fs_err err = {0, ""};
  fs_job *j = NULL;
  CHECK_EQ_INT(fs_job_parse(text, strlen(text), "job.json", &j, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "$.parallelism.p2p: blocking sends run with the 1f1b or gpipe") != NULL);
}

/* Multi-head latent attention with fine-grained and shared experts:
 * DeepSeek-V3 as its report and configuration give it (61 layers, hidden
 * 7168, 128 heads, q_lora 1536, kv_lora 512, qk_nope 128, qk_rope 64,
 * v_head 128, the first 3 layers dense of ffn 18432, then 256 routed
 * experts of 2048 and 1 shared, top 8, vocabulary 129280, untied): the
 * report's "671B total parameters, of which 37B are activated for each
 * token" (DeepSeek-AI, arXiv 2412.19437, sec. 1; the multi-token
 * prediction module's 14B apart). Refused with context parallelism and
 * with biases. */
static int parse_dsv3(const char *extra_par, const char *bias, fs_job **out, fs_err *err) {
  char text[2048];
  snprintf(text, sizeof(text),
           "{\"model\": {\"layers\": 61, \"hidden\": 7168, \"heads\": 128, \"ffn\": 18432,"
           " \"seq_len\": 4096, \"vocab\": 129280, \"experts\": 256, \"top_k\": 8,"
           " \"expert_ffn\": 2048, \"shared_experts\": 1, \"first_dense\": 3, \"gated\": true,"
           " \"bias\": %s, \"position\": \"rotary\", \"tied_embeddings\": false,"
           " \"mla\": {\"q_lora\": 1536, \"kv_lora\": 512, \"qk_nope\": 128, \"qk_rope\": 64,"
           " \"v_head\": 128}}, \"training\": {\"global_batch\": 16, \"micro_batch\": 1},"
           " \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 8, \"ep\": 8%s},"
           " \"hardware\": {\"preset\": \"h100-sxm\", \"gpus_per_node\": 8, \"nvlink_gbps\": 3600,"
           " \"hbm_gib\": 100000},"
           " \"topology\": {\"type\": \"star\", \"hosts\": 16, \"gbps\": 400}}",
           bias, extra_par);
  return fs_job_parse(text, strlen(text), "job.json", out, err);
}

TEST(test_framework_mla_deepseek_v3) {
  fs_err err = {0, ""};
  fs_job *j = NULL;
  CHECK_OK(parse_dsv3("", "false", &j, &err), &err);
  if (!j) return;
  double total = (double)fs_work_params(&j->model), active = (double)fs_work_active_params(&j->model);
  CHECK_REL(total, 671e9, 0.002, "parameters");
  CHECK_REL(active, 37e9, 0.02, "activated parameters");
  /* the per-operation model runs it: MLA's projections and its core */
  fs_compute_parts f;
  fs_compute_layer(j, 1, FS_PASS_FWD, &f);
  CHECK(f.gemm_s > 0 && f.attn_s > 0 && f.total_s > f.gemm_s);
  /* a layer's forward FLOPs: 2 s x its matmul weights + the core's
   * 2 s^2 a (qk + v) */
  double s = 4096, a = 128;
  double attn_w = 7168.0 * 1536 + 1536.0 * a * 192 + 7168.0 * 576 + 512.0 * a * 256 + a * 128 * 7168;
  double moe_w = 9 * 3 * 7168.0 * 2048 + 7168.0 * 256;
  CHECK_REL(fs_work_layer_fwd_flops(&j->model, 3, 1), 2 * s * (attn_w + moe_w) + 2 * s * s * a * 320,
            1e-12, "FLOP");
  fs_job_free(j);
  CHECK_EQ_INT(parse_dsv3(", \"cp\": 2", "false", &j, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "$.parallelism.cp: context parallelism with multi-head latent attention") !=
        NULL);
  CHECK_EQ_INT(parse_dsv3("", "true", &j, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "$.model.mla: has no biases") != NULL);
}

/* framework.tp_overlap: each sequence-parallel collective pipelined with
 * its GEMM in t chunks adds max(c, g) + min(c, g) / t - g. Checked by hand
 * on the GEMMs' own times (fs_compute_gemm on the layer's shapes): a
 * collective far shorter than its GEMM adds c / t, one far longer c - g +
 * g / t. The job's exposed TP shrinks; refused without sequence
 * parallelism. */
TEST(test_framework_tp_overlap) {
  const char *fmt =
      "{\"model\": {\"layers\": 4, \"hidden\": 4096, \"heads\": 32, \"seq_len\": 2048,"
      " \"vocab\": 32000}, \"training\": {\"global_batch\": 8, \"micro_batch\": 1},"
      " \"parallelism\": {\"tp\": 4, \"pp\": 1, \"dp\": 2, \"sequence_parallel\": %s},"
      " \"hardware\": {\"preset\": \"h100-sxm\", \"gpus_per_node\": 4, \"nvlink_gbps\": 400}%s,"
      " \"topology\": {\"type\": \"star\", \"hosts\": 8, \"gbps\": 400}}";
  char text[1024];
  snprintf(text, sizeof(text), fmt, "true", ", \"framework\": {\"tp_overlap\": true}");
  fs_err err = {0, ""};
  fs_job *j = NULL;
  CHECK_OK(fs_job_parse(text, strlen(text), "job.json", &j, &err), &err);
  if (!j) return;
  /* the four GEMMs of a forward on one rank: T = 2048 tokens, h = 4096,
   * t = 4: QKV 3h/t, output h/t in, MLP up 4h/t, down 4h/t in */
  const int64_t T = 2048, h = 4096, t = 4;
  const int64_t shp[4][2] = {{3 * h / t, h}, {h, h / t}, {4 * h / t, h}, {h, 4 * h / t}};
  double g = 0;
  for (int i = 0; i < 4; i++) {
    fs_gemm_time gt;
    fs_compute_gemm(&j->hw, T, shp[i][0], shp[i][1], 1, 2, 2, &gt);
    g += gt.s;
  }
  CHECK_REL(fs_compute_tp_overlap_exposed_s(j, FS_PASS_FWD, 1e-9, 1e-9), 4 * 1e-9 / 4, 1e-9, "s");
  CHECK_REL(fs_compute_tp_overlap_exposed_s(j, FS_PASS_FWD, 10, 10), 40 - g + g / 4, 1e-12, "s");
  double exposed[2];
  for (int v = 0; v < 2; v++) {
    fs_job *k = NULL;
    snprintf(text, sizeof(text), fmt, "true", v ? ", \"framework\": {\"tp_overlap\": true}" : "");
    CHECK_OK(fs_job_parse(text, strlen(text), "job.json", &k, &err), &err);
    if (!k) break;
    fs_train_opts o = {.no_compare = 1, .comm = FS_COMM_ISOLATED};
    fs_train_result a;
    CHECK_EQ_INT(test_train_run(k, &o, &a), 0);
    exposed[v] = a.kind[FS_PAR_TP].exposed_s;
    fs_job_free(k);
  }
  CHECK(exposed[1] < exposed[0]);
  fs_job_free(j);
  snprintf(text, sizeof(text), fmt, "false", ", \"framework\": {\"tp_overlap\": true}");
  CHECK_EQ_INT(fs_job_parse(text, strlen(text), "job.json", &j, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "$.framework.tp_overlap: overlaps sequence parallelism's all-gathers") !=
        NULL);
}

/* DeepSeek-V3's memory savings (arXiv 2412.19437, secs. 3.2.3 and 3.3.3),
 * each against the activation terms of fs_work_act_layer_bytes by hand:
 * recompute_norms drops the two norm outputs (4 s b h), recompute_mla_up
 * keeps of Q, K and V only the attention output (2 s b a v), and
 * fp8_activations halves the norm outputs, the latents, the MLP's inner
 * activations and the experts' dispatched inputs; bf16 moments take the
 * optimizer from 12 to 8 bytes a parameter. The recomputations cost their
 * FLOPs: the up-projections' 2 s b (q_lora a (nope + rope) + kv_lora a
 * (nope + v)) per layer. */
TEST(test_framework_deepseek_memory_savings) {
  fs_err err = {0, ""};
  fs_job *j = NULL;
  CHECK_OK(parse_dsv3("", "false", &j, &err), &err);
  if (!j) return;
  double s = 4096, b = 1, h = 7168, a = 128, sbh = s * b * h;
  double base_d = fs_work_act_layer_bytes(j, 0, 0), base_e = fs_work_act_layer_bytes(j, 1, 0);
  j->par.recompute_norms = 1;
  CHECK_REL(base_d - fs_work_act_layer_bytes(j, 0, 0), 4 * sbh, 1e-12, "B");
  j->par.recompute_norms = 0, j->par.recompute_mla_up = 1;
  CHECK_REL(base_e - fs_work_act_layer_bytes(j, 1, 0), 2 * s * b * a * (2 * 192 + 2 * 128 - 128),
            1e-12, "B");
  j->par.recompute_mla_up = 0;
  j->train.fp8_activations = 1;
  double latents = 2 * s * b * (1536 + 512 + 64);
  double inner_d = 6 * s * b * 18432, inner_e = 6 * s * b * 2048;
  CHECK_REL(base_d - fs_work_act_layer_bytes(j, 0, 0), 2 * sbh + latents / 2 + inner_d / 2, 1e-12,
            "B");
  CHECK_REL(base_e - fs_work_act_layer_bytes(j, 1, 0),
            2 * sbh + latents / 2 + 8 * (inner_e / 2 + sbh) + inner_e / 2, 1e-12, "B");
  j->train.fp8_activations = 0;
  fs_work_mem m32, m16;
  fs_work_memory(j, 0, &m32);
  double step32 = fs_compute_step_s(j, 0);
  j->train.moment_bytes = 2;
  fs_work_memory(j, 0, &m16);
  CHECK_REL(m16.optim_bytes, m32.optim_bytes * 8 / 12, 1e-12, "B");
  /* ZeRO 0, 2-byte weights: a parameter's step moves 32 + 2 bytes and its
   * cast 4 + 2; with bf16 moments 24 + 2 and 4 + 2 */
  CHECK_REL(fs_compute_step_s(j, 0), step32 * 32 / 40, 1e-12, "s");
  j->train.moment_bytes = 4;
  /* the up-projections recomputed: their FLOPs, per layer, and their
   * GEMMs under the roofline */
  CHECK_REL(fs_work_chunk_flops(j, 0, FS_PASS_RECOMPUTE), 0, 0, "FLOP");
  j->par.recompute_mla_up = 1;
  int64_t first, lc = fs_work_chunk_layers(j, 0, &first);
  CHECK_REL(fs_work_chunk_flops(j, 0, FS_PASS_RECOMPUTE),
            (double)lc * 2 * s * b * (1536.0 * a * 192 + 512.0 * a * 256), 1e-12, "FLOP");
  fs_compute_parts r;
  fs_compute_layer(j, 1, FS_PASS_RECOMPUTE, &r);
  fs_gemm_time q, kv;
  fs_compute_gemm(&j->hw, (int64_t)s, 128 * 192, 1536, 1, 2, 2, &q);
  fs_compute_gemm(&j->hw, (int64_t)s, 128 * 256, 512, 1, 2, 2, &kv);
  CHECK_REL(r.gemm_s, q.s + kv.s, 1e-12, "s");
  fs_job_free(j);
  /* refusals */
  CHECK_EQ_INT(parse_dsv3(", \"recompute\": true, \"recompute_norms\": true", "false", &j, &err),
               FS_EINVAL);
  CHECK(strstr(err.msg, "$.parallelism.recompute_norms: full recomputation") != NULL);
  const char *bad[][2] = {
      {"\"fp8_activations\": true", "$.training.fp8_activations: keeps activations in FP8"},
      {"\"optimizer_moments\": \"fp16\"", "$.training.optimizer_moments: must be \"fp32\" or"},
  };
  for (int k = 0; k < 2; k++) {
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"model\": {\"layers\": 4, \"hidden\": 512, \"heads\": 8, \"seq_len\": 256,"
             " \"vocab\": 1000}, \"training\": {\"global_batch\": 8, %s},"
             " \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 8},"
             " \"hardware\": {\"gpu_tflops\": 100, \"gpus_per_node\": 8, \"hbm_gib\": 80, \"nvlink_gbps\": 1000},"
             " \"topology\": {\"type\": \"star\", \"hosts\": 8, \"gbps\": 400}}",
             bad[k][0]);
    CHECK_EQ_INT(fs_job_parse(text, strlen(text), "job.json", &j, &err), FS_EINVAL);
    CHECK(strstr(err.msg, bad[k][1]) != NULL);
  }
  char text[1024];
  snprintf(text, sizeof(text),
           "{\"model\": {\"layers\": 4, \"hidden\": 512, \"heads\": 8, \"seq_len\": 256,"
           " \"vocab\": 1000}, \"training\": {\"global_batch\": 8},"
           " \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 8, \"recompute_mla_up\": true},"
           " \"hardware\": {\"gpu_tflops\": 100, \"gpus_per_node\": 8, \"hbm_gib\": 80, \"nvlink_gbps\": 1000},"
           " \"topology\": {\"type\": \"star\", \"hosts\": 8, \"gbps\": 400}}");
  CHECK_EQ_INT(fs_job_parse(text, strlen(text), "job.json", &j, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "$.parallelism.recompute_mla_up: recomputes multi-head latent") != NULL);
}
