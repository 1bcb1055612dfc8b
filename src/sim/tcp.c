/* The tcp model (docs/model.md, "Transport"), behind the model hooks:
 * each flow's record (fs__tflow, from a pool while it is under way), its
 * handshake (TCP_ENTER), slow start's rounds and windows with their ACK
 * clocking (TCP_ACK, TCP_CLOCKED; the core's EV_WINDOW and EV_REENTER),
 * the source's FIFO of small flows and its fair queue of slow-start
 * windows (a virtual clock and a binary heap per source link,
 * TCP_SRC_OUT), and the share of shared links a transport with
 * efficiency < 1 keeps. Costs: O(log windows waiting) per window that
 * joins or leaves a source queue; O(route) per round. Sizes: records
 * ~200 bytes a flow in flight, 10^4..10^6 in flight. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "model.h"

/* tcp source fair queue, per link: the virtual clock (bytes each waiting
 * window has sent, v as of t, rising at src_y) and a min-heap of the
 * waiting flows on (tag, flow index), a = the flow (binary: the re-rating
 * walks it in array order, and kept the order it had); its event (TCP_SRC_OUT)
 * carries `version`. */
typedef struct srcq {
  double v, t;
  fs__heap h;
  uint32_t version;
  uint8_t pending;
} srcq;

/* The tcp model's own state: its event types and the source queues (the
 * records, FIFOs and per-flow round trips are fs_sim's, set up with the
 * routes' transport state in control.c, and read by the port queues and
 * the packets beside the fluid). */
struct fs__tcp {
  int32_t ev_base;
  srcq *srcq;         /* per link, with source_fq only */
  int32_t *src_hpos;  /* then, per flow: its slot in its source link's heap, -1 */
};

/* Its event types: a handshake is over; the first waiting window of a
 * source link (the event's item) is out of its fair queue; a new
 * connection's SYN-ACK or a round's first ACK leaves the receiver; a
 * slow-start round's first ACK is back before its window is out. */
enum { TCP_ENTER = 0, TCP_SRC_OUT = 1, TCP_ACK = 2, TCP_CLOCKED = 3 };

/* ---- tcp source fair queue (docs/model.md, "Transport") ----
 * The windows waiting at a source link leave at one share each, src_y, so
 * a link keeps one virtual clock (the bytes each has sent) and a heap of
 * the clock readings at which each is out (tags): a change of the share
 * re-predicts one event per link, not one per window. */
double fs__srcq_clock(const fs_sim *s, int32_t l) {
  const srcq *q = &s->tcp->srcq[l];
  return q->v + s->core.src_y[l] * (s->now - q->t);
}

static void srcq_advance(fs_sim *s, int32_t l) {
  s->tcp->srcq[l].v = fs__srcq_clock(s, l);
  s->tcp->srcq[l].t = s->now;
}

/* Link l's next window out: one live event. */
static int srcq_predict(fs_sim *s, int32_t l) {
  srcq *q = &s->tcp->srcq[l];
  if (q->pending) {
    q->pending = 0;
    s->heap.stale++;
  }
  q->version++;
  double y = s->core.src_y[l];
  if (!q->h.len || !(y > 0)) return 0;
  double t = s->now + (q->h.e[0].t - fs__srcq_clock(s, l)) / y;
  if (t < s->now) t = s->now;
  if (!isfinite(t)) return 0;
  if (fs__evq_push(s, t, s->tcp->ev_base + TCP_SRC_OUT, l, q->version)) return FS_ENOMEM;
  q->pending = 1;
  return 0;
}

/* Flow fi's window (inject_left bytes) joins its source link's queue, at
 * the share the queue has (the batch's re-rating sets the new one). */
static int srcq_join(fs_sim *s, int32_t fi) {
  fs__simcore *c = &s->core;
  const fs__flow *f = &c->flows[fi];
  fs__tflow *tf = TF(s, fi);
  int32_t l = f->links[0];
  srcq *q = &s->tcp->srcq[l];
  srcq_advance(s, l);
  tf->tag = q->v + tf->inject_left;
  if (fs__heap_push(&q->h, (fs__heap_ent){tf->tag, (uint64_t)fi, fi, 0})) return FS_ENOMEM;
  c->src_w[l] += f->w[0];
  c->load[l] += f->w[0] * c->src_y[l];
  return srcq_predict(s, l);
}

/* Flow fi's window leaves its source link's queue (out, or the flow leaves
 * its links): a departure of its share from the link. */
static int srcq_leave(fs_sim *s, int32_t fi) {
  fs__simcore *c = &s->core;
  const fs__flow *f = &c->flows[fi];
  fs__tflow *tf = TF(s, fi);
  int32_t l = f->links[0];
  srcq *q = &s->tcp->srcq[l];
  srcq_advance(s, l);
  double left = tf->tag - q->v, y = c->src_y[l], x = f->w[0] * y;
  tf->inject_left = left > 0 ? left : 0;
  fs__heap_remove(&q->h, (size_t)s->tcp->src_hpos[fi]);
  c->load[l] -= x;
  c->gone_load[l] += x;
  if (y > c->gone_max[l]) c->gone_max[l] = y;
  note_leaver(c, y);
  c->src_w[l] -= f->w[0];
  if (!q->h.len) c->src_w[l] = c->src_y[l] = 0; /* exactly, whatever rounding left */
  mark_dirty(s, l);
  return srcq_predict(s, l);
}

/* Flow f (off its links) comes back onto them at t: EV_REENTER, which a
 * newer version of the flow supersedes. */
int fs__reenter_at(fs_sim *s, fs__flow *f, double t) {
  f->held = 1;
  int rc = fs__evq_push(s, t, EV_REENTER, f->item, f->version);
  if (!rc) f->pending = 1;
  return rc;
}

/* Schedules the moment the (SYN-)ACK of an exchange flow fi begins now
 * leaves its receiver, where it waits behind what the receiver sends
 * (ack_left): its first packet's trip, for a handshake's SYN half the
 * handshake, for a round's first data packet RTT - handshake / 2 (a full
 * packet per hop instead of a header and a full packet's ACK). base: when
 * the handshake ends without that wait. */
static int ack_schedule(fs_sim *s, int32_t fi, uint8_t kind, double base) {
  fs__tflow *tf = TF(s, fi);
  tf->ack_kind = kind;
  tf->ack_base = base;
  double dt = kind == FS__ACK_HANDSHAKE ? tf->handshake_s / 2 : tf->rtt_s - tf->handshake_s / 2;
  return fs__evq_push(s, s->now + dt, s->tcp->ev_base + TCP_ACK, s->core.flows[fi].item, 0);
}

/* A slow-start round of flow fi begins now: with the queue model, its
 * first ACK's wait at the receiver is read when that ACK leaves. */
int fs__round_begins(fs_sim *s, int32_t fi) {
  /* warm connections have no rounds (unless window-limited: warm_rounds):
   * nothing waits for that ACK */
  if (s->tp.persistent && !(TF(s, fi)->cwnd < INFINITY)) return 0;
  return s->host_flows ? ack_schedule(s, fi, FS__ACK_ROUND, 0) : 0;
}

/* A slow-start round of flow fi (sending, its first ACK on the way back)
 * whose window will not be out when that ACK is back (at round_end, at its
 * rate now) is rate-limited: from then on its ACKs come back as its packets
 * leave the port it queues at, each letting out two (slow start), so its
 * window no longer limits it and what it sends beyond its rate grows the
 * queue there. EV_CLOCKED at round_end moves it out of rounds
 * (flow_clocked). Not under the DCTCP model (its own windows grow by their
 * ACKs) nor the source fair queue (windows wait at the source). */
static int clocked_schedule(fs_sim *s, int32_t fi) {
  const fs__flow *f = &s->core.flows[fi];
  const fs__tflow *tf = TF(s, fi);
  if (s->dq || !s->portq || s->core.src_phase || s->small[fi] || !(tf->budget < INFINITY) ||
      f->held)
    return 0;
  double left = tf->budget - fs__sent_since(s, f);
  if (f->rate > 0 && !(left > f->rate * (tf->round_end - s->now))) return 0;
  return fs__evq_push(s, tf->round_end, s->tcp->ev_base + TCP_CLOCKED, f->item, 0);
}

/* EV_CLOCKED: flow fi's round's first ACK is back (clocked_schedule). If
 * its window is still going out, it leaves slow start's rounds with the
 * window it has (the round's), which joins its ports' standing queue in
 * its slow-start phase (standing_join): the queue model's account of
 * windows that keep doubling until the first ECN echo. */
static int flow_clocked(fs_sim *s, int32_t fi) {
  if (s->tf_slot[fi] < 0) return 0; /* done since */
  fs__flow *f = &s->core.flows[fi];
  fs__tflow *tf = TF(s, fi);
  if (!(tf->budget < INFINITY) || tf->round_hold || f->held ||
      !(s->now >= tf->round_end * (1 - 1e-12)))
    return 0; /* the window went out first, or a later round */
  fs__settle(s, f);
  if (!(tf->budget > 0)) return 0; /* its window's end is this instant */
  tf->ca_window = tf->cwnd;
  tf->cwnd = tf->budget = tf->round_bytes = INFINITY;
  fs__q_update(s, fi);
  supersede(s, f);
  return fs__predict(s, f);
}

/* Flow fi's (SYN-)ACK leaves its receiver now: the handshake ends, or the
 * round's first ACK is back, that much later; a flow whose window is
 * already out waits for it off its links. */
static int ack_left(fs_sim *s, int32_t fi) {
  fs__flow *f = &s->core.flows[fi];
  /* read first: it brings the queues on the way back to now */
  double wait = fs__ack_wait_s(s, fi);
  /* a round's first ACK of a flow done since: nothing waits for it */
  if (s->tf_slot[fi] < 0) return 0;
  fs__tflow *tf = TF(s, fi);
  uint8_t kind = tf->ack_kind;
  tf->ack_kind = 0;
  tf->ack_q = wait;
  if (kind == FS__ACK_HANDSHAKE)
    return fs__evq_push(s, tf->ack_base + wait, s->tcp->ev_base + TCP_ENTER, f->item, 0);
  if (kind != FS__ACK_ROUND) return 0;
  if (wait > 0) tf->round_end += wait; /* this round's end, or the next one's once it waits */
  if (!tf->round_hold) return clocked_schedule(s, fi);
  if (!(wait > 0)) return 0;
  supersede(s, f);
  tf->ack_base += wait;
  return fs__reenter_at(s, f, tf->ack_base);
}

/* Efficiency under a symmetry: entry k of quotient flow fi's rating route
 * stands for orbit x n / |O| flows on each link of its orbit (n: the links
 * of its packet route there). Counts them on (sign 1) or off (-1). */
static void shared_count(fs_sim *s, int32_t fi, int32_t k, double sign) {
  int32_t l = s->core.flows[fi].links[k];
  double m = 1;
  if (s->paths && s->paths[fi].links) {
    const fs__fpath *p = &s->paths[fi];
    int32_t n = 0;
    for (int32_t j = 0; j < p->n; j++) n += s->lrep[p->links[j]] == l;
    m = p->orbit * n / s->lorb[l];
  }
  s->lcount[l] += sign * m;
}

/* Whether two or more flows are on link l (efficiency < 1). */
int fs__link_shared(const fs_sim *s, int32_t l) {
  return s->lcount ? s->lcount[l] > 1.5 : s->core.active[l].n >= 2;
}

/* Efficiency < 1: entry k of flow fi came on (sign 1) or went off (-1) its
 * link. Whether the link is shared, and so its capacity, is settled at the
 * batch's end (share_apply): a capacity change re-rates the link's flows
 * from 0, and what other events of the same instant read meanwhile (the
 * queues a round's ACK meets) must not depend on the order they come in;
 * a flow that comes and goes at one instant changes nothing. */
int fs__share_note(fs_sim *s, int32_t fi, int32_t k, double sign) {
  int32_t l = s->core.flows[fi].links[k];
  if (s->lcount) shared_count(s, fi, k, sign);
  if (s->share_marked[l]) return 0;
  if (fs__grow(&s->share_pend, &s->share_pend_cap, s->n_share_pend + 1, sizeof(int32_t)))
    return FS_ENOMEM;
  s->share_pend[s->n_share_pend++] = l;
  s->share_marked[l] = 1;
  return 0;
}

/* The batch's end: each link whose flows came or went carries
 * efficiency x its capacity while shared, its capacity otherwise. */
void fs__share_apply(fs_sim *s) {
  for (size_t i = 0; i < s->n_share_pend; i++) {
    int32_t l = s->share_pend[i];
    s->share_marked[l] = 0;
    double want = s->cap_base[l] * (fs__link_shared(s, l) ? s->tp.efficiency : 1);
    if (want != s->core.cap_Bps[l]) fs__capacity_changed(s, l, want);
  }
  s->n_share_pend = 0;
}

/* Source fair queue (tcp): the phase of flow fi in the round that may send
 * its budget: a slow-start window of a flow that is not sent whole waits in
 * the source's queue; otherwise the flow takes its rate there. A route
 * rated on one link has nothing downstream to queue at. */
static uint8_t src_round_phase(const fs_sim *s, int32_t fi) {
  const fs__simcore *c = &s->core;
  const fs__flow *f = &c->flows[fi];
  const fs__tflow *tf = TF(s, fi);
  int32_t first = fs__packet_route(s, fi).links[0]; /* a quotient's: its orbit's */
  int inject = tf->budget < INFINITY && !s->small[fi] && f->n >= 2 &&
               c->t->links[first].from == f->src && fs__sim_link(s, fi, first) == f->links[0];
  return inject ? FS__SRC_INJECT : FS__SRC_RATE;
}

/* Flow fi (off its links) starts a round with `rem` bytes left: its phase
 * and what its window must get out of the source. */
static void src_round(fs_sim *s, int32_t fi, double rem) {
  if (!s->core.src_phase) return;
  fs__tflow *tf = TF(s, fi);
  s->core.src_phase[fi] = src_round_phase(s, fi);
  tf->inject_left = tf->budget < rem ? tf->budget : rem;
}

/* Flow fi (in flight) takes something else from its source link, as a new
 * round starts (new_round) or its window is out: it leaves and comes back
 * as an arrival, so that the re-rating sees the change. The round is set
 * between the two, as leaving the queue keeps what the old window had left
 * to send. */
static int src_relink(fs_sim *s, int32_t fi, int new_round) {
  fs__flow *f = &s->core.flows[fi];
  fs__settle(s, f);
  int rc = fs__flow_unlink(s, fi);
  if (rc) return rc;
  if (new_round) src_round(s, fi, f->remaining);
  else s->core.src_phase[fi] = FS__SRC_OUT;
  supersede(s, f);
  return fs__flow_link(s, fi);
}

/* EV_SRC_OUT: the windows of link l's queue whose tags its clock reached
 * are out. A flow whose delivery ends now too (its source share bound it:
 * both at once up to rounding) only leaves the queue, and its own event
 * follows. The others take nothing there from now on: one bound further on
 * keeps its rate (the queue's share, which it was below, no longer binds
 * it); one the share bound is re-linked, to be re-rated from scratch. */
static int src_out(fs_sim *s, int32_t l) {
  srcq *q = &s->tcp->srcq[l];
  srcq_advance(s, l);
  double tol = 1e-9 * fmax(1, fabs(q->v));
  while (q->h.len && q->h.e[0].t <= q->v + tol) {
    int32_t fi = q->h.e[0].a;
    fs__flow *f = &s->core.flows[fi];
    fs__tflow *tf = TF(s, fi);
    fs__settle(s, f);
    double d = tf->budget < f->remaining ? tf->budget : f->remaining;
    int rc;
    if (d <= 1e-9 * f->bytes) {
      rc = srcq_leave(s, fi);
    } else if (f->rate < s->core.src_y[l] * (1 - 1e-9)) {
      /* bound further on, not by its injection: its rate stands */
      rc = srcq_leave(s, fi);
      s->core.src_phase[fi] = FS__SRC_OUT;
      if (!rc && s->portq) fs__q_update(s, fi);
    } else {
      rc = src_relink(s, fi, 0);
    }
    if (rc) return rc;
  }
  return 0;
}

/* Whether a slow-start window of w bytes covers flow fi's bandwidth-delay
 * product, so that it can no longer be window-limited: its fastest rate
 * alone over its round trip with what its last (SYN-)ACK waited on the way
 * back. Others' data queued at the ports its ACKs cross (a ring across a
 * leaf-spine: the flows the other way share the spine ports) holds the
 * ACKs, and a flow alone on its own links stays window-limited, its window
 * doubling a round trip through that queue, well past rmax x rtt. Its own
 * route's queues are left out: a flow queued there is rate-limited, which
 * its rounds find by themselves (clocked_schedule). */
static int window_covers(const fs_sim *s, int32_t fi, double w) {
  const fs__tflow *tf = TF(s, fi);
  if (s->dq || !(tf->rtt_s > 0)) return w >= tf->bdp; /* DCTCP: its windows take over */
  return w >= tf->bdp * (1 + tf->ack_q / tf->rtt_s);
}

/* A warm connection (persistent) whose window does not cover its round
 * trip with the queues its ACKs meet now is window-limited: it sends its
 * window a round trip at a time, growing it by a segment a round trip
 * (congestion avoidance: its own links are not marked), until it covers
 * that round trip, C1 (RTT + D). Its window is the warm one
 * (window_pkts: max(IW, ceil(C1 RTT)) packets, C1 its first link's rate),
 * so with no queue on its ACKs' way it always covers and nothing changes.
 * The queues are read as of the batch's re-rating, so flows entering at
 * one instant read the same. Under the queue model only (it holds the
 * queues); not under the DCTCP model (its windows are its own) nor for a
 * message that fits the first flight (one window: sent whole). */
static void warm_rounds(fs_sim *s, int32_t fi) {
  fs__tflow *tf = TF(s, fi);
  if (!s->portq || s->dq || tf->small || !(tf->rtt_s > 0)) return;
  pkt_route p = fs__packet_route(s, fi);
  if (p.n < 1) return;
  double c1 = s->core.cap_Bps[fs__sim_link(s, fi, p.links[0])];
  double w = fs__window_pkts(s, fi, p) * full_packet(s), d = fs__ack_wait_s(s, fi);
  if (!(c1 > 0) || w >= c1 * (tf->rtt_s + d)) return;
  tf->cwnd = tf->first = w;
  tf->bdp = c1 * tf->rtt_s;
  tf->ack_q = d;
}

/* tcp/rdma: a flow sends its first byte. A slow-starting flow's first round
 * may send one window, whose first ACK comes back a round trip and the
 * switch queues on its way later. */
static int tflow_enter(fs_sim *s, int32_t fi, int behind) {
  fs__tflow *tf = TF(s, fi);
  if (s->tp.persistent) warm_rounds(s, fi);
  tf->budget = tf->cwnd < INFINITY && !window_covers(s, fi, tf->first) ? tf->first : INFINITY;
  tf->qwin = 1;
  if (!(tf->budget < INFINITY)) {
    if (tf->cwnd < INFINITY) tf->ca_window = tf->first < tf->cwnd ? tf->first : tf->cwnd;
    tf->cwnd = INFINITY;
  }
  src_round(s, fi, s->core.flows[fi].bytes);
  tf->round_bytes = tf->budget;
  tf->round_end = s->now + tf->rtt_s + fs__route_queue_s(s, fi);
  int rc = fs__round_begins(s, fi);
  if (rc) return rc;
  double wait = behind ? 0 : fs__entry_wait_s(s, fi);
  if (wait > 0) { /* its first packet reaches its bottleneck behind the queue */
    if (fs__flow_starts(s, fi)) return FS_ENOMEM;
    return fs__reenter_at(s, &s->core.flows[fi], s->now + wait);
  }
  if ((rc = fs__flow_enter(s, fi))) return rc;
  if (s->dq) { /* DCTCP: the rounds, or a window of the initial one that grows */
    int rounds = tf->budget < INFINITY;
    double w = rounds ? tf->cwnd : s->tp.init_window * s->dq->wire_bytes;
    fs__dcqcn_slow_start(s->dq, fi, w, rounds ? FS__SS_ROUNDS : FS__SS_GROW);
  }
  return 0;
}

/* tcp: a small flow leaves its source after the small flows queued there
 * before it (the NIC sends its queue in order); others right away. */
static int admit(fs_sim *s, int32_t fi) {
  if (s->small[fi]) {
    int32_t src = s->core.flows[fi].src;
    if (s->src_busy[src] >= 0) {
      if (s->fifo_head[src] < 0) s->fifo_head[src] = fi;
      else s->fifo_nx[s->fifo_tail[src]] = fi;
      s->fifo_tail[src] = fi;
      s->fifo_nx[fi] = -1;
      return 0;
    }
    s->src_busy[src] = fi;
  }
  return s->tf_slot ? tflow_enter(s, fi, 0) : fs__flow_enter(s, fi);
}

/* A small flow fi drained: the next one queued at its source goes. */
int fs__fifo_next(fs_sim *s, int32_t fi) {
  int32_t src = s->core.flows[fi].src;
  if (!s->small[fi] || s->src_busy[src] != fi) return 0;
  int32_t nx = s->fifo_head[src];
  s->src_busy[src] = nx;
  if (nx < 0) return 0;
  s->fifo_head[src] = s->fifo_nx[nx];
  return s->tf_slot ? tflow_enter(s, nx, 1) : fs__flow_enter(s, nx);
}

/* Flow fi begins under tcp: its record from the pool, as its route set
 * it up (fs__transport_flow). */
static int tf_take(fs_sim *s, int32_t fi) {
  /* (the batch's done list: room for every record) */
  if (fs__pool_take(&s->tf_pool, &s->tf_slot[fi]) ||
      fs__grow(&s->tf_done, &s->tf_done_cap, (size_t)s->tf_pool.used, sizeof(int32_t)))
    return FS_ENOMEM;
  fs__tflow *tf = TF(s, fi);
  fs__transport_fresh(&s->tp, s->payload[fi], tf);
  tf->rtt_s = s->tf_rtt[fi];
  tf->small = s->small[fi];
  if (s->tf_conn) {
    const fs__tconn *cn = &s->tf_conn[fi];
    tf->handshake_s = cn->handshake_s;
    tf->bdp = cn->bdp;
    tf->first = cn->first;
  }
  return 0;
}

/* Flow fi is done: its record goes back to the pool once the batch is
 * over (the batch's host counts still write to it: host_count_apply). */
static void tf_give_back(fs_sim *s, int32_t fi) {
  if (s->tf_slot[fi] >= 0) s->tf_done[s->n_tf_done++] = fi;
}

void fs__tf_release_done(fs_sim *s) {
  for (int32_t i = 0; i < s->n_tf_done; i++) {
    int32_t fi = s->tf_done[i];
    fs__pool_put(&s->tf_pool, s->tf_slot[fi]);
    s->tf_slot[fi] = -1;
  }
  s->n_tf_done = 0;
}

/* tcp slow start: flow fi sent its window. If the round trip of the
 * window's first segment is not over, the flow waits for it (off its
 * links); the next round may send twice as much, until the window covers
 * the bandwidth-delay product and the flow is no longer window-limited. A
 * window that took longer than a round trip was rate-limited, not
 * window-limited: the next one starts at once. */
int fs__window_sent(fs_sim *s, int32_t fi) {
  fs__simcore *c = &s->core;
  fs__flow *f = &c->flows[fi];
  fs__tflow *tf = TF(s, fi);
  fs__settle(s, f);
  double was = tf->cwnd;
  /* slow start: a segment more per segment ACKed; a warm window (congestion
   * avoidance, RFC 5681 3.1): a segment more per round trip */
  tf->cwnd += s->tp.persistent ? full_packet(s) : tf->round_bytes;
  double next = !window_covers(s, fi, tf->cwnd) ? tf->cwnd : INFINITY;
  if (s->dq) /* DCTCP: the next round, or the round's window (all in flight),
              * which from now on grows by its ACKs as they come back */
    fs__dcqcn_slow_start(s->dq, fi, next < INFINITY ? tf->cwnd : was,
                         next < INFINITY ? FS__SS_ROUNDS : FS__SS_GROW);
  if (!(next < INFINITY)) {
    /* its standing queue grows by the round's ACKs from when the first is
     * back: what is out then is the round's window */
    tf->ca_window = was;
    tf->cwnd = INFINITY;
  }
  tf->round_bytes = next;
  double queue = fs__route_queue_s(s, fi);
  if (s->now < tf->round_end * (1 - 1e-12)) {
    int rc = fs__flow_unlink(s, fi);
    if (!rc && s->dq) rc = fs__dcqcn_sent(s->dq, fi); /* its queued bytes move on */
    if (rc) return rc;
    tf->budget = next;
    tf->qwin = 1;
    src_round(s, fi, f->remaining);
    double back = tf->round_end;
    tf->round_end = back + tf->rtt_s + queue;
    tf->round_hold = 1; /* the next round begins at back (EV_REENTER) */
    tf->ack_base = back;
    if (f->remaining <= fs__transport_last_bytes(&s->tp, s->payload[fi]) * (1 + 1e-9))
      tf->tail_pause = back - s->now;
    return fs__reenter_at(s, f, back);
  }
  tf->budget = next;
  tf->qwin = 1;
  tf->round_end = s->now + tf->rtt_s + queue;
  int rc = fs__round_begins(s, fi);
  if (rc) return rc;
  if (c->src_phase &&
      (c->src_phase[fi] != FS__SRC_RATE || src_round_phase(s, fi) != FS__SRC_RATE))
    return src_relink(s, fi, 1);
  fs__q_update(s, fi);
  supersede(s, f);
  return fs__predict(s, f);
}

/* Whether flow fi's window waits in its source link's fair queue. */
int fs__srcq_waiting(const fs_sim *s, int32_t fi) {
  return s->tcp->src_hpos && s->tcp->src_hpos[fi] >= 0;
}

/* ---- the hooks (model.h) ---- */

/* tcp: its events always; with source_fq, the source queues and the
 * core's arrays of what a waiting window takes (src_phase, src_w, src_y,
 * which maxmin.c reads: fs_sim_free frees them). */
static int tcp_setup(fs_sim *s, fs__mslot *slot) {
  if (s->tp.kind != FS_TRANSPORT_TCP) return 0;
  fs__simcore *c = &s->core;
  size_t L = (size_t)c->t->n_links;
  struct fs__tcp *t = calloc(1, sizeof(*t));
  if (!t) return FS_ENOMEM;
  t->ev_base = slot->ev_base;
  slot->st = s->tcp = t;
  if (s->tp.source_fq &&
      (!(c->src_phase = calloc((size_t)c->n_flows + 1, 1)) ||
       !(c->src_w = calloc(L ? L : 1, sizeof(double))) ||
       !(c->src_y = calloc(L ? L : 1, sizeof(double))) ||
       !(t->srcq = calloc(L ? L : 1, sizeof(*t->srcq))) ||
       !(t->src_hpos = fs__malloc((size_t)c->n_flows + 1, sizeof(int32_t))))) {
    free(t->srcq);
    free(t);
    slot->st = s->tcp = NULL;
    return FS_ENOMEM;
  }
  if (t->srcq) {
    for (int32_t fi = 0; fi <= c->n_flows; fi++) t->src_hpos[fi] = -1;
    for (size_t l = 0; l < L; l++) fs__heap_init(&t->srcq[l].h, 1, t->src_hpos);
  }
  return 1;
}

static void tcp_free(fs_sim *s, void *st) {
  struct fs__tcp *t = st;
  if (t->srcq)
    for (int32_t l = 0; l < s->core.t->n_links; l++) fs__heap_free(&t->srcq[l].h);
  FS__FREE_ALL(t->srcq, t->src_hpos, t);
  s->tcp = NULL;
}

/* A flow's dependencies and start time are met (it counts as started):
 * a new connection first spends its handshake. */
static int tcp_flow_begin(fs_sim *s, void *st, int32_t fi) {
  struct fs__tcp *t = st;
  if (s->tf_slot) {
    int rc = tf_take(s, fi);
    if (rc) return rc;
  }
  int rc;
  if (s->tf_slot && TF(s, fi)->handshake_s > 0) {
    double at = s->now + TF(s, fi)->handshake_s + fs__route_queue_s(s, fi);
    rc = s->host_flows ? ack_schedule(s, fi, FS__ACK_HANDSHAKE, at)
                       : fs__evq_push(s, at, t->ev_base + TCP_ENTER, s->core.flows[fi].item, 0);
  } else {
    rc = admit(s, fi);
  }
  return rc < 0 ? rc : 1;
}

/* Its window joins its source link's queue (after the other models: the
 * packets beside the fluid read the loads without it). */
static int tcp_flow_on(fs_sim *s, void *st, int32_t fi) {
  (void)st;
  return fs__inject(&s->core, fi, 0) ? srcq_join(s, fi) : 0;
}

static int tcp_flow_off(fs_sim *s, void *st, int32_t fi) {
  (void)st;
  return fs__inject(&s->core, fi, 0) && fs__srcq_waiting(s, fi) ? srcq_leave(s, fi) : 0;
}

/* Its record goes back (a flow run as packets has none). */
static void tcp_flow_done(fs_sim *s, void *st, int32_t fi) {
  (void)st;
  if (s->tf_slot) tf_give_back(s, fi);
}

static int tcp_event(fs_sim *s, void *st, int32_t which, const fs__event *e) {
  struct fs__tcp *t = st;
  if (which == TCP_SRC_OUT) {
    t->srcq[e->item].pending = 0; /* (popped) */
    return src_out(s, e->item);
  }
  int32_t fi = s->items[e->item].idx;
  if (which == TCP_ENTER) return admit(s, fi);
  if (which == TCP_ACK) return ack_left(s, fi);
  return flow_clocked(s, fi);
}

static int tcp_ev_live(const fs_sim *s, const void *st, int32_t which, int32_t item,
                       uint32_t version) {
  (void)s;
  return which != TCP_SRC_OUT || version == ((const struct fs__tcp *)st)->srcq[item].version;
}

/* The source queues' new shares: their clocks and next windows. */
static int tcp_filled(fs_sim *s, void *st) {
  struct fs__tcp *t = st;
  fs__simcore *c = &s->core;
  if (!t->srcq) return 0;
  for (int32_t i = 0; i < s->mm.n_comp_links; i++) {
    int32_t l = s->mm.comp_links[i];
    double y = s->mm.new_y[l];
    if (!(c->src_w[l] > 0) || y == c->src_y[l]) continue;
    srcq_advance(s, l);
    c->load[l] += c->src_w[l] * (y - c->src_y[l]);
    c->src_y[l] = y;
    if (srcq_predict(s, l)) return FS_ENOMEM;
    if (s->portq) /* its windows' queues downstream grow at the new excess */
      for (size_t j = 0; j < t->srcq[l].h.len; j++) fs__q_update(s, t->srcq[l].h.e[j].a);
  }
  return 0;
}

const fs__model fs__model_tcp = {
    .name = "tcp",
    .n_events = 4,
    .setup = tcp_setup,
    .free = tcp_free,
    .flow_begin = tcp_flow_begin,
    .flow_on = tcp_flow_on,
    .flow_off = tcp_flow_off,
    .flow_done = tcp_flow_done,
    .event = tcp_event,
    .ev_live = tcp_ev_live,
    .filled = tcp_filled,
};
