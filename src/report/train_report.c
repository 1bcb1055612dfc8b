/* The outputs of `fabricsim train`: the summary a person reads, its JSON
 * (each job's in turn when several share a cluster), and the Perfetto /
 * Chrome trace of the iteration. They read the job, its
 * result (fs_train_result) and the iteration's timeline
 * (fs_train_segments) and simulation through work's public API only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/compute.h"
#include "fabricsim/report.h"
#include "fabricsim/routeopt.h"
#include "fabricsim/trace.h"

static const char *kind_label(int k) {
  static const char *const names[FS_PAR_N] = {"tensor parallel (TP)", "data parallel (DP)",
                                              "pipeline (PP)", "expert parallel (EP)",
                                              "ring attention (CP)"};
  return names[k];
}

/* The engine's line: flows, tasks, events, pruned links, wall, memory. */
static void engine_line(FILE *f, const char *head, const fs_train_result *r) {
  fprintf(f,
          "%s%lld flows simulated (%lld represented), %lld tasks, %llu events, %lld links "
          "skipped in the rate computation (they can never limit a flow), %.3f s, peak RSS "
          "%.1f MiB\n",
          head, (long long)r->flows, (long long)r->flows_represented, (long long)r->tasks,
          (unsigned long long)r->counters.events, (long long)r->counters.links_left_out, r->wall_s,
          r->peak_rss_bytes / 1048576.0);
}

/* The OCS layer's lines (ocsctl.h): what it is, what its controller did,
 * and the iteration without it and with its static configuration. */
static void ocs_text(FILE *f, const fs_job *job, const fs_train_result *r, double T) {
  const fs_ocsctl_opts *o = &job->ocs;
  const fs_ocsctl_stats *s = &r->ocs;
  fprintf(f, "ocs layer:          %d leaves x %d ports of %g Gb/s, %s%s%g us to reconfigure, %s",
          s->leaves, o->ports, o->gbps, o->technology, o->technology[0] ? " " : "",
          o->reconfig_s * 1e6, fs_ocsctl_policy_name(o->policy));
  if (o->policy == FS_OCSCTL_ADAPTIVE) fprintf(f, " (decides every %g ms)", o->interval_s * 1e3);
  fprintf(f, "\n");
  fprintf(f,
          "circuits:           %d lit before the run; %d reconfigurations, %d declined (they "
          "cost more than they save), %lld circuits set up, %.3f circuit-ms dark\n",
          s->circuits_initial, s->reconfigs, s->declined, (long long)s->circuits_set,
          s->dark_s * 1e3);
  if (s->flow_bytes > 0)
    fprintf(f, "                    %.1f %% of the bytes between leaves ended on circuits\n",
            100 * s->circuit_bytes / s->flow_bytes);
  if (r->ocs_off_iter_s > 0)
    fprintf(f, "without the layer:  %.3f ms (electrical fabric only): this run takes x%.3f of it\n",
            r->ocs_off_iter_s * 1e3, T / r->ocs_off_iter_s);
  if (r->ocs_static_iter_s > 0)
    fprintf(f,
            "static circuits:    %.3f ms (the configuration set before the run, kept): this run "
            "takes x%.3f of it\n",
            r->ocs_static_iter_s * 1e3, T / r->ocs_static_iter_s);
}

static void ocs_json(FILE *f, const fs_job *job, const fs_train_result *r) {
  const fs_ocsctl_opts *o = &job->ocs;
  const fs_ocsctl_stats *s = &r->ocs;
  char a[40], b[40], c[40], d[40], e[40], g[40];
  fs__fmt_num(a, o->gbps);
  fs__fmt_num(b, o->reconfig_s * 1e9);
  fs__fmt_num(c, s->dark_s * 1e9);
  fs__fmt_num(d, s->circuit_bytes);
  fs__fmt_num(e, s->flow_bytes);
  fs__fmt_num(g, o->interval_s * 1e9);
  fprintf(f,
          ",\"ocs\":{\"leaves\":%d,\"ports\":%d,\"gbps\":%s,\"reconfig_ns\":%s,"
          "\"technology\":\"%s\",\"policy\":\"%s\",\"interval_ns\":%s,"
          "\"circuits_initial\":%d,\"decisions\":%d,\"reconfigurations\":%d,\"declined\":%d,"
          "\"circuits_set\":%lld,\"flows_moved\":%lld,\"dark_ns\":%s,\"circuit_bytes\":%s,"
          "\"leaf_bytes\":%s",
          s->leaves, o->ports, a, b, o->technology, fs_ocsctl_policy_name(o->policy), g,
          s->circuits_initial, s->decisions, s->reconfigs, s->declined, (long long)s->circuits_set,
          (long long)s->flows_moved, c, d, e);
  fs__fmt_num(a, r->ocs_off_iter_s * 1e9);
  fprintf(f, ",\"without_iteration_ns\":%s", a);
  if (r->ocs_static_iter_s > 0)
    fprintf(f, ",\"static_iteration_ns\":%s", (fs__fmt_num(b, r->ocs_static_iter_s * 1e9), b));
  fprintf(f, "}");
}

/* The fabric's cost as `fabricsim topo` gives it, so a comparison of
 * fabrics reads time and cost from one run. */
static void network_cost_line(FILE *f, const fs_job *job) {
  fs_topo_cost cost;
  fs_topo_cost_compute(job->topo, &cost);
  fprintf(f, "network cost:       $%.0f, %.1f kW (estimate, docs/model.md%s)\n", cost.usd,
          cost.watts / 1e3, job->ocs.ports > 0 ? "; the OCS layer's ports not counted" : "");
}

int fs_report_train_text(FILE *f, const fs_job *job, const fs_train_result *r) {
  fs_work_mem mem;
  fs_work_memory_peak(job, &mem);
  double T = r->iter_s;
  fprintf(f, "job:                %s\n", job->file);
  fprintf(f, "model:              %.4g B parameters, %lld layers, hidden %lld, seq %lld\n",
          (double)fs_work_params(&job->model) / 1e9, (long long)job->model.layers,
          (long long)job->model.hidden, (long long)job->model.seq_len);
  fprintf(f,
          "parallelism:        tp %lld x pp %lld (%s, v %lld) x dp %lld = %lld GPUs, "
          "%lld micro-batches of %lld\n",
          (long long)job->par.tp, (long long)job->par.pp, fs_pipe_schedule_name(job->par.schedule),
          (long long)job->par.virtual_stages, (long long)job->par.dp, (long long)fs_job_gpus(job),
          (long long)fs_work_microbatches(job), (long long)job->train.micro_batch);
  if (job->reopt_interval_s > 0)
    fprintf(f, "topology:           %s (optimized routing: %s every %g ms over %s, hold %g us)\n",
            job->topo->spec, fs_routeopt_kind_name(job->reopt_optimizer),
            job->reopt_interval_s * 1e3, fs_route_mode_name(job->mode),
            job->reopt_reconfig_s * 1e6);
  else
    fprintf(f, "topology:           %s (%s routing)\n", job->topo->spec,
            fs_route_mode_name(job->mode));
  network_cost_line(f, job);
  if (job->hw.nvlink_eff < 1)
    fprintf(f,
            "scale-up payload:   %g Gb/s per GPU and direction, %.3g of the line rate "
            "(GPU-driven copies%s%s)\n",
            job->hw.nvlink_gbps, job->hw.nvlink_eff, job->hw.preset[0] ? ", " : "", job->hw.preset);
  fprintf(f,
          "memory per GPU:     %.2f GiB of %.2f GiB (stage %d: weights %.2f, grads %.2f, "
          "optimizer %.2f, activations %.2f)\n",
          mem.total_bytes / 1073741824.0, job->hw.hbm_bytes / 1073741824.0, mem.stage,
          mem.weight_bytes / 1073741824.0, mem.grad_bytes / 1073741824.0,
          mem.optim_bytes / 1073741824.0, mem.act_bytes / 1073741824.0);
  if (r->iterations > 1)
    fprintf(f,
            "iteration time:     %.3f ms (the last of %d back to back; first %.3f ms, mean "
            "%.3f ms)\n",
            T * 1e3, r->iterations, r->first_iter_s * 1e3, r->mean_iter_s * 1e3);
  else
    fprintf(f, "iteration time:     %.3f ms\n", T * 1e3);
  fprintf(f, "throughput:         %.0f tokens/s, %.1f model TFLOP/s per GPU, MFU %.1f%%\n",
          r->tokens_per_s, r->model_tflops_per_gpu, r->mfu * 100);
  /* (the hardware FLOPs exceed the model's only by what is recomputed) */
  fprintf(f,
          "hardware FLOPs:     %.1f TFLOP/s per GPU %s, HFU %.1f%% of %g "
          "TFLOP/s (%s, %s)\n",
          r->hw_tflops_per_gpu,
          r->hw_tflops_per_gpu > r->model_tflops_per_gpu ? "with recomputation"
                                                          : "(no recomputation: the model's)",
          r->hfu * 100, job->hw.gpu_tflops,
          job->hw.preset[0] ? job->hw.preset : "custom",
          job->hw.compute == FS_COMPUTE_ROOFLINE ? "per-operation roofline"
                                                 : "FLOPs / (peak x mfu_matmul)");
  if (job->hw.framework[0]) {
    const fs_framework_preset *fw = fs_compute_framework(job->hw.framework);
    fprintf(f, "framework:          %s%s%s:", job->hw.framework, fw ? ", " : "",
            fw ? fw->what : "");
    if (job->hw.compute == FS_COMPUTE_ROOFLINE)
      fprintf(f, " GEMM tiles +%g k-steps, memory-bound kernels at %.2f of HBM, %g us per kernel",
              job->hw.gemm_k_overhead,
              job->hw.kernel_hbm_eff > 0 ? job->hw.kernel_hbm_eff : job->hw.hbm_eff,
              job->hw.kernel_gap_s * 1e6);
    fprintf(f, "%s%s%s\n", job->hw.compute == FS_COMPUTE_ROOFLINE ? "," : "",
            job->hw.nccl_step_latency ? " NCCL's step latency between servers"
                                      : " no step latency beyond the wire's",
            job->hw.tp_overlap ? ", TP collectives overlapping their GEMMs" : "");
  }
  if (job->hw.speed_cv > 0)
    fprintf(f,
            "stragglers:         GPU speed cv %.3g: the slowest of %lld GPUs %.2f sd slow, compute "
            "x%.4f\n",
            job->hw.speed_cv, (long long)fs_job_gpus(job), fs_expected_max_normal(fs_job_gpus(job)),
            fs_compute_straggler_factor(job));
  fprintf(f, "where the time goes (pipeline stage %d, data-parallel rank 0):\n", r->device_stage);
  fprintf(f, "  %-28s %10.3f ms  %5.1f%%\n", "compute", r->compute_s * 1e3, 100 * r->compute_s / T);
  fprintf(f, "  %-28s %10.3f ms  %5.1f%%\n", "pipeline bubble + imbalance", r->bubble_s * 1e3,
          100 * r->bubble_s / T);
  for (int k = 0; k < FS_PAR_N; k++) {
    if (k == FS_PAR_CP && job->par.cp == 1) continue; /* no CP: keep the old report */
    char label[64];
    snprintf(label, sizeof(label), "exposed %s", kind_label(k));
    fprintf(f, "  %-28s %10.3f ms  %5.1f%%\n", label, r->kind[k].exposed_s * 1e3,
            100 * r->kind[k].exposed_s / T);
  }
  fprintf(f, "collectives (per GPU of that stage, per iteration):\n");
  fprintf(f, "  %-6s %10s %14s %14s %12s  %s\n", "kind", "count", "size (MB)", "busy (ms)",
          "mean (us)", "algorithm");
  for (int k = 0; k < FS_PAR_N; k++) {
    const fs_train_kind *c = &r->kind[k];
    if (!c->colls) continue;
    fprintf(f, "  %-6s %10lld %14.3f %14.3f %12.3f  %s\n", fs_par_kind_name((fs_par_kind)k),
            (long long)c->colls, c->bytes / 1e6, c->busy_s * 1e3, c->busy_s / c->colls * 1e6,
            k == FS_PAR_PP ? "send/recv" : fs_coll_algo_name(c->algo));
  }
  /* (the table is the stage's TP rank 0 GPU's busy time; the exposed time
   * is the device's, to the end of its last collective on any of its GPUs,
   * gaps included: it can be the larger, which is said rather than left
   * to look like an error, issue 45) */
  const fs_train_kind *dp = &r->kind[FS_PAR_DP]; /* (DP's exposure is defined so) */
  if (dp->colls && dp->exposed_s > dp->busy_s * (1 + 1e-9))
    fprintf(f,
            "  note: exposed dp (%.3f ms) is more than its busy time above: it runs from the "
            "device's last op to the end of its last dp collective on any of its GPUs, gaps "
            "included\n",
            dp->exposed_s * 1e3);
  if (job->reopt_interval_s > 0)
    fprintf(f,
            "re-optimisation:    %d runs, %lld pairs moved, %lld flows re-routed (%lld in "
            "flight, held)\n",
            r->ctl.reopts, (long long)r->ctl.pairs_moved,
            (long long)(r->ctl.flows_rerouted - r->ctl.failure_reroutes),
            (long long)r->ctl.flows_held);
  if (job->n_failures > 0)
    fprintf(f,
            "failures:           %d cables failed, %lld flows re-routed around them after "
            "%g ms\n",
            r->ctl.cables_failed, (long long)r->ctl.failure_reroutes, job->detect_s * 1e3);
  if (r->baseline_iter_s > 0)
    fprintf(f,
            "without control:    %.3f ms (%s routing, no failures, no re-optimisation): "
            "this run takes x%.3f of it\n",
            r->baseline_iter_s * 1e3, fs_route_mode_name(job->mode), T / r->baseline_iter_s);
  if (job->ocs.ports > 0) ocs_text(f, job, r, T);
  fprintf(f, "communication:      %s (congestion-aware:",
          r->comm == FS_COMM_ALL ? "all traffic in one simulation"
                                 : "isolated: TP, EP and ZeRO-3 timed alone");
  int any = 0;
  for (int k = 0; k < FS_TRAIN_KINDS; k++)
    if (r->congestion_aware & (1u << k)) {
      fprintf(f, " %s", fs_train_kind_name(k));
      any = 1;
    }
  fprintf(f, "%s%s)\n", any ? "" : " none",
          r->tp_private ? "; TP alone on its private NVLink links, exact" : "");
  if (r->symmetry[0]) fprintf(f, "symmetry:           %s\n", r->symmetry);
  if (r->isolated_iter_s > 0)
    fprintf(f,
            "timed alone:        %.3f ms (--comm isolated): all traffic contending takes "
            "x%.3f of it\n",
            r->isolated_iter_s * 1e3, T / r->isolated_iter_s);
  if (r->cluster_jobs) /* (events, wall and memory are the cluster's: printed once, after) */
    fprintf(f, "engine:             %lld flows simulated (%lld represented), %lld tasks of this "
               "job, in the cluster's one simulation (below)\n",
            (long long)r->flows, (long long)r->flows_represented, (long long)r->tasks);
  else
    engine_line(f, "engine:             ", r);
  return ferror(f) ? FS_EIO : 0;
}

int fs_report_train_json(FILE *f, const fs_job *job, const fs_train_result *r) {
  fs_work_mem mem;
  fs_work_memory_peak(job, &mem);
  char a[32], b[32], c[32], d[32];
  fs__fmt_num(a, r->iter_s * 1e9);
  fs__fmt_num(b, r->tokens_per_s);
  fs__fmt_num(c, r->model_tflops_per_gpu);
  fs__fmt_num(d, r->mfu);
  fprintf(f, "{\"iteration_ns\":%s,\"tokens_per_s\":%s,\"model_tflops_per_gpu\":%s,\"mfu\":%s", a,
          b, c, d);
  fs__fmt_num(a, r->hw_tflops_per_gpu);
  fs__fmt_num(b, r->hfu);
  fprintf(f, ",\"hw_tflops_per_gpu\":%s,\"hfu\":%s,\"compute_model\":\"%s\"", a, b,
          job->hw.compute == FS_COMPUTE_ROOFLINE ? "roofline" : "mfu");
  if (job->hw.framework[0]) fprintf(f, ",\"framework\":\"%s\"", job->hw.framework);
  if (job->hw.speed_cv > 0) {
    fs__fmt_num(a, fs_compute_straggler_factor(job));
    fprintf(f, ",\"straggler_factor\":%s", a);
  }
  fs__fmt_num(a, job->hw.nvlink_gbps);
  fs__fmt_num(b, job->hw.nvlink_eff);
  fprintf(f, ",\"scaleup_payload_gbps\":%s,\"nvlink_efficiency\":%s", a, b);
  fs_topo_cost cost;
  fs_topo_cost_compute(job->topo, &cost);
  fs__fmt_num(a, cost.usd);
  fs__fmt_num(b, cost.watts);
  fprintf(f, ",\"network_cost_usd\":%s,\"network_watts\":%s", a, b);
  fs__fmt_num(a, mem.total_bytes);
  fprintf(f, ",\"memory_bytes_per_gpu\":%s,\"breakdown\":{\"stage\":%d", a, r->device_stage);
  fs__fmt_num(a, r->compute_s * 1e9);
  fs__fmt_num(b, r->bubble_s * 1e9);
  fprintf(f, ",\"compute_ns\":%s,\"bubble_ns\":%s", a, b);
  for (int k = 0; k < FS_PAR_N; k++) {
    if (k == FS_PAR_CP && job->par.cp == 1) continue; /* no CP: keep the old report */
    fs__fmt_num(a, r->kind[k].exposed_s * 1e9);
    fprintf(f, ",\"exposed_%s_ns\":%s", fs_par_kind_name((fs_par_kind)k), a);
  }
  fprintf(f, "},\"collectives\":[");
  int first = 1;
  for (int k = 0; k < FS_PAR_N; k++) {
    const fs_train_kind *ck = &r->kind[k];
    if (!ck->colls) continue;
    fs__fmt_num(a, ck->bytes);
    fs__fmt_num(b, ck->busy_s * 1e9);
    fprintf(f, "%s{\"kind\":\"%s\",\"count\":%lld,\"bytes\":%s,\"busy_ns\":%s,\"algo\":\"%s\"}",
            first ? "" : ",", fs_par_kind_name((fs_par_kind)k), (long long)ck->colls, a, b,
            k == FS_PAR_PP ? "sendrecv" : fs_coll_algo_name(ck->algo));
    first = 0;
  }
  fprintf(f, "]");
  if (r->iterations > 1) {
    fs__fmt_num(a, r->first_iter_s * 1e9);
    fs__fmt_num(b, r->mean_iter_s * 1e9);
    fprintf(f, ",\"iterations\":%d,\"first_iteration_ns\":%s,\"mean_iteration_ns\":%s",
            r->iterations, a, b);
  }
  if (job->reopt_interval_s > 0 || job->n_failures > 0)
    fprintf(f,
            ",\"control\":{\"reopts\":%d,\"pairs_moved\":%lld,\"flows_rerouted\":%lld,"
            "\"flows_held\":%lld,\"cables_failed\":%d,\"failure_reroutes\":%lld,"
            "\"baseline_iteration_ns\":%s}",
            r->ctl.reopts, (long long)r->ctl.pairs_moved, (long long)r->ctl.flows_rerouted,
            (long long)r->ctl.flows_held, r->ctl.cables_failed, (long long)r->ctl.failure_reroutes,
            (fs__fmt_num(a, r->baseline_iter_s * 1e9), a));
  if (job->ocs.ports > 0) ocs_json(f, job, r);
  fprintf(f, ",\"comm\":\"%s\",\"congestion_aware\":[", fs_train_comm_name(r->comm));
  first = 1;
  for (int k = 0; k < FS_TRAIN_KINDS; k++)
    if (r->congestion_aware & (1u << k)) {
      fprintf(f, "%s\"%s\"", first ? "" : ",", fs_train_kind_name(k));
      first = 0;
    }
  fprintf(f, "],\"tp_private_links\":%s,\"symmetry\":\"%s\"", r->tp_private ? "true" : "false",
          r->symmetry);
  if (r->isolated_iter_s > 0)
    fprintf(f, ",\"isolated_iteration_ns\":%s", (fs__fmt_num(a, r->isolated_iter_s * 1e9), a));
  fs__fmt_num(a, r->wall_s);
  fprintf(f,
          ",\"engine\":{\"flows_simulated\":%lld,\"flows_represented\":%lld,\"events\":%llu,"
          "\"links_left_out\":%lld,\"wall_s\":%s,\"peak_rss_bytes\":%lld}",
          (long long)r->flows, (long long)r->flows_represented,
          (unsigned long long)r->counters.events, (long long)r->counters.links_left_out, a,
          (long long)r->peak_rss_bytes);
  fprintf(f, ",\"flows\":%lld,\"tasks\":%lld,\"events\":%llu}\n", (long long)r->flows,
          (long long)r->tasks, (unsigned long long)r->counters.events);
  return ferror(f) ? FS_EIO : 0;
}

/* ---- link-group utilisation for the trace ----
 * Links are grouped by the classes of their two ends as the topology names
 * them (fs_topo_node_class), e.g. "nic -> tier1" or "tier1 -> tier2". Each flow's bytes are spread evenly
 * over its lifetime (its average rate: the engine's piecewise-constant rate
 * history is not kept) and binned; a group's counter is the bytes it
 * carried in a bin over its capacity times the bin: mean utilisation. */
enum { UTIL_BINS = 400, MAX_GROUPS = 32 };

static int link_util_tracks(fs_trace *t, const fs_sim *sim, int pid) {
  const fs_topo *topo = fs_sim_topo(sim);
  double T = fs_sim_makespan_s(sim);
  if (!(T > 0)) return 0;
  char names[MAX_GROUPS][48];
  double cap[MAX_GROUPS] = {0};
  int n_groups = 0;
  int32_t *group = malloc((size_t)topo->n_links * sizeof(int32_t));
  double *bytes = calloc((size_t)MAX_GROUPS * UTIL_BINS, sizeof(double));
  if (!group || !bytes) {
    free(group);
    free(bytes);
    return FS_ENOMEM;
  }
  for (int32_t l = 0; l < topo->n_links; l++) {
    char a[16], b[16], name[48];
    fs_topo_node_class(topo, topo->links[l].from, a, (int)sizeof(a));
    fs_topo_node_class(topo, topo->links[l].to, b, (int)sizeof(b));
    snprintf(name, sizeof(name), "%s -> %s", a, b);
    int g = 0;
    while (g < n_groups && strcmp(names[g], name) != 0) g++;
    if (g == n_groups && n_groups < MAX_GROUPS) snprintf(names[n_groups++], 48, "%s", name);
    group[l] = g < n_groups ? g : -1;
    if (g < n_groups) cap[g] += topo->links[l].capacity_bps / 8;
  }
  double bin = T / UTIL_BINS;
  for (int32_t it = 0; it < fs_sim_n_items(sim); it++) {
    if (fs_sim_item_kind(sim, it) != FS_ITEM_FLOW) continue;
    double st = fs_sim_start_s(sim, it), fin = fs_sim_finish_s(sim, it);
    double b = fs_sim_flow_bytes(sim, it);
    if (!(fin > st) || b <= 0) continue;
    const int32_t *links;
    const double *w;
    int32_t nl;
    fs_sim_flow_route(sim, it, &links, &w, &nl);
    int32_t b0 = (int32_t)(st / bin), b1 = (int32_t)(fin / bin);
    if (b1 >= UTIL_BINS) b1 = UTIL_BINS - 1;
    for (int32_t k = b0; k <= b1; k++) {
      double lo = fmax(st, k * bin), hi = fmin(fin, (k + 1) * bin);
      if (hi <= lo) continue;
      double share = b * (hi - lo) / (fin - st);
      /* (a quotient's flow loads each link of its links' orbits alike) */
      for (int32_t j = 0; j < nl; j++)
        if (group[links[j]] >= 0)
          bytes[group[links[j]] * UTIL_BINS + k] +=
              share * w[j] * fs_sim_link_multiplicity(sim, links[j]);
    }
  }
  for (int g = 0; g < n_groups; g++) {
    double any = 0;
    for (int k = 0; k < UTIL_BINS; k++) any += bytes[g * UTIL_BINS + k];
    if (any <= 0 || cap[g] <= 0) continue; /* idle groups get no track */
    char label[80];
    snprintf(label, sizeof(label), "%s utilisation %%", names[g]);
    for (int k = 0; k < UTIL_BINS; k++)
      fs_trace_counter(t, pid, label, k * bin, 100 * bytes[g * UTIL_BINS + k] / (cap[g] * bin));
    fs_trace_counter(t, pid, label, T, 0);
  }
  free(group);
  free(bytes);
  return 0;
}

/* The trace draws fs_train_segments: per stage a process with a compute
 * and a TP/EP thread, the pipeline sends and DP collectives as async
 * slices (their ids the segments' own), then the link groups. */
/* One job's processes (its pipeline stages, pids from pid0) and slices.
 * prefix names the job in a cluster ("" alone); id_base keeps its async
 * ids apart from the other jobs'. */
static int job_trace(fs_trace *t, const fs_job *job, const fs_train *tr, int pid0,
                     const char *prefix, long id_base) {
  fs_train_segment *seg = NULL;
  int64_t n = 0;
  int rc = fs_train_segments(tr, &seg, &n);
  if (rc) return rc;
  char name[400];
  int32_t p = fs_train_stages(tr);
  int64_t k = 0;
  for (int32_t s = 0; s < p; s++) {
    snprintf(name, sizeof(name), "%sstage %d (dp 0, tp 0..%d)", prefix, s, (int)job->par.tp - 1);
    fs_trace_process(t, pid0 + s, name, pid0 + s);
    fs_trace_thread(t, pid0 + s, 1, "compute", 1);
    fs_trace_thread(t, pid0 + s, 2, "tensor / expert parallel", 2);
    for (; k < n && seg[k].stage == s && seg[k].kind <= FS_TRAIN_SEG_EP; k++) {
      const fs_train_segment *g = &seg[k];
      if (g->kind == FS_TRAIN_SEG_TP) {
        fs_trace_slice(t, pid0 + s, 2, "TP", "tp", g->start_s, g->dur_s);
      } else if (g->kind == FS_TRAIN_SEG_EP) {
        fs_trace_slice(t, pid0 + s, 2, "EP all-to-all", "ep", g->start_s, g->dur_s);
      } else {
        int bwd = g->kind == FS_TRAIN_SEG_BWD;
        snprintf(name, sizeof(name), "%s mb%d chunk%d", bwd ? "B" : "F", g->mb, g->chunk);
        fs_trace_slice(t, pid0 + s, 1, name, bwd ? "backward" : "forward", g->start_s, g->dur_s);
      }
    }
  }
  for (; k < n; k++) {
    const fs_train_segment *g = &seg[k];
    if (g->kind == FS_TRAIN_SEG_PP) {
      fs_trace_async(t, pid0 + g->stage, "send", "pipeline sends (tp 0)", id_base + (long)g->id,
                     g->start_s, g->dur_s);
    } else {
      snprintf(name, sizeof(name), "gradients %.3g MB", g->bytes / 1e6);
      fs_trace_async(t, pid0 + g->stage, name, "data parallel (tp 0 rail)",
                     id_base + (long)(1000000 + g->id), g->start_s, g->dur_s);
    }
  }
  free(seg);
  return 0;
}

int fs_report_cluster_trace(FILE *f, fs_job *const *jobs, const fs_train *const *trs,
                            int32_t n) {
  fs_trace t;
  fs_trace_begin(&t, f);
  int rc = 0, pid = 0;
  char prefix[320] = "";
  for (int32_t j = 0; j < n && !rc; j++) {
    if (n > 1) snprintf(prefix, sizeof(prefix), "job %d (%s): ", j + 1, jobs[j]->file);
    /* (ids apart by 2^32 per job: a job's ids are below 2^31) */
    rc = job_trace(&t, jobs[j], trs[j], pid, prefix, (long)j << 32);
    pid += fs_train_stages(trs[j]);
  }
  if (!rc && n > 0) {
    fs_trace_process(&t, pid, n > 1 ? "network (link groups; every job's traffic)"
                                    : "network (link groups)", pid);
    rc = link_util_tracks(&t, fs_train_sim(trs[0]), pid);
  }
  int rc2 = fs_trace_end(&t);
  return rc ? rc : rc2;
}

int fs_report_train_trace(FILE *f, const fs_job *job, const fs_train *tr) {
  fs_job *jobs[1] = {(fs_job *)job};
  return fs_report_cluster_trace(f, jobs, &tr, 1);
}

int fs_report_cluster_text(FILE *f, fs_job *const *jobs, int32_t n, const fs_train_result *res) {
  int rc = 0;
  fs_train_result all;
  memset(&all, 0, sizeof(all));
  for (int32_t k = 0; k < n && !rc; k++) {
    fprintf(f, "%s== job %d of %d: %s (cluster GPUs %lld-%lld) ==\n", k ? "\n" : "", k + 1, n,
            jobs[k]->file, (long long)jobs[k]->gpu_offset,
            (long long)(jobs[k]->gpu_offset + fs_job_gpus(jobs[k]) - 1));
    rc = fs_report_train_text(f, jobs[k], &res[k]);
    all.flows += res[k].flows;
    all.flows_represented += res[k].flows_represented;
    all.tasks += res[k].tasks;
  }
  if (rc || n < 1) return rc;
  all.counters = res[0].counters; /* (the one simulation's: the same in every result) */
  all.wall_s = res[0].wall_s;
  all.peak_rss_bytes = res[0].peak_rss_bytes;
  fprintf(f, "\n== the cluster's simulation (%d jobs) ==\n", n);
  engine_line(f, "engine:             ", &all);
  return ferror(f) ? FS_EIO : 0;
}

int fs_report_cluster_json(FILE *f, fs_job *const *jobs, int32_t n, const fs_train_result *res) {
  int rc = 0;
  fprintf(f, "{\"jobs\":[");
  for (int32_t k = 0; k < n && !rc; k++) {
    if (k) fprintf(f, ",");
    rc = fs_report_train_json(f, jobs[k], &res[k]);
  }
  fprintf(f, "]}\n");
  return rc ? rc : ferror(f) ? FS_EIO : 0;
}
