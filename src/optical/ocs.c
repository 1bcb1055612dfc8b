/* The OCS device and the scheduling view's inputs (ocs.h): the duplex port
 * matching of a physical switch, partial-permutation checks, traffic phases
 * from patterns and the strict traffic-file parser. Data: one peer array per
 * switch, n*n int64 per phase; every check is O(P) or O(n), parsing O(n^2). */
#include "fabricsim/ocs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "../base/json.h"

/* ---- physical switch ---------------------------------------------------- */

int fs_ocs_init(fs_ocs *o, int32_t n_ports, double gbps, double reconfig_s, fs_err *err) {
  memset(o, 0, sizeof(*o));
  if (n_ports < 2) return fs_err_set(err, FS_EINVAL, "ocs: needs at least 2 ports, got %d", n_ports);
  if (!(gbps > 0) || !isfinite(gbps))
    return fs_err_set(err, FS_EINVAL, "ocs: circuit rate must be > 0 Gb/s, got %g", gbps);
  if (!(reconfig_s >= 0) || !isfinite(reconfig_s))
    return fs_err_set(err, FS_EINVAL, "ocs: reconfiguration delay must be >= 0 s, got %g",
                      reconfig_s);
  o->peer = fs__malloc((size_t)n_ports, sizeof(*o->peer));
  if (!o->peer) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int32_t p = 0; p < n_ports; p++) o->peer[p] = -1;
  o->n_ports = n_ports;
  o->gbps = gbps;
  o->reconfig_s = reconfig_s;
  return 0;
}

void fs_ocs_free(fs_ocs *o) {
  if (!o) return;
  free(o->peer);
  memset(o, 0, sizeof(*o));
}

int fs_ocs_connect(fs_ocs *o, int32_t a, int32_t b, fs_err *err) {
  if (a < 0 || a >= o->n_ports || b < 0 || b >= o->n_ports)
    return fs_err_set(err, FS_EINVAL, "ocs: circuit %d-%d: port out of range [0, %d)", a, b,
                      o->n_ports);
  if (a == b) return fs_err_set(err, FS_EINVAL, "ocs: circuit from port %d to itself", a);
  if (o->peer[a] >= 0)
    return fs_err_set(err, FS_EINVAL,
                      "ocs: circuit %d-%d: port %d already has a circuit to port %d", a, b, a,
                      o->peer[a]);
  if (o->peer[b] >= 0)
    return fs_err_set(err, FS_EINVAL,
                      "ocs: circuit %d-%d: port %d already has a circuit to port %d", a, b, b,
                      o->peer[b]);
  o->peer[a] = b;
  o->peer[b] = a;
  return 0;
}

int fs_ocs_disconnect(fs_ocs *o, int32_t a, fs_err *err) {
  if (a < 0 || a >= o->n_ports)
    return fs_err_set(err, FS_EINVAL, "ocs: port %d out of range [0, %d)", a, o->n_ports);
  int32_t b = o->peer[a];
  if (b >= 0) {
    o->peer[b] = -1;
    o->peer[a] = -1;
  }
  return 0;
}

int fs_ocs_apply(fs_ocs *o, const int32_t *peer, int32_t *n_changed, double *dark_s,
                 fs_err *err) {
  /* Validate everything before touching o, so a refused configuration
   * leaves the switch as it was. */
  for (int32_t a = 0; a < o->n_ports; a++) {
    int32_t b = peer[a];
    if (b == -1) continue;
    if (b < 0 || b >= o->n_ports)
      return fs_err_set(err, FS_EINVAL, "ocs: port %d: peer %d out of range [0, %d)", a, b,
                        o->n_ports);
    if (b == a) return fs_err_set(err, FS_EINVAL, "ocs: circuit from port %d to itself", a);
    if (peer[b] != a)
      return fs_err_set(err, FS_EINVAL,
                        "ocs: port %d would get two circuits (to ports %d and %d)", b, a,
                        peer[b]);
  }
  int32_t changed = 0;
  for (int32_t a = 0; a < o->n_ports; a++) {
    /* count each circuit once, at its lower port */
    if (o->peer[a] > a && peer[a] != o->peer[a]) changed++;
    if (peer[a] > a && o->peer[a] != peer[a]) changed++;
  }
  memcpy(o->peer, peer, (size_t)o->n_ports * sizeof(*peer));
  if (n_changed) *n_changed = changed;
  if (dark_s) *dark_s = changed ? o->reconfig_s : 0.0;
  return 0;
}

/* ---- partial permutations ----------------------------------------------- */

int fs_ocs_config_check(int32_t n, const int32_t *dst, fs_err *err) {
  int32_t *from = fs__malloc((size_t)(n > 0 ? n : 1), sizeof(*from));
  if (!from) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int32_t j = 0; j < n; j++) from[j] = -1;
  int rc = 0;
  for (int32_t i = 0; i < n && !rc; i++) {
    int32_t j = dst[i];
    if (j == -1) continue;
    if (j < 0 || j >= n)
      rc = fs_err_set(err, FS_EINVAL, "transmitter %d: receiver %d out of range [0, %d)", i, j,
                      n);
    else if (j == i)
      rc = fs_err_set(err, FS_EINVAL, "transmitter %d: circuit to its own receiver", i);
    else if (from[j] >= 0)
      rc = fs_err_set(err, FS_EINVAL,
                      "receiver %d would get two circuits (from transmitters %d and %d)", j,
                      from[j], i);
    else
      from[j] = i;
  }
  free(from);
  return rc;
}

int fs_ocs_config_from_pairs(int32_t n, const int32_t *pairs, int32_t n_circ, int32_t *dst,
                             fs_err *err) {
  for (int32_t i = 0; i < n; i++) dst[i] = -1;
  for (int32_t k = 0; k < n_circ; k++) {
    int32_t a = pairs[2 * k], b = pairs[2 * k + 1];
    if (a < 0 || a >= n || b < 0 || b >= n)
      return fs_err_set(err, FS_EINVAL, "circuit %d (%d -> %d): node out of range [0, %d)", k, a,
                        b, n);
    if (a == b) return fs_err_set(err, FS_EINVAL, "circuit %d: node %d to itself", k, a);
    if (dst[a] >= 0)
      return fs_err_set(err, FS_EINVAL,
                        "circuit %d (%d -> %d): transmitter %d already has a circuit to %d", k,
                        a, b, a, dst[a]);
    for (int32_t i = 0; i < n; i++)
      if (dst[i] == b)
        return fs_err_set(err, FS_EINVAL,
                          "circuit %d (%d -> %d): receiver %d already has a circuit from %d", k,
                          a, b, b, i);
    dst[a] = b;
  }
  return 0;
}

/* ---- traffic ------------------------------------------------------------ */

void fs_ocs_traffic_free(fs_ocs_traffic *tr) {
  if (!tr) return;
  for (int32_t k = 0; k < tr->n_phases; k++) free(tr->phases[k].bytes);
  free(tr->phases);
  memset(tr, 0, sizeof(*tr));
}

/* Appends a phase that takes ownership of bytes (freed on failure). */
static int add_phase(fs_ocs_traffic *tr, const char *name, int64_t *bytes, fs_err *err) {
  fs_ocs_phase *ph = realloc(tr->phases, (size_t)(tr->n_phases + 1) * sizeof(*ph));
  if (!ph) {
    free(bytes);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  tr->phases = ph;
  fs_ocs_phase *p = &tr->phases[tr->n_phases++];
  snprintf(p->name, sizeof(p->name), "%s", name);
  p->bytes = bytes;
  return 0;
}

/* Seeded Fisher-Yates shuffle of a[0..n). */
static void shuffle(fs__rng *r, int32_t *a, int32_t n) {
  for (int32_t i = n - 1; i > 0; i--) {
    int32_t j = (int32_t)fs__rng_below(r, (uint64_t)i + 1);
    int32_t t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

int fs_ocs_traffic_add_pattern(fs_ocs_traffic *tr, const char *name, const char *pattern,
                               int64_t bytes, uint64_t seed, fs_err *err) {
  int32_t n = tr->n;
  if (n < 2 || n > FS_OCS_MAX_NODES)
    return fs_err_set(err, FS_EINVAL, "traffic: nodes must be in [2, %d], got %d",
                      FS_OCS_MAX_NODES, n);
  if (bytes < 0 || bytes > FS_OCS_MAX_BYTES)
    return fs_err_set(err, FS_EINVAL, "traffic: bytes must be in [0, 2^50], got %lld",
                      (long long)bytes);
  int64_t *m = fs__calloc((size_t)n * (size_t)n, sizeof(*m));
  int32_t *perm = fs__malloc((size_t)n, sizeof(*perm));
  if (!m || !perm) {
    free(m);
    free(perm);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  fs__rng r;
  fs__rng_seed(&r, seed);
  int ok = 1;
  if (strcmp(pattern, "alltoall") == 0) {
    for (int32_t i = 0; i < n; i++)
      for (int32_t j = 0; j < n; j++)
        if (i != j) m[(size_t)i * n + j] = bytes / (n - 1);
  } else if (strcmp(pattern, "ring") == 0) {
    for (int32_t i = 0; i < n; i++) m[(size_t)i * n + (i + 1) % n] = bytes;
  } else if (strcmp(pattern, "pipeline") == 0) {
    for (int32_t i = 0; i + 1 < n; i++) m[(size_t)i * n + i + 1] = bytes;
  } else if (strcmp(pattern, "permutation") == 0) {
    /* A random cyclic order is a derangement: i -> next in the cycle. */
    for (int32_t i = 0; i < n; i++) perm[i] = i;
    shuffle(&r, perm, n);
    for (int32_t k = 0; k < n; k++) m[(size_t)perm[k] * n + perm[(k + 1) % n]] = bytes;
  } else if (strcmp(pattern, "random") == 0) {
    uint64_t hi = (uint64_t)(2 * (bytes / (n - 1))) + 1;
    for (int32_t i = 0; i < n; i++)
      for (int32_t j = 0; j < n; j++)
        if (i != j) m[(size_t)i * n + j] = (int64_t)fs__rng_below(&r, hi);
  } else if (strcmp(pattern, "skewed") == 0) {
    int32_t big = n - 1 < 4 ? n - 1 : 4, small = n - 1 - big;
    for (int32_t i = 0; i < n; i++) {
      int32_t k = 0;
      for (int32_t j = 0; j < n; j++)
        if (j != i) perm[k++] = j;
      shuffle(&r, perm, n - 1);
      int64_t big_b = small ? bytes / 10 * 7 : bytes;
      for (int32_t x = 0; x < big; x++) m[(size_t)i * n + perm[x]] = big_b / big;
      for (int32_t x = big; x < n - 1; x++) m[(size_t)i * n + perm[x]] = (bytes - big_b) / small;
    }
  } else {
    ok = 0;
  }
  free(perm);
  if (!ok) {
    free(m);
    return fs_err_set(err, FS_EINVAL,
                      "traffic: unknown pattern '%s' (expected alltoall, ring, pipeline, "
                      "permutation, random or skewed)",
                      pattern);
  }
  return add_phase(tr, name, m, err);
}

/* ---- traffic file ------------------------------------------------------- */

static int parse_matrix(const fs__jctx *c, const cJSON *mat, const char *path, int32_t n,
                        int64_t *m) {
  if (!cJSON_IsArray(mat) || cJSON_GetArraySize(mat) != n)
    return fs__json_fail(c, path, mat, "must be an array of %d rows", n);
  int32_t i = 0;
  for (const cJSON *row = mat->child; row; row = row->next, i++) {
    char rp[96];
    fs__json_path_idx(rp, sizeof(rp), path, (size_t)i);
    if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != n)
      return fs__json_fail(c, rp, row, "must be an array of %d byte counts", n);
    int32_t j = 0;
    for (const cJSON *v = row->child; v; v = v->next, j++) {
      char ep[112];
      fs__json_path_idx(ep, sizeof(ep), rp, (size_t)j);
      int64_t x;
      int rc = fs__json_int_value(c, v, ep, 0, FS_OCS_MAX_BYTES, &x);
      if (rc) return rc;
      if (i == j && x != 0)
        return fs__json_fail(c, ep, v, "diagonal must be 0 (a node does not send to itself)");
      m[(size_t)i * n + j] = x;
    }
  }
  return 0;
}

/* One phase: an object holding either "matrix" or "pattern" (+ "bytes",
 * "seed"), and in a "phases" entry optionally "name". */
static int parse_phase(const fs__jctx *c, const cJSON *o, const char *path, int top,
                       int32_t idx, fs_ocs_traffic *tr) {
  static const char *const top_keys[] = {"nodes", "matrix", "pattern", "bytes", "seed", NULL};
  static const char *const ph_keys[] = {"name", "matrix", "pattern", "bytes", "seed", NULL};
  int rc = fs__json_expect_object(c, o, path, top ? top_keys : ph_keys);
  if (rc) return rc;
  char defname[48];
  snprintf(defname, sizeof(defname), "phase%d", idx);
  const char *name = defname;
  if (!top && (rc = fs__json_str(c, o, path, "name", 0, defname, &name))) return rc;
  if (strlen(name) >= sizeof(tr->phases[0].name)) {
    char p2[96];
    fs__json_path_key(p2, sizeof(p2), path, "name");
    return fs__json_fail(c, p2, cJSON_GetObjectItemCaseSensitive(o, "name"),
                         "must be at most %d characters", (int)sizeof(tr->phases[0].name) - 1);
  }
  const cJSON *mat = cJSON_GetObjectItemCaseSensitive(o, "matrix");
  const cJSON *pat = cJSON_GetObjectItemCaseSensitive(o, "pattern");
  if (!!mat == !!pat)
    return fs__json_fail(c, path, NULL, "needs exactly one of \"matrix\" and \"pattern\"");
  char kp[96];
  if (mat) {
    if (cJSON_GetObjectItemCaseSensitive(o, "bytes") || cJSON_GetObjectItemCaseSensitive(o, "seed"))
      return fs__json_fail(c, path, NULL, "\"bytes\" and \"seed\" go with \"pattern\", not \"matrix\"");
    int64_t *m = fs__calloc((size_t)tr->n * (size_t)tr->n, sizeof(*m));
    if (!m) return fs_err_set(c->err, FS_ENOMEM, "out of memory");
    fs__json_path_key(kp, sizeof(kp), path, "matrix");
    if ((rc = parse_matrix(c, mat, kp, tr->n, m))) {
      free(m);
      return rc;
    }
    return add_phase(tr, name, m, c->err);
  }
  const char *ps;
  int64_t bytes, seed;
  if ((rc = fs__json_str(c, o, path, "pattern", 1, NULL, &ps)) ||
      (rc = fs__json_int(c, o, path, "bytes", 1, 0, 0, FS_OCS_MAX_BYTES, &bytes)) ||
      (rc = fs__json_int(c, o, path, "seed", 0, 1, 0, FS_JSON_INT_MAX, &seed)))
    return rc;
  fs_err e2 = {0, ""};
  rc = fs_ocs_traffic_add_pattern(tr, name, ps, bytes, (uint64_t)seed, &e2);
  if (rc == FS_EINVAL) {
    fs__json_path_key(kp, sizeof(kp), path, "pattern");
    return fs__json_fail(c, kp, pat,
                         "must be alltoall, ring, pipeline, permutation, random or skewed");
  }
  if (rc) *c->err = e2;
  return rc;
}

int fs_ocs_matrix_from_json(const char *text, const char *file, fs_ocs_traffic *out,
                            fs_err *err) {
  memset(out, 0, sizeof(*out));
  fs__jctx c = {file, err};
  cJSON *root = NULL;
  int rc = fs__json_parse(&c, text, strlen(text), &root);
  if (rc) return rc;
  int64_t n;
  if (!cJSON_IsObject(root)) {
    rc = fs__json_fail(&c, "$", root, "must be an object");
    goto out;
  }
  if ((rc = fs__json_int(&c, root, "$", "nodes", 1, 0, 2, FS_OCS_MAX_NODES, &n))) goto out;
  out->n = (int32_t)n;
  const cJSON *phases = cJSON_GetObjectItemCaseSensitive(root, "phases");
  if (!phases) {
    rc = parse_phase(&c, root, "$", 1, 0, out);
    if (!rc) snprintf(out->phases[0].name, sizeof(out->phases[0].name), "matrix");
    goto out;
  }
  static const char *const keys[] = {"nodes", "phases", NULL};
  if ((rc = fs__json_expect_object(&c, root, "$", keys))) goto out;
  if (!cJSON_IsArray(phases) || cJSON_GetArraySize(phases) < 1 ||
      cJSON_GetArraySize(phases) > 1000) {
    rc = fs__json_fail(&c, "$.phases", phases, "must be an array of 1 to 1000 phases");
    goto out;
  }
  int32_t k = 0;
  for (const cJSON *ph = phases->child; ph; ph = ph->next, k++) {
    char path[48];
    fs__json_path_idx(path, sizeof(path), "$.phases", (size_t)k);
    if ((rc = parse_phase(&c, ph, path, 0, k, out))) goto out;
  }
out:
  cJSON_Delete(root);
  if (rc) fs_ocs_traffic_free(out);
  return rc;
}

int fs_ocs_matrix_from_file(const char *path, fs_ocs_traffic *out, fs_err *err) {
  memset(out, 0, sizeof(*out));
  char *text;
  size_t len;
  int rc = fs__read_file(path, &text, &len, err);
  if (rc) return rc;
  rc = fs_ocs_matrix_from_json(text, path, out, err);
  free(text);
  return rc;
}
