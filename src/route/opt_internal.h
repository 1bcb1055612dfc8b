/* What the files of the routing optimiser share (optimize.c, opt_traffic.c,
 * opt_metric.c, opt_exact.c, opt_kpaths.c, opt_edgecolor.c): the problem's
 * representation. Candidate paths are stored flat: flow f's path k is path
 * number i = path0[f] + k, its links are links[pstart[i] .. pstart[i + 1])
 * (k-shortest candidates of one flow differ in length). */
#ifndef FABRICSIM_ROUTE_OPT_INTERNAL_H
#define FABRICSIM_ROUTE_OPT_INTERNAL_H

#include "fabricsim/routeopt.h"

struct fs_routeopt_problem {
  const fs_topo *t;
  const fs_routeopt_traffic *tr;
  fs_router *router;
  int32_t n_flows, n_sets;   /* concurrent sets: K = most phases of a job */
  fs_routeopt_paths paths;   /* how the candidates were chosen */
  int32_t k;                 /* k-shortest: K */
  int32_t *n_paths;          /* per flow */
  int32_t *path0;            /* per flow + 1: its first path number */
  int64_t *pstart;           /* per path + 1: offset into links */
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

/* Offset into p->links of flow f's candidate c (the link of entry i of
 * that path is p->links[offset + i]). */
static inline int64_t fs__routeopt_path_off(const fs_routeopt_problem *p, int32_t f, int32_t c) {
  return p->pstart[p->path0[f] + c];
}

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

/* The greedy optimiser (opt_greedy.c): fills *st's counts (not its time). */
int fs__routeopt_greedy(fs_routeopt_problem *p, int32_t *choice, fs_routeopt_stats *st,
                        fs_err *err);
/* The ECMP baseline (opt_greedy.c): each flow's seeded ECMP path. */
int fs__routeopt_ecmp(fs_routeopt_problem *p, uint64_t seed, int32_t *choice, fs_err *err);

/* The exact MILP (opt_exact.c). */
int fs__routeopt_exact(fs_routeopt_problem *p, const fs_routeopt_opts *o, int32_t *choice,
                       fs_routeopt_stats *st, fs_err *err);

/* The edge-colouring baseline (opt_edgecolor.c). */
int fs__routeopt_edgecolor(fs_routeopt_problem *p, int32_t *choice, fs_err *err);

/* Colours the edges (eu[e], ev[e]) (e < n_edges; eu in [0, n_u), ev in
 * [0, n_v)) of a bipartite multigraph with `colours` colours so that no two
 * edges at a vertex share one; colours must be at least the maximum degree
 * (Koenig). Alternating-path recolouring: O(E (V + colours)) time,
 * O((n_u + n_v) colours) memory. colour[0..n_edges) out. 0, FS_EINVAL
 * (a degree above `colours`) or FS_ENOMEM. */
int fs__routeopt_bipartite_colour(int32_t n_u, int32_t n_v, int32_t n_edges, const int32_t *eu,
                                  const int32_t *ev, int32_t colours, int32_t *colour);

/* Yen's K shortest loop-free paths (opt_kpaths.c): the first k paths by hop
 * count from host src to host dst, forwarding only through non-hosts, each
 * a list of link ids. Appends them to *links (n entries used, *cap
 * allocated; fs__grow) and their lengths to hops[0..*n_found); ties are
 * broken by the lexicographic order of link ids, and the output is sorted
 * by (hops, link ids). scratch: a fs__routeopt_yen_new state. Returns 0,
 * FS_EINVAL (no path) or FS_ENOMEM. */
typedef struct fs__routeopt_yen fs__routeopt_yen;
int fs__routeopt_yen_new(const fs_topo *t, int32_t max_k, fs__routeopt_yen **out);
void fs__routeopt_yen_free(fs__routeopt_yen *y);
int fs__routeopt_kshortest(fs__routeopt_yen *y, int32_t src, int32_t dst, int32_t k, int32_t **links,
                     size_t *n, size_t *cap, int32_t *hops, int32_t *n_found);

#endif
