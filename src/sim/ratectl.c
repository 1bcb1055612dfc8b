/* The engine's side of DCQCN (rdma) and DCTCP (tcp) rate control: under
 * these the flows send at their senders' rates (dcqcn.c steps the model),
 * not at max-min shares, so the re-rating hands out the offers instead;
 * flows that come or go touch their NICs' shares; a sender done lets its
 * last byte wait out the queues it finds (EV_TAIL); the model's step event
 * (EV_CC) is versioned like a drain. State: dcqcn.c's (fs__dcqcn), and the
 * step event's version and time in fs_sim. Cost per batch: O(flows
 * touched) between steps, O(flows in flight) at a step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* Flow fi came or went: its NIC's share changes (cc_step). */
void fs__cc_touch(fs_sim *s, int32_t fi) {
  fs__dcqcn *d = s->dq;
  if (!fs__dq(d, fi)->touched) d->touch[d->n_touch++] = fi;
  fs__dq(d, fi)->touched = 1;
}

/* rdma with DCQCN, tcp with DCTCP: when flows came or went (their NICs'
 * shares change) re-rates their NICs (fs__dcqcn_local), or steps the rate
 * control when that is not enough, its event came or capacities or routes
 * changed, and schedules the next step: a step (d->step_s) later while a
 * port is queued or over-subscribed, else when a rate next rises or CNPs
 * come back (docs/model.md, "DCQCN"). The re-rating then gives each flow
 * its offer (rerate_cc). */
int fs__cc_step(fs_sim *s) {
  fs__dcqcn *d = s->dq;
  if (!s->cc_due && !s->cc_changed && !d->n_touch) return 0;
  int local = !s->cc_due && !s->cc_changed;
  s->cc_due = s->cc_changed = 0;
  int rc = local ? fs__dcqcn_local(d, &s->core, d->touch, d->n_touch, s->now) : 1;
  for (int32_t i = 0; i < d->n_touch; i++) fs__dq(d, d->touch[i])->touched = 0;
  d->n_touch = 0;
  if (rc == 0) s->cc_offers = 1; /* (flows that came or went only re-rated their NICs) */
  if (rc <= 0) return rc;
  s->cc_offers = 2;
  double next;
  int busy = fs__dcqcn_tick(d, &s->core, s->active_list, s->n_active, s->now, &next);
  if (busy < 0) return busy;
  for (int32_t i = 0; i < s->dq->n_exits; i++) { /* DCTCP: echoes ended their slow start */
    int32_t fi = s->dq->exits[i];
    fs__flow *f = &s->core.flows[fi];
    fs__tflow *tf = TF(s, fi);
    if (f->active_idx >= 0) fs__settle(s, f);
    tf->budget = tf->cwnd = tf->round_bytes = INFINITY;
    if (f->active_idx < 0) continue; /* waits for its round's ACK, then goes on */
    supersede(s, f);
    if (fs__predict(s, f)) return FS_ENOMEM;
  }
  double step = d->step_s;
  /* (DCTCP's windows react once a round trip, at the step after it: their
   * observation windows' ends need no steps of their own while the model
   * steps anyway; half the steps of bench D5, no case of the validation
   * moves by more than 0.1 %) */
  double at = busy ? (s->dq->dctcp ? s->now + step : fmin(fs__dcqcn_grid(d, s->now, 1), next))
                   : next;
  if (at < INFINITY && at <= s->pending_cc_t && at > s->now) {
    /* (no step event at INFINITY: one would keep a run with timers from
     * ever being idle; the one superseded is dead) */
    if (s->pending_cc_t < INFINITY) s->heap.stale++;
    s->cc_version++;
    s->pending_cc_t = at;
    if (fs__evq_push(s, at, EV_CC, -1, s->cc_version)) return FS_ENOMEM;
  }
  return 0;
}

/* rdma with DCQCN: flow fi's last byte, sent, reaches hop k of its route
 * now and waits out each queue as it finds it (FIFO); past the last one
 * the flow finishes a path latency (and its store and forward) later. */
int fs__cc_tail(fs_sim *s, int32_t fi, int32_t k) {
  const fs__flow *f = &s->core.flows[fi];
  for (; k < f->n; k++) {
    double w = f->w[k] * fs__dcqcn_wait_s(s->dq, &s->core, f->links[k], s->now);
    if (w > 0) {
      s->dq->tail_hop[fi] = k + 1;
      return fs__evq_push(s, s->now + w, EV_TAIL, f->item, 0) ? FS_ENOMEM : 0;
    }
  }
  double t = s->now + f->latency_s + s->dq->tail_more[fi];
  return fs__evq_push(s, t, EV_FLOW_DONE, f->item, 0) ? FS_ENOMEM : 0;
}

/* Under the DCQCN and DCTCP models: whether what comes to link l's port
 * fills it. */
int fs__dq_port_full(const fs_sim *s, int32_t l) {
  return fills(s->dq->port[l].in, s->core.cap_Bps[l]);
}

/* rdma under DCQCN: each flow sends at its offer (dcqcn.c); the links'
 * capacities act through the queues, not here. */
int fs__rerate_cc(fs_sim *s) {
  fs__simcore *c = &s->core;
  for (size_t i = 0; i < c->n_dirty; i++) {
    int32_t l = c->dirty_links[i];
    c->is_dirty[l] = c->arrived[l] = 0;
    c->gone_load[l] = c->gone_max[l] = 0;
  }
  c->n_dirty = 0;
  c->theta = INFINITY;
  /* (offers change only when the model steps or re-rates NICs: cc_step) */
  int all = s->cc_offers == 2;
  int32_t n = all ? s->n_active : s->cc_offers == 1 ? s->dq->n_upd : 0;
  s->cc_offers = 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t fi = all ? s->active_list[i] : s->dq->upd[i];
    fs__flow *f = &c->flows[fi];
    if (f->active_idx < 0) continue; /* (it left: no rate) */
    double r = fs__dq(s->dq, fi)->offer;
    if (r == f->rate) continue;
    fs__settle(s, f);
    for (int32_t k = 0; k < f->n; k++) c->load[f->links[k]] += f->w[k] * (r - f->rate);
    f->rate = r;
    supersede(s, f);
    if (fs__predict(s, f)) return FS_ENOMEM;
  }
  s->counters.flows_rerated += (uint64_t)n;
  if (s->heap.stale > 1024 && 2 * s->heap.stale > s->heap.count && fs__evq_compact(s))
    return FS_ENOMEM;
  return 0;
}

/* The DCTCP model's ports: fills_from_upstream's test on its own queues
 * (l holds less than a packet while what comes in fills it, and every
 * flow on l has a port holding a packet or more before l on its route). */
int fs__dq_fills_from_upstream(fs_sim *s, int32_t l) {
  const fs__simcore *c = &s->core;
  const fs__link_active *a = &c->active[l];
  double pkt = full_packet(s);
  if (!a->n || !fs__dq_port_full(s, l) || fs__port_queue_s(s, l) * c->cap_Bps[l] >= pkt) return 0;
  for (int32_t j = 0; j < a->n; j++) {
    int32_t g = a->flow[j];
    pkt_route p = fs__packet_route(s, g);
    int32_t k = 0, lk = -1;
    while (k < p.n && (lk = fs__sim_link(s, g, p.links[k])) != l && !(s->dq->q[lk] >= pkt)) k++;
    if (k == p.n || lk == l) return 0; /* no port queued before l */
  }
  return 1;
}
