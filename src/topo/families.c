/* Builders of the topology families: star, leaf-spine, k-ary fat-tree.
 * Each validates its parameters (naming the bad one), then lays out hosts
 * first in the documented order, then switches tier by tier, then cables:
 * host cables first, then upward tier by tier. */
#include <math.h>
#include <stdio.h>

#include "internal.h"

/* Limits keep a typo from asking for gigabytes: 4M nodes and 4M cables
 * (a fat-tree k=128 has 1.6M cables, a 32k-GPU fabric well under 1M). */
enum { MAX_NODES = 1 << 22, MAX_CABLES = 1 << 22 };
#define MAX_GBPS 1e7
#define MAX_LATENCY_NS 1000000000000LL

static int check_common(const char *fam, double gbps, const char *gname,
                        int64_t latency_ns, fs_err *err) {
  if (!(gbps > 0) || !isfinite(gbps) || gbps > MAX_GBPS)
    return fs_err_set(err, FS_EINVAL, "%s: %s must be in (0, %g], got %g", fam,
                      gname, MAX_GBPS, gbps);
  if (latency_ns < 0 || latency_ns > MAX_LATENCY_NS)
    return fs_err_set(err, FS_EINVAL,
                      "%s: latency_ns must be in [0, %lld], got %lld", fam,
                      (long long)MAX_LATENCY_NS, (long long)latency_ns);
  return 0;
}

#define TRY(expr)                    \
  do {                               \
    if ((rc = (expr)) < 0) goto oom; \
  } while (0)

int fs_topo_star(int32_t hosts, double gbps, int64_t latency_ns,
                 fs_topo **out, fs_err *err) {
  int rc = check_common("star", gbps, "gbps", latency_ns, err);
  if (rc) return rc;
  if (hosts < 1 || hosts > MAX_NODES - 1)
    return fs_err_set(err, FS_EINVAL, "star: hosts must be in [1, %d], got %d",
                      MAX_NODES - 1, hosts);
  fs__topo_builder b;
  if ((rc = fs__tb_init(&b, "star", hosts + 1, 2 * hosts, err))) return rc;
  for (int32_t h = 0; h < hosts; h++) TRY(fs__tb_node(&b, FS_NODE_HOST, 0, h, -1));
  int32_t sw;
  TRY(sw = fs__tb_node(&b, FS_NODE_SWITCH, 1, 0, -1));
  for (int32_t h = 0; h < hosts; h++) TRY(fs__tb_cable(&b, h, sw, gbps * 1e9, latency_ns));
  snprintf(b.t->spec, sizeof(b.t->spec), "star:hosts=%d,gbps=%g,latency_ns=%lld",
           hosts, gbps, (long long)latency_ns);
  return fs__tb_finish(&b, out, err);
oom:
  fs__tb_abort(&b);
  return fs_err_set(err, FS_ENOMEM, "out of memory building star");
}

int fs_topo_leafspine(const fs_leafspine_params *p, fs_topo **out,
                      fs_err *err) {
  int rc = check_common("leafspine", p->host_gbps, "host_gbps", p->latency_ns, err);
  if (rc) return rc;
  if ((rc = check_common("leafspine", p->fabric_gbps, "fabric_gbps", p->latency_ns, err)))
    return rc;
  if (p->leaves < 1 || p->leaves > MAX_NODES)
    return fs_err_set(err, FS_EINVAL, "leafspine: leaves must be >= 1, got %d", p->leaves);
  if (p->spines < 1 || p->spines > MAX_NODES)
    return fs_err_set(err, FS_EINVAL, "leafspine: spines must be >= 1, got %d", p->spines);
  if (p->hosts_per_leaf < 1 || p->hosts_per_leaf > MAX_NODES)
    return fs_err_set(err, FS_EINVAL,
                      "leafspine: hosts_per_leaf must be >= 1, got %d", p->hosts_per_leaf);
  int32_t lps = p->links_per_spine ? p->links_per_spine : 1;
  if (lps < 1 || lps > 64)
    return fs_err_set(err, FS_EINVAL,
                      "leafspine: links_per_spine must be in [1, 64], got %d", lps);
  int64_t hosts = (int64_t)p->leaves * p->hosts_per_leaf;
  int64_t nodes = hosts + p->leaves + p->spines;
  int64_t cables = hosts + (int64_t)p->leaves * p->spines * lps;
  if (nodes > MAX_NODES || cables > MAX_CABLES)
    return fs_err_set(err, FS_EINVAL,
                      "leafspine: too large (%lld nodes, %lld cables; limits %d nodes, "
                      "%d cables)",
                      (long long)nodes, (long long)cables, MAX_NODES, MAX_CABLES);
  fs__topo_builder b;
  if ((rc = fs__tb_init(&b, "leafspine", (int32_t)nodes, (int32_t)(2 * cables), err)))
    return rc;
  for (int32_t l = 0; l < p->leaves; l++)
    for (int32_t h = 0; h < p->hosts_per_leaf; h++)
      TRY(fs__tb_node(&b, FS_NODE_HOST, 0, l * p->hosts_per_leaf + h, l));
  int32_t leaf0 = (int32_t)hosts, spine0 = leaf0 + p->leaves;
  for (int32_t l = 0; l < p->leaves; l++) TRY(fs__tb_node(&b, FS_NODE_SWITCH, 1, l, l));
  for (int32_t s = 0; s < p->spines; s++) TRY(fs__tb_node(&b, FS_NODE_SWITCH, 2, s, -1));
  for (int32_t h = 0; h < (int32_t)hosts; h++)
    TRY(fs__tb_cable(&b, h, leaf0 + h / p->hosts_per_leaf, p->host_gbps * 1e9,
                     p->latency_ns));
  for (int32_t l = 0; l < p->leaves; l++)
    for (int32_t s = 0; s < p->spines; s++)
      for (int32_t c = 0; c < lps; c++)
        TRY(fs__tb_cable(&b, leaf0 + l, spine0 + s, p->fabric_gbps * 1e9,
                         p->latency_ns));
  snprintf(b.t->spec, sizeof(b.t->spec),
           "leafspine:leaves=%d,spines=%d,hosts_per_leaf=%d,host_gbps=%g,"
           "fabric_gbps=%g,links_per_spine=%d,latency_ns=%lld",
           p->leaves, p->spines, p->hosts_per_leaf, p->host_gbps, p->fabric_gbps,
           lps, (long long)p->latency_ns);
  return fs__tb_finish(&b, out, err);
oom:
  fs__tb_abort(&b);
  return fs_err_set(err, FS_ENOMEM, "out of memory building leafspine");
}

int fs_topo_fattree(int32_t k, double gbps, int64_t latency_ns, fs_topo **out,
                    fs_err *err) {
  int rc = check_common("fattree", gbps, "gbps", latency_ns, err);
  if (rc) return rc;
  if (k < 2 || k % 2 != 0 || k > 128)
    return fs_err_set(err, FS_EINVAL,
                      "fattree: k must be even and in [2, 128], got %d", k);
  int32_t h = k / 2;
  int32_t hosts = k * h * h, edges = k * h, aggs = k * h, cores = h * h;
  int32_t nodes = hosts + edges + aggs + cores;
  fs__topo_builder b;
  if ((rc = fs__tb_init(&b, "fattree", nodes, 2 * (hosts + edges * h + aggs * h), err)))
    return rc;
  for (int32_t i = 0; i < hosts; i++)
    TRY(fs__tb_node(&b, FS_NODE_HOST, 0, i, i / (h * h)));
  int32_t edge0 = hosts, agg0 = edge0 + edges, core0 = agg0 + aggs;
  for (int32_t p = 0; p < k; p++)
    for (int32_t e = 0; e < h; e++) TRY(fs__tb_node(&b, FS_NODE_SWITCH, 1, e, p));
  for (int32_t p = 0; p < k; p++)
    for (int32_t a = 0; a < h; a++) TRY(fs__tb_node(&b, FS_NODE_SWITCH, 2, a, p));
  for (int32_t c = 0; c < cores; c++) TRY(fs__tb_node(&b, FS_NODE_SWITCH, 3, c, -1));
  double bps = gbps * 1e9;
  for (int32_t i = 0; i < hosts; i++) TRY(fs__tb_cable(&b, i, edge0 + i / h, bps, latency_ns));
  for (int32_t p = 0; p < k; p++)
    for (int32_t e = 0; e < h; e++)
      for (int32_t a = 0; a < h; a++)
        TRY(fs__tb_cable(&b, edge0 + p * h + e, agg0 + p * h + a, bps, latency_ns));
  /* Core switch c = a*h + j attaches to aggregation switch a of every pod. */
  for (int32_t p = 0; p < k; p++)
    for (int32_t a = 0; a < h; a++)
      for (int32_t j = 0; j < h; j++)
        TRY(fs__tb_cable(&b, agg0 + p * h + a, core0 + a * h + j, bps, latency_ns));
  snprintf(b.t->spec, sizeof(b.t->spec), "fattree:k=%d,gbps=%g,latency_ns=%lld",
           k, gbps, (long long)latency_ns);
  return fs__tb_finish(&b, out, err);
oom:
  fs__tb_abort(&b);
  return fs_err_set(err, FS_ENOMEM, "out of memory building fattree");
}
