/* The trace generator (sched.h, docs/model-sched.md "Generator"): job
 * sizes and durations with the shape of published GPU cluster traces,
 * Poisson arrivals at an offered load, on a leaf-spine of 8-GPU H100
 * servers (64 GPU ports a ToR, 64 / oversub uplinks). Deterministic in
 * its seed. */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "internal.h"

/* GPUs per job and their probabilities: most jobs take one GPU, sizes are
 * powers of two and jobs beyond 64 GPUs are rare, the shape Jeon et al.
 * (USENIX ATC 2019, Philly) and Hu et al. (SC'21, Helios) report; the
 * numbers are ours (docs/model-sched.md says so). */
static const struct {
  int64_t gpus;
  double p;
} sizes[] = {{1, 0.50}, {2, 0.10}, {4, 0.12}, {8, 0.15}, {16, 0.06},
             {32, 0.04}, {64, 0.02}, {128, 0.007}, {256, 0.003}};
#define N_SIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

/* Durations alone: log-normal, median 30 min, sigma 1.6 (a heavy tail:
 * the 99th percentile near 20 h), within [2 min, 48 h]. */
#define DUR_MEDIAN_S 1800.0
#define DUR_SIGMA 1.0

static double normal(fs__rng *r) { /* Box-Muller */
  double u = fs__rng_unit(r), v = fs__rng_unit(r);
  return sqrt(-2 * log(1 - u)) * cos(6.283185307179586 * v);
}

typedef struct draw {
  int64_t gpus;
  const char *model;
  int tp;
  double dur;
} draw;

static void draw_job(fs__rng *r, int64_t cap, draw *d) {
  double u = fs__rng_unit(r), acc = 0;
  d->gpus = sizes[N_SIZES - 1].gpus;
  for (int i = 0; i < N_SIZES; i++)
    if (u < (acc += sizes[i].p)) {
      d->gpus = sizes[i].gpus;
      break;
    }
  while (d->gpus > cap) d->gpus /= 2;
  int big = fs__rng_unit(r) < 0.5;
  if (d->gpus < 8) {
    d->model = big ? "gpt-1.3b" : "gpt-350m";
    d->tp = 1;
  } else if (d->gpus == 8) {
    d->model = big ? "gpt-6.7b" : "gpt-1.3b";
    d->tp = big ? 8 : 1;
  } else {
    d->model = big ? "gpt-13b" : "gpt-6.7b";
    d->tp = 8;
  }
  d->dur = DUR_MEDIAN_S * exp(DUR_SIGMA * normal(r));
  d->dur = d->dur < 120 ? 120 : d->dur > 86400 ? 86400 : d->dur;
}

/* The trace's text, iterations 1 for now (set once the jobs are timed). */
static char *trace_text(const fs_sched_gen_opts *o, double load, int32_t oversub, const draw *d,
                        const double *arr) {
  size_t cap = 1024 + (size_t)o->jobs * 200, len = 0;
  char *s = malloc(cap);
  if (!s) return NULL;
  len += (size_t)snprintf(
      s + len, cap - len,
      "{\"description\":\"generated: %d jobs, %lld GPUs, load %g, seed %llu, %d:1 "
      "oversubscribed\",\"cluster\":{"
      "\"topology\":{\"type\":\"leafspine\",\"leaves\":%lld,\"spines\":%d,\"hosts_per_leaf\":64,"
      "\"host_gbps\":400,\"fabric_gbps\":400},\"hardware\":{\"gpu_tflops\":989,"
      "\"mfu_matmul\":0.5,\"hbm_gib\":80,\"gpus_per_node\":8,\"nvlink_gbps\":3600,"
      "\"nic_gbps\":400}},\"jobs\":[",
      o->jobs, (long long)o->gpus, load, (unsigned long long)o->seed, oversub,
      (long long)(o->gpus / 64), 64 / oversub);
  for (int32_t i = 0; i < o->jobs; i++)
    len += (size_t)snprintf(s + len, cap - len,
                            "%s{\"id\":\"j%d\",\"arrival_s\":%.3f,\"model\":\"%s\","
                            "\"parallelism\":{\"tp\":%d},\"gpus\":%lld,\"iterations\":1}",
                            i ? "," : "", i, arr[i], d[i].model, d[i].tp, (long long)d[i].gpus);
  snprintf(s + len, cap - len, "]}");
  return s;
}

int fs_sched_generate(const fs_sched_gen_opts *o, fs_sched_trace **out, fs_err *err) {
  if (o->jobs < 1 || o->jobs > 1000000)
    return fs_err_set(err, FS_EINVAL, "--generate must be an integer in [1, 1000000], got %d",
                      o->jobs);
  if (o->gpus < 128 || o->gpus > 65536 || o->gpus % 64)
    return fs_err_set(err, FS_EINVAL,
                      "--gpus must be a multiple of 64 (a ToR of 8 8-GPU servers) in [128, "
                      "65536], got %lld",
                      (long long)o->gpus);
  double load = o->load > 0 ? o->load : 0.8;
  if (!(load <= 10)) return fs_err_set(err, FS_EINVAL, "--load must be in (0, 10], got %g", load);
  int32_t oversub = o->oversub ? o->oversub : 2;
  if (oversub < 1 || oversub > 64 || (oversub & (oversub - 1)))
    return fs_err_set(err, FS_EINVAL,
                      "--oversubscription must be 1, 2, 4, 8, 16, 32 or 64, got %d", oversub);
  fs__rng r;
  fs__rng_seed(&r, o->seed);
  draw *d = malloc((size_t)o->jobs * sizeof(*d));
  double *arr = malloc((size_t)o->jobs * sizeof(*arr));
  if (!d || !arr) {
    FS__FREE_ALL(d, arr);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  double work = 0; /* GPU-seconds offered */
  for (int32_t i = 0; i < o->jobs; i++) {
    draw_job(&r, o->gpus / 4, &d[i]);
    work += (double)d[i].gpus * d[i].dur;
  }
  /* Poisson arrivals: rate = load x GPUs / mean GPU-seconds of a job */
  double lambda = load * (double)o->gpus / (work / o->jobs), t = 0;
  for (int32_t i = 0; i < o->jobs; i++) {
    arr[i] = round(t * 1000) / 1000;
    t += -log(1 - fs__rng_unit(&r)) / lambda;
  }
  char *text = trace_text(o, load, oversub, d, arr);
  fs_sched_trace *tr = NULL;
  int rc = text ? fs_sched_trace_parse(text, strlen(text), "generated", &tr, err)
                : fs_err_set(err, FS_ENOMEM, "out of memory");
  free(text);
  fs__sched_prof *p = rc ? NULL : calloc((size_t)tr->n_specs, sizeof(*p));
  if (!rc && !p) rc = fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int32_t k = 0; !rc && k < tr->n_specs; k++) rc = fs__sched_profile(tr->specs[k], &p[k], err);
  /* iterations: the drawn duration over the job's iteration alone (the
   * jobs are in arrival order, which is the drawing order) */
  for (int32_t i = 0; !rc && i < tr->n_jobs; i++) {
    double it = round(d[i].dur / p[tr->jobs[i].spec].iter_s);
    tr->jobs[i].iterations = it < 1 ? 1 : (int64_t)it;
  }
  FS__FREE_ALL(d, arr, p);
  if (rc) {
    fs_sched_trace_free(tr);
    return rc;
  }
  *out = tr;
  return 0;
}
