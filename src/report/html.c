/* The pieces of an HTML report (html.h): page frame, tables and inline SVG
 * charts. Everything is written with fprintf as it goes; coordinates are
 * printed to 0.1 px and values with %g-style fixed precision, so a page is
 * byte-stable. Costs are linear in what is drawn: a Gantt chart one <rect>
 * per span, a heatmap one per non-zero cell (at most FS_HTML_MAX_ROWS x
 * bins), a topology drawing one <line> per cable. */
#include "fabricsim/html.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../base/base.h"
#include "fabricsim/err.h"

#define W 960.0 /* plot width, px */

static const char *const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1",
                                      "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#bab0ac"};
#define N_PALETTE ((int32_t)(sizeof(palette) / sizeof(palette[0])))

static void esc(FILE *f, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '&': fputs("&amp;", f); break;
      case '"': fputs("&quot;", f); break;
      default: fputc(*s, f);
    }
  }
}

static const char *color(int32_t i) { return palette[((i % N_PALETTE) + N_PALETTE) % N_PALETTE]; }

/* A series' colour from its name where it names a phase or a kind of
 * traffic, the same on every chart of every page (the time split, the
 * timeline, the legends); else from its position. Whole words in any
 * case, so "exposed dp" and "DP collective" alike (issue 45). */
static const char *named_color(const char *label, int32_t i) {
  static const struct {
    const char *word, *color;
  } fixed[] = {
      {"compute", "#4e79a7"}, {"forward", "#4e79a7"}, {"backward", "#9c755f"},
      {"bubble", "#bab0ac"},  {"TP", "#f28e2b"},      {"SP", "#f28e2b"},
      {"DP", "#59a14f"},      {"EP", "#e15759"},      {"PP", "#b07aa1"},
      {"CP", "#edc948"},
  };
  for (size_t k = 0; label && k < sizeof(fixed) / sizeof(fixed[0]); k++) {
    size_t n = strlen(fixed[k].word);
    for (const char *p = label; *p; p++) /* (any case: "exposed dp", "DP collective") */
      if (strncasecmp(p, fixed[k].word, n) == 0 &&
          (p == label || !isalnum((unsigned char)p[-1])) && !isalnum((unsigned char)p[n]))
        return fixed[k].color;
  }
  return color(i);
}

void fs_html_begin(fs_html *h, FILE *f, const char *title, const char *subtitle) {
  h->f = f;
  h->figures = 0;
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
  esc(f, title);
  fputs("</title>\n<style>\n"
        "body{font:14px/1.4 sans-serif;margin:24px auto;max-width:1000px;color:#222}\n"
        "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px;"
        "border-bottom:1px solid #ddd}\n"
        "p.sub,p.note{color:#555;margin:2px 0 8px;overflow-wrap:anywhere}\n"
        "table{border-collapse:collapse;margin:6px 0}td,th{padding:2px 10px;"
        "border-bottom:1px solid #eee;text-align:right}\n"
        "td:first-child,th:first-child{text-align:left}\n"
        "figure{margin:10px 0}figcaption{font-weight:bold;margin-bottom:4px}\n"
        "svg text{font:11px sans-serif;fill:#333}svg .t{font-weight:bold}\n"
        /* narrow windows: figures scale down with the page (their viewBox),
         * wide tables scroll inside themselves (issue 45) */
        "svg{max-width:100%;height:auto}body{padding:0 8px}\n"
        "table{display:block;max-width:100%;overflow-x:auto}\n"
        "</style>\n</head>\n<body>\n<h1>",
        f);
  esc(f, title);
  fputs("</h1>\n", f);
  if (subtitle && *subtitle) {
    fputs("<p class=\"sub\">", f);
    esc(f, subtitle);
    fputs("</p>\n", f);
  }
}

int fs_html_end(fs_html *h) {
  fputs("<p class=\"note\">Written by fabricsim. Self-contained: no scripts or files are "
        "loaded.</p>\n<script>var e=document.documentElement,o=0;"
        "for(const x of document.querySelectorAll(\"div,table\"))o+=x.scrollWidth>x.clientWidth+1;"
        "e.setAttribute(\"data-overflow\",(e.scrollWidth>innerWidth?\"page+\":\"\")+o);"
        "e.setAttribute(\"data-report\",\"ok\");</script>\n</body>\n</html>\n",
        h->f);
  return ferror(h->f) ? FS_EIO : 0;
}

void fs_html_section(fs_html *h, const char *title, const char *note) {
  fputs("<h2>", h->f);
  esc(h->f, title);
  fputs("</h2>\n", h->f);
  if (note && *note) {
    fputs("<p class=\"note\">", h->f);
    esc(h->f, note);
    fputs("</p>\n", h->f);
  }
}

void fs_html_table(fs_html *h, const char *const *head, int32_t ncols, const char *const *cells,
                   int32_t nrows) {
  fputs("<div style=\"overflow-x:auto\"><table>\n", h->f);
  if (head) {
    fputs("<tr>", h->f);
    for (int32_t c = 0; c < ncols; c++) {
      fputs("<th>", h->f);
      esc(h->f, head[c]);
      fputs("</th>", h->f);
    }
    fputs("</tr>\n", h->f);
  }
  for (int32_t r = 0; r < nrows; r++) {
    fputs("<tr>", h->f);
    for (int32_t c = 0; c < ncols; c++) {
      fputs("<td>", h->f);
      esc(h->f, cells[(size_t)r * ncols + c]);
      fputs("</td>", h->f);
    }
    fputs("</tr>\n", h->f);
  }
  fputs("</table></div>\n", h->f);
}

static void fig_begin(fs_html *h, const char *title, double width, double height) {
  h->figures++;
  fprintf(h->f, "<figure id=\"fig%d\"><figcaption>", h->figures);
  esc(h->f, title);
  fprintf(h->f, "</figcaption>\n<svg width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n",
          width, height, width, height);
}

static void fig_end(fs_html *h) { fputs("</svg></figure>\n", h->f); }

/* ---- number formatting ---- */
void fs_html_thousands(char *buf, size_t n, double v, int decimals) {
  char raw[64];
  snprintf(raw, sizeof(raw), "%.*f", decimals, fabs(v));
  const char *dot = strchr(raw, '.');
  size_t digits = dot ? (size_t)(dot - raw) : strlen(raw), k = 0;
  char out[96];
  if (v < 0 && strspn(raw, "0.") != strlen(raw)) out[k++] = '-';
  for (size_t i = 0; i < digits; i++) {
    if (i && (digits - i) % 3 == 0) out[k++] = ',';
    out[k++] = raw[i];
  }
  snprintf(out + k, sizeof(out) - k, "%s", dot ? dot : "");
  snprintf(buf, n, "%s", out);
}
static void fmt_si(char *buf, size_t n, double v, int bytes) {
  static const char *const suf[] = {"", "K", "M", "G", "T", "P"};
  double base = bytes ? 1024 : 1000, a = fabs(v);
  int k = 0;
  while (a >= base && k < 5) a /= base, v /= base, k++;
  snprintf(buf, n, "%.4g%s", v, suf[k]);
}

/* Seconds in the unit that suits `scale` (the axis's span). */
static void time_unit(double scale, double *mul, const char **unit) {
  if (scale >= 1) *mul = 1, *unit = "s";
  else if (scale >= 1e-3) *mul = 1e3, *unit = "ms";
  else if (scale >= 1e-6) *mul = 1e6, *unit = "us";
  else *mul = 1e9, *unit = "ns";
}

/* A "nice" tick step for a span: 1, 2 or 5 x 10^k, about 6 ticks. */
static double nice_step(double span) {
  if (!(span > 0)) return 1;
  double raw = span / 6, p = pow(10, floor(log10(raw))), m = raw / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/* ---- line charts ---- */
typedef struct axis {
  double lo, hi;
  int log;
  double px0, px1; /* pixel range */
} axis;

static double ax_px(const axis *a, double v) {
  double t;
  if (a->log) t = (log2(v) - log2(a->lo)) / (log2(a->hi) - log2(a->lo));
  else t = (v - a->lo) / (a->hi - a->lo);
  if (!isfinite(t)) t = 0;
  return a->px0 + t * (a->px1 - a->px0);
}

static void ax_range(axis *a, const fs_html_series *s, int32_t n, int y) {
  a->lo = INFINITY;
  a->hi = -INFINITY;
  for (int32_t i = 0; i < n; i++)
    for (int32_t k = 0; k < s[i].n; k++) {
      double v = y ? s[i].y[k] : s[i].x[k];
      if (!isfinite(v) || (a->log && !(v > 0))) continue;
      if (v < a->lo) a->lo = v;
      if (v > a->hi) a->hi = v;
    }
  if (!(a->lo <= a->hi)) a->lo = a->log ? 1 : 0, a->hi = a->log ? 2 : 1;
  if (!a->log && y && a->lo > 0) a->lo = 0;
  if (a->log) {
    a->lo = exp2(floor(log2(a->lo)));
    a->hi = exp2(ceil(log2(a->hi)));
    if (a->hi <= a->lo) a->hi = a->lo * 2;
  } else if (a->hi - a->lo <= 1e-9 * fmax(fabs(a->lo), fabs(a->hi))) {
    /* one value (to rounding): a unit span around it */
    a->hi = a->lo + (a->lo != 0 ? fabs(a->lo) * 0.1 : 1);
    a->lo -= a->hi - a->lo;
  } else if (y) {
    a->hi = ceil(a->hi / nice_step(a->hi - a->lo)) * nice_step(a->hi - a->lo);
  }
}

/* One tick of an axis at pixel p: a grid line across the plot and its label. */
static void tick(fs_html *h, int y, double p, double other0, double other1, const char *label) {
  if (y)
    fprintf(h->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>"
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
            other0, p, other1, p, other0 - 4, p + 4, label);
  else
    fprintf(h->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>"
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
            p, other0, p, other1, p, other0 + 14, label);
}

/* A time in seconds as a tick says it: "1 ns", "316 us", "10 ms". */
static void fmt_seconds(char *buf, size_t n, double v) {
  double mul;
  const char *unit;
  time_unit(fabs(v) > 0 ? fabs(v) : 1, &mul, &unit);
  snprintf(buf, n, "%.3g %s", v * mul, unit);
}

/* Tick labels: plain numbers, sizes (TICK_BYTES) or times (TICK_SECONDS). */
enum { TICK_PLAIN, TICK_BYTES, TICK_SECONDS };

static void ax_ticks(fs_html *h, const axis *a, int y, double other0, double other1, int kind) {
  char b[32];
  if (a->log && kind == TICK_SECONDS) { /* decades: 1 ns, 10 ns, ... */
    for (double e = ceil(log10(a->lo) - 1e-9); e <= log10(a->hi) + 1e-9; e++) {
      fmt_seconds(b, sizeof(b), pow(10, e));
      tick(h, y, ax_px(a, pow(10, e)), other0, other1, b);
    }
    return;
  }
  if (a->log) {
    double span = log2(a->hi) - log2(a->lo);
    int every = span > 24 ? 4 : span > 12 ? 2 : 1;
    for (double e = log2(a->lo); e <= log2(a->hi) + 1e-9; e += every) {
      fmt_si(b, sizeof(b), exp2(e), kind == TICK_BYTES);
      tick(h, y, ax_px(a, exp2(e)), other0, other1, b);
    }
    return;
  }
  double step = nice_step(a->hi - a->lo), v0 = ceil(a->lo / step) * step;
  for (int i = 0; i <= 100; i++) { /* ~6 ticks; the bound only guards rounding */
    double v = v0 + i * step;
    if (v > a->hi + step * 1e-9) break;
    if (fabs(v) < step * 1e-6) v = 0;
    if (kind == TICK_BYTES) fmt_si(b, sizeof(b), v, 1);
    else if (kind == TICK_SECONDS) fmt_seconds(b, sizeof(b), v);
    else snprintf(b, sizeof(b), "%.4g", v);
    tick(h, y, ax_px(a, v), other0, other1, b);
  }
}

void fs_html_lines(fs_html *h, const fs_html_axes *ax, const fs_html_series *s, int32_t n) {
  double height = 340, left = 70, right = W - 190, top = 10, bottom = height - 40;
  axis xa = {0, 0, ax->logx, left, right}, ya = {0, 0, ax->logy, bottom, top};
  ax_range(&xa, s, n, 0);
  ax_range(&ya, s, n, 1);
  fig_begin(h, ax->title, W, height);
  ax_ticks(h, &xa, 0, bottom, top,
           ax->xbytes ? TICK_BYTES : ax->xseconds ? TICK_SECONDS : TICK_PLAIN);
  ax_ticks(h, &ya, 1, left, right, TICK_PLAIN);
  fprintf(h->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
          "stroke=\"#999\"/>\n", left, top, right - left, bottom - top);
  fputs("<text x=\"", h->f);
  fprintf(h->f, "%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (left + right) / 2, height - 6);
  esc(h->f, ax->xlabel);
  fprintf(h->f, "</text>\n<text transform=\"translate(14 %.1f) rotate(-90)\" "
          "text-anchor=\"middle\">", (top + bottom) / 2);
  esc(h->f, ax->ylabel);
  fputs("</text>\n", h->f);
  for (int32_t i = 0; i < n; i++) {
    const char *c = color(s[i].dashed ? i - 1 : i);
    fprintf(h->f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", c,
            s[i].dashed ? " stroke-dasharray=\"6 4\"" : "");
    double py = NAN;
    for (int32_t k = 0; k < s[i].n; k++) {
      if (!isfinite(s[i].x[k]) || !isfinite(s[i].y[k])) continue;
      if ((xa.log && !(s[i].x[k] > 0)) || (ya.log && !(s[i].y[k] > 0))) continue;
      double x = ax_px(&xa, s[i].x[k]), y = ax_px(&ya, s[i].y[k]);
      if (s[i].step && isfinite(py)) fprintf(h->f, "%.1f,%.1f ", x, py);
      fprintf(h->f, "%.1f,%.1f ", x, y);
      py = y;
    }
    fputs("\"/>\n", h->f);
    if (!s[i].dashed && !s[i].step && s[i].n <= 64)
      for (int32_t k = 0; k < s[i].n; k++) {
        if ((xa.log && !(s[i].x[k] > 0)) || (ya.log && !(s[i].y[k] > 0))) continue;
        fprintf(h->f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%.4g, %.4g"
                "</title></circle>\n", ax_px(&xa, s[i].x[k]), ax_px(&ya, s[i].y[k]), c,
                s[i].x[k], s[i].y[k]);
      }
    double ly = top + 14 + 18 * i;
    fprintf(h->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
            "stroke-width=\"2\"%s/><text x=\"%.1f\" y=\"%.1f\">", right + 12, ly, right + 36, ly,
            c, s[i].dashed ? " stroke-dasharray=\"6 4\"" : "", right + 42, ly + 4);
    esc(h->f, s[i].name);
    fputs("</text>\n", h->f);
  }
  fig_end(h);
}

/* ---- bars ---- */
void fs_html_bars(fs_html *h, const char *title, const char *unit, const char *const *labels,
                  const double *values, int32_t n) {
  /* A share in % is drawn against its whole (100 %, on a grey track, with
   * an axis): a link 1.5 % busy must not look saturated (issue 45). */
  int pct = unit && strcmp(unit, "%") == 0;
  double left = 230, right = W - 120, row = 20;
  double height = 20 + row * (n > 0 ? n : 1) + (pct ? 18 : 0);
  double mx = pct ? 100 : 0;
  for (int32_t i = 0; i < n; i++)
    if (isfinite(values[i]) && values[i] > mx) mx = values[i];
  if (!(mx > 0)) mx = 1;
  fig_begin(h, title, W, height);
  if (pct) {
    double y = 10 + row * (n > 0 ? n : 1);
    fprintf(h->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>"
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">0</text>"
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.4g %%</text>\n",
            left, y + 2, right, y + 2, left, y + 16, right, y + 16, mx);
  }
  for (int32_t i = 0; i < n; i++) {
    double y = 10 + row * i, v = isfinite(values[i]) && values[i] > 0 ? values[i] : 0;
    if (pct)
      fprintf(h->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
              "fill=\"#eee\"/>", left, y + 2, right - left, row - 5);
    fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", left - 6, y + 13);
    esc(h->f, labels[i]);
    fprintf(h->f, "</text><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%.4g",
            left, y + 2, (right - left) * v / mx, row - 5, color(0),
            left + (right - left) * v / mx + 6, y + 13, values[i]);
    if (unit && *unit) {
      fputc(' ', h->f);
      esc(h->f, unit);
    }
    fputs("</text>\n", h->f);
  }
  fig_end(h);
}

void fs_html_bar_grid(fs_html *h, const char *title, const char *const *panels,
                      int32_t n_panels, const char *const *labels, int32_t n_labels,
                      const double *v) {
  /* three panels a row; in each, one bar per label in that label's colour
   * (the same in every panel), from 0 to the panel's largest value, which
   * the axis under the bars prints */
  enum { COLS = 3 };
  double pw = W / COLS, row = 15, ph = 34 + row * (n_labels > 0 ? n_labels : 1) + 20;
  int32_t prow = (n_panels + COLS - 1) / COLS;
  double lw = 0; /* label column: the longest label, about 6 px a character */
  for (int32_t r = 0; r < n_labels; r++) lw = fmax(lw, 6.0 * (double)strlen(labels[r]));
  lw = fmin(lw + 8, pw * 0.4);
  fig_begin(h, title, W, ph * (prow > 0 ? prow : 1));
  for (int32_t m = 0; m < n_panels; m++) {
    double x0 = pw * (m % COLS), y0 = ph * (m / COLS);
    double left = x0 + lw, right = x0 + pw - 50, mx = 0;
    for (int32_t r = 0; r < n_labels; r++) {
      double x = v[(size_t)m * (size_t)n_labels + (size_t)r];
      if (isfinite(x) && x > mx) mx = x;
    }
    if (!(mx > 0)) mx = 1;
    fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\" style=\"font-weight:bold\">", x0 + 6, y0 + 18);
    esc(h->f, panels[m]);
    fputs("</text>\n", h->f);
    for (int32_t r = 0; r < n_labels; r++) {
      double x = v[(size_t)m * (size_t)n_labels + (size_t)r], y = y0 + 26 + row * r;
      double bar = isfinite(x) && x > 0 ? (right - left) * x / mx : 0;
      fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" style=\"font-size:10px\">",
              left - 4, y + 11);
      esc(h->f, labels[r]);
      fprintf(h->f, "</text><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
              "fill=\"%s\"/>", left, y + 2, bar, row - 4, color(r));
      if (isfinite(x))
        fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\" style=\"font-size:10px\">%.4g</text>\n",
                left + bar + 3, y + 11, x);
      else
        fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\" style=\"font-size:10px\">-</text>\n",
                left + 3, y + 11);
    }
    double ya = y0 + 26 + row * (n_labels > 0 ? n_labels : 1) + 2;
    fprintf(h->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>"
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" style=\"font-size:10px\">0"
            "</text><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" style=\"font-size:10px\">"
            "%.4g</text>\n", left, ya, right, ya, left, ya + 12, right, ya + 12, mx);
  }
  fig_end(h);
}

void fs_html_split(fs_html *h, const char *title, const char *unit, const char *const *labels,
                   const double *values, int32_t n) {
  double total = 0, left = 20, right = W - 20, mx = 0;
  for (int32_t i = 0; i < n; i++)
    if (values[i] > 0) total += values[i], mx = fmax(mx, values[i]);
  if (!(total > 0)) total = 1;
  /* every part with the same decimals: 4 significant digits of the largest,
   * at least one (not "2668 ms" beside "0.1613 ms", issue 45) */
  int dec = mx > 0 ? 3 - (int)floor(log10(mx)) : 1;
  if (dec < 1) dec = 1;
  if (dec > 6) dec = 6;
  /* the legend lists the parts there are: a part of 0 has no bar to name */
  int32_t shown = 0;
  for (int32_t i = 0; i < n; i++) shown += values[i] > 0;
  double height = 70 + 18 * ((shown + 2) / 3);
  fig_begin(h, title, W, height);
  double x = left;
  for (int32_t i = 0; i < n; i++) {
    if (!(values[i] > 0)) continue;
    double v = values[i], w = (right - left) * v / total;
    fprintf(h->f, "<rect x=\"%.1f\" y=\"10\" width=\"%.1f\" height=\"34\" fill=\"%s\"><title>",
            x, w, named_color(labels[i], i));
    esc(h->f, labels[i]);
    fprintf(h->f, ": %.*f %s (%.1f%%)</title></rect>\n", dec, values[i], unit ? unit : "",
            100 * v / total);
    if (w > 50)
      fprintf(h->f, "<text x=\"%.1f\" y=\"32\" text-anchor=\"middle\" style=\"fill:#fff\">"
              "%.1f%%</text>\n", x + w / 2, 100 * v / total);
    x += w;
  }
  for (int32_t i = 0, k = 0; i < n; i++) {
    if (!(values[i] > 0)) continue;
    double lx = left + (W - 40) / 3 * (k % 3), ly = 62 + 18 * (k / 3);
    k++;
    fprintf(h->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
            "<text x=\"%.1f\" y=\"%.1f\">", lx, ly - 10, named_color(labels[i], i), lx + 18, ly);
    esc(h->f, labels[i]);
    fprintf(h->f, ": %.*f %s (%.1f%%)</text>\n", dec, values[i], unit ? unit : "",
            100 * values[i] / total);
  }
  fig_end(h);
}

/* ---- Gantt ---- */
void fs_html_gantt(fs_html *h, const char *title, const char *const *rows, int32_t n_rows,
                   const char *const *classes, int32_t n_classes, const fs_html_span *sp,
                   int64_t n, double t_end, const fs_html_mark *marks, int32_t n_marks) {
  /* marks' labels take two lines above the rows: boundaries', bounds' */
  double left = 170, right = W - 10, row = 18, top = n_marks > 0 ? 58 : 30;
  double height = top + row * n_rows + 40;
  if (!(t_end > 0)) t_end = 1e-9;
  double mul;
  const char *unit;
  time_unit(t_end, &mul, &unit);
  fig_begin(h, title, W, height);
  for (int32_t c = 0; c < n_classes; c++) {
    double lx = left + 110 * c;
    fprintf(h->f, "<rect x=\"%.1f\" y=\"6\" width=\"12\" height=\"12\" fill=\"%s\"/>"
            "<text x=\"%.1f\" y=\"16\">", lx, named_color(classes[c], c), lx + 16);
    esc(h->f, classes[c]);
    fputs("</text>\n", h->f);
  }
  for (int32_t r = 0; r < n_rows; r++) {
    double y = top + row * r;
    fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", left - 6, y + 13);
    esc(h->f, rows[r]);
    fprintf(h->f, "</text><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "fill=\"#f6f6f6\"/>\n", left, y + 1, right - left, row - 2);
  }
  axis xa = {0, t_end * mul, 0, left, right};
  ax_ticks(h, &xa, 0, top + row * n_rows, top, TICK_PLAIN);
  fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time (%s)</text>\n",
          (left + right) / 2, height - 4, unit);
  double sx = (right - left) / t_end;
  for (int64_t i = 0; i < n; i++) {
    if (sp[i].row < 0 || sp[i].row >= n_rows) continue;
    double x = left + sp[i].start * sx, w = sp[i].dur * sx, y = top + row * sp[i].row;
    if (w < 0.3) w = 0.3;
    fprintf(h->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
            "<title>%.4g-%.4g %s", x, y + 2, w, row - 4,
            sp[i].cls >= 0 && sp[i].cls < n_classes ? named_color(classes[sp[i].cls], sp[i].cls)
                                                     : color(sp[i].cls),
            sp[i].start * mul, (sp[i].start + sp[i].dur) * mul, unit);
    if (sp[i].label) {
      fputs(": ", h->f);
      esc(h->f, sp[i].label);
    }
    fputs("</title></rect>\n", h->f);
    /* a label is written only where it fits: about 6 px a character */
    if (sp[i].label && w >= 6.0 * (double)strlen(sp[i].label) + 4) {
      fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
              "style=\"fill:#fff;font-size:10px\">", x + w / 2, y + 12);
      esc(h->f, sp[i].label);
      fputs("</text>\n", h->f);
    }
  }
  for (int32_t k = 0; k < n_marks; k++) {
    if (!(marks[k].t >= 0 && marks[k].t <= t_end)) continue;
    double x = left + marks[k].t * sx;
    fprintf(h->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
            "stroke-width=\"1.5\"%s/>", x, marks[k].dashed ? top - 6 : top - 20, x,
            top + row * n_rows, marks[k].dashed ? "#c00" : "#333", marks[k].dashed ? " stroke-dasharray=\"4 3\"" : "");
    if (marks[k].label) {
      /* a boundary's label starts at its line, a bound's ends there, a line
       * apart, so a bound just before a boundary does not cover it */
      int end = marks[k].dashed || x > right - 80; /* (near the right edge: inside) */
      fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" style=\"font-size:10px;"
              "fill:%s\">", x + (end ? -3 : 3), top - (marks[k].dashed ? 8 : 22),
              end ? "end" : "start", marks[k].dashed ? "#c00" : "#333");
      esc(h->f, marks[k].label);
      fputs("</text>", h->f);
    }
    fputs("\n", h->f);
  }
  fig_end(h);
}

/* ---- heatmap ---- */
static void heat_color(double u, char *buf, size_t n) {
  /* white -> orange -> dark red */
  if (u < 0) u = 0;
  if (u > 1) u = 1;
  int r, g, b;
  if (u < 0.5) {
    double t = u / 0.5;
    r = 255, g = (int)(255 - t * (255 - 160)), b = (int)(255 - t * 255);
  } else {
    double t = (u - 0.5) / 0.5;
    r = (int)(255 - t * (255 - 140)), g = (int)(160 - t * 160), b = 0;
  }
  snprintf(buf, n, "#%02x%02x%02x", r, g, b);
}

/* A labelled row of a heatmap or spectrum: the label right-aligned before
 * `left`, a white track from left to right. */
static void row_track(fs_html *h, const char *label, double left, double right, double y,
                      double row) {
  fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", left - 6, y + 11);
  esc(h->f, label);
  fprintf(h->f, "</text><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
          "fill=\"#fff\" stroke=\"#eee\"/>\n", left, y, right - left, row);
}

void fs_html_spectrum(fs_html *h, const char *title, const char *const *rows, int32_t n_rows,
                      int32_t n_units, const int32_t *owner, const char *const *owner_label,
                      const char *unit_name) {
  double left = 170, right = W - 20, row = 14, top = 8;
  double height = top + row * n_rows + 40;
  fig_begin(h, title, W, height);
  double cw = (right - left) / (n_units > 0 ? n_units : 1);
  for (int32_t r = 0; r < n_rows; r++) {
    double y = top + row * r;
    row_track(h, rows[r], left, right, y, row);
    const int32_t *o = owner + (size_t)r * (size_t)n_units;
    for (int32_t u = 0, v; u < n_units; u = v) {
      for (v = u + 1; v < n_units && o[v] == o[u]; v++) {
      }
      if (o[u] < 0) continue;
      fprintf(h->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
              "stroke=\"#fff\" stroke-width=\"0.5\"><title>%s %d-%d: ", left + cw * u, y + 1,
              cw * (v - u), row - 2, color(o[u]), unit_name, u, v - 1);
      esc(h->f, owner_label ? owner_label[o[u]] : "");
      fputs("</title></rect>\n", h->f);
    }
  }
  axis xa = {0, n_units, 0, left, right};
  ax_ticks(h, &xa, 0, top + row * n_rows, top + row * n_rows, TICK_PLAIN);
  fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s; a colour per lightpath, "
          "white free (hover for the lightpath)</text>\n", (left + right) / 2, height - 4,
          unit_name);
  fig_end(h);
}

void fs_html_heatmap(fs_html *h, const char *title, const char *const *rows, int32_t n_rows,
                     int32_t n_cols, const double *u, double col_s) {
  double left = 170, right = W - 70, row = 14, top = 8;
  double height = top + row * n_rows + 40;
  double t_end = col_s * n_cols, mul;
  const char *unit;
  time_unit(t_end > 0 ? t_end : 1e-9, &mul, &unit);
  fig_begin(h, title, W, height);
  double cw = (right - left) / (n_cols > 0 ? n_cols : 1);
  for (int32_t r = 0; r < n_rows; r++) {
    double y = top + row * r;
    row_track(h, rows[r], left, right, y, row);
    for (int32_t c = 0; c < n_cols; c++) {
      double v = u[(size_t)r * n_cols + c];
      if (!(v > 0.005)) continue;
      char col[8];
      heat_color(v, col, sizeof(col));
      fprintf(h->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
              "<title>%.0f%%</title></rect>\n", left + cw * c, y, cw + 0.2, row, col, v * 100);
    }
  }
  axis xa = {0, t_end * mul, 0, left, right};
  ax_ticks(h, &xa, 0, top + row * n_rows, top + row * n_rows, 0);
  fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time (%s); colour: "
          "utilisation of the bin, white 0%% to dark red 100%%</text>\n",
          (left + right) / 2, height - 4, unit);
  for (int k = 0; k <= 4; k++) {
    char col[8];
    heat_color(k / 4.0, col, sizeof(col));
    fprintf(h->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"%s\" "
            "stroke=\"#ccc\"/><text x=\"%.1f\" y=\"%.1f\">%d%%</text>\n",
            right + 10, top + 18.0 * k, col, right + 28, top + 18.0 * k + 11, k * 25);
  }
  fig_end(h);
}

/* ---- topology ---- */

/* Drawing layer of a node: hosts 0, NICs and scale-up switches 1, fabric
 * switches 1 + tier. */
static int32_t layer_of(const fs_node *nd) {
  if (nd->kind == FS_NODE_HOST) return 0;
  if (nd->kind == FS_NODE_NIC || nd->kind == FS_NODE_SCALEUP) return 1;
  return 1 + (nd->tier > 0 ? nd->tier : 1);
}

/* ---- a large topology, aggregated ----
 * Nodes of a layer are put in order of their group (pod, leaf; ungrouped
 * nodes each their own) and index; runs of the same group are natural
 * blocks, merged in order into at most AGG_BLOCKS blocks per layer. Links
 * between two blocks are drawn as one bundle: its cables, its capacity and
 * its utilisation (the busier direction's bytes over capacity, from the
 * per-link utilisations), the busiest link of it in the hover text. */
enum { AGG_LAYERS = 8, AGG_BLOCKS = 24 };

typedef struct agg_node {
  int64_t key; /* group, or past every group: the node itself */
  int32_t v;
} agg_node;

static int by_agg_key(const void *a, const void *b) {
  const agg_node *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return (x->v > y->v) - (x->v < y->v);
}

typedef struct agg_block {
  int32_t first, last, count; /* nodes, in the layer's order */
} agg_block;

typedef struct agg_bundle {
  double cap, busy, max_u; /* bit/s; sum of util x capacity; the busiest link's */
  int64_t links;
} agg_bundle;

static void topology_aggregated(fs_html *h, const fs_topo *t, const double *util) {
  int32_t n = t->n_nodes, nb_layer[AGG_LAYERS] = {0};
  agg_node *ord = malloc((size_t)(n ? n : 1) * sizeof(*ord));
  int32_t *block = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
  agg_block *bl = calloc(AGG_LAYERS * AGG_BLOCKS, sizeof(*bl));
  agg_bundle *bu = calloc((size_t)AGG_LAYERS * AGG_BLOCKS * AGG_LAYERS * AGG_BLOCKS, sizeof(*bu));
  if (!ord || !block || !bl || !bu) goto out;
  for (int32_t l = 0; l < AGG_LAYERS; l++) {
    int32_t k = 0;
    for (int32_t v = 0; v < n; v++) {
      int32_t lv = layer_of(&t->nodes[v]);
      if ((lv < AGG_LAYERS ? lv : AGG_LAYERS - 1) != l) continue;
      int32_t g = t->nodes[v].group;
      ord[k++] = (agg_node){g >= 0 ? g : (int64_t)INT32_MAX + 1 + v, v};
    }
    qsort(ord, (size_t)k, sizeof(*ord), by_agg_key);
    int32_t nat = 0;
    for (int32_t i = 0; i < k; i++) nat += i == 0 || ord[i].key != ord[i - 1].key;
    /* blocks of equal size where a divisor allows it (256 routers: 16 of
     * 16, not 24 of 10 or 11) */
    int32_t nb = nat < AGG_BLOCKS ? nat : AGG_BLOCKS;
    for (int32_t d = nb; nat > AGG_BLOCKS && d >= AGG_BLOCKS / 2; d--)
      if (nat % d == 0) {
        nb = d;
        break;
      }
    for (int32_t i = 0, r = -1; i < k; i++) {
      r += i == 0 || ord[i].key != ord[i - 1].key; /* the natural block's rank */
      int32_t b = (int32_t)((int64_t)r * nb / nat);
      agg_block *x = &bl[l * AGG_BLOCKS + b];
      if (!x->count) x->first = ord[i].v;
      x->last = ord[i].v;
      x->count++;
      block[ord[i].v] = l * AGG_BLOCKS + b;
    }
    nb_layer[l] = nb;
  }
  int32_t row_of[AGG_LAYERS], top = 0;
  for (int32_t l = 0, r = 0; l < AGG_LAYERS; l++) { /* empty layers take no room */
    row_of[l] = r;
    if (nb_layer[l]) top = r++;
  }
  const size_t NB = AGG_LAYERS * AGG_BLOCKS;
  for (int32_t li = 0; li < t->n_links; li++) {
    const fs_link *k = &t->links[li];
    agg_bundle *x = &bu[(size_t)block[k->from] * NB + (size_t)block[k->to]];
    double u = util ? util[li] : 0;
    x->cap += k->capacity_bps;
    x->busy += u * k->capacity_bps;
    x->max_u = fmax(x->max_u, u);
    x->links++;
  }
  double layer_h = 110, height = 40 + layer_h * top + 50;
  fig_begin(h, "Topology, aggregated (blocks of nodes by tier and pod or leaf; bundles shaded by "
            "utilisation)", W, height);
#define BX(b) (20 + (W - 40) * ((b) % AGG_BLOCKS + 0.5) / nb_layer[(b) / AGG_BLOCKS])
#define BY(b) (30 + layer_h * (top - row_of[(b) / AGG_BLOCKS]))
  for (size_t a = 0; a < NB; a++)
    for (size_t b = a; b < NB; b++) {
      const agg_bundle *x = &bu[a * NB + b], *y = &bu[b * NB + a];
      int64_t links = x->links + (a != b ? y->links : 0);
      if (!links || a == b) continue; /* (links inside a block: in its hover text) */
      double ux = x->cap > 0 ? x->busy / x->cap : 0, uy = y->cap > 0 ? y->busy / y->cap : 0;
      double u = fmax(ux, uy), cap = fmax(x->cap, y->cap), mx = fmax(x->max_u, y->max_u);
      char col[8] = "#999999";
      if (util) heat_color(0.1 + 0.9 * u, col, sizeof(col));
      /* width: log of the bundle's capacity, so a bundle of 1,000 links is
       * thicker than one of 10 but still a line */
      double w = 1 + log10(1 + cap / 1e11);
      fprintf(h->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
              "stroke-width=\"%.1f\"><title>%lld links, %.4g Gb/s each way; %.0f%% busy "
              "(busier direction), busiest link %.0f%%</title></line>\n",
              BX((int32_t)a), BY((int32_t)a), BX((int32_t)b), BY((int32_t)b),
              util ? col : "#999999", w, (long long)links / (a != b && y->links ? 2 : 1),
              cap / 1e9, u * 100, mx * 100);
    }
  for (int32_t l = 0; l < AGG_LAYERS; l++)
    for (int32_t i = 0; i < nb_layer[l]; i++) {
      int32_t b = l * AGG_BLOCKS + i;
      const agg_block *x = &bl[b];
      char cls[32], n0[40], n1[40];
      fs_topo_node_class(t, x->first, cls, (int)sizeof(cls));
      fs_topo_node_name(t, x->first, n0, (int)sizeof(n0));
      fs_topo_node_name(t, x->last, n1, (int)sizeof(n1));
      const agg_bundle *in = &bu[(size_t)b * NB + (size_t)b];
      double bw = (W - 40) / nb_layer[l] - 6;
      if (bw > 90) bw = 90;
      fprintf(h->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"22\" rx=\"3\" "
              "fill=\"%s\"><title>%d x %s: %s .. %s", BX(b) - bw / 2, BY(b) - 11, bw,
              color(layer_of(&t->nodes[x->first]) ? 1 + layer_of(&t->nodes[x->first]) : 0),
              x->count, cls, n0, n1);
      if (in->links) fprintf(h->f, "; %lld links inside", (long long)in->links / 2);
      fputs("</title></rect>\n", h->f);
      if (bw >= 30)
        fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" style=\"fill:#fff;"
                "font-size:10px\">%d</text>\n", BX(b), BY(b) + 4, x->count);
      /* names under every block when few, else under the layer's ends */
      if (nb_layer[l] <= 8 || i == 0 || i == nb_layer[l] - 1)
        fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                "style=\"font-size:10px\">%s%s</text>\n", BX(b), BY(b) + 24,
                i == nb_layer[l] - 1 && nb_layer[l] > 8 ? n1 : n0,
                x->count > 1 && (nb_layer[l] <= 8 || i == 0) ? " .." : "");
    }
#undef BX
#undef BY
  fig_end(h);
  fprintf(h->f, "<p class=\"note\">%d nodes in blocks: each block holds the nodes of a tier in "
          "one group (pod or leaf) or a run of groups, its count written on it, the first "
          "node's name under it; hover a block or a bundle for its nodes, links and load.</p>\n",
          n);
out:
  FS__FREE_ALL(ord, block, bl, bu);
}

void fs_html_topology(fs_html *h, const fs_topo *t, const double *util) {
  if (t->n_nodes > FS_HTML_MAX_TOPO_NODES) {
    topology_aggregated(h, t, util);
    return;
  }
  enum { MAXL = 8 };
  int32_t count[MAXL] = {0}, top_layer = 0;
  int32_t *slot = malloc((size_t)(t->n_nodes ? t->n_nodes : 1) * sizeof(int32_t));
  if (!slot) return;
  int32_t row_of[MAXL];
  for (int32_t v = 0; v < t->n_nodes; v++) {
    int32_t l = layer_of(&t->nodes[v]);
    if (l >= MAXL) l = MAXL - 1;
    slot[v] = count[l]++;
  }
  for (int32_t l = 0, r = 0; l < MAXL; l++) { /* empty layers take no room */
    row_of[l] = r;
    if (count[l]) top_layer = r++;
  }
  double layer_h = 90, height = 40 + layer_h * top_layer + 30;
  fig_begin(h, "Topology (layered by tier; links shaded by utilisation)", W, height);
#define NX(v) (20 + (W - 40) * (slot[v] + 0.5) / count[layer_of(&t->nodes[v]) < MAXL ? layer_of(&t->nodes[v]) : MAXL - 1])
#define NY(v) (30 + layer_h * (top_layer - row_of[layer_of(&t->nodes[v]) < MAXL ? layer_of(&t->nodes[v]) : MAXL - 1]))
  for (int32_t l = 0; l < t->n_links; l++) {
    const fs_link *k = &t->links[l];
    if (k->reverse >= 0 && k->reverse < l) continue; /* a cable once */
    double u = util ? util[l] : 0;
    if (util && k->reverse >= 0 && util[k->reverse] > u) u = util[k->reverse];
    char col[8] = "#999999";
    if (util) heat_color(0.1 + 0.9 * u, col, sizeof(col));
    fprintf(h->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
            "stroke-width=\"%.1f\"><title>%.4g Gb/s, %.0f%% busy</title></line>\n",
            NX(k->from), NY(k->from), NX(k->to), NY(k->to), util ? col : "#999999",
            util ? 1 + 2 * u : 1.0, k->capacity_bps / 1e9, u * 100);
  }
  for (int32_t v = 0; v < t->n_nodes; v++) {
    char name[32];
    fs_topo_node_name(t, v, name, (int)sizeof(name));
    int sw = t->nodes[v].kind != FS_NODE_HOST;
    if (sw)
      fprintf(h->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"%s\">",
              NX(v) - 7, NY(v) - 7, color(1 + layer_of(&t->nodes[v])));
    else
      fprintf(h->f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"%s\">", NX(v), NY(v),
              color(0));
    fprintf(h->f, "<title>%s</title>%s\n", name, sw ? "</rect>" : "</circle>");
    if (count[layer_of(&t->nodes[v]) < MAXL ? layer_of(&t->nodes[v]) : MAXL - 1] <= 24)
      fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", NX(v),
              sw ? NY(v) - 10 : NY(v) + 18, name);
  }
#undef NX
#undef NY
  fig_end(h);
  free(slot);
}

/* ---- links of a run ---- */
typedef struct lrank {
  double bytes; /* per bit/s of capacity: the ranking key */
  int32_t link;
} lrank;

static int by_bytes_desc(const void *a, const void *b) {
  const lrank *x = a, *y = b;
  if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
  return x->link < y->link ? -1 : x->link > y->link;
}

/* "from -> to" of link l, in the topology's node names (the names of the
 * exports, the failures' keys and every page). */
static void link_label(const fs_topo *t, int32_t l, char *buf, size_t n) {
  char a[40], b[40];
  fs_topo_node_name(t, t->links[l].from, a, (int)sizeof(a));
  fs_topo_node_name(t, t->links[l].to, b, (int)sizeof(b));
  snprintf(buf, n, "%s -> %s", a, b);
}

/* A link end's group as a number: kind x 16 + tier. */
static int32_t end_code(const fs_topo *t, int32_t v) {
  return (int32_t)t->nodes[v].kind * 16 + (t->nodes[v].tier & 15);
}

/* The heatmap of link groups (the kinds and tiers a link joins), each bin
 * the group's bytes over its capacity; u is scratch of FS_HTML_MAX_ROWS x
 * bins. Groups past FS_HTML_MAX_ROWS are left out. */
static void group_heatmap(fs_html *h, const fs_topo *t, const fs_sim_link_bins *lb, double *u) {
  int32_t code[FS_HTML_MAX_ROWS], ng = 0;
  double gcap[FS_HTML_MAX_ROWS];
  char gname[FS_HTML_MAX_ROWS][48];
  const char *glab[FS_HTML_MAX_ROWS];
  memset(u, 0, (size_t)FS_HTML_MAX_ROWS * (size_t)lb->n_bins * sizeof(double));
  for (int32_t l = 0; l < t->n_links; l++) {
    int32_t c = end_code(t, t->links[l].from) * 256 + end_code(t, t->links[l].to), g;
    for (g = 0; g < ng && code[g] != c; g++) {
    }
    if (g == ng && ng == FS_HTML_MAX_ROWS) continue;
    if (g == ng) {
      char a[16], b[16];
      fs_topo_node_class(t, t->links[l].from, a, (int)sizeof(a));
      fs_topo_node_class(t, t->links[l].to, b, (int)sizeof(b));
      snprintf(gname[ng], sizeof(gname[ng]), "%s -> %s (all)", a, b);
      glab[ng] = gname[ng];
      code[ng] = c;
      gcap[ng++] = 0;
    }
    gcap[g] += t->links[l].capacity_bps / 8 * lb->width_s;
    double *row = u + (size_t)g * lb->n_bins;
    for (int32_t k = 0; k < lb->n_bins; k++) row[k] += lb->bytes[(size_t)k * lb->stride + l];
  }
  for (int32_t g = 0; g < ng; g++)
    for (int32_t k = 0; k < lb->n_bins; k++) u[(size_t)g * lb->n_bins + k] /= gcap[g];
  fs_html_heatmap(h, "Utilisation over time: link groups (mean over the group's links)", glab,
                  ng, lb->n_bins, u, lb->width_s);
}

void fs_html_links(fs_html *h, const fs_sim *s) {
  const fs_topo *t = fs_sim_topo(s);
  const fs_sim_link_stats *ls = fs_sim_links(s);
  double T = fs_sim_makespan_s(s);
  int32_t L = t->n_links;
  lrank *rk = malloc((size_t)(L ? L : 1) * sizeof(*rk));
  if (!rk) return;
  int32_t used = 0;
  for (int32_t l = 0; l < L; l++)
    if (ls[l].bytes > 0) rk[used++] = (lrank){ls[l].bytes / t->links[l].capacity_bps, l};
  qsort(rk, (size_t)used, sizeof(*rk), by_bytes_desc);
  int32_t top = used < FS_HTML_MAX_ROWS ? used : FS_HTML_MAX_ROWS;
  char(*names)[96] = malloc((size_t)(FS_HTML_MAX_ROWS + 1) * sizeof(*names));
  const char **labels = malloc((size_t)(FS_HTML_MAX_ROWS + 1) * sizeof(*labels));
  double *vals = malloc((size_t)(FS_HTML_MAX_ROWS + 1) * sizeof(double));
  fs_sim_link_bins lb;
  int have_bins = fs_sim_get_link_bins(s, &lb) == 0 && T > 0;
  double *u = have_bins ? calloc((size_t)FS_HTML_MAX_ROWS * (size_t)lb.n_bins, sizeof(double))
                        : NULL;
  if (!names || !labels || !vals || (have_bins && !u)) goto out;
  for (int32_t i = 0; i < top; i++) {
    int32_t l = rk[i].link;
    link_label(t, l, names[i], sizeof(names[i]));
    labels[i] = names[i];
    vals[i] = T > 0 ? 100 * ls[l].bytes * 8 / (t->links[l].capacity_bps * T) : 0;
  }
  if (have_bins && top > 0) {
    for (int32_t i = 0; i < top; i++) {
      int32_t l = rk[i].link;
      double cap = t->links[l].capacity_bps / 8 * lb.width_s;
      for (int32_t b = 0; b < lb.n_bins; b++)
        u[(size_t)i * lb.n_bins + b] = lb.bytes[(size_t)b * lb.stride + l] / cap;
    }
    fs_html_heatmap(h, "Utilisation over time: the busiest links", labels, top, lb.n_bins, u,
                    lb.width_s);
    group_heatmap(h, t, &lb, u);
  }
  if (top > 0)
    fs_html_bars(h, "Busiest links: mean utilisation over the run", "%", labels, vals,
                 top < 20 ? top : 20);
  else
    fputs("<p class=\"note\">No link carried any bytes.</p>\n", h->f);
out:
  FS__FREE_ALL(u, vals, labels, names, rk);
}
