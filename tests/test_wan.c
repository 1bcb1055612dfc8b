/* Tests of the optical WAN (wan.h): spectrum invariants on random demand
 * sets checked by an oracle written here (not fs_wan_plan_check alone),
 * hand-worked first-fit / most-used examples, Yen against brute-force
 * enumeration, blocking, the modulation table, the cross-site all-reduce
 * against its closed form, fibre-cut restoration, slices and the CLI. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/base/base.h"
#include "fabricsim/wan.h"
#include "test.h"

static fs_wan *wan_parse(const char *text) {
  fs_wan *w = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_wan_from_json(text, "test.json", &w, &err), &err);
  return w;
}

static fs_wan_plan *prov(const fs_wan *w, const fs_wan_demand *d, int32_t n, fs_wan_algo algo,
                         int32_t k) {
  fs_wan_prov_opts o = {algo, k, -1};
  fs_wan_plan *p = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_wan_provision(w, d, n, &o, &p, &err), &err);
  return p;
}

/* The oracle: every unit of every fibre used at most once, every
 * lightpath a walk along fibres from its demand's src to dst, holding the
 * same adjacent units on each of its fibres (the owner table agrees),
 * enough units for its rate, in reach, and served demands fully carried. */
static void oracle(const fs_wan_plan *p) {
  const fs_wan *w = p->w;
  int32_t U = w->grid.units;
  int32_t *cnt = calloc((size_t)w->n_fibres * U, sizeof(int32_t));
  for (int32_t j = 0; j < p->n_lps; j++) {
    const fs_wan_lightpath *lp = &p->lps[j];
    const fs_wan_demand *d = &p->demands[lp->demand];
    CHECK(lp->path.nodes[0] == d->src && lp->path.nodes[lp->path.hops] == d->dst);
    double km = 0;
    for (int32_t i = 0; i < lp->path.hops; i++) {
      const fs_wan_fibre *f = &w->fibres[lp->path.fibres[i]];
      CHECK((f->a == lp->path.nodes[i] && f->b == lp->path.nodes[i + 1]) ||
            (f->b == lp->path.nodes[i] && f->a == lp->path.nodes[i + 1]));
      km += f->km;
      for (int32_t u = lp->first; u < lp->first + lp->count; u++) {
        cnt[(size_t)lp->path.fibres[i] * U + u]++;
        CHECK_EQ_INT(p->owner[(size_t)lp->path.fibres[i] * U + u], j);
      }
    }
    CHECK(w->mods[lp->mod].reach_km >= km);
    CHECK(fs_wan_mod_for_km(w, km) == lp->mod);
    double unit = fs_wan_unit_gbps(w, lp->mod);
    if (w->grid.kind == FS_WAN_FIXED) {
      CHECK_EQ_INT(lp->count, 1);
    } else {
      CHECK_EQ_INT(lp->count - lp->guard, (int64_t)ceil(d->gbps / unit - 1e-9));
      CHECK_EQ_INT(lp->guard, w->grid.guard);
    }
  }
  for (size_t i = 0; i < (size_t)w->n_fibres * U; i++) {
    CHECK(cnt[i] <= 1);
    CHECK((cnt[i] == 1) == (p->owner[i] >= 0));
  }
  for (int32_t di = 0; di < p->n_demands; di++) {
    double sum = 0;
    for (int32_t j = p->lp_first[di]; j < p->lp_first[di] + p->lp_n[di]; j++) sum += p->lps[j].gbps;
    if (p->status[di] == FS_WAN_OK) CHECK_REL(sum, p->demands[di].gbps, 1e-9, "Gb/s");
    else CHECK_EQ_INT(p->lp_n[di], 0);
  }
  free(cnt);
  fs_err err = {0, ""};
  CHECK_OK(fs_wan_plan_check(p, &err), &err);
}

/* A random connected graph: a ring of n sites plus `chords` random extra
 * fibres, km in [lo, hi] (integers). Returns malloc'd JSON; extra is
 * appended inside the top-level object. */
static char *random_wan(fs__rng *r, int32_t n, int32_t chords, int32_t lo, int32_t hi,
                        const char *grid, const char *extra) {
  size_t cap = 65536, len = 0;
  char *s = malloc(cap);
  int e[64][64];
  memset(e, 0, sizeof(e));
  len += (size_t)snprintf(s + len, cap - len, "{\"sites\": [");
  for (int32_t i = 0; i < n; i++)
    len += (size_t)snprintf(s + len, cap - len, "%s{\"name\": \"s%d\"}", i ? ", " : "", i);
  len += (size_t)snprintf(s + len, cap - len, "], \"fibres\": [");
  int first = 1;
  for (int32_t i = 0; i < n; i++) {
    int32_t a = i, b = (i + 1) % n;
    if (e[a][b]) continue;
    e[a][b] = e[b][a] = 1;
    len += (size_t)snprintf(s + len, cap - len, "%s{\"a\": \"s%d\", \"b\": \"s%d\", \"km\": %d}",
                            first ? "" : ", ", a, b, lo + (int)fs__rng_below(r, (uint64_t)(hi - lo + 1)));
    first = 0;
  }
  for (int32_t c = 0; c < chords; c++) {
    int32_t a = (int32_t)fs__rng_below(r, (uint64_t)n), b = (int32_t)fs__rng_below(r, (uint64_t)n);
    if (a == b || e[a][b]) continue;
    e[a][b] = e[b][a] = 1;
    len += (size_t)snprintf(s + len, cap - len, ", {\"a\": \"s%d\", \"b\": \"s%d\", \"km\": %d}", a,
                            b, lo + (int)fs__rng_below(r, (uint64_t)(hi - lo + 1)));
  }
  len += (size_t)snprintf(s + len, cap - len, "], \"grid\": %s%s}", grid, extra);
  return s;
}

TEST(test_wan_no_unit_used_twice_random) {
  fs__rng r;
  fs__rng_seed(&r, 7);
  static const char *const grids[] = {
      "{\"type\": \"fixed\", \"wavelengths\": 8, \"gbps\": 400}",
      "{\"type\": \"flex\", \"slots\": 40, \"slot_ghz\": 12.5, \"guard_slots\": 1}",
      "{\"type\": \"flex\", \"slots\": 24, \"slot_ghz\": 12.5, \"guard_slots\": 0}"};
  int blocked_seen = 0, served_seen = 0;
  for (int inst = 0; inst < 12; inst++) {
    char *js = random_wan(&r, 5 + inst % 4, 4, 100, 1500, grids[inst % 3], "");
    fs_wan *w = wan_parse(js);
    free(js);
    if (!w) continue;
    fs_wan_demand d[60];
    for (int i = 0; i < 60; i++) {
      d[i].src = (int32_t)fs__rng_below(&r, (uint64_t)w->n_sites);
      d[i].dst = (int32_t)fs__rng_below(&r, (uint64_t)w->n_sites - 1);
      if (d[i].dst >= d[i].src) d[i].dst++;
      d[i].gbps = 50.0 * (double)(1 + fs__rng_below(&r, 16));
      d[i].slice = -1;
      d[i].job = 0;
    }
    for (int algo = 0; algo < 2; algo++)
      for (int32_t k = 1; k <= 3; k += 2) {
        fs_wan_plan *p = prov(w, d, 60, (fs_wan_algo)algo, k);
        if (!p) continue;
        oracle(p);
        blocked_seen += p->blocked > 0;
        served_seen += p->blocked < p->n_demands;
        fs_wan_plan_free(p);
      }
    fs_wan_free(w);
  }
  /* the instances exercise both outcomes */
  CHECK(blocked_seen > 0);
  CHECK(served_seen > 0);
}

/* fs_wan_demands_random (wan provision --random): distinct sites in
 * range, the rate asked, not the job's; the same seed gives the same
 * demands, another seed others; over 1,200 draws on 4 sites every ordered
 * pair turns up (each is 1/12 likely: missing one has odds ~1e-43). */
TEST(test_wan_demands_random) {
  fs_wan *w = wan_parse(
      "{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}, {\"name\": \"C\"}, {\"name\": \"D\"}],"
      " \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 100}, {\"a\": \"B\", \"b\": \"C\", \"km\": 100},"
      " {\"a\": \"C\", \"b\": \"D\", \"km\": 100}],"
      " \"grid\": {\"type\": \"fixed\", \"wavelengths\": 3, \"gbps\": 400}}");
  if (!w) return;
  enum { N = 1200 };
  fs_wan_demand *a = calloc(N, sizeof(*a)), *b = calloc(N, sizeof(*b));
  int seen[4][4] = {{0}};
  fs_wan_demands_random(w, N, 25, 9, a);
  for (int i = 0; i < N; i++) {
    CHECK(a[i].src >= 0 && a[i].src < 4 && a[i].dst >= 0 && a[i].dst < 4);
    CHECK(a[i].src != a[i].dst);
    CHECK_EQ_INT(a[i].slice, -1);
    CHECK_EQ_INT(a[i].job, 0);
    CHECK(a[i].gbps == 25);
    if (a[i].src >= 0 && a[i].src < 4 && a[i].dst >= 0 && a[i].dst < 4)
      seen[a[i].src][a[i].dst]++;
  }
  for (int s = 0; s < 4; s++)
    for (int d = 0; d < 4; d++) CHECK(s == d ? seen[s][d] == 0 : seen[s][d] > 0);
  fs_wan_demands_random(w, N, 25, 9, b);
  CHECK(memcmp(a, b, N * sizeof(*a)) == 0);
  fs_wan_demands_random(w, N, 25, 10, b);
  int differ = 0;
  for (int i = 0; i < N; i++) differ += a[i].src != b[i].src || a[i].dst != b[i].dst;
  CHECK(differ > 0);
  free(a);
  free(b);
  fs_wan_free(w);
}

/* The checker catches a unit held twice and a broken continuity. */
TEST(test_wan_plan_check_catches_injected_bugs) {
  fs_wan *w = wan_parse(
      "{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}, {\"name\": \"C\"}],"
      " \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 100}, {\"a\": \"B\", \"b\": \"C\", \"km\": 100}],"
      " \"grid\": {\"type\": \"fixed\", \"wavelengths\": 4, \"gbps\": 400}}");
  fs_wan_demand d[2] = {{0, 2, 400, -1, 0}, {0, 1, 400, -1, 0}};
  fs_wan_plan *p = prov(w, d, 2, FS_WAN_FIRST_FIT, 1);
  fs_err err = {0, ""};
  CHECK_OK(fs_wan_plan_check(p, &err), &err);
  /* lightpath 1 (A-B) moved onto lightpath 0's wavelength: used twice */
  int32_t U = w->grid.units, f_ab = fs_wan_fibre_find(w, 0, 1);
  p->owner[(size_t)f_ab * U + p->lps[1].first] = -1;
  p->lps[1].first = p->lps[0].first;
  CHECK(fs_wan_plan_check(p, &err) == FS_EINTERNAL);
  fs_wan_plan_free(p);
  /* continuity: on the second fibre the unit is another one */
  p = prov(w, d, 1, FS_WAN_FIRST_FIT, 1);
  int32_t f_bc = fs_wan_fibre_find(w, 1, 2);
  p->owner[(size_t)f_bc * U + 0] = -1;
  p->owner[(size_t)f_bc * U + 1] = 0;
  CHECK(fs_wan_plan_check(p, &err) == FS_EINTERNAL);
  fs_wan_plan_free(p);
  fs_wan_free(w);
}

/* Hand-worked first-fit on a 4-site ring A-B-C-D-A, 100 km per fibre, 3
 * wavelengths of 400G (16QAM reaches 500 km: one wavelength per demand),
 * shortest path (k = 1; ties to fewer hops, then lower site ids):
 *   1. A-C  on A>B>C : w0 (lowest free on AB and BC)
 *   2. B-D  on B>A>D : w1 (w0 busy on AB)
 *   3. C-D  on C>D   : w0
 *   4. A-B  on A>B   : w2 (w0, w1 busy on AB)
 *   5. A-B  blocked with k = 1; with k = 2 on A>D>C>B: w2 (AD holds w1,
 *      DC and CB hold w0). */
TEST(test_wan_first_fit_ring_textbook) {
  fs_wan *w = wan_parse(
      "{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}, {\"name\": \"C\"}, {\"name\": \"D\"}],"
      " \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 100}, {\"a\": \"B\", \"b\": \"C\", \"km\": 100},"
      " {\"a\": \"C\", \"b\": \"D\", \"km\": 100}, {\"a\": \"D\", \"b\": \"A\", \"km\": 100}],"
      " \"grid\": {\"type\": \"fixed\", \"wavelengths\": 3, \"gbps\": 400}}");
  fs_wan_demand d[5] = {{0, 2, 400, -1, 0}, {1, 3, 400, -1, 0}, {2, 3, 400, -1, 0},
                        {0, 1, 400, -1, 0}, {0, 1, 400, -1, 0}};
  static const int32_t want_w[4] = {0, 1, 0, 2};
  static const int32_t want_nodes[4][3] = {{0, 1, 2}, {1, 0, 3}, {2, 3, -1}, {0, 1, -1}};
  for (int32_t k = 1; k <= 2; k++) {
    fs_wan_plan *p = prov(w, d, 5, FS_WAN_FIRST_FIT, k);
    for (int i = 0; i < 4; i++) {
      CHECK_EQ_INT(p->status[i], FS_WAN_OK);
      const fs_wan_lightpath *lp = &p->lps[p->lp_first[i]];
      CHECK_EQ_INT(lp->first, want_w[i]);
      for (int h = 0; h < 3 && want_nodes[i][h] >= 0; h++) CHECK_EQ_INT(lp->path.nodes[h], want_nodes[i][h]);
      CHECK_EQ_INT(lp->path.hops, want_nodes[i][2] >= 0 ? 2 : 1);
      CHECK(strcmp(w->mods[lp->mod].name, "16QAM") == 0);
    }
    if (k == 1) {
      CHECK_EQ_INT(p->status[4], FS_WAN_BLOCKED_SPECTRUM);
      CHECK_EQ_INT(p->blocked, 1);
    } else {
      CHECK_EQ_INT(p->status[4], FS_WAN_OK);
      const fs_wan_lightpath *lp = &p->lps[p->lp_first[4]];
      CHECK_EQ_INT(lp->first, 2);
      CHECK_EQ_INT(lp->path.hops, 3);
      static const int32_t nodes[4] = {0, 3, 2, 1};
      for (int h = 0; h < 4; h++) CHECK_EQ_INT(lp->path.nodes[h], nodes[h]);
      CHECK_REL(lp->path.km, 300, 1e-12, "km");
    }
    oracle(p);
    fs_wan_plan_free(p);
  }
  fs_wan_free(w);
}

/* First-fit and most-used differ: fibres A-B, B-C and a separate D-E, 2
 * wavelengths. A-B takes w0 and A-C (A>B>C) w1 under both; then w0 is
 * held on one fibre, w1 on two, so D-E gets w0 by first-fit and w1 by
 * most-used (Zang, Jue and Mukherjee 2000's definitions). */
TEST(test_wan_first_fit_vs_most_used) {
  fs_wan *w = wan_parse(
      "{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}, {\"name\": \"C\"}, {\"name\": \"D\"},"
      " {\"name\": \"E\"}], \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 100},"
      " {\"a\": \"B\", \"b\": \"C\", \"km\": 100}, {\"a\": \"D\", \"b\": \"E\", \"km\": 100}],"
      " \"grid\": {\"type\": \"fixed\", \"wavelengths\": 2, \"gbps\": 400}}");
  fs_wan_demand d[3] = {{0, 1, 400, -1, 0}, {0, 2, 400, -1, 0}, {3, 4, 400, -1, 0}};
  fs_wan_plan *ff = prov(w, d, 3, FS_WAN_FIRST_FIT, 1);
  fs_wan_plan *mu = prov(w, d, 3, FS_WAN_MOST_USED, 1);
  CHECK_EQ_INT(ff->lps[0].first, 0);
  CHECK_EQ_INT(ff->lps[1].first, 1);
  CHECK_EQ_INT(ff->lps[2].first, 0);
  CHECK_EQ_INT(mu->lps[0].first, 0);
  CHECK_EQ_INT(mu->lps[1].first, 1);
  CHECK_EQ_INT(mu->lps[2].first, 1);
  oracle(ff);
  oracle(mu);
  fs_wan_plan_free(ff);
  fs_wan_plan_free(mu);
  /* flexgrid: most-used picks the block whose slots are held the most */
  fs_wan *f = wan_parse(
      "{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}, {\"name\": \"C\"}, {\"name\": \"D\"},"
      " {\"name\": \"E\"}], \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 100},"
      " {\"a\": \"B\", \"b\": \"C\", \"km\": 100}, {\"a\": \"D\", \"b\": \"E\", \"km\": 100}],"
      " \"grid\": {\"type\": \"flex\", \"slots\": 6, \"guard_slots\": 0}}");
  /* 100G at 16QAM = 2 slots: A-B s0-1, A-C s2-3 (on AB and BC); D-E:
   * first-fit s0-1 (usage 1+1), most-used s2-3 (usage 2+2). */
  fs_wan_demand e[3] = {{0, 1, 100, -1, 0}, {0, 2, 100, -1, 0}, {3, 4, 100, -1, 0}};
  ff = prov(f, e, 3, FS_WAN_FIRST_FIT, 1);
  mu = prov(f, e, 3, FS_WAN_MOST_USED, 1);
  CHECK_EQ_INT(ff->lps[1].first, 2);
  CHECK_EQ_INT(ff->lps[2].first, 0);
  CHECK_EQ_INT(mu->lps[2].first, 2);
  oracle(ff);
  oracle(mu);
  fs_wan_plan_free(ff);
  fs_wan_plan_free(mu);
  fs_wan_free(f);
  fs_wan_free(w);
}

/* Flexgrid by hand on a line A-B-C (100 km fibres, 10 slots, no guard,
 * 16QAM: 50 Gb/s per slot): A-B 100G s0-1; B-C 150G s0-2; A-C 100G needs
 * 2 slots free on both fibres (continuity) and adjacent (contiguity):
 * s3-4; A-B 200G: s5-8 (slot 2 alone is too small); B-C 250G: s5-9; A-C
 * 50G: AB has slots 2 and 9 free, BC none: blocked. */
TEST(test_wan_flex_first_fit_contiguity_continuity) {
  fs_wan *w = wan_parse(
      "{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}, {\"name\": \"C\"}],"
      " \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 100}, {\"a\": \"B\", \"b\": \"C\", \"km\": 100}],"
      " \"grid\": {\"type\": \"flex\", \"slots\": 10, \"slot_ghz\": 12.5, \"guard_slots\": 0}}");
  fs_wan_demand d[6] = {{0, 1, 100, -1, 0}, {1, 2, 150, -1, 0}, {0, 2, 100, -1, 0},
                        {0, 1, 200, -1, 0}, {1, 2, 250, -1, 0}, {0, 2, 50, -1, 0}};
  static const int32_t first[5] = {0, 0, 3, 5, 5}, count[5] = {2, 3, 2, 4, 5};
  fs_wan_plan *p = prov(w, d, 6, FS_WAN_FIRST_FIT, 1);
  for (int i = 0; i < 5; i++) {
    CHECK_EQ_INT(p->status[i], FS_WAN_OK);
    CHECK_EQ_INT(p->lps[p->lp_first[i]].first, first[i]);
    CHECK_EQ_INT(p->lps[p->lp_first[i]].count, count[i]);
  }
  CHECK_EQ_INT(p->status[5], FS_WAN_BLOCKED_SPECTRUM);
  oracle(p);
  fs_wan_plan_free(p);
  fs_wan_free(w);
}

/* Brute force: every simple path by DFS, lengths sorted. */
static void dfs(const fs_wan *w, int32_t v, int32_t dst, double km, int *on, double *out, int *n) {
  if (v == dst) {
    out[(*n)++] = km;
    return;
  }
  on[v] = 1;
  for (int32_t f = 0; f < w->n_fibres; f++) {
    int32_t u = w->fibres[f].a == v ? w->fibres[f].b : w->fibres[f].b == v ? w->fibres[f].a : -1;
    if (u >= 0 && !on[u]) dfs(w, u, dst, km + w->fibres[f].km, on, out, n);
  }
  on[v] = 0;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

TEST(test_wan_yen_matches_brute_force) {
  fs__rng r;
  fs__rng_seed(&r, 11);
  static double all[100000];
  int checked = 0;
  for (int inst = 0; inst < 10; inst++) {
    /* small integer lengths: many ties */
    char *js = random_wan(&r, 5 + inst % 3, 6, 1, 6,
                          "{\"type\": \"fixed\", \"wavelengths\": 2, \"gbps\": 400}", "");
    fs_wan *w = wan_parse(js);
    free(js);
    for (int32_t s = 0; s < w->n_sites; s++)
      for (int32_t t = 0; t < w->n_sites; t++) {
        if (s == t) continue;
        int on[64] = {0}, n = 0;
        dfs(w, s, t, 0, on, all, &n);
        qsort(all, (size_t)n, sizeof(double), cmp_dbl);
        int32_t k = 6, np = 0;
        fs_wan_path *ps = NULL;
        fs_err err = {0, ""};
        CHECK_OK(fs_wan_k_shortest(w, s, t, k, -1, &ps, &np, &err), &err);
        CHECK_EQ_INT(np, n < k ? n : k);
        for (int32_t i = 0; i < np; i++) {
          CHECK_REL(ps[i].km, all[i], 1e-12, "km");
          CHECK(ps[i].nodes[0] == s && ps[i].nodes[ps[i].hops] == t);
          for (int32_t a = 0; a <= ps[i].hops; a++)
            for (int32_t b = 0; b < a; b++) CHECK(ps[i].nodes[a] != ps[i].nodes[b]);
          for (int32_t j = 0; j < i; j++)
            CHECK(ps[i].hops != ps[j].hops ||
                  memcmp(ps[i].nodes, ps[j].nodes, sizeof(int32_t) * (size_t)(ps[i].hops + 1)) != 0);
        }
        fs_wan_paths_free(ps, np);
        checked++;
      }
    fs_wan_free(w);
  }
  CHECK(checked > 200);
}

TEST(test_wan_blocking_when_spectrum_runs_out) {
  /* 4 wavelengths: the fifth and sixth 400G demands are blocked */
  fs_wan *w = wan_parse(
      "{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}],"
      " \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 100}],"
      " \"grid\": {\"type\": \"fixed\", \"wavelengths\": 4, \"gbps\": 400}}");
  fs_wan_demand d[6];
  for (int i = 0; i < 6; i++) d[i] = (fs_wan_demand){0, 1, 400, -1, 0};
  fs_wan_plan *p = prov(w, d, 6, FS_WAN_FIRST_FIT, 3);
  for (int i = 0; i < 4; i++) CHECK_EQ_INT(p->lps[p->lp_first[i]].first, i);
  CHECK_EQ_INT(p->status[4], FS_WAN_BLOCKED_SPECTRUM);
  CHECK_EQ_INT(p->status[5], FS_WAN_BLOCKED_SPECTRUM);
  CHECK_EQ_INT(p->blocked, 2);
  CHECK_REL(p->blocked_gbps / p->offered_gbps, 2.0 / 6, 1e-12, "");
  oracle(p);
  fs_wan_plan_free(p);
  /* a 1000G demand needs 3 wavelengths: all or nothing */
  fs_wan_demand big[2] = {{0, 1, 1000, -1, 0}, {0, 1, 1000, -1, 0}};
  p = prov(w, big, 2, FS_WAN_FIRST_FIT, 1);
  CHECK_EQ_INT(p->status[0], FS_WAN_OK);
  CHECK_EQ_INT(p->lp_n[0], 3);
  CHECK_REL(p->lps[2].gbps, 200, 1e-12, "Gb/s");
  CHECK_EQ_INT(p->status[1], FS_WAN_BLOCKED_SPECTRUM);
  CHECK_EQ_INT(p->n_lps, 3);
  oracle(p);
  fs_wan_plan_free(p);
  fs_wan_free(w);
  /* flexgrid, 8 slots, guard 1: 100G at 16QAM = 2 + 1 slots; two fit */
  w = wan_parse(
      "{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}],"
      " \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 100}],"
      " \"grid\": {\"type\": \"flex\", \"slots\": 8, \"guard_slots\": 1}}");
  fs_wan_demand e[3] = {{0, 1, 100, -1, 0}, {0, 1, 100, -1, 0}, {0, 1, 100, -1, 0}};
  p = prov(w, e, 3, FS_WAN_MOST_USED, 1);
  CHECK_EQ_INT(p->lps[0].first, 0);
  CHECK_EQ_INT(p->lps[1].first, 3);
  CHECK_EQ_INT(p->status[2], FS_WAN_BLOCKED_SPECTRUM);
  oracle(p);
  fs_wan_plan_free(p);
  fs_wan_free(w);
}

TEST(test_wan_modulation_by_distance) {
  fs_wan *w = wan_parse(
      "{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}, {\"name\": \"C\"}],"
      " \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 1500}, {\"a\": \"B\", \"b\": \"C\", \"km\": 3000}]}");
  /* default table: 16QAM 500, 8QAM 1000, QPSK 2000, BPSK 4000 km */
  static const double km[] = {1, 500, 500.5, 1000, 1001, 2000, 2001, 4000, 4000.1};
  static const char *const want[] = {"16QAM", "16QAM", "8QAM", "8QAM", "QPSK",
                                     "QPSK",  "BPSK",  "BPSK", NULL};
  for (int i = 0; i < 9; i++) {
    int32_t m = fs_wan_mod_for_km(w, km[i]);
    if (!want[i]) CHECK_EQ_INT(m, -1);
    else CHECK(m >= 0 && strcmp(w->mods[m].name, want[i]) == 0);
  }
  /* fixed grid at 400G with 16QAM: QPSK carries 200G, BPSK 100G */
  CHECK_REL(fs_wan_unit_gbps(w, fs_wan_mod_for_km(w, 1500)), 200, 1e-12, "Gb/s");
  CHECK_REL(fs_wan_unit_gbps(w, fs_wan_mod_for_km(w, 3000)), 100, 1e-12, "Gb/s");
  fs_wan_demand d[3] = {{0, 1, 400, -1, 0}, {1, 2, 400, -1, 0}, {0, 2, 100, -1, 0}};
  fs_wan_plan *p = prov(w, d, 3, FS_WAN_FIRST_FIT, 3);
  CHECK_EQ_INT(p->lp_n[0], 2); /* 1500 km: QPSK, 2 x 200G */
  CHECK_EQ_INT(p->lp_n[1], 4); /* 3000 km: BPSK, 4 x 100G */
  CHECK_EQ_INT(p->status[2], FS_WAN_BLOCKED_REACH); /* 4500 km: beyond BPSK */
  oracle(p);
  fs_wan_plan_free(p);
  fs_wan_free(w);
  /* flexgrid: slots = ceil(rate / (12.5 GHz x bits)) */
  w = wan_parse(
      "{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}],"
      " \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 1500}],"
      " \"grid\": {\"type\": \"flex\", \"slots\": 64, \"guard_slots\": 1},"
      " \"modulations\": [{\"name\": \"QPSK\", \"bits\": 2, \"reach_km\": 2000},"
      " {\"name\": \"16QAM\", \"bits\": 4, \"reach_km\": 800}]}");
  fs_wan_demand e[1] = {{0, 1, 100, -1, 0}};
  p = prov(w, e, 1, FS_WAN_FIRST_FIT, 1);
  CHECK_EQ_INT(p->lps[0].count, 4 + 1); /* 100 / 25 + guard */
  CHECK(strcmp(w->mods[p->lps[0].mod].name, "QPSK") == 0);
  fs_wan_plan_free(p);
  fs_wan_free(w);
}

/* Slices: wavelengths 0-1 belong to the job; other demands never use
 * them even when the rest runs out, the job's demands use only them. */
TEST(test_wan_slice_is_dedicated) {
  fs_wan *w = wan_parse(
      "{\"sites\": [{\"name\": \"A\", \"gpus\": 1}, {\"name\": \"B\", \"gpus\": 1}],"
      " \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 100}],"
      " \"grid\": {\"type\": \"fixed\", \"wavelengths\": 4, \"gbps\": 400},"
      " \"slices\": [{\"name\": \"train\", \"first\": 0, \"count\": 2}],"
      " \"job\": {\"gbps\": 800, \"slice\": \"train\"}}");
  fs_wan_demand d[5] = {{0, 1, 400, -1, 0}, {0, 1, 400, -1, 0}, {0, 1, 400, -1, 0}};
  CHECK_EQ_INT(fs_wan_job_demands(w, d + 3, 2), 1);
  d[4] = d[3];
  fs_wan_plan *p = prov(w, d, 5, FS_WAN_FIRST_FIT, 1);
  CHECK_EQ_INT(p->lps[p->lp_first[0]].first, 2);
  CHECK_EQ_INT(p->lps[p->lp_first[1]].first, 3);
  CHECK_EQ_INT(p->status[2], FS_WAN_BLOCKED_SPECTRUM);
  CHECK_EQ_INT(p->status[3], FS_WAN_OK);
  CHECK_EQ_INT(p->lp_n[3], 2);
  CHECK_EQ_INT(p->lps[p->lp_first[3]].first, 0);
  CHECK_EQ_INT(p->lps[p->lp_first[3] + 1].first, 1);
  CHECK_EQ_INT(p->status[4], FS_WAN_BLOCKED_SPECTRUM);
  oracle(p);
  fs_wan_plan_free(p);
  fs_wan_free(w);
}

static fs_wan_plan *prov_job(const fs_wan *w, fs_wan_algo algo, int32_t k) {
  fs_wan_demand d[256];
  int32_t n = w->n_demands;
  if (n) memcpy(d, w->demands, (size_t)n * sizeof(*d));
  n += fs_wan_job_demands(w, d + n, 256 - n);
  return prov(w, d, n, algo, k);
}

/* The hierarchical all-reduce on an uncongested setup equals the closed
 * form written out here: (g-1)(a_s + n/g b_s) twice plus
 * 2(S-1)(a_w + n/(gS) b_w), a_s = 2 site links, a_w = a_s + 5 us/km x km,
 * b_w = 1 / min(GPU link, WAN / g). */
TEST(test_wan_cross_site_allreduce_closed_form) {
  static const struct {
    int sites, gpus;
    double km, job_gbps;
  } cases[] = {{3, 4, 100, 800}, {2, 8, 1200, 1600}, {4, 1, 300, 400}, {3, 2, 50, 4000}};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    char js[4096];
    size_t len = 0;
    int S = cases[c].sites, g = cases[c].gpus;
    len += (size_t)snprintf(js + len, sizeof(js) - len, "{\"sites\": [");
    for (int s = 0; s < S; s++)
      len += (size_t)snprintf(js + len, sizeof(js) - len, "%s{\"name\": \"d%d\", \"gpus\": %d}",
                              s ? ", " : "", s, g);
    len += (size_t)snprintf(js + len, sizeof(js) - len, "], \"fibres\": [");
    int nf = 0;
    /* a full mesh of equal fibres: every ring pair is one hop */
    for (int a = 0; a < S; a++)
      for (int b = a + 1; b < S; b++)
        len += (size_t)snprintf(js + len, sizeof(js) - len,
                                "%s{\"a\": \"d%d\", \"b\": \"d%d\", \"km\": %g}", nf++ ? ", " : "",
                                a, b, cases[c].km);
    len += (size_t)snprintf(js + len, sizeof(js) - len,
                            "], \"job\": {\"gbps\": %g, \"bytes\": 1e9, \"gpu_gbps\": 400,"
                            " \"site_latency_ns\": 700}}",
                            cases[c].job_gbps);
    fs_wan *w = wan_parse(js);
    fs_wan_plan *p = prov_job(w, FS_WAN_FIRST_FIT, 3);
    CHECK_EQ_INT(p->blocked, 0);
    fs_wan_train_result r;
    fs_err err = {0, ""};
    CHECK_OK(fs_wan_train(p, 0, &r, &err), &err);
    double n = 1e9, as = 1400e-9, bs = 8 / 400e9;
    double aw = as + cases[c].km * 5e-6;
    double bw = 8 / fmin(400e9, cases[c].job_gbps * 1e9 / g);
    double site = (g - 1) * (as + n / g * bs);
    double wan = 2.0 * (S - 1) * (aw + n / ((double)g * S) * bw);
    CHECK_REL(r.phase_s[0], site, 1e-9, "s");
    CHECK_REL(r.phase_s[1], wan, 1e-9, "s");
    CHECK_REL(r.phase_s[2], site, 1e-9, "s");
    CHECK_REL(r.total_s, 2 * site + wan, 1e-9, "s");
    CHECK_REL(r.model_total_s, 2 * site + wan, 1e-12, "s");
    CHECK_EQ_INT(r.multihop, 0);
    fs_wan_plan_free(p);
    fs_wan_free(w);
  }
  /* unequal pairs (600, 800, 1300 km; 8QAM and QPSK): the max-plus
   * recurrence of the same alpha-beta steps */
  fs_wan *w = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_wan_from_file("examples/wan-4dc.json", &w, &err), &err);
  if (!w) return;
  fs_wan_plan *p = prov_job(w, FS_WAN_FIRST_FIT, 3);
  fs_wan_train_result r;
  CHECK_OK(fs_wan_train(p, 0, &r, &err), &err);
  CHECK_REL(r.total_s, r.model_total_s, 1e-9, "s");
  CHECK(r.phase_s[1] > 0);
  fs_wan_plan_free(p);
  fs_wan_free(w);
}

/* A fibre cut: restored lightpaths avoid the fibre, keep the invariants,
 * never get a shorter path than before, and the all-reduce never gets
 * faster; random rings with chords, scarce spectrum and background load. */
TEST(test_wan_fibre_cut_restores_and_never_speeds_up) {
  fs__rng r;
  fs__rng_seed(&r, 5);
  static const char *const grids[] = {
      "{\"type\": \"fixed\", \"wavelengths\": 12, \"gbps\": 400}",
      "{\"type\": \"flex\", \"slots\": 96, \"slot_ghz\": 12.5, \"guard_slots\": 1}"};
  int cuts = 0, slower = 0, restored = 0, exact = 0, multi = 0;
  for (int inst = 0; inst < 8; inst++) {
    char extra[1024];
    int32_t n = 5 + inst % 3;
    size_t len = (size_t)snprintf(extra, sizeof(extra), ", \"demands\": [");
    for (int i = 0; i < 6; i++) {
      int a = (int)fs__rng_below(&r, (uint64_t)n), b = (int)fs__rng_below(&r, (uint64_t)n - 1);
      if (b >= a) b++;
      len += (size_t)snprintf(extra + len, sizeof(extra) - len,
                              "%s{\"src\": \"s%d\", \"dst\": \"s%d\", \"gbps\": 400}", i ? ", " : "",
                              a, b);
    }
    snprintf(extra + len, sizeof(extra) - len,
             "], \"job\": {\"gbps\": 800, \"bytes\": 1e8, \"gpus_per_site\": 2}");
    char *js = random_wan(&r, n, 3, 100, 900, grids[inst % 2], extra);
    fs_wan *w = wan_parse(js);
    free(js);
    /* gpus_per_site puts every site in the ring */
    fs_wan_plan *p = prov_job(w, (fs_wan_algo)(inst % 2), 3);
    fs_wan_train_result r0, r1;
    fs_err err = {0, ""};
    CHECK_OK(fs_wan_train(p, 0, &r0, &err), &err);
    for (int32_t cut = 0; cut < w->n_fibres; cut++) {
      fs_wan_plan *q = NULL;
      CHECK_OK(fs_wan_restore(p, cut, &q, &err), &err);
      if (!q) continue;
      oracle(q);
      for (int32_t j = 0; j < q->n_lps; j++)
        for (int32_t h = 0; h < q->lps[j].path.hops; h++) CHECK(q->lps[j].path.fibres[h] != cut);
      for (int32_t di = 0; di < p->n_demands; di++) {
        if (p->status[di] != FS_WAN_OK) CHECK(q->status[di] != FS_WAN_OK);
        if (p->status[di] == FS_WAN_OK && q->status[di] == FS_WAN_OK)
          CHECK(q->lps[q->lp_first[di]].path.km >= p->lps[p->lp_first[di]].path.km);
      }
      restored += q->restored;
      CHECK_OK(fs_wan_train(q, 0, &r1, &err), &err);
      if (r0.connected && r1.connected) {
        CHECK(r1.total_s >= r0.total_s * (1 - 1e-12));
        slower += r1.total_s > r0.total_s * (1 + 1e-9);
      }
      CHECK(r0.connected || !r1.connected);
      /* job cables carry only the job: the alpha-beta model is exact */
      if (r1.connected && !r1.multihop) CHECK_REL(r1.total_s, r1.model_total_s, 1e-9, "s");
      exact += r1.connected && !r1.multihop;
      multi += r1.multihop > 0;
      cuts++;
      fs_wan_plan_free(q);
    }
    fs_wan_plan_free(p);
    fs_wan_free(w);
  }
  CHECK(cuts > 30);
  CHECK(restored > 0);
  CHECK(slower > 0);
  /* both uncongested restorations and blocked pairs routed via sites */
  CHECK(exact >= 10);
  CHECK(multi >= 10);
}


TEST(test_wan_bad_input_names_path_and_value) {
  static const struct {
    const char *text, *want1, *want2;
  } cases[] = {
      {"{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}], \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"kms\": 5}]}",
       "$.fibres[0].kms", "unknown key"},
      {"{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}], \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": -5}]}",
       "$.fibres[0].km", "-5"},
      {"{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}], \"fibres\": [{\"a\": \"A\", \"b\": \"Z\", \"km\": 5}]}",
       "$.fibres[0].b", "\"Z\""},
      {"{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}], \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 5}],"
       " \"grid\": {\"type\": \"elastic\"}}",
       "$.grid.type", "\"elastic\""},
      {"{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}], \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 5},"
       " {\"a\": \"B\", \"b\": \"A\", \"km\": 7}]}",
       "$.fibres[1].b", "duplicate fibre"},
      {"{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}], \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 5}],"
       " \"grid\": {\"type\": \"flex\", \"slots\": 0}}",
       "$.grid.slots", "0"},
      {"{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}], \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 5}],"
       " \"demands\": [{\"src\": \"A\", \"dst\": \"B\", \"gbps\": 10, \"slice\": \"x\"}]}",
       "$.demands[0].slice", "\"x\""},
      {"{\"sites\": [{\"name\": \"A\", \"gpus\": 2}, {\"name\": \"B\", \"gpus\": 4}],"
       " \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 5}], \"job\": {\"gbps\": 100}}",
       "$.sites[1].gpus", "same GPU count"},
      {"{\"sites\": [{\"name\": \"A\"}, {\"name\": \"B\"}], \"fibres\": [{\"a\": \"A\", \"b\": \"B\", \"km\": 5}],"
       " \"wavelengths\": 3}",
       "$.wavelengths", "unknown key"},
  };
  char dir[64], path[128], cmd[256], out[4096];
  snprintf(dir, sizeof(dir), "/tmp/fabricsim-wan-XXXXXX");
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof(path), "%s/bad.json", dir);
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    fs_wan *w = NULL;
    fs_err err = {0, ""};
    CHECK(fs_wan_from_json(cases[i].text, "bad.json", &w, &err) == FS_EINVAL);
    CHECK(w == NULL);
    if (!strstr(err.msg, cases[i].want1) || !strstr(err.msg, cases[i].want2))
      test_fail(__FILE__, __LINE__, "case %zu: message '%s' lacks '%s' or '%s'", i, err.msg,
                cases[i].want1, cases[i].want2);
    CHECK(test_write_file(path, cases[i].text) == 0);
    snprintf(cmd, sizeof(cmd), "wan provision %s", path);
    CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 2);
    CHECK(strstr(out, cases[i].want1) != NULL);
  }
  unlink(path);
  rmdir(dir);
  /* options */
  CHECK_EQ_INT(test_run_cli("wan provision examples/wan-4dc.json --algo best-fit", "2>&1", out,
                            sizeof(out)), 2);
  CHECK(strstr(out, "best-fit") != NULL);
  CHECK_EQ_INT(test_run_cli("wan train examples/wan-4dc.json --cut east-mars", "2>&1", out,
                            sizeof(out)), 2);
  CHECK(strstr(out, "east-mars") != NULL);
  CHECK_EQ_INT(test_run_cli("wan provision examples/wan-4dc.json --k 0", "2>&1", out, sizeof(out)), 2);
  CHECK_EQ_INT(test_run_cli("wan provision /nonexistent.json", "2>&1", out, sizeof(out)), 2);
  CHECK_EQ_INT(test_run_cli("wan train examples/wan-nsfnet-flex.json", "2>&1", out, sizeof(out)), 2);
  CHECK(strstr(out, "$.job") != NULL);
  CHECK_EQ_INT(test_run_cli("wan frobnicate", "2>&1", out, sizeof(out)), 2);
}

TEST(test_wan_cli) {
  char out[65536], again[65536];
  CHECK_EQ_INT(test_run_cli("wan provision examples/wan-4dc.json", "2>&1", out, sizeof(out)), 0);
  CHECK(strstr(out, "east>central") != NULL);
  CHECK(strstr(out, "blocked") != NULL);
  CHECK_EQ_INT(test_run_cli("wan provision examples/wan-nsfnet-flex.json --algo most-used --k 2 "
                            "--format json",
                            "2>&1", out, sizeof(out)),
               0);
  CHECK(strstr(out, "\"blocking_ratio\": ") != NULL);
  CHECK(strstr(out, "\"algo\": \"most-used\"") != NULL);
  CHECK_EQ_INT(test_run_cli("wan train examples/wan-4dc.json --cut east-central --format json",
                            "2>&1", out, sizeof(out)),
               0);
  CHECK(strstr(out, "\"slowdown\": ") != NULL);
  CHECK(strstr(out, "\"model_total_s\": ") != NULL);
  CHECK_EQ_INT(test_run_cli("wan train examples/wan-4dc.json --cut east-central --format json",
                            "2>&1", again, sizeof(again)),
               0);
  CHECK(strcmp(out, again) == 0);
  CHECK_EQ_INT(test_run_cli("wan train examples/wan-4dc.json --cut east-central", "2>&1", out,
                            sizeof(out)),
               0);
  CHECK(strstr(out, "slowdown x") != NULL);
  CHECK(strstr(out, "all-reduce across sites") != NULL);
  CHECK_EQ_INT(test_run_cli("wan provision examples/wan-4dc.json --random 40 --gbps 400 --seed 3",
                            "2>&1", out, sizeof(out)),
               0);
  CHECK_EQ_INT(test_run_cli("wan --help", "2>&1", out, sizeof(out)), 0);
}
