/* Choosing the sites of a cross-site training job and the order of its
 * ring (docs/model-wan.md, "Choosing the sites"): every placement timed
 * as the job would run it, its ring pairs provisioned on the spectrum the
 * file's demands leave and its cross-site all-reduce timed by the closed
 * form of wan_train.c. Small problems are searched exhaustively (the
 * optimum); larger ones from nearest-neighbour rings improved by 2-opt and
 * site swaps. Cost: one provisioning of the file's demands plus k ring
 * pairs per placement timed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/wan.h"
#include "fabricsim/wan_sdm.h"
#include "wan_internal.h"

/* Rings of at most this many candidates are timed in every order when k
 * takes them all: (8 - 1)! = 5,040 placements. (A ring and its reverse
 * use the same fibres, but the pairs are provisioned in the other order,
 * which can give other paths: both are timed.) */
enum { EXHAUSTIVE_MAX = 8 };

typedef struct placer {
  const fs_wan *w;
  const fs_wan_prov_opts *o;
  fs_wan_demand *d; /* the file's demands, then room for the ring's pairs */
  int32_t nd;
  int64_t evaluated;
  fs_err *err;
  fs_wan_rsca *rsca; /* multi-core fibres under RSCA, or NULL: the single-core plan */
} placer;

/* ring_time on multi-core fibres: the file's demands, then the ring's
 * pairs, each one lightpath by the state's RSCA (crosstalk checked); the
 * closed form on the pairs' rates and path lengths. */
static double ring_time_sdm(placer *pl, const int32_t *ring, int32_t k) {
  double bps[FS_WAN_PLACE_MAX], km[FS_WAN_PLACE_MAX];
  fs_wan_rsca_reset(pl->rsca);
  for (int32_t i = 0; i < pl->nd; i++) {
    int32_t lp;
    fs_wan_rsca_add(pl->rsca, pl->d[i].src, pl->d[i].dst, pl->d[i].gbps, &lp);
  }
  int32_t pairs = k == 2 ? 1 : k;
  pl->evaluated++;
  for (int32_t i = 0; i < pairs; i++) {
    int32_t lp;
    fs_wan_sdm_lp l;
    if (fs_wan_rsca_add(pl->rsca, ring[i], ring[(i + 1) % k], pl->w->job.gbps, &lp) !=
            FS_WAN_SDM_OK ||
        fs_wan_rsca_lp(pl->rsca, lp, &l))
      return INFINITY;
    bps[i] = l.gbps * 1e9;
    km[i] = l.km;
  }
  if (k == 2) bps[1] = bps[0], km[1] = km[0]; /* one pair both ways */
  double t = fs__wan_ring_cross_site_s(&pl->w->job, k, bps, km, 0);
  return isfinite(t) ? t : INFINITY;
}

/* The cross-site phase of the ring ring[0..k) (INFINITY when a pair is
 * blocked or the ring is not connected by its own pairs), or -1 with
 * err set on a failure of the machine. */
static double ring_time(placer *pl, const int32_t *ring, int32_t k) {
  if (pl->rsca) return ring_time_sdm(pl, ring, k);
  fs_wan w2 = *pl->w; /* the same file with the job on this ring */
  w2.job.n_ring = k;
  w2.job.ring = ring;
  int32_t nj = fs_wan_job_demands(&w2, pl->d + pl->nd, k);
  fs_wan_plan *plan = NULL;
  if (fs_wan_provision(&w2, pl->d, pl->nd + nj, pl->o, &plan, pl->err)) return -1;
  fs_wan_train_result r;
  int rc = fs_wan_train_model(plan, 0, &r, pl->err);
  fs_wan_plan_free(plan);
  if (rc) return -1;
  pl->evaluated++;
  return r.connected && r.multihop == 0 && isfinite(r.model_s[1]) ? r.model_s[1] : INFINITY;
}

/* Keeps ring[0..k) in best if it is faster (ties: the first found). */
static int consider(placer *pl, const int32_t *ring, int32_t k, int32_t *best, double *best_s) {
  double t = ring_time(pl, ring, k);
  if (t < 0) return -1;
  if (t < *best_s) {
    *best_s = t;
    memcpy(best, ring, (size_t)k * sizeof(int32_t));
  }
  return 0;
}

/* Every ring order of the k candidates with cand[0] first (a rotation
 * is the same ring): recursion over positions 1..k-1. */
static int all_orders(placer *pl, int32_t *ring, int32_t pos, int32_t k, int32_t *best,
                      double *best_s) {
  if (pos == k) return consider(pl, ring, k, best, best_s);
  for (int32_t i = pos; i < k; i++) {
    int32_t t = ring[pos];
    ring[pos] = ring[i];
    ring[i] = t;
    int rc = all_orders(pl, ring, pos + 1, k, best, best_s);
    ring[i] = ring[pos];
    ring[pos] = t;
    if (rc) return rc;
  }
  return 0;
}

/* Shortest-path km between every two candidates (Yen's first path), for
 * the nearest-neighbour rings; INFINITY where unreachable. */
static int candidate_km(placer *pl, const int32_t *cand, int32_t nc, double *km) {
  for (int32_t i = 0; i < nc; i++) {
    km[i * nc + i] = 0;
    for (int32_t j = i + 1; j < nc; j++) {
      fs_wan_path *p = NULL;
      int32_t n = 0;
      if (fs_wan_k_shortest(pl->w, cand[i], cand[j], 1, pl->o->cut, &p, &n, pl->err)) return -1;
      km[i * nc + j] = km[j * nc + i] = n ? p[0].km : INFINITY;
      fs_wan_paths_free(p, n);
    }
  }
  return 0;
}

/* A nearest-neighbour ring of k candidates from candidate `start`
 * (indexes into cand), written as site ids. */
static void nearest_ring(const int32_t *cand, int32_t nc, const double *km, int32_t start,
                         int32_t k, int32_t *ring, char *used) {
  memset(used, 0, (size_t)nc);
  int32_t at = start;
  used[at] = 1;
  ring[0] = cand[at];
  for (int32_t i = 1; i < k; i++) {
    int32_t nx = -1;
    for (int32_t j = 0; j < nc; j++)
      if (!used[j] && (nx < 0 || km[at * nc + j] < km[at * nc + nx])) nx = j;
    used[nx] = 1;
    ring[i] = cand[nx];
    at = nx;
  }
}

/* 2-opt (reverse ring[i..j]) and swaps of a ring site for an unused
 * candidate, first improvement, until neither improves. */
static int improve(placer *pl, const int32_t *cand, int32_t nc, int32_t *ring, int32_t k,
                   double *ring_s) {
  int32_t trial[FS_WAN_PLACE_MAX];
  for (int better = 1; better;) {
    better = 0;
    for (int32_t i = 1; i < k - 1 && !better; i++)
      for (int32_t j = i + 1; j < k && !better; j++) {
        memcpy(trial, ring, (size_t)k * sizeof(int32_t));
        for (int32_t a = i, b = j; a < b; a++, b--) {
          int32_t t = trial[a];
          trial[a] = trial[b];
          trial[b] = t;
        }
        double t = ring_time(pl, trial, k);
        if (t < 0) return -1;
        if (t < *ring_s) *ring_s = t, memcpy(ring, trial, (size_t)k * sizeof(int32_t)), better = 1;
      }
    for (int32_t i = 0; i < k && !better; i++)
      for (int32_t c = 0; c < nc && !better; c++) {
        int in = 0;
        for (int32_t x = 0; x < k; x++) in |= ring[x] == cand[c];
        if (in) continue;
        memcpy(trial, ring, (size_t)k * sizeof(int32_t));
        trial[i] = cand[c];
        double t = ring_time(pl, trial, k);
        if (t < 0) return -1;
        if (t < *ring_s) *ring_s = t, memcpy(ring, trial, (size_t)k * sizeof(int32_t)), better = 1;
      }
  }
  return 0;
}

static int place_ring(const fs_wan *w, int32_t k, const fs_wan_prov_opts *o, fs_wan_rsca *rsca,
                      fs_wan_place_result *r, fs_err *err);

int fs_wan_place_ring(const fs_wan *w, int32_t k, const fs_wan_prov_opts *o,
                      fs_wan_place_result *r, fs_err *err) {
  return place_ring(w, k, o, NULL, r, err);
}

int fs_wan_place_ring_sdm(const fs_wan *w, const fs_wan_sdm *s, fs_wan_policy policy, int32_t k,
                          const fs_wan_prov_opts *o, fs_wan_place_result *r, fs_err *err) {
  fs_wan_rsca *rs = NULL;
  int rc = fs_wan_rsca_new(w, s, policy, o->k, &rs, err);
  if (!rc) rc = place_ring(w, k, o, rs, r, err);
  fs_wan_rsca_free(rs);
  return rc;
}

static int place_ring(const fs_wan *w, int32_t k, const fs_wan_prov_opts *o, fs_wan_rsca *rsca,
                      fs_wan_place_result *r, fs_err *err) {
  memset(r, 0, sizeof(*r));
  if (!w->job.present) return fs_err_set(err, FS_EINVAL, "the WAN file has no \"job\" to place");
  int32_t cand[FS_WAN_MAX_SITES], nc = 0;
  for (int32_t s = 0; s < w->n_sites; s++)
    if (w->sites[s].gpus > 0) cand[nc++] = s;
  if (k < 2 || k > nc || k > FS_WAN_PLACE_MAX)
    return fs_err_set(err, FS_EINVAL,
                      "--sites must be in [2, %d] (the sites with gpus%s), got %d",
                      nc < FS_WAN_PLACE_MAX ? nc : FS_WAN_PLACE_MAX,
                      nc > FS_WAN_PLACE_MAX ? ", at most 64" : "", k);
  placer pl = {w, o, fs__malloc((size_t)w->n_demands + (size_t)k + 1, sizeof(fs_wan_demand)),
               w->n_demands, 0, err, rsca};
  double *km = fs__malloc((size_t)nc * (size_t)nc, sizeof(double));
  char *used = fs__malloc((size_t)nc, 1);
  if (!pl.d || !km || !used) {
    FS__FREE_ALL(pl.d, km, used);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  if (w->n_demands) memcpy(pl.d, w->demands, (size_t)w->n_demands * sizeof(fs_wan_demand));
  r->k = k;
  int rc = 0;
  /* the baseline: the first k job sites in file order */
  memcpy(r->baseline, cand, (size_t)k * sizeof(int32_t));
  r->baseline_s = ring_time(&pl, r->baseline, k);
  if (r->baseline_s < 0) rc = -1;
  r->model_s = INFINITY;
  if (!rc && k == nc && nc <= EXHAUSTIVE_MAX) {
    int32_t ring[FS_WAN_PLACE_MAX];
    memcpy(ring, cand, (size_t)k * sizeof(int32_t));
    rc = all_orders(&pl, ring, 1, k, r->ring, &r->model_s);
    r->exhaustive = 1;
  } else if (!rc && !(rc = candidate_km(&pl, cand, nc, km))) {
    for (int32_t s = 0; s < nc && !rc; s++) {
      int32_t ring[FS_WAN_PLACE_MAX];
      nearest_ring(cand, nc, km, s, k, ring, used);
      double t = ring_time(&pl, ring, k);
      if (t < 0) rc = -1;
      else if (!(rc = improve(&pl, cand, nc, ring, k, &t)) && t < r->model_s) {
        r->model_s = t;
        memcpy(r->ring, ring, (size_t)k * sizeof(int32_t));
      }
    }
  }
  /* no placement fits: the baseline stands for the ring */
  if (!rc && !isfinite(r->model_s)) memcpy(r->ring, r->baseline, (size_t)k * sizeof(int32_t));
  r->evaluated = pl.evaluated;
  FS__FREE_ALL(pl.d, km, used);
  return rc < 0 ? err->code : rc;
}

int fs_wan_place_aggregator(const fs_wan *w, const fs_wan_prov_opts *o, double bytes,
                            fs_wan_agg_result *r, fs_err *err) {
  r->n_sites = w->n_sites;
  r->best = -1;
  if (!w->job.present)
    return fs_err_set(err, FS_EINVAL, "the WAN file has no \"job\" to aggregate");
  int32_t ring[FS_WAN_MAX_SITES];
  int32_t W = fs_wan_job_ring(w, ring), nf = w->n_demands;
  fs_wan_demand *d = fs__malloc((size_t)nf + (size_t)W + 1, sizeof(fs_wan_demand));
  if (!d) return fs_err_set(err, FS_ENOMEM, "out of memory");
  if (nf) memcpy(d, w->demands, (size_t)nf * sizeof(fs_wan_demand));
  int rc = 0;
  for (int32_t a = 0; a < w->n_sites && !rc; a++) {
    int32_t n = nf;
    for (int32_t i = 0; i < W; i++)
      if (ring[i] != a) d[n++] = (fs_wan_demand){ring[i], a, w->job.gbps, w->job.slice, 1};
    fs_wan_plan *p = NULL;
    fs_wan_train_result t;
    if (!(rc = fs_wan_provision(w, d, n, o, &p, err)) &&
        !(rc = fs_wan_train_ps(p, a, bytes, &t, err))) {
      r->time_s[a] = t.connected && isfinite(t.total_s) ? t.total_s : INFINITY;
      if (isfinite(r->time_s[a]) && (r->best < 0 || r->time_s[a] < r->time_s[r->best]))
        r->best = a;
    }
    fs_wan_plan_free(p);
  }
  free(d);
  return rc;
}

