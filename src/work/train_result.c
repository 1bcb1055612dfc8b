/* The results of an iteration (fs_train_result): where the reported
 * device's time went (compute, bubble, exposed communication per kind),
 * throughput, MFU and HFU, the per-kind collective table, and the timeline
 * the trace and the report draw (fs_train_segments). One pass over the
 * items of the reported device; O(items) for the segments. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "train_internal.h"

/* When the device's (last simulated) iteration could start: the end of
 * its previous one, or 0. */
static double dev_start(const fs_train *tr, int32_t dev) {
  return tr->gate[dev] >= 0 ? fs_sim_finish_s(tr->sim, tr->gate[dev]) : 0;
}

/* The device's compute, TP, EP and (since its iteration's start) last-op
 * end in its last simulated iteration, after a run. */
/* How long part `item` of an op took: a task timed alone (from == item)
 * from its start, else from the end of `from` (-1: the device's start t0). */
static double part_s(const fs_train *tr, int32_t item, int32_t from, double t0) {
  if (item < 0) return 0;
  if (from == item) return fs_sim_finish_s(tr->sim, item) - fs_sim_start_s(tr->sim, item);
  return fs_sim_finish_s(tr->sim, item) - (from >= 0 ? fs_sim_finish_s(tr->sim, from) : t0);
}

static void device_profile(const fs_train *tr, int32_t dev, double *compute, double *tp, double *ep,
                           double *z3, double *cp, double *last_end) {
  *compute = *tp = *ep = *z3 = *cp = *last_end = 0;
  double t0 = dev_start(tr, dev);
  for (int32_t i = 0; i < tr->n_ops; i++) {
    const op_items *it = &tr->ops[(size_t)dev * tr->n_ops + i];
    *z3 += part_s(tr, it->z3, it->z3_from, t0);
    *compute += fs_sim_finish_s(tr->sim, it->compute) - fs_sim_start_s(tr->sim, it->compute);
    *tp += part_s(tr, it->tp, it->tp_from, t0);
    *ep += part_s(tr, it->ep, it->ep_from, t0);
    *cp += part_s(tr, it->cp, it->cp_from, t0);
    double e = fs_sim_finish_s(tr->sim, it->end) - t0;
    if (e > *last_end) *last_end = e;
  }
}

double fs__train_iteration_times(const fs_train *tr, double *first, double *mean) {
  double prev_end = 0, T = 0, sum = 0;
  int32_t lo = tr->item_lo;
  for (int32_t k = 0; k < tr->iterations; k++) {
    double end = prev_end;
    size_t r = 0; /* (pg_ranges ascend: left out, the weights' all-gathers) */
    for (int32_t i = lo; i < tr->iter_hi[k]; i++) {
      while (r < tr->n_pg_ranges && i >= tr->pg_ranges[r + 1]) r += 2;
      if (r < tr->n_pg_ranges && i >= tr->pg_ranges[r]) continue;
      end = fmax(end, fs_sim_last_finish_s(tr->sim, i));
    }
    T = end - prev_end;
    sum += T;
    if (k == 0 && first) *first = T;
    prev_end = end;
    lo = tr->iter_hi[k];
  }
  if (mean) *mean = sum / tr->iterations;
  return T;
}

const char *fs_train_kind_name(int k) {
  static const char *const names[FS_TRAIN_KINDS] = {"tp", "sp", "cp", "ep", "pp", "dp"};
  return k >= 0 && k < FS_TRAIN_KINDS ? names[k] : "?";
}

/* Which kinds of traffic the job has and whose contention its simulation
 * modelled: pipeline and data-parallel always (as flows); TP (and SP, its
 * sequence-parallel form) when lowered or on private links; EP and ZeRO-3
 * gathers when lowered (comm all). */
static uint32_t congestion_kinds(const fs_train *tr) {
  const fs_job *job = tr->job;
  uint32_t k = 0;
  if (tr->opts.free_comm) return 0;
  if (tr->tp_mode == TP_FLOWS || tr->tp_mode == TP_PRIVATE)
    k |= 1u << (job->par.sequence_parallel ? FS_TRAIN_SP : FS_TRAIN_TP);
  if (tr->opts.comm == FS_COMM_ALL && job->par.ep >= 2 && job->model.experts > 1)
    k |= 1u << FS_TRAIN_EP;
  if (tr->opts.comm == FS_COMM_ALL && tr->c > 1) k |= 1u << FS_TRAIN_CP;
  if (tr->p > 1) k |= 1u << FS_TRAIN_PP;
  if (tr->d > 1) k |= 1u << FS_TRAIN_DP;
  return k;
}

static int64_t peak_rss_bytes(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (int64_t)ru.ru_maxrss * 1024; /* Linux: KiB */
}

/* What the result says whatever the device: the run's counts,
 * throughput, MFU, the symmetry used. */
static void collect_run(fs_train *tr, fs_train_result *out) {
  const fs_job *job = tr->job;
  out->comm = tr->opts.comm;
  out->congestion_aware = congestion_kinds(tr);
  out->tp_private = tr->tp_mode == TP_PRIVATE;
  out->peak_rss_bytes = peak_rss_bytes();
  out->iterations = tr->iterations;
  double T = fs__train_iteration_times(tr, &out->first_iter_s, &out->mean_iter_s);
  out->iter_s = T;
  out->tokens_per_s = (double)job->train.global_batch * job->model.seq_len / T;
  out->model_tflops_per_gpu = fs_work_model_flops(job) / T / (double)fs_job_gpus(job) / 1e12;
  out->mfu = fs_work_mfu(job, T);
  out->hw_tflops_per_gpu = fs_work_hw_flops(job) / T / (double)fs_job_gpus(job) / 1e12;
  out->hfu = out->hw_tflops_per_gpu / job->hw.gpu_tflops;
  out->counters = fs_sim_get_counters(tr->sim);
  if (tr->ctl) fs_netctl_stats_get(tr->ctl, &out->ctl);
  int64_t flows = 0;
  for (int32_t i = tr->item_lo; i < tr->item_hi; i++)
    flows += fs_sim_item_kind(tr->sim, i) == FS_ITEM_FLOW;
  int64_t items = tr->item_hi - tr->item_lo - flows + tr->lazy_tasks; /* tasks */
  flows += tr->lazy_flows; /* (the plan instances made theirs as they ran) */
  out->flows = flows;
  /* (the TP shortcut's flows were counted on the simulated devices: each
   * stands for d / ds devices) */
  out->flows_represented = flows * tr->orbit + tr->represented * (tr->d / tr->ds);
  if (tr->symm)
    snprintf(out->symmetry, sizeof(out->symmetry),
             "%s%s%s (each simulated flow stands for %lld)%s%.150s",
             tr->rails == 1 ? "rail rotation (TP rank 0 for all)" : "",
             tr->rails == 1 && tr->shift_g ? " x " : "", tr->shift_g ? "replica shift" : "",
             (long long)tr->orbit, tr->symm_note[0] ? "; " : "", tr->symm_note);
  else
    snprintf(out->symmetry, sizeof(out->symmetry), "%s", tr->symm_note);
  out->tasks = items;
}

/* The device reported: dp rank 0 of the stage that finishes last. */
static int32_t reported_stage(const fs_train *tr) {
  int32_t best = 0;
  double best_end = -1;
  for (int32_t s = 0; s < tr->p; s++) {
    double c, tp, ep, z3, e;
    double cpx;
    device_profile(tr, s * tr->d, &c, &tp, &ep, &z3, &cpx, &e);
    double t0 = dev_start(tr, s * tr->d);
    for (size_t i = 0; i < tr->n_dp; i++)
      if (tr->dp[i].stage == s) e = fmax(e, fs_sim_finish_s(tr->sim, tr->dp[i].done) - t0);
    if (e > best_end + 1e-12) best = s, best_end = e;
  }
  return best;
}

/* One iteration of job under options o (fabric_free: pipeline and
 * data-parallel traffic take no time), built and run by itself; the
 * reported device's profile in prof[7] (device_profile's order) if prof,
 * else the iteration's time in *iter_s. */
static int run_variant(const fs_job *job, const fs_train_opts *o, int fabric_free, int32_t dev,
                       double *prof, double *iter_s, fs_err *err) {
  fs_train *v = NULL;
  int rc = fs__train_new(job, o, fabric_free, NULL, &v, err);
  if (!rc) rc = fs_sim_run(v->sim, NULL, err);
  if (!rc && prof)
    device_profile(v, dev, &prof[0], &prof[1], &prof[2], &prof[3], &prof[4], &prof[5]);
  if (!rc && iter_s) *iter_s = fs__train_iteration_times(v, NULL, NULL);
  fs_train_free(v);
  return rc;
}

/* What a plan instance's flows from node me carried (the eager loop below,
 * over its template: its group's hosts again, routes from the cache that
 * has them all). */
static void lazy_wire_bytes(const fs_train *tr, const dp_coll *c, int32_t me, double *sum) {
  int32_t N = tr->d * tr->c;
  int32_t *hosts = fs__malloc((size_t)N, sizeof(int32_t));
  if (!hosts) return;
  for (int32_t k = 0; k < N; k++) hosts[k] = host_dpcp(tr, c->tp_rank, k, c->stage);
  fs_err err = {0, ""};
  fs__qcoll_wire_bytes(c->tmpl, c->routes, tr->job->topo, hosts, me, sum, &err);
  free(hosts);
}

/* The reported stage's data-parallel collectives and pipeline sends (TP
 * rank 0's), and the DP time left exposed after its last op (last_end,
 * from the device's start), plus its ZeRO-3 gathers (z3). */
static void dp_pp_kinds(const fs_train *tr, int32_t best, double last_end, double z3,
                        fs_train_result *out) {
  const fs_job *job = tr->job;
  double dp_end = last_end, t0 = dev_start(tr, best * tr->d);
  for (size_t i = 0; i < tr->n_dp; i++) {
    const dp_coll *c = &tr->dp[i];
    double st = fs_sim_start_s(tr->sim, c->first_item), fin = fs_sim_finish_s(tr->sim, c->done);
    /* (the weights' all-gathers under the next forward are not exposed) */
    if (c->stage == best && !c->param_gather) dp_end = fmax(dp_end, fin - t0);
    if (c->stage == best && c->tp_rank == 0) {
      out->kind[FS_PAR_DP].colls++;
      out->kind[FS_PAR_DP].bytes += c->bytes;
      out->kind[FS_PAR_DP].busy_s += fin - st;
      int32_t me = host(tr, 0, 0, best);
      if (c->tmpl) {
        lazy_wire_bytes(tr, c, me, &out->kind[FS_PAR_DP].wire_bytes);
        continue;
      }
      for (int32_t it = c->first_item; it < c->done; it++) {
        const int32_t *links;
        const double *w;
        int32_t nl;
        if (fs_sim_item_kind(tr->sim, it) != FS_ITEM_FLOW) continue;
        fs_sim_flow_route(tr->sim, it, &links, &w, &nl);
        if (nl && job->topo->links[links[0]].from == me)
          out->kind[FS_PAR_DP].wire_bytes += fs_sim_flow_bytes(tr->sim, it);
      }
    }
  }
  out->kind[FS_PAR_DP].exposed_s = fmax(0, dp_end - last_end) + z3;
  /* Pipeline sends of the device's TP rank 0. */
  for (size_t i = 0; i < tr->n_pp; i++) {
    const pp_flow *f = &tr->pp[i];
    if (f->stage != best || f->tp_rank != 0) continue;
    out->kind[FS_PAR_PP].colls++;
    out->kind[FS_PAR_PP].bytes += fs_work_pp_bytes(job);
    out->kind[FS_PAR_PP].wire_bytes += fs_work_pp_bytes(job);
    out->kind[FS_PAR_PP].busy_s +=
        fs_sim_finish_s(tr->sim, f->item) - fs_sim_start_s(tr->sim, f->item);
  }
}

/* Collectives per kind of one op set of the reported stage's device. */
static void op_counts(const fs_train *tr, int32_t best, fs_train_result *out) {
  const fs_job *job = tr->job;
  int64_t stage_layers = 0;
  for (int32_t c = 0; c < tr->v; c++) stage_layers += vs_layers(tr, c * tr->p + best, NULL);
  out->kind[FS_PAR_TP].colls = tr->t > 1 ? (int64_t)tr->m * stage_layers *
                                               (fs_work_tp_colls_per_layer(job, FS_PASS_FWD) +
                                                fs_work_tp_colls_per_layer(job, FS_PASS_BWD) +
                                                fs_work_tp_colls_per_layer(job, FS_PASS_RECOMPUTE))
                                         : 0;
  out->kind[FS_PAR_TP].bytes =
      out->kind[FS_PAR_TP].colls * fs_work_tp_bytes(job) * fs_work_fp8_share(job, FS_PAR_TP);
  /* EP: dispatch + combine per MoE layer of the op's chunk, per pass. */
  for (int32_t i = 0; i < tr->n_ops; i++) {
    const fs_pipe_op *op = &tr->order[(size_t)best * tr->n_ops + i];
    if (tr->ops[(size_t)(best * tr->d) * tr->n_ops + i].ep < 0) continue;
    out->kind[FS_PAR_EP].colls += op_alltoalls(tr, op->chunk * tr->p + best, op->backward);
  }
  out->kind[FS_PAR_EP].bytes =
      out->kind[FS_PAR_EP].colls * fs_work_ep_bytes(job) * fs_work_fp8_share(job, FS_PAR_EP);
  /* CP: ring steps per layer and pass, each a K/V block (x2 backward). */
  if (tr->c > 1) {
    static const fs_work_pass passes[] = {FS_PASS_FWD, FS_PASS_BWD, FS_PASS_RECOMPUTE};
    for (int k = 0; k < 3; k++) {
      int64_t n = (int64_t)tr->m * stage_layers * fs_work_cp_steps_per_layer(job, passes[k]);
      out->kind[FS_PAR_CP].colls += n;
      out->kind[FS_PAR_CP].bytes += (double)n * fs_work_cp_step_bytes(job, passes[k]);
    }
    out->kind[FS_PAR_CP].wire_bytes = out->kind[FS_PAR_CP].bytes;
  }
}

int fs__train_collect(fs_train *tr, fs_train_result *out, fs_err *err) {
  const fs_job *job = tr->job;
  int rc;
  collect_run(tr, out);
  int32_t best = reported_stage(tr);
  double compute, tp, ep, z3, last_end;
  double cp;
  device_profile(tr, best * tr->d, &compute, &tp, &ep, &z3, &cp, &last_end);
  out->device_stage = best;
  out->compute_s = compute;
  memcpy(out->kind, tr->kinds, sizeof(out->kind));
  out->kind[FS_PAR_TP].exposed_s = tp;
  out->kind[FS_PAR_EP].exposed_s = ep;
  /* Bubble: the same device's idle time with pipeline and data-parallel
   * traffic free (an identical DAG without those flows). */
  fs_train_opts o = tr->opts;
  o.sim = NULL;
  double f[6];
  if ((rc = run_variant(job, &o, 1, best * tr->d, f, NULL, err))) return rc;
  out->bubble_s = fmax(0, f[5] - f[0] - f[1] - f[2] - f[3] - f[4]);
  /* With routing control: the same job without it (its base routing, no
   * failures, no re-optimisation), so the report can say what it cost or
   * bought. A shallow copy: it borrows the topology. */
  if (tr->ctl) {
    fs_job plain = *job;
    plain.reopt_interval_s = 0;
    plain.failures = NULL;
    plain.n_failures = 0;
    if ((rc = run_variant(&plain, &o, 0, 0, NULL, &out->baseline_iter_s, err))) return rc;
  }
  /* With an OCS layer: the same job without it, and (adaptive) with its
   * static configuration throughout, so the report says what the circuits
   * and their changes bought. */
  if (tr->ocs) {
    fs_ocsctl_stats_get(tr->ocs, &out->ocs);
    fs_job v = *job;
    v.ocs.ports = 0;
    if ((rc = run_variant(&v, &o, 0, 0, NULL, &out->ocs_off_iter_s, err))) return rc;
    v.ocs = job->ocs;
    v.ocs.policy = FS_OCSCTL_STATIC;
    if (job->ocs.policy == FS_OCSCTL_ADAPTIVE &&
        (rc = run_variant(&v, &o, 0, 0, NULL, &out->ocs_static_iter_s, err)))
      return rc;
  }
  /* comm all: the same job with TP, EP and ZeRO-3 timed alone, so the
   * report says what the contention among all the traffic costs. */
  if (tr->own_sim && tr->opts.comm == FS_COMM_ALL && !tr->opts.no_compare && !tr->opts.free_comm) {
    fs_train_opts io = o;
    io.comm = FS_COMM_ISOLATED;
    if ((rc = run_variant(job, &io, 0, 0, NULL, &out->isolated_iter_s, err))) return rc;
  }
  double idle = fmax(0, last_end - compute - tp - ep - z3 - cp);
  out->kind[FS_PAR_CP].exposed_s = cp;
  out->kind[FS_PAR_CP].busy_s = cp;
  out->kind[FS_PAR_PP].exposed_s = fmax(0, idle - out->bubble_s);
  dp_pp_kinds(tr, best, last_end, z3, out);
  op_counts(tr, best, out);
  out->kind[FS_PAR_TP].busy_s = tp;
  out->kind[FS_PAR_EP].busy_s = ep;
  return 0;
}

/* The segments the trace draws, as data (train.h). */
int fs_train_segments(const fs_train *tr, fs_train_segment **out, int64_t *n) {
  size_t cap = (size_t)tr->p * (size_t)tr->n_ops * 3 + tr->n_pp + tr->n_dp + 1, k = 0;
  fs_train_segment *v = malloc(cap * sizeof(*v));
  *out = NULL;
  *n = 0;
  if (!v) return FS_ENOMEM;
  for (int32_t s = 0; s < tr->p; s++)
    for (int32_t i = 0; i < tr->n_ops; i++) {
      const fs_pipe_op *o = &tr->order[(size_t)s * tr->n_ops + i];
      const op_items *it = &tr->ops[(size_t)(s * tr->d) * tr->n_ops + i];
      double st = fs_sim_start_s(tr->sim, it->compute);
      v[k++] =
          (fs_train_segment){s,  o->backward ? FS_TRAIN_SEG_BWD : FS_TRAIN_SEG_FWD, o->mb, o->chunk,
                             st, fs_sim_finish_s(tr->sim, it->compute) - st,        0,     -1};
      if (it->tp >= 0) {
        double len = part_s(tr, it->tp, it->tp_from, 0);
        v[k++] = (fs_train_segment){
            s, FS_TRAIN_SEG_TP, o->mb, o->chunk, fs_sim_finish_s(tr->sim, it->tp) - len, len, 0,
            -1};
      }
      if (it->ep >= 0) {
        double len = part_s(tr, it->ep, it->ep_from, 0);
        v[k++] = (fs_train_segment){
            s, FS_TRAIN_SEG_EP, o->mb, o->chunk, fs_sim_finish_s(tr->sim, it->ep) - len, len, 0,
            -1};
      }
    }
  for (size_t i = 0; i < tr->n_pp; i++) {
    const pp_flow *pf = &tr->pp[i];
    if (pf->tp_rank != 0) continue;
    double st = fs_sim_start_s(tr->sim, pf->item);
    v[k++] = (fs_train_segment){pf->stage,
                                FS_TRAIN_SEG_PP,
                                -1,
                                -1,
                                st,
                                fs_sim_finish_s(tr->sim, pf->item) - st,
                                fs_sim_flow_bytes(tr->sim, pf->item),
                                (int64_t)i};
  }
  for (size_t i = 0; i < tr->n_dp; i++) {
    const dp_coll *c = &tr->dp[i];
    if (c->tp_rank != 0) continue;
    double st = fs_sim_start_s(tr->sim, c->first_item);
    v[k++] = (fs_train_segment){
        c->stage, FS_TRAIN_SEG_DP, -1, -1, st, fs_sim_finish_s(tr->sim, c->done) - st,
        c->bytes, (int64_t)i};
  }
  *out = v;
  *n = (int64_t)k;
  return 0;
}
