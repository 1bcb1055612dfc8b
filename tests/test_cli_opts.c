/* The CLI's one option parser (src/cli/opts.c), through the binary: the
 * `--opt=value` form gives the very bytes of `--opt value` (and a short
 * alias those of its long name) on several subcommands; an unknown
 * option, a missing value, a bad value, a value given to a flag and a
 * positional too many exit 2 with one line naming the option; and
 * `fabricsim help CMD` prints exactly `fabricsim CMD --help`, in the
 * common format, within 79 columns. */
#include <stdio.h>
#include <string.h>

#include "test.h"

enum { OUT = 1 << 16 };

/* Runs both argument lists; records a failure unless both exit 0 with
 * the same stdout. */
static void check_same(const char *a, const char *b, int line) {
  static char out_a[OUT], out_b[OUT];
  int sa = test_run_cli(a, "2>/dev/null", out_a, sizeof(out_a));
  int sb = test_run_cli(b, "2>/dev/null", out_b, sizeof(out_b));
  if (sa != 0 || sb != 0 || strcmp(out_a, out_b) != 0 || !out_a[0])
    test_fail(__FILE__, line, "want exit 0 and the same output:\n  %s -> %d\n  %s -> %d\n"
              "first:\n%.400s\nsecond:\n%.400s", a, sa, b, sb, out_a, out_b);
}

TEST(test_cli_opts_equals_form_is_the_spaced_form) {
  static const char *const pairs[][2] = {
      {"topo fattree:k=4 --format=json", "topo fattree:k=4 --format json"},
      {"coll --op=allreduce --ranks=8 --topo=fattree:k=4 --size=1K:64K --chunks=2 --seed=3",
       "coll --op allreduce --ranks 8 --topo fattree:k=4 --size 1K:64K --chunks 2 --seed 3"},
      /* short aliases and their long names */
      {"coll --op allreduce --ranks 8 --topo fattree:k=4 -b 1K -e 16K -f 4",
       "coll --op allreduce --ranks 8 --topo fattree:k=4 --minbytes=1K --maxbytes=16K "
       "--stepfactor=4"},
      {"sim examples/demo.json --routing=spray --seed=7",
       "sim examples/demo.json --routing spray --seed 7"},
      {"route --jobs=examples/jobs-4dp.json --optimizer=greedy,ecmp --seeds=3 "
       "--topo=leafspine:leaves=8,spines=8,hosts_per_leaf=8,host_gbps=400,fabric_gbps=400",
       "route --jobs examples/jobs-4dp.json --optimizer greedy,ecmp --seeds 3 "
       "--topo leafspine:leaves=8,spines=8,hosts_per_leaf=8,host_gbps=400,fabric_gbps=400"},
      {"ocs schedule --matrix=examples/ocs-job.json --delay=1ms --degree=2 --format=json",
       "ocs schedule --matrix examples/ocs-job.json --delay 1ms --degree 2 --format json"},
      {"ocs tpu --shape=4x4x8 --format=json", "ocs tpu --shape 4x4x8 --format json"},
      {"wan provision examples/wan-4dc.json --algo=most-used --k=2",
       "wan provision examples/wan-4dc.json --algo most-used --k 2"},
  };
  for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
    check_same(pairs[i][0], pairs[i][1], __LINE__);
}

TEST(test_cli_opts_errors_one_line_naming_the_option) {
  /* command line, the subcommand's name, what the line must name */
  static const char *const cases[][3] = {
      {"sim examples/demo.json --frobnicate=1", "sim", "unknown option '--frobnicate'"},
      {"coll --op allreduce --ranks 8 --bogus", "coll", "'--bogus'"},
      {"ocs tpu -x 1", "ocs tpu", "'-x'"},
      {"coll --op", "coll", "--op needs a value"},
      {"topo fattree:k=4 --format", "topo", "--format needs a value"},
      {"sweep examples/sweep-demo.json --db x.sqlite -j", "sweep", "-j needs a value"},
      {"train examples/gpt-13b.json --buckets=0", "train",
       "--buckets must be in [1, 1024], got '0'"},
      {"train examples/gpt-13b.json --buckets 2x", "train", "got '2x'"},
      {"coll --op allreduce --ranks=0 --topo fattree:k=4", "coll", "--ranks must be"},
      {"route --jobs examples/jobs-4dp.json --topo star:hosts=8 --k=99", "route", "--k must be"},
      {"ocs schedule --matrix examples/ocs-job.json --delay=5parsecs", "ocs schedule",
       "got '5parsecs'"},
      {"wan provision examples/wan-4dc.json --seed=-1", "wan provision", "--seed must be"},
      {"chakra x --topo star:hosts=2 --seed abc", "chakra", "--seed must be"},
      {"sim examples/demo.json --summary=yes", "sim", "--summary takes no value"},
      {"topo fattree:k=4 ring:n=4", "topo", "one SPEC expected"},
      {"wan train a.json b.json", "wan train", "one WAN file expected"},
      {"coll stray", "coll", "'stray'"},
      {"ocs topo --degree 2", "ocs topo", "missing JOB.json"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char out[4096], head[64], tail[96];
    int st = test_run_cli(cases[i][0], "2>&1 >/dev/null", out, sizeof(out));
    snprintf(head, sizeof(head), "fabricsim %s: ", cases[i][1]);
    snprintf(tail, sizeof(tail), " (see 'fabricsim %s --help')\n", cases[i][1]);
    size_t n = strlen(out), nt = strlen(tail);
    const char *nl = strchr(out, '\n');
    if (st != 2 || strncmp(out, head, strlen(head)) != 0 || !strstr(out, cases[i][2]) || !nl ||
        nl[1] != '\0' || n < nt || strcmp(out + n - nt, tail) != 0)
      test_fail(__FILE__, __LINE__, "%s: want exit 2 and one line\n  %s... %s ...%sgot %d:\n  %s",
                cases[i][0], head, cases[i][2], tail, st, out);
  }
}

TEST(test_cli_opts_help_cmd_is_cmd_help) {
  static const char *const cmds[] = {"topo",     "sim",          "train",   "coll",
                                     "route",    "sweep",        "chakra",  "ocs",
                                     "ocs topo", "ocs schedule", "ocs tpu", "wan",
                                     "wan provision", "wan train"};
  static char a[OUT], b[OUT];
  for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
    char args[96], head[96];
    snprintf(args, sizeof(args), "help %s", cmds[i]);
    int sa = test_run_cli(args, "2>&1", a, sizeof(a));
    snprintf(args, sizeof(args), "%s --help", cmds[i]);
    int sb = test_run_cli(args, "2>&1", b, sizeof(b));
    snprintf(head, sizeof(head), "usage: fabricsim %s ", cmds[i]);
    if (sa != 0 || sb != 0 || strcmp(a, b) != 0 || strncmp(a, head, strlen(head)) != 0)
      test_fail(__FILE__, __LINE__, "'help %s' and '%s --help': want exit 0, the same text "
                "starting '%s'; got %d and %d:\n%.300s\n---\n%.300s", cmds[i], cmds[i], head,
                sa, sb, a, b);
    /* the common format: the options list (or the subcommands) ends with
     * --help, and no line is wider than a terminal */
    if (!strstr(a, "\noptions:\n") && !strstr(a, "\nsubcommands:\n"))
      test_fail(__FILE__, __LINE__, "%s: no options or subcommands list:\n%s", cmds[i], a);
    if (strstr(a, "\noptions:\n") && !strstr(a, "\n  -h, --help            print this help\n"))
      test_fail(__FILE__, __LINE__, "%s: no -h, --help line:\n%s", cmds[i], a);
    for (const char *l = a; *l;) {
      size_t n = strcspn(l, "\n");
      if (n > 79) test_fail(__FILE__, __LINE__, "%s: a help line of %zu columns: %.*s", cmds[i],
                            n, (int)n, l);
      l += n + (l[n] == '\n');
    }
  }
  CHECK_EQ_INT(test_run_cli("help", "2>&1", a, sizeof(a)), 0);
  CHECK_EQ_INT(test_run_cli("--help", "2>&1", b, sizeof(b)), 0);
  CHECK(strcmp(a, b) == 0 && strstr(a, "usage: fabricsim COMMAND") == a);
  CHECK_EQ_INT(test_run_cli("help nosuch", "2>&1", a, sizeof(a)), 2);
  CHECK(strstr(a, "unknown command 'nosuch'") != NULL);
}

/* --format, one vocabulary (issue 45): every command's human-readable
 * table is "text" ("table" the same output), and a format it does not have
 * is refused naming the ones it has. */
TEST(test_cli_format_one_vocabulary) {
  static const char *const cmds[] = {
      "topo fattree:k=4",
      "coll --op allreduce --ranks 4 --topo star:hosts=4 --size 1M",
      "route --jobs examples/jobs-4dp.json --topo leafspine:leaves=8,spines=8,hosts_per_leaf=8",
      "ocs tpu --shape 4x4x4",
      "train examples/gpt-13b.json --no-compare",
  };
  static char a[1 << 16], b[1 << 16];
  for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "%s --format text", cmds[i]);
    CHECK_EQ_INT(test_run_cli(cmd, "2>/dev/null", a, sizeof(a)), 0);
    snprintf(cmd, sizeof(cmd), "%s --format table", cmds[i]);
    CHECK_EQ_INT(test_run_cli(cmd, "2>/dev/null", b, sizeof(b)), 0);
    /* (train's wall-time lines differ between runs) */
    char *wa = strstr(a, "wall time:"), *wb = strstr(b, "wall time:");
    if (wa) *wa = '\0';
    if (wb) *wb = '\0';
    char *ea = strstr(a, "engine:"), *eb = strstr(b, "engine:");
    if (ea) *ea = '\0';
    if (eb) *eb = '\0';
    CHECK(strcmp(a, b) == 0);
    snprintf(cmd, sizeof(cmd), "%s --format xml", cmds[i]);
    CHECK_EQ_INT(test_run_cli(cmd, "2>&1", a, sizeof(a)), 2);
    CHECK(strstr(a, "--format must be text") != NULL && strstr(a, "(table is text)") != NULL);
  }
}
