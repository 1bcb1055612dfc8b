/* Builders of the AI-cluster families beyond the Clos trees: rail-optimized
 * (railopt), rail-only (railonly), direct networks of chips (torus, ring,
 * fullmesh) and dragonfly. Same layout rules as families.c: hosts first
 * (GPUs or chips), then switches tier by tier, then (GPU servers) NICs and
 * scale-up switches; cables: PCIe, host ports, fabric, NVLink last.
 * Building is O(V + E); the largest expected instance is a 32,768-GPU
 * rail-optimized fabric (~70k nodes, ~100k cables). */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static int bad_int(const char *fam, const char *name, const char *rule, int64_t v,
                   fs_err *err) {
  return fs_err_set(err, FS_EINVAL, "%s: %s must be %s, got %lld", fam, name, rule,
                    (long long)v);
}

static void append_spec(fs_topo *t, const char *fmt, double x) {
  size_t len = strlen(t->spec);
  snprintf(t->spec + len, sizeof(t->spec) - len, fmt, x);
}

/* ---- rail-optimized ---------------------------------------------------------- */

int fs_topo_railopt(const fs_railopt_params *p, const fs_server_params *svp,
                    fs_topo **out, fs_err *err) {
  const char *F = "railopt";
  int rc;
  if ((rc = fs_topo_check_link(F, p->host_gbps, "host_gbps", p->latency_ns, err)) ||
      (rc = fs_topo_check_gbps(F, p->fabric_gbps, "fabric_gbps", err)))
    return rc;
  if (p->servers < 1 || p->servers > MAX_NODES)
    return bad_int(F, "servers", "in [1, 4194304]", p->servers, err);
  int32_t spu = p->servers_per_su ? p->servers_per_su : p->servers;
  if (spu < 1 || spu > p->servers || p->servers % spu != 0)
    return bad_int(F, "servers_per_su", "in [1, servers] and divide servers", spu, err);
  if (p->spines < 1 || p->spines > MAX_NODES)
    return bad_int(F, "spines", ">= 1", p->spines, err);
  int32_t lps = p->links_per_spine ? p->links_per_spine : 1;
  if (lps < 1 || lps > 64) return bad_int(F, "links_per_spine", "in [1, 64]", lps, err);
  fs_server_params sv = svp ? *svp : fs_server_defaults(1);
  int64_t G = sv.gpus_per_node;
  if (G < 1 || G > 1024) return bad_int(F, "gpus_per_node", "in [1, 1024]", G, err);
  int64_t gpus = (int64_t)p->servers * G;
  if (gpus > MAX_NODES) return bad_int(F, "servers * gpus_per_node", "<= 4194304", gpus, err);
  if ((rc = fs_topo_servers_check(F, &sv, gpus, "the GPUs", "", &sv, err))) return rc;
  int64_t sus = p->servers / spu, leaves = sus * G;
  if (p->radix < 0) return bad_int(F, "radix", ">= 0 (0: unbounded)", p->radix, err);
  if (p->radix > 0 && (int64_t)spu + (int64_t)p->spines * lps > p->radix)
    return fs_err_set(err, FS_EINVAL,
                      "%s: a rail switch needs servers_per_su + spines * links_per_spine = "
                      "%lld ports, more than radix %d",
                      F, (long long)spu + (long long)p->spines * lps, p->radix);
  if (p->radix > 0 && leaves * lps > p->radix)
    return fs_err_set(err, FS_EINVAL,
                      "%s: a spine needs (servers / servers_per_su) * gpus_per_node * "
                      "links_per_spine = %lld ports, more than radix %d",
                      F, (long long)(leaves * lps), p->radix);
  int64_t nodes = gpus + leaves + p->spines + fs_topo_servers_nodes(&sv, gpus);
  int64_t cables = gpus + leaves * p->spines * lps + fs_topo_servers_cables(&sv, gpus);
  if ((rc = fs_topo_check_size(F, nodes, cables, err))) return rc;
  fs_topo_builder b;
  if ((rc = fs_topo_builder_init(&b, F, (int32_t)nodes, (int32_t)(2 * cables), err))) return rc;
  for (int64_t i = 0; i < gpus; i++)
    TRY(fs_topo_builder_node(&b, FS_NODE_HOST, 0, (int32_t)i, (int32_t)(i / G / spu)));
  int32_t leaf0 = (int32_t)gpus, spine0 = (int32_t)(gpus + leaves);
  for (int64_t l = 0; l < leaves; l++)
    TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, (int32_t)l, (int32_t)(l / G)));
  for (int32_t s = 0; s < p->spines; s++) TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 2, s, -1));
  TRY(fs_topo_builder_servers_begin(&b, &sv, (int32_t)gpus));
  for (int64_t i = 0; i < gpus; i++) {
    int64_t su = i / G / spu, rail = i % G;
    TRY(fs_topo_builder_cable(&b, fs_topo_builder_port(&b, (int32_t)i),
                              (int32_t)(leaf0 + su * G + rail), p->host_gbps * 1e9, p->latency_ns));
  }
  for (int64_t l = 0; l < leaves; l++)
    for (int32_t s = 0; s < p->spines; s++)
      for (int32_t c = 0; c < lps; c++)
        TRY(fs_topo_builder_cable(&b, (int32_t)(leaf0 + l), spine0 + s, p->fabric_gbps * 1e9,
                         p->latency_ns));
  snprintf(b.t->spec, sizeof(b.t->spec),
           "railopt:servers=%d,servers_per_su=%d,spines=%d,links_per_spine=%d,radix=%d,"
           "host_gbps=%g,fabric_gbps=%g,latency_ns=%lld",
           p->servers, spu, p->spines, lps, p->radix, p->host_gbps, p->fabric_gbps,
           (long long)p->latency_ns);
  if (G == 1) append_spec(b.t, ",gpus_per_node=%g", 1);
  TRY(fs_topo_builder_servers_end(&b, &sv, (int32_t)gpus));
  return fs_topo_builder_finish(&b, out, err);
oom:
  fs_topo_builder_abort(&b);
  return fs_err_set(err, FS_ENOMEM, "out of memory building %s", F);
}

/* ---- rail-only --------------------------------------------------------------- */

int fs_topo_railonly(const fs_railonly_params *p, const fs_server_params *svp,
                     fs_topo **out, fs_err *err) {
  const char *F = "railonly";
  int rc;
  if ((rc = fs_topo_check_link(F, p->host_gbps, "host_gbps", p->latency_ns, err))) return rc;
  if (p->servers < 1 || p->servers > MAX_NODES)
    return bad_int(F, "servers", "in [1, 4194304]", p->servers, err);
  if (p->radix < 0) return bad_int(F, "radix", ">= 0 (0: unbounded)", p->radix, err);
  if (p->radix > 0 && p->servers > p->radix)
    return fs_err_set(err, FS_EINVAL,
                      "%s: servers must be <= radix (%d ports per rail switch), got %d", F,
                      p->radix, p->servers);
  fs_server_params sv = svp ? *svp : fs_server_defaults(1);
  int64_t G = sv.gpus_per_node;
  if (G < 2 || G > 1024)
    return bad_int(F, "gpus_per_node", "in [2, 1024] (rails meet in the scale-up domain)", G,
                   err);
  int64_t gpus = (int64_t)p->servers * G;
  if (gpus > MAX_NODES) return bad_int(F, "servers * gpus_per_node", "<= 4194304", gpus, err);
  if ((rc = fs_topo_servers_check(F, &sv, gpus, "the GPUs", "", &sv, err))) return rc;
  int64_t nodes = gpus + G + fs_topo_servers_nodes(&sv, gpus);
  int64_t cables = 2 * gpus + fs_topo_servers_cables(&sv, gpus);
  if ((rc = fs_topo_check_size(F, nodes, cables, err))) return rc;
  fs_topo_builder b;
  if ((rc = fs_topo_builder_init(&b, F, (int32_t)nodes, (int32_t)(2 * cables), err))) return rc;
  for (int64_t i = 0; i < gpus; i++)
    TRY(fs_topo_builder_node(&b, FS_NODE_HOST, 0, (int32_t)i, (int32_t)(i % G)));
  int32_t rail0 = (int32_t)gpus;
  for (int64_t r = 0; r < G; r++)
    TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, (int32_t)r, (int32_t)r));
  TRY(fs_topo_builder_servers_begin(&b, &sv, (int32_t)gpus));
  for (int64_t i = 0; i < gpus; i++)
    TRY(fs_topo_builder_cable(&b, fs_topo_builder_port(&b, (int32_t)i), (int32_t)(rail0 + i % G),
                     p->host_gbps * 1e9, p->latency_ns));
  /* PXN: scale-up switch -> NIC of each of its GPUs, NVLink then PCIe, so
   * the slower of the two. */
  double pxn = (sv.nvlink_gbps < sv.pcie_gbps ? sv.nvlink_gbps : sv.pcie_gbps) * 1e9;
  fs_topo *t = b.t;
  for (int64_t i = 0; i < gpus; i++)
    TRY(fs_topo_builder_cable(&b, (int32_t)(t->scaleup0 + i / G), (int32_t)(t->nic0 + i), pxn,
                     sv.nvlink_latency_ns + sv.pcie_latency_ns));
  snprintf(t->spec, sizeof(t->spec), "railonly:servers=%d,radix=%d,host_gbps=%g,latency_ns=%lld",
           p->servers, p->radix, p->host_gbps, (long long)p->latency_ns);
  TRY(fs_topo_builder_servers_end(&b, &sv, (int32_t)gpus));
  return fs_topo_builder_finish(&b, out, err);
oom:
  fs_topo_builder_abort(&b);
  return fs_err_set(err, FS_ENOMEM, "out of memory building %s", F);
}

/* ---- direct networks: torus, ring, fullmesh -------------------------------- */

/* kind: 0 torus, 1 ring, 2 fullmesh (n = dims[0]). */
static int direct(const char *F, int kind, const fs_direct_params *p, fs_topo **out,
                  fs_err *err) {
  int rc;
  if ((rc = fs_topo_check_link(F, p->gbps, "gbps", p->latency_ns, err)) ||
      (rc = fs_topo_check_gbps(F, p->host_gbps, "host_gbps", err)))
    return rc;
  if (p->n_dims < 1 || p->n_dims > 6) return bad_int(F, "dims", "1 to 6 sizes", p->n_dims, err);
  int64_t n = 1, cables = 0;
  for (int32_t d = 0; d < p->n_dims; d++) {
    if (p->dims[d] < 2 || p->dims[d] > MAX_NODES) {
      char name[32];
      snprintf(name, sizeof(name), kind == 0 ? "dims[%d]" : "n", d);
      return bad_int(F, name, "in [2, 4194304]", p->dims[d], err);
    }
    n *= p->dims[d];
    if (n > MAX_NODES / 2) return bad_int(F, "the chip count", "<= 2097152", n, err);
  }
  if (kind == 2) {
    if (n > 4096) return bad_int(F, "n", "in [2, 4096]", n, err);
    cables = n * (n - 1) / 2;
  } else {
    for (int32_t d = 0; d < p->n_dims; d++)
      cables += p->dims[d] == 2 ? n / 2 : n;
  }
  if ((rc = fs_topo_check_size(F, 2 * n, n + cables, err))) return rc;
  fs_topo_builder b;
  if ((rc = fs_topo_builder_init(&b, F, (int32_t)(2 * n), (int32_t)(2 * (n + cables)), err)))
    return rc;
  for (int32_t i = 0; i < n; i++) TRY(fs_topo_builder_node(&b, FS_NODE_HOST, 0, i, -1));
  for (int32_t i = 0; i < n; i++) TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, i, -1));
  int32_t r0 = (int32_t)n;
  for (int32_t i = 0; i < n; i++)
    TRY(fs_topo_builder_cable(&b, i, r0 + i, p->host_gbps * 1e9, p->latency_ns));
  double bps = p->gbps * 1e9;
  if (kind == 2) {
    for (int32_t i = 0; i < n; i++)
      for (int32_t j = i + 1; j < n; j++)
        TRY(fs_topo_builder_cable(&b, r0 + i, r0 + j, bps, p->latency_ns));
  } else {
    /* Dimension by dimension, chip by chip: the + neighbour of each chip
     * (for size 2 only from coordinate 0). */
    int64_t stride = n;
    for (int32_t d = 0; d < p->n_dims; d++) {
      int32_t k = p->dims[d];
      stride /= k;
      for (int64_t i = 0; i < n; i++) {
        int64_t x = (i / stride) % k;
        if (k == 2 && x == 1) continue;
        int64_t j = i + ((x + 1) % k - x) * stride;
        TRY(fs_topo_builder_cable(&b, (int32_t)(r0 + i), (int32_t)(r0 + j), bps, p->latency_ns));
      }
    }
  }
  fs_topo *t = b.t;
  t->n_dims = p->n_dims;
  for (int32_t d = 0; d < p->n_dims; d++) t->dims[d] = p->dims[d];
  if (kind == 0) {
    char dims[128] = "";
    for (int32_t d = 0; d < p->n_dims; d++) {
      size_t len = strlen(dims);
      snprintf(dims + len, sizeof(dims) - len, "%s%d", d ? "x" : "", p->dims[d]);
    }
    snprintf(t->spec, sizeof(t->spec), "torus:dims=%s,gbps=%g,host_gbps=%g,latency_ns=%lld",
             dims, p->gbps, p->host_gbps, (long long)p->latency_ns);
  } else {
    snprintf(t->spec, sizeof(t->spec), "%s:n=%d,gbps=%g,host_gbps=%g,latency_ns=%lld", F,
             (int)n, p->gbps, p->host_gbps, (long long)p->latency_ns);
  }
  return fs_topo_builder_finish(&b, out, err);
oom:
  fs_topo_builder_abort(&b);
  return fs_err_set(err, FS_ENOMEM, "out of memory building %s", F);
}

int fs_topo_torus(const fs_direct_params *p, fs_topo **out, fs_err *err) {
  return direct("torus", 0, p, out, err);
}

int fs_topo_ring(int32_t n, double gbps, double host_gbps, int64_t latency_ns,
                 fs_topo **out, fs_err *err) {
  fs_direct_params p = {1, {n}, gbps, host_gbps, latency_ns};
  return direct("ring", 1, &p, out, err);
}

int fs_topo_fullmesh(int32_t n, double gbps, double host_gbps, int64_t latency_ns,
                     fs_topo **out, fs_err *err) {
  fs_direct_params p = {1, {n}, gbps, host_gbps, latency_ns};
  return direct("fullmesh", 2, &p, out, err);
}

/* ---- dragonfly ----------------------------------------------------------------- */

int fs_topo_dragonfly(const fs_dragonfly_params *p, const fs_server_params *svp,
                      fs_topo **out, fs_err *err) {
  const char *F = "dragonfly";
  int rc;
  if ((rc = fs_topo_check_link(F, p->host_gbps, "host_gbps", p->latency_ns, err)) ||
      (rc = fs_topo_check_gbps(F, p->local_gbps, "local_gbps", err)) ||
      (rc = fs_topo_check_gbps(F, p->global_gbps, "global_gbps", err)) ||
      (rc = fs_topo_check_latency(F, p->global_latency_ns, "global_latency_ns", err)))
    return rc;
  if (p->a < 1 || p->a > 4096) return bad_int(F, "a", "in [1, 4096]", p->a, err);
  if (p->p < 1 || p->p > 4096) return bad_int(F, "p", "in [1, 4096]", p->p, err);
  if (p->h < 1 || p->h > 4096) return bad_int(F, "h", "in [1, 4096]", p->h, err);
  int64_t ports = (int64_t)p->a * p->h;
  if (p->g < 2 || p->g > ports + 1)
    return fs_err_set(err, FS_EINVAL, "%s: g must be in [2, a*h + 1 = %lld], got %d", F,
                      (long long)(ports + 1), p->g);
  int64_t per_pair = ports / (p->g - 1);
  int64_t routers = (int64_t)p->a * p->g, hosts = routers * p->p;
  if (hosts > MAX_NODES) return bad_int(F, "a*p*g (hosts)", "<= 4194304", hosts, err);
  fs_server_params sv;
  if ((rc = fs_topo_servers_check(F, svp, p->p, "p (hosts per router)",
                              "; a server's NICs sit on one router", &sv, err)))
    return rc;
  int64_t local = (int64_t)p->g * p->a * (p->a - 1) / 2;
  int64_t global = (int64_t)p->g * (p->g - 1) / 2 * per_pair;
  int64_t nodes = hosts + routers + fs_topo_servers_nodes(&sv, hosts);
  int64_t cables = hosts + local + global + fs_topo_servers_cables(&sv, hosts);
  if ((rc = fs_topo_check_size(F, nodes, cables, err))) return rc;
  fs_topo_builder b;
  if ((rc = fs_topo_builder_init(&b, F, (int32_t)nodes, (int32_t)(2 * cables), err))) return rc;
  for (int64_t i = 0; i < hosts; i++)
    TRY(fs_topo_builder_node(&b, FS_NODE_HOST, 0, (int32_t)i, (int32_t)(i / p->p / p->a)));
  int32_t r0 = (int32_t)hosts;
  for (int64_t r = 0; r < routers; r++)
    TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, (int32_t)r, (int32_t)(r / p->a)));
  TRY(fs_topo_builder_servers_begin(&b, &sv, (int32_t)hosts));
  for (int64_t i = 0; i < hosts; i++)
    TRY(fs_topo_builder_cable(&b, fs_topo_builder_port(&b, (int32_t)i), (int32_t)(r0 + i / p->p),
                     p->host_gbps * 1e9, p->latency_ns));
  for (int32_t g = 0; g < p->g; g++)
    for (int32_t x = 0; x < p->a; x++)
      for (int32_t y = x + 1; y < p->a; y++)
        TRY(fs_topo_builder_cable(&b, r0 + g * p->a + x, r0 + g * p->a + y, p->local_gbps * 1e9,
                         p->latency_ns));
  /* Group i serves group j on its ports pos(i, j) * per_pair + c, pos(i, j)
   * = (j - i - 1) mod g: each port is used at most once on both sides. */
  for (int32_t i = 0; i < p->g; i++)
    for (int32_t j = i + 1; j < p->g; j++)
      for (int64_t c = 0; c < per_pair; c++) {
        int64_t pi = ((j - i - 1 + p->g) % p->g) * per_pair + c;
        int64_t pj = ((i - j - 1 + 2 * p->g) % p->g) * per_pair + c;
        TRY(fs_topo_builder_cable(&b, (int32_t)(r0 + (int64_t)i * p->a + pi / p->h),
                         (int32_t)(r0 + (int64_t)j * p->a + pj / p->h),
                         p->global_gbps * 1e9, p->global_latency_ns));
      }
  snprintf(b.t->spec, sizeof(b.t->spec),
           "dragonfly:a=%d,p=%d,h=%d,g=%d,host_gbps=%g,local_gbps=%g,global_gbps=%g,"
           "latency_ns=%lld,global_latency_ns=%lld",
           p->a, p->p, p->h, p->g, p->host_gbps, p->local_gbps, p->global_gbps,
           (long long)p->latency_ns, (long long)p->global_latency_ns);
  TRY(fs_topo_builder_servers_end(&b, &sv, (int32_t)hosts));
  return fs_topo_builder_finish(&b, out, err);
oom:
  fs_topo_builder_abort(&b);
  return fs_err_set(err, FS_ENOMEM, "out of memory building %s", F);
}

/* ---- closed-form bisection ---------------------------------------------------- */

double fs_topo_bisection_formula(const fs_topo *t) {
  if (t->n_links == 0 || t->gpus_per_node > 1 || strncmp(t->spec, "file", 4) == 0) return -1;
  if (strcmp(t->family, "fattree") == 0) {
    double k = 0;
    /* k^3/4 hosts */
    while ((k + 2) * (k + 2) * (k + 2) / 4 <= t->n_hosts) k += 2;
    return k * k * k / 8 * t->links[0].capacity_bps;
  }
  if (strcmp(t->family, "clos") == 0 && t->n_dims == 6) {
    /* Cables: hosts, then edge-aggregation, then aggregation-core. Each
     * half's pods send through their own host, edge up-link and
     * aggregation up-link cables, whichever total is least; with one pod
     * the cut splits its edge switches and aggregation is no bottleneck. */
    int64_t tiers = t->dims[0], P = t->dims[1], E = t->dims[2], hpe = t->dims[3];
    int64_t U1 = t->dims[4], U2 = t->dims[5], n = t->n_hosts;
    double host = t->links[0].capacity_bps, edge = t->links[2 * n].capacity_bps;
    if (tiers == 3 && P > 1) {
      if (P % 2) return -1;
      double agg = t->links[2 * (n + P * E * U1)].capacity_bps;
      double m = (double)(E * hpe) * host;
      if ((double)(E * U1) * edge < m) m = (double)(E * U1) * edge;
      if ((double)(U1 * U2) * agg < m) m = (double)(U1 * U2) * agg;
      return (double)(P / 2) * m;
    }
    if (E % 2) return -1;
    double m = (double)hpe * host < (double)U1 * edge ? (double)hpe * host : (double)U1 * edge;
    return (double)(E / 2) * m;
  }
  /* awgr, sirius: the cut of hosts [0, h) from [h, N), h = floor(N / 2),
   * crosses one mesh cable per pair across it, h (N - h) of them (sirius:
   * the node cables, hosts' own port_gbps >= (N - h) port / (N - 1)). */
  double optical = fs__optical_bisection(t);
  if (optical >= 0) return optical;
  int awgr = strcmp(t->family, "awgr") == 0, sirius = strcmp(t->family, "sirius") == 0;
  if (awgr || sirius) {
    int64_t n = t->n_hosts, h = n / 2;
    return (double)(h * (n - h)) * t->links[sirius ? 2 * n : 0].capacity_bps;
  }
  int ring = strcmp(t->family, "ring") == 0;
  int torus = strcmp(t->family, "torus") == 0 || strcmp(t->family, "sipml-ocs") == 0;
  if (!ring && !torus) return -1;
  int32_t k0 = t->dims[0];
  if (k0 % 2) return -1;
  /* Cables 0..n-1 are host-router; the first router-router cable has the
   * fabric speed. Cutting dims[0] in half crosses 2 cables per line of
   * dims[0] (1 when it is 2); the hosts' own cables bound it too. */
  int64_t n = t->n_hosts;
  double fabric = t->links[2 * n].capacity_bps, host = t->links[0].capacity_bps;
  double cut = (double)(k0 == 2 ? 1 : 2) * (double)(n / k0) * fabric;
  double hosts = (double)(n / 2) * host;
  return cut < hosts ? cut : hosts;
}

/* ---- optical fabrics: awgr, sirius ----------------------------------------------
 * Both are a full mesh of logical links over passive gratings (docs/model.md,
 * "Optical fabrics"); 2048 hosts bound the N (N - 1) / 2 cables to ~2.1M,
 * under the builder's cable limit. */

enum { OPTICAL_MAX_HOSTS = 2048 };

int fs_topo_awgr(const fs_awgr_params *p, fs_topo **out, fs_err *err) {
  const char *F = "awgr";
  int rc;
  if ((rc = fs_topo_check_link(F, p->channel_gbps, "channel_gbps", p->latency_ns, err)))
    return rc;
  if (p->hosts < 2 || p->hosts > OPTICAL_MAX_HOSTS)
    return bad_int(F, "hosts", "in [2, 2048]", p->hosts, err);
  int64_t n = p->hosts, cables = n * (n - 1) / 2;
  if (p->wavelengths != 0 && p->wavelengths < n - 1)
    return fs_err_set(err, FS_EINVAL,
                      "%s: wavelengths must be >= hosts - 1 = %lld (one a destination), got %d",
                      F, (long long)(n - 1), p->wavelengths);
  if ((rc = fs_topo_check_size(F, n, cables, err))) return rc;
  fs_topo_builder b;
  if ((rc = fs_topo_builder_init(&b, F, (int32_t)n, (int32_t)(2 * cables), err))) return rc;
  for (int32_t i = 0; i < n; i++) TRY(fs_topo_builder_node(&b, FS_NODE_HOST, 0, i, -1));
  /* Host i's wavelength to host j is its own channel through the grating:
   * a direct cable, so routing takes it and nothing relays. */
  for (int32_t i = 0; i < n; i++)
    for (int32_t j = i + 1; j < n; j++)
      TRY(fs_topo_builder_cable(&b, i, j, p->channel_gbps * 1e9, p->latency_ns));
  int len = snprintf(b.t->spec, sizeof(b.t->spec), "awgr:hosts=%d,channel_gbps=%g,latency_ns=%lld",
                     p->hosts, p->channel_gbps, (long long)p->latency_ns);
  if (p->wavelengths && len > 0 && (size_t)len < sizeof(b.t->spec))
    snprintf(b.t->spec + len, sizeof(b.t->spec) - (size_t)len, ",wavelengths=%d", p->wavelengths);
  return fs_topo_builder_finish(&b, out, err);
oom:
  fs_topo_builder_abort(&b);
  return fs_err_set(err, FS_ENOMEM, "out of memory building %s", F);
}

/* A cell waits for its pair's slot, which comes once a cycle of N - 1
 * slots; arriving at a uniform time it waits half a cycle on average,
 * rounded up to whole ns. */
int64_t fs_sirius_hop_ns(int32_t nodes, int64_t latency_ns, int64_t slot_ns) {
  return latency_ns + ((int64_t)(nodes - 1) * slot_ns + 1) / 2;
}

int fs_topo_sirius(const fs_sirius_params *p, fs_topo **out, fs_err *err) {
  const char *F = "sirius";
  int rc;
  if ((rc = fs_topo_check_link(F, p->port_gbps, "port_gbps", p->latency_ns, err)) ||
      (rc = fs_topo_check_latency(F, p->slot_ns, "slot_ns", err)))
    return rc;
  if (p->nodes < 2 || p->nodes > OPTICAL_MAX_HOSTS)
    return bad_int(F, "hosts", "in [2, 2048]", p->nodes, err);
  if (p->slot_ns > MAX_LATENCY_NS / OPTICAL_MAX_HOSTS)
    return bad_int(F, "slot_ns", "<= 488281250", p->slot_ns, err);
  int64_t n = p->nodes, cables = n + n * (n - 1) / 2;
  int64_t hop = fs_sirius_hop_ns(p->nodes, p->latency_ns, p->slot_ns);
  if ((rc = fs_topo_check_latency(F, hop, "latency_ns + (hosts - 1) * slot_ns / 2", err)))
    return rc;
  if ((rc = fs_topo_check_size(F, 2 * n, cables, err))) return rc;
  fs_topo_builder b;
  if ((rc = fs_topo_builder_init(&b, F, (int32_t)(2 * n), (int32_t)(2 * cables), err)))
    return rc;
  for (int32_t i = 0; i < n; i++) TRY(fs_topo_builder_node(&b, FS_NODE_HOST, 0, i, i));
  /* group = index: every node is its own group, as Valiant picks them. */
  for (int32_t i = 0; i < n; i++) TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, i, i));
  int32_t r0 = (int32_t)n;
  for (int32_t i = 0; i < n; i++)
    TRY(fs_topo_builder_cable(&b, i, r0 + i, p->port_gbps * 1e9, 0));
  /* Over a cycle every ordered pair holds the laser one slot in N - 1. */
  double bps = p->port_gbps * 1e9 / (double)(n - 1);
  for (int32_t i = 0; i < n; i++)
    for (int32_t j = i + 1; j < n; j++)
      TRY(fs_topo_builder_cable(&b, r0 + i, r0 + j, bps, hop));
  snprintf(b.t->spec, sizeof(b.t->spec), "sirius:hosts=%d,port_gbps=%g,latency_ns=%lld,slot_ns=%lld",
           p->nodes, p->port_gbps, (long long)p->latency_ns, (long long)p->slot_ns);
  return fs_topo_builder_finish(&b, out, err);
oom:
  fs_topo_builder_abort(&b);
  return fs_err_set(err, FS_ENOMEM, "out of memory building %s", F);
}
