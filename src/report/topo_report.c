/* The outputs of `fabricsim topo`: a topology's size, link speeds, hop
 * counts, bisection and cost estimate, as aligned "key: value" text or as
 * one JSON object (snake_case keys). They read fs_topo_stats and
 * fs_topo_cost, computed by the caller, and derive from the graph what only
 * the report shows (switch tiers, radix per tier, distinct link speeds):
 * O(nodes + links log links) time and memory, freed before returning, which
 * is small beside the stats' all-pairs hop counts at 10^5 hosts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/report.h"

/* What the report shows beyond fs_topo_stats; derived from the links. */
typedef struct extra {
  int32_t *tiers;    /* distinct switch tiers, ascending */
  int32_t *per_tier; /* switch count of tiers[i] */
  int32_t n_tiers;
  int32_t *radix_min, *radix_max; /* per tier */
  int32_t kinds[6];               /* nodes per fs_node_kind */
  double *speeds_bps;             /* distinct link capacities, ascending */
  int32_t n_speeds;
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
  FS__FREE_ALL(e->radix_min, e->radix_max, e->tiers, e->per_tier, e->speeds_bps);
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

static void print_text(FILE *f, const fs_topo *t, const fs_topo_stats *s, const extra *e,
                       const fs_topo_cost *c) {
  char a[32], b[32];
  fprintf(f, "%-20s %s\n", "family:", t->family);
  fprintf(f, "%-20s %s\n", "spec:", t->spec);
  fprintf(f, "%-20s %d\n", "nodes:", s->nodes);
  fprintf(f, "%-20s %d\n", "hosts:", s->hosts);
  if (s->gpus_per_node > 1) {
    fprintf(f, "%-20s %d (%d GPUs each)\n", "servers:", s->servers, s->gpus_per_node);
    fprintf(f, "%-20s %d\n", "NICs:", s->nics);
    fprintf(f, "%-20s %d\n", "scale-up switches:", s->scaleup_switches);
  }
  fprintf(f, "%-20s %d", "switches:", s->switches);
  for (int32_t i = 0; i < e->n_tiers; i++)
    fprintf(f, "%stier%d %d", i == 0 ? " (" : ", ", e->tiers[i], e->per_tier[i]);
  fprintf(f, "%s\n", e->n_tiers ? ")" : "");
  fprintf(f, "%-20s", "nodes by kind:");
  for (int k = 0, first = 1; k < 6; k++)
    if (e->kinds[k]) {
      fprintf(f, "%s%s %d", first ? " " : ", ", kind_names[k], e->kinds[k]);
      first = 0;
    }
  fprintf(f, "\n");
  if (e->n_tiers) {
    fprintf(f, "%-20s", "radix by tier:");
    for (int32_t i = 0; i < e->n_tiers; i++) {
      if (e->radix_min[i] == e->radix_max[i])
        fprintf(f, "%stier%d %d", i ? ", " : " ", e->tiers[i], e->radix_max[i]);
      else
        fprintf(f, "%stier%d %d-%d", i ? ", " : " ", e->tiers[i], e->radix_min[i], e->radix_max[i]);
    }
    fprintf(f, "\n");
  }
  fprintf(f, "%-20s %d\n", "cables:", s->cables);
  fprintf(f, "%-20s %d\n", "directed links:", s->links);
  fprintf(f, "%-20s %d\n", "max switch radix:", s->max_radix);
  fprintf(f, "%-20s", "link speeds:");
  for (int32_t i = 0; i < e->n_speeds; i++) {
    fs__fmt_num(a, e->speeds_bps[i] / 1e9);
    fprintf(f, "%s%s", i ? ", " : " ", a);
  }
  fprintf(f, "%s\n", e->n_speeds ? " Gbps" : " none");
  fs__fmt_num(a, s->host_injection_bps / 1e9);
  fprintf(f, "%-20s %s Gbps\n", "host injection:", a);
  if (s->gpus_per_node > 1) {
    fs__fmt_num(a, s->scaleup_bps / 1e9);
    fprintf(f, "%-20s %s Gbps\n", "scale-up bandwidth:", a);
  }
  fprintf(f, "%-20s %d hops\n", "diameter:", s->diameter_hops);
  fprintf(f, "%-20s %.4f hops\n", "average hops:", s->avg_hops);
  fs__fmt_num(a, s->bisection_bps / 1e9);
  fs__fmt_num(b, s->full_bisection_bps / 1e9);
  if (s->full_bisection_bps > 0)
    fprintf(f, "%-20s %s Gbps (%.1f%% of full %s Gbps)\n", "bisection:", a,
            100 * s->bisection_bps / s->full_bisection_bps, b);
  else
    fprintf(f, "%-20s %s Gbps\n", "bisection:", a);
  double formula = fs_topo_bisection_formula(t);
  if (formula >= 0) {
    fs__fmt_num(a, formula / 1e9);
    fprintf(f, "%-20s %s Gbps (%s the max-flow)\n", "bisection formula:", a,
            fabs(formula - s->bisection_bps) <= 1e-9 * formula ? "agrees with" : "DIFFERS from");
  }
  if (s->bisection_bps > 0)
    fprintf(f, "%-20s %.3g:1\n", "oversubscription:", s->full_bisection_bps / s->bisection_bps);
  else
    fprintf(f, "%-20s n/a\n", "oversubscription:");
  fprintf(f, "%-20s $%.0f, %.1f kW (estimate, docs/model.md)\n", "network cost:", c->usd,
          c->watts / 1e3);
  for (int k = 0; k < FS_PART_COUNT; k++)
    if (c->part[k].count)
      fprintf(f, "  %-18s %lld x, $%.0f, %.0f W\n", fs_cost_part_name((fs_cost_part_kind)k),
              (long long)c->part[k].count, c->part[k].usd, c->part[k].watts);
  if (c->fiber_m > 0) fprintf(f, "  %-18s %.0f m, $%.0f\n", "fiber", c->fiber_m, c->fiber_usd);
  /* gratings, OCS ports, optical I/O chiplets (docs/model.md, "Optical fabrics") */
  if (c->optical_usd > 0 || c->optical_watts > 0)
    fprintf(f, "  %-18s $%.0f, %.0f W\n", "optical parts", c->optical_usd, c->optical_watts);
}

static void print_json(FILE *f, const fs_topo *t, const fs_topo_stats *s, const extra *e,
                       const fs_topo_cost *c) {
  char a[32];
  /* family and spec come from the builders, but escape anyway: the report
   * must stay valid JSON whatever a future family writes there. */
  fprintf(f, "{\"family\": ");
  fs__fput_json_str(f, t->family);
  fprintf(f, ", \"spec\": ");
  fs__fput_json_str(f, t->spec);
  fprintf(f, ", \"nodes\": %d, \"hosts\": %d, \"switches\": %d", s->nodes, s->hosts, s->switches);
  fs__fmt_num(a, s->scaleup_bps / 1e9);
  fprintf(f,
          ", \"gpus_per_node\": %d, \"servers\": %d, \"nics\": %d, \"scaleup_switches\": %d"
          ", \"scaleup_gbps\": %s",
          s->gpus_per_node, s->servers, s->nics, s->scaleup_switches, a);
  fprintf(f, ", \"switches_by_tier\": {");
  for (int32_t i = 0; i < e->n_tiers; i++)
    fprintf(f, "%s\"tier%d\": %d", i ? ", " : "", e->tiers[i], e->per_tier[i]);
  fprintf(f, "}, \"radix_by_tier\": {");
  for (int32_t i = 0; i < e->n_tiers; i++)
    fprintf(f, "%s\"tier%d\": {\"min\": %d, \"max\": %d}", i ? ", " : "", e->tiers[i],
            e->radix_min[i], e->radix_max[i]);
  fprintf(f, "}, \"nodes_by_kind\": {");
  for (int k = 0, first = 1; k < 6; k++)
    if (e->kinds[k]) {
      fprintf(f, "%s\"%s\": %d", first ? "" : ", ", kind_names[k], e->kinds[k]);
      first = 0;
    }
  fprintf(f, "}, \"cables\": %d, \"links\": %d, \"max_radix\": %d", s->cables, s->links,
          s->max_radix);
  fprintf(f, ", \"link_speeds_gbps\": [");
  for (int32_t i = 0; i < e->n_speeds; i++) {
    fs__fmt_num(a, e->speeds_bps[i] / 1e9);
    fprintf(f, "%s%s", i ? ", " : "", a);
  }
  fs__fmt_num(a, s->host_injection_bps / 1e9);
  fprintf(f, "], \"host_injection_gbps\": %s", a);
  fprintf(f, ", \"diameter_hops\": %d", s->diameter_hops);
  fs__fmt_num(a, s->avg_hops);
  fprintf(f, ", \"avg_hops\": %s", a);
  fs__fmt_num(a, s->bisection_bps / 1e9);
  fprintf(f, ", \"bisection_gbps\": %s", a);
  fs__fmt_num(a, s->full_bisection_bps / 1e9);
  fprintf(f, ", \"full_bisection_gbps\": %s", a);
  /* fs__fmt_num turns the 0/0 and x/0 of host-less cuts into null. */
  fs__fmt_num(a, s->full_bisection_bps > 0 ? s->bisection_bps / s->full_bisection_bps : NAN);
  fprintf(f, ", \"bisection_fraction\": %s", a);
  fs__fmt_num(a, s->bisection_bps > 0 ? s->full_bisection_bps / s->bisection_bps : NAN);
  fprintf(f, ", \"oversubscription\": %s", a);
  double formula = fs_topo_bisection_formula(t);
  fs__fmt_num(a, formula >= 0 ? formula / 1e9 : NAN);
  fprintf(f, ", \"bisection_formula_gbps\": %s", a);
  fprintf(f, ", \"cost\": {\"usd\": %.2f, \"watts\": %.2f, \"fiber_m\": %.2f, \"fiber_usd\": %.2f",
          c->usd, c->watts, c->fiber_m, c->fiber_usd);
  for (int k = 0; k < FS_PART_COUNT; k++)
    fprintf(f, ", \"%s\": {\"count\": %lld, \"usd\": %.2f, \"watts\": %.2f}",
            fs_cost_part_name((fs_cost_part_kind)k), (long long)c->part[k].count, c->part[k].usd,
            c->part[k].watts);
  if (c->optical_usd > 0 || c->optical_watts > 0)
    fprintf(f, ", \"optical\": {\"usd\": %.2f, \"watts\": %.2f}", c->optical_usd,
            c->optical_watts);
  fprintf(f, "}}\n");
}

typedef void (*print_fn)(FILE *f, const fs_topo *t, const fs_topo_stats *s, const extra *e,
                         const fs_topo_cost *c);

static int report(FILE *f, const fs_topo *t, const fs_topo_stats *s, const fs_topo_cost *c,
                  print_fn print, fs_err *err) {
  extra e;
  int rc = extra_compute(t, &e, err);
  if (rc) return rc;
  print(f, t, s, &e, c);
  extra_free(&e);
  return ferror(f) ? fs_err_set(err, FS_EIO, "error writing output") : 0;
}

int fs_report_topo_text(FILE *f, const fs_topo *t, const fs_topo_stats *s, const fs_topo_cost *c,
                        fs_err *err) {
  return report(f, t, s, c, print_text, err);
}

int fs_report_topo_json(FILE *f, const fs_topo *t, const fs_topo_stats *s, const fs_topo_cost *c,
                        fs_err *err) {
  return report(f, t, s, c, print_json, err);
}
