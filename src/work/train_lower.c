/* The training iteration DAG (train.h) and its breakdown.
 *
 * Devices are (stage s, data-parallel rank r), index s * dp + r; each runs
 * the 2 m v ops of its pipeline order. An op is a compute task, then (if
 * any) a TP task and an EP task of durations measured once per distinct
 * collective by simulating it alone (cached), then its pipeline sends: one
 * flow per TP rank to the next (forward) or previous (backward) virtual
 * stage's device, which the receiving op waits for. Data-parallel gradient
 * reductions are collectives lowered into the same simulation (so they
 * contend with pipeline traffic), per model chunk, in up to max_buckets
 * buckets run one after another, per TP rank (rail).
 *
 * With comm "all" (train.h) the TP collectives are flows too, lowered after
 * the op's compute, unless the exact private-links shortcut applies; EP
 * all-to-alls and ZeRO-3 gathers couple the devices of their group, so a
 * device's op gets a zero-time gate task that waits for the group's
 * collective, lowered once every device of the group has built that op.
 *
 * Sizes: GPT-3 175B on 1024 GPUs is 128 devices x 384 ops, ~0.4 M pipeline
 * flows and ~0.25 M data-parallel flows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train_internal.h"

/* Pipeline sends of op (device s, r) to device (s2, r): one flow per TP
 * rank, each waiting for the op's end; returns them in flows[t]. */
static int pp_sends(fs_train *tr, int32_t s, int32_t s2, int32_t r, int32_t after, int32_t *flows,
                    fs_err *err) {
  double bytes = fs_work_pp_bytes(tr->job);
  for (int32_t j = 0; j < tr->t * tr->c; j += tr->lane_step) {
    int32_t src = host_lane(tr, j, r, s), dst = host_lane(tr, j, r, s2);
    const fs_route *route;
    int rc = fs_route_cache_get(tr->routes, src, dst, &route, err);
    if (rc) return rc;
    int32_t f = fs_sim_add_flow_ref(tr->sim, src, dst, bytes, 0, route, err);
    if (f < 0) return f;
    if ((rc = fs_sim_add_dep(tr->sim, after, f, err))) return rc;
    flows[j] = f;
    if (r == 0 && j < tr->t) {
      if (fs__grow(&tr->pp, &tr->pp_cap, tr->n_pp + 1, sizeof(*tr->pp)))
        return fs_err_set(err, FS_ENOMEM, "out of memory");
      tr->pp[tr->n_pp++] = (pp_flow){f, s, (uint8_t)(j < 255 ? j : 255)};
    }
  }
  return 0;
}

/* Template q on g's hosts as a plan instance (sim.h "plans"), routed by
 * routes; what it makes counted in lazy_flows/lazy_tasks. */
static int add_lazy(fs_train *tr, fs__qcoll *q, fs_route_cache *routes, const fs_coll_group *g,
                    const int32_t *after, int32_t n_after, int32_t *first, int32_t *done,
                    fs_err *err) {
  int64_t nf = 0, nt = 2;
  int rc = fs__qcoll_add_lazy(q, tr->sim, routes, g->hosts, after, n_after, first, done, &nf, &nt,
                              err);
  tr->lazy_flows += nf;
  tr->lazy_tasks += nt - 2; /* (its start and done are the simulation's) */
  tr->last_qc = q;
  tr->last_routes = routes;
  return rc;
}

/* The route cache fs_coll_lower makes for a collective of this key when
 * the job's routes are not shared (ECMP, Valiant: the key salts the hash),
 * kept for the run: a plan instance borrows its routes. */
static int keyed_routes(fs_train *tr, uint64_t key, fs_route_cache **out, fs_err *err) {
  for (size_t i = 0; i < tr->n_kcache; i++)
    if (tr->kcache[i].key == key) {
      *out = tr->kcache[i].routes;
      return 0;
    }
  if (fs__grow(&tr->kcache, &tr->kcache_cap, tr->n_kcache + 1, sizeof(*tr->kcache)))
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  int rc = fs_route_cache_new(tr->router, tr->job->mode, tr->job->seed, key, out, err);
  if (rc) return rc;
  tr->kcache[tr->n_kcache++] = (keyed_cache){key, *out};
  return 0;
}

/* The template of prm over g for shift (shift = g->p: every item kept, the
 * whole lowering), built on first use and kept for groups that sit alike.
 * 0; 1 when the shift is not an automorphism (err says why); or a code. */
static int find_template(fs_train *tr, const fs_coll_params *prm, const fs_coll_group *g,
                         int32_t shift, fs__qcoll **out, fs_err *err) {
  const fs_job *job = tr->job;
  /* A ring's lowering depends on how its ranks sit in servers (coll.h,
   * node-aware rings): a template serves only groups that sit alike. */
  int32_t G = prm->algo == FS_ALGO_RING ? fs_coll_ring_server_size(job->topo, g) : 0;
  if (G < 0) return fs_err_set(err, G, "out of memory");
  for (size_t i = 0; i < tr->n_qc; i++)
    if (fs__qcoll_matches(tr->qc[i], prm, g->p, G, shift)) {
      *out = tr->qc[i];
      return 0;
    }
  fs__qcoll *q = NULL;
  int rc = fs__qcoll_new(job->topo, tr->router, job->seed, prm, g, shift, &q, err);
  if (rc == FS_EINVAL) return 1;
  if (rc) return rc;
  if (fs__grow(&tr->qc, &tr->qc_cap, tr->n_qc + 1, sizeof(*tr->qc))) {
    fs__qcoll_free(q);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  tr->qc[tr->n_qc++] = q;
  *out = q;
  return 0;
}

/* Lowers one collective into the job's simulation after `after`: on the
 * replica-shift quotient when shift (in group members) > 0 (only the
 * representatives, from a template built once per distinct collective),
 * on the rail rotation's when shift is -1 (a TP group, R moving each rank
 * one on), else in full. A collective that is not invariant sets
 * shift_refused (rot_refused for R) and returns 1, so that train_new
 * rebuilds with a larger shift or none (without R). */
static int lower_coll(fs_train *tr, const fs_coll_params *prm, const fs_coll_group *g,
                      const int32_t *after, int32_t n_after, uint64_t key, int32_t shift,
                      int32_t *first, int32_t *done, fs_err *err) {
  /* shift -1: the rail rotation R over a TP group, a shift of one rank */
  int is_rot = shift < 0;
  if (is_rot) shift = 1;
  const fs_job *job = tr->job;
  int rc;
  tr->last_qc = NULL;
  if (shift > 0 && shift < g->p) {
    fs__qcoll *q = NULL;
    fs_err why = {0, ""};
    rc = find_template(tr, prm, g, shift, &q, &why);
    if (rc == 1) {
      *(is_rot ? &tr->rot_refused : &tr->shift_refused) = 1;
      snprintf(tr->symm_note, sizeof(tr->symm_note), "%s refused: %.180s",
               is_rot ? "rail rotation" : "replica shift", why.msg);
      return 1;
    }
    if (rc) return fs_err_set(err, rc, "%s", why.msg);
    if (!tr->lazy)
      return fs__qcoll_add(q, tr->sim, tr->routes, g->hosts, after, n_after, first, done, err);
    return add_lazy(tr, q, tr->routes, g, after, n_after, first, done, err);
  }
  if (tr->lazy) { /* the whole lowering as a plan: a template of every item */
    fs__qcoll *q = NULL;
    fs_route_cache *routes = fs__train_shared_routes(tr);
    if (!routes && (rc = keyed_routes(tr, key, &routes, err))) return rc;
    fs_err why = {0, ""};
    rc = find_template(tr, prm, g, g->p, &q, &why);
    if (rc < 0) return fs_err_set(err, rc, "%s", why.msg);
    /* (1: the lowering has items outside the group, e.g. recursive halving
     * and doubling's, which a plan in member terms cannot hold: eagerly) */
    if (rc == 0) return add_lazy(tr, q, routes, g, after, n_after, first, done, err);
  }
  fs_coll_lowering l;
  fs_coll_lowering_init(&l, tr->sim, tr->router, job->mode, job->seed);
  l.key = key;
  l.routes = fs__train_shared_routes(tr);
  l.after = after;
  l.n_after = n_after;
  if ((rc = fs_coll_lower(prm, g, &l, err))) return rc;
  *first = l.first_item;
  *done = l.done;
  return 0;
}

static int32_t dp_max_buckets(const fs_train *tr) {
  return tr->opts.max_buckets > 0 ? tr->opts.max_buckets : 4;
}

/* Gradient buckets of `bytes`: grad_bucket_bytes each, at most max_buckets. */
static int32_t dp_buckets(const fs_train *tr, double bytes) {
  int32_t maxb = dp_max_buckets(tr);
  int32_t nb = (int32_t)ceil(bytes / tr->job->par.grad_bucket_bytes);
  if (nb < 1) nb = 1;
  return nb > maxb ? maxb : nb;
}

/* Gradient bytes of one model chunk of stage s on one GPU. */
static double dp_chunk_bytes(const fs_train *tr, int32_t s) {
  fs_work_shard sh;
  fs_work_stage_params(tr->job, s, &sh);
  return (double)(sh.dense + sh.expert) * (double)tr->job->model.dtype_bytes / tr->v;
}

int fs__train_choose_algo(fs_train *tr, fs_coll_params *prm, const fs_coll_group *g,
                          fs_err *err) {
  fs_coll_proto proto = FS_PROTO_SIMPLE;
  if (prm->algo == FS_ALGO_AUTO) {
    int rc = tr->job->hw.nccl_step_latency
                 ? fs_coll_tuner_choose2(tr->tuner, prm, g, &prm->algo, &proto, NULL, err)
                 : fs_coll_tuner_choose(tr->tuner, prm, g, &prm->algo, NULL, err);
    if (rc) return rc;
  }
  if (tr->job->hw.nccl_step_latency)
    prm->step_latency_s = fs_coll_nccl_step_latency_s(prm->algo, proto);
  return 0;
}

/* Data-parallel collectives of `bytes` for stage s, per TP rank (rail), in
 * up to max_buckets buckets run one after another, each bucket doing ops[]
 * in order. Bucket b starts after the previous one and after marks[b *
 * n_after ..] (items of every dp device of the stage) for b < nb - 1 when
 * marks is given; the last bucket (every bucket without marks) after
 * `after`. */
static int dp_collectives(fs_train *tr, int32_t s, double bytes, const int32_t *after,
                          const int32_t *marks, int32_t n_after, const fs_coll_op *ops, int n_ops,
                          fs_err *err) {
  const fs_job *job = tr->job;
  int32_t N = tr->d * tr->c; /* the gradient group: dp x cp ranks */
  if (N < 2 || bytes <= 0 || n_ops == 0) return 0;
  int32_t nb = dp_buckets(tr, bytes);
  int32_t *deps = malloc(((size_t)n_after + 1) * sizeof(int32_t));
  if (!deps) return fs_err_set(err, FS_ENOMEM, "out of memory");
  int32_t *hosts = malloc((size_t)N * sizeof(int32_t));
  if (!hosts) {
    free(deps);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  int rc = 0;
  for (int32_t j = 0; j < tr->rails && !rc; j++) {
    for (int32_t k = 0; k < N; k++) hosts[k] = host_dpcp(tr, j, k, s);
    fs_coll_group g = {N, hosts};
    int32_t prev = -1;
    for (int32_t b = 0; b < nb && !rc; b++)
      for (int ph = 0; ph < n_ops && !rc; ph++) {
        /* what this phase waits for: the previous phase, and the first
         * phase of a bucket its gradients */
        int32_t nd = 0;
        if (prev >= 0) deps[nd++] = prev;
        if (ph == 0 && (prev < 0 || marks)) {
          const int32_t *ready = marks && b < nb - 1 ? marks + (size_t)b * n_after : after;
          for (int32_t r = 0; r < n_after; r++) deps[nd++] = ready[r];
        }
        fs_coll_params prm;
        fs_coll_params_init(&prm);
        prm.op = ops[ph];
        prm.bytes = bytes / nb;
        prm.algo = job->par.algo[FS_PAR_DP];
        prm.servers = (int32_t)job->par.ps_servers;
        if ((rc = fs__train_choose_algo(tr, &prm, &g, err))) break;
        int32_t first, done;
        if ((rc = lower_coll(tr, &prm, &g, deps, nd, (uint64_t)(s * 131 + j), tr->shift_g * tr->c,
                             &first, &done, err)))
          break;
        prev = done;
        if (fs__grow(&tr->dp, &tr->dp_cap, tr->n_dp + 1, sizeof(*tr->dp))) {
          rc = fs_err_set(err, FS_ENOMEM, "out of memory");
          break;
        }
        tr->dp[tr->n_dp++] =
            (dp_coll){s, j, first, done, prm.bytes, 0, b, 0, tr->last_qc, tr->last_routes};
        tr->kinds[FS_PAR_DP].algo = prm.algo;
      }
  }
  free(hosts);
  free(deps);
  return rc;
}

/* Lowers `count` collectives (op, bytes each) one after another over
 * `hosts`, the first after the items `after`; *done is the last one's done
 * task, *flows adds their flows. algo AUTO asks the tuner. */
static int coll_chain(fs_train *tr, fs_coll_op op, fs_coll_algo algo, double bytes,
                      const int32_t *hosts, int32_t n, const int32_t *after, int32_t n_after,
                      int32_t count, uint64_t key, int32_t shift, int32_t *first, int32_t *done,
                      fs_err *err) {
  fs_coll_group g = {n, hosts};
  fs_coll_params prm;
  fs_coll_params_init(&prm);
  prm.op = op;
  prm.bytes = bytes;
  prm.algo = algo;
  int rc;
  if ((rc = fs__train_choose_algo(tr, &prm, &g, err))) return rc;
  tr->last_algo = prm.algo;
  int32_t prev = -1;
  *first = -1;
  for (int32_t c = 0; c < count; c++) {
    int32_t f, d;
    if ((rc = lower_coll(tr, &prm, &g, prev >= 0 ? &prev : after, prev >= 0 ? 1 : n_after, key,
                         shift, &f, &d, err)))
      return rc;
    if (*first < 0) *first = f;
    prev = d;
  }
  *done = prev;
  return 0;
}

int fs__train_tp_flows(fs_train *tr, int32_t s, int32_t r, int32_t vs, fs_work_pass pass,
                       int32_t after, int32_t *end, fs_err *err) {
  const fs_job *job = tr->job;
  int n = fs_work_tp_colls_per_layer(job, pass);
  int64_t layers = vs_layers(tr, vs, NULL);
  int32_t first, prev = after, join = -1;
  double bytes = fs_work_tp_bytes(job);
  uint64_t key = 0x7000000000ull + (uint64_t)(s * tr->d + r);
  int32_t *hosts = fs__malloc((size_t)tr->t, sizeof(int32_t));
  if (!hosts) return fs_err_set(err, FS_ENOMEM, "out of memory");
  int rc = 0;
  for (int32_t c = 0; c < tr->c && !rc; c++) {
    prev = after;
    for (int32_t j = 0; j < tr->t; j++) hosts[j] = host_lane(tr, j + tr->t * c, r, s);
    for (int64_t L = 0; L < layers * n && !rc; L++) {
      fs_coll_op op = !job->par.sequence_parallel ? FS_COLL_ALLREDUCE
                      : L % 2 == 0                ? FS_COLL_ALLGATHER
                                                  : FS_COLL_REDUCESCATTER;
      /* under R only TP rank 0's lane is simulated: the TP collective's
       * representatives, R being a shift of one rank of the group */
      /* (with fp8_comm the all-gathers in FP8) */
      double b = op == FS_COLL_ALLGATHER ? bytes * fs_work_fp8_gather_share(job) : bytes;
      rc = coll_chain(tr, op, job->par.algo[FS_PAR_TP], b, hosts, tr->t, &prev, 1, 1, key,
                      tr->rails == 1 ? -1 : 0, &first, &prev, err);
      tr->kinds[FS_PAR_TP].algo = tr->last_algo;
    }
    if (rc || tr->c == 1) break;
    /* CP ranks' TP groups run side by side: join them */
    if (join < 0 && (join = fs_sim_add_task_s(tr->sim, host(tr, 0, r, s), 0, 0, err)) < 0) {
      rc = join;
      break;
    }
    if (prev != after) rc = fs_sim_add_dep(tr->sim, prev, join, err);
    if (!rc && c == tr->c - 1) rc = fs_sim_add_dep(tr->sim, after, join, err);
  }
  free(hosts);
  if (rc) return rc;
  *end = tr->c > 1 ? join : prev;
  return 0;
}

int fs__train_cp_ring(fs_train *tr, fs_sim *sim, int32_t s, int32_t r, int32_t vs,
                      fs_work_pass pass, int32_t after, int32_t *end, fs_err *err) {
  const fs_job *job = tr->job;
  int steps = fs_work_cp_steps_per_layer(job, pass);
  double bytes = fs_work_cp_step_bytes(job, pass);
  int64_t layers = vs_layers(tr, vs, NULL);
  int32_t lanes = tr->t * tr->c, prev = after;
  *end = after;
  if (tr->c < 2 || steps <= 0 || bytes <= 0) return 0;
  int32_t *buf = fs__malloc((size_t)lanes * 2, sizeof(int32_t)), *got = buf, *next = buf + lanes;
  if (!buf) return fs_err_set(err, FS_ENOMEM, "out of memory");
  int rc = 0;
  for (int64_t L = 0; L < layers && !rc; L++) {
    for (int32_t q = 0; q < lanes; q++) got[q] = prev;
    for (int k = 0; k < steps && !rc; k++) {
      for (int32_t q = 0; q < lanes && !rc; q += tr->lane_step) {
        int32_t to = (q + tr->t) % lanes; /* same TP rank, next CP rank */
        int32_t src = host_lane(tr, q, r, s), dst = host_lane(tr, to, r, s);
        const fs_route *route;
        int32_t f;
        if ((rc = fs_route_cache_get(tr->routes, src, dst, &route, err))) break;
        if ((f = fs_sim_add_flow_ref(sim, src, dst, bytes, 0, route, err)) < 0) {
          rc = f;
          break;
        }
        if (got[q] >= 0) rc = fs_sim_add_dep(sim, got[q], f, err);
        next[to] = f;
      }
      int32_t *tmp = got;
      got = next;
      next = tmp;
    }
    int32_t done = rc ? -1 : fs_sim_add_task_s(sim, host(tr, 0, r, s), 0, 0, err);
    if (!rc && done < 0) rc = done;
    for (int32_t q = 0; q < lanes && !rc; q += tr->lane_step)
      rc = fs_sim_add_dep(sim, got[q], done, err);
    prev = done;
  }
  free(buf);
  if (!rc) *end = prev;
  return rc;
}

static int32_t add_gate(fs_train *tr, int32_t dev_host, int32_t after, fs_err *err) {
  int32_t g = fs_sim_add_task_s(tr->sim, dev_host, 0, 0, err);
  if (g >= 0 && after >= 0) {
    int rc = fs_sim_add_dep(tr->sim, after, g, err);
    if (rc) return rc;
  }
  return g;
}

/* ZeRO++'s hpZ, comm all: before backward op i of stage s, each server's
 * members of a gradient group gather the weights from their secondary copy
 * (D bytes, inside the server), per TP rank; each device's gate waits for
 * its server's gathers. hosts and after: scratch of dp x cp and dp. */
static int hpz_gathers(fs_train *tr, int32_t s, int32_t i, int32_t *hosts, int32_t *after,
                       fs_err *err) {
  const fs_job *job = tr->job;
  int32_t d = tr->d, n = tr->n_ops, rc = 0;
  fs_work_shard sh;
  fs_work_stage_params(job, s, &sh);
  double bytes = (double)(sh.dense + sh.expert) * (double)job->model.dtype_bytes / tr->v;
  int gathers = job->par.recompute ? 2 : 1;
  int64_t *server = fs__malloc((size_t)tr->ds, sizeof(int64_t));
  if (!server) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int32_t r = 0; r < tr->ds; r++) server[r] = server_dpcp(tr, 0, r * tr->c, s);
  for (int32_t r = 0; r < tr->ds && !rc; r++) {
    /* one gather per server, lowered with its first device */
    int lead = 1;
    for (int32_t q = 0; q < r && lead; q++) lead = server[q] != server[r];
    if (!lead) continue;
    int32_t n_after = 0;
    for (int32_t q = r; q < tr->ds; q++) {
      int32_t from = tr->ops[(size_t)(s * d + q) * n + i].z3_from;
      if (server[q] == server[r] && from >= 0) after[n_after++] = from;
    }
    for (int32_t j = 0; j < tr->rails && !rc; j++) {
      int32_t np = hpz_members(tr, j, r, s, hosts), f, done;
      if (np < 2) continue;
      rc = coll_chain(tr, FS_COLL_ALLGATHER, job->par.algo[FS_PAR_DP], bytes, hosts, np, after,
                      n_after, gathers, 0x5400000000ull + (uint64_t)((s * d + r) * 131 + j), 0, &f,
                      &done, err);
      for (int32_t q = r; q < tr->ds && !rc; q++)
        if (server[q] == server[r])
          rc = fs_sim_add_dep(tr->sim, done, tr->ops[(size_t)(s * d + q) * n + i].z3, err);
    }
  }
  free(server);
  return rc;
}

/* comm all: the collectives that couple devices, for op i of stage s, once
 * every device of the stage has built it: per MoE layer the dispatch and
 * combine all-to-alls of each EP group, per TP rank (rail); before the
 * compute, the ZeRO-3 gathers of the whole data-parallel group, per rail.
 * Each device's gate waits for its group's collectives on every rail. */
static int group_colls(fs_train *tr, int32_t s, int32_t i, fs_err *err) {
  const fs_job *job = tr->job;
  const fs_pipe_op *o = &tr->order[(size_t)s * tr->n_ops + i];
  int32_t d = tr->d, n = tr->n_ops, N = d * tr->c;
  int32_t *hosts = fs__malloc((size_t)N, sizeof(int32_t));
  int32_t *after = fs__malloc((size_t)d, sizeof(int32_t));
  if (!hosts || !after) {
    free(hosts);
    free(after);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  int rc = 0;
  op_items *first = &tr->ops[(size_t)(s * d) * n + i];
  if (first->z3 >= 0 && first->z3_from != first->z3 && o->backward && job->par.zpp_hpz) {
    rc = hpz_gathers(tr, s, i, hosts, after, err);
  } else if (first->z3 >= 0 && first->z3_from != first->z3) {
    fs_work_shard sh;
    fs_work_stage_params(job, s, &sh);
    double bytes = (double)(sh.dense + sh.expert) * (double)job->model.dtype_bytes / tr->v;
    if (job->par.zpp_qwz) bytes /= (double)job->model.dtype_bytes; /* ZeRO++'s int8 gathers */
    int gathers = o->backward && job->par.recompute ? 2 : 1;
    for (int32_t r = 0; r < tr->ds; r++) after[r] = tr->ops[(size_t)(s * d + r) * n + i].z3_from;
    int32_t n_after = 0;
    for (int32_t r = 0; r < tr->ds; r++)
      if (after[r] >= 0) after[n_after++] = after[r];
    for (int32_t j = 0; j < tr->rails && !rc; j++) {
      int32_t f, done;
      for (int32_t k = 0; k < N; k++) hosts[k] = host_dpcp(tr, j, k, s);
      rc = coll_chain(tr, FS_COLL_ALLGATHER, job->par.algo[FS_PAR_DP], bytes, hosts, N, after,
                      n_after, gathers, 0x5300000000ull + (uint64_t)(s * 131 + j),
                      tr->shift_g * tr->c, &f, &done, err);
      for (int32_t r = 0; r < tr->ds && !rc; r++)
        rc = fs_sim_add_dep(tr->sim, done, tr->ops[(size_t)(s * d + r) * n + i].z3, err);
    }
  }
  if (!rc && first->ep >= 0 && first->ep_from != first->ep) {
    int32_t ep = (int32_t)job->par.ep, vs = o->chunk * tr->p + s;
    int32_t a2a = (int32_t)op_alltoalls(tr, vs, o->backward);
    for (int32_t base = 0; base < tr->ds && !rc; base += ep) {
      for (int32_t e = 0; e < ep; e++)
        after[e] = tr->ops[(size_t)(s * d + base + e) * n + i].ep_from;
      for (int32_t j = 0; j < tr->t * tr->c && !rc; j += tr->lane_step) {
        int32_t f, done;
        for (int32_t e = 0; e < ep; e++) hosts[e] = host_lane(tr, j, base + e, s);
        /* with fp8_comm: FP8 dispatches and D-byte combines, lowered as
         * all-to-alls of their mean size (the same bytes in all) */
        rc = coll_chain(tr, FS_COLL_ALLTOALL, job->par.algo[FS_PAR_EP],
                        fs_work_ep_bytes(job) * fs_work_fp8_share(job, FS_PAR_EP), hosts, ep,
                        after, ep, a2a,
                        0x4500000000ull + (uint64_t)((s * d + base) * 257 + j), 0, &f, &done, err);
        tr->kinds[FS_PAR_EP].algo = tr->last_algo;
        for (int32_t e = 0; e < ep && !rc; e++)
          rc = fs_sim_add_dep(tr->sim, done, tr->ops[(size_t)(s * d + base + e) * n + i].ep, err);
      }
    }
  }
  free(hosts);
  free(after);
  return rc;
}

/* The op after which a micro-batch's weight gradients exist: a whole
 * backward, or the W of a split one. */
static int makes_grads(const fs_pipe_op *o) {
  return o->backward && o->part != FS_PIPE_INPUT_GRAD;
}

/* Seconds one GPU computes op o of virtual stage vs (compute.h): a split
 * backward's B is the backward without its weight gradients, its W those. */
static double op_compute_s(const fs_job *job, int32_t vs, const fs_pipe_op *o) {
  if (o->part == FS_PIPE_WEIGHT_GRAD) return fs_compute_wgrad_s(job, vs);
  double s = fs_compute_op_s(job, vs, o->backward);
  return o->part == FS_PIPE_INPUT_GRAD ? s - fs_compute_wgrad_s(job, vs) : s;
}

/* overlap_dp: gradients come out during the backward pass, the last layers'
 * first, so (PyTorch DDP, Megatron-LM's overlapped reduction) bucket b of
 * nb is ready (b + 1) / nb of the way through the backward proper of the
 * chunk's last backward op (or W), after its recomputed forward. A
 * zero-cost task per bucket but the last, started with the op's compute
 * (tasks do not contend), lasts until then; the last bucket waits for the
 * op's end. */
static int dp_bucket_marks(fs_train *tr, int32_t s, int32_t r, const fs_pipe_op *o, int32_t vs,
                           int32_t prev, int32_t dev_host, fs_err *err) {
  const fs_job *job = tr->job;
  int32_t chunk = o->chunk;
  int32_t nb = dp_buckets(tr, dp_chunk_bytes(tr, s)), maxb = dp_max_buckets(tr);
  double op_s = op_compute_s(job, vs, o);
  double rec_s = o->part == FS_PIPE_WEIGHT_GRAD ? 0 : fs_compute_recompute_s(job, vs);
  for (int32_t b = 0; b + 1 < nb; b++) {
    int32_t t = add_task(tr, dev_host, rec_s + (op_s - rec_s) * (b + 1) / nb, err);
    if (t < 0) return t;
    int rc = prev >= 0 ? fs_sim_add_dep(tr->sim, prev, t, err) : 0;
    if (rc) return rc;
    tr->dp_marks[((size_t)(s * tr->d + r) * tr->v + chunk) * maxb + b] = t;
  }
  return 0;
}

/* Sets up tr->dp_marks and dp_last when buckets overlap the backward:
 * overlap_dp, ZeRO 0 (all-reduce buckets) or 1 (the distributed
 * optimizer's reduce-scatter buckets) and a data-parallel group that is
 * simulated. */
static int dp_marks_setup(fs_train *tr, fs_err *err) {
  const fs_job *job = tr->job;
  if (tr->dp_marks || !job->par.overlap_dp || fs_work_zero_stage(job) > 1 || tr->d * tr->c < 2 ||
      tr->fabric_free || tr->opts.free_comm)
    return 0;
  int32_t p = tr->p, v = tr->v, n = tr->n_ops;
  tr->dp_marks = fs__malloc((size_t)p * tr->d * v * dp_max_buckets(tr), sizeof(int32_t));
  tr->dp_last = fs__malloc((size_t)p * v, sizeof(int32_t));
  if (!tr->dp_marks || !tr->dp_last) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int32_t k = 0; k < p * v; k++) tr->dp_last[k] = -1;
  for (int32_t s = 0; s < p; s++)
    for (int32_t i = 0; i < n; i++) {
      const fs_pipe_op *o = &tr->order[(size_t)s * n + i];
      if (makes_grads(o)) tr->dp_last[(size_t)s * v + o->chunk] = i;
    }
  return 0;
}

/* TP_STAR: per virtual stage, the TP seconds of a forward and of a
 * backward op (with its recomputation), timed alone on a star. */
static int tp_star_times(fs_train *tr, fs_err *err) {
  int rc;
  for (int32_t vs = 0; vs < tr->V && tr->tp_mode == TP_STAR; vs++) {
    double tp_f = 0, tp_b = 0, tp_r = 0;
    int64_t L = vs_layers(tr, vs, NULL);
    if ((rc = fs__train_tp_seconds(tr, FS_PASS_FWD, L, &tp_f, err)) ||
        (rc = fs__train_tp_seconds(tr, FS_PASS_BWD, L, &tp_b, err)) ||
        (rc = fs__train_tp_seconds(tr, FS_PASS_RECOMPUTE, L, &tp_r, err)))
      return rc;
    tr->tp_fwd_s[vs] = tp_f;
    tr->tp_bwd_s[vs] = tp_b + tp_r;
  }
  return 0;
}

/* The op's ring-attention exchange (context parallelism) after it->end:
 * as flows (comm all) or as a task of its time alone. */
static int op_cp(fs_train *tr, int32_t s, int32_t r, int32_t vs, const fs_pipe_op *o, int all,
                 int32_t dev_host, op_items *it, fs_err *err) {
  int rc;
  it->cp = it->cp_from = -1;
  if (tr->c <= 1 || tr->opts.free_comm) return 0;
  fs_work_pass pass = o->backward ? FS_PASS_BWD : FS_PASS_FWD;
  if (all) {
    int32_t e = it->end;
    if ((rc = fs__train_cp_ring(tr, tr->sim, s, r, vs, pass, e, &e, err))) return rc;
    if (o->backward &&
        (rc = fs__train_cp_ring(tr, tr->sim, s, r, vs, FS_PASS_RECOMPUTE, e, &e, err)))
      return rc;
    if (e != it->end) {
      it->cp_from = it->end;
      it->cp = it->end = e;
    }
    return 0;
  }
  int64_t L = vs_layers(tr, vs, NULL);
  double c1, c2 = 0;
  if ((rc = fs__train_cp_seconds(tr, pass, L, vs, &c1, err)) ||
      (o->backward && (rc = fs__train_cp_seconds(tr, FS_PASS_RECOMPUTE, L, vs, &c2, err))))
    return rc;
  if (c1 + c2 > 0) {
    it->cp = add_task(tr, dev_host, c1 + c2, err);
    if (it->cp < 0) return it->cp;
    if ((rc = fs_sim_add_dep(tr->sim, it->end, it->cp, err))) return rc;
    it->cp_from = it->cp;
    it->end = it->cp;
  }
  return 0;
}

/* Op i of device (s, r): its ZeRO-3 gather, compute, TP, CP and EP parts
 * after *prev (the device's previous item, or -1), which becomes the op's
 * end. *need_groups is set when a part waits for its group's collective
 * (lowered by group_colls once every device has built the op). */
/* overlap_param_gather: the first forward op of chunk c on a device of
 * stage s waits for the previous iteration's all-gather of c's first
 * bucket (the all-gathers run in the forward's order, the first layers'
 * first), and the op after it for all of c's buckets: the gathers run under
 * that forward, as Megatron-Core's forward pre-hooks wait for each
 * bucket. */
static int param_gather_deps(fs_train *tr, int32_t s, int32_t i, int32_t item, fs_err *err) {
  const fs_pipe_op *ops = &tr->order[(size_t)s * tr->n_ops];
  for (int32_t k = i; k >= 0 && k >= i - 1; k--) {
    /* a chunk's first forward is micro-batch 0's in every schedule */
    if (ops[k].backward || ops[k].mb != 0) continue;
    for (size_t g = 0; g < tr->n_pg; g++) {
      const dp_coll *c = &tr->pg[g];
      if (c->stage != s || c->chunk != ops[k].chunk || (k == i && c->bucket != 0)) continue;
      int rc = fs_sim_add_dep(tr->sim, c->done, item, err);
      if (rc) return rc;
    }
  }
  return 0;
}

static int lower_op(fs_train *tr, int32_t s, int32_t r, int32_t i, int all, const double z3_s[2],
                    int z3_flows, int32_t *prev_io, int *need_groups, fs_err *err) {
  const fs_job *job = tr->job;
  int32_t p = tr->p, d = tr->d, v = tr->v, n = tr->n_ops;
  int32_t dev = s * d + r, dev_host = host(tr, 0, r, s), prev = *prev_io;
  int rc;
  const fs_pipe_op *o = &tr->order[(size_t)s * n + i];
  int32_t vs = o->chunk * p + s;
  /* compute.h: FLOPs / (peak mfu), or the per-operation roofline; the
   * device's last op (a backward) also runs the optimizer step. */
  double compute_s = op_compute_s(job, vs, o) + (i == n - 1 ? fs_compute_step_s(job, s) : 0);
  op_items *it = &tr->ops[(size_t)dev * n + i];
  if (o->part == FS_PIPE_WEIGHT_GRAD) {
    /* W: weight-gradient GEMMs only, no communication, no gathered weights
     * (dW = x^T dy), its inputs kept from the forward */
    *it = (op_items){.z3 = -1, .tp = -1, .ep = -1, .z3_from = -1, .tp_from = -1,
                     .ep_from = -1, .cp = -1, .cp_from = -1};
    it->compute = it->end = add_task(tr, dev_host, compute_s, err);
    if (it->compute < 0) return it->compute;
    if (prev >= 0 && (rc = fs_sim_add_dep(tr->sim, prev, it->compute, err))) return rc;
    if (tr->dp_marks && i == tr->dp_last[(size_t)s * v + o->chunk] &&
        (rc = dp_bucket_marks(tr, s, r, o, vs, prev, dev_host, err)))
      return rc;
    *prev_io = it->end;
    return 0;
  }
  double tp_s = 0, ep_s = 0;
  if (tr->tp_mode == TP_STAR) tp_s = o->backward ? tr->tp_bwd_s[vs] : tr->tp_fwd_s[vs];
  if (tr->tp_mode == TP_PRIVATE) {
    size_t k = (size_t)dev * v + o->chunk;
    tp_s = o->backward ? tr->tp_dev_b[k] : tr->tp_dev_f[k];
    tr->represented += o->backward ? tr->tp_dev_nb[k] : tr->tp_dev_nf[k];
  }
  int ep_flows = 0;
  if (all) {
    int64_t lo, per = vs_layers(tr, vs, &lo);
    ep_flows = job->par.ep >= 2 && fs_work_moe_layers(&job->model, lo, per) > 0;
  } else if ((rc = fs__train_ep_seconds(tr, vs, r, o->backward, &ep_s, err))) {
    return rc;
  }
  /* ZeRO-3: gather the weights first (twice before a backward with
   * recomputation: for the recomputed forward and the backward). */
  it->z3 = it->z3_from = -1;
  if (z3_s[o->backward] > 0) {
    int gathers = o->backward && job->par.recompute ? 2 : 1;
    it->z3 = add_task(tr, dev_host, gathers * z3_s[o->backward], err);
    if (it->z3 < 0) return it->z3;
    if (prev >= 0 && (rc = fs_sim_add_dep(tr->sim, prev, it->z3, err))) return rc;
    it->z3_from = it->z3;
    prev = it->z3;
  } else if (z3_flows) {
    it->z3_from = prev;
    it->z3 = add_gate(tr, dev_host, prev, err);
    if (it->z3 < 0) return it->z3;
    prev = it->z3;
    *need_groups = 1;
  }
  it->compute = add_task(tr, dev_host, compute_s, err);
  if (it->compute < 0) return it->compute;
  if (prev >= 0 && (rc = fs_sim_add_dep(tr->sim, prev, it->compute, err))) return rc;
  if (tr->n_pg && (rc = param_gather_deps(tr, s, i, it->compute, err))) return rc;
  if (tr->dp_marks && makes_grads(o) && i == tr->dp_last[(size_t)s * v + o->chunk] &&
      (rc = dp_bucket_marks(tr, s, r, o, vs, prev, dev_host, err)))
    return rc;
  it->end = it->compute;
  it->tp = it->ep = it->tp_from = it->ep_from = -1;
  if (tp_s > 0) {
    it->tp = add_task(tr, dev_host, tp_s, err);
    if (it->tp < 0) return it->tp;
    if ((rc = fs_sim_add_dep(tr->sim, it->end, it->tp, err))) return rc;
    it->tp_from = it->tp;
    it->end = it->tp;
  } else if (tr->tp_mode == TP_FLOWS) {
    fs_work_pass pass = o->backward ? FS_PASS_BWD : FS_PASS_FWD;
    int32_t e = it->end;
    if ((rc = fs__train_tp_flows(tr, s, r, vs, pass, e, &e, err))) return rc;
    if (o->backward && (rc = fs__train_tp_flows(tr, s, r, vs, FS_PASS_RECOMPUTE, e, &e, err)))
      return rc;
    if (e != it->end) {
      it->tp_from = it->end;
      it->tp = it->end = e;
    }
  }
  if ((rc = op_cp(tr, s, r, vs, o, all, dev_host, it, err))) return rc;
  if (ep_s > 0) {
    it->ep = add_task(tr, dev_host, ep_s, err);
    if (it->ep < 0) return it->ep;
    if ((rc = fs_sim_add_dep(tr->sim, it->end, it->ep, err))) return rc;
    it->ep_from = it->ep;
    it->end = it->ep;
  } else if (ep_flows) {
    it->ep_from = it->end;
    it->ep = add_gate(tr, dev_host, it->end, err);
    if (it->ep < 0) return it->ep;
    it->end = it->ep;
    *need_groups = 1;
  }
  *prev_io = it->end;
  return 0;
}

/* Cross-device dependencies: activations forward, gradients backward. */
/* Blocking point-to-point (parallelism.p2p "blocking": DeepSpeed's pipeline
 * engine, torch.distributed send and recv): a transfer starts once the
 * receiver has posted its receive (its op before the one that needs the
 * data is done), and the sender's next op waits until it has gone. */
static int rendezvous(fs_train *tr, int32_t s, int32_t s2, int32_t r, int dir, int32_t mb,
                      int32_t c, int32_t c2, const int32_t *flows, fs_err *err) {
  int32_t d = tr->d, n = tr->n_ops, rc = 0;
  int32_t i_to = tr->op_index[idx3(tr, s2, dir, mb, c2)];
  int32_t i_from = tr->op_index[idx3(tr, s, dir, mb, c)];
  int32_t posted = i_to > 0 ? tr->ops[(size_t)(s2 * d + r) * n + i_to - 1].end : -1;
  int32_t next = i_from + 1 < n ? tr->ops[(size_t)(s * d + r) * n + i_from + 1].compute : -1;
  for (int32_t j = 0; j < tr->t * tr->c && !rc; j += tr->lane_step) {
    if (posted >= 0) rc = fs_sim_add_dep(tr->sim, posted, flows[j], err);
    if (!rc && next >= 0) rc = fs_sim_add_dep(tr->sim, flows[j], next, err);
  }
  return rc;
}

static int pipeline_deps(fs_train *tr, fs_err *err) {
  const fs_job *job = tr->job;
  int32_t p = tr->p, d = tr->d, m = tr->m, V = tr->V, n = tr->n_ops;
  int rc = 0;
  double gather_s = 0;
  if (p > 1 && tr->t > 1 && !job->par.sequence_parallel && !tr->fabric_free &&
      !tr->opts.free_comm &&
      (rc = fs__train_coll_time(tr, FS_COLL_ALLGATHER, FS_ALGO_AUTO, fs_work_tp_bytes(job), NULL,
                                tr->t, 0, &gather_s, err)))
    return rc;
  int32_t *flows = malloc((size_t)tr->t * tr->c * sizeof(int32_t));
  if (!flows) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int32_t r = 0; r < tr->ds && !rc; r++)
    for (int32_t mb = 0; mb < m && !rc; mb++)
      for (int32_t k = 0; k < V && !rc; k++) {
        int32_t s = k % p, c = k / p;
        for (int dir = 0; dir < 2 && !rc; dir++) {
          int32_t k2 = dir ? k - 1 : k + 1;
          if (k2 < 0 || k2 >= V) continue;
          int32_t s2 = k2 % p, c2 = k2 / p;
          const op_items *from =
              &tr->ops[(size_t)(s * d + r) * n + tr->op_index[idx3(tr, s, dir, mb, c)]];
          const op_items *to =
              &tr->ops[(size_t)(s2 * d + r) * n + tr->op_index[idx3(tr, s2, dir, mb, c2)]];
          if (tr->fabric_free || tr->opts.free_comm || s == s2) {
            rc = fs_sim_add_dep(tr->sim, from->end, to->compute, err);
            continue;
          }
          if ((rc = pp_sends(tr, s, s2, r, from->end, flows, err))) break;
          if (job->par.blocking_p2p && (rc = rendezvous(tr, s, s2, r, dir, mb, c, c2, flows, err)))
            break;
          /* Without sequence parallelism each TP rank sends 1 / t of the
           * activation and the receivers all-gather it over NVLink before
           * the op (Megatron-LM's scatter/gather, Narayanan et al. 2021,
           * sec. 4.1): a task of that all-gather's time alone (an NCCL
           * all-gather, torch.distributed's, so the tuner's algorithm). */
          int32_t into = to->compute;
          if (gather_s > 0) {
            into = add_task(tr, host(tr, 0, r, s2), gather_s, err);
            if (into < 0 || (rc = fs_sim_add_dep(tr->sim, into, to->compute, err))) {
              rc = into < 0 ? into : rc;
              break;
            }
          }
          for (int32_t j = 0; j < tr->t * tr->c && !rc; j += tr->lane_step)
            rc = fs_sim_add_dep(tr->sim, flows[j], into, err);
          /* (a ZeRO-3 gather may run before the data arrives; ZeRO-3 needs
           * pp = 1, so this never happens today) */
        }
        /* The backward of a micro-batch on a virtual stage follows its forward. */
        if (!rc) {
          const op_items *f =
              &tr->ops[(size_t)(s * d + r) * n + tr->op_index[idx3(tr, s, 0, mb, c)]];
          const op_items *b =
              &tr->ops[(size_t)(s * d + r) * n + tr->op_index[idx3(tr, s, 1, mb, c)]];
          rc = fs_sim_add_dep(tr->sim, f->end, b->compute, err);
        }
      }
  free(flows);
  return rc;
}

/* ZeRO 1 with overlap_dp (Megatron-Core's distributed optimizer with
 * --overlap-grad-reduce): chunk c's gradient buckets are reduce-scattered
 * as the backward produces them (the marks, as the all-reduce buckets of
 * ZeRO 0), and the updated weights of the chunk (this call) all-gathered,
 * bucket by bucket, after the last of those reduce-scatters and the
 * device's optimizer step (its last op). */
static int zero1_overlapped(fs_train *tr, int32_t s, int32_t c, double bytes,
                            const int32_t *after, const int32_t *marks, fs_err *err) {
  static const fs_coll_op RS[] = {FS_COLL_REDUCESCATTER}, AG[] = {FS_COLL_ALLGATHER};
  int32_t d = tr->d, n = tr->n_ops, na = tr->ds;
  size_t rs_from = tr->n_dp;
  int rc = dp_collectives(tr, s, bytes, after, marks, na, RS, 1, err);
  if (rc || tr->n_dp == rs_from) return rc;
  int32_t *ag_after = fs__malloc((size_t)na + (tr->n_dp - rs_from), sizeof(int32_t));
  if (!ag_after) return fs_err_set(err, FS_ENOMEM, "out of memory");
  int32_t k = 0;
  for (int32_t r = 0; r < na; r++) ag_after[k++] = tr->ops[(size_t)(s * d + r) * n + n - 1].end;
  for (size_t i = rs_from; i < tr->n_dp; i++) ag_after[k++] = tr->dp[i].done;
  size_t ag_from = tr->n_dp;
  rc = dp_collectives(tr, s, bytes, ag_after, NULL, k, AG, 1, err);
  free(ag_after);
  for (size_t i = ag_from; i < tr->n_dp; i++) /* (bucket set by dp_collectives) */
    tr->dp[i].chunk = c, tr->dp[i].param_gather = (uint8_t)tr->job->par.overlap_param_gather;
  return rc;
}

/* Data-parallel traffic per ZeRO stage (docs/model-work.md):
 *   0: all-reduce each chunk's gradients once, after every replica's last
 *      backward of the chunk (overlap) or its last op;
 *   1: reduce-scatter them, then all-gather the updated weights;
 *   2, 3: reduce-scatter every micro-batch's gradients after its backward
 *      (sharded gradients cannot accumulate), then (2) all-gather the
 *      weights at the end; 3 gathers weights per op instead (lower_op). */
static int dp_traffic(fs_train *tr, fs_err *err) {
  const fs_job *job = tr->job;
  int32_t p = tr->p, d = tr->d, v = tr->v, n = tr->n_ops;
  int rc = 0;
  int32_t *after = malloc((size_t)d * sizeof(int32_t));
  if (!after) return fs_err_set(err, FS_ENOMEM, "out of memory");
  static const fs_coll_op AR[] = {FS_COLL_ALLREDUCE},
                          RS_AG[] = {FS_COLL_REDUCESCATTER, FS_COLL_ALLGATHER};
  int zero = fs_work_zero_stage(job);
  int32_t maxb = dp_max_buckets(tr);
  int32_t *marks = tr->dp_marks ? malloc((size_t)maxb * tr->ds * sizeof(int32_t)) : NULL;
  if (tr->dp_marks && !marks) {
    free(after);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  for (int32_t s = 0; s < p && !rc; s++) {
    double chunk_bytes = dp_chunk_bytes(tr, s);
    if (zero >= 2)
      for (int32_t i = 0; i < n && !rc; i++) {
        const fs_pipe_op *o = &tr->order[(size_t)s * n + i];
        if (!makes_grads(o)) continue;
        for (int32_t r = 0; r < tr->ds; r++) after[r] = tr->ops[(size_t)(s * d + r) * n + i].end;
        /* ZeRO++'s qgZ: the gradients reduce-scattered in int4 */
        rc = dp_collectives(tr, s,
                            job->par.zpp_qgz ? chunk_bytes * 0.5 / (double)job->model.dtype_bytes
                                             : chunk_bytes,
                            after, NULL, tr->ds, RS_AG, 1, err);
      }
    for (int32_t c = 0; c < v && !rc; c++) {
      for (int32_t r = 0; r < tr->ds; r++) {
        int32_t last = n - 1;
        if (job->par.overlap_dp)
          for (int32_t i = n - 1; i >= 0; i--) {
            const fs_pipe_op *o = &tr->order[(size_t)s * n + i];
            if (makes_grads(o) && o->chunk == c) {
              last = i;
              break;
            }
          }
        after[r] = tr->ops[(size_t)(s * d + r) * n + last].end;
      }
      int32_t na = tr->ds;
      if (zero <= 1 && marks) {
        int32_t nb = dp_buckets(tr, chunk_bytes);
        for (int32_t b = 0; b + 1 < nb; b++)
          for (int32_t r = 0; r < na; r++)
            marks[(size_t)b * na + r] = tr->dp_marks[((size_t)(s * d + r) * v + c) * maxb + b];
      }
      if (zero == 0)
        rc = dp_collectives(tr, s, chunk_bytes, after, marks, na, AR, 1, err);
      else if (zero == 1 && marks)
        rc = zero1_overlapped(tr, s, c, chunk_bytes, after, marks, err);
      else if (zero == 1)
        rc = dp_collectives(tr, s, chunk_bytes, after, NULL, na, RS_AG, 2, err);
      else if (zero == 2)
        rc = dp_collectives(tr, s, chunk_bytes, after, NULL, na, RS_AG + 1, 1, err);
    }
  }
  free(marks);
  free(after);
  return rc;
}

int fs__train_build_dag(fs_train *tr, fs_err *err) {
  /* (one iteration; tr->gate chains it after the previous one) */
  const fs_job *job = tr->job;
  int32_t d = tr->d, n = tr->n_ops;
  int all = tr->opts.comm == FS_COMM_ALL && !tr->fabric_free && !tr->opts.free_comm;
  int rc;
  if ((rc = tp_star_times(tr, err))) return rc;
  if ((rc = dp_marks_setup(tr, err))) return rc;
  int need_groups = 0;
  /* Ops, device by device, in schedule order. */
  for (int32_t s = 0; s < tr->p; s++)
    for (int32_t r = 0; r < tr->ds; r++) {
      int32_t prev = tr->gate[s * d + r];
      double z3_s[2] = {0, 0}; /* before a forward, before a backward */
      if (!all && !tr->opts.free_comm && !tr->fabric_free &&
          ((rc = fs__train_z3_seconds(tr, s, r, 0, &z3_s[0], err)) ||
           (rc = fs__train_z3_seconds(tr, s, r, 1, &z3_s[1], err))))
        return rc;
      int z3_flows = all && fs_work_zero_stage(job) >= 3 && d * tr->c > 1;
      for (int32_t i = 0; i < n; i++)
        if ((rc = lower_op(tr, s, r, i, all, z3_s, z3_flows, &prev, &need_groups, err))) return rc;
    }
  for (int32_t s = 0; s < tr->p && need_groups; s++)
    for (int32_t i = 0; i < n; i++)
      if ((rc = group_colls(tr, s, i, err))) return rc;
  if ((rc = pipeline_deps(tr, err))) return rc;
  if (tr->fabric_free || tr->opts.free_comm) return 0;
  return dp_traffic(tr, err);
}

int fs__train_build_iterations(fs_train *tr, fs_err *err) {
  int32_t devs = tr->p * tr->d, n = tr->n_ops;
  for (int32_t dev = 0; dev < devs; dev++) tr->gate[dev] = -1;
  /* (only simulated devices: data-parallel rank below ds) */
  for (int32_t k = 0; k < tr->iterations; k++) {
    int rc = fs__train_build_dag(tr, err);
    if (rc) return rc;
    /* the iteration's weight all-gathers run under the next one: their
     * items do not end it (fs__train_iteration_times) */
    for (size_t i = 0; i < tr->n_dp; i++)
      if (tr->dp[i].param_gather) {
        if (fs__grow(&tr->pg_ranges, &tr->pg_ranges_cap, tr->n_pg_ranges + 2, sizeof(int32_t)))
          return fs_err_set(err, FS_ENOMEM, "out of memory");
        tr->pg_ranges[tr->n_pg_ranges++] = tr->dp[i].first_item;
        tr->pg_ranges[tr->n_pg_ranges++] = tr->dp[i].done + 1;
      }
    if (k + 1 < tr->iterations) {
      for (int32_t dev = 0; dev < devs; dev++) {
        if (dev % tr->d >= tr->ds) continue;
        int32_t g = fs_sim_add_task_s(
            tr->sim, tr->host_of_gpu[gpu_of(tr, 0, dev % tr->d, dev / tr->d)], 0, 0, err);
        if (g < 0) return g;
        if ((rc = fs_sim_add_dep(tr->sim, tr->ops[(size_t)dev * n + n - 1].end, g, err))) return rc;
        for (size_t i = 0; i < tr->n_dp; i++)
          if (tr->dp[i].stage == dev / tr->d && !tr->dp[i].param_gather &&
              (rc = fs_sim_add_dep(tr->sim, tr->dp[i].done, g, err)))
            return rc;
        tr->gate[dev] = g;
      }
      /* the weights' all-gathers gate the next forwards instead (lower_op) */
      tr->n_pg = 0;
      for (size_t i = 0; i < tr->n_dp; i++)
        if (tr->dp[i].param_gather) {
          if (fs__grow(&tr->pg, &tr->pg_cap, tr->n_pg + 1, sizeof(*tr->pg)))
            return fs_err_set(err, FS_ENOMEM, "out of memory");
          tr->pg[tr->n_pg++] = tr->dp[i];
        }
      tr->n_dp = tr->n_pp = 0;
    }
    tr->iter_hi[k] = fs_sim_n_items(tr->sim);
  }
  return 0;
}
