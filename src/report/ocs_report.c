/* The outputs of `fabricsim ocs schedule`: each schedule's completion,
 * reconfigurations, bound and (hybrid rows) EPS share at one delay, or
 * swept over the delays, as a table or JSON; and the HTML page of one
 * schedule's circuits over time. They read the rows the CLI timed
 * (fs_ocs_result per algorithm and delay): at most 5 rows x 17 delays, so
 * cost is nothing beside the decompositions that made them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/html.h"
#include "fabricsim/report.h"

static void fmt_time(char *buf, size_t n, double s) {
  if (!isfinite(s))
    snprintf(buf, n, "-");
  else
    snprintf(buf, n, "%.6g", s * 1e3);
}

static void fmt_delay(char *buf, size_t n, double s) {
  if (s == 0)
    snprintf(buf, n, "0");
  else if (s < 1e-6)
    snprintf(buf, n, "%.3g ns", s * 1e9);
  else if (s < 1e-3)
    snprintf(buf, n, "%.3g us", s * 1e6);
  else if (s < 1)
    snprintf(buf, n, "%.3g ms", s * 1e3);
  else
    snprintf(buf, n, "%.3g s", s);
}

static void fmt_share(char *buf, size_t n, const fs_ocs_result *r) {
  double tot = r->circuit_bytes + r->eps_bytes;
  snprintf(buf, n, "%.1f%%", tot > 0 ? 100 * r->eps_bytes / tot : 0.0);
}

/* The threshold rule as the tables' header says it. */
static void fmt_threshold(char *buf, size_t n, const fs_report_ocs_schedule *s) {
  if (s->threshold == FS_REPORT_EPS_AUTO)
    snprintf(buf, n, "auto (balance)");
  else if (s->threshold == FS_REPORT_EPS_DELAY)
    snprintf(buf, n, "= the delay");
  else
    fmt_delay(buf, n, s->threshold_s);
}

static void jnum(FILE *f, const char *key, double v, int comma) {
  char b[32];
  fs__fmt_num(b, v);
  fprintf(f, "\"%s\": %s%s", key, b, comma ? ", " : "");
}

int fs_report_ocs_schedule_table(FILE *f, const fs_report_ocs_schedule *s) {
  const fs_ocs_params p = s->p;
  int hyb = s->hybrid;
  char dl[32], thr_txt[48];
  fmt_delay(dl, sizeof(dl), p.delay_s);
  fmt_threshold(thr_txt, sizeof(thr_txt), s);
  fprintf(f,
          "# fabricsim ocs schedule: %s, %d nodes, %d phase%s, %g Gb/s circuits, degree %d,\n"
          "# reconfiguration delay %s (%s dark); times in ms\n",
          s->file, s->nodes, s->phases, s->phases > 1 ? "s" : "", p.gbps, p.degree, dl,
          p.all_stop ? "all circuits" : "changed circuits");
  if (hyb)
    fprintf(f,
            "# hybrid rows: EPS port of %g Gb/s per node beside the circuits, threshold %s, "
            "%s\n",
            s->eps_gbps, thr_txt,
            p.eps_residual_only ? "EPS carries pairs with no circuit left"
                                : "EPS carries every pair without a live circuit");
  fprintf(f,
          hyb ? "%-12s %13s %13s %9s %12s %12s %9s %7s %10s %9s %10s %6s\n"
              : "%-9s %13s %13s %9s %12s %12s %9s %7s %10s\n",
          "algo", "completion", "schedule", "reconfigs", "reconfig", "lower_bound", "vs_bound",
          "util", "vs_static", "eps_share", "eps_busy", "to_eps");
  for (int32_t i = 0; i < s->n_rows; i++) {
    const fs_ocs_result *r = &s->rows[i].r;
    char c1[32], c2[32], c3[32], c4[32], vs[32];
    fmt_time(c1, sizeof(c1), r->completion_s);
    fmt_time(c2, sizeof(c2), r->schedule_s);
    fmt_time(c3, sizeof(c3), r->reconfig_s);
    fmt_time(c4, sizeof(c4), r->lower_bound_s);
    if (s->static_row >= 0 && r->completion_s > 0)
      snprintf(vs, sizeof(vs), "%.3fx", s->rows[s->static_row].r.completion_s / r->completion_s);
    else
      snprintf(vs, sizeof(vs), "-");
    fprintf(f,
            hyb ? "%-12s %13s %13s %9d %12s %12s %9.3f %7.3f %10s"
                : "%-9s %13s %13s %9d %12s %12s %9.3f %7.3f %10s",
            s->rows[i].algo, c1, c2, r->n_reconfig, c3, c4,
            r->lower_bound_s > 0 ? r->completion_s / r->lower_bound_s : 1.0, r->util, vs);
    if (hyb && s->rows[i].hybrid) {
      char sh[32], eb[32];
      fmt_share(sh, sizeof(sh), r);
      fmt_time(eb, sizeof(eb), r->eps_busy_s);
      fprintf(f, " %9s %10s %6d", sh, eb, r->n_to_eps);
    } else if (hyb) {
      fprintf(f, " %9s %10s %6s", "-", "-", "-");
    }
    fprintf(f, "\n");
  }
  fprintf(f, "# vs_bound = completion / lower bound; vs_static = static completion / this one\n");
  if (hyb)
    fprintf(f,
            "# hybrid lower bound = max line sum / (degree * rate + EPS rate); eps_share = "
            "bytes on the EPS; eps_busy = time the EPS carries (ms); to_eps = "
            "configurations left to the EPS\n");
  return ferror(f) ? FS_EIO : 0;
}

/* The opening of both JSON objects, up to the results: the single run has
 * its delay and the threshold's time, the sweep names the rule. */
static void json_head(FILE *f, const fs_report_ocs_schedule *s, int sweep) {
  const fs_ocs_params p = s->p;
  fprintf(f, "{\"matrix\": ");
  fs__fput_json_str(f, s->file);
  fprintf(f, ", \"nodes\": %d, \"phases\": %d, ", s->nodes, s->phases);
  jnum(f, "gbps", p.gbps, 1);
  if (!sweep) jnum(f, "delay_s", p.delay_s, 1);
  fprintf(f, "\"degree\": %d, \"all_stop\": %s,", p.degree, p.all_stop ? "true" : "false");
  if (s->hybrid) {
    fprintf(f, " ");
    jnum(f, "eps_gbps", s->eps_gbps, 1);
    if (s->threshold == FS_REPORT_EPS_AUTO)
      fprintf(f, "\"eps_threshold\": \"auto\", ");
    else if (sweep && s->threshold == FS_REPORT_EPS_DELAY)
      fprintf(f, "\"eps_threshold\": \"delay\", ");
    else
      jnum(f, "eps_threshold_s", s->threshold == FS_REPORT_EPS_DELAY ? p.delay_s : s->threshold_s,
           1);
    fprintf(f, "\"eps_residual_only\": %s,", p.eps_residual_only ? "true" : "false");
  }
}

int fs_report_ocs_schedule_json(FILE *f, const fs_report_ocs_schedule *s) {
  json_head(f, s, 0);
  fprintf(f, "\n \"results\": [");
  for (int32_t i = 0; i < s->n_rows; i++) {
    const fs_ocs_result *r = &s->rows[i].r;
    int hyb = s->rows[i].hybrid;
    fprintf(f, "%s\n  {\"algo\": \"%s\", ", i ? "," : "", s->rows[i].algo);
    jnum(f, "completion_s", r->completion_s, 1);
    jnum(f, "schedule_s", r->schedule_s, 1);
    fprintf(f, "\"reconfigurations\": %d, ", r->n_reconfig);
    jnum(f, "reconfig_s", r->reconfig_s, 1);
    jnum(f, "lower_bound_s", r->lower_bound_s, 1);
    jnum(f, "util", r->util, 1);
    jnum(f, "delivered_bytes", r->delivered_bytes, 1);
    jnum(f, "undelivered_bytes", r->undelivered_bytes, hyb);
    if (hyb) {
      jnum(f, "circuit_bytes", r->circuit_bytes, 1);
      jnum(f, "eps_bytes", r->eps_bytes, 1);
      jnum(f, "eps_busy_s", r->eps_busy_s, 1);
      fprintf(f, "\"configurations_to_eps\": %d", r->n_to_eps);
    }
    fprintf(f, "}");
  }
  fprintf(f, "]}\n");
  return ferror(f) ? FS_EIO : 0;
}

int fs_report_ocs_sweep_table(FILE *f, const fs_report_ocs_schedule *s) {
  const fs_ocs_params p = s->p;
  int hyb = s->hybrid;
  char thr_txt[48];
  fmt_threshold(thr_txt, sizeof(thr_txt), s);
  fprintf(f,
          "# fabricsim ocs schedule --sweep: %s, %d nodes, %d phase%s, %g Gb/s, degree %d,\n"
          "# %s dark; job completion time in ms (configurations in brackets)\n",
          s->file, s->nodes, s->phases, s->phases > 1 ? "s" : "", p.gbps, p.degree,
          p.all_stop ? "all circuits" : "changed circuits");
  if (hyb)
    fprintf(f,
            "# +eps: EPS port of %g Gb/s per node, threshold %s, %s; then the share of "
            "bytes on the EPS\n",
            s->eps_gbps, thr_txt, p.eps_residual_only ? "residual only" : "spill");
  fprintf(f, "%-10s", "delay");
  for (int32_t i = 0; i < s->n_rows; i++) fprintf(f, " %22s", s->rows[i].algo);
  fprintf(f, " %12s %*s\n", "lower_bound", hyb ? 12 : 9, "best");
  for (int32_t k = 0; k < s->n_delays; k++) {
    const fs_report_ocs_row *row = s->rows + (size_t)k * (size_t)s->n_rows;
    char dl[32];
    fmt_delay(dl, sizeof(dl), s->delays_s[k]);
    fprintf(f, "%-10s", dl);
    int32_t best = -1;
    double lb = 0;
    for (int32_t i = 0; i < s->n_rows; i++) {
      const fs_ocs_result *r = &row[i].r;
      char c[32], cell[96];
      fmt_time(c, sizeof(c), r->completion_s);
      if (row[i].hybrid) {
        char sh[32];
        fmt_share(sh, sizeof(sh), r);
        snprintf(cell, sizeof(cell), "%s [%d] %s", c, r->n_reconfig, sh);
      } else {
        snprintf(cell, sizeof(cell), "%s [%d]", c, r->n_reconfig);
        lb = r->lower_bound_s; /* the pure OCS bound */
      }
      fprintf(f, " %22s", cell);
      if (best < 0 || r->completion_s < row[best].r.completion_s) best = i;
    }
    char c[32];
    fmt_time(c, sizeof(c), lb);
    fprintf(f, " %12s %*s\n", c, hyb ? 12 : 9, best >= 0 ? row[best].algo : "-");
  }
  return ferror(f) ? FS_EIO : 0;
}

int fs_report_ocs_sweep_json(FILE *f, const fs_report_ocs_schedule *s) {
  json_head(f, s, 1);
  fprintf(f, "\n \"sweep\": [");
  for (int32_t k = 0; k < s->n_delays; k++) {
    const fs_report_ocs_row *row = s->rows + (size_t)k * (size_t)s->n_rows;
    fprintf(f, "%s\n  {", k ? "," : "");
    jnum(f, "delay_s", s->delays_s[k], 1);
    fprintf(f, "\"results\": [");
    for (int32_t i = 0; i < s->n_rows; i++) {
      const fs_ocs_result *r = &row[i].r;
      int hyb = row[i].hybrid;
      fprintf(f, "%s{\"algo\": \"%s\", ", i ? ", " : "", row[i].algo);
      jnum(f, "completion_s", r->completion_s, 1);
      fprintf(f, "\"reconfigurations\": %d, ", r->n_reconfig);
      jnum(f, "lower_bound_s", r->lower_bound_s, hyb);
      if (hyb) {
        jnum(f, "eps_bytes", r->eps_bytes, 1);
        jnum(f, "eps_busy_s", r->eps_busy_s, 1);
        fprintf(f, "\"configurations_to_eps\": %d", r->n_to_eps);
      }
      fprintf(f, "}");
    }
    fprintf(f, "]}");
  }
  fprintf(f, "]}\n");
  return ferror(f) ? FS_EIO : 0;
}

/* The page's rows: at most 5 algorithms (bvn, solstice, static and the two
 * hybrids) at each delay. */
enum { MAX_ROWS = 8 };

int fs_report_ocs_schedule_html(FILE *f, const fs_report_ocs_schedule *s,
                                const fs_report_ocs_drawing *d) {
  int32_t n_algos = s->n_rows < MAX_ROWS ? s->n_rows : MAX_ROWS;
  int32_t n_delays = d ? 1 : s->n_delays;
  fs_html_ocs_algo *algos = malloc((size_t)(n_delays * n_algos + 1) * sizeof(*algos));
  fs_html_ocs_phase *ph = malloc((size_t)(s->phases + 1) * sizeof(*ph));
  if (!algos || !ph) {
    free(algos);
    free(ph);
    return FS_ENOMEM;
  }
  double lb = 0;
  for (int32_t k = 0; k < n_delays; k++)
    for (int32_t i = 0; i < n_algos; i++) {
      const fs_report_ocs_row *row = &s->rows[(size_t)k * (size_t)s->n_rows + (size_t)i];
      algos[k * n_algos + i] = (fs_html_ocs_algo){row->algo, row->r.completion_s,
                                                  row->r.n_reconfig};
      if (!row->hybrid) lb = row->r.lower_bound_s; /* the pure OCS bound */
    }
  char title[400], note[200];
  snprintf(title, sizeof(title), "fabricsim ocs schedule%s: %s", d ? "" : " --sweep", s->file);
  fs_html_ocs_page pg = {.title = title, .note = note, .algos = algos, .n_algos = n_algos,
                         .lower_bound_s = lb, .n_nodes = s->nodes};
  if (d) {
    char dl[32];
    fmt_delay(dl, sizeof(dl), s->p.delay_s);
    if (d->algo)
      snprintf(note, sizeof(note),
               "%s schedule, %g Gb/s circuits, degree %d, reconfiguration delay %s (%s dark).",
               d->algo, s->p.gbps, s->p.degree, dl,
               s->p.all_stop ? "all circuits" : "changed circuits");
    else
      snprintf(note, sizeof(note), "static only: one configuration, no schedule to draw.");
    for (int32_t p = 0; p < s->phases; p++)
      ph[p] = (fs_html_ocs_phase){d->phase_names[p], d->phase_start_s[p], d->phase_bound_s[p],
                                  d->phase_first_seg[p],
                                  d->phase_first_seg[p + 1] - d->phase_first_seg[p]};
    pg.drawn = d->algo;
    pg.segs = d->segs;
    pg.n_segs = d->n_segs;
    pg.phases = ph;
    pg.n_phases = d->algo ? s->phases : 0;
    pg.t_end = d->t_end;
  } else {
    snprintf(note, sizeof(note), "%g Gb/s circuits, degree %d, %s dark.", s->p.gbps, s->p.degree,
             s->p.all_stop ? "all circuits" : "changed circuits");
    pg.delays_s = s->delays_s;
    pg.n_delays = s->n_delays;
  }
  int rc = fs_html_ocs_report(f, &pg);
  free(algos);
  free(ph);
  return rc;
}
