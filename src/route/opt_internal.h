/* What the files of the routing optimiser share (optimize.c, opt_traffic.c,
 * opt_metric.c, opt_exact.c): the problem's representation. Candidate
 * paths are stored flat: flow f's path k is
 * links[path_start[f] + k * hops[f] .. + hops[f]). */
#ifndef FABRICSIM_ROUTE_OPT_INTERNAL_H
#define FABRICSIM_ROUTE_OPT_INTERNAL_H

#include "fabricsim/routeopt.h"

struct fs_routeopt_problem {
  const fs_topo *t;
  const fs_routeopt_traffic *tr;
  fs_router *router;
  int32_t n_flows, n_sets;   /* concurrent sets: K = most phases of a job */
  int32_t *n_paths, *hops;   /* per flow */
  int64_t *path_start;       /* per flow + 1 */
  int32_t *links;            /* all candidate paths */
  int32_t *ideal_start, *ideal_links; /* per flow: its links touching the edge */
  double *demand_bps;        /* per flow */
  double *ideal_phase_s;     /* per phase: ideal duration of one run */
  /* scratch for the max-min routine */
  int32_t *mm_start, *mm_link;
  double *mm_w;
  size_t mm_cap;
  double *mm_rate, *mm_res, *mm_wsum;
  uint8_t *mm_frozen;
};

/* Max-min fair rates of flows whose routes are (link, weight) lists in CSR
 * form (start[0..n]); rate[0..n) out. res/wsum are n_links scratch,
 * frozen n scratch. Progressive filling: O(levels * entries). */
void fs__routeopt_maxmin(const fs_topo *t, int32_t n, const int32_t *start, const int32_t *link,
                         const double *w, double *rate, double *res, double *wsum, uint8_t *frozen);

/* Whether flow f runs in concurrent set k: phase k mod n_j of its job j
 * (always, with one set). Inline: the optimisers ask it per link. */
static inline int fs__routeopt_in_set(const fs_routeopt_problem *p, int32_t f, int32_t k) {
  if (p->n_sets == 1) return 1;
  const fs_routeopt_traffic *tr = p->tr;
  int32_t ph = tr->flows[f].phase;
  const fs_routeopt_job *j = &tr->jobs[tr->phases[ph].job];
  return k % j->n_phases == ph - j->first_phase;
}

/* Per-phase time of one run (max over its flows of bytes / rate), averaged
 * over the sets the phase is in, into phase_s[0..n_phases); ideal routes
 * over the edge links only. Fills min_flow_tput and the link maxima of m if
 * m != NULL. 0 or FS_ENOMEM. */
int fs__routeopt_phase_times(fs_routeopt_problem *p, const int32_t *choice, int ideal,
                             double *phase_s, fs_routeopt_metric *m);

/* The exact MILP (opt_exact.c). */
int fs__routeopt_exact(fs_routeopt_problem *p, const fs_routeopt_opts *o, int32_t *choice,
                       fs_routeopt_stats *st, fs_err *err);

#endif
