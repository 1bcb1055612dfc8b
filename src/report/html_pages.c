/* The HTML report page of each command (html.h): which plots, from which
 * results. sim: summary, flow completion time CDF, link heatmaps and
 * busiest links, the topology. train: summary, where the time goes, the
 * iteration timeline per pipeline stage, links, topology. coll: bus
 * bandwidth versus size with the closed form, per algorithm. route: the
 * routing comparison's metrics as bars. ocs: completion against the
 * lower bound, the circuit schedule with its configurations, or the delay
 * sweep. Each
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
                       "fraction of flows", 0, 0, 0, 0};
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

/* One job's sections: summary, where the time goes, the timeline, the
 * collectives. In a cluster (job_no > 0) each heading names the job. */
static int job_sections(fs_html *hp, const fs_job *job, const fs_train *tr,
                        const fs_train_result *r, int32_t job_no) {
  fs_html h = *hp;
  const fs_sim *s = fs_train_sim(tr);
  char hd[4][400];
  static const char *const heads[4] = {"Summary", "Where the time goes",
                                       "Iteration timeline per pipeline stage",
                                       "Collectives (per GPU of the reported stage)"};
  for (int i = 0; i < 4; i++)
    if (job_no > 0)
      snprintf(hd[i], sizeof(hd[i]), "Job %d (%s): %s", job_no, job->file, heads[i]);
    else
      snprintf(hd[i], sizeof(hd[i]), "%s", heads[i]);
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
  fs_html_section(&h, hd[0], NULL);
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
  fs_html_section(&h, hd[1], note);
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
                             seg[i].dur_s, NULL};
  }
  char tnote[160];
  snprintf(tnote, sizeof(tnote), "Data-parallel rank 0 of each stage (TP rank 0 for sends and "
           "DP)%s. Hover a span for its times.", shown < p ? "; the first 32 stages" : "");
  fs_html_section(&h, hd[2], tnote);
  fs_html_gantt(&h, "Timeline", rows, shown * LANES, seg_names, FS_TRAIN_SEG_KINDS, sp, m,
                fs_sim_makespan_s(s), NULL, 0);
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
    fs_html_section(&h, hd[3], NULL);
    fs_html_table(&h, head, 5, cp, nr);
  }
  *hp = h;
  return 0;
}

static const char *const train_links_note =
    "Bytes per time bin recorded by the engine (exact), over every link of each route. With a "
    "symmetry shortcut (see the summary) only the representative links carry traffic.";

/* The OCS layer's circuits over the iteration (ocsctl.h): a row per leaf
 * pair that ever had one, a span per spell of n circuits (labelled n x),
 * dark while a change lights them. */
static int ocs_circuits(fs_html *h, const fs_train *tr, double t_end) {
  const fs_ocsctl *c = fs_train_ocs(tr);
  const fs_ocsctl_change *ch;
  int32_t n = c ? fs_ocsctl_changes(c, &ch) : 0;
  if (n <= 0) return 0;
  const fs_topo *t = fs_sim_topo(fs_train_sim(tr));
  enum { MAX_ROWS = 60 };
  char(*rn)[64] = malloc((size_t)MAX_ROWS * sizeof(*rn));
  const char **rows = malloc((size_t)MAX_ROWS * sizeof(*rows));
  int32_t *ra = malloc((size_t)MAX_ROWS * 2 * sizeof(int32_t));
  fs_html_span *sp = malloc((size_t)n * 2 * sizeof(*sp));
  char(*lab)[16] = malloc((size_t)n * 2 * sizeof(*lab));
  if (!rn || !rows || !ra || !sp || !lab) {
    FS__FREE_ALL(rn, rows, ra, sp, lab);
    return FS_ENOMEM;
  }
  int32_t n_rows = 0, m = 0, more = 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t row = -1;
    for (int32_t r = 0; r < n_rows && row < 0; r++)
      if (ra[2 * r] == ch[i].a && ra[2 * r + 1] == ch[i].b) row = r;
    if (row < 0 && n_rows == MAX_ROWS) {
      more = 1;
      continue;
    }
    if (row < 0) {
      row = n_rows++;
      ra[2 * row] = ch[i].a;
      ra[2 * row + 1] = ch[i].b;
      char x[28], y[28];
      fs_topo_node_name(t, ch[i].a, x, sizeof(x));
      fs_topo_node_name(t, ch[i].b, y, sizeof(y));
      snprintf(rn[row], sizeof(rn[row]), "%s-%s", x, y);
      rows[row] = rn[row];
    }
    if (ch[i].to <= 0) continue;
    /* until the pair's next change, or the end */
    double end = t_end;
    for (int32_t k = i + 1; k < n; k++)
      if (ch[k].a == ch[i].a && ch[k].b == ch[i].b) {
        end = ch[k].at_s;
        break;
      }
    if (ch[i].lit_s > ch[i].at_s) {
      snprintf(lab[m], sizeof(lab[m]), "dark");
      sp[m] = (fs_html_span){row, 1, ch[i].at_s, fmin(ch[i].lit_s, end) - ch[i].at_s, lab[m]};
      m++;
    }
    if (end > ch[i].lit_s) {
      snprintf(lab[m], sizeof(lab[m]), "%d\u00d7", ch[i].to);
      sp[m] = (fs_html_span){row, 0, ch[i].lit_s, end - ch[i].lit_s, lab[m]};
      m++;
    }
  }
  static const char *const cls[] = {"circuits lit", "reconfiguring (dark)"};
  char note[400];
  snprintf(note, sizeof(note),
           "The OCS layer's circuits between leaves over the iteration: a row per leaf pair that "
           "had any, each span labelled with its number of circuits; dark while a change lights "
           "them.%s",
           more ? " The first 60 pairs." : "");
  fs_html_section(h, "Circuits over time", note);
  fs_html_gantt(h, "Circuits between leaves", rows, n_rows, cls, 2, sp, m, t_end, NULL, 0);
  FS__FREE_ALL(rn, rows, ra, sp, lab);
  return 0;
}

int fs_html_train_report(FILE *f, const fs_job *job, const fs_train *tr,
                         const fs_train_result *r) {
  fs_html h;
  char title[300], sub[700];
  snprintf(title, sizeof(title), "fabricsim train: %s", job->file);
  snprintf(sub, sizeof(sub), "tp %lld x pp %lld x dp %lld = %lld GPUs on %s (%s routing)",
           (long long)job->par.tp, (long long)job->par.pp, (long long)job->par.dp,
           (long long)fs_job_gpus(job), job->topo->spec, fs_route_mode_name(job->mode));
  fs_html_begin(&h, f, title, sub);
  int rc = job_sections(&h, job, tr, r, 0);
  if (!rc) rc = ocs_circuits(&h, tr, fs_sim_makespan_s(fs_train_sim(tr)));
  if (rc) {
    fs_html_end(&h);
    return rc;
  }
  return links_and_end(&h, fs_train_sim(tr), train_links_note);
}

int fs_html_cluster_report(FILE *f, fs_job *const *jobs, const fs_train *const *trs,
                           const fs_train_result *res, int32_t n) {
  fs_html h;
  char title[120], sub[700];
  snprintf(title, sizeof(title), "fabricsim train: %d jobs sharing one cluster", n);
  snprintf(sub, sizeof(sub), "%s (%s routing); their traffic contends in one simulation",
           jobs[0]->topo->spec, fs_route_mode_name(jobs[0]->mode));
  fs_html_begin(&h, f, title, sub);
  enum { COLS = 6 };
  char(*c)[COLS][320] = malloc((size_t)(n ? n : 1) * sizeof(*c));
  const char **cp = malloc((size_t)(n ? n : 1) * COLS * sizeof(*cp));
  const char **lab = malloc((size_t)(n ? n : 1) * sizeof(*lab));
  double *it = malloc((size_t)(n ? n : 1) * sizeof(double));
  int rc = c && cp && lab && it ? 0 : FS_ENOMEM;
  for (int32_t k = 0; k < n && !rc; k++) {
    const fs_job *j = jobs[k];
    snprintf(c[k][0], 320, "%d: %s", k + 1, j->file);
    snprintf(c[k][1], 320, "%lld-%lld", (long long)j->gpu_offset,
             (long long)(j->gpu_offset + fs_job_gpus(j) - 1));
    snprintf(c[k][2], 320, "tp %lld x pp %lld x dp %lld", (long long)j->par.tp,
             (long long)j->par.pp, (long long)j->par.dp);
    fs_html_thousands(c[k][3], 320, res[k].iter_s * 1e3, 3);
    snprintf(c[k][4], 320, "%.1f%%", res[k].mfu * 100);
    fs_html_thousands(c[k][5], 320, res[k].tokens_per_s, 0);
    for (int i = 0; i < COLS; i++) cp[k * COLS + i] = c[k][i];
    lab[k] = c[k][0];
    it[k] = res[k].iter_s * 1e3;
  }
  if (!rc) {
    static const char *const head[COLS] = {"job", "cluster GPUs", "parallelism",
                                           "iteration (ms)", "MFU", "tokens/s"};
    fs_html_section(&h, "Jobs", "Each job's iteration with every other job's traffic on the "
                    "same links; the sections below give each job's own breakdown.");
    fs_html_table(&h, head, COLS, cp, n);
    fs_html_bars(&h, "Iteration time per job", "ms", lab, it, n);
  }
  for (int32_t k = 0; k < n && !rc; k++) rc = job_sections(&h, jobs[k], trs[k], &res[k], k + 1);
  FS__FREE_ALL(c, cp, lab, it);
  if (rc || n < 1) {
    fs_html_end(&h);
    return rc;
  }
  return links_and_end(&h, fs_train_sim(trs[0]), train_links_note);
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
  fs_html_axes ax = {"busbw (GB/s) vs message size", "size (bytes)", "busbw (GB/s)", 1, 0, 1, 0};
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
  /* the table as the text output has it: a row per metric, a column per
   * routing (a few routings, many metrics: narrow enough for any window) */
  size_t cells = (size_t)(n_metrics ? n_metrics : 1) * (size_t)(n_rows + 1);
  const char **labels = malloc((size_t)(n_rows ? n_rows : 1) * sizeof(*labels));
  double *v = malloc(cells * sizeof(double));
  char(*c)[32] = malloc(cells * sizeof(*c));
  const char **cp = malloc(cells * sizeof(*cp));
  const char **head = malloc((size_t)(n_rows + 1) * sizeof(*head));
  int rc = 0;
  if (!labels || !v || !c || !cp || !head) {
    rc = FS_ENOMEM;
    goto out;
  }
  head[0] = "metric";
  for (int32_t r = 0; r < n_rows; r++) head[r + 1] = labels[r] = rows[r].name;
  for (int32_t m = 0; m < n_metrics; m++) {
    size_t at = (size_t)m * (size_t)(n_rows + 1);
    snprintf(c[at], 32, "%s", metrics[m]);
    for (int32_t r = 0; r < n_rows; r++) {
      double x = rows[r].v[m];
      if (isfinite(x)) snprintf(c[at + 1 + (size_t)r], 32, "%.4g", x);
      else snprintf(c[at + 1 + (size_t)r], 32, "-");
      v[(size_t)m * (size_t)n_rows + (size_t)r] = x;
    }
    for (int32_t r = 0; r <= n_rows; r++) cp[at + (size_t)r] = c[at + (size_t)r];
  }
  fs_html_section(&h, "Routing comparison", NULL);
  fs_html_table(&h, head, n_rows + 1, cp, n_metrics);
  fs_html_bar_grid(&h, "Each metric per routing (every panel from 0 to its largest value)",
                   metrics, n_metrics, labels, n_rows, v);
  fs_html_section(&h, "Topology", NULL);
  fs_html_topology(&h, t, NULL);
out:
  FS__FREE_ALL(labels, v, c, cp, head);
  int rc2 = fs_html_end(&h);
  return rc ? rc : rc2;
}

/* ---- wan ---- */
enum { WAN_LP_ROWS = 200 };

/* "a-b-c" of a path, cut to n. */
static void wan_path(const fs_wan *w, const fs_wan_path *p, char *buf, size_t n) {
  size_t at = 0;
  buf[0] = 0;
  for (int32_t i = 0; i <= p->hops && at < n; i++)
    at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? "-" : "", w->sites[p->nodes[i]].name);
}

/* One plan's sections: its lightpaths, each fibre's spectrum and use. */
static int wan_plan_sections(fs_html *h, const fs_wan_plan *p, const char *heading) {
  const fs_wan *w = p->w;
  int32_t U = w->grid.units, nf = w->n_fibres, rows = nf < FS_HTML_MAX_ROWS ? nf : FS_HTML_MAX_ROWS;
  enum { COLS = 7 };
  int32_t nl = p->n_lps < WAN_LP_ROWS ? p->n_lps : WAN_LP_ROWS;
  char(*lab)[2 * FS_WAN_NAME + 96] = malloc((size_t)(p->n_lps + 1) * sizeof(*lab));
  const char **labp = malloc((size_t)(p->n_lps + 1) * sizeof(*labp));
  char(*cells)[COLS][200] = malloc((size_t)(nl + 1) * sizeof(*cells));
  const char **cp = malloc((size_t)(nl + 1) * COLS * sizeof(*cp));
  char(*rn)[2 * FS_WAN_NAME + 24] = malloc((size_t)(nf + 1) * sizeof(*rn));
  const char **rp = malloc((size_t)(nf + 1) * sizeof(*rp));
  double *use = malloc((size_t)(nf + 1) * sizeof(double));
  if (!lab || !labp || !cells || !cp || !rn || !rp || !use) {
    FS__FREE_ALL(lab, labp, cells, cp, rn, rp, use);
    return FS_ENOMEM;
  }
  for (int32_t j = 0; j < p->n_lps; j++) {
    const fs_wan_lightpath *lp = &p->lps[j];
    const fs_wan_demand *d = &p->demands[lp->demand];
    snprintf(lab[j], sizeof(lab[j]), "demand %d %s-%s%s, %s, %.6g Gb/s", lp->demand,
             w->sites[d->src].name, w->sites[d->dst].name, d->job ? " (the job)" : "",
             w->mods[lp->mod].name, lp->gbps);
    labp[j] = lab[j];
    if (j >= nl) continue;
    wan_path(w, &lp->path, cells[j][1], 200);
    snprintf(cells[j][0], 200, "%d %s-%s%s", lp->demand, w->sites[d->src].name,
             w->sites[d->dst].name, d->job ? "*" : "");
    fs_html_thousands(cells[j][2], 200, lp->path.km, 0);
    snprintf(cells[j][3], 200, "%s", w->mods[lp->mod].name);
    snprintf(cells[j][4], 200, "%d-%d", lp->first, lp->first + lp->count - 1);
    snprintf(cells[j][5], 200, "%.6g", lp->line_gbps);
    snprintf(cells[j][6], 200, "%.6g", lp->gbps);
    for (int c = 0; c < COLS; c++) cp[j * COLS + c] = cells[j][c];
  }
  for (int32_t fi = 0; fi < nf; fi++) {
    const fs_wan_fibre *fb = &w->fibres[fi];
    snprintf(rn[fi], sizeof(rn[fi]), "%s-%s (%.0f km)", w->sites[fb->a].name,
             w->sites[fb->b].name, fb->km);
    rp[fi] = rn[fi];
    int32_t used = 0;
    for (int32_t u = 0; u < U; u++) used += p->owner[(size_t)fi * U + u] >= 0;
    use[fi] = U ? 100.0 * used / U : 0;
  }
  const char *unit = w->grid.kind == FS_WAN_FIXED ? "wavelength" : "slot";
  char note[240];
  snprintf(note, sizeof(note), "%d demands, %d blocked (%.6g of %.6g Gb/s); %d lightpaths%s. "
           "* marks the job's ring demands.", p->n_demands, p->blocked, p->blocked_gbps,
           p->offered_gbps, p->n_lps, p->n_lps > nl ? ", the first 200 listed" : "");
  fs_html_section(h, heading, note);
  static const char *const head[COLS] = {"demand", "path", "km", "format",
                                         "units (guard incl.)", "line Gb/s", "rate Gb/s"};
  fs_html_table(h, head, COLS, cp, nl);
  fs_html_spectrum(h, nf > rows ? "Spectrum of each fibre (the first 40)" : "Spectrum of each fibre",
                   rp, rows, U, p->owner, labp, unit);
  fs_html_bars(h, "Spectrum in use per fibre", "%", rp, use, nf);
  FS__FREE_ALL(lab, labp, cells, cp, rn, rp, use);
  return 0;
}

static void wan_train_section(fs_html *h, const fs_wan_train_result *r, const char *heading) {
  static const char *const ph[3] = {"reduce-scatter in sites", "all-reduce across sites",
                                    "all-gather in sites"};
  if (!r->connected) {
    fs_html_section(h, heading, "The job's sites are disconnected: no all-reduce.");
    return;
  }
  char cells[4][3][48];
  const char *cp[12];
  for (int i = 0; i < 4; i++) {
    snprintf(cells[i][0], 48, "%s", i < 3 ? ph[i] : "total");
    double a = i < 3 ? r->phase_s[i] : r->total_s, b = i < 3 ? r->model_s[i] : r->model_total_s;
    if (isfinite(a)) fs_html_thousands(cells[i][1], 48, a * 1e3, 3);
    else snprintf(cells[i][1], 48, "-");
    if (isfinite(b)) fs_html_thousands(cells[i][2], 48, b * 1e3, 3);
    else snprintf(cells[i][2], 48, "-");
    for (int c = 0; c < 3; c++) cp[i * 3 + c] = cells[i][c];
  }
  char note[200];
  snprintf(note, sizeof(note), "%d sites x %d GPUs, %.6g bytes; slowest WAN pair %.6g Gb/s, "
           "%.6g km.", r->sites, r->gpus_per_site, r->bytes, r->wan_gbps_min, r->wan_km_max);
  fs_html_section(h, heading, note);
  static const char *const head[3] = {"phase", "simulated (ms)", "closed form (ms)"};
  fs_html_table(h, head, 3, cp, 4);
  double v[3];
  const char *labels[3];
  for (int i = 0; i < 3; i++) v[i] = r->phase_s[i] * 1e3, labels[i] = ph[i];
  fs_html_split(h, "Where the all-reduce's time goes", "ms", labels, v, 3);
}

int fs_html_wan_report(FILE *f, const char *title, const fs_wan_plan *p,
                       const fs_wan_train_result *r0, const fs_wan_plan *after,
                       const fs_wan_train_result *r1) {
  fs_html h;
  char sub[200];
  const fs_wan *w = p->w;
  snprintf(sub, sizeof(sub), "%d sites, %d fibres, %s grid of %d %s, %s, k = %d", w->n_sites,
           w->n_fibres, w->grid.kind == FS_WAN_FIXED ? "fixed" : "flexible", w->grid.units,
           w->grid.kind == FS_WAN_FIXED ? "wavelengths" : "slots", fs_wan_algo_name(p->opts.algo),
           p->opts.k);
  fs_html_begin(&h, f, title, sub);
  int rc = 0;
  if (r0) wan_train_section(&h, r0, after ? "The job's all-reduce before the cut" : "The job's all-reduce");
  if (after && r1) wan_train_section(&h, r1, "The job's all-reduce after the cut");
  rc = wan_plan_sections(&h, p, after ? "Lightpaths before the cut" : "Lightpaths");
  if (!rc && after) rc = wan_plan_sections(&h, after, "Lightpaths after the cut (restored)");
  int rc2 = fs_html_end(&h);
  return rc ? rc : rc2;
}

/* ---- ocs ---- */
/* ---- ocs schedule ---- */

/* Milliseconds with three decimals and separators (every time on the OCS
 * pages, so columns compare at a glance). */
static void ms3(char *b, size_t n, double s) {
  if (!isfinite(s)) snprintf(b, n, "-");
  else fs_html_thousands(b, n, s * 1e3, 3);
}

/* The configurations table: one row per (phase, OCS, slot) of the drawn
 * schedule, at most this many, and each row's circuits listed up to
 * CIRCUITS_LISTED. */
enum { MAX_CONFIG_ROWS = 200, CIRCUITS_LISTED = 12, CONFIG_COLS = 8 };

typedef struct seg_key {
  int32_t ocs, slot;
  size_t i;
} seg_key;

static int cmp_seg_key(const void *a, const void *b) {
  const seg_key *x = a, *y = b;
  if (x->ocs != y->ocs) return x->ocs < y->ocs ? -1 : 1;
  if (x->slot != y->slot) return x->slot < y->slot ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

/* One configuration's row: its segments are keys[a..b) (same OCS and slot).
 * Lit segments are its circuits; dark ones the circuits being set up. */
static void config_row(const fs_html_ocs_page *pg, const char *phase, const seg_key *keys,
                       size_t a, size_t b, char (*cell)[200]) {
  double t0 = INFINITY, t1 = -INFINITY, lit0 = INFINITY, bytes = 0;
  int32_t lit = 0, dark = 0;
  size_t pos = 0;
  cell[7][0] = 0;
  for (size_t k = a; k < b; k++) {
    const fs_ocs_seg *g = &pg->segs[keys[k].i];
    t0 = fmin(t0, g->t0_s);
    t1 = fmax(t1, g->t1_s);
    if (g->dark) {
      dark++;
      continue;
    }
    lit0 = fmin(lit0, g->t0_s);
    bytes += g->bytes;
    if (lit++ < CIRCUITS_LISTED && pos < 180)
      pos += (size_t)snprintf(cell[7] + pos, 200 - pos, "%s%d\u2192%d", lit > 1 ? " " : "",
                              g->src, g->dst);
  }
  if (lit > CIRCUITS_LISTED && pos < 180)
    snprintf(cell[7] + pos, 200 - pos, " (+%d more)", lit - CIRCUITS_LISTED);
  snprintf(cell[0], 200, "%s", phase);
  snprintf(cell[1], 200, "%d / %d", keys[a].ocs, keys[a].slot);
  ms3(cell[2], 200, t0);
  ms3(cell[3], 200, isfinite(lit0) ? lit0 : t1);
  ms3(cell[4], 200, t1);
  snprintf(cell[5], 200, "%d (%d set up)", lit, dark);
  fs_html_thousands(cell[6], 200, bytes / 1e6, 3);
}

static int ocs_configs(fs_html *h, const fs_html_ocs_page *pg) {
  seg_key *keys = malloc((pg->n_segs ? pg->n_segs : 1) * sizeof(*keys));
  char(*cells)[CONFIG_COLS][200] = malloc(MAX_CONFIG_ROWS * sizeof(*cells));
  const char **cp = malloc(MAX_CONFIG_ROWS * CONFIG_COLS * sizeof(*cp));
  if (!keys || !cells || !cp) {
    FS__FREE_ALL(keys, cells, cp);
    return FS_ENOMEM;
  }
  int32_t rows = 0, total = 0;
  for (int32_t p = 0; p < pg->n_phases; p++) {
    const fs_html_ocs_phase *ph = &pg->phases[p];
    for (size_t k = 0; k < ph->n_segs; k++)
      keys[k] = (seg_key){pg->segs[ph->first_seg + k].ocs, pg->segs[ph->first_seg + k].slot,
                          ph->first_seg + k};
    qsort(keys, ph->n_segs, sizeof(*keys), cmp_seg_key);
    for (size_t a = 0, b; a < ph->n_segs; a = b) {
      for (b = a + 1; b < ph->n_segs && keys[b].ocs == keys[a].ocs && keys[b].slot == keys[a].slot;
           b++) {
      }
      total++;
      if (rows == MAX_CONFIG_ROWS) continue;
      config_row(pg, ph->name, keys, a, b, cells[rows]);
      for (int c = 0; c < CONFIG_COLS; c++) cp[rows * CONFIG_COLS + c] = cells[rows][c];
      rows++;
    }
  }
  char note[200];
  snprintf(note, sizeof(note),
           "Each OCS's slots in order: the changed circuits are dark for the reconfiguration "
           "delay, then every circuit carries its pair's bytes.%s",
           total > rows ? " The first 200 configurations." : "");
  static const char *const head[CONFIG_COLS] = {
      "phase", "OCS / slot", "starts (ms)", "lit (ms)", "ends (ms)", "circuits",
      "carried (MB)", "circuits (source\u2192destination)"};
  fs_html_section(h, "Circuit configurations", note);
  fs_html_table(h, head, CONFIG_COLS, cp, rows);
  FS__FREE_ALL(keys, cells, cp);
  return 0;
}

/* The circuits' time line: a row per source node, a span per segment named
 * by the node it joins, the phases' starts and their lower bounds marked. */
static int ocs_gantt(fs_html *h, const fs_html_ocs_page *pg) {
  int32_t n_rows = pg->n_nodes < FS_HTML_MAX_ROWS ? pg->n_nodes : FS_HTML_MAX_ROWS;
  char(*rn)[32] = malloc((size_t)(n_rows > 0 ? n_rows : 1) * sizeof(*rn));
  const char **rows = malloc((size_t)(n_rows > 0 ? n_rows : 1) * sizeof(*rows));
  fs_html_span *sp = malloc((pg->n_segs ? pg->n_segs : 1) * sizeof(*sp));
  char(*lab)[16] = malloc((pg->n_segs ? pg->n_segs : 1) * sizeof(*lab));
  fs_html_mark *mk = malloc((size_t)(2 * pg->n_phases + 1) * sizeof(*mk));
  if (!rn || !rows || !sp || !lab || !mk) {
    FS__FREE_ALL(rn, rows, sp, lab, mk);
    return FS_ENOMEM;
  }
  for (int32_t r = 0; r < n_rows; r++) {
    snprintf(rn[r], sizeof(rn[r]), "node %d out", r);
    rows[r] = rn[r];
  }
  int64_t m = 0;
  for (size_t i = 0; i < pg->n_segs; i++) {
    const fs_ocs_seg *g = &pg->segs[i];
    if (g->src < 0 || g->src >= n_rows) continue;
    snprintf(lab[m], sizeof(lab[m]), "\u2192%d", g->dst);
    sp[m] = (fs_html_span){g->src, g->dark ? 1 : 0, g->t0_s, g->t1_s - g->t0_s, lab[m]};
    m++;
  }
  int32_t nm = 0;
  for (int32_t p = 0; p < pg->n_phases; p++) {
    const fs_html_ocs_phase *ph = &pg->phases[p];
    if (pg->n_phases > 1) mk[nm++] = (fs_html_mark){ph->start_s, ph->name, 0};
    mk[nm++] = (fs_html_mark){ph->start_s + ph->lower_bound_s,
                              pg->n_phases > 1 ? "bound" : "lower bound", 1};
  }
  static const char *const cls[] = {"circuit lit", "reconfiguring (dark)"};
  char note[400];
  snprintf(note, sizeof(note),
           "%s Each span is a circuit out of the node, labelled with the node it joins "
           "(hover for its times).%s Dashed red: %s lower bound max(row sum, column sum) / "
           "(degree x rate).%s",
           pg->note, pg->n_phases > 1 ? " Solid lines: the phases' starts." : "",
           pg->n_phases > 1 ? "each phase's" : "the",
           pg->n_nodes > n_rows ? " The first 40 nodes." : "");
  fs_html_section(h, "Circuit schedule", note);
  fs_html_gantt(h, "Circuits out of each node over time", rows, n_rows, cls, 2, sp, m, pg->t_end,
                mk, nm);
  FS__FREE_ALL(rn, rows, sp, lab, mk);
  return 0;
}

/* The sweep: completion against the delay, one line per algorithm and the
 * bound (which does not depend on the delay). */
static int ocs_sweep(fs_html *h, const fs_html_ocs_page *pg) {
  enum { MAX_SERIES = 9 }; /* at most 8 algorithms and the bound */
  int32_t na = pg->n_algos, nd = pg->n_delays;
  double *y = malloc((size_t)(na + 1) * (size_t)nd * sizeof(double));
  double *x = malloc((size_t)nd * sizeof(double));
  if (!y || !x) {
    FS__FREE_ALL(x, y);
    return FS_ENOMEM;
  }
  fs_html_series ser[MAX_SERIES];
  int32_t ns = 0;
  for (int32_t k = 0; k < nd; k++) x[k] = pg->delays_s[k];
  for (int32_t a = 0; a <= na && ns < MAX_SERIES; a++) {
    double *ya = y + (size_t)a * (size_t)nd;
    for (int32_t k = 0; k < nd; k++)
      ya[k] = (a < na ? pg->algos[k * na + a].completion_s : pg->lower_bound_s) * 1e3;
    ser[ns++] = (fs_html_series){a < na ? pg->algos[a].algo : "lower bound", x, ya, nd, 0, 0};
  }
  fs_html_section(h, "Completion against the reconfiguration delay", pg->note);
  fs_html_axes ax = {"Job completion time vs reconfiguration delay", "reconfiguration delay",
                     "completion (ms)", 1, 0, 0, 1};
  fs_html_lines(h, &ax, ser, ns);
  FS__FREE_ALL(x, y);
  return 0;
}

int fs_html_ocs_report(FILE *f, const fs_html_ocs_page *pg) {
  fs_html h;
  fs_html_begin(&h, f, pg->title, NULL);
  int32_t na = pg->n_algos, sweep = pg->n_delays > 0;
  int rc = 0;
  if (!sweep) {
    /* summary: each algorithm against the bound, and as bars */
    enum { COLS = 4, MAX_ALGOS = 8 };
    char cells[MAX_ALGOS + 1][COLS][48];
    const char *cp[(MAX_ALGOS + 1) * COLS], *labels[MAX_ALGOS + 1];
    double vals[MAX_ALGOS + 1];
    int32_t n = 0;
    for (int32_t a = 0; a < na && a < MAX_ALGOS; a++, n++) {
      const fs_html_ocs_algo *r = &pg->algos[a];
      snprintf(cells[n][0], 48, "%s", r->algo);
      ms3(cells[n][1], 48, r->completion_s);
      snprintf(cells[n][2], 48, "%d", r->reconfigs);
      snprintf(cells[n][3], 48, "%.3f", pg->lower_bound_s > 0 ? r->completion_s /
                                                                    pg->lower_bound_s : 1.0);
      labels[n] = r->algo;
      vals[n] = r->completion_s * 1e3;
    }
    snprintf(cells[n][0], 48, "lower bound");
    ms3(cells[n][1], 48, pg->lower_bound_s);
    snprintf(cells[n][2], 48, "-");
    snprintf(cells[n][3], 48, "1.000");
    labels[n] = "lower bound";
    vals[n++] = pg->lower_bound_s * 1e3;
    for (int32_t r = 0; r < n * COLS; r++) cp[r] = cells[r / COLS][r % COLS];
    static const char *const head[COLS] = {"schedule", "completion (ms)", "reconfigurations",
                                           "completion / bound"};
    fs_html_section(&h, "Summary", "The lower bound: the busiest node's bytes at the full "
                    "circuit rate on every port, no reconfiguration (docs/model-ocs.md).");
    fs_html_table(&h, head, COLS, cp, n);
    fs_html_bars(&h, "Completion time against the lower bound", "ms", labels, vals, n);
    if (pg->drawn) {
      rc = ocs_gantt(&h, pg);
      if (!rc) rc = ocs_configs(&h, pg);
    } else {
      fs_html_section(&h, "Circuit schedule", pg->note);
    }
  } else {
    /* the sweep: a table of completions per delay, then the plot */
    int32_t cols = na + 2;
    char(*cells)[48] = malloc((size_t)pg->n_delays * (size_t)cols * sizeof(*cells));
    const char **cp = malloc((size_t)pg->n_delays * (size_t)cols * sizeof(*cp));
    const char **head = malloc((size_t)cols * sizeof(*head));
    if (!cells || !cp || !head) {
      FS__FREE_ALL(cells, cp, head);
      fs_html_end(&h);
      return FS_ENOMEM;
    }
    head[0] = "delay";
    for (int32_t a = 0; a < na; a++) head[a + 1] = pg->algos[a].algo;
    head[na + 1] = "best";
    for (int32_t k = 0; k < pg->n_delays; k++) {
      char(*row)[48] = cells + (size_t)k * (size_t)cols;
      double d = pg->delays_s[k], mul = d < 1e-6 ? 1e9 : d < 1e-3 ? 1e6 : 1e3;
      snprintf(row[0], 48, "%.3g %s", d * mul, d < 1e-6 ? "ns" : d < 1e-3 ? "us" : "ms");
      int32_t best = 0;
      for (int32_t a = 0; a < na; a++) {
        const fs_html_ocs_algo *r = &pg->algos[k * na + a];
        ms3(row[a + 1], 48, r->completion_s);
        if (r->completion_s < pg->algos[k * na + best].completion_s) best = a;
      }
      snprintf(row[na + 1], 48, "%s", na ? pg->algos[k * na + best].algo : "-");
      for (int32_t c = 0; c < cols; c++) cp[(size_t)k * (size_t)cols + (size_t)c] = row[c];
    }
    rc = ocs_sweep(&h, pg);
    char lb[48], note[120];
    ms3(lb, sizeof(lb), pg->lower_bound_s);
    snprintf(note, sizeof(note), "Completion in ms per delay; the lower bound is %s ms at every "
             "delay.", lb);
    fs_html_section(&h, "Completions", note);
    fs_html_table(&h, head, cols, cp, pg->n_delays);
    FS__FREE_ALL(cells, cp, head);
  }
  int rc2 = fs_html_end(&h);
  return rc ? rc : rc2;
}
