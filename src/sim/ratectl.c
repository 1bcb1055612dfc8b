/* The engine's side of DCQCN (rdma) and DCTCP (tcp) rate control: under
 * these the flows send at their senders' rates (dcqcn.c steps the model),
 * not at max-min shares, so the re-rating hands out the offers instead;
 * flows that come or go touch their NICs' shares; a sender done lets its
 * last byte wait out the queues it finds (its tail event); its step event
 * is versioned like a drain. State: dcqcn.c's (fs__dcqcn) and the step
 * event's version and time, in a struct of its own (fs_sim's dq points at
 * dcqcn.c's part, for the tcp model and the port queues under DCTCP). Cost per batch: O(flows
 * touched) between steps, O(flows in flight) at a step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* The model's state: dcqcn.c's, and its step event (which 0, versioned
 * like a drain: the one superseded is dead) and tails (which 1). */
typedef struct ratectl {
  fs__dcqcn dq;
  uint32_t version;  /* its step event that is live */
  double pending_t;  /* when the live step event is (INFINITY: none) */
  int32_t ev_base;
  uint8_t due;       /* a step event came in this batch */
  uint8_t changed;   /* capacities or routes changed since the last step */
  uint8_t offers;    /* offers changed in this batch: 1 those of dq->upd
                      * (re-rated NICs), 2 any flow's (a step) */
} ratectl;

enum { RC_STEP = 0, RC_TAIL = 1 };

/* Flow fi came or went: its NIC's share changes (cc_step). */
static void cc_touch(fs_sim *s, int32_t fi) {
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
static int cc_step(fs_sim *s, ratectl *r) {
  fs__dcqcn *d = s->dq;
  if (!r->due && !r->changed && !d->n_touch) return 0;
  int local = !r->due && !r->changed;
  r->due = r->changed = 0;
  int rc = local ? fs__dcqcn_local(d, &s->core, d->touch, d->n_touch, s->now) : 1;
  for (int32_t i = 0; i < d->n_touch; i++) fs__dq(d, d->touch[i])->touched = 0;
  d->n_touch = 0;
  if (rc == 0) r->offers = 1; /* (flows that came or went only re-rated their NICs) */
  if (rc <= 0) return rc;
  r->offers = 2;
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
  if (at < INFINITY && at <= r->pending_t && at > s->now) {
    /* (no step event at INFINITY: one would keep a run with timers from
     * ever being idle; the one superseded is dead) */
    if (r->pending_t < INFINITY) s->heap.stale++;
    r->version++;
    r->pending_t = at;
    if (fs__evq_push(s, at, r->ev_base + RC_STEP, -1, r->version)) return FS_ENOMEM;
  }
  return 0;
}

/* rdma with DCQCN: flow fi's last byte, sent, reaches hop k of its route
 * now and waits out each queue as it finds it (FIFO); past the last one
 * the flow finishes a path latency (and its store and forward) later. */
static int cc_tail(fs_sim *s, const ratectl *r, int32_t fi, int32_t k) {
  const fs__flow *f = &s->core.flows[fi];
  for (; k < f->n; k++) {
    double w = f->w[k] * fs__dcqcn_wait_s(s->dq, &s->core, f->links[k], s->now);
    if (w > 0) {
      s->dq->tail_hop[fi] = k + 1;
      return fs__evq_push(s, s->now + w, r->ev_base + RC_TAIL, f->item, 0) ? FS_ENOMEM : 0;
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
static int rerate_cc(fs_sim *s, ratectl *rc) {
  fs__simcore *c = &s->core;
  for (size_t i = 0; i < c->n_dirty; i++) {
    int32_t l = c->dirty_links[i];
    c->is_dirty[l] = c->arrived[l] = 0;
    c->gone_load[l] = c->gone_max[l] = 0;
  }
  c->n_dirty = 0;
  c->theta = INFINITY;
  /* (offers change only when the model steps or re-rates NICs: cc_step) */
  int all = rc->offers == 2;
  int32_t n = all ? s->n_active : rc->offers == 1 ? s->dq->n_upd : 0;
  rc->offers = 0;
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

/* ---- the hooks (model.h) ---- */

/* rdma under DCQCN, tcp under DCTCP. */
static int rc_setup(fs_sim *s, fs__mslot *slot) {
  if (!dcqcn(s)) return 0;
  ratectl *r = calloc(1, sizeof(*r));
  if (!r) return FS_ENOMEM;
  if (fs__dcqcn_init(&r->dq, &s->tp.dcqcn_prm, s->core.t->n_links, s->core.n_flows)) {
    free(r);
    return FS_ENOMEM;
  }
  fs__dcqcn *d = &r->dq;
  d->wire_bytes = full_packet(s);
  d->bucket = fmin(s->tp.dcqcn_prm.alpha_us, s->tp.dcqcn_prm.dec_us) * 1e-6;
  d->step_s = fmin(s->tp.dcqcn_prm.dec_us, FS__DCQCN_STEP_US) * 1e-6;
  if (s->tp.kind == FS_TRANSPORT_TCP) { /* DCTCP */
    d->dctcp = 1;
    d->k100 = s->tp.queue_k;
    d->mss = s->tp.mss_bytes;
    d->ack_bytes = s->tp.header_bytes;
    d->init_window = s->tp.init_window;
    d->bucket = 1e-6;
    d->step_s = FS__DCTCP_STEP_US * 1e-6;
  }
  r->pending_t = INFINITY;
  r->ev_base = slot->ev_base;
  slot->st = r;
  s->dq = d;
  return 1;
}

static void rc_free(fs_sim *s, void *st) {
  ratectl *r = st;
  fs__dcqcn_free(&r->dq);
  free(r);
  s->dq = NULL;
}

/* (the links' capacities act through the queues: any of them may hold one) */
static int rc_all_links(const fs_sim *s, const void *st) {
  (void)s, (void)st;
  return 1;
}

/* Its queue pair starts at line rate (a flow run as packets has its own). */
static int rc_flow_start(fs_sim *s, void *st, int32_t fi) {
  (void)st;
  if (fs__dcqcn_start(s->dq, &s->core, fi)) return FS_ENOMEM;
  cc_touch(s, fi);
  return 0;
}

/* Its NIC's share changes. */
static int rc_flow_touch(fs_sim *s, void *st, int32_t fi) {
  (void)st;
  cc_touch(s, fi);
  return 0;
}

/* Its queued bytes move on; its last byte waits out the queues. */
static int rc_sent(fs_sim *s, void *st, int32_t fi, double tail) {
  fs__dcqcn_sent(s->dq, fi);
  s->dq->tail_more[fi] = tail;
  int rc = cc_tail(s, st, fi, 0);
  return rc < 0 ? rc : 1;
}

static void rc_flow_done(fs_sim *s, void *st, int32_t fi) {
  (void)st;
  fs__dcqcn_done(s->dq, fi);
}

static int rc_event(fs_sim *s, void *st, int32_t which, const fs__event *e) {
  ratectl *r = st;
  if (which == RC_STEP) {
    r->due = 1;
    r->pending_t = INFINITY;
    return 0;
  }
  int32_t fi = s->items[e->item].idx;
  return cc_tail(s, r, fi, s->dq->tail_hop[fi]);
}

static int rc_ev_live(const fs_sim *s, const void *st, int32_t which, int32_t item,
                      uint32_t version) {
  (void)s, (void)item;
  return which != RC_STEP || version == ((const ratectl *)st)->version;
}

static int rc_batch(fs_sim *s, void *st) { return cc_step(s, st); }
static int rc_rerate(fs_sim *s, void *st) { return rerate_cc(s, st); }

/* Its flows' offers may change. */
static void rc_capacity(fs_sim *s, void *st, int32_t l) {
  (void)l;
  ((ratectl *)st)->changed = 1;
  fs__dcqcn_nics_changed(s->dq);
}

/* Its bytes queued on the old route leave the model, which takes its
 * loads again. */
static void rc_rerouted(fs_sim *s, void *st, int32_t fi) {
  fs__dcqcn_reset_hops(s->dq, fi);
  fs__dcqcn_nics_changed(s->dq);
  ((ratectl *)st)->changed = 1;
}

const fs__model fs__model_ratectl = {
    .name = "ratectl",
    .n_events = 2,
    .setup = rc_setup,
    .free = rc_free,
    .all_links = rc_all_links,
    .flow_start = rc_flow_start,
    .flow_on = rc_flow_touch,
    .flow_off = rc_flow_touch,
    .sent = rc_sent,
    .flow_done = rc_flow_done,
    .event = rc_event,
    .ev_live = rc_ev_live,
    .batch = rc_batch,
    .rerate = rc_rerate,
    .capacity = rc_capacity,
    .rerouted = rc_rerouted,
};
