/* The exact routing optimiser: a MILP over every flow's equal-cost paths,
 * solved by GLPK's branch and bound (docs/model-route.md, "Exact").
 *
 *   minimise Z
 *   s.t.  sum_p x(f,p) = 1                                  every flow f
 *         sum_{f,p : l in p, f in set k} d_f / c_l x(f,p) <= Z   every set k, link l
 *         x(f,p) in {0, 1}
 *
 * Z is the max link load; 1/Z is the largest throughput (as a fraction of
 * its demand) that every flow can get at once, so this maximises the
 * minimum normalised flow throughput. Flows with a single path are
 * constants. Size: sum over flows with a choice of their paths binaries,
 * one row per flow and per (set, link) that a choice touches; the greedy
 * routing is handed to GLPK as its first incumbent. Instances above
 * FS_RO_EXACT_MAX_VARS binaries are refused; a solve that does not prove
 * optimality within the time limit fails. */
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

/* GLPK's 1-based triplet arrays, grown together. */
static int grow3(int **ia, int **ja, double **ar, size_t *caps, size_t need) {
  return fs__grow(ia, &caps[0], need, sizeof(int)) || fs__grow(ja, &caps[1], need, sizeof(int)) ||
         fs__grow(ar, &caps[2], need, sizeof(double));
}

int fs__ro_exact(fs_ro_problem *p, const fs_ro_opts *o, int32_t *choice, fs_ro_stats *st,
                 fs_err *err) {
  const fs_topo *t = p->t;
  int32_t K = p->n_sets, L = t->n_links;
  int64_t vars = 0;
  int32_t n_choice = 0;
  for (int32_t f = 0; f < p->n_flows; f++)
    if (p->n_paths[f] > 1) {
      vars += p->n_paths[f];
      n_choice++;
    }
  int64_t max_vars = o->max_vars > 0 ? o->max_vars : FS_RO_EXACT_MAX_VARS;
  if (vars > max_vars)
    return fs_err_set(err, FS_ERANGE,
                      "exact: %lld binary variables (%d flows with a choice of path) exceed the "
                      "limit of %lld; use greedy for instances this large",
                      (long long)vars, n_choice, (long long)max_vars);
  size_t KL = (size_t)K * (size_t)L;
  double *fixed = fs__calloc(KL + 1, sizeof(double));
  int32_t *row_of = fs__malloc(KL + 1, sizeof(int32_t));
  int32_t *col0 = fs__malloc((size_t)p->n_flows + 1, sizeof(int32_t));
  int32_t *greedy = fs__malloc((size_t)p->n_flows + 1, sizeof(int32_t));
  double *hx = fs__calloc((size_t)vars + 2, sizeof(double));
  int *ia = NULL, *ja = NULL;
  double *ar = NULL;
  size_t ne = 0, caps[3] = {0, 0, 0};
  glp_prob *lp = NULL;
  int rc = 0;
  if (!fixed || !row_of || !col0 || !greedy || !hx) goto oom;
  for (size_t i = 0; i < KL; i++) row_of[i] = -1;
  for (int32_t f = 0; f < p->n_flows; f++) {
    if (p->n_paths[f] > 1) continue;
    int32_t h;
    const int32_t *pl = fs_ro_path(p, f, 0, &h);
    for (int32_t k = 0; k < K; k++)
      if (fs__ro_in_set(p, f, k))
        for (int32_t i = 0; i < h; i++)
          fixed[(size_t)k * L + pl[i]] += p->demand_bps[f] / t->links[pl[i]].capacity_bps;
  }
  /* Z is at least every fixed load and, for each flow with a choice, its
   * own load on the best of its paths: bounds that let branch and bound
   * stop at the root when the greedy incumbent meets them */
  double zlo = 0;
  for (size_t i = 0; i < KL; i++) zlo = fmax(zlo, fixed[i]);
  for (int32_t f = 0; f < p->n_flows; f++) {
    if (p->n_paths[f] < 2) continue;
    double alone = INFINITY;
    for (int32_t c = 0; c < p->n_paths[f]; c++) {
      int32_t h;
      const int32_t *pl = fs_ro_path(p, f, c, &h);
      double mx = 0;
      for (int32_t i = 0; i < h; i++) {
        double own = p->demand_bps[f] / t->links[pl[i]].capacity_bps;
        for (int32_t k = 0; k < K; k++)
          if (fs__ro_in_set(p, f, k)) mx = fmax(mx, fixed[(size_t)k * L + pl[i]] + own);
      }
      alone = fmin(alone, mx);
    }
    zlo = fmax(zlo, alone);
  }

  lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MIN);
  glp_add_cols(lp, 1 + (int)vars);
  glp_set_col_bnds(lp, 1, GLP_LO, zlo, 0);
  glp_set_obj_coef(lp, 1, 1);
  int col = 2, rows = 0;
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
    }
  }
  for (int32_t f = 0; f < p->n_flows; f++) {
    if (col0[f] < 0) continue;
    for (int32_t c = 0; c < p->n_paths[f]; c++) {
      int32_t h;
      const int32_t *pl = fs_ro_path(p, f, c, &h);
      for (int32_t k = 0; k < K; k++) {
        if (!fs__ro_in_set(p, f, k)) continue;
        for (int32_t i = 0; i < h; i++) {
          size_t kl = (size_t)k * L + pl[i];
          if (row_of[kl] < 0) {
            int r = glp_add_rows(lp, 1);
            rows++;
            row_of[kl] = r;
            glp_set_row_bnds(lp, r, GLP_UP, 0, -fixed[kl]);
            if (grow3(&ia, &ja, &ar, caps, ne + 2)) goto oom;
            ia[++ne] = r;
            ja[ne] = 1;
            ar[ne] = -1;
          }
          if (grow3(&ia, &ja, &ar, caps, ne + 2)) goto oom;
          ia[++ne] = row_of[kl];
          ja[ne] = col0[f] + c;
          ar[ne] = p->demand_bps[f] / t->links[pl[i]].capacity_bps;
        }
      }
    }
  }
  glp_load_matrix(lp, (int)ne, ia, ja, ar);

  fs_ro_opts go = {FS_RO_GREEDY, 0, 0, 0};
  fs_ro_stats gst;
  if ((rc = fs_ro_optimize(p, &go, greedy, &gst, err))) goto fail;
  hx[1] = gst.objective > zlo ? gst.objective : zlo;
  for (int32_t f = 0; f < p->n_flows; f++)
    if (col0[f] >= 0) hx[col0[f] + greedy[f]] = 1;
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
  free(row_of);
  free(col0);
  free(greedy);
  free(hx);
  free(ia);
  free(ja);
  free(ar);
  return rc;
}
