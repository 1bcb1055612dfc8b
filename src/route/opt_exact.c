/* The exact routing optimiser: a MILP over every flow's candidate paths,
 * solved by GLPK's branch and bound (docs/model-route.md, "Exact").
 *
 *   minimise Z
 *   s.t.  sum_p x(f,p) = 1                                     every flow f
 *         fixed(k,l) + sum_{f in set k, p through l} d_f / c_l x(f,p) <= W
 *                                       every set k, link l a choice changes
 *         Z >= W, Z >= every constant load, x(f,p) in {0, 1}
 *
 * Z is the max link load; 1/Z is the largest throughput (as a fraction of
 * its demand) that every flow can get at once, so this maximises the
 * minimum normalised flow throughput. Constants: flows with one path and
 * the links a flow uses on every path (its host links). When every row
 * term is a whole multiple of a unit u, W = u W' with W' integer, so the
 * LP bound rounds up (ring flows on one link speed: 60 s -> 1 ms on 2:1
 * leaf-spines of ~150 binaries). Z and W are bounded below by the
 * constants and by each flow alone on its best path; the LP relaxation is
 * solved first and the greedy routing is GLPK's first incumbent, so an
 * instance where greedy meets the bounds closes at the root.
 *
 * Size: the binaries (sum over flows with a choice of their paths), one
 * row per flow and per (set, link) a choice touches. Instances above
 * opts->max_vars (FS_ROUTEOPT_EXACT_MAX_VARS) are refused; a solve that does not
 * prove optimality within the time limit fails. */
#include <glpk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "opt_internal.h"

typedef struct heur {
  const double *x; /* 1-based column values of the greedy routing */
  int given;
} heur;

static void on_branch(glp_tree *tree, void *info) {
  heur *h = info;
  if (glp_ios_reason(tree) == GLP_IHEUR && !h->given) {
    h->given = 1;
    glp_ios_heur_sol(tree, h->x);
  }
}

static int is_multiple(double x, double u) {
  double q = x / u;
  return fabs(q - floor(q + 0.5)) <= 1e-9 * fmax(1, q);
}

/* Whether every row term (a coefficient d_f / c_l of a choice, or the
 * constant load of a link that has a row) is a whole multiple of u. */
static int all_multiples(const fs_routeopt_problem *p, const double *fixed, const int32_t *row_of,
                         const uint8_t *common, size_t kl, double u) {
  const fs_topo *t = p->t;
  for (int32_t f = 0; f < p->n_flows; f++) {
    if (p->n_paths[f] < 2) continue;
    for (int32_t c = 0; c < p->n_paths[f]; c++) {
      int32_t h;
      const int32_t *pl = fs_routeopt_path(p, f, c, &h);
      for (int32_t i = 0; i < h; i++)
        if (!common[fs__routeopt_path_off(p, f, c) + i] &&
            !is_multiple(p->demand_bps[f] / t->links[pl[i]].capacity_bps, u))
          return 0;
    }
  }
  for (size_t i = 0; i < kl; i++)
    if (row_of[i] >= 0 && !is_multiple(fixed[i], u)) return 0;
  return 1;
}

/* A unit u that every row term is a whole multiple of: the smallest
 * coefficient divided by q = 1 .. 64, or 0 if there is none. */
static double unit_of(const fs_routeopt_problem *p, const double *fixed, const int32_t *row_of,
                      const uint8_t *common, size_t kl) {
  const fs_topo *t = p->t;
  double umin = INFINITY;
  for (int32_t f = 0; f < p->n_flows; f++) {
    if (p->n_paths[f] < 2 || p->demand_bps[f] <= 0) continue;
    for (int32_t c = 0; c < p->n_paths[f]; c++) {
      int32_t h;
      const int32_t *pl = fs_routeopt_path(p, f, c, &h);
      for (int32_t i = 0; i < h; i++)
        if (!common[fs__routeopt_path_off(p, f, c) + i])
          umin = fmin(umin, p->demand_bps[f] / t->links[pl[i]].capacity_bps);
    }
  }
  if (!isfinite(umin) || umin <= 0) return 0;
  for (int q = 1; q <= 64; q++)
    if (all_multiples(p, fixed, row_of, common, kl, umin / q)) return umin / q;
  return 0;
}

/* GLPK's 1-based triplet arrays, grown together. */
static int grow3(int **ia, int **ja, double **ar, size_t *caps, size_t need) {
  return fs__grow(ia, &caps[0], need, sizeof(int)) || fs__grow(ja, &caps[1], need, sizeof(int)) ||
         fs__grow(ar, &caps[2], need, sizeof(double));
}

int fs__routeopt_exact(fs_routeopt_problem *p, const fs_routeopt_opts *o, int32_t *choice,
                       fs_routeopt_stats *st, fs_err *err) {
  const fs_topo *t = p->t;
  int32_t K = p->n_sets, L = t->n_links;
  int64_t vars = 0;
  int32_t n_choice = 0;
  for (int32_t f = 0; f < p->n_flows; f++)
    if (p->n_paths[f] > 1) {
      vars += p->n_paths[f];
      n_choice++;
    }
  int64_t max_vars = o->max_vars > 0 ? o->max_vars : FS_ROUTEOPT_EXACT_MAX_VARS;
  if (vars > max_vars)
    return fs_err_set(err, FS_ERANGE,
                      "exact: %lld binary variables (%d flows with a choice of path) exceed the "
                      "limit of %lld; use greedy for instances this large",
                      (long long)vars, n_choice, (long long)max_vars);
  size_t KL = (size_t)K * (size_t)L;
  double *fixed = fs__calloc(KL + 1, sizeof(double));
  double *rowload = fs__calloc(KL + 1, sizeof(double));
  int32_t *row_of = fs__malloc(KL + 1, sizeof(int32_t));
  int32_t *col0 = fs__malloc((size_t)p->n_flows + 1, sizeof(int32_t));
  int32_t *greedy = fs__malloc((size_t)p->n_flows + 1, sizeof(int32_t));
  uint8_t *common = fs__calloc((size_t)p->pstart[p->path0[p->n_flows]] + 1, 1);
  double *hx = fs__calloc((size_t)vars + 3, sizeof(double));
  int *ia = NULL, *ja = NULL;
  double *ar = NULL;
  size_t ne = 0, caps[3] = {0, 0, 0};
  glp_prob *lp = NULL;
  int rc = 0;
  if (!fixed || !rowload || !row_of || !col0 || !greedy || !common || !hx) goto oom;
  for (size_t i = 0; i < KL; i++) row_of[i] = -1;
  /* Constants: flows with one path, and the links a flow uses on every
   * path (its host links): loads no choice changes. */
  for (int32_t f = 0; f < p->n_flows; f++) {
    int32_t h0, h;
    const int32_t *p0 = fs_routeopt_path(p, f, 0, &h0);
    for (int32_t i = 0; i < h0; i++) {
      int all = 1;
      for (int32_t c = 1; c < p->n_paths[f] && all; c++) {
        const int32_t *pc = fs_routeopt_path(p, f, c, &h);
        int in = 0;
        for (int32_t j = 0; j < h && !in; j++) in = pc[j] == p0[i];
        all = in;
      }
      if (!all) continue;
      for (int32_t c = 0; c < p->n_paths[f]; c++) {
        const int32_t *pc = fs_routeopt_path(p, f, c, &h);
        for (int32_t j = 0; j < h; j++)
          if (pc[j] == p0[i]) common[fs__routeopt_path_off(p, f, c) + j] = 1;
      }
      for (int32_t k = 0; k < K; k++)
        if (fs__routeopt_in_set(p, f, k))
          fixed[(size_t)k * L + p0[i]] += p->demand_bps[f] / t->links[p0[i]].capacity_bps;
    }
  }
  /* Rows: the (set, link) pairs a choice changes. */
  int32_t n_rows_links = 0;
  for (int32_t f = 0; f < p->n_flows; f++) {
    if (p->n_paths[f] < 2) continue;
    for (int32_t c = 0; c < p->n_paths[f]; c++) {
      int32_t h;
      const int32_t *pl = fs_routeopt_path(p, f, c, &h);
      for (int32_t i = 0; i < h; i++) {
        if (common[fs__routeopt_path_off(p, f, c) + i]) continue;
        for (int32_t k = 0; k < K; k++)
          if (fs__routeopt_in_set(p, f, k) && row_of[(size_t)k * L + pl[i]] < 0)
            row_of[(size_t)k * L + pl[i]] = n_rows_links++;
      }
    }
  }
  /* Bounds: Z is at least every constant load; the rows' max W at least
   * each flow's own load on the best of its paths. They let branch and
   * bound stop at the root when the greedy incumbent meets them. */
  double zfix = 0, wlo = 0;
  for (size_t i = 0; i < KL; i++) zfix = fmax(zfix, fixed[i]);
  for (int32_t f = 0; f < p->n_flows; f++) {
    if (p->n_paths[f] < 2) continue;
    double alone = INFINITY;
    for (int32_t c = 0; c < p->n_paths[f]; c++) {
      int32_t h;
      const int32_t *pl = fs_routeopt_path(p, f, c, &h);
      double mx = 0;
      for (int32_t i = 0; i < h; i++) {
        if (common[fs__routeopt_path_off(p, f, c) + i]) continue;
        double own = p->demand_bps[f] / t->links[pl[i]].capacity_bps;
        for (int32_t k = 0; k < K; k++)
          if (fs__routeopt_in_set(p, f, k)) mx = fmax(mx, fixed[(size_t)k * L + pl[i]] + own);
      }
      alone = fmin(alone, mx);
    }
    wlo = fmax(wlo, alone);
  }
  /* When every row term is a whole multiple of one unit u (ring flows on
   * fabric links of one speed: each flow's demand is its host rate), the
   * rows' max is u W with W integer: the LP bound then rounds up, which
   * prunes the many symmetric equal-load nodes branch and bound would
   * otherwise visit. Z = max(constants, u W) is what is minimised. */
  double u = unit_of(p, fixed, row_of, common, KL);
  int wcol = u > 0 ? 2 : 1; /* the column the rows compare against */
  int col = wcol + 1, rows = 0;
  lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MIN);
  glp_add_cols(lp, wcol + (int)vars);
  glp_set_col_bnds(lp, 1, GLP_LO, fmax(zfix, wlo), 0);
  glp_set_obj_coef(lp, 1, 1);
  if (u > 0) {
    glp_set_col_kind(lp, 2, GLP_IV);
    glp_set_col_bnds(lp, 2, GLP_LO, ceil(wlo / u - 1e-9), 0);
    int r = glp_add_rows(lp, 1); /* Z - u W >= 0 */
    rows++;
    glp_set_row_bnds(lp, r, GLP_LO, 0, 0);
    if (grow3(&ia, &ja, &ar, caps, ne + 3)) goto oom;
    ia[++ne] = r;
    ja[ne] = 1;
    ar[ne] = 1;
    ia[++ne] = r;
    ja[ne] = 2;
    ar[ne] = -u;
  }
  int row0 = glp_add_rows(lp, n_rows_links > 0 ? n_rows_links : 1);
  rows += n_rows_links;
  for (size_t kl = 0; kl < KL; kl++) {
    if (row_of[kl] < 0) continue;
    int r = row0 + row_of[kl];
    glp_set_row_bnds(lp, r, GLP_UP, 0, -fixed[kl]);
    if (grow3(&ia, &ja, &ar, caps, ne + 2)) goto oom;
    ia[++ne] = r;
    ja[ne] = wcol;
    ar[ne] = u > 0 ? -u : -1;
  }
  if (n_rows_links == 0) glp_set_row_bnds(lp, row0, GLP_FR, 0, 0);
  for (int32_t f = 0; f < p->n_flows; f++) {
    col0[f] = -1;
    if (p->n_paths[f] < 2) continue;
    col0[f] = col;
    int r = glp_add_rows(lp, 1);
    rows++;
    glp_set_row_bnds(lp, r, GLP_FX, 1, 1);
    for (int32_t c = 0; c < p->n_paths[f]; c++, col++) {
      glp_set_col_kind(lp, col, GLP_BV);
      if (grow3(&ia, &ja, &ar, caps, ne + 2)) goto oom;
      ia[++ne] = r;
      ja[ne] = col;
      ar[ne] = 1;
      int32_t h;
      const int32_t *pl = fs_routeopt_path(p, f, c, &h);
      for (int32_t i = 0; i < h; i++) {
        if (common[fs__routeopt_path_off(p, f, c) + i]) continue;
        for (int32_t k = 0; k < K; k++) {
          if (!fs__routeopt_in_set(p, f, k)) continue;
          if (grow3(&ia, &ja, &ar, caps, ne + 2)) goto oom;
          ia[++ne] = row0 + row_of[(size_t)k * L + pl[i]];
          ja[ne] = col;
          ar[ne] = p->demand_bps[f] / t->links[pl[i]].capacity_bps;
        }
      }
    }
  }
  glp_load_matrix(lp, (int)ne, ia, ja, ar);

  fs_routeopt_stats gst;
  memset(&gst, 0, sizeof(gst));
  if ((rc = fs__routeopt_greedy(p, greedy, &gst, err))) goto fail;
  {
    double wmax = 0;
    memcpy(rowload, fixed, KL * sizeof(double));
    for (int32_t f = 0; f < p->n_flows; f++) {
      if (col0[f] < 0) continue;
      hx[col0[f] + greedy[f]] = 1;
      int32_t h;
      const int32_t *pl = fs_routeopt_path(p, f, greedy[f], &h);
      for (int32_t i = 0; i < h; i++)
        if (!common[fs__routeopt_path_off(p, f, greedy[f]) + i])
          for (int32_t k = 0; k < K; k++)
            if (fs__routeopt_in_set(p, f, k))
              rowload[(size_t)k * L + pl[i]] += p->demand_bps[f] / t->links[pl[i]].capacity_bps;
    }
    for (size_t kl = 0; kl < KL; kl++)
      if (row_of[kl] >= 0) wmax = fmax(wmax, rowload[kl]);
    if (u > 0) {
      hx[2] = ceil(wmax / u - 1e-9);
      hx[1] = fmax(fmax(zfix, wlo), u * hx[2]);
    } else {
      hx[1] = fmax(fmax(zfix, wlo), wmax);
    }
  }
  heur h = {hx, 0};
  /* The LP relaxation first, without the MIP presolver: a heuristic
   * solution handed to the callback must be in the original columns, which
   * presolving would renumber. */
  glp_smcp sparm;
  glp_init_smcp(&sparm);
  sparm.msg_lev = GLP_MSG_OFF;
  sparm.presolve = GLP_ON;
  if (glp_simplex(lp, &sparm) != 0 || glp_get_status(lp) != GLP_OPT) {
    rc = fs_err_set(err, FS_EINTERNAL, "exact: the LP relaxation did not solve");
    goto fail;
  }
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.presolve = GLP_OFF;
  parm.msg_lev = GLP_MSG_OFF;
  double lim = o->time_limit_s > 0 ? o->time_limit_s : 60;
  parm.tm_lim = (int)fmin(lim * 1000, 2e9);
  parm.cb_func = on_branch;
  parm.cb_info = &h;
  int grc = glp_intopt(lp, &parm);
  int status = glp_mip_status(lp);
  if (grc == GLP_ETMLIM || (grc == 0 && status != GLP_OPT)) {
    rc = fs_err_set(err, FS_ERANGE,
                    "exact: not proven optimal within %g s (%lld binaries, %d rows); raise the "
                    "time limit or use greedy",
                    lim, (long long)vars, rows);
    goto fail;
  }
  if (grc != 0) {
    rc = fs_err_set(err, FS_EINTERNAL, "exact: GLPK glp_intopt failed (code %d)", grc);
    goto fail;
  }
  for (int32_t f = 0; f < p->n_flows; f++) {
    if (col0[f] < 0) {
      choice[f] = 0;
      continue;
    }
    choice[f] = 0;
    for (int32_t c = 0; c < p->n_paths[f]; c++)
      if (glp_mip_col_val(lp, col0[f] + c) > 0.5) choice[f] = c;
  }
  st->objective = glp_mip_obj_val(lp);
  st->vars = (int32_t)vars;
  st->rows = rows;
  goto done;
oom:
  rc = fs_err_set(err, FS_ENOMEM, "out of memory");
fail:
done:
  if (lp) glp_delete_prob(lp);
  free(fixed);
  free(rowload);
  free(common);
  free(row_of);
  free(col0);
  free(greedy);
  free(hx);
  free(ia);
  free(ja);
  free(ar);
  return rc;
}
