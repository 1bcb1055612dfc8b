/* Tests of `fabricsim sim` through the built binary (test_cli_path()): every
 * bad scenario in tests/data/bad/ must fail with exit status 2, one line
 * "fabricsim: FILE: $.json.path: what, got VALUE" and no output file; good
 * input must give results that match closed forms and are byte-stable.
 * Run from the repository root (make test does), where tests/data lives. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

#define BAD_DIR "tests/data/bad/"
#define EXAMPLE "examples/issue-example.json"

/* ---- helpers ---- */

/* Whole file into a malloc'd NUL-terminated buffer (NULL if unreadable). */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (cap - n - 1 == 0) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        buf = NULL;
      }
      buf = nb;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf) buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

static int write_bytes(const char *path, const char *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t put = fwrite(data, 1, len, f);
  return fclose(f) == 0 && put == len ? 0 : -1;
}

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* A fresh private directory for output files; "" on failure. */
static void make_tmpdir(char *dir, size_t n) {
  snprintf(dir, n, "%s", "/tmp/fabricsim-test-XXXXXX");
  if (!mkdtemp(dir)) {
    test_fail(__FILE__, __LINE__, "mkdtemp failed");
    dir[0] = '\0';
  }
}

/* Number of entries (other than . and ..) in dir: catches stray temp files. */
static int dir_entries(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(d);
  return n;
}

/* Removes dir and the files in it (no subdirectories are ever made). */
static void remove_tmpdir(const char *dir) {
  if (!dir[0]) return;
  DIR *d = opendir(dir);
  if (d) {
    for (struct dirent *e; (e = readdir(d));) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char p[1024];
      snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
      remove(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

static int count_lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

/* Checks the shape every input error must have: exactly one line, starting
 * "fabricsim: ", naming the file. Reports with the caller's line. */
static void check_one_error_line(const char *out, const char *file, const char *what,
                                 int line) {
  if (count_lines(out) != 1 || out[strlen(out) - 1] != '\n')
    test_fail(__FILE__, line, "%s: expected exactly one line of output, got:\n%s", what, out);
  if (strncmp(out, "fabricsim: ", 11) != 0)
    test_fail(__FILE__, line, "%s: output does not start with \"fabricsim: \":\n%s", what, out);
  if (file && !strstr(out, file))
    test_fail(__FILE__, line, "%s: output does not name the file %s:\n%s", what, file, out);
}

/* Runs `sim INPUT --out DIR/out.json` on a bad input and checks the error
 * contract: status 2, one line naming the file and holding every `want`
 * substring (none of those written "!substring"), and nothing left in DIR (neither the output nor a temp file). */
static void check_bad_input(const char *input, const char *const *want, int line) {
  char dir[64], outfile[128], args[1024];
  static char out[8192];
  make_tmpdir(dir, sizeof(dir));
  if (!dir[0]) return;
  snprintf(outfile, sizeof(outfile), "%s/out.json", dir);
  snprintf(args, sizeof(args), "sim '%s' --out '%s'", input, outfile);
  int st = test_run_cli(args, "2>&1", out, sizeof(out));
  if (st != 2) test_fail(__FILE__, line, "%s: expected exit status 2, got %d; output:\n%s",
                         input, st, out);
  check_one_error_line(out, input, input, line);
  for (; want && *want; want++) {
    if ((*want)[0] == '!' ? strstr(out, *want + 1) == NULL : strstr(out, *want) != NULL)
      continue;
    test_fail(__FILE__, line, "%s: expected the message %s '%s', got:\n%s", input,
              (*want)[0] == '!' ? "not to contain" : "to contain",
              *want + ((*want)[0] == '!'), out);
  }
  if (file_exists(outfile))
    test_fail(__FILE__, line, "%s: %s exists after a failed run", input, outfile);
  int left = dir_entries(dir);
  if (left != 0)
    test_fail(__FILE__, line, "%s: expected no files left in %s, found %d", input, dir, left);
  remove_tmpdir(dir);
}

/* ---- bad scenario files ---- */

typedef struct bad_case {
  const char *file;    /* under tests/data/bad/ */
  const char *want[4]; /* substrings the one error line must contain */
} bad_case;

/* Each case names the JSON path of the offending value and, where there is
 * one, the value as the message renders it ("got ..."). */
static const bad_case bad_cases[] = {
    /* malformed JSON: no path, but line and column */
    {"truncated.json", {"line 2, column 58", "malformed JSON", "unexpected end of input"}},
    {"trailing-garbage.json", {"line 2, column 61", "malformed JSON near 'xyz"}},
    {"empty.json", {"line 1, column 1", "malformed JSON", "unexpected end of input"}},
    {"deep-nesting.json", {"line 1", "malformed JSON"}},
    {"root-not-object.json", {"$: must be an object", "got [{\"topology\""}},
    /* unknown and duplicate keys */
    {"unknown-top-key.json", {"$.flowz: unknown key", "topology, routing, flows"}},
    {"unknown-flow-key.json", {"$.flows[1].size: unknown key", "id, src, dst, bytes"}},
    {"duplicate-key.json", {"$.flows[0].src: duplicate key"}},
    {"duplicate-key-top.json", {"$.flows: duplicate key"}},
    {"duplicate-key-topology.json", {"$.topology.hosts: duplicate key"}},
    /* wrong types and ranges */
    {"bytes-string.json", {"$.flows[0].bytes: must be an integer", "got \"1000\""}},
    {"src-fraction.json", {"$.flows[0].src: must be an integer", "got 1.5"}},
    {"bytes-negative.json", {"$.flows[0].bytes: must be >= 0", "got -5"}},
    {"start-negative.json", {"$.flows[0].start_ns: must be >= 0", "got -1"}},
    {"duration-negative.json", {"$.tasks[0].duration_ns: must be >= 0", "got -5000"}},
    {"src-out-of-range.json", {"$.flows[0].src: must be an integer in [0, 7]", "got 8"}},
    {"dst-out-of-range.json", {"$.flows[1].dst: must be an integer in [0, 7]", "got 1000"}},
    {"task-host-out-of-range.json", {"$.tasks[0].host: must be an integer in [0, 7]", "got 8"}},
    {"src-equals-dst.json", {"$.flows[0].dst: must differ from src", "got 3"}},
    {"huge-1e400.json", {"$.flows[0].bytes: number too large to represent", "!got null"}},
    {"src-huge-1e400.json", {"$.flows[0].src: number too large to represent"}},
    {"huge-2p60.json", {"$.flows[0].bytes:", "1.152921504606847e+18", "9007199254740992"}},
    /* ids and dependencies */
    {"after-unknown-id.json", {"$.flows[1].after[0]: unknown id", "got \"nope\""}},
    {"after-not-array.json", {"$.flows[1].after: must be an array of ids", "got \"a\""}},
    {"after-duplicate.json", {"$.flows[1].after[1]: duplicate id in after", "got \"a\""}},
    {"duplicate-id.json", {"$.tasks[0].id: duplicate id \"a\"", "$.flows[0]"}},
    {"id-empty.json", {"$.flows[0].id: must not be empty", "got \"\""}},
    {"self-dependency.json", {"$.flows[1].after[1]: an item cannot wait for itself",
                              "got \"b\""}},
    /* a waits for b and b for a: a -> b means "b waits for a" */
    {"cycle-2.json", {"$.flows[0].after: dependency cycle: b -> a -> b"}},
    /* c (a task) waits for a, b for c, a for b */
    {"cycle-3-task.json", {"$.tasks[0].after: dependency cycle: a -> c -> b -> a"}},
    /* topology */
    {"topology-missing.json", {"$.topology: required object is missing"}},
    {"topology-unknown-type.json", {"$.topology.type: unknown topology type", "got \"hypercube\""}},
    {"fattree-odd-k.json", {"$.topology.k: must be even", "got 5"}},
    {"zero-hosts.json", {"$.topology.hosts: must be an integer in [1,", "got 0"}},
    {"gbps-negative.json", {"$.topology.host_gbps: must be in", "got -100"}},
    {"leafspine-too-many-cables.json", {"$.topology: leafspine: too large", "33556480 cables", "4194304 cables"}},
    /* routing and explicit paths */
    {"routing-unknown.json", {"$.routing.mode: unknown routing mode", "got \"magic\""}},
    {"explicit-missing-path.json", {"$.flows[1].path: required when routing mode is explicit"}},
    {"explicit-not-adjacent.json", {"$.flows[0].path: no link from node 8 to node 9"}},
    {"explicit-wrong-start.json", {"$.flows[0].path: must start at src (0) and end at dst (4)",
                                   "got [1,8,10,9,4]"}},
    {"path-node-out-of-range.json", {"$.flows[0].path[2]: must be an integer in [0, 11]",
                                     "got 12"}},
    {"path-through-host.json", {"$.flows[0].path: path forwards through host 1"}},
    /* user strings holding a newline are escaped: the error stays one line */
    {"key-newline.json", {"$.flows[0].x\\ny: unknown key"}},
    {"id-newline.json", {"$.tasks[0].id: duplicate id \"a\\nb\"", "$.flows[0]"}},
    {"cycle-newline-ids.json", {"$.flows[0].after: dependency cycle: b -> x\\ny -> b"}},
    /* text that is not UTF-8 (a stray byte, an encoded surrogate) never
     * reaches an output (issue 45) */
    {"id-not-utf8.json", {"line 3, column 22: byte 0xFF is not UTF-8"}},
    {"id-surrogate-utf8.json", {"line 3, column 21: byte 0xED is not UTF-8"}},
    {"routing-mode-misfit.json",
     {"$.routing.mode: dor routing needs a torus or ring topology, not leafspine:", "got \"dor\""}},
};

TEST(test_cli_sim_bad_inputs_exit_2_with_one_precise_line) {
  for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
    char path[256];
    snprintf(path, sizeof(path), BAD_DIR "%s", bad_cases[i].file);
    if (!file_exists(path)) {
      test_fail(__FILE__, __LINE__, "%s missing (run the tests from the repository root)",
                path);
      continue;
    }
    check_bad_input(path, bad_cases[i].want, __LINE__);
  }
}

/* Every file in tests/data/bad/ is in the table, so a new bad input cannot
 * be committed without an expectation. */

TEST(test_cli_sim_every_bad_file_has_an_expectation) {
  DIR *d = opendir(BAD_DIR);
  if (!d) {
    test_fail(__FILE__, __LINE__, "cannot open " BAD_DIR " (run from the repository root)");
    return;
  }
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
    n++;
    int found = 0;
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++)
      if (strcmp(bad_cases[i].file, e->d_name) == 0) found = 1;
    if (!found) test_fail(__FILE__, __LINE__, BAD_DIR "%s has no expectation", e->d_name);
  }
  closedir(d);
  CHECK(n >= (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
}

/* A NUL byte would silently cut the text short for a C-string parser (the
 * prefix before it can be valid JSON), so it must be rejected. Generated
 * here rather than committed as a binary file. */
TEST(test_cli_sim_nul_byte_is_rejected) {
  char dir[64], in[128];
  make_tmpdir(dir, sizeof(dir));
  if (!dir[0]) return;
  size_t len;
  char *text = slurp(EXAMPLE, &len);
  if (!text) {
    test_fail(__FILE__, __LINE__, "cannot read " EXAMPLE);
    remove_tmpdir(dir);
    return;
  }
  /* Valid JSON, then a NUL, then junk. */
  char *buf = malloc(len + 16);
  memcpy(buf, text, len);
  memcpy(buf + len, "\0junk", 5);
  snprintf(in, sizeof(in), "%s/nul-after.json", dir);
  CHECK_EQ_INT(write_bytes(in, buf, len + 5), 0);
  static const char *const want[] = {"NUL byte", NULL};
  check_bad_input(in, want, __LINE__);
  /* A NUL inside a string value. */
  static const char mid[] =
      "{\"description\": \"a\0b\", \"topology\": {\"type\": \"star\", \"hosts\": 2},"
      " \"flows\": []}\n";
  size_t mlen = sizeof(mid) - 1;
  snprintf(in, sizeof(in), "%s/nul-mid.json", dir);
  CHECK_EQ_INT(write_bytes(in, mid, mlen), 0);
  check_bad_input(in, want, __LINE__);
  remove(in);
  snprintf(in, sizeof(in), "%s/nul-after.json", dir);
  remove(in);
  free(buf);
  free(text);
  remove_tmpdir(dir);
}

/* Far deeper than any parser stack: must fail cleanly, not crash. */
TEST(test_cli_sim_very_deep_nesting_does_not_crash) {
  char dir[64], in[128];
  make_tmpdir(dir, sizeof(dir));
  if (!dir[0]) return;
  static const char *const want[] = {"malformed JSON", NULL};
  const size_t depth = 200000;
  char *buf = malloc(depth * 5 + 2);
  /* [[[[... */
  memset(buf, '[', depth);
  buf[depth] = '\n';
  snprintf(in, sizeof(in), "%s/deep-arrays.json", dir);
  CHECK_EQ_INT(write_bytes(in, buf, depth + 1), 0);
  check_bad_input(in, want, __LINE__);
  remove(in);
  /* {"a":{"a":{"a":... */
  for (size_t i = 0; i < depth; i++) memcpy(buf + 5 * i, "{\"a\":", 5);
  snprintf(in, sizeof(in), "%s/deep-objects.json", dir);
  CHECK_EQ_INT(write_bytes(in, buf, depth * 5), 0);
  check_bad_input(in, want, __LINE__);
  remove(in);
  /* Balanced and valid JSON, 3000 deep, inside a value: still an error. */
  const size_t d2 = 3000;
  size_t n = 0;
  n += (size_t)sprintf(buf, "{\"topology\": {\"type\": \"star\", \"hosts\": 2}, \"flows\": ");
  memset(buf + n, '[', d2);
  n += d2;
  memset(buf + n, ']', d2);
  n += d2;
  buf[n++] = '}';
  snprintf(in, sizeof(in), "%s/deep-balanced.json", dir);
  CHECK_EQ_INT(write_bytes(in, buf, n), 0);
  check_bad_input(in, want, __LINE__);
  remove(in);
  free(buf);
  remove_tmpdir(dir);
}

/* A failed run leaves an existing output file as it was. */
TEST(test_cli_sim_failure_keeps_existing_output) {
  char dir[64], outfile[128], args[512];
  static char out[4096];
  make_tmpdir(dir, sizeof(dir));
  if (!dir[0]) return;
  snprintf(outfile, sizeof(outfile), "%s/out.json", dir);
  CHECK_EQ_INT(write_bytes(outfile, "old\n", 4), 0);
  snprintf(args, sizeof(args), "sim " BAD_DIR "cycle-2.json --out '%s'", outfile);
  CHECK_EQ_INT(test_run_cli(args, "2>&1", out, sizeof(out)), 2);
  char *kept = slurp(outfile, NULL);
  CHECK(kept && strcmp(kept, "old\n") == 0);
  free(kept);
  CHECK_EQ_INT(dir_entries(dir), 1);
  remove_tmpdir(dir);
}

/* ---- good input: examples/issue-example.json ---- */

/* One 32 MiB flow host 0 -> host 4 across a 2-leaf, 2-spine leaf-spine
 * (4 hops of 1000 ns, 100 Gb/s everywhere), then a 5000 ns task on host 4. */
static const double ex_bytes = 33554432;
static const double ex_gbps = 100;
static const int ex_hops = 4;
static const double ex_hop_ns = 1000, ex_task_ns = 5000;

static double ex_fct_ns(void) { return ex_bytes * 8 / (ex_gbps * 1e9) * 1e9 + ex_hops * ex_hop_ns; }

/* Runs `sim EXAMPLE EXTRA` with stdout in out; stderr must stay empty. */
static int run_example(const char *extra, char *out, size_t n, int line) {
  char dir[64], errfile[128], args[512], redir[160];
  make_tmpdir(dir, sizeof(dir));
  if (!dir[0]) return -1;
  snprintf(errfile, sizeof(errfile), "%s/stderr", dir);
  snprintf(args, sizeof(args), "sim " EXAMPLE " %s", extra);
  snprintf(redir, sizeof(redir), "2>'%s'", errfile);
  int st = test_run_cli(args, redir, out, n);
  char *err = slurp(errfile, NULL);
  if (!err || err[0])
    test_fail(__FILE__, line, "sim %s: expected nothing on stderr, got:\n%s", extra,
              err ? err : "(unreadable)");
  free(err);
  remove_tmpdir(dir);
  return st;
}

static double jnum(const cJSON *obj, const char *key, int line) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!cJSON_IsNumber(v)) {
    test_fail(__FILE__, line, "JSON key \"%s\" missing or not a number", key);
    return -1;
  }
  return v->valuedouble;
}

static const char *jstr(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

TEST(test_cli_sim_example_json_matches_closed_form) {
  static char out[65536];
  int st = run_example("", out, sizeof(out), __LINE__);
  CHECK_EQ_INT(st, 0);
  cJSON *root = cJSON_Parse(out);
  if (!root) {
    test_fail(__FILE__, __LINE__, "stdout is not JSON:\n%s", out);
    return;
  }
  /* 33554432 B * 8 / 100 Gb/s = 2684354.56 ns, + 4 hops * 1000 ns, + 5000 ns task */
  double fct = ex_fct_ns(), makespan = fct + ex_task_ns;
  CHECK_REL(makespan, 2693354.56, 1e-12, "ns");
  CHECK_REL(jnum(root, "makespan_ns", __LINE__), makespan, 1e-12, "ns");
  const cJSON *routing = cJSON_GetObjectItemCaseSensitive(root, "routing");
  CHECK(strcmp(jstr(routing, "mode"), "ecmp") == 0);
  CHECK_EQ_INT(jnum(routing, "seed", __LINE__), 1);
  CHECK(strncmp(jstr(root, "topology"), "leafspine:leaves=2,spines=2,hosts_per_leaf=4", 44) == 0);

  const cJSON *flows = cJSON_GetObjectItemCaseSensitive(root, "flows");
  CHECK(cJSON_IsArray(flows) && cJSON_GetArraySize(flows) == 1);
  const cJSON *f = cJSON_GetArrayItem(flows, 0);
  CHECK(strcmp(jstr(f, "id"), "a") == 0);
  CHECK_EQ_INT(jnum(f, "src", __LINE__), 0);
  CHECK_EQ_INT(jnum(f, "dst", __LINE__), 4);
  CHECK_REL(jnum(f, "bytes", __LINE__), ex_bytes, 0, "B");
  CHECK_REL(jnum(f, "start_ns", __LINE__), 0, 0, "ns");
  CHECK_REL(jnum(f, "finish_ns", __LINE__), fct, 1e-12, "ns");
  CHECK_REL(jnum(f, "fct_ns", __LINE__), fct, 1e-12, "ns");
  /* host 0 -> leaf 8 -> a spine (10 or 11) -> leaf 9 -> host 4 */
  const cJSON *path = cJSON_GetObjectItemCaseSensitive(f, "path");
  CHECK(cJSON_IsArray(path) && cJSON_GetArraySize(path) == ex_hops + 1);
  if (cJSON_GetArraySize(path) == ex_hops + 1) {
    CHECK_EQ_INT(cJSON_GetArrayItem(path, 0)->valuedouble, 0);
    CHECK_EQ_INT(cJSON_GetArrayItem(path, 1)->valuedouble, 8);
    double spine = cJSON_GetArrayItem(path, 2)->valuedouble;
    CHECK(spine == 10 || spine == 11);
    CHECK_EQ_INT(cJSON_GetArrayItem(path, 3)->valuedouble, 9);
    CHECK_EQ_INT(cJSON_GetArrayItem(path, 4)->valuedouble, 4);
  }
  CHECK(cJSON_GetObjectItemCaseSensitive(f, "paths") == NULL);

  const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(root, "tasks");
  CHECK(cJSON_IsArray(tasks) && cJSON_GetArraySize(tasks) == 1);
  const cJSON *t = cJSON_GetArrayItem(tasks, 0);
  CHECK(strcmp(jstr(t, "id"), "c") == 0);
  CHECK_EQ_INT(jnum(t, "host", __LINE__), 4);
  CHECK_REL(jnum(t, "start_ns", __LINE__), fct, 1e-12, "ns");
  CHECK_REL(jnum(t, "finish_ns", __LINE__), makespan, 1e-12, "ns");

  /* The four links of the path each carry the whole flow. */
  const cJSON *links = cJSON_GetObjectItemCaseSensitive(root, "links");
  CHECK(cJSON_IsArray(links) && cJSON_GetArraySize(links) == ex_hops);
  for (const cJSON *l = links ? links->child : NULL; l; l = l->next) {
    CHECK_REL(jnum(l, "bytes", __LINE__), ex_bytes, 0, "B");
    CHECK_REL(jnum(l, "capacity_gbps", __LINE__), ex_gbps, 0, "Gbps");
    CHECK_REL(jnum(l, "utilization", __LINE__), ex_bytes * 8 / (ex_gbps * makespan), 1e-12,
              "");
  }
  cJSON_Delete(root);
}

TEST(test_cli_sim_example_csv) {
  static char out[8192];
  CHECK_EQ_INT(run_example("--format csv", out, sizeof(out), __LINE__), 0);
  const char *header = "id,src,dst,bytes,start_ns,finish_ns,fct_ns,paths,path\n";
  CHECK(strncmp(out, header, strlen(header)) == 0);
  CHECK_EQ_INT(count_lines(out), 2);
  const char *row = out + strlen(header);
  CHECK(strncmp(row, "a,0,4,33554432,0,2688354.56,2688354.56,1,0 8 1", 46) == 0);
  if (strncmp(out, header, strlen(header)) != 0) fprintf(stderr, "  output:\n%s", out);
}

TEST(test_cli_sim_out_writes_the_same_bytes_as_stdout) {
  static char out[65536], again[65536];
  char dir[64], outfile[128], args[512];
  make_tmpdir(dir, sizeof(dir));
  if (!dir[0]) return;
  CHECK_EQ_INT(run_example("", out, sizeof(out), __LINE__), 0);
  snprintf(outfile, sizeof(outfile), "%s/res.json", dir);
  snprintf(args, sizeof(args), "--out '%s'", outfile);
  CHECK_EQ_INT(run_example(args, again, sizeof(again), __LINE__), 0);
  CHECK_EQ_INT(strlen(again), 0); /* nothing on stdout */
  char *written = slurp(outfile, NULL);
  CHECK(written && strcmp(written, out) == 0);
  free(written);
  CHECK_EQ_INT(dir_entries(dir), 1); /* no temp file left beside it */

  /* --out with --summary: results in the file, the summary on stdout. */
  remove(outfile);
  snprintf(args, sizeof(args), "--summary -o '%s' --format csv", outfile);
  CHECK_EQ_INT(run_example(args, again, sizeof(again), __LINE__), 0);
  CHECK(strstr(again, "makespan:") != NULL);
  CHECK(strstr(again, "2693.35 us") != NULL);
  written = slurp(outfile, NULL);
  CHECK(written && strncmp(written, "id,src,dst,", 11) == 0);
  free(written);
  remove_tmpdir(dir);
}

TEST(test_cli_sim_is_deterministic) {
  static char a[65536], b[65536];
  static const char *const variants[] = {"", "--seed 7", "--routing spray", "--format csv",
                                         "--routing shortest"};
  for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
    CHECK_EQ_INT(run_example(variants[i], a, sizeof(a), __LINE__), 0);
    CHECK_EQ_INT(run_example(variants[i], b, sizeof(b), __LINE__), 0);
    if (strcmp(a, b) != 0)
      test_fail(__FILE__, __LINE__, "two runs of 'sim %s' differ", variants[i]);
  }
}

/* ECMP hashes per flow and seed: over many seeds both spines get used, and
 * whatever the spine, the timing is the same on an idle fabric. */
TEST(test_cli_sim_ecmp_seed_picks_both_spines) {
  static char out[65536];
  int seen[2] = {0, 0};
  for (int seed = 0; seed < 32; seed++) {
    char args[64];
    snprintf(args, sizeof(args), "--seed %d", seed);
    CHECK_EQ_INT(run_example(args, out, sizeof(out), __LINE__), 0);
    cJSON *root = cJSON_Parse(out);
    if (!root) {
      test_fail(__FILE__, __LINE__, "seed %d: stdout is not JSON", seed);
      continue;
    }
    CHECK_REL(jnum(root, "makespan_ns", __LINE__), ex_fct_ns() + ex_task_ns, 1e-12, "ns");
    const cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "flows"), 0);
    const cJSON *spine = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(f, "path"), 2);
    if (cJSON_IsNumber(spine) && (spine->valueint == 10 || spine->valueint == 11))
      seen[spine->valueint - 10]++;
    else
      test_fail(__FILE__, __LINE__, "seed %d: no spine on the path", seed);
    CHECK_EQ_INT(jnum(cJSON_GetObjectItemCaseSensitive(root, "routing"), "seed", __LINE__),
                 seed);
    cJSON_Delete(root);
  }
  CHECK(seen[0] > 0);
  CHECK(seen[1] > 0);
}

/* Spraying over the 2 equal-cost spine paths: on an idle fabric the flow
 * still runs at the host link's 100 Gb/s, so the times do not change, but
 * it reports "paths": 2 instead of one path and each spine link carries
 * half the bytes. */
TEST(test_cli_sim_spray_splits_over_two_spines) {
  static char out[65536];
  CHECK_EQ_INT(run_example("--routing spray", out, sizeof(out), __LINE__), 0);
  cJSON *root = cJSON_Parse(out);
  if (!root) {
    test_fail(__FILE__, __LINE__, "stdout is not JSON:\n%s", out);
    return;
  }
  double fct = ex_fct_ns();
  CHECK_REL(jnum(root, "makespan_ns", __LINE__), fct + ex_task_ns, 1e-12, "ns");
  CHECK(strcmp(jstr(cJSON_GetObjectItemCaseSensitive(root, "routing"), "mode"), "spray") == 0);
  const cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "flows"), 0);
  CHECK_REL(jnum(f, "fct_ns", __LINE__), fct, 1e-12, "ns");
  CHECK_EQ_INT(jnum(f, "paths", __LINE__), 2);
  CHECK(cJSON_GetObjectItemCaseSensitive(f, "path") == NULL);
  /* 2 host links with all the bytes, 4 leaf-spine links with half each */
  const cJSON *links = cJSON_GetObjectItemCaseSensitive(root, "links");
  CHECK_EQ_INT(cJSON_GetArraySize(links), 6);
  int whole = 0, half = 0;
  double total = 0;
  for (const cJSON *l = links ? links->child : NULL; l; l = l->next) {
    double b = jnum(l, "bytes", __LINE__);
    total += b;
    whole += b == ex_bytes;
    half += b == ex_bytes / 2;
  }
  CHECK_EQ_INT(whole, 2);
  CHECK_EQ_INT(half, 4);
  CHECK_REL(total, 4 * ex_bytes, 0, "B");
  cJSON_Delete(root);

  CHECK_EQ_INT(run_example("--routing spray --format csv", out, sizeof(out), __LINE__), 0);
  CHECK(strstr(out, "\na,0,4,33554432,0,2688354.56,2688354.56,2,\n") != NULL);
}

/* Overriding the routing with explicit on a file without paths is an input
 * error found after loading; it must follow the same contract. */
TEST(test_cli_sim_routing_explicit_override_needs_paths) {
  static char out[4096];
  char dir[64], outfile[128], args[512];
  make_tmpdir(dir, sizeof(dir));
  if (!dir[0]) return;
  snprintf(outfile, sizeof(outfile), "%s/out.json", dir);
  snprintf(args, sizeof(args), "sim " EXAMPLE " --routing explicit --out '%s'", outfile);
  CHECK_EQ_INT(test_run_cli(args, "2>&1", out, sizeof(out)), 2);
  check_one_error_line(out, EXAMPLE, "--routing explicit", __LINE__);
  CHECK(strstr(out, "$.flows[0].path") != NULL);
  CHECK_EQ_INT(dir_entries(dir), 0);
  remove_tmpdir(dir);
}

TEST(test_cli_sim_usage_errors_exit_2) {
  static char out[4096];
  static const struct {
    const char *args, *want;
  } cases[] = {
      {"sim " EXAMPLE " --format xml", "'xml'"},
      {"sim " EXAMPLE " --format", "--format"},
      {"sim " EXAMPLE " --frobnicate", "'--frobnicate'"},
      {"sim " EXAMPLE " --routing magic", "'magic'"},
      {"sim " EXAMPLE " --seed -1", "'-1'"},
      {"sim " EXAMPLE " --seed 12x", "'12x'"},
      {"sim " EXAMPLE " --seed 99999999999999999999999", "99999999999999999999999"},
      {"sim " EXAMPLE " --out", "--out"},
      {"sim " EXAMPLE " " EXAMPLE, "one scenario file"},
      {"sim", "missing SCENARIO.json"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    int st = test_run_cli(cases[i].args, "2>&1", out, sizeof(out));
    if (st != 2) test_fail(__FILE__, __LINE__, "'%s': expected exit 2, got %d", cases[i].args, st);
    if (!strstr(out, cases[i].want))
      test_fail(__FILE__, __LINE__, "'%s': expected '%s' in:\n%s", cases[i].args, cases[i].want,
                out);
    if (count_lines(out) != 1 || strncmp(out, "fabricsim sim: ", 15) != 0)
      test_fail(__FILE__, __LINE__, "'%s': expected one line \"fabricsim sim: ...\", got:\n%s",
                cases[i].args, out);
  }
  CHECK_EQ_INT(test_run_cli("sim --help", "2>&1", out, sizeof(out)), 0);
  CHECK(strstr(out, "usage: fabricsim sim") != NULL);
}

TEST(test_cli_sim_missing_or_unwritable_files_exit_2) {
  static char out[4096];
  char dir[64], outfile[160], args[512];
  make_tmpdir(dir, sizeof(dir));
  if (!dir[0]) return;
  snprintf(outfile, sizeof(outfile), "%s/out.json", dir);
  snprintf(args, sizeof(args), "sim no/such/scenario.json --out '%s'", outfile);
  CHECK_EQ_INT(test_run_cli(args, "2>&1", out, sizeof(out)), 2);
  check_one_error_line(out, "no/such/scenario.json", "missing file", __LINE__);
  CHECK_EQ_INT(dir_entries(dir), 0);
  /* The output's directory does not exist. */
  snprintf(outfile, sizeof(outfile), "%s/no/such/dir/out.json", dir);
  snprintf(args, sizeof(args), "sim " EXAMPLE " --out '%s'", outfile);
  CHECK_EQ_INT(test_run_cli(args, "2>&1", out, sizeof(out)), 2);
  check_one_error_line(out, outfile, "unwritable output", __LINE__);
  CHECK_EQ_INT(dir_entries(dir), 0);
  /* A directory given as the scenario. */
  snprintf(args, sizeof(args), "sim '%s'", dir);
  CHECK_EQ_INT(test_run_cli(args, "2>&1", out, sizeof(out)), 2);
  check_one_error_line(out, dir, "directory as input", __LINE__);
  remove_tmpdir(dir);
}

/* Inputs the fuzzer once choked on (tests/data/fuzz-crashes/): the CLI must
 * either succeed or report an input error, never crash. oom-* files need
 * gigabytes by design and are only listed there. */
TEST(test_cli_sim_fuzz_reproducers_do_not_crash) {
  static char out[65536];
  const char *dirname = "tests/data/fuzz-crashes";
  DIR *d = opendir(dirname);
  if (!d) {
    test_fail(__FILE__, __LINE__, "cannot open %s (run from the repository root)", dirname);
    return;
  }
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.' || strncmp(e->d_name, "oom-", 4) == 0 ||
        strstr(e->d_name, ".md"))
      continue;
    char args[512];
    snprintf(args, sizeof(args), "sim '%s/%s'", dirname, e->d_name);
    int st = test_run_cli(args, "2>&1", out, sizeof(out));
    if (st != 0 && st != 2)
      test_fail(__FILE__, __LINE__, "%s: exit status %d:\n%.2000s", e->d_name, st, out);
    if (st == 2 && strncmp(out, "fabricsim: ", 11) != 0)
      test_fail(__FILE__, __LINE__, "%s: error not reported as \"fabricsim: ...\":\n%.2000s",
                e->d_name, out);
  }
  closedir(d);
}

