/* The topology container: incremental building, CSR out-adjacency, names.
 * Links are stored in creation order; a cable's two directions are adjacent
 * ids (2i, 2i+1), so `reverse` is id ^ 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "internal.h"

int fs_topo_builder_init(fs_topo_builder *b, const char *family, int32_t nodes_hint,
                         int32_t links_hint, fs_err *err) {
  memset(b, 0, sizeof(*b));
  b->t = calloc(1, sizeof(*b->t));
  if (!b->t) return fs_err_set(err, FS_ENOMEM, "out of memory building topology");
  snprintf(b->t->family, sizeof(b->t->family), "%s", family);
  b->t->gpus_per_node = 1;
  b->t->nic0 = b->t->scaleup0 = -1;
  fs_cost_defaults(&b->t->cost);
  size_t nc = 0, lc = 0;
  if (fs__grow(&b->t->nodes, &nc, (size_t)(nodes_hint > 0 ? nodes_hint : 8),
               sizeof(fs_node)) ||
      fs__grow(&b->t->links, &lc, (size_t)(links_hint > 0 ? links_hint : 8),
               sizeof(fs_link))) {
    fs_topo_builder_abort(b);
    return fs_err_set(err, FS_ENOMEM, "out of memory building topology");
  }
  b->node_cap = (int32_t)nc;
  b->link_cap = (int32_t)lc;
  return 0;
}

int32_t fs_topo_builder_node(fs_topo_builder *b, fs_node_kind kind, int32_t tier,
                             int32_t index, int32_t group) {
  fs_topo *t = b->t;
  size_t cap = (size_t)b->node_cap;
  if (t->n_nodes == INT32_MAX ||
      fs__grow(&t->nodes, &cap, (size_t)t->n_nodes + 1, sizeof(fs_node)))
    return FS_ENOMEM;
  b->node_cap = (int32_t)(cap > INT32_MAX ? INT32_MAX : cap);
  t->nodes[t->n_nodes] = (fs_node){kind, tier, index, group, 0};
  return t->n_nodes++;
}

int fs_topo_builder_cable(fs_topo_builder *b, int32_t a, int32_t c, double bps,
                          int64_t latency_ns) {
  fs_topo *t = b->t;
  size_t cap = (size_t)b->link_cap;
  if (t->n_links > INT32_MAX - 2 ||
      fs__grow(&t->links, &cap, (size_t)t->n_links + 2, sizeof(fs_link)))
    return FS_ENOMEM;
  b->link_cap = (int32_t)(cap > INT32_MAX ? INT32_MAX : cap);
  int32_t id = t->n_links;
  t->links[id] = (fs_link){a, c, id + 1, bps, latency_ns};
  t->links[id + 1] = (fs_link){c, a, id, bps, latency_ns};
  t->n_links += 2;
  return 0;
}

void fs_topo_builder_abort(fs_topo_builder *b) {
  fs_topo_free(b->t);
  memset(b, 0, sizeof(*b));
}

int fs_topo_builder_finish(fs_topo_builder *b, fs_topo **out, fs_err *err) {
  fs_topo *t = b->t;
  t->out_start = calloc((size_t)t->n_nodes + 1, sizeof(int32_t));
  t->out_links = fs__malloc((size_t)t->n_links, sizeof(int32_t));
  if (!t->out_start || !t->out_links) {
    fs_topo_builder_abort(b);
    return fs_err_set(err, FS_ENOMEM, "out of memory building topology");
  }
  for (int32_t l = 0; l < t->n_links; l++) t->out_start[t->links[l].from + 1]++;
  for (int32_t v = 0; v < t->n_nodes; v++) t->out_start[v + 1] += t->out_start[v];
  int32_t *fill = calloc((size_t)t->n_nodes + 1, sizeof(int32_t));
  if (!fill) {
    fs_topo_builder_abort(b);
    return fs_err_set(err, FS_ENOMEM, "out of memory building topology");
  }
  for (int32_t l = 0; l < t->n_links; l++) {
    int32_t v = t->links[l].from;
    t->out_links[t->out_start[v] + fill[v]++] = l;
  }
  free(fill);
  t->n_hosts = 0;
  while (t->n_hosts < t->n_nodes && t->nodes[t->n_hosts].kind == FS_NODE_HOST)
    t->n_hosts++;
  for (int32_t v = t->n_hosts; v < t->n_nodes; v++) {
    if (t->nodes[v].kind == FS_NODE_HOST) {
      fs_topo_builder_abort(b);
      return fs_err_set(err, FS_EINTERNAL, "hosts must be numbered first");
    }
  }
  *out = t;
  memset(b, 0, sizeof(*b));
  return 0;
}

void fs_topo_free(fs_topo *t) {
  if (!t) return;
  FS__FREE_ALL(t->nodes, t->links, t->out_start, t->out_links, t);
}

void fs_topo_node_name(const fs_topo *t, int32_t node, char *buf, int n) {
  if (node < 0 || node >= t->n_nodes) {
    snprintf(buf, (size_t)n, "?%d", node);
    return;
  }
  const fs_node *v = &t->nodes[node];
  if (v->kind == FS_NODE_HOST) {
    snprintf(buf, (size_t)n, "%s%d", t->gpus_per_node > 1 ? "gpu" : "host", node);
    return;
  }
  if (v->kind == FS_NODE_NIC) {
    snprintf(buf, (size_t)n, "nic%d", v->index);
    return;
  }
  if (v->kind == FS_NODE_SCALEUP) {
    snprintf(buf, (size_t)n, "scaleup%d", v->index);
    return;
  }
  /* A Clos of three tiers names its switches as the fat-tree does; one of
   * two tiers (every group -1) as the leaf-spine. */
  int clos = strcmp(t->family, "clos") == 0;
  int fattree = strcmp(t->family, "fattree") == 0 || (clos && v->group >= 0) ||
                (clos && v->tier == 3);
  int leafspine = strcmp(t->family, "leafspine") == 0 || clos;
  if (fattree && v->tier == 1)
    snprintf(buf, (size_t)n, "edge%d.%d", v->group, v->index);
  else if (fattree && v->tier == 2)
    snprintf(buf, (size_t)n, "agg%d.%d", v->group, v->index);
  else if (fattree && v->tier == 3)
    snprintf(buf, (size_t)n, "core%d", v->index);
  else if (strcmp(t->family, "railopt") == 0 && v->tier == 1)
    snprintf(buf, (size_t)n, "rail%d.%d", v->group,
             v->index % (t->gpus_per_node > 0 ? t->gpus_per_node : 1));
  else if (strcmp(t->family, "railopt") == 0 && v->tier == 2)
    snprintf(buf, (size_t)n, "spine%d", v->index);
  else if (strcmp(t->family, "railonly") == 0)
    snprintf(buf, (size_t)n, "rail%d", v->index);
  else if (strcmp(t->family, "dragonfly") == 0 || strcmp(t->family, "torus") == 0 ||
           strcmp(t->family, "ring") == 0 || strcmp(t->family, "fullmesh") == 0)
    snprintf(buf, (size_t)n, "router%d", v->index);
  else if (strcmp(t->family, "sirius") == 0)
    snprintf(buf, (size_t)n, "node%d", v->index);
  else if (strncmp(t->family, "sipml", 5) == 0)
    snprintf(buf, (size_t)n, "router%d", v->index);
  else if (strcmp(t->family, "lotus") == 0)
    snprintf(buf, (size_t)n, "%s%d.%d", v->tier == 1 ? "lower" : "upper", v->group,
             v->index % (t->n_dims > 1 && t->dims[1] > 0 ? t->dims[1] : 1));
  else if (strcmp(t->family, "jupiter") == 0)
    snprintf(buf, (size_t)n, "block%d", v->index);
  else if (leafspine && v->tier == 1)
    snprintf(buf, (size_t)n, "leaf%d", v->index);
  else if (leafspine && v->tier == 2)
    snprintf(buf, (size_t)n, "spine%d", v->index);
  else
    snprintf(buf, (size_t)n, "switch%d", v->index);
}

void fs_topo_node_class(const fs_topo *t, int32_t node, char *buf, int n) {
  if (node < 0 || node >= t->n_nodes) {
    snprintf(buf, (size_t)n, "?");
    return;
  }
  const fs_node *v = &t->nodes[node];
  switch (v->kind) {
    case FS_NODE_HOST: snprintf(buf, (size_t)n, "%s", t->gpus_per_node > 1 ? "gpu" : "host"); break;
    case FS_NODE_NIC: snprintf(buf, (size_t)n, "nic"); break;
    case FS_NODE_SCALEUP: snprintf(buf, (size_t)n, "scaleup"); break;
    case FS_NODE_OCS: snprintf(buf, (size_t)n, "ocs"); break;
    case FS_NODE_WAN: snprintf(buf, (size_t)n, "wan"); break;
    default: snprintf(buf, (size_t)n, "tier%d", v->tier); break;
  }
}

int fs_topo_mark_inc(fs_topo *t, const char *which) {
  int all = strcmp(which, "all") == 0, top = strcmp(which, "top") == 0;
  if (!all && !top && strcmp(which, "none") != 0) return FS_EINVAL;
  int32_t top_tier = 0;
  for (int32_t v = 0; v < t->n_nodes; v++)
    if (t->nodes[v].kind == FS_NODE_SWITCH && t->nodes[v].tier > top_tier)
      top_tier = t->nodes[v].tier;
  for (int32_t v = 0; v < t->n_nodes; v++) {
    fs_node *n = &t->nodes[v];
    int mark = n->kind == FS_NODE_SWITCH && (all || (top && n->tier == top_tier));
    n->caps = mark ? n->caps | FS_CAP_INC : n->caps & ~FS_CAP_INC;
  }
  return 0;
}

int32_t fs_topo_node_find(const fs_topo *t, const char *name) {
  char buf[64];
  for (int32_t v = 0; v < t->n_nodes; v++) {
    fs_topo_node_name(t, v, buf, (int)sizeof(buf));
    if (strcmp(buf, name) == 0) return v;
  }
  return -1;
}

int fs_topo_builder_copy(fs_topo_builder *b, const fs_topo *t, const uint8_t *down,
                         int32_t *link_map) {
  for (int32_t v = 0; v < t->n_nodes; v++) {
    const fs_node *n = &t->nodes[v];
    if (fs_topo_builder_node(b, n->kind, n->tier, n->index, n->group) < 0) return FS_ENOMEM;
    b->t->nodes[v].caps = n->caps;
  }
  for (int32_t l = 0; l < t->n_links; l++) {
    const fs_link *k = &t->links[l];
    if (k->reverse < l || (down && (down[l] || down[k->reverse]))) continue;
    if (link_map) {
      link_map[b->t->n_links] = l;
      link_map[b->t->n_links + 1] = k->reverse;
    }
    if (fs_topo_builder_cable(b, k->from, k->to, k->capacity_bps, k->latency_ns) < 0)
      return FS_ENOMEM;
    /* asymmetric capacities survive too */
    b->t->links[b->t->n_links - 1].capacity_bps = t->links[k->reverse].capacity_bps;
    b->t->links[b->t->n_links - 1].latency_ns = t->links[k->reverse].latency_ns;
  }
  fs_topo *c = b->t;
  snprintf(c->spec, sizeof(c->spec), "%s", t->spec);
  c->gpus_per_node = t->gpus_per_node;
  c->nic0 = t->nic0;
  c->scaleup0 = t->scaleup0;
  memcpy(c->dims, t->dims, sizeof(c->dims));
  c->n_dims = t->n_dims;
  c->scaleup_optical = t->scaleup_optical;
  c->cost = t->cost;
  return 0;
}

int fs_topo_without_cables(const fs_topo *t, const uint8_t *down, fs_topo **out,
                           int32_t *link_map, fs_err *err) {
  fs_topo_builder b;
  int rc = fs_topo_builder_init(&b, t->family, t->n_nodes, t->n_links, err);
  if (rc) return rc;
  if (fs_topo_builder_copy(&b, t, down, link_map)) {
    fs_topo_builder_abort(&b);
    return fs_err_set(err, FS_ENOMEM, "out of memory copying the topology");
  }
  return fs_topo_builder_finish(&b, out, err);
}
