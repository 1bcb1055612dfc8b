/* What a protected plan gives (docs/model-wan-risk.md): its lightpaths as
 * an fs_wan_plan (for fs_wan_train), its check, and a training job's
 * connectivity availability and expected completion time under failures.
 * The job's availability enumerates the states of the risks its paths
 * (and, SBPP, its backups' sharers) touch: exact up to 24 of them
 * (2^24 states), else up to 3 risks down at once (a lower bound). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/wan_risk.h"
#include "wan_risk_internal.h"

int fs__wan_plan_of_routes(const fs_wan_pplan *p, const fs_wan_route *const *routes,
                           fs_wan_plan **out, fs_err *err) {
  const fs_wan *w = p->w;
  int32_t N = p->n_demands, U = w->grid.units;
  size_t cells = (size_t)w->n_fibres * U, nlp = 0;
  *out = NULL;
  for (int32_t di = 0; di < N; di++)
    if (routes[di]) nlp += w->grid.kind == FS_WAN_FIXED ? (size_t)routes[di]->n_units : 1;
  fs_wan_plan *q = fs__calloc(1, sizeof(*q));
  if (!q) return fs_err_set(err, FS_ENOMEM, "out of memory");
  q->w = w;
  q->opts.algo = FS_WAN_FIRST_FIT;
  q->opts.k = p->opts.k;
  q->opts.cut = -1;
  q->n_demands = N;
  q->demands = fs__malloc((size_t)N + 1, sizeof(*q->demands));
  q->status = fs__calloc((size_t)N + 1, sizeof(*q->status));
  q->lp_first = fs__calloc((size_t)N + 1, sizeof(int32_t));
  q->lp_n = fs__calloc((size_t)N + 1, sizeof(int32_t));
  q->owner = fs__malloc(cells + 1, sizeof(int32_t));
  q->lps = fs__calloc(nlp + 1, sizeof(*q->lps));
  q->lps_cap = nlp + 1;
  if (!q->demands || !q->status || !q->lp_first || !q->lp_n || !q->owner || !q->lps) goto oom;
  if (N) memcpy(q->demands, p->demands, (size_t)N * sizeof(*q->demands));
  for (size_t i = 0; i < cells; i++) q->owner[i] = -1;
  int32_t guard = w->grid.kind == FS_WAN_FLEX ? w->grid.guard : 0;
  for (int32_t di = 0; di < N; di++) {
    const fs_wan_route *r = routes[di];
    q->lp_first[di] = q->n_lps;
    if (!r) {
      q->status[di] = p->d[di].status == FS_WAN_OK ? FS_WAN_BLOCKED_NOPATH : p->d[di].status;
      continue;
    }
    q->status[di] = FS_WAN_OK;
    int32_t nl = w->grid.kind == FS_WAN_FIXED ? r->n_units : 1;
    double left = p->demands[di].gbps;
    for (int32_t j = 0; j < nl; j++) {
      fs_wan_lightpath *lp = &q->lps[q->n_lps];
      lp->demand = di;
      lp->mod = r->mod;
      lp->first = w->grid.kind == FS_WAN_FIXED ? r->units[j] : r->units[0];
      lp->count = w->grid.kind == FS_WAN_FIXED ? 1 : r->n_units;
      lp->guard = guard;
      lp->line_gbps = (lp->count - guard) * r->unit_gbps;
      lp->gbps = left < lp->line_gbps ? left : lp->line_gbps;
      left -= lp->gbps;
      lp->path = r->path;
      lp->path.nodes = fs__malloc((size_t)r->path.hops + 1, sizeof(int32_t));
      lp->path.fibres = fs__malloc((size_t)r->path.hops + 1, sizeof(int32_t));
      q->n_lps++;
      if (!lp->path.nodes || !lp->path.fibres) goto oom;
      memcpy(lp->path.nodes, r->path.nodes, ((size_t)r->path.hops + 1) * sizeof(int32_t));
      memcpy(lp->path.fibres, r->path.fibres, (size_t)r->path.hops * sizeof(int32_t));
      for (int32_t i = 0; i < r->path.hops; i++)
        for (int32_t u = lp->first; u < lp->first + lp->count; u++)
          q->owner[(size_t)r->path.fibres[i] * U + u] = q->n_lps - 1;
      q->lp_n[di]++;
    }
  }
  for (int32_t di = 0; di < N; di++) {
    q->offered_gbps += q->demands[di].gbps;
    if (q->status[di] != FS_WAN_OK) q->blocked++, q->blocked_gbps += q->demands[di].gbps;
  }
  *out = q;
  return 0;
oom:
  fs_wan_plan_free(q);
  return fs_err_set(err, FS_ENOMEM, "out of memory");
}

int fs_wan_pplan_working(const fs_wan_pplan *p, fs_wan_plan **out, fs_err *err) {
  const fs_wan_route **r = fs__calloc((size_t)p->n_demands + 1, sizeof(*r));
  if (!r) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int32_t di = 0; di < p->n_demands; di++)
    if (p->d[di].status == FS_WAN_OK) r[di] = &p->d[di].work;
  int rc = fs__wan_plan_of_routes(p, r, out, err);
  free(r);
  return rc;
}

static int shares_risk(const fs_wan_risks *r, const fs_wan_path *a, const fs_wan_path *b) {
  return !fs_wan_srlg_disjoint(r, a, b);
}

int fs_wan_pplan_check(const fs_wan_pplan *p, fs_err *err) {
  const fs_wan *w = p->w;
  int32_t U = w->grid.units, N = p->n_demands;
  size_t cells = (size_t)w->n_fibres * U;
  int32_t *ded = fs__calloc(cells + 1, sizeof(int32_t)); /* dedicated holders */
  int32_t *shr = fs__malloc(cells + 1, sizeof(int32_t)); /* a shared holder (demand) */
  if (!ded || !shr) {
    free(ded), free(shr);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < cells; i++) shr[i] = -1;
  int rc = 0;
  int64_t wc = 0, bc = 0, used = 0;
#define BAD(...)                                     \
  do {                                               \
    rc = fs_err_set(err, FS_EINTERNAL, __VA_ARGS__); \
    goto out;                                        \
  } while (0)
  for (int32_t di = 0; di < N; di++) {
    const fs_wan_pdemand *pd = &p->d[di];
    if (pd->status != FS_WAN_OK) {
      if (pd->work.path.hops || pd->backup.path.hops) BAD("demand %d: blocked with a route", di);
      continue;
    }
    const fs_wan_route *rs[2] = {&pd->work, &pd->backup};
    for (int k = 0; k < 2; k++) {
      const fs_wan_route *r = rs[k];
      if (k == 1 && p->opts.scheme == FS_WAN_PROT_NONE) {
        if (r->path.hops) BAD("demand %d: a backup without protection", di);
        continue;
      }
      if (r->path.hops < 1 || r->path.nodes[0] != p->demands[di].src ||
          r->path.nodes[r->path.hops] != p->demands[di].dst)
        BAD("demand %d: route %d does not join its sites", di, k);
      if (r->mod < 0 || w->mods[r->mod].reach_km < r->path.km)
        BAD("demand %d: route %d out of reach", di, k);
      for (int32_t i = 0; i < r->path.hops; i++)
        for (int32_t x = 0; x < r->n_units; x++) {
          size_t c = (size_t)r->path.fibres[i] * U + r->units[x];
          int shared = k == 1 && p->opts.scheme == FS_WAN_PROT_SBPP;
          if (p->cell[c] != (shared ? 2 : 1)) BAD("demand %d: cell of route %d not marked", di, k);
          if (!shared) {
            if (++ded[c] > 1) BAD("demand %d: a dedicated cell held twice", di);
          } else if (shr[c] >= 0 && shares_risk(p->risks, &p->d[shr[c]].work.path, &pd->work.path)) {
            BAD("demands %d and %d share backup spectrum with working paths sharing a risk",
                shr[c], di);
          } else {
            shr[c] = di;
          }
        }
      (k ? &bc : &wc)[0] += (int64_t)r->path.hops * r->n_units;
    }
    if (p->opts.scheme != FS_WAN_PROT_NONE && shares_risk(p->risks, &pd->work.path, &pd->backup.path))
      BAD("demand %d: working and backup share a risk", di);
  }
  for (size_t i = 0; i < cells; i++) {
    used += p->cell[i] != 0;
    if (ded[i] && shr[i] >= 0) BAD("a cell both dedicated and shared");
  }
  if (wc != p->cells_working || bc != p->cells_backup || used != p->cells_used)
    BAD("cell counts: working %lld/%lld, backup %lld/%lld, used %lld/%lld", (long long)wc,
        (long long)p->cells_working, (long long)bc, (long long)p->cells_backup, (long long)used,
        (long long)p->cells_used);
#undef BAD
out:
  free(ded), free(shr);
  return rc;
}

/* ---- the job ---- */

typedef struct enum_ctx {
  int32_t n_jd, nr, max_down;
  const uint64_t *W, *B, *S; /* per job demand: masks over the local risks */
  const double *U;
  fs_wan_prot scheme;
  double up;
} enum_ctx;

static int job_up(const enum_ctx *e, uint64_t down) {
  for (int32_t j = 0; j < e->n_jd; j++) {
    if (!(down & e->W[j])) continue;
    if (e->scheme == FS_WAN_PROT_NONE || (down & e->B[j])) return 0;
    if (e->scheme == FS_WAN_PROT_SBPP && (down & e->S[j])) return 0;
  }
  return 1;
}

static void enumerate(enum_ctx *e, int32_t i, uint64_t down, double prob, int32_t ndown) {
  if (i == e->nr) {
    if (job_up(e, down)) e->up += prob;
    return;
  }
  enumerate(e, i + 1, down, prob * (1 - e->U[i]), ndown);
  if (ndown < e->max_down) enumerate(e, i + 1, down | 1ull << i, prob * e->U[i], ndown + 1);
}

/* Bits of a route's risks (global) into bits. */
static void route_bits(const fs_wan_risks *r, const fs_wan_path *p, uint64_t *bits) {
  for (int32_t i = 0; i < p->hops; i++)
    for (int32_t j = r->fibre_start[p->fibres[i]]; j < r->fibre_start[p->fibres[i] + 1]; j++)
      bits[r->fibre_risk[j] / 64] |= 1ull << (r->fibre_risk[j] % 64);
}

static int32_t popcount_all(const uint64_t *b, int32_t words) {
  int32_t n = 0;
  for (int32_t k = 0; k < words; k++) n += __builtin_popcountll(b[k]);
  return n;
}

/* The job's availability: enumeration over the relevant risks when at
 * most 64 (exact up to 24), else the union bound 1 - sum(1 - A_pair). */
static int job_availability(const fs_wan_pplan *p, const int32_t *jd, int32_t n_jd,
                            fs_wan_job_risk *out) {
  const fs_wan_risks *r = p->risks;
  int32_t words = (r->n + 63) / 64, U = p->w->grid.units;
  uint64_t *g = fs__calloc((size_t)words * (3 * (size_t)n_jd + 1), sizeof(uint64_t));
  uint64_t *loc = fs__calloc((size_t)n_jd * 3 + 1, sizeof(uint64_t));
  int32_t *idx = fs__malloc((size_t)r->n + 1, sizeof(int32_t));
  double *Ul = fs__malloc(65, sizeof(double));
  if (!g || !loc || !idx || !Ul) {
    FS__FREE_ALL(g, loc, idx, Ul);
    return FS_ENOMEM;
  }
  uint64_t *all = g + (size_t)words * 3 * n_jd;
  for (int32_t j = 0; j < n_jd; j++) {
    const fs_wan_pdemand *pd = &p->d[jd[j]];
    uint64_t *Wb = g + (size_t)words * 3 * j, *Bb = Wb + words, *Sb = Bb + words;
    route_bits(r, &pd->work.path, Wb);
    if (p->opts.scheme != FS_WAN_PROT_NONE) route_bits(r, &pd->backup.path, Bb);
    if (p->opts.scheme == FS_WAN_PROT_SBPP) {
      for (int32_t i = 0; i < pd->backup.path.hops; i++)
        for (int32_t x = 0; x < pd->backup.n_units; x++) {
          size_t c = (size_t)pd->backup.path.fibres[i] * U + pd->backup.units[x];
          for (int32_t k = 0; k < words; k++) Sb[k] |= p->share[c * words + k];
        }
      for (int32_t k = 0; k < words; k++) Sb[k] &= ~(Wb[k] | Bb[k]);
    }
    for (int32_t k = 0; k < words; k++) all[k] |= Wb[k] | Bb[k] | Sb[k];
  }
  int32_t nr = popcount_all(all, words);
  if (nr <= 64) {
    int32_t m = 0;
    for (int32_t i = 0; i < r->n; i++) {
      idx[i] = -1;
      if (all[i / 64] >> (i % 64) & 1) Ul[m] = r->unavail[i], idx[i] = m++;
    }
    for (int32_t j = 0; j < n_jd; j++)
      for (int32_t t = 0; t < 3; t++) {
        const uint64_t *b = g + (size_t)words * (3 * j + t);
        for (int32_t i = 0; i < r->n; i++)
          if (b[i / 64] >> (i % 64) & 1) loc[3 * j + t] |= 1ull << idx[i];
      }
    /* loc is interleaved W, B, S per demand; split for the context */
    uint64_t *W = fs__calloc((size_t)n_jd * 3 + 1, sizeof(uint64_t));
    if (!W) {
      FS__FREE_ALL(g, loc, idx, Ul);
      return FS_ENOMEM;
    }
    for (int32_t j = 0; j < n_jd; j++) {
      W[j] = loc[3 * j];
      W[n_jd + j] = loc[3 * j + 1];
      W[2 * n_jd + j] = loc[3 * j + 2];
    }
    enum_ctx e = {n_jd, nr, nr <= 24 ? nr : 3, W, W + n_jd, W + 2 * n_jd, Ul, p->opts.scheme, 0};
    enumerate(&e, 0, 0, 1, 0);
    out->availability = e.up;
    out->exact = nr <= 24;
    free(W);
  } else {
    double a = 1;
    for (int32_t j = 0; j < n_jd; j++) a -= 1 - p->d[jd[j]].availability;
    out->availability = a;
    out->exact = 0;
  }
  FS__FREE_ALL(g, loc, idx, Ul);
  return 0;
}

int fs_wan_job_risk_eval(const fs_wan_pplan *p, double iterations, double checkpoint_minutes,
                         fs_wan_job_risk *out, fs_err *err) {
  const fs_wan *w = p->w;
  const fs_wan_risks *r = p->risks;
  memset(out, 0, sizeof(*out));
  if (!w->job.present) return fs_err_set(err, FS_EINVAL, "the WAN file has no job");
  if (!(iterations > 0)) return fs_err_set(err, FS_EINVAL, "iterations must be > 0");
  out->iterations = iterations;
  out->checkpoint_minutes = checkpoint_minutes > 0 ? checkpoint_minutes
                            : w->risk                ? w->risk->checkpoint_minutes
                                                     : 30;
  int32_t *jd = fs__malloc((size_t)p->n_demands + 1, sizeof(int32_t)), n_jd = 0;
  uint64_t *wb = fs__calloc((size_t)(r->n + 63) / 64 + 1, sizeof(uint64_t));
  int32_t *failed = fs__malloc((size_t)w->n_fibres + 1, sizeof(int32_t));
  fs_wan_plan *wp = NULL;
  int rc = 0;
  if (!jd || !wb || !failed) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  out->provisioned = 1;
  for (int32_t di = 0; di < p->n_demands; di++)
    if (p->demands[di].job) {
      jd[n_jd++] = di;
      if (p->d[di].status != FS_WAN_OK) out->provisioned = 0;
      else route_bits(r, &p->d[di].work.path, wb);
    }
  out->iter_s = out->base_hours = out->jct_hours = NAN;
  if (!out->provisioned || n_jd == 0) {
    out->provisioned = 0;
    goto out;
  }
  if ((rc = job_availability(p, jd, n_jd, out))) {
    rc = fs_err_set(err, rc, "out of memory");
    goto out;
  }
  fs_wan_train_result tr;
  if ((rc = fs_wan_pplan_working(p, &wp, err)) || (rc = fs_wan_train(wp, 0, &tr, err))) goto out;
  out->iter_s = tr.connected ? tr.total_s : NAN;
  /* Each failure of a risk on a job working path: protected, the job
   * stalls for the switchover; unprotected, it crashes: restoration (or
   * the repair when restoration cannot reconnect it) + restart + half a
   * checkpoint interval recomputed (the mean since the last checkpoint). */
  const fs_wan_reliability *rel = &r->rel;
  for (int32_t i = 0; i < r->n; i++) {
    if (!(wb[i / 64] >> (i % 64) & 1)) continue;
    double cost_h;
    out->fails_per_hour += r->per_hour[i];
    if (p->opts.scheme == FS_WAN_PROT_1P1) {
      cost_h = rel->switchover_ms / 3.6e6;
    } else if (p->opts.scheme == FS_WAN_PROT_SBPP) {
      cost_h = rel->sbpp_switchover_ms / 3.6e6;
    } else {
      int32_t nf = 0;
      for (int32_t f = 0; f < w->n_fibres; f++)
        for (int32_t j = r->fibre_start[f]; j < r->fibre_start[f + 1]; j++)
          if (r->fibre_risk[j] == i) failed[nf++] = f;
      fs_wan_failure_result fr;
      if ((rc = fs_wan_fail(p, failed, nf, &fr, err))) goto out;
      fs_wan_plan_free(fr.after);
      cost_h = (fr.job_connected ? rel->restoration_s / 3600 : rel->repair_hours) +
               rel->restart_minutes / 60 + out->checkpoint_minutes / 2 / 60;
    }
    out->lost_per_hour += r->per_hour[i] * cost_h;
  }
  out->base_hours = iterations * out->iter_s / 3600;
  out->jct_hours = out->base_hours * (1 + out->lost_per_hour);
out:
  fs_wan_plan_free(wp);
  FS__FREE_ALL(jd, wb, failed);
  return rc;
}
