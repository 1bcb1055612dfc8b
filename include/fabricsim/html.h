/* Self-contained HTML reports with inline SVG plots (`--report FILE.html`
 * on train, sim, coll, route and ocs; docs/formats.md, "HTML reports").
 *
 * One file, no network: the style sheet and the plots are inline, the only
 * script is one line that marks the page as loaded and notes whether it is
 * wider than the window (data-report, data-overflow: tests read them). Output
 * streams to a FILE as it is written, numbers are printed with fixed
 * precision and nothing depends on the clock or on addresses, so the same
 * input gives the same bytes.
 *
 * Two layers: a writer of page pieces (fs_html_*: headings, tables, line
 * charts, bars, a split bar, a Gantt chart, a heatmap, a topology drawing)
 * and the pages of each command (fs_html_*_report), which take the
 * command's results and call the pieces. Sizes: a heatmap draws at most
 * FS_HTML_MAX_ROWS rows (the busiest links, and links grouped by the tiers
 * they join), a topology is drawn node by node up to FS_HTML_MAX_TOPO_NODES
 * nodes and in blocks beyond; a report of a 1024-GPU training job stays
 * near a megabyte. */
#ifndef FABRICSIM_HTML_H
#define FABRICSIM_HTML_H

#include <stdint.h>
#include <stdio.h>

#include "fabricsim/coll.h"
#include "fabricsim/ocs.h"
#include "fabricsim/scenario.h"
#include "fabricsim/sim.h"
#include "fabricsim/topo.h"
#include "fabricsim/train.h"
#include "fabricsim/wan.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { FS_HTML_MAX_ROWS = 40, FS_HTML_MAX_TOPO_NODES = 64, FS_HTML_LINK_BINS = 120 };

typedef struct fs_html {
  FILE *f;
  int figures; /* numbered in order */
} fs_html;

/* ---- pieces (text is escaped; none of them fails by itself: errors show
 * in fs_html_end) ---- */
void fs_html_begin(fs_html *h, FILE *f, const char *title, const char *subtitle);
/* Closes the page; 0, or FS_EIO if any write failed. */
int fs_html_end(fs_html *h);
void fs_html_section(fs_html *h, const char *title, const char *note);
/* A table of n rows of ncols cells, row-major; head may be NULL. */
void fs_html_table(fs_html *h, const char *const *head, int32_t ncols, const char *const *cells,
                   int32_t nrows);

typedef struct fs_html_series {
  const char *name;
  const double *x, *y;
  int32_t n;
  int dashed; /* a model curve: dashed, no points */
  int step;   /* a CDF: horizontal then vertical */
} fs_html_series;
typedef struct fs_html_axes {
  const char *title, *xlabel, *ylabel;
  int logx, logy; /* log2-spaced axes (values must be > 0) */
  int xbytes;     /* x ticks as sizes (1K, 1M, ...) */
  int xseconds;   /* x values in seconds, ticks as times (1 ns, 10 us, ...);
                     with logx at the powers of ten */
} fs_html_axes;
void fs_html_lines(fs_html *h, const fs_html_axes *ax, const fs_html_series *s, int32_t n);
/* Horizontal bars with their values (unit printed after each). */
void fs_html_bars(fs_html *h, const char *title, const char *unit, const char *const *labels,
                  const double *values, int32_t n);
/* Small multiples: one panel per quantity (n_panels, three a row), in each
 * a bar per label, v[panel * n_labels + label] (non-finite: "-"), each
 * panel scaled to its largest value, which its axis prints; a label has
 * the same colour in every panel. For quantities of different units
 * compared across the same few things (routings). */
void fs_html_bar_grid(fs_html *h, const char *title, const char *const *panels,
                      int32_t n_panels, const char *const *labels, int32_t n_labels,
                      const double *v);
/* One bar split into parts of a whole (e.g. where the time goes). */
void fs_html_split(fs_html *h, const char *title, const char *unit, const char *const *labels,
                   const double *values, int32_t n);
/* Gantt chart: spans [start, start + dur) on rows, coloured by class; a
 * span's label (may be NULL) is in its hover text and written on it where
 * it fits. Marks are vertical lines across the chart at time t with a
 * label at the top: solid (a boundary, e.g. a phase's start) or dashed (a
 * bound to compare with). */
typedef struct fs_html_span {
  int32_t row, cls;
  double start, dur;
  const char *label;
} fs_html_span;
typedef struct fs_html_mark {
  double t;
  const char *label;
  int dashed;
} fs_html_mark;
void fs_html_gantt(fs_html *h, const char *title, const char *const *rows, int32_t n_rows,
                   const char *const *classes, int32_t n_classes, const fs_html_span *sp,
                   int64_t n, double t_end, const fs_html_mark *marks, int32_t n_marks);
/* Spectrum occupancy: one row per fibre (or core), n_units slots or
 * wavelengths across; owner[r * n_units + u] is the lightpath holding the
 * unit (>= 0, one colour per lightpath, its label in the hover text from
 * owner_label) or -1 (free, white). Runs of one owner are one rectangle. */
void fs_html_spectrum(fs_html *h, const char *title, const char *const *rows, int32_t n_rows,
                      int32_t n_units, const int32_t *owner, const char *const *owner_label,
                      const char *unit_name);
/* Heatmap: u[r * n_cols + c] in [0, 1] (utilisation), columns of col_s s. */
void fs_html_heatmap(fs_html *h, const char *title, const char *const *rows, int32_t n_rows,
                     int32_t n_cols, const double *u, double col_s);
/* A layered drawing by tier (hosts at the bottom), links shaded by util
 * (per directed link, the busier direction drawn; NULL: plain). Over
 * FS_HTML_MAX_TOPO_NODES nodes it is aggregated: each tier's nodes in at
 * most 24 blocks (by pod or leaf, else runs of nodes), the links between
 * two blocks one bundle with its cables, capacity and utilisation. */
void fs_html_topology(fs_html *h, const fs_topo *t, const double *util);
/* From a run with link bins: a heatmap of the busiest links and one of
 * link groups (the kinds and tiers they join), and the busiest links as
 * bars. Without bins: the bars only. */
void fs_html_links(fs_html *h, const fs_sim *s);
/* v with `decimals` decimals and its integer digits in groups of three
 * ("20,480", "429,496.730"), for counts and sizes a reader compares. */
void fs_html_thousands(char *buf, size_t n, double v, int decimals);

/* ---- pages: each returns 0 or FS_EIO / FS_ENOMEM ---- */
/* sc has run with opts.link_bins (FS_HTML_LINK_BINS) for the heatmaps. */
int fs_html_sim_report(FILE *f, const fs_scenario *sc);
/* A job run alone (fs_train_run), its simulation with link bins. */
int fs_html_train_report(FILE *f, const fs_job *job, const fs_train *tr,
                         const fs_train_result *r);
/* Jobs sharing one cluster (fs_cluster_run; trs from fs_cluster_job): a
 * table of the jobs, then each job's sections as the one-job page has
 * them, then the shared simulation's links and topology. */
int fs_html_cluster_report(FILE *f, fs_job *const *jobs, const fs_train *const *trs,
                           const fs_train_result *res, int32_t n);

/* coll: rows of one collective per size, per algorithm. */
typedef struct fs_html_coll_row {
  double bytes;            /* nccl-tests size */
  double time_s, model_s;  /* simulated, closed form (0: none) */
  double busbw, model_busbw; /* GB/s */
} fs_html_coll_row;
typedef struct fs_html_coll_algo {
  const char *algo;
  const fs_html_coll_row *rows;
  int32_t n;
} fs_html_coll_algo;
int fs_html_coll_report(FILE *f, const char *op, int32_t ranks, const fs_topo *t,
                        const fs_html_coll_algo *algos, int32_t n_algos);

/* route: one row per routing (ECMP, spray, optimisers ...), named metrics. */
typedef struct fs_html_route_row {
  const char *name;
  const double *v; /* n_metrics values */
} fs_html_route_row;
int fs_html_route_report(FILE *f, const char *title, const fs_topo *t,
                         const char *const *metrics, int32_t n_metrics,
                         const fs_html_route_row *rows, int32_t n_rows);

/* wan provision / train: the lightpaths (a table), each fibre's spectrum
 * (which lightpath holds each unit) and occupancy; with a training result,
 * its phases simulated and in closed form, and after a cut the same. */
int fs_html_wan_report(FILE *f, const char *title, const fs_wan_plan *p,
                       const fs_wan_train_result *r0, const fs_wan_plan *after,
                       const fs_wan_train_result *r1);

/* ocs schedule: each algorithm's completion against the job's lower bound;
 * one schedule's circuits over time (fs_ocs_execute's segments, the phases
 * placed one after another), one row per source node (the first
 * FS_HTML_MAX_ROWS), each circuit labelled with the node it joins, the
 * phases' starts and bounds marked, and its configurations as a table; or,
 * with n_delays > 0, the delay sweep: completion against the delay. */
typedef struct fs_html_ocs_algo {
  const char *algo;
  double completion_s;
  int32_t reconfigs;
} fs_html_ocs_algo;
typedef struct fs_html_ocs_phase {
  const char *name;
  double start_s, lower_bound_s; /* on the drawing's time line; the phase's own bound */
  size_t first_seg, n_segs;      /* its segments in segs */
} fs_html_ocs_phase;
typedef struct fs_html_ocs_page {
  const char *title, *note;
  const fs_html_ocs_algo *algos; /* one delay: n_algos; the sweep: n_delays x n_algos */
  int32_t n_algos;
  double lower_bound_s; /* the pure OCS bound of the whole job */
  const char *drawn;    /* the algorithm drawn, NULL: none */
  const fs_ocs_seg *segs;
  size_t n_segs;
  const fs_html_ocs_phase *phases;
  int32_t n_phases, n_nodes;
  double t_end;
  const double *delays_s; /* the sweep's delays, or NULL */
  int32_t n_delays;
} fs_html_ocs_page;
int fs_html_ocs_report(FILE *f, const fs_html_ocs_page *pg);

#ifdef __cplusplus
}
#endif

#endif
