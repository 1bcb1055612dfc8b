/* Where a job goes (docs/model-sched.md, "Schedulers"): a part of one
 * server for a job smaller than a server, whole servers otherwise, chosen
 * per scheduler: packed (one ToR if it fits, the fullest-free ToRs
 * otherwise), first fit (the lowest free servers, wherever they are),
 * random, or balanced contention and overhead (the fullest-free of the
 * ToRs that the fewest cross-ToR jobs use). */
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "sched_state.h"

/* The ToR of each server: the switch its first GPU (through its NIC, if
 * the topology models one) reaches first; a fabric without switches
 * (torus, ring, full mesh) makes each server its own. */
int fs__sched_leaves(fs_sched *s, fs_err *err) {
  const fs_topo *t = s->topo;
  int32_t *id = malloc((size_t)t->n_nodes * sizeof(*id));
  s->leaf_of = malloc((size_t)s->n_srv * sizeof(*s->leaf_of));
  if (!id || !s->leaf_of) {
    free(id);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  for (int32_t v = 0; v < t->n_nodes; v++) id[v] = -1;
  s->n_leaf = 0;
  for (int32_t sv = 0; sv < s->n_srv; sv++) {
    int32_t v = (int32_t)(sv * s->G), sw = -1;
    for (int hop = 0; hop < 2 && sw < 0; hop++) {
      int32_t next = -1;
      for (int32_t e = t->out_start[v]; e < t->out_start[v + 1]; e++) {
        int32_t to = t->links[t->out_links[e]].to;
        fs_node_kind k = t->nodes[to].kind;
        if (k == FS_NODE_SWITCH || k == FS_NODE_OCS) {
          sw = to;
          break;
        }
        if (k == FS_NODE_NIC && next < 0) next = to;
      }
      if (next < 0) break;
      v = next;
    }
    if (sw < 0) {
      s->leaf_of[sv] = s->n_leaf++;
      continue;
    }
    if (id[sw] < 0) id[sw] = s->n_leaf++;
    s->leaf_of[sv] = id[sw];
  }
  free(id);
  return 0;
}

/* Best fit inside one server for a job of g < G GPUs: the server with the
 * fewest free GPUs that still hold it (first fit: the lowest that does;
 * random: one of those that do, uniformly). */
static int place_part(fs__sched_run *R, int64_t g, int first_fit, int random, int32_t *srv) {
  int32_t best = -1;
  if (random) {
    int64_t n = 0;
    for (int32_t sv = 0; sv < R->s->n_srv; sv++) n += R->free[sv] >= g;
    if (!n) return -1;
    int64_t pick = (int64_t)fs__rng_below(&R->rng, (uint64_t)n);
    for (int32_t sv = 0; sv < R->s->n_srv; sv++)
      if (R->free[sv] >= g && pick-- == 0) {
        *srv = sv;
        return 0;
      }
  }
  for (int32_t sv = 0; sv < R->s->n_srv; sv++) {
    if (R->free[sv] < g) continue;
    if (first_fit) {
      best = sv;
      break;
    }
    if (best < 0 || R->free[sv] < R->free[best]) best = sv;
  }
  if (best < 0) return -1;
  *srv = best;
  return 0;
}

typedef struct leaf_key {
  int32_t leaf, cont, full;
} leaf_key;

static int by_leaf_key(const void *a, const void *b) {
  const leaf_key *x = a, *y = b;
  if (x->cont != y->cont) return x->cont < y->cont ? -1 : 1;
  if (x->full != y->full) return x->full > y->full ? -1 : 1;
  return (x->leaf > y->leaf) - (x->leaf < y->leaf);
}

/* Takes up to want fully free servers of leaf l (lowest first). */
static int32_t take_leaf(fs__sched_run *R, int32_t l, int32_t want, int32_t *out) {
  const fs_sched *s = R->s;
  int32_t got = 0;
  for (int32_t i = s->leaf_start[l]; i < s->leaf_start[l + 1] && got < want; i++) {
    int32_t sv = s->leaf_srv[i];
    if (R->free[sv] == s->G) out[got++] = sv;
  }
  return got;
}

/* k whole servers into out[0..k): -1 if fewer are free. */
static int place_whole(fs__sched_run *R, fs_sched_kind kind, int32_t k, int32_t *out) {
  const fs_sched *s = R->s;
  if (R->full_total < k) return -1;
  if (kind == FS_SCHED_OBLIVIOUS || kind == FS_SCHED_LS) { /* the lowest free servers */
    int32_t got = 0;
    for (int32_t sv = 0; sv < s->n_srv && got < k; sv++)
      if (R->free[sv] == s->G) out[got++] = sv;
    return 0;
  }
  if (kind == FS_SCHED_RANDOM) { /* k of the free servers, uniformly (partial Fisher-Yates) */
    int32_t n = 0, *pool = R->comp; /* scratch: comp is free between re-rates, n_jobs >= n_srv
                                       is not assured, so it is sized n_srv too */
    for (int32_t sv = 0; sv < s->n_srv; sv++)
      if (R->free[sv] == s->G) pool[n++] = sv;
    for (int32_t i = 0; i < k; i++) {
      int32_t x = i + (int32_t)fs__rng_below(&R->rng, (uint64_t)(n - i)), v = pool[x];
      pool[x] = pool[i];
      pool[i] = v;
      out[i] = v;
    }
    return 0;
  }
  int32_t best = -1;
  for (int32_t l = 0; l < s->n_leaf; l++) /* best fit in one ToR */
    if (R->leaf_full[l] >= k && (best < 0 || R->leaf_full[l] < R->leaf_full[best])) best = l;
  if (best >= 0) {
    take_leaf(R, best, k, out);
    return 0;
  }
  leaf_key *keys = R->leaf_keys;
  int32_t h = 0; /* yu-bco: the contention bound */
  if (kind == FS_SCHED_YU_BCO) {
    /* balanced contention and overhead: the smallest bound h on the
     * cross-ToR jobs already using a ToR for which the ToRs within it
     * hold k free servers (contention), then the fullest of those first,
     * so the fewest ToRs (overhead) */
    for (;; h++) {
      int32_t have = 0;
      for (int32_t l = 0; l < s->n_leaf; l++)
        if (R->leaf_jobs[l] <= h) have += R->leaf_full[l];
      if (have >= k) break;
    }
    if (h > R->bound) return -1; /* it waits rather than contend more */
    if (h > R->bound_used) R->bound_used = h;
  }
  for (int32_t l = 0; l < s->n_leaf; l++)
    keys[l] = (leaf_key){l, kind == FS_SCHED_YU_BCO && R->leaf_jobs[l] > h, R->leaf_full[l]};
  qsort(keys, (size_t)s->n_leaf, sizeof(*keys), by_leaf_key);
  int32_t got = 0;
  for (int32_t i = 0; i < s->n_leaf && got < k; i++)
    got += take_leaf(R, keys[i].leaf, k - got, out + got);
  return 0;
}

int fs__sched_place(fs__sched_run *R, fs_sched_kind kind, int32_t j) {
  const fs_sched *s = R->s;
  fs__sched_js *J = &R->js[j];
  int64_t g = s->t->jobs[j].gpus;
  if (g < s->G) {
    int32_t sv;
    if (place_part(R, g, kind == FS_SCHED_OBLIVIOUS || kind == FS_SCHED_LS,
                   kind == FS_SCHED_RANDOM, &sv))
      return -1;
    J->srv[0] = sv;
    J->n_srv = 1;
  } else {
    int32_t k = (int32_t)(g / s->G);
    if (place_whole(R, kind, k, J->srv)) return -1;
    J->n_srv = k;
  }
  for (int32_t i = 0; i < J->n_srv; i++) {
    int32_t sv = J->srv[i];
    if (R->free[sv] == s->G) {
      R->leaf_full[s->leaf_of[sv]]--;
      R->full_total--;
    }
    R->n_free[R->free[sv]]--;
    R->free[sv] -= g < s->G ? g : s->G;
    R->n_free[R->free[sv]]++;
  }
  /* the distinct ToRs it spans, in the order of its servers */
  J->n_leaf = 0;
  for (int32_t i = 0; i < J->n_srv; i++) {
    int32_t l = s->leaf_of[J->srv[i]], seen = 0;
    for (int32_t k = 0; k < J->n_leaf && !seen; k++) seen = J->leaf[k] == l;
    if (!seen) J->leaf[J->n_leaf++] = l;
  }
  if (J->n_leaf > 1)
    for (int32_t k = 0; k < J->n_leaf; k++) R->leaf_jobs[J->leaf[k]]++;
  return 0;
}

void fs__sched_unplace(fs__sched_run *R, int32_t j) {
  const fs_sched *s = R->s;
  fs__sched_js *J = &R->js[j];
  int64_t g = s->t->jobs[j].gpus;
  for (int32_t i = 0; i < J->n_srv; i++) {
    int32_t sv = J->srv[i];
    R->n_free[R->free[sv]]--;
    R->free[sv] += g < s->G ? g : s->G;
    R->n_free[R->free[sv]]++;
    if (R->free[sv] == s->G) {
      R->leaf_full[s->leaf_of[sv]]++;
      R->full_total++;
    }
  }
  if (J->n_leaf > 1)
    for (int32_t k = 0; k < J->n_leaf; k++) R->leaf_jobs[J->leaf[k]]--;
}
