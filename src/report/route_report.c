/* The outputs of `fabricsim route`: each routing's metric
 * (docs/model-route.md) side by side, as a table, as JSON and as an HTML
 * page of bar charts. They read the columns the CLI filled (one per
 * optimiser; ECMP's worst, median and best seed) and the jobs of the
 * traffic: O(columns x (8 + jobs)) lines, a few dozen in practice. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/html.h"
#include "fabricsim/report.h"

static void num(char *buf, double v, int ms) {
  if (!isfinite(v))
    snprintf(buf, 32, "-");
  else
    snprintf(buf, 32, ms ? "%.4g" : "%.4f", v);
}

int fs_report_route_table(FILE *f, const fs_report_route *rr) {
  const fs_routeopt_traffic *tr = rr->tr;
  const fs_report_route_column *cols = rr->cols;
  const double *ideal_s = rr->ideal_s;
  const fs_routeopt_problem_opts *po = &rr->po;
  const fs_topo *t = rr->t;
  int32_t nc = rr->n_cols, seeds = rr->ecmp_seeds;
  int timing = rr->timing;
  fprintf(f, "# fabricsim route: %d jobs, %d flows on %s\n", tr->n_jobs, tr->n_flows, t->spec);
  if (po->paths == FS_ROUTEOPT_PATHS_KSHORTEST)
    fprintf(f,
            "# candidates: the %d shortest loop-free paths per flow (at least the equal-cost "
            "ones)\n",
            po->k);
  else
    fprintf(f, "# candidates: every equal-cost shortest path per flow\n");
  fprintf(f, "# throughputs are fractions of the non-blocking fabric's (ideal)");
  if (seeds > 0) fprintf(f, "; ECMP sampled over %d seeds", seeds);
  fprintf(f, "\n");
  fprintf(f, "%-26s %11s", "metric", "ideal");
  for (int c = 0; c < nc; c++) fprintf(f, " %11s", cols[c].name);
  fprintf(f, "\n");
  static const char *const rows[] = {"min job throughput", "min flow throughput", "efficiency",
                                     "jain fairness",      "max link load",       "max link util",
                                     "worst slowdown",     "mean slowdown"};
  for (int r = 0; r < 8; r++) {
    static const double ideal_v[] = {1, 1, 1, 1, NAN, NAN, 1, 1};
    char b[32];
    num(b, ideal_v[r], 0);
    fprintf(f, "%-26s %11s", rows[r], b);
    for (int c = 0; c < nc; c++) {
      const fs_routeopt_metric *m = &cols[c].m;
      double v = !cols[c].ok ? NAN
                 : r == 0    ? m->min_job_tput
                 : r == 1    ? m->min_flow_tput
                 : r == 2    ? m->efficiency
                 : r == 3    ? m->jain
                 : r == 4    ? m->max_link_load
                 : r == 5    ? m->max_link_util
                 : r == 6    ? m->worst_slowdown
                             : m->mean_slowdown;
      num(b, v, 0);
      fprintf(f, " %11s", b);
    }
    fprintf(f, "\n");
  }
  for (int32_t j = 0; j < tr->n_jobs; j++) {
    char label[96], b[32];
    snprintf(label, sizeof(label), "%.14s %s ms", tr->jobs[j].name, tr->jobs[j].collective);
    num(b, ideal_s[j] * 1e3, 1);
    fprintf(f, "%-26s %11s", label, b);
    for (int c = 0; c < nc; c++) {
      num(b, cols[c].ok ? cols[c].job_s[j] * 1e3 : NAN, 1);
      fprintf(f, " %11s", b);
    }
    fprintf(f, "\n");
  }
  if (timing) {
    fprintf(f, "%-26s %11s", "optimiser time ms", "-");
    for (int c = 0; c < nc; c++) {
      char b[32];
      num(b, cols[c].ok ? cols[c].opt_time_s * 1e3 : NAN, 1);
      fprintf(f, " %11s", b);
    }
    fprintf(f, "\n");
  }
  for (int c = 0; c < nc; c++)
    if (!cols[c].ok) fprintf(f, "# %s\n", cols[c].note);
  return ferror(f) ? FS_EIO : 0;
}

static void jnum(FILE *f, const char *key, double v, int comma) {
  char b[32];
  fs__fmt_num(b, v);
  fprintf(f, "\"%s\": %s%s", key, b, comma ? ", " : "");
}

int fs_report_route_json(FILE *f, const fs_report_route *rr) {
  const fs_routeopt_traffic *tr = rr->tr;
  const fs_report_route_column *cols = rr->cols;
  const double *ideal_s = rr->ideal_s;
  const fs_routeopt_problem_opts *po = &rr->po;
  const fs_topo *t = rr->t;
  int32_t nc = rr->n_cols, seeds = rr->ecmp_seeds;
  int timing = rr->timing;
  fprintf(f, "{\"topo\": ");
  fs__fput_json_str(f, t->spec);
  fprintf(f, ", \"flows\": %d, \"ecmp_seeds\": %d, \"paths\": \"%s\"", tr->n_flows, seeds,
          fs_routeopt_paths_name(po->paths));
  if (po->paths == FS_ROUTEOPT_PATHS_KSHORTEST) fprintf(f, ", \"k\": %d", po->k);
  fprintf(f, ",\n \"jobs\": [");
  for (int32_t j = 0; j < tr->n_jobs; j++) {
    const fs_routeopt_job *job = &tr->jobs[j];
    fprintf(f, "%s\n  {\"name\": ", j ? "," : "");
    fs__fput_json_str(f, job->name);
    fprintf(f, ", \"collective\": \"%s\", \"ranks\": %d, ", job->collective, job->n_ranks);
    jnum(f, "bytes", job->bytes, 1);
    jnum(f, "ideal_s", ideal_s[j], 0);
    fprintf(f, "}");
  }
  fprintf(f, "],\n \"results\": [");
  for (int c = 0; c < nc; c++) {
    const fs_report_route_column *col = &cols[c];
    fprintf(f, "%s\n  {\"optimizer\": \"%s\", ", c ? "," : "", col->name);
    if (!col->ok) {
      fprintf(f, "\"error\": ");
      fs__fput_json_str(f, col->note);
      fprintf(f, "}");
      continue;
    }
    if (strncmp(col->name, "ecmp", 4) == 0 || strcmp(col->name, "random") == 0)
      fprintf(f, "\"seed\": %llu, ", (unsigned long long)col->seed);
    const fs_routeopt_metric *m = &col->m;
    jnum(f, "min_job_throughput", m->min_job_tput, 1);
    jnum(f, "min_flow_throughput", m->min_flow_tput, 1);
    jnum(f, "efficiency", m->efficiency, 1);
    jnum(f, "jain", m->jain, 1);
    jnum(f, "max_link_load", m->max_link_load, 1);
    jnum(f, "max_link_util", m->max_link_util, 1);
    jnum(f, "worst_slowdown", m->worst_slowdown, 1);
    jnum(f, "mean_slowdown", m->mean_slowdown, 1);
    if (timing) jnum(f, "optimizer_time_s", col->opt_time_s, 1);
    fprintf(f, "\"job_time_s\": [");
    for (int32_t j = 0; j < tr->n_jobs; j++) {
      char b[32];
      fs__fmt_num(b, col->job_s[j]);
      fprintf(f, "%s%s", j ? ", " : "", b);
    }
    fprintf(f, "]}");
  }
  fprintf(f, "]}\n");
  return ferror(f) ? FS_EIO : 0;
}

/* The HTML page shows the first REPORT_JOBS jobs' times beside the metrics:
 * more bars than that stop being readable. */
enum { REPORT_METRICS = 8, REPORT_JOBS = 8 };

int fs_report_route_html(FILE *f, const fs_report_route *r) {
  static const char *const names[REPORT_METRICS] = {
      "min job throughput", "min flow throughput", "efficiency",     "jain fairness",
      "max link load",      "max link util",       "worst slowdown", "mean slowdown"};
  int32_t nj = r->tr->n_jobs < REPORT_JOBS ? r->tr->n_jobs : REPORT_JOBS, nm = REPORT_METRICS + nj;
  char jl[REPORT_JOBS][64];
  const char *metrics[REPORT_METRICS + REPORT_JOBS];
  double v[FS_ROUTEOPT_N_KINDS + 2][REPORT_METRICS + REPORT_JOBS];
  fs_html_route_row rows[FS_ROUTEOPT_N_KINDS + 2];
  for (int32_t m = 0; m < REPORT_METRICS; m++) metrics[m] = names[m];
  for (int32_t j = 0; j < nj; j++) {
    snprintf(jl[j], sizeof(jl[j]), "%.30s %s time (ms)", r->tr->jobs[j].name,
             r->tr->jobs[j].collective);
    metrics[REPORT_METRICS + j] = jl[j];
  }
  int32_t n = 0;
  for (int32_t c = 0; c < r->n_cols; c++) {
    const fs_report_route_column *col = &r->cols[c];
    if (!col->ok) continue;
    const fs_routeopt_metric *m = &col->m;
    double x[REPORT_METRICS] = {m->min_job_tput,   m->min_flow_tput, m->efficiency,
                                m->jain,           m->max_link_load, m->max_link_util,
                                m->worst_slowdown, m->mean_slowdown};
    memcpy(v[n], x, sizeof(x));
    for (int32_t j = 0; j < nj; j++) v[n][REPORT_METRICS + j] = col->job_s[j] * 1e3;
    rows[n] = (fs_html_route_row){col->name, v[n]};
    n++;
  }
  char title[128];
  snprintf(title, sizeof(title), "fabricsim route: %d jobs, %d flows", r->tr->n_jobs,
           r->tr->n_flows);
  return fs_html_route_report(f, title, r->t, metrics, nm, rows, n);
}
