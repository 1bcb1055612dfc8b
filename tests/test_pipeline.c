/* Pipeline schedule tests: each order is a permutation of the device's ops;
 * run as a DAG of compute tasks with free communication, 1F1B and GPipe take
 * (m + p - 1)(tf + tb) and interleaved m (tf + tb) + (p - 1)(tf + tb) / v,
 * so the bubble fraction is (p-1)/(m+p-1), and (p-1)/(v m + p - 1). */
#include <stdlib.h>
#include <string.h>

#include "fabricsim/pipeline.h"
#include "fabricsim/sim.h"
#include "test.h"

/* Simulates the schedule on p devices (hosts of a star) with forward time
 * tf and backward time tb per stage (split evenly over v chunks). */
static double run_schedule(fs_pipe_schedule sch, int32_t p, int32_t m, int32_t v, double tf,
                           double tb) {
  fs_err err = {0, ""};
  fs_topo *t = NULL;
  fs_sim *s = NULL;
  fs_topo_star(p, 100, 0, &t, &err);
  fs_sim_new(t, &s, &err);
  int32_t n = 2 * m * v, V = p * v;
  /* item of (backward, mb, virtual stage) */
  int32_t *id = malloc((size_t)2 * m * V * sizeof(int32_t));
  fs_pipe_op *ops = malloc((size_t)n * sizeof(fs_pipe_op));
  int32_t **order = malloc((size_t)p * sizeof(int32_t *));
  for (int32_t d = 0; d < p; d++) {
    CHECK_OK(fs_pipe_order(sch, p, m, v, d, ops, &err), &err);
    order[d] = malloc((size_t)n * sizeof(int32_t));
    for (int32_t i = 0; i < n; i++) {
      int32_t k = ops[i].chunk * p + d;
      double dur = (ops[i].backward ? tb : tf) / v;
      int32_t it = fs_sim_add_task_s(s, d, 0, dur, &err);
      id[(ops[i].backward * m + ops[i].mb) * V + k] = it;
      order[d][i] = it;
      if (i) fs_sim_add_dep(s, order[d][i - 1], it, &err);
    }
  }
  for (int32_t mb = 0; mb < m; mb++)
    for (int32_t k = 0; k < V; k++) {
      int32_t fwd = id[mb * V + k], bwd = id[(m + mb) * V + k];
      if (k > 0) fs_sim_add_dep(s, id[mb * V + k - 1], fwd, &err);
      if (k < V - 1) fs_sim_add_dep(s, id[(m + mb) * V + k + 1], bwd, &err);
      fs_sim_add_dep(s, fwd, bwd, &err);
    }
  double makespan = -1;
  if (fs_sim_run(s, NULL, &err) == 0) makespan = fs_sim_makespan_s(s);
  else test_fail(__FILE__, __LINE__, "%s p=%d m=%d v=%d: %s", fs_pipe_schedule_name(sch), p, m,
                 v, err.msg);
  for (int32_t d = 0; d < p; d++) free(order[d]);
  free(order);
  free(ops);
  free(id);
  fs_sim_free(s);
  fs_topo_free(t);
  return makespan;
}

TEST(test_pipeline_orders_are_permutations) {
  fs_pipe_schedule all[] = {FS_PIPE_1F1B, FS_PIPE_INTERLEAVED, FS_PIPE_GPIPE};
  for (int si = 0; si < 3; si++)
    for (int32_t p = 1; p <= 8; p++)
      for (int32_t m = p; m <= 3 * p; m += p)
        for (int32_t v = 1; v <= 3; v++) {
          fs_err err = {0, ""};
          if (fs_pipe_check(all[si], p, m, v, &err)) continue;
          fs_pipe_op ops[512];
          for (int32_t d = 0; d < p; d++) {
            CHECK_OK(fs_pipe_order(all[si], p, m, v, d, ops, &err), &err);
            /* each (direction, mb, chunk) exactly once; backward after forward */
            unsigned char seen[2][64][4];
            memset(seen, 0, sizeof(seen));
            for (int32_t i = 0; i < 2 * m * v; i++) {
              const fs_pipe_op *o = &ops[i];
              CHECK(o->mb >= 0 && o->mb < m && o->chunk >= 0 && o->chunk < v);
              CHECK(!seen[o->backward][o->mb][o->chunk]++);
              if (o->backward) CHECK(seen[0][o->mb][o->chunk]);
            }
          }
        }
}

TEST(test_pipeline_1f1b_and_gpipe_bubble) {
  double tf = 1e-3, tb = 2e-3;
  for (int32_t p = 1; p <= 8; p++)
    for (int32_t m = 1; m <= 12; m += 3) {
      double want = (m + p - 1) * (tf + tb);
      double t1 = run_schedule(FS_PIPE_1F1B, p, m, 1, tf, tb);
      double tg = run_schedule(FS_PIPE_GPIPE, p, m, 1, tf, tb);
      CHECK_REL(t1, want, 1e-9, "s");
      CHECK_REL(tg, want, 1e-9, "s");
      double bubble = (t1 - m * (tf + tb)) / t1;
      CHECK_REL(bubble + 1, fs_pipe_bubble_fraction(FS_PIPE_1F1B, p, m, 1) + 1, 1e-9, "");
    }
}

TEST(test_pipeline_interleaved_shrinks_bubble_by_v) {
  double tf = 1e-3, tb = 2e-3;
  for (int32_t p = 2; p <= 8; p *= 2)
    for (int32_t v = 2; v <= 4; v++)
      for (int32_t m = p; m <= 4 * p; m += p) {
        double t = run_schedule(FS_PIPE_INTERLEAVED, p, m, v, tf, tb);
        double want = m * (tf + tb) + (p - 1) * (tf + tb) / v;
        CHECK_REL(t, want, 1e-9, "s");
        double bubble = (t - m * (tf + tb)) / t;
        CHECK_REL(bubble + 1, fs_pipe_bubble_fraction(FS_PIPE_INTERLEAVED, p, m, v) + 1, 1e-9,
                  "");
      }
}

TEST(test_pipeline_activations_in_flight) {
  fs_pipe_op ops[256];
  fs_err err = {0, ""};
  /* 1F1B: stage s holds at most min(p - s, m) micro-batches; GPipe all m. */
  for (int32_t s = 0; s < 4; s++) {
    CHECK_OK(fs_pipe_order(FS_PIPE_1F1B, 4, 10, 1, s, ops, &err), &err);
    CHECK_EQ_INT(fs_pipe_max_in_flight(ops, 20), 4 - s);
    CHECK_OK(fs_pipe_order(FS_PIPE_GPIPE, 4, 10, 1, s, ops, &err), &err);
    CHECK_EQ_INT(fs_pipe_max_in_flight(ops, 20), 10);
  }
  CHECK_EQ_INT(fs_pipe_check(FS_PIPE_INTERLEAVED, 4, 6, 2, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "multiple") != NULL);
  CHECK_EQ_INT(fs_pipe_check(FS_PIPE_1F1B, 4, 6, 2, &err), FS_EINVAL);
  CHECK_EQ_INT(fs_pipe_check(FS_PIPE_INTERLEAVED, 4, 8, 1, &err), FS_EINVAL);
}
