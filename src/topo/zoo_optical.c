/* Builders of the optical fabrics of issue 47 beyond awgr and sirius
 * (zoo.c): Lotus, SiP-ML's SiP-OCS and SiP-Ring, and Jupiter with its
 * traffic-aware topology engineering (docs/model.md, "Optical fabrics").
 * Same layout rules as zoo.c: hosts first, then switches tier by tier, then
 * (GPU servers) NICs and scale-up switches. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "internal.h"

static int bad_int(const char *fam, const char *name, const char *rule, int64_t v,
                   fs_err *err) {
  return fs_err_set(err, FS_EINVAL, "%s: %s must be %s, got %lld", fam, name, rule,
                    (long long)v);
}

/* ---- lotus ----------------------------------------------------------------- */

int fs_topo_lotus(const fs_lotus_params *p, const fs_server_params *svp, fs_topo **out,
                  fs_err *err) {
  const char *F = "lotus";
  int rc;
  if ((rc = fs_topo_check_link(F, p->host_gbps, "host_gbps", p->latency_ns, err)) ||
      (rc = fs_topo_check_gbps(F, p->local_gbps, "local_gbps", err)) ||
      (rc = fs_topo_check_gbps(F, p->global_gbps, "global_gbps", err)) ||
      (rc = fs_topo_check_gbps(F, p->awgr_gbps, "awgr_gbps", err)) ||
      (rc = fs_topo_check_latency(F, p->global_latency_ns, "global_latency_ns", err)))
    return rc;
  /* g >= 3: with two groups the "adjacent" pair would be cabled twice. */
  if (p->g < 3 || p->g > 1024) return bad_int(F, "g", "in [3, 1024]", p->g, err);
  if (p->a < 1 || p->a > 1024) return bad_int(F, "a", "in [1, 1024]", p->a, err);
  if (p->p < 1 || p->p > 4096) return bad_int(F, "p", "in [1, 4096]", p->p, err);
  int64_t g = p->g, a = p->a, lowers = g * a, hosts = lowers * p->p;
  if (hosts > MAX_NODES) return bad_int(F, "g*a*p (hosts)", "<= 4194304", hosts, err);
  fs_server_params sv;
  if ((rc = fs_topo_servers_check(F, svp, p->p, "p (hosts per lower switch)",
                                  "; a server's NICs sit on one switch", &sv, err)))
    return rc;
  int64_t nodes = hosts + 2 * lowers + fs_topo_servers_nodes(&sv, hosts);
  int64_t cables = hosts + g * a * a + g * (g - 1) / 2 + g * a * a +
                   fs_topo_servers_cables(&sv, hosts);
  if ((rc = fs_topo_check_size(F, nodes, cables, err))) return rc;
  fs_topo_builder b;
  if ((rc = fs_topo_builder_init(&b, F, (int32_t)nodes, (int32_t)(2 * cables), err))) return rc;
  for (int64_t i = 0; i < hosts; i++)
    TRY(fs_topo_builder_node(&b, FS_NODE_HOST, 0, (int32_t)i, (int32_t)(i / p->p / a)));
  int32_t lo0 = (int32_t)hosts, up0 = (int32_t)(hosts + lowers);
  for (int64_t x = 0; x < lowers; x++)
    TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, (int32_t)x, (int32_t)(x / a)));
  for (int64_t x = 0; x < lowers; x++)
    TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 2, (int32_t)x, (int32_t)(x / a)));
  TRY(fs_topo_builder_servers_begin(&b, &sv, (int32_t)hosts));
  for (int64_t i = 0; i < hosts; i++)
    TRY(fs_topo_builder_cable(&b, fs_topo_builder_port(&b, (int32_t)i),
                              (int32_t)(lo0 + i / p->p), p->host_gbps * 1e9, p->latency_ns));
  /* Inside a group: every lower switch to every upper one. */
  for (int64_t k = 0; k < g; k++)
    for (int64_t x = 0; x < a; x++)
      for (int64_t y = 0; y < a; y++)
        TRY(fs_topo_builder_cable(&b, (int32_t)(lo0 + k * a + x), (int32_t)(up0 + k * a + y),
                                  p->local_gbps * 1e9, p->latency_ns));
  /* One optical cable a pair of groups; group i's ports to the others in
   * the order i+1, i+2, ... dealt round-robin over its upper switches, so
   * they carry ceil or floor of (g - 1) / a each. */
  for (int64_t i = 0; i < g; i++)
    for (int64_t j = i + 1; j < g; j++) {
      int64_t ui = ((j - i - 1 + g) % g) % a, uj = ((i - j - 1 + 2 * g) % g) % a;
      TRY(fs_topo_builder_cable(&b, (int32_t)(up0 + i * a + ui), (int32_t)(up0 + j * a + uj),
                                p->global_gbps * 1e9, p->global_latency_ns));
    }
  /* The AWGR between groups i and i + 1: a wavelength from each lower
   * switch of one to each lower switch of the other. */
  for (int64_t i = 0; i < g; i++) {
    int64_t j = (i + 1) % g;
    for (int64_t x = 0; x < a; x++)
      for (int64_t y = 0; y < a; y++)
        TRY(fs_topo_builder_cable(&b, (int32_t)(lo0 + i * a + x), (int32_t)(lo0 + j * a + y),
                                  p->awgr_gbps * 1e9, p->global_latency_ns));
  }
  snprintf(b.t->spec, sizeof(b.t->spec),
           "lotus:g=%d,a=%d,p=%d,host_gbps=%g,local_gbps=%g,global_gbps=%g,awgr_gbps=%g,"
           "latency_ns=%lld,global_latency_ns=%lld",
           p->g, p->a, p->p, p->host_gbps, p->local_gbps, p->global_gbps, p->awgr_gbps,
           (long long)p->latency_ns, (long long)p->global_latency_ns);
  b.t->dims[0] = p->g;
  b.t->dims[1] = p->a;
  b.t->dims[2] = p->p;
  b.t->n_dims = 3;
  TRY(fs_topo_builder_servers_end(&b, &sv, (int32_t)hosts));
  return fs_topo_builder_finish(&b, out, err);
oom:
  fs_topo_builder_abort(&b);
  return fs_err_set(err, FS_ENOMEM, "out of memory building %s", F);
}

/* ---- SiP-ML ------------------------------------------------------------------ */

enum { SIPML_MAX_GPUS = 1 << 20 };

/* Splits n into k factors >= 3, each as close (in log) to the k-th root of
 * what is left as a divisor allows (ties: the smaller), ascending. 0, or -1
 * when n has no such split. */
static int balanced_dims(int64_t n, int32_t k, int32_t *dims) {
  int64_t rem = n;
  for (int32_t i = 0; i < k; i++) {
    int32_t left = k - i;
    if (left == 1) {
      if (rem < 3) return -1;
      dims[i] = (int32_t)rem;
      break;
    }
    double target = pow((double)rem, 1.0 / left);
    int64_t best = -1;
    double bd = 0;
    /* the rest must still split into left - 1 factors >= 3 */
    for (int64_t d = 3; d * d <= rem || d <= target + 1; d++) {
      if (d > rem || rem % d) continue;
      int64_t r = rem / d, need = 1;
      for (int32_t q = 1; q < left; q++) need *= 3;
      if (r < need) continue;
      double dist = fabs(log((double)d) - log(target));
      if (best < 0 || dist < bd - 1e-12) best = d, bd = dist;
    }
    if (best < 0) return -1;
    dims[i] = (int32_t)best;
    rem /= best;
  }
  for (int32_t i = 1; i < k; i++)
    for (int32_t j = i; j > 0 && dims[j] < dims[j - 1]; j--) {
      int32_t x = dims[j];
      dims[j] = dims[j - 1];
      dims[j - 1] = x;
    }
  return 0;
}

static int sipml_check(const char *F, const fs_sipml_params *p, fs_err *err) {
  int rc = fs_topo_check_link(F, p->gpu_gbps, "gpu_gbps", p->latency_ns, err);
  if (rc) return rc;
  if (p->gpus < 3 || p->gpus > SIPML_MAX_GPUS)
    return bad_int(F, "gpus", "in [3, 1048576]", p->gpus, err);
  return 0;
}

int fs_topo_sipml_ocs(const fs_sipml_params *p, fs_topo **out, fs_err *err) {
  const char *F = "sipml-ocs";
  int rc = sipml_check(F, p, err);
  if (rc) return rc;
  if (p->degree < 2 || p->degree > 12 || p->degree % 2)
    return bad_int(F, "degree", "even, in [2, 12]", p->degree, err);
  /* sized here, so a too large one is refused in this family's name */
  int64_t n = p->gpus;
  if ((rc = fs_topo_check_size(F, 2 * n, n + n * (p->degree / 2), err))) return rc;
  fs_direct_params d = {p->degree / 2, {0}, p->gpu_gbps / p->degree, p->gpu_gbps, p->latency_ns};
  if (balanced_dims(p->gpus, d.n_dims, d.dims))
    return fs_err_set(err, FS_EINVAL,
                      "%s: gpus (%d) does not split into degree / 2 = %d ring sizes >= 3 "
                      "(choose gpus with such factors, or another degree)",
                      F, p->gpus, d.n_dims);
  /* The torus builder lays it out; the circuits' host cable is on package
   * (no latency), and the family name keeps its cost and metrics apart. */
  fs_topo *t = NULL;
  if ((rc = fs_topo_torus(&d, &t, err))) return rc;
  snprintf(t->family, sizeof(t->family), "%s", F);
  for (int32_t l = 0; l < 2 * p->gpus; l++) t->links[l].latency_ns = 0;
  snprintf(t->spec, sizeof(t->spec), "sipml-ocs:gpus=%d,degree=%d,gpu_gbps=%g,latency_ns=%lld",
           p->gpus, p->degree, p->gpu_gbps, (long long)p->latency_ns);
  *out = t;
  return 0;
}

int fs_topo_sipml_ring(const fs_sipml_params *p, fs_topo **out, fs_err *err) {
  const char *F = "sipml-ring";
  int rc = sipml_check(F, p, err);
  if (rc) return rc;
  int64_t n = p->gpus, r = p->degree;
  /* 2r < n: the r neighbours on each side are distinct GPUs. */
  if (r < 1 || 2 * r >= n)
    return bad_int(F, "reach", "in [1, (gpus - 1) / 2]", p->degree, err);
  if (r * p->latency_ns > MAX_LATENCY_NS)
    return bad_int(F, "latency_ns", "<= 1e12 / reach", p->latency_ns, err);
  int64_t cables = n + n * r;
  if ((rc = fs_topo_check_size(F, 2 * n, cables, err))) return rc;
  fs_topo_builder b;
  if ((rc = fs_topo_builder_init(&b, F, (int32_t)(2 * n), (int32_t)(2 * cables), err))) return rc;
  for (int32_t i = 0; i < n; i++) TRY(fs_topo_builder_node(&b, FS_NODE_HOST, 0, i, -1));
  for (int32_t i = 0; i < n; i++) TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, i, -1));
  int32_t r0 = (int32_t)n;
  for (int32_t i = 0; i < n; i++)
    TRY(fs_topo_builder_cable(&b, i, r0 + i, p->gpu_gbps * 1e9, 0));
  /* A GPU's wavelengths are split evenly over its 2r neighbours; the k-th
   * neighbour's light passes k fibre segments. */
  double bps = p->gpu_gbps * 1e9 / (double)(2 * r);
  for (int64_t k = 1; k <= r; k++)
    for (int64_t i = 0; i < n; i++)
      TRY(fs_topo_builder_cable(&b, (int32_t)(r0 + i), (int32_t)(r0 + (i + k) % n), bps,
                                k * p->latency_ns));
  snprintf(b.t->spec, sizeof(b.t->spec), "sipml-ring:gpus=%d,reach=%d,gpu_gbps=%g,latency_ns=%lld",
           p->gpus, p->degree, p->gpu_gbps, (long long)p->latency_ns);
  b.t->dims[0] = (int32_t)n;
  b.t->dims[1] = (int32_t)r;
  b.t->n_dims = 2;
  return fs_topo_builder_finish(&b, out, err);
oom:
  fs_topo_builder_abort(&b);
  return fs_err_set(err, FS_ENOMEM, "out of memory building %s", F);
}

/* ---- Jupiter ------------------------------------------------------------------ */

enum { JUPITER_MAX_BLOCKS = 256, JUPITER_TE_MAX_BLOCKS = 64 };

void fs_jupiter_uniform(int32_t blocks, int32_t uplinks, int32_t *links) {
  int32_t per = blocks > 1 ? uplinks / (blocks - 1) : 0;
  for (int32_t i = 0; i < blocks; i++)
    for (int32_t j = 0; j < blocks; j++) links[i * blocks + j] = i == j ? 0 : per;
}

/* Greedy water-filling: each step lowers the largest demand per link among
 * the pairs that can still take one. With pairs scanned in (i, j) order and
 * strict comparisons the result is deterministic. O(steps * B^2), steps <=
 * sum(uplinks) / 2: at most 64 blocks of 4096 ports, ~2.6 * 10^8 pair
 * visits (Jupiter's fabrics have up to 64 blocks). */
int fs_jupiter_engineer(int32_t blocks, const int32_t *uplinks, const double *demand,
                        int32_t *links, fs_err *err) {
  int32_t B = blocks;
  if (B < 2 || B > JUPITER_TE_MAX_BLOCKS)
    return bad_int("jupiter", "blocks", "in [2, 64] to engineer the topology", B, err);
  for (int32_t i = 0; i < B; i++)
    if (uplinks[i] < 0 || uplinks[i] > 4096)
      return bad_int("jupiter", "uplinks", "in [0, 4096]", uplinks[i], err);
  for (int64_t q = 0; q < (int64_t)B * B; q++)
    if (!(demand[q] >= 0) || !isfinite(demand[q]))
      return fs_err_set(err, FS_EINVAL, "jupiter: demand[%lld][%lld] must be >= 0, got %g",
                        (long long)(q / B), (long long)(q % B), demand[q]);
  int32_t *spare = fs__calloc((size_t)B, sizeof(int32_t));
  if (!spare) return fs_err_set(err, FS_ENOMEM, "out of memory engineering jupiter");
  int mesh = 1;
  for (int32_t i = 0; i < B; i++) {
    spare[i] = uplinks[i];
    if (uplinks[i] < B - 1) mesh = 0;
  }
  for (int32_t i = 0; i < B; i++)
    for (int32_t j = 0; j < B; j++) links[i * B + j] = mesh && i != j;
  if (mesh)
    for (int32_t i = 0; i < B; i++) spare[i] -= B - 1;
  for (;;) {
    int32_t bi = -1, bj = -1;
    double best = -1;
    for (int32_t i = 0; i < B; i++) {
      if (spare[i] == 0) continue;
      for (int32_t j = i + 1; j < B; j++) {
        if (spare[j] == 0) continue;
        double d = demand[i * B + j] > demand[j * B + i] ? demand[i * B + j] : demand[j * B + i];
        int32_t x = links[i * B + j];
        /* a pair without a link and some demand comes first */
        double v = x == 0 ? (d > 0 ? INFINITY : 0) : d / x;
        if (v > best || (v == best && x < links[bi * B + bj])) best = v, bi = i, bj = j;
      }
    }
    if (bi < 0) break;
    links[bi * B + bj]++;
    links[bj * B + bi]++;
    spare[bi]--;
    spare[bj]--;
  }
  free(spare);
  return 0;
}

/* FNV-1a of the link counts: the spec of an engineered fabric carries it,
 * so two engineerings never share a spec (nor a route cache entry). */
static uint64_t links_hash(const int32_t *links, int64_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (int64_t q = 0; q < n; q++) {
    h ^= (uint64_t)(uint32_t)links[q];
    h *= 1099511628211ULL;
  }
  return h;
}

int fs_topo_jupiter(const fs_jupiter_params *p, const fs_server_params *svp, fs_topo **out,
                    fs_err *err) {
  const char *F = "jupiter";
  int rc;
  if ((rc = fs_topo_check_link(F, p->host_gbps, "host_gbps", p->latency_ns, err)) ||
      (rc = fs_topo_check_gbps(F, p->uplink_gbps, "uplink_gbps", err)))
    return rc;
  int32_t B = p->blocks;
  if (B < 2 || B > JUPITER_MAX_BLOCKS) return bad_int(F, "blocks", "in [2, 256]", B, err);
  if (p->hosts_per_block < 1 || p->hosts_per_block > MAX_NODES / B)
    return bad_int(F, "hosts_per_block", "in [1, 4194304 / blocks]", p->hosts_per_block, err);
  if (p->uplinks < B - 1 || p->uplinks > 4096)
    return bad_int(F, "uplinks", "in [blocks - 1, 4096] (every pair of blocks needs a link)",
                   p->uplinks, err);
  fs_server_params sv;
  int64_t hosts = (int64_t)B * p->hosts_per_block;
  if ((rc = fs_topo_servers_check(F, svp, p->hosts_per_block, "hosts_per_block",
                                  "; a server sits in one block", &sv, err)))
    return rc;
  int32_t *links = fs__malloc((size_t)B * (size_t)B, sizeof(int32_t));
  if (!links) return fs_err_set(err, FS_ENOMEM, "out of memory building %s", F);
  if (p->links)
    memcpy(links, p->links, (size_t)B * (size_t)B * sizeof(int32_t));
  else
    fs_jupiter_uniform(B, p->uplinks, links);
  int64_t inter = 0;
  for (int32_t i = 0; i < B; i++) {
    int64_t used = 0;
    for (int32_t j = 0; j < B; j++) {
      int32_t x = links[i * B + j];
      if (x < 0 || x != links[j * B + i] || (i == j && x) || (i != j && x == 0)) {
        free(links);
        return fs_err_set(err, FS_EINVAL,
                          "%s: links[%d][%d] = %d: block links must be symmetric, >= 1 off the "
                          "diagonal and 0 on it", F, i, j, x);
      }
      used += x;
      if (j > i) inter += x;
    }
    if (used > p->uplinks) {
      free(links);
      return fs_err_set(err, FS_EINVAL, "%s: block %d uses %lld links, more than uplinks %d", F,
                        i, (long long)used, p->uplinks);
    }
  }
  int64_t nodes = hosts + B + fs_topo_servers_nodes(&sv, hosts);
  int64_t cables = hosts + inter + fs_topo_servers_cables(&sv, hosts);
  fs_topo_builder b;
  if ((rc = fs_topo_check_size(F, nodes, cables, err)) ||
      (rc = fs_topo_builder_init(&b, F, (int32_t)nodes, (int32_t)(2 * cables), err))) {
    free(links);
    return rc;
  }
  for (int64_t i = 0; i < hosts; i++)
    TRY(fs_topo_builder_node(&b, FS_NODE_HOST, 0, (int32_t)i, (int32_t)(i / p->hosts_per_block)));
  int32_t b0 = (int32_t)hosts;
  for (int32_t k = 0; k < B; k++) TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 2, k, k));
  TRY(fs_topo_builder_servers_begin(&b, &sv, (int32_t)hosts));
  for (int64_t i = 0; i < hosts; i++)
    TRY(fs_topo_builder_cable(&b, fs_topo_builder_port(&b, (int32_t)i),
                              (int32_t)(b0 + i / p->hosts_per_block), p->host_gbps * 1e9,
                              p->latency_ns));
  /* Each circuit through the OCS layer is a cable between two blocks. */
  for (int32_t i = 0; i < B; i++)
    for (int32_t j = i + 1; j < B; j++)
      for (int32_t c = 0; c < links[i * B + j]; c++)
        TRY(fs_topo_builder_cable(&b, b0 + i, b0 + j, p->uplink_gbps * 1e9, p->latency_ns));
  int n = snprintf(b.t->spec, sizeof(b.t->spec),
                   "jupiter:blocks=%d,hosts_per_block=%d,uplinks=%d,host_gbps=%g,uplink_gbps=%g,"
                   "latency_ns=%lld",
                   B, p->hosts_per_block, p->uplinks, p->host_gbps, p->uplink_gbps,
                   (long long)p->latency_ns);
  if (p->links && n > 0 && (size_t)n < sizeof(b.t->spec))
    snprintf(b.t->spec + n, sizeof(b.t->spec) - (size_t)n, ",te=%016llx",
             (unsigned long long)links_hash(links, (int64_t)B * B));
  b.t->dims[0] = B;
  b.t->dims[1] = p->hosts_per_block;
  b.t->dims[2] = p->uplinks;
  b.t->dims[3] = p->links ? 1 : 0;
  b.t->n_dims = 4;
  TRY(fs_topo_builder_servers_end(&b, &sv, (int32_t)hosts));
  free(links);
  return fs_topo_builder_finish(&b, out, err);
oom:
  free(links);
  fs_topo_builder_abort(&b);
  return fs_err_set(err, FS_ENOMEM, "out of memory building %s", F);
}

/* The parameters fs_topo_jupiter took, read back from t's layout
 * (zoo_optical.c: hosts, blocks, then NICs and scale-up switches; cables:
 * PCIe, host ports, block links, NVLink). */
int fs_topo_jupiter_engineer(const fs_topo *t, const double *demand, fs_topo **out,
                             fs_err *err) {
  if (strcmp(t->family, "jupiter") != 0 || strncmp(t->spec, "jupiter:", 8) != 0 ||
      t->n_dims != 4 || t->n_hosts < 1)
    return fs_err_set(err, FS_EINVAL, "topology engineering needs a jupiter topology, not %s",
                      t->spec[0] ? t->spec : t->family);
  int32_t B = t->dims[0], H = t->n_hosts;
  fs_jupiter_params p = {B, t->dims[1], t->dims[2], 0, 0, 0, NULL};
  fs_server_params sv = fs_server_defaults(t->gpus_per_node > 1 ? t->gpus_per_node : 1);
  sv.optical_io = t->scaleup_optical;
  for (int32_t l = 0; l < t->n_links; l++) {
    const fs_link *k = &t->links[l];
    fs_node_kind a = t->nodes[k->from].kind, c = t->nodes[k->to].kind;
    if (c == FS_NODE_SWITCH && a != FS_NODE_SWITCH) p.host_gbps = k->capacity_bps / 1e9;
    if (a == FS_NODE_SWITCH && c == FS_NODE_SWITCH) {
      p.uplink_gbps = k->capacity_bps / 1e9;
      p.latency_ns = k->latency_ns;
    }
    if (k->from < H && c == FS_NODE_SCALEUP) {
      sv.nvlink_gbps = k->capacity_bps / 1e9;
      sv.nvlink_latency_ns = k->latency_ns;
    }
    if (k->from < H && c == FS_NODE_NIC) {
      sv.pcie_gbps = k->capacity_bps / 1e9;
      sv.pcie_latency_ns = k->latency_ns;
    }
  }
  int32_t *ups = fs__malloc((size_t)B, sizeof(int32_t));
  int32_t *links = fs__malloc((size_t)B * (size_t)B, sizeof(int32_t));
  int rc = !ups || !links ? fs_err_set(err, FS_ENOMEM, "out of memory engineering jupiter") : 0;
  for (int32_t i = 0; !rc && i < B; i++) ups[i] = p.uplinks;
  if (!rc) rc = fs_jupiter_engineer(B, ups, demand, links, err);
  p.links = links;
  fs_topo *o = NULL;
  if (!rc) rc = fs_topo_jupiter(&p, &sv, &o, err);
  free(ups);
  free(links);
  if (rc) return rc;
  o->cost = t->cost;
  *out = o;
  return 0;
}
