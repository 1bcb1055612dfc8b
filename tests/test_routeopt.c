/* Tests of the routing optimiser: the metric against hand computations,
 * the exact MILP against a brute force over every assignment, greedy on
 * permutations of a 2-tier Clos (non-blocking optimum), ECMP collisions
 * against the balls-into-bins expectation, greedy against ECMP's median,
 * the jobs file and the CLI. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim/routeopt.h"
#include "fabricsim/sim.h"
#include "fabricsim/topo.h"
#include "../src/route/opt_internal.h"
#include "../src/topo/internal.h"
#include "test.h"

static fs_topo *leafspine(int32_t leaves, int32_t spines, int32_t hpl, double host_gbps,
                          double fabric_gbps) {
  fs_leafspine_params lp = {leaves, spines, hpl, host_gbps, fabric_gbps, 1, 1000};
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_leafspine(&lp, &t, &err), &err);
  return t;
}

static void add_flows_job(fs_routeopt_traffic *tr, const char *name, const int32_t *pairs,
                          int32_t n, double bytes) {
  fs_routeopt_flow fl[64];
  for (int32_t i = 0; i < n; i++) {
    fl[i].src = pairs[2 * i];
    fl[i].dst = pairs[2 * i + 1];
    fl[i].bytes = bytes;
    fl[i].phase = 0;
  }
  fs_err err = {0, ""};
  CHECK_OK(fs_routeopt_traffic_add_phase_job(tr, name, fl, n, 1, &err), &err);
}

/* Two jobs on 2 leaves x 1 spine x 3 hosts, all links 100 Gb/s. Job A:
 * h0 -> h3 and h1 -> h4 share leaf0's only uplink (50 Gb/s each); job B:
 * h2 -> h1 stays in leaf 0 (100 Gb/s). 1 GB flows: ideal 80 ms each. */
TEST(test_routeopt_metric_by_hand) {
  fs_topo *t = leafspine(2, 1, 3, 100, 100);
  fs_routeopt_traffic tr;
  fs_routeopt_traffic_init(&tr);
  int32_t a[] = {0, 3, 1, 4}, b[] = {2, 1};
  add_flows_job(&tr, "A", a, 2, 1e9);
  add_flows_job(&tr, "B", b, 1, 1e9);
  fs_routeopt_problem *p = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_routeopt_problem_new(t, &tr, &p, &err), &err);
  if (!p) goto out;
  int32_t choice[3] = {0, 0, 0};
  fs_routeopt_metric m;
  double js[2], ji[2];
  CHECK_OK(fs_routeopt_evaluate(p, choice, &m, js, ji, &err), &err);
  CHECK_REL(ji[0], 0.08, 1e-12, "s");
  CHECK_REL(ji[1], 0.08, 1e-12, "s");
  CHECK_REL(js[0], 0.16, 1e-12, "s");
  CHECK_REL(js[1], 0.08, 1e-12, "s");
  CHECK_REL(fs_routeopt_demand_bps(p, 0), 100e9, 1e-12, "bit/s");
  CHECK_REL(m.min_job_tput, 0.5, 1e-12, "");
  CHECK_REL(m.min_flow_tput, 0.5, 1e-12, "");
  /* achieved 2 GB / 0.16 s + 1 GB / 0.08 s over ideal 2 GB / 0.08 + 1 GB / 0.08 */
  CHECK_REL(m.efficiency, 2.0 / 3.0, 1e-12, "");
  /* Jain of (0.5, 1): 1.5^2 / (2 * 1.25) */
  CHECK_REL(m.jain, 0.9, 1e-12, "");
  CHECK_REL(m.max_link_load, 2.0, 1e-12, "");
  CHECK_REL(m.max_link_util, 1.0, 1e-12, "");
  CHECK_REL(m.worst_slowdown, 2.0, 1e-12, "");
  CHECK_REL(m.mean_slowdown, 1.5, 1e-12, "");
  /* the comparison: a better routing compares greater, equal equal */
  fs_routeopt_metric better = m;
  better.min_job_tput = 0.6;
  CHECK(fs_routeopt_metric_cmp(&better, &m) > 0);
  CHECK(fs_routeopt_metric_cmp(&m, &better) < 0);
  CHECK(fs_routeopt_metric_cmp(&m, &m) == 0);
  /* a choice out of range is refused */
  choice[0] = 1;
  CHECK(fs_routeopt_evaluate(p, choice, &m, NULL, NULL, &err) == FS_EINVAL);
out:
  fs_routeopt_problem_free(p);
  fs_routeopt_traffic_free(&tr);
  fs_topo_free(t);
}

/* Jobs of several phases run in lockstep sets. 2 leaves x S spines x 3
 * hosts, 100 Gb/s, 1 GB flows. Job A: phase 0 h0 -> h3 (across), phase 1
 * h0 -> h1 (inside leaf 0); job B: one phase h2 -> h4 (across). Set 0 = A0
 * + B, set 1 = A1 + B. With one spine A0 and B share the uplink in set 0
 * (160 ms each) and B runs alone in set 1 (80 ms): A takes 160 + 80 ms
 * (ideal 160), B the mean of its two sets, 120 ms (ideal 80). With two
 * spines greedy separates A0 and B: everything ideal. */
TEST(test_routeopt_multi_phase_sets) {
  for (int32_t spines = 1; spines <= 2; spines++) {
    fs_topo *t = leafspine(2, spines, 3, 100, 100);
    fs_routeopt_traffic tr;
    fs_routeopt_traffic_init(&tr);
    fs_err err = {0, ""};
    fs_routeopt_flow a0 = {0, 3, 1e9, 0}, a1 = {0, 1, 1e9, 0}, b = {2, 4, 1e9, 0};
    CHECK_OK(fs_routeopt_traffic_add_phase_job(&tr, "A", &a0, 1, 1, &err), &err);
    CHECK_OK(fs_routeopt_traffic_add_phase(&tr, &a1, 1, 1, &err), &err);
    CHECK_OK(fs_routeopt_traffic_add_phase_job(&tr, "B", &b, 1, 1, &err), &err);
    CHECK_EQ_INT(tr.jobs[0].n_phases, 2);
    CHECK_EQ_INT(tr.flows[1].phase, 1);
    fs_routeopt_problem *p = NULL;
    CHECK_OK(fs_routeopt_problem_new(t, &tr, &p, &err), &err);
    if (p) {
      int32_t choice[3] = {0, 0, 0};
      fs_routeopt_metric m;
      double js[2], ji[2];
      if (spines == 2) {
        fs_routeopt_opts o = {FS_ROUTEOPT_GREEDY, 0, 0, 0};
        CHECK_OK(fs_routeopt_optimize(p, &o, choice, NULL, &err), &err);
      }
      CHECK_OK(fs_routeopt_evaluate(p, choice, &m, js, ji, &err), &err);
      CHECK_REL(ji[0], 0.16, 1e-12, "s");
      CHECK_REL(ji[1], 0.08, 1e-12, "s");
      CHECK_REL(js[0], spines == 1 ? 0.24 : 0.16, 1e-12, "s");
      CHECK_REL(js[1], spines == 1 ? 0.12 : 0.08, 1e-12, "s");
      CHECK_REL(m.max_link_load, spines == 1 ? 2.0 : 1.0, 1e-12, "");
      CHECK_REL(m.min_job_tput, spines == 1 ? 2.0 / 3.0 : 1.0, 1e-12, "");
      CHECK_REL(m.min_flow_tput, spines == 1 ? 0.5 : 1.0, 1e-12, "");
    }
    /* a phase goes only to a job of explicit flows */
    int32_t ring[] = {0, 5};
    CHECK_OK(fs_routeopt_traffic_add_ring(&tr, "r", "allreduce", ring, 2, 1e9, &err), &err);
    CHECK_EQ_INT(fs_routeopt_traffic_add_phase(&tr, &a1, 1, 1, &err), FS_EINVAL);
    fs_routeopt_problem_free(p);
    fs_routeopt_traffic_free(&tr);
    fs_topo_free(t);
  }
}

/* A 4-rank ring all-reduce of 1 GB on a star of 100 Gb/s hosts: 2(p-1) = 6
 * steps of 250 MB at 100 Gb/s = 6 x 20 ms; all-gather half the steps. */
TEST(test_routeopt_ring_phases) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_star(8, 100, 1000, &t, &err), &err);
  fs_routeopt_traffic tr;
  fs_routeopt_traffic_init(&tr);
  int32_t h1[] = {0, 1, 2, 3}, h2[] = {4, 5, 6, 7};
  CHECK_OK(fs_routeopt_traffic_add_ring(&tr, "ar", "allreduce", h1, 4, 1e9, &err), &err);
  CHECK_OK(fs_routeopt_traffic_add_ring(&tr, "ag", "allgather", h2, 4, 1e9, &err), &err);
  CHECK_EQ_INT(tr.n_flows, 8);
  CHECK_EQ_INT(tr.phases[0].repeat, 6);
  CHECK_EQ_INT(tr.phases[1].repeat, 3);
  CHECK_EQ_INT(tr.flows[3].src, 3);
  CHECK_EQ_INT(tr.flows[3].dst, 0);
  CHECK_REL(tr.flows[3].bytes, 0.25e9, 1e-12, "B");
  CHECK(fs_routeopt_traffic_add_ring(&tr, "x", "broadcast", h1, 4, 1e9, &err) == FS_EINVAL);
  int32_t dup[] = {0, 0};
  CHECK(fs_routeopt_traffic_add_ring(&tr, "x", "allreduce", dup, 2, 1e9, &err) == FS_EINVAL);
  CHECK_EQ_INT(tr.n_jobs, 2);
  fs_routeopt_problem *p = NULL;
  CHECK_OK(fs_routeopt_problem_new(t, &tr, &p, &err), &err);
  if (p) {
    int32_t choice[8] = {0};
    fs_routeopt_metric m;
    double js[2], ji[2];
    CHECK_OK(fs_routeopt_evaluate(p, choice, &m, js, ji, &err), &err);
    CHECK_REL(js[0], 0.12, 1e-12, "s");
    CHECK_REL(ji[0], 0.12, 1e-12, "s");
    CHECK_REL(js[1], 0.06, 1e-12, "s");
    CHECK_REL(m.efficiency, 1, 1e-12, "");
  }
  fs_routeopt_problem_free(p);
  fs_routeopt_traffic_free(&tr);
  fs_topo_free(t);
}

/* Every assignment of the flows to their paths, as an odometer. */
static int next_assignment(const fs_routeopt_problem *p, int32_t *choice) {
  for (int32_t f = 0; f < fs_routeopt_n_flows(p); f++) {
    if (++choice[f] < fs_routeopt_n_paths(p, f)) return 1;
    choice[f] = 0;
  }
  return 0;
}

static uint64_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 33;
}

/* Tiny leaf-spines with a handful of flows (distinct sources and
 * destinations, so every demand is the host rate): the MILP's max link
 * load is the least over every assignment, and its min flow throughput
 * the greatest. The oracle must see a spread (some assignment worse than
 * the optimum), or the comparison would prove nothing. */
TEST(test_routeopt_exact_equals_brute_force) {
  int spread_seen = 0, greedy_short = 0;
  for (uint64_t seed = 1; seed <= 8; seed++) {
    int32_t spines = seed % 2 ? 2 : 3;
    fs_topo *t = leafspine(3, spines, 3, 100, seed % 3 == 0 ? 50 : 100);
    uint64_t s = seed;
    int32_t perm[9];
    for (int32_t i = 0; i < 9; i++) perm[i] = i;
    for (int32_t i = 8; i > 0; i--) {
      int32_t k = (int32_t)(lcg(&s) % (uint64_t)(i + 1)), x = perm[i];
      perm[i] = perm[k];
      perm[k] = x;
    }
    int32_t pairs[12], n = 0;
    for (int32_t i = 0; i < 9 && n < 6; i++)
      if (perm[i] / 3 != i / 3) {
        pairs[2 * n] = i;
        pairs[2 * n + 1] = perm[i];
        n++;
      }
    fs_routeopt_traffic tr;
    fs_routeopt_traffic_init(&tr);
    add_flows_job(&tr, "a", pairs, n / 2, 1e9);
    add_flows_job(&tr, "b", pairs + 2 * (n / 2), n - n / 2, 1e9);
    fs_routeopt_problem *p = NULL;
    fs_err err = {0, ""};
    CHECK_OK(fs_routeopt_problem_new(t, &tr, &p, &err), &err);
    if (!p) {
      fs_routeopt_traffic_free(&tr);
      fs_topo_free(t);
      continue;
    }
    int32_t choice[6] = {0}, best[6];
    double best_load = INFINITY, best_tput = 0, worst_load = 0;
    do {
      fs_routeopt_metric m;
      CHECK_OK(fs_routeopt_evaluate(p, choice, &m, NULL, NULL, &err), &err);
      if (m.max_link_load < best_load) best_load = m.max_link_load;
      if (m.min_flow_tput > best_tput) best_tput = m.min_flow_tput;
      if (m.max_link_load > worst_load) worst_load = m.max_link_load;
    } while (next_assignment(p, choice));
    if (worst_load > best_load + 1e-9) spread_seen++;
    fs_routeopt_opts o = {FS_ROUTEOPT_EXACT, 0, 0, 0};
    fs_routeopt_stats st;
    CHECK_OK(fs_routeopt_optimize(p, &o, best, &st, &err), &err);
    fs_routeopt_metric m;
    CHECK_OK(fs_routeopt_evaluate(p, best, &m, NULL, NULL, &err), &err);
    CHECK_REL(m.max_link_load, best_load, 1e-9, "");
    CHECK_REL(st.objective, best_load, 1e-9, "");
    CHECK_REL(m.min_flow_tput, best_tput, 1e-9, "");
    /* greedy, whatever it reaches, is an assignment: never past the optimum */
    o.kind = FS_ROUTEOPT_GREEDY;
    CHECK_OK(fs_routeopt_optimize(p, &o, choice, &st, &err), &err);
    CHECK_OK(fs_routeopt_evaluate(p, choice, &m, NULL, NULL, &err), &err);
    CHECK(m.max_link_load >= best_load - 1e-9);
    if (m.max_link_load > best_load + 1e-9) greedy_short++;
    fs_routeopt_problem_free(p);
    fs_routeopt_traffic_free(&tr);
    fs_topo_free(t);
  }
  CHECK(spread_seen >= 4);
  /* measured, not proven: greedy's chains reach the optimum on all of them */
  CHECK_EQ_INT(greedy_short, 0);
}

/* Random permutations of every host of a leaf-spine with as many spines as
 * hosts per leaf (non-blocking): greedy reaches max link load 1, every job
 * at its ideal time (Koenig: the leaf-to-leaf multigraph has degree <= the
 * spine count, so a routing without collisions exists). */
TEST(test_routeopt_greedy_reaches_nonblocking_on_permutation) {
  static const int32_t shapes[][3] = {{8, 4, 4}, {16, 8, 8}, {6, 6, 6}};
  for (int sh = 0; sh < 3; sh++) {
    int32_t L = shapes[sh][0], S = shapes[sh][1], H = shapes[sh][2], n = L * H;
    fs_topo *t = leafspine(L, S, H, 400, 400);
    for (uint64_t seed = 1; seed <= 5; seed++) {
      uint64_t s = seed * 7919 + (uint64_t)sh;
      int32_t *perm = malloc((size_t)n * sizeof(*perm));
      int32_t *pairs = malloc((size_t)n * 2 * sizeof(*pairs));
      for (int32_t i = 0; i < n; i++) perm[i] = i;
      for (int32_t i = n - 1; i > 0; i--) {
        int32_t k = (int32_t)(lcg(&s) % (uint64_t)(i + 1)), x = perm[i];
        perm[i] = perm[k];
        perm[k] = x;
      }
      fs_routeopt_traffic tr;
      fs_routeopt_traffic_init(&tr);
      int32_t m = 0;
      for (int32_t i = 0; i < n; i++)
        if (perm[i] != i) {
          pairs[2 * m] = i;
          pairs[2 * m + 1] = perm[i];
          m++;
        }
      /* four jobs of a quarter of the flows each, all concurrent */
      fs_err err = {0, ""};
      for (int j = 0; j < 4; j++) {
        int32_t lo = m * j / 4, hi = m * (j + 1) / 4;
        fs_routeopt_flow *fl = malloc((size_t)(hi - lo + 1) * sizeof(*fl));
        for (int32_t i = lo; i < hi; i++)
          fl[i - lo] = (fs_routeopt_flow){pairs[2 * i], pairs[2 * i + 1], 1e8, 0};
        if (hi > lo)
          CHECK_OK(fs_routeopt_traffic_add_phase_job(&tr, "j", fl, hi - lo, 1, &err), &err);
        free(fl);
      }
      fs_routeopt_problem *p = NULL;
      CHECK_OK(fs_routeopt_problem_new(t, &tr, &p, &err), &err);
      int32_t *choice = malloc((size_t)tr.n_flows * sizeof(*choice));
      fs_routeopt_opts o = {FS_ROUTEOPT_GREEDY, 0, 0, 0};
      fs_routeopt_stats st;
      fs_routeopt_metric met;
      if (p) {
        CHECK_OK(fs_routeopt_optimize(p, &o, choice, &st, &err), &err);
        CHECK_OK(fs_routeopt_evaluate(p, choice, &met, NULL, NULL, &err), &err);
        CHECK_REL(met.max_link_load, 1.0, 1e-9, "");
        CHECK_REL(met.min_job_tput, 1.0, 1e-9, "");
        CHECK_REL(met.efficiency, 1.0, 1e-9, "");
      }
      free(choice);
      fs_routeopt_problem_free(p);
      fs_routeopt_traffic_free(&tr);
      free(perm);
      free(pairs);
    }
    fs_topo_free(t);
  }
}

/* Leaf-spine of L leaves, S spines, S hosts per leaf; host (a, i) sends to
 * (a + 1, i). Each leaf hashes its S flows over its S uplinks (host and
 * spine hops have one choice), like S balls into S bins: the expected
 * share of empty uplinks is (1 - 1/S)^S and of flows sharing their uplink
 * 1 - (1 - 1/S)^(S-1). Over 100 seeds (6400 bins) both measured shares
 * must be within 0.03 of those (several standard deviations). */
TEST(test_routeopt_ecmp_collisions_balls_into_bins) {
  const int32_t L = 8, S = 8;
  fs_topo *t = leafspine(L, S, S, 100, 100);
  fs_routeopt_traffic tr;
  fs_routeopt_traffic_init(&tr);
  int32_t pairs[128];
  for (int32_t a = 0; a < L; a++)
    for (int32_t i = 0; i < S; i++) {
      pairs[2 * (a * S + i)] = a * S + i;
      pairs[2 * (a * S + i) + 1] = ((a + 1) % L) * S + i;
    }
  add_flows_job(&tr, "perm", pairs, 64, 1e9);
  fs_routeopt_problem *p = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_routeopt_problem_new(t, &tr, &p, &err), &err);
  if (!p) goto out;
  int32_t *cnt = calloc((size_t)t->n_links, sizeof(*cnt));
  int64_t empty = 0, bins = 0, shared = 0, balls = 0;
  int32_t choice[64];
  for (uint64_t seed = 1; seed <= 100; seed++) {
    fs_routeopt_opts o = {FS_ROUTEOPT_ECMP, seed, 0, 0};
    CHECK_OK(fs_routeopt_optimize(p, &o, choice, NULL, &err), &err);
    memset(cnt, 0, (size_t)t->n_links * sizeof(*cnt));
    for (int32_t f = 0; f < 64; f++) {
      int32_t h;
      const int32_t *pl = fs_routeopt_path(p, f, choice[f], &h);
      for (int32_t i = 0; i < h; i++) cnt[pl[i]]++;
    }
    for (int32_t l = 0; l < t->n_links; l++) {
      const fs_link *lk = &t->links[l];
      if (t->nodes[lk->from].tier != 1 || t->nodes[lk->to].tier != 2) continue; /* uplinks */
      bins++;
      empty += cnt[l] == 0;
    }
    for (int32_t f = 0; f < 64; f++) {
      int32_t h;
      const int32_t *pl = fs_routeopt_path(p, f, choice[f], &h);
      balls++;
      shared += cnt[pl[1]] > 1; /* pl[1]: leaf -> spine */
    }
  }
  CHECK_EQ_INT(bins, 100 * L * S);
  double q = 1.0 - 1.0 / S;
  double want_empty = pow(q, S), want_shared = 1 - pow(q, S - 1);
  double got_empty = (double)empty / (double)bins, got_shared = (double)shared / (double)balls;
  if (fabs(got_empty - want_empty) > 0.03)
    test_fail(__FILE__, __LINE__, "empty uplinks: expected %.4f, got %.4f", want_empty, got_empty);
  if (fabs(got_shared - want_shared) > 0.03)
    test_fail(__FILE__, __LINE__, "flows sharing an uplink: expected %.4f, got %.4f", want_shared,
              got_shared);
  free(cnt);
out:
  fs_routeopt_problem_free(p);
  fs_routeopt_traffic_free(&tr);
  fs_topo_free(t);
}

static fs_routeopt_problem *jobs_problem(const fs_topo *t, fs_routeopt_traffic *tr,
                                         const char *text) {
  fs_err err = {0, ""};
  fs_routeopt_problem *p = NULL;
  fs_routeopt_traffic_init(tr);
  CHECK_OK(fs_routeopt_traffic_from_json(text, "jobs.json", t, tr, &err), &err);
  CHECK_OK(fs_routeopt_problem_new(t, tr, &p, &err), &err);
  return p;
}

static int cmp_metric(const void *a, const void *b) {
  return fs_routeopt_metric_cmp((const fs_routeopt_metric *)a, (const fs_routeopt_metric *)b);
}

/* Seeded multi-job instances (random placement, 1:1 and 2:1 leaf-spines):
 * greedy's metric is never worse than ECMP's median over 21 seeds, nor its
 * max link load higher. */
TEST(test_routeopt_greedy_not_worse_than_ecmp_median) {
  static const char *const specs[][2] = {
      {"16 8 8 1", "{\"seed\": 3, \"jobs\": [{\"placement\": \"random\", \"size\": 32, "
                   "\"bytes\": 1e9}, {\"placement\": \"random\", \"size\": 48, \"bytes\": 2e9}, "
                   "{\"placement\": \"random\", \"size\": 40, \"bytes\": 5e8}]}"},
      {"8 4 8 1", "{\"seed\": 5, \"jobs\": [{\"placement\": \"random\", \"size\": 30, "
                  "\"bytes\": 1e9}, {\"placement\": \"packed\", \"size\": 20, \"bytes\": 1e9}]}"},
      {"12 6 6 1", "{\"seed\": 9, \"jobs\": [{\"placement\": \"random\", \"size\": 70, "
                   "\"collective\": \"allgather\", \"bytes\": 1e9}]}"},
  };
  for (int i = 0; i < 3; i++) {
    int32_t L, S, H, x;
    sscanf(specs[i][0], "%d %d %d %d", &L, &S, &H, &x);
    fs_topo *t = leafspine(L, S, H, 400, i == 1 ? 400 * 8.0 / 4 / 2 : 400);
    fs_routeopt_traffic tr;
    fs_routeopt_problem *p = jobs_problem(t, &tr, specs[i][1]);
    if (p) {
      fs_err err = {0, ""};
      int32_t *choice = malloc((size_t)tr.n_flows * sizeof(*choice));
      fs_routeopt_metric ecmp[21], g;
      for (int s = 0; s < 21; s++) {
        fs_routeopt_opts o = {FS_ROUTEOPT_ECMP, (uint64_t)s + 1, 0, 0};
        CHECK_OK(fs_routeopt_optimize(p, &o, choice, NULL, &err), &err);
        CHECK_OK(fs_routeopt_evaluate(p, choice, &ecmp[s], NULL, NULL, &err), &err);
      }
      qsort(ecmp, 21, sizeof(ecmp[0]), cmp_metric);
      fs_routeopt_opts o = {FS_ROUTEOPT_GREEDY, 0, 0, 0};
      CHECK_OK(fs_routeopt_optimize(p, &o, choice, NULL, &err), &err);
      CHECK_OK(fs_routeopt_evaluate(p, choice, &g, NULL, NULL, &err), &err);
      if (fs_routeopt_metric_cmp(&g, &ecmp[10]) < 0)
        test_fail(__FILE__, __LINE__, "instance %d: greedy min job tput %.4f < ECMP median %.4f", i,
                  g.min_job_tput, ecmp[10].min_job_tput);
      CHECK(g.max_link_load <= ecmp[10].max_link_load + 1e-9);
      free(choice);
    }
    fs_routeopt_problem_free(p);
    fs_routeopt_traffic_free(&tr);
    fs_topo_free(t);
  }
}

/* The measured bound of greedy against the MILP: equal max link load on
 * seeded multi-job instances of a 3-tier fat-tree (chains must eject from
 * two links: the up and down halves of a path) and of a leaf-spine whose
 * 250 Gb/s fabric makes the loads non-integral (1.6 per 400 Gb/s flow). */
TEST(test_routeopt_greedy_matches_exact) {
  static const char *const topos[] = {
      "fattree:k=8,gbps=100",
      "leafspine:leaves=8,spines=3,hosts_per_leaf=8,host_gbps=400,fabric_gbps=250"};
  for (int ti = 0; ti < 2; ti++) {
    fs_topo *t = NULL;
    fs_err err = {0, ""};
    CHECK_OK(fs_topo_from_spec(topos[ti], &t, &err), &err);
    if (!t) continue;
    for (int inst = 0; inst < 3; inst++) {
      char text[768];
      int size = ti == 0 ? 24 : 12, o = snprintf(text, sizeof(text), "{\"seed\": %d, \"jobs\": [",
                                                    inst + 1);
      for (int j = 0; j < 4; j++)
        o += snprintf(text + o, sizeof(text) - (size_t)o,
                      "%s{\"placement\": \"random\", \"size\": %d, \"bytes\": %g}", j ? "," : "",
                      size + (j * 3 + inst) % 5, 1e8 * (1 + (j * 7 + inst) % 4));
      snprintf(text + o, sizeof(text) - (size_t)o, "]}");
      fs_routeopt_traffic tr;
      fs_routeopt_problem *p = jobs_problem(t, &tr, text);
      if (p) {
        int32_t *c = malloc((size_t)tr.n_flows * sizeof(*c));
        fs_routeopt_opts og = {FS_ROUTEOPT_GREEDY, 0, 0, 0}, oe = {FS_ROUTEOPT_EXACT, 0, 60, 0};
        fs_routeopt_metric mg, me;
        CHECK_OK(fs_routeopt_optimize(p, &og, c, NULL, &err), &err);
        CHECK_OK(fs_routeopt_evaluate(p, c, &mg, NULL, NULL, &err), &err);
        CHECK_OK(fs_routeopt_optimize(p, &oe, c, NULL, &err), &err);
        CHECK_OK(fs_routeopt_evaluate(p, c, &me, NULL, NULL, &err), &err);
        CHECK_REL(mg.max_link_load, me.max_link_load, 1e-9, "");
        CHECK_REL(mg.min_job_tput, me.min_job_tput, 1e-9, "");
        free(c);
      }
      fs_routeopt_problem_free(p);
      fs_routeopt_traffic_free(&tr);
    }
    fs_topo_free(t);
  }
}

/* Ideal spraying on a non-blocking leaf-spine reaches the ideal fabric. */
TEST(test_routeopt_spray_is_ideal_on_clos) {
  fs_topo *t = leafspine(8, 4, 4, 100, 100);
  fs_routeopt_traffic tr;
  fs_routeopt_problem *p = jobs_problem(
      t, &tr, "{\"jobs\": [{\"placement\": \"random\", \"size\": 32, \"bytes\": 1e9}]}");
  if (p) {
    fs_err err = {0, ""};
    int32_t choice[32];
    fs_routeopt_opts o = {FS_ROUTEOPT_SPRAY, 0, 0, 0};
    fs_routeopt_metric m;
    CHECK_OK(fs_routeopt_optimize(p, &o, choice, NULL, &err), &err);
    CHECK_OK(fs_routeopt_evaluate(p, choice, &m, NULL, NULL, &err), &err);
    CHECK_REL(m.min_job_tput, 1, 1e-9, "");
    CHECK(m.max_link_load <= 1 + 1e-9);
  }
  fs_routeopt_problem_free(p);
  fs_routeopt_traffic_free(&tr);
  fs_topo_free(t);
}

TEST(test_routeopt_jobs_file_placement) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_from_spec("leafspine:leaves=4,spines=2,hosts_per_leaf=4,gpus_per_node=2", &t,
                             &err),
           &err);
  if (!t) return;
  fs_routeopt_traffic tr;
  fs_routeopt_traffic_init(&tr);
  int rc = fs_routeopt_traffic_from_json(
      "{\"seed\": 7, \"jobs\": [{\"name\": \"x\", \"ranks\": [5, 9, 2]},"
      " {\"placement\": \"packed\", \"size\": 3, \"bytes\": 1e6},"
      " {\"placement\": \"rail\", \"size\": 4, \"bytes\": 1e6},"
      " {\"placement\": \"random\", \"size\": 4, \"bytes\": 1e6}]}",
      "jobs.json", t, &tr, &err);
  CHECK_EQ_INT(rc, FS_EINVAL);
  /* "bytes" is required: the first job lacks it */
  CHECK(strstr(err.msg, "$.jobs[0]") != NULL);
  fs_routeopt_traffic_init(&tr);
  CHECK_OK(fs_routeopt_traffic_from_json(
               "{\"seed\": 7, \"jobs\": [{\"name\": \"x\", \"ranks\": [5, 9, 2], \"bytes\": 3e6},"
               " {\"placement\": \"packed\", \"size\": 3, \"bytes\": 1e6},"
               " {\"placement\": \"rail\", \"size\": 4, \"bytes\": 1e6},"
               " {\"placement\": \"random\", \"size\": 4, \"bytes\": 1e6}]}",
               "jobs.json", t, &tr, &err),
           &err);
  CHECK_EQ_INT(tr.n_jobs, 4);
  if (tr.n_jobs == 4) {
    const int32_t *rh = tr.rank_hosts;
    CHECK_EQ_INT(rh[tr.jobs[0].first_rank + 1], 9);
    /* packed: the lowest free hosts */
    CHECK_EQ_INT(rh[tr.jobs[1].first_rank + 0], 0);
    CHECK_EQ_INT(rh[tr.jobs[1].first_rank + 1], 1);
    CHECK_EQ_INT(rh[tr.jobs[1].first_rank + 2], 3);
    /* rail (2 GPUs per server): even GPUs first, skipping used ones */
    CHECK_EQ_INT(rh[tr.jobs[2].first_rank + 0], 4);
    CHECK_EQ_INT(rh[tr.jobs[2].first_rank + 1], 6);
    CHECK_EQ_INT(rh[tr.jobs[2].first_rank + 2], 8);
    CHECK_EQ_INT(rh[tr.jobs[2].first_rank + 3], 10);
    /* random: distinct, unused */
    uint8_t used[16] = {0};
    for (int32_t i = 0; i < tr.n_rank_hosts; i++) {
      CHECK(rh[i] >= 0 && rh[i] < 16);
      if (rh[i] >= 0 && rh[i] < 16) {
        CHECK(!used[rh[i]]);
        used[rh[i]] = 1;
      }
    }
    CHECK_EQ_INT(tr.phases[0].repeat, 4);
    CHECK_REL(tr.flows[0].bytes, 1e6, 1e-12, "B");
  }
  fs_routeopt_traffic_free(&tr);
  fs_topo_free(t);
}

TEST(test_routeopt_jobs_file_errors) {
  fs_topo *t = leafspine(2, 2, 4, 100, 100);
  static const char *const bad[][2] = {
      {"{\"jobs\": []}", "$.jobs"},
      {"{\"jobs\": [{\"size\": 4, \"bytes\": 1, \"colour\": 1}]}", "colour"},
      {"{\"jobs\": [{\"size\": 9, \"bytes\": 1}]}", "$.jobs[0].size"},
      {"{\"jobs\": [{\"size\": 2147483647, \"bytes\": 1}]}", "more ranks than hosts"},
      {"{\"jobs\": [{\"size\": 6, \"bytes\": 1}, {\"size\": 3, \"bytes\": 1}]}",
       "more ranks than free hosts"},
      {"{\"jobs\": [{\"size\": 4, \"bytes\": 1}, {\"ranks\": [7, 3], \"bytes\": 1}]}",
       "$.jobs[1].ranks[1]"},
      {"{\"jobs\": [{\"ranks\": [1, 8], \"bytes\": 1}]}", "$.jobs[0].ranks[1]"},
      {"{\"jobs\": [{\"size\": 4, \"bytes\": 1, \"collective\": \"alltoall\"}]}",
       "$.jobs[0].collective"},
      {"{\"jobs\": [{\"size\": 4, \"bytes\": 1, \"algo\": \"tree\"}]}", "$.jobs[0].algo"},
      {"{\"jobs\": [{\"size\": 4, \"bytes\": 1, \"placement\": \"spread\"}]}",
       "$.jobs[0].placement"},
      {"{\"jobs\": [{\"size\": 4, \"bytes\": 0}]}", "$.jobs[0].bytes"},
      {"{\"jobs\": [{\"bytes\": 1}]}", "$.jobs[0]"},
      {"{\"jobs\": [{\"ranks\": [1, 2], \"size\": 2, \"bytes\": 1}]}", "either"},
      {"{\"jobs\": [{\"size\": 2, \"bytes\": 1}], ", "jobs.json"},
      {"{\"jobs\": [{\"name\": \"a\", \"size\": 2, \"bytes\": 1}, {\"name\": \"a\", "
       "\"size\": 2, \"bytes\": 1}]}",
       "$.jobs[1].name: job names must differ: $.jobs[0] has it too"},
      {"{\"jobs\": [{\"size\": 2, \"bytes\": 1}, {\"name\": \"job0\", \"size\": 2, "
       "\"bytes\": 1}]}",
       "$.jobs[1].name: job names must differ"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    fs_routeopt_traffic tr;
    fs_routeopt_traffic_init(&tr);
    fs_err err = {0, ""};
    int rc = fs_routeopt_traffic_from_json(bad[i][0], "jobs.json", t, &tr, &err);
    if (rc != FS_EINVAL || !strstr(err.msg, bad[i][1]))
      test_fail(__FILE__, __LINE__, "case %zu: expected FS_EINVAL naming '%s', got %d: %s", i,
                bad[i][1], rc, err.msg);
    CHECK_EQ_INT(tr.n_jobs, 0);
    fs_routeopt_traffic_free(&tr);
  }
  fs_topo_free(t);
}

TEST(test_routeopt_exact_refuses_large) {
  fs_topo *t = leafspine(8, 8, 8, 100, 100);
  fs_routeopt_traffic tr;
  fs_routeopt_problem *p = jobs_problem(
      t, &tr, "{\"jobs\": [{\"placement\": \"random\", \"size\": 64, \"bytes\": 1e9}]}");
  if (p) {
    fs_err err = {0, ""};
    int32_t choice[64];
    fs_routeopt_opts o = {FS_ROUTEOPT_EXACT, 0, 0, 100};
    CHECK_EQ_INT(fs_routeopt_optimize(p, &o, choice, NULL, &err), FS_ERANGE);
    CHECK(strstr(err.msg, "exceed the limit of 100") != NULL);
    fs_routeopt_kind k;
    CHECK_EQ_INT(fs_routeopt_kind_parse("greedy", &k), 0);
    CHECK_EQ_INT(k, FS_ROUTEOPT_GREEDY);
    CHECK_EQ_INT(fs_routeopt_kind_parse("ospf", &k), FS_EINVAL);
  }
  fs_routeopt_problem_free(p);
  fs_routeopt_traffic_free(&tr);
  fs_topo_free(t);
}

/* The routes the optimiser hands to the engine reproduce its metric: one
 * phase of the greedy routing simulated as flows takes the metric's phase
 * time (all flows equal, so the max-min rates never change mid-phase). */
TEST(test_routeopt_routes_for_engine) {
  fs_topo *t = leafspine(4, 2, 4, 100, 100);
  fs_routeopt_traffic tr;
  fs_routeopt_problem *p = jobs_problem(
      t, &tr,
      "{\"seed\": 2, \"jobs\": [{\"placement\": \"random\", \"size\": 8, \"bytes\": 8e8},"
      " {\"placement\": \"random\", \"size\": 8, \"bytes\": 8e8}]}");
  if (p) {
    fs_err err = {0, ""};
    int32_t choice[16];
    double js[2];
    fs_routeopt_metric m;
    for (int kind = FS_ROUTEOPT_GREEDY; kind <= FS_ROUTEOPT_SPRAY; kind++) {
      fs_routeopt_opts o = {(fs_routeopt_kind)kind, 3, 0, 0};
      CHECK_OK(fs_routeopt_optimize(p, &o, choice, NULL, &err), &err);
      CHECK_OK(fs_routeopt_evaluate(p, choice, &m, js, NULL, &err), &err);
      fs_sim *sim = NULL;
      CHECK_OK(fs_sim_new(t, &sim, &err), &err);
      if (!sim) continue;
      int64_t lat = 0;
      for (int32_t f = 0; f < tr.n_flows; f++) {
        fs_route r;
        fs_route_init(&r);
        CHECK_OK(fs_routeopt_route(p, choice, f, &r, &err), &err);
        if (r.latency_ns > lat) lat = r.latency_ns;
        CHECK(fs_sim_add_flow(sim, tr.flows[f].src, tr.flows[f].dst, tr.flows[f].bytes, 0, &r,
                              &err) >= 0);
        fs_route_free(&r);
      }
      CHECK_OK(fs_sim_run(sim, NULL, &err), &err);
      double phase = fmax(js[0] / tr.phases[0].repeat, js[1] / tr.phases[1].repeat);
      CHECK_REL(fs_sim_makespan_s(sim) - (double)lat * 1e-9, phase, 1e-6, "s");
      fs_sim_free(sim);
    }
  }
  fs_routeopt_problem_free(p);
  fs_routeopt_traffic_free(&tr);
  fs_topo_free(t);
}

TEST(test_routeopt_cli) {
  char out[16384];
  const char *topo = "--topo leafspine:leaves=8,spines=8,hosts_per_leaf=8,host_gbps=400,"
                     "fabric_gbps=400";
  char cmd[1024];
  snprintf(cmd, sizeof(cmd), "route --jobs examples/jobs-4dp.json %s --seeds 5 --format json",
           topo);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0);
  CHECK(strstr(out, "\"optimizer\": \"exact\"") != NULL);
  CHECK(strstr(out, "\"optimizer\": \"ecmp-median\"") != NULL);
  CHECK(strstr(out, "\"min_job_throughput\": 1,") != NULL); /* exact, greedy, spray */
  /* same input, same output, byte for byte (the wall times only with --timing) */
  char again[16384];
  CHECK(strstr(out, "optimizer_time_s") == NULL);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", again, sizeof(again)), 0);
  CHECK(strcmp(out, again) == 0);
  snprintf(cmd, sizeof(cmd), "route --jobs examples/jobs-4dp.json %s --optimizer greedy --timing "
           "--format json", topo);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0);
  CHECK(strstr(out, "\"optimizer_time_s\": ") != NULL);
  snprintf(cmd, sizeof(cmd), "route --jobs examples/jobs-4dp.json %s --optimizer greedy", topo);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0);
  CHECK(strstr(out, "min job throughput") != NULL);
  CHECK(strstr(out, "dp-a allreduce ms") != NULL);
  /* bad input: exit 2 with one line naming the problem */
  snprintf(cmd, sizeof(cmd), "route %s", topo);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 2);
  CHECK(strstr(out, "--jobs is required") != NULL);
  snprintf(cmd, sizeof(cmd), "route --jobs /nonexistent/jobs.json %s", topo);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 2);
  snprintf(cmd, sizeof(cmd), "route --jobs examples/jobs-4dp.json %s --optimizer ospf", topo);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 2);
  CHECK(strstr(out, "ospf") != NULL);
  CHECK_EQ_INT(test_run_cli("route --jobs examples/jobs-4dp.json --topo star:hosts=8", "2>&1",
                            out, sizeof(out)),
               2);
  CHECK(strstr(out, "$.jobs[0].size") != NULL);
  /* exact alone on an instance above its limit: a clear error, exit 2 */
  CHECK_EQ_INT(test_run_cli("route --jobs examples/jobs-clos64.json --topo "
                            "leafspine:leaves=64,spines=32,hosts_per_leaf=32 --optimizer exact",
                            "2>&1", out, sizeof(out)),
               2);
  CHECK(strstr(out, "use greedy") != NULL);
}

/* ---- edge colouring ------------------------------------------------------ */

/* Whether colour[] is a proper edge colouring with colours < k: no two
 * edges at a vertex share one. */
static int proper_colouring(int32_t nu, int32_t nv, int32_t ne, const int32_t *eu,
                            const int32_t *ev, const int32_t *colour, int32_t k) {
  uint8_t *seen = calloc((size_t)(nu + nv) * (size_t)k + 1, 1);
  int ok = 1;
  for (int32_t e = 0; e < ne && ok; e++) {
    if (colour[e] < 0 || colour[e] >= k) {
      ok = 0;
      break;
    }
    size_t a = (size_t)eu[e] * (size_t)k + (size_t)colour[e];
    size_t b = (size_t)(nu + ev[e]) * (size_t)k + (size_t)colour[e];
    if (seen[a] || seen[b]) ok = 0;
    seen[a] = seen[b] = 1;
  }
  free(seen);
  return ok;
}

/* Random bipartite multigraphs (parallel edges, skewed degrees): the
 * alternating-path colouring is proper and uses exactly Delta colours
 * (Koenig: no fewer can do, and every colour appears at a vertex of degree
 * Delta); fewer colours than Delta are refused. The checker itself must
 * catch a colouring spoiled on purpose. */
TEST(test_routeopt_bipartite_colouring_random) {
  uint64_t s = 12345;
  int32_t eu[200], ev[200], col[200], deg[40];
  for (int inst = 0; inst < 300; inst++) {
    int32_t nu = 1 + (int32_t)(lcg(&s) % 12), nv = 1 + (int32_t)(lcg(&s) % 12);
    int32_t ne = 1 + (int32_t)(lcg(&s) % 200);
    memset(deg, 0, sizeof(deg));
    int32_t delta = 0;
    for (int32_t e = 0; e < ne; e++) {
      /* a quarter of the edges repeat the previous pair: multi-edges */
      if (e > 0 && lcg(&s) % 4 == 0) {
        eu[e] = eu[e - 1];
        ev[e] = ev[e - 1];
      } else {
        eu[e] = (int32_t)(lcg(&s) % (uint64_t)nu);
        /* skew: half the edges into vertex 0 of V */
        ev[e] = lcg(&s) % 2 ? 0 : (int32_t)(lcg(&s) % (uint64_t)nv);
      }
      if (++deg[eu[e]] > delta) delta = deg[eu[e]];
      if (++deg[20 + ev[e]] > delta) delta = deg[20 + ev[e]];
    }
    CHECK_EQ_INT(fs__routeopt_bipartite_colour(nu, nv, ne, eu, ev, delta, col), 0);
    if (!proper_colouring(nu, nv, ne, eu, ev, col, delta)) {
      test_fail(__FILE__, __LINE__, "instance %d: colouring not proper with %d colours", inst,
                delta);
      break;
    }
    uint8_t used[200] = {0};
    int32_t n_used = 0;
    for (int32_t e = 0; e < ne; e++)
      if (!used[col[e]]) used[col[e]] = 1, n_used++;
    CHECK_EQ_INT(n_used, delta);
    if (delta > 1)
      CHECK_EQ_INT(fs__routeopt_bipartite_colour(nu, nv, ne, eu, ev, delta - 1, col), FS_EINVAL);
    if (inst == 0 && ne > 1) {
      /* the checker sees two edges of a vertex given one colour */
      int32_t e2 = -1;
      for (int32_t e = 1; e < ne && e2 < 0; e++)
        if (eu[e] == eu[0]) e2 = e;
      CHECK_EQ_INT(fs__routeopt_bipartite_colour(nu, nv, ne, eu, ev, delta, col), 0);
      if (e2 > 0) {
        col[e2] = col[0];
        CHECK(!proper_colouring(nu, nv, ne, eu, ev, col, delta));
      }
    }
  }
}

/* A random permutation of the hosts as one job (links as pairs). */
static void permutation_job(fs_routeopt_traffic *tr, int32_t n, uint64_t seed) {
  uint64_t s = seed;
  int32_t *perm = malloc((size_t)n * sizeof(*perm));
  fs_routeopt_flow *fl = malloc((size_t)n * sizeof(*fl));
  for (int32_t i = 0; i < n; i++) perm[i] = i;
  for (int32_t i = n - 1; i > 0; i--) {
    int32_t k = (int32_t)(lcg(&s) % (uint64_t)(i + 1)), x = perm[i];
    perm[i] = perm[k];
    perm[k] = x;
  }
  int32_t m = 0;
  for (int32_t i = 0; i < n; i++)
    if (perm[i] != i) fl[m++] = (fs_routeopt_flow){i, perm[i], 1e8, 0};
  fs_err err = {0, ""};
  CHECK_OK(fs_routeopt_traffic_add_phase_job(tr, "perm", fl, m, 1, &err), &err);
  free(perm);
  free(fl);
}

/* Permutations on leaf-spines (one or two cables per leaf-spine pair, plain
 * hosts or GPUs behind NICs): edgecolor reaches the non-blocking optimum,
 * max link load 1 = ideal, like greedy, and the engine routes it gets are
 * its candidates link for link (the right one of parallel cables). With
 * fewer spine cables than hosts per leaf, the max load is the lower bound
 * max over leaves of ceil(degree / cables): each leaf's flows must share
 * its uplinks, and the split leaves (de Werra) meet that bound. */
TEST(test_routeopt_edgecolor_nonblocking_permutation) {
  static const char *const specs[] = {
      "leafspine:leaves=8,spines=4,hosts_per_leaf=4",
      "leafspine:leaves=6,spines=3,hosts_per_leaf=6,links_per_spine=2",
      "leafspine:leaves=4,spines=4,hosts_per_leaf=4,gpus_per_node=2",
      "railopt:servers=8,gpus_per_node=4,servers_per_su=4,spines=4",
      "leafspine:leaves=6,spines=2,hosts_per_leaf=6",
      "leafspine:leaves=5,spines=2,hosts_per_leaf=8,links_per_spine=2,fabric_gbps=400"};
  for (int si = 0; si < 6; si++) {
    fs_topo *t = NULL;
    fs_err err = {0, ""};
    CHECK_OK(fs_topo_from_spec(specs[si], &t, &err), &err);
    if (!t) continue;
    CHECK_OK(fs_routeopt_edgecolor_check(t, &err), &err);
    for (uint64_t seed = 1; seed <= 4; seed++) {
      fs_routeopt_traffic tr;
      fs_routeopt_traffic_init(&tr);
      permutation_job(&tr, t->n_hosts, seed * 31 + (uint64_t)si);
      fs_routeopt_problem *p = NULL;
      CHECK_OK(fs_routeopt_problem_new(t, &tr, &p, &err), &err);
      if (!p) {
        fs_routeopt_traffic_free(&tr);
        continue;
      }
      int32_t *choice = malloc((size_t)tr.n_flows * sizeof(*choice));
      fs_routeopt_opts o = {FS_ROUTEOPT_EDGECOLOR, 0, 0, 0};
      fs_routeopt_metric me, mg;
      CHECK_OK(fs_routeopt_optimize(p, &o, choice, NULL, &err), &err);
      CHECK_OK(fs_routeopt_evaluate(p, choice, &me, NULL, NULL, &err), &err);
      for (int32_t f = 0; f < tr.n_flows; f++) {
        fs_route r;
        fs_route_init(&r);
        int32_t h;
        const int32_t *pl = fs_routeopt_path(p, f, choice[f], &h);
        CHECK_OK(fs_routeopt_route(p, choice, f, &r, &err), &err);
        CHECK(r.n == h && memcmp(r.links, pl, (size_t)h * sizeof(int32_t)) == 0);
        fs_route_free(&r);
      }
      /* the lower bound: flows per leaf over its uplink cables (leaf of a
       * host: the switch its first candidate path enters first) */
      int32_t *up = calloc((size_t)t->n_nodes, sizeof(int32_t));
      int32_t *down = calloc((size_t)t->n_nodes, sizeof(int32_t));
      int32_t cables = 0, bound = 1;
      for (int32_t f = 0; f < tr.n_flows; f++) {
        int32_t h, a = -1, b = -1;
        const int32_t *pl = fs_routeopt_path(p, f, 0, &h);
        for (int32_t i = 0; i < h; i++) {
          const fs_link *lk = &t->links[pl[i]];
          if (t->nodes[lk->from].kind == FS_NODE_SWITCH &&
              t->nodes[lk->to].kind == FS_NODE_SWITCH) {
            if (a < 0) a = lk->from;
            b = lk->to;
          }
        }
        if (a < 0) continue;
        if (!cables) {
          for (int32_t i = t->out_start[a]; i < t->out_start[a + 1]; i++)
            cables += t->nodes[t->links[t->out_links[i]].to].kind == FS_NODE_SWITCH;
        }
        up[a]++;
        down[b]++;
      }
      for (int32_t v = 0; v < t->n_nodes && cables; v++) {
        if ((up[v] + cables - 1) / cables > bound) bound = (up[v] + cables - 1) / cables;
        if ((down[v] + cables - 1) / cables > bound) bound = (down[v] + cables - 1) / cables;
      }
      free(up);
      free(down);
      /* loads are flows x host rate / fabric rate */
      double ratio = 1;
      for (int32_t l = 0; l < t->n_links; l++)
        if (t->nodes[t->links[l].from].kind == FS_NODE_SWITCH &&
            t->nodes[t->links[l].to].kind == FS_NODE_SWITCH)
          ratio = fs_routeopt_demand_bps(p, 0) / t->links[l].capacity_bps;
      if (!(me.max_link_load <= fmax(1, bound * ratio) + 1e-9))
        test_fail(__FILE__, __LINE__, "%s seed %d: edgecolor max load %.4f, bound %d x %.3f",
                  specs[si], (int)seed, me.max_link_load, bound, ratio);
      if (si < 4) {
        CHECK_REL(me.max_link_load, 1.0, 1e-9, "");
        CHECK_REL(me.min_job_tput, 1.0, 1e-9, "");
      }
      o.kind = FS_ROUTEOPT_GREEDY;
      CHECK_OK(fs_routeopt_optimize(p, &o, choice, NULL, &err), &err);
      CHECK_OK(fs_routeopt_evaluate(p, choice, &mg, NULL, NULL, &err), &err);
      CHECK(me.max_link_load <= mg.max_link_load + 1e-9);
      free(choice);
      fs_routeopt_problem_free(p);
      fs_routeopt_traffic_free(&tr);
    }
    fs_topo_free(t);
  }
}

/* Topologies that are not a 2-tier Clos: edgecolor fails with FS_EINVAL
 * naming the topology and why, and changes nothing. */
TEST(test_routeopt_edgecolor_refuses_non_clos) {
  static const char *const bad[][2] = {
      {"torus:dims=3x3", "no spine"},
      {"ring:n=6", "no spine"},
      {"fattree:k=4", "more than two tiers"},
      {"star:hosts=4", "no spine"},
      {"dragonfly:p=1", "no spine"},
      {"railonly:servers=3,gpus_per_node=2", "no spine"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    fs_topo *t = NULL;
    fs_err err = {0, ""};
    CHECK_OK(fs_topo_from_spec(bad[i][0], &t, &err), &err);
    if (!t) continue;
    int rc = fs_routeopt_edgecolor_check(t, &err);
    if (rc != FS_EINVAL || !strstr(err.msg, "2-tier Clos") || !strstr(err.msg, bad[i][1]))
      test_fail(__FILE__, __LINE__, "%s: expected FS_EINVAL naming '%s', got %d: %s", bad[i][0],
                bad[i][1], rc, err.msg);
    fs_routeopt_traffic tr;
    fs_routeopt_traffic_init(&tr);
    int32_t pairs[] = {0, 2, 1, 3};
    add_flows_job(&tr, "x", pairs, 2, 1e9);
    fs_routeopt_problem *p = NULL;
    CHECK_OK(fs_routeopt_problem_new(t, &tr, &p, &err), &err);
    if (p) {
      int32_t choice[2] = {7, 7};
      fs_routeopt_opts o = {FS_ROUTEOPT_EDGECOLOR, 0, 0, 0};
      CHECK_EQ_INT(fs_routeopt_optimize(p, &o, choice, NULL, &err), FS_EINVAL);
      CHECK(strstr(err.msg, t->family) != NULL);
    }
    fs_routeopt_problem_free(p);
    fs_routeopt_traffic_free(&tr);
    fs_topo_free(t);
  }
  /* hand-made near misses: 4 hosts on 2 leaves, 2 spines, and either a
   * leaf-leaf cable or one leaf with a second cable to a spine */
  for (int variant = 0; variant < 3; variant++) {
    fs_topo_builder b;
    fs_topo *tb = NULL;
    fs_err e2 = {0, ""};
    CHECK_OK(fs_topo_builder_init(&b, "file", 8, 16, &e2), &e2);
    for (int i = 0; i < 4; i++) fs_topo_builder_node(&b, FS_NODE_HOST, 0, i, -1);
    for (int i = 0; i < 2; i++) fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, i, i);
    for (int i = 0; i < 2; i++) fs_topo_builder_node(&b, FS_NODE_SWITCH, 2, i, -1);
    for (int i = 0; i < 4; i++) fs_topo_builder_cable(&b, i, 4 + i / 2, 1e11, 1000);
    for (int l = 0; l < 2; l++)
      for (int sp = 0; sp < 2; sp++) fs_topo_builder_cable(&b, 4 + l, 6 + sp, 1e11, 1000);
    if (variant == 1) fs_topo_builder_cable(&b, 4, 5, 1e11, 1000);
    if (variant == 2) fs_topo_builder_cable(&b, 5, 7, 1e11, 1000);
    CHECK_OK(fs_topo_builder_finish(&b, &tb, &e2), &e2);
    if (!tb) continue;
    int rc = fs_routeopt_edgecolor_check(tb, &e2);
    static const char *const want[] = {"", "leaves switch0 and switch1 are cabled together",
                                       "leaf switch1 has 1 cables to spine switch0 but 2"};
    if (variant == 0)
      CHECK_OK(rc, &e2);
    else if (rc != FS_EINVAL || !strstr(e2.msg, want[variant]))
      test_fail(__FILE__, __LINE__, "variant %d: expected '%s', got %d: %s", variant,
                want[variant], rc, e2.msg);
    fs_topo_free(tb);
  }
  /* a 2-tier clos family qualifies */
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_from_spec("clos:tiers=2,edges_per_pod=3,hosts_per_edge=2,edge_uplinks=2", &t,
                             &err),
           &err);
  if (t) CHECK_OK(fs_routeopt_edgecolor_check(t, &err), &err);
  fs_topo_free(t);
}

/* ---- k-shortest candidates ---------------------------------------------- */

/* Every simple path from host s to host d that forwards only through
 * non-hosts, by depth-first search: its hop count appended to len[]. */
static void all_simple(const fs_topo *t, int32_t v, int32_t d, int32_t depth, uint8_t *on,
                       int32_t *len, int32_t *n, int32_t cap) {
  if (v == d) {
    if (*n < cap) len[(*n)++] = depth;
    return;
  }
  if (depth > 0 && t->nodes[v].kind == FS_NODE_HOST) return;
  on[v] = 1;
  for (int32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++) {
    int32_t w = t->links[t->out_links[i]].to;
    if (!on[w]) all_simple(t, w, d, depth + 1, on, len, n, cap);
  }
  on[v] = 0;
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Yen's paths against a brute-force enumeration of all simple paths on
 * small graphs: each is a simple host-to-host walk over existing links that
 * never forwards through a host, they are distinct, sorted by length, and
 * their lengths are the shortest ones the enumeration finds (count
 * max(K, equal-cost paths), or all of them if fewer). */
TEST(test_routeopt_kshortest_vs_brute_force) {
  static const char *const specs[] = {
      "ring:n=6",       "torus:dims=3x3",
      "torus:dims=2x3", "dragonfly:a=2,p=1,h=1,g=3",
      "fullmesh:n=4",   "leafspine:leaves=3,spines=2,hosts_per_leaf=2,gpus_per_node=2"};
  static const int32_t ks[] = {1, 2, 3, 5, 8, 20};
  enum { CAP = 200000 };
  int32_t *len = malloc(CAP * sizeof(*len));
  for (int si = 0; si < 6; si++) {
    fs_topo *t = NULL;
    fs_err err = {0, ""};
    CHECK_OK(fs_topo_from_spec(specs[si], &t, &err), &err);
    if (!t) continue;
    /* flows: host 0 to every other host, and the last to the first ones */
    fs_routeopt_traffic tr;
    fs_routeopt_traffic_init(&tr);
    fs_routeopt_flow fl[64];
    int32_t nf = 0;
    for (int32_t h = 1; h < t->n_hosts && nf < 60; h++) fl[nf++] = (fs_routeopt_flow){0, h, 1e6, 0};
    fl[nf++] = (fs_routeopt_flow){t->n_hosts - 1, 1, 1e6, 0};
    CHECK_OK(fs_routeopt_traffic_add_phase_job(&tr, "pairs", fl, nf, 1, &err), &err);
    uint8_t *on = calloc((size_t)t->n_nodes, 1);
    for (int ki = 0; ki < 6; ki++) {
      fs_routeopt_problem_opts po = {FS_ROUTEOPT_PATHS_KSHORTEST, ks[ki]};
      fs_routeopt_problem *p = NULL, *pe = NULL;
      CHECK_OK(fs_routeopt_problem_new_opts(t, &tr, &po, &p, &err), &err);
      CHECK_OK(fs_routeopt_problem_new(t, &tr, &pe, &err), &err);
      if (!p || !pe) {
        fs_routeopt_problem_free(p);
        fs_routeopt_problem_free(pe);
        continue;
      }
      for (int32_t f = 0; f < nf; f++) {
        int32_t n = 0;
        all_simple(t, fl[f].src, fl[f].dst, 0, on, len, &n, CAP);
        CHECK(n < CAP);
        qsort(len, (size_t)n, sizeof(*len), cmp_i32);
        int32_t want = ks[ki] > fs_routeopt_n_paths(pe, f) ? ks[ki] : fs_routeopt_n_paths(pe, f);
        if (want > n) want = n;
        int32_t np = fs_routeopt_n_paths(p, f);
        if (np != want) {
          test_fail(__FILE__, __LINE__, "%s k=%d flow %d->%d: %d paths, expected %d", specs[si],
                    ks[ki], fl[f].src, fl[f].dst, np, want);
          continue;
        }
        for (int32_t c = 0; c < np; c++) {
          int32_t h;
          const int32_t *pl = fs_routeopt_path(p, f, c, &h);
          CHECK_EQ_CTX(h, len[c], specs[si]);
          /* a walk from src to dst, no node twice, no host inside */
          int ok = t->links[pl[0]].from == fl[f].src && t->links[pl[h - 1]].to == fl[f].dst;
          memset(on, 0, (size_t)t->n_nodes);
          on[fl[f].src] = 1;
          for (int32_t i = 0; i < h && ok; i++) {
            int32_t w = t->links[pl[i]].to;
            if (i > 0 && t->links[pl[i]].from != t->links[pl[i - 1]].to) ok = 0;
            if (on[w] || (i + 1 < h && t->nodes[w].kind == FS_NODE_HOST)) ok = 0;
            on[w] = 1;
          }
          memset(on, 0, (size_t)t->n_nodes);
          if (!ok) test_fail(__FILE__, __LINE__, "%s: flow %d path %d is not a simple path",
                             specs[si], f, c);
          for (int32_t c2 = 0; c2 < c; c2++) {
            int32_t h2;
            const int32_t *p2 = fs_routeopt_path(p, f, c2, &h2);
            CHECK(h2 <= h);
            CHECK(!(h2 == h && memcmp(p2, pl, (size_t)h * sizeof(int32_t)) == 0));
          }
        }
      }
      fs_routeopt_problem_free(p);
      fs_routeopt_problem_free(pe);
    }
    free(on);
    fs_routeopt_traffic_free(&tr);
    fs_topo_free(t);
  }
  free(len);
  /* a K out of range is refused */
  fs_topo *t = leafspine(2, 2, 2, 100, 100);
  fs_routeopt_traffic tr;
  fs_routeopt_traffic_init(&tr);
  int32_t pairs[] = {0, 2};
  add_flows_job(&tr, "x", pairs, 1, 1e9);
  fs_routeopt_problem_opts po = {FS_ROUTEOPT_PATHS_KSHORTEST, 0};
  fs_routeopt_problem *p = NULL;
  fs_err err = {0, ""};
  CHECK_EQ_INT(fs_routeopt_problem_new_opts(t, &tr, &po, &p, &err), FS_EINVAL);
  CHECK(p == NULL);
  po.k = FS_ROUTEOPT_MAX_K + 1;
  CHECK_EQ_INT(fs_routeopt_problem_new_opts(t, &tr, &po, &p, &err), FS_EINVAL);
  fs_routeopt_traffic_free(&tr);
  fs_topo_free(t);
}

/* A ring of 8 where every chip sends to the one 3 ahead: one shortest path
 * each, so every clockwise link carries 3 flows (max load 3) whatever the
 * optimiser. With the 2 shortest paths each flow may also go the long way
 * (5 hops); greedy must then do strictly better (a third of the flows
 * counter-clockwise gives 15/8 per link, so 2 is reachable), and its
 * routing stays an assignment (max load >= the split's lower bound). */
TEST(test_routeopt_kshortest_ring_beats_ecmp) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_from_spec("ring:n=8,gbps=100,host_gbps=100", &t, &err), &err);
  if (!t) return;
  fs_routeopt_traffic tr;
  fs_routeopt_traffic_init(&tr);
  int32_t pairs[16];
  for (int32_t i = 0; i < 8; i++) {
    pairs[2 * i] = i;
    pairs[2 * i + 1] = (i + 3) % 8;
  }
  add_flows_job(&tr, "shift3", pairs, 8, 1e9);
  fs_routeopt_problem *pe = NULL, *pk = NULL;
  fs_routeopt_problem_opts po = {FS_ROUTEOPT_PATHS_KSHORTEST, 2};
  CHECK_OK(fs_routeopt_problem_new(t, &tr, &pe, &err), &err);
  CHECK_OK(fs_routeopt_problem_new_opts(t, &tr, &po, &pk, &err), &err);
  if (pe && pk) {
    int32_t choice[8];
    fs_routeopt_metric me, mk, ms;
    fs_routeopt_opts o = {FS_ROUTEOPT_GREEDY, 0, 0, 0};
    CHECK_OK(fs_routeopt_optimize(pe, &o, choice, NULL, &err), &err);
    CHECK_OK(fs_routeopt_evaluate(pe, choice, &me, NULL, NULL, &err), &err);
    CHECK_REL(me.max_link_load, 3.0, 1e-9, "");
    CHECK_EQ_INT(fs_routeopt_n_paths(pk, 0), 2);
    CHECK_OK(fs_routeopt_optimize(pk, &o, choice, NULL, &err), &err);
    CHECK_OK(fs_routeopt_evaluate(pk, choice, &mk, NULL, NULL, &err), &err);
    if (!(mk.max_link_load < me.max_link_load - 1e-9))
      test_fail(__FILE__, __LINE__, "greedy k=2 max load %.4f not below equal-cost %.4f",
                mk.max_link_load, me.max_link_load);
    CHECK_REL(mk.max_link_load, 2.0, 1e-9, "");
    CHECK(mk.min_job_tput > me.min_job_tput + 1e-9);
    /* spray over the two candidates: each link of a flow's two ways
     * carries half of it, in the engine route as in the metric */
    o.kind = FS_ROUTEOPT_SPRAY;
    CHECK_OK(fs_routeopt_optimize(pk, &o, choice, NULL, &err), &err);
    CHECK_OK(fs_routeopt_evaluate(pk, choice, &ms, NULL, NULL, &err), &err);
    /* per direction: 8 flows x 3 hops / 2 cw, 8 x 5 / 2 ccw over 8 links */
    CHECK_REL(ms.max_link_load, 2.5, 1e-9, "");
    fs_route r;
    fs_route_init(&r);
    CHECK_OK(fs_routeopt_route(pk, choice, 0, &r, &err), &err);
    CHECK_REL(r.n_paths, 2, 1e-12, "paths");
    double wsum = 0;
    int32_t n_half = 0;
    for (int32_t i = 0; i < r.n; i++) {
      wsum += r.weights[i];
      n_half += fabs(r.weights[i] - 0.5) < 1e-12;
    }
    CHECK_EQ_INT(r.hops, 5 + 2);
    /* two host links (weight 1), 3 + 5 ring links (weight 1/2) */
    CHECK_EQ_INT(r.n, 10);
    CHECK_EQ_INT(n_half, 8);
    CHECK_REL(wsum, 2 + 8 * 0.5, 1e-12, "");
    fs_route_free(&r);
  }
  fs_routeopt_problem_free(pe);
  fs_routeopt_problem_free(pk);
  fs_routeopt_traffic_free(&tr);
  fs_topo_free(t);
}

/* Exact over k-shortest candidates equals the brute force over every
 * assignment on a 3x3 torus (flows of unequal lengths of path). */
TEST(test_routeopt_kshortest_exact_equals_brute_force) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_from_spec("torus:dims=3x3", &t, &err), &err);
  if (!t) return;
  int spread = 0;
  for (uint64_t seed = 1; seed <= 4; seed++) {
    uint64_t s = seed * 97;
    int32_t pairs[10];
    for (int32_t i = 0; i < 5; i++) {
      pairs[2 * i] = (int32_t)(lcg(&s) % 9);
      do pairs[2 * i + 1] = (int32_t)(lcg(&s) % 9);
      while (pairs[2 * i + 1] == pairs[2 * i]);
    }
    fs_routeopt_traffic tr;
    fs_routeopt_traffic_init(&tr);
    add_flows_job(&tr, "a", pairs, 3, 1e9);
    add_flows_job(&tr, "b", pairs + 6, 2, 5e8);
    fs_routeopt_problem_opts po = {FS_ROUTEOPT_PATHS_KSHORTEST, 3};
    fs_routeopt_problem *p = NULL;
    CHECK_OK(fs_routeopt_problem_new_opts(t, &tr, &po, &p, &err), &err);
    if (p) {
      int32_t choice[5] = {0}, best[5];
      double best_load = INFINITY, worst = 0;
      do {
        fs_routeopt_metric m;
        CHECK_OK(fs_routeopt_evaluate(p, choice, &m, NULL, NULL, &err), &err);
        best_load = fmin(best_load, m.max_link_load);
        worst = fmax(worst, m.max_link_load);
      } while (next_assignment(p, choice));
      spread += worst > best_load + 1e-9;
      fs_routeopt_opts o = {FS_ROUTEOPT_EXACT, 0, 0, 0};
      fs_routeopt_stats st;
      fs_routeopt_metric m;
      CHECK_OK(fs_routeopt_optimize(p, &o, best, &st, &err), &err);
      CHECK_OK(fs_routeopt_evaluate(p, best, &m, NULL, NULL, &err), &err);
      CHECK_REL(m.max_link_load, best_load, 1e-9, "");
      o.kind = FS_ROUTEOPT_GREEDY;
      CHECK_OK(fs_routeopt_optimize(p, &o, best, &st, &err), &err);
      CHECK_OK(fs_routeopt_evaluate(p, best, &m, NULL, NULL, &err), &err);
      CHECK(m.max_link_load >= best_load - 1e-9);
      for (int kind = FS_ROUTEOPT_ECMP; kind <= FS_ROUTEOPT_RANDOM; kind++) {
        o.kind = (fs_routeopt_kind)kind;
        o.seed = seed;
        CHECK_OK(fs_routeopt_optimize(p, &o, best, NULL, &err), &err);
        CHECK_OK(fs_routeopt_evaluate(p, best, &m, NULL, NULL, &err), &err);
      }
    }
    fs_routeopt_problem_free(p);
    fs_routeopt_traffic_free(&tr);
  }
  CHECK(spread >= 2);
  fs_topo_free(t);
}

TEST(test_routeopt_cli_paths_and_edgecolor) {
  char out[16384];
  const char *ls = "--topo leafspine:leaves=8,spines=8,hosts_per_leaf=8";
  char cmd[1024];
  /* all on a leaf-spine: edgecolor is a column, non-blocking like greedy */
  snprintf(cmd, sizeof(cmd), "route --jobs examples/jobs-4dp.json %s --seeds 3 --format json", ls);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0);
  const char *ec = strstr(out, "\"optimizer\": \"edgecolor\"");
  CHECK(ec != NULL);
  if (ec) CHECK(strncmp(strstr(ec, "min_job_throughput") ? strstr(ec, "min_job_throughput") : "",
                        "min_job_throughput\": 1,", 22) == 0);
  CHECK(strstr(out, "\"paths\": \"ecmp\"") != NULL);
  /* all on a ring: no edgecolor column; k-shortest candidates */
  CHECK_EQ_INT(test_run_cli("route --jobs examples/jobs-ring.json --topo ring:n=8 --paths "
                            "kshortest --k 2 --seeds 3 --format json",
                            "2>&1", out, sizeof(out)),
               0);
  CHECK(strstr(out, "edgecolor") == NULL);
  CHECK(strstr(out, "\"paths\": \"kshortest\", \"k\": 2") != NULL);
  CHECK(strstr(out, "\"optimizer\": \"greedy\"") != NULL);
  CHECK_EQ_INT(test_run_cli("route --jobs examples/jobs-ring.json --topo ring:n=8 --paths "
                            "kshortest --k 2 --optimizer greedy",
                            "2>&1", out, sizeof(out)),
               0);
  CHECK(strstr(out, "the 2 shortest loop-free paths") != NULL);
  /* edgecolor by name on a torus: exit 2 saying why */
  CHECK_EQ_INT(test_run_cli("route --jobs examples/jobs-ring.json --topo torus:dims=3x3 "
                            "--optimizer edgecolor",
                            "2>&1", out, sizeof(out)),
               2);
  CHECK(strstr(out, "2-tier Clos") != NULL);
  static const char *const bad[][2] = {
      {"--paths shortest", "--paths"}, {"--paths kshortest --k 0", "--k"},
      {"--paths kshortest --k 65", "--k"}, {"--k 2", "--paths kshortest only"}};
  for (int i = 0; i < 4; i++) {
    snprintf(cmd, sizeof(cmd), "route --jobs examples/jobs-ring.json --topo ring:n=8 %s",
             bad[i][0]);
    CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 2);
    if (!strstr(out, bad[i][1]))
      test_fail(__FILE__, __LINE__, "'%s': expected a message naming %s, got %s", bad[i][0],
                bad[i][1], out);
  }
}

/* Phases that share only some concurrent sets are coloured apart and then
 * rotated over the spines. 2 leaves x 2 spines x 2 hosts: job A has phase
 * 0 h0 -> h2 (across) and phase 1 h0 -> h1 (inside leaf 0); job B one
 * phase h1 -> h3 (across), in both sets. A0 alone takes colour 0 = spine
 * 0; B, coloured alone, would take spine 0 too (load 2 in set 0), so the
 * rotation must move it to spine 1: every link at load 1, B at its ideal
 * time. */
TEST(test_routeopt_edgecolor_rotates_phase_groups) {
  fs_topo *t = leafspine(2, 2, 2, 100, 100);
  fs_routeopt_traffic tr;
  fs_routeopt_traffic_init(&tr);
  fs_err err = {0, ""};
  fs_routeopt_flow a0 = {0, 2, 1e9, 0}, a1 = {0, 1, 1e9, 0}, b = {1, 3, 1e9, 0};
  CHECK_OK(fs_routeopt_traffic_add_phase_job(&tr, "A", &a0, 1, 1, &err), &err);
  CHECK_OK(fs_routeopt_traffic_add_phase(&tr, &a1, 1, 1, &err), &err);
  CHECK_OK(fs_routeopt_traffic_add_phase_job(&tr, "B", &b, 1, 1, &err), &err);
  fs_routeopt_problem *p = NULL;
  CHECK_OK(fs_routeopt_problem_new(t, &tr, &p, &err), &err);
  if (p) {
    int32_t choice[3];
    fs_routeopt_opts o = {FS_ROUTEOPT_EDGECOLOR, 0, 0, 0};
    fs_routeopt_metric m;
    double js[2], ji[2];
    CHECK_OK(fs_routeopt_optimize(p, &o, choice, NULL, &err), &err);
    CHECK_OK(fs_routeopt_evaluate(p, choice, &m, js, ji, &err), &err);
    CHECK(choice[0] != choice[2]);
    CHECK_REL(m.max_link_load, 1.0, 1e-12, "");
    CHECK_REL(js[1], ji[1], 1e-12, "s");
    /* the same flows with B's spine forced onto A0's: load 2 (the test
     * can fail) */
    choice[2] = choice[0];
    CHECK_OK(fs_routeopt_evaluate(p, choice, &m, NULL, NULL, &err), &err);
    CHECK_REL(m.max_link_load, 2.0, 1e-12, "");
  }
  fs_routeopt_problem_free(p);
  fs_routeopt_traffic_free(&tr);
  fs_topo_free(t);
}
