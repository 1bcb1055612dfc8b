/* The OCS layer and its controller (ocsctl.h; docs/model-ocs.md,
 * "Circuits during an iteration").
 *
 * Flows between two leaves are indexed once by ordered leaf pair (CSR), with
 * a copy of their electrical route and where it reaches its first leaf and
 * leaves its last, so putting a flow on a circuit or back costs its route's
 * length. A decision costs O(flows in the window + L) plus sorting the
 * window's pairs; a change costs the flows of the pairs it changes. */
#include "fabricsim/ocsctl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"

typedef struct flowvec {
  int32_t *v;
  int32_t n, cap;
} flowvec;

typedef struct upair {
  double w; /* the heavier direction's bytes */
  int32_t u;
} upair;

struct fs_ocsctl {
  fs_sim *sim;
  const fs_topo *t;
  fs_ocsctl_opts o;
  int32_t first_link, L;
  int32_t *leaves, *leaf_idx; /* leaf -> node, node -> leaf (-1) */
  double *up_Bps, *down_Bps;  /* a leaf's electrical capacity to and from the fabric */
  /* circuits per unordered pair (index a * L + b, a < b): target (what
   * the last decision set) and lit (carrying now) */
  int32_t *target, *lit, *ports_used;
  /* flows between two leaves */
  int32_t *item_pair;                /* per item: ordered pair a * L + b, -1 if none */
  flowvec *inflight;                 /* per ordered pair: its flows started (some
                                        finished since: dropped when met) */
  int64_t *elec_off;                 /* per item: its electrical route in elec */
  int32_t *elec;
  uint8_t *elec_n, *up_n, *down_at;  /* route length; links up to its leaf; first link down */
  uint8_t *on_circuit;
  /* which of a pair's flows ride its circuits: flow slot occurrence x H +
   * rank, rank its (source, destination) hosts' among the pair's H host
   * pairs, occurrence how many flows of those hosts came before it */
  int32_t *item_rank, *item_occ, *pair_hosts;
  /* the window of the last interval */
  int32_t seen_started, *live, n_live;
  double *pair_bytes; /* ordered pairs */
  uint32_t *pair_stamp, stamp;
  int32_t *win, n_win;        /* ordered pairs in the window */
  upair *ups;                 /* unordered pairs of the window, heaviest first */
  int32_t n_upairs;
  uint32_t *ustamp;           /* unordered pair in the window: == stamp */
  int32_t *touch;             /* scratch: the pairs a decision may change */
  int32_t *cand;              /* candidate configuration (unordered pairs) */
  double *leaf_out, *leaf_in;
  double busy_until;
  int32_t *pending, n_pending; /* pairs to light when the reconfiguration ends */
  fs_ocsctl_change *ch;
  size_t n_ch, cap_ch;
  fs_route rt;
  fs_ocsctl_stats st;
};

const char *fs_ocsctl_policy_name(fs_ocsctl_policy p) {
  return p == FS_OCSCTL_ADAPTIVE ? "adaptive" : "static";
}

static const struct {
  const char *name;
  double delay_s;
} TECH[] = {{"mems", 10e-3}, {"wss", 11.5e-6}, {"sip", 25e-6}, {"laser", 3.84e-9}};

int fs_ocsctl_technology(const char *name, double *reconfig_s) {
  for (size_t i = 0; i < sizeof(TECH) / sizeof(TECH[0]); i++)
    if (!strcmp(name, TECH[i].name)) {
      *reconfig_s = TECH[i].delay_s;
      return 0;
    }
  return FS_EINVAL;
}

double fs_ocsctl_default_interval(double reconfig_s) { return fmax(10 * reconfig_s, 1e-3); }

void fs_ocsctl_opts_init(fs_ocsctl_opts *o) {
  memset(o, 0, sizeof(*o));
  o->gbps = 400;
  o->latency_ns = 500;
  o->reconfig_s = 10e-3;
  o->interval_s = fs_ocsctl_default_interval(o->reconfig_s);
  o->policy = FS_OCSCTL_ADAPTIVE;
  snprintf(o->technology, sizeof(o->technology), "mems");
}

static int is_leaf(const fs_topo *t, int32_t v) {
  return t->nodes[v].kind == FS_NODE_SWITCH && t->nodes[v].tier == 1;
}

int32_t fs_ocsctl_leaves(const fs_topo *t, int32_t *leaves, int32_t max) {
  int32_t n = 0;
  for (int32_t v = 0; v < t->n_nodes; v++)
    if (is_leaf(t, v)) {
      if (n < max) leaves[n] = v;
      n++;
    }
  return n;
}

int fs_ocsctl_topo(const fs_topo *t, const fs_ocsctl_opts *o, fs_topo **out, fs_err *err) {
  int32_t L = fs_ocsctl_leaves(t, NULL, 0);
  if (L < 2)
    return fs_err_set(err, FS_EINVAL,
                      "an OCS layer joins leaves (tier-1 switches): %s has %d, needs at least 2",
                      t->spec, L);
  for (int32_t l = 0; l < t->n_links; l++)
    if (t->links[l].reverse != (l ^ 1))
      return fs_err_set(err, FS_EINVAL,
                        "%s: an OCS layer needs the topology's cables as consecutive link pairs",
                        t->spec);
  if ((int64_t)t->n_links + (int64_t)L * (L - 1) > INT32_MAX / 2)
    return fs_err_set(err, FS_EINVAL, "an OCS layer over %d leaves is too large", L);
  int32_t *leaves = fs__malloc((size_t)L, sizeof(int32_t));
  if (!leaves) return fs_err_set(err, FS_ENOMEM, "out of memory building the OCS layer");
  fs_ocsctl_leaves(t, leaves, L);
  fs_topo_builder b;
  int rc = fs_topo_builder_init(&b, t->family, t->n_nodes, t->n_links + L * (L - 1), err);
  if (rc) {
    free(leaves);
    return rc;
  }
  if (fs_topo_builder_copy(&b, t, NULL, NULL)) goto oom;
  /* (one cable per unordered pair: link a->b then b->a, so the ordered
   * pair (a, b), a < b, is link first + 2 * index and its reverse the next) */
  for (int32_t a = 0; a < L; a++)
    for (int32_t c = a + 1; c < L; c++)
      if (fs_topo_builder_cable(&b, leaves[a], leaves[c], o->gbps * 1e9, o->latency_ns) < 0)
        goto oom;
  free(leaves);
  return fs_topo_builder_finish(&b, out, err);
oom:
  free(leaves);
  fs_topo_builder_abort(&b);
  return fs_err_set(err, FS_ENOMEM, "out of memory building the OCS layer");
}

/* The circuit link from leaf a to leaf b (a != b). */
static int32_t circuit_link(const fs_ocsctl *c, int32_t a, int32_t b) {
  int32_t lo = a < b ? a : b, hi = a < b ? b : a, L = c->L;
  int64_t idx = (int64_t)lo * (2 * L - lo - 1) / 2 + (hi - lo - 1);
  return c->first_link + (int32_t)(2 * idx) + (a > b);
}

/* ---- routes ---- */
static int route_reserve(fs_route *r, int32_t n) {
  if (r->cap >= n) return 0;
  int32_t *l = realloc(r->links, (size_t)n * sizeof(int32_t));
  if (!l) return FS_ENOMEM;
  r->links = l;
  double *w = realloc(r->weights, (size_t)n * sizeof(double));
  if (!w) return FS_ENOMEM;
  r->weights = w;
  r->cap = n;
  return 0;
}

/* Item it's route: on its pair's circuit, or its electrical one. */
static int build_route(fs_ocsctl *c, int32_t it, int circuit) {
  const int32_t *e = c->elec + c->elec_off[it];
  int32_t n = c->elec_n[it], k = 0;
  if (route_reserve(&c->rt, n)) return FS_ENOMEM;
  if (!circuit) {
    for (; k < n; k++) c->rt.links[k] = e[k];
  } else {
    int32_t p = c->item_pair[it], a = p / c->L, b = p % c->L;
    for (int32_t i = 0; i < c->up_n[it]; i++) c->rt.links[k++] = e[i];
    c->rt.links[k++] = circuit_link(c, a, b);
    for (int32_t i = c->down_at[it]; i < n; i++) c->rt.links[k++] = e[i];
  }
  c->rt.n = c->rt.hops = k;
  c->rt.n_paths = 1;
  c->rt.latency_ns = 0;
  for (int32_t i = 0; i < k; i++) {
    c->rt.weights[i] = 1;
    c->rt.latency_ns += c->t->links[c->rt.links[i]].latency_ns;
  }
  return 0;
}

/* The share of ordered pair (a, b)'s flows that ride its n circuits: in
 * proportion to the circuits' capacity against the most the electrical
 * fabric can give the pair (its leaves' uplink and downlink), as if the
 * circuits were more equal-cost paths weighted by capacity. 1 with no
 * electrical path. */
static double circuit_share(const fs_ocsctl *c, int32_t a, int32_t b, int32_t n) {
  if (n <= 0) return 0;
  double circ = n * c->o.gbps * 1e9 / 8, elec = fmin(c->up_Bps[a], c->down_Bps[b]);
  return circ / (circ + elec);
}

/* Whether item it rides its pair's n circuits: iff floor((j + 1) f) >
 * floor(j f), f the pair's share and j the flow's slot. Flows that run at
 * the same time (the same step of a collective over different hosts) have
 * consecutive slots, so a share f of them takes the circuits, as
 * per-host-pair hashing would spread them over capacity-weighted paths. */
static int rides_circuit(const fs_ocsctl *c, int32_t it, int32_t n) {
  int32_t p = c->item_pair[it];
  double f = circuit_share(c, p / c->L, p % c->L, n);
  double j = (double)c->item_occ[it] * c->pair_hosts[p] + c->item_rank[it];
  return floor((j + 1) * f) > floor(j * f);
}

static int32_t lit_of(const fs_ocsctl *c, int32_t p) {
  int32_t a = p / c->L, b = p % c->L;
  return c->lit[a < b ? a * c->L + b : b * c->L + a];
}

/* The route hook (sim.h): a flow between two leaves starts on a circuit
 * or not as the circuits lit now say; it joins its pair's flows in flight. */
static int on_start(void *ctx, const fs_sim *s, int32_t it, const fs_route **route) {
  (void)s;
  fs_ocsctl *c = ctx;
  int32_t p = c->item_pair[it];
  if (p < 0) return 0;
  flowvec *fv = &c->inflight[p];
  if (fv->n == fv->cap) { /* drop the finished first; grow only if still full */
    int32_t k = 0;
    for (int32_t i = 0; i < fv->n; i++)
      if (!fs_sim_item_finished(c->sim, fv->v[i])) fv->v[k++] = fv->v[i];
    fv->n = k;
    if (fv->n == fv->cap) {
      size_t cap = (size_t)fv->cap;
      if (fs__grow(&fv->v, &cap, (size_t)fv->n + 1, sizeof(int32_t))) return FS_ENOMEM;
      fv->cap = (int32_t)cap;
    }
  }
  fv->v[fv->n++] = it;
  int circuit = rides_circuit(c, it, lit_of(c, p));
  if (circuit == c->on_circuit[it]) return 0;
  if (build_route(c, it, circuit)) return FS_ENOMEM;
  c->on_circuit[it] = (uint8_t)circuit;
  c->st.flows_moved++;
  *route = &c->rt;
  return 0;
}

/* Puts ordered pair p's flows in flight on its n circuits or off them
 * (flows still to start choose as they start: on_start). */
static int move_ordered(fs_ocsctl *c, int32_t p, int32_t n, fs_err *err) {
  flowvec *fv = &c->inflight[p];
  int32_t k = 0;
  for (int32_t i = 0; i < fv->n; i++) {
    int32_t it = fv->v[i];
    if (fs_sim_item_finished(c->sim, it)) continue;
    fv->v[k++] = it;
    int circuit = rides_circuit(c, it, n);
    if (c->on_circuit[it] == circuit) continue;
    if (build_route(c, it, circuit))
      return fs_err_set(err, FS_ENOMEM, "out of memory re-routing onto a circuit");
    int rc = fs_sim_reroute(c->sim, it, &c->rt, 0, err);
    if (rc < 0) return rc;
    c->on_circuit[it] = (uint8_t)circuit;
    c->st.flows_moved++;
  }
  fv->n = k;
  return 0;
}

/* Sets unordered pair u (a < b) to n lit circuits. */
static int set_lit(fs_ocsctl *c, int32_t u, int32_t n, fs_err *err) {
  int32_t a = u / c->L, b = u % c->L;
  int rc;
  if (n > 0) {
    double bps = n * c->o.gbps * 1e9;
    if ((rc = fs_sim_set_link_capacity(c->sim, circuit_link(c, a, b), bps, err)) ||
        (rc = fs_sim_set_link_capacity(c->sim, circuit_link(c, b, a), bps, err)))
      return rc;
  }
  c->lit[u] = n;
  if ((rc = move_ordered(c, a * c->L + b, n, err))) return rc;
  return move_ordered(c, b * c->L + a, n, err);
}

static int log_change(fs_ocsctl *c, double at, double lit_at, int32_t u, int32_t from,
                      int32_t to) {
  if (c->n_ch == c->cap_ch && fs__grow(&c->ch, &c->cap_ch, c->n_ch + 1, sizeof(*c->ch)))
    return FS_ENOMEM;
  c->ch[c->n_ch++] =
      (fs_ocsctl_change){at, lit_at, c->leaves[u / c->L], c->leaves[u % c->L], from, to};
  return 0;
}

/* ---- configurations ---- */
static int by_weight(const void *x, const void *y) {
  const upair *a = x, *b = y;
  if (a->w != b->w) return a->w > b->w ? -1 : 1;
  return (a->u > b->u) - (a->u < b->u);
}

/* The configuration the window's pairs (c->ups, heaviest first) want,
 * into c->cand (zeroed first over them and the target's pairs): round r
 * gives an r-th circuit to each pair in weight order whose two leaves have
 * a port left; the ports left after the demand keep the target's circuits
 * (a circuit kept costs nothing). */
static void want(fs_ocsctl *c, const int32_t *keep, int32_t n_keep) {
  int32_t L = c->L, P = c->o.ports;
  for (int32_t i = 0; i < L; i++) c->ports_used[i] = 0;
  for (int32_t i = 0; i < c->n_upairs; i++) c->cand[c->ups[i].u] = 0;
  for (int32_t i = 0; i < n_keep; i++) c->cand[keep[i]] = 0;
  for (int32_t r = 1; r <= P; r++) {
    int any = 0;
    for (int32_t i = 0; i < c->n_upairs; i++) {
      int32_t u = c->ups[i].u, a = u / L, b = u % L;
      if (c->cand[u] != r - 1 || c->ports_used[a] >= P || c->ports_used[b] >= P) continue;
      c->cand[u] = r;
      c->ports_used[a]++;
      c->ports_used[b]++;
      any = 1;
    }
    if (!any) break;
  }
  for (int32_t i = 0; i < n_keep; i++) {
    int32_t u = keep[i], a = u / L, b = u % L;
    while (c->cand[u] < c->target[u] && c->ports_used[a] < P && c->ports_used[b] < P) {
      c->cand[u]++;
      c->ports_used[a]++;
      c->ports_used[b]++;
    }
  }
}

/* The time to carry the window's bytes under configuration cfg: the
 * slowest circuit (its share of a pair's bytes over its circuits) or the
 * busiest leaf's electrical uplink or downlink with the rest. */
static double carry_s(fs_ocsctl *c, const int32_t *cfg) {
  int32_t L = c->L;
  double worst = 0, Bps = c->o.gbps * 1e9 / 8;
  for (int32_t i = 0; i < L; i++) c->leaf_out[i] = c->leaf_in[i] = 0;
  for (int32_t i = 0; i < c->n_win; i++) {
    int32_t p = c->win[i], a = p / L, b = p % L, u = a < b ? a * L + b : b * L + a;
    double f = circuit_share(c, a, b, cfg[u]), bytes = c->pair_bytes[p];
    if (f > 0) worst = fmax(worst, f * bytes / (cfg[u] * Bps));
    c->leaf_out[a] += (1 - f) * bytes;
    c->leaf_in[b] += (1 - f) * bytes;
  }
  for (int32_t i = 0; i < L; i++) {
    if (c->leaf_out[i] > 0)
      worst = fmax(worst, c->up_Bps[i] > 0 ? c->leaf_out[i] / c->up_Bps[i] : INFINITY);
    if (c->leaf_in[i] > 0)
      worst = fmax(worst, c->down_Bps[i] > 0 ? c->leaf_in[i] / c->down_Bps[i] : INFINITY);
  }
  return worst;
}

/* The unordered pairs of the window, heaviest first (c->ups). */
static void window_pairs(fs_ocsctl *c) {
  int32_t L = c->L, n = 0;
  for (int32_t i = 0; i < c->n_win; i++) {
    int32_t p = c->win[i], a = p / L, b = p % L, u = a < b ? a * L + b : b * L + a;
    if (c->ustamp[u] == c->stamp) continue; /* counted with the other direction */
    int32_t q = b * L + a;
    double other = c->pair_stamp[q] == c->stamp ? c->pair_bytes[q] : 0;
    c->ustamp[u] = c->stamp;
    c->ups[n++] = (upair){fmax(c->pair_bytes[p], other), u};
  }
  qsort(c->ups, (size_t)n, sizeof(upair), by_weight);
  c->n_upairs = n;
}

static void window_add(fs_ocsctl *c, int32_t item, double bytes) {
  int32_t p = c->item_pair[item];
  if (p < 0) return;
  if (c->pair_stamp[p] != c->stamp) {
    c->pair_stamp[p] = c->stamp;
    c->pair_bytes[p] = 0;
    c->win[c->n_win++] = p;
  }
  c->pair_bytes[p] += bytes;
}

static void window_begin(fs_ocsctl *c) {
  if (++c->stamp == 0) {
    memset(c->pair_stamp, 0, (size_t)c->L * c->L * sizeof(uint32_t));
    memset(c->ustamp, 0, (size_t)c->L * c->L * sizeof(uint32_t));
    c->stamp = 1;
  }
  c->n_win = 0;
}

/* ---- the adaptive controller's timers ---- */
static int light_pending(void *ctx, fs_sim *s, double now, fs_err *err) {
  (void)s;
  (void)now;
  fs_ocsctl *c = ctx;
  for (int32_t i = 0; i < c->n_pending; i++) {
    int32_t u = c->pending[i];
    int rc = set_lit(c, u, c->target[u], err);
    if (rc) return rc;
  }
  c->n_pending = 0;
  return 0;
}

/* Makes c->cand the target: circuits taken away go at once (their flows to
 * the electrical fabric), new ones light after the delay. */
static int reconfigure(fs_ocsctl *c, double now, const int32_t *touched, int32_t n, fs_err *err) {
  double D = c->o.reconfig_s;
  int rc;
  c->n_pending = 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t u = touched[i], from = c->target[u], to = c->cand[u];
    if (from == to) continue;
    c->target[u] = to;
    if (to < from) {
      if ((rc = set_lit(c, u, to, err))) return rc;
    } else {
      c->pending[c->n_pending++] = u;
      c->st.circuits_set += to - from;
      c->st.dark_s += (to - from) * D;
    }
    if (log_change(c, now, to > from ? now + D : now, u, from, to))
      return fs_err_set(err, FS_ENOMEM, "out of memory logging circuits");
  }
  c->st.reconfigs++;
  c->busy_until = now + D;
  return c->n_pending ? fs_sim_add_timer(c->sim, now + D, light_pending, c, err) : 0;
}

static int decide(fs_ocsctl *c, double now, fs_err *err) {
  window_pairs(c);
  /* the pairs a change may touch: the window's, then those with circuits */
  int32_t n = 0, LL = c->L * c->L;
  for (int32_t i = 0; i < c->n_upairs; i++) c->touch[n++] = c->ups[i].u;
  for (int32_t u = 0; u < LL; u++)
    if (c->target[u] > 0 && c->ustamp[u] != c->stamp) c->touch[n++] = u;
  want(c, c->touch + c->n_upairs, n - c->n_upairs);
  int same = 1;
  for (int32_t i = 0; i < n && same; i++) same = c->cand[c->touch[i]] == c->target[c->touch[i]];
  if (same) return 0;
  c->st.decisions++;
  double stay = carry_s(c, c->target), go = carry_s(c, c->cand);
  if (c->o.reconfig_s + go < stay) return reconfigure(c, now, c->touch, n, err);
  c->st.declined++;
  return 0;
}

static int tick(void *ctx, fs_sim *s, double now, fs_err *err) {
  fs_ocsctl *c = ctx;
  int rc = 0;
  int32_t ns = fs_sim_n_started(s), kept = 0;
  window_begin(c);
  for (int32_t i = 0; i < c->n_live; i++)
    if (!fs_sim_item_finished(s, c->live[i])) c->live[kept++] = c->live[i];
  for (int32_t i = c->seen_started; i < ns; i++) {
    int32_t it = fs_sim_started_flow(s, i);
    if (c->item_pair[it] >= 0) c->live[kept++] = it;
  }
  c->n_live = kept;
  c->seen_started = ns;
  for (int32_t i = 0; i < c->n_live; i++)
    window_add(c, c->live[i], fs_sim_flow_bytes(s, c->live[i]));
  if (c->n_win && now >= c->busy_until) rc = decide(c, now, err);
  if (!rc && !fs_sim_idle(s)) rc = fs_sim_add_timer(s, now + c->o.interval_s, tick, c, err);
  return rc;
}

/* ---- setting up ---- */
/* Where item it's route reaches its first leaf and leaves its last; the
 * ordered leaf pair, or -1 (same leaf, no leaf, not a single path). */
static int32_t route_pair(fs_ocsctl *c, int32_t it, const int32_t *links, const double *w,
                          int32_t n, int32_t *up_n, int32_t *down_at) {
  int32_t a = -1, b = -1;
  for (int32_t k = 0; k < n; k++)
    if (w[k] != 1) return -2;
  for (int32_t k = 0; k < n && a < 0; k++)
    if (c->leaf_idx[c->t->links[links[k]].to] >= 0) {
      a = c->leaf_idx[c->t->links[links[k]].to];
      *up_n = k + 1;
    }
  for (int32_t k = n - 1; k >= 0 && b < 0; k--)
    if (c->leaf_idx[c->t->links[links[k]].from] >= 0) {
      b = c->leaf_idx[c->t->links[links[k]].from];
      *down_at = k;
    }
  (void)it;
  if (a < 0 || b < 0 || a == b || n > 255) return -1;
  return a * c->L + b;
}

static int index_flows(fs_ocsctl *c, fs_err *err) {
  int32_t items = fs_sim_n_items(c->sim), LL = c->L * c->L;
  c->item_pair = fs__malloc((size_t)items + 1, sizeof(int32_t));
  c->elec_off = fs__malloc((size_t)items + 1, sizeof(int64_t));
  c->elec_n = fs__calloc((size_t)items + 1, 1);
  c->up_n = fs__calloc((size_t)items + 1, 1);
  c->down_at = fs__calloc((size_t)items + 1, 1);
  c->on_circuit = fs__calloc((size_t)items + 1, 1);
  c->live = fs__malloc((size_t)items + 1, sizeof(int32_t));
  c->inflight = fs__calloc((size_t)LL, sizeof(flowvec));
  c->item_rank = fs__malloc((size_t)items + 1, sizeof(int32_t));
  c->item_occ = fs__malloc((size_t)items + 1, sizeof(int32_t));
  c->pair_hosts = fs__calloc((size_t)LL + 1, sizeof(int32_t));
  if (!c->item_rank || !c->item_occ || !c->pair_hosts || !c->item_pair || !c->elec_off || !c->elec_n || !c->up_n || !c->down_at || !c->on_circuit ||
      !c->live || !c->inflight)
    return fs_err_set(err, FS_ENOMEM, "out of memory indexing flows for the OCS layer");
  int64_t total = 0;
  fs__u64map hosts;
  fs__u64map_init(&hosts);
  int32_t *hp_next = NULL, *hp_rank = NULL, n_hp = 0;
  size_t cap_hp = 0;
  for (int32_t it = 0; it < items; it++) {
    c->item_pair[it] = -1;
    if (fs_sim_item_kind(c->sim, it) != FS_ITEM_FLOW || fs_sim_flow_bytes(c->sim, it) <= 0)
      continue;
    const int32_t *links;
    const double *w;
    int32_t n, up = 0, down = 0;
    fs_sim_flow_route(c->sim, it, &links, &w, &n);
    if (n <= 0) continue;
    int32_t p = route_pair(c, it, links, w, n, &up, &down);
    if (p == -2)
      return fs_err_set(err, FS_EINVAL,
                        "an OCS layer needs single-path routes (ecmp or shortest): a flow is "
                        "spread over %g paths",
                        1.0 / w[0]);
    if (p < 0) continue;
    c->item_pair[it] = p;
    c->elec_off[it] = total;
    c->elec_n[it] = (uint8_t)n;
    c->up_n[it] = (uint8_t)up;
    c->down_at[it] = (uint8_t)down;
    total += n;
    c->st.flow_bytes += fs_sim_flow_bytes(c->sim, it);
    /* (hosts pair id hp: its rank in p and how many of its flows so far) */
    int32_t src, dst, hp;
    fs_sim_flow_ends(c->sim, it, &src, &dst);
    uint64_t key = (uint64_t)(uint32_t)src << 32 | (uint32_t)dst;
    if (!fs__u64map_get(&hosts, key, &hp)) {
      hp = n_hp++;
      size_t c2 = cap_hp;
      if (fs__u64map_put(&hosts, key, hp) ||
          fs__grow(&hp_next, &cap_hp, (size_t)n_hp, sizeof(int32_t)) ||
          fs__grow(&hp_rank, &c2, (size_t)n_hp, sizeof(int32_t))) {
        fs__u64map_free(&hosts);
        FS__FREE_ALL(hp_next, hp_rank);
        return fs_err_set(err, FS_ENOMEM, "out of memory indexing flows for the OCS layer");
      }
      hp_next[hp] = 0;
      hp_rank[hp] = c->pair_hosts[p]++;
    }
    c->item_rank[it] = hp_rank[hp];
    c->item_occ[it] = hp_next[hp]++;
  }
  fs__u64map_free(&hosts);
  FS__FREE_ALL(hp_next, hp_rank);
  c->elec = fs__malloc((size_t)total + 1, sizeof(int32_t));
  if (!c->elec) return fs_err_set(err, FS_ENOMEM, "out of memory indexing flows for the OCS layer");
  for (int32_t it = 0; it < items; it++) {
    if (c->item_pair[it] < 0) continue;
    const int32_t *links;
    const double *w;
    int32_t n;
    fs_sim_flow_route(c->sim, it, &links, &w, &n);
    memcpy(c->elec + c->elec_off[it], links, (size_t)n * sizeof(int32_t));
  }
  return 0;
}

/* The static configuration: every flow's bytes, lit as the run starts
 * (capacities change only inside a run: a timer at 0). */
static int light_static(void *ctx, fs_sim *s, double now, fs_err *err) {
  (void)s;
  (void)now;
  fs_ocsctl *c = ctx;
  int32_t items = fs_sim_n_items(c->sim), LL = c->L * c->L;
  window_begin(c);
  for (int32_t it = 0; it < items; it++)
    if (c->item_pair[it] >= 0) window_add(c, it, fs_sim_flow_bytes(c->sim, it));
  window_pairs(c);
  want(c, NULL, 0);
  for (int32_t u = 0; u < LL; u++) c->target[u] = c->cand[u] > 0 ? c->cand[u] : 0;
  for (int32_t i = 0; i < c->n_upairs; i++) {
    int32_t u = c->ups[i].u;
    if (c->target[u] <= 0) continue;
    int rc = set_lit(c, u, c->target[u], err);
    if (rc) return rc;
    c->st.circuits_initial += c->target[u];
    if (log_change(c, 0, 0, u, 0, c->target[u]))
      return fs_err_set(err, FS_ENOMEM, "out of memory logging circuits");
  }
  c->n_win = 0;
  return 0;
}

int fs_ocsctl_new(fs_sim *s, int32_t first_link, const fs_ocsctl_opts *o, fs_ocsctl **out,
                  fs_err *err) {
  const fs_topo *t = fs_sim_topo(s);
  if (o->ports < 1 || !(o->gbps > 0) || !isfinite(o->gbps) || !(o->reconfig_s >= 0) ||
      !isfinite(o->reconfig_s) || (o->policy == FS_OCSCTL_ADAPTIVE && !(o->interval_s >= 1e-9)))
    return fs_err_set(err, FS_EINVAL,
                      "OCS layer: ports %d, %g Gb/s, reconfiguration %g s, interval %g s: "
                      "needs ports >= 1, a rate > 0, a delay >= 0 and an interval >= 1 ns",
                      o->ports, o->gbps, o->reconfig_s, o->interval_s);
  fs_ocsctl *c = calloc(1, sizeof(*c));
  if (!c) return fs_err_set(err, FS_ENOMEM, "out of memory creating the OCS controller");
  c->sim = s;
  c->t = t;
  c->o = *o;
  c->first_link = first_link;
  fs_route_init(&c->rt);
  int rc;
  c->L = fs_ocsctl_leaves(t, NULL, 0);
  int32_t L = c->L;
  if (L < 2 || first_link + L * (L - 1) != t->n_links) {
    rc = fs_err_set(err, FS_EINVAL,
                    "the simulation's topology is not an OCS layer over %d leaves from link %d",
                    L, first_link);
    goto fail;
  }
  size_t LL = (size_t)L * (size_t)L;
  c->leaves = fs__malloc((size_t)L, sizeof(int32_t));
  c->leaf_idx = fs__malloc((size_t)t->n_nodes, sizeof(int32_t));
  c->up_Bps = fs__calloc((size_t)L, sizeof(double));
  c->down_Bps = fs__calloc((size_t)L, sizeof(double));
  c->target = fs__calloc(LL, sizeof(int32_t));
  c->lit = fs__calloc(LL, sizeof(int32_t));
  c->cand = fs__calloc(LL, sizeof(int32_t));
  c->ports_used = fs__calloc((size_t)L, sizeof(int32_t));
  c->pair_bytes = fs__calloc(LL, sizeof(double));
  c->pair_stamp = fs__calloc(LL, sizeof(uint32_t));
  c->win = fs__malloc(LL, sizeof(int32_t));
  c->ups = fs__malloc(LL, sizeof(upair));
  c->ustamp = fs__calloc(LL, sizeof(uint32_t));
  c->touch = fs__malloc(LL, sizeof(int32_t));
  c->pending = fs__malloc(LL, sizeof(int32_t));
  c->leaf_out = fs__calloc((size_t)L, sizeof(double));
  c->leaf_in = fs__calloc((size_t)L, sizeof(double));
  if (!c->leaves || !c->leaf_idx || !c->up_Bps || !c->down_Bps || !c->target || !c->lit ||
      !c->cand || !c->ports_used || !c->pair_bytes || !c->pair_stamp || !c->win ||
      !c->ups || !c->ustamp || !c->touch || !c->pending || !c->leaf_out || !c->leaf_in) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory creating the OCS controller");
    goto fail;
  }
  fs_ocsctl_leaves(t, c->leaves, L);
  for (int32_t v = 0; v < t->n_nodes; v++) c->leaf_idx[v] = -1;
  for (int32_t i = 0; i < L; i++) c->leaf_idx[c->leaves[i]] = i;
  /* a leaf's electrical capacity: its links to switches of higher tiers */
  for (int32_t l = 0; l < first_link; l++) {
    const fs_link *k = &t->links[l];
    int32_t a = c->leaf_idx[k->from], b = c->leaf_idx[k->to];
    if (a >= 0 && t->nodes[k->to].kind == FS_NODE_SWITCH && t->nodes[k->to].tier > 1)
      c->up_Bps[a] += k->capacity_bps / 8;
    if (b >= 0 && t->nodes[k->from].kind == FS_NODE_SWITCH && t->nodes[k->from].tier > 1)
      c->down_Bps[b] += k->capacity_bps / 8;
  }
  c->st.leaves = L;
  c->st.ports = o->ports;
  if ((rc = index_flows(c, err)) || (rc = fs_sim_add_timer(s, 0, light_static, c, err)) ||
      (rc = fs_sim_set_route_hook(s, on_start, c, err)))
    goto fail;
  if (o->policy == FS_OCSCTL_ADAPTIVE && (rc = fs_sim_add_timer(s, o->interval_s, tick, c, err)))
    goto fail;
  *out = c;
  return 0;
fail:
  fs_ocsctl_free(c);
  return rc;
}

void fs_ocsctl_stats_get(const fs_ocsctl *c, fs_ocsctl_stats *out) {
  *out = c->st;
  out->circuit_bytes = 0;
  int32_t items = fs_sim_n_items(c->sim);
  for (int32_t it = 0; it < items; it++)
    if (c->item_pair[it] >= 0 && c->on_circuit[it])
      out->circuit_bytes += fs_sim_flow_bytes(c->sim, it);
}

int32_t fs_ocsctl_changes(const fs_ocsctl *c, const fs_ocsctl_change **out) {
  *out = c->ch;
  return (int32_t)c->n_ch;
}

void fs_ocsctl_free(fs_ocsctl *c) {
  if (!c) return;
  if (c->inflight)
    for (int32_t p = 0; p < c->L * c->L; p++) free(c->inflight[p].v);
  fs_route_free(&c->rt);
  FS__FREE_ALL(c->leaves, c->leaf_idx, c->up_Bps, c->down_Bps, c->target, c->lit, c->ports_used,
               c->item_pair, c->elec_off, c->elec, c->elec_n,
               c->up_n, c->down_at, c->on_circuit, c->item_rank, c->item_occ, c->pair_hosts, c->inflight, c->live, c->pair_bytes, c->pair_stamp, c->win,
               c->ups, c->ustamp, c->touch, c->cand, c->leaf_out, c->leaf_in, c->pending, c->ch, c);
}
