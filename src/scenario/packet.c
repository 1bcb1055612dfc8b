/* The built-in packet-level backend (fabricsim/packet.h; docs/model.md,
 * "The packet backend"): the ns-3 backend's set-up, packet by packet.
 *
 * Events on one heap ordered by (time, push order): an item begins, a task
 * ends, a host's NIC is free, a packet reaches the next node of its path.
 * A switch port is a FIFO whose sender is free at free_at; the packets it
 * holds that have not begun to leave are counted from a ring of their
 * start times (RED judges the queue a packet joins). A host holds a queue
 * per flow and direction (data and SYN one way, SYN-ACK and ACKs the
 * other) under FQ-CoDel's scheduler, in front of its NIC and the NIC's
 * device queue of one packet, as the backend's hosts. Cost: O(packets x
 * hops x log events). */
#include "fabricsim/packet.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "internal.h"

enum { EV_BEGIN, EV_TASK_DONE, EV_NIC, EV_HOP };
enum { PK_SYN, PK_SYNACK, PK_DATA, PK_ACK };

enum { INIT_WINDOW_CAP = 65535 }; /* the SYN's unscaled receive window, bytes */
static const double DCTCP_G = 1.0 / 16;

typedef struct pkt {
  int32_t flow, next; /* next: in its host queue, or the free list */
  uint8_t kind, ce;
  double bytes, t_in; /* t_in: when it joined its host's queue */
} pkt;

typedef struct event {
  double t;
  uint64_t seq;
  int32_t kind, a, b; /* item / host / packet, hop */
} event;

/* A host queue: a FIFO of packets (head, tail) and its place in the host's
 * fair queue (FQ-CoDel's scheduler: a list of new queues served first,
 * one of old ones; a deficit of bytes). */
typedef struct hq {
  int32_t head, tail;
  int32_t prev, next; /* neighbours in its list; -1 */
  uint8_t list;       /* LIST_NONE, LIST_NEW or LIST_OLD */
  double deficit;
} hq;

enum { LIST_NONE, LIST_NEW, LIST_OLD };

typedef struct flowst {
  const int32_t *links; /* its path (forward) */
  int32_t n, host, dst;
  int64_t n_seg, sent, acked, got, win_end, recover;
  double last_bytes; /* wire bytes of its last segment */
  double cwnd, ssthresh, alpha;
  int64_t win_acked, win_marked;
  uint8_t opened;
} flowst;

typedef struct run {
  const fs_scenario *sc;
  const fs_topo *t;
  double mss, hdr, k100;
  int persistent;
  int32_t n_flows, n_items;
  flowst *f;
  int32_t *rev; /* per flow: its reverse path's links (n each, at off) */
  int64_t *rev_off;
  /* items: deps (CSR of dependents), deps left, start, finish */
  int64_t *dep_off;
  int32_t *dep_to, *left;
  double *st, *fin;
  /* switch ports: when free, start times of packets not yet leaving */
  double *free_at;
  double **ring;
  int32_t *ring_head, *ring_n, *ring_cap;
  int32_t *red_count;
  /* hosts: queues 2 per flow (data, control), their lists, the NIC */
  hq *q;
  int32_t *lhead, *ltail; /* per host and list (2 v + new/old - 1): its queues */
  uint8_t *nic_busy;
  int32_t *slot; /* per host: the packet in the NIC's device queue, -1 none */
  /* packets and events */
  pkt *p;
  int32_t n_p, cap_p, free_p;
  event *h;
  size_t n_h, cap_h;
  uint64_t seq, rng;
} run;

/* splitmix64: RED's draws, a fixed seed for determinism */
static double uniform(run *r) {
  uint64_t z = (r->rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-53;
}

static int ev_less(const event *x, const event *y) {
  return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static int push(run *r, double t, int32_t kind, int32_t a, int32_t b) {
  if (r->n_h == r->cap_h) {
    size_t cap = r->cap_h ? 2 * r->cap_h : 1024;
    event *h = realloc(r->h, cap * sizeof(*h));
    if (!h) return FS_ENOMEM;
    r->h = h;
    r->cap_h = cap;
  }
  event e = {t, r->seq++, kind, a, b};
  size_t i = r->n_h++;
  while (i > 0 && ev_less(&e, &r->h[(i - 1) / 2])) {
    r->h[i] = r->h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  r->h[i] = e;
  return 0;
}

static event pop(run *r) {
  event top = r->h[0], x = r->h[--r->n_h];
  size_t i = 0, n = r->n_h;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && ev_less(&r->h[c + 1], &r->h[c])) c++;
    if (!ev_less(&r->h[c], &x)) break;
    r->h[i] = r->h[c];
    i = c;
  }
  if (n) r->h[i] = x;
  return top;
}

static int32_t new_pkt(run *r, int32_t flow, int kind, double bytes) {
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
  r->p[i] = (pkt){flow, -1, (uint8_t)kind, 0, bytes, 0};
  return i;
}

static void free_pkt(run *r, int32_t i) {
  r->p[i].next = r->free_p;
  r->free_p = i;
}

/* The bytes of packet i as the host's queue disc counts them (IP: without
 * PPP's 2), and its quantum: a full packet (the device's MTU). */
static double ip_bytes(const run *r, int32_t i) { return r->p[i].bytes - 2; }
static double quantum(const run *r) { return r->mss + r->hdr - 2; }

static void list_remove(run *r, int32_t v, int32_t x) {
  hq *q = &r->q[x];
  int32_t *head = &r->lhead[2 * v + q->list - 1], *tail = &r->ltail[2 * v + q->list - 1];
  if (q->prev >= 0) r->q[q->prev].next = q->next;
  else *head = q->next;
  if (q->next >= 0) r->q[q->next].prev = q->prev;
  else *tail = q->prev;
  q->list = LIST_NONE;
}

static void list_append(run *r, int32_t v, int32_t x, int list) {
  hq *q = &r->q[x];
  int32_t *head = &r->lhead[2 * v + list - 1], *tail = &r->ltail[2 * v + list - 1];
  q->list = (uint8_t)list;
  q->next = -1;
  q->prev = *tail;
  if (*tail >= 0) r->q[*tail].next = x;
  else *head = x;
  *tail = x;
}

static int32_t hop_link(const run *r, int32_t fi, int kind, int32_t k);
static double k_pkts(const run *r, int32_t l);

/* Host v's fair queue gives its next packet at t (-1: none), by FQ-CoDel's
 * scheduler (RFC 8290, 4.2): the first new queue, else the first old one;
 * a queue out of deficit gets a quantum more and goes to the back of the
 * old ones; an empty new queue goes there too (if there are old ones), an
 * empty old one leaves. A data packet that waited there more than K full
 * packets' time is marked (the backend's CE threshold, judged when it
 * leaves). */
static int32_t round_take(run *r, int32_t v, double t) {
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
    int32_t l = hop_link(r, p->flow, p->kind, 0);
    if (p->kind == PK_DATA &&
        t - p->t_in > k_pkts(r, l) * (r->mss + r->hdr) * 8 / r->t->links[l].capacity_bps)
      p->ce = 1;
    return i;
  }
}

static int nic_free(run *r, int32_t v, double t);

/* Queue x of host v takes packet i at t: an idle NIC sends it at once,
 * and the device queue behind a busy one (a packet) takes the fair
 * queue's next at once, as ns-3's do. */
static int host_put(run *r, int32_t v, int32_t x, int32_t i, double t) {
  hq *q = &r->q[x];
  r->p[i].t_in = t;
  r->p[i].next = -1;
  if (q->tail >= 0) r->p[q->tail].next = i;
  else q->head = i;
  q->tail = i;
  if (q->list == LIST_NONE) { /* a new flow */
    q->deficit = quantum(r);
    list_append(r, v, x, LIST_NEW);
  }
  if (!r->nic_busy[v]) return nic_free(r, v, t); /* an idle NIC sends it at once */
  if (r->slot[v] < 0) r->slot[v] = round_take(r, v, t);
  return 0;
}

/* The link a packet of flow fi crosses at hop k (forward for data and SYNs,
 * its reverse path for the answers). */
static int32_t hop_link(const run *r, int32_t fi, int kind, int32_t k) {
  return kind == PK_DATA || kind == PK_SYN ? r->f[fi].links[k] : r->rev[r->rev_off[fi] + k];
}

static double k_pkts(const run *r, int32_t l) {
  return r->k100 * r->t->links[l].capacity_bps / 100e9;
}

/* RED at a switch port (the backend's: MinTh = MaxTh = K, QW 1, gentle):
 * whether a packet joining `waiting` packets is marked. */
static int red_mark(run *r, int32_t l, int32_t waiting) {
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
  double pb = 0.02 + 0.98 * (waiting - k) / k;
  /* RED's spacing of marks with Wait (ns-3's default): none until count
   * x p reaches 1, then p / (2 - count x p) */
  double cp = c * pb;
  double pa = cp < 1 ? 0 : cp < 2 ? pb / (2 - cp) : 1;
  if (uniform(r) < pa) {
    r->red_count[l] = 0;
    return 1;
  }
  return 0;
}

/* Packet i reaches switch port l at t: FIFO, marked by RED, on to the next
 * node after its transmission and the link's latency. */
static int port_send(run *r, int32_t l, int32_t i, int32_t hop, double t) {
  double *ring = r->ring[l];
  while (r->ring_n[l] && ring[r->ring_head[l]] <= t) { /* begun to leave */
    r->ring_head[l] = (r->ring_head[l] + 1) % r->ring_cap[l];
    r->ring_n[l]--;
  }
  if (r->p[i].kind == PK_DATA && red_mark(r, l, r->ring_n[l])) r->p[i].ce = 1;
  double start = r->free_at[l] > t ? r->free_at[l] : t;
  double cap = r->t->links[l].capacity_bps / 8;
  r->free_at[l] = start + r->p[i].bytes / cap;
  if (r->ring_n[l] == r->ring_cap[l]) {
    int32_t cap2 = r->ring_cap[l] ? 2 * r->ring_cap[l] : 64;
    double *nr = malloc((size_t)cap2 * sizeof(double));
    if (!nr) return FS_ENOMEM;
    for (int32_t k = 0; k < r->ring_n[l]; k++) nr[k] = ring[(r->ring_head[l] + k) % r->ring_cap[l]];
    free(ring);
    r->ring[l] = ring = nr;
    r->ring_head[l] = 0;
    r->ring_cap[l] = cap2;
  }
  ring[(r->ring_head[l] + r->ring_n[l]++) % r->ring_cap[l]] = start;
  return push(r, r->free_at[l] + (double)r->t->links[l].latency_ns * 1e-9, EV_HOP, i, hop + 1);
}

/* Flow fi sends what its window allows. */
static int send_window(run *r, int32_t fi, double t) {
  flowst *f = &r->f[fi];
  while (f->sent < f->n_seg && (double)(f->sent - f->acked) < floor(f->cwnd)) {
    double bytes = f->sent == f->n_seg - 1 ? f->last_bytes : r->mss + r->hdr;
    int32_t i = new_pkt(r, fi, PK_DATA, bytes);
    if (i < 0) return FS_ENOMEM;
    f->sent++;
    int rc = host_put(r, f->host, 2 * fi, i, t);
    if (rc) return rc;
  }
  return 0;
}

/* The backend's round trip of flow fi: a full packet and its ACK per hop. */
static double rtt_of(const run *r, int32_t fi) {
  const flowst *f = &r->f[fi];
  double s = 0;
  for (int32_t k = 0; k < f->n; k++) {
    const fs_link *lk = &r->t->links[f->links[k]];
    s += 2 * (double)lk->latency_ns * 1e-9 + (r->mss + 2 * r->hdr) * 8 / lk->capacity_bps;
  }
  return s;
}

static int item_done(run *r, int32_t it, double t);

/* When item `it` may start at the earliest (its start_ns), in s. */
static double start_of(const run *r, int32_t it) {
  return it < r->n_flows ? (double)r->sc->flows[it].start_ns * 1e-9
                         : (double)r->sc->tasks[it - r->n_flows].start_ns * 1e-9;
}

static int begin(run *r, int32_t it, double t) {
  r->st[it] = t;
  if (it >= r->n_flows) {
    const fs_scenario_task *tk = &r->sc->tasks[it - r->n_flows];
    return push(r, t + (double)tk->duration_ns * 1e-9, EV_TASK_DONE, it, 0);
  }
  flowst *f = &r->f[it];
  double bytes = r->sc->flows[it].bytes;
  if (!(bytes > 0) || f->n == 0) return item_done(r, it, t);
  f->n_seg = (int64_t)ceil(bytes / r->mss);
  f->last_bytes = bytes - (double)(f->n_seg - 1) * r->mss + r->hdr;
  f->alpha = 1;
  f->recover = -1;
  double iw = r->sc->transport.init_window;
  if (r->persistent) { /* warm: the backend's window, in congestion avoidance */
    const fs_link *l0 = &r->t->links[f->links[0]];
    double w = ceil(l0->capacity_bps / 8 * rtt_of(r, it) / r->mss);
    f->cwnd = f->ssthresh = w > iw ? w : iw;
    f->opened = 1;
    return send_window(r, it, t);
  }
  double first = floor(INIT_WINDOW_CAP / r->mss);
  f->cwnd = iw < first ? iw : first;
  if (f->cwnd < 1) f->cwnd = 1;
  f->ssthresh = INFINITY;
  int32_t i = new_pkt(r, it, PK_SYN, r->hdr);
  return i < 0 ? FS_ENOMEM : host_put(r, f->host, 2 * it, i, t);
}

static int item_done(run *r, int32_t it, double t) {
  r->fin[it] = t;
  for (int64_t k = r->dep_off[it]; k < r->dep_off[it + 1]; k++) {
    int32_t d = r->dep_to[k];
    if (--r->left[d] == 0) {
      double s0 = start_of(r, d);
      int rc = push(r, t > s0 ? t : s0, EV_BEGIN, d, 0);
      if (rc) return rc;
    }
  }
  return 0;
}

/* An ACK of flow fi, echoing a mark or not: DCTCP's alpha once a window
 * of data, a cut once a round trip on an echo, else slow start or
 * congestion avoidance. */
static int on_ack(run *r, int32_t fi, int ece, double t) {
  flowst *f = &r->f[fi];
  f->acked++;
  if (!f->opened) { /* past the SYN's unscaled window */
    f->opened = 1;
    double iw = r->sc->transport.init_window;
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
  return send_window(r, fi, t);
}

/* Host v's NIC is free at t: it sends the packet of its device queue, or
 * the fair queue's next, and the device queue takes the one after. */
static int nic_free(run *r, int32_t v, double t) {
  int32_t i = r->slot[v];
  if (i < 0) i = round_take(r, v, t);
  r->slot[v] = i < 0 ? -1 : round_take(r, v, t);
  r->nic_busy[v] = i >= 0;
  if (i < 0) return 0;
  pkt *p = &r->p[i];
  int32_t l = hop_link(r, p->flow, p->kind, 0);
  double cap = r->t->links[l].capacity_bps / 8;
  double done = t + p->bytes / cap;
  int rc = push(r, done, EV_NIC, v, 0);
  return rc ? rc : push(r, done + (double)r->t->links[l].latency_ns * 1e-9, EV_HOP, i, 1);
}

/* Packet i has crossed `hop` links of its path at t. */
static int arrive(run *r, int32_t i, int32_t hop, double t) {
  pkt *p = &r->p[i];
  int32_t fi = p->flow;
  flowst *f = &r->f[fi];
  if (hop < f->n) return port_send(r, hop_link(r, fi, p->kind, hop), i, hop, t);
  int kind = p->kind, ce = p->ce;
  free_pkt(r, i);
  int32_t back = -1;
  switch (kind) {
  case PK_SYN:
    back = new_pkt(r, fi, PK_SYNACK, r->hdr);
    return back < 0 ? FS_ENOMEM : host_put(r, f->dst, 2 * fi + 1, back, t);
  case PK_SYNACK:
    return send_window(r, fi, t);
  case PK_DATA: {
    back = new_pkt(r, fi, PK_ACK, r->hdr);
    if (back < 0) return FS_ENOMEM;
    r->p[back].ce = (uint8_t)ce; /* the echo */
    int rc = host_put(r, f->dst, 2 * fi + 1, back, t);
    if (!rc && ++f->got == f->n_seg) rc = item_done(r, fi, t);
    return rc;
  }
  default:
    return on_ack(r, fi, ce, t);
  }
}

int fs_packet_check(const fs_scenario *sc, fs_err *err) {
  if (sc->transport.kind != FS_TRANSPORT_TCP)
    return fs_err_set(err, FS_EINVAL,
                      "%s: $.transport.kind: the packet backend runs tcp (DCTCP), got \"%s\" "
                      "(give --transport tcp, or use --backend ns3 for rdma)",
                      sc->file, fs_transport_kind_name(sc->transport.kind));
  int rc = fs__scenario_single_path_check(sc, "the packet backend", err);
  if (rc) return rc;
  if (!(sc->transport.queue_k > 0))
    return fs_err_set(err, FS_EINVAL,
                      "%s: $.transport.queue_k: the packet backend's switch ports mark ECN at K > 0 "
                      "packets, got %g",
                      sc->file, sc->transport.queue_k);
  return 0;
}

static void run_free(run *r) {
  if (r->ring)
    for (int32_t l = 0; l < r->t->n_links; l++) free(r->ring[l]);
  free(r->ring);
  free(r->ring_head);
  free(r->ring_n);
  free(r->ring_cap);
  free(r->red_count);
  free(r->free_at);
  free(r->f);
  free(r->rev);
  free(r->rev_off);
  free(r->dep_off);
  free(r->dep_to);
  free(r->left);
  free(r->st);
  free(r->fin);
  free(r->q);
  free(r->lhead);
  free(r->ltail);
  free(r->nic_busy);
  free(r->slot);
  free(r->p);
  free(r->h);
}

/* Routes, reverse paths and dependencies of sc into r. */
static int setup(run *r, const fs_scenario *sc, fs_err *err) {
  const fs_topo *t = sc->topo;
  const fs_sim *s = sc->sim;
  size_t L = (size_t)t->n_links, V = (size_t)t->n_nodes, F = (size_t)sc->n_flows;
  size_t N = (size_t)fs_sim_n_items(s);
  r->n_items = (int32_t)N;
  r->f = calloc(F + 1, sizeof(*r->f));
  r->rev_off = fs__malloc(F + 1, sizeof(int64_t));
  r->free_at = calloc(L + 1, sizeof(double));
  r->ring = calloc(L + 1, sizeof(double *));
  r->ring_head = calloc(L + 1, sizeof(int32_t));
  r->ring_n = calloc(L + 1, sizeof(int32_t));
  r->ring_cap = calloc(L + 1, sizeof(int32_t));
  r->red_count = calloc(L + 1, sizeof(int32_t));
  r->q = fs__malloc(2 * F + 1, sizeof(hq));
  r->lhead = fs__malloc(2 * V + 1, sizeof(int32_t));
  r->ltail = fs__malloc(2 * V + 1, sizeof(int32_t));
  r->nic_busy = calloc(V + 1, 1);
  r->slot = fs__malloc(V + 1, sizeof(int32_t));
  r->left = calloc(N + 1, sizeof(int32_t));
  r->dep_off = calloc(N + 2, sizeof(int64_t));
  r->st = fs__malloc(N + 1, sizeof(double));
  r->fin = fs__malloc(N + 1, sizeof(double));
  if (!r->f || !r->rev_off || !r->free_at || !r->ring || !r->ring_head || !r->ring_n ||
      !r->ring_cap || !r->red_count || !r->q || !r->lhead || !r->ltail ||
      !r->nic_busy || !r->slot || !r->left || !r->dep_off || !r->st || !r->fin)
    return fs_err_set(err, FS_ENOMEM, "%s: out of memory (packet backend)", sc->file);
  for (size_t v = 0; v < V; v++) r->slot[v] = -1;
  for (size_t k = 0; k < 2 * V; k++) r->lhead[k] = r->ltail[k] = -1;
  for (size_t x = 0; x < 2 * F; x++) r->q[x] = (hq){-1, -1, -1, -1, LIST_NONE, 0};
  int64_t entries = 0;
  for (int32_t i = 0; i < sc->n_flows; i++) {
    const int32_t *links;
    const double *w;
    int32_t n;
    fs_sim_flow_route(s, i, &links, &w, &n);
    int rc = sc->flows[i].bytes > 0 ? fs__scenario_flow_single_path(sc, i, "the packet backend", err)
                                    : 0;
    if (rc) return rc;
    for (int32_t k = 0; k < n; k++)
      if (t->links[links[k]].reverse < 0)
        return fs_err_set(err, FS_EINVAL,
                          "%s: $.flows[%d]: link %d of its path has no reverse for the ACKs",
                          sc->file, i, links[k]);
    r->f[i] = (flowst){.links = links, .n = n, .host = n ? t->links[links[0]].from : -1,
                       .dst = n ? t->links[links[n - 1]].to : -1};
    r->rev_off[i] = entries;
    entries += n;
  }
  r->rev = fs__malloc((size_t)entries + 1, sizeof(int32_t));
  if (!r->rev) return fs_err_set(err, FS_ENOMEM, "%s: out of memory (packet backend)", sc->file);
  for (int32_t i = 0; i < sc->n_flows; i++)
    for (int32_t k = 0; k < r->f[i].n; k++)
      r->rev[r->rev_off[i] + k] = t->links[r->f[i].links[r->f[i].n - 1 - k]].reverse;
  int64_t nd = fs_sim_n_deps(s);
  for (int64_t d = 0; d < nd; d++) {
    int32_t a, b;
    int sent;
    fs_sim_dep(s, d, &a, &b, &sent);
    if (sent)
      return fs_err_set(err, FS_EINVAL,
                        "%s: dependency of item %d on item %d: the packet backend starts an item "
                        "when those before it are done, not when their bytes are sent",
                        sc->file, b, a);
    r->dep_off[a + 1]++;
    r->left[b]++;
  }
  for (size_t i = 0; i < N; i++) r->dep_off[i + 1] += r->dep_off[i];
  r->dep_to = fs__malloc((size_t)nd + 1, sizeof(int32_t));
  int64_t *fill = fs__malloc(N + 1, sizeof(int64_t));
  if (!r->dep_to || !fill) {
    free(fill);
    return fs_err_set(err, FS_ENOMEM, "%s: out of memory (packet backend)", sc->file);
  }
  memcpy(fill, r->dep_off, N * sizeof(int64_t));
  for (int64_t d = 0; d < nd; d++) {
    int32_t a, b;
    int sent;
    fs_sim_dep(s, d, &a, &b, &sent);
    r->dep_to[fill[a]++] = b;
  }
  free(fill);
  return 0;
}

int fs_packet_run(fs_scenario *sc, fs_err *err) {
  if (!sc->sim) return fs_err_set(err, FS_EINVAL, "%s: the packet backend needs a routed run", sc->file);
  int rc = fs_packet_check(sc, err);
  if (rc) return rc;
  run r;
  memset(&r, 0, sizeof(r));
  r.sc = sc;
  r.t = sc->topo;
  r.mss = sc->transport.mss_bytes;
  r.hdr = sc->transport.header_bytes;
  r.k100 = sc->transport.queue_k;
  r.persistent = sc->transport.persistent;
  r.n_flows = sc->n_flows;
  r.free_p = -1;
  r.rng = 1;
  double *busy = NULL;
  if ((rc = setup(&r, sc, err))) goto done;
  for (int32_t it = 0; it < r.n_items; it++) {
    r.st[it] = r.fin[it] = -1;
    if (r.left[it]) continue;
    if ((rc = push(&r, start_of(&r, it), EV_BEGIN, it, 0))) break;
  }
  while (!rc && r.n_h) {
    event e = pop(&r);
    switch (e.kind) {
    case EV_BEGIN: rc = begin(&r, e.a, e.t); break;
    case EV_TASK_DONE: rc = item_done(&r, e.a, e.t); break;
    case EV_NIC: rc = nic_free(&r, e.a, e.t); break;
    default: rc = arrive(&r, e.a, e.b, e.t); break;
    }
  }
  if (rc) {
    rc = fs_err_set(err, rc, "%s: out of memory (packet backend)", sc->file);
    goto done;
  }
  for (int32_t it = 0; it < r.n_items; it++)
    if (r.fin[it] < 0) {
      rc = fs_err_set(err, FS_EINVAL,
                      "%s: item %d never ran in the packet backend (a dependency cycle?)",
                      sc->file, it);
      goto done;
    }
  busy = fs__malloc((size_t)r.t->n_links + 1, sizeof(double));
  if (!busy || fs__scenario_busy_times(sc, r.st, r.fin, busy)) {
    rc = fs_err_set(err, FS_ENOMEM, "%s: out of memory (packet backend)", sc->file);
    goto done;
  }
  rc = fs_sim_replace_times(sc->sim, r.st, r.fin, busy, err);
done:
  free(busy);
  run_free(&r);
  return rc;
}
