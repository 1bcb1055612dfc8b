/* Dynamic operation (docs/model-wan-sdm.md "Dynamic operation"): requests
 * between uniformly drawn site pairs at a rate drawn uniformly from the
 * traffic's list arrive as a Poisson process of rate load / holding and
 * hold their lightpath for an exponential time of mean holding; each is
 * provisioned on arrival (fs_wan_rsca_add) and released on departure (a
 * binary heap of departure times, ties broken by arrival number).
 * Statistics skip the first tenth of the arrivals (the network starts
 * empty) and sample the occupancy at arrivals, which see time averages
 * (PASTA). Costs: one fs_wan_rsca_add per arrival; fragmentation at every
 * 64th arrival is fibres x cores x units / 64. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "wan_sdm_internal.h"

enum { FRAG_EVERY = 64, PROGRESS_EVERY = 4096 };

double fs_wan_rsca_fragmentation(const fs_wan_rsca *r) {
  double sum = 0;
  int64_t n = 0;
  for (int32_t f = 0; f < r->F; f++)
    for (int32_t c = 0; c < r->C; c++) {
      const uint64_t *o = r->occ + ((size_t)f * r->C + c) * r->W;
      for (int32_t bi = 0; bi < r->s.n_bands; bi++) {
        const fs_wan_band *b = &r->s.bands[bi];
        int32_t end = b->first + b->slots, free_u = 0, largest = 0;
        for (int32_t u = b->first; u < end;) {
          if (o[u >> 6] >> (u & 63) & 1) {
            u++;
            continue;
          }
          int32_t e = u;
          while (e < end && !(o[e >> 6] >> (e & 63) & 1)) e++;
          free_u += e - u;
          largest = e - u > largest ? e - u : largest;
          u = e;
        }
        if (free_u) {
          sum += 1 - (double)largest / free_u;
          n++;
        }
      }
    }
  return n ? sum / (double)n : 0;
}

static double expo(fs__rng *g, double mean) { return -log(1 - fs__rng_unit(g)) * mean; }

static int check_opts(const fs_wan_rsca *r, const fs_wan_dyn_opts *o, fs_err *err) {
  if (!(o->load_erlang > 0) || !isfinite(o->load_erlang))
    return fs_err_set(err, FS_EINVAL, "the load must be a positive number of Erlang, got %g",
                      o->load_erlang);
  if (o->requests < 10) return fs_err_set(err, FS_EINVAL, "at least 10 requests per seed");
  if (o->seeds < 1) return fs_err_set(err, FS_EINVAL, "at least one seed");
  if (r->N < 2) return fs_err_set(err, FS_EINVAL, "at least two sites");
  return 0;
}

static int run_seed(fs_wan_rsca *r, const fs_wan_dyn_opts *o, uint64_t seed, fs_wan_dyn_run *out,
                    double done0, double scale, fs_err *err) {
  const fs_wan_traffic *t = &r->s.traffic;
  double holding = t->holding_s > 0 ? t->holding_s : 1;
  int32_t n_rates = t->n_rates > 0 ? t->n_rates : 1;
  const double def_rate = 100, *rates = t->n_rates > 0 ? t->rates_gbps : &def_rate;
  double mean_gap = holding / o->load_erlang;
  int64_t warm = o->requests / 10, samples = 0, frag_samples = 0;
  memset(out, 0, sizeof(*out));
  fs_wan_rsca_reset(r);
  /* the demands that hold their lightpaths throughout (a job's ring),
   * before the first arrival */
  for (int32_t i = 0; i < o->n_fixed; i++) {
    int32_t lp;
    if (fs_wan_rsca_add_to(r, o->fixed[i].src, o->fixed[i].dst, o->fixed[i].gbps,
                           o->fixed_in_slice, &lp) != FS_WAN_SDM_OK)
      out->fixed_blocked++;
  }
  fs__heap h;
  fs__heap_init(&h, 2, NULL);
  fs__rng g;
  fs__rng_seed(&g, seed);
  double now = 0, used[FS_WAN_MAX_BANDS * FS_WAN_MAX_CORES] = {0};
  for (int64_t i = 0; i < o->requests; i++) {
    now += expo(&g, mean_gap);
    while (h.len && h.e[0].t <= now) {
      fs_wan_rsca_release(r, h.e[0].a);
      fs__heap_pop(&h);
    }
    int32_t a = (int32_t)fs__rng_below(&g, (uint64_t)r->N);
    int32_t b = (int32_t)fs__rng_below(&g, (uint64_t)r->N - 1);
    b += b >= a; /* b drawn from the other N - 1 sites */
    double gbps = rates[fs__rng_below(&g, (uint64_t)n_rates)];
    double hold = expo(&g, holding);
    int counted = i >= warm;
    if (counted) {
      samples++;
      for (int32_t x = 0; x < r->s.n_bands * r->C; x++) used[x] += (double)r->band_core_used[x];
      if (samples % FRAG_EVERY == 1) {
        out->frag += fs_wan_rsca_fragmentation(r);
        frag_samples++;
      }
    }
    int32_t lp;
    fs_wan_sdm_status st = fs_wan_rsca_add(r, a, b, gbps, &lp);
    if (counted) {
      out->counted++;
      out->offered_gbps += gbps;
      if (st != FS_WAN_SDM_OK) {
        out->blocked++;
        out->blocked_gbps += gbps;
        out->blocked_xt += st == FS_WAN_SDM_BLOCKED_XT;
        out->blocked_spectrum += st == FS_WAN_SDM_BLOCKED_SPECTRUM;
        out->blocked_reach += st == FS_WAN_SDM_BLOCKED_REACH || st == FS_WAN_SDM_BLOCKED_NOPATH;
      }
    }
    if (st == FS_WAN_SDM_OK) {
      fs__heap_ent e = {now + hold, (uint64_t)i, lp, 0};
      if (fs__heap_push(&h, e)) {
        fs__heap_free(&h);
        return fs_err_set(err, FS_ENOMEM, "out of memory");
      }
      out->max_live = r->n_live > out->max_live ? r->n_live : out->max_live;
    }
    if (o->progress && i % PROGRESS_EVERY == 0)
      o->progress(o->ctx, done0 + scale * (double)i / (double)o->requests);
  }
  fs__heap_free(&h);
  out->pb = out->counted ? (double)out->blocked / (double)out->counted : 0;
  out->bbr = out->offered_gbps > 0 ? out->blocked_gbps / out->offered_gbps : 0;
  out->frag = frag_samples ? out->frag / (double)frag_samples : 0;
  for (int32_t bi = 0; bi < r->s.n_bands; bi++) {
    double s = 0;
    for (int32_t c = 0; c < r->C; c++) {
      s += used[bi * r->C + c];
      out->core_occ[c] += used[bi * r->C + c] / ((double)samples * r->F * r->U);
    }
    out->band_occ[bi] = s / ((double)samples * r->F * r->C * r->s.bands[bi].slots);
  }
  return 0;
}

int fs_wan_dynamic_seed(fs_wan_rsca *r, const fs_wan_dyn_opts *o, uint64_t seed,
                        fs_wan_dyn_run *out, fs_err *err) {
  int rc = check_opts(r, o, err);
  return rc ? rc : run_seed(r, o, seed, out, 0, 1, err);
}

/* Mean and 95 % half-width of x[0..n). */
static void mean_ci(const double *x, int32_t n, double *mean, double *ci) {
  double s = 0, v = 0;
  for (int32_t i = 0; i < n; i++) s += x[i];
  *mean = s / n;
  for (int32_t i = 0; i < n; i++) v += (x[i] - *mean) * (x[i] - *mean);
  *ci = n > 1 ? fs_wan_t975(n - 1) * sqrt(v / (n - 1) / n) : NAN;
}

/* Kaufman-Roberts on the network's one fibre of one core (fixed grid: each
 * request takes b_i wavelengths, anywhere), per request and per Gb/s. */
static void analytic(const fs_wan_rsca *r, const fs_wan_dyn_opts *o, fs_wan_dyn_point *p) {
  p->analytic_pb = p->analytic_bbr = NAN;
  const fs_wan *w = r->w;
  const fs_wan_traffic *t = &r->s.traffic;
  if (r->F != 1 || r->C != 1 || r->s.n_bands != 1 || w->grid.kind != FS_WAN_FIXED) return;
  int32_t n = t->n_rates > 0 ? t->n_rates : 1, b[FS_WAN_MAX_RATES];
  double a[FS_WAN_MAX_RATES], bl[FS_WAN_MAX_RATES], rate[FS_WAN_MAX_RATES];
  int32_t m = -1;
  for (int32_t x = w->n_mods - 1; x >= 0 && m < 0; x--)
    if (r->s.bands[0].reach_km[x] >= w->fibres[0].km) m = x;
  if (m < 0) return;
  for (int32_t i = 0; i < n; i++) {
    rate[i] = t->n_rates > 0 ? t->rates_gbps[i] : 100;
    b[i] = (int32_t)ceil(rate[i] / fs_wan_unit_gbps(w, m) - 1e-9);
    a[i] = o->load_erlang / n;
  }
  if (fs_wan_kaufman_roberts(r->s.bands[0].slots, n, a, b, bl)) return;
  double pb = 0, bw = 0, off = 0;
  for (int32_t i = 0; i < n; i++) {
    pb += bl[i] / n;
    bw += rate[i] * bl[i];
    off += rate[i];
  }
  p->analytic_pb = pb;
  p->analytic_bbr = bw / off;
}

int fs_wan_dynamic(fs_wan_rsca *r, const fs_wan_dyn_opts *o, fs_wan_dyn_point *out, fs_err *err) {
  int rc = check_opts(r, o, err);
  if (rc) return rc;
  double *x = fs__calloc((size_t)o->seeds * 3, sizeof(double));
  if (!x) return fs_err_set(err, FS_ENOMEM, "out of memory");
  memset(out, 0, sizeof(*out));
  out->load_erlang = o->load_erlang;
  out->seeds = o->seeds;
  out->cores = r->C;
  out->n_bands = r->s.n_bands;
  for (int32_t s = 0; s < o->seeds; s++) {
    fs_wan_dyn_run run;
    if ((rc = run_seed(r, o, o->seed + (uint64_t)s, &run, (double)s / o->seeds,
                       1.0 / o->seeds, err))) {
      free(x);
      return rc;
    }
    x[s] = run.pb;
    x[o->seeds + s] = run.bbr;
    x[2 * o->seeds + s] = run.frag;
    out->requests += run.counted;
    out->blocked_xt += run.blocked_xt;
    out->blocked_spectrum += run.blocked_spectrum;
    out->blocked_reach += run.blocked_reach;
    if (run.fixed_blocked > out->fixed_blocked) out->fixed_blocked = run.fixed_blocked;
    for (int32_t b = 0; b < r->s.n_bands; b++) out->band_occ[b] += run.band_occ[b] / o->seeds;
    for (int32_t c = 0; c < r->C; c++) out->core_occ[c] += run.core_occ[c] / o->seeds;
  }
  mean_ci(x, o->seeds, &out->pb, &out->pb_ci);
  mean_ci(x + o->seeds, o->seeds, &out->bbr, &out->bbr_ci);
  mean_ci(x + 2 * o->seeds, o->seeds, &out->frag, &out->frag_ci);
  free(x);
  analytic(r, o, out);
  return 0;
}
