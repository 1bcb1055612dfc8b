/* Tests of the work module: every formula against a hand computation
 * written out here (GPT-3 175B's published parameter count, Narayanan et
 * al.'s per-iteration FLOPs, Korthikanti et al.'s activation table,
 * Rajbhandari et al.'s ZeRO figures), the closed-form in-flight counts
 * against the schedules of pipeline.c, placement maps, and every validation
 * error of a job file by its exact message. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/topo/internal.h"
#include "../src/work/internal.h"
#include "fabricsim/pipeline.h"
#include "fabricsim/work.h"
#include "test.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* GPT-3 175B (Brown et al. 2020; Narayanan et al. SC'21 Table 1). */
static fs_model gpt3(void) {
  fs_job j;
  fs_job_init(&j, NULL);
  fs_model m = j.model;
  m.layers = 96, m.hidden = 12288, m.ffn = 4 * 12288, m.heads = 96, m.kv_heads = 96;
  m.seq_len = 2048, m.vocab = 51200;
  return m;
}

/* The small job used throughout, the same as BASE_JSON below:
 * L 8, h 512, a = k = 8, f 2048, s 256, V 1024; B 32, b 2; t 2, p 2, d 4
 * (m = 32 / (2 * 4) = 4 micro-batches); 1F1B, ZeRO 0, no SP, no recompute. */
static void small_job(fs_job *j) {
  fs_job_init(j, "job.json");
  fs_model *m = &j->model;
  m->layers = 8, m->hidden = 512, m->ffn = 2048, m->heads = 8, m->kv_heads = 8;
  m->seq_len = 256, m->vocab = 1024;
  j->train.global_batch = 32, j->train.micro_batch = 2;
  j->par.tp = 2, j->par.pp = 2, j->par.dp = 4;
  j->hw.gpu_tflops = 100, j->hw.hbm_bytes = 80 * GIB, j->hw.hbm_in_gib = 1;
  j->hw.gpus_per_node = 4, j->hw.nvlink_gbps = 1000, j->hw.nic_gbps = 100;
}

/* ---- parameters ---- */

TEST(test_work_gpt3_params) {
  fs_model m = gpt3();
  const int64_t L = 96, h = 12288, V = 51200, s = 2048;
  /* Per layer 12h^2 + 13h: weights 4h^2 (QKV, output) + 8h^2 (MLP); biases
   * 3h + h + 4h + h; two LayerNorms 2 * 2h. */
  CHECK_EQ_INT(fs_work_layer_params(&m, 0), 12 * h * h + 13 * h);
  CHECK_EQ_INT(fs_work_attn_params(&m), 4 * h * h + 4 * h);
  CHECK_EQ_INT(fs_work_mlp_params(&m), 8 * h * h + 5 * h);
  CHECK_EQ_INT(fs_work_norm_params(&m), 4 * h);
  CHECK_EQ_INT(fs_work_embed_params(&m), (V + s) * h);
  /* Narayanan et al.: P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)),
   * plus the final LayerNorm (2h) they leave out. */
  int64_t narayanan = 12 * L * h * h + 13 * L * h + (V + s) * h;
  CHECK_EQ_INT(narayanan, 174615822336LL);
  CHECK_EQ_INT(fs_work_params(&m), narayanan + 2 * h);
  CHECK_EQ_INT(fs_work_params(&m), 174615846912LL);
  /* The published "174.6 billion" (Narayanan Table 1: 174.6B) is rounded. */
  CHECK_REL(fs_work_params(&m), 174.6e9, 0.05 / 174.6, "params");
  CHECK_EQ_INT(fs_work_active_params(&m), fs_work_params(&m));
  /* Untied output layer: V h more. */
  m.tied_embeddings = 0;
  CHECK_EQ_INT(fs_work_params(&m), 174615846912LL + V * h);
}

TEST(test_work_params_gqa_gated_llama_style) {
  fs_job j;
  fs_job_init(&j, NULL);
  fs_model m = j.model;
  /* h 64, a 8 heads of 8, k 2 KV heads (K, V width 16), f 176, SwiGLU, no
   * biases, RMSNorm, rotary, untied, 4 layers, V 1000. */
  m.layers = 4, m.hidden = 64, m.heads = 8, m.kv_heads = 2, m.ffn = 176;
  m.seq_len = 128, m.vocab = 1000, m.gated = 1, m.bias = 0, m.learned_pos = 0;
  m.tied_embeddings = 0;
  /* attention 64*64 (Q) + 2 * 64*16 (K, V) + 64*64 (out) = 10240 */
  CHECK_EQ_INT(fs_work_attn_params(&m), 10240);
  /* MLP 3 * 64 * 176 = 33792 */
  CHECK_EQ_INT(fs_work_mlp_params(&m), 33792);
  CHECK_EQ_INT(fs_work_norm_params(&m), 128);
  CHECK_EQ_INT(fs_work_layer_params(&m, 3), 10240 + 33792 + 128);
  CHECK_EQ_INT(fs_work_embed_params(&m), 64000);
  /* 4 * 44160 + embedding 64000 + final norm 64 + output 64000 */
  CHECK_EQ_INT(fs_work_params(&m), 304704);
  /* With biases and LayerNorm shifts: QKV bias 64 + 2*16, out bias 64;
   * gated MLP biases 2 * 176 + 64; norms 2 * 128. */
  m.bias = 1;
  CHECK_EQ_INT(fs_work_attn_params(&m), 10240 + 160);
  CHECK_EQ_INT(fs_work_mlp_params(&m), 33792 + 416);
  CHECK_EQ_INT(fs_work_norm_params(&m), 256);
}

TEST(test_work_params_moe) {
  fs_job j;
  fs_job_init(&j, NULL);
  fs_model m = j.model;
  m.layers = 4, m.hidden = 64, m.heads = 8, m.kv_heads = 8, m.ffn = 256;
  m.seq_len = 128, m.vocab = 1000, m.experts = 8, m.top_k = 2, m.moe_every = 2;
  /* Megatron's moe_layer_freq: layers 0 and 2 are MoE. */
  CHECK(fs_work_layer_is_moe(&m, 0) && !fs_work_layer_is_moe(&m, 1));
  CHECK(fs_work_layer_is_moe(&m, 2) && !fs_work_layer_is_moe(&m, 3));
  CHECK_EQ_INT(fs_work_moe_layers(&m, 0, 4), 2);
  CHECK_EQ_INT(fs_work_moe_layers(&m, 1, 2), 1);
  CHECK_EQ_INT(fs_work_moe_layers(&m, 1, 1), 0);
  CHECK_EQ_INT(fs_work_moe_layers(&m, 2, 1), 1);
  int64_t attn = 4 * 64 * 64 + 4 * 64;      /* 16640 */
  int64_t mlp = 2 * 64 * 256 + 256 + 64;    /* 33088 */
  int64_t norms = 4 * 64, router = 64 * 8;  /* 256, 512 */
  CHECK_EQ_INT(fs_work_mlp_params(&m), mlp);
  CHECK_EQ_INT(fs_work_layer_params(&m, 0), attn + norms + 8 * mlp + router);
  CHECK_EQ_INT(fs_work_layer_params(&m, 1), attn + norms + mlp);
  int64_t rest = (1000 + 128) * 64 + 128;   /* embeddings + final norm */
  CHECK_EQ_INT(fs_work_params(&m), 4 * (attn + norms) + 2 * mlp + 2 * (8 * mlp + router) + rest);
  CHECK_EQ_INT(fs_work_active_params(&m),
               4 * (attn + norms) + 2 * mlp + 2 * (2 * mlp + router) + rest);
}

TEST(test_work_stage_params_by_hand) {
  fs_job j;
  small_job(&j);
  fs_work_shard sh;
  /* Per GPU and layer at t = 2: attention (4h^2 + QKV bias 3h) / 2 + out
   * bias h = (1048576 + 1536) / 2 + 512 = 525568; MLP (2hf + f) / 2 + h =
   * (2097152 + 2048) / 2 + 512 = 1050112; norms 4h = 2048. */
  int64_t layer = 525568 + 1050112 + 2048;
  CHECK_EQ_INT(layer, 1577728);
  fs_work_stage_params(&j, 0, &sh);
  CHECK_EQ_INT(sh.layers, 4);
  CHECK_EQ_INT(sh.moe_layers, 0);
  CHECK_EQ_INT(sh.expert, 0);
  /* stage 0: + word embedding 1024/2 * 512 + positions 256 * 512 */
  CHECK_EQ_INT(sh.dense, 4 * layer + 262144 + 131072);
  /* stage 1: + final norm 2h + the tied embedding's copy 262144 */
  fs_work_stage_params(&j, 1, &sh);
  CHECK_EQ_INT(sh.dense, 4 * layer + 1024 + 262144);
  /* Unsharded, one stage holds the whole model exactly once. */
  j.par.tp = 1, j.par.pp = 1;
  fs_work_stage_params(&j, 0, &sh);
  CHECK_EQ_INT(sh.dense, fs_work_params(&j.model));
  j.model.tied_embeddings = 0;
  fs_work_stage_params(&j, 0, &sh);
  CHECK_EQ_INT(sh.dense, fs_work_params(&j.model));
  /* A vocabulary tp does not divide: ceil(V / t) rows per rank. */
  j.model.tied_embeddings = 1;
  j.model.vocab = 1001, j.par.tp = 2;
  fs_work_stage_params(&j, 0, &sh);
  CHECK_EQ_INT(sh.dense, 8 * layer + 501 * 512 + 131072 + 1024);
}

TEST(test_work_stage_params_interleaved_and_experts) {
  fs_job j;
  small_job(&j);
  j.model.experts = 4, j.model.top_k = 2, j.model.moe_every = 2;
  j.par.ep = 2, j.par.sequence_parallel = 1;
  j.par.schedule = FS_PIPE_INTERLEAVED, j.par.virtual_stages = 2;
  /* Chunks of 8 / (2 * 2) = 2 layers: stage 0 holds chunks 0 and 2 (layers
   * 0, 1, 4, 5: MoE 0 and 4), stage 1 chunks 1 and 3 (layers 2, 3, 6, 7:
   * MoE 2 and 6). */
  fs_work_shard sh;
  int64_t common = 525568 + 2048, mlp = 1050112, router = 512 * 4;
  fs_work_stage_params(&j, 0, &sh);
  CHECK_EQ_INT(sh.layers, 4);
  CHECK_EQ_INT(sh.moe_layers, 2);
  CHECK_EQ_INT(sh.dense, 4 * common + 2 * mlp + 2 * router + 262144 + 131072);
  /* 4 experts / ep 2 = 2 experts per GPU, each split like the MLP. */
  CHECK_EQ_INT(sh.expert, 2 * 2 * mlp);
  fs_work_stage_params(&j, 1, &sh);
  CHECK_EQ_INT(sh.moe_layers, 2);
  CHECK_EQ_INT(sh.dense, 4 * common + 2 * mlp + 2 * router + 1024 + 262144);
}

/* ---- FLOPs ---- */

TEST(test_work_layer_flops_by_hand) {
  fs_model m = gpt3();
  const double b = 1, s = 2048, h = 12288, V = 51200;
  /* Narayanan et al.: 24 b s h^2 + 4 b s^2 h per layer forward. */
  CHECK_REL(fs_work_layer_fwd_flops(&m, 5, 1), 24 * b * s * h * h + 4 * b * s * s * h, 0,
            "FLOP");
  CHECK_REL(fs_work_logits_fwd_flops(&m, 1), 2 * b * s * h * V, 0, "FLOP");
  /* GQA and gating only change the matmul weights: h 64, k 2 of 8 heads,
   * f 176 gated: 2 b s (2*64*64 + 2*64*16 + 3*64*176) + 4 b s^2 h. */
  m.hidden = 64, m.heads = 8, m.kv_heads = 2, m.ffn = 176, m.gated = 1, m.seq_len = 128;
  CHECK_REL(fs_work_layer_fwd_flops(&m, 0, 3), 2.0 * 3 * 128 * (8192 + 2048 + 33792) +
            4.0 * 3 * 128 * 128 * 64, 0, "FLOP");
  /* MoE: top_k experts per token plus the router h x E. */
  m.kv_heads = 8, m.gated = 0, m.experts = 8, m.top_k = 2, m.moe_every = 2;
  CHECK_REL(fs_work_layer_fwd_flops(&m, 0, 1),
            2.0 * 128 * (4 * 64 * 64 + 2 * 2 * 64 * 176 + 64 * 8) + 4.0 * 128 * 128 * 64, 0,
            "FLOP");
  CHECK_REL(fs_work_layer_fwd_flops(&m, 1, 1),
            2.0 * 128 * (4 * 64 * 64 + 2 * 64 * 176) + 4.0 * 128 * 128 * 64, 0, "FLOP");
}

/* Narayanan et al. SC'21 eq. (3): with recomputation an iteration costs
 * F = 96 B s l h^2 (1 + s / (6h) + V / (16 l h)) FLOPs. */
TEST(test_work_iteration_flops_narayanan) {
  fs_job j;
  small_job(&j);
  j.par.recompute = 1;
  const int64_t B = 32, s = 256, l = 8, h = 512, V = 1024;
  /* Expanded: 96 B s l h^2 + 16 B s^2 l h + 6 B s h V, all exact in int64
   * and in double at this size. */
  int64_t F = 96 * B * s * l * h * h + 16 * B * s * s * l * h + 6 * B * s * h * V;
  CHECK_REL(fs_work_hw_flops(&j), (double)F, 0, "FLOP");
  /* MFU's model FLOPs leave the recomputed forward (24 + 4s/h per layer
   * per token, h^2 units) out: 72 B s l h^2 + 12 B s^2 l h + 6 B s h V. */
  int64_t Fm = 72 * B * s * l * h * h + 12 * B * s * s * l * h + 6 * B * s * h * V;
  CHECK_REL(fs_work_model_flops(&j), (double)Fm, 0, "FLOP");
  j.par.recompute = 0;
  CHECK_REL(fs_work_hw_flops(&j), (double)Fm, 0, "FLOP");
  /* 6ND with N = all parameters. */
  CHECK_REL(fs_work_flops_6nd(&j), 6.0 * B * s * (double)fs_work_params(&j.model), 0, "FLOP");

  /* GPT-3 175B, B 1536 (Narayanan's run): the formula as printed. */
  j.model = gpt3();
  j.train.global_batch = 1536, j.train.micro_batch = 1;
  j.par.recompute = 1;
  double Bd = 1536, sd = 2048, ld = 96, hd = 12288, Vd = 51200;
  double paper = 96 * Bd * sd * ld * hd * hd * (1 + sd / (6 * hd) + Vd / (16 * ld * hd));
  CHECK_REL(fs_work_hw_flops(&j), paper, 1e-14, "FLOP");
  CHECK_REL(paper, 4.5e18, 0.01, "FLOP"); /* order of magnitude sanity: ~4.5 EFLOP */
}

TEST(test_work_chunk_flops_sum_to_iteration) {
  fs_job j;
  small_job(&j);
  for (int rec = 0; rec <= 1; rec++) {
    for (int v = 1; v <= 2; v++) {
      j.par.recompute = rec;
      j.par.schedule = v == 2 ? FS_PIPE_INTERLEAVED : FS_PIPE_1F1B;
      j.par.virtual_stages = v;
      double per_gpu = 0;
      for (int64_t c = 0; c < j.par.pp * v; c++)
        for (int pass = 0; pass < 3; pass++) per_gpu += fs_work_chunk_flops(&j, c, pass);
      /* Each of the t ranks of a pipeline does 1/t, for each of the m
       * micro-batches of each of the d replicas. */
      CHECK_REL(per_gpu * 2 * 4 * 4, fs_work_hw_flops(&j), 1e-15, "FLOP");
    }
  }
  /* By hand: chunk 0 of stage 0 at v 1, layers 0..3, b 2, t 2:
   * 4 * (24 b s h^2 + 4 b s^2 h) / 2; the last chunk adds 2 b s h V / 2. */
  j.par.schedule = FS_PIPE_1F1B, j.par.virtual_stages = 1, j.par.recompute = 0;
  double layer = 24.0 * 2 * 256 * 512 * 512 + 4.0 * 2 * 256 * 256 * 512;
  CHECK_REL(fs_work_chunk_flops(&j, 0, FS_PASS_FWD), 4 * layer / 2, 0, "FLOP");
  CHECK_REL(fs_work_chunk_flops(&j, 0, FS_PASS_BWD), 2 * 4 * layer / 2, 0, "FLOP");
  CHECK_REL(fs_work_chunk_flops(&j, 0, FS_PASS_RECOMPUTE), 0, 0, "FLOP");
  double logits = 2.0 * 2 * 256 * 512 * 1024;
  CHECK_REL(fs_work_chunk_flops(&j, 1, FS_PASS_FWD), (4 * layer + logits) / 2, 0, "FLOP");
  j.par.recompute = 1;
  CHECK_REL(fs_work_chunk_flops(&j, 1, FS_PASS_RECOMPUTE), 4 * layer / 2, 0, "FLOP");
}

TEST(test_work_compute_time_and_mfu) {
  fs_job j;
  small_job(&j);
  j.hw.gpu_tflops = 312, j.hw.mfu_matmul = 0.5;
  /* 1.56e14 FLOP at 312e12 * 0.5 FLOP/s = 1 s */
  CHECK_REL(fs_work_compute_s(&j, 1.56e14), 1.0, 1e-15, "s");
  /* MFU: model FLOPs / (time * 16 GPUs * peak). */
  double F = fs_work_model_flops(&j);
  CHECK_REL(fs_work_mfu(&j, F / (16 * 312e12)), 1.0, 1e-15, "");
  CHECK_REL(fs_work_mfu(&j, 2 * F / (16 * 312e12)), 0.5, 1e-15, "");
}

/* ---- memory ---- */

/* Korthikanti et al. 2022, Table 2, for GPT-3 sizes (a s / h = 16; b = 1,
 * t = 8), every term an exact binary fraction. */
TEST(test_work_activations_korthikanti) {
  fs_job j;
  small_job(&j);
  j.model = gpt3();
  j.train.micro_batch = 1;
  j.par.tp = 1;
  const double sbh = 2048.0 * 12288, five_as_h = 5.0 * 96 * 2048 / 12288; /* 80 */
  CHECK_REL(five_as_h, 80, 0, "");
  /* no parallelism: s b h (34 + 5 a s / h) */
  CHECK_REL(fs_work_act_layer_bytes(&j, 0, 0), sbh * (34 + 80), 0, "B");
  /* tensor parallel: s b h (10 + 24 / t + 5 a s / (h t)) */
  j.par.tp = 8;
  CHECK_REL(fs_work_act_layer_bytes(&j, 0, 0), sbh * (10 + 24.0 / 8 + 80.0 / 8), 0, "B");
  /* + sequence parallel: s b h / t (34 + 5 a s / h) */
  j.par.sequence_parallel = 1;
  CHECK_REL(fs_work_act_layer_bytes(&j, 0, 0), sbh / 8 * (34 + 80), 0, "B");
  /* full recomputation keeps the layer input: 2 s b h (/ t with SP) */
  CHECK_REL(fs_work_act_layer_bytes(&j, 0, 1), 2 * sbh / 8, 0, "B");
  j.par.sequence_parallel = 0;
  CHECK_REL(fs_work_act_layer_bytes(&j, 0, 1), 2 * sbh, 0, "B");
  /* The generalisation by hand at t = 1. GQA with k = a/4: K and V shrink
   * 4x, attention's split part is 4 + 4 * 1/4 = 5 s b h instead of 8. */
  j.par.tp = 1;
  j.model.kv_heads = 24;
  CHECK_REL(fs_work_act_layer_bytes(&j, 0, 0), sbh * (34 - 3 + 80), 0, "B");
  /* gated: the MLP's inner part 6 s b f = 24 s b h instead of 16 */
  j.model.kv_heads = 96, j.model.gated = 1;
  CHECK_REL(fs_work_act_layer_bytes(&j, 0, 0), sbh * (34 + 8 + 80), 0, "B");
  /* MoE top_k 2: inner 2 * 16 s b h plus 2 dispatched inputs 2 * 2 s b h */
  j.model.gated = 0, j.model.experts = 8, j.model.top_k = 2;
  CHECK_REL(fs_work_act_layer_bytes(&j, 1, 0), sbh * (34 + 16 + 4 + 80), 0, "B");
}

/* The closed-form in-flight counts equal the peak of forwards-without-
 * backward in the orders pipeline.c generates. */
TEST(test_work_inflight_matches_pipeline_orders) {
  fs_job j;
  small_job(&j);
  static fs_pipe_op ops[3 * 24 * 4];
  for (int sch = 0; sch <= FS_PIPE_ZBH1; sch++) {
    for (int32_t p = 1; p <= 6; p++) {
      for (int32_t m = 1; m <= 24; m++) {
        for (int32_t v = 1; v <= 4; v++) {
          if ((sch == FS_PIPE_INTERLEAVED) != (v > 1)) continue;
          if (sch == FS_PIPE_INTERLEAVED && (m % p || p < 2)) continue;
          j.par.schedule = (fs_pipe_schedule)sch, j.par.pp = p, j.par.virtual_stages = v;
          j.par.dp = 1, j.train.micro_batch = 1, j.train.global_batch = m;
          for (int32_t s = 0; s < p; s++) {
            fs_err err = {0, ""};
            if (fs_pipe_order((fs_pipe_schedule)sch, p, m, v, s, ops, &err)) {
              test_fail(__FILE__, __LINE__, "fs_pipe_order: %s", err.msg);
              return;
            }
            double want =
                fs_pipe_max_in_flight(ops, fs_pipe_ops_per_device((fs_pipe_schedule)sch, m, v));
            double got = fs_work_inflight(&j, s) * v;
            if (got != want)
              test_fail(__FILE__, __LINE__,
                        "%s p=%d m=%d v=%d stage %d: in flight %g chunks, schedule has %g",
                        fs_pipe_schedule_name((fs_pipe_schedule)sch), p, m, v, s, got, want);
          }
        }
      }
    }
  }
  /* Korthikanti sec. 4.2.3: interleaving's first stage holds
   * p (1 + (p - 1) / (p v)) micro-batches' worth of its layers. */
  j.par.schedule = FS_PIPE_INTERLEAVED, j.par.pp = 8, j.par.virtual_stages = 2;
  j.train.global_batch = 96;
  CHECK_REL(fs_work_inflight(&j, 0), 8 * (1 + 7.0 / 16), 0, "micro-batches");
}

TEST(test_work_memory_by_hand) {
  fs_job j;
  small_job(&j);
  fs_work_mem mem;
  fs_work_memory(&j, 0, &mem);
  double psi = 4 * 1577728 + 262144 + 131072; /* stage 0's parameters per GPU */
  CHECK_REL(mem.weight_bytes, 2 * psi, 0, "B");
  CHECK_REL(mem.grad_bytes, 2 * psi, 0, "B");
  CHECK_REL(mem.optim_bytes, 12 * psi, 0, "B");
  /* Activations per layer and micro-batch, t 2 without SP:
   * s b h (10 + 24/t + 5 a s / (h t)) = 262144 (10 + 12 + 10) = 8388608;
   * stage 0 of 1F1B holds min(p, m) = 2 micro-batches of its 4 layers,
   * plus their embedding dropout masks s b h = 262144 each. */
  CHECK_REL(fs_work_act_layer_bytes(&j, 0, 0), 8388608, 0, "B");
  CHECK_REL(mem.act_bytes, 2 * 4 * 8388608.0 + 2 * 262144.0, 0, "B");
  CHECK_REL(mem.total_bytes, 16 * psi + mem.act_bytes, 0, "B");
  /* The last stage: one micro-batch, plus the final norm and projection
   * inputs 4 s b h and the fp32 logits 4 s b V / t. */
  fs_work_memory(&j, 1, &mem);
  CHECK_REL(mem.act_bytes, 4 * 8388608.0 + 4 * 262144.0 + 4.0 * 256 * 2 * 1024 / 2, 0, "B");
  fs_work_memory_peak(&j, &mem);
  CHECK_EQ_INT(mem.stage, 0);
  /* Full recomputation: 2 s b h per layer (no SP), plus one layer's
   * working set. */
  j.par.recompute = 1;
  fs_work_memory(&j, 0, &mem);
  CHECK_REL(mem.act_bytes, 2 * 4 * 2 * 262144.0 + 8388608.0 + 2 * 262144.0, 0, "B");
  /* GPipe holds all m = 4 micro-batches. */
  j.par.recompute = 0, j.par.schedule = FS_PIPE_GPIPE;
  fs_work_memory(&j, 0, &mem);
  CHECK_REL(mem.act_bytes, 4 * 4 * 8388608.0 + 4 * 262144.0, 0, "B");
}

/* Rajbhandari et al. SC'20 sec. 5 / Figure 1: per-GPU model states of
 * 2 + 2 + 12 bytes per parameter, with N = 64 data-parallel ranks:
 * baseline 16 Psi, P_os 4 Psi + 12 Psi / N, P_os+g 2 Psi + 14 Psi / N,
 * P_os+g+p 16 Psi / N. */
TEST(test_work_zero_stages) {
  fs_job j;
  small_job(&j);
  j.par.tp = 1, j.par.pp = 1, j.par.dp = 64, j.train.global_batch = 128;
  double psi = (double)fs_work_params(&j.model);
  const double want[4][3] = {{2, 2, 12}, {2, 2, 12.0 / 64}, {2, 2.0 / 64, 12.0 / 64},
                             {2.0 / 64, 2.0 / 64, 12.0 / 64}};
  double per_psi[4];
  for (int z = 0; z <= 3; z++) {
    j.par.zero = z;
    fs_work_mem mem;
    fs_work_memory(&j, 0, &mem);
    CHECK_REL(mem.weight_bytes, want[z][0] * psi, 1e-15, "B");
    CHECK_REL(mem.grad_bytes, want[z][1] * psi, 1e-15, "B");
    CHECK_REL(mem.optim_bytes, want[z][2] * psi, 1e-15, "B");
    per_psi[z] = (mem.weight_bytes + mem.grad_bytes + mem.optim_bytes) / psi;
  }
  /* The paper's 7.5B-parameter example: 120, 31.4, 16.6, 1.9 GB. */
  CHECK_REL(per_psi[0] * 7.5, 120, 0, "GB");
  CHECK_REL(per_psi[1] * 7.5, 31.4, 0.05 / 31.4, "GB");
  CHECK_REL(per_psi[2] * 7.5, 16.6, 0.05 / 16.6, "GB");
  CHECK_REL(per_psi[3] * 7.5, 1.9, 0.05 / 1.9, "GB");
  /* fp32 training keeps no master copy: 4 + 4 + 8 bytes. */
  j.par.zero = 0, j.model.dtype_bytes = 4;
  fs_work_mem mem;
  fs_work_memory(&j, 0, &mem);
  CHECK_REL(mem.weight_bytes + mem.grad_bytes + mem.optim_bytes, 16 * psi, 1e-15, "B");
  CHECK_REL(mem.optim_bytes, 8 * psi, 1e-15, "B");
  /* Expert parameters shard over dp / ep = 2 ranks, the rest over dp = 4. */
  small_job(&j);
  j.model.experts = 4, j.model.moe_every = 1, j.par.ep = 2, j.par.sequence_parallel = 1;
  j.par.zero = 1;
  fs_work_memory(&j, 0, &mem);
  CHECK_REL(mem.optim_bytes, 12 * ((double)mem.shard.dense / 4 + (double)mem.shard.expert / 2),
            1e-15, "B");
}

/* ---- communication ---- */

TEST(test_work_comm_by_hand) {
  fs_job j;
  small_job(&j);
  const double bshD = 2.0 * 256 * 512 * 2; /* 524288 bytes */
  CHECK_REL(fs_work_tp_bytes(&j), bshD, 0, "B");
  CHECK_REL(fs_work_pp_bytes(&j), bshD / 2, 0, "B");
  CHECK_EQ_INT(fs_work_tp_colls_per_layer(&j, FS_PASS_FWD), 2);
  CHECK_EQ_INT(fs_work_tp_colls_per_layer(&j, FS_PASS_BWD), 2);
  CHECK_EQ_INT(fs_work_tp_colls_per_layer(&j, FS_PASS_RECOMPUTE), 0);
  fs_work_comm c;
  fs_work_comm_stage(&j, 0, &c);
  /* TP: m 4 x (4 layers x 4 all-reduces + the embedding's) = 68 of bshD;
   * a ring all-reduce of 2 ranks sends 2 (2-1)/2 = 1 buffer. */
  CHECK_REL(c.kind[FS_PAR_TP].colls, 68, 0, "");
  CHECK_REL(c.kind[FS_PAR_TP].size_bytes, 68 * bshD, 0, "B");
  CHECK_REL(c.kind[FS_PAR_TP].wire_bytes, 68 * bshD, 0, "B");
  CHECK_EQ_INT(c.kind[FS_PAR_TP].group, 2);
  /* PP: stage 0 sends each micro-batch's activation forward: 4 x bshD/t. */
  CHECK_REL(c.kind[FS_PAR_PP].colls, 4, 0, "");
  CHECK_REL(c.kind[FS_PAR_PP].wire_bytes, 4 * bshD / 2, 0, "B");
  /* DP, ZeRO 0: one bucket (< 25 MiB) all-reduced over 4: 2 * 3/4 G. */
  double G = 2 * (4 * 1577728.0 + 262144 + 131072);
  CHECK_REL(c.kind[FS_PAR_DP].colls, 1, 0, "");
  CHECK_REL(c.kind[FS_PAR_DP].size_bytes, G, 0, "B");
  CHECK_REL(c.kind[FS_PAR_DP].wire_bytes, 1.5 * G, 1e-15, "B");
  CHECK_REL(c.kind[FS_PAR_EP].colls, 0, 0, "");
  /* Tied embeddings: first and last stage all-reduce V/t h D. */
  CHECK_REL(c.emb.size_bytes, 512.0 * 512 * 2, 0, "B");
  fs_work_comm_stage(&j, 1, &c);
  /* The last stage: the output layer's input-gradient all-reduce. */
  CHECK_REL(c.kind[FS_PAR_TP].colls, 68, 0, "");
  CHECK_REL(c.kind[FS_PAR_PP].colls, 4, 0, ""); /* gradients back */
  CHECK_REL(c.emb.colls, 1, 0, "");
  /* ZeRO 1: reduce-scatter + all-gather, same wire bytes as all-reduce;
   * smaller buckets split it. */
  j.par.zero = 1, j.par.grad_bucket_bytes = 1 << 20;
  fs_work_comm_stage(&j, 0, &c);
  double buckets = ceil(G / (1 << 20));
  CHECK_REL(c.kind[FS_PAR_DP].colls, 2 * buckets, 0, "");
  CHECK_REL(c.kind[FS_PAR_DP].size_bytes, 2 * G, 1e-15, "B");
  CHECK_REL(c.kind[FS_PAR_DP].wire_bytes, 1.5 * G, 1e-15, "B");
  /* SP: 4 per layer and pass (all-gather + reduce-scatter pairs), (t-1)/t
   * each; the output layer adds an all-gather on the last stage. */
  j.par.sequence_parallel = 1, j.par.recompute = 1;
  CHECK_EQ_INT(fs_work_tp_colls_per_layer(&j, FS_PASS_RECOMPUTE), 4);
  fs_work_comm_stage(&j, 1, &c);
  CHECK_REL(c.kind[FS_PAR_TP].colls, 4 * (4 * 12 + 2), 0, "");
  CHECK_REL(c.kind[FS_PAR_TP].wire_bytes, 4 * (4 * 12 + 2) * bshD / 2, 0, "B");
}

TEST(test_work_comm_zero23_and_experts) {
  fs_job j;
  small_job(&j);
  /* pp 1, t 2, d 8: m = 32 / (2 * 8) = 2 */
  j.par.pp = 1, j.par.dp = 8, j.par.zero = 2;
  fs_work_shard sh;
  fs_work_stage_params(&j, 0, &sh);
  double G = 2.0 * (double)sh.dense;
  fs_work_comm c;
  fs_work_comm_stage(&j, 0, &c);
  /* ZeRO 2: reduce-scatter every micro-batch, one all-gather: (2+1) 7/8 G */
  CHECK_REL(c.kind[FS_PAR_DP].size_bytes, 3 * G, 1e-15, "B");
  CHECK_REL(c.kind[FS_PAR_DP].wire_bytes, 3 * G * 7 / 8, 1e-15, "B");
  /* ZeRO 3 with recompute: per micro-batch and unit (8 layers + the
   * embeddings) all-gathers before fwd, recompute and bwd, one
   * reduce-scatter: 2 x 9 x 4 collectives, 2 x 4 G in all. */
  j.par.zero = 3, j.par.recompute = 1;
  fs_work_comm_stage(&j, 0, &c);
  CHECK_REL(c.kind[FS_PAR_DP].colls, 2 * 9 * 4, 0, "");
  CHECK_REL(c.kind[FS_PAR_DP].size_bytes, 8 * G, 1e-15, "B");
  CHECK_REL(c.kind[FS_PAR_DP].wire_bytes, 8 * G * 7 / 8, 1e-15, "B");
  /* Rajbhandari sec. 7.2.2: with one micro-batch and no recompute ZeRO-3
   * moves 3 Psi, 1.5 x the all-reduce's 2 Psi. */
  j.par.recompute = 0, j.train.global_batch = 16; /* m = 1 */
  fs_work_comm_stage(&j, 0, &c);
  double zero3 = c.kind[FS_PAR_DP].wire_bytes;
  j.par.zero = 0;
  fs_work_comm_stage(&j, 0, &c);
  CHECK_REL(zero3 / c.kind[FS_PAR_DP].wire_bytes, 1.5, 1e-15, "");

  /* Experts: E 4, top_k 2, every other layer, ep 2 (SP on, as required). */
  small_job(&j);
  j.model.experts = 4, j.model.top_k = 2, j.model.moe_every = 2;
  j.par.ep = 2, j.par.sequence_parallel = 1;
  const double bshD = 2.0 * 256 * 512 * 2;
  /* per GPU send buffer b s h top_k D / t */
  CHECK_REL(fs_work_ep_bytes(&j), bshD * 2 / 2, 0, "B");
  fs_work_comm_stage(&j, 0, &c);
  /* stage 0 = layers 0..3, MoE layers 0 and 2: m 4 x 2 layers x 4 */
  CHECK_REL(c.kind[FS_PAR_EP].colls, 32, 0, "");
  CHECK_REL(c.kind[FS_PAR_EP].wire_bytes, 32 * bshD * 0.5, 0, "B");
  CHECK_EQ_INT(c.kind[FS_PAR_EP].group, 2);
  /* Expert gradients reduce over dp / ep = 2 ranks, the rest over 4. */
  fs_work_stage_params(&j, 0, &sh);
  CHECK_EQ_INT(c.dp_expert.group, 2);
  CHECK_REL(c.dp_expert.wire_bytes, 2.0 * (double)sh.expert * 2 * 1 / 2, 1e-15, "B");
  CHECK_REL(c.kind[FS_PAR_DP].wire_bytes - c.dp_expert.wire_bytes,
            2.0 * (double)sh.dense * 2 * 3 / 4, 1e-15, "B");
}

/* ---- ranks and placement ---- */

TEST(test_work_coords_round_trip) {
  fs_job j;
  small_job(&j);
  j.par.ep = 2;
  fs_rank_coords rc;
  /* 13 = 1 + 2 (2 + 4 * 1): tp 1, dp 2, pp 1; ep 2 % 2 = 0, edp 1 */
  fs_job_coords(&j, 13, &rc);
  CHECK_EQ_INT(rc.tp, 1);
  CHECK_EQ_INT(rc.dp, 2);
  CHECK_EQ_INT(rc.pp, 1);
  CHECK_EQ_INT(rc.ep, 0);
  CHECK_EQ_INT(rc.edp, 1);
  for (int32_t g = 0; g < 16; g++) {
    fs_job_coords(&j, g, &rc);
    CHECK_EQ_INT(fs_job_gpu_of(&j, &rc), g);
  }
}

/* With cp: gpu = tp + t (cp + c (dp + d pp)), Megatron-Core's order; with
 * cp = 1 exactly the older tp + t (dp + d pp). */
TEST(test_work_coords_round_trip_cp) {
  fs_job j;
  small_job(&j);
  j.par.ep = 2;
  fs_rank_coords rc;
  for (int32_t g = 0; g < 16; g++) {
    fs_job_coords(&j, g, &rc);
    CHECK_EQ_INT(rc.cp, 0);
    CHECK_EQ_INT(g, rc.tp + 2 * (rc.dp + 4 * rc.pp));
  }
  j.par.cp = 2;
  CHECK_EQ_INT(fs_job_gpus(&j), 32);
  /* 27 = 1 + 2 (1 + 2 (2 + 4 * 1)): tp 1, cp 1, dp 2, pp 1; ep 0, edp 1 */
  fs_job_coords(&j, 27, &rc);
  CHECK_EQ_INT(rc.tp, 1);
  CHECK_EQ_INT(rc.cp, 1);
  CHECK_EQ_INT(rc.dp, 2);
  CHECK_EQ_INT(rc.pp, 1);
  CHECK_EQ_INT(rc.ep, 0);
  CHECK_EQ_INT(rc.edp, 1);
  int seen[32] = {0};
  for (int32_t g = 0; g < 32; g++) {
    fs_job_coords(&j, g, &rc);
    CHECK_EQ_INT(fs_job_gpu_of(&j, &rc), g);
    CHECK_EQ_INT(g, rc.tp + 2 * (rc.cp + 2 * (rc.dp + 4 * rc.pp)));
    seen[rc.tp + 2 * rc.cp + 4 * rc.dp + 16 * rc.pp]++;
  }
  for (int i = 0; i < 32; i++) CHECK_EQ_INT(seen[i], 1);
  /* A positional initialiser of the five older fields means cp rank 0. */
  fs_rank_coords old = {1, 2, 1, 0, 1, 0};
  CHECK_EQ_INT(fs_job_gpu_of(&j, &old), 1 + 2 * (0 + 2 * (2 + 4 * 1)));
}

/* ---- context parallelism ---- */

/* Per-GPU FLOPs divide by cp (the s^2 term too, load-balanced), the job's
 * FLOPs do not; the micro-batches per iteration stay B / (b d). */
TEST(test_work_cp_flops) {
  fs_job j;
  small_job(&j);
  j.par.cp = 2;
  CHECK_EQ_INT(fs_work_microbatches(&j), 4);
  double layer = 24.0 * 2 * 256 * 512 * 512 + 4.0 * 2 * 256 * 256 * 512;
  double logits = 2.0 * 2 * 256 * 512 * 1024;
  CHECK_REL(fs_work_chunk_flops(&j, 0, FS_PASS_FWD), 4 * layer / (2 * 2), 0, "FLOP");
  CHECK_REL(fs_work_chunk_flops(&j, 0, FS_PASS_BWD), 2 * 4 * layer / (2 * 2), 0, "FLOP");
  CHECK_REL(fs_work_chunk_flops(&j, 1, FS_PASS_FWD), (4 * layer + logits) / (2 * 2), 0, "FLOP");
  for (int rec = 0; rec <= 1; rec++) {
    j.par.recompute = rec;
    double per_gpu = 0;
    for (int64_t c = 0; c < 2; c++)
      for (int pass = 0; pass < 3; pass++) per_gpu += fs_work_chunk_flops(&j, c, pass);
    /* t 2 x c 2 ranks share a pipeline's work, for m 4 micro-batches of d 4
     * replicas. */
    CHECK_REL(per_gpu * 2 * 2 * 4 * 4, fs_work_hw_flops(&j), 1e-15, "FLOP");
  }
  /* MFU counts the cp ranks: 32 GPUs. */
  double F = fs_work_model_flops(&j);
  CHECK_REL(fs_work_mfu(&j, F / (32 * 100e12)), 1.0, 1e-15, "");
}

/* Activations divide by cp, parameters do not; ZeRO shards over dp cp. */
TEST(test_work_cp_memory) {
  fs_job j;
  small_job(&j);
  fs_work_mem one, two;
  for (int z = 0; z <= 1; z++) {
    for (int rec = 0; rec <= 1; rec++) {
      small_job(&j);
      j.par.zero = z, j.par.recompute = rec;
      fs_work_memory(&j, 0, &one);
      double act0 = fs_work_act_layer_bytes(&j, 0, rec);
      j.par.cp = 2;
      fs_work_memory(&j, 0, &two);
      CHECK_REL(fs_work_act_layer_bytes(&j, 0, rec), act0 / 2, 0, "B");
      CHECK_REL(two.act_bytes, one.act_bytes / 2, 0, "B");
      CHECK_EQ_INT(two.shard.dense, one.shard.dense);
      CHECK_REL(two.weight_bytes, one.weight_bytes, 0, "B");
      CHECK_REL(two.grad_bytes, one.grad_bytes, 0, "B");
      CHECK_REL(two.optim_bytes, z ? one.optim_bytes / 2 : one.optim_bytes, 0, "B");
      fs_work_memory(&j, 1, &one);
      j.par.cp = 1;
      fs_work_memory(&j, 1, &two);
      CHECK_REL(one.act_bytes, two.act_bytes / 2, 0, "B");
    }
  }
  /* By hand, stage 0, 1F1B, ZeRO 1: psi parameters per GPU, 12 psi / (d c)
   * optimizer bytes; s/c b h (10 + 24/t + 5 a s / (h t)) per layer. */
  small_job(&j);
  j.par.cp = 2, j.par.zero = 1;
  fs_work_memory(&j, 0, &one);
  double psi = 4 * 1577728 + 262144 + 131072;
  CHECK_REL(one.weight_bytes, 2 * psi, 0, "B");
  CHECK_REL(one.optim_bytes, 12 * psi / 8, 0, "B");
  CHECK_REL(fs_work_act_layer_bytes(&j, 0, 0), 128.0 * 2 * 512 * 32, 0, "B");
  CHECK_REL(one.act_bytes, 2 * 4 * 4194304.0 + 2 * 131072.0, 0, "B");
  CHECK_EQ_INT(fs_work_dp_group(&j, 0), 8);
  j.model.experts = 4, j.model.top_k = 2, j.par.ep = 2, j.par.sequence_parallel = 1;
  CHECK_EQ_INT(fs_work_dp_group(&j, 1), 4); /* d / ep c = 4 / 2 x 2 */
}

/* Ring attention bytes by hand, and the stage's per-iteration totals. */
TEST(test_work_cp_ring_traffic) {
  fs_job j;
  small_job(&j);
  CHECK_EQ_INT(fs_work_cp_steps_per_layer(&j, FS_PASS_FWD), 0);
  CHECK_EQ_INT(fs_work_cp_steps_per_layer(&j, FS_PASS_BWD), 0);
  fs_work_comm c;
  fs_work_comm_stage(&j, 0, &c);
  CHECK_REL(c.kind[FS_PAR_CP].colls, 0, 0, "");
  CHECK_EQ_INT(c.kind[FS_PAR_CP].group, 1);
  j.par.cp = 2;
  /* K and V of s/c = 128 tokens, k h / a = 512 wide, split over t 2:
   * 2 b (s/c) (h k/a) D / t = 2 x 2 x 128 x 512 x 2 / 2 = 262144. */
  CHECK_REL(fs_work_cp_step_bytes(&j, FS_PASS_FWD), 262144, 0, "B");
  CHECK_REL(fs_work_cp_step_bytes(&j, FS_PASS_RECOMPUTE), 262144, 0, "B");
  CHECK_REL(fs_work_cp_step_bytes(&j, FS_PASS_BWD), 524288, 0, "B");
  CHECK_EQ_INT(fs_work_cp_steps_per_layer(&j, FS_PASS_FWD), 1);
  CHECK_EQ_INT(fs_work_cp_steps_per_layer(&j, FS_PASS_RECOMPUTE), 0);
  CHECK_EQ_INT(fs_work_cp_steps_per_layer(&j, FS_PASS_BWD), 1);
  fs_work_comm_stage(&j, 0, &c);
  /* m 4 x 4 layers x (1 forward + 1 backward step) */
  CHECK_REL(c.kind[FS_PAR_CP].colls, 32, 0, "");
  CHECK_REL(c.kind[FS_PAR_CP].size_bytes, 16 * 262144.0 + 16 * 524288.0, 0, "B");
  CHECK_REL(c.kind[FS_PAR_CP].wire_bytes, c.kind[FS_PAR_CP].size_bytes, 0, "B");
  CHECK_EQ_INT(c.kind[FS_PAR_CP].group, 2);
  /* The other kinds see s/c tokens; DP reduces over d c = 8 ranks. */
  const double bshD = 2.0 * 256 * 512 * 2;
  CHECK_REL(fs_work_tp_bytes(&j), bshD / 2, 0, "B");
  CHECK_REL(fs_work_pp_bytes(&j), bshD / 4, 0, "B");
  CHECK_REL(c.kind[FS_PAR_TP].size_bytes, 68 * bshD / 2, 0, "B");
  double G = 2 * (4 * 1577728.0 + 262144 + 131072);
  CHECK_EQ_INT(c.kind[FS_PAR_DP].group, 8);
  CHECK_REL(c.kind[FS_PAR_DP].size_bytes, G, 0, "B");
  CHECK_REL(c.kind[FS_PAR_DP].wire_bytes, 2 * G * 7 / 8, 1e-15, "B");
  /* The recomputed forward repeats the ring. */
  j.par.recompute = 1;
  fs_work_comm_stage(&j, 0, &c);
  CHECK_REL(c.kind[FS_PAR_CP].colls, 48, 0, "");
  CHECK_REL(c.kind[FS_PAR_CP].size_bytes, 32 * 262144.0 + 16 * 524288.0, 0, "B");

  /* Llama 3 405B at 128K tokens (Dubey et al. 2024, sec. 3.3.2: cp 16,
   * tp 8): h 16384, 128 heads, 8 KV heads of 128, b 1, bf16. One forward
   * step sends K and V of 131072 / 16 = 8192 tokens x 1024 / 8:
   * 2 x 8192 x 128 x 2 = 4 MiB; backward 8 MiB; 15 steps each. */
  fs_job_init(&j, "llama3");
  j.model.layers = 126, j.model.hidden = 16384, j.model.ffn = 53248;
  j.model.heads = 128, j.model.kv_heads = 8, j.model.seq_len = 131072;
  j.model.vocab = 128256, j.model.gated = 1, j.model.bias = 0, j.model.learned_pos = 0;
  j.model.tied_embeddings = 0;
  j.train.global_batch = 16, j.train.micro_batch = 1;
  j.par.tp = 8, j.par.cp = 16, j.par.pp = 16, j.par.dp = 1, j.par.sequence_parallel = 1;
  CHECK_REL(fs_work_cp_step_bytes(&j, FS_PASS_FWD), 4194304, 0, "B");
  CHECK_REL(fs_work_cp_step_bytes(&j, FS_PASS_BWD), 8388608, 0, "B");
  CHECK_EQ_INT(fs_work_cp_steps_per_layer(&j, FS_PASS_FWD), 15);
  CHECK_EQ_INT(fs_work_cp_steps_per_layer(&j, FS_PASS_BWD), 15);
  /* Stage 0 holds 7 layers (126 over 16, uneven): 16 micro-batches x 7
   * x 15 x (4 + 8) MiB. */
  fs_work_comm_stage(&j, 0, &c);
  CHECK_REL(c.kind[FS_PAR_CP].colls, 16.0 * 7 * 30, 0, "");
  CHECK_REL(c.kind[FS_PAR_CP].size_bytes, 16.0 * 7 * 15 * 12 * 1048576, 0, "B");
  fs_work_comm_stage(&j, 1, &c);
  CHECK_REL(c.kind[FS_PAR_CP].size_bytes, 16.0 * 8 * 15 * 12 * 1048576, 0, "B");
}

/* ---- uneven pipeline stages ---- */

/* The rule written out naively: base = ceil(L / V) layers everywhere, then
 * take one from chunk 0, V-1, 1, V-2, ... until the deficit is paid. */
static void naive_split(int64_t L, int64_t V, int64_t *n) {
  int64_t base = (L + V - 1) / V, deficit = V * base - L;
  for (int64_t c = 0; c < V; c++) n[c] = base;
  for (int64_t k = 0; k < deficit; k++) n[k % 2 ? V - 1 - k / 2 : k / 2]--;
}

TEST(test_work_uneven_chunks) {
  fs_job j;
  small_job(&j);
  int64_t first, n[64];
  /* Llama 3 405B: 126 layers on pp 16 -> 7, 8 x 14, 7 (Dubey et al. 2024,
   * sec. 3.3.2). */
  j.model.layers = 126, j.par.pp = 16;
  for (int64_t c = 0, next = 0; c < 16; c++) {
    int64_t want = c == 0 || c == 15 ? 7 : 8;
    CHECK_EQ_INT(fs_work_chunk_layers(&j, c, &first), want);
    CHECK_EQ_INT(first, next);
    next += want;
  }
  CHECK_EQ_INT(fs_work_chunk_layers(&j, 16, &first), 0);
  CHECK_EQ_INT(first, 126);
  /* 10 over 4: 2, 3, 3, 2 */
  j.model.layers = 10, j.par.pp = 4;
  static const int64_t ten[4] = {2, 3, 3, 2}, ten_first[4] = {0, 2, 5, 8};
  for (int64_t c = 0; c < 4; c++) {
    CHECK_EQ_INT(fs_work_chunk_layers(&j, c, &first), ten[c]);
    CHECK_EQ_INT(first, ten_first[c]);
  }
  /* Against the naive rule, for every V up to 24 and L in [V, 4V], with
   * the interleaved chunks (v 2) too: counts, contiguity, coverage. */
  for (int v = 1; v <= 2; v++)
    for (int64_t p = 1; p * v <= 24; p++)
      for (int64_t L = p * v; L <= 4 * p * v; L++) {
        int64_t V = p * v;
        j.model.layers = L, j.par.pp = p, j.par.virtual_stages = v;
        naive_split(L, V, n);
        int64_t next = 0;
        for (int64_t c = 0; c < V; c++) {
          int64_t got = fs_work_chunk_layers(&j, c, &first);
          if (got != n[c] || first != next)
            test_fail(__FILE__, __LINE__, "L %lld V %lld chunk %lld: want %lld layers from %lld, "
                      "got %lld from %lld", (long long)L, (long long)V, (long long)c,
                      (long long)n[c], (long long)next, (long long)got, (long long)first);
          next += n[c];
        }
        CHECK_EQ_INT(next, L);
      }
  /* Even splits keep L / V (the older rule) and a NULL first_layer is fine. */
  j.model.layers = 96, j.par.pp = 8, j.par.virtual_stages = 2;
  for (int64_t c = 0; c < 16; c++) CHECK_EQ_INT(fs_work_chunk_layers(&j, c, NULL), 6);
}

/* The uneven split reaches the parameters, FLOPs and memory of a stage. */
TEST(test_work_uneven_stage_sums) {
  fs_job j;
  small_job(&j);
  j.model.layers = 10, j.par.pp = 4, j.par.dp = 1;
  fs_err err = {0, ""};
  CHECK_OK(fs_job_validate(&j, &err), &err);
  fs_work_shard sh[4];
  int64_t total = 0;
  for (int32_t s = 0; s < 4; s++) {
    fs_work_stage_params(&j, s, &sh[s]);
    total += sh[s].layers;
  }
  CHECK_EQ_INT(sh[0].layers, 2);
  CHECK_EQ_INT(sh[1].layers, 3);
  CHECK_EQ_INT(sh[3].layers, 2);
  CHECK_EQ_INT(total, 10);
  /* A middle stage: 3 layers of 1577728 per GPU (test_work_stage_params_by_hand). */
  CHECK_EQ_INT(sh[1].dense, 3 * 1577728);
  double layer = 24.0 * 2 * 256 * 512 * 512 + 4.0 * 2 * 256 * 256 * 512;
  CHECK_REL(fs_work_chunk_flops(&j, 0, FS_PASS_FWD), 2 * layer / 2, 0, "FLOP");
  CHECK_REL(fs_work_chunk_flops(&j, 1, FS_PASS_FWD), 3 * layer / 2, 0, "FLOP");
  double per_gpu = 0;
  for (int64_t c = 0; c < 4; c++)
    for (int pass = 0; pass < 3; pass++) per_gpu += fs_work_chunk_flops(&j, c, pass);
  /* t 2 ranks per stage, m = 32 / 2 = 16 micro-batches, d 1 */
  CHECK_REL(per_gpu * 2 * 16, fs_work_hw_flops(&j), 1e-15, "FLOP");
  fs_work_mem mem;
  fs_work_memory(&j, 1, &mem);
  /* 1F1B stage 1 of 4 holds min(p - 1, m) = 3 micro-batches of 3 layers. */
  CHECK_REL(mem.act_bytes, 3 * 3 * 8388608.0, 0, "B");
  /* MoE layer counts follow the chunk's own layers: every 2nd of 10. */
  j.model.experts = 4, j.model.top_k = 2, j.model.moe_every = 2;
  int64_t moe = 0;
  for (int32_t s = 0; s < 4; s++) {
    fs_work_stage_params(&j, s, &sh[s]);
    moe += sh[s].moe_layers;
  }
  CHECK_EQ_INT(sh[0].moe_layers, 1); /* layers 0, 1 */
  CHECK_EQ_INT(sh[1].moe_layers, 2); /* layers 2, 3, 4 */
  CHECK_EQ_INT(sh[2].moe_layers, 1); /* layers 5, 6, 7 */
  CHECK_EQ_INT(sh[3].moe_layers, 1); /* layers 8, 9 */
  CHECK_EQ_INT(moe, 5);
}

/* ---- job files ---- */

#define BASE_JSON                                                                   \
  "{\"model\": {\"layers\": 8, \"hidden\": 512, \"heads\": 8, \"seq_len\": 256,"     \
  " \"vocab\": 1024},"                                                              \
  " \"training\": {\"global_batch\": 32, \"micro_batch\": 2},"                      \
  " \"parallelism\": {\"tp\": 2, \"pp\": 2, \"dp\": 4},"                            \
  " \"hardware\": {\"gpu_tflops\": 100, \"hbm_gib\": 80, \"gpus_per_node\": 4,"     \
  " \"nvlink_gbps\": 1000},"                                                        \
  " \"topology\": {\"type\": \"leafspine\", \"leaves\": 4, \"spines\": 2,"          \
  " \"hosts_per_leaf\": 4, \"host_gbps\": 100}}"

/* Sets (or with value NULL deletes) the member at dotted path `path` of
 * the JSON document, creating objects on the way. */
static void set_path(cJSON *root, const char *path, const char *value) {
  char buf[256];
  snprintf(buf, sizeof(buf), "%s", path);
  cJSON *obj = root;
  char *key = buf;
  for (char *dot; (dot = strchr(key, '.'));) {
    *dot = '\0';
    cJSON *next = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!next) next = cJSON_AddObjectToObject(obj, key);
    obj = next;
    key = dot + 1;
  }
  cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
  if (value) cJSON_AddItemToObject(obj, key, cJSON_Parse(value));
}

/* BASE_JSON with up to three path=value edits ("a.b" "=" JSON; "a.b" alone
 * deletes). Returns malloc'd text. */
static char *edited(const char *const *edits) {
  cJSON *root = cJSON_Parse(BASE_JSON);
  for (int i = 0; i < 3 && edits[i]; i++) {
    char path[128];
    const char *eq = strchr(edits[i], '=');
    size_t n = eq ? (size_t)(eq - edits[i]) : strlen(edits[i]);
    snprintf(path, sizeof(path), "%.*s", (int)n, edits[i]);
    set_path(root, path, eq ? eq + 1 : NULL);
  }
  char *text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return text;
}

static fs_job *parse_ok(const char *const *edits, int line) {
  char *text = edited(edits);
  fs_job *job = NULL;
  fs_err err = {0, ""};
  int rc = fs_job_parse(text, strlen(text), "job.json", &job, &err);
  if (rc) test_fail(__FILE__, line, "parse failed: %s\n  input: %s", err.msg, text);
  cJSON_free(text);
  return job;
}

TEST(test_work_parse_base_and_defaults) {
  const char *none[] = {NULL};
  fs_job *j = parse_ok(none, __LINE__);
  if (!j) return;
  CHECK_EQ_INT(j->model.ffn, 4 * 512);
  CHECK_EQ_INT(j->model.kv_heads, 8);
  CHECK_EQ_INT(j->model.experts, 1);
  CHECK_EQ_INT(j->model.top_k, 1);
  CHECK_EQ_INT(j->model.moe_every, 1);
  CHECK_EQ_INT(j->model.dtype_bytes, 2);
  CHECK(!j->model.gated && j->model.bias && j->model.learned_pos && j->model.tied_embeddings);
  CHECK_EQ_INT(j->par.ep, 1);
  CHECK_EQ_INT(j->par.schedule, FS_PIPE_1F1B);
  CHECK_EQ_INT(j->par.virtual_stages, 1);
  CHECK_EQ_INT(j->par.zero, 0);
  CHECK(!j->par.sequence_parallel && !j->par.recompute && j->par.overlap_dp);
  CHECK_REL(j->par.grad_bucket_bytes, 25.0 * 1024 * 1024, 0, "B");
  for (int k = 0; k < FS_PAR_N; k++) CHECK_EQ_INT(j->par.algo[k], FS_ALGO_AUTO);
  CHECK_REL(j->hw.mfu_matmul, 0.5, 0, "");
  CHECK_REL(j->hw.hbm_bytes, 80 * GIB, 0, "B");
  CHECK_EQ_INT(j->hw.nics_per_gpu, 1);
  CHECK_REL(j->hw.nic_gbps, 100, 0, "Gb/s"); /* from the topology's host links */
  CHECK_EQ_INT(j->placement, FS_PLACE_RAIL_ALIGNED);
  CHECK_EQ_INT(j->mode, FS_ROUTE_ECMP);
  CHECK_EQ_INT(j->seed, 1);
  CHECK_EQ_INT(j->topo->n_hosts, 16);
  CHECK(strcmp(j->file, "job.json") == 0);
  /* The parsed job and the one built in code agree on everything the
   * maths reads. */
  fs_job k;
  small_job(&k);
  fs_work_mem a, b;
  fs_work_memory_peak(j, &a);
  fs_work_memory_peak(&k, &b);
  CHECK_REL(a.total_bytes, b.total_bytes, 0, "B");
  CHECK_REL(fs_work_hw_flops(j), fs_work_hw_flops(&k), 0, "FLOP");
  fs_job_free(j);

  /* Every option set. */
  const char *all[] = {
      "model={\"layers\": 8, \"hidden\": 512, \"ffn\": 1024, \"heads\": 8, \"kv_heads\": 2,"
      " \"seq_len\": 256, \"vocab\": 1024, \"experts\": 4, \"top_k\": 1, \"moe_every\": 2,"
      " \"dtype_bytes\": 1, \"gated\": true, \"bias\": false, \"position\": \"rotary\","
      " \"tied_embeddings\": false}",
      "parallelism={\"tp\": 2, \"pp\": 2, \"dp\": 4, \"ep\": 2, \"schedule\": \"interleaved\","
      " \"virtual_stages\": 2, \"zero\": 1, \"sequence_parallel\": true, \"recompute\": true,"
      " \"grad_bucket_bytes\": 1048576, \"overlap_dp\": false, \"algorithms\": {\"tp\": "
      "\"ring\", \"dp\": \"hier\", \"pp\": \"direct\", \"ep\": \"pairwise\"}}",
      "hardware={\"gpu_tflops\": 989, \"mfu_matmul\": 0.4, \"hbm_bytes\": 1e11,"
      " \"gpus_per_node\": 4, \"nvlink_gbps\": 3600, \"nics_per_gpu\": 2, \"nic_gbps\": 50}",
      NULL};
  j = parse_ok(all, __LINE__);
  if (!j) return;
  CHECK_EQ_INT(j->model.ffn, 1024);
  CHECK_EQ_INT(j->model.kv_heads, 2);
  CHECK_EQ_INT(j->model.experts, 4);
  CHECK_EQ_INT(j->model.top_k, 1);
  CHECK_EQ_INT(j->model.moe_every, 2);
  CHECK_EQ_INT(j->model.dtype_bytes, 1);
  CHECK(j->model.gated && !j->model.bias && !j->model.learned_pos && !j->model.tied_embeddings);
  CHECK_EQ_INT(j->par.ep, 2);
  CHECK_EQ_INT(j->par.schedule, FS_PIPE_INTERLEAVED);
  CHECK_EQ_INT(j->par.virtual_stages, 2);
  CHECK_EQ_INT(j->par.zero, 1);
  CHECK(j->par.sequence_parallel && j->par.recompute && !j->par.overlap_dp);
  CHECK_REL(j->par.grad_bucket_bytes, 1048576, 0, "B");
  CHECK_EQ_INT(j->par.algo[FS_PAR_TP], FS_ALGO_RING);
  CHECK_EQ_INT(j->par.algo[FS_PAR_DP], FS_ALGO_HIER);
  CHECK_EQ_INT(j->par.algo[FS_PAR_PP], FS_ALGO_DIRECT);
  CHECK_EQ_INT(j->par.algo[FS_PAR_EP], FS_ALGO_PAIRWISE);
  CHECK_REL(j->hw.mfu_matmul, 0.4, 0, "");
  CHECK_REL(j->hw.hbm_bytes, 1e11, 0, "B");
  CHECK_EQ_INT(j->hw.hbm_in_gib, 0);
  CHECK_EQ_INT(j->hw.nics_per_gpu, 2);
  fs_job_free(j);

  /* MoE defaults to top_k 2; fewer GPUs than hosts is allowed; packed. */
  const char *moe[] = {"model.experts=8", "parallelism.dp=2", "placement=\"packed\""};
  j = parse_ok(moe, __LINE__);
  if (!j) return;
  CHECK_EQ_INT(j->model.top_k, 2);
  CHECK_EQ_INT(fs_job_gpus(j), 8);
  CHECK_EQ_INT(j->placement, FS_PLACE_PACKED);
  fs_job_free(j);
  const char *route[] = {"routing={\"mode\": \"spray\", \"seed\": 7}", "description=\"x\"", NULL};
  j = parse_ok(route, __LINE__);
  if (!j) return;
  CHECK_EQ_INT(j->mode, FS_ROUTE_SPRAY);
  CHECK_EQ_INT(j->seed, 7);
  fs_job_free(j);
}

/* The new keys parse; the older jobs read cp = 1. */
TEST(test_work_parse_cp_uneven_tp_across_servers) {
  const char *none[] = {NULL};
  fs_job *j = parse_ok(none, __LINE__);
  if (j) {
    CHECK_EQ_INT(j->par.cp, 1);
    CHECK_EQ_INT(fs_job_gpus(j), 16);
    fs_job_free(j);
  }
  const char *cp2[] = {"parallelism.cp=2", "parallelism.dp=2",
                       "parallelism.algorithms.cp=\"direct\""};
  if ((j = parse_ok(cp2, __LINE__))) {
    CHECK_EQ_INT(j->par.cp, 2);
    CHECK_EQ_INT(fs_job_gpus(j), 16);
    CHECK_EQ_INT(j->par.algo[FS_PAR_CP], FS_ALGO_DIRECT);
    CHECK(strcmp(fs_par_kind_name(FS_PAR_CP), "cp") == 0);
    fs_job_free(j);
  }
  /* 8 layers over pp 3: 3, 3, 2 would be the naive fill; the rule gives 2, 3, 3. */
  const char *uneven[] = {"parallelism.pp=3", "parallelism.dp=2", NULL};
  if ((j = parse_ok(uneven, __LINE__))) {
    CHECK_EQ_INT(fs_work_chunk_layers(j, 0, NULL), 2);
    CHECK_EQ_INT(fs_work_chunk_layers(j, 1, NULL), 3);
    CHECK_EQ_INT(fs_work_chunk_layers(j, 2, NULL), 3);
    fs_job_free(j);
  }
  /* A TP group of two whole 4-GPU servers. */
  const char *tp8[] = {"parallelism.tp=8", "parallelism.dp=1", NULL};
  if ((j = parse_ok(tp8, __LINE__))) {
    CHECK_EQ_INT(j->par.tp, 8);
    fs_job_free(j);
  }
}

/* The CLI names the file, the JSON path and the value, exits 2, one line. */
TEST(test_work_cli_bad_cp_jobs) {
  static const struct {
    const char *file, *want;
  } cases[] = {
      {"tests/data/bad-jobs/cp-not-dividing-seq.json",
       "$.parallelism.cp: 2 x cp must divide seq_len (256)"},
      {"tests/data/bad-jobs/cp-gpus-exceed-topology.json",
       "$.parallelism.cp: tp x cp x pp x dp (2 x 2 x 2 x 4 = 32 GPUs) exceeds the topology's "
       "16 hosts, got 2"},
      {"tests/data/bad-jobs/cp-zero.json",
       "$.parallelism.cp: must be an integer in [1, 16777216], got 0"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char cmd[512], out[2048], head[512];
    snprintf(cmd, sizeof(cmd), "train '%s'", cases[i].file);
    int st = test_run_cli(cmd, "2>&1", out, sizeof(out));
    snprintf(head, sizeof(head), "fabricsim: %s: %s", cases[i].file, cases[i].want);
    const char *nl = strchr(out, '\n');
    if (st != 2 || strncmp(out, head, strlen(head)) != 0 || !nl || nl[1] != '\0')
      test_fail(__FILE__, __LINE__, "%s: want exit 2 and one line starting\n  %s\ngot %d:\n  %s",
                cases[i].file, head, st, out);
  }
  char out[2048];
  CHECK_EQ_INT(test_run_cli("train tests/data/bad-jobs/cp-not-dividing-seq.json", "2>&1", out,
                            sizeof(out)), 2);
  CHECK(strstr(out, "got 3\n") != NULL);
}

TEST(test_work_place_maps) {
  const char *none[] = {NULL};
  fs_job *j = parse_ok(none, __LINE__);
  if (!j) return;
  int32_t host[16];
  fs_err err = {0, ""};
  /* 4 leaves of 4 hosts, 4 GPUs a server: one rail group of 4 servers.
   * GPU g: server s = g / 4, local l = g % 4 -> host 4 l + s. */
  CHECK_OK(fs_job_place(j, host, &err), &err);
  for (int32_t g = 0; g < 16; g++) CHECK_EQ_INT(host[g], 4 * (g % 4) + g / 4);
  j->placement = FS_PLACE_PACKED;
  CHECK_OK(fs_job_place(j, host, &err), &err);
  for (int32_t g = 0; g < 16; g++) CHECK_EQ_INT(host[g], g);
  fs_job_free(j);

  /* k=4 fat-tree: 8 edges of 2 hosts; 2 GPUs a server -> rail groups of 2
   * edges (one pod's) for 2 servers: host ((q 2 + l) 2 + j). */
  const char *ft[] = {"topology={\"type\": \"fattree\", \"k\": 4, \"gbps\": 100}",
                      "hardware.gpus_per_node=2", "parallelism.tp=1"};
  j = parse_ok(ft, __LINE__);
  if (!j) return;
  CHECK_EQ_INT(fs_job_gpus(j), 8);
  CHECK_OK(fs_job_place(j, host, &err), &err);
  const int32_t want[8] = {0, 2, 1, 3, 4, 6, 5, 7};
  for (int32_t g = 0; g < 8; g++) CHECK_EQ_INT(host[g], want[g]);
  fs_job_free(j);

  /* A star has no rails: identity. */
  const char *star[] = {"topology={\"type\": \"star\", \"hosts\": 16, \"gbps\": 100}", NULL};
  j = parse_ok(star, __LINE__);
  if (!j) return;
  CHECK_OK(fs_job_place(j, host, &err), &err);
  for (int32_t g = 0; g < 16; g++) CHECK_EQ_INT(host[g], g);
  fs_job_free(j);

  fs_job k;
  small_job(&k);
  CHECK_EQ_INT(fs_job_place(&k, host, &err), FS_EINVAL);
  CHECK(strcmp(err.msg, "job.json: $.topology: a job needs one to be placed") == 0);
}

/* Two servers of 2 GPUs built by hand as topologies that model servers
 * are wired: GPU -- PCIe 512 -- NIC -- 400 -- leaf, GPU -- 3600 -- scale-up
 * switch; two leaves under one spine. `rails`: NIC of local GPU l on leaf l
 * (else both NICs of a server on its own leaf). The scale-up switch is a
 * node of the kind after FS_NODE_WAN (FS_NODE_SCALEUP where topo.h has it):
 * the work module recognises it by not being a host, switch, NIC, OCS or
 * WAN node. */
static fs_topo *two_servers(int rails) {
  fs_topo_builder b;
  fs_err err = {0, ""};
  if (fs_topo_builder_init(&b, "servers", 16, 32, &err)) return NULL;
  for (int i = 0; i < 4; i++) fs_topo_builder_node(&b, FS_NODE_HOST, 0, i, -1); /* 0..3 */
  for (int i = 0; i < 4; i++) fs_topo_builder_node(&b, FS_NODE_NIC, 0, i, -1);  /* 4..7 */
  for (int i = 0; i < 2; i++)                                           /* 8, 9 */
    fs_topo_builder_node(&b, (fs_node_kind)(FS_NODE_WAN + 1), 0, i, -1);
  for (int i = 0; i < 2; i++) fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, i, -1); /* 10, 11 */
  fs_topo_builder_node(&b, FS_NODE_SWITCH, 2, 0, -1);                             /* 12 */
  for (int g = 0; g < 4; g++) {
    fs_topo_builder_cable(&b, g, 4 + g, 512e9, 250);
    fs_topo_builder_cable(&b, g, 8 + g / 2, 3600e9, 250);
    fs_topo_builder_cable(&b, 4 + g, 10 + (rails ? g % 2 : g / 2), 400e9, 1000);
  }
  fs_topo_builder_cable(&b, 10, 12, 800e9, 1000);
  fs_topo_builder_cable(&b, 11, 12, 800e9, 1000);
  fs_topo *t = NULL;
  if (fs_topo_builder_finish(&b, &t, &err)) return NULL;
  return t;
}

TEST(test_work_topology_with_servers) {
  for (int rails = 0; rails <= 1; rails++) {
    fs_job j;
    small_job(&j);
    j.par.pp = 1, j.par.dp = 2;
    j.hw.gpus_per_node = 2, j.hw.nvlink_gbps = 3600, j.hw.nic_gbps = 400;
    j.topo = two_servers(rails);
    if (!j.topo) {
      test_fail(__FILE__, __LINE__, "cannot build the topology");
      return;
    }
    double up;
    CHECK_EQ_INT(fs__work_server_gpus(j.topo, &up), 2);
    CHECK_REL(up, 3600, 0, "Gb/s");
    CHECK_REL(fs__work_fabric_gbps(j.topo, 3), 400, 0, "Gb/s");
    CHECK_EQ_INT(fs__work_leaf(j.topo, 0), 10);
    CHECK_EQ_INT(fs__work_leaf(j.topo, 1), rails ? 11 : 10);
    fs_err err = {0, ""};
    int32_t host[4];
    if (rails) {
      CHECK_OK(fs_job_validate(&j, &err), &err);
      CHECK_OK(fs_job_place(&j, host, &err), &err);
      for (int32_t g = 0; g < 4; g++) CHECK_EQ_INT(host[g], g);
    } else {
      /* The servers' NICs share a leaf: nothing to align with. */
      CHECK_EQ_INT(fs_job_validate(&j, &err), FS_EINVAL);
      CHECK(strcmp(err.msg, "job.json: $.placement: the topology wires GPUs 0 and 1 of server "
                            "0 to the same leaf switch, so there are no rails to align with; "
                            "use \"packed\", got \"rail_aligned\"") == 0);
      j.placement = FS_PLACE_PACKED;
      CHECK_OK(fs_job_validate(&j, &err), &err);
      CHECK_OK(fs_job_place(&j, host, &err), &err);
      for (int32_t g = 0; g < 4; g++) CHECK_EQ_INT(host[g], g);
    }
    /* The job's servers and NVLink must be the topology's. */
    j.hw.gpus_per_node = 4;
    CHECK_EQ_INT(fs_job_validate(&j, &err), FS_EINVAL);
    CHECK(strcmp(err.msg, "job.json: $.hardware.gpus_per_node: must equal the GPUs of the "
                          "topology's servers (2), got 4") == 0);
    j.hw.gpus_per_node = 2, j.hw.nvlink_gbps = 2400;
    CHECK_EQ_INT(fs_job_validate(&j, &err), FS_EINVAL);
    CHECK(strcmp(err.msg, "job.json: $.hardware.nvlink_gbps: must equal the topology's GPU "
                          "scale-up links (3600 Gb/s), got 2400") == 0);
    /* The NIC is what counts, not the PCIe link before it. */
    j.hw.nvlink_gbps = 3600, j.hw.nic_gbps = 512;
    CHECK_EQ_INT(fs_job_validate(&j, &err), FS_EINVAL);
    CHECK(strstr(err.msg, "job.json: $.hardware.nic_gbps: ") == err.msg);
    fs_topo_free(j.topo);
  }
}

typedef struct bad_case {
  const char *edits[3];
  const char *msg; /* the whole message, or its start when it ends in "..." */
} bad_case;

static const bad_case bad_cases[] = {
    {{"model.foo=1"},
     "job.json: $.model.foo: unknown key (expected one of: layers, hidden, "
     "ffn, heads, kv_heads, seq_len, vocab, experts, top_k, moe_every, "
     "dtype_bytes, gated, bias, position, tied_embeddings, expert_ffn, shared_experts, "
     "first_dense, parallel_block, mla)"},
    {{"extra=1"},
     "job.json: $.extra: unknown key (expected one of: description, model, "
     "training, parallelism, hardware, framework, topology, placement, routing, failures, transport, ocs)"},
    {{"model"}, "job.json: $.model: required object is missing"},
    {{"model=[]"}, "job.json: $.model: must be an object, got []"},
    {{"model.hidden"}, "job.json: $.model.hidden: required integer is missing"},
    {{"model.layers=\"8\""}, "job.json: $.model.layers: must be an integer, got \"8\""},
    {{"model.layers=0"}, "job.json: $.model.layers: must be an integer in [1, 1048576], got 0"},
    {{"model.layers=2.5"}, "job.json: $.model.layers: must be an integer, got 2.5"},
    {{"model.heads=3"}, "job.json: $.model.heads: must divide hidden (512), got 3"},
    {{"model.kv_heads=3"},
     "job.json: $.model.kv_heads: must divide heads (8): each key/value "
     "head serves a group of query heads, got 3"},
    {{"model.kv_heads=16"}, "job.json: $.model.kv_heads: must be an integer in [1, 8], got 16"},
    {{"model.top_k=2"},
     "job.json: $.model.top_k: must be 1 for a dense model (experts = 1), "
     "got 2"},
    {{"model.moe_every=2"},
     "job.json: $.model.moe_every: must be 1 for a dense model "
     "(experts = 1), got 2"},
    {{"model.experts=4", "model.top_k=5"},
     "job.json: $.model.top_k: must be an integer in "
     "[1, 4], got 5"},
    {{"model.experts=4", "model.moe_every=9"},
     "job.json: $.model.moe_every: must be an "
     "integer in [1, 8], got 9"},
    {{"model.dtype_bytes=3"}, "job.json: $.model.dtype_bytes: must be 1, 2 or 4, got 3"},
    {{"model.gated=\"yes\""}, "job.json: $.model.gated: must be true or false, got \"yes\""},
    {{"model.position=\"alibi\""},
     "job.json: $.model.position: must be \"learned\" or "
     "\"rotary\", got \"alibi\""},
    {{"model.layers=1048576", "model.hidden=1048576"},
     "job.json: $.model: about 1.84e+19 parameters, beyond fabricsim's limit of 1e+15"},
    {{"training"}, "job.json: $.training: required object is missing"},
    {{"training.global_batch=30"},
     "job.json: $.training.global_batch: must be a multiple of "
     "micro_batch x dp (2 x 4 = 8), got 30"},
    {{"training.micro_batch=0"},
     "job.json: $.training.micro_batch: must be an integer in "
     "[1, 32], got 0"},
    {{"parallelism.tp"}, "job.json: $.parallelism.tp: required integer is missing"},
    {{"parallelism.tp=3"}, "job.json: $.parallelism.tp: must divide heads (8), got 3"},
    {{"model.ffn=1023"}, "job.json: $.parallelism.tp: must divide ffn (1023), got 2"},
    {{"parallelism.tp=4", "hardware.gpus_per_node=6"},
     "job.json: $.parallelism.tp: must divide gpus_per_node (6) or be a multiple of it: a "
     "tensor-parallel group is part of a server or whole servers, got 4"},
    {{"parallelism.pp=9"},
     "job.json: $.parallelism.pp: must be at most layers (8): every "
     "stage holds a layer, got 9"},
    {{"parallelism.cp=0"},
     "job.json: $.parallelism.cp: must be an integer in [1, 16777216], "
     "got 0"},
    {{"parallelism.cp=3"},
     "job.json: $.parallelism.cp: 2 x cp must divide seq_len (256): "
     "each context-parallel rank holds 2 equal chunks of every sequence "
     "(load-balanced causal split), got 3"},
    {{"parallelism.cp=2"},
     "job.json: $.parallelism.cp: tp x cp x pp x dp (2 x 2 x 2 x 4 = 32 "
     "GPUs) exceeds the topology's 16 hosts, got 2"},
    {{"parallelism.cp=2", "parallelism.dp=2", "parallelism.algorithms.cp=\"ring\""},
     "job.json: $.parallelism.algorithms.cp: does not implement sendrecv, which context "
     "parallelism (ring attention) needs, got \"ring\""},
    {{"parallelism.schedule=\"zigzag\""},
     "job.json: $.parallelism.schedule: must be "
     "\"1f1b\", \"interleaved\", \"gpipe\" or \"zb-h1\", got "
     "\"zigzag\""},
    {{"parallelism.schedule=\"interleaved\""},
     "job.json: $.parallelism.virtual_stages: must "
     "be >= 2 with the interleaved schedule, got 1"},
    {{"parallelism.virtual_stages=2"},
     "job.json: $.parallelism.virtual_stages: must be 1 "
     "unless schedule is \"interleaved\", got 2"},
    {{"parallelism.schedule=\"interleaved\"", "parallelism.virtual_stages=5"},
     "job.json: $.parallelism.virtual_stages: pp x virtual_stages (2 x 5) must be at most "
     "layers (8): every model chunk holds a layer, got 5"},
    {{"parallelism.schedule=\"interleaved\"", "parallelism.virtual_stages=2",
      "training.global_batch=24"},
     "job.json: $.training.global_batch: the interleaved schedule needs the micro-batches per "
     "iteration (global_batch / (micro_batch x dp) = 3) to be a multiple of pp (2), got 24"},
    {{"parallelism={\"tp\": 2, \"pp\": 1, \"dp\": 8, \"schedule\": \"interleaved\", "
      "\"virtual_stages\": 2}"},
     "job.json: $.parallelism.pp: must be >= 2 with the interleaved schedule, got 1"},
    {{"parallelism.ep=2"}, "job.json: $.parallelism.ep: must divide experts (1), got 2"},
    {{"model.experts=4", "parallelism.ep=3"},
     "job.json: $.parallelism.ep: must divide "
     "experts (4), got 3"},
    {{"model.experts=8", "parallelism.ep=8"},
     "job.json: $.parallelism.ep: must divide dp (4): "
     "expert parallelism is carved out of data "
     "parallelism, got 8"},
    {{"model.experts=4", "parallelism.ep=2"},
     "job.json: $.parallelism.sequence_parallel: must "
     "be true with tp > 1 and ep > 1 (Megatron-Core "
     "requires it for MoE), got false"},
    {{"parallelism.zero=4"}, "job.json: $.parallelism.zero: must be an integer in [0, 3], got 4"},
    {{"parallelism.zero=2"},
     "job.json: $.parallelism.zero: ZeRO-2 keeps gradients sharded per micro-batch and does "
     "not combine with pipeline parallelism (pp = 2); use 0, 1 or 3 (FSDP beside the "
     "pipeline), got 2"},
    {{"parallelism.zero=3", "parallelism.zeropp={\"qwz\": true}"},
     "job.json: $.parallelism.pp: ZeRO++ gathers the weights before every op, which ZeRO-3 "
     "beside a pipeline does not; use pp 1 with zeropp, got 2"},
    {{"parallelism.zero=3", "parallelism.overlap_dp=false", "parallelism.overlap_param_gather=true"},
     "job.json: $.parallelism.overlap_param_gather: overlaps the distributed optimizer's "
     "all-gathers: needs zero 1 (or distributed_optimizer) and overlap_dp, got true"},
    {{"parallelism.recompute=1"},
     "job.json: $.parallelism.recompute: must be true or false, "
     "got 1"},
    {{"parallelism.grad_bucket_bytes=0"},
     "job.json: $.parallelism.grad_bucket_bytes: must be "
     "in [1, 1e+15], got 0"},
    {{"parallelism.algorithms.xx=\"ring\""},
     "job.json: $.parallelism.algorithms.xx: unknown "
     "key (expected one of: tp, dp, pp, ep, cp)"},
    {{"parallelism.algorithms.dp=\"nope\""},
     "job.json: $.parallelism.algorithms.dp: unknown "
     "collective algorithm (see fabricsim coll --help), "
     "got \"nope\""},
    {{"parallelism.algorithms.tp=\"bruck\""},
     "job.json: $.parallelism.algorithms.tp: does not "
     "implement allreduce, which tensor parallelism "
     "needs, got \"bruck\""},
    {{"parallelism.algorithms.tp=\"rd\"", "parallelism.sequence_parallel=true"},
     "job.json: $.parallelism.algorithms.tp: does not implement reducescatter, which tensor "
     "parallelism with sequence_parallel needs, got \"rd\""},
    {{"parallelism.algorithms.dp=\"tree\"", "parallelism.zero=1"},
     "job.json: $.parallelism.algorithms.dp: does not implement reducescatter, which data "
     "parallelism with ZeRO needs, got \"tree\""},
    {{"parallelism.algorithms.pp=\"ring\""},
     "job.json: $.parallelism.algorithms.pp: does not "
     "implement sendrecv, which pipeline parallelism "
     "needs, got \"ring\""},
    {{"parallelism.algorithms.ep=\"ring\""},
     "job.json: $.parallelism.algorithms.ep: does not "
     "implement alltoall, which expert parallelism "
     "needs, got \"ring\""},
    {{"hardware.gpu_tflops=0"},
     "job.json: $.hardware.gpu_tflops: must be in [1e-09, 1e+07], "
     "got 0"},
    {{"hardware.gpu_tflops"}, "job.json: $.hardware.gpu_tflops: required number is missing"},
    {{"hardware.mfu_matmul=1.5"},
     "job.json: $.hardware.mfu_matmul: must be in [1e-09, 1], "
     "got 1.5"},
    {{"hardware.hbm_bytes=1e11"},
     "job.json: $.hardware.hbm_gib: give either hbm_bytes or "
     "hbm_gib, not both, got 80"},
    {{"hardware.hbm_gib"},
     "job.json: $.hardware.hbm_bytes: required number is missing (or "
     "give hbm_gib)"},
    {{"hardware.gpus_per_node=6"},
     "job.json: $.hardware.gpus_per_node: must divide the "
     "topology's hosts (16): servers are whole, got 6"},
    {{"hardware.nic_gbps=200"},
     "job.json: $.hardware.nic_gbps: nics_per_gpu x nic_gbps (1 x "
     "200 Gb/s) must equal what host 0 of the topology sends into "
     "the fabric (100 Gb/s), got 200"},
    {{"hardware.nics_per_gpu=2", "hardware.nic_gbps=100"},
     "job.json: $.hardware.nic_gbps: nics_per_gpu x nic_gbps (2 x 100 Gb/s) must equal what "
     "host 0 of the topology sends into the fabric (100 Gb/s), got 100"},
    {{"hardware.gpus_per_node"},
     "job.json: $.hardware.gpus_per_node: required integer is "
     "missing (the topology does not model servers)"},
    {{"hardware.nvlink_gbps"},
     "job.json: $.hardware.nvlink_gbps: required number is missing "
     "(the topology does not model servers)"},
    {{"hardware.nvlink_gbps=-1"},
     "job.json: $.hardware.nvlink_gbps: must be in [1e-09, "
     "1e+07], got -1"},
    {{"parallelism.dp=8"},
     "job.json: $.parallelism.dp: tp x pp x dp (2 x 2 x 8 = 32 GPUs) "
     "exceeds the topology's 16 hosts, got 8"},
    {{"topology"}, "job.json: $.topology: required object is missing"},
    {{"topology={\"type\": \"fattree\", \"k\": 7}"},
     "job.json: $.topology.k: must be even (a k-ary fat-tree has k/2 ports up and down), got 7"},
    {{"placement=\"random\""},
     "job.json: $.placement: must be \"rail_aligned\" or \"packed\", "
     "got \"random\""},
    {{"topology.leaves=3", "parallelism.dp=2"},
     "job.json: $.placement: rail alignment needs the topology's 3 leaves of 4 hosts to form "
     "groups of gpus_per_node (4) leaves; use \"packed\", got \"rail_aligned\""},
    {{"routing.mode=\"explicit\""},
     "job.json: $.routing.mode: explicit routing needs flows with paths, which this file has "
     "not (expected shortest, ecmp, spray, optimized, dor, minimal, valiant, railonly or lotus), "
     "got "
     "\"explicit\""},
    {{"routing.mode=\"dor\""},
     "job.json: $.routing.mode: dor routing needs a torus or ring topology, not "
     "leafspine:leaves=4,spines=2,hosts_per_leaf=4,host_gbps=100,fabric_gbps=100,"
     "links_per_spine=1,latency_ns=1000, got \"dor\""},
    {{"routing.seed=-1"}, "job.json: $.routing.seed: must be >= 0, got -1"},
    {{"description=3"}, "job.json: $.description: must be a string, got 3"},
    {{"hardware.hbm_gib=0.1"},
     "job.json: $.hardware.hbm_gib: stage 0 needs 0.162888 GiB per GPU "
     "(weights 0.01249, gradients 0.01249, optimizer 0.07492, "
     "activations 0.06299), more than the 0.1 GiB available, got 0.1"},
    {{"hardware.hbm_gib", "hardware.hbm_bytes=1e8"},
     /* 16 x 6704128 + 67633152 = 174899200 (test_work_memory_by_hand) */
     "job.json: $.hardware.hbm_bytes: stage 0 needs 1.74899e+08 bytes per GPU (weights "
     "1.341e+07, gradients 1.341e+07, optimizer 8.045e+07, activations 6.763e+07), more than "
     "the 1e+08 bytes available, got 100000000"},
};

TEST(test_work_bad_jobs) {
  for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
    const bad_case *bc = &bad_cases[i];
    char *text = edited(bc->edits);
    static fs_job dummy;
    fs_job *sentinel = &dummy, *job = sentinel;
    fs_err err = {0, ""};
    int rc = fs_job_parse(text, strlen(text), "job.json", &job, &err);
    if (rc != FS_EINVAL || strcmp(err.msg, bc->msg) != 0 || job != sentinel)
      test_fail(__FILE__, __LINE__,
                "case %zu (%s): rc %d, out %s\n  want: %s\n  got:  %s", i, bc->edits[0], rc,
                job == sentinel ? "untouched" : "CHANGED", bc->msg, err.msg);
    if (job != sentinel) fs_job_free(job);
    cJSON_free(text);
  }
  /* Malformed JSON and a missing file. */
  fs_job *job = NULL;
  fs_err err = {0, ""};
  CHECK_EQ_INT(fs_job_parse("{\"model\": ", 10, "job.json", &job, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "job.json: line 1, column 11: malformed JSON") == err.msg);
  CHECK_EQ_INT(fs_job_load("no/such/job.json", &job, &err), FS_EIO);
  CHECK(strstr(err.msg, "no/such/job.json: cannot open") == err.msg);
  CHECK(job == NULL);
}

/* A job built in code gets the same checks and words. */
TEST(test_work_validate_in_code) {
  fs_job j;
  small_job(&j);
  fs_err err = {0, ""};
  CHECK_OK(fs_job_validate(&j, &err), &err);
  j.par.tp = 3;
  CHECK_EQ_INT(fs_job_validate(&j, &err), FS_EINVAL);
  CHECK(strcmp(err.msg, "job.json: $.parallelism.tp: must divide heads (8), got 3") == 0);
  small_job(&j);
  j.model.ffn = 0;
  CHECK_EQ_INT(fs_job_validate(&j, &err), FS_EINVAL);
  CHECK(strcmp(err.msg, "job.json: $.model.ffn: must be an integer in [1, 16777216], got 0") == 0);
  small_job(&j);
  j.hw.hbm_in_gib = 0, j.hw.hbm_bytes = 0;
  CHECK_EQ_INT(fs_job_validate(&j, &err), FS_EINVAL);
  CHECK(strcmp(err.msg, "job.json: $.hardware.hbm_bytes: must be in (0, 1e+15], got 0") == 0);
  /* Without a topology the placement and host checks are skipped. */
  small_job(&j);
  j.par.dp = 1024, j.train.global_batch = 2048;
  CHECK_OK(fs_job_validate(&j, &err), &err);
}

TEST(test_work_examples) {
  fs_job *j = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_job_load("examples/gpt-13b.json", &j, &err), &err);
  if (j) {
    /* 40 layers of 12 h^2 + 13 h, h 5120, V 51200, s 2048: ~12.86B */
    const int64_t h = 5120;
    CHECK_EQ_INT(fs_work_params(&j->model),
                 40 * (12 * h * h + 13 * h) + (51200 + 2048) * h + 2 * h);
    CHECK_EQ_INT(fs_job_gpus(j), 64);
    CHECK_EQ_INT(j->topo->n_hosts, 64);
    CHECK_EQ_INT(j->par.tp, 8);
    CHECK_EQ_INT(j->par.zero, 1);
    CHECK_EQ_INT(j->hw.gpus_per_node, 8);
    fs_work_mem mem;
    fs_work_memory_peak(j, &mem);
    CHECK(mem.total_bytes < 80 * GIB);
    int32_t host[64];
    CHECK_OK(fs_job_place(j, host, &err), &err);
    fs_job_free(j);
  }
  j = NULL;
  CHECK_OK(fs_job_load("examples/llama3-405b-16k.json", &j, &err), &err);
  if (j) {
    /* 126 (2 h^2 + 2 h 1024 + 3 h f + 2 h) + 2 V h + h, h 16384, f 53248,
     * V 128256 (untied, RMSNorm, rotary): 405,853,388,800 ("405B"). */
    CHECK_EQ_INT(fs_work_params(&j->model), 405853388800LL);
    CHECK_EQ_INT(fs_job_gpus(j), 16384);
    CHECK_EQ_INT(j->topo->n_hosts, 16384);
    CHECK_EQ_INT(j->par.cp, 1);
    CHECK_EQ_INT(fs_work_microbatches(j), 16);
    /* 32 chunks of 126 layers: 3, 4 x 30, 3 (one fewer on the first and
     * last stage, as Llama 3). */
    for (int64_t c = 0; c < 32; c++)
      CHECK_EQ_INT(fs_work_chunk_layers(j, c, NULL), c == 0 || c == 31 ? 3 : 4);
    fs_work_shard sh;
    fs_work_stage_params(j, 0, &sh);
    CHECK_EQ_INT(sh.layers, 7);
    fs_work_stage_params(j, 15, &sh);
    CHECK_EQ_INT(sh.layers, 7);
    fs_work_stage_params(j, 1, &sh);
    CHECK_EQ_INT(sh.layers, 8);
    fs_work_mem mem;
    fs_work_memory_peak(j, &mem);
    CHECK(mem.total_bytes < 80 * GIB);
    fs_job_free(j);
  }
  j = NULL;
  CHECK_OK(fs_job_load("examples/gpt3-175b.json", &j, &err), &err);
  if (j) {
    CHECK_EQ_INT(fs_work_params(&j->model), 174615846912LL);
    CHECK_EQ_INT(fs_job_gpus(j), 1024);
    CHECK_EQ_INT(j->topo->n_hosts, 1024); /* k = 16: 16^3 / 4 */
    CHECK_EQ_INT(j->par.schedule, FS_PIPE_INTERLEAVED);
    CHECK_EQ_INT(j->par.virtual_stages, 2);
    CHECK_EQ_INT(j->model.layers / (j->par.pp * j->par.virtual_stages), 6);
    CHECK_EQ_INT(fs_work_microbatches(j), 96);
    fs_work_mem mem;
    fs_work_memory_peak(j, &mem);
    CHECK_EQ_INT(mem.stage, 0);
    CHECK(mem.total_bytes < 80 * GIB);
    /* Without sequence parallelism it does not fit (Korthikanti et al.'s
     * point), and validation says so on the HBM key. */
    j->par.sequence_parallel = 0;
    CHECK_EQ_INT(fs_job_validate(j, &err), FS_EINVAL);
    CHECK(strstr(err.msg, "examples/gpt3-175b.json: $.hardware.hbm_gib: stage 0 needs ") ==
          err.msg);
    fs_job_free(j);
  }
}
