/* The one objective every TopoOpt topology is scored by, and its exact
 * optimum: max concurrent multicommodity flow of the job's server matrix
 * (topoopt.h), source-aggregated (one commodity per sending server).
 * evaluate: an LP with S x (directed circuit bundles) + 1 columns and
 * S x n + bundles rows (S = servers that send). exact: a MILP adding
 * integer circuit counts x_uv on every pair, so S x n(n-1) flow columns;
 * kept to n <= FS_TOPOOPT_EXACT_MAX_SERVERS. Units: capacity in circuits
 * (B Gb/s each), demand in multiples of the largest entry, so GLPK sees
 * numbers near 1; time_s = (max bytes x 8 / B) / alpha. */
#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/topoopt.h"

static double dem(const fs_topoopt_traffic *t, int32_t s, int32_t w) {
  size_t n = (size_t)t->n;
  return t->ar[s * n + w] + t->mp[s * n + w];
}

/* Largest entry, and the servers that send (their count in *ns). */
static double scan(const fs_topoopt_traffic *t, int32_t *src, int32_t *ns) {
  double mx = 0;
  *ns = 0;
  for (int32_t s = 0; s < t->n; s++) {
    int any = 0;
    for (int32_t w = 0; w < t->n; w++) {
      double x = s == w ? 0 : dem(t, s, w);
      if (x > mx) mx = x;
      any |= x > 0;
    }
    if (any) src[(*ns)++] = s;
  }
  return mx;
}

/* Nonzeros of the sparse matrix, 1-based as GLPK wants. */
typedef struct nz {
  int *ia, *ja;
  double *ar;
  size_t len, cap;
} nz;

static int nz_add(nz *z, int i, int j, double v) {
  if (z->len + 2 > z->cap) {
    size_t cap = z->cap ? z->cap * 2 : 1024;
    int *ia = realloc(z->ia, cap * sizeof(int));
    if (!ia) return -1;
    z->ia = ia;
    int *ja = realloc(z->ja, cap * sizeof(int));
    if (!ja) return -1;
    z->ja = ja;
    double *ar = realloc(z->ar, cap * sizeof(double));
    if (!ar) return -1;
    z->ar = ar;
    z->cap = cap;
  }
  z->len++;
  z->ia[z->len] = i;
  z->ja[z->len] = j;
  z->ar[z->len] = v;
  return 0;
}

static void nz_free(nz *z) { FS__FREE_ALL(z->ia, z->ja, z->ar); }

/* Builds the flow part shared by both programs on the directed arcs
 * (au[k] -> av[k]): column 1 is alpha, flow of source i on arc k is column
 * col0 + i * K + k; rows: conservation (ns x n, first) then arc capacity
 * (K, next; its bound is set by the caller). */
static int build_flow(glp_prob *lp, nz *z, const fs_topoopt_traffic *t, const int32_t *src,
                      int32_t ns, double scale, const int32_t *au, const int32_t *av, int32_t K,
                      int col0, int *cap_row0) {
  int32_t n = t->n;
  int row0 = glp_add_rows(lp, ns * n);
  for (int32_t i = 0; i < ns; i++) {
    int32_t s = src[i];
    double rowsum = 0;
    for (int32_t w = 0; w < n; w++)
      if (w != s) rowsum += dem(t, s, w) / scale;
    for (int32_t w = 0; w < n; w++) {
      int r = row0 + i * n + w;
      glp_set_row_bnds(lp, r, GLP_FX, 0, 0);
      double c = w == s ? rowsum : -dem(t, s, w) / scale;
      if (c != 0 && nz_add(z, r, 1, -c)) return -1;
    }
    for (int32_t k = 0; k < K; k++) {
      int col = col0 + i * K + k;
      if (nz_add(z, row0 + i * n + au[k], col, 1) || nz_add(z, row0 + i * n + av[k], col, -1))
        return -1;
    }
  }
  *cap_row0 = glp_add_rows(lp, K);
  for (int32_t k = 0; k < K; k++)
    for (int32_t i = 0; i < ns; i++)
      if (nz_add(z, *cap_row0 + k, col0 + i * K + k, 1)) return -1;
  return 0;
}

static int32_t root(int32_t *p, int32_t x) {
  while (p[x] != x) x = p[x] = p[p[x]];
  return x;
}

/* comp: n scratch entries for the connected components. */
static void finish_eval(const fs_topoopt_traffic *t, const fs_topoopt_graph *g, double gbps,
                        double scale, double alpha, int32_t *comp, fs_topoopt_eval *out) {
  int32_t n = t->n;
  double total = 0, direct = 0, worst = 0, cut = 0;
  for (int32_t u = 0; u < n; u++) comp[u] = u;
  for (int32_t u = 0; u < n; u++)
    for (int32_t v = u + 1; v < n; v++)
      if (g->mult[(size_t)u * n + v] > 0) comp[root(comp, u)] = root(comp, v);
  for (int32_t u = 0; u < n; u++) {
    double o = 0, in = 0;
    for (int32_t v = 0; v < n; v++) {
      if (u == v) continue;
      o += dem(t, u, v);
      in += dem(t, v, u);
      total += dem(t, u, v);
      if (g->mult[(size_t)u * n + v] > 0) direct += dem(t, u, v);
      if (root(comp, u) != root(comp, v)) cut += dem(t, u, v);
    }
    worst = fmax(worst, fmax(o, in));
  }
  out->ideal_s = worst * 8 / ((double)g->degree * gbps * 1e9);
  out->direct_frac = total > 0 ? direct / total : 1;
  out->unserved_frac = total > 0 ? cut / total : 0;
  out->time_s = total <= 0 ? 0 : alpha > 1e-12 ? scale * 8 / (gbps * 1e9) / alpha : INFINITY;
}

int fs_topoopt_evaluate(const fs_topoopt_traffic *t, const fs_topoopt_graph *g, double gbps,
                        fs_topoopt_eval *out, fs_err *err) {
  if (g->n != t->n)
    return fs_err_set(err, FS_EINVAL, "topoopt: graph of %d servers, traffic of %d", g->n, t->n);
  if (!(gbps > 0)) return fs_err_set(err, FS_EINVAL, "topoopt: gbps must be > 0, got %g", gbps);
  int32_t n = t->n, ns, K = 0;
  int32_t *src = fs__malloc((size_t)n, sizeof(int32_t));
  int32_t *au = fs__malloc((size_t)n * (size_t)n, sizeof(int32_t));
  int32_t *av = fs__malloc((size_t)n * (size_t)n, sizeof(int32_t));
  nz z = {0};
  glp_prob *lp = NULL;
  int rc = 0;
  if (!src || !au || !av) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  double scale = scan(t, src, &ns);
  if (ns == 0 || scale <= 0) {
    finish_eval(t, g, gbps, 1, 0, src, out);
    goto out;
  }
  for (int32_t u = 0; u < n; u++)
    for (int32_t v = 0; v < n; v++)
      if (u != v && g->mult[(size_t)u * n + v] > 0) au[K] = u, av[K++] = v;
  double alpha = 0;
  if (K > 0) {
    lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MAX);
    glp_add_cols(lp, 1 + ns * K);
    glp_set_col_bnds(lp, 1, GLP_LO, 0, 0);
    glp_set_obj_coef(lp, 1, 1);
    for (int c = 2; c <= 1 + ns * K; c++) glp_set_col_bnds(lp, c, GLP_LO, 0, 0);
    int cap0;
    if (build_flow(lp, &z, t, src, ns, scale, au, av, K, 2, &cap0)) {
      rc = fs_err_set(err, FS_ENOMEM, "out of memory");
      goto out;
    }
    for (int32_t k = 0; k < K; k++)
      glp_set_row_bnds(lp, cap0 + k, GLP_UP, 0, (double)g->mult[(size_t)au[k] * n + av[k]]);
    glp_load_matrix(lp, (int)z.len, z.ia, z.ja, z.ar);
    glp_smcp sp;
    glp_init_smcp(&sp);
    sp.msg_lev = GLP_MSG_OFF;
    sp.presolve = GLP_ON;
    int grc = glp_simplex(lp, &sp);
    if (grc != 0 || glp_get_status(lp) != GLP_OPT) {
      rc = fs_err_set(err, FS_EINTERNAL, "topoopt: GLPK did not solve the flow LP (code %d)",
                      grc);
      goto out;
    }
    alpha = glp_get_obj_val(lp);
  }
  finish_eval(t, g, gbps, scale, alpha, src, out);
out:
  if (lp) glp_delete_prob(lp);
  nz_free(&z);
  FS__FREE_ALL(src, au, av);
  return rc;
}

int fs_topoopt_exact(const fs_topoopt_traffic *t, const fs_topoopt_opts *o,
                     fs_topoopt_graph **out, fs_topoopt_eval *ev, fs_err *err) {
  int32_t n = t->n, d = o->degree;
  if (n > FS_TOPOOPT_EXACT_MAX_SERVERS)
    return fs_err_set(err, FS_ERANGE,
                      "topoopt: exact: %d servers exceed the exact limit (%d); use the heuristic",
                      n, FS_TOPOOPT_EXACT_MAX_SERVERS);
  if (!(o->gbps > 0))
    return fs_err_set(err, FS_EINVAL, "topoopt: gbps must be > 0, got %g", o->gbps);
  fs_topoopt_graph *g;
  int rc = fs_topoopt_graph_new(n, d, &g, err);
  if (rc) return rc;
  int32_t K = n * (n - 1), P = n * (n - 1) / 2, ns;
  int32_t *src = fs__malloc((size_t)n, sizeof(int32_t));
  int32_t *au = fs__malloc((size_t)K, sizeof(int32_t)), *av = fs__malloc((size_t)K, sizeof(int32_t));
  int32_t *pu = fs__malloc((size_t)P, sizeof(int32_t)), *pv = fs__malloc((size_t)P, sizeof(int32_t));
  nz z = {0};
  glp_prob *lp = NULL;
  if (!src || !au || !av || !pu || !pv) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto done;
  }
  double scale = scan(t, src, &ns);
  if (ns == 0) {
    /* Nothing to carry: any configuration is optimal; keep it empty. */
    finish_eval(t, g, o->gbps, 1, 0, src, ev);
    goto done;
  }
  int32_t k = 0, p = 0;
  for (int32_t u = 0; u < n; u++)
    for (int32_t v = 0; v < n; v++)
      if (u != v) au[k] = u, av[k++] = v;
  for (int32_t u = 0; u < n; u++)
    for (int32_t v = u + 1; v < n; v++) pu[p] = u, pv[p++] = v;
  /* Columns: alpha, x_p (P integers), flows. */
  lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MAX);
  int xcol0 = 2, fcol0 = 2 + P, ncols = 1 + P + ns * K;
  glp_add_cols(lp, ncols);
  glp_set_col_bnds(lp, 1, GLP_LO, 0, 0);
  glp_set_obj_coef(lp, 1, 1);
  for (int32_t q = 0; q < P; q++) {
    glp_set_col_kind(lp, xcol0 + q, GLP_IV);
    glp_set_col_bnds(lp, xcol0 + q, GLP_DB, 0, d);
  }
  for (int c = fcol0; c <= ncols; c++) glp_set_col_bnds(lp, c, GLP_LO, 0, 0);
  int cap0;
  if (build_flow(lp, &z, t, src, ns, scale, au, av, K, fcol0, &cap0)) goto oom;
  /* Arc u -> v: flows - x_{uv} <= 0. */
  for (int32_t a = 0; a < K; a++) {
    int32_t u = au[a] < av[a] ? au[a] : av[a], v = au[a] < av[a] ? av[a] : au[a];
    int32_t q = u * n - u * (u + 1) / 2 + (v - u - 1);
    glp_set_row_bnds(lp, cap0 + a, GLP_UP, 0, 0);
    if (nz_add(&z, cap0 + a, xcol0 + q, -1)) goto oom;
  }
  /* Degree: sum_v x_uv <= d. */
  int deg0 = glp_add_rows(lp, n);
  for (int32_t u = 0; u < n; u++) glp_set_row_bnds(lp, deg0 + u, GLP_UP, 0, d);
  for (int32_t q = 0; q < P; q++)
    if (nz_add(&z, deg0 + pu[q], xcol0 + q, 1) || nz_add(&z, deg0 + pv[q], xcol0 + q, 1))
      goto oom;
  glp_load_matrix(lp, (int)z.len, z.ia, z.ja, z.ar);
  glp_iocp ip;
  glp_init_iocp(&ip);
  ip.msg_lev = GLP_MSG_OFF;
  ip.presolve = GLP_ON;
  double lim = o->time_limit_s > 0 ? o->time_limit_s : 60;
  ip.tm_lim = (int)fmin(lim * 1000, 2e9);
  int grc = glp_intopt(lp, &ip);
  int status = glp_mip_status(lp);
  if (grc == GLP_ETMLIM || (grc == 0 && status != GLP_OPT)) {
    rc = fs_err_set(err, FS_ERANGE,
                    "topoopt: exact: not proven optimal within %g s (%d servers, %d integer "
                    "and %d flow columns); raise the time limit or use the heuristic",
                    lim, n, P, ns * K);
    goto done;
  }
  if (grc != 0) {
    rc = fs_err_set(err, FS_EINTERNAL, "topoopt: exact: GLPK glp_intopt failed (code %d)", grc);
    goto done;
  }
  for (int32_t q = 0; q < P; q++) {
    int32_t x = (int32_t)lround(glp_mip_col_val(lp, xcol0 + q));
    g->mult[(size_t)pu[q] * n + pv[q]] = g->mult[(size_t)pv[q] * n + pu[q]] = x;
  }
  /* Score the chosen circuits with the evaluator itself, so both
   * optimisers are compared by the very same function. */
  rc = fs_topoopt_evaluate(t, g, o->gbps, ev, err);
  goto done;
oom:
  rc = fs_err_set(err, FS_ENOMEM, "out of memory");
done:
  if (lp) glp_delete_prob(lp);
  nz_free(&z);
  FS__FREE_ALL(src, au, av, pu, pv);
  if (rc) {
    fs_topoopt_graph_free(g);
    return rc;
  }
  *out = g;
  return 0;
}
