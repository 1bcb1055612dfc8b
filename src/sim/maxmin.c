/* Max-min fair rates by progressive filling, on one connected component.
 *
 * All unfrozen flows rise together; link l saturates at level
 * res(l) / wsum(l) (residual capacity over the unfrozen weight on it). The
 * link with the lowest level freezes its unfrozen flows at that level, which
 * lowers res and wsum of their other links. A link's level never decreases
 * when flows elsewhere freeze (res - w*t over wsum - w, with t <= level), so a
 * lazy-deletion heap keyed on level is exact: stale entries are skipped.
 * Cost: O((L + R) log L) for L links and R route entries in the component. */
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
  if (!m->res || !m->wsum || !m->cnt || !m->key || !m->link_seen ||
      !m->flow_seen || !m->comp_links || !m->comp_flows || !m->new_rate) {
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
  memset(m, 0, sizeof(*m));
}

static int heap_less(const fs__maxmin *m, size_t a, size_t b) {
  if (m->heap[a].key != m->heap[b].key) return m->heap[a].key < m->heap[b].key;
  return m->heap[a].link < m->heap[b].link;
}

static int heap_push(fs__maxmin *m, double key, int32_t link) {
  if (fs__grow(&m->heap, &m->heap_cap, m->heap_len + 1, sizeof(*m->heap)))
    return FS_ENOMEM;
  size_t i = m->heap_len++;
  m->heap[i].key = key;
  m->heap[i].link = link;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!heap_less(m, i, p)) break;
    fs__lkey tmp = m->heap[i];
    m->heap[i] = m->heap[p];
    m->heap[p] = tmp;
    i = p;
  }
  return 0;
}

static void heap_pop(fs__maxmin *m, double *key, int32_t *link) {
  *key = m->heap[0].key;
  *link = m->heap[0].link;
  m->heap[0] = m->heap[--m->heap_len];
  size_t i = 0, n = m->heap_len;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && heap_less(m, c + 1, c)) c++;
    if (!heap_less(m, c, i)) break;
    fs__lkey tmp = m->heap[i];
    m->heap[i] = m->heap[c];
    m->heap[c] = tmp;
    i = c;
  }
}

/* Breadth-first over the flow-link incidence, from the dirty links. */
static void gather(fs__simcore *core, fs__maxmin *m) {
  if (++m->epoch == 0) {
    memset(m->link_seen, 0, (size_t)core->t->n_links * sizeof(uint32_t));
    memset(m->flow_seen, 0, (size_t)core->n_flows * sizeof(uint32_t));
    m->epoch = 1;
  }
  uint32_t ep = m->epoch;
  m->n_comp_links = m->n_comp_flows = 0;
  for (size_t i = 0; i < core->n_dirty; i++) {
    int32_t l = core->dirty_links[i];
    if (m->link_seen[l] == ep) continue;
    m->link_seen[l] = ep;
    m->comp_links[m->n_comp_links++] = l;
  }
  for (int32_t head = 0; head < m->n_comp_links; head++) {
    const fs__link_active *a = &core->active[m->comp_links[head]];
    for (int32_t j = 0; j < a->n; j++) {
      int32_t f = a->flow[j];
      if (m->flow_seen[f] == ep) continue;
      m->flow_seen[f] = ep;
      m->comp_flows[m->n_comp_flows++] = f;
      const fs__flow *fl = &core->flows[f];
      for (int32_t k = 0; k < fl->n; k++) {
        int32_t l2 = core->route_links[fl->off + k];
        if (m->link_seen[l2] == ep) continue;
        m->link_seen[l2] = ep;
        m->comp_links[m->n_comp_links++] = l2;
      }
    }
  }
}

int fs__maxmin_component(fs__simcore *core, fs__maxmin *m) {
  gather(core, m);
  /* Flows are frozen when flow_seen is bumped past the epoch's mark; reuse
   * new_rate < 0 as "not frozen yet". */
  for (int32_t i = 0; i < m->n_comp_links; i++) {
    int32_t l = m->comp_links[i];
    m->res[l] = core->cap_Bps[l];
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
  m->heap_len = 0;
  for (int32_t i = 0; i < m->n_comp_links; i++) {
    int32_t l = m->comp_links[i];
    if (!m->cnt[l]) continue;
    m->key[l] = m->res[l] / m->wsum[l];
    if (heap_push(m, m->key[l], l)) return FS_ENOMEM;
  }
  while (m->heap_len) {
    double level;
    int32_t l;
    heap_pop(m, &level, &l);
    if (m->cnt[l] == 0 || level != m->key[l]) continue; /* stale */
    const fs__link_active *a = &core->active[l];
    for (int32_t j = 0; j < a->n; j++) {
      int32_t f = a->flow[j];
      if (m->new_rate[f] >= 0) continue;
      m->new_rate[f] = level;
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
        if (k2 < level) k2 = level; /* rounding: levels never go down */
        m->key[l2] = k2;
        if (heap_push(m, k2, l2)) return FS_ENOMEM;
      }
    }
  }
  return 0;
}
