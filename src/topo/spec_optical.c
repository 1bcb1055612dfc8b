/* Topology objects of the optical fabrics (docs/formats.md; docs/model.md,
 * "Optical fabrics"): awgr, sirius, lotus, sipml-ocs, sipml-ring and
 * jupiter. Same rules as spec.c: every key checked, errors at the JSON path
 * of the key with its value. */
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "internal.h"

#define LAT_MAX 1000000000000LL

/* Defaults: 300 ns is 2 x 30 m of fibre (fabric_m each way to the grating)
 * at 5 ns/m, the grating itself passive and a few cm; 25 Gb/s a wavelength
 * is the common 25G lane (an assumption). An N-port AWGR routes input i on
 * wavelength k to output (i + k) mod N, so a host reaches the other N - 1
 * on N - 1 wavelengths: fewer cannot give every pair its channel. */
static int awgr_from_json(const fs__jctx *c, const cJSON *obj, const char *path, fs_topo **out,
                          fs_err *inner) {
  static const char *const keys[] = {"type", "hosts", "channel_gbps", "port_gbps", "latency_ns",
                                     "wavelengths", "inc", "cost", NULL};
  int64_t hosts, lat, wl;
  double ch, port;
  int rc;
  if ((rc = fs__json_expect_object(c, obj, path, keys)) ||
      (rc = fs__json_int(c, obj, path, "hosts", 1, 0, 2, 2048, &hosts)) ||
      (rc = fs__json_int(c, obj, path, "latency_ns", 0, 300, 0, LAT_MAX, &lat)) ||
      (rc = fs__json_int(c, obj, path, "wavelengths", 0, 0, 1, 4096, &wl)))
    return rc;
  if (wl > 0 && wl < hosts - 1) {
    char msg[160];
    snprintf(msg, sizeof(msg),
             "is fewer than the %lld a %lld-port AWGR needs (hosts - 1: one a destination)",
             (long long)(hosts - 1), (long long)hosts);
    return fs__topo_fail_key(c, obj, path, "wavelengths", msg);
  }
  /* A host's port carries its N - 1 wavelengths: give the port or the
   * channel, not both. */
  if (cJSON_GetObjectItemCaseSensitive(obj, "port_gbps")) {
    if (cJSON_GetObjectItemCaseSensitive(obj, "channel_gbps"))
      return fs__topo_fail_key(c, obj, path, "channel_gbps",
                               "and port_gbps both given (channel = port / (hosts - 1): give one)");
    if ((rc = fs__json_num(c, obj, path, "port_gbps", 1, 0, 1e-9, 1e7, &port))) return rc;
    ch = port / (double)(hosts - 1);
  } else if ((rc = fs__json_num(c, obj, path, "channel_gbps", 0, 25, 1e-9, 1e7, &ch))) {
    return rc;
  }
  fs_awgr_params p = {(int32_t)hosts, ch, lat, (int32_t)wl};
  return fs_topo_awgr(&p, out, inner);
}

/* Sirius's 50 Gb/s port is its prototype's channel rate and 100 ns its
 * slot (a 3.84 ns reconfiguration is then a ~4% guard band). */
static int sirius_from_json(const fs__jctx *c, const cJSON *obj, const char *path,
                            fs_topo **out, fs_err *inner) {
  static const char *const keys[] = {"type", "hosts", "port_gbps", "latency_ns", "slot_ns",
                                     "inc", "cost", NULL};
  int64_t hosts, lat, slot;
  double port;
  int rc;
  if ((rc = fs__json_expect_object(c, obj, path, keys)) ||
      (rc = fs__json_int(c, obj, path, "hosts", 1, 0, 2, 2048, &hosts)) ||
      (rc = fs__json_num(c, obj, path, "port_gbps", 0, 50, 1e-9, 1e7, &port)) ||
      (rc = fs__json_int(c, obj, path, "latency_ns", 0, 300, 0, LAT_MAX, &lat)) ||
      (rc = fs__json_int(c, obj, path, "slot_ns", 0, 100, 1, 488281250, &slot)))
    return rc;
  fs_sirius_params p = {(int32_t)hosts, port, lat, slot};
  return fs_topo_sirius(&p, out, inner);
}

/* Lotus: p hosts per lower switch (required), a switches a layer (p, the
 * balanced choice as in dragonfly), g groups (required); links at
 * host_gbps by default; an AWGR channel at 25 Gb/s as awgr's. */
static int lotus_from_json(const fs__jctx *c, const cJSON *obj, const char *path, fs_topo **out,
                           fs_err *inner) {
  static const char *const keys[] = {"type", "g", "a", "p", "host_gbps", "local_gbps",
                                     "global_gbps", "awgr_gbps", "latency_ns",
                                     "global_latency_ns", "inc", "cost", SERVER_KEYS, NULL};
  int64_t g, a, pp, lat, glat;
  double hg, lg, gg, ag;
  fs_server_params sv;
  int rc;
  if ((rc = fs__json_expect_object(c, obj, path, keys)) ||
      (rc = fs__json_int(c, obj, path, "g", 1, 0, 3, 1024, &g)) ||
      (rc = fs__json_int(c, obj, path, "p", 1, 0, 1, 4096, &pp)) ||
      (rc = fs__json_int(c, obj, path, "a", 0, pp < 1024 ? pp : 1024, 1, 1024, &a)) ||
      (rc = fs__json_num(c, obj, path, "host_gbps", 0, 100, 1e-9, 1e7, &hg)) ||
      (rc = fs__json_num(c, obj, path, "local_gbps", 0, hg, 1e-9, 1e7, &lg)) ||
      (rc = fs__json_num(c, obj, path, "global_gbps", 0, hg, 1e-9, 1e7, &gg)) ||
      (rc = fs__json_num(c, obj, path, "awgr_gbps", 0, 25, 1e-9, 1e7, &ag)) ||
      (rc = fs__json_int(c, obj, path, "latency_ns", 0, 1000, 0, LAT_MAX, &lat)) ||
      (rc = fs__json_int(c, obj, path, "global_latency_ns", 0, lat, 0, LAT_MAX, &glat)) ||
      (rc = fs__topo_get_servers(c, obj, path, &sv)))
    return rc;
  if (g * a * pp > (1 << 22)) return fs__topo_fail_key(c, obj, path, "g", "a*p*g must be <= 4194304");
  if (pp % sv.gpus_per_node)
    return fs__topo_fail_key(c, obj, path, "gpus_per_node",
                             "must divide p (hosts per lower switch): a server sits on one");
  fs_lotus_params p = {(int32_t)g, (int32_t)a, (int32_t)pp, hg, lg, gg, ag, lat, glat};
  return fs_topo_lotus(&p, &sv, out, inner);
}

/* SiP-ML: gpu_gbps 2560 by default, one TeraPHY chiplet (SiP-ML assumes
 * Tb/s-class silicon-photonic I/O per GPU); sipml-ocs 8 ports a GPU and
 * 300 ns a circuit (2 x 30 m of fibre to the switch); sipml-ring reaching 2
 * neighbours a side, 5 ns a segment (direct_m, 1 m of fibre between GPUs). Degree,
 * reach and lengths are estimates (docs/model.md). */
static int sipml_from_json(const fs__jctx *c, const cJSON *obj, const char *path, int ring,
                           fs_topo **out, fs_err *inner) {
  static const char *const okeys[] = {"type", "gpus", "degree", "gpu_gbps", "latency_ns",
                                      "inc", "cost", NULL};
  static const char *const rkeys[] = {"type", "gpus", "reach", "gpu_gbps", "latency_ns",
                                      "inc", "cost", NULL};
  int64_t gpus, deg, lat;
  double gbps;
  int rc;
  if ((rc = fs__json_expect_object(c, obj, path, ring ? rkeys : okeys)) ||
      (rc = fs__json_int(c, obj, path, "gpus", 1, 0, 3, 1 << 20, &gpus)) ||
      (rc = fs__json_int(c, obj, path, ring ? "reach" : "degree", 0, ring ? 2 : 8, 1, 1 << 20,
                         &deg)) ||
      (rc = fs__json_num(c, obj, path, "gpu_gbps", 0, FS__OPTIO_GBPS, 1e-9, 1e7, &gbps)) ||
      (rc = fs__json_int(c, obj, path, "latency_ns", 0, ring ? 5 : 300, 0, LAT_MAX, &lat)))
    return rc;
  if (ring && 2 * deg >= gpus)
    return fs__topo_fail_key(c, obj, path, "reach",
                             "must be < gpus / 2 (the neighbours on both sides distinct)");
  if (!ring && (deg % 2 || deg > 12))
    return fs__topo_fail_key(c, obj, path, "degree", "must be even and <= 12 (a torus of "
                                                     "degree / 2 dimensions)");
  fs_sipml_params p = {(int32_t)gpus, (int32_t)deg, gbps, lat};
  return ring ? fs_topo_sipml_ring(&p, out, inner) : fs_topo_sipml_ocs(&p, out, inner);
}

/* "demand": blocks rows of blocks numbers >= 0 into d. */
static int demand_from_json(const fs__jctx *c, const cJSON *obj, const char *path, int32_t B,
                            double *d) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "demand");
  char p[512];
  fs__json_path_key(p, sizeof(p), path, "demand");
  if (!cJSON_IsArray(m) || cJSON_GetArraySize(m) != B)
    return fs__json_fail(c, p, m, "must be an array of blocks (%d) rows", B);
  for (int32_t i = 0; i < B; i++) {
    const cJSON *row = cJSON_GetArrayItem(m, i);
    char pi[512];
    fs__json_path_idx(pi, sizeof(pi), p, (size_t)i);
    if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != B)
      return fs__json_fail(c, pi, row, "must be an array of blocks (%d) numbers", B);
    for (int32_t j = 0; j < B; j++) {
      char pij[512];
      fs__json_path_idx(pij, sizeof(pij), pi, (size_t)j);
      const cJSON *v = cJSON_GetArrayItem(row, j);
      if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || v->valuedouble > 1e18)
        return fs__json_fail(c, pij, v, "must be a number in [0, 1e18]");
      d[i * B + j] = i == j ? 0 : v->valuedouble;
    }
  }
  return 0;
}

/* Jupiter: blocks and hosts_per_block required; a block's uplinks by
 * default carry what its hosts send (ceil(hosts_per_block * host_gbps /
 * uplink_gbps)), at least blocks - 1; latency 1000 ns as the electrical
 * families (the OCS adds only fibre). "demand" (blocks x blocks) engineers
 * the links (fs_jupiter_engineer); without it they are uniform. */
static int jupiter_from_json(const fs__jctx *c, const cJSON *obj, const char *path,
                             fs_topo **out, fs_err *inner) {
  static const char *const keys[] = {"type", "blocks", "hosts_per_block", "uplinks",
                                     "host_gbps", "uplink_gbps", "latency_ns", "demand",
                                     "inc", "cost", SERVER_KEYS, NULL};
  int64_t B, hpb, up, lat;
  double hg, ug;
  fs_server_params sv;
  int rc;
  if ((rc = fs__json_expect_object(c, obj, path, keys)) ||
      (rc = fs__json_int(c, obj, path, "blocks", 1, 0, 2, 256, &B)) ||
      (rc = fs__json_int(c, obj, path, "hosts_per_block", 1, 0, 1, (1 << 22) / B, &hpb)) ||
      (rc = fs__json_num(c, obj, path, "host_gbps", 0, 100, 1e-9, 1e7, &hg)) ||
      (rc = fs__json_num(c, obj, path, "uplink_gbps", 0, hg, 1e-9, 1e7, &ug)))
    return rc;
  double need = (double)hpb * hg / ug;
  int64_t def = (int64_t)need;
  if ((double)def < need - 1e-9) def++;
  if (def < B - 1) def = B - 1;
  if (def > 4096) def = 4096;
  if ((rc = fs__json_int(c, obj, path, "uplinks", 0, def, 1, 4096, &up)) ||
      (rc = fs__json_int(c, obj, path, "latency_ns", 0, 1000, 0, LAT_MAX, &lat)) ||
      (rc = fs__topo_get_servers(c, obj, path, &sv)))
    return rc;
  if (up < B - 1)
    return fs__topo_fail_key(c, obj, path, "uplinks",
                             "must be >= blocks - 1 (every pair of blocks needs a link)");
  if (hpb % sv.gpus_per_node)
    return fs__topo_fail_key(c, obj, path, "gpus_per_node",
                             "must divide hosts_per_block: a server sits in one block");
  int32_t *links = NULL;
  if (cJSON_GetObjectItemCaseSensitive(obj, "demand")) {
    if (B > 64)
      return fs__topo_fail_key(c, obj, path, "blocks",
                               "must be <= 64 to engineer the topology from a demand");
    double *d = fs__malloc((size_t)(B * B), sizeof(double));
    int32_t *ups = fs__malloc((size_t)B, sizeof(int32_t));
    links = fs__malloc((size_t)(B * B), sizeof(int32_t));
    if (!d || !ups || !links) rc = fs_err_set(c->err, FS_ENOMEM, "out of memory");
    for (int32_t i = 0; !rc && i < B; i++) ups[i] = (int32_t)up;
    if (!rc) rc = demand_from_json(c, obj, path, (int32_t)B, d);
    /* an error here is the builder's kind: the caller labels it */
    if (!rc) rc = fs_jupiter_engineer((int32_t)B, ups, d, links, inner);
    free(d);
    free(ups);
    if (rc) {
      free(links);
      return rc;
    }
  }
  fs_jupiter_params p = {(int32_t)B, (int32_t)hpb, (int32_t)up, hg, ug, lat, links};
  rc = fs_topo_jupiter(&p, &sv, out, inner);
  free(links);
  return rc;
}

int fs__topo_optical_from_json(const fs__jctx *c, const cJSON *obj, const char *path,
                               const char *type, fs_topo **out, fs_err *inner, int *known) {
  *known = 1;
  if (strcmp(type, "awgr") == 0) return awgr_from_json(c, obj, path, out, inner);
  if (strcmp(type, "sirius") == 0) return sirius_from_json(c, obj, path, out, inner);
  if (strcmp(type, "lotus") == 0) return lotus_from_json(c, obj, path, out, inner);
  if (strcmp(type, "sipml-ocs") == 0) return sipml_from_json(c, obj, path, 0, out, inner);
  if (strcmp(type, "sipml-ring") == 0) return sipml_from_json(c, obj, path, 1, out, inner);
  if (strcmp(type, "jupiter") == 0) return jupiter_from_json(c, obj, path, out, inner);
  *known = 0;
  return 0;
}
