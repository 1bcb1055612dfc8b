/* rdma under DCQCN's rate control (docs/model.md, "DCQCN") and tcp under
 * DCTCP's (its windows over the same queues; the tests at the end) against
 * hand-computed cases: a lone flow is the ideal rdma flow (nothing queues,
 * nothing is marked); a 16:1 incast keeps the receiver's port busy (its
 * queue never empties, whatever the cuts), so it takes the ideal time; a
 * short message behind a standing queue waits it out (FIFO), where max-min
 * would share the port at once; two long flows cut by DCQCN under-use their
 * port. On random incasts and permutations it is never faster than the
 * ideal (max-min at line rate is a bound) and it is deterministic. (Its
 * bad keys: test_transport_bad_input_exits_2.) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim/route.h"
#include "fabricsim/sim.h"
#include "fabricsim/topo.h"
#include "../src/sim/internal.h"
#include "test.h"

static const double C = 100e9 / 8; /* bytes per second of every link */
static const double LAT = 1e-6;    /* per link */

/* The fluid model alone: no message runs as packets (test_hybrid.c has
 * those beside it). */
static fs_transport rdma(int dcqcn) {
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_RDMA, &tp);
  tp.dcqcn = dcqcn;
  tp.packet_bytes = 0;
  return tp;
}

/* Wire bytes of a message under tp, and its last packet's. */
static double wire(const fs_transport *tp, double bytes, double *last) {
  double packets = ceil(bytes / tp->mss_bytes);
  if (last) *last = bytes - (packets - 1) * tp->mss_bytes + tp->header_bytes;
  return bytes + packets * tp->header_bytes;
}

typedef struct msg {
  int32_t src, dst;
  double bytes, start_s;
} msg;

/* Runs the messages on topology t (taken over) under tp with opts (NULL:
 * the defaults), then hands the finished run to inspect (if any); fin[i]
 * their finish times; returns the makespan (NAN if anything failed). */
static double run_with(fs_topo *t, const fs_transport *tp, const msg *m, int n, double *fin,
                       const fs_sim_opts *opts, void (*inspect)(const fs_sim *, void *),
                       void *ctx) {
  fs_err err = {0, ""};
  fs_router *r = NULL;
  fs_sim *s = NULL;
  double makespan = NAN;
  int32_t ids[64];
  if (!t || n > 64) goto done;
  CHECK_OK(fs_router_new(t, &r, &err), &err);
  CHECK_OK(fs_sim_new(t, &s, &err), &err);
  if (!r || !s) goto done;
  CHECK_OK(fs_sim_set_transport(s, tp, &err), &err);
  for (int i = 0; i < n; i++) {
    fs_route rt;
    fs_route_init(&rt);
    CHECK_OK(fs_route_ecmp(r, m[i].src, m[i].dst, 1, (uint64_t)i, &rt, &err), &err);
    ids[i] = fs_sim_add_flow(s, m[i].src, m[i].dst, m[i].bytes, (int64_t)llround(m[i].start_s * 1e9),
                             &rt, &err);
    fs_route_free(&rt);
    CHECK(ids[i] >= 0);
    if (ids[i] < 0) goto done;
  }
  CHECK_OK(fs_sim_run(s, opts, &err), &err);
  for (int i = 0; fin && i < n; i++) fin[i] = fs_sim_finish_s(s, ids[i]);
  makespan = fs_sim_makespan_s(s);
  if (inspect) inspect(s, ctx);
done:
  fs_sim_free(s);
  fs_router_free(r);
  fs_topo_free(t);
  return makespan;
}

static double run(fs_topo *t, const fs_transport *tp, const msg *m, int n, double *fin) {
  return run_with(t, tp, m, n, fin, NULL, NULL, NULL);
}

static fs_topo *star(int32_t hosts) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_star(hosts, 100, 1000, &t, &err), &err);
  return t;
}

/* A 1 MiB message across a 2 x 2 leaf-spine (4 links, 3 switches): its
 * finish under tp. */
static double lone(const fs_transport *tp) {
  msg m = {0, 3, 1 << 20, 0};
  fs_leafspine_params p = {2, 1, 2, 100, 100, 1, 1000};
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_leafspine(&p, &t, &err), &err);
  return run(t, tp, &m, 1, NULL);
}

/* 16 senders of 1 MiB into one port keep it busy throughout: 16 w / C
 * (under DCTCP up to a round trip more). */
static void incast_keeps_the_port_busy(const fs_transport *tp) {
  msg m[16];
  for (int i = 0; i < 16; i++) m[i] = (msg){i, 16, 1 << 20, 0};
  double last, w = wire(tp, 1 << 20, &last);
  double busy = 16 * w / C + 2 * LAT + last / C, x = run(star(17), tp, m, 16, NULL);
  if (tp->kind == FS_TRANSPORT_RDMA) {
    CHECK_REL(x, busy, 1e-9, "s");
    return;
  }
  /* DCTCP: the last windows to finish may be under the path's
   * bandwidth-delay product (cut to a few segments): the port may idle for
   * less than a round trip at the end */
  CHECK(x >= busy * (1 - 1e-12));
  CHECK(x <= busy + 4 * LAT + 2 * (tp->mss_bytes + 2 * tp->header_bytes) / C);
}

/* 2 .. hosts - 1 random messages on a star of hosts + 1 (the last host a
 * sink): an incast into it on even trials, else a random pattern; up to
 * `pages` x 4 KiB each, starting within `start_us`. Returns how many. */
static int random_msgs(msg *m, int hosts, int trial, int pages, int start_us, unsigned *seed) {
  int n = 2 + (int)(rand_r(seed) % (unsigned)(hosts - 2));
  int incast = trial % 2 == 0;
  for (int i = 0; i < n; i++) {
    m[i].src = i;
    m[i].dst = incast ? hosts : (i + 1 + (int)(rand_r(seed) % (unsigned)(hosts - 1))) % hosts;
    if (m[i].dst == m[i].src) m[i].dst = hosts;
    m[i].bytes = 4096.0 * (1 + rand_r(seed) % (unsigned)pages);
    m[i].start_s = 1e-6 * (rand_r(seed) % (unsigned)start_us);
  }
  return n;
}

/* Random incasts and permutations on a star: under `on` never faster than
 * under max-min (`off`) by more than `slack` s, the same bits twice. */
static void random_runs(const fs_transport *on, const fs_transport *off, unsigned seed,
                        double slack) {
  for (int trial = 0; trial < 12; trial++) {
    msg m[12];
    int n = random_msgs(m, 12, trial, 1024, 200, &seed);
    double f1[12], f2[12];
    double ideal = run(star(13), off, m, n, NULL);
    double a = run(star(13), on, m, n, f1), b = run(star(13), on, m, n, f2);
    CHECK(a >= ideal - slack);
    CHECK(memcmp(f1, f2, (size_t)n * sizeof(double)) == 0);
    CHECK(a == b);
  }
}

TEST(test_dcqcn_lone_flow_is_the_ideal_rdma_flow) {
  fs_transport on = rdma(1), off = rdma(0);
  double last, w = wire(&on, 1 << 20, &last);
  /* 4 links; the last packet stored and forwarded at the 3 switches */
  double want = w / C + 4 * LAT + 3 * last / C;
  CHECK_REL(lone(&on), want, 1e-12, "s (dcqcn)");
  CHECK_REL(lone(&off), want, 1e-12, "s (ideal)");
}

/* 16 senders at line rate into one port: the queue grows at 15 C, and
 * DCQCN's cuts (the CNPs come back behind that queue) never empty it
 * before every byte is in: the port is busy throughout, 16 w / C. ns-3's
 * RoCE run of the same case agrees to the ns (docs/validation.md). */
TEST(test_dcqcn_incast_keeps_the_port_busy) {
  fs_transport on = rdma(1);
  incast_keeps_the_port_busy(&on);
}

/* Two 256 KiB messages fill the receiver's port for w / C (nothing is
 * marked: the queue stays under Kmin); a one-packet message sent 1 us
 * after their senders are done finds w - C x 1 us queued ahead of it and
 * waits that out, FIFO. Under max-min it would take a third of the port. */
TEST(test_dcqcn_short_message_waits_out_the_queue) {
  fs_transport on = rdma(1), off = rdma(0);
  double last, w = wire(&on, 256 << 10, NULL), mw = wire(&on, 4096, &last);
  double t0 = w / C + 1e-6;
  msg m[3] = {{0, 3, 256 << 10, 0}, {1, 3, 256 << 10, 0}, {2, 3, 4096, t0}};
  double fin[3];
  run(star(4), &on, m, 3, fin);
  CHECK_REL(fin[2] - t0, mw / C + (w - C * 1e-6) / C + 2 * LAT + last / C, 1e-9, "s (fifo)");
  /* the two long ones: their last bytes, in at w / C, wait out w: the
   * short one comes after them */
  CHECK_REL(fin[0], 2 * w / C + 2 * LAT + last / C, 1e-9, "s");
  CHECK_REL(fin[1], 2 * w / C + 2 * LAT + last / C, 1e-9, "s");
  run(star(4), &off, m, 3, fin);
  CHECK(fin[2] - t0 < 3 * mw / C + 2 * LAT + last / C + 1e-9); /* max-min: a third at once */
}

/* 8 senders on one leaf into a host on the other, over a single spine:
 * the queue is at the first leaf's uplink, which carries C, and the rest
 * of the path passes what it lets out. As that queue drains, each step
 * lets out no more than the bytes it holds plus what comes (a queue shorter
 * than a step's worth is all let out in the step): the downlink never
 * carries more than C, and the last byte comes in at 8 w / C, a path
 * latency and three store-and-forwards later. (A port that let out C in
 * the shares of its queue for a whole step, however short the queue, sent
 * bytes on that it never had.) Under DCQCN and under DCTCP with queues
 * staggered 1 us apart (the steps fall between the arrivals). */
static void two_tier_queue_passes_on_what_it_holds(const fs_transport *tp) {
  msg m[8];
  for (int i = 0; i < 8; i++) m[i] = (msg){i, 8, 1 << 20, 1e-6 * i};
  fs_leafspine_params p = {2, 1, 8, 100, 100, 1, 1000};
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_leafspine(&p, &t, &err), &err);
  double last, w = wire(tp, 1 << 20, &last);
  double want = 8 * w / C + 4 * LAT + 3 * last / C, x = run(t, tp, m, 8, NULL);
  CHECK(x >= want * (1 - 1e-9));
  if (tp->kind == FS_TRANSPORT_RDMA) CHECK_REL(x, want, 1e-6, "s");
  else CHECK(x <= want + 4 * LAT + 2 * (tp->mss_bytes + 2 * tp->header_bytes) / C);
}

TEST(test_dcqcn_two_tier_queue_passes_on_what_it_holds) {
  fs_transport on = rdma(1);
  two_tier_queue_passes_on_what_it_holds(&on);
}

/* Two 8 MiB flows into one port: the queue passes Kmin, both rates are cut
 * every 4 us down to the 1 Gb/s floor while it drains, and they come back
 * only at the first increase, 300 us after the last cut: the port idles
 * meanwhile. (ns-3 takes 2031 us for this pair beside 30 short messages
 * against max-min's 1405.) */
TEST(test_dcqcn_cuts_under_use_the_port) {
  fs_transport on = rdma(1), off = rdma(0);
  msg m[2] = {{0, 2, 8 << 20, 0}, {1, 2, 8 << 20, 0}};
  double ideal = run(star(3), &off, m, 2, NULL), dcqcn = run(star(3), &on, m, 2, NULL);
  CHECK(dcqcn > 1.2 * ideal);
  CHECK(dcqcn < 3 * ideal);
}

/* Random incasts and permutations: never faster than max-min at line rate
 * (each port carries its bytes at most at its capacity), the same bits on
 * a second run. */
TEST(test_dcqcn_never_beats_the_ideal_and_is_deterministic) {
  fs_transport on = rdma(1), off = rdma(0);
  random_runs(&on, &off, 12, 1e-12); /* (rounding only) */
}

/* ---- tcp under DCTCP (persistent connections) ---- */

static fs_transport dctcp(int on) {
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  tp.packet_bytes = 0; /* the fluid tcp model alone */
  tp.persistent = 1;
  tp.dcqcn = on;
  return tp;
}

/* A warm window covers the path's bandwidth-delay product: a lone flow
 * sends at line rate, nothing queues, so it is the ideal persistent tcp
 * flow to the bit. */
TEST(test_dctcp_lone_flow_is_the_warm_tcp_flow) {
  fs_transport on = dctcp(1), off = dctcp(0);
  double x = lone(&on), y = lone(&off);
  CHECK(x > 0);
  CHECK(x == y);
}

/* 16 warm windows into one port: the queue builds to K and beyond before
 * the first marks come back, and the cuts (alpha starts at 1: halved) still
 * leave 16 windows of ~3 segments against a bandwidth-delay product of
 * ~8: the port never idles, 16 w / C. */
TEST(test_dctcp_incast_keeps_the_port_busy) {
  fs_transport on = dctcp(1);
  incast_keeps_the_port_busy(&on);
}

/* The same incast with one 128 KiB message among the 1 MiB ones, run as
 * packets beside the fluid (docs/model.md, "Small flows as packets"):
 * where they fill the port each packet takes its own bytes from the fluid
 * flows, so the port still carries every byte once, busy throughout. The
 * fluid rates here are the senders' offers (15 C at first, every window
 * open): taken as shares of C, each packet had cost the fluid 15 times
 * its bytes (the 16:1 unequal incast of docs/validation.md ran 10 % long). */
TEST(test_dctcp_packets_in_an_incast_take_only_their_bytes) {
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp); /* packets of up to 256 KiB */
  tp.persistent = 1;
  tp.dcqcn = 1;
  CHECK(tp.packet_bytes >= 128 * 1024);
  msg m[16];
  for (int i = 0; i < 16; i++) m[i] = (msg){i, 16, i ? 1 << 20 : 128 * 1024, 0};
  double last, w = wire(&tp, 1 << 20, &last), ws = wire(&tp, 128 * 1024, NULL);
  double bytes = (15 * w + ws) / C, x = run(star(17), &tp, m, 16, NULL);
  CHECK(x >= bytes);
  CHECK(x <= bytes + 2 * LAT + last / C + 4 * LAT + 2 * (tp.mss_bytes + 2 * tp.header_bytes) / C);
}

TEST(test_dctcp_two_tier_queue_passes_on_what_it_holds) {
  fs_transport on = dctcp(1);
  two_tier_queue_passes_on_what_it_holds(&on);
}

/* A round trip across a star with links of latency lat under tp: the
 * latencies both ways and a full packet and its ACK per hop. */
static double star_rtt(const fs_transport *tp, double lat) {
  return 4 * lat + 2 * (tp->mss_bytes + 2 * tp->header_bytes) / C;
}

/* The trough of DCTCP's sawtooth of n flows at a port of the star, in
 * packets (Alizadeh et al. 2010, section 3.3): K + N - A, A = N (W* + 1)
 * alpha / 2, alpha ~ sqrt(2 / W*), W* = (C RTT + K) / N. */
static double dctcp_trough_pkts(const fs_transport *tp, double n) {
  double bdp = C * star_rtt(tp, LAT) / (tp->mss_bytes + tp->header_bytes), k = tp->queue_k;
  double ws = (bdp + k) / n;
  return k + n - n * (ws + 1) * sqrt(2 / ws) / 2;
}

/* Two long flows into one port settle into DCTCP's sawtooth (Alizadeh et
 * al. 2010, section 3.3): its trough K + N - A packets, A = N (W* + 1)
 * alpha / 2, alpha ~ sqrt(2 / W*), W* = (C RTT + K) / N, with N = 2. The
 * reference's RED is gentle (a mark with probability max_p at K, rising to
 * 1 at 2 K), so the queue settles where the marks cut each window by one
 * segment a round trip, p(q*) (C RTT + q*) = 2 N (W alpha / 2 = 1 a window,
 * alpha = p), its peak a round trip's growth (N) and a packet above q*. A
 * 16 KiB message sent once they have settled (1 ms: they end at 1.35 ms)
 * goes at once (it fits the window) and waits out that queue, FIFO. The
 * tcp model without DCTCP's rate control (persistent connections) waits
 * the sawtooth's mean, K + N - A / 2 (docs/model.md), then takes a third
 * of the port. */
TEST(test_dctcp_short_message_waits_out_the_standing_queue) {
  fs_transport on = dctcp(1), off = dctcp(0);
  double t0 = 1e-3, P = on.mss_bytes + on.header_bytes;
  msg m[3] = {{0, 3, 8 << 20, 0}, {1, 3, 8 << 20, 0}, {2, 3, 16384, t0}};
  double fin[3], ref[3], last, w = wire(&on, 16384, &last);
  run(star(4), &on, m, 3, fin);
  run(star(4), &off, m, 3, ref);
  double alone = w / C + 2 * LAT + last / C;
  double rtt = star_rtt(&on, LAT);
  double n = 2, k = on.queue_k, bdp = C * rtt / P, lo = k, hi = 2 * k;
  for (int i = 0; i < 60; i++) { /* q*: p(q) (bdp + q) = 2 N, p rising from max_p at K */
    double q = (lo + hi) / 2, p = 0.02 + 0.98 * (q - k) / k;
    if (p * (bdp + q) < 2 * n) lo = q;
    else hi = q;
  }
  double waited = (fin[2] - t0 - alone) / (P / C); /* packets ahead of it */
  CHECK(waited >= dctcp_trough_pkts(&on, n) - 1);
  CHECK(waited <= lo + 2 * n + 1);
  /* the tcp model without DCTCP's rate control: the queue's mean at once,
   * K + N - A' / 2 with A' = sqrt(2 N (C RTT + K)) / 2 (its climb is over by
   * t0), then its share C / 3 of the port */
  double mean = k + n - sqrt(2 * n * (bdp + k)) / 4;
  double off_waited = (ref[2] - t0 - alone - 2 * w / C) / (P / C);
  CHECK(fabs(off_waited - mean) < 0.05);
}

/* A warm window whose ACKs wait behind a queue: A and B (hosts 0, 1 to
 * host 2, 8 MiB) keep their sawtooth at host 2's port (at least K + N - amp
 * packets, as above) when D (host 2 to 3, 1 MB) starts at 1 ms, alone on
 * its links; its ACKs cross host 2's port. A window-based sender has at
 * most its window out per round trip, and that round trip is at least
 * RTT + Q with Q that queue; its warm window, max(IW, ceil(C RTT)) = 10
 * segments, can at most double a round trip, so its 112 segments take more
 * than three round trips: 10 + 20 + 40 < 112. Counting in flight only what
 * is on its own path and wires (what it had before), D ran at C at once. */
TEST(test_dctcp_window_waits_for_acks_behind_a_queue) {
  fs_transport on = dctcp(1);
  double t0 = 1e-3, P = on.mss_bytes + on.header_bytes;
  msg m[3] = {{0, 2, 8 << 20, 0}, {1, 2, 8 << 20, 0}, {2, 3, 1e6, t0}};
  double fin[3];
  run(star(4), &on, m, 3, fin);
  double rtt = star_rtt(&on, LAT), bdp = C * rtt / P;
  double q = dctcp_trough_pkts(&on, 2) * P / C, w0 = fmax(on.init_window, ceil(bdp));
  CHECK(w0 == 10 && ceil(1e6 / on.mss_bytes) > 7 * w0);
  CHECK(fin[0] > fin[2] && fin[1] > fin[2]); /* A and B outlast D */
  CHECK(fin[2] - t0 > 3 * (rtt + q));
}

/* Random incasts and permutations under DCTCP: never faster than max-min
 * at line rate but for the last packet's wait behind the one before it at
 * the switch (at most a full packet's time at each of the two ports of a
 * star, which each model takes from its own rates), the same bits on a
 * second run. */
TEST(test_dctcp_never_beats_the_ideal_and_is_deterministic) {
  fs_transport on = dctcp(1), off = dctcp(0);
  random_runs(&on, &off, 21, 2 * (on.mss_bytes + on.header_bytes) / C);
}

/* ---- tcp under DCTCP on new connections ---- */

/* With nothing queued, DCTCP's model on a new connection is the tcp model's
 * handshake and slow-start rounds (the rounds pace it, at its NIC's share):
 * a lone message of one packet, of the first flight, of a few rounds and
 * of many takes the tcp model's time to rounding. */
TEST(test_dctcp_new_lone_flow_is_the_tcp_flow) {
  fs_transport on = dctcp(1), off = dctcp(0);
  on.persistent = off.persistent = 0;
  const double sizes[] = {1000, 65536, 262144, 1 << 20, 8 << 20};
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
    msg m = {0, 3, sizes[i], 0};
    fs_leafspine_params p = {2, 1, 2, 100, 100, 1, 1000};
    fs_topo *t1 = NULL, *t2 = NULL;
    fs_err err = {0, ""};
    CHECK_OK(fs_topo_leafspine(&p, &t1, &err), &err);
    CHECK_OK(fs_topo_leafspine(&p, &t2, &err), &err);
    double x = run(t1, &on, &m, 1, NULL), y = run(t2, &off, &m, 1, NULL);
    CHECK(x > 0);
    CHECK_REL(x, y, 1e-12, "s");
  }
}

/* Leaving slow start's rounds does not open the window: the flow has the
 * round's window out and its ACKs grow it from there (RFC 5681: cwnd =
 * IW + segments ACKed), so before its first ACK is back it has sent its
 * first flight (the SYN's window, 7 segments) and at most IW segments.
 * Two 8 MiB flows into one port of a star with 2.5 us links: RTT =
 * 4 L + 2 (P + H) / C = 11.4 us (a full packet P and its ACK H per hop),
 * B = 15.9 segments; the first flight is
 * out 5 us after the handshake and the next window (IW + 7 = 17) covers
 * B, so the flows leave the rounds then; no ACK is back before
 * 4 L + RTT (the handshake's and the round trip's propagation). (What the
 * window is at the first echo, which the cut halves, is not seen here:
 * docs/validation.md, "Fifteenth session".) */
/* What hosts 0 and 1 have sent by `until`, from their links' bins. */
typedef struct sent_probe {
  double until, pkt_s; /* pkt_s: a full packet's time, which a bin must be well under */
  double sent[2];
} sent_probe;

static void sent_by(const fs_sim *s, void *ctx) {
  sent_probe *x = ctx;
  const fs_topo *t = fs_sim_topo(s);
  fs_sim_link_bins lb;
  CHECK_EQ_INT(fs_sim_get_link_bins(s, &lb), 0);
  CHECK(lb.width_s < 0.1 * x->pkt_s);
  for (int32_t l = 0; l < t->n_links; l++) {
    int32_t h = t->links[l].from;
    if (h > 1) continue;
    for (int32_t b = 0; b < lb.n_bins && (b + 1) * lb.width_s <= x->until; b++)
      x->sent[h] += lb.bytes[(size_t)b * lb.stride + l];
  }
}

TEST(test_dctcp_new_leaves_the_rounds_with_the_window_in_flight) {
  fs_transport tp = dctcp(1);
  tp.persistent = 0;
  const double L = 2.5e-6, P = tp.mss_bytes + tp.header_bytes;
  double rtt = star_rtt(&tp, L);
  CHECK(C * rtt / P < tp.init_window + 7); /* the next window covers B */
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_star(4, 100, 2500, &t, &err), &err);
  msg m[2] = {{0, 3, 8 << 20, 0}, {1, 3, 8 << 20, 0}};
  fs_sim_opts o = {0};
  o.link_bins = FS_SIM_MAX_LINK_BINS;
  sent_probe x = {4 * L + rtt, P / C, {0, 0}}; /* no ACK is back before 4 L + RTT */
  CHECK(run_with(t, &tp, m, 2, NULL, &o, sent_by, &x) > 0);
  for (int i = 0; i < 2; i++) {
    CHECK(x.sent[i] >= 7 * P - 1e-6);              /* the first flight is out, */
    CHECK(x.sent[i] <= tp.init_window * P + 1e-6); /* and no more than IW */
  }
}

/* Random incasts and permutations of new connections under DCTCP: no
 * message finishes sooner than it would alone (contention only delays:
 * queues, shares, earlier cuts), and a second run gives the same bits. */
TEST(test_dctcp_new_contention_only_delays_and_is_deterministic) {
  fs_transport on = dctcp(1);
  on.persistent = 0;
  unsigned seed = 34;
  for (int trial = 0; trial < 10; trial++) {
    msg m[10];
    int n = random_msgs(m, 10, trial, 512, 100, &seed);
    double f1[10], f2[10];
    run(star(11), &on, m, n, f1);
    run(star(11), &on, m, n, f2);
    CHECK(memcmp(f1, f2, (size_t)n * sizeof(double)) == 0);
    for (int i = 0; i < n; i++) {
      msg one = m[i];
      double alone[1];
      run(star(11), &on, &one, 1, alone);
      if (!(f1[i] >= alone[0] * (1 - 1e-12)))
        test_fail(__FILE__, __LINE__, "trial %d message %d: %.9g s with others, %.9g alone", trial,
                  i, f1[i], alone[0]);
    }
  }
}

/* Alpha's timer is the flow's own (every alpha_us from its first CNP),
 * whatever the steps: with no CNP after the first, alpha at T is
 * (1 - g)^(periods ended - 1) (the first period holds the first CNP and
 * keeps alpha at 1), on steps of any spacing; with a CNP in every step
 * and steps of whole periods, every period gains. */
TEST(test_dcqcn_alpha_runs_on_the_flows_own_clock) {
  fs_transport tp = rdma(1);
  const fs_dcqcn *p = &tp.dcqcn_prm;
  double a = p->alpha_us * 1e-6, g = p->g, t0 = 3.3e-6;
  unsigned seed = 5;
  for (int trial = 0; trial < 20; trial++) {
    fs__dqflow rp;
    memset(&rp, 0, sizeof rp);
    rp.alpha = 1, rp.cnp_alpha = 1, rp.t_alpha = t0 + a; /* its first CNP at t0 */
    double t = t0;
    while (t < t0 + 200e-6) { /* steps 0.05 to 3 us apart */
      double dt = 1e-6 * (0.05 + (rand_r(&seed) % 2950) / 1000.0);
      t += dt;
      fs__dcqcn_alpha_periods(&rp, p, t, dt, 0);
    }
    double ended = floor((t - t0) / a + 1e-9);
    CHECK_REL(rp.alpha, pow(1 - g, ended - 1), 1e-9, "alpha");
    CHECK(rp.t_alpha > t && rp.t_alpha <= t + a * (1 + 1e-9));
  }
  fs__dqflow rp;
  memset(&rp, 0, sizeof rp);
  rp.alpha = 0.5, rp.t_alpha = a;
  for (int i = 1; i <= 50; i++) fs__dcqcn_alpha_periods(&rp, p, 4 * i * a, 4 * a, 4);
  CHECK_REL(rp.alpha, 1 - 0.5 * pow(1 - g, 200), 1e-9, "alpha");
}

/* Two 1 MiB flows from one host share its NIC round robin, C / 2 each,
 * and nothing queues; when the NIC's capacity halves at 20 us (a timer)
 * their offers follow at once, C / 4 each: still nothing queues, nothing
 * is marked, and the run is the ideal rdma one (max-min). (A NIC's
 * offers are kept between steps while its flows, their rates and the
 * capacities stay as they were: a capacity change must share them
 * again, or the NIC's port would queue and mark.) */
typedef struct nic_halving {
  int32_t link;
  double bps;
} nic_halving;

static int halve_nic(void *ctx, fs_sim *s, double now, fs_err *err) {
  (void)now;
  const nic_halving *h = ctx;
  return fs_sim_set_link_capacity(s, h->link, h->bps, err);
}

static double nic_halved(const fs_transport *tp) {
  fs_topo *t = star(3);
  fs_err err = {0, ""};
  fs_router *r = NULL;
  fs_sim *s = NULL;
  double makespan = NAN;
  if (!t) return NAN;
  nic_halving h = {-1, 50e9};
  for (int32_t l = 0; l < t->n_links; l++)
    if (t->links[l].from == 0) h.link = l; /* host 0's uplink */
  CHECK(h.link >= 0);
  CHECK_OK(fs_router_new(t, &r, &err), &err);
  CHECK_OK(fs_sim_new(t, &s, &err), &err);
  if (!r || !s || h.link < 0) goto done;
  CHECK_OK(fs_sim_set_transport(s, tp, &err), &err);
  for (int32_t dst = 1; dst <= 2; dst++) {
    fs_route rt;
    fs_route_init(&rt);
    CHECK_OK(fs_route_ecmp(r, 0, dst, 1, 0, &rt, &err), &err);
    CHECK(fs_sim_add_flow(s, 0, dst, 1 << 20, 0, &rt, &err) >= 0);
    fs_route_free(&rt);
  }
  CHECK_OK(fs_sim_add_timer(s, 20e-6, halve_nic, &h, &err), &err);
  CHECK_OK(fs_sim_run(s, NULL, &err), &err);
  makespan = fs_sim_makespan_s(s);
done:
  fs_sim_free(s);
  fs_router_free(r);
  fs_topo_free(t);
  return makespan;
}

TEST(test_dcqcn_nic_share_follows_its_capacity) {
  fs_transport on = rdma(1), off = rdma(0);
  double ideal = nic_halved(&off);
  /* 2 w at C for 20 us, the rest at C / 2 */
  double w = wire(&on, 1 << 20, NULL);
  CHECK(ideal > 20e-6 + (2 * w - 20e-6 * C) / (C / 2));
  CHECK_REL(nic_halved(&on), ideal, 1e-9, "s");
}
