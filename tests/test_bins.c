/* Per-link bytes per time bin (fs_sim_opts.link_bins): a closed form on one
 * link, then on a real scenario with links left out of the rating: bins sum
 * to each link's bytes, and the results are bit-identical with bins off. */
#include <math.h>
#include <string.h>

#include "fabricsim/route.h"
#include "fabricsim/scenario.h"
#include "fabricsim/sim.h"
#include "fabricsim/train.h"
#include "test.h"

TEST(test_bins_one_flow_closed_form) {
  fs_topo *t = NULL;
  fs_router *r = NULL;
  fs_sim *s = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_star(2, 100, 1000, &t, &err), &err);
  CHECK_OK(fs_router_new(t, &r, &err), &err);
  CHECK_OK(fs_sim_new(t, &s, &err), &err);
  fs_route route;
  fs_route_init(&route);
  CHECK_OK(fs_route_shortest(r, 0, 1, &route, &err), &err);
  fs_router_free(r); /* the route is all it was for */
  double B = 1e6; /* 80 us at 100 Gb/s, starting at 10 us */
  CHECK(fs_sim_add_flow(s, 0, 1, B, 10000, &route, &err) >= 0);
  fs_sim_opts o = {0};
  o.link_bins = 16;
  CHECK_OK(fs_sim_run(s, &o, &err), &err);
  fs_sim_link_bins lb;
  CHECK_EQ_INT(fs_sim_get_link_bins(s, &lb), 0);
  CHECK(lb.n_bins >= 8 && lb.n_bins <= 16);
  CHECK(lb.n_bins * lb.width_s >= fs_sim_makespan_s(s));
  for (int32_t l = 0; l < route.n; l++) {
    double sum = 0;
    for (int32_t b = 0; b < lb.n_bins; b++) {
      double lo = fmax(b * lb.width_s, 10e-6), hi = fmin((b + 1) * lb.width_s, 90e-6);
      double want = hi > lo ? (hi - lo) * 100e9 / 8 : 0;
      double got = lb.bytes[(size_t)b * lb.stride + route.links[l]];
      CHECK(fabs(got - want) <= 1e-6 * B);
      sum += got;
    }
    CHECK_REL(sum, B, 1e-12, "B");
  }
  fs_route_free(&route);
  fs_sim_free(s);
  fs_topo_free(t);
}

TEST(test_bins_off_by_default_and_bad_count) {
  fs_topo *t = NULL;
  fs_sim *s = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_star(2, 100, 1000, &t, &err), &err);
  CHECK_OK(fs_sim_new(t, &s, &err), &err);
  CHECK(fs_sim_add_task(s, 0, 0, 1000, &err) >= 0);
  CHECK_OK(fs_sim_run(s, NULL, &err), &err);
  fs_sim_link_bins lb;
  CHECK_EQ_INT(fs_sim_get_link_bins(s, &lb), FS_EINVAL);
  fs_sim_free(s);
  CHECK_OK(fs_sim_new(t, &s, &err), &err);
  fs_sim_opts o = {0};
  o.link_bins = -1;
  CHECK_EQ_INT(fs_sim_run(s, &o, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "link_bins") != NULL);
  fs_sim_free(s);
  fs_topo_free(t);
}

static fs_scenario *run_demo(int32_t bins) {
  fs_scenario *sc = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_scenario_load("examples/demo.json", &sc, &err), &err);
  fs_sim_opts o = {0};
  o.link_bins = bins;
  CHECK_OK(fs_scenario_run(sc, &o, &err), &err);
  return sc;
}

TEST(test_bins_sum_to_link_bytes) {
  fs_scenario *off = run_demo(0), *on = run_demo(50);
  const fs_sim *a = off->sim, *b = on->sim;
  CHECK_EQ_INT(fs_sim_n_items(a), fs_sim_n_items(b));
  for (int32_t i = 0; i < fs_sim_n_items(a); i++) {
    CHECK(fs_sim_start_s(a, i) == fs_sim_start_s(b, i));  /* bit-identical */
    CHECK(fs_sim_finish_s(a, i) == fs_sim_finish_s(b, i));
  }
  fs_sim_link_bins lb;
  CHECK_EQ_INT(fs_sim_get_link_bins(b, &lb), 0);
  CHECK(lb.n_bins >= 25 && lb.n_bins <= 50);
  const fs_sim_link_stats *ls = fs_sim_links(b);
  int32_t used = 0;
  for (int32_t l = 0; l < on->topo->n_links; l++) {
    double sum = 0, cap = on->topo->links[l].capacity_bps / 8 * lb.width_s;
    for (int32_t k = 0; k < lb.n_bins; k++) {
      double x = lb.bytes[(size_t)k * lb.stride + l];
      CHECK(x >= 0 && x <= cap * (1 + 1e-9)); /* never above capacity */
      sum += x;
    }
    CHECK(fabs(sum - ls[l].bytes) <= 1e-9 * (ls[l].bytes + 1));
    CHECK(ls[l].bytes == fs_sim_links(a)[l].bytes);
    used += ls[l].bytes > 0;
  }
  CHECK(used > 0);
  fs_scenario_free(off);
  fs_scenario_free(on);
}

/* A training job whose rating leaves links out (prune.c): its left-out
 * links are binned too, and bins change nothing in the results. */
static fs_train *run_job(fs_job *job, int32_t bins, fs_train_result *res) {
  fs_sim_opts so = {0};
  so.link_bins = bins;
  fs_train_opts o = {0};
  o.no_compare = 1;
  o.sim = &so;
  fs_train *tr = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_train_new(job, &o, &tr, &err), &err);
  CHECK_OK(fs_train_run(tr, res, &err), &err);
  return tr;
}

TEST(test_bins_include_pruned_links) {
  fs_job *job = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_job_load("examples/gpt3-175b-railopt.json", &job, &err), &err);
  fs_train_result ra, rb;
  fs_train *a = run_job(job, 0, &ra), *b = run_job(job, 64, &rb);
  CHECK(rb.counters.links_left_out > 0);
  CHECK(ra.iter_s == rb.iter_s); /* bit-identical */
  CHECK(ra.kind[FS_PAR_DP].exposed_s == rb.kind[FS_PAR_DP].exposed_s);
  const fs_sim *s = fs_train_sim(b);
  fs_sim_link_bins lb;
  CHECK_EQ_INT(fs_sim_get_link_bins(s, &lb), 0);
  const fs_sim_link_stats *ls = fs_sim_links(s);
  int32_t binned = 0;
  for (int32_t l = 0; l < fs_sim_topo(s)->n_links; l++) {
    double sum = 0;
    for (int32_t k = 0; k < lb.n_bins; k++) sum += lb.bytes[(size_t)k * lb.stride + l];
    CHECK(fabs(sum - ls[l].bytes) <= 1e-9 * (ls[l].bytes + 1));
    binned += sum > 0;
  }
  CHECK(binned > 0);
  fs_train_free(a);
  fs_train_free(b);
  fs_job_free(job);
}
