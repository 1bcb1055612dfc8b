/* Shared harness of the collective tests (coll_harness.h): one router, sim
 * and tracker per run, freed before returning; the flow log walks the
 * lowering's items once, O(items). Runs are small (p <= a few hundred). */
#include "coll_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/coll/internal.h"

/* Copies the collective's flows (items first_item .. +n_items) into out->log. */
static void log_flows(const fs_topo *t, const fs_sim *s, const fs_coll_lowering *l,
                      coll_run *out) {
  out->log_n = 0;
  for (int32_t it = l->first_item; out->log && it < l->first_item + l->n_items; it++) {
    if (fs_sim_item_kind(s, it) != FS_ITEM_FLOW) continue;
    const int32_t *links;
    const double *w;
    int32_t n;
    fs_sim_flow_route(s, it, &links, &w, &n);
    if (out->log_n < out->log_cap)
      out->log[out->log_n] = (coll_flow){t->links[links[0]].from, t->links[links[n - 1]].to,
                                         fs_sim_start_s(s, it), fs_sim_flow_bytes(s, it)};
    out->log_n++;
  }
}

int coll_run_on(const fs_topo *t, const fs__coll_algo_impl *im, const fs_coll_params *prm,
                const int32_t *hosts, int32_t p, coll_run *out, fs_err *err) {
  fs_router *r = NULL;
  fs_sim *s = NULL;
  fs_coll_tracker *tr = NULL;
  int rc = fs_router_new(t, &r, err);
  if (!rc) rc = fs_sim_new(t, &s, err);
  if (!rc) rc = fs_coll_tracker_new(&tr, err);
  if (!rc) {
    fs_coll_group g = {p, hosts};
    fs_coll_lowering l;
    memset(&l, 0, sizeof(l));
    l.sim = s;
    l.router = r;
    l.mode = FS_ROUTE_SHORTEST;
    l.seed = 1; /* unused by shortest-path routing */
    l.track = p <= COLL_RUN_MAX_TRACKED ? tr : NULL;
    rc = im ? fs__coll_lower_impl(im, prm, &g, &l, err) : fs_coll_lower(prm, &g, &l, err);
    if (!rc) rc = fs_sim_run(s, NULL, err);
    if (!rc) {
      fs_err verr = {0, ""};
      out->time_s = fs_sim_finish_s(s, l.done);
      out->flows = l.n_flows;
      out->verified = l.track ? fs_coll_verify(tr, s, out->recv, &verr) : 0;
      snprintf(out->why, sizeof(out->why), "%s", verr.msg);
      log_flows(t, s, &l, out);
    }
  }
  fs_coll_tracker_free(tr);
  fs_sim_free(s);
  fs_router_free(r);
  return rc;
}

int coll_run_star(const coll_star *star, const fs__coll_algo_impl *im,
                  const fs_coll_params *prm, int32_t p, coll_run *out, fs_err *err) {
  fs_topo *t = NULL;
  int32_t *hosts = malloc((size_t)(p > 0 ? p : 1) * sizeof(*hosts));
  if (!hosts) return fs_err_set(err, FS_ENOMEM, "out of memory for %d hosts", p);
  int rc = fs_topo_star(p, star->gbps, star->latency_ns, &t, err);
  if (!rc && star->sw == COLL_SWITCH_INC && fs_topo_mark_inc(t, "all"))
    rc = fs_err_set(err, FS_EINVAL, "cannot mark the star's switch inc-capable");
  if (!rc) {
    for (int32_t i = 0; i < p; i++) hosts[i] = i;
    rc = coll_run_on(t, im, prm, hosts, p, out, err);
  }
  fs_topo_free(t);
  free(hosts);
  return rc;
}

double coll_zero_model(const fs_coll_params *prm, int32_t p, int32_t chunks,
                       const fs_coll_cost *cost) {
  (void)prm, (void)p, (void)chunks, (void)cost;
  return 0;
}
