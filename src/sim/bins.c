/* Per-link bytes per time bin (fs_sim_opts.link_bins; sim.h).
 *
 * Data: one row of L doubles per bin (n x L, e.g. 128 bins x 10^4 links =
 * 10 MB), all equal-width bins starting at t = 0. Bin-major because
 * settlements at nearly the same time hit the same row: the working set is
 * a row or two, not a scattered column per link. The run's length is not
 * known in advance, so the width starts as the smallest 1 ns x 2^k that
 * covers the first interval charged and doubles (adjacent bins merged, an
 * exact sum) whenever an interval ends past the last bin: the bins in use
 * at the end are between n/2 and n. A merge costs O(L x n) and happens at
 * most ~log2(run / 1 ns) times.
 *
 * Charging: rates are constant between the engine's settlements, so a
 * flow's bytes over [t0, t1] are spread over the bins that interval spans
 * in proportion to the overlap, the last bin taking the remainder (the
 * bins of a link sum to its fs_sim_links bytes up to rounding). A flow of
 * a pruned route (prune.c) is charged on its whole route: the rating part
 * and the left-out links alike. Cost per settlement: route length x bins
 * spanned. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int fs__bins_init(fs__bins *b, int32_t n_links, int32_t n) {
  memset(b, 0, sizeof(*b));
  if (n <= 0) return 0;
  b->b = calloc((size_t)(n_links ? n_links : 1) * (size_t)n, sizeof(double));
  if (!b->b) return FS_ENOMEM;
  b->n = n;
  b->L = n_links;
  return 0;
}

void fs__bins_free(fs__bins *b) {
  free(b->b);
  memset(b, 0, sizeof(*b));
}

/* Widens the bins (doubling, merging neighbours) until they cover t. */
static void cover(fs__bins *b, double t) {
  if (b->width == 0) {
    b->width = 1e-9;
    while (b->width * b->n < t) b->width *= 2;
    return;
  }
  while (b->width * b->n < t) {
    int32_t half = (b->n + 1) / 2;
    size_t L = (size_t)b->L;
    for (int32_t k = 0; k < half; k++) { /* row k = rows 2k and 2k + 1 (k <= 2k: in place) */
      double *dst = b->b + (size_t)k * L;
      const double *a = b->b + (size_t)(2 * k) * L, *c = a + L;
      for (size_t l = 0; l < L; l++) dst[l] = a[l] + (2 * k + 1 < b->n ? c[l] : 0);
    }
    memset(b->b + (size_t)half * L, 0, (size_t)(b->n - half) * L * sizeof(double));
    b->width *= 2;
  }
}

static int32_t bin_of(const fs__bins *b, double t) {
  double k = floor(t / b->width);
  if (!(k >= 0)) return 0;
  return k >= b->n ? b->n - 1 : (int32_t)k;
}

void fs__bins_flow(fs__bins *b, const fs__simcore *c, const fs__flow *f, double t0, double t1,
                   double bytes) {
  if (!(bytes > 0)) return;
  if (t1 < t0) t1 = t0;
  cover(b, t1);
  const int32_t *links = f->links;
  const double *w = f->w;
  int32_t n = f->n;
  if (f->rid >= 0) { /* the rating route and the links left out of it */
    const fs__proute *p = &c->proutes[f->rid];
    links = p->kept;
    w = p->kept_w;
    n = p->n_kept + p->n_gone;
  }
  int32_t b0 = bin_of(b, t0), b1 = bin_of(b, t1);
  if (b1 > b0 && t1 == b1 * b->width) b1--; /* [t0, t1) ends on a bin edge */
  double rate = b1 > b0 ? bytes / (t1 - t0) : 0, done = 0;
  for (int32_t k = b0; k <= b1; k++) {
    double x;
    if (k == b1) {
      x = bytes - done;
      if (x < 0) x = 0;
    } else {
      x = rate * ((k + 1) * b->width - fmax(t0, k * b->width));
      done += x;
    }
    double *row = b->b + (size_t)k * (size_t)b->L;
    for (int32_t j = 0; j < n; j++) row[links[j]] += x * w[j];
  }
}

void fs__bins_finish(fs__bins *b, double makespan) {
  if (!b->n) return;
  cover(b, makespan > 1e-9 ? makespan : 1e-9);
  double k = ceil(makespan / b->width);
  b->used = k < 1 ? 1 : k > b->n ? b->n : (int32_t)k;
}

void fs__bins_expand(fs__bins *b, const int32_t *rep) {
  if (!b->n || !b->b) return;
  for (int32_t k = 0; k < b->used; k++) {
    double *row = b->b + (size_t)k * b->L;
    for (int32_t l = 0; l < b->L; l++)
      if (rep[l] != l) row[l] = row[rep[l]];
  }
}
