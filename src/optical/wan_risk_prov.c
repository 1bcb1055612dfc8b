/* Provisioning with protection on the optical WAN (docs/model-wan-risk.md):
 * per demand in order, candidate working paths (the k shortest by km, or
 * the k most available of the FS_WAN_MAX_K shortest, or only those meeting
 * an availability target), a backup sharing no risk with the working path
 * (two-step on each candidate, then Bhandari's pair), first-fit spectrum;
 * shared backups (SBPP) take the block that needs the fewest new cells
 * among cells whose other sharers' working paths share no risk with this
 * one. Then each demand's availability, the plan as fs_wan_plan for
 * fs_wan_train, a failure of fibres or an SRLG, and the job's expected
 * completion time under failures.
 * State: a fibres x units cell table, and for SBPP a bitset of the
 * sharers' working risks per cell. Cost per demand: Yen's k (or 64) paths,
 * one Dijkstra per candidate, O(hops x units) spectrum scans. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/wan_risk.h"
#include "wan_internal.h"
#include "wan_risk_internal.h"

typedef struct pstate {
  fs_wan_pplan *p;
  int32_t words;     /* 64-bit words per risk bitset */
  uint64_t *share;   /* [cell * words]: working risks of the cell's backup sharers */
  int32_t *slice_of; /* [cell]: slice id or -1 */
  uint64_t *wbits;   /* scratch: a working path's risks */
} pstate;

static void route_free(fs_wan_route *r) {
  free(r->path.nodes), free(r->path.fibres), free(r->units);
  memset(r, 0, sizeof(*r));
}

void fs_wan_pplan_free(fs_wan_pplan *p) {
  if (!p) return;
  for (int32_t i = 0; i < p->n_demands; i++) {
    route_free(&p->d[i].work);
    route_free(&p->d[i].backup);
  }
  FS__FREE_ALL(p->demands, p->d, p->cell, p->share, p);
}

static void risk_bits(const fs_wan_risks *r, const fs_wan_path *p, uint64_t *bits, int32_t words) {
  memset(bits, 0, (size_t)words * sizeof(uint64_t));
  for (int32_t i = 0; i < p->hops; i++)
    for (int32_t j = r->fibre_start[p->fibres[i]]; j < r->fibre_start[p->fibres[i] + 1]; j++)
      bits[r->fibre_risk[j] / 64] |= 1ull << (r->fibre_risk[j] % 64);
}

/* Units for `gbps` on path with format m: dedicated (free cells only) or
 * shared (free cells, or SBPP backup cells whose sharers' risks avoid
 * wbits), fewest new cells then lowest index; first-fit when dedicated.
 * Fills r->units (malloc'd) and returns 1, 0 if none, FS_ENOMEM. */
static int find_units(pstate *s, const fs_wan_path *path, int32_t m, double gbps, int32_t slice,
                      int shared, fs_wan_route *r) {
  const fs_wan *w = s->p->w;
  int32_t U = w->grid.units, guard = w->grid.kind == FS_WAN_FLEX ? w->grid.guard : 0;
  double rate = fs_wan_unit_gbps(w, m), needf = ceil(gbps / rate - 1e-9);
  if (needf < 1) needf = 1;
  if (needf + guard > U) return 0;
  int32_t need = (int32_t)needf, cnt = need + guard;
  int32_t *cost = fs__malloc((size_t)U, sizeof(int32_t)); /* new cells, or -1 unusable */
  if (!cost) return FS_ENOMEM;
  for (int32_t u = 0; u < U; u++) {
    cost[u] = 0;
    for (int32_t i = 0; i < path->hops && cost[u] >= 0; i++) {
      size_t c = (size_t)path->fibres[i] * U + u;
      if (s->slice_of[c] != slice) cost[u] = -1;
      else if (s->p->cell[c] == 0) cost[u]++;
      else if (!shared || s->p->cell[c] != 2) cost[u] = -1;
      else
        for (int32_t k = 0; k < s->words && cost[u] >= 0; k++)
          if (s->share[c * s->words + k] & s->wbits[k]) cost[u] = -1;
    }
  }
  int32_t n = w->grid.kind == FS_WAN_FIXED ? need : cnt;
  r->units = fs__malloc((size_t)n, sizeof(int32_t));
  if (!r->units) {
    free(cost);
    return FS_ENOMEM;
  }
  int found = 0;
  if (w->grid.kind == FS_WAN_FIXED) {
    /* wavelengths one by one: the cheapest usable, lowest first */
    int32_t got = 0;
    for (; got < need; got++) {
      int32_t best = -1;
      for (int32_t u = 0; u < U; u++)
        if (cost[u] >= 0 && (best < 0 || cost[u] < cost[best])) best = u;
      if (best < 0) break;
      r->units[got] = best;
      cost[best] = -1;
    }
    found = got == need;
  } else {
    int32_t best = -1;
    int64_t best_cost = 0;
    for (int32_t st = 0; st + cnt <= U; st++) {
      int64_t c = 0;
      int ok = 1;
      for (int32_t u = st; u < st + cnt && ok; u++) ok = cost[u] >= 0, c += cost[u];
      if (!ok) continue;
      if (best < 0 || c < best_cost) best = st, best_cost = c;
      if (!shared) break;
    }
    if (best >= 0)
      for (int32_t u = 0; u < cnt; u++) r->units[u] = best + u;
    found = best >= 0;
  }
  free(cost);
  if (!found) {
    free(r->units);
    r->units = NULL;
    return 0;
  }
  r->n_units = n;
  r->mod = m;
  r->unit_gbps = rate;
  return 1;
}

/* Marks r's cells: 1 dedicated, 2 shared (with the working risks wbits). */
static int32_t commit(pstate *s, fs_wan_route *r, int kind) {
  const fs_wan *w = s->p->w;
  int32_t U = w->grid.units, newc = 0;
  for (int32_t i = 0; i < r->path.hops; i++)
    for (int32_t x = 0; x < r->n_units; x++) {
      size_t c = (size_t)r->path.fibres[i] * U + r->units[x];
      newc += s->p->cell[c] == 0;
      s->p->cell[c] = (int8_t)kind;
      if (kind == 2)
        for (int32_t k = 0; k < s->words; k++) s->share[c * s->words + k] |= s->wbits[k];
    }
  return newc;
}

typedef struct cand {
  fs_wan_path *paths;
  int32_t n;
} cand;

static int cmp_avail_desc(const void *x, const void *y, const fs_wan_risks *r) {
  const fs_wan_path *a = x, *b = y;
  double pa = fs_wan_path_availability(r, a), pb = fs_wan_path_availability(r, b);
  if (pa != pb) return pa > pb ? -1 : 1;
  return (a->km > b->km) - (a->km < b->km);
}

/* Candidate working paths of a demand, in the order tried. */
static int candidates(const fs_wan_pplan *p, const fs_wan_demand *d, cand *c, fs_err *err) {
  const fs_wan_protect_opts *o = &p->opts;
  int wide = o->routing == FS_WAN_ROUTE_RISK || o->target > 0;
  int rc = fs_wan_k_shortest(p->w, d->src, d->dst, wide ? FS_WAN_MAX_K : o->k, -1, &c->paths,
                             &c->n, err);
  if (rc || o->routing != FS_WAN_ROUTE_RISK) return rc;
  /* insertion sort by availability (stable: km order among equals) */
  for (int32_t i = 1; i < c->n; i++) {
    fs_wan_path t = c->paths[i];
    int32_t j = i;
    while (j > 0 && cmp_avail_desc(&c->paths[j - 1], &t, p->risks) > 0) {
      c->paths[j] = c->paths[j - 1];
      j--;
    }
    c->paths[j] = t;
  }
  return 0;
}

/* A working candidate and its backup: spectrum for both, committed.
 * 1 placed, 0 not (status raised to SPECTRUM if in reach), FS_ENOMEM. */
static int try_pair(pstate *s, int32_t di, const fs_wan_path *W, const fs_wan_path *B) {
  fs_wan_pplan *p = s->p;
  const fs_wan_demand *d = &p->demands[di];
  fs_wan_pdemand *pd = &p->d[di];
  int32_t mw = fs_wan_mod_for_km(p->w, W->km), mb = B ? fs_wan_mod_for_km(p->w, B->km) : 0;
  if (mw < 0 || mb < 0) return 0;
  if (p->opts.target > 0) {
    double a = B ? fs_wan_pair_availability(p->risks, W, B) : fs_wan_path_availability(p->risks, W);
    if (a < p->opts.target) return 0;
  }
  pd->status = FS_WAN_BLOCKED_SPECTRUM;
  fs_wan_route rw, rb;
  memset(&rw, 0, sizeof(rw));
  memset(&rb, 0, sizeof(rb));
  risk_bits(p->risks, W, s->wbits, s->words);
  int rc = find_units(s, W, mw, d->gbps, d->slice, 0, &rw);
  if (rc == 1 && B) rc = find_units(s, B, mb, d->gbps, d->slice, p->opts.scheme == FS_WAN_PROT_SBPP, &rb);
  if (rc == 1 && (fs__wan_path_dup(W, &rw.path) || (B && fs__wan_path_dup(B, &rb.path)))) rc = FS_ENOMEM;
  if (rc != 1) {
    route_free(&rw);
    route_free(&rb);
    return rc;
  }
  /* backup first: the working cells are then new dedicated ones (disjoint fibres) */
  if (B) pd->backup_cells = rb.path.hops * rb.n_units, commit(s, &rb, p->opts.scheme == FS_WAN_PROT_SBPP ? 2 : 1);
  commit(s, &rw, 1);
  pd->work_cells = rw.path.hops * rw.n_units;
  pd->work = rw;
  pd->backup = rb;
  pd->status = FS_WAN_OK;
  return 1;
}

static int place(pstate *s, int32_t di, fs_err *err) {
  fs_wan_pplan *p = s->p;
  const fs_wan_demand *d = &p->demands[di];
  fs_wan_pdemand *pd = &p->d[di];
  cand c = {NULL, 0};
  int rc = candidates(p, d, &c, err);
  if (rc) return rc;
  int prot = p->opts.scheme != FS_WAN_PROT_NONE, any_pair = 0, below = 0;
  pd->status = c.n == 0 ? FS_WAN_BLOCKED_NOPATH : FS_WAN_BLOCKED_REACH;
  for (int32_t i = 0, tried = 0; i < c.n && tried < p->opts.k && pd->status != FS_WAN_OK; i++) {
    const fs_wan_path *W = &c.paths[i];
    if (fs_wan_mod_for_km(p->w, W->km) < 0) continue;
    fs_wan_path B = {0, NULL, NULL, 0};
    if (prot) {
      rc = fs__wan_backup_for(p->w, p->risks, W, &B);
      if (rc < 0) break;
      if (rc == 0) continue;
      any_pair = 1;
    }
    if (p->opts.target > 0) {
      double a = prot ? fs_wan_pair_availability(p->risks, W, &B) : fs_wan_path_availability(p->risks, W);
      if (a < p->opts.target) {
        free(B.nodes), free(B.fibres);
        below = 1;
        continue;
      }
    }
    tried++;
    rc = try_pair(s, di, W, prot ? &B : NULL);
    free(B.nodes), free(B.fibres);
    if (rc < 0) break;
    rc = 0;
  }
  fs_wan_paths_free(c.paths, c.n);
  if (rc < 0) return fs_err_set(err, rc, "out of memory provisioning");
  if (prot && pd->status != FS_WAN_OK) {
    /* the two-step's trap: no candidate left a disjoint backup (or none had
     * spectrum); Bhandari's min-total-km disjoint pair is the last try */
    fs_wan_path W, B;
    rc = fs_wan_disjoint_pair(p->w, p->risks, d->src, d->dst, FS_WAN_PAIR_BHANDARI, &W, &B, err);
    if (rc < 0) return rc;
    if (rc == 1) {
      any_pair = 1;
      rc = try_pair(s, di, &W, &B);
      free(W.nodes), free(W.fibres), free(B.nodes), free(B.fibres);
      if (rc < 0) return fs_err_set(err, rc, "out of memory provisioning");
    }
    pd->no_pair = !any_pair;
    if (pd->no_pair) pd->status = FS_WAN_BLOCKED_NOPATH;
  }
  pd->below_target = below && pd->status != FS_WAN_OK && pd->status != FS_WAN_BLOCKED_SPECTRUM;
  return 0;
}

/* P(all risks in bits up) */
static double avail_bits(const fs_wan_risks *r, const uint64_t *bits, int32_t words) {
  double A = 1;
  for (int32_t k = 0; k < words; k++)
    for (uint64_t b = bits[k]; b; b &= b - 1) A *= 1 - r->unavail[k * 64 + __builtin_ctzll(b)];
  return A;
}

/* The sharers' working risks of demand di's SBPP backup (its own and its
 * backup's risks removed) into out. */
static void sharer_bits(const pstate *s, int32_t di, uint64_t *out) {
  const fs_wan_pplan *p = s->p;
  const fs_wan_pdemand *pd = &p->d[di];
  int32_t U = p->w->grid.units, words = s->words;
  uint64_t *own = out + words, *bb = out + 2 * words;
  memset(out, 0, (size_t)words * sizeof(uint64_t));
  for (int32_t i = 0; i < pd->backup.path.hops; i++)
    for (int32_t x = 0; x < pd->backup.n_units; x++) {
      size_t c = (size_t)pd->backup.path.fibres[i] * U + pd->backup.units[x];
      for (int32_t k = 0; k < words; k++) out[k] |= s->share[c * words + k];
    }
  risk_bits(p->risks, &pd->work.path, own, words);
  risk_bits(p->risks, &pd->backup.path, bb, words);
  for (int32_t k = 0; k < words; k++) out[k] &= ~(own[k] | bb[k]);
}

static void availabilities(pstate *s, uint64_t *scratch) {
  fs_wan_pplan *p = s->p;
  for (int32_t di = 0; di < p->n_demands; di++) {
    fs_wan_pdemand *pd = &p->d[di];
    if (pd->status != FS_WAN_OK) {
      pd->availability = 0;
      continue;
    }
    if (p->opts.scheme == FS_WAN_PROT_NONE) {
      pd->availability = fs_wan_path_availability(p->risks, &pd->work.path);
      continue;
    }
    double a = fs_wan_pair_availability(p->risks, &pd->work.path, &pd->backup.path);
    if (p->opts.scheme == FS_WAN_PROT_SBPP) {
      /* lost: W down, B up, and a sharer's working path down (it took the
       * spectrum first, the conservative case); the sharers' risks are
       * outside W and B, so independent of the first two events */
      double wdown_bup = a - fs_wan_path_availability(p->risks, &pd->work.path); /* P(W or B) - P(W) */
      sharer_bits(s, di, scratch);
      a -= wdown_bup * (1 - avail_bits(p->risks, scratch, s->words));
    }
    pd->availability = a;
  }
}

int fs_wan_protect(const fs_wan *w, const fs_wan_risks *r, const fs_wan_demand *d, int32_t n,
                   const fs_wan_protect_opts *o, fs_wan_pplan **out, fs_err *err) {
  *out = NULL;
  if (o->k < 1 || o->k > FS_WAN_MAX_K)
    return fs_err_set(err, FS_EINVAL, "k must be in [1, %d], got %d", FS_WAN_MAX_K, o->k);
  if ((int)o->scheme < 0 || o->scheme > FS_WAN_PROT_SBPP || (int)o->routing < 0 ||
      o->routing > FS_WAN_ROUTE_RISK || !(o->target >= 0 && o->target < 1))
    return fs_err_set(err, FS_EINVAL, "protect: bad scheme, routing or target %g", o->target);
  for (int32_t i = 0; i < n; i++)
    if (d[i].src < 0 || d[i].src >= w->n_sites || d[i].dst < 0 || d[i].dst >= w->n_sites ||
        d[i].src == d[i].dst || !(d[i].gbps > 0) || d[i].slice < -1 || d[i].slice >= w->n_slices)
      return fs_err_set(err, FS_EINVAL, "demand %d: bad sites, rate or slice", i);
  int32_t U = w->grid.units;
  size_t cells = (size_t)w->n_fibres * U;
  fs_wan_pplan *p = fs__calloc(1, sizeof(*p));
  pstate s;
  memset(&s, 0, sizeof(s));
  s.words = (r->n + 63) / 64;
  if (!p) return fs_err_set(err, FS_ENOMEM, "out of memory");
  p->w = w;
  p->risks = r;
  p->opts = *o;
  p->n_demands = n;
  p->demands = fs__malloc((size_t)n + 1, sizeof(*d));
  p->d = fs__calloc((size_t)n + 1, sizeof(*p->d));
  p->cell = fs__calloc(cells, 1);
  s.p = p;
  s.share = fs__calloc(cells * (size_t)s.words, sizeof(uint64_t));
  s.slice_of = fs__malloc(cells, sizeof(int32_t));
  s.wbits = fs__calloc((size_t)s.words * 3, sizeof(uint64_t));
  int rc = 0;
  if (!p->demands || !p->d || !p->cell || !s.share || !s.slice_of || !s.wbits) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  if (n) memcpy(p->demands, d, (size_t)n * sizeof(*d));
  for (size_t i = 0; i < cells; i++) s.slice_of[i] = -1;
  for (int32_t i = 0; i < w->n_slices; i++)
    for (int32_t x = 0; x < w->slices[i].n_fibres; x++)
      for (int32_t u = w->slices[i].first; u < w->slices[i].first + w->slices[i].count; u++)
        s.slice_of[(size_t)w->slices[i].fibres[x] * U + u] = i;
  for (int32_t i = 0; i < n && !rc; i++) rc = place(&s, i, err);
  if (rc) goto out;
  availabilities(&s, s.wbits);
  for (int32_t i = 0; i < n; i++) {
    p->blocked += p->d[i].status != FS_WAN_OK;
    p->cells_working += p->d[i].work_cells;
    p->cells_backup += p->d[i].backup_cells;
  }
  for (size_t i = 0; i < cells; i++) p->cells_used += p->cell[i] != 0;
out:
  if (o->scheme == FS_WAN_PROT_SBPP) { /* kept: the job's availability reads the sharers */
    p->share = s.share;
    p->words = s.words;
    s.share = NULL;
  }
  FS__FREE_ALL(s.share, s.slice_of, s.wbits);
  if (rc) {
    fs_wan_pplan_free(p);
    return rc;
  }
  *out = p;
  return 0;
}

/* ---- a failure ---- */

static int hits(const fs_wan_path *p, const uint8_t *ban) {
  for (int32_t i = 0; i < p->hops; i++)
    if (ban[p->fibres[i]]) return 1;
  return 0;
}

/* Re-routes demand di avoiding the banned fibres: the first k of the
 * FS_WAN_MAX_K shortest paths that avoid them, in reach, with free cells. */
static int restore_one(pstate *s, int32_t di, const uint8_t *ban, fs_wan_route *out, fs_err *err) {
  const fs_wan_pplan *p = s->p;
  const fs_wan_demand *d = &p->demands[di];
  fs_wan_path *paths = NULL;
  int32_t np = 0, tried = 0;
  int rc = fs_wan_k_shortest(p->w, d->src, d->dst, FS_WAN_MAX_K, -1, &paths, &np, err);
  if (rc) return rc;
  for (int32_t i = 0; i < np && tried < p->opts.k && rc == 0; i++) {
    int32_t m = fs_wan_mod_for_km(p->w, paths[i].km);
    if (hits(&paths[i], ban) || m < 0) continue;
    tried++;
    rc = find_units(s, &paths[i], m, d->gbps, d->slice, 0, out);
    if (rc == 1 && fs__wan_path_dup(&paths[i], &out->path)) rc = FS_ENOMEM;
    if (rc == 1) commit(s, out, 1);
  }
  fs_wan_paths_free(paths, np);
  if (rc < 0) {
    route_free(out);
    return fs_err_set(err, rc, "out of memory restoring");
  }
  return rc;
}

int fs_wan_fail(const fs_wan_pplan *p, const int32_t *failed, int32_t n,
                fs_wan_failure_result *out, fs_err *err) {
  const fs_wan *w = p->w;
  memset(out, 0, sizeof(*out));
  size_t cells = (size_t)w->n_fibres * w->grid.units;
  int32_t N = p->n_demands, U = w->grid.units;
  uint8_t *ban = fs__calloc((size_t)w->n_fibres + 1, 1), *taken = fs__calloc(cells + 1, 1);
  fs_wan_route *rest = fs__calloc((size_t)N + 1, sizeof(*rest));
  const fs_wan_route **act = fs__calloc((size_t)N + 1, sizeof(*act));
  fs_wan_pplan tmp = *p;
  pstate s;
  memset(&s, 0, sizeof(s));
  s.p = &tmp;
  s.words = 1;
  tmp.cell = fs__malloc(cells + 1, 1);
  s.slice_of = fs__malloc(cells + 1, sizeof(int32_t));
  s.wbits = fs__calloc(1, sizeof(uint64_t));
  int rc = 0;
  if (!ban || !taken || !rest || !act || !tmp.cell || !s.slice_of || !s.wbits) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  memcpy(tmp.cell, p->cell, cells);
  for (size_t i = 0; i < cells; i++) s.slice_of[i] = -1;
  for (int32_t i = 0; i < w->n_slices; i++)
    for (int32_t x = 0; x < w->slices[i].n_fibres; x++)
      for (int32_t u = w->slices[i].first; u < w->slices[i].first + w->slices[i].count; u++)
        s.slice_of[(size_t)w->slices[i].fibres[x] * U + u] = i;
  for (int32_t i = 0; i < n; i++)
    if (failed[i] >= 0 && failed[i] < w->n_fibres) ban[failed[i]] = 1;
  for (int32_t di = 0; di < N && !rc; di++) {
    const fs_wan_pdemand *pd = &p->d[di];
    if (pd->status != FS_WAN_OK) continue;
    if (!hits(&pd->work.path, ban)) {
      act[di] = &pd->work;
      continue;
    }
    out->affected++;
    if (p->opts.scheme == FS_WAN_PROT_NONE) {
      /* the failed lightpath's cells stay held while re-routing (as
       * fs_wan_restore): no demand jumps ahead of one placed before it */
      rc = restore_one(&s, di, ban, &rest[di], err);
      if (rc == 1) act[di] = &rest[di];
      rc = rc < 0 ? rc : 0;
    } else if (!hits(&pd->backup.path, ban)) {
      int free_cells = 1;
      const fs_wan_route *b = &pd->backup;
      for (int32_t i = 0; i < b->path.hops && free_cells; i++)
        for (int32_t x = 0; x < b->n_units && free_cells; x++)
          free_cells = !taken[(size_t)b->path.fibres[i] * U + b->units[x]];
      if (free_cells) {
        for (int32_t i = 0; i < b->path.hops; i++)
          for (int32_t x = 0; x < b->n_units; x++) taken[(size_t)b->path.fibres[i] * U + b->units[x]] = 1;
        act[di] = b;
      }
    }
    if (act[di]) out->survived++;
    else out->lost++;
  }
  if (rc) goto out;
  out->job_connected = 1;
  for (int32_t di = 0; di < N; di++)
    if (p->demands[di].job && !act[di]) out->job_connected = 0;
  rc = fs__wan_plan_of_routes(p, act, &out->after, err);
out:
  for (int32_t di = 0; rest && di < N; di++) route_free(&rest[di]);
  FS__FREE_ALL(ban, taken, rest, act, tmp.cell, s.slice_of, s.wbits);
  return rc;
}
