/* Equal-cost shortest paths and the routing modes built on them.
 *
 * Distances. dist(v, d) is the hop count of the shortest path from v to d
 * that forwards only through non-hosts. Nodes that many paths fan into
 * (switches with two or more forwarding neighbours) get a distance table,
 * uint16 per non-host (hosts never forward: a host's distance is one more
 * than its nearest neighbour's, looked up when asked), filled on first use
 * by a reverse BFS over non-hosts (in-links of u are the reverses of u's
 * out-links, since every link belongs to a cable). Every other destination d is resolved through its
 * forwarding neighbours F(d) (the non-hosts it is cabled to):
 *
 *   dist(v, d) = 0 if v = d; 1 if v is a host cabled to d;
 *                else 1 + min over w in F(d) of dist(v, w),
 *
 * since the hop into d comes from a forwarding node or from the source.
 * That covers hosts (a plain host: F = its switch; a GPU: its NIC and its
 * scale-up switch), a NIC (F = its leaf) and a scale-up switch (F empty:
 * only its own GPUs reach it). A non-host is resolved this way only if its
 * forwarding neighbours all have tables, so the recursion is at most two
 * deep and costs a few lookups. A fat-tree of 8192 GPUs in servers of 8
 * thus needs one table per edge switch to route between GPUs: 512 tables of
 * the ~2.3k non-hosts, 2.4 MB; one table per GPU would be 8192 x 2.3k x 2 B
 * = 38 MB. (Tables over every node cost 1.15 GB for the 131,072-GPU 3-tier
 * Clos's 4096 leaves; over its 9.2k switches, 75 MB.)
 *
 * Each next-hop decision is then "links v->w with dist(w, d) = dist(v, d) -
 * 1", O(degree) per hop.
 *
 * Spraying builds the shortest-path DAG layer by layer from src, counts paths
 * forwards (to each node) and backwards (to dst); the fraction of all
 * shortest paths using link u->w is fwd(u) * back(w) / total. */
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/route.h"

#define UNREACH 0xFFFFu

/* How dist(., d) is found (see the top of the file). */
enum { PLAN_TABLE = 0, PLAN_VIA = 1, PLAN_VIA_HOSTS = 2 /* VIA, and hosts cabled to d */ };

/* A memoised spray DAG between two switches: its links and weights at
 * mid_links/mid_w[off .. off + n), path count, longest latency. */
typedef struct spray_mid {
  size_t off;
  int32_t n;
  double total;
  int64_t lat;
} spray_mid;

struct fs_router {
  const fs_topo *t;
  uint16_t **table;  /* per node: distance-to-node table over non-hosts, or NULL */
  int32_t *sw;       /* per node: its index in a table, -1 for a host */
  int32_t n_sw;
  uint8_t *plan;     /* per node: PLAN_* */
  int32_t *via_start, *via; /* VIA nodes: F(d) = via[via_start[d] .. [d+1]) */
  /* scratch for spraying (one router per thread) */
  double *fwd, *back;
  int64_t *lat;
  uint32_t *stamp;
  uint32_t epoch;
  int32_t *layer_nodes, *dag_links;
  size_t dag_cap;
  /* spraying between single-homed hosts: the DAG between their switches,
   * per (first switch, last switch), as spray_mid computed it */
  fs__u64map mid_of;  /* (a, b) -> index in mids */
  spray_mid *mids;
  size_t n_mids, mids_cap;
  int32_t *mid_links;
  double *mid_w;
  size_t mid_len, mid_cap;
};

static const char *const mode_names[] = {"shortest", "ecmp",    "spray",   "explicit",
                                         "dor",      "minimal", "valiant", "railonly",
                                         "lotus"};

int fs_route_mode_parse(const char *name, fs_route_mode *out) {
  const char *const *names = mode_names;
  for (int i = 0; i < (int)(sizeof(mode_names) / sizeof(mode_names[0])); i++)
    if (strcmp(name, names[i]) == 0) {
      *out = (fs_route_mode)i;
      return 0;
    }
  return FS_EINVAL;
}

const char *fs_route_mode_name(fs_route_mode mode) {
  switch (mode) {
    case FS_ROUTE_SHORTEST: return "shortest";
    case FS_ROUTE_ECMP: return "ecmp";
    case FS_ROUTE_SPRAY: return "spray";
    case FS_ROUTE_EXPLICIT: return "explicit";
    case FS_ROUTE_DOR: return "dor";
    case FS_ROUTE_MINIMAL: return "minimal";
    case FS_ROUTE_VALIANT: return "valiant";
    case FS_ROUTE_RAILONLY: return "railonly";
    case FS_ROUTE_LOTUS: return "lotus";
  }
  return "?";
}

/* Built by `family`'s builder (a file import keeps the label, not the
 * layout the family routings read). */
static int is_family(const fs_topo *t, const char *family) {
  return strcmp(t->family, family) == 0 && strncmp(t->spec, family, strlen(family)) == 0 &&
         t->spec[strlen(family)] == ':';
}

int fs_route_mode_check(fs_route_mode mode, const fs_topo *t, fs_err *err) {
  const char *need = NULL;
  int ok = 1;
  switch (mode) {
    case FS_ROUTE_SHORTEST:
    case FS_ROUTE_ECMP:
    case FS_ROUTE_SPRAY:
    case FS_ROUTE_EXPLICIT: break;
    case FS_ROUTE_DOR:
      need = "a torus or ring"; /* (or sipml-ocs, a torus of GPUs) */
      ok = is_family(t, "torus") || is_family(t, "ring") || is_family(t, "sipml-ocs");
      break;
    case FS_ROUTE_MINIMAL:
    case FS_ROUTE_VALIANT:
      need = "a dragonfly or sirius";
      ok = is_family(t, "dragonfly") || is_family(t, "sirius");
      break;
    case FS_ROUTE_RAILONLY:
      need = "a railonly";
      ok = is_family(t, "railonly");
      break;
    case FS_ROUTE_LOTUS:
      need = "a lotus";
      ok = is_family(t, "lotus");
      break;
  }
  if (ok) return 0;
  return fs_err_set(err, FS_EINVAL, "%s routing needs %s topology, not %s",
                    fs_route_mode_name(mode), need, t->spec[0] ? t->spec : t->family);
}

int fs_route_by_mode(fs_router *r, fs_route_mode mode, int32_t src, int32_t dst, uint64_t seed,
                     uint64_t key, fs_route *out, fs_err *err) {
  switch (mode) {
    case FS_ROUTE_SHORTEST: return fs_route_shortest(r, src, dst, out, err);
    case FS_ROUTE_ECMP: return fs_route_ecmp(r, src, dst, seed, key, out, err);
    case FS_ROUTE_SPRAY: return fs_route_spray(r, src, dst, out, err);
    case FS_ROUTE_DOR: return fs_route_torus_dor(r, src, dst, out, err);
    case FS_ROUTE_MINIMAL:
    case FS_ROUTE_VALIANT:
      if (is_family(r->t, "sirius"))
        return fs_route_sirius(r, src, dst, mode == FS_ROUTE_VALIANT, seed, key, out, err);
      return fs_route_dragonfly(r, src, dst, mode == FS_ROUTE_VALIANT, seed, key, out, err);
    case FS_ROUTE_RAILONLY: return fs_route_railonly(r, src, dst, out, err);
    case FS_ROUTE_LOTUS: return fs_route_lotus(r, src, dst, seed, key, out, err);
    case FS_ROUTE_EXPLICIT: break;
  }
  return fs_err_set(err, FS_EINVAL, "routing mode %s needs a path per flow",
                    fs_route_mode_name(mode));
}

void fs_route_init(fs_route *r) { memset(r, 0, sizeof(*r)); }

void fs_route_free(fs_route *r) {
  free(r->links);
  free(r->weights);
  memset(r, 0, sizeof(*r));
}

static int route_push(fs_route *r, int32_t link, double w) {
  if (r->n == r->cap) {
    int32_t ncap = r->cap ? r->cap * 2 : 8;
    int32_t *nl = realloc(r->links, (size_t)ncap * sizeof(*nl));
    if (!nl) return FS_ENOMEM;
    r->links = nl;
    double *nw = realloc(r->weights, (size_t)ncap * sizeof(*nw));
    if (!nw) return FS_ENOMEM;
    r->weights = nw;
    r->cap = ncap;
  }
  r->links[r->n] = link;
  r->weights[r->n] = w;
  r->n++;
  return 0;
}

/* Distinct non-host neighbours of v, in link order, written to out (NULL:
 * only counted). mark[] is scratch, all -1 on entry and on return. */
static int32_t forwarders(const fs_topo *t, int32_t v, int32_t *out, int32_t *mark) {
  int32_t n = 0;
  for (int32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++) {
    int32_t w = t->links[t->out_links[i]].to;
    if (t->nodes[w].kind == FS_NODE_HOST || mark[w] == v) continue;
    mark[w] = v;
    if (out) out[n] = w;
    n++;
  }
  for (int32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++)
    mark[t->links[t->out_links[i]].to] = -1;
  return n;
}

static int has_host_neighbour(const fs_topo *t, int32_t v) {
  for (int32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++)
    if (t->nodes[t->links[t->out_links[i]].to].kind == FS_NODE_HOST) return 1;
  return 0;
}

/* Decides each node's plan: non-hosts with two or more forwarders get a
 * table; a non-host with none, or with one forwarder that has a table, and
 * every host, is resolved through its forwarders. O(V + E). */
static int plan_nodes(fs_router *r) {
  const fs_topo *t = r->t;
  int32_t n = t->n_nodes;
  int32_t *nfwd = fs__malloc((size_t)n, sizeof(*nfwd));
  int32_t *mark = fs__malloc((size_t)n, sizeof(*mark));
  if (!nfwd || !mark) goto oom;
  for (int32_t v = 0; v < n; v++) mark[v] = -1;
  for (int32_t v = 0; v < n; v++) nfwd[v] = forwarders(t, v, NULL, mark);
  int32_t total = 0;
  for (int32_t v = 0; v < n; v++) {
    int via = t->nodes[v].kind == FS_NODE_HOST || nfwd[v] == 0;
    if (!via && nfwd[v] == 1) {
      int32_t w;
      forwarders(t, v, &w, mark);
      via = nfwd[w] >= 2;
    }
    r->plan[v] = via ? (has_host_neighbour(t, v) ? PLAN_VIA_HOSTS : PLAN_VIA) : PLAN_TABLE;
    r->via_start[v] = total;
    if (via) total += nfwd[v];
  }
  r->via_start[n] = total;
  r->via = fs__malloc(total > 0 ? (size_t)total : 1, sizeof(*r->via));
  if (!r->via) goto oom;
  for (int32_t v = 0; v < n; v++)
    if (r->plan[v] != PLAN_TABLE) forwarders(t, v, r->via + r->via_start[v], mark);
  free(nfwd);
  free(mark);
  return 0;
oom:
  free(nfwd);
  free(mark);
  return FS_ENOMEM;
}

int fs_router_new(const fs_topo *t, fs_router **out, fs_err *err) {
  fs_router *r = calloc(1, sizeof(*r));
  if (r) fs__u64map_init(&r->mid_of);
  size_t n = (size_t)t->n_nodes;
  if (!r) goto oom;
  r->t = t;
  r->table = calloc(n, sizeof(*r->table));
  r->sw = fs__malloc(n ? n : 1, sizeof(*r->sw));
  if (!r->sw) goto oom;
  for (size_t v = 0; v < n; v++) r->sw[v] = t->nodes[v].kind == FS_NODE_HOST ? -1 : r->n_sw++;
  r->plan = fs__malloc(n, sizeof(*r->plan));
  r->via_start = fs__malloc(n + 1, sizeof(*r->via_start));
  r->fwd = fs__malloc(n, sizeof(*r->fwd));
  r->back = fs__malloc(n, sizeof(*r->back));
  r->lat = fs__malloc(n, sizeof(*r->lat));
  r->stamp = calloc(n ? n : 1, sizeof(*r->stamp));
  r->layer_nodes = fs__malloc(n, sizeof(*r->layer_nodes));
  if (!r->table || !r->plan || !r->via_start || !r->fwd || !r->back || !r->lat ||
      !r->stamp || !r->layer_nodes)
    goto oom;
  if (plan_nodes(r)) goto oom;
  *out = r;
  return 0;
oom:
  fs_router_free(r);
  return fs_err_set(err, FS_ENOMEM, "out of memory creating router");
}

void fs_router_free(fs_router *r) {
  if (!r) return;
  if (r->table)
    for (int32_t v = 0; v < r->t->n_nodes; v++) free(r->table[v]);
  fs__u64map_free(&r->mid_of);
  FS__FREE_ALL(r->mids, r->mid_links, r->mid_w);
  FS__FREE_ALL(r->table, r->sw, r->plan, r->via_start, r->via, r->fwd, r->back, r->lat, r->stamp,
               r->layer_nodes, r->dag_links, r);
}

/* Distance table towards non-host d over the non-hosts, built on first
 * use. NULL on out of memory. */
static const uint16_t *table_to(fs_router *r, int32_t d) {
  if (r->table[d]) return r->table[d];
  const fs_topo *t = r->t;
  uint16_t *dist = fs__malloc((size_t)r->n_sw, sizeof(*dist));
  int32_t *queue = fs__malloc((size_t)r->n_sw, sizeof(*queue));
  if (!dist || !queue) {
    free(dist);
    free(queue);
    return NULL;
  }
  memset(dist, 0xFF, (size_t)r->n_sw * sizeof(*dist));
  size_t head = 0, tail = 0;
  dist[r->sw[d]] = 0;
  queue[tail++] = d;
  while (head < tail) {
    int32_t u = queue[head++];
    uint16_t du = dist[r->sw[u]];
    if (du >= UNREACH - 1) continue;
    for (int32_t i = t->out_start[u]; i < t->out_start[u + 1]; i++) {
      int32_t w = t->links[t->out_links[i]].to; /* w -> u is the reverse link */
      int32_t k = r->sw[w];
      if (k < 0 || dist[k] != UNREACH) continue; /* hosts: on demand (tab_at) */
      dist[k] = (uint16_t)(du + 1);
      queue[tail++] = w;
    }
  }
  free(queue);
  r->table[d] = dist;
  return dist;
}

/* tab's distance for node v: a non-host's entry; for a host, one more than
 * its nearest neighbour's (it cannot forward, so its paths start with one
 * of its links). UNREACH if none. */
static uint16_t tab_at(const fs_router *r, const uint16_t *tab, int32_t v) {
  if (r->sw[v] >= 0) return tab[r->sw[v]];
  const fs_topo *t = r->t;
  uint16_t best = UNREACH;
  for (int32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++) {
    int32_t k = r->sw[t->links[t->out_links[i]].to];
    if (k >= 0 && tab[k] < UNREACH - 1 && tab[k] + 1 < best) best = (uint16_t)(tab[k] + 1);
  }
  return best;
}

/* Whether host v has a link to d. Hosts have few links (1 or 2 in every
 * family), so a scan is cheap. */
static int cabled(const fs_topo *t, int32_t v, int32_t d) {
  for (int32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++)
    if (t->links[t->out_links[i]].to == d) return 1;
  return 0;
}

/* dist(v, d) in hops, -1 if unreachable, -2 on out of memory. */
static int32_t dist_to(fs_router *r, int32_t v, int32_t d) {
  if (v == d) return 0;
  if (r->plan[d] == PLAN_TABLE) {
    const uint16_t *tab = table_to(r, d);
    if (!tab) return -2;
    uint16_t x = tab_at(r, tab, v);
    return x == UNREACH ? -1 : (int32_t)x;
  }
  const fs_topo *t = r->t;
  if (r->plan[d] == PLAN_VIA_HOSTS && t->nodes[v].kind == FS_NODE_HOST && cabled(t, v, d))
    return 1;
  int32_t best = -1;
  for (int32_t i = r->via_start[d]; i < r->via_start[d + 1]; i++) {
    int32_t dw = dist_to(r, v, r->via[i]);
    if (dw == -2) return -2;
    if (dw >= 0 && (best < 0 || dw + 1 < best)) best = dw + 1;
  }
  return best;
}

int32_t fs_route_dist(fs_router *r, int32_t from, int32_t to) {
  int32_t dd = dist_to(r, from, to);
  return dd < 0 ? -1 : dd;
}

static int check_pair(fs_router *r, int32_t src, int32_t dst, int32_t *hops,
                      fs_err *err) {
  const fs_topo *t = r->t;
  if (src < 0 || src >= t->n_nodes || dst < 0 || dst >= t->n_nodes)
    return fs_err_set(err, FS_EINVAL, "node out of range: %d -> %d (nodes: %d)",
                      src, dst, t->n_nodes);
  if (src == dst)
    return fs_err_set(err, FS_EINVAL, "source and destination are the same node (%d)",
                      src);
  int32_t dd = dist_to(r, src, dst);
  if (dd == -2) return fs_err_set(err, FS_ENOMEM, "out of memory routing");
  if (dd < 0)
    return fs_err_set(err, FS_EINVAL, "no path from node %d to node %d", src, dst);
  *hops = dd;
  return 0;
}

/* dist(., d) for the non-hosts a path walks through, resolved once per
 * route: the minimum over table lookups tab[v] + off and exact nodes
 * (v == node: hops), which is what dist_to's recursion amounts to when v is
 * not a host. A destination needing more terms than fit uses dist_to. */
enum { MAX_TERMS = 8 };
typedef struct target {
  int32_t d;
  int32_t n_tab, n_node; /* n_tab < 0: use dist_to */
  const uint16_t *tab[MAX_TERMS];
  int32_t tab_off[MAX_TERMS];
  int32_t node[MAX_TERMS], node_hops[MAX_TERMS];
} target;

/* Fills *tg for destination d; 0 or FS_ENOMEM. */
static int resolve(fs_router *r, int32_t d, target *tg) {
  tg->d = d;
  tg->n_tab = tg->n_node = 0;
  if (r->plan[d] == PLAN_TABLE) {
    if (!(tg->tab[0] = table_to(r, d))) return FS_ENOMEM;
    tg->tab_off[0] = 0;
    tg->n_tab = 1;
    return 0;
  }
  for (int32_t i = r->via_start[d]; i < r->via_start[d + 1]; i++) {
    int32_t w = r->via[i];
    if (r->plan[w] == PLAN_TABLE) {
      if (tg->n_tab == MAX_TERMS) goto general;
      if (!(tg->tab[tg->n_tab] = table_to(r, w))) return FS_ENOMEM;
      tg->tab_off[tg->n_tab++] = 1;
      continue;
    }
    if (tg->n_node == MAX_TERMS) goto general;
    tg->node[tg->n_node] = w;
    tg->node_hops[tg->n_node++] = 1;
    for (int32_t j = r->via_start[w]; j < r->via_start[w + 1]; j++) {
      if (tg->n_tab == MAX_TERMS) goto general;
      /* w's forwarders all have tables (plan_nodes) */
      if (!(tg->tab[tg->n_tab] = table_to(r, r->via[j]))) return FS_ENOMEM;
      tg->tab_off[tg->n_tab++] = 2;
    }
  }
  return 0;
general:
  tg->n_tab = -1;
  return 0;
}

/* dist(v, tg->d) for v == d or a non-host v; -1 if unreachable. */
static int32_t dist_fast(fs_router *r, const target *tg, int32_t v) {
  if (v == tg->d) return 0;
  if (tg->n_tab < 0) return dist_to(r, v, tg->d);
  int32_t best = -1;
  for (int32_t i = 0; i < tg->n_tab; i++) {
    uint16_t x = tab_at(r, tg->tab[i], v);
    if (x != UNREACH && (best < 0 || x + tg->tab_off[i] < best)) best = x + tg->tab_off[i];
  }
  for (int32_t i = 0; i < tg->n_node; i++)
    if (v == tg->node[i] && (best < 0 || tg->node_hops[i] < best)) best = tg->node_hops[i];
  return best;
}

/* Next-hop test: link l leads one hop closer to the target (h hops away)
 * and does not forward through a host. */
static int is_next_hop(fs_router *r, const target *tg, int32_t l, int32_t h) {
  int32_t w = r->t->links[l].to;
  if (w != tg->d && r->t->nodes[w].kind == FS_NODE_HOST) return 0;
  return dist_fast(r, tg, w) == h - 1;
}

/* Walks one shortest path. At each hop the candidates are the next-hop links
 * in link id order; `hashed` picks hash(seed, key, node) mod their count
 * (ECMP), otherwise the first (deterministic shortest path). */
static int walk(fs_router *r, int32_t src, int32_t dst, int32_t hops,
                uint64_t seed, uint64_t key, int hashed, fs_route *out) {
  const fs_topo *t = r->t;
  target tg;
  if (resolve(r, dst, &tg)) return FS_ENOMEM;
  out->n = 0;
  out->latency_ns = 0;
  int32_t v = src;
  for (int32_t h = hops; h > 0; h--) {
    int32_t m = 0;
    for (int32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++)
      m += is_next_hop(r, &tg, t->out_links[i], h);
    if (m == 0) return FS_EINTERNAL;
    int32_t pick = 0;
    if (hashed && m > 1)
      pick = (int32_t)(fs__mix64(seed ^ fs__mix64(key ^ fs__mix64((uint64_t)v))) % (uint64_t)m);
    int32_t l = -1;
    for (int32_t i = t->out_start[v]; l < 0; i++)
      if (is_next_hop(r, &tg, t->out_links[i], h) && pick-- == 0) l = t->out_links[i];
    if (route_push(out, l, 1.0)) return FS_ENOMEM;
    out->latency_ns += t->links[l].latency_ns;
    v = t->links[l].to;
  }
  out->hops = hops;
  out->n_paths = 1;
  return 0;
}

int fs_route_shortest(fs_router *r, int32_t src, int32_t dst, fs_route *out,
                      fs_err *err) {
  int32_t hops;
  int rc = check_pair(r, src, dst, &hops, err);
  if (rc) return rc;
  rc = walk(r, src, dst, hops, 0, 0, 0, out);
  if (rc) return fs_err_set(err, rc, "routing %d -> %d: %s", src, dst, fs_strerror(rc));
  return 0;
}

int fs_route_ecmp(fs_router *r, int32_t src, int32_t dst, uint64_t seed,
                  uint64_t key, fs_route *out, fs_err *err) {
  int32_t hops;
  int rc = check_pair(r, src, dst, &hops, err);
  if (rc) return rc;
  rc = walk(r, src, dst, hops, seed, key, 1, out);
  if (rc) return fs_err_set(err, rc, "routing %d -> %d: %s", src, dst, fs_strerror(rc));
  return 0;
}

/* Builds the shortest-path DAG from src to dst: fills r->dag_links (in layer
 * order, then link id), fwd/back path counts and the longest latency. */
static int build_dag(fs_router *r, int32_t src, int32_t dst, int32_t hops,
                     size_t *n_dag, double *total, int64_t *latency) {
  const fs_topo *t = r->t;
  target tg;
  if (resolve(r, dst, &tg)) return FS_ENOMEM;
  if (++r->epoch == 0) {
    memset(r->stamp, 0, (size_t)t->n_nodes * sizeof(*r->stamp));
    r->epoch = 1;
  }
  size_t nd = 0;
  int32_t lo = 0, hi = 1; /* current layer = layer_nodes[lo, hi) */
  r->layer_nodes[0] = src;
  r->stamp[src] = r->epoch;
  r->fwd[src] = 1;
  r->lat[src] = 0;
  for (int32_t h = hops; h > 0; h--) {
    int32_t next_hi = hi;
    for (int32_t k = lo; k < hi; k++) {
      int32_t v = r->layer_nodes[k];
      for (int32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++) {
        int32_t l = t->out_links[i];
        int32_t w = t->links[l].to;
        if (!is_next_hop(r, &tg, l, h)) continue;
        if (fs__grow(&r->dag_links, &r->dag_cap, nd + 1, sizeof(int32_t)))
          return FS_ENOMEM;
        r->dag_links[nd++] = l;
        if (r->stamp[w] != r->epoch) {
          r->stamp[w] = r->epoch;
          r->fwd[w] = 0;
          r->lat[w] = 0;
          r->layer_nodes[next_hi++] = w;
        }
        r->fwd[w] += r->fwd[v];
        int64_t lw = r->lat[v] + t->links[l].latency_ns;
        if (lw > r->lat[w]) r->lat[w] = lw;
      }
    }
    lo = hi;
    hi = next_hi;
  }
  /* Backward counts: every DAG node reaches dst; walk links in reverse. */
  for (int32_t k = 0; k < hi; k++) r->back[r->layer_nodes[k]] = 0;
  r->back[dst] = 1;
  for (size_t i = nd; i-- > 0;) {
    const fs_link *lk = &t->links[r->dag_links[i]];
    r->back[lk->from] += r->back[lk->to];
  }
  *n_dag = nd;
  *total = r->fwd[dst];
  *latency = r->lat[dst];
  return 0;
}

double fs_route_count_paths(fs_router *r, int32_t src, int32_t dst) {
  int32_t hops;
  if (check_pair(r, src, dst, &hops, NULL)) return 0;
  size_t nd;
  double total;
  int64_t lat;
  if (build_dag(r, src, dst, hops, &nd, &total, &lat)) return 0;
  return total;
}

/* The one node host h is cabled to (once), or -1. */
static int32_t only_switch(const fs_topo *t, int32_t h) {
  if (t->nodes[h].kind != FS_NODE_HOST || t->out_start[h + 1] - t->out_start[h] != 1) return -1;
  int32_t a = t->links[t->out_links[t->out_start[h]]].to;
  return t->nodes[a].kind == FS_NODE_HOST ? -1 : a;
}

/* Memory the memo may take (links and weights): past it, routes are
 * computed whole, as before (the same routes). */
#define SPRAY_MEMO_MAX_ENTRIES ((size_t)8 << 20)

/* Spraying from a host cabled once to switch a to a host cabled once from
 * switch b: every path is src -> a, a path of the DAG from a to b, b ->
 * dst. The full DAG's layers are src, a, then exactly the a -> b DAG's
 * (in the same discovery order), then dst; its forward counts are the a
 * -> b DAG's (one way to a), its backward counts too (one way from b), its
 * total the same, so each link's weight fwd x back / total is the same
 * double, and src -> a and b -> dst get total / total = 1. Memoised per
 * (a, b): a 131,072-GPU Clos has ~125 links a route and far fewer switch
 * pairs than host pairs. Returns 1 with out filled, 0 when the memo does
 * not apply (or is full), or a negative code. */
static int spray_composed(fs_router *r, int32_t src, int32_t dst, int32_t hops, fs_route *out) {
  const fs_topo *t = r->t;
  int32_t a = only_switch(t, src), b = only_switch(t, dst);
  if (a < 0 || b < 0 || hops < 2) return 0;
  int32_t la = t->out_links[t->out_start[src]], lb = -1;
  for (int32_t i = t->out_start[b]; i < t->out_start[b + 1] && lb < 0; i++)
    if (t->links[t->out_links[i]].to == dst) lb = t->out_links[i];
  if (lb < 0) return 0;
  uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
  int32_t idx;
  if (!fs__u64map_get(&r->mid_of, key, &idx)) {
    size_t nd = 0;
    double total = 1;
    int64_t lat = 0;
    if (a != b && build_dag(r, a, b, hops - 2, &nd, &total, &lat)) return FS_ENOMEM;
    if (r->mid_len + nd > SPRAY_MEMO_MAX_ENTRIES || r->n_mids >= INT32_MAX) return 0;
    if (fs__grow(&r->mids, &r->mids_cap, r->n_mids + 1, sizeof(*r->mids)) ||
        fs__grow(&r->mid_links, &r->mid_cap, r->mid_len + nd + 1, sizeof(int32_t)))
      return FS_ENOMEM;
    double *w = realloc(r->mid_w, r->mid_cap * sizeof(double));
    if (!w) return FS_ENOMEM;
    r->mid_w = w;
    for (size_t i = 0; i < nd; i++) {
      int32_t l = r->dag_links[i];
      const fs_link *lk = &t->links[l];
      r->mid_links[r->mid_len + i] = l;
      r->mid_w[r->mid_len + i] = r->fwd[lk->from] * r->back[lk->to] / total;
    }
    idx = (int32_t)r->n_mids;
    if (fs__u64map_put(&r->mid_of, key, idx)) return FS_ENOMEM;
    r->mids[r->n_mids++] = (spray_mid){r->mid_len, (int32_t)nd, total, lat};
    r->mid_len += nd;
  }
  const spray_mid *m = &r->mids[idx];
  out->n = 0;
  if (route_push(out, la, m->total / m->total)) return FS_ENOMEM;
  for (int32_t i = 0; i < m->n; i++)
    if (route_push(out, r->mid_links[m->off + (size_t)i], r->mid_w[m->off + (size_t)i]))
      return FS_ENOMEM;
  if (route_push(out, lb, m->total / m->total)) return FS_ENOMEM;
  out->hops = hops;
  out->n_paths = m->total;
  out->latency_ns = t->links[la].latency_ns + m->lat + t->links[lb].latency_ns;
  return 1;
}

static int sirius_spray(fs_router *r, int32_t src, int32_t dst, fs_route *out, fs_err *err);

int fs_route_spray(fs_router *r, int32_t src, int32_t dst, fs_route *out,
                   fs_err *err) {
  if (is_family(r->t, "sirius")) return sirius_spray(r, src, dst, out, err);
  int32_t hops;
  int rc = check_pair(r, src, dst, &hops, err);
  if (rc) return rc;
  if ((rc = spray_composed(r, src, dst, hops, out)) < 0)
    return fs_err_set(err, rc, "out of memory routing");
  if (rc) return 0;
  size_t nd;
  double total;
  int64_t lat;
  if (build_dag(r, src, dst, hops, &nd, &total, &lat))
    return fs_err_set(err, FS_ENOMEM, "out of memory routing");
  out->n = 0;
  for (size_t i = 0; i < nd; i++) {
    int32_t l = r->dag_links[i];
    const fs_link *lk = &r->t->links[l];
    double w = r->fwd[lk->from] * r->back[lk->to] / total;
    if (route_push(out, l, w)) return fs_err_set(err, FS_ENOMEM, "out of memory routing");
  }
  out->hops = hops;
  out->n_paths = total;
  out->latency_ns = lat;
  return 0;
}

/* The out-link of node u to node v (-1 if none). */
static int32_t link_to(const fs_topo *t, int32_t u, int32_t v) {
  for (int32_t k = t->out_start[u]; k < t->out_start[u + 1]; k++)
    if (t->links[t->out_links[k]].to == v) return t->out_links[k];
  return -1;
}

int fs_route_explicit(fs_router *r, const int32_t *nodes, int32_t n,
                      fs_route *out, fs_err *err) {
  const fs_topo *t = r->t;
  if (n < 2) return fs_err_set(err, FS_EINVAL, "a path needs at least two nodes");
  out->n = 0;
  out->latency_ns = 0;
  for (int32_t i = 0; i < n; i++)
    if (nodes[i] < 0 || nodes[i] >= t->n_nodes)
      return fs_err_set(err, FS_EINVAL, "path node %d is out of range [0, %d)", nodes[i],
                        t->n_nodes);
  for (int32_t i = 0; i + 1 < n; i++) {
    int32_t u = nodes[i], w = nodes[i + 1];
    if (i > 0 && t->nodes[u].kind == FS_NODE_HOST)
      return fs_err_set(err, FS_EINVAL, "path forwards through host %d (hosts do not forward)",
                        u);
    int32_t found = link_to(t, u, w);
    if (found < 0)
      return fs_err_set(err, FS_EINVAL, "no link from node %d to node %d (path step %d)",
                        u, w, i);
    for (int32_t j = 0; j < out->n; j++)
      if (out->links[j] == found)
        return fs_err_set(err, FS_EINVAL, "path uses the link %d -> %d twice", u, w);
    if (route_push(out, found, 1.0)) return fs_err_set(err, FS_ENOMEM, "out of memory");
    out->latency_ns += t->links[found].latency_ns;
  }
  out->hops = n - 1;
  out->n_paths = 1;
  return 0;
}

int32_t fs_route_nodes(const fs_topo *t, const fs_route *route, int32_t *nodes) {
  if (route->n_paths != 1 || route->n != route->hops || route->n == 0) return -1;
  nodes[0] = t->links[route->links[0]].from;
  for (int32_t i = 0; i < route->n; i++) nodes[i + 1] = t->links[route->links[i]].to;
  return route->n + 1;
}

/* ---- family-aware routing: torus dimension order, dragonfly -------------------
 * Both build the node walk from the family's layout (src/topo/zoo.c) and hand
 * it to fs_route_explicit, so the route carries the same fields as any other
 * single path. O(path length) for the torus; O(a * router degree) for the
 * dragonfly (the global links of a group are found by scanning its routers). */

static uint64_t dfly_mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/* The fabric switch a host hangs off (through its NIC if it has one), or -1. */
static int32_t host_switch(const fs_topo *t, int32_t h) {
  for (int32_t i = t->out_start[h]; i < t->out_start[h + 1]; i++) {
    int32_t w = t->links[t->out_links[i]].to;
    if (t->nodes[w].kind == FS_NODE_SWITCH) return w;
    if (t->nodes[w].kind != FS_NODE_NIC) continue;
    for (int32_t j = t->out_start[w]; j < t->out_start[w + 1]; j++) {
      int32_t x = t->links[t->out_links[j]].to;
      if (t->nodes[x].kind == FS_NODE_SWITCH) return x;
    }
  }
  return -1;
}

/* The NIC between host h and switch sw, or -1 if h is cabled to sw itself. */
static int32_t host_nic(const fs_topo *t, int32_t h, int32_t sw) {
  for (int32_t i = t->out_start[h]; i < t->out_start[h + 1]; i++) {
    int32_t w = t->links[t->out_links[i]].to;
    if (w == sw) return -1;
    if (t->nodes[w].kind != FS_NODE_NIC) continue;
    for (int32_t j = t->out_start[w]; j < t->out_start[w + 1]; j++)
      if (t->links[t->out_links[j]].to == sw) return w;
  }
  return -1;
}

static int check_hosts(const fs_topo *t, const char *family, int32_t src, int32_t dst,
                       fs_err *err) {
  if (strcmp(t->family, family) != 0 || strncmp(t->spec, family, strlen(family)) != 0)
    return fs_err_set(err, FS_EINVAL, "%s routing needs a %s topology, got %s", family,
                      family, t->spec[0] ? t->spec : t->family);
  if (src < 0 || src >= t->n_hosts || dst < 0 || dst >= t->n_hosts || src == dst)
    return fs_err_set(err, FS_EINVAL, "route %d -> %d: need two distinct hosts in [0, %d)",
                      src, dst, t->n_hosts);
  return 0;
}

int fs_route_torus_dor(fs_router *r, int32_t src, int32_t dst, fs_route *out, fs_err *err) {
  const fs_topo *t = r->t;
  int rc = check_hosts(t, "torus", src, dst, err);
  if (rc && strcmp(t->family, "ring") == 0) rc = check_hosts(t, "ring", src, dst, err);
  /* sipml-ocs: the torus layout (zoo_optical.c) */
  if (rc && strcmp(t->family, "sipml-ocs") == 0) rc = check_hosts(t, "sipml-ocs", src, dst, err);
  if (rc) return rc;
  int32_t len = 2, cap = 4;
  for (int32_t d = 0; d < t->n_dims; d++) cap += t->dims[d] / 2 + 1;
  int32_t *walk_nodes = malloc((size_t)cap * sizeof(int32_t));
  if (!walk_nodes) return fs_err_set(err, FS_ENOMEM, "out of memory");
  int32_t r0 = t->n_hosts, cur = src, stride = t->n_hosts;
  walk_nodes[0] = src;
  walk_nodes[1] = r0 + src;
  for (int32_t d = 0; d < t->n_dims; d++) {
    int32_t k = t->dims[d];
    stride /= k;
    int32_t xs = (cur / stride) % k, xd = (dst / stride) % k;
    int32_t fwd = ((xd - xs) % k + k) % k;
    /* The shorter way round; ties (k/2 apart) go the + way. */
    int32_t step = fwd <= k - fwd ? 1 : -1, n = fwd <= k - fwd ? fwd : k - fwd;
    for (int32_t i = 0; i < n; i++) {
      int32_t x = (cur / stride) % k, nx = ((x + step) % k + k) % k;
      cur += (nx - x) * stride;
      walk_nodes[len++] = r0 + cur;
    }
  }
  walk_nodes[len++] = dst;
  rc = fs_route_explicit(r, walk_nodes, len, out, err);
  free(walk_nodes);
  return rc;
}

/* Picks one global cable from a router of group gs to a router of group gd,
 * preferring those that spare local hops at either end (from router rs, to
 * router rd), among equals by hash h. Fills *u (in gs) and *v (in gd);
 * returns 0, or -1 if the groups are not cabled. */
static int dfly_global(const fs_topo *t, int32_t gs, int32_t gd, int32_t rs, int32_t rd,
                       uint64_t h, int32_t *u, int32_t *v) {
  int32_t best = 99, count = 0;
  for (int pass = 0; pass < 2; pass++) {
    int32_t seen = 0, pick = count ? (int32_t)(h % (uint64_t)count) : 0;
    for (int32_t x = t->n_hosts; x < t->n_nodes; x++) {
      if (t->nodes[x].kind != FS_NODE_SWITCH || t->nodes[x].group != gs) continue;
      for (int32_t i = t->out_start[x]; i < t->out_start[x + 1]; i++) {
        int32_t y = t->links[t->out_links[i]].to;
        if (t->nodes[y].kind != FS_NODE_SWITCH || t->nodes[y].group != gd) continue;
        int32_t cost = (x != rs) + (y != rd);
        if (pass == 0) {
          if (cost < best) best = cost, count = 0;
          if (cost == best) count++;
        } else if (cost == best && seen++ == pick) {
          *u = x;
          *v = y;
          return 0;
        }
      }
    }
    if (count == 0) return -1;
  }
  return -1;
}

int fs_route_dragonfly(fs_router *r, int32_t src, int32_t dst, int valiant, uint64_t seed,
                       uint64_t key, fs_route *out, fs_err *err) {
  const fs_topo *t = r->t;
  int rc = check_hosts(t, "dragonfly", src, dst, err);
  if (rc) return rc;
  int32_t G = t->gpus_per_node;
  if (G > 1 && t->scaleup0 >= 0 && src / G == dst / G) {
    int32_t s[3] = {src, t->scaleup0 + src / G, dst};
    return fs_route_explicit(r, s, 3, out, err);
  }
  int32_t rs = host_switch(t, src), rd = host_switch(t, dst);
  if (rs < 0 || rd < 0) return fs_err_set(err, FS_EINVAL, "dragonfly: host without a router");
  int32_t gs = t->nodes[rs].group, gd = t->nodes[rd].group, groups = 0;
  for (int32_t x = t->n_hosts; x < t->n_nodes; x++)
    if (t->nodes[x].kind == FS_NODE_SWITCH && t->nodes[x].group >= groups)
      groups = t->nodes[x].group + 1;
  uint64_t h = dfly_mix(seed ^ dfly_mix(key));
  int32_t w[12], n = 0, nic;
  w[n++] = src;
  if ((nic = host_nic(t, src, rs)) >= 0) w[n++] = nic;
  w[n++] = rs;
  int32_t at = rs;
  /* Valiant: first to a random group other than both ends (Kim et al. 2008,
   * after Valiant and Brebner); minimal when there is none. */
  if (valiant && gs != gd && groups > 2) {
    int32_t gi = (int32_t)(h % (uint64_t)(groups - 2)), u, v;
    if (gi >= (gs < gd ? gs : gd)) gi++;
    if (gi >= (gs < gd ? gd : gs)) gi++;
    if (dfly_global(t, gs, gi, at, -1, h >> 8, &u, &v))
      return fs_err_set(err, FS_EINVAL, "dragonfly: groups %d and %d are not cabled", gs, gi);
    if (u != at) w[n++] = u;
    w[n++] = v;
    at = v;
    gs = gi;
    h = dfly_mix(h);
  }
  if (gs != gd) {
    int32_t u, v;
    if (dfly_global(t, gs, gd, at, rd, h >> 16, &u, &v))
      return fs_err_set(err, FS_EINVAL, "dragonfly: groups %d and %d are not cabled", gs, gd);
    if (u != at) w[n++] = u;
    w[n++] = v;
    at = v;
  }
  if (at != rd) w[n++] = rd;
  if ((nic = host_nic(t, dst, rd)) >= 0) w[n++] = nic;
  w[n++] = dst;
  return fs_route_explicit(r, w, n, out, err);
}

/* Sirius (Ballani et al. 2020): host, its node, [a random third node,]
 * the destination's node, host. Valiant load balancing sends every cell
 * through an intermediate (uniform over the N - 2 others, seeded like
 * ECMP) so any traffic matrix looks uniform to the slot schedule, at most
 * doubling the node-to-node hops; minimal takes the direct slot. The
 * builder lays node i at n_hosts + i (zoo.c). */
int fs_route_sirius(fs_router *r, int32_t src, int32_t dst, int valiant, uint64_t seed,
                    uint64_t key, fs_route *out, fs_err *err) {
  const fs_topo *t = r->t;
  int rc = check_hosts(t, "sirius", src, dst, err);
  if (rc) return rc;
  int32_t n = t->n_hosts, w[5], k = 0;
  w[k++] = src;
  w[k++] = n + src;
  if (valiant && n > 2) {
    int32_t lo = src < dst ? src : dst, hi = src < dst ? dst : src;
    int32_t m = (int32_t)(dfly_mix(seed ^ dfly_mix(key)) % (uint64_t)(n - 2));
    if (m >= lo) m++;
    if (m >= hi) m++;
    w[k++] = n + m;
  }
  w[k++] = n + dst;
  w[k++] = dst;
  return fs_route_explicit(r, w, k, out, err);
}

/* Sirius's own load balancing, cell by cell (Ballani et al. 2020, spray on
 * a sirius fabric): every flow is spread evenly over the N - 1 ways from
 * its node to the destination's, the direct slot and each third node, so
 * each carries 1 / (N - 1) of it; any traffic matrix then loads the slots
 * as a uniform one does. A flow alone reaches its port rate; a permutation
 * half of it (its cells cross two slots). 2N - 1 links a route: costly
 * beyond a few hundred nodes. */
static int sirius_spray(fs_router *r, int32_t src, int32_t dst, fs_route *out, fs_err *err) {
  const fs_topo *t = r->t;
  int rc = check_hosts(t, "sirius", src, dst, err);
  if (rc) return rc;
  int32_t n = t->n_hosts, a = n + src, b = n + dst;
  double w = 1.0 / (n - 1);
  int32_t up = link_to(t, src, a), down = link_to(t, b, dst), direct = link_to(t, a, b);
  if (up < 0 || down < 0 || direct < 0)
    return fs_err_set(err, FS_EINVAL, "sirius: hosts %d and %d are not wired as the family is",
                      src, dst);
  out->n = 0;
  out->flow_orbit = 0;
  out->expanded = NULL;
  if (route_push(out, up, 1) || route_push(out, direct, w)) goto oom;
  for (int32_t m = 0; m < n; m++) {
    if (m == src || m == dst) continue;
    int32_t x = link_to(t, a, n + m), y = link_to(t, n + m, b);
    if (x < 0 || y < 0)
      return fs_err_set(err, FS_EINVAL, "sirius: node %d is not wired as the family is", m);
    if (route_push(out, x, w) || route_push(out, y, w)) goto oom;
  }
  if (route_push(out, down, 1)) goto oom;
  out->n_paths = n - 1;
  out->hops = n > 2 ? 4 : 3;
  out->latency_ns = t->links[up].latency_ns + t->links[down].latency_ns +
                    (n > 2 ? 2 : 1) * t->links[direct].latency_ns;
  return 0;
oom:
  return fs_err_set(err, FS_ENOMEM, "out of memory routing");
}

/* Lotus layout (zoo_optical.c): lower switch of group k, index x at lo0 +
 * k a + x, its upper switches a g nodes later; group i's optical cable to
 * group j on its upper switch ((j - i - 1) mod g) mod a. */
int fs_route_lotus(fs_router *r, int32_t src, int32_t dst, uint64_t seed, uint64_t key,
                   fs_route *out, fs_err *err) {
  const fs_topo *t = r->t;
  int rc = check_hosts(t, "lotus", src, dst, err);
  if (rc) return rc;
  int32_t G = t->gpus_per_node;
  if (G > 1 && t->scaleup0 >= 0 && src / G == dst / G) {
    int32_t s[3] = {src, t->scaleup0 + src / G, dst};
    return fs_route_explicit(r, s, 3, out, err);
  }
  int32_t ls = host_switch(t, src), ld = host_switch(t, dst);
  if (ls < 0 || ld < 0 || t->n_dims != 3)
    return fs_err_set(err, FS_EINVAL, "lotus: host without a lower switch");
  int32_t g = t->dims[0], a = t->dims[1];
  int32_t lo0 = ls - t->nodes[ls].index, up0 = lo0 + g * a;
  int32_t gs = t->nodes[ls].group, gd = t->nodes[ld].group;
  uint64_t h = dfly_mix(seed ^ dfly_mix(key));
  int32_t w[9], n = 0, nic;
  w[n++] = src;
  if ((nic = host_nic(t, src, ls)) >= 0) w[n++] = nic;
  w[n++] = ls;
  int32_t fwd = (gd - gs + g) % g, d = fwd < g - fwd ? fwd : g - fwd;
  if (ls != ld && gs == gd) {
    w[n++] = up0 + gs * a + (int32_t)(h % (uint64_t)a);
  } else if (d == 2) {
    int32_t via = fwd == 2 ? (gs + 1) % g : (gs - 1 + g) % g;
    w[n++] = lo0 + via * a + (int32_t)(h % (uint64_t)a);
  } else if (d >= 3) {
    w[n++] = up0 + gs * a + ((gd - gs - 1 + g) % g) % a;
    w[n++] = up0 + gd * a + ((gs - gd - 1 + 2 * g) % g) % a;
  }
  if (ld != ls) w[n++] = ld;
  if ((nic = host_nic(t, dst, ld)) >= 0) w[n++] = nic;
  w[n++] = dst;
  return fs_route_explicit(r, w, n, out, err);
}

int fs_route_railonly(fs_router *r, int32_t src, int32_t dst, fs_route *out, fs_err *err) {
  const fs_topo *t = r->t;
  int rc = check_hosts(t, "railonly", src, dst, err);
  if (rc) return rc;
  int32_t G = t->gpus_per_node, w[6], n = 0;
  if (G < 2 || t->nic0 < 0 || t->scaleup0 < 0)
    return fs_err_set(err, FS_EINVAL, "railonly routing needs GPU servers");
  w[n++] = src;
  if (src / G == dst / G) {
    w[n++] = t->scaleup0 + src / G;
  } else {
    /* Scale-up first: over NVLink to the server's NIC on dst's rail. */
    if (src % G != dst % G) w[n++] = t->scaleup0 + src / G;
    w[n++] = t->nic0 + (src / G) * G + dst % G;
    w[n++] = t->n_hosts + dst % G;
    w[n++] = t->nic0 + dst;
  }
  w[n++] = dst;
  return fs_route_explicit(r, w, n, out, err);
}
