/* The topology and routing oracles of topo_oracle.h. */
#include "topo_oracle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

fs_topo *oracle_spec(const char *s) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  int rc = fs_topo_from_spec(s, &t, &err);
  if (rc) test_fail(__FILE__, __LINE__, "%s: %s", s, err.msg);
  return rc ? NULL : t;
}

fs_topo_stats oracle_stats_of(const fs_topo *t) {
  fs_topo_stats st;
  memset(&st, 0, sizeof(st));
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_stats_compute(t, &st, &err), &err);
  return st;
}

void oracle_bfs(const fs_topo *t, int32_t src, int through_hosts, int32_t *dist, int32_t *q) {
  for (int32_t v = 0; v < t->n_nodes; v++) dist[v] = -1;
  int32_t head = 0, tail = 0;
  dist[src] = 0;
  q[tail++] = src;
  while (head < tail) {
    int32_t u = q[head++];
    if (!through_hosts && u != src && t->nodes[u].kind == FS_NODE_HOST) continue;
    for (int32_t l = 0; l < t->n_links; l++) /* deliberately the slow way */
      if (t->links[l].from == u && dist[t->links[l].to] < 0) {
        dist[t->links[l].to] = dist[u] + 1;
        q[tail++] = t->links[l].to;
      }
  }
}

void oracle_hops(const fs_topo *t, int through_hosts, int *diameter, double *avg) {
  int32_t *dist = malloc(sizeof(int32_t) * (size_t)t->n_nodes);
  int32_t *q = malloc(sizeof(int32_t) * (size_t)t->n_nodes);
  long long sum = 0;
  int diam = 0, H = t->n_hosts;
  for (int32_t s = 0; s < H; s++) {
    oracle_bfs(t, s, through_hosts, dist, q);
    for (int32_t h = 0; h < H; h++) {
      if (h == s) continue;
      sum += dist[h];
      if (dist[h] > diam) diam = dist[h];
    }
  }
  free(dist);
  free(q);
  *diameter = diam;
  *avg = (double)sum / ((double)H * (H - 1));
}

double oracle_min_cut(const fs_topo *t) {
  int H = t->n_hosts, others = t->n_nodes - H;
  if (others > 20) {
    test_fail(__FILE__, __LINE__, "oracle_min_cut: %d non-hosts is too many", others);
    return -1;
  }
  char *src = malloc((size_t)t->n_nodes);
  double best = HUGE_VAL;
  for (long mask = 0; mask < (1L << others); mask++) {
    for (int v = 0; v < t->n_nodes; v++)
      src[v] = v < H ? (v < H / 2) : (char)((mask >> (v - H)) & 1);
    double cut = 0;
    for (int l = 0; l < t->n_links; l++)
      if (src[t->links[l].from] && !src[t->links[l].to]) cut += t->links[l].capacity_bps;
    if (cut < best) best = cut;
  }
  free(src);
  return best;
}

double oracle_path_count(const fs_topo *t, int32_t v, int32_t dst, int hops) {
  if (v == dst) return hops == 0;
  if (hops == 0) return 0;
  double n = 0;
  for (int32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++) {
    int32_t w = t->links[t->out_links[i]].to;
    if (w != dst && t->nodes[w].kind == FS_NODE_HOST) continue;
    n += oracle_path_count(t, w, dst, hops - 1);
  }
  return n;
}
