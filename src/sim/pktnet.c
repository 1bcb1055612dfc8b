/* Packet-level network (pktnet.h).
 *
 * Events on one heap ordered by (time, push order): a user event, a host's
 * NIC is free, a RoCE queue pair's pacer lets its next packet go, a link's
 * first packet on the way reaches the link's far end
 * (each link keeps its packets on the way in a lane, in time order). A switch port
 * is a FIFO whose sender is free at free_at; the packets it holds that
 * have not begun to leave are kept in a ring of their start times and
 * bytes (RED judges the queue a packet joins). A host holds a queue per flow and
 * direction (data and SYN one way, SYN-ACK and ACKs the other) under
 * FQ-CoDel's scheduler, in front of its NIC and the NIC's device queue of
 * one packet, as the ns-3 backend's hosts. A flow's state lives in a slot,
 * taken when it begins and given back when its last packet is home (the
 * last ACK, or on a new connection the ACK of the receiver's FIN; under
 * roce its last data packet and the last CNP it caused), so
 * memory follows the flows in flight. Cost: O(packets x hops x log links
 * busy). */
#include "pktnet.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"

/* EV_SYNACK: a listening host answers a SYN, as ns-3's does, in an event
 * of its own at the same instant (TcpSocketBase forks the connection with
 * ScheduleNow): what else arrives at that instant goes first */
enum { EV_USER, EV_NIC, EV_LINK, EV_SYNACK, EV_PACE };
/* PK_HSACK: the handshake's third packet, the sender's ACK of the SYN-ACK,
 * sent just before its data. A new connection closes as ns-3's BulkSend
 * and PacketSink close it: the last segment carries the sender's FIN, the
 * receiver ACKs it and sends its own (PK_FIN), which the sender ACKs
 * (PK_FINACK). PK_CNP: RoCE's congestion notification, receiver to sender. */
enum { PK_SYN, PK_SYNACK, PK_DATA, PK_ACK, PK_HSACK, PK_FIN, PK_FINACK, PK_CNP };
enum { LIST_NONE, LIST_NEW, LIST_OLD };

enum { INIT_WINDOW_CAP = 65535 }; /* the SYN's unscaled receive window, bytes */
static const double DCTCP_G = 1.0 / 16;

typedef struct pkt {
  int32_t slot, next; /* next: in its host queue, or the free list */
  const int32_t *path; /* the links it crosses (its flow's, or their reverse) */
  int32_t n;
  uint8_t kind, ce, took; /* took: its bytes were taken from fluid flows */
  double bytes, t_in;      /* t_in: when it joined its host's queue */
} pkt;

/* An event is an fs__heap entry: t, seq (push order), a = its kind, b = the
 * user's a / host / link. */

/* A packet on its way over a link to the link's far end: it gets there at
 * t (push order seq), having crossed `hop` links of its path. */
typedef struct arrival {
  double t;
  uint64_t seq;
  int32_t pkt, hop;
} arrival;

/* Per link, its packets on the way in the order they get there: a port
 * sends in FIFO order and a NIC one packet at a time, so each link's
 * arrivals come in time order, and the event heap holds each link's first
 * one only (its size follows the links busy, not the packets in flight). */
typedef struct lane {
  arrival *a;
  int32_t head, n, cap;
} lane;

/* A packet at a switch port: when it begins to leave, its bytes, and
 * the bytes it took from fluid flows that fill the port (0 or bytes), of
 * the fluid's own queue there or (held) of a stream from a queue upstream
 * (port_send). */
typedef struct queued {
  double start, bytes, took, held;
} queued;

/* A port's packets: m from `first` on, the last n not yet leaving (from
 * head); those before head left within the fluid flows' last round trip
 * (fluid_start). held: what packets displaced while the fluid filled the
 * port from a queue upstream (port_send), kept while it does. */
typedef struct port_ring {
  queued *w;
  int32_t first, m, head, n, cap;
  double bytes, took; /* of the n waiting; what the m - n left took */
  double held;
} port_ring;

/* A host queue: a FIFO of packets (head, tail) and its place in the host's
 * fair queue (FQ-CoDel's scheduler: a list of new queues served first,
 * one of old ones; a deficit of bytes). */
typedef struct hq {
  int32_t head, tail;
  int32_t prev, next; /* neighbours in its list; -1 */
  uint8_t list;       /* LIST_NONE, LIST_NEW or LIST_OLD */
  double deficit;
} hq;

/* A flow in flight: its path and reverse path, segments and window. */
typedef struct flowst {
  int32_t id; /* the owner's; -1: the slot is free (next free in host) */
  const int32_t *links;
  int32_t *rev, rev_cap;
  int32_t n, host, dst;
  int64_t n_seg, sent, out, acked, got, win_end, recover;
  double last_bytes; /* wire bytes of its last segment */
  double cwnd, ssthresh, alpha;
  int64_t win_acked, win_marked;
  uint8_t opened;
  /* roce: the queue pair's reaction point (rates in bytes/s; alpha above),
   * its timers as nanoseconds after its first CNP came at t_cc, as ns-3
   * schedules them; CNPs on their way back; its last byte arrived */
  double rc, rt, line, t_cc;
  int64_t ns_alpha, ns_dec, ns_inc;
  int32_t stage, cnp_out;
  uint8_t cc, cnp_alpha, cnp_dec, done;
} flowst;

struct fs__pktnet {
  fs__pktnet_cfg c;
  /* flow slots and their two host queues each (2 s: data, 2 s + 1: answers) */
  flowst *f;
  hq *q;
  int32_t n_slots, cap_slots, free_slot, open;
  /* switch ports: when free, start times of packets not yet leaving */
  double *free_at;
  port_ring *ring;         /* per link: its packets not yet leaving */
  lane *lanes;             /* per link: its packets on the way */
  int32_t *red_count;
  double *red_bytes; /* roce: RED's byte count since its last mark, per port */
  uint8_t *red_old;  /* roce: the port's queue was over Kmin at its last packet */
  /* hosts: lists of queues (2 per host: new, old), the NIC */
  int32_t *lhead, *ltail;
  uint8_t *nic_busy;
  int32_t *dev; /* per host: the packet in the NIC's device queue, -1 none */
  /* packets and events */
  pkt *p;
  int32_t n_p, cap_p, free_p;
  fs__heap h; /* 4-ary: (t, seq) is a total order, the pops' order is fixed */
  uint64_t seq, rng;
  int64_t packets;
};

/* splitmix64: RED's draws, a fixed seed for determinism */
static double uniform(fs__pktnet *r) {
  uint64_t z = (r->rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-53;
}

static int push_seq(fs__pktnet *r, double t, uint64_t seq, int32_t kind, int32_t a) {
  return fs__heap_push(&r->h, (fs__heap_ent){t, seq, kind, a});
}

static int push(fs__pktnet *r, double t, int32_t kind, int32_t a) {
  return push_seq(r, t, r->seq++, kind, a);
}

/* Makes room for one more element in a full ring buffer (*buf of *cap
 * elements of `size` bytes, n of them from *head): twice the room (or
 * `first`), the elements moved to its start in order. 0 or FS_ENOMEM. */
static int ring_grow(void **buf, int32_t *head, int32_t n, int32_t *cap, size_t size,
                     int32_t first) {
  int32_t cap2 = *cap ? 2 * *cap : first;
  char *b = malloc((size_t)cap2 * size);
  if (!b) return FS_ENOMEM;
  for (int32_t k = 0; k < n; k++)
    memcpy(b + (size_t)k * size, (char *)*buf + (size_t)((*head + k) % *cap) * size, size);
  free(*buf);
  *buf = b;
  *head = 0;
  *cap = cap2;
  return 0;
}

/* Packet i, having crossed `hop` links, reaches link l's far end at t: at
 * the back of the link's lane; the heap learns of the lane when it was
 * empty. */
static int send_on(fs__pktnet *r, int32_t l, double t, int32_t i, int32_t hop) {
  lane *ln = &r->lanes[l];
  if (ln->n == ln->cap &&
      ring_grow((void **)&ln->a, &ln->head, ln->n, &ln->cap, sizeof(*ln->a), 16))
    return FS_ENOMEM;
  arrival x = {t, r->seq++, i, hop};
  ln->a[(ln->head + ln->n++) % ln->cap] = x;
  return ln->n == 1 ? push_seq(r, x.t, x.seq, EV_LINK, l) : 0;
}

static int32_t new_pkt(fs__pktnet *r, int32_t slot, int kind, double bytes) {
  int32_t i = r->free_p;
  if (i >= 0) {
    r->free_p = r->p[i].next;
  } else {
    if (r->n_p == r->cap_p) {
      int32_t cap = r->cap_p ? 2 * r->cap_p : 1024;
      pkt *p = realloc(r->p, (size_t)cap * sizeof(*p));
      if (!p) return -1;
      r->p = p;
      r->cap_p = cap;
    }
    i = r->n_p++;
  }
  const flowst *f = &r->f[slot];
  int fwd = kind == PK_DATA || kind == PK_SYN || kind == PK_HSACK || kind == PK_FINACK;
  r->p[i] = (pkt){slot, -1, fwd ? f->links : f->rev, f->n,
                  (uint8_t)kind, 0, 0, bytes, 0};
  r->packets++;
  return i;
}

static void free_pkt(fs__pktnet *r, int32_t i) {
  r->p[i].next = r->free_p;
  r->free_p = i;
}

/* The bytes of packet i as the host's queue disc counts them (IP: without
 * PPP's 2), and its quantum: a full packet (the device's MTU). */
static double ip_bytes(const fs__pktnet *r, int32_t i) { return r->p[i].bytes - 2; }
static double quantum(const fs__pktnet *r) { return r->c.mss + r->c.hdr - 2; }
static double cap_Bps(const fs__pktnet *r, int32_t l) { return r->c.t->links[l].capacity_bps / 8; }
static double lat_s(const fs__pktnet *r, int32_t l) {
  return (double)r->c.t->links[l].latency_ns * 1e-9;
}

static void list_remove(fs__pktnet *r, int32_t v, int32_t x) {
  hq *q = &r->q[x];
  int32_t *head = &r->lhead[2 * v + q->list - 1], *tail = &r->ltail[2 * v + q->list - 1];
  if (q->prev >= 0) r->q[q->prev].next = q->next;
  else *head = q->next;
  if (q->next >= 0) r->q[q->next].prev = q->prev;
  else *tail = q->prev;
  q->list = LIST_NONE;
}

static void list_append(fs__pktnet *r, int32_t v, int32_t x, int list) {
  hq *q = &r->q[x];
  int32_t *head = &r->lhead[2 * v + list - 1], *tail = &r->ltail[2 * v + list - 1];
  q->list = (uint8_t)list;
  q->next = -1;
  q->prev = *tail;
  if (*tail >= 0) r->q[*tail].next = x;
  else *head = x;
  *tail = x;
}

static double k_pkts(const fs__pktnet *r, int32_t l) {
  return r->c.k100 * r->c.t->links[l].capacity_bps / 100e9;
}

/* The queue in bytes from which switch port l marks: K full packets, or
 * under roce Kmin (both scaled with the port's rate). */
static double mark_bytes(const fs__pktnet *r, int32_t l) {
  if (r->c.roce) return r->c.dcqcn.kmin_kb * 1e3 * r->c.t->links[l].capacity_bps / 100e9;
  return k_pkts(r, l) * (r->c.mss + r->c.hdr);
}

/* Host v's fair queue gives its next packet at t (-1: none), by FQ-CoDel's
 * scheduler (RFC 8290, 4.2): the first new queue, else the first old one;
 * a queue out of deficit gets a quantum more and goes to the back of the
 * old ones; an empty new queue goes there too (if there are old ones), an
 * empty old one leaves. A data packet that waited there more than K full
 * packets' time is marked (the backend's CE threshold, judged when it
 * leaves). */
static int32_t round_take(fs__pktnet *r, int32_t v, double t) {
  for (;;) {
    int list = r->lhead[2 * v] >= 0 ? LIST_NEW : LIST_OLD;
    int32_t x = r->lhead[2 * v + list - 1];
    if (x < 0) return -1;
    hq *q = &r->q[x];
    if (q->deficit <= 0) {
      q->deficit += quantum(r);
      list_remove(r, v, x);
      list_append(r, v, x, LIST_OLD);
      continue;
    }
    if (q->head < 0) {
      list_remove(r, v, x);
      if (list == LIST_NEW && r->lhead[2 * v + LIST_OLD - 1] >= 0) list_append(r, v, x, LIST_OLD);
      continue;
    }
    int32_t i = q->head;
    q->head = r->p[i].next;
    if (q->head < 0) q->tail = -1;
    q->deficit -= ip_bytes(r, i);
    pkt *p = &r->p[i];
    int32_t l = p->path[0];
    if (p->kind == PK_DATA && !r->c.roce &&
        t - p->t_in > mark_bytes(r, l) * 8 / r->c.t->links[l].capacity_bps)
      p->ce = 1;
    return i;
  }
}

static int nic_free(fs__pktnet *r, int32_t v, double t);

/* Queue x of host v takes packet i at t: an idle NIC sends it at once,
 * and the device queue behind a busy one (a packet) takes the fair
 * queue's next at once, as ns-3's do. Under roce the NIC serves its queue
 * pairs round robin, a packet a turn (the backend's NicPump): every queue
 * joins the old list, whose quantum is a full packet. */
static int host_put(fs__pktnet *r, int32_t v, int32_t x, int32_t i, double t) {
  hq *q = &r->q[x];
  r->p[i].t_in = t;
  r->p[i].next = -1;
  if (q->tail >= 0) r->p[q->tail].next = i;
  else q->head = i;
  q->tail = i;
  if (q->list == LIST_NONE) { /* a new flow */
    q->deficit = quantum(r);
    list_append(r, v, x, r->c.roce ? LIST_OLD : LIST_NEW);
  }
  if (!r->nic_busy[v]) return nic_free(r, v, t); /* an idle NIC sends it at once */
  if (r->dev[v] < 0) r->dev[v] = round_take(r, v, t);
  return 0;
}

/* RED at a switch port (the backend's: MinTh = MaxTh = K, QW 1, gentle,
 * ns-3's LInterm 50): the probability that the count-th packet since the
 * last mark, joining `waiting` >= K packets, is marked. Gentle: p rises
 * from 1 / 50 at K to 1 at 2K; RED's spacing of marks with Wait (ns-3's
 * default): none until count x p reaches 1, then p / (2 - count x p). */
static double red_prob(double k, double waiting, double count) {
  if (waiting >= 2 * k) return 1;
  double pb = 0.02 + 0.98 * (waiting - k) / k;
  double cp = count * pb;
  return cp < 1 ? 0 : cp < 2 ? fmin(pb / (2 - cp), 1) : 1;
}

double fs__pktnet_red_first_mark(double k, double per_pkt) {
  double survive = 1, expect = 0;
  for (double count = 1; survive > 1e-12; count++) {
    double pa = red_prob(k, k + count / per_pkt, count);
    expect += survive * pa * count;
    survive *= 1 - pa;
  }
  return expect / per_pkt;
}

/* Whether a packet joining `waiting` packets at port l is marked. */
static int red_mark(fs__pktnet *r, int32_t l, double waiting) {
  double k = k_pkts(r, l);
  if (waiting < k) {
    r->red_count[l] = 0;
    return 0;
  }
  int32_t c = ++r->red_count[l];
  if (waiting >= 2 * k) {
    r->red_count[l] = 0;
    return 1;
  }
  if (uniform(r) < red_prob(k, waiting, c)) {
    r->red_count[l] = 0;
    return 1;
  }
  return 0;
}

/* RED at a switch port under roce (the backend's: in bytes, MinTh = Kmin,
 * MaxTh = Kmax scaled with the port's rate, LInterm 1 / pmax, QW 1, not
 * gentle, no Wait), as ns-3's RedQueueDisc judges a packet of `size`
 * bytes (without PPP's 2) joining `q` bytes: none below Kmin; all from
 * Kmax; the first packet over Kmin starts the count; then p_b = pmax
 * (q - Kmin) / (Kmax - Kmin), spread by the count of mean-size packets
 * since the last mark (floor of the bytes over the mean: ns-3 divides
 * integers), p_a = p_b / (1 - count p_b), and scaled by size / mean. */
static int red_mark_bytes(fs__pktnet *r, int32_t l, double q, double size) {
  const fs_dcqcn *d = &r->c.dcqcn;
  double mean = quantum(r); /* ns-3's MeanPktSize: a full packet's IP bytes */
  double lo = mark_bytes(r, l), hi = d->kmax_kb * 1e3 * r->c.t->links[l].capacity_bps / 100e9;
  r->red_bytes[l] += size;
  if (!(q >= lo)) {
    r->red_old[l] = 0;
    return 0;
  }
  if (q >= hi) return 1;
  if (!r->red_old[l]) {
    r->red_old[l] = 1;
    r->red_bytes[l] = size;
    return 0;
  }
  double pb = d->pmax * (q - lo) / (hi - lo), count = floor(r->red_bytes[l] / mean);
  double pa = count * pb < 1 ? pb / (1 - count * pb) : 1;
  if (pa < 1) pa = pa * size / mean;
  if (uniform(r) <= pa) {
    r->red_bytes[l] = 0;
    return 1;
  }
  return 0;
}

/* When a packet reaching port l at t begins to leave, with fluid flows
 * there (fl): behind the fluid's queue and the packets' bytes that have
 * not begun to leave (ahead), after the packet before it. The fluid's
 * flows are taken as clocked by their ACKs: where they fill the port,
 * their bytes queued are what their windows hold (fl->queue_s), rather
 * than piling up at their rate behind a burst, plus the bytes of theirs
 * that the packets which left in their last round trip displaced (their
 * ACKs, a round trip behind, kept clocking those in: with windows W
 * and packets at r, the fluid's part of the queue is W - (C - r) RTT, r
 * RTT above its own; at most what the fluid has on the wire). */
static double fluid_start(const fs__pktnet *r, int32_t l, double t, const fs__pktnet_fluid *fl,
                          double ahead, double down) {
  double took = r->ring[l].took, wire = fl->rate_Bps * fl->rtt_s;
  if (took > wire) took = wire;
  if (fl->hold) took += r->ring[l].held;
  double start = t + fmax(fl->queue_s - down, 0) + (took + ahead) / cap_Bps(r, l);
  return start > r->free_at[l] ? start : r->free_at[l];
}

/* Port l's packets that have begun to leave by t: out of the bytes
 * waiting, what they displaced counted (took, held). */
static void ring_advance(fs__pktnet *r, int32_t l, double t) {
  port_ring *pr = &r->ring[l];
  double most = mark_bytes(r, l);
  while (pr->n && pr->w[pr->head].start <= t) {
    pr->bytes -= pr->w[pr->head].bytes;
    pr->took += pr->w[pr->head].took;
    pr->held = fmin(pr->held + pr->w[pr->head].held, most);
    pr->head = (pr->head + 1) % pr->cap;
    pr->n--;
  }
}

/* Packet i reaches switch port l at t: FIFO, marked by RED, on to the next
 * node after its transmission and the link's latency. */
static int port_send(fs__pktnet *r, int32_t l, int32_t i, int32_t hop, double t) {
  port_ring *pr = &r->ring[l];
  double cap = cap_Bps(r, l);
  fs__pktnet_fluid fl = {0};
  if (r->c.fluid) r->c.fluid(r->c.ctx, l, &fl);
  ring_advance(r, l, t);
  /* forget those that left before the fluid's last round trip */
  double since = fl.n > 0 ? t - fl.rtt_s : INFINITY;
  while (pr->m > pr->n && pr->w[pr->first].start + pr->w[pr->first].bytes / cap < since) {
    pr->took -= pr->w[pr->first].took;
    pr->first = (pr->first + 1) % pr->cap;
    pr->m--;
  }
  if (!pr->n) pr->bytes = 0; /* exactly, whatever rounding left */
  if (pr->m == pr->n) pr->took = 0;
  double start;
  double waiting = pr->n, waiting_bytes = pr->bytes;
  if (fl.n > 0) { /* the fluid's bytes ahead count as packets for RED */
    /* Windows in congestion avoidance hold the fluid's queue at l; what
     * the ports after l on the packet's path hold of their bytes (held,
     * displaced there) is part of those windows, so not queued at l (the
     * packet trace of validation's mice-elephants-fattree4: the core
     * port's queue and what the next two ports held summed to about
     * DCTCP's mean). In slow start the windows grow by what they deliver
     * whatever is held after them. */
    double down = 0;
    if (fl.ca && !fl.hold)
      for (int32_t k = hop + 1; k < r->p[i].n; k++) {
        ring_advance(r, r->p[i].path[k], t);
        down += r->ring[r->p[i].path[k]].held;
      }
    start = fluid_start(r, l, t, &fl, pr->bytes, down / cap);
    waiting_bytes = (start - t) * cap;
    waiting = waiting_bytes / (r->c.mss + r->c.hdr);
  } else {
    start = r->free_at[l] > t ? r->free_at[l] : t;
  }
  if (r->p[i].kind == PK_DATA &&
      (r->c.roce ? red_mark_bytes(r, l, waiting_bytes, ip_bytes(r, i)) : red_mark(r, l, waiting)))
    r->p[i].ce = 1;
  r->free_at[l] = start + r->p[i].bytes / cap;
  int took_before = r->p[i].took;
  if (r->c.tx && r->c.tx(r->c.ctx, l, r->p[i].bytes, start, r->free_at[l], !took_before))
    r->p[i].took = 1;
  if (pr->m == pr->cap) {
    if (ring_grow((void **)&pr->w, &pr->first, pr->m, &pr->cap, sizeof(*pr->w), 64))
      return FS_ENOMEM;
    pr->head = pr->m - pr->n;
  }
  double took = fl.n > 0 && fl.full ? r->p[i].bytes : 0;
  /* Where the fluid fills the port from a queue upstream (fl.hold), its
   * bytes arrive at the port's rate whatever the port holds, so what a
   * packet displaces stays queued while they do, not a round trip (a
   * packet trace of two long flows merging at a core port, with messages
   * joining them one hop on: the messages' bytes stayed queued at that
   * next port, 18 packets for 18 packets of messages, until the long flows
   * ended); at most K packets, over which the port marks them. A packet
   * that displaced fluid upstream adds none: it took a place in the
   * stream there. */
  double held = 0;
  if (fl.hold) {
    held = took_before ? 0 : took;
    took = 0;
  } else {
    pr->held = 0;
  }
  pr->w[(pr->first + pr->m++) % pr->cap] = (queued){start, r->p[i].bytes, took, held};
  pr->n++;
  pr->bytes += r->p[i].bytes;
  return send_on(r, l, r->free_at[l] + lat_s(r, l), i, hop + 1);
}

/* Slot s sends what its window allows. */
static int send_window(fs__pktnet *r, int32_t s, double t) {
  flowst *f = &r->f[s];
  while (f->sent < f->n_seg && (double)(f->sent - f->acked) < floor(f->cwnd)) {
    double bytes = f->sent == f->n_seg - 1 ? f->last_bytes : r->c.mss + r->c.hdr;
    int32_t i = new_pkt(r, s, PK_DATA, bytes);
    if (i < 0) return FS_ENOMEM;
    f->sent++;
    int rc = host_put(r, f->host, 2 * s, i, t);
    if (rc) return rc;
  }
  return 0;
}

/* The backend's round trip of slot s: a full packet and its ACK per hop. */
static double rtt_of(const fs__pktnet *r, int32_t s) {
  const flowst *f = &r->f[s];
  double x = 0;
  for (int32_t k = 0; k < f->n; k++) {
    const fs_link *lk = &r->c.t->links[f->links[k]];
    x += 2 * (double)lk->latency_ns * 1e-9 + (r->c.mss + 2 * r->c.hdr) * 8 / lk->capacity_bps;
  }
  return x;
}

/* A free slot (its host queues out of every list), or -1. */
static int32_t take_slot(fs__pktnet *r) {
  int32_t s = r->free_slot;
  if (s >= 0) {
    r->free_slot = r->f[s].host;
    return s;
  }
  if (r->n_slots == r->cap_slots) {
    int32_t cap = r->cap_slots ? 2 * r->cap_slots : 256;
    flowst *f = realloc(r->f, (size_t)cap * sizeof(*f));
    if (!f) return -1;
    r->f = f;
    hq *q = realloc(r->q, 2 * (size_t)cap * sizeof(*q));
    if (!q) return -1;
    r->q = q;
    r->cap_slots = cap;
  }
  s = r->n_slots++;
  r->f[s].rev = NULL;
  r->f[s].rev_cap = 0;
  return s;
}

/* Slot s's last ACK is home: its queues are empty (every packet of the
 * flow has left both hosts); they leave their lists, which serve the same
 * packets in the same order without them. */
static void give_slot(fs__pktnet *r, int32_t s) {
  flowst *f = &r->f[s];
  if (r->q[2 * s].list != LIST_NONE) list_remove(r, f->host, 2 * s);
  if (r->q[2 * s + 1].list != LIST_NONE) list_remove(r, f->dst, 2 * s + 1);
  f->id = -1;
  f->host = r->free_slot;
  r->free_slot = s;
  r->open--;
}

/* ---- RoCEv2 under DCQCN (cfg.roce), as the ns-3 backend's queue pairs
 * (tools/ns3/fabricsim_ns3.cc, "RoCEv2 with DCQCN"; docs/model.md, "The
 * packet backend") ---- */

/* A CNP's wire bytes as the backend builds one: 48 bytes of payload (a
 * 64-byte frame less the 30 of headers ns-3 adds, with BTH 12 and 2 more)
 * under UDP, IPv4 and PPP. */
static const double CNP_BYTES = 78;

/* A DCQCN period in ns-3's integer nanoseconds. */
static int64_t period_ns(double us) { return (int64_t)(us * 1e3); }

/* Slot s puts its next data packet in its host's queue at t. */
static int roce_put(fs__pktnet *r, int32_t s, double t) {
  flowst *f = &r->f[s];
  double bytes = f->sent == f->n_seg - 1 ? f->last_bytes : r->c.mss + r->c.hdr;
  int32_t i = new_pkt(r, s, PK_DATA, bytes);
  if (i < 0) return FS_ENOMEM;
  f->sent++;
  return host_put(r, f->host, 2 * s, i, t);
}

/* The reaction point's timers (DCQCN, Zhu et al. SIGCOMM 2015, with the
 * steps of the backend's DcqcnDecrease, DcqcnIncrease, DcqcnAlpha). */
void fs__pktnet_rp_raise(const fs_dcqcn *d, double line, int32_t *stage, double *rt,
                         double *rc) {
  double scale = line * 8 / 100e9;
  ++*stage;
  if (*stage == d->f) *rt += d->ai_mbps * 1e6 / 8 * scale;
  else if (*stage > d->f) *rt += d->hai_mbps * 1e6 / 8 * scale;
  *rt = fmin(*rt, line);
  *rc = fmin((*rc + *rt) / 2, line);
}

void fs__pktnet_rp_cut(const fs_dcqcn *d, double alpha, int32_t *stage, double *rt, double *rc) {
  if (*stage != 0) *rt = *rc;
  *rc = fmax(*rc * (1 - alpha / 2), d->min_mbps * 1e6 / 8);
  *stage = 0;
}

static void rp_decrease(fs__pktnet *r, flowst *f) {
  const fs_dcqcn *d = &r->c.dcqcn;
  if (f->cnp_dec) { /* a CNP in the period: cut, the rate before it the target */
    fs__pktnet_rp_cut(d, f->alpha, &f->stage, &f->rt, &f->rc);
    f->cnp_dec = 0;
    f->ns_inc = f->ns_dec + period_ns(d->inc_us);
  }
  f->ns_dec += period_ns(d->dec_us);
}

static void rp_increase(fs__pktnet *r, flowst *f) {
  const fs_dcqcn *d = &r->c.dcqcn;
  fs__pktnet_rp_raise(d, f->line, &f->stage, &f->rt, &f->rc);
  f->ns_inc += period_ns(d->inc_us);
}

static void rp_alpha(fs__pktnet *r, flowst *f) {
  const fs_dcqcn *d = &r->c.dcqcn;
  f->alpha = (1 - d->g) * f->alpha + (f->cnp_alpha ? d->g : 0);
  f->cnp_alpha = 0;
  f->ns_alpha += period_ns(d->alpha_us);
}

/* Runs slot s's timers due by t, those due together in the order ns-3
 * set them: the increase (set a decrease or an increase period before),
 * the decrease (a decrease period before), then alpha (an alpha period
 * before). */
static void rp_advance(fs__pktnet *r, flowst *f, double t) {
  if (!f->cc) return;
  for (;;) {
    int64_t m = f->ns_inc < f->ns_dec ? f->ns_inc : f->ns_dec;
    if (f->ns_alpha < m) m = f->ns_alpha;
    if (f->t_cc + (double)m * 1e-9 > t) return;
    if (f->ns_inc == m) rp_increase(r, f);
    else if (f->ns_dec == m) rp_decrease(r, f);
    else rp_alpha(r, f);
  }
}

/* A CNP reaches slot s's sender at t: the first sets alpha to 1, cuts at
 * once and starts the timers; later ones are counted by the next alpha
 * and decrease periods. The slot is given back once its data are all in
 * and its last CNP is home. */
static int on_cnp(fs__pktnet *r, int32_t s, double t) {
  flowst *f = &r->f[s];
  f->cnp_out--;
  if (!f->done) {
    rp_advance(r, f, t);
    f->cnp_alpha = f->cnp_dec = 1;
    if (!f->cc) {
      f->cc = 1;
      f->alpha = 1;
      f->t_cc = t;
      f->ns_dec = 0;
      f->ns_inc = INT64_MAX;
      f->ns_alpha = period_ns(r->c.dcqcn.alpha_us);
      rp_decrease(r, f);
    }
  }
  if (f->done && !f->cnp_out) give_slot(r, s);
  return 0;
}

/* A data packet of slot s reaches its receiver at t: a marked one is
 * answered with a CNP (the backend's receivers space them by nothing),
 * the last one ends the flow. */
static int roce_data(fs__pktnet *r, int32_t s, int ce, double t) {
  flowst *f = &r->f[s];
  if (ce) {
    int32_t cnp = new_pkt(r, s, PK_CNP, CNP_BYTES);
    if (cnp < 0) return FS_ENOMEM;
    f->cnp_out++;
    int rc = host_put(r, f->dst, 2 * s + 1, cnp, t);
    if (rc) return rc;
    f = &r->f[s];
  }
  if (++f->got < f->n_seg) return 0;
  f->done = 1;
  int32_t id = f->id;
  if (!f->cnp_out) give_slot(r, s);
  return r->c.done(r->c.ctx, id, t);
}

/* Slot s's packet of `bytes` left its NIC at t (the NIC busy until
 * `done`): its pacer lets the next one go bytes / RC on (ns-3's next_ns),
 * into the host's queue at once when that is before the NIC is free. */
static int roce_paced(fs__pktnet *r, int32_t s, double bytes, double t, double done) {
  flowst *f = &r->f[s];
  if (f->sent >= f->n_seg) return 0;
  rp_advance(r, f, t);
  double e = t + bytes / f->rc;
  return e <= done ? roce_put(r, s, t) : push(r, e, EV_PACE, s);
}

int fs__pktnet_begin(fs__pktnet *r, int32_t id, const int32_t *links, int32_t n, double bytes,
                     double t) {
  const fs_topo *tp = r->c.t;
  for (int32_t k = 0; k < n; k++)
    if (tp->links[links[k]].reverse < 0) return FS_EINVAL;
  int32_t s = take_slot(r);
  if (s < 0) return FS_ENOMEM;
  flowst *f = &r->f[s];
  if (f->rev_cap < n) {
    int32_t *rev = realloc(f->rev, (size_t)n * sizeof(int32_t));
    if (!rev) {
      f->host = r->free_slot;
      r->free_slot = s;
      return FS_ENOMEM;
    }
    f->rev = rev;
    f->rev_cap = n;
  }
  for (int32_t k = 0; k < n; k++) f->rev[k] = tp->links[links[n - 1 - k]].reverse;
  int32_t *rev = f->rev, rev_cap = f->rev_cap;
  *f = (flowst){.id = id, .links = links, .rev = rev, .rev_cap = rev_cap, .n = n,
                .host = tp->links[links[0]].from, .dst = tp->links[links[n - 1]].to};
  r->q[2 * s] = r->q[2 * s + 1] = (hq){-1, -1, -1, -1, LIST_NONE, 0};
  r->open++;
  f->n_seg = (int64_t)ceil(bytes / r->c.mss);
  f->last_bytes = bytes - (double)(f->n_seg - 1) * r->c.mss + r->c.hdr;
  f->alpha = 1;
  f->recover = -1;
  if (r->c.roce) { /* a queue pair: at line rate, no handshake */
    f->line = f->rc = f->rt = cap_Bps(r, links[0]);
    f->opened = 1;
    return roce_put(r, s, t);
  }
  double iw = r->c.init_window;
  if (r->c.persistent) { /* warm: the backend's window, in congestion avoidance */
    double w = ceil(cap_Bps(r, links[0]) * rtt_of(r, s) / r->c.mss);
    f->cwnd = f->ssthresh = w > iw ? w : iw;
    f->opened = 1;
    return send_window(r, s, t);
  }
  double first = floor(INIT_WINDOW_CAP / r->c.mss);
  f->cwnd = iw < first ? iw : first;
  if (f->cwnd < 1) f->cwnd = 1;
  f->ssthresh = INFINITY;
  int32_t i = new_pkt(r, s, PK_SYN, r->c.syn_bytes);
  return i < 0 ? FS_ENOMEM : host_put(r, f->host, 2 * s, i, t);
}

/* An ACK of slot s, echoing a mark or not: DCTCP's alpha once a window of
 * data, a cut once a round trip on an echo, else slow start or congestion
 * avoidance. */
static int on_ack(fs__pktnet *r, int32_t s, int ece, double t) {
  flowst *f = &r->f[s];
  f->acked++;
  if (!f->opened) { /* past the SYN's unscaled window */
    f->opened = 1;
    double iw = r->c.init_window;
    if (f->cwnd < iw) f->cwnd = iw;
  }
  f->win_acked++;
  f->win_marked += ece;
  if (f->acked >= f->win_end) {
    if (f->win_acked)
      f->alpha = (1 - DCTCP_G) * f->alpha + DCTCP_G * (double)f->win_marked / (double)f->win_acked;
    f->win_acked = f->win_marked = 0;
    f->win_end = f->sent + 1;
  }
  if (ece && f->acked > f->recover) {
    double w = f->cwnd * (1 - f->alpha / 2);
    f->ssthresh = f->cwnd = w > 2 ? w : 2;
    f->recover = f->sent;
  } else if (f->acked > f->recover) {
    f->cwnd += f->cwnd < f->ssthresh ? 1 : 1 / f->cwnd;
  }
  if (f->acked == f->n_seg) { /* new connections: the slot waits for the close */
    if (r->c.persistent) give_slot(r, s);
    return 0;
  }
  return send_window(r, s, t);
}

/* What host v's NIC gives a packet on link l: all of it, or with fluid
 * flows of the host there, what they leave, but at least an equal turn
 * among them (the host's fair queue). */
static double nic_Bps(fs__pktnet *r, int32_t l) {
  double cap = cap_Bps(r, l);
  if (!r->c.fluid) return cap;
  fs__pktnet_fluid fl = {0};
  r->c.fluid(r->c.ctx, l, &fl);
  if (fl.n <= 0) return cap;
  double left = cap - fl.rate_Bps, turn = cap / (fl.n + 1);
  return left > turn ? left : turn;
}

/* Host v's NIC is free at t: it sends the packet of its device queue, or
 * the fair queue's next, and the device queue takes the one after. */
static int nic_free(fs__pktnet *r, int32_t v, double t) {
  int32_t i = r->dev[v];
  if (i < 0) i = round_take(r, v, t);
  r->dev[v] = i < 0 ? -1 : round_take(r, v, t);
  r->nic_busy[v] = i >= 0;
  if (i < 0) return 0;
  pkt *p = &r->p[i];
  int32_t l = p->path[0];
  double done = t + p->bytes / nic_Bps(r, l);
  int rc = push(r, done, EV_NIC, v);
  if (!rc) rc = send_on(r, l, done + lat_s(r, l), i, 1);
  int32_t s = p->slot;
  flowst *f = &r->f[s];
  if (!rc && p->kind == PK_DATA && ++f->out == f->n_seg && r->c.sent)
    rc = r->c.sent(r->c.ctx, f->id, done);
  if (!rc && r->c.roce && p->kind == PK_DATA) rc = roce_paced(r, s, p->bytes, t, done);
  return rc;
}

/* Packet i has crossed `hop` links of its path at t. */
static int arrive(fs__pktnet *r, int32_t i, int32_t hop, double t) {
  pkt *p = &r->p[i];
  if (hop < p->n) return port_send(r, p->path[hop], i, hop, t);
  int32_t s = p->slot;
  flowst *f = &r->f[s];
  int kind = p->kind, ce = p->ce;
  free_pkt(r, i);
  int32_t back = -1;
  switch (kind) {
  case PK_SYN:
    return push(r, t, EV_SYNACK, s);
  case PK_SYNACK: { /* the handshake's last packet, then the data */
    back = new_pkt(r, s, PK_HSACK, r->c.hdr);
    if (back < 0) return FS_ENOMEM;
    int rc = host_put(r, f->host, 2 * s, back, t);
    return rc ? rc : send_window(r, s, t);
  }
  case PK_HSACK:
    return 0;
  case PK_FIN:
    back = new_pkt(r, s, PK_FINACK, r->c.hdr);
    return back < 0 ? FS_ENOMEM : host_put(r, f->host, 2 * s, back, t);
  case PK_FINACK: /* the connection's last packet */
    give_slot(r, s);
    return 0;
  case PK_CNP:
    return on_cnp(r, s, t);
  case PK_DATA: {
    if (r->c.roce) return roce_data(r, s, ce, t);
    back = new_pkt(r, s, PK_ACK, r->c.hdr);
    if (back < 0) return FS_ENOMEM;
    r->p[back].ce = (uint8_t)ce; /* the echo */
    int rc = host_put(r, f->dst, 2 * s + 1, back, t);
    if (rc || ++f->got < f->n_seg) return rc;
    if (!r->c.persistent) { /* the FIN came with it: the receiver's own */
      int32_t fin = new_pkt(r, s, PK_FIN, r->c.hdr);
      if (fin < 0) return FS_ENOMEM;
      if ((rc = host_put(r, f->dst, 2 * s + 1, fin, t))) return rc;
    }
    return r->c.done(r->c.ctx, f->id, t);
  }
  default:
    return on_ack(r, s, ce, t);
  }
}

double fs__pktnet_syn_bytes(double header_bytes) {
  return header_bytes + (header_bytes >= 54 ? 4 : 8);
}

int fs__pktnet_push_user(fs__pktnet *r, double t, int32_t a) { return push(r, t, EV_USER, a); }

double fs__pktnet_busy_until(const fs__pktnet *r, int32_t l) { return r->free_at[l]; }

double fs__pktnet_next_t(const fs__pktnet *r) { return r->h.len ? r->h.e[0].t : INFINITY; }

int fs__pktnet_step(fs__pktnet *r) {
  if (!r->h.len) return 0;
  fs__heap_ent e = r->h.e[0];
  fs__heap_pop(&r->h);
  switch (e.a) {
  case EV_USER: return r->c.user ? r->c.user(r->c.ctx, e.b, e.t) : FS_EINTERNAL;
  case EV_NIC: return nic_free(r, e.b, e.t);
  case EV_PACE: return roce_put(r, e.b, e.t);
  case EV_SYNACK: {
    int32_t i = new_pkt(r, e.b, PK_SYNACK, r->c.syn_bytes);
    return i < 0 ? FS_ENOMEM : host_put(r, r->f[e.b].dst, 2 * e.b + 1, i, e.t);
  }
  default: { /* the first packet of link e.b's lane arrives; the next one goes on the heap */
    lane *ln = &r->lanes[e.b];
    arrival x = ln->a[ln->head];
    ln->head = (ln->head + 1) % ln->cap;
    if (--ln->n) {
      const arrival *nx = &ln->a[ln->head];
      int rc = push_seq(r, nx->t, nx->seq, EV_LINK, e.b);
      if (rc) return rc;
    }
    return arrive(r, x.pkt, x.hop, x.t);
  }
  }
}

int64_t fs__pktnet_packets(const fs__pktnet *r) { return r->packets; }
int32_t fs__pktnet_open(const fs__pktnet *r) { return r->open; }

void fs__pktnet_free(fs__pktnet *r) {
  if (!r) return;
  for (int32_t l = 0; l < r->c.t->n_links; l++) {
    if (r->lanes) free(r->lanes[l].a);
    if (r->ring) free(r->ring[l].w);
  }
  FS__FREE_ALL(r->ring, r->lanes, r->red_count, r->red_bytes, r->red_old, r->free_at);
  for (int32_t s = 0; s < r->n_slots; s++) free(r->f[s].rev);
  FS__FREE_ALL(r->f, r->q, r->lhead, r->ltail, r->nic_busy, r->dev, r->p);
  fs__heap_free(&r->h);
  free(r);
}

int fs__pktnet_new(const fs__pktnet_cfg *cfg, fs__pktnet **out) {
  *out = NULL;
  fs__pktnet *r = calloc(1, sizeof(*r));
  if (!r) return FS_ENOMEM;
  r->c = *cfg;
  fs__heap_init(&r->h, 2, NULL);
  r->free_p = r->free_slot = -1;
  r->rng = 1;
  size_t L = (size_t)cfg->t->n_links, V = (size_t)cfg->t->n_nodes;
  r->free_at = calloc(L + 1, sizeof(double));
  r->ring = calloc(L + 1, sizeof(port_ring));
  r->lanes = calloc(L + 1, sizeof(lane));
  r->red_count = calloc(L + 1, sizeof(int32_t));
  r->red_bytes = calloc(L + 1, sizeof(double));
  r->red_old = calloc(L + 1, 1);
  r->lhead = fs__malloc(2 * V + 1, sizeof(int32_t));
  r->ltail = fs__malloc(2 * V + 1, sizeof(int32_t));
  r->nic_busy = calloc(V + 1, 1);
  r->dev = fs__malloc(V + 1, sizeof(int32_t));
  if (!r->free_at || !r->ring || !r->lanes || !r->red_count || !r->red_bytes || !r->red_old ||
      !r->lhead || !r->ltail || !r->nic_busy || !r->dev) {
    fs__pktnet_free(r);
    return FS_ENOMEM;
  }
  for (size_t v = 0; v < V; v++) r->dev[v] = -1;
  for (size_t k = 0; k < 2 * V; k++) r->lhead[k] = r->ltail[k] = -1;
  *out = r;
  return 0;
}
