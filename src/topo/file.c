/* The "file" family: any graph as a JSON node and link list (the shape
 * `fabricsim topo --export json` writes, docs/formats.md). Node ids are
 * strings or integers, looked up through a sorted index: O((V + E) log V).
 * Hosts keep their listed order and are numbered before all other nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "internal.h"

typedef struct idkey {
  char id[64];
  int32_t node; /* final node id */
  int32_t at;   /* position in the list (for messages) */
} idkey;

static int cmp_id(const void *a, const void *b) {
  return strcmp(((const idkey *)a)->id, ((const idkey *)b)->id);
}

/* Reads an id (string or integer) into buf; 0 or an error at path. */
static int get_id(const fs__jctx *c, const cJSON *v, const char *path, char *buf, size_t n) {
  if (cJSON_IsString(v) && v->valuestring[0] && strlen(v->valuestring) < n) {
    snprintf(buf, n, "%s", v->valuestring);
    return 0;
  }
  if (cJSON_IsNumber(v)) {
    int64_t x;
    int rc = fs__json_int_value(c, v, path, 0, FS_JSON_INT_MAX, &x);
    if (rc) return rc;
    snprintf(buf, n, "%lld", (long long)x);
    return 0;
  }
  return fs__json_fail(c, path, v, "must be a non-empty string (< %zu chars) or an integer",
                       n);
}

static const char *const kind_names[] = {"host", "switch", "nic", "ocs", "wan", "scaleup"};

static int parse_kind(const char *s, fs_node_kind *k) {
  if (strcmp(s, "gpu") == 0) s = "host";
  for (int i = 0; i < 6; i++)
    if (strcmp(s, kind_names[i]) == 0) {
      *k = (fs_node_kind)i;
      return 0;
    }
  return -1;
}

static int build(const fs__jctx *c, const cJSON *obj, const char *path, fs_topo **out);

int fs__topo_file_from_json(const fs__jctx *c, const cJSON *obj, const char *path,
                            fs_topo **out) {
  static const char *const keys[] = {"type", "nodes", "links", "path", "gpus_per_node", "inc",
                                     "cost", "family", NULL};
  int rc = fs__json_expect_object(c, obj, path, keys);
  if (rc) return rc;
  const cJSON *file = cJSON_GetObjectItemCaseSensitive(obj, "path");
  if (!file) return build(c, obj, path, out);
  char p[512];
  fs__json_path_key(p, sizeof(p), path, "path");
  if (!cJSON_IsString(file) || !file->valuestring[0])
    return fs__json_fail(c, p, file, "must be a file name");
  if (cJSON_GetObjectItemCaseSensitive(obj, "nodes") ||
      cJSON_GetObjectItemCaseSensitive(obj, "links"))
    return fs__json_fail(c, p, file, "give either path or nodes and links, not both");
  char *text;
  size_t len;
  if ((rc = fs__read_file(file->valuestring, &text, &len, c->err))) {
    char why[sizeof(c->err->msg)];
    snprintf(why, sizeof(why), "%s", c->err->msg); /* "FILE: cannot open: ..." */
    return fs_err_set(c->err, rc, "%s: %s: %s", c->file, p, why);
  }
  fs__jctx inner = {file->valuestring, c->err};
  cJSON *root = NULL;
  rc = fs__json_parse(&inner, text, len, &root);
  free(text);
  if (rc) return rc;
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "type");
  if (!cJSON_IsObject(root) || !cJSON_IsString(type) || strcmp(type->valuestring, "file") != 0)
    rc = fs__json_fail(&inner, "$.type", type, "must be \"file\"");
  else if (!(rc = fs__json_expect_object(&inner, root, "$", keys)))
    rc = build(&inner, root, "$", out);
  cJSON_Delete(root);
  if (!rc) snprintf((*out)->spec, sizeof((*out)->spec), "file:path=%.480s", file->valuestring);
  return rc;
}

/* Reads node i of the list (v, at JSON path pi): its id into ix[i], its
 * kind, tier, index, group and INC flag into nv[i]. Returns 0 or an error
 * naming the path. */
static int read_node(const fs__jctx *c, const cJSON *v, const char *pi, int32_t i, idkey *ix,
                     fs_node *nv) {
  char pk[512];
  static const char *const nkeys[] = {"id", "kind", "tier", "index", "group", "inc", NULL};
  const char *kind;
  int64_t tier, index, group;
  int rc;
  if (!cJSON_IsObject(v)) return fs__json_fail(c, pi, v, "must be an object");
  fs__json_path_key(pk, sizeof(pk), pi, "id");
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(v, "id");
  if ((rc = fs__json_expect_object(c, v, pi, nkeys))) return rc;
  if (!id) return fs__json_fail(c, pk, id, "is required");
  if ((rc = get_id(c, id, pk, ix[i].id, sizeof(ix[i].id))) ||
      (rc = fs__json_str(c, v, pi, "kind", 1, NULL, &kind)))
    return rc;
  fs_node_kind k;
  if (parse_kind(kind, &k)) {
    fs__json_path_key(pk, sizeof(pk), pi, "kind");
    return fs__json_fail(c, pk, cJSON_GetObjectItemCaseSensitive(v, "kind"),
                         "must be host (or gpu), switch, nic, scaleup, ocs or wan");
  }
  if ((rc = fs__json_int(c, v, pi, "tier", 0, k == FS_NODE_SWITCH ? 1 : 0, 0, 64, &tier)) ||
      (rc = fs__json_int(c, v, pi, "index", 0, i, -1, INT32_MAX, &index)) ||
      (rc = fs__json_int(c, v, pi, "group", 0, -1, -1, INT32_MAX, &group)))
    return rc;
  const cJSON *inc = cJSON_GetObjectItemCaseSensitive(v, "inc");
  if (inc && !cJSON_IsBool(inc)) {
    fs__json_path_key(pk, sizeof(pk), pi, "inc");
    return fs__json_fail(c, pk, inc, "must be true or false");
  }
  nv[i] = (fs_node){k, (int32_t)tier, (int32_t)index, (int32_t)group,
                    cJSON_IsTrue(inc) ? FS_CAP_INC : 0u};
  ix[i].at = i;
  return 0;
}

/* Reads the n nodes of the list at JSON path p; counts the hosts, of which
 * there must be one at least. Returns 0 or an error naming the path. */
static int read_nodes(const fs__jctx *c, const cJSON *nodes, const char *p, int32_t n,
                      idkey *ix, fs_node *nv, int32_t *hosts) {
  /* Walk the children: cJSON_GetArrayItem is O(i), O(n^2) over a list. */
  const cJSON *v = nodes->child;
  for (int32_t i = 0; i < n; i++, v = v->next) {
    char pi[512];
    fs__json_path_idx(pi, sizeof(pi), p, (size_t)i);
    int rc = read_node(c, v, pi, i, ix, nv);
    if (rc) return rc;
    *hosts += nv[i].kind == FS_NODE_HOST;
  }
  if (*hosts == 0) return fs__json_fail(c, p, nodes, "must hold at least one host");
  return 0;
}

/* Numbers the nodes, hosts first, each group in list order (map: list
 * position -> node), and sorts the ids for lookup. Returns 0, or an error
 * naming the later of two nodes with one id. */
static int index_nodes(const fs__jctx *c, const cJSON *nodes, const char *p, int32_t n,
                       int32_t hosts, idkey *ix, const fs_node *nv, int32_t *map) {
  for (int32_t i = 0, h = 0, o = hosts; i < n; i++)
    map[i] = nv[i].kind == FS_NODE_HOST ? h++ : o++;
  for (int32_t i = 0; i < n; i++) ix[i].node = map[i];
  qsort(ix, (size_t)n, sizeof(*ix), cmp_id);
  for (int32_t i = 1; i < n; i++)
    if (strcmp(ix[i - 1].id, ix[i].id) == 0) {
      int32_t at = ix[i - 1].at > ix[i].at ? ix[i - 1].at : ix[i].at;
      char pi[512], pk[512];
      fs__json_path_idx(pi, sizeof(pi), p, (size_t)at);
      fs__json_path_key(pk, sizeof(pk), pi, "id");
      return fs__json_fail(c, pk,
                           cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(nodes, at), "id"),
                           "duplicate node id");
    }
  return 0;
}

static int oom_building(const fs__jctx *c) {
  return fs_err_set(c->err, FS_ENOMEM, "out of memory building the file topology");
}

/* Adds the nodes to the builder, hosts first (the numbering of
 * index_nodes). Returns 0 or FS_ENOMEM (err set). */
static int add_nodes(const fs__jctx *c, fs_topo_builder *b, const fs_node *nv, int32_t n) {
  for (int32_t pass = 0; pass < 2; pass++)
    for (int32_t i = 0; i < n; i++) {
      if ((nv[i].kind == FS_NODE_HOST) != (pass == 0)) continue;
      int32_t id = fs_topo_builder_node(b, nv[i].kind, nv[i].tier, nv[i].index, nv[i].group);
      if (id < 0) return oom_building(c);
      b->t->nodes[id].caps = nv[i].caps;
    }
  return 0;
}

/* The node a link end names (key "a" or "b" of link v, at path pi), by its
 * id in the sorted index. Returns 0 or an error naming the path. */
static int link_end(const fs__jctx *c, const cJSON *v, const char *pi, const char *key,
                    const idkey *ix, int32_t n, int32_t *end) {
  char pk[512];
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(v, key);
  fs__json_path_key(pk, sizeof(pk), pi, key);
  idkey q;
  if (!x) return fs__json_fail(c, pk, x, "is required (a node id)");
  int rc = get_id(c, x, pk, q.id, sizeof(q.id));
  if (rc) return rc;
  const idkey *hit = bsearch(&q, ix, (size_t)n, sizeof(*ix), cmp_id);
  if (!hit) return fs__json_fail(c, pk, x, "unknown node id");
  *end = hit->node;
  return 0;
}

/* Reads link v (at JSON path pi): two distinct ends, a rate (gbps or bps,
 * not both) and a latency; adds its cable to the builder. Returns 0 or an
 * error naming the path (FS_ENOMEM when the builder cannot grow). */
static int read_link(const fs__jctx *c, const cJSON *v, const char *pi, const idkey *ix,
                     int32_t n, fs_topo_builder *b) {
  char pk[512];
  static const char *const lkeys[] = {"a", "b", "gbps", "bps", "latency_ns", NULL};
  int rc;
  if (!cJSON_IsObject(v)) return fs__json_fail(c, pi, v, "must be an object");
  if ((rc = fs__json_expect_object(c, v, pi, lkeys))) return rc;
  int32_t end[2];
  for (int e = 0; e < 2; e++)
    if ((rc = link_end(c, v, pi, e ? "b" : "a", ix, n, &end[e]))) return rc;
  if (end[0] == end[1]) {
    fs__json_path_key(pk, sizeof(pk), pi, "b");
    return fs__json_fail(c, pk, cJSON_GetObjectItemCaseSensitive(v, "b"),
                         "is a self-loop (same node as a)");
  }
  double gbps, bps;
  int64_t lat;
  if (cJSON_GetObjectItemCaseSensitive(v, "gbps") && cJSON_GetObjectItemCaseSensitive(v, "bps")) {
    fs__json_path_key(pk, sizeof(pk), pi, "bps");
    return fs__json_fail(c, pk, cJSON_GetObjectItemCaseSensitive(v, "bps"),
                         "give either gbps or bps, not both");
  }
  if ((rc = fs__json_num(c, v, pi, "gbps", 0, 100, 1e-9, MAX_GBPS, &gbps)) ||
      (rc = fs__json_num(c, v, pi, "bps", 0, gbps * 1e9, 1, MAX_GBPS * 1e9, &bps)) ||
      (rc = fs__json_int(c, v, pi, "latency_ns", 0, 1000, 0, MAX_LATENCY_NS, &lat)))
    return rc;
  if (fs_topo_builder_cable(b, end[0], end[1], bps, lat) < 0) return oom_building(c);
  return 0;
}

/* Reads the m links of the list at JSON path pl into the builder. Returns
 * 0 or the first link's error. */
static int read_links(const fs__jctx *c, const cJSON *links, const char *pl, int32_t m,
                      const idkey *ix, int32_t n, fs_topo_builder *b) {
  const cJSON *v = links->child;
  for (int32_t i = 0; i < m; i++, v = v->next) {
    char pi[512];
    fs__json_path_idx(pi, sizeof(pi), pl, (size_t)i);
    int rc = read_link(c, v, pi, ix, n, b);
    if (rc) return rc;
  }
  return 0;
}

/* The topology's labels: GPUs per server, the first NIC and scale-up
 * node, the spec, and the "family" key, which labels the graph (names,
 * cost classes); the builders' closed forms are not taken from it.
 * Returns 0 or an error naming the family's path. */
static int label_topo(const fs__jctx *c, const cJSON *obj, const char *path, int64_t G,
                      int32_t n, fs_topo *t) {
  t->gpus_per_node = (int32_t)G;
  for (int32_t x = n - 1; x >= 0; x--) {
    if (t->nodes[x].kind == FS_NODE_NIC) t->nic0 = x;
    if (t->nodes[x].kind == FS_NODE_SCALEUP) t->scaleup0 = x;
  }
  snprintf(t->spec, sizeof(t->spec), "file");
  const char *fam;
  int rc = fs__json_str(c, obj, path, "family", 0, "file", &fam);
  if (rc) return rc;
  if (strlen(fam) >= sizeof(t->family) ||
      strspn(fam, "abcdefghijklmnopqrstuvwxyz") != strlen(fam)) {
    char pf[512];
    fs__json_path_key(pf, sizeof(pf), path, "family");
    return fs__json_fail(c, pf, cJSON_GetObjectItemCaseSensitive(obj, "family"),
                         "must be a lower-case word of at most %zu letters",
                         sizeof(t->family) - 1);
  }
  snprintf(t->family, sizeof(t->family), "%s", fam);
  return 0;
}

/* Every host must reach host 0 without relaying through another host: a
 * breadth-first search from host 0 that does not leave other hosts.
 * seen (zeroed) and queue hold n entries. Returns 0, or an error naming
 * the first host (in node order) it does not reach. */
static int check_hosts_reach(const fs__jctx *c, const fs_topo *t, const cJSON *nodes,
                             const char *p, int32_t hosts, const int32_t *map, int32_t *seen,
                             int32_t *queue) {
  int32_t head = 0, tail = 0;
  seen[0] = 1;
  queue[tail++] = 0;
  while (head < tail) {
    int32_t u = queue[head++];
    if (u != 0 && u < hosts) continue;
    for (int32_t i = t->out_start[u]; i < t->out_start[u + 1]; i++) {
      int32_t w = t->links[t->out_links[i]].to;
      if (!seen[w]) {
        seen[w] = 1;
        queue[tail++] = w;
      }
    }
  }
  for (int32_t h = 0; h < hosts; h++)
    if (!seen[h]) {
      int32_t at = 0;
      while (map[at] != h) at++;
      char pi[512];
      fs__json_path_idx(pi, sizeof(pi), p, (size_t)at);
      return fs__json_fail(c, pi,
                           cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(nodes, at), "id"),
                           "host is disconnected (no path to the first host without relaying "
                           "through a host)");
    }
  return 0;
}

static int build(const fs__jctx *c, const cJSON *obj, const char *path, fs_topo **out) {
  char p[512];
  const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(obj, "nodes");
  const cJSON *links = cJSON_GetObjectItemCaseSensitive(obj, "links");
  fs__json_path_key(p, sizeof(p), path, "nodes");
  if (!cJSON_IsArray(nodes) || cJSON_GetArraySize(nodes) < 1)
    return fs__json_fail(c, p, nodes, "must be a non-empty array of nodes");
  char pl[512];
  fs__json_path_key(pl, sizeof(pl), path, "links");
  if (!cJSON_IsArray(links)) return fs__json_fail(c, pl, links, "must be an array of links");
  int64_t G;
  int rc = fs__json_int(c, obj, path, "gpus_per_node", 0, 1, 1, 1 << 22, &G);
  if (rc) return rc;
  int32_t n = cJSON_GetArraySize(nodes), m = cJSON_GetArraySize(links);
  if (n > MAX_NODES || m > MAX_CABLES)
    return fs__json_fail(c, p, nodes, "too large (limits %d nodes, %d links)", MAX_NODES,
                         MAX_CABLES);
  idkey *ix = fs__malloc((size_t)n, sizeof(*ix));
  fs_node *nv = fs__malloc((size_t)n, sizeof(*nv));
  int32_t *map = fs__malloc((size_t)n, sizeof(int32_t)); /* list position -> node */
  fs_topo_builder b = {0};
  int32_t *seen = NULL, *queue = NULL;
  if (!ix || !nv || !map) {
    rc = fs_err_set(c->err, FS_ENOMEM, "out of memory reading nodes");
    goto done;
  }
  int32_t hosts = 0;
  if ((rc = read_nodes(c, nodes, p, n, ix, nv, &hosts)) ||
      (rc = index_nodes(c, nodes, p, n, hosts, ix, nv, map)))
    goto done;
  if (hosts % G) {
    char pg[512];
    fs__json_path_key(pg, sizeof(pg), path, "gpus_per_node");
    rc = fs__json_fail(c, pg, cJSON_GetObjectItemCaseSensitive(obj, "gpus_per_node"),
                       "must divide the host count (%d)", hosts);
    goto done;
  }
  if ((rc = fs_topo_builder_init(&b, "file", n, 2 * m, c->err)) ||
      (rc = add_nodes(c, &b, nv, n)) || (rc = read_links(c, links, pl, m, ix, n, &b)) ||
      (rc = label_topo(c, obj, path, G, n, b.t)))
    goto done;
  seen = fs__calloc((size_t)n, sizeof(int32_t));
  queue = fs__malloc((size_t)n, sizeof(int32_t));
  if (!seen || !queue) {
    rc = oom_building(c);
    goto done;
  }
  if ((rc = fs_topo_builder_finish(&b, out, c->err))) goto done;
  if ((rc = check_hosts_reach(c, *out, nodes, p, hosts, map, seen, queue))) {
    fs_topo_free(*out);
    *out = NULL;
  }
done:
  if (b.t) fs_topo_builder_abort(&b);
  FS__FREE_ALL(ix, nv, map, seen, queue);
  return rc;
}
