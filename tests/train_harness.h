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

#endif
