/* Tests of survivability and risk on the optical WAN (wan_risk.h): path
 * and pair availability against hand-computed closed forms, the two-step
 * trap that Bhandari's pair escapes, SRLG-disjointness of every protected
 * demand under random SRLG assignments (checked from the groups' fibre
 * lists here, not by the library's predicate), the spectrum ordering
 * none <= SBPP <= 1+1, an SRLG failure that 1+1 always survives, the
 * job's availability and completion time against hand formulas, and bad
 * input naming the JSON path and value. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/base/base.h"
#include "fabricsim/wan.h"
#include "fabricsim/wan_risk.h"
#include "test.h"

static fs_wan *parse(const char *text) {
  fs_wan *w = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_wan_from_json(text, "test.json", &w, &err), &err);
  return w;
}

static fs_wan_risks *risks_of(const fs_wan *w) {
  fs_wan_risks *r = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_wan_risks_build(w, &r, &err), &err);
  return r;
}

/* U of a risk of km at rate c per 1000 km per year and MTTR m hours. */
static double U_of(double km, double c, double m) {
  double lam = c * km / 1000 / 8766;
  return 1 / (1 / lam + m) * m;
}

TEST(test_wan_risk_path_availability_hand) {
  /* A-B 1000 km, B-C 500 km, 2 cuts/1000 km/yr, MTTR 10 h: A = (1-U1)(1-U2). */
  static const char *base =
      "{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}, {\"name\": \"C\"}],"
      " \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 1000}, {\"a\": \"B\", \"b\": \"C\", \"km\": 500}],"
      " \"reliability\": {\"cuts_per_1000km_year\": 2, \"repair_hours\": 10}%s}";
  char text[1024];
  snprintf(text, sizeof(text), base, "");
  fs_wan *w = parse(text);
  if (!w) return;
  fs_wan_risks *r = risks_of(w);
  int32_t nodes[] = {0, 1, 2}, fibres[] = {0, 1};
  fs_wan_path p = {2, nodes, fibres, 1500};
  double want = (1 - U_of(1000, 2, 10)) * (1 - U_of(500, 2, 10));
  CHECK_REL(fs_wan_path_availability(r, &p), want, 1e-12, "");
  /* U = lambda MTTR / (1 + lambda MTTR): 1000 km, 2/yr: lambda = 2/8766 per h */
  CHECK_REL(r->unavail[0], (2.0 / 8766 * 10) / (1 + 2.0 / 8766 * 10), 1e-12, "");
  fs_wan_risks_free(r);
  fs_wan_free(w);
  /* one SRLG over both (a shared duct of 800 km): counted once */
  snprintf(text, sizeof(text), base,
           ", \"srlgs\": [{\"name\": \"duct\", \"fibres\": [\"A-B\", \"B-C\"], \"km\": 800}]");
  w = parse(text);
  if (!w) return;
  r = risks_of(w);
  CHECK_EQ_INT(r->n, 1);
  CHECK_REL(fs_wan_path_availability(r, &p), 1 - U_of(800, 2, 10), 1e-12, "");
  fs_wan_risks_free(r);
  fs_wan_free(w);
}

static const char *tri =
    "{\"sites\": [{\"name\": \"A\", \"gpus\": 8}, {\"name\": \"B\", \"gpus\": 8}, {\"name\": \"C\"}],"
    " \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 400}, {\"a\": \"A\", \"b\": \"C\", \"km\": 300},"
    " {\"a\": \"C\", \"b\": \"B\", \"km\": 600}],"
    " \"reliability\": {\"cuts_per_1000km_year\": 20, \"repair_hours\": 24},"
    " \"job\": {\"gbps\": 100, \"bytes\": 1e8}}";

TEST(test_wan_risk_1p1_exact_on_a_triangle) {
  fs_wan *w = parse(tri);
  if (!w) return;
  fs_wan_risks *r = risks_of(w);
  double uab = U_of(400, 20, 24), uac = U_of(300, 20, 24), ucb = U_of(600, 20, 24);
  /* 1+1: working A-B, backup A-C-B: down only if A-B down and A-C-B down */
  double want = 1 - uab * (1 - (1 - uac) * (1 - ucb));
  fs_wan_demand d = {0, 1, 100, -1, 1};
  fs_err err = {0, ""};
  fs_wan_protect_opts o = {FS_WAN_PROT_1P1, FS_WAN_ROUTE_KM, 0, 3};
  fs_wan_pplan *p = NULL;
  CHECK_OK(fs_wan_protect(w, r, &d, 1, &o, &p, &err), &err);
  if (p) {
    CHECK_EQ_INT(p->d[0].status, FS_WAN_OK);
    CHECK_EQ_INT(p->d[0].work.path.hops, 1);
    CHECK_EQ_INT(p->d[0].backup.path.hops, 2);
    CHECK_REL(p->d[0].availability, want, 1e-12, "");
    CHECK_OK(fs_wan_pplan_check(p, &err), &err);
    /* the job is this one ring pair: its availability is the pair's,
     * here by enumerating the three risks */
    fs_wan_job_risk j;
    CHECK_OK(fs_wan_job_risk_eval(p, 1000, 60, &j, &err), &err);
    CHECK(j.exact);
    CHECK_REL(j.availability, want, 1e-12, "");
    /* failures on the working path only (A-B), each costing 50 ms */
    double lam = 20 * 0.4 / 8766;
    CHECK_REL(j.fails_per_hour, lam, 1e-12, "/h");
    CHECK_REL(j.lost_per_hour, lam * 0.05 / 3600, 1e-9, "");
    CHECK_REL(j.jct_hours, 1000 * j.iter_s / 3600 * (1 + lam * 0.05 / 3600), 1e-12, "h");
  }
  fs_wan_pplan_free(p);
  /* unprotected: availability 1 - uab; a cut of A-B is restored over
   * A-C-B, so each costs restoration + restart + half a checkpoint */
  o.scheme = FS_WAN_PROT_NONE;
  CHECK_OK(fs_wan_protect(w, r, &d, 1, &o, &p, &err), &err);
  if (p) {
    CHECK_REL(p->d[0].availability, 1 - uab, 1e-12, "");
    fs_wan_job_risk j;
    CHECK_OK(fs_wan_job_risk_eval(p, 1000, 60, &j, &err), &err);
    double lam = 20 * 0.4 / 8766, cost = 2.0 / 3600 + 5.0 / 60 + 30.0 / 60;
    CHECK_REL(j.availability, 1 - uab, 1e-12, "");
    CHECK_REL(j.lost_per_hour, lam * cost, 1e-9, "");
  }
  fs_wan_pplan_free(p);
  fs_wan_risks_free(r);
  fs_wan_free(w);
}

TEST(test_wan_risk_unrestorable_cut_costs_the_repair) {
  /* one fibre between the two sites: nothing to restore onto */
  fs_wan *w = parse("{\"sites\": [{\"name\": \"A\", \"gpus\": 4}, {\"name\": \"B\", \"gpus\": 4}],"
                    " \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 2000}],"
                    " \"reliability\": {\"repair_hours\": 12, \"restart_minutes\": 6},"
                    " \"checkpoint_minutes\": 20, \"job\": {\"gbps\": 100}}");
  if (!w) return;
  fs_wan_risks *r = risks_of(w);
  fs_wan_demand d[1];
  CHECK_EQ_INT(fs_wan_job_demands(w, d, 1), 1);
  fs_err err = {0, ""};
  fs_wan_protect_opts o = {FS_WAN_PROT_NONE, FS_WAN_ROUTE_KM, 0, 3};
  fs_wan_pplan *p = NULL;
  CHECK_OK(fs_wan_protect(w, r, d, 1, &o, &p, &err), &err);
  fs_wan_job_risk j;
  if (p) {
    CHECK_OK(fs_wan_job_risk_eval(p, 5000, 0, &j, &err), &err);
    double lam = 2.13 * 2 / 8766, cost = 12 + 0.1 + 10.0 / 60;
    CHECK_REL(j.checkpoint_minutes, 20, 1e-12, "min");
    CHECK_REL(j.lost_per_hour, lam * cost, 1e-9, "");
    CHECK_REL(j.availability, 1 - U_of(2000, 2.13, 12), 1e-12, "");
  }
  fs_wan_pplan_free(p);
  /* protected: no SRLG-disjoint pair exists */
  o.scheme = FS_WAN_PROT_1P1;
  CHECK_OK(fs_wan_protect(w, r, d, 1, &o, &p, &err), &err);
  if (p) {
    CHECK_EQ_INT(p->blocked, 1);
    CHECK(p->d[0].no_pair);
  }
  fs_wan_pplan_free(p);
  fs_wan_risks_free(r);
  fs_wan_free(w);
}

TEST(test_wan_risk_two_step_trap_bhandari_escapes) {
  /* s-a-b-t is the shortest (3); without its fibres s and t are apart, so
   * the two-step finds no backup; the disjoint pair s-a-t, s-b-t (3.5 each)
   * exists and Bhandari finds it */
  fs_wan *w = parse("{\"sites\": [{\"name\": \"s\"}, {\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"t\"}],"
                    " \"fibres\": [{\"a\": \"s\", \"b\": \"a\", \"km\": 1}, {\"a\": \"a\", \"b\": \"b\", \"km\": 1},"
                    " {\"a\": \"b\", \"b\": \"t\", \"km\": 1}, {\"a\": \"s\", \"b\": \"b\", \"km\": 2.5},"
                    " {\"a\": \"a\", \"b\": \"t\", \"km\": 2.5}]}");
  if (!w) return;
  fs_wan_risks *r = risks_of(w);
  fs_err err = {0, ""};
  fs_wan_path p1, p2;
  CHECK_EQ_INT(fs_wan_disjoint_pair(w, r, 0, 3, FS_WAN_PAIR_TWO_STEP, &p1, &p2, &err), 0);
  CHECK_EQ_INT(fs_wan_disjoint_pair(w, r, 0, 3, FS_WAN_PAIR_BHANDARI, &p1, &p2, &err), 1);
  CHECK_REL(p1.km, 3.5, 1e-12, "km");
  CHECK_REL(p2.km, 3.5, 1e-12, "km");
  CHECK_EQ_INT(p1.hops, 2);
  CHECK_EQ_INT(p2.hops, 2);
  CHECK(fs_wan_srlg_disjoint(r, &p1, &p2));
  if (p1.hops == 2 && p2.hops == 2) CHECK(p1.nodes[1] != p2.nodes[1]);
  free(p1.nodes), free(p1.fibres), free(p2.nodes), free(p2.fibres);
  /* provisioning with k = 1 falls back to the pair */
  fs_wan_demand d = {0, 3, 100, -1, 0};
  fs_wan_protect_opts o = {FS_WAN_PROT_1P1, FS_WAN_ROUTE_KM, 0, 1};
  fs_wan_pplan *p = NULL;
  CHECK_OK(fs_wan_protect(w, r, &d, 1, &o, &p, &err), &err);
  if (p) {
    CHECK_EQ_INT(p->d[0].status, FS_WAN_OK);
    CHECK_REL(p->d[0].work.path.km + p->d[0].backup.path.km, 7, 1e-12, "km");
    CHECK_OK(fs_wan_pplan_check(p, &err), &err);
  }
  fs_wan_pplan_free(p);
  fs_wan_risks_free(r);
  fs_wan_free(w);
}

static const char *const nsf_fibres[21][3] = {
    {"n1", "n2", "1100"},  {"n1", "n3", "1600"},  {"n1", "n8", "2800"},  {"n2", "n3", "600"},
    {"n2", "n4", "1000"},  {"n3", "n6", "2000"},  {"n4", "n5", "600"},   {"n4", "n11", "2400"},
    {"n5", "n6", "1100"},  {"n5", "n7", "800"},   {"n6", "n10", "1200"}, {"n6", "n14", "2000"},
    {"n7", "n8", "700"},   {"n8", "n9", "700"},   {"n9", "n10", "900"},  {"n9", "n12", "500"},
    {"n9", "n13", "500"},  {"n11", "n12", "800"}, {"n11", "n13", "800"}, {"n12", "n14", "300"},
    {"n13", "n14", "300"}};

/* NSFNET (14 sites, 21 fibres; reach long enough for every backup) with
 * the given SRLG text; the group of fibre i written to group[i] (-1). */
static char *nsfnet(fs__rng *rng, int32_t n_groups, int32_t *group) {
  size_t cap = 16384, len = 0;
  char *s = malloc(cap);
  len += (size_t)snprintf(s + len, cap - len, "{\"sites\": [");
  for (int i = 1; i <= 14; i++) len += (size_t)snprintf(s + len, cap - len, "%s{\"name\": \"n%d\"}", i > 1 ? ", " : "", i);
  len += (size_t)snprintf(s + len, cap - len, "], \"fibres\": [");
  for (int i = 0; i < 21; i++)
    len += (size_t)snprintf(s + len, cap - len, "%s{\"a\": \"%s\", \"b\": \"%s\", \"km\": %s}", i ? ", " : "",
                            nsf_fibres[i][0], nsf_fibres[i][1], nsf_fibres[i][2]);
  len += (size_t)snprintf(s + len, cap - len,
                          "], \"modulations\": [{\"name\": \"BPSK\", \"bits\": 1, \"reach_km\": 20000},"
                          " {\"name\": \"QPSK\", \"bits\": 2, \"reach_km\": 4000}],"
                          " \"grid\": {\"type\": \"flex\", \"slots\": 640}, \"srlgs\": [");
  for (int i = 0; i < 21; i++) group[i] = -1;
  for (int32_t g = 0; g < n_groups; g++) {
    /* two or three fibres not yet grouped */
    int32_t want = 2 + (int32_t)fs__rng_below(rng, 2), got = 0, f[3];
    for (int tries = 0; tries < 100 && got < want; tries++) {
      int32_t x = (int32_t)fs__rng_below(rng, 21);
      if (group[x] < 0) group[x] = g, f[got++] = x;
    }
    len += (size_t)snprintf(s + len, cap - len, "%s{\"name\": \"g%d\", \"fibres\": [", g ? ", " : "", g);
    for (int32_t i = 0; i < got; i++)
      len += (size_t)snprintf(s + len, cap - len, "%s\"%s-%s\"", i ? ", " : "", nsf_fibres[f[i]][0], nsf_fibres[f[i]][1]);
    len += (size_t)snprintf(s + len, cap - len, "]}");
  }
  snprintf(s + len, cap - len, "]}");
  return s;
}

TEST(test_wan_risk_protected_paths_srlg_disjoint_random) {
  fs__rng rng;
  fs__rng_seed(&rng, 46);
  int32_t checked = 0;
  for (int trial = 0; trial < 12; trial++) {
    int32_t group[21];
    char *text = nsfnet(&rng, 1 + trial % 5, group);
    fs_wan *w = parse(text);
    free(text);
    if (!w) return;
    fs_wan_risks *r = risks_of(w);
    fs_wan_demand d[30];
    fs_wan_demands_random(w, 30, 100 + 100 * (trial % 3), (uint64_t)trial + 1, d);
    for (int sch = 1; sch <= 2; sch++) {
      fs_err err = {0, ""};
      fs_wan_protect_opts o = {(fs_wan_prot)sch, trial % 2 ? FS_WAN_ROUTE_RISK : FS_WAN_ROUTE_KM, 0, 3};
      fs_wan_pplan *p = NULL;
      CHECK_OK(fs_wan_protect(w, r, d, 30, &o, &p, &err), &err);
      if (!p) continue;
      CHECK_OK(fs_wan_pplan_check(p, &err), &err);
      for (int32_t i = 0; i < 30; i++) {
        const fs_wan_pdemand *pd = &p->d[i];
        if (pd->status != FS_WAN_OK) continue;
        /* risks of a fibre: its group, else itself (21 + group id) */
        uint8_t seen[64];
        memset(seen, 0, sizeof(seen));
        for (int32_t h = 0; h < pd->work.path.hops; h++) {
          int32_t f = pd->work.path.fibres[h];
          seen[group[f] >= 0 ? 21 + group[f] : f] = 1;
        }
        for (int32_t h = 0; h < pd->backup.path.hops; h++) {
          int32_t f = pd->backup.path.fibres[h];
          CHECK(!seen[group[f] >= 0 ? 21 + group[f] : f]);
        }
        CHECK(pd->backup.path.hops > 0);
        checked++;
      }
      fs_wan_pplan_free(p);
    }
    fs_wan_risks_free(r);
    fs_wan_free(w);
  }
  CHECK(checked > 300);
}

TEST(test_wan_risk_spectrum_ordering_nsfnet) {
  /* none <= SBPP <= 1+1 in cells held, with nothing blocked; per demand
   * none's availability <= SBPP's <= 1+1's where the working paths agree */
  fs__rng rng;
  fs__rng_seed(&rng, 3);
  int32_t group[21];
  char *text = nsfnet(&rng, 3, group);
  fs_wan *w = parse(text);
  free(text);
  if (!w) return;
  fs_wan_risks *r = risks_of(w);
  fs_wan_demand d[24];
  fs_wan_demands_random(w, 24, 200, 11, d);
  fs_wan_pplan *p[3] = {NULL, NULL, NULL};
  fs_err err = {0, ""};
  for (int s = 0; s < 3; s++) {
    fs_wan_protect_opts o = {(fs_wan_prot)s, FS_WAN_ROUTE_KM, 0, 3};
    CHECK_OK(fs_wan_protect(w, r, d, 24, &o, &p[s], &err), &err);
  }
  if (p[0] && p[1] && p[2]) {
    CHECK_EQ_INT(p[0]->blocked, 0);
    CHECK_EQ_INT(p[1]->blocked, p[2]->blocked);
    CHECK(p[0]->cells_used < p[2]->cells_used);
    CHECK(p[2]->cells_used < p[1]->cells_used); /* some sharing happens */
    CHECK_EQ_INT(p[1]->cells_backup, p[2]->cells_backup); /* same routes, first-fit */
    for (int32_t i = 0; i < 24; i++) {
      if (p[1]->d[i].status != FS_WAN_OK) continue;
      CHECK(p[2]->d[i].availability <= p[1]->d[i].availability + 1e-15);
      if (p[0]->d[i].work.path.km == p[1]->d[i].work.path.km)
        CHECK(p[0]->d[i].availability <= p[2]->d[i].availability + 1e-15);
    }
  }
  for (int s = 0; s < 3; s++) fs_wan_pplan_free(p[s]);
  fs_wan_risks_free(r);
  fs_wan_free(w);
}

TEST(test_wan_risk_1p1_survives_every_single_srlg) {
  fs_wan *w = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_wan_from_file("examples/wan-nsfnet-srlg.json", &w, &err), &err);
  if (!w) return;
  fs_wan_risks *r = risks_of(w);
  int32_t nj = fs_wan_job_demands(w, NULL, 0), n = w->n_demands + nj;
  fs_wan_demand *d = calloc((size_t)n, sizeof(*d));
  memcpy(d, w->demands, (size_t)w->n_demands * sizeof(*d));
  fs_wan_job_demands(w, d + w->n_demands, nj);
  fs_wan_protect_opts o = {FS_WAN_PROT_1P1, FS_WAN_ROUTE_KM, 0, 3};
  fs_wan_pplan *p = NULL;
  CHECK_OK(fs_wan_protect(w, r, d, n, &o, &p, &err), &err);
  for (int32_t k = 0; p && k < r->n; k++) {
    int32_t failed[32], nf = 0;
    for (int32_t f = 0; f < w->n_fibres; f++)
      for (int32_t j = r->fibre_start[f]; j < r->fibre_start[f + 1]; j++)
        if (r->fibre_risk[j] == k) failed[nf++] = f;
    fs_wan_failure_result fr;
    CHECK_OK(fs_wan_fail(p, failed, nf, &fr, &err), &err);
    CHECK_EQ_INT(fr.lost, 0);
    CHECK_EQ_INT(fr.survived, fr.affected);
    CHECK(fr.job_connected);
    if (fr.after) CHECK_OK(fs_wan_plan_check(fr.after, &err), &err);
    fs_wan_plan_free(fr.after);
  }
  fs_wan_pplan_free(p);
  free(d);
  fs_wan_risks_free(r);
  fs_wan_free(w);
}

TEST(test_wan_risk_bad_input_names_path_and_value) {
  static const char *head =
      "{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}, {\"name\": \"C\"}],"
      " \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 10}, {\"a\": \"B\", \"b\": \"C\", \"km\": 10}], %s}";
  static const struct {
    const char *extra, *want1, *want2;
  } cases[] = {
      {"\"srlgs\": [{\"name\": \"g\", \"fibres\": [\"A-C\"]}]", "$.srlgs[0].fibres[0]", "A-C"},
      {"\"srlgs\": [{\"name\": \"g\", \"fibres\": [\"A-B\", \"B-A\"]}]", "$.srlgs[0].fibres[1]", "B-A"},
      {"\"srlgs\": [{\"name\": \"g\", \"fibres\": []}]", "$.srlgs[0].fibres", "non-empty"},
      {"\"srlgs\": [{\"name\": \"g\", \"fibres\": [\"A-B\"]}, {\"name\": \"g\", \"fibres\": [\"B-C\"]}]",
       "$.srlgs[1].name", "duplicate"},
      {"\"srlgs\": [{\"name\": \"g\", \"fibres\": [\"A-B\"], \"km\": -5}]", "$.srlgs[0].km", "-5"},
      {"\"reliability\": {\"cuts_per_1000km_year\": -1}", "$.reliability.cuts_per_1000km_year", "-1"},
      {"\"reliability\": {\"repair_hours\": 0}", "$.reliability.repair_hours", "0"},
      {"\"reliability\": {\"bogus\": 1}", "$.reliability.bogus", "bogus"},
      {"\"protection\": \"2+1\"", "$.protection", "2+1"},
      {"\"checkpoint_minutes\": -3", "$.checkpoint_minutes", "-3"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char text[1024];
    snprintf(text, sizeof(text), head, cases[i].extra);
    fs_wan *w = NULL;
    fs_err err = {0, ""};
    CHECK_EQ_INT(fs_wan_from_json(text, "bad.json", &w, &err), FS_EINVAL);
    CHECK(w == NULL);
    if (!strstr(err.msg, cases[i].want1) || !strstr(err.msg, cases[i].want2) ||
        !strstr(err.msg, "bad.json"))
      test_fail(__FILE__, __LINE__, "case %zu: message '%s' lacks '%s' or '%s'", i, err.msg,
                cases[i].want1, cases[i].want2);
  }
}
