/* Choosing a cross-site job's sites and ring order (wan_place.c): the
 * chosen ring against a hand-computed closed form, never slower than the
 * file's order, the exhaustive search against every order timed here, and
 * the local search's ring made of distinct candidates. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../src/optical/wan_internal.h"
#include "fabricsim/wan.h"
#include "fabricsim/wan_sdm.h"
#include "test.h"

/* Four sites on a cycle of 100 km fibres, listed in the zig-zag order
 * a, c, b, d; one GPU per site (no phase inside sites), 400 Gb/s ring
 * pairs on a fixed grid of 400 Gb/s wavelengths, 1e9 bytes. */
static const char *const square =
    "{\"sites\": [{\"name\": \"a\", \"gpus\": 1}, {\"name\": \"c\", \"gpus\": 1},"
    "             {\"name\": \"b\", \"gpus\": 1}, {\"name\": \"d\", \"gpus\": 1}],"
    " \"fibres\": [{\"a\": \"a\", \"b\": \"b\", \"km\": 100}, {\"a\": \"b\", \"b\": \"c\", \"km\": 100},"
    "              {\"a\": \"c\", \"b\": \"d\", \"km\": 100}, {\"a\": \"d\", \"b\": \"a\", \"km\": 100}],"
    " \"grid\": {\"type\": \"fixed\", \"wavelengths\": 80, \"gbps\": 400},"
    " \"job\": {\"gbps\": 400, \"bytes\": 1e9, \"gpu_gbps\": 400, \"site_latency_ns\": 1000}}";

TEST(test_wan_place_ring_follows_the_fibres) {
  fs_wan *w = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_wan_from_json(square, "square.json", &w, &err), &err);
  if (!w) return;
  fs_wan_prov_opts o = {FS_WAN_FIRST_FIT, 3, -1};
  fs_wan_place_result r;
  CHECK_OK(fs_wan_place_ring(w, 4, &o, &r, &err), &err);
  CHECK(r.exhaustive);
  CHECK_EQ_INT((int)r.evaluated, 1 + 6); /* the baseline, then (4 - 1)! orders */
  /* The ring along the cycle: every pair one 100 km fibre. Closed form
   * with equal pairs: 2 (S - 1) (alpha + m beta), alpha = 2 x 1 us inside
   * the sites + 100 km x 5 us/km, m = 1e9 / 4 bytes at 400 Gb/s:
   * 6 x (502 us + 5 ms) = 33.012 ms. */
  CHECK_REL(r.model_s, 6 * (502e-6 + 2.5e8 / 50e9), 1e-12, "s (hand-computed)");
  int32_t a = fs_wan_site_find(w, "a"), b = fs_wan_site_find(w, "b"),
          c = fs_wan_site_find(w, "c"), d = fs_wan_site_find(w, "d");
  for (int32_t i = 0; i < 4; i++) { /* neighbours on the ring are neighbours on the cycle */
    int32_t x = r.ring[i], y = r.ring[(i + 1) % 4];
    CHECK(fs_wan_fibre_find(w, x, y) >= 0);
  }
  /* the file's order crosses the square twice: two pairs of 200 km */
  CHECK(r.baseline[0] == a && r.baseline[1] == c && r.baseline[2] == b && r.baseline[3] == d);
  CHECK(r.baseline_s > r.model_s * 1.01);
  fs_wan_free(w);
}

/* On NSFNET (14 sites, all with GPUs): the local search's rings have k
 * distinct sites with GPUs and are never slower than the file's first k;
 * with 6 of 6 candidates the exhaustive optimum is at most every one of
 * 50 random orders timed through the public API. */
TEST(test_wan_place_never_worse_than_the_file) {
  fs_wan *w = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_wan_from_file("examples/wan-nsfnet-job.json", &w, &err), &err);
  if (!w) return;
  fs_wan_prov_opts o = {FS_WAN_FIRST_FIT, 3, -1};
  int32_t cand[FS_WAN_MAX_SITES], nc = 0;
  for (int32_t s = 0; s < w->n_sites; s++)
    if (w->sites[s].gpus > 0) cand[nc++] = s;
  fs_wan_place_result r;
  for (int32_t k = 2; k <= 4; k++) {
    CHECK_OK(fs_wan_place_ring(w, k, &o, &r, &err), &err);
    CHECK(r.model_s <= r.baseline_s);
    for (int32_t i = 0; i < k; i++) {
      int ok = 0;
      for (int32_t j = 0; j < nc; j++) ok |= r.ring[i] == cand[j];
      for (int32_t j = 0; j < i; j++) ok &= r.ring[j] != r.ring[i];
      CHECK(ok);
    }
  }
  CHECK_OK(fs_wan_place_ring(w, nc, &o, &r, &err), &err);
  CHECK(r.exhaustive);
  uint64_t x = 12345;
  for (int t = 0; t < 50; t++) {
    int32_t ring[FS_WAN_MAX_SITES];
    memcpy(ring, cand, (size_t)nc * sizeof(int32_t));
    for (int32_t i = nc - 1; i > 0; i--) { /* a seeded shuffle (xorshift) */
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      int32_t j = (int32_t)(x % (uint64_t)(i + 1)), tmp = ring[i];
      ring[i] = ring[j];
      ring[j] = tmp;
    }
    fs_wan w2 = *w;
    w2.job.n_ring = nc;
    w2.job.ring = ring;
    fs_wan_demand dm[FS_WAN_MAX_SITES + 16];
    int32_t nf = w->n_demands;
    memcpy(dm, w->demands, (size_t)nf * sizeof(fs_wan_demand));
    int32_t nj = fs_wan_job_demands(&w2, dm + nf, nc);
    fs_wan_plan *p = NULL;
    fs_wan_train_result tr;
    CHECK_OK(fs_wan_provision(&w2, dm, nf + nj, &o, &p, &err), &err);
    CHECK_OK(fs_wan_train_model(p, 0, &tr, &err), &err);
    if (tr.connected && !tr.multihop && isfinite(tr.model_s[1]))
      CHECK(r.model_s <= tr.model_s[1] * (1 + 1e-12));
    fs_wan_plan_free(p);
  }
  CHECK_EQ_INT(fs_wan_place_ring(w, 1, &o, &r, &err), FS_EINVAL);
  CHECK_EQ_INT(fs_wan_place_ring(w, nc + 1, &o, &r, &err), FS_EINVAL);
  fs_wan_free(w);
}

/* Three workers a, b, c, each 100 km from a hub h with no GPUs; one GPU
 * per site, 400 Gb/s lightpaths, 1e9 bytes. At h the server's link takes
 * the three pushes, then the three pulls, at 400 Gb/s:
 * 2 (p - 1) n beta + 2 alpha with p = 4 ranks (the server one of them),
 * alpha = 1 us + 500 us + 1 us (docs/model-coll-ps.md):
 * 120 ms + 1.004 ms. At worker a the same bytes cross the server's link
 * but b and c are 200 km away: 120 ms + 2 x 1,002 us. h is the best. */
TEST(test_wan_place_aggregator_hand_computed) {
  const char *star =
      "{\"sites\": [{\"name\": \"a\", \"gpus\": 1}, {\"name\": \"b\", \"gpus\": 1},"
      "             {\"name\": \"c\", \"gpus\": 1}, {\"name\": \"h\"}],"
      " \"fibres\": [{\"a\": \"a\", \"b\": \"h\", \"km\": 100}, {\"a\": \"b\", \"b\": \"h\", \"km\": 100},"
      "              {\"a\": \"c\", \"b\": \"h\", \"km\": 100}],"
      " \"grid\": {\"type\": \"fixed\", \"wavelengths\": 80, \"gbps\": 400},"
      " \"job\": {\"gbps\": 400, \"bytes\": 1e9, \"gpu_gbps\": 400, \"site_latency_ns\": 1000}}";
  fs_wan *w = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_wan_from_json(star, "star.json", &w, &err), &err);
  if (!w) return;
  fs_wan_prov_opts o = {FS_WAN_FIRST_FIT, 3, -1};
  fs_wan_agg_result r;
  CHECK_OK(fs_wan_place_aggregator(w, &o, 0, &r, &err), &err);
  int32_t a = fs_wan_site_find(w, "a"), h = fs_wan_site_find(w, "h");
  CHECK_REL(r.time_s[h], 120e-3 + 2 * 502e-6, 1e-9, "s (server at the hub)");
  CHECK_REL(r.time_s[a], 120e-3 + 2 * 1002e-6, 1e-9, "s (server at worker a)");
  CHECK_EQ_INT(r.best, h);
  fs_wan_free(w);
}

/* The embedding on multi-core fibres (examples/wan-nsfnet-osdl.json:
 * 7 cores, one high-crosstalk fibre): the chosen ring is never slower than
 * the file's order, and its time is the closed form of the lightpaths RSCA
 * gives its pairs, provisioned here again in ring order on a fresh state. */
TEST(test_wan_place_on_multicore_fibres) {
  fs_wan *w = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_wan_from_file("examples/wan-nsfnet-osdl.json", &w, &err), &err);
  if (!w) return;
  fs_wan_sdm s;
  CHECK_OK(fs_wan_sdm_get(w, 0, &s, &err), &err);
  fs_wan_prov_opts o = {FS_WAN_FIRST_FIT, 3, -1};
  fs_wan_place_result r;
  CHECK_OK(fs_wan_place_ring_sdm(w, &s, FS_WAN_POLICY_XT_AWARE, 4, &o, &r, &err), &err);
  CHECK(r.exhaustive);
  CHECK(isfinite(r.model_s) && r.model_s <= r.baseline_s);
  fs_wan_rsca *rs = NULL;
  CHECK_OK(fs_wan_rsca_new(w, &s, FS_WAN_POLICY_XT_AWARE, 3, &rs, &err), &err);
  if (rs) {
    double bps[4], km[4];
    for (int32_t i = 0; i < w->n_demands; i++) {
      int32_t lp;
      fs_wan_rsca_add(rs, w->demands[i].src, w->demands[i].dst, w->demands[i].gbps, &lp);
    }
    for (int32_t i = 0; i < 4; i++) {
      int32_t lp;
      fs_wan_sdm_lp l;
      CHECK(fs_wan_rsca_add(rs, r.ring[i], r.ring[(i + 1) % 4], w->job.gbps, &lp) ==
            FS_WAN_SDM_OK);
      CHECK_EQ_INT(fs_wan_rsca_lp(rs, lp, &l), 0);
      bps[i] = l.gbps * 1e9;
      km[i] = l.km;
    }
    CHECK(fs__wan_ring_cross_site_s(&w->job, 4, bps, km, 0) == r.model_s);
    fs_wan_rsca_free(rs);
  }
  fs_wan_free(w);
}
