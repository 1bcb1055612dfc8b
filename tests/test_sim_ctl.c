/* The engine under a changing network: re-routing flows in flight (with a
 * reconfiguration hold), link failures, timers. Closed forms by hand on a
 * 2-leaf, 2-spine leaf-spine of 100 Gb/s links without latency, where a
 * flow alone drains 12.5 GB/s and two sharing a link 6.25 GB/s each. */
#include <string.h>

#include "fabricsim/sim.h"
#include "test.h"

#define CAP 12.5e9 /* bytes/s */
#define X 1.25e9   /* bytes: 0.1 s alone */

typedef struct net {
  fs_topo *t;
  fs_router *r;
  int32_t leaf[2], spine[2];
} net;

static void net_init(net *n) {
  fs_leafspine_params p = {2, 2, 2, 100, 100, 1, 0};
  fs_err err = {0, ""};
  memset(n, 0, sizeof(*n));
  CHECK_OK(fs_topo_leafspine(&p, &n->t, &err), &err);
  CHECK_OK(fs_router_new(n->t, &n->r, &err), &err);
  int32_t nl = 0, ns = 0;
  for (int32_t v = 0; v < n->t->n_nodes; v++) {
    if (n->t->nodes[v].kind != FS_NODE_SWITCH) continue;
    if (n->t->nodes[v].tier == 1 && nl < 2) n->leaf[nl++] = v;
    if (n->t->nodes[v].tier == 2 && ns < 2) n->spine[ns++] = v;
  }
  CHECK_EQ_INT(nl, 2);
  CHECK_EQ_INT(ns, 2);
}

static void net_free(net *n) {
  fs_router_free(n->r);
  fs_topo_free(n->t);
}

/* Host h (0, 1 on leaf 0; 2, 3 on leaf 1) to host g through spine sp. */
static void via(net *n, int32_t h, int32_t g, int sp, fs_route *out) {
  int32_t nodes[5] = {h, n->leaf[h / 2], n->spine[sp], n->leaf[g / 2], g};
  fs_err err = {0, ""};
  CHECK_OK(fs_route_explicit(n->r, nodes, 5, out, &err), &err);
}

static int32_t link_between(const fs_topo *t, int32_t a, int32_t b) {
  for (int32_t l = 0; l < t->n_links; l++)
    if (t->links[l].from == a && t->links[l].to == b) return l;
  return -1;
}

typedef struct ctl {
  net *n;
  int32_t item;
  fs_route route;
  double hold_s;
  int fail_link; /* >= 0: fail this cable (both directions) instead */
} ctl;

static int do_reroute(void *ctx, fs_sim *s, double now, fs_err *err) {
  (void)now;
  ctl *c = ctx;
  int rc = fs_sim_reroute(s, c->item, &c->route, c->hold_s, err);
  return rc < 0 ? rc : 0;
}

static int do_fail(void *ctx, fs_sim *s, double now, fs_err *err) {
  (void)now;
  ctl *c = ctx;
  int rc = fs_sim_set_link_capacity(s, c->fail_link, 0, err);
  if (!rc) rc = fs_sim_set_link_capacity(s, c->n->t->links[c->fail_link].reverse, 0, err);
  return rc;
}

/* Two flows share spine 0 until the second moves to spine 1 at 50 ms,
 * paying a 10 ms hold: A then runs alone, B resumes 10 ms later. */
TEST(test_sim_reroute_in_flight_closed_form) {
  net n;
  net_init(&n);
  fs_err err = {0, ""};
  fs_sim *s;
  CHECK_OK(fs_sim_new(n.t, &s, &err), &err);
  fs_route r;
  fs_route_init(&r);
  via(&n, 0, 2, 0, &r);
  int32_t a = fs_sim_add_flow(s, 0, 2, X, 0, &r, &err);
  via(&n, 1, 3, 0, &r);
  int32_t b = fs_sim_add_flow(s, 1, 3, X, 0, &r, &err);
  ctl c = {&n, b, {0}, 0.010, -1};
  fs_route_init(&c.route);
  via(&n, 1, 3, 1, &c.route);
  CHECK_OK(fs_sim_add_timer(s, 0.050, do_reroute, &c, &err), &err);
  CHECK_OK(fs_sim_run(s, NULL, &err), &err);
  double sent = 0.050 * CAP / 2; /* each, while sharing */
  CHECK_REL(fs_sim_finish_s(s, a), 0.050 + (X - sent) / CAP, 1e-12, "s");
  CHECK_REL(fs_sim_finish_s(s, b), 0.050 + 0.010 + (X - sent) / CAP, 1e-12, "s");
  const fs_sim_link_stats *ls = fs_sim_links(s);
  CHECK_REL(ls[link_between(n.t, n.leaf[0], n.spine[0])].bytes, X + sent, 1e-12, "B");
  CHECK_REL(ls[link_between(n.t, n.leaf[0], n.spine[1])].bytes, X - sent, 1e-12, "B");
  /* The flow's route is the new one afterwards. */
  const int32_t *links;
  const double *w;
  int32_t nl;
  fs_sim_flow_route(s, b, &links, &w, &nl);
  CHECK_EQ_INT(links[1], link_between(n.t, n.leaf[0], n.spine[1]));
  fs_route_free(&c.route);
  fs_route_free(&r);
  fs_sim_free(s);
  net_free(&n);
}

/* A flow alone loses its spine at 20 ms and is re-routed at 50 ms: it
 * stands still for 30 ms. Without the re-route the run reports a stall. */
TEST(test_sim_link_failure_then_reroute) {
  /* fluid (the closed form), then rdma with and without DCQCN: under
   * DCQCN a flow over a failed link sends nothing either, so with no queue
   * anywhere it finishes when the ideal rdma flow does */
  double rdma_fin[2] = {0, 0};
  for (int mode = 0; mode < 3; mode++)
  for (int reroute = 0; reroute < 2; reroute++) {
    net n;
    net_init(&n);
    fs_err err = {0, ""};
    fs_sim *s;
    CHECK_OK(fs_sim_new(n.t, &s, &err), &err);
    if (mode > 0) {
      fs_transport tp;
      fs_transport_defaults(FS_TRANSPORT_RDMA, &tp);
      tp.dcqcn = mode == 2;
      CHECK_OK(fs_sim_set_transport(s, &tp, &err), &err);
    }
    fs_route r;
    fs_route_init(&r);
    via(&n, 0, 2, 0, &r);
    int32_t a = fs_sim_add_flow(s, 0, 2, X, 0, &r, &err);
    ctl f = {&n, a, {0}, 0, link_between(n.t, n.spine[0], n.leaf[1])};
    ctl c = {&n, a, {0}, 0, -1};
    fs_route_init(&f.route);
    fs_route_init(&c.route);
    via(&n, 0, 2, 1, &c.route);
    CHECK_OK(fs_sim_add_timer(s, 0.020, do_fail, &f, &err), &err);
    if (reroute) CHECK_OK(fs_sim_add_timer(s, 0.050, do_reroute, &c, &err), &err);
    int rc = fs_sim_run(s, NULL, &err);
    if (reroute) {
      CHECK_EQ_INT(rc, 0);
      if (mode == 0) CHECK_REL(fs_sim_finish_s(s, a), X / CAP + 0.030, 1e-12, "s");
      else rdma_fin[mode - 1] = fs_sim_finish_s(s, a);
      CHECK_REL(fs_sim_link_capacity_bps(s, f.fail_link), 0, 1e-12, "bps");
    } else {
      CHECK_EQ_INT(rc, FS_EINVAL);
      CHECK(strstr(err.msg, "stalled") != NULL);
      CHECK(strstr(err.msg, "no capacity") != NULL);
    }
    fs_route_free(&c.route);
    fs_route_free(&f.route);
    fs_route_free(&r);
    fs_sim_free(s);
    net_free(&n);
  }
  CHECK(rdma_fin[0] > X / CAP + 0.030);
  CHECK_REL(rdma_fin[1], rdma_fin[0], 1e-9, "s (rdma under DCQCN)");
}

/* A flow re-routed before it starts runs entirely on the new route; a
 * re-route after it finished changes nothing. */
TEST(test_sim_reroute_before_start_and_after_end) {
  net n;
  net_init(&n);
  fs_err err = {0, ""};
  fs_sim *s;
  CHECK_OK(fs_sim_new(n.t, &s, &err), &err);
  fs_route r;
  fs_route_init(&r);
  via(&n, 0, 2, 0, &r);
  int32_t a = fs_sim_add_flow(s, 0, 2, X, 10000000, &r, &err); /* starts at 10 ms */
  via(&n, 1, 3, 0, &r);
  int32_t b = fs_sim_add_flow(s, 1, 3, X, 0, &r, &err);
  CHECK(b >= 0);
  ctl early = {&n, a, {0}, 0.5 /* hold: only for flows in flight */, -1};
  ctl late = {&n, a, {0}, 0, -1};
  fs_route_init(&early.route);
  fs_route_init(&late.route);
  via(&n, 0, 2, 1, &early.route);
  via(&n, 0, 2, 0, &late.route);
  CHECK_OK(fs_sim_add_timer(s, 0.0, do_reroute, &early, &err), &err);
  CHECK_OK(fs_sim_add_timer(s, 0.5, do_reroute, &late, &err), &err);
  CHECK_OK(fs_sim_run(s, NULL, &err), &err);
  CHECK_REL(fs_sim_finish_s(s, a), 0.010 + X / CAP, 1e-12, "s");
  const fs_sim_link_stats *ls = fs_sim_links(s);
  CHECK_REL(ls[link_between(n.t, n.leaf[0], n.spine[1])].bytes, X, 1e-12, "B");
  CHECK_EQ_INT(fs_sim_n_started(s), 2);
  CHECK_EQ_INT(fs_sim_started_flow(s, 0), 1); /* b started first */
  fs_route_free(&early.route);
  fs_route_free(&late.route);
  fs_route_free(&r);
  fs_sim_free(s);
  net_free(&n);
}
