/* The per-operation compute model (compute.h; docs/model-compute.md derives
 * each formula): a GEMM roofline with tile and wave quantization, attention
 * unfused or FlashAttention-style, memory-bound kernels at HBM bandwidth,
 * summed over a transformer layer's operations per pass; and the table of
 * hardware presets. Pure arithmetic on validated jobs: a layer is a few
 * dozen GEMM evaluations of three tile candidates each, a chunk sums two
 * layer kinds (dense, MoE) in closed form. The preset table is constant. */
#include <math.h>
#include <string.h>

#include "fabricsim/compute.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* ---- presets -------------------------------------------------------------- */

/* Peaks: NVIDIA A100, H100, H200, B200 and GB200 NVL72 datasheets, AMD
 * Instinct MI300X datasheet, Google Cloud TPU v4 / v5p system architecture
 * pages (dense, no sparsity; GB200 NVL72's rack figures / 72). matmul_eff:
 * measured maximum achievable matmul FLOP/s over the peak (Bekman,
 * "Machine Learning Engineering", Maximum Achievable Matmul FLOPS table:
 * A100 SXM 271.2 / 312 bf16, H100 SXM 794.5 / 989 bf16 and 1402.6 / 1979
 * fp8, MI300X 668.4 / 1300 bf16); the chips it does not list take the
 * nearest measured one (docs/model-compute.md says which). hbm_eff 0.9:
 * the best kernels reach about 90 % of HBM bandwidth (NVIDIA developer
 * forum, A100 80GB: 1.80 of 2.04 TB/s measured, and the GTC 2025 talk it
 * cites). Tiles: the 256 x 128 cuBLAS tile (NVIDIA, "Matrix Multiplication
 * Background User's Guide", sec. 2.3), the TPU's 128 x 128 MXU.
 * nvlink_eff: what NCCL's SM-driven copies carry of the NVLink line rate.
 * A100: 230 of 300 GB/s per direction (NCCL's maintainer in nccl-tests
 * issue 149: each 25 GB/s link carries ~20 GB/s with the SMs' 128-byte
 * payloads, 240 GB/s in all, other limits leave ~230); NVLink 4: 0.8
 * (DeepSeek's H800 measurement, 160 of 200 GB/s, DeepEP issue 16; the
 * same 128-byte payload ratio); NVLink 5 assumed as NVLink 4; Infinity
 * Fabric and ICI: no figure, 1. */
#define EFF(x, y) {x, x, x, x, y}
static const fs_gpu_preset presets[] = {
    {"a100-40", {19.5, 156, 312, 312, 0}, EFF(0.869, 0), 40 * GIB, 1555, 0.9, 108, 256, 128,
     8, 2400, 200, 230.0 / 300},
    {"a100-80", {19.5, 156, 312, 312, 0}, EFF(0.869, 0), 80 * GIB, 2039, 0.9, 108, 256, 128,
     8, 2400, 200, 230.0 / 300},
    {"h100-sxm", {67, 494.7, 989.4, 989.4, 1978.9}, EFF(0.803, 0.709), 80 * GIB, 3350, 0.9,
     132, 256, 128, 8, 3600, 400, 0.8},
    {"h200", {67, 494.7, 989.4, 989.4, 1978.9}, EFF(0.803, 0.709), 141e9, 4800, 0.9, 132, 256,
     128, 8, 3600, 400, 0.8},
    {"b200", {0, 1125, 2250, 2250, 4500}, EFF(0.803, 0.709), 180e9, 8000, 0.9, 148, 256, 128, 8,
     7200, 400, 0.8},
    {"gb200-nvl72", {80, 1250, 2500, 2500, 5000}, EFF(0.803, 0.709), 186e9, 8000, 0.9, 148, 256,
     128, 72, 7200, 400, 0.8},
    {"mi300x", {163.4, 653.7, 1307.4, 1307.4, 2614.9}, EFF(0.514, 0.514), 192e9, 5300, 0.9, 304,
     256, 128, 8, 3584, 400, 1},
    {"tpu-v4", {0, 0, 0, 275, 0}, EFF(0.803, 0), 32 * GIB, 1200, 0.9, 8, 128, 128, 4, 2400, 0, 1},
    {"tpu-v5p", {0, 0, 0, 459, 0}, EFF(0.803, 0), 95e9, 2765, 0.9, 8, 128, 128, 4, 4800, 0, 1},
};
#define N_PRESETS ((int)(sizeof(presets) / sizeof(presets[0])))

const fs_gpu_preset *fs_compute_preset(const char *name) {
  for (int i = 0; i < N_PRESETS; i++)
    if (strcmp(presets[i].name, name) == 0) return &presets[i];
  return NULL;
}

const fs_gpu_preset *fs_compute_preset_at(int i) {
  return i >= 0 && i < N_PRESETS ? &presets[i] : NULL;
}

/* Framework presets (docs/model-compute.md, "Framework presets"). The
 * GEMM tile overhead and the memory-bound kernels' HBM share are fitted on
 * the public calibration set of issue 43 only (scripts/fit-framework.py,
 * docs/validation.md shows the fit): megatron-2021 on Narayanan et al.'s
 * Table 1 (SC'21), megatron-2022 on Korthikanti et al.'s Table 5, one tile
 * overhead for both (the same A100s and cuBLAS generation). The kernel gap
 * is not fitted: launching a kernel costs 1.3-3 us (docs/model-compute.md).
 * Defaults: both ran unfused attention, without gradient accumulation
 * fusion, the gradient all-reduce after the backward (Megatron's "local"
 * DDP); the public set's jobs say where a run differed. */
static const fs_framework_preset frameworks[] = {
    {"megatron-2021",
     "Megatron-LM as of SC'21 (A100, apex fused softmax, unfused dropout and adds)", 192, 0.45, 2,
     FS_ATTN_UNFUSED, 0, 0, 0},
    {"megatron-2022", "Megatron-LM as of Korthikanti et al. 2022 (A100, sequence parallelism)", 192,
     0.65, 2, FS_ATTN_UNFUSED, 0, 0, 0},
    /* Megatron-DeepSpeed runs Megatron-LM's layers (the kernels of
     * megatron-2022) under DeepSpeed's pipeline engine: blocking sends,
     * no interleaving; not fitted to any run */
    {"deepspeed-2022", "Megatron-DeepSpeed (A100, Megatron-LM's layers, DeepSpeed's pipeline engine)",
     192, 0.65, 2, FS_ATTN_UNFUSED, 0, 0, 1},
};
#define N_FRAMEWORKS ((int)(sizeof(frameworks) / sizeof(frameworks[0])))

const fs_framework_preset *fs_compute_framework(const char *name) {
  for (int i = 0; i < N_FRAMEWORKS; i++)
    if (strcmp(frameworks[i].name, name) == 0) return &frameworks[i];
  return NULL;
}

const fs_framework_preset *fs_compute_framework_at(int i) {
  return i >= 0 && i < N_FRAMEWORKS ? &frameworks[i] : NULL;
}

static const char *const prec_names[FS_PREC_N] = {"fp32", "tf32", "fp16", "bf16", "fp8"};

const char *fs_precision_name(fs_precision p) {
  return (unsigned)p < FS_PREC_N ? prec_names[p] : "?";
}

int fs_precision_parse(const char *name, fs_precision *out) {
  for (int i = 0; i < FS_PREC_N; i++)
    if (strcmp(prec_names[i], name) == 0) {
      *out = (fs_precision)i;
      return 0;
    }
  return FS_EINVAL;
}

double fs_precision_bytes(fs_precision p) {
  switch (p) {
  case FS_PREC_FP8: return 1;
  case FS_PREC_FP32:
  case FS_PREC_TF32: return 4;
  default: return 2;
  }
}

/* ---- GEMM and memory roofline ------------------------------------------------ */

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

double fs_compute_mem_s(const fs_hardware *hw, double bytes) {
  double eff = hw->kernel_hbm_eff > 0 ? hw->kernel_hbm_eff : hw->hbm_eff;
  return bytes / (hw->hbm_gb_per_s * 1e9 * eff);
}

/* NVIDIA's "Matrix Multiplication Background" guide, sec. 3: an m x n
 * output is cut into tiles (tile quantization pads the last row and column
 * of tiles); one tile per SM at a time, so the tiles run in
 * ceil(tiles / sms) waves (wave quantization: the last wave may leave SMs
 * idle). A wave lasts one tile's 2 tm tn k FLOPs at the SM's share of the
 * achievable rate, plus the tile's fixed cost (loading the pipeline,
 * writing the result) as gemm_k_overhead more steps of k, which the
 * framework presets fit (docs/model-compute.md). cuBLAS picks among several
 * tiles; we take the fastest of three. */
void fs_compute_gemm(const fs_hardware *hw, int64_t m, int64_t n, int64_t k, int64_t batch,
                     double in_bytes, double out_bytes, fs_gemm_time *out) {
  const int64_t cand[3][2] = {
      {hw->tile_m, hw->tile_n}, {hw->tile_n, hw->tile_m}, {hw->tile_n, hw->tile_n}};
  double sm_rate = hw->gpu_tflops * 1e12 * hw->matmul_eff / (double)hw->sms;
  out->flops = 2 * (double)m * (double)n * (double)k * (double)batch;
  out->compute_s = INFINITY;
  for (int c = 0; c < 3; c++) {
    int64_t tm = cand[c][0], tn = cand[c][1];
    int64_t tiles = ceil_div(m, tm) * ceil_div(n, tn) * batch;
    int64_t waves = ceil_div(tiles, hw->sms);
    double s =
        (double)waves * 2 * (double)tm * (double)tn * ((double)k + hw->gemm_k_overhead) / sm_rate;
    if (s < out->compute_s) {
      out->compute_s = s;
      out->tile_m = tm, out->tile_n = tn, out->tiles = tiles, out->waves = waves;
    }
  }
  out->quant_eff = out->flops / (out->compute_s * sm_rate * (double)hw->sms);
  out->bytes = (double)batch * (((double)m * (double)k + (double)k * (double)n) * in_bytes +
                                (double)m * (double)n * out_bytes);
  out->memory_s = out->bytes / (hw->hbm_gb_per_s * 1e9 * hw->hbm_eff);
  out->s = fmax(out->compute_s, out->memory_s);
}

/* ---- one layer ---------------------------------------------------------------- */

/* What a layer's operations see on one GPU. */
typedef struct shape {
  const fs_hardware *hw;
  int64_t T;     /* tokens the rank's matmuls see: b s / c */
  double Tn;     /* tokens of the norms, dropouts and residuals: T / t with SP */
  int64_t sl, s; /* query tokens of the rank (s / c), keys (s) */
  int64_t b, ah, kh, d; /* micro-batch, query and key/value heads per rank, head size */
  int64_t dv;           /* a value head's size (MLA: v_head; else d) */
  int64_t h, f, t;
  double D, Dg;  /* bytes of an activation, of a GEMM input */
  int fused_wgrad; /* gradient accumulation fusion */
  double kernels;  /* kernels launched so far (the framework's gap each) */
  double wgrad_s, wgrad_kernels; /* of them, the weight gradients' (W) */
} shape;

static void shape_of(const fs_job *j, shape *sh) {
  const fs_model *m = &j->model;
  sh->hw = &j->hw;
  sh->t = j->par.tp;
  sh->b = j->train.micro_batch;
  sh->s = m->seq_len;
  sh->sl = m->seq_len / j->par.cp;
  sh->T = sh->b * sh->sl;
  sh->Tn = (double)sh->T / (j->par.sequence_parallel ? (double)sh->t : 1);
  sh->h = m->hidden;
  sh->f = m->ffn;
  sh->d = m->hidden / m->heads;
  sh->ah = m->heads / sh->t;
  sh->kh = m->kv_heads >= sh->t ? m->kv_heads / sh->t : 1; /* replicated below t */
  sh->dv = sh->d;
  if (m->kv_lora > 0) { /* MLA: every query head its own key and value */
    sh->d = m->qk_nope + m->qk_rope, sh->dv = m->v_head, sh->kh = sh->ah;
  }
  sh->D = (double)m->dtype_bytes;
  sh->Dg = fmin(sh->D, fs_precision_bytes(m->precision));
  sh->fused_wgrad = j->par.grad_accum_fusion;
  sh->kernels = 0;
  sh->wgrad_s = sh->wgrad_kernels = 0;
}

static double gemm_s(shape *sh, int64_t m, int64_t n, int64_t k, int64_t batch, double out_bytes) {
  fs_gemm_time g;
  sh->kernels++;
  fs_compute_gemm(sh->hw, m, n, k, batch, sh->Dg, out_bytes, &g);
  return g.s;
}

/* A memory-bound kernel moving `bytes`. */
static double mem_s(shape *sh, double bytes) {
  sh->kernels++;
  return fs_compute_mem_s(sh->hw, bytes);
}

/* A linear layer y = x W of x: T x K, W: K x N. The backward runs the
 * input gradient (T x N by N x K) and the weight gradient (K x T by T x N).
 * With gradient accumulation fusion (Megatron-LM since 2022) the weight
 * gradient GEMM accumulates into the fp32 main gradient itself (C read and
 * written in fp32, 8 bytes an element); without (Megatron-LM 2021) it
 * writes a D-byte gradient that a separate kernel adds into the main
 * gradient (read both, write one: 3 D bytes an element, main gradients in
 * the training dtype as --accumulate-allreduce-grads-in-fp32 was off). */
static double linear_s(shape *sh, fs_work_pass pass, int64_t T, int64_t N, int64_t K) {
  if (pass != FS_PASS_BWD) return gemm_s(sh, T, N, K, 1, sh->D);
  double dgrad = gemm_s(sh, T, K, N, 1, sh->D), k0 = sh->kernels;
  double wgrad = sh->fused_wgrad ? gemm_s(sh, K, N, T, 1, 8)
                                 : gemm_s(sh, K, N, T, 1, sh->D) +
                                       mem_s(sh, 3 * sh->D * (double)K * (double)N);
  sh->wgrad_s += wgrad;
  sh->wgrad_kernels += sh->kernels - k0;
  return dgrad + wgrad;
}

/* n experts' MLPs (up, then down) on T tokens each: one expert's linears
 * timed and run by every expert, their weight gradients too (their
 * kernels are counted once). */
static double experts_s(shape *sh, fs_work_pass pass, double n, int64_t T, int64_t up, int64_t h,
                        int64_t ft) {
  double w0 = sh->wgrad_s;
  double once = linear_s(sh, pass, T, up, h) + linear_s(sh, pass, T, h, ft);
  sh->wgrad_s = w0 + n * (sh->wgrad_s - w0);
  return n * once;
}

/* The four linear layers of a dense layer on one TP rank, as (N, K) of
 * y = x W: QKV (column-parallel: (a + 2 k) d / t outputs), the output
 * projection (row-parallel: h / t inputs), MLP up (gated: gate and up) and
 * down. */
enum { LIN_QKV, LIN_OUT, LIN_UP, LIN_DOWN };
static void dense_linears(const shape *sh, const fs_model *m, int64_t nk[4][2]) {
  int64_t h = sh->h, t = sh->t;
  nk[LIN_QKV][0] = (sh->ah + 2 * sh->kh) * sh->d, nk[LIN_QKV][1] = h;
  nk[LIN_OUT][0] = h, nk[LIN_OUT][1] = h / t;
  nk[LIN_UP][0] = (m->gated ? 2 : 1) * m->ffn / t, nk[LIN_UP][1] = h;
  nk[LIN_DOWN][0] = h, nk[LIN_DOWN][1] = m->ffn / t;
}

/* Attention's core on the rank's ah heads: sl queries against s keys. */
static double attn_s(const fs_job *j, shape *sh, fs_work_pass pass) {
  const fs_hardware *hw = sh->hw;
  double b = (double)sh->b, ah = (double)sh->ah, kh = (double)sh->kh, d = (double)sh->d;
  double sl = (double)sh->sl, s = (double)sh->s;
  if (j->model.attention == FS_ATTN_FLASH) {
    /* Dao et al. 2022, Dao 2023: S and P stay on chip; the causal mask's
     * empty tiles are skipped (half the s^2 work); the backward runs five
     * matmuls against the forward's two (it recomputes S and P): 2.5x. */
    if (pass == FS_PASS_RECOMPUTE && !j->par.recompute) return 0;
    /* (MLA: scores on d, values on dv: d in the mean of the two) */
    if (sh->dv != sh->d) d = 0.5 * (double)(sh->d + sh->dv);
    double fwd = 0.5 * 4 * b * ah * sl * s * d;
    double flops = pass == FS_PASS_BWD ? 2.5 * fwd : fwd;
    double io = b * (ah * sl + kh * s) * d * sh->D; /* Q and O, or K and V */
    double bytes = pass == FS_PASS_BWD ? 4 * io : 2 * io;
    sh->kernels++;
    return fmax(flops / (hw->gpu_tflops * 1e12 * hw->matmul_eff),
                bytes / (hw->hbm_gb_per_s * 1e9 * hw->hbm_eff));
  }
  /* Megatron-LM (2021): Q K^T and the weighted sum as batched GEMMs over
   * b ah (query head) matrices, the s x s scores materialised in HBM, a
   * fused scale-mask-softmax (read S, write P) and a dropout (read P, write
   * its output and a 1-byte mask). */
  /* (scores over heads of Dh, values of Dv: equal but under MLA) */
  int64_t B = sh->b * sh->ah, SL = sh->sl, S = sh->s, Dh = sh->d, Dv = sh->dv;
  double cnt = b * ah * sl * s, D = sh->D;
  if (pass != FS_PASS_BWD)
    return gemm_s(sh, SL, S, Dh, B, D) + mem_s(sh, 2 * D * cnt) + mem_s(sh, (2 * D + 1) * cnt) +
           gemm_s(sh, SL, Dv, S, B, D);
  /* dP = dO V^T, dV = P^T dO, the dropout's and the softmax's backward
   * (read P and dP, write dS), dQ = dS K, dK = dS^T Q. */
  return gemm_s(sh, SL, S, Dv, B, D) + gemm_s(sh, S, Dv, SL, B, D) + mem_s(sh, (2 * D + 1) * cnt) +
         mem_s(sh, 3 * D * cnt) + gemm_s(sh, SL, Dh, S, B, D) + gemm_s(sh, S, Dh, SL, B, D);
}

void fs_compute_layer(const fs_job *j, int moe, fs_work_pass pass, fs_compute_parts *out) {
  const fs_model *m = &j->model;
  shape sh;
  shape_of(j, &sh);
  *out = (fs_compute_parts){0};
  if (pass == FS_PASS_RECOMPUTE && !j->par.recompute) {
    /* Selective recomputation re-runs the attention core only;
     * recompute_norms the norms (read x, write y), recompute_mla_up MLA's
     * up-projections from the latents (DeepSeek-V3 sec. 3.2.3). */
    if (j->par.selective_recompute && m->attention != FS_ATTN_FLASH)
      out->attn_s = attn_s(j, &sh, FS_PASS_FWD);
    if (j->par.recompute_norms)
      out->mem_s = (m->parallel_block ? 1 : 2) * mem_s(&sh, 2 * sh.D * sh.Tn * (double)sh.h);
    if (j->par.recompute_mla_up) {
      int64_t ql = m->q_lora;
      out->gemm_s = linear_s(&sh, FS_PASS_FWD, sh.T, sh.ah * sh.d, ql ? ql : sh.h) +
                    linear_s(&sh, FS_PASS_FWD, sh.T, sh.ah * (m->qk_nope + sh.dv), m->kv_lora);
    }
    out->kernels = sh.kernels;
    out->overhead_s = sh.kernels * sh.hw->kernel_gap_s;
    out->total_s = out->gemm_s + out->attn_s + out->mem_s + out->overhead_s;
    return;
  }
  const int64_t T = sh.T, h = sh.h, t = sh.t;
  const double D = sh.D, Tn = sh.Tn;
  int bwd = pass == FS_PASS_BWD;
  int64_t nk[4][2];
  dense_linears(&sh, m, nk);
  if (m->kv_lora > 0) {
    /* MLA: the down projections (replicated over TP), the up projections
     * and the output (split) */
    int64_t ql = m->q_lora;
    if (ql) out->gemm_s += linear_s(&sh, pass, T, ql, h) + linear_s(&sh, pass, T, sh.ah * sh.d, ql);
    else out->gemm_s += linear_s(&sh, pass, T, sh.ah * sh.d, h);
    out->gemm_s += linear_s(&sh, pass, T, m->kv_lora + m->qk_rope, h) +
                   linear_s(&sh, pass, T, sh.ah * (m->qk_nope + sh.dv), m->kv_lora) +
                   linear_s(&sh, pass, T, h, sh.ah * sh.dv);
  } else {
    out->gemm_s += linear_s(&sh, pass, T, nk[LIN_QKV][0], nk[LIN_QKV][1]);
    out->gemm_s += linear_s(&sh, pass, T, nk[LIN_OUT][0], nk[LIN_OUT][1]);
  }
  out->attn_s = attn_s(j, &sh, pass);
  /* The MLP: one, or the rank's experts / ep experts, each receiving
   * T top_k ep / experts tokens (the even spread of llm.c's FLOPs). */
  int64_t up = nk[LIN_UP][0], ft = nk[LIN_DOWN][1];
  double act_tokens = (double)T;
  if (moe) {
    /* experts of expert_ffn (fine-grained: smaller than ffn); the shared
     * experts see every token of the rank, split over t as a dense MLP */
    int64_t fe = fs_work_expert_ffn(m);
    up = (m->gated ? 2 : 1) * fe / t, ft = fe / t;
    int64_t ne = m->experts / j->par.ep;
    int64_t Te = ceil_div(T * m->top_k * j->par.ep, m->experts);
    out->gemm_s += linear_s(&sh, pass, T, m->experts, h); /* router */
    out->gemm_s += experts_s(&sh, pass, (double)ne, Te, up, h, ft);
    if (m->shared_experts > 0)
      out->gemm_s += experts_s(&sh, pass, (double)m->shared_experts, T, up, h, ft);
    act_tokens = (double)T * (double)(m->top_k + m->shared_experts);
    /* permute before and un-permute after the experts: read + write */
    out->mem_s += fs_compute_mem_s(sh.hw, 2 * 2 * D * act_tokens * (double)h);
    sh.kernels += 2;
  } else {
    out->gemm_s += linear_s(&sh, pass, T, nk[LIN_UP][0], nk[LIN_UP][1]) +
                   linear_s(&sh, pass, T, nk[LIN_DOWN][0], nk[LIN_DOWN][1]);
  }
  /* Memory-bound: two norms (read x, write y; backward read x, dy, write
   * dx), two bias-dropout-residual adds (read x and the residual, write y
   * and a 1-byte mask; backward read dy and the mask, write dx, reduce the
   * bias gradient), the activation (GeLU read + write, SwiGLU read gate and
   * up, write; backward one more read per input and one write per output). */
  double norm = (bwd ? 3 : 2) * D * Tn * (double)h;
  double bda = (3 * D + 1) * Tn * (double)h;
  double act = (m->gated ? (bwd ? 5 : 3) : (bwd ? 3 : 2)) * D * act_tokens * (double)ft;
  /* a parallel block (GPT-J, PaLM) runs one norm for both branches */
  double norms = m->parallel_block ? 1 : 2;
  out->mem_s += fs_compute_mem_s(sh.hw, norms * norm + 2 * bda + act);
  sh.kernels += 3 + norms;
  out->kernels = sh.kernels;
  out->overhead_s = sh.kernels * sh.hw->kernel_gap_s;
  out->total_s = out->gemm_s + out->attn_s + out->mem_s + out->overhead_s;
  out->wgrad_s = sh.wgrad_s + sh.wgrad_kernels * sh.hw->kernel_gap_s;
}

/* A communication c pipelined with a GEMM g in t chunks: what it adds. */
static double overlap_pair(double c, double g, double t) {
  return fmax(c, g) + fmin(c, g) / t - g;
}

double fs_compute_tp_overlap_exposed_s(const fs_job *j, fs_work_pass pass, double ag_s,
                                       double rs_s) {
  const fs_model *m = &j->model;
  if (fs_work_tp_colls_per_layer(j, pass) == 0) return 0;
  shape sh;
  shape_of(j, &sh);
  /* the GEMM each collective meets: forward y = x W (T x N x K), backward
   * the input gradient (T x K x N) */
  int64_t nk[4][2];
  dense_linears(&sh, m, nk);
  const int64_t T = sh.T;
  double g[4];
  for (int i = 0; i < 4; i++) {
    int64_t N = nk[i][0], K = nk[i][1];
    g[i] = pass == FS_PASS_BWD ? gemm_s(&sh, T, K, N, 1, sh.D) : gemm_s(&sh, T, N, K, 1, sh.D);
  }
  double tt = (double)sh.t;
  if (m->parallel_block)
    return overlap_pair(ag_s, g[0] + g[2], tt) + overlap_pair(rs_s, g[1] + g[3], tt);
  return overlap_pair(ag_s, g[0], tt) + overlap_pair(rs_s, g[1], tt) +
         overlap_pair(ag_s, g[2], tt) + overlap_pair(rs_s, g[3], tt);
}

static void parts_add(fs_compute_parts *acc, const fs_compute_parts *p, double times) {
  acc->gemm_s += times * p->gemm_s;
  acc->attn_s += times * p->attn_s;
  acc->mem_s += times * p->mem_s;
  acc->kernels += times * p->kernels;
  acc->overhead_s += times * p->overhead_s;
  acc->total_s += times * p->total_s;
  acc->wgrad_s += times * p->wgrad_s;
}

void fs_compute_chunk(const fs_job *j, int64_t chunk, fs_work_pass pass, fs_compute_parts *out) {
  const fs_model *m = &j->model;
  int64_t first, lc = fs_work_chunk_layers(j, chunk, &first);
  int64_t moe = fs_work_moe_layers(m, first, lc);
  *out = (fs_compute_parts){0};
  fs_compute_parts p;
  if (lc - moe > 0) {
    fs_compute_layer(j, 0, pass, &p);
    parts_add(out, &p, (double)(lc - moe));
  }
  if (moe > 0) {
    fs_compute_layer(j, 1, pass, &p);
    parts_add(out, &p, (double)moe);
  }
  if (pass == FS_PASS_RECOMPUTE) return; /* embedding and logits are not recomputed */
  shape sh;
  shape_of(j, &sh);
  int bwd = pass == FS_PASS_BWD;
  double h = (double)sh.h, T = (double)sh.T, D = sh.D;
  double mem = 0;
  if (chunk == 0) { /* gather rows + dropout; backward: add into fp32 gradient rows */
    mem += bwd ? (D + 8) * T * h : 2 * D * T * h + (2 * D + 1) * sh.Tn * h;
    sh.kernels += bwd ? 1 : 2;
  }
  if (chunk == j->par.pp * j->par.virtual_stages - 1) {
    int64_t vt = ceil_div(m->vocab, sh.t);
    out->gemm_s += linear_s(&sh, pass, sh.T, vt, sh.h);
    /* final norm; the vocabulary-parallel cross-entropy in fp32: read the
     * logits, write and re-read exponentials; backward read, write grads */
    mem += (bwd ? 3 : 2) * D * sh.Tn * h + (bwd ? 4 + D : D + 8) * T * (double)vt;
    sh.kernels += 2;
  }
  double ms = fs_compute_mem_s(sh.hw, mem);
  out->mem_s += ms;
  out->kernels += sh.kernels;
  out->overhead_s += sh.kernels * sh.hw->kernel_gap_s;
  out->total_s = out->gemm_s + out->attn_s + out->mem_s + out->overhead_s;
  out->wgrad_s += sh.wgrad_s + sh.wgrad_kernels * sh.hw->kernel_gap_s;
}

/* One op on an average GPU (without stragglers). */
static double op_s(const fs_job *j, int64_t chunk, int backward) {
  if (j->hw.compute == FS_COMPUTE_MFU) {
    double flops = backward ? fs_work_chunk_flops(j, chunk, FS_PASS_BWD) +
                                  fs_work_chunk_flops(j, chunk, FS_PASS_RECOMPUTE)
                            : fs_work_chunk_flops(j, chunk, FS_PASS_FWD);
    return fs_work_compute_s(j, flops);
  }
  fs_compute_parts a, r;
  if (!backward) {
    fs_compute_chunk(j, chunk, FS_PASS_FWD, &a);
    return a.total_s;
  }
  fs_compute_chunk(j, chunk, FS_PASS_BWD, &a);
  fs_compute_chunk(j, chunk, FS_PASS_RECOMPUTE, &r);
  return a.total_s + r.total_s;
}

double fs_compute_op_s(const fs_job *j, int64_t chunk, int backward) {
  return op_s(j, chunk, backward) * fs_compute_straggler_factor(j);
}

double fs_compute_wgrad_s(const fs_job *j, int64_t chunk) {
  double s;
  if (j->hw.compute == FS_COMPUTE_MFU) {
    s = fs_work_compute_s(j, fs_work_chunk_wgrad_flops(j, chunk));
  } else {
    fs_compute_parts b;
    fs_compute_chunk(j, chunk, FS_PASS_BWD, &b);
    s = b.wgrad_s;
  }
  return s * fs_compute_straggler_factor(j);
}

double fs_compute_recompute_s(const fs_job *j, int64_t chunk) {
  double s;
  if (j->hw.compute == FS_COMPUTE_MFU) {
    s = fs_work_compute_s(j, fs_work_chunk_flops(j, chunk, FS_PASS_RECOMPUTE));
  } else {
    fs_compute_parts r;
    fs_compute_chunk(j, chunk, FS_PASS_RECOMPUTE, &r);
    s = r.total_s;
  }
  return s * fs_compute_straggler_factor(j);
}

/* Standard normal density and distribution. */
static double phi(double x) {
  return exp(-0.5 * x * x) * 0.39894228040143267794; /* 1/sqrt(2 pi) */
}
static double Phi(double x) { return 0.5 * erfc(-x / sqrt(2)); }

/* E[max] = integral of x n phi(x) Phi(x)^(n-1) over the line, by
 * composite Simpson on [-9, 9 + sqrt(2 ln n)] (the max's density is below
 * 1e-17 outside), 4096 panels. */
double fs_expected_max_normal(int64_t n) {
  if (n <= 1) return 0;
  double dn = (double)n, lo = -9, hi = 9 + sqrt(2 * log(dn));
  const int panels = 4096;
  double h = (hi - lo) / panels, sum = 0;
  for (int i = 0; i <= panels; i++) {
    double x = lo + i * h, w = (i == 0 || i == panels) ? 1 : (i % 2 ? 4 : 2);
    double cdf = Phi(x);
    double f = cdf > 0 ? x * dn * phi(x) * exp((dn - 1) * log(cdf)) : 0;
    sum += w * f;
  }
  return sum * h / 3;
}

double fs_compute_straggler_factor(const fs_job *j) {
  if (!(j->hw.speed_cv > 0)) return 1;
  return 1 + j->hw.speed_cv * fs_expected_max_normal(fs_job_gpus(j));
}

/* Per parameter updated, Adam with fp32 master weights (Megatron's mixed
 * precision optimizer): read the fp32 gradient twice (its norm for clipping,
 * then the step), read and write the master weight and both moments
 * (8 + 8 + 16 = 32 bytes; 24 with bf16 moments, training.optimizer_moments)
 * and write the D-byte copy when D < 4. Per parameter held, when D < 4: cast the fp32
 * gradient to D bytes before the reduction (read 4, write D). */
double fs_compute_step_s(const fs_job *j, int32_t stage) {
  if (j->hw.compute == FS_COMPUTE_MFU) return 0;
  fs_work_shard sh;
  fs_work_stage_params(j, stage, &sh);
  double held = (double)sh.dense + (double)sh.expert;
  double upd = fs_work_zero_stage(j) >= 1 ? (double)sh.dense / (double)fs_work_dp_group(j, 0) +
                                      (double)sh.expert / (double)fs_work_dp_group(j, 1)
                                : held;
  double D = (double)j->model.dtype_bytes, lowp = j->model.dtype_bytes < 4;
  double mom = 4 * (double)j->train.moment_bytes; /* both moments read and written */
  double bytes = upd * (16 + mom + (lowp ? D : 0)) + (lowp ? held * (4 + D) : 0);
  return fs_compute_mem_s(&j->hw, bytes) * fs_compute_straggler_factor(j);
}
