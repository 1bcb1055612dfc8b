/* The built-in packet-level backend (fabricsim/packet.h; docs/model.md,
 * "The packet backend"): the ns-3 backend's set-up, packet by packet.
 *
 * This file holds the backend's rules on a scenario (tcp or rdma, one path
 * per flow, dependencies on items done) and its messages; sim runs the
 * routed items on its packet network (fs_sim_packet_times, src/sim/
 * pktrun.c) and the times found there replace the fluid run's. */
#include "fabricsim/packet.h"

#include <stdint.h>
#include <stdlib.h>

#include "../base/base.h"
#include "internal.h"

int fs_packet_check(const fs_scenario *sc, fs_err *err) {
  if (sc->transport.kind == FS_TRANSPORT_FLUID)
    return fs_err_set(err, FS_EINVAL,
                      "%s: $.transport.kind: the packet backend runs tcp (DCTCP) or rdma (RoCEv2 "
                      "under DCQCN), got \"fluid\" (give --transport tcp or rdma)",
                      sc->file);
  int rc = fs__scenario_single_path_check(sc, "the packet backend", err);
  if (rc) return rc;
  if (sc->transport.kind == FS_TRANSPORT_TCP && !(sc->transport.queue_k > 0))
    return fs_err_set(err, FS_EINVAL,
                      "%s: $.transport.queue_k: the packet backend's switch ports mark ECN at K > 0 "
                      "packets, got %g",
                      sc->file, sc->transport.queue_k);
  return 0;
}

/* The backend's rules on sc's routed items: each flow with bytes on one
 * path whose links have reverses, every dependency on items done. */
static int check_items(const fs_scenario *sc, fs_err *err) {
  const fs_topo *t = sc->topo;
  const fs_sim *s = sc->sim;
  for (int32_t i = 0; i < sc->n_flows; i++) {
    const int32_t *links;
    const double *w;
    int32_t n;
    fs_sim_flow_route(s, i, &links, &w, &n);
    int rc = sc->flows[i].bytes > 0 ? fs__scenario_flow_single_path(sc, i, "the packet backend", err)
                                    : 0;
    if (rc) return rc;
    for (int32_t k = 0; k < n; k++)
      if (t->links[links[k]].reverse < 0)
        return fs_err_set(err, FS_EINVAL,
                          "%s: $.flows[%d]: link %d of its path has no reverse for the ACKs",
                          sc->file, i, links[k]);
  }
  int64_t nd = fs_sim_n_deps(s);
  for (int64_t d = 0; d < nd; d++) {
    int32_t a, b;
    int sent;
    fs_sim_dep(s, d, &a, &b, &sent);
    if (sent)
      return fs_err_set(err, FS_EINVAL,
                        "%s: dependency of item %d on item %d: the packet backend starts an item "
                        "when those before it are done, not when their bytes are sent",
                        sc->file, b, a);
  }
  return 0;
}

int fs_packet_run(fs_scenario *sc, fs_err *err) {
  if (!sc->sim) return fs_err_set(err, FS_EINVAL, "%s: the packet backend needs a routed run", sc->file);
  int rc = fs_packet_check(sc, err);
  if (rc) return rc;
  size_t N = (size_t)fs_sim_n_items(sc->sim);
  double *st = fs__malloc(N + 1, sizeof(double)), *fin = fs__malloc(N + 1, sizeof(double));
  double *busy = fs__malloc((size_t)sc->topo->n_links + 1, sizeof(double));
  if (!st || !fin || !busy) {
    rc = fs_err_set(err, FS_ENOMEM, "%s: out of memory (packet backend)", sc->file);
    goto done;
  }
  if ((rc = check_items(sc, err))) goto done;
  if ((rc = fs_sim_packet_times(sc->sim, &sc->transport, st, fin))) {
    rc = fs_err_set(err, rc, "%s: out of memory (packet backend)", sc->file);
    goto done;
  }
  for (size_t it = 0; it < N; it++)
    if (fin[it] < 0) {
      rc = fs_err_set(err, FS_EINVAL,
                      "%s: item %zu never ran in the packet backend (a dependency cycle?)",
                      sc->file, it);
      goto done;
    }
  if (fs__scenario_busy_times(sc, st, fin, busy)) {
    rc = fs_err_set(err, FS_ENOMEM, "%s: out of memory (packet backend)", sc->file);
    goto done;
  }
  rc = fs_sim_replace_times(sc->sim, st, fin, busy, err);
done:
  FS__FREE_ALL(st, fin, busy);
  return rc;
}
