/* Switch port queues of the tcp model (docs/model.md, "Queues"): per link
 * what the flows queued at its port hold (fs__portq: bursts and flows in
 * congestion avoidance, each as bytes falling at a rate), the standing
 * queue of DCTCP's marks (slow start, cuts, climb), where along its route
 * each flow queues (the level of its packet route whose ports are full),
 * the waits a handshake, a round's ACK or a last packet meet there, and
 * the count of flows on host links. Costs: O(route) per flow whose rate
 * changes, O(flows on a link) when a port fills or empties. Sizes: one
 * record (~140 bytes) a link. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "model.h"

/* A change of host_flows waiting for the batch's end: link's count moves
 * by delta; link -1: flow's `hcounted` becomes delta > 0. */
typedef struct hc_change {
  int32_t link, flow;
  double delta;
} hc_change;

/* The model's own state (the per-link arrays the other rooms read are
 * fs_sim's: portq, host_flows, can_bind): the host link counts' changes
 * waiting for the batch's end. */
typedef struct portqs {
  hc_change *pending;
  size_t n, cap;
} portqs;

pkt_route fs__packet_route(const fs_sim *s, int32_t fi) {
  const fs__simcore *c = &s->core;
  const fs__flow *f = &c->flows[fi];
  if (s->paths && s->paths[fi].links)
    return (pkt_route){s->paths[fi].links, s->paths[fi].w, s->paths[fi].n};
  if (f->rid >= 0)
    return (pkt_route){c->proutes[f->rid].links, c->proutes[f->rid].w, c->proutes[f->rid].n};
  return (pkt_route){f->links, f->w, f->n};
}

/* What flow fi's last packet, leaving the source now, waits at
 * switch ports for the flow's packet before it (tcp, rdma). */
double fs__tail_wait(const fs_sim *s, int32_t fi) {
  if (!s->tail_reach || !(s->tail_reach[fi] > 0)) return 0;
  const fs__flow *f = &s->core.flows[fi];
  double rate = f->last_s < s->now || !s->tail_rate ? f->rate : s->tail_rate[fi];
  if (!(rate > 0)) return 0;
  double gap = full_packet(s) / rate;
  if (s->tf_slot) gap += TF(s, fi)->tail_pause;
  return s->tail_reach[fi] > gap ? s->tail_reach[fi] - gap : 0;
}

/* Where link l of flow fi's packet route is in the simulation: its orbit's
 * representative for a quotient flow, else itself. */
int32_t fs__sim_link(const fs_sim *s, int32_t fi, int32_t l) {
  return s->paths && s->paths[fi].links ? s->lrep[l] : l;
}

/* The part of what one flow queues at link l of its packet route that each
 * link of the simulation's link holds: a quotient flow stands for its orbit
 * of flows, whose queues spread over the |O| links of l's orbit. */
static double queue_mult(const fs_sim *s, int32_t fi, int32_t l) {
  return s->paths && s->paths[fi].links ? s->paths[fi].orbit / s->lorb[l] : 1;
}

/* Whether portq[l].merge_back is of l's flows as they are now. */
static int merge_current(const fs_sim *s, int32_t l) {
  return s->portq[l].merge_ver == s->core.active[l].version + 1u;
}

/* Saturated link l's flows, all of them, may come over the same links
 * before it: then their packets merge, and queue, where the first of
 * those links leaves a switch, and reach l no faster than it sends (E0
 * and E1 into one host over the same aggregation switch queue at its
 * port, not at the host's). Sets portq[l].merge_back to how many links
 * before l that is, along single-link levels whose rates do not rise
 * towards l; 0 under a symmetry (a quotient's representatives do not
 * say which images share a link) or when a flow has no such link. Cached
 * by l's flows' version; returns whether it changed. */
static int merge_back(fs_sim *s, int32_t l) {
  const fs__simcore *c = &s->core;
  const fs__link_active *a = &c->active[l];
  fs__portq *q = &s->portq[l];
  if (merge_current(s, l)) return 0;
  int32_t back = 0;
  const int32_t *ref = NULL;
  int32_t ref_i = 0;
  for (int32_t j = 0; j < a->n && !s->paths; j++) {
    pkt_route p = fs__packet_route(s, a->flow[j]);
    int32_t i = 0;
    while (i < p.n && p.links[i] != l) i++;
    if (i == p.n || p.w[i] != 1) {
      back = 0;
      break;
    }
    int32_t b = 0;
    if (!ref) { /* as far back as the first flow's route allows */
      ref = p.links;
      ref_i = i;
      const fs_topo *t = c->t;
      while (i - b - 1 >= 0 && p.w[i - b - 1] == 1 &&
             t->nodes[t->links[p.links[i - b - 1]].from].kind == FS_NODE_SWITCH &&
             c->cap_Bps[p.links[i - b - 1]] <= c->cap_Bps[p.links[i - b]])
        b++;
    } else {
      while (b < back && i - b - 1 >= 0 && p.w[i - b - 1] == 1 &&
             p.links[i - b - 1] == ref[ref_i - b - 1])
        b++;
    }
    back = b;
    if (!back) break;
  }
  int changed = back != q->merge_back;
  q->merge_back = back;
  q->merge_ver = a->version + 1u;
  return changed;
}

/* Whether link l is saturated and can bind, so that packets queue at its
 * port (queue_level; the saturated flag of rerate). */
static int queues_full(const fs_sim *s, int32_t l) {
  const fs__simcore *c = &s->core;
  return (!s->can_bind || s->can_bind[l]) && c->cap_Bps[l] > 0 && link_full(c, l);
}

/* tcp queue model (docs/model.md, "Transport": queues at switch ports).
 * A flow's packets queue at the first level of its packet route with a
 * link that is saturated and can bind: downstream they arrive no faster
 * than they are served. A level is the links every path crosses once (a
 * run of entries whose weights sum to 1, in route order: one link per level
 * on a single path, a sprayed route's links of one hop), and the queue
 * spreads over its switch ports as the packets do, by weight: the same
 * rule for every image of a flow under a symmetry, so a quotient holds
 * each orbit's queues exactly. A link that cannot bind (prune.c) is at
 * most exactly full; it never queues for itself, whether or not it is left
 * out of the rating, which keeps the results the same either way. But
 * where all of a saturated one-link level's flows come over the same links
 * (merge_back, as of the batch's re-rating), their packets queue at the
 * first of those, upstream, whatever can bind there. Sets [*k0, *k1) in
 * the packet route; 0 if none. */
static int queue_level(const fs_sim *s, int32_t fi, int32_t *k0, int32_t *k1) {
  const fs__simcore *c = &s->core;
  pkt_route p = fs__packet_route(s, fi);
  /* a window leaving the source's fair queue (or out of it) is not
   * served there in the order it arrives */
  int skip0 = c->src_phase && c->src_phase[fi] != FS__SRC_RATE;
  double acc = 0;
  int32_t level = 0, first = 0, sat = 0;
  for (int32_t k = 0; k < p.n; k++) {
    int32_t l = fs__sim_link(s, fi, p.links[k]);
    if (!(level == 0 && skip0) && queues_full(s, l)) sat = 1;
    acc += p.w[k];
    if (acc >= level + 1 - 1e-6 || k == p.n - 1) { /* the level ends */
      if (sat) {
        *k0 = first;
        *k1 = k + 1;
        if (first == k && merge_current(s, l)) {
          *k0 = first - s->portq[l].merge_back; /* where its flows merge (merge_back) */
          *k1 = *k0 + 1;
        }
        return 1;
      }
      level++;
      first = k + 1;
    }
  }
  return 0;
}

/* DCTCP's marking threshold K at port l, in packets: queue_k at 100 Gb/s,
 * scaled with the port's rate. */
static double port_k_pkts(const fs_sim *s, int32_t l) {
  return s->tp.queue_k * (s->core.t->links[l].capacity_bps / 100e9);
}

/* DCTCP's mean queue at port l, in packets: K + N - A / 2 (K scaled with
 * the port's rate), between its sawtooth's top K + N and bottom K + N - A
 * (at least 0), A = sqrt(2 N (C RTT + K)) / 2 for the N flows in
 * congestion avoidance there, of mean round trip RTT (Alizadeh et al.,
 * "Data Center TCP (DCTCP)", SIGCOMM 2010, 3.3). */
static double dctcp_mean_pkts(const fs_sim *s, int32_t l) {
  const fs__portq *q = &s->portq[l];
  double pkt = full_packet(s);
  double k = port_k_pkts(s, l);
  double n = q->ca_flows > 0 ? q->ca_flows : 0;
  double bdp = n > 0 ? s->core.cap_Bps[l] * (q->ca_rtt / n) / pkt : 0;
  double a = sqrt(2 * n * (bdp + k)) / 2, bottom = k + n - a;
  return (k + n + (bottom > 0 ? bottom : 0)) / 2;
}

/* Port l's bandwidth-delay product in packets at the mean round trip of
 * its flows in congestion avoidance (some). */
static double port_bdp_pkts(const fs_sim *s, int32_t l) {
  const fs__portq *q = &s->portq[l];
  double c = s->core.cap_Bps[l] / full_packet(s);
  return c * q->ca_rtt / q->ca_flows;
}

/* The standing queue of port l's flows in congestion avoidance (tcp
 * model; docs/model.md, "Queues at switch ports"), in packets, brought to
 * now through its phases, each in closed form (C the port's rate in
 * packets a second, B = C RTT its bandwidth-delay product at the flows'
 * mean round trip, K DCTCP's marking threshold, N the flows):
 *  - slow start (new connections): each ACK of theirs adds a packet, so
 *    the queue grows at their rate through the port from the windows'
 *    excess over their bandwidth-delay products; RED marks the first
 *    packet some way past K (fs__pktnet_red_first_mark), which echoes
 *    back a round trip through the queue it joined later, by when the
 *    queue is at 2K + B and twice that way (the windows alone);
 *  - cuts: each echo cuts the windows by alpha / 2, W' = (Q + B)(1 -
 *    alpha / 2), and the queue drains at C to W' - B while the senders
 *    wait; one cut a round trip while the queue stays over K. alpha starts
 *    at 1 and decays by 1 - g (g = 1/16) once a round without marks: by
 *    the first echo, once per doubling of the windows from their first
 *    flights, log2((Q + B) / W0) rounds; each round after that is marked
 *    whole (F = 1);
 *  - climb (where warm connections begin, their windows covering their
 *    bandwidth-delay products): a packet per flow per round trip, which
 *    the queue itself lengthens: (RTT + Q / C) dQ = N dt, so over dt
 *    Q' = sqrt((B + Q)^2 + 2 N C dt) - B, up to DCTCP's mean.
 * (ns-3's DCTCP, traced at the port of the validation's mice-chains: slow
 * start to a peak of 152 packets for 151.0, cuts to 92 and 55 for 87.8
 * and 49.1, then the climb.) */
void fs__standing_advance(fs_sim *s, int32_t l) {
  fs__portq *q = &s->portq[l];
  double t = q->climb_t;
  q->climb_t = s->now;
  if (!(s->now > t)) return;
  if (!(q->ca_flows > 0)) { /* none for a while (not a flow re-rated): drained */
    q->climb = 0;
    q->episode = 0;
    return;
  }
  double pkt = full_packet(s), c = s->core.cap_Bps[l] / pkt;
  double b = port_bdp_pkts(s, l);
  double k = port_k_pkts(s, l), g = 1.0 / 16;
  while (t < s->now) {
    if (q->phase == FS__SQ_SLOW_START) {
      if (q->warm_t > t) { /* the windows' packets not there yet */
        if (q->warm_t >= s->now) break;
        t = q->warm_t;
      }
      double grow = q->ca_rate / pkt;
      if (!(grow > 0)) break; /* no ACKs come back: it stands */
      if (q->cut_t < 0) {
        double past = 0; /* how far past K the first marked packet joins */
        if (q->climb < k) {
          double t_k = t + (k - q->climb) / grow;
          if (t_k >= s->now) {
            q->climb += grow * (s->now - t);
            break;
          }
          q->climb = k;
          t = t_k;
          /* RED marks none for a while past K: c + grow packets join
           * while the queue grows by grow */
          past = fs__pktnet_red_first_mark(k, (c + grow) / grow);
        }
        /* the first marked packet's echo: a round trip through the queue
         * it joined */
        q->cut_t = t + past / grow + (b + k + past) / c;
      }
      double t1 = q->cut_t < s->now ? q->cut_t : s->now;
      q->climb += grow * (t1 - t);
      t = t1;
      if (t < q->cut_t) break;
      double rounds = q->ss_first > 0 ? log2((q->climb + b) / q->ss_first) : 0;
      q->alpha = pow(1 - g, rounds > 0 ? rounds : 0);
      q->phase = FS__SQ_CUTS;
    } else if (q->phase == FS__SQ_CUTS) {
      if (t >= q->cut_t) { /* a cut takes effect: the next one a round trip on */
        double w = (q->climb + b) * (1 - q->alpha / 2);
        q->cut_to = w > b ? w - b : 0;
        q->cut_t = t + (b + q->climb) / c;
        q->alpha = (1 - g) * q->alpha + g;
      }
      double t1 = q->cut_t < s->now ? q->cut_t : s->now;
      q->climb = fmax(q->climb - c * (t1 - t), q->cut_to);
      t = t1;
      if (t < q->cut_t) break;
      if (q->climb <= k) q->phase = FS__SQ_CLIMB;
    } else {
      if (q->warm_t > t) { /* no warm window there yet */
        if (q->warm_t >= s->now) break;
        t = q->warm_t;
      }
      if (q->climb < q->warm_to) { /* warm windows still arriving */
        double ramp = (q->warm_in / pkt - c);
        if (!(ramp > 0)) {
          q->warm_to = 0; /* they come no faster than the port sends: no queue there */
        } else {
          double t_to = t + (q->warm_to - q->climb) / ramp;
          if (t_to >= s->now) {
            q->climb += ramp * (s->now - t);
            break;
          }
          q->climb = q->warm_to;
          t = t_to;
        }
      }
      double up = sqrt((b + q->climb) * (b + q->climb) + 2 * q->ca_flows * c * (s->now - t)) - b;
      double top = dctcp_mean_pkts(s, l);
      q->climb = up < top ? up : top;
      break;
    }
  }
}

/* What flow fi's window brings to the port it queues at in congestion
 * avoidance the first time, in packets. A new connection's is its window
 * when it left slow start (standing_join). A warm window covers its
 * path's bandwidth-delay product and is at least the initial window (the
 * reference's warm-up): max(IW, ceil(C RTT)) packets (C the rate of the
 * first link of its packet route p). */
double fs__window_pkts(const fs_sim *s, int32_t fi, pkt_route p) {
  double pkt = full_packet(s);
  const fs__tflow *tf = TF(s, fi);
  if (!s->tp.persistent) return tf->ca_window / pkt;
  double cap = s->core.cap_Bps[fs__sim_link(s, fi, p.links[0])];
  double w = ceil(cap * tf->rtt_s / pkt);
  return w < s->tp.init_window ? s->tp.init_window : w;
}

/* A standing queue begins at port l (its first flow in congestion
 * avoidance after none): new connections' in slow start, warm ones' in
 * the climb. */
static void standing_begin(fs_sim *s, int32_t l) {
  fs__portq *q = &s->portq[l];
  q->episode = 1;
  q->phase = s->tp.persistent ? FS__SQ_CLIMB : FS__SQ_SLOW_START;
  q->cut_t = -1;
  q->ss_win = q->ss_first = q->warm_in = q->warm_to = q->warm_t = 0;
}

/* A flow's window (w packets at port l; first: its first flight; in_Bps:
 * the rate its packets reach the port at, reach_s: when the first of
 * them does, from now) joins the standing queue there
 * (standing_advance). Warm windows together fill the port's
 * bandwidth-delay product and queue the rest, which builds up from the
 * first one's arrival at the excess of their arrival over the port's
 * rate; a new connection's window, once the windows fill that product,
 * queues whole. */
static void standing_join(fs_sim *s, int32_t l, double w, double first, double in_Bps,
                          double reach_s) {
  fs__portq *q = &s->portq[l];
  if (s->tp.persistent) {
    if (!(q->ss_win > 0)) q->warm_t = s->now + reach_s;
    q->ss_win += w;
    q->warm_in += in_Bps;
    double x = q->ss_win - port_bdp_pkts(s, l);
    if (x > q->warm_to) q->warm_to = x;
    return;
  }
  if (q->phase != FS__SQ_SLOW_START || q->cut_t >= 0) {
    q->climb += w;
    return;
  }
  /* the windows' packets reach the port reach_s after they leave: the
   * queue builds from the first that does (as the warm windows' above) */
  if (!(q->ss_win > 0) || (q->warm_t > s->now && s->now + reach_s < q->warm_t))
    q->warm_t = s->now + reach_s;
  q->ss_win += w;
  q->ss_first += first;
  if (q->climb > 0) { /* the pipe is full: it queues whole */
    q->climb += w;
    return;
  }
  double b = port_bdp_pkts(s, l);
  q->climb = q->ss_win > b ? q->ss_win - b : 0;
}

/* Brings port l's queue sums to now: between a flow's events its queued
 * bytes fall at its rate (and reach 0 at its next event at the latest). */
void fs__q_advance(fs_sim *s, int32_t l) {
  fs__portq *q = &s->portq[l];
  double dt = s->now - q->t;
  if (dt > 0) {
    q->burst -= q->burst_rate * dt;
    q->ca -= q->ca_rate * dt;
    if (q->burst < 0) q->burst = 0;
    if (q->ca < 0) q->ca = 0;
  }
  q->t = s->now;
}

/* The rate at which flow fi's packets reach the ports it queues at: its
 * first link's. */
double fs__arrival_Bps(const fs_sim *s, int32_t fi) {
  pkt_route p = fs__packet_route(s, fi);
  return p.n ? s->core.cap_Bps[fs__sim_link(s, fi, p.links[0])] : INFINITY;
}

/* A full packet's time over entry k of packet route p: its transmission
 * and the link's latency (store and forward). */
static double hop_s(const fs_sim *s, pkt_route p, int32_t k) {
  const fs_link *lk = &s->core.t->links[p.links[k]];
  return full_packet(s) * 8 / lk->capacity_bps +
         (double)lk->latency_ns * 1e-9;
}

/* How long after leaving its source a flow's packet begins to leave the
 * port of entry k of its packet route p: a full packet's time and the
 * latency of every hop before k's level (a sprayed level's by weight). */
double fs__port_reach_s(const fs_sim *s, pkt_route p, int32_t k) {
  double d = 0, level_d = 0, level_w = 0;
  for (int32_t j = 0; j < k; j++) {
    d += p.w[j] * hop_s(s, p, j);
    level_w += p.w[j];
    if (level_w > 1 - 1e-9) { /* a level ends: the next begins after it */
      level_d = d;
      level_w = 0;
    }
  }
  return level_d;
}

/* port_reach_s of link l on flow fi's packet route p (the whole route's
 * if l is not on it). */
double fs__link_reach_s(const fs_sim *s, int32_t fi, pkt_route p, int32_t l) {
  int32_t k = 0;
  while (k < p.n && fs__sim_link(s, fi, p.links[k]) != l) k++;
  return fs__port_reach_s(s, p, k);
}

/* The part of flow fi's queued bytes that entry k of its packet route p
 * puts at the port it leaves: 0 unless a switch sends it (hosts keep their
 * own queues), else its weight times the port's orbit multiplicity. */
double fs__queue_share(const fs_sim *s, int32_t fi, pkt_route p, int32_t k) {
  const fs_topo *t = s->core.t;
  if (t->nodes[t->links[p.links[k]].from].kind != FS_NODE_SWITCH) return 0;
  return p.w[k] * queue_mult(s, fi, p.links[k]);
}

/* Adds (sign 1) or takes out (-1) flow fi's queued bytes, e now falling at
 * r, at the switch ports of its queue's level. */
static void q_spread(fs_sim *s, int32_t fi, double sign, double e, double r) {
  fs__tflow *tf = TF(s, fi);
  pkt_route p = fs__packet_route(s, fi);
  /* joining congestion avoidance: its window's part of the standing queue */
  int joins = tf->qca && sign > 0 && !tf->climbed;
  double w = joins ? fs__window_pkts(s, fi, p) : 0, pkt = full_packet(s);
  double next = 0; /* joining: when its first packet reaches the port of entry k */
  for (int32_t k = 0; joins && k < tf->qlink; k++) next += hop_s(s, p, k);
  for (int32_t k = tf->qlink; k < tf->qend; k++) {
    double reach = next;
    if (joins) next += hop_s(s, p, k);
    double x = fs__queue_share(s, fi, p, k);
    if (!(x > 0)) continue;
    int32_t l = fs__sim_link(s, fi, p.links[k]);
    fs__q_advance(s, l);
    fs__portq *q = &s->portq[l];
    if (tf->qca) {
      fs__standing_advance(s, l); /* up to now with the flows it had */
      q->ca = fmax(q->ca + sign * e * x, 0);
      q->ca_rate += sign * r * x;
      q->n_ca += (int32_t)sign;
      q->ca_flows += sign * x;
      q->ca_rtt += sign * x * tf->rtt_s;
      if (q->n_ca == 0) /* exactly, whatever rounding left */
        q->ca = q->ca_rate = q->ca_flows = q->ca_rtt = 0;
      if (sign > 0 && !q->episode) standing_begin(s, l);
      if (joins)
        standing_join(s, l, x * fmax(w - tf->ss_lost / pkt, 0), x * tf->first / pkt,
                      x * fs__arrival_Bps(s, fi), reach);
    } else {
      q->burst = fmax(q->burst + sign * e * x, 0);
      q->burst_rate += sign * r * x;
      q->n_burst += (int32_t)sign;
      if (q->n_burst == 0) q->burst = q->burst_rate = 0;
    }
  }
  if (joins) tf->climbed = 1; /* on every port of its level */
}

/* Takes flow fi's queued bytes out of the ports it queues at. */
static void q_remove(fs_sim *s, int32_t fi) {
  fs__tflow *tf = TF(s, fi);
  if (tf->qlink < 0) return;
  tf->qup = fmax(tf->qup - fs__arrival_Bps(s, fi) * (s->now - tf->qsince), 0);
  double e = tf->qbytes - tf->qrate * (s->now - tf->qsince);
  q_spread(s, fi, -1, e < 0 ? 0 : e, tf->qrate);
  tf->qlink = -1;
}

/* What flow f has sent since it was last settled (at its rate since
 * last_s): its bytes left and its round's budget are that much lower now. */
double fs__sent_since(const fs_sim *s, const fs__flow *f) {
  return f->rate * (s->now - f->last_s);
}

/* Puts flow fi's queued bytes (now) at the ports it queues at: what it has
 * sent in packets but not yet at its fluid rate. A window goes out at
 * once, so a slow-start round holds the part of its window (at most what
 * the flow has left) its rate has not carried yet; a message sent whole
 * or a flow no longer window-limited (DCTCP's congestion avoidance) holds
 * what it has left, the latter at most the port's standing queue
 * (standing_bytes). Under the
 * source fair queue a window goes out at its queue's share instead: what
 * has left the source and not been carried, growing at the share's excess
 * over the rate while the window waits. */
static void q_add(fs_sim *s, int32_t fi) {
  const fs__simcore *c = &s->core;
  const fs__flow *f = &c->flows[fi];
  fs__tflow *tf = TF(s, fi);
  double r = f->rate;
  int32_t k0, k1;
  if (!(r > 0) || !queue_level(s, fi, &k0, &k1)) return;
  double sent = fs__sent_since(s, f), rem = f->remaining - sent, b = tf->budget - sent;
  double e = b < rem ? b : rem;
  if (fs__inject(c, fi, 0)) {
    /* what has left the source, growing at the source share's excess */
    if (fs__srcq_waiting(s, fi)) {
      int32_t l0 = f->links[0];
      e -= tf->tag - fs__srcq_clock(s, l0);
      r -= c->src_y[l0];
    }
    if (!(e > 0) && !(r < 0)) return;
    if (e < 0) e = 0;
  } else if (!(e > 0)) {
    return;
  }
  tf->qca = tf->budget == INFINITY && !s->small[fi];
  tf->qup = tf->qwin ? e : fmin(tf->qup, e);
  tf->qwin = 0;
  tf->qlink = k0;
  tf->qend = k1;
  tf->qbytes = e;
  tf->qrate = r;
  tf->qsince = s->now;
  q_spread(s, fi, 1, e, r);
}

/* Whether flow fi would now queue at another level than it does (a link on
 * its route saturated or stopped): a flow that queues nowhere is asked
 * again whenever it has a level. */
static int queue_moved(const fs_sim *s, int32_t fi) {
  const fs__tflow *tf = TF(s, fi);
  int32_t k0, k1;
  if (!queue_level(s, fi, &k0, &k1)) return tf->qlink >= 0;
  return tf->qlink != k0 || tf->qend != k1;
}

/* After flow fi's rate, budget or the loads on its route changed. */
void fs__q_update(fs_sim *s, int32_t fi) {
  if (!s->portq) return;
  q_remove(s, fi);
  q_add(s, fi);
}

/* What port l's flows in congestion avoidance keep queued there now, in
 * bytes (port l brought to now, n_ca > 0): what they hold, at most their
 * standing queue (standing_advance). */
double fs__standing_bytes(fs_sim *s, int32_t l) {
  const fs__portq *q = &s->portq[l];
  fs__standing_advance(s, l);
  double pkts = q->climb;
  if (q->phase == FS__SQ_SLOW_START && s->now < q->warm_t) pkts = 0;
  if (q->phase == FS__SQ_CLIMB) { /* a window that joined since is above it only at once */
    double top = dctcp_mean_pkts(s, l);
    if (top < pkts) pkts = top;
  }
  double k = pkts * full_packet(s);
  return q->ca < k ? q->ca : k;
}

/* The queueing delay of port l now: its bursts and its standing queue
 * (standing_bytes). */
double fs__port_queue_s(fs_sim *s, int32_t l) {
  if (l < 0) return 0;
  if (s->dq) return fs__dcqcn_wait_s(s->dq, &s->core, l, s->now); /* DCTCP's FIFO ports */
  fs__portq *q = &s->portq[l];
  if ((!q->n_burst && !q->n_ca) || !(s->core.cap_Bps[l] > 0)) return 0;
  fs__q_advance(s, l);
  return (q->burst + (q->n_ca ? fs__standing_bytes(s, l) : 0)) / s->core.cap_Bps[l];
}

/* The standing part of port l's queue now (port_queue_s without the
 * bursts). */
static double port_standing_s(fs_sim *s, int32_t l) {
  if (l < 0) return 0;
  fs__portq *q = &s->portq[l];
  if (!q->n_ca || !(s->core.cap_Bps[l] > 0)) return 0;
  fs__q_advance(s, l);
  return fs__standing_bytes(s, l) / s->core.cap_Bps[l];
}

/* A packet leaving a host (or its NIC) on link l while another flow sends
 * there: the host's fair queue serves it after the packet on the wire,
 * which has half a full packet's time left on average (the mean residual
 * of a deterministic service, Kleinrock, Queueing Systems vol. 1, 5.2),
 * and when the host sends at line rate (the link saturated) after the
 * packet its NIC already took from that queue too (the reference's device
 * queue of one packet; a NIC's transmit ring). self: the flow the packet
 * belongs to is counted on l. */
static double host_residual_s(fs_sim *s, int32_t l, int self) {
  /* only host links are counted (host_count): 0 elsewhere */
  if (l < 0 || !(s->host_flows[l] - self > 0.5)) return 0;
  double full = full_packet(s) / s->core.cap_Bps[l];
  int saturated = s->dq ? fs__dq_port_full(s, l) : s->portq[l].saturated;
  return full / 2 + (saturated ? full : 0);
}

/* How many of route p's first entries leave a host or its NIC (before its
 * first switch): the links whose waits are a host's (host_residual_s). */
static int32_t n_host_entries(const fs_topo *t, pkt_route p) {
  int32_t k = 0;
  while (k < p.n && t->nodes[t->links[p.links[k]].from].kind != FS_NODE_SWITCH) k++;
  return k;
}

/* Counts flow fi (sign 1) or stops counting it (-1) on the host links its
 * packets leave by (the first entries of its packet route, before the
 * first switch): whether or not the rating keeps them, and for a quotient
 * flow its orbit's members per link (orbit / |O|). The change is applied
 * at the batch's re-rating, as the port queues are: what a packet finds
 * must not depend on the order of the events of one instant. */
static int host_count(fs_sim *s, portqs *pq, int32_t fi, double sign) {
  if (!s->host_flows) return 0;
  const fs__simcore *c = &s->core;
  pkt_route p = fs__packet_route(s, fi);
  int32_t nh = n_host_entries(c->t, p);
  if (fs__grow(&pq->pending, &pq->cap, pq->n + (size_t)nh + 1, sizeof(*pq->pending)))
    return FS_ENOMEM;
  for (int32_t k = 0; k < nh; k++)
    pq->pending[pq->n++] =
        (hc_change){fs__sim_link(s, fi, p.links[k]), fi, sign * queue_mult(s, fi, p.links[k])};
  pq->pending[pq->n++] = (hc_change){-1, fi, sign};
  return 0;
}

/* The batch's host link counts (host_count). */
static void host_count_apply(fs_sim *s, portqs *pq) {
  for (size_t i = 0; i < pq->n; i++) {
    const hc_change *h = &pq->pending[i];
    if (h->link >= 0) s->host_flows[h->link] += h->delta;
    else TF(s, h->flow)->hcounted = h->delta > 0;
  }
  pq->n = 0;
}

/* What a packet of flow fi waits now on its way: in the switch queues of
 * its packet route, and leaving its host behind the other flows' packets
 * (its answer's waits on the way back: ack_wait_s, read when it leaves). */
double fs__route_queue_s(fs_sim *s, int32_t fi) {
  if (!s->portq && !s->dq) return 0;
  const fs_topo *t = s->core.t;
  pkt_route p = fs__packet_route(s, fi);
  int self = TF(s, fi)->hcounted;
  double d = 0;
  for (int32_t k = 0; k < p.n; k++)
    d += p.w[k] * fs__port_queue_s(s, fs__sim_link(s, fi, p.links[k]));
  for (int32_t k = 0, nh = n_host_entries(t, p); k < nh; k++)
    d += p.w[k] * host_residual_s(s, fs__sim_link(s, fi, p.links[k]), self);
  return d;
}

/* What flow fi's first data packet waits at the switch ports of its route
 * (tcp model without DCTCP's own queues): the queues others left there. A
 * FIFO port serves it after them whatever share the fluid drain would give
 * it at once (the drain is work-conserving for the port, not per flow). */
double fs__entry_wait_s(fs_sim *s, int32_t fi) {
  if (!s->portq || s->dq) return 0;
  pkt_route p = fs__packet_route(s, fi);
  double d = 0;
  for (int32_t k = 0; k < p.n; k++)
    d += p.w[k] * port_standing_s(s, fs__sim_link(s, fi, p.links[k]));
  return d;
}

/* What flow fi's SYN-ACK or ACKs wait on their way back: the switch queues
 * on the reverses of its links, and leaving the receiver's host behind what
 * it sends itself (host_residual_s on the reverses of its last entries,
 * after the last switch). */
double fs__ack_wait_s(fs_sim *s, int32_t fi) {
  const fs_topo *t = s->core.t;
  pkt_route p = fs__packet_route(s, fi);
  double d = 0;
  for (int32_t k = 0; k < p.n; k++) {
    int32_t rev = t->links[p.links[k]].reverse;
    if (rev >= 0) d += p.w[k] * fs__port_queue_s(s, fs__sim_link(s, fi, rev));
  }
  for (int32_t k = p.n - 1; k >= 0 && t->nodes[t->links[p.links[k]].to].kind != FS_NODE_SWITCH;
       k--) {
    int32_t rev = t->links[p.links[k]].reverse;
    if (rev >= 0) d += p.w[k] * host_residual_s(s, fs__sim_link(s, fi, rev), 0);
  }
  return d;
}

/* ---- the hooks (model.h) ---- */

/* tcp with switch queues (queue_k > 0) and tcp records: the queues delay
 * handshakes and slow-start rounds, none without them. Under DCTCP the
 * rate control keeps the queues (dcqcn.c): host counts only. */
static int pq_setup(fs_sim *s, fs__mslot *slot) {
  int state = s->tp.kind == FS_TRANSPORT_TCP && (!s->tp.persistent || !dcqcn(s));
  if (!(state && s->tp.queue_k > 0)) return 0;
  size_t L = (size_t)s->core.t->n_links;
  portqs *pq = calloc(1, sizeof(*pq));
  if (!pq || (!dcqcn(s) && !(s->portq = calloc(L ? L : 1, sizeof(*s->portq)))) ||
      !(s->host_flows = calloc(L ? L : 1, sizeof(double)))) {
    free(pq);
    free(s->portq);
    s->portq = NULL;
    return FS_ENOMEM;
  }
  slot->st = pq;
  return 1;
}

static void pq_free(fs_sim *s, void *st) {
  portqs *pq = st;
  FS__FREE_ALL(pq->pending, pq, s->portq, s->host_flows, s->can_bind);
  s->portq = NULL;
  s->host_flows = NULL;
  s->can_bind = NULL;
}

static int pq_flow_on(fs_sim *s, void *st, int32_t fi) { return host_count(s, st, fi, 1); }

static int pq_flow_off(fs_sim *s, void *st, int32_t fi) {
  if (s->portq) q_remove(s, fi);
  return host_count(s, st, fi, -1);
}

/* The counts change at the batch's end, as the port queues do: what a
 * packet finds must not depend on the order of the events of one instant. */
static int pq_batch(fs_sim *s, void *st) {
  portqs *pq = st;
  if (pq->n) host_count_apply(s, pq);
  return 0;
}

/* The loads are final: where each flow queues, and how much. */
static int pq_rerated(fs_sim *s, void *st) {
  const fs__simcore *c = &s->core;
  const fs__maxmin *mm = &s->mm;
  (void)st;
  if (!s->portq) return 0;
  for (int32_t i = 0; i < mm->n_comp_links; i++) {
    int32_t l = mm->comp_links[i];
    uint8_t sat = (uint8_t)queues_full(s, l);
    s->portq[l].flipped = sat != s->portq[l].saturated;
    s->portq[l].saturated = sat;
    if (sat && merge_back(s, l)) s->portq[l].flipped = 1;
  }
  for (int32_t i = 0; i < mm->n_comp_flows; i++) fs__q_update(s, mm->comp_flows[i]);
  /* a link that saturated or stopped can move where the other flows on it
   * queue (their rates and budgets are as they were) */
  for (int32_t i = 0; i < mm->n_comp_links; i++) {
    int32_t l = mm->comp_links[i];
    if (!s->portq[l].flipped) continue;
    s->portq[l].flipped = 0;
    for (int32_t j = 0; j < c->active[l].n; j++) {
      int32_t g = c->active[l].flow[j];
      if (mm->flow_seen[g] != mm->epoch && queue_moved(s, g)) fs__q_update(s, g);
    }
  }
  return 0;
}

/* A link that can never bind never queues (queues_full). */
static uint8_t **pq_bind_map(fs_sim *s, void *st) {
  (void)st;
  return s->portq ? &s->can_bind : NULL;
}

const fs__model fs__model_portq = {
    .name = "portq",
    .setup = pq_setup,
    .free = pq_free,
    .flow_on = pq_flow_on,
    .flow_off = pq_flow_off,
    .batch = pq_batch,
    .rerated = pq_rerated,
    .bind_map = pq_bind_map,
};
