/* The output of `fabricsim jobs` (docs/formats.md, "Job traces"): per
 * scheduler its job completion times, queueing, utilisation and counters
 * as a table, JSON or CSV (one row per scheduler and job), and a trace
 * written back as a trace file (the generator's output). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/base.h"
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
  fprintf(f, "\nwall: ");
  for (int32_t i = 0; i < n; i++)
    fprintf(f, "%s%s %.3f s", i ? ", " : "", fs_sched_kind_name(r[i].kind), r[i].wall_s);
  fprintf(f, " (timing distinct jobs alone: %.3f s)\n", n ? r[0].profile_wall_s : 0.0);
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
