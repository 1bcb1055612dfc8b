/* fabricsim train's orchestration (train.h): a job's iteration is built
 * (symmetry, TP set-up, the DAG: train_symm.c, train_alone.c,
 * train_lower.c), run, and its results collected (train_result.c); several
 * jobs on one cluster are cluster.c's. This file owns the fs_train's life:
 * its options, its build with the retries the symmetry asks for, its run,
 * its free. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "train_internal.h"

/* Refuses up front (opts.max_memory_bytes) an iteration whose expert
 * all-to-alls alone, lowered as flows (comm all), need more: a lower bound
 * of its flows, counted as group_colls lowers them (every op's MoE layers,
 * dispatch and combine, twice with recomputation, per simulated EP group
 * and lane, each all-to-all's flows by fs_coll_flows_estimate), so what
 * it refuses could not have fit. Lowered lazily (plan instances) they hold
 * only the flows in flight: nothing to refuse from their count. */
static int fits(const fs_train *tr, fs_err *err) {
  const fs_job *job = tr->job;
  double lim = tr->opts.max_memory_bytes;
  int all = tr->opts.comm == FS_COMM_ALL && !tr->fabric_free && !tr->opts.free_comm;
  int32_t ep = (int32_t)job->par.ep;
  if (!(lim > 0) || !all || ep < 2 || tr->lazy) return 0;
  fs_coll_params q;
  fs_coll_params_init(&q);
  q.op = FS_COLL_ALLTOALL;
  q.algo = job->par.algo[FS_PAR_EP] == FS_ALGO_AUTO ? FS_ALGO_DIRECT : job->par.algo[FS_PAR_EP];
  q.bytes = 1;
  int64_t per = fs_coll_flows_estimate(&q, ep);
  if (per <= 0) return 0;
  double a2a = 0;
  for (int32_t s = 0; s < tr->p; s++)
    for (int32_t i = 0; i < tr->n_ops; i++) {
      const fs_pipe_op *o = &tr->order[(size_t)s * tr->n_ops + i];
      if (o->part != FS_PIPE_WEIGHT_GRAD)
        a2a += (double)op_alltoalls(tr, o->chunk * tr->p + s, o->backward);
    }
  double groups = ceil((double)tr->ds / ep), lanes = ceil((double)(tr->t * tr->c) / tr->lane_step);
  double flows = a2a * groups * lanes * (double)per * tr->iterations, GiB = 1024.0 * 1024 * 1024;
  if (flows * FS_SIM_FLOW_BYTES <= lim) return 0;
  return fs_err_set(err, FS_EINVAL,
                    "%s: the iteration lowers at least %.4g flows for its expert all-to-alls "
                    "(%d ranks each, as flows under --comm all), about %.1f GiB at %.0f B a "
                    "flow: more than the %.2f GiB this run may use (--max-memory SIZE; "
                    "--comm isolated times them alone)",
                    job->file, flows, ep, flows * FS_SIM_FLOW_BYTES / GiB, FS_SIM_FLOW_BYTES,
                    lim / GiB);
}

void fs__train_ctl_opts(const fs_job *job, fs_netctl_opts *co) {
  fs_netctl_opts_init(co);
  co->mode = job->mode;
  co->seed = job->seed;
  co->interval_s = job->reopt_interval_s;
  co->optimizer = job->reopt_optimizer;
  co->reconfig_s = job->reopt_reconfig_s;
  co->failures = job->failures;
  co->n_failures = job->n_failures;
  co->detect_s = job->detect_s;
}

/* shared: build into that simulation (a cluster's), else into a new one. */
static int train_build(const fs_job *job, const fs_train_opts *opts, int fabric_free,
                       fs_sim *shared, int32_t min_shift, int no_rotation, fs_train **out,
                       fs_err *err) {
  fs_train *tr = calloc(1, sizeof(*tr));
  if (!tr) return fs_err_set(err, FS_ENOMEM, "out of memory");
  tr->job = job;
  tr->min_shift = min_shift;
  tr->no_rotation = no_rotation;
  if (opts) tr->opts = *opts;
  tr->fabric_free = fabric_free;
  /* (a transport model, routing control or a cluster's shared simulation
   * need every flow as an item of the simulation) */
  int ocs = job->ocs.ports > 0 && !fabric_free && !tr->opts.free_comm;
  tr->lazy = !tr->opts.keep_flows && !shared && job->transport.kind == FS_TRANSPORT_FLUID &&
             !(job->reopt_interval_s > 0 || job->n_failures > 0) && !ocs;
  tr->last_qc = NULL;
  tr->p = (int32_t)job->par.pp;
  tr->d = (int32_t)job->par.dp;
  tr->t = (int32_t)job->par.tp;
  tr->c = (int32_t)job->par.cp;
  tr->v = (int32_t)job->par.virtual_stages;
  tr->m = (int32_t)fs_work_microbatches(job);
  tr->V = tr->p * tr->v;
  tr->n_ops = fs_pipe_ops_per_device(job->par.schedule, tr->m, tr->v);
  for (int k = 0; k < FS_PAR_N; k++) tr->kinds[k].algo = job->par.algo[k];
  int rc = 0;
  if (!job->topo) {
    rc = fs_err_set(err, FS_EINVAL, "%s: the job has no topology", job->file);
    goto fail;
  }
  size_t gpus = (size_t)fs_job_gpus(job), devs = (size_t)tr->p * tr->d, n = (size_t)tr->n_ops;
  tr->host_of_gpu = fs__malloc(gpus, sizeof(int32_t));
  tr->order = fs__malloc((size_t)tr->p * n, sizeof(fs_pipe_op));
  tr->ops = fs__malloc(devs * n, sizeof(op_items));
  tr->op_index = fs__malloc((size_t)tr->p * 2 * tr->m * tr->v, sizeof(int32_t));
  /* (the weights' all-gathers overlapped with the next forward need a
   * next iteration: two by default, the second reported) */
  tr->iterations = tr->opts.iterations > 0          ? tr->opts.iterations
                   : job->par.overlap_param_gather ? 2
                                                   : 1;
  tr->gate = fs__malloc(devs, sizeof(int32_t));
  tr->tp_fwd_s = fs__malloc((size_t)tr->V, sizeof(double));
  tr->tp_bwd_s = fs__malloc((size_t)tr->V, sizeof(double));
  tr->iter_hi = fs__malloc((size_t)tr->iterations, sizeof(int32_t));
  if (!tr->host_of_gpu || !tr->order || !tr->ops || !tr->op_index || !tr->gate || !tr->iter_hi ||
      !tr->tp_fwd_s || !tr->tp_bwd_s) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory building the iteration");
    goto fail;
  }
  if ((rc = fs_job_place(job, tr->host_of_gpu, err))) goto fail;
  for (int32_t s = 0; s < tr->p; s++) {
    if ((rc = fs_pipe_order(job->par.schedule, tr->p, tr->m, tr->v, s, tr->order + (size_t)s * n,
                            err)))
      goto fail;
    for (int32_t i = 0; i < tr->n_ops; i++) {
      const fs_pipe_op *o = &tr->order[(size_t)s * n + i];
      /* (a W depends on its B only, on the same device: not indexed) */
      if (o->part != FS_PIPE_WEIGHT_GRAD) tr->op_index[idx3(tr, s, o->backward, o->mb, o->chunk)] = i;
    }
  }
  tr->own_sim = !shared;
  tr->sim = shared;
  double w0 = fs__now_s();
  if (ocs && shared) {
    rc = fs_err_set(err, FS_EINVAL, "%s: $.ocs: an OCS layer in a cluster of several jobs: not "
                    "modelled (run the job alone)", job->file);
    goto fail;
  }
  /* (the simulation runs on the topology with the OCS layer's links; routes
   * are found on the job's own, whose link ids they keep) */
  if (ocs && (rc = fs_ocsctl_topo(job->topo, &job->ocs, &tr->ocs_topo, err))) goto fail;
  if ((!shared && ((rc = fs_sim_new(ocs ? tr->ocs_topo : job->topo, &tr->sim, err)) ||
                   (rc = fs_sim_set_transport(tr->sim, &job->transport, err)))) ||
      (rc = fs_router_new(job->topo, &tr->router, err)) ||
      (rc = fs_route_cache_new(tr->router, job->mode, job->seed, 0x70, &tr->routes, err)) ||
      (rc = fs_coll_tuner_new2(job->topo, job->mode, job->seed, tr->opts.tune, &tr->tuner, err)) ||
      (tr->lane_step = 1, tr->rails = tr->t, tr->ds = tr->d, tr->orbit = 1,
       rc = fs__train_tp_setup(tr, err)) ||
      (rc = fs__train_symm_setup(tr, shared != NULL, err)) || (rc = fits(tr, err)) ||
      (tr->item_lo = fs_sim_n_items(tr->sim), rc = fs__train_build_iterations(tr, err)))
    goto fail;
  tr->item_hi = fs_sim_n_items(tr->sim);
  tr->build_wall_s = fs__now_s() - w0;
  if (!shared && !fabric_free && !tr->opts.free_comm &&
      (job->reopt_interval_s > 0 || job->n_failures > 0)) {
    fs_netctl_opts co;
    fs__train_ctl_opts(job, &co);
    if ((rc = fs_netctl_new(tr->sim, &co, &tr->ctl, err))) goto fail;
  }
  if (ocs && (rc = fs_ocsctl_new(tr->sim, job->topo->n_links, &job->ocs, &tr->ocs, err)))
    goto fail;
  *out = tr;
  return 0;
fail:
  if (rc == 1 && (tr->rot_refused || tr->shift_refused)) {
    /* A collective is not invariant under a generator: a TP collective
     * lowered as flows under R (the same build without R), or a gradient
     * collective under this shift (try the larger ones: a node-aware ring's
     * snake holds under a shift of two servers, not one; then none). Each
     * try is at most one more build, and there are at most d / ep shift
     * candidates. */
    int rot = tr->rot_refused;
    int32_t next_min = rot ? min_shift : tr->shift_g;
    char note[240];
    snprintf(note, sizeof(note), "%s", tr->symm_note);
    fs_train_free(tr);
    rc = train_build(job, opts, fabric_free, shared, next_min, no_rotation || rot, out, err);
    if (rc) return rc;
    char *said = (*out)->symm_note;
    if (!rot && (*out)->shift_g)
      snprintf(said, sizeof((*out)->symm_note), "smaller %.200s", note);
    else if (rot ? !said[0] : !strstr(said, "replica shift refused"))
      snprintf(said, sizeof((*out)->symm_note), "%s", note);
    return 0;
  }
  fs_train_free(tr);
  return rc;
}

int fs__train_new(const fs_job *job, const fs_train_opts *opts, int fabric_free, fs_sim *shared,
                  fs_train **out, fs_err *err) {
  return train_build(job, opts, fabric_free, shared, 0, 0, out, err);
}

int fs_train_new(const fs_job *job, const fs_train_opts *opts, fs_train **out, fs_err *err) {
  return fs__train_new(job, opts, 0, NULL, out, err);
}

void fs_train_free(fs_train *tr) {
  if (!tr) return;
  fs_netctl_free(tr->ctl);
  fs_ocsctl_free(tr->ocs);
  fs_coll_tuner_free(tr->tuner);
  if (tr->own_sim) fs_sim_free(tr->sim); /* before the routes its flows borrow */
  fs_topo_free(tr->ocs_topo);
  fs_route_cache_free(tr->routes);
  fs_router_free(tr->router);
  for (size_t i = 0; i < tr->n_qc; i++) fs__qcoll_free(tr->qc[i]);
  for (size_t i = 0; i < tr->n_kcache; i++) fs_route_cache_free(tr->kcache[i].routes);
  free(tr->kcache);
  FS__FREE_ALL(tr->qc, tr->host_of_gpu, tr->order, tr->ops, tr->op_index, tr->gate, tr->iter_hi,
               tr->dp, tr->dp_marks, tr->dp_last, tr->pg, tr->pg_ranges, tr->pp, tr->times);
  fs_symm_free(tr->symm);
  FS__FREE_ALL(tr->tp_fwd_s, tr->tp_bwd_s, tr->tp_dev_f, tr->tp_dev_b, tr->tp_dev_nf, tr->tp_dev_nb,
               tr->sigs, tr);
}

const char *fs_train_comm_name(fs_train_comm c) {
  return c == FS_COMM_ISOLATED ? "isolated" : "all";
}

int fs_train_comm_parse(const char *name, fs_train_comm *out) {
  if (!strcmp(name, "all"))
    *out = FS_COMM_ALL;
  else if (!strcmp(name, "isolated"))
    *out = FS_COMM_ISOLATED;
  else
    return FS_EINVAL;
  return 0;
}

int fs_train_run(fs_train *tr, fs_train_result *out, fs_err *err) {
  memset(out, 0, sizeof(*out));
  if (!tr->own_sim)
    return fs_err_set(err, FS_EINVAL, "%s: part of a cluster: run the cluster", tr->job->file);
  double w0 = fs__now_s();
  int rc = fs_sim_run(tr->sim, tr->opts.sim, err);
  double run_s = fs__now_s() - w0;
  if (rc) return rc;
  rc = fs__train_collect(tr, out, err);
  out->wall_s = tr->build_wall_s + run_s;
  return rc;
}

const fs_sim *fs_train_sim(const fs_train *tr) { return tr->sim; }

const fs_ocsctl *fs_train_ocs(const fs_train *tr) { return tr->ocs; }

int32_t fs_train_stages(const fs_train *tr) { return tr->p; }
