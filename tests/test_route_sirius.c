/* Sirius's cell-by-cell load balancing (spray on a sirius fabric,
 * docs/model.md "Optical fabrics"): the route's split, and the rates a
 * permutation gets against the direct slots, by hand. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fabricsim/route.h"
#include "fabricsim/sim.h"
#include "fabricsim/topo.h"
#include "test.h"
#include "topo_oracle.h"

TEST(test_route_sirius_spray_splits_over_every_node) {
  fs_topo *t = oracle_spec("sirius:hosts=6");
  fs_router *r = NULL;
  fs_err err = {0, ""};
  fs_route rt;
  fs_route_init(&rt);
  if (t) CHECK_OK(fs_router_new(t, &r, &err), &err);
  if (r) {
    CHECK_OK(fs_route_spray(r, 1, 4, &rt, &err), &err);
    /* up, direct, 4 thirds x 2 slots, down */
    CHECK_EQ_INT(rt.n, 11);
    CHECK_EQ_INT(rt.hops, 4);
    CHECK_REL(rt.n_paths, 5, 1e-12, "paths");
    /* what leaves node 1 and what reaches node 4 are the whole flow */
    double out = 0, in = 0;
    for (int32_t k = 0; k < rt.n; k++) {
      const fs_link *l = &t->links[rt.links[k]];
      if (l->from == 6 + 1) out += rt.weights[k];
      if (l->to == 6 + 4) in += rt.weights[k];
    }
    CHECK_REL(out, 1, 1e-12, "share");
    CHECK_REL(in, 1, 1e-12, "share");
  }
  fs_route_free(&rt);
  fs_router_free(r);
  fs_topo_free(t);
}

/* 16 nodes at 400 Gb/s, node i sends X to node i + 1. Direct slots: each
 * flow has its pair's 400 / 15 Gb/s. Spread cell by cell: a slot u -> v
 * carries 1/15 of u's flow (first hop or direct) and 1/15 of the flow into
 * v relayed by u, so each flow runs at 400 / 2 = 200 Gb/s. */
static double ring_makespan(const char *spec, int spray) {
  fs_topo *t = oracle_spec(spec);
  fs_router *r = NULL;
  fs_sim *s = NULL;
  fs_err err = {0, ""};
  fs_route rt;
  fs_route_init(&rt);
  double out = -1;
  if (!t || fs_router_new(t, &r, &err) || fs_sim_new(t, &s, &err)) goto done;
  for (int32_t i = 0; i < 16; i++) {
    int rc = spray ? fs_route_spray(r, i, (i + 1) % 16, &rt, &err)
                   : fs_route_by_mode(r, FS_ROUTE_MINIMAL, i, (i + 1) % 16, 1, 0, &rt, &err);
    if (rc || fs_sim_add_flow(s, i, (i + 1) % 16, 1.25e9, 0, &rt, &err) < 0) goto done;
  }
  if (fs_sim_run(s, NULL, &err)) goto done;
  out = fs_sim_makespan_s(s);
done:
  if (out < 0) fprintf(stderr, "  ring_makespan: %s\n", err.msg);
  fs_route_free(&rt);
  fs_sim_free(s);
  fs_router_free(r);
  fs_topo_free(t);
  return out;
}

TEST(test_route_sirius_spray_permutation_at_half_the_port) {
  const char *spec = "sirius:hosts=16,port_gbps=400,slot_ns=1,latency_ns=0";
  /* (plus 8 ns of slot wait a hop: within 1e-6) */
  CHECK_REL(ring_makespan(spec, 0), 1.25e9 * 8 / (400e9 / 15), 1e-6, "s");
  CHECK_REL(ring_makespan(spec, 1), 1.25e9 * 8 / 200e9, 1e-6, "s");
}
