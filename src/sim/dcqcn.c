/* DCQCN rate control for rdma (docs/model.md, "DCQCN"): the fluid model
 * of RoCEv2's congestion control that the engine (ratectl.c, cc_step) steps
 * every few microseconds while a switch port is queued or
 * over-subscribed, and when a rate increase, a cut or a CNP is due; flows
 * that come or go in between re-rate their NICs only (fs__dcqcn_local). Under it the engine does not share links max-min: each flow sends
 * at its offer (rerate_cc), and capacities act through the queues here.
 *
 * Senders: each queue pair (a flow) is paced at its reaction point's rate
 * RC; its NIC serves its queue pairs round robin, so what a flow offers is
 * its NIC's max-min share under the RC caps. Ports: every flow keeps what
 * it has queued at each port of its route (also after its sender is done,
 * until it is all through); what comes to a port is what the port before
 * lets out; a port whose queue outlasts the step lets out its capacity,
 * shared in proportion to what each flow has queued there (FIFO in the
 * fluid limit), a shorter queue is all let out in the step and what comes
 * shares the capacity left (port_fifo). RED marks (ECN)
 * with probability pmax (q - kmin) / (kmax - kmin) between the thresholds
 * and every packet above; a marked packet waits out the queues from its
 * port on, then its CNP crosses back (a delay line of time buckets per
 * flow). Marks are summed as expected numbers and each whole one is a CNP,
 * so the model is deterministic. Reaction point (the ns-3 backend's,
 * tools/ns3/fabricsim_ns3.cc, step for step): the first CNP sets alpha to
 * 1, cuts at once and starts the timers; alpha decays by (1 - g) every
 * alpha_us and gains g in a period with a CNP; at the end of a dec_us
 * period with a CNP the rate is cut by alpha / 2 (the rate before it
 * becomes the target, unless the period before cut too) and the increase
 * timer restarts; every inc_us after it the rate goes half way to the
 * target, which rises by ai (at stage F) or hai (beyond F). A flow's last
 * byte waits out each queue as it reaches it (ratectl.c, cc_tail).
 *
 * tcp under DCTCP (d->dctcp; docs/model.md, "DCTCP") uses the same ports,
 * marks and delay lines: marks by gentle RED from K packets, and the sender
 * is a window (dctcp_react) instead of a reaction point; on a new
 * connection the engine's slow-start rounds pace it until its first echo. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "pktnet.h"

/* The model's arrays: name, per flow (F) or per link (L), element size,
 * zeroed (1) or not: one list for fs__dcqcn_init and fs__dcqcn_free. */
#define FS__DCQCN_ARRAYS(X)                                                   \
  X(slot, F, sizeof(int32_t), 1) X(w, F, sizeof(fs__dqwin), 1)               \
  X(q, L, sizeof(double), 1)                                                  \
  X(port, L, sizeof(fs__port), 1) /* fs__dcqcn_wait_s reads any link's */    \
  X(q0, L, sizeof(double), 1) X(marking, L, 1, 1) X(kchg, L, 1, 1)         \
  X(stamp, L, sizeof(uint32_t), 1) X(links, L, sizeof(int32_t), 0)            \
  X(live, L, sizeof(int32_t), 0) X(nic, F, sizeof(int32_t), 0)                \
  X(drain, F, sizeof(int32_t), 0) X(tail_hop, F, sizeof(int32_t), 0)          \
  X(tail_more, F, sizeof(double), 0) X(exits, F, sizeof(int32_t), 0)          \
  X(qoff, L, sizeof(double), 1) X(upd, F, sizeof(int32_t), 0)               \
  X(touch, F, sizeof(int32_t), 0) X(nic_ok, L, sizeof(uint32_t), 1)                \
  X(nic_ver, L, sizeof(uint32_t), 1) X(rlo, L, sizeof(double), 0)                   \
  X(rhi, L, sizeof(double), 0) X(kept, F, 1, 0)

int fs__dcqcn_init(fs__dcqcn *d, const fs_dcqcn *prm, int32_t n_links, int32_t n_flows) {
  memset(d, 0, sizeof(*d));
  d->prm = *prm;
  fs__pool_init(&d->rec, sizeof(fs__dqflow));
  size_t L = (size_t)(n_links > 0 ? n_links : 1), F = (size_t)(n_flows > 0 ? n_flows : 1);
  int ok = 1;
#define FS__DCQCN_ALLOC(name, count, size, zeroed)                              \
  d->name = (zeroed) ? calloc(count, size) : fs__malloc(count, size);         \
  ok &= d->name != NULL;
  FS__DCQCN_ARRAYS(FS__DCQCN_ALLOC)
#undef FS__DCQCN_ALLOC
  if (!ok) {
    fs__dcqcn_free(d);
    return FS_ENOMEM;
  }
  for (size_t l = 0; l < L; l++) d->port[l].kg = 1;
  d->nic_epoch = 1;
  return 0;
}

void fs__dcqcn_free(fs__dcqcn *d) {
  for (int32_t i = 0; i < d->rec.used; i++) { /* (the records given back hold none) */
    fs__dqflow *rp = fs__pool_at(&d->rec, i);
    free(rp->cnp.n), free(rp->hop.b);
  }
  fs__pool_free(&d->rec);
#define FS__DCQCN_FREE(name, count, size, zeroed) free(d->name);
  FS__DCQCN_ARRAYS(FS__DCQCN_FREE)
#undef FS__DCQCN_FREE
  memset(d, 0, sizeof(*d));
}

/* Flow fi's NIC: the first link of its route when that leaves its source
 * (-1: none, nothing shares its sending). */
static int32_t nic_link(const fs__simcore *c, const fs__flow *f) {
  if (f->n < 1) return -1;
  int32_t l = f->links[0];
  return c->t->links[l].from == f->src ? l : -1;
}

/* A record for flow fi (zeroed), if it has none. */
static int take(fs__dcqcn *d, int32_t fi) {
  int32_t k;
  if (d->slot[fi]) return 0;
  if (fs__pool_take(&d->rec, &k)) return FS_ENOMEM;
  memset(fs__pool_at(&d->rec, k), 0, sizeof(fs__dqflow));
  d->slot[fi] = k + 1;
  return 0;
}

int fs__dcqcn_start(fs__dcqcn *d, const fs__simcore *c, int32_t fi) {
  const fs__flow *f = &c->flows[fi];
  if (take(d, fi)) return FS_ENOMEM;
  fs__dqflow *rp = fs__dq(d, fi);
  fs__dqwin *win = &d->w[fi];
  int32_t l = nic_link(c, f);
  if (l >= 0) d->nic_ok[l] = 0; /* (its rc) */
  double line = l >= 0 ? c->cap_Bps[l] : INFINITY;
  if (!(line < INFINITY)) /* no NIC on its route: its fastest link */
    for (int32_t k = 0; k < f->n; k++)
      if (c->cap_Bps[f->links[k]] < line) line = c->cap_Bps[f->links[k]];
  rp->line = line;
  rp->rc = rp->rt = line;
  rp->alpha = 1;
  rp->marks = 0;
  rp->stage = 0;
  rp->cc = rp->done = 0;
  rp->t_inc = rp->t_alpha = INFINITY;
  rp->cnp_dec = rp->cnp_alpha = 0;
  rp->next_dec = INFINITY;
  rp->offer = 0;
  for (int32_t k = 0; k < rp->cnp.cap; k++) rp->cnp.n[k] = 0;
  rp->cnp.len = 0;
  rp->pend = 0;
  if (d->dctcp) {
    win->acked = 0;
    /* a warm connection (the ns-3 backend's): its window covers the
     * path's bandwidth-delay product, at least the initial window; the
     * round trip is the latencies both ways and a packet and its ACK per
     * hop */
    double rtt = 0;
    for (int32_t k = 0; k < f->n; k++) {
      const fs_link *lk = &c->t->links[f->links[k]];
      rtt += f->w[k] * (2 * (double)lk->latency_ns * 1e-9 +
                        (d->wire_bytes + d->ack_bytes) / (lk->capacity_bps / 8));
    }
    double segs = ceil(line * rtt / d->mss - 1e-9);
    if (segs < d->init_window) segs = d->init_window;
    win->rtt0 = rtt;
    win->cwnd = segs * d->wire_bytes;
    rp->rc = rtt > 0 ? fmin(win->cwnd / rtt, line) : line;
    win->win_end = -1; /* set at its first step */
    win->win_pk = win->win_mk = 0;
    win->cwr_end = -INFINITY;
    rp->ss = FS__SS_NONE;
  }
  fs__dcqcn_reset_hops(d, fi);
  return 0;
}

void fs__dcqcn_slow_start(fs__dcqcn *d, int32_t fi, double cwnd, uint8_t mode) {
  fs__dqflow *rp = fs__dq(d, fi);
  d->w[fi].cwnd = cwnd;
  rp->ss = mode;
  rp->rc = rp->line;
  fs__dcqcn_nics_changed(d); /* (its NIC unknown here) */
}

/* Flow fi's per-hop arrays hold n entries (new ones 0): hops, the
 * steps' test inline, and grow_hops when they do not. */
static int grow_hops(fs__hops *h, int32_t n) {
  double *b = malloc((size_t)n * 4 * sizeof(double));
  if (!b) return FS_ENOMEM;
  for (int32_t k = 0; k < 4 * n; k++) b[k] = 0;
  for (int32_t k = 0; k < h->cap; k++)
    b[k] = h->b[k], b[n + k] = h->arr[k], b[2 * n + k] = h->out[k], b[3 * n + k] = h->came[k];
  free(h->b);
  h->b = b;
  h->arr = b + n;
  h->out = b + 2 * n;
  h->came = b + 3 * n;
  h->cap = n;
  return 0;
}

static inline int hops(fs__dqflow *rp, int32_t n) {
  return n <= rp->hop.cap ? 0 : grow_hops(&rp->hop, n);
}

void fs__dcqcn_reset_hops(fs__dcqcn *d, int32_t fi) {
  if (!d->slot[fi]) return;
  fs__hops *h = &fs__dq(d, fi)->hop;
  for (int32_t k = 0; k < h->cap; k++) h->b[k] = h->arr[k] = h->out[k] = h->came[k] = 0;
}

/* Flow fi's record goes back to the pool, with its arrays. */
static void give_back(fs__dcqcn *d, int32_t fi) {
  fs__dqflow *rp = fs__dq(d, fi);
  free(rp->cnp.n);
  free(rp->hop.b);
  memset(rp, 0, sizeof(*rp));
  fs__pool_put(&d->rec, d->slot[fi] - 1);
  d->slot[fi] = 0;
}

void fs__dcqcn_done(fs__dcqcn *d, int32_t fi) {
  if (!d->slot[fi]) return;
  fs__dqflow *rp = fs__dq(d, fi);
  rp->done = 1;
  if (!rp->in_drain) give_back(d, fi);
}

int fs__dcqcn_sent(fs__dcqcn *d, int32_t fi) {
  fs__dqflow *rp = fs__dq(d, fi);
  if (!rp->in_drain) d->drain[d->n_drain++] = fi;
  rp->in_drain = 1;
  return 0;
}

/* RED's marking probability at a queue of q bytes on a link of Bps;
 * under DCTCP the reference's gentle RED with both thresholds at K. Its
 * thresholds (red_lo: Kmin, or K; red_hi: Kmax) are kept per link for a
 * step (gather_queues): red_at. */
static double red_lo(const fs__dcqcn *d, double Bps) {
  double scale = Bps / 12.5e9;
  return d->dctcp ? d->k100 * d->wire_bytes * scale : d->prm.kmin_kb * 1e3 * scale;
}

static double red_hi(const fs__dcqcn *d, double Bps) {
  return d->dctcp ? 0 : d->prm.kmax_kb * 1e3 * (Bps / 12.5e9);
}

static double red_at(const fs__dcqcn *d, double q, double lo, double hi) {
  if (d->dctcp) { /* ns-3's RED, gentle, both thresholds at K: max_p at K, 1 at 2 K */
    double k = lo;
    if (q < k) return 0;
    if (q >= 2 * k) return 1;
    return FS__DCTCP_MAXP + (1 - FS__DCTCP_MAXP) * (q - k) / k;
  }
  if (q <= lo) return 0;
  if (q >= hi) return 1;
  return d->prm.pmax * (q - lo) / (hi - lo);
}

/* Flow f crosses a failed link (no capacity): it sends nothing until it is
 * given another route (as under max-min, where it gets no rate). */
static int blocked(const fs__simcore *c, const fs__flow *f) {
  for (int32_t k = 0; k < f->n; k++)
    if (!(c->cap_Bps[f->links[k]] > 0)) return 1;
  return 0;
}

/* What each flow of a NIC offers: round robin under the RC caps (max-min
 * on the NIC's link alone). */
static void nic_share(fs__dcqcn *d, const fs__simcore *c, int32_t l) {
  const fs__link_active *a = &c->active[l];
  /* (the same flows in the same order, rcs and capacities: the same
   * offers as last time) */
  if (d->nic_ok[l] == d->nic_epoch && d->nic_ver[l] == a->version) return;
  d->nic_ok[l] = d->nic_epoch;
  d->nic_ver[l] = a->version;
  int32_t n = 0;
  for (int32_t j = 0; j < a->n; j++) {
    int32_t fi = a->flow[j];
    if (a->slot[j] != 0) continue;
    /* (a flow whose route starts here but not at its source has offers of
     * its own as well, offers and fs__dcqcn_local: shared again each time) */
    if (c->flows[fi].src != c->t->links[l].from) d->nic_ok[l] = 0;
    if (blocked(c, &c->flows[fi])) fs__dq(d, fi)->offer = 0;
    else d->nic[n++] = fi;
  }
  double room = c->cap_Bps[l];
  int32_t left = n;
  for (int32_t i = 0; i < n; i++) fs__dq(d, d->nic[i])->offer = -1;
  for (int changed = 1; changed && left > 0;) {
    changed = 0;
    double share = room / left;
    for (int32_t i = 0; i < n; i++) {
      fs__dqflow *rp = fs__dq(d, d->nic[i]);
      if (rp->offer >= 0 || rp->rc > share) continue;
      rp->offer = rp->rc;
      room -= rp->rc;
      left--;
      changed = 1;
    }
  }
  double share = left > 0 ? room / left : 0;
  for (int32_t i = 0; i < n; i++) {
    fs__dqflow *rp = fs__dq(d, d->nic[i]);
    if (rp->offer < 0) rp->offer = share > 0 ? share : 0;
  }
}

static void offers(fs__dcqcn *d, const fs__simcore *c, const int32_t *active, int32_t n) {
  uint32_t ep = ++d->epoch;
  for (int32_t i = 0; i < n; i++) {
    int32_t fi = active[i];
    int32_t l = nic_link(c, &c->flows[fi]);
    if (l < 0) {
      fs__dqflow *rp = fs__dq(d, fi);
      rp->offer = blocked(c, &c->flows[fi]) ? 0 : rp->rc;
    } else if (d->stamp[l] != ep) {
      d->stamp[l] = ep;
      nic_share(d, c, l);
    }
  }
}

/* Marks of flow fi (an expected number, n) come back as CNPs: kept in its
 * delay line, a ring of time buckets (a bucket acts at its end: a CNP
 * counts at most a bucket late). A bucket is d->bucket seconds (an alpha
 * period) x 2^shift: when the marks on their way span more than
 * FS__CNP_BUCKETS buckets (queues of milliseconds) the ring merges its
 * buckets pairwise, each into the later one, so it stays that small; an
 * empty ring starts fine again. A bucket before the oldest one kept joins
 * that one. */
static int64_t cnp_bucket(const fs__dcqcn *d, double t) {
  return (int64_t)ceil(t / d->bucket - 1e-9);
}

static double bucket_s(const fs__dcqcn *d, const fs__cnpq *q) {
  return d->bucket * (double)((int64_t)1 << q->shift);
}

static int cnp_push(fs__dqflow *rp, int64_t fine, double n) {
  fs__cnpq *q = &rp->cnp;
  if (q->len == 0) q->shift = 0;
  int64_t b = (fine + ((int64_t)1 << q->shift) - 1) >> q->shift;
  if (q->len == 0) q->base = b;
  if (b < q->base) b = q->base;
  int64_t span = b - q->base + 1;
  while (span > FS__CNP_BUCKETS) { /* coarser: bucket i into ceil(i / 2) */
    int64_t last = q->base + q->len - 1, nbase = (q->base + 1) >> 1;
    double *nb = calloc((size_t)q->cap, sizeof(double));
    if (!nb) return FS_ENOMEM;
    for (int64_t i = q->base; i <= last; i++)
      nb[((i + 1) >> 1) & (q->cap - 1)] += q->n[i & (q->cap - 1)];
    free(q->n);
    q->n = nb;
    q->len = (int32_t)(((last + 1) >> 1) - nbase + 1);
    q->base = nbase;
    q->shift++;
    b = (b + 1) >> 1;
    span = b - q->base + 1;
  }
  if (span > q->cap) { /* a larger ring, the buckets kept where they go */
    int32_t ncap = q->cap ? q->cap : 16;
    while (ncap < span) ncap *= 2;
    double *nb = calloc((size_t)ncap, sizeof(double));
    if (!nb) return FS_ENOMEM;
    for (int64_t i = q->base; i < q->base + q->len; i++)
      nb[i & (ncap - 1)] = q->n[i & (q->cap - 1)];
    free(q->n);
    q->n = nb;
    q->cap = ncap;
  }
  q->n[b & (q->cap - 1)] += n;
  if (span > q->len) q->len = (int32_t)span;
  rp->pend += n;
  return 0;
}

/* floor(x), by a conversion where that is exact (0 < x < 2^53: the
 * integer part), else floor itself (libm's, a call on x86-64's baseline,
 * taken per flow and step on its marks) */
static inline double floor_marks(double x) {
  return x > 0 && x < 9007199254740992.0 ? (double)(int64_t)x : floor(x);
}

/* When flow fi's marks on their way back next make a whole CNP, and when
 * the first of them comes (INFINITY: never). */
static double next_cnp(const fs__dcqcn *d, const fs__dqflow *rp, int whole_one) {
  const fs__cnpq *q = &rp->cnp;
  double m = rp->marks, whole = floor_marks(m) + 1;
  for (int64_t i = q->base; i < q->base + q->len; i++) {
    double x = q->n[i & (q->cap - 1)];
    m += x;
    if (whole_one ? m >= whole : x > 0) return (double)i * bucket_s(d, q);
  }
  return INFINITY;
}

/* The marks of flow fi that have come back by now. */
static double cnp_take(const fs__dcqcn *d, fs__dqflow *rp, double now) {
  fs__cnpq *q = &rp->cnp;
  double n = 0, w = bucket_s(d, q);
  while (q->len > 0 && (double)q->base * w <= now * (1 + 1e-12)) {
    double *x = &q->n[q->base & (q->cap - 1)];
    n += *x;
    *x = 0;
    q->base++;
    q->len--;
  }
  rp->pend = q->len ? rp->pend - n : 0;
  return n;
}

/* DCTCP's sender (Alizadeh et al., SIGCOMM 2010, section 3.1, as ns-3's
 * TcpDctcp runs it) over a step of dt in which `acked` marks (expected)
 * and `echoes` whole marked packets came back: the window grows by a
 * segment per window acknowledged (congestion avoidance); the first echo
 * in a window cuts it to W (1 - alpha / 2) (at least 2 segments) and none
 * other until a round trip has passed; at the end of each observation
 * window (a round trip) alpha <- (1 - g) alpha + g F, F the fraction of its
 * packets marked, g = 1/16. In slow start (its ss) the window grows by what
 * is acknowledged, or the engine's rounds pace the flow. Sets its rate
 * (ACK-clocked, below); returns when it next needs a step without queues
 * (a window that cannot send at line rate). */
static double dctcp_react(fs__dcqcn *d, const fs__simcore *c, int32_t fi, double now,
                          double marks, double echoes) {
  const fs__flow *f = &c->flows[fi];
  fs__dqflow *rp = fs__dq(d, fi);
  fs__dqwin *win = &d->w[fi];
  const fs__hops *h = &rp->hop;
  const double g = 1.0 / 16;
  /* its round trip with the queues as they are (back: those at the
   * reverses of its links, others' data its ACKs wait behind), and what it
   * has in flight: queued on its path, on the wires and in its ACKs' way
   * back */
  double rtt = win->rtt0, infl = 0, back = 0;
  for (int32_t k = 0; k < f->n; k++) {
    int32_t l = f->links[k], r = c->t->links[l].reverse;
    if (c->cap_Bps[l] > 0) rtt += f->w[k] * d->q[l] / c->cap_Bps[l];
    if (r >= 0 && c->cap_Bps[r] > 0) back += f->w[k] * d->q[r] / c->cap_Bps[r];
    if (k < h->cap) infl += f->w[k] * h->b[k];
  }
  rtt += back;
  /* its delivery rate: the rate its ACKs come back */
  double acks = f->n > 0 && h->cap >= f->n ? h->out[f->n - 1] : 0, acked = win->acked;
  win->acked = 0;
  win->win_pk += acked / d->wire_bytes;
  win->win_mk += marks;
  if (rp->ss == FS__SS_GROW) win->cwnd += acked; /* slow start: a segment per segment */
  else if (rp->ss == FS__SS_NONE && win->cwnd > 0) /* W dW = segment x d(acked): */
    win->cwnd = sqrt(win->cwnd * win->cwnd + 2 * d->wire_bytes * acked); /* exact over the step */
  if (win->win_end < 0) win->win_end = now + rtt;
  if (now >= win->win_end - 1e-12) {
    /* the observation windows since the last update (steps can be far
     * apart while nothing queues): as many as round trips have passed,
     * at most as many windows' worth of packets as came back, each with
     * the same fraction marked */
    double F = win->win_pk > 0 ? fmin(win->win_mk / win->win_pk, 1) : 0;
    double n = rtt > 0 ? 1 + floor((now - win->win_end) / rtt + 1e-9) : 1;
    double data = win->cwnd > 0 ? floor(win->win_pk * d->wire_bytes / win->cwnd + 1e-9) : 1;
    if (n > data) n = data > 1 ? data : 1;
    rp->alpha = F + (rp->alpha - F) * pow(1 - g, n);
    win->win_pk = win->win_mk = 0;
    win->win_end = now + rtt;
  }
  if (echoes > 0 && now >= win->cwr_end) {
    /* (a new connection's first echo ends its slow start: ssthresh is the
     * cut window, RFC 8257 3.3) */
    win->cwnd = fmax(win->cwnd * (1 - rp->alpha / 2), 2 * d->wire_bytes);
    win->cwr_end = now + rtt;
    if (rp->ss == FS__SS_ROUNDS) d->exits[d->n_exits++] = fi;
    rp->ss = FS__SS_NONE;
  }
  if (rp->ss == FS__SS_ROUNDS) { /* the engine's rounds pace it */
    rp->rc = rp->line;
    return INFINITY;
  }
  /* A window's sender: what it has in flight is what it has queued on
   * its path and on the wires (its delivery rate over the round trip
   * without queues); it sends at line rate (its NIC's share) while its
   * window has room for a packet beyond that, or for all it has left; as
   * its ACKs come back (its delivery rate) while the window is full; and
   * nothing while it is over its window (after a cut) */
  double room = win->cwnd - infl - acks * (win->rtt0 + back);
  rp->rc = room >= d->wire_bytes || f->remaining <= room ? rp->line
           : room >= 0                                 ? fmin(acks, rp->line)
                                                       : 0;
  /* a window under the path's bandwidth-delay product sends in bursts:
   * stepped as if a port were queued */
  return rp->rc < rp->line ? fmin(win->win_end, now + d->step_s) : INFINITY;
}

/* Flow fi's queued bytes, what came to its hops and (DCTCP, in flight)
 * what was acknowledged, taken up to now at its rates since its t_f. */
static void catch_up(fs__dcqcn *d, const fs__flow *f, fs__dqflow *rp, int32_t fi,
                     double now) {
  fs__hops *h = &rp->hop;
  double dtf = now - rp->t_f;
  if (!(dtf > 0)) dtf = 0;
  rp->t_f = now;
  if (d->dctcp && f->active_idx >= 0 && f->n > 0) d->w[fi].acked += h->out[f->n - 1] * dtf;
  for (int32_t k = 0; k < f->n; k++) {
    h->b[k] += f->w[k] * (h->arr[k] - h->out[k]) * dtf;
    h->came[k] += h->arr[k] * dtf;
    if (!(h->b[k] > 0)) h->b[k] = 0;
  }
}

/* What port l lets out over a step (about d->step_s): a queue that lasts
 * the step lets out the capacity, shared by what each flow has queued
 * there (FIFO); a shorter one is all let out in the step, and what comes
 * shares the capacity left (kg: that over what comes, at most 1; the
 * loads of the last round). Returns 1 when more comes than it carries. */
static int port_fifo(fs__dcqcn *d, const fs__simcore *c, int32_t l) {
  fs__port *p = &d->port[l];
  double C = c->cap_Bps[l], q = d->q[l], room = C - q / d->step_s;
  if (!(C > 0)) { /* a failed link lets nothing out (C / q would be 0 / 0 when empty) */
    p->ka = p->kg = 0;
    return p->in > 0;
  }
  if (!(room > 0)) { /* a queue that lasts the step */
    p->ka = C / q;
    p->kg = 0;
    return 0;
  }
  p->ka = 1 / d->step_s;
  int over = p->in > room * (1 + 1e-9);
  p->kg = over ? room / p->in : 1;
  return over;
}

/* The model's clock: the steps' times while a port is queued, and each
 * flow's decrease periods' ends, are multiples of the step (docs/model.md,
 * "DCQCN"): t rounded to the nearest (after = 0) or the first after it. */
double fs__dcqcn_grid(const fs__dcqcn *d, double t, int after) {
  double g = d->step_s, k = after ? floor(t / g * (1 + 1e-12)) + 1 : floor(t / g + 0.5);
  return k * g;
}

/* Alpha at each of the flow's alpha periods that ended by now (its own
 * timer, from its first CNP, as the reaction point's): it decays by
 * (1 - g) and gains g where a CNP came. The step (dt up to now) brought
 * cnps CNPs, taken as evenly spread over it; a period that got one gains,
 * and the period still open at now keeps a CNP for its end (cnp_alpha).
 * Counting the periods on each flow's clock, not as dt / alpha_us rounded
 * per step, matters: steps may come ~1 us apart with many flows in
 * flight, and the rounding lost or added periods. */
void fs__dcqcn_alpha_periods(fs__dqflow *rp, const fs_dcqcn *p, double now, double dt,
                             double cnps) {
  double a = p->alpha_us * 1e-6, g = p->g;
  double k = 0, first = rp->t_alpha; /* the periods that ended; the first's end */
  if (rp->t_alpha <= now * (1 + 1e-12)) {
    k = floor((now * (1 + 1e-12) - rp->t_alpha) / a) + 1;
    rp->t_alpha += k * a;
  }
  if (!(cnps > 0)) {
    if (k > 0 && rp->cnp_alpha) { /* the first of them held a CNP */
      rp->alpha = ((1 - g) * rp->alpha + g) * pow(1 - g, k - 1);
      rp->cnp_alpha = 0;
    } else {
      rp->alpha *= pow(1 - g, k);
    }
    return;
  }
  /* the CNPs came evenly over the step: how many by each period's end */
  double got = 0;
  for (double j = 0; j < k; j++) {
    double x = dt > 0 ? (first + j * a - (now - dt)) / dt : 1;
    double by = floor(cnps * fmin(fmax(x, 0), 1) + 1e-9);
    int hit = by > got || rp->cnp_alpha;
    got = by;
    rp->cnp_alpha = 0;
    rp->alpha = (1 - g) * rp->alpha + (hit ? g : 0);
  }
  if (cnps > got) rp->cnp_alpha = 1; /* some in the period still open */
}

/* The step's queues: every flow with bytes in the network (its sender in
 * flight, or done with bytes still queued) keeps what it has queued at each
 * hop of its route; over the step each hop gained what came and lost what
 * left. The links they touch into d->links; links left behind are emptied;
 * the ports over Kmin at either end of the step are marking. Returns the
 * count of links, or FS_ENOMEM. */
static int32_t gather_queues(fs__dcqcn *d, const fs__simcore *c, const int32_t *active,
                             int32_t n, double now) {
  int32_t nd = 0;
  for (int32_t i = 0; i < d->n_drain; i++) /* flows whose senders are done or wait */
    if (c->flows[d->drain[i]].active_idx < 0) d->drain[nd++] = d->drain[i];
    else fs__dq(d, d->drain[i])->in_drain = 0; /* back in flight */
  d->n_drain = nd;
  uint32_t ep = ++d->epoch;
  int32_t nl = 0;
  for (int32_t pass = 0; pass < 2; pass++)
    for (int32_t i = 0; i < (pass ? d->n_drain : n); i++) {
      int32_t fi = pass ? d->drain[i] : active[i];
      const fs__flow *f = &c->flows[fi];
      fs__dqflow *rp = fs__dq(d, fi);
      fs__hops *h = &rp->hop;
      if (hops(rp, f->n)) return FS_ENOMEM;
      catch_up(d, f, rp, fi, now); /* (a flow re-rated since the last step: since then) */
      double held = 0;
      for (int32_t k = 0; k < f->n; k++) {
        int32_t l = f->links[k];
        if (d->stamp[l] != ep) {
          d->stamp[l] = ep;
          d->q0[l] = d->q[l];
          d->q[l] = d->qoff[l] = 0; /* (in: the last step's, until the loads below) */
          d->links[nl++] = l;
        }
        d->q[l] += h->b[k];
        if (pass) held += h->b[k], h->came[k] = 0; /* (no step reads a drained flow's) */
      }
      /* a drained flow with its bytes all through leaves at the step's end
       * (drained_leave; its queued bytes do not change in between) */
      if (pass) d->kept[i] = held > 1e-3;
    }
  for (int32_t i = 0; i < d->n_live; i++) /* links left behind: empty */
    if (d->stamp[d->live[i]] != ep) {
      int32_t l = d->live[i];
      d->q[l] = d->q0[l] = d->port[l].in = d->port[l].out = d->qoff[l] = 0;
      d->port[l].kg = 1;
    }
  for (int32_t i = 0; i < nl; i++) { /* the ports over Kmin at either end of the step */
    int32_t l = d->links[i];
    double lo = d->rlo[l] = red_lo(d, c->cap_Bps[l]), hi = d->rhi[l] = red_hi(d, c->cap_Bps[l]);
    /* 1: it marks at either end; 2: a queue in between may (neither end
     * within 1e-9 of the threshold: the sub-steps' interpolated queues
     * are within a few roundings of the larger end, so below it) */
    double q0 = d->q0[l], q1 = d->q[l];
    d->marking[l] = (uint8_t)((red_at(d, q0, lo, hi) > 0 || red_at(d, q1, lo, hi) > 0) |
                              (!(fmax(q0, q1) < lo * (1 - 1e-9)) << 1));
  }
  return nl;
}

/* Flow fi's reaction point over the step of dt ending at now (sub
 * sub-steps for its marks): its CNPs, then DCTCP's window or DCQCN's
 * alpha, cut and increase; *soonest lowered to when it next acts. 0 or
 * FS_ENOMEM. */
static int react_flow(fs__dcqcn *d, const fs__simcore *c, int32_t fi, double now, double dt,
                      int sub, double *soonest) {
  const fs_dcqcn *p = &d->prm;
  double wire = d->wire_bytes, inc = p->inc_us * 1e-6, dec = p->dec_us * 1e-6;
  const fs__flow *f = &c->flows[fi];
  fs__dqflow *rp = fs__dq(d, fi);
  /* A packet marked at hop k (RED marks on arrival) waits out the queues
   * from k on, then its CNP crosses back. Queues move fast against a
   * step (a 16:1 incast fills Kmin in 2 us), so the marks and their waits
   * are taken at each alpha period of the step, the queues in between
   * the step's ends; what reaches hop k is the offer thinned before it. */
  double per = 1 / wire / sub; /* what came over the step, in packets per sub-step */
  fs__hops *h = &rp->hop;
  /* a queue of its route over Kmin at either end of the step; the hops
   * before klo mark in none of its sub-steps (what they add to a mark's
   * wait counts only for the marks of hops before them: none) */
  int32_t klo = 0;
  while (klo < f->n && !(d->marking[f->links[klo]] & 2)) klo++;
  int marked = 0;
  for (int32_t k = klo; k < f->n && !marked; k++) marked = d->marking[f->links[k]] & 1;
  int64_t cur = INT64_MIN; /* the step's marks gathered per bucket */
  double acc = 0;
  for (int j = 0; j < sub && dt > 0 && marked && h->cap >= f->n; j++) {
    double x = (j + 0.5) / sub, ahead = 0;
    for (int32_t k = f->n - 1; k >= klo; k--) { /* later hops first: times rise */
      int32_t l = f->links[k];
      if (!(c->cap_Bps[l] > 0)) continue;
      double ql = d->q0[l] + (d->q[l] - d->q0[l]) * x;
      ahead += f->w[k] * ql / c->cap_Bps[l];
      double pk = f->w[k] * red_at(d, ql, d->rlo[l], d->rhi[l]), pkts = per * h->came[k];
      if (!(pk > 0 && pkts > 0)) continue;
      int64_t b = cnp_bucket(d, now - dt * (1 - x) + ahead + 2 * f->latency_s);
      if (b != cur && acc > 0 && cnp_push(rp, cur, acc)) return FS_ENOMEM;
      if (b != cur) cur = b, acc = 0;
      acc += pkts * pk;
    }
  }
  if (acc > 0 && cnp_push(rp, cur, acc)) return FS_ENOMEM;
  for (int32_t k = 0; k < h->cap; k++) h->came[k] = 0;
  double m0 = rp->marks;
  rp->marks += cnp_take(d, rp, now);
  double cnps = floor_marks(rp->marks) - floor_marks(m0);
  if (d->dctcp) {
    double t = dctcp_react(d, c, fi, now, rp->marks - m0, cnps);
    if (t < *soonest) *soonest = t;
    return 0;
  }
  if (rp->cc) fs__dcqcn_alpha_periods(rp, p, now, dt, cnps);
  if (cnps > 0 && !rp->cc) { /* the first CNP: alpha 1, a cut at once */
    rp->cc = 1;
    rp->alpha = 1;
    rp->next_dec = now;
    rp->t_alpha = now + p->alpha_us * 1e-6;
    rp->cnp_alpha = 1;
  }
  if (cnps > 0) rp->cnp_dec = 1;
  /* an increase due at the end of a decrease period comes first (as in
   * the ns-3 backend, whose increase timer was set before the decrease
   * timer): a cut right after it takes the raised rate as its target */
  while (rp->cc && rp->t_inc <= now * (1 + 1e-12)) {
    fs__pktnet_rp_raise(p, rp->line, &rp->stage, &rp->rt, &rp->rc);
    rp->t_inc += inc;
  }
  if (rp->cc && now >= rp->next_dec - 1e-12) { /* a decrease period ends */
    if (rp->cnp_dec) {
      fs__pktnet_rp_cut(p, rp->alpha, &rp->stage, &rp->rt, &rp->rc);
      rp->t_inc = now + inc;
      rp->cnp_dec = 0;
    }
    rp->next_dec = fs__dcqcn_grid(d, now + dec, 0);
  }
  if (rp->cc && rp->rc < rp->line && rp->t_inc < *soonest) *soonest = rp->t_inc;
  /* when CNPs act: the first at once; later ones at the end of the
   * decrease period they fall in */
  double act = rp->cnp_dec ? rp->next_dec : INFINITY, tc = INFINITY;
  if (!rp->cc) /* the first CNP: when its marks make a whole one */
    tc = next_cnp(d, rp, 1);
  else if (rp->cnp.len > 0 && rp->marks - floor_marks(rp->marks) + rp->pend >= 1)
    tc = next_cnp(d, rp, 0); /* (a period end at or after the first of them) */
  if (tc < INFINITY) {
    if (rp->cc && tc > rp->next_dec)
      tc = rp->next_dec + ceil((tc - rp->next_dec) / dec - 1e-9) * dec;
    else if (rp->cc)
      tc = rp->next_dec;
    if (tc < act) act = tc;
  }
  if (act < *soonest) *soonest = act;
  return 0;
}

/* From now, hop by hop: what comes to a port is what the hop before
 * lets out (the sender's offer at the first); what leaves is as port_fifo
 * says, with the loads of the round before (the step before, in the first
 * round). Returns whether a port is busy. */
static int port_rounds(fs__dcqcn *d, const fs__simcore *c, const int32_t *active, int32_t n,
                       int32_t nl) {
  offers(d, c, active, n);
  int busy = 0;
  for (int32_t i = 0; i < nl; i++) port_fifo(d, c, d->links[i]);
  int32_t nre = 0, nchg = 0; /* the second round's flows; ports whose factors changed */
  for (int round = 0; round < 2; round++) { /* the second with this step's loads */
    if (round && !nchg) break; /* (no factor changed: it would take nothing again) */
    if (round == 0)
      for (int32_t i = 0; i < nl; i++) d->port[d->links[i]].in = d->port[d->links[i]].out = 0;
    for (int32_t pass = 0; pass < 2; pass++)
      for (int32_t i = 0; i < (pass ? d->n_drain : round ? nre : n); i++) {
        int32_t fi = pass ? d->drain[i] : round ? d->upd[i] : active[i];
        const fs__flow *f = &c->flows[fi];
        fs__dqflow *rp = fs__dq(d, fi);
        fs__hops *h = &rp->hop;
        if (round && pass) { /* (a drained flow: is it through a changed port?) */
          int again = 0;
          for (int32_t k = 0; k < f->n && !again; k++) again = d->kchg[f->links[k]];
          if (!again) continue;
        }
        double x = pass ? 0 : rp->offer;
        for (int32_t k = 0; k < f->n; k++) {
          int32_t l = f->links[k];
          fs__port *pt = &d->port[l];
          double w = f->w[k];
          if (round) pt->in -= w * h->arr[k], pt->out -= w * h->out[k];
          h->arr[k] = x;
          pt->in += w * x;
          x = h->b[k] / w * pt->ka + x * pt->kg; /* (port_fifo) */
          h->out[k] = x;
          pt->out += w * x;
        }
      }
    busy = 0;
    uint32_t fep = ++d->epoch;
    for (int32_t i = 0; i < nl; i++) {
      int32_t l = d->links[i];
      double ka = d->port[l].ka, kg = d->port[l].kg;
      busy |= port_fifo(d, c, l) || d->q[l] > 0;
      d->kchg[l] = round == 0 && (ka != d->port[l].ka || kg != d->port[l].kg);
      nchg += d->kchg[l];
      /* the second round takes again only the flows through a port whose
       * factors the first changed: the others' would come out the same */
      const fs__link_active *a = &c->active[l];
      for (int32_t j = 0; d->kchg[l] && j < a->n; j++) {
        fs__dqflow *g = fs__dq(d, a->flow[j]);
        if (g->fstamp != fep) g->fstamp = fep, d->upd[nre++] = a->flow[j];
      }
    }
  }
  return busy;
}

/* Flows whose bytes are all through leave the step. */
static void drained_leave(fs__dcqcn *d, const fs__simcore *c) {
  int32_t nd = 0;
  for (int32_t i = 0; i < d->n_drain; i++) {
    int32_t fi = d->drain[i];
    if (d->kept[i]) { /* (gather_queues) */
      d->drain[nd++] = fi;
    } else { /* (what it still brought to its ports leaves their loads) */
      const fs__flow *f = &c->flows[fi];
      fs__hops *h = &fs__dq(d, fi)->hop;
      for (int32_t k = 0; k < f->n; k++) {
        d->port[f->links[k]].in -= f->w[k] * h->arr[k];
        d->port[f->links[k]].out -= f->w[k] * h->out[k];
      }
      fs__dcqcn_reset_hops(d, fi);
      fs__dqflow *rp = fs__dq(d, fi);
      rp->in_drain = 0;
      if (rp->done) give_back(d, fi);
    }
  }
  d->n_drain = nd;
}

int fs__dcqcn_tick(fs__dcqcn *d, const fs__simcore *c, const int32_t *active, int32_t n,
                   double now, double *next_inc) {
  const fs_dcqcn *p = &d->prm;
  double dt = now - d->last;
  if (dt < 0) dt = 0;
  d->last = now;
  d->n_exits = 0;
  int32_t nl = gather_queues(d, c, active, n, now);
  if (nl < 0) return nl;
  /* the reaction points; the marks' sub-steps: about one per alpha period
   * of the step */
  int periods = (int)floor(dt / (p->alpha_us * 1e-6) + 0.5);
  int sub = periods < 1 ? 1 : periods > 16 ? 16 : periods;
  double soonest = INFINITY;
  for (int32_t i = 0; i < n; i++) {
    const fs__dqflow *rp = fs__dq(d, active[i]);
    double rc0 = rp->rc;
    int rc = react_flow(d, c, active[i], now, dt, sub, &soonest);
    if (rc) return rc;
    if (memcmp(&rc0, &rp->rc, sizeof(rc0))) { /* its NIC's offers change */
      int32_t l = nic_link(c, &c->flows[active[i]]);
      if (l >= 0) d->nic_ok[l] = 0;
    }
  }
  int busy = port_rounds(d, c, active, n, nl);
  drained_leave(d, c);
  int32_t *sw = d->live;
  d->live = d->links;
  d->links = sw;
  d->n_live = nl;
  *next_inc = soonest;
  return busy;
}

/* Flow fi now offers x (re-rated between steps): its queued bytes and
 * what came to its hops are taken up to now at the old rates; then what
 * comes to each hop is x, through ports without a queue, up to the first
 * queued port (whose output shares do not depend on what comes until the
 * next step). Returns 0, or 1 when a port without a queue is, or would
 * become, over-subscribed: a step must take the loads again. */
static int local_rerate(fs__dcqcn *d, const fs__simcore *c, int32_t fi, double x, double now) {
  const fs__flow *f = &c->flows[fi];
  fs__dqflow *rp = fs__dq(d, fi);
  fs__hops *h = &rp->hop;
  catch_up(d, f, rp, fi, now);
  double since = now - d->last;
  for (int32_t k = 0; k < f->n; k++) {
    int32_t l = f->links[k];
    double room = c->cap_Bps[l] - d->q[l] / d->step_s, dx = x - h->arr[k], da = f->w[k] * dx;
    if (dx == 0) return 0; /* nothing changes from here on */
    h->arr[k] = x;
    d->port[l].in += da;
    d->qoff[l] -= da * since;
    if (!(room > 0)) return 0; /* a queue that lasts the step: what leaves it is as it was */
    if (d->port[l].kg < 1 || d->port[l].in > room * (1 + 1e-9)) return 1; /* (port_fifo) */
    h->out[k] += dx; /* (all that comes passes) */
    d->port[l].out += da;
    d->qoff[l] += da * since;
    x = h->out[k];
  }
  return 0;
}

int fs__dcqcn_local(fs__dcqcn *d, const fs__simcore *c, const int32_t *flows, int32_t n,
                    double now) {
  uint32_t ep = ++d->epoch;
  int32_t nu = 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t fi = flows[i];
    const fs__flow *f = &c->flows[fi];
    fs__dqflow *rp = fs__dq(d, fi);
    if (hops(rp, f->n)) return FS_ENOMEM;
    if (f->active_idx >= 0 && rp->rc < rp->line)
      return 1; /* a window under the path's BDP or a cut rate: the model steps it */
    int32_t l = nic_link(c, f);
    if (l < 0 || f->active_idx < 0) {
      rp->offer = f->active_idx < 0 || blocked(c, f) ? 0 : rp->rc;
      d->upd[nu++] = fi;
    }
    if (l < 0 || d->stamp[l] == ep) continue;
    d->stamp[l] = ep;
    nic_share(d, c, l);
    const fs__link_active *a = &c->active[l];
    for (int32_t j = 0; j < a->n; j++)
      if (a->slot[j] == 0) d->upd[nu++] = a->flow[j];
  }
  /* (the stamps mark the NICs shared; the loads' links are not stamped) */
  for (int32_t i = 0; i < nu; i++) {
    int32_t fi = d->upd[i];
    int rc = local_rerate(d, c, fi, fs__dq(d, fi)->offer, now);
    if (rc) return rc;
  }
  d->n_upd = nu;
  return 0;
}

double fs__dcqcn_wait_s(const fs__dcqcn *d, const fs__simcore *c, int32_t l, double now) {
  double C = c->cap_Bps[l];
  if (!(C > 0) || !(d->q[l] > 0 || d->port[l].in > C)) return 0;
  /* since the last step (qoff: flows re-rated since then, from when) */
  double q = d->q[l] + (d->port[l].in - d->port[l].out) * (now - d->last) + d->qoff[l];
  return q > 0 ? q / C : 0;
}
