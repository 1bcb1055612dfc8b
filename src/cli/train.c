/* fabricsim train: one training iteration of a job file, where its time
 * goes, and optionally a Perfetto trace of it; with several job files,
 * the jobs share one cluster (train.h, fs_cluster) and each gets its
 * report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"
#include "fabricsim/chakra.h"
#include "fabricsim/html.h"
#include "fabricsim/report.h"
#include "fabricsim/train.h"

#define MAX_JOBS 64

/* fs_train_comm_parse and fs_coll_tune_policy_parse as FS__OPT_FN parsers. */
static int parse_comm(const char *v, void *field) {
  return fs_train_comm_parse(v, (fs_train_comm *)field) ? -1 : 0;
}

static int parse_tune(const char *v, void *field) {
  return fs_coll_tune_policy_parse(v, (fs_coll_tune_policy *)field) ? -1 : 0;
}

/* What the command line gives; the initialiser holds the defaults. */
typedef struct cmdline {
  const char *in[MAX_JOBS], *format, *trace, *report;
  const char *transport, *connections, *chakra_dir, *rate_control, *pkt;
  int n_in, te_job;
  fs_train_opts opts;
} cmdline;

#define AT(f) offsetof(cmdline, f)
static const fs__opt train_opts[] = {
    FS__OPT_STR("--format", 0, AT(format), "text|json", "the summary's format (default text)"),
    FS__OPT_STR("--trace", 0, AT(trace), "FILE",
                "Perfetto / Chrome trace of the iteration (with several jobs: each job's "
                "stages, then the shared links)"),
    FS__OPT_STR("--report", 0, AT(report), "FILE.html",
                "self-contained HTML report: timeline, time split, link heatmaps, topology "
                "(with several jobs: the jobs' table, then each job's sections)"),
    FS__OPT_FLAG("--free-comm", 0, AT(opts.free_comm),
                 "what-if: every communication takes no time"),
    FS__OPT_FN("--comm", 0, AT(opts.comm), "all|isolated", parse_comm,
               "--comm must be all or isolated",
               "all (default): every kind of traffic (TP, SP, EP, ZeRO-3, PP, DP) contends in "
               "one simulation; isolated: TP, EP and ZeRO-3 timed alone, only PP and DP "
               "contend (the report of 'all' also gives this)"),
    FS__OPT_FLAG("--no-compare", 0, AT(opts.no_compare),
                 "with --comm all, skip the isolated run it reports"),
    FS__OPT_FLAG("--demand-from-job", 0, AT(te_job),
                 "one job on a jupiter topology: engineer its block-to-block links for the "
                 "job's own traffic first (as 'fabricsim topo JOB --demand-from-job'), then "
                 "simulate on them"),
    FS__OPT_FLAG("--no-symmetry", 0, AT(opts.no_symmetry),
                 "simulate every rail, even where the rail symmetry shortcut is exact (a "
                 "trace implies it)"),
    FS__CLI_NCCL_TRANSPORT_OPTS(cmdline),
    FS__OPT_STR("--export-chakra", 0, AT(chakra_dir), "DIR",
                "write the iteration as MLCommons Chakra traces DIR/trace.<rank>.et (every "
                "rank; TP as messages)"),
    FS__OPT_FN("--tune", 0, AT(opts.tune), "nccl|sim", parse_tune,
               "--tune must be nccl or sim",
               "how 'auto' algorithms are picked: NCCL's cost model (default) or the fastest "
               "simulated alone"),
    FS__OPT_INT32("--buckets", 0, AT(opts.max_buckets), "N", 1, 1024,
                  "--buckets must be in [1, 1024]",
                  "data-parallel collectives per model chunk at most (default 4)"),
    FS__OPT_INT32("--iterations", 0, AT(opts.iterations), "N", 1, 1000,
                  "--iterations must be in [1, 1000]",
                  "simulate N iterations back to back (default 1); the report is the last "
                  "one's, with the first and mean"),
    FS__OPT_END};

static const fs__cmd train_cmd = {
    "train", "JOB.json [JOB2.json ...] [options]",
    "Simulates one training iteration (docs/formats.md, docs/model-work.md) and prints "
    "iteration time, tokens/s, TFLOP/s per GPU, MFU, where the time goes and the "
    "collectives. Several job files share one cluster: the first job's topology, routing and "
    "failures (the others must give the same), jobs placed one after another in whole "
    "servers, their traffic contending; each job gets its report.",
    NULL, train_opts, "JOB.json", "job file", 1, MAX_JOBS, AT(in), AT(n_in)};
#undef AT

/* The jobs run (one, or a cluster's) for the trace and the report. */
typedef struct train_report_ctx {
  fs_job *const *jobs;
  const fs_train *const *trs;
  const fs_train_result *res;
  int32_t n;
} train_report_ctx;

static int train_trace(FILE *f, void *ctx) {
  const train_report_ctx *c = ctx;
  return fs_report_cluster_trace(f, c->jobs, c->trs, c->n);
}

static int train_report(FILE *f, void *ctx) {
  const train_report_ctx *c = ctx;
  return c->n == 1 ? fs_html_train_report(f, c->jobs[0], c->trs[0], c->res)
                   : fs_html_cluster_report(f, c->jobs, c->trs, c->res, c->n);
}

int fs__cli_train(int argc, char **argv) {
  cmdline o = {.format = "text"};
  int go = fs__opts_parse(&train_cmd, &o, argc, argv);
  if (go >= 0) return go;
  if (o.opts.no_compare && o.opts.comm == FS_COMM_ISOLATED)
    return fs__cli_usage("train", "--no-compare is for --comm all (it skips the isolated run "
                         "all reports); --comm isolated has none");
  const char **in = o.in, *format = o.format, *trace = o.trace, *report = o.report;
  const char *transport = o.transport, *connections = o.connections, *chakra_dir = o.chakra_dir;
  const char *rate_control = o.rate_control, *pkt = o.pkt;
  int32_t n_in = o.n_in;
  fs_train_opts opts = o.opts;
  opts.max_memory_bytes = fs__cli_memory_limit();
  int fmt, go_fmt = fs__cli_format("train", format, "text json", &fmt);
  if (go_fmt >= 0) return go_fmt;
  int json = fmt == FS__FMT_JSON;
  if (o.te_job && n_in > 1)
    return fs__cli_usage("train", "--demand-from-job takes one job file, got %d", n_in);
  if (chakra_dir && n_in > 1)
    return fs__cli_usage("train", "--export-chakra takes one job file, got %d", n_in);
  if (chakra_dir) { /* every rank's own traffic, TP as messages */
    opts.no_symmetry = 1;
    opts.tp_flows = 1;
  }
  /* (the trace spreads each flow's bytes over its lifetime; the export
   * copies the DAG: both read every flow of the run) */
  if (trace || chakra_dir) opts.keep_flows = 1;
  fs__cli_progress pr;
  fs__cli_progress_start(&pr, "train");
  fs_sim_opts so = {0};
  so.progress = fs__cli_progress_hook;
  so.progress_ctx = &pr;
  if (report) so.link_bins = FS_HTML_LINK_BINS;
  opts.sim = &so;
  fs_err err = {0, ""};
  fs_job *jobs[MAX_JOBS] = {0};
  fs_train *tr = NULL;
  fs_cluster *cl = NULL;
  fs_train_result res[MAX_JOBS];
  int status = 0, rc = 0;
  fs_output *trace_out = NULL, *report_out = NULL;
  fs_output_dir *chakra_out = NULL;
  for (int32_t k = 0; k < n_in && !rc; k++) rc = fs_job_load(in[k], &jobs[k], &err);
  if (!rc && o.te_job) { /* the engineered fabric has the same hosts and servers */
    fs_topo *te = NULL;
    if (jobs[0]->n_failures > 0)
      rc = fs_err_set(&err, FS_EINVAL,
                      "%s: --demand-from-job: failures name links of the uniform fabric",
                      jobs[0]->file);
    if (!rc) rc = fs__cli_jupiter_engineer(jobs[0], &te, &err);
    if (!rc) {
      fs_topo_free(jobs[0]->topo);
      jobs[0]->topo = te;
      rc = fs_job_validate(jobs[0], &err);
    }
  }
  for (int32_t k = 0; k < n_in && !rc && (transport || connections || rate_control || pkt); k++)
    if (fs__cli_transport("train", transport, connections, rate_control, pkt, 1,
                          &jobs[k]->transport)) {
      fs__cli_progress_end(&pr);
      for (int32_t j = 0; j < n_in; j++) fs_job_free(jobs[j]);
      return 2;
    }
  /* every output is opened before the run, so a bad path costs nothing */
  if (!rc && ((trace && fs__cli_output_open(trace, &trace_out)) ||
              (report && fs__cli_output_open(report, &report_out)))) {
    status = 2;
    fs__cli_progress_end(&pr);
    goto out;
  }
  if (!rc && chakra_dir && fs_output_dir_open(chakra_dir, &chakra_out, &err)) {
    status = fs__cli_fail(&err);
    fs__cli_progress_end(&pr);
    goto out;
  }
  if (!rc && n_in == 1) {
    rc = fs_train_new(jobs[0], &opts, &tr, &err);
    if (!rc) rc = fs_train_run(tr, &res[0], &err);
  } else if (!rc) {
    rc = fs_cluster_new(jobs, n_in, &opts, &cl, &err);
    if (!rc) rc = fs_cluster_run(cl, res, &err);
  }
  fs__cli_progress_end(&pr);
  if (rc) {
    status = fs__cli_fail(&err);
    goto out;
  }
  const fs_train *trs[MAX_JOBS] = {tr};
  for (int32_t k = 0; cl && k < n_in; k++) trs[k] = fs_cluster_job(cl, k);
  train_report_ctx rctx = {jobs, trs, res, n_in};
  if (trace_out) {
    status = fs__cli_output_write(trace_out, train_trace, &rctx);
    trace_out = NULL;
    if (status) goto out;
  }
  if (report_out) {
    status = fs__cli_output_write(report_out, train_report, &rctx);
    report_out = NULL;
    if (status) goto out;
  }
  if (chakra_out) {
    size_t cap = strlen(chakra_dir) + sizeof("/trace");
    char *prefix = malloc(cap);
    if (!prefix) {
      status = fs__cli_fail(&(fs_err){FS_ENOMEM, "out of memory"});
      goto out;
    }
    snprintf(prefix, cap, "%s/trace", chakra_dir);
    const fs_sim *sim = fs_train_sim(tr);
    if (fs_chakra_write_sim(sim, fs_sim_topo(sim)->n_hosts, prefix, &err)) {
      free(prefix);
      status = fs__cli_fail(&err);
      goto out;
    }
    fs_output_dir_commit(chakra_out);
    chakra_out = NULL;
    fprintf(stderr, "fabricsim train: Chakra traces in %s.<rank>.et (%d ranks)\n", prefix,
            fs_sim_topo(sim)->n_hosts);
    free(prefix);
  }
  if (n_in > 1)
    rc = json ? fs_report_cluster_json(stdout, jobs, n_in, res)
              : fs_report_cluster_text(stdout, jobs, n_in, res);
  else
    rc = json ? fs_report_train_json(stdout, jobs[0], &res[0])
              : fs_report_train_text(stdout, jobs[0], &res[0]);
  if (rc) status = 1;
  if (!json) printf("wall time:          %.3f s\n", fs__cli_progress_elapsed(&pr));
out:
  fs_output_abort(trace_out);
  fs_output_abort(report_out);
  fs_output_dir_abort(chakra_out);
  fs_train_free(tr);
  fs_cluster_free(cl);
  for (int32_t k = 0; k < n_in; k++) fs_job_free(jobs[k]);
  return status;
}
