/* Pipeline schedule tests: each order is a permutation of the device's ops;
 * run as a DAG of compute tasks with free communication, 1F1B and GPipe take
 * (m + p - 1)(tf + tb) and interleaved m (tf + tb) + (p - 1)(tf + tb) / v,
 * so the bubble fraction is (p-1)/(m+p-1), and (p-1)/(v m + p - 1); ZB-H1
 * with the backward split in B (tb) and W (tw) takes m (tf + tb + tw) +
 * (p - 1)(tf + tb - tw) when tw <= tf and m >= p (Qi et al. 2024). */
#include <stdlib.h>
#include <string.h>

#include "fabricsim/pipeline.h"
#include "fabricsim/sim.h"
#include "test.h"

/* Simulates the schedule on p devices (hosts of a star) with forward time
 * tf and backward time tb + tw per stage (split evenly over v chunks): a
 * split backward's B takes tb, its W tw. */
static double run_schedule_w(fs_pipe_schedule sch, int32_t p, int32_t m, int32_t v, double tf,
                             double tb, double tw) {
  fs_err err = {0, ""};
  fs_topo *t = NULL;
  fs_sim *s = NULL;
  fs_topo_star(p, 100, 0, &t, &err);
  fs_sim_new(t, &s, &err);
  int32_t n = fs_pipe_ops_per_device(sch, m, v), V = p * v;
  /* item of (forward, backward or B, W; mb, virtual stage) */
  int32_t *id = malloc((size_t)3 * m * V * sizeof(int32_t));
  fs_pipe_op *ops = malloc((size_t)n * sizeof(fs_pipe_op));
  int32_t **order = malloc((size_t)p * sizeof(int32_t *));
  for (int32_t d = 0; d < p; d++) {
    CHECK_OK(fs_pipe_order(sch, p, m, v, d, ops, &err), &err);
    order[d] = malloc((size_t)n * sizeof(int32_t));
    for (int32_t i = 0; i < n; i++) {
      int32_t k = ops[i].chunk * p + d, w = ops[i].part == FS_PIPE_WEIGHT_GRAD;
      double dur = !ops[i].backward                     ? tf
                   : ops[i].part == FS_PIPE_INPUT_GRAD ? tb
                   : w                                 ? tw
                                                       : tb + tw;
      int32_t it = fs_sim_add_task_s(s, d, 0, dur / v, &err);
      id[((ops[i].backward + w) * m + ops[i].mb) * V + k] = it;
      order[d][i] = it;
      if (i) fs_sim_add_dep(s, order[d][i - 1], it, &err);
      if (w) fs_sim_add_dep(s, id[(m + ops[i].mb) * V + k], it, &err);
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

static double run_schedule(fs_pipe_schedule sch, int32_t p, int32_t m, int32_t v, double tf,
                           double tb) {
  return run_schedule_w(sch, p, m, v, tf, tb, 0);
}

TEST(test_pipeline_orders_are_permutations) {
  fs_pipe_schedule all[] = {FS_PIPE_1F1B, FS_PIPE_INTERLEAVED, FS_PIPE_GPIPE, FS_PIPE_ZBH1};
  for (int si = 0; si < 4; si++)
    for (int32_t p = 1; p <= 8; p++)
      for (int32_t m = p; m <= 3 * p; m += p)
        for (int32_t v = 1; v <= 3; v++) {
          fs_err err = {0, ""};
          if (fs_pipe_check(all[si], p, m, v, &err)) continue;
          int32_t n = fs_pipe_ops_per_device(all[si], m, v);
          CHECK_EQ_INT(n, (all[si] == FS_PIPE_ZBH1 ? 3 : 2) * m * v);
          fs_pipe_op ops[512];
          for (int32_t d = 0; d < p; d++) {
            CHECK_OK(fs_pipe_order(all[si], p, m, v, d, ops, &err), &err);
            /* each (forward, backward or B, W; mb, chunk) exactly once;
             * backward after forward, W after its B */
            unsigned char seen[3][64][4];
            memset(seen, 0, sizeof(seen));
            for (int32_t i = 0; i < n; i++) {
              const fs_pipe_op *o = &ops[i];
              int w = o->part == FS_PIPE_WEIGHT_GRAD;
              CHECK(o->mb >= 0 && o->mb < m && o->chunk >= 0 && o->chunk < v);
              CHECK(o->part == FS_PIPE_WHOLE || (all[si] == FS_PIPE_ZBH1 && o->backward));
              CHECK(!seen[o->backward + w][o->mb][o->chunk]++);
              if (o->backward) CHECK(seen[0][o->mb][o->chunk]);
              if (w) CHECK(seen[1][o->mb][o->chunk]);
            }
          }
        }
}

TEST(test_pipeline_zbh1_bubble) {
  /* Qi et al.'s ZB-H1: the bubble (p - 1)(tf + tb - tw) instead of 1F1B's
   * (p - 1)(tf + tb + tw), for tw <= tf and m >= p; with equal times a
   * third of it: (p - 1) / (3 m + p - 1) */
  double tf = 1e-3, tb = 1.2e-3;
  double tws[] = {1e-3, 0.8e-3, 0.3e-3};
  for (int32_t p = 1; p <= 8; p++)
    for (int32_t m = p; m <= 3 * p; m += p)
      for (int k = 0; k < 3; k++) {
        double tw = tws[k];
        double t = run_schedule_w(FS_PIPE_ZBH1, p, m, 1, tf, tb, tw);
        CHECK_REL(t, m * (tf + tb + tw) + (p - 1) * (tf + tb - tw), 1e-9, "s");
        double t1 = run_schedule_w(FS_PIPE_1F1B, p, m, 1, tf, tb, tw);
        CHECK_REL(t1, (m + p - 1) * (tf + tb + tw), 1e-9, "s");
      }
  for (int32_t p = 2; p <= 8; p += 3) {
    int32_t m = 2 * p;
    double t = run_schedule_w(FS_PIPE_ZBH1, p, m, 1, 1e-3, 1e-3, 1e-3);
    CHECK_REL((t - m * 3e-3) / t + 1, fs_pipe_bubble_fraction(FS_PIPE_ZBH1, p, m, 1) + 1, 1e-9,
              "");
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
  /* ZB-H1: every stage holds p (each forward's inputs until its W) */
  for (int32_t s = 0; s < 4; s++) {
    CHECK_OK(fs_pipe_order(FS_PIPE_ZBH1, 4, 10, 1, s, ops, &err), &err);
    CHECK_EQ_INT(fs_pipe_max_in_flight(ops, 30), 4);
    CHECK_OK(fs_pipe_order(FS_PIPE_ZBH1, 4, 2, 1, s, ops, &err), &err);
    CHECK_EQ_INT(fs_pipe_max_in_flight(ops, 6), 2);
  }
  CHECK_EQ_INT(fs_pipe_check(FS_PIPE_ZBH1, 4, 8, 2, &err), FS_EINVAL);
  fs_pipe_schedule zb;
  CHECK_EQ_INT(fs_pipe_schedule_parse("zb-h1", &zb), 0);
  CHECK_EQ_INT(zb, FS_PIPE_ZBH1);
  CHECK(strcmp(fs_pipe_schedule_name(FS_PIPE_ZBH1), "zb-h1") == 0);
  CHECK_EQ_INT(fs_pipe_check(FS_PIPE_INTERLEAVED, 4, 6, 2, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "multiple") != NULL);
  CHECK_EQ_INT(fs_pipe_check(FS_PIPE_1F1B, 4, 6, 2, &err), FS_EINVAL);
  CHECK_EQ_INT(fs_pipe_check(FS_PIPE_INTERLEAVED, 4, 8, 1, &err), FS_EINVAL);
}
