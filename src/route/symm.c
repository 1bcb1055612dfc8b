/* Symmetry reduction (symm.h): extends host permutations to automorphisms
 * of the topology, verifies them, and computes link and node orbits of the
 * group they generate, for simulating one flow per orbit on a quotient.
 *
 * Data: per generator a node map and a link map (int32 each), per link and
 * node its orbit representative, id and size. The extension indexes every
 * non-host node by a class: (kind, tier, BFS distance from the hosts,
 * sorted multiset of its closer neighbours), found through a u64 map keyed
 * on a hash of that tuple with exact comparison on hits (probing on to the
 * next derived key on a collision). A node's image is looked up by hashing
 * the image of its own tuple, so each node costs O(deg log deg), and a
 * class keeps a cursor to its lowest unused member; the whole extension is
 * O((V + E) log deg) per generator, verification the same. Orbits: a
 * union-find over generator images with the lowest id as root. Nothing is
 * ever ordered by hash or address; results depend only on the input. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/symm.h"

struct fs_symm {
  const fs_topo *t;
  int32_t n_gens;
  int32_t *node_map; /* [g * n_nodes + v] */
  int32_t *link_map; /* [g * n_links + l] */
  int32_t *link_rep, *link_orbit;
  int32_t n_link_orbits;
  int64_t *orbit_size; /* by link orbit id */
  int32_t *node_rep;
  int32_t *node_osize; /* per node */
};

/* ---- the class index of non-host nodes ---- */
typedef struct ext {
  const fs_topo *t;
  int32_t *dist;               /* BFS hops from the hosts, -1 unreachable */
  int32_t *cl_start, *cl;      /* closer neighbours (one per link), sorted */
  int32_t *order;              /* non-host nodes by (distance, id), unreachable last */
  int32_t n_order;
  fs__u64map index;            /* probe key -> class */
  int32_t *cls;                /* class of each node (-1 hosts) */
  int32_t *class_start, *class_mem; /* members per class, increasing id */
  int32_t n_classes;
} ext;

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

static uint64_t key_hash(const fs_topo *t, int32_t x, int32_t d, const int32_t *list, int32_t n) {
  uint64_t h = fs__mix64(0x5ec7a11ull ^ (uint64_t)t->nodes[x].kind);
  h = fs__mix64(h ^ (uint64_t)(uint32_t)t->nodes[x].tier);
  h = fs__mix64(h ^ (uint64_t)(uint32_t)d);
  h = fs__mix64(h ^ (uint64_t)(uint32_t)n);
  for (int32_t i = 0; i < n; i++) h = fs__mix64(h ^ (uint64_t)(uint32_t)list[i]);
  return h;
}

static uint64_t next_probe(uint64_t k) { return fs__mix64(k + 0x9e3779b97f4a7c15ull); }

/* 1 if node y's class tuple is (kind and tier of x, distance d, list). */
static int same_key(const ext *e, int32_t y, int32_t x, int32_t d, const int32_t *list,
                    int32_t n) {
  const fs_node *a = &e->t->nodes[y], *b = &e->t->nodes[x];
  if (a->kind != b->kind || a->tier != b->tier || e->dist[y] != d) return 0;
  if (e->cl_start[y + 1] - e->cl_start[y] != n) return 0;
  return n == 0 || memcmp(e->cl + e->cl_start[y], list, (size_t)n * sizeof(int32_t)) == 0;
}

/* The class whose tuple is (kind and tier of x, d, list), or -1. */
static int32_t class_find(const ext *e, int32_t x, int32_t d, const int32_t *list, int32_t n,
                          uint64_t *free_key) {
  uint64_t k = key_hash(e->t, x, d, list, n);
  for (;;) {
    int32_t c;
    if (!fs__u64map_get(&e->index, k, &c)) {
      if (free_key) *free_key = k;
      return -1;
    }
    if (same_key(e, e->class_mem[e->class_start[c]], x, d, list, n)) return c;
    k = next_probe(k);
  }
}

static void ext_free(ext *e) {
  FS__FREE_ALL(e->dist, e->cl_start, e->cl, e->order);
  fs__u64map_free(&e->index);
  FS__FREE_ALL(e->cls, e->class_start, e->class_mem);
}

/* Distances, closer-neighbour lists, the processing order and the classes.
 * 0 or FS_ENOMEM (e then holds what was allocated; ext_free frees it). */
static int ext_build(ext *e, const fs_topo *t) {
  int32_t V = t->n_nodes, E = t->n_links;
  memset(e, 0, sizeof(*e));
  e->t = t;
  fs__u64map_init(&e->index);
  int32_t *adj_start = fs__calloc((size_t)V + 1, sizeof(int32_t));
  int32_t *adj = fs__malloc((size_t)2 * E + 1, sizeof(int32_t));
  int32_t *fill = fs__malloc((size_t)V + 1, sizeof(int32_t));
  e->dist = fs__malloc((size_t)V + 1, sizeof(int32_t));
  e->cl_start = fs__calloc((size_t)V + 1, sizeof(int32_t));
  e->cl = fs__malloc((size_t)2 * E + 1, sizeof(int32_t));
  e->order = fs__malloc((size_t)V + 1, sizeof(int32_t));
  e->cls = fs__malloc((size_t)V + 1, sizeof(int32_t));
  e->class_start = fs__calloc((size_t)V + 2, sizeof(int32_t));
  e->class_mem = fs__malloc((size_t)V + 1, sizeof(int32_t));
  int rc = FS_ENOMEM;
  if (!adj_start || !adj || !fill || !e->dist || !e->cl_start || !e->cl || !e->order ||
      !e->cls || !e->class_start || !e->class_mem)
    goto done;
  /* Undirected adjacency, one entry per link end, so parallel cables count
   * with their multiplicity and links without a reverse still connect. */
  for (int32_t l = 0; l < E; l++) {
    adj_start[t->links[l].from + 1]++;
    adj_start[t->links[l].to + 1]++;
  }
  for (int32_t v = 0; v < V; v++) adj_start[v + 1] += adj_start[v];
  memcpy(fill, adj_start, (size_t)V * sizeof(int32_t));
  for (int32_t l = 0; l < E; l++) {
    adj[fill[t->links[l].from]++] = t->links[l].to;
    adj[fill[t->links[l].to]++] = t->links[l].from;
  }
  /* Multi-source BFS from the hosts; fill doubles as the queue. */
  int32_t qh = 0, qt = 0;
  for (int32_t v = 0; v < V; v++) e->dist[v] = v < t->n_hosts ? 0 : -1;
  for (int32_t h = 0; h < t->n_hosts; h++) fill[qt++] = h;
  while (qh < qt) {
    int32_t u = fill[qh++];
    for (int32_t i = adj_start[u]; i < adj_start[u + 1]; i++)
      if (e->dist[adj[i]] < 0) {
        e->dist[adj[i]] = e->dist[u] + 1;
        fill[qt++] = adj[i];
      }
  }
  /* BFS order is by distance; ties by id for determinism (a stable counting
   * sort on distance over ids), unreachable nodes last. */
  int32_t maxd = 0;
  for (int32_t v = 0; v < V; v++)
    if (e->dist[v] > maxd) maxd = e->dist[v];
  int32_t *bucket = fs__calloc((size_t)maxd + 3, sizeof(int32_t));
  if (!bucket) goto done;
  for (int32_t v = t->n_hosts; v < V; v++) bucket[(e->dist[v] < 0 ? maxd + 1 : e->dist[v]) + 1]++;
  for (int32_t d = 0; d <= maxd + 1; d++) bucket[d + 1] += bucket[d];
  for (int32_t v = t->n_hosts; v < V; v++)
    e->order[bucket[e->dist[v] < 0 ? maxd + 1 : e->dist[v]]++] = v;
  e->n_order = V - t->n_hosts;
  free(bucket);
  /* Closer neighbours: those one hop nearer the hosts. */
  for (int32_t v = 0; v < V; v++) {
    int32_t n = 0;
    if (e->dist[v] > 0)
      for (int32_t i = adj_start[v]; i < adj_start[v + 1]; i++)
        if (e->dist[adj[i]] == e->dist[v] - 1) n++;
    e->cl_start[v + 1] = e->cl_start[v] + n;
  }
  for (int32_t v = 0; v < V; v++) {
    int32_t k = e->cl_start[v];
    if (e->dist[v] > 0)
      for (int32_t i = adj_start[v]; i < adj_start[v + 1]; i++)
        if (e->dist[adj[i]] == e->dist[v] - 1) e->cl[k++] = adj[i];
    qsort(e->cl + e->cl_start[v], (size_t)(k - e->cl_start[v]), sizeof(int32_t), cmp_i32);
  }
  /* Classes, numbered in order of their lowest member. */
  for (int32_t v = 0; v < V; v++) {
    e->cls[v] = -1;
    if (v < t->n_hosts) continue;
    const int32_t *list = e->cl + e->cl_start[v];
    int32_t n = e->cl_start[v + 1] - e->cl_start[v];
    uint64_t key = 0;
    /* class_find compares with a class's first member: class_mem[class_start]
     * holds it as soon as the class exists (first members are written
     * below, the rest after counting). */
    int32_t c = class_find(e, v, e->dist[v], list, n, &key);
    if (c < 0) {
      c = e->n_classes++;
      if (fs__u64map_put(&e->index, key, c)) goto done;
      e->class_start[c] = c; /* provisional: first member at class_mem[c] */
      e->class_mem[c] = v;
    }
    e->cls[v] = c;
  }
  /* Now lay the members out by class (ids increasing within each). */
  for (int32_t c = 0; c <= e->n_classes; c++) e->class_start[c] = 0;
  for (int32_t v = t->n_hosts; v < V; v++) e->class_start[e->cls[v] + 1]++;
  for (int32_t c = 0; c < e->n_classes; c++) e->class_start[c + 1] += e->class_start[c];
  memcpy(fill, e->class_start, (size_t)e->n_classes * sizeof(int32_t));
  for (int32_t v = t->n_hosts; v < V; v++) e->class_mem[fill[e->cls[v]]++] = v;
  rc = 0;
done:
  FS__FREE_ALL(adj_start, adj, fill);
  return rc;
}

/* ---- extension and verification of one generator ---- */
typedef struct tup {
  int32_t to, id;
  double cap;
  int64_t lat;
} tup;

static int cmp_tup(const void *a, const void *b) {
  const tup *x = a, *y = b;
  if (x->to != y->to) return (x->to > y->to) - (x->to < y->to);
  if (x->cap != y->cap) return (x->cap > y->cap) - (x->cap < y->cap);
  if (x->lat != y->lat) return (x->lat > y->lat) - (x->lat < y->lat);
  return (x->id > y->id) - (x->id < y->id);
}

static int tup_key_eq(const tup *x, const tup *y) {
  return x->to == y->to && x->cap == y->cap && x->lat == y->lat;
}

typedef struct scratch {
  int32_t *list;     /* image of a closer-neighbour list */
  uint8_t *used;     /* node already an image */
  int32_t *cursor;   /* per class: first member not known to be used */
  int32_t *inv;      /* host permutation inverse */
  tup *a, *b;        /* out-links of u (mapped) and of sigma(u) */
} scratch;

static int extend(const ext *e, scratch *sc, int32_t g, const int32_t *perm, int32_t *sigma,
                  int32_t *lmap, fs_err *err) {
  const fs_topo *t = e->t;
  int32_t V = t->n_nodes;
  char n1[64], n2[64], n3[64];
  for (int32_t v = 0; v < V; v++) {
    sigma[v] = -1;
    sc->used[v] = 0;
  }
  for (int32_t h = 0; h < t->n_hosts; h++) sc->inv[h] = -1;
  for (int32_t h = 0; h < t->n_hosts; h++) {
    int32_t y = perm[h];
    if (y < 0 || y >= t->n_hosts)
      return fs_err_set(err, FS_EINVAL,
                        "generator %d: image of host %d is %d, not a host (0..%d)", g, h, y,
                        t->n_hosts - 1);
    if (sc->inv[y] >= 0)
      return fs_err_set(err, FS_EINVAL,
                        "generator %d is not a permutation: hosts %d and %d both map to %d", g,
                        sc->inv[y], h, y);
    sc->inv[y] = h;
    sigma[h] = y;
    sc->used[y] = 1;
  }
  for (int32_t c = 0; c < e->n_classes; c++) sc->cursor[c] = e->class_start[c];
  for (int32_t i = 0; i < e->n_order; i++) {
    int32_t x = e->order[i];
    int32_t n = e->cl_start[x + 1] - e->cl_start[x];
    for (int32_t k = 0; k < n; k++) sc->list[k] = sigma[e->cl[e->cl_start[x] + k]];
    qsort(sc->list, (size_t)n, sizeof(int32_t), cmp_i32);
    int32_t c = class_find(e, x, e->dist[x], sc->list, n, NULL);
    int32_t y = -1;
    if (c >= 0) {
      if (e->cls[x] == c && !sc->used[x]) {
        y = x;
      } else {
        int32_t *cur = &sc->cursor[c];
        while (*cur < e->class_start[c + 1] && sc->used[e->class_mem[*cur]]) (*cur)++;
        if (*cur < e->class_start[c + 1]) y = e->class_mem[*cur];
      }
    }
    if (y < 0) {
      fs_topo_node_name(t, x, n1, sizeof(n1));
      n2[0] = '\0';
      if (n > 0) fs_topo_node_name(t, sc->list[0], n2, sizeof(n2));
      return fs_err_set(err, FS_EINVAL,
                        "no automorphism extends generator %d: node %s (tier %d, %d hops from "
                        "the hosts) has %s image: no node of its kind and tier is joined to "
                        "exactly the images of its %d nearer neighbours (first image: %s)",
                        g, n1, t->nodes[x].tier, e->dist[x], c < 0 ? "no" : "no unused", n,
                        n > 0 ? n2 : "none");
    }
    sigma[x] = y;
    sc->used[y] = 1;
  }
  /* Verify every node's out-links against its image's, as sorted tuples
   * (image endpoint, capacity, latency, id): parallel links pair in id
   * order. */
  for (int32_t u = 0; u < V; u++) {
    int32_t su = sigma[u];
    int32_t na = t->out_start[u + 1] - t->out_start[u];
    int32_t nb = t->out_start[su + 1] - t->out_start[su];
    for (int32_t k = 0; k < na; k++) {
      const fs_link *L = &t->links[t->out_links[t->out_start[u] + k]];
      sc->a[k] = (tup){sigma[L->to], t->out_links[t->out_start[u] + k], L->capacity_bps,
                       L->latency_ns};
    }
    for (int32_t k = 0; k < nb; k++) {
      const fs_link *L = &t->links[t->out_links[t->out_start[su] + k]];
      sc->b[k] = (tup){L->to, t->out_links[t->out_start[su] + k], L->capacity_bps, L->latency_ns};
    }
    qsort(sc->a, (size_t)na, sizeof(tup), cmp_tup);
    qsort(sc->b, (size_t)nb, sizeof(tup), cmp_tup);
    int32_t i = 0, j = 0;
    while (i < na) {
      if (j < nb && tup_key_eq(&sc->a[i], &sc->b[j])) {
        lmap[sc->a[i].id] = sc->b[j].id;
        i++;
        j++;
      } else if (j < nb && cmp_tup(&sc->a[i], &sc->b[j]) > 0) {
        j++; /* a link of the image with no preimage; some a[] will fail too */
      } else {
        const fs_link *L = &t->links[sc->a[i].id];
        fs_topo_node_name(t, u, n1, sizeof(n1));
        fs_topo_node_name(t, L->to, n2, sizeof(n2));
        fs_topo_node_name(t, su, n3, sizeof(n3));
        char n4[64];
        fs_topo_node_name(t, sigma[L->to], n4, sizeof(n4));
        return fs_err_set(err, FS_EINVAL,
                          "no automorphism extends generator %d: link %s->%s (%g Gb/s, %lld ns) "
                          "has no image from %s to %s with %g Gb/s",
                          g, n1, n2, L->capacity_bps / 1e9, (long long)L->latency_ns, n3, n4,
                          L->capacity_bps / 1e9);
      }
    }
    if (na != nb) {
      fs_topo_node_name(t, u, n1, sizeof(n1));
      fs_topo_node_name(t, su, n2, sizeof(n2));
      return fs_err_set(err, FS_EINVAL,
                        "no automorphism extends generator %d: node %s has %d out-links, its "
                        "image %s has %d",
                        g, n1, na, n2, nb);
    }
  }
  for (int32_t l = 0; l < t->n_links; l++) {
    int32_t r = t->links[l].reverse, ir = t->links[lmap[l]].reverse;
    if ((r < 0) != (ir < 0) || (r >= 0 && lmap[r] != ir)) {
      fs_topo_node_name(t, t->links[l].from, n1, sizeof(n1));
      fs_topo_node_name(t, t->links[l].to, n2, sizeof(n2));
      return fs_err_set(err, FS_EINVAL,
                        "no automorphism extends generator %d: link %d (%s->%s) and its "
                        "reverse do not map onto one cable",
                        g, l, n1, n2);
    }
  }
  return 0;
}

/* ---- orbits ---- */
static int32_t uf_find(int32_t *p, int32_t x) {
  while (p[x] != x) {
    p[x] = p[p[x]];
    x = p[x];
  }
  return x;
}

static void uf_union(int32_t *p, int32_t a, int32_t b) {
  a = uf_find(p, a);
  b = uf_find(p, b);
  if (a < b) p[b] = a;
  else if (b < a) p[a] = b;
}

void fs_symm_free(fs_symm *s) {
  if (!s) return;
  FS__FREE_ALL(s->node_map, s->link_map, s->link_rep, s->link_orbit, s->orbit_size, s->node_rep,
               s->node_osize, s);
}

int fs_symm_new(const fs_topo *t, const int32_t *const *host_perms, int32_t n_gens,
                fs_symm **out, fs_err *err) {
  if (!t || n_gens < 1 || !host_perms)
    return fs_err_set(err, FS_EINVAL, "symmetry needs a topology and at least one generator");
  for (int32_t g = 0; g < n_gens; g++)
    if (!host_perms[g]) return fs_err_set(err, FS_EINVAL, "generator %d is NULL", g);
  int32_t V = t->n_nodes, E = t->n_links;
  int32_t maxdeg = 1, maxcl = 1;
  for (int32_t v = 0; v < V; v++)
    if (t->out_start[v + 1] - t->out_start[v] > maxdeg) maxdeg = t->out_start[v + 1] - t->out_start[v];
  fs_symm *s = calloc(1, sizeof(*s));
  ext e;
  scratch sc = {0};
  int rc = FS_ENOMEM;
  if (!s) return fs_err_set(err, FS_ENOMEM, "out of memory building the symmetry");
  rc = ext_build(&e, t);
  if (rc) goto done;
  rc = FS_ENOMEM;
  for (int32_t v = 0; v < V; v++)
    if (e.cl_start[v + 1] - e.cl_start[v] > maxcl) maxcl = e.cl_start[v + 1] - e.cl_start[v];
  s->t = t;
  s->n_gens = n_gens;
  s->node_map = fs__malloc((size_t)n_gens * V + 1, sizeof(int32_t));
  s->link_map = fs__malloc((size_t)n_gens * E + 1, sizeof(int32_t));
  s->link_rep = fs__malloc((size_t)E + 1, sizeof(int32_t));
  s->link_orbit = fs__malloc((size_t)E + 1, sizeof(int32_t));
  s->node_rep = fs__malloc((size_t)V + 1, sizeof(int32_t));
  s->node_osize = fs__calloc((size_t)V + 1, sizeof(int32_t));
  sc.list = fs__malloc((size_t)maxcl, sizeof(int32_t));
  sc.used = fs__malloc((size_t)V + 1, 1);
  sc.cursor = fs__malloc((size_t)e.n_classes + 1, sizeof(int32_t));
  sc.inv = fs__malloc((size_t)t->n_hosts + 1, sizeof(int32_t));
  sc.a = fs__malloc((size_t)maxdeg, sizeof(tup));
  sc.b = fs__malloc((size_t)maxdeg, sizeof(tup));
  if (!s->node_map || !s->link_map || !s->link_rep || !s->link_orbit || !s->node_rep ||
      !s->node_osize || !sc.list || !sc.used || !sc.cursor || !sc.inv || !sc.a || !sc.b) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory building the symmetry");
    goto done;
  }
  for (int32_t g = 0; g < n_gens; g++) {
    rc = extend(&e, &sc, g, host_perms[g], s->node_map + (size_t)g * V,
                s->link_map + (size_t)g * E, err);
    if (rc) goto done;
  }
  /* Orbits of the generated group = connected components of the generator
   * images (the group is finite, so inverses are powers). */
  for (int32_t l = 0; l < E; l++) s->link_rep[l] = l;
  for (int32_t g = 0; g < n_gens; g++)
    for (int32_t l = 0; l < E; l++) uf_union(s->link_rep, l, s->link_map[(size_t)g * E + l]);
  for (int32_t l = 0; l < E; l++) s->link_rep[l] = uf_find(s->link_rep, l);
  for (int32_t l = 0; l < E; l++)
    s->link_orbit[l] = s->link_rep[l] == l ? s->n_link_orbits++ : s->link_orbit[s->link_rep[l]];
  s->orbit_size = fs__calloc((size_t)s->n_link_orbits + 1, sizeof(int64_t));
  if (!s->orbit_size) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory building the symmetry");
    goto done;
  }
  for (int32_t l = 0; l < E; l++) s->orbit_size[s->link_orbit[l]]++;
  for (int32_t v = 0; v < V; v++) s->node_rep[v] = v;
  for (int32_t g = 0; g < n_gens; g++)
    for (int32_t v = 0; v < V; v++) uf_union(s->node_rep, v, s->node_map[(size_t)g * V + v]);
  for (int32_t v = 0; v < V; v++) {
    s->node_rep[v] = uf_find(s->node_rep, v);
    s->node_osize[s->node_rep[v]]++;
  }
  for (int32_t v = 0; v < V; v++) s->node_osize[v] = s->node_osize[s->node_rep[v]];
  rc = 0;
done: /* success falls through with rc 0 */
  if (rc == FS_ENOMEM) fs_err_set(err, FS_ENOMEM, "out of memory building the symmetry");
  ext_free(&e);
  FS__FREE_ALL(sc.list, sc.used, sc.cursor, sc.inv, sc.a, sc.b);
  if (!rc) {
    *out = s;
    return 0;
  }
  fs_symm_free(s);
  return rc;
}

/* ---- accessors ---- */
const fs_topo *fs_symm_topo(const fs_symm *s) { return s->t; }
int32_t fs_symm_n_gens(const fs_symm *s) { return s->n_gens; }

int32_t fs_symm_node_image(const fs_symm *s, int32_t gen, int32_t node) {
  if (gen < 0 || gen >= s->n_gens || node < 0 || node >= s->t->n_nodes) return -1;
  return s->node_map[(size_t)gen * s->t->n_nodes + node];
}

int32_t fs_symm_link_image(const fs_symm *s, int32_t gen, int32_t link) {
  if (gen < 0 || gen >= s->n_gens || link < 0 || link >= s->t->n_links) return -1;
  return s->link_map[(size_t)gen * s->t->n_links + link];
}

int64_t fs_symm_link_orbit_size(const fs_symm *s, int32_t link) {
  if (link < 0 || link >= s->t->n_links) return 0;
  return s->orbit_size[s->link_orbit[link]];
}

int32_t fs_symm_link_rep(const fs_symm *s, int32_t link) {
  return link < 0 || link >= s->t->n_links ? -1 : s->link_rep[link];
}

int32_t fs_symm_link_orbit(const fs_symm *s, int32_t link) {
  return link < 0 || link >= s->t->n_links ? -1 : s->link_orbit[link];
}

int32_t fs_symm_n_link_orbits(const fs_symm *s) { return s->n_link_orbits; }

int64_t fs_symm_node_orbit_size(const fs_symm *s, int32_t node) {
  return node < 0 || node >= s->t->n_nodes ? 0 : s->node_osize[node];
}

int32_t fs_symm_node_rep(const fs_symm *s, int32_t node) {
  return node < 0 || node >= s->t->n_nodes ? -1 : s->node_rep[node];
}

/* ---- pair orbits ---- */
static uint64_t pair_key(int32_t a, int32_t b) {
  return (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
}

/* Appends the unseen pair (a, b) to the queue. 0 or FS_ENOMEM. */
static int pair_visit(fs__u64map *seen, uint64_t **q, size_t *qcap, size_t *qn, int32_t a,
                      int32_t b) {
  int32_t dummy;
  uint64_t k = pair_key(a, b);
  if (fs__u64map_get(seen, k, &dummy)) return 0;
  if (fs__u64map_put(seen, k, 1) || fs__grow(q, qcap, *qn + 1, sizeof(uint64_t)))
    return FS_ENOMEM;
  (*q)[(*qn)++] = k;
  return 0;
}

int64_t fs_symm_pair_orbit(const fs_symm *s, int32_t src, int32_t dst) {
  int32_t V = s->t->n_nodes;
  if (src < 0 || src >= V || dst < 0 || dst >= V) return -1;
  fs__u64map seen;
  fs__u64map_init(&seen);
  uint64_t *q = NULL;
  size_t qcap = 0, qn = 0;
  int64_t res = -1;
  if (pair_visit(&seen, &q, &qcap, &qn, src, dst)) goto done;
  for (size_t h = 0; h < qn; h++) {
    int32_t a = (int32_t)(q[h] >> 32), b = (int32_t)(uint32_t)q[h];
    for (int32_t g = 0; g < s->n_gens; g++)
      if (pair_visit(&seen, &q, &qcap, &qn, s->node_map[(size_t)g * V + a],
                     s->node_map[(size_t)g * V + b]))
        goto done;
  }
  res = (int64_t)qn;
done:
  free(q);
  fs__u64map_free(&seen);
  return res;
}

/* ---- link states ---- */
static int link_state_err(const fs_symm *s, int32_t l, const char *what, fs_err *err) {
  char a[64], b[64], c[64], d[64];
  const fs_link *L = &s->t->links[l], *R = &s->t->links[s->link_rep[l]];
  fs_topo_node_name(s->t, L->from, a, sizeof(a));
  fs_topo_node_name(s->t, L->to, b, sizeof(b));
  fs_topo_node_name(s->t, R->from, c, sizeof(c));
  fs_topo_node_name(s->t, R->to, d, sizeof(d));
  return fs_err_set(err, FS_EINVAL,
                    "link %d (%s->%s) %s link %d (%s->%s) of its orbit: the change is not a "
                    "union of link orbits, so the symmetry does not hold",
                    l, a, b, what, s->link_rep[l], c, d);
}

int fs_symm_check_down(const fs_symm *s, const uint8_t *down_links, fs_err *err) {
  for (int32_t l = 0; l < s->t->n_links; l++)
    if (!down_links[l] != !down_links[s->link_rep[l]])
      return link_state_err(s, l, down_links[l] ? "is down, unlike" : "is up, unlike", err);
  return 0;
}

int fs_symm_check_capacities(const fs_symm *s, const double *capacities_bps, fs_err *err) {
  for (int32_t l = 0; l < s->t->n_links; l++)
    if (capacities_bps[l] != capacities_bps[s->link_rep[l]])
      return link_state_err(s, l, "has another capacity than", err);
  return 0;
}

/* ---- route equivariance ---- */
int fs_symm_route_cache_fn(void *ctx, int32_t src, int32_t dst, const fs_route **out,
                           fs_err *err) {
  return fs_route_cache_get((fs_route_cache *)ctx, src, dst, out, err);
}

typedef struct lw {
  int32_t link;
  int32_t pos; /* first appearance */
  double w;
} lw;

static int cmp_lw(const void *a, const void *b) {
  const lw *x = a, *y = b;
  if (x->link != y->link) return (x->link > y->link) - (x->link < y->link);
  return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Sorts v[0..n) by link and sums duplicates; returns the new length. */
static int32_t lw_merge(lw *v, int32_t n) {
  qsort(v, (size_t)n, sizeof(lw), cmp_lw);
  int32_t m = 0;
  for (int32_t i = 0; i < n; i++) {
    if (m > 0 && v[m - 1].link == v[i].link) v[m - 1].w += v[i].w;
    else v[m++] = v[i];
  }
  return m;
}

/* Names of a and b into na, nb (64 bytes each), for messages. */
static void pair_names(const fs_topo *t, int32_t a, int32_t b, char *na, char *nb) {
  fs_topo_node_name(t, a, na, 64);
  fs_topo_node_name(t, b, nb, 64);
}

int fs_symm_check_routes(const fs_symm *s, const int32_t *pairs, int32_t n_pairs,
                         fs_symm_route_fn route, void *ctx, const char *label, fs_err *err) {
  const fs_topo *t = s->t;
  int32_t V = t->n_nodes, E = t->n_links;
  fs__u64map seen;
  fs__u64map_init(&seen);
  uint64_t *q = NULL;
  size_t qcap = 0, qn = 0, qh = 0;
  lw *orig = NULL, *img = NULL, *got = NULL;
  size_t ocap = 0, icap = 0, gcap = 0;
  char a1[64], b1[64], a2[64], b2[64], l1[64], l2[64];
  int rc = 0;
  if (!label) label = "routing";
  for (int32_t p = 0; p < n_pairs && !rc; p++) {
    int32_t a = pairs[2 * p], b = pairs[2 * p + 1];
    if (a < 0 || a >= V || b < 0 || b >= V) {
      rc = fs_err_set(err, FS_EINVAL, "pair %d: node %d -> %d out of range", p, a, b);
      break;
    }
    if (pair_visit(&seen, &q, &qcap, &qn, a, b)) rc = FS_ENOMEM;
    for (; qh < qn && !rc; qh++) {
      a = (int32_t)(q[qh] >> 32);
      b = (int32_t)(uint32_t)q[qh];
      const fs_route *r;
      fs_err e2 = {0, ""};
      if ((rc = route(ctx, a, b, &r, &e2))) {
        pair_names(t, a, b, a1, b1);
        fs_err_set(err, rc, "route %s->%s: %s", a1, b1, e2.msg);
        break;
      }
      if (fs__grow(&orig, &ocap, (size_t)r->n + 1, sizeof(lw)) ||
          fs__grow(&img, &icap, (size_t)r->n + 1, sizeof(lw))) {
        rc = FS_ENOMEM;
        break;
      }
      int32_t no = r->n;
      int64_t lat = r->latency_ns;
      for (int32_t k = 0; k < no; k++) {
        if (r->links[k] < 0 || r->links[k] >= E) {
          pair_names(t, a, b, a1, b1);
          rc = fs_err_set(err, FS_EINVAL, "route %s->%s: link %d out of range", a1, b1,
                          r->links[k]);
          break;
        }
        orig[k] = (lw){r->links[k], k, r->weights[k]};
      }
      for (int32_t g = 0; g < s->n_gens && !rc; g++) {
        int32_t ga = s->node_map[(size_t)g * V + a], gb = s->node_map[(size_t)g * V + b];
        if (pair_visit(&seen, &q, &qcap, &qn, ga, gb)) {
          rc = FS_ENOMEM;
          break;
        }
        for (int32_t k = 0; k < no; k++)
          img[k] = (lw){s->link_map[(size_t)g * E + orig[k].link], k, orig[k].w};
        int32_t ni = lw_merge(img, no);
        const fs_route *r2;
        if ((rc = route(ctx, ga, gb, &r2, &e2))) {
          pair_names(t, ga, gb, a2, b2);
          fs_err_set(err, rc, "route %s->%s: %s", a2, b2, e2.msg);
          break;
        }
        if (fs__grow(&got, &gcap, (size_t)r2->n + 1, sizeof(lw))) {
          rc = FS_ENOMEM;
          break;
        }
        for (int32_t k = 0; k < r2->n; k++) got[k] = (lw){r2->links[k], k, r2->weights[k]};
        int32_t ng = lw_merge(got, r2->n);
        /* Walk both sorted lists; the first link where they differ. */
        int32_t i = 0, j = 0, bad = -1;
        double wi = 0, wg = 0;
        while ((i < ni || j < ng) && bad < 0) {
          int32_t li = i < ni ? img[i].link : INT32_MAX, lg = j < ng ? got[j].link : INT32_MAX;
          int32_t l = li < lg ? li : lg;
          wi = li == l ? img[i++].w : 0;
          wg = lg == l ? got[j++].w : 0;
          if (fabs(wi - wg) > 1e-12) bad = l;
        }
        if (bad >= 0 || r2->latency_ns != lat) {
          pair_names(t, a, b, a1, b1);
          pair_names(t, ga, gb, a2, b2);
        }
        if (bad >= 0) {
          fs_topo_node_name(t, t->links[bad].from, l1, sizeof(l1));
          fs_topo_node_name(t, t->links[bad].to, l2, sizeof(l2));
          rc = fs_err_set(err, FS_EINVAL,
                          "routes are not equivariant (%s) under generator %d: route %s->%s "
                          "maps onto link %d (%s->%s) with weight %g, route %s->%s puts %g "
                          "there",
                          label, g, a1, b1, bad, l1, l2, wi, a2, b2, wg);
        } else if (r2->latency_ns != lat) {
          rc = fs_err_set(err, FS_EINVAL,
                          "routes are not equivariant (%s) under generator %d: route %s->%s "
                          "has latency %lld ns, route %s->%s %lld ns",
                          label, g, a1, b1, (long long)lat, a2, b2, (long long)r2->latency_ns);
        }
      }
    }
  }
  if (rc == FS_ENOMEM) fs_err_set(err, FS_ENOMEM, "out of memory checking routes");
  FS__FREE_ALL(q, orig, img, got);
  fs__u64map_free(&seen);
  return rc;
}

/* ---- the quotient route ---- */
static int cmp_lw_pos(const void *a, const void *b) {
  const lw *x = a, *y = b;
  return (x->pos > y->pos) - (x->pos < y->pos);
}

int fs_symm_quotient_route(const fs_symm *s, const fs_route *in, int64_t flow_orbit,
                           fs_route *out, fs_err *err) {
  if (flow_orbit < 1)
    return fs_err_set(err, FS_EINVAL, "quotient route: flow orbit must be >= 1, got %lld",
                      (long long)flow_orbit);
  if (in->n < 1) return fs_err_set(err, FS_EINVAL, "quotient route: empty route");
  for (int32_t k = 0; k < in->n; k++)
    if (in->links[k] < 0 || in->links[k] >= s->t->n_links || !(in->weights[k] > 0) ||
        !isfinite(in->weights[k]))
      return fs_err_set(err, FS_EINVAL, "quotient route: bad entry %d (link %d, weight %g)", k,
                        in->links[k], in->weights[k]);
  lw *v = fs__malloc((size_t)in->n, sizeof(lw));
  if (!v) return fs_err_set(err, FS_ENOMEM, "out of memory");
  /* Keyed by orbit (in the link field) to sum W_O; cmp_lw keeps the first
   * appearance first, so the merged entry has the orbit's first position. */
  for (int32_t k = 0; k < in->n; k++) v[k] = (lw){s->link_orbit[in->links[k]], k, in->weights[k]};
  int32_t m = lw_merge(v, in->n);
  qsort(v, (size_t)m, sizeof(lw), cmp_lw_pos);
  int32_t *links = fs__malloc((size_t)m, sizeof(int32_t));
  double *w = fs__malloc((size_t)m, sizeof(double));
  if (!links || !w) {
    FS__FREE_ALL(links, w, v);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  for (int32_t i = 0; i < m; i++) {
    int32_t rep = s->link_rep[in->links[v[i].pos]];
    links[i] = rep;
    w[i] = (double)flow_orbit * v[i].w / (double)s->orbit_size[v[i].link];
  }
  FS__FREE_ALL(v, out->links, out->weights);
  out->links = links;
  out->weights = w;
  out->n = m;
  out->cap = m;
  out->n_paths = in->n_paths;
  out->hops = in->hops;
  out->latency_ns = in->latency_ns;
  out->flow_orbit = flow_orbit;
  return 0;
}
