/* The output of `fabricsim jobs` (docs/formats.md, "Job traces"): per
 * scheduler its job completion times, queueing, utilisation and counters
 * as a table, JSON or CSV (one row per scheduler and job), and a trace
 * written back as a trace file (the generator's output); the HTML page
 * with a timeline (Gantt) of the jobs per scheduler. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/html.h"
#include "fabricsim/report.h"

static void num(FILE *f, double v) {
  char b[32];
  fs__fmt_num(b, v);
  fputs(b, f);
}

static void head(FILE *f, const fs_sched_trace *t, const char *lead) {
  fprintf(f, "%sfabricsim jobs: %s: %d jobs (%d distinct), %lld GPUs in %lld-GPU servers\n", lead,
          t->file, t->n_jobs, t->n_specs, (long long)t->gpus, (long long)t->gpus_per_server);
  if (t->specs[0]->topo) fprintf(f, "%stopology: %s\n", lead, t->specs[0]->topo->spec);
}

int fs_report_sched_text(FILE *f, const fs_sched_trace *t, const fs_sched_result *r, int32_t n) {
  head(f, t, "");
  if (n) fprintf(f, "contention: %s (docs/model-sched.md)\n", fs_sched_contention_name(r[0].contention));
  fprintf(f, "\n%-10s %12s %12s %12s %12s %12s %8s %8s %9s %9s %8s %9s\n", "scheduler",
          "jct mean s", "jct p99 s", "queue mean", "queue p99", "makespan s", "slowdn",
          "gpu util", "link mean", "link max", "events", "rerated");
  for (int32_t i = 0; i < n; i++) {
    const fs_sched_result *x = &r[i];
    fprintf(f, "%-10s %12.1f %12.1f %12.1f %12.1f %12.1f %8.3f %7.1f%% %8.1f%% %8.1f%% %8lld %9lld\n",
            fs_sched_kind_name(x->kind), x->jct_mean_s, x->jct_p99_s, x->queue_mean_s,
            x->queue_p99_s, x->makespan_s, x->slowdown_mean, 100 * x->gpu_util,
            100 * x->link_util_mean, 100 * x->link_util_max, (long long)x->events,
            (long long)x->rerated_jobs);
  }
  for (int32_t i = 0; i < n; i++)
    if (r[i].kind == FS_SCHED_YU_BCO && r[i].bound >= 0)
      fprintf(f, "yu-bco: contention bound %d (a job waits rather than take a ToR that more "
                 "jobs across ToRs already use; the bound with the shortest makespan)\n",
              r[i].bound);
  /* the jobs one by one, for a trace short enough to read */
  for (int32_t i = 0; i < n && t->n_jobs <= 20; i++) {
    fprintf(f, "\n%s:\n%-12s %6s %10s %10s %10s %10s %10s %10s %8s %7s\n",
            fs_sched_kind_name(r[i].kind), "job", "gpus", "arrival s", "start s", "end s",
            "jct s", "iter ms", "alone ms", "servers", "tors");
    for (int32_t j = 0; j < t->n_jobs; j++) {
      const fs_sched_job_result *y = &r[i].jobs[j];
      fprintf(f, "%-12s %6lld %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %8d %7d\n",
              t->jobs[j].id, (long long)t->jobs[j].gpus, y->arrival_s, y->start_s, y->end_s,
              y->jct_s, 1e3 * y->mean_iter_s, 1e3 * y->iso_iter_s, y->servers, y->leaves);
    }
  }
  return ferror(f) ? FS_EIO : 0;
}

static void json_job(FILE *f, const fs_sched_job *tj, const fs_sched_job_result *y) {
  fputs("{\"id\":", f);
  fs__fput_json_str(f, tj->id);
  fprintf(f, ",\"gpus\":%lld,\"iterations\":%lld,\"arrival_s\":", (long long)tj->gpus,
          (long long)tj->iterations);
  num(f, y->arrival_s);
  fputs(",\"start_s\":", f);
  num(f, y->start_s);
  fputs(",\"end_s\":", f);
  num(f, y->end_s);
  fputs(",\"jct_s\":", f);
  num(f, y->jct_s);
  fputs(",\"queue_s\":", f);
  num(f, y->queue_s);
  fputs(",\"iteration_s\":", f);
  num(f, y->mean_iter_s);
  fputs(",\"alone_iteration_s\":", f);
  num(f, y->iso_iter_s);
  fputs(",\"alone_comm_s\":", f);
  num(f, y->comm_s);
  fputs(",\"setup_s\":", f);
  num(f, y->setup_s);
  fprintf(f, ",\"servers\":%d,\"first_server\":%d,\"tors\":%d}", y->servers, y->first_server,
          y->leaves);
}

int fs_report_sched_json(FILE *f, const fs_sched_trace *t, const fs_sched_result *r, int32_t n) {
  fputs("{\"trace\":", f);
  fs__fput_json_str(f, t->file);
  fprintf(f, ",\"jobs\":%d,\"distinct_jobs\":%d,\"gpus\":%lld,\"gpus_per_server\":%lld,", t->n_jobs,
          t->n_specs, (long long)t->gpus, (long long)t->gpus_per_server);
  fputs("\"topology\":", f);
  fs__fput_json_str(f, t->specs[0]->topo ? t->specs[0]->topo->spec : "");
  fprintf(f, ",\"contention\":\"%s\"", n ? fs_sched_contention_name(r[0].contention) : "");
  fputs(",\"schedulers\":[", f);
  for (int32_t i = 0; i < n; i++) {
    const fs_sched_result *x = &r[i];
    fprintf(f, "%s{\"scheduler\":\"%s\",\"jct_mean_s\":", i ? "," : "", fs_sched_kind_name(x->kind));
    num(f, x->jct_mean_s);
    fputs(",\"jct_p99_s\":", f);
    num(f, x->jct_p99_s);
    fputs(",\"queue_mean_s\":", f);
    num(f, x->queue_mean_s);
    fputs(",\"queue_p99_s\":", f);
    num(f, x->queue_p99_s);
    fputs(",\"makespan_s\":", f);
    num(f, x->makespan_s);
    fputs(",\"slowdown_mean\":", f);
    num(f, x->slowdown_mean);
    fputs(",\"gpu_util\":", f);
    num(f, x->gpu_util);
    fputs(",\"link_util_mean\":", f);
    num(f, x->link_util_mean);
    fputs(",\"link_util_max\":", f);
    num(f, x->link_util_max);
    if (x->kind == FS_SCHED_YU_BCO) fprintf(f, ",\"contention_bound\":%d", x->bound);
    fprintf(f, ",\"max_running\":%d,\"events\":%lld,\"rerates\":%lld,\"rerated_jobs\":%lld,",
            x->max_running, (long long)x->events, (long long)x->rerates,
            (long long)x->rerated_jobs);
    fputs("\"wall_s\":", f);
    num(f, x->wall_s);
    fputs(",\"jobs\":[", f);
    for (int32_t j = 0; j < t->n_jobs; j++) {
      if (j) fputc(',', f);
      json_job(f, &t->jobs[j], &x->jobs[j]);
    }
    fputs("]}", f);
  }
  fputs("]}\n", f);
  return ferror(f) ? FS_EIO : 0;
}

int fs_report_sched_csv(FILE *f, const fs_sched_trace *t, const fs_sched_result *r, int32_t n) {
  fputs("scheduler,job,gpus,iterations,arrival_s,start_s,end_s,jct_s,queue_s,iteration_s,"
        "alone_iteration_s,servers,tors\n",
        f);
  for (int32_t i = 0; i < n; i++)
    for (int32_t j = 0; j < t->n_jobs; j++) {
      const fs_sched_job_result *y = &r[i].jobs[j];
      fprintf(f, "%s,", fs_sched_kind_name(r[i].kind));
      fs__csv_field(f, t->jobs[j].id);
      fprintf(f, ",%lld,%lld", (long long)t->jobs[j].gpus, (long long)t->jobs[j].iterations);
      const double v[] = {y->arrival_s, y->start_s, y->end_s, y->jct_s, y->queue_s,
                          y->mean_iter_s, y->iso_iter_s};
      for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
        fputc(',', f);
        num(f, v[k]);
      }
      fprintf(f, ",%d,%d\n", y->servers, y->leaves);
    }
  return ferror(f) ? FS_EIO : 0;
}

int fs_report_sched_trace_json(FILE *f, const fs_sched_trace *t) {
  fputs("{\n", f);
  if (t->description) {
    fputs("  \"description\": ", f);
    fs__fput_json_str(f, t->description);
    fputs(",\n", f);
  }
  if (t->scheduler != FS_SCHED_FIFO)
    fprintf(f, "  \"scheduler\": \"%s\",\n", fs_sched_kind_name(t->scheduler));
  if (t->contention != FS_CONTENTION_ALIGNED)
    fprintf(f, "  \"contention\": \"%s\",\n", fs_sched_contention_name(t->contention));
  fprintf(f, "  \"cluster\": %s,\n  \"jobs\": [\n", t->cluster);
  for (int32_t j = 0; j < t->n_jobs; j++) {
    const fs_sched_job *x = &t->jobs[j];
    fputs("    {\"id\": ", f);
    fs__fput_json_str(f, x->id);
    fputs(", \"arrival_s\": ", f);
    num(f, x->arrival_s);
    fprintf(f, ", \"model\": %s, \"training\": %s, \"parallelism\": %s, \"gpus\": %lld, "
               "\"iterations\": %lld}%s\n",
            x->model, x->training, x->parallelism, (long long)x->gpus, (long long)x->iterations,
            j + 1 < t->n_jobs ? "," : "");
  }
  fputs("  ]\n}\n", f);
  return ferror(f) ? FS_EIO : 0;
}

/* The jobs drawn on a scheduler's timeline at most (the first by arrival):
 * a row each, so the page stays readable and near a megabyte. */
#define GANTT_MAX_JOBS 200

/* One scheduler's timeline: a row per job, queued (arrival to start),
 * circuits set up (liu-ocs; liu-sjf, liu-fifo: waited for, then set up)
 * and running (to its end). */
static int sched_gantt(fs_html *h, const fs_sched_trace *t, const fs_sched_result *x,
                       double t_end) {
  int32_t nj = t->n_jobs < GANTT_MAX_JOBS ? t->n_jobs : GANTT_MAX_JOBS;
  const char **rows = malloc((size_t)nj * sizeof(*rows));
  char(*names)[96] = malloc((size_t)nj * sizeof(*names));
  fs_html_span *sp = malloc((size_t)nj * 3 * sizeof(*sp));
  if (!rows || !names || !sp) {
    FS__FREE_ALL(rows, names, sp);
    return FS_ENOMEM;
  }
  static const char *const classes[3] = {"queued", "circuit set-up", "running"};
  int64_t ns = 0;
  for (int32_t j = 0; j < nj; j++) {
    const fs_sched_job_result *y = &x->jobs[j];
    snprintf(names[j], sizeof(names[j]), "%s (%lld GPU%s)", t->jobs[j].id,
             (long long)t->jobs[j].gpus, t->jobs[j].gpus > 1 ? "s" : "");
    rows[j] = names[j];
    if (y->queue_s > 0) sp[ns++] = (fs_html_span){j, 0, y->arrival_s, y->queue_s, NULL};
    if (y->setup_s > 0) sp[ns++] = (fs_html_span){j, 1, y->start_s, y->setup_s, NULL};
    sp[ns++] = (fs_html_span){j, 2, y->start_s + y->setup_s, y->end_s - y->start_s - y->setup_s,
                              NULL};
  }
  char title[160];
  snprintf(title, sizeof(title), "%s: the jobs over time%s", fs_sched_kind_name(x->kind),
           nj < t->n_jobs ? " (the first 200 by arrival)" : "");
  fs_html_gantt(h, title, rows, nj, classes, 3, sp, ns, t_end, NULL, 0);
  FS__FREE_ALL(rows, names, sp);
  return 0;
}

enum { PAGE_COLS = 10 };

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Each scheduler's job completion times as a CDF, one line each. */
static int jct_cdf(fs_html *h, const fs_sched_trace *t, const fs_sched_result *r, int32_t n) {
  int32_t nj = t->n_jobs;
  double *x = malloc((size_t)n * (size_t)nj * sizeof(*x));
  double *y = malloc((size_t)nj * sizeof(*y));
  fs_html_series *sr = malloc((size_t)n * sizeof(*sr));
  if (!x || !y || !sr) {
    FS__FREE_ALL(x, y, sr);
    return FS_ENOMEM;
  }
  for (int32_t j = 0; j < nj; j++) y[j] = (j + 1.0) / nj;
  for (int32_t i = 0; i < n; i++) {
    double *xi = x + (size_t)i * (size_t)nj;
    for (int32_t j = 0; j < nj; j++) xi[j] = r[i].jobs[j].jct_s;
    qsort(xi, (size_t)nj, sizeof(*xi), cmp_dbl);
    sr[i] = (fs_html_series){fs_sched_kind_name(r[i].kind), xi, y, nj, 0, 1};
  }
  fs_html_axes ax = {"job completion time CDF", "job completion time (s)", "fraction of jobs",
                     0, 0, 0, 0};
  fs_html_lines(h, &ax, sr, n);
  FS__FREE_ALL(x, y, sr);
  return 0;
}

int fs_report_sched_html(FILE *f, const fs_sched_trace *t, const fs_sched_result *r, int32_t n) {
  char title[400], sub[1024];
  snprintf(title, sizeof(title), "fabricsim jobs: %s", t->file);
  snprintf(sub, sizeof(sub), "%d jobs (%d distinct) on %lld GPUs in %lld-GPU servers; %s",
           t->n_jobs, t->n_specs, (long long)t->gpus, (long long)t->gpus_per_server,
           t->specs[0]->topo ? t->specs[0]->topo->spec : "");
  static const char *const head[PAGE_COLS] = {
      "scheduler", "JCT mean (s)", "JCT p99 (s)", "queue mean (s)", "queue p99 (s)",
      "makespan (s)", "slowdown", "GPU util", "link util mean", "link util max"};
  char cells[FS_SCHED_N][PAGE_COLS][32];
  const char *cp[FS_SCHED_N * PAGE_COLS];
  const char *labels[FS_SCHED_N];
  double jct[FS_SCHED_N];
  fs_html h;
  fs_html_begin(&h, f, title, sub);
  for (int32_t i = 0; i < n && i < FS_SCHED_N; i++) {
    const fs_sched_result *x = &r[i];
    const double v[PAGE_COLS - 1] = {x->jct_mean_s,   x->jct_p99_s,  x->queue_mean_s,
                                     x->queue_p99_s,  x->makespan_s, x->slowdown_mean,
                                     100 * x->gpu_util, 100 * x->link_util_mean,
                                     100 * x->link_util_max};
    snprintf(cells[i][0], 32, "%s", fs_sched_kind_name(x->kind));
    for (int c = 0; c < PAGE_COLS - 1; c++)
      snprintf(cells[i][c + 1], 32, c == 5 ? "%.4f" : c >= 6 ? "%.2f %%" : "%.1f", v[c]);
    for (int c = 0; c < PAGE_COLS; c++) cp[i * PAGE_COLS + c] = cells[i][c];
    labels[i] = fs_sched_kind_name(x->kind);
    jct[i] = x->jct_mean_s;
  }
  fs_html_section(&h, "Schedulers",
                  "Job completion time (end - arrival), queueing (start - arrival), makespan "
                  "(last end - first arrival), mean slowdown (iteration while running over "
                  "the iteration alone), GPU and link utilisation over the makespan "
                  "(docs/model-sched.md).");
  fs_html_table(&h, head, PAGE_COLS, cp, n);
  fs_html_bars(&h, "mean job completion time", "s", labels, jct, n);
  int rc = jct_cdf(&h, t, r, n);
  fs_html_section(&h, "Timelines",
                  "One row per job: queued from its arrival to its start, then running "
                  "(liu-ocs: its circuits set up first when it spans several ToRs; liu-sjf, "
                  "liu-fifo: waiting on its GPUs for circuits another job holds, then set up).");
  /* one time axis for every scheduler, so the timelines compare */
  double t_end = 0;
  int32_t nj = t->n_jobs < GANTT_MAX_JOBS ? t->n_jobs : GANTT_MAX_JOBS;
  for (int32_t i = 0; i < n; i++)
    for (int32_t j = 0; j < nj; j++)
      if (r[i].jobs[j].end_s > t_end) t_end = r[i].jobs[j].end_s;
  for (int32_t i = 0; i < n && !rc; i++) rc = sched_gantt(&h, t, &r[i], t_end);
  int end = fs_html_end(&h);
  return rc ? rc : end;
}
