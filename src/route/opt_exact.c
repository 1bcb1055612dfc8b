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

/* The working state of one exact solve. Per (set k, link l), index k L + l:
 * the constant load fixed[], the load under the greedy routing rowload[],
 * and the row of the pair (-1 when no choice touches it); per path hop:
 * common[] (the flow uses that link on every path); per flow: its first
 * column (-1 without a choice) and greedy path. GLPK's matrix is built in
 * the 1-based triplets ia, ja, ar (ne of them). */
typedef struct exact_ctx {
  fs_routeopt_problem *p;
  const fs_topo *t;
  int32_t K, L;
  size_t KL;
  int64_t vars;
  double *fixed, *rowload;
  int32_t *row_of, *col0, *greedy;
  uint8_t *common;
  double *hx; /* 1-based column values of the greedy routing */
  int *ia, *ja;
  double *ar;
  size_t ne, caps[3];
  glp_prob *lp;
  int32_t n_rows_links;
  double zfix, wlo; /* lower bounds of Z: the constants; each flow alone */
  double u;         /* the unit of every row term, or 0 */
  int wcol, rows;   /* the column the rows compare against; rows added */
} exact_ctx;

/* The binaries: every path of every flow with a choice of paths. Sets
 * *n_choice to the number of such flows. */
static int64_t count_vars(const fs_routeopt_problem *p, int32_t *n_choice) {
  int64_t vars = 0;
  *n_choice = 0;
  for (int32_t f = 0; f < p->n_flows; f++)
    if (p->n_paths[f] > 1) {
      vars += p->n_paths[f];
      (*n_choice)++;
    }
  return vars;
}

/* Constants: flows with one path, and the links a flow uses on every
 * path (its host links): loads no choice changes. Marks those hops in
 * common[] and adds their loads to fixed[]. */
static void find_constants(exact_ctx *c) {
  const fs_routeopt_problem *p = c->p;
  int32_t K = c->K, L = c->L;
  for (int32_t f = 0; f < p->n_flows; f++) {
    int32_t h0, h;
    const int32_t *p0 = fs_routeopt_path(p, f, 0, &h0);
    for (int32_t i = 0; i < h0; i++) {
      int all = 1;
      for (int32_t q = 1; q < p->n_paths[f] && all; q++) {
        const int32_t *pc = fs_routeopt_path(p, f, q, &h);
        int in = 0;
        for (int32_t j = 0; j < h && !in; j++) in = pc[j] == p0[i];
        all = in;
      }
      if (!all) continue;
      for (int32_t q = 0; q < p->n_paths[f]; q++) {
        const int32_t *pc = fs_routeopt_path(p, f, q, &h);
        for (int32_t j = 0; j < h; j++)
          if (pc[j] == p0[i]) c->common[fs__routeopt_path_off(p, f, q) + j] = 1;
      }
      for (int32_t k = 0; k < K; k++)
        if (fs__routeopt_in_set(p, f, k))
          c->fixed[(size_t)k * L + p0[i]] += p->demand_bps[f] / c->t->links[p0[i]].capacity_bps;
    }
  }
}

/* Rows: numbers the (set, link) pairs a choice changes, in flow, path and
 * hop order, into row_of[] and n_rows_links. */
static void number_rows(exact_ctx *c) {
  const fs_routeopt_problem *p = c->p;
  int32_t K = c->K, L = c->L;
  c->n_rows_links = 0;
  for (int32_t f = 0; f < p->n_flows; f++) {
    if (p->n_paths[f] < 2) continue;
    for (int32_t q = 0; q < p->n_paths[f]; q++) {
      int32_t h;
      const int32_t *pl = fs_routeopt_path(p, f, q, &h);
      for (int32_t i = 0; i < h; i++) {
        if (c->common[fs__routeopt_path_off(p, f, q) + i]) continue;
        for (int32_t k = 0; k < K; k++)
          if (fs__routeopt_in_set(p, f, k) && c->row_of[(size_t)k * L + pl[i]] < 0)
            c->row_of[(size_t)k * L + pl[i]] = c->n_rows_links++;
      }
    }
  }
}

/* Bounds: Z is at least every constant load (zfix); the rows' max W at
 * least each flow's own load on the best of its paths (wlo). They let
 * branch and bound stop at the root when the greedy incumbent meets them. */
static void lower_bounds(exact_ctx *c) {
  const fs_routeopt_problem *p = c->p;
  int32_t K = c->K, L = c->L;
  double zfix = 0, wlo = 0;
  for (size_t i = 0; i < c->KL; i++) zfix = fmax(zfix, c->fixed[i]);
  for (int32_t f = 0; f < p->n_flows; f++) {
    if (p->n_paths[f] < 2) continue;
    double alone = INFINITY;
    for (int32_t q = 0; q < p->n_paths[f]; q++) {
      int32_t h;
      const int32_t *pl = fs_routeopt_path(p, f, q, &h);
      double mx = 0;
      for (int32_t i = 0; i < h; i++) {
        if (c->common[fs__routeopt_path_off(p, f, q) + i]) continue;
        double own = p->demand_bps[f] / c->t->links[pl[i]].capacity_bps;
        for (int32_t k = 0; k < K; k++)
          if (fs__routeopt_in_set(p, f, k)) mx = fmax(mx, c->fixed[(size_t)k * L + pl[i]] + own);
      }
      alone = fmin(alone, mx);
    }
    wlo = fmax(wlo, alone);
  }
  c->zfix = zfix;
  c->wlo = wlo;
}

/* Appends one matrix entry (row r, column j, value v). Returns 0 or -1 when
 * the triplets cannot grow. */
static int put_entry(exact_ctx *c, int r, int j, double v) {
  if (grow3(&c->ia, &c->ja, &c->ar, c->caps, c->ne + 2)) return -1;
  c->ia[++c->ne] = r;
  c->ja[c->ne] = j;
  c->ar[c->ne] = v;
  return 0;
}

/* The objective column Z (at least both bounds) and, with a unit u, the
 * integer column W and the row Z - u W >= 0. Returns 0 or -1 (out of
 * memory). */
static int add_objective(exact_ctx *c) {
  glp_prob *lp = c->lp;
  glp_set_obj_dir(lp, GLP_MIN);
  glp_add_cols(lp, c->wcol + (int)c->vars);
  glp_set_col_bnds(lp, 1, GLP_LO, fmax(c->zfix, c->wlo), 0);
  glp_set_obj_coef(lp, 1, 1);
  if (c->u > 0) {
    glp_set_col_kind(lp, 2, GLP_IV);
    glp_set_col_bnds(lp, 2, GLP_LO, ceil(c->wlo / c->u - 1e-9), 0);
    int r = glp_add_rows(lp, 1); /* Z - u W >= 0 */
    c->rows++;
    glp_set_row_bnds(lp, r, GLP_LO, 0, 0);
    if (grow3(&c->ia, &c->ja, &c->ar, c->caps, c->ne + 3)) return -1;
    c->ia[++c->ne] = r;
    c->ja[c->ne] = 1;
    c->ar[c->ne] = 1;
    c->ia[++c->ne] = r;
    c->ja[c->ne] = 2;
    c->ar[c->ne] = -c->u;
  }
  return 0;
}

/* One row per (set, link) a choice changes: fixed + choices' loads <= W
 * (u W with a unit). Returns the first row's number, or -1 (out of
 * memory). */
static int add_link_rows(exact_ctx *c) {
  int row0 = glp_add_rows(c->lp, c->n_rows_links > 0 ? c->n_rows_links : 1);
  c->rows += c->n_rows_links;
  for (size_t kl = 0; kl < c->KL; kl++) {
    if (c->row_of[kl] < 0) continue;
    int r = row0 + c->row_of[kl];
    glp_set_row_bnds(c->lp, r, GLP_UP, 0, -c->fixed[kl]);
    if (put_entry(c, r, c->wcol, c->u > 0 ? -c->u : -1)) return -1;
  }
  if (c->n_rows_links == 0) glp_set_row_bnds(c->lp, row0, GLP_FR, 0, 0);
  return row0;
}

/* Per flow with a choice: a binary per path, the row "one path", and each
 * path's load d_f / c_l in the rows of the links it changes. Returns 0 or
 * -1 (out of memory). */
static int add_flow_columns(exact_ctx *c, int row0) {
  const fs_routeopt_problem *p = c->p;
  int32_t K = c->K, L = c->L;
  int col = c->wcol + 1;
  for (int32_t f = 0; f < p->n_flows; f++) {
    c->col0[f] = -1;
    if (p->n_paths[f] < 2) continue;
    c->col0[f] = col;
    int r = glp_add_rows(c->lp, 1);
    c->rows++;
    glp_set_row_bnds(c->lp, r, GLP_FX, 1, 1);
    for (int32_t q = 0; q < p->n_paths[f]; q++, col++) {
      glp_set_col_kind(c->lp, col, GLP_BV);
      if (put_entry(c, r, col, 1)) return -1;
      int32_t h;
      const int32_t *pl = fs_routeopt_path(p, f, q, &h);
      for (int32_t i = 0; i < h; i++) {
        if (c->common[fs__routeopt_path_off(p, f, q) + i]) continue;
        for (int32_t k = 0; k < K; k++) {
          if (!fs__routeopt_in_set(p, f, k)) continue;
          if (put_entry(c, row0 + c->row_of[(size_t)k * L + pl[i]], col,
                        p->demand_bps[f] / c->t->links[pl[i]].capacity_bps))
            return -1;
        }
      }
    }
  }
  return 0;
}

/* Builds the MILP in c->lp (created here, freed by the caller). When
 * every row term is a whole multiple of one unit u (ring flows on fabric
 * links of one speed: each flow's demand is its host rate), the rows' max
 * is u W with W integer: the LP bound then rounds up, which prunes the
 * many symmetric equal-load nodes branch and bound would otherwise visit.
 * Z = max(constants, u W) is what is minimised. Returns 0 or -1 (out of
 * memory). */
static int build_milp(exact_ctx *c) {
  c->u = unit_of(c->p, c->fixed, c->row_of, c->common, c->KL);
  c->wcol = c->u > 0 ? 2 : 1;
  c->rows = 0;
  c->lp = glp_create_prob();
  if (add_objective(c)) return -1;
  int row0 = add_link_rows(c);
  if (row0 < 0 || add_flow_columns(c, row0)) return -1;
  glp_load_matrix(c->lp, (int)c->ne, c->ia, c->ja, c->ar);
  return 0;
}

/* GLPK's first incumbent: the greedy routing, its binaries and its Z (and
 * W) in hx. Returns 0 or the greedy optimiser's error. */
static int greedy_incumbent(exact_ctx *c, fs_err *err) {
  const fs_routeopt_problem *p = c->p;
  int32_t K = c->K, L = c->L;
  fs_routeopt_stats gst;
  memset(&gst, 0, sizeof(gst));
  int rc = fs__routeopt_greedy(c->p, c->greedy, &gst, err);
  if (rc) return rc;
  double wmax = 0;
  memcpy(c->rowload, c->fixed, c->KL * sizeof(double));
  for (int32_t f = 0; f < p->n_flows; f++) {
    if (c->col0[f] < 0) continue;
    c->hx[c->col0[f] + c->greedy[f]] = 1;
    int32_t h;
    const int32_t *pl = fs_routeopt_path(p, f, c->greedy[f], &h);
    for (int32_t i = 0; i < h; i++)
      if (!c->common[fs__routeopt_path_off(p, f, c->greedy[f]) + i])
        for (int32_t k = 0; k < K; k++)
          if (fs__routeopt_in_set(p, f, k))
            c->rowload[(size_t)k * L + pl[i]] +=
                p->demand_bps[f] / c->t->links[pl[i]].capacity_bps;
  }
  for (size_t kl = 0; kl < c->KL; kl++)
    if (c->row_of[kl] >= 0) wmax = fmax(wmax, c->rowload[kl]);
  if (c->u > 0) {
    c->hx[2] = ceil(wmax / c->u - 1e-9);
    c->hx[1] = fmax(fmax(c->zfix, c->wlo), c->u * c->hx[2]);
  } else {
    c->hx[1] = fmax(fmax(c->zfix, c->wlo), wmax);
  }
  return 0;
}

/* Solves the MILP: the LP relaxation first, then branch and bound with the
 * greedy incumbent, within the time limit. Returns 0 when proven optimal,
 * else FS_ERANGE (time limit or not optimal) or FS_EINTERNAL (err set). */
static int solve_milp(exact_ctx *c, const fs_routeopt_opts *o, fs_err *err) {
  heur h = {c->hx, 0};
  /* The LP relaxation first, without the MIP presolver: a heuristic
   * solution handed to the callback must be in the original columns, which
   * presolving would renumber. */
  glp_smcp sparm;
  glp_init_smcp(&sparm);
  sparm.msg_lev = GLP_MSG_OFF;
  sparm.presolve = GLP_ON;
  if (glp_simplex(c->lp, &sparm) != 0 || glp_get_status(c->lp) != GLP_OPT)
    return fs_err_set(err, FS_EINTERNAL, "exact: the LP relaxation did not solve");
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.presolve = GLP_OFF;
  parm.msg_lev = GLP_MSG_OFF;
  double lim = o->time_limit_s > 0 ? o->time_limit_s : 60;
  parm.tm_lim = (int)fmin(lim * 1000, 2e9);
  parm.cb_func = on_branch;
  parm.cb_info = &h;
  int grc = glp_intopt(c->lp, &parm);
  int status = glp_mip_status(c->lp);
  if (grc == GLP_ETMLIM || (grc == 0 && status != GLP_OPT))
    return fs_err_set(err, FS_ERANGE,
                      "exact: not proven optimal within %g s (%lld binaries, %d rows); raise the "
                      "time limit or use greedy",
                      lim, (long long)c->vars, c->rows);
  if (grc != 0)
    return fs_err_set(err, FS_EINTERNAL, "exact: GLPK glp_intopt failed (code %d)", grc);
  return 0;
}

/* Each flow's path in the optimal solution (0 without a choice). */
static void read_choice(const exact_ctx *c, int32_t *choice) {
  const fs_routeopt_problem *p = c->p;
  for (int32_t f = 0; f < p->n_flows; f++) {
    if (c->col0[f] < 0) {
      choice[f] = 0;
      continue;
    }
    choice[f] = 0;
    for (int32_t q = 0; q < p->n_paths[f]; q++)
      if (glp_mip_col_val(c->lp, c->col0[f] + q) > 0.5) choice[f] = q;
  }
}

int fs__routeopt_exact(fs_routeopt_problem *p, const fs_routeopt_opts *o, int32_t *choice,
                       fs_routeopt_stats *st, fs_err *err) {
  exact_ctx c;
  memset(&c, 0, sizeof(c));
  c.p = p;
  c.t = p->t;
  c.K = p->n_sets;
  c.L = p->t->n_links;
  int32_t n_choice;
  c.vars = count_vars(p, &n_choice);
  int64_t max_vars = o->max_vars > 0 ? o->max_vars : FS_ROUTEOPT_EXACT_MAX_VARS;
  if (c.vars > max_vars)
    return fs_err_set(err, FS_ERANGE,
                      "exact: %lld binary variables (%d flows with a choice of path) exceed the "
                      "limit of %lld; use greedy for instances this large",
                      (long long)c.vars, n_choice, (long long)max_vars);
  size_t KL = c.KL = (size_t)c.K * (size_t)c.L;
  c.fixed = fs__calloc(KL + 1, sizeof(double));
  c.rowload = fs__calloc(KL + 1, sizeof(double));
  c.row_of = fs__malloc(KL + 1, sizeof(int32_t));
  c.col0 = fs__malloc((size_t)p->n_flows + 1, sizeof(int32_t));
  c.greedy = fs__malloc((size_t)p->n_flows + 1, sizeof(int32_t));
  c.common = fs__calloc((size_t)p->pstart[p->path0[p->n_flows]] + 1, 1);
  c.hx = fs__calloc((size_t)c.vars + 3, sizeof(double));
  int rc = 0;
  if (!c.fixed || !c.rowload || !c.row_of || !c.col0 || !c.greedy || !c.common || !c.hx)
    goto oom;
  for (size_t i = 0; i < KL; i++) c.row_of[i] = -1;
  find_constants(&c);
  number_rows(&c);
  lower_bounds(&c);
  if (build_milp(&c)) goto oom;
  if ((rc = greedy_incumbent(&c, err)) || (rc = solve_milp(&c, o, err))) goto fail;
  read_choice(&c, choice);
  st->objective = glp_mip_obj_val(c.lp);
  st->vars = (int32_t)c.vars;
  st->rows = c.rows;
  goto done;
oom:
  rc = fs_err_set(err, FS_ENOMEM, "out of memory");
fail:
done:
  if (c.lp) glp_delete_prob(c.lp);
  FS__FREE_ALL(c.fixed, c.rowload, c.common, c.row_of, c.col0, c.greedy, c.hx, c.ia, c.ja, c.ar);
  return rc;
}
