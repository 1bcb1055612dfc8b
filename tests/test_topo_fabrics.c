/* Tests of the optical fabrics lotus, sipml-ocs, sipml-ring and jupiter
 * (docs/model.md, "Optical fabrics"): counts, the closed-form hop
 * statistics against the BFS oracle, the closed-form bisection against the
 * max-flow and a hand value, Lotus routes (valid walks of the paper's
 * lengths), Jupiter's topology engineering on hand-computed cases, the
 * costs by hand, the AWGR wavelength rule and a job on each. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabricsim/route.h"
#include "fabricsim/topo.h"
#include "fabricsim/train.h"
#include "test.h"
#include "topo_oracle.h"

/* The closed forms (stats) against the BFS oracle, and the bisection
 * formula against the max-flow. */
static void check_closed_forms(const fs_topo *t, const char *s, int want_formula) {
  fs_topo_stats st = oracle_stats_of(t);
  int d;
  double avg;
  oracle_hops(t, 0, &d, &avg);
  CHECK_EQ_CTX(st.diameter_hops, d, s);
  CHECK_REL(st.avg_hops, avg, 1e-12, s);
  double f = fs_topo_bisection_formula(t);
  if (want_formula) {
    CHECK(f >= 0);
    CHECK_REL(f, st.bisection_bps, 1e-9, s);
  }
}

TEST(test_topo_fabrics_lotus_counts_hops_bisection) {
  static const int cases[][3] = {{3, 1, 1}, {3, 2, 2}, {4, 2, 1}, {5, 1, 2},
                                 {6, 2, 2}, {7, 2, 1}, {8, 2, 3}, {10, 3, 2}};
  for (int i = 0; i < 8; i++) {
    int g = cases[i][0], a = cases[i][1], p = cases[i][2];
    char s[96];
    snprintf(s, sizeof(s), "lotus:g=%d,a=%d,p=%d", g, a, p);
    fs_topo *t = oracle_spec(s);
    if (!t) continue;
    int H = g * a * p;
    CHECK_EQ_CTX(t->n_hosts, H, s);
    CHECK_EQ_CTX(t->n_nodes, H + 2 * g * a, s);
    /* hosts, K(a, a) a group, one optical cable a pair, a^2 AWGR channels
     * between adjacent groups */
    CHECK_EQ_CTX(t->n_links / 2, H + g * a * a + g * (g - 1) / 2 + g * a * a, s);
    check_closed_forms(t, s, g % 2 == 0);
    fs_topo_free(t);
  }
  /* by hand: g = 4, a = 2, p = 2: 4 optical cables of 100 Gb/s and 2 x 4
   * AWGR channels of 25 Gb/s cross the cut, 600 Gb/s < the half's 800;
   * hops: 1 other on the switch (2), 2 in the group (4), 8 at ring
   * distance 1 (3), 4 at distance 2 (4): (2 + 8 + 24 + 16) / 15 */
  fs_topo *t = oracle_spec("lotus:g=4,a=2,p=2");
  if (t) {
    fs_topo_stats st = oracle_stats_of(t);
    CHECK_REL(st.bisection_bps, 600e9, 1e-9, "bps");
    CHECK_EQ_INT(st.diameter_hops, 4);
    CHECK_REL(st.avg_hops, 50.0 / 15, 1e-12, "hops");
  }
  fs_topo_free(t);
  /* over a grid of shapes and rates: wherever the closed form is claimed
   * it is the max-flow, and it is claimed for some of each shape */
  int claimed = 0;
  for (int g = 4; g <= 8; g += 2)
    for (int a = 1; a <= 3; a++)
      for (int p = 1; p <= 2; p++)
        for (int r = 0; r < 4; r++) {
          char s[128];
          snprintf(s, sizeof(s), "lotus:g=%d,a=%d,p=%d,global_gbps=%d,awgr_gbps=%d", g, a, p,
                   r & 1 ? 400 : 25, r & 2 ? 400 : 25);
          t = oracle_spec(s);
          if (!t) continue;
          double f = fs_topo_bisection_formula(t);
          if (f >= 0) {
            claimed++;
            CHECK_REL(f, oracle_stats_of(t).bisection_bps, 1e-9, s);
          }
          fs_topo_free(t);
        }
  CHECK_EQ_INT(claimed, 18); /* of 72 */
  /* a = 1, p = 8: a group's one upper switch is fed 100 Gb/s but has 4
   * optical cables across the cut: no closed form is claimed */
  t = oracle_spec("lotus:g=8,a=1,p=8");
  if (t) CHECK(fs_topo_bisection_formula(t) < 0);
  fs_topo_free(t);
  /* g = 8: groups 3 and 4 apart take the optical cable, 5 hops */
  t = oracle_spec("lotus:g=8,a=1,p=1");
  if (t) CHECK_EQ_INT(oracle_stats_of(t).diameter_hops, 5);
  fs_topo_free(t);
}

/* The hops Lotus's routing takes between hosts x and y of lotus:g,a,p. */
static int lotus_rule(int g, int a, int p, int x, int y) {
  int sx = x / p, sy = y / p, gx = sx / a, gy = sy / a;
  if (sx == sy) return 2;
  if (gx == gy) return 4;
  int f = (gy - gx + g) % g, d = f < g - f ? f : g - f;
  return d == 1 ? 3 : d == 2 ? 4 : 5;
}

/* A route is a walk from src to dst: following its links from src visits
 * each once and ends at dst. */
static int walk_ok(const fs_topo *t, const fs_route *rt, int32_t src, int32_t dst) {
  int32_t at = src;
  for (int32_t k = 0; k < rt->n; k++) {
    if (t->links[rt->links[k]].from != at) return 0;
    at = t->links[rt->links[k]].to;
    if (k + 1 < rt->n && at < t->n_hosts && t->nodes[at].kind == FS_NODE_HOST) return 0;
  }
  return at == dst;
}

TEST(test_topo_fabrics_lotus_routing_paths) {
  static const int cases[][3] = {{7, 2, 2}, {4, 3, 1}, {3, 1, 2}};
  fs_err err = {0, ""};
  for (int c = 0; c < 3; c++) {
    int g = cases[c][0], a = cases[c][1], p = cases[c][2];
    char s[96];
    snprintf(s, sizeof(s), "lotus:g=%d,a=%d,p=%d", g, a, p);
    fs_topo *t = oracle_spec(s);
    fs_router *r = NULL;
    if (!t) continue;
    CHECK_OK(fs_route_mode_check(FS_ROUTE_LOTUS, t, &err), &err);
    CHECK_OK(fs_router_new(t, &r, &err), &err);
    int32_t H = t->n_hosts, *dist = malloc((size_t)t->n_nodes * sizeof(int32_t));
    int32_t *q = malloc((size_t)t->n_nodes * sizeof(int32_t));
    fs_route rt;
    fs_route_init(&rt);
    for (int32_t x = 0; r && dist && q && x < H; x++) {
      oracle_bfs(t, x, 0, dist, q);
      for (int32_t y = 0; y < H; y++) {
        if (x == y) continue;
        CHECK_OK(fs_route_by_mode(r, FS_ROUTE_LOTUS, x, y, 1, (uint64_t)(x * H + y), &rt, &err),
                 &err);
        CHECK(walk_ok(t, &rt, x, y));
        /* the paper's lengths, and every one a shortest path */
        CHECK_EQ_CTX(rt.hops, lotus_rule(g, a, p, x, y), s);
        CHECK_EQ_CTX(rt.hops, dist[y], s);
      }
    }
    free(dist);
    free(q);
    fs_route_free(&rt);
    fs_router_free(r);
    fs_topo_free(t);
  }
  /* GPU servers: two GPUs of a server take the scale-up switch; others
   * leave through their NICs (2 more links) */
  fs_topo *t = oracle_spec("lotus:g=4,a=2,p=4,gpus_per_node=2");
  fs_router *r = NULL;
  fs_route rt;
  fs_route_init(&rt);
  if (t) CHECK_OK(fs_router_new(t, &r, &err), &err);
  if (r) {
    CHECK_OK(fs_route_by_mode(r, FS_ROUTE_LOTUS, 0, 1, 1, 1, &rt, &err), &err);
    CHECK_EQ_INT(rt.hops, 2);
    CHECK(walk_ok(t, &rt, 0, 1));
    CHECK_OK(fs_route_by_mode(r, FS_ROUTE_LOTUS, 0, 8, 1, 1, &rt, &err), &err);
    CHECK_EQ_INT(rt.hops, 5); /* adjacent group: 3 + the two NIC links */
    CHECK(walk_ok(t, &rt, 0, 8));
  }
  fs_route_free(&rt);
  fs_router_free(r);
  fs_topo_free(t);
  /* the mode is Lotus's only */
  t = oracle_spec("dragonfly:p=2");
  if (t) CHECK_EQ_INT(fs_route_mode_check(FS_ROUTE_LOTUS, t, &err), FS_EINVAL);
  fs_topo_free(t);
}

TEST(test_topo_fabrics_sipml_counts_hops_bisection) {
  static const int ring[][2] = {{5, 1}, {7, 2}, {9, 3}, {12, 2}, {16, 3}, {21, 4}};
  for (int i = 0; i < 6; i++) {
    int n = ring[i][0], r = ring[i][1];
    char s[96];
    snprintf(s, sizeof(s), "sipml-ring:gpus=%d,reach=%d", n, r);
    fs_topo *t = oracle_spec(s);
    if (!t) continue;
    CHECK_EQ_CTX(t->n_nodes, 2 * n, s);
    CHECK_EQ_CTX(t->n_links / 2, n + n * r, s);
    /* a neighbour's share: 2560 / 2r; the k-th neighbour k x 5 ns away */
    CHECK_REL(t->links[2 * n].capacity_bps, 2560e9 / (2 * r), 1e-12, s);
    CHECK_EQ_CTX(t->links[2 * (n + n * (r - 1))].latency_ns, 5 * r, s);
    check_closed_forms(t, s, 1);
    fs_topo_free(t);
  }
  /* by hand: 16 GPUs, reach 3: 12 circuits of 2560/6 Gb/s cross the cut,
   * 5120 Gb/s; diameter 2 + ceil(8 / 3) = 5 */
  fs_topo *t = oracle_spec("sipml-ring:gpus=16,reach=3");
  if (t) {
    fs_topo_stats st = oracle_stats_of(t);
    CHECK_REL(st.bisection_bps, 5120e9, 1e-9, "bps");
    CHECK_EQ_INT(st.diameter_hops, 5);
  }
  fs_topo_free(t);
  /* sipml-ocs: degree d is a d/2-dimensional torus of GPUs */
  static const char *const ocs[] = {"sipml-ocs:gpus=64,degree=4", "sipml-ocs:gpus=27,degree=6",
                                    "sipml-ocs:gpus=36,degree=4", "sipml-ocs:gpus=10,degree=2"};
  static const int dims[][3] = {{8, 8, 0}, {3, 3, 3}, {6, 6, 0}, {10, 0, 0}};
  for (int i = 0; i < 4; i++) {
    t = oracle_spec(ocs[i]);
    if (!t) continue;
    for (int k = 0; k < t->n_dims; k++) CHECK_EQ_CTX(t->dims[k], dims[i][k], ocs[i]);
    int n = t->n_hosts, deg = 0;
    sscanf(strstr(ocs[i], "degree=") + 7, "%d", &deg);
    /* one circuit per port end: n d / 2, each 2560 / d Gb/s */
    CHECK_EQ_CTX(t->n_links / 2, n + n * deg / 2, ocs[i]);
    CHECK_REL(t->links[2 * n].capacity_bps, 2560e9 / deg, 1e-12, ocs[i]);
    check_closed_forms(t, ocs[i], dims[i][0] % 2 == 0);
    fs_topo_free(t);
  }
  /* 8 x 8 by hand: diameter 2 + 4 + 4; the cut crosses 2 x 8 circuits of
   * 640 Gb/s */
  t = oracle_spec("sipml-ocs:gpus=64,degree=4");
  if (t) {
    fs_topo_stats st = oracle_stats_of(t);
    CHECK_EQ_INT(st.diameter_hops, 10);
    CHECK_REL(st.bisection_bps, 16 * 640e9, 1e-9, "bps");
  }
  fs_topo_free(t);
  /* 7 GPUs do not split into two ring sizes >= 3 */
  fs_topo *bad = NULL;
  fs_err err = {0, ""};
  CHECK_EQ_INT(fs_topo_from_spec("sipml-ocs:gpus=7,degree=4", &bad, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "gpus (7)") != NULL);
}

/* Cables between blocks i and j of a jupiter topology. */
static int block_links(const fs_topo *t, int32_t i, int32_t j) {
  int32_t b0 = t->n_hosts, n = 0;
  for (int32_t l = 0; l < t->n_links; l += 2)
    n += (t->links[l].from == b0 + i && t->links[l].to == b0 + j) ||
         (t->links[l].from == b0 + j && t->links[l].to == b0 + i);
  return n;
}

TEST(test_topo_fabrics_jupiter_counts_hops_bisection) {
  static const char *const specs[] = {"jupiter:blocks=4,hosts_per_block=8",
                                      "jupiter:blocks=3,hosts_per_block=2,uplinks=5",
                                      "jupiter:blocks=6,hosts_per_block=3,uplinks=11"};
  for (int i = 0; i < 3; i++) {
    fs_topo *t = oracle_spec(specs[i]);
    if (!t) continue;
    int B = t->dims[0];
    check_closed_forms(t, specs[i], B % 2 == 0);
    fs_topo_free(t);
  }
  /* by hand: 4 blocks of 8 hosts, 8 uplinks: 8 / 3 = 2 links a pair, 44
   * cables; 2 x 2 pairs x 2 links x 100 Gb/s = 800 Gb/s across the cut;
   * hops (7 x 2 + 24 x 3) / 31 */
  fs_topo *t = oracle_spec("jupiter:blocks=4,hosts_per_block=8");
  if (t) {
    CHECK_EQ_INT(t->n_nodes, 36);
    CHECK_EQ_INT(t->n_links / 2, 32 + 12);
    CHECK_EQ_INT(block_links(t, 0, 3), 2);
    fs_topo_stats st = oracle_stats_of(t);
    CHECK_EQ_INT(st.diameter_hops, 3);
    CHECK_REL(st.avg_hops, 86.0 / 31, 1e-12, "hops");
    CHECK_REL(st.bisection_bps, 800e9, 1e-9, "bps");
  }
  fs_topo_free(t);
}

TEST(test_topo_fabrics_jupiter_engineering_by_hand) {
  fs_err err = {0, ""};
  /* 3 blocks of 4 ports, demand 0-1: 6, 0-2 and 1-2: 1. The mesh takes 2
   * ports each; then 0-1 has 6 a link against 1 and takes one (3 a link),
   * then another (2): blocks 0 and 1 are full, block 2 keeps 2 spare. */
  int32_t up3[3] = {4, 4, 4}, x3[9];
  double d3[9] = {0, 6, 1, 6, 0, 1, 1, 1, 0};
  CHECK_OK(fs_jupiter_engineer(3, up3, d3, x3, &err), &err);
  static const int32_t want3[9] = {0, 3, 1, 3, 0, 1, 1, 1, 0};
  for (int q = 0; q < 9; q++) CHECK_EQ_INT(x3[q], want3[q]);
  /* 4 blocks of 6 ports, demand only 0-1 and 2-3 (10 each, one direction
   * given: a pair needs its larger direction): after the mesh both pairs
   * take their 3 spare ports in turn, 4 links each, the rest 1 */
  int32_t up4[4] = {6, 6, 6, 6}, x4[16];
  double d4[16] = {0};
  d4[0 * 4 + 1] = 10;
  d4[3 * 4 + 2] = 10;
  CHECK_OK(fs_jupiter_engineer(4, up4, d4, x4, &err), &err);
  CHECK_EQ_INT(x4[0 * 4 + 1], 4);
  CHECK_EQ_INT(x4[2 * 4 + 3], 4);
  CHECK_EQ_INT(x4[0 * 4 + 2], 1);
  CHECK_EQ_INT(x4[1 * 4 + 3], 1);
  for (int i = 0; i < 4; i++) {
    int used = 0;
    for (int j = 0; j < 4; j++) {
      used += x4[i * 4 + j];
      CHECK_EQ_INT(x4[i * 4 + j], x4[j * 4 + i]);
    }
    CHECK(used <= up4[i]);
  }
  /* no demand: the spare ports spread evenly (fewest links first) */
  double z[16] = {0};
  int32_t up5[4] = {7, 7, 7, 7};
  CHECK_OK(fs_jupiter_engineer(4, up5, z, x4, &err), &err);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      if (i != j) CHECK(x4[i * 4 + j] >= 2 && x4[i * 4 + j] <= 3);
  d4[1] = -1;
  CHECK_EQ_INT(fs_jupiter_engineer(4, up4, d4, x4, &err), FS_EINVAL);
  /* from a topology object: the 3-block case above, built */
  fs_topo *t = NULL;
  const char *json =
      "{\"type\": \"jupiter\", \"blocks\": 3, \"hosts_per_block\": 2, \"uplinks\": 4,"
      " \"demand\": [[0, 6, 1], [6, 0, 1], [1, 1, 0]]}";
  CHECK_OK(fs_topo_from_json_text(json, "te.json", &t, &err), &err);
  if (t) {
    CHECK_EQ_INT(block_links(t, 0, 1), 3);
    CHECK_EQ_INT(block_links(t, 0, 2), 1);
    CHECK_EQ_INT(block_links(t, 1, 2), 1);
    CHECK(strstr(t->spec, ",te=") != NULL);
    check_closed_forms(t, "te.json", 0);
    CHECK(fs_topo_bisection_formula(t) < 0); /* engineered: no closed form */
  }
  fs_topo_free(t);
  /* an existing fabric rebuilt for a demand keeps its rates and servers */
  fs_topo *u = oracle_spec("jupiter:blocks=3,hosts_per_block=4,uplinks=4,host_gbps=400,"
                           "uplink_gbps=200,gpus_per_node=2,scaleup=optical_io");
  t = NULL;
  if (u) CHECK_OK(fs_topo_jupiter_engineer(u, d3, &t, &err), &err);
  if (t) {
    CHECK_EQ_INT(block_links(t, 0, 1), 3);
    CHECK_EQ_INT(block_links(t, 1, 2), 1);
    CHECK_EQ_INT(t->gpus_per_node, 2);
    CHECK_EQ_INT(t->scaleup_optical, 1);
    CHECK_EQ_INT(t->n_hosts, u->n_hosts);
    for (int32_t l = 0; l < t->n_links; l++)
      if (t->nodes[t->links[l].from].kind == FS_NODE_SWITCH &&
          t->nodes[t->links[l].to].kind == FS_NODE_SWITCH)
        CHECK_REL(t->links[l].capacity_bps, 200e9, 1e-12, "bps");
  }
  fs_topo_free(t);
  fs_topo_free(u);
  t = NULL;
  u = oracle_spec("fattree:k=4");
  if (u) CHECK_EQ_INT(fs_topo_jupiter_engineer(u, d3, &t, &err), FS_EINVAL);
  fs_topo_free(u);
  /* from a training job: its traffic between blocks (the CLI) */
  static char out[1 << 14];
  CHECK_EQ_INT(test_run_cli("topo examples/fabrics/gpt3-175b-jupiter.json --demand-from-job",
                            "2>&1", out, sizeof(out)),
               0);
  CHECK(strstr(out, ",te=") != NULL);
  /* a demand matrix of the wrong shape names its path */
  t = NULL;
  CHECK_EQ_INT(fs_topo_from_json_text("{\"type\": \"jupiter\", \"blocks\": 3, \"hosts_per_block\""
                                      ": 2, \"demand\": [[0, 1, 1], [1, 0, 1]]}",
                                      "te.json", &t, &err),
               FS_EINVAL);
  CHECK(strstr(err.msg, "$.demand") != NULL);
}

TEST(test_topo_fabrics_cost_by_hand) {
  fs_topo_cost c;
  /* sipml-ring 16 GPUs: a $1000 chiplet and 2560 Gb/s x 5 pJ/bit = 12.8 W
   * each, 16 m of ring fibre at $1.5: $16,024, 204.8 W */
  fs_topo *t = oracle_spec("sipml-ring:gpus=16,reach=2");
  if (t) {
    fs_topo_cost_compute(t, &c);
    CHECK_REL(c.usd, 16024, 1e-12, "usd");
    CHECK_REL(c.watts, 204.8, 1e-12, "W");
    CHECK_REL(c.optical_usd, 16000, 1e-12, "usd");
  }
  fs_topo_free(t);
  /* sipml-ocs 64 GPUs, degree 4: 256 OCS ports at 40000/136 and 108/136 W,
   * 256 x 30 m of fibre, 64 chiplets */
  t = oracle_spec("sipml-ocs:gpus=64,degree=4");
  if (t) {
    fs_topo_cost_compute(t, &c);
    CHECK_REL(c.usd, 64000 + 256 * 40000.0 / 136 + 256 * 30 * 1.5, 1e-12, "usd");
    CHECK_REL(c.watts, 64 * 12.8 + 256 * 108.0 / 136, 1e-12, "W");
  }
  fs_topo_free(t);
  /* jupiter 4 x 8: the electrical parts (block ports, NICs, copper and
   * multimode optics: $41,900, 820 W) and 2 OCS ports per block cable */
  t = oracle_spec("jupiter:blocks=4,hosts_per_block=8");
  if (t) {
    fs_topo_cost_compute(t, &c);
    CHECK_REL(c.usd, 41900 + 24 * 40000.0 / 136, 1e-12, "usd");
    CHECK_REL(c.watts, 820 + 24 * 108.0 / 136, 1e-12, "W");
  }
  fs_topo_free(t);
  /* optical I/O as the scale-up domain: 32 GPUs x one chiplet more */
  t = oracle_spec("jupiter:blocks=4,hosts_per_block=8,gpus_per_node=4,scaleup=optical_io");
  if (t) {
    CHECK_EQ_INT(t->scaleup_optical, 1);
    fs_topo_cost_compute(t, &c);
    CHECK_REL(c.optical_usd, 24 * 40000.0 / 136 + 32 * 1000, 1e-12, "usd");
    CHECK_REL(c.optical_watts, 24 * 108.0 / 136 + 32 * 12.8, 1e-12, "W");
    /* the preset's scale-up rate: one chiplet, 2560 Gb/s */
    int found = 0;
    for (int32_t e = t->out_start[0]; e < t->out_start[1]; e++)
      if (t->nodes[t->links[t->out_links[e]].to].kind == FS_NODE_SCALEUP) {
        CHECK_REL(t->links[t->out_links[e]].capacity_bps, 2560e9, 1e-12, "bps");
        found = 1;
      }
    CHECK(found);
  }
  fs_topo_free(t);
  /* lotus: its 2 g a grating ports at $100 (4 groups x 2 lower switches) */
  t = oracle_spec("lotus:g=4,a=2,p=2");
  if (t) {
    fs_topo_cost_compute(t, &c);
    CHECK_REL(c.optical_usd, 1600, 1e-12, "usd");
    CHECK_EQ_INT(c.part[FS_PART_XCVR_DR].count, 2 * 8); /* a WDM port to each grating */
  }
  fs_topo_free(t);
  /* the same graph imported as a file costs the same */
  static char out[1 << 15];
  char dir[] = "/tmp/fs-lotus-cost-XXXXXX", path[96], cmd[160];
  if (!mkdtemp(dir)) {
    test_fail(__FILE__, __LINE__, "mkdtemp failed");
    return;
  }
  snprintf(path, sizeof(path), "%s/lotus.json", dir);
  snprintf(cmd, sizeof(cmd), "topo lotus:g=4,a=2,p=2 --export json --out %s", path);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0);
  t = oracle_spec(path);
  if (t) {
    fs_topo_cost f;
    fs_topo_cost_compute(t, &f);
    fs_topo *u = oracle_spec("lotus:g=4,a=2,p=2");
    if (u) fs_topo_cost_compute(u, &c);
    CHECK_REL(f.usd, c.usd, 1e-12, "usd");
    CHECK_REL(f.watts, c.watts, 1e-12, "W");
    fs_topo_free(u);
  }
  fs_topo_free(t);
  remove(path);
  rmdir(dir);
}

TEST(test_topo_fabrics_awgr_wavelengths) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  /* 16 ports need 15 wavelengths (the other 15 outputs) */
  CHECK_OK(fs_topo_from_spec("awgr:hosts=16,wavelengths=15", &t, &err), &err);
  if (t) CHECK(strstr(t->spec, "wavelengths=15") != NULL);
  fs_topo_free(t);
  t = NULL;
  CHECK_EQ_INT(fs_topo_from_spec("awgr:hosts=16,wavelengths=14", &t, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "$.wavelengths") != NULL && strstr(err.msg, "14") != NULL);
  fs_awgr_params p = {5, 25, 300, 3};
  CHECK_EQ_INT(fs_topo_awgr(&p, &t, &err), FS_EINVAL);
}

/* Every family runs a collective and a job (small instances). */
TEST(test_topo_fabrics_coll_and_train) {
  static const char *const specs[] = {"lotus:g=4,a=2,p=2", "sipml-ocs:gpus=16,degree=4",
                                      "sipml-ring:gpus=16,reach=2",
                                      "jupiter:blocks=4,hosts_per_block=4"};
  static const char *const routing[] = {"lotus", "dor", "ecmp", "spray"};
  static char out[1 << 14];
  for (int i = 0; i < 4; i++) {
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "coll --op allreduce --ranks 16 --topo %s --size 64M --routing %s", specs[i],
             routing[i]);
    CHECK_EQ_CTX(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0, cmd);
  }
  CHECK_EQ_INT(test_run_cli("train examples/fabrics/gpt3-175b-sipml-ocs.json --no-compare",
                            "2>&1", out, sizeof(out)),
               0);
  CHECK(strstr(out, "iteration time:") != NULL);
}

/* train --demand-from-job runs the job on its jupiter fabric with the block
 * links engineered for its own traffic: the same iteration as the two-step
 * path (topo --demand-from-job --export json, that graph as the job's
 * topology), and the engineered spec in its report. */
TEST(test_topo_fabrics_train_demand_from_job) {
  static char exported[1 << 20], out[1 << 14];
  const char *job_file = "examples/fabrics/gpt3-175b-jupiter.json";
  char cmd[256];
  snprintf(cmd, sizeof(cmd), "topo %s --demand-from-job --export json", job_file);
  CHECK_EQ_INT(test_run_cli(cmd, "2>/dev/null", exported, sizeof(exported)), 0);
  fs_err err = {0, ""};
  fs_job *job = NULL;
  fs_topo *te = NULL;
  fs_train *tr = NULL;
  fs_train_result res;
  fs_train_opts opts = {0};
  opts.no_compare = 1;
  CHECK_OK(fs_topo_from_json_text(exported, "te.json", &te, &err), &err);
  CHECK_OK(fs_job_load(job_file, &job, &err), &err);
  double want = -1;
  if (job && te) {
    fs_topo_free(job->topo);
    job->topo = te;
    te = NULL;
    CHECK_OK(fs_train_new(job, &opts, &tr, &err), &err);
    if (tr && fs_train_run(tr, &res, &err) == 0) want = res.iter_s * 1e3;
  }
  fs_train_free(tr);
  fs_job_free(job);
  fs_topo_free(te);
  snprintf(cmd, sizeof(cmd), "train %s --demand-from-job --no-compare", job_file);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0);
  const char *it = strstr(out, "iteration time:");
  double got = -2;
  CHECK(it && sscanf(it, "iteration time: %lf ms", &got) == 1);
  CHECK_REL(got, want, 1e-7, "ms"); /* (the report prints 3 decimals of ms) */
  CHECK(strstr(out, ",te=") != NULL);
  /* one job only, on a jupiter fabric */
  snprintf(cmd, sizeof(cmd), "train %s %s --demand-from-job", job_file, job_file);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 2);
  CHECK_EQ_INT(test_run_cli("train examples/gpt-13b.json --demand-from-job", "2>&1", out,
                            sizeof(out)),
               2);
}
