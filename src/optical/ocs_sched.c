/* Circuit schedules over time (ocs.h): slots from a decomposition (LPT or
 * McNaughton over d parallel OCSes; hybrid: configurations cut for the EPS),
 * their execution on a traffic matrix with per-circuit time lines, and the
 * EPS beside the circuits (max-min fair fluid, excess then spill).
 * Execution walks the union of slot boundaries: O(boundaries * (d*n + pairs
 * touched)); with an EPS, O(pairs with demand + flows + water-filling
 * rounds * live ports) more per EPS sub-epoch (no O(n^2) port scan). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/ocs.h"

static const char *const algo_names[FS_OCS_N_ALGOS] = {"bvn", "solstice", "static"};

const char *fs_ocs_algo_name(fs_ocs_algo a) {
  return a >= 0 && a < FS_OCS_N_ALGOS ? algo_names[a] : "?";
}

int fs_ocs_algo_parse(const char *s, fs_ocs_algo *out) {
  for (int a = 0; a < FS_OCS_N_ALGOS; a++)
    if (strcmp(s, algo_names[a]) == 0) {
      *out = (fs_ocs_algo)a;
      return 0;
    }
  return -1;
}

static int check_params(const fs_ocs_params *p, fs_err *err) {
  if (!(p->gbps > 0) || !isfinite(p->gbps))
    return fs_err_set(err, FS_EINVAL, "ocs: circuit rate must be > 0 Gb/s, got %g", p->gbps);
  if (!(p->delay_s >= 0) || !isfinite(p->delay_s))
    return fs_err_set(err, FS_EINVAL, "ocs: reconfiguration delay must be >= 0 s, got %g",
                      p->delay_s);
  if (p->degree < 1 || p->degree > 64)
    return fs_err_set(err, FS_EINVAL, "ocs: degree must be in [1, 64], got %d", p->degree);
  if (!(p->eps_gbps >= 0) || !isfinite(p->eps_gbps))
    return fs_err_set(err, FS_EINVAL, "ocs: EPS rate must be >= 0 Gb/s, got %g", p->eps_gbps);
  if (!(p->eps_threshold_s >= 0) || !isfinite(p->eps_threshold_s))
    return fs_err_set(err, FS_EINVAL, "ocs: EPS threshold must be >= 0 s, got %g",
                      p->eps_threshold_s);
  if ((p->eps_threshold_s > 0 || p->eps_balance) && p->eps_gbps == 0)
    return fs_err_set(err, FS_EINVAL,
                      "ocs: an EPS threshold (%g s) needs an EPS (eps_gbps > 0): without one "
                      "the configurations it leaves out would never be carried",
                      p->eps_threshold_s);
  return 0;
}

/* bytes per second of one circuit */
static double rate_Bps(const fs_ocs_params *p) { return p->gbps * 1e9 / 8.0; }

void fs_ocs_schedule_free(fs_ocs_schedule *s) {
  if (!s) return;
  for (int32_t k = 0; k < s->n_slots; k++) free(s->slots[k].dst);
  free(s->slots);
  memset(s, 0, sizeof(*s));
}

int fs_ocs_schedule_add(fs_ocs_schedule *s, int32_t ocs, double duration_s, const int32_t *dst,
                        fs_err *err) {
  if (ocs < 0 || ocs >= s->n_ocs)
    return fs_err_set(err, FS_EINVAL, "schedule: OCS %d out of range [0, %d)", ocs, s->n_ocs);
  if (!(duration_s >= 0) || !isfinite(duration_s))
    return fs_err_set(err, FS_EINVAL, "schedule: slot duration must be >= 0 s, got %g",
                      duration_s);
  if (fs__grow(&s->slots, &s->cap, (size_t)s->n_slots + 1, sizeof(*s->slots)))
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  int32_t *d = fs__malloc((size_t)(s->n > 0 ? s->n : 1), sizeof(*d));
  if (!d) return fs_err_set(err, FS_ENOMEM, "out of memory");
  memcpy(d, dst, (size_t)s->n * sizeof(*d));
  s->slots[s->n_slots].ocs = ocs;
  s->slots[s->n_slots].duration_s = duration_s;
  s->slots[s->n_slots].dst = d;
  s->n_slots++;
  return 0;
}

typedef struct lpt_item {
  int64_t w;
  int32_t k;
} lpt_item;

static int cmp_lpt(const void *a, const void *b) {
  const lpt_item *x = a, *y = b;
  if (x->w != y->w) return x->w < y->w ? 1 : -1; /* longest first */
  return (x->k > y->k) - (x->k < y->k);
}

/* The circuits of permutation pk: dst[i] = pk[i], or -1 for a self circuit
 * (no circuit at all). */
static void perm_to_config(const int32_t *pk, int32_t n, int32_t *dst) {
  for (int32_t i = 0; i < n; i++) dst[i] = pk[i] == i ? -1 : pk[i];
}

/* Merges runs of permutations that are equal once self circuits are
 * dropped into one item of their summed weight (one slot, no pointless
 * reconfiguration); returns the number of items. dst and prev are scratch
 * of n entries; items and starts hold d->n_perm entries. */
static int32_t merge_equal_perms(const fs_ocs_decomp *d, int32_t *dst, int32_t *prev,
                                 lpt_item *items, int32_t *starts) {
  int32_t n = d->n, n_items = 0;
  for (int32_t k = 0; k < d->n_perm; k++) {
    perm_to_config(d->perm + (size_t)k * n, n, dst);
    if (n_items > 0 && memcmp(dst, prev, (size_t)n * sizeof(*dst)) == 0) {
      items[n_items - 1].w += d->weight[k];
      continue;
    }
    memcpy(prev, dst, (size_t)n * sizeof(*dst));
    items[n_items].w = d->weight[k];
    items[n_items].k = k;
    starts[n_items] = k;
    n_items++;
  }
  return n_items;
}

/* The balance rule of the hybrid: the k smallest items go to the EPS, k
 * minimising the larger of the circuit time (spread evenly over the d
 * OCSes) and the EPS time of the stuffed residual (every line of a dropped
 * permutation carries its weight, so its line sums are the dropped
 * weights' sum: closed form L_e / E). Marks them by negating their weight.
 * Returns 0, or FS_ENOMEM (err set) with items unchanged. */
static int mark_balanced_cut(const fs_ocs_params *p, lpt_item *items, int32_t n_items,
                             fs_err *err) {
  double R = rate_Bps(p), E = p->eps_gbps * 1e9 / 8.0;
  lpt_item *asc = fs__malloc((size_t)n_items + 1, sizeof(*asc));
  if (!asc) return fs_err_set(err, FS_ENOMEM, "out of memory");
  double tc = 0;
  for (int32_t x = 0; x < n_items; x++) {
    asc[x] = items[x];
    asc[x].k = x;
    tc += p->delay_s + (double)items[x].w / R;
  }
  qsort(asc, (size_t)n_items, sizeof(*asc), cmp_lpt); /* longest first */
  double best = tc / p->degree, le = 0;
  int32_t best_k = 0;
  for (int32_t k = 1; k <= n_items; k++) {
    const lpt_item *it = &asc[n_items - k]; /* the k-th smallest */
    tc -= p->delay_s + (double)it->w / R;
    le += (double)it->w;
    double est = fmax(tc / p->degree, le / E);
    if (est < best) {
      best = est;
      best_k = k;
    }
  }
  /* drop exactly the best_k smallest: mark them by weight -1 */
  for (int32_t k = 1; k <= best_k; k++) items[asc[n_items - k].k].w = -items[asc[n_items - k].k].w;
  free(asc);
  return 0;
}

/* Hybrid: a configuration live for less than the threshold is left to the
 * EPS (Helios / Solstice: not worth a reconfiguration), or, with the
 * balance rule, the ones mark_balanced_cut picks. Judged on the merged
 * slot, before it is spread over the OCSes. Compacts items and starts to
 * the kept ones and counts the others in out->n_to_eps. Returns 0, or
 * FS_ENOMEM (err set) with items unchanged. */
static int cut_to_eps(const fs_ocs_params *p, lpt_item *items, int32_t *starts,
                      int32_t *n_items, fs_ocs_schedule *out, fs_err *err) {
  double R = rate_Bps(p), cut = 0;
  if (p->eps_balance) {
    int rc = mark_balanced_cut(p, items, *n_items, err);
    if (rc) return rc;
  } else {
    cut = p->eps_threshold_s;
  }
  int32_t kept = 0;
  for (int32_t x = 0; x < *n_items; x++) {
    if (items[x].w < 0 || (double)items[x].w / R < cut) {
      out->n_to_eps++;
      continue;
    }
    items[kept] = items[x];
    starts[kept] = starts[x];
    kept++;
  }
  *n_items = kept;
  return 0;
}

/* When the busiest OCS ends under McNaughton's wrap-around: the items in
 * order cut into runs of T bytes, one run per OCS (the last takes the
 * rest), a delay per piece. */
static double mcnaughton_makespan(const fs_ocs_params *p, const lpt_item *items,
                                  int32_t n_items, int64_t T) {
  int32_t dg = p->degree;
  double R = rate_Bps(p), mc_make = 0;
  int32_t o = 0, pieces = 0;
  int64_t fill = 0;
  for (int32_t x = 0; x < n_items; x++)
    for (int64_t w = items[x].w; w > 0;) {
      int64_t take = w < T - fill ? w : T - fill;
      pieces++;
      fill += take;
      w -= take;
      if (fill == T && o < dg - 1) {
        double e = pieces * p->delay_s + (double)fill / R;
        if (e > mc_make) mc_make = e;
        o++;
        fill = 0;
        pieces = 0;
      }
    }
  double e = pieces * p->delay_s + (double)fill / R;
  if (e > mc_make) mc_make = e;
  return mc_make;
}

/* When the busiest OCS ends under LPT: whole items, longest first (sorted),
 * each to the least loaded OCS (the lowest on a tie). load (d entries, all
 * zero) is left holding each OCS's busy time. */
static double lpt_makespan(const fs_ocs_params *p, const lpt_item *sorted, int32_t n_items,
                           double *load) {
  int32_t dg = p->degree;
  double R = rate_Bps(p), lpt_make = 0;
  for (int32_t x = 0; x < n_items; x++) {
    int32_t o = 0;
    for (int32_t q = 1; q < dg; q++)
      if (load[q] < load[o]) o = q;
    load[o] += p->delay_s + (double)sorted[x].w / R;
  }
  for (int32_t q = 0; q < dg; q++)
    if (load[q] > lpt_make) lpt_make = load[q];
  return lpt_make;
}

/* Adds LPT's slots to out: whole items, longest first, each to the least
 * loaded OCS. Returns 0 or fs_ocs_schedule_add's error. */
static int add_lpt_slots(const fs_ocs_params *p, const fs_ocs_decomp *d, const lpt_item *sorted,
                         int32_t n_items, int32_t *dst, double *load, fs_ocs_schedule *out,
                         fs_err *err) {
  int32_t n = d->n, dg = p->degree;
  double R = rate_Bps(p);
  int rc = 0;
  for (int32_t q = 0; q < dg; q++) load[q] = 0;
  for (int32_t x = 0; x < n_items && !rc; x++) {
    perm_to_config(d->perm + (size_t)sorted[x].k * n, n, dst);
    int32_t o = 0;
    for (int32_t q = 1; q < dg; q++)
      if (load[q] < load[o]) o = q;
    double dur = (double)sorted[x].w / R;
    load[o] += p->delay_s + dur;
    rc = fs_ocs_schedule_add(out, o, dur, dst, err);
  }
  return rc;
}

/* Adds McNaughton's slots to out: the items in order, cut into runs of T
 * bytes, one run per OCS, an item split at a cut running on two OCSes.
 * Returns 0 or fs_ocs_schedule_add's error. */
static int add_mcnaughton_slots(const fs_ocs_params *p, const fs_ocs_decomp *d,
                                const lpt_item *items, int32_t n_items, int64_t T,
                                int32_t *dst, fs_ocs_schedule *out, fs_err *err) {
  int32_t n = d->n, dg = p->degree;
  double R = rate_Bps(p);
  int rc = 0;
  int32_t o = 0;
  int64_t fill = 0;
  for (int32_t x = 0; x < n_items && !rc; x++) {
    perm_to_config(d->perm + (size_t)items[x].k * n, n, dst);
    for (int64_t w = items[x].w; w > 0 && !rc;) {
      int64_t take = w < T - fill ? w : T - fill;
      fill += take;
      w -= take;
      rc = fs_ocs_schedule_add(out, o, (double)take / R, dst, err);
      if (fill == T && o < dg - 1) {
        o++;
        fill = 0;
      }
    }
  }
  return rc;
}

/* Two ways to spread the slots over d OCSes; keeps the one whose busiest
 * OCS ends first. McNaughton's wrap-around (preemptive scheduling on
 * identical machines): the sequence cut into d runs of T = ceil(sum/d)
 * bytes, a slot split at a cut runs on two OCSes (legal: they are
 * different ports), at most d - 1 extra delays. LPT: whole slots, longest
 * first, to the least loaded OCS; fewer delays. McNaughton wins ties.
 * load (d entries, zero) and dst (n) are scratch. Returns 0, or an error
 * (err set) with out holding the slots added so far. */
static int spread_over_ocses(const fs_ocs_params *p, const fs_ocs_decomp *d,
                             const lpt_item *items, int32_t n_items, int32_t *dst, double *load,
                             fs_ocs_schedule *out, fs_err *err) {
  int32_t dg = p->degree;
  int64_t sum = 0;
  for (int32_t x = 0; x < n_items; x++) sum += items[x].w;
  int64_t T = (sum + dg - 1) / dg;
  double mc_make = mcnaughton_makespan(p, items, n_items, T);
  lpt_item *sorted = fs__malloc((size_t)n_items + 1, sizeof(*sorted));
  if (!sorted) return fs_err_set(err, FS_ENOMEM, "out of memory");
  memcpy(sorted, items, (size_t)n_items * sizeof(*items));
  qsort(sorted, (size_t)n_items, sizeof(*sorted), cmp_lpt);
  double lpt_make = lpt_makespan(p, sorted, n_items, load);
  int rc;
  if (dg > 1 && lpt_make < mc_make)
    rc = add_lpt_slots(p, d, sorted, n_items, dst, load, out, err);
  else
    rc = add_mcnaughton_slots(p, d, items, n_items, T, dst, out, err);
  free(sorted);
  return rc;
}

int fs_ocs_schedule_from_decomp(const fs_ocs_params *p, const fs_ocs_decomp *d,
                                fs_ocs_schedule *out, fs_err *err) {
  memset(out, 0, sizeof(*out));
  int rc = check_params(p, err);
  if (rc) return rc;
  int32_t n = d->n;
  out->n = n;
  out->n_ocs = p->degree;
  int32_t *dst = fs__malloc((size_t)(n > 0 ? n : 1), sizeof(*dst));
  int32_t *prev = fs__malloc((size_t)(n > 0 ? n : 1), sizeof(*prev));
  lpt_item *items = fs__malloc((size_t)d->n_perm + 1, sizeof(*items));
  int32_t *starts = fs__malloc((size_t)d->n_perm + 1, sizeof(*starts));
  double *load = fs__calloc((size_t)p->degree, sizeof(*load));
  if (!dst || !prev || !items || !starts || !load) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  int32_t n_items = merge_equal_perms(d, dst, prev, items, starts);
  if (p->eps_gbps > 0 && (p->eps_threshold_s > 0 || p->eps_balance) &&
      (rc = cut_to_eps(p, items, starts, &n_items, out, err)))
    goto out;
  rc = spread_over_ocses(p, d, items, n_items, dst, load, out, err);
out:
  FS__FREE_ALL(dst, prev, items, starts, load);
  if (rc) fs_ocs_schedule_free(out);
  return rc;
}

/* ---- execution ----------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct segbuf {
  fs_ocs_seg *v;
  size_t len, cap;
} segbuf;

static int seg_push(segbuf *b, const fs_ocs_seg *s) {
  if (fs__grow(&b->v, &b->cap, b->len + 1, sizeof(*b->v))) return FS_ENOMEM;
  b->v[b->len++] = *s;
  return 0;
}

static double line_bound(int32_t n, const int64_t *m, double *total) {
  int64_t L = 0, sum = 0;
  for (int32_t i = 0; i < n; i++) {
    int64_t r = 0, c = 0;
    for (int32_t j = 0; j < n; j++) {
      r += m[(size_t)i * n + j];
      c += m[(size_t)j * n + i];
    }
    sum += r;
    if (r > L) L = r;
    if (c > L) L = c;
  }
  *total = (double)sum;
  return (double)L;
}


/* ---- the EPS beside the circuits (hybrid) --------------------------------
 * A non-blocking packet switch: node i's egress port and node j's ingress
 * port, eps_gbps each; the pairs it carries share the ports by max-min
 * fairness (water-filling: the port with the smallest fair share saturates
 * first and fixes the rate of its flows). Rates change only when a flow
 * ends or at a slot boundary (the set of pairs with a live circuit changes),
 * so time advances in sub-epochs. Each sub-epoch costs one pass over the
 * pairs with demand left (a list kept in increasing pair order, so a pair's
 * row comes without a division) and a water-filling whose port shares are
 * cached (eps_maxmin). Every rate is the same double as with a full scan of
 * the 2n ports per round: same shares, same ties (lowest port), same order
 * of the updates, so results are bit for bit those of that simpler code. */
/* One class of EPS flows in a sub-epoch (parallel arrays, pair order). */
typedef struct eps_flows {
  int32_t *pair;          /* pair index i * n + j */
  int32_t *pa, *pb;       /* egress port i, ingress port n + j */
  double *go;             /* bytes to carry before the flow leaves its class */
  double *rate;           /* max-min rate */
  double *ttg;            /* go / rate: time to the goal (rate > 0 only) */
  size_t len;
} eps_flows;

typedef struct eps_ctx {
  int32_t n;
  double rate;            /* bytes per second per port */
  int residual_only;
  double *rem;            /* shared with the execution */
  const double *tol;      /* 1e-9 * demand per pair: "done" within rounding */
  const int32_t *cnt;     /* live circuits per pair in the current interval */
  const double *ccap;     /* bytes the schedule's circuits can carry per pair */
  const double *circ;     /* bytes carried on circuits so far per pair */
  int32_t *act;           /* pairs with demand left, increasing (compacted lazily) */
  size_t n_act;
  eps_flows cls[2];       /* 0: excess, 1: spill */
  uint8_t *frozen;
  int32_t *pstart, *plist, *pcount; /* port -> flows (CSR), 2n ports */
  double *cap;
  double *key;            /* cap / pcount per port while it has unfrozen flows */
  int32_t *live;          /* ports with unfrozen flows, in index order */
  double *eps_pair;       /* optional per-pair EPS bytes */
  double bytes, busy, finish;
} eps_ctx;

/* Water-filling of one class of flows on the ports' capacity left in cap[]
 * (which it consumes). Each round saturates the port of smallest fair share
 * cap / count (the lowest index on a tie) and freezes its unfrozen flows at
 * that share. The shares are kept per port and recomputed only when a
 * round changes them, and a round scans only the ports that still have
 * unfrozen flows (kept in index order): O(flows + rounds * live ports).
 * Same shares, same order of the updates as a plain scan of every port. */
static void eps_maxmin(eps_ctx *c, eps_flows *fl) {
  int32_t np = 2 * c->n, n = c->n;
  int32_t *restrict pcount = c->pcount, *restrict pstart = c->pstart, *restrict plist = c->plist;
  const int32_t *restrict fa = fl->pa, *restrict fb = fl->pb;
  int32_t *restrict live = c->live;
  double *restrict cap = c->cap, *restrict key = c->key, *restrict fr = fl->rate;
  uint8_t *restrict frozen = c->frozen;
  size_t nf = fl->len;
  /* port q < n: egress of node q; q >= n: ingress of node q - n */
  for (int32_t q = 0; q < np; q++) pcount[q] = 0;
  for (size_t f = 0; f < nf; f++) {
    pcount[fa[f]]++;
    pcount[fb[f]]++;
  }
  int32_t n_live = 0;
  pstart[0] = 0;
  for (int32_t q = 0; q < np; q++) {
    pstart[q + 1] = pstart[q] + pcount[q];
    if (pcount[q] > 0) {
      key[q] = cap[q] / pcount[q];
      live[n_live++] = q;
    }
    pcount[q] = 0; /* cursor while filling; ends as the count again */
  }
  for (size_t f = 0; f < nf; f++) {
    int32_t a = fa[f], b = fb[f];
    plist[pstart[a] + pcount[a]++] = (int32_t)f;
    plist[pstart[b] + pcount[b]++] = (int32_t)f;
    frozen[f] = 0;
  }
  size_t left = nf;
  while (left > 0) {
    /* the smallest share among the ports with unfrozen flows, dropping the
     * others from the list as it goes */
    int32_t best = -1, k = 0;
    double share = 0;
    for (int32_t x = 0; x < n_live; x++) {
      int32_t q = live[x];
      if (pcount[q] <= 0) continue;
      live[k++] = q;
      if (best < 0 || key[q] < share) {
        best = q;
        share = key[q];
      }
    }
    n_live = k;
    if (share < 0) share = 0;
    int other_in = best < n; /* the flows' other port: ingress if best is egress */
    for (int32_t x = pstart[best]; x < pstart[best + 1]; x++) {
      int32_t f = plist[x];
      if (frozen[f]) continue;
      frozen[f] = 1;
      fr[f] = share;
      left--;
      int32_t other = other_in ? fb[f] : fa[f];
      cap[other] -= share;
      if (--pcount[other] > 0) key[other] = cap[other] / pcount[other];
    }
    pcount[best] = 0;
    cap[best] = 0;
  }
}

/* The time to the first goal of a class (INFINITY if none); fills ttg. */
static double eps_first_goal(eps_flows *fl) {
  double dt = INFINITY;
  const double *restrict go = fl->go, *restrict fr = fl->rate;
  double *restrict ttg = fl->ttg;
  for (size_t f = 0; f < fl->len; f++)
    if (fr[f] > 0) {
      ttg[f] = go[f] / fr[f];
      if (ttg[f] < dt) dt = ttg[f];
    }
  return dt;
}

/* Moves a class's bytes over [t, tn) (step = tn - t; last: the sub-epoch
 * ends at the interval's end rather than at the first goal dt). */
static void eps_carry(eps_ctx *c, const eps_flows *fl, double t, double tn, double step,
                      double dt, int last) {
  double *restrict rem = c->rem;
  const double *restrict tolp = c->tol;
  for (size_t f = 0; f < fl->len; f++) {
    int32_t ij = fl->pair[f];
    double r = fl->rate[f], x = r * step, *rm = &rem[ij], tol = tolp[ij];
    if (r <= 0) continue;
    /* the flows that set dt reach their goal exactly at tn; others within
     * rounding (1e-12 of the clock, 1e-9 of the demand: as for circuits) */
    int reach = (!last && fl->ttg[f] <= dt) || fl->go[f] <= x + r * 1e-12 * tn + tol;
    double carried = reach ? fl->go[f] : x;
    *rm -= carried;
    if (*rm <= tol) {
      carried += *rm;
      double f_t = t + carried / r;
      if (f_t > tn) f_t = tn;
      if (f_t > c->finish) c->finish = f_t;
      *rm = 0;
    }
    c->bytes += carried;
    if (c->eps_pair) c->eps_pair[ij] += carried;
  }
}

/* Runs the EPS over [a, b) (b may be infinite: until no eligible demand is
 * left). Two classes, strict priority: first the pairs whose demand left
 * exceeds what their circuits can still carry (the excess: all of it for
 * a pair the schedule leaves out), max-min fair on the full ports, whether
 * or not a circuit of theirs is live; then, on the capacity they leave, the
 * other pairs with demand left and no live circuit (dark or waiting: spill;
 * not with residual_only). A class-1 flow leaves its class when its excess
 * is carried; it ends a sub-epoch then. */
static int eps_run(eps_ctx *c, double a, double b) {
  double t = a;
  int32_t n = c->n;
  const double *rem = c->rem; /* written by eps_carry: not restrict */
  const double *restrict ccap = c->ccap, *restrict circ = c->circ, *restrict tol = c->tol;
  const int32_t *restrict cnt = c->cnt;
  int32_t *restrict act = c->act;
  while (t < b) {
    /* one pass over the pairs with demand left (in pair order, so a pair's
     * row follows without a division) sorts them into the two classes */
    size_t k = 0;
    int32_t i = 0, base = 0;
    c->cls[0].len = c->cls[1].len = 0;
    for (size_t x = 0; x < c->n_act; x++) {
      int32_t ij = act[x];
      double rm = rem[ij];
      if (rm <= 0) continue;
      act[k++] = ij;
      double left = ccap[ij] - circ[ij];
      double ex = rm - (left > 0 ? left : 0);
      int excess = ex > tol[ij];
      if (!excess && (c->residual_only || cnt[ij] != 0)) continue;
      while (ij >= base + n) {
        i++;
        base += n;
      }
      eps_flows *fl = &c->cls[excess ? 0 : 1];
      size_t f = fl->len++;
      fl->go[f] = excess ? ex : rm;
      fl->pa[f] = i;
      fl->pb[f] = n + ij - base;
      fl->pair[f] = ij;
    }
    c->n_act = k;
    if (c->cls[0].len + c->cls[1].len == 0) break;
    for (int32_t q = 0; q < 2 * n; q++) c->cap[q] = c->rate;
    eps_maxmin(c, &c->cls[0]);
    if (c->cls[1].len > 0) eps_maxmin(c, &c->cls[1]);
    double dt = eps_first_goal(&c->cls[0]), dt1 = eps_first_goal(&c->cls[1]);
    if (dt1 < dt) dt = dt1;
    if (!isfinite(dt)) return FS_EINTERNAL; /* every EPS share zero: cannot happen with rate > 0 */
    int last = t + dt >= b;
    double step = last ? b - t : dt, tn = last ? b : t + dt;
    eps_carry(c, &c->cls[0], t, tn, step, dt, last);
    eps_carry(c, &c->cls[1], t, tn, step, dt, last);
    c->busy += step;
    t = tn;
  }
  return 0;
}

int fs_ocs_execute(const fs_ocs_params *p, const fs_ocs_schedule *s, const int64_t *m,
                   fs_ocs_result *res, fs_ocs_seg **segs, size_t *n_segs, fs_err *err) {
  return fs_ocs_execute_hybrid(p, s, m, res, segs, n_segs, NULL, err);
}

/* Rejects a schedule whose OCS count differs from the degree, or a slot on
 * an OCS out of range or with an invalid configuration. Returns 0 or
 * FS_EINVAL (err names the slot). */
static int check_schedule(const fs_ocs_params *p, const fs_ocs_schedule *s, fs_err *err) {
  if (s->n_ocs != p->degree)
    return fs_err_set(err, FS_EINVAL, "schedule has %d OCSes but the degree is %d", s->n_ocs,
                      p->degree);
  int32_t n = s->n, d = s->n_ocs;
  for (int32_t k = 0; k < s->n_slots; k++) {
    if (s->slots[k].ocs < 0 || s->slots[k].ocs >= d)
      return fs_err_set(err, FS_EINVAL, "schedule: slot %d: OCS %d out of range [0, %d)", k,
                        s->slots[k].ocs, d);
    fs_err e2 = {0, ""};
    int rc;
    if ((rc = fs_ocs_config_check(n, s->slots[k].dst, &e2)))
      return fs_err_set(err, rc, "schedule: slot %d (OCS %d): %s", k, s->slots[k].ocs, e2.msg);
  }
  return 0;
}

/* The working state of one execution. Per slot: when it starts, goes live
 * and ends, and its OCS's slot before it; every such time in times[nt];
 * per OCS: its clock, its reconfiguration time, its current slot; per
 * pair: bytes left, bytes carried in the interval, live circuits (cnt, the
 * pairs with cnt > 0 in touched). The EPS works on its own arrays (ec). */
typedef struct exec_state {
  double *t_start, *t_live, *t_end;
  int32_t *prev_slot;
  double *times;
  size_t nt;
  double *clock;
  int32_t *last, *cur;
  double *rem, *carry;
  int32_t *cnt, *touched;
  double *slot_delay;
  segbuf sb;
  eps_ctx ec;
  double *ccap, *circ, *tol; /* hybrid only: the EPS's, owned here */
  double finish, circuit_bytes;
} exec_state;

/* Allocates the execution's arrays (clock, carry and cnt zeroed) for ns
 * slots, d OCSes and nn pairs. Returns 0 or -1; exec_free frees either. */
static int exec_alloc(exec_state *x, size_t ns, int32_t d, size_t nn) {
  x->t_start = fs__malloc(ns + 1, sizeof(double));
  x->t_live = fs__malloc(ns + 1, sizeof(double));
  x->t_end = fs__malloc(ns + 1, sizeof(double));
  x->prev_slot = fs__malloc(ns + 1, sizeof(int32_t));
  x->times = fs__malloc(3 * ns + 1, sizeof(double));
  x->clock = fs__calloc((size_t)d, sizeof(double));
  x->last = fs__malloc((size_t)d, sizeof(int32_t));
  x->cur = fs__malloc((size_t)d, sizeof(int32_t));
  x->rem = fs__malloc(nn, sizeof(double));
  x->carry = fs__calloc(nn, sizeof(double));
  x->cnt = fs__calloc(nn, sizeof(int32_t));
  x->touched = fs__malloc(nn, sizeof(int32_t));
  x->slot_delay = fs__calloc((size_t)d, sizeof(double));
  return x->t_start && x->t_live && x->t_end && x->prev_slot && x->times && x->clock &&
                 x->last && x->cur && x->rem && x->carry && x->cnt && x->touched &&
                 x->slot_delay
             ? 0
             : -1;
}

/* Sets up the EPS beside the circuits: its rate and rules, the arrays of
 * its water-filling, the per-pair circuit capacity and carried bytes
 * (zeroed), the "done" tolerance and the pairs with demand. Returns 0 or
 * -1; exec_free frees either. */
static int eps_setup(exec_state *x, const fs_ocs_params *p, int32_t n, size_t nn,
                     const int64_t *m, double *eps_pair) {
  eps_ctx *ec = &x->ec;
  ec->n = n;
  ec->rate = p->eps_gbps * 1e9 / 8.0;
  ec->residual_only = p->eps_residual_only;
  ec->rem = x->rem;
  ec->cnt = x->cnt;
  ec->eps_pair = eps_pair;
  ec->act = fs__malloc(nn, sizeof(int32_t));
  ec->tol = x->tol = fs__malloc(nn, sizeof(double));
  int ok = ec->act && x->tol;
  for (int c = 0; c < 2; c++) {
    eps_flows *fl = &ec->cls[c];
    fl->pair = fs__malloc(nn, sizeof(int32_t));
    fl->pa = fs__malloc(nn, sizeof(int32_t));
    fl->pb = fs__malloc(nn, sizeof(int32_t));
    fl->go = fs__malloc(nn, sizeof(double));
    fl->rate = fs__malloc(nn, sizeof(double));
    fl->ttg = fs__malloc(nn, sizeof(double));
    ok = ok && fl->pair && fl->pa && fl->pb && fl->go && fl->rate && fl->ttg;
  }
  ec->frozen = fs__malloc(nn, 1);
  ec->pstart = fs__malloc((size_t)2 * n + 1, sizeof(int32_t));
  ec->pcount = fs__malloc((size_t)2 * n, sizeof(int32_t));
  ec->plist = fs__malloc(2 * nn, sizeof(int32_t));
  ec->cap = fs__malloc((size_t)2 * n, sizeof(double));
  ec->key = fs__malloc((size_t)2 * n, sizeof(double));
  ec->live = fs__malloc((size_t)2 * n, sizeof(int32_t));
  ec->ccap = x->ccap = fs__calloc(nn, sizeof(double));
  ec->circ = x->circ = fs__calloc(nn, sizeof(double));
  if (!ok || !ec->frozen || !ec->pstart || !ec->pcount || !ec->plist || !ec->cap || !ec->key ||
      !ec->live || !x->ccap || !x->circ)
    return -1;
  for (size_t ij = 0; ij < nn; ij++) x->tol[ij] = 1e-9 * (double)m[ij];
  for (size_t ij = 0; ij < nn; ij++)
    if (m[ij] > 0) ec->act[ec->n_act++] = (int32_t)ij;
  return 0;
}

static void exec_free(exec_state *x) {
  FS__FREE_ALL(x->sb.v, x->t_start, x->t_live, x->t_end, x->prev_slot, x->times, x->clock, x->last,
               x->cur, x->rem, x->carry, x->cnt, x->touched, x->slot_delay, x->ec.act, x->tol);
  for (int c = 0; c < 2; c++) {
    FS__FREE_ALL(x->ec.cls[c].pair, x->ec.cls[c].pa, x->ec.cls[c].pb, x->ec.cls[c].go,
                 x->ec.cls[c].rate, x->ec.cls[c].ttg);
  }
  FS__FREE_ALL(x->ec.frozen, x->ec.pstart, x->ec.pcount, x->ec.plist, x->ec.cap, x->ec.key,
               x->ec.live, x->ccap, x->circ);
}

/* Lays the slots out in time, OCS by OCS: each starts when its OCS's
 * previous one ends and goes live a delay later. Fills the per-slot times,
 * the sorted list of every boundary, each OCS's clock and reconfiguration
 * time and, with an EPS, the circuit capacity per pair: live time (the
 * delay too for a circuit unchanged from the OCS's previous slot) times
 * the rate. */
static void lay_out_slots(const fs_ocs_params *p, const fs_ocs_schedule *s, exec_state *x) {
  int32_t n = s->n, d = s->n_ocs;
  size_t ns = (size_t)s->n_slots;
  for (int32_t o = 0; o < d; o++) x->last[o] = x->cur[o] = -1;
  size_t nt = 0;
  for (size_t k = 0; k < ns; k++) {
    int32_t o = s->slots[k].ocs;
    x->prev_slot[k] = x->last[o];
    x->last[o] = (int32_t)k;
    x->t_start[k] = x->clock[o];
    x->t_live[k] = x->clock[o] + p->delay_s;
    x->t_end[k] = x->t_live[k] + s->slots[k].duration_s;
    x->clock[o] = x->t_end[k];
    x->slot_delay[o] += p->delay_s;
    x->times[nt++] = x->t_start[k];
    x->times[nt++] = x->t_live[k];
    x->times[nt++] = x->t_end[k];
    if (x->ccap) {
      const int32_t *pd = x->prev_slot[k] >= 0 ? s->slots[x->prev_slot[k]].dst : NULL;
      for (int32_t i = 0; i < n; i++) {
        int32_t j = s->slots[k].dst[i];
        if (j < 0) continue;
        int changed = p->all_stop || !pd || pd[i] != j;
        x->ccap[(size_t)i * n + j] +=
            rate_Bps(p) * (s->slots[k].duration_s + (changed ? 0 : p->delay_s));
      }
    }
  }
  qsort(x->times, nt, sizeof(double), cmp_double);
  x->nt = nt;
}

/* Moves each OCS's current slot to the one with t_start <= a (next[o]: its
 * next slot in array order, -1 after the last) and counts, per pair, the
 * circuits live over [a, ...): not dark (a circuit changed from the OCS's
 * previous slot is dark until the slot goes live). Returns the number of
 * pairs counted, listed in touched. */
/* Whether circuit i -> dst[i] of slot k is dark at time a: a circuit the
 * slot changed (all of them under all_stop, or with no slot before it) is
 * dark until the slot's reconfiguration ends (t_live). */
static int circuit_dark(const fs_ocs_params *p, const fs_ocs_schedule *s, const exec_state *x,
                        int32_t k, int32_t i, double a) {
  const int32_t *pd = x->prev_slot[k] >= 0 ? s->slots[x->prev_slot[k]].dst : NULL;
  int changed = p->all_stop || !pd || pd[i] != s->slots[k].dst[i];
  return changed && a < x->t_live[k];
}

static size_t mark_live_circuits(const fs_ocs_params *p, const fs_ocs_schedule *s,
                                 exec_state *x, int32_t *next, double a) {
  int32_t n = s->n, d = s->n_ocs;
  size_t ns = (size_t)s->n_slots, n_touched = 0;
  for (int32_t o = 0; o < d; o++) {
    while (next[o] >= 0 && x->t_start[next[o]] <= a) {
      x->cur[o] = next[o];
      int32_t k = next[o] + 1;
      while (k < (int32_t)ns && s->slots[k].ocs != o) k++;
      next[o] = k < (int32_t)ns ? k : -1;
    }
    int32_t k = x->cur[o];
    if (k < 0 || !(a < x->t_end[k])) continue;
    const int32_t *dst = s->slots[k].dst;
    for (int32_t i = 0; i < n; i++) {
      int32_t j = dst[i];
      if (j < 0 || circuit_dark(p, s, x, k, i, a)) continue;
      size_t ij = (size_t)i * n + j;
      if (x->cnt[ij]++ == 0) x->touched[n_touched++] = (int32_t)ij;
    }
  }
  return n_touched;
}

/* Carries, over [a, b), each touched pair's bytes on its live circuits
 * (cnt of them at R each): sets carry[], takes it from rem[], adds it to
 * the circuit totals, and moves finish to when a pair completes. */
static void carry_on_circuits(exec_state *x, const int64_t *m, size_t n_touched, double R,
                              double a, double b) {
  for (size_t t = 0; t < n_touched; t++) {
    size_t ij = (size_t)x->touched[t];
    x->carry[ij] = 0;
    if (x->rem[ij] <= 0) continue;
    double rate = R * x->cnt[ij], cap = rate * (b - a);
    /* A slot sized for exactly w bytes carries w up to rounding: slot
     * times are float sums, so b - a can be short by a few ulps of b.
     * Finish within 1e-12 of the clock (or 1e-9 of the demand) rather
     * than leave dust behind. */
    if (x->rem[ij] <= cap + rate * 1e-12 * b + 1e-9 * (double)m[ij]) {
      double f = a + x->rem[ij] / rate;
      if (f > b) f = b;
      if (f > x->finish) x->finish = f;
      x->carry[ij] = x->rem[ij];
      x->rem[ij] = 0;
    } else {
      x->carry[ij] = cap;
      x->rem[ij] -= cap;
    }
    x->circuit_bytes += x->carry[ij];
    if (x->circ) x->circ[ij] += x->carry[ij];
  }
}

/* Appends the time line of [a, b): one segment per circuit of each OCS's
 * current slot, dark or live, a live one with its share of the pair's
 * bytes. Returns 0 or FS_ENOMEM. */
static int push_segments(const fs_ocs_params *p, const fs_ocs_schedule *s, exec_state *x,
                         double a, double b) {
  int32_t n = s->n, d = s->n_ocs;
  for (int32_t o = 0; o < d; o++) {
    int32_t k = x->cur[o];
    if (k < 0 || !(a < x->t_end[k])) continue;
    const int32_t *dst = s->slots[k].dst;
    for (int32_t i = 0; i < n; i++) {
      int32_t j = dst[i];
      if (j < 0) continue;
      fs_ocs_seg sg = {o, k, i, j, circuit_dark(p, s, x, k, i, a), a, b, 0};
      size_t ij = (size_t)i * n + j;
      /* concurrent live circuits of one pair share its bytes evenly */
      if (!sg.dark) sg.bytes = x->carry[ij] / x->cnt[ij];
      if (seg_push(&x->sb, &sg)) return FS_ENOMEM;
    }
  }
  return 0;
}

/* Walks the union of slot boundaries: in each interval the live circuits
 * carry their pairs' bytes and, with an EPS, the EPS carries the pairs
 * without one (disjoint from them); the time line grows if asked for.
 * After the last slot the EPS carries the rest. Returns 0 or an error
 * (err set). */
static int run_intervals(const fs_ocs_params *p, const fs_ocs_schedule *s, const int64_t *m,
                         exec_state *x, int hybrid, int want_segs, fs_err *err) {
  int32_t d = s->n_ocs;
  size_t ns = (size_t)s->n_slots;
  double R = rate_Bps(p);
  int rc;
  /* next slot of each OCS to become current, in array order */
  int32_t *next = x->last; /* reuse: rebuilt here as the first slot per OCS */
  for (int32_t o = 0; o < d; o++) next[o] = -1;
  for (size_t k = ns; k-- > 0;) next[s->slots[k].ocs] = (int32_t)k;
  for (size_t t = 0; t + 1 < x->nt; t++) {
    double a = x->times[t], b = x->times[t + 1];
    if (!(b > a)) continue;
    size_t n_touched = mark_live_circuits(p, s, x, next, a);
    carry_on_circuits(x, m, n_touched, R, a, b);
    if (hybrid && (rc = eps_run(&x->ec, a, b)))
      return fs_err_set(err, rc, "ocs: EPS stalled (no positive share)");
    if (want_segs && push_segments(p, s, x, a, b))
      return fs_err_set(err, FS_ENOMEM, "out of memory");
    for (size_t u = 0; u < n_touched; u++) x->cnt[x->touched[u]] = 0;
  }
  if (hybrid && (rc = eps_run(&x->ec, x->nt ? x->times[x->nt - 1] : 0, INFINITY)))
    return fs_err_set(err, rc, "ocs: EPS stalled (no positive share)");
  return 0;
}

/* The execution's figures: the busiest OCS's schedule and reconfiguration
 * time, completion (infinite with bytes left), the line bound L, delivery
 * and utilisation, against d circuits per node, plus its EPS port in a
 * hybrid. */
static void fill_result(const fs_ocs_params *p, const fs_ocs_schedule *s, const exec_state *x,
                        int hybrid, double L, double total, size_t nn, fs_ocs_result *res) {
  int32_t n = s->n, d = s->n_ocs;
  double R = rate_Bps(p), finish = x->finish;
  if (x->ec.finish > finish) finish = x->ec.finish;
  double undelivered = 0;
  for (size_t ij = 0; ij < nn; ij++) undelivered += x->rem[ij];
  memset(res, 0, sizeof(*res));
  int32_t last_o = 0;
  for (int32_t o = 1; o < d; o++)
    if (x->clock[o] > x->clock[last_o]) last_o = o;
  res->schedule_s = x->clock[last_o];
  res->reconfig_s = x->slot_delay[last_o];
  res->n_reconfig = s->n_slots;
  res->completion_s = undelivered > 0 ? INFINITY : finish;
  res->lower_bound_s = L / (R * d);
  res->delivered_bytes = total - undelivered;
  res->undelivered_bytes = undelivered;
  res->util = total > 0 && res->completion_s > 0 ? total / (R * n * d * res->completion_s) : 0;
  res->circuit_bytes = x->circuit_bytes;
  res->eps_bytes = x->ec.bytes;
  res->eps_busy_s = x->ec.busy;
  res->n_to_eps = s->n_to_eps;
  if (hybrid) {
    /* a node sends and receives at most d circuits plus its EPS port */
    double cap = R * d + x->ec.rate;
    res->lower_bound_s = L / cap;
    res->util = total > 0 && res->completion_s > 0 ? total / (cap * n * res->completion_s) : 0;
  }
}

int fs_ocs_execute_hybrid(const fs_ocs_params *p, const fs_ocs_schedule *s, const int64_t *m,
                          fs_ocs_result *res, fs_ocs_seg **segs, size_t *n_segs,
                          double *eps_pair, fs_err *err) {
  int rc = check_params(p, err);
  if (rc) return rc;
  if ((rc = check_schedule(p, s, err))) return rc;
  int32_t n = s->n, d = s->n_ocs;
  size_t nn = (size_t)n * (size_t)n, ns = (size_t)s->n_slots;
  exec_state x;
  memset(&x, 0, sizeof(x));
  int hybrid = p->eps_gbps > 0;
  if (exec_alloc(&x, ns, d, nn)) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  if (eps_pair) memset(eps_pair, 0, nn * sizeof(*eps_pair));
  if (hybrid && eps_setup(&x, p, n, nn, m, eps_pair)) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  lay_out_slots(p, s, &x);
  double total = 0;
  double L = line_bound(n, m, &total);
  for (size_t ij = 0; ij < nn; ij++) x.rem[ij] = (double)m[ij];
  if ((rc = run_intervals(p, s, m, &x, hybrid, segs != NULL, err))) goto out;
  fill_result(p, s, &x, hybrid, L, total, nn, res);
  if (segs) {
    *segs = x.sb.v;
    *n_segs = x.sb.len;
    x.sb.v = NULL;
  }
out:
  exec_free(&x);
  return rc;
}
