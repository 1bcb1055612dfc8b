/* The engine's private state, the core API its rooms share (engine.c,
 * graph.c, control.c and the transport models: tcp.c, portq.c, ratectl.c,
 * hybrid.c) and the transport-model interface (fs__model: a table of hooks;
 * ratectl.c and hybrid.c are behind it, tcp.c and portq.c are still called
 * by the core directly where their branches are).
 *
 * struct fs_sim holds the core (the flows and links of fs__simcore, the
 * event queue, the dependency graph) and the state of the models in use;
 * a model's per-flow arrays exist only when it is on (NULL otherwise), so
 * a fluid run pays nothing for them. Event types are one enum: the core's
 * (start, drain, done, timers, re-entry) and the models'. Functions named
 * fs__ here cross files of sim/ only; small ones used on hot paths are
 * static inline so that every room inlines them as engine.c did. */
#ifndef FABRICSIM_SIM_MODEL_H
#define FABRICSIM_SIM_MODEL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "pktnet.h"

/* The core's event types. A flow's drain prediction and its re-entry carry
 * its version (superseded: dead). EV_WINDOW: under tcp slow start the
 * prediction stops at the end of its window's bytes, not its drain (the
 * window's budget is read where the drain is predicted, on every rate
 * change: a hook there would cost an indirect call per flow re-rated);
 * EV_REENTER: a flow off its links (re-routed and held, or a tcp round
 * waiting for its ACK) comes back. The models' own types follow. */
enum {
  EV_START = 0,
  EV_DRAIN = 1,
  EV_FLOW_DONE = 2,
  EV_TASK_DONE = 3,
  EV_TIMER = 4,
  EV_REENTER = 5,
  EV_WINDOW = 6,
  EV_MODEL = 7,   /* the first of the types the models behind hooks own (fs__model) */
  EV_MAX = 32      /* room for their types */
};

enum { ST_WAIT = 0, ST_READY, ST_RUN, ST_DONE };

enum { DEP_DONE = 0, DEP_SENT = 1 };

/* Event queue (see "event queue" below): a run of same-time events is one
 * heap entry: t, seq of its head, a = the head's index in pl, b = events
 * left. */
typedef fs__heap_ent evrun;

typedef struct evpl {
  int32_t item;
  uint32_t version;
  int32_t type;
} evpl;

typedef struct evq {
  fs__heap runs; /* 4-ary, on (t, seq of the head) */
  evrun open; /* newest run, n may be 0 */
  evpl *pl;
  size_t pl_len, pl_cap;
  size_t count; /* events queued, dead ones included */
  size_t stale; /* of which dead: superseded drains and re-entries */
  uint64_t next_seq;
} evq;

typedef struct sim_item {
  uint8_t kind, state;
  int32_t idx;          /* flow index or task index */
  int32_t deps_left;
  int64_t start_ns;
  double start_s, finish_s;
} sim_item;

typedef struct task {
  int32_t host;
  double duration_s;
} task;

typedef struct timer {
  fs_sim_timer_fn fn;
  void *ctx;
} timer;

/* A flow on a quotient route (symm.h): the route its packets take (one of
 * the flows it stands for) and how many flows it stands for. */
typedef struct fs__fpath {
  const int32_t *links;
  const double *w;
  int32_t n;
  double orbit;
} fs__fpath;

/* What a new connection's route fixes (fs__transport_flow), kept per flow
 * until its tcp record is taken (fs__tflow's fields of these names). */
typedef struct fs__tconn {
  double handshake_s, bdp, first;
} fs__tconn;

/* ---- the transport-model interface ----
 * A transport model behind hooks is a room of its own: a file with its
 * state in a struct of its own (st), set up only for the runs that use it,
 * and this table, listed once in control.c (fs__models). The core calls the
 * hooks of each model in use, in the order of that list, at the points
 * below; a NULL hook has nothing to do there. The order is part of the
 * models: where two act at one point the first listed goes first (the
 * packets beside the fluid read a link's load before a tcp window joining
 * its source queue adds to it; the port queues let a flow go before its
 * ghost is left at its ports). Hooks return 0 or a negative
 * FS_E* code unless said otherwise. A model owns n_events event types,
 * numbered from its slot's ev_base (a push of the core API:
 * fs__evq_push); their payload (item, version) is its own.
 *
 * Models in use may read each other's state where one refines another
 * (DCTCP's windows are the tcp model's rounds; the port queues read the
 * rate control's queues): such reads go through fs_sim's pointers to the
 * models' state (s->dq, s->tcp, the port queues' arrays), NULL when that
 * model is off. */
struct fs__mslot;
typedef struct fs__model {
  const char *name;
  int32_t n_events;
  /* Before the first event, once the routes' transport state is set
   * (control.c, transport_setup): 1 if the model takes part in this run
   * (slot->st set), 0 if not, or FS_ENOMEM. */
  int (*setup)(fs_sim *s, struct fs__mslot *slot);
  void (*free)(fs_sim *s, void *st);
  /* Every link may queue: none is left out of the rating (prune.c). */
  int (*all_links)(const fs_sim *s, const void *st);
  /* Flow fi's dependencies are met: 1 if the model runs it itself (the
   * fluid never sees it), else 0. */
  int (*flow_begin)(fs_sim *s, void *st, int32_t fi);
  /* Flow fi sends its first byte in the fluid. */
  int (*flow_start)(fs_sim *s, void *st, int32_t fi);
  /* Flow fi came onto its links (its place in their active lists and its
   * tcp record's times are set, its rate is 0) / is about to leave them
   * (still on them, at its rate). */
  int (*flow_on)(fs_sim *s, void *st, int32_t fi);
  int (*flow_off)(fs_sim *s, void *st, int32_t fi);
  /* Flow fi drained its bytes: 1 if the model gives it more to send (the
   * core re-predicts its drain), else 0. */
  int (*owed)(fs_sim *s, void *st, int32_t fi);
  /* Flow fi's sender is done (it left its links); `tail`: its last
   * packet's wait behind the one before it. 1 if the model schedules its
   * EV_FLOW_DONE, 0 if the core does (a path latency + tail later). */
  int (*sent)(fs_sim *s, void *st, int32_t fi, double tail);
  /* Flow fi is done. */
  void (*flow_done)(fs_sim *s, void *st, int32_t fi);
  /* One of its events (type - ev_base = which). */
  int (*event)(fs_sim *s, void *st, int32_t which, const fs__event *e);
  /* Whether a queued event of its own is still live (cheap: it is asked
   * as events are popped and when the queue is squeezed). */
  int (*ev_live)(const fs_sim *s, const void *st, int32_t which, int32_t item,
                 uint32_t version);
  /* A clock of its own: when its next event is (INFINITY: none), and runs
   * its events of that time. At a tie with the core's events they go
   * first (what they finish joins the batch). */
  double (*next_t)(const void *st);
  int (*step)(fs_sim *s, void *st);
  /* The batch is over, before the re-rating. */
  int (*batch)(fs_sim *s, void *st);
  /* Rates the flows of the batch instead of max-min (the first model with
   * this hook does; it resets the batch's dirty links, as the core does
   * after max-min). */
  int (*rerate)(fs_sim *s, void *st);
  /* Link l's capacity changed / flow fi (off its links) took a new route. */
  void (*capacity)(fs_sim *s, void *st, int32_t l);
  void (*rerouted)(fs_sim *s, void *st, int32_t fi);
  /* Max-min's fill is done (s->mm), before its rates are the flows'. */
  int (*filled)(fs_sim *s, void *st);
  /* After max-min's rates are the flows' (their loads final). */
  int (*rerated)(fs_sim *s, void *st);
  /* Where the pruning of the rating (prune.c) is to say, per link, whether
   * it may bind: NULL if the model does not want it. */
  uint8_t **(*bind_map)(fs_sim *s, void *st);
  /* What it counted, into *c (fs_sim_get_counters). */
  void (*counters)(const fs_sim *s, const void *st, fs_sim_counters *c);
} fs__model;

/* A model in use in a run. */
typedef struct fs__mslot {
  const fs__model *m;
  void *st;
  int32_t ev_base;
} fs__mslot;

/* The models behind hooks, in the order the core calls them (control.c). */
extern const fs__model *const fs__models[];
#define FS__MAX_MODELS 8
extern const fs__model fs__model_ratectl, fs__model_portq, fs__model_hybrid, fs__model_tcp;

struct fs_sim {
  fs__simcore core;
  fs__arena arena;
  sim_item *items;
  size_t n_items, items_cap;
  task *tasks;
  size_t n_tasks, tasks_cap;
  size_t flows_cap;
  int32_t (*edges)[3]; /* before, after, kind (DEP_DONE or DEP_SENT) */
  size_t n_edges, edges_cap;
  int32_t *dep_start, *dep_list; /* dependents of item i, as after*2 + kind */
  int32_t *active_list; /* flows in flight */
  int32_t n_active;
  int32_t *started;     /* flow items in the order they started */
  int32_t n_started;
  fs_sim_route_fn route_hook; /* chooses a starting flow's route, or NULL */
  void *route_ctx;
  timer *timers;
  size_t n_timers, timers_cap, timers_pending;
  fs_err timer_err;     /* what a failing timer callback said */
  int32_t *cycle;
  int32_t cycle_len;
  evq heap;
  fs__maxmin mm;
  fs_sim_link_stats *link_stats;
  fs__bins bins;        /* per-link bytes per time bin; off unless opts.link_bins */
  fs_sim_counters counters;
  fs_transport tp;      /* fluid unless set */
  /* tcp state of the flows under way (tcp, unless persistent under the
   * DCTCP model): a pool of chunks, a flow's record taken when it begins
   * and given back once it is done, so memory follows the flows in flight
   * and not all of an iteration's; what its route fixes is kept per flow
   * from the start (tf_rtt, tf_conn) */
  fs__pool tf_pool;     /* of fs__tflow */
  int32_t *tf_slot;     /* per flow: its record, -1 none (NULL: no tcp state) */
  int32_t *tf_done, n_tf_done; /* flows done this batch: theirs go back after it */
  size_t tf_done_cap;
  double *tf_rtt;       /* per flow: its round trip (fs__tflow.rtt_s) */
  fs__tconn *tf_conn;   /* per flow, new connections: handshake, bdp, first */
  double *payload;      /* per flow, tcp and rdma: its bytes as added */
  double *tail_reach;   /* per flow, tcp and rdma: how close behind the packet
                         * before it its last packet waits at a switch
                         * (fs__transport_tail_reach_s); NULL: none ever waits */
  double *tail_rate;    /* per flow, with tail_reach and efficiency < 1: the
                         * rate its bytes were last sent at (a capacity change
                         * at the instant its last byte leaves re-rates it
                         * before it drains; nothing else does) */
  uint8_t *small;       /* per flow, tcp: it fits the first flight (source FIFO) */
  int32_t *fifo_nx;     /* per flow, tcp: the next small flow queued behind it */
  int32_t *fifo_head, *fifo_tail, *src_busy; /* per node: the source FIFO of small flows */
  double *cap_base;     /* per link, efficiency < 1 only: capacity before it */
  double *lcount;       /* then, under a symmetry: flows on each link of its
                         * orbit (quotient flows stand for several) */
  int32_t *share_pend;  /* then: links whose flows came or went in this batch
                         * (share_apply sets their capacities at its end) */
  size_t n_share_pend, share_pend_cap;
  uint8_t *share_marked; /* per link: in share_pend */
  fs__portq *portq;     /* per link, tcp with new connections and queue_k > 0
                         * only: what is queued at it (switch ports) */
  uint8_t *can_bind;    /* per link, with portq and no timers: 0 if it cannot
                         * bind (prune.c), so it never queues */
  struct fs__tcp *tcp;  /* the tcp model's own state (tcp.c), NULL when off */
  double *host_flows;   /* per link, with portq: flows in flight on it, for
                         * the links leaving hosts (host_count); portq,
                         * can_bind and host_flows are the port-queue
                         * model's (portq.c sets them up and frees them),
                         * read by the tcp model and the packets too */
  fs__fpath *paths;     /* per flow, NULL until a flow with a quotient route
                         * is added: the route its packets take */
  size_t paths_cap;
  int32_t *lrep;        /* per link, fs_sim_set_symmetry: its orbit's representative */
  double *lorb;         /* ... and the orbit's size */
  fs__mslot model[FS__MAX_MODELS]; /* the models behind hooks in use */
  int32_t n_model;
  int8_t ev_owner[EV_MAX]; /* per event type: its model's slot, -1 the core's */
  const fs__mslot *rater; /* the model that rates flows instead of max-min, NULL */
  fs__dcqcn *dq;        /* rdma with DCQCN, tcp with DCTCP: the rate control's
                         * state (ratectl.c owns it), read by the tcp model
                         * and the port queues; NULL when off */
  double now, makespan;
  int64_t items_done;
  int ran;
  int check_rerate;     /* opts.check_rerate */
  fs__maxmin mm_check;  /* its own scratch: the run's is left as it was */
  fs__lazy lazy;        /* plan instances and the items they make (lazy.c) */
};

/* The route flow fi's packets take: a quotient flow's expanded route
 * (symm.h), else its route as added (a pruned flow's whole route). The
 * transport model reads hops and queues there. */
typedef struct pkt_route {
  const int32_t *links;
  const double *w;
  int32_t n;
} pkt_route;

/* Flow fi's tcp record (it has begun and is not given back). */
static inline fs__tflow *TF(const fs_sim *s, int32_t fi) {
  return fs__pool_at(&s->tf_pool, s->tf_slot[fi]);
}

/* A full packet's bytes on the wire (a segment and its headers). */
static inline double full_packet(const fs_sim *s) { return s->tp.mss_bytes + s->tp.header_bytes; }

/* The flow's queued event (if any) is superseded: it becomes dead. */
static inline void supersede(fs_sim *s, fs__flow *f) {
  if (f->pending) {
    f->pending = 0;
    s->heap.stale++;
  }
  f->version++;
}

/* Each link enters the batch's dirty list once: a link touched by many
 * arrivals or departures would otherwise be scanned once per touch (the
 * first batch of a 65 k-flow all-to-all listed each host link ~255 times). */
static inline void mark_dirty(fs_sim *s, int32_t l) {
  fs__simcore *c = &s->core;
  if (!c->is_dirty[l]) {
    c->is_dirty[l] = 1;
    c->dirty_links[c->n_dirty++] = l;
  }
}

/* Whether `load` fills a port of capacity `cap`, up to the fill's
 * rounding (relative 1e-9, as the re-rating checks its rates). */
static inline int fills(double load, double cap) { return load >= cap * (1 - 1e-9); }

/* Whether link l's fluid flows fill it. */
static inline int link_full(const fs__simcore *c, int32_t l) {
  return fills(c->load[l], c->cap_Bps[l]);
}

/* A flow at rate x leaves its links: flows slower than x keep their rates
 * (maxmin.c). Rate 0 took nothing from anyone. */
static inline void note_leaver(fs__simcore *c, double x) {
  if (x > 0 && x < c->theta) c->theta = x;
}

/* rdma under DCQCN, tcp under DCTCP: rates are the senders', not max-min
 * (dcqcn.c). */
static inline int dcqcn(const fs_sim *s) { return s->tp.dcqcn && s->tp.kind != FS_TRANSPORT_FLUID; }

/* ---- the core (engine.c) ---- */
int fs__evq_compact(fs_sim *s);
int fs__evq_push(fs_sim *s, double t, int32_t type, int32_t item, uint32_t version);
int fs__flow_link(fs_sim *s, int32_t fi);
void fs__flow_counted(fs_sim *s, int32_t fi);
int fs__flow_starts(fs_sim *s, int32_t fi);
int fs__release(fs_sim *s, int32_t id, int32_t kind);
int fs__item_ready(fs_sim *s, int32_t id);
/* Lazy lowering (lazy.c). An item id at or past s->n_items is one an
 * instance made. */
static inline int fs__lazy_item(const fs_sim *s, int32_t id) { return (size_t)id >= s->n_items; }
/* Instance i's start finished: its items without other dependencies are
 * made (in the order the plan gives them). */
int fs__lazy_begin(fs_sim *s, int32_t i);
/* Releases the dependents of made item id waiting on kind; once it is
 * done (finished 1), gives it back. */
int fs__lazy_release(fs_sim *s, int32_t id, int32_t kind, int finished);
/* Before the run: checks the run may have instances, sizes their state. */
int fs__lazy_setup(fs_sim *s, fs_err *err);
/* After it: charges to the links the bytes of the flows of the instances
 * placed before flow fi (from *next on), as added flows are charged in
 * their order. */
void fs__lazy_charge(fs_sim *s, size_t *next, int32_t fi);
void fs__lazy_free(fs_sim *s);
int fs__flow_enter(fs_sim *s, int32_t fi);
/* The route hook's choice for flow item `item` as it begins (control.c). */
int fs__route_hook(fs_sim *s, int32_t item);
int fs__flow_unlink(fs_sim *s, int32_t fi);
void fs__settle(fs_sim *s, fs__flow *f);
void fs__charge(fs_sim *s, fs__flow *f);
int fs__predict(fs_sim *s, fs__flow *f);

/* ---- the graph and what a run reports (graph.c) ---- */
int fs__copy_route(fs_sim *s, fs__flow *f, const fs_route *route);
int32_t fs__bad_entry(const fs_topo *t, const fs_route *route);
/* s->paths with an entry (zero if none) for every flow slot (flows_cap). */
int fs__paths_reserve(fs_sim *s);
int fs__build_deps(fs_sim *s);
int fs__check_acyclic(fs_sim *s, fs_err *err);

/* ---- set-up of the transport and control during a run (control.c) ---- */
void fs__capacity_changed(fs_sim *s, int32_t link, double Bps);
int fs__transport_setup(fs_sim *s);

/* ---- DCQCN/DCTCP rate control, the engine side (ratectl.c) ---- */
int fs__dq_port_full(const fs_sim *s, int32_t l);
int fs__dq_fills_from_upstream(fs_sim *s, int32_t l);

/* ---- the tcp model (tcp.c) ---- */
double fs__srcq_clock(const fs_sim *s, int32_t l);
int fs__srcq_waiting(const fs_sim *s, int32_t fi);
int fs__reenter_at(fs_sim *s, fs__flow *f, double t);
int fs__round_begins(fs_sim *s, int32_t fi);
int fs__link_shared(const fs_sim *s, int32_t l);
int fs__share_note(fs_sim *s, int32_t fi, int32_t k, double sign);
void fs__share_apply(fs_sim *s);
int fs__fifo_next(fs_sim *s, int32_t fi);
void fs__tf_release_done(fs_sim *s);
int fs__window_sent(fs_sim *s, int32_t fi);

/* ---- switch port queues (portq.c) ---- */
pkt_route fs__packet_route(const fs_sim *s, int32_t fi);
double fs__tail_wait(const fs_sim *s, int32_t fi);
int32_t fs__sim_link(const fs_sim *s, int32_t fi, int32_t l);
void fs__standing_advance(fs_sim *s, int32_t l);
double fs__window_pkts(const fs_sim *s, int32_t fi, pkt_route p);
void fs__q_advance(fs_sim *s, int32_t l);
double fs__arrival_Bps(const fs_sim *s, int32_t fi);
double fs__port_reach_s(const fs_sim *s, pkt_route p, int32_t k);
double fs__link_reach_s(const fs_sim *s, int32_t fi, pkt_route p, int32_t l);
double fs__queue_share(const fs_sim *s, int32_t fi, pkt_route p, int32_t k);
double fs__sent_since(const fs_sim *s, const fs__flow *f);
void fs__q_update(fs_sim *s, int32_t fi);
double fs__standing_bytes(fs_sim *s, int32_t l);
double fs__port_queue_s(fs_sim *s, int32_t l);
double fs__route_queue_s(fs_sim *s, int32_t fi);
double fs__entry_wait_s(fs_sim *s, int32_t fi);
double fs__ack_wait_s(fs_sim *s, int32_t fi);


#endif
