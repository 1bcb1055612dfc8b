/* Model maths of a GPT-style transformer under tensor, context, pipeline,
 * data and expert parallelism: parameters, FLOPs, memory and communication volumes
 * per GPU and per iteration (work.h; docs/model-work.md derives each one).
 * Pure arithmetic on the job's integers: nothing allocates, nothing fails;
 * the callers pass validated jobs (fs_job_validate), which also bounds the
 * model so that the int64 parameter counts cannot overflow. A stage's sums
 * count its MoE layers in closed form per chunk: O(virtual_stages). */
#include <math.h>

#include "fabricsim/work.h"

/* ---- parameters ---------------------------------------------------------- */

/* Width of the K (and of the V) projection: k heads of h / a each. */
static int64_t kv_dim(const fs_model *m) { return m->hidden / m->heads * m->kv_heads; }

/* Multi-head latent attention (DeepSeek-V2, sec. 2.1; DeepSeek-V3): the
 * down projections to the latents (h x q_lora, h x (kv_lora + qk_rope):
 * the shared rotary key rides with the KV latent) and their RMSNorms,
 * which tensor parallelism replicates (Megatron-Core's MLA), and the up
 * projections (q_lora x a (nope + rope), kv_lora x a (nope + v)) and the
 * output (a v x h), which it splits. Without a query latent the queries
 * are one h x a (nope + rope) projection, split. */
static int64_t mla_down(const fs_model *m) {
  return (m->q_lora ? m->hidden * m->q_lora + m->q_lora : 0) +
         m->hidden * (m->kv_lora + m->qk_rope) + m->kv_lora;
}
static int64_t mla_split(const fs_model *m) {
  int64_t a = m->heads, qk = m->qk_nope + m->qk_rope;
  return (m->q_lora ? m->q_lora : m->hidden) * a * qk + m->kv_lora * a * (m->qk_nope + m->v_head) +
         a * m->v_head * m->hidden;
}
/* A token's attention matmul weights: the projections without the norms. */
static int64_t mla_matmul(const fs_model *m) {
  return mla_down(m) - (m->q_lora ? m->q_lora : 0) - m->kv_lora + mla_split(m);
}

/* Attention matmul weights: Q h*h, K and V h*kv each, output h*h (MLA: its
 * projections and latent norms). */
static int64_t attn_weights(const fs_model *m) {
  if (m->kv_lora > 0) return mla_down(m) + mla_split(m);
  return 2 * m->hidden * m->hidden + 2 * m->hidden * kv_dim(m);
}
/* Biases split by tensor parallelism (QKV, column-parallel) and not (the
 * output projection's, row-parallel: added after the all-reduce). */
static int64_t attn_col_bias(const fs_model *m) {
  return m->bias ? m->hidden + 2 * kv_dim(m) : 0;
}
static int64_t attn_row_bias(const fs_model *m) { return m->bias ? m->hidden : 0; }

/* The attention weights and QKV biases a TP group of t holds, all ranks
 * together: the model's, except that with fewer key/value heads than t
 * (t a multiple of kv_heads) each rank holds one K and one V head,
 * replicated t / kv_heads times, as Megatron-Core runs
 * num_query_groups < tp. */
static int64_t attn_held(const fs_model *m, int64_t t) {
  if (m->kv_lora > 0) return t * mla_down(m) + mla_split(m); /* down projections replicated */
  if (m->kv_heads >= t) return attn_weights(m) + attn_col_bias(m);
  int64_t kv = m->hidden / m->heads * t; /* t replicas of one head */
  return 2 * m->hidden * m->hidden + 2 * m->hidden * kv + (m->bias ? m->hidden + 2 * kv : 0);
}

static int64_t mlp_weights(const fs_model *m) {
  return (m->gated ? 3 : 2) * m->hidden * m->ffn;
}
static int64_t mlp_col_bias(const fs_model *m) {
  return m->bias ? (m->gated ? 2 : 1) * m->ffn : 0;
}

int64_t fs_work_expert_ffn(const fs_model *m) { return m->expert_ffn > 0 ? m->expert_ffn : m->ffn; }

/* One expert (routed or shared): an MLP of inner size expert_ffn. */
static int64_t expert_weights(const fs_model *m) {
  return (m->gated ? 3 : 2) * m->hidden * fs_work_expert_ffn(m);
}
static int64_t expert_col_bias(const fs_model *m) {
  return m->bias ? (m->gated ? 2 : 1) * fs_work_expert_ffn(m) : 0;
}
static int64_t expert_params(const fs_model *m) {
  return expert_weights(m) + expert_col_bias(m) + (m->bias ? m->hidden : 0);
}
static int64_t mlp_row_bias(const fs_model *m) { return m->bias ? m->hidden : 0; }

static int64_t norm_params(const fs_model *m) { return m->bias ? 2 * m->hidden : m->hidden; }
static int64_t router_params(const fs_model *m) { return m->hidden * m->experts; }

int64_t fs_work_attn_params(const fs_model *m) {
  return attn_weights(m) + attn_col_bias(m) + attn_row_bias(m);
}

int64_t fs_work_mlp_params(const fs_model *m) {
  return mlp_weights(m) + mlp_col_bias(m) + mlp_row_bias(m);
}

/* two norms a layer, one in a parallel block (both branches read it) */
int64_t fs_work_norm_params(const fs_model *m) {
  return (m->parallel_block ? 1 : 2) * norm_params(m);
}

/* Megatron-Core's moe_layer_freq = M: layer i is MoE iff i % M == 0; the
 * first first_dense layers are dense whatever M (DeepSeek-V3's
 * first_k_dense_replace). */
int fs_work_layer_is_moe(const fs_model *m, int64_t layer) {
  return m->experts > 1 && layer >= m->first_dense && layer % m->moe_every == 0;
}

int64_t fs_work_moe_layers(const fs_model *m, int64_t first, int64_t count) {
  if (m->experts <= 1 || count <= 0) return 0;
  /* multiples of M in [max(first, first_dense), first + count) */
  int64_t M = m->moe_every, end = first + count;
  if (first < m->first_dense) first = m->first_dense;
  if (first >= end) return 0;
  return (end + M - 1) / M - (first + M - 1) / M;
}

/* An MoE layer's MLP part: its experts, the shared ones, the router. */
static int64_t moe_params(const fs_model *m, int64_t experts) {
  return (experts + m->shared_experts) * expert_params(m) + router_params(m);
}

int64_t fs_work_layer_params(const fs_model *m, int64_t layer) {
  int64_t p = fs_work_attn_params(m) + fs_work_norm_params(m);
  if (fs_work_layer_is_moe(m, layer)) return p + moe_params(m, m->experts);
  return p + fs_work_mlp_params(m);
}

int64_t fs_work_embed_params(const fs_model *m) {
  return m->vocab * m->hidden + (m->learned_pos ? m->seq_len * m->hidden : 0);
}

/* Sum over layers, grouped: every layer has attention and norms; n_moe of
 * them have experts + router, the rest one MLP. */
static int64_t params_with_experts(const fs_model *m, int64_t experts_per_moe) {
  int64_t n_moe = fs_work_moe_layers(m, 0, m->layers);
  int64_t per_layer = fs_work_attn_params(m) + fs_work_norm_params(m);
  int64_t total = m->layers * per_layer + (m->layers - n_moe) * fs_work_mlp_params(m) +
                  n_moe * moe_params(m, experts_per_moe);
  total += fs_work_embed_params(m) + norm_params(m); /* final norm */
  if (!m->tied_embeddings) total += m->vocab * m->hidden;
  return total;
}

int64_t fs_work_params(const fs_model *m) { return params_with_experts(m, m->experts); }

int64_t fs_work_active_params(const fs_model *m) {
  return params_with_experts(m, m->experts > 1 ? m->top_k : 1);
}

/* Rows of the vocabulary one tensor-parallel rank holds: Megatron splits
 * the embedding by vocabulary (VocabParallelEmbedding); a vocabulary that
 * tp does not divide leaves some ranks ceil(V / t) rows. */
static int64_t vocab_rows(const fs_job *j) {
  return (j->model.vocab + j->par.tp - 1) / j->par.tp;
}

/* Stage i holds the chunks i, i + p, ..., i + (v - 1) p (Megatron's
 * interleaved assignment; v = 1 is the plain contiguous split). With
 * V | L every chunk has L / V layers, as before uneven splits existed.
 * Otherwise the first nf = ceil(deficit / 2) chunks and the last
 * nb = floor(deficit / 2) have base - 1 layers: taking one layer from
 * first, last, second, second-to-last, ... is exactly that, and the two
 * runs never meet because deficit < V. Llama 3 (Dubey et al. 2024,
 * sec. 3.3.2) removes one layer from the first and the last stage;
 * Megatron-LM exposes the same as --decoder-first/last-pipeline-num-layers. */
/* Layers of pipeline stage s under an explicit first/last split
 * (validated: every stage's count a multiple of v). */
static int64_t stage_layers(const fs_job *j, int64_t s) {
  const int64_t p = j->par.pp, F = j->par.first_stage_layers, Z = j->par.last_stage_layers;
  if (s == 0 && F > 0) return F;
  if (s == p - 1 && Z > 0) return Z;
  int64_t middle = p - (F > 0) - (Z > 0);
  return (j->model.layers - F - Z) / middle;
}

/* Explicit first/last stage layers: stage s's layers in v equal chunks,
 * virtual stage c p + s its c-th; layers in virtual-stage order. */
static int64_t explicit_chunk_layers(const fs_job *j, int64_t chunk, int64_t *first_layer) {
  const int64_t p = j->par.pp, v = j->par.virtual_stages;
  int64_t c = chunk / p, s = chunk % p, per_round = j->model.layers / v, before = 0;
  for (int64_t q = 0; q < s; q++) before += stage_layers(j, q) / v;
  if (first_layer) *first_layer = c * per_round + before;
  return stage_layers(j, s) / v;
}

int64_t fs_work_chunk_layers(const fs_job *j, int64_t chunk, int64_t *first_layer) {
  const int64_t V = j->par.pp * j->par.virtual_stages, L = j->model.layers;
  if (chunk < 0 || chunk >= V) {
    if (first_layer) *first_layer = chunk < 0 ? 0 : L;
    return 0;
  }
  if (j->par.first_stage_layers > 0 || j->par.last_stage_layers > 0)
    return explicit_chunk_layers(j, chunk, first_layer);
  int64_t base = (L + V - 1) / V, deficit = V * base - L;
  int64_t nf = (deficit + 1) / 2, nb = deficit / 2;
  if (first_layer) {
    int64_t short_before = (chunk < nf ? chunk : nf) + (chunk > V - nb ? chunk - (V - nb) : 0);
    *first_layer = chunk * base - short_before;
  }
  return base - (chunk < nf || chunk >= V - nb ? 1 : 0);
}

int64_t fs_work_hpz_group(const fs_job *j) {
  int64_t G = j->hw.gpus_per_node > 0 ? j->hw.gpus_per_node : 1, n = 0;
  fs_rank_coords c0 = {0, 0, 0, 0, 0, 0};
  int64_t server = fs_job_gpu_of(j, &c0) / G;
  for (int32_t dp = 0; dp < j->par.dp; dp++)
    for (int32_t cp = 0; cp < j->par.cp; cp++) {
      fs_rank_coords c = {0, dp, 0, 0, 0, cp};
      n += fs_job_gpu_of(j, &c) / G == server;
    }
  return n > 0 ? n : 1;
}

double fs_work_fp8_gather_share(const fs_job *j) {
  return j->train.fp8_comm ? 1 / (double)j->model.dtype_bytes : 1;
}

double fs_work_fp8_share(const fs_job *j, fs_par_kind kind) {
  if (!j->train.fp8_comm) return 1;
  if (kind == FS_PAR_EP || (kind == FS_PAR_TP && j->par.sequence_parallel))
    return (1 + (double)j->model.dtype_bytes) / (2 * (double)j->model.dtype_bytes);
  return 1;
}

int64_t fs_work_dp_group(const fs_job *j, int expert) {
  return (expert ? j->par.dp / j->par.ep : j->par.dp) * j->par.cp;
}

int fs_work_zero_stage(const fs_job *j) {
  return j->par.zero == 3 && j->par.pp > 1 ? 1 : j->par.zero;
}

void fs_work_stage_params(const fs_job *j, int32_t stage, fs_work_shard *out) {
  const fs_model *m = &j->model;
  const int64_t t = j->par.tp;
  /* Column-parallel weights and biases split over t; row-parallel biases
   * and norms are replicated on every tensor-parallel rank. */
  int64_t attn = attn_held(m, t) / t + attn_row_bias(m);
  int64_t mlp = (mlp_weights(m) + mlp_col_bias(m)) / t + mlp_row_bias(m);
  int64_t expert = (expert_weights(m) + expert_col_bias(m)) / t + mlp_row_bias(m);
  int64_t common = attn + fs_work_norm_params(m);
  out->layers = out->moe_layers = out->dense = out->expert = 0;
  for (int64_t v = 0; v < j->par.virtual_stages; v++) {
    int64_t first, lc = fs_work_chunk_layers(j, v * j->par.pp + stage, &first);
    int64_t moe = fs_work_moe_layers(m, first, lc);
    out->layers += lc;
    out->moe_layers += moe;
    /* shared experts are dense: every rank holds them, split over t */
    out->dense += lc * common + (lc - moe) * mlp + moe * (router_params(m) +
                                                          m->shared_experts * expert);
    /* Each rank of the expert-parallel group holds experts / ep experts,
     * each split over t like a dense MLP (expert TP = TP, Megatron-Core). */
    out->expert += moe * (m->experts / j->par.ep) * expert;
  }
  int64_t emb = vocab_rows(j) * m->hidden;
  if (stage == 0) out->dense += emb + (m->learned_pos ? m->seq_len * m->hidden : 0);
  if (stage == j->par.pp - 1) {
    out->dense += norm_params(m);
    /* The output layer: its own weights if untied; tied, the last stage
     * keeps a copy of the word embedding when it is not the first. */
    if (!m->tied_embeddings || j->par.pp > 1) out->dense += emb;
  }
}

/* ---- FLOPs --------------------------------------------------------------- */

/* Matmul weights a token multiplies in a layer: attention, and one MLP or
 * top_k experts plus the router. */
static double matmul_weights(const fs_model *m, int moe) {
  double w = (double)(m->kv_lora > 0 ? mla_matmul(m) : attn_weights(m));
  if (moe)
    return w + (double)(m->top_k + m->shared_experts) * (double)expert_weights(m) +
           (double)router_params(m);
  return w + (double)mlp_weights(m);
}

/* A matmul of a (tokens x in) by (in x out) costs 2 tokens in out FLOPs, so
 * a token's matmuls cost 2 x weights. Attention scores Q K^T and the
 * weighted sum of V cost 2 s^2 h each per sequence (a heads of h/a; GQA
 * shares K and V between heads but every query head still attends over s
 * keys). The causal mask is not exploited (as Narayanan et al. count). */
static double attn_core_flops(const fs_model *m, int64_t b);

static double fwd_flops(const fs_model *m, int moe, int64_t b) {
  double bs = (double)b * (double)m->seq_len;
  if (m->kv_lora > 0) return 2 * bs * matmul_weights(m, moe) + attn_core_flops(m, b);
  return 2 * bs * matmul_weights(m, moe) + 4 * bs * (double)m->seq_len * (double)m->hidden;
}

double fs_work_layer_fwd_flops(const fs_model *m, int64_t layer, int64_t b) {
  return fwd_flops(m, fs_work_layer_is_moe(m, layer), b);
}

double fs_work_logits_fwd_flops(const fs_model *m, int64_t b) {
  return 2 * (double)b * (double)m->seq_len * (double)m->hidden * (double)m->vocab;
}

/* Q K^T and the weighted sum of V: 2 s^2 h each per sequence (MLA: heads
 * of qk_nope + qk_rope for the scores, v_head for the values). */
static double attn_core_flops(const fs_model *m, int64_t b) {
  double ss = (double)b * (double)m->seq_len * (double)m->seq_len;
  if (m->kv_lora > 0)
    return 2 * ss * (double)m->heads * (double)(m->qk_nope + m->qk_rope + m->v_head);
  return 4 * ss * (double)m->hidden;
}

/* FLOPs one layer re-runs in the backward for b sequences without full
 * recomputation: selective recomputation's attention core (Korthikanti et
 * al. 2022, sec. 5: the 4 b s^2 h of Q K^T and the weighted sum), and
 * recompute_mla_up's up-projections (DeepSeek-V3 sec. 3.2.3: Q, K and V
 * from the latents, the output projection left out of mla_split). */
static double recompute_layer_flops(const fs_job *j, int64_t b) {
  const fs_model *m = &j->model;
  double f = j->par.selective_recompute ? attn_core_flops(m, b) : 0;
  if (j->par.recompute_mla_up)
    f += 2 * (double)b * (double)m->seq_len *
         (double)(mla_split(m) - m->heads * m->v_head * m->hidden);
  return f;
}

/* Forward FLOPs of layers [first, first + n) for b sequences. */
static double layers_fwd_flops(const fs_model *m, int64_t first, int64_t n, int64_t b) {
  int64_t moe = fs_work_moe_layers(m, first, n);
  return (double)(n - moe) * fwd_flops(m, 0, b) + (double)moe * fwd_flops(m, 1, b);
}

/* Context parallelism: each of the c ranks runs the matmuls of s / c tokens
 * and, with the load-balanced causal split (chunks i and 2c - 1 - i of 2c),
 * 1 / c of the attention score work too: a rank's early chunk attends to
 * few keys, its late chunk to many, and the pairs sum to the same (Megatron
 * Core / Transformer Engine context parallelism). Counted as Narayanan et
 * al. do (the mask not exploited), the rank's share is still 1 / c. */
double fs_work_chunk_flops(const fs_job *j, int64_t chunk, fs_work_pass pass) {
  const fs_model *m = &j->model;
  int64_t first, lc = fs_work_chunk_layers(j, chunk, &first), b = j->train.micro_batch;
  double layers = layers_fwd_flops(m, first, lc, b) / (double)j->par.tp / (double)j->par.cp;
  double logits = 0;
  if (chunk == j->par.pp * j->par.virtual_stages - 1)
    logits = fs_work_logits_fwd_flops(m, b) / (double)j->par.tp / (double)j->par.cp;
  switch (pass) {
  case FS_PASS_FWD: return layers + logits;
  case FS_PASS_RECOMPUTE:
    if (j->par.recompute) return layers;
    return (double)lc * recompute_layer_flops(j, b) / (double)j->par.tp / (double)j->par.cp;
  case FS_PASS_BWD: return 2 * (layers + logits);
  }
  return 0;
}

double fs_work_chunk_wgrad_flops(const fs_job *j, int64_t chunk) {
  int64_t first, lc = fs_work_chunk_layers(j, chunk, &first);
  double core = (double)lc * attn_core_flops(&j->model, j->train.micro_batch) /
                (double)j->par.tp / (double)j->par.cp;
  return fs_work_chunk_flops(j, chunk, FS_PASS_FWD) - core;
}

/* Backward = 2 x forward: each matmul's input gradient and weight gradient
 * cost one forward each (Narayanan et al. SC'21, sec. 5.1). */
double fs_work_model_flops(const fs_job *j) {
  const fs_model *m = &j->model;
  return 3 * (double)j->train.global_batch *
         (layers_fwd_flops(m, 0, m->layers, 1) + fs_work_logits_fwd_flops(m, 1));
}

double fs_work_hw_flops(const fs_job *j) {
  double f = fs_work_model_flops(j);
  if (j->par.recompute)
    f += (double)j->train.global_batch * layers_fwd_flops(&j->model, 0, j->model.layers, 1);
  else
    f += (double)j->train.global_batch * (double)j->model.layers * recompute_layer_flops(j, 1);
  return f;
}

double fs_work_flops_6nd(const fs_job *j) {
  return 6 * (double)j->train.global_batch * (double)j->model.seq_len *
         (double)fs_work_active_params(&j->model);
}

double fs_work_compute_s(const fs_job *j, double flops) {
  return flops / (j->hw.gpu_tflops * 1e12 * j->hw.mfu_matmul);
}

double fs_work_mfu(const fs_job *j, double iter_s) {
  return fs_work_model_flops(j) /
         (iter_s * (double)fs_job_gpus(j) * j->hw.gpu_tflops * 1e12);
}

/* ---- memory -------------------------------------------------------------- */

int64_t fs_work_microbatches(const fs_job *j) {
  return j->train.global_batch / (j->train.micro_batch * j->par.dp);
}

/* Korthikanti et al. 2022, sec. 4, for 16-bit activations and 1-byte
 * dropout masks. Per layer, s b h times:
 *   replicated by TP unless SP (R = 10): two norm inputs 2 + 2, the QKV
 *     input 2, the MLP input 2, two dropout masks 1 + 1;
 *   split by TP (S): Q 2 and K 2 k/a (for Q K^T), V 2 k/a, the output
 *     projection input 2, and per head a s/h (softmax output 2, dropout
 *     mask 1, dropout output 2) = 5 a s / h; the MLP's inner activations
 *     4 f / h (fc1 output and GeLU output) or 6 f / h gated (gate, up and
 *     their product). An MoE layer runs top_k experts per token: top_k
 *     times the inner part plus the top_k dispatched copies of its input.
 * With f = 4h and k = a this is 10 + 24 + 5 a s / h = 34 + 5 a s / h. */
double fs_work_act_layer_bytes(const fs_job *j, int moe, int recompute) {
  const fs_model *m = &j->model;
  double s = (double)m->seq_len, b = (double)j->train.micro_batch, h = (double)m->hidden;
  double t = (double)j->par.tp, sp = j->par.sequence_parallel ? t : 1, c = (double)j->par.cp;
  double sbh = s * b * h;
  /* With context parallelism a rank keeps s / c tokens: every term, the
   * scores' 5 a s^2 b too (its queries' s / c rows against all s keys). */
  if (recompute) return 2 * sbh / sp / c; /* only the layer's input is kept */
  /* fp8_activations (DeepSeek-V3 sec. 3.3.3): the linear layers' inputs
   * and the MLP's inner activations kept in FP8, 1 byte instead of 2 */
  double q = j->train.fp8_activations ? 0.5 : 1;
  double inner = q * (m->gated ? 6 : 4) * s * b * (double)m->ffn;
  double inner_e = q * (m->gated ? 6 : 4) * s * b * (double)fs_work_expert_ffn(m);
  /* The scores' softmax output, its dropout mask and output (5 a s^2 b)
   * are not kept under selective recomputation (Korthikanti et al. sec. 5)
   * nor by FlashAttention, which never writes them to HBM. */
  int scores = !j->par.selective_recompute && m->attention == FS_ATTN_UNFUSED;
  /* K and V: kv_heads of the heads, at least one per TP rank (replicated) */
  double kv_held = (double)(m->kv_heads > j->par.tp ? m->kv_heads : j->par.tp);
  double attn_split = 4 * sbh + 4 * sbh * kv_held / (double)m->heads;
  if (m->kv_lora > 0) { /* MLA: Q, K (nope + rope), V and the output input
                           (v) per head; the latents, replicated, below */
    double a = (double)m->heads, qk = (double)(m->qk_nope + m->qk_rope), v = (double)m->v_head;
    /* recompute_mla_up: Q, K and V recomputed from the latents; only the
     * output projection's input (the attention output) is kept */
    attn_split = 2 * s * b * a * (j->par.recompute_mla_up ? v : 2 * qk + 2 * v);
  }
  double split = attn_split +
                 (scores ? 5 * (double)m->heads * s * s * b : 0);
  if (moe) /* routed experts on dispatched copies, shared ones in place */
    split += (double)m->top_k * (inner_e + q * 2 * sbh) + (double)m->shared_experts * inner_e;
  else
    split += inner;
  /* MLA's latents (the up projections' inputs), replicated */
  double latents =
      m->kv_lora > 0 ? q * 2 * s * b * (double)(m->q_lora + m->kv_lora + m->qk_rope) : 0;
  /* Replicated: the norms' inputs (2 + 2), their outputs that the QKV and
   * MLP linears read (2 + 2: q each; recompute_norms recomputes them) and
   * two dropout masks (1 + 1); a parallel block keeps one norm input, one
   * input to both branches and the masks (2 + 2 + 1 + 1). */
  double norm_out = j->par.recompute_norms ? 0 : q * 2 * (m->parallel_block ? 1 : 2);
  double kept = (m->parallel_block ? 2 : 4) + norm_out + 2;
  return (kept * sbh / sp + latents + split / t) / c;
}

double fs_work_inflight(const fs_job *j, int32_t stage) {
  double p = (double)j->par.pp, v = (double)j->par.virtual_stages;
  double m = (double)fs_work_microbatches(j), i = stage;
  switch (j->par.schedule) {
  case FS_PIPE_GPIPE: return m;
  case FS_PIPE_INTERLEAVED: {
    /* Megatron's interleaved warm-up runs 2 (p - i - 1) + (v - 1) p chunk
     * forwards, and the steady state one more before the first backward. */
    double chunks = 2 * (p - i - 1) + (v - 1) * p + 1;
    return fmin(chunks, m * v) / v;
  }
  case FS_PIPE_ZBH1:
    /* every stage holds p micro-batches' layer inputs until their W
     * (Qi et al.'s p M_B: stage 0's peak under 1F1B, on every stage) */
    return fmin(p, m);
  case FS_PIPE_1F1B: break;
  }
  return fmin(p - i, m);
}

void fs_work_memory(const fs_job *j, int32_t stage, fs_work_mem *out) {
  const fs_model *m = &j->model;
  fs_work_shard *sh = &out->shard;
  out->stage = stage;
  fs_work_stage_params(j, stage, sh);
  /* Mixed-precision Adam (Rajbhandari et al. SC'20, sec. 3.1): D-byte
   * weights and gradients, and fp32 master weights, momentum and variance
   * (12 bytes) -- no master copy when training in fp32 (D = 4: 8 bytes).
   * ZeRO stage 1 shards the optimizer state over the N data-parallel ranks,
   * stage 2 also the gradients, stage 3 also the weights. */
  double nd = (double)fs_work_dp_group(j, 0), ne = (double)fs_work_dp_group(j, 1);
  double dense = (double)sh->dense, expert = (double)sh->expert;
  /* (a 4-byte master copy below 4-byte weights, and the two moments) */
  double D = (double)m->dtype_bytes,
         O = (m->dtype_bytes < 4 ? 4 : 0) + 2 * (double)j->train.moment_bytes;
  int z = fs_work_zero_stage(j);
  out->weight_bytes = D * (z >= 3 ? dense / nd + expert / ne : dense + expert);
  /* hpZ's secondary copy: the weights again, over the server's ranks */
  if (z >= 3 && j->par.zpp_hpz) out->weight_bytes += D * (dense + expert) / (double)fs_work_hpz_group(j);
  out->grad_bytes = D * (z >= 2 ? dense / nd + expert / ne : dense + expert);
  out->optim_bytes = O * (z >= 1 ? dense / nd + expert / ne : dense + expert);

  int rec = j->par.recompute;
  double per_mb = (double)(sh->layers - sh->moe_layers) * fs_work_act_layer_bytes(j, 0, rec) +
                  (double)sh->moe_layers * fs_work_act_layer_bytes(j, 1, rec);
  double act = fs_work_inflight(j, stage) * per_mb;
  if (rec) /* the layer being recomputed holds its full activations */
    act += fs_work_act_layer_bytes(j, sh->moe_layers > 0, 0);
  /* Korthikanti sec. 4.3: the first stage's embedding dropout mask (s b h
   * bytes) for the p micro-batches in flight; the last stage's final norm
   * input and output-projection input (2 s b h each) and fp32 logits
   * (4 s b V / t) for the one micro-batch in flight (all m under GPipe);
   * a cp rank holds s / c of those tokens. */
  double s = (double)m->seq_len / (double)j->par.cp, b = (double)j->train.micro_batch;
  double h = (double)m->hidden;
  double t = (double)j->par.tp, sp = j->par.sequence_parallel ? t : 1;
  double mb = (double)fs_work_microbatches(j);
  int gpipe = j->par.schedule == FS_PIPE_GPIPE;
  if (stage == 0) act += (gpipe ? mb : fmin((double)j->par.pp, mb)) * s * b * h / sp;
  if (stage == j->par.pp - 1)
    act += (gpipe ? mb : 1) * (4 * s * b * h / sp + 4 * s * b * (double)m->vocab / t);
  out->act_bytes = act;
  out->total_bytes = out->weight_bytes + out->grad_bytes + out->optim_bytes + act;
}

void fs_work_memory_peak(const fs_job *j, fs_work_mem *out) {
  fs_work_memory(j, 0, out);
  for (int32_t i = 1; i < j->par.pp; i++) {
    fs_work_mem cur;
    fs_work_memory(j, i, &cur);
    if (cur.total_bytes > out->total_bytes) *out = cur;
  }
}

/* ---- communication ------------------------------------------------------- */

/* A cp rank's TP group works on its s / c tokens only. */
double fs_work_tp_bytes(const fs_job *j) {
  return (double)j->train.micro_batch * ((double)j->model.seq_len / (double)j->par.cp) *
         (double)j->model.hidden * (double)j->model.dtype_bytes;
}

/* Narayanan et al. sec. 4.1 (scatter/gather): each of the t ranks of a
 * stage sends its 1/t of the activation, and the receivers all-gather it
 * over NVLink; with SP the activation is already split that way. */
double fs_work_pp_bytes(const fs_job *j) { return fs_work_tp_bytes(j) / (double)j->par.tp; }

double fs_work_ep_bytes(const fs_job *j) {
  return fs_work_tp_bytes(j) * (double)j->model.top_k / (double)j->par.tp;
}

/* Megatron (Shoeybi et al. 2019): the attention block and the MLP each end
 * in a row-parallel matmul whose output is all-reduced in the forward pass
 * (operator g), and each starts with a column-parallel matmul whose input
 * gradient is all-reduced in the backward pass (operator f). With SP each
 * all-reduce becomes a reduce-scatter and an all-gather of the same size
 * (Korthikanti et al. sec. 4.2.2). */
/* Megatron's layer: an all-reduce after attention and one after the MLP
 * (SP: an all-gather before each, a reduce-scatter after); a parallel
 * block sums both branches before one (GPT-J, PaLM). */
int fs_work_tp_colls_per_layer(const fs_job *j, fs_work_pass pass) {
  int per = (j->par.sequence_parallel ? 4 : 2) / (j->model.parallel_block ? 2 : 1);
  if (pass == FS_PASS_RECOMPUTE && !j->par.recompute) return 0;
  return per;
}

/* K and V of the rank's s / c tokens: k heads of h / a each, k / t of them
 * on a TP rank. Transformer Engine's KV P2P backward (AttnFuncWithCPAndKVP2P)
 * sends K, V at its first step, K, V and the dK, dV accumulated so far at
 * the middle ones and dK, dV alone at the last: c messages totalling
 * 2 (c - 1) K,V blocks. Ring attention's backward (Liu et al. 2023,
 * Algorithm 1) likewise circulates K, V and their gradients. We count
 * c - 1 steps of twice the forward's bytes: the same total. */
double fs_work_cp_step_bytes(const fs_job *j, fs_work_pass pass) {
  const fs_model *m = &j->model;
  int64_t kv_heads = m->kv_heads > j->par.tp ? m->kv_heads : j->par.tp; /* replicas held */
  double kv = 2 * (double)j->train.micro_batch * ((double)m->seq_len / (double)j->par.cp) *
              (double)(m->hidden / m->heads * kv_heads) * (double)m->dtype_bytes /
              (double)j->par.tp;
  return pass == FS_PASS_BWD ? 2 * kv : kv;
}

/* Megatron-Core / Transformer Engine's forward runs c attention steps, the
 * first on the local K, V, each of the c - 1 others after receiving the
 * previous rank's block; the recomputed forward repeats the ring. */
int fs_work_cp_steps_per_layer(const fs_job *j, fs_work_pass pass) {
  if (j->par.cp <= 1 || (pass == FS_PASS_RECOMPUTE && !j->par.recompute)) return 0;
  return (int)(j->par.cp - 1);
}

static void traffic_add(fs_work_traffic *tr, double colls, double size, double wire_factor) {
  tr->colls += colls;
  tr->size_bytes += colls * size;
  tr->wire_bytes += colls * size * wire_factor;
}

static int64_t ceil_div_d(double a, double b) { return (int64_t)ceil(a / b); }

/* Gradient reduction of `grad` bytes over n ranks, per the ZeRO stage:
 *   0: all-reduce once per iteration, in buckets;
 *   1: reduce-scatter the gradients and all-gather the updated weights once
 *      (Megatron's distributed optimizer);
 *   2: reduce-scatter every micro-batch (gradients are kept sharded, so they
 *      cannot accumulate locally) and all-gather the weights once;
 *   3: per micro-batch and per unit (a layer, or the embeddings), all-gather
 *      the weights before the forward, the recomputed forward and the
 *      backward, and reduce-scatter the gradients after it.
 * With m = 1 the volumes are Rajbhandari et al.'s 2 Psi (stages 0-2) and
 * 3 Psi (stage 3). */
static void dp_traffic(const fs_job *j, double grad, int64_t n, int64_t units,
                       fs_work_traffic *tr) {
  tr->group = n;
  if (n <= 1 || grad <= 0) return;
  double f = (double)(n - 1) / (double)n, m = (double)fs_work_microbatches(j);
  double buckets = (double)ceil_div_d(grad, j->par.grad_bucket_bytes);
  double bucket = grad / buckets;
  switch (fs_work_zero_stage(j)) {
  case 0: traffic_add(tr, buckets, bucket, 2 * f); break;
  case 1: traffic_add(tr, 2 * buckets, bucket, f); break;
  case 2:
    traffic_add(tr, m * buckets, bucket, f);
    traffic_add(tr, buckets, bucket, f);
    break;
  default: {
    /* per micro-batch: the forward's gather, the backward's (and the
     * recomputation's), the gradients' reduce-scatter */
    if (!j->par.zpp_qwz && !j->par.zpp_hpz && !j->par.zpp_qgz) {
      double per_mb = 3 + (j->par.recompute ? 1 : 0);
      traffic_add(tr, m * per_mb * (double)units, grad / (double)units, f);
      break;
    }
    /* ZeRO++ gathers in int8 (qwZ), the backward's inside the server (hpZ:
     * left out, it never leaves the server), reduce-scatters in int4 (qgZ) */
    double D = (double)j->model.dtype_bytes, u = (double)units;
    double q = j->par.zpp_qwz ? 1 / D : 1, bwd = 1 + (j->par.recompute ? 1 : 0);
    double rs = j->par.zpp_qgz ? 0.5 / D : 1;
    traffic_add(tr, m * u, q * grad / u, f);
    if (!j->par.zpp_hpz) traffic_add(tr, m * bwd * u, q * grad / u, f);
    traffic_add(tr, m * u, rs * grad / u, f);
  }
  }
}

void fs_work_comm_stage(const fs_job *j, int32_t stage, fs_work_comm *out) {
  const fs_model *m = &j->model;
  const int64_t t = j->par.tp, p = j->par.pp, v = j->par.virtual_stages;
  const double mb = (double)fs_work_microbatches(j);
  fs_work_shard sh;
  fs_work_stage_params(j, stage, &sh);
  *out = (fs_work_comm){0};

  fs_work_traffic *tp = &out->kind[FS_PAR_TP];
  tp->group = t;
  if (t > 1) {
    double per_layer = fs_work_tp_colls_per_layer(j, FS_PASS_FWD) +
                       fs_work_tp_colls_per_layer(j, FS_PASS_RECOMPUTE) +
                       fs_work_tp_colls_per_layer(j, FS_PASS_BWD);
    double colls = (double)sh.layers * per_layer;
    /* The vocabulary-parallel embedding all-reduces (SP: reduce-scatters)
     * its output; the output layer all-reduces (SP: reduce-scatters) its
     * input gradient, and with SP all-gathers its input first. */
    if (stage == 0) colls += 1;
    if (stage == p - 1) colls += j->par.sequence_parallel ? 2 : 1;
    double f = (double)(t - 1) / (double)t;
    traffic_add(tp, mb * colls, fs_work_tp_bytes(j) * fs_work_fp8_share(j, FS_PAR_TP),
                j->par.sequence_parallel ? f : 2 * f);
  }

  fs_work_traffic *pp = &out->kind[FS_PAR_PP];
  pp->group = p > 1 ? 2 : 1;
  if (p > 1) {
    /* Every chunk but the last sends its output forward; every chunk but
     * the first sends its input gradient back; once per micro-batch. */
    double sends = 0;
    for (int64_t k = 0; k < v; k++) {
      int64_t c = k * p + stage;
      sends += (c < p * v - 1) + (c > 0);
    }
    traffic_add(pp, mb * sends, fs_work_pp_bytes(j), 1);
  }

  fs_work_traffic *ep = &out->kind[FS_PAR_EP];
  ep->group = j->par.ep;
  if (j->par.ep > 1 && sh.moe_layers > 0) {
    /* Dispatch and combine in the forward (and recomputed forward), their
     * transposes in the backward (Lepikhin et al. 2021, GShard). */
    double per_layer = 4 + (j->par.recompute ? 2 : 0);
    traffic_add(ep, mb * (double)sh.moe_layers * per_layer,
                fs_work_ep_bytes(j) * fs_work_fp8_share(j, FS_PAR_EP),
                (double)(j->par.ep - 1) / (double)j->par.ep);
  }

  double D = (double)m->dtype_bytes;
  fs_work_traffic dense = {0};
  int64_t units = sh.layers + (stage == 0 || stage == p - 1 ? 1 : 0);
  /* Megatron-Core reduces gradients over the data-parallel group with
   * context parallelism (dp cp ranks hold the same weights), and the
   * distributed optimizer shards over it. */
  dp_traffic(j, D * (double)sh.dense, fs_work_dp_group(j, 0), units, &dense);
  dp_traffic(j, D * (double)sh.expert, fs_work_dp_group(j, 1),
             sh.moe_layers > 0 ? sh.moe_layers : 1, &out->dp_expert);
  fs_work_traffic *dp = &out->kind[FS_PAR_DP];
  *dp = dense;
  dp->group = fs_work_dp_group(j, 0);
  dp->colls += out->dp_expert.colls;
  dp->size_bytes += out->dp_expert.size_bytes;
  dp->wire_bytes += out->dp_expert.wire_bytes;

  /* Ring attention: per layer and micro-batch, c - 1 sends of K, V forward
   * (and in the recomputed forward), c - 1 of K, V, dK, dV backward. */
  fs_work_traffic *cp = &out->kind[FS_PAR_CP];
  cp->group = j->par.cp;
  if (j->par.cp > 1) {
    double L = (double)sh.layers;
    traffic_add(cp, mb * L * fs_work_cp_steps_per_layer(j, FS_PASS_FWD),
                fs_work_cp_step_bytes(j, FS_PASS_FWD), 1);
    traffic_add(cp, mb * L * fs_work_cp_steps_per_layer(j, FS_PASS_RECOMPUTE),
                fs_work_cp_step_bytes(j, FS_PASS_RECOMPUTE), 1);
    traffic_add(cp, mb * L * fs_work_cp_steps_per_layer(j, FS_PASS_BWD),
                fs_work_cp_step_bytes(j, FS_PASS_BWD), 1);
  }

  /* Tied embeddings with pp > 1: the first and last stages all-reduce the
   * word embedding's gradient once per iteration (Megatron). */
  out->emb.group = 2;
  if (m->tied_embeddings && p > 1 && (stage == 0 || stage == p - 1))
    traffic_add(&out->emb, 1, D * (double)(vocab_rows(j) * m->hidden), 1);
}
