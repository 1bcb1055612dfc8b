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

int fs_ocs_schedule_from_decomp(const fs_ocs_params *p, const fs_ocs_decomp *d,
                                fs_ocs_schedule *out, fs_err *err) {
  memset(out, 0, sizeof(*out));
  int rc = check_params(p, err);
  if (rc) return rc;
  int32_t n = d->n;
  out->n = n;
  out->n_ocs = p->degree;
  /* Merge runs of permutations that are equal once self circuits are
   * dropped: one slot, the summed weight (no pointless reconfiguration). */
  int32_t *dst = fs__malloc((size_t)(n > 0 ? n : 1), sizeof(*dst));
  int32_t *prev = fs__malloc((size_t)(n > 0 ? n : 1), sizeof(*prev));
  lpt_item *items = fs__malloc((size_t)d->n_perm + 1, sizeof(*items));
  int32_t *starts = fs__malloc((size_t)d->n_perm + 1, sizeof(*starts));
  double *load = fs__calloc((size_t)p->degree, sizeof(*load));
  int32_t n_items = 0;
  if (!dst || !prev || !items || !starts || !load) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  for (int32_t k = 0; k < d->n_perm; k++) {
    const int32_t *pk = d->perm + (size_t)k * n;
    for (int32_t i = 0; i < n; i++) dst[i] = pk[i] == i ? -1 : pk[i];
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
  if (p->eps_gbps > 0 && (p->eps_threshold_s > 0 || p->eps_balance)) {
    /* Hybrid: a configuration live for less than the threshold is left to
     * the EPS (Helios / Solstice: not worth a reconfiguration). Judged on
     * the merged slot, before it is spread over the OCSes. With the balance
     * rule the k smallest go, k minimising the larger of the circuit time
     * (spread evenly over the d OCSes) and the EPS time of the stuffed
     * residual (every line of a dropped permutation carries its weight, so
     * its line sums are the dropped weights' sum: closed form L_e / E). */
    double R = rate_Bps(p), E = p->eps_gbps * 1e9 / 8.0, cut = 0;
    if (p->eps_balance) {
      lpt_item *asc = fs__malloc((size_t)n_items + 1, sizeof(*asc));
      if (!asc) {
        rc = fs_err_set(err, FS_ENOMEM, "out of memory");
        goto out;
      }
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
      /* drop exactly the best_k smallest: mark them by weight -1 below */
      for (int32_t k = 1; k <= best_k; k++) items[asc[n_items - k].k].w = -items[asc[n_items - k].k].w;
      free(asc);
    } else {
      cut = p->eps_threshold_s;
    }
    int32_t kept = 0;
    for (int32_t x = 0; x < n_items; x++) {
      if (items[x].w < 0 || (double)items[x].w / R < cut) {
        out->n_to_eps++;
        continue;
      }
      items[kept] = items[x];
      starts[kept] = starts[x];
      kept++;
    }
    n_items = kept;
  }
  {
    /* Two ways to spread the slots over d OCSes; keep the one whose busiest
     * OCS ends first. McNaughton's wrap-around (preemptive scheduling on
     * identical machines): the sequence cut into d runs of T = ceil(sum/d)
     * bytes, a slot split at a cut runs on two OCSes (legal: they are
     * different ports), at most d - 1 extra delays. LPT: whole slots,
     * longest first, to the least loaded OCS; fewer delays. */
    int32_t dg = p->degree;
    double R = rate_Bps(p), mc_make = 0, lpt_make = 0;
    int64_t sum = 0;
    for (int32_t x = 0; x < n_items; x++) sum += items[x].w;
    int64_t T = (sum + dg - 1) / dg;
    {
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
    }
    lpt_item *sorted = fs__malloc((size_t)n_items + 1, sizeof(*sorted));
    if (!sorted) {
      rc = fs_err_set(err, FS_ENOMEM, "out of memory");
      goto out;
    }
    memcpy(sorted, items, (size_t)n_items * sizeof(*items));
    qsort(sorted, (size_t)n_items, sizeof(*sorted), cmp_lpt);
    for (int32_t x = 0; x < n_items; x++) {
      int32_t o = 0;
      for (int32_t q = 1; q < dg; q++)
        if (load[q] < load[o]) o = q;
      load[o] += p->delay_s + (double)sorted[x].w / R;
    }
    for (int32_t q = 0; q < dg; q++)
      if (load[q] > lpt_make) lpt_make = load[q];
    if (dg > 1 && lpt_make < mc_make) {
      for (int32_t q = 0; q < dg; q++) load[q] = 0;
      for (int32_t x = 0; x < n_items && !rc; x++) {
        const int32_t *pk = d->perm + (size_t)sorted[x].k * n;
        for (int32_t i = 0; i < n; i++) dst[i] = pk[i] == i ? -1 : pk[i];
        int32_t o = 0;
        for (int32_t q = 1; q < dg; q++)
          if (load[q] < load[o]) o = q;
        double dur = (double)sorted[x].w / R;
        load[o] += p->delay_s + dur;
        rc = fs_ocs_schedule_add(out, o, dur, dst, err);
      }
    } else {
      int32_t o = 0;
      int64_t fill = 0;
      for (int32_t x = 0; x < n_items && !rc; x++) {
        const int32_t *pk = d->perm + (size_t)items[x].k * n;
        for (int32_t i = 0; i < n; i++) dst[i] = pk[i] == i ? -1 : pk[i];
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
    }
    free(sorted);
    if (rc) goto out;
  }
out:
  free(dst);
  free(prev);
  free(items);
  free(starts);
  free(load);
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

int fs_ocs_execute_hybrid(const fs_ocs_params *p, const fs_ocs_schedule *s, const int64_t *m,
                          fs_ocs_result *res, fs_ocs_seg **segs, size_t *n_segs,
                          double *eps_pair, fs_err *err) {
  int rc = check_params(p, err);
  if (rc) return rc;
  if (s->n_ocs != p->degree)
    return fs_err_set(err, FS_EINVAL, "schedule has %d OCSes but the degree is %d", s->n_ocs,
                      p->degree);
  int32_t n = s->n, d = s->n_ocs;
  for (int32_t k = 0; k < s->n_slots; k++) {
    if (s->slots[k].ocs < 0 || s->slots[k].ocs >= d)
      return fs_err_set(err, FS_EINVAL, "schedule: slot %d: OCS %d out of range [0, %d)", k,
                        s->slots[k].ocs, d);
    fs_err e2 = {0, ""};
    if ((rc = fs_ocs_config_check(n, s->slots[k].dst, &e2)))
      return fs_err_set(err, rc, "schedule: slot %d (OCS %d): %s", k, s->slots[k].ocs, e2.msg);
  }
  size_t nn = (size_t)n * (size_t)n, ns = (size_t)s->n_slots;
  double *t_start = fs__malloc(ns + 1, sizeof(double));
  double *t_live = fs__malloc(ns + 1, sizeof(double));
  double *t_end = fs__malloc(ns + 1, sizeof(double));
  int32_t *prev_slot = fs__malloc(ns + 1, sizeof(int32_t));
  double *times = fs__malloc(3 * ns + 1, sizeof(double));
  double *clock = fs__calloc((size_t)d, sizeof(double));
  int32_t *last = fs__malloc((size_t)d, sizeof(int32_t));
  int32_t *cur = fs__malloc((size_t)d, sizeof(int32_t));
  double *rem = fs__malloc(nn, sizeof(double));
  double *carry = fs__calloc(nn, sizeof(double));
  int32_t *cnt = fs__calloc(nn, sizeof(int32_t));
  int32_t *touched = fs__malloc(nn, sizeof(int32_t));
  double *slot_delay = fs__calloc((size_t)d, sizeof(double));
  segbuf sb = {NULL, 0, 0};
  /* hybrid only: the EPS's working arrays */
  int hybrid = p->eps_gbps > 0;
  eps_ctx ec;
  memset(&ec, 0, sizeof(ec));
  double *ccap = NULL, *circ = NULL, *tolv = NULL, circuit_bytes = 0;
  if (!t_start || !t_live || !t_end || !prev_slot || !times || !clock || !last || !cur || !rem || !carry ||
      !cnt || !touched || !slot_delay) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  if (eps_pair) memset(eps_pair, 0, nn * sizeof(*eps_pair));
  if (hybrid) {
    ec.n = n;
    ec.rate = p->eps_gbps * 1e9 / 8.0;
    ec.residual_only = p->eps_residual_only;
    ec.rem = rem;
    ec.cnt = cnt;
    ec.eps_pair = eps_pair;
    ec.act = fs__malloc(nn, sizeof(int32_t));
    ec.tol = tolv = fs__malloc(nn, sizeof(double));
    int ok = ec.act && tolv;
    for (int x = 0; x < 2; x++) {
      eps_flows *fl = &ec.cls[x];
      fl->pair = fs__malloc(nn, sizeof(int32_t));
      fl->pa = fs__malloc(nn, sizeof(int32_t));
      fl->pb = fs__malloc(nn, sizeof(int32_t));
      fl->go = fs__malloc(nn, sizeof(double));
      fl->rate = fs__malloc(nn, sizeof(double));
      fl->ttg = fs__malloc(nn, sizeof(double));
      ok = ok && fl->pair && fl->pa && fl->pb && fl->go && fl->rate && fl->ttg;
    }
    ec.frozen = fs__malloc(nn, 1);
    ec.pstart = fs__malloc((size_t)2 * n + 1, sizeof(int32_t));
    ec.pcount = fs__malloc((size_t)2 * n, sizeof(int32_t));
    ec.plist = fs__malloc(2 * nn, sizeof(int32_t));
    ec.cap = fs__malloc((size_t)2 * n, sizeof(double));
    ec.key = fs__malloc((size_t)2 * n, sizeof(double));
    ec.live = fs__malloc((size_t)2 * n, sizeof(int32_t));
    ec.ccap = ccap = fs__calloc(nn, sizeof(double));
    ec.circ = circ = fs__calloc(nn, sizeof(double));
    if (!ok || !ec.frozen || !ec.pstart || !ec.pcount || !ec.plist || !ec.cap || !ec.key ||
        !ec.live || !ccap || !circ) {
      rc = fs_err_set(err, FS_ENOMEM, "out of memory");
      goto out;
    }
    for (size_t ij = 0; ij < nn; ij++) tolv[ij] = 1e-9 * (double)m[ij];
    for (size_t ij = 0; ij < nn; ij++)
      if (m[ij] > 0) ec.act[ec.n_act++] = (int32_t)ij;
  }
  for (int32_t o = 0; o < d; o++) last[o] = cur[o] = -1;
  size_t nt = 0;
  for (size_t k = 0; k < ns; k++) {
    int32_t o = s->slots[k].ocs;
    prev_slot[k] = last[o];
    last[o] = (int32_t)k;
    t_start[k] = clock[o];
    t_live[k] = clock[o] + p->delay_s;
    t_end[k] = t_live[k] + s->slots[k].duration_s;
    clock[o] = t_end[k];
    slot_delay[o] += p->delay_s;
    times[nt++] = t_start[k];
    times[nt++] = t_live[k];
    times[nt++] = t_end[k];
    if (ccap) {
      /* circuit capacity per pair: live time (the delay too for a circuit
       * unchanged from the OCS's previous slot) times the rate */
      const int32_t *pd = prev_slot[k] >= 0 ? s->slots[prev_slot[k]].dst : NULL;
      for (int32_t i = 0; i < n; i++) {
        int32_t j = s->slots[k].dst[i];
        if (j < 0) continue;
        int changed = p->all_stop || !pd || pd[i] != j;
        ccap[(size_t)i * n + j] +=
            rate_Bps(p) * (s->slots[k].duration_s + (changed ? 0 : p->delay_s));
      }
    }
  }
  qsort(times, nt, sizeof(double), cmp_double);
  double total = 0;
  double L = line_bound(n, m, &total);
  for (size_t ij = 0; ij < nn; ij++) rem[ij] = (double)m[ij];
  double finish = 0, R = rate_Bps(p);
  /* next slot of each OCS to become current, in array order */
  int32_t *next = last; /* reuse: rebuilt below as the first slot per OCS */
  for (int32_t o = 0; o < d; o++) next[o] = -1;
  for (size_t k = ns; k-- > 0;) next[s->slots[k].ocs] = (int32_t)k;
  for (size_t x = 0; x + 1 < nt; x++) {
    double a = times[x], b = times[x + 1];
    if (!(b > a)) continue;
    size_t n_touched = 0;
    /* the current slot of each OCS: the one with t_start <= a < t_end */
    for (int32_t o = 0; o < d; o++) {
      while (next[o] >= 0 && t_start[next[o]] <= a) {
        cur[o] = next[o];
        int32_t k = next[o] + 1;
        while (k < (int32_t)ns && s->slots[k].ocs != o) k++;
        next[o] = k < (int32_t)ns ? k : -1;
      }
      int32_t k = cur[o];
      if (k < 0 || !(a < t_end[k])) continue;
      const int32_t *dst = s->slots[k].dst;
      const int32_t *pd = prev_slot[k] >= 0 ? s->slots[prev_slot[k]].dst : NULL;
      for (int32_t i = 0; i < n; i++) {
        int32_t j = dst[i];
        if (j < 0) continue;
        int changed = p->all_stop || !pd || pd[i] != j;
        if (changed && a < t_live[k]) continue; /* dark */
        size_t ij = (size_t)i * n + j;
        if (cnt[ij]++ == 0) touched[n_touched++] = (int32_t)ij;
      }
    }
    for (size_t t = 0; t < n_touched; t++) {
      size_t ij = (size_t)touched[t];
      carry[ij] = 0;
      if (rem[ij] <= 0) continue;
      double rate = R * cnt[ij], cap = rate * (b - a);
      /* A slot sized for exactly w bytes carries w up to rounding: slot
       * times are float sums, so b - a can be short by a few ulps of b.
       * Finish within 1e-12 of the clock (or 1e-9 of the demand) rather
       * than leave dust behind. */
      if (rem[ij] <= cap + rate * 1e-12 * b + 1e-9 * (double)m[ij]) {
        double f = a + rem[ij] / rate;
        if (f > b) f = b;
        if (f > finish) finish = f;
        carry[ij] = rem[ij];
        rem[ij] = 0;
      } else {
        carry[ij] = cap;
        rem[ij] -= cap;
      }
      circuit_bytes += carry[ij];
      if (circ) circ[ij] += carry[ij];
    }
    /* the EPS carries, over the same interval, the pairs without a live
     * circuit (disjoint from the ones above) */
    if (hybrid && (rc = eps_run(&ec, a, b))) {
      rc = fs_err_set(err, rc, "ocs: EPS stalled (no positive share)");
      goto out;
    }
    if (segs) {
      for (int32_t o = 0; o < d; o++) {
        int32_t k = cur[o];
        if (k < 0 || !(a < t_end[k])) continue;
        const int32_t *dst = s->slots[k].dst;
        const int32_t *pd = prev_slot[k] >= 0 ? s->slots[prev_slot[k]].dst : NULL;
        for (int32_t i = 0; i < n; i++) {
          int32_t j = dst[i];
          if (j < 0) continue;
          int changed = p->all_stop || !pd || pd[i] != j;
          fs_ocs_seg sg = {o, k, i, j, changed && a < t_live[k], a, b, 0};
          size_t ij = (size_t)i * n + j;
          /* concurrent live circuits of one pair share its bytes evenly */
          if (!sg.dark) sg.bytes = carry[ij] / cnt[ij];
          if (seg_push(&sb, &sg)) {
            rc = fs_err_set(err, FS_ENOMEM, "out of memory");
            goto out;
          }
        }
      }
    }
    for (size_t t = 0; t < n_touched; t++) cnt[touched[t]] = 0;
  }
  /* after the last slot (or with no slot at all) the EPS carries the rest */
  if (hybrid && (rc = eps_run(&ec, nt ? times[nt - 1] : 0, INFINITY))) {
    rc = fs_err_set(err, rc, "ocs: EPS stalled (no positive share)");
    goto out;
  }
  if (ec.finish > finish) finish = ec.finish;
  double undelivered = 0;
  for (size_t ij = 0; ij < nn; ij++) undelivered += rem[ij];
  memset(res, 0, sizeof(*res));
  int32_t last_o = 0;
  for (int32_t o = 1; o < d; o++)
    if (clock[o] > clock[last_o]) last_o = o;
  res->schedule_s = clock[last_o];
  res->reconfig_s = slot_delay[last_o];
  res->n_reconfig = s->n_slots;
  res->completion_s = undelivered > 0 ? INFINITY : finish;
  res->lower_bound_s = L / (R * d);
  res->delivered_bytes = total - undelivered;
  res->undelivered_bytes = undelivered;
  res->util = total > 0 && res->completion_s > 0 ? total / (R * n * d * res->completion_s) : 0;
  res->circuit_bytes = circuit_bytes;
  res->eps_bytes = ec.bytes;
  res->eps_busy_s = ec.busy;
  res->n_to_eps = s->n_to_eps;
  if (hybrid) {
    /* a node sends and receives at most d circuits plus its EPS port */
    double cap = R * d + ec.rate;
    res->lower_bound_s = L / cap;
    res->util = total > 0 && res->completion_s > 0 ? total / (cap * n * res->completion_s) : 0;
  }
  if (segs) {
    *segs = sb.v;
    *n_segs = sb.len;
    sb.v = NULL;
  }
out:
  free(sb.v);
  free(t_start);
  free(t_live);
  free(t_end);
  free(prev_slot);
  free(times);
  free(clock);
  free(last);
  free(cur);
  free(rem);
  free(carry);
  free(cnt);
  free(touched);
  free(slot_delay);
  free(ec.act);
  free(tolv);
  for (int x = 0; x < 2; x++) {
    free(ec.cls[x].pair);
    free(ec.cls[x].pa);
    free(ec.cls[x].pb);
    free(ec.cls[x].go);
    free(ec.cls[x].rate);
    free(ec.cls[x].ttg);
  }
  free(ec.frozen);
  free(ec.pstart);
  free(ec.pcount);
  free(ec.plist);
  free(ec.cap);
  free(ec.key);
  free(ec.live);
  free(ccap);
  free(circ);
  return rc;
}
