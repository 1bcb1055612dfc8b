/* Tests of the topology zoo (railopt, railonly, torus, ring, fullmesh,
 * dragonfly, file): counts against each family's formula, bisection
 * against closed forms, router distances and hop statistics against a BFS
 * oracle, ECMP routes on every family, rail-only collectives (within a
 * rail: only that rail; across rails: through the scale-up domain), spec
 * and export/import round trips, validation messages and the cost table. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabricsim/coll.h"
#include "fabricsim/route.h"
#include "fabricsim/sim.h"
#include "fabricsim/topo.h"
#include "test.h"
#include "topo_oracle.h"

static int32_t count_kind(const fs_topo *t, fs_node_kind k, int32_t tier) {
  int32_t n = 0;
  for (int32_t v = 0; v < t->n_nodes; v++)
    n += t->nodes[v].kind == k && (tier < 0 || t->nodes[v].tier == tier);
  return n;
}

TEST(test_topo_zoo_counts_match_formulas) {
  char s[256];
  /* fat-tree: 5k^2/4 switches, k^3/4 hosts */
  for (int k = 2; k <= 12; k += 2) {
    snprintf(s, sizeof(s), "fattree:k=%d", k);
    fs_topo *t = oracle_spec(s);
    if (!t) continue;
    CHECK_EQ_CTX(count_kind(t, FS_NODE_SWITCH, -1), 5 * k * k / 4, s);
    CHECK_EQ_CTX(t->n_hosts, k * k * k / 4, s);
    fs_topo_free(t);
  }
  /* railopt: S servers of G, SU of u: S*G/u*... leaves = S/u * G */
  static const int ro[][4] = {{4, 8, 2, 3}, {64, 8, 32, 16}, {12, 4, 3, 2}, {6, 1, 2, 1}};
  for (size_t i = 0; i < sizeof(ro) / sizeof(ro[0]); i++) {
    int S = ro[i][0], G = ro[i][1], u = ro[i][2], sp = ro[i][3];
    snprintf(s, sizeof(s), "railopt:servers=%d,gpus_per_node=%d,servers_per_su=%d,spines=%d", S,
             G, u, sp);
    fs_topo *t = oracle_spec(s);
    if (!t) continue;
    int gpus = S * G, leaves = S / u * G, server = G > 1;
    CHECK_EQ_CTX(t->n_hosts, gpus, s);
    CHECK_EQ_CTX(count_kind(t, FS_NODE_SWITCH, 1), leaves, s);
    CHECK_EQ_CTX(count_kind(t, FS_NODE_SWITCH, 2), sp, s);
    CHECK_EQ_CTX(count_kind(t, FS_NODE_NIC, -1), server ? gpus : 0, s);
    CHECK_EQ_CTX(count_kind(t, FS_NODE_SCALEUP, -1), server ? S : 0, s);
    CHECK_EQ_CTX(t->n_links / 2, gpus + leaves * sp + (server ? 2 * gpus : 0), s);
    /* GPU i's NIC hangs off rail i % G of its SU */
    for (int32_t g = 0; g < gpus; g++) {
      int32_t port = server ? t->nic0 + g : g, leaf = -1;
      for (int32_t j = t->out_start[port]; j < t->out_start[port + 1]; j++) {
        int32_t w = t->links[t->out_links[j]].to;
        if (t->nodes[w].kind == FS_NODE_SWITCH) leaf = w;
      }
      CHECK_EQ_CTX(leaf, gpus + (g / G / u) * G + g % G, s);
    }
    fs_topo_free(t);
  }
  /* railonly: G rail switches, PXN cables one per GPU */
  for (int S = 1; S <= 9; S += 4) {
    snprintf(s, sizeof(s), "railonly:servers=%d,gpus_per_node=4", S);
    fs_topo *t = oracle_spec(s);
    if (!t) continue;
    CHECK_EQ_CTX(count_kind(t, FS_NODE_SWITCH, -1), 4, s);
    CHECK_EQ_CTX(count_kind(t, FS_NODE_SWITCH, 2), 0, s);
    CHECK_EQ_CTX(t->n_links / 2, 4 * S * 4, s);
    fs_topo_free(t);
  }
  /* torus: router cables = dims * product (dims of size 2: half) */
  static const int tor[][4] = {{2, 4, 4, 0}, {3, 4, 4, 4}, {3, 2, 3, 5}, {2, 2, 2, 0},
                               {3, 8, 4, 2}, {1, 7, 0, 0}};
  for (size_t i = 0; i < sizeof(tor) / sizeof(tor[0]); i++) {
    int nd = tor[i][0];
    int64_t n = 1, cab = 0;
    s[0] = '\0';
    snprintf(s, sizeof(s), "torus:dims=");
    for (int d = 0; d < nd; d++) {
      n *= tor[i][1 + d];
      snprintf(s + strlen(s), sizeof(s) - strlen(s), "%s%d", d ? "x" : "", tor[i][1 + d]);
    }
    for (int d = 0; d < nd; d++) cab += tor[i][1 + d] == 2 ? n / 2 : n;
    fs_topo *t = oracle_spec(s);
    if (!t) continue;
    CHECK_EQ_CTX(t->n_hosts, n, s);
    CHECK_EQ_CTX(count_kind(t, FS_NODE_SWITCH, 1), n, s);
    CHECK_EQ_CTX(t->n_links / 2, n + cab, s);
    int all3 = 1;
    for (int d = 0; d < nd; d++) all3 &= tor[i][1 + d] >= 3;
    if (all3) CHECK_EQ_CTX(t->n_links / 2 - n, nd * n, s);
    fs_topo_free(t);
  }
  for (int n = 2; n <= 9; n += 7) {
    snprintf(s, sizeof(s), "ring:n=%d", n);
    fs_topo *t = oracle_spec(s);
    if (t) CHECK_EQ_CTX(t->n_links / 2, n + (n == 2 ? 1 : n), s);
    fs_topo_free(t);
    snprintf(s, sizeof(s), "fullmesh:n=%d", n);
    t = oracle_spec(s);
    if (t) CHECK_EQ_CTX(t->n_links / 2, n + n * (n - 1) / 2, s);
    fs_topo_free(t);
  }
  /* dragonfly: balanced a = 2p = 2h, g = a*h + 1, one global cable a pair */
  for (int p = 1; p <= 4; p++) {
    snprintf(s, sizeof(s), "dragonfly:p=%d", p);
    fs_topo *t = oracle_spec(s);
    if (!t) continue;
    int a = 2 * p, h = p, g = a * h + 1;
    CHECK_EQ_CTX(count_kind(t, FS_NODE_SWITCH, 1), a * g, s);
    CHECK_EQ_CTX(t->n_hosts, a * p * g, s);
    CHECK_EQ_CTX(t->n_links / 2, a * p * g + g * a * (a - 1) / 2 + g * (g - 1) / 2, s);
    /* every router uses exactly h global ports: radix p + (a-1) + h */
    for (int32_t v = t->n_hosts; v < t->n_nodes; v++)
      CHECK_EQ_CTX(t->out_start[v + 1] - t->out_start[v], p + a - 1 + h, s);
    fs_topo_free(t);
  }
}

TEST(test_topo_zoo_bisection_matches_formulas) {
  static const char *const specs[] = {
      "fattree:k=4",         "fattree:k=8,gbps=400", "torus:dims=4x4",
      "torus:dims=4x4x4",    "torus:dims=6x4",       "torus:dims=2x4x3",
      "torus:dims=8x8x8",    "ring:n=8",             "ring:n=2",
      "ring:n=16,gbps=50",   "torus:dims=4x4,host_gbps=10"};
  for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
    fs_topo *t = oracle_spec(specs[i]);
    if (!t) continue;
    fs_topo_stats st;
    fs_err err = {0, ""};
    CHECK_OK(fs_topo_stats_compute(t, &st, &err), &err);
    double f = fs_topo_bisection_formula(t);
    CHECK(f > 0);
    CHECK_REL(st.bisection_bps, f, 1e-9, "bps");
    fs_topo_free(t);
  }
  /* hand values: torus 4x4x4 100G: 2 * 64/4 * 100G; ring 8: 2 links */
  fs_topo *t = oracle_spec("torus:dims=4x4x4,gbps=100");
  if (t) CHECK_REL(fs_topo_bisection_formula(t), 3200e9, 0, "bps");
  fs_topo_free(t);
  t = oracle_spec("ring:n=8,gbps=100");
  if (t) CHECK_REL(fs_topo_bisection_formula(t), 200e9, 0, "bps");
  fs_topo_free(t);
  t = oracle_spec("dragonfly:p=2");
  if (t) CHECK(fs_topo_bisection_formula(t) < 0);
  fs_topo_free(t);
}

static uint64_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 33;
}

/* Distances of the router, stats, and ECMP routes against the oracle. */
static void check_against_oracle(const char *s) {
  fs_topo *t = oracle_spec(s);
  if (!t) return;
  fs_err err = {0, ""};
  fs_router *r = NULL;
  fs_topo_stats st;
  CHECK_OK(fs_router_new(t, &r, &err), &err);
  CHECK_OK(fs_topo_stats_compute(t, &st, &err), &err);
  int32_t *dist = malloc((size_t)t->n_nodes * sizeof(int32_t));
  int32_t *q = malloc((size_t)t->n_nodes * sizeof(int32_t));
  int32_t *nodes = malloc(((size_t)t->n_nodes + 1) * sizeof(int32_t));
  fs_route route;
  fs_route_init(&route);
  int64_t sum = 0;
  int32_t diam = 0, bad = 0;
  uint64_t seed = 7;
  for (int32_t a = 0; r && a < t->n_hosts; a++) {
    oracle_bfs(t, a, 0, dist, q);
    for (int32_t b = 0; b < t->n_hosts; b++) {
      if (b == a) continue;
      sum += dist[b];
      if (dist[b] > diam) diam = dist[b];
      if (fs_route_dist(r, a, b) != dist[b] && bad++ < 3)
        test_fail(__FILE__, __LINE__, "%s: dist(%d, %d) = %d, BFS says %d", s, a, b,
                  fs_route_dist(r, a, b), dist[b]);
      if (lcg(&seed) % 8 == 0) {
        int rc = fs_route_ecmp(r, a, b, 1, (uint64_t)(a * 100003 + b), &route, &err);
        if (rc) {
          test_fail(__FILE__, __LINE__, "%s: ecmp %d -> %d: %s", s, a, b, err.msg);
          continue;
        }
        CHECK_EQ_CTX(route.hops, dist[b], s);
        int32_t k = fs_route_nodes(t, &route, nodes);
        CHECK_EQ_CTX(k, dist[b] + 1, s);
        if (k > 0) {
          CHECK(nodes[0] == a && nodes[k - 1] == b);
          for (int32_t i = 1; i + 1 < k; i++) CHECK(nodes[i] >= t->n_hosts);
        }
      }
    }
  }
  double H = t->n_hosts;
  CHECK_EQ_CTX(st.diameter_hops, diam, s);
  CHECK_REL(st.avg_hops, (double)sum / (H * (H - 1)), 1e-12, "hops");
  fs_route_free(&route);
  fs_router_free(r);
  free(dist);
  free(q);
  free(nodes);
  fs_topo_free(t);
}

TEST(test_topo_zoo_distances_match_bfs_on_random_sizes) {
  uint64_t seed = 12345;
  char s[256];
  for (int rep = 0; rep < 3; rep++) {
    int S = 2 + (int)(lcg(&seed) % 5), G = 1 + (int)(lcg(&seed) % 4), u = 1;
    while (u * 2 <= S && S % (u * 2) == 0 && lcg(&seed) % 2) u *= 2;
    snprintf(s, sizeof(s), "railopt:servers=%d,gpus_per_node=%d,servers_per_su=%d,spines=%d", S,
             G, u, 1 + (int)(lcg(&seed) % 3));
    check_against_oracle(s);
    snprintf(s, sizeof(s), "railonly:servers=%d,gpus_per_node=%d", S, G + 1);
    check_against_oracle(s);
    int nd = 1 + (int)(lcg(&seed) % 3);
    snprintf(s, sizeof(s), "torus:dims=");
    for (int d = 0; d < nd; d++)
      snprintf(s + strlen(s), sizeof(s) - strlen(s), "%s%d", d ? "x" : "",
               2 + (int)(lcg(&seed) % 4));
    check_against_oracle(s);
    snprintf(s, sizeof(s), "ring:n=%d", 2 + (int)(lcg(&seed) % 12));
    check_against_oracle(s);
    snprintf(s, sizeof(s), "fullmesh:n=%d", 2 + (int)(lcg(&seed) % 8));
    check_against_oracle(s);
    int p = 1 + (int)(lcg(&seed) % 2), a = 1 + (int)(lcg(&seed) % 4), h = 1 + (int)(lcg(&seed) % 2);
    snprintf(s, sizeof(s), "dragonfly:a=%d,p=%d,h=%d,g=%d", a, p, h,
             2 + (int)(lcg(&seed) % (uint64_t)(a * h)));
    check_against_oracle(s);
    snprintf(s, sizeof(s), "clos:tiers=%d,%sedges_per_pod=%d,hosts_per_edge=%d,edge_uplinks=%d%s",
             2 + rep % 2, rep % 2 ? "pods=3," : "", 1 + (int)(lcg(&seed) % 4),
             2 + (int)(lcg(&seed) % 3), 1 + (int)(lcg(&seed) % 3),
             rep % 2 ? ",agg_uplinks=2" : "");
    check_against_oracle(s);
  }
  check_against_oracle("dragonfly:p=2,gpus_per_node=2");
  check_against_oracle("railopt:servers=8,gpus_per_node=4,servers_per_su=4,spines=2");
}

/* Runs one collective on t over hosts[0..p) and returns the simulator (the
 * caller frees it) for its link byte counts. */
static fs_sim *run_coll(const fs_topo *t, fs_coll_op op, const int32_t *hosts, int32_t p) {
  fs_err err = {0, ""};
  fs_sim *sim = NULL;
  fs_router *r = NULL;
  if (fs_sim_new(t, &sim, &err) || fs_router_new(t, &r, &err)) {
    test_fail(__FILE__, __LINE__, "setup: %s", err.msg);
    fs_sim_free(sim);
    return NULL;
  }
  fs_coll_params prm;
  fs_coll_params_init(&prm);
  prm.op = op;
  prm.algo = op == FS_COLL_ALLTOALL ? FS_ALGO_DIRECT : FS_ALGO_RING;
  prm.bytes = 1 << 20;
  fs_coll_group g = {p, hosts};
  fs_coll_lowering l;
  memset(&l, 0, sizeof(l));
  l.sim = sim;
  l.router = r;
  l.mode = FS_ROUTE_ECMP;
  l.seed = 1;
  int rc = fs_coll_lower(&prm, &g, &l, &err);
  if (!rc) rc = fs_sim_run(sim, NULL, &err);
  fs_router_free(r);
  if (rc) {
    test_fail(__FILE__, __LINE__, "collective: %s", err.msg);
    fs_sim_free(sim);
    return NULL;
  }
  return sim;
}

TEST(test_topo_zoo_railonly_collectives) {
  fs_topo *t = oracle_spec("railonly:servers=6,gpus_per_node=4");
  if (!t) return;
  CHECK_EQ_INT(count_kind(t, FS_NODE_SWITCH, 2), 0); /* no spine at all */
  const int32_t G = 4, S = 6;
  int32_t hosts[6];
  /* Ring all-reduce over rail 1 (GPU 1 of every server). */
  for (int32_t s = 0; s < S; s++) hosts[s] = s * G + 1;
  fs_sim *sim = run_coll(t, FS_COLL_ALLREDUCE, hosts, S);
  if (sim) {
    const fs_sim_link_stats *ls = fs_sim_links(sim);
    int32_t rail1 = t->n_hosts + 1, off_rail = 0, on_rail = 0;
    for (int32_t l = 0; l < t->n_links; l++) {
      if (ls[l].bytes <= 0) continue;
      const fs_link *k = &t->links[l];
      int ok = 1;
      int32_t e[2] = {k->from, k->to};
      for (int i = 0; i < 2; i++) {
        int32_t v = e[i];
        const fs_node *n = &t->nodes[v];
        if (v < t->n_hosts) ok &= v % G == 1;
        else if (n->kind == FS_NODE_NIC) ok &= n->index % G == 1;
        else ok &= v == rail1;
      }
      off_rail += !ok;
      on_rail += ok && (k->to == rail1);
    }
    CHECK_EQ_INT(off_rail, 0);
    CHECK(on_rail > 0);
    fs_sim_free(sim);
  }
  /* All-to-all between GPU s % G of each server: rails differ, so every
   * message crosses a scale-up switch (at its source or destination). */
  for (int32_t s = 0; s < S; s++) hosts[s] = s * G + s % G;
  sim = run_coll(t, FS_COLL_ALLTOALL, hosts, S);
  if (sim) {
    const fs_sim_link_stats *ls = fs_sim_links(sim);
    double into_scaleup = 0, total_sent = 0;
    for (int32_t l = 0; l < t->n_links; l++) {
      const fs_link *k = &t->links[l];
      if (t->nodes[k->to].kind == FS_NODE_SCALEUP || t->nodes[k->from].kind == FS_NODE_SCALEUP)
        into_scaleup += ls[l].bytes;
      if (k->from < t->n_hosts) total_sent += ls[l].bytes;
    }
    CHECK(total_sent > 0);
    /* Pairs on different rails: each message crosses one scale-up switch
     * (two of its links), except pairs that share a rail (none here when
     * S % G differ... rails of s and s' coincide when s = s' mod G). */
    CHECK(into_scaleup > 0);
    fs_sim_free(sim);
  }
  fs_topo_free(t);
}

static int same_graph(const fs_topo *a, const fs_topo *b) {
  if (a->n_nodes != b->n_nodes || a->n_links != b->n_links || a->n_hosts != b->n_hosts ||
      a->gpus_per_node != b->gpus_per_node || a->nic0 != b->nic0 || a->scaleup0 != b->scaleup0)
    return 0;
  for (int32_t v = 0; v < a->n_nodes; v++)
    if (memcmp(&a->nodes[v], &b->nodes[v], sizeof(fs_node)) != 0) return 0;
  for (int32_t l = 0; l < a->n_links; l++) {
    const fs_link *x = &a->links[l], *y = &b->links[l];
    if (x->from != y->from || x->to != y->to || x->reverse != y->reverse ||
        x->capacity_bps != y->capacity_bps || x->latency_ns != y->latency_ns)
      return 0;
  }
  return 1;
}

TEST(test_topo_zoo_spec_round_trip) {
  static const char *const specs[] = {
      "railopt:servers=8,gpus_per_node=4,servers_per_su=4,spines=3,host_gbps=200",
      "railopt:servers=4,gpus_per_node=1,fabric_gbps=800",
      "railonly:servers=5,gpus_per_node=8,radix=64,nvlink_gbps=900",
      "torus:dims=4x3x2,gbps=200",
      "ring:n=7,host_gbps=50",
      "fullmesh:n=5",
      "dragonfly:a=4,p=2,h=2,g=5,global_gbps=50,global_latency_ns=5000",
      "dragonfly:p=2,gpus_per_node=2,inc=all",
  };
  for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
    fs_topo *t = oracle_spec(specs[i]);
    if (!t) continue;
    fs_topo *u = oracle_spec(t->spec);
    if (u) {
      if (strcmp(u->spec, t->spec) != 0)
        test_fail(__FILE__, __LINE__, "%s: respec gives %s", t->spec, u->spec);
      CHECK_EQ_CTX(u->n_nodes, t->n_nodes, t->spec);
      CHECK_EQ_CTX(u->n_links, t->n_links, t->spec);
      CHECK(same_graph(t, u));
      fs_topo_free(u);
    }
    fs_topo_free(t);
  }
}

static char *export_text(const fs_topo *t, const char *fmt) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_export(t, fmt, f, &err), &err);
  fclose(f);
  return buf;
}

TEST(test_topo_zoo_export_import_round_trip) {
  static const char *const specs[] = {
      "fattree:k=4,gpus_per_node=4,inc=top", "railopt:servers=4,gpus_per_node=4,spines=2",
      "railonly:servers=3,gpus_per_node=2",  "torus:dims=3x2x4",
      "dragonfly:p=1,global_gbps=33.3",      "leafspine:leaves=3,spines=2,hosts_per_leaf=2",
      "clos:pods=2,edges_per_pod=2,hosts_per_edge=4,edge_uplinks=1,agg_gbps=400,gpus_per_node=2",
      "clos:tiers=2,edges_per_pod=3,hosts_per_edge=2,edge_uplinks=2",
  };
  for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
    fs_topo *t = oracle_spec(specs[i]);
    if (!t) continue;
    char *json = export_text(t, "json");
    fs_topo *u = NULL;
    fs_err err = {0, ""};
    if (json) CHECK_OK(fs_topo_from_json_text(json, "export.json", &u, &err), &err);
    if (u) {
      if (!same_graph(t, u)) test_fail(__FILE__, __LINE__, "%s: export/import differs", specs[i]);
      /* and once more: the export of the import is the same text */
      char *again = export_text(u, "json");
      CHECK(again && strcmp(again, json) == 0);
      free(again);
      fs_topo_free(u);
    }
    free(json);
    char *dot = export_text(t, "dot");
    CHECK(dot && strncmp(dot, "graph ", 6) == 0 && strstr(dot, " -- "));
    free(dot);
    char *gml = export_text(t, "graphml");
    CHECK(gml && strstr(gml, "<graphml") && strstr(gml, "<edge source="));
    free(gml);
    fs_topo_free(t);
  }
  fs_topo *t = oracle_spec("ring:n=3");
  fs_err err = {0, ""};
  if (t) CHECK(fs_topo_export(t, "svg", stdout, &err) == FS_EINVAL);
  fs_topo_free(t);
}

/* Bad input -> FS_EINVAL with every fragment in the message. */
typedef struct bad_case {
  const char *in; /* inline spec, or JSON text when it starts with '{' */
  const char *want[3];
} bad_case;

TEST(test_topo_zoo_bad_params_name_the_key) {
  static const bad_case cases[] = {
      {"railopt:servers=8", {"$.gpus_per_node", "required"}},
      {"railopt:servers=8,gpus_per_node=4,servers_per_su=3", {"$.servers_per_su", "divide"}},
      {"railopt:servers=8,gpus_per_node=4,spines=0", {"$.spines", "got 0"}},
      {"railopt:servers=8,gpus_per_node=4,spines=2,oversubscription=2", {"$.oversubscription", "not both"}},
      {"railonly:servers=8,gpus_per_node=1", {"$.gpus_per_node", "got 1"}},
      {"railopt:servers=64,gpus_per_node=8,servers_per_su=32,radix=48", {"$.radix", "got 48", "rail switch"}},
      {"railopt:servers=512,gpus_per_node=8,servers_per_su=32,spines=16,radix=64",
       {"$.radix", "got 64", "spine"}},
      {"railonly:servers=80,gpus_per_node=8,radix=64", {"$.servers", "radix", "got 80"}},
      {"torus:dims=4x1x4", {"$.dims", "4x1x4"}},
      {"torus:dims=4x", {"$.dims"}},
      {"torus:gbps=100", {"$.dims", "required"}},
      {"{\"type\": \"torus\", \"dims\": [4, 1]}", {"$.dims[1]", "got 1"}},
      {"torus:dims=4x4,gpus_per_node=2", {"$.gpus_per_node"}},
      {"ring:n=1", {"$.n", "got 1"}},
      {"fullmesh:n=5000", {"$.n", "got 5000"}},
      {"dragonfly:p=2,g=10", {"$.g", "got 10"}},
      {"dragonfly:gbps=1", {"$.gbps"}},
      {"dragonfly:p=3,gpus_per_node=2", {"$.gpus_per_node", "p (hosts per router)"}},
      {"file:nodes=3", {"$.nodes", "array"}},
      {"{\"type\": \"file\", \"nodes\": [{\"id\": \"a\", \"kind\": \"host\"}, {\"id\": \"a\", "
       "\"kind\": \"switch\"}], \"links\": []}",
       {"$.nodes[1].id", "duplicate", "\"a\""}},
      {"{\"type\": \"file\", \"nodes\": [{\"id\": \"a\", \"kind\": \"host\"}, {\"id\": \"s\", "
       "\"kind\": \"switch\"}], \"links\": [{\"a\": \"a\", \"b\": \"x\"}]}",
       {"$.links[0].b", "unknown node id", "\"x\""}},
      {"{\"type\": \"file\", \"nodes\": [{\"id\": \"a\", \"kind\": \"host\"}, {\"id\": \"s\", "
       "\"kind\": \"switch\"}], \"links\": [{\"a\": \"s\", \"b\": \"s\"}]}",
       {"$.links[0].b", "self-loop"}},
      {"{\"type\": \"file\", \"nodes\": [{\"id\": 1, \"kind\": \"host\"}, {\"id\": 2, "
       "\"kind\": \"host\"}, {\"id\": 3, \"kind\": \"switch\"}], \"links\": [{\"a\": 1, \"b\": 3}]}",
       {"$.nodes[1]", "disconnected", "2"}},
      {"{\"type\": \"file\", \"nodes\": [{\"id\": 1, \"kind\": \"router\"}], \"links\": []}",
       {"$.nodes[0].kind", "router"}},
      {"{\"type\": \"ring\", \"n\": 4, \"cost\": {\"parts\": [{\"part\": \"laser\", \"gbps\": 1, "
       "\"usd\": 1, \"watts\": 1}]}}",
       {"$.cost.parts[0].part", "laser"}},
      {"{\"type\": \"ring\", \"n\": 4, \"cost\": {\"fiber_m\": 3}}", {"$.cost", "fiber_m"}},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    fs_topo *t = NULL;
    fs_err err = {0, ""};
    int rc = cases[i].in[0] == '{' ? fs_topo_from_json_text(cases[i].in, "t.json", &t, &err)
                                   : fs_topo_from_spec(cases[i].in, &t, &err);
    if (rc != FS_EINVAL) {
      test_fail(__FILE__, __LINE__, "%s: expected FS_EINVAL, got %d (%s)", cases[i].in, rc,
                err.msg);
      fs_topo_free(t);
      continue;
    }
    CHECK(t == NULL);
    for (int k = 0; k < 3 && cases[i].want[k]; k++)
      if (!strstr(err.msg, cases[i].want[k]))
        test_fail(__FILE__, __LINE__, "%s: message lacks '%s': %s", cases[i].in,
                  cases[i].want[k], err.msg);
  }
}

TEST(test_topo_zoo_file_family) {
  /* Heterogeneous speeds, hosts listed after switches, string ids. */
  const char *text =
      "{\"type\": \"file\", \"nodes\": ["
      "{\"id\": \"sw\", \"kind\": \"switch\"}, {\"id\": \"h0\", \"kind\": \"host\"},"
      "{\"id\": \"h1\", \"kind\": \"gpu\"}],"
      "\"links\": [{\"a\": \"h0\", \"b\": \"sw\", \"gbps\": 100},"
      "{\"a\": \"h1\", \"b\": \"sw\", \"gbps\": 400, \"latency_ns\": 50}]}";
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_from_json_text(text, "g.json", &t, &err), &err);
  if (!t) return;
  CHECK_EQ_INT(t->n_hosts, 2);
  CHECK_EQ_INT(t->nodes[2].kind, FS_NODE_SWITCH);
  CHECK_EQ_INT(t->links[0].from, 0);
  CHECK_EQ_INT(t->links[0].to, 2);
  CHECK_REL(t->links[2].capacity_bps, 400e9, 0, "bps");
  CHECK_EQ_INT(t->links[2].latency_ns, 50);
  fs_topo_stats st;
  CHECK_OK(fs_topo_stats_compute(t, &st, &err), &err);
  CHECK_REL(st.bisection_bps, 100e9, 1e-12, "bps");
  fs_topo_free(t);
}

TEST(test_topo_zoo_cost_table) {
  /* leafspine 2 leaves x 2 spines, 2 hosts per leaf, all 400G, defaults:
   * 4 host cables (DAC, 3 m): 4 NICs + 4 switch ports + 4 DAC;
   * 4 leaf-spine cables (30 m, SR): 8 switch ports + 8 SR + 120 m fiber. */
  fs_topo *t = oracle_spec("leafspine:leaves=2,spines=2,hosts_per_leaf=2,host_gbps=400");
  if (!t) return;
  fs_topo_cost c;
  fs_topo_cost_compute(t, &c);
  CHECK_EQ_INT(c.part[FS_PART_NIC].count, 4);
  CHECK_EQ_INT(c.part[FS_PART_SWITCH_PORT].count, 12);
  CHECK_EQ_INT(c.part[FS_PART_DAC].count, 4);
  CHECK_EQ_INT(c.part[FS_PART_XCVR_SR].count, 8);
  CHECK_EQ_INT(c.part[FS_PART_XCVR_DR].count, 0);
  CHECK_REL(c.fiber_m, 120, 0, "m");
  fs_cost_table d;
  fs_cost_defaults(&d);
  double want = 4 * d.part[FS_PART_NIC][2].usd + 12 * d.part[FS_PART_SWITCH_PORT][2].usd +
                4 * d.part[FS_PART_DAC][2].usd + 8 * d.part[FS_PART_XCVR_SR][2].usd +
                120 * d.fiber_usd_per_m;
  CHECK_REL(c.usd, want, 1e-12, "USD");
  fs_topo_free(t);
  /* Overrides: a new 1600G row, longer fabric cables (DR optics). */
  const char *text =
      "{\"type\": \"leafspine\", \"leaves\": 2, \"spines\": 2, \"hosts_per_leaf\": 2,"
      " \"host_gbps\": 1600, \"cost\": {\"fabric_m\": 500, \"parts\": [{\"part\": \"nic\","
      " \"gbps\": 1600, \"usd\": 5000, \"watts\": 50}]}}";
  fs_err err = {0, ""};
  t = NULL;
  CHECK_OK(fs_topo_from_json_text(text, "c.json", &t, &err), &err);
  if (!t) return;
  fs_topo_cost_compute(t, &c);
  CHECK_REL(c.part[FS_PART_NIC].usd, 4 * 5000.0, 0, "USD");
  CHECK_REL(c.part[FS_PART_NIC].watts, 4 * 50.0, 0, "W");
  CHECK_EQ_INT(c.part[FS_PART_XCVR_DR].count, 8);
  CHECK_REL(c.fiber_m, 2000, 0, "m");
  fs_topo_free(t);
  /* Direct families: no switch ports; GPU-server internals uncounted. */
  t = oracle_spec("torus:dims=4x4");
  if (t) {
    fs_topo_cost_compute(t, &c);
    CHECK_EQ_INT(c.part[FS_PART_SWITCH_PORT].count, 0);
    CHECK_EQ_INT(c.part[FS_PART_DAC].count, 32);
  }
  fs_topo_free(t);
}

TEST(test_topo_zoo_cli_export_and_report) {
  char out[16384], cmd[512], path[] = "/tmp/fabricsim-zoo-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    test_fail(__FILE__, __LINE__, "mkstemp failed");
    return;
  }
  close(fd);
  snprintf(cmd, sizeof(cmd), "topo dragonfly:p=2,global_gbps=50 --export json --out %s", path);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0);
  snprintf(cmd, sizeof(cmd), "topo %s", path);
  char a[16384];
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", a, sizeof(a)), 0);
  CHECK(strstr(a, "spec:                file\n") != NULL);
  CHECK_EQ_INT(test_run_cli("topo dragonfly:p=2,global_gbps=50", "2>&1", out, sizeof(out)), 0);
  /* Same graph: every line from "nodes:" to the cost agrees. */
  const char *x = strstr(a, "nodes:"), *y = strstr(out, "nodes:");
  CHECK(x && y && strcmp(x, y) == 0);
  remove(path);
  CHECK_EQ_INT(test_run_cli("topo torus:dims=4x4x4", "2>&1", out, sizeof(out)), 0);
  CHECK(strstr(out, "bisection formula:   3200 Gbps (agrees with the max-flow)") != NULL);
  CHECK(strstr(out, "radix by tier:       tier1 7") != NULL);
  CHECK(strstr(out, "nodes by kind:       host 64, switch 64") != NULL);
  CHECK(strstr(out, "network cost:") != NULL);
  CHECK_EQ_INT(test_run_cli("topo ring:n=4 --export dot", "2>&1", out, sizeof(out)), 0);
  CHECK(strncmp(out, "graph \"ring\" {", 14) == 0);
  /* a rank per tier, hosts at the bottom; speeds in bit/s as graphml's and
   * the JSON's; the topology's node names (issue 45) */
  CHECK(strstr(out, "rankdir=BT;") != NULL);
  CHECK(strstr(out, "{rank=same; n0; n1; n2; n3;}") != NULL);
  CHECK(strstr(out, "{rank=same; n4; n5; n6; n7;}") != NULL);
  CHECK(strstr(out, "[bps=") != NULL && strstr(out, "gbps") == NULL);
  CHECK(strstr(out, "label=\"host0\"") != NULL && strstr(out, "label=\"router0\"") != NULL);
  CHECK_EQ_INT(test_run_cli("topo ring:n=4 --export png", "2>&1", out, sizeof(out)), 2);
  CHECK(strstr(out, "png") != NULL);
  CHECK_EQ_INT(test_run_cli("topo ring:n=4 --out x.json", "2>&1", out, sizeof(out)), 2);
}

TEST(test_topo_zoo_torus_dimension_order) {
  static const char *const specs[] = {"torus:dims=4x3x2", "torus:dims=5x6", "ring:n=7",
                                      "ring:n=2", "torus:dims=3x3x3"};
  for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
    fs_topo *t = oracle_spec(specs[i]);
    if (!t) continue;
    fs_err err = {0, ""};
    fs_router *r = NULL;
    CHECK_OK(fs_router_new(t, &r, &err), &err);
    fs_route route;
    fs_route_init(&route);
    int32_t nodes[64], bad = 0;
    for (int32_t a = 0; r && a < t->n_hosts; a++)
      for (int32_t b = 0; b < t->n_hosts; b++) {
        if (a == b) continue;
        int rc = fs_route_torus_dor(r, a, b, &route, &err);
        if (rc) {
          if (bad++ < 3) test_fail(__FILE__, __LINE__, "%s %d->%d: %s", specs[i], a, b, err.msg);
          continue;
        }
        /* minimal in hops */
        if (route.hops != fs_route_dist(r, a, b) && bad++ < 3)
          test_fail(__FILE__, __LINE__, "%s %d->%d: %d hops, shortest %d", specs[i], a, b,
                    route.hops, fs_route_dist(r, a, b));
        /* dimensions are corrected in order: the changed dimension never
         * goes back to an earlier one */
        int32_t k = fs_route_nodes(t, &route, nodes), last = -1;
        for (int32_t j = 2; j + 1 < k; j++) {
          int32_t x = nodes[j - 1] - t->n_hosts, y = nodes[j] - t->n_hosts, stride = t->n_hosts;
          int32_t dim = -1;
          for (int32_t d = 0; d < t->n_dims; d++) {
            stride /= t->dims[d];
            if ((x / stride) % t->dims[d] != (y / stride) % t->dims[d]) dim = d;
          }
          if ((dim < last || dim < 0) && bad++ < 3)
            test_fail(__FILE__, __LINE__, "%s %d->%d: dimension %d after %d", specs[i], a, b,
                      dim, last);
          last = dim;
        }
      }
    fs_route_free(&route);
    fs_router_free(r);
    fs_topo_free(t);
  }
  fs_topo *t = oracle_spec("fattree:k=4");
  fs_router *r = NULL;
  fs_err err = {0, ""};
  fs_route route;
  fs_route_init(&route);
  if (t && !fs_router_new(t, &r, &err)) {
    CHECK(fs_route_torus_dor(r, 0, 1, &route, &err) == FS_EINVAL);
    CHECK(strstr(err.msg, "torus") != NULL);
    CHECK(fs_route_dragonfly(r, 0, 1, 0, 1, 1, &route, &err) == FS_EINVAL);
  }
  fs_router_free(r);
  fs_topo_free(t);
}

TEST(test_topo_zoo_dragonfly_minimal_and_valiant) {
  static const char *const specs[] = {"dragonfly:p=2", "dragonfly:a=4,p=2,h=2,g=5",
                                      "dragonfly:p=2,gpus_per_node=2", "dragonfly:a=2,p=1,h=1,g=2"};
  for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
    fs_topo *t = oracle_spec(specs[i]);
    if (!t) continue;
    fs_err err = {0, ""};
    fs_router *r = NULL;
    CHECK_OK(fs_router_new(t, &r, &err), &err);
    int32_t groups = 0;
    for (int32_t v = 0; v < t->n_nodes; v++)
      if (t->nodes[v].kind == FS_NODE_SWITCH && t->nodes[v].group >= groups)
        groups = t->nodes[v].group + 1;
    int nic = t->gpus_per_node > 1 ? 2 : 0;
    fs_route route;
    fs_route_init(&route);
    int32_t nodes[64], bad = 0, through_third = 0, inter = 0;
    for (int32_t a = 0; r && a < t->n_hosts; a++)
      for (int32_t b = 0; b < t->n_hosts; b++) {
        if (a == b) continue;
        for (int valiant = 0; valiant < 2; valiant++) {
          int rc = fs_route_dragonfly(r, a, b, valiant, 3, (uint64_t)(a * 7919 + b), &route, &err);
          if (rc) {
            if (bad++ < 3) test_fail(__FILE__, __LINE__, "%s %d->%d: %s", specs[i], a, b, err.msg);
            continue;
          }
          int32_t k = fs_route_nodes(t, &route, nodes), globals = 0, gs = -1, gd = -1;
          int32_t others = 0, prev = -1;
          for (int32_t j = 0; j < k; j++) {
            if (t->nodes[nodes[j]].kind != FS_NODE_SWITCH) continue;
            int32_t g = t->nodes[nodes[j]].group;
            if (gs < 0) gs = g;
            gd = g;
            if (prev >= 0 && g != prev) globals++;
            prev = g;
          }
          for (int32_t j = 0; j < k; j++)
            if (t->nodes[nodes[j]].kind == FS_NODE_SWITCH && t->nodes[nodes[j]].group != gs &&
                t->nodes[nodes[j]].group != gd)
              others = 1;
          int32_t max_hops = valiant && gs != gd && groups > 2 ? 2 + 5 : 2 + 3;
          if (route.hops > max_hops + nic && bad++ < 3)
            test_fail(__FILE__, __LINE__, "%s %d->%d valiant %d: %d hops", specs[i], a, b,
                      valiant, route.hops);
          if (!valiant) {
            CHECK(others == 0);
            CHECK(globals <= 1);
          } else if (gs != gd && groups > 2) {
            inter++;
            through_third += others;
            CHECK(globals == 2);
          }
        }
      }
    if (groups > 2) CHECK_EQ_CTX(through_third, inter, specs[i]);
    fs_route_free(&route);
    fs_router_free(r);
    fs_topo_free(t);
  }
}

TEST(test_topo_zoo_railonly_scaleup_first) {
  fs_topo *t = oracle_spec("railonly:servers=3,gpus_per_node=4");
  if (!t) return;
  fs_err err = {0, ""};
  fs_router *r = NULL;
  CHECK_OK(fs_router_new(t, &r, &err), &err);
  fs_route route;
  fs_route_init(&route);
  int32_t nodes[16], G = 4;
  for (int32_t a = 0; r && a < t->n_hosts; a++)
    for (int32_t b = 0; b < t->n_hosts; b++) {
      if (a == b) continue;
      if (fs_route_railonly(r, a, b, &route, &err)) {
        test_fail(__FILE__, __LINE__, "%d->%d: %s", a, b, err.msg);
        continue;
      }
      CHECK_EQ_INT(route.hops, fs_route_dist(r, a, b));
      int32_t k = fs_route_nodes(t, &route, nodes);
      int cross = a % G != b % G;
      /* the second node is the source's scale-up switch exactly when the
       * rails differ; no other scale-up switch is used */
      CHECK((nodes[1] == t->scaleup0 + a / G) == cross);
      for (int32_t j = 2; j < k; j++) CHECK(t->nodes[nodes[j]].kind != FS_NODE_SCALEUP);
    }
  fs_route_free(&route);
  fs_router_free(r);
  fs_topo_free(t);
}

/* The hop statistics of spec (metrics.c, closed forms included) against
 * the BFS oracle; 1 if the topology was built. */
static int hops_match_oracle(const char *spec) {
  fs_topo *t = oracle_spec(spec);
  if (!t) return 0;
  fs_topo_stats st = oracle_stats_of(t);
  int dia;
  double avg;
  oracle_hops(t, 0, &dia, &avg);
  CHECK_EQ_CTX(st.diameter_hops, dia, spec);
  CHECK_REL(st.avg_hops, avg, 1e-12, spec);
  fs_topo_free(t);
  return 1;
}

/* The direct networks' closed-form hop statistics (metrics.c direct_hops)
 * against the BFS oracle: every torus of 1 to 3 dimensions of sizes 2-6,
 * rings and full meshes. */
TEST(test_topo_zoo_direct_hops_closed_form) {
  char s[256];
  int checked = 0;
  for (int a = 2; a <= 6; a++)
    for (int b = 1; b <= 6; b++)
      for (int c = 1; c <= 6; c += 5) {
        if (b == 1 && c > 1) continue;
        if (b == 1) snprintf(s, sizeof(s), "torus:dims=%d", a);
        else if (c == 1) snprintf(s, sizeof(s), "torus:dims=%dx%d", a, b);
        else snprintf(s, sizeof(s), "torus:dims=%dx%dx%d", a, b, c);
        if (b == 1 && strcmp(s, "torus:dims=2") == 0) continue; /* (a 2-torus is 2 chips) */
        checked += hops_match_oracle(s);
      }
  static const char *const more[] = {"ring:n=7", "ring:n=2", "fullmesh:n=5", "fullmesh:n=2"};
  for (size_t i = 0; i < 4; i++) hops_match_oracle(more[i]);
  CHECK(checked > 30);
}

/* The fat-tree's closed-form hop statistics (metrics.c fattree_hops)
 * against the BFS oracle, k = 2 .. 10. */
TEST(test_topo_zoo_fattree_hops_closed_form) {
  char s[64];
  for (int k = 2; k <= 10; k += 2) {
    snprintf(s, sizeof(s), "fattree:k=%d", k);
    hops_match_oracle(s);
  }
}

/* Dragonflies' and leaf-spines' hop statistics, searched from the first
 * group or leaf only under the builders' rotations (metrics.c
 * builder_rotation), against the BFS oracle: one cable per group pair and
 * several (g < a h + 1), one host per router or leaf and several, several
 * links per spine, and GPU servers (no rotation: checked the same way). */
TEST(test_topo_zoo_rotated_hops_match_oracle) {
  static const char *const specs[] = {
      "dragonfly:a=2,p=1,h=1",     "dragonfly:a=4,p=2,h=2",     "dragonfly:a=4,p=1,h=2,g=3",
      "dragonfly:a=3,p=2,h=2,g=4", "dragonfly:a=6,p=3,h=3,g=7", "dragonfly:a=4,p=2,h=1,g=2",
      "dragonfly:a=4,p=2,h=2,gpus_per_node=2",
      "leafspine:leaves=2,spines=1,hosts_per_leaf=1",
      "leafspine:leaves=5,spines=3,hosts_per_leaf=4",
      "leafspine:leaves=7,spines=2,hosts_per_leaf=3,links_per_spine=2",
      "leafspine:leaves=4,spines=2,hosts_per_leaf=4,gpus_per_node=2"};
  for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) CHECK(hops_match_oracle(specs[i]));
}

/* Inline specs read numbers as JSON writes them: hex, inf, a leading '+'
 * are no numbers, and an integer key takes no fraction or exponent (issue
 * 45: fattree:k=0x10 was k=16, torus:dims=0x4 a 1-D torus, star:hosts=1e1
 * 10 hosts). Each refusal names the key and the text as written. */
TEST(test_topo_inline_integers_are_integers) {
  static const struct {
    const char *spec, *want;
  } bad[] = {
      {"fattree:k=0x10", "$.k: must be an integer, got \"0x10\""},
      {"star:hosts=1e1", "$.hosts: must be an integer, got 1e1"},
      {"star:hosts=16.0", "$.hosts: must be an integer, got 16.0"},
      {"star:hosts=+16", "$.hosts: must be an integer, got \"+16\""},
      {"torus:dims=0x4", "$.dims: must be 1 to 6 sizes"},
      {"star:hosts=8,gbps=inf", "$.gbps: must be a number, got \"inf\""},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    fs_topo *t = NULL;
    fs_err err = {0, ""};
    CHECK_EQ_CTX(fs_topo_from_spec(bad[i].spec, &t, &err), FS_EINVAL, bad[i].spec);
    CHECK(strstr(err.msg, bad[i].want) != NULL);
    if (!strstr(err.msg, bad[i].want)) fprintf(stderr, "  (%s)\n", err.msg);
    fs_topo_free(t);
  }
  fs_topo *t = oracle_spec("star:hosts=16,gbps=1e2");
  if (t) CHECK_EQ_INT(t->n_hosts, 16);
  CHECK(t && t->links[0].capacity_bps == 100e9);
  fs_topo_free(t);
}
