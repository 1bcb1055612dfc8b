/* Topology metrics: counts, host-to-host diameter and mean hop count, and
 * the bisection bandwidth (fs_topo_stats_compute).
 *
 * Hop counts. An all-pairs BFS from every host costs O(H * (V + E)), about
 * 5*10^8 steps for a k=32 fat-tree and far more at 10^5 hosts. Hosts with the
 * same attachment (the same set of out-neighbour nodes) are interchangeable:
 * d(m, v) = 1 + min over those neighbours n of d(n, v) is the same for every
 * member m and every other node v, and when every link has a reverse, swapping
 * two members is a graph automorphism, so all pairs inside a class are equally
 * far apart too. So we BFS once per attachment class (one per edge switch in
 * a fat-tree: 512 at k=32, about 3*10^7 steps) and weight each distance by the
 * class sizes. If some link lacks a proper reverse (never for the builders)
 * every host becomes its own class: slower, still exact on a directed graph.
 * That is the method for multi-homed hosts. GPU servers (gpus_per_node > 1)
 * and single-homed hosts (every family) take a faster one, described before
 * hop_stats_nohost, which never relays through a host (as routing): GPUs
 * have two links, so here every GPU would be its own class, and a plain
 * BFS would let GPUs relay. For single-homed hosts the two agree, and the
 * other is ~7x faster (fat-tree k=64, 65536 hosts: 0.47 s instead of 3.3 s).
 *
 * Injection. What hosts can push into the scale-out fabric (their links
 * except to a scale-up switch, a NIC counting at most what it forwards), in
 * all and per half of the bisection cut.
 *
 * Bisection. Max-flow (Dinic, capacities in bit/s as doubles) from a super
 * source feeding hosts [0, n/2) to a super sink fed by hosts [n/2, n), over
 * the directed links. This is the bisection across the documented host order
 * (hosts are numbered pod- or leaf-major), not a minimum over all balanced
 * cuts, which is NP-hard in general. For the symmetric builder families it is
 * the worst-case bisection and matches the textbook formulas: fat-tree
 * k^3/8 * link, leaf-spine (even leaf count) min(hosts/2 * host link,
 * leaves/2 * spines * links_per_spine * fabric link), star floor(hosts/2) *
 * link. Super arcs carry more than the total link capacity, so they never
 * bound the flow. The depth-first search of each phase is iterative, so long
 * paths (rings, lines) cannot overflow the C stack. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "internal.h"

/* ---- attachment classes ---------------------------------------------------- */

typedef struct host_key {
  const int32_t *nb; /* sorted, duplicate-free neighbour nodes */
  int32_t len;
  int32_t host;
} host_key;

/* Orders by neighbour list, then host id, so a class's members are adjacent
 * and its representative (first member) is its smallest host id. */
static int cmp_host_key(const void *pa, const void *pb) {
  const host_key *a = pa, *b = pb;
  int32_t n = a->len < b->len ? a->len : b->len;
  for (int32_t i = 0; i < n; i++)
    if (a->nb[i] != b->nb[i]) return a->nb[i] < b->nb[i] ? -1 : 1;
  if (a->len != b->len) return a->len < b->len ? -1 : 1;
  return (a->host > b->host) - (a->host < b->host);
}

static int same_attachment(const host_key *a, const host_key *b) {
  return a->len == b->len && memcmp(a->nb, b->nb, (size_t)a->len * sizeof(int32_t)) == 0;
}

/* Every link's `reverse` must be a link with the endpoints swapped; that is
 * what makes out-neighbours equal in-neighbours and classes exact. */
static int links_symmetric(const fs_topo *t) {
  for (int32_t l = 0; l < t->n_links; l++) {
    int32_t r = t->links[l].reverse;
    if (r < 0 || r >= t->n_links || t->links[r].from != t->links[l].to ||
        t->links[r].to != t->links[l].from)
      return 0;
  }
  return 1;
}

/* Fills keys[0..H) sorted so classes are runs; nb receives the lists. */
static void build_keys(const fs_topo *t, host_key *keys, int32_t *nb) {
  int32_t pos = 0;
  for (int32_t h = 0; h < t->n_hosts; h++) {
    int32_t *list = nb + pos, len = 0;
    for (int32_t i = t->out_start[h]; i < t->out_start[h + 1]; i++) {
      int32_t v = t->links[t->out_links[i]].to, j = len;
      /* insertion sort: host degrees are tiny (1 for every builder) */
      while (j > 0 && list[j - 1] > v) {
        list[j] = list[j - 1];
        j--;
      }
      if (j > 0 && list[j - 1] == v) {
        memmove(list + j, list + j + 1, (size_t)(len - j) * sizeof(int32_t));
        continue;
      }
      list[j] = v;
      len++;
    }
    keys[h] = (host_key){list, len, h};
    pos += len;
  }
  qsort(keys, (size_t)t->n_hosts, sizeof(*keys), cmp_host_key);
}

/* Distances (in hops) from src to every node; -1 when unreachable. */
static void bfs(const fs_topo *t, int32_t src, int32_t *dist, int32_t *queue) {
  for (int32_t v = 0; v < t->n_nodes; v++) dist[v] = -1;
  int32_t head = 0, tail = 0;
  dist[src] = 0;
  queue[tail++] = src;
  while (head < tail) {
    int32_t u = queue[head++];
    for (int32_t i = t->out_start[u]; i < t->out_start[u + 1]; i++) {
      int32_t v = t->links[t->out_links[i]].to;
      if (dist[v] < 0) {
        dist[v] = dist[u] + 1;
        queue[tail++] = v;
      }
    }
  }
}

static int disconnected(const fs_topo *t, int32_t a, int32_t b, fs_err *err) {
  char na[64], nb[64];
  fs_topo_node_name(t, a, na, sizeof(na));
  fs_topo_node_name(t, b, nb, sizeof(nb));
  return fs_err_set(err, FS_EINVAL, "topology '%s': %s cannot reach %s (disconnected)",
                    t->spec[0] ? t->spec : t->family, na, nb);
}

/* Fills st->diameter_hops and st->avg_hops (needs n_hosts >= 2). Returns 0,
 * FS_EINVAL naming two hosts with no path between them, or FS_ENOMEM; st is
 * written only on success. */
static int hop_stats(const fs_topo *t, fs_topo_stats *st, fs_err *err) {
  int32_t H = t->n_hosts;
  int64_t nb_total = t->out_start[H];
  host_key *keys = fs__malloc((size_t)H, sizeof(*keys));
  int32_t *nb = fs__malloc(nb_total > 0 ? (size_t)nb_total : 1, sizeof(int32_t));
  int32_t *cls = fs__malloc((size_t)H, sizeof(int32_t));
  int32_t *dist = fs__malloc((size_t)t->n_nodes, sizeof(int32_t));
  int32_t *queue = fs__malloc((size_t)t->n_nodes, sizeof(int32_t));
  int rc = 0;
  if (!keys || !nb || !cls || !dist || !queue) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory computing hop counts");
    goto done;
  }
  build_keys(t, keys, nb);
  int exact_classes = links_symmetric(t);
  /* Class c is the run keys[start .. start+size); its id is its start. */
  for (int32_t i = 0; i < H; i++)
    cls[keys[i].host] = (i > 0 && exact_classes && same_attachment(&keys[i - 1], &keys[i]))
                            ? cls[keys[i - 1].host]
                            : i;
  int64_t sum = 0;
  int32_t diameter = 0;
  for (int32_t start = 0; start < H;) {
    int32_t rep = keys[start].host, c = cls[rep], end = start + 1;
    while (end < H && cls[keys[end].host] == c) end++;
    int64_t size = end - start;
    bfs(t, rep, dist, queue);
    for (int32_t h = 0; h < H; h++) {
      if (cls[h] == c) continue;
      if (dist[h] < 0) {
        rc = disconnected(t, rep, h, err);
        goto done;
      }
      sum += size * dist[h];
      if (dist[h] > diameter) diameter = dist[h];
    }
    if (size > 1) {
      int32_t d = dist[keys[start + 1].host];
      if (d < 0) {
        rc = disconnected(t, rep, keys[start + 1].host, err);
        goto done;
      }
      sum += size * (size - 1) * d;
      if (d > diameter) diameter = d;
    }
    start = end;
  }
  st->diameter_hops = diameter;
  st->avg_hops = (double)sum / ((double)H * (double)(H - 1));
done:
  FS__FREE_ALL(keys, nb, cls, dist, queue);
  return rc;
}

/* ---- hop counts without relaying hosts (GPU servers) ------------------------
 * With G > 1 a GPU has two links (NIC, scale-up switch), so classes by
 * attachment are single GPUs, and a plain BFS would let GPUs relay. Here
 * hosts never forward, as in routing: for hosts a != b with no cable between
 * them,
 *
 *   dist(a, b) = 2 + min over w in F(a), u in F(b) of D(w, u),
 *
 * F(x) the non-host neighbours of x and D the distance in the graph of
 * non-hosts only. Three reductions make that cheap:
 *
 * - A non-host p with a single non-host neighbour y (itself not such a dead
 *   end) and at most one host is a dead end: D(p, z) = 1 + D(y, z) for
 *   z != p, so p stands for (y, +1), and no two hosts share p (a NIC: its
 *   leaf, +1).
 * - A non-host x with no non-host neighbour (a scale-up switch) joins only
 *   its own hosts, all at distance 2 from each other. It is left out of the
 *   keys below, and the pairs it joins are corrected to 2 afterwards (when
 *   it has at most ISO_MAX hosts; a bigger one stays a root, which is exact
 *   too, only with more classes).
 * - Any other non-host x stands for itself, (x, 0).
 *
 * A host's key is its set of (root, offset); hosts with equal keys are
 * equally far from every host they share no left-out node with, and (all
 * links having reverses) from each other: 2 + min of o + o' + D(r, r') over
 * two key entries (a shared root r with offset 0 gives the 2 hops through
 * it). So one BFS per class (a leaf or edge switch: 512 at 8192 GPUs),
 * seeded at its roots with their offsets, over the switches only (dead ends
 * are never on a path between roots), then a pass over the other classes'
 * keys and over the pairs of the left-out nodes (at most ISO_MAX times
 * their links). All of fs_topo_stats_compute takes 0.03 s at 8192 GPUs in
 * servers of 8 and 0.46 s at 65536 (fat-trees k=32 and k=64). Graphs
 * without reverse links or with host-to-host cables (never built by the
 * families) fall back to one BFS per host. */

/* Fills st like hop_stats, by one BFS per host that never expands a host.
 * O(H (V + E)): the fallback. */
static int hop_stats_nohost_naive(const fs_topo *t, fs_topo_stats *st, fs_err *err) {
  int32_t H = t->n_hosts;
  int32_t *dist = fs__malloc((size_t)t->n_nodes, sizeof(int32_t));
  int32_t *queue = fs__malloc((size_t)t->n_nodes, sizeof(int32_t));
  int rc = 0;
  if (!dist || !queue) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory computing hop counts");
    goto done;
  }
  int64_t sum = 0;
  int32_t diameter = 0;
  for (int32_t a = 0; a < H; a++) {
    for (int32_t v = 0; v < t->n_nodes; v++) dist[v] = -1;
    int32_t head = 0, tail = 0;
    dist[a] = 0;
    queue[tail++] = a;
    while (head < tail) {
      int32_t u = queue[head++];
      if (u != a && t->nodes[u].kind == FS_NODE_HOST) continue;
      for (int32_t i = t->out_start[u]; i < t->out_start[u + 1]; i++) {
        int32_t v = t->links[t->out_links[i]].to;
        if (dist[v] < 0) {
          dist[v] = dist[u] + 1;
          queue[tail++] = v;
        }
      }
    }
    for (int32_t b = 0; b < H; b++) {
      if (b == a) continue;
      if (dist[b] < 0) {
        rc = disconnected(t, a, b, err);
        goto done;
      }
      sum += dist[b];
      if (dist[b] > diameter) diameter = dist[b];
    }
  }
  st->diameter_hops = diameter;
  st->avg_hops = (double)sum / ((double)H * (double)(H - 1));
done:
  free(dist);
  free(queue);
  return rc;
}

/* Key entries are root * 2 + offset, so sorting puts a root's offset 0
 * before its offset 1. */
static int cmp_i32(const void *pa, const void *pb) {
  int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
  return (a > b) - (a < b);
}

/* Names two hosts of classes c and c2 that no left-out node joins (they
 * exist: the caller counted them), as disconnected. mark[] is scratch. */
static int disconnected_pair(const fs_topo *t, const host_key *keys,
                             const int32_t *cls_start, int32_t c, int32_t c2,
                             const int32_t *code, int32_t *mark, fs_err *err) {
  for (int32_t i = cls_start[c]; i < cls_start[c + 1]; i++) {
    int32_t a = keys[i].host;
    for (int32_t j = t->out_start[a]; j < t->out_start[a + 1]; j++) {
      int32_t x = t->links[t->out_links[j]].to;
      if (code[x] >= 0) continue;
      for (int32_t k = t->out_start[x]; k < t->out_start[x + 1]; k++)
        mark[t->links[t->out_links[k]].to] = -2 - a;
    }
    for (int32_t k = cls_start[c2]; k < cls_start[c2 + 1]; k++) {
      int32_t b = keys[k].host;
      if (b != a && mark[b] != -2 - a) return disconnected(t, a, b, err);
    }
  }
  return disconnected(t, keys[cls_start[c]].host, keys[cls_start[c2]].host, err);
}

enum { ISO_MAX = 256 };

/* The working arrays of hop_stats_nohost. Per node: its distinct non-host
 * and host neighbours (nx, nh), its one non-host neighbour, its code
 * (root * 2 + offset, -1 left out), a scratch mark, BFS distance and
 * queue; per host: its key (entries in nb) and class; per class: its
 * first key, the distance fd to a class c2 from the one at hand and the
 * pairs corr a left-out node joins; the roots' graph in CSR. */
typedef struct nohost_ctx {
  int32_t *nx, *nh, *one, *mark, *code, *nb;
  host_key *keys;
  int32_t *cls, *cls_start, *fd;
  int64_t *corr;
  int32_t *dist, *queue;
  int32_t *radj_start, *radj;
  int32_t C; /* classes */
} nohost_ctx;

/* Allocates the per-node, per-host and per-class arrays (corr zeroed; the
 * roots' graph comes later). Returns 0 or -1; nohost_free frees either. */
static int nohost_alloc(const fs_topo *t, nohost_ctx *x) {
  int32_t H = t->n_hosts, n = t->n_nodes;
  x->nx = fs__malloc((size_t)n, sizeof(int32_t));
  x->nh = fs__malloc((size_t)n, sizeof(int32_t));
  x->one = fs__malloc((size_t)n, sizeof(int32_t));
  x->mark = fs__malloc((size_t)n, sizeof(int32_t));
  x->code = fs__malloc((size_t)n, sizeof(int32_t));
  int64_t nb_total = t->out_start[H];
  x->nb = fs__malloc(nb_total > 0 ? (size_t)nb_total : 1, sizeof(int32_t));
  x->keys = fs__malloc((size_t)H, sizeof(*x->keys));
  x->cls = fs__malloc((size_t)H, sizeof(int32_t));
  x->cls_start = fs__malloc((size_t)H + 1, sizeof(int32_t));
  x->fd = fs__malloc((size_t)H, sizeof(int32_t));
  x->corr = fs__calloc((size_t)H, sizeof(int64_t));
  x->dist = fs__malloc((size_t)n, sizeof(int32_t));
  x->queue = fs__malloc((size_t)n, sizeof(int32_t));
  return x->nx && x->nh && x->one && x->mark && x->code && x->nb && x->keys && x->cls &&
                 x->cls_start && x->fd && x->corr && x->dist && x->queue
             ? 0
             : -1;
}

static void nohost_free(nohost_ctx *x) {
  FS__FREE_ALL(x->nx, x->nh, x->one, x->mark, x->code, x->nb, x->keys, x->cls, x->cls_start, x->fd,
               x->corr, x->dist, x->queue, x->radj_start, x->radj);
}

/* Each non-host's code: left out (no non-host neighbour, at most ISO_MAX
 * hosts), a dead end standing for (its one neighbour, +1), or itself. */
static void assign_codes(const fs_topo *t, nohost_ctx *x) {
  int32_t H = t->n_hosts, n = t->n_nodes;
  for (int32_t v = 0; v < n; v++) x->mark[v] = -1;
  for (int32_t v = H; v < n; v++) {
    x->nx[v] = x->nh[v] = 0;
    x->one[v] = -1;
    for (int32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++) {
      int32_t w = t->links[t->out_links[i]].to;
      if (x->mark[w] == v) continue;
      x->mark[w] = v;
      if (w < H) {
        x->nh[v]++;
      } else {
        x->nx[v]++;
        x->one[v] = w;
      }
    }
  }
  for (int32_t v = H; v < n; v++) {
    int32_t y = x->one[v];
    if (x->nx[v] == 0 && x->nh[v] <= ISO_MAX)
      x->code[v] = -1;
    else if (x->nx[v] == 1 && x->nh[v] <= 1 && x->nx[y] >= 2)
      x->code[v] = 2 * y + 1;
    else
      x->code[v] = 2 * v;
  }
}

/* Keys: each host's distinct codes, sorted, one per root (the smaller
 * offset wins); the hosts sorted by key into classes (runs of equal keys):
 * cls, cls_start and C. */
static void classify_hosts(const fs_topo *t, nohost_ctx *x) {
  int32_t H = t->n_hosts;
  int32_t pos = 0;
  for (int32_t a = 0; a < H; a++) {
    int32_t *list = x->nb + pos, len = 0;
    for (int32_t i = t->out_start[a]; i < t->out_start[a + 1]; i++) {
      int32_t c = x->code[t->links[t->out_links[i]].to];
      if (c >= 0) list[len++] = c;
    }
    qsort(list, (size_t)len, sizeof(int32_t), cmp_i32);
    int32_t m = 0;
    for (int32_t i = 0; i < len; i++)
      if (m == 0 || list[i] / 2 != list[m - 1] / 2) list[m++] = list[i];
    x->keys[a] = (host_key){list, m, a};
    pos += t->out_start[a + 1] - t->out_start[a];
  }
  qsort(x->keys, (size_t)H, sizeof(*x->keys), cmp_host_key);
  int32_t C = 0;
  for (int32_t i = 0; i < H; i++) {
    if (i == 0 || !same_attachment(&x->keys[i - 1], &x->keys[i])) x->cls_start[C++] = i;
    x->cls[x->keys[i].host] = C - 1;
  }
  x->cls_start[C] = H;
  x->C = C;
}

/* The roots' graph: distinct root neighbours of each root, compact, so
 * the BFS skips hosts, dead ends and left-out nodes. Returns 0 or -1 (out
 * of memory). */
static int build_root_graph(const fs_topo *t, nohost_ctx *x) {
  int32_t H = t->n_hosts, n = t->n_nodes;
  x->radj_start = fs__calloc((size_t)n + 1, sizeof(int32_t));
  int64_t nr = 0;
  for (int32_t v = H; v < n; v++)
    if (x->code[v] == 2 * v) nr += x->nx[v];
  x->radj = fs__malloc(nr > 0 ? (size_t)nr : 1, sizeof(int32_t));
  if (!x->radj_start || !x->radj) return -1;
  for (int32_t v = 0; v < n; v++) x->mark[v] = -1;
  int32_t m = 0;
  for (int32_t v = 0; v < n; v++) {
    x->radj_start[v] = m;
    if (v < H || x->code[v] != 2 * v) continue;
    for (int32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++) {
      int32_t w = t->links[t->out_links[i]].to;
      if (w < H || x->code[w] != 2 * w || x->mark[w] == v) continue;
      x->mark[w] = v;
      x->radj[m++] = w;
    }
  }
  x->radj_start[n] = m;
  return 0;
}

/* fd[c2] for every class c2: its hop distance from class c, 2 + the
 * smallest offset-adjusted root distance of a multi-source BFS over the
 * switches from c's roots (-1 if none is reached). Leaves dist all -1. */
static void class_distances(nohost_ctx *x, int32_t c) {
  const host_key *kc = &x->keys[x->cls_start[c]];
  /* Multi-source BFS over the switches: offset-0 roots, then offset-1
   * ones, so the queue stays in distance order. */
  int32_t head = 0, tail = 0;
  for (int32_t off = 0; off < 2; off++)
    for (int32_t i = 0; i < kc->len; i++) {
      int32_t r = kc->nb[i] / 2;
      if (kc->nb[i] % 2 != off || x->dist[r] >= 0) continue;
      x->dist[r] = off;
      x->queue[tail++] = r;
    }
  while (head < tail) {
    int32_t u = x->queue[head++];
    for (int32_t i = x->radj_start[u]; i < x->radj_start[u + 1]; i++) {
      int32_t v = x->radj[i];
      if (x->dist[v] >= 0) continue;
      x->dist[v] = x->dist[u] + 1;
      x->queue[tail++] = v;
    }
  }
  for (int32_t c2 = 0; c2 < x->C; c2++) {
    const host_key *k2 = &x->keys[x->cls_start[c2]];
    int32_t best = -1;
    for (int32_t i = 0; i < k2->len; i++) {
      int32_t d = x->dist[k2->nb[i] / 2];
      if (d >= 0 && (best < 0 || d + k2->nb[i] % 2 < best)) best = d + k2->nb[i] % 2;
    }
    x->fd[c2] = best < 0 ? -1 : 2 + best;
  }
  for (int32_t i = 0; i < tail; i++) x->dist[x->queue[i]] = -1;
}

/* Pairs joined by a left-out node are 2 apart whatever fd says: counts
 * them per class of the second host in corr (each ordered pair from class
 * c once, via mark[b] = a). */
static void count_joined_pairs(const fs_topo *t, nohost_ctx *x, int32_t c) {
  for (int32_t i = x->cls_start[c]; i < x->cls_start[c + 1]; i++) {
    int32_t a = x->keys[i].host;
    for (int32_t j = t->out_start[a]; j < t->out_start[a + 1]; j++) {
      int32_t y = t->links[t->out_links[j]].to;
      if (x->code[y] >= 0) continue;
      for (int32_t k = t->out_start[y]; k < t->out_start[y + 1]; k++) {
        int32_t b = t->links[t->out_links[k]].to;
        if (b == a || x->mark[b] == a) continue;
        x->mark[b] = a;
        x->corr[x->cls[b]]++;
      }
    }
  }
}

/* Adds the hops of every ordered pair from class c to *sum and raises
 * *diameter: the joined pairs at 2, the rest at fd; clears corr. Returns
 * 0, or FS_EINVAL naming two hosts with no path between them. */
static int add_class_pairs(const fs_topo *t, nohost_ctx *x, int32_t c, int64_t *sum,
                           int32_t *diameter, fs_err *err) {
  int64_t size = x->cls_start[c + 1] - x->cls_start[c];
  for (int32_t c2 = 0; c2 < x->C; c2++) {
    int64_t pairs =
        c2 == c ? size * (size - 1) : size * (x->cls_start[c2 + 1] - x->cls_start[c2]);
    int64_t joined = x->corr[c2], rest = pairs - joined;
    x->corr[c2] = 0;
    if (joined > 0) {
      *sum += 2 * joined;
      if (*diameter < 2) *diameter = 2;
    }
    if (rest == 0) continue;
    if (x->fd[c2] < 0)
      return disconnected_pair(t, x->keys, x->cls_start, c, c2, x->code, x->mark, err);
    *sum += rest * x->fd[c2];
    if (x->fd[c2] > *diameter) *diameter = x->fd[c2];
  }
  return 0;
}

/* ---- rotations of the builders' fabrics -------------------------------------
 * Two builders lay their fabrics out so that moving every host on by a
 * block is a graph automorphism: a dragonfly's global cables depend on the
 * groups' difference alone (zoo.c: group i's port for group j depends on
 * j - i mod g), so hosts and routers move one group on; a leaf-spine's
 * hosts and leaves move one leaf on, the spines staying. Every host then
 * has the hop sums of its image in the first block, and the searches run
 * from the first block's classes only, each counted g times: a dragonfly
 * a=32, h=16, p=16 (513 groups) or a 4,096-leaf leaf-spine takes one
 * search per router or leaf of one block.
 *
 * The map: the builders number every kind of node block-major (hosts,
 * then the fabric's switches tier by tier, then GPU servers' NICs and
 * scale-up switches, families.c), so each run of nodes of one kind and
 * tier moves on by its length / g, or stays when g does not divide it.
 * Checked, not assumed: every link must map onto a link, or there is no
 * rotation. Returns g (perm filled), or 1 for none. */
static int32_t builder_rotation(const fs_topo *t, int32_t *perm, int32_t *mark) {
  int32_t H = t->n_hosts, n = t->n_nodes, g = 0;
  if (strcmp(t->family, "dragonfly") == 0) {
    for (int32_t v = H; v < n; v++)
      if (t->nodes[v].kind == FS_NODE_SWITCH && t->nodes[v].group + 1 > g)
        g = t->nodes[v].group + 1;
  } else if (strcmp(t->family, "leafspine") == 0) {
    for (int32_t v = H; v < n; v++) g += t->nodes[v].kind == FS_NODE_SWITCH && t->nodes[v].tier == 1;
  }
  if (g < 2 || H % g) return 1;
  for (int32_t lo = 0, hi; lo < n; lo = hi) {
    for (hi = lo + 1; hi < n && t->nodes[hi].kind == t->nodes[lo].kind &&
                      t->nodes[hi].tier == t->nodes[lo].tier;
         hi++) {
    }
    int32_t len = hi - lo, step = len % g ? 0 : len / g;
    for (int32_t v = lo; v < hi; v++) perm[v] = lo + (v - lo + step) % len;
  }
  for (int32_t v = 0; v < n; v++) mark[v] = -1;
  for (int32_t u = 0; u < n; u++) {
    int32_t su = perm[u];
    for (int32_t i = t->out_start[su]; i < t->out_start[su + 1]; i++)
      mark[t->links[t->out_links[i]].to] = u;
    for (int32_t i = t->out_start[u]; i < t->out_start[u + 1]; i++)
      if (mark[perm[t->links[t->out_links[i]].to]] != u) return 1;
  }
  return g;
}

/* Fills st->diameter_hops and st->avg_hops (needs n_hosts >= 2) with hosts
 * never forwarding. Returns 0, FS_EINVAL naming two hosts with no path
 * between them, or FS_ENOMEM; st is written only on success. */
static int hop_stats_nohost(const fs_topo *t, fs_topo_stats *st, fs_err *err) {
  int32_t H = t->n_hosts, n = t->n_nodes;
  for (int32_t l = 0; l < t->n_links; l++)
    if (t->links[l].from < H && t->links[l].to < H) return hop_stats_nohost_naive(t, st, err);
  if (!links_symmetric(t)) return hop_stats_nohost_naive(t, st, err);
  nohost_ctx x;
  memset(&x, 0, sizeof(x));
  int rc = 0;
  if (nohost_alloc(t, &x)) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory computing hop counts");
    goto done;
  }
  assign_codes(t, &x);
  classify_hosts(t, &x);
  if (build_root_graph(t, &x)) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory computing hop counts");
    goto done;
  }
  /* Under a rotation of g, the first block's classes stand for all: each
   * must lie wholly inside it (hosts [0, H / g)) or wholly outside. */
  int32_t g = builder_rotation(t, x.dist, x.mark);
  for (int32_t c = 0; c < x.C && g > 1; c++) {
    int32_t in0 = 0, size = x.cls_start[c + 1] - x.cls_start[c];
    for (int32_t i = x.cls_start[c]; i < x.cls_start[c + 1]; i++) in0 += x.keys[i].host < H / g;
    if (in0 != 0 && in0 != size) g = 1;
  }
  for (int32_t v = 0; v < n; v++) x.dist[v] = x.mark[v] = -1;
  int64_t sum = 0;
  int32_t diameter = 0;
  for (int32_t c = 0; c < x.C && !rc; c++) {
    if (g > 1 && x.keys[x.cls_start[c]].host >= H / g) continue;
    class_distances(&x, c);
    count_joined_pairs(t, &x, c);
    rc = add_class_pairs(t, &x, c, &sum, &diameter, err);
  }
  if (rc) goto done;
  sum *= g;
  st->diameter_hops = diameter;
  st->avg_hops = (double)sum / ((double)H * (double)(H - 1));
done:
  nohost_free(&x);
  return rc;
}

/* ---- bisection: Dinic max-flow ---------------------------------------------
 * Arcs come in pairs (a, a^1): a forward arc and its residual. */

typedef struct flownet {
  int32_t n, m;       /* nodes, arcs */
  int32_t *to;        /* head of each arc */
  double *cap;        /* residual capacity of each arc */
  int32_t *adj_start; /* arcs leaving node v: adj[adj_start[v] .. [v+1]) */
  int32_t *adj;
  int32_t *level, *it, *queue, *path;
  double eps;
} flownet;

static void flownet_free(flownet *f) {
  FS__FREE_ALL(f->to, f->cap, f->adj_start, f->adj, f->level, f->it, f->queue, f->path);
}

/* Returns 0 or FS_ENOMEM; either way flownet_free(f) releases what exists. */
static int flownet_build(const fs_topo *t, flownet *f) {
  memset(f, 0, sizeof(*f));
  int32_t H = t->n_hosts, S = t->n_nodes, T = t->n_nodes + 1;
  f->n = t->n_nodes + 2;
  f->m = 2 * (t->n_links + H);
  f->to = fs__malloc((size_t)f->m, sizeof(int32_t));
  f->cap = fs__malloc((size_t)f->m, sizeof(double));
  f->adj_start = fs__calloc((size_t)f->n + 1, sizeof(int32_t));
  f->adj = fs__malloc((size_t)f->m, sizeof(int32_t));
  f->level = fs__malloc((size_t)f->n, sizeof(int32_t));
  f->it = fs__malloc((size_t)f->n, sizeof(int32_t));
  f->queue = fs__malloc((size_t)f->n, sizeof(int32_t));
  f->path = fs__malloc((size_t)f->n, sizeof(int32_t));
  if (!f->to || !f->cap || !f->adj_start || !f->adj || !f->level || !f->it ||
      !f->queue || !f->path)
    return FS_ENOMEM;
  double total = 0, maxcap = 0;
  for (int32_t l = 0; l < t->n_links; l++) {
    double c = t->links[l].capacity_bps;
    if (!(c > 0) || !isfinite(c)) c = 0; /* a dead link carries nothing */
    total += c;
    if (c > maxcap) maxcap = c;
  }
  double inf = 2 * total + 1;
  int32_t a = 0;
  for (int32_t l = 0; l < t->n_links; l++) {
    double c = t->links[l].capacity_bps;
    f->to[a] = t->links[l].to;
    f->cap[a++] = (c > 0 && isfinite(c)) ? c : 0;
    f->to[a] = t->links[l].from;
    f->cap[a++] = 0;
  }
  for (int32_t h = 0; h < H; h++) {
    int src_side = h < H / 2;
    f->to[a] = src_side ? h : T;
    f->cap[a++] = inf;
    f->to[a] = src_side ? S : h;
    f->cap[a++] = 0;
  }
  /* The tail of arc a is the head of its partner a^1. */
  for (a = 0; a < f->m; a++) f->adj_start[f->to[a ^ 1] + 1]++;
  for (int32_t v = 0; v < f->n; v++) f->adj_start[v + 1] += f->adj_start[v];
  for (int32_t v = 0; v < f->n; v++) f->it[v] = f->adj_start[v];
  for (a = 0; a < f->m; a++) f->adj[f->it[f->to[a ^ 1]]++] = a;
  /* Rounding leaves residues of ~1e-16 * capacity; treat them as zero so a
   * phase never chases a path worth nothing. */
  f->eps = maxcap * 1e-12;
  return 0;
}

/* Levels from s over arcs with residual capacity; returns whether t is
 * reachable. */
static int flownet_levels(flownet *f, int32_t s, int32_t t) {
  for (int32_t v = 0; v < f->n; v++) f->level[v] = -1;
  int32_t head = 0, tail = 0;
  f->level[s] = 0;
  f->queue[tail++] = s;
  while (head < tail) {
    int32_t u = f->queue[head++];
    for (int32_t i = f->adj_start[u]; i < f->adj_start[u + 1]; i++) {
      int32_t a = f->adj[i], v = f->to[a];
      if (f->cap[a] > f->eps && f->level[v] < 0) {
        f->level[v] = f->level[u] + 1;
        f->queue[tail++] = v;
      }
    }
  }
  return f->level[t] >= 0;
}

/* One blocking flow on the level graph, by iterative DFS: path[] holds the
 * arcs from s to the current node u; it[u] is u's next untried arc. */
static double flownet_block(flownet *f, int32_t s, int32_t t) {
  double pushed = 0;
  for (int32_t v = 0; v < f->n; v++) f->it[v] = f->adj_start[v];
  int32_t u = s, top = 0;
  for (;;) {
    if (u == t) {
      double b = HUGE_VAL;
      for (int32_t i = 0; i < top; i++)
        if (f->cap[f->path[i]] < b) b = f->cap[f->path[i]];
      int32_t first_sat = -1;
      for (int32_t i = 0; i < top; i++) {
        int32_t a = f->path[i];
        f->cap[a] -= b;
        f->cap[a ^ 1] += b;
        if (first_sat < 0 && f->cap[a] <= f->eps) first_sat = i;
      }
      pushed += b;
      top = first_sat; /* the bottleneck arc is saturated, so first_sat >= 0 */
      u = f->to[f->path[top] ^ 1];
      continue;
    }
    int32_t *i = &f->it[u];
    while (*i < f->adj_start[u + 1]) {
      int32_t a = f->adj[*i];
      if (f->cap[a] > f->eps && f->level[f->to[a]] == f->level[u] + 1) break;
      ++*i;
    }
    if (*i < f->adj_start[u + 1]) {
      int32_t a = f->adj[*i];
      f->path[top++] = a;
      u = f->to[a];
      continue;
    }
    /* Dead end: no path to t through u in this phase. */
    f->level[u] = -1;
    if (u == s) break;
    u = f->to[f->path[--top] ^ 1];
    f->it[u]++;
  }
  return pushed;
}

/* *out = max flow across the host-order cut; 0, or FS_ENOMEM leaving *out. */
static int bisection(const fs_topo *t, double *out, fs_err *err) {
  flownet f;
  if (flownet_build(t, &f)) {
    flownet_free(&f);
    return fs_err_set(err, FS_ENOMEM, "out of memory computing bisection bandwidth");
  }
  int32_t s = t->n_nodes, sink = t->n_nodes + 1;
  double flow = 0;
  while (flownet_levels(&f, s, sink)) flow += flownet_block(&f, s, sink);
  flownet_free(&f);
  *out = flow;
  return 0;
}

/* Whether every host is cabled to one node only (possibly several times). */
static int single_homed(const fs_topo *t) {
  for (int32_t h = 0; h < t->n_hosts; h++)
    for (int32_t i = t->out_start[h] + 1; i < t->out_start[h + 1]; i++)
      if (t->links[t->out_links[i]].to != t->links[t->out_links[t->out_start[h]]].to) return 0;
  return 1;
}

/* ---- injection ---------------------------------------------------------------- */

/* Per host, what it can send into (out) and receive from (in) the scale-out
 * fabric: its links to anything but a scale-up switch, a link to or from a
 * NIC counting at most what that NIC forwards on. Fills st's injection
 * fields. Returns 0 or FS_ENOMEM. */
static int injection(const fs_topo *t, fs_topo_stats *st, fs_err *err) {
  int32_t H = t->n_hosts;
  double *nic_out = fs__calloc((size_t)t->n_nodes, sizeof(double));
  double *nic_in = fs__calloc((size_t)t->n_nodes, sizeof(double));
  if (!nic_out || !nic_in) {
    free(nic_out);
    free(nic_in);
    return fs_err_set(err, FS_ENOMEM, "out of memory computing injection bandwidth");
  }
  for (int32_t l = 0; l < t->n_links; l++) {
    const fs_link *k = &t->links[l];
    if (k->from >= H && k->to >= H && t->nodes[k->from].kind == FS_NODE_NIC)
      nic_out[k->from] += k->capacity_bps;
    if (k->from >= H && k->to >= H && t->nodes[k->to].kind == FS_NODE_NIC)
      nic_in[k->to] += k->capacity_bps;
  }
  double total = 0, send = 0, recv = 0;
  for (int32_t l = 0; l < t->n_links; l++) {
    const fs_link *k = &t->links[l];
    fs_node_kind from = t->nodes[k->from].kind, to = t->nodes[k->to].kind;
    double c = k->capacity_bps;
    if (k->from < H && to == FS_NODE_SCALEUP) st->scaleup_bps += c;
    if (k->from < H && to != FS_NODE_SCALEUP) {
      double out = to == FS_NODE_NIC && nic_out[k->to] < c ? nic_out[k->to] : c;
      total += out;
      if (k->from < H / 2) send += out;
    }
    if (k->to < H && k->to >= H / 2 && from != FS_NODE_SCALEUP)
      recv += from == FS_NODE_NIC && nic_in[k->from] < c ? nic_in[k->from] : c;
  }
  st->host_injection_bps = total;
  st->full_bisection_bps = H >= 2 ? (send < recv ? send : recv) : 0;
  free(nic_out);
  free(nic_in);
  return 0;
}

/* ---- rail-only: closed form ------------------------------------------------
 * Its NICs are cabled to their scale-up switch too (PXN), so no node is a
 * dead end and every GPU would be its own class above (8.8 s at 32,768
 * GPUs). The built graph has three distances (zoo.c): 2 inside a server,
 * 4 along a rail (GPU-NIC-rail-NIC-GPU), 5 otherwise (one scale-up switch
 * and one rail; no 4-hop path exists since a GPU's only neighbours are its
 * NIC, on its own rail, and its server's scale-up switch). Tested against
 * a BFS oracle (tests/test_topo_zoo.c). Returns 0 for any other graph. */
static int railonly_hops(const fs_topo *t, fs_topo_stats *st) {
  if (strcmp(t->family, "railonly") != 0 || strncmp(t->spec, "railonly:", 9) != 0 ||
      t->gpus_per_node < 2)
    return 0;
  double G = t->gpus_per_node, S = t->n_hosts / t->gpus_per_node, H = G * S;
  double sum = S * G * (G - 1) * 2 + G * S * (S - 1) * 4 + S * G * (S - 1) * (G - 1) * 5;
  st->diameter_hops = S > 1 ? 5 : 2;
  st->avg_hops = sum / (H * (H - 1));
  return 1;
}

/* ---- direct networks: closed form -------------------------------------------
 * A torus (or ring) of switches with one host each is vertex-transitive,
 * and the hop count between two hosts is 2 (host to switch and back) plus
 * the switches' distance, the sum over dimensions of the ring distance
 * min(x, d - x) of their coordinates' difference x. Over all ordered pairs
 * of switches (self pairs adding 0) that sum is N sum_i (N / d_i) S_i, with
 * S_i = sum_{x < d_i} min(x, d_i - x) the ring distances from one switch;
 * the mean over the N (N - 1) pairs of distinct hosts adds the 2. The
 * diameter is 2 + sum_i floor(d_i / 2). A full mesh: 3 between any two.
 * What the BFS method would give, in O(dims) instead of O(N^2) (a
 * 100x100x100 torus never finished); tested against a BFS oracle on every
 * torus of up to 3 dimensions of sizes 2-6 (tests/test_topo_zoo.c). 0 for
 * any other graph. */
static int direct_hops(const fs_topo *t, fs_topo_stats *st) {
  /* awgr: every host has a direct channel to every other, 1 hop; sirius:
   * host, its node, the other node, host, 3 hops (the fullmesh layout). */
  if (strcmp(t->family, "awgr") == 0 && t->n_nodes == t->n_hosts) {
    st->diameter_hops = 1;
    st->avg_hops = 1;
    return 1;
  }
  if (strcmp(t->family, "sirius") == 0 && 2 * t->n_hosts == t->n_nodes) {
    st->diameter_hops = 3;
    st->avg_hops = 3;
    return 1;
  }
  if (fs__optical_hops(t, st)) return 1;
  /* sipml-ocs is a torus of GPUs (zoo_optical.c) */
  int torus = strcmp(t->family, "torus") == 0 || strcmp(t->family, "sipml-ocs") == 0;
  int ring = strcmp(t->family, "ring") == 0, mesh = strcmp(t->family, "fullmesh") == 0;
  if ((!torus && !ring && !mesh) || t->gpus_per_node > 1 || 2 * t->n_hosts != t->n_nodes)
    return 0;
  double N = (double)t->n_hosts;
  if (mesh) {
    st->diameter_hops = 3;
    st->avg_hops = 3;
    return 1;
  }
  double sum = 0;
  int64_t diameter = 2;
  for (int32_t i = 0; i < t->n_dims; i++) {
    int64_t d = t->dims[i], S = 0;
    for (int64_t x = 0; x < d; x++) S += x < d - x ? x : d - x;
    sum += N * (N / (double)d) * (double)S;
    diameter += d / 2;
  }
  st->diameter_hops = (int32_t)diameter;
  st->avg_hops = 2 + sum / (N * (N - 1));
  return 1;
}

/* ---- fat-tree: closed form ---------------------------------------------------
 * The builder's k-ary fat-tree of single hosts (fs_topo_fattree: k pods of
 * k/2 edge switches of k/2 hosts, k/2 aggregation switches a pod, (k/2)^2
 * cores): two hosts are 2 hops apart on one edge switch, 4 in one pod, 6
 * across pods. Of the H - 1 other hosts, k/2 - 1 share the edge,
 * (k/2 - 1) k/2 the pod and the rest are in other pods. Tested against the
 * BFS oracle for k = 2 .. 10; 0 for any other graph (servers included). */
static int fattree_hops(const fs_topo *t, fs_topo_stats *st) {
  int k = 0;
  if (strcmp(t->family, "fattree") != 0 || t->gpus_per_node > 1 ||
      sscanf(t->spec, "fattree:k=%d,", &k) != 1 || k < 2)
    return 0;
  double h = k / 2, H = (double)t->n_hosts;
  if (H != 2 * h * h * h || (double)t->n_nodes != H + 5 * h * h) return 0;
  double edge = h - 1, pod = (h - 1) * h, other = H - 1 - edge - pod;
  st->diameter_hops = other > 0 ? 6 : pod > 0 ? 4 : 2;
  st->avg_hops = (2 * edge + 4 * pod + 6 * other) / (H - 1);
  return 1;
}

/* ---- entry ------------------------------------------------------------------ */

int fs_topo_stats_compute(const fs_topo *t, fs_topo_stats *st, fs_err *err) {
  fs_topo_stats s;
  memset(&s, 0, sizeof(s));
  s.nodes = t->n_nodes;
  s.hosts = t->n_hosts;
  s.links = t->n_links;
  s.cables = t->n_links / 2;
  s.gpus_per_node = t->gpus_per_node > 1 ? t->gpus_per_node : 1;
  s.servers = t->n_hosts / s.gpus_per_node;
  for (int32_t v = 0; v < t->n_nodes; v++) {
    s.nics += t->nodes[v].kind == FS_NODE_NIC;
    s.scaleup_switches += t->nodes[v].kind == FS_NODE_SCALEUP;
    if (t->nodes[v].kind != FS_NODE_SWITCH) continue;
    s.switches++;
    int32_t deg = t->out_start[v + 1] - t->out_start[v];
    if (deg > s.max_radix) s.max_radix = deg;
  }
  int rc = injection(t, &s, err);
  if (rc) return rc;
  if (t->n_hosts >= 2) {
    /* Where hosts are single-homed (plain families) relaying is impossible
     * and both agree; the server method is then just faster. */
    if (railonly_hops(t, &s) || direct_hops(t, &s) || fattree_hops(t, &s))
      rc = 0;
    else
      rc = t->gpus_per_node > 1 || single_homed(t) ? hop_stats_nohost(t, &s, err)
                                                   : hop_stats(t, &s, err);
    if (rc) return rc;
    if ((rc = bisection(t, &s.bisection_bps, err))) return rc;
  }
  *st = s;
  return 0;
}
