/* Tests of GPU servers (gpus_per_node G > 1) in every topology family: node
 * and link counts and layout against formulas, routes (2 hops inside a
 * server through its scale-up switch, out through the GPU's own NIC
 * otherwise, as many equal-cost paths as the plain family), hop counts and
 * bisection against naive oracles and closed forms, specs (round trip, bad
 * keys named), and the router's distances against a BFS oracle on random
 * graphs with NICs, scale-up switches, dead ends and multi-homed hosts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/base/base.h"
#include "../src/topo/internal.h"
#include "fabricsim/route.h"
#include "fabricsim/sim.h"
#include "fabricsim/topo.h"
#include "test.h"
#include "topo_oracle.h"

enum { STAR, LEAFSPINE, FATTREE };

/* One family instance with G GPUs per server (G = 1: plain hosts). */
typedef struct fam {
  int kind;
  int32_t a, b, c, d; /* star: hosts; leafspine: leaves, spines, hpl, lps; fattree: k */
} fam;

static fs_topo *build(const fam *f, int32_t G, double pcie_gbps) {
  fs_server_params sv = fs_server_defaults(G);
  if (pcie_gbps > 0) sv.pcie_gbps = pcie_gbps;
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  int rc;
  if (f->kind == STAR) {
    rc = fs_topo_star_servers(f->a, 100, 1000, &sv, &t, &err);
  } else if (f->kind == LEAFSPINE) {
    fs_leafspine_params p = {f->a, f->b, f->c, 100, 100, f->d, 1000};
    rc = fs_topo_leafspine_servers(&p, &sv, &t, &err);
  } else {
    rc = fs_topo_fattree_servers(f->a, 100, 1000, &sv, &t, &err);
  }
  if (rc) test_fail(__FILE__, __LINE__, "building (G=%d): %s", G, err.msg);
  return t;
}

static fs_topo *from_spec(const char *spec) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  int rc = fs_topo_from_spec(spec, &t, &err);
  if (rc) test_fail(__FILE__, __LINE__, "%s: rc %d: %s", spec, rc, err.msg);
  return t;
}

/* ---- layout ---------------------------------------------------------------- */

static const fam families[] = {
    {STAR, 16, 0, 0, 0},     {LEAFSPINE, 3, 2, 8, 2}, {LEAFSPINE, 2, 5, 16, 1},
    {FATTREE, 4, 0, 0, 0},   {FATTREE, 8, 0, 0, 0},
};
#define N_FAMILIES (sizeof(families) / sizeof(families[0]))

/* Hosts, fabric switches and fabric cables of the plain family. */
static void plain_counts(const fam *f, int64_t *hosts, int64_t *switches, int64_t *fabric,
                         int64_t *radix) {
  if (f->kind == STAR) {
    *hosts = f->a, *switches = 1, *fabric = 0, *radix = f->a;
  } else if (f->kind == LEAFSPINE) {
    *hosts = (int64_t)f->a * f->c, *switches = f->a + f->b;
    *fabric = (int64_t)f->a * f->b * f->d;
    int64_t leaf = f->c + (int64_t)f->b * f->d, spine = (int64_t)f->a * f->d;
    *radix = leaf > spine ? leaf : spine;
  } else {
    int64_t k = f->a;
    *hosts = k * k * k / 4, *switches = 5 * k * k / 4, *fabric = k * k * k / 2, *radix = k;
  }
}

/* Every link's reverse points back and the CSR lists each link once. */
static int links_ok(const fs_topo *t) {
  int bad = 0;
  for (int32_t l = 0; l < t->n_links; l++) {
    const fs_link *k = &t->links[l];
    const fs_link *r = &t->links[k->reverse];
    bad += k->reverse != (l ^ 1) || r->from != k->to || r->to != k->from ||
           r->capacity_bps != k->capacity_bps || r->latency_ns != k->latency_ns;
  }
  for (int32_t v = 0; v < t->n_nodes; v++)
    for (int32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++)
      bad += t->links[t->out_links[i]].from != v ||
             (i > t->out_start[v] && t->out_links[i - 1] >= t->out_links[i]);
  bad += t->out_start[t->n_nodes] != t->n_links;
  return bad == 0;
}

TEST(test_topo_servers_counts_match_formulas) {
  static const int32_t gs[] = {2, 4, 8};
  for (size_t i = 0; i < N_FAMILIES; i++) {
    for (int gi = 0; gi < 3; gi++) {
      const fam *f = &families[i];
      int32_t G = gs[gi];
      fs_topo *t = build(f, G, 0), *plain = build(f, 1, 0);
      if (!t || !plain) {
        fs_topo_free(t);
        fs_topo_free(plain);
        continue;
      }
      int64_t N, S, F, radix;
      plain_counts(f, &N, &S, &F, &radix);
      const char *ctx = t->spec;
      /* GPUs, switches, one NIC per GPU, one scale-up switch per server;
       * PCIe + NIC uplink + NVLink per GPU, and the fabric. */
      CHECK_EQ_CTX(t->n_hosts, N, ctx);
      CHECK_EQ_CTX(t->n_nodes, N + S + N + N / G, ctx);
      CHECK_EQ_CTX(t->n_links, 2 * (3 * N + F), ctx);
      CHECK_EQ_CTX(t->gpus_per_node, G, ctx);
      CHECK_EQ_CTX(t->nic0, N + S, ctx);
      CHECK_EQ_CTX(t->scaleup0, N + S + N, ctx);
      CHECK(links_ok(t));
      fs_topo_stats st = oracle_stats_of(t);
      CHECK_EQ_CTX(st.hosts, N, ctx);
      CHECK_EQ_CTX(st.switches, S, ctx);
      CHECK_EQ_CTX(st.nics, N, ctx);
      CHECK_EQ_CTX(st.scaleup_switches, N / G, ctx);
      CHECK_EQ_CTX(st.servers, N / G, ctx);
      CHECK_EQ_CTX(st.gpus_per_node, G, ctx);
      CHECK_EQ_CTX(st.cables, 3 * N + F, ctx);
      CHECK_EQ_CTX(st.max_radix, radix, ctx); /* fabric switches only */
      /* Each GPU injects min(PCIe 512, NIC link 100). */
      CHECK_REL(st.host_injection_bps, N * 100e9, 1e-12, "bps");
      CHECK_REL(st.scaleup_bps, N * 3600e9, 1e-12, "bps");
      /* Layout: GPU i = host i, its pcie cable is cable i, its NIC's uplink
       * cable N + i, its NVLink the i-th of the last N cables. */
      int bad = 0;
      int32_t last = t->n_links / 2 - (int32_t)N;
      for (int32_t g = 0; g < N; g++) {
        int32_t nic = t->nic0 + g, su = t->scaleup0 + g / G;
        const fs_link *pcie = &t->links[2 * g], *up = &t->links[2 * (N + g)];
        const fs_link *nv = &t->links[2 * (last + g)];
        bad += t->nodes[g].kind != FS_NODE_HOST || t->nodes[g].group != plain->nodes[g].group;
        bad += t->out_start[g + 1] - t->out_start[g] != 2;
        bad += pcie->from != g || pcie->to != nic || pcie->capacity_bps != 512e9 ||
               pcie->latency_ns != 250;
        bad += up->from != nic || up->to != plain->links[2 * g].to ||
               up->capacity_bps != 100e9 || up->latency_ns != 1000;
        bad += nv->from != g || nv->to != su || nv->capacity_bps != 3600e9 ||
               nv->latency_ns != 250;
        bad += t->nodes[nic].kind != FS_NODE_NIC || t->nodes[nic].index != g ||
               t->nodes[nic].group != t->nodes[g].group || t->nodes[nic].tier != 0;
        bad += t->nodes[su].kind != FS_NODE_SCALEUP || t->nodes[su].index != g / G;
      }
      for (int32_t s = 0; s < N / G; s++)
        bad += t->out_start[t->scaleup0 + s + 1] - t->out_start[t->scaleup0 + s] != G;
      /* Fabric switches keep their ids and fabric cables their order. */
      for (int32_t v = (int32_t)N; v < N + S; v++)
        bad += memcmp(&t->nodes[v], &plain->nodes[v], sizeof(fs_node)) != 0;
      for (int32_t c = 0; c < F; c++) {
        const fs_link *a = &t->links[2 * (2 * N + c)], *b = &plain->links[2 * (N + c)];
        bad += a->from != b->from || a->to != b->to || a->capacity_bps != b->capacity_bps;
      }
      CHECK_EQ_CTX(bad, 0, ctx);
      fs_topo_free(t);
      fs_topo_free(plain);
    }
  }
}

TEST(test_topo_servers_node_names) {
  fs_topo *t = from_spec("fattree:k=4,gpus_per_node=4");
  if (!t) return;
  char name[32];
  fs_topo_node_name(t, 5, name, sizeof(name));
  CHECK(strcmp(name, "gpu5") == 0);
  fs_topo_node_name(t, t->n_hosts, name, sizeof(name));
  CHECK(strcmp(name, "edge0.0") == 0);
  fs_topo_node_name(t, t->nic0 + 7, name, sizeof(name));
  CHECK(strcmp(name, "nic7") == 0);
  fs_topo_node_name(t, t->scaleup0 + 3, name, sizeof(name));
  CHECK(strcmp(name, "scaleup3") == 0);
  fs_topo_free(t);
}

/* ---- routes ---------------------------------------------------------------- */

TEST(test_topo_servers_routes) {
  static const int32_t gs[] = {2, 4, 8};
  for (size_t i = 0; i < N_FAMILIES; i++) {
    for (int gi = 0; gi < 3; gi++) {
      const fam *f = &families[i];
      int32_t G = gs[gi];
      fs_topo *t = build(f, G, 0), *plain = build(f, 1, 0);
      fs_router *r = NULL, *rp = NULL;
      fs_err err = {0, ""};
      if (!t || !plain || fs_router_new(t, &r, &err) || fs_router_new(plain, &rp, &err)) {
        test_fail(__FILE__, __LINE__, "setup: %s", err.msg);
        goto next;
      }
      int32_t N = t->n_hosts, bad_intra = 0, bad_inter = 0, bad_count = 0, bad_ecmp = 0;
      int32_t *nodes = malloc(sizeof(int32_t) * 16);
      fs_route rt;
      fs_route_init(&rt);
      /* All pairs on the small ones, a stride elsewhere. */
      int32_t step = N <= 48 ? 1 : 7;
      for (int32_t a = 0; a < N; a++) {
        for (int32_t b = (a * 5) % step; b < N; b += step) {
          if (a == b) continue;
          if (a / G == b / G) {
            /* GPU - scale-up switch - GPU, one path. */
            if (fs_route_shortest(r, a, b, &rt, &err) ||
                fs_route_nodes(t, &rt, nodes) != 3 || nodes[1] != t->scaleup0 + a / G ||
                fs_route_dist(r, a, b) != 2 || fs_route_count_paths(r, a, b) != 1 ||
                rt.latency_ns != 500)
              bad_intra++;
            continue;
          }
          /* Out through a's NIC, in through b's: the plain route plus the
           * PCIe hop at each end, over as many equal-cost paths. */
          int32_t hops = fs_route_dist(rp, a, b) + 2;
          if (fs_route_dist(r, a, b) != hops || fs_route_shortest(r, a, b, &rt, &err) ||
              fs_route_nodes(t, &rt, nodes) != hops + 1 || nodes[1] != t->nic0 + a ||
              nodes[hops - 1] != t->nic0 + b)
            bad_inter++;
          for (int32_t k = 1; k < hops; k++)
            bad_inter += t->nodes[nodes[k]].kind == FS_NODE_HOST;
          if (fs_route_count_paths(r, a, b) != fs_route_count_paths(rp, a, b)) bad_count++;
          if (fs_route_ecmp(r, a, b, 3, (uint64_t)(a * 1000 + b), &rt, &err) ||
              rt.hops != hops || t->links[rt.links[0]].to != t->nic0 + a)
            bad_ecmp++;
        }
      }
      CHECK_EQ_CTX(bad_intra, 0, t->spec);
      CHECK_EQ_CTX(bad_inter, 0, t->spec);
      CHECK_EQ_CTX(bad_count, 0, t->spec);
      CHECK_EQ_CTX(bad_ecmp, 0, t->spec);
      fs_route_free(&rt);
      free(nodes);
    next:
      fs_router_free(r);
      fs_router_free(rp);
      fs_topo_free(t);
      fs_topo_free(plain);
    }
  }
}

/* Spray on GPU servers: weights conserve flow, path counts match the DFS
 * oracle, nothing crosses a scale-up switch for inter-server traffic. */
TEST(test_topo_servers_spray) {
  fs_topo *t = from_spec("fattree:k=4,gpus_per_node=2");
  fs_router *r = NULL;
  fs_err err = {0, ""};
  if (!t || fs_router_new(t, &r, &err)) {
    fs_topo_free(t);
    return;
  }
  fs_route s;
  fs_route_init(&s);
  int32_t src = 1, dst = 14;
  CHECK_OK(fs_route_spray(r, src, dst, &s, &err), &err);
  CHECK_EQ_INT(s.hops, 8);
  CHECK_REL(s.n_paths, 4, 0, "paths");
  CHECK_REL(s.n_paths, oracle_path_count(t, src, dst, 8), 0, "paths");
  double *net = calloc((size_t)t->n_nodes, sizeof(double));
  int via_scaleup = 0;
  for (int32_t i = 0; i < s.n; i++) {
    const fs_link *k = &t->links[s.links[i]];
    net[k->from] -= s.weights[i];
    net[k->to] += s.weights[i];
    via_scaleup += t->nodes[k->to].kind == FS_NODE_SCALEUP;
  }
  CHECK_REL(net[src], -1, 1e-12, "flow");
  CHECK_REL(net[dst], 1, 1e-12, "flow");
  for (int32_t v = 0; v < t->n_nodes; v++)
    if (v != src && v != dst) CHECK(fabs(net[v]) < 1e-12);
  CHECK_EQ_INT(via_scaleup, 0);
  CHECK_OK(fs_route_spray(r, 2, 3, &s, &err), &err); /* same server */
  CHECK_EQ_INT(s.n, 2);
  CHECK_REL(s.n_paths, 1, 0, "paths");
  free(net);
  fs_route_free(&s);
  fs_router_free(r);
  fs_topo_free(t);
}

/* A flow inside a server runs at NVLink speed with two NVLink latencies;
 * one between servers at the fabric link's speed. */
TEST(test_topo_servers_flows_in_the_engine) {
  fs_topo *t = from_spec("leafspine:leaves=2,spines=1,hosts_per_leaf=4,gpus_per_node=4");
  fs_router *r = NULL;
  fs_sim *s = NULL;
  fs_err err = {0, ""};
  if (!t || fs_router_new(t, &r, &err) || fs_sim_new(t, &s, &err)) goto done;
  fs_route rt;
  fs_route_init(&rt);
  double B = 1e8;
  CHECK_OK(fs_route_shortest(r, 0, 3, &rt, &err), &err);
  int32_t intra = fs_sim_add_flow(s, 0, 3, B, 0, &rt, &err);
  CHECK_OK(fs_route_shortest(r, 1, 6, &rt, &err), &err);
  int32_t inter = fs_sim_add_flow(s, 1, 6, B, 0, &rt, &err);
  CHECK(intra >= 0 && inter >= 0);
  CHECK_OK(fs_sim_run(s, NULL, &err), &err);
  CHECK_REL(fs_sim_finish_s(s, intra), B * 8 / 3600e9 + 500e-9, 1e-9, "s");
  /* pcie, leaf, spine, leaf, pcie: 2 x 250 ns + 4 x 1000 ns */
  CHECK_REL(fs_sim_finish_s(s, inter), B * 8 / 100e9 + 4.5e-6, 1e-9, "s");
  fs_route_free(&rt);
done:
  fs_sim_free(s);
  fs_router_free(r);
  fs_topo_free(t);
}

/* ---- metrics ------------------------------------------------------------- */

/* From one GPU with servers inside one leaf/edge switch: G-1 GPUs at 2 hops,
 * the rest of its switch at 4, then the family's farther rings + 2. */
TEST(test_topo_servers_hops_match_closed_forms) {
  static const struct {
    const char *spec;
    int diameter;
    double n2, n4, n6, n8; /* GPUs at 2, 4, 6, 8 hops from one GPU */
  } cases[] = {
      {"fattree:k=4,gpus_per_node=2", 8, 1, 0, 2, 12},
      {"fattree:k=8,gpus_per_node=2", 8, 1, 2, 12, 112},
      {"fattree:k=8,gpus_per_node=4", 8, 3, 0, 12, 112},
      {"fattree:k=32,gpus_per_node=8", 8, 7, 8, 240, 7936},
      {"leafspine:leaves=4,spines=2,hosts_per_leaf=8,gpus_per_node=4", 6, 3, 4, 24, 0},
      {"leafspine:leaves=1,spines=1,hosts_per_leaf=8,gpus_per_node=8", 2, 7, 0, 0, 0},
      {"star:hosts=16,gpus_per_node=4", 4, 3, 12, 0, 0},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    fs_topo *t = from_spec(cases[i].spec);
    if (!t) continue;
    fs_topo_stats st = oracle_stats_of(t);
    double n = cases[i].n2 + cases[i].n4 + cases[i].n6 + cases[i].n8;
    CHECK_EQ_CTX(n, t->n_hosts - 1, cases[i].spec);
    double avg = (2 * cases[i].n2 + 4 * cases[i].n4 + 6 * cases[i].n6 + 8 * cases[i].n8) / n;
    CHECK_EQ_CTX(st.diameter_hops, cases[i].diameter, cases[i].spec);
    CHECK_REL(st.avg_hops, avg, 1e-12, "hops");
    fs_topo_free(t);
  }
}

/* Against the naive no-relay BFS and brute-force min cut, including servers
 * that straddle edge switches (k=6: 3 ports per edge, G=2) where a plain
 * BFS relaying through a GPU would find shorter paths than routing uses. */
TEST(test_topo_servers_stats_match_oracles) {
  static const struct {
    const char *spec;
    int with_cut;
  } cases[] = {
      {"star:hosts=4,gpus_per_node=2", 1},
      {"star:hosts=6,gpus_per_node=2", 1}, /* 3 servers: the cut splits one */
      {"star:hosts=6,gpus_per_node=3,pcie_gbps=40", 1},
      {"leafspine:leaves=2,spines=1,hosts_per_leaf=2,gpus_per_node=2", 1},
      {"leafspine:leaves=3,spines=2,hosts_per_leaf=4,gpus_per_node=2,links_per_spine=2", 0},
      {"fattree:k=2,gpus_per_node=2", 1},
      {"fattree:k=4,gpus_per_node=2", 0},
      {"fattree:k=4,gpus_per_node=8", 0}, /* servers span pods */
      {"fattree:k=6,gpus_per_node=2", 0},
      {"fattree:k=6,gpus_per_node=3", 0},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    fs_topo *t = from_spec(cases[i].spec);
    if (!t) continue;
    fs_topo_stats st = oracle_stats_of(t);
    int diam;
    double avg;
    oracle_hops(t, 0, &diam, &avg);
    CHECK_EQ_CTX(st.diameter_hops, diam, cases[i].spec);
    if (!(fabs(st.avg_hops - avg) <= 1e-12 * avg))
      test_fail(__FILE__, __LINE__, "%s: avg_hops expected %.17g, got %.17g", cases[i].spec,
                avg, st.avg_hops);
    if (cases[i].with_cut) {
      double cut = oracle_min_cut(t);
      if (!(fabs(st.bisection_bps - cut) <= 1e-9 * cut))
        test_fail(__FILE__, __LINE__, "%s: bisection expected %.17g bps, got %.17g bps",
                  cases[i].spec, cut, st.bisection_bps);
    }
    fs_topo_free(t);
  }
  /* k=6, G=2: GPU 8 (pod 0) shares a server with GPU 9 (pod 1, on the edge
   * of GPU 10): routing takes 8 hops through the cores, a relay through
   * GPU 9 would take 6. */
  fs_topo *t = from_spec("fattree:k=6,gpus_per_node=2");
  fs_router *r = NULL;
  fs_err err = {0, ""};
  if (t && !fs_router_new(t, &r, &err)) CHECK_EQ_INT(fs_route_dist(r, 8, 10), 8);
  fs_router_free(r);
  fs_topo_free(t);
}

TEST(test_topo_servers_bisection) {
  static const struct {
    const char *spec;
    double bisection_gbps, full_gbps;
  } cases[] = {
      /* the fabric's k^3/8 links, as with plain hosts */
      {"fattree:k=4,gpus_per_node=2", 800, 800},
      {"fattree:k=8,gpus_per_node=8", 6400, 6400},
      /* PCIe slower than the NIC link bounds each GPU */
      {"fattree:k=4,gpus_per_node=2,pcie_gbps=50", 400, 400},
      /* min(16 x 100, 2 leaves x 2 spines x 100) */
      {"leafspine:leaves=4,spines=2,hosts_per_leaf=8,gpus_per_node=8", 400, 1600},
      {"star:hosts=8,gpus_per_node=4", 400, 400},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    fs_topo *t = from_spec(cases[i].spec);
    if (!t) continue;
    fs_topo_stats st = oracle_stats_of(t);
    CHECK_REL(st.bisection_bps, cases[i].bisection_gbps * 1e9, 1e-12, "bps");
    CHECK_REL(st.full_bisection_bps, cases[i].full_gbps * 1e9, 1e-12, "bps");
    fs_topo_free(t);
  }
}

/* ---- specs ---------------------------------------------------------------- */

TEST(test_topo_servers_spec_round_trip) {
  static const char *const specs[] = {
      "leafspine:leaves=8,spines=4,hosts_per_leaf=8,gpus_per_node=8,nvlink_gbps=3600",
      ("fattree:k=4,gpus_per_node=4,nvlink_gbps=1800,nvlink_latency_ns=100,pcie_gbps=256,"
       "pcie_latency_ns=400,inc=top"),
      "star:hosts=8,gbps=400,gpus_per_node=2",
  };
  for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
    fs_topo *t = from_spec(specs[i]);
    if (!t) continue;
    CHECK(strstr(t->spec, "gpus_per_node=") && strstr(t->spec, "nvlink_gbps=") &&
          strstr(t->spec, "nvlink_latency_ns=") && strstr(t->spec, "pcie_gbps=") &&
          strstr(t->spec, "pcie_latency_ns="));
    fs_topo *u = from_spec(t->spec);
    if (u) {
      if (strcmp(u->spec, t->spec) != 0)
        test_fail(__FILE__, __LINE__, "%s: respec gives %s", t->spec, u->spec);
      CHECK_EQ_CTX(u->n_nodes, t->n_nodes, t->spec);
      CHECK_EQ_CTX(u->n_links, t->n_links, t->spec);
      int same = 1;
      for (int32_t l = 0; l < t->n_links && same; l++) {
        const fs_link *a = &u->links[l], *b = &t->links[l];
        same = a->from == b->from && a->to == b->to && a->reverse == b->reverse &&
               a->capacity_bps == b->capacity_bps && a->latency_ns == b->latency_ns;
      }
      for (int32_t v = 0; v < t->n_nodes && same; v++)
        same = memcmp(&u->nodes[v], &t->nodes[v], sizeof(fs_node)) == 0;
      CHECK(same);
      fs_topo_free(u);
    }
    fs_topo_free(t);
  }
  /* Values reach the links; inc marks fabric switches, never scale-up ones. */
  fs_topo *t = from_spec(specs[1]);
  if (t) {
    CHECK_REL(t->links[0].capacity_bps, 256e9, 0, "bps");
    CHECK_EQ_INT(t->links[0].latency_ns, 400);
    CHECK_REL(t->links[t->n_links - 1].capacity_bps, 1800e9, 0, "bps");
    CHECK_EQ_INT(t->links[t->n_links - 1].latency_ns, 100);
    int marked_scaleup = 0, marked = 0;
    for (int32_t v = 0; v < t->n_nodes; v++) {
      marked += (t->nodes[v].caps & FS_CAP_INC) != 0;
      marked_scaleup += t->nodes[v].kind != FS_NODE_SWITCH && (t->nodes[v].caps & FS_CAP_INC);
    }
    CHECK_EQ_INT(marked, 4); /* the cores */
    CHECK_EQ_INT(marked_scaleup, 0);
    fs_topo_free(t);
  }
  /* JSON form, and G = 1 is the plain family, spec and all. */
  fs_err err = {0, ""};
  t = NULL;
  CHECK_OK(fs_topo_from_json_text("{\"type\": \"fattree\", \"k\": 4, \"gpus_per_node\": 2,"
                                  " \"pcie_gbps\": 128}",
                                  "t.json", &t, &err),
           &err);
  if (t) {
    CHECK_EQ_INT(t->n_nodes, 16 + 20 + 16 + 8);
    CHECK(strstr(t->spec, "pcie_gbps=128") != NULL);
    fs_topo_free(t);
  }
  t = from_spec("fattree:k=4,gpus_per_node=1");
  fs_topo *p = from_spec("fattree:k=4");
  if (t && p) {
    CHECK(strcmp(t->spec, p->spec) == 0);
    CHECK_EQ_INT(t->n_nodes, p->n_nodes);
    CHECK_EQ_INT(t->gpus_per_node, 1);
    CHECK_EQ_INT(t->nic0, -1);
    CHECK_EQ_INT(t->scaleup0, -1);
  }
  fs_topo_free(t);
  fs_topo_free(p);
}

TEST(test_topo_servers_bad_specs_name_the_key) {
  static const struct {
    const char *spec, *want1, *want2;
  } cases[] = {
      {"fattree:k=6,gpus_per_node=4", "$.gpus_per_node", "(54)"},
      {"leafspine:leaves=2,spines=1,hosts_per_leaf=6,gpus_per_node=4", "$.gpus_per_node",
       "hosts_per_leaf (6)"},
      {"star:hosts=10,gpus_per_node=4", "$.gpus_per_node", "hosts (10)"},
      {"star:hosts=8,gpus_per_node=0", "$.gpus_per_node", "0"},
      {"star:hosts=8,gpus_per_node=2.5", "$.gpus_per_node", "2.5"},
      {"star:hosts=8,gpus_per_node=two", "$.gpus_per_node", "two"},
      {"fattree:k=4,gpus_per_node=2,nvlink_gbps=0", "$.nvlink_gbps", "0"},
      {"fattree:k=4,gpus_per_node=2,pcie_gbps=-1", "$.pcie_gbps", "-1"},
      {"fattree:k=4,gpus_per_node=2,nvlink_latency_ns=-5", "$.nvlink_latency_ns", "-5"},
      {"fattree:k=4,gpus_per_node=2,pcie_latency_ns=x", "$.pcie_latency_ns", "x"},
      {"fattree:k=4,nvlink_gbps=100", "$.nvlink_gbps", "gpus_per_node > 1"},
      {"leafspine:leaves=1,spines=1,hosts_per_leaf=2,pcie_gbps=100", "$.pcie_gbps",
       "gpus_per_node > 1"},
      {"star:hosts=4,gpus_per_node=2,nvlinks=4", "$.nvlinks", "unknown key"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    fs_topo *t = NULL;
    fs_err err = {0, ""};
    int rc = fs_topo_from_spec(cases[i].spec, &t, &err);
    CHECK_EQ_CTX(rc, FS_EINVAL, cases[i].spec);
    if (t) {
      test_fail(__FILE__, __LINE__, "%s: built a topology", cases[i].spec);
      fs_topo_free(t);
    }
    if (!strstr(err.msg, cases[i].want1) || !strstr(err.msg, cases[i].want2))
      test_fail(__FILE__, __LINE__, "%s: message \"%s\" should mention \"%s\" and \"%s\"",
                cases[i].spec, err.msg, cases[i].want1, cases[i].want2);
  }
  /* The C builders check the same, naming the parameter. */
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  fs_server_params sv = fs_server_defaults(3);
  CHECK_EQ_INT(fs_topo_star_servers(8, 100, 0, &sv, &t, &err), FS_EINVAL);
  CHECK(t == NULL && strstr(err.msg, "gpus_per_node") && strstr(err.msg, "8"));
  fs_leafspine_params lp = {2, 2, 6, 100, 100, 1, 0};
  sv = fs_server_defaults(4);
  CHECK_EQ_INT(fs_topo_leafspine_servers(&lp, &sv, &t, &err), FS_EINVAL);
  CHECK(t == NULL && strstr(err.msg, "gpus_per_node") && strstr(err.msg, "hosts_per_leaf"));
  sv = fs_server_defaults(2);
  sv.nvlink_gbps = 0;
  CHECK_EQ_INT(fs_topo_fattree_servers(4, 100, 0, &sv, &t, &err), FS_EINVAL);
  CHECK(t == NULL && strstr(err.msg, "nvlink_gbps"));
  sv = fs_server_defaults(2);
  sv.pcie_latency_ns = -1;
  CHECK_EQ_INT(fs_topo_fattree_servers(4, 100, 0, &sv, &t, &err), FS_EINVAL);
  CHECK(t == NULL && strstr(err.msg, "pcie_latency_ns"));
  sv = fs_server_defaults(0);
  CHECK_EQ_INT(fs_topo_fattree_servers(4, 100, 0, &sv, &t, &err), FS_EINVAL);
  CHECK(t == NULL && strstr(err.msg, "gpus_per_node"));
}

/* ---- irregular graphs ----------------------------------------------------------
 * Hosts with one or two links, NICs (one switch and one host), scale-up-like
 * nodes (hosts only), dead-end switches, two-switch islands, self-cables,
 * host-to-host cables, parallel cables: every way the router's plan and the
 * metrics' dead-end reduction can classify a node. May be disconnected. */
static fs_topo *random_graph(fs__rng *rng, int host_cables) {
  int H = 2 + (int)fs__rng_below(rng, 7), S = 1 + (int)fs__rng_below(rng, 6);
  int X = (int)fs__rng_below(rng, 4); /* NICs (even x) and scale-up nodes (odd x) */
  fs_topo_builder b;
  fs_err err = {0, ""};
  if (fs_topo_builder_init(&b, "random", H + S + X, 0, &err)) return NULL;
  for (int h = 0; h < H; h++) fs_topo_builder_node(&b, FS_NODE_HOST, 0, h, -1);
  for (int s = 0; s < S; s++) fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, s, -1);
  for (int x = 0; x < X; x++)
    fs_topo_builder_node(&b, x % 2 ? FS_NODE_SCALEUP : FS_NODE_NIC, 0, x, -1);
  int32_t sw0 = H, x0 = H + S;
  /* Sometimes the last two switches form an island: each one's only
   * forwarder is the other. */
  int island = S >= 3 && fs__rng_below(rng, 3) == 0;
  int32_t SM = island ? S - 2 : S; /* switches of the main part */
  if (island) fs_topo_builder_cable(&b, sw0 + S - 2, sw0 + S - 1, 1e9, 1);
  for (int s = 0; s + 1 < SM; s++)
    if (fs__rng_below(rng, 4)) fs_topo_builder_cable(&b, sw0 + s, sw0 + s + 1, 1e9, 1);
  for (int e = (int)fs__rng_below(rng, 3); e > 0; e--) /* maybe self-cables */
    fs_topo_builder_cable(&b, sw0 + (int32_t)fs__rng_below(rng, (uint64_t)SM),
                 sw0 + (int32_t)fs__rng_below(rng, (uint64_t)SM), 1e9, 1);
  for (int x = 0; x < X; x += 2) /* a NIC: to a switch, maybe twice */
    for (int c = 1 + (int)fs__rng_below(rng, 2); c > 0; c--)
      fs_topo_builder_cable(&b, x0 + x, sw0 + (int32_t)fs__rng_below(rng, (uint64_t)SM), 1e9, 1);
  for (int h = 0; h < H; h++)
    for (int c = 1 + (int)fs__rng_below(rng, 2); c > 0; c--) {
      int32_t to = (X > 0 && fs__rng_below(rng, 2))
                       ? x0 + (int32_t)fs__rng_below(rng, (uint64_t)X)
                       : sw0 + (int32_t)fs__rng_below(rng, (uint64_t)S);
      fs_topo_builder_cable(&b, h, to, 1e9, 1);
    }
  if (host_cables && fs__rng_below(rng, 3) == 0) fs_topo_builder_cable(&b, 0, H - 1, 1e9, 1);
  fs_topo *t = NULL;
  if (fs_topo_builder_finish(&b, &t, &err)) return NULL;
  return t;
}

/* fs_route_dist equals the no-relay BFS for every (from, to), and path
 * counts the DFS count. */
TEST(test_topo_servers_router_matches_bfs_on_random_graphs) {
  fs__rng rng;
  fs__rng_seed(&rng, 77);
  int bad_dist = 0, bad_count = 0;
  for (int trial = 0; trial < 150; trial++) {
    fs_topo *t = random_graph(&rng, 1);
    if (!t) return;
    int32_t H = t->n_hosts;
    fs_err err = {0, ""};
    fs_router *r = NULL;
    if (fs_router_new(t, &r, &err)) {
      fs_topo_free(t);
      return;
    }
    int32_t n = t->n_nodes;
    int32_t *dist = malloc(sizeof(int32_t) * (size_t)n);
    int32_t *q = malloc(sizeof(int32_t) * (size_t)n);
    for (int32_t v = 0; v < n; v++) {
      oracle_bfs(t, v, 0, dist, q);
      for (int32_t d = 0; d < n; d++) {
        if (fs_route_dist(r, v, d) != dist[d]) {
          if (bad_dist++ < 5)
            test_fail(__FILE__, __LINE__, "trial %d: dist %d -> %d: expected %d, got %d",
                      trial, v, d, dist[d], fs_route_dist(r, v, d));
          continue;
        }
        if (v != d && dist[d] > 0 && v < H &&
            fs_route_count_paths(r, v, d) != oracle_path_count(t, v, d, dist[d]))
          bad_count++;
      }
    }
    free(dist);
    free(q);
    fs_router_free(r);
    fs_topo_free(t);
  }
  CHECK_EQ_INT(bad_dist, 0);
  CHECK_EQ_INT(bad_count, 0);
}

/* The server hop counts (dead-end reduction, classes by key, multi-source
 * BFS) against the no-relay oracle: forced on irregular graphs by setting
 * gpus_per_node, with and without host-to-host cables (the fallback). */
TEST(test_topo_servers_hops_match_oracle_on_random_graphs) {
  fs__rng rng;
  fs__rng_seed(&rng, 4242);
  int checked = 0, disconnected = 0;
  for (int trial = 0; trial < 300; trial++) {
    fs_topo *t = random_graph(&rng, trial % 4 == 0);
    if (!t) return;
    t->gpus_per_node = 2;
    int32_t H = t->n_hosts;
    int32_t *dist = malloc(sizeof(int32_t) * (size_t)t->n_nodes);
    int32_t *q = malloc(sizeof(int32_t) * (size_t)t->n_nodes);
    int connected = 1;
    for (int32_t a = 0; a < H && connected; a++) {
      oracle_bfs(t, a, 0, dist, q);
      for (int32_t b = 0; b < H; b++) connected &= dist[b] >= 0;
    }
    free(dist);
    free(q);
    fs_topo_stats st;
    fs_err err = {0, ""};
    int rc = fs_topo_stats_compute(t, &st, &err);
    if (!connected) {
      CHECK_EQ_INT(rc, FS_EINVAL);
      CHECK(strstr(err.msg, "cannot reach") != NULL);
      disconnected++;
    } else if (rc) {
      test_fail(__FILE__, __LINE__, "trial %d: %s", trial, err.msg);
    } else {
      int diam;
      double avg;
      oracle_hops(t, 0, &diam, &avg);
      if (st.diameter_hops != diam || !(fabs(st.avg_hops - avg) <= 1e-12 * avg))
        test_fail(__FILE__, __LINE__, "trial %d: diameter %d avg %.17g, oracle %d %.17g",
                  trial, st.diameter_hops, st.avg_hops, diam, avg);
      checked++;
    }
    fs_topo_free(t);
  }
  /* Both kinds must actually occur, or the test shows nothing. */
  CHECK(checked >= 50);
  CHECK(disconnected >= 20);
}
