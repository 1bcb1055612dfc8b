/* State shared by the engine (engine.c and its rooms, model.h) and the rate
 * allocator (maxmin.c).
 *
 * Per flow: its route (n links and weights, the caller's arrays when added
 * by reference, else a copy in the engine's arena), while in flight the
 * position of each route entry in its link's active list (a block of the
 * position pool, for O(1) removal), the bytes left at last_s and the current
 * rate. Per link: the active (flow, slot) entries. Rates are bytes per
 * second inside; capacities likewise. */
#ifndef FABRICSIM_SIM_INTERNAL_H
#define FABRICSIM_SIM_INTERNAL_H

#include "../base/base.h"
#include "fabricsim/sim.h"

/* An engine event: when, its push order (ties pop in push order), the item,
 * the flow's version it was predicted for (stale if it changed), its type. */
typedef struct fs__event {
  double t;
  uint64_t seq;
  int32_t item;
  uint32_t version;
  int32_t type;
} fs__event;

typedef struct fs__flow {
  int32_t item;
  int32_t src, dst;
  const int32_t *links; /* route: n links ... */
  const double *w;      /* ... and the fraction of the rate on each */
  int32_t n;
  int32_t owned_cap;  /* entries of an engine-owned copy (0: borrowed) */
  int32_t pos;        /* block of n entries in the position pool; -1 if not in flight */
  int32_t active_idx; /* index in the active list, -1 if not in flight */
  uint32_t version;   /* bumps when the drain prediction changes */
  uint8_t held;       /* re-routed and waiting out its reconfiguration */
  uint8_t pending;    /* an event of the current version (drain or re-entry) is queued */
  double bytes, remaining, rate, last_s, latency_s;
  double accounted;   /* bytes already charged to the links of earlier routes */
  int32_t rid;        /* its route in simcore.proutes when links were left out
                       * of the rating (prune.c), else -1 */
} fs__flow;

/* A distinct route of a run whose rating leaves links out (prune.c). */
typedef struct fs__proute {
  const int32_t *links; /* as added, in order (accessors, statistics) */
  const double *w;
  int32_t n;
  int32_t src, dst;
  const int32_t *kept;  /* the rating route, then the left-out entries: */
  const double *kept_w; /* kept[n_kept .. n_kept + n_gone) */
  int32_t n_kept, n_gone;
  int32_t n_active;     /* its flows in flight (busy time of left-out links) */
  double bytes;         /* its flows' bytes sent (bytes of left-out links) */
  int32_t busy;         /* its group of routes with the same left-out links
                         * (fs__busy), -1 if it left none out */
} fs__proute;

/* Routes that left out the same links, in the same order (prune.c): a
 * link is busy while a route over it is in flight, so while a group over
 * it is; routes of one pair of switches share their middle (a sprayed
 * Clos: one group per switch pair instead of one per host pair). */
typedef struct fs__busy {
  const int32_t *links;
  int32_t n;
  int32_t n_active;     /* its routes in flight */
} fs__busy;

typedef struct fs__link_active {
  int32_t *flow; /* flow index */
  int32_t *slot; /* index into the flow's route slice */
  int32_t n, cap;
  uint32_t version; /* changes whenever a flow comes or goes */
  double busy_since;
} fs__link_active;

/* Scratch of one rate computation; sized once per run. */
typedef struct fs__maxmin {
  double *res, *wsum;  /* per link: residual capacity, unfrozen weight */
  int32_t *cnt;        /* per link: unfrozen flows */
  double *key;         /* per link: current fill level at which it saturates */
  uint32_t *link_seen, *flow_seen, epoch;
  int32_t *comp_links, *comp_flows;
  int32_t n_comp_links, n_comp_flows;
  double *new_rate;    /* per flow */
  double *new_y;       /* per link with waiting windows: their new share (src_y) */
  fs__heap heap;        /* min-heap of links on their levels, raised lazily */
  /* incremental re-rating (maxmin.c) */
  uint32_t *wstamp;     /* per link: epoch of wtot */
  double *wtot;         /* per link: total weight of its flows */
  int32_t *bn;          /* per flow: link it froze on in the last fill */
  uint32_t *cstamp;     /* per link: check stamp */
  double *cmin;         /* per link: slowest S flow frozen on it */
  double *ubmax;        /* per link: highest rate bound of its S flows */
  uint32_t cround;
  /* S's route entries that take part in the fill, copied as the flows join
   * (maxmin.c, add_flow_S): per flow its first entry and count; per entry
   * the link (~link: a waiting window's source link) and the weight */
  int32_t *roff, *rnum, *rl;
  double *rw;
  size_t rlen, rcap;
  int nomem;
} fs__maxmin;

typedef struct fs__simcore {
  const fs_topo *t;
  fs__flow *flows;
  int32_t n_flows;
  int32_t *pos;             /* position pool: per route entry of a flow in
                             * flight, its index in the link's active list */
  size_t pos_len, pos_cap;
  int32_t *pos_free;        /* per block size n: head of its free list, -1 */
  int32_t pos_free_cap;
  fs__proute *proutes;      /* NULL unless links were left out (prune.c) */
  int32_t n_proutes;
  int32_t *busy_routes;     /* per left-out link: groups of routes (busy)
                             * in flight over it */
  fs__busy *busy;           /* with proutes: the groups */
  int32_t n_busy;
  double *cap_Bps;          /* per link */
  fs__link_active *active;  /* per link */
  int32_t *dirty_links;     /* links changed by this batch, each once */
  uint8_t *is_dirty;        /* per link: in dirty_links */
  size_t n_dirty;
  double theta;             /* lowest rate > 0 of a flow taken off its links
                             * since the last re-rating; INFINITY if none */
  /* Per link, kept by the engine for the re-rating: */
  double *load;             /* sum of weight x rate of its flows (kept up to
                             * date on every rate change; reset when empty) */
  double *gone_load;        /* of flows taken off it since the last re-rating */
  double *gone_max;         /* fastest of those */
  uint8_t *arrived;         /* a flow came on it (or its capacity changed)
                             * since the last re-rating */
  /* tcp with the source's fair queue (NULL otherwise; docs/model.md,
   * "Transport"). Per flow, what it takes from the first link of its rating
   * route, its source's link: FS__SRC_RATE (0): its rate, as on every
   * link; FS__SRC_INJECT: a slow-start window waits in the source's
   * per-flow fair queue; FS__SRC_OUT: the window has left, the flow takes
   * nothing there. The waiting windows of a link leave at one equal share
   * each, src_y (per link), a quantity that rises in the fill until the
   * link saturates, whatever binds their flows further on (the excess
   * queues downstream): one aggregate of weight src_w (the sum of their
   * first entries' weights) in the fill, taking src_w x src_y. A waiting
   * flow itself takes nothing there (its aggregate does) but is frozen when
   * the link saturates if it is still rising: it cannot outrun its
   * injection. */
  uint8_t *src_phase;
  double *src_w, *src_y;
} fs__simcore;

enum { FS__SRC_RATE = 0, FS__SRC_INJECT = 1, FS__SRC_OUT = 2 };

/* Flow f's window waits at its source link (entry k = 0). */
static inline int fs__inject(const fs__simcore *c, int32_t f, int32_t k) {
  return !k && c->src_phase && c->src_phase[f] == FS__SRC_INJECT;
}
/* Entry k of flow f takes no part in the fill (its window has left). */
static inline int fs__skip(const fs__simcore *c, int32_t f, int32_t k) {
  return !k && c->src_phase && c->src_phase[f] == FS__SRC_OUT;
}
/* What flow f takes (per unit of weight) on entry k of its rating route. */
static inline double fs__take(const fs__simcore *c, int32_t f, int32_t k) {
  return fs__inject(c, f, k) || fs__skip(c, f, k) ? 0 : c->flows[f].rate;
}
/* The rate by which the re-rating judges flow f on entry k: its own, where
 * it takes part in the fill. */
static inline double fs__pace(const fs__simcore *c, int32_t f, int32_t k) {
  return fs__skip(c, f, k) ? 0 : c->flows[f].rate;
}

/* Which exchange's first reply a flow's pending EV_ACK is (tcp.c). */
enum { FS__ACK_HANDSHAKE = 1, FS__ACK_ROUND = 2 };

/* A flow's transport state (transport.c fills it under tcp and rdma; the
 * engine keeps it per flow only for tcp with new connections, and the
 * payload and `small` alone otherwise). Bytes are on the wire (payload +
 * headers). */
typedef struct fs__tflow {
  double payload;     /* bytes as added */
  double handshake_s; /* before its first byte: a new connection's SYN round trip */
  double rtt_s;       /* propagation both ways + a packet and its ACK per hop */
  double bdp;         /* window at which it cannot be window-limited: its
                       * fastest rate alone x rtt */
  double cwnd;        /* current window; INFINITY when not slow-starting */
  double first;       /* the first round's bytes: the initial window, cut to
                       * the whole segments of the SYN's unscaled receive
                       * window (INFINITY: the flow fits) */
  double round_bytes; /* what the current round may send */
  double budget;      /* bytes the current round may still send; INFINITY: no limit */
  double round_end;   /* when the current round's first ACK is back */
  double ack_q;       /* the wait its last (SYN-)ACK met on the way back (tcp.c,
                       * ack_left): switch queues of others' data, the receiver */
  double tail_pause;  /* the last packet alone in its round: how long the
                       * flow waited for that round's ACK (0: not alone) */
  double ack_base;    /* with ack_kind: when the handshake ends, or the held
                       * flow's next round begins, before the receiver's wait */
  uint8_t ack_kind;   /* the (SYN-)ACK on its way: FS__ACK_* (tcp.c) */
  uint8_t round_hold; /* off its links until its round's first ACK is back */
  uint8_t small;      /* tcp, fits in the initial window: leaves its source FIFO */
  uint8_t qca;        /* its queued bytes count as congestion avoidance */
  uint8_t hcounted;   /* counted in the host links' flows (portq.c) */
  uint8_t climbed;    /* its window is in its ports' standing queues (portq.c) */
  int32_t qlink, qend; /* the level of its packet route it queues at: entries
                        * [qlink, qend); qlink -1: none (portq.c) */
  double qbytes, qrate, qsince; /* queued there: qbytes at qsince, falling at qrate */
  double qup;         /* of a window queued at once, the bytes that packets would
                       * not yet have brought to those ports at qsince (they come
                       * at the first link's rate): what packets beside it see
                       * (hybrid.c, pk_fluid) */
  uint8_t qwin;       /* a new window: all of it is upstream when it queues */
  double on_s;        /* when it last came onto its links (its fluid reaches a
                       * port the hops before it later: hybrid.c, fluid_arrived) */
  double on_all_s;    /* ... and when it has reached every port of its route */
  double ca_window;   /* a new connection's window when it left slow start (bytes) */
  double ss_lost;     /* in slow start's rounds: the bytes packets displaced from it */
  double inject_left; /* source fair queue: the round's bytes not yet out of the
                       * source, as of when it last joined its link's queue */
  double tag;         /* while waiting: when the window is out, on its source
                       * link's virtual clock (the bytes each waiting window
                       * has sent there) */
} fs__tflow;

/* The phases of a switch port's standing queue (tcp model, portq.c):
 * new connections' slow start filling it until the first ECN echo,
 * DCTCP's cuts while it stays over K, then congestion avoidance's climb
 * (where warm connections begin). */
enum { FS__SQ_SLOW_START = 0, FS__SQ_CUTS = 1, FS__SQ_CLIMB = 2 };

/* tcp: what the flows queued at a switch port hold (portq.c): bursts
 * (slow-start windows, messages sent whole) and flows in congestion
 * avoidance apart, each as bytes at t falling at a rate. */
typedef struct fs__portq {
  double t, burst, burst_rate, ca, ca_rate;
  double ca_flows, ca_rtt; /* its flows in congestion avoidance, and the sum of their RTTs */
  double climb, climb_t; /* the standing queue in packets, as of when (portq.c, standing_advance) */
  double alpha, cut_t, cut_to; /* its DCTCP cuts: alpha, when the next one takes effect
                                * (-1: none yet), the queue it drains to */
  double ss_win, ss_first; /* new connections' windows that joined in slow start, and
                            * their first flights (packets) */
  double warm_in, warm_to, warm_t; /* warm connections: the rate their windows reach the
                                    * port at (bytes/s), the queue those windows fill
                                    * (packets); warm_t, also for new connections' slow
                                    * start: when the first joining window reaches it */
  uint8_t phase, episode; /* FS__SQ_* of the standing queue; whether one is under way */
  int32_t n_burst, n_ca;
  uint8_t saturated; /* as of the last re-rating that touched it */
  uint8_t flipped;   /* saturated (or merge_back) changed in the re-rating under way */
  int32_t merge_back; /* where its flows merge, in links before it (portq.c, merge_back) */
  uint32_t merge_ver; /* its flows' version (fs__link_active) merge_back is of, + 1 */
} fs__portq;

/* Fills tf for flow f (its route whole, capacities in core->cap_Bps) and
 * turns f's bytes into wire bytes and its latency into one with the last
 * packet's store and forward; *reach (if given): its last packet's reach
 * (fs__transport_tail_reach_s). */
/* tf as a flow of `payload` bytes begins under tp, before what its route
 * sets (fs__transport_flow): nothing queued, no window limit but a new
 * tcp connection's initial window. */
void fs__transport_fresh(const fs_transport *tp, double payload, fs__tflow *tf);
void fs__transport_flow(const fs_transport *tp, const fs__simcore *core, fs__flow *f,
                        fs__tflow *tf, double *reach);
/* The last packet's store and forward over f's route (after its first hop)
 * for a message of `payload` bytes: what a transport adds to its latency. */
double fs__transport_store_s(const fs_transport *tp, const fs__simcore *core, const fs__flow *f,
                             double payload);
/* How close behind the packet before it the last packet of a message of
 * `payload` bytes must leave the source to wait for it at a switch port of
 * the route (links, weights, n; capacities cap_Bps): it waits
 * max(0, Z - spacing - pause), spacing = (P + H) / rate (docs/model.md,
 * "Store and forward"). Returns Z in s (0: never). */
double fs__transport_tail_reach_s(const fs_transport *tp, const double *cap_Bps,
                                  const int32_t *links, const double *w, int32_t n,
                                  double payload);
/* The wire bytes of the last packet of a message of `payload` bytes. */
double fs__transport_last_bytes(const fs_transport *tp, double payload);
/* 1 if that last packet follows another and is shorter than a full one
 * (it may wait for the one before it). */
int fs__transport_last_short(const fs_transport *tp, double payload);

/* ---- lazy lowering (lazy.c; sim.h "plans") ----
 * A plan: its items, the distinct (source, destination) member pairs of
 * its flows in order of first use (pair_of: each flow's), and per item its
 * dependents in the order added (dep_start/dep_list, entries after * 2 +
 * sent) and how many dependencies it has inside the plan (indeg). */
struct fs_sim_plan {
  fs_sim_plan_item *items;
  int32_t n_items, n_members, start, done;
  int32_t *pair_of;    /* per item: its pair (flows), -1 (tasks) */
  int32_t (*pairs)[2];
  int32_t n_pairs;
  int32_t *dep_start, *dep_list, *indeg;
  int64_t n_flows;
};

/* An instance: its real start and done items, where it sits among the
 * flows added (its flows' place in the order of flows, which the pruning's
 * routes and the charging of link bytes follow), its hosts and per pair
 * the route (and, once pruned, the pruned route's id); while it runs, per
 * plan item the dependencies left, and how many items are not done. */
/* What a flow keeps of its route (a cache's route struct may move as the
 * cache grows; its arrays stay). */
typedef struct fs__lzroute {
  const int32_t *links;
  const double *w;
  int32_t n;
  double latency_s;
  const int32_t *x_links; /* the expanded route (quotient routes), or NULL */
  const double *x_w;
  int32_t x_n;
  double orbit;
} fs__lzroute;

/* A plan on hosts with routes: what instances of it share (a training
 * iteration runs each collective of a group many times, on the same hosts
 * and routes): per pair the route and, once pruned, its id. */
typedef struct fs__lzbind {
  const fs_sim_plan *plan;
  const fs_route_cache *cache;
  int32_t *hosts;
  fs__lzroute *route;
  int32_t *rid;
  int pruned;          /* its routes have ids (prune.c, this run) */
} fs__lzbind;

typedef struct fs__lzinst {
  fs__lzbind *bind;    /* (its plan: bind->plan) */
  int32_t start, done, at_flow;
  int32_t *cnt;
  int32_t left;
  double end_s;        /* the latest finish of an item it made */
} fs__lzinst;

/* Items made as instances run take ids from `base` (the items added) on,
 * each for good with one flow or task slot, and are given back when done:
 * of[id - base] says whose (instance, plan item) it is. */
typedef struct fs__lazy {
  fs__lzinst *inst;
  size_t n_inst, inst_cap;
  fs__lzbind **bind;   /* distinct (plan, cache, hosts); bind_of finds them */
  size_t n_bind, bind_cap;
  fs__u64map bind_of;  /* hash of (plan, cache, hosts) -> first binding of it */
  int32_t base, n_ids;
  int32_t n_added;     /* flows added (the slots past them are made ones) */
  int32_t (*of)[2];
  size_t of_cap;
  int32_t *free_flow, *free_task;
  size_t n_free_flow, n_free_task, free_flow_cap, free_task_cap;
  size_t slots;        /* flows the per-flow arrays are sized for */
} fs__lazy;

/* Leaves the links that can never bind out of the flows' rating routes
 * (prune.c): sets each flow's rid and rating route, core->proutes, and
 * *n_pruned to the links left out (0: nothing changed). Needs cap_Bps; a
 * link is left out only if its bound is within efficiency x its capacity
 * (the share a transport uses of a shared link). keep_first: the first link
 * of every route stays too (the source fair queue's link, whose windows'
 * shares are not bounded by the flows' rates). apply 0: changes nothing
 * (*n_pruned 0). can_bind (optional): set to a new array, per link 1 if it
 * stays (it may bind), 0 if it would be left out or carries no flow; the
 * caller frees it. 0 or FS_ENOMEM (flows unchanged, *can_bind untouched or
 * set). */
/* The routes of plan instances (lz) count too: each instance's take their
 * place in the order of flows (at_flow), and their ids go to its rid. */
int fs__prune(fs__simcore *core, fs__lazy *lz, fs__arena *arena, double efficiency,
              int keep_first, int apply, uint8_t **can_bind, int64_t *n_pruned);

/* Per-link bytes per time bin (bins.c): n bins of `width` s from t = 0,
 * bin-major (b[bin * L + link]); width 0 until the first charge;
 * `used` bins cover the run once finished. n = 0: off. */
typedef struct fs__bins {
  int32_t n, L, used;
  double width;
  double *b;
} fs__bins;
/* 0 or FS_ENOMEM; n <= 0 leaves the bins off (and b zeroed). */
int fs__bins_init(fs__bins *b, int32_t n_links, int32_t n);
void fs__bins_free(fs__bins *b);
/* Flow f sent `bytes` at a constant rate over [t0, t1]: charged to every
 * link of its route, the left-out ones of a pruned route included. */
void fs__bins_flow(fs__bins *b, const fs__simcore *c, const fs__flow *f, double t0, double t1,
                   double bytes);
/* After the run: widens to cover makespan and sets `used`. */
void fs__bins_finish(fs__bins *b, double makespan);
/* Under a symmetry, each link's orbit representative carried what every
 * link of the orbit carries: copies the representative's bytes into every
 * bin of the others (rep[l]: l's representative). */
void fs__bins_expand(fs__bins *b, const int32_t *rep);

/* rdma's DCQCN rate control, and tcp's DCTCP (dcqcn.c): per flow its
 * reaction point or window, per link its port's queue. */
typedef struct fs__cnpq {
  double *n;     /* ring of cap (a power of 2) time buckets: marks that come
                  * back in bucket i (ending at i x bucket x 2^shift s) */
  int64_t base;  /* the oldest bucket kept */
  int32_t len, cap, shift;
} fs__cnpq;
/* The most buckets a flow's delay line keeps (dcqcn.c, cnp_push): marks
 * due further out merge the buckets pairwise, so a mark counts at most
 * 1/256 of its wait late (at a 1 ms wait, 4 us: the model's step). The
 * line is a ring of every bucket, so this bounds it to 2 KB a flow (it
 * was 1024, 8 KB: 16,256 flows in flight took 137 MB for 51 MB now). */
#define FS__CNP_BUCKETS 256

/* The longest step of the DCQCN model while a port is queued: a queue
 * moves at most 50 KB in it at 100 Gb/s (an eighth of the default Kmin),
 * and a first CNP acts at most this late (docs/model.md, "DCQCN"). */
#define FS__DCQCN_STEP_US 4.0
/* ... and of DCTCP's: its round trips in a data centre are a few us, and
 * its window reacts once a round trip, so a step is the echoes' bucket. */
#define FS__DCTCP_STEP_US 1.0
#define FS__DCTCP_MAXP (1.0 / 50)

typedef struct fs__hops {
  double *b, *arr, *out; /* per hop of its route: bytes queued at the port,
                          * what comes to it and what leaves it (bytes/s) */
  double *came;          /* ... and the bytes come to it since the last step */
  int32_t cap;
} fs__hops;

/* A port of the DCQCN/DCTCP model over a step (dcqcn.c, port_fifo): what
 * comes to it and what leaves it (bytes/s); a flow with b bytes queued
 * there that brings x lets out b / w x ka + x x kg (ka: C / q for a queue
 * that outlasts the step, else 1 / step; kg: 0 for such a queue, else the
 * capacity left over what comes, at most 1). */
typedef struct fs__port {
  double in, out, ka, kg;
} fs__port;

/* One flow of the DCQCN/DCTCP model: its reaction point, its delay line
 * and what it holds along its route, in one record, so that a
 * step, which takes every flow in flight, reads a few cache lines per
 * flow rather than one per field (the fields the steps read first). */
typedef struct fs__dqflow {
  fs__hops hop;       /* what it has queued along its route */
  double t_f;         /* its queued bytes (hop) are as of then: the last step or
                       * its last re-rating between steps (fs__dcqcn_local) */
  double offer;       /* what it sends: its NIC's round robin under the rc */
  double rc;          /* current rate (bytes/s) */
  fs__cnpq cnp;       /* marks on their way back to it */
  double marks;       /* marks come back so far (a CNP per whole one) */
  double pend;        /* marks on their way back (expected) */
  double alpha;
  double t_alpha;     /* its next alpha update (every alpha_us from its first CNP) */
  double t_inc;       /* its next rate increase */
  double next_dec;    /* the end of its decrease period */
  double rt;          /* target rate (bytes/s) */
  double line;        /* its NIC's rate */
  int32_t stage;      /* increases since its last cut */
  uint32_t fstamp;    /* taken again in this step's second round */
  uint8_t cc;         /* a CNP has come: its timers run */
  uint8_t cnp_dec;    /* a CNP came in this decrease period */
  uint8_t cnp_alpha;  /* a CNP came in this alpha period */
  uint8_t in_drain;   /* it is on the drain list */
  uint8_t ss;         /* DCTCP: a new connection's slow start (FS__SS_*) */
  uint8_t touched;    /* it came or went since the last step */
  uint8_t done;       /* finished: its record goes back once nothing of it is queued */
} fs__dqflow;

/* One flow's window under DCTCP (dcqcn.c, dctcp_react): a record of its
 * own, which DCQCN never touches (the pages of a run's flows stay
 * unmapped). */
typedef struct fs__dqwin {
  double cwnd, rtt0;  /* window (wire bytes); round trip without queues */
  double win_end, win_pk, win_mk; /* alpha's observation window: its end,
                                   * packets and marks acknowledged in it */
  double cwr_end;     /* no second cut before (once a window) */
  double acked;       /* bytes acknowledged since its last step */
} fs__dqwin;

typedef struct fs__dcqcn {
  fs_dcqcn prm;
  double wire_bytes;  /* a full packet on the wire */
  double bucket;      /* CNPs' time resolution, s: the alpha period or less */
  double last;        /* when it last stepped */
  double step_s;      /* its step while a port is queued or over-subscribed */
  /* tcp under DCTCP instead of DCQCN: marks from K packets (at 100 Gb/s,
   * scaled with a port's rate), the window's reaction point (dcqcn.c,
   * dctcp_react) */
  int dctcp;
  double k100, mss, ack_bytes, init_window;
  int32_t *exits, n_exits;  /* flows the last step took out of the engine's
                             * slow-start rounds (their first echo) */
  int32_t *slot;      /* per flow: its record + 1, 0 none (not started, or
                       * done and nothing of it queued) */
  fs__pool rec;       /* the records (fs__dqflow) */
  fs__dqwin *w;       /* per flow, under DCTCP */
  int32_t *nic;       /* scratch: the flows of one NIC */
  int32_t *drain, n_drain; /* flows whose senders are done, bytes still queued */
  uint8_t *kept;      /* per drain entry: it holds bytes after this step's catch-up */
  int32_t *tail_hop;  /* per flow, its sender done: the hop its last byte queues at next */
  double *tail_more;  /* ... and what it adds after the queues (store and forward) */
  int32_t *upd, n_upd; /* the flows fs__dcqcn_local re-rated (their offers) */
  int32_t *touch, n_touch; /* flows that came or went since the last step */
  /* per link */
  double *q, *q0;     /* bytes queued at its port, now and a step ago */
  uint8_t *marking;   /* q or q0 over the marking threshold (the last step): 1;
                       * 2: a queue between them may be (dcqcn.c, gather_queues) */
  double *rlo, *rhi;  /* its RED thresholds (dcqcn.c, red_lo and red_hi; the last step) */
  uint8_t *kchg;      /* its port's factors changed in a step's first round */
  fs__port *port;     /* what comes to it and leaves it, how it serves */
  double *qoff;       /* its queue's change since the last step beyond
                       * (in - out) x the time since it: re-ratings' */
  uint32_t *stamp, epoch;
  /* a NIC's offers (nic_share) hold while nic_ok is nic_epoch and its
   * flows' version is nic_ver: no rc of its flows changed (0), and no
   * capacity, route or slow start (nic_epoch moves on) since */
  uint32_t *nic_ok, *nic_ver, nic_epoch;
  int32_t *live, n_live; /* links with a queue or something coming */
  int32_t *links;     /* scratch: the next step's live links */
} fs__dcqcn;

/* Flow fi's record of the DCQCN/DCTCP model (it has started and is not
 * given back: a run holds records for the flows in flight and those with
 * bytes still queued, not for every flow it runs). */
static inline fs__dqflow *fs__dq(const fs__dcqcn *d, int32_t fi) {
  return fs__pool_at(&d->rec, d->slot[fi] - 1);
}

/* A DCTCP flow's slow start on a new connection: in congestion avoidance
 * (warm, or cut by an echo), growing by what is acknowledged (its window
 * covers the path's bandwidth-delay product), or sending the engine's
 * slow-start rounds (tcp.c, window_sent) at its NIC's share. */
enum { FS__SS_NONE = 0, FS__SS_GROW = 1, FS__SS_ROUNDS = 2 };

int fs__dcqcn_init(fs__dcqcn *d, const fs_dcqcn *prm, int32_t n_links, int32_t n_flows);
void fs__dcqcn_free(fs__dcqcn *d);
/* Flow fi's queue pair begins at its NIC's line rate (under DCTCP a warm
 * window of the path's bandwidth-delay product), alpha 1, no CNP yet: it
 * takes a record. 0 or FS_ENOMEM. */
int fs__dcqcn_start(fs__dcqcn *d, const fs__simcore *c, int32_t fi);
/* The step's clock (DCQCN): t rounded to the nearest multiple of d->step_s
 * (after = 0), or the first multiple after t (after = 1). */
double fs__dcqcn_grid(const fs__dcqcn *d, double t, int after);
/* Reaction point rp's alpha at each alpha period of its own clock that
 * ended by now, given cnps CNPs over the step of dt up to now. */
void fs__dcqcn_alpha_periods(fs__dqflow *rp, const fs_dcqcn *p, double now, double dt,
                             double cnps);
/* Steps from the last call to `now`: the queues under the offers of the
 * step, the marks made and the CNPs come back, cuts and increases; then
 * d->offer of each flow in flight (its sending rate from now). Returns 1
 * while a port is queued or over-subscribed (step again dec_us later), 0
 * otherwise, FS_ENOMEM; *next_inc: when a rate next rises or CNPs come
 * back (INFINITY: never). */
int fs__dcqcn_tick(fs__dcqcn *d, const fs__simcore *c, const int32_t *active, int32_t n,
                   double now, double *next_inc);
/* Flow fi has finished: its record (with its delay line and per-hop
 * arrays) is given back, now or once the last of its bytes queued in the
 * model are through (a run's memory then grows with the flows in flight,
 * not with all it ran). A flow without a record: nothing. */
void fs__dcqcn_done(fs__dcqcn *d, int32_t fi);
/* Between steps: the flows of `flows` came or went (their NICs' shares
 * change). Re-rates the flows of their NICs from now (d->offer) and
 * carries the new rates through the ports without a queue. Returns 0, 1
 * when that is not enough (a port without a queue over-subscribed, or a
 * flow whose rate the model steps): the caller steps the model now (its
 * state stays consistent), or FS_ENOMEM. */
int fs__dcqcn_local(fs__dcqcn *d, const fs__simcore *c, const int32_t *flows, int32_t n,
                    double now);
/* DCTCP on a new connection: flow fi's window is now cwnd wire bytes, in
 * the engine's slow-start rounds (FS__SS_ROUNDS) or, once it covers the
 * bandwidth-delay product, growing by what is acknowledged (FS__SS_GROW);
 * either until its first echo, which cuts it by alpha / 2. */
void fs__dcqcn_slow_start(fs__dcqcn *d, int32_t fi, double cwnd, uint8_t mode);
/* Flow fi's sender is done or waits off its links (it left the flows in
 * flight): its queued bytes still move on. */
int fs__dcqcn_sent(fs__dcqcn *d, int32_t fi);
void fs__dcqcn_reset_hops(fs__dcqcn *d, int32_t fi);
/* Every NIC's offers are to be shared again (capacities or routes changed). */
static inline void fs__dcqcn_nics_changed(fs__dcqcn *d) {
  if (++d->nic_epoch == 0) d->nic_epoch = 1; /* (0: never current) */
}
/* What a byte reaching link l now waits in its port's queue. */
double fs__dcqcn_wait_s(const fs__dcqcn *d, const fs__simcore *c, int32_t l, double now);

int fs__maxmin_init(fs__maxmin *m, int32_t n_links, int32_t n_flows);
void fs__maxmin_free(fs__maxmin *m);
/* Its per-flow scratch for n_new flows instead of n_old (plan instances
 * make flows as they run, lazy.c). 0 or FS_ENOMEM (m still valid). */
int fs__maxmin_grow(fs__maxmin *m, size_t n_old, size_t n_new);
/* Re-rates after a batch that changed the flows on core->dirty_links (the
 * arrivals have rate 0; core->theta says how fast the leavers were): fills
 * m->comp_flows with the flows whose rates may change and m->new_rate[f]
 * with their max-min rates. Other flows keep theirs. Resets core->theta.
 * Always returns 0 (scratch is preallocated). */
int fs__maxmin_rerate(fs__simcore *core, fs__maxmin *m);

#endif
