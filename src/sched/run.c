/* One scheduler over a trace (sched.h): the event loop of arrivals,
 * starts, circuit set-ups and ends, each job advancing at its current rate
 * between events, and the metrics of the run. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "sched_state.h"

static void run_free(fs__sched_run *R) {
  int32_t n = R->s->t->n_jobs;
  for (int32_t j = 0; R->js && j < n; j++)
    FS__FREE_ALL(R->js[j].load.links, R->js[j].load.bytes, R->js[j].dem);
  for (int32_t r = 0; R->on && r < R->n_res; r++) free(R->on[r].v);
  if (R->js) FS__FREE_ALL(R->js[0].srv, R->js[0].leaf);
  FS__FREE_ALL(R->js, R->free, R->leaf_full, R->leaf_jobs, R->leaf_keys, R->on, R->comp,
               R->stamp, R->rstamp, R->sp, R->dl, R->prio,
               R->scratch, R->run, R->key, R->n_free);
  fs__sched_fillbuf_free(&R->fb);
}

static int run_alloc(fs__sched_run *R, fs_err *err) {
  const fs_sched *s = R->s;
  int32_t n = s->t->n_jobs, L = s->topo->n_links;
  R->n_res = fs__sched_ocs(R->o->kind) ? s->n_leaf : L;
  size_t nr = (size_t)(R->n_res > L ? R->n_res : L);
  R->js = calloc((size_t)n, sizeof(*R->js));
  R->free = malloc((size_t)s->n_srv * sizeof(*R->free));
  R->leaf_full = calloc((size_t)s->n_leaf, sizeof(*R->leaf_full));
  R->leaf_jobs = calloc((size_t)s->n_leaf, sizeof(*R->leaf_jobs));
  R->leaf_keys = calloc((size_t)s->n_leaf, 3 * sizeof(int32_t));
  R->on = calloc(nr, sizeof(*R->on));
  R->comp = malloc((size_t)(n > s->n_srv ? n : s->n_srv) * sizeof(*R->comp)); /* random: scratch */
  R->stamp = calloc((size_t)n, sizeof(*R->stamp));
  R->rstamp = calloc(nr, sizeof(*R->rstamp));
  R->fb.active = calloc(nr, sizeof(*R->fb.active));
  R->fb.frozen = calloc(nr, sizeof(*R->fb.frozen));
  R->sp = malloc((size_t)n * sizeof(*R->sp));
  R->fb.mark = calloc(nr, sizeof(*R->fb.mark));
  R->dl = malloc((size_t)n * sizeof(*R->dl));
  R->prio = malloc((size_t)n * sizeof(*R->prio));
  R->scratch = calloc((size_t)L, sizeof(*R->scratch));
  R->run = malloc((size_t)n * sizeof(*R->run));
  R->key = malloc((size_t)n * sizeof(*R->key));
  R->n_free = calloc((size_t)s->G + 1, sizeof(*R->n_free));
  int64_t slots = 0;
  for (int32_t j = 0; j < n; j++) {
    int64_t k = s->t->jobs[j].gpus / s->G;
    slots += k > 1 ? k : 1;
  }
  int32_t *srv = R->js ? malloc((size_t)slots * sizeof(*srv)) : NULL;
  int32_t *leaf = R->js ? malloc((size_t)slots * sizeof(*leaf)) : NULL;
  if (!R->js || !R->free || !R->leaf_full || !R->leaf_jobs || !R->leaf_keys || !R->on ||
      !R->comp || !R->stamp || !R->rstamp || !R->fb.active || !R->fb.frozen || !R->sp ||
      !R->fb.mark || !R->dl || !R->prio || !R->scratch || !R->run || !R->key || !R->n_free || !srv || !leaf) {
    FS__FREE_ALL(srv, leaf);
    if (R->js) R->js[0].srv = R->js[0].leaf = NULL;
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  for (int32_t j = 0, at = 0; j < n; j++) {
    int64_t k = s->t->jobs[j].gpus / s->G;
    R->js[j].srv = srv + at;
    R->js[j].leaf = leaf + at;
    at += (int32_t)(k > 1 ? k : 1);
  }
  for (int32_t sv = 0; sv < s->n_srv; sv++) {
    R->free[sv] = s->G;
    R->leaf_full[s->leaf_of[sv]]++;
  }
  R->full_total = s->n_srv;
  R->n_free[s->G] = s->n_srv;
  fs__rng_seed(&R->rng, 1); /* random: the same draws every run */
  return 0;
}

/* The most a job's demands ask of any link over its capacity, at least 1:
 * per = M (aligned) or T (average). */
static double overload(const fs_sched *s, const fs__sched_load *L, double per) {
  double over = 1;
  for (int32_t i = 0; i < L->n; i++) {
    double f = L->bytes[i] / per / s->cap[L->links[i]];
    if (f > over) over = f;
  }
  return over;
}

/* The same at the placement the engine timed the job in (its first
 * servers, packed), once per distinct job: what its iteration alone
 * already includes. */
static int timed_overload(fs__sched_run *R, int32_t spec, fs_err *err) {
  fs_sched *s = R->s;
  fs__sched_prof *p = &s->prof[spec];
  if (p->over_done) return 0;
  int64_t g = fs_job_gpus(s->t->specs[spec]);
  int32_t *host = malloc((size_t)g * sizeof(*host));
  fs__sched_load L;
  if (!host) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int64_t x = 0; x < g; x++) host[x] = (int32_t)x;
  int rc = fs__sched_traffic(s->t->specs[spec], p, host, s->router, (uint64_t)spec + 1,
                             R->scratch, &L, err);
  free(host);
  if (rc) return rc;
  p->over_aligned = overload(s, &L, p->comm_s);
  p->over_average = overload(s, &L, p->iter_s);
  p->over_done = 1;
  FS__FREE_ALL(L.links, L.bytes);
  return 0;
}

/* The job's traffic at its placement and its demands: while communicating
 * B / M on each link (aligned), or on average B / T (average). Both are
 * divided by what the job asked at the placement it was timed in (a job
 * whose communication overlaps its compute shows less exposed time M than
 * it communicates; its links there carried it in T): alone where it was
 * timed it gets s = 1; alone where a link is tighter (a thinner uplink,
 * more of its flows on one) its communication stretches by that much. */
static int job_traffic(fs__sched_run *R, int32_t j, fs_err *err) {
  fs_sched *s = R->s;
  fs__sched_js *J = &R->js[j];
  const fs_sched_job *tj = &s->t->jobs[j];
  const fs__sched_prof *p = &s->prof[tj->spec];
  if (tj->gpus <= s->G || p->comm_s <= 0) return 0;
  int rc = timed_overload(R, tj->spec, err);
  if (rc) return rc;
  int64_t g = tj->gpus;
  int32_t *host = malloc((size_t)g * sizeof(*host));
  if (!host) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int64_t x = 0; x < g; x++) host[x] = (int32_t)(J->srv[x / s->G] * s->G + x % s->G);
  rc = fs__sched_traffic(s->t->specs[tj->spec], p, host, s->router, (uint64_t)tj->spec + 1,
                         R->scratch, &J->load, err);
  free(host);
  if (rc || !J->load.n) return rc;
  if (!(J->dem = malloc((size_t)J->load.n * sizeof(*J->dem))))
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  int avg = R->o->contention == FS_CONTENTION_AVERAGE;
  double per = avg ? p->iter_s : p->comm_s, over = avg ? p->over_average : p->over_aligned;
  for (int32_t i = 0; i < J->load.n; i++) J->dem[i] = J->load.bytes[i] / per / over;
  return 0;
}

/* Joins the rate computation: its resources get it. */
int fs__sched_activate(fs__sched_run *R, int32_t j) {
  fs__sched_js *J = &R->js[j];
  J->st = JS_RUNNING;
  if (fs__sched_ocs(R->o->kind)) {
    /* only jobs across ToRs use circuits; within one, its ToR switches */
    J->n_res = J->n_leaf > 1 && fs__sched_comm(R, j) > 0 ? J->n_leaf : 0;
    J->res = J->leaf;
  } else {
    J->n_res = J->load.n;
    J->res = J->load.links;
  }
  for (int32_t k = 0; k < J->n_res; k++)
    if (fs__sched_vec_add(&R->on[J->res[k]], j)) return FS_ENOMEM;
  return 0;
}

static int start(fs__sched_run *R, int32_t j, double t, int32_t *seeds, int32_t *ns,
                 fs_err *err) {
  fs__sched_js *J = &R->js[j];
  J->start = t;
  J->rem = (double)R->s->t->jobs[j].iterations;
  J->rate = 1 / fs__sched_iso(R, j);
  int rc = job_traffic(R, j, err);
  if (rc) return rc;
  double d = R->s->t->ocs_reconfig_s;
  if (R->o->kind == FS_SCHED_LIU_OCS && J->n_leaf > 1 && fs__sched_comm(R, j) > 0 && d > 0) {
    /* (liu-sjf, liu-fifo: the set-up is charged when it takes the circuits) */
    J->st = JS_SETUP; /* its circuits are set up first */
    J->setup = d;
    J->act_at = t + d;
  }
  R->run[R->nrun++] = j;
  if (R->nrun > R->max_running) R->max_running = R->nrun;
  if (J->st == JS_SETUP) return 0;
  if ((rc = fs__sched_activate(R, j))) return fs_err_set(err, rc, "out of memory");
  seeds[(*ns)++] = j;
  return 0;
}

/* A queued job's key: arrival (fifo, oblivious, random: the head blocks
 * the rest; ls, liu-fifo: any that fits starts), estimated duration alone
 * (sjf, liu-ocs, liu-sjf), GPU-time (yu-bco). Fixed while it waits, so the
 * queue is kept in order as jobs arrive. */
static double queue_key(const fs__sched_run *R, int32_t j) {
  fs_sched_kind k = R->o->kind;
  double est = (double)R->s->t->jobs[j].iterations * fs__sched_iso(R, j);
  return k == FS_SCHED_FIFO || k == FS_SCHED_OBLIVIOUS || k == FS_SCHED_RANDOM ||
                 k == FS_SCHED_LS || k == FS_SCHED_LIU_FIFO
             ? (double)j
         : k == FS_SCHED_YU_BCO ? est * (double)R->s->t->jobs[j].gpus
                                : est;
}

/* Inserts j into q[0..*nq) by (key, index). */
static void enqueue(fs__sched_run *R, int32_t *q, int32_t *nq, int32_t j) {
  double key = queue_key(R, j);
  R->key[j] = key;
  int32_t lo = 0, hi = *nq;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2, m = q[mid];
    if (R->key[m] < key || (R->key[m] == key && m < j))
      lo = mid + 1;
    else
      hi = mid;
  }
  memmove(q + lo + 1, q + lo, (size_t)(*nq - lo) * sizeof(*q));
  q[lo] = j;
  (*nq)++;
}

/* Could a job of g GPUs be placed at all (by counts, before looking)? */
static int may_fit(const fs__sched_run *R, int64_t g) {
  int64_t G = R->s->G;
  if (g >= G) return R->full_total >= g / G;
  for (int64_t f = g; f <= G; f++)
    if (R->n_free[f] > 0) return 1;
  return 0;
}

/* Starts what the scheduler lets start now, in queue order; removes it
 * from q. */
static int dispatch(fs__sched_run *R, int32_t *q, int32_t *nq, double t, int32_t *seeds,
                    int32_t *ns, fs_err *err) {
  fs_sched_kind k = R->o->kind;
  int hol = k == FS_SCHED_FIFO || k == FS_SCHED_OBLIVIOUS || k == FS_SCHED_RANDOM;
  int any = 0;
  for (int32_t i = 0; i < *nq; i++) {
    int32_t j = q[i];
    if (!may_fit(R, R->s->t->jobs[j].gpus) || fs__sched_place(R, R->o->kind, j)) {
      if (hol) break;
      continue;
    }
    int rc = start(R, j, t, seeds, ns, err);
    if (rc) return rc;
    any = 1;
  }
  if (!any) return 0;
  int32_t m = 0;
  for (int32_t i = 0; i < *nq; i++)
    if (R->js[q[i]].st == JS_QUEUED) q[m++] = q[i];
  *nq = m;
  return 0;
}

/* Ends job j at t: frees its servers and its resources (rs: the freed
 * resources, whose jobs are re-rated). */
static int finish(fs__sched_run *R, int32_t j, double t, fs__sched_vec *rs) {
  fs__sched_js *J = &R->js[j];
  J->st = JS_DONE;
  J->end = t;
  J->rem = 0;
  fs__sched_unplace(R, j);
  for (int32_t k = 0; k < J->n_res; k++) {
    fs__sched_vec_del(&R->on[J->res[k]], j);
    if (fs__sched_vec_add(rs, J->res[k])) return FS_ENOMEM;
  }
  return 0;
}

/* The next event's time: an arrival, a set-up's end or a job's end. */
static double next_time(const fs__sched_run *R, int32_t next, double t) {
  const fs_sched_trace *T = R->s->t;
  double tn = next < T->n_jobs ? T->jobs[next].arrival_s : INFINITY;
  for (int32_t i = 0; i < R->nrun; i++) {
    const fs__sched_js *J = &R->js[R->run[i]];
    if (J->st == JS_SETUP && J->act_at < tn) tn = J->act_at;
    if (J->st == JS_RUNNING && J->rate > 0 && t + J->rem / J->rate < tn) tn = t + J->rem / J->rate;
  }
  return tn;
}

/* Ends and set-ups due at t; the running list keeps the others. */
static int settle(fs__sched_run *R, double t, fs__sched_vec *rs, int32_t *seeds, int32_t *ns,
                  int32_t *done) {
  const fs_sched_trace *T = R->s->t;
  int32_t m = 0;
  for (int32_t i = 0; i < R->nrun; i++) {
    int32_t j = R->run[i];
    fs__sched_js *J = &R->js[j];
    double it = (double)T->jobs[j].iterations;
    if (J->st == JS_RUNNING && J->rem <= 1e-9 * it) {
      if (finish(R, j, t, rs)) return FS_ENOMEM;
      (*done)++;
      if (R->o->progress) R->o->progress(R->o->ctx, (double)*done / T->n_jobs);
      continue;
    }
    if (J->st == JS_SETUP && J->act_at <= t) {
      if (fs__sched_activate(R, j)) return FS_ENOMEM;
      seeds[(*ns)++] = j;
    }
    R->run[m++] = j;
  }
  R->nrun = m;
  return 0;
}

static int loop(fs__sched_run *R, fs_err *err) {
  fs_sched *s = R->s;
  const fs_sched_trace *T = s->t;
  int32_t n = T->n_jobs, next = 0, done = 0, nq = 0;
  int32_t *q = malloc((size_t)n * sizeof(*q)), *seeds = malloc((size_t)n * sizeof(*seeds));
  fs__sched_vec rs = {NULL, 0, 0};
  int rc = !q || !seeds ? fs_err_set(err, FS_ENOMEM, "out of memory") : 0;
  double t = 0;
  while (!rc && done < n) {
    double tn = next_time(R, next, t);
    if (!isfinite(tn)) {
      rc = fs_err_set(err, FS_EINVAL, "%s: the jobs left cannot run (internal)", T->file);
      break;
    }
    for (int32_t i = 0; i < R->nrun; i++) {
      fs__sched_js *J = &R->js[R->run[i]];
      if (J->st == JS_RUNNING) J->rem -= J->rate * (tn - t);
    }
    t = tn;
    R->now = t;
    R->events++;
    int32_t ns = 0;
    rs.n = 0;
    if ((rc = settle(R, t, &rs, seeds, &ns, &done))) {
      rc = fs_err_set(err, rc, "out of memory");
      break;
    }
    while (!rc && next < n && T->jobs[next].arrival_s <= t) {
      rc = fs__sched_profile_spec(s, T->jobs[next].spec, err);
      R->js[next].st = JS_QUEUED;
      if (!rc) enqueue(R, q, &nq, next);
      next++;
    }
    if (!rc) rc = dispatch(R, q, &nq, t, seeds, &ns, err);
    if (!rc && fs__sched_rerate(R, seeds, ns, rs.v, rs.n))
      rc = fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  FS__FREE_ALL(q, seeds, rs.v);
  return rc;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Nearest-rank p-th percentile of v[0..n) (sorts v). */
static double pct(double *v, int32_t n, double p) {
  qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
  int32_t k = (int32_t)ceil(p * n) - 1;
  return v[k < 0 ? 0 : k];
}

static void link_use(const fs__sched_run *R, fs_sched_result *out) {
  const fs_sched *s = R->s;
  const fs_topo *t = s->topo;
  double *b = R->scratch; /* zero */
  for (int32_t j = 0; j < s->t->n_jobs; j++)
    for (int32_t i = 0; i < R->js[j].load.n; i++)
      b[R->js[j].load.links[i]] += R->js[j].load.bytes[i] * (double)s->t->jobs[j].iterations;
  double sum = 0, mx = 0;
  int32_t nf = 0;
  for (int32_t l = 0; l < t->n_links; l++) {
    fs_node_kind a = t->nodes[t->links[l].from].kind, c = t->nodes[t->links[l].to].kind;
    if (a != FS_NODE_SWITCH && c != FS_NODE_SWITCH && a != FS_NODE_OCS && c != FS_NODE_OCS)
      continue;
    double u = out->makespan_s > 0 ? b[l] / (s->cap[l] * out->makespan_s) : 0;
    sum += u;
    nf++;
    if (u > mx) mx = u;
  }
  memset(b, 0, (size_t)t->n_links * sizeof(*b));
  out->link_util_mean = nf ? sum / nf : 0;
  out->link_util_max = mx;
}

static int results(const fs__sched_run *R, fs_sched_result *out, fs_err *err) {
  const fs_sched *s = R->s;
  const fs_sched_trace *T = s->t;
  int32_t n = T->n_jobs;
  out->jobs = calloc((size_t)n, sizeof(*out->jobs));
  double *v = malloc((size_t)n * sizeof(*v));
  if (!out->jobs || !v) {
    free(v);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  out->n_jobs = n;
  double first = T->jobs[0].arrival_s, last = 0, busy = 0, slow = 0;
  for (int32_t j = 0; j < n; j++) {
    const fs__sched_js *J = &R->js[j];
    fs_sched_job_result *r = &out->jobs[j];
    const fs__sched_prof *p = &s->prof[T->jobs[j].spec];
    r->arrival_s = T->jobs[j].arrival_s;
    r->start_s = J->start;
    r->end_s = J->end;
    r->jct_s = J->end - r->arrival_s;
    r->queue_s = J->start - r->arrival_s;
    r->iso_iter_s = p->iter_s;
    r->comm_s = p->comm_s;
    r->setup_s = J->setup;
    r->mean_iter_s = (J->end - J->start - J->setup) / (double)T->jobs[j].iterations;
    r->servers = J->n_srv;
    r->leaves = J->n_leaf;
    r->first_server = J->srv[0];
    if (J->end > last) last = J->end;
    busy += (double)T->jobs[j].gpus * (J->end - J->start);
    slow += r->mean_iter_s / p->iter_s;
    out->jct_mean_s += r->jct_s / n;
    out->queue_mean_s += r->queue_s / n;
  }
  out->makespan_s = last - first;
  out->gpu_util = out->makespan_s > 0 ? busy / ((double)T->gpus * out->makespan_s) : 0;
  out->slowdown_mean = slow / n;
  for (int32_t j = 0; j < n; j++) v[j] = out->jobs[j].jct_s;
  out->jct_p99_s = pct(v, n, 0.99);
  for (int32_t j = 0; j < n; j++) v[j] = out->jobs[j].queue_s;
  out->queue_p99_s = pct(v, n, 0.99);
  free(v);
  link_use(R, out);
  return 0;
}

/* One run of the event loop; bound: yu-bco's contention bound. */
static int run_once(fs_sched *s, const fs_sched_opts *o, int32_t bound, fs_sched_result *out,
                    int32_t *used, fs_err *err) {
  memset(out, 0, sizeof(*out));
  fs__sched_run R;
  memset(&R, 0, sizeof(R));
  R.s = s;
  R.o = o;
  R.bound = bound;
  int rc = run_alloc(&R, err);
  if (!rc) rc = loop(&R, err);
  if (!rc) rc = results(&R, out, err);
  if (!rc) {
    out->kind = o->kind;
    out->contention = o->contention;
    out->events = R.events;
    out->rerates = R.rerates;
    out->rerated_jobs = R.rerated_jobs;
    out->max_running = R.max_running;
    out->bound = -1;
    *used = R.bound_used;
  }
  run_free(&R);
  if (rc) fs_sched_result_free(out);
  return rc;
}

int fs_sched_run(fs_sched *s, const fs_sched_opts *o, fs_sched_result *out, fs_err *err) {
  memset(out, 0, sizeof(*out));
  if ((unsigned)o->kind >= FS_SCHED_N) return fs_err_set(err, FS_EINVAL, "unknown scheduler");
  if ((unsigned)o->contention > FS_CONTENTION_AVERAGE)
    return fs_err_set(err, FS_EINVAL, "unknown contention model");
  double t0 = fs__now_s(), p0 = s->prof_wall_s;
  int32_t pr0 = s->profiles, used = 0;
  int rc = run_once(s, o, INT32_MAX, out, &used, err);
  /* yu-bco: SJF-BCO's search of the contention bound. The run above took
   * at most `used` jobs across ToRs on one ToR; each smaller bound (a job
   * waits rather than exceed it) is run too and the shortest makespan
   * (then mean JCT; ties keep the larger bound) kept. */
  for (int32_t b = used - 1; !rc && o->kind == FS_SCHED_YU_BCO && b >= 0; b--) {
    fs_sched_result r;
    int32_t u;
    if ((rc = run_once(s, o, b, &r, &u, err))) break;
    if (r.makespan_s < out->makespan_s ||
        (r.makespan_s == out->makespan_s && r.jct_mean_s < out->jct_mean_s)) {
      fs_sched_result_free(out);
      *out = r;
      out->bound = b;
    } else {
      fs_sched_result_free(&r);
    }
  }
  if (rc) {
    fs_sched_result_free(out);
    return rc;
  }
  out->profiles = s->profiles - pr0;
  out->profile_wall_s = s->prof_wall_s - p0;
  out->wall_s = fs__now_s() - t0;
  return 0;
}

void fs_sched_result_free(fs_sched_result *r) {
  if (!r) return;
  free(r->jobs);
  r->jobs = NULL;
  r->n_jobs = 0;
}
