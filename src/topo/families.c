/* Builders of the topology families: star, leaf-spine, k-ary fat-tree and
 * the general two- or three-tier Clos (oversubscription per tier), each
 * with plain hosts or with GPU servers (gpus_per_node G > 1).
 * Each validates its parameters (naming the bad one), then lays out hosts
 * first in the documented order, then switches tier by tier, then (G > 1)
 * the NICs and scale-up switches; then cables: GPU-NIC PCIe cables (G > 1),
 * host-port cables (host or NIC to its leaf/edge switch), upward tier by
 * tier, and last (G > 1) the GPU-to-scale-up NVLink cables. A family only
 * says which switch host port i hangs off; the server parts are the same
 * for every family (and for the families of later issues). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Limits keep a typo from asking for gigabytes: 4M nodes and 4M cables
 * (a fat-tree k=128 has 1.6M cables, a 32k-GPU fabric well under 1M). */

/* Defaults of a GPU server: an H100 SXM (docs/model.md, "Scale-up domains"):
 * NVLink 4, 18 links x 25 GB/s per direction = 450 GB/s = 3600 Gb/s;
 * PCIe Gen5 x16, 32 GT/s x 16 lanes = 512 Gb/s per direction. */
#define DEFAULT_NVLINK_GBPS 3600.0
#define DEFAULT_NVLINK_LATENCY_NS 250
#define DEFAULT_PCIE_GBPS 512.0
#define DEFAULT_PCIE_LATENCY_NS 250

fs_server_params fs_server_defaults(int32_t gpus_per_node) {
  fs_server_params sv = {gpus_per_node, DEFAULT_NVLINK_GBPS, DEFAULT_NVLINK_LATENCY_NS,
                         DEFAULT_PCIE_GBPS, DEFAULT_PCIE_LATENCY_NS, 0};
  return sv;
}

int fs_topo_check_gbps(const char *fam, double gbps, const char *gname, fs_err *err) {
  if (!(gbps > 0) || !isfinite(gbps) || gbps > MAX_GBPS)
    return fs_err_set(err, FS_EINVAL, "%s: %s must be in (0, %g], got %g", fam, gname,
                      MAX_GBPS, gbps);
  return 0;
}

int fs_topo_check_latency(const char *fam, int64_t latency_ns, const char *lname,
                          fs_err *err) {
  if (latency_ns < 0 || latency_ns > MAX_LATENCY_NS)
    return fs_err_set(err, FS_EINVAL, "%s: %s must be in [0, %lld], got %lld", fam, lname,
                      (long long)MAX_LATENCY_NS, (long long)latency_ns);
  return 0;
}

int fs_topo_check_link(const char *fam, double gbps, const char *gname,
                       int64_t latency_ns, fs_err *err) {
  int rc = fs_topo_check_gbps(fam, gbps, gname, err);
  return rc ? rc : fs_topo_check_latency(fam, latency_ns, "latency_ns", err);
}

/* ---- GPU servers ------------------------------------------------------------ */

/* Validates sv (NULL = plain hosts) into *out; G must divide `per`, the
 * GPUs described by `per_what` ("hosts", "hosts_per_leaf", ...), for the
 * reason `why` ("" or "; ..."). */
int fs_topo_servers_check(const char *fam, const fs_server_params *sv, int64_t per,
                          const char *per_what, const char *why, fs_server_params *out,
                          fs_err *err) {
  *out = sv ? *sv : fs_server_defaults(1);
  if (out->gpus_per_node < 1 || out->gpus_per_node > MAX_NODES)
    return fs_err_set(err, FS_EINVAL, "%s: gpus_per_node must be in [1, %d], got %d", fam,
                      MAX_NODES, out->gpus_per_node);
  if (out->gpus_per_node == 1) return 0;
  int rc;
  if ((rc = fs_topo_check_gbps(fam, out->nvlink_gbps, "nvlink_gbps", err)) ||
      (rc = fs_topo_check_latency(fam, out->nvlink_latency_ns, "nvlink_latency_ns", err)) ||
      (rc = fs_topo_check_gbps(fam, out->pcie_gbps, "pcie_gbps", err)) ||
      (rc = fs_topo_check_latency(fam, out->pcie_latency_ns, "pcie_latency_ns", err)))
    return rc;
  if (per % out->gpus_per_node != 0)
    return fs_err_set(err, FS_EINVAL, "%s: gpus_per_node must divide %s (%lld)%s, got %d",
                      fam, per_what, (long long)per, why, out->gpus_per_node);
  return 0;
}

/* Nodes and cables the servers add to `gpus` plain host ports. */
int64_t fs_topo_servers_nodes(const fs_server_params *sv, int64_t gpus) {
  return sv->gpus_per_node > 1 ? gpus + gpus / sv->gpus_per_node : 0;
}
int64_t fs_topo_servers_cables(const fs_server_params *sv, int64_t gpus) {
  return sv->gpus_per_node > 1 ? 2 * gpus : 0;
}

int fs_topo_check_size(const char *fam, int64_t nodes, int64_t cables, fs_err *err) {
  if (nodes > MAX_NODES || cables > MAX_CABLES)
    return fs_err_set(err, FS_EINVAL,
                      "%s: too large (%lld nodes, %lld cables; limits %d nodes, %d cables)",
                      fam, (long long)nodes, (long long)cables, MAX_NODES, MAX_CABLES);
  return 0;
}

/* After the fabric switches: one NIC per GPU, one scale-up switch per
 * server, then the PCIe cables. Hosts are nodes 0..gpus-1. */
int fs_topo_builder_servers_begin(fs_topo_builder *b, const fs_server_params *sv,
                                  int32_t gpus) {
  fs_topo *t = b->t;
  int32_t G = sv->gpus_per_node;
  t->gpus_per_node = G;
  if (G == 1) return 0;
  t->scaleup_optical = sv->optical_io != 0;
  int32_t rc;
  t->nic0 = t->n_nodes;
  for (int32_t i = 0; i < gpus; i++)
    if ((rc = fs_topo_builder_node(b, FS_NODE_NIC, 0, i, t->nodes[i].group)) < 0) return rc;
  t->scaleup0 = t->n_nodes;
  for (int32_t s = 0; s < gpus / G; s++)
    if ((rc = fs_topo_builder_node(b, FS_NODE_SCALEUP, 0, s, t->nodes[s * G].group)) < 0) return rc;
  for (int32_t i = 0; i < gpus; i++)
    if ((rc = fs_topo_builder_cable(b, i, t->nic0 + i, sv->pcie_gbps * 1e9, sv->pcie_latency_ns)) <
        0)
      return rc;
  return 0;
}

/* The node behind host port i: the host itself, or its GPU's NIC. */
int32_t fs_topo_builder_port(const fs_topo_builder *b, int32_t i) {
  return b->t->nic0 >= 0 ? b->t->nic0 + i : i;
}

/* Last: the NVLink cables, and the server keys of the canonical spec. */
int fs_topo_builder_servers_end(fs_topo_builder *b, const fs_server_params *sv,
                                int32_t gpus) {
  fs_topo *t = b->t;
  int32_t G = sv->gpus_per_node;
  if (G == 1) return 0;
  for (int32_t i = 0; i < gpus; i++) {
    int rc = fs_topo_builder_cable(b, i, t->scaleup0 + i / G, sv->nvlink_gbps * 1e9,
                          sv->nvlink_latency_ns);
    if (rc < 0) return rc;
  }
  size_t len = strlen(t->spec);
  snprintf(t->spec + len, sizeof(t->spec) - len,
           ",gpus_per_node=%d,nvlink_gbps=%g,nvlink_latency_ns=%lld,pcie_gbps=%g,"
           "pcie_latency_ns=%lld",
           G, sv->nvlink_gbps, (long long)sv->nvlink_latency_ns, sv->pcie_gbps,
           (long long)sv->pcie_latency_ns);
  if (sv->optical_io) {
    len = strlen(t->spec);
    snprintf(t->spec + len, sizeof(t->spec) - len, ",scaleup=optical_io");
  }
  return 0;
}


/* ---- families ----------------------------------------------------------------- */

int fs_topo_star(int32_t hosts, double gbps, int64_t latency_ns,
                 fs_topo **out, fs_err *err) {
  return fs_topo_star_servers(hosts, gbps, latency_ns, NULL, out, err);
}

int fs_topo_star_servers(int32_t hosts, double gbps, int64_t latency_ns,
                         const fs_server_params *svp, fs_topo **out, fs_err *err) {
  int rc = fs_topo_check_link("star", gbps, "gbps", latency_ns, err);
  if (rc) return rc;
  if (hosts < 1 || hosts > MAX_NODES - 1)
    return fs_err_set(err, FS_EINVAL, "star: hosts must be in [1, %d], got %d",
                      MAX_NODES - 1, hosts);
  fs_server_params sv;
  if ((rc = fs_topo_servers_check("star", svp, hosts, "hosts", "", &sv, err))) return rc;
  int64_t nodes = hosts + 1 + fs_topo_servers_nodes(&sv, hosts);
  int64_t cables = hosts + fs_topo_servers_cables(&sv, hosts);
  if ((rc = fs_topo_check_size("star", nodes, cables, err))) return rc;
  fs_topo_builder b;
  if ((rc = fs_topo_builder_init(&b, "star", (int32_t)nodes, (int32_t)(2 * cables), err)))
    return rc;
  for (int32_t h = 0; h < hosts; h++) TRY(fs_topo_builder_node(&b, FS_NODE_HOST, 0, h, -1));
  int32_t sw;
  TRY(sw = fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, 0, -1));
  TRY(fs_topo_builder_servers_begin(&b, &sv, hosts));
  for (int32_t h = 0; h < hosts; h++)
    TRY(fs_topo_builder_cable(&b, fs_topo_builder_port(&b, h), sw, gbps * 1e9, latency_ns));
  snprintf(b.t->spec, sizeof(b.t->spec), "star:hosts=%d,gbps=%g,latency_ns=%lld",
           hosts, gbps, (long long)latency_ns);
  TRY(fs_topo_builder_servers_end(&b, &sv, hosts));
  return fs_topo_builder_finish(&b, out, err);
oom:
  fs_topo_builder_abort(&b);
  return fs_err_set(err, FS_ENOMEM, "out of memory building star");
}

int fs_topo_leafspine(const fs_leafspine_params *p, fs_topo **out,
                      fs_err *err) {
  return fs_topo_leafspine_servers(p, NULL, out, err);
}

int fs_topo_leafspine_servers(const fs_leafspine_params *p, const fs_server_params *svp,
                              fs_topo **out, fs_err *err) {
  int rc = fs_topo_check_link("leafspine", p->host_gbps, "host_gbps", p->latency_ns, err);
  if (rc) return rc;
  if ((rc = fs_topo_check_link("leafspine", p->fabric_gbps, "fabric_gbps", p->latency_ns, err)))
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
  fs_server_params sv;
  /* Whole servers per leaf, so a server's NICs all sit on one leaf. */
  if ((rc = fs_topo_servers_check("leafspine", svp, p->hosts_per_leaf, "hosts_per_leaf",
                          "; a server's NICs sit on one leaf", &sv, err)))
    return rc;
  int64_t hosts = (int64_t)p->leaves * p->hosts_per_leaf;
  int64_t nodes = hosts + p->leaves + p->spines + fs_topo_servers_nodes(&sv, hosts);
  int64_t cables =
      hosts + (int64_t)p->leaves * p->spines * lps + fs_topo_servers_cables(&sv, hosts);
  if ((rc = fs_topo_check_size("leafspine", nodes, cables, err))) return rc;
  fs_topo_builder b;
  if ((rc = fs_topo_builder_init(&b, "leafspine", (int32_t)nodes, (int32_t)(2 * cables), err)))
    return rc;
  for (int32_t l = 0; l < p->leaves; l++)
    for (int32_t h = 0; h < p->hosts_per_leaf; h++)
      TRY(fs_topo_builder_node(&b, FS_NODE_HOST, 0, l * p->hosts_per_leaf + h, l));
  int32_t leaf0 = (int32_t)hosts, spine0 = leaf0 + p->leaves;
  for (int32_t l = 0; l < p->leaves; l++) TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, l, l));
  for (int32_t s = 0; s < p->spines; s++) TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 2, s, -1));
  TRY(fs_topo_builder_servers_begin(&b, &sv, (int32_t)hosts));
  for (int32_t h = 0; h < (int32_t)hosts; h++)
    TRY(fs_topo_builder_cable(&b, fs_topo_builder_port(&b, h), leaf0 + h / p->hosts_per_leaf,
                              p->host_gbps * 1e9, p->latency_ns));
  for (int32_t l = 0; l < p->leaves; l++)
    for (int32_t s = 0; s < p->spines; s++)
      for (int32_t c = 0; c < lps; c++)
        TRY(fs_topo_builder_cable(&b, leaf0 + l, spine0 + s, p->fabric_gbps * 1e9,
                         p->latency_ns));
  snprintf(b.t->spec, sizeof(b.t->spec),
           "leafspine:leaves=%d,spines=%d,hosts_per_leaf=%d,host_gbps=%g,"
           "fabric_gbps=%g,links_per_spine=%d,latency_ns=%lld",
           p->leaves, p->spines, p->hosts_per_leaf, p->host_gbps, p->fabric_gbps,
           lps, (long long)p->latency_ns);
  TRY(fs_topo_builder_servers_end(&b, &sv, (int32_t)hosts));
  return fs_topo_builder_finish(&b, out, err);
oom:
  fs_topo_builder_abort(&b);
  return fs_err_set(err, FS_ENOMEM, "out of memory building leafspine");
}

int fs_topo_fattree(int32_t k, double gbps, int64_t latency_ns, fs_topo **out,
                    fs_err *err) {
  return fs_topo_fattree_servers(k, gbps, latency_ns, NULL, out, err);
}

int fs_topo_fattree_servers(int32_t k, double gbps, int64_t latency_ns,
                            const fs_server_params *svp, fs_topo **out, fs_err *err) {
  int rc = fs_topo_check_link("fattree", gbps, "gbps", latency_ns, err);
  if (rc) return rc;
  if (k < 2 || k % 2 != 0 || k > 128)
    return fs_err_set(err, FS_EINVAL,
                      "fattree: k must be even and in [2, 128], got %d", k);
  int32_t h = k / 2;
  int32_t hosts = k * h * h, edges = k * h, aggs = k * h, cores = h * h;
  fs_server_params sv;
  /* Host ports fill up in order, so when G does not divide k/2 a server's
   * NICs span consecutive edge switches (docs/formats.md). */
  if ((rc = fs_topo_servers_check("fattree", svp, hosts, "the k^3/4 hosts", "", &sv, err)))
    return rc;
  int64_t nodes = (int64_t)hosts + edges + aggs + cores + fs_topo_servers_nodes(&sv, hosts);
  int64_t cables = (int64_t)hosts + edges * h + aggs * h + fs_topo_servers_cables(&sv, hosts);
  if ((rc = fs_topo_check_size("fattree", nodes, cables, err))) return rc;
  fs_topo_builder b;
  if ((rc = fs_topo_builder_init(&b, "fattree", (int32_t)nodes, (int32_t)(2 * cables), err)))
    return rc;
  for (int32_t i = 0; i < hosts; i++)
    TRY(fs_topo_builder_node(&b, FS_NODE_HOST, 0, i, i / (h * h)));
  int32_t edge0 = hosts, agg0 = edge0 + edges, core0 = agg0 + aggs;
  for (int32_t p = 0; p < k; p++)
    for (int32_t e = 0; e < h; e++) TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, e, p));
  for (int32_t p = 0; p < k; p++)
    for (int32_t a = 0; a < h; a++) TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 2, a, p));
  for (int32_t c = 0; c < cores; c++) TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 3, c, -1));
  TRY(fs_topo_builder_servers_begin(&b, &sv, hosts));
  double bps = gbps * 1e9;
  for (int32_t i = 0; i < hosts; i++)
    TRY(fs_topo_builder_cable(&b, fs_topo_builder_port(&b, i), edge0 + i / h, bps, latency_ns));
  for (int32_t p = 0; p < k; p++)
    for (int32_t e = 0; e < h; e++)
      for (int32_t a = 0; a < h; a++)
        TRY(fs_topo_builder_cable(&b, edge0 + p * h + e, agg0 + p * h + a, bps, latency_ns));
  /* Core switch c = a*h + j attaches to aggregation switch a of every pod. */
  for (int32_t p = 0; p < k; p++)
    for (int32_t a = 0; a < h; a++)
      for (int32_t j = 0; j < h; j++)
        TRY(fs_topo_builder_cable(&b, agg0 + p * h + a, core0 + a * h + j, bps, latency_ns));
  snprintf(b.t->spec, sizeof(b.t->spec), "fattree:k=%d,gbps=%g,latency_ns=%lld",
           k, gbps, (long long)latency_ns);
  TRY(fs_topo_builder_servers_end(&b, &sv, hosts));
  return fs_topo_builder_finish(&b, out, err);
oom:
  fs_topo_builder_abort(&b);
  return fs_err_set(err, FS_ENOMEM, "out of memory building fattree");
}

/* ---- general Clos ------------------------------------------------------------ */

static int clos_bad(const char *name, const char *rule, int64_t v, fs_err *err) {
  return fs_err_set(err, FS_EINVAL, "clos: %s must be %s, got %lld", name, rule, (long long)v);
}

int fs_topo_clos(const fs_clos_params *p, const fs_server_params *svp, fs_topo **out,
                 fs_err *err) {
  const char *F = "clos";
  int rc;
  int three = p->tiers == 3;
  if (p->tiers != 2 && p->tiers != 3) return clos_bad("tiers", "2 or 3", p->tiers, err);
  if ((rc = fs_topo_check_link(F, p->host_gbps, "host_gbps", p->latency_ns, err)) ||
      (rc = fs_topo_check_gbps(F, p->edge_gbps, "edge_gbps", err)) ||
      (three && (rc = fs_topo_check_gbps(F, p->agg_gbps, "agg_gbps", err))))
    return rc;
  if (p->pods < 1 || p->pods > MAX_NODES || (!three && p->pods != 1))
    return clos_bad("pods", three ? ">= 1" : "1 with tiers 2", p->pods, err);
  if (p->edges_per_pod < 1 || p->edges_per_pod > MAX_NODES)
    return clos_bad("edges_per_pod", ">= 1", p->edges_per_pod, err);
  if (p->hosts_per_edge < 1 || p->hosts_per_edge > MAX_NODES)
    return clos_bad("hosts_per_edge", ">= 1", p->hosts_per_edge, err);
  if (p->edge_uplinks < 1 || p->edge_uplinks > MAX_NODES)
    return clos_bad("edge_uplinks", ">= 1", p->edge_uplinks, err);
  if (three ? p->agg_uplinks < 1 || p->agg_uplinks > MAX_NODES : p->agg_uplinks != 0)
    return clos_bad("agg_uplinks", three ? ">= 1" : "0 with tiers 2", p->agg_uplinks, err);
  if (p->radix < 0) return clos_bad("radix", ">= 0 (0: unbounded)", p->radix, err);
  int64_t P = p->pods, E = p->edges_per_pod, hpe = p->hosts_per_edge, U1 = p->edge_uplinks;
  int64_t U2 = three ? p->agg_uplinks : 0;
  /* Ports: edge hpe + U1; aggregation (spine) E + U2; core P. */
  if (p->radix > 0 && hpe + U1 > p->radix)
    return fs_err_set(err, FS_EINVAL,
                      "clos: an edge switch needs hosts_per_edge + edge_uplinks = %lld ports, "
                      "more than radix %d",
                      (long long)(hpe + U1), p->radix);
  if (p->radix > 0 && E + U2 > p->radix)
    return fs_err_set(err, FS_EINVAL,
                      "clos: %s needs edges_per_pod%s = %lld ports, more than radix %d",
                      three ? "an aggregation switch" : "a spine",
                      three ? " + agg_uplinks" : "", (long long)(E + U2), p->radix);
  if (p->radix > 0 && three && P > p->radix)
    return fs_err_set(err, FS_EINVAL,
                      "clos: a core switch needs one port per pod (%lld), more than radix %d",
                      (long long)P, p->radix);
  if ((double)P * (double)E * (double)hpe > MAX_NODES || (double)P * (double)U1 > MAX_NODES ||
      (double)U1 * (double)U2 > MAX_NODES || (double)P * (double)E * (double)U1 > MAX_CABLES)
    return fs_err_set(err, FS_EINVAL,
                      "clos: too large (limits %d nodes, %d cables)", MAX_NODES, MAX_CABLES);
  int64_t hosts = P * E * hpe, edges = P * E, aggs = P * U1, cores = U1 * U2;
  if (hosts > MAX_NODES) return clos_bad("pods * edges_per_pod * hosts_per_edge", "<= 4194304",
                                         hosts, err);
  fs_server_params sv;
  if ((rc = fs_topo_servers_check(F, svp, hpe, "hosts_per_edge",
                                  "; a server's NICs sit on one edge", &sv, err)))
    return rc;
  int64_t nodes = hosts + edges + aggs + cores + fs_topo_servers_nodes(&sv, hosts);
  int64_t cables = hosts + edges * U1 + aggs * U2 + fs_topo_servers_cables(&sv, hosts);
  if ((rc = fs_topo_check_size(F, nodes, cables, err))) return rc;
  fs_topo_builder b;
  if ((rc = fs_topo_builder_init(&b, F, (int32_t)nodes, (int32_t)(2 * cables), err))) return rc;
  /* Two tiers: no pods to name, so every group is -1 (names leaf/spine). */
  for (int64_t i = 0; i < hosts; i++)
    TRY(fs_topo_builder_node(&b, FS_NODE_HOST, 0, (int32_t)i,
                             three ? (int32_t)(i / (E * hpe)) : -1));
  int64_t edge0 = hosts, agg0 = edge0 + edges, core0 = agg0 + aggs;
  for (int64_t q = 0; q < P; q++)
    for (int64_t e = 0; e < E; e++)
      TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, (int32_t)(three ? e : q * E + e),
                      three ? (int32_t)q : -1));
  for (int64_t q = 0; q < P; q++)
    for (int64_t a = 0; a < U1; a++)
      TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 2, (int32_t)a, three ? (int32_t)q : -1));
  for (int64_t c = 0; c < cores; c++)
    TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 3, (int32_t)c, -1));
  TRY(fs_topo_builder_servers_begin(&b, &sv, (int32_t)hosts));
  for (int64_t i = 0; i < hosts; i++)
    TRY(fs_topo_builder_cable(&b, fs_topo_builder_port(&b, (int32_t)i), (int32_t)(edge0 + i / hpe),
                     p->host_gbps * 1e9, p->latency_ns));
  for (int64_t q = 0; q < P; q++)
    for (int64_t e = 0; e < E; e++)
      for (int64_t a = 0; a < U1; a++)
        TRY(fs_topo_builder_cable(&b, (int32_t)(edge0 + q * E + e), (int32_t)(agg0 + q * U1 + a),
                         p->edge_gbps * 1e9, p->latency_ns));
  /* Core switch c = a*U2 + j attaches to aggregation switch a of every pod. */
  for (int64_t q = 0; q < P; q++)
    for (int64_t a = 0; a < U1; a++)
      for (int64_t j = 0; j < U2; j++)
        TRY(fs_topo_builder_cable(&b, (int32_t)(agg0 + q * U1 + a), (int32_t)(core0 + a * U2 + j),
                         p->agg_gbps * 1e9, p->latency_ns));
  fs_topo *t = b.t;
  /* For the closed-form bisection (fs_topo_bisection_formula). */
  t->n_dims = 6;
  t->dims[0] = p->tiers, t->dims[1] = p->pods, t->dims[2] = p->edges_per_pod;
  t->dims[3] = p->hosts_per_edge, t->dims[4] = p->edge_uplinks, t->dims[5] = p->agg_uplinks;
  if (three)
    snprintf(t->spec, sizeof(t->spec),
             "clos:tiers=3,pods=%d,edges_per_pod=%d,hosts_per_edge=%d,edge_uplinks=%d,"
             "agg_uplinks=%d,radix=%d,host_gbps=%g,edge_gbps=%g,agg_gbps=%g,latency_ns=%lld",
             p->pods, p->edges_per_pod, p->hosts_per_edge, p->edge_uplinks, p->agg_uplinks,
             p->radix, p->host_gbps, p->edge_gbps, p->agg_gbps, (long long)p->latency_ns);
  else
    snprintf(t->spec, sizeof(t->spec),
             "clos:tiers=2,edges_per_pod=%d,hosts_per_edge=%d,edge_uplinks=%d,radix=%d,"
             "host_gbps=%g,edge_gbps=%g,latency_ns=%lld",
             p->edges_per_pod, p->hosts_per_edge, p->edge_uplinks, p->radix, p->host_gbps,
             p->edge_gbps, (long long)p->latency_ns);
  TRY(fs_topo_builder_servers_end(&b, &sv, (int32_t)hosts));
  return fs_topo_builder_finish(&b, out, err);
oom:
  fs_topo_builder_abort(&b);
  return fs_err_set(err, FS_ENOMEM, "out of memory building %s", F);
}
