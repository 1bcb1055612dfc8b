/* The static configuration (one stride permutation per OCS, held for the
 * whole job, multi-hop through nodes) and whole jobs of phases under each
 * algorithm (ocs.h). Static routing: one BFS over the n offsets of the
 * circulant graph, then O(n^2 * hops) to load the circuits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/ocs.h"

int fs_ocs_static_strides(const fs_ocs_params *p, int32_t n, const int64_t *m, int32_t *strides,
                          fs_err *err) {
  if (p->degree < 1 || n < 2 || n > FS_OCS_MAX_NODES)
    return fs_err_set(err, FS_EINVAL, "static: needs degree >= 1 and 2 <= n <= %d",
                      FS_OCS_MAX_NODES);
  int64_t *direct = fs__calloc((size_t)n, sizeof(*direct));
  uint8_t *taken = fs__calloc((size_t)n, 1);
  if (!direct || !taken) {
    free(direct);
    free(taken);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  for (int32_t i = 0; i < n; i++)
    for (int32_t j = 0; j < n; j++)
      if (i != j) direct[(j - i + n) % n] += m[(size_t)i * n + j];
  /* d strides by direct bytes (ties: smaller stride); with d >= n-1 all of
   * them, the extra OCSes repeating stride 1 (parallel circuits). */
  int32_t d = p->degree, g = n, k = 0;
  for (; k < d && k < n - 1; k++) {
    int32_t best = -1;
    for (int32_t s = 1; s < n; s++)
      if (!taken[s] && (best < 0 || direct[s] > direct[best])) best = s;
    taken[best] = 1;
    strides[k] = best;
    g = fs__gcd32(g, best);
  }
  if (g != 1) {
    /* Not strongly connected: swap the weakest for the best stride coprime
     * with n (stride 1 always is). */
    int32_t best = -1;
    for (int32_t s = 1; s < n; s++)
      if (!taken[s] && fs__gcd32(n, s) == 1 && (best < 0 || direct[s] > direct[best])) best = s;
    strides[k - 1] = best;
  }
  for (; k < d; k++) strides[k] = 1;
  free(direct);
  free(taken);
  return 0;
}

int fs_ocs_static_eval(const fs_ocs_params *p, int32_t n, const int32_t *strides,
                       const int64_t *m, fs_ocs_result *res, fs_err *err) {
  if (!(p->gbps > 0) || !isfinite(p->gbps) || !(p->delay_s >= 0) || !isfinite(p->delay_s) ||
      p->degree < 1 || n < 2)
    return fs_err_set(err, FS_EINVAL, "static: bad parameters");
  int32_t d = p->degree;
  for (int32_t k = 0; k < d; k++)
    if (strides[k] < 1 || strides[k] >= n)
      return fs_err_set(err, FS_EINVAL, "static: stride %d out of range [1, %d)", strides[k], n);
  int32_t *via = fs__malloc((size_t)n, sizeof(*via)); /* offset -> last stride index */
  int32_t *queue = fs__malloc((size_t)n, sizeof(*queue));
  double *load = fs__calloc((size_t)n * (size_t)d, sizeof(*load));
  int32_t *mult = fs__calloc((size_t)n, sizeof(*mult));
  int rc = 0;
  if (!via || !queue || !load || !mult) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  /* parallel OCSes with the same stride share that stride's traffic */
  for (int32_t k = 0; k < d; k++) mult[strides[k]]++;
  for (int32_t x = 0; x < n; x++) via[x] = -1;
  int32_t head = 0, tail = 0;
  via[0] = d;
  queue[tail++] = 0;
  while (head < tail) {
    int32_t x = queue[head++];
    for (int32_t k = 0; k < d; k++) {
      int32_t y = (x + strides[k]) % n;
      if (via[y] >= 0) continue;
      via[y] = k;
      queue[tail++] = y;
    }
  }
  double total = 0;
  int64_t L = 0;
  for (int32_t i = 0; i < n; i++) {
    int64_t r = 0, c = 0;
    for (int32_t j = 0; j < n; j++) {
      int64_t b = m[(size_t)i * n + j];
      r += b;
      c += m[(size_t)j * n + i];
      if (!b || i == j) continue;
      total += (double)b;
      int32_t off = (j - i + n) % n;
      if (via[off] < 0) {
        rc = fs_err_set(err, FS_EINVAL, "static: node %d cannot reach node %d on the strides", i,
                        j);
        goto out;
      }
      /* walk back from j: the hop into offset x came from x - stride */
      for (int32_t x = off; x != 0;) {
        int32_t k = via[x];
        int32_t from = (x - strides[k] + n) % n;
        int32_t node = (i + from) % n;
        load[(size_t)node * d + k] += (double)b / mult[strides[k]];
        x = from;
      }
    }
    if (r > L) L = r;
    if (c > L) L = c;
  }
  double maxload = 0;
  for (size_t x = 0; x < (size_t)n * d; x++)
    if (load[x] > maxload) maxload = load[x];
  double R = p->gbps * 1e9 / 8.0;
  memset(res, 0, sizeof(*res));
  res->completion_s = total > 0 ? p->delay_s + maxload / R : 0;
  res->schedule_s = res->completion_s;
  res->reconfig_s = total > 0 ? p->delay_s : 0;
  res->n_reconfig = total > 0 ? d : 0;
  res->lower_bound_s = (double)L / (R * d);
  res->delivered_bytes = total;
  res->circuit_bytes = total;
  res->util = total > 0 ? total / (R * n * d * res->completion_s) : 0;
out:
  FS__FREE_ALL(via, queue, load, mult);
  return rc;
}

static void add_result(fs_ocs_result *acc, const fs_ocs_result *r) {
  acc->completion_s += r->completion_s;
  acc->schedule_s += r->schedule_s;
  acc->reconfig_s += r->reconfig_s;
  acc->n_reconfig += r->n_reconfig;
  acc->lower_bound_s += r->lower_bound_s;
  acc->delivered_bytes += r->delivered_bytes;
  acc->undelivered_bytes += r->undelivered_bytes;
  acc->circuit_bytes += r->circuit_bytes;
  acc->eps_bytes += r->eps_bytes;
  acc->eps_busy_s += r->eps_busy_s;
  acc->n_to_eps += r->n_to_eps;
}

struct fs_ocs_plan {
  const fs_ocs_traffic *tr;
  int32_t degree;
  unsigned algos;
  fs_ocs_decomp *dc[2]; /* [algo][phase] for BVN, SOLSTICE */
  int32_t *strides;     /* degree */
};

void fs_ocs_plan_free(fs_ocs_plan *pl) {
  if (!pl) return;
  for (int a = 0; a < 2; a++) {
    if (!pl->dc[a]) continue;
    for (int32_t k = 0; k < pl->tr->n_phases; k++) fs_ocs_decomp_free(&pl->dc[a][k]);
    free(pl->dc[a]);
  }
  free(pl->strides);
  free(pl);
}

int fs_ocs_plan_new(const fs_ocs_traffic *tr, int32_t degree, unsigned algos, fs_ocs_plan **out,
                    fs_err *err) {
  *out = NULL;
  int32_t n = tr->n;
  if (n < 2 || n > FS_OCS_MAX_NODES || tr->n_phases < 1)
    return fs_err_set(err, FS_EINVAL, "ocs: a job needs 2..%d nodes and a phase",
                      FS_OCS_MAX_NODES);
  if (degree < 1 || degree > 64)
    return fs_err_set(err, FS_EINVAL, "ocs: degree must be in [1, 64], got %d", degree);
  size_t nn = (size_t)n * (size_t)n;
  fs_ocs_plan *pl = fs__calloc(1, sizeof(*pl));
  int64_t *buf = fs__calloc(nn, sizeof(*buf));
  if (!pl || !buf) {
    free(pl);
    free(buf);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  pl->tr = tr;
  pl->degree = degree;
  pl->algos = algos;
  int rc = 0;
  for (int a = 0; a < 2 && !rc; a++) {
    if (!(algos & (1u << a))) continue;
    if (!(pl->dc[a] = fs__calloc((size_t)tr->n_phases, sizeof(fs_ocs_decomp)))) {
      rc = fs_err_set(err, FS_ENOMEM, "out of memory");
      break;
    }
    for (int32_t k = 0; k < tr->n_phases && !rc; k++) {
      fs_ocs_stuff(n, tr->phases[k].bytes, buf);
      rc = fs_ocs_decompose((fs_ocs_algo)a, n, buf, &pl->dc[a][k], err);
    }
  }
  if (!rc && (algos & (1u << FS_OCS_STATIC))) {
    fs_ocs_params p = {1, 0, degree, 0, 0, 0, 0, 0};
    memset(buf, 0, nn * sizeof(*buf));
    for (int32_t k = 0; k < tr->n_phases; k++)
      for (size_t x = 0; x < nn; x++) buf[x] += tr->phases[k].bytes[x];
    if (!(pl->strides = fs__malloc((size_t)degree, sizeof(int32_t))))
      rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    else
      rc = fs_ocs_static_strides(&p, n, buf, pl->strides, err);
  }
  free(buf);
  if (rc) {
    fs_ocs_plan_free(pl);
    return rc;
  }
  *out = pl;
  return 0;
}

int fs_ocs_plan_run(const fs_ocs_plan *pl, const fs_ocs_params *p, fs_ocs_algo algo,
                    fs_ocs_result *res, fs_err *err) {
  memset(res, 0, sizeof(*res));
  if (algo < 0 || algo >= FS_OCS_N_ALGOS || !(pl->algos & (1u << algo)))
    return fs_err_set(err, FS_EINVAL, "ocs: algorithm %d not prepared in this plan", (int)algo);
  if (p->degree != pl->degree)
    return fs_err_set(err, FS_EINVAL, "ocs: plan made for degree %d, run with %d", pl->degree,
                      p->degree);
  const fs_ocs_traffic *tr = pl->tr;
  int rc = 0;
  fs_ocs_result r;
  if (algo == FS_OCS_STATIC && p->eps_gbps != 0)
    return fs_err_set(err, FS_EINVAL,
                      "ocs: the static configuration has no hybrid mode (EPS rate %g Gb/s); "
                      "run it with eps_gbps = 0",
                      p->eps_gbps);
  if (algo == FS_OCS_STATIC) {
    fs_ocs_params q = *p;
    for (int32_t k = 0; k < tr->n_phases; k++) {
      /* configured once, before the first phase that has traffic */
      if ((rc = fs_ocs_static_eval(&q, tr->n, pl->strides, tr->phases[k].bytes, &r, err)))
        return rc;
      if (r.n_reconfig > 0) q.delay_s = 0;
      if (res->n_reconfig > 0) r.n_reconfig = 0;
      add_result(res, &r);
    }
  } else {
    for (int32_t k = 0; k < tr->n_phases; k++) {
      fs_ocs_schedule sc;
      if ((rc = fs_ocs_schedule_from_decomp(p, &pl->dc[algo][k], &sc, err))) return rc;
      rc = fs_ocs_execute_hybrid(p, &sc, tr->phases[k].bytes, &r, NULL, NULL, NULL, err);
      fs_ocs_schedule_free(&sc);
      if (rc) return rc;
      if (p->eps_balance && r.n_to_eps > 0) {
        /* The balance rule estimates the EPS time by the closed form L_e / E;
         * the max-min shared EPS can be slower. Also run the whole schedule
         * (no cut, the EPS only spilling) and keep the phase's faster run:
         * that one is never slower than the pure OCS. */
        fs_ocs_params q = *p;
        q.eps_balance = 0;
        q.eps_threshold_s = 0;
        fs_ocs_result r0;
        if ((rc = fs_ocs_schedule_from_decomp(&q, &pl->dc[algo][k], &sc, err))) return rc;
        rc = fs_ocs_execute_hybrid(&q, &sc, tr->phases[k].bytes, &r0, NULL, NULL, NULL, err);
        fs_ocs_schedule_free(&sc);
        if (rc) return rc;
        if (r0.completion_s < r.completion_s) r = r0;
      }
      add_result(res, &r);
    }
  }
  if (res->completion_s > 0 && isfinite(res->completion_s)) {
    if (p->eps_gbps > 0) /* the EPS ports count as capacity too */
      res->util = res->delivered_bytes / ((p->gbps * p->degree + p->eps_gbps) * 1e9 / 8.0 * tr->n *
                                          res->completion_s);
    else
      res->util =
          res->delivered_bytes / (p->gbps * 1e9 / 8.0 * tr->n * p->degree * res->completion_s);
  }
  return 0;
}

int fs_ocs_run(const fs_ocs_params *p, fs_ocs_algo algo, const fs_ocs_traffic *tr,
               fs_ocs_result *res, fs_err *err) {
  memset(res, 0, sizeof(*res));
  if (algo < 0 || algo >= FS_OCS_N_ALGOS)
    return fs_err_set(err, FS_EINVAL, "ocs: unknown algorithm %d", (int)algo);
  fs_ocs_plan *pl;
  int rc = fs_ocs_plan_new(tr, p->degree, 1u << algo, &pl, err);
  if (rc) return rc;
  rc = fs_ocs_plan_run(pl, p, algo, res, err);
  fs_ocs_plan_free(pl);
  return rc;
}
