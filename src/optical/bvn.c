/* Birkhoff-von Neumann stuffing and decomposition of an integral traffic
 * matrix into weighted permutations (ocs.h): plain BvN (any perfect matching
 * on the positive support, weight = its least entry) and Solstice (Liu et
 * al., CoNEXT'15: perfect matchings on entries >= r, r halving, so a few long
 * slots come first). Data: an n*n int64 working copy and the current matching,
 * repaired after each extraction by BFS augmenting paths (O(n^2) per freed
 * row); at most n^2 - 2n + 2 permutations (each zeroes an entry). */
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/ocs.h"

int64_t fs_ocs_stuff(int32_t n, const int64_t *m, int64_t *out) {
  size_t nn = (size_t)n * (size_t)n;
  int64_t *rdef = fs__calloc((size_t)n * 2 + 1, sizeof(*rdef));
  memcpy(out, m, nn * sizeof(*out));
  int64_t L = 0;
  /* Without scratch memory fall back to recomputing the sums in place: the
   * result is the same, only slower (stuffing cannot fail). */
  for (int32_t i = 0; i < n; i++) {
    int64_t r = 0, c = 0;
    for (int32_t j = 0; j < n; j++) {
      r += m[(size_t)i * n + j];
      c += m[(size_t)j * n + i];
    }
    if (r > L) L = r;
    if (c > L) L = c;
    if (rdef) {
      rdef[i] = r;
      rdef[n + i] = c;
    }
  }
  for (int pass = 0; pass < 2; pass++) {
    /* pass 0 raises entries already positive (no new circuit), pass 1 any:
     * the north-west-corner rule, which zeroes a row or column deficit at
     * every step, so both passes end with every deficit zero. */
    for (int32_t i = 0; i < n; i++)
      for (int32_t j = 0; j < n; j++) {
        size_t ij = (size_t)i * n + j;
        if (pass == 0 && m[ij] == 0) continue;
        int64_t rs, cs;
        if (rdef) {
          rs = rdef[i];
          cs = rdef[n + j];
        } else {
          rs = cs = 0;
          for (int32_t k = 0; k < n; k++) {
            rs += out[(size_t)i * n + k];
            cs += out[(size_t)k * n + j];
          }
        }
        int64_t a = L - rs < L - cs ? L - rs : L - cs;
        if (a <= 0) continue;
        out[ij] += a;
        if (rdef) {
          rdef[i] += a;
          rdef[n + j] += a;
        }
      }
  }
  free(rdef);
  return L;
}

void fs_ocs_decomp_free(fs_ocs_decomp *d) {
  if (!d) return;
  free(d->weight);
  free(d->perm);
  memset(d, 0, sizeof(*d));
}

typedef struct matcher {
  int32_t n;
  const int64_t *w; /* the working matrix */
  int64_t thr;      /* an edge is an entry >= thr */
  int32_t *row_to, *col_to, *prev_col, *queue, *seen;
  int32_t stamp;
} matcher;

/* BFS for an augmenting path from free row u over edges >= thr; flips it.
 * Returns 1 if u is now matched. */
static int augment(matcher *mt, int32_t u) {
  int32_t n = mt->n, head = 0, tail = 0;
  mt->stamp++;
  mt->queue[tail++] = u;
  while (head < tail) {
    int32_t x = mt->queue[head++];
    const int64_t *row = mt->w + (size_t)x * n;
    for (int32_t j = 0; j < n; j++) {
      if (row[j] < mt->thr || mt->seen[j] == mt->stamp) continue;
      mt->seen[j] = mt->stamp;
      mt->prev_col[j] = x;
      if (mt->col_to[j] < 0) {
        /* flip the path back to u */
        for (int32_t c = j; c >= 0;) {
          int32_t r = mt->prev_col[c];
          int32_t next = mt->row_to[r];
          mt->row_to[r] = c;
          mt->col_to[c] = r;
          c = r == u ? -1 : next;
        }
        return 1;
      }
      mt->queue[tail++] = mt->col_to[j];
    }
  }
  return 0;
}

/* Makes the matching perfect if the edge set allows; 1 if perfect. */
static int complete(matcher *mt) {
  for (int32_t i = 0; i < mt->n; i++)
    if (mt->row_to[i] < 0 && !augment(mt, i)) return 0;
  return 1;
}

static int push_perm(fs_ocs_decomp *d, const int32_t *row_to, int64_t w) {
  if ((size_t)d->n_perm + 1 > d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 16;
    int64_t *nw = realloc(d->weight, cap * sizeof(*nw));
    if (!nw) return FS_ENOMEM;
    d->weight = nw;
    int32_t *np = realloc(d->perm, cap * (size_t)d->n * sizeof(*np));
    if (!np) return FS_ENOMEM;
    d->perm = np;
    d->cap = cap;
  }
  d->weight[d->n_perm] = w;
  memcpy(d->perm + (size_t)d->n_perm * d->n, row_to, (size_t)d->n * sizeof(*row_to));
  d->n_perm++;
  return 0;
}

int fs_ocs_decompose(fs_ocs_algo algo, int32_t n, const int64_t *stuffed, fs_ocs_decomp *out,
                     fs_err *err) {
  memset(out, 0, sizeof(*out));
  out->n = n;
  if (algo != FS_OCS_BVN && algo != FS_OCS_SOLSTICE)
    return fs_err_set(err, FS_EINVAL, "decompose: algorithm must be bvn or solstice");
  if (n < 1 || n > FS_OCS_MAX_NODES)
    return fs_err_set(err, FS_EINVAL, "decompose: n must be in [1, %d], got %d",
                      FS_OCS_MAX_NODES, n);
  size_t nn = (size_t)n * (size_t)n;
  int64_t L = -1, maxe = 0;
  for (int32_t i = 0; i < n; i++) {
    int64_t r = 0, c = 0;
    for (int32_t j = 0; j < n; j++) {
      int64_t x = stuffed[(size_t)i * n + j];
      if (x < 0 || x > FS_OCS_MAX_BYTES * (int64_t)FS_OCS_MAX_NODES)
        return fs_err_set(err, FS_EINVAL, "decompose: entry (%d, %d) out of range: %lld", i, j,
                          (long long)x);
      if (x > maxe) maxe = x;
      r += x;
      c += stuffed[(size_t)j * n + i];
    }
    if (L < 0) L = r;
    if (r != L || c != L)
      return fs_err_set(err, FS_EINVAL,
                        "decompose: row and column sums must all be equal (stuff first): row "
                        "%d sums to %lld, column %d to %lld, row 0 to %lld",
                        i, (long long)r, i, (long long)c, (long long)L);
  }
  int64_t *w = fs__malloc(nn, sizeof(*w));
  int32_t *ints = fs__malloc((size_t)n * 5, sizeof(*ints));
  if (!w || !ints) {
    free(w);
    free(ints);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  memcpy(w, stuffed, nn * sizeof(*w));
  matcher mt = {n, w, 1, ints, ints + n, ints + 2 * n, ints + 3 * n, ints + 4 * n, 0};
  for (int32_t i = 0; i < n; i++) {
    mt.row_to[i] = mt.col_to[i] = -1;
    mt.seen[i] = 0;
  }
  if (algo == FS_OCS_SOLSTICE) {
    /* r = the largest power of two <= the largest entry */
    mt.thr = 1;
    while (maxe > 0 && mt.thr <= maxe / 2) mt.thr *= 2;
  }
  int rc = 0;
  int64_t left = L;
  while (left > 0) {
    if (!complete(&mt)) {
      /* Entries >= 1 always hold a perfect matching while sums are equal
       * (Birkhoff / Hall), so only Solstice's threshold can get here. */
      if (mt.thr <= 1) {
        rc = fs_err_set(err, FS_EINTERNAL, "decompose: no perfect matching on the support");
        break;
      }
      mt.thr /= 2;
      continue;
    }
    int64_t wmin = -1;
    for (int32_t i = 0; i < n; i++) {
      int64_t x = w[(size_t)i * n + mt.row_to[i]];
      if (wmin < 0 || x < wmin) wmin = x;
    }
    if ((rc = push_perm(out, mt.row_to, wmin))) {
      rc = fs_err_set(err, FS_ENOMEM, "out of memory");
      break;
    }
    left -= wmin;
    for (int32_t i = 0; i < n; i++) {
      int32_t j = mt.row_to[i];
      int64_t *x = &w[(size_t)i * n + j];
      *x -= wmin;
      if (*x < mt.thr) { /* no longer an edge: free both ends */
        mt.row_to[i] = -1;
        mt.col_to[j] = -1;
      }
    }
  }
  free(w);
  free(ints);
  if (rc) fs_ocs_decomp_free(out);
  return rc;
}
