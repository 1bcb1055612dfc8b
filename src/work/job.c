/* Job files (work.h; format and rules in docs/model-work.md): strict parsing
 * of the sections and the cross-field validation shared with jobs built in
 * code. The parser checks types and ranges key by key with the JSON getters,
 * fills defaults (some from the topology: NIC speed, and the server size and
 * NVLink speed when the topology models GPU servers), then runs
 * fs_job_validate, whose messages name the JSON path of the field to change
 * and its value, so a job built in code and a file get the same words.
 * Nothing is half-built on failure: the job is freed and *out untouched. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "../base/json.h"
#include "fabricsim/compute.h"
#include "fabricsim/work.h"
#include "internal.h"

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)
/* Models beyond 10^15 parameters are refused: it keeps every int64 count
 * (and its products with small factors) far from overflow. */
#define MAX_PARAMS 1e15

/* ---- names ---------------------------------------------------------------- */

static const char *const place_names[] = {"rail_aligned", "packed"};
static const char *const kind_names[FS_PAR_N] = {"tp", "dp", "pp", "ep", "cp"};

static int lookup(const char *const *names, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0) return i;
  return -1;
}

const char *fs_placement_name(fs_placement p) {
  return (unsigned)p < 2 ? place_names[p] : "?";
}

int fs_placement_parse(const char *name, fs_placement *out) {
  int i = lookup(place_names, 2, name);
  if (i < 0) return FS_EINVAL;
  *out = (fs_placement)i;
  return 0;
}

const char *fs_par_kind_name(fs_par_kind k) {
  return (unsigned)k < FS_PAR_N ? kind_names[k] : "?";
}

/* ---- init / free ------------------------------------------------------------ */

void fs_job_init(fs_job *job, const char *file) {
  memset(job, 0, sizeof(*job));
  snprintf(job->file, sizeof(job->file), "%s", file ? file : "job");
  fs_transport_defaults(FS_TRANSPORT_FLUID, &job->transport);
  fs_ocsctl_opts_init(&job->ocs);
  job->model.experts = 1;
  job->model.top_k = 1;
  job->model.moe_every = 1;
  job->model.dtype_bytes = 2;
  job->model.bias = 1;
  job->model.learned_pos = 1;
  job->model.tied_embeddings = 1;
  job->par.tp = job->par.pp = job->par.dp = job->par.ep = job->par.cp = 1;
  job->par.schedule = FS_PIPE_1F1B;
  job->par.virtual_stages = 1;
  job->par.overlap_dp = 1;
  job->par.grad_accum_fusion = 1;
  job->par.grad_bucket_bytes = 25 * MIB; /* PyTorch DDP's bucket_cap_mb */
  job->train.moment_bytes = 4;
  for (int k = 0; k < FS_PAR_N; k++) job->par.algo[k] = FS_ALGO_AUTO;
  job->model.precision = FS_PREC_BF16;
  job->model.attention = FS_ATTN_UNFUSED;
  job->hw.mfu_matmul = 0.5;
  job->hw.compute = FS_COMPUTE_MFU;
  job->hw.matmul_eff = 0.8;
  job->hw.hbm_eff = 0.9;
  job->hw.tile_m = 256, job->hw.tile_n = 128;
  job->hw.nics_per_gpu = 1;
  job->hw.nvlink_eff = 1;
  job->placement = FS_PLACE_RAIL_ALIGNED;
  job->mode = FS_ROUTE_ECMP;
  job->seed = 1;
}

void fs_job_free(fs_job *job) {
  if (!job) return;
  fs_topo_free(job->topo);
  free(job->failures);
  free(job);
}

int64_t fs_job_gpus(const fs_job *job) {
  return job->par.tp * job->par.cp * job->par.pp * job->par.dp;
}

/* ---- validation ------------------------------------------------------------- */

/* "FILE: PATH: WHAT, got VALUE" with the value already formatted. */
static int failv(const fs_job *j, fs_err *err, const char *path, const char *got,
                 const char *fmt, va_list ap) {
  char what[320];
  vsnprintf(what, sizeof(what), fmt, ap);
  return fs_err_set(err, FS_EINVAL, "%s: %s: %s, got %s", j->file, path, what, got);
}

static int fail_i(const fs_job *j, fs_err *err, const char *path, int64_t got,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int fail_i(const fs_job *j, fs_err *err, const char *path, int64_t got,
                  const char *fmt, ...) {
  char v[32];
  snprintf(v, sizeof(v), "%lld", (long long)got);
  va_list ap;
  va_start(ap, fmt);
  int rc = failv(j, err, path, v, fmt, ap);
  va_end(ap);
  return rc;
}

static int fail_d(const fs_job *j, fs_err *err, const char *path, double got,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int fail_d(const fs_job *j, fs_err *err, const char *path, double got,
                  const char *fmt, ...) {
  char v[32];
  fs__fmt_num(v, got);
  va_list ap;
  va_start(ap, fmt);
  int rc = failv(j, err, path, v, fmt, ap);
  va_end(ap);
  return rc;
}

static int fail_s(const fs_job *j, fs_err *err, const char *path, const char *got,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int fail_s(const fs_job *j, fs_err *err, const char *path, const char *got,
                  const char *fmt, ...) {
  char v[80];
  snprintf(v, sizeof(v), "\"%s\"", got);
  va_list ap;
  va_start(ap, fmt);
  int rc = failv(j, err, path, v, fmt, ap);
  va_end(ap);
  return rc;
}

/* The per-operation model's figures (compute.h), checked only when it
 * times the job. */
static int check_roofline(const fs_job *j, fs_err *err) {
  const fs_hardware *hw = &j->hw;
  if (hw->compute != FS_COMPUTE_ROOFLINE) return 0;
  const struct {
    const char *path;
    double v, hi;
  } d[] = {
      {"$.hardware.matmul_efficiency", hw->matmul_eff, 1},
      {"$.hardware.hbm_efficiency", hw->hbm_eff, 1},
      {"$.hardware.hbm_gb_per_s", hw->hbm_gb_per_s, 1e9},
  };
  for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
    if (!(d[i].v > 0 && d[i].v <= d[i].hi))
      return fail_d(j, err, d[i].path, d[i].v, "must be in (0, %g]", d[i].hi);
  const struct {
    const char *path;
    int64_t v;
  } n[] = {{"$.hardware.sms", hw->sms}, {"$.hardware.tile_m", hw->tile_m},
           {"$.hardware.tile_n", hw->tile_n}};
  for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++)
    if (n[i].v < 1 || n[i].v > 1 << 20)
      return fail_i(j, err, n[i].path, n[i].v, "must be an integer in [1, %d]", 1 << 20);
  return 0;
}

/* Integer fields, their JSON paths and ranges. The upper bounds keep every
 * product in the maths well inside int64 and double. */
static int check_ranges(const fs_job *j, fs_err *err) {
  const fs_model *m = &j->model;
  if (m->experts == 1 && m->top_k != 1)
    return fail_i(j, err, "$.model.top_k", m->top_k,
                  "must be 1 for a dense model (experts = 1)");
  if (m->experts == 1 && m->moe_every != 1)
    return fail_i(j, err, "$.model.moe_every", m->moe_every,
                  "must be 1 for a dense model (experts = 1)");
  if (m->experts == 1 && (m->expert_ffn || m->shared_experts || m->first_dense))
    return fail_i(j, err,
                  m->expert_ffn       ? "$.model.expert_ffn"
                  : m->shared_experts ? "$.model.shared_experts"
                                      : "$.model.first_dense",
                  m->expert_ffn ? m->expert_ffn : m->shared_experts ? m->shared_experts
                                                                     : m->first_dense,
                  "applies to an MoE model (experts > 1)");
  const struct {
    const char *path;
    int64_t v, lo, hi;
  } f[] = {
      {"$.model.layers", m->layers, 1, 1 << 20},
      {"$.model.hidden", m->hidden, 1, 1 << 20},
      {"$.model.ffn", m->ffn, 1, 1 << 24},
      {"$.model.heads", m->heads, 1, 1 << 20},
      {"$.model.kv_heads", m->kv_heads, 1, 1 << 20},
      {"$.model.seq_len", m->seq_len, 1, 1 << 24},
      {"$.model.vocab", m->vocab, 1, 1 << 26},
      {"$.model.experts", m->experts, 1, 1 << 16},
      {"$.model.top_k", m->top_k, 1, m->experts},
      {"$.model.moe_every", m->moe_every, 1, m->layers},
      {"$.training.global_batch", j->train.global_batch, 1, 1LL << 40},
      {"$.training.micro_batch", j->train.micro_batch, 1, 1LL << 40},
      {"$.parallelism.tp", j->par.tp, 1, 1 << 24},
      {"$.parallelism.pp", j->par.pp, 1, 1 << 24},
      {"$.parallelism.dp", j->par.dp, 1, 1 << 24},
      {"$.parallelism.ep", j->par.ep, 1, 1 << 24},
      {"$.parallelism.cp", j->par.cp, 1, 1 << 24},
      {"$.parallelism.virtual_stages", j->par.virtual_stages, 1, 1 << 20},
      {"$.parallelism.zero", j->par.zero, 0, 3},
      {"$.hardware.gpus_per_node", j->hw.gpus_per_node, 1, 1 << 16},
      {"$.hardware.nics_per_gpu", j->hw.nics_per_gpu, 1, 64},
  };
  for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
    if (f[i].v < f[i].lo || f[i].v > f[i].hi)
      return fail_i(j, err, f[i].path, f[i].v, "must be an integer in [%lld, %lld]",
                    (long long)f[i].lo, (long long)f[i].hi);
  if (m->dtype_bytes != 1 && m->dtype_bytes != 2 && m->dtype_bytes != 4)
    return fail_i(j, err, "$.model.dtype_bytes", m->dtype_bytes, "must be 1, 2 or 4");
  const struct {
    const char *path;
    double v, hi;
  } d[] = {
      {"$.hardware.gpu_tflops", j->hw.gpu_tflops, 1e7},
      {"$.hardware.mfu_matmul", j->hw.mfu_matmul, 1},
      {j->hw.hbm_in_gib ? "$.hardware.hbm_gib" : "$.hardware.hbm_bytes",
       j->hw.hbm_in_gib ? j->hw.hbm_bytes / GIB : j->hw.hbm_bytes,
       j->hw.hbm_in_gib ? 1e6 : 1e15},
      {"$.hardware.nvlink_gbps", j->hw.nvlink_gbps, 1e7},
      {"$.hardware.nic_gbps", j->hw.nic_gbps, 1e7},
      {"$.parallelism.grad_bucket_bytes", j->par.grad_bucket_bytes, 1e15},
  };
  for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
    if (!(d[i].v > 0 && d[i].v <= d[i].hi))
      return fail_d(j, err, d[i].path, d[i].v, "must be in (0, %g]", d[i].hi);
  return check_roofline(j, err);
}

static int check_model(const fs_job *j, fs_err *err) {
  const fs_model *m = &j->model;
  if (m->hidden % m->heads)
    return fail_i(j, err, "$.model.heads", m->heads, "must divide hidden (%lld)",
                  (long long)m->hidden);
  if (m->heads % m->kv_heads)
    return fail_i(j, err, "$.model.kv_heads", m->kv_heads,
                  "must divide heads (%lld): each key/value head serves a group of query heads",
                  (long long)m->heads);
  /* An upper estimate of the parameters, in double. */
  double h = (double)m->hidden, e = (double)(m->experts + m->shared_experts);
  double f = (double)(m->ffn > fs_work_expert_ffn(m) ? m->ffn : fs_work_expert_ffn(m));
  double est = (double)m->layers * (4 * h * h + 3 * h * f * e + h * e + 9 * h + 2 * f * e) +
               2 * (double)m->vocab * h + (double)m->seq_len * h;
  if (est > MAX_PARAMS)
    return fs_err_set(err, FS_EINVAL,
                      "%s: $.model: about %.3g parameters, beyond fabricsim's limit of %g",
                      j->file, est, MAX_PARAMS);
  return 0;
}

/* The ops each kind of traffic runs, to check a fixed algorithm. */
static int kind_ops(const fs_job *j, fs_par_kind k, fs_coll_op ops[2], const char **why) {
  switch (k) {
  case FS_PAR_TP:
    if (j->par.sequence_parallel) {
      ops[0] = FS_COLL_ALLGATHER, ops[1] = FS_COLL_REDUCESCATTER;
      *why = "tensor parallelism with sequence_parallel";
      return 2;
    }
    ops[0] = FS_COLL_ALLREDUCE, *why = "tensor parallelism";
    return 1;
  case FS_PAR_DP:
    if (j->par.zero) {
      ops[0] = FS_COLL_REDUCESCATTER, ops[1] = FS_COLL_ALLGATHER;
      *why = "data parallelism with ZeRO";
      return 2;
    }
    ops[0] = FS_COLL_ALLREDUCE, *why = "data parallelism";
    return 1;
  case FS_PAR_PP: ops[0] = FS_COLL_SENDRECV, *why = "pipeline parallelism"; return 1;
  case FS_PAR_CP:
    ops[0] = FS_COLL_SENDRECV, *why = "context parallelism (ring attention)";
    return 1;
  default: ops[0] = FS_COLL_ALLTOALL, *why = "expert parallelism"; return 1;
  }
}

/* Explicit first/last stage layers (Megatron-LM's
 * --decoder-first/last-pipeline-num-layers): at least two stages; each
 * stage's layers a positive multiple of virtual_stages (its chunks are
 * equal); the rest split evenly over the middle stages. */
static int check_stage_layers(const fs_job *j, fs_err *err) {
  const fs_parallel *p = &j->par;
  int64_t F = p->first_stage_layers, Z = p->last_stage_layers, v = p->virtual_stages;
  if (!F && !Z) return 0;
  const char *path = F ? "$.parallelism.first_stage_layers" : "$.parallelism.last_stage_layers";
  if (p->pp < 2) return fail_i(j, err, path, F ? F : Z, "needs pp >= 2");
  if (F % v)
    return fail_i(j, err, "$.parallelism.first_stage_layers", F,
                  "must be a multiple of virtual_stages (%lld): the stage's chunks are equal",
                  (long long)v);
  if (Z % v)
    return fail_i(j, err, "$.parallelism.last_stage_layers", Z,
                  "must be a multiple of virtual_stages (%lld): the stage's chunks are equal",
                  (long long)v);
  int64_t rest = j->model.layers - F - Z, middle = p->pp - (F > 0) - (Z > 0);
  if (rest < 0 || (middle == 0 && rest != 0))
    return fail_i(j, err, path, F ? F : Z,
                  "first and last stage layers must add up to the model's layers (%lld) when "
                  "there is no middle stage, and never exceed them",
                  (long long)j->model.layers);
  if (middle > 0 && (rest % (middle * v) || rest == 0))
    return fail_i(j, err, path, F ? F : Z,
                  "leaves %lld layers, which do not split into %lld middle stages of "
                  "virtual_stages (%lld) equal chunks",
                  (long long)rest, (long long)middle, (long long)v);
  return 0;
}

static int check_parallel(const fs_job *j, fs_err *err) {
  const fs_model *m = &j->model;
  const fs_parallel *p = &j->par;
  const int64_t mb = j->train.micro_batch, B = j->train.global_batch;
  /* Tensor parallelism splits heads, key/value heads and the MLP's inner
   * dimension. A TP group is part of one server (NVLink), as Megatron
   * usually runs it, or whole servers (a larger scale-up domain, or TP
   * across the fabric). */
  if (m->heads % p->tp)
    return fail_i(j, err, "$.parallelism.tp", p->tp, "must divide heads (%lld)",
                  (long long)m->heads);
  if (m->kv_heads % p->tp && p->tp % m->kv_heads)
    return fail_i(j, err, "$.parallelism.tp", p->tp,
                  "must divide kv_heads (%lld) or be a multiple of it (each rank then holds one "
                  "key/value head, replicated)",
                  (long long)m->kv_heads);
  if (m->ffn % p->tp)
    return fail_i(j, err, "$.parallelism.tp", p->tp, "must divide ffn (%lld)",
                  (long long)m->ffn);
  if (m->expert_ffn % p->tp)
    return fail_i(j, err, "$.parallelism.tp", p->tp, "must divide expert_ffn (%lld)",
                  (long long)m->expert_ffn);
  if (j->hw.gpus_per_node % p->tp && p->tp % j->hw.gpus_per_node)
    return fail_i(j, err, "$.parallelism.tp", p->tp,
                  "must divide gpus_per_node (%lld) or be a multiple of it: a tensor-parallel "
                  "group is part of a server or whole servers",
                  (long long)j->hw.gpus_per_node);
  /* Megatron-Core's load-balanced causal split cuts a sequence into 2 cp
   * chunks and gives rank i chunks i and 2 cp - 1 - i. */
  if (p->recompute_mla_up && m->kv_lora == 0)
    return fs_err_set(err, FS_EINVAL,
                      "%s: $.parallelism.recompute_mla_up: recomputes multi-head latent "
                      "attention's up-projections: needs model.mla, got true",
                      j->file);
  if (p->cp > 1 && m->kv_lora > 0)
    return fail_i(j, err, "$.parallelism.cp", p->cp,
                  "context parallelism with multi-head latent attention (model.mla) is not "
                  "modelled: give cp 1");
  if (p->cp > 1 && m->seq_len % (2 * p->cp))
    return fail_i(j, err, "$.parallelism.cp", p->cp,
                  "2 x cp must divide seq_len (%lld): each context-parallel rank holds 2 "
                  "equal chunks of every sequence (load-balanced causal split)",
                  (long long)m->seq_len);
  double gpus = (double)p->tp * (double)p->cp * (double)p->pp * (double)p->dp;
  if (gpus > (double)(1 << 22)) {
    if (p->cp > 1)
      return fail_i(j, err, "$.parallelism.cp", p->cp,
                    "tp x cp x pp x dp = %.0f GPUs, more than fabricsim handles (%d)", gpus,
                    1 << 22);
    return fail_i(j, err, "$.parallelism.dp", p->dp,
                  "tp x pp x dp = %.0f GPUs, more than fabricsim handles (%d)", gpus, 1 << 22);
  }
  if (p->schedule == FS_PIPE_INTERLEAVED) {
    if (p->virtual_stages < 2)
      return fail_i(j, err, "$.parallelism.virtual_stages", p->virtual_stages,
                    "must be >= 2 with the interleaved schedule");
    if (p->pp < 2)
      return fail_i(j, err, "$.parallelism.pp", p->pp,
                    "must be >= 2 with the interleaved schedule");
  } else if (p->virtual_stages != 1) {
    return fail_i(j, err, "$.parallelism.virtual_stages", p->virtual_stages,
                  "must be 1 unless schedule is \"interleaved\"");
  }
  int rc_layers = check_stage_layers(j, err);
  if (rc_layers) return rc_layers;
  /* Uneven splits are allowed (fs_work_chunk_layers); every model chunk
   * needs a layer. */
  if (m->layers < p->pp * p->virtual_stages) {
    if (p->virtual_stages == 1)
      return fail_i(j, err, "$.parallelism.pp", p->pp,
                    "must be at most layers (%lld): every stage holds a layer",
                    (long long)m->layers);
    return fail_i(j, err, "$.parallelism.virtual_stages", p->virtual_stages,
                  "pp x virtual_stages (%lld x %lld) must be at most layers (%lld): every "
                  "model chunk holds a layer",
                  (long long)p->pp, (long long)p->virtual_stages, (long long)m->layers);
  }
  if (B % (mb * p->dp))
    return fail_i(j, err, "$.training.global_batch", B,
                  "must be a multiple of micro_batch x dp (%lld x %lld = %lld)",
                  (long long)mb, (long long)p->dp, (long long)(mb * p->dp));
  int64_t nmb = B / (mb * p->dp);
  if (p->schedule == FS_PIPE_INTERLEAVED && nmb % p->pp)
    return fail_i(j, err, "$.training.global_batch", B,
                  "the interleaved schedule needs the micro-batches per iteration "
                  "(global_batch / (micro_batch x dp) = %lld) to be a multiple of pp (%lld)",
                  (long long)nmb, (long long)p->pp);
  /* Megatron-Core carves expert parallelism out of data parallelism: the ep
   * ranks of an expert group are consecutive data-parallel ranks. */
  if (m->experts % p->ep)
    return fail_i(j, err, "$.parallelism.ep", p->ep, "must divide experts (%lld)",
                  (long long)m->experts);
  if (p->dp % p->ep)
    return fail_i(j, err, "$.parallelism.ep", p->ep,
                  "must divide dp (%lld): expert parallelism is carved out of data parallelism",
                  (long long)p->dp);
  if (p->ep > 1 && p->tp > 1 && !p->sequence_parallel)
    return fs_err_set(err, FS_EINVAL,
                      "%s: $.parallelism.sequence_parallel: must be true with tp > 1 and "
                      "ep > 1 (Megatron-Core requires it for MoE), got false",
                      j->file);
  if (p->zero == 2 && p->pp > 1)
    return fail_i(j, err, "$.parallelism.zero", p->zero,
                  "ZeRO-2 keeps gradients sharded per micro-batch and does not combine with "
                  "pipeline parallelism (pp = %lld); use 0, 1 or 3 (FSDP beside the pipeline)",
                  (long long)p->pp);
  if ((p->zpp_qwz || p->zpp_hpz || p->zpp_qgz) && p->pp > 1)
    return fail_i(j, err, "$.parallelism.pp", p->pp,
                  "ZeRO++ gathers the weights before every op, which ZeRO-3 beside a "
                  "pipeline does not; use pp 1 with zeropp");
  for (int k = 0; k < FS_PAR_N; k++) {
    if (p->algo[k] == FS_ALGO_AUTO) continue;
    char path[64];
    snprintf(path, sizeof(path), "$.parallelism.algorithms.%s", kind_names[k]);
    if ((unsigned)p->algo[k] >= FS_ALGO_N)
      return fail_i(j, err, path, (int64_t)p->algo[k], "unknown algorithm");
    fs_coll_op ops[2];
    const char *why;
    int n = kind_ops(j, (fs_par_kind)k, ops, &why);
    for (int i = 0; i < n; i++)
      if (!fs_coll_supports(p->algo[k], ops[i]))
        return fail_s(j, err, path, fs_coll_algo_name(p->algo[k]),
                      "does not implement %s, which %s needs", fs_coll_op_name(ops[i]), why);
  }
  /* parameter servers among the gradient group's dp x cp ranks */
  if (p->overlap_param_gather && (fs_work_zero_stage(j) != 1 || !p->overlap_dp))
    return fs_err_set(err, FS_EINVAL,
                      "%s: $.parallelism.overlap_param_gather: overlaps the distributed "
                      "optimizer's all-gathers: needs zero 1 (or distributed_optimizer) and "
                      "overlap_dp, got true",
                      j->file);
  if (p->ps_servers && p->algo[FS_PAR_DP] != FS_ALGO_PS)
    return fail_i(j, err, "$.parallelism.ps_servers", p->ps_servers,
                  "applies to parameter servers (algorithms.dp \"ps\")");
  if (p->ps_servers > p->dp * p->cp)
    return fail_i(j, err, "$.parallelism.ps_servers", p->ps_servers,
                  "must be at most the gradient group's dp x cp ranks (%lld)",
                  (long long)(p->dp * p->cp));
  return 0;
}

static int check_topology(const fs_job *j, fs_err *err) {
  const fs_topo *t = j->topo;
  if (!t) return 0;
  int64_t gpus = fs_job_gpus(j);
  if (gpus > t->n_hosts && j->par.cp > 1)
    return fail_i(j, err, "$.parallelism.cp", j->par.cp,
                  "tp x cp x pp x dp (%lld x %lld x %lld x %lld = %lld GPUs) exceeds the "
                  "topology's %d hosts",
                  (long long)j->par.tp, (long long)j->par.cp, (long long)j->par.pp,
                  (long long)j->par.dp, (long long)gpus, t->n_hosts);
  if (gpus > t->n_hosts)
    return fail_i(j, err, "$.parallelism.dp", j->par.dp,
                  "tp x pp x dp (%lld x %lld x %lld = %lld GPUs) exceeds the topology's %d hosts",
                  (long long)j->par.tp, (long long)j->par.pp, (long long)j->par.dp,
                  (long long)gpus, t->n_hosts);
  double up_gbps;
  int32_t servers = fs__work_server_gpus(t, &up_gbps);
  if (servers > 1 && j->hw.gpus_per_node != servers)
    return fail_i(j, err, "$.hardware.gpus_per_node", j->hw.gpus_per_node,
                  "must equal the GPUs of the topology's servers (%d)", servers);
  if (servers > 1 && fabs(j->hw.nvlink_gbps - up_gbps) > 1e-9 * up_gbps)
    return fail_d(j, err, "$.hardware.nvlink_gbps", j->hw.nvlink_gbps,
                  "must equal the topology's GPU scale-up links (%g Gb/s)", up_gbps);
  if (t->n_hosts % j->hw.gpus_per_node)
    return fail_i(j, err, "$.hardware.gpus_per_node", j->hw.gpus_per_node,
                  "must divide the topology's hosts (%d): servers are whole",
                  t->n_hosts);
  double want = (double)j->hw.nics_per_gpu * j->hw.nic_gbps;
  for (int32_t h = 0; h < t->n_hosts; h++) {
    double have = fs__work_fabric_gbps(t, h);
    if (fabs(have - want) > 1e-9 * have)
      return fail_d(j, err, "$.hardware.nic_gbps", j->hw.nic_gbps,
                    "nics_per_gpu x nic_gbps (%lld x %g Gb/s) must equal what host %d of "
                    "the topology sends into the fabric (%g Gb/s)",
                    (long long)j->hw.nics_per_gpu, j->hw.nic_gbps, h, have);
  }
  if (j->mode == FS_ROUTE_EXPLICIT)
    return fail_s(j, err, "$.routing.mode", "explicit",
                  "must be shortest, ecmp, spray or a routing of the topology's family "
                  "(a job has no explicit paths)");
  fs_err inner = {0, ""};
  if (fs_route_mode_check(j->mode, t, &inner))
    return fail_s(j, err, "$.routing.mode", fs_route_mode_name(j->mode), "%s", inner.msg);
  return fs_job_place(j, NULL, err);
}

static int check_memory(const fs_job *j, fs_err *err) {
  fs_work_mem mem;
  fs_work_memory_peak(j, &mem);
  if (mem.total_bytes <= j->hw.hbm_bytes) return 0;
  const char *path = j->hw.hbm_in_gib ? "$.hardware.hbm_gib" : "$.hardware.hbm_bytes";
  double scale = j->hw.hbm_in_gib ? GIB : 1;
  const char *unit = j->hw.hbm_in_gib ? " GiB" : " bytes";
  return fail_d(j, err, path, j->hw.hbm_bytes / scale,
                "stage %d needs %.6g%s per GPU (weights %.4g, gradients %.4g, optimizer %.4g, "
                "activations %.4g), more than the %.6g%s available",
                mem.stage, mem.total_bytes / scale, unit, mem.weight_bytes / scale,
                mem.grad_bytes / scale, mem.optim_bytes / scale, mem.act_bytes / scale,
                j->hw.hbm_bytes / scale, unit);
}

int fs_job_validate(const fs_job *job, fs_err *err) {
  int rc;
  if ((rc = check_ranges(job, err)) || (rc = check_model(job, err)) ||
      (rc = check_parallel(job, err)) || (rc = check_topology(job, err)) ||
      (rc = check_memory(job, err)))
    return rc;
  return 0;
}

/* ---- parsing ------------------------------------------------------------------ */

static int get_bool(const fs__jctx *c, const cJSON *obj, const char *path, const char *key,
                    int def, int *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) {
    *out = def;
    return 0;
  }
  if (!cJSON_IsBool(v)) {
    char p[512];
    fs__json_path_key(p, sizeof(p), path, key);
    return fs__json_fail(c, p, v, "must be true or false");
  }
  *out = cJSON_IsTrue(v) ? 1 : 0;
  return 0;
}

/* The object under key `key` of root; required sections must be there. */
static int section(const fs__jctx *c, const cJSON *root, const char *key, int required,
                   const char *const *keys, const cJSON **out) {
  char p[64];
  snprintf(p, sizeof(p), "$.%s", key);
  *out = cJSON_GetObjectItemCaseSensitive(root, key);
  if (!*out) return required ? fs__json_fail(c, p, NULL, "required object is missing") : 0;
  return fs__json_expect_object(c, *out, p, keys);
}

/* fs__json_int under a short name, to keep the getter chains readable. */
static int get_i(const fs__jctx *c, const cJSON *o, const char *path, const char *key,
                 int required, int64_t def, int64_t lo, int64_t hi, int64_t *out) {
  return fs__json_int(c, o, path, key, required, def, lo, hi, out);
}

/* The optional object parent[key] at path P with the keys allowed; *out
 * NULL when absent. */
static int sub_object(const fs__jctx *c, const cJSON *parent, const char *key, const char *P,
                      const char *const *keys, const cJSON **out) {
  *out = cJSON_GetObjectItemCaseSensitive(parent, key);
  return *out ? fs__json_expect_object(c, *out, P, keys) : 0;
}

/* "mla": {"q_lora", "kv_lora", "qk_nope", "qk_rope", "v_head"}: multi-head
 * latent attention (DeepSeek-V2/V3); kv_lora and qk_nope required, q_lora
 * 0 (no query latent), qk_rope 0, v_head qk_nope by default. */
static int parse_mla(const fs__jctx *c, const cJSON *model, fs_model *m) {
  const char *P = "$.model.mla";
  static const char *const keys[] = {"q_lora", "kv_lora", "qk_nope", "qk_rope", "v_head", NULL};
  const cJSON *o;
  int rc = sub_object(c, model, "mla", P, keys, &o);
  if (rc || !o) return rc;
  if ((rc = get_i(c, o, P, "kv_lora", 1, 0, 1, 1 << 20, &m->kv_lora)) ||
      (rc = get_i(c, o, P, "qk_nope", 1, 0, 1, 1 << 16, &m->qk_nope)) ||
      (rc = get_i(c, o, P, "q_lora", 0, 0, 0, 1 << 20, &m->q_lora)) ||
      (rc = get_i(c, o, P, "qk_rope", 0, 0, 0, 1 << 16, &m->qk_rope)) ||
      (rc = get_i(c, o, P, "v_head", 0, m->qk_nope, 1, 1 << 16, &m->v_head)))
    return rc;
  if (m->bias)
    return fs__json_fail(c, P, NULL, "has no biases: give model.bias false (as DeepSeek-V2/V3)");
  if (cJSON_GetObjectItemCaseSensitive(model, "kv_heads") && m->kv_heads != m->heads)
    return fs__json_fail(c, "$.model.kv_heads", cJSON_GetObjectItemCaseSensitive(model, "kv_heads"),
                         "MLA gives every query head its own key and value: leave kv_heads out");
  return 0;
}

static int parse_model(const fs__jctx *c, const cJSON *root, fs_model *m) {
  static const char *const keys[] = {
      "layers", "hidden", "ffn", "heads", "kv_heads", "seq_len", "vocab", "experts",
      "top_k", "moe_every", "dtype_bytes", "gated", "bias", "position",
      "tied_embeddings", "expert_ffn", "shared_experts", "first_dense", "parallel_block", "mla",
      NULL};
  const char *P = "$.model";
  const cJSON *o;
  int rc;
  if ((rc = section(c, root, "model", 1, keys, &o))) return rc;
  const char *pos;
  int64_t dtype;
  if ((rc = get_i(c, o, P, "layers", 1, 0, 1, 1 << 20, &m->layers)) ||
      (rc = get_i(c, o, P, "hidden", 1, 0, 1, 1 << 20, &m->hidden)) ||
      (rc = get_i(c, o, P, "ffn", 0, 4 * m->hidden, 1, 1 << 24, &m->ffn)) ||
      (rc = get_i(c, o, P, "heads", 1, 0, 1, m->hidden, &m->heads)) ||
      (rc = get_i(c, o, P, "kv_heads", 0, m->heads, 1, m->heads, &m->kv_heads)) ||
      (rc = get_i(c, o, P, "seq_len", 1, 0, 1, 1 << 24, &m->seq_len)) ||
      (rc = get_i(c, o, P, "vocab", 1, 0, 1, 1 << 26, &m->vocab)) ||
      (rc = get_i(c, o, P, "experts", 0, 1, 1, 1 << 16, &m->experts)))
    return rc;
  int moe = m->experts > 1;
  /* top_k 2 is Megatron-Core's moe_router_topk default (GShard, Mixtral). */
  if ((rc = get_i(c, o, P, "top_k", 0, moe ? 2 : 1, 1, moe ? m->experts : 1 << 16,
                  &m->top_k)) ||
      (rc = get_i(c, o, P, "moe_every", 0, 1, 1, m->layers, &m->moe_every)) ||
      (rc = get_i(c, o, P, "expert_ffn", 0, 0, 1, 1 << 24, &m->expert_ffn)) ||
      (rc = get_i(c, o, P, "shared_experts", 0, 0, 0, 1 << 10, &m->shared_experts)) ||
      (rc = get_i(c, o, P, "first_dense", 0, 0, 0, m->layers - 1, &m->first_dense)) ||
      (rc = get_i(c, o, P, "dtype_bytes", 0, 2, 1, 4, &dtype)) ||
      (rc = get_bool(c, o, P, "gated", 0, &m->gated)) ||
      (rc = get_bool(c, o, P, "bias", 1, &m->bias)) ||
      (rc = fs__json_str(c, o, P, "position", 0, "learned", &pos)) ||
      (rc = get_bool(c, o, P, "tied_embeddings", 1, &m->tied_embeddings)) ||
      (rc = get_bool(c, o, P, "parallel_block", 0, &m->parallel_block)))
    return rc;
  m->dtype_bytes = dtype;
  if (strcmp(pos, "learned") == 0)
    m->learned_pos = 1;
  else if (strcmp(pos, "rotary") == 0)
    m->learned_pos = 0;
  else
    return fs__json_fail(c, "$.model.position", cJSON_GetObjectItemCaseSensitive(o, "position"),
                         "must be \"learned\" or \"rotary\"");
  return parse_mla(c, o, m);
}

/* How the model is computed lives with the training: the matmuls'
 * precision (model.precision) and the attention kernel (model.attention);
 * *attn_given says whether the job names the kernel (else its default
 * depends on the hardware, fs_job_parse). */
static int parse_training(const fs__jctx *c, const cJSON *root, fs_training *t, fs_model *m,
                          int *attn_given) {
  static const char *const keys[] = {"global_batch", "micro_batch", "precision", "attention",
                                     "fp8_comm", "fp8_activations", "optimizer_moments",
                                     NULL};
  const char *P = "$.training";
  const cJSON *o;
  int rc;
  if ((rc = section(c, root, "training", 1, keys, &o)) ||
      (rc = get_i(c, o, "$.training", "global_batch", 1, 0, 1, 1LL << 40, &t->global_batch)) ||
      (rc = get_i(c, o, "$.training", "micro_batch", 0, 1, 1, t->global_batch,
                  &t->micro_batch)))
    return rc;
  int64_t dtype = m->dtype_bytes;
  /* The matmuls' precision follows the storage size unless given (FP8
   * GEMMs keep 16-bit weights and activations, as Transformer Engine). */
  const char *prec, *attn;
  const char *def_prec = dtype == 4 ? "fp32" : dtype == 1 ? "fp8" : "bf16";
  if ((rc = fs__json_str(c, o, P, "precision", 0, def_prec, &prec)) ||
      (rc = fs__json_str(c, o, P, "attention", 0, "unfused", &attn)))
    return rc;
  if (fs_precision_parse(prec, &m->precision))
    return fs__json_fail(c, "$.training.precision", cJSON_GetObjectItemCaseSensitive(o, "precision"),
                         "must be \"fp32\", \"tf32\", \"fp16\", \"bf16\" or \"fp8\"");
  if ((rc = get_bool(c, o, P, "fp8_comm", 0, &t->fp8_comm))) return rc;
  if (t->fp8_comm && (m->precision != FS_PREC_FP8 || m->dtype_bytes < 2))
    return fs__json_fail(c, "$.training.fp8_comm", cJSON_GetObjectItemCaseSensitive(o, "fp8_comm"),
                         "sends activations in FP8: needs FP8 training (precision \"fp8\") "
                         "with 16- or 32-bit activations (model.dtype_bytes >= 2)");
  if ((rc = get_bool(c, o, P, "fp8_activations", 0, &t->fp8_activations))) return rc;
  if (t->fp8_activations && (m->precision != FS_PREC_FP8 || m->dtype_bytes < 2))
    return fs__json_fail(c, "$.training.fp8_activations",
                         cJSON_GetObjectItemCaseSensitive(o, "fp8_activations"),
                         "keeps activations in FP8: needs FP8 training (precision \"fp8\") "
                         "with 16- or 32-bit activations (model.dtype_bytes >= 2)");
  const char *moments;
  if ((rc = fs__json_str(c, o, P, "optimizer_moments", 0, "fp32", &moments))) return rc;
  if (strcmp(moments, "fp32") != 0 && strcmp(moments, "bf16") != 0)
    return fs__json_fail(c, "$.training.optimizer_moments",
                         cJSON_GetObjectItemCaseSensitive(o, "optimizer_moments"),
                         "must be \"fp32\" or \"bf16\"");
  t->moment_bytes = moments[0] == 'f' ? 4 : 2;
  *attn_given = cJSON_GetObjectItemCaseSensitive(o, "attention") != NULL;
  if (strcmp(attn, "unfused") == 0)
    m->attention = FS_ATTN_UNFUSED;
  else if (strcmp(attn, "flash") == 0)
    m->attention = FS_ATTN_FLASH;
  else
    return fs__json_fail(c, "$.training.attention", cJSON_GetObjectItemCaseSensitive(o, "attention"),
                         "must be \"unfused\" or \"flash\"");
  return 0;
}

static int parse_algorithms(const fs__jctx *c, const cJSON *par, fs_parallel *p) {
  const char *P = "$.parallelism.algorithms";
  static const char *const keys[] = {"tp", "dp", "pp", "ep", "cp", NULL};
  const cJSON *o;
  int rc = sub_object(c, par, "algorithms", P, keys, &o);
  if (rc || !o) return rc;
  for (int k = 0; k < FS_PAR_N; k++) {
    const char *name;
    if ((rc = fs__json_str(c, o, P, kind_names[k], 0, "auto", &name))) return rc;
    if (fs_coll_algo_parse(name, &p->algo[k])) {
      char path[64];
      snprintf(path, sizeof(path), "%s.%s", P, kind_names[k]);
      return fs__json_fail(c, path, cJSON_GetObjectItemCaseSensitive(o, kind_names[k]),
                           "unknown collective algorithm (see fabricsim coll --help)");
    }
  }
  return 0;
}

/* "zeropp": {"qwz", "hpz", "qgz"}: ZeRO++'s three techniques, each off
 * unless given true; zero 3 only (checked with the parallelism). */
static int parse_zeropp(const fs__jctx *c, const cJSON *par, fs_parallel *p) {
  const char *P = "$.parallelism.zeropp";
  static const char *const keys[] = {"qwz", "hpz", "qgz", NULL};
  const cJSON *o;
  int rc = sub_object(c, par, "zeropp", P, keys, &o);
  if (rc || !o) return rc;
  if ((rc = get_bool(c, o, P, "qwz", 0, &p->zpp_qwz)) ||
      (rc = get_bool(c, o, P, "hpz", 0, &p->zpp_hpz)) ||
      (rc = get_bool(c, o, P, "qgz", 0, &p->zpp_qgz)))
    return rc;
  if ((p->zpp_qwz || p->zpp_hpz || p->zpp_qgz) && p->zero != 3)
    return fs__json_fail(c, P, NULL, "ZeRO++ applies to ZeRO stage 3; zero is %d", p->zero);
  return 0;
}

/* fw: the framework preset whose defaults apply (NULL: none). */
static int parse_parallelism(const fs__jctx *c, const cJSON *root, const fs_framework_preset *fw,
                             fs_parallel *p) {
  static const char *const keys[] = {
      "tp", "pp", "dp", "ep", "cp", "schedule", "virtual_stages", "zero",
      "sequence_parallel", "recompute", "selective_recompute", "recompute_norms",
      "recompute_mla_up", "distributed_optimizer",
      "grad_accum_fusion", "grad_bucket_bytes", "overlap_dp", "algorithms", "ps_servers",
      "zeropp", "first_stage_layers", "last_stage_layers", "p2p", "overlap_param_gather", NULL};
  const char *P = "$.parallelism";
  const cJSON *o;
  const char *sched;
  int64_t zero;
  int distopt, rc;
  if ((rc = section(c, root, "parallelism", 1, keys, &o)) ||
      (rc = get_i(c, o, P, "tp", 1, 0, 1, 1 << 24, &p->tp)) ||
      (rc = get_i(c, o, P, "pp", 1, 0, 1, 1 << 24, &p->pp)) ||
      (rc = get_i(c, o, P, "dp", 1, 0, 1, 1 << 24, &p->dp)) ||
      (rc = get_i(c, o, P, "ep", 0, 1, 1, 1 << 24, &p->ep)) ||
      (rc = get_i(c, o, P, "cp", 0, 1, 1, 1 << 24, &p->cp)) ||
      (rc = fs__json_str(c, o, P, "schedule", 0, "1f1b", &sched)))
    return rc;
  if (fs_pipe_schedule_parse(sched, &p->schedule))
    return fs__json_fail(c, "$.parallelism.schedule",
                         cJSON_GetObjectItemCaseSensitive(o, "schedule"),
                         "must be \"1f1b\", \"interleaved\", \"gpipe\" or \"zb-h1\"");
  if ((rc = get_i(c, o, P, "virtual_stages", 0, 1, 1, 1 << 20, &p->virtual_stages)) ||
      (rc = get_i(c, o, P, "zero", 0, 0, 0, 3, &zero)) ||
      (rc = get_bool(c, o, P, "sequence_parallel", 0, &p->sequence_parallel)) ||
      (rc = get_bool(c, o, P, "recompute", 0, &p->recompute)) ||
      (rc = get_bool(c, o, P, "selective_recompute", 0, &p->selective_recompute)) ||
      (rc = get_bool(c, o, P, "recompute_norms", 0, &p->recompute_norms)) ||
      (rc = get_bool(c, o, P, "recompute_mla_up", 0, &p->recompute_mla_up)) ||
      (rc = get_bool(c, o, P, "distributed_optimizer", 0, &distopt)) ||
      (rc = get_bool(c, o, P, "grad_accum_fusion", fw ? fw->grad_accum_fusion : 1,
                     &p->grad_accum_fusion)) ||
      (rc = fs__json_num(c, o, P, "grad_bucket_bytes", 0, 25 * MIB, 1, 1e15,
                         &p->grad_bucket_bytes)) ||
      (rc = get_bool(c, o, P, "overlap_dp", fw ? fw->overlap_dp : 1, &p->overlap_dp)) ||
      (rc = get_i(c, o, P, "ps_servers", 0, 0, 0, 1 << 24, &p->ps_servers)) ||
      (rc = get_i(c, o, P, "first_stage_layers", 0, 0, 0, 1 << 20, &p->first_stage_layers)) ||
      (rc = get_i(c, o, P, "last_stage_layers", 0, 0, 0, 1 << 20, &p->last_stage_layers)) ||
      (rc = parse_algorithms(c, o, p)))
    return rc;
  p->zero = (int)zero;
  if ((rc = parse_zeropp(c, o, p))) return rc;
  const char *p2p;
  if ((rc = fs__json_str(c, o, P, "p2p", 0, fw && fw->blocking_p2p ? "blocking" : "async", &p2p)))
    return rc;
  if (strcmp(p2p, "async") != 0 && strcmp(p2p, "blocking") != 0)
    return fs__json_fail(c, "$.parallelism.p2p", cJSON_GetObjectItemCaseSensitive(o, "p2p"),
                         "must be \"async\" or \"blocking\"");
  p->blocking_p2p = p2p[0] == 'b';
  /* (ZeRO-3 beside a pipeline gathers each chunk's weights before its
   * first forward: fs_work_zero_stage) */
  if ((rc = get_bool(c, o, P, "overlap_param_gather", p->zero == 3 && p->pp > 1 && p->overlap_dp,
                     &p->overlap_param_gather)))
    return rc;
  if (p->blocking_p2p && p->schedule == FS_PIPE_INTERLEAVED)
    return fs__json_fail(c, "$.parallelism.p2p", cJSON_GetObjectItemCaseSensitive(o, "p2p"),
                         "blocking sends run with the 1f1b or gpipe schedule (DeepSpeed's "
                         "pipeline engine has no interleaving)");
  if (p->recompute && p->selective_recompute)
    return fs__json_fail(c, "$.parallelism.selective_recompute",
                         cJSON_GetObjectItemCaseSensitive(o, "selective_recompute"),
                         "full recomputation (recompute) already recomputes the attention "
                         "core; set one of the two");
  if (p->recompute && (p->recompute_norms || p->recompute_mla_up)) {
    const char *k = p->recompute_norms ? "recompute_norms" : "recompute_mla_up";
    char path[64];
    snprintf(path, sizeof(path), "$.parallelism.%s", k);
    return fs__json_fail(c, path, cJSON_GetObjectItemCaseSensitive(o, k),
                         "full recomputation (recompute) already recomputes the whole layer; "
                         "set one of the two");
  }
  /* Megatron's distributed optimizer shards the optimizer state over the
   * data-parallel ranks, reduce-scatters the gradients and all-gathers the
   * weights: ZeRO stage 1 (docs/model-work.md). */
  if (distopt) {
    if (cJSON_GetObjectItemCaseSensitive(o, "zero") && p->zero != 1)
      return fs__json_fail(c, "$.parallelism.distributed_optimizer",
                           cJSON_GetObjectItemCaseSensitive(o, "distributed_optimizer"),
                           "is ZeRO stage 1 and contradicts zero = %d", p->zero);
    p->zero = 1;
  }
  return 0;
}

/* "framework": {"preset", "gemm_k_overhead", "kernel_hbm_efficiency",
 * "kernel_gap_us"}: what the training software reaches (compute.h). The
 * preset's figures go into hw; *pre is the preset (NULL: none) whose
 * defaults the training and parallelism sections take. */
static int parse_framework(const fs__jctx *c, const cJSON *root, fs_hardware *hw,
                           const fs_framework_preset **pre) {
  static const char *const keys[] = {"preset",        "gemm_k_overhead", "kernel_hbm_efficiency",
                                     "kernel_gap_us", "step_latency",    "tp_overlap",
                                     NULL};
  const char *P = "$.framework";
  const cJSON *o;
  const char *name;
  *pre = NULL;
  int rc = section(c, root, "framework", 0, keys, &o);
  if (rc || !o || (rc = fs__json_str(c, o, P, "preset", 0, NULL, &name))) return rc;
  if (name && !(*pre = fs_compute_framework(name))) {
    char list[256];
    size_t used = 0;
    for (int i = 0; fs_compute_framework_at(i) && used < sizeof(list); i++)
      used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
                               fs_compute_framework_at(i)->name);
    return fs__json_fail(c, "$.framework.preset", cJSON_GetObjectItemCaseSensitive(o, "preset"),
                         "unknown framework preset (one of: %s)", list);
  }
  const fs_framework_preset *f = *pre;
  double gap_us;
  snprintf(hw->framework, sizeof(hw->framework), "%s", f ? f->name : "custom");
  if ((rc = fs__json_num(c, o, P, "gemm_k_overhead", 0, f ? f->gemm_k_overhead : 0, 0, 1e6,
                         &hw->gemm_k_overhead)) ||
      (rc = fs__json_num(c, o, P, "kernel_hbm_efficiency", 0, f ? f->kernel_hbm_eff : 0, 0, 1,
                         &hw->kernel_hbm_eff)) ||
      (rc = fs__json_num(c, o, P, "kernel_gap_us", 0, f ? f->kernel_gap_us : 0, 0, 1e6, &gap_us)))
    return rc;
  hw->kernel_gap_s = gap_us * 1e-6;
  const char *lat;
  if ((rc = fs__json_str(c, o, P, "step_latency", 0, "none", &lat))) return rc;
  if (strcmp(lat, "nccl") != 0 && strcmp(lat, "none") != 0)
    return fs__json_fail(c, "$.framework.step_latency",
                         cJSON_GetObjectItemCaseSensitive(o, "step_latency"),
                         "must be \"nccl\" or \"none\"");
  hw->nccl_step_latency = lat[0] == 'n' && lat[1] == 'c';
  return get_bool(c, o, P, "tp_overlap", 0, &hw->tp_overlap);
}

/* Names of the presets, for the message on an unknown one. */
static void preset_list(char *buf, size_t n) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; fs_compute_preset_at(i) && used < n; i++)
    used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "",
                             fs_compute_preset_at(i)->name);
}

/* "peak_tflops": {"bf16": 312, ...}: per-precision overrides. */
static int parse_peaks(const fs__jctx *c, const cJSON *hw_obj, fs_hardware *hw) {
  static const char *const keys[] = {"fp32", "tf32", "fp16", "bf16", "fp8", NULL};
  const cJSON *o;
  int rc = sub_object(c, hw_obj, "peak_tflops", "$.hardware.peak_tflops", keys, &o);
  for (int i = 0; o && !rc && i < FS_PREC_N; i++)
    rc = fs__json_num(c, o, "$.hardware.peak_tflops", keys[i], 0, hw->peak_tflops[i], 0, 1e7,
                      &hw->peak_tflops[i]);
  return rc;
}

/* A preset (compute.h) fills every figure it has; any key given overrides
 * it. The per-operation model times the job when a preset, or hbm_gb_per_s
 * and sms, are given and mfu_matmul is not; otherwise compute is FLOPs /
 * (gpu_tflops mfu_matmul) as before presets existed. */
static int parse_hardware(const fs__jctx *c, const cJSON *root, const fs_model *m,
                          fs_hardware *hw) {
  static const char *const keys[] = {"preset",
                                     "gpu_tflops",
                                     "peak_tflops",
                                     "mfu_matmul",
                                     "matmul_efficiency",
                                     "hbm_bytes",
                                     "hbm_gib",
                                     "hbm_gb_per_s",
                                     "hbm_efficiency",
                                     "sms",
                                     "tile_m",
                                     "tile_n",
                                     "gpus_per_node",
                                     "nvlink_gbps",
                                     "nics_per_gpu",
                                     "nic_gbps",
                                     "nvlink_efficiency",
                                     "speed_cv",
                                     NULL};
  const char *P = "$.hardware";
  const cJSON *o;
  const char *name;
  int rc;
  if ((rc = section(c, root, "hardware", 1, keys, &o)) ||
      (rc = fs__json_str(c, o, P, "preset", 0, NULL, &name)))
    return rc;
  const fs_gpu_preset *pre = NULL;
  if (name) {
    if (!(pre = fs_compute_preset(name))) {
      char list[256];
      preset_list(list, sizeof(list));
      return fs__json_fail(c, "$.hardware.preset", cJSON_GetObjectItemCaseSensitive(o, "preset"),
                           "unknown preset (one of: %s)", list);
    }
    snprintf(hw->preset, sizeof(hw->preset), "%s", pre->name);
    memcpy(hw->peak_tflops, pre->peak_tflops, sizeof(hw->peak_tflops));
  }
  if ((rc = parse_peaks(c, o, hw))) return rc;
  double def_peak = hw->peak_tflops[m->precision];
  const cJSON *given_peak = cJSON_GetObjectItemCaseSensitive(o, "gpu_tflops");
  if (!given_peak && (pre || def_peak > 0) && def_peak <= 0)
    return fs__json_fail(c, "$.hardware.preset", cJSON_GetObjectItemCaseSensitive(o, "preset"),
                         "has no dense %s peak (training.precision); give hardware.gpu_tflops or "
                         "peak_tflops.%s",
                         fs_precision_name(m->precision), fs_precision_name(m->precision));
  int64_t sms, tile_m, tile_n;
  if ((rc = fs__json_num(c, o, P, "gpu_tflops", def_peak <= 0, def_peak, 1e-9, 1e7,
                         &hw->gpu_tflops)) ||
      (rc = fs__json_num(c, o, P, "mfu_matmul", 0, 0.5, 1e-9, 1, &hw->mfu_matmul)) ||
      (rc = fs__json_num(c, o, P, "matmul_efficiency", 0,
                         pre ? pre->matmul_eff[m->precision] : 0.8, 1e-9, 1, &hw->matmul_eff)) ||
      (rc = fs__json_num(c, o, P, "hbm_gb_per_s", 0, pre ? pre->hbm_gb_per_s : 0, 1e-9, 1e9,
                         &hw->hbm_gb_per_s)) ||
      (rc = fs__json_num(c, o, P, "hbm_efficiency", 0, pre ? pre->hbm_eff : 0.9, 1e-9, 1,
                         &hw->hbm_eff)) ||
      (rc = get_i(c, o, P, "sms", 0, pre ? pre->sms : 0, 1, 1 << 20, &sms)) ||
      (rc = get_i(c, o, P, "tile_m", 0, pre ? pre->tile_m : 256, 1, 1 << 20, &tile_m)) ||
      (rc = get_i(c, o, P, "tile_n", 0, pre ? pre->tile_n : 128, 1, 1 << 20, &tile_n)))
    return rc;
  hw->sms = sms, hw->tile_m = tile_m, hw->tile_n = tile_n;
  if (pre && hw->matmul_eff <= 0)
    return fs__json_fail(c, "$.hardware.preset", cJSON_GetObjectItemCaseSensitive(o, "preset"),
                         "has no %s matmul efficiency; give hardware.matmul_efficiency",
                         fs_precision_name(m->precision));
  int roofline = pre || (hw->hbm_gb_per_s > 0 && hw->sms > 0);
  hw->compute = roofline && !cJSON_GetObjectItemCaseSensitive(o, "mfu_matmul")
                    ? FS_COMPUTE_ROOFLINE
                    : FS_COMPUTE_MFU;
  const cJSON *gib = cJSON_GetObjectItemCaseSensitive(o, "hbm_gib");
  if (gib && cJSON_GetObjectItemCaseSensitive(o, "hbm_bytes"))
    return fs__json_fail(c, "$.hardware.hbm_gib", gib, "give either hbm_bytes or hbm_gib, not both");
  if (gib) {
    if ((rc = fs__json_num(c, o, P, "hbm_gib", 1, 0, 1e-9, 1e6, &hw->hbm_bytes))) return rc;
    hw->hbm_bytes *= GIB;
    hw->hbm_in_gib = 1;
  } else if (cJSON_GetObjectItemCaseSensitive(o, "hbm_bytes")) {
    if ((rc = fs__json_num(c, o, P, "hbm_bytes", 1, 0, 1, 1e15, &hw->hbm_bytes))) return rc;
  } else if (pre) {
    hw->hbm_bytes = pre->hbm_bytes;
  } else {
    return fs__json_fail(c, "$.hardware.hbm_bytes", NULL,
                         "required number is missing (or give hbm_gib)");
  }
  /* gpus_per_node and nvlink_gbps default to the topology's servers, if it
   * models them, then to the preset's (0 = not given). */
  if ((rc = get_i(c, o, P, "gpus_per_node", 0, 0, 1, 1 << 16, &hw->gpus_per_node)) ||
      (rc = fs__json_num(c, o, P, "nvlink_gbps", 0, 0, 1e-9, 1e7, &hw->nvlink_gbps)) ||
      (rc = get_i(c, o, P, "nics_per_gpu", 0, 1, 1, 64, &hw->nics_per_gpu)) ||
      (rc = fs__json_num(c, o, P, "nic_gbps", 0, 0, 1e-9, 1e7, &hw->nic_gbps)) ||
      (rc = fs__json_num(c, o, P, "nvlink_efficiency", 0, pre ? pre->nvlink_eff : 1, 1e-9, 1,
                         &hw->nvlink_eff)) ||
      (rc = fs__json_num(c, o, P, "speed_cv", 0, 0, 0, 0.5, &hw->speed_cv)))
    return rc;
  return 0;
}

/* "routing" and "failures": netctl's readers, in the job file's units
 * (docs/formats.md). */
static int parse_routing(const fs__jctx *c, const cJSON *root, fs_job *job) {
  static const fs_netctl_routing_format fmt = {{"interval_ms", 1e-3, 0, 1e-6, 1e9, 1},
                                               {"reconfig_us", 1e-6, 0, 0, 1e12, 0},
                                               {"detect_ms", 1e-3, 0, 0, 1e9, 0},
                                               0,
                                               NULL};
  fs_netctl_routing r;
  int rc = fs_netctl_routing_from_json(root, c->file, &fmt, &r, c->err);
  if (rc) return rc;
  job->mode = r.mode;
  job->seed = r.seed;
  if (r.optimized) {
    job->reopt_optimizer = r.optimizer;
    job->reopt_interval_s = r.interval * 1e-3;
    job->reopt_reconfig_s = r.reconfig * 1e-6;
  }
  job->detect_s = r.detect * 1e-3;
  return 0;
}

static int parse_failures(const fs__jctx *c, const cJSON *root, fs_job *job) {
  static const fs_netctl_time_key at = {"at_ms", 1e-3, 0, 0, 1e9, 0};
  return fs_netctl_failures_from_json(root, c->file, job->topo, &at, &job->failures,
                                      &job->n_failures, c->err);
}

/* "ocs": the layer's reader (ocsctl.h), then what it needs of the job:
 * leaves to join, single-path routes it can move, no other controller. */
static int parse_ocs(const fs__jctx *c, const cJSON *root, fs_job *job) {
  int rc = fs_ocsctl_from_json(root, c->file, &job->ocs, c->err);
  if (rc || job->ocs.ports == 0) return rc;
  int32_t leaves = fs_ocsctl_leaves(job->topo, NULL, 0);
  if (leaves < 2)
    return fs__json_fail(c, "$.ocs", NULL,
                         "joins the topology's leaves (tier-1 switches): %s has %d, needs 2 or more",
                         job->topo->family, leaves);
  if (job->mode != FS_ROUTE_ECMP && job->mode != FS_ROUTE_SHORTEST)
    return fs__json_fail(c, "$.ocs", NULL,
                         "moves flows between a circuit and one electrical path: needs "
                         "$.routing.mode ecmp or shortest, got %s",
                         fs_route_mode_name(job->mode));
  if (job->reopt_interval_s > 0 || job->n_failures > 0)
    return fs__json_fail(c, "$.ocs", NULL,
                         "with routing re-optimisation or failures: not modelled (one controller "
                         "moves flows at a time)");
  if (job->transport.kind != FS_TRANSPORT_FLUID)
    return fs__json_fail(c, "$.ocs", NULL, "needs the fluid transport (the default), got %s",
                         fs_transport_kind_name(job->transport.kind));
  return 0;
}

int fs_job_parse(const char *text, size_t len, const char *file, fs_job **out, fs_err *err) {
  fs__jctx c = {file, err};
  cJSON *root = NULL;
  int rc = fs__json_parse(&c, text, len, &root);
  if (rc) return rc;
  fs_job *job = malloc(sizeof(*job));
  if (!job) {
    cJSON_Delete(root);
    return fs_err_set(err, FS_ENOMEM, "%s: out of memory", file);
  }
  fs_job_init(job, file);
  static const char *const keys[] = {"description", "model",     "training",  "parallelism",
                                     "hardware",    "framework", "topology",  "placement",
                                     "routing",     "failures",  "transport", "ocs",
                                     NULL};
  const char *desc, *place;
  int attn_given = 0;
  const fs_framework_preset *fw;
  if ((rc = fs__json_expect_object(&c, root, "$", keys)) ||
      (rc = fs__json_str(&c, root, "$", "description", 0, NULL, &desc)) ||
      (rc = parse_framework(&c, root, &job->hw, &fw)) ||
      (rc = parse_model(&c, root, &job->model)) ||
      (rc = parse_training(&c, root, &job->train, &job->model, &attn_given)) ||
      (rc = parse_parallelism(&c, root, fw, &job->par)) ||
      (rc = parse_hardware(&c, root, &job->model, &job->hw)))
    goto fail;
  /* A job naming a hardware preset gets today's attention kernel by
   * default, unless its framework preset says which; older jobs keep the
   * unfused one their numbers were made with. */
  const fs_gpu_preset *pre = job->hw.preset[0] ? fs_compute_preset(job->hw.preset) : NULL;
  if (!attn_given && fw)
    job->model.attention = fw->attention;
  else if (!attn_given && pre)
    job->model.attention = FS_ATTN_FLASH;
  if (job->hw.tp_overlap && !job->par.sequence_parallel) {
    rc = fs_err_set(err, FS_EINVAL,
                    "%s: $.framework.tp_overlap: overlaps sequence parallelism's all-gathers and "
                    "reduce-scatters with their GEMMs: needs parallelism.sequence_parallel, got true",
                    file);
    goto fail;
  }
  if (job->hw.framework[0] && job->hw.compute != FS_COMPUTE_ROOFLINE &&
      (job->hw.gemm_k_overhead > 0 || job->hw.kernel_hbm_eff > 0 || job->hw.kernel_gap_s > 0 ||
       job->hw.tp_overlap)) {
    rc = fs__json_fail(&c, "$.framework", NULL,
                       "applies to the per-operation compute model: give hardware.preset (or "
                       "hbm_gb_per_s and sms) and no hardware.mfu_matmul");
    goto fail;
  }
  const cJSON *topo = cJSON_GetObjectItemCaseSensitive(root, "topology");
  if (!topo) {
    rc = fs__json_fail(&c, "$.topology", NULL, "required object is missing");
    goto fail;
  }
  if ((rc = fs_topo_from_json_object(topo, file, "$.topology", &job->topo, err))) goto fail;
  if ((rc = fs__json_str(&c, root, "$", "placement", 0, "rail_aligned", &place))) goto fail;
  if (fs_placement_parse(place, &job->placement)) {
    rc = fs__json_fail(&c, "$.placement", cJSON_GetObjectItemCaseSensitive(root, "placement"),
                       "must be \"rail_aligned\" or \"packed\"");
    goto fail;
  }
  if ((rc = parse_routing(&c, root, job)) || (rc = parse_failures(&c, root, job)) ||
      (rc = fs_transport_from_json(root, file, &job->transport, err)) ||
      (rc = parse_ocs(&c, root, job)))
    goto fail;
  /* Defaults from the topology: a NIC's speed from what a host sends into
   * the fabric; the server size and NVLink speed from its servers. */
  if (job->hw.nic_gbps == 0 && job->topo->n_hosts > 0)
    job->hw.nic_gbps = fs__work_fabric_gbps(job->topo, 0) / (double)job->hw.nics_per_gpu;
  double up_gbps;
  int32_t servers = fs__work_server_gpus(job->topo, &up_gbps);
  if (job->hw.gpus_per_node == 0 && servers == 1 && pre) job->hw.gpus_per_node = pre->gpus_per_node;
  if (job->hw.nvlink_gbps == 0 && servers == 1 && pre) job->hw.nvlink_gbps = pre->nvlink_gbps;
  if (job->hw.gpus_per_node == 0) {
    if (servers == 1) {
      rc = fs__json_fail(&c, "$.hardware.gpus_per_node", NULL,
                         "required integer is missing (the topology does not model servers)");
      goto fail;
    }
    job->hw.gpus_per_node = servers;
  }
  if (job->hw.nvlink_gbps == 0) {
    if (servers == 1) {
      rc = fs__json_fail(&c, "$.hardware.nvlink_gbps", NULL,
                         "required number is missing (the topology does not model servers)");
      goto fail;
    }
    job->hw.nvlink_gbps = up_gbps;
  }
  if ((rc = fs_job_validate(job, err))) goto fail;
  /* From here on the scale-up links carry what GPU-driven copies reach of
   * their line rate (docs/model-compute.md, "Hardware presets"): the
   * validation above compared line rates. */
  if (job->hw.nvlink_eff < 1) {
    job->hw.nvlink_gbps *= job->hw.nvlink_eff;
    fs__work_scale_scaleup(job->topo, job->hw.nvlink_eff);
  }
  cJSON_Delete(root);
  *out = job;
  return 0;
fail:
  cJSON_Delete(root);
  fs_job_free(job);
  return rc;
}

int fs_job_load(const char *path, fs_job **out, fs_err *err) {
  char *text;
  size_t len;
  int rc = fs__read_file(path, &text, &len, err);
  if (rc) return rc;
  rc = fs_job_parse(text, len, path, out, err);
  free(text);
  return rc;
}
