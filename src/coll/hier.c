/* Hierarchical (two-level) collectives for ranks grouped in scale-up nodes
 * of q = node_size consecutive ranks (N = p / q nodes): all-reduce as a ring
 * reduce-scatter inside every node, a ring all-reduce across the nodes per
 * rail, and a ring all-gather inside every node (the 2D all-reduce of
 * Mikami et al. 2018); reduce-scatter and all-gather are its halves.
 *
 * Rank r = a * q + j sits in node a at local index j; rail j is the ranks
 * with local index j. The buffer is p blocks (block b ends reduced at rank
 * b), each split in K channels x C chunks: unit (b * K + k) * C + c. Slot s
 * of a node-level ring is shard s = blocks {a' * q + s | a' < N} (one
 * message carries chunk (k, c) of all N blocks); slot s of rail j's ring is
 * block s * q + j. Inside a level the rings pipeline as in ring.c; a rank
 * enters the other level only once it holds all its data from this one (a
 * join of its receipts), and its first message there also waits for the
 * receiver to have entered (so the receiver's own operand is ready when it
 * reduces). Flows: p K C (2(q-1) + 2(N-1)) for all-reduce; memory O(p K C)
 * plus the receipts of one level, O(flows / levels). Uses whatever links
 * the topology has: a faster scale-up domain just shortens the node level. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "internal.h"

enum { NODE_LEVEL = 0, RAIL_LEVEL = 1 };

/* One ring phase: reduce-scatter (rs = 1) or all-gather at a level. */
typedef struct phase {
  int level, rs;
} phase;

typedef struct hier {
  fs__cb *cb;
  int32_t q, n, K, C;
  int32_t *ready;      /* [rank][k][c]: item after which the last data received is usable */
  int32_t *ready_next;
  int32_t *last_sent;  /* [rank][k]: previous send, for back-to-back streaming */
  int32_t *entered;    /* [rank]: join of everything the rank received at the last level */
  int32_t *recv;       /* [rank][recv_cap]: receipts at the current level */
  int32_t *n_recv;     /* [rank] */
  size_t recv_cap;
  int32_t *units;      /* one message's units (N at node level) */
} hier;

static int32_t mod(int32_t a, int32_t p) { return ((a % p) + p) % p; }

/* Ranks per node: node_size 0 means the whole group is one node. */
static int32_t ranks_per_node(const fs_coll_params *prm, int32_t p) {
  return prm->node_size > 0 ? prm->node_size : p;
}

/* The phases of op in order; phases with no step (a level of one rank)
 * are skipped by the callers. */
static int32_t phases_of(fs_coll_op op, phase *ph) {
  switch (op) {
    case FS_COLL_ALLREDUCE:
      ph[0] = (phase){NODE_LEVEL, 1};
      ph[1] = (phase){RAIL_LEVEL, 1};
      ph[2] = (phase){RAIL_LEVEL, 0};
      ph[3] = (phase){NODE_LEVEL, 0};
      return 4;
    case FS_COLL_REDUCESCATTER:
      ph[0] = (phase){NODE_LEVEL, 1};
      ph[1] = (phase){RAIL_LEVEL, 1};
      return 2;
    case FS_COLL_ALLGATHER:
      ph[0] = (phase){RAIL_LEVEL, 0};
      ph[1] = (phase){NODE_LEVEL, 0};
      return 2;
    default: return 0;
  }
}

static int32_t steps_of(int level, int32_t q, int32_t n) {
  return (level == NODE_LEVEL ? q : n) - 1;
}

/* Every rank joins what it received at the level it leaves; its next sends
 * wait for that join. */
static int enter_level(hier *h) {
  fs__cb *cb = h->cb;
  int32_t KC = h->K * h->C;
  for (int32_t r = 0; r < cb->p; r++) {
    int32_t j = fs__cb_join(cb, r, &h->recv[(size_t)r * h->recv_cap], h->n_recv[r]);
    if (j < 0) return j;
    h->entered[r] = j;
    h->n_recv[r] = 0;
    for (int32_t i = 0; i < KC; i++) h->ready[(size_t)r * KC + i] = j;
  }
  return 0;
}

/* Step t of every ring at `level`: each rank sends slot pos - t - rs of
 * its ring to its successor. `first`: the first step after entering the
 * level, which also waits for the receiver to have entered. */
static int ring_step(hier *h, int level, int rs, int32_t t, int first) {
  fs__cb *cb = h->cb;
  int32_t p = cb->p, q = h->q, n = h->n, K = h->K, C = h->C;
  for (int32_t r = 0; r < p; r++) {
    int32_t a = r / q, j = r % q, to, s, cnt;
    if (level == NODE_LEVEL) {
      to = a * q + mod(j + 1, q);
      s = mod(j - t - rs, q);
    } else {
      to = mod(a + 1, n) * q + j;
      s = mod(a - t - rs, n);
    }
    for (int32_t k = 0; k < K; k++)
      for (int32_t c = 0; c < C; c++) {
        if (level == NODE_LEVEL) {
          for (int32_t b = 0; b < n; b++) h->units[b] = ((b * q + s) * K + k) * C + c;
          cnt = n;
        } else {
          h->units[0] = ((s * q + j) * K + k) * C + c;
          cnt = 1;
        }
        size_t i = ((size_t)r * K + k) * C + c;
        int32_t done[2] = {h->ready[i], first ? h->entered[to] : -1};
        int32_t *ls = &h->last_sent[(size_t)r * K + k];
        fs__msg m;
        int rc = fs__cb_send(cb, r, to, h->units, cnt, rs, done, 2, ls, 1, &m);
        if (rc) return rc;
        *ls = m.flow;
        h->ready_next[((size_t)to * K + k) * C + c] = m.ready;
        h->recv[(size_t)to * h->recv_cap + h->n_recv[to]++] = m.ready;
      }
  }
  int32_t *tmp = h->ready;
  h->ready = h->ready_next;
  h->ready_next = tmp;
  return 0;
}

static int hier_lower(fs__cb *cb) {
  int32_t p = cb->p, q = ranks_per_node(cb->prm, p);
  hier h = {cb, q, p / q, cb->channels, cb->chunks, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL};
  int32_t KC = h.K * h.C;
  int rc = fs__cb_units(cb, p * KC);
  if (rc) return rc;
  /* A level's receipts: at most two phases (reduce-scatter + all-gather)
   * of max(q, N) - 1 steps each, K C messages per step. */
  h.recv_cap = 2 * (size_t)((q > h.n ? q : h.n) - 1) * (size_t)KC;
  size_t n = (size_t)p * KC;
  h.ready = malloc(n * sizeof(int32_t));
  h.ready_next = malloc(n * sizeof(int32_t));
  h.last_sent = malloc((size_t)p * h.K * sizeof(int32_t));
  h.entered = malloc((size_t)p * sizeof(int32_t));
  h.recv = malloc(((size_t)p * h.recv_cap + 1) * sizeof(int32_t)); /* + 1: never 0 */
  h.n_recv = calloc((size_t)p, sizeof(int32_t));
  h.units = malloc((size_t)h.n * sizeof(int32_t));
  if (!h.ready || !h.ready_next || !h.last_sent || !h.entered || !h.recv || !h.n_recv ||
      !h.units) {
    rc = fs_err_set(cb->err, FS_ENOMEM, "out of memory lowering hier");
    goto out;
  }
  for (size_t i = 0; i < n; i++) h.ready[i] = h.ready_next[i] = -1;
  for (size_t i = 0; i < (size_t)p * h.K; i++) h.last_sent[i] = -1;
  phase ph[4];
  int32_t nph = phases_of(cb->prm->op, ph);
  int prev = -1;
  for (int32_t i = 0; i < nph && !rc; i++) {
    int32_t S = steps_of(ph[i].level, q, h.n);
    if (S == 0) continue;
    /* Only a change of level is a barrier: with one node (or one rank per
     * node) all-reduce stays one pipelined ring, exactly ring.c's. */
    int barrier = prev >= 0 && prev != ph[i].level;
    if (barrier) rc = enter_level(&h);
    for (int32_t t = 0; t < S && !rc; t++)
      rc = ring_step(&h, ph[i].level, ph[i].rs, t, barrier && t == 0);
    prev = ph[i].level;
  }
out:
  FS__FREE_ALL(h.ready, h.ready_next, h.last_sent, h.entered, h.recv, h.n_recv, h.units);
  return rc;
}

/* Closed form: one ring pipeline (fs__pipeline_time, one_link = 1) per
 * level visited, summed, because a rank enters the next level only when
 * its last chunk of this level is usable, and on a symmetric network every
 * rank gets there at the same instant. A level's per-step message is
 * m = n/q at node level (a shard) and n/p at rail level (a block); chunk
 * link time d = (m / C) beta, hop delay alpha plus (m / (K C)) gamma after
 * reducing steps. With C = K = 1 and gamma = 0, all-reduce takes
 * 2(q-1)(alpha + n beta / q) + 2(N-1)(alpha + n beta / p). */
static double hier_model(const fs_coll_params *prm, int32_t p, int32_t C,
                         const fs_coll_cost *cost) {
  int32_t q = ranks_per_node(prm, p), n = p / q;
  int32_t K = prm->channels > 0 ? prm->channels : 1;
  phase ph[4];
  int32_t nph = phases_of(prm->op, ph);
  double *h = malloc((size_t)(2 * (q > n ? q : n)) * sizeof(double));
  if (!h) return NAN;
  double total = 0, m = 0;
  int32_t stages = 0;
  int prev = -1;
  for (int32_t i = 0; i < nph; i++) {
    int32_t S = steps_of(ph[i].level, q, n);
    if (S == 0) continue;
    if (prev >= 0 && prev != ph[i].level) {
      total += fs__pipeline_time(stages, C, m / C * cost->beta_s_per_byte, h, 1);
      stages = 0;
    }
    m = ph[i].level == NODE_LEVEL ? prm->bytes / q : prm->bytes / p;
    for (int32_t t = 0; t < S; t++)
      h[stages++] = cost->alpha_s + (ph[i].rs ? m / ((double)K * C) * prm->gamma_s_per_byte : 0);
    prev = ph[i].level;
  }
  total += fs__pipeline_time(stages, C, m / C * cost->beta_s_per_byte, h, 1);
  free(h);
  return total;
}

/* Rings pipeline by construction; chunks only hide latency (as ring.c). */
static int32_t hier_default_chunks(const fs_coll_params *prm, int32_t p) {
  (void)prm, (void)p;
  return 1;
}

static int hier_check(const fs_coll_params *prm, int32_t p, fs_err *err) {
  if (prm->node_size > 0 && p % prm->node_size != 0)
    return fs_err_set(err, FS_EINVAL,
                      "hier: node size must divide the %d ranks into whole nodes, got %d", p,
                      prm->node_size);
  return 0;
}

const fs__coll_algo_impl fs__coll_hier = {
    FS_ALGO_HIER,
    FS__OP(FS_COLL_ALLREDUCE) | FS__OP(FS_COLL_ALLGATHER) | FS__OP(FS_COLL_REDUCESCATTER),
    hier_lower,
    hier_model,
    hier_default_chunks,
    hier_check,
};
