/* Tests of the general Clos family (clos): node, switch, cable and radix
 * counts against the formulas; the k-ary fat-tree as a special case (same
 * graph); bisection against the closed form at several oversubscription
 * ratios; router path counts against a DFS that enumerates every shortest
 * path, and against the closed form; spec round trip; bad keys named. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim/route.h"
#include "fabricsim/topo.h"
#include "test.h"
#include "topo_oracle.h"

static int32_t count_switches(const fs_topo *t, int32_t tier) {
  int32_t n = 0;
  for (int32_t v = 0; v < t->n_nodes; v++)
    n += t->nodes[v].kind == FS_NODE_SWITCH && t->nodes[v].tier == tier;
  return n;
}

/* Ports of every switch of `tier` (-1 if they differ, 0 if none). */
static int32_t radix_of(const fs_topo *t, int32_t tier) {
  int32_t r = 0;
  for (int32_t v = 0; v < t->n_nodes; v++) {
    if (t->nodes[v].kind != FS_NODE_SWITCH || t->nodes[v].tier != tier) continue;
    int32_t d = t->out_start[v + 1] - t->out_start[v];
    if (r && d != r) return -1;
    r = d;
  }
  return r;
}

/* tiers, pods, edges_per_pod, hosts_per_edge, edge_uplinks, agg_uplinks */
typedef struct clos_case {
  int tiers, P, E, hpe, U1, U2;
} clos_case;

static void clos_spec(char *s, size_t n, const clos_case *c) {
  if (c->tiers == 3)
    snprintf(s, n, "clos:tiers=3,pods=%d,edges_per_pod=%d,hosts_per_edge=%d,edge_uplinks=%d,"
             "agg_uplinks=%d", c->P, c->E, c->hpe, c->U1, c->U2);
  else
    snprintf(s, n, "clos:tiers=2,edges_per_pod=%d,hosts_per_edge=%d,edge_uplinks=%d", c->E,
             c->hpe, c->U1);
}

static const clos_case cases[] = {
    {3, 4, 2, 2, 2, 2}, {3, 4, 4, 8, 4, 2}, {3, 2, 3, 5, 2, 3}, {3, 6, 2, 4, 1, 1},
    {3, 1, 4, 3, 2, 3}, {2, 1, 6, 8, 3, 0}, {2, 1, 5, 2, 4, 0}, {3, 3, 2, 2, 2, 2},
};

TEST(test_topo_clos_counts_match_formulas) {
  char s[256];
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    const clos_case *c = &cases[i];
    clos_spec(s, sizeof(s), c);
    fs_topo *t = oracle_spec(s);
    if (!t) continue;
    int P = c->P, E = c->E, hpe = c->hpe, U1 = c->U1, U2 = c->tiers == 3 ? c->U2 : 0;
    CHECK_EQ_CTX(t->n_hosts, P * E * hpe, s);
    CHECK_EQ_CTX(count_switches(t, 1), P * E, s);
    CHECK_EQ_CTX(count_switches(t, 2), P * U1, s);
    CHECK_EQ_CTX(count_switches(t, 3), U1 * U2, s);
    CHECK_EQ_CTX(t->n_links / 2, P * E * hpe + P * E * U1 + P * U1 * U2, s);
    CHECK_EQ_CTX(radix_of(t, 1), hpe + U1, s);
    CHECK_EQ_CTX(radix_of(t, 2), E + U2, s);
    CHECK_EQ_CTX(radix_of(t, 3), U2 ? P : 0, s);
    /* host i on edge switch i / hpe */
    for (int32_t h = 0; h < t->n_hosts; h++)
      CHECK_EQ_CTX(t->links[t->out_links[t->out_start[h]]].to, t->n_hosts + h / hpe, s);
    fs_topo_free(t);
  }
  /* A k-ary fat-tree is the Clos with pods k and k/2 everywhere else: the
   * same graph, link for link. */
  for (int k = 2; k <= 8; k += 2) {
    snprintf(s, sizeof(s), "clos:pods=%d,edges_per_pod=%d,hosts_per_edge=%d,host_gbps=400", k,
             k / 2, k / 2);
    char f[64];
    snprintf(f, sizeof(f), "fattree:k=%d,gbps=400", k);
    fs_topo *a = oracle_spec(s), *b = oracle_spec(f);
    if (a && b) {
      int same = a->n_nodes == b->n_nodes && a->n_links == b->n_links;
      for (int32_t v = 0; same && v < a->n_nodes; v++)
        same = memcmp(&a->nodes[v], &b->nodes[v], sizeof(fs_node)) == 0;
      for (int32_t l = 0; same && l < a->n_links; l++)
        same = a->links[l].from == b->links[l].from && a->links[l].to == b->links[l].to &&
               a->links[l].capacity_bps == b->links[l].capacity_bps;
      if (!same) test_fail(__FILE__, __LINE__, "%s differs from %s", s, f);
      char x[32], y[32];
      fs_topo_node_name(a, a->n_nodes - 1, x, sizeof(x));
      fs_topo_node_name(b, b->n_nodes - 1, y, sizeof(y));
      CHECK(strcmp(x, y) == 0);
      CHECK_REL(fs_topo_bisection_formula(a), fs_topo_bisection_formula(b), 0, "bps");
    }
    fs_topo_free(a);
    fs_topo_free(b);
  }
  /* names: three tiers as the fat-tree, two as the leaf-spine */
  fs_topo *t = oracle_spec("clos:tiers=2,edges_per_pod=2,hosts_per_edge=2,edge_uplinks=3");
  if (t) {
    char n[32];
    fs_topo_node_name(t, 5, n, sizeof(n));
    CHECK(strcmp(n, "leaf1") == 0);
    fs_topo_node_name(t, 8, n, sizeof(n));
    CHECK(strcmp(n, "spine2") == 0);
  }
  fs_topo_free(t);
}

TEST(test_topo_clos_bisection_matches_formula) {
  /* spec, the closed form in Gbps by hand */
  static const struct {
    const char *spec;
    double gbps;
  } bs[] = {
      /* non-blocking k=4 equivalent: 16 hosts, 8 * 100G */
      {"clos:pods=4,edges_per_pod=2,hosts_per_edge=2", 800},
      /* edge 2:1 (8*100 : 4*100), aggregation 2:1 (4*100 : 2*100): 4:1;
       * per pod min(3200, 1600, 800) = 800, 2 pods */
      {"clos:pods=4,edges_per_pod=4,hosts_per_edge=8,edge_oversubscription=2,"
       "agg_oversubscription=2", 1600},
      /* edge 2:1 only: per pod min(3200, 1600, 4*4*100=1600) */
      {"clos:pods=4,edges_per_pod=4,hosts_per_edge=8,edge_uplinks=4,agg_uplinks=4", 3200},
      /* aggregation 4:1 only, with 400G core links: min(1600, 1600, 4*1*400) */
      {"clos:pods=2,edges_per_pod=4,hosts_per_edge=4,edge_uplinks=4,agg_uplinks=1,"
       "agg_gbps=400",
       1600},
      /* aggregation 1:3 (undersubscribed): the hosts bound it */
      {"clos:pods=2,edges_per_pod=2,hosts_per_edge=4,edge_uplinks=4,agg_uplinks=6", 800},
      /* 3:1 edge with faster up-links: 6 * 8 * 100 : 6 * 2 * 400 -> 3 * 800 */
      {"clos:tiers=2,edges_per_pod=6,hosts_per_edge=12,edge_uplinks=1,edge_gbps=400", 1200},
      {"clos:tiers=2,edges_per_pod=6,hosts_per_edge=8,edge_uplinks=3,edge_gbps=400", 2400},
      /* one pod of three tiers: the cut splits the edges */
      {"clos:pods=1,edges_per_pod=4,hosts_per_edge=3,edge_uplinks=2,agg_uplinks=3", 400},
  };
  for (size_t i = 0; i < sizeof(bs) / sizeof(bs[0]); i++) {
    fs_topo *t = oracle_spec(bs[i].spec);
    if (!t) continue;
    fs_topo_stats st;
    fs_err err = {0, ""};
    CHECK_OK(fs_topo_stats_compute(t, &st, &err), &err);
    double f = fs_topo_bisection_formula(t);
    CHECK_REL(f, bs[i].gbps * 1e9, 1e-12, "bps");
    CHECK_REL(st.bisection_bps, f, 1e-9, "bps");
    fs_topo_free(t);
  }
  /* no closed form: odd pods, odd edges of one pod, GPU servers */
  static const char *const none[] = {
      "clos:pods=3,edges_per_pod=2,hosts_per_edge=2",
      "clos:tiers=2,edges_per_pod=5,hosts_per_edge=2,edge_uplinks=2",
      "clos:pods=2,edges_per_pod=2,hosts_per_edge=4,gpus_per_node=4"};
  for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
    fs_topo *t = oracle_spec(none[i]);
    if (t) CHECK(fs_topo_bisection_formula(t) < 0);
    fs_topo_free(t);
  }
}

/* The oracle: every walk from u to dst of exactly `left` more links that
 * never enters a host other than dst; counted by plain depth-first search. */
static double dfs_paths(const fs_topo *t, int32_t u, int32_t dst, int32_t left) {
  if (u == dst) return left == 0;
  if (left == 0) return 0;
  double n = 0;
  for (int32_t i = t->out_start[u]; i < t->out_start[u + 1]; i++) {
    int32_t w = t->links[t->out_links[i]].to;
    if (w < t->n_hosts && w != dst) continue;
    n += dfs_paths(t, w, dst, left - 1);
  }
  return n;
}

TEST(test_topo_clos_path_counts_match_dfs) {
  char s[256];
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    const clos_case *c = &cases[i];
    clos_spec(s, sizeof(s), c);
    for (int servers = 0; servers < 2; servers++) {
      char full[300];
      /* GPU servers of hosts_per_edge GPUs: one server per edge switch */
      if (servers && c->hpe < 2) continue;
      if (servers) snprintf(full, sizeof(full), "%s,gpus_per_node=%d", s, c->hpe);
      else snprintf(full, sizeof(full), "%s", s);
      fs_topo *t = oracle_spec(full);
      if (!t) continue;
      fs_router *r = NULL;
      fs_err err = {0, ""};
      CHECK_OK(fs_router_new(t, &r, &err), &err);
      int32_t H = t->n_hosts, per_pod = c->E * c->hpe, bad = 0;
      for (int32_t a = 0; r && a < H; a++)
        for (int32_t b = 0; b < H; b++) {
          if (a == b || (a * 7 + b * 3) % 5) continue; /* a fifth of the pairs */
          int32_t d = fs_route_dist(r, a, b);
          double got = fs_route_count_paths(r, a, b), oracle = dfs_paths(t, a, b, d);
          double want;
          if (a / c->hpe == b / c->hpe) want = 1; /* same edge (or server) */
          else if (c->tiers == 2 || a / per_pod == b / per_pod) want = c->U1;
          else want = (double)c->U1 * c->U2;
          if ((got != oracle || got != want) && bad++ < 3)
            test_fail(__FILE__, __LINE__, "%s: %d -> %d (%d hops): router %g, DFS %g, formula %g",
                      full, a, b, d, got, oracle, want);
          /* and the hops: 2 on an edge (or inside a server), 4 via the
           * aggregation, 6 via the core, +2 for the NICs of servers */
          int32_t hops = a / c->hpe == b / c->hpe ? 2
                         : (c->tiers == 2 || a / per_pod == b / per_pod) ? 4 : 6;
          if (servers && a / c->hpe != b / c->hpe) hops += 2;
          CHECK_EQ_CTX(d, hops, full);
        }
      fs_router_free(r);
      fs_topo_free(t);
    }
  }
}

TEST(test_topo_clos_spec_round_trip_and_errors) {
  static const char *const specs[] = {
      "clos:pods=4,edges_per_pod=4,hosts_per_edge=8,edge_oversubscription=2,agg_gbps=400",
      "clos:tiers=2,edges_per_pod=6,hosts_per_edge=8,edge_uplinks=3,edge_gbps=400,radix=16",
      "clos:pods=2,edges_per_pod=2,hosts_per_edge=8,gpus_per_node=8,nvlink_gbps=900,inc=top",
      ("{\"type\": \"clos\", \"tiers\": 3, \"pods\": 2, \"edges_per_pod\": 3, "
       "\"hosts_per_edge\": 2, \"agg_oversubscription\": 3, \"latency_ns\": 500}"),
  };
  for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
    fs_topo *t = NULL;
    fs_err err = {0, ""};
    int rc = specs[i][0] == '{' ? fs_topo_from_json_text(specs[i], "t.json", &t, &err)
                                : fs_topo_from_spec(specs[i], &t, &err);
    if (rc) {
      test_fail(__FILE__, __LINE__, "%s: %s", specs[i], err.msg);
      continue;
    }
    fs_topo *u = oracle_spec(t->spec);
    if (u) {
      if (strcmp(u->spec, t->spec) != 0)
        test_fail(__FILE__, __LINE__, "%s: respec gives %s", t->spec, u->spec);
      int same = u->n_nodes == t->n_nodes && u->n_links == t->n_links;
      for (int32_t v = 0; same && v < t->n_nodes; v++)
        same = memcmp(&t->nodes[v], &u->nodes[v], sizeof(fs_node)) == 0;
      for (int32_t l = 0; same && l < t->n_links; l++)
        same = t->links[l].from == u->links[l].from && t->links[l].to == u->links[l].to &&
               t->links[l].capacity_bps == u->links[l].capacity_bps &&
               t->links[l].latency_ns == u->links[l].latency_ns;
      if (!same) test_fail(__FILE__, __LINE__, "%s: respec builds another graph", t->spec);
      fs_topo_free(u);
    }
    fs_topo_free(t);
  }
  /* agg_oversubscription 3 over 3 edges of one 100G up-link each: 1 core
   * up-link per aggregation switch */
  fs_topo *t = oracle_spec("clos:pods=2,edges_per_pod=3,hosts_per_edge=2,agg_oversubscription=3");
  if (t) CHECK(strstr(t->spec, "edge_uplinks=2,agg_uplinks=1,") != NULL);
  fs_topo_free(t);
  static const struct {
    const char *in, *want[3];
  } bad[] = {
      {"clos:edges_per_pod=2,hosts_per_edge=2", {"$.pods", "required"}},
      {"clos:tiers=4,pods=2,edges_per_pod=2,hosts_per_edge=2", {"$.tiers", "got 4"}},
      {"clos:tiers=2,pods=2,edges_per_pod=2,hosts_per_edge=2", {"$.pods", "tiers 3"}},
      {"clos:tiers=2,edges_per_pod=2,hosts_per_edge=2,agg_uplinks=2", {"$.agg_uplinks", "tiers 3"}},
      {"clos:pods=2,hosts_per_edge=2", {"$.edges_per_pod", "required"}},
      {"clos:pods=2,edges_per_pod=2,hosts_per_edge=0", {"$.hosts_per_edge", "got 0"}},
      {"clos:pods=2,edges_per_pod=2,hosts_per_edge=2,edge_uplinks=2,edge_oversubscription=2",
       {"$.edge_oversubscription", "not both"}},
      {"clos:pods=2,edges_per_pod=2,hosts_per_edge=2,agg_uplinks=0", {"$.agg_uplinks", "got 0"}},
      {"clos:pods=2,edges_per_pod=2,hosts_per_edge=6,radix=8", {"$.radix", "edge switch", "got 8"}},
      {"clos:pods=2,edges_per_pod=8,hosts_per_edge=2,radix=8", {"$.radix", "aggregation"}},
      {"clos:pods=9,edges_per_pod=2,hosts_per_edge=2,radix=8", {"$.radix", "core"}},
      {"clos:pods=2,edges_per_pod=2,hosts_per_edge=6,gpus_per_node=4",
       {"$.gpus_per_node", "hosts_per_edge"}},
      {"clos:pods=2,edges_per_pod=2,hosts_per_edge=2,gbps=100", {"$.gbps"}},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    fs_topo *x = NULL;
    fs_err err = {0, ""};
    int rc = fs_topo_from_spec(bad[i].in, &x, &err);
    if (rc != FS_EINVAL) {
      test_fail(__FILE__, __LINE__, "%s: expected FS_EINVAL, got %d (%s)", bad[i].in, rc,
                err.msg);
      fs_topo_free(x);
      continue;
    }
    for (int k = 0; k < 3 && bad[i].want[k]; k++)
      if (!strstr(err.msg, bad[i].want[k]))
        test_fail(__FILE__, __LINE__, "%s: message lacks '%s': %s", bad[i].in, bad[i].want[k],
                  err.msg);
  }
}
