/* The output of `fabricsim wan dynamic`: one row per offered load
 * (blocking with its confidence interval, beside the closed form where one
 * exists, blocking by cause, fragmentation, occupancy per band and core),
 * as a table, JSON or CSV. O(loads x (bands + cores)). */
#include <math.h>
#include <stdio.h>

#include "../base/base.h"
#include "fabricsim/report.h"

static void num(FILE *f, double v) {
  char b[32];
  fs__fmt_num(b, v);
  fputs(b, f);
}

static void header(FILE *f, const fs_report_wan_dynamic *d, const char *lead) {
  const fs_wan_sdm *s = d->s;
  fprintf(f, "%sfabricsim wan dynamic: %s: %d sites, %d fibres, %d core%s (%s)", lead, d->file,
          d->w->n_sites, d->w->n_fibres, s->cores, s->cores == 1 ? "" : "s",
          fs_wan_layout_name(s->layout));
  for (int32_t b = 0; b < s->n_bands; b++)
    fprintf(f, "%s%s %d", b ? ", " : "; bands ", s->bands[b].name, s->bands[b].slots);
  fprintf(f, " %s\n", d->w->grid.kind == FS_WAN_FIXED ? "wavelengths" : "slots");
  fprintf(f, "%s%s, k = %d, %lld arrivals per seed (first tenth warm-up), seed %llu", lead,
          fs_wan_policy_name(d->policy), d->k, (long long)d->requests,
          (unsigned long long)d->seed);
  if (s->cores > 1) fprintf(f, ", XT h = %.4g /m", s->h_per_m);
  fputc('\n', f);
}

int fs_report_wan_dynamic_table(FILE *f, const fs_report_wan_dynamic *d) {
  header(f, d, "# ");
  int analytic = d->n > 0 && !isnan(d->points[0].analytic_pb);
  fprintf(f, "%10s %5s %9s %11s %9s%s %11s %9s %7s %7s %7s %7s", "erlang", "seeds", "requests",
          "blocking", "+-95%", analytic ? "   analytic" : "", "bw-block", "+-95%", "xt", "spectr",
          "reach", "frag");
  for (int32_t b = 0; b < d->s->n_bands; b++) fprintf(f, "  occ-%-3s", d->s->bands[b].name);
  for (int32_t c = 0; c < d->s->cores && d->s->cores > 1; c++) fprintf(f, " core%-3d", c);
  fputc('\n', f);
  for (int32_t i = 0; i < d->n; i++) {
    const fs_wan_dyn_point *p = &d->points[i];
    fprintf(f, "%10.4g %5d %9lld %11.5g %9.3g", p->load_erlang, p->seeds, (long long)p->requests,
            p->pb, p->pb_ci);
    if (analytic) fprintf(f, " %10.5g", p->analytic_pb);
    fprintf(f, " %11.5g %9.3g %7lld %7lld %7lld %7.4f", p->bbr, p->bbr_ci,
            (long long)p->blocked_xt, (long long)p->blocked_spectrum, (long long)p->blocked_reach,
            p->frag);
    for (int32_t b = 0; b < p->n_bands; b++) fprintf(f, "  %7.4f", p->band_occ[b]);
    for (int32_t c = 0; c < p->cores && p->cores > 1; c++) fprintf(f, " %7.4f", p->core_occ[c]);
    fputc('\n', f);
  }
  return ferror(f) ? FS_EIO : 0;
}

int fs_report_wan_dynamic_json(FILE *f, const fs_report_wan_dynamic *d) {
  const fs_wan_sdm *s = d->s;
  fputs("{\"file\": ", f);
  fs__fput_json_str(f, d->file);
  fprintf(f, ", \"sites\": %d, \"fibres\": %d, \"cores\": %d, \"layout\": \"%s\", \"h_per_m\": ",
          d->w->n_sites, d->w->n_fibres, s->cores, fs_wan_layout_name(s->layout));
  num(f, s->h_per_m);
  fprintf(f, ", \"policy\": \"%s\", \"k\": %d, \"requests_per_seed\": %lld, \"seed\": %llu,\n",
          fs_wan_policy_name(d->policy), d->k, (long long)d->requests, (unsigned long long)d->seed);
  fputs(" \"bands\": [", f);
  for (int32_t b = 0; b < s->n_bands; b++) {
    fprintf(f, "%s{\"name\": \"%s\", \"slots\": %d, \"reach_km\": [", b ? ", " : "",
            s->bands[b].name, s->bands[b].slots);
    for (int32_t m = 0; m < d->w->n_mods; m++) {
      if (m) fputs(", ", f);
      num(f, s->bands[b].reach_km[m]);
    }
    fputs("]}", f);
  }
  fputs("],\n \"points\": [", f);
  for (int32_t i = 0; i < d->n; i++) {
    const fs_wan_dyn_point *p = &d->points[i];
    fputs(i ? ",\n  {" : "\n  {", f);
    const char *k[] = {"erlang", "blocking", "blocking_ci95", "analytic_blocking",
                       "bandwidth_blocking", "bandwidth_blocking_ci95", "analytic_bandwidth_blocking",
                       "fragmentation", "fragmentation_ci95"};
    double v[] = {p->load_erlang, p->pb, p->pb_ci, p->analytic_pb, p->bbr, p->bbr_ci,
                  p->analytic_bbr, p->frag, p->frag_ci};
    for (size_t j = 0; j < sizeof(v) / sizeof(v[0]); j++) {
      fprintf(f, "\"%s\": ", k[j]);
      num(f, v[j]);
      fputs(", ", f);
    }
    fprintf(f, "\"seeds\": %d, \"requests\": %lld, \"blocked_xt\": %lld, \"blocked_spectrum\": %lld, "
               "\"blocked_reach\": %lld, \"band_occupancy\": [",
            p->seeds, (long long)p->requests, (long long)p->blocked_xt,
            (long long)p->blocked_spectrum, (long long)p->blocked_reach);
    for (int32_t b = 0; b < p->n_bands; b++) {
      if (b) fputs(", ", f);
      num(f, p->band_occ[b]);
    }
    fputs("], \"core_occupancy\": [", f);
    for (int32_t c = 0; c < p->cores; c++) {
      if (c) fputs(", ", f);
      num(f, p->core_occ[c]);
    }
    fputs("]}", f);
  }
  fputs("\n ]}\n", f);
  return ferror(f) ? FS_EIO : 0;
}

int fs_report_wan_dynamic_csv(FILE *f, const fs_report_wan_dynamic *d) {
  fputs("erlang,seeds,requests,blocking,blocking_ci95,analytic_blocking,bandwidth_blocking,"
        "bandwidth_blocking_ci95,analytic_bandwidth_blocking,blocked_xt,blocked_spectrum,"
        "blocked_reach,fragmentation,fragmentation_ci95",
        f);
  for (int32_t b = 0; b < d->s->n_bands; b++) fprintf(f, ",occupancy_%s", d->s->bands[b].name);
  for (int32_t c = 0; c < d->s->cores; c++) fprintf(f, ",occupancy_core%d", c);
  fputc('\n', f);
  for (int32_t i = 0; i < d->n; i++) {
    const fs_wan_dyn_point *p = &d->points[i];
    double v[] = {p->load_erlang, p->seeds, (double)p->requests, p->pb, p->pb_ci,
                  p->analytic_pb, p->bbr, p->bbr_ci, p->analytic_bbr, (double)p->blocked_xt,
                  (double)p->blocked_spectrum, (double)p->blocked_reach, p->frag, p->frag_ci};
    for (size_t j = 0; j < sizeof(v) / sizeof(v[0]); j++) {
      if (j) fputc(',', f);
      if (!isnan(v[j])) num(f, v[j]); /* empty field: not applicable */
    }
    for (int32_t b = 0; b < p->n_bands; b++) {
      fputc(',', f);
      num(f, p->band_occ[b]);
    }
    for (int32_t c = 0; c < p->cores; c++) {
      fputc(',', f);
      num(f, p->core_occ[c]);
    }
    fputc('\n', f);
  }
  return ferror(f) ? FS_EIO : 0;
}
