/* Using fabricsim as a library: an incast on a leaf-spine, then a ring
 * all-reduce on the same fabric.
 *
 *   cc -std=c11 -o api examples/api.c $(pkg-config --cflags --libs fabricsim)
 *
 * (`make api-check` installs into build/api-prefix and builds this.) */
#include <stdio.h>

#include "fabricsim/coll.h"
#include "fabricsim/route.h"
#include "fabricsim/sim.h"
#include "fabricsim/topo.h"

int main(void) {
  fs_err err = {0, ""};
  fs_topo *t = NULL;
  fs_router *r = NULL;
  fs_sim *s = NULL;
  /* 4 leaves of 4 hosts, 2 spines, 100 Gb/s everywhere, 1 us per link */
  fs_leafspine_params p = {4, 2, 4, 100, 100, 1, 1000};
  if (fs_topo_leafspine(&p, &t, &err) || fs_router_new(t, &r, &err) ||
      fs_sim_new(t, &s, &err)) {
    fprintf(stderr, "api: %s\n", err.msg);
    return 1;
  }
  /* hosts 4..7 each send 16 MiB to host 0 */
  fs_route route;
  fs_route_init(&route);
  for (int32_t src = 4; src < 8; src++)
    if (fs_route_ecmp(r, src, 0, 1, (uint64_t)src, &route, &err) ||
        fs_sim_add_flow(s, src, 0, 16.0 * 1048576, 0, &route, &err) < 0) {
      fprintf(stderr, "api: %s\n", err.msg);
      return 1;
    }
  fs_route_free(&route);
  if (fs_sim_run(s, NULL, &err)) {
    fprintf(stderr, "api: %s\n", err.msg);
    return 1;
  }
  printf("incast 4 x 16 MiB -> host 0: %.3f us (closed form %.3f us)\n",
         fs_sim_makespan_s(s) * 1e6, (4 * 16.0 * 1048576 * 8 / 100e9 + 4e-6) * 1e6);

  int32_t hosts[16];
  for (int32_t i = 0; i < 16; i++) hosts[i] = i;
  fs_coll_group g = {16, hosts};
  fs_coll_params prm;
  fs_coll_params_init(&prm);
  prm.op = FS_COLL_ALLREDUCE;
  prm.algo = FS_ALGO_RING;
  prm.bytes = 64.0 * 1048576;
  fs_coll_result res;
  if (fs_coll_run(t, FS_ROUTE_ECMP, 1, &prm, &g, &res, &err)) {
    fprintf(stderr, "api: %s\n", err.msg);
    return 1;
  }
  printf("ring all-reduce of 64 MiB on 16 hosts: %.3f us, %lld flows\n", res.time_s * 1e6,
         (long long)res.flows);
  fs_sim_free(s);
  fs_router_free(r);
  fs_topo_free(t);
  return 0;
}
