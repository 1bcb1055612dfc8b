/* The fluid (flow-level) simulation engine.
 *
 * Flows (src, dst, bytes, earliest start, a route) and compute tasks (host,
 * duration, earliest start) are the items of a DAG: an item starts when all
 * the items it depends on have finished and its earliest start has come.
 * Flow rates are max-min fair over link capacities (progressive filling,
 * weighted by the fraction of the flow each link carries). A flow transmits
 * from its start until its bytes are drained and finishes one path latency
 * later: finish = drain time + route latency.
 *
 * Events at the same instant (to 1e-12 relative) form one batch; after a
 * batch only the flows whose max-min rate can change are re-rated: those at
 * or above the lowest rate involved in the change and reached from it
 * through the links they are bottlenecked on (see src/sim/maxmin.c). Memory
 * is linear in the flows, in the route entries copied (none for flows added
 * by reference), in the route entries of the flows in flight and in the
 * events pending (superseded drain predictions are dropped, not kept).
 * Times inside are double seconds; inputs are int64 nanoseconds. */
#ifndef FABRICSIM_SIM_H
#define FABRICSIM_SIM_H

#include <stdint.h>

#include "fabricsim/err.h"
#include "fabricsim/route.h"
#include "fabricsim/symm.h"
#include "fabricsim/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fs_sim fs_sim;

typedef enum fs_item_kind { FS_ITEM_FLOW = 0, FS_ITEM_TASK = 1 } fs_item_kind;

/* The topology must outlive the simulation. */
int fs_sim_new(const fs_topo *t, fs_sim **out, fs_err *err);
void fs_sim_free(fs_sim *s); /* NULL is a no-op */

/* Adds a flow of `bytes` (>= 0; 0 finishes after the route latency) from node
 * src to node dst over `route` (copied). Returns its item id (>= 0, ids are
 * consecutive over flows and tasks in the order added) or a negative code. */
int32_t fs_sim_add_flow(fs_sim *s, int32_t src, int32_t dst, double bytes,
                        int64_t start_ns, const fs_route *route, fs_err *err);
/* The same, borrowing the route instead of copying it: its links and
 * weights arrays must stay valid and unchanged while the simulation is used
 * (e.g. a route cache's, fs_route_cache_get, freed after the simulation). Flows that
 * share a route then share its memory: a training iteration sends millions
 * of flows over a few thousand distinct routes. */
int32_t fs_sim_add_flow_ref(fs_sim *s, int32_t src, int32_t dst, double bytes,
                            int64_t start_ns, const fs_route *route, fs_err *err);
/* Adds a compute task of duration_ns (>= 0) on a host. Tasks do not contend
 * with each other; order them with dependencies where they must. */
int32_t fs_sim_add_task(fs_sim *s, int32_t host, int64_t start_ns,
                        int64_t duration_ns, fs_err *err);
/* The same with a duration in (fractional) seconds, for modeled durations
 * (FLOPs / throughput, bytes * gamma) that are not whole nanoseconds. */
int32_t fs_sim_add_task_s(fs_sim *s, int32_t host, int64_t start_ns,
                          double duration_s, fs_err *err);
/* `after` starts only once `before` has finished. */
int fs_sim_add_dep(fs_sim *s, int32_t before, int32_t after, fs_err *err);
/* `after` starts only once the last byte of `flow` has left its source (the
 * flow has drained; it finishes a path latency later). Models a sender that
 * may reuse its link as soon as a message is out, as NICs pipeline
 * back-to-back messages. */
int fs_sim_add_dep_sent(fs_sim *s, int32_t flow, int32_t after, fs_err *err);

/* ---- plans: subgraphs added whole, made item by item as they run ----
 * A plan is a DAG of flows and tasks over n members (a collective as its
 * lowering makes it, in member terms): items, dependencies among them in
 * the order they were added (before, after, sent: 1 for a "sent"
 * dependency on a flow), a start task every other item depends on and a
 * done task. fs_sim_add_plan puts one instance of it on hosts: its start
 * and done tasks are items of the simulation like any other (depend on
 * them, read their times), and its other items exist only while they run:
 * each is made when its dependencies are met and given back when it
 * finishes, so memory follows the flows in flight, not the plan's
 * (docs/model.md, "Lazy lowering"). The times, link statistics and bins
 * are exactly (bit for bit) those of adding every item of the plan with
 * fs_sim_add_flow_ref / fs_sim_add_task_s and its dependencies in their
 * order, start first, and `after` edges to the start afterwards; the
 * instance's items are not listed among the run's items, its flows not
 * among the started ones. Runs with instances must use the fluid
 * transport (no transport model) and no timers: fs_sim_run fails with
 * FS_EINVAL otherwise. */
typedef struct fs_sim_plan fs_sim_plan;

typedef struct fs_sim_plan_item {
  int32_t kind;  /* FS_ITEM_FLOW or FS_ITEM_TASK */
  int32_t a, b;  /* members: a flow's source and destination; a task's host (a) */
  double value;  /* a flow's bytes (>= 0), a task's seconds (>= 0) */
} fs_sim_plan_item;

/* Copies the plan. start and done must be distinct tasks; start must
 * depend on nothing and every other item on something (so all hang from
 * start); sent dependencies must leave flows; no cycle. 0, FS_EINVAL
 * naming what is wrong, FS_ENOMEM. */
int fs_sim_plan_new(const fs_sim_plan_item *items, int32_t n_items, const int32_t (*deps)[3],
                    int64_t n_deps, int32_t start, int32_t done, int32_t n_members,
                    fs_sim_plan **out, fs_err *err);
void fs_sim_plan_free(fs_sim_plan *p); /* NULL is a no-op */
/* Flows and tasks of the plan, start and done included. */
void fs_sim_plan_counts(const fs_sim_plan *p, int64_t *flows, int64_t *tasks);

/* An instance of plan p (which must outlive s) on hosts[0 .. n_members)
 * (copied): member k is hosts[k]; a flow takes fs_route_cache_get(routes,
 * src, dst)'s route, borrowed (the cache must outlive s). *start and *done
 * are its start and done tasks. 0, FS_EINVAL, FS_ENOMEM. */
int fs_sim_add_plan(fs_sim *s, const fs_sim_plan *p, const int32_t *hosts,
                    fs_route_cache *routes, int32_t *start, int32_t *done, fs_err *err);
/* Plan instances added (0: every item of the run is listed). */
int64_t fs_sim_n_plans(const fs_sim *s);
/* After the run: the item's finish or, for a plan instance's start, the
 * latest finish of it and of every item its instance made (what the
 * latest of those items' finishes would be, added one by one). */
double fs_sim_last_finish_s(const fs_sim *s, int32_t item);

/* ---- transport: packet effects kept in the fluid engine (docs/model.md,
 * "Transport") ----
 * fluid: ideal max-min, what the engine always did (the default).
 * tcp: bytes on the wire include per-packet headers; the last packet is
 *   stored and forwarded at each switch; a new connection first spends a
 *   handshake (one round trip) and then slow-starts from an initial window,
 *   one window per round trip until the window covers the path's
 *   bandwidth-delay product; messages that fit in the initial window leave
 *   a source one after another (the NIC queue is FIFO); handshakes and
 *   slow-start rounds wait behind the queues at switch ports (what windows
 *   have sent beyond the fluid rates, at most K packets for flows in
 *   congestion avoidance); a link shared by two or more flows carries
 *   `efficiency` of its capacity.
 * rdma: RoCEv2 headers and store-and-forward; queue pairs are persistent and
 *   start at line rate (DCQCN), so no handshake, no slow start, no FIFO.
 *   With `dcqcn` set, each queue pair's rate follows DCQCN's reaction point
 *   (cuts on ECN marks at switch ports, slow recovery) and a port with a
 *   queue serves its flows in proportion to what they send (FIFO), instead
 *   of every flow taking its max-min share at once. The same for tcp on
 *   persistent connections with DCTCP's windows (marks at queue_k). */
typedef enum fs_transport_kind {
  FS_TRANSPORT_FLUID = 0,
  FS_TRANSPORT_TCP,
  FS_TRANSPORT_RDMA
} fs_transport_kind;

/* DCQCN (Zhu et al., SIGCOMM 2015) as NVIDIA's firmware sets it (the HPCC
 * and SimAI ns-3 simulators' settings; docs/model.md, "DCQCN"). Byte sizes
 * and rates are at 100 Gb/s and scale with a port's or a NIC's rate. */
typedef struct fs_dcqcn {
  double kmin_kb, kmax_kb; /* RED/ECN marking band of a switch port (400, 1600) */
  double pmax;             /* marking probability at kmax (0.2) */
  double g;                /* alpha's gain (1/256) */
  double alpha_us;         /* alpha update period (1) */
  double dec_us;           /* at most one rate cut per period (4) */
  double inc_us;           /* rate-increase timer (300) */
  int f;                   /* fast-recovery stages (1) */
  double ai_mbps, hai_mbps; /* additive and hyper increase (20, 200) */
  double min_mbps;         /* a queue pair's least rate (1000, not scaled) */
} fs_dcqcn;

typedef struct fs_transport {
  fs_transport_kind kind;
  double mss_bytes;       /* payload per packet (tcp 8948: MTU 9000 - 52; rdma 4096) */
  double header_bytes;    /* per packet on the wire besides the payload (tcp 54:
                             IPv4 20 + TCP 20 + timestamps 12 + PPP 2; rdma 62:
                             Ethernet 14 + FCS 4 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4) */
  int persistent;         /* connections already open and warm: no handshake, no slow start */
  double init_window;     /* segments (tcp 10, RFC 6928) */
  double efficiency;      /* of a link's capacity while >= 2 flows share it, (0, 1] */
  double queue_k;         /* tcp: DCTCP's ECN marking threshold K, packets at
                             100 Gb/s (scaled with a port's rate): the most
                             that flows in congestion avoidance hold queued
                             at a switch port (65; 0: no switch queues) */
  int source_fq;          /* tcp: a slow-start window waits in its source's
                             per-flow fair queue and leaves at the flow's share
                             of the source link, whatever binds it further on
                             (1); 0 (the default): it takes its rate there */
  int dcqcn;              /* rdma: rates under DCQCN's rate control (1);
                             tcp on persistent connections: under DCTCP's
                             windows over the same queues and marks at
                             queue_k (1); 0 (the default): max-min at once */
  fs_dcqcn dcqcn_prm;     /* its settings (fs_transport_defaults) */
  double packet_bytes;    /* tcp: flows of at most this many bytes (on one
                             path) run packet by packet beside the fluid ones
                             (docs/model.md, "Small flows as packets"); 0: none */
} fs_transport;

/* The documented defaults of a kind (fluid: no effect at all). */
void fs_transport_defaults(fs_transport_kind kind, fs_transport *out);
/* "fluid", "tcp" or "rdma"; 0 or FS_EINVAL. */
int fs_transport_kind_parse(const char *name, fs_transport_kind *out);

/* The "transport" section of job and scenario files, read by one parser:
 * root["transport"] of a parsed document (cjson/cJSON.h): absent = fluid;
 * "tcp" (a kind's defaults); or {"kind", "connections": "new"|"persistent", "mss_bytes", "header_bytes",
 * "init_window", "efficiency", "queue_k", "source_queue": "fq"|"none"} over
 * the kind's defaults. 0, or FS_EINVAL with err naming FILE,
 * $.transport... and the value. */
struct cJSON;
int fs_transport_from_json(const struct cJSON *root, const char *file, fs_transport *out,
                           fs_err *err);
const char *fs_transport_kind_name(fs_transport_kind kind);
/* Checks ranges (mss >= 1, header >= 0, init_window >= 1, efficiency in
 * (0, 1], queue_k >= 0, packet_bytes >= 0) and the rules of which settings
 * combine (fs_transport_combine); 0 or FS_EINVAL with a message naming the
 * field. */
int fs_transport_check(const fs_transport *tp, fs_err *err);

/* The settings the rules below speak of, as a user names them: the JSON
 * key of $.transport (fs_transport_key_name) and its CLI option. */
typedef enum fs_transport_key {
  FS_TK_KIND,          /* "kind", --transport */
  FS_TK_CONNECTIONS,   /* "connections", --connections */
  FS_TK_RATE_CONTROL,  /* "rate_control", --rate-control */
  FS_TK_SOURCE_QUEUE,  /* "source_queue" */
  FS_TK_QUEUE_K,       /* "queue_k" */
  FS_TK_PACKET_BYTES   /* "packet_bytes", --packet-bytes */
} fs_transport_key;
const char *fs_transport_key_name(fs_transport_key key);

/* The rules of which transport settings combine, in one place for every
 * reader (job and scenario files, the CLI's options over them, the
 * library's check): rate control dcqcn is rdma's and dctcp tcp's; rdma
 * queue pairs are persistent; a rate control has no max-min source queue;
 * dctcp marks at queue_k > 0; flows run as packets under tcp or rdma only,
 * under rdma beside DCQCN's queues only and under tcp at ports that mark at
 * queue_k > 0. rate_control: the name the user gave ("dcqcn", "dctcp",
 * "ideal"; NULL: none given). given: bit (1 << FS_TK_*) of each setting the
 * user gave. A packet_bytes not given that cannot be used is dropped (tcp
 * with queue_k 0) or kept for a rate control given later (rdma). 0, or
 * FS_EINVAL with *bad the setting to blame (one the user gave, where the
 * rule has one) and err's message saying why, naming no file or option:
 * the caller puts its JSON path or its option in front. */
int fs_transport_combine(fs_transport *tp, const char *rate_control, unsigned given,
                         fs_transport_key *bad, fs_err *err);
/* Before the run; the default is fluid. 0, FS_EINVAL (bad fields, or the
 * simulation ran). */
int fs_sim_set_transport(fs_sim *s, const fs_transport *tp, fs_err *err);
/* The flows added on quotient routes (fs_route.expanded set, symm.h) are
 * representatives under `symm`: a transport model times each by the route
 * its packets take (the expanded one: hops, round trip, store and forward)
 * and keeps the queues of every link orbit at its representative, each
 * flow's share multiplied by flow_orbit / |orbit| (docs/model-symm.md).
 * Needed before the run when such flows run under a transport model
 * (fs_sim_run fails without it); the fluid model needs nothing. Copies
 * what it needs (symm may be freed). 0, FS_EINVAL (another topology, or
 * the simulation ran), FS_ENOMEM. */
int fs_sim_set_symmetry(fs_sim *s, const fs_symm *symm, fs_err *err);

typedef struct fs_sim_progress {
  double now_s;
  int64_t items_done, items_total;
  uint64_t events;
} fs_sim_progress;

typedef struct fs_sim_opts {
  /* Called after every batch, once rates are set for the interval that
   * starts at now_s; the accessors below may be used inside. Optional. */
  void (*observe)(void *ctx, const fs_sim *s, double now_s);
  void *observe_ctx;
  /* Called every few thousand batches and at the end. Optional. */
  void (*progress)(void *ctx, const fs_sim_progress *p);
  void *progress_ctx;
  /* Rate flows on every link of their routes. By default a run without
   * timers and without an observer leaves out the links that provably
   * cannot bind (src/sim/prune.c: their load is bounded by the capacities
   * of the links out of the flows' sources or into their destinations):
   * the same rates in exact arithmetic, ~1e-12 relative in floating point. */
  int rate_all_links;
  /* After every batch's incremental re-rating, fill every flow in flight
   * from scratch as well and count in fs_sim_counters.rerate_mismatches
   * the rates (and tcp source-queue shares) that differ by more than 1e-9
   * relative; the run itself is unchanged. For checking the incremental
   * re-rating (src/sim/maxmin.c); costs a full fill per batch. */
  int check_rerate;
  /* Record the bytes each link carries per time bin (fs_sim_get_link_bins):
   * at most this many equal bins over the run, in [0, FS_SIM_MAX_LINK_BINS];
   * 0 (the default) records nothing and costs nothing. Computed exactly
   * from the piecewise-constant rates, on every link of the flows' routes
   * (the links left out of the rating too, which keeps the rating and so
   * the results the same as without bins). Costs links x bins doubles and,
   * per rate change, the route length x the bins the interval spans. */
  int32_t link_bins;
} fs_sim_opts;

#define FS_SIM_MAX_LINK_BINS 65536

/* Runs to completion. Fails with FS_ECYCLE if the dependencies have a cycle
 * (fs_sim_cycle() then lists it), FS_ENOMEM, or FS_EINVAL if run twice. */
int fs_sim_run(fs_sim *s, const fs_sim_opts *opts, fs_err *err);

/* After FS_ECYCLE: writes up to max item ids of one cycle (in dependency
 * order) and returns its length. */
int32_t fs_sim_cycle(const fs_sim *s, int32_t *items, int32_t max);

const fs_topo *fs_sim_topo(const fs_sim *s);

/* ---- results (valid after a successful run) ---- */
int32_t fs_sim_n_items(const fs_sim *s);
fs_item_kind fs_sim_item_kind(const fs_sim *s, int32_t item);
double fs_sim_start_s(const fs_sim *s, int32_t item);  /* when it started */
double fs_sim_finish_s(const fs_sim *s, int32_t item); /* when it finished */
double fs_sim_makespan_s(const fs_sim *s);

typedef struct fs_sim_link_stats {
  double bytes;  /* carried over the run */
  double busy_s; /* time with at least one flow on it */
} fs_sim_link_stats;
/* Array of topo->n_links entries. Under a symmetry (fs_sim_set_symmetry)
 * every link reads what its orbit's representative carried, as in the
 * expanded simulation; the link bins likewise. */
const fs_sim_link_stats *fs_sim_links(const fs_sim *s);
/* How many links the load a flow puts on `link` stands for: 1 without a
 * symmetry; under one, the orbit's size on its representative and 0 on
 * the other links (a quotient route touches representatives only). For
 * summing flows' loads over sets of links. */
double fs_sim_link_multiplicity(const fs_sim *s, int32_t link);

/* Per-link bytes per time bin of a run with opts.link_bins = n > 0: n_bins
 * (in [n/2, n]: the width doubles from 1 ns as the run grows) bins of
 * width_s seconds from t = 0 cover the makespan; link l carried
 * bytes[b * stride + l] in [b * width_s, (b + 1) * width_s) (bin-major:
 * stride is the topology's link count). The bins of a
 * link sum to its fs_sim_links bytes (to rounding). Owned by the
 * simulation. 0, or FS_EINVAL (no bins recorded; *out zeroed). */
typedef struct fs_sim_link_bins {
  int32_t n_bins, stride;
  double width_s;
  const double *bytes;
} fs_sim_link_bins;
int fs_sim_get_link_bins(const fs_sim *s, fs_sim_link_bins *out);

/* The engine's cost of a flow with its route, dependencies and events,
 * measured (docs/performance.md, "The memory a run may use"): what the
 * commands price flows at when they refuse, up front, a run that cannot
 * fit. */
#define FS_SIM_FLOW_BYTES 320.0

typedef struct fs_sim_counters {
  uint64_t events;          /* events processed (stale ones excluded) */
  uint64_t batches;         /* distinct instants */
  uint64_t flows_rerated;   /* sum over batches of the flows re-rated */
  int64_t max_active;       /* most flows in flight at once */
  uint64_t memory_bytes;    /* engine state */
  int64_t links_left_out;   /* links no flow is rated on (they cannot bind) */
  uint64_t rerate_mismatches; /* opts.check_rerate: rates that differed */
  int64_t tcp_records;      /* tcp: per-flow transport records made (each taken
                             * when a flow begins, reused once it is done) */
  int64_t packets;          /* tcp with packet_bytes: packets the flows run as
                             * packets sent (data, handshakes and ACKs) */
} fs_sim_counters;
fs_sim_counters fs_sim_get_counters(const fs_sim *s);

/* After a run: replaces every item's start and finish time (arrays of
 * fs_sim_n_items entries, seconds) and, if busy_s is not NULL, every link's
 * busy time (n_links entries) with those of another backend (the ns-3
 * validation backend, fabricsim/ns3.h); the makespan becomes the latest
 * finish. Link bytes, routes and counters stay. 0, or FS_EINVAL if the
 * simulation has not run (nothing is changed then). */
int fs_sim_replace_times(fs_sim *s, const double *start_s, const double *finish_s,
                         const double *busy_s, fs_err *err);

/* After a run: runs every item again on the packet network of the packet
 * backend (fabricsim/packet.h; docs/model.md, "The packet backend") under
 * tp (tcp: DCTCP; rdma: RoCEv2 under DCQCN), each flow on the path the run
 * gave it, and writes each item's start and finish there (fs_sim_n_items
 * entries, seconds; -1 for an item that never ran, behind a cycle). A flow
 * begins when every item before it is done, so dependencies on bytes sent
 * are taken as done; each flow must be on one path (weights ignored) whose
 * links have reverses for the ACKs: the caller checks both. Deterministic.
 * 0, FS_EINVAL (not run yet; a link without a reverse) or FS_ENOMEM. */
int fs_sim_packet_times(const fs_sim *s, const fs_transport *tp, double *start_s,
                        double *finish_s);

/* ---- control during a run: timers, failures, re-routing ----
 *
 * A timer calls fn(ctx, s, now, err) when the clock reaches at_s (or now,
 * if at_s has passed), in the batch of that instant; the callback may change
 * link capacities, re-route flows and add further timers. Returning a
 * negative FS_E* code (with err set) aborts the run with that error. Timers
 * are not items: they neither count as work nor keep a finished simulation
 * alive, except that a pending timer runs even when nothing else is left. */
typedef int (*fs_sim_timer_fn)(void *ctx, fs_sim *s, double now_s, fs_err *err);
/* Before or during the run. 0, FS_EINVAL (no fn, at_s negative or not
 * finite) or FS_ENOMEM. */
int fs_sim_add_timer(fs_sim *s, double at_s, fs_sim_timer_fn fn, void *ctx, fs_err *err);
/* A route chooser: called as each flow's dependencies and start time are
 * met, before it takes its links; sets *route to the route it starts on
 * (copied at once) or leaves it NULL to keep its own, and returns 0 or a
 * negative FS_E* code (which ends the run). For a controller whose choice
 * depends on the network's state when the flow starts (ocsctl.h). One per
 * simulation, set before the run: 0, or FS_EINVAL (none given, or one set
 * already). Not for plan instances (they are not the run's items). */
typedef int (*fs_sim_route_fn)(void *ctx, const fs_sim *s, int32_t item, const fs_route **route);
int fs_sim_set_route_hook(fs_sim *s, fs_sim_route_fn fn, void *ctx, fs_err *err);
/* 1 if nothing but timers is pending: no flow can drain, no task end, no
 * start come (a periodic controller stops re-arming then). */
int fs_sim_idle(const fs_sim *s);

/* Sets a directed link's capacity from now on (0 = failed: its flows stall
 * at rate 0 until re-routed). Only during a run. 0 or FS_EINVAL. */
int fs_sim_set_link_capacity(fs_sim *s, int32_t link, double bps, fs_err *err);
/* The capacity in force (the topology's before the run). */
double fs_sim_link_capacity_bps(const fs_sim *s, int32_t link);

/* Gives a flow a new route (copied). Not started yet: it will start on it.
 * In flight: its bytes sent so far stay charged to the old links; it
 * carries nothing for hold_s (the reconfiguration: forwarding state being
 * rewritten) and then continues with its remaining bytes on the new route.
 * Already drained or finished: nothing changes. Returns 1 if the flow was
 * in flight (and so waits out the hold), 0 otherwise, or FS_EINVAL (not a
 * flow, bad route or hold) or FS_ENOMEM. */
int fs_sim_reroute(fs_sim *s, int32_t item, const fs_route *route, double hold_s,
                   fs_err *err);

/* Flows (bytes > 0) in the order they started, so far; a controller reads
 * the ones it has not seen yet. */
int32_t fs_sim_n_started(const fs_sim *s);
int32_t fs_sim_started_flow(const fs_sim *s, int32_t i); /* item id */
void fs_sim_flow_ends(const fs_sim *s, int32_t item, int32_t *src, int32_t *dst);
int fs_sim_item_finished(const fs_sim *s, int32_t item);
/* The time of the last event processed (never a superseded prediction). */
double fs_sim_now_s(const fs_sim *s);

/* ---- state accessors (for observers and after the run) ---- */
int32_t fs_sim_n_active(const fs_sim *s);
int32_t fs_sim_active_flow(const fs_sim *s, int32_t i); /* item id */
double fs_sim_flow_rate_bps(const fs_sim *s, int32_t item);
double fs_sim_flow_bytes(const fs_sim *s, int32_t item); /* as added (payload) */
void fs_sim_flow_route(const fs_sim *s, int32_t item, const int32_t **links,
                       const double **weights, int32_t *n);

/* ---- the DAG as built (before or after a run; for tools that copy or
 * transform a lowering, e.g. the training module's symmetry quotient) ---- */
int64_t fs_sim_n_deps(const fs_sim *s);
/* Dependency i (0 .. n_deps-1, in the order added): sent = 1 for
 * fs_sim_add_dep_sent. */
void fs_sim_dep(const fs_sim *s, int64_t i, int32_t *before, int32_t *after, int *sent);
void fs_sim_task_info(const fs_sim *s, int32_t item, int32_t *host, double *duration_s);

#ifdef __cplusplus
}
#endif

#endif
