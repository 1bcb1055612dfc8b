/* Per-operation compute time of a transformer on one accelerator: GEMMs by a
 * roofline with tile and wave quantization over the GPU's SMs, attention's
 * core unfused (materialised scores) or FlashAttention-style, and the
 * memory-bound operations (norms, softmax, activations, dropout, residuals,
 * optimizer step, gradient casting) by HBM bandwidth; and the hardware
 * presets whose figures feed it. docs/model-compute.md gives every formula
 * and source.
 *
 * All of it is closed-form arithmetic on a validated job (fs_job_validate):
 * O(layers) per chunk at most, no allocation, no failure. With
 * hw.compute == FS_COMPUTE_MFU the chunk times are exactly the older
 * FLOPs / (gpu_tflops mfu_matmul), bit for bit. */
#ifndef FABRICSIM_COMPUTE_H
#define FABRICSIM_COMPUTE_H

#include <stdint.h>

#include "fabricsim/work.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- hardware presets ------------------------------------------------------ */

/* One accelerator's figures (sources in docs/model-compute.md). A peak of 0
 * means the precision has no dense tensor-core rate in the sources. */
typedef struct fs_gpu_preset {
  const char *name;
  double peak_tflops[FS_PREC_N]; /* dense, per precision */
  double matmul_eff[FS_PREC_N];  /* measured (or assumed) best-GEMM share of the peak */
  double hbm_bytes, hbm_gb_per_s, hbm_eff;
  int64_t sms, tile_m, tile_n;
  int64_t gpus_per_node; /* scale-up (NVLink, Infinity Fabric, ICI host) domain */
  double nvlink_gbps;    /* scale-up bandwidth per GPU and direction, Gb/s */
  double nic_gbps;       /* scale-out NIC per GPU, Gb/s (0: not in the sources) */
  double nvlink_eff;     /* share of nvlink_gbps that GPU-driven (SM) copies carry,
                            measured or derived (1: no figure, not applied) */
} fs_gpu_preset;

/* The preset named `name`, or NULL. */
const fs_gpu_preset *fs_compute_preset(const char *name);
/* The i-th preset (0-based), NULL past the last: for listing them. */
const fs_gpu_preset *fs_compute_preset_at(int i);

/* ---- framework presets ---------------------------------------------------- */

/* What one training software stack reaches on its hardware, and the
 * defaults it runs with (docs/model-compute.md, "Framework presets"; each
 * fitted figure with its fit in docs/validation.md). A job's "framework"
 * section names one; every figure is overridable there, every default by the
 * job's own key. */
typedef struct fs_framework_preset {
  const char *name;
  const char *what;       /* the software and its era, one line */
  double gemm_k_overhead; /* fs_hardware.gemm_k_overhead */
  double kernel_hbm_eff;  /* fs_hardware.kernel_hbm_eff */
  double kernel_gap_us;   /* fs_hardware.kernel_gap_s, in us */
  fs_attention attention; /* default training.attention */
  int grad_accum_fusion;  /* default parallelism.grad_accum_fusion */
  int overlap_dp;         /* default parallelism.overlap_dp */
  int blocking_p2p;       /* default parallelism.p2p: 1 "blocking" */
} fs_framework_preset;

/* The framework preset named `name`, or NULL; the i-th (0-based), NULL past
 * the last. */
const fs_framework_preset *fs_compute_framework(const char *name);
const fs_framework_preset *fs_compute_framework_at(int i);

const char *fs_precision_name(fs_precision p); /* "fp32", "tf32", ...; "?" */
int fs_precision_parse(const char *name, fs_precision *out); /* FS_EINVAL if unknown */
/* Bytes of a GEMM input at a precision: 1 for fp8, 4 for fp32 and tf32, else 2. */
double fs_precision_bytes(fs_precision p);

/* ---- one GEMM -------------------------------------------------------------- */

typedef struct fs_gemm_time {
  double s;                 /* max(compute_s, memory_s) */
  double compute_s, memory_s;
  double flops, bytes;      /* 2 m n k batch; operands read + result written once */
  int64_t tile_m, tile_n;   /* the tile chosen */
  int64_t tiles, waves;     /* output tiles (all batches), ceil(tiles / sms) */
  double quant_eff;         /* useful / executed tile work: tile x wave quantization */
} fs_gemm_time;

/* A (batch of) m x k by k x n product on hw: each candidate output tile
 * (tile_m x tile_n, its transpose, tile_n x tile_n) pads m and n up to
 * whole tiles; the tiles run in waves of `sms`, each SM at
 * gpu_tflops matmul_eff / sms, for k + gemm_k_overhead steps (the tile's
 * fixed cost; 0 without a framework preset); the fastest candidate is
 * taken. The operands
 * (in_bytes per element) are read and the result (out_bytes per element)
 * written once at hbm_gb_per_s hbm_eff. Needs m, n, k, batch >= 1. */
void fs_compute_gemm(const fs_hardware *hw, int64_t m, int64_t n, int64_t k, int64_t batch,
                     double in_bytes, double out_bytes, fs_gemm_time *out);
/* Seconds a memory-bound kernel moving `bytes` takes: bytes / (hbm_gb_per_s
 * 1e9 kernel_hbm_eff), hbm_eff without a framework's figure. */
double fs_compute_mem_s(const fs_hardware *hw, double bytes);

/* ---- a transformer on one GPU ---------------------------------------------- */

/* Where a pass's time goes, on one GPU for one micro-batch. */
typedef struct fs_compute_parts {
  double gemm_s; /* the linear layers (QKV, output, MLP or experts, router, logits) */
  double attn_s; /* attention's core: batched GEMMs + softmax + dropout, or flash */
  double mem_s;  /* norms, activations, dropout + residual, embedding, loss */
  double kernels;    /* kernels launched */
  double overhead_s; /* kernels x the framework's gap per kernel (kernel_gap_s) */
  double total_s;
  double wgrad_s; /* backward: of total_s, the weight-gradient GEMMs (and their
                     accumulation without fusion) with their kernels' gaps */
} fs_compute_parts;

/* One layer (moe: an MoE layer) in one pass on one GPU, one micro-batch,
 * with the job's tp, cp and sequence-parallel splits. FS_PASS_RECOMPUTE is
 * the forward under full recomputation, the attention core under selective
 * recomputation (nothing with FlashAttention, whose backward recomputes the
 * scores anyway), zero otherwise. */
void fs_compute_layer(const fs_job *job, int moe, fs_work_pass pass, fs_compute_parts *out);

/* Model chunk `chunk` in one pass: its layers, plus the embedding on chunk
 * 0 and the final norm, logits and loss on the last (never recomputed). */
void fs_compute_chunk(const fs_job *job, int64_t chunk, fs_work_pass pass, fs_compute_parts *out);

/* Seconds one GPU computes op `backward` (0: the forward, 1: the backward
 * with its recomputation) of model chunk `chunk` for one micro-batch. MFU
 * model: exactly fs_work_compute_s of the pass's FLOPs (the backward's
 * FS_PASS_BWD + FS_PASS_RECOMPUTE), as the DAG builder always did; roofline:
 * the chunk's fs_compute_chunk totals. */
double fs_compute_op_s(const fs_job *job, int64_t chunk, int backward);
/* The weight gradients' share of fs_compute_op_s(job, chunk, 1): the W op
 * of a split backward (zero-bubble schedules), the rest being B's. MFU
 * model: fs_work_chunk_wgrad_flops at the job's rate; roofline: the
 * backward's wgrad_s. */
double fs_compute_wgrad_s(const fs_job *job, int64_t chunk);
/* The recomputed forward's share of fs_compute_op_s(job, chunk, 1) (0
 * without recomputation): the backward op runs it first. */
double fs_compute_recompute_s(const fs_job *job, int64_t chunk);

/* Seconds a GPU of pipeline stage `stage` spends once per iteration on the
 * gradients and the optimizer (roofline only; 0 with the MFU model): the
 * cast of its fp32 gradients to D bytes for the reduction when D < 4, the
 * gradient norm and the Adam step on the parameters it updates (all of the
 * stage's, or 1 / N of them with ZeRO >= 1, Megatron's distributed
 * optimizer). */
double fs_compute_step_s(const fs_job *job, int32_t stage);

/* Seconds of tensor-parallel communication one layer leaves exposed in a
 * pass when each sequence-parallel all-gather and reduce-scatter (ag_s,
 * rs_s: one collective's time) overlaps the GEMM it feeds or follows, both
 * split in t chunks (Transformer Engine's userbuffers, Megatron-Core's
 * --tp-comm-overlap): per pair max(c, g) + min(c, g) / t - g. The forward
 * (and the recomputed forward) pairs the QKV, output, MLP up and down
 * GEMMs with an all-gather, a reduce-scatter, an all-gather, a
 * reduce-scatter; the backward their input-gradient GEMMs; a parallel block
 * its one all-gather with QKV and MLP up, its reduce-scatter with the
 * output and MLP down. On a dense layer's shapes. 0 for a pass with no TP
 * communication. */
double fs_compute_tp_overlap_exposed_s(const fs_job *job, fs_work_pass pass, double ag_s,
                                       double rs_s);

/* ---- stragglers -------------------------------------------------------------- */

/* E[max of n independent standard normal variables] (0 for n <= 1): by
 * quadrature of n x phi(x) Phi(x)^(n-1) x, to about 1e-9. */
double fs_expected_max_normal(int64_t n);

/* What every compute time of job is multiplied by for its slowest GPU:
 * 1 + speed_cv E[max of the job's GPUs] (docs/model-compute.md,
 * "Stragglers"); exactly 1 with speed_cv 0. */
double fs_compute_straggler_factor(const fs_job *job);

#ifdef __cplusplus
}
#endif

#endif
