#include "train_harness.h"

#include <string.h>

#include "test.h"

fs_job *test_parse_job(const char *text) {
  fs_job *job = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_job_parse(text, strlen(text), "test-job", &job, &err), &err);
  return job;
}

int test_train_run(const fs_job *job, const fs_train_opts *o, fs_train_result *r) {
  fs_train *tr = NULL;
  fs_err err = {0, ""};
  int rc = fs_train_new(job, o, &tr, &err);
  if (!rc) rc = fs_train_run(tr, r, &err);
  if (rc) test_fail(__FILE__, __LINE__, "train: %s", err.msg);
  fs_train_free(tr);
  return rc;
}
