/* The symmetries of a training iteration (docs/model-alltraffic.md,
 * docs/model-symm.md): rail rotation and replica shift, checked against the
 * topology's automorphisms and the routing, and the quotient routes the
 * simulated flows take. Costs: one fs_symm_new (link by link) per build. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "train_internal.h"

fs_route_cache *fs__train_shared_routes(const fs_train *tr) {
  return tr->job->mode == FS_ROUTE_SPRAY || tr->job->mode == FS_ROUTE_SHORTEST ? tr->routes : NULL;
}

/* Route transform of the symmetric quotient: every simulated flow stands
 * for its orbit of tr->orbit flows (the group acts freely on them). */
static int quotient_route(void *ctx, const fs_route *in, fs_route *out, fs_err *err) {
  const fs_train *tr = ctx;
  return fs_symm_quotient_route(tr->symm, in, tr->orbit, out, err);
}

static void symm_refuse(fs_train *tr, const char *why) {
  snprintf(tr->symm_note, sizeof(tr->symm_note), "%s", why);
}

/* perm[host] = its image when every GPU of the job moves rot TP ranks and
 * shift data-parallel ranks on (mod tp, dp); hosts outside the job stay. */
static void lane_perm(const fs_train *tr, int32_t rot, int32_t shift, int32_t *perm) {
  for (int32_t h = 0; h < tr->job->topo->n_hosts; h++) perm[h] = h;
  for (int32_t s = 0; s < tr->p; s++)
    for (int32_t r = 0; r < tr->d; r++)
      for (int32_t q = 0; q < tr->t * tr->c; q++) {
        int32_t q2 = q - q % tr->t + (q % tr->t + rot) % tr->t;
        perm[host_lane(tr, q, r, s)] = host_lane(tr, q2, (r + shift) % tr->d, s);
      }
}

int fs__train_symm_setup(fs_train *tr, int shared, fs_err *err) {
  const fs_job *job = tr->job;
  tr->lane_step = 1;
  tr->rails = tr->t;
  tr->ds = tr->d;
  tr->shift_g = 0;
  tr->orbit = 1;
  tr->symm_note[0] = '\0';
  if ((tr->t < 2 && tr->d < 2) || tr->opts.free_comm || tr->fabric_free) return 0;
  if (tr->opts.no_symmetry) return symm_refuse(tr, "off (--no-symmetry)"), 0;
  if (job->mode != FS_ROUTE_SPRAY)
    return symm_refuse(tr, "refused: routing is not spray (per-flow hashing breaks it)"), 0;
  if (shared) return symm_refuse(tr, "refused: several jobs share the cluster"), 0;
  /* a transport model times each flow by its expanded route (kept by the
   * route cache) and keeps each link orbit's queues and flow counts at its
   * representative (fs_sim_set_symmetry) */
  if (job->reopt_interval_s > 0 || job->n_failures > 0)
    return symm_refuse(tr, "refused: routing control or failures"), 0;
  if (job->ocs.ports > 0) return symm_refuse(tr, "refused: an OCS layer moves flows"), 0;
  const fs_topo *t = job->topo;
  /* with TP lowered as flows, R maps each TP collective onto itself (a
   * shift of one rank), so only its representatives are kept (qcoll.h) */
  int use_r = tr->t >= 2 && !tr->no_rotation;
  int32_t *perm_r = fs__malloc((size_t)t->n_hosts, sizeof(int32_t));
  int32_t *perm_s = fs__malloc((size_t)t->n_hosts, sizeof(int32_t));
  if (!perm_r || !perm_s) {
    free(perm_r);
    free(perm_s);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  lane_perm(tr, 1, 0, perm_r);
  fs_err why = {0, ""};
  char note[240] = "";
  int rc = FS_EINVAL;
  int32_t ep = (int32_t)job->par.ep, g = 0;
  /* The smallest replica shift the topology allows (with R if used). */
  /* (ZeRO++'s hpZ gathers inside each server: no replica shift claimed) */
  for (int32_t cand = ep; !tr->opts.no_replica_shift && !job->par.zpp_hpz && cand < tr->d;
       cand += ep) {
    if (tr->d % cand || cand <= tr->min_shift) continue;
    lane_perm(tr, 0, cand, perm_s);
    const int32_t *gens[2] = {perm_s, perm_r};
    rc = fs_symm_new(t, gens, use_r ? 2 : 1, &tr->symm, &why);
    if (rc == FS_ENOMEM) break;
    if (!rc) {
      g = cand;
      break;
    }
  }
  if (!g && rc != FS_ENOMEM && use_r) {
    const int32_t *gens[1] = {perm_r};
    rc = fs_symm_new(t, gens, 1, &tr->symm, &why);
  }
  free(perm_r);
  free(perm_s);
  if (rc == FS_ENOMEM) return fs_err_set(err, rc, "%s", why.msg);
  if (rc || (!g && !use_r)) {
    /* (why is empty when no generator was tried: no shift candidate, no R) */
    snprintf(note, sizeof(note), "refused: %.200s",
             rc && why.msg[0] ? why.msg
             : use_r          ? "TP collectives are lowered as flows and no replica shift fits"
                              : "no replica shift fits (data-parallel ranks / ep) and tp is 1");
    return symm_refuse(tr, note), 0;
  }
  /* The routes need no check: symmetry is only claimed under spray, whose
   * routes are equivariant under every automorphism fs_symm_new verified
   * (a link's weight counts the shortest paths through it, its latency is
   * the longest path's: docs/model-symm.md; tests/test_symm.c checks it
   * over every host pair of the builders' fabrics). */
  if (use_r) {
    tr->lane_step = tr->t;
    tr->rails = 1;
    tr->orbit *= tr->t;
  }
  if (g) {
    tr->shift_g = g;
    tr->ds = g;
    tr->orbit *= tr->d / g;
  }
  fs_route_cache_set_transform(tr->routes, quotient_route, tr);
  /* (the links' statistics then read as the expanded run's, for reports) */
  if (tr->job->transport.kind != FS_TRANSPORT_FLUID)
    fs_route_cache_keep_expanded(tr->routes); /* what the transport times */
  return fs_sim_set_symmetry(tr->sim, tr->symm, err);
}
