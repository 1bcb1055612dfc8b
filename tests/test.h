/* The tiny test framework: assertions that print both sides with their
 * units, and a registry (tests/test_list.h) the runner walks in order. */
#ifndef FABRICSIM_TEST_H
#define FABRICSIM_TEST_H

#include <math.h>
#include <stdio.h>

/* Records a failed check; the runner counts a test failed if any check did. */
void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Path of the fabricsim binary for CLI tests (from --cli). */
const char *test_cli_path(void);
/* Runs `fabricsim ARGS REDIR` through the shell ("2>&1", "2>FILE", ...);
 * returns its exit status (-1 if it did not exit normally) with up to n-1
 * bytes of its stdout in out (the rest is drained so it never blocks). */
int test_run_cli(const char *args, const char *redir, char *out, size_t n);
/* Runs `fabricsim train FILE` and records a failure (at file:line) unless
 * it exits 2 with exactly one line starting "fabricsim: FILE: " + want. */
void test_cli_train_error(const char *job_file, const char *want, const char *file, int line);
/* Writes text to path; 0, or -1 if the file cannot be written. */
int test_write_file(const char *path, const char *text);

#define CHECK(cond)                                              \
  do {                                                           \
    if (!(cond)) test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond); \
  } while (0)

#define CHECK_EQ_INT(got, want)                                              \
  do {                                                                       \
    long long g_ = (long long)(got), w_ = (long long)(want);                 \
    if (g_ != w_)                                                            \
      test_fail(__FILE__, __LINE__, "%s: expected %lld, got %lld", #got, w_, g_); \
  } while (0)

/* CHECK_EQ_INT with a context string (e.g. the spec under test). */
#define CHECK_EQ_CTX(got, want, ctx)                                                   \
  do {                                                                                 \
    long long g_ = (long long)(got), w_ = (long long)(want);                           \
    if (g_ != w_)                                                                      \
      test_fail(__FILE__, __LINE__, "%s: %s: expected %lld, got %lld", (ctx), #got, w_, \
                g_);                                                                   \
  } while (0)

/* |got - want| <= rel * max(|want|, tiny). Prints both with units. */
#define CHECK_REL(got, want, rel, unit)                                      \
  do {                                                                       \
    double g_ = (double)(got), w_ = (double)(want);                          \
    double s_ = fabs(w_) > 1e-300 ? fabs(w_) : 1e-300;                       \
    if (!(fabs(g_ - w_) <= (rel) * s_))                                      \
      test_fail(__FILE__, __LINE__, "%s: expected %.17g %s, got %.17g %s (rel err %.3g)", \
                #got, w_, unit, g_, unit, fabs(g_ - w_) / s_);               \
  } while (0)

#define CHECK_OK(expr, errp)                                                  \
  do {                                                                        \
    int rc_ = (expr);                                                         \
    if (rc_ != 0)                                                             \
      test_fail(__FILE__, __LINE__, "%s returned %d: %s", #expr, rc_, (errp)->msg); \
  } while (0)

#define TEST(name) \
  void name(void); \
  void name(void)

#endif
