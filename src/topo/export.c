/* Writes a topology for other tools: Graphviz dot, GraphML, or the JSON
 * "file" topology object that rebuilds the same graph (node ids are the
 * node numbers, capacities in exact bit/s). O(V + E) output. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const char *kind_name(fs_node_kind k) {
  static const char *const n[] = {"host", "switch", "nic", "ocs", "wan", "scaleup"};
  return (int)k >= 0 && (int)k < 6 ? n[k] : "?";
}

int fs_topo_export(const fs_topo *t, const char *format, FILE *f, fs_err *err) {
  char name[64];
  int dot = strcmp(format, "dot") == 0, gml = strcmp(format, "graphml") == 0;
  int json = strcmp(format, "json") == 0;
  if (!dot && !gml && !json)
    return fs_err_set(err, FS_EINVAL, "--export must be dot, graphml or json, got '%s'",
                      format);
  if (dot) {
    /* hosts at the bottom, each tier a rank above (a k=8 fat-tree drew as
     * one 13,000-pt strip without); speeds in bit/s as in every export */
    fprintf(f, "graph \"%s\" {\n  rankdir=BT;\n", t->family);
    for (int32_t v = 0; v < t->n_nodes; v++) {
      fs_topo_node_name(t, v, name, sizeof(name));
      fprintf(f, "  n%d [label=\"%s\", kind=\"%s\", tier=%d];\n", v, name,
              kind_name(t->nodes[v].kind), t->nodes[v].tier);
    }
    int32_t top = 0;
    for (int32_t v = 0; v < t->n_nodes; v++)
      if (t->nodes[v].tier > top) top = t->nodes[v].tier;
    for (int32_t tier = 0; tier <= top; tier++) {
      fprintf(f, "  {rank=same;");
      for (int32_t v = 0; v < t->n_nodes; v++)
        if (t->nodes[v].tier == tier) fprintf(f, " n%d;", v);
      fprintf(f, "}\n");
    }
    for (int32_t l = 0; l < t->n_links; l += 2)
      fprintf(f, "  n%d -- n%d [bps=%.17g, latency_ns=%lld];\n", t->links[l].from,
              t->links[l].to, t->links[l].capacity_bps, (long long)t->links[l].latency_ns);
    fprintf(f, "}\n");
  } else if (gml) {
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
            "  <key id=\"name\" for=\"node\" attr.name=\"name\" attr.type=\"string\"/>\n"
            "  <key id=\"kind\" for=\"node\" attr.name=\"kind\" attr.type=\"string\"/>\n"
            "  <key id=\"tier\" for=\"node\" attr.name=\"tier\" attr.type=\"int\"/>\n"
            "  <key id=\"bps\" for=\"edge\" attr.name=\"bps\" attr.type=\"double\"/>\n"
            "  <key id=\"latency_ns\" for=\"edge\" attr.name=\"latency_ns\" "
            "attr.type=\"long\"/>\n"
            "  <graph id=\"%s\" edgedefault=\"undirected\">\n",
            t->family);
    for (int32_t v = 0; v < t->n_nodes; v++) {
      fs_topo_node_name(t, v, name, sizeof(name));
      fprintf(f,
              "    <node id=\"n%d\"><data key=\"name\">%s</data><data key=\"kind\">%s</data>"
              "<data key=\"tier\">%d</data></node>\n",
              v, name, kind_name(t->nodes[v].kind), t->nodes[v].tier);
    }
    for (int32_t l = 0; l < t->n_links; l += 2)
      fprintf(f,
              "    <edge source=\"n%d\" target=\"n%d\"><data key=\"bps\">%.17g</data>"
              "<data key=\"latency_ns\">%lld</data></edge>\n",
              t->links[l].from, t->links[l].to, t->links[l].capacity_bps,
              (long long)t->links[l].latency_ns);
    fprintf(f, "  </graph>\n</graphml>\n");
  } else {
    fprintf(f, "{\"type\": \"file\", \"family\": \"%s\", \"gpus_per_node\": %d,\n \"nodes\": [",
            t->family, t->gpus_per_node > 1 ? t->gpus_per_node : 1);
    for (int32_t v = 0; v < t->n_nodes; v++) {
      const fs_node *n = &t->nodes[v];
      fprintf(f, "%s\n  {\"id\": %d, \"kind\": \"%s\", \"tier\": %d, \"index\": %d, \"group\": %d%s}",
              v ? "," : "", v, kind_name(n->kind), n->tier, n->index, n->group,
              n->caps & FS_CAP_INC ? ", \"inc\": true" : "");
    }
    fprintf(f, "],\n \"links\": [");
    for (int32_t l = 0; l < t->n_links; l += 2)
      fprintf(f, "%s\n  {\"a\": %d, \"b\": %d, \"bps\": %.17g, \"latency_ns\": %lld}",
              l ? "," : "", t->links[l].from, t->links[l].to, t->links[l].capacity_bps,
              (long long)t->links[l].latency_ns);
    fprintf(f, "]}\n");
  }
  if (ferror(f)) return fs_err_set(err, FS_EIO, "error writing the export");
  return 0;
}
