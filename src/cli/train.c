/* fabricsim train: one training iteration of a job file, where its time
 * goes, and optionally a Perfetto trace of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "fabricsim/train.h"

static void help(FILE *f) {
  fprintf(f,
          "usage: fabricsim train JOB.json [options]\n"
          "\n"
          "Simulates one training iteration (docs/formats.md, docs/model-work.md)\n"
          "and prints iteration time, tokens/s, TFLOP/s per GPU, MFU, where the\n"
          "time goes and the collectives.\n"
          "\n"
          "  --format text|json  the summary's format (default text)\n"
          "  --trace FILE        Perfetto / Chrome trace of the iteration\n"
          "  --free-comm         what-if: every communication takes no time\n"
          "  --buckets N         data-parallel collectives per model chunk at most\n"
          "                      (default 4)\n");
}

int fs__cli_train(int argc, char **argv) {
  const char *in = NULL, *format = "text", *trace = NULL;
  fs_train_opts opts = {0, 0, NULL};
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      help(stdout);
      return 0;
    } else if (strcmp(a, "--format") == 0 && i + 1 < argc) {
      format = argv[++i];
    } else if (strcmp(a, "--trace") == 0 && i + 1 < argc) {
      trace = argv[++i];
    } else if (strcmp(a, "--free-comm") == 0) {
      opts.free_comm = 1;
    } else if (strcmp(a, "--buckets") == 0 && i + 1 < argc) {
      char *end;
      long b = strtol(argv[++i], &end, 10);
      if (*end || b < 1 || b > 1024)
        return fs__cli_usage("train", "--buckets must be in [1, 1024], got '%s'", argv[i]);
      opts.max_buckets = (int32_t)b;
    } else if (a[0] == '-' && a[1]) {
      return fs__cli_usage("train", "unknown option or missing value '%s'", a);
    } else if (in) {
      return fs__cli_usage("train", "one job file expected, got '%s' and '%s'", in, a);
    } else {
      in = a;
    }
  }
  if (!in) return fs__cli_usage("train", "missing JOB.json");
  if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0)
    return fs__cli_usage("train", "--format must be text or json, got '%s'", format);
  fs__cli_progress pr;
  fs__cli_progress_start(&pr, "train");
  fs_sim_opts so = {0};
  so.progress = fs__cli_progress_hook;
  so.progress_ctx = &pr;
  opts.sim = &so;
  fs_err err = {0, ""};
  fs_job *job = NULL;
  fs_train *tr = NULL;
  fs_train_result res;
  int status = 0;
  int rc = fs_job_load(in, &job, &err);
  if (!rc) rc = fs_train_new(job, &opts, &tr, &err);
  if (!rc) rc = fs_train_run(tr, &res, &err);
  fs__cli_progress_end(&pr);
  if (rc) {
    status = fs__cli_fail(&err);
    goto out;
  }
  if (trace) {
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", trace, (long)getpid());
    FILE *f = fopen(tmp, "w");
    int wrc = f ? fs_train_write_trace(f, tr) : FS_EIO;
    if (f && fclose(f) != 0) wrc = FS_EIO;
    if (wrc || rename(tmp, trace) != 0) {
      remove(tmp);
      fprintf(stderr, "fabricsim: %s: cannot write the trace\n", trace);
      status = 2;
      goto out;
    }
  }
  rc = strcmp(format, "json") == 0 ? fs_train_print_json(stdout, job, &res)
                                   : fs_train_print_summary(stdout, job, &res);
  if (rc) status = 1;
  if (strcmp(format, "text") == 0) printf("wall time:          %.3f s\n", fs__cli_progress_elapsed(&pr));
out:
  fs_train_free(tr);
  fs_job_free(job);
  return status;
}
