/* Training jobs and the model maths behind them: what a job file says (model,
 * training batch, parallelism, hardware, topology), how many parameters,
 * FLOPs, bytes of memory and bytes of communication one training iteration
 * of a GPT-style transformer costs, per GPU. Every formula is written beside
 * its function and in docs/model-work.md with its source (Narayanan et al.
 * SC'21, Korthikanti et al. 2022, Rajbhandari et al. SC'20, Megatron-LM,
 * Liu et al. 2023 ring attention and Megatron-Core context parallelism).
 *
 * Everything here is closed-form arithmetic on a few integers: O(layers) at
 * most, no allocation except fs_job itself. The DAG builder (pipeline.c)
 * turns these numbers into compute tasks and collectives.
 *
 * Conventions: b is the micro-batch (sequences), s the sequence length, h the
 * hidden size, a the attention heads, k the key/value heads (GQA), f the MLP
 * inner size, V the vocabulary, L the layers, t = tp, c = cp, p = pp,
 * d = dp, v = virtual_stages, m = global_batch / (micro_batch * dp) the
 * micro-batches per iteration (cp does not change it: the c ranks of a
 * context-parallel group share each sequence), D = dtype_bytes. Parameter counts are exact int64; FLOPs
 * and bytes are doubles (FLOPs of an iteration exceed 2^53). */
#ifndef FABRICSIM_WORK_H
#define FABRICSIM_WORK_H

#include <stddef.h>
#include <stdint.h>

#include "fabricsim/coll.h"
#include "fabricsim/err.h"
#include "fabricsim/pipeline.h"
#include "fabricsim/route.h"
#include "fabricsim/sim.h"
#include "fabricsim/netctl.h"
#include "fabricsim/ocsctl.h"
#include "fabricsim/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the job ------------------------------------------------------------ */

/* Precision of the matmuls (the peak they run at, compute.h); the storage
 * size of weights and activations stays dtype_bytes. */
typedef enum fs_precision {
  FS_PREC_FP32 = 0,
  FS_PREC_TF32,
  FS_PREC_FP16,
  FS_PREC_BF16,
  FS_PREC_FP8,
  FS_PREC_N
} fs_precision;

/* How attention's core (scores, softmax, weighted sum) runs: materialised
 * s x s scores in HBM (Megatron-LM 2021: batched GEMMs, a fused
 * scale-mask-softmax and a dropout) or one fused FlashAttention kernel that
 * keeps them on chip and skips the causal mask's empty half. */
typedef enum fs_attention {
  FS_ATTN_UNFUSED = 0,
  FS_ATTN_FLASH
} fs_attention;

typedef struct fs_model {
  int64_t layers, hidden, ffn, heads, kv_heads, seq_len, vocab;
  int64_t experts;     /* 1 = dense; > 1: MoE layers of `experts` MLPs */
  int64_t top_k;       /* experts per token (MoE); 1 when dense */
  int64_t moe_every;   /* layer i is MoE iff experts > 1, i >= first_dense and
                          i % moe_every == 0 */
  int64_t expert_ffn;  /* an expert's inner size (fine-grained experts); 0: ffn */
  int64_t shared_experts; /* experts every token passes through beside its
                             top_k routed ones (DeepSeekMoE), 0: none */
  int64_t first_dense; /* the first layers are dense whatever moe_every */
  int64_t dtype_bytes; /* weights, gradients, activations: 1, 2 or 4 */
  int gated;           /* SwiGLU MLP: three h x f matrices instead of two */
  int bias;            /* linear biases and LayerNorm shifts (GPT); 0: LLaMA-style */
  int learned_pos;     /* learned position embeddings (s x h); 0: rotary */
  int tied_embeddings; /* the output layer reuses the input embedding */
  int parallel_block;  /* attention and MLP side by side on one norm's output
                          (GPT-J, PaLM): one norm, one TP exchange a pass */
  /* multi-head latent attention (DeepSeek-V2/V3) when kv_lora > 0: queries
   * through a q_lora latent (0: directly), keys and values through a
   * kv_lora latent, heads of qk_nope + qk_rope for scores and v_head for
   * values */
  int64_t q_lora, kv_lora, qk_nope, qk_rope, v_head;
  fs_precision precision; /* of the matmuls; from dtype_bytes unless given */
  fs_attention attention; /* unfused unless given, or a hardware preset is */
} fs_model;

typedef struct fs_training {
  int64_t global_batch, micro_batch; /* sequences */
  int fp8_comm; /* FP8 training: activations sent in FP8 where the frameworks
                   do (sequence parallelism's all-gathers, Transformer
                   Engine; the MoE dispatch, DeepSeek-V3); reductions and
                   the combine stay in dtype_bytes */
  int fp8_activations; /* FP8 training: the activations kept for the backward
                          of the linear layers (and the MLP's inner ones)
                          cached in FP8 (DeepSeek-V3 sec. 3.3.3) */
  int moment_bytes;    /* Adam's two moments: 4 (fp32) or 2 (bf16, DeepSeek-V3) */
} fs_training;

/* The kinds of parallel traffic; index of fs_parallel.algo. CP (context
 * parallelism's ring attention send/recvs) comes last so that the older
 * indices stay. */
typedef enum fs_par_kind {
  FS_PAR_TP = 0,
  FS_PAR_DP,
  FS_PAR_PP,
  FS_PAR_EP,
  FS_PAR_CP,
  FS_PAR_N
} fs_par_kind;

typedef struct fs_parallel {
  int64_t tp, pp, dp, ep;
  int64_t cp;              /* context parallelism: ranks splitting each sequence, 1 = off */
  fs_pipe_schedule schedule; /* GPipe, 1F1B or interleaved (pipeline.h) */
  int64_t virtual_stages;  /* model chunks per stage (interleaved), else 1 */
  int zero;                /* ZeRO stage 0..3 over the data-parallel group */
  int sequence_parallel;   /* Korthikanti et al.: split norms/dropout over tp */
  int recompute;           /* full activation recomputation */
  int selective_recompute; /* Korthikanti et al.: recompute only attention's core */
  int recompute_norms;     /* the norms' outputs recomputed in the backward, not
                              kept (DeepSeek-V3 sec. 3.2.3) */
  int recompute_mla_up;    /* MLA: the up-projections' outputs (Q, K, V per head)
                              recomputed from the latents, not kept (idem) */
  int grad_accum_fusion;   /* weight-gradient GEMMs accumulate into fp32 main
                              gradients (compute.h); 0: a separate add per
                              micro-batch (Megatron-LM 2021) */
  int overlap_dp;          /* gradient reduction overlaps the backward pass */
  double grad_bucket_bytes;
  int64_t ps_servers;      /* algorithms.dp "ps": parameter servers among the
                              gradient group's ranks (0: every rank) */
  /* ZeRO++ (Wang et al., ICLR 2024), with zero 3: the weights' all-gathers
   * in int8 (qwZ), the backward's from a secondary copy partitioned over
   * the gradient group's ranks of one server (hpZ), the gradients'
   * reduce-scatter in int4 (qgZ) */
  int zpp_qwz, zpp_hpz, zpp_qgz;
  /* layers of the first and of the last pipeline stage (Megatron-LM's
   * --decoder-first/last-pipeline-num-layers: fewer beside the embedding
   * and the head), the others split evenly over the middle stages; 0:
   * the automatic split */
  int64_t first_stage_layers, last_stage_layers;
  int blocking_p2p;        /* pipeline sends and receives block (DeepSpeed's
                              engine): "p2p": "blocking"; 0 "async" */
  int overlap_param_gather; /* ZeRO 1 with overlap_dp: the weights' all-gathers
                               run under the next iteration's forward
                               (Megatron-Core's --overlap-param-gather) */
  fs_coll_algo algo[FS_PAR_N]; /* FS_ALGO_AUTO unless the job names one */
} fs_parallel;

/* How compute tasks are timed: FLOPs / (gpu_tflops mfu_matmul), or the
 * per-operation roofline of compute.h. */
typedef enum fs_compute_model {
  FS_COMPUTE_MFU = 0,
  FS_COMPUTE_ROOFLINE
} fs_compute_model;

typedef struct fs_hardware {
  double gpu_tflops;     /* peak dense TFLOP/s at the model's precision */
  double mfu_matmul;     /* achieved fraction of the peak on the model's matmuls */
  fs_compute_model compute; /* MFU unless a preset (or hbm_gb_per_s and sms) and
                               no mfu_matmul are given */
  char preset[24];       /* the preset's name, "" without one */
  double peak_tflops[FS_PREC_N]; /* dense peak per precision (0: unsupported) */
  double matmul_eff;     /* share of the peak a large, well-shaped GEMM reaches */
  double hbm_gb_per_s;   /* HBM bandwidth, GB/s (10^9 bytes) */
  double hbm_eff;        /* share of it a streaming kernel reaches */
  int64_t sms;           /* streaming multiprocessors (or matrix units) */
  int64_t tile_m, tile_n; /* the largest GEMM output tile (compute.h) */
  double hbm_bytes;
  int hbm_in_gib;        /* the job gave hbm_gib (messages name that key) */
  int64_t gpus_per_node; /* scale-up domain: consecutive GPUs; the topology's
                            servers' size when it models servers */
  double nvlink_gbps;    /* scale-up bandwidth per GPU and direction, Gb/s
                            (the topology's NVLink links when it has them):
                            the payload rate, nvlink_eff of the line rate */
  double nvlink_eff;     /* share of the scale-up line rate GPU-driven copies
                            carry (preset's, else 1); fs_job_parse applies it
                            to nvlink_gbps and the topology's scale-up links */
  int64_t nics_per_gpu;
  double nic_gbps;       /* per NIC; nics_per_gpu * nic_gbps = a host's link */
  /* What the training software reaches on it (the job's "framework"
   * section and its preset, compute.h; docs/model-compute.md,
   * "Framework presets"); all 0 without one: the best-shape roofline. */
  char framework[24];     /* the framework preset's name, "" without one */
  double gemm_k_overhead; /* a GEMM tile's fixed cost (prologue, epilogue),
                             in steps of the inner dimension k */
  double kernel_hbm_eff;  /* share of HBM bandwidth the memory-bound kernels
                             reach (0: hbm_eff) */
  double kernel_gap_s;    /* the GPU's idle time per kernel launched */
  int nccl_step_latency;  /* collectives pay NCCL's per-step network latency
                             (fs_coll_nccl_step_latency_s) between servers */
  int tp_overlap;         /* sequence-parallel collectives overlap their GEMMs
                             (fs_compute_tp_overlap_exposed_s) */
  double speed_cv;        /* coefficient of variation of the GPUs' compute
                             speed (persistent, per GPU): the job runs at
                             its slowest GPU's pace (0: all alike) */
} fs_hardware;

/* How GPU g (server g / gpus_per_node, local index g % gpus_per_node) maps
 * to a host of the topology; see fs_job_place. */
typedef enum fs_placement {
  FS_PLACE_RAIL_ALIGNED = 0, /* local GPU i of every server on leaf i of its group */
  FS_PLACE_PACKED            /* a server's GPUs on consecutive hosts (one leaf) */
} fs_placement;

typedef struct fs_job {
  char file[256];       /* label of the source in messages */
  fs_model model;
  fs_training train;
  fs_parallel par;
  fs_hardware hw;
  fs_topo *topo;        /* owned; NULL for a job built in code without one */
  fs_placement placement;
  fs_route_mode mode;   /* shortest, ecmp or spray */
  uint64_t seed;
  /* Routing control (netctl.h): mode "optimized" re-optimises every
   * reopt_interval_s (> 0) on top of `mode`; failures (owned) are routed
   * around detect_s after they happen. */
  double reopt_interval_s, reopt_reconfig_s, detect_s;
  fs_routeopt_kind reopt_optimizer;
  fs_netctl_failure *failures;
  int32_t n_failures;
  fs_transport transport; /* "transport" (sim.h): fluid when absent */
  /* An OCS layer between the topology's leaves whose circuits a
   * controller sets during the run (ocsctl.h, "ocs"): ports 0 = none. */
  fs_ocsctl_opts ocs;
  /* In a cluster of several jobs (train.h, fs_cluster_new): the job's GPU
   * g is the cluster's GPU gpu_offset + g (whole servers); 0 alone. */
  int64_t gpu_offset;
} fs_job;

/* Sets every documented default (dense model, 1F1B, ZeRO 0, 25 MiB buckets,
 * overlap on, mfu 0.5, 1 NIC, rail-aligned, ECMP seed 1, bias, learned
 * positions, tied embeddings, dtype 2) and zeroes the rest: the caller then
 * sets the sizes (and ffn = 4h, kv_heads = heads, which the parser defaults)
 * and calls fs_job_validate. file labels messages (NULL: "job"). */
void fs_job_init(fs_job *job, const char *file);

/* Checks the cross-field rules (docs/model-work.md lists them): tp divides
 * heads, kv_heads and ffn, and divides gpus_per_node or is a multiple of it
 * (whole servers); pp * virtual_stages <= layers; 2 cp divides seq_len when
 * cp > 1; micro_batch * dp divides global_batch; ep divides experts and dp;
 * ZeRO 2/3 only without pipelining; with a topology: tp * cp * pp * dp GPUs fit its
 * hosts, gpus_per_node and nvlink_gbps match its servers (if it models
 * them), the NICs match its host links, the placement fits; the busiest
 * stage fits in HBM. Jobs built in code set nic_gbps themselves. Returns 0 or FS_EINVAL with
 * err = "FILE: $.json.path: what, got VALUE" naming the field to change. */
int fs_job_validate(const fs_job *job, fs_err *err);

/* Parses a job (NUL-terminated text of len bytes; file labels errors),
 * applies defaults (nic_gbps from the topology's host links; gpus_per_node
 * and nvlink_gbps from its GPU servers, if it models them) and validates.
 * On success *out is a new job (free with fs_job_free); on failure *out is
 * untouched and err names the file, the JSON path and the value. */
int fs_job_parse(const char *text, size_t len, const char *file, fs_job **out,
                 fs_err *err);
/* Reads and parses a file (FS_EIO if it cannot be read). */
int fs_job_load(const char *path, fs_job **out, fs_err *err);
void fs_job_free(fs_job *job); /* frees the topology too; NULL is a no-op */

const char *fs_placement_name(fs_placement p);
int fs_placement_parse(const char *name, fs_placement *out);
const char *fs_par_kind_name(fs_par_kind k); /* "tp", "dp", "pp", "ep", "cp"; "?" */

/* ---- ranks and placement ------------------------------------------------ */

/* A GPU's coordinates in Megatron-Core's rank order (tp fastest, then cp,
 * then dp, then pp):
 *   gpu = tp_rank + tp * (cp_rank + cp * (dp_rank + dp * pp_rank)),
 * so with cp = 1 it is the older tp + tp * (dp + dp * pp). Expert
 * parallelism is carved out of dp: ep_rank = dp_rank % ep, the
 * expert-data-parallel rank dp_rank / ep. cp comes last in the struct so
 * that positional initialisers written before it ({tp, dp, pp, ep, edp})
 * mean cp_rank 0. fs_job_coords fills all six; fs_job_gpu_of reads tp, cp,
 * dp and pp (ep and edp are derived from dp). */
typedef struct fs_rank_coords {
  int32_t tp, dp, pp, ep, edp;
  int32_t cp;
} fs_rank_coords;
int64_t fs_job_gpus(const fs_job *job); /* tp * cp * pp * dp */
void fs_job_coords(const fs_job *job, int32_t gpu, fs_rank_coords *out);
int32_t fs_job_gpu_of(const fs_job *job, const fs_rank_coords *c); /* inverse */

/* Fills host_of_gpu[0 .. fs_job_gpus) with distinct topology host ids per
 * the job's placement (host_of_gpu NULL: only checks). Servers are
 * gpus_per_node consecutive GPUs (server g / G, local GPU g % G).
 *   packed: GPU g is host g, so a server's GPUs share a leaf when G divides
 *     the hosts per leaf;
 *   rail_aligned: with H hosts per leaf, G consecutive leaves form a rail
 *     group for H servers and local GPU l of server s = q H + j is host
 *     ((q G + l) H + j): the same local GPU of H servers on one leaf (rail).
 *     A single-leaf topology keeps GPU g on host g.
 * Fails with FS_EINVAL naming $.placement if the leaves are uneven or do not
 * come in groups of G, or if the job has no topology; host_of_gpu is then
 * unspecified. */
int fs_job_place(const fs_job *job, int32_t *host_of_gpu, fs_err *err);

/* ---- parameters (exact counts) ------------------------------------------- */

/* Attention of one layer: Q and output h x h, K and V h x (h k / a) each,
 * plus biases (h + 2 h k / a) + h if bias. */
int64_t fs_work_attn_params(const fs_model *m);
/* One MLP (one expert): 2 h f (3 h f gated) weights, biases f + h (2f + h). */
int64_t fs_work_mlp_params(const fs_model *m);
/* The two norms of a layer: 2 * 2h (2 * h without bias). */
int64_t fs_work_norm_params(const fs_model *m);
/* An expert's inner size: expert_ffn, or ffn when 0. */
int64_t fs_work_expert_ffn(const fs_model *m);
int fs_work_layer_is_moe(const fs_model *m, int64_t layer);
/* MoE layers among layers [first, first + count). */
int64_t fs_work_moe_layers(const fs_model *m, int64_t first, int64_t count);
/* attention + norms + MLP; an MoE layer has `experts` MLPs and a router
 * h x experts. */
int64_t fs_work_layer_params(const fs_model *m, int64_t layer);
/* Word embedding V h, plus s h learned positions. */
int64_t fs_work_embed_params(const fs_model *m);
/* The whole model: layers + embeddings + final norm (+ V h untied output).
 * GPT-3 175B: 12 L h^2 + 13 L h + (V + s) h + 2h = 174,615,846,912. */
int64_t fs_work_params(const fs_model *m);
/* Parameters one token uses: MoE layers count top_k experts. */
int64_t fs_work_active_params(const fs_model *m);

/* Parameters held by one GPU of pipeline stage `stage` (0 .. pp-1), split
 * by the data-parallel group that reduces their gradients: `dense` over
 * dp * cp ranks, `expert` (MoE experts) over dp / ep * cp ranks
 * (fs_work_dp_group). Context parallelism does not split parameters: every
 * cp rank holds the stage's whole shard. */
typedef struct fs_work_shard {
  int64_t layers, moe_layers; /* layers held (all chunks of the stage) */
  int64_t dense, expert;
} fs_work_shard;
void fs_work_stage_params(const fs_job *job, int32_t stage, fs_work_shard *out);

/* The ranks holding the same weights, over which their gradients are
 * reduced (and ZeRO shards): dp * cp for dense parameters, dp / ep * cp for
 * expert ones (Megatron-Core's data-parallel group "with context
 * parallelism"). expert 0: dense, 1: expert. */
int64_t fs_work_dp_group(const fs_job *job, int expert);
/* The ZeRO stage a job's data-parallel traffic, memory and optimizer step
 * follow: parallelism.zero, except ZeRO-3 with pp > 1, which runs as FSDP
 * runs beside pipeline parallelism (torchtitan, Llama 3: the weights are
 * not resharded between micro-batches, so gathered once per iteration and
 * chunk, before its first forward, and the gradients reduce-scattered once,
 * after its last backward): stage 1's traffic and memory, its all-gathers
 * under the next iteration's forwards (overlap_param_gather). */
int fs_work_zero_stage(const fs_job *job);
/* ZeRO++'s hpZ: the gradient group's ranks on one server as rank 0 of TP
 * rank 0 and stage 0 sees them (the secondary partition's size; 1: none
 * shares its server). */
int64_t fs_work_hpz_group(const fs_job *j);
/* With training.fp8_comm, what a kind's collectives carry on average over
 * the bytes of fs_work_tp_bytes / fs_work_ep_bytes: TP with sequence
 * parallelism (FP8 all-gathers, D-byte reduce-scatters) and EP (FP8
 * dispatch, D-byte combine) (1 + D) / (2 D); 1 otherwise. And the FP8
 * all-gather's own share, 1 / D (1 without fp8_comm). */
double fs_work_fp8_share(const fs_job *j, fs_par_kind kind);
double fs_work_fp8_gather_share(const fs_job *j);

/* Layers of model chunk `chunk` (0 .. pp*v-1); *first_layer (if not NULL)
 * its first layer. Chunks are consecutive: chunk c holds layers
 * [first, first + n). With V = pp * v chunks and L layers, base =
 * ceil(L / V); when V does not divide L the deficit V * base - L is taken
 * one layer each from the chunks in the order first, last, second,
 * second-to-last, ... (Llama 3 405B: 126 layers over 16 stages gives
 * 7, 8, ..., 8, 7). Stage i holds chunks i, i + p, ..., i + (v - 1) p.
 * Needs L >= V (fs_job_validate); a chunk outside [0, V) has 0 layers. */
int64_t fs_work_chunk_layers(const fs_job *job, int64_t chunk, int64_t *first_layer);

/* ---- FLOPs --------------------------------------------------------------- */

/* Forward FLOPs of layer `layer` for b sequences (whole layer, not per GPU):
 * 2 b s (matmul weights used per token) + 4 b s^2 h. Dense with f = 4h and
 * k = a: 24 b s h^2 + 4 b s^2 h (Narayanan et al. SC'21). */
double fs_work_layer_fwd_flops(const fs_model *m, int64_t layer, int64_t b);
/* Forward FLOPs of the logits layer: 2 b s h V. */
double fs_work_logits_fwd_flops(const fs_model *m, int64_t b);

typedef enum fs_work_pass {
  FS_PASS_FWD = 0,
  FS_PASS_RECOMPUTE, /* the forward re-run before a backward (0 without recompute) */
  FS_PASS_BWD        /* 2x forward */
} fs_work_pass;
/* FLOPs one GPU spends on model chunk `chunk` (0 .. pp*v-1, the layers of
 * fs_work_chunk_layers) for one micro-batch in one pass: the chunk's layers
 * / (tp cp), plus the logits / (tp cp) on the last chunk (never
 * recomputed). Dividing the attention s^2 term by cp too assumes
 * Megatron-Core's load-balanced causal split (each cp rank holds chunks i
 * and 2c - 1 - i of the 2c chunks of a sequence). */
double fs_work_chunk_flops(const fs_job *job, int64_t chunk, fs_work_pass pass);
/* Of chunk's FS_PASS_BWD FLOPs, the weight gradients' (the W of a split
 * backward): one forward of the matmuls that have weights, the layers' and
 * the logits', without attention's core (Q K^T and the weighted sum). */
double fs_work_chunk_wgrad_flops(const fs_job *job, int64_t chunk);

/* Per iteration, whole job: model FLOPs 3 (sum of layer forwards + logits)
 * over global_batch sequences, the MFU numerator (Megatron/PaLM convention:
 * recomputation excluded); hardware FLOPs add the recomputed forwards;
 * 6ND = 6 * global_batch * s * active params, the usual approximation. */
double fs_work_model_flops(const fs_job *job);
double fs_work_hw_flops(const fs_job *job);
double fs_work_flops_6nd(const fs_job *job);

/* Seconds a GPU needs for `flops`: flops / (gpu_tflops 1e12 mfu_matmul). */
double fs_work_compute_s(const fs_job *job, double flops);
/* Model FLOPs utilisation of an iteration lasting iter_s seconds:
 * model_flops / (iter_s * gpus * gpu_tflops 1e12). */
double fs_work_mfu(const fs_job *job, double iter_s);

/* ---- memory (bytes per GPU) ---------------------------------------------- */

int64_t fs_work_microbatches(const fs_job *job); /* m */

/* Activation bytes one layer stores for one micro-batch on one GPU
 * (Korthikanti et al. 2022, generalised to GQA, f != 4h, gating, MoE),
 * divided by cp (each cp rank keeps s / cp tokens' activations):
 *   without recompute: R / (SP ? t : 1) + S / t with
 *     R = 10 s b h (norm inputs, dropout masks, QKV and MLP inputs)
 *     S = 4 s b h + 4 s b h k / a + 5 a s^2 b + top_k * (4 s b f | 6 s b f)
 *   so dense, f = 4h, k = a: s b h (34 + 5 a s / h) at t = 1, and
 *   s b h (10 + 24/t + 5 a s / (h t)) with tp, s b h / t (34 + 5 a s / h) with SP;
 *   with full recompute: 2 s b h / (SP ? t : 1), the layer's input. */
double fs_work_act_layer_bytes(const fs_job *job, int moe, int recompute);

/* Micro-batches whose activations stage `stage` holds at its peak, in units
 * of the whole stage's layers: 1F1B min(p - i, m); GPipe m; interleaved
 * min(2 (p - i - 1) + (v - 1) p + 1, m v) chunks / v (stage 0:
 * p (1 + (p - 1) / (p v)), Korthikanti sec. 4.2.3). */
double fs_work_inflight(const fs_job *job, int32_t stage);

typedef struct fs_work_mem {
  int32_t stage;
  fs_work_shard shard;
  double weight_bytes; /* D per parameter; / N under ZeRO-3 (never / cp otherwise) */
  double grad_bytes;   /* D per parameter; / N under ZeRO-2, 3 */
  double optim_bytes;  /* 12 (D < 4: fp32 master + 2 Adam moments) or 8; / N under ZeRO >= 1 */
  double act_bytes;    /* layers' activations in flight + embedding/logits extras
                          + one layer's working set under recompute; all / cp */
  double total_bytes;
} fs_work_mem;
/* N is fs_work_dp_group: dp cp for dense parameters and dp / ep cp for
 * expert ones. */
void fs_work_memory(const fs_job *job, int32_t stage, fs_work_mem *out);
/* The stage needing the most memory (the lowest on ties). */
void fs_work_memory_peak(const fs_job *job, fs_work_mem *out);

/* ---- communication per iteration, per GPU of a stage --------------------- */

/* One kind's traffic: collectives issued, the sum of their sizes in the
 * nccl-tests convention (coll.h) and the bytes a GPU sends with bandwidth-
 * optimal algorithms (all-reduce 2(n-1)/n, all-gather, reduce-scatter and
 * all-to-all (n-1)/n of the size, send/recv the size). */
typedef struct fs_work_traffic {
  double colls, size_bytes, wire_bytes;
  int64_t group; /* ranks per collective */
} fs_work_traffic;

typedef struct fs_work_comm {
  fs_work_traffic kind[FS_PAR_N]; /* tp, dp (dense + expert, over dp cp ranks),
                                     pp (sends), ep, cp (ring attention sends) */
  fs_work_traffic dp_expert;      /* the part of kind[FS_PAR_DP] over dp/ep cp ranks */
  fs_work_traffic emb;            /* tied-embedding gradient all-reduce, first <-> last stage */
} fs_work_comm;

/* Building blocks (bytes), each for the s / c tokens a cp rank holds: one
 * TP collective b (s/c) h D; one pipeline message per TP rank
 * b (s/c) h D / t; one EP all-to-all's per-GPU send buffer
 * b (s/c) h top_k D / t (tokens split by SP, which Megatron requires with
 * TP). With cp = 1 these are the older b s h D, b s h D / t, ... */
double fs_work_tp_bytes(const fs_job *job);
double fs_work_pp_bytes(const fs_job *job);
double fs_work_ep_bytes(const fs_job *job);
/* TP collectives per layer and micro-batch in a pass: 2 all-reduces (4:
 * 2 all-gathers + 2 reduce-scatters with SP); 0 for a recompute pass without
 * recompute. */
int fs_work_tp_colls_per_layer(const fs_job *job, fs_work_pass pass);

/* Context parallelism's ring attention (Liu et al. 2023; Megatron-Core /
 * Transformer Engine's KV P2P): bytes one GPU sends to the next cp rank in
 * one ring step of one layer and micro-batch. Forward (and recompute): its
 * K and V blocks, 2 b (s/c) (h k / a) D / t (GQA-sized, split over TP);
 * backward: K, V and the dK, dV accumulators, twice that. The formula is
 * returned for any cp (also 1, where no step is taken). */
double fs_work_cp_step_bytes(const fs_job *job, fs_work_pass pass);
/* Ring steps per layer and micro-batch in a pass: c - 1 (0 when cp = 1,
 * and for a recompute pass without recompute). */
int fs_work_cp_steps_per_layer(const fs_job *job, fs_work_pass pass);

/* The traffic of one GPU of pipeline stage `stage` over one iteration, per
 * kind (docs/model-work.md gives each count); groups of size 1 move
 * nothing. */
void fs_work_comm_stage(const fs_job *job, int32_t stage, fs_work_comm *out);

#ifdef __cplusplus
}
#endif

#endif
