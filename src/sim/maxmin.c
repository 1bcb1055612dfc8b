/* Max-min fair rates, recomputed incrementally after each batch.
 *
 * Which flows can change. Progressive filling raises every flow's rate
 * together and freezes the flows of a link when it saturates. Compare the
 * filling before and after a batch. Let theta be the smallest of: the old
 * rate of every flow that left, and the new rate of every flow that
 * arrived. Below level theta both fillings freeze the same flows at the
 * same levels: a link saturating below theta carries no departed flow
 * (that flow would have frozen below its rate) and no arrival (it would
 * freeze below its new rate), so its flows and residual are the same in
 * both. Hence every flow with old rate < theta keeps it exactly, and only
 * flows at or above theta can change.
 *
 * An arrival's new rate is not known in advance, but it is at least
 * min over its links of cap / (total weight on the link): on its
 * bottleneck it is the fastest flow, so cap = sum w x <= x * sum w. So
 * theta >= theta0 = min(departed rates, those bounds), computed up front.
 *
 * The re-rated set S: the arrivals, then every flow at rate >= theta0 on
 * a changed link or on a link of a flow already in S (a breadth-first walk
 * that stops at slower flows). S is progressive-filled on the capacity the
 * other flows leave. Flows at rate >= theta0 outside S share no link with S
 * or the changes, so their links are as before and they keep their
 * bottlenecks. The result is the max-min allocation when every S flow ends
 * at >= theta0 (each froze on a saturated link where slower fixed flows
 * cannot beat it, and a fixed flow's bottleneck carries neither S nor
 * arrivals); it does in exact arithmetic (theta0 <= theta), and a rounding
 * shortfall lowers theta0 to it and walks and fills again (S only grows;
 * S = the whole component is plain progressive filling). Arrivals that
 * cross a link of zero capacity (failed) get 0 and take nothing from
 * anyone, so they do not lower theta0.
 *
 * This replaces a bottleneck check run to a fixed point, which under
 * staggered arrivals refilled S ~4 times per batch and checked every flow on
 * every touched link each time; here S is walked and filled once.
 *
 * Progressive filling: all S flows rise together; link l saturates at level
 * res(l) / wsum(l) (residual capacity over S's unfrozen weight on it); the
 * lowest level freezes its unfrozen flows, lowering res and wsum of their
 * other links. A heap holds one entry per link, its key raised lazily.
 * Cost per batch: O((L_S + R_S) log L_S) for the L_S links and R_S route
 * entries of S, plus a scan of the flows on S's links. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "internal.h"

int fs__maxmin_init(fs__maxmin *m, int32_t n_links, int32_t n_flows) {
  memset(m, 0, sizeof(*m));
  size_t L = (size_t)n_links, F = (size_t)n_flows;
  m->res = fs__malloc(L, sizeof(double));
  m->wsum = fs__malloc(L, sizeof(double));
  m->cnt = fs__malloc(L, sizeof(int32_t));
  m->key = fs__malloc(L, sizeof(double));
  m->link_seen = fs__calloc(L, sizeof(uint32_t));
  m->flow_seen = fs__calloc(F, sizeof(uint32_t));
  m->comp_links = fs__malloc(L, sizeof(int32_t));
  m->comp_flows = fs__malloc(F, sizeof(int32_t));
  m->new_rate = fs__malloc(F, sizeof(double));
  m->new_y = fs__malloc(L, sizeof(double));
  m->wstamp = fs__calloc(L, sizeof(uint32_t));
  m->wtot = fs__malloc(L, sizeof(double));
  m->bn = fs__malloc(F, sizeof(int32_t));
  m->cstamp = fs__calloc(L, sizeof(uint32_t));
  m->cmin = fs__malloc(L, sizeof(double));
  m->ubmax = fs__malloc(L, sizeof(double));
  m->roff = fs__malloc(F, sizeof(int32_t));
  m->rnum = fs__malloc(F, sizeof(int32_t));
  fs__heap_init(&m->heap, 2, NULL);
  int no_heap = fs__heap_reserve(&m->heap, L ? L : 1);
  if (!m->res || !m->wsum || !m->cnt || !m->key || !m->link_seen ||
      !m->flow_seen || !m->comp_links || !m->comp_flows || !m->new_rate || !m->new_y ||
      no_heap || !m->wstamp || !m->wtot || !m->bn || !m->cstamp ||
      !m->cmin || !m->ubmax || !m->roff || !m->rnum) {
    fs__maxmin_free(m);
    return FS_ENOMEM;
  }
  return 0;
}

int fs__maxmin_grow(fs__maxmin *m, size_t n_old, size_t n_new) {
  uint32_t *seen = realloc(m->flow_seen, n_new * sizeof(uint32_t));
  if (!seen) return FS_ENOMEM;
  memset(seen + n_old, 0, (n_new - n_old) * sizeof(uint32_t));
  m->flow_seen = seen;
#define FS__MM_GROW(field, type)                             \
  do {                                                       \
    type *p_ = realloc(m->field, n_new * sizeof(type));      \
    if (!p_) return FS_ENOMEM;                               \
    m->field = p_;                                           \
  } while (0)
  FS__MM_GROW(comp_flows, int32_t);
  FS__MM_GROW(new_rate, double);
  FS__MM_GROW(bn, int32_t);
  FS__MM_GROW(roff, int32_t);
  FS__MM_GROW(rnum, int32_t);
#undef FS__MM_GROW
  return 0;
}

void fs__maxmin_free(fs__maxmin *m) {
  FS__FREE_ALL(m->res, m->wsum, m->cnt, m->key, m->link_seen, m->flow_seen, m->comp_links,
               m->comp_flows, m->new_rate, m->new_y);
  fs__heap_free(&m->heap);
  FS__FREE_ALL(m->wstamp, m->wtot, m->bn, m->cstamp, m->cmin, m->ubmax);
  FS__FREE_ALL(m->roff, m->rnum, m->rl, m->rw);
  memset(m, 0, sizeof(*m));
}

/* The fill's heap holds one entry per link whose key may be stale but
 * never above the link's current level m->key (levels only rise while
 * filling). A stale top is re-keyed and sifted down instead of updated on
 * every change: one sift per link popped, not one per route entry frozen.
 * When the top is current it is the true minimum, since every other entry
 * is a lower bound of its own link's level. */
/* (fs__heap: 4-ary, entries (level, seq 0, a = link): ordered on the level
 * alone, ties in whatever order the heap operations, themselves
 * deterministic, leave them.) */

/* Relative slack on theta0: flows just below it (by rounding) join S too.
 * Joining is always safe; it only costs work. */
#define EPS 1e-9

/* Room for n more route entries; 0 or FS_ENOMEM (m->nomem set). */
static int route_room(fs__maxmin *m, size_t n) {
  if (m->rlen + n <= m->rcap) return 0;
  size_t cap = m->rcap ? 2 * m->rcap : 1024;
  while (cap < m->rlen + n) cap *= 2;
  int32_t *rl = realloc(m->rl, cap * sizeof(int32_t));
  if (!rl) return m->nomem = FS_ENOMEM;
  m->rl = rl;
  double *rw = realloc(m->rw, cap * sizeof(double));
  if (!rw) return m->nomem = FS_ENOMEM;
  m->rw = rw;
  m->rcap = cap;
  return 0;
}

/* Puts flow f in S, its links in comp_links and its entries that take part
 * in the fill (not fs__skip) in rl/rw; 1 if it was not there. */
static int add_flow_S(fs__simcore *core, fs__maxmin *m, int32_t f) {
  uint32_t ep = m->epoch;
  if (m->flow_seen[f] == ep) return 0;
  const fs__flow *fl = &core->flows[f];
  if (route_room(m, (size_t)fl->n)) return 0;
  m->flow_seen[f] = ep;
  m->comp_flows[m->n_comp_flows++] = f;
  int32_t e = (int32_t)m->rlen;
  m->roff[f] = e;
  for (int32_t k = 0; k < fl->n; k++) {
    int32_t l = fl->links[k];
    if (!fs__skip(core, f, k)) {
      m->rl[e] = fs__inject(core, f, k) ? ~l : l;
      m->rw[e++] = fl->w[k];
    }
    if (m->link_seen[l] == ep) continue;
    m->link_seen[l] = ep;
    m->comp_links[m->n_comp_links++] = l;
  }
  m->rnum[f] = e - m->roff[f];
  m->rlen = (size_t)e;
  return 1;
}

/* Under the source's fair queue (internal.h) a link's waiting windows are
 * one more unfrozen member of the fill, of weight src_w, that freezes only
 * when the link saturates; a waiting flow counts there (it freezes then if
 * still rising) but weighs nothing. */
static int has_queue(const fs__simcore *core, int32_t l) {
  return core->src_w && core->src_w[l] > 0;
}

static void fill_S(fs__simcore *core, fs__maxmin *m) {
  uint32_t ep = m->epoch;
  int32_t left = 0; /* S flows and source queues not frozen yet */
  const int32_t *rl = m->rl;
  const double *rw = m->rw;
  double *res = m->res, *wsum = m->wsum, *ubmax = m->ubmax;
  int32_t *cnt = m->cnt;
  /* Residual = capacity - load of the fixed flows = capacity - link load +
   * S's old share: O(S's route entries), not O(flows on S's links). */
  for (int32_t i = 0; i < m->n_comp_links; i++) {
    int32_t l = m->comp_links[i];
    res[l] = core->cap_Bps[l] - core->load[l];
    wsum[l] = 0;
    cnt[l] = 0;
    ubmax[l] = 0;
    if (has_queue(core, l)) {
      res[l] += core->src_w[l] * core->src_y[l];
      wsum[l] = core->src_w[l];
      cnt[l] = 1;
      m->new_y[l] = -1;
      ubmax[l] = INFINITY;
      left++;
    }
  }
  for (int32_t i = 0; i < m->n_comp_flows; i++) {
    int32_t f = m->comp_flows[i];
    double x = core->flows[f].rate;
    m->new_rate[f] = -1;
    left++;
    for (int32_t e = m->roff[f], end = e + m->rnum[f]; e < end; e++) {
      int32_t l = rl[e];
      if (l < 0) { /* a waiting window: counts, weighs nothing */
        cnt[~l]++;
        continue;
      }
      double w = rw[e];
      cnt[l]++;
      res[l] += w * x;
      wsum[l] += w;
    }
  }
  /* The kept load carries rounding from its updates (~1e-16 of the largest
   * load the link had): harmless against a capacity, but a failed link must
   * leave exactly nothing. */
  for (int32_t i = 0; i < m->n_comp_links; i++) {
    int32_t l = m->comp_links[i];
    if (!(res[l] > 0) || !(core->cap_Bps[l] > 0)) res[l] = 0;
  }
  /* A flow alone (in S) on every one of its links shares nothing: its rate
   * is its tightest residual, no filling needed. Rings and many collective
   * steps are mostly such flows, which keeps the heap small. (A waiting
   * flow never is: its source queue shares the link.)
   *
   * A flow freezes at or below ub = min over its links of res / w (its
   * links never give more; a source queue's link gives at most res / src_w).
   * A link's level only rises from res / wsum, so a link starting above the
   * ub of every S flow on it never freezes one: left out of the heap (most
   * slack links; about a third of the heap on B4). A source queue always
   * freezes on its link. */
  for (int32_t i = 0; i < m->n_comp_flows; i++) {
    int32_t f = m->comp_flows[i];
    int32_t e0 = m->roff[f], end = e0 + m->rnum[f];
    int alone = 0;
    for (int32_t e = e0; e < end; e++) {
      int32_t l = rl[e];
      alone = cnt[l < 0 ? ~l : l] == 1;
      if (!alone) break;
    }
    if (alone) {
      left--;
      double rate = INFINITY;
      int32_t bl = -1;
      for (int32_t e = e0; e < end; e++) {
        int32_t l = rl[e] < 0 ? ~rl[e] : rl[e];
        double r = res[l] / rw[e];
        if (r < rate) rate = r, bl = l;
        cnt[l] = 0;
      }
      m->new_rate[f] = rate;
      m->bn[f] = bl;
      continue;
    }
    double ub = INFINITY;
    for (int32_t e = e0; e < end; e++) {
      int32_t l = rl[e];
      double r = l < 0 ? res[~l] / core->src_w[~l] : res[l] / rw[e];
      if (r < ub) ub = r;
    }
    for (int32_t e = e0; e < end; e++) {
      int32_t l = rl[e];
      if (l < 0) l = ~l;
      if (ub > ubmax[l]) ubmax[l] = ub;
    }
  }
  fs__heap *h = &m->heap;
  h->len = 0;
  for (int32_t i = 0; i < m->n_comp_links; i++) {
    int32_t l = m->comp_links[i];
    if (!cnt[l]) continue;
    m->key[l] = wsum[l] > 0 ? res[l] / wsum[l] : INFINITY;
    if (m->key[l] <= ubmax[l]) h->e[h->len++] = (fs__heap_ent){m->key[l], 0, l, 0};
  }
  fs__heap_build_t(h);
  /* Once every S flow is frozen the links left (slack ones, mostly: their
   * levels are the highest) have nothing to freeze. */
  while (h->len && left > 0) {
    int32_t l = h->e[0].a;
    if (cnt[l] && h->e[0].t < m->key[l]) { /* stale: re-key */
      h->e[0].t = m->key[l];
      fs__heap_sift_down_t(h, 0);
      continue;
    }
    double level = h->e[0].t;
    fs__heap_pop_t(h);
    if (cnt[l] == 0) continue;
    const fs__link_active *a = &core->active[l];
    for (int32_t j = 0; j < a->n; j++) {
      int32_t f = a->flow[j];
      if (m->flow_seen[f] != ep || m->new_rate[f] >= 0 || fs__skip(core, f, a->slot[j])) continue;
      m->new_rate[f] = level;
      m->bn[f] = l;
      left--;
      for (int32_t e = m->roff[f], end = e + m->rnum[f]; e < end; e++) {
        int32_t l2 = rl[e];
        if (l2 < 0) { /* weighs nothing: its link's level stays */
          cnt[~l2]--;
          continue;
        }
        double w = rw[e];
        res[l2] -= w * level;
        if (res[l2] < 0) res[l2] = 0;
        wsum[l2] -= w;
        if (--cnt[l2] == 0 || l2 == l) continue;
        double ws = wsum[l2] > 0 ? wsum[l2] : 1e-300;
        double k2 = res[l2] / ws;
        if (k2 < level) k2 = level;
        m->key[l2] = k2;
      }
    }
    if (has_queue(core, l) && m->new_y[l] < 0) { /* the link's waiting windows */
      m->new_y[l] = level;
      left--;
      cnt[l]--;
    }
  }
}

static int crosses_failed_link(const fs__simcore *core, const fs__flow *fl) {
  for (int32_t k = 0; k < fl->n; k++)
    if (!(core->cap_Bps[fl->links[k]] > 0)) return 1;
  return 0;
}

/* Total weight on link l now, once per re-rating. */
static double link_weight(const fs__simcore *core, fs__maxmin *m, int32_t l) {
  if (m->wstamp[l] == m->epoch) return m->wtot[l];
  const fs__link_active *a = &core->active[l];
  double w = 0;
  for (int32_t j = 0; j < a->n; j++) w += core->flows[a->flow[j]].w[a->slot[j]];
  m->wstamp[l] = m->epoch;
  m->wtot[l] = w;
  return w;
}

/* Walks comp_links from index `from` (the list grows as it goes). On a
 * changed link every flow at rate >= cut joins S. On another link of S a
 * flow joins only if the link is one of its bottlenecks under the old rates
 * (saturated, and the flow is the fastest on it) and its rate is >= cut:
 * a rate is set by its bottleneck links, and a flow none of whose
 * bottlenecks is reached keeps them as they were. The fill can still load
 * a slack link up to where a fixed flow on it is too fast; the check after
 * the fill catches that (see fs__maxmin_rerate). */
static void walk(fs__simcore *core, fs__maxmin *m, int32_t from, double cut) {
  if (!(cut < INFINITY)) return;
  for (int32_t i = from; i < m->n_comp_links; i++) {
    int32_t l = m->comp_links[i];
    const fs__link_active *a = &core->active[l];
    double bar = cut;
    if (!core->is_dirty[l] || !core->arrived[l]) {
      /* Old stats: the leavers' share is added back. */
      double load = core->load[l] + core->gone_load[l];
      if (!(load >= core->cap_Bps[l] * (1 - EPS))) continue; /* slack */
      double mx = core->gone_max[l];
      if (has_queue(core, l) && core->src_y[l] > mx) mx = core->src_y[l];
      for (int32_t j = 0; j < a->n; j++) {
        double x = fs__pace(core, a->flow[j], a->slot[j]);
        if (x > mx) mx = x;
      }
      if (mx * (1 - EPS) > bar) bar = mx * (1 - EPS);
    }
    for (int32_t j = 0; j < a->n; j++) {
      int32_t g = a->flow[j];
      if (m->flow_seen[g] != m->epoch && fs__pace(core, g, a->slot[j]) >= bar)
        add_flow_S(core, m, g);
    }
  }
}

/* Link l froze an S member at rate x: cmin[l] is the slowest (stamp st). */
static void note_frozen(fs__maxmin *m, uint32_t st, int32_t l, double x) {
  if (m->cstamp[l] != st) {
    m->cstamp[l] = st;
    m->cmin[l] = x;
  } else if (x < m->cmin[l]) {
    m->cmin[l] = x;
  }
}

/* Fixed flows on l faster than its slowest frozen S member join S. */
static int32_t scan_frozen(fs__simcore *core, fs__maxmin *m, uint32_t st, int32_t l) {
  if (l < 0 || m->cstamp[l] != st) return 0;
  m->cstamp[l] = st - 1; /* scan each link once */
  double lim = m->cmin[l] * (1 + EPS);
  const fs__link_active *a = &core->active[l];
  int32_t added = 0;
  for (int32_t j = 0; j < a->n; j++) {
    int32_t g = a->flow[j];
    if (m->flow_seen[g] != m->epoch && fs__pace(core, g, a->slot[j]) > lim)
      added += add_flow_S(core, m, g);
  }
  return added;
}

/* After a fill: every S flow froze on a saturated link l where S flows are
 * at most as fast (a source queue: on its link); fixed flows on l must be
 * too. Those faster join S. Returns how many joined. */
static int32_t check_frozen(fs__simcore *core, fs__maxmin *m) {
  uint32_t st = ++m->cround;
  if (st == 0) {
    memset(m->cstamp, 0, (size_t)core->t->n_links * sizeof(uint32_t));
    st = m->cround = 1;
  }
  int32_t n = m->n_comp_flows;
  for (int32_t i = 0; i < n; i++) {
    int32_t f = m->comp_flows[i], l = m->bn[f];
    if (l >= 0) note_frozen(m, st, l, m->new_rate[f]);
  }
  int32_t nl = m->n_comp_links; /* the fill's links (the scans add more) */
  for (int32_t i = 0; i < nl; i++) {
    int32_t l = m->comp_links[i];
    if (has_queue(core, l)) note_frozen(m, st, l, m->new_y[l]);
  }
  int32_t added = 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t f = m->comp_flows[i];
    added += scan_frozen(core, m, st, m->bn[f]);
  }
  for (int32_t i = 0; i < nl; i++)
    if (has_queue(core, m->comp_links[i])) added += scan_frozen(core, m, st, m->comp_links[i]);
  return added;
}

/* A source queue on a link of S: its share is re-filled even when no flow
 * is (a window left it and nothing else changes). */
static int queue_reached(const fs__simcore *core, const fs__maxmin *m) {
  for (int32_t i = 0; core->src_w && i < m->n_comp_links; i++)
    if (has_queue(core, m->comp_links[i])) return 1;
  return 0;
}

int fs__maxmin_rerate(fs__simcore *core, fs__maxmin *m) {
  if (++m->epoch == 0) {
    memset(m->link_seen, 0, (size_t)core->t->n_links * sizeof(uint32_t));
    memset(m->flow_seen, 0, (size_t)core->n_flows * sizeof(uint32_t));
    memset(m->wstamp, 0, (size_t)core->t->n_links * sizeof(uint32_t));
    m->epoch = 1;
  }
  uint32_t ep = m->epoch;
  m->n_comp_links = m->n_comp_flows = 0;
  m->rlen = 0;
  m->nomem = 0;
  double theta = core->theta;
  /* The changed links first, so that the walk starts from them. */
  for (size_t i = 0; i < core->n_dirty; i++) {
    int32_t l = core->dirty_links[i];
    m->link_seen[l] = ep;
    m->comp_links[m->n_comp_links++] = l;
  }
  /* Seeds: the flows without a rate (arrivals, re-routed, re-entered, or on
   * a link whose capacity changed), all on changed links. */
  for (size_t i = 0; i < core->n_dirty; i++) {
    const fs__link_active *a = &core->active[core->dirty_links[i]];
    for (int32_t j = 0; j < a->n; j++) {
      int32_t g = a->flow[j];
      const fs__flow *fl = &core->flows[g];
      if (fl->rate != 0 || !add_flow_S(core, m, g) || crosses_failed_link(core, fl)) continue;
      for (int32_t k = 0; k < fl->n; k++) {
        int32_t l = fl->links[k];
        double bound = core->cap_Bps[l] / link_weight(core, m, l);
        if (bound < theta) theta = bound;
      }
    }
  }
  int32_t walked = 0;
  for (;;) {
    double cut = theta * (1 - EPS);
    walk(core, m, walked, cut);
    walked = m->n_comp_links;
    if (m->nomem) break;
    if (!m->n_comp_flows && !queue_reached(core, m)) break;
    fill_S(core, m);
    double mu = INFINITY;
    for (int32_t i = 0; i < m->n_comp_flows; i++) {
      int32_t f = m->comp_flows[i];
      double x = m->new_rate[f];
      if (x < mu && !(x == 0 && crosses_failed_link(core, &core->flows[f]))) mu = x;
    }
    if (mu < cut) {
      theta = mu; /* S must reach further down: walk again from the start */
      walked = 0;
      continue;
    }
    if (!check_frozen(core, m)) break;
  }
  core->theta = INFINITY;
  return m->nomem;
}
