/* fabricsim topo SPEC: builds a topology from a file or inline spec and
 * prints its size, link speeds, hop counts and bisection bandwidth, as
 * aligned "key: value" text or as one JSON object (snake_case keys). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "cli.h"
#include "opts.h"
#include "fabricsim/topo.h"

/* What the command line gives; the initialiser holds the defaults. */
typedef struct cmdline {
  const char *spec, *format, *export, *out;
  int n_spec;
} cmdline;

#define AT(f) offsetof(cmdline, f)
static const fs__opt topo_opts[] = {
    FS__OPT_STR("--format", 0, AT(format), "text|json",
                "output format (default text)"),
    FS__OPT_STR("--export", 0, AT(export), "FMT",
                "write the graph instead (dot, graphml, or json: a \"file\" topology that "
                "rebuilds the same graph)"),
    FS__OPT_STR("--out", 0, AT(out), "FILE",
                "write the export to FILE instead of stdout"),
    FS__OPT_END};

static const fs__cmd topo_cmd = {
    "topo", "SPEC [options]",
    "Describes a topology: node and link counts, switch radix, link speeds, host-to-host "
    "diameter and mean hop count, and the bisection bandwidth between hosts [0, n/2) and "
    "[n/2, n) in the documented host order.\n\n"
    "The report adds a cost and power estimate of the scale-out network from the per-part "
    "table of docs/model.md (override it under \"cost\").",
    "SPEC is a JSON file or an inline form, e.g.\n"
    "  fattree:k=8,gbps=100\n"
    "  leafspine:leaves=4,spines=2,hosts_per_leaf=8,host_gbps=400,fabric_gbps=400\n"
    "  clos:pods=8,edges_per_pod=4,hosts_per_edge=16,edge_oversubscription=2\n"
    "  clos:tiers=2,edges_per_pod=8,hosts_per_edge=32,edge_uplinks=8,edge_gbps=400\n"
    "  star:hosts=16,gbps=100\n"
    "  railopt:servers=64,gpus_per_node=8,servers_per_su=32\n"
    "  railonly:servers=32,gpus_per_node=8\n"
    "  torus:dims=8x8x8,gbps=400      ring:n=16      fullmesh:n=8\n"
    "  dragonfly:p=4 (a=2p, h=p, g=a*h+1)\n"
    "  file:path=graph.json (a node/link list, as --export json writes)\n",
    topo_opts, "SPEC", "SPEC", 1, 1, AT(spec), AT(n_spec)};
#undef AT

/* What the report shows beyond fs_topo_stats; derived from the links. */
typedef struct extra {
  int32_t *tiers;   /* distinct switch tiers, ascending */
  int32_t *per_tier; /* switch count of tiers[i] */
  int32_t n_tiers;
  int32_t *radix_min, *radix_max; /* per tier */
  int32_t kinds[6];               /* nodes per fs_node_kind */
  double *speeds_bps; /* distinct link capacities, ascending */
  int32_t n_speeds;
  /* The most the cut could carry if the fabric were non-blocking: the lesser
   * of what the source half can send and the sink half can receive. */
} extra;

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void extra_free(extra *e) {
  free(e->radix_min);
  free(e->radix_max);
  free(e->tiers);
  free(e->per_tier);
  free(e->speeds_bps);
}

static int extra_compute(const fs_topo *t, extra *e, fs_err *err) {
  memset(e, 0, sizeof(*e));
  e->tiers = fs__malloc((size_t)t->n_nodes + 1, sizeof(int32_t));
  e->per_tier = fs__malloc((size_t)t->n_nodes + 1, sizeof(int32_t));
  e->speeds_bps = fs__malloc((size_t)t->n_links + 1, sizeof(double));
  e->radix_min = fs__malloc((size_t)t->n_nodes + 1, sizeof(int32_t));
  e->radix_max = fs__malloc((size_t)t->n_nodes + 1, sizeof(int32_t));
  if (!e->tiers || !e->per_tier || !e->speeds_bps || !e->radix_min || !e->radix_max) {
    extra_free(e);
    return fs_err_set(err, FS_ENOMEM, "out of memory describing the topology");
  }
  int32_t n = 0;
  for (int32_t v = 0; v < t->n_nodes; v++)
    if (t->nodes[v].kind == FS_NODE_SWITCH) e->tiers[n++] = t->nodes[v].tier;
  qsort(e->tiers, (size_t)n, sizeof(int32_t), cmp_i32);
  for (int32_t i = 0; i < n; i++) {
    if (e->n_tiers > 0 && e->tiers[e->n_tiers - 1] == e->tiers[i]) {
      e->per_tier[e->n_tiers - 1]++;
    } else {
      e->tiers[e->n_tiers] = e->tiers[i];
      e->per_tier[e->n_tiers++] = 1;
    }
  }
  for (int32_t i = 0; i < e->n_tiers; i++) e->radix_min[i] = e->radix_max[i] = -1;
  for (int32_t v = 0; v < t->n_nodes; v++) {
    if ((int)t->nodes[v].kind >= 0 && (int)t->nodes[v].kind < 6) e->kinds[t->nodes[v].kind]++;
    if (t->nodes[v].kind != FS_NODE_SWITCH) continue;
    int32_t i = 0, deg = t->out_start[v + 1] - t->out_start[v];
    while (e->tiers[i] != t->nodes[v].tier) i++;
    if (e->radix_max[i] < 0 || deg > e->radix_max[i]) e->radix_max[i] = deg;
    if (e->radix_min[i] < 0 || deg < e->radix_min[i]) e->radix_min[i] = deg;
  }
  for (int32_t l = 0; l < t->n_links; l++) e->speeds_bps[l] = t->links[l].capacity_bps;
  qsort(e->speeds_bps, (size_t)t->n_links, sizeof(double), cmp_dbl);
  for (int32_t l = 0; l < t->n_links; l++)
    if (e->n_speeds == 0 || e->speeds_bps[e->n_speeds - 1] != e->speeds_bps[l])
      e->speeds_bps[e->n_speeds++] = e->speeds_bps[l];
  return 0;
}

static const char *const kind_names[6] = {"host", "switch", "nic", "ocs", "wan", "scaleup"};

static void print_text(const fs_topo *t, const fs_topo_stats *s, const extra *e,
                       const fs_topo_cost *c) {
  char a[32], b[32];
  printf("%-20s %s\n", "family:", t->family);
  printf("%-20s %s\n", "spec:", t->spec);
  printf("%-20s %d\n", "nodes:", s->nodes);
  printf("%-20s %d\n", "hosts:", s->hosts);
  if (s->gpus_per_node > 1) {
    printf("%-20s %d (%d GPUs each)\n", "servers:", s->servers, s->gpus_per_node);
    printf("%-20s %d\n", "NICs:", s->nics);
    printf("%-20s %d\n", "scale-up switches:", s->scaleup_switches);
  }
  printf("%-20s %d", "switches:", s->switches);
  for (int32_t i = 0; i < e->n_tiers; i++)
    printf("%stier%d %d", i == 0 ? " (" : ", ", e->tiers[i], e->per_tier[i]);
  printf("%s\n", e->n_tiers ? ")" : "");
  printf("%-20s", "nodes by kind:");
  for (int k = 0, first = 1; k < 6; k++)
    if (e->kinds[k]) {
      printf("%s%s %d", first ? " " : ", ", kind_names[k], e->kinds[k]);
      first = 0;
    }
  printf("\n");
  if (e->n_tiers) {
    printf("%-20s", "radix by tier:");
    for (int32_t i = 0; i < e->n_tiers; i++) {
      if (e->radix_min[i] == e->radix_max[i])
        printf("%stier%d %d", i ? ", " : " ", e->tiers[i], e->radix_max[i]);
      else
        printf("%stier%d %d-%d", i ? ", " : " ", e->tiers[i], e->radix_min[i], e->radix_max[i]);
    }
    printf("\n");
  }
  printf("%-20s %d\n", "cables:", s->cables);
  printf("%-20s %d\n", "directed links:", s->links);
  printf("%-20s %d\n", "max switch radix:", s->max_radix);
  printf("%-20s", "link speeds:");
  for (int32_t i = 0; i < e->n_speeds; i++) {
    fs__fmt_num(a, e->speeds_bps[i] / 1e9);
    printf("%s%s", i ? ", " : " ", a);
  }
  printf("%s\n", e->n_speeds ? " Gbps" : " none");
  fs__fmt_num(a, s->host_injection_bps / 1e9);
  printf("%-20s %s Gbps\n", "host injection:", a);
  if (s->gpus_per_node > 1) {
    fs__fmt_num(a, s->scaleup_bps / 1e9);
    printf("%-20s %s Gbps\n", "scale-up bandwidth:", a);
  }
  printf("%-20s %d hops\n", "diameter:", s->diameter_hops);
  printf("%-20s %.4f hops\n", "average hops:", s->avg_hops);
  fs__fmt_num(a, s->bisection_bps / 1e9);
  fs__fmt_num(b, s->full_bisection_bps / 1e9);
  if (s->full_bisection_bps > 0)
    printf("%-20s %s Gbps (%.1f%% of full %s Gbps)\n", "bisection:", a,
           100 * s->bisection_bps / s->full_bisection_bps, b);
  else
    printf("%-20s %s Gbps\n", "bisection:", a);
  double f = fs_topo_bisection_formula(t);
  if (f >= 0) {
    fs__fmt_num(a, f / 1e9);
    printf("%-20s %s Gbps (%s the max-flow)\n", "bisection formula:", a,
           fabs(f - s->bisection_bps) <= 1e-9 * f ? "agrees with" : "DIFFERS from");
  }
  if (s->bisection_bps > 0)
    printf("%-20s %.3g:1\n", "oversubscription:",
           s->full_bisection_bps / s->bisection_bps);
  else
    printf("%-20s n/a\n", "oversubscription:");
  printf("%-20s $%.0f, %.1f kW (estimate, docs/model.md)\n", "network cost:", c->usd,
         c->watts / 1e3);
  for (int k = 0; k < FS_PART_COUNT; k++)
    if (c->part[k].count)
      printf("  %-18s %lld x, $%.0f, %.0f W\n", fs_cost_part_name((fs_cost_part_kind)k),
             (long long)c->part[k].count, c->part[k].usd, c->part[k].watts);
  if (c->fiber_m > 0) printf("  %-18s %.0f m, $%.0f\n", "fiber", c->fiber_m, c->fiber_usd);
}

static void print_json(const fs_topo *t, const fs_topo_stats *s, const extra *e,
                       const fs_topo_cost *c) {
  char a[32];
  /* family and spec come from the builders, but escape anyway: the report
   * must stay valid JSON whatever a future family writes there. */
  printf("{\"family\": ");
  fs__fput_json_str(stdout, t->family);
  printf(", \"spec\": ");
  fs__fput_json_str(stdout, t->spec);
  printf(", \"nodes\": %d, \"hosts\": %d, \"switches\": %d", s->nodes, s->hosts,
         s->switches);
  fs__fmt_num(a, s->scaleup_bps / 1e9);
  printf(", \"gpus_per_node\": %d, \"servers\": %d, \"nics\": %d, \"scaleup_switches\": %d"
         ", \"scaleup_gbps\": %s",
         s->gpus_per_node, s->servers, s->nics, s->scaleup_switches, a);
  printf(", \"switches_by_tier\": {");
  for (int32_t i = 0; i < e->n_tiers; i++)
    printf("%s\"tier%d\": %d", i ? ", " : "", e->tiers[i], e->per_tier[i]);
  printf("}, \"radix_by_tier\": {");
  for (int32_t i = 0; i < e->n_tiers; i++)
    printf("%s\"tier%d\": {\"min\": %d, \"max\": %d}", i ? ", " : "", e->tiers[i],
           e->radix_min[i], e->radix_max[i]);
  printf("}, \"nodes_by_kind\": {");
  for (int k = 0, first = 1; k < 6; k++)
    if (e->kinds[k]) {
      printf("%s\"%s\": %d", first ? "" : ", ", kind_names[k], e->kinds[k]);
      first = 0;
    }
  printf("}, \"cables\": %d, \"links\": %d, \"max_radix\": %d", s->cables, s->links,
         s->max_radix);
  printf(", \"link_speeds_gbps\": [");
  for (int32_t i = 0; i < e->n_speeds; i++) {
    fs__fmt_num(a, e->speeds_bps[i] / 1e9);
    printf("%s%s", i ? ", " : "", a);
  }
  fs__fmt_num(a, s->host_injection_bps / 1e9);
  printf("], \"host_injection_gbps\": %s", a);
  printf(", \"diameter_hops\": %d", s->diameter_hops);
  fs__fmt_num(a, s->avg_hops);
  printf(", \"avg_hops\": %s", a);
  fs__fmt_num(a, s->bisection_bps / 1e9);
  printf(", \"bisection_gbps\": %s", a);
  fs__fmt_num(a, s->full_bisection_bps / 1e9);
  printf(", \"full_bisection_gbps\": %s", a);
  /* fs__fmt_num turns the 0/0 and x/0 of host-less cuts into null. */
  fs__fmt_num(a, s->full_bisection_bps > 0 ? s->bisection_bps / s->full_bisection_bps
                                           : NAN);
  printf(", \"bisection_fraction\": %s", a);
  fs__fmt_num(a, s->bisection_bps > 0 ? s->full_bisection_bps / s->bisection_bps : NAN);
  printf(", \"oversubscription\": %s", a);
  double f = fs_topo_bisection_formula(t);
  fs__fmt_num(a, f >= 0 ? f / 1e9 : NAN);
  printf(", \"bisection_formula_gbps\": %s", a);
  printf(", \"cost\": {\"usd\": %.2f, \"watts\": %.2f, \"fiber_m\": %.2f, \"fiber_usd\": %.2f",
         c->usd, c->watts, c->fiber_m, c->fiber_usd);
  for (int k = 0; k < FS_PART_COUNT; k++)
    printf(", \"%s\": {\"count\": %lld, \"usd\": %.2f, \"watts\": %.2f}",
           fs_cost_part_name((fs_cost_part_kind)k), (long long)c->part[k].count,
           c->part[k].usd, c->part[k].watts);
  printf("}}\n");
}

int fs__cli_topo(int argc, char **argv) {
  cmdline o = {NULL, "text", NULL, NULL, 0};
  int go = fs__opts_parse(&topo_cmd, &o, argc, argv);
  if (go >= 0) return go;
  const char *spec = o.spec, *format = o.format, *export = o.export, *outfile = o.out;
  if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0)
    return fs__cli_usage("topo", "--format must be text or json, got '%s'", format);
  if (export && strcmp(export, "dot") != 0 && strcmp(export, "graphml") != 0 &&
      strcmp(export, "json") != 0)
    return fs__cli_usage("topo", "--export must be dot, graphml or json, got '%s'", export);
  if (outfile && !export) return fs__cli_usage("topo", "--out goes with --export");

  /* the file is opened before the topology is built (which can be long) */
  fs_output *out = NULL;
  if (outfile && fs__cli_output_open(outfile, &out)) return 2;
  fs_err err = {0, ""};
  fs_topo *t = NULL;
  int rc = fs_topo_from_spec(spec, &t, &err);
  if (rc) {
    fs_output_abort(out);
    return fs__cli_fail(&err);
  }
  if (export) {
    rc = fs_topo_export(t, export, out ? fs_output_file(out) : stdout, &err);
    fs_topo_free(t);
    if (rc) {
      fs_output_abort(out);
      return fs__cli_fail(&err);
    }
    if (out) return fs__cli_output_commit(out);
    if (fflush(stdout) != 0 || ferror(stdout)) {
      fprintf(stderr, "fabricsim: topo: error writing the export on stdout\n");
      return 1;
    }
    return 0;
  }
  fs_topo_stats st;
  extra e;
  fs_topo_cost cost;
  fs_topo_cost_compute(t, &cost);
  if ((rc = fs_topo_stats_compute(t, &st, &err))) goto fail_stats;
  if ((rc = extra_compute(t, &e, &err))) goto fail_stats;
  if (strcmp(format, "json") == 0)
    print_json(t, &st, &e, &cost);
  else
    print_text(t, &st, &e, &cost);
  extra_free(&e);
  fs_topo_free(t);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "fabricsim: topo: error writing output\n");
    return 1;
  }
  return 0;
fail_stats:
  fs_topo_free(t);
  return fs__cli_fail(&err);
}
