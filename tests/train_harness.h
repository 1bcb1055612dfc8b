/* Shared harness of the training tests: parse a job text, build and run its
 * iteration, failing the current test (with the library's message) on an
 * error. */
#ifndef FABRICSIM_TESTS_TRAIN_HARNESS_H
#define FABRICSIM_TESTS_TRAIN_HARNESS_H

#include "fabricsim/train.h"

/* The job of a JSON text (label "test-job"), or NULL after failing the test. */
fs_job *test_parse_job(const char *text);
/* fs_train_new + fs_train_run + fs_train_free; 0 or the error code. */
int test_train_run(const fs_job *job, const fs_train_opts *o, fs_train_result *r);
/* Runs job with o and again with the symmetry shortcuts off, and checks the
 * shortcut against the full simulation: the same flows represented, the
 * iteration and the exposed TP and DP times to 1e-9, `orbit` times fewer
 * flows simulated. *a is the first run's result (its symmetry line is the
 * caller's to check), *full (if not NULL) the second's. 0 or the error
 * code of a run. */
int test_train_symmetry_exact(const fs_job *job, const fs_train_opts *o, int64_t orbit,
                              fs_train_result *a, fs_train_result *full);

#endif
