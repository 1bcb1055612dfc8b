/* Several jobs on one cluster (train.h, fs_cluster): each job's DAG is
 * built into one shared simulation, placed in its own servers, with the
 * first job's routing control watching all of them; run together, then
 * (with control) again without it for the comparison. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train_internal.h"

struct fs_cluster {
  fs_job **jobs;
  int32_t n;
  fs_train_opts opts;
  fs_sim *sim;
  fs_train **trs;
  fs_netctl *ctl;
  double build_s; /* building the jobs into the one simulation */
};


/* Builds the jobs into one simulation; with_ctl attaches the first job's
 * routing control. */
static int cluster_build(fs_cluster *c, int with_ctl, fs_err *err) {
  const fs_job *j0 = c->jobs[0];
  int rc = fs_sim_new(j0->topo, &c->sim, err);
  if (!rc) rc = fs_sim_set_transport(c->sim, &j0->transport, err);
  for (int32_t k = 0; k < c->n && !rc; k++)
    rc = fs__train_new(c->jobs[k], &c->opts, 0, c->sim, &c->trs[k], err);
  if (!rc && with_ctl && !c->opts.free_comm && (j0->reopt_interval_s > 0 || j0->n_failures > 0)) {
    fs_netctl_opts co;
    fs__train_ctl_opts(j0, &co);
    rc = fs_netctl_new(c->sim, &co, &c->ctl, err);
  }
  return rc;
}

static void cluster_clear(fs_cluster *c) {
  fs_netctl_free(c->ctl);
  c->ctl = NULL;
  for (int32_t k = 0; k < c->n; k++) {
    fs_train_free(c->trs[k]);
    c->trs[k] = NULL;
  }
  fs_sim_free(c->sim);
  c->sim = NULL;
}

static int same_routing(const fs_job *a, const fs_job *b) {
  if (a->mode != b->mode || a->seed != b->seed || a->reopt_interval_s != b->reopt_interval_s ||
      a->reopt_reconfig_s != b->reopt_reconfig_s || a->detect_s != b->detect_s ||
      (a->reopt_interval_s > 0 && a->reopt_optimizer != b->reopt_optimizer) ||
      a->n_failures != b->n_failures || memcmp(&a->transport, &b->transport, sizeof(a->transport)))
    return 0;
  for (int32_t i = 0; i < a->n_failures; i++)
    if (a->failures[i].link != b->failures[i].link || a->failures[i].at_s != b->failures[i].at_s)
      return 0;
  return 1;
}

int fs_cluster_new(fs_job *const *jobs, int32_t n, const fs_train_opts *opts, fs_cluster **out,
                   fs_err *err) {
  if (n < 1) return fs_err_set(err, FS_EINVAL, "a cluster needs at least one job");
  const fs_job *j0 = jobs[0];
  int64_t G = j0->hw.gpus_per_node, next = 0;
  for (int32_t k = 0; k < n; k++) {
    const fs_job *j = jobs[k];
    if (!j->topo || strcmp(j->topo->spec, j0->topo->spec) != 0)
      return fs_err_set(err, FS_EINVAL,
                        "%s: $.topology: jobs sharing a cluster need the same topology, and "
                        "this one differs from %s's (%s)",
                        j->file, j0->file, j0->topo->spec);
    if (j->hw.gpus_per_node != G)
      return fs_err_set(err, FS_EINVAL,
                        "%s: $.hardware.gpus_per_node: must be %lld as in %s (one cluster, one "
                        "server size), got %lld",
                        j->file, (long long)G, j0->file, (long long)j->hw.gpus_per_node);
    if (j->hw.nvlink_eff != j0->hw.nvlink_eff)
      return fs_err_set(err, FS_EINVAL,
                        "%s: $.hardware.nvlink_efficiency: must be %g as in %s (one cluster, "
                        "one NVLink), got %g",
                        j->file, j0->hw.nvlink_eff, j0->file, j->hw.nvlink_eff);
    if (!same_routing(j, j0))
      return fs_err_set(err, FS_EINVAL,
                        "%s: $.routing: the cluster's routing, failures and transport are %s's; "
                        "give every job the same \"routing\", \"failures\" and \"transport\"",
                        j->file, j0->file);
  }
  /* Whole servers, one job after another. */
  for (int32_t k = 0; k < n; k++) {
    jobs[k]->gpu_offset = next;
    next += (fs_job_gpus(jobs[k]) + G - 1) / G * G;
    if (next > j0->topo->n_hosts)
      return fs_err_set(err, FS_EINVAL,
                        "%s: the jobs up to this one need %lld GPUs (in whole servers of %lld), "
                        "more than the topology's %d hosts",
                        jobs[k]->file, (long long)next, (long long)G, j0->topo->n_hosts);
    int rc = fs_job_place(jobs[k], NULL, err);
    if (rc) return rc;
  }
  fs_cluster *c = calloc(1, sizeof(*c));
  fs_train **trs = calloc((size_t)n, sizeof(*trs));
  if (!c || !trs) {
    free(c);
    free(trs);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  c->jobs = (fs_job **)jobs;
  c->n = n;
  c->trs = trs;
  if (opts) c->opts = *opts;
  double t0 = fs__now_s();
  int rc = cluster_build(c, 1, err);
  c->build_s = fs__now_s() - t0;
  if (rc) {
    fs_cluster_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

int fs_cluster_run(fs_cluster *c, fs_train_result *results, fs_err *err) {
  for (int32_t k = 0; k < c->n; k++) memset(&results[k], 0, sizeof(results[k]));
  double t0 = fs__now_s();
  int rc = fs_sim_run(c->sim, c->opts.sim, err);
  double wall = c->build_s + fs__now_s() - t0;
  for (int32_t k = 0; k < c->n && !rc; k++) {
    rc = fs__train_collect(c->trs[k], &results[k], err);
    if (!rc && c->ctl) fs_netctl_stats_get(c->ctl, &results[k].ctl);
    results[k].wall_s = wall; /* (the one simulation's, as its counters) */
    results[k].cluster_jobs = c->n;
  }
  if (rc || !c->ctl) return rc;
  /* The same cluster without routing control, for the comparison. */
  fs_cluster b = {c->jobs, c->n, c->opts, NULL, NULL, NULL, 0};
  b.opts.sim = NULL;
  b.trs = calloc((size_t)c->n, sizeof(*b.trs));
  if (!b.trs) return fs_err_set(err, FS_ENOMEM, "out of memory");
  if (!(rc = cluster_build(&b, 0, err)) && !(rc = fs_sim_run(b.sim, NULL, err)))
    for (int32_t k = 0; k < c->n; k++)
      results[k].baseline_iter_s = fs__train_iteration_times(b.trs[k], NULL, NULL);
  cluster_clear(&b);
  free(b.trs);
  return rc;
}

const fs_train *fs_cluster_job(const fs_cluster *c, int32_t k) { return c->trs[k]; }

void fs_cluster_free(fs_cluster *c) {
  if (!c) return;
  cluster_clear(c);
  free(c->trs);
  free(c);
}
