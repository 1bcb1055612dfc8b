/* Tree collectives: NCCL's double binary tree (`tree`: all-reduce over two
 * complementary binary trees, broadcast and reduce over one pipelined
 * binary tree) and MPICH's binomial tree (`binomial`: broadcast, reduce,
 * all-reduce), each with the closed form of the DAG it lowers to
 * (docs/model-coll-tree.md).
 *
 * Trees. Tree A is a full binary tree over the in-order positions 0..m-1
 * (m = p for odd p, p - 1 for even p, each subtree's leaves split
 * ceil/floor), so even positions are leaves and odd ones interior; for even
 * p rank p - 1 is an extra root above it with one child. Tree B is A
 * shifted by one rank (odd p) or mirrored, r -> p - 1 - r (even p)
 * (Sanders, Speck & Traeff 2009): A's interior ranks are odd, B's even
 * (for odd p rank 0 is a leaf in both), so no rank is interior twice and
 * every rank has at most 2 children, 2 parents and one internal tree. Both
 * have height H = ceil(log2 ceil(p / 2)) + (p even).
 *
 * Schedules. Broadcast over one tree is pure dataflow: a rank sends chunk c
 * to all its children at once, when c has arrived and its chunk c - 1 has
 * left. Where a rank receives from more than one peer at once (reduce: two
 * children; the double tree: two parents, and uplinks carrying both trees),
 * the arrival times of a dataflow lowering under max-min sharing have no
 * closed form, so those lowerings are step-synchronous: every flow of step
 * s waits for a zero-length join of all flows (and reductions) of step
 * s - 1. Binomial trees use the same steps, Thakur et al.'s rounds.
 *
 * Sizes: flows 4 (p - 1) C K (double-tree all-reduce), (p - 1) C K (tree
 * broadcast or reduce), p - 1 per binomial phase; memory O(p C K) for
 * broadcast, O(p + flows of one step) otherwise; lowering time linear in
 * the flows plus O(p) per step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "internal.h"

/* A rooted tree over ranks 0..p-1: at most two children per rank. */
typedef struct btree {
  int32_t p, root, height;
  int32_t *parent; /* [p], -1 at the root */
  int32_t *kid;    /* [2p], -1 where none */
  int32_t *depth;  /* [p], 0 at the root */
  int32_t *mem;
} btree;

static int tree_alloc(btree *t, int32_t p) {
  memset(t, 0, sizeof(*t));
  t->mem = fs__malloc((size_t)p * 4, sizeof(int32_t));
  if (!t->mem) return FS_ENOMEM;
  t->p = p;
  t->parent = t->mem;
  t->kid = t->mem + p;
  t->depth = t->mem + 3 * (size_t)p;
  for (size_t i = 0; i < (size_t)p * 4; i++) t->mem[i] = -1;
  return 0;
}

static void tree_free(btree *t) {
  free(t->mem);
  t->mem = NULL;
}

/* Full binary tree with `leaves` leaves over the in-order positions
 * [lo, lo + 2 leaves - 1); returns its root. Recursion depth is the height. */
static int32_t build_full(btree *t, int32_t lo, int32_t leaves, int32_t parent, int32_t depth) {
  if (leaves == 1) {
    t->parent[lo] = parent;
    t->depth[lo] = depth;
    return lo;
  }
  int32_t nl = (leaves + 1) / 2, nr = leaves / 2;
  int32_t r = lo + 2 * nl - 1;
  t->parent[r] = parent;
  t->depth[r] = depth;
  t->kid[2 * r] = build_full(t, lo, nl, r, depth + 1);
  t->kid[2 * r + 1] = build_full(t, r + 1, nr, r, depth + 1);
  return r;
}

/* H = ceil(log2 ceil(p / 2)) + (p even): the height of tree A (tested). */
static int32_t tree_height(int32_t p) {
  int32_t leaves = (p + 1) / 2, h = 0;
  while ((1 << h) < leaves) h++;
  return h + (p % 2 == 0);
}

static int tree_a(btree *t, int32_t p) {
  if (tree_alloc(t, p)) return FS_ENOMEM;
  int even = p % 2 == 0;
  int32_t m = even ? p - 1 : p;
  int32_t f = build_full(t, 0, (m + 1) / 2, even ? p - 1 : -1, even);
  if (even) {
    t->parent[p - 1] = -1;
    t->depth[p - 1] = 0;
    t->kid[2 * (p - 1)] = f;
    t->root = p - 1;
  } else {
    t->root = f;
  }
  for (int32_t r = 0; r < p; r++)
    if (t->depth[r] > t->height) t->height = t->depth[r];
  return 0;
}

/* b = a with rank x renamed (x + shift) mod p, or p - 1 - x if mirror. */
static int tree_map(const btree *a, int32_t shift, int mirror, btree *b) {
  int32_t p = a->p;
  if (tree_alloc(b, p)) return FS_ENOMEM;
#define MAP(x) ((x) < 0 ? -1 : mirror ? p - 1 - (x) : ((x) + shift) % p)
  for (int32_t x = 0; x < p; x++) {
    int32_t y = MAP(x);
    b->parent[y] = MAP(a->parent[x]);
    b->kid[2 * y] = MAP(a->kid[2 * x]);
    b->kid[2 * y + 1] = MAP(a->kid[2 * x + 1]);
    b->depth[y] = a->depth[x];
  }
  b->root = MAP(a->root);
#undef MAP
  b->height = a->height;
  return 0;
}

/* The double tree: A, and B = A shifted by one (odd p) or mirrored. */
static int double_tree(btree t[2], int32_t p) {
  if (tree_a(&t[0], p)) return FS_ENOMEM;
  if (tree_map(&t[0], 1, p % 2 == 0, &t[1])) {
    tree_free(&t[0]);
    return FS_ENOMEM;
  }
  return 0;
}

/* Tree A with its root renamed to `root` (rotation of the ranks). */
static int single_tree(btree *t, int32_t p, int32_t root) {
  btree a;
  if (tree_a(&a, p)) return FS_ENOMEM;
  int rc = tree_map(&a, ((root - a.root) % p + p) % p, 0, t);
  tree_free(&a);
  return rc;
}

/* Declared in internal.h (the tests check the shapes): the parents of
 * every rank in the double tree's trees A and B, and their height. Returns
 * 0, or FS_ENOMEM with the outputs untouched. */
int fs__coll_double_tree(int32_t p, int32_t *parent_a, int32_t *parent_b, int32_t *height) {
  btree t[2];
  if (double_tree(t, p)) return FS_ENOMEM;
  memcpy(parent_a, t[0].parent, (size_t)p * sizeof(int32_t));
  memcpy(parent_b, t[1].parent, (size_t)p * sizeof(int32_t));
  *height = t[0].height;
  tree_free(&t[0]);
  tree_free(&t[1]);
  return 0;
}

/* ---- synchronous steps ---- */

/* The flows of the current step (their ready items) and the join of the
 * previous step that they all wait for. */
typedef struct steps {
  int32_t barrier;
  int32_t *items;
  size_t n, cap;
} steps;

static int step_send(fs__cb *cb, steps *st, int32_t from, int32_t to, int32_t unit,
                     int reduce) {
  fs__msg m;
  int rc = fs__cb_send(cb, from, to, &unit, 1, reduce, &st->barrier, 1, NULL, 0, &m);
  if (rc) return rc;
  if (fs__grow(&st->items, &st->cap, st->n + 1, sizeof(int32_t)))
    return fs_err_set(cb->err, FS_ENOMEM, "out of memory lowering tree");
  st->items[st->n++] = m.ready;
  return 0;
}

static int step_end(fs__cb *cb, steps *st, int32_t host_rank) {
  if (st->n == 0) return 0;
  int32_t j = fs__cb_join(cb, host_rank, st->items, (int32_t)st->n);
  if (j < 0) return j;
  st->barrier = j;
  st->n = 0;
  return 0;
}

/* Pipelined reduce over nt trees of the same height H, chunk c of tree t in
 * units (t C + c) K + k: in step s (C + H - 1 steps) every rank at depth d
 * sends chunk s - (H - d) to its parent, which adds it to its own. A level
 * moves together, so a parent's two children always share its downlink. */
static int bsp_reduce(fs__cb *cb, steps *st, const btree *tr, int nt) {
  int32_t C = cb->chunks, K = cb->channels, H = tr[0].height;
  int rc = 0;
  for (int32_t s = 0; s <= C + H - 2 && !rc; s++) {
    for (int t = 0; t < nt && !rc; t++)
      for (int32_t u = 0; u < cb->p && !rc; u++) {
        int32_t c = s - (H - tr[t].depth[u]);
        if (u == tr[t].root || c < 0 || c >= C) continue;
        for (int32_t k = 0; k < K && !rc; k++)
          rc = step_send(cb, st, u, tr[t].parent[u], (t * C + c) * K + k, 1);
      }
    if (!rc) rc = step_end(cb, st, tr[0].root);
  }
  return rc;
}

/* Pipelined broadcast over nt trees: in step s (C + H - 1 steps) every rank
 * at depth d sends chunk s - d to its children. */
static int bsp_bcast(fs__cb *cb, steps *st, const btree *tr, int nt) {
  int32_t C = cb->chunks, K = cb->channels, H = tr[0].height;
  int rc = 0;
  for (int32_t s = 0; s <= C + H - 2 && !rc; s++) {
    for (int t = 0; t < nt && !rc; t++)
      for (int32_t u = 0; u < cb->p && !rc; u++) {
        int32_t c = s - tr[t].depth[u];
        if (c < 0 || c >= C) continue;
        for (int i = 0; i < 2 && !rc; i++) {
          int32_t v = tr[t].kid[2 * u + i];
          for (int32_t k = 0; k < K && v >= 0 && !rc; k++)
            rc = step_send(cb, st, u, v, (t * C + c) * K + k, 0);
        }
      }
    if (!rc) rc = step_end(cb, st, tr[0].root);
  }
  return rc;
}

/* Dataflow broadcast down one tree: a rank sends chunk c (K flows per
 * child) to all its children together, once c has arrived and its flows of
 * chunk c - 1 have left. Ranks are visited by depth so arrivals are known. */
static int pipe_bcast(fs__cb *cb, const btree *t) {
  int32_t p = cb->p, C = cb->chunks, K = cb->channels;
  size_t nr = (size_t)p * C * K;
  int32_t *ready = fs__malloc(nr, sizeof(int32_t));
  int32_t *last = fs__malloc((size_t)p * 2 * K, sizeof(int32_t));
  int32_t *order = fs__malloc((size_t)p, sizeof(int32_t));
  int rc = 0;
  if (!ready || !last || !order) {
    rc = fs_err_set(cb->err, FS_ENOMEM, "out of memory lowering tree");
    goto out;
  }
  for (size_t i = 0; i < nr; i++) ready[i] = -1;
  for (size_t i = 0; i < (size_t)p * 2 * K; i++) last[i] = -1;
  int32_t n = 0;
  for (int32_t d = 0; d <= t->height; d++)
    for (int32_t r = 0; r < p; r++)
      if (t->depth[r] == d) order[n++] = r;
  for (int32_t c = 0; c < C && !rc; c++)
    for (int32_t o = 0; o < p && !rc; o++) {
      int32_t u = order[o];
      for (int i = 0; i < 2 && !rc; i++) {
        int32_t v = t->kid[2 * u + i];
        for (int32_t k = 0; k < K && v >= 0 && !rc; k++) {
          fs__msg m;
          int32_t *ls = &last[((size_t)u * 2 + i) * K + k];
          rc = fs__cb_send(cb, u, v, (int32_t[]){c * K + k}, 1, 0,
                           &ready[((size_t)u * C + c) * K + k], 1, ls, 1, &m);
          if (rc) break;
          *ls = m.flow;
          ready[((size_t)v * C + c) * K + k] = m.ready;
        }
      }
    }
out:
  FS__FREE_ALL(ready, last, order);
  return rc;
}

static int tree_lower(fs__cb *cb) {
  const fs_coll_params *prm = cb->prm;
  int32_t p = cb->p, C = cb->chunks, K = cb->channels;
  btree tr[2];
  int nt = prm->op == FS_COLL_ALLREDUCE ? 2 : 1;
  int rc = nt == 2 ? double_tree(tr, p) : single_tree(&tr[0], p, prm->root);
  if (rc) return fs_err_set(cb->err, rc, "out of memory lowering tree");
  steps st = {-1, NULL, 0, 0};
  rc = fs__cb_units(cb, nt * C * K);
  if (!rc && prm->op == FS_COLL_BROADCAST) rc = pipe_bcast(cb, &tr[0]);
  if (!rc && prm->op != FS_COLL_BROADCAST) rc = bsp_reduce(cb, &st, tr, nt);
  if (!rc && prm->op == FS_COLL_ALLREDUCE) rc = bsp_bcast(cb, &st, tr, nt);
  free(st.items);
  for (int t = 0; t < nt; t++) tree_free(&tr[t]);
  return rc;
}

/* Closed forms (docs/model-coll-tree.md). A step's flows start together, so
 * max-min gives every flow on the step's most loaded link (k flows of the
 * same size) 1/k of it to the end and every other flow more: a step lasts
 * k d + alpha (+ the reduction of one flow). With d the link time of one
 * chunk of one tree, k = 2 in every step except: p = 2 (one flow per link,
 * k = 1), and for even p the last reduce step and first broadcast step,
 * where only the one-child root's edge is busy. The dataflow broadcast is
 * a tandem pipeline: sum over the H hops of (k d + alpha) plus (C - 1)
 * times the slowest hop. */
static double tree_model(const fs_coll_params *prm, int32_t p, int32_t C,
                         const fs_coll_cost *cost) {
  int32_t K = prm->channels > 0 ? prm->channels : 1, H = tree_height(p);
  double a = cost->alpha_s, half = prm->op == FS_COLL_ALLREDUCE ? 2 : 1;
  double d = prm->bytes / half / C * cost->beta_s_per_byte;
  double g = prm->bytes / half / C / K * prm->gamma_s_per_byte;
  int even = p % 2 == 0;
  switch (prm->op) {
    case FS_COLL_BROADCAST:
      if (p == 2) return C * d + a;
      return (even ? d + a : 2 * d + a) + (H - 1) * (2 * d + a) + (C - 1) * 2 * d;
    case FS_COLL_REDUCE:
      if (p == 2) return C * (d + a + g);
      return even ? (C + H - 2) * (2 * d + a + g) + (d + a + g) : (C + H - 1) * (2 * d + a + g);
    case FS_COLL_ALLREDUCE:
      if (p == 2) return C * (2 * d + 2 * a + g);
      return even ? (C + H - 2) * (4 * d + 2 * a + g) + (2 * d + 2 * a + g)
                  : (C + H - 1) * (4 * d + 2 * a + g);
    default: return NAN;
  }
}

/* Chunks of at most 1 MiB per tree (all-reduce sends half the buffer down
 * each tree), and, for deep trees, up to 4 (H - 1) chunks of at least
 * 64 KiB so that filling the pipeline costs at most about a quarter of the
 * steps; 1 to 64 chunks. */
static int32_t tree_default_chunks(const fs_coll_params *prm, int32_t p) {
  double per_tree = prm->op == FS_COLL_ALLREDUCE ? prm->bytes / 2 : prm->bytes;
  double c = ceil(per_tree / (1 << 20));
  c = fmax(c, fmin(4.0 * (tree_height(p) - 1), floor(per_tree / (64 << 10))));
  return c < 1 ? 1 : c > 64 ? 64 : (int32_t)c;
}

const fs__coll_algo_impl fs__coll_tree = {
    FS_ALGO_TREE,
    FS__OP(FS_COLL_ALLREDUCE) | FS__OP(FS_COLL_BROADCAST) | FS__OP(FS_COLL_REDUCE),
    tree_lower,
    tree_model,
    tree_default_chunks,
    NULL,
};

/* ---- binomial ---- */

static int32_t ceil_log2(int32_t p) {
  int32_t k = 0;
  while ((1 << k) < p) k++;
  return k;
}

/* MPICH's binomial tree over relative ranks x = (rank - root) mod p, one
 * whole-buffer message per edge, in ceil(log2 p) synchronous rounds, each a
 * matching (a rank sends and receives at most once). Reduce: in the round
 * of mask 2^t, x with lowest set bit t sends to x - 2^t. Broadcast: in the
 * round of mask 2^t, t from high to low, x with x mod 2^(t+1) = 0 sends to
 * x + 2^t if that is a rank. Chunks and channels are ignored. */
static int binomial_lower(fs__cb *cb) {
  const fs_coll_params *prm = cb->prm;
  int32_t p = cb->p, root = prm->op == FS_COLL_ALLREDUCE ? 0 : prm->root;
  int32_t top = 1 << (ceil_log2(p) - 1);
  steps st = {-1, NULL, 0, 0};
  int rc = fs__cb_units(cb, 1);
#define RANK(x) (((x) + root) % p)
  if (prm->op != FS_COLL_BROADCAST)
    for (int32_t mask = 1; mask < p && !rc; mask <<= 1) {
      for (int32_t x = mask; x < p && !rc; x += 2 * mask)
        rc = step_send(cb, &st, RANK(x), RANK(x - mask), 0, 1);
      if (!rc) rc = step_end(cb, &st, root);
    }
  if (prm->op != FS_COLL_REDUCE)
    for (int32_t mask = top; mask >= 1 && !rc; mask >>= 1) {
      for (int32_t x = 0; x + mask < p && !rc; x += 2 * mask)
        rc = step_send(cb, &st, RANK(x), RANK(x + mask), 0, 0);
      if (!rc) rc = step_end(cb, &st, root);
    }
#undef RANK
  free(st.items);
  return rc;
}

/* Every round is a matching with at least one flow (0 and 2^t), so it lasts
 * n beta + alpha (+ n gamma reducing): Thakur et al.'s ceil(log2 p) rounds. */
static double binomial_model(const fs_coll_params *prm, int32_t p, int32_t C,
                             const fs_coll_cost *cost) {
  (void)C;
  double L = ceil_log2(p), n = prm->bytes;
  double hop = n * cost->beta_s_per_byte + cost->alpha_s, g = n * prm->gamma_s_per_byte;
  switch (prm->op) {
    case FS_COLL_BROADCAST: return L * hop;
    case FS_COLL_REDUCE: return L * (hop + g);
    case FS_COLL_ALLREDUCE: return L * (2 * hop + g);
    default: return NAN;
  }
}

const fs__coll_algo_impl fs__coll_binomial = {
    FS_ALGO_BINOMIAL,
    FS__OP(FS_COLL_ALLREDUCE) | FS__OP(FS_COLL_BROADCAST) | FS__OP(FS_COLL_REDUCE),
    binomial_lower,
    binomial_model,
    NULL,
    NULL,
};
