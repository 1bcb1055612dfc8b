/* Packet-level network: the rules of the ns-3 backend's set-up (docs/
 * model.md, "The packet backend"), packet by packet, for whoever owns the
 * flows: the packet backend runs every flow of a scenario in it
 * (src/scenario/packet.c), the fluid engine under tcp its small flows
 * (hybrid.c, docs/model.md "Small flows as packets").
 *
 * Store and forward at every hop; FIFO switch ports marking ECN with RED
 * (MinTh = MaxTh = K, gentle, Wait); hosts with FQ-CoDel's scheduler (a
 * queue per flow and direction, new flows first, a quantum of one MTU, CE
 * past K packets' sojourn) in front of a NIC with a 1-packet device queue;
 * TCP with DCTCP (handshake, the SYN's first flight and slow start, or the
 * backend's warm window), an ACK per packet. Or (roce) the backend's RoCEv2
 * under DCQCN: queue pairs paced at their reaction point's rate and served
 * round robin by their NIC, switch ports marking by RED in bytes between
 * Kmin and Kmax, a CNP back for each marked packet. No loss, no timers.
 *
 * The owner gives each flow its path and is told when its last byte left
 * its host (sent) and reached its destination (done). Its own events ride
 * on the same clock as "user" events, popped in (time, push order) with the
 * packets'. Where fluid flows share a link (the fluid callback), a port's
 * packets wait behind the fluid's queue and the fluid's bytes that keep
 * arriving while packets are queued, and a host's NIC gives the packets
 * what its fluid flows leave them, at least an equal turn. */
#ifndef FABRICSIM_SIM_PKTNET_H
#define FABRICSIM_SIM_PKTNET_H

#include <stdint.h>

#include "fabricsim/sim.h"
#include "fabricsim/topo.h"

typedef struct fs__pktnet fs__pktnet;

/* What fluid flows do on a link now: their rate (bytes/s), the queueing
 * delay they keep at its port (s), their mean round trip without queues
 * (s), how many they are, whether their rate fills the link (full: as the
 * engine's re-rating judges a saturated link), whether they fill the port from a queue
 * upstream of it (hold: the bytes of theirs packets displace there stay
 * queued, pktnet.c, port_send), and whether their queue at the port is
 * their windows' in congestion avoidance (ca: past slow start's overshoot
 * and first cuts, so what ports after it hold of theirs is not at it). */
typedef struct fs__pktnet_fluid {
  double rate_Bps, queue_s, rtt_s;
  int32_t n, full, hold, ca;
} fs__pktnet_fluid;

typedef struct fs__pktnet_cfg {
  const fs_topo *t;
  double mss, hdr;    /* payload and header bytes of a full segment */
  double k100;        /* ECN threshold K in packets at 100 Gb/s (scaled by capacity) */
  double init_window; /* segments */
  double syn_bytes;   /* a SYN's and a SYN-ACK's wire bytes (fs__pktnet_syn_bytes) */
  int persistent;     /* warm connections: no handshake, the backend's window */
  int roce;           /* RoCEv2 queue pairs under DCQCN (dcqcn) instead of TCP:
                         k100, init_window, syn_bytes and persistent unused */
  fs_dcqcn dcqcn;
  void *ctx;
  /* a user event is due (fs__pktnet_push_user; NULL: the owner pushes none) */
  int (*user)(void *ctx, int32_t a, double t);
  /* flow `id` (as given to fs__pktnet_begin): its last data byte left its
   * host (may be NULL) / reached the destination */
  int (*sent)(void *ctx, int32_t id, double t);
  int (*done)(void *ctx, int32_t id, double t);
  /* the fluid flows on a link (NULL: none anywhere) */
  void (*fluid)(void *ctx, int32_t link, fs__pktnet_fluid *out);
  /* a packet occupied a link over [t0, t1] (NULL: not wanted); may_take:
   * no earlier hop of it said it took its bytes from fluid flows (by
   * returning 1) */
  int (*tx)(void *ctx, int32_t link, double bytes, double t0, double t1, int may_take);
} fs__pktnet_cfg;

/* The wire bytes of a SYN or SYN-ACK for segments of header_bytes: they
 * carry window scale (3 bytes) and SACK-permitted (2) options, and
 * timestamps (10) when the segments do (header_bytes >= 54: IPv4 20, TCP
 * 20, timestamps 12 with padding, PPP 2), padded to 4 bytes: 8 bytes over
 * the header without timestamps, 4 with them (as ns-3 sends them). */
double fs__pktnet_syn_bytes(double header_bytes);

/* 0 or FS_ENOMEM. RED's draws come from a fixed seed. */
int fs__pktnet_new(const fs__pktnet_cfg *cfg, fs__pktnet **out);
void fs__pktnet_free(fs__pktnet *net);

/* RED as the backend's switch ports mark (red_mark): how far past K, in
 * packets, the queue is when the first packet is marked, on average, for
 * a queue that grows one packet for every per_pkt packets that join it
 * (from K up, after none marked). */
double fs__pktnet_red_first_mark(double k, double per_pkt);

/* DCQCN's reaction point as the backend's queue pairs run it, whose rates
 * the fluid model (dcqcn.c) steps too (bytes/s; docs/model.md, "DCQCN"):
 * an increase timer's step on a NIC of `line`, the target rt rising by ai
 * at stage F, by hai beyond, and the rate rc half way to it; and a cut at
 * the end of a decrease period with a CNP: the rate before it the target
 * (unless the period before cut too), rc by alpha / 2, at least min. */
void fs__pktnet_rp_raise(const fs_dcqcn *d, double line, int32_t *stage, double *rt,
                         double *rc);
void fs__pktnet_rp_cut(const fs_dcqcn *d, double alpha, int32_t *stage, double *rt, double *rc);

/* When switch port `link` has sent the packets it holds (its packets'
 * backlog ends; 0 if it never sent one). */
double fs__pktnet_busy_until(const fs__pktnet *net, int32_t link);

/* Schedules the user callback with `a` at t. 0 or FS_ENOMEM. */
int fs__pktnet_push_user(fs__pktnet *net, double t, int32_t a);

/* Flow `id` of `bytes` > 0 payload bytes starts at t on the path links[n]
 * (n >= 1; the caller keeps the array until the flow is done); its ACKs
 * take each link's reverse. 0, FS_ENOMEM, or FS_EINVAL if a link has no
 * reverse. */
int fs__pktnet_begin(fs__pktnet *net, int32_t id, const int32_t *links, int32_t n, double bytes,
                     double t);

/* The time of the next event (INFINITY: none) and its processing (the
 * callbacks' codes pass through; FS_ENOMEM). */
double fs__pktnet_next_t(const fs__pktnet *net);
int fs__pktnet_step(fs__pktnet *net);

/* Packets sent so far (data, control and ACKs), and flows now open. */
int64_t fs__pktnet_packets(const fs__pktnet *net);
int32_t fs__pktnet_open(const fs__pktnet *net);

#endif
