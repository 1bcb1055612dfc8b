/* Ring algorithms (NCCL-style): all-reduce as reduce-scatter then
 * all-gather around the ring, and pipelined chains for broadcast and reduce.
 * K channels run K rings, each carrying 1/K of the buffer (distinct flows,
 * so ECMP can spread them); each message is cut in C chunks streamed back
 * to back.
 *
 * Rank orders. A ring is a cyclic order of the ranks, one per channel:
 * ord[k][i] is the rank at position i of channel k's ring and pos[k][r] its
 * inverse. By default every channel's order is the ranks' own (ord = id).
 * When the ranks form whole scale-up servers (fs_coll_ring_server_size: n
 * > 1 consecutive runs of G > 1 ranks, each run on its own scale-up switch)
 * the ring is node-aware, as NCCL's ring graphs on servers with a NIC per
 * GPU: inside server block j channel k visits the local ranks rotated by
 * k mod G, forward on even j and backward on odd j (a snake). An even
 * server then leaves through local (k - 1) mod G and the next, odd, one is
 * entered through that same local GPU (the same rail), and leaves through
 * local k mod G, which the next even server is entered through; with K = G
 * channels every GPU's NIC sends for exactly one channel and receives for
 * exactly one. With no channel count asked for (channels 0) K = G then.
 * Broadcast and reduce chains keep the ranks' order.
 *
 * Step t of reduce-scatter: the rank at position i of channel k sends block
 * ord[k][i - t - 1] to the rank at i + 1, which adds it to its own; after
 * p - 1 steps the rank at position i holds block ord[k][i], its own, reduced
 * (for every channel, so the block a rank ends owning is its rank's, as with
 * one order). Step t of all-gather: position i sends block ord[k][i - t].
 * Units are (block, channel, chunk), block-major, block = rank. Flows:
 * p * S * K * C, S steps. Orders cost 2 K p ints. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "internal.h"

typedef struct ring_state {
  int32_t *ready;     /* [rank][k][c]: item after which the last received data is usable */
  int32_t *ready_next;
  int32_t *last_sent; /* [rank][k]: previous send, for back-to-back streaming */
  int32_t *ord;       /* [k][position]: rank there in channel k's ring */
  int32_t *pos;       /* [k][rank]: its position */
} ring_state;

static int32_t mod(int32_t a, int32_t p) { return ((a % p) + p) % p; }

/* One step of every channel's ring: the rank at position i sends block
 * ord[i - t - rs_shift] to the rank at i + 1. Ranks outermost, then
 * channels, then chunks: with ord = id the flows are added exactly as by
 * the one-order ring this generalises. */
static int ring_step(fs__cb *cb, ring_state *st, int32_t t, int reduce, int rs_shift) {
  int32_t p = cb->p, K = cb->channels, C = cb->chunks;
  size_t n = (size_t)p * K * C;
  for (size_t i = 0; i < n; i++) st->ready_next[i] = -1;
  /* Rotated (fs__cb.rotated, the ranks' own order): rank 0 alone, whose
   * next message waits for what rank p - 1 sends it now, the image of its
   * own message under r -> r - 1, so for its own message's item. */
  for (int32_t r = 0; r < (cb->rotated ? 1 : p); r++) {
    for (int32_t k = 0; k < K; k++) {
      const int32_t *ord = st->ord + (size_t)k * p;
      int32_t at = st->pos[(size_t)k * p + r];
      int32_t to = ord[mod(at + 1, p)];
      int32_t blk = ord[mod(at - t - rs_shift, p)];
      for (int32_t c = 0; c < C; c++) {
        size_t i = ((size_t)r * K + k) * C + c;
        int32_t unit = (blk * K + k) * C + c;
        fs__msg m;
        int32_t *ls = &st->last_sent[(size_t)r * K + k];
        int rc = fs__cb_send(cb, r, to, &unit, 1, reduce, &st->ready[i], 1, ls, 1, &m);
        if (rc) return rc;
        *ls = m.flow;
        st->ready_next[((size_t)(cb->rotated ? r : to) * K + k) * C + c] = m.ready;
      }
    }
  }
  int32_t *tmp = st->ready;
  st->ready = st->ready_next;
  st->ready_next = tmp;
  return 0;
}

/* A chain from rank `first` through p-1 hops, the whole buffer pipelined. */
static int chain(fs__cb *cb, int32_t first, int reduce) {
  int32_t p = cb->p, K = cb->channels, C = cb->chunks;
  int rc = fs__cb_units(cb, K * C);
  if (rc) return rc;
  int32_t *ready = malloc((size_t)K * C * sizeof(int32_t));
  int32_t *last = malloc((size_t)K * sizeof(int32_t));
  if (!ready || !last) {
    free(ready);
    free(last);
    return fs_err_set(cb->err, FS_ENOMEM, "out of memory lowering ring");
  }
  for (int32_t i = 0; i < K * C; i++) ready[i] = -1;
  for (int32_t t = 0; t < p - 1 && !rc; t++) {
    int32_t from = mod(first + t, p), to = mod(first + t + 1, p);
    for (int32_t k = 0; k < K; k++) last[k] = -1;
    for (int32_t k = 0; k < K && !rc; k++)
      for (int32_t c = 0; c < C && !rc; c++) {
        int32_t unit = k * C + c;
        fs__msg m;
        rc = fs__cb_send(cb, from, to, &unit, 1, reduce, &ready[unit], 1, &last[k], 1, &m);
        last[k] = m.flow;
        ready[unit] = m.ready;
      }
  }
  free(ready);
  free(last);
  return rc;
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* The scale-up switch host h hangs off, -1 if none. */
static int32_t scaleup_of(const fs_topo *t, int32_t h) {
  for (int32_t e = t->out_start[h]; e < t->out_start[h + 1]; e++) {
    int32_t w = t->links[t->out_links[e]].to;
    if (t->nodes[w].kind == FS_NODE_SCALEUP) return w;
  }
  return -1;
}

int32_t fs_coll_ring_server_size(const fs_topo *t, const fs_coll_group *g) {
  int32_t p = g->p;
  if (p < 4 || !t) return 0; /* two servers of two ranks at least */
  for (int32_t r = 0; r < p; r++)
    if (g->hosts[r] < 0 || g->hosts[r] >= t->n_hosts) return 0;
  int32_t sw0 = scaleup_of(t, g->hosts[0]), G = 1;
  if (sw0 < 0) return 0;
  while (G < p && scaleup_of(t, g->hosts[G]) == sw0) G++;
  if (G < 2 || G == p || p % G) return 0;
  int32_t n = p / G;
  int32_t *first = fs__malloc((size_t)n, sizeof(int32_t));
  if (!first) return FS_ENOMEM;
  int32_t out = G;
  for (int32_t r = 0; r < p && out; r++) {
    int32_t sw = scaleup_of(t, g->hosts[r]);
    if (sw < 0 || (r % G && sw != first[r / G])) out = 0;
    if (r % G == 0) first[r / G] = sw;
  }
  /* A switch met by two runs is a server the ring would enter twice: its
   * NICs would not be shared out one per channel. */
  if (out) {
    qsort(first, (size_t)n, sizeof(int32_t), cmp_i32);
    for (int32_t j = 1; j < n && out; j++)
      if (first[j] == first[j - 1]) out = 0;
  }
  free(first);
  return out;
}

void fs_coll_ring_order(int32_t p, int32_t G, int32_t k, int32_t *order) {
  if (G < 2 || p % G || p == G) {
    for (int32_t i = 0; i < p; i++) order[i] = i;
    return;
  }
  int32_t rot = mod(k, G);
  for (int32_t i = 0; i < p; i++) {
    int32_t j = i / G, x = i % G;
    int32_t local = j % 2 == 0 ? mod(rot + x, G) : mod(rot - 1 - x, G);
    order[i] = j * G + local;
  }
}

int32_t fs_coll_ring_channels(const fs_coll_params *prm, int32_t G) {
  return prm->channels > 0 ? prm->channels : G > 1 ? G : 1;
}

static int ring_lower(fs__cb *cb) {
  const fs_coll_params *prm = cb->prm;
  if (prm->op == FS_COLL_BROADCAST) return chain(cb, prm->root, 0);
  if (prm->op == FS_COLL_REDUCE) return chain(cb, prm->root + 1, 1);
  int32_t G = fs_coll_ring_server_size(cb->t, cb->g);
  if (G < 0) return fs_err_set(cb->err, G, "out of memory lowering ring");
  if (cb->rotated && G > 1)
    return fs_err_set(cb->err, FS_EINVAL, "a node-aware ring has no rank rotation");
  /* The builder resolved channels 0 to 1; a node-aware ring's default is
   * one channel per GPU of a server, so that every NIC carries one. */
  cb->channels = fs_coll_ring_channels(prm, G);
  int32_t p = cb->p, K = cb->channels, C = cb->chunks;
  int rc = fs__cb_units(cb, p * K * C);
  if (rc) return rc;
  size_t n = (size_t)p * K * C, nk = (size_t)p * K;
  ring_state st = {malloc(n * sizeof(int32_t)), malloc(n * sizeof(int32_t)),
                   malloc(nk * sizeof(int32_t)), malloc(nk * sizeof(int32_t)),
                   malloc(nk * sizeof(int32_t))};
  if (!st.ready || !st.ready_next || !st.last_sent || !st.ord || !st.pos) {
    rc = fs_err_set(cb->err, FS_ENOMEM, "out of memory lowering ring");
    goto out;
  }
  for (size_t i = 0; i < n; i++) st.ready[i] = -1;
  for (size_t i = 0; i < nk; i++) st.last_sent[i] = -1;
  for (int32_t k = 0; k < K; k++) {
    int32_t *ord = st.ord + (size_t)k * p;
    fs_coll_ring_order(p, G, k, ord);
    for (int32_t i = 0; i < p; i++) st.pos[(size_t)k * p + ord[i]] = i;
  }
  if (prm->op == FS_COLL_REDUCESCATTER || prm->op == FS_COLL_ALLREDUCE)
    for (int32_t t = 0; t < p - 1 && !rc; t++) rc = ring_step(cb, &st, t, 1, 1);
  if (prm->op == FS_COLL_ALLGATHER || prm->op == FS_COLL_ALLREDUCE)
    for (int32_t t = 0; t < p - 1 && !rc; t++) rc = ring_step(cb, &st, t, 0, 0);
out:
  FS__FREE_ALL(st.ready, st.ready_next, st.last_sent, st.ord, st.pos);
  return rc;
}

/* Closed form: the chunked pipeline of fs__pipeline_time with S stages (on
 * one link per rank for rings, a new link per stage for chains),
 * chunk link time d = (m / C) * beta for a per-step message m (each of the K
 * channels carries m / K at 1/K of the link), hop delay alpha plus the
 * reduction of one chunk of one channel, (m / (K C)) * gamma, after reducing
 * steps. With C = K = 1 this is Thakur et al.'s ring all-reduce
 * 2(p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma. */
static double ring_model(const fs_coll_params *prm, int32_t p, int32_t C,
                         const fs_coll_cost *cost) {
  int32_t K = prm->channels > 0 ? prm->channels : 1;
  int chain_op = prm->op == FS_COLL_BROADCAST || prm->op == FS_COLL_REDUCE;
  double m = chain_op ? prm->bytes : prm->bytes / p;
  double d = m / C * cost->beta_s_per_byte;
  double g = m / ((double)K * C) * prm->gamma_s_per_byte;
  int32_t S = prm->op == FS_COLL_ALLREDUCE ? 2 * (p - 1) : p - 1;
  double *h = malloc((size_t)S * sizeof(double));
  if (!h) return NAN;
  for (int32_t t = 0; t < S; t++) {
    int reducing = prm->op == FS_COLL_REDUCE || prm->op == FS_COLL_REDUCESCATTER ||
                   (prm->op == FS_COLL_ALLREDUCE && t < p - 1);
    h[t] = cost->alpha_s + (reducing ? g : 0);
  }
  double time = fs__pipeline_time(S, C, d, h, !chain_op);
  free(h);
  return time;
}

/* Rings are pipelined by construction: chunks only hide latency, so one
 * chunk per step; chains (broadcast, reduce) pipeline 1 MiB chunks, at most
 * 64. */
static int32_t ring_default_chunks(const fs_coll_params *prm, int32_t p) {
  (void)p;
  if (prm->op != FS_COLL_BROADCAST && prm->op != FS_COLL_REDUCE) return 1;
  double c = ceil(prm->bytes / (1 << 20));
  return c < 1 ? 1 : c > 64 ? 64 : (int32_t)c;
}

const fs__coll_algo_impl fs__coll_ring = {
    FS_ALGO_RING,
    FS__OP(FS_COLL_ALLREDUCE) | FS__OP(FS_COLL_ALLGATHER) | FS__OP(FS_COLL_REDUCESCATTER) |
        FS__OP(FS_COLL_BROADCAST) | FS__OP(FS_COLL_REDUCE),
    ring_lower,
    ring_model,
    ring_default_chunks,
    NULL,
};
