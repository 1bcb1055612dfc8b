/* The core of the fluid engine: the event loop, batches of simultaneous
 * events, flows in flight on their links, and incremental re-rating (see
 * sim.h). The transport models live in rooms of their own (model.h); the
 * dependency graph and what a run reports in graph.c.
 *
 * Events are popped in (time, push sequence) order from a heap of runs of
 * same-time events (one heap operation per run, not per event). A flow's drain
 * prediction carries the flow's version; when its rate changes the version
 * bumps and the old event is dead: skipped without moving the clock, and
 * squeezed out of the queue once dead entries outnumber live ones, so the
 * queue follows the events pending, not the re-ratings. Between batches rates are
 * constant, so a flow's bytes left are settled lazily: only when its rate is
 * about to change. Per flow in flight: a block of the position pool (its
 * place in each link's active list, O(1) removal). Expected sizes:
 * 10^5..10^7 flows, routes of 2..200 links.
 *
 * The models are called through their hooks (model.h), except where a
 * hook would cost an indirect call on the hottest paths, which test the
 * tcp model's state directly: settle (a tcp window's budget, the rate a
 * last byte left at), predict (a drain that stops at a window's end:
 * EV_WINDOW), each route entry as a flow comes or goes (the share a
 * transport with efficiency < 1 keeps of a shared link), the rates'
 * application (what a window waiting at its source takes there). The tcp
 * record's on-links times are set before any model's flow_on (the packets
 * beside the fluid read them for the flow itself), a held round's re-entry
 * is the core's EV_REENTER, and a small flow's drain lets the next of its
 * source's FIFO go (fs__fifo_next). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "model.h"


static void evq_free(evq *q) {
  fs__heap_free(&q->runs);
  free(q->pl);
  memset(q, 0, sizeof(*q));
  fs__heap_init(&q->runs, 2, NULL);
}

int fs_sim_new(const fs_topo *t, fs_sim **out, fs_err *err) {
  fs_sim *s = calloc(1, sizeof(*s));
  if (!s) return fs_err_set(err, FS_ENOMEM, "out of memory creating simulation");
  s->core.t = t;
  fs__arena_init(&s->arena);
  fs__pool_init(&s->tf_pool, sizeof(fs__tflow));
  evq_free(&s->heap); /* (an empty queue) */
  memset(s->ev_owner, -1, sizeof(s->ev_owner));
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
  FS__FREE_ALL(s->core.active, s->core.flows, s->core.pos, s->core.pos_free, s->core.proutes,
               s->core.busy_routes, s->core.busy);
  fs__pool_free(&s->tf_pool);
  FS__FREE_ALL(s->tf_slot, s->tf_done, s->tf_rtt, s->tf_conn, s->payload, s->tail_reach,
               s->tail_rate, s->small, s->fifo_nx, s->paths, s->lrep, s->lorb, s->fifo_head,
               s->fifo_tail, s->src_busy, s->cap_base, s->lcount, s->share_pend, s->share_marked,
               s->core.cap_Bps, s->core.dirty_links, s->core.is_dirty, s->core.load,
               s->core.gone_load, s->core.gone_max, s->core.arrived, s->core.src_phase,
               s->core.src_w, s->core.src_y);
  for (int32_t i = 0; i < s->n_model; i++) s->model[i].m->free(s, s->model[i].st);
  FS__FREE_ALL(s->items, s->tasks, s->edges, s->dep_start, s->dep_list, s->active_list, s->started,
               s->timers, s->cycle, s->link_stats);
  fs__lazy_free(s);
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
  if (off + (size_t)n > INT32_MAX ||
      fs__grow(&c->pos, &c->pos_cap, off + (size_t)n, sizeof(int32_t)))
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
  if (p->type >= EV_MODEL) {
    const fs__mslot *m = &s->model[s->ev_owner[p->type]];
    return !m->m->ev_live || m->m->ev_live(s, m->st, p->type - m->ev_base, p->item, p->version);
  }
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
int fs__evq_compact(fs_sim *s) {
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

int fs__evq_push(fs_sim *s, double t, int32_t type, int32_t item, uint32_t version) {
  evq *q = &s->heap;
  if (q->pl_len == q->pl_cap && fs__evq_compact(s)) return FS_ENOMEM;
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
  if (p->type == EV_DRAIN || p->type == EV_REENTER || p->type == EV_WINDOW)
    s->core.flows[s->items[p->item].idx].pending = 0;
  evq_take(q, r);
  return 1;
}

/* A flow of a pruned route comes (+1) or goes (-1): the route's left-out
 * links are busy while any flow over them is in flight. */
static void route_busy(fs_sim *s, int32_t rid, int delta) {
  fs__simcore *c = &s->core;
  fs__proute *p = &c->proutes[rid];
  int32_t was = p->n_active;
  p->n_active += delta;
  if ((was != 0 && p->n_active != 0) || p->busy < 0) return;
  fs__busy *g = &c->busy[p->busy]; /* (its links are busy while any of its group is) */
  was = g->n_active;
  g->n_active += delta;
  if (was != 0 && g->n_active != 0) return;
  for (int32_t k = 0; k < g->n; k++) {
    int32_t l = g->links[k];
    if (delta > 0 && c->busy_routes[l]++ == 0) c->active[l].busy_since = s->now;
    if (delta < 0 && --c->busy_routes[l] == 0)
      s->link_stats[l].busy_s += s->now - c->active[l].busy_since;
  }
}

/* Puts a flow on its links with its bytes left unchanged; its rate is set
 * by the batch's re-rating. */
int fs__flow_link(fs_sim *s, int32_t fi) {
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
    if (s->cap_base && fs__share_note(s, fi, k, 1)) return FS_ENOMEM;
  }
  if (f->rid >= 0) route_busy(s, f->rid, 1);
  f->rate = 0;
  f->last_s = s->now;
  if (s->tf_slot && s->tf_slot[fi] >= 0) {
    pkt_route p = fs__packet_route(s, fi);
    TF(s, fi)->on_s = s->now;
    TF(s, fi)->on_all_s = s->now + fs__port_reach_s(s, p, p.n);
  }
  for (int32_t i = 0; i < s->n_model; i++)
    if (s->model[i].m->flow_on && s->model[i].m->flow_on(s, s->model[i].st, fi)) return FS_ENOMEM;
  f->active_idx = s->n_active;
  s->active_list[s->n_active++] = fi;
  if (s->n_active > s->counters.max_active) s->counters.max_active = s->n_active;
  return 0;
}

/* Flow fi is listed among the started (fs_sim_started_flow), unless a plan
 * instance made it: those are not the run's items. */
static void note_started(fs_sim *s, int32_t fi) {
  if (!fs__lazy_item(s, s->core.flows[fi].item)) s->started[s->n_started++] = s->core.flows[fi].item;
}

/* Flow fi sends its first byte: all its bytes are left, and it counts as
 * started; it takes its links now or (held) later, or runs as packets. */
int fs__flow_starts(fs_sim *s, int32_t fi) {
  s->core.flows[fi].remaining = s->core.flows[fi].bytes;
  for (int32_t i = 0; i < s->n_model; i++) /* e.g. its queue pair starts at line rate */
    if (s->model[i].m->flow_start && s->model[i].m->flow_start(s, s->model[i].st, fi))
      return FS_ENOMEM;
  note_started(s, fi);
  return 0;
}

/* The core's part of that (a model that runs the flow itself calls it):
 * all its bytes are left, and it counts as started. */
void fs__flow_counted(fs_sim *s, int32_t fi) {
  s->core.flows[fi].remaining = s->core.flows[fi].bytes;
  note_started(s, fi);
}

int fs__flow_enter(fs_sim *s, int32_t fi) {
  return fs__flow_starts(s, fi) ? FS_ENOMEM : fs__flow_link(s, fi);
}

/* Takes a flow off its links and out of the active list. */
int fs__flow_unlink(fs_sim *s, int32_t fi) {
  fs__simcore *c = &s->core;
  fs__flow *f = &c->flows[fi];
  for (int32_t i = 0; i < s->n_model; i++) /* e.g. its port queues let it go */
    if (s->model[i].m->flow_off && s->model[i].m->flow_off(s, s->model[i].st, fi))
      return FS_ENOMEM;
  note_leaver(c, f->rate);
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
    if (s->cap_base && fs__share_note(s, fi, k, -1)) return FS_ENOMEM;
  }
  int32_t moved = s->active_list[--s->n_active];
  if (moved != fi) {
    s->active_list[f->active_idx] = moved;
    c->flows[moved].active_idx = f->active_idx;
  }
  f->active_idx = -1;
  f->rate = 0;
  if (f->rid >= 0) route_busy(s, f->rid, -1);
  int rc = pos_release(c, f->pos, f->n);
  f->pos = -1;
  return rc;
}

static int flow_leave(fs_sim *s, int32_t fi) {
  fs__flow *f = &s->core.flows[fi];
  if (s->bins.n) fs__bins_flow(&s->bins, &s->core, f, f->last_s, s->now, f->remaining);
  int rc = fs__flow_unlink(s, fi);
  s->core.flows[fi].remaining = 0;
  return rc;
}

/* Bytes left now, at the current rate since last_s. */
void fs__settle(fs_sim *s, fs__flow *f) {
  double t0 = f->last_s, before = f->remaining;
  if (s->tail_rate && s->now > t0) s->tail_rate[f - s->core.flows] = f->rate;
  double sent = fs__sent_since(s, f);
  if (s->tf_slot) TF(s, (int32_t)(f - s->core.flows))->budget -= sent;
  f->remaining -= sent;
  if (f->remaining < 0) f->remaining = 0;
  f->last_s = s->now;
  if (s->bins.n) fs__bins_flow(&s->bins, &s->core, f, t0, s->now, before - f->remaining);
}

/* Charges the bytes sent since the last charge to the flow's route. */
void fs__charge(fs_sim *s, fs__flow *f) {
  fs__simcore *c = &s->core;
  double sent = f->bytes - f->remaining - f->accounted;
  if (!(sent > 0)) return;
  for (int32_t k = 0; k < f->n; k++)
    s->link_stats[f->links[k]].bytes += sent * f->w[k];
  if (f->rid >= 0) c->proutes[f->rid].bytes += sent; /* left-out links: at the end */
  f->accounted += sent;
}

/* A flow's dependencies and start time are met (it counts as started):
 * under tcp a new connection first spends its handshake. */
static int flow_begin(fs_sim *s, int32_t id) {
  int32_t fi = s->items[id].idx;
  if (s->route_hook && !fs__lazy_item(s, id)) {
    int rc = fs__route_hook(s, id);
    if (rc) return rc;
  }
  for (int32_t i = 0; i < s->n_model; i++) /* e.g. its packets, beside the fluid */
    if (s->model[i].m->flow_begin) {
      int rc = s->model[i].m->flow_begin(s, s->model[i].st, fi);
      if (rc) return rc < 0 ? rc : 0;
    }
  return fs__flow_enter(s, fi);
}

/* Dependencies are met: start now, or schedule the earliest start. */
int fs__item_ready(fs_sim *s, int32_t id) {
  sim_item *it = &s->items[id];
  double t0 = (double)it->start_ns * 1e-9;
  if (t0 < s->now) t0 = s->now;
  it->state = ST_READY;
  if (it->kind == FS_ITEM_TASK) {
    it->start_s = t0;
    it->state = ST_RUN;
    double dur = s->tasks[it->idx].duration_s;
    return fs__evq_push(s, t0 + dur, EV_TASK_DONE, id, 0);
  }
  if (t0 > s->now) return fs__evq_push(s, t0, EV_START, id, 0);
  it->start_s = s->now;
  it->state = ST_RUN;
  fs__flow *f = &s->core.flows[it->idx];
  if (f->bytes <= 0) {
    int rc = fs__evq_push(s, s->now + f->latency_s, EV_FLOW_DONE, id, 0);
    return rc ? rc : fs__release(s, id, DEP_SENT);
  }
  return flow_begin(s, id);
}

/* Releases the dependents of `id` waiting on `kind` (its finish, or for a
 * flow the moment its last byte left the source). */
int fs__release(fs_sim *s, int32_t id, int32_t kind) {
  if (fs__lazy_item(s, id)) return fs__lazy_release(s, id, kind, 0);
  for (int32_t k = s->dep_start[id]; k < s->dep_start[id + 1]; k++) {
    if (s->dep_list[k] < 0) { /* a plan instance's start: its items first (lazy.c) */
      int rc = kind == DEP_DONE ? fs__lazy_begin(s, -s->dep_list[k] - 1) : 0;
      if (rc) return rc;
      continue;
    }
    if (s->dep_list[k] % 2 != kind) continue;
    int32_t d = s->dep_list[k] / 2;
    if (--s->items[d].deps_left == 0) {
      int rc = fs__item_ready(s, d);
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
  if (fs__lazy_item(s, id)) return fs__lazy_release(s, id, DEP_DONE, 1);
  s->items_done++;
  return fs__release(s, id, DEP_DONE);
}

static int handle(fs_sim *s, const fs__event *e) {
  if (e->type >= EV_MODEL) { /* a model's own */
    const fs__mslot *m = &s->model[s->ev_owner[e->type]];
    return m->m->event(s, m->st, e->type - m->ev_base, e);
  }
  sim_item *it = e->type == EV_TIMER ? NULL : &s->items[e->item];
  switch (e->type) {
    case EV_START: {
      it->start_s = s->now;
      it->state = ST_RUN;
      fs__flow *f = &s->core.flows[it->idx];
      if (f->bytes <= 0) {
        int rc = fs__evq_push(s, s->now + f->latency_s, EV_FLOW_DONE, e->item, 0);
        return rc ? rc : fs__release(s, e->item, DEP_SENT);
      }
      return flow_begin(s, e->item);
    }
    case EV_DRAIN: {
      fs__flow *f = &s->core.flows[it->idx];
      for (int32_t i = 0; i < s->n_model; i++) /* e.g. what packets took: still to send */
        if (s->model[i].m->owed) {
          int rc = s->model[i].m->owed(s, s->model[i].st, it->idx);
          if (rc) return rc < 0 ? rc : 0;
        }
      double tail = fs__tail_wait(s, it->idx);
      int rc = flow_leave(s, it->idx), taken = 0;
      for (int32_t i = 0; i < s->n_model && !rc && !taken; i++)
        if (s->model[i].m->sent) { /* a model's finish (its queues) */
          rc = s->model[i].m->sent(s, s->model[i].st, it->idx, tail);
          taken = rc > 0;
          rc = rc < 0 ? rc : 0;
        }
      if (!rc && !taken)
        rc = fs__evq_push(s, s->now + f->latency_s + tail, EV_FLOW_DONE, e->item, 0);
      if (!rc && s->small) rc = fs__fifo_next(s, it->idx);
      return rc ? rc : fs__release(s, e->item, DEP_SENT);
    }
    case EV_WINDOW:
      return fs__window_sent(s, it->idx);
    case EV_FLOW_DONE: {
      for (int32_t i = 0; i < s->n_model; i++)
        if (s->model[i].m->flow_done) s->model[i].m->flow_done(s, s->model[i].st, it->idx);
      return item_finished(s, e->item);
    }
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
        int rc = fs__round_begins(s, it->idx);
        if (rc) return rc;
        double wait = fs__entry_wait_s(s, it->idx);
        if (wait > 0) /* its window reaches its bottleneck behind the queue */
          return fs__reenter_at(s, f, s->now + wait);
      }
      f->held = 0;
      return fs__flow_link(s, it->idx);
    }
  }
  return FS_EINTERNAL;
}

/* When flow f (rate > 0) next needs attention: its drain, or under tcp
 * slow start the end of its window's bytes. */
int fs__predict(fs_sim *s, fs__flow *f) {
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
  if (fs__evq_push(s, t, type, f->item, f->version)) return FS_ENOMEM;
  f->pending = 1;
  return 0;
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

/* Re-rates the component touched by this batch and predicts drains. */
static int rerate(fs_sim *s) {
  fs__simcore *c = &s->core;
  if (s->n_tf_done) fs__tf_release_done(s);
  if (s->rater) return s->rater->m->rerate(s, s->rater->st);
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
  for (int32_t i = 0; i < s->n_model; i++) /* e.g. the source queues' new shares */
    if (s->model[i].m->filled) {
      int rc = s->model[i].m->filled(s, s->model[i].st);
      if (rc < 0) return rc;
    }
  for (int32_t i = 0; i < s->mm.n_comp_flows; i++) {
    int32_t fi = s->mm.comp_flows[i];
    fs__flow *f = &c->flows[fi];
    double r = s->mm.new_rate[fi];
    if (r == f->rate) continue;
    fs__settle(s, f);
    for (int32_t k = 0; k < f->n; k++)
      if (!fs__skip(c, fi, k) && !fs__inject(c, fi, k))
        c->load[f->links[k]] += f->w[k] * (r - f->rate);
    f->rate = r;
    supersede(s, f);
    if (fs__predict(s, f)) return FS_ENOMEM;
  }
  for (int32_t i = 0; i < s->n_model; i++) /* e.g. where each flow queues, and how much */
    if (s->model[i].m->rerated) {
      int rc = s->model[i].m->rerated(s, s->model[i].st);
      if (rc < 0) return rc;
    }
  /* Dead drains pile up by one per re-rating; squeeze them out once they
   * outnumber the live events (amortised O(1) per re-rating). */
  if (s->heap.stale > 1024 && 2 * s->heap.stale > s->heap.count && fs__evq_compact(s))
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
      fs__maxmin_init(&s->mm, t->n_links, c->n_flows) || fs__build_deps(s))
    return fs_err_set(err, FS_ENOMEM, "out of memory starting simulation");
  for (size_t l = 0; l < L; l++) c->cap_Bps[l] = t->links[l].capacity_bps / 8.0;
  c->theta = INFINITY;
  return fs__check_acyclic(s, err);
}

/* The batch is over: each model's end of batch (the rate control steps). */
static int batch_end(fs_sim *s) {
  for (int32_t i = 0; i < s->n_model; i++)
    if (s->model[i].m->batch) {
      int rc = s->model[i].m->batch(s, s->model[i].st);
      if (rc < 0) return rc;
    }
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
  if (rc || (rc = fs__lazy_setup(s, err))) return rc;
  if (s->check_rerate && fs__maxmin_init(&s->mm_check, s->core.t->n_links, s->core.n_flows))
    return fs_err_set(err, FS_ENOMEM, "out of memory starting simulation");
  if (fs__bins_init(&s->bins, s->core.t->n_links, opts->link_bins))
    return fs_err_set(err, FS_ENOMEM, "out of memory starting simulation");
  if (s->paths && !s->lrep && s->tp.kind != FS_TRANSPORT_FLUID)
    return fs_err_set(err, FS_EINVAL,
                      "flows on quotient routes under a transport model need the symmetry "
                      "(fs_sim_set_symmetry)");
  if ((rc = fs__transport_setup(s)))
    return fs_err_set(err, rc, "out of memory starting simulation");
  /* (under DCQCN every link may queue: none is left out) */
  int all_links = 0;
  for (int32_t i = 0; i < s->n_model; i++)
    all_links |= s->model[i].m->all_links && s->model[i].m->all_links(s, s->model[i].st);
  int prune = !s->n_timers && !opts->observe && !opts->rate_all_links && !all_links;
  uint8_t **bind = NULL; /* (a model that reads which links may bind) */
  for (int32_t i = 0; i < s->n_model && !bind; i++)
    if (s->model[i].m->bind_map) bind = s->model[i].m->bind_map(s, s->model[i].st);
  if (prune || (bind && !s->n_timers)) {
    int64_t pruned;
    if (fs__prune(&s->core, &s->lazy, &s->arena, s->tp.efficiency, s->core.src_phase != NULL,
                  prune, bind, &pruned))
      return fs_err_set(err, FS_ENOMEM, "out of memory starting simulation");
    s->counters.links_left_out = pruned;
    if (pruned && !(s->core.busy_routes = calloc((size_t)s->core.t->n_links, sizeof(int32_t))))
      return fs_err_set(err, FS_ENOMEM, "out of memory starting simulation");
  }
  s->now = 0;
  for (size_t i = 0; i < s->n_items; i++)
    if (s->items[i].deps_left == 0 && (rc = fs__item_ready(s, (int32_t)i)) < 0) goto fail;
  if (s->n_share_pend) fs__share_apply(s);
  if ((rc = batch_end(s)) < 0) goto fail;
  if ((rc = rerate(s)) < 0) goto fail;
  if (opts->observe) opts->observe(opts->observe_ctx, s, s->now);
  fs__event e;
  /* The clock moves only to live events: a dead drain prediction later than
   * everything real must not leave `now` past the last event. */
  for (;;) {
    /* a model's own clock first at a tie (packets): what it finishes joins
     * the batch */
    int clocked = 0;
    for (int32_t i = 0; i < s->n_model && !clocked; i++) {
      const fs__mslot *m = &s->model[i];
      double tp = m->m->next_t ? m->m->next_t(m->st) : INFINITY;
      if (tp < INFINITY && !(evq_top_live_t(s) < tp)) {
        s->now = tp;
        if ((rc = m->m->step(s, m->st)) < 0) goto fail;
        clocked = 1;
      }
    }
    if (clocked) continue;
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
    if (s->n_share_pend) fs__share_apply(s);
    if ((rc = batch_end(s)) < 0) goto fail;
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
  /* (the instances' flows in their places: the flows' order is the sums') */
  size_t next_inst = 0;
  int32_t n_added = s->lazy.n_inst ? s->lazy.n_added : s->core.n_flows; /* (not the slots made) */
  for (int32_t fi = 0; fi <= n_added; fi++) {
    fs__lazy_charge(s, &next_inst, fi);
    if (fi == n_added) break;
    fs__flow *f = &s->core.flows[fi];
    f->remaining = 0;
    fs__charge(s, f);
  }
  for (int32_t r = 0; r < s->core.n_proutes; r++) {
    const fs__proute *p = &s->core.proutes[r];
    for (int32_t k = p->n_kept; k < p->n_kept + p->n_gone; k++)
      s->link_stats[p->kept[k]].bytes += p->bytes * p->kept_w[k];
  }
  fs__bins_finish(&s->bins, s->makespan);
  /* a quotient's flows load only representative links: each stands for its
   * orbit (docs/model-symm.md), so the others read what it carried */
  if (s->lrep) {
    fs__bins_expand(&s->bins, s->lrep);
    for (int32_t l = 0; l < s->core.t->n_links; l++)
      if (s->lrep[l] != l) s->link_stats[l] = s->link_stats[s->lrep[l]];
  }
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
