/* Training-iteration tests: with free communication the iteration is the
 * compute schedule (an independent longest-path evaluation of the pipeline
 * DAG agrees, and the 1F1B closed form holds); the data-parallel all-reduce
 * moves 2(d-1)/d of a GPU's gradient bytes; the NIC speed changes exposed
 * data-parallel time and nothing of compute. */
#include <stdlib.h>
#include <string.h>

#include "fabricsim/train.h"
#include "test.h"
#include "train_harness.h"

/* A small GPT job: 8 layers, hidden 1024, pp stages, dp replicas, tp 2, on
 * a star of tp*pp*dp hosts at nic Gb/s. */
static fs_job *small_job_z(int pp, int dp, const char *schedule, int v, int mb, double nic,
                           const char *dp_algo, int zero) {
  char text[2048];
  snprintf(text, sizeof(text),
           "{\"model\": {\"layers\": 8, \"hidden\": 1024, \"heads\": 16, \"seq_len\": 1024,"
           " \"vocab\": 32000},"
           " \"training\": {\"global_batch\": %d, \"micro_batch\": 1},"
           " \"parallelism\": {\"tp\": 2, \"pp\": %d, \"dp\": %d, \"schedule\": \"%s\","
           " \"virtual_stages\": %d, \"zero\": %d, \"algorithms\": {\"dp\": \"%s\"}},"
           " \"hardware\": {\"gpu_tflops\": 100, \"hbm_gib\": 80, \"gpus_per_node\": 2,"
           " \"nvlink_gbps\": 1000},"
           " \"topology\": {\"type\": \"star\", \"hosts\": %d, \"gbps\": %g, \"latency_ns\": 500}}",
           mb * dp, pp, dp, schedule, v, zero, dp_algo, 2 * pp * dp, nic);
  return test_parse_job(text);
}

static fs_job *small_job(int pp, int dp, const char *schedule, int v, int mb, double nic,
                         const char *dp_algo) {
  return small_job_z(pp, dp, schedule, v, mb, nic, dp_algo, 0);
}

static int run_job(const fs_job *job, int free_comm, fs_train_result *r) {
  fs_train_opts o = {.free_comm = free_comm};
  return test_train_run(job, &o, r);
}

/* Longest path through the pipeline DAG (device order, forward chain,
 * backward chain, forward before backward, a split backward's W after its
 * B) by relaxation in a loop until stable: independent of the engine. */
static double critical_path(const fs_job *job) {
  int32_t p = (int32_t)job->par.pp, v = (int32_t)job->par.virtual_stages,
          m = (int32_t)fs_work_microbatches(job), V = p * v,
          n = fs_pipe_ops_per_device(job->par.schedule, m, v);
  double *fin = calloc((size_t)3 * m * V, sizeof(double));
  fs_pipe_op *ops = malloc((size_t)p * n * sizeof(fs_pipe_op));
  for (int32_t s = 0; s < p; s++) fs_pipe_order(job->par.schedule, p, m, v, s, ops + s * n, NULL);
  for (int changed = 1; changed;) {
    changed = 0;
    for (int32_t s = 0; s < p; s++) {
      double prev = 0;
      for (int32_t i = 0; i < n; i++) {
        const fs_pipe_op *o = &ops[s * n + i];
        int32_t k = o->chunk * p + s, w = o->part == FS_PIPE_WEIGHT_GRAD;
        double ready = prev;
        if (!o->backward && k > 0) ready = fmax(ready, fin[(0 * m + o->mb) * V + k - 1]);
        if (w) ready = fmax(ready, fin[(1 * m + o->mb) * V + k]);
        else if (o->backward) {
          ready = fmax(ready, fin[(0 * m + o->mb) * V + k]);
          if (k < V - 1) ready = fmax(ready, fin[(1 * m + o->mb) * V + k + 1]);
        }
        double flops = o->backward ? fs_work_chunk_flops(job, k, FS_PASS_BWD) +
                                         fs_work_chunk_flops(job, k, FS_PASS_RECOMPUTE)
                                   : fs_work_chunk_flops(job, k, FS_PASS_FWD);
        if (o->part == FS_PIPE_INPUT_GRAD) flops -= fs_work_chunk_wgrad_flops(job, k);
        if (w) flops = fs_work_chunk_wgrad_flops(job, k);
        double f = ready + fs_work_compute_s(job, flops);
        double *slot = &fin[((o->backward + w) * m + o->mb) * V + k];
        if (f > *slot + 1e-15) *slot = f, changed = 1;
        prev = *slot;
      }
    }
  }
  double T = 0;
  for (int32_t i = 0; i < 3 * m * V; i++) T = fmax(T, fin[i]);
  free(fin);
  free(ops);
  return T;
}

TEST(test_train_free_comm_is_the_compute_schedule) {
  const char *scheds[] = {"1f1b", "gpipe", "interleaved", "zb-h1"};
  for (int si = 0; si < 4; si++)
    for (int pp = 2; pp <= 4; pp += 2) {
      int v = si == 2 ? 2 : 1;
      fs_job *job = small_job(pp, 1, scheds[si], v, 8, 100, "ring");
      if (!job) continue;
      fs_train_result r;
      if (run_job(job, 1, &r) == 0) {
        CHECK_REL(r.iter_s, critical_path(job), 1e-9, "s");
        if (si == 0) {
          /* 1F1B with the last stage the slowest (it adds the logits): the
           * last stage runs its m micro-batches back to back after the
           * first forwards reach it, then gradients walk back:
           * T = (p-1)(tf + tb) + m (tf_last + tb_last); with equal stages
           * the bubble (T - m (tf + tb)) / T is (p-1)/(m+p-1). */
          double tf = fs_work_compute_s(job, fs_work_chunk_flops(job, 0, FS_PASS_FWD));
          double tb = fs_work_compute_s(job, fs_work_chunk_flops(job, 0, FS_PASS_BWD));
          double tfl = fs_work_compute_s(job, fs_work_chunk_flops(job, pp - 1, FS_PASS_FWD));
          double tbl = fs_work_compute_s(job, fs_work_chunk_flops(job, pp - 1, FS_PASS_BWD));
          CHECK_REL(r.iter_s, (pp - 1) * (tf + tb) + 8 * (tfl + tbl), 1e-9, "s");
        }
        if (si == 3) {
          /* ZB-H1 moves the weight gradients into the bubble: faster than
           * 1F1B, never below the busiest stage's work */
          fs_job *ref = small_job(pp, 1, "1f1b", 1, 8, 100, "ring");
          fs_train_result r1;
          if (ref && run_job(ref, 1, &r1) == 0) CHECK(r.iter_s < r1.iter_s);
          double work = 8 * fs_work_compute_s(job, fs_work_chunk_flops(job, pp - 1, FS_PASS_FWD) +
                                                       fs_work_chunk_flops(job, pp - 1, FS_PASS_BWD));
          CHECK(r.iter_s > work);
          fs_job_free(ref);
        }
      }
      fs_job_free(job);
    }
}

TEST(test_train_dp_allreduce_volume) {
  /* ZeRO 0, ring: each GPU sends 2(d-1)/d of its gradient bytes. */
  for (int dp = 2; dp <= 4; dp++) {
    fs_job *job = small_job(1, dp, "1f1b", 1, 2, 100, "ring");
    if (!job) continue;
    fs_train_result r;
    if (run_job(job, 0, &r) == 0) {
      fs_work_shard sh;
      fs_work_stage_params(job, 0, &sh);
      double grad = (double)(sh.dense + sh.expert) * (double)job->model.dtype_bytes;
      CHECK_REL(r.kind[FS_PAR_DP].wire_bytes, 2.0 * (dp - 1) / dp * grad, 1e-9, "B");
      CHECK_REL(r.kind[FS_PAR_DP].bytes, grad, 1e-9, "B");
    }
    fs_job_free(job);
  }
}

TEST(test_train_zero_stages_dp_volume) {
  /* Ring collectives, m = 3 micro-batches, per GPU and iteration:
   * ZeRO 1 reduce-scatter + all-gather once: 2(d-1)/d of the gradients;
   * ZeRO 2 a reduce-scatter per micro-batch + one all-gather: (m+1)(d-1)/d;
   * ZeRO 3 a reduce-scatter per micro-batch (its weight gathers are timed
   * apart, and slow the iteration down). The same under ZB-H1: a
   * micro-batch's gradients are reduced once, after its W. */
  int dp = 4, m = 3;
  double iter[4];
  for (int zero = 0; zero <= 7; zero++) {
    fs_job *job = small_job_z(1, dp, zero < 4 ? "1f1b" : "zb-h1", 1, m, 100, "ring", zero % 4);
    if (!job) continue;
    fs_train_result r;
    if (run_job(job, 0, &r) == 0) {
      fs_work_shard sh;
      fs_work_stage_params(job, 0, &sh);
      double grad = (double)(sh.dense + sh.expert) * (double)job->model.dtype_bytes;
      double f = (dp - 1.0) / dp;
      int z = zero % 4;
      double want = z <= 1 ? 2 * f * grad : z == 2 ? (m + 1) * f * grad : m * f * grad;
      CHECK_REL(r.kind[FS_PAR_DP].wire_bytes, want, 1e-9, "B");
      if (zero < 4) iter[zero] = r.iter_s;
    }
    fs_job_free(job);
  }
  CHECK(iter[3] > iter[1]);
}

TEST(test_train_zero3_beside_a_pipeline) {
  /* ZeRO-3 with pp 2 runs as FSDP beside a pipeline (torchtitan, Llama 3):
   * each chunk's weights gathered once per iteration, under the next
   * iteration's first forward, and its gradients reduce-scattered once:
   * per GPU 2 (d-1)/d of the stage's gradient bytes, not the (3m)(d-1)/d
   * of gathers before every op; the weights and gradients held whole. */
  int dp = 4, m = 3;
  fs_job *z3 = small_job_z(2, dp, "1f1b", 1, m, 100, "ring", 3);
  fs_job *z1 = small_job_z(2, dp, "1f1b", 1, m, 100, "ring", 1);
  if (z3 && z1) {
    CHECK(z3->par.overlap_param_gather && !z1->par.overlap_param_gather);
    CHECK_EQ_INT(fs_work_zero_stage(z3), 1);
    fs_train_result r3, r1;
    fs_train_opts o = {0};
    if (test_train_run(z3, &o, &r3) == 0 && test_train_run(z1, &o, &r1) == 0) {
      fs_work_shard sh;
      fs_work_stage_params(z3, 0, &sh);
      double grad = (double)(sh.dense + sh.expert) * (double)z3->model.dtype_bytes;
      CHECK_REL(r3.kind[FS_PAR_DP].wire_bytes, 2.0 * (dp - 1) / dp * grad, 1e-9, "B");
      /* the gathers hide under the next iteration's forward: faster than
       * ZeRO-1 gathering after the step */
      CHECK(r3.iter_s < r1.iter_s);
    }
    fs_work_mem a, b;
    fs_work_memory(z3, 0, &a);
    fs_work_memory(z1, 0, &b);
    CHECK_REL(a.total_bytes, b.total_bytes, 0, "B");
  }
  fs_job_free(z3);
  fs_job_free(z1);
}

TEST(test_train_nic_speed_changes_only_communication) {
  fs_train_result slow, fast;
  fs_job *a = small_job(2, 2, "1f1b", 1, 4, 25, "ring");
  fs_job *b = small_job(2, 2, "1f1b", 1, 4, 400, "ring");
  if (a && b && run_job(a, 0, &slow) == 0 && run_job(b, 0, &fast) == 0) {
    CHECK_REL(slow.compute_s, fast.compute_s, 1e-12, "s");
    CHECK_REL(slow.kind[FS_PAR_TP].exposed_s, fast.kind[FS_PAR_TP].exposed_s, 1e-12, "s");
    CHECK_REL(slow.bubble_s, fast.bubble_s, 1e-12, "s");
    CHECK(slow.kind[FS_PAR_DP].exposed_s > fast.kind[FS_PAR_DP].exposed_s);
    CHECK(slow.iter_s > fast.iter_s);
  }
  fs_job_free(a);
  fs_job_free(b);
}
