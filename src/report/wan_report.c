/* The outputs of `fabricsim wan provision|train`: every demand's
 * lightpaths (path, km, modulation, wavelength or slots, rate) and the
 * blocking of a provisioning plan; the cross-site all-reduce per phase
 * before and after a fibre cut, beside its closed form; as a table or
 * JSON. O(demands + lightpaths x hops) lines and one pass over the
 * spectrum grid (fibres x units) for the utilisation. */
#include <math.h>
#include <stdio.h>

#include "../base/base.h"
#include "fabricsim/report.h"

static void path_str(const fs_wan *w, const fs_wan_path *p, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = '\0';
  for (int32_t i = 0; i <= p->hops && len + 1 < n; i++) {
    int k = snprintf(buf + len, n - len, "%s%s", i ? ">" : "", w->sites[p->nodes[i]].name);
    if (k < 0) break;
    len += (size_t)k;
  }
}

static void units_str(const fs_wan *w, const fs_wan_lightpath *lp, char *buf, size_t n) {
  if (w->grid.kind == FS_WAN_FIXED)
    snprintf(buf, n, "w%d", lp->first);
  else if (lp->count == 1)
    snprintf(buf, n, "s%d", lp->first);
  else
    snprintf(buf, n, "s%d-%d", lp->first, lp->first + lp->count - 1);
}

static void jnum(FILE *f, const char *key, double v, int comma) {
  char b[32];
  fs__fmt_num(b, v);
  fprintf(f, "\"%s\": %s%s", key, b, comma ? ", " : "");
}

static double utilisation(const fs_wan_plan *p) {
  size_t cells = (size_t)p->w->n_fibres * p->w->grid.units, held = 0;
  for (size_t i = 0; i < cells; i++) held += p->owner[i] >= 0;
  return cells ? (double)held / (double)cells : 0;
}

static void grid_str(const fs_wan *w, char *buf, size_t n) {
  if (w->grid.kind == FS_WAN_FIXED)
    snprintf(buf, n, "fixed grid %d x %g GHz, %g Gb/s per wavelength (%s)", w->grid.units,
             w->grid.ghz, w->grid.gbps, w->mods[w->n_mods - 1].name);
  else
    snprintf(buf, n, "flexgrid %d x %g GHz slots, guard %d", w->grid.units, w->grid.ghz,
             w->grid.guard);
}

int fs_report_wan_plan_table(FILE *f, const fs_wan_plan *p) {
  const fs_wan *w = p->w;
  char g[160];
  grid_str(w, g, sizeof(g));
  fprintf(f, "# fabricsim wan provision: %d sites, %d fibres, %s\n", w->n_sites, w->n_fibres, g);
  fprintf(f, "# %s, k = %d", fs_wan_algo_name(p->opts.algo), p->opts.k);
  if (p->opts.cut >= 0)
    fprintf(f, ", fibre %s-%s cut", w->sites[w->fibres[p->opts.cut].a].name,
            w->sites[w->fibres[p->opts.cut].b].name);
  fprintf(f, "\n%-6s %-16s %9s %-8s %-28s %8s %-6s %-9s %9s %9s\n", "demand", "sites", "gbps",
          "status", "path", "km", "mod", "units", "line gbps", "rate gbps");
  for (int32_t di = 0; di < p->n_demands; di++) {
    const fs_wan_demand *d = &p->demands[di];
    char sites[2 * FS_WAN_NAME + 2];
    snprintf(sites, sizeof(sites), "%s-%s%s", w->sites[d->src].name, w->sites[d->dst].name,
             d->job ? "*" : "");
    if (p->lp_n[di] == 0) {
      fprintf(f, "%-6d %-16s %9g %-8s %-28s %8s %-6s %-9s %9s %9s\n", di, sites, d->gbps,
              fs_wan_status_name(p->status[di]), "-", "-", "-", "-", "-", "-");
      continue;
    }
    for (int32_t j = p->lp_first[di]; j < p->lp_first[di] + p->lp_n[di]; j++) {
      const fs_wan_lightpath *lp = &p->lps[j];
      char path[256], units[32];
      path_str(w, &lp->path, path, sizeof(path));
      units_str(w, lp, units, sizeof(units));
      fprintf(f, "%-6d %-16s %9g %-8s %-28s %8g %-6s %-9s %9g %9g\n", di, sites, d->gbps, "ok",
              path, lp->path.km, w->mods[lp->mod].name, units, lp->line_gbps, lp->gbps);
    }
  }
  fprintf(f,
          "demands %d, lightpaths %d, blocked %d (ratio %.4f), bandwidth blocked %.4f, "
          "spectrum used %.4f\n",
          p->n_demands, p->n_lps, p->blocked, p->n_demands ? (double)p->blocked / p->n_demands : 0,
          p->offered_gbps > 0 ? p->blocked_gbps / p->offered_gbps : 0, utilisation(p));
  fprintf(
      f, "# * = the job's ring demand; units: wN wavelength N, sA-B slots A..B (guard included)\n");
  return ferror(f) ? FS_EIO : 0;
}

static void plan_json(FILE *f, const fs_wan_plan *p) {
  const fs_wan *w = p->w;
  fprintf(f, "{\"algo\": \"%s\", \"k\": %d, \"grid\": \"%s\", \"units\": %d, \"cut\": ",
          fs_wan_algo_name(p->opts.algo), p->opts.k,
          w->grid.kind == FS_WAN_FIXED ? "fixed" : "flex", w->grid.units);
  if (p->opts.cut >= 0) {
    char c[2 * FS_WAN_NAME + 2];
    snprintf(c, sizeof(c), "%s-%s", w->sites[w->fibres[p->opts.cut].a].name,
             w->sites[w->fibres[p->opts.cut].b].name);
    fs__fput_json_str(f, c);
  } else {
    fprintf(f, "null");
  }
  fprintf(f, ",\n \"demands\": [");
  for (int32_t di = 0; di < p->n_demands; di++) {
    const fs_wan_demand *d = &p->demands[di];
    fprintf(f, "%s\n  {\"src\": ", di ? "," : "");
    fs__fput_json_str(f, w->sites[d->src].name);
    fprintf(f, ", \"dst\": ");
    fs__fput_json_str(f, w->sites[d->dst].name);
    fprintf(f, ", ");
    jnum(f, "gbps", d->gbps, 1);
    fprintf(f, "\"job\": %s, \"status\": \"%s\", \"lightpaths\": [", d->job ? "true" : "false",
            fs_wan_status_name(p->status[di]));
    for (int32_t j = p->lp_first[di]; j < p->lp_first[di] + p->lp_n[di]; j++) {
      const fs_wan_lightpath *lp = &p->lps[j];
      fprintf(f, "%s{\"path\": [", j > p->lp_first[di] ? ", " : "");
      for (int32_t i = 0; i <= lp->path.hops; i++) {
        if (i) fprintf(f, ", ");
        fs__fput_json_str(f, w->sites[lp->path.nodes[i]].name);
      }
      fprintf(f, "], ");
      jnum(f, "km", lp->path.km, 1);
      fprintf(f, "\"modulation\": ");
      fs__fput_json_str(f, w->mods[lp->mod].name);
      fprintf(f, ", \"first\": %d, \"count\": %d, \"guard\": %d, ", lp->first, lp->count,
              lp->guard);
      jnum(f, "line_gbps", lp->line_gbps, 1);
      jnum(f, "gbps", lp->gbps, 0);
      fprintf(f, "}");
    }
    fprintf(f, "]}");
  }
  fprintf(f, "],\n \"n_demands\": %d, \"lightpaths\": %d, \"blocked\": %d, ", p->n_demands,
          p->n_lps, p->blocked);
  jnum(f, "blocking_ratio", p->n_demands ? (double)p->blocked / p->n_demands : 0, 1);
  jnum(f, "bandwidth_blocking_ratio", p->offered_gbps > 0 ? p->blocked_gbps / p->offered_gbps : 0,
       1);
  jnum(f, "spectrum_utilisation", utilisation(p), 0);
  fprintf(f, "}");
}

int fs_report_wan_plan_json(FILE *f, const fs_wan_plan *p) {
  plan_json(f, p);
  fprintf(f, "\n");
  return ferror(f) ? FS_EIO : 0;
}

static const char *const phase_names[3] = {"reduce-scatter in sites", "all-reduce across sites",
                                           "all-gather in sites"};

static void ms(char *b, double s) {
  if (isfinite(s))
    snprintf(b, 32, "%.6g", s * 1e3);
  else
    snprintf(b, 32, "-");
}

static void train_table(FILE *f, const fs_wan_train_result *r, const fs_wan_plan *p,
                        const char *title) {
  char a[32], b[32];
  int32_t nj = 0, bj = 0;
  for (int32_t di = 0; di < p->n_demands; di++)
    if (p->demands[di].job) nj++, bj += p->status[di] != FS_WAN_OK;
  fprintf(f, "%s\n", title);
  if (!r->connected) {
    fprintf(f, "job sites disconnected: %d of %d ring demands blocked, all-reduce impossible\n", bj,
            nj);
    return;
  }
  fprintf(f, "%-26s %14s %14s\n", "phase", "simulated ms", "closed form ms");
  for (int i = 0; i < 3; i++) {
    ms(a, r->phase_s[i]);
    ms(b, r->model_s[i]);
    fprintf(f, "%-26s %14s %14s\n", phase_names[i], a, b);
  }
  ms(a, r->total_s);
  ms(b, r->model_total_s);
  fprintf(f, "%-26s %14s %14s\n", "total", a, b);
  fprintf(f,
          "WAN: %d ring demands (%d blocked: their traffic crosses other sites); slowest pair "
          "%g Gb/s, %g km, alpha %.6g ms\n",
          nj, bj, r->wan_gbps_min, r->wan_km_max, r->wan_alpha_s * 1e3);
}

static void train_json(FILE *f, const fs_wan_train_result *r) {
  fprintf(f, "{\"connected\": %s, \"phases\": [", r->connected ? "true" : "false");
  for (int i = 0; i < 3; i++) {
    fprintf(f, "%s{\"phase\": \"%s\", ", i ? ", " : "", phase_names[i]);
    jnum(f, "sim_s", r->phase_s[i], 1);
    jnum(f, "model_s", r->model_s[i], 0);
    fprintf(f, "}");
  }
  fprintf(f, "], ");
  jnum(f, "total_s", r->total_s, 1);
  jnum(f, "model_total_s", r->model_total_s, 1);
  jnum(f, "wan_gbps_min", r->wan_gbps_min, 1);
  jnum(f, "wan_km_max", r->wan_km_max, 1);
  jnum(f, "wan_alpha_s", r->wan_alpha_s, 1);
  fprintf(f, "\"multihop_pairs\": %d, \"flows\": %lld}", r->multihop, (long long)r->flows);
}

/* The cut fibre as "A-B", "" without a cut. */
static void cut_name(const fs_report_wan_train *t, char *buf, size_t n) {
  const fs_wan *w = t->before->w;
  buf[0] = '\0';
  if (t->after)
    snprintf(buf, n, "%s-%s", w->sites[w->fibres[t->cut].a].name,
             w->sites[w->fibres[t->cut].b].name);
}

/* After / before, NaN if either run was disconnected or there is no cut. */
static double slowdown(const fs_report_wan_train *t) {
  return t->after && t->r0->connected && t->r1->connected ? t->r1->total_s / t->r0->total_s : NAN;
}

int fs_report_wan_train_json(FILE *f, const fs_report_wan_train *t) {
  const fs_wan_train_result *r0 = t->r0;
  const fs_wan_plan *q = t->after;
  char cutname[2 * FS_WAN_NAME + 2];
  cut_name(t, cutname, sizeof(cutname));
  fprintf(f, "{\"file\": ");
  fs__fput_json_str(f, t->file);
  fprintf(f, ", \"sites\": %d, \"gpus_per_site\": %d, ", r0->sites, r0->gpus_per_site);
  jnum(f, "bytes", r0->bytes, 1);
  fprintf(f, "\n \"provision\": ");
  plan_json(f, t->before);
  fprintf(f, ",\n \"before\": ");
  train_json(f, r0);
  if (q) {
    fprintf(f, ",\n \"cut\": ");
    fs__fput_json_str(f, cutname);
    fprintf(f, ", \"restored_lightpaths\": %d, \"blocked_after\": %d,\n \"after\": ", q->restored,
            q->blocked);
    train_json(f, t->r1);
    fprintf(f, ",\n ");
    jnum(f, "slowdown", slowdown(t), 0);
  }
  fprintf(f, "}\n");
  return ferror(f) ? FS_EIO : 0;
}

int fs_report_wan_train_table(FILE *f, const fs_report_wan_train *t) {
  const fs_wan_train_result *r0 = t->r0;
  const fs_wan_plan *p = t->before, *q = t->after;
  char g[160], title[512], cutname[2 * FS_WAN_NAME + 2];
  cut_name(t, cutname, sizeof(cutname));
  grid_str(p->w, g, sizeof(g));
  fprintf(f, "# fabricsim wan train: %d sites x %d GPUs, all-reduce %.6g bytes\n", r0->sites,
          r0->gpus_per_site, r0->bytes);
  fprintf(f, "# %s, %s, k = %d; %d demands, %d blocked\n", g, fs_wan_algo_name(p->opts.algo),
          (int)p->opts.k, p->n_demands, p->blocked);
  train_table(f, r0, p, "## before any cut");
  if (q) {
    double slow = slowdown(t);
    snprintf(title, sizeof(title),
             "## after cutting fibre %s: %d lightpaths restored, %d demands blocked", cutname,
             q->restored, q->blocked);
    train_table(f, t->r1, q, title);
    if (isfinite(slow))
      fprintf(f, "slowdown x%.6g\n", slow);
    else
      fprintf(f, "slowdown: infinite (the job's sites are disconnected)\n");
  }
  return ferror(f) ? FS_EIO : 0;
}

/* ---- wan place ---- */
static void ring_names(const fs_wan *w, const int32_t *ring, int32_t k, char *buf, size_t n) {
  size_t at = 0;
  buf[0] = 0;
  for (int32_t i = 0; i < k && at < n; i++)
    at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? " -> " : "", w->sites[ring[i]].name);
  if (k > 2 && at < n) snprintf(buf + at, n - at, " -> %s", w->sites[ring[0]].name);
}

static void ms_or_dash(char *b, size_t n, double s) {
  if (isfinite(s)) snprintf(b, n, "%.6g", s * 1e3);
  else snprintf(b, n, "-");
}

/* The sites in order of their time as the aggregation point (ties and
 * blocked sites by site id, blocked last). */
static void agg_order(const fs_wan_agg_result *a, int32_t *ord) {
  for (int32_t i = 0; i < a->n_sites; i++) ord[i] = i;
  for (int32_t i = 1; i < a->n_sites; i++) /* insertion sort: a few hundred sites */
    for (int32_t j = i; j > 0 && a->time_s[ord[j]] < a->time_s[ord[j - 1]]; j--) {
      int32_t t = ord[j];
      ord[j] = ord[j - 1];
      ord[j - 1] = t;
    }
}

static void agg_table(FILE *f, const fs_report_wan_place *p) {
  const fs_wan_agg_result *a = p->agg;
  int32_t ord[FS_WAN_MAX_SITES];
  agg_order(a, ord);
  fprintf(f, "\n## a parameter server instead of the ring: the whole all-reduce (simulated, ms) "
             "with the server at each site\n%-16s %14s\n", "site", "all-reduce");
  for (int32_t i = 0; i < a->n_sites; i++) {
    char b[32];
    ms_or_dash(b, sizeof(b), a->time_s[ord[i]]);
    fprintf(f, "%-16s %14s%s\n", p->w->sites[ord[i]].name, b, ord[i] == a->best ? "  best" : "");
  }
  if (a->best >= 0 && p->chosen && isfinite(p->chosen->total_s))
    fprintf(f, "the best server against the chosen ring: x%.4g\n",
            p->chosen->total_s / a->time_s[a->best]);
}

int fs_report_wan_place_table(FILE *f, const fs_report_wan_place *p) {
  const fs_wan_place_result *r = p->r;
  char names[FS_WAN_PLACE_MAX * (FS_WAN_NAME + 4) + 8];
  fprintf(f, "# fabricsim wan place: %s, a ring of %d sites, %s search (%lld placements timed)\n",
          p->file, r->k, r->exhaustive ? "exhaustive" : "local", (long long)r->evaluated);
  fprintf(f, "# times in ms: the cross-site all-reduce (closed form), then the whole "
             "hierarchical all-reduce simulated%s\n",
          p->sdm ? "\n# on multi-core fibres: each ring pair one lightpath by RSCA, crosstalk "
                   "checked; the closed form only (-: not simulated)"
                 : "");
  fprintf(f, "%-9s %14s %14s  %s\n", "ring", "cross-site", "simulated", "sites");
  const struct {
    const char *name;
    const int32_t *ring;
    double s;
    const fs_wan_train_result *t;
  } rows[2] = {{"chosen", r->ring, r->model_s, p->chosen},
               {"file", r->baseline, r->baseline_s, p->baseline}};
  for (int i = 0; i < 2; i++) {
    char a[32], b[32];
    ms_or_dash(a, sizeof(a), rows[i].s);
    ms_or_dash(b, sizeof(b), rows[i].t ? rows[i].t->total_s : NAN);
    ring_names(p->w, rows[i].ring, r->k, names, sizeof(names));
    fprintf(f, "%-9s %14s %14s  %s\n", rows[i].name, a, b, names);
  }
  if (isfinite(r->model_s) && isfinite(r->baseline_s) && r->model_s > 0)
    fprintf(f, "speed-up of the cross-site phase over the file's order: x%.4g\n",
            r->baseline_s / r->model_s);
  else if (!isfinite(r->model_s))
    fprintf(f, "no ring of %d sites has every pair provisioned\n", r->k);
  if (!isfinite(r->baseline_s))
    fprintf(f, "# -: a ring pair of the file's order cannot be provisioned (no free spectrum, "
               "or longer than every format's reach)\n");
  if (p->agg) agg_table(f, p);
  return ferror(f) ? FS_EIO : 0;
}

static void json_ring(FILE *f, const fs_wan *w, const int32_t *ring, int32_t k) {
  fputc('[', f);
  for (int32_t i = 0; i < k; i++) {
    if (i) fputc(',', f);
    fs__fput_json_str(f, w->sites[ring[i]].name);
  }
  fputc(']', f);
}

static void json_time(FILE *f, const char *key, double s, int comma) {
  char b[32];
  if (isfinite(s)) fs__fmt_num(b, s);
  else snprintf(b, sizeof(b), "null");
  fprintf(f, "\"%s\":%s%s", key, b, comma ? "," : "");
}

int fs_report_wan_place_json(FILE *f, const fs_report_wan_place *p) {
  const fs_wan_place_result *r = p->r;
  fprintf(f, "{\"file\":");
  fs__fput_json_str(f, p->file);
  fprintf(f, ",\"sites\":%d,\"search\":\"%s\",\"evaluated\":%lld,\"chosen\":{\"ring\":", r->k,
          r->exhaustive ? "exhaustive" : "local", (long long)r->evaluated);
  json_ring(f, p->w, r->ring, r->k);
  fputc(',', f);
  json_time(f, "cross_site_s", r->model_s, 1);
  json_time(f, "simulated_s", p->chosen ? p->chosen->total_s : NAN, 0);
  fprintf(f, "},\"file_order\":{\"ring\":");
  json_ring(f, p->w, r->baseline, r->k);
  fputc(',', f);
  json_time(f, "cross_site_s", r->baseline_s, 1);
  json_time(f, "simulated_s", p->baseline ? p->baseline->total_s : NAN, 0);
  fputc('}', f);
  if (p->agg) {
    int32_t ord[FS_WAN_MAX_SITES];
    agg_order(p->agg, ord);
    fprintf(f, ",\"aggregator\":{\"best\":");
    if (p->agg->best >= 0) fs__fput_json_str(f, p->w->sites[p->agg->best].name);
    else fputs("null", f);
    fprintf(f, ",\"sites\":[");
    for (int32_t i = 0; i < p->agg->n_sites; i++) {
      fprintf(f, "%s{\"site\":", i ? "," : "");
      fs__fput_json_str(f, p->w->sites[ord[i]].name);
      fputc(',', f);
      json_time(f, "allreduce_s", p->agg->time_s[ord[i]], 0);
      fputc('}', f);
    }
    fprintf(f, "]}");
  }
  fprintf(f, "}\n");
  return ferror(f) ? FS_EIO : 0;
}

