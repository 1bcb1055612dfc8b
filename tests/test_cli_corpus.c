/* The bad-input corpus (issue 45): tests/data/bad-cli/cases.txt holds one
 * fabricsim invocation per line that must be refused, with what its error
 * line must say (the format is described at the top of that file). Each
 * case runs the built binary (test_cli_path(), so `make sanitize` runs the
 * sanitized one) with a fresh temporary directory as its working directory,
 * stdin from /dev/null and a 20 s alarm, and must:
 *   - exit with status 2 (not a signal, not a hang);
 *   - print nothing on stdout;
 *   - print exactly one line on stderr (one '\n', at its end), starting
 *     "fabricsim", holding every wanted substring;
 *   - leave the temporary directory as it was: no new file (no output, no
 *     NAME.tmp.PID), and the files made for @OLD@ and @RO@ with the same
 *     bytes, mode and mtime.
 * Every failure names the line of cases.txt. Four cases run at a time
 * (the whole corpus takes a few seconds); FS_CORPUS_LINE=N runs the case
 * on line N alone, FS_CORPUS_TIMES=1 prints each case's wall time. Run from
 * the repository root (make test does), where tests/data and examples live. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

#define CORPUS "tests/data/bad-cli/cases.txt"
#define MAX_ARGS 64
#define OLD_TEXT "old content: must stay\n"

typedef struct corpus_env {
  char bin[PATH_MAX];  /* the binary, absolute */
  char data[PATH_MAX]; /* tests/data, absolute */
  char ex[PATH_MAX];   /* examples, absolute */
} corpus_env;

typedef struct corpus_case {
  int line;
  int argc;
  char *argv[MAX_ARGS + 2];
  char *want[16];
  int nwant;
  int uses_old, uses_ro;
} corpus_case;

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* dst <- src with %HH decoded and the placeholders replaced. */
static void expand(const corpus_env *env, const char *tmp, const char *src, char *dst,
                   size_t n, corpus_case *c) {
  static const char *const names[] = {"@DATA@", "@EX@", "@TMP@", "@OUT@", "@OLD@",
                                      "@RO@",   "@NODIR@"};
  char sub[7][PATH_MAX + 32];
  snprintf(sub[0], sizeof(sub[0]), "%s", env->data);
  snprintf(sub[1], sizeof(sub[1]), "%s", env->ex);
  snprintf(sub[2], sizeof(sub[2]), "%s", tmp);
  snprintf(sub[3], sizeof(sub[3]), "%s/out", tmp);
  snprintf(sub[4], sizeof(sub[4]), "%s/old.txt", tmp);
  snprintf(sub[5], sizeof(sub[5]), "%s/ro.txt", tmp);
  snprintf(sub[6], sizeof(sub[6]), "%s/missing/out", tmp);
  size_t k = 0;
  while (*src && k + 1 < n) {
    int matched = 0;
    for (int s = 0; s < 7 && !matched; s++) {
      size_t len = strlen(names[s]);
      if (strncmp(src, names[s], len) != 0) continue;
      if (s == 4) c->uses_old = 1;
      if (s == 5) c->uses_ro = 1;
      k += (size_t)snprintf(dst + k, n - k, "%s", sub[s]);
      if (k >= n) k = n - 1;
      src += len;
      matched = 1;
    }
    if (matched) continue;
    if (src[0] == '%' && hexval(src[1]) >= 0 && hexval(src[2]) >= 0) {
      dst[k++] = (char)(hexval(src[1]) * 16 + hexval(src[2]));
      src += 3;
      continue;
    }
    dst[k++] = *src++;
  }
  dst[k] = '\0';
}

/* Splits line (modified) into args and wants: "ARGS ==> WANT && WANT".
 * 0, or -1 if it is not a case. */
static int parse_case(const corpus_env *env, const char *tmp, char *line, corpus_case *c) {
  char *sep = strncmp(line, "==> ", 4) == 0 ? line : strstr(line, " ==> "), *wants;
  if (!sep) return -1;
  wants = sep + (sep == line ? 4 : 5); /* "==> WANT": no arguments at all */
  *sep = '\0';
  c->argc = 0;
  c->argv[c->argc++] = strdup(env->bin);
  c->uses_old = c->uses_ro = 0;
  for (char *save = NULL, *w = strtok_r(line, " \t", &save); w && c->argc < MAX_ARGS + 1;
       w = strtok_r(NULL, " \t", &save)) {
    char buf[4 * PATH_MAX];
    if (strcmp(w, "''") == 0) buf[0] = '\0';
    else expand(env, tmp, w, buf, sizeof(buf), c);
    c->argv[c->argc++] = strdup(buf);
  }
  c->argv[c->argc] = NULL;
  c->nwant = 0;
  for (char *w = wants; w && c->nwant < 16;) {
    char *next = strstr(w, " && ");
    if (next) *next = '\0';
    while (*w == ' ') w++;
    size_t len = strlen(w);
    while (len && (w[len - 1] == ' ' || w[len - 1] == '\n' || w[len - 1] == '\r')) w[--len] = 0;
    if (len) {
      char buf[4 * PATH_MAX];
      expand(env, tmp, w, buf, sizeof(buf), c);
      c->want[c->nwant++] = strdup(buf);
    }
    w = next ? next + 4 : NULL;
  }
  return 0;
}

static void free_case(corpus_case *c) {
  for (int i = 0; i < c->argc; i++) free(c->argv[i]);
  for (int i = 0; i < c->nwant; i++) free(c->want[i]);
  c->argc = c->nwant = 0;
}

/* A whole (small) file: its bytes in buf, the length; -1 if unreadable. */
static long read_fd_all(int fd, char *buf, size_t n) {
  if (lseek(fd, 0, SEEK_SET) < 0) return -1;
  size_t k = 0;
  for (ssize_t got; k + 1 < n && (got = read(fd, buf + k, n - 1 - k)) > 0;) k += (size_t)got;
  buf[k] = '\0';
  return (long)k;
}

static int make_file(const char *path, mode_t mode) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return -1;
  int ok = write(fd, OLD_TEXT, strlen(OLD_TEXT)) == (ssize_t)strlen(OLD_TEXT);
  close(fd);
  return ok && chmod(path, mode) == 0 ? 0 : -1;
}

/* Whether path still holds OLD_TEXT with the mode and mtime of *before. */
static int same_file(const char *path, const struct stat *before) {
  struct stat st;
  if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_ino != before->st_ino ||
      st.st_mode != before->st_mode || st.st_mtim.tv_sec != before->st_mtim.tv_sec ||
      st.st_mtim.tv_nsec != before->st_mtim.tv_nsec)
    return 0;
  char buf[256];
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  long n = read_fd_all(fd, buf, sizeof(buf));
  close(fd);
  return n == (long)strlen(OLD_TEXT) && strcmp(buf, OLD_TEXT) == 0;
}

/* Removes dir and everything under it (the runs may have made anything). */
static void remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    for (struct dirent *e; (e = readdir(d));) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char p[PATH_MAX];
      snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
      struct stat st;
      if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) remove_tree(p);
      else unlink(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

/* The names in dir other than old.txt and ro.txt, comma-separated in buf. */
static int stray_files(const char *dir, char *buf, size_t n) {
  DIR *d = opendir(dir);
  int count = 0;
  buf[0] = '\0';
  if (!d) return -1;
  for (struct dirent *e; (e = readdir(d));) {
    const char *s = e->d_name;
    if (!strcmp(s, ".") || !strcmp(s, "..") || !strcmp(s, "old.txt") || !strcmp(s, "ro.txt"))
      continue;
    size_t len = strlen(buf);
    snprintf(buf + len, n - len, "%s%s", count ? ", " : "", s);
    count++;
  }
  closedir(d);
  return count;
}

static int count_char(const char *s, char ch) {
  int n = 0;
  for (; *s; s++) n += *s == ch;
  return n;
}

/* A case under way: its own directory, output files and child. */
typedef struct corpus_run {
  corpus_case c;
  char tmp[64];
  int out_fd, err_fd;
  pid_t pid;
  struct stat old_st, ro_st;
  struct timespec t0;
} corpus_run;

/* Makes r's files and starts its child (r->pid; -1 if that failed). */
static void start_case(corpus_run *r) {
  const corpus_case *c = &r->c;
  char path_old[PATH_MAX + 16], path_ro[PATH_MAX + 16];
  snprintf(path_old, sizeof(path_old), "%s/old.txt", r->tmp);
  snprintf(path_ro, sizeof(path_ro), "%s/ro.txt", r->tmp);
  r->pid = -1;
  if ((c->uses_old && (make_file(path_old, 0644) || lstat(path_old, &r->old_st))) ||
      (c->uses_ro && (make_file(path_ro, 0444) || lstat(path_ro, &r->ro_st))) ||
      ftruncate(r->out_fd, 0) || ftruncate(r->err_fd, 0)) {
    test_fail(CORPUS, c->line, "cannot set the case up: %s", strerror(errno));
    return;
  }
  lseek(r->out_fd, 0, SEEK_SET);
  lseek(r->err_fd, 0, SEEK_SET);
  fflush(NULL);
  clock_gettime(CLOCK_MONOTONIC, &r->t0);
  r->pid = fork();
  if (r->pid < 0) {
    test_fail(CORPUS, c->line, "fork: %s", strerror(errno));
    return;
  }
  if (r->pid == 0) {
    int in = open("/dev/null", O_RDONLY);
    if (in < 0 || dup2(in, 0) < 0 || dup2(r->out_fd, 1) < 0 || dup2(r->err_fd, 2) < 0 ||
        chdir(r->tmp))
      _exit(126);
    alarm(20); /* survives exec: a hang ends as SIGALRM */
    execv(c->argv[0], c->argv);
    _exit(127);
  }
}

/* Waits for r's child and checks what it did; records failures. 1 if it
 * passed. */
static int finish_case(corpus_run *r) {
  const corpus_case *c = &r->c;
  const char *tmp = r->tmp;
  char path_old[PATH_MAX + 16], path_ro[PATH_MAX + 16];
  snprintf(path_old, sizeof(path_old), "%s/old.txt", tmp);
  snprintf(path_ro, sizeof(path_ro), "%s/ro.txt", tmp);
  if (r->pid < 0) return 0;
  int st;
  while (waitpid(r->pid, &st, 0) < 0 && errno == EINTR) {
  }
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs =
      (double)(t1.tv_sec - r->t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - r->t0.tv_nsec);
  if (getenv("FS_CORPUS_TIMES"))
    fprintf(stderr, "  %6.3f s  %s:%d\n", secs, CORPUS, c->line);
  int out_fd = r->out_fd, err_fd = r->err_fd;
  static char out[8192], err[8192];
  read_fd_all(out_fd, out, sizeof(out));
  read_fd_all(err_fd, err, sizeof(err));
  char what[1024] = "";
  for (int i = 1; i < c->argc; i++) {
    size_t len = strlen(what);
    snprintf(what + len, sizeof(what) - len, "%s%s", i > 1 ? " " : "", c->argv[i]);
  }
  int ok = 1;
#define CASE_FAIL(...)                                                        \
  do {                                                                        \
    if (ok) fprintf(stderr, "  case %s:%d: fabricsim %s\n", CORPUS, c->line, what); \
    test_fail(CORPUS, c->line, __VA_ARGS__);                                  \
    ok = 0;                                                                   \
  } while (0)
  if (WIFSIGNALED(st))
    CASE_FAIL("killed by signal %d%s; stderr:\n%s", WTERMSIG(st),
              WTERMSIG(st) == SIGALRM ? " (a hang: over 20 s)" : "", err);
  else if (!WIFEXITED(st) || WEXITSTATUS(st) != 2)
    CASE_FAIL("exit status %d, want 2; stderr:\n%s", WIFEXITED(st) ? WEXITSTATUS(st) : -1, err);
  if (out[0]) CASE_FAIL("stdout not empty:\n%.400s", out);
  size_t len = strlen(err);
  if (count_char(err, '\n') != 1 || len == 0 || err[len - 1] != '\n')
    CASE_FAIL("stderr must be one line, got %d:\n%.600s", count_char(err, '\n'), err);
  if (strncmp(err, "fabricsim", 9) != 0) CASE_FAIL("stderr does not start \"fabricsim\":\n%s", err);
  for (int i = 0; i < c->nwant; i++)
    if (!strstr(err, c->want[i])) CASE_FAIL("the error line lacks '%s':\n%s", c->want[i], err);
  char stray[1024];
  if (stray_files(tmp, stray, sizeof(stray)) != 0) CASE_FAIL("left behind in the run's directory: %s", stray);
  if (c->uses_old && !same_file(path_old, &r->old_st))
    CASE_FAIL("the existing output old.txt was changed");
  if (c->uses_ro && !same_file(path_ro, &r->ro_st))
    CASE_FAIL("the read-only output ro.txt was changed");
#undef CASE_FAIL
  return ok;
}

TEST(test_cli_corpus_every_bad_invocation_exits_2_with_one_line) {
  corpus_env env;
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof(cwd)) || !realpath(test_cli_path(), env.bin)) {
    test_fail(__FILE__, __LINE__, "cannot find the binary %s", test_cli_path());
    return;
  }
  if (strlen(cwd) + 16 > sizeof(env.data)) {
    test_fail(__FILE__, __LINE__, "working directory too long");
    return;
  }
  memcpy(env.data, cwd, strlen(cwd) + 1);
  strcat(env.data, "/tests/data");
  memcpy(env.ex, cwd, strlen(cwd) + 1);
  strcat(env.ex, "/examples");
  FILE *f = fopen(CORPUS, "r");
  if (!f) {
    test_fail(__FILE__, __LINE__, "cannot open " CORPUS " (run from the repository root)");
    return;
  }
  /* PAR cases at a time, each with its own capture files */
  enum { PAR = 4 };
  corpus_run runs[PAR];
  int busy[PAR] = {0};
  for (int k = 0; k < PAR; k++) {
    FILE *fo = tmpfile(), *fe = tmpfile(); /* (closed at exit: unlinked already) */
    runs[k].out_fd = fo ? dup(fileno(fo)) : -1;
    runs[k].err_fd = fe ? dup(fileno(fe)) : -1;
    if (fo) fclose(fo);
    if (fe) fclose(fe);
  }
  const char *only = getenv("FS_CORPUS_LINE"); /* one case, by its line number */
  char line[8192];
  int lineno = 0, cases = 0, failed = 0, next = 0;
  for (int more = 1; more;) {
    more = fgets(line, sizeof(line), f) != NULL;
    char *p = line;
    if (more) {
      lineno++;
      while (*p == ' ' || *p == '\t') p++;
      if (*p == '#' || *p == '\n' || !*p) continue;
      if (only && atoi(only) != lineno) continue;
    }
    /* a free slot (the oldest one finished if none is) */
    int k = next;
    next = (next + 1) % PAR;
    if (busy[k]) {
      failed += !finish_case(&runs[k]);
      free_case(&runs[k].c);
      remove_tree(runs[k].tmp);
      busy[k] = 0;
    }
    if (!more) { /* the end: the others still running */
      for (int j = 0; j < PAR; j++)
        if (busy[j]) {
          failed += !finish_case(&runs[j]);
          free_case(&runs[j].c);
          remove_tree(runs[j].tmp);
          busy[j] = 0;
        }
      break;
    }
    corpus_run *r = &runs[k];
    snprintf(r->tmp, sizeof(r->tmp), "/tmp/fabricsim-corpus-XXXXXX");
    if (r->out_fd < 0 || r->err_fd < 0 || !mkdtemp(r->tmp)) {
      test_fail(__FILE__, __LINE__, "mkdtemp or tmpfile: %s", strerror(errno));
      break;
    }
    r->c = (corpus_case){.line = lineno};
    if (parse_case(&env, r->tmp, p, &r->c)) {
      test_fail(CORPUS, lineno, "not a case (ARGS ==> WANT): %s", line);
      failed++;
      free_case(&r->c);
      remove_tree(r->tmp);
      continue;
    }
    cases++;
    start_case(r);
    busy[k] = 1;
  }
  fclose(f);
  for (int k = 0; k < PAR; k++) {
    if (busy[k]) { /* (after a break) */
      finish_case(&runs[k]);
      free_case(&runs[k].c);
      remove_tree(runs[k].tmp);
    }
    if (runs[k].out_fd >= 0) close(runs[k].out_fd);
    if (runs[k].err_fd >= 0) close(runs[k].err_fd);
  }
  if (failed) fprintf(stderr, "  %d of %d corpus cases failed\n", failed, cases);
  if (!only && cases < 300) test_fail(__FILE__, __LINE__, "only %d cases in " CORPUS, cases);
}
