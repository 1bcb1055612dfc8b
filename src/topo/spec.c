/* Topology specs: a JSON object {"type": family, ...} (from a file or inside
 * a scenario) or the inline "family:key=value,..." form, which is turned into
 * the same JSON object so both share one validator and one set of messages. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "internal.h"

#define DEFAULT_GBPS 100.0
#define DEFAULT_LATENCY_NS 1000
/* Keys of the GPU servers, accepted by every family. */

/* gbps: the canonical key; link_gbps is accepted as a synonym. */
static int get_gbps(const fs__jctx *c, const cJSON *obj, const char *path,
                    double *out) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, "gbps");
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(obj, "link_gbps");
  if (a && b) {
    char p[512];
    fs__json_path_key(p, sizeof(p), path, "link_gbps");
    return fs__json_fail(c, p, b, "give either gbps or link_gbps, not both");
  }
  return fs__json_num(c, obj, path, b ? "link_gbps" : "gbps", 0, DEFAULT_GBPS,
                      1e-9, 1e7, out);
}

static int get_latency(const fs__jctx *c, const cJSON *obj, const char *path,
                       int64_t *out) {
  return fs__json_int(c, obj, path, "latency_ns", 0, DEFAULT_LATENCY_NS, 0,
                      1000000000000LL, out);
}

/* The GPU-server keys every family takes (docs/formats.md). The other four
 * only mean something with gpus_per_node > 1; given with 1 they are an
 * error rather than silently unused. */
int fs__topo_get_servers(const fs__jctx *c, const cJSON *obj, const char *path,
                       fs_server_params *sv) {
  fs_server_params d = fs_server_defaults(1);
  int64_t g;
  int rc;
  const char *up;
  /* scaleup=optical_io: the scale-up links are TeraPHY optical I/O
   * chiplets (docs/model.md, "Optical fabrics"): one chiplet's rate and an
   * estimated latency by default, and their parts in the cost. */
  if ((rc = fs__json_str(c, obj, path, "scaleup", 0, "nvlink", &up))) return rc;
  if (strcmp(up, "nvlink") != 0 && strcmp(up, "optical_io") != 0)
    return fs__topo_fail_key(c, obj, path, "scaleup", "must be \"nvlink\" or \"optical_io\"");
  sv->optical_io = strcmp(up, "optical_io") == 0;
  if (sv->optical_io) {
    d.nvlink_gbps = FS__OPTIO_GBPS;
    d.nvlink_latency_ns = FS__OPTIO_LATENCY_NS;
  }
  if ((rc = fs__json_int(c, obj, path, "gpus_per_node", 0, 1, 1, 1 << 22, &g)) ||
      (rc = fs__json_num(c, obj, path, "nvlink_gbps", 0, d.nvlink_gbps, 1e-9, 1e7,
                         &sv->nvlink_gbps)) ||
      (rc = fs__json_int(c, obj, path, "nvlink_latency_ns", 0, d.nvlink_latency_ns, 0,
                         1000000000000LL, &sv->nvlink_latency_ns)) ||
      (rc = fs__json_num(c, obj, path, "pcie_gbps", 0, d.pcie_gbps, 1e-9, 1e7,
                         &sv->pcie_gbps)) ||
      (rc = fs__json_int(c, obj, path, "pcie_latency_ns", 0, d.pcie_latency_ns, 0,
                         1000000000000LL, &sv->pcie_latency_ns)))
    return rc;
  sv->gpus_per_node = (int32_t)g;
  static const char *const only[] = {"nvlink_gbps", "nvlink_latency_ns", "pcie_gbps",
                                     "pcie_latency_ns", "scaleup"};
  for (size_t i = 0; g == 1 && i < sizeof(only) / sizeof(only[0]); i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, only[i]);
    if (!v) continue;
    char p[512];
    fs__json_path_key(p, sizeof(p), path, only[i]);
    return fs__json_fail(c, p, v, "applies only to GPU servers (gpus_per_node > 1)");
  }
  return 0;
}

/* gpus_per_node must divide `n` (what `what` names; `why` says why), else
 * an error at $.gpus_per_node. */
static int servers_divide(const fs__jctx *c, const cJSON *obj, const char *path,
                          const fs_server_params *sv, int64_t n, const char *what,
                          const char *why) {
  if (n % sv->gpus_per_node == 0) return 0;
  char p[512];
  fs__json_path_key(p, sizeof(p), path, "gpus_per_node");
  return fs__json_fail(c, p, cJSON_GetObjectItemCaseSensitive(obj, "gpus_per_node"),
                       "must divide %s (%lld) %s", what, (long long)n, why);
}

/* Re-labels a builder error (which knows no file or path) with both. */
static int builder_fail(const fs__jctx *c, const char *path, int rc,
                        const fs_err *inner) {
  return fs_err_set(c->err, rc, "%s: %s: %s", c->file, path, inner->msg);
}


/* "cost" is accepted by every family (fs__cost_from_json). */
int fs__topo_fail_key(const fs__jctx *c, const cJSON *obj, const char *path, const char *key,
                    const char *msg) {
  char p[512];
  fs__json_path_key(p, sizeof(p), path, key);
  return fs__json_fail(c, p, cJSON_GetObjectItemCaseSensitive(obj, key), "%s", msg);
}

/* dims: a number (one dimension), "AxBxC" or [A, B, C]; each in [2, 2^21]. */
static int get_dims(const fs__jctx *c, const cJSON *obj, const char *path,
                    fs_direct_params *d) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "dims");
  char p[512];
  fs__json_path_key(p, sizeof(p), path, "dims");
  if (!v) return fs__json_fail(c, p, v, "is required (e.g. \"4x4x4\" or [4, 4, 4])");
  d->n_dims = 0;
  if (cJSON_IsNumber(v)) {
    int64_t x;
    int rc = fs__json_int_value(c, v, p, 2, 1 << 21, &x);
    if (rc) return rc;
    d->dims[d->n_dims++] = (int32_t)x;
    return 0;
  }
  if (cJSON_IsArray(v)) {
    int n = cJSON_GetArraySize(v);
    if (n < 1 || n > 6) return fs__json_fail(c, p, v, "must list 1 to 6 sizes");
    for (int i = 0; i < n; i++) {
      char pi[512];
      fs__json_path_idx(pi, sizeof(pi), p, (size_t)i);
      int64_t x;
      int rc = fs__json_int_value(c, cJSON_GetArrayItem(v, i), pi, 2, 1 << 21, &x);
      if (rc) return rc;
      d->dims[d->n_dims++] = (int32_t)x;
    }
    return 0;
  }
  if (cJSON_IsString(v)) {
    const char *s = v->valuestring;
    while (*s) {
      char *end;
      long x = strtol(s, &end, 10);
      if (end == s || x < 2 || x > (1 << 21) || d->n_dims == 6 || (*end && *end != 'x'))
        return fs__json_fail(c, p, v,
                             "must be 1 to 6 sizes, each >= 2, joined by 'x' (e.g. 4x4x4)");
      d->dims[d->n_dims++] = (int32_t)x;
      s = *end ? end + 1 : end;
      if (*end && !*s)
        return fs__json_fail(c, p, v, "must not end with 'x'");
    }
    if (d->n_dims == 0) return fs__json_fail(c, p, v, "must not be empty");
    return 0;
  }
  return fs__json_fail(c, p, v, "must be a number, a string like \"4x4x4\" or an array");
}

/* ceil(down / (over * up)), at least 1: the fewest up-links that keep a
 * tier's oversubscription at or below `over`. */
static int64_t uplinks_for(double down, double over, double up) {
  double need = down / (over * up);
  if (need > (double)(1 << 23)) return 1 << 23; /* then rejected as too many */
  int64_t n = (int64_t)need;
  if ((double)n < need - 1e-9) n++;
  return n < 1 ? 1 : n;
}

/* The general Clos (docs/formats.md): tiers 2 or 3; a tier's up-links are
 * given as a count or as an oversubscription (not both); keys of the core
 * tier only with three tiers. */
static int clos_from_json(const fs__jctx *c, const cJSON *obj, const char *path,
                          fs_topo **out, fs_err *inner) {
  static const char *const keys[] = {"type", "tiers", "pods", "edges_per_pod", "hosts_per_edge",
                                     "edge_uplinks", "agg_uplinks", "edge_oversubscription",
                                     "agg_oversubscription", "radix", "host_gbps", "edge_gbps",
                                     "agg_gbps", "latency_ns", "inc", "cost", SERVER_KEYS, NULL};
  static const char *const core_keys[] = {"pods", "agg_uplinks", "agg_oversubscription",
                                          "agg_gbps"};
  int64_t tiers, pods, epp, hpe, u1, u2 = 0, radix, lat;
  double hg, eg, ag = 0, o1, o2;
  fs_server_params sv;
  int rc;
  if ((rc = fs__json_expect_object(c, obj, path, keys)) ||
      (rc = fs__json_int(c, obj, path, "tiers", 0, 3, 2, 3, &tiers)))
    return rc;
  for (size_t i = 0; tiers == 2 && i < sizeof(core_keys) / sizeof(core_keys[0]); i++)
    if (cJSON_GetObjectItemCaseSensitive(obj, core_keys[i]))
      return fs__topo_fail_key(c, obj, path, core_keys[i],
                      "applies only to tiers 3 (a two-tier Clos is one pod, no core)");
  static const char *const pairs[][2] = {{"edge_uplinks", "edge_oversubscription"},
                                         {"agg_uplinks", "agg_oversubscription"}};
  for (int i = 0; i < 2; i++)
    if (cJSON_GetObjectItemCaseSensitive(obj, pairs[i][0]) &&
        cJSON_GetObjectItemCaseSensitive(obj, pairs[i][1]))
      return fs__topo_fail_key(c, obj, path, pairs[i][1], i ? "give either agg_uplinks or "
                                                     "agg_oversubscription, not both"
                                                   : "give either edge_uplinks or "
                                                     "edge_oversubscription, not both");
  if ((rc = fs__json_int(c, obj, path, "pods", tiers == 3, 1, 1, 1 << 22, &pods)) ||
      (rc = fs__json_int(c, obj, path, "edges_per_pod", 1, 0, 1, 1 << 22, &epp)) ||
      (rc = fs__json_int(c, obj, path, "hosts_per_edge", 1, 0, 1, 1 << 22, &hpe)) ||
      (rc = fs__json_num(c, obj, path, "host_gbps", 0, DEFAULT_GBPS, 1e-9, 1e7, &hg)) ||
      (rc = fs__json_num(c, obj, path, "edge_gbps", 0, hg, 1e-9, 1e7, &eg)) ||
      (tiers == 3 && (rc = fs__json_num(c, obj, path, "agg_gbps", 0, eg, 1e-9, 1e7, &ag))) ||
      (rc = fs__json_num(c, obj, path, "edge_oversubscription", 0, 1, 1e-6, 1e6, &o1)) ||
      (rc = fs__json_int(c, obj, path, "edge_uplinks", 0,
                         uplinks_for((double)hpe * hg, o1, eg), 1, 1 << 22, &u1)) ||
      (tiers == 3 &&
       ((rc = fs__json_num(c, obj, path, "agg_oversubscription", 0, 1, 1e-6, 1e6, &o2)) ||
        (rc = fs__json_int(c, obj, path, "agg_uplinks", 0,
                           uplinks_for((double)epp * eg, o2, ag), 1, 1 << 22, &u2)))) ||
      (rc = fs__json_int(c, obj, path, "radix", 0, 0, 0, 1 << 22, &radix)) ||
      (rc = get_latency(c, obj, path, &lat)) || (rc = fs__topo_get_servers(c, obj, path, &sv)) ||
      (rc = servers_divide(c, obj, path, &sv, hpe, "hosts_per_edge",
                           "so a server's NICs sit on one edge switch")))
    return rc;
  if (u1 > (1 << 22))
    return fs__topo_fail_key(c, obj, path, "edge_oversubscription", "asks for more than 4194304 up-links");
  if (u2 > (1 << 22))
    return fs__topo_fail_key(c, obj, path, "agg_oversubscription", "asks for more than 4194304 up-links");
  if (radix > 0 && hpe + u1 > radix)
    return fs__topo_fail_key(c, obj, path, "radix",
                    "is too small: an edge switch needs hosts_per_edge + edge_uplinks ports "
                    "(more hosts than ports)");
  if (radix > 0 && epp + u2 > radix)
    return fs__topo_fail_key(c, obj, path, "radix",
                    tiers == 3 ? "is too small: an aggregation switch needs edges_per_pod + "
                                 "agg_uplinks ports"
                               : "is too small: a spine needs one port per edge switch");
  if (radix > 0 && tiers == 3 && pods > radix)
    return fs__topo_fail_key(c, obj, path, "radix",
                    "is too small: a core switch needs one port per pod");
  if ((double)pods * (double)epp * (double)hpe > (double)(1 << 22))
    return fs__topo_fail_key(c, obj, path, "hosts_per_edge",
                    "times edges_per_pod and pods must be <= 4194304");
  if ((double)u1 * (double)u2 > (double)(1 << 22))
    return fs__topo_fail_key(c, obj, path, "agg_uplinks",
                    "times edge_uplinks (the core switches) must be <= 4194304");
  fs_clos_params p = {(int32_t)tiers, (int32_t)pods, (int32_t)epp, (int32_t)hpe, (int32_t)u1,
                      (int32_t)u2, (int32_t)radix, hg, eg, ag, lat};
  return fs_topo_clos(&p, &sv, out, inner);
}

static int zoo_from_json(const fs__jctx *c, const cJSON *obj, const char *path,
                         const char *type, fs_topo **out, fs_err *inner, int *known) {
  int rc;
  *known = 1;
  if (strcmp(type, "clos") == 0) return clos_from_json(c, obj, path, out, inner);
  if (strcmp(type, "railopt") == 0) {
    static const char *const keys[] = {"type", "servers", "servers_per_su", "spines", "radix",
                                       "oversubscription", "links_per_spine", "host_gbps",
                                       "fabric_gbps", "latency_ns", "inc", "cost",
                                       SERVER_KEYS, NULL};
    int64_t servers, spu, spines, lps, lat, g, radix;
    double hg, fg, over;
    fs_server_params sv;
    if ((rc = fs__json_expect_object(c, obj, path, keys)) ||
        (rc = fs__json_int(c, obj, path, "gpus_per_node", 1, 0, 1, 1024, &g)) ||
        (rc = fs__json_int(c, obj, path, "servers", 1, 0, 1, 1 << 22, &servers)) ||
        (rc = fs__json_int(c, obj, path, "servers_per_su", 0,
                           servers % 32 == 0 ? 32 : servers, 1, servers, &spu)) ||
        (rc = fs__json_num(c, obj, path, "host_gbps", 0, 400, 1e-9, 1e7, &hg)) ||
        (rc = fs__json_num(c, obj, path, "fabric_gbps", 0, hg, 1e-9, 1e7, &fg)) ||
        (rc = fs__json_int(c, obj, path, "links_per_spine", 0, 1, 1, 64, &lps)) ||
        (rc = fs__json_num(c, obj, path, "oversubscription", 0, 1, 1, 1e6, &over)) ||
        (rc = get_latency(c, obj, path, &lat)) || (rc = fs__topo_get_servers(c, obj, path, &sv)))
      return rc;
    if (servers % spu) return fs__topo_fail_key(c, obj, path, "servers_per_su", "must divide servers");
    /* Non-blocking by default: a rail switch's up-links carry what its
     * servers_per_su NICs send, divided by the oversubscription. */
    double need = (double)spu * hg / (over * fg * (double)lps);
    int64_t def = (int64_t)need;
    if ((double)def < need - 1e-9) def++;
    if (def < 1) def = 1;
    if (cJSON_GetObjectItemCaseSensitive(obj, "spines") &&
        cJSON_GetObjectItemCaseSensitive(obj, "oversubscription"))
      return fs__topo_fail_key(c, obj, path, "oversubscription",
                      "give either spines or oversubscription, not both");
    if ((rc = fs__json_int(c, obj, path, "spines", 0, def, 1, 1 << 22, &spines)) ||
        (rc = fs__json_int(c, obj, path, "radix", 0, 0, 0, 1 << 22, &radix)))
      return rc;
    if (radix > 0 && spu + spines * lps > radix)
      return fs__topo_fail_key(c, obj, path, "radix",
                      "is too small: a rail switch needs servers_per_su + spines * "
                      "links_per_spine ports (more hosts than ports)");
    if (radix > 0 && servers / spu * g * lps > radix)
      return fs__topo_fail_key(c, obj, path, "radix",
                      "is too small: a spine needs one port per rail switch and "
                      "links_per_spine");
    if (servers * g > (1 << 22))
      return fs__topo_fail_key(c, obj, path, "servers", "times gpus_per_node must be <= 4194304");
    fs_railopt_params p = {(int32_t)servers, (int32_t)spu, (int32_t)spines, (int32_t)lps,
                           (int32_t)radix, hg, fg, lat};
    return fs_topo_railopt(&p, &sv, out, inner);
  }
  if (strcmp(type, "railonly") == 0) {
    static const char *const keys[] = {"type", "servers", "radix", "host_gbps", "latency_ns",
                                       "inc", "cost", SERVER_KEYS, NULL};
    int64_t servers, radix, lat, g;
    double hg;
    fs_server_params sv;
    if ((rc = fs__json_expect_object(c, obj, path, keys)) ||
        (rc = fs__json_int(c, obj, path, "gpus_per_node", 1, 0, 2, 1024, &g)) ||
        (rc = fs__json_int(c, obj, path, "servers", 1, 0, 1, 1 << 22, &servers)) ||
        (rc = fs__json_int(c, obj, path, "radix", 0, 0, 0, 1 << 22, &radix)) ||
        (rc = fs__json_num(c, obj, path, "host_gbps", 0, 400, 1e-9, 1e7, &hg)) ||
        (rc = get_latency(c, obj, path, &lat)) || (rc = fs__topo_get_servers(c, obj, path, &sv)))
      return rc;
    if (radix > 0 && servers > radix)
      return fs__topo_fail_key(c, obj, path, "servers",
                      "must be <= radix (one port per server on each rail switch)");
    if (servers * g > (1 << 22))
      return fs__topo_fail_key(c, obj, path, "servers", "times gpus_per_node must be <= 4194304");
    fs_railonly_params p = {(int32_t)servers, (int32_t)radix, hg, lat};
    return fs_topo_railonly(&p, &sv, out, inner);
  }
  int torus = strcmp(type, "torus") == 0, ring = strcmp(type, "ring") == 0;
  int mesh = strcmp(type, "fullmesh") == 0;
  if (torus || ring || mesh) {
    static const char *const tkeys[] = {"type", "dims", "gbps", "link_gbps", "host_gbps",
                                        "latency_ns", "inc", "cost", NULL};
    static const char *const nkeys[] = {"type", "n", "gbps", "link_gbps", "host_gbps",
                                        "latency_ns", "inc", "cost", NULL};
    fs_direct_params d = {0, {0}, 0, 0, 0};
    if ((rc = fs__json_expect_object(c, obj, path, torus ? tkeys : nkeys))) return rc;
    if (torus) {
      if ((rc = get_dims(c, obj, path, &d))) return rc;
    } else {
      int64_t n;
      if ((rc = fs__json_int(c, obj, path, "n", 1, 0, 2, mesh ? 4096 : 1 << 21, &n))) return rc;
      d.n_dims = 1;
      d.dims[0] = (int32_t)n;
    }
    if ((rc = get_gbps(c, obj, path, &d.gbps)) || (rc = get_latency(c, obj, path, &d.latency_ns)))
      return rc;
    /* A chip injects what its router can forward by default: one link per
     * neighbour. */
    double links = mesh ? d.dims[0] - 1 : 0;
    for (int32_t i = 0; !mesh && i < d.n_dims; i++) links += d.dims[i] == 2 ? 1 : 2;
    if ((rc = fs__json_num(c, obj, path, "host_gbps", 0, links * d.gbps, 1e-9, 1e7,
                           &d.host_gbps)))
      return rc;
    if (torus) return fs_topo_torus(&d, out, inner);
    if (ring) return fs_topo_ring(d.dims[0], d.gbps, d.host_gbps, d.latency_ns, out, inner);
    return fs_topo_fullmesh(d.dims[0], d.gbps, d.host_gbps, d.latency_ns, out, inner);
  }
  /* The optical fabrics (spec_optical.c). */
  rc = fs__topo_optical_from_json(c, obj, path, type, out, inner, known);
  if (*known) return rc;
  *known = 1;
  if (strcmp(type, "dragonfly") == 0) {
    static const char *const keys[] = {"type", "a", "p", "h", "g", "host_gbps", "local_gbps",
                                       "global_gbps", "latency_ns", "global_latency_ns",
                                       "inc", "cost", SERVER_KEYS, NULL};
    int64_t a, pp, h, g, lat, glat;
    double hg, lg, gg;
    fs_server_params sv;
    if ((rc = fs__json_expect_object(c, obj, path, keys))) return rc;
    if (!cJSON_GetObjectItemCaseSensitive(obj, "p") && !cJSON_GetObjectItemCaseSensitive(obj, "a"))
      return fs__topo_fail_key(c, obj, path, "p", "is required (or a): hosts per router");
    if ((rc = fs__json_int(c, obj, path, "p", 0, 0, 1, 4096, &pp)) ||
        (rc = fs__json_int(c, obj, path, "a", 0, 2 * pp, 1, 4096, &a)) ||
        (rc = fs__json_int(c, obj, path, "p", 0, a / 2 > 0 ? a / 2 : 1, 1, 4096, &pp)) ||
        (rc = fs__json_int(c, obj, path, "h", 0, pp, 1, 4096, &h)) ||
        (rc = fs__json_int(c, obj, path, "g", 0, a * h + 1, 2, a * h + 1, &g)) ||
        (rc = fs__json_num(c, obj, path, "host_gbps", 0, DEFAULT_GBPS, 1e-9, 1e7, &hg)) ||
        (rc = fs__json_num(c, obj, path, "local_gbps", 0, hg, 1e-9, 1e7, &lg)) ||
        (rc = fs__json_num(c, obj, path, "global_gbps", 0, lg, 1e-9, 1e7, &gg)) ||
        (rc = get_latency(c, obj, path, &lat)) ||
        (rc = fs__json_int(c, obj, path, "global_latency_ns", 0, lat, 0, 1000000000000LL,
                           &glat)) ||
        (rc = fs__topo_get_servers(c, obj, path, &sv)) ||
        (rc = servers_divide(c, obj, path, &sv, pp, "p (hosts per router)",
                             "so a server's NICs sit on one router")))
      return rc;
    if (a * pp * g > (1 << 22)) return fs__topo_fail_key(c, obj, path, "g", "a*p*g must be <= 4194304");
    fs_dragonfly_params p = {(int32_t)a, (int32_t)pp, (int32_t)h, (int32_t)g, hg, lg, gg, lat,
                             glat};
    return fs_topo_dragonfly(&p, &sv, out, inner);
  }
  *known = 0;
  return 0;
}

int fs__topo_from_json(const fs__jctx *c, const cJSON *obj, const char *path,
                       fs_topo **out) {
  if (!cJSON_IsObject(obj)) return fs__json_fail(c, path, obj, "must be an object");
  const char *type;
  int rc = fs__json_str(c, obj, path, "type", 1, NULL, &type);
  if (rc) return rc;
  fs_err inner = {0, ""};
  int known = 0;
  if (strcmp(type, "file") == 0) {
    if ((rc = fs__topo_file_from_json(c, obj, path, out))) return rc;
  } else if ((rc = zoo_from_json(c, obj, path, type, out, &inner, &known)), known) {
    if (rc && !inner.code) return rc; /* a JSON error, already set */
  } else if (strcmp(type, "star") == 0) {
    static const char *const keys[] = {"type", "hosts", "gbps", "link_gbps", "latency_ns",
                                       "inc", "cost", SERVER_KEYS, NULL};
    int64_t hosts, lat;
    double gbps;
    fs_server_params sv;
    if ((rc = fs__json_expect_object(c, obj, path, keys)) ||
        (rc = fs__json_int(c, obj, path, "hosts", 1, 0, 1, 1 << 22, &hosts)) ||
        (rc = get_gbps(c, obj, path, &gbps)) || (rc = get_latency(c, obj, path, &lat)) ||
        (rc = fs__topo_get_servers(c, obj, path, &sv)) ||
        (rc = servers_divide(c, obj, path, &sv, hosts, "hosts", "into whole servers")))
      return rc;
    rc = fs_topo_star_servers((int32_t)hosts, gbps, lat, &sv, out, &inner);
  } else if (strcmp(type, "leafspine") == 0) {
    static const char *const keys[] = {"type", "leaves", "spines", "hosts_per_leaf",
                                       "host_gbps", "fabric_gbps", "links_per_spine",
                                       "latency_ns", "inc", "cost", SERVER_KEYS, NULL};
    int64_t leaves, spines, hpl, lps, lat;
    double hg, fg;
    fs_server_params sv;
    if ((rc = fs__json_expect_object(c, obj, path, keys)) ||
        (rc = fs__json_int(c, obj, path, "leaves", 1, 0, 1, 1 << 22, &leaves)) ||
        (rc = fs__json_int(c, obj, path, "spines", 1, 0, 1, 1 << 22, &spines)) ||
        (rc = fs__json_int(c, obj, path, "hosts_per_leaf", 1, 0, 1, 1 << 22, &hpl)) ||
        (rc = fs__json_num(c, obj, path, "host_gbps", 0, DEFAULT_GBPS, 1e-9, 1e7, &hg)) ||
        (rc = fs__json_num(c, obj, path, "fabric_gbps", 0, hg, 1e-9, 1e7, &fg)) ||
        (rc = fs__json_int(c, obj, path, "links_per_spine", 0, 1, 1, 64, &lps)) ||
        (rc = get_latency(c, obj, path, &lat)) || (rc = fs__topo_get_servers(c, obj, path, &sv)) ||
        (rc = servers_divide(c, obj, path, &sv, hpl, "hosts_per_leaf",
                             "so a server's NICs sit on one leaf")))
      return rc;
    fs_leafspine_params p = {(int32_t)leaves, (int32_t)spines, (int32_t)hpl,
                             hg, fg, (int32_t)lps, lat};
    rc = fs_topo_leafspine_servers(&p, &sv, out, &inner);
  } else if (strcmp(type, "fattree") == 0) {
    static const char *const keys[] = {"type", "k", "gbps", "link_gbps", "latency_ns",
                                       "inc", "cost", SERVER_KEYS, NULL};
    int64_t k, lat;
    double gbps;
    fs_server_params sv;
    if ((rc = fs__json_expect_object(c, obj, path, keys)) ||
        (rc = fs__json_int(c, obj, path, "k", 1, 0, 2, 128, &k)) ||
        (rc = get_gbps(c, obj, path, &gbps)) || (rc = get_latency(c, obj, path, &lat)) ||
        (rc = fs__topo_get_servers(c, obj, path, &sv)))
      return rc;
    if (k % 2) {
      char p[512];
      fs__json_path_key(p, sizeof(p), path, "k");
      return fs__json_fail(c, p, cJSON_GetObjectItemCaseSensitive(obj, "k"),
                           "must be even (a k-ary fat-tree has k/2 ports up and down)");
    }
    if ((rc = servers_divide(c, obj, path, &sv, k * k * k / 4, "the k^3/4 hosts",
                              "into whole servers")))
      return rc;
    rc = fs_topo_fattree_servers((int32_t)k, gbps, lat, &sv, out, &inner);
  } else {
    char p[512];
    fs__json_path_key(p, sizeof(p), path, "type");
    return fs__json_fail(c, p, cJSON_GetObjectItemCaseSensitive(obj, "type"),
                         "unknown topology type (expected star, leafspine, fattree, clos, railopt, "
                         "railonly, torus, ring, fullmesh, dragonfly, awgr, sirius, lotus, "
                         "sipml-ocs, sipml-ring, jupiter or file)");
  }
  if (rc) return builder_fail(c, path, rc, &inner);
  const char *inc;
  if ((rc = fs__json_str(c, obj, path, "inc", 0, "none", &inc))) goto fail;
  /* Without "inc" a file keeps the marks its nodes carry. */
  int has_inc = cJSON_GetObjectItemCaseSensitive(obj, "inc") != NULL;
  if (has_inc && fs_topo_mark_inc(*out, inc)) {
    char p[512];
    fs__json_path_key(p, sizeof(p), path, "inc");
    rc = fs__json_fail(c, p, cJSON_GetObjectItemCaseSensitive(obj, "inc"),
                       "must be \"none\", \"all\" or \"top\" (switches that aggregate)");
    goto fail;
  }
  if ((rc = fs__cost_from_json(c, cJSON_GetObjectItemCaseSensitive(obj, "cost"), path,
                                *out)))
    goto fail;
  if (strcmp(inc, "none") != 0) {
    size_t len = strlen((*out)->spec);
    snprintf((*out)->spec + len, sizeof((*out)->spec) - len, ",inc=%s", inc);
  }
  return 0;
fail:
  fs_topo_free(*out);
  *out = NULL;
  return rc;
}

int fs_topo_from_json_object(const struct cJSON *obj, const char *file, const char *path,
                             fs_topo **out, fs_err *err) {
  fs__jctx c = {file, err};
  return fs__topo_from_json(&c, obj, path, out);
}

int fs_topo_from_json_text(const char *text, const char *file, fs_topo **out,
                           fs_err *err) {
  fs__jctx c = {file, err};
  cJSON *root = NULL;
  int rc = fs__json_parse(&c, text, strlen(text), &root);
  if (rc) return rc;
  /* A scenario file holds its topology under "topology": accept both. */
  const cJSON *obj = root;
  const char *path = "$";
  if (cJSON_IsObject(root) && cJSON_GetObjectItemCaseSensitive(root, "topology") &&
      !cJSON_GetObjectItemCaseSensitive(root, "type")) {
    obj = cJSON_GetObjectItemCaseSensitive(root, "topology");
    path = "$.topology";
  }
  rc = fs__topo_from_json(&c, obj, path, out);
  cJSON_Delete(root);
  return rc;
}

/* "family:k=v,k=v" -> {"type": family, k: v, ...}. Values that parse fully as
 * numbers become numbers, anything else a string (the validator then says
 * which key wanted a number). */
/* Whether s is a number in JSON's grammar: -?int(.digits)?([eE][+-]?digits)?. */
static int json_number(const char *s) {
  if (*s == '-') s++;
  if (!isdigit((unsigned char)*s)) return 0;
  while (isdigit((unsigned char)*s)) s++;
  if (*s == '.') {
    if (!isdigit((unsigned char)*++s)) return 0;
    while (isdigit((unsigned char)*s)) s++;
  }
  if (*s == 'e' || *s == 'E') {
    if (*++s == '+' || *s == '-') s++;
    if (!isdigit((unsigned char)*s)) return 0;
    while (isdigit((unsigned char)*s)) s++;
  }
  return *s == '\0';
}

static int inline_to_json(const char *spec, const fs__jctx *c, cJSON **out) {
  cJSON *obj = cJSON_CreateObject();
  if (!obj) return fs_err_set(c->err, FS_ENOMEM, "out of memory");
  const char *colon = strchr(spec, ':');
  size_t flen = colon ? (size_t)(colon - spec) : strlen(spec);
  char fam[64];
  if (flen == 0 || flen >= sizeof(fam)) {
    cJSON_Delete(obj);
    return fs_err_set(c->err, FS_EINVAL,
                      "%s: expected FAMILY:key=value,... or a JSON file", c->file);
  }
  memcpy(fam, spec, flen);
  fam[flen] = '\0';
  cJSON_AddStringToObject(obj, "type", fam);
  const char *p = colon ? colon + 1 : spec + flen;
  while (*p) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char item[256];
    if (len >= sizeof(item)) {
      cJSON_Delete(obj);
      return fs_err_set(c->err, FS_EINVAL, "%s: an item is longer than %zu characters",
                        c->file, sizeof(item) - 1);
    }
    memcpy(item, p, len);
    item[len] = '\0';
    char *eq = strchr(item, '=');
    if (!eq || eq == item) {
      cJSON_Delete(obj);
      return fs_err_set(c->err, FS_EINVAL, "%s: '%s': expected key=value", c->file,
                        item);
    }
    *eq = '\0';
    const char *val = eq + 1;
    if (cJSON_GetObjectItemCaseSensitive(obj, item)) {
      cJSON_Delete(obj);
      return fs_err_set(c->err, FS_EINVAL, "%s: $.%s: duplicate key", c->file, item);
    }
    /* A number only as JSON writes one (decimal, no hex, inf or leading
     * '+'); an integer key then also checks the text (json.c): k=0x10 or
     * hosts=1e1 is not an integer. Anything else is a string. */
    if (json_number(val)) {
      cJSON *num = cJSON_AddNumberToObject(obj, item, strtod(val, NULL));
      if (num && !(num->valuestring = strdup(val))) num = NULL;
      if (!num) {
        cJSON_Delete(obj);
        return fs_err_set(c->err, FS_ENOMEM, "out of memory");
      }
    } else {
      cJSON_AddStringToObject(obj, item, val);
    }
    p += len;
    if (*p == ',') p++;
  }
  *out = obj;
  return 0;
}

int fs_topo_from_spec(const char *spec, fs_topo **out, fs_err *err) {
  FILE *f = fopen(spec, "rb");
  if (f) {
    fclose(f);
    char *text;
    size_t len;
    int rc = fs__read_file(spec, &text, &len, err);
    if (rc) return rc;
    rc = fs_topo_from_json_text(text, spec, out, err);
    free(text);
    return rc;
  }
  char label[300];
  snprintf(label, sizeof(label), "topology '%.250s'", spec);
  fs__jctx c = {label, err};
  /* FAMILY:... is an inline form even when a value holds a path
   * (file:path=dir/graph.json); anything else with a '/' or ".json" was
   * meant as a file */
  size_t fam = strspn(spec, "abcdefghijklmnopqrstuvwxyz_-");
  int is_inline = fam > 0 && spec[fam] == ':';
  if (!is_inline && (strchr(spec, '/') || strstr(spec, ".json")))
    return fs_err_set(err, FS_EIO, "%s: no such file", spec);
  int bad = fs__utf8_bad(spec); /* (the CLI escapes the byte in its message) */
  if (bad >= 0)
    return fs_err_set(err, FS_EINVAL, "%s: byte 0x%02X at %d is not UTF-8", label,
                      (unsigned char)spec[bad], bad + 1);
  cJSON *obj = NULL;
  int rc = inline_to_json(spec, &c, &obj);
  if (rc) return rc;
  rc = fs__topo_from_json(&c, obj, "$", out);
  cJSON_Delete(obj);
  return rc;
}
