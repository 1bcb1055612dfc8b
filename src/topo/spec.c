/* Topology specs: a JSON object {"type": family, ...} (from a file or inside
 * a scenario) or the inline "family:key=value,..." form, which is turned into
 * the same JSON object so both share one validator and one set of messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "internal.h"

#define DEFAULT_GBPS 100.0
#define DEFAULT_LATENCY_NS 1000
/* Keys of the GPU servers, accepted by every family. */
#define SERVER_KEYS \
  "gpus_per_node", "nvlink_gbps", "nvlink_latency_ns", "pcie_gbps", "pcie_latency_ns"

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
static int get_servers(const fs__jctx *c, const cJSON *obj, const char *path,
                       fs_server_params *sv) {
  fs_server_params d = fs_server_defaults(1);
  int64_t g;
  int rc;
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
                                     "pcie_latency_ns"};
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

int fs__topo_from_json(const fs__jctx *c, const cJSON *obj, const char *path,
                       fs_topo **out) {
  if (!cJSON_IsObject(obj)) return fs__json_fail(c, path, obj, "must be an object");
  const char *type;
  int rc = fs__json_str(c, obj, path, "type", 1, NULL, &type);
  if (rc) return rc;
  fs_err inner = {0, ""};
  if (strcmp(type, "star") == 0) {
    static const char *const keys[] = {"type", "hosts", "gbps", "link_gbps", "latency_ns",
                                       "inc", SERVER_KEYS, NULL};
    int64_t hosts, lat;
    double gbps;
    fs_server_params sv;
    if ((rc = fs__json_expect_object(c, obj, path, keys)) ||
        (rc = fs__json_int(c, obj, path, "hosts", 1, 0, 1, 1 << 22, &hosts)) ||
        (rc = get_gbps(c, obj, path, &gbps)) || (rc = get_latency(c, obj, path, &lat)) ||
        (rc = get_servers(c, obj, path, &sv)) ||
        (rc = servers_divide(c, obj, path, &sv, hosts, "hosts", "into whole servers")))
      return rc;
    rc = fs_topo_star_servers((int32_t)hosts, gbps, lat, &sv, out, &inner);
  } else if (strcmp(type, "leafspine") == 0) {
    static const char *const keys[] = {"type", "leaves", "spines", "hosts_per_leaf",
                                       "host_gbps", "fabric_gbps", "links_per_spine",
                                       "latency_ns", "inc", SERVER_KEYS, NULL};
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
        (rc = get_latency(c, obj, path, &lat)) || (rc = get_servers(c, obj, path, &sv)) ||
        (rc = servers_divide(c, obj, path, &sv, hpl, "hosts_per_leaf",
                             "so a server's NICs sit on one leaf")))
      return rc;
    fs_leafspine_params p = {(int32_t)leaves, (int32_t)spines, (int32_t)hpl,
                             hg, fg, (int32_t)lps, lat};
    rc = fs_topo_leafspine_servers(&p, &sv, out, &inner);
  } else if (strcmp(type, "fattree") == 0) {
    static const char *const keys[] = {"type", "k", "gbps", "link_gbps", "latency_ns",
                                       "inc", SERVER_KEYS, NULL};
    int64_t k, lat;
    double gbps;
    fs_server_params sv;
    if ((rc = fs__json_expect_object(c, obj, path, keys)) ||
        (rc = fs__json_int(c, obj, path, "k", 1, 0, 2, 128, &k)) ||
        (rc = get_gbps(c, obj, path, &gbps)) || (rc = get_latency(c, obj, path, &lat)) ||
        (rc = get_servers(c, obj, path, &sv)))
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
                         "unknown topology type (expected star, leafspine or fattree)");
  }
  if (rc) return builder_fail(c, path, rc, &inner);
  const char *inc;
  if ((rc = fs__json_str(c, obj, path, "inc", 0, "none", &inc))) goto fail;
  if (fs_topo_mark_inc(*out, inc)) {
    char p[512];
    fs__json_path_key(p, sizeof(p), path, "inc");
    rc = fs__json_fail(c, p, cJSON_GetObjectItemCaseSensitive(obj, "inc"),
                       "must be \"none\", \"all\" or \"top\" (switches that aggregate)");
    goto fail;
  }
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
    char *end;
    double d = strtod(val, &end);
    if (*val && *end == '\0')
      cJSON_AddNumberToObject(obj, item, d);
    else
      cJSON_AddStringToObject(obj, item, val);
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
  if (strchr(spec, '/') || strstr(spec, ".json"))
    return fs_err_set(err, FS_EIO, "%s: no such file", spec);
  cJSON *obj = NULL;
  int rc = inline_to_json(spec, &c, &obj);
  if (rc) return rc;
  rc = fs__topo_from_json(&c, obj, "$", out);
  cJSON_Delete(obj);
  return rc;
}
