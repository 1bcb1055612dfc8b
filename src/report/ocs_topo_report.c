/* The outputs of `fabricsim ocs topo`: the TopoOpt fabric found for a job
 * (its rings and circuits) and the rows comparing it with the random,
 * exact and electrical fabrics (iteration time, cost, power, the matrix
 * objective), as a table or JSON. The circuit list is O(servers^2) to scan
 * and O(servers x degree) long: a few thousand entries at most. */
#include <math.h>
#include <stdio.h>

#include "../base/base.h"
#include "fabricsim/report.h"

static void num(char *buf, double v) { fs__fmt_num(buf, v); }

int fs_report_ocs_topo_json(FILE *f, const fs_report_ocs_topo *o) {
  const fs_topoopt_traffic *tr = o->tr;
  const fs_topoopt_graph *g = o->g;
  const fs_report_ocs_topo_row *rows = o->rows;
  int32_t nr = o->n_rows;
  char b[32];
  double ar = 0, mp = 0;
  for (size_t i = 0; i < (size_t)tr->n * (size_t)tr->n; i++) ar += tr->ar[i], mp += tr->mp[i];
  fprintf(f, "{\"job\": ");
  fs__fput_json_str(f, o->file);
  fprintf(f, ", \"servers\": %d, \"degree\": %d, ", g->n, g->degree);
  num(b, o->gbps);
  fprintf(f, "\"gbps\": %s, \"switch\": \"%s\", ", b, o->sw);
  num(b, ar);
  fprintf(f, "\"allreduce_bytes\": %s, ", b);
  num(b, mp);
  fprintf(f, "\"mp_bytes\": %s, \"rings\": [", b);
  for (int32_t i = 0; i < g->n_rings; i++)
    fprintf(f, "%s{\"group\": %d, \"stride\": %d}", i ? ", " : "", g->ring_group[i],
            g->ring_stride[i]);
  fprintf(f, "], \"circuits\": [");
  int first = 1;
  for (int32_t u = 0; u < g->n; u++)
    for (int32_t v = u + 1; v < g->n; v++)
      if (g->mult[(size_t)u * g->n + v]) {
        fprintf(f, "%s[%d, %d, %d]", first ? "" : ", ", u, v, g->mult[(size_t)u * g->n + v]);
        first = 0;
      }
  fprintf(f, "], \"fabrics\": [");
  double base = rows[0].iter_s;
  for (int32_t i = 0; i < nr; i++) {
    const fs_report_ocs_topo_row *r = &rows[i];
    fprintf(f, "%s{\"fabric\": \"%s\", \"description\": ", i ? ", " : "", r->name);
    fs__fput_json_str(f, r->desc);
    num(b, r->trained ? r->iter_s : NAN);
    fprintf(f, ", \"iter_s\": %s", b);
    num(b, r->trained && rows[0].trained ? r->iter_s / base : NAN);
    fprintf(f, ", \"vs_topoopt\": %s", b);
    num(b, r->usd);
    fprintf(f, ", \"cost_usd\": %s", b);
    num(b, r->watts);
    fprintf(f, ", \"power_w\": %s", b);
    num(b, r->matrix_s);
    fprintf(f, ", \"matrix_s\": %s", b);
    if (r->note[0]) {
      fprintf(f, ", \"note\": ");
      fs__fput_json_str(f, r->note);
    }
    fprintf(f, "}");
  }
  fprintf(f, "]}\n");
  return ferror(f) ? FS_EIO : 0;
}

int fs_report_ocs_topo_table(FILE *f, const fs_report_ocs_topo *o) {
  const fs_topoopt_traffic *tr = o->tr;
  const fs_topoopt_graph *g = o->g;
  const fs_report_ocs_topo_row *rows = o->rows;
  int32_t nr = o->n_rows;
  double ar = 0, mp = 0;
  for (size_t i = 0; i < (size_t)tr->n * (size_t)tr->n; i++) ar += tr->ar[i], mp += tr->mp[i];
  fprintf(f, "job:       %s\n", o->file);
  fprintf(f, "fabric:    %d servers, %d optical ports x %g Gb/s each, %s\n", g->n, g->degree,
          o->gbps, o->sw);
  fprintf(f,
          "traffic:   %.6g GB all-reduce + %.6g GB model-parallel per iteration (%d ring "
          "groups)\n",
          ar / 1e9, mp / 1e9, tr->n_groups);
  fprintf(f, "rings:     ");
  if (g->n_rings == 0) fprintf(f, "none");
  for (int32_t i = 0; i < g->n_rings; i++)
    fprintf(f, "%sgroup %d stride %d", i ? ", " : "", g->ring_group[i], g->ring_stride[i]);
  fprintf(f, "\n\n%-10s %12s %8s %12s %10s %12s  %s\n", "fabric", "iter_s", "ratio", "cost_usd",
          "power_w", "matrix_s", "description");
  for (int32_t i = 0; i < nr; i++) {
    const fs_report_ocs_topo_row *r = &rows[i];
    char it[32] = "-", ra[32] = "-", mx[32] = "-";
    if (r->trained) snprintf(it, sizeof(it), "%.6g", r->iter_s);
    if (r->trained && rows[0].trained) snprintf(ra, sizeof(ra), "%.3f", r->iter_s / rows[0].iter_s);
    if (!isnan(r->matrix_s)) snprintf(mx, sizeof(mx), "%.6g", r->matrix_s);
    fprintf(f, "%-10s %12s %8s %12.0f %10.0f %12s  %s\n", r->name, it, ra, r->usd, r->watts, mx,
            r->desc);
    if (r->note[0]) fprintf(f, "%-10s note: %s\n", "", r->note);
  }
  fprintf(f,
          "\nratio = iteration time / topoopt's; matrix_s = the objective (time to carry the\n"
          "iteration's server matrix with optimal multipath routing); costs are estimates\n"
          "(docs/model-topoopt.md).\n");
  return ferror(f) ? FS_EIO : 0;
}
