/* What the collective algorithms share: the lowering builder (flows with
 * the standard dependencies, reduction tasks, joins, data tracking) and the
 * registry entry each algorithm file provides.
 *
 * Data units: an algorithm splits the buffer into `units` equal units
 * (fs__cb_units) and names the units every message carries. For all-to-all
 * a unit is global: origin rank * units + unit of that rank's send buffer,
 * and unit u of a send buffer goes to rank u * p / units. Otherwise unit u
 * belongs to block (rank) u * p / units: order units block-major. */
#ifndef FABRICSIM_COLL_INTERNAL_H
#define FABRICSIM_COLL_INTERNAL_H

#include "../base/base.h"
#include "fabricsim/coll.h"

typedef struct fs__cb {
  const fs_coll_params *prm;
  const fs_coll_group *g;
  fs_coll_lowering *l;
  fs_err *err;
  const fs_topo *t;
  int32_t p;
  int32_t chunks;     /* resolved chunk count (>= 1) */
  int32_t channels;   /* resolved (>= 1) */
  int32_t units;      /* set by fs__cb_units */
  double unit_bytes;
  int32_t start;      /* zero-length task every first step waits for */
  int32_t *scratch;   /* unit lists for fs__cb_send_range */
  size_t scratch_cap;
  uint8_t *has_dependent; /* per item since first_item */
  size_t hd_cap;
  /* One route per (src, dst) pair: a rank keeps one connection per peer
   * (NCCL: a queue pair per peer), so its messages hash alike under ECMP. */
  fs_route_cache *routes;
  /* Rank rotation quotient (fs__coll_lower_rotated): only rank 0's
   * messages are lowered, every other rank's being their images under
   * r -> r + 1; the routes (the caller's cache) are quotient routes. */
  int rotated;
} fs__cb;

/* What a message produced: the flow, and the item after which the data is
 * usable at the receiver (the reduction task, or the flow itself). */
typedef struct fs__msg {
  int32_t flow;
  int32_t ready;
} fs__msg;

/* Declares how many units the buffer is split into (>= 1). */
int fs__cb_units(fs__cb *cb, int32_t units);

/* Sends units[0..n) from rank `from` to rank `to` as one flow of
 * n * unit_bytes bytes. It starts after every item in done[] has finished,
 * after the last byte of every flow in sent[] has left, and after the
 * collective's start. reduce: the receiver combines the data with its own
 * (contributions must be disjoint) in a task of bytes * gamma seconds;
 * otherwise it overwrites its copy. `units` is read only when a tracker is
 * attached (cb->l->track); without one it may be NULL and only n counts.
 * Returns 0 or a negative code. */
int fs__cb_send(fs__cb *cb, int32_t from, int32_t to, const int32_t *units,
                int32_t n, int reduce, const int32_t *done, int32_t n_done,
                const int32_t *sent, int32_t n_sent, fs__msg *out);
/* The same for the contiguous units [u0, u0 + n). */
int fs__cb_send_range(fs__cb *cb, int32_t from, int32_t to, int32_t u0,
                      int32_t n, int reduce, const int32_t *done, int32_t n_done,
                      const int32_t *sent, int32_t n_sent, fs__msg *out);
/* A zero-length task on rank's host that finishes when all items have.
 * Returns the item or a negative code. */
int32_t fs__cb_join(fs__cb *cb, int32_t rank, const int32_t *items, int32_t n);

/* Raw flow between two nodes (e.g. to a switch, for in-network
 * aggregation), with the same dependency rules; no tracking. */
int fs__cb_flow(fs__cb *cb, int32_t src_node, int32_t dst_node, double bytes,
                const int32_t *done, int32_t n_done, const int32_t *sent,
                int32_t n_sent, int32_t *flow);
/* A task of `seconds` on a rank's host after done[]; no tracking. */
int32_t fs__cb_task(fs__cb *cb, int32_t rank, double seconds, const int32_t *done,
                    int32_t n_done);
/* Tracking by hand (for algorithms whose data crosses a switch): the data
 * of units on `from` reaches `to` once item `ready` is done; `sender` is
 * the item that carried it out of `from` (for the ordering check). */
int fs__cb_track_move(fs__cb *cb, int32_t from, int32_t to, const int32_t *units,
                      int32_t n, int reduce, int32_t sender, int32_t ready);

/* Closed forms of the chunked pipelines chain-like algorithms lower to:
 * `stages` hops in a row, the data in `chunks` chunks of link time d each,
 * each sender streaming its chunks back to back, and hop_delay[t] (latency
 * plus any reduction) after stage t before the data can go on.
 *
 * one_link = 1 (rings): every stage leaves a rank on the same link, so a
 * stage's first chunk also waits for the previous stage's last chunk:
 *   T = sum_{t=1}^{S-1} max(C*d, d + h[t-1]) + C*d + h[S-1]
 * (chunk c of stage t starts at sum_{u=1}^{t} max(C*d, d + h[u-1]) + c*d).
 * one_link = 0 (chains, trees): each stage is a different link, and every
 * monotone path through the (stage, chunk) grid has the same length:
 *   T = sum_{t=0}^{S-1} (d + h[t]) + (C-1)*d. */
double fs__pipeline_time(int32_t stages, int32_t chunks, double d,
                         const double *hop_delay, int one_link);

/* One algorithm: which ops it implements, how it lowers, its closed form,
 * its default chunk count. */
typedef struct fs__coll_algo_impl {
  fs_coll_algo algo;
  unsigned ops; /* bit (1u << op) per supported op */
  int (*lower)(fs__cb *cb);
  double (*model)(const fs_coll_params *prm, int32_t p, int32_t chunks,
                  const fs_coll_cost *cost);
  int32_t (*default_chunks)(const fs_coll_params *prm, int32_t p);
  /* extra validation (e.g. needs a capable switch); NULL if none */
  int (*check)(const fs_coll_params *prm, int32_t p, fs_err *err);
} fs__coll_algo_impl;

#define FS__OP(op) (1u << (op))

/* The double binary tree of p ranks (tree.c): parent of each rank in tree A
 * and tree B (-1 for a root) and the trees' height. Returns 0 or FS_ENOMEM. */
int fs__coll_double_tree(int32_t p, int32_t *parent_a, int32_t *parent_b, int32_t *height);

/* fs_coll_lower with a given implementation (tests lower deliberately
 * broken ones to show the data tracker catches them). */
int fs__coll_lower_impl(const fs__coll_algo_impl *im, const fs_coll_params *prm,
                        const fs_coll_group *g, fs_coll_lowering *l, fs_err *err);
/* The same, rank 0's messages only (fs__cb.rotated), for an algorithm
 * whose lowering supports it (a ring's all-reduce, all-gather and
 * reduce-scatter over the ranks' own order): FS_EINVAL for any other. */
int fs__coll_lower_rotated(const fs_coll_params *prm, const fs_coll_group *g,
                           fs_coll_lowering *l, fs_err *err);

/* The registry: one entry per algorithm file. */
extern const fs__coll_algo_impl fs__coll_ring;
extern const fs__coll_algo_impl fs__coll_tree;
extern const fs__coll_algo_impl fs__coll_rd;
extern const fs__coll_algo_impl fs__coll_rhd;
extern const fs__coll_algo_impl fs__coll_binomial;
extern const fs__coll_algo_impl fs__coll_bruck;
extern const fs__coll_algo_impl fs__coll_pairwise;
extern const fs__coll_algo_impl fs__coll_direct;
extern const fs__coll_algo_impl fs__coll_hier;
extern const fs__coll_algo_impl fs__coll_inc;
extern const fs__coll_algo_impl fs__coll_ps;

#endif
