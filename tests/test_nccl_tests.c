/* `fabricsim coll` in nccl-tests' conventions (issue 45): a pasted
 * nccl-tests command line runs; --format nccl-tests is nccl-tests' table,
 * whose columns keep nccl-tests' relations (size and count per
 * collective, the type's element size, the average bus bandwidth); bad
 * values of its flags exit 2 with one line and nothing on stdout; and
 * scripts/nccl-tests-parse.py, a reader written for nccl-tests' output,
 * reads ours and a sample of nccl-tests' own alike. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "test.h"

/* The rows of nccl-tests' table in out: each line not starting with '#'
 * of 13 whitespace-separated columns, as nccl-tests' readers split it. */
typedef struct nrow {
  long long size, count;
  char type[16], redop[16];
  int root;
  double t[2], algbw[2], busbw[2];
  char wrong[2][8];
} nrow;

static int nccl_rows(const char *out, nrow *rows, int max, double *avg) {
  int n = 0;
  *avg = -1;
  for (const char *p = out; *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    char line[512];
    snprintf(line, sizeof(line), "%.*s", (int)(len < 511 ? len : 511), p);
    if (line[0] == '#') {
      sscanf(line, "# Avg bus bandwidth : %lf", avg);
    } else if (n < max) {
      nrow *r = &rows[n];
      if (sscanf(line, "%lld %lld %15s %15s %d %lf %lf %lf %7s %lf %lf %lf %7s", &r->size,
                 &r->count, r->type, r->redop, &r->root, &r->t[0], &r->algbw[0], &r->busbw[0],
                 r->wrong[0], &r->t[1], &r->algbw[1], &r->busbw[1], r->wrong[1]) == 13)
        n++;
    }
    p += len + (nl != NULL);
  }
  return n;
}

static int one_line(const char *s) {
  const char *nl = strchr(s, '\n');
  return nl && nl[1] == '\0' && strncmp(s, "fabricsim", 9) == 0;
}

/* A pasted all_reduce_perf command line: its flags accepted, the timing
 * ones noted; the table's rows are -b 8 ... 128M by 2 (25), every header
 * line a comment, and the average bus bandwidth the mean of the busbw
 * columns (nccl-tests averages out-of-place and in-place). */
TEST(test_nccl_tests_pasted_command_line) {
  static char out[65536], again[65536];
  static nrow rows[64];
  const char *cmd = "coll --topo fattree:k=4 -b 8 -e 128M -f 2 -g 8 -n 20 -w 5 -c 1 -o sum "
                    "-d float --op allreduce --format nccl-tests";
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", again, sizeof(again)), 0);
  CHECK(strcmp(out, again) == 0); /* deterministic */
  CHECK(strstr(out, "# Collective test starting: all_reduce_perf\n") != NULL);
  CHECK(strstr(out, "# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup "
                    "iters: 5 iters: 20 agg iters: 1 validation: 1") != NULL);
  CHECK(strstr(out, "# -n 20 -w 5: accepted;") != NULL);
  CHECK(strstr(out, "# Out of bounds values : 0 OK\n") != NULL);
  double avg;
  int n = nccl_rows(out, rows, 64, &avg);
  CHECK_EQ_INT(n, 25);
  double sum = 0;
  for (int i = 0; i < n; i++) {
    CHECK_EQ_INT(rows[i].size, 8LL << i);
    CHECK_EQ_INT(rows[i].count, rows[i].size / 4);
    CHECK(strcmp(rows[i].type, "float") == 0 && strcmp(rows[i].redop, "sum") == 0);
    CHECK_EQ_INT(rows[i].root, -1);
    CHECK(strcmp(rows[i].wrong[0], "0") == 0 && strcmp(rows[i].wrong[1], "0") == 0);
    for (int h = 0; h < 2; h++) sum += rows[i].busbw[h];
  }
  /* each busbw shows two decimals: the mean within half a hundredth */
  CHECK(n > 0 && avg > 0 && fabs(avg - sum / (2 * n)) <= 0.005);
  /* the same command line without --format: our table, the same sizes */
  CHECK_EQ_INT(test_run_cli("coll --topo fattree:k=4 -b 8 -e 128M -f 2 -g 8 -n 20 -w 5 -c 1 "
                            "-o sum -d float --op allreduce --format csv",
                            "2>&1", out, sizeof(out)),
               0);
  CHECK(strstr(out, "\n134217728,33554432,float,") != NULL);
}

/* Size and count per collective, as nccl-tests: count per rank (all-gather,
 * reduce-scatter, all-to-all: size = count x 4 B x 8 ranks, each rank's
 * count 16-byte aligned) or the whole buffer (the rest: size = count x 4 B);
 * a size never above the one asked for; redop and root columns as
 * nccl-tests prints them. */
TEST(test_nccl_tests_size_and_count_per_collective) {
  static const struct {
    const char *op;
    int per_rank, rooted, reduces;
  } ops[] = {{"allreduce", 0, 0, 1}, {"allgather", 1, 0, 0}, {"reducescatter", 1, 0, 1},
             {"alltoall", 1, 0, 0},  {"broadcast", 0, 1, 0}, {"reduce", 0, 1, 1},
             {"sendrecv", 0, 0, 1}};
  static char out[32768];
  static nrow rows[16];
  for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
    char cmd[256];
    snprintf(cmd, sizeof(cmd),
             "coll --op %s --topo star:hosts=8 -g 8 --sizes 1000,4096,100000 -r 3 "
             "--format nccl-tests -c 0",
             ops[k].op);
    CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0);
    double avg;
    int n = nccl_rows(out, rows, 16, &avg);
    CHECK_EQ_CTX(n, 3, ops[k].op);
    static const long long asked[] = {1000, 4096, 100000};
    for (int i = 0; i < n; i++) {
      nrow *r = &rows[i];
      CHECK_EQ_CTX(r->size, r->count * 4 * (ops[k].per_rank ? 8 : 1), ops[k].op);
      CHECK(r->size <= asked[i] && asked[i] - r->size < (ops[k].per_rank ? 16 * 8 : 4));
      if (ops[k].per_rank) CHECK_EQ_CTX(r->count * 4 % 16, 0, ops[k].op);
      CHECK_EQ_CTX(r->root, ops[k].rooted ? 3 : -1, ops[k].op);
      CHECK(strcmp(r->redop, ops[k].reduces ? "sum" : "none") == 0);
      CHECK(strcmp(r->wrong[0], "N/A") == 0 && strcmp(r->wrong[1], "N/A") == 0);
    }
  }
}

/* The type sets the element size: count = size / element size, and a
 * size that is no whole number of elements is cut to one; NCCL's aliases
 * name the same type; -d all runs every type in turn, -o all every
 * reduction, -r -1 every root. */
TEST(test_nccl_tests_datatype_changes_count) {
  static const struct {
    const char *type, *shown;
    int size;
  } types[] = {{"int8", "int8", 1},     {"half", "half", 2},     {"bfloat16", "bfloat16", 2},
               {"float", "float", 4},   {"float32", "float", 4}, {"int", "int32", 4},
               {"double", "double", 8}, {"uint64", "uint64", 8}, {"f8e5m2", "f8e5m2", 1}};
  static char out[65536];
  static nrow rows[128];
  double avg;
  for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++) {
    char cmd[256];
    snprintf(cmd, sizeof(cmd),
             "coll --op allreduce --topo star:hosts=4 -g 4 --sizes 1M,1001 -d %s "
             "--format nccl-tests", types[k].type);
    CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0);
    CHECK_EQ_CTX(nccl_rows(out, rows, 128, &avg), 2, types[k].type);
    CHECK_EQ_CTX(rows[0].count, (1 << 20) / types[k].size, types[k].type);
    CHECK_EQ_CTX(rows[1].size, 1001 / types[k].size * types[k].size, types[k].type);
    CHECK(strcmp(rows[0].type, types[k].shown) == 0);
  }
  CHECK_EQ_INT(test_run_cli("coll --op allreduce --topo star:hosts=4 -g 4 --sizes 1M -d all "
                            "-o all --format nccl-tests", "2>&1", out, sizeof(out)), 0);
  CHECK_EQ_INT(nccl_rows(out, rows, 128, &avg), 12 * 6); /* every type x every reduction */
  CHECK(strcmp(rows[0].type, "int8") == 0 && strcmp(rows[1].redop, "prod") == 0);
  CHECK_EQ_INT(test_run_cli("coll --op broadcast --topo star:hosts=4 -g 4 --sizes 1M -r -1 "
                            "-o all --format nccl-tests", "2>&1", out, sizeof(out)), 0);
  CHECK_EQ_INT(nccl_rows(out, rows, 128, &avg), 4); /* broadcast takes no reduction */
  for (int i = 0; i < 4; i++) CHECK_EQ_INT(rows[i].root, i);
}

/* Bad values of nccl-tests' flags: exit 2, one line naming the flag and
 * the value, nothing on stdout. */
TEST(test_nccl_tests_bad_values_exit_2) {
  static const struct {
    const char *args, *want;
  } bad[] = {
      {"-d float17", "-d must be"},
      {"-d all7", "'all7'"},
      {"-o sumx", "-o must be"},
      {"--op bogus", "'bogus'"}, /* (the base line's --op allreduce is the collective) */
      {"-r -2", "--root must be"},
      {"-g 0", "-g given twice, '8' and '0'"}, /* (-g 0 alone: the corpus) */
      {"-t x", "-t must be"},
      {"-n 0", "--iters must be an integer in [1, 2147483647], got '0'"},
      {"-z 4", "--blocking must be"},
      {"-c -1", "-c must be"},
      {"--ranks 12", "--ranks 12 is not a multiple of -t 1 x -g 8"},
      {"-J out.json", "-J/--output_file 'out.json'"},
      {"-b 8 -e 1K -i 0", "-i/--stepbytes must be a size > 0"},
      {"-b 8 -e 1K -f 2 -i 8", "give -f or -i, not both"},
      {"--format nccl", "--format must be text, json, csv or nccl-tests"},
  };
  static char out[4096];
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "coll --op allreduce --topo star:hosts=16 -g 8 %s", bad[i].args);
    int st = test_run_cli(cmd, "2>&1", out, sizeof(out));
    if (st != 2 || !one_line(out) || !strstr(out, bad[i].want))
      test_fail(__FILE__, __LINE__, "'%s': exit %d, output:\n%s", cmd, st, out);
    CHECK_EQ_INT(test_run_cli(cmd, "2>/dev/null", out, sizeof(out)), 2);
    CHECK_EQ_INT(strlen(out), 0);
  }
}

/* Runs a shell command; its exit status, with its stdout in out. */
static int run_sh(const char *cmd, char *out, size_t n) {
  FILE *p = popen(cmd, "r");
  out[0] = '\0';
  if (!p) return -1;
  size_t len = fread(out, 1, n - 1, p);
  out[len] = '\0';
  while (fgetc(p) != EOF) {
  }
  int st = pclose(p);
  return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* scripts/nccl-tests-parse.py, written for nccl-tests' output, reads and
 * checks ours for every collective and a reconstructed sample of
 * nccl-tests' own (tests/data/nccl-tests/); a sample with a wrong average
 * fails its check, so the check can fail. */
TEST(test_nccl_tests_parse_script) {
  static const char *ops[] = {"allreduce", "allgather", "reducescatter", "alltoall",
                              "broadcast", "reduce",    "sendrecv"};
  static char out[8192];
  for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
    char cmd[512];
    snprintf(cmd, sizeof(cmd),
             "coll --op %s --topo fattree:k=4 -g 16 -b 8 -e 64M -f 4 -d half "
             "--format nccl-tests | python3 scripts/nccl-tests-parse.py --check",
             ops[k]);
    int st = test_run_cli(cmd, "2>&1", out, sizeof(out));
    if (st != 0 || !strstr(out, "\"check\": \"ok\"") || !strstr(out, "\"ranks\": 16"))
      test_fail(__FILE__, __LINE__, "%s: exit %d:\n%s", ops[k], st, out);
  }
  CHECK_EQ_INT(run_sh("python3 scripts/nccl-tests-parse.py --check "
                      "tests/data/nccl-tests/all_reduce_perf-8xH100.txt "
                      "tests/data/nccl-tests/all_gather_perf-8xH100-c0.txt 2>&1",
                      out, sizeof(out)),
               0);
  CHECK(strstr(out, "\"rows\": 25, \"test\": \"all_reduce_perf\"") != NULL);
  CHECK(strstr(out, "\"rows\": 25, \"test\": \"all_gather_perf\"") != NULL);
  CHECK_EQ_INT(run_sh("sed 's/Avg bus bandwidth    : [0-9.]*/Avg bus bandwidth    : 99.5/' "
                      "tests/data/nccl-tests/all_reduce_perf-8xH100.txt | "
                      "python3 scripts/nccl-tests-parse.py --check 2>&1",
                      out, sizeof(out)),
               1);
  CHECK(strstr(out, "avg bus bandwidth 99.5") != NULL);
}
