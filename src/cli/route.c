/* fabricsim route: the routing metric of a set of training jobs on a
 * topology under each optimiser (exact, greedy) and baseline (edge
 * colouring on 2-tier Clos, ECMP over seeds, spray, random), side by side,
 * over equal-cost or k-shortest candidate paths (docs/model-route.md). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "cli.h"
#include "opts.h"
#include "fabricsim/html.h"
#include "fabricsim/routeopt.h"

static int parse_paths(const char *v, void *field) {
  return fs_routeopt_paths_parse(v, (fs_routeopt_paths *)field) ? -1 : 0;
}

/* Seconds in (0, 1e6]. */
static int parse_time_limit(const char *v, void *field) {
  char *end;
  errno = 0;
  double tl = strtod(v, &end);
  if (!*v || *end || errno || !(tl > 0) || tl > 1e6) return -1;
  *(double *)field = tl;
  return 0;
}

/* What the command line gives; the initialiser holds the defaults. */
typedef struct cmdline {
  const char *jobs, *spec, *opt, *format, *report;
  long seeds, seed, max_vars, kpaths; /* kpaths -1: not given */
  double tl;
  int timing;
  fs_routeopt_paths paths;
} cmdline;

_Static_assert(FS_ROUTEOPT_MAX_K == 64, "the message of --k below says 64");
#define AT(f) offsetof(cmdline, f)
static const fs__opt route_opts[] = {
    FS__OPT_STR("--jobs", 0, AT(jobs), "FILE", "jobs file (docs/model-route.md)"),
    FS__OPT_STR("--topo", 0, AT(spec), "SPEC",
                "topology (e.g. leafspine:leaves=8,...) or JSON file"),
    FS__OPT_STR("--optimizer", 0, AT(opt), "LIST",
                "comma-separated: exact greedy edgecolor ecmp spray random, or all (default "
                "all; exact is skipped with a note when the instance is too large; all has "
                "edgecolor only on a 2-tier Clos, the only fabric it applies to)"),
    FS__OPT_FN("--paths", 0, AT(paths), "P", parse_paths, "--paths must be ecmp or kshortest",
               "candidate paths: ecmp (all equal-cost shortest paths, default) or kshortest "
               "(the K shortest loop-free paths, at least the equal-cost ones; for torus, "
               "ring, dragonfly, full mesh)"),
    FS__OPT_LONG("--k", 0, AT(kpaths), "K", 1, FS_ROUTEOPT_MAX_K,
                 "--k must be an integer in [1, 64]", "kshortest: K in [1, 64] (default 4)"),
    FS__OPT_LONG("--seeds", 0, AT(seeds), "N", 1, 100000,
                 "--seeds must be an integer in [1, 100000]",
                 "ECMP seeds to sample: worst, median, best (default 20)"),
    FS__OPT_LONG("--seed", 0, AT(seed), "S", 0, 2147483647L,
                 "--seed must be a non-negative integer",
                 "first ECMP seed and the random routing's seed (default 1)"),
    FS__OPT_FN("--time-limit", 0, AT(tl), "S", parse_time_limit,
               "--time-limit must be seconds in (0, 1e6]",
               "exact: seconds before giving up (default 60)"),
    FS__OPT_LONG("--exact-max-vars", 0, AT(max_vars), "N", 1, 100000000L,
                 "--exact-max-vars must be an integer in [1, 1e8]",
                 "exact: most binary variables to attempt (default 20000)"),
    FS__OPT_FLAG("--timing", 0, AT(timing),
                 "also print each optimiser's wall time (the only output that varies between "
                 "identical runs)"),
    FS__OPT_STR("--format", 0, AT(format), "F", "table (default) or json"),
    FS__OPT_STR("--report", 0, AT(report), "FILE.html",
                "also write a self-contained HTML report: the metrics of each routing as "
                "bars"),
    FS__OPT_END};

static const fs__cmd route_cmd = {
    "route", "--jobs JOBS.json --topo SPEC [options]",
    "Routes the jobs' collective traffic with each optimiser and prints the metric of "
    "docs/model-route.md side by side: the two-level max-min objective (min job and flow "
    "throughput, 1 = as on a non-blocking fabric), efficiency, Jain's fairness, max link "
    "load and utilisation, slowdowns and each job's collective time.",
    NULL, route_opts, NULL, NULL, 0, 0, 0, 0};
#undef AT

/* One column of the output. */
typedef struct column {
  char name[24];
  int ok;             /* 0: not run (note says why) */
  char note[512];
  fs_routeopt_metric m;
  double *job_s; /* n_jobs */
  double opt_time_s;
  uint64_t seed;
} column;

typedef struct ecmp_run {
  fs_routeopt_metric m;
  double *job_s;
  double time_s;
  uint64_t seed;
} ecmp_run;

static int cmp_ecmp(const void *a, const void *b) {
  const ecmp_run *x = a, *y = b;
  int c = fs_routeopt_metric_cmp(&x->m, &y->m);
  if (c) return c; /* worse first */
  return (x->seed > y->seed) - (x->seed < y->seed);
}

static int run_one(fs_routeopt_problem *p, fs_routeopt_kind kind, uint64_t seed, double tl,
                   long max_vars, int32_t *choice, fs_routeopt_metric *m, double *job_s,
                   double *time_s, fs_err *err) {
  fs_routeopt_opts o = {kind, seed, tl, (int32_t)max_vars};
  fs_routeopt_stats st;
  int rc = fs_routeopt_optimize(p, &o, choice, &st, err);
  if (rc) return rc;
  *time_s = st.time_s;
  return fs_routeopt_evaluate(p, choice, m, job_s, NULL, err);
}

static void num(char *buf, double v, int ms) {
  if (!isfinite(v))
    snprintf(buf, 32, "-");
  else
    snprintf(buf, 32, ms ? "%.4g" : "%.4f", v);
}

static void print_table(const fs_routeopt_traffic *tr, const fs_topo *t, const column *cols, int nc,
                        const double *ideal_s, int32_t seeds, int timing,
                        const fs_routeopt_problem_opts *po) {
  printf("# fabricsim route: %d jobs, %d flows on %s\n", tr->n_jobs, tr->n_flows, t->spec);
  if (po->paths == FS_ROUTEOPT_PATHS_KSHORTEST)
    printf("# candidates: the %d shortest loop-free paths per flow (at least the equal-cost "
           "ones)\n", po->k);
  else
    printf("# candidates: every equal-cost shortest path per flow\n");
  printf("# throughputs are fractions of the non-blocking fabric's (ideal)");
  if (seeds > 0) printf("; ECMP sampled over %d seeds", seeds);
  printf("\n");
  printf("%-26s %11s", "metric", "ideal");
  for (int c = 0; c < nc; c++) printf(" %11s", cols[c].name);
  printf("\n");
  static const char *const rows[] = {"min job throughput", "min flow throughput", "efficiency",
                                     "jain fairness",      "max link load",       "max link util",
                                     "worst slowdown",     "mean slowdown"};
  for (int r = 0; r < 8; r++) {
    static const double ideal_v[] = {1, 1, 1, 1, NAN, NAN, 1, 1};
    char b[32];
    num(b, ideal_v[r], 0);
    printf("%-26s %11s", rows[r], b);
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
      printf(" %11s", b);
    }
    printf("\n");
  }
  for (int32_t j = 0; j < tr->n_jobs; j++) {
    char label[96], b[32];
    snprintf(label, sizeof(label), "%.14s %s ms", tr->jobs[j].name, tr->jobs[j].collective);
    num(b, ideal_s[j] * 1e3, 1);
    printf("%-26s %11s", label, b);
    for (int c = 0; c < nc; c++) {
      num(b, cols[c].ok ? cols[c].job_s[j] * 1e3 : NAN, 1);
      printf(" %11s", b);
    }
    printf("\n");
  }
  if (timing) {
    printf("%-26s %11s", "optimiser time ms", "-");
    for (int c = 0; c < nc; c++) {
      char b[32];
      num(b, cols[c].ok ? cols[c].opt_time_s * 1e3 : NAN, 1);
      printf(" %11s", b);
    }
    printf("\n");
  }
  for (int c = 0; c < nc; c++)
    if (!cols[c].ok) printf("# %s\n", cols[c].note);
}

static void jnum(const char *key, double v, int comma) {
  char b[32];
  fs__fmt_num(b, v);
  printf("\"%s\": %s%s", key, b, comma ? ", " : "");
}

static void print_json(const fs_routeopt_traffic *tr, const fs_topo *t, const column *cols, int nc,
                       const double *ideal_s, int32_t seeds, int timing,
                       const fs_routeopt_problem_opts *po) {
  printf("{\"topo\": ");
  fs__fput_json_str(stdout, t->spec);
  printf(", \"flows\": %d, \"ecmp_seeds\": %d, \"paths\": \"%s\"", tr->n_flows, seeds,
         fs_routeopt_paths_name(po->paths));
  if (po->paths == FS_ROUTEOPT_PATHS_KSHORTEST) printf(", \"k\": %d", po->k);
  printf(",\n \"jobs\": [");
  for (int32_t j = 0; j < tr->n_jobs; j++) {
    const fs_routeopt_job *job = &tr->jobs[j];
    printf("%s\n  {\"name\": ", j ? "," : "");
    fs__fput_json_str(stdout, job->name);
    printf(", \"collective\": \"%s\", \"ranks\": %d, ", job->collective, job->n_ranks);
    jnum("bytes", job->bytes, 1);
    jnum("ideal_s", ideal_s[j], 0);
    printf("}");
  }
  printf("],\n \"results\": [");
  for (int c = 0; c < nc; c++) {
    const column *col = &cols[c];
    printf("%s\n  {\"optimizer\": \"%s\", ", c ? "," : "", col->name);
    if (!col->ok) {
      printf("\"error\": ");
      fs__fput_json_str(stdout, col->note);
      printf("}");
      continue;
    }
    if (strncmp(col->name, "ecmp", 4) == 0 || strcmp(col->name, "random") == 0)
      printf("\"seed\": %llu, ", (unsigned long long)col->seed);
    const fs_routeopt_metric *m = &col->m;
    jnum("min_job_throughput", m->min_job_tput, 1);
    jnum("min_flow_throughput", m->min_flow_tput, 1);
    jnum("efficiency", m->efficiency, 1);
    jnum("jain", m->jain, 1);
    jnum("max_link_load", m->max_link_load, 1);
    jnum("max_link_util", m->max_link_util, 1);
    jnum("worst_slowdown", m->worst_slowdown, 1);
    jnum("mean_slowdown", m->mean_slowdown, 1);
    if (timing) jnum("optimizer_time_s", col->opt_time_s, 1);
    printf("\"job_time_s\": [");
    for (int32_t j = 0; j < tr->n_jobs; j++) {
      char b[32];
      fs__fmt_num(b, col->job_s[j]);
      printf("%s%s", j ? ", " : "", b);
    }
    printf("]}");
  }
  printf("]}\n");
}

/* --report: the table's metrics and job times, one bar chart each. */
enum { REPORT_METRICS = 8, REPORT_JOBS = 8 };
typedef struct route_report {
  const fs_routeopt_traffic *tr;
  const fs_topo *t;
  const column *cols;
  int nc;
} route_report;

static int route_report_fn(FILE *f, void *ctx) {
  const route_report *r = ctx;
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
  for (int c = 0; c < r->nc; c++) {
    const column *col = &r->cols[c];
    if (!col->ok) continue;
    const fs_routeopt_metric *m = &col->m;
    double x[REPORT_METRICS] = {m->min_job_tput,  m->min_flow_tput, m->efficiency,
                                m->jain,          m->max_link_load, m->max_link_util,
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

static int write_route_report(fs_output *o, const fs_routeopt_traffic *tr, const fs_topo *t,
                              const column *cols, int nc) {
  route_report r = {tr, t, cols, nc};
  return fs__cli_output_write(o, route_report_fn, &r);
}

/* --optimizer LIST into want[kind] (all: every kind, *all set): -1, or 2
 * after a usage error. */
static int parse_optimizers(const char *opt, int *want, int *all) {
  char buf[256];
  if (strlen(opt) >= sizeof(buf)) return fs__cli_usage("route", "--optimizer list too long");
  snprintf(buf, sizeof(buf), "%s", opt);
  for (char *tok = buf, *next; tok; tok = next) {
    next = strchr(tok, ',');
    if (next) *next++ = '\0';
    fs_routeopt_kind k;
    if (strcmp(tok, "all") == 0) {
      for (int x = 0; x < FS_ROUTEOPT_N_KINDS; x++) want[x] = 1;
      *all = 1;
    } else if (fs_routeopt_kind_parse(tok, &k) == 0) {
      want[k] = 1;
    } else {
      return fs__cli_usage("route",
                           "--optimizer: unknown '%s' (expected exact, greedy, edgecolor, ecmp, "
                           "spray, random or all)",
                           tok);
    }
  }
  return -1;
}

int fs__cli_route(int argc, char **argv) {
  cmdline o = {.opt = "all", .format = "table", .seeds = 20, .seed = 1,
               .max_vars = FS_ROUTEOPT_EXACT_MAX_VARS, .kpaths = -1, .tl = 60,
               .paths = FS_ROUTEOPT_PATHS_ECMP};
  int go = fs__opts_parse(&route_cmd, &o, argc, argv);
  if (go >= 0) return go;
  const char *jobs = o.jobs, *spec = o.spec, *opt = o.opt, *format = o.format;
  const char *report = o.report;
  long seeds = o.seeds, seed = o.seed, max_vars = o.max_vars;
  long kpaths = o.kpaths >= 0 ? o.kpaths : 4;
  double tl = o.tl;
  int timing = o.timing, k_given = o.kpaths >= 0;
  fs_routeopt_problem_opts po = {o.paths, 0};
  if (!jobs) return fs__cli_usage("route", "--jobs is required");
  if (k_given && po.paths != FS_ROUTEOPT_PATHS_KSHORTEST)
    return fs__cli_usage("route", "--k applies to --paths kshortest only");
  po.k = po.paths == FS_ROUTEOPT_PATHS_KSHORTEST ? (int32_t)kpaths : 0;
  if (!spec) return fs__cli_usage("route", "--topo is required");
  int fmt = strcmp(format, "table") == 0 ? 0 : strcmp(format, "json") == 0 ? 1 : -1;
  if (fmt < 0) return fs__cli_usage("route", "--format must be table or json, got '%s'", format);
  int want[FS_ROUTEOPT_N_KINDS] = {0};
  int n_want = 0, all = 0;
  if ((go = parse_optimizers(opt, want, &all)) >= 0) return go;
  fs_output *report_out = NULL;
  if (report && fs__cli_output_open(report, &report_out)) return 2;
  fs_err err = {0, ""};
  fs_topo *t = NULL;
  fs_routeopt_traffic tr;
  fs_routeopt_traffic_init(&tr);
  fs_routeopt_problem *p = NULL;
  int32_t *choice = NULL;
  double *ideal_s = NULL;
  column cols[FS_ROUTEOPT_N_KINDS + 2];
  int nc = 0, status = 0;
  ecmp_run *runs = NULL;
  memset(cols, 0, sizeof(cols));
  if (fs_topo_from_spec(spec, &t, &err)) {
    status = fs__cli_fail(&err);
    goto out;
  }
  /* "all" has edgecolor only where it applies; asked by name, it fails */
  if (all && fs_routeopt_edgecolor_check(t, NULL)) want[FS_ROUTEOPT_EDGECOLOR] = 0;
  for (int x = 0; x < FS_ROUTEOPT_N_KINDS; x++) n_want += want[x];
  if ((want[FS_ROUTEOPT_EDGECOLOR] && fs_routeopt_edgecolor_check(t, &err)) ||
      fs_routeopt_traffic_from_file(jobs, t, &tr, &err) ||
      fs_routeopt_problem_new_opts(t, &tr, &po, &p, &err)) {
    status = fs__cli_fail(&err);
    goto out;
  }
  choice = fs__malloc((size_t)tr.n_flows + 1, sizeof(*choice));
  ideal_s = fs__malloc((size_t)tr.n_jobs + 1, sizeof(*ideal_s));
  for (int c = 0; c < FS_ROUTEOPT_N_KINDS + 2; c++)
    cols[c].job_s = fs__malloc((size_t)tr.n_jobs + 1, sizeof(double));
  runs = fs__calloc((size_t)seeds, sizeof(*runs));
  if (!choice || !ideal_s || !runs) goto oom;
  for (int c = 0; c < FS_ROUTEOPT_N_KINDS + 2; c++)
    if (!cols[c].job_s) goto oom;
  for (long s = 0; s < seeds; s++)
    if (!(runs[s].job_s = fs__malloc((size_t)tr.n_jobs + 1, sizeof(double)))) goto oom;
  {
    fs_routeopt_metric m;
    for (int32_t f = 0; f < tr.n_flows; f++)
      choice[f] = fs_routeopt_n_paths(p, f) > 1 ? FS_ROUTEOPT_SPLIT : 0;
    if (fs_routeopt_evaluate(p, choice, &m, NULL, ideal_s, &err)) goto fail;
  }
  static const fs_routeopt_kind order[FS_ROUTEOPT_N_KINDS] = {
      FS_ROUTEOPT_EXACT, FS_ROUTEOPT_GREEDY, FS_ROUTEOPT_EDGECOLOR, FS_ROUTEOPT_ECMP,
      FS_ROUTEOPT_SPRAY, FS_ROUTEOPT_RANDOM};
  for (int oi = 0; oi < FS_ROUTEOPT_N_KINDS; oi++) {
    fs_routeopt_kind k = order[oi];
    if (!want[k]) continue;
    if (k == FS_ROUTEOPT_ECMP) {
      for (long s = 0; s < seeds; s++) {
        runs[s].seed = (uint64_t)(seed + s);
        if (run_one(p, k, runs[s].seed, tl, max_vars, choice, &runs[s].m, runs[s].job_s,
                    &runs[s].time_s, &err))
          goto fail;
      }
      qsort(runs, (size_t)seeds, sizeof(*runs), cmp_ecmp);
      static const char *const names[] = {"ecmp-worst", "ecmp-median", "ecmp-best"};
      long idx[3] = {0, (seeds - 1) / 2, seeds - 1};
      for (int q = 0; q < 3; q++) {
        column *col = &cols[nc++];
        snprintf(col->name, sizeof(col->name), "%s", names[q]);
        col->ok = 1;
        col->m = runs[idx[q]].m;
        col->seed = runs[idx[q]].seed;
        col->opt_time_s = runs[idx[q]].time_s;
        memcpy(col->job_s, runs[idx[q]].job_s, (size_t)tr.n_jobs * sizeof(double));
      }
      continue;
    }
    column *col = &cols[nc++];
    snprintf(col->name, sizeof(col->name), "%s", fs_routeopt_kind_name(k));
    col->seed = (uint64_t)seed;
    int rc = run_one(p, k, (uint64_t)seed, tl, max_vars, choice, &col->m, col->job_s,
                     &col->opt_time_s, &err);
    if (rc == FS_ERANGE && k == FS_ROUTEOPT_EXACT && n_want > 1) {
      snprintf(col->note, sizeof(col->note), "%s", err.msg);
      continue;
    }
    if (rc) goto fail;
    col->ok = 1;
  }
  if (fmt == 0)
    print_table(&tr, t, cols, nc, ideal_s, want[FS_ROUTEOPT_ECMP] ? (int32_t)seeds : 0, timing,
                &po);
  else
    print_json(&tr, t, cols, nc, ideal_s, want[FS_ROUTEOPT_ECMP] ? (int32_t)seeds : 0, timing,
               &po);
  if (report_out) {
    status = write_route_report(report_out, &tr, t, cols, nc);
    report_out = NULL;
  }
  goto out;
oom:
  fs_err_set(&err, FS_ENOMEM, "out of memory");
fail:
  status = fs__cli_fail(&err);
out:
  fs_output_abort(report_out);
  if (runs)
    for (long s = 0; s < seeds; s++) free(runs[s].job_s);
  free(runs);
  for (int c = 0; c < FS_ROUTEOPT_N_KINDS + 2; c++) free(cols[c].job_s);
  free(choice);
  free(ideal_s);
  fs_routeopt_problem_free(p);
  fs_routeopt_traffic_free(&tr);
  fs_topo_free(t);
  return status;
}
