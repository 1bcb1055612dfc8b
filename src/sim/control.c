/* Set-up of the transport before a run and control during it: the
 * per-flow transport state fixed by each route (transport_setup: wire
 * bytes, round trips, the source FIFOs of tcp, the arrays of the models in
 * use), symmetry and transport settings, and what changes while the run
 * goes on: timers, link capacities (failures), re-routing. Per flow: its
 * payload, tail reach (8 + 8 bytes) and, under tcp, 13-49 bytes (see
 * transport_setup); per link: what the models keep. A capacity change or
 * re-route costs O(flows on the link x their route lengths). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* Link l's capacity becomes Bps now. Every flow on it leaves and comes back
 * as an arrival (rate 0), so all its links are changed links: the
 * re-rating judges the other links' bottlenecks by their flows' old rates,
 * which this flow no longer has. */
void fs__capacity_changed(fs_sim *s, int32_t link, double Bps) {
  fs__simcore *c = &s->core;
  c->cap_Bps[link] = Bps;
  for (int32_t i = 0; i < s->n_model; i++)
    if (s->model[i].m->capacity) s->model[i].m->capacity(s, s->model[i].st, link);
  fs__link_active *a = &c->active[link];
  for (int32_t j = 0; j < a->n; j++) {
    int32_t fi = a->flow[j];
    fs__flow *f = &c->flows[fi];
    fs__settle(s, f);
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

/* The transport models behind hooks (model.h), in the order the core
 * calls them: a new model is a file and a line here. */
const fs__model *const fs__models[] = {&fs__model_ratectl, &fs__model_portq, &fs__model_hybrid,
                                         &fs__model_tcp, NULL};

/* Sets up the models this run uses, each with its range of event types.
 * 0 or FS_ENOMEM (those set up are freed with the simulation). */
static int models_setup(fs_sim *s) {
  int32_t base = EV_MODEL;
  for (int i = 0; fs__models[i]; i++) {
    const fs__model *m = fs__models[i];
    if (s->n_model == FS__MAX_MODELS || base + m->n_events > EV_MAX) return FS_EINTERNAL;
    fs__mslot *slot = &s->model[s->n_model];
    *slot = (fs__mslot){m, NULL, base};
    int rc = m->setup(s, slot);
    if (rc < 0) return rc;
    if (!rc) continue;
    for (int32_t k = 0; k < m->n_events; k++) s->ev_owner[base + k] = (int8_t)s->n_model;
    base += m->n_events;
    if (m->rerate && !s->rater) s->rater = slot;
    s->n_model++;
  }
  return 0;
}

/* tcp/rdma: per-flow transport state from the whole routes (before they
 * are pruned), the source FIFOs, and the capacities before efficiency. */
int fs__transport_setup(fs_sim *s) {
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
  int rc = models_setup(s); /* (it reads the packets' routes: before they go) */
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
  if (s->tp.efficiency < 1) {
    if (!(s->cap_base = fs__malloc(L ? L : 1, sizeof(double))) ||
        !(s->share_marked = calloc(L ? L : 1, 1)) ||
        (s->lrep && !(s->lcount = calloc(L ? L : 1, sizeof(double)))))
      return FS_ENOMEM;
    memcpy(s->cap_base, c->cap_Bps, L * sizeof(double));
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

/* ---- control during a run ---- */
int fs_sim_add_timer(fs_sim *s, double at_s, fs_sim_timer_fn fn, void *ctx, fs_err *err) {
  if (!fn || !(at_s >= 0) || !isfinite(at_s))
    return fs_err_set(err, FS_EINVAL, "timer needs a callback and a finite time >= 0, got %g s",
                      at_s);
  if (at_s < s->now) at_s = s->now;
  if (s->n_timers >= INT32_MAX ||
      fs__grow(&s->timers, &s->timers_cap, s->n_timers + 1, sizeof(*s->timers)) ||
      fs__evq_push(s, at_s, EV_TIMER, (int32_t)s->n_timers, 0))
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
    fs__capacity_changed(s, link, bps / 8.0 * (fs__link_shared(s, link) ? s->tp.efficiency : 1));
  } else {
    fs__capacity_changed(s, link, bps / 8.0);
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
  } else if (fs__copy_route(s, f, route)) {
    return FS_ENOMEM;
  }
  f->n = route->n;
  for (int32_t i = 0; i < s->n_model; i++)
    if (s->model[i].m->rerouted) s->model[i].m->rerouted(s, s->model[i].st, fi);
  f->latency_s = (double)route->latency_ns * 1e-9;
  if (s->payload)
    f->latency_s += fs__transport_store_s(&s->tp, &s->core, f, s->payload[fi]);
  if (s->tail_reach)
    s->tail_reach[fi] = fs__transport_tail_reach_s(
        &s->tp, s->cap_base ? s->cap_base : s->core.cap_Bps, f->links, f->w, f->n,
        s->payload[fi]);
  return 0;
}

int fs__route_hook(fs_sim *s, int32_t item) {
  const fs_route *r = NULL;
  int rc = s->route_hook(s->route_ctx, s, item, &r);
  if (rc) return rc;
  return r ? set_route(s, s->items[item].idx, r) : 0;
}

int fs_sim_set_route_hook(fs_sim *s, fs_sim_route_fn fn, void *ctx, fs_err *err) {
  if (!fn || s->route_hook)
    return fs_err_set(err, FS_EINVAL, fn ? "a route hook is set already" : "no route hook given");
  s->route_hook = fn;
  s->route_ctx = ctx;
  return 0;
}

int fs_sim_reroute(fs_sim *s, int32_t item, const fs_route *route, double hold_s, fs_err *err) {
  fs__simcore *c = &s->core;
  if (item < 0 || (size_t)item >= s->n_items || s->items[item].kind != FS_ITEM_FLOW)
    return fs_err_set(err, FS_EINVAL, "item %d is not a flow", item);
  if (!route || route->n < 1)
    return fs_err_set(err, FS_EINVAL, "re-route of flow %d: empty route", item);
  int32_t bad = fs__bad_entry(c->t, route);
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
      fs__settle(s, f);
      fs__charge(s, f);
      if ((rc = fs__flow_unlink(s, fi))) goto fail;
    }
    supersede(s, f); /* a pending drain or re-entry */
    /* its own hold (or none) replaces a wait for its round's first ACK,
     * which must not re-schedule the re-entry when that ACK leaves */
    if (s->tf_slot) TF(s, fi)->round_hold = 0;
    if ((rc = set_route(s, fi, route))) goto fail;
    if (hold_s > 0) {
      rc = fs__reenter_at(s, f, s->now + hold_s);
    } else {
      f->held = 0;
      rc = fs__flow_link(s, fi);
    }
  }
fail:
  return rc ? fs_err_set(err, rc, "out of memory re-routing flow %d", item) : moved;
}
