/* Routing, spectrum and core assignment on multi-core, multi-band fibres
 * (docs/model-wan-sdm.md "RSCA"). A request tries its k shortest paths in
 * order, each band in file order with the most efficient format in that
 * band's reach, then cores and slots by the policy; a candidate is valid
 * when its units are free on every fibre of the path (continuity, and
 * contiguity on a flexgrid), and, for the policies that check it, when
 * neither its crosstalk nor the crosstalk it adds to the lightpaths on
 * adjacent cores passes their format's threshold.
 *
 * Costs: free spectrum of a core along a path is the OR of hops bitsets
 * (hops x units / 64 words); free runs are found with count-trailing-zeros;
 * a crosstalk check is hops x neighbours x units / 64, plus the same for
 * every lightpath it touches. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "wan_sdm_internal.h"

int fs_wan_policy_parse(const char *name, fs_wan_policy *out) {
  if (!strcmp(name, "first-fit")) *out = FS_WAN_POLICY_FIRST_FIT;
  else if (!strcmp(name, "xt-aware")) *out = FS_WAN_POLICY_XT_AWARE;
  else if (!strcmp(name, "xt-avoid")) *out = FS_WAN_POLICY_XT_AVOID;
  else return FS_EINVAL;
  return 0;
}

const char *fs_wan_policy_name(fs_wan_policy p) {
  switch (p) {
    case FS_WAN_POLICY_FIRST_FIT: return "first-fit";
    case FS_WAN_POLICY_XT_AWARE: return "xt-aware";
    case FS_WAN_POLICY_XT_AVOID: return "xt-avoid";
  }
  return "?";
}

const char *fs_wan_sdm_status_name(fs_wan_sdm_status s) {
  switch (s) {
    case FS_WAN_SDM_OK: return "ok";
    case FS_WAN_SDM_BLOCKED_SPECTRUM: return "spectrum";
    case FS_WAN_SDM_BLOCKED_XT: return "crosstalk";
    case FS_WAN_SDM_BLOCKED_REACH: return "reach";
    case FS_WAN_SDM_BLOCKED_NOPATH: return "no-path";
  }
  return "?";
}

/* ---- bitsets ---- */

static uint64_t word_mask(int32_t w, int32_t first, int32_t end) {
  int32_t lo = w * 64, hi = lo + 64;
  if (end <= lo || first >= hi) return 0;
  int32_t a = first > lo ? first - lo : 0, b = end < hi ? end - lo : 64;
  uint64_t m = b == 64 ? ~0ULL : ((1ULL << b) - 1);
  return m & ~((1ULL << a) - 1);
}

int fs__bits_any(const uint64_t *b, int32_t first, int32_t count) {
  int32_t end = first + count;
  for (int32_t w = first >> 6; w <= (end - 1) >> 6; w++)
    if (b[w] & word_mask(w, first, end)) return 1;
  return 0;
}

int32_t fs__bits_count(const uint64_t *b, int32_t first, int32_t count) {
  int32_t end = first + count, n = 0;
  for (int32_t w = first >> 6; w <= (end - 1) >> 6; w++)
    n += __builtin_popcountll(b[w] & word_mask(w, first, end));
  return n;
}

static void bits_set(uint64_t *b, int32_t first, int32_t count, int on) {
  int32_t end = first + count;
  for (int32_t w = first >> 6; w <= (end - 1) >> 6; w++) {
    uint64_t m = word_mask(w, first, end);
    b[w] = on ? b[w] | m : b[w] & ~m;
  }
}

/* The first set bit of free at or after `from` (below `end`), or -1. */
static int32_t next_set(const uint64_t *b, int32_t from, int32_t end, int invert) {
  for (int32_t w = from >> 6; w * 64 < end; w++) {
    uint64_t x = (invert ? ~b[w] : b[w]) & word_mask(w, from, end);
    if (x) return w * 64 + __builtin_ctzll(x);
  }
  return -1;
}

/* ---- state ---- */

static uint64_t *occ_of(const fs_wan_rsca *r, int32_t f, int32_t c) {
  return r->occ + ((size_t)f * r->C + c) * r->W;
}

void fs_wan_rsca_free(fs_wan_rsca *r) {
  if (!r) return;
  if (r->paths)
    for (int32_t s = 0; s < r->N; s++)
      for (int32_t d = s + 1; d < r->N; d++)
        for (int32_t j = 0; j < r->npaths[s * r->N + d]; j++)
          free(r->paths[((size_t)s * r->N + d) * r->k + j].fibres);
  FS__FREE_ALL(r->npaths, r->paths, r->occ, r->owner, r->xt_tab, r->lps, r->free_ids, r->fmark,
               r->lseen, r->band_core_used, r);
}

/* Yen's k shortest paths of every pair, once: src < dst computed, dst > src
 * sharing them (a path's fibres are the same either way). */
static int build_paths(fs_wan_rsca *r, fs_err *err) {
  int32_t N = r->N, k = r->k;
  for (int32_t s = 0; s < N; s++)
    for (int32_t d = s + 1; d < N; d++) {
      fs_wan_path *p = NULL;
      int32_t n = 0;
      int rc = fs_wan_k_shortest(r->w, s, d, k, -1, &p, &n, err);
      if (rc) return rc;
      for (int32_t j = 0; j < n; j++) {
        fs__rpath *q = &r->paths[((size_t)s * N + d) * k + j];
        q->hops = p[j].hops;
        q->km = p[j].km;
        q->fibres = fs__calloc((size_t)p[j].hops, sizeof(int32_t));
        if (!q->fibres) {
          fs_wan_paths_free(p, n);
          return fs_err_set(err, FS_ENOMEM, "out of memory");
        }
        memcpy(q->fibres, p[j].fibres, (size_t)p[j].hops * sizeof(int32_t));
        r->paths[((size_t)d * N + s) * k + j] = *q;
      }
      r->npaths[s * N + d] = r->npaths[d * N + s] = n;
      fs_wan_paths_free(p, n);
    }
  return 0;
}

int fs_wan_rsca_new(const fs_wan *w, const fs_wan_sdm *s, fs_wan_policy p, int32_t k,
                    fs_wan_rsca **out, fs_err *err) {
  *out = NULL;
  if (k < 1 || k > FS_WAN_MAX_K)
    return fs_err_set(err, FS_EINVAL, "k must be in [1, %d], got %d", FS_WAN_MAX_K, k);
  fs_wan_rsca *r = fs__calloc(1, sizeof(*r));
  if (!r) return fs_err_set(err, FS_ENOMEM, "out of memory");
  r->w = w;
  r->s = *s;
  r->policy = p;
  r->k = k;
  r->N = w->n_sites;
  r->F = w->n_fibres;
  r->C = s->cores;
  r->U = s->units;
  r->W = (s->units + 63) / 64;
  size_t cells = (size_t)r->F * r->C;
  r->lps_cap = 64;
  r->npaths = fs__calloc((size_t)r->N * r->N, sizeof(int32_t));
  r->paths = fs__calloc((size_t)r->N * r->N * k, sizeof(fs__rpath));
  r->occ = fs__calloc(cells * r->W, sizeof(uint64_t));
  r->owner = fs__malloc(cells * r->U, sizeof(int32_t));
  r->xt_tab = fs__calloc((size_t)r->F * (FS_WAN_MAX_ADJ + 1), sizeof(double));
  r->lps = fs__calloc((size_t)r->lps_cap, sizeof(fs__rlp));
  r->free_ids = fs__calloc((size_t)r->lps_cap, sizeof(int32_t));
  r->lseen = fs__calloc((size_t)r->lps_cap, sizeof(int32_t));
  r->fmark = fs__calloc((size_t)r->F, sizeof(int32_t));
  r->band_core_used = fs__calloc((size_t)FS_WAN_MAX_BANDS * r->C, sizeof(int64_t));
  if (!r->npaths || !r->paths || !r->occ || !r->owner || !r->xt_tab || !r->lps ||
      !r->free_ids || !r->lseen || !r->fmark || !r->band_core_used) {
    fs_wan_rsca_free(r);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  for (int32_t c = 0; c < r->C; c++) r->deg[c] = fs_wan_core_neighbours(s->layout, c, r->adj[c]);
  r->hetero = s->n_types > 0 && r->C > 1;
  for (int32_t c = 0; c < r->C; c++)
    for (int32_t j = 0; j < r->deg[c]; j++) r->hpair[c][j] = fs_wan_xt_h_pair(s, c, r->adj[c][j]);
  for (int32_t f = 0; f < r->F; f++)
    for (int32_t n = 0; n <= FS_WAN_MAX_ADJ; n++)
      r->xt_tab[f * (FS_WAN_MAX_ADJ + 1) + n] = fs_wan_xt(n, s->h_per_m, w->fibres[f].km * 1e3);
  for (int32_t m = 0; m < w->n_mods; m++) r->thr[m] = pow(10, s->xt_threshold_db[m] / 10);
  int rc = build_paths(r, err);
  if (rc) {
    fs_wan_rsca_free(r);
    return rc;
  }
  fs_wan_rsca_reset(r);
  *out = r;
  return 0;
}

void fs_wan_rsca_reset(fs_wan_rsca *r) {
  size_t cells = (size_t)r->F * r->C;
  memset(r->occ, 0, cells * r->W * sizeof(uint64_t));
  for (size_t i = 0; i < cells * r->U; i++) r->owner[i] = -1;
  memset(r->band_core_used, 0, (size_t)FS_WAN_MAX_BANDS * r->C * sizeof(int64_t));
  /* ids handed out lowest first, so a run's ids depend on its history only */
  r->n_free = r->lps_cap;
  for (int32_t i = 0; i < r->lps_cap; i++) {
    r->free_ids[i] = r->lps_cap - 1 - i;
    r->lps[i].live = 0;
  }
  r->n_live = 0;
}

static int32_t new_id(fs_wan_rsca *r) {
  if (!r->n_free) {
    int32_t cap = r->lps_cap * 2;
    fs__rlp *l = realloc(r->lps, (size_t)cap * sizeof(*l));
    if (!l) return -1;
    r->lps = l;
    int32_t *f = realloc(r->free_ids, (size_t)cap * sizeof(int32_t));
    if (!f) return -1;
    r->free_ids = f;
    int32_t *s = realloc(r->lseen, (size_t)cap * sizeof(int32_t));
    if (!s) return -1;
    r->lseen = s;
    for (int32_t i = r->lps_cap; i < cap; i++) {
      r->lps[i].live = 0;
      r->lseen[i] = 0;
    }
    for (int32_t i = cap - 1; i >= r->lps_cap; i--) r->free_ids[r->n_free++] = i;
    r->lps_cap = cap;
  }
  return r->free_ids[--r->n_free];
}

/* ---- crosstalk ---- */

/* Crosstalk (linear) of channel ch of lightpath l, with one hypothetical
 * channel (core hc, units [hf, hf + hn)) lit on the fibres marked now, or
 * hc = -1 for none: over its fibres, the table's XT for the count of
 * adjacent cores with a unit in use overlapping the channel's. */
/* Crosstalk over fibre f from `lit` adjacent lit cores whose coupling
 * coefficients sum to hs: the table for homogeneous cores; for cores of
 * several types the coupled-power formula with their mean h (exact in the
 * linear regime, where it is 2 L hs; docs/model-wan-sdm.md). */
static double fibre_xt(const fs_wan_rsca *r, int32_t f, int32_t lit, double hs) {
  if (!r->hetero) return r->xt_tab[f * (FS_WAN_MAX_ADJ + 1) + lit];
  return lit ? fs_wan_xt(lit, hs / lit, r->w->fibres[f].km * 1e3) : 0;
}

static double ch_xt(const fs_wan_rsca *r, const fs__rlp *l, int32_t ch, int32_t hc, int32_t hf,
                    int32_t hn) {
  const fs__rpath *p = &r->paths[((size_t)l->src * r->N + l->dst) * r->k + l->path];
  int32_t c = l->core[ch], a = l->first[ch], n = l->count[ch];
  int hyp = hc >= 0 && a < hf + hn && hf < a + n;
  double x = 0;
  for (int32_t i = 0; i < p->hops; i++) {
    int32_t f = p->fibres[i], lit = 0;
    double hs = 0;
    for (int32_t j = 0; j < r->deg[c]; j++) {
      int32_t q = r->adj[c][j];
      if (fs__bits_any(occ_of(r, f, q), a, n) || (hyp && q == hc && r->fmark[f] == r->fstamp)) {
        lit++;
        hs += r->hpair[c][j];
      }
    }
    x += fibre_xt(r, f, lit, hs);
  }
  return x;
}

/* Whether a channel on core c, units [a, a + n), path p, format m keeps its
 * own crosstalk and that of every lightpath it overlaps on an adjacent core
 * within their thresholds. self: the id of the lightpath being placed
 * (its own channels are not rechecked). */
static int xt_ok(fs_wan_rsca *r, const fs__rpath *p, int32_t c, int32_t a, int32_t n, int32_t m,
                 int32_t self) {
  if (r->C == 1) return 1;
  double x = 0;
  for (int32_t i = 0; i < p->hops; i++) {
    int32_t f = p->fibres[i], lit = 0;
    double hs = 0;
    for (int32_t j = 0; j < r->deg[c]; j++)
      if (fs__bits_any(occ_of(r, f, r->adj[c][j]), a, n)) {
        lit++;
        hs += r->hpair[c][j];
      }
    x += fibre_xt(r, f, lit, hs);
  }
  if (x > r->thr[m]) return 0;
  if (r->fstamp == INT32_MAX || r->lstamp == INT32_MAX) { /* stamps wrap: clear the marks */
    memset(r->fmark, 0, (size_t)r->F * sizeof(int32_t));
    memset(r->lseen, 0, (size_t)r->lps_cap * sizeof(int32_t));
    r->fstamp = r->lstamp = 0;
  }
  r->fstamp++;
  r->lstamp++;
  for (int32_t i = 0; i < p->hops; i++) r->fmark[p->fibres[i]] = r->fstamp;
  for (int32_t i = 0; i < p->hops; i++) {
    int32_t f = p->fibres[i];
    for (int32_t j = 0; j < r->deg[c]; j++) {
      int32_t q = r->adj[c][j];
      const uint64_t *o = occ_of(r, f, q);
      const int32_t *own = r->owner + ((size_t)f * r->C + q) * r->U;
      for (int32_t u = next_set(o, a, a + n, 0); u >= 0; u = next_set(o, u + 1, a + n, 0)) {
        int32_t id = own[u];
        if (id < 0 || id == self || r->lseen[id] == r->lstamp) continue;
        r->lseen[id] = r->lstamp;
        const fs__rlp *l = &r->lps[id];
        for (int32_t ch = 0; ch < l->n_ch; ch++)
          if (l->core[ch] == q && ch_xt(r, l, ch, c, a, n) > r->thr[l->mod]) return 0;
      }
    }
  }
  return 1;
}

/* ---- assignment ---- */

static void place(fs_wan_rsca *r, int32_t id, const fs__rpath *p, int32_t c, int32_t a, int32_t n,
                  int on) {
  for (int32_t i = 0; i < p->hops; i++) {
    int32_t f = p->fibres[i];
    bits_set(occ_of(r, f, c), a, n, on);
    int32_t *own = r->owner + ((size_t)f * r->C + c) * r->U;
    for (int32_t u = a; u < a + n; u++) own[u] = on ? id : -1;
  }
}

/* Units of core c free on every fibre of p, inside band b: into fm. */
static void free_mask(const fs_wan_rsca *r, const fs__rpath *p, int32_t c, const fs_wan_band *b,
                      uint64_t *fm) {
  for (int32_t w = 0; w < r->W; w++) fm[w] = 0;
  for (int32_t i = 0; i < p->hops; i++) {
    const uint64_t *o = occ_of(r, p->fibres[i], c);
    for (int32_t w = 0; w < r->W; w++) fm[w] |= o[w];
  }
  for (int32_t w = 0; w < r->W; w++) fm[w] = ~fm[w] & word_mask(w, b->first, b->first + b->slots);
  if (r->slice_count > 0) /* inside the slice for its requests, outside for the others */
    for (int32_t w = 0; w < r->W; w++) {
      uint64_t sl = word_mask(w, r->slice_first, r->slice_first + r->slice_count);
      fm[w] &= r->in_slice ? sl : ~sl;
    }
}

/* Units in use on cores adjacent to c, overlapping [a, a + n), over p. */
static int32_t adj_cost(const fs_wan_rsca *r, const fs__rpath *p, int32_t c, int32_t a, int32_t n) {
  int32_t s = 0;
  for (int32_t i = 0; i < p->hops; i++)
    for (int32_t j = 0; j < r->deg[c]; j++) s += fs__bits_count(occ_of(r, p->fibres[i], r->adj[c][j]), a, n);
  return s;
}

typedef struct pick {
  int spectrum, xt_failed; /* a candidate with free units was seen; one failed crosstalk */
} pick;

/* One channel of n units for lightpath id on path p, band b, format m, by
 * the policy: 1 with *core, *first set, or 0. */
static int pick_channel(fs_wan_rsca *r, int32_t id, const fs__rpath *p, const fs_wan_band *b,
                        int32_t m, int32_t n, int32_t *core, int32_t *first, pick *pk) {
  uint64_t fm[FS_WAN_MAX_UNITS / 64];
  int32_t end = b->first + b->slots, best = -1, best_cost = 0;
  for (int32_t c = 0; c < r->C; c++) {
    free_mask(r, p, c, b, fm);
    for (int32_t s = next_set(fm, b->first, end, 0); s >= 0;) {
      int32_t e = next_set(fm, s, end, 1);
      if (e < 0) e = end;
      for (int32_t a = s; a + n <= e; a++) {
        pk->spectrum = 1;
        if (r->policy == FS_WAN_POLICY_FIRST_FIT) {
          if (!xt_ok(r, p, c, a, n, m, id)) {
            pk->xt_failed = 1;
            return 0;
          }
          *core = c;
          *first = a;
          return 1;
        }
        if (r->policy == FS_WAN_POLICY_XT_AWARE) {
          if (xt_ok(r, p, c, a, n, m, id)) {
            *core = c;
            *first = a;
            return 1;
          }
          pk->xt_failed = 1;
          continue;
        }
        /* xt-avoid: the run's two ends only (first and last fit), the one
         * overlapping the least adjacent spectrum */
        if (a != s && a != e - n) continue;
        int32_t cost = adj_cost(r, p, c, a, n);
        if (best >= 0 && cost >= best_cost) continue;
        if (!xt_ok(r, p, c, a, n, m, id)) {
          pk->xt_failed = 1;
          continue;
        }
        best = 1;
        best_cost = cost;
        *core = c;
        *first = a;
        if (!cost) return 1;
      }
      s = e < end ? next_set(fm, e, end, 0) : -1;
    }
  }
  return best >= 0;
}

/* The most efficient format whose reach in band b covers km, or -1. */
static int32_t band_mod(const fs_wan_rsca *r, const fs_wan_band *b, double km) {
  for (int32_t m = r->w->n_mods - 1; m >= 0; m--)
    if (b->reach_km[m] >= km) return m;
  return -1;
}

static void account(fs_wan_rsca *r, const fs__rlp *l, int sign) {
  const fs__rpath *p = &r->paths[((size_t)l->src * r->N + l->dst) * r->k + l->path];
  for (int32_t ch = 0; ch < l->n_ch; ch++)
    r->band_core_used[l->band * r->C + l->core[ch]] += sign * (int64_t)l->count[ch] * p->hops;
}

void fs_wan_rsca_set_slice(fs_wan_rsca *r, int32_t first, int32_t count) {
  if (first < 0 || count < 0 || first + count > r->U) first = count = 0;
  r->slice_first = first;
  r->slice_count = count;
}

static fs_wan_sdm_status add(fs_wan_rsca *r, int32_t src, int32_t dst, double gbps, int32_t *lp);

fs_wan_sdm_status fs_wan_rsca_add_to(fs_wan_rsca *r, int32_t src, int32_t dst, double gbps,
                                     int in_slice, int32_t *lp) {
  r->in_slice = in_slice && r->slice_count > 0;
  fs_wan_sdm_status st = add(r, src, dst, gbps, lp);
  r->in_slice = 0;
  return st;
}

fs_wan_sdm_status fs_wan_rsca_add(fs_wan_rsca *r, int32_t src, int32_t dst, double gbps,
                                  int32_t *lp) {
  return add(r, src, dst, gbps, lp);
}

static fs_wan_sdm_status add(fs_wan_rsca *r, int32_t src, int32_t dst, double gbps, int32_t *lp) {
  *lp = -1;
  if (src < 0 || dst < 0 || src >= r->N || dst >= r->N || src == dst ||
      !r->npaths[src * r->N + dst])
    return FS_WAN_SDM_BLOCKED_NOPATH;
  const fs_wan *w = r->w;
  int32_t id = new_id(r);
  if (id < 0) return FS_WAN_SDM_BLOCKED_SPECTRUM; /* out of memory: the request is refused */
  fs__rlp *l = &r->lps[id];
  int reach = 0;
  pick pk = {0, 0};
  for (int32_t j = 0; j < r->npaths[src * r->N + dst]; j++) {
    const fs__rpath *p = &r->paths[((size_t)src * r->N + dst) * r->k + j];
    for (int32_t bi = 0; bi < r->s.n_bands; bi++) {
      const fs_wan_band *b = &r->s.bands[bi];
      int32_t m = band_mod(r, b, p->km);
      if (m < 0) continue;
      reach = 1;
      double unit = fs_wan_unit_gbps(w, m);
      int32_t nch = 1, n = 1;
      double need = ceil(gbps / unit - 1e-9);
      if (w->grid.kind == FS_WAN_FLEX) {
        if (need + w->grid.guard > b->slots) continue;
        n = (int32_t)need + w->grid.guard;
      } else {
        if (need > FS_WAN_MAX_CHANNELS || need > b->slots) continue;
        nch = (int32_t)need;
      }
      *l = (fs__rlp){1, src, dst, j, bi, m, 0, gbps, {0}, {0}, {0}};
      int32_t ch = 0;
      for (; ch < nch; ch++) {
        int32_t c, a;
        if (!pick_channel(r, id, p, b, m, n, &c, &a, &pk)) break;
        place(r, id, p, c, a, n, 1);
        l->core[ch] = c;
        l->first[ch] = a;
        l->count[ch] = n;
        l->n_ch = ch + 1;
      }
      if (ch == nch) {
        account(r, l, +1);
        r->n_live++;
        *lp = id;
        return FS_WAN_SDM_OK;
      }
      for (int32_t x = 0; x < l->n_ch; x++) place(r, id, p, l->core[x], l->first[x], n, 0);
      l->live = 0;
      /* first-fit is blind to crosstalk: its one choice failed the check */
      if (r->policy == FS_WAN_POLICY_FIRST_FIT && pk.xt_failed) break;
    }
    if (r->policy == FS_WAN_POLICY_FIRST_FIT && pk.xt_failed) break;
  }
  r->free_ids[r->n_free++] = id;
  if (!reach) return FS_WAN_SDM_BLOCKED_REACH;
  return pk.xt_failed ? FS_WAN_SDM_BLOCKED_XT : FS_WAN_SDM_BLOCKED_SPECTRUM;
}

void fs_wan_rsca_release(fs_wan_rsca *r, int32_t lp) {
  if (lp < 0 || lp >= r->lps_cap || !r->lps[lp].live) return;
  fs__rlp *l = &r->lps[lp];
  const fs__rpath *p = &r->paths[((size_t)l->src * r->N + l->dst) * r->k + l->path];
  account(r, l, -1);
  for (int32_t ch = 0; ch < l->n_ch; ch++) place(r, lp, p, l->core[ch], l->first[ch], l->count[ch], 0);
  l->live = 0;
  r->n_live--;
  r->free_ids[r->n_free++] = lp;
}

int fs_wan_rsca_lp(const fs_wan_rsca *r, int32_t lp, fs_wan_sdm_lp *out) {
  if (lp < 0 || lp >= r->lps_cap || !r->lps[lp].live) return -1;
  const fs__rlp *l = &r->lps[lp];
  const fs__rpath *p = &r->paths[((size_t)l->src * r->N + l->dst) * r->k + l->path];
  memset(out, 0, sizeof(*out));
  out->src = l->src;
  out->dst = l->dst;
  out->hops = p->hops;
  out->fibres = p->fibres;
  out->km = p->km;
  out->gbps = l->gbps;
  out->band = l->band;
  out->mod = l->mod;
  out->n_ch = l->n_ch;
  for (int32_t ch = 0; ch < l->n_ch; ch++) {
    out->core[ch] = l->core[ch];
    out->first[ch] = l->first[ch];
    out->count[ch] = l->count[ch];
  }
  return 0;
}

int fs_wan_rsca_xt_db(const fs_wan_rsca *r, int32_t lp, double *xt_db, double *threshold_db) {
  if (lp < 0 || lp >= r->lps_cap || !r->lps[lp].live) return -1;
  const fs__rlp *l = &r->lps[lp];
  double worst = 0;
  for (int32_t ch = 0; ch < l->n_ch; ch++) {
    double x = ch_xt(r, l, ch, -1, 0, 0);
    worst = x > worst ? x : worst;
  }
  *xt_db = worst > 0 ? 10 * log10(worst) : -INFINITY;
  *threshold_db = r->s.xt_threshold_db[l->mod];
  return 0;
}

int32_t fs_wan_rsca_used(const fs_wan_rsca *r, int32_t f, int32_t core) {
  if (f < 0 || f >= r->F || core < 0 || core >= r->C) return 0;
  return fs__bits_count(occ_of(r, f, core), 0, r->U);
}
