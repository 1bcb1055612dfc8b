/* The all-to-all family: Bruck (ceil(lg p) rounds of growing or halved
 * data, for all-gather and all-to-all), pairwise exchange (p-1 rounds of
 * one message per rank) and direct (every message at once; all-to-all,
 * all-gather, send/recv). Formulas and sources: docs/model-coll-a2a.md.
 *
 * Flows: Bruck p * ceil(lg p); pairwise and direct p (p-1); send/recv
 * K * C. Memory O(p) per lowering besides the flows. Chunks and channels
 * are honoured by send/recv only: every other message here is one hop
 * whose successor waits for it whole (a round), so cutting it would add
 * flows and change no time. */
#include <stdlib.h>

#include "../base/base.h"
#include "internal.h"

static int32_t mod(int32_t a, int32_t p) { return ((a % p) + p) % p; }

/* ceil(lg p): the number of Bruck rounds. */
static int32_t ceil_lg(int32_t p) {
  int32_t r = 0;
  while (((int64_t)1 << r) < p) r++;
  return r;
}

/* How many block indexes j in [0, p) have bit k set: the blocks one
 * Bruck all-to-all round moves. Whole periods of 2^(k+1) contribute 2^k
 * each; the partial period contributes what lies above its first 2^k. */
static int64_t bit_count(int32_t p, int32_t k) {
  int64_t period = (int64_t)2 << k, half = (int64_t)1 << k;
  int64_t rest = p % period - half;
  return p / period * half + (rest > 0 ? rest : 0);
}

/* Per-rank bookkeeping of round-by-round algorithms: the item after which
 * the data received in the previous round is usable, the same being filled
 * for this round, and each rank's previous send (to stream back to back). */
typedef struct rounds {
  int32_t *ready, *ready_next, *last_sent;
  int32_t *units; /* scratch unit list, p entries */
} rounds;

static int rounds_init(fs__cb *cb, rounds *st) {
  size_t p = (size_t)cb->p;
  st->ready = malloc(p * sizeof(int32_t));
  st->ready_next = malloc(p * sizeof(int32_t));
  st->last_sent = malloc(p * sizeof(int32_t));
  st->units = malloc(p * sizeof(int32_t));
  if (!st->ready || !st->ready_next || !st->last_sent || !st->units)
    return fs_err_set(cb->err, FS_ENOMEM, "out of memory lowering %s",
                      fs_coll_algo_name(cb->prm->algo));
  for (size_t r = 0; r < p; r++) st->ready[r] = st->ready_next[r] = st->last_sent[r] = -1;
  return 0;
}

static void rounds_free(rounds *st) {
  FS__FREE_ALL(st->ready, st->ready_next, st->last_sent, st->units);
}

/* Rank `from` sends units[0..n) to `to` in the current round: after the
 * data it received last round is usable (a round is a blocking sendrecv,
 * which also covers forwarded data) and after its previous send has left. */
static int round_send(fs__cb *cb, rounds *st, int32_t from, int32_t to, int32_t n) {
  fs__msg m;
  int rc = fs__cb_send(cb, from, to, st->units, n, 0, &st->ready[from], 1,
                       &st->last_sent[from], 1, &m);
  if (rc) return rc;
  st->last_sent[from] = m.flow;
  st->ready_next[to] = m.ready;
  return 0;
}

static void round_end(rounds *st) {
  int32_t *t = st->ready;
  st->ready = st->ready_next;
  st->ready_next = t;
}

/* ---- Bruck ---- */

/* All-gather: rank r holds blocks r .. r + 2^k - 1 (mod p) before round k
 * and sends the first min(2^k, p - 2^k) of them to r - 2^k, which appends
 * them to its own run. The final rotation into rank order is a local copy:
 * free. Units: one per block. */
static int bruck_allgather(fs__cb *cb, rounds *st) {
  int32_t p = cb->p, R = ceil_lg(p);
  int rc = fs__cb_units(cb, p);
  for (int32_t k = 0; k < R && !rc; k++) {
    int32_t dist = (int32_t)1 << k, cnt = dist < p - dist ? dist : p - dist;
    for (int32_t r = 0; r < p && !rc; r++) {
      for (int32_t j = 0; j < cnt; j++) st->units[j] = mod(r + j, p);
      rc = round_send(cb, st, r, mod(r - dist, p), cnt);
    }
    round_end(st);
  }
  return rc;
}

/* All-to-all: after the (free) local rotation, index j of rank s holds the
 * block for rank s + j. Round k moves every index with bit k set by +2^k,
 * so before round k index j of rank r holds the block that origin
 * s = r - (j mod 2^k) sends to s + j, and after the last round every block
 * is at its destination (the inverse rotation is free too). Units are
 * global: origin * p + destination. */
static int bruck_alltoall(fs__cb *cb, rounds *st) {
  int32_t p = cb->p, R = ceil_lg(p);
  int rc = fs__cb_units(cb, p);
  for (int32_t k = 0; k < R && !rc; k++) {
    int32_t dist = (int32_t)1 << k;
    for (int32_t r = 0; r < p && !rc; r++) {
      int32_t n = 0;
      for (int32_t j = dist; j < p; j++) {
        if (!(j & dist)) continue;
        int32_t s = mod(r - (j & (dist - 1)), p);
        st->units[n++] = s * p + mod(s + j, p);
      }
      rc = round_send(cb, st, r, mod(r + dist, p), n);
    }
    round_end(st);
  }
  return rc;
}

static int bruck_lower(fs__cb *cb) {
  rounds st;
  int rc = rounds_init(cb, &st);
  if (!rc)
    rc = cb->prm->op == FS_COLL_ALLGATHER ? bruck_allgather(cb, &st) : bruck_alltoall(cb, &st);
  rounds_free(&st);
  return rc;
}

/* Every round is a shift permutation, so on a contention-free network each
 * message has its sender's link alone: round k costs alpha + m_k beta with
 * m_k = min(2^k, p - 2^k) n/p (all-gather) or bit_count(p, k) n/p
 * (all-to-all), and the rounds add up. For all-gather the m_k sum to
 * (p-1)/p n (Thakur et al.'s lg p alpha + (p-1)/p n beta); for all-to-all
 * with p a power of two each is n/2 (their lg p alpha + (n/2) lg p beta). */
static double bruck_model(const fs_coll_params *prm, int32_t p, int32_t C,
                          const fs_coll_cost *cost) {
  (void)C;
  int32_t R = ceil_lg(p);
  double blk = prm->bytes / p, t = 0;
  for (int32_t k = 0; k < R; k++) {
    int64_t dist = (int64_t)1 << k;
    int64_t blocks = prm->op == FS_COLL_ALLGATHER ? (dist < p - dist ? dist : p - dist)
                                                  : bit_count(p, k);
    t += cost->alpha_s + (double)blocks * blk * cost->beta_s_per_byte;
  }
  return t;
}

const fs__coll_algo_impl fs__coll_bruck = {
    FS_ALGO_BRUCK,
    FS__OP(FS_COLL_ALLGATHER) | FS__OP(FS_COLL_ALLTOALL),
    bruck_lower,
    bruck_model,
    NULL,
    NULL,
};

/* ---- pairwise exchange ---- */

/* Round k = 1 .. p-1: rank r sends its block for `to` and receives one
 * block, as MPICH does: to = r XOR k when p is a power of two (pairs
 * swap), else to = r + k, receiving from r - k. Either way a round is a
 * permutation. Units: origin * p + destination. */
static int pairwise_lower(fs__cb *cb) {
  int32_t p = cb->p;
  int pow2 = (p & (p - 1)) == 0;
  rounds st;
  int rc = rounds_init(cb, &st);
  if (!rc) rc = fs__cb_units(cb, p);
  for (int32_t k = 1; k < p && !rc; k++) {
    for (int32_t r = 0; r < p && !rc; r++) {
      int32_t to = pow2 ? r ^ k : mod(r + k, p);
      st.units[0] = r * p + to;
      rc = round_send(cb, &st, r, to, 1);
    }
    round_end(&st);
  }
  rounds_free(&st);
  return rc;
}

/* p-1 rounds of one n/p message each, one after another (a round waits for
 * the previous round's receive): (p-1) (alpha + n/p beta), which is
 * Thakur et al.'s (p-1) alpha + (p-1)/p n beta exactly. */
static double pairwise_model(const fs_coll_params *prm, int32_t p, int32_t C,
                             const fs_coll_cost *cost) {
  (void)C;
  return (p - 1) * (cost->alpha_s + prm->bytes / p * cost->beta_s_per_byte);
}

const fs__coll_algo_impl fs__coll_pairwise = {
    FS_ALGO_PAIRWISE, FS__OP(FS_COLL_ALLTOALL), pairwise_lower, pairwise_model, NULL, NULL,
};

/* ---- direct ---- */

/* Send/recv: root to root + 1, the buffer cut into K channels (distinct
 * flows, which ECMP may spread) of C chunks each, every channel streaming
 * its chunks back to back. Units: channel * C + chunk. */
static int direct_sendrecv(fs__cb *cb) {
  int32_t K = cb->channels, C = cb->chunks;
  int32_t from = cb->prm->root, to = mod(from + 1, cb->p);
  int rc = fs__cb_units(cb, K * C);
  for (int32_t k = 0; k < K && !rc; k++) {
    int32_t last = -1;
    for (int32_t c = 0; c < C && !rc; c++) {
      fs__msg m;
      rc = fs__cb_send_range(cb, from, to, k * C + c, 1, 0, NULL, 0, &last, 1, &m);
      last = m.flow;
    }
  }
  return rc;
}

/* All-to-all and all-gather: every rank sends each other rank its block at
 * once, with no dependencies. Units: origin * p + destination (all-to-all)
 * or the block (all-gather). */
static int direct_lower(fs__cb *cb) {
  int32_t p = cb->p;
  fs_coll_op op = cb->prm->op;
  if (op == FS_COLL_SENDRECV) return direct_sendrecv(cb);
  int rc = fs__cb_units(cb, p);
  for (int32_t r = 0; r < p && !rc; r++)
    for (int32_t j = 1; j < p && !rc; j++) {
      int32_t to = mod(r + j, p);
      int32_t unit = op == FS_COLL_ALLTOALL ? r * p + to : r;
      fs__msg m;
      rc = fs__cb_send(cb, r, to, &unit, 1, 0, NULL, 0, NULL, 0, &m);
    }
  return rc;
}

/* All-to-all and all-gather: a rank's p-1 messages of n/p share its link
 * (and each receiver's p-1 share its link), so each drains at 1/(p-1) of
 * the bandwidth in (p-1)/p n beta, all together: alpha + (p-1)/p n beta.
 * Send/recv: K channels each stream C chunks of n/(K C) at 1/K of the link,
 * chunk after chunk with no gap: alpha + n beta for any K, C. */
static double direct_model(const fs_coll_params *prm, int32_t p, int32_t C,
                           const fs_coll_cost *cost) {
  (void)C;
  double n = prm->bytes;
  if (prm->op == FS_COLL_SENDRECV) return cost->alpha_s + n * cost->beta_s_per_byte;
  return cost->alpha_s + (double)(p - 1) / p * n * cost->beta_s_per_byte;
}

const fs__coll_algo_impl fs__coll_direct = {
    FS_ALGO_DIRECT,
    FS__OP(FS_COLL_ALLTOALL) | FS__OP(FS_COLL_ALLGATHER) | FS__OP(FS_COLL_SENDRECV),
    direct_lower,
    direct_model,
    NULL,
    NULL,
};
