/* Links that can never bind, left out of the rating.
 *
 * Max-min rates only depend on the links that constrain them. Take a flow's
 * anchor: the link of its route with the smallest cap / w, the one that
 * would bind it alone (a host's NIC link; in the middle of a path through a
 * thin core). The flows anchored at link a load it with
 * sum_f w_f(a) x_f <= cap(a), so on any other link l
 *
 *   load(l) = sum_f w_f(l) x_f <= sum_a cap(a) max_{f anchored at a} w_f(l) / w_f(a)
 *
 * and the same with a second choice of anchors (ties broken towards the
 * route's end rather than its start: the destination's link when both
 * hosts' links are equal). When the smaller of the two
 * bounds is at most cap(l), no allocation that respects the anchors can
 * overload l: the max-min allocation without l respects every constraint
 * with l, so it is the max-min allocation with l too (the max-min vector of
 * a larger feasible set that lies in a smaller one is the smaller one's).
 * Such links are removed from every flow's rating route; anchors never are.
 * In a non-blocking Clos with spraying that is every link but the hosts'
 * (the bound of a leaf uplink is its hosts' capacity over the uplinks: equal
 * to its own), so a flow is rated on 2 links instead of ~125.
 *
 * The bound holds for every set of flows in flight (a subset of all the
 * flows), as long as capacities and routes do not change: the engine prunes
 * only runs without timers (no failures, no re-routing) and without an
 * observer (which may read link statistics during the run; the left-out
 * links' bytes are added at the end). Cost: one pass over the entries of the
 * distinct routes (flows added by reference share theirs). The same analysis
 * without leaving anything out tells the tcp queue model which saturated
 * links can bind (portq.c), so that it too is the same pruned or not. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "internal.h"

/* The anchor of route r: the entry that binds it alone, the smallest
 * cap / w (any entry is a valid anchor; the tightest gives the tightest
 * bounds: a GPU's 400 Gb/s NIC link rather than its faster PCIe link to
 * that NIC). Ties go to the first entry (last_on_tie 0) or the last. */
static int32_t anchor_entry(const fs__simcore *c, const fs__proute *r, int last_on_tie) {
  int32_t best = 0;
  double bx = c->cap_Bps[r->links[0]] / r->w[0];
  for (int32_t k = 1; k < r->n; k++) {
    double x = c->cap_Bps[r->links[k]] / r->w[k];
    if (x < bx || (last_on_tie && x == bx)) best = k, bx = x;
  }
  return best;
}

/* bound[l] += sum over anchors a of cap(a) max_{routes anchored at a} w(l) / w(a),
 * routes grouped by anchor link through order[] (counting sort by anchor). */
static int add_bounds(const fs__simcore *c, const fs__proute *routes, int32_t nr,
                      const int32_t *anchor /* entry index per route */, double *bound) {
  int32_t L = c->t->n_links;
  int32_t *start = calloc((size_t)L + 1, sizeof(int32_t));
  int32_t *order = fs__malloc((size_t)nr, sizeof(int32_t));
  int32_t *stamp = fs__malloc((size_t)L, sizeof(int32_t));
  double *mx = fs__malloc((size_t)L, sizeof(double));
  int32_t *touched = fs__malloc((size_t)L, sizeof(int32_t));
  int rc = FS_ENOMEM;
  if (!start || !order || !stamp || !mx || !touched) goto out;
  for (int32_t r = 0; r < nr; r++) start[routes[r].links[anchor[r]] + 1]++;
  for (int32_t l = 0; l < L; l++) start[l + 1] += start[l];
  for (int32_t r = 0; r < nr; r++) order[start[routes[r].links[anchor[r]]]++] = r;
  /* start[a] is now the end of group a; groups run in anchor order */
  for (int32_t l = 0; l < L; l++) stamp[l] = -1;
  int32_t i = 0;
  while (i < nr) {
    int32_t a = routes[order[i]].links[anchor[order[i]]], nt = 0;
    for (; i < nr && routes[order[i]].links[anchor[order[i]]] == a; i++) {
      const fs__proute *r = &routes[order[i]];
      double wa = r->w[anchor[order[i]]];
      for (int32_t k = 0; k < r->n; k++) {
        int32_t l = r->links[k];
        double x = r->w[k] / wa;
        if (stamp[l] != a) {
          stamp[l] = a;
          mx[l] = x;
          touched[nt++] = l;
        } else if (x > mx[l]) {
          mx[l] = x;
        }
      }
    }
    for (int32_t j = 0; j < nt; j++) bound[touched[j]] += c->cap_Bps[a] * mx[touched[j]];
  }
  rc = 0;
out:
  FS__FREE_ALL(start, order, stamp, mx, touched);
  return rc;
}

/* Route array `links` (of flows src -> dst) as a distinct route: its id,
 * added at the end if new; -1 when out of memory. */
static int32_t route_id(fs__u64map *ids, fs__proute **routes, size_t *cap, int32_t *nr,
                        const int32_t *links, const double *w, int32_t n, int32_t src,
                        int32_t dst) {
  uint64_t key = (uint64_t)(uintptr_t)links;
  int32_t r;
  if (fs__u64map_get(ids, key, &r)) return r;
  if (*nr == INT32_MAX || fs__grow(routes, cap, (size_t)*nr + 1, sizeof(**routes)) ||
      fs__u64map_put(ids, key, *nr))
    return -1;
  r = (*nr)++;
  (*routes)[r] = (fs__proute){.links = links, .w = w, .n = n, .src = src, .dst = dst};
  return r;
}

/* The routes of lz's instances placed before flow f (at_flow == f, from
 * *next on), in their plans' pair order: what their flows, had they been
 * added one by one, would have brought there. */
static int instance_routes(fs__lazy *lz, size_t *next, int32_t f, fs__u64map *ids,
                           fs__proute **routes, size_t *cap, int32_t *nr) {
  for (; lz && *next < lz->n_inst && lz->inst[*next].at_flow == f; (*next)++) {
    fs__lzbind *b = lz->inst[*next].bind;
    if (b->pruned) continue; /* (an earlier instance of it brought them) */
    b->pruned = 1;
    for (int32_t q = 0; q < b->plan->n_pairs; q++) {
      const fs__lzroute *r = &b->route[q];
      b->rid[q] = route_id(ids, routes, cap, nr, r->links, r->w, r->n,
                           b->hosts[b->plan->pairs[q][0]], b->hosts[b->plan->pairs[q][1]]);
      if (b->rid[q] < 0) return -1;
    }
  }
  return 0;
}

/* The routes' groups of equal left-out links (fs__busy), in c->busy:
 * keyed by a hash of the link sequence, a collision checked entry by
 * entry (a route that collides with another sequence gets a group of its
 * own). 0 or FS_ENOMEM. */
static int busy_groups(fs__simcore *c, fs__proute *routes, int32_t nr) {
  fs__u64map ids;
  fs__u64map_init(&ids);
  size_t cap = 0;
  int rc = 0;
  for (int32_t r = 0; r < nr && !rc; r++) {
    fs__proute *p = &routes[r];
    p->busy = -1;
    if (!p->n_gone) continue;
    const int32_t *links = p->kept + p->n_kept;
    uint64_t h = (uint64_t)p->n_gone;
    for (int32_t k = 0; k < p->n_gone; k++) h = fs__mix64(h ^ (uint64_t)(uint32_t)links[k]);
    int32_t g;
    if (fs__u64map_get(&ids, h, &g)) {
      const fs__busy *b = &c->busy[g];
      if (b->n == p->n_gone && memcmp(b->links, links, (size_t)b->n * sizeof(int32_t)) == 0) {
        p->busy = g;
        continue;
      }
      h = 0; /* (another sequence: a group of its own, not in the map) */
    }
    if (fs__grow(&c->busy, &cap, (size_t)c->n_busy + 1, sizeof(*c->busy)) ||
        (h && fs__u64map_put(&ids, h, c->n_busy))) {
      rc = FS_ENOMEM;
      break;
    }
    c->busy[c->n_busy] = (fs__busy){links, p->n_gone, 0};
    p->busy = c->n_busy++;
  }
  fs__u64map_free(&ids);
  return rc;
}

int fs__prune(fs__simcore *c, fs__lazy *lz, fs__arena *arena, double efficiency, int keep_first,
              int apply, uint8_t **can_bind, int64_t *n_pruned) {
  const fs_topo *t = c->t;
  int32_t L = t->n_links, nr = 0;
  *n_pruned = 0;
  fs__u64map ids;
  fs__u64map_init(&ids);
  fs__proute *routes = NULL;
  size_t routes_cap = 0;
  int32_t *as = NULL, *ad = NULL;
  double *bs = calloc((size_t)L + 1, sizeof(double)), *bd = calloc((size_t)L + 1, sizeof(double));
  uint8_t *keep = calloc((size_t)L + 1, 1), *used = calloc((size_t)L + 1, 1);
  int rc = FS_ENOMEM;
  if (!bs || !bd || !keep || !used) goto out;
  /* one route per distinct route array: flows sharing a route share it */
  size_t next = 0;
  for (int32_t f = 0; f <= c->n_flows; f++) {
    if (instance_routes(lz, &next, f, &ids, &routes, &routes_cap, &nr)) goto out;
    if (f == c->n_flows) break;
    const fs__flow *fl = &c->flows[f];
    int32_t r = route_id(&ids, &routes, &routes_cap, &nr, fl->links, fl->w, fl->n, fl->src,
                         fl->dst);
    if (r < 0) goto out;
    c->flows[f].rid = r; /* back to -1 unless a link is left out */
  }
  as = fs__malloc((size_t)nr + 1, sizeof(int32_t));
  ad = fs__malloc((size_t)nr + 1, sizeof(int32_t));
  if (!as || !ad) goto out;
  for (int32_t r = 0; r < nr; r++) {
    as[r] = anchor_entry(c, &routes[r], 0);
    ad[r] = anchor_entry(c, &routes[r], 1);
    keep[routes[r].links[as[r]]] = keep[routes[r].links[ad[r]]] = 1;
    if (keep_first) keep[routes[r].links[0]] = 1;
    for (int32_t k = 0; k < routes[r].n; k++) used[routes[r].links[k]] = 1;
  }
  if (add_bounds(c, routes, nr, as, bs) || add_bounds(c, routes, nr, ad, bd)) goto out;
  int64_t pruned = 0;
  for (int32_t l = 0; l < L; l++) {
    if (!used[l] || keep[l]) continue;
    double bound = bs[l] < bd[l] ? bs[l] : bd[l];
    /* the relative slack covers the rounding of the bound's own sum */
    if (c->cap_Bps[l] > 0 && bound <= efficiency * c->cap_Bps[l] * (1 + 1e-12)) pruned++;
    else keep[l] = 1;
  }
  rc = 0;
  if (can_bind) { /* the links that stay: anchors and those whose bound exceeds them */
    if (!(*can_bind = fs__malloc((size_t)L + 1, 1))) {
      rc = FS_ENOMEM;
      goto out;
    }
    memcpy(*can_bind, keep, (size_t)L + 1);
  }
  if (!pruned || !apply) goto out; /* nothing to leave out, or only asked which */
  for (int32_t r = 0; r < nr; r++) {
    fs__proute *p = &routes[r];
    int32_t kept = 0;
    for (int32_t k = 0; k < p->n; k++) kept += keep[p->links[k]];
    p->n_kept = kept;
    p->n_gone = p->n - kept;
    if (p->n_gone == 0) {
      p->kept = p->links;
      p->kept_w = p->w;
      continue;
    }
    int32_t *kl = fs__arena_alloc(arena, (size_t)p->n, sizeof(int32_t));
    double *kw = fs__arena_alloc(arena, (size_t)p->n, sizeof(double));
    if (!kl || !kw) {
      rc = FS_ENOMEM;
      goto out;
    }
    /* kept entries first (the rating route), then the left-out ones */
    int32_t a = 0, b = kept;
    for (int32_t k = 0; k < p->n; k++) {
      int32_t j = keep[p->links[k]] ? a++ : b++;
      kl[j] = p->links[k];
      kw[j] = p->w[k];
    }
    p->kept = kl;
    p->kept_w = kw;
  }
  if (busy_groups(c, routes, nr)) {
    rc = FS_ENOMEM;
    goto out;
  }
  for (int32_t f = 0; f < c->n_flows; f++) {
    fs__flow *fl = &c->flows[f];
    const fs__proute *p = &routes[fl->rid];
    fl->links = p->kept;
    fl->w = p->kept_w;
    fl->n = p->n_kept;
  }
  c->proutes = routes;
  c->n_proutes = nr;
  routes = NULL;
  *n_pruned = pruned;
out:
  if (routes) { /* not kept: every flow rated on its whole route */
    for (int32_t f = 0; f < c->n_flows; f++) c->flows[f].rid = -1;
    for (size_t i = 0; lz && i < lz->n_bind; i++)
      for (int32_t q = 0; q < lz->bind[i]->plan->n_pairs; q++) lz->bind[i]->rid[q] = -1;
  }
  fs__u64map_free(&ids);
  FS__FREE_ALL(routes, as, ad, bs, bd, keep, used);
  return rc;
}
