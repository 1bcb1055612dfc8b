#include "train_harness.h"

#include <math.h>
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

int test_train_symmetry_exact(const fs_job *job, const fs_train_opts *o, int64_t orbit,
                              fs_train_result *a, fs_train_result *full) {
  fs_train_result b;
  fs_train_opts off = *o;
  off.no_symmetry = 1;
  int rc = test_train_run(job, o, a);
  if (!rc) rc = test_train_run(job, &off, &b);
  if (rc) return rc;
  if (full) *full = b;
  CHECK_EQ_INT(a->flows * orbit, b.flows);
  CHECK_EQ_INT(a->flows_represented, b.flows_represented);
  CHECK_REL(a->iter_s, b.iter_s, 1e-9, "s");
  CHECK_REL(a->kind[FS_PAR_TP].exposed_s, b.kind[FS_PAR_TP].exposed_s, 1e-9, "s");
  CHECK_REL(a->kind[FS_PAR_DP].exposed_s, b.kind[FS_PAR_DP].exposed_s, 1e-9, "s");
  /* every collective's duration, also off the critical path */
  for (int k = 0; k < FS_PAR_N; k++) CHECK_REL(a->kind[k].busy_s, b.kind[k].busy_s, 1e-9, "s");
  return 0;
}
