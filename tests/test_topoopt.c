/* Tests of the TopoOpt-style optimiser (topoopt.h): TotientPerms strides
 * against a brute-force walk and Euler's totient, the objective against
 * hand-computed flows, degree feasibility of every optimiser's output and
 * of the built fabric, optimised vs random topologies over seeds, the
 * heuristic against the exact MILP, job traffic against work.h's volumes,
 * and the CLI (good and bad input). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim/topoopt.h"
#include "fabricsim/work.h"
#include "test.h"

static int32_t gcd_ref(int32_t a, int32_t b) { return b ? gcd_ref(b, a % b) : a; }

/* Every stride is coprime to m, in [1, m/2], distinct; the ring i -> i+k
 * visits all m servers before returning (Hamiltonian); the count is
 * min(r, phi(m)/2) (phi(2)/1 = 1 for m = 2). */
TEST(test_topoopt_totient_rings_hamiltonian) {
  for (int32_t m = 2; m <= 40; m++) {
    int32_t phi = 0;
    for (int32_t k = 1; k <= m; k++) phi += gcd_ref(k, m) == 1;
    int32_t avail = m == 2 ? 1 : phi / 2;
    for (int32_t r = 1; r <= 8; r++) {
      int32_t s[8];
      int32_t got = fs_topoopt_totient_strides(m, r, s);
      CHECK_EQ_INT(got, r < avail ? r : avail);
      if (got > 0) CHECK_EQ_INT(s[0], 1);
      for (int32_t i = 0; i < got; i++) {
        CHECK(s[i] >= 1 && s[i] <= m / 2);
        CHECK_EQ_INT(gcd_ref(s[i], m), 1);
        for (int32_t j = 0; j < i; j++) CHECK(s[i] != s[j]);
        char *seen = calloc((size_t)m, 1);
        int32_t v = 0, steps = 0;
        do {
          CHECK(!seen[v]);
          seen[v] = 1;
          v = (v + s[i]) % m;
          steps++;
        } while (v != 0 && steps <= m);
        CHECK_EQ_INT(steps, m);
        free(seen);
      }
    }
  }
}

static fs_topoopt_graph *graph(int32_t n, int32_t d, const int32_t *pairs, int32_t np) {
  fs_topoopt_graph *g = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topoopt_graph_new(n, d, &g, &err), &err);
  for (int32_t i = 0; g && i < np; i++) {
    int32_t u = pairs[2 * i], v = pairs[2 * i + 1];
    g->mult[u * n + v]++;
    g->mult[v * n + u]++;
  }
  return g;
}

/* Hand-computed objectives at 100 Gb/s (1 GB = 80 ms on one circuit). */
TEST(test_topoopt_objective_by_hand) {
  fs_err err = {0, ""};
  fs_topoopt_traffic *t = NULL;
  CHECK_OK(fs_topoopt_traffic_new(4, &t, &err), &err);
  if (!t) return;
  int32_t ring[4] = {0, 1, 2, 3};
  CHECK_OK(fs_topoopt_traffic_add_group(t, ring, 4, 1e9, &err), &err);
  /* The ring itself: demand i -> i+1 sends x directly and 1 - x the other
   * way round (3 hops on the idle reverse arcs): forward arcs carry x,
   * reverse arcs 3 (1 - x); x = 3/4 balances them, and it is optimal
   * (4 L >= sum x and 4 L >= 3 sum (1 - x) give L >= 3/4): 0.75 GB, 60 ms. */
  int32_t rp[] = {0, 1, 1, 2, 2, 3, 3, 0};
  fs_topoopt_graph *g = graph(4, 2, rp, 4);
  fs_topoopt_eval ev;
  CHECK_OK(fs_topoopt_evaluate(t, g, 100, &ev, &err), &err);
  CHECK_REL(ev.time_s, 0.06, 1e-6, "s");
  CHECK_REL(ev.direct_frac, 1, 1e-12, "");
  CHECK_REL(ev.ideal_s, 0.04, 1e-12, "s"); /* 1 GB out over 2 ports */
  fs_topoopt_graph_free(g);
  /* The 4-cycle 0-2-1-3-0: half the demand (1->2, 3->0) has a circuit. */
  int32_t xp[] = {0, 2, 2, 1, 1, 3, 3, 0};
  g = graph(4, 2, xp, 4);
  CHECK_OK(fs_topoopt_evaluate(t, g, 100, &ev, &err), &err);
  CHECK_REL(ev.direct_frac, 0.5, 1e-12, "");
  CHECK(ev.time_s >= 0.06 * (1 - 1e-9)); /* no better than the ring */
  /* Without 0-2 it is the path 0-3-1-2, a tree: unique paths 0-3-1, 1-2,
   * 2-1-3, 3-0 load six arcs with 1 GB each: 80 ms; at 50 Gb/s 160 ms. */
  g->mult[0 * 4 + 2] = g->mult[2 * 4 + 0] = 0;
  CHECK_OK(fs_topoopt_evaluate(t, g, 100, &ev, &err), &err);
  CHECK_REL(ev.time_s, 0.08, 1e-6, "s");
  CHECK_OK(fs_topoopt_evaluate(t, g, 50, &ev, &err), &err);
  CHECK_REL(ev.time_s, 0.16, 1e-6, "s");
  fs_topoopt_graph_free(g);
  /* Disconnected: 0-1 and 2-3 only, 1 -> 2 has no path. */
  int32_t dp[] = {0, 1, 2, 3};
  g = graph(4, 2, dp, 2);
  CHECK_OK(fs_topoopt_evaluate(t, g, 100, &ev, &err), &err);
  CHECK(isinf(ev.time_s));
  fs_topoopt_graph_free(g);
  fs_topoopt_traffic_free(t);
}

/* A job-like matrix: dp rings over servers of each stage, pipeline sends
 * between stages, an all-to-all among some, plus random noise. */
static fs_topoopt_traffic *job_like(int32_t n, uint64_t seed) {
  fs_err err = {0, ""};
  fs_topoopt_traffic *t = NULL;
  CHECK_OK(fs_topoopt_traffic_new(n, &t, &err), &err);
  if (!t) return NULL;
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  int32_t half = n / 2, ring[64];
  for (int32_t st = 0; st < 2; st++) {
    int32_t m = st == 0 ? half : n - half;
    for (int32_t i = 0; i < m; i++) ring[i] = st * half + i;
    if (m >= 2) CHECK_OK(fs_topoopt_traffic_add_group(t, ring, m, 4e9, &err), &err);
  }
  for (int32_t i = 0; i < half && half + i < n; i++) {
    t->mp[i * n + half + i] += 2e9;
    t->mp[(half + i) * n + i] += 2e9;
  }
  for (int32_t k = 0; k < n; k++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    int32_t u = (int32_t)((x >> 33) % (uint64_t)n), v = (int32_t)((x >> 13) % (uint64_t)n);
    if (u != v) t->mp[u * n + v] += (double)((x >> 40) % 1000) * 1e6;
  }
  return t;
}

static int32_t max_degree(const fs_topoopt_graph *g) {
  int32_t mx = 0;
  for (int32_t u = 0; u < g->n; u++) {
    int32_t d = 0;
    for (int32_t v = 0; v < g->n; v++) d += g->mult[u * g->n + v];
    if (d > mx) mx = d;
  }
  return mx;
}

/* The optimised graph respects the degree, has no self circuit, is
 * symmetric; the built fabric has exactly those circuits between the
 * servers' forwarding nodes, each at B, and nothing else optical. */
TEST(test_topoopt_degree_feasible) {
  fs_err err = {0, ""};
  for (int32_t d = 1; d <= 4; d++) {
    fs_topoopt_traffic *t = job_like(10, (uint64_t)d);
    if (!t) return;
    fs_topoopt_opts o;
    fs_topoopt_opts_init(&o, d, 100);
    o.ls_evals = 50;
    fs_topoopt_graph *g = NULL;
    fs_topoopt_eval ev;
    CHECK_OK(fs_topoopt_optimize(t, &o, &g, &ev, &err), &err);
    if (!g) return;
    CHECK_OK(fs_topoopt_graph_check(g, &err), &err);
    CHECK(max_degree(g) <= d);
    /* Spare ports are filled: at most one server can be left short. */
    int32_t short_ports = 0;
    for (int32_t u = 0; u < g->n; u++) {
      int32_t du = 0;
      for (int32_t v = 0; v < g->n; v++) du += g->mult[u * g->n + v];
      short_ports += d - du;
    }
    CHECK(short_ports <= d);
    fs_job job;
    fs_job_init(&job, "test");
    job.hw.gpus_per_node = 2;
    job.hw.nvlink_gbps = 900;
    job.hw.nic_gbps = 200;
    fs_topo *topo = NULL;
    CHECK_OK(fs_topoopt_build_topo(g, &job, 100, 1000, &topo, &err), &err);
    if (topo) {
      CHECK_EQ_INT(topo->n_hosts, 20);
      int32_t sw0 = 20, optical = 0;
      for (int32_t l = 0; l < topo->n_links; l += 2) {
        const fs_link *k = &topo->links[l];
        int a_sw = k->from >= sw0 && k->from < sw0 + 10, b_sw = k->to >= sw0 && k->to < sw0 + 10;
        if (a_sw && b_sw) {
          optical++;
          CHECK(k->from != k->to);
          CHECK_REL(k->capacity_bps, 100e9, 1e-12, "bit/s");
        }
      }
      CHECK_EQ_INT(optical, fs_topoopt_graph_circuits(g));
    }
    fs_topo_free(topo);
    /* The checker does catch a violation (injected). */
    g->mult[0 * g->n + 1] += d + 1;
    g->mult[1 * g->n + 0] += d + 1;
    CHECK(fs_topoopt_graph_check(g, &err) == FS_EINVAL);
    fs_topoopt_graph_free(g);
    fs_topoopt_traffic_free(t);
  }
}

/* Over several traffic seeds and random seeds, the optimised topology is
 * never worse than a random degree-feasible one by the common objective. */
TEST(test_topoopt_never_worse_than_random) {
  fs_err err = {0, ""};
  for (uint64_t s = 1; s <= 4; s++) {
    int32_t n = 8 + 2 * (int32_t)s, d = 2 + (int32_t)(s % 3);
    fs_topoopt_traffic *t = job_like(n, s);
    if (!t) return;
    fs_topoopt_opts o;
    fs_topoopt_opts_init(&o, d, 100);
    o.ls_evals = 40;
    fs_topoopt_graph *g = NULL;
    fs_topoopt_eval ev;
    CHECK_OK(fs_topoopt_optimize(t, &o, &g, &ev, &err), &err);
    for (uint64_t rs = 1; rs <= 5 && g; rs++) {
      fs_topoopt_graph *r = NULL;
      fs_topoopt_eval er;
      CHECK_OK(fs_topoopt_random(n, d, rs * 7 + s, &r, &err), &err);
      if (!r) break;
      CHECK_OK(fs_topoopt_graph_check(r, &err), &err);
      CHECK_OK(fs_topoopt_evaluate(t, r, 100, &er, &err), &err);
      if (!(ev.time_s <= er.time_s * (1 + 1e-9)))
        test_fail(__FILE__, __LINE__, "n %d d %d seed %llu: optimised %g s > random %g s", n, d,
                  (unsigned long long)rs, ev.time_s, er.time_s);
      fs_topoopt_graph_free(r);
    }
    fs_topoopt_graph_free(g);
    fs_topoopt_traffic_free(t);
  }
}

/* The heuristic reaches the exact MILP optimum on small instances (and
 * the MILP is never beaten: it is the optimum of the same function). */
TEST(test_topoopt_reaches_exact_optimum) {
  fs_err err = {0, ""};
  static const int32_t cases[][3] = {{4, 2, 1}, {5, 2, 2}, {6, 2, 3}, {6, 3, 4}, {7, 3, 5},
                                     {8, 2, 6}};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    int32_t n = cases[c][0], d = cases[c][1];
    fs_topoopt_traffic *t = job_like(n, (uint64_t)cases[c][2]);
    if (!t) return;
    fs_topoopt_opts o;
    fs_topoopt_opts_init(&o, d, 100);
    o.time_limit_s = 20;
    fs_topoopt_graph *h = NULL, *x = NULL;
    fs_topoopt_eval eh, ex;
    CHECK_OK(fs_topoopt_optimize(t, &o, &h, &eh, &err), &err);
    CHECK_OK(fs_topoopt_exact(t, &o, &x, &ex, &err), &err);
    if (h && x) {
      CHECK_OK(fs_topoopt_graph_check(x, &err), &err);
      CHECK(ex.time_s <= eh.time_s * (1 + 1e-6));
      if (!(eh.time_s <= ex.time_s * (1 + 1e-6)))
        test_fail(__FILE__, __LINE__, "n %d d %d: heuristic %.9g s, exact %.9g s", n, d,
                  eh.time_s, ex.time_s);
    }
    fs_topoopt_graph_free(h);
    fs_topoopt_graph_free(x);
    fs_topoopt_traffic_free(t);
  }
  /* Too large for the exact solver: FS_ERANGE, nothing allocated. */
  fs_topoopt_traffic *t = job_like(FS_TOPOOPT_EXACT_MAX_SERVERS + 1, 1);
  fs_topoopt_opts o;
  fs_topoopt_opts_init(&o, 2, 100);
  fs_topoopt_graph *x = NULL;
  fs_topoopt_eval ex;
  CHECK(fs_topoopt_exact(t, &o, &x, &ex, &err) == FS_ERANGE);
  CHECK(x == NULL);
  fs_topoopt_traffic_free(t);
}

/* The job's server matrix carries exactly work.h's per-GPU volumes that
 * cross servers: with tp = G every DP, PP and EP byte crosses. */
TEST(test_topoopt_job_traffic_volumes) {
  fs_err err = {0, ""};
  fs_job *job = NULL;
  CHECK_OK(fs_job_load("examples/topoopt-moe.json", &job, &err), &err);
  if (!job) return;
  fs_topoopt_traffic *t = NULL;
  CHECK_OK(fs_topoopt_traffic_from_job(job, &t, &err), &err);
  if (t) {
    CHECK_EQ_INT(t->n, 8);
    double want_ar = 0, want_mp = 0;
    for (int32_t s = 0; s < job->par.pp; s++) {
      fs_work_comm c;
      fs_work_comm_stage(job, s, &c);
      double per = (double)(job->par.tp * job->par.dp);
      want_ar += per * c.kind[FS_PAR_DP].wire_bytes;
      want_mp += per * (c.kind[FS_PAR_PP].wire_bytes + c.kind[FS_PAR_EP].wire_bytes +
                        c.emb.wire_bytes);
    }
    double ar = 0, mp = 0;
    for (int32_t i = 0; i < t->n * t->n; i++) ar += t->ar[i], mp += t->mp[i];
    CHECK_REL(ar, want_ar, 1e-9, "B");
    CHECK_REL(mp, want_mp, 1e-9, "B");
    /* Stage 0 is servers 0..3 in dp order: the dense ring 0->1->2->3->0. */
    CHECK(t->ar[0 * 8 + 1] > 0 && t->ar[3 * 8 + 0] > 0);
    CHECK(t->n_groups >= 2);
  }
  fs_topoopt_traffic_free(t);
  fs_job_free(job);
}

TEST(test_topoopt_cli) {
  char out[16384], args[512];
  snprintf(args, sizeof(args),
           "ocs topo examples/topoopt-moe.json --degree 4 --compare leafspine,railopt,railonly "
           "--format json "
           "--ls-evals 20");
  int rc = test_run_cli(args, "2>/dev/null", out, sizeof(out));
  CHECK_EQ_INT(rc, 0);
  CHECK(strstr(out, "\"fabric\": \"topoopt\"") != NULL);
  CHECK(strstr(out, "\"fabric\": \"random\"") != NULL);
  CHECK(strstr(out, "\"fabric\": \"leafspine\"") != NULL);
  CHECK(strstr(out, "\"fabric\": \"railopt\"") != NULL);
  CHECK(strstr(out, "\"fabric\": \"railonly\"") != NULL);
  CHECK(strstr(out, "over budget") == NULL); /* all three fit the optical fabric's cost */
  CHECK(strstr(out, "\"iter_s\": null") == NULL);
  /* Same input, same output. */
  char out2[16384];
  CHECK_EQ_INT(test_run_cli(args, "2>/dev/null", out2, sizeof(out2)), 0);
  CHECK(strcmp(out, out2) == 0);
  /* Bad input: exit 2 with a message. */
  static const char *const bad[] = {
      "ocs topo examples/topoopt-moe.json --degree 0",
      "ocs topo examples/topoopt-moe.json --degree 65",
      "ocs topo examples/topoopt-moe.json",
      "ocs topo /nonexistent/job.json --degree 2",
      "ocs topo examples/topoopt-moe.json --degree 2 --compare torus",
      "ocs topo examples/topoopt-moe.json --degree 2 --gbps -5",
      "ocs topo examples/topoopt-moe.json --degree 2 --bogus",
      "ocs topo examples/topoopt-moe.json --degree 2 --format xml",
      "ocs topo examples/demo.json --degree 2",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char msg[2048];
    int brc = test_run_cli(bad[i], "2>&1", msg, sizeof(msg));
    if (brc != 2) test_fail(__FILE__, __LINE__, "%s: exit %d, want 2: %s", bad[i], brc, msg);
    CHECK(strstr(msg, "fabricsim") != NULL);
  }
}
