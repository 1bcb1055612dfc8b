/* The OCS layer during a run (ocsctl.h): a circuit takes its share of a
 * pair's flows, a reconfiguration is taken when it pays and declined when
 * it costs more than it saves, and train jobs run with the layer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim/ocsctl.h"
#include "fabricsim/train.h"
#include "test.h"

#define X 1.25e9 /* bytes: 0.1 s at 100 Gb/s */

/* leaves x 1 host, one spine; hosts at 400 Gb/s, the spine's links at
 * 100 Gb/s; no latency. Phase 1: n1 flows host 0 -> host 1 at time 0;
 * phase 2: n2 flows host 0 -> host 2 once all of phase 1 is done. With
 * o (ports > 0) an OCS layer of 100 Gb/s circuits. Returns the makespan
 * or -1. */
static double phases_run(int32_t leaves, int n1, int n2, const fs_ocsctl_opts *o,
                         fs_ocsctl_stats *st) {
  fs_leafspine_params p = {leaves, 1, 1, 400, 100, 1, 0};
  fs_topo *t = NULL, *T = NULL;
  fs_router *r = NULL;
  fs_sim *s = NULL;
  fs_ocsctl *c = NULL;
  fs_err err = {0, ""};
  fs_route rt;
  fs_route_init(&rt);
  double out = -1;
  int32_t first[64];
  if (fs_topo_leafspine(&p, &t, &err) || fs_router_new(t, &r, &err)) goto done;
  if (o && fs_ocsctl_topo(t, o, &T, &err)) goto done;
  if (fs_sim_new(o ? T : t, &s, &err)) goto done;
  for (int i = 0; i < n1; i++) {
    if (fs_route_shortest(r, 0, 1, &rt, &err)) goto done;
    if ((first[i] = fs_sim_add_flow(s, 0, 1, X, 0, &rt, &err)) < 0) goto done;
  }
  for (int i = 0; i < n2; i++) {
    if (fs_route_shortest(r, 0, 2 % leaves, &rt, &err)) goto done;
    int32_t f = fs_sim_add_flow(s, 0, 2 % leaves, X, 0, &rt, &err);
    if (f < 0) goto done;
    for (int k = 0; k < n1; k++)
      if (fs_sim_add_dep(s, first[k], f, &err)) goto done;
  }
  if (o && fs_ocsctl_new(s, t->n_links, o, &c, &err)) goto done;
  if (fs_sim_run(s, NULL, &err)) goto done;
  out = fs_sim_makespan_s(s);
  if (c && st) fs_ocsctl_stats_get(c, st);
done:
  if (out < 0) fprintf(stderr, "  phases_run: %s\n", err.msg);
  fs_ocsctl_free(c);
  fs_route_free(&rt);
  fs_sim_free(s);
  fs_router_free(r);
  fs_topo_free(T);
  fs_topo_free(t);
  return out;
}

static void ocs_opts(fs_ocsctl_opts *o, fs_ocsctl_policy policy, double reconfig_s) {
  fs_ocsctl_opts_init(o);
  o->ports = 1;
  o->gbps = 100;
  o->latency_ns = 0;
  o->policy = policy;
  o->reconfig_s = reconfig_s;
  o->interval_s = 0.01;
}

/* Two flows between two leaves: alone on the 100 Gb/s spine they share it
 * (0.2 s); a 100 Gb/s circuit takes half the pair's flows (its capacity
 * against the electrical path's), so each runs at 100 Gb/s: 0.1 s. */
TEST(test_ocsctl_circuit_takes_its_share) {
  CHECK_REL(phases_run(2, 2, 0, NULL, NULL), 2 * X / 12.5e9, 1e-12, "s");
  fs_ocsctl_opts o;
  ocs_opts(&o, FS_OCSCTL_STATIC, 0);
  fs_ocsctl_stats st;
  CHECK_REL(phases_run(2, 2, 0, &o, &st), X / 12.5e9, 1e-12, "s");
  CHECK_EQ_INT(st.circuits_initial, 1);
  CHECK_EQ_INT(st.reconfigs, 0);
  CHECK_REL(st.circuit_bytes, X, 1e-12, "B");
  CHECK_REL(st.flow_bytes, 2 * X, 1e-12, "B");
}

/* Three leaves, one port each: the static configuration can join leaf 0 to
 * leaf 1 or to leaf 2, not both (equal bytes: the lower pair wins). Phase
 * 1 (4 flows to leaf 1) rides it: 2 on the circuit, 2 on the spine, 0.2 s.
 * Phase 2 (4 flows to leaf 2) has only the spine: 0.4 s more. Adaptive
 * with a 1 ms switch moves the circuit to leaf 2 at the first decision in
 * phase 2 (keeping it costs 0.4 s, moving it 1 ms + 0.2 s): it cannot beat
 * 0.2 s for phase 2 (4X over 200 Gb/s) and gains at least 0.15 s. With a
 * 10 s switch the same change is declined and the run is the static one. */
TEST(test_ocsctl_reconfigures_only_when_it_pays) {
  fs_ocsctl_opts o;
  fs_ocsctl_stats st;
  ocs_opts(&o, FS_OCSCTL_STATIC, 0);
  double stat = phases_run(3, 4, 4, &o, &st);
  CHECK_REL(stat, 0.2 + 0.4, 1e-9, "s");
  CHECK_EQ_INT(st.circuits_initial, 1);
  ocs_opts(&o, FS_OCSCTL_ADAPTIVE, 1e-3);
  double fast = phases_run(3, 4, 4, &o, &st);
  CHECK(st.reconfigs >= 1);
  CHECK(st.circuits_set >= 1);
  CHECK(fast >= 0.2 + 0.2 - 1e-9);
  CHECK(fast <= stat - 0.15);
  ocs_opts(&o, FS_OCSCTL_ADAPTIVE, 10);
  double slow = phases_run(3, 4, 4, &o, &st);
  CHECK_EQ_INT(st.reconfigs, 0);
  CHECK(st.declined >= 1);
  CHECK_REL(slow, stat, 1e-12, "s");
}

/* The layer's links: one cable per leaf pair after the topology's own,
 * which keep their ids. */
TEST(test_ocsctl_topo_appends_a_cable_per_leaf_pair) {
  fs_leafspine_params p = {5, 2, 3, 100, 100, 1, 1000};
  fs_topo *t = NULL, *T = NULL;
  fs_err err = {0, ""};
  fs_ocsctl_opts o;
  ocs_opts(&o, FS_OCSCTL_STATIC, 0);
  CHECK_OK(fs_topo_leafspine(&p, &t, &err), &err);
  CHECK_OK(fs_ocsctl_topo(t, &o, &T, &err), &err);
  CHECK_EQ_INT(T->n_links, t->n_links + 5 * 4);
  CHECK_EQ_INT(T->n_nodes, t->n_nodes);
  for (int32_t l = 0; l < t->n_links; l++) {
    CHECK_EQ_INT(T->links[l].from, t->links[l].from);
    CHECK_EQ_INT(T->links[l].to, t->links[l].to);
  }
  for (int32_t l = t->n_links; l < T->n_links; l++) {
    CHECK_EQ_INT(T->nodes[T->links[l].from].tier, 1);
    CHECK_EQ_INT(T->nodes[T->links[l].to].tier, 1);
  }
  fs_topo_free(T);
  fs_topo_free(t);
}

/* A training job with the layer (examples/gpt-13b-ocs.json: one SiP port
 * per leaf, adaptive): it runs, moves circuits, reports the iteration
 * without the layer and with the static configuration; with a delay so
 * long that no change can pay, adaptive is the static run exactly. */
TEST(test_ocsctl_train_job) {
  fs_job *job = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_job_load("examples/gpt-13b-ocs.json", &job, &err), &err);
  if (!job) return;
  CHECK_EQ_INT(job->ocs.ports, 1);
  fs_train *tr = NULL;
  fs_train_result r;
  fs_train_opts to;
  memset(&to, 0, sizeof(to));
  to.no_compare = 1;
  CHECK_OK(fs_train_new(job, &to, &tr, &err), &err);
  CHECK_OK(fs_train_run(tr, &r, &err), &err);
  CHECK(fs_train_ocs(tr) != NULL);
  CHECK(r.ocs.reconfigs > 0);
  CHECK(r.ocs.circuit_bytes > 0 && r.ocs.circuit_bytes < r.ocs.flow_bytes);
  CHECK(r.ocs_off_iter_s > 0 && r.ocs_static_iter_s > 0);
  /* adaptive may only do better than keeping the static circuits here: it
   * changes them when its estimate says it pays */
  CHECK(r.first_iter_s <= r.ocs_static_iter_s * (1 + 1e-9));
  const fs_ocsctl_change *ch;
  int32_t n = fs_ocsctl_changes(fs_train_ocs(tr), &ch);
  CHECK(n >= r.ocs.circuits_initial);
  for (int32_t i = 0; i < n; i++) {
    CHECK(ch[i].lit_s >= ch[i].at_s);
    CHECK(ch[i].a < ch[i].b);
  }
  fs_train_free(tr);
  tr = NULL;
  job->ocs.reconfig_s = 1e3;
  job->ocs.interval_s = 0.1;
  CHECK_OK(fs_train_new(job, &to, &tr, &err), &err);
  CHECK_OK(fs_train_run(tr, &r, &err), &err);
  CHECK_EQ_INT(r.ocs.reconfigs, 0);
  CHECK(r.ocs.declined > 0);
  CHECK_REL(r.first_iter_s, r.ocs_static_iter_s, 1e-12, "s");
  fs_train_free(tr);
  fs_job_free(job);
}
