/* Tests of SDM, bands and dynamic operation on the WAN (wan_sdm.h): core
 * adjacency of the layouts, the coupled-power crosstalk against hand
 * arithmetic, a lightpath's crosstalk through the RSCA state, a request
 * blocked by crosstalk alone, band reach from the OSNR model, the Erlang B
 * and Kaufman-Roberts closed forms (hand cases) and the dynamic engine
 * within their 95 % confidence intervals, the policies' ordering, the CLI's
 * bad input and determinism. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim/wan_sdm.h"
#include "test.h"

static fs_wan *parse(const char *text) {
  fs_wan *w = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_wan_from_json(text, "test.json", &w, &err), &err);
  return w;
}

static fs_wan_rsca *state(const fs_wan *w, fs_wan_policy p, int32_t k) {
  fs_wan_sdm s;
  fs_wan_rsca *r = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_wan_sdm_get(w, 0, &s, &err), &err);
  CHECK_OK(fs_wan_rsca_new(w, &s, p, k, &r, &err), &err);
  return r;
}

TEST(test_wan_sdm_layouts) {
  int32_t adj[FS_WAN_MAX_ADJ];
  struct {
    fs_wan_layout l;
    int32_t cores, edges;
  } cases[] = {{FS_WAN_LAYOUT_HEX7, 7, 12}, {FS_WAN_LAYOUT_RING12, 12, 12}, {FS_WAN_LAYOUT_HEX19, 19, 42}};
  /* hex7: the centre has 6 neighbours, each outer core 3 (the centre and
   * its two ring neighbours): 12 edges. hex19: centre 6, inner ring 6
   * each, outer ring corners 3 and edges 4: (6 + 36 + 18 + 24) / 2 = 42. */
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    int32_t sum = 0;
    for (int32_t c = 0; c < cases[i].cores; c++) {
      int32_t n = fs_wan_core_neighbours(cases[i].l, c, adj);
      sum += n;
      for (int32_t j = 0; j < n; j++) {
        int32_t back[FS_WAN_MAX_ADJ], m = fs_wan_core_neighbours(cases[i].l, adj[j], back), found = 0;
        for (int32_t x = 0; x < m; x++) found |= back[x] == c;
        CHECK(found); /* symmetric */
        CHECK(adj[j] != c);
      }
    }
    CHECK_EQ_CTX(sum / 2, cases[i].edges, fs_wan_layout_name(cases[i].l));
  }
  CHECK_EQ_INT(fs_wan_core_neighbours(FS_WAN_LAYOUT_HEX7, 0, adj), 6);
  CHECK_EQ_INT(fs_wan_core_neighbours(FS_WAN_LAYOUT_HEX7, 1, adj), 3);
  CHECK(adj[0] == 0 && adj[1] == 2 && adj[2] == 6);
  CHECK_EQ_INT(fs_wan_core_neighbours(FS_WAN_LAYOUT_HEX19, 0, adj), 6);
  CHECK_EQ_INT(fs_wan_core_neighbours(FS_WAN_LAYOUT_RING12, 0, adj), 2);
  CHECK(adj[0] == 1 && adj[1] == 11);
  fs_wan_layout l;
  CHECK(fs_wan_layout_for_cores(5, &l) == FS_EINVAL);
  CHECK(fs_wan_layout_for_cores(0, &l) == FS_EINVAL);
}

TEST(test_wan_sdm_xt_hand) {
  /* h = 2 (4e-4)^2 0.05 / (4e6 x 45e-6) = 1.6e-8 / 180 = 8.8889e-11 /m */
  double h = fs_wan_xt_h(4e-4, 0.05, 4e6, 45e-6);
  CHECK_REL(h, 8.888888888888889e-11, 1e-12, "/m");
  /* n = 3, L = 1000 km: x = (n + 1) 2 h L = 7.1111e-4, 1 - e^-x =
   * 7.10858e-4, XT = 3 x 7.10858e-4 / (4 - 3 x 7.10858e-4) = 5.33428e-4 */
  CHECK_REL(fs_wan_xt(3, h, 1e6), 5.33428e-4, 2e-6, "");
  CHECK_EQ_INT(fs_wan_xt(0, h, 1e6) == 0, 1);
  /* long fibres saturate at n / (1 + 0): the power spread evenly */
  CHECK_REL(fs_wan_xt(6, 1e-3, 1e9), 6, 1e-12, "");
  /* small hL: XT ~ 2 n h L (each neighbour couples 2hL of its power) */
  CHECK_REL(fs_wan_xt(2, 1e-12, 1e3), 2 * 2 * 1e-12 * 1e3, 1e-6, "");
}

/* a - b 500 km, b - c 300 km, 7 cores of one slot, thresholds 0 dB (none binds) */
static const char *three_sites =
    "{\"sites\": [{\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"c\"}],"
    " \"fibres\": [{\"a\": \"a\", \"b\": \"b\", \"km\": 500}, {\"a\": \"b\", \"b\": \"c\", \"km\": 300}],"
    " \"grid\": {\"type\": \"flex\", \"slots\": 1, \"guard_slots\": 0},"
    " \"modulations\": [{\"name\": \"QPSK\", \"bits\": 2, \"reach_km\": 5000}],"
    " \"sdm\": {\"cores\": 7, \"xt_threshold_db\": {\"QPSK\": 0}}}";

TEST(test_wan_sdm_lightpath_xt) {
  fs_wan *w = parse(three_sites);
  if (!w) return;
  fs_wan_rsca *r = state(w, FS_WAN_POLICY_FIRST_FIT, 1);
  int32_t lp[5];
  /* first-fit, core then slot: a-c on the centre (core 0) of both fibres,
   * then a-b on cores 1 and 2, b-c on core 1 */
  CHECK_EQ_INT(fs_wan_rsca_add(r, 0, 2, 25, &lp[0]), FS_WAN_SDM_OK);
  CHECK_EQ_INT(fs_wan_rsca_add(r, 0, 1, 25, &lp[1]), FS_WAN_SDM_OK);
  CHECK_EQ_INT(fs_wan_rsca_add(r, 0, 1, 25, &lp[2]), FS_WAN_SDM_OK);
  CHECK_EQ_INT(fs_wan_rsca_add(r, 1, 2, 25, &lp[3]), FS_WAN_SDM_OK);
  fs_wan_sdm_lp l;
  CHECK(fs_wan_rsca_lp(r, lp[2], &l) == 0 && l.core[0] == 2);
  double xt, thr;
  /* the centre: 2 lit neighbours over 500 km, 1 over 300 km:
   * XT(2, 500 km) + XT(1, 300 km) = 1.77786e-4 + 5.33324e-5 = 2.31119e-4
   * (-36.3616 dB) */
  CHECK(fs_wan_rsca_xt_db(r, lp[0], &xt, &thr) == 0);
  CHECK_REL(xt, -36.36164, 1e-6, "dB");
  CHECK_REL(thr, 0, 1e-12, "dB");
  /* core 1 on a-b: neighbours 0, 2, 6, of which 0 and 2 lit: XT(2, 500 km) */
  CHECK(fs_wan_rsca_xt_db(r, lp[1], &xt, &thr) == 0);
  CHECK_REL(xt, -37.50103, 1e-6, "dB");
  /* releasing the centre leaves core 1 of b-c alone */
  fs_wan_rsca_release(r, lp[0]);
  CHECK(fs_wan_rsca_xt_db(r, lp[3], &xt, &thr) == 0);
  CHECK(isinf(xt) && xt < 0);
  CHECK(fs_wan_rsca_xt_db(r, lp[0], &xt, &thr) == -1);
  fs_wan_rsca_free(r);
  fs_wan_free(w);
}

/* One 1000 km fibre of 7 one-slot cores, threshold -33.5 dB between
 * XT(2) = -34.49 dB and XT(3) = -32.73 dB. */
static const char *one_fibre_xt =
    "{\"sites\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
    " \"fibres\": [{\"a\": \"a\", \"b\": \"b\", \"km\": 1000}],"
    " \"grid\": {\"type\": \"flex\", \"slots\": 1, \"guard_slots\": 0},"
    " \"modulations\": [{\"name\": \"QPSK\", \"bits\": 2, \"reach_km\": 5000}],"
    " \"sdm\": {\"cores\": 7, \"xt_threshold_db\": {\"QPSK\": %s}}}";

TEST(test_wan_sdm_blocked_only_by_xt) {
  char text[1024];
  for (int pass = 0; pass < 2; pass++) {
    snprintf(text, sizeof(text), one_fibre_xt, pass ? "0" : "-33.5");
    fs_wan *w = parse(text);
    if (!w) return;
    for (int pol = 0; pol < 3; pol++) {
      fs_wan_rsca *r = state(w, (fs_wan_policy)pol, 1);
      int32_t lp;
      /* centre, then cores 1 and 2 (each adjacent to the centre and to each
       * other): every lightpath sees at most 2 lit neighbours */
      for (int i = 0; i < 3; i++) CHECK_EQ_INT(fs_wan_rsca_add(r, 0, 1, 25, &lp), FS_WAN_SDM_OK);
      fs_wan_sdm_status st = fs_wan_rsca_add(r, 0, 1, 25, &lp);
      if (pass == 0) {
        /* any outer core would give the centre a third lit neighbour: with
         * four cores free, crosstalk alone forbids the request */
        CHECK_EQ_CTX(st, FS_WAN_SDM_BLOCKED_XT, fs_wan_policy_name((fs_wan_policy)pol));
        int32_t free_cores = 0;
        for (int32_t c = 0; c < 7; c++) free_cores += fs_wan_rsca_used(r, 0, c) == 0;
        CHECK_EQ_INT(free_cores, 4);
      } else {
        CHECK_EQ_CTX(st, FS_WAN_SDM_OK, fs_wan_policy_name((fs_wan_policy)pol));
      }
      fs_wan_rsca_free(r);
    }
    fs_wan_free(w);
  }
}

TEST(test_wan_sdm_fragmentation_hand) {
  fs_wan *w = parse(
      "{\"sites\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
      " \"fibres\": [{\"a\": \"a\", \"b\": \"b\", \"km\": 100}],"
      " \"grid\": {\"type\": \"flex\", \"slots\": 8, \"guard_slots\": 0},"
      " \"modulations\": [{\"name\": \"QPSK\", \"bits\": 2, \"reach_km\": 5000}]}");
  if (!w) return;
  fs_wan_rsca *r = state(w, FS_WAN_POLICY_FIRST_FIT, 1);
  int32_t lp[4];
  CHECK_REL(fs_wan_rsca_fragmentation(r), 0, 1e-12, ""); /* all free: one block */
  for (int i = 0; i < 4; i++) CHECK_EQ_INT(fs_wan_rsca_add(r, 0, 1, 25, &lp[i]), FS_WAN_SDM_OK);
  fs_wan_rsca_release(r, lp[1]);
  /* free: slot 1 and slots 4-7: 5 units, largest block 4: 1 - 4/5 */
  CHECK_REL(fs_wan_rsca_fragmentation(r), 0.2, 1e-12, "");
  /* 50 Gb/s takes 2 QPSK slots: first-fit skips the hole at 1 for 4-5 */
  CHECK_EQ_INT(fs_wan_rsca_add(r, 0, 1, 50, &lp[1]), FS_WAN_SDM_OK);
  fs_wan_sdm_lp l;
  CHECK(fs_wan_rsca_lp(r, lp[1], &l) == 0 && l.first[0] == 4 && l.count[0] == 2);
  /* free: 1 and 6-7: 1 - 2/3 */
  CHECK_REL(fs_wan_rsca_fragmentation(r), 1.0 / 3, 1e-12, "");
  fs_wan_rsca_free(r);
  fs_wan_free(w);
}

TEST(test_wan_sdm_band_reach) {
  fs_wan *w = parse(
      "{\"sites\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
      " \"fibres\": [{\"a\": \"a\", \"b\": \"b\", \"km\": 100}],"
      " \"grid\": {\"type\": \"flex\"}, \"bands\": [\"C\", \"L\", \"S\"]}");
  if (!w) return;
  const fs_wan_sdm *s = w->sdm;
  CHECK(s != NULL);
  if (!s) return;
  /* 4.8, 4.8, 6.0 THz in 12.5 GHz slots, end to end */
  CHECK_EQ_INT(s->bands[0].slots, 384);
  CHECK_EQ_INT(s->bands[1].slots, 384);
  CHECK_EQ_INT(s->bands[2].slots, 480);
  CHECK_EQ_INT(s->bands[2].first, 768);
  CHECK_EQ_INT(s->units, 1248);
  /* L: 1 dB more noise figure + 0.01 dB/km x 80 km = 1.8 dB per span:
   * 10^-0.18 = 0.660693 of the C reach; S: 2 + 0.03 x 80 = 4.4 dB: 0.363078
   * (QPSK, entry 1 of the default table, 2000 km in C) */
  CHECK_REL(s->bands[0].reach_km[1], 2000, 1e-12, "km");
  CHECK_REL(s->bands[1].reach_km[1], 2000 * 0.660693448, 1e-8, "km");
  CHECK_REL(s->bands[2].reach_km[1], 2000 * 0.363078055, 1e-8, "km");
  fs_wan_free(w);
}

TEST(test_wan_sdm_closed_forms_hand) {
  /* Erlang B: B(1, 1) = 1/2; B(2, 2) = (4/2) / (1 + 2 + 4/2) = 2/5 */
  CHECK_REL(fs_wan_erlang_b(1, 1), 0.5, 1e-12, "");
  CHECK_REL(fs_wan_erlang_b(2, 2), 0.4, 1e-12, "");
  CHECK_REL(fs_wan_erlang_b(3, 0), 1, 1e-12, "");
  /* Kaufman-Roberts, 2 units, b = {1, 2}, a = {1, 1}: q = 1, 1, (1 + 2) / 2
   * = 1.5; G = 3.5; B1 = 1.5 / 3.5, B2 = 2.5 / 3.5 */
  double a[2] = {1, 1}, bl[2];
  int32_t b[2] = {1, 2};
  CHECK_EQ_INT(fs_wan_kaufman_roberts(2, 2, a, b, bl), 0);
  CHECK_REL(bl[0], 1.5 / 3.5, 1e-12, "");
  CHECK_REL(bl[1], 2.5 / 3.5, 1e-12, "");
  /* one class of one unit is Erlang B; a huge load stays finite */
  double e = 37, one;
  int32_t u = 1;
  CHECK_EQ_INT(fs_wan_kaufman_roberts(40, 1, &e, &u, &one), 0);
  CHECK_REL(one, fs_wan_erlang_b(37, 40), 1e-10, "");
  e = 5000;
  CHECK_EQ_INT(fs_wan_kaufman_roberts(4000, 1, &e, &u, &one), 0);
  CHECK_REL(one, fs_wan_erlang_b(5000, 4000), 1e-8, "");
  CHECK(fs_wan_kaufman_roberts(4, 1, &e, (int32_t[]){0}, &one) == FS_EINVAL);
  CHECK_REL(fs_wan_t975(1), 12.706, 1e-12, "");
  CHECK_REL(fs_wan_t975(9), 2.262, 1e-12, "");
  CHECK(fabs(fs_wan_t975(120) - 1.980) < 1e-3);
  CHECK(isnan(fs_wan_t975(0)));
}

/* One fibre, one core, 16 wavelengths of 100 Gb/s, rates given. */
static void erlang_case(const char *rates, const double *loads, int n) {
  char text[1024];
  snprintf(text, sizeof(text),
           "{\"sites\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
           " \"fibres\": [{\"a\": \"a\", \"b\": \"b\", \"km\": 100}],"
           " \"grid\": {\"type\": \"fixed\", \"wavelengths\": 16, \"gbps\": 100},"
           " \"traffic\": {\"rates_gbps\": [%s]}}",
           rates);
  fs_wan *w = parse(text);
  if (!w) return;
  fs_wan_rsca *r = state(w, FS_WAN_POLICY_FIRST_FIT, 1);
  for (int i = 0; i < n; i++) {
    fs_wan_dyn_opts o = {FS_WAN_POLICY_FIRST_FIT, 1, loads[i], 40000, 10, 7, NULL, NULL, NULL, 0, 0};
    fs_wan_dyn_point p;
    fs_err err = {0, ""};
    CHECK_OK(fs_wan_dynamic(r, &o, &p, &err), &err);
    /* the closed form computed here, independently of the engine's */
    int32_t nr = w->sdm->traffic.n_rates, b[FS_WAN_MAX_RATES];
    double a[FS_WAN_MAX_RATES], bl[FS_WAN_MAX_RATES], pb = 0, bw = 0, off = 0;
    for (int32_t j = 0; j < nr; j++) {
      b[j] = (int32_t)(w->sdm->traffic.rates_gbps[j] / 100);
      a[j] = loads[i] / nr;
    }
    CHECK_EQ_INT(fs_wan_kaufman_roberts(16, nr, a, b, bl), 0);
    for (int32_t j = 0; j < nr; j++) {
      pb += bl[j] / nr;
      bw += b[j] * bl[j];
      off += b[j];
    }
    if (nr == 1) CHECK_REL(pb, fs_wan_erlang_b(loads[i], 16), 1e-10, "");
    CHECK_REL(p.analytic_pb, pb, 1e-10, "");
    if (!(fabs(p.pb - pb) <= p.pb_ci) || !(fabs(p.bbr - bw / off) <= p.bbr_ci))
      test_fail(__FILE__, __LINE__,
                "rates [%s], %g Erlang: simulated %.5f +- %.5f (bw %.5f +- %.5f), closed form "
                "%.5f (bw %.5f)",
                rates, loads[i], p.pb, p.pb_ci, p.bbr, p.bbr_ci, pb, bw / off);
    CHECK(p.pb_ci > 0 && p.pb_ci < 0.02);
  }
  fs_wan_rsca_free(r);
  fs_wan_free(w);
}

TEST(test_wan_sdm_erlang_b_within_ci) {
  const double loads[] = {6, 10, 14, 20};
  erlang_case("100", loads, 4);
}

TEST(test_wan_sdm_kaufman_roberts_within_ci) {
  const double loads[] = {3, 6, 10};
  erlang_case("100, 200, 400", loads, 3);
}

static double blocking(const char *file, fs_wan_policy p, int32_t cores, double load) {
  fs_wan *w = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_wan_from_file(file, &w, &err), &err);
  if (!w) return NAN;
  fs_wan_sdm s;
  fs_wan_rsca *r = NULL;
  fs_wan_dyn_point pt = {0};
  CHECK_OK(fs_wan_sdm_get(w, cores, &s, &err), &err);
  CHECK_OK(fs_wan_rsca_new(w, &s, p, 3, &r, &err), &err);
  fs_wan_dyn_opts o = {p, 3, load, 20000, 2, 1, NULL, NULL, NULL, 0, 0};
  if (r) CHECK_OK(fs_wan_dynamic(r, &o, &pt, &err), &err);
  fs_wan_rsca_free(r);
  fs_wan_free(w);
  return pt.pb;
}

TEST(test_wan_sdm_orderings) {
  /* NSFNET, a high-crosstalk fibre: crosstalk-aware and -avoiding below
   * first-fit, which blocks on its first candidate's crosstalk */
  double ff = blocking("examples/wan-nsfnet-sdm.json", FS_WAN_POLICY_FIRST_FIT, 0, 600);
  double aw = blocking("examples/wan-nsfnet-sdm.json", FS_WAN_POLICY_XT_AWARE, 0, 600);
  double av = blocking("examples/wan-nsfnet-sdm.json", FS_WAN_POLICY_XT_AVOID, 0, 600);
  CHECK(aw < ff);
  CHECK(av < aw);
  /* USNET: more cores carry the same load with less blocking */
  double c1 = blocking("examples/wan-usnet-sdm.json", FS_WAN_POLICY_XT_AWARE, 1, 600);
  double c7 = blocking("examples/wan-usnet-sdm.json", FS_WAN_POLICY_XT_AWARE, 7, 600);
  CHECK(c7 < c1);
}

TEST(test_wan_sdm_cli_bad_input) {
  char out[4096];
  static const struct {
    const char *args, *want1, *want2;
  } cases[] = {
      {"wan dynamic tests/data/bad-cli/wan-sdm-cores-zero.json", "$.sdm.cores", "0"},
      {"wan dynamic tests/data/bad-cli/wan-sdm-cores-five.json", "$.sdm.cores", "5"},
      {"wan dynamic tests/data/bad-cli/wan-traffic-load-negative.json", "$.traffic.load_erlang", "-3"},
      {"wan dynamic tests/data/bad-cli/wan-sdm-layout-mismatch.json", "$.sdm.layout", "ring12"},
      {"wan dynamic examples/wan-usnet-sdm.json --cores 5", "--cores", "5"},
      {"wan dynamic examples/wan-usnet-sdm.json --policy best", "--policy", "best"},
      {"wan dynamic examples/wan-usnet-sdm.json --loads 5:1:1", "--loads", "5:1:1"},
      {"wan dynamic examples/wan-erlang-link.json --load 3 --loads 1:2:1", "--load", "--loads"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    CHECK_EQ_CTX(test_run_cli(cases[i].args, "2>&1", out, sizeof(out)), 2, cases[i].args);
    if (!strstr(out, cases[i].want1) || !strstr(out, cases[i].want2) ||
        strchr(out, '\n') != out + strlen(out) - 1)
      test_fail(__FILE__, __LINE__, "%s: '%s' lacks '%s' or '%s' or is not one line",
                cases[i].args, out, cases[i].want1, cases[i].want2);
  }
}

TEST(test_wan_sdm_cli_deterministic) {
  static char a[65536], b[65536], c[65536];
  const char *cmd = "wan dynamic examples/wan-nsfnet-sdm.json --requests 5000 --seeds 2 "
                    "--policy xt-aware --format json";
  CHECK_EQ_INT(test_run_cli(cmd, "2>/dev/null", a, sizeof(a)), 0);
  CHECK_EQ_INT(test_run_cli(cmd, "2>/dev/null", b, sizeof(b)), 0);
  CHECK(strcmp(a, b) == 0);
  CHECK(strstr(a, "\"blocking\"") != NULL);
  CHECK_EQ_INT(test_run_cli("wan dynamic examples/wan-nsfnet-sdm.json --requests 5000 --seeds 2 "
                            "--policy xt-aware --format json --seed 9",
                            "2>/dev/null", c, sizeof(c)),
               0);
  CHECK(strcmp(a, c) != 0);
  CHECK_EQ_INT(test_run_cli("wan dynamic examples/wan-erlang-link.json --requests 2000 --seeds 2 "
                            "--loads 5:7:1 --format csv",
                            "2>/dev/null", c, sizeof(c)),
               0);
  int lines = 0;
  for (const char *p = c; *p; p++) lines += *p == '\n';
  CHECK_EQ_INT(lines, 4); /* header + 3 loads */
}

/* A dedicated slice (OSDL): the job's lightpaths lie inside it, every
 * other request outside it, even when the rest of the spectrum is full;
 * and the other tenants pay for it: at 600 Erlang on the OSDL example
 * their blocking with the job in a 40-unit slice is above the blocking
 * with the job on the shared spectrum, beyond both 95 % intervals. */
TEST(test_wan_sdm_slice_holds_the_job_apart) {
  fs_wan *w = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_wan_from_file("examples/wan-nsfnet-osdl.json", &w, &err), &err);
  if (!w) return;
  fs_wan_sdm s;
  CHECK_OK(fs_wan_sdm_get(w, 0, &s, &err), &err);
  fs_wan_rsca *r = NULL;
  CHECK_OK(fs_wan_rsca_new(w, &s, FS_WAN_POLICY_XT_AWARE, 3, &r, &err), &err);
  if (!r) {
    fs_wan_free(w);
    return;
  }
  fs_wan_rsca_set_slice(r, 0, 40);
  fs_wan_demand job[8];
  int32_t nj = fs_wan_job_demands(w, job, 8);
  CHECK(nj == 4);
  for (int32_t i = 0; i < nj; i++) {
    int32_t lp;
    fs_wan_sdm_lp l;
    CHECK(fs_wan_rsca_add_to(r, job[i].src, job[i].dst, job[i].gbps, 1, &lp) == FS_WAN_SDM_OK);
    CHECK_EQ_INT(fs_wan_rsca_lp(r, lp, &l), 0);
    for (int32_t c = 0; c < l.n_ch; c++) CHECK(l.first[c] + l.count[c] <= 40);
  }
  /* fill the rest: nothing else ever lands in the slice */
  int outside = 1, placed = 0;
  for (int32_t t = 0; t < 4000; t++) {
    int32_t a = t % w->n_sites, b = (t * 7 + 3) % w->n_sites, lp;
    if (a == b) continue;
    if (fs_wan_rsca_add(r, a, b, 400, &lp) != FS_WAN_SDM_OK) continue;
    placed++;
    fs_wan_sdm_lp l;
    fs_wan_rsca_lp(r, lp, &l);
    for (int32_t c = 0; c < l.n_ch; c++) outside &= l.first[c] >= 40;
  }
  CHECK(placed > 100);
  CHECK(outside);
  /* the other tenants' blocking, shared against slice */
  fs_wan_dyn_point pt[2];
  for (int slice = 0; slice < 2; slice++) {
    fs_wan_rsca_set_slice(r, 0, slice ? 40 : 0);
    fs_wan_dyn_opts o = {FS_WAN_POLICY_XT_AWARE, 3, 600, 20000, 5, 1, NULL, NULL, job, nj, slice};
    CHECK_OK(fs_wan_dynamic(r, &o, &pt[slice], &err), &err);
    CHECK_EQ_INT(pt[slice].fixed_blocked, 0);
  }
  CHECK(pt[1].pb - pt[1].pb_ci > pt[0].pb + pt[0].pb_ci);
  fs_wan_rsca_free(r);
  fs_wan_free(w);
}

/* Heterogeneous cores: two adjacent cores of types whose propagation
 * constants differ by 4054 /m (an effective-index step of 1e-3 at
 * 1550 nm), k = 1.5e-3 /m, d = 0.05 m couple by
 * 2 k^2 d / (1 + (dbeta d)^2) = 2.25e-7 / 41,088.3 = 5.476e-12 /m
 * (hand-computed), 228 times less than the same cores homogeneous
 * (1.25e-9 /m, the bend formula); cores of one type keep the bend
 * formula. On the stress NSFNET the crosstalk that blocked 28 % of the
 * requests under first-fit at 600 Erlang blocks none. */
TEST(test_wan_sdm_heterogeneous_cores) {
  fs_wan *w = NULL, *h = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_wan_from_file("examples/wan-nsfnet-sdm-het.json", &h, &err), &err);
  CHECK_OK(fs_wan_from_file("examples/wan-nsfnet-sdm.json", &w, &err), &err);
  if (!w || !h) {
    fs_wan_free(w);
    fs_wan_free(h);
    return;
  }
  fs_wan_sdm sh, sw;
  CHECK_OK(fs_wan_sdm_get(h, 0, &sh, &err), &err);
  CHECK_OK(fs_wan_sdm_get(w, 0, &sw, &err), &err);
  CHECK_EQ_INT(sh.n_types, 3);
  CHECK_REL(fs_wan_xt_h_pair(&sh, 0, 1), 5.476e-12, 1e-3, "/m (types 0 and 1)");
  /* one type: the bend formula with that type's beta (4e6 + 4054 /m) */
  CHECK_REL(fs_wan_xt_h_pair(&sh, 1, 3), sw.h_per_m * 4e6 / (4e6 + 4054), 1e-12, "/m (one type)");
  CHECK(fs_wan_xt_h_pair(&sw, 0, 1) == sw.h_per_m);
  double pb[2];
  fs_wan *nets[2] = {w, h};
  fs_wan_sdm *ss[2] = {&sw, &sh};
  for (int i = 0; i < 2; i++) {
    fs_wan_rsca *r = NULL;
    CHECK_OK(fs_wan_rsca_new(nets[i], ss[i], FS_WAN_POLICY_FIRST_FIT, 3, &r, &err), &err);
    if (!r) continue;
    fs_wan_dyn_opts o = {FS_WAN_POLICY_FIRST_FIT, 3, 600, 20000, 3, 1, NULL, NULL, NULL, 0, 0};
    fs_wan_dyn_point pt;
    CHECK_OK(fs_wan_dynamic(r, &o, &pt, &err), &err);
    pb[i] = pt.pb;
    if (i == 1) CHECK_EQ_INT((int)pt.blocked_xt, 0);
    fs_wan_rsca_free(r);
  }
  CHECK(pb[0] > 0.2 && pb[1] < 0.01);
  /* a core count the types were not written for */
  CHECK(fs_wan_sdm_get(h, 12, &sh, &err) == FS_EINVAL);
  fs_wan_free(w);
  fs_wan_free(h);
}
