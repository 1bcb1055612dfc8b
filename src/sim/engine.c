/* The event loop of the fluid engine: the DAG of flows and tasks, batches of
 * simultaneous events, and incremental re-rating (see sim.h).
 *
 * Events are popped in (time, push sequence) order from a heap of runs of
 * same-time events (one heap operation per run, not per event). A flow's drain
 * prediction carries the flow's version; when its rate changes the version
 * bumps and the old event is dead: skipped without moving the clock, and
 * squeezed out of the queue once dead entries outnumber live ones, so the
 * queue follows the events pending, not the re-ratings. Between batches rates are
 * constant, so a flow's bytes left are settled lazily: only when its rate is
 * about to change. Expected sizes: 10^5..10^7 flows, routes of 2..200 links. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "pktnet.h"

/* EV_ENTER: a flow's handshake is over; EV_WINDOW: it sent its window's
 * bytes (tcp slow start); EV_SRC_OUT: the first waiting window of a source
 * link (the event's item) is out of its fair queue. */
enum {
  EV_START = 0,
  EV_DRAIN = 1,
  EV_FLOW_DONE = 2,
  EV_TASK_DONE = 3,
  EV_TIMER = 4,
  EV_REENTER = 5,
  EV_ENTER = 6,
  EV_WINDOW = 7,
  EV_SRC_OUT = 8,
  EV_ACK = 9, /* a new connection's SYN-ACK or a round's first ACK leaves the receiver */
  EV_CC = 10,  /* rdma with DCQCN: the rate control steps (dcqcn.c) */
  EV_TAIL = 11, /* rdma with DCQCN: a flow's last byte is out of a port's queue */
  EV_PKT_SENT = 12, /* tcp: a flow run as packets has its last byte out of its host */
  EV_CLOCKED = 13   /* tcp: a slow-start round's first ACK is back before its window is out */
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

static void evq_free(evq *q) {
  fs__heap_free(&q->runs);
  free(q->pl);
  memset(q, 0, sizeof(*q));
  fs__heap_init(&q->runs, 2, NULL);
}

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

/* tcp source fair queue, per link: the virtual clock (bytes each waiting
 * window has sent, v as of t, rising at src_y) and a min-heap of the
 * waiting flows on (tag, flow index), a = the flow (binary: the re-rating
 * walks it in array order, and kept the order it had); its EV_SRC_OUT
 * carries `version`. */
typedef struct srcq {
  double v, t;
  fs__heap h;
  uint32_t version;
  uint8_t pending;
} srcq;

typedef struct timer {
  fs_sim_timer_fn fn;
  void *ctx;
} timer;

/* A flow that left its links (its window out, or done) whose fluid still
 * passes link l until `until` (tcp model with flows as packets: its last
 * bytes left its source when it left, and reach l the hops before l
 * later): at `rate` x its weight there, its round trip rtt. */
typedef struct ghost {
  int32_t flow;
  double until, rate, rtt;
} ghost;

typedef struct fs__ghosts {
  ghost *g;
  int32_t n, cap;
} fs__ghosts;

/* A change of host_flows waiting for the batch's end: link's count moves
 * by delta; link -1: flow's `hcounted` becomes delta > 0. */
typedef struct hc_change {
  int32_t link, flow;
  double delta;
} hc_change;

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
  srcq *srcq;           /* per link, tcp with source_fq only */
  int32_t *src_hpos;    /* then, per flow: its slot in its source link's heap, -1 */
  double *host_flows;   /* per link, with portq: flows in flight on it, for
                         * the links leaving hosts (host_count) */
  hc_change *hc_pending; /* changes to it since the last re-rating */
  size_t n_hc, hc_cap;
  fs__fpath *paths;     /* per flow, NULL until a flow with a quotient route
                         * is added: the route its packets take */
  size_t paths_cap;
  int32_t *lrep;        /* per link, fs_sim_set_symmetry: its orbit's representative */
  double *lorb;         /* ... and the orbit's size */
  fs__dcqcn *dq;        /* rdma with DCQCN, tcp with DCTCP: the rate control */
  fs__pktnet *pk;       /* tcp with packet_bytes > 0: the flows run as packets */
  uint8_t *as_pkt;      /* per flow then: 1 if it runs in pk (not in the fluid) */
  fs__ghosts *ghost;    /* per link then (tcp model): flows whose fluid is still
                         * passing it after they left their links (pk_fluid) */
  double *pk_owed;      /* per flow then: bytes the packets took from it at
                         * its bottleneck, added to what it has left when it
                         * would drain */
  uint32_t cc_version;  /* its step event that is live */
  double pending_cc_t;  /* when the live step event is (INFINITY: none) */
  uint8_t cc_due;       /* a step event came in this batch */
  uint8_t cc_changed;   /* flows came or went since the last step */
  uint8_t cc_offers;    /* offers changed in this batch: 1 those of dq->upd
                         * (re-rated NICs), 2 any flow's (a step) */
  double now, makespan;
  int64_t items_done;
  int ran;
  int check_rerate;     /* opts.check_rerate */
  fs__maxmin mm_check;  /* its own scratch: the run's is left as it was */
};

/* Flow fi's tcp record (it has begun and is not given back). */
static inline fs__tflow *TF(const fs_sim *s, int32_t fi) {
  return fs__pool_at(&s->tf_pool, s->tf_slot[fi]);
}

/* A full packet's bytes on the wire (a segment and its headers). */
static double full_packet(const fs_sim *s) { return s->tp.mss_bytes + s->tp.header_bytes; }

int fs_sim_new(const fs_topo *t, fs_sim **out, fs_err *err) {
  fs_sim *s = calloc(1, sizeof(*s));
  if (!s) return fs_err_set(err, FS_ENOMEM, "out of memory creating simulation");
  s->core.t = t;
  fs__arena_init(&s->arena);
  fs__pool_init(&s->tf_pool, sizeof(fs__tflow));
  evq_free(&s->heap); /* (an empty queue) */
  fs_transport_defaults(FS_TRANSPORT_FLUID, &s->tp);
  *out = s;
  return 0;
}

void fs_sim_free(fs_sim *s) {
  if (!s) return;
  if (s->core.active)
    for (int32_t l = 0; l < s->core.t->n_links; l++) {
      free(s->core.active[l].flow);
      free(s->core.active[l].slot);
    }
  free(s->core.active);
  free(s->core.flows);
  free(s->core.pos);
  free(s->core.pos_free);
  free(s->core.proutes);
  free(s->core.busy_routes);
  fs__pool_free(&s->tf_pool);
  free(s->tf_slot);
  free(s->tf_done);
  free(s->tf_rtt);
  free(s->tf_conn);
  free(s->payload);
  free(s->tail_reach);
  free(s->tail_rate);
  free(s->small);
  free(s->fifo_nx);
  free(s->paths);
  free(s->lrep);
  free(s->lorb);
  free(s->portq);
  free(s->host_flows);
  free(s->hc_pending);
  free(s->can_bind);
  free(s->fifo_head);
  free(s->fifo_tail);
  free(s->src_busy);
  free(s->cap_base);
  free(s->lcount);
  free(s->share_pend);
  free(s->share_marked);
  free(s->core.cap_Bps);
  free(s->core.dirty_links);
  free(s->core.is_dirty);
  free(s->core.load);
  free(s->core.gone_load);
  free(s->core.gone_max);
  free(s->core.arrived);
  free(s->core.src_phase);
  free(s->core.src_w);
  free(s->core.src_y);
  if (s->dq) fs__dcqcn_free(s->dq);
  free(s->dq);
  fs__pktnet_free(s->pk);
  free(s->as_pkt);
  free(s->pk_owed);
  if (s->ghost)
    for (int32_t l = 0; l < s->core.t->n_links; l++) free(s->ghost[l].g);
  free(s->ghost);
  if (s->srcq)
    for (int32_t l = 0; l < s->core.t->n_links; l++) fs__heap_free(&s->srcq[l].h);
  free(s->srcq);
  free(s->src_hpos);
  free(s->items);
  free(s->tasks);
  free(s->edges);
  free(s->dep_start);
  free(s->dep_list);
  free(s->active_list);
  free(s->started);
  free(s->timers);
  free(s->cycle);
  free(s->link_stats);
  fs__bins_free(&s->bins);
  evq_free(&s->heap);
  fs__maxmin_free(&s->mm);
  fs__maxmin_free(&s->mm_check);
  fs__arena_free(&s->arena);
  free(s);
}

/* A block of n entries of the position pool (flows in flight only, so the
 * pool follows the route entries in flight, not the iteration's): reused
 * from the free list of its size, else appended. Offset or FS_ENOMEM. */
static int64_t pos_alloc(fs__simcore *c, int32_t n) {
  if (n < c->pos_free_cap && c->pos_free[n] >= 0) {
    int32_t off = c->pos_free[n];
    c->pos_free[n] = c->pos[off]; /* a free block's first entry links the next */
    return off;
  }
  size_t off = c->pos_len;
  /* a block of size 1 has room for its link; size 0 never comes (n >= 1) */
  if (off + (size_t)n > INT32_MAX || fs__grow(&c->pos, &c->pos_cap, off + (size_t)n, sizeof(int32_t)))
    return FS_ENOMEM;
  c->pos_len = off + (size_t)n;
  return (int64_t)off;
}

static int pos_release(fs__simcore *c, int32_t off, int32_t n) {
  if (n >= c->pos_free_cap) {
    int32_t ncap = c->pos_free_cap ? c->pos_free_cap : 16;
    while (ncap <= n) ncap *= 2;
    int32_t *nf = realloc(c->pos_free, (size_t)ncap * sizeof(int32_t));
    if (!nf) return FS_ENOMEM;
    for (int32_t i = c->pos_free_cap; i < ncap; i++) nf[i] = -1;
    c->pos_free = nf;
    c->pos_free_cap = ncap;
  }
  c->pos[off] = c->pos_free[n];
  c->pos_free[n] = off;
  return 0;
}

/* A copy of a route's arrays in the arena (stable for the run). */
static int arena_route(fs_sim *s, const fs_route *route, const int32_t **links,
                       const double **w) {
  int32_t *l = fs__arena_alloc(&s->arena, (size_t)route->n, sizeof(int32_t));
  double *x = fs__arena_alloc(&s->arena, (size_t)route->n, sizeof(double));
  if (!l || !x) return FS_ENOMEM;
  memcpy(l, route->links, (size_t)route->n * sizeof(int32_t));
  memcpy(x, route->weights, (size_t)route->n * sizeof(double));
  *links = l;
  *w = x;
  return 0;
}

static int copy_route(fs_sim *s, fs__flow *f, const fs_route *route) {
  if (arena_route(s, route, &f->links, &f->w)) return FS_ENOMEM;
  f->owned_cap = route->n;
  return 0;
}

static int32_t new_item(fs_sim *s, uint8_t kind, int32_t idx, int64_t start_ns,
                        fs_err *err) {
  if (s->ran) return fs_err_set(err, FS_EINVAL, "simulation already ran");
  if (s->n_items >= INT32_MAX ||
      fs__grow(&s->items, &s->items_cap, s->n_items + 1, sizeof(*s->items)))
    return fs_err_set(err, FS_ENOMEM, "out of memory adding item");
  s->items[s->n_items] = (sim_item){kind, ST_WAIT, idx, 0, start_ns, NAN, NAN};
  return (int32_t)s->n_items++;
}

/* Flow fi's route is a quotient: keeps the route its packets take (the
 * expanded one, borrowed or copied as the flow's own route) and its orbit. */
static int add_path(fs_sim *s, size_t fi, const fs_route *route, int borrow) {
  const fs_route *x = route->expanded;
  if (s->paths_cap < s->flows_cap) { /* every flow has an entry, zero if none */
    fs__fpath *np = realloc(s->paths, s->flows_cap * sizeof(*np));
    if (!np) return FS_ENOMEM;
    memset(np + s->paths_cap, 0, (s->flows_cap - s->paths_cap) * sizeof(*np));
    s->paths = np;
    s->paths_cap = s->flows_cap;
  }
  if (!x) return 0;
  fs__fpath *p = &s->paths[fi];
  p->n = x->n;
  p->orbit = route->flow_orbit > 0 ? (double)route->flow_orbit : 1;
  if (!borrow) return arena_route(s, x, &p->links, &p->w);
  p->links = x->links;
  p->w = x->weights;
  return 0;
}

/* The first entry of a route whose link is out of range or whose weight is
 * not finite and > 0; -1 if none. */
static int32_t bad_entry(const fs_topo *t, const fs_route *route) {
  for (int32_t k = 0; k < route->n; k++)
    if (route->links[k] < 0 || route->links[k] >= t->n_links ||
        !(route->weights[k] > 0 && isfinite(route->weights[k])))
      return k;
  return -1;
}

static int32_t add_flow(fs_sim *s, int32_t src, int32_t dst, double bytes, int64_t start_ns,
                        const fs_route *route, int borrow, fs_err *err) {
  fs__simcore *c = &s->core;
  int rc;
  if (!(bytes >= 0) || !isfinite(bytes))
    return fs_err_set(err, FS_EINVAL, "flow bytes must be finite and >= 0, got %g", bytes);
  if (start_ns < 0)
    return fs_err_set(err, FS_EINVAL, "flow start must be >= 0 ns, got %lld",
                      (long long)start_ns);
  if (src < 0 || src >= c->t->n_nodes || dst < 0 || dst >= c->t->n_nodes || src == dst)
    return fs_err_set(err, FS_EINVAL, "flow endpoints %d -> %d invalid", src, dst);
  if (!route || route->n < 1)
    return fs_err_set(err, FS_EINVAL, "flow %d -> %d has an empty route", src, dst);
  int32_t bad = bad_entry(c->t, route);
  if (bad >= 0)
    return fs_err_set(err, FS_EINVAL, "flow %d -> %d: bad route entry %d", src, dst, bad);
  if (route->expanded && (bad = bad_entry(c->t, route->expanded)) >= 0)
    return fs_err_set(err, FS_EINVAL, "flow %d -> %d: bad expanded route entry %d", src, dst,
                      bad);
  size_t nflows = (size_t)c->n_flows;
  if (fs__grow(&c->flows, &s->flows_cap, nflows + 1, sizeof(*c->flows)))
    return fs_err_set(err, FS_ENOMEM, "out of memory adding flow");
  fs__flow *f = &c->flows[nflows];
  memset(f, 0, sizeof(*f));
  if (borrow) {
    f->links = route->links;
    f->w = route->weights;
  } else if (copy_route(s, f, route)) {
    return fs_err_set(err, FS_ENOMEM, "out of memory adding flow");
  }
  int32_t id = new_item(s, FS_ITEM_FLOW, c->n_flows, start_ns, err);
  if (id < 0) return id;
  c->n_flows++;
  f->item = id;
  f->src = src;
  f->dst = dst;
  f->n = route->n;
  f->active_idx = -1;
  f->pos = -1;
  f->rid = -1;
  f->bytes = bytes;
  f->latency_s = (double)route->latency_ns * 1e-9;
  if ((route->expanded || s->paths) && (rc = add_path(s, nflows, route, borrow)))
    return fs_err_set(err, rc, "out of memory adding flow");
  return id;
}

int32_t fs_sim_add_flow(fs_sim *s, int32_t src, int32_t dst, double bytes,
                        int64_t start_ns, const fs_route *route, fs_err *err) {
  return add_flow(s, src, dst, bytes, start_ns, route, 0, err);
}

int32_t fs_sim_add_flow_ref(fs_sim *s, int32_t src, int32_t dst, double bytes,
                            int64_t start_ns, const fs_route *route, fs_err *err) {
  return add_flow(s, src, dst, bytes, start_ns, route, 1, err);
}

int32_t fs_sim_add_task_s(fs_sim *s, int32_t host, int64_t start_ns,
                          double duration_s, fs_err *err) {
  if (host < 0 || host >= s->core.t->n_nodes)
    return fs_err_set(err, FS_EINVAL, "task host %d out of range", host);
  if (!(duration_s >= 0) || !isfinite(duration_s) || start_ns < 0)
    return fs_err_set(err, FS_EINVAL, "task start and duration must be finite and >= 0");
  if (fs__grow(&s->tasks, &s->tasks_cap, s->n_tasks + 1, sizeof(*s->tasks)))
    return fs_err_set(err, FS_ENOMEM, "out of memory adding task");
  int32_t id = new_item(s, FS_ITEM_TASK, (int32_t)s->n_tasks, start_ns, err);
  if (id < 0) return id;
  s->tasks[s->n_tasks++] = (task){host, duration_s};
  return id;
}

int32_t fs_sim_add_task(fs_sim *s, int32_t host, int64_t start_ns,
                        int64_t duration_ns, fs_err *err) {
  if (duration_ns < 0)
    return fs_err_set(err, FS_EINVAL, "task duration must be >= 0 ns, got %lld",
                      (long long)duration_ns);
  return fs_sim_add_task_s(s, host, start_ns, (double)duration_ns * 1e-9, err);
}

static int add_edge(fs_sim *s, int32_t before, int32_t after, int32_t kind,
                    fs_err *err) {
  if (s->ran) return fs_err_set(err, FS_EINVAL, "simulation already ran");
  if (before < 0 || (size_t)before >= s->n_items || after < 0 ||
      (size_t)after >= s->n_items)
    return fs_err_set(err, FS_EINVAL, "dependency %d -> %d names an unknown item",
                      before, after);
  if (kind == DEP_SENT && s->items[before].kind != FS_ITEM_FLOW)
    return fs_err_set(err, FS_EINVAL, "item %d is not a flow: it has no 'sent' time", before);
  if (fs__grow(&s->edges, &s->edges_cap, s->n_edges + 1, sizeof(*s->edges)))
    return fs_err_set(err, FS_ENOMEM, "out of memory adding dependency");
  s->edges[s->n_edges][0] = before;
  s->edges[s->n_edges][1] = after;
  s->edges[s->n_edges][2] = kind;
  s->n_edges++;
  return 0;
}

int fs_sim_add_dep(fs_sim *s, int32_t before, int32_t after, fs_err *err) {
  return add_edge(s, before, after, DEP_DONE, err);
}

int fs_sim_add_dep_sent(fs_sim *s, int32_t flow, int32_t after, fs_err *err) {
  return add_edge(s, flow, after, DEP_SENT, err);
}

/* Dependents in CSR form, in the order dependencies were added. */
static int build_deps(fs_sim *s) {
  size_t n = s->n_items;
  s->dep_start = calloc(n + 1, sizeof(int32_t));
  s->dep_list = fs__malloc(s->n_edges, sizeof(int32_t));
  int32_t *fill = calloc(n + 1, sizeof(int32_t));
  if (!s->dep_start || !s->dep_list || !fill) {
    free(fill);
    return FS_ENOMEM;
  }
  for (size_t e = 0; e < s->n_edges; e++) {
    s->dep_start[s->edges[e][0] + 1]++;
    s->items[s->edges[e][1]].deps_left++;
  }
  for (size_t i = 0; i < n; i++) s->dep_start[i + 1] += s->dep_start[i];
  for (size_t e = 0; e < s->n_edges; e++) {
    int32_t b = s->edges[e][0];
    s->dep_list[s->dep_start[b] + fill[b]++] = s->edges[e][1] * 2 + s->edges[e][2];
  }
  free(fill);
  return 0;
}

/* Kahn's algorithm; on a cycle, walks predecessors inside the unresolved
 * set until a node repeats, and records that loop. */
static int check_acyclic(fs_sim *s, fs_err *err) {
  size_t n = s->n_items;
  int32_t *indeg = fs__malloc(n, sizeof(int32_t));
  int32_t *queue = fs__malloc(n, sizeof(int32_t));
  if (!indeg || !queue) {
    free(indeg);
    free(queue);
    return fs_err_set(err, FS_ENOMEM, "out of memory checking dependencies");
  }
  size_t head = 0, tail = 0;
  for (size_t i = 0; i < n; i++) {
    indeg[i] = s->items[i].deps_left;
    if (!indeg[i]) queue[tail++] = (int32_t)i;
  }
  while (head < tail) {
    int32_t u = queue[head++];
    for (int32_t k = s->dep_start[u]; k < s->dep_start[u + 1]; k++) {
      int32_t a = s->dep_list[k] / 2;
      if (--indeg[a] == 0) queue[tail++] = a;
    }
  }
  if (tail == n) {
    free(indeg);
    free(queue);
    return 0;
  }
  /* pred[v] = some unresolved predecessor of unresolved v. */
  int32_t *pred = queue; /* reuse */
  for (size_t i = 0; i < n; i++) pred[i] = -1;
  for (size_t e = 0; e < s->n_edges; e++) {
    int32_t b = s->edges[e][0], a = s->edges[e][1];
    if (indeg[b] > 0 && indeg[a] > 0 && pred[a] < 0) pred[a] = b;
  }
  int32_t v = -1;
  for (size_t i = 0; i < n && v < 0; i++)
    if (indeg[i] > 0) v = (int32_t)i;
  /* Walking back n steps from any unresolved node lands inside a cycle. */
  for (size_t i = 0; i < n; i++) v = pred[v];
  int32_t len = 0;
  int32_t u = v;
  do {
    len++;
    u = pred[u];
  } while (u != v);
  s->cycle = malloc((size_t)len * sizeof(int32_t));
  if (s->cycle) {
    /* pred points backwards; store in dependency order. */
    u = v;
    for (int32_t i = len - 1; i >= 0; i--) {
      s->cycle[i] = u;
      u = pred[u];
    }
    s->cycle_len = len;
  }
  free(indeg);
  free(queue);
  return fs_err_set(err, FS_ECYCLE, "dependency cycle through %d items (first: item %d)",
                    len, v);
}

int32_t fs_sim_cycle(const fs_sim *s, int32_t *items, int32_t max) {
  int32_t n = s->cycle_len < max ? s->cycle_len : max;
  if (n > 0) memcpy(items, s->cycle, (size_t)n * sizeof(int32_t));
  return s->cycle_len;
}

/* ---- event queue ----
 * Events are ordered by (t, seq), seq = push order, unique: a total order.
 * Consecutive pushes at the same t are kept as one run (a ring step drains
 * its 1024 flows at one instant, their completions follow in runs of the
 * same path latency), so the heap orders runs, not events. A run holds
 * consecutive seqs, so no other event's key falls inside it: while its head
 * is the minimum, the rest of it comes next, and taking the head never
 * breaks the heap. Only the newest run (`open`, outside the heap) grows.
 * Pops therefore come out in exactly the order of a plain heap on (t, seq).
 * Payloads of a run are contiguous in `pl`; dead ones are squeezed out when
 * `pl` fills up (amortised O(1) per push). Heap: 4-ary, O(log runs). */
static inline int run_before(const evrun *a, const evrun *b) { return fs__heap_before(a, b); }

/* Dead: its flow's version moved on (the drain was re-predicted, the
 * re-route superseded) or, for a drain, the flow left its links. Once dead,
 * always dead: versions only grow and a flow leaves its links only by
 * draining or being re-routed (which bumps the version). */
static int ev_live(const fs_sim *s, const evpl *p) {
  if (p->type == EV_SRC_OUT) return p->version == s->srcq[p->item].version;
  if (p->type == EV_CC) return p->version == s->cc_version;
  if (p->type != EV_DRAIN && p->type != EV_REENTER && p->type != EV_WINDOW) return 1;
  const fs__flow *f = &s->core.flows[s->items[p->item].idx];
  if (p->version != f->version) return 0;
  return p->type == EV_REENTER ? f->held : f->active_idx >= 0;
}

/* Copies the live payloads into a buffer with room for as many again, the
 * open run last so that it can keep growing at the end, and rebuilds the
 * heap without the runs left empty. Dropping entries keeps the order of the
 * others: a run's seq range only shrinks, so ranges stay disjoint, and its
 * head seq (advanced by pops) stays inside its original range. O(entries). */
static int evq_compact(fs_sim *s) {
  evq *q = &s->heap;
  size_t live = q->count - q->stale;
  size_t cap = 2 * live + 64;
  if (cap > INT32_MAX) return FS_ENOMEM;
  evpl *pl = fs__malloc(cap, sizeof(*pl));
  if (!pl) return FS_ENOMEM;
  size_t k = 0, kept = 0, dropped = 0;
  for (size_t i = 0; i < q->runs.len; i++) {
    evrun *r = &q->runs.e[i]; /* n > 0: exhausted runs leave the heap */
    size_t first = k;
    for (int32_t j = 0; j < r->b; j++) {
      const evpl *p = &q->pl[r->a + j];
      if (ev_live(s, p)) pl[k++] = *p;
      else dropped++;
    }
    if (k == first) continue;
    r->a = (int32_t)first;
    r->b = (int32_t)(k - first);
    q->runs.e[kept++] = *r;
  }
  size_t first = k;
  for (int32_t j = 0; j < q->open.b; j++) {
    const evpl *p = &q->pl[q->open.a + j];
    if (ev_live(s, p)) pl[k++] = *p;
    else dropped++;
  }
  q->open.a = (int32_t)first;
  q->open.b = (int32_t)(k - first);
  free(q->pl);
  q->pl = pl;
  q->pl_len = k;
  q->pl_cap = cap;
  q->count -= dropped;
  q->stale = 0; /* every dead entry was just dropped */
  q->runs.len = kept;
  fs__heap_build(&q->runs);
  return 0;
}

static int evq_push(fs_sim *s, double t, int32_t type, int32_t item, uint32_t version) {
  evq *q = &s->heap;
  if (q->pl_len == q->pl_cap && evq_compact(s)) return FS_ENOMEM;
  if (!(q->open.b > 0 && q->open.t == t)) {
    if (q->open.b > 0 && fs__heap_push(&q->runs, q->open)) return FS_ENOMEM;
    q->open = (evrun){t, q->next_seq, (int32_t)q->pl_len, 0};
  }
  q->pl[q->pl_len++] = (evpl){item, version, type};
  q->open.b++;
  q->next_seq++;
  q->count++;
  return 0;
}

/* The run holding the minimum event, or NULL when empty. */
static inline evrun *evq_min(evq *q) {
  if (q->open.b > 0 && (q->runs.len == 0 || run_before(&q->open, &q->runs.e[0]))) return &q->open;
  return q->runs.len ? &q->runs.e[0] : NULL;
}

static void evq_take(evq *q, evrun *r) {
  r->seq++;
  r->a++;
  r->b--;
  q->count--;
  if (r->b == 0 && r != &q->open) fs__heap_pop(&q->runs);
}

/* Drops dead events at the head; returns the next live one's time, or
 * INFINITY when none is left. */
static double evq_top_live_t(fs_sim *s) {
  evq *q = &s->heap;
  evrun *r;
  while ((r = evq_min(q))) {
    if (ev_live(s, &q->pl[r->a])) return r->t;
    evq_take(q, r);
    q->stale--;
  }
  return INFINITY;
}

/* Pops the next live event (0 when none is left). Dead ones are discarded
 * on the way, so they never set the clock. */
static int evq_pop_live(fs_sim *s, fs__event *out) {
  if (!(evq_top_live_t(s) < INFINITY)) return 0;
  evq *q = &s->heap;
  evrun *r = evq_min(q);
  const evpl *p = &q->pl[r->a];
  *out = (fs__event){r->t, r->seq, p->item, p->version, p->type};
  if (p->type == EV_SRC_OUT) s->srcq[p->item].pending = 0;
  if (p->type == EV_DRAIN || p->type == EV_REENTER || p->type == EV_WINDOW)
    s->core.flows[s->items[p->item].idx].pending = 0;
  evq_take(q, r);
  return 1;
}

/* The flow's queued event (if any) is superseded: it becomes dead. */
static void supersede(fs_sim *s, fs__flow *f) {
  if (f->pending) {
    f->pending = 0;
    s->heap.stale++;
  }
  f->version++;
}

/* Each link enters the batch's dirty list once: a link touched by many
 * arrivals or departures would otherwise be scanned once per touch (the
 * first batch of a 65 k-flow all-to-all listed each host link ~255 times). */
static void mark_dirty(fs_sim *s, int32_t l) {
  fs__simcore *c = &s->core;
  if (!c->is_dirty[l]) {
    c->is_dirty[l] = 1;
    c->dirty_links[c->n_dirty++] = l;
  }
}

static void settle(fs_sim *s, fs__flow *f);
static void note_leaver(fs__simcore *c, double x);
static void supersede(fs_sim *s, fs__flow *f);

/* Link l's capacity becomes Bps now. Every flow on it leaves and comes back
 * as an arrival (rate 0), so all its links are changed links: the
 * re-rating judges the other links' bottlenecks by their flows' old rates,
 * which this flow no longer has. */
static int predict(fs_sim *s, fs__flow *f);

static void capacity_changed(fs_sim *s, int32_t link, double Bps) {
  fs__simcore *c = &s->core;
  c->cap_Bps[link] = Bps;
  if (s->dq) s->cc_changed = 1; /* its flows' offers may change */
  fs__link_active *a = &c->active[link];
  for (int32_t j = 0; j < a->n; j++) {
    int32_t fi = a->flow[j];
    fs__flow *f = &c->flows[fi];
    settle(s, f);
    note_leaver(c, f->rate);
    for (int32_t k = 0; k < f->n; k++) {
      int32_t l = f->links[k];
      c->load[l] -= f->w[k] * fs__take(c, fi, k);
      c->arrived[l] = 1;
      mark_dirty(s, l);
    }
    f->rate = 0;
    supersede(s, f);
  }
  c->arrived[link] = 1;
  mark_dirty(s, link);
}

/* Flow fi came or went: its NIC's share changes (cc_step). */
static void cc_touch(fs_sim *s, int32_t fi) {
  fs__dcqcn *d = s->dq;
  if (!fs__dq(d, fi)->touched) d->touch[d->n_touch++] = fi;
  fs__dq(d, fi)->touched = 1;
}

/* rdma with DCQCN, tcp with DCTCP: when flows came or went (their NICs'
 * shares change) re-rates their NICs (fs__dcqcn_local), or steps the rate
 * control when that is not enough, its event came or capacities or routes
 * changed, and schedules the next step: a step (d->step_s) later while a
 * port is queued or over-subscribed, else when a rate next rises or CNPs
 * come back (docs/model.md, "DCQCN"). The re-rating then gives each flow
 * its offer (rerate_cc). */
static int cc_step(fs_sim *s) {
  fs__dcqcn *d = s->dq;
  if (!s->cc_due && !s->cc_changed && !d->n_touch) return 0;
  int local = !s->cc_due && !s->cc_changed;
  s->cc_due = s->cc_changed = 0;
  int rc = local ? fs__dcqcn_local(d, &s->core, d->touch, d->n_touch, s->now) : 1;
  for (int32_t i = 0; i < d->n_touch; i++) fs__dq(d, d->touch[i])->touched = 0;
  d->n_touch = 0;
  if (rc == 0) s->cc_offers = 1; /* (flows that came or went only re-rated their NICs) */
  if (rc <= 0) return rc;
  s->cc_offers = 2;
  double next;
  int busy = fs__dcqcn_tick(d, &s->core, s->active_list, s->n_active, s->now, &next);
  if (busy < 0) return busy;
  for (int32_t i = 0; i < s->dq->n_exits; i++) { /* DCTCP: echoes ended their slow start */
    int32_t fi = s->dq->exits[i];
    fs__flow *f = &s->core.flows[fi];
    fs__tflow *tf = TF(s, fi);
    if (f->active_idx >= 0) settle(s, f);
    tf->budget = tf->cwnd = tf->round_bytes = INFINITY;
    if (f->active_idx < 0) continue; /* waits for its round's ACK, then goes on */
    supersede(s, f);
    if (predict(s, f)) return FS_ENOMEM;
  }
  double step = d->step_s;
  /* (DCTCP's windows react once a round trip, at the step after it: their
   * observation windows' ends need no steps of their own while the model
   * steps anyway; half the steps of bench D5, no case of the validation
   * moves by more than 0.1 %) */
  double at = busy ? (s->dq->dctcp ? s->now + step : fmin(fs__dcqcn_grid(d, s->now, 1), next))
                   : next;
  if (at < INFINITY && at <= s->pending_cc_t && at > s->now) {
    /* (no step event at INFINITY: one would keep a run with timers from
     * ever being idle; the one superseded is dead) */
    if (s->pending_cc_t < INFINITY) s->heap.stale++;
    s->cc_version++;
    s->pending_cc_t = at;
    if (evq_push(s, at, EV_CC, -1, s->cc_version)) return FS_ENOMEM;
  }
  return 0;
}

/* rdma with DCQCN: flow fi's last byte, sent, reaches hop k of its route
 * now and waits out each queue as it finds it (FIFO); past the last one
 * the flow finishes a path latency (and its store and forward) later. */
static int cc_tail(fs_sim *s, int32_t fi, int32_t k) {
  const fs__flow *f = &s->core.flows[fi];
  for (; k < f->n; k++) {
    double w = f->w[k] * fs__dcqcn_wait_s(s->dq, &s->core, f->links[k], s->now);
    if (w > 0) {
      s->dq->tail_hop[fi] = k + 1;
      return evq_push(s, s->now + w, EV_TAIL, f->item, 0) ? FS_ENOMEM : 0;
    }
  }
  double t = s->now + f->latency_s + s->dq->tail_more[fi];
  return evq_push(s, t, EV_FLOW_DONE, f->item, 0) ? FS_ENOMEM : 0;
}

/* A flow of a pruned route comes (+1) or goes (-1): the route's left-out
 * links are busy while any flow over them is in flight. */
static void route_busy(fs_sim *s, int32_t rid, int delta) {
  fs__simcore *c = &s->core;
  fs__proute *p = &c->proutes[rid];
  int32_t was = p->n_active;
  p->n_active += delta;
  if (was != 0 && p->n_active != 0) return;
  for (int32_t k = p->n_kept; k < p->n_kept + p->n_gone; k++) {
    int32_t l = p->kept[k];
    if (delta > 0 && c->busy_routes[l]++ == 0) c->active[l].busy_since = s->now;
    if (delta < 0 && --c->busy_routes[l] == 0)
      s->link_stats[l].busy_s += s->now - c->active[l].busy_since;
  }
}

/* ---- tcp source fair queue (docs/model.md, "Transport") ----
 * The windows waiting at a source link leave at one share each, src_y, so
 * a link keeps one virtual clock (the bytes each has sent) and a heap of
 * the clock readings at which each is out (tags): a change of the share
 * re-predicts one event per link, not one per window. */
static double srcq_clock(const fs_sim *s, int32_t l) {
  const srcq *q = &s->srcq[l];
  return q->v + s->core.src_y[l] * (s->now - q->t);
}

static void srcq_advance(fs_sim *s, int32_t l) {
  s->srcq[l].v = srcq_clock(s, l);
  s->srcq[l].t = s->now;
}

/* Link l's next window out: one live event. */
static int srcq_predict(fs_sim *s, int32_t l) {
  srcq *q = &s->srcq[l];
  if (q->pending) {
    q->pending = 0;
    s->heap.stale++;
  }
  q->version++;
  double y = s->core.src_y[l];
  if (!q->h.len || !(y > 0)) return 0;
  double t = s->now + (q->h.e[0].t - srcq_clock(s, l)) / y;
  if (t < s->now) t = s->now;
  if (!isfinite(t)) return 0;
  if (evq_push(s, t, EV_SRC_OUT, l, q->version)) return FS_ENOMEM;
  q->pending = 1;
  return 0;
}

/* Flow fi's window (inject_left bytes) joins its source link's queue, at
 * the share the queue has (the batch's re-rating sets the new one). */
static int srcq_join(fs_sim *s, int32_t fi) {
  fs__simcore *c = &s->core;
  const fs__flow *f = &c->flows[fi];
  fs__tflow *tf = TF(s, fi);
  int32_t l = f->links[0];
  srcq *q = &s->srcq[l];
  srcq_advance(s, l);
  tf->tag = q->v + tf->inject_left;
  if (fs__heap_push(&q->h, (fs__heap_ent){tf->tag, (uint64_t)fi, fi, 0})) return FS_ENOMEM;
  c->src_w[l] += f->w[0];
  c->load[l] += f->w[0] * c->src_y[l];
  return srcq_predict(s, l);
}

/* Flow fi's window leaves its source link's queue (out, or the flow leaves
 * its links): a departure of its share from the link. */
static int srcq_leave(fs_sim *s, int32_t fi) {
  fs__simcore *c = &s->core;
  const fs__flow *f = &c->flows[fi];
  fs__tflow *tf = TF(s, fi);
  int32_t l = f->links[0];
  srcq *q = &s->srcq[l];
  srcq_advance(s, l);
  double left = tf->tag - q->v, y = c->src_y[l], x = f->w[0] * y;
  tf->inject_left = left > 0 ? left : 0;
  fs__heap_remove(&q->h, (size_t)s->src_hpos[fi]);
  c->load[l] -= x;
  c->gone_load[l] += x;
  if (y > c->gone_max[l]) c->gone_max[l] = y;
  note_leaver(c, y);
  c->src_w[l] -= f->w[0];
  if (!q->h.len) c->src_w[l] = c->src_y[l] = 0; /* exactly, whatever rounding left */
  mark_dirty(s, l);
  return srcq_predict(s, l);
}

/* The route flow fi's packets take: a quotient flow's expanded route
 * (symm.h), else its route as added (a pruned flow's whole route). The
 * transport model reads hops and queues there. */
typedef struct pkt_route {
  const int32_t *links;
  const double *w;
  int32_t n;
} pkt_route;

static pkt_route packet_route(const fs_sim *s, int32_t fi) {
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
static double tail_wait(const fs_sim *s, int32_t fi) {
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
static int32_t sim_link(const fs_sim *s, int32_t fi, int32_t l) {
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
    pkt_route p = packet_route(s, a->flow[j]);
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

/* Whether `load` fills a port of capacity `cap`, up to the fill's
 * rounding (relative 1e-9, as the re-rating checks its rates). */
static int fills(double load, double cap) { return load >= cap * (1 - 1e-9); }

/* Whether link l's fluid flows fill it. */
static int link_full(const fs__simcore *c, int32_t l) { return fills(c->load[l], c->cap_Bps[l]); }

/* Whether link l is saturated and can bind, so that packets queue at its
 * port (queue_level; the saturated flag of rerate). */
static int queues_full(const fs_sim *s, int32_t l) {
  const fs__simcore *c = &s->core;
  return (!s->can_bind || s->can_bind[l]) && c->cap_Bps[l] > 0 && link_full(c, l);
}

/* Under the DCQCN and DCTCP models: whether what comes to link l's port
 * fills it. */
static int dq_port_full(const fs_sim *s, int32_t l) {
  return fills(s->dq->port[l].in, s->core.cap_Bps[l]);
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
  pkt_route p = packet_route(s, fi);
  /* a window leaving the source's fair queue (or out of it) is not
   * served there in the order it arrives */
  int skip0 = c->src_phase && c->src_phase[fi] != FS__SRC_RATE;
  double acc = 0;
  int32_t level = 0, first = 0, sat = 0;
  for (int32_t k = 0; k < p.n; k++) {
    int32_t l = sim_link(s, fi, p.links[k]);
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
static void standing_advance(fs_sim *s, int32_t l) {
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
static double window_pkts(const fs_sim *s, int32_t fi, pkt_route p) {
  double pkt = full_packet(s);
  const fs__tflow *tf = TF(s, fi);
  if (!s->tp.persistent) return tf->ca_window / pkt;
  double cap = s->core.cap_Bps[sim_link(s, fi, p.links[0])];
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
static void q_advance(fs_sim *s, int32_t l) {
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
static double arrival_Bps(const fs_sim *s, int32_t fi) {
  pkt_route p = packet_route(s, fi);
  return p.n ? s->core.cap_Bps[sim_link(s, fi, p.links[0])] : INFINITY;
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
static double port_reach_s(const fs_sim *s, pkt_route p, int32_t k) {
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
static double link_reach_s(const fs_sim *s, int32_t fi, pkt_route p, int32_t l) {
  int32_t k = 0;
  while (k < p.n && sim_link(s, fi, p.links[k]) != l) k++;
  return port_reach_s(s, p, k);
}

/* Whether flow fi's fluid has reached link l of its route by `at`. The
 * fluid's rates hold along the whole route at once; a flow that came onto
 * its links at on_s sends its first packet then, which reaches l's port
 * port_reach_s later, and its last bytes pass there as long after it
 * leaves its links (a ghost of it, ghosts_leave). So the packets at a
 * port meet the fluid as its sources sent it, each flow delayed by its
 * own hops (a slow-start round's window after its gap; until this the
 * packets met a round's gap the hops before the port too early). */
static int fluid_arrived(const fs_sim *s, int32_t fi, int32_t l, double at) {
  if (!s->ghost || !s->tf_slot || s->tf_slot[fi] < 0 || at >= TF(s, fi)->on_all_s) return 1;
  pkt_route p = packet_route(s, fi);
  return at - TF(s, fi)->on_s >= link_reach_s(s, fi, p, l);
}

/* The fluid flows as their packets pass port l at `at` (now or soon, as
 * their rates are now; tcp; fluid_arrived, ghosts_leave): how many, their
 * rate there and their mean round trip. */
static void fluid_view(const fs_sim *s, int32_t l, double at, int32_t *n, double *rate,
                       double *rtt) {
  const fs__link_active *a = &s->core.active[l];
  const fs__ghosts *gs = s->ghost ? &s->ghost[l] : NULL;
  double sum = 0;
  int32_t k = 0;
  *n = a->n;
  *rate = a->n ? s->core.load[l] : 0;
  for (int32_t j = 0; j < a->n; j++) {
    int32_t g = a->flow[j];
    if (s->tf_slot[g] < 0) continue;
    if (!fluid_arrived(s, g, l, at)) { /* not at l yet */
      *rate -= s->core.flows[g].rate * s->core.flows[g].w[a->slot[j]];
      (*n)--;
      continue;
    }
    sum += TF(s, g)->rtt_s;
    k++;
  }
  for (int32_t j = 0; gs && j < gs->n; j++)
    if (gs->g[j].until > at) { /* still passing l */
      *rate += gs->g[j].rate;
      (*n)++;
      sum += gs->g[j].rtt;
      k++;
    }
  *rtt = k ? sum / k : 0;
  if (!*n) *rate = 0;
}

/* Flow fi comes onto its links now: where its fluid will reach a switch
 * port that packets keep busy beyond then, no other fluid there, its
 * stream queues behind their backlog, which took nothing from it (pk_tx
 * judges a packet when it reaches the port, and fi was not on its links
 * then), so it owes those bytes: the most any port of its route keeps it
 * waiting (one after another, a later port's backlog drains meanwhile). */
static void backlog_owed(fs_sim *s, int32_t fi) {
  const fs__flow *f = &s->core.flows[fi];
  const fs_topo *t = s->core.t;
  if (s->tf_slot[fi] < 0) return;
  pkt_route p = packet_route(s, fi);
  double owed = 0;
  for (int32_t k = 0; k < f->n; k++) {
    int32_t l = f->links[k];
    if (t->nodes[t->links[l].from].kind != FS_NODE_SWITCH) continue;
    double at = s->now + link_reach_s(s, fi, p, l);
    double busy = fs__pktnet_busy_until(s->pk, l) - at;
    if (!(busy > 0)) continue;
    int32_t n;
    double rate, rtt;
    fluid_view(s, l, at, &n, &rate, &rtt);
    if (n <= 1) owed = fmax(owed, busy * s->core.cap_Bps[l] * f->w[k]);
  }
  s->pk_owed[fi] += owed;
}

/* Flow fi leaves its links now: a ghost of it at every link of its
 * rating route until its last bytes have passed that link's port. Each
 * link's ghosts that have passed go first. */
static int ghosts_leave(fs_sim *s, int32_t fi) {
  const fs__flow *f = &s->core.flows[fi];
  if (!s->ghost || !(f->rate > 0) || s->tf_slot[fi] < 0) return 0;
  pkt_route p = packet_route(s, fi);
  for (int32_t k = 0; k < f->n; k++) {
    fs__ghosts *gs = &s->ghost[f->links[k]];
    int32_t m = 0;
    for (int32_t j = 0; j < gs->n; j++)
      if (gs->g[j].until > s->now) gs->g[m++] = gs->g[j];
    gs->n = m;
    double d = link_reach_s(s, fi, p, f->links[k]);
    if (!(d > 0)) continue;
    if (gs->n == gs->cap) {
      int32_t ncap = gs->cap ? 2 * gs->cap : 4;
      ghost *ng = realloc(gs->g, (size_t)ncap * sizeof(*ng));
      if (!ng) return FS_ENOMEM;
      gs->g = ng;
      gs->cap = ncap;
    }
    gs->g[gs->n++] = (ghost){fi, s->now + d, f->rate * f->w[k], TF(s, fi)->rtt_s};
  }
  return 0;
}

/* The part of flow fi's queued bytes that entry k of its packet route p
 * puts at the port it leaves: 0 unless a switch sends it (hosts keep their
 * own queues), else its weight times the port's orbit multiplicity. */
static double queue_share(const fs_sim *s, int32_t fi, pkt_route p, int32_t k) {
  const fs_topo *t = s->core.t;
  if (t->nodes[t->links[p.links[k]].from].kind != FS_NODE_SWITCH) return 0;
  return p.w[k] * queue_mult(s, fi, p.links[k]);
}

/* Adds (sign 1) or takes out (-1) flow fi's queued bytes, e now falling at
 * r, at the switch ports of its queue's level. */
static void q_spread(fs_sim *s, int32_t fi, double sign, double e, double r) {
  fs__tflow *tf = TF(s, fi);
  pkt_route p = packet_route(s, fi);
  /* joining congestion avoidance: its window's part of the standing queue */
  int joins = tf->qca && sign > 0 && !tf->climbed;
  double w = joins ? window_pkts(s, fi, p) : 0, pkt = full_packet(s);
  double next = 0; /* joining: when its first packet reaches the port of entry k */
  for (int32_t k = 0; joins && k < tf->qlink; k++) next += hop_s(s, p, k);
  for (int32_t k = tf->qlink; k < tf->qend; k++) {
    double reach = next;
    if (joins) next += hop_s(s, p, k);
    double x = queue_share(s, fi, p, k);
    if (!(x > 0)) continue;
    int32_t l = sim_link(s, fi, p.links[k]);
    q_advance(s, l);
    fs__portq *q = &s->portq[l];
    if (tf->qca) {
      standing_advance(s, l); /* up to now with the flows it had */
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
                      x * arrival_Bps(s, fi), reach);
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
  tf->qup = fmax(tf->qup - arrival_Bps(s, fi) * (s->now - tf->qsince), 0);
  double e = tf->qbytes - tf->qrate * (s->now - tf->qsince);
  q_spread(s, fi, -1, e < 0 ? 0 : e, tf->qrate);
  tf->qlink = -1;
}

/* What flow f has sent since it was last settled (at its rate since
 * last_s): its bytes left and its round's budget are that much lower now. */
static double sent_since(const fs_sim *s, const fs__flow *f) {
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
  double sent = sent_since(s, f), rem = f->remaining - sent, b = tf->budget - sent;
  double e = b < rem ? b : rem;
  if (fs__inject(c, fi, 0)) {
    /* what has left the source, growing at the source share's excess */
    if (s->src_hpos[fi] >= 0) {
      int32_t l0 = f->links[0];
      e -= tf->tag - srcq_clock(s, l0);
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
static void q_update(fs_sim *s, int32_t fi) {
  if (!s->portq) return;
  q_remove(s, fi);
  q_add(s, fi);
}

/* What port l's flows in congestion avoidance keep queued there now, in
 * bytes (port l brought to now, n_ca > 0): what they hold, at most their
 * standing queue (standing_advance). */
static double standing_bytes(fs_sim *s, int32_t l) {
  const fs__portq *q = &s->portq[l];
  standing_advance(s, l);
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
static double port_queue_s(fs_sim *s, int32_t l) {
  if (l < 0) return 0;
  if (s->dq) return fs__dcqcn_wait_s(s->dq, &s->core, l, s->now); /* DCTCP's FIFO ports */
  fs__portq *q = &s->portq[l];
  if ((!q->n_burst && !q->n_ca) || !(s->core.cap_Bps[l] > 0)) return 0;
  q_advance(s, l);
  return (q->burst + (q->n_ca ? standing_bytes(s, l) : 0)) / s->core.cap_Bps[l];
}

/* The standing part of port l's queue now (port_queue_s without the
 * bursts). */
static double port_standing_s(fs_sim *s, int32_t l) {
  if (l < 0) return 0;
  fs__portq *q = &s->portq[l];
  if (!q->n_ca || !(s->core.cap_Bps[l] > 0)) return 0;
  q_advance(s, l);
  return standing_bytes(s, l) / s->core.cap_Bps[l];
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
  int saturated = s->dq ? dq_port_full(s, l) : s->portq[l].saturated;
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
static int host_count(fs_sim *s, int32_t fi, double sign) {
  if (!s->host_flows) return 0;
  const fs__simcore *c = &s->core;
  pkt_route p = packet_route(s, fi);
  int32_t nh = n_host_entries(c->t, p);
  if (fs__grow(&s->hc_pending, &s->hc_cap, s->n_hc + (size_t)nh + 1, sizeof(*s->hc_pending)))
    return FS_ENOMEM;
  for (int32_t k = 0; k < nh; k++)
    s->hc_pending[s->n_hc++] =
        (hc_change){sim_link(s, fi, p.links[k]), fi, sign * queue_mult(s, fi, p.links[k])};
  s->hc_pending[s->n_hc++] = (hc_change){-1, fi, sign};
  return 0;
}

/* The batch's host link counts (host_count). */
static void host_count_apply(fs_sim *s) {
  for (size_t i = 0; i < s->n_hc; i++) {
    const hc_change *h = &s->hc_pending[i];
    if (h->link >= 0) s->host_flows[h->link] += h->delta;
    else TF(s, h->flow)->hcounted = h->delta > 0;
  }
  s->n_hc = 0;
}

/* What a packet of flow fi waits now on its way: in the switch queues of
 * its packet route, and leaving its host behind the other flows' packets
 * (its answer's waits on the way back: ack_wait_s, read when it leaves). */
static double route_queue_s(fs_sim *s, int32_t fi) {
  if (!s->portq && !s->dq) return 0;
  const fs_topo *t = s->core.t;
  pkt_route p = packet_route(s, fi);
  int self = TF(s, fi)->hcounted;
  double d = 0;
  for (int32_t k = 0; k < p.n; k++) d += p.w[k] * port_queue_s(s, sim_link(s, fi, p.links[k]));
  for (int32_t k = 0, nh = n_host_entries(t, p); k < nh; k++)
    d += p.w[k] * host_residual_s(s, sim_link(s, fi, p.links[k]), self);
  return d;
}

/* What flow fi's first data packet waits at the switch ports of its route
 * (tcp model without DCTCP's own queues): the queues others left there. A
 * FIFO port serves it after them whatever share the fluid drain would give
 * it at once (the drain is work-conserving for the port, not per flow). */
static double entry_wait_s(fs_sim *s, int32_t fi) {
  if (!s->portq || s->dq) return 0;
  pkt_route p = packet_route(s, fi);
  double d = 0;
  for (int32_t k = 0; k < p.n; k++) d += p.w[k] * port_standing_s(s, sim_link(s, fi, p.links[k]));
  return d;
}

/* What flow fi's SYN-ACK or ACKs wait on their way back: the switch queues
 * on the reverses of its links, and leaving the receiver's host behind what
 * it sends itself (host_residual_s on the reverses of its last entries,
 * after the last switch). */
static double ack_wait_s(fs_sim *s, int32_t fi) {
  const fs_topo *t = s->core.t;
  pkt_route p = packet_route(s, fi);
  double d = 0;
  for (int32_t k = 0; k < p.n; k++) {
    int32_t rev = t->links[p.links[k]].reverse;
    if (rev >= 0) d += p.w[k] * port_queue_s(s, sim_link(s, fi, rev));
  }
  for (int32_t k = p.n - 1; k >= 0 && t->nodes[t->links[p.links[k]].to].kind != FS_NODE_SWITCH;
       k--) {
    int32_t rev = t->links[p.links[k]].reverse;
    if (rev >= 0) d += p.w[k] * host_residual_s(s, sim_link(s, fi, rev), 0);
  }
  return d;
}

/* Flow f (off its links) comes back onto them at t: EV_REENTER, which a
 * newer version of the flow supersedes. */
static int reenter_at(fs_sim *s, fs__flow *f, double t) {
  f->held = 1;
  int rc = evq_push(s, t, EV_REENTER, f->item, f->version);
  if (!rc) f->pending = 1;
  return rc;
}

/* Schedules the moment the (SYN-)ACK of an exchange flow fi begins now
 * leaves its receiver, where it waits behind what the receiver sends
 * (ack_left): its first packet's trip, for a handshake's SYN half the
 * handshake, for a round's first data packet RTT - handshake / 2 (a full
 * packet per hop instead of a header and a full packet's ACK). base: when
 * the handshake ends without that wait. */
static int ack_schedule(fs_sim *s, int32_t fi, uint8_t kind, double base) {
  fs__tflow *tf = TF(s, fi);
  tf->ack_kind = kind;
  tf->ack_base = base;
  double dt = kind == FS__ACK_HANDSHAKE ? tf->handshake_s / 2 : tf->rtt_s - tf->handshake_s / 2;
  return evq_push(s, s->now + dt, EV_ACK, s->core.flows[fi].item, 0);
}

/* A slow-start round of flow fi begins now: with the queue model, its
 * first ACK's wait at the receiver is read when that ACK leaves. */
static int round_begins(fs_sim *s, int32_t fi) {
  /* warm connections have no rounds (unless window-limited: warm_rounds):
   * nothing waits for that ACK */
  if (s->tp.persistent && !(TF(s, fi)->cwnd < INFINITY)) return 0;
  return s->host_flows ? ack_schedule(s, fi, FS__ACK_ROUND, 0) : 0;
}

/* A slow-start round of flow fi (sending, its first ACK on the way back)
 * whose window will not be out when that ACK is back (at round_end, at its
 * rate now) is rate-limited: from then on its ACKs come back as its packets
 * leave the port it queues at, each letting out two (slow start), so its
 * window no longer limits it and what it sends beyond its rate grows the
 * queue there. EV_CLOCKED at round_end moves it out of rounds
 * (flow_clocked). Not under the DCTCP model (its own windows grow by their
 * ACKs) nor the source fair queue (windows wait at the source). */
static int clocked_schedule(fs_sim *s, int32_t fi) {
  const fs__flow *f = &s->core.flows[fi];
  const fs__tflow *tf = TF(s, fi);
  if (s->dq || !s->portq || s->core.src_phase || s->small[fi] || !(tf->budget < INFINITY) ||
      f->held)
    return 0;
  double left = tf->budget - sent_since(s, f);
  if (f->rate > 0 && !(left > f->rate * (tf->round_end - s->now))) return 0;
  return evq_push(s, tf->round_end, EV_CLOCKED, f->item, 0);
}

/* EV_CLOCKED: flow fi's round's first ACK is back (clocked_schedule). If
 * its window is still going out, it leaves slow start's rounds with the
 * window it has (the round's), which joins its ports' standing queue in
 * its slow-start phase (standing_join): the queue model's account of
 * windows that keep doubling until the first ECN echo. */
static int flow_clocked(fs_sim *s, int32_t fi) {
  if (s->tf_slot[fi] < 0) return 0; /* done since */
  fs__flow *f = &s->core.flows[fi];
  fs__tflow *tf = TF(s, fi);
  if (!(tf->budget < INFINITY) || tf->round_hold || f->held ||
      !(s->now >= tf->round_end * (1 - 1e-12)))
    return 0; /* the window went out first, or a later round */
  settle(s, f);
  if (!(tf->budget > 0)) return 0; /* its window's end is this instant */
  tf->ca_window = tf->cwnd;
  tf->cwnd = tf->budget = tf->round_bytes = INFINITY;
  q_update(s, fi);
  supersede(s, f);
  return predict(s, f);
}

/* Flow fi's (SYN-)ACK leaves its receiver now: the handshake ends, or the
 * round's first ACK is back, that much later; a flow whose window is
 * already out waits for it off its links. */
static int ack_left(fs_sim *s, int32_t fi) {
  fs__flow *f = &s->core.flows[fi];
  /* read first: it brings the queues on the way back to now */
  double wait = ack_wait_s(s, fi);
  /* a round's first ACK of a flow done since: nothing waits for it */
  if (s->tf_slot[fi] < 0) return 0;
  fs__tflow *tf = TF(s, fi);
  uint8_t kind = tf->ack_kind;
  tf->ack_kind = 0;
  tf->ack_q = wait;
  if (kind == FS__ACK_HANDSHAKE) return evq_push(s, tf->ack_base + wait, EV_ENTER, f->item, 0);
  if (kind != FS__ACK_ROUND) return 0;
  if (wait > 0) tf->round_end += wait; /* this round's end, or the next one's once it waits */
  if (!tf->round_hold) return clocked_schedule(s, fi);
  if (!(wait > 0)) return 0;
  supersede(s, f);
  tf->ack_base += wait;
  return reenter_at(s, f, tf->ack_base);
}

/* Efficiency under a symmetry: entry k of quotient flow fi's rating route
 * stands for orbit x n / |O| flows on each link of its orbit (n: the links
 * of its packet route there). Counts them on (sign 1) or off (-1). */
static void shared_count(fs_sim *s, int32_t fi, int32_t k, double sign) {
  int32_t l = s->core.flows[fi].links[k];
  double m = 1;
  if (s->paths && s->paths[fi].links) {
    const fs__fpath *p = &s->paths[fi];
    int32_t n = 0;
    for (int32_t j = 0; j < p->n; j++) n += s->lrep[p->links[j]] == l;
    m = p->orbit * n / s->lorb[l];
  }
  s->lcount[l] += sign * m;
}

/* Whether two or more flows are on link l (efficiency < 1). */
static int link_shared(const fs_sim *s, int32_t l) {
  return s->lcount ? s->lcount[l] > 1.5 : s->core.active[l].n >= 2;
}

/* Efficiency < 1: entry k of flow fi came on (sign 1) or went off (-1) its
 * link. Whether the link is shared, and so its capacity, is settled at the
 * batch's end (share_apply): a capacity change re-rates the link's flows
 * from 0, and what other events of the same instant read meanwhile (the
 * queues a round's ACK meets) must not depend on the order they come in;
 * a flow that comes and goes at one instant changes nothing. */
static int share_note(fs_sim *s, int32_t fi, int32_t k, double sign) {
  int32_t l = s->core.flows[fi].links[k];
  if (s->lcount) shared_count(s, fi, k, sign);
  if (s->share_marked[l]) return 0;
  if (fs__grow(&s->share_pend, &s->share_pend_cap, s->n_share_pend + 1, sizeof(int32_t)))
    return FS_ENOMEM;
  s->share_pend[s->n_share_pend++] = l;
  s->share_marked[l] = 1;
  return 0;
}

/* The batch's end: each link whose flows came or went carries
 * efficiency x its capacity while shared, its capacity otherwise. */
static void share_apply(fs_sim *s) {
  for (size_t i = 0; i < s->n_share_pend; i++) {
    int32_t l = s->share_pend[i];
    s->share_marked[l] = 0;
    double want = s->cap_base[l] * (link_shared(s, l) ? s->tp.efficiency : 1);
    if (want != s->core.cap_Bps[l]) capacity_changed(s, l, want);
  }
  s->n_share_pend = 0;
}

/* Puts a flow on its links with its bytes left unchanged; its rate is set
 * by the batch's re-rating. */
static int flow_link(fs_sim *s, int32_t fi) {
  fs__simcore *c = &s->core;
  fs__flow *f = &c->flows[fi];
  int64_t pos = pos_alloc(c, f->n);
  if (pos < 0) return FS_ENOMEM;
  f->pos = (int32_t)pos;
  for (int32_t k = 0; k < f->n; k++) {
    int32_t l = f->links[k];
    fs__link_active *a = &c->active[l];
    if (a->n == a->cap) {
      int32_t ncap = a->cap ? a->cap * 2 : 4;
      int32_t *nf = realloc(a->flow, (size_t)ncap * sizeof(int32_t));
      if (!nf) return FS_ENOMEM;
      a->flow = nf;
      int32_t *ns = realloc(a->slot, (size_t)ncap * sizeof(int32_t));
      if (!ns) return FS_ENOMEM;
      a->slot = ns;
      a->cap = ncap;
    }
    if (a->n == 0) a->busy_since = s->now;
    a->version++;
    c->arrived[l] = 1;
    a->flow[a->n] = fi;
    a->slot[a->n] = k;
    c->pos[f->pos + k] = a->n;
    a->n++;
    mark_dirty(s, l);
    if (s->cap_base && share_note(s, fi, k, 1)) return FS_ENOMEM;
  }
  if (f->rid >= 0) route_busy(s, f->rid, 1);
  if (s->dq) cc_touch(s, fi); /* its NIC's share changes */
  if (host_count(s, fi, 1)) return FS_ENOMEM;
  f->rate = 0;
  f->last_s = s->now;
  if (s->tf_slot && s->tf_slot[fi] >= 0) {
    pkt_route p = packet_route(s, fi);
    TF(s, fi)->on_s = s->now;
    TF(s, fi)->on_all_s = s->now + port_reach_s(s, p, p.n);
  }
  if (s->ghost) backlog_owed(s, fi);
  f->active_idx = s->n_active;
  s->active_list[s->n_active++] = fi;
  if (s->n_active > s->counters.max_active) s->counters.max_active = s->n_active;
  return fs__inject(c, fi, 0) ? srcq_join(s, fi) : 0;
}

/* Flow fi sends its first byte: all its bytes are left, and it counts as
 * started; it takes its links now or (held) later, or runs as packets. */
static int flow_starts(fs_sim *s, int32_t fi) {
  s->core.flows[fi].remaining = s->core.flows[fi].bytes;
  if (s->dq && !(s->as_pkt && s->as_pkt[fi])) { /* its queue pair starts at line rate */
    if (fs__dcqcn_start(s->dq, &s->core, fi)) return FS_ENOMEM;
    cc_touch(s, fi);
  }
  s->started[s->n_started++] = s->core.flows[fi].item;
  return 0;
}

static int flow_enter(fs_sim *s, int32_t fi) {
  return flow_starts(s, fi) ? FS_ENOMEM : flow_link(s, fi);
}

/* A flow at rate x leaves its links: flows slower than x keep their rates
 * (maxmin.c). Rate 0 took nothing from anyone. */
static void note_leaver(fs__simcore *c, double x) {
  if (x > 0 && x < c->theta) c->theta = x;
}

/* Takes a flow off its links and out of the active list. */
static int flow_unlink(fs_sim *s, int32_t fi) {
  fs__simcore *c = &s->core;
  fs__flow *f = &c->flows[fi];
  if (s->portq) q_remove(s, fi);
  int rc = ghosts_leave(s, fi);
  if (!rc) rc = host_count(s, fi, -1);
  if (rc) return rc;
  note_leaver(c, f->rate);
  rc = fs__inject(c, fi, 0) && s->src_hpos[fi] >= 0 ? srcq_leave(s, fi) : 0;
  if (rc) return rc;
  for (int32_t k = 0; k < f->n; k++) {
    int32_t l = f->links[k];
    fs__link_active *a = &c->active[l];
    double take = fs__take(c, fi, k), x = f->w[k] * take;
    c->load[l] -= x;
    c->gone_load[l] += x;
    if (take > c->gone_max[l]) c->gone_max[l] = take;
    int32_t pos = c->pos[f->pos + k];
    int32_t last = --a->n;
    a->version++;
    if (pos != last) {
      a->flow[pos] = a->flow[last];
      a->slot[pos] = a->slot[last];
      c->pos[c->flows[a->flow[pos]].pos + a->slot[pos]] = pos;
    }
    if (a->n == 0) {
      s->link_stats[l].busy_s += s->now - a->busy_since;
      c->load[l] = 0; /* exactly, whatever rounding the updates left */
    }
    mark_dirty(s, l);
    if (s->cap_base && share_note(s, fi, k, -1)) return FS_ENOMEM;
  }
  int32_t moved = s->active_list[--s->n_active];
  if (moved != fi) {
    s->active_list[f->active_idx] = moved;
    c->flows[moved].active_idx = f->active_idx;
  }
  f->active_idx = -1;
  f->rate = 0;
  if (s->dq) cc_touch(s, fi); /* its NIC's share changes */
  if (f->rid >= 0) route_busy(s, f->rid, -1);
  rc = pos_release(c, f->pos, f->n);
  f->pos = -1;
  return rc;
}

static int flow_leave(fs_sim *s, int32_t fi) {
  fs__flow *f = &s->core.flows[fi];
  if (s->bins.n) fs__bins_flow(&s->bins, &s->core, f, f->last_s, s->now, f->remaining);
  int rc = flow_unlink(s, fi);
  s->core.flows[fi].remaining = 0;
  return rc;
}

/* Bytes left now, at the current rate since last_s. */
static void settle(fs_sim *s, fs__flow *f) {
  double t0 = f->last_s, before = f->remaining;
  if (s->tail_rate && s->now > t0) s->tail_rate[f - s->core.flows] = f->rate;
  double sent = sent_since(s, f);
  if (s->tf_slot) TF(s, (int32_t)(f - s->core.flows))->budget -= sent;
  f->remaining -= sent;
  if (f->remaining < 0) f->remaining = 0;
  f->last_s = s->now;
  if (s->bins.n) fs__bins_flow(&s->bins, &s->core, f, t0, s->now, before - f->remaining);
}

/* Charges the bytes sent since the last charge to the flow's route. */
static void charge(fs_sim *s, fs__flow *f) {
  fs__simcore *c = &s->core;
  double sent = f->bytes - f->remaining - f->accounted;
  if (!(sent > 0)) return;
  for (int32_t k = 0; k < f->n; k++)
    s->link_stats[f->links[k]].bytes += sent * f->w[k];
  if (f->rid >= 0) c->proutes[f->rid].bytes += sent; /* left-out links: at the end */
  f->accounted += sent;
}

static int release(fs_sim *s, int32_t id, int32_t kind);

/* Source fair queue (tcp): the phase of flow fi in the round that may send
 * its budget: a slow-start window of a flow that is not sent whole waits in
 * the source's queue; otherwise the flow takes its rate there. A route
 * rated on one link has nothing downstream to queue at. */
static uint8_t src_round_phase(const fs_sim *s, int32_t fi) {
  const fs__simcore *c = &s->core;
  const fs__flow *f = &c->flows[fi];
  const fs__tflow *tf = TF(s, fi);
  int32_t first = packet_route(s, fi).links[0]; /* a quotient's: its orbit's */
  int inject = tf->budget < INFINITY && !s->small[fi] && f->n >= 2 &&
               c->t->links[first].from == f->src && sim_link(s, fi, first) == f->links[0];
  return inject ? FS__SRC_INJECT : FS__SRC_RATE;
}

/* Flow fi (off its links) starts a round with `rem` bytes left: its phase
 * and what its window must get out of the source. */
static void src_round(fs_sim *s, int32_t fi, double rem) {
  if (!s->core.src_phase) return;
  fs__tflow *tf = TF(s, fi);
  s->core.src_phase[fi] = src_round_phase(s, fi);
  tf->inject_left = tf->budget < rem ? tf->budget : rem;
}

/* Flow fi (in flight) takes something else from its source link, as a new
 * round starts (new_round) or its window is out: it leaves and comes back
 * as an arrival, so that the re-rating sees the change. The round is set
 * between the two, as leaving the queue keeps what the old window had left
 * to send. */
static int src_relink(fs_sim *s, int32_t fi, int new_round) {
  fs__flow *f = &s->core.flows[fi];
  settle(s, f);
  int rc = flow_unlink(s, fi);
  if (rc) return rc;
  if (new_round) src_round(s, fi, f->remaining);
  else s->core.src_phase[fi] = FS__SRC_OUT;
  supersede(s, f);
  return flow_link(s, fi);
}

/* EV_SRC_OUT: the windows of link l's queue whose tags its clock reached
 * are out. A flow whose delivery ends now too (its source share bound it:
 * both at once up to rounding) only leaves the queue, and its own event
 * follows. The others take nothing there from now on: one bound further on
 * keeps its rate (the queue's share, which it was below, no longer binds
 * it); one the share bound is re-linked, to be re-rated from scratch. */
static int src_out(fs_sim *s, int32_t l) {
  srcq *q = &s->srcq[l];
  srcq_advance(s, l);
  double tol = 1e-9 * fmax(1, fabs(q->v));
  while (q->h.len && q->h.e[0].t <= q->v + tol) {
    int32_t fi = q->h.e[0].a;
    fs__flow *f = &s->core.flows[fi];
    fs__tflow *tf = TF(s, fi);
    settle(s, f);
    double d = tf->budget < f->remaining ? tf->budget : f->remaining;
    int rc;
    if (d <= 1e-9 * f->bytes) {
      rc = srcq_leave(s, fi);
    } else if (f->rate < s->core.src_y[l] * (1 - 1e-9)) {
      /* bound further on, not by its injection: its rate stands */
      rc = srcq_leave(s, fi);
      s->core.src_phase[fi] = FS__SRC_OUT;
      if (!rc && s->portq) q_update(s, fi);
    } else {
      rc = src_relink(s, fi, 0);
    }
    if (rc) return rc;
  }
  return 0;
}

/* Whether a slow-start window of w bytes covers flow fi's bandwidth-delay
 * product, so that it can no longer be window-limited: its fastest rate
 * alone over its round trip with what its last (SYN-)ACK waited on the way
 * back. Others' data queued at the ports its ACKs cross (a ring across a
 * leaf-spine: the flows the other way share the spine ports) holds the
 * ACKs, and a flow alone on its own links stays window-limited, its window
 * doubling a round trip through that queue, well past rmax x rtt. Its own
 * route's queues are left out: a flow queued there is rate-limited, which
 * its rounds find by themselves (clocked_schedule). */
static int window_covers(const fs_sim *s, int32_t fi, double w) {
  const fs__tflow *tf = TF(s, fi);
  if (s->dq || !(tf->rtt_s > 0)) return w >= tf->bdp; /* DCTCP: its windows take over */
  return w >= tf->bdp * (1 + tf->ack_q / tf->rtt_s);
}

/* A warm connection (persistent) whose window does not cover its round
 * trip with the queues its ACKs meet now is window-limited: it sends its
 * window a round trip at a time, growing it by a segment a round trip
 * (congestion avoidance: its own links are not marked), until it covers
 * that round trip, C1 (RTT + D). Its window is the warm one
 * (window_pkts: max(IW, ceil(C1 RTT)) packets, C1 its first link's rate),
 * so with no queue on its ACKs' way it always covers and nothing changes.
 * The queues are read as of the batch's re-rating, so flows entering at
 * one instant read the same. Under the queue model only (it holds the
 * queues); not under the DCTCP model (its windows are its own) nor for a
 * message that fits the first flight (one window: sent whole). */
static void warm_rounds(fs_sim *s, int32_t fi) {
  fs__tflow *tf = TF(s, fi);
  if (!s->portq || s->dq || tf->small || !(tf->rtt_s > 0)) return;
  pkt_route p = packet_route(s, fi);
  if (p.n < 1) return;
  double c1 = s->core.cap_Bps[sim_link(s, fi, p.links[0])];
  double w = window_pkts(s, fi, p) * full_packet(s), d = ack_wait_s(s, fi);
  if (!(c1 > 0) || w >= c1 * (tf->rtt_s + d)) return;
  tf->cwnd = tf->first = w;
  tf->bdp = c1 * tf->rtt_s;
  tf->ack_q = d;
}

/* tcp/rdma: a flow sends its first byte. A slow-starting flow's first round
 * may send one window, whose first ACK comes back a round trip and the
 * switch queues on its way later. */
static int tflow_enter(fs_sim *s, int32_t fi, int behind) {
  fs__tflow *tf = TF(s, fi);
  if (s->tp.persistent) warm_rounds(s, fi);
  tf->budget = tf->cwnd < INFINITY && !window_covers(s, fi, tf->first) ? tf->first : INFINITY;
  tf->qwin = 1;
  if (!(tf->budget < INFINITY)) {
    if (tf->cwnd < INFINITY) tf->ca_window = tf->first < tf->cwnd ? tf->first : tf->cwnd;
    tf->cwnd = INFINITY;
  }
  src_round(s, fi, s->core.flows[fi].bytes);
  tf->round_bytes = tf->budget;
  tf->round_end = s->now + tf->rtt_s + route_queue_s(s, fi);
  int rc = round_begins(s, fi);
  if (rc) return rc;
  double wait = behind ? 0 : entry_wait_s(s, fi);
  if (wait > 0) { /* its first packet reaches its bottleneck behind the queue */
    if (flow_starts(s, fi)) return FS_ENOMEM;
    return reenter_at(s, &s->core.flows[fi], s->now + wait);
  }
  if ((rc = flow_enter(s, fi))) return rc;
  if (s->dq) { /* DCTCP: the rounds, or a window of the initial one that grows */
    int rounds = tf->budget < INFINITY;
    double w = rounds ? tf->cwnd : s->tp.init_window * s->dq->wire_bytes;
    fs__dcqcn_slow_start(s->dq, fi, w, rounds ? FS__SS_ROUNDS : FS__SS_GROW);
  }
  return 0;
}

/* tcp: a small flow leaves its source after the small flows queued there
 * before it (the NIC sends its queue in order); others right away. */
static int admit(fs_sim *s, int32_t fi) {
  if (s->small[fi]) {
    int32_t src = s->core.flows[fi].src;
    if (s->src_busy[src] >= 0) {
      if (s->fifo_head[src] < 0) s->fifo_head[src] = fi;
      else s->fifo_nx[s->fifo_tail[src]] = fi;
      s->fifo_tail[src] = fi;
      s->fifo_nx[fi] = -1;
      return 0;
    }
    s->src_busy[src] = fi;
  }
  return s->tf_slot ? tflow_enter(s, fi, 0) : flow_enter(s, fi);
}

/* A small flow fi drained: the next one queued at its source goes. */
static int fifo_next(fs_sim *s, int32_t fi) {
  int32_t src = s->core.flows[fi].src;
  if (!s->small[fi] || s->src_busy[src] != fi) return 0;
  int32_t nx = s->fifo_head[src];
  s->src_busy[src] = nx;
  if (nx < 0) return 0;
  s->fifo_head[src] = s->fifo_nx[nx];
  return s->tf_slot ? tflow_enter(s, nx, 1) : flow_enter(s, nx);
}

/* Flow fi begins under tcp: its record from the pool, as its route set
 * it up (fs__transport_flow). */
static int tf_take(fs_sim *s, int32_t fi) {
  /* (the batch's done list: room for every record) */
  if (fs__pool_take(&s->tf_pool, &s->tf_slot[fi]) ||
      fs__grow(&s->tf_done, &s->tf_done_cap, (size_t)s->tf_pool.used, sizeof(int32_t)))
    return FS_ENOMEM;
  fs__tflow *tf = TF(s, fi);
  fs__transport_fresh(&s->tp, s->payload[fi], tf);
  tf->rtt_s = s->tf_rtt[fi];
  tf->small = s->small[fi];
  if (s->tf_conn) {
    const fs__tconn *cn = &s->tf_conn[fi];
    tf->handshake_s = cn->handshake_s;
    tf->bdp = cn->bdp;
    tf->first = cn->first;
  }
  return 0;
}

/* Flow fi is done: its record goes back to the pool once the batch is
 * over (the batch's host counts still write to it: host_count_apply). */
static void tf_give_back(fs_sim *s, int32_t fi) {
  if (s->tf_slot[fi] >= 0) s->tf_done[s->n_tf_done++] = fi;
}

static void tf_release_done(fs_sim *s) {
  for (int32_t i = 0; i < s->n_tf_done; i++) {
    int32_t fi = s->tf_done[i];
    fs__pool_put(&s->tf_pool, s->tf_slot[fi]);
    s->tf_slot[fi] = -1;
  }
  s->n_tf_done = 0;
}

/* A flow's dependencies and start time are met (it counts as started):
 * under tcp a new connection first spends its handshake. */
static int flow_begin(fs_sim *s, int32_t id) {
  int32_t fi = s->items[id].idx;
  if (s->as_pkt && s->as_pkt[fi]) { /* its packets, beside the fluid */
    const fs__flow *f = &s->core.flows[fi];
    if (flow_starts(s, fi)) return FS_ENOMEM;
    return fs__pktnet_begin(s->pk, fi, f->links, f->n, s->payload[fi], s->now);
  }
  if (!s->small) return flow_enter(s, fi);
  if (s->tf_slot) {
    int rc = tf_take(s, fi);
    if (rc) return rc;
  }
  if (s->tf_slot && TF(s, fi)->handshake_s > 0) {
    double t = s->now + TF(s, fi)->handshake_s + route_queue_s(s, fi);
    return s->host_flows ? ack_schedule(s, fi, FS__ACK_HANDSHAKE, t)
                         : evq_push(s, t, EV_ENTER, id, 0);
  }
  return admit(s, fi);
}

/* Dependencies are met: start now, or schedule the earliest start. */
static int item_ready(fs_sim *s, int32_t id) {
  sim_item *it = &s->items[id];
  double t0 = (double)it->start_ns * 1e-9;
  if (t0 < s->now) t0 = s->now;
  it->state = ST_READY;
  if (it->kind == FS_ITEM_TASK) {
    it->start_s = t0;
    it->state = ST_RUN;
    double dur = s->tasks[it->idx].duration_s;
    return evq_push(s, t0 + dur, EV_TASK_DONE, id, 0);
  }
  if (t0 > s->now) return evq_push(s, t0, EV_START, id, 0);
  it->start_s = s->now;
  it->state = ST_RUN;
  fs__flow *f = &s->core.flows[it->idx];
  if (f->bytes <= 0) {
    int rc = evq_push(s, s->now + f->latency_s, EV_FLOW_DONE, id, 0);
    return rc ? rc : release(s, id, DEP_SENT);
  }
  return flow_begin(s, id);
}

/* Releases the dependents of `id` waiting on `kind` (its finish, or for a
 * flow the moment its last byte left the source). */
static int release(fs_sim *s, int32_t id, int32_t kind) {
  for (int32_t k = s->dep_start[id]; k < s->dep_start[id + 1]; k++) {
    if (s->dep_list[k] % 2 != kind) continue;
    int32_t d = s->dep_list[k] / 2;
    if (--s->items[d].deps_left == 0) {
      int rc = item_ready(s, d);
      if (rc) return rc;
    }
  }
  return 0;
}

static int item_finished(fs_sim *s, int32_t id) {
  sim_item *it = &s->items[id];
  it->state = ST_DONE;
  it->finish_s = s->now;
  if (s->now > s->makespan) s->makespan = s->now;
  s->items_done++;
  return release(s, id, DEP_DONE);
}

static int window_sent(fs_sim *s, int32_t fi);

static int handle(fs_sim *s, const fs__event *e) {
  sim_item *it = e->type == EV_TIMER || e->type == EV_SRC_OUT || e->type == EV_CC
                     ? NULL
                     : &s->items[e->item];
  switch (e->type) {
    case EV_START: {
      it->start_s = s->now;
      it->state = ST_RUN;
      fs__flow *f = &s->core.flows[it->idx];
      if (f->bytes <= 0) {
        int rc = evq_push(s, s->now + f->latency_s, EV_FLOW_DONE, e->item, 0);
        return rc ? rc : release(s, e->item, DEP_SENT);
      }
      return flow_begin(s, e->item);
    }
    case EV_ENTER:
      return admit(s, it->idx);
    case EV_DRAIN: {
      fs__flow *f = &s->core.flows[it->idx];
      if (s->pk_owed && s->pk_owed[it->idx] > 0) { /* what packets took: still to send */
        settle(s, f);
        f->remaining += s->pk_owed[it->idx];
        s->pk_owed[it->idx] = 0;
        return predict(s, f);
      }
      double tail = tail_wait(s, it->idx);
      int rc = flow_leave(s, it->idx);
      if (!rc && s->dq) {
        fs__dcqcn_sent(s->dq, it->idx);
        s->dq->tail_more[it->idx] = tail;
        rc = cc_tail(s, it->idx, 0);
      } else if (!rc) {
        rc = evq_push(s, s->now + f->latency_s + tail, EV_FLOW_DONE, e->item, 0);
      }
      if (!rc && s->small) rc = fifo_next(s, it->idx);
      return rc ? rc : release(s, e->item, DEP_SENT);
    }
    case EV_WINDOW:
      return window_sent(s, it->idx);
    case EV_SRC_OUT:
      return src_out(s, e->item);
    case EV_FLOW_DONE:
      if (s->dq) fs__dcqcn_done(s->dq, it->idx);
      if (s->as_pkt && s->as_pkt[it->idx]) {
        if (s->bins.n) /* its bytes, spread over its life on its links */
          fs__bins_flow(&s->bins, &s->core, &s->core.flows[it->idx], it->start_s, s->now,
                        s->core.flows[it->idx].bytes);
      } else if (s->tf_slot) {
        tf_give_back(s, it->idx);
      }
      return item_finished(s, e->item);
    case EV_PKT_SENT:
      return release(s, e->item, DEP_SENT);
    case EV_TASK_DONE:
      return item_finished(s, e->item);
    case EV_TIMER: {
      s->timers_pending--;
      const timer *tm = &s->timers[e->item];
      int rc = tm->fn(tm->ctx, s, s->now, &s->timer_err);
      return rc < 0 ? rc : 0;
    }
    case EV_REENTER: {
      fs__flow *f = &s->core.flows[it->idx];
      if (s->tf_slot && TF(s, it->idx)->round_hold) { /* its next round begins */
        TF(s, it->idx)->round_hold = 0;
        int rc = round_begins(s, it->idx);
        if (rc) return rc;
        double wait = entry_wait_s(s, it->idx);
        if (wait > 0) /* its window reaches its bottleneck behind the queue */
          return reenter_at(s, f, s->now + wait);
      }
      f->held = 0;
      return flow_link(s, it->idx);
    }
    case EV_ACK:
      return ack_left(s, it->idx);
    case EV_CLOCKED:
      return flow_clocked(s, it->idx);
    case EV_TAIL:
      return cc_tail(s, it->idx, s->dq->tail_hop[it->idx]);
    case EV_CC:
      s->cc_due = 1;
      s->pending_cc_t = INFINITY;
      return 0;
  }
  return FS_EINTERNAL;
}

/* When flow f (rate > 0) next needs attention: its drain, or under tcp
 * slow start the end of its window's bytes. */
static int predict(fs_sim *s, fs__flow *f) {
  double r = f->rate;
  if (!(r > 0)) return 0;
  int type = EV_DRAIN;
  double left = f->remaining;
  if (s->tf_slot) {
    const fs__tflow *tf = TF(s, (int32_t)(f - s->core.flows));
    if (tf->budget < left) left = tf->budget > 0 ? tf->budget : 0, type = EV_WINDOW;
  }
  double t = s->now + left / r;
  if (!isfinite(t)) return 0;
  if (evq_push(s, t, type, f->item, f->version)) return FS_ENOMEM;
  f->pending = 1;
  return 0;
}

/* tcp slow start: flow fi sent its window. If the round trip of the
 * window's first segment is not over, the flow waits for it (off its
 * links); the next round may send twice as much, until the window covers
 * the bandwidth-delay product and the flow is no longer window-limited. A
 * window that took longer than a round trip was rate-limited, not
 * window-limited: the next one starts at once. */
static int window_sent(fs_sim *s, int32_t fi) {
  fs__simcore *c = &s->core;
  fs__flow *f = &c->flows[fi];
  fs__tflow *tf = TF(s, fi);
  settle(s, f);
  double was = tf->cwnd;
  /* slow start: a segment more per segment ACKed; a warm window (congestion
   * avoidance, RFC 5681 3.1): a segment more per round trip */
  tf->cwnd += s->tp.persistent ? full_packet(s) : tf->round_bytes;
  double next = !window_covers(s, fi, tf->cwnd) ? tf->cwnd : INFINITY;
  if (s->dq) /* DCTCP: the next round, or the round's window (all in flight),
              * which from now on grows by its ACKs as they come back */
    fs__dcqcn_slow_start(s->dq, fi, next < INFINITY ? tf->cwnd : was,
                         next < INFINITY ? FS__SS_ROUNDS : FS__SS_GROW);
  if (!(next < INFINITY)) {
    /* its standing queue grows by the round's ACKs from when the first is
     * back: what is out then is the round's window */
    tf->ca_window = was;
    tf->cwnd = INFINITY;
  }
  tf->round_bytes = next;
  double queue = route_queue_s(s, fi);
  if (s->now < tf->round_end * (1 - 1e-12)) {
    int rc = flow_unlink(s, fi);
    if (!rc && s->dq) rc = fs__dcqcn_sent(s->dq, fi); /* its queued bytes move on */
    if (rc) return rc;
    tf->budget = next;
    tf->qwin = 1;
    src_round(s, fi, f->remaining);
    double back = tf->round_end;
    tf->round_end = back + tf->rtt_s + queue;
    tf->round_hold = 1; /* the next round begins at back (EV_REENTER) */
    tf->ack_base = back;
    if (f->remaining <= fs__transport_last_bytes(&s->tp, s->payload[fi]) * (1 + 1e-9))
      tf->tail_pause = back - s->now;
    return reenter_at(s, f, back);
  }
  tf->budget = next;
  tf->qwin = 1;
  tf->round_end = s->now + tf->rtt_s + queue;
  int rc = round_begins(s, fi);
  if (rc) return rc;
  if (c->src_phase &&
      (c->src_phase[fi] != FS__SRC_RATE || src_round_phase(s, fi) != FS__SRC_RATE))
    return src_relink(s, fi, 1);
  q_update(s, fi);
  supersede(s, f);
  return predict(s, f);
}

/* opts.check_rerate: fills every flow in flight from scratch (theta 0,
 * every link new) in scratch of its own, which nothing the run reads, and
 * counts the rates and source-queue shares that differ from those the
 * incremental re-rating kept by more than 1e-9. */
static void check_rerate(fs_sim *s) {
  fs__simcore *c = &s->core;
  for (int32_t i = 0; i < s->n_active; i++) {
    const fs__flow *f = &c->flows[s->active_list[i]];
    for (int32_t k = 0; k < f->n; k++) {
      c->arrived[f->links[k]] = 1;
      mark_dirty(s, f->links[k]);
    }
  }
  c->theta = 0;
  fs__maxmin_rerate(c, &s->mm_check);
  for (size_t i = 0; i < c->n_dirty; i++) {
    int32_t l = c->dirty_links[i];
    c->is_dirty[l] = c->arrived[l] = 0;
    c->gone_load[l] = c->gone_max[l] = 0;
  }
  c->n_dirty = 0;
  for (int32_t i = 0; i < s->mm_check.n_comp_flows; i++) {
    int32_t fi = s->mm_check.comp_flows[i];
    double x = s->mm_check.new_rate[fi], r = c->flows[fi].rate;
    s->counters.rerate_mismatches += !(fabs(x - r) <= 1e-9 * fabs(x));
  }
  for (int32_t i = 0; c->src_w && i < s->mm_check.n_comp_links; i++) {
    int32_t l = s->mm_check.comp_links[i];
    double y = s->mm_check.new_y[l];
    s->counters.rerate_mismatches += c->src_w[l] > 0 && !(fabs(y - c->src_y[l]) <= 1e-9 * fabs(y));
  }
}

/* rdma under DCQCN: each flow sends at its offer (dcqcn.c); the links'
 * capacities act through the queues, not here. */
static int rerate_cc(fs_sim *s) {
  fs__simcore *c = &s->core;
  for (size_t i = 0; i < c->n_dirty; i++) {
    int32_t l = c->dirty_links[i];
    c->is_dirty[l] = c->arrived[l] = 0;
    c->gone_load[l] = c->gone_max[l] = 0;
  }
  c->n_dirty = 0;
  c->theta = INFINITY;
  /* (offers change only when the model steps or re-rates NICs: cc_step) */
  int all = s->cc_offers == 2;
  int32_t n = all ? s->n_active : s->cc_offers == 1 ? s->dq->n_upd : 0;
  s->cc_offers = 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t fi = all ? s->active_list[i] : s->dq->upd[i];
    fs__flow *f = &c->flows[fi];
    if (f->active_idx < 0) continue; /* (it left: no rate) */
    double r = fs__dq(s->dq, fi)->offer;
    if (r == f->rate) continue;
    settle(s, f);
    for (int32_t k = 0; k < f->n; k++) c->load[f->links[k]] += f->w[k] * (r - f->rate);
    f->rate = r;
    supersede(s, f);
    if (predict(s, f)) return FS_ENOMEM;
  }
  s->counters.flows_rerated += (uint64_t)n;
  if (s->heap.stale > 1024 && 2 * s->heap.stale > s->heap.count && evq_compact(s))
    return FS_ENOMEM;
  return 0;
}

/* Re-rates the component touched by this batch and predicts drains. */
static int rerate(fs_sim *s) {
  fs__simcore *c = &s->core;
  if (s->n_hc) host_count_apply(s);
  if (s->n_tf_done) tf_release_done(s);
  if (s->dq) return rerate_cc(s);
  if (!c->n_dirty) return 0;
  if (fs__maxmin_rerate(c, &s->mm)) return FS_ENOMEM;
  for (size_t i = 0; i < c->n_dirty; i++) {
    int32_t l = c->dirty_links[i];
    c->is_dirty[l] = 0;
    c->arrived[l] = 0;
    c->gone_load[l] = c->gone_max[l] = 0;
  }
  c->n_dirty = 0;
  s->counters.flows_rerated += (uint64_t)s->mm.n_comp_flows;
  if (s->srcq) /* the source queues' new shares: their clocks and next windows */
    for (int32_t i = 0; i < s->mm.n_comp_links; i++) {
      int32_t l = s->mm.comp_links[i];
      double y = s->mm.new_y[l];
      if (!(c->src_w[l] > 0) || y == c->src_y[l]) continue;
      srcq_advance(s, l);
      c->load[l] += c->src_w[l] * (y - c->src_y[l]);
      c->src_y[l] = y;
      if (srcq_predict(s, l)) return FS_ENOMEM;
      if (s->portq) /* its windows' queues downstream grow at the new excess */
        for (size_t j = 0; j < s->srcq[l].h.len; j++) q_update(s, s->srcq[l].h.e[j].a);
    }
  for (int32_t i = 0; i < s->mm.n_comp_flows; i++) {
    int32_t fi = s->mm.comp_flows[i];
    fs__flow *f = &c->flows[fi];
    double r = s->mm.new_rate[fi];
    if (r == f->rate) continue;
    settle(s, f);
    for (int32_t k = 0; k < f->n; k++)
      if (!fs__skip(c, fi, k) && !fs__inject(c, fi, k))
        c->load[f->links[k]] += f->w[k] * (r - f->rate);
    f->rate = r;
    supersede(s, f);
    if (predict(s, f)) return FS_ENOMEM;
  }
  if (s->portq) { /* the loads are final: where each flow queues, and how much */
    for (int32_t i = 0; i < s->mm.n_comp_links; i++) {
      int32_t l = s->mm.comp_links[i];
      uint8_t sat = (uint8_t)queues_full(s, l);
      s->portq[l].flipped = sat != s->portq[l].saturated;
      s->portq[l].saturated = sat;
      if (sat && merge_back(s, l)) s->portq[l].flipped = 1;
    }
    for (int32_t i = 0; i < s->mm.n_comp_flows; i++) q_update(s, s->mm.comp_flows[i]);
    /* a link that saturated or stopped can move where the other flows on it
     * queue (their rates and budgets are as they were) */
    for (int32_t i = 0; i < s->mm.n_comp_links; i++) {
      int32_t l = s->mm.comp_links[i];
      if (!s->portq[l].flipped) continue;
      s->portq[l].flipped = 0;
      for (int32_t j = 0; j < c->active[l].n; j++) {
        int32_t g = c->active[l].flow[j];
        if (s->mm.flow_seen[g] != s->mm.epoch && queue_moved(s, g)) q_update(s, g);
      }
    }
  }
  /* Dead drains pile up by one per re-rating; squeeze them out once they
   * outnumber the live events (amortised O(1) per re-rating). */
  if (s->heap.stale > 1024 && 2 * s->heap.stale > s->heap.count && evq_compact(s))
    return FS_ENOMEM;
  if (s->check_rerate) check_rerate(s);
  return 0;
}

static int setup(fs_sim *s, fs_err *err) {
  fs__simcore *c = &s->core;
  const fs_topo *t = c->t;
  size_t L = (size_t)t->n_links;
  c->cap_Bps = fs__malloc(L, sizeof(double));
  c->active = calloc(L ? L : 1, sizeof(*c->active));
  c->dirty_links = fs__malloc(L ? L : 1, sizeof(int32_t));
  c->is_dirty = calloc(L ? L : 1, 1);
  c->load = calloc(L ? L : 1, sizeof(double));
  c->gone_load = calloc(L ? L : 1, sizeof(double));
  c->gone_max = calloc(L ? L : 1, sizeof(double));
  c->arrived = calloc(L ? L : 1, 1);
  s->link_stats = calloc(L ? L : 1, sizeof(*s->link_stats));
  s->active_list = fs__malloc((size_t)c->n_flows, sizeof(int32_t));
  s->started = fs__malloc((size_t)c->n_flows, sizeof(int32_t));
  if (!c->cap_Bps || !c->active || !c->dirty_links || !c->is_dirty || !c->load ||
      !c->gone_load || !c->gone_max || !c->arrived || !s->link_stats || !s->active_list ||
      !s->started ||
      fs__maxmin_init(&s->mm, t->n_links, c->n_flows) || build_deps(s))
    return fs_err_set(err, FS_ENOMEM, "out of memory starting simulation");
  for (size_t l = 0; l < L; l++) c->cap_Bps[l] = t->links[l].capacity_bps / 8.0;
  c->theta = INFINITY;
  return check_acyclic(s, err);
}

/* rdma under DCQCN, tcp under DCTCP: rates are the senders', not max-min
 * (dcqcn.c). */
static int dcqcn(const fs_sim *s) { return s->tp.dcqcn && s->tp.kind != FS_TRANSPORT_FLUID; }

/* ---- tcp flows run as packets (pktnet.h; docs/model.md "Small flows as
 * packets"): they leave the fluid and come back as these events ---- */
static int pk_sent(void *ctx, int32_t fi, double t) {
  fs_sim *s = ctx;
  return evq_push(s, t, EV_PKT_SENT, s->core.flows[fi].item, 0);
}

static int pk_done(void *ctx, int32_t fi, double t) {
  fs_sim *s = ctx;
  return evq_push(s, t, EV_FLOW_DONE, s->core.flows[fi].item, 0);
}

/* The bytes of slow-start windows and whole messages queued at port l as
 * packets would find them: the model queues a window at once, where its
 * packets come at their first link's rate, so each flow's part is what it
 * queues less what has not arrived yet (qup, brought to now). */
static double burst_as_packets(fs_sim *s, int32_t l) {
  const fs__link_active *a = &s->core.active[l];
  double q = 0;
  for (int32_t j = 0; j < a->n; j++) {
    int32_t fi = a->flow[j];
    if (!s->tf_slot || s->tf_slot[fi] < 0) continue;
    const fs__tflow *tf = TF(s, fi);
    if (tf->qlink < 0 || tf->qca) continue;
    pkt_route p = packet_route(s, fi);
    double x = 0;
    for (int32_t k = tf->qlink; k < tf->qend; k++)
      if (sim_link(s, fi, p.links[k]) == l) x += queue_share(s, fi, p, k);
    if (!(x > 0)) continue;
    double dt = s->now - tf->qsince;
    double held = tf->qbytes - tf->qrate * dt;
    double up = fmax(tf->qup - arrival_Bps(s, fi) * dt, 0);
    if (held > up) q += x * (held - up);
  }
  return q;
}

/* Whether the fluid flows fill link l's port (saturated) and every one of
 * them queues at a switch port before l on its route: they reach l at its
 * rate, from a queue that keeps feeding it, so what a packet displaces at l
 * is not clocked back out by their ACKs a round trip later (as at their
 * own queue's port) but stays queued at l while they fill it (up to K:
 * over it l marks them too). A flow whose excess waits at its host has
 * no such queue: l is its own. */
static int fills_from_upstream(fs_sim *s, int32_t l) {
  const fs__simcore *c = &s->core;
  const fs__link_active *a = &c->active[l];
  if (!a->n || !link_full(c, l) || !s->tf_slot) return 0;
  for (int32_t j = 0; j < a->n; j++) {
    int32_t g = a->flow[j];
    if (s->tf_slot[g] < 0) return 0;
    const fs__tflow *tf = TF(s, g);
    if (tf->qlink < 0) return 0;
    pkt_route p = packet_route(s, g);
    if (c->t->nodes[c->t->links[p.links[tf->qlink]].from].kind != FS_NODE_SWITCH) return 0;
    int32_t k = tf->qend;
    while (k < p.n && sim_link(s, g, p.links[k]) != l) k++;
    if (k == p.n) return 0; /* l is at or before its queue */
  }
  return 1;
}

/* The DCTCP model's ports: fills_from_upstream's test on its own queues
 * (l holds less than a packet while what comes in fills it, and every
 * flow on l has a port holding a packet or more before l on its route). */
static int dq_fills_from_upstream(fs_sim *s, int32_t l) {
  const fs__simcore *c = &s->core;
  const fs__link_active *a = &c->active[l];
  double pkt = full_packet(s);
  if (!a->n || !dq_port_full(s, l) || port_queue_s(s, l) * c->cap_Bps[l] >= pkt) return 0;
  for (int32_t j = 0; j < a->n; j++) {
    int32_t g = a->flow[j];
    pkt_route p = packet_route(s, g);
    int32_t k = 0, lk = -1;
    while (k < p.n && (lk = sim_link(s, g, p.links[k])) != l && !(s->dq->q[lk] >= pkt)) k++;
    if (k == p.n || lk == l) return 0; /* no port queued before l */
  }
  return 1;
}

/* What the fluid flows do on link l as the last re-rating left them. */
static void pk_fluid(void *ctx, int32_t l, fs__pktnet_fluid *out) {
  fs_sim *s = ctx;
  out->n = s->core.active[l].n;
  out->rate_Bps = out->n ? s->core.load[l] : 0;
  out->queue_s = out->rtt_s = 0;
  out->full = out->hold = out->ca = 0;
  if (!(s->core.cap_Bps[l] > 0)) return;
  if (s->tf_slot) fluid_view(s, l, s->now, &out->n, &out->rate_Bps, &out->rtt_s);
  if (!out->n) return;
  out->full = fills(out->rate_Bps, s->core.cap_Bps[l]);
  if (s->dq) {
    /* (the rates are the senders' offers: what passes is at most C) */
    out->rate_Bps = fmin(out->rate_Bps, s->core.cap_Bps[l]);
    out->queue_s = port_queue_s(s, l);
    out->hold = dq_fills_from_upstream(s, l);
    out->ca = 1; /* its windows: out of slow start, all of them */
    for (int32_t j = 0; j < s->core.active[l].n; j++)
      if (fs__dq(s->dq, s->core.active[l].flow[j])->ss != FS__SS_NONE) out->ca = 0;
  } else if (s->portq) {
    fs__portq *q = &s->portq[l];
    q_advance(s, l);
    double standing = q->n_ca ? standing_bytes(s, l) : 0;
    out->queue_s = ((q->n_burst ? burst_as_packets(s, l) : 0) + standing) / s->core.cap_Bps[l];
    out->hold = fills_from_upstream(s, l) && out->full;
    out->ca = q->n_ca && q->phase == FS__SQ_CLIMB;
  }
}

/* A packet displaced x bytes of fluid flow g: g still has to send them.
 * Slow start grows a window by what its ACKs deliver: what a packet
 * displaces from a slow-starting flow is growth its window loses. Its
 * part of the standing queue in slow start is that much lower; a flow
 * still in its rounds keeps the loss for when it joins (q_spread). */
static void pk_take(fs_sim *s, int32_t g, double x) {
  s->pk_owed[g] += x;
  if (s->portq && !s->tp.persistent && s->tf_slot[g] >= 0 && TF(s, g)->budget < INFINITY)
    TF(s, g)->ss_lost += x;
}

/* A packet's time on link l counts as busy where no fluid flow is (the
 * fluid's busy time covers the rest). Where the fluid fills l, the
 * packet's bytes are taken from its flows there, each in proportion to
 * its rate (their bytes queued stay as their windows hold them, so each
 * byte of a packet displaces one of theirs: bytes x rate / capacity
 * each), once per packet: at the first such port of its path (a later
 * one gets the fluid's bytes already thinned). Returns whether it took. */
static int pk_tx(void *ctx, int32_t l, double bytes, double t0, double t1, int may_take) {
  fs_sim *s = ctx;
  const fs__simcore *c = &s->core;
  const fs__link_active *a = &c->active[l];
  if (!a->n) s->link_stats[l].busy_s += t1 - t0;
  if (!may_take) return 0;
  /* the fluid as it passes l when the packet leaves (FIFO: what reaches
   * the port after the packet waits behind it): the flows that have
   * reached l by then and the ghosts of those that left, whose last bytes
   * have not */
  double load = c->load[l];
  if (s->ghost) {
    int32_t n;
    double rtt;
    fluid_view(s, l, t0, &n, &load, &rtt);
    if (!fills(load, c->cap_Bps[l])) return 0;
  } else if (!a->n || !link_full(c, l)) {
    return 0;
  }
  /* Under the DCQCN and DCTCP models the rates are the senders' offers,
   * whose sum can be many times the capacity (the excess queues): the
   * packet still displaces its own bytes only, split by rate. */
  double k = bytes / fmax(load, c->cap_Bps[l]);
  for (int32_t j = 0; j < a->n; j++)
    if (fluid_arrived(s, a->flow[j], l, t0))
      pk_take(s, a->flow[j], k * c->flows[a->flow[j]].rate * c->flows[a->flow[j]].w[a->slot[j]]);
  const fs__ghosts *gs = s->ghost ? &s->ghost[l] : NULL;
  for (int32_t j = 0; gs && j < gs->n; j++)
    if (gs->g[j].until > t0) pk_take(s, gs->g[j].flow, k * gs->g[j].rate);
  fs__portq *q = s->portq && !s->tp.persistent ? &s->portq[l] : NULL;
  if (q && q->n_ca && q->phase == FS__SQ_SLOW_START) {
    standing_advance(s, l);
    double lost = bytes / full_packet(s) * q->ca_rate / load;
    q->climb = fmax(q->climb - lost, 0);
  }
  return 1;
}

/* Which flows run as packets: under tcp with switch queues (queue_k > 0:
 * the packets' ports mark at K) or rdma under DCQCN (its ports mark
 * between Kmin and Kmax; the ideal rdma has no queues), those of at most
 * packet_bytes on one path whose links all have a reverse for the ACKs or
 * CNPs, unless the run has timers (failures and re-routing change what
 * packets would have to follow) or the flow stands for an orbit
 * (symmetry). */
static int pk_setup(fs_sim *s) {
  fs__simcore *c = &s->core;
  int tcp = s->tp.kind == FS_TRANSPORT_TCP && s->tp.queue_k > 0;
  int roce = s->tp.kind == FS_TRANSPORT_RDMA && dcqcn(s);
  if (!(tcp || roce) || !(s->tp.packet_bytes > 0) || s->n_timers) return 0;
  if (!(s->as_pkt = calloc((size_t)c->n_flows + 1, 1)) ||
      !(s->pk_owed = calloc((size_t)c->n_flows + 1, sizeof(double))))
    return FS_ENOMEM;
  int32_t n = 0;
  for (int32_t fi = 0; fi < c->n_flows; fi++) {
    const fs__flow *f = &c->flows[fi];
    double b = s->payload[fi];
    if (!(b > 0 && b <= s->tp.packet_bytes) || f->n < 1 || (s->paths && s->paths[fi].links))
      continue;
    int ok = 1;
    for (int32_t k = 0; k < f->n && ok; k++)
      ok = f->w[k] == 1 && c->t->links[f->links[k]].reverse >= 0 &&
           (k == 0 ? c->t->links[f->links[k]].from == f->src
                   : c->t->links[f->links[k]].from == c->t->links[f->links[k - 1]].to);
    if (!ok) continue;
    s->as_pkt[fi] = 1;
    if (s->small) s->small[fi] = 0; /* the host's fair queue replaces the source FIFO */
    n++;
  }
  if (!n) {
    free(s->as_pkt);
    free(s->pk_owed);
    s->as_pkt = NULL;
    s->pk_owed = NULL;
    return 0;
  }
  if (!dcqcn(s) && !(s->ghost = calloc((size_t)c->t->n_links + 1, sizeof(*s->ghost))))
    return FS_ENOMEM;
  fs__pktnet_cfg cfg = {.t = c->t, .mss = s->tp.mss_bytes, .hdr = s->tp.header_bytes,
                        .syn_bytes = fs__pktnet_syn_bytes(s->tp.header_bytes),
                        .k100 = s->tp.queue_k, .init_window = s->tp.init_window,
                        .persistent = s->tp.persistent, .roce = roce,
                        .dcqcn = s->tp.dcqcn_prm, .ctx = s,
                        .sent = pk_sent, .done = pk_done, .fluid = pk_fluid, .tx = pk_tx};
  return fs__pktnet_new(&cfg, &s->pk);
}

/* tcp/rdma: per-flow transport state from the whole routes (before they
 * are pruned), the source FIFOs, and the capacities before efficiency. */
static int transport_setup(fs_sim *s) {
  fs__simcore *c = &s->core;
  if (s->tp.kind == FS_TRANSPORT_FLUID) return 0;
  size_t N = (size_t)c->t->n_nodes, L = (size_t)c->t->n_links;
  /* A flow's state past this point: its payload (rdma: 8 bytes a flow);
   * under tcp whether it is small and its place in the source FIFO (13)
   * and, unless persistent under the DCTCP model, its tcp record's index
   * and what its route fixes of that record: its round trip (25), a new
   * connection's handshake, bandwidth-delay product and first flight too
   * (49). The record itself (~200 bytes) exists only while the flow is
   * under way (tf_take). */
  size_t F = (size_t)c->n_flows + 1;
  int tcp = s->tp.kind == FS_TRANSPORT_TCP, state = tcp && (!s->tp.persistent || !dcqcn(s));
  if (!(s->payload = fs__malloc(F, sizeof(double))) ||
      !(s->tail_reach = fs__malloc(F, sizeof(double))) ||
      (s->tp.efficiency < 1 && !(s->tail_rate = calloc(F, sizeof(double)))) ||
      (state && (!(s->tf_slot = fs__malloc(F, sizeof(int32_t))) ||
                 !(s->tf_rtt = fs__malloc(F, sizeof(double))) ||
                 (!s->tp.persistent && !(s->tf_conn = fs__malloc(F, sizeof(fs__tconn)))))))
    return FS_ENOMEM;
  if (tcp) {
    s->small = fs__malloc(F, 1);
    s->fifo_nx = fs__malloc(F, sizeof(int32_t));
    s->fifo_head = fs__malloc(N, sizeof(int32_t));
    s->fifo_tail = fs__malloc(N, sizeof(int32_t));
    s->src_busy = fs__malloc(N, sizeof(int32_t));
    if (!s->small || !s->fifo_nx || !s->fifo_head || !s->fifo_tail || !s->src_busy)
      return FS_ENOMEM;
    for (size_t v = 0; v < N; v++) s->fifo_head[v] = s->fifo_tail[v] = s->src_busy[v] = -1;
  }
  for (int32_t fi = 0; fi < c->n_flows; fi++) {
    fs__flow *f = &c->flows[fi];
    fs__tflow one, *tf = &one;
    /* a quotient flow: hops, round trip and store and forward of the
     * route its packets take */
    fs__flow view = *f;
    if (s->paths && s->paths[fi].links) {
      view.links = s->paths[fi].links;
      view.w = s->paths[fi].w;
      view.n = s->paths[fi].n;
    }
    fs__transport_flow(&s->tp, c, &view, tf, &s->tail_reach[fi]);
    f->bytes = view.bytes;
    f->latency_s = view.latency_s;
    s->payload[fi] = tf->payload;
    if (tcp) s->small[fi] = tf->small;
    if (state) {
      s->tf_slot[fi] = -1;
      s->tf_rtt[fi] = tf->rtt_s;
      if (s->tf_conn) s->tf_conn[fi] = (fs__tconn){tf->handshake_s, tf->bdp, tf->first};
    }
  }
  int rc = pk_setup(s);
  if (rc) return rc;
  /* a last packet shorter than a full one may wait for the one before it:
   * without any (e.g. rdma messages of whole packets) nothing is kept */
  int runts = 0;
  for (int32_t fi = 0; fi < c->n_flows && !runts; fi++)
    runts = fs__transport_last_short(&s->tp, s->payload[fi]);
  if (!runts) {
    free(s->tail_reach);
    free(s->tail_rate);
    s->tail_reach = s->tail_rate = NULL;
  }
  /* the queues delay handshakes and slow-start rounds: none without them */
  if (state && s->tp.queue_k > 0 &&
      ((!dcqcn(s) && !(s->portq = calloc(L ? L : 1, sizeof(*s->portq)))) ||
       !(s->host_flows = calloc(L ? L : 1, sizeof(double)))))
    return FS_ENOMEM;
  if (tcp && s->tp.source_fq &&
      (!(c->src_phase = calloc((size_t)c->n_flows + 1, 1)) ||
       !(c->src_w = calloc(L ? L : 1, sizeof(double))) ||
       !(c->src_y = calloc(L ? L : 1, sizeof(double))) ||
       !(s->srcq = calloc(L ? L : 1, sizeof(*s->srcq))) ||
       !(s->src_hpos = fs__malloc((size_t)c->n_flows + 1, sizeof(int32_t)))))
    return FS_ENOMEM;
  if (s->srcq) {
    for (int32_t fi = 0; fi <= c->n_flows; fi++) s->src_hpos[fi] = -1;
    for (size_t l = 0; l < L; l++) fs__heap_init(&s->srcq[l].h, 1, s->src_hpos);
  }
  if (s->tp.efficiency < 1) {
    if (!(s->cap_base = fs__malloc(L ? L : 1, sizeof(double))) ||
        !(s->share_marked = calloc(L ? L : 1, 1)) ||
        (s->lrep && !(s->lcount = calloc(L ? L : 1, sizeof(double)))))
      return FS_ENOMEM;
    memcpy(s->cap_base, c->cap_Bps, L * sizeof(double));
  }
  if (dcqcn(s)) {
    if (!(s->dq = calloc(1, sizeof(*s->dq))) ||
        fs__dcqcn_init(s->dq, &s->tp.dcqcn_prm, c->t->n_links, c->n_flows))
      return FS_ENOMEM;
    s->dq->wire_bytes = full_packet(s);
    s->dq->bucket = fmin(s->tp.dcqcn_prm.alpha_us, s->tp.dcqcn_prm.dec_us) * 1e-6;
    s->dq->step_s = fmin(s->tp.dcqcn_prm.dec_us, FS__DCQCN_STEP_US) * 1e-6;
    if (s->tp.kind == FS_TRANSPORT_TCP) { /* DCTCP */
      s->dq->dctcp = 1;
      s->dq->k100 = s->tp.queue_k;
      s->dq->mss = s->tp.mss_bytes;
      s->dq->ack_bytes = s->tp.header_bytes;
      s->dq->init_window = s->tp.init_window;
      s->dq->bucket = 1e-6;
      s->dq->step_s = FS__DCTCP_STEP_US * 1e-6;
    }
    s->pending_cc_t = INFINITY;
  }
  if (!state && !s->lcount) { /* nothing reads the packets' routes any more */
    free(s->paths);
    s->paths = NULL;
    s->paths_cap = 0;
  }
  return 0;
}

int fs_sim_set_symmetry(fs_sim *s, const fs_symm *symm, fs_err *err) {
  if (s->ran) return fs_err_set(err, FS_EINVAL, "simulation already ran");
  const fs_topo *t = s->core.t;
  if (fs_symm_topo(symm) != t)
    return fs_err_set(err, FS_EINVAL, "the symmetry is of another topology");
  size_t L = (size_t)t->n_links;
  int32_t *rep = fs__malloc(L ? L : 1, sizeof(int32_t));
  double *orb = fs__malloc(L ? L : 1, sizeof(double));
  if (!rep || !orb) {
    free(rep);
    free(orb);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  for (int32_t l = 0; l < t->n_links; l++) {
    rep[l] = fs_symm_link_rep(symm, l);
    orb[l] = (double)fs_symm_link_orbit_size(symm, l);
  }
  free(s->lrep);
  free(s->lorb);
  s->lrep = rep;
  s->lorb = orb;
  return 0;
}

int fs_sim_set_transport(fs_sim *s, const fs_transport *tp, fs_err *err) {
  if (s->ran) return fs_err_set(err, FS_EINVAL, "simulation already ran");
  int rc = fs_transport_check(tp, err);
  if (rc) return rc;
  s->tp = *tp;
  return 0;
}

int fs_sim_run(fs_sim *s, const fs_sim_opts *opts, fs_err *err) {
  static const fs_sim_opts none = {0};
  if (!opts) opts = &none;
  if (s->ran) return fs_err_set(err, FS_EINVAL, "simulation already ran");
  if (opts->link_bins < 0 || opts->link_bins > FS_SIM_MAX_LINK_BINS)
    return fs_err_set(err, FS_EINVAL, "link_bins must be in [0, %d], got %d",
                      FS_SIM_MAX_LINK_BINS, (int)opts->link_bins);
  s->ran = 1;
  s->check_rerate = opts->check_rerate;
  int rc = setup(s, err);
  if (rc) return rc;
  if (s->check_rerate && fs__maxmin_init(&s->mm_check, s->core.t->n_links, s->core.n_flows))
    return fs_err_set(err, FS_ENOMEM, "out of memory starting simulation");
  if (fs__bins_init(&s->bins, s->core.t->n_links, opts->link_bins))
    return fs_err_set(err, FS_ENOMEM, "out of memory starting simulation");
  if (s->paths && !s->lrep && s->tp.kind != FS_TRANSPORT_FLUID)
    return fs_err_set(err, FS_EINVAL,
                      "flows on quotient routes under a transport model need the symmetry "
                      "(fs_sim_set_symmetry)");
  if ((rc = transport_setup(s))) return fs_err_set(err, rc, "out of memory starting simulation");
  /* (under DCQCN every link may queue: none is left out) */
  int prune = !s->n_timers && !opts->observe && !opts->rate_all_links && !s->dq && !s->pk;
  if (prune || (s->portq && !s->n_timers)) {
    int64_t pruned;
    if (fs__prune(&s->core, &s->arena, s->tp.efficiency, s->core.src_phase != NULL, prune,
                  s->portq ? &s->can_bind : NULL, &pruned))
      return fs_err_set(err, FS_ENOMEM, "out of memory starting simulation");
    s->counters.links_left_out = pruned;
    if (pruned && !(s->core.busy_routes = calloc((size_t)s->core.t->n_links, sizeof(int32_t))))
      return fs_err_set(err, FS_ENOMEM, "out of memory starting simulation");
  }
  s->now = 0;
  for (size_t i = 0; i < s->n_items; i++)
    if (s->items[i].deps_left == 0 && (rc = item_ready(s, (int32_t)i)) < 0) goto fail;
  if (s->n_share_pend) share_apply(s);
  if (s->dq && (rc = cc_step(s)) < 0) goto fail;
  if ((rc = rerate(s)) < 0) goto fail;
  if (opts->observe) opts->observe(opts->observe_ctx, s, s->now);
  fs__event e;
  /* The clock moves only to live events: a dead drain prediction later than
   * everything real must not leave `now` past the last event. */
  for (;;) {
    if (s->pk) { /* packets first at a tie: what they finish joins the batch */
      double tp = fs__pktnet_next_t(s->pk);
      if (tp < INFINITY && !(evq_top_live_t(s) < tp)) {
        s->now = tp;
        while (fs__pktnet_next_t(s->pk) <= tp)
          if ((rc = fs__pktnet_step(s->pk)) < 0) goto fail;
        continue;
      }
    }
    if (!evq_pop_live(s, &e)) break;
    s->now = e.t;
    double horizon = e.t + 1e-12 * fmax(e.t, 1e-9);
    uint64_t handled = 0;
    for (;;) {
      rc = handle(s, &e);
      if (rc < 0) goto fail;
      handled++;
      if (!(evq_top_live_t(s) <= horizon)) break;
      evq_pop_live(s, &e);
    }
    s->counters.events += handled;
    s->counters.batches++;
    if (s->n_share_pend) share_apply(s);
    if (s->dq && (rc = cc_step(s)) < 0) goto fail;
    if ((rc = rerate(s)) < 0) goto fail;
    if (opts->observe) opts->observe(opts->observe_ctx, s, s->now);
    if (opts->progress && (s->counters.batches & 4095) == 0) {
      fs_sim_progress p = {s->now, s->items_done, (int64_t)s->n_items, s->counters.events};
      opts->progress(opts->progress_ctx, &p);
    }
  }
  if ((size_t)s->items_done != s->n_items) {
    int32_t stalled = 0;
    for (int32_t i = 0; i < s->n_active; i++)
      stalled += !(s->core.flows[s->active_list[i]].rate > 0);
    if (stalled)
      return fs_err_set(err, FS_EINVAL,
                        "simulation stalled at %.9g s: %d flows in flight get no bandwidth "
                        "(a link on their route has no capacity, e.g. it failed and they "
                        "were not re-routed); %lld of %zu items done",
                        s->now, stalled, (long long)s->items_done, s->n_items);
    return fs_err_set(err, FS_EINTERNAL, "simulation stalled with %lld of %zu items done",
                      (long long)s->items_done, s->n_items);
  }
  for (int32_t fi = 0; fi < s->core.n_flows; fi++) {
    fs__flow *f = &s->core.flows[fi];
    f->remaining = 0;
    charge(s, f);
  }
  for (int32_t r = 0; r < s->core.n_proutes; r++) {
    const fs__proute *p = &s->core.proutes[r];
    for (int32_t k = p->n_kept; k < p->n_kept + p->n_gone; k++)
      s->link_stats[p->kept[k]].bytes += p->bytes * p->kept_w[k];
  }
  fs__bins_finish(&s->bins, s->makespan);
  if (opts->progress) {
    fs_sim_progress p = {s->now, s->items_done, (int64_t)s->n_items, s->counters.events};
    opts->progress(opts->progress_ctx, &p);
  }
  return 0;
fail:
  if (s->timer_err.code == rc && s->timer_err.msg[0]) {
    *err = s->timer_err;
    return rc;
  }
  return fs_err_set(err, rc, "simulation failed: %s", fs_strerror(rc));
}

/* ---- accessors ---- */
const fs_topo *fs_sim_topo(const fs_sim *s) { return s->core.t; }
int32_t fs_sim_n_items(const fs_sim *s) { return (int32_t)s->n_items; }
fs_item_kind fs_sim_item_kind(const fs_sim *s, int32_t item) {
  return (fs_item_kind)s->items[item].kind;
}
double fs_sim_start_s(const fs_sim *s, int32_t item) { return s->items[item].start_s; }
double fs_sim_finish_s(const fs_sim *s, int32_t item) { return s->items[item].finish_s; }
double fs_sim_makespan_s(const fs_sim *s) { return s->makespan; }
const fs_sim_link_stats *fs_sim_links(const fs_sim *s) { return s->link_stats; }

int fs_sim_get_link_bins(const fs_sim *s, fs_sim_link_bins *out) {
  memset(out, 0, sizeof(*out));
  if (!s->bins.n || !s->bins.used) return FS_EINVAL;
  out->n_bins = s->bins.used;
  out->stride = s->bins.L;
  out->width_s = s->bins.width;
  out->bytes = s->bins.b;
  return 0;
}

fs_sim_counters fs_sim_get_counters(const fs_sim *s) {
  fs_sim_counters c = s->counters;
  size_t L = (size_t)s->core.t->n_links, F = (size_t)s->core.n_flows;
  size_t bytes = s->items_cap * sizeof(sim_item) + s->flows_cap * sizeof(fs__flow) +
                 s->core.pos_cap * sizeof(int32_t) +
                 (size_t)s->core.n_proutes * sizeof(fs__proute) + s->arena.total +
                 L * (sizeof(fs__link_active) + sizeof(fs_sim_link_stats) + 5 * sizeof(double)) +
                 s->core.pos_len * 2 * sizeof(int32_t) /* link active lists, at most */ +
                 L * (size_t)s->bins.n * sizeof(double) +
                 (s->heap.runs.cap * sizeof(evrun) + s->heap.pl_cap * sizeof(evpl)) + s->n_edges * 4 * sizeof(int32_t);
  if (s->tf_slot) /* the tcp records and what the routes fix per flow */
    bytes += (size_t)s->tf_pool.n_chunks * FS__POOL_CHUNK * (sizeof(fs__tflow) + 2 * sizeof(int32_t)) +
             F * (sizeof(int32_t) + sizeof(double) + (s->tf_conn ? sizeof(fs__tconn) : 0));
  c.memory_bytes = bytes;
  c.tcp_records = s->tf_pool.used;
  c.packets = s->pk ? fs__pktnet_packets(s->pk) : 0;
  return c;
}

int32_t fs_sim_n_active(const fs_sim *s) { return s->n_active; }
int32_t fs_sim_active_flow(const fs_sim *s, int32_t i) {
  return s->core.flows[s->active_list[i]].item;
}
double fs_sim_flow_rate_bps(const fs_sim *s, int32_t item) {
  return s->core.flows[s->items[item].idx].rate * 8.0;
}
double fs_sim_flow_bytes(const fs_sim *s, int32_t item) {
  if (s->payload) return s->payload[s->items[item].idx]; /* f->bytes are on the wire */
  return s->core.flows[s->items[item].idx].bytes;
}
void fs_sim_flow_route(const fs_sim *s, int32_t item, const int32_t **links,
                       const double **weights, int32_t *n) {
  const fs__flow *f = &s->core.flows[s->items[item].idx];
  if (f->rid >= 0) { /* the route as added, not its rating part */
    const fs__proute *p = &s->core.proutes[f->rid];
    *links = p->links;
    *weights = p->w;
    *n = p->n;
    return;
  }
  *links = f->links;
  *weights = f->w;
  *n = f->n;
}

/* ---- control during a run ---- */
int fs_sim_add_timer(fs_sim *s, double at_s, fs_sim_timer_fn fn, void *ctx, fs_err *err) {
  if (!fn || !(at_s >= 0) || !isfinite(at_s))
    return fs_err_set(err, FS_EINVAL, "timer needs a callback and a finite time >= 0, got %g s",
                      at_s);
  if (at_s < s->now) at_s = s->now;
  if (s->n_timers >= INT32_MAX ||
      fs__grow(&s->timers, &s->timers_cap, s->n_timers + 1, sizeof(*s->timers)) ||
      evq_push(s, at_s, EV_TIMER, (int32_t)s->n_timers, 0))
    return fs_err_set(err, FS_ENOMEM, "out of memory adding a timer");
  s->timers[s->n_timers++] = (timer){fn, ctx};
  s->timers_pending++;
  return 0;
}

int fs_sim_idle(const fs_sim *s) {
  return s->heap.count - s->heap.stale == s->timers_pending;
}

static int need_running(const fs_sim *s, fs_err *err) {
  if (!s->ran || !s->core.cap_Bps)
    return fs_err_set(err, FS_EINVAL, "the network can only change during a run (from a timer)");
  return 0;
}

int fs_sim_set_link_capacity(fs_sim *s, int32_t link, double bps, fs_err *err) {
  fs__simcore *c = &s->core;
  int rc = need_running(s, err);
  if (rc) return rc;
  if (link < 0 || link >= c->t->n_links)
    return fs_err_set(err, FS_EINVAL, "link %d out of range (topology has %d)", link,
                      c->t->n_links);
  if (!(bps >= 0) || !isfinite(bps))
    return fs_err_set(err, FS_EINVAL, "link capacity must be finite and >= 0, got %g", bps);
  if (s->cap_base) { /* efficiency < 1: the new capacity, times it while shared */
    s->cap_base[link] = bps / 8.0;
    capacity_changed(s, link, bps / 8.0 * (link_shared(s, link) ? s->tp.efficiency : 1));
  } else {
    capacity_changed(s, link, bps / 8.0);
  }
  return 0;
}

double fs_sim_link_capacity_bps(const fs_sim *s, int32_t link) {
  return s->core.cap_Bps ? s->core.cap_Bps[link] * 8.0 : s->core.t->links[link].capacity_bps;
}

/* Gives flow fi (not on any link now) its own copy of a new route: in place
 * if it owns a copy large enough (a controller re-routing every period does
 * not grow memory), else in the arena. */
static int set_route(fs_sim *s, int32_t fi, const fs_route *route) {
  fs__flow *f = &s->core.flows[fi];
  if (s->paths) s->paths[fi].links = NULL; /* its packets now take this route */
  if (route->n <= f->owned_cap) {
    memcpy((int32_t *)f->links, route->links, (size_t)route->n * sizeof(int32_t));
    memcpy((double *)f->w, route->weights, (size_t)route->n * sizeof(double));
  } else if (copy_route(s, f, route)) {
    return FS_ENOMEM;
  }
  f->n = route->n;
  if (s->dq) { /* its bytes queued on the old route leave the model, which
               * takes its loads again */
    fs__dcqcn_reset_hops(s->dq, fi);
    s->cc_changed = 1;
  }
  f->latency_s = (double)route->latency_ns * 1e-9;
  if (s->payload)
    f->latency_s += fs__transport_store_s(&s->tp, &s->core, f, s->payload[fi]);
  if (s->tail_reach)
    s->tail_reach[fi] = fs__transport_tail_reach_s(
        &s->tp, s->cap_base ? s->cap_base : s->core.cap_Bps, f->links, f->w, f->n,
        s->payload[fi]);
  return 0;
}

int fs_sim_reroute(fs_sim *s, int32_t item, const fs_route *route, double hold_s, fs_err *err) {
  fs__simcore *c = &s->core;
  if (item < 0 || (size_t)item >= s->n_items || s->items[item].kind != FS_ITEM_FLOW)
    return fs_err_set(err, FS_EINVAL, "item %d is not a flow", item);
  if (!route || route->n < 1)
    return fs_err_set(err, FS_EINVAL, "re-route of flow %d: empty route", item);
  int32_t bad = bad_entry(c->t, route);
  if (bad >= 0)
    return fs_err_set(err, FS_EINVAL, "re-route of flow %d: bad route entry %d", item, bad);
  if (!(hold_s >= 0) || !isfinite(hold_s))
    return fs_err_set(err, FS_EINVAL, "re-route hold must be finite and >= 0 s, got %g", hold_s);
  sim_item *it = &s->items[item];
  int32_t fi = it->idx;
  fs__flow *f = &c->flows[fi];
  if (it->state == ST_DONE) return 0;
  if (it->state == ST_RUN && f->active_idx < 0 && !f->held) return 0; /* drained */
  int rc = 0, moved = 0;
  if (it->state != ST_RUN) {
    rc = set_route(s, fi, route);
  } else {
    moved = 1;
    if (f->active_idx >= 0) {
      settle(s, f);
      charge(s, f);
      if ((rc = flow_unlink(s, fi))) goto fail;
    }
    supersede(s, f); /* a pending drain or re-entry */
    /* its own hold (or none) replaces a wait for its round's first ACK,
     * which must not re-schedule the re-entry when that ACK leaves */
    if (s->tf_slot) TF(s, fi)->round_hold = 0;
    if ((rc = set_route(s, fi, route))) goto fail;
    if (hold_s > 0) {
      rc = reenter_at(s, f, s->now + hold_s);
    } else {
      f->held = 0;
      rc = flow_link(s, fi);
    }
  }
fail:
  return rc ? fs_err_set(err, rc, "out of memory re-routing flow %d", item) : moved;
}

int32_t fs_sim_n_started(const fs_sim *s) { return s->n_started; }
int32_t fs_sim_started_flow(const fs_sim *s, int32_t i) { return s->started[i]; }
void fs_sim_flow_ends(const fs_sim *s, int32_t item, int32_t *src, int32_t *dst) {
  const fs__flow *f = &s->core.flows[s->items[item].idx];
  *src = f->src;
  *dst = f->dst;
}
int fs_sim_item_finished(const fs_sim *s, int32_t item) {
  return s->items[item].state == ST_DONE;
}
double fs_sim_now_s(const fs_sim *s) { return s->now; }

/* ---- the DAG as built ---- */
int64_t fs_sim_n_deps(const fs_sim *s) { return (int64_t)s->n_edges; }

void fs_sim_dep(const fs_sim *s, int64_t i, int32_t *before, int32_t *after, int *sent) {
  *before = s->edges[i][0];
  *after = s->edges[i][1];
  *sent = s->edges[i][2] == DEP_SENT;
}

void fs_sim_task_info(const fs_sim *s, int32_t item, int32_t *host, double *duration_s) {
  const task *t = &s->tasks[s->items[item].idx];
  *host = t->host;
  *duration_s = t->duration_s;
}

int fs_sim_replace_times(fs_sim *s, const double *start_s, const double *finish_s,
                         const double *busy_s, fs_err *err) {
  if (!s->ran) return fs_err_set(err, FS_EINVAL, "replacing the times of a simulation not run");
  double makespan = 0;
  for (size_t i = 0; i < s->n_items; i++) {
    s->items[i].start_s = start_s[i];
    s->items[i].finish_s = finish_s[i];
    if (finish_s[i] > makespan) makespan = finish_s[i];
  }
  s->makespan = makespan;
  if (busy_s)
    for (int32_t l = 0; l < s->core.t->n_links; l++) s->link_stats[l].busy_s = busy_s[l];
  return 0;
}
