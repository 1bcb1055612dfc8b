/* The built-in packet-level backend (fabricsim/packet.h; docs/model.md,
 * "The packet backend"): the ns-3 backend's set-up, packet by packet.
 *
 * The network is src/sim/pktnet.c; this file runs a scenario's items on
 * it: a flow begins there when its dependencies are done, a task ends
 * after its duration, both as the network's user events so that the one
 * clock orders them with the packets (time, then push order). */
#include "fabricsim/packet.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "../sim/pktnet.h"
#include "internal.h"

/* user events: an item begins, a task ends */
enum { EV_BEGIN, EV_TASK_DONE };

typedef struct run {
  const fs_scenario *sc;
  fs__pktnet *net;
  int32_t n_flows, n_items;
  /* items: deps (CSR of dependents), deps left, start, finish */
  int64_t *dep_off;
  int32_t *dep_to, *left;
  double *st, *fin;
} run;

static int item_done(run *r, int32_t it, double t);

/* When item `it` may start at the earliest (its start_ns), in s. */
static double start_of(const run *r, int32_t it) {
  return it < r->n_flows ? (double)r->sc->flows[it].start_ns * 1e-9
                         : (double)r->sc->tasks[it - r->n_flows].start_ns * 1e-9;
}

static int begin(run *r, int32_t it, double t) {
  r->st[it] = t;
  if (it >= r->n_flows) {
    const fs_scenario_task *tk = &r->sc->tasks[it - r->n_flows];
    return fs__pktnet_push_user(r->net, t + (double)tk->duration_ns * 1e-9, 2 * it + EV_TASK_DONE);
  }
  const int32_t *links;
  const double *w;
  int32_t n;
  fs_sim_flow_route(r->sc->sim, it, &links, &w, &n);
  double bytes = r->sc->flows[it].bytes;
  if (!(bytes > 0) || n == 0) return item_done(r, it, t);
  return fs__pktnet_begin(r->net, it, links, n, bytes, t);
}

static int item_done(run *r, int32_t it, double t) {
  r->fin[it] = t;
  for (int64_t k = r->dep_off[it]; k < r->dep_off[it + 1]; k++) {
    int32_t d = r->dep_to[k];
    if (--r->left[d] == 0) {
      double s0 = start_of(r, d);
      int rc = fs__pktnet_push_user(r->net, t > s0 ? t : s0, 2 * d + EV_BEGIN);
      if (rc) return rc;
    }
  }
  return 0;
}

static int on_user(void *ctx, int32_t a, double t) {
  run *r = ctx;
  return a % 2 == EV_BEGIN ? begin(r, a / 2, t) : item_done(r, a / 2, t);
}

static int on_done(void *ctx, int32_t id, double t) { return item_done(ctx, id, t); }

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

static void run_free(run *r) {
  fs__pktnet_free(r->net);
  FS__FREE_ALL(r->dep_off, r->dep_to, r->left, r->st, r->fin);
}

/* Paths checked and dependencies of sc into r. */
static int setup(run *r, const fs_scenario *sc, fs_err *err) {
  const fs_topo *t = sc->topo;
  const fs_sim *s = sc->sim;
  size_t N = (size_t)fs_sim_n_items(s);
  r->n_items = (int32_t)N;
  r->left = calloc(N + 1, sizeof(int32_t));
  r->dep_off = calloc(N + 2, sizeof(int64_t));
  r->st = fs__malloc(N + 1, sizeof(double));
  r->fin = fs__malloc(N + 1, sizeof(double));
  if (!r->left || !r->dep_off || !r->st || !r->fin)
    return fs_err_set(err, FS_ENOMEM, "%s: out of memory (packet backend)", sc->file);
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
    r->dep_off[a + 1]++;
    r->left[b]++;
  }
  for (size_t i = 0; i < N; i++) r->dep_off[i + 1] += r->dep_off[i];
  r->dep_to = fs__malloc((size_t)nd + 1, sizeof(int32_t));
  int64_t *fill = fs__malloc(N + 1, sizeof(int64_t));
  if (!r->dep_to || !fill) {
    free(fill);
    return fs_err_set(err, FS_ENOMEM, "%s: out of memory (packet backend)", sc->file);
  }
  memcpy(fill, r->dep_off, N * sizeof(int64_t));
  for (int64_t d = 0; d < nd; d++) {
    int32_t a, b;
    int sent;
    fs_sim_dep(s, d, &a, &b, &sent);
    r->dep_to[fill[a]++] = b;
  }
  free(fill);
  return 0;
}

int fs_packet_run(fs_scenario *sc, fs_err *err) {
  if (!sc->sim) return fs_err_set(err, FS_EINVAL, "%s: the packet backend needs a routed run", sc->file);
  int rc = fs_packet_check(sc, err);
  if (rc) return rc;
  run r;
  memset(&r, 0, sizeof(r));
  r.sc = sc;
  r.n_flows = sc->n_flows;
  double *busy = NULL;
  fs__pktnet_cfg cfg = {.t = sc->topo, .mss = sc->transport.mss_bytes,
                        .hdr = sc->transport.header_bytes, .k100 = sc->transport.queue_k,
                        .syn_bytes = fs__pktnet_syn_bytes(sc->transport.header_bytes),
                        .init_window = sc->transport.init_window,
                        .persistent = sc->transport.persistent,
                        .roce = sc->transport.kind == FS_TRANSPORT_RDMA,
                        .dcqcn = sc->transport.dcqcn_prm, .ctx = &r, .user = on_user,
                        .done = on_done};
  if ((rc = setup(&r, sc, err))) goto done;
  if (fs__pktnet_new(&cfg, &r.net)) {
    rc = fs_err_set(err, FS_ENOMEM, "%s: out of memory (packet backend)", sc->file);
    goto done;
  }
  for (int32_t it = 0; it < r.n_items; it++) {
    r.st[it] = r.fin[it] = -1;
    if (r.left[it]) continue;
    if ((rc = fs__pktnet_push_user(r.net, start_of(&r, it), 2 * it + EV_BEGIN))) break;
  }
  while (!rc && fs__pktnet_next_t(r.net) < INFINITY) rc = fs__pktnet_step(r.net);
  if (rc) {
    rc = fs_err_set(err, rc, "%s: out of memory (packet backend)", sc->file);
    goto done;
  }
  for (int32_t it = 0; it < r.n_items; it++)
    if (r.fin[it] < 0) {
      rc = fs_err_set(err, FS_EINVAL,
                      "%s: item %d never ran in the packet backend (a dependency cycle?)",
                      sc->file, it);
      goto done;
    }
  busy = fs__malloc((size_t)sc->topo->n_links + 1, sizeof(double));
  if (!busy || fs__scenario_busy_times(sc, r.st, r.fin, busy)) {
    rc = fs_err_set(err, FS_ENOMEM, "%s: out of memory (packet backend)", sc->file);
    goto done;
  }
  rc = fs_sim_replace_times(sc->sim, r.st, r.fin, busy, err);
done:
  free(busy);
  run_free(&r);
  return rc;
}
