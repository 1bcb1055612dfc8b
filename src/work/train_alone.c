/* Collectives timed alone: TP, EP, ZeRO-3 and CP communication whose
 * duration an op takes from a simulation of that collective by itself
 * (comm isolated, or where a shortcut is exact), cached per distinct
 * (operation, algorithm, bytes, group); and the TP set-up that decides how
 * TP is simulated (private NVLink links, a star, or flows). A cache entry
 * per distinct collective: tens, not one per op. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim/compute.h"
#include "train_internal.h"

int fs__train_coll_time(fs_train *tr, fs_coll_op op, fs_coll_algo algo, double bytes,
                        const int32_t *hosts, int32_t p, int32_t group_key, double *out,
                        fs_err *err) {
  tr->last_flows = 0;
  if (p < 2 || bytes <= 0 || tr->opts.free_comm) {
    *out = 0;
    return 0;
  }
  for (size_t i = 0; i < tr->n_times; i++) {
    const cached_time *c = &tr->times[i];
    if (c->op == op && c->bytes == bytes && c->group_key == group_key && c->algo_asked == algo) {
      *out = c->time_s;
      tr->last_algo = c->algo;
      tr->last_flows = c->flows;
      return 0;
    }
  }
  fs_coll_params prm;
  fs_coll_params_init(&prm);
  prm.op = op;
  prm.algo = algo;
  prm.bytes = bytes;
  fs_coll_result res;
  int rc;
  int nccl = algo == FS_ALGO_AUTO && tr->opts.tune == FS_TUNE_NCCL;
  if (!hosts) {
    fs_topo *star = NULL;
    int32_t *ids = malloc((size_t)p * sizeof(int32_t));
    if (!ids) return fs_err_set(err, FS_ENOMEM, "out of memory");
    for (int32_t i = 0; i < p; i++) ids[i] = i;
    fs_coll_group g = {p, ids};
    rc = fs_topo_star(p, tr->job->hw.nvlink_gbps, NVLINK_HOP_NS, &star, err);
    if (!rc && nccl) rc = fs_coll_nccl_choose(star, &prm, &g, &prm.algo, NULL, NULL, err);
    if (!rc)
      rc = fs_coll_run2(star, FS_ROUTE_SHORTEST, 1, &tr->job->transport, &prm, &g, &res, err);
    fs_topo_free(star);
    free(ids);
  } else {
    fs_coll_group g = {p, hosts};
    /* (the NVLink star above has no servers to step between) */
    if (tr->job->hw.nccl_step_latency) rc = fs__train_choose_algo(tr, &prm, &g, err);
    else rc = nccl ? fs_coll_nccl_choose(tr->job->topo, &prm, &g, &prm.algo, NULL, NULL, err) : 0;
    if (!rc)
      rc = fs_coll_run2(tr->job->topo, tr->job->mode, tr->job->seed, &tr->job->transport, &prm, &g,
                        &res, err);
  }
  if (rc) return rc;
  if (fs__grow(&tr->times, &tr->times_cap, tr->n_times + 1, sizeof(*tr->times)))
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  tr->times[tr->n_times++] =
      (cached_time){op, algo, bytes, group_key, res.time_s, res.algo, res.flows};
  tr->last_algo = res.algo;
  tr->last_flows = res.flows;
  *out = res.time_s;
  return 0;
}

/* TP seconds per op of one chunk in a pass on the group `hosts` (NULL: an
 * NVLink star): its collectives (docs/model-work.md counts them) times
 * their time simulated alone (cached under key), or with the framework's
 * tp_overlap what they leave exposed beside their GEMMs; and the flows
 * those simulations had (*flows, what the op's TP stands for). */
static int tp_seconds_on(fs_train *tr, fs_work_pass pass, const int32_t *hosts, int32_t key,
                         int64_t chunk_layers, double *out, int64_t *flows_out, fs_err *err) {
  const fs_job *job = tr->job;
  int n = fs_work_tp_colls_per_layer(job, pass);
  double layers = (double)chunk_layers, bytes = fs_work_tp_bytes(job), t1, t2;
  fs_coll_algo a = job->par.algo[FS_PAR_TP];
  int rc;
  int64_t flows;
  if (job->par.sequence_parallel) { /* (with fp8_comm the all-gathers in FP8) */
    if ((rc = fs__train_coll_time(tr, FS_COLL_ALLGATHER, a, bytes * fs_work_fp8_gather_share(job),
                                  hosts, tr->t, key, &t1, err)))
      return rc;
    flows = tr->last_flows;
    if ((rc =
             fs__train_coll_time(tr, FS_COLL_REDUCESCATTER, a, bytes, hosts, tr->t, key, &t2, err)))
      return rc;
    *out = job->hw.tp_overlap ? layers * fs_compute_tp_overlap_exposed_s(job, pass, t1, t2)
                              : layers * n / 2.0 * (t1 + t2);
    *flows_out = (int64_t)(layers * n / 2.0) * (flows + tr->last_flows);
  } else {
    if ((rc = fs__train_coll_time(tr, FS_COLL_ALLREDUCE, a, bytes, hosts, tr->t, key, &t1, err)))
      return rc;
    *out = layers * n * t1;
    *flows_out = (int64_t)(layers * n) * tr->last_flows;
  }
  if (tr->t > 1 && n > 0) tr->kinds[FS_PAR_TP].algo = tr->last_algo;
  return 0;
}

int fs__train_tp_seconds(fs_train *tr, fs_work_pass pass, int64_t chunk_layers, double *out,
                         fs_err *err) {
  int64_t flows;
  return tp_seconds_on(tr, pass, NULL, 0, chunk_layers, out, &flows, err);
}

int fs__train_ep_seconds(fs_train *tr, int32_t vs, int32_t r, int backward, double *out,
                         fs_err *err) {
  const fs_job *job = tr->job;
  *out = 0;
  int64_t first, per = vs_layers(tr, vs, &first);
  int64_t moe = fs_work_moe_layers(&job->model, first, per);
  int32_t ep = (int32_t)job->par.ep;
  if (!moe || ep < 2) return 0;
  int32_t hosts[4096], stage = vs % tr->p, base = (r / ep) * ep;
  if (ep > 4096) return fs_err_set(err, FS_EINVAL, "ep > 4096 is not supported");
  for (int32_t e = 0; e < ep; e++) hosts[e] = host(tr, 0, base + e, stage);
  double t1;
  int rc =
      fs__train_coll_time(tr, FS_COLL_ALLTOALL, job->par.algo[FS_PAR_EP],
                          fs_work_ep_bytes(job) * fs_work_fp8_share(job, FS_PAR_EP), hosts, ep,
                          1 + gpu_of(tr, 0, base, stage), &t1, err);
  if (rc) return rc;
  if (t1 > 0) tr->kinds[FS_PAR_EP].algo = tr->last_algo;
  *out = (double)op_alltoalls(tr, vs, backward) * t1;
  return 0;
}

int fs__train_z3_seconds(fs_train *tr, int32_t s, int32_t r, int backward, double *out,
                         fs_err *err) {
  const fs_job *job = tr->job;
  *out = 0;
  int32_t N = tr->d * tr->c;
  if (fs_work_zero_stage(job) < 3 || N < 2) return 0;
  fs_work_shard sh;
  fs_work_stage_params(job, s, &sh);
  double bytes = (double)(sh.dense + sh.expert) * (double)job->model.dtype_bytes / tr->v;
  int32_t *hosts = malloc((size_t)N * sizeof(int32_t));
  if (!hosts) return fs_err_set(err, FS_ENOMEM, "out of memory");
  int32_t n = N, key = 1 + gpu_of(tr, 0, 0, s);
  if (backward && job->par.zpp_hpz) { /* the secondary copy, inside the server */
    n = hpz_members(tr, 0, r, s, hosts);
    key = -1 - gpu_of(tr, 0, r, s); /* its own group: keys apart from the whole group's */
  } else {
    for (int32_t k = 0; k < N; k++) hosts[k] = host_dpcp(tr, 0, k, s);
    if (job->par.zpp_qwz) bytes /= (double)job->model.dtype_bytes; /* int8 */
  }
  int rc = n < 2 ? 0
                 : fs__train_coll_time(tr, FS_COLL_ALLGATHER, job->par.algo[FS_PAR_DP], bytes,
                                       hosts, n, key, out, err);
  free(hosts);
  return rc;
}

/* 1 if no flow of the simulation other than a device's own TP collectives
 * can cross its TP GPUs' scale-up links (so those collectives, alone on
 * their links, take exactly the time they take simulated alone there):
 * every TP group inside one server of a topology that models servers,
 * and no other kind of traffic between two GPUs of one server (GPUs never
 * forward, so only such pairs use a GPU's scale-up links), and no failure
 * of a scale-up cable. Conservative: any pipeline neighbour pair, any two
 * members of a data-parallel group (which holds the EP and ZeRO groups). */
static int tp_private_ok(const fs_train *tr) {
  const fs_topo *t = tr->job->topo;
  int32_t G = t->gpus_per_node;
  if (G < 2 || t->scaleup0 < 0) return 0;
  for (int32_t i = 0; i < tr->job->n_failures; i++) {
    const fs_link *l = &t->links[tr->job->failures[i].link];
    if (t->nodes[l->from].kind == FS_NODE_SCALEUP || t->nodes[l->to].kind == FS_NODE_SCALEUP)
      return 0;
  }
  /* stamp[server] = the last (stage, rail) group that had a member there */
  int32_t servers = t->n_hosts / G, ok = 1;
  int64_t *stamp = fs__malloc((size_t)servers, sizeof(int64_t));
  if (!stamp) return 0;
  for (int32_t k = 0; k < servers; k++) stamp[k] = -1;
  /* (the dp x cp group of a TP rank holds its device's CP ranks, so a CP
   * ring inside a server also fails the stamp test) */
  for (int32_t s = 0; s < tr->p && ok; s++)
    for (int32_t j = 0; j < tr->t && ok; j++)
      for (int32_t k = 0; k < tr->d * tr->c && ok; k++) {
        int32_t h = host_dpcp(tr, j, k, s), sv = h / G;
        int64_t group = (int64_t)s * tr->t + j;
        if (sv != host_dpcp(tr, 0, k, s) / G) ok = 0; /* TP spans servers */
        if (tr->p > 1 && sv == host_dpcp(tr, j, k, (s + 1) % tr->p) / G) ok = 0;
        if (stamp[sv] == group) ok = 0; /* two DP/CP members in one server */
        stamp[sv] = group;
      }
  free(stamp);
  return ok;
}

/* Index of device (s, r)'s TP scale-up signature (per rank: capacity and
 * latency of its GPU's link up to the server's switch and back) in tr->sigs,
 * adding it if new: groups with equal signatures are isomorphic sub-networks
 * and so take equal times alone. */
static int tp_signature(fs_train *tr, int32_t s, int32_t r, int32_t c, int32_t *idx, fs_err *err) {
  const fs_topo *t = tr->job->topo;
  size_t w = (size_t)4 * tr->t;
  double sig[4 * 256];
  if (tr->t > 256) return fs_err_set(err, FS_EINVAL, "tp > 256 is not supported");
  for (int32_t j = 0; j < tr->t; j++) {
    int32_t h = host_lane(tr, j + tr->t * c, r, s), sw = t->scaleup0 + h / t->gpus_per_node;
    double *e = sig + 4 * j;
    e[0] = e[1] = e[2] = e[3] = -1;
    for (int32_t k = t->out_start[h]; k < t->out_start[h + 1]; k++) {
      const fs_link *l = &t->links[t->out_links[k]];
      if (l->to != sw) continue;
      e[0] = l->capacity_bps;
      e[1] = (double)l->latency_ns;
      e[2] = t->links[l->reverse].capacity_bps;
      e[3] = (double)t->links[l->reverse].latency_ns;
      break;
    }
  }
  for (size_t i = 0; i < tr->n_sigs; i++)
    if (!memcmp(tr->sigs + i * w, sig, w * sizeof(double))) {
      *idx = (int32_t)i;
      return 0;
    }
  if (fs__grow(&tr->sigs, &tr->sigs_cap, (tr->n_sigs + 1) * w, sizeof(double)))
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  memcpy(tr->sigs + tr->n_sigs * w, sig, w * sizeof(double));
  *idx = (int32_t)tr->n_sigs++;
  return 0;
}

int fs__train_tp_setup(fs_train *tr, fs_err *err) {
  int rc;
  if (tr->t < 2 || tr->opts.free_comm) {
    tr->tp_mode = TP_NONE;
    return 0;
  }
  const fs_topo *t = tr->job->topo;
  if (tr->opts.comm == FS_COMM_ISOLATED || tr->fabric_free ||
      (t->gpus_per_node < 2 && tr->job->hw.gpus_per_node > 1)) {
    tr->tp_mode = TP_STAR;
    return 0;
  }
  if (tr->opts.tp_flows || !tp_private_ok(tr)) {
    tr->tp_mode = TP_FLOWS;
    return 0;
  }
  tr->tp_mode = TP_PRIVATE;
  size_t devs = (size_t)tr->p * tr->d * tr->v;
  tr->tp_dev_f = fs__malloc(devs, sizeof(double));
  tr->tp_dev_b = fs__malloc(devs, sizeof(double));
  tr->tp_dev_nf = fs__malloc(devs, sizeof(int64_t));
  tr->tp_dev_nb = fs__malloc(devs, sizeof(int64_t));
  int32_t *hosts = fs__malloc((size_t)tr->t, sizeof(int32_t));
  if (!tr->tp_dev_f || !tr->tp_dev_b || !tr->tp_dev_nf || !tr->tp_dev_nb || !hosts) {
    free(hosts);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  rc = 0;
  for (int32_t s = 0; s < tr->p && !rc; s++)
    for (int32_t r = 0; r < tr->ds && !rc; r++) {
      int32_t sig, sig_c;
      for (int32_t j = 0; j < tr->t; j++) hosts[j] = host(tr, j, r, s);
      if ((rc = tp_signature(tr, s, r, 0, &sig, err))) break;
      /* every CP rank's TP group must be isomorphic to CP rank 0's */
      for (int32_t c = 1; c < tr->c && !rc; c++)
        if (!(rc = tp_signature(tr, s, r, c, &sig_c, err)) && sig_c != sig) {
          tr->tp_mode = TP_FLOWS;
          free(hosts);
          return 0;
        }
      if (rc) break;
      for (int32_t c = 0; c < tr->v && !rc; c++) {
        size_t k = ((size_t)s * tr->d + r) * tr->v + c;
        int64_t L = vs_layers(tr, c * tr->p + s, NULL), nf, nb, nr;
        double f, b, rec;
        if ((rc = tp_seconds_on(tr, FS_PASS_FWD, hosts, -1 - sig, L, &f, &nf, err)) ||
            (rc = tp_seconds_on(tr, FS_PASS_BWD, hosts, -1 - sig, L, &b, &nb, err)) ||
            (rc = tp_seconds_on(tr, FS_PASS_RECOMPUTE, hosts, -1 - sig, L, &rec, &nr, err)))
          break;
        tr->tp_dev_f[k] = f;
        tr->tp_dev_b[k] = b + rec;
        tr->tp_dev_nf[k] = nf;
        tr->tp_dev_nb[k] = nb + nr;
      }
    }
  free(hosts);
  return rc;
}

int fs__train_cp_seconds(fs_train *tr, fs_work_pass pass, int64_t layers, int32_t vs, double *out,
                         fs_err *err) {
  *out = 0;
  if (tr->c < 2 || tr->opts.free_comm || fs_work_cp_steps_per_layer(tr->job, pass) <= 0) return 0;
  for (int i = 0; i < tr->n_cp_alone; i++)
    if (tr->cp_alone[i].pass == (int)pass && tr->cp_alone[i].layers == layers) {
      *out = tr->cp_alone[i].time_s;
      return 0;
    }
  fs_sim *sim = NULL;
  int32_t end;
  int rc = fs_sim_new(tr->job->topo, &sim, err);
  if (!rc) rc = fs_sim_set_transport(sim, &tr->job->transport, err);
  if (!rc && tr->symm) rc = fs_sim_set_symmetry(sim, tr->symm, err);
  if (!rc) rc = fs__train_cp_ring(tr, sim, 0, 0, vs, pass, -1, &end, err);
  if (!rc) rc = fs_sim_run(sim, NULL, err);
  if (!rc) *out = fs_sim_makespan_s(sim);
  fs_sim_free(sim);
  if (!rc && tr->n_cp_alone < 8)
    tr->cp_alone[tr->n_cp_alone++] = (cp_time){(int)pass, layers, *out};
  return rc;
}
