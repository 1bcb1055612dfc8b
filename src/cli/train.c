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
#include "fabricsim/chakra.h"
#include "fabricsim/html.h"
#include "fabricsim/report.h"
#include "fabricsim/train.h"

#define MAX_JOBS 64

static void help(FILE *f) {
  fprintf(f,
          "usage: fabricsim train JOB.json [JOB2.json ...] [options]\n"
          "\n"
          "Simulates one training iteration (docs/formats.md, docs/model-work.md)\n"
          "and prints iteration time, tokens/s, TFLOP/s per GPU, MFU, where the\n"
          "time goes and the collectives. Several job files share one cluster:\n"
          "the first job's topology, routing and failures (the others must give\n"
          "the same), jobs placed one after another in whole servers, their\n"
          "traffic contending; each job gets its report.\n"
          "\n"
          "  --format text|json  the summary's format (default text)\n"
          "  --trace FILE        Perfetto / Chrome trace of the iteration (one job)\n"
          "  --report FILE.html  self-contained HTML report: timeline, time split,\n"
          "                      link heatmaps, topology (one job; implies\n"
          "                      --no-symmetry)\n"
          "  --free-comm         what-if: every communication takes no time\n"
          "  --comm all|isolated all (default): every kind of traffic (TP, SP, EP,\n"
          "                      ZeRO-3, PP, DP) contends in one simulation;\n"
          "                      isolated: TP, EP and ZeRO-3 timed alone, only PP and\n"
          "                      DP contend (the report of 'all' also gives this)\n"
          "  --no-compare        with --comm all, skip the isolated run it reports\n"
          "  --no-symmetry       simulate every rail, even where the rail symmetry\n"
          "                      shortcut is exact (a trace implies it)\n"
          "  --transport KIND    fluid (default), tcp or rdma: packet effects in the\n"
          "                      engine (fabricsim sim --help); overrides the file's\n"
          "  --connections new|persistent  tcp: persistent (default: NCCL connects\n"
          "                      once) or a new connection per message\n"
          "  --rate-control dcqcn|dctcp|ideal  rdma: DCQCN's rate control, tcp:\n"
          "                      DCTCP's, or max-min at once (ideal, the default;\n"
          "                      fabricsim sim --help)\n"
          FS__CLI_PACKET_BYTES_HELP
          "  --export-chakra DIR write the iteration as MLCommons Chakra traces\n"
          "                      DIR/trace.<rank>.et (every rank; TP as messages)\n"
          "  --tune nccl|sim     how 'auto' algorithms are picked: NCCL's cost model\n"
          "                      (default) or the fastest simulated alone\n"
          "  --buckets N         data-parallel collectives per model chunk at most\n"
          "                      (default 4)\n"
          "  --iterations N      simulate N iterations back to back (default 1); the\n"
          "                      report is the last one's, with the first and mean\n");
}

typedef struct train_report_ctx {
  const fs_job *job;
  const fs_train *tr;
  const fs_train_result *res;
} train_report_ctx;

static int train_trace(FILE *f, void *ctx) {
  const train_report_ctx *c = ctx;
  return fs_report_train_trace(f, c->job, c->tr);
}

static int train_report(FILE *f, void *ctx) {
  const train_report_ctx *c = ctx;
  return fs_html_train_report(f, c->job, c->tr, c->res);
}

/* Several jobs: a header per job, then its summary; JSON: {"jobs": [...]}. */
static int print_cluster(fs_job **jobs, int32_t n, const fs_train_result *res, int json) {
  int rc = 0;
  if (json) printf("{\"jobs\":[");
  for (int32_t k = 0; k < n && !rc; k++) {
    if (json) {
      if (k) printf(",");
      rc = fs_report_train_json(stdout, jobs[k], &res[k]);
      continue;
    }
    printf("%s== job %d of %d: %s (cluster GPUs %lld-%lld) ==\n", k ? "\n" : "", k + 1, n,
           jobs[k]->file, (long long)jobs[k]->gpu_offset,
           (long long)(jobs[k]->gpu_offset + fs_job_gpus(jobs[k]) - 1));
    rc = fs_report_train_text(stdout, jobs[k], &res[k]);
  }
  if (json) printf("]}\n");
  return rc;
}

int fs__cli_train(int argc, char **argv) {
  const char *in[MAX_JOBS], *format = "text", *trace = NULL, *report = NULL;
  const char *transport = NULL, *connections = NULL, *chakra_dir = NULL;
  const char *rate_control = NULL, *pkt = NULL;
  int32_t n_in = 0;
  fs_train_opts opts = {0};
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      help(stdout);
      return 0;
    } else if (strcmp(a, "--format") == 0 && i + 1 < argc) {
      format = argv[++i];
    } else if (strcmp(a, "--trace") == 0 && i + 1 < argc) {
      trace = argv[++i];
    } else if (strcmp(a, "--export-chakra") == 0 && i + 1 < argc) {
      chakra_dir = argv[++i];
    } else if (strcmp(a, "--report") == 0 && i + 1 < argc) {
      report = argv[++i];
    } else if (strcmp(a, "--free-comm") == 0) {
      opts.free_comm = 1;
    } else if (strcmp(a, "--comm") == 0 && i + 1 < argc) {
      if (fs_train_comm_parse(argv[++i], &opts.comm))
        return fs__cli_usage("train", "--comm must be all or isolated, got '%s'", argv[i]);
    } else if (strcmp(a, "--no-compare") == 0) {
      opts.no_compare = 1;
    } else if (strcmp(a, "--no-symmetry") == 0) {
      opts.no_symmetry = 1;
    } else if (strcmp(a, "--transport") == 0 && i + 1 < argc) {
      transport = argv[++i];
    } else if (strcmp(a, "--connections") == 0 && i + 1 < argc) {
      connections = argv[++i];
    } else if (strcmp(a, "--rate-control") == 0 && i + 1 < argc) {
      rate_control = argv[++i];
    } else if (strcmp(a, "--packet-bytes") == 0 && i + 1 < argc) {
      pkt = argv[++i];
    } else if (strcmp(a, "--tune") == 0 && i + 1 < argc) {
      if (fs_coll_tune_policy_parse(argv[++i], &opts.tune))
        return fs__cli_usage("train", "--tune must be nccl or sim, got '%s'", argv[i]);
    } else if (strcmp(a, "--buckets") == 0 && i + 1 < argc) {
      long b;
      if (fs__cli_parse_long(argv[++i], 1, 1024, &b))
        return fs__cli_usage("train", "--buckets must be in [1, 1024], got '%s'", argv[i]);
      opts.max_buckets = (int32_t)b;
    } else if (strcmp(a, "--iterations") == 0 && i + 1 < argc) {
      long n;
      if (fs__cli_parse_long(argv[++i], 1, 1000, &n))
        return fs__cli_usage("train", "--iterations must be in [1, 1000], got '%s'", argv[i]);
      opts.iterations = (int32_t)n;
    } else if (a[0] == '-' && a[1]) {
      return fs__cli_usage("train", "unknown option or missing value '%s'", a);
    } else if (n_in == MAX_JOBS) {
      return fs__cli_usage("train", "at most %d job files, got more", MAX_JOBS);
    } else {
      in[n_in++] = a;
    }
  }
  if (!n_in) return fs__cli_usage("train", "missing JOB.json");
  if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0)
    return fs__cli_usage("train", "--format must be text or json, got '%s'", format);
  if (trace && n_in > 1)
    return fs__cli_usage("train", "--trace takes one job file, got %d", n_in);
  int json = strcmp(format, "json") == 0;
  if (trace) opts.no_symmetry = 1; /* the trace's link utilisation needs every link */
  if (chakra_dir && n_in > 1)
    return fs__cli_usage("train", "--export-chakra takes one job file, got %d", n_in);
  if (chakra_dir) { /* every rank's own traffic, TP as messages */
    opts.no_symmetry = 1;
    opts.tp_flows = 1;
  }
  if (report && n_in > 1)
    return fs__cli_usage("train", "--report takes one job file, got %d", n_in);
  /* the trace's and the report's link utilisation need every link */
  if (trace || report) opts.no_symmetry = 1;
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
  if (trace_out) {
    train_report_ctx tc = {jobs[0], tr, &res[0]};
    status = fs__cli_output_write(trace_out, train_trace, &tc);
    trace_out = NULL;
    if (status) goto out;
  }
  if (report_out) {
    train_report_ctx rc_ = {jobs[0], tr, &res[0]};
    status = fs__cli_output_write(report_out, train_report, &rc_);
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
    rc = print_cluster(jobs, n_in, res, json);
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
