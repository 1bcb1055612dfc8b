/* Tests of the sched module (sched.h): FIFO and SJF on a hand-made trace
 * against hand-computed completion times, the share model by hand, two
 * jobs sharing a ToR's uplinks slowing down as the model says and within
 * the measured gap of the training engine's multi-job run, the
 * incremental re-rate against a full one, determinism, and bad traces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim/report.h"
#include "fabricsim/sched.h"
#include "fabricsim/sweep.h"
#include "fabricsim/train.h"
#include "test.h"

static fs_sched_trace *parse(const char *text) {
  fs_sched_trace *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_sched_trace_parse(text, strlen(text), "t.json", &t, &err), &err);
  return t;
}

static int run_c(fs_sched_trace *t, fs_sched_kind k, int full, fs_sched_contention c,
                 fs_sched_result *r) {
  fs_sched *s = NULL;
  fs_err err = {0, ""};
  fs_sched_opts o = {k, full, NULL, NULL, c};
  int rc = fs_sched_new(t, &s, &err);
  if (!rc) rc = fs_sched_run(s, &o, r, &err);
  CHECK_OK(rc, &err);
  fs_sched_free(s);
  return rc;
}

static int run(fs_sched_trace *t, fs_sched_kind k, int full, fs_sched_result *r) {
  return run_c(t, k, full, FS_CONTENTION_ALIGNED, r);
}

/* Two 8-GPU servers (two ToRs of one server each), four one-server jobs
 * of one kind (iteration T alone, no traffic between servers). */
static const char *hand_trace =
    "{\"cluster\":{\"topology\":{\"type\":\"leafspine\",\"leaves\":2,\"spines\":1,"
    "\"hosts_per_leaf\":8,\"host_gbps\":400,\"fabric_gbps\":400},\"hardware\":{"
    "\"gpu_tflops\":989,\"mfu_matmul\":0.5,\"hbm_gib\":80,\"gpus_per_node\":8,"
    "\"nvlink_gbps\":3600,\"nic_gbps\":400}},\"jobs\":["
    "{\"id\":\"A\",\"arrival_s\":0,\"model\":\"gpt-350m\",\"gpus\":8,\"iterations\":100},"
    "{\"id\":\"B\",\"arrival_s\":0,\"model\":\"gpt-350m\",\"gpus\":8,\"iterations\":300},"
    "{\"id\":\"C\",\"arrival_s\":1,\"model\":\"gpt-350m\",\"gpus\":8,\"iterations\":50},"
    "{\"id\":\"D\",\"arrival_s\":2,\"model\":\"gpt-350m\",\"gpus\":8,\"iterations\":10}]}";

/* FIFO: A and B start at 0; C waits for A (100 T), D for C (150 T).
 * SJF: at 100 T the shorter D goes first, C after it (110 T). */
TEST(test_sched_fifo_sjf_hand) {
  fs_sched_trace *t = parse(hand_trace);
  if (!t) return;
  CHECK_EQ_INT(t->n_specs, 1);
  fs_sched_result f, s;
  if (run(t, FS_SCHED_FIFO, 0, &f) || run(t, FS_SCHED_SJF, 0, &s)) {
    fs_sched_trace_free(t);
    return;
  }
  double T = f.jobs[0].iso_iter_s;
  CHECK(T > 0.02 && 100 * T > 2); /* C and D arrive while A and B run */
  const double fifo[4] = {100 * T, 300 * T, 150 * T - 1, 160 * T - 2};
  const double sjf[4] = {100 * T, 300 * T, 160 * T - 1, 110 * T - 2};
  for (int j = 0; j < 4; j++) {
    CHECK_REL(f.jobs[j].jct_s, fifo[j], 1e-9, "s");
    CHECK_REL(s.jobs[j].jct_s, sjf[j], 1e-9, "s");
  }
  CHECK_REL(f.jobs[3].queue_s, 150 * T - 2, 1e-9, "s");
  CHECK_REL(f.jct_mean_s, (fifo[0] + fifo[1] + fifo[2] + fifo[3]) / 4, 1e-9, "s");
  CHECK_REL(f.makespan_s, 300 * T, 1e-9, "s");
  /* busy GPU-seconds 8 (100 + 300 + 50 + 10) T over 16 GPUs x 300 T */
  CHECK_REL(f.gpu_util, 8.0 * 460 / (16.0 * 300), 1e-9, "");
  fs_sched_result_free(&f);
  fs_sched_result_free(&s);
  fs_sched_trace_free(t);
}

/* Weighted max-min by hand: jobs 0 and 1 on resource 0 (capacity 100,
 * demands 100 and 50: level 100 / 150), job 2 alone on resource 1 with
 * room to spare (1), job 3 on both (frozen with 0 and 1 at 2/3). */
TEST(test_sched_share_by_hand) {
  const double dem[4 * 2] = {100, 0, 50, 0, 0, 40, 30, 30};
  const double cap[2] = {100 + 30 * 2.0 / 3, 100};
  double s[4];
  fs_err err = {0, ""};
  CHECK_OK(fs_sched_share(4, 2, dem, cap, s, &err), &err);
  CHECK_REL(s[0], 2.0 / 3, 1e-12, "");
  CHECK_REL(s[1], 2.0 / 3, 1e-12, "");
  CHECK_REL(s[3], 2.0 / 3, 1e-12, "");
  CHECK_REL(s[2], 1, 1e-12, "");
  /* two equal jobs on one link: half each */
  const double d2[2] = {100, 100}, c2[1] = {100};
  CHECK_OK(fs_sched_share(2, 1, d2, c2, s, &err), &err);
  CHECK_REL(s[0], 0.5, 1e-12, "");
  CHECK_REL(s[1], 0.5, 1e-12, "");
}

/* Three ToRs of two 8-GPU servers, one 400 Gb/s uplink each; two
 * 24-GPU data-parallel jobs of three servers: the middle ToR holds one
 * server of each, so its uplink carries both rings. */
#define SHARED_CLUSTER                                                                     \
  "\"topology\":{\"type\":\"leafspine\",\"leaves\":3,\"spines\":1,\"hosts_per_leaf\":16," \
  "\"host_gbps\":400,\"fabric_gbps\":400},\"hardware\":{\"gpu_tflops\":989,"              \
  "\"mfu_matmul\":0.5,\"hbm_gib\":80,\"gpus_per_node\":8,\"nvlink_gbps\":3600,"           \
  "\"nic_gbps\":400}"
#define SHARED_JOB                                                                         \
  "\"model\":{\"layers\":24,\"hidden\":2048,\"heads\":16,\"seq_len\":2048,\"vocab\":51200}," \
  "\"training\":{\"global_batch\":192,\"micro_batch\":1}"

static const char *shared_trace =
    "{\"cluster\":{" SHARED_CLUSTER "},\"jobs\":["
    "{\"id\":\"a\",\"arrival_s\":0," SHARED_JOB ",\"gpus\":24,\"iterations\":100},"
    "{\"id\":\"b\",\"arrival_s\":0," SHARED_JOB ",\"gpus\":24,\"iterations\":100}]}";
static const char *shared_job =
    "{" SHARED_CLUSTER "," SHARED_JOB ",\"parallelism\":{\"tp\":1,\"pp\":1,\"dp\":24},"
    "\"placement\":\"packed\"}";

/* The engine's run of two job files sharing one cluster (fs_cluster, one
 * iteration, no comparison run): 1 and their results in tr, 0 after a
 * failed check. */
static int engine_pair(const char *a, const char *b, fs_train_result tr[2]) {
  fs_job *jobs[2] = {NULL, NULL};
  fs_err err = {0, ""};
  CHECK_OK(fs_job_parse(a, strlen(a), "a.json", &jobs[0], &err), &err);
  CHECK_OK(fs_job_parse(b, strlen(b), "b.json", &jobs[1], &err), &err);
  fs_cluster *c = NULL;
  fs_train_opts o;
  memset(&o, 0, sizeof(o));
  o.no_compare = 1;
  int ok = 0;
  if (jobs[0] && jobs[1]) {
    CHECK_OK(fs_cluster_new(jobs, 2, &o, &c, &err), &err);
    int rc = c ? fs_cluster_run(c, tr, &err) : -1;
    if (c) CHECK_OK(rc, &err);
    ok = rc == 0;
  }
  fs_cluster_free(c);
  fs_job_free(jobs[0]);
  fs_job_free(jobs[1]);
  return ok;
}

/* Both rings are held by the shared uplinks alone as by their NICs (400
 * Gb/s each), so each gets half: the communication doubles, the compute
 * stays. The training engine runs the same two jobs in one simulation
 * (fs_cluster: the same servers, the same ToR between them): measured, the
 * fluid iteration is 3.7 % short of the engine's (466.2 ms against
 * 484.2 ms, 383.6 ms alone), because only the exposed communication
 * stretches in the model while in the engine the gradient buckets that
 * overlapped the backward pass slow down too. The test holds the sign and
 * 5 %. (The average model, phases interleaved, says 383.6 ms: no
 * slowdown, 21 % short: identical jobs started together are its worst
 * case.) */
TEST(test_sched_shared_uplink_against_engine) {
  fs_sched_trace *t = parse(shared_trace);
  fs_sched_result r;
  if (!t || run(t, FS_SCHED_FIFO, 0, &r)) {
    fs_sched_trace_free(t);
    return;
  }
  const fs_sched_job_result *a = &r.jobs[0];
  CHECK(a->comm_s > 0.1 * a->iso_iter_s);
  CHECK_EQ_INT(a->leaves, 2);
  CHECK_EQ_INT(r.jobs[1].leaves, 2);
  CHECK_REL(a->mean_iter_s, a->iso_iter_s + a->comm_s, 1e-9, "s");
  CHECK_REL(r.jobs[1].mean_iter_s, a->iso_iter_s + a->comm_s, 1e-9, "s");
  fs_train_result tr[2];
  if (engine_pair(shared_job, shared_job, tr)) {
    for (int k = 0; k < 2; k++) {
      CHECK(tr[k].iter_s > a->iso_iter_s * 1.1); /* the engine sees the sharing too */
      CHECK(r.jobs[k].mean_iter_s <= tr[k].iter_s * 1.001);
      CHECK(r.jobs[k].mean_iter_s >= tr[k].iter_s * 0.95);
    }
  }
  fs_sched_result_free(&r);
  fs_sched_trace_free(t);
}

#define BIG_JOB                                                                            \
  "\"model\":{\"layers\":32,\"hidden\":4096,\"heads\":32,\"seq_len\":2048,\"vocab\":51200}," \
  "\"training\":{\"global_batch\":192,\"micro_batch\":1}"
static const char *unequal_trace =
    "{\"cluster\":{" SHARED_CLUSTER "},\"jobs\":["
    "{\"id\":\"a\",\"arrival_s\":0," SHARED_JOB ",\"gpus\":24,\"iterations\":100},"
    "{\"id\":\"b\",\"arrival_s\":0," BIG_JOB ",\"parallelism\":{\"tp\":8},\"gpus\":24,"
    "\"iterations\":100}]}";
static const char *big_job =
    "{" SHARED_CLUSTER "," BIG_JOB ",\"parallelism\":{\"tp\":8,\"pp\":1,\"dp\":3},"
    "\"placement\":\"packed\"}";

/* Unequal jobs on the same shared uplink: a 383.6 ms data-parallel job
 * beside a 2,577.7 ms GPT-3 6.7B-shaped one (tp 8 x dp 3). In the engine's
 * one iteration their communication never meets (the small job's at its
 * end, ~0.3 s, the big one's near 2.3 s): neither slows. The average
 * model says the same to 0.1 %; the aligned one, whose phases coincide by
 * assumption, slows both (the small job 21 %): its bound from above. */
TEST(test_sched_unequal_jobs_against_engine) {
  fs_sched_trace *t = parse(unequal_trace);
  fs_sched_result al, av;
  if (!t || run_c(t, FS_SCHED_FIFO, 0, FS_CONTENTION_ALIGNED, &al)) {
    fs_sched_trace_free(t);
    return;
  }
  if (run_c(t, FS_SCHED_FIFO, 0, FS_CONTENTION_AVERAGE, &av)) {
    fs_sched_result_free(&al);
    fs_sched_trace_free(t);
    return;
  }
  fs_train_result tr[2];
  int ran = engine_pair(shared_job, big_job, tr);
  for (int k = 0; ran && k < 2; k++) {
    CHECK_REL(tr[k].iter_s, av.jobs[k].iso_iter_s, 1e-3, "s"); /* neither slows */
    CHECK_REL(av.jobs[k].mean_iter_s, tr[k].iter_s, 1e-3, "s");
    CHECK(al.jobs[k].mean_iter_s > tr[k].iter_s);
  }
  CHECK(al.jobs[0].mean_iter_s > 1.2 * al.jobs[0].iso_iter_s);
  fs_sched_result_free(&al);
  fs_sched_result_free(&av);
  fs_sched_trace_free(t);
}

/* Two ToRs of two servers joined by one thin uplink (100 Gb/s against
 * 400 Gb/s NICs). A blocker takes server 0; first fit puts a two-server
 * data-parallel job on servers 1 and 2, across the uplink, while it was
 * timed on servers 0 and 1, inside one ToR. Alone (the blocker never
 * leaves its server) its communication stretches by what the uplink lacks
 * (4x); the engine, running the job on servers 1 and 2
 * (fs_job.gpu_offset), agrees within 3 %. */
#define THIN_CLUSTER                                                                      \
  "\"topology\":{\"type\":\"leafspine\",\"leaves\":2,\"spines\":1,\"hosts_per_leaf\":16," \
  "\"host_gbps\":400,\"fabric_gbps\":100},\"hardware\":{\"gpu_tflops\":989,"             \
  "\"mfu_matmul\":0.5,\"hbm_gib\":80,\"gpus_per_node\":8,\"nvlink_gbps\":3600,"          \
  "\"nic_gbps\":400}"
TEST(test_sched_placement_across_thin_uplink) {
  const char *trace =
      "{\"cluster\":{" THIN_CLUSTER "},\"jobs\":["
      "{\"id\":\"blocker\",\"arrival_s\":0,\"model\":\"gpt-350m\",\"gpus\":8,\"iterations\":100000},"
      "{\"id\":\"x\",\"arrival_s\":0," SHARED_JOB ",\"gpus\":16,\"iterations\":100}]}";
  const char *job = "{" THIN_CLUSTER "," SHARED_JOB ",\"parallelism\":{\"tp\":1,\"pp\":1,"
                    "\"dp\":16},\"placement\":\"packed\"}";
  fs_sched_trace *t = parse(trace);
  fs_sched_result r;
  if (!t || run(t, FS_SCHED_OBLIVIOUS, 0, &r)) {
    fs_sched_trace_free(t);
    return;
  }
  const fs_sched_job_result *x = &r.jobs[1];
  CHECK_EQ_INT(x->first_server, 1);
  CHECK_EQ_INT(x->leaves, 2);
  CHECK(x->mean_iter_s > x->iso_iter_s * 1.2);
  fs_job *jb = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_job_parse(job, strlen(job), "x.json", &jb, &err), &err);
  if (jb) {
    jb->gpu_offset = 8; /* servers 1 and 2 */
    fs_train_opts o;
    memset(&o, 0, sizeof(o));
    o.no_compare = 1;
    fs_train *tr = NULL;
    fs_train_result res;
    CHECK_OK(fs_train_new(jb, &o, &tr, &err), &err);
    if (tr) {
      CHECK_OK(fs_train_run(tr, &res, &err), &err);
      printf("  (alone where timed %.1f ms; here: model %.1f ms, engine %.1f ms)\n",
             1e3 * x->iso_iter_s, 1e3 * x->mean_iter_s, 1e3 * res.iter_s);
      CHECK(x->mean_iter_s <= res.iter_s * 1.001);
      CHECK(x->mean_iter_s >= res.iter_s * 0.9);
    }
    fs_train_free(tr);
  }
  fs_job_free(jb);
  fs_sched_result_free(&r);
  fs_sched_trace_free(t);
}

/* liu-ocs on the same two jobs: each spans two ToRs, so it first waits
 * d = 10 ms for its circuits; the middle ToR's circuits serve both, so
 * every iteration pays a reconfiguration, T + d; job a (first on the
 * tie) takes (M + d) / (T + d) = 24 % of that ToR's time, which leaves
 * job b all it can use: JCT = d + 100 (T + d) for both. */
TEST(test_sched_liu_ocs_by_hand) {
  fs_sched_trace *t = parse(shared_trace);
  fs_sched_result r;
  if (!t || run(t, FS_SCHED_LIU_OCS, 0, &r)) {
    fs_sched_trace_free(t);
    return;
  }
  double d = t->ocs_reconfig_s, T = r.jobs[0].iso_iter_s;
  CHECK_REL(d, 0.010, 1e-12, "s");
  for (int j = 0; j < 2; j++) {
    CHECK_REL(r.jobs[j].jct_s, d + 100 * (T + d), 1e-9, "s");
    CHECK_REL(r.jobs[j].setup_s, d, 1e-12, "s");
  }
  fs_sched_result_free(&r);
  fs_sched_trace_free(t);
}

/* Liu's baselines on the same two jobs: a ToR's circuits serve one job
 * from when it takes them to its end. a (first on the tie) takes the
 * middle ToR's circuits at 0, paying one reconfiguration d, and runs at T:
 * JCT d + 100 T. b holds its GPUs from 0 but waits for the circuits until
 * a ends, then pays d too: JCT 2 (d + 100 T), of which 100 T + 2 d its
 * set-up (waiting for circuits, then d). liu-ocs, which lets b's
 * communication use the circuits while a computes, finishes both at
 * d + 100 (T + d), earlier on average (SWRTF's gain). */
TEST(test_sched_liu_baselines_by_hand) {
  fs_sched_trace *t = parse(shared_trace);
  if (!t) return;
  fs_sched_result r[3];
  const fs_sched_kind k[3] = {FS_SCHED_LIU_SJF, FS_SCHED_LIU_FIFO, FS_SCHED_LIU_OCS};
  int n = 0;
  for (; n < 3; n++)
    if (run(t, k[n], 0, &r[n])) break;
  if (n == 3) {
    double d = t->ocs_reconfig_s, T = r[0].jobs[0].iso_iter_s;
    for (int i = 0; i < 2; i++) {
      CHECK_REL(r[i].jobs[0].jct_s, d + 100 * T, 1e-9, "s");
      CHECK_REL(r[i].jobs[1].jct_s, 2 * (d + 100 * T), 1e-9, "s");
      CHECK_REL(r[i].jobs[1].queue_s, 0, 1e-12, "s"); /* on its GPUs, waiting for circuits */
      CHECK_REL(r[i].jobs[0].setup_s, d, 1e-12, "s");
      CHECK_REL(r[i].jobs[1].setup_s, 100 * T + 2 * d, 1e-9, "s"); /* waited, then d */
      CHECK_REL(r[i].jobs[1].mean_iter_s, T, 1e-9, "s");
      CHECK(r[2].jct_mean_s < r[i].jct_mean_s);
    }
  }
  for (int i = 0; i < n; i++) fs_sched_result_free(&r[i]);
  fs_sched_trace_free(t);
}

/* Two one-server ToRs. A (one server, 100 iterations) and B (both
 * servers) and C (one server, 50 iterations) arrive at 0. List
 * scheduling starts C beside A (B does not fit), B when both end (100 T);
 * FIFO and random (arrival order, the head blocks) start C only after B.
 * Random placement draws the same servers every run. */
TEST(test_sched_ls_random_by_hand) {
  const char *trace =
      "{\"cluster\":{\"topology\":{\"type\":\"leafspine\",\"leaves\":2,\"spines\":1,"
      "\"hosts_per_leaf\":8,\"host_gbps\":400,\"fabric_gbps\":400},\"hardware\":{"
      "\"gpu_tflops\":989,\"mfu_matmul\":0.5,\"hbm_gib\":80,\"gpus_per_node\":8,"
      "\"nvlink_gbps\":3600,\"nic_gbps\":400}},\"jobs\":["
      "{\"id\":\"A\",\"arrival_s\":0,\"model\":\"gpt-350m\",\"gpus\":8,\"iterations\":100},"
      "{\"id\":\"B\",\"arrival_s\":0,\"model\":\"gpt-350m\",\"gpus\":16,\"iterations\":20},"
      "{\"id\":\"C\",\"arrival_s\":0,\"model\":\"gpt-350m\",\"gpus\":8,\"iterations\":50}]}";
  fs_sched_trace *t = parse(trace);
  if (!t) return;
  fs_sched_result l, f, r1, r2;
  if (run(t, FS_SCHED_LS, 0, &l)) {
    fs_sched_trace_free(t);
    return;
  }
  if (!run(t, FS_SCHED_FIFO, 0, &f)) {
    double T = l.jobs[0].iso_iter_s, TB = l.jobs[1].iso_iter_s;
    CHECK_REL(l.jobs[2].start_s, 0, 1e-12, "s");
    CHECK_EQ_INT(l.jobs[2].first_server, 1);
    CHECK_REL(l.jobs[1].start_s, 100 * T, 1e-9, "s");
    CHECK_REL(l.jobs[1].end_s, 100 * T + 20 * TB, 1e-9, "s");
    CHECK_REL(f.jobs[2].start_s, 100 * T + 20 * TB, 1e-9, "s");
    CHECK(l.jct_mean_s < f.jct_mean_s);
    if (!run(t, FS_SCHED_RANDOM, 0, &r1)) {
      if (!run(t, FS_SCHED_RANDOM, 0, &r2)) {
        for (int j = 0; j < 3; j++) {
          CHECK_EQ_INT(r1.jobs[j].first_server, r2.jobs[j].first_server);
          CHECK_REL(r1.jobs[j].end_s, f.jobs[j].end_s, 1e-9, "s"); /* no shared link here */
        }
        fs_sched_result_free(&r2);
      }
      fs_sched_result_free(&r1);
    }
    fs_sched_result_free(&f);
  }
  fs_sched_result_free(&l);
  fs_sched_trace_free(t);
}

/* The papers' settings (examples/jobs-yu2022.json, jobs-liu2020.json;
 * docs/model-sched.md, "The papers' headline shapes"): the signs of the
 * headline shapes. yu-bco's makespan and mean JCT are below first fit's,
 * list scheduling's and random placement's, with a contention bound
 * searched (0 on this trace); liu-ocs's mean JCT is below Liu's SJF and
 * FIFO (Baraat) baselines on circuits held by one job at a time. */
TEST(test_sched_papers_shapes) {
  fs_sched_trace *y = NULL, *l = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_sched_trace_load("examples/jobs-yu2022.json", &y, &err), &err);
  CHECK_OK(fs_sched_trace_load("examples/jobs-liu2020.json", &l, &err), &err);
  fs_sched_result r[4];
  const fs_sched_kind yk[4] = {FS_SCHED_YU_BCO, FS_SCHED_OBLIVIOUS, FS_SCHED_LS, FS_SCHED_RANDOM};
  int n = 0;
  for (; y && n < 4; n++)
    if (run(y, yk[n], 0, &r[n])) break;
  if (n == 4) {
    CHECK_EQ_INT(r[0].bound, 0);
    for (int i = 1; i < 4; i++) {
      CHECK(r[0].makespan_s < 0.95 * r[i].makespan_s);
      CHECK(r[0].jct_mean_s < 0.8 * r[i].jct_mean_s);
    }
  }
  for (int i = 0; i < n; i++) fs_sched_result_free(&r[i]);
  const fs_sched_kind lk[3] = {FS_SCHED_LIU_OCS, FS_SCHED_LIU_SJF, FS_SCHED_LIU_FIFO};
  n = 0;
  for (; l && n < 3; n++)
    if (run(l, lk[n], 0, &r[n])) break;
  if (n == 3) {
    CHECK_EQ_INT(r[1].bound, -1);
    for (int i = 1; i < 3; i++) CHECK(r[0].jct_mean_s < 0.9 * r[i].jct_mean_s);
  }
  for (int i = 0; i < n; i++) fs_sched_result_free(&r[i]);
  fs_sched_trace_free(y);
  fs_sched_trace_free(l);
}

static fs_sched_trace *generated(int32_t n, int64_t gpus, uint64_t seed, double load) {
  fs_sched_gen_opts g = {n, gpus, seed, load, 0};
  fs_sched_trace *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_sched_generate(&g, &t, &err), &err);
  return t;
}

/* Re-rating only the jobs a change reaches gives the numbers re-rating
 * every running job gives, bit for bit, under every scheduler. */
TEST(test_sched_incremental_equals_full) {
  fs_sched_trace *t = generated(300, 512, 3, 6);
  if (!t) return;
  for (int k = 0; k < FS_SCHED_N; k++) {
    fs_sched_result a, b;
    if (run(t, (fs_sched_kind)k, 0, &a)) break;
    if (run(t, (fs_sched_kind)k, 1, &b)) {
      fs_sched_result_free(&a);
      break;
    }
    int same = 1;
    for (int32_t j = 0; j < t->n_jobs; j++)
      same &= a.jobs[j].end_s == b.jobs[j].end_s && a.jobs[j].start_s == b.jobs[j].start_s;
    if (!same) test_fail(__FILE__, __LINE__, "%s: incremental and full re-rates differ",
                         fs_sched_kind_name((fs_sched_kind)k));
    CHECK(a.rerated_jobs <= b.rerated_jobs);
    fs_sched_result_free(&a);
    fs_sched_result_free(&b);
  }
  /* and under the average model */
  fs_sched_result a, b;
  if (!run_c(t, FS_SCHED_OBLIVIOUS, 0, FS_CONTENTION_AVERAGE, &a)) {
    if (!run_c(t, FS_SCHED_OBLIVIOUS, 1, FS_CONTENTION_AVERAGE, &b)) {
      for (int32_t j = 0; j < t->n_jobs; j++) CHECK(a.jobs[j].end_s == b.jobs[j].end_s);
      fs_sched_result_free(&b);
    }
    fs_sched_result_free(&a);
  }
  fs_sched_trace_free(t);
}

/* The generator draws what docs/model-sched.md says: half the jobs on one
 * GPU, sizes powers of two up to a quarter of the cluster, arrivals in
 * order at the offered load (GPU-seconds offered over the window of
 * arrivals = load x GPUs, to the sampling noise of the last gap). */
TEST(test_sched_generator_shape) {
  fs_sched_trace *t = generated(2000, 1024, 11, 2);
  if (!t) return;
  int32_t ones = 0;
  double work = 0;
  for (int32_t i = 0; i < t->n_jobs; i++) {
    const fs_sched_job *j = &t->jobs[i];
    ones += j->gpus == 1;
    CHECK(j->gpus >= 1 && j->gpus <= 256 && (j->gpus & (j->gpus - 1)) == 0);
    CHECK(i == 0 || j->arrival_s >= t->jobs[i - 1].arrival_s);
  }
  CHECK(ones > 900 && ones < 1100); /* 0.5 of 2000, +- 4.5 sigma */
  fs_sched_result r;
  if (!run(t, FS_SCHED_FIFO, 0, &r)) {
    for (int32_t i = 0; i < t->n_jobs; i++)
      work += (double)t->jobs[i].gpus * (double)t->jobs[i].iterations * r.jobs[i].iso_iter_s;
    double window = t->jobs[t->n_jobs - 1].arrival_s - t->jobs[0].arrival_s;
    CHECK_REL(work / window / 1024.0, 2.0, 0.1, "");
    fs_sched_result_free(&r);
  }
  fs_sched_trace_free(t);
}

/* The report's bytes of fn(f, t, r, n) in a malloc'd string. */
static char *json_of(const fs_sched_trace *t, const fs_sched_result *r) {
  FILE *f = tmpfile();
  if (!f) return NULL;
  if (r)
    fs_report_sched_csv(f, t, r, 1);
  else
    fs_report_sched_trace_json(f, t);
  long n = ftell(f);
  char *s = calloc((size_t)n + 1, 1);
  rewind(f);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) s[0] = 0;
  fclose(f);
  return s;
}

/* Same seed, same trace; same trace, same results (the CSV carries no
 * wall time). */
TEST(test_sched_deterministic) {
  fs_sched_trace *a = generated(200, 1024, 7, 4), *b = generated(200, 1024, 7, 4);
  fs_sched_trace *c = generated(200, 1024, 8, 4);
  if (a && b && c) {
    char *ta = json_of(a, NULL), *tb = json_of(b, NULL), *tc = json_of(c, NULL);
    CHECK(ta && tb && tc && strcmp(ta, tb) == 0 && strcmp(ta, tc) != 0);
    free(ta);
    free(tb);
    free(tc);
  }
  for (int k = 0; a && k < FS_SCHED_N; k++) {
    fs_sched_result r1, r2;
    if (run(a, (fs_sched_kind)k, 0, &r1)) break;
    if (run(a, (fs_sched_kind)k, 0, &r2)) {
      fs_sched_result_free(&r1);
      break;
    }
    char *x = json_of(a, &r1), *y = json_of(a, &r2);
    CHECK(x && y && strcmp(x, y) == 0);
    free(x);
    free(y);
    fs_sched_result_free(&r1);
    fs_sched_result_free(&r2);
  }
  fs_sched_trace_free(a);
  fs_sched_trace_free(b);
  fs_sched_trace_free(c);
}

/* The page: every scheduler's timeline, the same bytes twice. */
TEST(test_sched_html_report) {
  fs_sched_trace *t = parse(hand_trace);
  fs_sched_result r[2];
  if (!t || run(t, FS_SCHED_FIFO, 0, &r[0])) {
    fs_sched_trace_free(t);
    return;
  }
  if (run(t, FS_SCHED_SJF, 0, &r[1])) {
    fs_sched_result_free(&r[0]);
    fs_sched_trace_free(t);
    return;
  }
  char *page[2] = {NULL, NULL};
  for (int k = 0; k < 2; k++) {
    FILE *f = tmpfile();
    if (!f) break;
    CHECK_EQ_INT(fs_report_sched_html(f, t, r, 2), 0);
    long n = ftell(f);
    page[k] = calloc((size_t)n + 1, 1);
    rewind(f);
    if (page[k] && fread(page[k], 1, (size_t)n, f) != (size_t)n) page[k][0] = 0;
    fclose(f);
  }
  CHECK(page[0] && page[1] && strcmp(page[0], page[1]) == 0);
  CHECK(page[0] && strstr(page[0], "fifo: the jobs over time") &&
        strstr(page[0], "sjf: the jobs over time") && strstr(page[0], "D (8 GPUs)"));
  free(page[0]);
  free(page[1]);
  fs_sched_result_free(&r[0]);
  fs_sched_result_free(&r[1]);
  fs_sched_trace_free(t);
}

/* A sweep point of kind jobs is what the scheduler gives on the trace the
 * point's "generate" makes. */
TEST(test_sched_sweep_points_are_jobs) {
  const char *path = "/tmp/fabricsim-test-sweep-jobs.json";
  CHECK_EQ_INT(test_write_file(path, "{\"command\": \"jobs\", \"base\": {\"generate\": "
                                     "{\"jobs\": 60, \"gpus\": 512, \"seed\": 5, \"load\": 4}}, "
                                     "\"axes\": {\"scheduler\": [\"fifo\", \"yu-bco\"]}}"),
               0);
  fs_sweep *sw = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_sweep_load(path, &sw, &err), &err);
  if (!sw) return;
  CHECK_EQ_INT(fs_sweep_kind_of(sw), FS_SWEEP_JOBS);
  CHECK_EQ_INT(fs_sweep_n_points(sw), 2);
  fs_sched_trace *t = generated(60, 512, 5, 4);
  for (int32_t p = 0; t && p < 2; p++) {
    fs_sweep_result pr;
    fs_sched_result r;
    CHECK_EQ_INT(fs_sweep_run_point(sw, p, &pr), 0);
    CHECK(pr.ok);
    if (run(t, p ? FS_SCHED_YU_BCO : FS_SCHED_FIFO, 0, &r)) break;
    CHECK(pr.fig[0] == r.jct_mean_s && pr.fig[3] == r.queue_p99_s && pr.fig[6] == r.gpu_util);
    fs_sched_result_free(&r);
  }
  fs_sched_trace_free(t);
  fs_sweep_free(sw);
  remove(path);
}

static void bad(const char *text, const char *want1, const char *want2) {
  fs_sched_trace *t = NULL;
  fs_err err = {0, ""};
  int rc = fs_sched_trace_parse(text, strlen(text), "t.json", &t, &err);
  CHECK_EQ_INT(rc, FS_EINVAL);
  if (!strstr(err.msg, want1) || !strstr(err.msg, want2))
    test_fail(__FILE__, __LINE__, "expected '%s' and '%s' in: %s", want1, want2, err.msg);
  fs_sched_trace_free(t);
}

TEST(test_sched_bad_traces) {
  char text[2048];
  snprintf(text, sizeof(text),
           "{\"cluster\":{" SHARED_CLUSTER "},\"jobs\":[{\"arrival_s\":0,\"model\":\"gpt-350m\","
           "\"gpus\":8,\"iterations\":1},{\"arrival_s\":0,\"model\":\"gpt-350m\",\"gpus\":96,"
           "\"iterations\":1}]}");
  bad(text, "t.json: $.jobs[1].gpus", "96"); /* larger than the cluster's 48 */
  snprintf(text, sizeof(text),
           "{\"cluster\":{" SHARED_CLUSTER "},\"jobs\":[{\"arrival_s\":0,\"model\":\"gpt-9\","
           "\"gpus\":8,\"iterations\":1}]}");
  bad(text, "$.jobs[0].model", "gpt-9");
  snprintf(text, sizeof(text),
           "{\"cluster\":{" SHARED_CLUSTER "},\"jobs\":[{\"arrival_s\":0,\"model\":\"gpt-350m\","
           "\"parallelism\":{\"tp\":3},\"gpus\":24,\"iterations\":1}]}");
  bad(text, "$.jobs[0].parallelism.tp", "3");
  snprintf(text, sizeof(text),
           "{\"cluster\":{" SHARED_CLUSTER "},\"jobs\":[{\"arrival_s\":-1,\"model\":\"gpt-350m\","
           "\"gpus\":8,\"iterations\":1}]}");
  bad(text, "$.jobs[0].arrival_s", "-1");
  snprintf(text, sizeof(text),
           "{\"cluster\":{" SHARED_CLUSTER "},\"jobs\":[{\"arrival_s\":0,\"model\":\"gpt-350m\","
           "\"gpus\":12,\"iterations\":1}]}");
  bad(text, "$.jobs[0].gpus", "12");
  bad("{\"cluster\":{\"topology\":{\"type\":\"leafspine\",\"leaves\":0}},\"jobs\":[]}",
      "$.cluster", "");
  snprintf(text, sizeof(text), "{\"cluster\":{" SHARED_CLUSTER ",\"gpus\":3},\"jobs\":[]}");
  bad(text, "$.cluster", "gpus");
}
