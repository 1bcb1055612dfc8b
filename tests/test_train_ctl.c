/* Routing control inside `fabricsim train`: "optimized" routing and
 * failures on the bundled examples, and the job-file errors that go with
 * them. */
#include <stdlib.h>
#include <string.h>

#include "../src/base/base.h"
#include "fabricsim/train.h"
#include "test.h"

static int run_loaded(const fs_job *job, fs_train_result *res, fs_err *err) {
  fs_train *tr = NULL;
  int rc = fs_train_new(job, NULL, &tr, err);
  if (!rc) rc = fs_train_run(tr, res, err);
  fs_train_free(tr);
  return rc;
}

static int run_job(const char *path, fs_train_result *res, fs_err *err) {
  fs_job *job = NULL;
  fs_train *tr = NULL;
  int rc = fs_job_load(path, &job, err);
  if (!rc) rc = fs_train_new(job, NULL, &tr, err);
  if (!rc) rc = fs_train_run(tr, res, err);
  fs_train_free(tr);
  fs_job_free(job);
  return rc;
}

/* ECMP collides on the 2:1 fabric; re-optimising every millisecond must
 * not be slower than plain ECMP, must have moved flows, and cannot beat
 * ideal spraying by more than rounding (spray is the fluid optimum of a
 * symmetric ring). */
TEST(test_train_optimized_routing_beats_ecmp) {
  fs_err err = {0, ""};
  fs_train_result opt, spray;
  CHECK_OK(run_job("examples/gpt-13b-optimized.json", &opt, &err), &err);
  CHECK(opt.baseline_iter_s > 0);
  CHECK(opt.iter_s <= opt.baseline_iter_s);
  CHECK(opt.ctl.reopts > 0);
  CHECK(opt.ctl.pairs_moved > 0);
  CHECK(opt.ctl.flows_held <= opt.ctl.flows_rerouted);
  /* the same job with spray routing, no control */
  char *text = NULL;
  size_t len = 0;
  CHECK_OK(fs__read_file("examples/gpt-13b-optimized.json", &text, &len, &err), &err);
  fs_job *job = NULL;
  const char *from = "\"mode\": \"optimized\"";
  char *m = text ? strstr(text, from) : NULL;
  CHECK(m != NULL);
  if (m) {
    /* drop the optimized-only keys by ending the object after the mode */
    char *end = strchr(m, '}');
    size_t head = (size_t)(m - text);
    char *j2 = malloc(len + 64);
    snprintf(j2, len + 64, "%.*s\"mode\": \"spray\"%s", (int)head, text, end);
    CHECK_OK(fs_job_parse(j2, strlen(j2), "spray", &job, &err), &err);
    fs_train *tr = NULL;
    CHECK_OK(fs_train_new(job, NULL, &tr, &err), &err);
    CHECK_OK(fs_train_run(tr, &spray, &err), &err);
    CHECK(opt.iter_s >= spray.iter_s * (1 - 1e-9));
    CHECK(spray.iter_s < opt.baseline_iter_s); /* ECMP did collide */
    fs_train_free(tr);
    fs_job_free(job);
    free(j2);
  }
  free(text);
}

/* A spine and a cable fail mid-iteration with spray routing: the run is
 * slower than without failures, every cable of the spine counts, and the
 * output is deterministic. */
TEST(test_train_failure_slowdown) {
  fs_err err = {0, ""};
  fs_train_result a, b;
  CHECK_OK(run_job("examples/gpt-13b-failure.json", &a, &err), &err);
  CHECK_OK(run_job("examples/gpt-13b-failure.json", &b, &err), &err);
  CHECK_EQ_INT(a.ctl.cables_failed, 8 + 1); /* spine0 has one cable per leaf */
  CHECK(a.ctl.failure_reroutes > 0);
  CHECK(a.iter_s > a.baseline_iter_s);
  CHECK(a.iter_s == b.iter_s);
  CHECK(a.ctl.failure_reroutes == b.ctl.failure_reroutes);
}

TEST(test_train_control_bad_input) {
  static const struct {
    const char *routing, *failures, *want;
  } cases[] = {
      {"{\"mode\": \"ecmp\", \"interval_ms\": 1}", NULL,
       "$.routing.interval_ms: only applies with \"mode\": \"optimized\""},
      {"{\"mode\": \"optimized\", \"base\": \"dor\"}", NULL, "$.routing.base: must be ecmp"},
      {"{\"mode\": \"optimized\", \"optimizer\": \"exact\"}", NULL,
       "$.routing.optimizer: must be greedy, ecmp, random, spray or edgecolor (exact is too slow "
       "to run inside a simulation), got \"exact\""},
      {"{\"mode\": \"magic\"}", NULL,
       "$.routing.mode: unknown routing mode (expected shortest, ecmp, spray, optimized, dor, "
       "minimal, valiant, railonly or lotus), got \"magic\""},
      {"{\"mode\": \"optimized\", \"interval_ms\": 0}", NULL, "$.routing.interval_ms"},
      {"{\"mode\": \"optimized\", \"reconfig_us\": -1}", NULL, "$.routing.reconfig_us"},
      {"{\"mode\": \"ecmp\"}", "[{\"at_ms\": 1, \"switch\": \"spine9\"}]",
       "$.failures[0].switch: no switch named 'spine9'"},
      {"{\"mode\": \"ecmp\"}", "[{\"at_ms\": 1, \"cable\": \"leaf0-leaf1\"}]",
       "$.failures[0].cable: no cable joins leaf0 and leaf1"},
      {"{\"mode\": \"ecmp\"}", "[{\"at_ms\": 1, \"cable\": \"leaf0-spine0\", \"switch\": \"spine0\"}]",
       "$.failures[0]: needs exactly one"},
      {"{\"mode\": \"ecmp\"}", "[{\"at_ms\": -1, \"switch\": \"spine0\"}]", "$.failures[0].at_ms"},
      {"{\"mode\": \"ecmp\"}", "[{\"switch\": \"spine0\"}]", "$.failures[0].at_ms"},
      {"{\"mode\": \"ecmp\"}", "{\"at_ms\": 1}", "$.failures: must be an array"},
      {"{\"mode\": \"ecmp\"}", "[{\"at_ms\": 1, \"switch\": \"spine0\", \"when\": 2}]",
       "$.failures[0]"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"model\": {\"layers\": 4, \"hidden\": 512, \"heads\": 8, \"seq_len\": 512, "
             "\"vocab\": 1024}, \"training\": {\"global_batch\": 8, \"micro_batch\": 1}, "
             "\"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 8}, \"hardware\": "
             "{\"gpu_tflops\": 100, \"hbm_gib\": 80, \"gpus_per_node\": 1, \"nvlink_gbps\": 100}, \"topology\": "
             "{\"type\": \"leafspine\", \"leaves\": 2, \"spines\": 2, \"hosts_per_leaf\": 4, "
             "\"host_gbps\": 100, \"fabric_gbps\": 100}, \"routing\": %s%s%s}",
             cases[i].routing, cases[i].failures ? ", \"failures\": " : "",
             cases[i].failures ? cases[i].failures : "");
    fs_job *job = NULL;
    fs_err err = {0, ""};
    int rc = fs_job_parse(text, strlen(text), "job.json", &job, &err);
    CHECK_EQ_CTX(rc, FS_EINVAL, cases[i].want);
    if (!strstr(err.msg, cases[i].want))
      test_fail(__FILE__, __LINE__, "case %zu: want '%s' in '%s'", i, cases[i].want, err.msg);
    fs_job_free(job);
  }
}

/* ---- several jobs on one cluster ---- */
static fs_job *load_with(const char *path, const char *routing, int spines, fs_err *err) {
  char *text = NULL;
  size_t len = 0;
  fs_job *job = NULL;
  if (fs__read_file(path, &text, &len, err)) return NULL;
  /* rewrite the routing object and the spine count of the bundled file */
  char *r = strstr(text, "\"routing\"");
  char *s = strstr(text, "\"spines\": 4");
  char *out = malloc(len + 256);
  if (r && s && out) {
    char *end = strchr(r, '}');
    snprintf(out, len + 256, "%.*s\"spines\": %d%.*s\"routing\": %s%s", (int)(s - text), text,
             spines, (int)(r - (s + 11)), s + 11, routing, end + 1);
    fs_job_parse(out, strlen(out), path, &job, err);
  }
  free(out);
  free(text);
  return job;
}

/* With ideal spraying on a 2-tier Clos a leaf-spine link carries its
 * leaf's traffic over the spines, so tenants on disjoint leaves never share
 * a bottleneck: each runs exactly as alone, non-blocking or 2:1. A cluster
 * of one job is the job alone. */
TEST(test_train_cluster_spray_isolates_tenants) {
  for (int spines = 4; spines <= 8; spines += 4) {
    fs_err err = {0, ""};
    fs_job *a = load_with("examples/tenant-a.json", "{\"mode\": \"spray\"}", spines, &err);
    fs_job *b = load_with("examples/tenant-b.json", "{\"mode\": \"spray\"}", spines, &err);
    CHECK(a && b);
    if (!a || !b) {
      fprintf(stderr, "  %s\n", err.msg);
      fs_job_free(a);
      fs_job_free(b);
      return;
    }
    fs_train_result alone[2], both[2], one;
    CHECK_OK(run_loaded(a, &alone[0], &err), &err);
    CHECK_OK(run_loaded(b, &alone[1], &err), &err);
    fs_job *jobs[2] = {a, b};
    fs_cluster *c = NULL;
    CHECK_OK(fs_cluster_new(jobs, 2, NULL, &c, &err), &err);
    CHECK_OK(fs_cluster_run(c, both, &err), &err);
    fs_cluster_free(c);
    CHECK_EQ_INT(b->gpu_offset, 64);
    CHECK_REL(both[0].iter_s, alone[0].iter_s, 1e-9, "s");
    CHECK_REL(both[1].iter_s, alone[1].iter_s, 1e-9, "s");
    CHECK(both[0].iter_s != both[1].iter_s); /* they are different jobs */
    CHECK_OK(fs_cluster_new(jobs, 1, NULL, &c, &err), &err);
    CHECK_OK(fs_cluster_run(c, &one, &err), &err);
    fs_cluster_free(c);
    CHECK(one.iter_s == alone[0].iter_s);
    /* alone, the job may simulate one rail for all (rail symmetry); a
     * cluster never does: the flows they stand for are the same */
    CHECK_EQ_INT(one.flows_represented, alone[0].flows_represented);
    fs_job_free(a);
    fs_job_free(b);
  }
}

TEST(test_train_cluster_errors) {
  fs_err err = {0, ""};
  fs_job *a = load_with("examples/tenant-a.json", "{\"mode\": \"spray\"}", 4, &err);
  fs_job *b = load_with("examples/tenant-b.json", "{\"mode\": \"spray\"}", 8, &err);
  fs_job *c = load_with("examples/tenant-b.json", "{\"mode\": \"ecmp\"}", 4, &err);
  CHECK(a && b && c);
  fs_cluster *cl = NULL;
  fs_job *ab[2] = {a, b}, *ac[2] = {a, c}, *aaa[3] = {a, a, a};
  CHECK_EQ_INT(fs_cluster_new(ab, 2, NULL, &cl, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "$.topology: jobs sharing a cluster need the same topology") != NULL);
  CHECK_EQ_INT(fs_cluster_new(ac, 2, NULL, &cl, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "$.routing") != NULL);
  CHECK_EQ_INT(fs_cluster_new(aaa, 3, NULL, &cl, &err), FS_EINVAL); /* 192 GPUs > 128 hosts */
  CHECK(strstr(err.msg, "more than the topology's 128 hosts") != NULL);
  CHECK(cl == NULL);
  fs_job_free(a);
  fs_job_free(b);
  fs_job_free(c);
  /* the CLI: a report per job, JSON {"jobs": [...]}, no trace of several */
  char out[1 << 16];
  CHECK_EQ_INT(test_run_cli("train examples/tenant-a.json examples/tenant-b.json --format json",
                            "2>/dev/null", out, sizeof(out)),
               0);
  CHECK(strncmp(out, "{\"jobs\":[{\"iteration_ns\":", 25) == 0);
  CHECK(strstr(out, "},{\"iteration_ns\":") != NULL || strstr(out, "}\n,{\"iteration_ns\":") != NULL);
  /* text: each job its flows and tasks; the one simulation's events, wall
   * and memory once, after them (each job printed them, and 0.000 s) */
  CHECK_EQ_INT(test_run_cli("train examples/tenant-a.json examples/tenant-b.json", "2>/dev/null",
                            out, sizeof(out)),
               0);
  CHECK(strstr(out, "tasks of this job, in the cluster's one simulation (below)") != NULL);
  const char *sim = strstr(out, "== the cluster's simulation (2 jobs) ==\nengine:");
  CHECK(sim != NULL);
  int events = 0;
  for (const char *p = out; (p = strstr(p, " events,")); p++) events++;
  CHECK_EQ_INT(events, 1);
  CHECK(sim && !strstr(sim, " 0.000 s,"));
  /* the Chakra export is per job: two jobs are refused before any work */
  CHECK_EQ_INT(test_run_cli("train examples/tenant-a.json examples/tenant-b.json "
                            "--export-chakra /nonexistent-fabricsim/ck",
                            "2>&1", out, sizeof(out)),
               2);
  CHECK(strstr(out, "--export-chakra takes one job file") != NULL);
}

/* ---- several iterations back to back ---- */
static int run_iters(const fs_job *job, int32_t iters, fs_train_result *res, fs_err *err) {
  fs_train_opts o = {.iterations = iters};
  fs_train *tr = NULL;
  int rc = fs_train_new(job, &o, &tr, err);
  if (!rc) rc = fs_train_run(tr, res, err);
  fs_train_free(tr);
  return rc;
}

/* Without routing control an iteration does not depend on the one before
 * (each device starts when its previous iteration and its stage's
 * gradients are done, and the schedule repeats): every iteration takes the
 * single iteration's time and the breakdown is the same. */
TEST(test_train_iterations_repeat) {
  fs_err err = {0, ""};
  fs_job *job = NULL;
  CHECK_OK(fs_job_load("examples/gpt-13b.json", &job, &err), &err);
  if (!job) return;
  fs_train_result one, three;
  CHECK_OK(run_iters(job, 1, &one, &err), &err);
  CHECK_OK(run_iters(job, 3, &three, &err), &err);
  CHECK_EQ_INT(three.iterations, 3);
  CHECK_REL(three.first_iter_s, one.iter_s, 1e-9, "s");
  CHECK_REL(three.iter_s, one.iter_s, 1e-9, "s");
  CHECK_REL(three.mean_iter_s, one.iter_s, 1e-9, "s");
  CHECK_REL(three.compute_s, one.compute_s, 1e-9, "s");
  CHECK_REL(three.bubble_s, one.bubble_s, 1e-9, "s");
  for (int k = 0; k < FS_PAR_N; k++) {
    CHECK_REL(three.kind[k].exposed_s + 1, one.kind[k].exposed_s + 1, 1e-9, "s");
    CHECK_EQ_INT(three.kind[k].colls, one.kind[k].colls);
  }
  CHECK_EQ_INT(three.flows, 3 * one.flows);
  fs_job_free(job);
}

/* The controller's routes hold for a pair's later flows too, so what it
 * learnt in the first iteration routes the next ones from their start:
 * with a 200 ms interval the first iteration pays for ECMP's collisions
 * until the controller acts, the later ones run as fast as ideal spraying. */
TEST(test_train_iterations_learn_routes) {
  fs_err err = {0, ""};
  fs_job *opt = load_with("examples/gpt-13b-optimized.json",
                          "{\"mode\": \"optimized\", \"interval_ms\": 200, \"reconfig_us\": 10}", 4,
                          &err);
  fs_job *spray = load_with("examples/gpt-13b-optimized.json", "{\"mode\": \"spray\"}", 4, &err);
  CHECK(opt && spray);
  if (opt && spray) {
    fs_train_result r, s;
    CHECK_OK(run_iters(opt, 3, &r, &err), &err);
    CHECK_OK(run_iters(spray, 1, &s, &err), &err);
    CHECK(r.first_iter_s > r.iter_s * 1.05);
    CHECK_REL(r.iter_s, s.iter_s, 1e-6, "s");
    CHECK(r.baseline_iter_s > r.iter_s * 1.2); /* ECMP stays collided */
  }
  fs_job_free(opt);
  fs_job_free(spray);
}
