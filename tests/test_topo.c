/* Tests of the topo module: builder counts and numbering against the
 * families' formulas, link/CSR invariants, spec parsing and its messages, and
 * fs_topo_stats_compute against naive oracles (all-pairs BFS from every
 * host; brute-force minimum cut over every switch subset) on small graphs. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/base/base.h"
#include "../src/topo/internal.h"
#include "fabricsim/topo.h"
#include "test.h"
#include "topo_oracle.h"

/* CHECK_EQ_INT with the topology named, for checks inside loops. */

static fs_topo *from_spec(const char *spec) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  int rc = fs_topo_from_spec(spec, &t, &err);
  if (rc) test_fail(__FILE__, __LINE__, "%s: rc %d: %s", spec, rc, err.msg);
  return t;
}

static fs_topo *fattree(int k, double gbps) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_fattree(k, gbps, 1000, &t, &err), &err);
  return t;
}

static fs_topo *leafspine(int leaves, int spines, int hpl, double host_gbps,
                          double fabric_gbps, int lps) {
  fs_leafspine_params p = {leaves, spines, hpl, host_gbps, fabric_gbps, lps, 500};
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_leafspine(&p, &t, &err), &err);
  return t;
}

static void check_against_oracles(const fs_topo *t, int with_cut) {
  fs_topo_stats st = oracle_stats_of(t);
  int diam;
  double avg;
  oracle_hops(t, 1, &diam, &avg);
  CHECK_EQ_CTX(st.diameter_hops, diam, t->spec);
  if (!(fabs(st.avg_hops - avg) <= 1e-12 * avg))
    test_fail(__FILE__, __LINE__, "%s: avg_hops expected %.17g, got %.17g", t->spec,
              avg, st.avg_hops);
  if (with_cut) {
    double cut = oracle_min_cut(t);
    if (!(fabs(st.bisection_bps - cut) <= 1e-9 * cut))
      test_fail(__FILE__, __LINE__, "%s: bisection expected %.17g bps, got %.17g bps",
                t->spec, cut, st.bisection_bps);
  }
}

/* Every link's reverse points back with the endpoints swapped, and the CSR
 * lists each link exactly once, under its tail, in increasing id order. */
static void check_links(const fs_topo *t) {
  int bad_rev = 0, bad_csr = 0;
  for (int32_t l = 0; l < t->n_links; l++) {
    const fs_link *k = &t->links[l];
    int32_t r = k->reverse;
    if (r < 0 || r >= t->n_links || r == l || t->links[r].reverse != l ||
        t->links[r].from != k->to || t->links[r].to != k->from ||
        t->links[r].capacity_bps != k->capacity_bps ||
        t->links[r].latency_ns != k->latency_ns)
      bad_rev++;
  }
  CHECK_EQ_CTX(bad_rev, 0, t->spec);
  CHECK_EQ_CTX(t->out_start[0], 0, t->spec);
  CHECK_EQ_CTX(t->out_start[t->n_nodes], t->n_links, t->spec);
  int *seen = calloc((size_t)t->n_links, sizeof(int));
  for (int32_t v = 0; v < t->n_nodes; v++) {
    if (t->out_start[v] > t->out_start[v + 1]) bad_csr++;
    for (int32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++) {
      int32_t l = t->out_links[i];
      if (l < 0 || l >= t->n_links || t->links[l].from != v) {
        bad_csr++;
        continue;
      }
      if (i > t->out_start[v] && t->out_links[i - 1] >= l) bad_csr++;
      seen[l]++;
    }
  }
  for (int32_t l = 0; l < t->n_links; l++)
    if (seen[l] != 1) bad_csr++;
  free(seen);
  CHECK_EQ_CTX(bad_csr, 0, t->spec);
}

/* ---- builders: counts, numbering, invariants ------------------------------ */

TEST(test_topo_fattree_counts_match_formulas) {
  for (int k = 2; k <= 8; k += 2) {
    fs_topo *t = fattree(k, 100);
    if (!t) continue;
    int hosts = k * k * k / 4, switches = 5 * k * k / 4, cables = 3 * k * k * k / 4;
    CHECK_EQ_CTX(t->n_hosts, hosts, t->spec);
    CHECK_EQ_CTX(t->n_nodes, hosts + switches, t->spec);
    CHECK_EQ_CTX(t->n_links, 2 * cables, t->spec);
    fs_topo_stats st = oracle_stats_of(t);
    CHECK_EQ_CTX(st.nodes, hosts + switches, t->spec);
    CHECK_EQ_CTX(st.hosts, hosts, t->spec);
    CHECK_EQ_CTX(st.switches, switches, t->spec);
    CHECK_EQ_CTX(st.cables, cables, t->spec);
    CHECK_EQ_CTX(st.links, 2 * cables, t->spec);
    CHECK_EQ_CTX(st.max_radix, k, t->spec);
    CHECK_REL(st.host_injection_bps, hosts * 100e9, 1e-12, "bps");
    int tier_count[4] = {0};
    for (int32_t v = hosts; v < t->n_nodes; v++)
      if (t->nodes[v].tier >= 1 && t->nodes[v].tier <= 3) tier_count[t->nodes[v].tier]++;
    CHECK_EQ_CTX(tier_count[1], k * k / 2, t->spec);
    CHECK_EQ_CTX(tier_count[2], k * k / 2, t->spec);
    CHECK_EQ_CTX(tier_count[3], k * k / 4, t->spec);
    check_links(t);
    fs_topo_free(t);
  }
}

TEST(test_topo_leafspine_counts_match_formulas) {
  static const int cases[][4] = {/* leaves, spines, hosts_per_leaf, links_per_spine */
                                 {4, 2, 8, 1}, {3, 5, 2, 2}, {1, 1, 1, 1},
                                 {16, 4, 32, 1}, {2, 8, 3, 3}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    int L = cases[i][0], S = cases[i][1], hpl = cases[i][2], lps = cases[i][3];
    fs_topo *t = leafspine(L, S, hpl, 400, 100, lps);
    if (!t) continue;
    int hosts = L * hpl, cables = hosts + L * S * lps;
    fs_topo_stats st = oracle_stats_of(t);
    CHECK_EQ_CTX(st.hosts, hosts, t->spec);
    CHECK_EQ_CTX(st.switches, L + S, t->spec);
    CHECK_EQ_CTX(st.nodes, hosts + L + S, t->spec);
    CHECK_EQ_CTX(st.cables, cables, t->spec);
    CHECK_EQ_CTX(st.links, 2 * cables, t->spec);
    int leaf_radix = hpl + S * lps, spine_radix = L * lps;
    CHECK_EQ_CTX(st.max_radix, leaf_radix > spine_radix ? leaf_radix : spine_radix,
                 t->spec);
    CHECK_REL(st.host_injection_bps, hosts * 400e9, 1e-12, "bps");
    check_links(t);
    fs_topo_free(t);
  }
}

TEST(test_topo_star_counts) {
  for (int n = 1; n <= 9; n += 4) {
    fs_topo *t = NULL;
    fs_err err = {0, ""};
    CHECK_OK(fs_topo_star(n, 25, 0, &t, &err), &err);
    if (!t) continue;
    fs_topo_stats st = oracle_stats_of(t);
    CHECK_EQ_CTX(st.hosts, n, t->spec);
    CHECK_EQ_CTX(st.switches, 1, t->spec);
    CHECK_EQ_CTX(st.cables, n, t->spec);
    CHECK_EQ_CTX(st.max_radix, n, t->spec);
    check_links(t);
    fs_topo_free(t);
  }
}

/* The documented order: fat-tree host i hangs off edge switch (i/(k/2)) % (k/2)
 * of pod i/(k/2)^2; leaf-spine host i off leaf i/hpl. */
TEST(test_topo_host_numbering) {
  for (int k = 2; k <= 8; k += 2) {
    fs_topo *t = fattree(k, 100);
    if (!t) continue;
    int h = k / 2, bad = 0;
    for (int32_t i = 0; i < t->n_hosts; i++) {
      if (t->out_start[i + 1] - t->out_start[i] != 1) {
        bad++;
        continue;
      }
      const fs_node *e = &t->nodes[t->links[t->out_links[t->out_start[i]]].to];
      if (t->nodes[i].kind != FS_NODE_HOST || e->kind != FS_NODE_SWITCH || e->tier != 1 ||
          e->group != i / (h * h) || e->index != (i / h) % h || t->nodes[i].group != i / (h * h))
        bad++;
    }
    CHECK_EQ_CTX(bad, 0, t->spec);
    char name[32];
    fs_topo_node_name(t, t->n_hosts, name, sizeof(name));
    CHECK(strcmp(name, "edge0.0") == 0);
    fs_topo_free(t);
  }
  fs_topo *t = leafspine(5, 3, 4, 100, 100, 1);
  if (t) {
    int bad = 0;
    for (int32_t i = 0; i < t->n_hosts; i++) {
      const fs_node *leaf = &t->nodes[t->links[t->out_links[t->out_start[i]]].to];
      if (t->out_start[i + 1] - t->out_start[i] != 1 || leaf->tier != 1 ||
          leaf->index != i / 4)
        bad++;
    }
    CHECK_EQ_CTX(bad, 0, t->spec);
    fs_topo_free(t);
  }
}

/* ---- metrics ------------------------------------------------------------- */

TEST(test_topo_bisection_matches_formulas) {
  for (int k = 2; k <= 16; k += 2) {
    fs_topo *t = fattree(k, 100);
    if (!t) continue;
    fs_topo_stats st = oracle_stats_of(t);
    CHECK_REL(st.bisection_bps, k * k * k / 8 * 100e9, 1e-12, "bps");
    fs_topo_free(t);
  }
  fs_topo *t = leafspine(4, 2, 8, 100, 100, 1); /* min(16*100, 2*2*100) */
  if (t) {
    CHECK_REL(oracle_stats_of(t).bisection_bps, 400e9, 1e-12, "bps");
    fs_topo_free(t);
  }
  t = leafspine(4, 4, 2, 100, 100, 1); /* non-blocking: hosts/2 * host link */
  if (t) {
    CHECK_REL(oracle_stats_of(t).bisection_bps, 400e9, 1e-12, "bps");
    fs_topo_free(t);
  }
  t = leafspine(8, 3, 16, 25, 100, 2); /* min(64*25, 4*3*2*100) = 1600 */
  if (t) {
    CHECK_REL(oracle_stats_of(t).bisection_bps, 1600e9, 1e-12, "bps");
    fs_topo_free(t);
  }
  t = leafspine(8, 3, 16, 100, 50, 2); /* min(6400, 4*3*2*50) = 1200 */
  if (t) {
    CHECK_REL(oracle_stats_of(t).bisection_bps, 1200e9, 1e-12, "bps");
    fs_topo_free(t);
  }
  for (int n = 2; n <= 9; n++) {
    fs_err err = {0, ""};
    t = NULL;
    CHECK_OK(fs_topo_star(n, 40, 0, &t, &err), &err);
    if (!t) continue;
    CHECK_REL(oracle_stats_of(t).bisection_bps, (n / 2) * 40e9, 1e-12, "bps");
    fs_topo_free(t);
  }
}

TEST(test_topo_hops_match_closed_forms) {
  for (int k = 2; k <= 16; k += 2) {
    fs_topo *t = fattree(k, 100);
    if (!t) continue;
    fs_topo_stats st = oracle_stats_of(t);
    /* From one host: k/2-1 hosts 2 hops away (same edge), k^2/4-k/2 at 4
     * (same pod), n-k^2/4 at 6 (other pods). */
    double n = k * k * k / 4.0;
    double avg = (2.0 * (k / 2 - 1) + 4.0 * (k * k / 4 - k / 2) + 6.0 * (n - k * k / 4)) /
                 (n - 1);
    CHECK_EQ_CTX(st.diameter_hops, 6, t->spec); /* k=2 too: one host per pod */
    CHECK_REL(st.avg_hops, avg, 1e-12, "hops");
    fs_topo_free(t);
  }
  fs_topo *t = leafspine(6, 2, 5, 100, 100, 1);
  if (t) {
    fs_topo_stats st = oracle_stats_of(t);
    CHECK_EQ_INT(st.diameter_hops, 4);
    CHECK_REL(st.avg_hops, (2.0 * 4 + 4.0 * 25) / 29, 1e-12, "hops");
    fs_topo_free(t);
  }
  fs_err err = {0, ""};
  t = NULL;
  CHECK_OK(fs_topo_star(7, 100, 0, &t, &err), &err);
  if (t) {
    fs_topo_stats st = oracle_stats_of(t);
    CHECK_EQ_INT(st.diameter_hops, 2);
    CHECK_REL(st.avg_hops, 2.0, 1e-12, "hops");
    fs_topo_free(t);
  }
}

/* The oracles themselves on a case worked by hand: 3 leaves x 2 hosts, 2
 * spines. Hosts {0,1,2} send to {3,4,5}: 200 leave leaf0 over its two spine
 * links for leaf2, host 2 reaches host 3 inside leaf1: 300 Gbps. */
TEST(test_topo_oracles_agree_with_hand_worked_case) {
  fs_topo *t = leafspine(3, 2, 2, 100, 100, 1);
  if (!t) return;
  CHECK_REL(oracle_min_cut(t), 300e9, 1e-12, "bps");
  int diam;
  double avg;
  oracle_hops(t, 1, &diam, &avg);
  CHECK_EQ_INT(diam, 4);
  CHECK_REL(avg, (2.0 * 1 + 4.0 * 4) / 5, 1e-12, "hops");
  check_against_oracles(t, 1);
  fs_topo_free(t);
}

TEST(test_topo_stats_match_oracles_on_families) {
  for (int k = 2; k <= 6; k += 2) {
    fs_topo *t = fattree(k, 100);
    if (!t) continue;
    check_against_oracles(t, k == 2);
    fs_topo_free(t);
  }
  static const int cases[][4] = {{3, 2, 3, 2}, {5, 3, 1, 1}, {4, 2, 8, 1},
                                 {2, 7, 5, 1}, {7, 1, 2, 3}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    fs_topo *t = leafspine(cases[i][0], cases[i][1], cases[i][2], 100, 40, cases[i][3]);
    if (!t) continue;
    check_against_oracles(t, 1);
    fs_topo_free(t);
  }
  for (int n = 2; n <= 11; n += 3) {
    fs_err err = {0, ""};
    fs_topo *t = NULL;
    CHECK_OK(fs_topo_star(n, 10, 0, &t, &err), &err);
    if (!t) continue;
    check_against_oracles(t, 1);
    fs_topo_free(t);
  }
}

/* Irregular graphs through the internal builder: multi-homed hosts (some
 * sharing an attachment, some not), parallel cables, a host-to-host cable,
 * mixed capacities. Exercises the attachment classes and Dinic where the
 * families' symmetry would hide mistakes. */
TEST(test_topo_stats_match_oracles_on_random_graphs) {
  fs__rng r;
  fs__rng_seed(&r, 2024);
  for (int trial = 0; trial < 60; trial++) {
    int hosts = 2 + (int)fs__rng_below(&r, 9), sw = 1 + (int)fs__rng_below(&r, 8);
    fs_topo_builder b;
    fs_err err = {0, ""};
    if (fs_topo_builder_init(&b, "random", hosts + sw, 0, &err)) {
      test_fail(__FILE__, __LINE__, "builder: %s", err.msg);
      return;
    }
    for (int h = 0; h < hosts; h++) fs_topo_builder_node(&b, FS_NODE_HOST, 0, h, -1);
    for (int s = 0; s < sw; s++) fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, s, -1);
    static const double caps[] = {10e9, 25e9, 40e9, 100e9};
    /* A ring (or line) of switches keeps the graph connected. */
    for (int s = 0; s + 1 < sw; s++)
      fs_topo_builder_cable(&b, hosts + s, hosts + s + 1, caps[fs__rng_below(&r, 4)], 1);
    for (int e = (int)fs__rng_below(&r, (uint64_t)sw + 1); e > 0; e--)
      fs_topo_builder_cable(&b, hosts + (int)fs__rng_below(&r, (uint64_t)sw),
                   hosts + (int)fs__rng_below(&r, (uint64_t)sw), caps[fs__rng_below(&r, 4)], 1);
    for (int h = 0; h < hosts; h++) {
      /* Few distinct choices, so several hosts share an attachment. */
      int32_t a = hosts + (int32_t)fs__rng_below(&r, (uint64_t)(sw < 3 ? sw : 3));
      fs_topo_builder_cable(&b, h, a, caps[fs__rng_below(&r, 4)], 1);
      if (fs__rng_below(&r, 3) == 0)
        fs_topo_builder_cable(&b, h, hosts + (int32_t)fs__rng_below(&r, (uint64_t)sw), 100e9, 1);
    }
    if (fs__rng_below(&r, 4) == 0) fs_topo_builder_cable(&b, 0, hosts - 1, 100e9, 1);
    fs_topo *t = NULL;
    if (fs_topo_builder_finish(&b, &t, &err)) {
      test_fail(__FILE__, __LINE__, "builder: %s", err.msg);
      return;
    }
    snprintf(t->spec, sizeof(t->spec), "random trial %d", trial);
    check_against_oracles(t, 1);
    fs_topo_free(t);
  }
}

/* Hosts 0 and 1 both send only to switch A, but host 1 is entered only from
 * B (two links redirected by hand): d(0,1) = 3 while d(1,0) = 2. Sharing one
 * BFS between them would be wrong here; the missing reverses must make
 * metrics.c notice and fall back to one BFS per host. */
TEST(test_topo_stats_on_asymmetric_links) {
  fs_topo_builder b;
  fs_err err = {0, ""};
  if (fs_topo_builder_init(&b, "asym", 5, 10, &err)) return;
  for (int h = 0; h < 3; h++) fs_topo_builder_node(&b, FS_NODE_HOST, 0, h, -1);
  int32_t A = fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, 0, -1);
  int32_t B = fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, 1, -1);
  fs_topo_builder_cable(&b, 0, A, 10e9, 1); /* links 0, 1 */
  fs_topo_builder_cable(&b, 1, A, 10e9, 1); /* links 2, 3 */
  fs_topo_builder_cable(&b, 2, B, 10e9, 1); /* links 4, 5 */
  fs_topo_builder_cable(&b, A, B, 10e9, 1); /* links 6, 7 */
  fs_topo_builder_cable(&b, B, A, 10e9, 1); /* links 8, 9 */
  fs_topo *t = NULL;
  if (fs_topo_builder_finish(&b, &t, &err)) return;
  snprintf(t->spec, sizeof(t->spec), "asymmetric");
  /* CSR depends only on `from`, so redirecting `to` keeps it valid. */
  CHECK(t->links[3].from == A && t->links[3].to == 1);
  t->links[3].to = 0; /* A->1 becomes a second A->0 */
  CHECK(t->links[8].from == B && t->links[8].to == A);
  t->links[8].to = 1; /* B->A becomes B->1 */
  int diam;
  double avg;
  oracle_hops(t, 1, &diam, &avg);
  /* pairs: 0->1 3, 0->2 3, 1->0 2, 1->2 3, 2->0 3 (2,B,A,0), 2->1 2 */
  CHECK_EQ_INT(diam, 3);
  CHECK_REL(avg, 16.0 / 6, 1e-12, "hops");
  check_against_oracles(t, 1);
  fs_topo_free(t);
}

/* 2 hosts at the ends of a 20000-switch line: the max-flow search must not
 * recurse that deep, and the bottleneck is the slowest cable. */
TEST(test_topo_stats_long_line) {
  enum { N = 20000 };
  fs_topo_builder b;
  fs_err err = {0, ""};
  if (fs_topo_builder_init(&b, "line", N + 2, 2 * (N + 1), &err)) return;
  fs_topo_builder_node(&b, FS_NODE_HOST, 0, 0, -1);
  fs_topo_builder_node(&b, FS_NODE_HOST, 0, 1, -1);
  for (int s = 0; s < N; s++) fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, s, -1);
  fs_topo_builder_cable(&b, 0, 2, 100e9, 1);
  for (int s = 0; s + 1 < N; s++)
    fs_topo_builder_cable(&b, 2 + s, 3 + s, s == N / 3 ? 7e9 : 100e9, 1);
  fs_topo_builder_cable(&b, N + 1, 1, 100e9, 1);
  fs_topo *t = NULL;
  if (fs_topo_builder_finish(&b, &t, &err)) {
    test_fail(__FILE__, __LINE__, "builder: %s", err.msg);
    return;
  }
  fs_topo_stats st = oracle_stats_of(t);
  CHECK_EQ_INT(st.diameter_hops, N + 1);
  CHECK_REL(st.avg_hops, N + 1.0, 1e-12, "hops");
  CHECK_REL(st.bisection_bps, 7e9, 1e-12, "bps");
  fs_topo_free(t);
}

TEST(test_topo_stats_disconnected_and_tiny) {
  fs_topo_builder b;
  fs_err err = {0, ""};
  if (fs_topo_builder_init(&b, "split", 6, 8, &err)) return;
  for (int h = 0; h < 4; h++) fs_topo_builder_node(&b, FS_NODE_HOST, 0, h, -1);
  fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, 0, -1);
  fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, 1, -1);
  fs_topo_builder_cable(&b, 0, 4, 1e9, 1);
  fs_topo_builder_cable(&b, 1, 4, 1e9, 1);
  fs_topo_builder_cable(&b, 2, 5, 1e9, 1);
  fs_topo_builder_cable(&b, 3, 5, 1e9, 1);
  fs_topo *t = NULL;
  if (fs_topo_builder_finish(&b, &t, &err)) return;
  fs_topo_stats st;
  memset(&st, 0x5a, sizeof(st));
  fs_topo_stats untouched = st;
  int rc = fs_topo_stats_compute(t, &st, &err);
  CHECK_EQ_INT(rc, FS_EINVAL);
  CHECK_EQ_INT(err.code, FS_EINVAL);
  CHECK(strstr(err.msg, "cannot reach") != NULL);
  CHECK(memcmp(&st, &untouched, sizeof(st)) == 0);
  fs_topo_free(t);

  t = NULL;
  CHECK_OK(fs_topo_star(1, 100, 0, &t, &err), &err);
  if (t) {
    st = oracle_stats_of(t);
    CHECK_EQ_INT(st.hosts, 1);
    CHECK_EQ_INT(st.diameter_hops, 0);
    CHECK(st.bisection_bps == 0);
    CHECK(st.avg_hops == 0);
    fs_topo_free(t);
  }
}

/* ---- specs ---------------------------------------------------------------- */

TEST(test_topo_spec_inline_and_aliases) {
  fs_topo *t = from_spec("fattree:k=4,gbps=100");
  if (t) {
    CHECK(strcmp(t->family, "fattree") == 0);
    CHECK_EQ_INT(t->n_hosts, 16);
    CHECK_REL(t->links[0].capacity_bps, 100e9, 0, "bps");
    /* The canonical spec rebuilds the same topology. */
    fs_topo *u = from_spec(t->spec);
    if (u) {
      CHECK(strcmp(u->spec, t->spec) == 0);
      CHECK_EQ_INT(u->n_links, t->n_links);
      fs_topo_free(u);
    }
    fs_topo_free(t);
  }
  t = from_spec("fattree:k=6,link_gbps=25,latency_ns=300");
  if (t) {
    CHECK_EQ_INT(t->n_hosts, 54);
    CHECK_REL(t->links[0].capacity_bps, 25e9, 0, "bps");
    CHECK_EQ_INT(t->links[0].latency_ns, 300);
    fs_topo_free(t);
  }
  t = from_spec("leafspine:leaves=4,spines=2,hosts_per_leaf=8,host_gbps=400,fabric_gbps=200");
  if (t) {
    CHECK_EQ_INT(t->n_hosts, 32);
    CHECK_REL(t->links[0].capacity_bps, 400e9, 0, "bps");
    CHECK_REL(t->links[t->n_links - 1].capacity_bps, 200e9, 0, "bps");
    fs_topo_free(t);
  }
  t = from_spec("star:hosts=3");
  if (t) {
    CHECK_EQ_INT(t->n_hosts, 3);
    CHECK_REL(t->links[0].capacity_bps, 100e9, 0, "bps"); /* documented default */
    fs_topo_free(t);
  }
}

TEST(test_topo_spec_json_text) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_from_json_text("{\"type\": \"leafspine\", \"leaves\": 3, \"spines\": 2,"
                                  " \"hosts_per_leaf\": 4, \"host_gbps\": 100}",
                                  "ls.json", &t, &err),
           &err);
  if (t) {
    CHECK_EQ_INT(t->n_hosts, 12);
    CHECK_EQ_INT(t->n_nodes, 17);
    /* fabric_gbps defaults to host_gbps */
    CHECK_REL(t->links[t->n_links - 1].capacity_bps, 100e9, 0, "bps");
    fs_topo_free(t);
  }
  t = NULL;
  CHECK_OK(fs_topo_from_json_text("{\"topology\": {\"type\": \"star\", \"hosts\": 5}}",
                                  "scenario.json", &t, &err),
           &err);
  if (t) {
    CHECK_EQ_INT(t->n_hosts, 5);
    fs_topo_free(t);
  }
  t = NULL;
  int rc = fs_topo_from_json_text("{\"type\": \"fattree\", \"k\": 7}", "t.json", &t, &err);
  CHECK_EQ_INT(rc, FS_EINVAL);
  CHECK(t == NULL);
  CHECK(strstr(err.msg, "t.json") && strstr(err.msg, "$.k") && strstr(err.msg, "7"));
  rc = fs_topo_from_json_text("{\"topology\": {\"type\": \"star\", \"hosts\": 0}}",
                              "s.json", &t, &err);
  CHECK_EQ_INT(rc, FS_EINVAL);
  CHECK(strstr(err.msg, "$.topology.hosts") != NULL);
  rc = fs_topo_from_json_text("{\"type\": \"star\",", "bad.json", &t, &err);
  CHECK_EQ_INT(rc, FS_EINVAL);
  CHECK(strstr(err.msg, "bad.json") != NULL);
}

/* Each bad spec must fail with FS_EINVAL, leave *out alone and name what was
 * wrong. */
TEST(test_topo_spec_errors_name_the_input) {
  static const struct {
    const char *spec, *want1, *want2;
  } cases[] = {
      {"fattree:k=7", "$.k", "7"},
      {"fattree:k=4,bogus=1", "$.bogus", "unknown key"},
      {"torus9:x=1", "$.type", "torus9"},
      {"fattree:k", "'k'", "key=value"},
      {"fattree:k=four", "$.k", "four"},
      {"fattree:k=4,gbps=100,link_gbps=100", "link_gbps", "either"},
      {"fattree:gbps=100", "$.k", "fattree:gbps=100"},
      {"leafspine:leaves=0,spines=2,hosts_per_leaf=1", "$.leaves", "0"},
      {"fattree:k=4,k=6", "$.k", "duplicate"},
      {":k=4", "FAMILY", ":k=4"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    fs_topo *t = NULL;
    fs_err err = {0, ""};
    int rc = fs_topo_from_spec(cases[i].spec, &t, &err);
    CHECK_EQ_CTX(rc, FS_EINVAL, cases[i].spec);
    CHECK_EQ_CTX(err.code, FS_EINVAL, cases[i].spec);
    if (t) {
      test_fail(__FILE__, __LINE__, "%s: built a topology", cases[i].spec);
      fs_topo_free(t);
    }
    if (!strstr(err.msg, cases[i].want1) || !strstr(err.msg, cases[i].want2))
      test_fail(__FILE__, __LINE__, "%s: message \"%s\" should mention \"%s\" and \"%s\"",
                cases[i].spec, err.msg, cases[i].want1, cases[i].want2);
  }
}
