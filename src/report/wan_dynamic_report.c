/* The output of `fabricsim wan dynamic`: one row per offered load
 * (blocking with its confidence interval, beside the closed form where one
 * exists, blocking by cause, fragmentation, occupancy per band and core),
 * as a table, JSON or CSV. O(loads x (bands + cores)). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/html.h"
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
  if (d->job) {
    int32_t worst = 0;
    for (int32_t i = 0; i < d->n; i++)
      if (d->points[i].fixed_blocked > worst) worst = d->points[i].fixed_blocked;
    fprintf(f, "%sthe job's %d ring demands hold their lightpaths throughout, ", lead,
            d->job_demands);
    if (strcmp(d->job, "slice") == 0)
      fprintf(f, "in its slice (units %d-%d of every core, kept from the others)", d->slice_first,
              d->slice_first + d->slice_count - 1);
    else
      fprintf(f, "on the shared spectrum");
    if (worst)
      fprintf(f, "; %d could not be provisioned (the most in a seed)", worst);
    else
      fprintf(f, "; all provisioned");
    fprintf(f, "; the blocking is the other tenants'\n");
  }
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
    fputs("]", f);
    if (d->job) fprintf(f, ", \"job_not_provisioned\": %d", p->fixed_blocked);
    fputs("}", f);
  }
  fputs("\n ]", f);
  if (d->job) {
    fprintf(f, ",\n \"job\": {\"mode\": \"%s\", \"demands\": %d", d->job, d->job_demands);
    if (d->slice_count > 0)
      fprintf(f, ", \"slice_first\": %d, \"slice_count\": %d", d->slice_first, d->slice_count);
    fputs("}", f);
  }
  fputs("}\n", f);
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

/* ---- the HTML page ---- */
enum { PAGE_COLS = 7 };

int fs_report_wan_dynamic_html(FILE *f, const fs_report_wan_dynamic *d) {
  int32_t n = d->n;
  const fs_wan_sdm *s = d->s;
  int analytic = n > 0 && !isnan(d->points[0].analytic_pb);
  double *x = malloc((size_t)(n + 1) * sizeof(double));
  double *y = malloc((size_t)(n + 1) * 5 * sizeof(double));
  char(*cells)[PAGE_COLS][48] = malloc((size_t)(n + 1) * sizeof(*cells));
  const char **cp = malloc((size_t)(n + 1) * PAGE_COLS * sizeof(*cp));
  if (!x || !y || !cells || !cp) {
    FS__FREE_ALL(x, y, cells, cp);
    return FS_ENOMEM;
  }
  char title[400], sub[300];
  snprintf(title, sizeof(title), "fabricsim wan dynamic: %s", d->file);
  snprintf(sub, sizeof(sub), "%d sites, %d fibres of %d core%s (%s), %d band%s, %s, k = %d, %lld "
           "arrivals per seed", d->w->n_sites, d->w->n_fibres, s->cores, s->cores > 1 ? "s" : "",
           fs_wan_layout_name(s->layout), s->n_bands, s->n_bands > 1 ? "s" : "",
           fs_wan_policy_name(d->policy), d->k, (long long)d->requests);
  fs_html h;
  fs_html_begin(&h, f, title, sub);
  for (int32_t i = 0; i < n; i++) {
    const fs_wan_dyn_point *p = &d->points[i];
    snprintf(cells[i][0], 48, "%.6g", p->load_erlang);
    snprintf(cells[i][1], 48, "%.5g ± %.2g", p->pb, p->pb_ci);
    if (analytic) snprintf(cells[i][2], 48, "%.5g", p->analytic_pb);
    else snprintf(cells[i][2], 48, "-");
    snprintf(cells[i][3], 48, "%.5g ± %.2g", p->bbr, p->bbr_ci);
    snprintf(cells[i][4], 48, "%lld / %lld / %lld", (long long)p->blocked_xt,
             (long long)p->blocked_spectrum, (long long)p->blocked_reach);
    snprintf(cells[i][5], 48, "%.4f", p->frag);
    fs_html_thousands(cells[i][6], 48, (double)p->requests, 0);
    for (int c = 0; c < PAGE_COLS; c++) cp[i * PAGE_COLS + c] = cells[i][c];
    x[i] = p->load_erlang;
    y[i] = p->pb;
    y[n + i] = p->analytic_pb;
    y[2 * n + i] = p->bbr;
    y[3 * n + i] = p->frag;
  }
  static const char *const head[PAGE_COLS] = {
      "load (Erlang)", "blocking ± 95 %", "closed form", "bandwidth blocking ± 95 %",
      "blocked by crosstalk / spectrum / reach", "fragmentation", "requests"};
  char note[200];
  snprintf(note, sizeof(note), "Each load over %d independent seeds; ± is the 95 %% confidence "
           "half-width (t distribution). The closed form is Erlang B or Kaufman-Roberts where it "
           "applies (one fibre, one core).", n ? d->points[0].seeds : 0);
  fs_html_section(&h, "Blocking against the offered load", note);
  fs_html_table(&h, head, PAGE_COLS, cp, n);
  if (n >= 2) {
    fs_html_series sb[2] = {{"simulated", x, y, n, 0, 0},
                            {analytic ? "closed form" : "", x, y + n, n, 1, 0}};
    fs_html_axes ab = {"Blocking probability vs offered load", "offered load (Erlang)",
                       "blocking probability", 0, 0, 0, 0};
    fs_html_lines(&h, &ab, sb, analytic ? 2 : 1);
    fs_html_series sw[2] = {{"bandwidth blocking", x, y + 2 * n, n, 0, 0},
                            {"fragmentation", x, y + 3 * n, n, 0, 0}};
    fs_html_axes aw = {"Bandwidth blocking and spectrum fragmentation vs offered load",
                       "offered load (Erlang)", "ratio", 0, 0, 0, 0};
    fs_html_lines(&h, &aw, sw, 2);
  }
  if (n >= 1) {
    const fs_wan_dyn_point *p = &d->points[n - 1];
    char lab[FS_WAN_MAX_CORES + FS_WAN_MAX_BANDS][32];
    const char *lp[FS_WAN_MAX_CORES + FS_WAN_MAX_BANDS];
    double v[FS_WAN_MAX_CORES + FS_WAN_MAX_BANDS];
    char sec[120];
    snprintf(sec, sizeof(sec), "Occupancy at %.6g Erlang", p->load_erlang);
    fs_html_section(&h, sec, "The mean share of the units in use over the counted arrivals.");
    for (int32_t b = 0; b < p->n_bands; b++) {
      snprintf(lab[b], sizeof(lab[b]), "%s band", s->bands[b].name);
      lp[b] = lab[b];
      v[b] = 100 * p->band_occ[b];
    }
    fs_html_bars(&h, "Occupancy per band", "%", lp, v, p->n_bands);
    if (p->cores > 1) {
      for (int32_t c = 0; c < p->cores; c++) {
        snprintf(lab[c], sizeof(lab[c]), "core %d", c);
        lp[c] = lab[c];
        v[c] = 100 * p->core_occ[c];
      }
      fs_html_bars(&h, "Occupancy per core", "%", lp, v, p->cores);
    }
  }
  FS__FREE_ALL(x, y, cells, cp);
  return fs_html_end(&h);
}
