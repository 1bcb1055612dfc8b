/* The output of `fabricsim wan protect`: per protection scheme the
 * blocking, the spectrum cells held and their ratio to unprotected, the
 * job's availability, iteration time and expected completion time under
 * failures; each demand's routes and availability; a failure's outcome.
 * A table or one JSON object; O(schemes x demands x hops). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/report.h"

static void path_str(const fs_wan *w, const fs_wan_path *p, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = '\0';
  if (p->hops == 0) {
    snprintf(buf, n, "-");
    return;
  }
  for (int32_t i = 0; i <= p->hops && len + 1 < n; i++) {
    int k = snprintf(buf + len, n - len, "%s%s", i ? ">" : "", w->sites[p->nodes[i]].name);
    if (k < 0) break;
    len += (size_t)k;
  }
}

static const char *why(const fs_wan_pdemand *d) {
  if (d->status == FS_WAN_OK) return "ok";
  if (d->no_pair) return "no-pair";
  if (d->below_target) return "target";
  return fs_wan_status_name(d->status);
}

static double ratio(int64_t a, int64_t b) { return b > 0 ? (double)a / (double)b : NAN; }

/* Availability as "nines": -log10(1 - A). */
static double nines(double a) { return a < 1 ? -log10(1 - a) : INFINITY; }

static void summary_stats(const fs_wan_pplan *p, double *mean, double *min) {
  int32_t n = 0;
  *mean = 0;
  *min = NAN;
  for (int32_t i = 0; i < p->n_demands; i++) {
    if (p->d[i].status != FS_WAN_OK) continue;
    *mean += p->d[i].availability;
    if (!(*min <= p->d[i].availability)) *min = p->d[i].availability;
    n++;
  }
  *mean = n ? *mean / n : NAN;
}

int fs_report_wan_protect_table(FILE *f, const fs_report_wan_protect *r) {
  const fs_wan *w = r->w;
  const fs_wan_risks *k = r->risks;
  const fs_wan_pplan *p0 = r->schemes[0].plan;
  fprintf(f, "# fabricsim wan protect: %s: %d sites, %d fibres, %d SRLGs, %d independent risks\n",
          r->file, w->n_sites, w->n_fibres, w->risk ? w->risk->n_srlgs : 0, k->n);
  fprintf(f, "# %g cuts per 1000 km per year, MTTR %g h; routing %s, k = %d", k->rel.cuts_per_1000km_year,
          k->rel.repair_hours, p0->opts.routing == FS_WAN_ROUTE_RISK ? "risk" : "km", p0->opts.k);
  if (p0->opts.target > 0) fprintf(f, ", availability target %.9g", p0->opts.target);
  fprintf(f, "\n# unprotected by the same routing holds %lld cells (fibre x unit)\n\n",
          (long long)r->cells_none);
  fprintf(f, "%-6s %8s %8s %10s %8s %10s %10s %12s %12s\n", "scheme", "demands", "blocked",
          "cells", "ratio", "working", "backup", "mean_avail", "min_avail");
  for (int32_t s = 0; s < r->n_schemes; s++) {
    const fs_wan_pplan *p = r->schemes[s].plan;
    double mean, min;
    summary_stats(p, &mean, &min);
    fprintf(f, "%-6s %8d %8d %10lld %8.3f %10lld %10lld %12.8f %12.8f\n",
            fs_wan_prot_name(p->opts.scheme), p->n_demands, p->blocked, (long long)p->cells_used,
            ratio(p->cells_used, r->cells_none), (long long)p->cells_working,
            (long long)p->cells_backup, mean, min);
  }
  if (r->schemes[0].job) {
    const fs_wan_job_risk *j = r->schemes[0].job;
    fprintf(f, "\n# the job: %.0f iterations, checkpoint every %g min\n", j->iterations,
            j->checkpoint_minutes);
    fprintf(f, "%-6s %14s %6s %8s %12s %12s %12s %12s %12s\n", "scheme", "availability", "nines",
            "exact", "fails/yr", "iter_s", "base_h", "lost_h/h", "jct_h");
    for (int32_t s = 0; s < r->n_schemes; s++) {
      const fs_wan_job_risk *x = r->schemes[s].job;
      if (!x->provisioned) {
        fprintf(f, "%-6s %14s  (a ring pair blocked: the job cannot run)\n",
                fs_wan_prot_name(r->schemes[s].plan->opts.scheme), "-");
        continue;
      }
      fprintf(f, "%-6s %14.10f %6.2f %8s %12.4f %12.6f %12.4f %12.3e %12.4f\n",
              fs_wan_prot_name(r->schemes[s].plan->opts.scheme), x->availability,
              nines(x->availability), x->provisioned ? (x->exact ? "yes" : "bound") : "-",
              x->fails_per_hour * 8766, x->iter_s, x->base_hours, x->lost_per_hour, x->jct_hours);
    }
  }
  if (r->failure) {
    fprintf(f, "\n# failure: %s\n", r->failure);
    fprintf(f, "%-6s %9s %9s %6s %14s %12s\n", "scheme", "affected", "survived", "lost",
            "job_connected", "iter_after_s");
    for (int32_t s = 0; s < r->n_schemes; s++) {
      const fs_wan_failure_result *x = r->schemes[s].fail;
      fprintf(f, "%-6s %9d %9d %6d %14s %12.6f\n", fs_wan_prot_name(r->schemes[s].plan->opts.scheme),
              x->affected, x->survived, x->lost, x->job_connected ? "yes" : "no",
              r->schemes[s].fail_iter_s);
    }
  }
  for (int32_t s = 0; s < r->n_schemes; s++) {
    const fs_wan_pplan *p = r->schemes[s].plan;
    fprintf(f, "\n# %s: per demand\n", fs_wan_prot_name(p->opts.scheme));
    fprintf(f, "%-4s %-8s %-8s %8s %-8s %-28s %8s %-28s %8s %6s %6s %14s\n", "id", "src", "dst",
            "gbps", "status", "working", "km", "backup", "km", "wcells", "bcells", "availability");
    for (int32_t i = 0; i < p->n_demands; i++) {
      const fs_wan_pdemand *d = &p->d[i];
      char a[256], b[256];
      path_str(w, &d->work.path, a, sizeof(a));
      path_str(w, &d->backup.path, b, sizeof(b));
      fprintf(f, "%-4d %-8s %-8s %8g %-8s %-28s %8g %-28s %8g %6d %6d %14.10f%s\n", i,
              w->sites[p->demands[i].src].name, w->sites[p->demands[i].dst].name,
              p->demands[i].gbps, why(d), a, d->work.path.km, b, d->backup.path.km, d->work_cells,
              d->backup_cells, d->availability, p->demands[i].job ? "  job" : "");
    }
  }
  return ferror(f) ? FS_EIO : 0;
}

static void jnum(FILE *f, const char *key, double v, int comma) {
  char b[32];
  fs__fmt_num(b, v);
  fprintf(f, "\"%s\": %s%s", key, b, comma ? ", " : "");
}

static void jpath(FILE *f, const fs_wan *w, const char *key, const fs_wan_path *p) {
  fprintf(f, "\"%s\": [", key);
  for (int32_t i = 0; p->hops && i <= p->hops; i++) {
    if (i) fputs(", ", f);
    fs__fput_json_str(f, w->sites[p->nodes[i]].name);
  }
  fputs("], ", f);
}

int fs_report_wan_protect_json(FILE *f, const fs_report_wan_protect *r) {
  const fs_wan *w = r->w;
  const fs_wan_risks *k = r->risks;
  fputs("{\"file\": ", f);
  fs__fput_json_str(f, r->file);
  fprintf(f, ", \"sites\": %d, \"fibres\": %d, \"srlgs\": %d, \"risks\": %d, ", w->n_sites,
          w->n_fibres, w->risk ? w->risk->n_srlgs : 0, k->n);
  jnum(f, "cuts_per_1000km_year", k->rel.cuts_per_1000km_year, 1);
  jnum(f, "repair_hours", k->rel.repair_hours, 1);
  fprintf(f, "\"cells_unprotected\": %lld, \"schemes\": [", (long long)r->cells_none);
  for (int32_t s = 0; s < r->n_schemes; s++) {
    const fs_wan_pplan *p = r->schemes[s].plan;
    fprintf(f, "%s{\"scheme\": \"%s\", \"routing\": \"%s\", ", s ? ", " : "",
            fs_wan_prot_name(p->opts.scheme), p->opts.routing == FS_WAN_ROUTE_RISK ? "risk" : "km");
    jnum(f, "target", p->opts.target, 1);
    fprintf(f, "\"k\": %d, \"demands\": %d, \"blocked\": %d, \"cells\": %lld, ", p->opts.k,
            p->n_demands, p->blocked, (long long)p->cells_used);
    jnum(f, "cells_ratio", ratio(p->cells_used, r->cells_none), 1);
    fprintf(f, "\"cells_working\": %lld, \"cells_backup\": %lld, ", (long long)p->cells_working,
            (long long)p->cells_backup);
    if (r->schemes[s].job) {
      const fs_wan_job_risk *j = r->schemes[s].job;
      fprintf(f, "\"job\": {\"provisioned\": %s, \"exact\": %s, ", j->provisioned ? "true" : "false",
              j->exact ? "true" : "false");
      jnum(f, "availability", j->availability, 1);
      jnum(f, "fails_per_hour", j->fails_per_hour, 1);
      jnum(f, "iter_s", j->iter_s, 1);
      jnum(f, "iterations", j->iterations, 1);
      jnum(f, "checkpoint_minutes", j->checkpoint_minutes, 1);
      jnum(f, "base_hours", j->base_hours, 1);
      jnum(f, "lost_per_hour", j->lost_per_hour, 1);
      jnum(f, "jct_hours", j->jct_hours, 0);
      fputs("}, ", f);
    }
    if (r->schemes[s].fail) {
      const fs_wan_failure_result *x = r->schemes[s].fail;
      fputs("\"failure\": {\"what\": ", f);
      fs__fput_json_str(f, r->failure);
      fprintf(f, ", \"affected\": %d, \"survived\": %d, \"lost\": %d, \"job_connected\": %s, ",
              x->affected, x->survived, x->lost, x->job_connected ? "true" : "false");
      jnum(f, "iter_after_s", r->schemes[s].fail_iter_s, 0);
      fputs("}, ", f);
    }
    fputs("\"per_demand\": [", f);
    for (int32_t i = 0; i < p->n_demands; i++) {
      const fs_wan_pdemand *d = &p->d[i];
      fprintf(f, "%s{\"src\": ", i ? ", " : "");
      fs__fput_json_str(f, w->sites[p->demands[i].src].name);
      fputs(", \"dst\": ", f);
      fs__fput_json_str(f, w->sites[p->demands[i].dst].name);
      fprintf(f, ", \"job\": %s, ", p->demands[i].job ? "true" : "false");
      jnum(f, "gbps", p->demands[i].gbps, 1);
      fprintf(f, "\"status\": \"%s\", ", why(d));
      jpath(f, w, "working", &d->work.path);
      jnum(f, "working_km", d->work.path.km, 1);
      jpath(f, w, "backup", &d->backup.path);
      jnum(f, "backup_km", d->backup.path.km, 1);
      fprintf(f, "\"working_cells\": %d, \"backup_cells\": %d, ", d->work_cells, d->backup_cells);
      jnum(f, "availability", d->availability, 0);
      fputs("}", f);
    }
    fputs("]}", f);
  }
  fputs("]}\n", f);
  return ferror(f) ? FS_EIO : 0;
}
