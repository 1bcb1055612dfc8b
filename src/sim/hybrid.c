/* Flows run as packets beside the fluid (tcp with packet_bytes > 0, rdma
 * under DCQCN; docs/model.md, "Small flows as packets"): which flows go to
 * the packet network (pktnet.c), its callbacks (a flow sent, done, what
 * fluid fills a port, the bytes a packet takes from the fluid there) and
 * the ghosts of fluid flows whose last bytes still pass a port after they
 * left their links. Per link: its ghosts (a few); per flow: 1 + 8 bytes.
 * Costs: O(ghosts + flows on the link) per packet that crosses a port the
 * fluid fills. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* The model's state: the packet network, per flow whether it runs there
 * and the bytes packets took from it in the fluid (still to send), per
 * link its ghosts (tcp without DCTCP only); the callbacks' context. */
/* A flow that left its links (its window out, or done) whose fluid still
 * passes link l until `until` (tcp model with flows as packets: its last
 * bytes left its source when it left, and reach l the hops before l
 * later): at `rate` x its weight there, its round trip rtt. */
typedef struct ghost {
  int32_t flow;
  double until, rate, rtt;
} ghost;

typedef struct fs__ghosts {
  ghost *g;
  int32_t n, cap;
} fs__ghosts;

typedef struct hybrid {
  fs_sim *s;
  fs__pktnet *pk;
  uint8_t *as_pkt;
  double *pk_owed;
  fs__ghosts *ghost;
  int32_t ev_base; /* + 0: a flow run as packets has its last byte out of its host */
} hybrid;

/* Whether flow fi's fluid has reached link l of its route by `at`. The
 * fluid's rates hold along the whole route at once; a flow that came onto
 * its links at on_s sends its first packet then, which reaches l's port
 * port_reach_s later, and its last bytes pass there as long after it
 * leaves its links (a ghost of it, ghosts_leave). So the packets at a
 * port meet the fluid as its sources sent it, each flow delayed by its
 * own hops (a slow-start round's window after its gap; until this the
 * packets met a round's gap the hops before the port too early). */
static int fluid_arrived(const hybrid *h, int32_t fi, int32_t l, double at) {
  const fs_sim *s = h->s;
  if (!h->ghost || !s->tf_slot || s->tf_slot[fi] < 0 || at >= TF(s, fi)->on_all_s) return 1;
  pkt_route p = fs__packet_route(s, fi);
  return at - TF(s, fi)->on_s >= fs__link_reach_s(s, fi, p, l);
}

/* The fluid flows as their packets pass port l at `at` (now or soon, as
 * their rates are now; tcp; fluid_arrived, ghosts_leave): how many, their
 * rate there and their mean round trip. */
static void fluid_view(const hybrid *h, int32_t l, double at, int32_t *n, double *rate,
                       double *rtt) {
  const fs_sim *s = h->s;
  const fs__link_active *a = &s->core.active[l];
  const fs__ghosts *gs = h->ghost ? &h->ghost[l] : NULL;
  double sum = 0;
  int32_t k = 0;
  *n = a->n;
  *rate = a->n ? s->core.load[l] : 0;
  for (int32_t j = 0; j < a->n; j++) {
    int32_t g = a->flow[j];
    if (s->tf_slot[g] < 0) continue;
    if (!fluid_arrived(h, g, l, at)) { /* not at l yet */
      *rate -= s->core.flows[g].rate * s->core.flows[g].w[a->slot[j]];
      (*n)--;
      continue;
    }
    sum += TF(s, g)->rtt_s;
    k++;
  }
  for (int32_t j = 0; gs && j < gs->n; j++)
    if (gs->g[j].until > at) { /* still passing l */
      *rate += gs->g[j].rate;
      (*n)++;
      sum += gs->g[j].rtt;
      k++;
    }
  *rtt = k ? sum / k : 0;
  if (!*n) *rate = 0;
}

/* Flow fi comes onto its links now: where its fluid will reach a switch
 * port that packets keep busy beyond then, no other fluid there, its
 * stream queues behind their backlog, which took nothing from it (pk_tx
 * judges a packet when it reaches the port, and fi was not on its links
 * then), so it owes those bytes: the most any port of its route keeps it
 * waiting (one after another, a later port's backlog drains meanwhile). */
static int hy_flow_on(fs_sim *s, void *st, int32_t fi) {
  hybrid *h = st;
  if (!h->ghost) return 0;
  const fs__flow *f = &s->core.flows[fi];
  const fs_topo *t = s->core.t;
  if (s->tf_slot[fi] < 0) return 0;
  pkt_route p = fs__packet_route(s, fi);
  double owed = 0;
  for (int32_t k = 0; k < f->n; k++) {
    int32_t l = f->links[k];
    if (t->nodes[t->links[l].from].kind != FS_NODE_SWITCH) continue;
    double at = s->now + fs__link_reach_s(s, fi, p, l);
    double busy = fs__pktnet_busy_until(h->pk, l) - at;
    if (!(busy > 0)) continue;
    int32_t n;
    double rate, rtt;
    fluid_view(h, l, at, &n, &rate, &rtt);
    if (n <= 1) owed = fmax(owed, busy * s->core.cap_Bps[l] * f->w[k]);
  }
  h->pk_owed[fi] += owed;
  return 0;
}

/* Flow fi leaves its links now: a ghost of it at every link of its
 * rating route until its last bytes have passed that link's port. Each
 * link's ghosts that have passed go first. */
static int hy_flow_off(fs_sim *s, void *st, int32_t fi) {
  hybrid *h = st;
  const fs__flow *f = &s->core.flows[fi];
  if (!h->ghost || !(f->rate > 0) || s->tf_slot[fi] < 0) return 0;
  pkt_route p = fs__packet_route(s, fi);
  for (int32_t k = 0; k < f->n; k++) {
    fs__ghosts *gs = &h->ghost[f->links[k]];
    int32_t m = 0;
    for (int32_t j = 0; j < gs->n; j++)
      if (gs->g[j].until > s->now) gs->g[m++] = gs->g[j];
    gs->n = m;
    double d = fs__link_reach_s(s, fi, p, f->links[k]);
    if (!(d > 0)) continue;
    if (gs->n == gs->cap) {
      int32_t ncap = gs->cap ? 2 * gs->cap : 4;
      ghost *ng = realloc(gs->g, (size_t)ncap * sizeof(*ng));
      if (!ng) return FS_ENOMEM;
      gs->g = ng;
      gs->cap = ncap;
    }
    gs->g[gs->n++] = (ghost){fi, s->now + d, f->rate * f->w[k], TF(s, fi)->rtt_s};
  }
  return 0;
}

/* ---- tcp flows run as packets (pktnet.h; docs/model.md "Small flows as
 * packets"): they leave the fluid and come back as these events ---- */
static int pk_sent(void *ctx, int32_t fi, double t) {
  hybrid *h = ctx;
  return fs__evq_push(h->s, t, h->ev_base, h->s->core.flows[fi].item, 0);
}

static int pk_done(void *ctx, int32_t fi, double t) {
  fs_sim *s = ((hybrid *)ctx)->s;
  return fs__evq_push(s, t, EV_FLOW_DONE, s->core.flows[fi].item, 0);
}

/* The bytes of slow-start windows and whole messages queued at port l as
 * packets would find them: the model queues a window at once, where its
 * packets come at their first link's rate, so each flow's part is what it
 * queues less what has not arrived yet (qup, brought to now). */
static double burst_as_packets(fs_sim *s, int32_t l) {
  const fs__link_active *a = &s->core.active[l];
  double q = 0;
  for (int32_t j = 0; j < a->n; j++) {
    int32_t fi = a->flow[j];
    if (!s->tf_slot || s->tf_slot[fi] < 0) continue;
    const fs__tflow *tf = TF(s, fi);
    if (tf->qlink < 0 || tf->qca) continue;
    pkt_route p = fs__packet_route(s, fi);
    double x = 0;
    for (int32_t k = tf->qlink; k < tf->qend; k++)
      if (fs__sim_link(s, fi, p.links[k]) == l) x += fs__queue_share(s, fi, p, k);
    if (!(x > 0)) continue;
    double dt = s->now - tf->qsince;
    double held = tf->qbytes - tf->qrate * dt;
    double up = fmax(tf->qup - fs__arrival_Bps(s, fi) * dt, 0);
    if (held > up) q += x * (held - up);
  }
  return q;
}

/* Whether the fluid flows fill link l's port (saturated) and every one of
 * them queues at a switch port before l on its route: they reach l at its
 * rate, from a queue that keeps feeding it, so what a packet displaces at l
 * is not clocked back out by their ACKs a round trip later (as at their
 * own queue's port) but stays queued at l while they fill it (up to K:
 * over it l marks them too). A flow whose excess waits at its host has
 * no such queue: l is its own. */
static int fills_from_upstream(fs_sim *s, int32_t l) {
  const fs__simcore *c = &s->core;
  const fs__link_active *a = &c->active[l];
  if (!a->n || !link_full(c, l) || !s->tf_slot) return 0;
  for (int32_t j = 0; j < a->n; j++) {
    int32_t g = a->flow[j];
    if (s->tf_slot[g] < 0) return 0;
    const fs__tflow *tf = TF(s, g);
    if (tf->qlink < 0) return 0;
    pkt_route p = fs__packet_route(s, g);
    if (c->t->nodes[c->t->links[p.links[tf->qlink]].from].kind != FS_NODE_SWITCH) return 0;
    int32_t k = tf->qend;
    while (k < p.n && fs__sim_link(s, g, p.links[k]) != l) k++;
    if (k == p.n) return 0; /* l is at or before its queue */
  }
  return 1;
}

/* What the fluid flows do on link l as the last re-rating left them. */
static void pk_fluid(void *ctx, int32_t l, fs__pktnet_fluid *out) {
  const hybrid *h = ctx;
  fs_sim *s = h->s;
  out->n = s->core.active[l].n;
  out->rate_Bps = out->n ? s->core.load[l] : 0;
  out->queue_s = out->rtt_s = 0;
  out->full = out->hold = out->ca = 0;
  if (!(s->core.cap_Bps[l] > 0)) return;
  if (s->tf_slot) fluid_view(h, l, s->now, &out->n, &out->rate_Bps, &out->rtt_s);
  if (!out->n) return;
  out->full = fills(out->rate_Bps, s->core.cap_Bps[l]);
  if (s->dq) {
    /* (the rates are the senders' offers: what passes is at most C) */
    out->rate_Bps = fmin(out->rate_Bps, s->core.cap_Bps[l]);
    out->queue_s = fs__port_queue_s(s, l);
    out->hold = fs__dq_fills_from_upstream(s, l);
    out->ca = 1; /* its windows: out of slow start, all of them */
    for (int32_t j = 0; j < s->core.active[l].n; j++)
      if (fs__dq(s->dq, s->core.active[l].flow[j])->ss != FS__SS_NONE) out->ca = 0;
  } else if (s->portq) {
    fs__portq *q = &s->portq[l];
    fs__q_advance(s, l);
    double standing = q->n_ca ? fs__standing_bytes(s, l) : 0;
    out->queue_s = ((q->n_burst ? burst_as_packets(s, l) : 0) + standing) / s->core.cap_Bps[l];
    out->hold = fills_from_upstream(s, l) && out->full;
    out->ca = q->n_ca && q->phase == FS__SQ_CLIMB;
  }
}

/* A packet displaced x bytes of fluid flow g: g still has to send them.
 * Slow start grows a window by what its ACKs deliver: what a packet
 * displaces from a slow-starting flow is growth its window loses. Its
 * part of the standing queue in slow start is that much lower; a flow
 * still in its rounds keeps the loss for when it joins (q_spread). */
static void pk_take(hybrid *h, int32_t g, double x) {
  fs_sim *s = h->s;
  h->pk_owed[g] += x;
  if (s->portq && !s->tp.persistent && s->tf_slot[g] >= 0 && TF(s, g)->budget < INFINITY)
    TF(s, g)->ss_lost += x;
}

/* A packet's time on link l counts as busy where no fluid flow is (the
 * fluid's busy time covers the rest). Where the fluid fills l, the
 * packet's bytes are taken from its flows there, each in proportion to
 * its rate (their bytes queued stay as their windows hold them, so each
 * byte of a packet displaces one of theirs: bytes x rate / capacity
 * each), once per packet: at the first such port of its path (a later
 * one gets the fluid's bytes already thinned). Returns whether it took. */
static int pk_tx(void *ctx, int32_t l, double bytes, double t0, double t1, int may_take) {
  hybrid *h = ctx;
  fs_sim *s = h->s;
  const fs__simcore *c = &s->core;
  const fs__link_active *a = &c->active[l];
  if (!a->n) s->link_stats[l].busy_s += t1 - t0;
  if (!may_take) return 0;
  /* the fluid as it passes l when the packet leaves (FIFO: what reaches
   * the port after the packet waits behind it): the flows that have
   * reached l by then and the ghosts of those that left, whose last bytes
   * have not */
  double load = c->load[l];
  if (h->ghost) {
    int32_t n;
    double rtt;
    fluid_view(h, l, t0, &n, &load, &rtt);
    if (!fills(load, c->cap_Bps[l])) return 0;
  } else if (!a->n || !link_full(c, l)) {
    return 0;
  }
  /* Under the DCQCN and DCTCP models the rates are the senders' offers,
   * whose sum can be many times the capacity (the excess queues): the
   * packet still displaces its own bytes only, split by rate. */
  double k = bytes / fmax(load, c->cap_Bps[l]);
  for (int32_t j = 0; j < a->n; j++)
    if (fluid_arrived(h, a->flow[j], l, t0))
      pk_take(h, a->flow[j], k * c->flows[a->flow[j]].rate * c->flows[a->flow[j]].w[a->slot[j]]);
  const fs__ghosts *gs = h->ghost ? &h->ghost[l] : NULL;
  for (int32_t j = 0; gs && j < gs->n; j++)
    if (gs->g[j].until > t0) pk_take(h, gs->g[j].flow, k * gs->g[j].rate);
  fs__portq *q = s->portq && !s->tp.persistent ? &s->portq[l] : NULL;
  if (q && q->n_ca && q->phase == FS__SQ_SLOW_START) {
    fs__standing_advance(s, l);
    double lost = bytes / full_packet(s) * q->ca_rate / load;
    q->climb = fmax(q->climb - lost, 0);
  }
  return 1;
}

/* Which flows run as packets: under tcp with switch queues (queue_k > 0:
 * the packets' ports mark at K) or rdma under DCQCN (its ports mark
 * between Kmin and Kmax; the ideal rdma has no queues), those of at most
 * packet_bytes on one path whose links all have a reverse for the ACKs or
 * CNPs, unless the run has timers (failures and re-routing change what
 * packets would have to follow) or the flow stands for an orbit
 * (symmetry). */
static void hy_free(fs_sim *s, void *st) {
  hybrid *h = st;
  fs__pktnet_free(h->pk);
  free(h->as_pkt);
  free(h->pk_owed);
  if (h->ghost)
    for (int32_t l = 0; l < s->core.t->n_links; l++) free(h->ghost[l].g);
  free(h->ghost);
  free(h);
}

static int hy_setup(fs_sim *s, fs__mslot *slot) {
  fs__simcore *c = &s->core;
  int tcp = s->tp.kind == FS_TRANSPORT_TCP && s->tp.queue_k > 0;
  int roce = s->tp.kind == FS_TRANSPORT_RDMA && dcqcn(s);
  if (!(tcp || roce) || !(s->tp.packet_bytes > 0) || s->n_timers) return 0;
  hybrid *h = calloc(1, sizeof(*h));
  if (!h) return FS_ENOMEM;
  h->s = s;
  h->ev_base = slot->ev_base;
  if (!(h->as_pkt = calloc((size_t)c->n_flows + 1, 1))) goto fail;
  int32_t n = 0;
  for (int32_t fi = 0; fi < c->n_flows; fi++) {
    const fs__flow *f = &c->flows[fi];
    double b = s->payload[fi];
    if (!(b > 0 && b <= s->tp.packet_bytes) || f->n < 1 || (s->paths && s->paths[fi].links))
      continue;
    int ok = 1;
    for (int32_t k = 0; k < f->n && ok; k++)
      ok = f->w[k] == 1 && c->t->links[f->links[k]].reverse >= 0 &&
           (k == 0 ? c->t->links[f->links[k]].from == f->src
                   : c->t->links[f->links[k]].from == c->t->links[f->links[k - 1]].to);
    if (!ok) continue;
    h->as_pkt[fi] = 1;
    if (s->small) s->small[fi] = 0; /* the host's fair queue replaces the source FIFO */
    n++;
  }
  if (!n) {
    hy_free(s, h);
    return 0;
  }
  if (!(h->pk_owed = calloc((size_t)c->n_flows + 1, sizeof(double))) ||
      (!dcqcn(s) && !(h->ghost = calloc((size_t)c->t->n_links + 1, sizeof(*h->ghost)))))
    goto fail;
  fs__pktnet_cfg cfg = {.t = c->t, .mss = s->tp.mss_bytes, .hdr = s->tp.header_bytes,
                        .syn_bytes = fs__pktnet_syn_bytes(s->tp.header_bytes),
                        .k100 = s->tp.queue_k, .init_window = s->tp.init_window,
                        .persistent = s->tp.persistent, .roce = roce,
                        .dcqcn = s->tp.dcqcn_prm, .ctx = h,
                        .sent = pk_sent, .done = pk_done, .fluid = pk_fluid, .tx = pk_tx};
  if (fs__pktnet_new(&cfg, &h->pk)) goto fail;
  slot->st = h;
  return 1;
fail:
  hy_free(s, h);
  return FS_ENOMEM;
}

/* (packets cross the links the fluid would leave out) */
static int hy_all_links(const fs_sim *s, const void *st) {
  (void)s, (void)st;
  return 1;
}

/* A flow of its own starts as packets, beside the fluid. */
static int hy_flow_begin(fs_sim *s, void *st, int32_t fi) {
  hybrid *h = st;
  if (!h->as_pkt[fi]) return 0;
  const fs__flow *f = &s->core.flows[fi];
  fs__flow_counted(s, fi);
  int rc = fs__pktnet_begin(h->pk, fi, f->links, f->n, s->payload[fi], s->now);
  return rc < 0 ? rc : 1;
}

/* What packets took from the flow at its bottleneck: still to send. */
static int hy_owed(fs_sim *s, void *st, int32_t fi) {
  hybrid *h = st;
  if (!(h->pk_owed[fi] > 0)) return 0;
  fs__flow *f = &s->core.flows[fi];
  fs__settle(s, f);
  f->remaining += h->pk_owed[fi];
  h->pk_owed[fi] = 0;
  int rc = fs__predict(s, f);
  return rc < 0 ? rc : 1;
}

/* A flow of its own: its bytes, spread over its life on its links. */
static void hy_flow_done(fs_sim *s, void *st, int32_t fi) {
  const hybrid *h = st;
  if (h->as_pkt[fi] && s->bins.n)
    fs__bins_flow(&s->bins, &s->core, &s->core.flows[fi], s->items[s->core.flows[fi].item].start_s,
                  s->now, s->core.flows[fi].bytes);
}

/* A flow run as packets has its last byte out of its host. */
static int hy_event(fs_sim *s, void *st, int32_t which, const fs__event *e) {
  (void)st, (void)which;
  return fs__release(s, e->item, DEP_SENT);
}

static double hy_next_t(const void *st) { return fs__pktnet_next_t(((const hybrid *)st)->pk); }

/* Runs the packet events of the earliest time. */
static int hy_step(fs_sim *s, void *st) {
  hybrid *h = st;
  double tp = fs__pktnet_next_t(h->pk);
  (void)s;
  while (fs__pktnet_next_t(h->pk) <= tp) {
    int rc = fs__pktnet_step(h->pk);
    if (rc < 0) return rc;
  }
  return 0;
}

static void hy_counters(const fs_sim *s, const void *st, fs_sim_counters *c) {
  (void)s;
  c->packets = fs__pktnet_packets(((const hybrid *)st)->pk);
}

const fs__model fs__model_hybrid = {
    .name = "hybrid",
    .n_events = 1,
    .setup = hy_setup,
    .free = hy_free,
    .all_links = hy_all_links,
    .flow_begin = hy_flow_begin,
    .flow_on = hy_flow_on,
    .flow_off = hy_flow_off,
    .owed = hy_owed,
    .flow_done = hy_flow_done,
    .event = hy_event,
    .next_t = hy_next_t,
    .step = hy_step,
    .counters = hy_counters,
};
