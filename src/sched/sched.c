/* Jobs arriving over time on one cluster (sched.h, docs/model-sched.md):
 * the event loop (arrivals, starts, circuit set-ups, ends), the queue
 * order of each scheduler and the re-rate of only the jobs a change
 * touches. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "sched_state.h"

static const char *const kind_names[FS_SCHED_N] = {
    "fifo", "sjf", "oblivious", "yu-bco", "liu-ocs", "random", "ls", "liu-sjf", "liu-fifo"};

const char *fs_sched_kind_name(fs_sched_kind k) {
  return (unsigned)k < FS_SCHED_N ? kind_names[k] : "?";
}

int fs_sched_kind_parse(const char *name, fs_sched_kind *out) {
  for (int k = 0; k < FS_SCHED_N; k++)
    if (name && strcmp(name, kind_names[k]) == 0) {
      *out = (fs_sched_kind)k;
      return 0;
    }
  return FS_EINVAL;
}

static const char *const contention_names[] = {"aligned", "average"};

const char *fs_sched_contention_name(fs_sched_contention c) {
  return (unsigned)c < 2 ? contention_names[c] : "?";
}

int fs_sched_contention_parse(const char *name, fs_sched_contention *out) {
  for (int k = 0; k < 2; k++)
    if (name && strcmp(name, contention_names[k]) == 0) {
      *out = (fs_sched_contention)k;
      return 0;
    }
  return FS_EINVAL;
}

void fs_sched_free(fs_sched *s) {
  if (!s) return;
  fs_router_free(s->router);
  FS__FREE_ALL(s->leaf_of, s->leaf_start, s->leaf_srv, s->cap, s->prof);
  free(s);
}

/* The servers of each ToR, ascending (counting sort). */
static int leaf_lists(fs_sched *s, fs_err *err) {
  s->leaf_start = calloc((size_t)s->n_leaf + 1, sizeof(*s->leaf_start));
  s->leaf_srv = malloc((size_t)s->n_srv * sizeof(*s->leaf_srv));
  if (!s->leaf_start || !s->leaf_srv) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int32_t sv = 0; sv < s->n_srv; sv++) s->leaf_start[s->leaf_of[sv] + 1]++;
  for (int32_t l = 0; l < s->n_leaf; l++) s->leaf_start[l + 1] += s->leaf_start[l];
  int32_t *fill = calloc((size_t)s->n_leaf, sizeof(*fill));
  if (!fill) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int32_t sv = 0; sv < s->n_srv; sv++) {
    int32_t l = s->leaf_of[sv];
    s->leaf_srv[s->leaf_start[l] + fill[l]++] = sv;
  }
  free(fill);
  return 0;
}

int fs_sched_new(const fs_sched_trace *t, fs_sched **out, fs_err *err) {
  if (!t->n_specs) return fs_err_set(err, FS_EINVAL, "%s: no jobs", t->file);
  fs_sched *s = calloc(1, sizeof(*s));
  if (!s) return fs_err_set(err, FS_ENOMEM, "out of memory");
  s->t = t;
  s->topo = t->specs[0]->topo;
  s->G = t->gpus_per_server;
  s->n_srv = (int32_t)(s->topo->n_hosts / s->G);
  s->prof = calloc((size_t)t->n_specs, sizeof(*s->prof));
  s->cap = malloc((size_t)s->topo->n_links * sizeof(*s->cap));
  int rc = !s->prof || !s->cap ? fs_err_set(err, FS_ENOMEM, "out of memory") : 0;
  if (!rc) rc = fs_router_new(s->topo, &s->router, err);
  if (!rc) rc = fs__sched_leaves(s, err);
  if (!rc) rc = leaf_lists(s, err);
  if (rc) {
    fs_sched_free(s);
    return rc;
  }
  for (int32_t l = 0; l < s->topo->n_links; l++) s->cap[l] = s->topo->links[l].capacity_bps / 8;
  *out = s;
  return 0;
}

int fs__sched_profile_spec(fs_sched *s, int32_t spec, fs_err *err) {
  if (s->prof[spec].done) return 0;
  double t0 = fs__now_s();
  int rc = fs__sched_profile(s->t->specs[spec], &s->prof[spec], err);
  s->prof_wall_s += fs__now_s() - t0;
  s->profiles++;
  return rc;
}

/* ---- the running jobs' resources ---------------------------------------- */

int fs__sched_vec_add(fs__sched_vec *v, int32_t x) {
  if (v->n == v->cap) {
    int32_t nc = v->cap ? 2 * v->cap : 4;
    int32_t *nv = realloc(v->v, (size_t)nc * sizeof(*nv));
    if (!nv) return FS_ENOMEM;
    v->v = nv;
    v->cap = nc;
  }
  v->v[v->n++] = x;
  return 0;
}

void fs__sched_vec_del(fs__sched_vec *v, int32_t x) {
  for (int32_t i = 0; i < v->n; i++)
    if (v->v[i] == x) {
      memmove(v->v + i, v->v + i + 1, (size_t)(v->n - i - 1) * sizeof(*v->v));
      v->n--;
      return;
    }
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Adds resource r's jobs not yet in the component (once per resource). */
static void visit_resource(fs__sched_run *R, int32_t r, int32_t *n) {
  if (R->rstamp[r] == R->cur) return;
  R->rstamp[r] = R->cur;
  for (int32_t m = 0; m < R->on[r].n; m++) {
    int32_t x = R->on[r].v[m];
    if (R->stamp[x] != R->cur) {
      R->stamp[x] = R->cur;
      R->comp[(*n)++] = x;
    }
  }
}

/* The jobs connected to the seeds through shared resources (BFS), sorted
 * by job index. */
static int32_t component(fs__sched_run *R, const int32_t *seeds, int32_t ns, const int32_t *rseeds,
                         int32_t nrs) {
  int32_t n = 0, head = 0;
  R->cur++;
  for (int32_t i = 0; i < ns; i++)
    if (R->js[seeds[i]].st == JS_RUNNING && R->stamp[seeds[i]] != R->cur) {
      R->stamp[seeds[i]] = R->cur;
      R->comp[n++] = seeds[i];
    }
  for (int32_t i = 0; i <= nrs; i++) {
    for (; head < n; head++) {
      const fs__sched_js *J = &R->js[R->comp[head]];
      for (int32_t k = 0; k < J->n_res; k++) visit_resource(R, J->res[k], &n);
    }
    if (i < nrs) visit_resource(R, rseeds[i], &n);
  }
  /* job order: insertion sort is enough for the small components, qsort
   * for the rest */
  for (int32_t i = 1; i < n && n < 64; i++)
    for (int32_t k = i; k > 0 && R->comp[k - 1] > R->comp[k]; k--) {
      int32_t x = R->comp[k];
      R->comp[k] = R->comp[k - 1];
      R->comp[k - 1] = x;
    }
  if (n >= 64) qsort(R->comp, (size_t)n, sizeof(*R->comp), cmp_i32);
  return n;
}

double fs__sched_iso(const fs__sched_run *R, int32_t j) {
  return R->s->prof[R->s->t->jobs[j].spec].iter_s;
}
double fs__sched_comm(const fs__sched_run *R, int32_t j) {
  return R->s->prof[R->s->t->jobs[j].spec].comm_s;
}

/* Electrical fabrics: weighted max-min of the communication speeds; only
 * communication stretches: an iteration takes C + M / s (aligned), or of
 * the mean rates: T / s (average). */
static int rate_links(fs__sched_run *R, const int32_t *c, int32_t n) {
  for (int32_t i = 0; i < n; i++) {
    const fs__sched_js *J = &R->js[c[i]];
    R->dl[i] = (fs__sched_dem){J->n_res, J->res, J->dem};
  }
  if (fs__sched_fill(n, R->dl, R->s->cap, R->sp, &R->fb)) return FS_ENOMEM;
  for (int32_t i = 0; i < n; i++) {
    double T = fs__sched_iso(R, c[i]), M = fs__sched_comm(R, c[i]);
    R->js[c[i]].rate = R->o->contention == FS_CONTENTION_AVERAGE ? R->sp[i] / T
                                                                  : 1 / (T - M + M / R->sp[i]);
  }
  return 0;
}

static int by_prio(const void *a, const void *b) {
  const fs__sched_prio *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return (x->j > y->j) - (x->j < y->j);
}

/* liu-ocs: each ToR's circuits are time-shared: a job holds them for its
 * communication M (plus a reconfiguration when the ToR serves several
 * jobs) each iteration; the jobs get that time in order of shortest
 * remaining time (SWRTF, weights 1), each as much as it can use. */
static void rate_ocs(fs__sched_run *R, const int32_t *c, int32_t n) {
  fs__sched_prio *p = R->prio;
  double delta = R->s->t->ocs_reconfig_s;
  for (int32_t i = 0; i < n; i++) p[i] = (fs__sched_prio){R->js[c[i]].rem * fs__sched_iso(R, c[i]), c[i]};
  qsort(p, (size_t)n, sizeof(*p), by_prio);
  for (int32_t i = 0; i < n; i++)
    for (int32_t k = 0; k < R->js[p[i].j].n_res; k++) R->fb.frozen[R->js[p[i].j].res[k]] = 1;
  for (int32_t i = 0; i < n; i++) {
    fs__sched_js *J = &R->js[p[i].j];
    double T = fs__sched_iso(R, p[i].j), M = fs__sched_comm(R, p[i].j), d = 0;
    for (int32_t k = 0; k < J->n_res; k++)
      if (R->on[J->res[k]].n > 1) d = delta;
    double r = 1 / (T + d);
    for (int32_t k = 0; k < J->n_res && M + d > 0; k++) {
      double room = R->fb.frozen[J->res[k]] / (M + d);
      if (room < r) r = room;
    }
    if (r < 0) r = 0;
    for (int32_t k = 0; k < J->n_res; k++) R->fb.frozen[J->res[k]] -= r * (M + d);
    J->rate = r;
  }
  for (int32_t i = 0; i < n; i++)
    for (int32_t k = 0; k < R->js[p[i].j].n_res; k++) R->fb.frozen[R->js[p[i].j].res[k]] = 0;
}

/* liu-sjf, liu-fifo (Liu's inter-job baselines): a ToR's circuits serve
 * one job at a time, from when it takes them to its end (no interleaving
 * of one job's computation with another's communication). A job holding
 * its circuits keeps them; the others, in queue order (shortest job first
 * or arrival), take theirs when every ToR they span is free, paying one
 * reconfiguration d then (charged as d / T more iterations at 1 / T);
 * until then they hold their GPUs and wait (rate 0). The wait and the
 * reconfiguration are its set-up (setup_s), as liu-ocs's d at its start. */
static void rate_ocs_exclusive(fs__sched_run *R, const int32_t *c, int32_t n) {
  fs__sched_prio *p = R->prio;
  double delta = R->s->t->ocs_reconfig_s;
  for (int32_t i = 0; i < n; i++) {
    const fs__sched_js *J = &R->js[c[i]];
    p[i] = (fs__sched_prio){J->hold ? -1 : R->key[c[i]], c[i]};
  }
  qsort(p, (size_t)n, sizeof(*p), by_prio);
  for (int32_t i = 0; i < n; i++)
    for (int32_t k = 0; k < R->js[p[i].j].n_res; k++) R->fb.frozen[R->js[p[i].j].res[k]] = 1;
  for (int32_t i = 0; i < n; i++) {
    fs__sched_js *J = &R->js[p[i].j];
    double T = fs__sched_iso(R, p[i].j);
    int ok = 1;
    for (int32_t k = 0; k < J->n_res; k++) ok &= R->fb.frozen[J->res[k]] > 0;
    if (!ok) {
      J->rate = 0;
      continue;
    }
    for (int32_t k = 0; k < J->n_res; k++) R->fb.frozen[J->res[k]] = 0;
    if (J->n_res && !J->hold) {
      J->hold = 1;
      J->rem += delta / T;
      J->setup = R->now - J->start + delta;
    }
    J->rate = 1 / T;
  }
  for (int32_t i = 0; i < n; i++)
    for (int32_t k = 0; k < R->js[p[i].j].n_res; k++) R->fb.frozen[R->js[p[i].j].res[k]] = 0;
}

int fs__sched_rerate(fs__sched_run *R, const int32_t *seeds, int32_t ns, const int32_t *rseeds,
                     int32_t nrs) {
  int32_t n;
  if (R->o->full_rerate) {
    n = 0;
    for (int32_t j = 0; j < R->s->t->n_jobs; j++)
      if (R->js[j].st == JS_RUNNING) R->comp[n++] = j;
  } else {
    n = component(R, seeds, ns, rseeds, nrs);
  }
  if (!n) return 0;
  R->rerates++;
  R->rerated_jobs += n;
  if (R->o->kind == FS_SCHED_LIU_OCS) {
    rate_ocs(R, R->comp, n);
    return 0;
  }
  if (fs__sched_ocs(R->o->kind)) {
    rate_ocs_exclusive(R, R->comp, n);
    return 0;
  }
  return rate_links(R, R->comp, n);
}
