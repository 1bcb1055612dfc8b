/* The routing metric of docs/model-route.md: max-min fair rates of every
 * concurrent set under a routing, phase and job times against the ideal
 * fabric, and the summary numbers (two-level max-min objective, efficiency,
 * Jain's index, link utilisation and load).
 *
 * Max-min rates come from plain progressive filling over the set's routes:
 * each round raises every unfrozen flow by the smallest residual/weight of
 * the links they use, then freezes the flows of the links that saturated.
 * A round costs O(entries) and freezes at least one flow, so a set of F
 * flows on R route entries costs O(F R) at worst; on the benchmark (2048
 * ring flows, a few dozen distinct levels) it is well under a millisecond
 * per round. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "opt_internal.h"

void fs__routeopt_maxmin(const fs_topo *t, int32_t n, const int32_t *start, const int32_t *link,
                         const double *w, double *rate, double *res, double *wsum,
                         uint8_t *frozen) {
  int32_t left = 0;
  for (int32_t f = 0; f < n; f++) {
    rate[f] = 0;
    frozen[f] = start[f + 1] == start[f];
    if (!frozen[f]) left++;
    for (int32_t e = start[f]; e < start[f + 1]; e++) res[link[e]] = t->links[link[e]].capacity_bps;
  }
  while (left > 0) {
    for (int32_t f = 0; f < n; f++)
      for (int32_t e = start[f]; e < start[f + 1]; e++) wsum[link[e]] = 0;
    for (int32_t f = 0; f < n; f++)
      if (!frozen[f])
        for (int32_t e = start[f]; e < start[f + 1]; e++) wsum[link[e]] += w[e];
    double d = INFINITY;
    int32_t arg = -1;
    for (int32_t f = 0; f < n; f++)
      if (!frozen[f])
        for (int32_t e = start[f]; e < start[f + 1]; e++) {
          int32_t l = link[e];
          double lv = res[l] > 0 ? res[l] / wsum[l] : 0;
          if (lv < d || (lv == d && l < arg)) {
            d = lv;
            arg = l;
          }
        }
    if (arg < 0) break;
    /* charge each link once: wsum is negated once it has been charged */
    for (int32_t f = 0; f < n; f++)
      if (!frozen[f]) {
        rate[f] += d;
        for (int32_t e = start[f]; e < start[f + 1]; e++) {
          int32_t l = link[e];
          if (wsum[l] > 0) {
            res[l] -= d * wsum[l];
            wsum[l] = -wsum[l];
          }
        }
      }
    res[arg] = 0;
    for (int32_t f = 0; f < n; f++) {
      if (frozen[f]) continue;
      for (int32_t e = start[f]; e < start[f + 1]; e++) {
        int32_t l = link[e];
        if (res[l] <= 1e-9 * t->links[l].capacity_bps) {
          frozen[f] = 1;
          left--;
          break;
        }
      }
    }
  }
}

/* Sets a phase appears in: k = i, i + n_j, ... < K. */
static int32_t sets_of_phase(const fs_routeopt_problem *p, int32_t ph) {
  const fs_routeopt_job *j = &p->tr->jobs[p->tr->phases[ph].job];
  int32_t i = ph - j->first_phase;
  return (p->n_sets - i + j->n_phases - 1) / j->n_phases;
}

static int mm_reserve(fs_routeopt_problem *p, size_t entries) {
  if (entries <= p->mm_cap) return 0;
  size_t cap = p->mm_cap ? p->mm_cap : 1024;
  while (cap < entries) cap *= 2;
  int32_t *l = realloc(p->mm_link, cap * sizeof(*l));
  if (!l) return FS_ENOMEM;
  p->mm_link = l;
  double *w = realloc(p->mm_w, cap * sizeof(*w));
  if (!w) return FS_ENOMEM;
  p->mm_w = w;
  p->mm_cap = cap;
  return 0;
}

/* Rates of the flows of set k: fl[0..n) get the flows, p->mm_rate their
 * rates. ideal: route over the edge links only; else by choice. */
static int rate_set(fs_routeopt_problem *p, const int32_t *choice, int ideal, int32_t k,
                    int32_t *fl, int32_t *n_out, double *acc) {
  int32_t n = 0;
  size_t ne = 0;
  p->mm_start[0] = 0;
  for (int32_t f = 0; f < p->n_flows; f++) {
    if (!fs__routeopt_in_set(p, f, k)) continue;
    fl[n] = f;
    if (ideal) {
      int32_t m = p->ideal_start[f + 1] - p->ideal_start[f];
      if (mm_reserve(p, ne + (size_t)m)) return FS_ENOMEM;
      for (int32_t i = 0; i < m; i++) {
        p->mm_link[ne] = p->ideal_links[p->ideal_start[f] + i];
        p->mm_w[ne++] = 1;
      }
    } else if (choice[f] >= 0 || p->n_paths[f] == 1) {
      int32_t h;
      const int32_t *pl = fs_routeopt_path(p, f, choice[f] >= 0 ? choice[f] : 0, &h);
      if (mm_reserve(p, ne + (size_t)h)) return FS_ENOMEM;
      for (int32_t i = 0; i < h; i++) {
        p->mm_link[ne] = pl[i];
        p->mm_w[ne++] = 1;
      }
    } else {
      /* even split: each link carries the share of the paths through it;
       * acc (all zero on entry and on return) sums them */
      int32_t np = p->n_paths[f], h;
      size_t first = ne;
      for (int32_t c = 0; c < np; c++) {
        const int32_t *pl = fs_routeopt_path(p, f, c, &h);
        for (int32_t i = 0; i < h; i++) {
          int32_t l = pl[i];
          if (acc[l] == 0) {
            if (mm_reserve(p, ne + 1)) return FS_ENOMEM;
            p->mm_link[ne++] = l;
          }
          acc[l] += 1.0 / np;
        }
      }
      for (size_t e = first; e < ne; e++) {
        p->mm_w[e] = acc[p->mm_link[e]];
        acc[p->mm_link[e]] = 0;
      }
    }
    p->mm_start[++n] = (int32_t)ne;
  }
  fs__routeopt_maxmin(p->t, n, p->mm_start, p->mm_link, p->mm_w, p->mm_rate, p->mm_res, p->mm_wsum,
                      p->mm_frozen);
  *n_out = n;
  return 0;
}

int fs__routeopt_phase_times(fs_routeopt_problem *p, const int32_t *choice, int ideal,
                             double *phase_s, fs_routeopt_metric *m) {
  const fs_routeopt_traffic *tr = p->tr;
  size_t nl = (size_t)p->t->n_links;
  int32_t *fl = fs__malloc((size_t)p->n_flows + 1, sizeof(*fl));
  double *acc = fs__calloc(nl + 1, sizeof(*acc));
  double *ph_max = fs__malloc((size_t)tr->n_phases + 1, sizeof(*ph_max));
  double *util = m ? fs__calloc(nl + 1, sizeof(*util)) : NULL;
  double *load = m ? fs__calloc(nl + 1, sizeof(*load)) : NULL;
  int rc = 0;
  if (!fl || !acc || !ph_max || (m && (!util || !load))) {
    rc = FS_ENOMEM;
    goto out;
  }
  for (int32_t i = 0; i < tr->n_phases; i++) phase_s[i] = 0;
  if (m) {
    m->min_flow_tput = INFINITY;
    m->max_link_util = m->max_link_load = 0;
  }
  for (int32_t k = 0; k < p->n_sets; k++) {
    int32_t n;
    if ((rc = rate_set(p, choice, ideal, k, fl, &n, acc))) goto out;
    for (int32_t i = 0; i < tr->n_phases; i++) ph_max[i] = 0;
    for (int32_t i = 0; i < n; i++) {
      const fs_routeopt_flow *f = &tr->flows[fl[i]];
      double r = p->mm_rate[i];
      double s = f->bytes <= 0 ? 0 : r > 0 ? f->bytes * 8 / r : INFINITY;
      if (s > ph_max[f->phase]) ph_max[f->phase] = s;
      if (!m) continue;
      double d = p->demand_bps[fl[i]];
      if (d > 0 && r / d < m->min_flow_tput) m->min_flow_tput = r / d;
      for (int32_t e = p->mm_start[i]; e < p->mm_start[i + 1]; e++) {
        util[p->mm_link[e]] += r * p->mm_w[e];
        load[p->mm_link[e]] += d * p->mm_w[e];
      }
    }
    for (int32_t i = 0; i < tr->n_phases; i++) phase_s[i] += ph_max[i] / sets_of_phase(p, i);
    if (!m) continue;
    for (size_t l = 0; l < nl; l++) {
      double c = p->t->links[l].capacity_bps;
      if (util[l] / c > m->max_link_util) m->max_link_util = util[l] / c;
      if (load[l] / c > m->max_link_load) m->max_link_load = load[l] / c;
      util[l] = load[l] = 0;
    }
  }
out:
  FS__FREE_ALL(fl, acc, ph_max, util, load);
  return rc;
}

int fs_routeopt_evaluate(fs_routeopt_problem *p, const int32_t *choice, fs_routeopt_metric *m,
                         double *job_time_s, double *job_ideal_s, fs_err *err) {
  const fs_routeopt_traffic *tr = p->tr;
  for (int32_t f = 0; f < p->n_flows; f++)
    if (choice[f] < FS_ROUTEOPT_SPLIT || choice[f] >= p->n_paths[f])
      return fs_err_set(err, FS_EINVAL, "flow %d: path %d out of range (it has %d)", f, choice[f],
                        p->n_paths[f]);
  double *ph = fs__malloc((size_t)tr->n_phases + 1, sizeof(*ph));
  if (!ph) return fs_err_set(err, FS_ENOMEM, "out of memory");
  fs_routeopt_metric mm;
  memset(&mm, 0, sizeof(mm));
  if (fs__routeopt_phase_times(p, choice, 0, ph, &mm)) {
    free(ph);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  double sum_x = 0, sum_x2 = 0, w_real = 0, w_ideal = 0;
  mm.min_job_tput = INFINITY;
  mm.worst_slowdown = 0;
  for (int32_t j = 0; j < tr->n_jobs; j++) {
    const fs_routeopt_job *job = &tr->jobs[j];
    double tj = 0, ij = 0, wj = 0;
    for (int32_t i = job->first_phase; i < job->first_phase + job->n_phases; i++) {
      const fs_routeopt_phase *phs = &tr->phases[i];
      tj += phs->repeat * ph[i];
      ij += phs->repeat * p->ideal_phase_s[i];
      for (int32_t f = phs->first_flow; f < phs->first_flow + phs->n_flows; f++)
        wj += phs->repeat * tr->flows[f].bytes;
    }
    double x = tj > 0 ? ij / tj : 1;
    if (x < mm.min_job_tput) mm.min_job_tput = x;
    double sd = ij > 0 ? tj / ij : 1;
    if (sd > mm.worst_slowdown) mm.worst_slowdown = sd;
    mm.mean_slowdown += sd / tr->n_jobs;
    sum_x += x;
    sum_x2 += x * x;
    if (tj > 0) w_real += wj / tj;
    if (ij > 0) w_ideal += wj / ij;
    if (job_time_s) job_time_s[j] = tj;
    if (job_ideal_s) job_ideal_s[j] = ij;
  }
  mm.efficiency = w_ideal > 0 ? w_real / w_ideal : 1;
  mm.jain = sum_x2 > 0 ? sum_x * sum_x / (tr->n_jobs * sum_x2) : 1;
  if (tr->n_jobs == 0) mm.min_job_tput = 1;
  if (!isfinite(mm.min_flow_tput)) mm.min_flow_tput = 1;
  *m = mm;
  free(ph);
  return 0;
}

static int cmp_rel(double a, double b) {
  double s = fmax(fabs(a), fabs(b));
  if (fabs(a - b) <= 1e-9 * s) return 0;
  return a > b ? 1 : -1;
}

int fs_routeopt_metric_cmp(const fs_routeopt_metric *a, const fs_routeopt_metric *b) {
  int c = cmp_rel(a->min_job_tput, b->min_job_tput);
  if (!c) c = cmp_rel(a->min_flow_tput, b->min_flow_tput);
  if (!c) c = cmp_rel(a->efficiency, b->efficiency);
  return c;
}
