/* CLI tests of `fabricsim train` and `fabricsim coll`: real output that
 * parses and agrees with the library, bad input that exits 2 with one line. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabricsim/coll.h"
#include "fabricsim/work.h"
#include "test.h"

static int one_line(const char *s) {
  const char *nl = strchr(s, '\n');
  return nl && nl[1] == '\0' && strncmp(s, "fabricsim", 9) == 0;
}

/* Replaces the number after "key": in s by 0 (still JSON):
 * the engine's measured wall time and peak RSS are the only fields that
 * vary between runs. */
static void blank_measured(char *s, const char *key) {
  char *p = strstr(s, key);
  if (!p) return;
  p += strlen(key);
  char *q = p;
  while (*q && *q != ',' && *q != '}') q++;
  /* "0" in place of the number (its length varies between runs) */
  *p = '0';
  memmove(p + 1, q, strlen(q) + 1);
}

TEST(test_cli_train_json_and_determinism) {
  static char a[16384], b[16384];
  CHECK_EQ_INT(test_run_cli("train examples/gpt-13b.json --format json", "2>/dev/null", a,
                            sizeof(a)), 0);
  CHECK_EQ_INT(test_run_cli("train examples/gpt-13b.json --format json", "2>/dev/null", b,
                            sizeof(b)), 0);
  CHECK(strstr(a, "\"wall_s\":") != NULL && strstr(a, "\"peak_rss_bytes\":") != NULL);
  blank_measured(a, "\"wall_s\":");
  blank_measured(b, "\"wall_s\":");
  blank_measured(a, "\"peak_rss_bytes\":");
  blank_measured(b, "\"peak_rss_bytes\":");
  CHECK(strcmp(a, b) == 0);
  cJSON *root = cJSON_Parse(a);
  CHECK(root != NULL);
  double it = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(root, "iteration_ns"));
  double mfu = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(root, "mfu"));
  CHECK(it > 0);
  CHECK(mfu > 0 && mfu <= 0.5); /* mfu_matmul 0.5 caps it */
  const cJSON *br = cJSON_GetObjectItemCaseSensitive(root, "breakdown");
  double sum = 0;
  for (const cJSON *k = br ? br->child : NULL; k; k = k->next)
    if (strcmp(k->string, "stage") != 0) sum += k->valuedouble;
  /* compute + bubble + exposed parts cover the iteration exactly */
  CHECK_REL(sum, it, 1e-6, "ns");
  /* the network's cost and power are the topology's, as `topo` gives them */
  fs_job *job = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_job_load("examples/gpt-13b.json", &job, &err), &err);
  if (job) {
    fs_topo_cost c;
    fs_topo_cost_compute(job->topo, &c);
    CHECK(c.usd > 0 && c.watts > 0);
    CHECK_REL(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(root, "network_cost_usd")),
              c.usd, 1e-12, "USD");
    CHECK_REL(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(root, "network_watts")),
              c.watts, 1e-12, "W");
  }
  fs_job_free(job);
  cJSON_Delete(root);
}

TEST(test_cli_train_trace_and_bad_jobs) {
  static char out[8192];
  char cmd[256];
  snprintf(cmd, sizeof(cmd), "train examples/gpt-13b.json --trace /tmp/fabricsim-test-trace.%d.json",
           (int)getpid());
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0);
  snprintf(cmd, sizeof(cmd), "/tmp/fabricsim-test-trace.%d.json", (int)getpid());
  FILE *f = fopen(cmd, "r");
  CHECK(f != NULL);
  if (f) {
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    /* the file is larger than the buffer: check its start is the format */
    CHECK(strncmp(buf, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", 38) == 0);
    CHECK(strstr(buf, "\"F mb0 chunk0\"") != NULL);
    remove(cmd);
  }
  char badpath[64], badcmd[96];
  snprintf(badpath, sizeof(badpath), "/tmp/fabricsim-bad-job.%d.json", (int)getpid());
  snprintf(badcmd, sizeof(badcmd), "train %s", badpath);
  FILE *bad = fopen(badpath, "w");
  CHECK(bad != NULL);
  if (!bad) return;
  fputs("{\"model\": {\"layers\": 8, \"hidden\": 1024, \"heads\": 16, \"seq_len\": 1024,"
        " \"vocab\": 32000}, \"training\": {\"global_batch\": 8, \"micro_batch\": 1},"
        " \"parallelism\": {\"tp\": 3, \"pp\": 1, \"dp\": 1},"
        " \"hardware\": {\"gpu_tflops\": 100, \"hbm_gib\": 80, \"gpus_per_node\": 8,"
        " \"nvlink_gbps\": 1000}, \"topology\": {\"type\": \"star\", \"hosts\": 8}}",
        bad);
  fclose(bad);
  CHECK_EQ_INT(test_run_cli(badcmd, "2>&1", out, sizeof(out)), 2);
  CHECK(one_line(out));
  CHECK(strstr(out, "$.parallelism.tp") != NULL);
  CHECK(strstr(out, "3") != NULL);
  remove(badpath);
  CHECK_EQ_INT(test_run_cli("train", "2>&1", out, sizeof(out)), 2);
  CHECK_EQ_INT(test_run_cli("train examples/gpt-13b.json --format xml", "2>&1", out, sizeof(out)),
               2);
}

TEST(test_cli_coll_table_matches_library) {
  static char out[8192];
  CHECK_EQ_INT(test_run_cli("coll --op allreduce --algo ring --ranks 8 --topo "
                            "star:hosts=8,gbps=100,latency_ns=500 --sizes 1M --format csv",
                            "2>&1", out, sizeof(out)),
               0);
  /* header, then size,count,type,time_us,... */
  const char *row = strchr(out, '\n');
  CHECK(row != NULL);
  if (!row) return;
  double size, count, time_us, algbw, busbw;
  CHECK_EQ_INT(sscanf(row + 1, "%lf,%lf,float,%lf,%lf,%lf", &size, &count, &time_us, &algbw,
                      &busbw), 5);
  fs_coll_params prm;
  fs_coll_params_init(&prm);
  prm.algo = FS_ALGO_RING;
  prm.bytes = 1 << 20;
  fs_coll_cost cost = {1e-6, 8 / 100e9, 0};
  CHECK_REL(time_us, fs_coll_model_time(&prm, 8, &cost) * 1e6, 1e-6, "us");
  CHECK_REL(busbw, algbw * 2 * 7 / 8, 1e-4, "GB/s");
}

/* The closed-form column on GPU servers: a ring inside one server is
 * timed over its scale-up links (beta from the path's slowest link, not the
 * GPU's NIC), exactly the simulated time; a ring over 4 whole servers
 * (8 channels, one NIC each) against the per-NIC bound
 * 2 (p - 1) / p x (S / 8) / NIC rate, within the 62 steps' latencies. */
TEST(test_cli_coll_model_on_servers) {
  static char out[8192];
  const char *topo = "railopt:servers=4,gpus_per_node=8,host_gbps=200,nvlink_gbps=2400";
  for (int whole = 0; whole < 2; whole++) {
    char cmd[512];
    snprintf(cmd, sizeof(cmd),
             "coll --op allreduce --algo ring --ranks %d --topo %s --routing spray --sizes 1G "
             "--format csv",
             whole ? 32 : 8, topo);
    CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0);
    const char *row = strchr(out, '\n');
    CHECK(row != NULL);
    if (!row) return;
    double size, count, time_us, algbw, busbw, model_us;
    CHECK_EQ_INT(sscanf(row + 1, "%lf,%lf,float,%lf,%lf,%lf,%lf", &size, &count, &time_us,
                        &algbw, &busbw, &model_us), 6);
    if (!whole) {
      CHECK_REL(model_us, time_us, 1e-6, "us");
    } else {
      double bound_us = 2.0 * 31 / 32 * (size / 8) * 8 / 200e9 * 1e6;
      CHECK(model_us >= bound_us && model_us <= bound_us * 1.02);
      CHECK(time_us >= bound_us && time_us <= bound_us * 1.02);
    }
  }
}

TEST(test_cli_coll_bad_input_exit_2) {
  static char out[4096];
  const char *bad[] = {
      "coll --op allreduce --ranks 0 --topo star:hosts=4",
      "coll --op allreduce --ranks 4 --topo star:hosts=4 --sizes 0",
      "coll --op allreduce --ranks 4 --topo star:hosts=4 --sizes -5",
      "coll --op allreduce --algo nosuch --ranks 4 --topo star:hosts=4",
      "coll --op alltoall --algo ring --ranks 4 --topo star:hosts=4",
      "coll --op frobnicate --ranks 4 --topo star:hosts=4",
      "coll --op allreduce --ranks 9 --topo star:hosts=4",
      "coll --op broadcast --root 7 --ranks 4 --topo star:hosts=4",
      "coll --op allreduce --ranks 4 --topo fattree:k=3",
      "coll --op allreduce --algo inc --ranks 4 --topo star:hosts=4 --sizes 1M",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    int st = test_run_cli(bad[i], "2>&1", out, sizeof(out));
    if (st != 2 || !one_line(out))
      test_fail(__FILE__, __LINE__, "'%s': exit %d, output:\n%s", bad[i], st, out);
  }
  /* sizes (issue 45): each refusal names the option and what is wrong */
  static const struct {
    const char *args, *want;
  } sizes[] = {
      {"--size 99999999999G", "--size must be at most 1e18 bytes, got '99999999999G'"},
      {"--sizes 1M,,2M", "--sizes: item 2 is empty in '1M,,2M'"},
      {"--sizes 1M,", "--sizes: item 2 is empty"},
      {"-b 1K -e 4K -f 1.0000001", "-f/--stepfactor 1.0000001 does not grow the size past 1024 bytes"},
      {"-b 1 -e 1G -f 1.002", "does not grow the size past 1 bytes"},
      {"-b 1K -e 1G -f 1.003", "gives more than 4096 sizes"},
      {"-b 0x10 -e 1K", "-b/--minbytes must be a size > 0 (suffixes K M G), got '0x10'"},
  };
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "coll --op allreduce --ranks 4 --topo star:hosts=4 %s",
             sizes[i].args);
    int st = test_run_cli(cmd, "2>&1", out, sizeof(out));
    if (st != 2 || !one_line(out) || !strstr(out, sizes[i].want))
      test_fail(__FILE__, __LINE__, "'%s': exit %d, output:\n%s", cmd, st, out);
  }
  /* a ranks file's hosts: named by file and entry (issue 45) */
  static const struct {
    const char *json, *want;
  } rf[] = {
      {"[0, 1, 9]", "$[2]: host 9 is not one of the topology's hosts [0, 4)"},
      {"[0, 1, 1]", "$[2]: host 1 is already rank 1's ($[1])"},
  };
  char path[64];
  snprintf(path, sizeof(path), "/tmp/fabricsim-ranks-%d.json", (int)getpid());
  for (size_t i = 0; i < sizeof(rf) / sizeof(rf[0]); i++) {
    char cmd[256];
    CHECK_EQ_INT(test_write_file(path, rf[i].json), 0);
    snprintf(cmd, sizeof(cmd), "coll --op allreduce --topo star:hosts=4 --size 1M --ranks-file %s",
             path);
    int st = test_run_cli(cmd, "2>&1", out, sizeof(out));
    if (st != 2 || !one_line(out) || !strstr(out, rf[i].want) || !strstr(out, path))
      test_fail(__FILE__, __LINE__, "'%s' (%s): exit %d, output:\n%s", cmd, rf[i].json, st, out);
  }
  /* one rank: no time, so no bandwidth (0, not inf or nan) */
  CHECK_EQ_INT(test_write_file(path, "[2]"), 0);
  char one[256];
  snprintf(one, sizeof(one), "coll --op allreduce --topo star:hosts=4 --size 1M --format csv "
                             "--ranks-file %s", path);
  CHECK_EQ_INT(test_run_cli(one, "2>&1", out, sizeof(out)), 0);
  CHECK(strstr(out, "inf") == NULL && strstr(out, "nan") == NULL);
  remove(path);
  /* a long --sizes list is read whole (it used to be cut at 4 KB) */
  static char cmd[8192];
  int n = snprintf(cmd, sizeof(cmd), "coll --op allreduce --ranks 4 --topo star:hosts=4 "
                                     "--format csv --sizes 1");
  for (int k = 2; k <= 1200; k++) n += snprintf(cmd + n, sizeof(cmd) - (size_t)n, ",%d", k);
  static char big[262144];
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", big, sizeof(big)), 0);
  int rows = -1;
  for (const char *p = big; *p; p++) rows += *p == '\n';
  CHECK_EQ_INT(rows, 1200);
}

/* nccl-tests' -b/-e/-f sweep and a single --size. */
static int csv_rows(const char *out) {
  int n = -1; /* the header line */
  for (const char *p = out; *p; p++) n += *p == '\n';
  return n;
}

TEST(test_cli_coll_nccl_tests_sizes) {
  static char out[16384];
  CHECK_EQ_INT(test_run_cli("coll --op allreduce --topo fattree:k=4 --ranks 8 -b 1K -e 16K -f 2 "
                            "--format csv", "2>&1", out, sizeof(out)), 0);
  CHECK_EQ_INT(csv_rows(out), 5); /* 1K 2K 4K 8K 16K */
  CHECK(strncmp(strchr(out, '\n') + 1, "1024,", 5) == 0);
  CHECK_EQ_INT(test_run_cli("coll --op allreduce --topo fattree:k=4 --ranks 8 -b 1K -e 1M -f 32 "
                            "--format csv", "2>&1", out, sizeof(out)), 0);
  CHECK_EQ_INT(csv_rows(out), 3); /* 1K 32K 1M */
  CHECK_EQ_INT(test_run_cli("coll --op allreduce --topo fattree:k=4 --ranks 8 --size 1G "
                            "--format csv", "2>&1", out, sizeof(out)), 0);
  CHECK_EQ_INT(csv_rows(out), 1);
  CHECK(strncmp(strchr(out, '\n') + 1, "1073741824,", 11) == 0);
  CHECK_EQ_INT(test_run_cli("coll --op allreduce --topo fattree:k=4 --ranks 8 -b 8 -f 1", "2>&1",
                            out, sizeof(out)), 2);
  CHECK(strstr(out, "-f") != NULL);
  CHECK_EQ_INT(test_run_cli("coll --op allreduce --topo fattree:k=4 --ranks 8 -b 8 --size 1G",
                            "2>&1", out, sizeof(out)), 2);
  CHECK_EQ_INT(test_run_cli("coll --op allreduce --topo fattree:k=4 --ranks 8 -b 8M -e 1K",
                            "2>&1", out, sizeof(out)), 2);
}

/* --max-memory: a collective whose flows cannot fit is refused before any
 * work, naming the estimate and the option; a bad value is a usage error;
 * 0 lifts the limit. */
TEST(test_cli_max_memory) {
  char out[4096];
  CHECK_EQ_INT(test_run_cli("coll --op alltoall --algo direct --ranks 4096 --topo "
                            "star:hosts=4096,gbps=100 --size 1M --max-memory 1G",
                            "2>&1", out, sizeof(out)),
               2);
  CHECK(strstr(out, "alltoall over 4096 ranks with direct lowers 16773120 flows") != NULL);
  CHECK(strstr(out, "more than the 1.00 GiB this run may use (--max-memory SIZE") != NULL);
  CHECK_EQ_INT(test_run_cli("--max-memory 12X coll --op allreduce --ranks 4 --topo "
                            "star:hosts=4,gbps=100 --size 1M",
                            "2>&1", out, sizeof(out)),
               2);
  CHECK(strstr(out, "--max-memory: must be a size") != NULL);
  CHECK_EQ_INT(test_run_cli("coll --op alltoall --algo direct --ranks 64 --topo "
                            "star:hosts=64,gbps=100 --size 1M --max-memory=0",
                            "2>/dev/null", out, sizeof(out)),
               0);
  CHECK(strstr(out, "1048576") != NULL);
}
