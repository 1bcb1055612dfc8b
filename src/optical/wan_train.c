/* Cross-site data-parallel training over the optical WAN: builds the
 * IP-layer topology the provisioned lightpaths give (each site a star of
 * its GPUs, site switches joined by one cable per served ring pair) and
 * simulates the hierarchical all-reduce (reduce-scatter in sites, ring
 * all-reduce per rail across sites, all-gather in sites) with the fluid
 * engine, beside its alpha-beta closed form. Cost: the engine's, on
 * S g hosts and S(g + 1) cables; flows 2 S g (g - 1) + 2 g S (S - 1). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/topo.h"
#include "fabricsim/coll.h"
#include "fabricsim/route.h"
#include "fabricsim/sim.h"
#include "fabricsim/wan.h"
#include "wan_internal.h"

typedef struct pair_link {
  int32_t a, b;     /* ring indexes */
  double bps;       /* sum of provisioned rates */
  double km;        /* longest lightpath path */
} pair_link;

static int32_t uf_find(int32_t *uf, int32_t x) {
  while (uf[x] != x) x = uf[x] = uf[uf[x]];
  return x;
}

/* Lowers one ring collective on every group; writes the done items. */
static int lower_groups(fs_sim *sim, fs_router *router, fs_coll_op op, double bytes,
                        int32_t n_groups, int32_t size, int32_t stride_group,
                        int32_t stride_rank, const int32_t *after, int32_t n_after,
                        int32_t *done, int64_t *flows, fs_err *err) {
  int32_t *hosts = fs__malloc((size_t)size, sizeof(int32_t));
  if (!hosts) return fs_err_set(err, FS_ENOMEM, "out of memory");
  int rc = 0;
  for (int32_t gi = 0; gi < n_groups && !rc; gi++) {
    for (int32_t r = 0; r < size; r++) hosts[r] = gi * stride_group + r * stride_rank;
    fs_coll_params prm;
    fs_coll_params_init(&prm);
    prm.op = op;
    prm.algo = FS_ALGO_RING;
    prm.bytes = bytes;
    prm.chunks = 1;
    fs_coll_group g = {size, hosts};
    fs_coll_lowering l;
    fs_coll_lowering_init(&l, sim, router, FS_ROUTE_SHORTEST, 1);
    l.key = (uint64_t)gi;
    l.after = after;
    l.n_after = n_after;
    rc = fs_coll_lower(&prm, &g, &l, err);
    done[gi] = l.done;
    *flows += l.n_flows;
  }
  free(hosts);
  return rc;
}

static double max_finish(const fs_sim *sim, const int32_t *done, int32_t n, double dflt) {
  double t = dflt;
  for (int32_t i = 0; i < n; i++) t = fmax(t, fs_sim_finish_s(sim, done[i]));
  return t;
}

/* The three phases' ends (done items d1[n1], d2[n2], d3[n3]; d3 NULL: no
 * third phase) as r->phase_s and total_s. */
static void phase_times(const fs_sim *sim, const int32_t *d1, int32_t n1, const int32_t *d2,
                        int32_t n2, const int32_t *d3, int32_t n3, fs_wan_train_result *r) {
  double e1 = max_finish(sim, d1, n1, 0), e2 = max_finish(sim, d2, n2, e1);
  double e3 = d3 ? max_finish(sim, d3, n3, e2) : e2;
  r->phase_s[0] = e1;
  r->phase_s[1] = e2 - e1;
  r->phase_s[2] = e3 - e2;
  r->total_s = e3;
}

/* The WAN cables: one per served job demand (a ring pair), its rate the
 * sum of its lightpaths', its length their longest path; a job demand not
 * served counts in r->multihop. Joins each pair in uf (S entries, each its
 * own root) and clears r->connected unless every ring site is reached.
 * Returns the number of cables written to pl. */
static int32_t collect_wan_cables(const fs_wan_plan *p, const int32_t *ring_of, int32_t S,
                                  pair_link *pl, int32_t *uf, fs_wan_train_result *r) {
  int32_t npl = 0;
  for (int32_t i = 0; i < S; i++) uf[i] = i;
  for (int32_t di = 0; di < p->n_demands; di++) {
    const fs_wan_demand *d = &p->demands[di];
    if (!d->job) continue;
    if (p->status[di] != FS_WAN_OK) {
      r->multihop++;
      continue;
    }
    pair_link *x = &pl[npl++];
    x->a = ring_of[d->src];
    x->b = ring_of[d->dst];
    for (int32_t j = p->lp_first[di]; j < p->lp_first[di] + p->lp_n[di]; j++) {
      x->bps += p->lps[j].gbps * 1e9;
      x->km = fmax(x->km, p->lps[j].path.km);
    }
    uf[uf_find(uf, x->a)] = uf_find(uf, x->b);
  }
  for (int32_t i = 1; i < S; i++)
    if (uf_find(uf, i) != uf_find(uf, 0)) r->connected = 0;
  return npl;
}

/* Per ring site s, the rate bps[s] and fibre length km[s] of the cable of
 * pair s -> s + 1. Returns 1, or 0 when some neighbouring pair has no
 * cable of its own (its entries stay zero). */
static int ring_pairs(const pair_link *pl, int32_t npl, int32_t S, double *bps, double *km) {
  int direct = 1;
  for (int32_t s = 0; s < S && S > 1; s++) {
    int32_t t1 = (s + 1) % S, x = -1;
    for (int32_t i = 0; i < npl; i++)
      if ((pl[i].a == s && pl[i].b == t1) || (pl[i].a == t1 && pl[i].b == s)) x = i;
    if (x < 0) {
      direct = 0;
      continue;
    }
    bps[s] = pl[x].bps;
    km[s] = pl[x].km;
  }
  return direct;
}

/* The worst WAN cable for the report: largest latency, smallest rate,
 * longest path (each NAN with no cable). */
static void wan_cable_extremes(const pair_link *pl, int32_t npl, double a_site,
                               fs_wan_train_result *r) {
  for (int32_t i = 0; i < npl; i++) {
    double alpha = a_site + pl[i].km * FS_WAN_US_PER_KM * 1e-6;
    r->wan_alpha_s = isnan(r->wan_alpha_s) ? alpha : fmax(r->wan_alpha_s, alpha);
    r->wan_gbps_min =
        isnan(r->wan_gbps_min) ? pl[i].bps / 1e9 : fmin(r->wan_gbps_min, pl[i].bps / 1e9);
    r->wan_km_max = isnan(r->wan_km_max) ? pl[i].km : fmax(r->wan_km_max, pl[i].km);
  }
}

/* The cross-site ring all-reduce's 2(S - 1) steps by the arrival
 * recurrence A(t, r) = max(A(t-1, r-1), A(t-1, r) - alpha_r) + tx_r +
 * alpha_r; returns the last arrival. arr and nxt are scratch of S. */
static double wan_ring_time(const double *al, const double *tx, int32_t S, double *arr,
                            double *nxt) {
  double t_wan = 0;
  for (int32_t s = 0; s < S; s++) arr[s] = tx[s] + al[s];
  for (int32_t t = 1; t < 2 * (S - 1); t++) {
    for (int32_t s = 0; s < S; s++)
      nxt[s] = fmax(arr[(s + S - 1) % S], arr[s] - al[s]) + tx[s] + al[s];
    double *tmp = arr;
    arr = nxt;
    nxt = tmp;
  }
  for (int32_t s = 0; s < S; s++) t_wan = fmax(t_wan, arr[s]);
  return t_wan;
}

double fs__wan_ring_cross_site_s(const fs_wan_job *job, int32_t S, const double *bps,
                                 const double *km, double n) {
  if (S < 2) return NAN;
  if (n <= 0) n = job->bytes;
  int32_t g = job->gpus_per_site;
  double gpu_Bps = job->gpu_gbps * 1e9 / 8, a_site = 2e-9 * (double)job->site_latency_ns;
  double m = n / ((double)g * S);
  double *buf = fs__malloc((size_t)S * 4, sizeof(double));
  if (!buf) return NAN;
  double *al = buf, *tx = buf + S, *arr = buf + 2 * S, *nxt = buf + 3 * S;
  for (int32_t s = 0; s < S; s++) {
    if (!(bps[s] > 0)) {
      free(buf);
      return NAN;
    }
    al[s] = a_site + km[s] * FS_WAN_US_PER_KM * 1e-6;
    tx[s] = m / fmin(gpu_Bps, bps[s] / 8 / g);
  }
  double t = wan_ring_time(al, tx, S, arr, nxt);
  free(buf);
  return t;
}

/* Closed form (docs/model-wan.md): ring phases of one chunk. Inside a
 * site every step is a_s + (n/g) b_s. Across sites the ring of rail j
 * sends m = n/(gS) per step from ring site r to r + 1 over that pair's
 * cable, shared by the g rails: alpha_r = a_s + 5 us/km x km_r, beta_r =
 * 1 / min(GPU link, C_r / g). A send starts once the data it forwards
 * has arrived and the rank's previous send has drained (coll.h), so
 * arrival A(t, r) = max(A(t-1, r-1), A(t-1, r) - alpha_r) + m beta_r +
 * alpha_r; with equal pairs that is 2(S-1)(alpha + m beta). Fills
 * r->model_s, model_total_s and the worst cable. Returns 0 or FS_ENOMEM
 * (err set). */
static int closed_form(const fs_wan_job *job, const pair_link *pl, int32_t npl, int32_t S,
                       int32_t g, double n, fs_wan_train_result *r, fs_err *err) {
  double gpu_Bps = job->gpu_gbps * 1e9 / 8, a_site = 2e-9 * (double)job->site_latency_ns;
  double t_site = g > 1 ? (g - 1) * (a_site + n / g / gpu_Bps) : 0;
  double *bps = fs__calloc((size_t)S + 1, sizeof(double)),
         *km = fs__calloc((size_t)S + 1, sizeof(double));
  if (!bps || !km) {
    free(bps), free(km);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  int direct = ring_pairs(pl, npl, S, bps, km);
  wan_cable_extremes(pl, npl, a_site, r);
  double t_wan = S > 1 && direct ? fs__wan_ring_cross_site_s(job, S, bps, km, n) : 0;
  free(bps), free(km);
  r->model_s[0] = r->model_s[2] = t_site;
  r->model_s[1] = S > 1 ? (direct ? t_wan : NAN) : 0;
  r->model_total_s = r->model_s[0] + r->model_s[1] + r->model_s[2];
  return 0;
}

/* The IP-layer topology: S * g GPUs (ring index * g + local), then the S
 * site switches; each GPU cabled to its site's switch, each WAN cable
 * between its pair's switches. Returns 0 with *t set, or an error. */
static int build_wan_topo(const fs_wan_job *job, const pair_link *pl, int32_t npl, int32_t S,
                          int32_t g, fs_topo **t, fs_err *err) {
  fs_topo_builder b;
  int rc = fs_topo_builder_init(&b, "wan", S * g + S, 2 * (S * g + npl), err);
  if (rc) return rc;
  for (int32_t h = 0; h < S * g && rc >= 0; h++)
    rc = fs_topo_builder_node(&b, FS_NODE_HOST, 0, h, h / g);
  for (int32_t s = 0; s < S && rc >= 0; s++) rc = fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, s, s);
  for (int32_t h = 0; h < S * g && rc >= 0; h++)
    rc = fs_topo_builder_cable(&b, h, S * g + h / g, job->gpu_gbps * 1e9, job->site_latency_ns);
  for (int32_t i = 0; i < npl && rc >= 0; i++)
    rc = fs_topo_builder_cable(&b, S * g + pl[i].a, S * g + pl[i].b, pl[i].bps,
                      (int64_t)llround(pl[i].km * FS_WAN_US_PER_KM * 1e3));
  if (rc < 0) {
    fs_topo_builder_abort(&b);
    return fs_err_set(err, rc, "out of memory building the WAN topology");
  }
  if ((rc = fs_topo_builder_finish(&b, t, err))) return rc;
  snprintf((*t)->spec, sizeof((*t)->spec), "wan:sites=%d,gpus_per_site=%d", S, g);
  return 0;
}

/* Simulates the hierarchical all-reduce on t: reduce-scatter in each site
 * (g > 1), ring all-reduce per rail across sites (S > 1) after it,
 * all-gather in each site after that; each phase's end is its last
 * group's. done is scratch of 2 S + g. Fills r->phase_s, total_s and
 * flows. Returns 0 or an error (err set). */
static int simulate_allreduce(fs_topo *t, int32_t S, int32_t g, double n, int32_t *done,
                              fs_wan_train_result *r, fs_err *err) {
  fs_sim *sim = NULL;
  fs_router *router = NULL;
  int rc;
  if ((rc = fs_sim_new(t, &sim, err)) || (rc = fs_router_new(t, &router, err))) goto out;
  int32_t *d1 = done, *d2 = done + S, *d3 = done + S + g;
  int32_t n1 = 0, n2 = 0;
  if (g > 1) {
    if ((rc = lower_groups(sim, router, FS_COLL_REDUCESCATTER, n, S, g, g, 1, NULL, 0, d1,
                           &r->flows, err)))
      goto out;
    n1 = S;
  }
  if (S > 1) {
    if ((rc = lower_groups(sim, router, FS_COLL_ALLREDUCE, n / g, g, S, 1, g, d1, n1, d2,
                           &r->flows, err)))
      goto out;
    n2 = g;
  }
  if (g > 1 && (rc = lower_groups(sim, router, FS_COLL_ALLGATHER, n, S, g, g, 1, n2 ? d2 : d1,
                                  n2 ? n2 : n1, d3, &r->flows, err)))
    goto out;
  if ((rc = fs_sim_run(sim, NULL, err))) goto out;
  phase_times(sim, d1, n1, d2, n2, g > 1 ? d3 : NULL, S, r);
out:
  fs_router_free(router);
  fs_sim_free(sim);
  return rc;
}

/* fs_wan_train, and with simulate 0 its closed form only. */
static int train(const fs_wan_plan *p, double bytes, int simulate, fs_wan_train_result *r,
                 fs_err *err) {
  const fs_wan *w = p->w;
  const fs_wan_job *job = &w->job;
  memset(r, 0, sizeof(*r));
  if (!job->present) return fs_err_set(err, FS_EINVAL, "the WAN file has no \"job\" to train");
  int32_t ring_of[FS_WAN_MAX_SITES], ring[FS_WAN_MAX_SITES], g = job->gpus_per_site;
  int32_t S = fs_wan_job_ring(w, ring);
  for (int32_t s = 0; s < w->n_sites; s++) ring_of[s] = -1;
  for (int32_t i = 0; i < S; i++) ring_of[ring[i]] = i;
  double n = bytes > 0 ? bytes : job->bytes;
  r->sites = S;
  r->gpus_per_site = g;
  r->bytes = n;
  r->connected = 1;
  for (int i = 0; i < 3; i++) r->phase_s[i] = r->model_s[i] = 0;
  r->total_s = r->model_total_s = NAN;
  r->wan_alpha_s = r->wan_gbps_min = r->wan_km_max = NAN;

  pair_link *pl = fs__calloc((size_t)p->n_demands + 1, sizeof(*pl));
  int32_t *uf = fs__malloc((size_t)S + 1, sizeof(int32_t));
  int32_t *done = fs__malloc((size_t)(2 * S + g) + 1, sizeof(int32_t));
  if (!pl || !uf || !done) {
    free(pl), free(uf), free(done);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  int32_t npl = collect_wan_cables(p, ring_of, S, pl, uf, r);
  if (!r->connected) {
    for (int i = 0; i < 3; i++) r->phase_s[i] = r->model_s[i] = NAN;
    free(pl), free(uf), free(done);
    return 0;
  }
  fs_topo *t = NULL;
  int rc = closed_form(job, pl, npl, S, g, n, r, err);
  if (!rc && simulate && !(rc = build_wan_topo(job, pl, npl, S, g, &t, err)))
    rc = simulate_allreduce(t, S, g, n, done, r, err);
  if (!simulate)
    for (int i = 0; i < 3; i++) r->phase_s[i] = NAN;
  fs_topo_free(t);
  free(pl), free(uf), free(done);
  return rc;
}

int fs_wan_train(const fs_wan_plan *p, double bytes, fs_wan_train_result *r, fs_err *err) {
  return train(p, bytes, 1, r, err);
}

int fs_wan_train_model(const fs_wan_plan *p, double bytes, fs_wan_train_result *r,
                       fs_err *err) {
  return train(p, bytes, 0, r, err);
}

/* ---- a parameter server at one site (wan_place.c's aggregator) ---- */

/* The hierarchical all-reduce through parameter servers at site agg: the
 * job's W worker sites (each a star of g GPUs), g servers (one per rail)
 * on agg's switch, each worker site's switch cabled to agg's by the sum
 * of its demand's lightpaths (latency 5 us/km x their longest path; a
 * worker at agg itself shares its switch). Reduce-scatter inside sites,
 * then per rail a parameter-server all-reduce of n/g with its one server
 * (coll.h `ps`, docs/model-coll-ps.md: push, then pull), then all-gather
 * inside sites. r->total_s (NAN when a worker's demand is blocked). */
int fs_wan_train_ps(const fs_wan_plan *p, int32_t agg, double bytes, fs_wan_train_result *r,
                    fs_err *err) {
  const fs_wan *w = p->w;
  const fs_wan_job *job = &w->job;
  memset(r, 0, sizeof(*r));
  if (!job->present) return fs_err_set(err, FS_EINVAL, "the WAN file has no \"job\" to train");
  if (agg < 0 || agg >= w->n_sites)
    return fs_err_set(err, FS_EINVAL, "no site %d to aggregate at", agg);
  int32_t ring[FS_WAN_MAX_SITES], idx[FS_WAN_MAX_SITES], g = job->gpus_per_site;
  int32_t W = fs_wan_job_ring(w, ring);
  double n = bytes > 0 ? bytes : job->bytes;
  r->sites = W;
  r->gpus_per_site = g;
  r->bytes = n;
  r->connected = 1;
  for (int i = 0; i < 3; i++) r->phase_s[i] = r->model_s[i] = NAN;
  r->total_s = r->model_total_s = NAN;
  r->wan_alpha_s = r->wan_gbps_min = r->wan_km_max = NAN;
  /* switches: W worker sites, then agg's own unless it is a worker's */
  int32_t agg_sw = -1;
  for (int32_t i = 0; i < w->n_sites; i++) idx[i] = -1;
  for (int32_t i = 0; i < W; i++) idx[ring[i]] = i;
  agg_sw = idx[agg] >= 0 ? idx[agg] : W;
  int32_t n_sw = idx[agg] >= 0 ? W : W + 1, hosts = W * g + g;
  pair_link *pl = fs__calloc((size_t)W + 1, sizeof(*pl));
  if (!pl) return fs_err_set(err, FS_ENOMEM, "out of memory");
  int32_t npl = 0;
  for (int32_t di = 0; di < p->n_demands; di++) {
    const fs_wan_demand *d = &p->demands[di];
    if (!d->job || d->dst != agg || idx[d->src] < 0) continue;
    if (p->status[di] != FS_WAN_OK) {
      r->connected = 0;
      continue;
    }
    pair_link *x = &pl[npl++];
    x->a = idx[d->src];
    x->b = agg_sw;
    for (int32_t j = p->lp_first[di]; j < p->lp_first[di] + p->lp_n[di]; j++) {
      x->bps += p->lps[j].gbps * 1e9;
      x->km = fmax(x->km, p->lps[j].path.km);
    }
  }
  if (npl + (idx[agg] >= 0) < W) r->connected = 0;
  if (!r->connected) {
    free(pl);
    return 0;
  }
  wan_cable_extremes(pl, npl, 2e-9 * (double)job->site_latency_ns, r);
  /* hosts: worker i's GPU j is i g + j, server j is W g + j; switches after */
  fs_topo_builder b;
  fs_topo *t = NULL;
  int rc = fs_topo_builder_init(&b, "wan-ps", hosts + n_sw, 2 * (hosts + npl), err);
  if (rc) {
    free(pl);
    return rc;
  }
  for (int32_t h = 0; h < hosts && rc >= 0; h++)
    rc = fs_topo_builder_node(&b, FS_NODE_HOST, 0, h, h < W * g ? h / g : agg_sw);
  for (int32_t s = 0; s < n_sw && rc >= 0; s++)
    rc = fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, s, s);
  for (int32_t h = 0; h < hosts && rc >= 0; h++)
    rc = fs_topo_builder_cable(&b, h, hosts + (h < W * g ? h / g : agg_sw), job->gpu_gbps * 1e9,
                               job->site_latency_ns);
  for (int32_t i = 0; i < npl && rc >= 0; i++)
    rc = fs_topo_builder_cable(&b, hosts + pl[i].a, hosts + pl[i].b, pl[i].bps,
                               (int64_t)llround(pl[i].km * FS_WAN_US_PER_KM * 1e3));
  free(pl);
  if (rc < 0) {
    fs_topo_builder_abort(&b);
    return fs_err_set(err, rc, "out of memory building the WAN topology");
  }
  if ((rc = fs_topo_builder_finish(&b, &t, err))) return rc;
  fs_sim *sim = NULL;
  fs_router *router = NULL;
  int32_t *done = fs__malloc((size_t)(2 * W + g) + 1, sizeof(int32_t));
  int32_t *grp = fs__malloc((size_t)W + 2, sizeof(int32_t));
  if (!done || !grp) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  if ((rc = fs_sim_new(t, &sim, err)) || (rc = fs_router_new(t, &router, err))) goto out;
  int32_t *d1 = done, *d2 = done + W, *d3 = done + W + g, n1 = 0;
  if (g > 1) {
    if ((rc = lower_groups(sim, router, FS_COLL_REDUCESCATTER, n, W, g, g, 1, NULL, 0, d1,
                           &r->flows, err)))
      goto out;
    n1 = W;
  }
  for (int32_t j = 0; j < g && !rc; j++) {
    grp[0] = W * g + j; /* the server is rank 0: floor(0 p / 1) */
    for (int32_t i = 0; i < W; i++) grp[1 + i] = i * g + j;
    fs_coll_params prm;
    fs_coll_params_init(&prm);
    prm.op = FS_COLL_ALLREDUCE;
    prm.algo = FS_ALGO_PS;
    prm.servers = 1;
    prm.bytes = n / g;
    fs_coll_group cg = {W + 1, grp};
    fs_coll_lowering l;
    fs_coll_lowering_init(&l, sim, router, FS_ROUTE_SHORTEST, 1);
    l.key = 0x9500 + (uint64_t)j;
    l.after = d1;
    l.n_after = n1;
    rc = fs_coll_lower(&prm, &cg, &l, err);
    d2[j] = l.done;
    r->flows += l.n_flows;
  }
  if (rc) goto out;
  if (g > 1 && (rc = lower_groups(sim, router, FS_COLL_ALLGATHER, n, W, g, g, 1, d2, g, d3,
                                  &r->flows, err)))
    goto out;
  if ((rc = fs_sim_run(sim, NULL, err))) goto out;
  phase_times(sim, d1, n1, d2, g, g > 1 ? d3 : NULL, W, r);
out:
  fs_router_free(router);
  fs_sim_free(sim);
  fs_topo_free(t);
  free(done);
  free(grp);
  return rc;
}

