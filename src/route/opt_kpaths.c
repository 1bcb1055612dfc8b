/* K shortest loop-free paths (Yen, Management Science 17(11), 1971) by hop
 * count, the candidates of the routing optimiser on fabrics with few equal-
 * cost paths (torus, ring, dragonfly, full mesh, files; docs/model-route.md).
 *
 * Paths are link lists from a source host to a destination host that never
 * forward through a host (as route.h) and never repeat a node. Each spur
 * path is a BFS backwards from the destination (in-links of u are the
 * reverses of u's out-links) and a walk forwards along the lowest link id
 * that keeps to a shortest path, so ties go to the lexicographically least
 * link list and the output is deterministic. Cost: for each of the K paths,
 * one BFS O(V + E) per node of the previous path, plus O(K^2 hops) for
 * the candidate list; memory O(V + E) of stamps and O(K^2 hops) links. */
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "opt_internal.h"

typedef struct cand {
  int64_t off; /* into cl */
  int32_t len;
} cand;

struct fs__routeopt_yen {
  const fs_topo *t;
  int32_t max_k;
  uint32_t *node_rm, *link_rm, *seen; /* == epoch: removed / reached */
  uint32_t rm_epoch, seen_epoch;
  int32_t *dist, *queue;
  int32_t *spur, *nodes; /* scratch: a spur path's links, a path's nodes */
  /* A: the paths found (al, a[0..na)); B: the candidates (cl, b[0..nb)) */
  int32_t *al, *cl;
  size_t al_n, al_cap, cl_n, cl_cap;
  cand *a, *b;
  size_t a_cap, b_cap;
  int32_t na, nb;
};

int fs__routeopt_yen_new(const fs_topo *t, int32_t max_k, fs__routeopt_yen **out) {
  fs__routeopt_yen *y = calloc(1, sizeof(*y));
  if (!y) return FS_ENOMEM;
  size_t V = (size_t)t->n_nodes + 1, E = (size_t)t->n_links + 1;
  y->t = t;
  y->max_k = max_k;
  y->node_rm = fs__calloc(V, sizeof(uint32_t));
  y->seen = fs__calloc(V, sizeof(uint32_t));
  y->link_rm = fs__calloc(E, sizeof(uint32_t));
  y->dist = fs__malloc(V, sizeof(int32_t));
  y->queue = fs__malloc(V, sizeof(int32_t));
  y->spur = fs__malloc(V, sizeof(int32_t));
  y->nodes = fs__malloc(V + 1, sizeof(int32_t));
  if (!y->node_rm || !y->seen || !y->link_rm || !y->dist || !y->queue || !y->spur || !y->nodes) {
    fs__routeopt_yen_free(y);
    return FS_ENOMEM;
  }
  *out = y;
  return 0;
}

void fs__routeopt_yen_free(fs__routeopt_yen *y) {
  if (!y) return;
  FS__FREE_ALL(y->node_rm, y->seen, y->link_rm, y->dist, y->queue, y->spur, y->nodes, y->al, y->cl,
               y->a, y->b, y);
}

/* Starts a new removal set (nothing removed). */
static void rm_reset(fs__routeopt_yen *y) {
  if (++y->rm_epoch == 0) {
    memset(y->node_rm, 0, (size_t)y->t->n_nodes * sizeof(uint32_t));
    memset(y->link_rm, 0, (size_t)y->t->n_links * sizeof(uint32_t));
    y->rm_epoch = 1;
  }
}

/* The shortest path s -> dst avoiding removed nodes and links, hosts only
 * at its ends; lexicographically least by link id among the shortest.
 * Writes its links to y->spur and returns its length, or -1. */
static int32_t spur_path(fs__routeopt_yen *y, int32_t s, int32_t dst) {
  const fs_topo *t = y->t;
  if (++y->seen_epoch == 0) {
    memset(y->seen, 0, (size_t)t->n_nodes * sizeof(uint32_t));
    y->seen_epoch = 1;
  }
  uint32_t ep = y->seen_epoch, rm = y->rm_epoch;
  int32_t qh = 0, qt = 0;
  y->seen[dst] = ep;
  y->dist[dst] = 0;
  y->queue[qt++] = dst;
  int found = s == dst;
  while (qh < qt && !found) {
    int32_t u = y->queue[qh++];
    /* a host only ends a path (dst) or starts it (s, never expanded) */
    if (u != dst && t->nodes[u].kind == FS_NODE_HOST) continue;
    for (int32_t i = t->out_start[u]; i < t->out_start[u + 1]; i++) {
      const fs_link *lk = &t->links[t->out_links[i]];
      int32_t w = lk->to; /* the reverse link w -> u leads into u */
      if (y->seen[w] == ep || y->node_rm[w] == rm || y->link_rm[lk->reverse] == rm) continue;
      if (w != s && t->nodes[w].kind == FS_NODE_HOST) continue;
      y->seen[w] = ep;
      y->dist[w] = y->dist[u] + 1;
      y->queue[qt++] = w;
      if (w == s) found = 1;
    }
  }
  if (!found) return -1;
  int32_t v = s, n = 0;
  while (v != dst) {
    int32_t next = -1;
    for (int32_t i = t->out_start[v]; i < t->out_start[v + 1] && next < 0; i++) {
      int32_t l = t->out_links[i], w = t->links[l].to;
      if (y->link_rm[l] == rm || y->node_rm[w] == rm || y->seen[w] != ep) continue;
      if (y->dist[w] != y->dist[v] - 1) continue;
      if (w != dst && t->nodes[w].kind == FS_NODE_HOST) continue;
      next = l;
    }
    if (next < 0) return -1; /* cannot happen: dist came from these links */
    y->spur[n++] = next;
    v = t->links[next].to;
  }
  return n;
}

/* Order of two link lists: by length, then lexicographically by link id. */
static int cmp_path(const int32_t *a, int32_t na, const int32_t *b, int32_t nb) {
  if (na != nb) return na < nb ? -1 : 1;
  for (int32_t i = 0; i < na; i++)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

/* Appends root (root_len links of prefix) + y->spur (spur_len) to B unless
 * B holds it already. */
static int add_candidate(fs__routeopt_yen *y, const int32_t *prefix, int32_t root_len,
                         int32_t spur_len) {
  int32_t len = root_len + spur_len;
  for (int32_t j = 0; j < y->nb; j++) {
    const int32_t *c = y->cl + y->b[j].off;
    if (y->b[j].len == len && memcmp(c, prefix, (size_t)root_len * sizeof(int32_t)) == 0 &&
        memcmp(c + root_len, y->spur, (size_t)spur_len * sizeof(int32_t)) == 0)
      return 0;
  }
  if (fs__grow(&y->cl, &y->cl_cap, y->cl_n + (size_t)len, sizeof(int32_t)) ||
      fs__grow(&y->b, &y->b_cap, (size_t)y->nb + 1, sizeof(cand)))
    return FS_ENOMEM;
  memcpy(y->cl + y->cl_n, prefix, (size_t)root_len * sizeof(int32_t));
  memcpy(y->cl + y->cl_n + root_len, y->spur, (size_t)spur_len * sizeof(int32_t));
  y->b[y->nb].off = (int64_t)y->cl_n;
  y->b[y->nb++].len = len;
  y->cl_n += (size_t)len;
  return 0;
}

/* Moves links[0..len) to A. */
static int push_a(fs__routeopt_yen *y, const int32_t *links, int32_t len) {
  if (fs__grow(&y->al, &y->al_cap, y->al_n + (size_t)len, sizeof(int32_t)) ||
      fs__grow(&y->a, &y->a_cap, (size_t)y->na + 1, sizeof(cand)))
    return FS_ENOMEM;
  memmove(y->al + y->al_n, links, (size_t)len * sizeof(int32_t));
  y->a[y->na].off = (int64_t)y->al_n;
  y->a[y->na++].len = len;
  y->al_n += (size_t)len;
  return 0;
}

int fs__routeopt_kshortest(fs__routeopt_yen *y, int32_t src, int32_t dst, int32_t k, int32_t **links,
                     size_t *n, size_t *cap, int32_t *hops, int32_t *n_found) {
  const fs_topo *t = y->t;
  y->na = y->nb = 0;
  y->al_n = y->cl_n = 0;
  *n_found = 0;
  if (k > y->max_k) k = y->max_k;
  rm_reset(y);
  int32_t len = spur_path(y, src, dst);
  if (len <= 0) return FS_EINVAL;
  if (push_a(y, y->spur, len)) return FS_ENOMEM;
  while (y->na < k) {
    /* a copy: A does not grow until the spur loop is over */
    const cand prev = y->a[y->na - 1];
    y->nodes[0] = t->links[y->al[prev.off]].from;
    for (int32_t i = 0; i < prev.len; i++) y->nodes[i + 1] = t->links[y->al[prev.off + i]].to;
    for (int32_t i = 0; i < prev.len; i++) {
      /* spur node nodes[i], root = prev's first i links */
      const int32_t *root = y->al + prev.off;
      rm_reset(y);
      for (int32_t j = 0; j < y->na; j++) {
        const int32_t *pj = y->al + y->a[j].off;
        if (y->a[j].len > i && memcmp(pj, root, (size_t)i * sizeof(int32_t)) == 0)
          y->link_rm[pj[i]] = y->rm_epoch;
      }
      for (int32_t j = 0; j < i; j++) y->node_rm[y->nodes[j]] = y->rm_epoch;
      int32_t sl = spur_path(y, y->nodes[i], dst);
      if (sl < 0) continue;
      if (add_candidate(y, root, i, sl)) return FS_ENOMEM;
    }
    if (y->nb == 0) break;
    int32_t best = 0;
    for (int32_t j = 1; j < y->nb; j++)
      if (cmp_path(y->cl + y->b[j].off, y->b[j].len, y->cl + y->b[best].off, y->b[best].len) < 0)
        best = j;
    if (push_a(y, y->cl + y->b[best].off, y->b[best].len)) return FS_ENOMEM;
    y->b[best] = y->b[--y->nb];
  }
  /* Sort A by (length, links): insertion sort of at most K entries. */
  for (int32_t i = 1; i < y->na; i++) {
    cand c = y->a[i];
    int32_t j = i;
    while (j > 0 && cmp_path(y->al + c.off, c.len, y->al + y->a[j - 1].off, y->a[j - 1].len) < 0) {
      y->a[j] = y->a[j - 1];
      j--;
    }
    y->a[j] = c;
  }
  size_t total = 0;
  for (int32_t i = 0; i < y->na; i++) total += (size_t)y->a[i].len;
  if (fs__grow(links, cap, *n + total, sizeof(int32_t))) return FS_ENOMEM;
  for (int32_t i = 0; i < y->na; i++) {
    memcpy(*links + *n, y->al + y->a[i].off, (size_t)y->a[i].len * sizeof(int32_t));
    *n += (size_t)y->a[i].len;
    hops[i] = y->a[i].len;
  }
  *n_found = y->na;
  return 0;
}
