/* Max-min fair rates, recomputed incrementally after each batch.
 *
 * Max-min fairness is characterised by the bottleneck property (Bertsekas &
 * Gallager, Data Networks, 6.5.2): every flow crosses a saturated link on
 * which no flow has a higher rate. Before a batch every flow has one. After
 * flows arrive or leave, a set S of flows is re-rated by progressive filling
 * on the capacity left by the others, which keep their rates; S starts with
 * the arrivals. Then every flow on a touched link (changed by the batch, or
 * used by S) is checked for a bottleneck; a fixed flow without one joins S,
 * and so does a fixed flow that is faster than an S flow on that flow's
 * bottleneck. S is refilled until nothing joins. S only grows and S = the
 * whole connected component is plain progressive filling, so the result is
 * the max-min allocation; in practice S stays small (0.2-0.4% of the flows a
 * full component recomputation would touch on the benchmarks).
 *
 * Progressive filling: all S flows rise together; link l saturates at level
 * res(l) / wsum(l) (residual capacity over S's unfrozen weight on it); the
 * lowest level freezes its unfrozen flows, lowering res and wsum of their
 * other links. An indexed heap holds one entry per link.
 * Cost per fill: O((L + R) log L) for L links and R route entries of S. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
  m->hpos = fs__malloc(L, sizeof(int32_t));
  m->bn = fs__malloc(F, sizeof(int32_t));
  m->fchk = fs__calloc(F, sizeof(uint32_t));
  m->lst = fs__calloc(L, sizeof(uint32_t));
  m->load = fs__malloc(L, sizeof(double));
  m->maxr = fs__malloc(L, sizeof(double));
  m->pvalid = fs__calloc(L, sizeof(uint8_t));
  m->heap = fs__malloc(L, sizeof(*m->heap));
  m->heap_cap = L;
  if (m->hpos) for (size_t i = 0; i < L; i++) m->hpos[i] = -1;
  if (m->bn) for (size_t i = 0; i < F; i++) m->bn[i] = -1;
  if (!m->res || !m->wsum || !m->cnt || !m->key || !m->link_seen ||
      !m->flow_seen || !m->comp_links || !m->comp_flows || !m->new_rate ||
      !m->hpos || !m->heap || !m->bn || !m->fchk || !m->lst || !m->load ||
      !m->maxr || !m->pvalid) {
    fs__maxmin_free(m);
    return FS_ENOMEM;
  }
  return 0;
}

void fs__maxmin_free(fs__maxmin *m) {
  free(m->res);
  free(m->wsum);
  free(m->cnt);
  free(m->key);
  free(m->link_seen);
  free(m->flow_seen);
  free(m->comp_links);
  free(m->comp_flows);
  free(m->new_rate);
  free(m->heap);
  free(m->hpos);
  free(m->bn);
  free(m->fchk);
  free(m->lst);
  free(m->load);
  free(m->maxr);
  free(m->pvalid);
  memset(m, 0, sizeof(*m));
}

static int hless(const fs__lkey *a, const fs__lkey *b) {
  if (a->key != b->key) return a->key < b->key;
  return a->link < b->link;
}

static void sift_up(fs__maxmin *m, size_t i) {
  fs__lkey x = m->heap[i];
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!hless(&x, &m->heap[p])) break;
    m->heap[i] = m->heap[p];
    m->hpos[m->heap[i].link] = (int32_t)i;
    i = p;
  }
  m->heap[i] = x;
  m->hpos[x.link] = (int32_t)i;
}

static void sift_down(fs__maxmin *m, size_t i) {
  fs__lkey x = m->heap[i];
  size_t n = m->heap_len;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && hless(&m->heap[c + 1], &m->heap[c])) c++;
    if (!hless(&m->heap[c], &x)) break;
    m->heap[i] = m->heap[c];
    m->hpos[m->heap[i].link] = (int32_t)i;
    i = c;
  }
  m->heap[i] = x;
  m->hpos[x.link] = (int32_t)i;
}

/* Inserts link or updates its key. Keys only rise in exact arithmetic;
 * sifting both ways keeps the heap valid under rounding too. */
static void heap_set(fs__maxmin *m, double key, int32_t link) {
  int32_t p = m->hpos[link];
  if (p >= 0) {
    m->heap[p].key = key;
    sift_up(m, (size_t)p);
    sift_down(m, (size_t)m->hpos[link]);
    return;
  }
  size_t i = m->heap_len++;
  m->heap[i].key = key;
  m->heap[i].link = link;
  sift_up(m, i);
}

static void heap_pop(fs__maxmin *m, double *key, int32_t *link) {
  *key = m->heap[0].key;
  *link = m->heap[0].link;
  m->hpos[*link] = -1;
  if (--m->heap_len) {
    m->heap[0] = m->heap[m->heap_len];
    sift_down(m, 0);
  }
}

/* Bottleneck test tolerance: relative, far above summation rounding. A
 * spurious failure only makes S larger (more work), never a wrong rate. */
#define EPS 1e-9

static int add_flow_S(fs__simcore *core, fs__maxmin *m, int32_t f) {
  uint32_t ep = m->epoch;
  if (m->flow_seen[f] == ep) return 0;
  m->flow_seen[f] = ep;
  m->comp_flows[m->n_comp_flows++] = f;
  const fs__flow *fl = &core->flows[f];
  for (int32_t k = 0; k < fl->n; k++) {
    int32_t l = core->route_links[fl->off + k];
    if (m->link_seen[l] == ep) continue;
    m->link_seen[l] = ep;
    m->comp_links[m->n_comp_links++] = l;
  }
  return 1;
}

static double cur_rate(const fs__simcore *core, const fs__maxmin *m, int32_t f) {
  return m->flow_seen[f] == m->epoch ? m->new_rate[f] : core->flows[f].rate;
}

/* Load and fastest rate on link l, once per round. A link untouched by this
 * re-rating (not dirty, no S flow on it) whose stats were computed while it
 * was untouched keeps them across batches: its flows and their rates are
 * the same, so the scan would give the same sums bit for bit. */
static void link_stats(const fs__simcore *core, fs__maxmin *m, int32_t l) {
  if (m->lst[l] == m->round) return;
  m->lst[l] = m->round;
  int untouched = m->link_seen[l] != m->epoch && !core->is_dirty[l];
  if (untouched && m->pvalid[l]) return;
  m->pvalid[l] = (uint8_t)untouched;
  const fs__link_active *a = &core->active[l];
  double load = 0, mx = 0;
  for (int32_t j = 0; j < a->n; j++) {
    int32_t g = a->flow[j];
    double x = cur_rate(core, m, g);
    load += core->route_w[core->flows[g].off + a->slot[j]] * x;
    if (x > mx) mx = x;
  }
  m->load[l] = load;
  m->maxr[l] = mx;
}

static int is_bottleneck(const fs__simcore *core, fs__maxmin *m, int32_t l, double x) {
  link_stats(core, m, l);
  return m->load[l] >= core->cap_Bps[l] * (1 - EPS) && x >= m->maxr[l] * (1 - EPS);
}

/* Tries the flow's last known bottleneck first: it usually still is one, and
 * then only that link's flows are scanned instead of every link's. */
static int has_bottleneck(const fs__simcore *core, fs__maxmin *m, int32_t g) {
  const fs__flow *fl = &core->flows[g];
  double x = cur_rate(core, m, g);
  if (!(x > 0)) {
    /* Stalled on a link without capacity (failed): that link is its
     * bottleneck, and it must not drag its neighbours into S forever. */
    for (int32_t k = 0; k < fl->n; k++) {
      int32_t l = core->route_links[fl->off + k];
      if (!(core->cap_Bps[l] > 0)) {
        m->bn[g] = l;
        return 1;
      }
    }
    return 0;
  }
  if (m->bn[g] >= 0 && is_bottleneck(core, m, m->bn[g], x)) return 1;
  for (int32_t k = 0; k < fl->n; k++) {
    int32_t l = core->route_links[fl->off + k];
    if (l != m->bn[g] && is_bottleneck(core, m, l, x)) {
      m->bn[g] = l;
      return 1;
    }
  }
  return 0;
}

static void fill_S(fs__simcore *core, fs__maxmin *m) {
  uint32_t ep = m->epoch;
  for (int32_t i = 0; i < m->n_comp_links; i++) {
    int32_t l = m->comp_links[i];
    double res = core->cap_Bps[l];
    const fs__link_active *a = &core->active[l];
    for (int32_t j = 0; j < a->n; j++) {
      int32_t g = a->flow[j];
      if (m->flow_seen[g] == ep) continue;
      res -= core->route_w[core->flows[g].off + a->slot[j]] * core->flows[g].rate;
    }
    m->res[l] = res > 0 ? res : 0;
    m->wsum[l] = 0;
    m->cnt[l] = 0;
  }
  for (int32_t i = 0; i < m->n_comp_flows; i++) {
    int32_t f = m->comp_flows[i];
    const fs__flow *fl = &core->flows[f];
    m->new_rate[f] = -1;
    for (int32_t k = 0; k < fl->n; k++) {
      int32_t l = core->route_links[fl->off + k];
      m->wsum[l] += core->route_w[fl->off + k];
      m->cnt[l]++;
    }
  }
  /* A flow alone (in S) on every one of its links shares nothing: its rate
   * is its tightest residual, no filling needed. Rings and many collective
   * steps are mostly such flows, which keeps the heap small. */
  for (int32_t i = 0; i < m->n_comp_flows; i++) {
    int32_t f = m->comp_flows[i];
    const fs__flow *fl = &core->flows[f];
    int alone = fl->n > 0;
    for (int32_t k = 0; k < fl->n && alone; k++) alone = m->cnt[core->route_links[fl->off + k]] == 1;
    if (!alone) continue;
    double rate = INFINITY;
    int32_t bl = -1;
    for (int32_t k = 0; k < fl->n; k++) {
      int32_t l = core->route_links[fl->off + k];
      double r = m->res[l] / core->route_w[fl->off + k];
      if (r < rate) rate = r, bl = l;
    }
    m->new_rate[f] = rate;
    m->bn[f] = bl;
    for (int32_t k = 0; k < fl->n; k++) m->cnt[core->route_links[fl->off + k]] = 0;
  }
  m->heap_len = 0;
  for (int32_t i = 0; i < m->n_comp_links; i++) {
    int32_t l = m->comp_links[i];
    if (!m->cnt[l]) continue;
    m->key[l] = m->res[l] / m->wsum[l];
    heap_set(m, m->key[l], l);
  }
  while (m->heap_len) {
    double level;
    int32_t l;
    heap_pop(m, &level, &l);
    if (m->cnt[l] == 0) continue;
    const fs__link_active *a = &core->active[l];
    for (int32_t j = 0; j < a->n; j++) {
      int32_t f = a->flow[j];
      if (m->flow_seen[f] != ep || m->new_rate[f] >= 0) continue;
      m->new_rate[f] = level;
      m->bn[f] = l;
      const fs__flow *fl = &core->flows[f];
      for (int32_t k = 0; k < fl->n; k++) {
        int32_t l2 = core->route_links[fl->off + k];
        double w = core->route_w[fl->off + k];
        m->res[l2] -= w * level;
        if (m->res[l2] < 0) m->res[l2] = 0;
        m->wsum[l2] -= w;
        if (--m->cnt[l2] == 0 || l2 == l) continue;
        double ws = m->wsum[l2] > 0 ? m->wsum[l2] : 1e-300;
        double k2 = m->res[l2] / ws;
        if (k2 < level) k2 = level;
        m->key[l2] = k2;
        heap_set(m, k2, l2);
      }
    }
  }
}

/* Checks every flow on link l; returns how many joined S. */
static int32_t check_link(fs__simcore *core, fs__maxmin *m, int32_t l) {
  int32_t added = 0;
  const fs__link_active *a = &core->active[l];
  for (int32_t j = 0; j < a->n; j++) {
    int32_t g = a->flow[j];
    if (m->fchk[g] == m->round) continue;
    m->fchk[g] = m->round;
    if (has_bottleneck(core, m, g)) continue;
    if (m->flow_seen[g] != m->epoch) {
      added += add_flow_S(core, m, g);
      continue;
    }
    /* In S but a fixed flow on its bottleneck is faster: that one must
     * come down, so it joins S. Fall back to every fixed neighbour. */
    int32_t b = m->bn[g];
    double x = m->new_rate[g];
    int32_t before = added;
    const fs__link_active *ab = &core->active[b];
    for (int32_t i = 0; i < ab->n; i++) {
      int32_t h = ab->flow[i];
      if (m->flow_seen[h] != m->epoch && core->flows[h].rate > x * (1 + EPS))
        added += add_flow_S(core, m, h);
    }
    if (added == before) {
      const fs__flow *fl = &core->flows[g];
      for (int32_t k = 0; k < fl->n; k++) {
        const fs__link_active *ak = &core->active[core->route_links[fl->off + k]];
        for (int32_t i = 0; i < ak->n; i++) added += add_flow_S(core, m, ak->flow[i]);
      }
    }
  }
  return added;
}

int fs__maxmin_rerate(fs__simcore *core, fs__maxmin *m) {
  for (size_t i = 0; i < core->n_dirty; i++) m->pvalid[core->dirty_links[i]] = 0;
  if (++m->epoch == 0) {
    memset(m->link_seen, 0, (size_t)core->t->n_links * sizeof(uint32_t));
    memset(m->flow_seen, 0, (size_t)core->n_flows * sizeof(uint32_t));
    m->epoch = 1;
  }
  m->n_comp_links = m->n_comp_flows = 0;
  /* Seed: new flows (rate 0). */
  for (size_t i = 0; i < core->n_dirty; i++) {
    const fs__link_active *a = &core->active[core->dirty_links[i]];
    for (int32_t j = 0; j < a->n; j++)
      if (core->flows[a->flow[j]].rate == 0) add_flow_S(core, m, a->flow[j]);
  }
  for (;;) {
    if (m->n_comp_flows) fill_S(core, m);
    if (++m->round == 0) {
      memset(m->lst, 0, (size_t)core->t->n_links * sizeof(uint32_t));
      memset(m->fchk, 0, (size_t)core->n_flows * sizeof(uint32_t));
      m->round = 1;
    }
    int32_t added = 0;
    for (size_t i = 0; i < core->n_dirty; i++) added += check_link(core, m, core->dirty_links[i]);
    int32_t nl = m->n_comp_links; /* links added during the check wait for next round */
    for (int32_t i = 0; i < nl; i++) added += check_link(core, m, m->comp_links[i]);
    if (!added) break;
  }
  /* S's rates change now: stats of its links are stale from here on. */
  for (int32_t i = 0; i < m->n_comp_links; i++) m->pvalid[m->comp_links[i]] = 0;
  return 0;
}
