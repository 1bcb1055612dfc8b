/* The HTML report page of each command (html.h): which plots, from which
 * results. sim: summary, flow completion time CDF, link heatmaps and
 * busiest links, the topology. train: summary, where the time goes, the
 * iteration timeline per pipeline stage, links, topology. coll: bus
 * bandwidth versus size with the closed form, per algorithm. route: the
 * routing comparison's metrics as bars. ocs: the circuit schedule. Each
 * page is O(what it draws); the train timeline is one span per op, send
 * and DP collective of the data-parallel rank 0 devices. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/err.h"
#include "fabricsim/html.h"
#include "fabricsim/report.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Per link, the mean utilisation over the run (for the topology drawing);
 * malloc'd or NULL. */
static double *mean_util(const fs_sim *s) {
  const fs_topo *t = fs_sim_topo(s);
  double T = fs_sim_makespan_s(s);
  double *u = malloc((size_t)(t->n_links ? t->n_links : 1) * sizeof(double));
  if (!u) return NULL;
  const fs_sim_link_stats *ls = fs_sim_links(s);
  for (int32_t l = 0; l < t->n_links; l++)
    u[l] = T > 0 ? ls[l].bytes * 8 / (t->links[l].capacity_bps * T) : 0;
  return u;
}

/* The links section (heatmaps, busiest), the topology shaded by mean
 * utilisation, and the end of the page. */
static int links_and_end(fs_html *h, const fs_sim *s, const char *note) {
  fs_html_section(h, "Links", note);
  fs_html_links(h, s);
  fs_html_section(h, "Topology", NULL);
  double *u = mean_util(s);
  fs_html_topology(h, fs_sim_topo(s), u);
  free(u);
  return fs_html_end(h);
}

static void kv_table(fs_html *h, const char *const *kv, int32_t n) {
  fs_html_table(h, NULL, 2, kv, n);
}

int fs_html_sim_report(FILE *f, const fs_scenario *sc) {
  const fs_sim *s = sc->sim;
  fs_sim_summary sum;
  int rc = fs_report_summarize(sc, &sum);
  if (rc) return rc;
  fs_html h;
  char sub[700];
  snprintf(sub, sizeof(sub), "topology %s, routing %s", sc->topo->spec,
           fs_route_mode_name(sc->mode));
  char title[300];
  snprintf(title, sizeof(title), "fabricsim sim: %s", sc->file);
  fs_html_begin(&h, f, title, sub);
  char v[8][96];
  snprintf(v[0], 96, "%.6g ms", sum.makespan_s * 1e3);
  snprintf(v[1], 96, "%d flows, %d tasks", sum.flows, sum.tasks);
  snprintf(v[2], 96, "%.6g MB", sum.total_bytes / 1e6);
  snprintf(v[3], 96, "mean %.4g, p50 %.4g, p99 %.4g, max %.4g ms", sum.fct_mean_s * 1e3,
           sum.fct_p50_s * 1e3, sum.fct_p99_s * 1e3, sum.fct_max_s * 1e3);
  snprintf(v[4], 96, "%.1f%% (mean over the run)", sum.max_link_util * 100);
  snprintf(v[5], 96, "%d of %d", sum.links_used, sc->topo->n_links);
  const char *kv[] = {"makespan", v[0], "items", v[1], "bytes", v[2],
                      "flow completion", v[3], "busiest link", v[4], "links used", v[5]};
  fs_html_section(&h, "Summary", NULL);
  kv_table(&h, kv, 6);
  /* flow completion times */
  int32_t n = sc->n_flows;
  double *x = malloc((size_t)(n ? n : 1) * sizeof(double));
  double *y = malloc((size_t)(n + 1) * sizeof(double));
  if (!x || !y) {
    free(x);
    free(y);
    return FS_ENOMEM;
  }
  for (int32_t i = 0; i < n; i++) x[i] = (fs_sim_finish_s(s, i) - fs_sim_start_s(s, i)) * 1e3;
  qsort(x, (size_t)n, sizeof(double), cmp_double);
  for (int32_t i = 0; i < n; i++) y[i] = (i + 1.0) / n;
  if (n > 0) {
    fs_html_section(&h, "Flow completion times", "Each flow from its start to its last byte "
                    "at the destination (CDF).");
    fs_html_series cdf = {"flows", x, y, n, 0, 1};
    fs_html_axes ax = {"Flow completion time CDF", "flow completion time (ms)",
                       "fraction of flows", 0, 0, 0};
    fs_html_lines(&h, &ax, &cdf, 1);
  }
  free(x);
  free(y);
  return links_and_end(&h, s, "Bytes per time bin recorded by the engine (exact, from the "
                       "piecewise-constant rates), over every link of each route.");
}

/* ---- train ---- */
static const char *const seg_names[FS_TRAIN_SEG_KINDS] = {
    "forward", "backward", "TP", "EP all-to-all", "PP send", "DP collective"};
enum { LANES = 4, MAX_STAGES = 32 };

int fs_html_train_report(FILE *f, const fs_job *job, const fs_train *tr,
                         const fs_train_result *r) {
  const fs_sim *s = fs_train_sim(tr);
  fs_html h;
  char title[300], sub[700];
  snprintf(title, sizeof(title), "fabricsim train: %s", job->file);
  snprintf(sub, sizeof(sub), "tp %lld x pp %lld x dp %lld = %lld GPUs on %s (%s routing)",
           (long long)job->par.tp, (long long)job->par.pp, (long long)job->par.dp,
           (long long)fs_job_gpus(job), job->topo->spec, fs_route_mode_name(job->mode));
  fs_html_begin(&h, f, title, sub);
  char v[6][420];
  snprintf(v[0], 420, "%.4f ms", r->iter_s * 1e3);
  char tps[32];
  fs_html_thousands(tps, sizeof(tps), r->tokens_per_s, 0);
  snprintf(v[1], 420, "%s tokens/s, %.1f model TFLOP/s per GPU", tps, r->model_tflops_per_gpu);
  snprintf(v[2], 420, "MFU %.1f%%, HFU %.1f%%", r->mfu * 100, r->hfu * 100);
  char nf[32], nt[32];
  fs_html_thousands(nf, sizeof(nf), (double)r->flows, 0);
  fs_html_thousands(nt, sizeof(nt), (double)r->tasks, 0);
  snprintf(v[3], 420, "%s flows simulated, %s tasks", nf, nt);
  snprintf(v[4], 420, "%s", r->symmetry[0] ? r->symmetry : "none (every link simulated)");
  const char *kv[] = {"iteration time", v[0], "throughput", v[1], "utilisation", v[2],
                      "engine", v[3], "symmetry", v[4]};
  fs_html_section(&h, "Summary", NULL);
  kv_table(&h, kv, 5);
  /* where the time goes */
  const char *labels[2 + FS_PAR_N];
  char lab[FS_PAR_N][40];
  double vals[2 + FS_PAR_N];
  int32_t nv = 0;
  labels[nv] = "compute";
  vals[nv++] = r->compute_s * 1e3;
  labels[nv] = "pipeline bubble + imbalance";
  vals[nv++] = r->bubble_s * 1e3;
  for (int k = 0; k < FS_PAR_N; k++) {
    if (k == FS_PAR_CP && job->par.cp == 1) continue;
    snprintf(lab[k], sizeof(lab[k]), "exposed %s", fs_par_kind_name((fs_par_kind)k));
    labels[nv] = lab[k];
    vals[nv++] = r->kind[k].exposed_s * 1e3;
  }
  char note[120];
  snprintf(note, sizeof(note), "Pipeline stage %d, data-parallel rank 0 (as the text summary).",
           r->device_stage);
  fs_html_section(&h, "Where the time goes", note);
  fs_html_split(&h, "Iteration time split", "ms", labels, vals, nv);
  /* timeline */
  fs_train_segment *seg = NULL;
  int64_t nseg = 0;
  int rc = fs_train_segments(tr, &seg, &nseg);
  if (rc) return rc;
  int32_t p = fs_train_stages(tr), shown = p < MAX_STAGES ? p : MAX_STAGES;
  char(*rn)[40] = malloc((size_t)(shown * LANES + 1) * sizeof(*rn));
  const char **rows = malloc((size_t)(shown * LANES + 1) * sizeof(*rows));
  fs_html_span *sp = malloc((size_t)(nseg + 1) * sizeof(*sp));
  if (!rn || !rows || !sp) {
    FS__FREE_ALL(rn, rows, sp, seg);
    return FS_ENOMEM;
  }
  static const char *const lane_names[LANES] = {"compute", "TP / EP", "PP sends", "DP"};
  for (int32_t st = 0; st < shown; st++)
    for (int32_t l = 0; l < LANES; l++) {
      snprintf(rn[st * LANES + l], sizeof(rn[0]), "stage %d %s", st, lane_names[l]);
      rows[st * LANES + l] = rn[st * LANES + l];
    }
  int64_t m = 0;
  for (int64_t i = 0; i < nseg; i++) {
    if (seg[i].stage >= shown) continue;
    int32_t lane = seg[i].kind <= FS_TRAIN_SEG_BWD ? 0
                   : seg[i].kind <= FS_TRAIN_SEG_EP ? 1
                   : seg[i].kind == FS_TRAIN_SEG_PP ? 2 : 3;
    sp[m++] = (fs_html_span){seg[i].stage * LANES + lane, seg[i].kind, seg[i].start_s,
                             seg[i].dur_s};
  }
  char tnote[160];
  snprintf(tnote, sizeof(tnote), "Data-parallel rank 0 of each stage (TP rank 0 for sends and "
           "DP)%s. Hover a span for its times.", shown < p ? "; the first 32 stages" : "");
  fs_html_section(&h, "Iteration timeline per pipeline stage", tnote);
  fs_html_gantt(&h, "Timeline", rows, shown * LANES, seg_names, FS_TRAIN_SEG_KINDS, sp, m,
                fs_sim_makespan_s(s));
  FS__FREE_ALL(rn, rows, sp, seg);
  /* collectives */
  char cells[FS_PAR_N][5][48];
  const char *cp[FS_PAR_N * 5];
  int32_t nr = 0;
  for (int k = 0; k < FS_PAR_N; k++) {
    const fs_train_kind *c = &r->kind[k];
    if (!c->colls) continue;
    snprintf(cells[nr][0], 48, "%s", fs_par_kind_name((fs_par_kind)k));
    fs_html_thousands(cells[nr][1], 48, (double)c->colls, 0);
    fs_html_thousands(cells[nr][2], 48, c->bytes / 1e6, 3);
    fs_html_thousands(cells[nr][3], 48, c->busy_s * 1e3, 3);
    snprintf(cells[nr][4], 48, "%s", k == FS_PAR_PP ? "send/recv" : fs_coll_algo_name(c->algo));
    for (int j = 0; j < 5; j++) cp[nr * 5 + j] = cells[nr][j];
    nr++;
  }
  if (nr) {
    static const char *const head[] = {"kind", "count", "size (MB)", "busy (ms)", "algorithm"};
    fs_html_section(&h, "Collectives (per GPU of the reported stage)", NULL);
    fs_html_table(&h, head, 5, cp, nr);
  }
  return links_and_end(&h, s, "Bytes per time bin recorded by the engine (exact), over "
                       "every link of each route. With a symmetry shortcut (see the summary) "
                       "only the representative links carry traffic.");
}

/* ---- coll ---- */
int fs_html_coll_report(FILE *f, const char *op, int32_t ranks, const fs_topo *t,
                        const fs_html_coll_algo *algos, int32_t n_algos) {
  fs_html h;
  char title[200], sub[700];
  snprintf(title, sizeof(title), "fabricsim coll: %s on %d ranks", op, ranks);
  snprintf(sub, sizeof(sub), "topology %s", t->spec);
  fs_html_begin(&h, f, title, sub);
  int32_t ns = 2 * n_algos;
  fs_html_series *s = calloc((size_t)(ns ? ns : 1), sizeof(*s));
  double **buf = calloc((size_t)(2 * ns + 1), sizeof(double *));
  char(*names)[80] = calloc((size_t)(ns ? ns : 1), sizeof(*names));
  int rc = 0;
  if (!s || !buf || !names) {
    rc = FS_ENOMEM;
    goto out;
  }
  int32_t k = 0;
  for (int32_t a = 0; a < n_algos; a++) {
    int32_t n = algos[a].n;
    double *x = malloc((size_t)(n ? n : 1) * sizeof(double));
    double *y = malloc((size_t)(n ? n : 1) * sizeof(double));
    double *ym = malloc((size_t)(n ? n : 1) * sizeof(double));
    buf[3 * a] = x, buf[3 * a + 1] = y, buf[3 * a + 2] = ym;
    if (!x || !y || !ym) {
      rc = FS_ENOMEM;
      goto out;
    }
    int has_model = 0;
    for (int32_t i = 0; i < n; i++) {
      x[i] = algos[a].rows[i].bytes;
      y[i] = algos[a].rows[i].busbw;
      ym[i] = algos[a].rows[i].model_busbw;
      has_model |= ym[i] > 0;
    }
    snprintf(names[k], sizeof(names[k]), "%s (simulated)", algos[a].algo);
    s[k] = (fs_html_series){names[k], x, y, n, 0, 0};
    k++;
    if (has_model) {
      snprintf(names[k], sizeof(names[k]), "%s (closed form)", algos[a].algo);
      s[k] = (fs_html_series){names[k], x, ym, n, 1, 0};
      k++;
    }
  }
  fs_html_section(&h, "Bus bandwidth versus size", "busbw as nccl-tests reports it; dashed: "
                  "the algorithm's closed-form time on the same sizes.");
  fs_html_axes ax = {"busbw (GB/s) vs message size", "size (bytes)", "busbw (GB/s)", 1, 0, 1};
  fs_html_lines(&h, &ax, s, k);
  for (int32_t a = 0; a < n_algos; a++) {
    int32_t n = algos[a].n;
    char(*c)[32] = malloc((size_t)(n ? n : 1) * 5 * sizeof(*c));
    const char **cp = malloc((size_t)(n ? n : 1) * 5 * sizeof(*cp));
    if (!c || !cp) {
      free(c);
      free(cp);
      rc = FS_ENOMEM;
      goto out;
    }
    for (int32_t i = 0; i < n; i++) {
      const fs_html_coll_row *row = &algos[a].rows[i];
      snprintf(c[i * 5], 32, "%.0f", row->bytes);
      snprintf(c[i * 5 + 1], 32, "%.3f", row->time_s * 1e6);
      snprintf(c[i * 5 + 2], 32, "%.3f", row->busbw);
      snprintf(c[i * 5 + 3], 32, "%.3f", row->model_s * 1e6);
      snprintf(c[i * 5 + 4], 32, "%.3f", row->model_busbw);
      for (int j = 0; j < 5; j++) cp[i * 5 + j] = c[i * 5 + j];
    }
    static const char *const head[] = {"size (B)", "time (us)", "busbw (GB/s)",
                                       "model time (us)", "model busbw (GB/s)"};
    fs_html_section(&h, algos[a].algo, NULL);
    fs_html_table(&h, head, 5, cp, n);
    free(c);
    free(cp);
  }
  fs_html_section(&h, "Topology", NULL);
  fs_html_topology(&h, t, NULL);
out:
  if (buf)
    for (int32_t i = 0; i < 2 * ns + 1; i++) free(buf[i]);
  FS__FREE_ALL(buf, names, s);
  int rc2 = fs_html_end(&h);
  return rc ? rc : rc2;
}

/* ---- route ---- */
int fs_html_route_report(FILE *f, const char *title, const fs_topo *t,
                         const char *const *metrics, int32_t n_metrics,
                         const fs_html_route_row *rows, int32_t n_rows) {
  fs_html h;
  char sub[700];
  snprintf(sub, sizeof(sub), "topology %s", t->spec);
  fs_html_begin(&h, f, title, sub);
  const char **labels = malloc((size_t)(n_rows ? n_rows : 1) * sizeof(*labels));
  double *v = malloc((size_t)(n_rows ? n_rows : 1) * sizeof(double));
  char(*c)[32] = malloc((size_t)(n_rows ? n_rows : 1) * (size_t)(n_metrics + 1) * sizeof(*c));
  const char **cp = malloc((size_t)(n_rows ? n_rows : 1) * (size_t)(n_metrics + 1) * sizeof(*cp));
  const char **head = malloc((size_t)(n_metrics + 1) * sizeof(*head));
  int rc = 0;
  if (!labels || !v || !c || !cp || !head) {
    rc = FS_ENOMEM;
    goto out;
  }
  head[0] = "routing";
  for (int32_t m = 0; m < n_metrics; m++) head[m + 1] = metrics[m];
  for (int32_t r = 0; r < n_rows; r++) {
    snprintf(c[r * (n_metrics + 1)], 32, "%s", rows[r].name);
    for (int32_t m = 0; m < n_metrics; m++)
      snprintf(c[r * (n_metrics + 1) + m + 1], 32, "%.4g", rows[r].v[m]);
    for (int32_t m = 0; m <= n_metrics; m++)
      cp[r * (n_metrics + 1) + m] = c[r * (n_metrics + 1) + m];
  }
  fs_html_section(&h, "Routing comparison", NULL);
  fs_html_table(&h, head, n_metrics + 1, cp, n_rows);
  for (int32_t m = 0; m < n_metrics; m++) {
    for (int32_t r = 0; r < n_rows; r++) {
      labels[r] = rows[r].name;
      v[r] = rows[r].v[m];
    }
    fs_html_bars(&h, metrics[m], "", labels, v, n_rows);
  }
  fs_html_section(&h, "Topology", NULL);
  fs_html_topology(&h, t, NULL);
out:
  FS__FREE_ALL(labels, v, c, cp, head);
  int rc2 = fs_html_end(&h);
  return rc ? rc : rc2;
}

/* ---- ocs ---- */
int fs_html_ocs_report(FILE *f, const char *title, const char *const *summary,
                       int32_t n_summary, const fs_ocs_seg *segs, size_t n_segs,
                       int32_t n_nodes, double t_end, const char *note) {
  fs_html h;
  fs_html_begin(&h, f, title, NULL);
  fs_html_section(&h, "Summary", NULL);
  kv_table(&h, summary, n_summary);
  int32_t n_rows = n_nodes < FS_HTML_MAX_ROWS ? n_nodes : FS_HTML_MAX_ROWS;
  char(*rn)[32] = malloc((size_t)(n_rows > 0 ? n_rows : 1) * sizeof(*rn));
  const char **rows = malloc((size_t)(n_rows > 0 ? n_rows : 1) * sizeof(*rows));
  fs_html_span *sp = malloc((n_segs ? n_segs : 1) * sizeof(*sp));
  int rc = 0;
  if (!rn || !rows || !sp) {
    rc = FS_ENOMEM;
    goto out;
  }
  for (int32_t r = 0; r < n_rows; r++) {
    snprintf(rn[r], sizeof(rn[r]), "node %d out", r);
    rows[r] = rn[r];
  }
  int64_t m = 0;
  for (size_t i = 0; i < n_segs; i++)
    if (segs[i].src >= 0 && segs[i].src < n_rows)
      sp[m++] = (fs_html_span){segs[i].src, segs[i].dark ? 1 : 0, segs[i].t0_s,
                               segs[i].t1_s - segs[i].t0_s};
  static const char *const cls[] = {"circuit lit", "reconfiguring (dark)"};
  fs_html_section(&h, "Circuit schedule", note);
  fs_html_gantt(&h, "Circuits out of each node over time", rows, n_rows, cls, 2, sp, m, t_end);
out:
  FS__FREE_ALL(rn, rows, sp);
  int rc2 = fs_html_end(&h);
  return rc ? rc : rc2;
}
