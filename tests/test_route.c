/* Routing tests: equal-cost path counts against the fat-tree and leaf-spine
 * formulas and a brute-force DFS, ECMP determinism and spread, spraying
 * weights (flow conservation), and spray's full-bisection result. */
#include <stdlib.h>
#include <string.h>

#include "fabricsim/route.h"
#include "fabricsim/sim.h"
#include "fabricsim/topo.h"
#include "test.h"
#include "topo_oracle.h"

static fs_topo *fattree(int k) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_fattree(k, 100, 1000, &t, &err), &err);
  return t;
}

/* Checks that a single-path route is a walk src -> dst of `hops` links. */
static void check_walk(const fs_topo *t, const fs_route *r, int32_t src, int32_t dst,
                       int32_t hops) {
  CHECK_EQ_INT(r->n, hops);
  CHECK_EQ_INT(r->hops, hops);
  int32_t v = src;
  int64_t lat = 0;
  for (int32_t i = 0; i < r->n; i++) {
    CHECK_EQ_INT(t->links[r->links[i]].from, v);
    v = t->links[r->links[i]].to;
    lat += t->links[r->links[i]].latency_ns;
  }
  CHECK_EQ_INT(v, dst);
  CHECK_EQ_INT(r->latency_ns, lat);
}

TEST(test_route_fattree_path_counts) {
  for (int k = 4; k <= 8; k += 2) {
    fs_topo *t = fattree(k);
    fs_router *r;
    fs_err err = {0, ""};
    CHECK_OK(fs_router_new(t, &r, &err), &err);
    int h = k / 2, per_pod = h * h;
    /* same edge switch, same pod other edge, other pod */
    CHECK_EQ_INT(fs_route_dist(r, 0, 1), 2);
    CHECK_REL(fs_route_count_paths(r, 0, 1), 1, 0, "paths");
    CHECK_EQ_INT(fs_route_dist(r, 0, h), 4);
    CHECK_REL(fs_route_count_paths(r, 0, h), h, 0, "paths");
    CHECK_EQ_INT(fs_route_dist(r, 0, per_pod), 6);
    CHECK_REL(fs_route_count_paths(r, 0, per_pod), h * h, 0, "paths");
    CHECK_REL(fs_route_count_paths(r, 0, per_pod), oracle_path_count(t, 0, per_pod, 6), 0, "paths");
    CHECK_REL(fs_route_count_paths(r, h, 0), oracle_path_count(t, h, 0, 4), 0, "paths");
    fs_router_free(r);
    fs_topo_free(t);
  }
}

TEST(test_route_leafspine_multi_cable_counts) {
  fs_leafspine_params p = {3, 4, 2, 100, 50, 2, 10};
  fs_topo *t = NULL;
  fs_router *r;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_leafspine(&p, &t, &err), &err);
  CHECK_OK(fs_router_new(t, &r, &err), &err);
  /* spines * cables^2 paths between leaves: each path picks a spine and
   * one cable up and one down. */
  CHECK_REL(fs_route_count_paths(r, 0, 2), 4 * 2 * 2, 0, "paths");
  CHECK_REL(fs_route_count_paths(r, 0, 5), oracle_path_count(t, 0, 5, 4), 0, "paths");
  CHECK_REL(fs_route_count_paths(r, 0, 1), 1, 0, "paths");
  fs_router_free(r);
  fs_topo_free(t);
}

TEST(test_route_ecmp_deterministic_and_seeded) {
  fs_topo *t = fattree(8);
  fs_router *r;
  fs_err err = {0, ""};
  fs_router_new(t, &r, &err);
  fs_route a, b;
  fs_route_init(&a);
  fs_route_init(&b);
  int32_t src = 3, dst = 100;
  int distinct_core = 0;
  int32_t seen[64];
  for (uint64_t seed = 1; seed <= 40; seed++) {
    CHECK_OK(fs_route_ecmp(r, src, dst, seed, 77, &a, &err), &err);
    CHECK_OK(fs_route_ecmp(r, src, dst, seed, 77, &b, &err), &err);
    check_walk(t, &a, src, dst, 6);
    CHECK(a.n == b.n && memcmp(a.links, b.links, (size_t)a.n * sizeof(int32_t)) == 0);
    int32_t core = t->links[a.links[2]].to; /* 3rd hop lands on a core */
    int dup = 0;
    for (int i = 0; i < distinct_core; i++) dup |= seen[i] == core;
    if (!dup) seen[distinct_core++] = core;
  }
  /* 40 draws over 16 cores: all 40 equal would mean no seeding at all. */
  CHECK(distinct_core >= 8);
  fs_route_free(&a);
  fs_route_free(&b);
  fs_router_free(r);
  fs_topo_free(t);
}

TEST(test_route_ecmp_spreads_uniformly) {
  fs_topo *t = fattree(4);
  fs_router *r;
  fs_err err = {0, ""};
  fs_router_new(t, &r, &err);
  fs_route a;
  fs_route_init(&a);
  int count[64] = {0};
  int n = 8000;
  for (int key = 0; key < n; key++) {
    fs_route_ecmp(r, 0, 15, 1, (uint64_t)key, &a, &err);
    int32_t core = t->links[a.links[2]].to - (t->n_nodes - 4);
    CHECK(core >= 0 && core < 4);
    if (core >= 0 && core < 4) count[core]++;
  }
  /* Each of the 4 paths expects 2000, sd ~39; allow 6 sd. */
  for (int c = 0; c < 4; c++) CHECK(abs(count[c] - n / 4) < 240);
  fs_route_free(&a);
  fs_router_free(r);
  fs_topo_free(t);
}

TEST(test_route_spray_weights_conserve_flow) {
  fs_topo *t = fattree(6);
  fs_router *r;
  fs_err err = {0, ""};
  fs_router_new(t, &r, &err);
  fs_route s;
  fs_route_init(&s);
  CHECK_OK(fs_route_spray(r, 1, 40, &s, &err), &err);
  CHECK_REL(s.n_paths, 9, 0, "paths");
  double *net = calloc((size_t)t->n_nodes, sizeof(double));
  for (int32_t i = 0; i < s.n; i++) {
    net[t->links[s.links[i]].from] -= s.weights[i];
    net[t->links[s.links[i]].to] += s.weights[i];
  }
  CHECK_REL(net[1], -1, 1e-12, "flow");
  CHECK_REL(net[40], 1, 1e-12, "flow");
  for (int32_t v = 0; v < t->n_nodes; v++)
    if (v != 1 && v != 40) CHECK(fabs(net[v]) < 1e-12);
  /* 1 up-link, 3 edge->agg, 9 agg->core, 9 core->agg, 3 agg->edge, 1 down. */
  CHECK_EQ_INT(s.n, 26);
  free(net);
  fs_route_free(&s);
  fs_router_free(r);
  fs_topo_free(t);
}

/* Spray weights against path counting (topo_oracle.h): a link u -> w
 * carries the share of shortest paths through it, paths(src -> u) x
 * paths(w -> dst) / paths(src -> dst), for every ordered pair of hosts on
 * fabrics of single-homed hosts (whose routes the router composes from a
 * memoised switch-to-switch DAG, paths.c spray_composed), hosts on one
 * switch and several links per spine included; the latency is the longest
 * path's. Routes asked twice are equal (the memo's second use). */
TEST(test_route_spray_matches_path_counts) {
  static const char *const specs[] = {"fattree:k=4", "leafspine:leaves=3,spines=2,hosts_per_leaf=2,links_per_spine=2",
                                      "clos:pods=2,edges_per_pod=2,hosts_per_edge=2"};
  for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++) {
    fs_topo *t = oracle_spec(specs[k]);
    if (!t) continue;
    fs_router *r = NULL;
    fs_err err = {0, ""};
    CHECK_OK(fs_router_new(t, &r, &err), &err);
    int32_t *dist = malloc((size_t)t->n_nodes * sizeof(int32_t));
    int32_t *q = malloc((size_t)t->n_nodes * sizeof(int32_t));
    fs_route a, b;
    fs_route_init(&a);
    fs_route_init(&b);
    for (int32_t src = 0; src < t->n_hosts && r; src++)
      for (int32_t dst = 0; dst < t->n_hosts; dst++) {
        if (src == dst) continue;
        CHECK_OK(fs_route_spray(r, src, dst, &a, &err), &err);
        CHECK_OK(fs_route_spray(r, src, dst, &b, &err), &err);
        CHECK_EQ_INT(a.n, b.n);
        for (int32_t i = 0; i < a.n && a.n == b.n; i++)
          CHECK(a.links[i] == b.links[i] && a.weights[i] == b.weights[i]);
        oracle_bfs(t, src, 0, dist, q);
        int32_t hops = dist[dst];
        double total = oracle_path_count(t, src, dst, hops);
        CHECK_REL(a.n_paths, total, 0, "paths");
        double sum_out = 0;
        for (int32_t i = 0; i < a.n; i++) {
          const fs_link *l = &t->links[a.links[i]];
          int32_t d = dist[l->from];
          double ways = (l->from == src ? 1 : oracle_path_count(t, src, l->from, d)) *
                        (l->to == dst ? 1 : oracle_path_count(t, l->to, dst, hops - d - 1));
          CHECK_REL(a.weights[i], ways / total, 1e-12, "");
          if (l->from == src) sum_out += a.weights[i];
        }
        CHECK_REL(sum_out, 1, 1e-12, "");
        CHECK_EQ_INT(a.hops, hops);
      }
    fs_route_free(&a);
    fs_route_free(&b);
    free(dist);
    free(q);
    fs_router_free(r);
    fs_topo_free(t);
  }
}

TEST(test_route_explicit_validates) {
  fs_topo *t = fattree(4);
  fs_router *r;
  fs_err err = {0, ""};
  fs_router_new(t, &r, &err);
  fs_route a;
  fs_route_init(&a);
  int32_t edge0 = 16; /* hosts 0..15, then edges */
  int32_t good[] = {0, edge0, 1};
  CHECK_OK(fs_route_explicit(r, good, 3, &a, &err), &err);
  check_walk(t, &a, 0, 1, 2);
  int32_t bad[] = {0, edge0 + 1, 2};
  CHECK_EQ_INT(fs_route_explicit(r, bad, 3, &a, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "no link") != NULL);
  int32_t via_host[] = {0, edge0, 1, edge0, 2};
  CHECK_EQ_INT(fs_route_explicit(r, via_host, 5, &a, &err), FS_EINVAL);
  fs_route_free(&a);
  fs_router_free(r);
  fs_topo_free(t);
}

/* Spraying a permutation across pods on a non-blocking fat-tree: every flow
 * gets the full host rate, the ideal full-bisection result. */
TEST(test_route_spray_permutation_is_full_bisection) {
  fs_topo *t = fattree(4);
  fs_router *r;
  fs_sim *s;
  fs_err err = {0, ""};
  fs_router_new(t, &r, &err);
  fs_sim_new(t, &s, &err);
  fs_route rt;
  fs_route_init(&rt);
  double B = 1e7;
  /* Shift by one pod plus a rotation inside the pod: a permutation. */
  for (int32_t h = 0; h < 16; h++) {
    int32_t dst = ((h / 4 + 1) % 4) * 4 + (h + 1) % 4;
    CHECK_OK(fs_route_spray(r, h, dst, &rt, &err), &err);
    CHECK(fs_sim_add_flow(s, h, dst, B, 0, &rt, &err) >= 0);
  }
  CHECK_OK(fs_sim_run(s, NULL, &err), &err);
  for (int32_t i = 0; i < 16; i++)
    CHECK_REL(fs_sim_finish_s(s, i), B * 8 / 100e9 + 6e-6, 1e-9, "s");
  fs_route_free(&rt);
  fs_sim_free(s);
  fs_router_free(r);
  fs_topo_free(t);
}
