/* Test runner: runs every test in tests/test_list.h (or those whose name
 * contains argv's filter) and ends with "N passed, N failed". */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "test.h"

#define X(name) void name(void);
#include "test_list.h"
#undef X

static struct {
  int failed_checks;
  const char *cli;
} runner = {0, "build/fabricsim"};

void test_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "  FAIL %s:%d: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  runner.failed_checks++;
}

const char *test_cli_path(void) { return runner.cli; }

int test_run_cli(const char *args, const char *redir, char *out, size_t n) {
  size_t len_cmd = strlen(runner.cli) + strlen(args) + strlen(redir) + 8;
  char *cmd = malloc(len_cmd); /* (any length: a test may pass long lists) */
  out[0] = '\0';
  if (!cmd) return -1;
  snprintf(cmd, len_cmd, "'%s' %s %s", runner.cli, args, redir);
  FILE *p = popen(cmd, "r");
  free(cmd);
  if (!p) {
    test_fail(__FILE__, __LINE__, "popen(%s ...) failed", args);
    return -1;
  }
  size_t len = fread(out, 1, n - 1, p);
  out[len] = '\0';
  while (fgetc(p) != EOF) { /* drain so the child never blocks on a full pipe */
  }
  int st = pclose(p);
  return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void test_cli_train_error(const char *job_file, const char *want, const char *file, int line) {
  char cmd[512], out[2048], head[640];
  snprintf(cmd, sizeof(cmd), "train '%s'", job_file);
  int st = test_run_cli(cmd, "2>&1", out, sizeof(out));
  snprintf(head, sizeof(head), "fabricsim: %s: %s", job_file, want);
  const char *nl = strchr(out, '\n');
  if (st != 2 || strncmp(out, head, strlen(head)) != 0 || !nl || nl[1] != '\0')
    test_fail(file, line, "%s: want exit 2 and one line starting\n  %s\ngot %d:\n  %s", job_file,
              head, st, out);
}

int test_write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  int ok = fputs(text, f) >= 0;
  return fclose(f) == 0 && ok ? 0 : -1;
}

int main(int argc, char **argv) {
  const char *filter = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--cli") == 0 && i + 1 < argc)
      runner.cli = argv[++i];
    else
      filter = argv[i];
  }
  static const struct {
    const char *name;
    void (*fn)(void);
  } tests[] = {
#define X(name) {#name, name},
#include "test_list.h"
#undef X
  };
  int passed = 0, failed = 0;
  for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
    if (filter && !strstr(tests[i].name, filter)) continue;
    int before = runner.failed_checks;
    tests[i].fn();
    if (runner.failed_checks == before) {
      passed++;
      printf("ok   %s\n", tests[i].name);
    } else {
      failed++;
      printf("FAIL %s\n", tests[i].name);
    }
    fflush(stdout);
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
