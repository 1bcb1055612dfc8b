/* Ring algorithms (NCCL-style): all-reduce as reduce-scatter then
 * all-gather around the ring, and pipelined chains for broadcast and reduce.
 * K channels run K rings over the same rank order, each carrying 1/K of the
 * buffer (distinct flows, so ECMP can spread them); each message is cut in C
 * chunks streamed back to back.
 *
 * Step t of reduce-scatter: rank r sends block (r - t - 1) mod p to r + 1,
 * which adds it to its own; after p - 1 steps rank r holds block r reduced.
 * Step t of all-gather: rank r sends block (r - t) mod p. Units are
 * (block, channel, chunk), block-major. Flows: p * S * K * C, S steps. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct ring_state {
  int32_t *ready;     /* [rank][k][c]: item after which the last received data is usable */
  int32_t *ready_next;
  int32_t *last_sent; /* [rank][k]: previous send, for back-to-back streaming */
} ring_state;

static int32_t mod(int32_t a, int32_t p) { return ((a % p) + p) % p; }

/* One step of the all-rank ring: every rank r sends block blk(r) to r+1. */
static int ring_step(fs__cb *cb, ring_state *st, int32_t t, int reduce, int rs_shift) {
  int32_t p = cb->p, K = cb->channels, C = cb->chunks;
  size_t n = (size_t)p * K * C;
  for (size_t i = 0; i < n; i++) st->ready_next[i] = -1;
  for (int32_t r = 0; r < p; r++) {
    int32_t to = mod(r + 1, p);
    int32_t blk = mod(r - t - rs_shift, p);
    for (int32_t k = 0; k < K; k++)
      for (int32_t c = 0; c < C; c++) {
        size_t i = ((size_t)r * K + k) * C + c;
        int32_t unit = (blk * K + k) * C + c;
        fs__msg m;
        int32_t *ls = &st->last_sent[(size_t)r * K + k];
        int rc = fs__cb_send(cb, r, to, &unit, 1, reduce, &st->ready[i], 1, ls, 1, &m);
        if (rc) return rc;
        *ls = m.flow;
        st->ready_next[((size_t)to * K + k) * C + c] = m.ready;
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

static int ring_lower(fs__cb *cb) {
  const fs_coll_params *prm = cb->prm;
  int32_t p = cb->p, K = cb->channels, C = cb->chunks;
  if (prm->op == FS_COLL_BROADCAST) return chain(cb, prm->root, 0);
  if (prm->op == FS_COLL_REDUCE) return chain(cb, prm->root + 1, 1);
  int rc = fs__cb_units(cb, p * K * C);
  if (rc) return rc;
  size_t n = (size_t)p * K * C;
  ring_state st = {malloc(n * sizeof(int32_t)), malloc(n * sizeof(int32_t)),
                   malloc((size_t)p * K * sizeof(int32_t))};
  if (!st.ready || !st.ready_next || !st.last_sent) {
    rc = fs_err_set(cb->err, FS_ENOMEM, "out of memory lowering ring");
    goto out;
  }
  for (size_t i = 0; i < n; i++) st.ready[i] = -1;
  for (size_t i = 0; i < (size_t)p * K; i++) st.last_sent[i] = -1;
  if (prm->op == FS_COLL_REDUCESCATTER || prm->op == FS_COLL_ALLREDUCE)
    for (int32_t t = 0; t < p - 1 && !rc; t++) rc = ring_step(cb, &st, t, 1, 1);
  if (prm->op == FS_COLL_ALLGATHER || prm->op == FS_COLL_ALLREDUCE)
    for (int32_t t = 0; t < p - 1 && !rc; t++) rc = ring_step(cb, &st, t, 0, 0);
out:
  free(st.ready);
  free(st.ready_next);
  free(st.last_sent);
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
