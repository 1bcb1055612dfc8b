/* In-network aggregation (SHARP, Graham et al. 2016; SwitchML, Sapio et al.
 * NSDI 2021): the ranks stream their buffers in C chunks to one switch
 * marked FS_CAP_INC, which reduces chunk c once every rank's chunk c has
 * arrived and streams the result down; all-reduce, reduce (down to the
 * root only) and broadcast (up from the root only, multicast down).
 *
 * The switch reduces at line rate for free (its ALUs keep up with its
 * ports), so gamma does not apply; it reduces or forwards whole chunks
 * (store-and-forward at chunk granularity). The aggregation itself is a
 * zero-length join labelled on the root's host. Channels are ignored: one
 * aggregation tree per collective. Flows: (p + p) C for all-reduce;
 * choosing the switch costs one distance lookup per (capable switch, rank)
 * pair, each capable switch's distance table built once by the router. */
#include <math.h>
#include <stdlib.h>

#include "../base/base.h"
#include "internal.h"

/* The capable switch closest to the group in the worst case (max hops to
 * or from any rank), lowest node id on ties; -1 if none reaches them all. */
static int32_t aggregation_switch(fs__cb *cb) {
  const fs_topo *t = cb->t;
  int32_t best = -1, best_d = 0;
  for (int32_t v = 0; v < t->n_nodes; v++) {
    if (t->nodes[v].kind != FS_NODE_SWITCH || !(t->nodes[v].caps & FS_CAP_INC)) continue;
    int32_t worst = 0;
    for (int32_t r = 0; r < cb->p && worst >= 0; r++) {
      int32_t up = fs_route_dist(cb->l->router, cb->g->hosts[r], v);
      int32_t down = fs_route_dist(cb->l->router, v, cb->g->hosts[r]);
      if (up < 0 || down < 0) worst = -1;
      else if ((up > down ? up : down) > worst) worst = up > down ? up : down;
    }
    if (worst >= 0 && (best < 0 || worst < best_d)) best = v, best_d = worst;
  }
  return best;
}

static int inc_lower(fs__cb *cb) {
  const fs_coll_params *prm = cb->prm;
  int32_t p = cb->p, C = cb->chunks, root = prm->root;
  fs_coll_op op = prm->op;
  int32_t sw = aggregation_switch(cb);
  if (sw < 0)
    return fs_err_set(cb->err, FS_EINVAL,
                      "inc: no switch able to aggregate (FS_CAP_INC) reaches all %d ranks; "
                      "mark switches with the topology key inc=all or inc=top",
                      p);
  int rc = fs__cb_units(cb, C);
  if (rc) return rc;
  double chunk = prm->bytes / C;
  int32_t *up = malloc((size_t)p * C * sizeof(int32_t));
  int32_t *down = malloc((size_t)p * C * sizeof(int32_t));
  int32_t *agg = malloc((size_t)C * sizeof(int32_t));
  int32_t *col = malloc((size_t)p * sizeof(int32_t));
  if (!up || !down || !agg || !col) {
    rc = fs_err_set(cb->err, FS_ENOMEM, "out of memory lowering inc");
    goto out;
  }
  /* Up: every contributor streams its chunks back to back to the switch. */
  for (int32_t r = 0; r < p && !rc; r++) {
    if (op == FS_COLL_BROADCAST && r != root) continue;
    int32_t last = -1;
    for (int32_t c = 0; c < C && !rc; c++) {
      rc = fs__cb_flow(cb, cb->g->hosts[r], sw, chunk, NULL, 0, &last, 1, &up[r * C + c]);
      last = up[r * C + c];
    }
  }
  /* The switch has chunk c once the root's (broadcast) or everyone's chunk
   * c is in. */
  for (int32_t c = 0; c < C && !rc; c++) {
    if (op == FS_COLL_BROADCAST) {
      agg[c] = up[root * C + c];
      continue;
    }
    for (int32_t r = 0; r < p; r++) col[r] = up[r * C + c];
    agg[c] = fs__cb_join(cb, root, col, p);
    if (agg[c] < 0) rc = agg[c];
  }
  /* Down: the switch streams each chunk to every receiver as soon as it has
   * it; each receiver has its own port, so they do not share. */
  for (int32_t r = 0; r < p && !rc; r++) {
    if ((op == FS_COLL_REDUCE && r != root) || (op == FS_COLL_BROADCAST && r == root))
      continue;
    int32_t last = -1;
    for (int32_t c = 0; c < C && !rc; c++) {
      rc = fs__cb_flow(cb, sw, cb->g->hosts[r], chunk, &agg[c], 1, &last, 1, &down[r * C + c]);
      last = down[r * C + c];
    }
  }
  /* Tracking: the switch's accumulator is modelled as a virtual buffer on
   * the root: every other rank's chunk is reduced into it when the switch
   * has aggregated (all-reduce) or when the result reached the root
   * (reduce); the result then moves root -> rank with the down flows,
   * the root's own copy last so the others are checked against the
   * aggregation, not against the root's download. */
  for (int32_t c = 0; c < C && !rc; c++) {
    if (op == FS_COLL_BROADCAST) {
      for (int32_t r = 0; r < p && !rc; r++)
        if (r != root)
          rc = fs__cb_track_move(cb, root, r, &c, 1, 0, up[root * C + c], down[r * C + c]);
      continue;
    }
    int32_t ready = op == FS_COLL_REDUCE ? down[root * C + c] : agg[c];
    for (int32_t r = 0; r < p && !rc; r++)
      if (r != root) rc = fs__cb_track_move(cb, r, root, &c, 1, 1, up[r * C + c], ready);
    if (op != FS_COLL_ALLREDUCE) continue;
    for (int32_t r = 0; r < p && !rc; r++)
      if (r != root)
        rc = fs__cb_track_move(cb, root, r, &c, 1, 0, down[r * C + c], down[r * C + c]);
    if (!rc)
      rc = fs__cb_track_move(cb, root, root, &c, 1, 0, down[root * C + c], down[root * C + c]);
  }
out:
  FS__FREE_ALL(up, down, agg, col);
  return rc;
}

/* Closed form on a star: two stages (host -> switch, switch -> host), each a
 * different link, so the chain pipeline of fs__pipeline_time with
 * one_link = 0: chunk link time d = (n / C) beta and one link latency,
 * alpha / 2 (alpha is host-to-host: two links), per stage:
 *   T = (C + 1) (n / C) beta + alpha,
 * the same for all-reduce, reduce and broadcast; no gamma (switch ALUs). */
static double inc_model(const fs_coll_params *prm, int32_t p, int32_t C,
                        const fs_coll_cost *cost) {
  (void)p;
  double hop[2] = {cost->alpha_s / 2, cost->alpha_s / 2};
  return fs__pipeline_time(2, C, prm->bytes / C * cost->beta_s_per_byte, hop, 0);
}

/* 1 MiB chunks, at most 64 (as ring.c's chains): the two stages overlap,
 * so chunking nearly halves a large all-reduce. */
static int32_t inc_default_chunks(const fs_coll_params *prm, int32_t p) {
  (void)p;
  double c = ceil(prm->bytes / (1 << 20));
  return c < 1 ? 1 : c > 64 ? 64 : (int32_t)c;
}

const fs__coll_algo_impl fs__coll_inc = {
    FS_ALGO_INC,
    FS__OP(FS_COLL_ALLREDUCE) | FS__OP(FS_COLL_REDUCE) | FS__OP(FS_COLL_BROADCAST),
    inc_lower,
    inc_model,
    inc_default_chunks,
    NULL,
};
