/* Recursive doubling (rd: all-reduce, all-gather) and recursive
 * halving-doubling (rhd, Rabenseifner: all-reduce, reduce-scatter), with the
 * MPICH pre/post steps for p not a power of two (Thakur, Rabenseifner &
 * Gropp 2005), and their closed forms (docs/model-coll-rd.md).
 *
 * Every round is pairwise exchanges. An exchange is a rendezvous: both
 * directions start together, once both ranks hold the data (and reduced it)
 * and both ranks' links are free (their last send and last receive left).
 * So no rank ever sends or receives two messages at once, every message has
 * its links alone on a contention-free network, and the time is a longest
 * path through (stage, chunk) that the closed forms give exactly.
 * rd cuts every message into C chunks streamed back to back; rhd sends each
 * round as one message (chunks and channels are ignored, see the docs).
 * With p = m + r, m = 2^L the largest power of two <= p, flows: rd
 * (m L + 2r) C; rhd all-reduce 2 m L + 2r, reduce-scatter m L + 2r. Memory
 * O(p C) besides the engine's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "internal.h"

/* ---- shapes shared by lowering and closed forms ----
 * p = m + r, m = 2^L the largest power of two <= p. The first 2r ranks pair
 * up: even rank 2j hands its data to odd rank 2j+1 (the pre step) and gets
 * the result back at the end (the post step); the m remaining ranks, new
 * ranks 0..m-1, run the power-of-two algorithm. New rank i < r is old rank
 * 2i+1 and stands for old blocks 2i, 2i+1; new rank i >= r is old rank i+r
 * with block i+r. */
static int32_t floor_lg(int32_t p) {
  int32_t l = 0;
  while ((int64_t)2 << l <= p) l++;
  return l;
}

static int32_t old_rank(int32_t i, int32_t r) { return i < r ? 2 * i + 1 : i + r; }

/* First old block of new rank j (j == m gives p): new ranks' blocks are
 * contiguous and in order. */
static int32_t first_block(int32_t j, int32_t r) { return j < r ? 2 * j : j + r; }

/* Old blocks a level-k group of new ranks (2^k of them, from new rank g)
 * holds in the all-gathers: 2^k plus the merged pairs among them. */
static int32_t group_blocks(int32_t g, int32_t k, int32_t r) {
  int32_t size = (int32_t)1 << k, extra = r - g;
  return size + (extra < 0 ? 0 : extra > size ? size : extra);
}

/* ---- rendezvous exchanges ---- */
typedef struct xstate {
  int32_t C;
  int32_t *ready;    /* [rank * C + c]: item after which chunk c of the rank's data is usable */
  int32_t *last_out; /* [rank]: its latest send */
  int32_t *last_in;  /* [rank]: the latest send to it */
  int32_t *ua, *ub;  /* unit lists of one message (at most p units) */
  int lists;         /* fill them: only the data tracker reads them */
} xstate;

static int xstate_init(xstate *s, fs__cb *cb, int32_t C) {
  size_t p = (size_t)cb->p, n = p * (size_t)C;
  s->C = C;
  s->lists = cb->l->track != NULL;
  s->ready = fs__malloc(n, sizeof(int32_t));
  s->last_out = fs__malloc(p, sizeof(int32_t));
  s->last_in = fs__malloc(p, sizeof(int32_t));
  s->ua = fs__malloc(p, sizeof(int32_t));
  s->ub = fs__malloc(p, sizeof(int32_t));
  if (!s->ready || !s->last_out || !s->last_in || !s->ua || !s->ub)
    return fs_err_set(cb->err, FS_ENOMEM, "out of memory lowering %s",
                      fs_coll_algo_name(cb->prm->algo));
  for (size_t i = 0; i < n; i++) s->ready[i] = -1;
  for (size_t i = 0; i < p; i++) s->last_out[i] = s->last_in[i] = -1;
  return 0;
}

static void xstate_free(xstate *s) {
  FS__FREE_ALL(s->ready, s->last_out, s->last_in, s->ua, s->ub);
}

/* What a message between a and b about chunk c waits for: both ranks' data
 * (the receiver's too: it posts the receive once its buffer is reduced) and
 * both ranks' links. */
static void rendezvous(const xstate *s, int32_t a, int32_t b, int32_t c, int32_t done[2],
                       int32_t sent[4]) {
  done[0] = s->ready[(size_t)a * s->C + c];
  done[1] = s->ready[(size_t)b * s->C + c];
  sent[0] = s->last_out[a];
  sent[1] = s->last_in[a];
  sent[2] = s->last_out[b];
  sent[3] = s->last_in[b];
}

/* One-way message (pre and post steps). */
static int put(fs__cb *cb, xstate *s, int32_t from, int32_t to, int32_t c, const int32_t *u,
               int32_t n, int reduce) {
  int32_t done[2], sent[4];
  fs__msg m;
  rendezvous(s, from, to, c, done, sent);
  int rc = fs__cb_send(cb, from, to, u, n, reduce, done, 2, sent, 4, &m);
  if (rc) return rc;
  s->last_out[from] = s->last_in[to] = m.flow;
  s->ready[(size_t)to * s->C + c] = m.ready;
  return 0;
}

/* a sends ua[0..na) to b while b sends ub[0..nb) to a, both starting at the
 * same instant. same = 1: both send the same units, each reducing the
 * other's (recursive-doubling all-reduce). The data tracker applies moves one
 * at a time, so it cannot see a swap of overlapping data: b -> a is tracked
 * as it is, then a -> b as a copy of a's reduced data, "sent" by a join
 * after a's reduction (which trivially passes the order check). The a -> b
 * flow has exactly b -> a's dependencies, so the real check of b -> a
 * covers it. */
static int swap(fs__cb *cb, xstate *s, int32_t a, int32_t b, int32_t c, const int32_t *ua,
                int32_t na, const int32_t *ub, int32_t nb, int reduce, int same) {
  int32_t done[2], sent[4];
  fs__msg to_a, to_b;
  rendezvous(s, a, b, c, done, sent);
  int rc = fs__cb_send(cb, b, a, ub, nb, reduce, done, 2, sent, 4, &to_a);
  if (rc) return rc;
  if (!same) {
    rc = fs__cb_send(cb, a, b, ua, na, reduce, done, 2, sent, 4, &to_b);
    if (rc) return rc;
  } else {
    double bytes = na * cb->unit_bytes;
    rc = fs__cb_flow(cb, cb->g->hosts[a], cb->g->hosts[b], bytes, done, 2, sent, 4, &to_b.flow);
    if (rc) return rc;
    to_b.ready = to_b.flow;
    if (reduce && cb->prm->gamma_s_per_byte > 0) {
      to_b.ready = fs__cb_task(cb, b, bytes * cb->prm->gamma_s_per_byte, &to_b.flow, 1);
      if (to_b.ready < 0) return to_b.ready;
    }
    if (cb->l->track) {
      int32_t j = fs__cb_join(cb, a, &to_a.ready, 1);
      if (j < 0) return j;
      rc = fs__cb_track_move(cb, a, b, ua, na, 0, j, to_b.ready);
      if (rc) return rc;
    }
  }
  s->last_out[a] = s->last_in[b] = to_b.flow;
  s->last_out[b] = s->last_in[a] = to_a.flow;
  s->ready[(size_t)a * s->C + c] = to_a.ready;
  s->ready[(size_t)b * s->C + c] = to_b.ready;
  return 0;
}

/* Messages here carry up to p units, so listing them would cost O(p^2) per
 * collective. fs__cb_send reads the list only to track the data, so
 * without a tracker only the count is computed and the list is not filled. */

/* Units of chunk c of old blocks [b0, b1), skipping block `skip`. */
static int32_t block_units(const xstate *s, int32_t *u, int32_t b0, int32_t b1, int32_t skip,
                           int32_t c) {
  if (!s->lists) return b1 - b0 - (skip >= b0 && skip < b1);
  int32_t n = 0;
  for (int32_t b = b0; b < b1; b++)
    if (b != skip) u[n++] = b * s->C + c;
  return n;
}

/* First unit of new block j in rhd: all-reduce has one unit per new block,
 * reduce-scatter one per old block. */
static int32_t unit_of(int32_t j, int ar, int32_t r) { return ar ? j : first_block(j, r); }

static int32_t range_units(const xstate *s, int32_t *u, int32_t u0, int32_t u1) {
  for (int32_t i = u0; i < u1 && s->lists; i++) u[i - u0] = i;
  return u1 - u0;
}

/* ---- rd ----
 * All-reduce: one unit per chunk; in round k new rank i swaps the whole
 * buffer with i ^ 2^k and both reduce. All-gather: units (block, chunk);
 * in round k new rank i sends chunk c of every block its level-k group
 * holds. Chunk c of a round waits only for chunk c of the previous round. */
static int rd_lower(fs__cb *cb) {
  int32_t p = cb->p, C = cb->chunks, L = floor_lg(p), m = (int32_t)1 << L, r = p - m;
  int ar = cb->prm->op == FS_COLL_ALLREDUCE;
  if (!ar && (int64_t)p * C > INT32_MAX)
    return fs_err_set(cb->err, FS_EINVAL, "rd allgather: %d ranks times %d chunks is too many",
                      p, C);
  int rc = fs__cb_units(cb, ar ? C : p * C);
  if (rc) return rc;
  xstate s;
  memset(&s, 0, sizeof(s));
  if ((rc = xstate_init(&s, cb, C))) goto out;
  for (int32_t j = 0; j < r && !rc; j++)
    for (int32_t c = 0; c < C && !rc; c++) {
      s.ua[0] = ar ? c : 2 * j * C + c;
      rc = put(cb, &s, 2 * j, 2 * j + 1, c, s.ua, 1, ar);
    }
  for (int32_t k = 0; k < L && !rc; k++) {
    int32_t dist = (int32_t)1 << k;
    for (int32_t i = 0; i < m && !rc; i++) {
      if (i & dist) continue;
      int32_t a = old_rank(i, r), b = old_rank(i | dist, r);
      int32_t gi = i >> k << k, gj = (i | dist) >> k << k;
      for (int32_t c = 0; c < C && !rc; c++) {
        if (ar) {
          s.ua[0] = c;
          rc = swap(cb, &s, a, b, c, s.ua, 1, s.ua, 1, 1, 1);
        } else {
          int32_t na = block_units(&s, s.ua, first_block(gi, r), first_block(gi + dist, r), -1, c);
          int32_t nb = block_units(&s, s.ub, first_block(gj, r), first_block(gj + dist, r), -1, c);
          rc = swap(cb, &s, a, b, c, s.ua, na, s.ub, nb, 0, 0);
        }
      }
    }
  }
  for (int32_t j = 0; j < r && !rc; j++)
    for (int32_t c = 0; c < C && !rc; c++) {
      int32_t n = 1;
      if (ar)
        s.ua[0] = c;
      else
        n = block_units(&s, s.ua, 0, p, 2 * j, c);
      rc = put(cb, &s, 2 * j + 1, 2 * j, c, s.ua, n, 0);
    }
out:
  xstate_free(&s);
  return rc;
}

/* Longest path through the (stage, chunk) grid of a chain of rendezvous
 * exchanges: stage t streams C chunks of link time d_t (the larger of the
 * two directions); its chunk c reaches the rank the path follows v_t + h_t
 * later (v_t <= d_t: what that rank receives, h_t: alpha plus a reduction);
 * a stage's first chunk also waits for the previous stage's last one to
 * leave. If d is non-decreasing or C = 1 the path's choices are per stage:
 *   T = sum_{t<S-1} max(C d_t, v_t + h_t) + C d_{S-1} + h_{S-1}.
 * With v = d and a constant d this is fs__pipeline_time's one-link form. */
static double chain_time(int32_t S, int32_t C, const double *d, const double *v,
                         const double *h) {
  double t = 0;
  for (int32_t i = 0; i + 1 < S; i++) t += fmax(C * d[i], v[i] + h[i]);
  return t + C * d[S - 1] + h[S - 1];
}

#define MAX_STAGES 40 /* lg p + 2 <= 33 for int32 p */

/* rd all-gather when p = m + r, r > 0, for a path that ends at new rank x
 * (< r: it must do the post step). Stage 0 is the pre step (one block),
 * stage 1+k round k, the last the post step (p - 1 blocks). The longest
 * path goes through the level-k groups holding new rank 0 (the heaviest,
 * w_k(0) blocks) and, in round k, reaches the side bit k of x names, which
 * receives the other group's w_k(1 - bit) blocks. */
static double rd_allgather_path(int32_t p, int32_t C, int32_t L, int32_t r, int32_t x,
                                double u, double alpha) {
  double d[MAX_STAGES], v[MAX_STAGES], h[MAX_STAGES];
  int32_t S = L + 2;
  d[0] = v[0] = u;
  for (int32_t k = 0; k < L; k++) {
    d[1 + k] = group_blocks(0, k, r) * u;
    v[1 + k] = group_blocks((x >> k & 1) ? 0 : (int32_t)1 << k, k, r) * u;
  }
  d[S - 1] = v[S - 1] = (p - 1) * u;
  for (int32_t t = 0; t < S; t++) h[t] = alpha;
  return chain_time(S, C, d, v, h);
}

static double rd_model(const fs_coll_params *prm, int32_t p, int32_t C,
                       const fs_coll_cost *cost) {
  int32_t L = floor_lg(p), m = (int32_t)1 << L, r = p - m;
  double a = cost->alpha_s, be = cost->beta_s_per_byte, ga = prm->gamma_s_per_byte;
  double n = prm->bytes;
  if (prm->op == FS_COLL_ALLREDUCE) {
    /* Pre step, L rounds and the post step all reuse the rank's link, with
     * whole-buffer chunks: the one-link pipeline. */
    double h[MAX_STAGES];
    int32_t S = L + (r ? 2 : 0);
    for (int32_t t = 0; t < S; t++) h[t] = a + n / C * ga;
    if (r) h[S - 1] = a;
    return fs__pipeline_time(S, C, n / C * be, h, 1);
  }
  double u = n / p * be / C; /* link time of one chunk of one block */
  if (!r) {
    double d[MAX_STAGES], h[MAX_STAGES];
    for (int32_t k = 0; k < L; k++) d[k] = ((int32_t)1 << k) * u, h[k] = a;
    return chain_time(L, C, d, d, h);
  }
  /* The best end x < r sets bits freely below some bit j that r has and x
   * clears (heavier receives where x has a 1): one candidate per set bit. */
  double best = 0;
  for (int32_t j = 0; j < L; j++)
    if (r >> j & 1) {
      int32_t x = (r >> (j + 1) << (j + 1)) | (((int32_t)1 << j) - 1);
      best = fmax(best, rd_allgather_path(p, C, L, r, x, u, a));
    }
  return best;
}

/* ---- rhd ----
 * Recursive halving (distance m/2, m/4, ...): new rank i keeps the half of
 * its range holding block i and sends the other half, which the partner
 * reduces; then recursive doubling (distance 1, 2, ...) of the reduced
 * blocks for all-reduce. All-reduce splits the buffer into m units (blocks
 * of new ranks); reduce-scatter into p units (old blocks), new rank i < r
 * holding two. */
static int rhd_lower(fs__cb *cb) {
  int32_t p = cb->p, L = floor_lg(p), m = (int32_t)1 << L, r = p - m;
  int ar = cb->prm->op == FS_COLL_ALLREDUCE;
  int32_t units = ar ? m : p;
  int rc = fs__cb_units(cb, units);
  if (rc) return rc;
  xstate s;
  memset(&s, 0, sizeof(s));
  int32_t *lo = fs__malloc((size_t)m, sizeof(int32_t)), *hi = fs__malloc((size_t)m, sizeof(int32_t));
  if ((rc = xstate_init(&s, cb, 1))) goto out;
  if (!lo || !hi) {
    rc = fs_err_set(cb->err, FS_ENOMEM, "out of memory lowering rhd");
    goto out;
  }
  for (int32_t j = 0; j < r && !rc; j++)
    rc = put(cb, &s, 2 * j, 2 * j + 1, 0, s.ua, range_units(&s, s.ua, 0, units), 1);
  for (int32_t i = 0; i < m; i++) lo[i] = 0, hi[i] = m;
  for (int32_t k = 0; k < L && !rc; k++) {
    int32_t D = m >> (k + 1);
    for (int32_t i = 0; i < m && !rc; i++) {
      if (i & D) continue;
      int32_t j = i | D, mid = lo[i] + D;
      int32_t na = range_units(&s, s.ua, unit_of(mid, ar, r), unit_of(hi[i], ar, r));
      int32_t nb = range_units(&s, s.ub, unit_of(lo[i], ar, r), unit_of(mid, ar, r));
      rc = swap(cb, &s, old_rank(i, r), old_rank(j, r), 0, s.ua, na, s.ub, nb, 1, 0);
      hi[i] = lo[j] = mid;
    }
  }
  for (int32_t k = 0; k < L && ar && !rc; k++) {
    int32_t dist = (int32_t)1 << k;
    for (int32_t i = 0; i < m && !rc; i++) {
      if (i & dist) continue;
      int32_t j = i | dist;
      int32_t na = range_units(&s, s.ua, lo[i], hi[i]);
      int32_t nb = range_units(&s, s.ub, lo[j], hi[j]);
      rc = swap(cb, &s, old_rank(i, r), old_rank(j, r), 0, s.ua, na, s.ub, nb, 0, 0);
      lo[i] = lo[j] = lo[i] < lo[j] ? lo[i] : lo[j];
      hi[i] = hi[j] = hi[i] > hi[j] ? hi[i] : hi[j];
    }
  }
  for (int32_t j = 0; j < r && !rc; j++) {
    int32_t n = 1;
    if (ar)
      n = range_units(&s, s.ua, 0, units);
    else
      s.ua[0] = 2 * j; /* the even rank's own block */
    rc = put(cb, &s, 2 * j + 1, 2 * j, 0, s.ua, n, 0);
  }
out:
  free(lo);
  free(hi);
  xstate_free(&s);
  return rc;
}

/* One message per round, so every round costs what its receiver on the
 * longest path gets, plus alpha and its reduction (chain_time with C = 1
 * and v = d). Reduce-scatter for p = m + r: the lower half of every range
 * is the heavier (merged pairs are new ranks 0..r-1) and the path keeping
 * lower halves ends at new rank 0, which does a post step: round k moves
 * D_k + min(r, D_k) blocks, D_k = m / 2^(k+1). */
static double rhd_model(const fs_coll_params *prm, int32_t p, int32_t C,
                        const fs_coll_cost *cost) {
  (void)C;
  int32_t L = floor_lg(p), m = (int32_t)1 << L, r = p - m;
  double a = cost->alpha_s, be = cost->beta_s_per_byte, ga = prm->gamma_s_per_byte;
  double n = prm->bytes, t = 0;
  if (r) t += a + n * (be + ga); /* pre step: the whole buffer, reduced */
  if (prm->op == FS_COLL_ALLREDUCE) {
    for (int32_t k = 0; k < L; k++) {
      double half = n / (double)((int64_t)2 << k); /* reduce-scatter round k */
      double grown = n / m * ((int32_t)1 << k); /* all-gather round k */
      t += a + half * (be + ga) + a + grown * be;
    }
    if (r) t += a + n * be; /* post step: the whole result */
    return t;
  }
  double b = n / p;
  for (int32_t k = 0; k < L; k++) {
    int32_t D = m >> (k + 1);
    t += a + (D + (r < D ? r : D)) * b * (be + ga);
  }
  if (r) t += a + b * be; /* post step: the even rank's block */
  return t;
}

const fs__coll_algo_impl fs__coll_rd = {
    FS_ALGO_RD,
    FS__OP(FS_COLL_ALLREDUCE) | FS__OP(FS_COLL_ALLGATHER),
    rd_lower,
    rd_model,
    NULL, /* one chunk per round, as the textbook */
    NULL,
};

const fs__coll_algo_impl fs__coll_rhd = {
    FS_ALGO_RHD,
    FS__OP(FS_COLL_ALLREDUCE) | FS__OP(FS_COLL_REDUCESCATTER),
    rhd_lower,
    rhd_model,
    NULL,
    NULL,
};
