/* Transport models (sim.h, docs/model.md "Transport") against hand-computed
 * cases: one flow over h hops (headers, store and forward), the slow start
 * of one flow, the source FIFO of small messages, a shared link's
 * efficiency, the last packet held behind the one before it (also against
 * the two packets forwarded hop by hop on random paths), a handshake
 * behind a switch queue (bursts; K packets in congestion avoidance) and
 * behind the packets on a busy host's wire and in its NIC, a round's
 * first ACK read when it leaves, a re-route while a flow waits for one; a
 * quotient under a symmetry against its expanded run; the fluid default
 * unchanged; bad keys exit 2; tcp records kept only while flows are under
 * way. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/sim/internal.h"
#include "fabricsim/route.h"
#include "fabricsim/sim.h"
#include "fabricsim/topo.h"
#include "test.h"

enum { HOPS = 4 }; /* host - leaf - spine - leaf - host */
static const double C = 100e9 / 8; /* bytes per second of every link */
static const double LAT = 1e-6;    /* per link */

/* Two leaves of `hosts` hosts under one spine, 100 Gb/s, 1 us. */
static fs_topo *two_leaves(int32_t hosts) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  fs_leafspine_params p = {2, 1, hosts, 100, 100 * (double)hosts, 1, 1000};
  CHECK_OK(fs_topo_leafspine(&p, &t, &err), &err);
  return t;
}

/* Two leaves of 2 hosts under one spine, every link 100 Gb/s, 1 us. */
static fs_topo *two_leaves_flat(void) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  fs_leafspine_params p = {2, 1, 2, 100, 100, 1, 1000};
  CHECK_OK(fs_topo_leafspine(&p, &t, &err), &err);
  return t;
}

/* A star of `hosts` hosts, 100 Gb/s, latency_ns per link. */
static fs_topo *star(int32_t hosts, int64_t latency_ns) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_star(hosts, 100, latency_ns, &t, &err), &err);
  return t;
}

/* A simulation over topology t (taken over: net_close frees it) with its
 * router and, when tp is given, that transport. Nonzero (the test has
 * failed) if any of it could not be made. */
typedef struct net {
  fs_topo *t;
  fs_router *r;
  fs_sim *s;
} net;

static int net_open(net *n, fs_topo *t, const fs_transport *tp) {
  fs_err err = {0, ""};
  n->t = t, n->r = NULL, n->s = NULL;
  if (!t) return -1;
  CHECK_OK(fs_router_new(t, &n->r, &err), &err);
  CHECK_OK(fs_sim_new(t, &n->s, &err), &err);
  if (tp && n->s) CHECK_OK(fs_sim_set_transport(n->s, tp, &err), &err);
  return n->r && n->s ? 0 : -1;
}

static void net_close(net *n) {
  fs_sim_free(n->s);
  fs_router_free(n->r);
  fs_topo_free(n->t);
}

/* net_open under tcp's defaults with every flow fluid (packet_bytes 0:
 * the fluid tcp model alone); nonzero (and closed) if it failed. */
static int fluid_tcp_open(net *n, fs_topo *t, fs_transport *tp) {
  fs_transport_defaults(FS_TRANSPORT_TCP, tp);
  tp->packet_bytes = 0;
  if (!net_open(n, t, tp)) return 0;
  net_close(n);
  return 1;
}

/* A flow on the shortest path from src to dst, starting at start_s. */
static int32_t add_at(net *n, int32_t src, int32_t dst, double bytes, double start_s) {
  fs_route rt;
  fs_route_init(&rt);
  fs_err err = {0, ""};
  CHECK_OK(fs_route_shortest(n->r, src, dst, &rt, &err), &err);
  int32_t id = fs_sim_add_flow(n->s, src, dst, bytes, (int64_t)(start_s * 1e9), &rt, &err);
  CHECK(id >= 0);
  fs_route_free(&rt);
  return id;
}

static int32_t add(net *n, int32_t src, int32_t dst, double bytes) {
  return add_at(n, src, dst, bytes, 0);
}

/* A SYN's (and SYN-ACK's) wire bytes for segments of H header bytes: the
 * window scale (3 bytes) and SACK-permitted (2) options ns-3 sends, with
 * timestamps (10) when the segments carry them (H = 54), padded to 4. The
 * handshake ends when the ACK of the SYN-ACK (H bytes) has left the source
 * ahead of the data: hs = 2 prop + 2 sum_l syn / C_l + H / C_first. */
static double syn_of(double H) { return H + (H >= 54 ? 4 : 8); }

/* Over `hops` links of latency `lat` at C: a new connection's handshake
 * (its SYN and SYN-ACK stored and forwarded at each hop, then the ACK's
 * header before the first segment), and a round trip (a full segment out
 * and its ACK back, per hop). */
static double handshake_s(const fs_transport *tp, int hops, double lat) {
  double H = tp->header_bytes;
  return 2 * (hops * lat) + hops * 2 * syn_of(H) / C + H / C;
}

static double round_trip_s(const fs_transport *tp, int hops, double lat) {
  double P = tp->mss_bytes, H = tp->header_bytes;
  return 2 * (hops * lat) + hops * (P + 2 * H) / C;
}

/* Wire bytes and the last packet of a message under tp. */
static double wire(const fs_transport *tp, double bytes, double *last) {
  double packets = ceil(bytes / tp->mss_bytes);
  if (last) *last = bytes - (packets - 1) * tp->mss_bytes + tp->header_bytes;
  return bytes + packets * tp->header_bytes;
}

static double run_one(const fs_transport *tp, double bytes) {
  net n;
  fs_err err = {0, ""};
  if (net_open(&n, two_leaves(1), tp)) {
    net_close(&n);
    return NAN;
  }
  int32_t id = add(&n, 0, 1, bytes);
  CHECK_OK(fs_sim_run(n.s, NULL, &err), &err);
  double fin = fs_sim_finish_s(n.s, id);
  CHECK_REL(fs_sim_flow_bytes(n.s, id), bytes, 1e-15, "B (payload, as added)");
  net_close(&n);
  return fin;
}

TEST(test_transport_one_flow_headers_and_store_and_forward) {
  double bytes = 1 << 20;
  CHECK_REL(run_one(NULL, bytes), bytes / C + HOPS * LAT, 1e-12, "s (fluid)");
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  tp.packet_bytes = 0; /* the fluid tcp model alone */
  tp.persistent = 1; /* no handshake, no slow start */
  double last, w = wire(&tp, bytes, &last);
  /* 118 packets of 8948 B payload, 54 B each of headers; the last packet
   * (1714 B on the wire) is stored and forwarded at the 3 switches, each
   * of which is still sending the full packet before it when it is in:
   * it leaves every switch a full packet's time after that one */
  CHECK_REL(w, bytes + 118 * 54.0, 1e-15, "B");
  CHECK_REL(last, 1714, 1e-15, "B");
  double full = tp.mss_bytes + tp.header_bytes;
  CHECK_REL(run_one(&tp, bytes), w / C + HOPS * LAT + (HOPS - 1) * full / C, 1e-12,
            "s (tcp, persistent)");
  fs_transport_defaults(FS_TRANSPORT_RDMA, &tp);
  w = wire(&tp, bytes, &last);
  CHECK_REL(last, 4096 + 62, 1e-15, "B"); /* whole packets: none waits */
  CHECK_REL(run_one(&tp, bytes), w / C + HOPS * LAT + (HOPS - 1) * last / C, 1e-12,
            "s (rdma)");
  /* fluid set explicitly = no transport, bit for bit */
  fs_transport_defaults(FS_TRANSPORT_FLUID, &tp);
  CHECK(run_one(&tp, bytes) == run_one(NULL, bytes));
}

/* A new connection: the handshake (a round trip of header-sized packets),
 * then one window per round trip, doubling, until the window covers the
 * bandwidth-delay product; here 1 initial segment and 20 us links, so the
 * flow pauses in several rounds. */
TEST(test_transport_slow_start_of_one_flow) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  fs_leafspine_params p = {2, 1, 1, 100, 100, 1, 20000};
  CHECK_OK(fs_topo_leafspine(&p, &t, &err), &err);
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  tp.packet_bytes = 0; /* the fluid tcp model alone */
  tp.init_window = 1;
  net n;
  if (net_open(&n, t, &tp)) {
    net_close(&n);
    return;
  }
  double bytes = 4e6;
  int32_t id = add(&n, 0, 1, bytes);
  CHECK_OK(fs_sim_run(n.s, NULL, &err), &err);
  double lat = 20e-6, prop = HOPS * lat, H = tp.header_bytes, P = tp.mss_bytes;
  double hs = handshake_s(&tp, HOPS, lat);
  double rtt = round_trip_s(&tp, HOPS, lat);
  double bdp = C * rtt, last, w = wire(&tp, bytes, &last);
  /* rounds: send cwnd at line rate, wait for the round trip, double */
  double tnow = hs, left = w, cwnd = P + H;
  int paused = 0;
  while (cwnd < bdp && left > cwnd) {
    left -= cwnd;
    tnow += rtt; /* cwnd / C < rtt: the flow waits out the round */
    cwnd *= 2;
    paused++;
  }
  tnow += left / C;
  CHECK(paused >= 4); /* the case this test is for */
  /* the last round streams at line rate: the last packet leaves each
   * switch a full packet's time after the one before it (above) */
  CHECK(left > 2 * (P + H));
  (void)last;
  CHECK_REL(fs_sim_finish_s(n.s, id), tnow + prop + (HOPS - 1) * (P + H) / C, 1e-9, "s");
  net_close(&n);
}

/* Messages that fit in the initial window leave a source one after another
 * (the NIC queue is FIFO): two 64 KiB messages from host 0 to hosts 1 and
 * 2 of the other leaf. Fluid: both share host 0's link and end together. */
TEST(test_transport_small_messages_leave_fifo) {
  for (int fifo = 0; fifo < 2; fifo++) {
    fs_err err = {0, ""};
    fs_transport tp;
    fs_transport_defaults(fifo ? FS_TRANSPORT_TCP : FS_TRANSPORT_FLUID, &tp);
    tp.persistent = 1;
    tp.packet_bytes = 0; /* the fluid tcp model's source FIFO */
    net n;
    if (net_open(&n, two_leaves(2), &tp)) {
      net_close(&n);
      return;
    }
    fs_sim *s = n.s;
    double bytes = 60000; /* fits the first flight (<= 65535 bytes) */
    int32_t a = add(&n, 0, 2, bytes), b = add(&n, 0, 3, bytes);
    CHECK_OK(fs_sim_run(s, NULL, &err), &err);
    if (!fifo) {
      CHECK_REL(fs_sim_finish_s(s, a), 2 * bytes / C + HOPS * LAT, 1e-12, "s");
      CHECK_REL(fs_sim_finish_s(s, b), 2 * bytes / C + HOPS * LAT, 1e-12, "s");
    } else {
      double last, w = wire(&tp, bytes, &last), full = tp.mss_bytes + tp.header_bytes;
      /* store and forward on the two 200 Gb/s spine links and the host's;
       * the last packet (6366 B) ends last / C after the full one before
       * it at the source and gains (full - last) / 2C on it at each spine
       * link, so the host's link, still sending that one, holds it
       * full / C - (2 last - full) / C = 2 (full - last) / C */
      CHECK_REL(last, 6366, 1e-15, "B");
      double tail = HOPS * LAT + 2 * last / (2 * C) + last / C + 2 * (full - last) / C;
      CHECK_REL(fs_sim_finish_s(s, a), w / C + tail, 1e-12, "s (first in the queue)");
      CHECK_REL(fs_sim_finish_s(s, b), 2 * w / C + tail, 1e-12, "s (second)");
    }
    net_close(&n);
  }
}

/* Two bulk flows into one host: while both are on its link they get
 * efficiency x C between them; the shorter one ends, the other has C. */
TEST(test_transport_shared_link_efficiency) {
  fs_err err = {0, ""};
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  tp.packet_bytes = 0; /* the fluid tcp model alone */
  tp.persistent = 1;
  tp.efficiency = 0.9;
  net n;
  if (net_open(&n, two_leaves(2), &tp)) {
    net_close(&n);
    return;
  }
  fs_sim *s = n.s;
  /* whole packets: no last packet waits for the one before it */
  double small = 448 * tp.mss_bytes, big = 2 * small;
  int32_t a = add(&n, 0, 2, small), b = add(&n, 1, 2, big);
  CHECK_OK(fs_sim_run(s, NULL, &err), &err);
  double la, wa = wire(&tp, small, &la), lb, wb = wire(&tp, big, &lb);
  double share = tp.efficiency * C / 2, t1 = wa / share;
  /* store and forward: two 200 Gb/s spine links, then the host's */
  double tail_a = HOPS * LAT + 2 * la / C, tail_b = HOPS * LAT + 2 * lb / C;
  CHECK_REL(fs_sim_finish_s(s, a), t1 + tail_a, 1e-9, "s");
  CHECK_REL(fs_sim_finish_s(s, b), t1 + (wb - wa) / C + tail_b, 1e-9, "s");
  /* the links carried the wire bytes */
  double sum = 0;
  const fs_sim_link_stats *ls = fs_sim_links(s);
  for (int32_t l = 0; l < n.t->n_links; l++) sum += ls[l].bytes;
  CHECK_REL(sum, HOPS * (wa + wb), 1e-12, "B x hops");
  net_close(&n);
}

/* The last packet of a message waits at a switch port still sending the
 * flow's packet before it (docs/model.md, "Store and forward"), by how
 * closely it follows that one: g, its lag behind it at the end of a hop,
 * is spacing - S + T at the source (S and T the full and the last
 * packet's serialization), and a hop holds it max(0, S - g), after which
 * g = max(g - S, 0) + T. 1 MiB flows over uniform links:
 * - A (host 0 to the other leaf) shares host 0's link with B (host 0 to
 *   its leaf's other host): its packets leave every 2 S. g = S + T: the
 *   first switch does not hold it, g = 2 T, the spine holds it S - 2 T,
 *   the last switch S - T: 2 S - 3 T in all.
 * - B crosses one switch with g = S + T: not held.
 * - C, a 64 KiB message on a new connection between two hosts of a star:
 *   7 full packets (the SYN's 65535-byte window), then the last packet
 *   alone once their first ACK is back, a pause p = RTT - 7 S later. It
 *   ends T + p after the packet before it; the switch holds it S - T - p
 *   when p < S - T (as here: 0.41 us at 100 Gb/s, 1 us links); with 2 us
 *   links (p = 2.4 us) not at all. */
TEST(test_transport_last_packet_waits_for_the_one_before) {
  fs_err err = {0, ""};
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  tp.packet_bytes = 0; /* the fluid tcp model alone */
  tp.persistent = 1;
  net n;
  if (net_open(&n, two_leaves_flat(), &tp)) {
    net_close(&n);
    return;
  }
  double bytes = 1 << 20, last, w = wire(&tp, bytes, &last);
  double S = (tp.mss_bytes + tp.header_bytes) / C, T = last / C;
  int32_t a = add(&n, 0, 2, bytes), b = add(&n, 0, 1, bytes);
  CHECK_OK(fs_sim_run(n.s, NULL, &err), &err);
  CHECK(S > 2 * T); /* the spine holds it */
  CHECK_REL(fs_sim_finish_s(n.s, a), 2 * w / C + HOPS * LAT + 3 * T + (2 * S - 3 * T), 1e-12,
            "s (A, held twice)");
  CHECK_REL(fs_sim_finish_s(n.s, b), 2 * w / C + 2 * LAT + T, 1e-12, "s (B, not held)");
  net_close(&n);

  for (int slow = 0; slow < 2; slow++) {
    fs_transport_defaults(FS_TRANSPORT_TCP, &tp); /* new connections */
    tp.packet_bytes = 0; /* the fluid tcp model alone */
    double lat = slow ? 2e-6 : 1e-6;
    if (net_open(&n, star(2, slow ? 2000 : 1000), &tp)) {
      net_close(&n);
      return;
    }
    double H = tp.header_bytes, P = tp.mss_bytes, msg = 65536;
    w = wire(&tp, msg, &last);
    S = (P + H) / C, T = last / C;
    CHECK_REL(floor(65535 / P), 7, 1e-15, "segments in the first flight");
    CHECK_REL(w - 7 * (P + H), last, 1e-12, "B (one packet left)");
    int32_t id = add(&n, 0, 1, msg);
    CHECK_OK(fs_sim_run(n.s, NULL, &err), &err);
    double hs = handshake_s(&tp, 2, lat), rtt = round_trip_s(&tp, 2, lat);
    double pause = rtt - 7 * S, held = S - T - pause;
    CHECK(slow ? held < 0 : held > 0);
    double sent = hs + rtt + T; /* the last packet's last byte leaves */
    CHECK_REL(fs_sim_finish_s(n.s, id), sent + 2 * lat + T + (held > 0 ? held : 0), 1e-9,
              slow ? "s (not held: it follows a pause)" : "s (held S - T - pause)");
    net_close(&n);
  }
}

/* The last packet's wait, max(0, Z - spacing - pause) with Z from
 * fs__transport_tail_reach_s, against the two packets themselves stored
 * and forwarded hop by hop (the full one before it and the last one, no
 * other traffic) on random single paths: 2 to 6 links of 25 to 400 Gb/s,
 * random sizes, spacings from the closest the path allows to 4x that,
 * and pauses. The closed form's claim (the wait falls one for one with
 * the spacing, whichever hop holds it first) is what this checks. */
TEST(test_transport_last_packet_wait_matches_two_packets_hop_by_hop) {
  fs__rng g;
  fs__rng_seed(&g, 12);
  static const double gbps[] = {25, 50, 100, 200, 400};
  int held = 0, free_ = 0;
  for (int trial = 0; trial < 2000; trial++) {
    fs_transport tp;
    fs_transport_defaults(trial % 2 ? FS_TRANSPORT_RDMA : FS_TRANSPORT_TCP, &tp);
    int32_t n = 2 + (int32_t)fs__rng_below(&g, 5), links[6];
    double cap[6], w[6], lat[6], cmin = INFINITY;
    for (int32_t k = 0; k < n; k++) {
      links[k] = k;
      w[k] = 1;
      cap[k] = gbps[fs__rng_below(&g, 5)] * 1e9 / 8;
      lat[k] = 1e-6 * fs__rng_unit(&g);
      if (cap[k] < cmin) cmin = cap[k];
    }
    double payload = tp.mss_bytes * (1 + 20 * fs__rng_unit(&g));
    double full = tp.mss_bytes + tp.header_bytes, last = fs__transport_last_bytes(&tp, payload);
    double spacing = full / cmin * (1 + 3 * fs__rng_unit(&g));
    double pause = fs__rng_below(&g, 3) ? 0 : 2e-6 * fs__rng_unit(&g);
    double z = fs__transport_tail_reach_s(&tp, cap, links, w, n, payload);
    double model = z > spacing + pause ? z - spacing - pause : 0;
    /* hop by hop: each packet starts on a link once it is wholly in and
     * the link has sent the packet before it */
    double s1 = 0, e1 = full / cap[0];              /* the full packet */
    double s2 = spacing + pause, e2 = s2 + last / cap[0]; /* the last one */
    double wait = 0;
    for (int32_t k = 1; k < n; k++) {
      double in1 = e1 + lat[k - 1], in2 = e2 + lat[k - 1];
      s1 = in1;
      e1 = s1 + full / cap[k];
      s2 = in2 > e1 ? in2 : e1;
      wait += s2 - in2;
      e2 = s2 + last / cap[k];
    }
    (void)s1;
    if (fabs(model - wait) > 1e-15 + 1e-9 * wait)
      test_fail(__FILE__, __LINE__,
                "trial %d (%d links, payload %.0f B, spacing %.3g s, pause %.3g s): "
                "closed form %.6g s, hop by hop %.6g s",
                trial, n, payload, spacing, pause, model, wait);
    held += wait > 0;
    free_ += wait == 0;
  }
  CHECK(held > 200 && free_ > 200); /* both kinds of case were drawn */
}

/* A re-route while a flow waits for its round's first ACK (tcp, new
 * connections) replaces that wait with its own hold, and the ACK, leaving
 * the receiver later, must not schedule the flow again: a 1 MB flow
 * between the leaves has its first window (7 full packets) out 7 S after
 * the handshake and waits until RTT later; re-routed (onto the same
 * path) 0.5 us after the window is out, before its ACK leaves host 2
 * (which sends 10 MB to host 3 meanwhile, so the ACK waits there), with
 * no hold it goes on at once and ends before the flow left alone; with a
 * hold of 20 us it ends at least 20 us after the re-route plus its bytes
 * left at line rate. */
typedef struct reroute_at {
  int32_t item;
  fs_route route;
  double hold_s;
} reroute_at;

static int do_reroute(void *ctx, fs_sim *s, double now, fs_err *err) {
  (void)now;
  reroute_at *c = ctx;
  int rc = fs_sim_reroute(s, c->item, &c->route, c->hold_s, err);
  return rc < 0 ? rc : 0;
}

TEST(test_transport_reroute_while_waiting_for_an_ack) {
  double fin[3] = {0, 0, 0}, bytes = 1e6, t_r = 0;
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  tp.packet_bytes = 0; /* the fluid tcp model alone */
  double P = tp.mss_bytes, H = tp.header_bytes, S = (P + H) / C;
  double hs = handshake_s(&tp, HOPS, LAT), rtt = round_trip_s(&tp, HOPS, LAT);
  t_r = hs + 7 * S + 0.5e-6;
  CHECK(t_r < hs + rtt - hs / 2); /* before the ACK leaves host 2 */
  for (int v = 0; v < 3; v++) {
    fs_err err = {0, ""};
    net n;
    if (net_open(&n, two_leaves_flat(), &tp)) {
      net_close(&n);
      return;
    }
    reroute_at c = {add(&n, 0, 2, bytes), {0}, v == 2 ? 20e-6 : 0};
    add(&n, 2, 3, 10e6);
    fs_route_init(&c.route);
    CHECK_OK(fs_route_shortest(n.r, 0, 2, &c.route, &err), &err);
    if (v) CHECK_OK(fs_sim_add_timer(n.s, t_r, do_reroute, &c, &err), &err);
    CHECK_OK(fs_sim_run(n.s, NULL, &err), &err);
    fin[v] = fs_sim_finish_s(n.s, c.item);
    fs_route_free(&c.route);
    net_close(&n);
  }
  double w = wire(&tp, bytes, NULL);
  CHECK(isfinite(fin[1]) && fin[1] < fin[0]);
  CHECK(isfinite(fin[2]) && fin[2] >= t_r + 20e-6 + (w - 7 * (P + H)) / C);
}

TEST(test_transport_bad_input_exits_2) {
  static const char *const bad[][2] = {
      {"{\"kind\": \"udp\"}", "$.transport.kind"},
      {"\"quic\"", "$.transport"},
      {"{\"kind\": \"tcp\", \"efficiency\": 2}", "$.transport.efficiency"},
      {"{\"kind\": \"tcp\", \"window\": 4}", "$.transport.window"},
      {"{\"kind\": \"tcp\", \"connections\": \"some\"}", "$.transport.connections"},
      {"{\"kind\": \"rdma\", \"connections\": \"new\"}", "$.transport.connections"},
      {"{\"kind\": \"tcp\", \"mss_bytes\": 0}", "$.transport.mss_bytes"},
      {"{\"kind\": \"tcp\", \"queue_k\": -1}", "$.transport.queue_k"},
      {"{\"kind\": \"tcp\", \"source_queue\": \"fifo\"}", "$.transport.source_queue"},
      {"{\"kind\": \"rdma\", \"rate_control\": \"pfc\"}", "$.transport.rate_control"},
      {"{\"kind\": \"tcp\", \"rate_control\": \"dcqcn\"}", "$.transport.rate_control"},
      {"{\"kind\": \"rdma\", \"rate_control\": \"dctcp\"}", "$.transport.rate_control"},
      {"{\"kind\": \"tcp\", \"rate_control\": \"dctcp\", \"queue_k\": 0}", "$.transport.queue_k"},
      {"{\"kind\": \"tcp\", \"rate_control\": \"dctcp\", \"source_queue\": \"fq\"}",
       "$.transport.source_queue"},
      {"{\"kind\": \"rdma\", \"dcqcn\": {\"f\": 1.5}}", "$.transport.dcqcn.f"},
      {"{\"kind\": \"rdma\", \"dcqcn\": {\"kmin_kb\": 800, \"kmax_kb\": 400}}",
       "$.transport.dcqcn.kmax_kb"},
      {"{\"kind\": \"rdma\", \"dcqcn\": {\"pmax\": 2}}", "$.transport.dcqcn.pmax"},
      {"{\"kind\": \"rdma\", \"dcqcn\": {\"gain\": 0.1}}", "$.transport.dcqcn.gain"},
      {"{\"kind\": \"rdma\", \"dcqcn\": 4}", "$.transport.dcqcn"},
  };
  char path[64], cmd[160], out[4096];
  snprintf(path, sizeof(path), "/tmp/fabricsim-transport.%d.json", (int)getpid());
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f,
            "{\"topology\": {\"type\": \"star\", \"hosts\": 2}, \"transport\": %s,"
            " \"flows\": [{\"id\": \"a\", \"src\": 0, \"dst\": 1, \"bytes\": 1000}]}",
            bad[i][0]);
    fclose(f);
    snprintf(cmd, sizeof(cmd), "sim %s", path);
    CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 2);
    if (!strstr(out, bad[i][1])) test_fail(__FILE__, __LINE__, "%s: %s", bad[i][1], out);
  }
  remove(path);
  CHECK_EQ_INT(test_run_cli("sim examples/demo.json --transport udp", "2>&1", out, sizeof(out)),
               2);
  CHECK(strstr(out, "--transport") != NULL);
  CHECK_EQ_INT(test_run_cli("sim examples/demo.json --transport rdma --rate-control pfc", "2>&1",
                            out, sizeof(out)),
               2);
  CHECK(strstr(out, "--rate-control") != NULL);
  CHECK_EQ_INT(test_run_cli("sim examples/demo.json --rate-control dcqcn", "2>&1", out,
                            sizeof(out)),
               2);
  CHECK(strstr(out, "rdma") != NULL);
  /* DCTCP's model: tcp's, on new or persistent connections */
  CHECK_EQ_INT(test_run_cli("sim examples/demo.json --transport tcp --rate-control dctcp",
                            ">/dev/null", out, sizeof(out)),
               0);
  CHECK_EQ_INT(test_run_cli("sim examples/demo.json --transport rdma --rate-control dctcp", "2>&1",
                            out, sizeof(out)),
               2);
  CHECK(strstr(out, "DCTCP is tcp's") != NULL);
  CHECK_EQ_INT(test_run_cli("sim examples/demo.json --transport tcp --connections persistent "
                            "--rate-control dctcp",
                            ">/dev/null", out, sizeof(out)),
               0);
  CHECK_EQ_INT(
      test_run_cli("sim examples/demo.json --connections often", "2>&1", out, sizeof(out)), 2);
  CHECK_EQ_INT(test_run_cli("sim examples/demo.json --transport tcp --format csv", ">/dev/null",
                            out, sizeof(out)),
               0);
}

/* Unequal shares: B opens a connection while A's is established and
 * window-free. B's first flight (7 segments: the SYN's 65535-byte window)
 * shares the receiver's link equally with A, then B waits out its round
 * trip while A takes the whole link, then B sends its last segment, again
 * at half. A loses exactly half the link during B's two sending phases. */
TEST(test_transport_two_flows_unequal_shares) {
  double fin_alone = 0, fin_a = 0, fin_b = 0, start_b = 500e-6;
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  tp.packet_bytes = 0; /* the fluid tcp model alone */
  double P = tp.mss_bytes, H = tp.header_bytes;
  double bytes_a = 10e6, bytes_b = 8 * P; /* 7 segments, then 1 */
  for (int both = 0; both < 2; both++) {
    fs_err err = {0, ""};
    net n;
    if (net_open(&n, star(3, 10000), &tp)) { /* 10 us per link */
      net_close(&n);
      return;
    }
    fs_sim *s = n.s;
    int32_t a = add(&n, 0, 2, bytes_a), b = both ? add_at(&n, 1, 2, bytes_b, start_b) : -1;
    CHECK_OK(fs_sim_run(s, NULL, &err), &err);
    if (both) {
      fin_a = fs_sim_finish_s(s, a);
      fin_b = fs_sim_finish_s(s, b);
    } else {
      fin_alone = fs_sim_finish_s(s, a);
    }
    net_close(&n);
  }
  double prop = 20e-6, hs = handshake_s(&tp, 2, prop / 2), rtt = round_trip_s(&tp, 2, prop / 2);
  double d0 = 7 * (P + H) / (C / 2), d1 = (P + H) / (C / 2);
  CHECK(d0 < rtt); /* B is window-limited in its first round */
  double enter = start_b + hs;
  CHECK_REL(fin_b, enter + rtt + d1 + prop + (P + H) / C, 1e-9, "s (B)");
  CHECK_REL(fin_a, fin_alone + (d0 + d1) / 2, 1e-9, "s (A loses half the link while B sends)");
  /* B's share over its transfer is below the fair half */
  CHECK(8 * (P + H) / (rtt + d1) < C / 2 * 0.5);
}

/* Queues at switch ports (docs/model.md, "Transport"): A (host 0) and B
 * (host 1) send a 60000-byte message each to host 2; both fit the first
 * flight, so in packets both are at once in the switch's queue to host 2,
 * which drains them at C while the fluid rates carry C / 2 each. D (host 2
 * to host 3) opens its connection at t1 while they drain: its SYN-ACK,
 * leaving host 3 half a handshake later, comes back through that port and
 * waits behind what A and B have left then, 2 w - C (t1 + hs / 2 - enter).
 * With queue_k = 0 (no queue model) it does not. */
TEST(test_transport_handshake_waits_behind_a_switch_queue) {
  double fin[2] = {0, 0};
  fs_transport tp;
  double t1 = 6e-6, bytes = 60000, small = 1000;
  for (int queued = 0; queued < 2; queued++) {
    fs_err err = {0, ""};
    fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
    tp.packet_bytes = 0; /* the fluid tcp model alone */
    if (!queued) tp.queue_k = 0;
    net n;
    if (net_open(&n, star(4, 1000), &tp)) { /* 1 us per link */
      net_close(&n);
      return;
    }
    add(&n, 0, 2, bytes);
    add(&n, 1, 2, bytes);
    int32_t d = add_at(&n, 2, 3, small, t1);
    CHECK_OK(fs_sim_run(n.s, NULL, &err), &err);
    fin[queued] = fs_sim_finish_s(n.s, d);
    net_close(&n);
  }
  double prop = 2 * LAT, hs = handshake_s(&tp, 2, LAT);
  double w = wire(&tp, bytes, NULL), last, wd = wire(&tp, small, &last);
  double alone = t1 + hs + wd / C + prop + last / C; /* stored at the switch */
  CHECK(t1 > hs && t1 + hs / 2 < hs + 2 * w / C);    /* A and B are draining */
  double queue = 2 * w - C * (t1 + hs / 2 - hs);
  CHECK_REL(fin[0], alone, 1e-12, "s (no queue model)");
  CHECK_REL(fin[1], alone + queue / C, 1e-9, "s (SYN-ACK behind A's and B's rest)");
}

/* A host's fair queue: D (host 0 -> host 1, 1000 bytes) opens its
 * connection at 100 us while host 1 sends A (10 MB) to host 2. D's
 * SYN-ACK leaves host 1 behind the packet of A on the wire, half a full
 * packet's time on average, and, as A keeps host 1's link at line rate,
 * behind the packet of A its NIC already holds: 3 (P + H) / 2C. With
 * host 3 sending to host 2 as well, A runs at half the link: the packet
 * on the wire only. No switch queue is on D's way (A queues at no switch
 * port: its only saturated links are its own). With A sent by host 3
 * instead, host 1's link is idle: no wait; with the queue model off
 * (queue_k 0), none either. */
TEST(test_transport_syn_ack_waits_for_the_packet_on_the_wire) {
  double fin[4] = {0, 0, 0, 0};
  fs_transport tp;
  double t1 = 100e-6, small = 1000;
  for (int v = 0; v < 4; v++) {
    fs_err err = {0, ""};
    fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
    tp.packet_bytes = 0; /* the fluid tcp model alone */
    if (v == 2) tp.queue_k = 0;
    net n;
    if (net_open(&n, star(4, 1000), &tp)) {
      net_close(&n);
      return;
    }
    add(&n, v == 1 ? 3 : 1, 2, 10e6);
    if (v == 3) add(&n, 3, 2, 10e6);
    int32_t d = add_at(&n, 0, 1, small, t1);
    CHECK_OK(fs_sim_run(n.s, NULL, &err), &err);
    fin[v] = fs_sim_finish_s(n.s, d);
    net_close(&n);
  }
  double P = tp.mss_bytes, H = tp.header_bytes, prop = 2 * LAT, hs = handshake_s(&tp, 2, LAT);
  double last, wd = wire(&tp, small, &last);
  double alone = t1 + hs + wd / C + prop + last / C;
  CHECK_REL(fin[0], alone + 3 * (P + H) / (2 * C), 1e-9,
            "s (SYN-ACK behind A's packet and the NIC's)");
  CHECK_REL(fin[1], alone, 1e-12, "s (host 1 idle)");
  CHECK_REL(fin[2], alone, 1e-12, "s (no queue model)");
  CHECK_REL(fin[3], alone + (P + H) / (2 * C), 1e-9, "s (A at half the link)");
}

/* The first ACK of a round leaves the receiver a data packet's trip
 * after the round begins, and waits behind what the receiver sends then.
 * (1) D (host 0 -> host 1, 100 kB) and A (host 1 -> host 2, 10 MB) open
 * their connections together, so both send their first bytes a handshake
 * later, in either order of the instant's events. D's first round: its 7
 * full packets (the SYN's window); the first ACK leaves host 1 behind A's
 * packet on the wire and its NIC's, 3 S / 2 (S = (P + H) / C). Its window
 * then covers the bandwidth-delay product: 4 full packets and the last
 * (1626 B) go at line rate, and the last leaves the switch a full
 * packet's time after the one before it. (2) Across a leaf-spine, D (host
 * 0 -> host 2, 100 kB) begins its round 4 us after A (host 2 -> host 3 of
 * the same leaf, 64 KiB) began its first window, which is still going out
 * then but out before D's first packet reaches host 2: no wait. */
TEST(test_transport_round_ack_waits_when_it_leaves) {
  for (int order = 0; order < 2; order++) {
    fs_err err = {0, ""};
    fs_transport tp;
    net n;
    if (fluid_tcp_open(&n, star(3, 1000), &tp)) return;
    int32_t d = -1;
    if (order) d = add(&n, 0, 1, 100e3);
    add(&n, 1, 2, 10e6);
    if (!order) d = add(&n, 0, 1, 100e3);
    CHECK_OK(fs_sim_run(n.s, NULL, &err), &err);
    double P = tp.mss_bytes, H = tp.header_bytes, S = (P + H) / C, prop = 2 * LAT;
    double hs = handshake_s(&tp, 2, LAT), rtt = round_trip_s(&tp, 2, LAT);
    double last;
    wire(&tp, 100e3, &last);
    CHECK_REL(last, 1626, 1e-15, "B");
    CHECK(C * rtt < 17 * (P + H)); /* the second round is not window-limited */
    double drain = hs + rtt + 1.5 * S + (4 * (P + H) + last) / C;
    CHECK_REL(fs_sim_finish_s(n.s, d), drain + prop + S, 1e-9, "s");
    net_close(&n);
  }
  fs_err err = {0, ""};
  fs_transport tp;
  net n;
  if (fluid_tcp_open(&n, two_leaves_flat(), &tp)) return;
  int32_t d = add(&n, 0, 2, 100e3);
  add(&n, 2, 3, 65536);
  CHECK_OK(fs_sim_run(n.s, NULL, &err), &err);
  double P = tp.mss_bytes, H = tp.header_bytes, S = (P + H) / C, prop = HOPS * LAT;
  double hs = handshake_s(&tp, HOPS, LAT), rtt = round_trip_s(&tp, HOPS, LAT);
  double a_hs = 2 * 2 * LAT + 2 * 2 * H / C;
  CHECK(a_hs + 7 * S > hs && a_hs + 7 * S < hs + rtt - hs / 2); /* the case */
  double last;
  wire(&tp, 100e3, &last);
  CHECK(C * rtt < 17 * (P + H));
  double drain = hs + rtt + (4 * (P + H) + last) / C;
  CHECK_REL(fs_sim_finish_s(n.s, d), drain + prop + (HOPS - 1) * S, 1e-9,
            "s (host 2 no longer sending)");
  net_close(&n);
}

/* The same, with A and B long (10 MB) from t = 0 on new connections, and
 * D opening its connection at t1: the standing queue at host 2's port
 * goes through slow start's overshoot and DCTCP's cuts before it climbs
 * to DCTCP's mean (docs/model.md, "Queues at switch ports"). A's and B's
 * first flights, 7 segments each (the SYN's unscaled window), take
 * 14 w / C, longer than a round trip: their first ACKs are back at
 * t_j = handshake + RTT with the first flights still going out, and from
 * then on the ACKs clock them; their windows, IW = 10 segments each, are
 * past the bandwidth-delay product B = C RTT (7.6 packets) together, and
 * the 20 - B packets beyond it queue from when their packets reach the
 * port (a full packet's time and a link's latency later, t_r). The queue
 * then grows at C (two
 * packets join it for each it grows) past K = 65 until RED marks one,
 * 6.7 packets past K on average (red_first_mark_pkts), and that packet's
 * echo is back a round trip through the queue it joined later, at
 * 2K + B + 2 x 6.7 (151.0); alpha has seen log2((Q + B) / 14) rounds
 * unmarked, and each cut, a round trip apart while the queue is over K,
 * drains it to (Q + B)(1 - alpha / 2) - B: 87.8, then 49.1 packets, under
 * K; then it
 * climbs a packet per flow per round trip to the mean
 * K + N - A / 2 with A = sqrt(2 N (B + K)) / 2 (Alizadeh et al. 2010, 3.3),
 * 62.8 packets. D (host 2 to 3) meets it with its SYN-ACK, which leaves
 * host 3 half a handshake after t1; E (host 3 to 2, two whole packets)
 * with its SYN and again with its data, which the FIFO port serves after
 * the queue before E takes its share C / 3. */
/* (Links of lat_ns; with m_at >= 0 also M, host 3 to 2, 16 KiB at m_at,
 * run as packets, whose finish goes to *m_fin.) */
static double ca_queue_run_at(const fs_transport *tp, int64_t lat_ns, int32_t src, int32_t dst,
                              double bytes, double t1, double m_at, double *m_fin) {
  fs_err err = {0, ""};
  net n;
  if (net_open(&n, star(4, lat_ns), tp)) {
    net_close(&n);
    return NAN;
  }
  int32_t a = add(&n, 0, 2, 10e6), b = add(&n, 1, 2, 10e6);
  int32_t m = m_at >= 0 ? add_at(&n, 3, 2, 16384, m_at) : -1;
  int32_t d = add_at(&n, src, dst, bytes, t1);
  CHECK_OK(fs_sim_run(n.s, NULL, &err), &err);
  CHECK(fs_sim_finish_s(n.s, a) > t1 + 100e-6); /* A and B still send at C / 2 */
  CHECK(fs_sim_finish_s(n.s, b) > t1 + 100e-6);
  if (m >= 0) {
    CHECK(fs_sim_get_counters(n.s).packets > 0);
    *m_fin = fs_sim_finish_s(n.s, m);
  }
  double fin = fs_sim_finish_s(n.s, d);
  net_close(&n);
  return fin;
}

/* DCTCP's mean queue at a port of N flows in congestion avoidance, in
 * packets: a sawtooth from K + N down by A = sqrt(2 N (B + K)) / 2
 * (Alizadeh et al. 2010, section 3.3; B the port's bandwidth-delay
 * product in packets), whose mean is K + N - A / 2. */
static double dctcp_mean_pkts(double n, double k, double b) {
  return k + n - sqrt(2 * n * (b + k)) / 4;
}

/* How far past K (packets) a queue that grows by one packet for every
 * `per` that join it is when RED first marks one, on average: ns-3's
 * RedQueueDisc as the reference sets it (MinTh = MaxTh = K, QW 1, gentle,
 * LInterm 50, Wait) marks the m-th packet past K, at queue K + m / per,
 * with probability p_a = p_b / (2 - m p_b) once m p_b >= 1 (none before),
 * p_b = 1/50 + (1 - 1/50) (m / per) / K (Floyd and Jacobson 1993, "Random
 * Early Detection Gateways", section 7, with gentle RED's slope). */
static double red_first_mark_pkts(double k, double per) {
  double none_yet = 1, sum = 0;
  for (int m = 1; none_yet > 1e-12 && m < 100000; m++) {
    double pb = 0.02 + 0.98 * (m / per) / k;
    double pa = m * pb < 1 ? 0 : m * pb < 2 && pb < 2 - m * pb ? pb / (2 - m * pb) : 1;
    sum += none_yet * pa * m / per;
    none_yet *= 1 - pa;
  }
  return sum;
}

static double ca_queue_run(const fs_transport *tp, int32_t src, int32_t dst, double bytes,
                           double t1) {
  return ca_queue_run_at(tp, 1000, src, dst, bytes, t1, -1, NULL);
}

TEST(test_transport_congestion_avoidance_queue_overshoots_then_is_dctcps_mean) {
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  tp.packet_bytes = 0; /* the fluid tcp model alone */
  double P = tp.mss_bytes, H = tp.header_bytes, pkt = P + H, prop = 2 * LAT;
  double hs = handshake_s(&tp, 2, LAT), rtt = round_trip_s(&tp, 2, LAT);
  double n = 2, k = 65, g = 1.0 / 16, c = C / pkt, b = c * rtt;
  CHECK(7 * pkt < C * rtt && 7 * pkt / (C / 2) > rtt); /* the case: one rate-limited round */
  double t_j = hs + rtt, q0 = 2 * tp.init_window - b;
  /* the first mark: RED's, past K (two windows in slow start: two packets
   * join for each the queue grows), then its echo through the queue */
  double past = red_first_mark_pkts(k, 2);
  CHECK(past > 6 && past < 7.5);
  /* the queue builds from when the windows' packets reach the port: a
   * full packet's time and a link's latency after the ACKs release them */
  double t_r = t_j + pkt / C + LAT;
  double t_k = t_r + (k - q0) / c, t_c1 = t_k + past / c + (b + k + past) / c;
  double peak = 2 * k + b + 2 * past;
  double alpha = pow(1 - g, log2((peak + b) / 14));
  double q1 = (peak + b) * (1 - alpha / 2) - b, t_c2 = t_c1 + (b + peak) / c;
  alpha = (1 - g) * alpha + g;
  double q2 = (q1 + b) * (1 - alpha / 2) - b, t_c3 = t_c2 + (b + q1) / c;
  double mean = dctcp_mean_pkts(n, k, b);
  CHECK(q1 > 87.5 && q1 < 88 && q2 > 49 && q2 < 49.5 && q2 < k && mean > 62.5 && mean < 63);
  double small = 1000, last, wd = wire(&tp, small, &last);
  /* D's SYN-ACK: in slow start, on each cut's plateau, and at the mean */
  double t1s[] = {30e-6, 160e-6, 270e-6, 1e-3};
  for (int i = 0; i < 4; i++) {
    double t1 = t1s[i], at = t1 + hs / 2, q;
    if (i == 0) q = q0 + c * (at - t_r);
    else if (i == 1) q = q1;
    else if (i == 2) q = q2;
    else q = mean;
    if (i == 0) CHECK(at > t_r && at < t_k);
    if (i == 1) CHECK(at > t_c1 + (peak - q1) / c && at < t_c2);
    if (i == 2) CHECK(at > t_c2 + (q1 - q2) / c && at < t_c3);
    if (i == 3) CHECK(sqrt((b + q2) * (b + q2) + 2 * n * c * (at - t_c3)) - b > mean);
    CHECK_REL(ca_queue_run(&tp, 2, 3, small, t1), t1 + hs + q * pkt / C + wd / C + prop + last / C,
              1e-9, "s (D: its SYN-ACK waits)");
  }
  double t1 = 1e-3, two = 2 * P, q = mean * pkt / C;
  wd = wire(&tp, two, &last);
  CHECK_REL(ca_queue_run(&tp, 3, 2, two, t1), t1 + hs + 2 * q + wd / (C / 3) + prop + last / C,
            1e-9, "s (E: its SYN and its data wait)");
}

/* The ack-queue case (ca_queue_run at 1 ms, D from host 2 to 3, 1 MB):
 * its transport (fluid tcp, connections as asked), a full packet, the
 * 2-hop round trip and D's wait on its ACKs' way, A's and B's queue at
 * DCTCP's mean, in seconds. */
typedef struct acks_case {
  fs_transport tp;
  double pkt, rtt, c, q, bytes, t1, w;
} acks_case;

static acks_case acks_case_new(int persistent) {
  acks_case a;
  fs_transport_defaults(FS_TRANSPORT_TCP, &a.tp);
  a.tp.packet_bytes = 0; /* the fluid tcp model alone */
  a.tp.persistent = persistent;
  a.pkt = a.tp.mss_bytes + a.tp.header_bytes;
  a.rtt = round_trip_s(&a.tp, 2, LAT);
  a.c = C / a.pkt; /* packets a second */
  a.q = dctcp_mean_pkts(2, a.tp.queue_k, a.c * a.rtt) / a.c;
  a.bytes = 1e6;
  a.t1 = 1e-3;
  a.w = wire(&a.tp, a.bytes, NULL);
  return a;
}

/* Slow start through a queue on the ACKs' way: D (host 2 to 3, 1 MB, 112
 * segments) at t1 = 1 ms, alone on its links, while A and B hold DCTCP's
 * mean queue M (62.7 packets, Q = M (P + H) / C = 45.2 us) at host 2's
 * port, which D's SYN-ACK and ACKs cross. Its round trip is RTT + Q, so
 * its window covers its bandwidth-delay product only at C (RTT + Q) = 70.3
 * packets, not at B = C RTT = 7.6. Its rounds send 7 segments (the SYN's
 * window), then 17 (IW + 7), 34, each a round trip of RTT + Q, and the
 * window of 68 that follows, still short of 70.3, sends the 54 left at C.
 * (Before, the window of 17 > B ended the rounds after the first. The same
 * case in packets, 8960-byte segments: ns-3 243.1 us, the packet backend
 * 246.0, the model 242.4, 177.9 before.) */
TEST(test_transport_slow_start_through_a_queue_on_the_acks_way) {
  acks_case a = acks_case_new(0);
  double P = a.tp.mss_bytes, hs = handshake_s(&a.tp, 2, LAT), b = a.c * a.rtt;
  double first = floor(65535 / P), iw = a.tp.init_window, bdp_q = a.c * (a.rtt + a.q);
  double sent = first + (iw + first) + 2 * (iw + first); /* the first three rounds */
  CHECK(first == 7 && iw + first > b); /* out of the rounds after one, before */
  CHECK(4 * (iw + first) < bdp_q && 2 * (iw + first) / a.c < a.rtt + a.q);
  CHECK(ceil(a.bytes / P) > sent && ceil(a.bytes / P) - sent <= 4 * (iw + first));
  double fin = a.t1 + hs + a.q + 3 * (a.rtt + a.q) + (a.w - sent * a.pkt) / C + 2 * LAT + a.pkt / C;
  CHECK_REL(ca_queue_run(&a.tp, 2, 3, a.bytes, a.t1), fin, 1e-9, "s (D: rounds of RTT + Q)");
}

/* The same on warm connections (persistent): D's window starts warm,
 * W = max(IW, ceil(C RTT)) = 10 packets, which covers RTT but not
 * RTT + Q (70.3 packets), so it is window-limited: a window a round trip
 * of RTT + Q, in congestion avoidance (its own links never mark) a segment
 * more each round, 10 + 11 + ... + 17 = 108 packets in eight rounds, and
 * the 4 left in the ninth. (Before, no rounds: D ran at C at once. The
 * same case in packets: ns-3 394.3 us, the packet backend 399.3, the model
 * 414.3, 83.1 before.) */
TEST(test_transport_warm_window_through_a_queue_on_the_acks_way) {
  acks_case a = acks_case_new(1);
  double w0 = fmax(a.tp.init_window, ceil(a.c * a.rtt)), segs = ceil(a.bytes / a.tp.mss_bytes);
  double sent = 0, t = a.t1;
  CHECK(w0 == 10 && w0 < a.c * (a.rtt + a.q));
  int rounds = 0;
  for (double win = w0; sent + win < segs; win++, rounds++) {
    CHECK(win < a.c * (a.rtt + a.q) && win / a.c < a.rtt + a.q); /* window-limited, in time */
    sent += win;
    t += a.rtt + a.q;
  }
  CHECK(rounds == 8 && sent == 108);
  double fin = t + (a.w - sent * a.pkt) / C + 2 * LAT + a.pkt / C;
  CHECK_REL(ca_queue_run(&a.tp, 2, 3, a.bytes, a.t1), fin, 1e-9, "s (D: warm rounds of RTT + Q)");
}

/* Small flows as packets behind long fluid ones that fill a port from a
 * queue upstream (warm connections): A and B (hosts 0, 1 on leaf 0 to
 * host 4 on leaf 1, 40 MB) queue at leaf 0's uplink, where they merge, and
 * reach leaf 1's port to host 4 at its rate. M1 (host 5 to 4, 64 KiB, as
 * packets) joins them there at 100 us: each of its packets takes a
 * packet's place of theirs, and what it displaced stays queued at that
 * port behind their stream (a packet trace: 18 packets of messages left
 * 18 queued until the long flows ended). M2 (host 6 to 4, 16 KiB) at
 * 200 us, long after M1 is done, waits behind M1's bytes: it takes exactly
 * M1's wire bytes / C longer than without M1, under the tcp model's queues
 * and under the DCTCP model's (`dctcp`, rate control). */
static double behind_upstream_run(int with_m1, int32_t m2_src, double m2_at, int dctcp) {
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  tp.persistent = 1; /* packets of up to 256 KiB */
  tp.dcqcn = dctcp;
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  fs_leafspine_params p = {2, 1, 4, 100, 100, 1, 1000};
  CHECK_OK(fs_topo_leafspine(&p, &t, &err), &err);
  net n;
  if (net_open(&n, t, &tp)) {
    net_close(&n);
    return NAN;
  }
  int32_t a = add(&n, 0, 4, 40e6), b = add(&n, 1, 4, 40e6);
  if (with_m1) add_at(&n, 5, 4, 65536, m2_at - 100e-6);
  int32_t m2 = add_at(&n, m2_src, 4, 16384, m2_at);
  CHECK_OK(fs_sim_run(n.s, NULL, &err), &err);
  CHECK(fs_sim_get_counters(n.s).packets > 0);
  CHECK(fs_sim_finish_s(n.s, a) > m2_at + 100e-6 && fs_sim_finish_s(n.s, b) > m2_at + 100e-6);
  double fin = fs_sim_finish_s(n.s, m2);
  net_close(&n);
  return fin;
}

TEST(test_transport_packets_displaced_downstream_stay_queued) {
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  double m1 = wire(&tp, 65536, NULL);
  for (int dctcp = 0; dctcp < 2; dctcp++) /* the tcp model, the DCTCP model */
    CHECK_REL(behind_upstream_run(1, 6, 200e-6, dctcp) - behind_upstream_run(0, 6, 200e-6, dctcp),
              m1 / C, 1e-9, "s (M2 behind M1's bytes)");
}

/* The same at 3 ms, the queue at leaf 0's uplink at DCTCP's mean (its
 * climb is over), with M2 from host 2 on leaf 0: it waits behind that
 * queue and then behind M1's bytes at host 4's port, but M1's bytes are
 * part of A's and B's windows, which in congestion avoidance hold the
 * mean in all: the uplink holds that much less (a packet trace: the core
 * port's queue and what the ports after it held summed to about the
 * mean). M2 takes as long with M1 as without, but for its second packet,
 * which now reaches host 4's port while the first still waits there and
 * so waits behind it: a full packet's time at most, where counting M1's
 * bytes at both ports made it M1's wire bytes / C (8 packets). */
TEST(test_transport_held_bytes_are_out_of_the_upstream_queue) {
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  double pkt = (tp.mss_bytes + tp.header_bytes) / C, m1 = wire(&tp, 65536, NULL) / C;
  for (int dctcp = 0; dctcp < 2; dctcp++) { /* the tcp model, the DCTCP model */
    double with = behind_upstream_run(1, 2, 3e-3, dctcp);
    double without = behind_upstream_run(0, 2, 3e-3, dctcp);
    CHECK(with > 3e-3 && without > 3e-3 && m1 > 7 * pkt);
    CHECK(with >= without - 1e-12 && with - without <= pkt * (1 + 1e-9));
  }
}

/* The fluid as packets meet it at a port (docs/model.md, "Small flows as
 * packets"): a fluid flow's rate holds along its whole route at once, but
 * its first packet reaches the port of a later hop a full packet's time
 * and the latency of each hop before it after it sends, and its last
 * bytes as long after it has sent them. On a star (warm connections), A
 * (host 0 to 2, fluid; none if a_bytes is 0) and n_m messages run as
 * packets (hosts 3 and then 1 to 2, each m_bytes at m_at) share host 2's
 * port, which A fills at C; A reaches it (P + H) / C + LAT = 1.72 us
 * after it sends, the messages' packets (P + H) / C + LAT after they
 * leave their hosts. (A's finish and the first message's time.) */
static void arrival_run(double a_at, double a_bytes, int n_m, double m_bytes, double m_at,
                        double *a_fin, double *m_fct) {
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  tp.persistent = 1;
  fs_err err = {0, ""};
  net n;
  if (net_open(&n, star(4, 1000), &tp)) {
    net_close(&n);
    return;
  }
  int32_t a = a_bytes > 0 ? add_at(&n, 0, 2, a_bytes, a_at) : -1;
  int32_t m = n_m > 0 ? add_at(&n, 3, 2, m_bytes, m_at) : -1;
  if (n_m > 1) add_at(&n, 1, 2, m_bytes, m_at);
  CHECK_OK(fs_sim_run(n.s, NULL, &err), &err);
  if (a >= 0) *a_fin = fs_sim_finish_s(n.s, a);
  if (m >= 0) CHECK(fs_sim_get_counters(n.s).packets > 0);
  if (m >= 0 && m_fct) *m_fct = fs_sim_finish_s(n.s, m) - m_at;
  net_close(&n);
}

/* M (1000 bytes at t = 0) reaches host 2's port at (1000 + H) / C + LAT,
 * 0.64 us before A's first packet: it passes before A is there, so it
 * takes nothing from A (until this it took its bytes' time from A, whose
 * fluid the engine had at the port from t = 0) and waits for nothing. */
TEST(test_transport_packets_pass_before_the_fluid_reaches_the_port) {
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  double H = tp.header_bytes, pkt = tp.mss_bytes + H;
  CHECK((1000 + H) / C + LAT < pkt / C + LAT); /* the case */
  double a_alone = 0, a_with = 0, m_alone = 0, m_with = 0;
  arrival_run(0, 10e6, 0, 0, 0, &a_alone, NULL);
  arrival_run(0, 0, 1, 1000, 0, NULL, &m_alone);
  arrival_run(0, 10e6, 1, 1000, 0, &a_with, &m_with);
  CHECK_REL(a_with, a_alone, 1e-12, "s (A: M took nothing from it)");
  CHECK_REL(m_with, m_alone, 1e-12, "s (M: as alone)");
}

/* A (1 MB) leaves its links when its last byte leaves host 0, at
 * T = wire / C, and its last bytes reach host 2's port until T + 1.72 us.
 * M (two full packets) leaves host 3 at T - 1.5 us: its packets reach the
 * port at T + 0.22 and T + 0.94 us, while A's last bytes still stream in
 * at C, so the first takes a packet's place of theirs and the second
 * waits behind it: M takes exactly a packet's time longer than alone
 * (until this the port was empty from T on). */
TEST(test_transport_packets_meet_the_fluids_last_bytes) {
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  double P = tp.mss_bytes, pkt = P + tp.header_bytes;
  double t_a = wire(&tp, 1e6, NULL) / C, m_at = t_a - 1.5e-6;
  double first = m_at + pkt / C + LAT, second = first + pkt / C, a_last = t_a + pkt / C + LAT;
  CHECK(first > t_a && second < a_last); /* the case */
  double a_fin = 0, m_alone = 0, m_with = 0;
  arrival_run(0, 0, 1, 2 * P, m_at, NULL, &m_alone);
  arrival_run(0, 1e6, 1, 2 * P, m_at, &a_fin, &m_with);
  CHECK(a_fin > t_a && a_fin < a_last + 2 * LAT);
  CHECK_REL(m_with - m_alone, pkt / C, 1e-9, "s (M: its second packet behind A's last bytes)");
}

/* A port's backlog of packets ahead of the fluid: two messages of eight
 * full packets (hosts 3 and 1 to 2) leave their hosts at t = 0, a packet
 * every tau = (P + H) / C, and reach host 2's port two at a time from
 * h = tau + LAT on, which sends them back to back until h + 16 tau. A
 * comes onto its links at t_a = h + 6.5 tau, between their seventh and
 * eighth pairs, and reaches the port at t_a + h, behind that backlog: its
 * stream waits 16 tau - t_a for it (FIFO), and a run with the messages
 * finishes A exactly that much later than one without. Each half of it
 * fails alone: the fourteen packets that reached the port before A came
 * onto its links are a backlog A owes when it does (backlog_owed), the
 * last two reached it after and leave after A's fluid has come: those
 * take their bytes from A when they leave, not as the port was when they
 * came (pk_tx). */
TEST(test_transport_fluid_queues_behind_the_packets_backlog) {
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  double P = tp.mss_bytes, tau = (P + tp.header_bytes) / C, h = tau + LAT;
  double t_a = h + 6.5 * tau; /* the model's clock is in whole ns */
  t_a = floor(t_a * 1e9) * 1e-9;
  CHECK(t_a > h + 6 * tau && t_a < h + 7 * tau && t_a + h < h + 14 * tau); /* the case */
  double with = 0, without = 0;
  arrival_run(t_a, 10e6, 2, 8 * P, 0, &with, NULL);
  arrival_run(t_a, 10e6, 0, 0, 0, &without, NULL);
  CHECK_REL(with - without, 16 * tau - t_a, 1e-9, "s (A behind the messages' packets)");
}

/* The same with 2.5 us links: RTT = 11.5 us, B = 15.9 packets. A's and
 * B's first flights (7 segments each, 14 w / C = 10.1 us) are out before
 * their first ACKs are back, so they wait for them; the window then
 * covers B (IW + 7 = 17 segments) and they leave slow start's rounds at
 * t_j = handshake + RTT. What is out then is the round's window, IW each:
 * the queue starts at 2 IW - B = 4.1 packets when the packets the ACKs
 * release reach the port (t_r, a full packet's time and a link's latency
 * on) and grows by their ACKs, at C, not from the next window
 * (2 (IW + 7) - B). D's SYN-ACK meets it. */
TEST(test_transport_window_limited_round_joins_with_its_window) {
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  tp.packet_bytes = 0; /* the fluid tcp model alone */
  double lat = 2.5e-6, P = tp.mss_bytes, H = tp.header_bytes, pkt = P + H, prop = 2 * lat;
  double hs = handshake_s(&tp, 2, lat), rtt = round_trip_s(&tp, 2, lat);
  double c = C / pkt, b = c * rtt, k = 65;
  /* the case: a window-limited first round, past B after it */
  CHECK(14 * pkt / C < rtt && 2 * (tp.init_window + 7) > b && tp.init_window + 7 > b);
  double t_j = hs + rtt, q0 = 2 * tp.init_window - b;
  double t_r = t_j + pkt / C + lat, t_k = t_r + (k - q0) / c; /* at the port from t_r */
  double small = 1000, last, wd = wire(&tp, small, &last);
  double t1 = 30e-6, at = t1 + hs / 2;
  CHECK(at > t_r && at < t_k);
  double q = q0 + c * (at - t_r);
  CHECK_REL(ca_queue_run_at(&tp, 2500, 2, 3, small, t1, -1, NULL),
            t1 + hs + q * pkt / C + wd / C + prop + last / C, 1e-9, "s (D: its SYN-ACK waits)");
}

/* The same two flows with K = 8 packets: their windows, joining, put the
 * queue past K at once (Q0 = 2 IW - B = 12.4 packets). The first marked
 * packet is the one at K, so the first cut comes (B + K) / C after they
 * joined, at a peak of Q0 + B + K, not a round trip through the whole
 * queue later; D's SYN-ACK then finds the first cut's plateau. */
TEST(test_transport_queue_past_k_at_once_is_cut_from_k) {
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  tp.packet_bytes = 0; /* the fluid tcp model alone */
  tp.queue_k = 8;
  double P = tp.mss_bytes, H = tp.header_bytes, pkt = P + H, prop = 2 * LAT;
  double hs = handshake_s(&tp, 2, LAT), rtt = round_trip_s(&tp, 2, LAT);
  double k = 8, g = 1.0 / 16, c = C / pkt, b = c * rtt;
  double t_j = hs + rtt, q0 = 2 * tp.init_window - b;
  double t_c1 = t_j + (b + k) / c, peak = q0 + b + k;
  double alpha = pow(1 - g, log2((peak + b) / 14));
  double q1 = (peak + b) * (1 - alpha / 2) - b, t_c2 = t_c1 + (b + peak) / c;
  CHECK(q0 > k && q1 > 11.5 && q1 < 12);
  double small = 1000, last, wd = wire(&tp, small, &last);
  double t1 = 36e-6, at = t1 + hs / 2;
  CHECK(at > t_c1 + (peak - q1) / c && at < t_c2);
  CHECK_REL(ca_queue_run(&tp, 2, 3, small, t1), t1 + hs + q1 * pkt / C + wd / C + prop + last / C,
            1e-9, "s (D: its SYN-ACK waits on the first cut's plateau)");
}

/* A message run as packets (M, host 3 to 2, 16 KiB, at 12 us) crosses
 * host 2's port while A's and B's windows grow there in slow start (the
 * queue of the test before, joined at 9.5 us, first cut at ~99 us): each
 * of its packets takes its bytes' time from them, and slow start grows a
 * window by what its ACKs deliver, so the queue there is that much
 * lower from then on (docs/model.md, "Small flows as packets"). D's
 * SYN-ACK at ~87 us, before the cut, finds it lower by exactly M's wire
 * bytes at that port: its SYN, the ACK of the SYN-ACK and its data (the
 * ACK of the receiver's FIN, H bytes, takes its time from the queue too,
 * but is still in the port ahead of D's SYN-ACK). */
static double ss_probe_run(const fs_transport *tp, double m_at) {
  double m_fin = 0, fin = ca_queue_run_at(tp, 1000, 2, 3, 1000, 85e-6, m_at, &m_fin);
  if (m_at >= 0) CHECK(m_fin < 65e-6); /* its packets gone a round trip before */
  return fin;
}

TEST(test_transport_packets_slow_the_slow_start_queue) {
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  double H = tp.header_bytes, last;
  double m_bytes = syn_of(H) + H + wire(&tp, 16384, &last);
  double without = ss_probe_run(&tp, -1), with = ss_probe_run(&tp, 12e-6);
  CHECK_REL(without - with, m_bytes / C, 1e-6, "s (D's SYN-ACK: the queue M's packets took)");
  /* M at t = 0: its SYN crosses the port before A and B send, and the
   * ACK of its SYN-ACK before their first packets reach the port (a full
   * packet's time and a link's latency after they send: fluid_arrived),
   * so neither takes anything; its data crosses while their first windows
   * go out, before their first ACKs are back: their windows join the
   * queue that much smaller; the ACK of the receiver's FIN, at 14 us, is
   * long out by D's SYN-ACK */
  with = ss_probe_run(&tp, 0);
  CHECK_REL(without - with, (m_bytes - syn_of(H)) / C, 1e-6,
            "s (D's SYN-ACK: M's packets in A's and B's first round)");
}

/* Where the queue is: E0 and E1 (hosts 0 and 1, one leaf, to host 2 on
 * the other) merge at their leaf's uplink and reach host 2's port no
 * faster than that link sends, so their standing queue is at the uplink
 * (docs/model.md, "Queues at switch ports"), not at host 2's port, which
 * their rates (C / 2 each, set by host 2's link) fill. D (host 3, beside
 * host 2, to host 2, 1000 bytes at 1 ms) crosses only host 2's port: its
 * handshake and data wait for nothing there, and it takes C / 3 from
 * then on; the same D in the star before, where A and B meet at host 2's
 * port, waits DCTCP's mean queue twice. */
TEST(test_transport_queue_where_flows_merge) {
  fs_err err = {0, ""};
  fs_transport tp;
  net n;
  if (fluid_tcp_open(&n, two_leaves_flat(), &tp)) return;
  int32_t e0 = add(&n, 0, 2, 10e6), e1 = add(&n, 1, 2, 10e6);
  double t1 = 1e-3, bytes = 1000;
  int32_t d = add_at(&n, 3, 2, bytes, t1);
  CHECK_OK(fs_sim_run(n.s, NULL, &err), &err);
  CHECK(fs_sim_finish_s(n.s, e0) > t1 + 100e-6 && fs_sim_finish_s(n.s, e1) > t1 + 100e-6);
  double prop = 2 * LAT, last;
  double hs = handshake_s(&tp, 2, LAT), wd = wire(&tp, bytes, &last);
  CHECK_REL(fs_sim_finish_s(n.s, d), t1 + hs + wd / (C / 3) + prop + last / C, 1e-9,
            "s (D: no queue at host 2's port)");
  net_close(&n);
}

/* Persistent connections: A and B start warm at t = 0, in congestion
 * avoidance with windows of max(IW, ceil(C RTT)) packets, which together
 * fill C RTT and queue the rest, Q0 = 2 W - C RTT (12.4 packets): it
 * builds up from when their first packets reach the switch (a packet's
 * time and the link's latency) at the excess of their arrival (2C) over
 * the port's rate (C), and then climbs by a packet per flow per round
 * trip, which it lengthens itself: Q(t) = sqrt((C RTT + Q0)^2 + 2 N C
 * (t - t0)) - C RTT, packets and packets a second, until DCTCP's mean.
 * E (host 3 to 2, two whole packets, no handshake) finds Q(50 us), 17.3
 * packets, and then takes C / 3; at 1 ms the climb is over and it finds
 * the mean, as on new connections. */
TEST(test_transport_persistent_queue_climbs) {
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  tp.packet_bytes = 0; /* the fluid tcp model alone */
  tp.persistent = 1;
  double P = tp.mss_bytes, H = tp.header_bytes, prop = 2 * LAT, pkt = P + H;
  double rtt = round_trip_s(&tp, 2, LAT), n = 2, k = 65, c = C / pkt, b = c * rtt;
  double q0 = n * fmax(tp.init_window, ceil(b)) - b, t0 = pkt / C + LAT + q0 / ((n - 1) * c);
  double mean = dctcp_mean_pkts(n, k, b);
  double last, wd = wire(&tp, 2 * P, &last);
  double t1 = 50e-6, q = sqrt((b + q0) * (b + q0) + 2 * n * c * (t1 - t0)) - b;
  CHECK(q0 > 12 && q0 < 12.5 && q > 17 && q < 17.5 && q < mean);
  double waited = (ca_queue_run(&tp, 3, 2, 2 * P, t1) - t1 - wd / (C / 3) - prop - last / C) / (pkt / C);
  CHECK(fabs(waited - q) < 0.05);
  waited = (ca_queue_run(&tp, 3, 2, 2 * P, 1e-3) - 1e-3 - wd / (C / 3) - prop - last / C) / (pkt / C);
  CHECK(fabs(waited - mean) < 0.05);
}

/* The source's fair queue (docs/model.md, "Transport"): host 1 sends A to
 * host 0, whose link three other senders share (A gets C / 4 there), and B
 * to host 2, 1 MB each, all entering together. While A's first window
 * (7 segments) waits in host 1's queue it leaves at half the link, so B
 * gets C / 2, not the C - C / 4 that max-min leaves it. A's window is out
 * after 7 w / (C / 2); B's own first round ends then too (it is
 * rate-limited, so its next round, past the bandwidth-delay product, is in
 * congestion avoidance) and B has the link: C. A's window is delivered at
 * 7 w / (C / 4); A too is past slow start and takes its rate again: B gets
 * 3 C / 4. With "source_queue" "none" B gets 3 C / 4 from the start. */
typedef struct rate_log {
  int32_t a, b;
  int n;
  double t[64], ra[64], rb[64];
} rate_log;

static void log_rates(void *ctx, const fs_sim *s, double now) {
  rate_log *g = ctx;
  double ra = fs_sim_flow_rate_bps(s, g->a) / 8, rb = fs_sim_flow_rate_bps(s, g->b) / 8;
  if (g->n && g->ra[g->n - 1] == ra && g->rb[g->n - 1] == rb) return;
  if (g->n < 64) g->t[g->n] = now, g->ra[g->n] = ra, g->rb[g->n] = rb, g->n++;
}

TEST(test_transport_source_fair_queue_shares) {
  for (int fq = 0; fq < 2; fq++) {
    fs_transport tp;
    fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
    tp.packet_bytes = 0; /* the fluid tcp model alone */
    tp.source_fq = fq;
    net n;
    if (net_open(&n, star(6, 1000), &tp)) {
      net_close(&n);
      return;
    }
    rate_log g = {0};
    g.a = add(&n, 1, 0, 1e6);
    g.b = add(&n, 1, 2, 1e6);
    for (int32_t h = 3; h < 6; h++) add(&n, h, 0, 1e6);
    fs_sim_opts opts = {0};
    opts.observe = log_rates;
    opts.observe_ctx = &g;
    fs_err err = {0, ""};
    CHECK_OK(fs_sim_run(n.s, &opts, &err), &err);
    net_close(&n);
    double w = tp.mss_bytes + tp.header_bytes;
    double hs = handshake_s(&tp, 2, LAT);
    int i = 0;
    while (i < g.n && !(g.rb[i] > 0)) i++;
    CHECK(i + 2 < g.n);
    if (i + 2 >= g.n) return;
    CHECK_REL(g.t[i], hs, 1e-9, "s (after the handshakes)");
    CHECK_REL(g.ra[i], C / 4, 1e-9, "B/s (A, at host 0's link)");
    if (!fq) {
      CHECK_REL(g.rb[i], 3 * C / 4, 1e-9, "B/s (B, max-min)");
      continue;
    }
    CHECK_REL(g.rb[i], C / 2, 1e-9, "B/s (B, half the source's link)");
    CHECK_REL(g.t[i + 1], hs + 7 * w / (C / 2), 1e-9, "s (A's window out)");
    CHECK_REL(g.rb[i + 1], C, 1e-9, "B/s (B alone at its source)");
    CHECK_REL(g.t[i + 2], hs + 7 * w / (C / 4), 1e-9, "s (A's window delivered)");
    CHECK_REL(g.rb[i + 2], 3 * C / 4, 1e-9, "B/s (B, max-min)");
    CHECK_REL(g.ra[i + 2], C / 4, 1e-9, "B/s (A)");
  }
}

/* A quotient under a transport model (sim.h fs_sim_set_symmetry) times
 * its representatives as the expanded simulation times the flows they
 * stand for. 4 leaves x 4 hosts, 2 spines at 100 Gb/s (2:1), spraying;
 * the group is the leaf shift times the rotation of the hosts of every
 * leaf (16 elements, acting freely on the hosts). Every host sends a
 * chain of messages (small ones that fit the first flight, larger ones
 * that slow-start) to the same slot one and two leaves on and to its
 * neighbour in its leaf, new tcp connections: handshakes and slow-start
 * rounds wait behind the switch queues its orbit's images build. The
 * quotient simulates host 0's chain alone; its queues at a link orbit
 * hold 16 / |O| of each flow's (4 at a leaf's uplinks), spread over the
 * two sprayed uplinks as the packets are; also with the source fair
 * queue and with a shared-link efficiency (flows counted per link the
 * same way). */
enum { QL = 4, QH = 4, QM = 6 };

static int32_t q_host(fs_topo *t, int32_t leaf, int32_t slot) {
  (void)t;
  return ((leaf % QL + QL) % QL) * QH + (slot % QH + QH) % QH;
}

static int32_t q_dst(fs_topo *t, int32_t h, int32_t k) {
  int32_t leaf = h / QH, slot = h % QH;
  switch (k % 3) {
    case 0: return q_host(t, leaf + 1, slot);
    case 1: return q_host(t, leaf, slot + 1 + k / QM);
    default: return q_host(t, leaf + 2, slot + k / QM);
  }
}

/* Message k of a chain: two chains a host, the second of small messages
 * whose handshakes come while the first's windows are queued. */
static double q_bytes(int32_t k) {
  static const double sizes[] = {2e6, 300e3, 60e3, 1e6, 9e3, 150e3};
  return k < QM ? sizes[k % 6] : 9e3 + 3e3 * (k - QM);
}

/* Host h's two chains of QM messages in sim s (quotient routes if symm). */
static void q_chain(fs_router *r, fs_sim *s, const fs_symm *symm, int32_t h, int32_t *ids) {
  fs_err err = {0, ""};
  for (int32_t k = 0; k < 2 * QM; k++) {
    int32_t dst = q_dst(NULL, h, k);
    fs_route rt, q;
    fs_route_init(&rt);
    fs_route_init(&q);
    CHECK_OK(fs_route_spray(r, h, dst, &rt, &err), &err);
    const fs_route *use = &rt;
    if (symm) {
      CHECK_OK(fs_symm_quotient_route(symm, &rt, QL * QH, &q, &err), &err);
      q.expanded = &rt;
      use = &q;
    }
    ids[k] = fs_sim_add_flow(s, h, dst, q_bytes(k), 0, use, &err);
    CHECK(ids[k] >= 0);
    if (k % QM) CHECK_OK(fs_sim_add_dep(s, ids[k - 1], ids[k], &err), &err);
    fs_route_free(&rt);
    fs_route_free(&q);
  }
}

TEST(test_transport_quotient_equals_expanded) {
  fs_err err = {0, ""};
  for (int kind = 0; kind < 6; kind++) {
    fs_transport tp;
    fs_transport_defaults(kind == 2 || kind == 5 ? FS_TRANSPORT_RDMA : FS_TRANSPORT_TCP, &tp);
    tp.persistent = kind == 1 || kind == 2 || kind == 5;
    tp.source_fq = kind == 3;
    tp.packet_bytes = 0; /* quotient flows stay fluid: compare fluid with fluid */
    if (kind >= 4) tp.efficiency = 0.9;
    fs_topo *t = NULL;
    fs_leafspine_params p = {QL, 2, QH, 100, 100, 1, 1000};
    CHECK_OK(fs_topo_leafspine(&p, &t, &err), &err);
    if (!t) return;
    int32_t shift[QL * QH], rot[QL * QH];
    for (int32_t h = 0; h < QL * QH; h++) {
      shift[h] = q_host(t, h / QH + 1, h % QH);
      rot[h] = q_host(t, h / QH, h % QH + 1);
    }
    const int32_t *gens[2] = {shift, rot};
    fs_symm *symm = NULL;
    CHECK_OK(fs_symm_new(t, gens, 2, &symm, &err), &err);
    net full;
    if (!symm || net_open(&full, t, &tp)) {
      fs_symm_free(symm);
      return;
    }
    fs_sim *qs = NULL;
    CHECK_OK(fs_sim_new(t, &qs, &err), &err);
    CHECK_OK(fs_sim_set_transport(qs, &tp, &err), &err);
    int32_t all[QL * QH][2 * QM], rep[2 * QM];
    for (int32_t h = 0; h < QL * QH; h++) q_chain(full.r, full.s, NULL, h, all[h]);
    q_chain(full.r, qs, symm, 0, rep);
    /* without the symmetry the quotient's links cannot be read */
    CHECK_EQ_INT(fs_sim_run(qs, NULL, &err), FS_EINVAL);
    fs_sim_free(qs);
    qs = NULL;
    CHECK_OK(fs_sim_new(t, &qs, &err), &err);
    CHECK_OK(fs_sim_set_transport(qs, &tp, &err), &err);
    CHECK_OK(fs_sim_set_symmetry(qs, symm, &err), &err);
    q_chain(full.r, qs, symm, 0, rep);
    CHECK_OK(fs_sim_run(full.s, NULL, &err), &err);
    CHECK_OK(fs_sim_run(qs, NULL, &err), &err);
    for (int32_t k = 0; k < 2 * QM; k++) {
      CHECK_REL(fs_sim_finish_s(qs, rep[k]), fs_sim_finish_s(full.s, all[0][k]), 1e-9, "s");
      /* every image finishes with its representative */
      for (int32_t h = 1; h < QL * QH; h++)
        CHECK_REL(fs_sim_finish_s(full.s, all[h][k]), fs_sim_finish_s(full.s, all[0][k]), 1e-9,
                  "s");
    }
    fs_sim_free(qs);
    fs_symm_free(symm);
    net_close(&full);
  }
}

/* tcp keeps a flow's transport record only while the flow is under way: a
 * chain of messages, each sent when the one before it is done, reuses
 * them (at most two at once: the next begins at the instant the last is
 * done, before that one's record goes back), and each message of the chain
 * takes the time of the first (a record taken again starts as new: its
 * connection's handshake and slow start). Three messages at once take
 * three. New and persistent connections. */
TEST(test_transport_records_follow_flows_in_flight) {
  enum { CHAIN = 40 };
  for (int persistent = 0; persistent <= 1; persistent++) {
    fs_transport tp;
    fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
    tp.packet_bytes = 0; /* the fluid tcp model alone */
    tp.persistent = persistent;
    net n;
    fs_err err = {0, ""};
    if (net_open(&n, star(4, 1000), &tp)) {
      net_close(&n);
      return;
    }
    int32_t id[CHAIN];
    for (int32_t i = 0; i < CHAIN; i++) {
      id[i] = add(&n, 0, 1, 200e3);
      if (i > 0) CHECK_OK(fs_sim_add_dep(n.s, id[i - 1], id[i], &err), &err);
    }
    CHECK_OK(fs_sim_run(n.s, NULL, &err), &err);
    fs_sim_counters c = fs_sim_get_counters(n.s);
    CHECK(c.tcp_records >= 1 && c.tcp_records <= 2);
    double first = fs_sim_finish_s(n.s, id[0]) - fs_sim_start_s(n.s, id[0]);
    CHECK(first > 200e3 / C); /* the case: it takes more than its bytes' time */
    for (int32_t i = 1; i < CHAIN; i++)
      CHECK_REL(fs_sim_finish_s(n.s, id[i]) - fs_sim_start_s(n.s, id[i]), first, 1e-9,
                "s (message of the chain as the first)");
    net_close(&n);

    if (net_open(&n, star(4, 1000), &tp)) {
      net_close(&n);
      return;
    }
    for (int32_t src = 0; src < 3; src++) add(&n, src, 3, 200e3);
    CHECK_OK(fs_sim_run(n.s, NULL, &err), &err);
    CHECK_EQ_INT(fs_sim_get_counters(n.s).tcp_records, 3);
    net_close(&n);
  }
}
