/* fabricsim jobs: a trace of training jobs arriving over time on one
 * cluster, run under one scheduler or all of them (docs/model-sched.md);
 * or, with --generate, a trace drawn from published cluster-trace shapes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "fabricsim/report.h"
#include "fabricsim/sched.h"

typedef struct seed_opt {
  unsigned long long v;
  int given;
} seed_opt;

typedef struct opts {
  const char *file[1], *scheduler, *format, *output, *report, *contention;
  int n_file;
  long generate, gpus, oversub;
  double load;
  seed_opt seed;
  int full_rerate;
} opts;

/* --seed: the value and that it was given. */
static int parse_seed(const char *v, void *field) {
  seed_opt *s = field;
  if (fs__opt_seed(v, &s->v)) return -1;
  s->given = 1;
  return 0;
}

#define AT(f) offsetof(opts, f)
static const fs__opt jobs_opts[] = {
    FS__OPT_STR("--scheduler", 0, AT(scheduler), "S",
                "fifo, sjf, oblivious, yu-bco, liu-ocs, random, ls, liu-sjf, liu-fifo or all (each in "
                "turn, the distinct jobs "
                "timed once); default: the trace's \"scheduler\", else fifo"),
    FS__OPT_STR("--contention", 0, AT(contention), "aligned|average",
                "how jobs sharing a link meet: their communication phases coincide (aligned: "
                "pessimistic) or interleave perfectly (average: optimistic); default: the "
                "trace's \"contention\", else aligned (docs/model-sched.md)"),
    FS__OPT_STR("--format", 0, AT(format), "text|json|csv",
                "text (default; or table), json (every job) or csv (a row per scheduler and job)"),
    FS__OPT_STR("--output", 'o', AT(output), "FILE", "write the result (or the generated trace) "
                "to FILE instead of stdout"),
    FS__OPT_STR("--report", 0, AT(report), "FILE.html",
                "also write a self-contained HTML report: the schedulers' table and each one's "
                "timeline of the jobs (Gantt: queued, running)"),
    FS__OPT_LONG("--generate", 0, AT(generate), "N", 1, 1000000,
                 "--generate must be an integer in [1, 1000000]",
                 "write a trace of N jobs instead of running one (no TRACE.json): sizes and "
                 "durations from published cluster-trace shapes, Poisson arrivals "
                 "(docs/model-sched.md)"),
    FS__OPT_LONG("--gpus", 0, AT(gpus), "G", 128, 65536,
                 "--gpus must be a multiple of 64 in [128, 65536]",
                 "--generate: the cluster's GPUs, a multiple of 64 (default 4096)"),
    FS__OPT_DOUBLE("--load", 0, AT(load), "L", 1e-3, 10, "--load must be a number in [0.001, 10]",
                   "--generate: offered GPU-seconds per available GPU-second (default 0.8)"),
    FS__OPT_LONG("--oversubscription", 0, AT(oversub), "R", 1, 64,
                 "--oversubscription must be 1, 2, 4, 8, 16, 32 or 64",
                 "--generate: a ToR's GPU bandwidth over its uplinks (64 / R spines; default 2)"),
    FS__OPT_FN("--seed", 0, AT(seed), "S", parse_seed, "--seed must be a non-negative integer",
               "--generate: the seed (default 1)"),
    FS__OPT_FLAG("--full-rerate", 0, AT(full_rerate),
                 "re-rate every running job at each change, not only those a change touches "
                 "(a check: the results are the same)"),
    FS__OPT_END};

static const fs__cmd jobs_cmd = {
    "jobs", "TRACE.json [options] | --generate N [--gpus G] [--load L] [--seed S] -o F",
    "Runs a trace of training jobs arriving over time on one cluster: the scheduler orders the "
    "queue and places each job; each distinct job is timed alone by the training engine, and "
    "the jobs running side by side share the fabric's links (weighted max-min of their "
    "communication), re-rated only where a start or an end touches. Prints job completion "
    "times (mean, p99), queueing delay, makespan, GPU and link utilisation "
    "(docs/model-sched.md).",
    NULL, jobs_opts, "TRACE.json", "trace file", 0, 1, AT(file), AT(n_file)};
#undef AT

/* The progress line: the scheduler running and its share of jobs done. */
typedef struct prog {
  fs__cli_progress p;
  const char *kind;
} prog;

static void progress(void *ctx, double done) {
  prog *g = ctx;
  fs__cli_progress *p = &g->p;
  double e = fs__cli_progress_elapsed(p);
  if (e < 1.0 || e - p->last < (p->tty ? 0.2 : 10.0)) return;
  p->last = e;
  p->printed = 1;
  fprintf(stderr, "%sfabricsim %s: %.1f s, %s: %.0f %% of the jobs done%s", p->tty ? "\r" : "",
          p->cmd, e, g->kind, done * 100, p->tty ? "   " : "\n");
}

typedef struct page {
  int fmt;
  const fs_sched_trace *t;
  const fs_sched_result *r;
  int32_t n;
} page;

static int write_page(FILE *f, void *ctx) {
  const page *p = ctx;
  return fs_report_sched_html(f, p->t, p->r, p->n);
}

static int write_result(FILE *f, void *ctx) {
  const page *p = ctx;
  if (!p->r) return fs_report_sched_trace_json(f, p->t);
  return p->fmt == FS__FMT_JSON  ? fs_report_sched_json(f, p->t, p->r, p->n)
         : p->fmt == FS__FMT_CSV ? fs_report_sched_csv(f, p->t, p->r, p->n)
                                 : fs_report_sched_text(f, p->t, p->r, p->n);
}

/* Writes p to --output or stdout: 0, 1 or 2. */
static int emit(fs_output *out, page *p) {
  if (out) return fs__cli_output_write(out, write_result, p);
  return fs__cli_stdout_done("jobs", write_result(stdout, p));
}

static int generate(const opts *o) {
  fs_err err = {0, ""};
  fs_output *out = NULL;
  if (o->output && fs__cli_output_open(o->output, &out)) return 2;
  fs_sched_gen_opts g = {(int32_t)o->generate, o->gpus ? o->gpus : 4096,
                         o->seed.given ? o->seed.v : 1, o->load, (int32_t)o->oversub};
  fs_sched_trace *t = NULL;
  if (fs_sched_generate(&g, &t, &err)) {
    fs_output_abort(out);
    return err.code == FS_EINVAL ? fs__cli_usage("jobs", "%s", err.msg) : fs__cli_fail(&err);
  }
  page p = {FS__FMT_JSON, t, NULL, 0};
  int rc = emit(out, &p);
  fs_sched_trace_free(t);
  return rc;
}

static int run(const opts *o, int fmt, int all, fs_sched_kind kind, int contention) {
  fs_err err = {0, ""};
  fs_output *out = NULL, *html = NULL;
  fs_sched_trace *t = NULL;
  fs_sched *s = NULL;
  fs_sched_result res[FS_SCHED_N];
  int32_t n = 0;
  int status = 0;
  memset(res, 0, sizeof(res));
  if (o->output && fs__cli_output_open(o->output, &out)) return 2;
  if (o->report && fs__cli_output_open(o->report, &html)) {
    fs_output_abort(out);
    return 2;
  }
  if (fs_sched_trace_load(o->file[0], &t, &err) || fs_sched_new(t, &s, &err)) {
    status = fs__cli_fail(&err);
    goto done;
  }
  if (!o->scheduler) kind = t->scheduler; /* the file's, fifo if it names none */
  fs_sched_contention cm = contention >= 0 ? (fs_sched_contention)contention : t->contention;
  prog pr;
  fs__cli_progress_start(&pr.p, "jobs");
  for (int k = all ? 0 : (int)kind; k < (all ? FS_SCHED_N : (int)kind + 1); k++) {
    pr.kind = fs_sched_kind_name((fs_sched_kind)k);
    fs_sched_opts so = {(fs_sched_kind)k, o->full_rerate, progress, &pr, cm};
    if (fs_sched_run(s, &so, &res[n], &err)) {
      fs__cli_progress_end(&pr.p);
      status = fs__cli_fail(&err);
      goto done;
    }
    n++;
  }
  fs__cli_progress_end(&pr.p);
  page p = {fmt, t, res, n};
  status = emit(out, &p);
  out = NULL;
  if (!status && html) {
    fs_output *pg = html;
    html = NULL;
    status = fs__cli_output_write(pg, write_page, &p);
  }
done:
  fs_output_abort(out);
  fs_output_abort(html);
  for (int32_t i = 0; i < n; i++) fs_sched_result_free(&res[i]);
  fs_sched_free(s);
  fs_sched_trace_free(t);
  return status;
}

int fs__cli_jobs(int argc, char **argv) {
  opts o;
  memset(&o, 0, sizeof(o));
  o.format = "text";
  int go = fs__opts_parse(&jobs_cmd, &o, argc, argv);
  if (go >= 0) return go;
  if (o.generate) {
    if (o.n_file)
      return fs__cli_usage("jobs", "--generate writes a trace: give no TRACE.json, got '%s'",
                           o.file[0]);
    if (o.scheduler || o.full_rerate || o.report || o.contention || strcmp(o.format, "text"))
      return fs__cli_usage("jobs", "--generate writes a trace: --scheduler, --contention, "
                                   "--format, --report and --full-rerate do not apply");
    if (o.oversub & (o.oversub - 1))
      return fs__cli_usage("jobs", "--oversubscription must be 1, 2, 4, 8, 16, 32 or 64, got '%ld'",
                           o.oversub);
    if (o.gpus && o.gpus % 64)
      return fs__cli_usage("jobs", "--gpus must be a multiple of 64 in [128, 65536], got '%ld'",
                           o.gpus);
    return generate(&o);
  }
  if (!o.n_file) return fs__cli_usage("jobs", "missing TRACE.json (or --generate N)");
  if (o.gpus || o.load > 0 || o.seed.given || o.oversub)
    return fs__cli_usage("jobs", "--gpus, --load, --oversubscription and --seed go with --generate");
  int all = o.scheduler && strcmp(o.scheduler, "all") == 0;
  fs_sched_kind kind = FS_SCHED_FIFO;
  if (o.scheduler && !all && fs_sched_kind_parse(o.scheduler, &kind))
    return fs__cli_usage("jobs",
                         "--scheduler must be fifo, sjf, oblivious, yu-bco, liu-ocs, random, ls, liu-sjf, "
                         "liu-fifo or all, "
                         "got '%s'",
                         o.scheduler);
  fs_sched_contention cm = FS_CONTENTION_ALIGNED;
  if (o.contention && fs_sched_contention_parse(o.contention, &cm))
    return fs__cli_usage("jobs", "--contention must be aligned or average, got '%s'",
                         o.contention);
  int fmt, go_fmt = fs__cli_format("jobs", o.format, "text json csv", &fmt);
  if (go_fmt >= 0) return go_fmt;
  return run(&o, fmt, all, kind, o.contention ? (int)cm : -1);
}
