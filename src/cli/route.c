/* fabricsim route: the routing metric of a set of training jobs on a
 * topology under each optimiser (exact, greedy) and baseline (edge
 * colouring on 2-tier Clos, ECMP over seeds, spray, random), side by side,
 * over equal-cost or k-shortest candidate paths (docs/model-route.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "fabricsim/report.h"
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
    FS__OPT_STR("--format", 0, AT(format), "text|json", "text (default; or table) or json"),
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

static int route_html(FILE *f, void *ctx) { return fs_report_route_html(f, ctx); }

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
  cmdline o = {.opt = "all", .format = "text", .seeds = 20, .seed = 1,
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
  int fmt, go_fmt = fs__cli_format("route", format, "text json", &fmt);
  if (go_fmt >= 0) return go_fmt;
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
  fs_report_route_column cols[FS_ROUTEOPT_N_KINDS + 2];
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
  choice = malloc(((size_t)tr.n_flows + 1) * sizeof(*choice));
  ideal_s = malloc(((size_t)tr.n_jobs + 1) * sizeof(*ideal_s));
  for (int c = 0; c < FS_ROUTEOPT_N_KINDS + 2; c++)
    cols[c].job_s = malloc(((size_t)tr.n_jobs + 1) * sizeof(double));
  runs = calloc((size_t)seeds, sizeof(*runs));
  if (!choice || !ideal_s || !runs) goto oom;
  for (int c = 0; c < FS_ROUTEOPT_N_KINDS + 2; c++)
    if (!cols[c].job_s) goto oom;
  for (long s = 0; s < seeds; s++)
    if (!(runs[s].job_s = malloc(((size_t)tr.n_jobs + 1) * sizeof(double)))) goto oom;
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
        fs_report_route_column *col = &cols[nc++];
        snprintf(col->name, sizeof(col->name), "%s", names[q]);
        col->ok = 1;
        col->m = runs[idx[q]].m;
        col->seed = runs[idx[q]].seed;
        col->opt_time_s = runs[idx[q]].time_s;
        memcpy(col->job_s, runs[idx[q]].job_s, (size_t)tr.n_jobs * sizeof(double));
      }
      continue;
    }
    fs_report_route_column *col = &cols[nc++];
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
  {
    fs_report_route rr = {&tr, t, po, cols, nc, ideal_s,
                          want[FS_ROUTEOPT_ECMP] ? (int32_t)seeds : 0, timing};
    int rc = fmt == 0 ? fs_report_route_table(stdout, &rr) : fs_report_route_json(stdout, &rr);
    if ((status = fs__cli_stdout_done("route", rc))) goto out;
    if (report_out) {
      status = fs__cli_output_write(report_out, route_html, &rr);
      report_out = NULL;
    }
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
