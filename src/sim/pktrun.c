/* A simulation's items run again on the packet network (pktnet.c): the
 * driver of the packet backend (fabricsim/packet.h, docs/model.md "The
 * packet backend"). A flow begins there when the items before it are done,
 * a task ends after its duration, both as the network's user events so that
 * the one clock orders them with the packets (time, then push order). The
 * backend's checks and its own messages stay with the scenario
 * (src/scenario/packet.c); this file only runs what it was given. */
#include <math.h>
#include <stdlib.h>

#include "model.h"

/* user events: an item begins, a task ends */
enum { PK_BEGIN, PK_TASK_DONE };

typedef struct pktrun {
  const fs_sim *s;
  fs__pktnet *net;
  int32_t *left; /* per item: the items before it not done yet */
  double *st, *fin;
} pktrun;

static int item_done(pktrun *r, int32_t it, double t);

/* When item `it` may start at the earliest (its start_ns), in s. */
static double earliest(const pktrun *r, int32_t it) {
  return (double)r->s->items[it].start_ns * 1e-9;
}

static int begin(pktrun *r, int32_t it, double t) {
  const fs_sim *s = r->s;
  r->st[it] = t;
  if (s->items[it].kind == FS_ITEM_TASK) {
    double d = s->tasks[s->items[it].idx].duration_s;
    return fs__pktnet_push_user(r->net, t + d, 2 * it + PK_TASK_DONE);
  }
  const int32_t *links;
  const double *w;
  int32_t n;
  fs_sim_flow_route(s, it, &links, &w, &n);
  double bytes = fs_sim_flow_bytes(s, it);
  if (!(bytes > 0) || n == 0) return item_done(r, it, t);
  return fs__pktnet_begin(r->net, it, links, n, bytes, t);
}

static int item_done(pktrun *r, int32_t it, double t) {
  const fs_sim *s = r->s;
  r->fin[it] = t;
  for (int32_t k = s->dep_start[it]; k < s->dep_start[it + 1]; k++) {
    int32_t d = s->dep_list[k] / 2;
    if (--r->left[d] == 0) {
      double s0 = earliest(r, d);
      int rc = fs__pktnet_push_user(r->net, t > s0 ? t : s0, 2 * d + PK_BEGIN);
      if (rc) return rc;
    }
  }
  return 0;
}

static int on_user(void *ctx, int32_t a, double t) {
  pktrun *r = ctx;
  return a % 2 == PK_BEGIN ? begin(r, a / 2, t) : item_done(r, a / 2, t);
}

static int on_done(void *ctx, int32_t id, double t) { return item_done(ctx, id, t); }

int fs_sim_packet_times(const fs_sim *s, const fs_transport *tp, double *start_s,
                        double *finish_s) {
  if (!s->ran || !s->dep_start || s->lazy.n_inst) return FS_EINVAL; /* (not every item listed) */
  int32_t n = (int32_t)s->n_items;
  pktrun r = {.s = s, .st = start_s, .fin = finish_s, .left = calloc((size_t)n + 1, sizeof(int32_t))};
  if (!r.left) return FS_ENOMEM;
  for (int32_t it = 0; it < n; it++) start_s[it] = finish_s[it] = -1;
  for (size_t e = 0; e < s->n_edges; e++) r.left[s->edges[e][1]]++;
  fs__pktnet_cfg cfg = {.t = s->core.t, .mss = tp->mss_bytes, .hdr = tp->header_bytes,
                        .k100 = tp->queue_k, .syn_bytes = fs__pktnet_syn_bytes(tp->header_bytes),
                        .init_window = tp->init_window, .persistent = tp->persistent,
                        .roce = tp->kind == FS_TRANSPORT_RDMA, .dcqcn = tp->dcqcn_prm,
                        .ctx = &r, .user = on_user, .done = on_done};
  int rc = fs__pktnet_new(&cfg, &r.net) ? FS_ENOMEM : 0;
  for (int32_t it = 0; it < n && !rc; it++)
    if (r.left[it] == 0) rc = fs__pktnet_push_user(r.net, earliest(&r, it), 2 * it + PK_BEGIN);
  while (!rc && fs__pktnet_next_t(r.net) < INFINITY) rc = fs__pktnet_step(r.net);
  fs__pktnet_free(r.net);
  free(r.left);
  return rc;
}
