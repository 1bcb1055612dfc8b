/* TPU v4 style pods (docs/model-tpu.md): the OCS port bookkeeping of a pod
 * of 4x4x4 cubes, slices configured as circuits (torus or twisted torus),
 * and the chip-level graph of a slice read back from those circuits.
 * Data: a cube state array and one peer array of 48 x ports entries.
 * Slice add/remove: O(48 * cubes); slice graph: O(chips). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/topo.h"
#include "fabricsim/tpu.h"

/* A builder step that fails only for memory: to the function's oom label. */
#define TRY(expr)                    \
  do {                               \
    if ((rc = (expr)) < 0) goto oom; \
  } while (0)

enum { SIDE = FS_TPU_CUBE_SIDE, FACE = FS_TPU_FACE_LINKS, NOCS = FS_TPU_N_OCS };

void fs_tpu_defaults(fs_tpu_params *p) {
  p->cubes = 64;            /* Jouppi et al. 2023: 4096 chips = 64 cubes */
  p->ocs_ports = 136;       /* Palomar OCS, 136 ports (128 used at 64 cubes) */
  p->ici_gbps = 400;        /* 50 GB/s per ICI link and direction */
  p->ici_latency_ns = 1000; /* the repo-wide default link latency (not published) */
  p->reconfig_s = 10e-3;    /* 3-D MEMS mirror switching, order of 10 ms */
}

/* ---- shapes ---- */

int fs_tpu_shape_parse(const char *s, int32_t dims[3], fs_err *err) {
  int32_t d[3];
  const char *q = s;
  for (int i = 0; i < 3; i++) {
    char *end;
    if (*q < '0' || *q > '9') goto bad;
    long v = strtol(q, &end, 10);
    if (v < 1 || v > 1000000) goto bad;
    d[i] = (int32_t)v;
    q = end;
    if (i < 2) {
      if (*q != 'x' && *q != 'X') goto bad;
      q++;
    }
  }
  if (*q) goto bad;
  memcpy(dims, d, sizeof(d));
  return 0;
bad:;
  char buf[96];
  return fs_err_set(err, FS_EINVAL, "shape '%s': expected XxYxZ, three positive integers",
                    fs__escape(buf, sizeof(buf), s));
}

void fs_tpu_shape_canon(const int32_t dims[3], int32_t out[3]) {
  int32_t a = dims[0], b = dims[1], c = dims[2], t;
  if (a < b) t = a, a = b, b = t;
  if (b < c) t = b, b = c, c = t;
  if (a < b) t = a, a = b, b = t;
  out[0] = a;
  out[1] = b;
  out[2] = c;
}

/* Twisted shapes in canonical order: 0 none, 1 = 2k x k x k (the two short
 * dimensions' wraps shift by k along dim 0), 2 = 2k x 2k x k (dim 2's wrap
 * shifts by k along dims 0 and 1). */
static int twist_kind(const int32_t c[3]) {
  if (c[0] == 2 * c[1] && c[1] == c[2]) return 1;
  if (c[0] == c[1] && c[1] == 2 * c[2]) return 2;
  return 0;
}

int fs_tpu_shape_check(const int32_t dims[3], int twisted, fs_err *err) {
  for (int i = 0; i < 3; i++)
    if (dims[i] < SIDE || dims[i] % SIDE)
      return fs_err_set(err, FS_EINVAL,
                        "shape %dx%dx%d: every dimension must be a positive multiple of %d "
                        "(whole 4x4x4 cubes), got %d",
                        dims[0], dims[1], dims[2], SIDE, dims[i]);
  int32_t c[3];
  fs_tpu_shape_canon(dims, c);
  if (twisted && !twist_kind(c))
    return fs_err_set(err, FS_EINVAL,
                      "shape %dx%dx%d: a twisted torus needs k x k x 2k or k x 2k x 2k",
                      dims[0], dims[1], dims[2]);
  return 0;
}

int32_t fs_tpu_torus_diameter(const int32_t dims[3]) {
  return dims[0] / 2 + dims[1] / 2 + dims[2] / 2;
}

int64_t fs_tpu_torus_bisection_links(const int32_t dims[3]) {
  int32_t c[3];
  fs_tpu_shape_canon(dims, c);
  return 2 * (int64_t)c[0] * c[1] * c[2] / c[0];
}

/* ---- the pod ---- */

int fs_tpu_pod_new(const fs_tpu_params *p, fs_tpu_pod **out, fs_err *err) {
  if (p->ocs_ports < 2 || p->ocs_ports > 100000)
    return fs_err_set(err, FS_EINVAL, "tpu: ocs_ports must be in [2, 100000], got %d",
                      p->ocs_ports);
  if (p->cubes < 1 || p->cubes > p->ocs_ports / 2)
    return fs_err_set(err, FS_EINVAL,
                      "tpu: cubes must be in [1, %d] (each cube takes 2 ports of every one "
                      "of the %d OCSes of %d ports), got %d",
                      p->ocs_ports / 2, NOCS, p->ocs_ports, p->cubes);
  if (!(p->ici_gbps > 0) || !(p->ici_gbps <= 1e7))
    return fs_err_set(err, FS_EINVAL, "tpu: ici_gbps must be in (0, 1e7], got %g", p->ici_gbps);
  if (p->ici_latency_ns < 0 || p->ici_latency_ns > 1000000000000LL)
    return fs_err_set(err, FS_EINVAL, "tpu: ici_latency_ns must be in [0, 1e12], got %lld",
                      (long long)p->ici_latency_ns);
  if (!(p->reconfig_s >= 0) || !isfinite(p->reconfig_s))
    return fs_err_set(err, FS_EINVAL, "tpu: reconfig_s must be >= 0 and finite, got %g",
                      p->reconfig_s);
  fs_tpu_pod *pod = calloc(1, sizeof(*pod));
  if (!pod) return fs_err_set(err, FS_ENOMEM, "out of memory");
  pod->p = *p;
  pod->cube_state = fs__malloc((size_t)p->cubes, sizeof(*pod->cube_state));
  pod->peer = fs__malloc((size_t)NOCS * (size_t)p->ocs_ports, sizeof(*pod->peer));
  if (!pod->cube_state || !pod->peer) {
    fs_tpu_pod_free(pod);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  for (int32_t c = 0; c < p->cubes; c++) pod->cube_state[c] = FS_TPU_FREE;
  for (int64_t q = 0; q < (int64_t)NOCS * p->ocs_ports; q++) pod->peer[q] = -1;
  *out = pod;
  return 0;
}

void fs_tpu_pod_free(fs_tpu_pod *pod) {
  if (!pod) return;
  FS__FREE_ALL(pod->cube_state, pod->peer, pod);
}

int fs_tpu_pod_set_busy(fs_tpu_pod *pod, int32_t cube, fs_err *err) {
  if (cube < 0 || cube >= pod->p.cubes)
    return fs_err_set(err, FS_EINVAL, "busy cube %d: out of range [0, %d)", cube, pod->p.cubes);
  if (pod->cube_state[cube] != FS_TPU_FREE)
    return fs_err_set(err, FS_EINVAL, "busy cube %d: not free (listed twice?)", cube);
  pod->cube_state[cube] = FS_TPU_BUSY;
  return 0;
}

int32_t fs_tpu_pod_free_cubes(const fs_tpu_pod *pod) {
  int32_t n = 0;
  for (int32_t c = 0; c < pod->p.cubes; c++) n += pod->cube_state[c] == FS_TPU_FREE;
  return n;
}

int fs_tpu_pod_set_busy_list(fs_tpu_pod *pod, const char *list, fs_err *err) {
  const char *q = list;
  if (!*q) return fs_err_set(err, FS_EINVAL, "--busy: empty list");
  while (*q) {
    char *end;
    errno = 0;
    if (*q < '0' || *q > '9') goto bad;
    long v = strtol(q, &end, 10);
    if (errno || v > 1000000) goto bad;
    int rc = fs_tpu_pod_set_busy(pod, (int32_t)v, err);
    if (rc) return rc;
    q = end;
    if (*q == ',') {
      q++;
      if (!*q) goto bad;
    } else if (*q) {
      goto bad;
    }
  }
  return 0;
bad:;
  char buf[96];
  return fs_err_set(err, FS_EINVAL, "--busy '%s': expected comma-separated cube ids",
                    fs__escape(buf, sizeof(buf), list));
}

int fs_tpu_pod_busy_random(fs_tpu_pod *pod, int32_t k, uint64_t seed, fs_err *err) {
  int32_t nf = fs_tpu_pod_free_cubes(pod);
  if (k < 0 || k > nf)
    return fs_err_set(err, FS_EINVAL, "busy-random %d: must be in [0, %d] (free cubes)", k, nf);
  int32_t *f = fs__malloc((size_t)nf + 1, sizeof(*f));
  if (!f) return fs_err_set(err, FS_ENOMEM, "out of memory");
  nf = 0;
  for (int32_t c = 0; c < pod->p.cubes; c++)
    if (pod->cube_state[c] == FS_TPU_FREE) f[nf++] = c;
  fs__rng r;
  fs__rng_seed(&r, seed);
  /* Partial Fisher-Yates: the first k entries are a uniform k-subset. */
  for (int32_t i = 0; i < k; i++) {
    int32_t j = i + (int32_t)fs__rng_below(&r, (uint64_t)(nf - i));
    int32_t t = f[i];
    f[i] = f[j];
    f[j] = t;
    pod->cube_state[f[i]] = FS_TPU_BUSY;
  }
  free(f);
  return 0;
}

/* Ports: "+" face of cube c is port c, "-" face port cubes + c. */
static int32_t plus_port(const fs_tpu_pod *pod, int32_t c) {
  (void)pod;
  return c;
}
static int32_t minus_port(const fs_tpu_pod *pod, int32_t c) {
  return pod->p.cubes + c;
}

int fs_tpu_pod_check(const fs_tpu_pod *pod, fs_err *err) {
  int32_t P = pod->p.ocs_ports, C = pod->p.cubes;
  int64_t ends = 0;
  for (int32_t o = 0; o < NOCS; o++) {
    const int32_t *pe = pod->peer + (int64_t)o * P;
    for (int32_t q = 0; q < P; q++) {
      int32_t r = pe[q];
      if (r == -1) continue;
      if (r < 0 || r >= P || r == q || pe[r] != q)
        return fs_err_set(err, FS_EINTERNAL,
                          "OCS %d: port %d -> %d is not one circuit of two distinct ports "
                          "(port %d -> %d)",
                          o, q, r, r, r >= 0 && r < P ? pe[r] : -2);
      if (q >= 2 * C || r >= 2 * C || (q < C) == (r < C))
        return fs_err_set(err, FS_EINTERNAL,
                          "OCS %d: circuit %d-%d does not join a + face to a - face", o, q, r);
      int32_t ca = q < C ? q : q - C, cb = r < C ? r : r - C;
      int32_t sa = pod->cube_state[ca], sb = pod->cube_state[cb];
      if (sa < 0 || sa != sb)
        return fs_err_set(err, FS_EINTERNAL,
                          "OCS %d: circuit %d-%d joins cubes %d and %d not of one slice", o, q,
                          r, ca, cb);
      ends++;
    }
  }
  if (ends != 2 * pod->circuits)
    return fs_err_set(err, FS_EINTERNAL, "circuit count %lld, but %lld ports in circuits",
                      (long long)pod->circuits, (long long)ends);
  return 0;
}

/* ---- slices ---- */

void fs_tpu_slice_clear(fs_tpu_slice *s) {
  if (!s) return;
  free(s->cubes);
  memset(s, 0, sizeof(*s));
}

/* The slice cube that the "+" face of slice cube (i[0], i[1], i[2]) meets
 * along dimension d: the + neighbour, whose wrap-around is shifted on a
 * twisted slice (by k chips = k/4 cubes along the long dimension(s)). */
static int32_t cube_neighbour(const fs_tpu_slice *s, const int32_t i[3], int d) {
  const int32_t *cd = s->cdims;
  int32_t j[3] = {i[0], i[1], i[2]};
  j[d] = i[d] + 1;
  if (j[d] == cd[d]) {
    j[d] = 0;
    int kind = s->twisted ? twist_kind(s->dims) : 0;
    int32_t shift = s->dims[2] / SIDE; /* k in cubes: dims[2] is always k */
    if (kind == 1 && d >= 1) j[0] = (j[0] + shift) % cd[0];
    if (kind == 2 && d == 2) {
      j[0] = (j[0] + shift) % cd[0];
      j[1] = (j[1] + shift) % cd[1];
    }
  }
  return (j[0] * cd[1] + j[1]) * cd[2] + j[2];
}

int fs_tpu_slice_add(fs_tpu_pod *pod, const int32_t dims[3], int twisted, const int32_t *cubes,
                     fs_tpu_slice *out, fs_err *err) {
  memset(out, 0, sizeof(*out));
  int rc = fs_tpu_shape_check(dims, twisted, err);
  if (rc) return rc;
  fs_tpu_slice s;
  memset(&s, 0, sizeof(s));
  fs_tpu_shape_canon(dims, s.dims);
  s.twisted = twisted ? 1 : 0;
  int64_t n = 1;
  for (int d = 0; d < 3; d++) {
    s.cdims[d] = s.dims[d] / SIDE;
    n *= s.cdims[d];
  }
  int32_t C = pod->p.cubes, P = pod->p.ocs_ports;
  if (n > C)
    return fs_err_set(err, FS_EINVAL, "shape %dx%dx%d needs %lld cubes, the pod has %d",
                      dims[0], dims[1], dims[2], (long long)n, C);
  s.n_cubes = (int32_t)n;
  for (int32_t a = 0; a < s.n_cubes; a++) {
    int32_t c = cubes[a];
    if (c < 0 || c >= C)
      return fs_err_set(err, FS_EINVAL, "slice cube %d: out of range [0, %d)", c, C);
    if (pod->cube_state[c] != FS_TPU_FREE)
      return fs_err_set(err, FS_EINVAL, "slice cube %d: not free (%s)", c,
                        pod->cube_state[c] == FS_TPU_BUSY ? "busy" : "in another slice");
    for (int32_t b = 0; b < a; b++)
      if (cubes[b] == c) return fs_err_set(err, FS_EINVAL, "slice cube %d listed twice", c);
  }
  /* Every port this slice needs must be free: check all first, so a refusal
   * leaves the pod unchanged. */
  for (int32_t o = 0; o < NOCS; o++)
    for (int32_t a = 0; a < s.n_cubes; a++) {
      const int32_t *pe = pod->peer + (int64_t)o * P;
      if (pe[plus_port(pod, cubes[a])] != -1 || pe[minus_port(pod, cubes[a])] != -1)
        return fs_err_set(err, FS_EINTERNAL, "OCS %d: a port of free cube %d has a circuit", o,
                          cubes[a]);
    }
  s.cubes = fs__malloc((size_t)s.n_cubes, sizeof(*s.cubes));
  if (!s.cubes) return fs_err_set(err, FS_ENOMEM, "out of memory");
  memcpy(s.cubes, cubes, (size_t)s.n_cubes * sizeof(*s.cubes));
  s.id = pod->next_id++;
  for (int32_t a = 0; a < s.n_cubes; a++) pod->cube_state[cubes[a]] = s.id;
  /* OCS (d, p) joins the + face of each slice cube to the - face of its
   * neighbour along d; the same face position p on both sides, because the
   * twist shifts by whole cubes. */
  for (int d = 0; d < 3; d++)
    for (int32_t p = 0; p < FACE; p++) {
      int32_t *pe = pod->peer + (int64_t)(d * FACE + p) * P;
      for (int32_t a = 0; a < s.n_cubes; a++) {
        int32_t i[3] = {a / (s.cdims[1] * s.cdims[2]), (a / s.cdims[2]) % s.cdims[1],
                        a % s.cdims[2]};
        int32_t b = cube_neighbour(&s, i, d);
        int32_t x = plus_port(pod, cubes[a]), y = minus_port(pod, cubes[b]);
        pe[x] = y;
        pe[y] = x;
        s.circuits++;
      }
    }
  pod->circuits += s.circuits;
  *out = s;
  return 0;
}

int fs_tpu_slice_remove(fs_tpu_pod *pod, const fs_tpu_slice *s, fs_err *err) {
  int32_t P = pod->p.ocs_ports;
  for (int32_t a = 0; a < s->n_cubes; a++)
    if (s->cubes[a] < 0 || s->cubes[a] >= pod->p.cubes || pod->cube_state[s->cubes[a]] != s->id)
      return fs_err_set(err, FS_EINVAL, "slice %d: the pod does not hold it", s->id);
  for (int32_t o = 0; o < NOCS; o++) {
    int32_t *pe = pod->peer + (int64_t)o * P;
    for (int32_t a = 0; a < s->n_cubes; a++) {
      int32_t x = plus_port(pod, s->cubes[a]);
      if (pe[x] >= 0) {
        pe[pe[x]] = -1;
        pe[x] = -1;
        pod->circuits--;
      }
    }
  }
  for (int32_t a = 0; a < s->n_cubes; a++) pod->cube_state[s->cubes[a]] = FS_TPU_FREE;
  return 0;
}

/* ---- the chip-level graph ---- */

/* Chip id of global coordinates (dims[0] most significant, as the torus
 * family numbers chips). */
static int32_t chip_id(const int32_t *dims, const int32_t g[3]) {
  return (g[0] * dims[1] + g[1]) * dims[2] + g[2];
}

/* Global coordinates of local chip l of slice cube a. */
static void global_of(const fs_tpu_slice *s, int32_t a, const int32_t l[3], int32_t g[3]) {
  int32_t i[3] = {a / (s->cdims[1] * s->cdims[2]), (a / s->cdims[2]) % s->cdims[1],
                  a % s->cdims[2]};
  for (int d = 0; d < 3; d++) g[d] = i[d] * SIDE + l[d];
}

/* Local coordinates on the face of dimension d at position p, with
 * coordinate `at` along d: the other two, in dimension order, are p / 4 and
 * p % 4. */
static void face_local(int d, int32_t p, int32_t at, int32_t l[3]) {
  int32_t u = p / SIDE, v = p % SIDE;
  if (d == 0) l[0] = at, l[1] = u, l[2] = v;
  else if (d == 1) l[0] = u, l[1] = at, l[2] = v;
  else l[0] = u, l[1] = v, l[2] = at;
}

int fs_tpu_slice_topo(const fs_tpu_pod *pod, const fs_tpu_slice *s, fs_topo **out, fs_err *err) {
  int32_t C = pod->p.cubes, P = pod->p.ocs_ports;
  int32_t *slot = fs__malloc((size_t)C, sizeof(*slot)); /* physical cube -> slice cube */
  if (!slot) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int32_t c = 0; c < C; c++) slot[c] = -1;
  for (int32_t a = 0; a < s->n_cubes; a++) {
    int32_t c = s->cubes[a];
    if (c < 0 || c >= C || pod->cube_state[c] != s->id) {
      free(slot);
      return fs_err_set(err, FS_EINVAL, "slice %d: the pod does not hold it", s->id);
    }
    slot[c] = a;
  }
  int32_t n = s->n_cubes * FS_TPU_CUBE_CHIPS;
  double bps = pod->p.ici_gbps * 1e9;
  int64_t lat = pod->p.ici_latency_ns;
  const char *fam = s->twisted ? "tpu_twisted" : "torus";
  fs_topo_builder b;
  int rc = fs_topo_builder_init(&b, fam, 2 * n, 2 * (n + 3 * n), err);
  if (rc) {
    free(slot);
    return rc;
  }
  for (int32_t i = 0; i < n; i++) TRY(fs_topo_builder_node(&b, FS_NODE_HOST, 0, i, -1));
  for (int32_t i = 0; i < n; i++) TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, i, -1));
  /* The chip's port to its router: six links' worth, so injection is never
   * the bottleneck (as the torus family's default host_gbps). */
  for (int32_t i = 0; i < n; i++) TRY(fs_topo_builder_cable(&b, i, n + i, 6 * bps, lat));
  /* Electrical ICI inside each cube: a 4x4x4 mesh (no wrap-around). */
  for (int32_t a = 0; a < s->n_cubes; a++)
    for (int32_t x = 0; x < FS_TPU_CUBE_CHIPS; x++) {
      int32_t l[3] = {x / 16, (x / 4) % 4, x % 4}, g[3], h[3];
      global_of(s, a, l, g);
      for (int d = 0; d < 3; d++) {
        if (l[d] == SIDE - 1) continue;
        memcpy(h, g, sizeof(h));
        h[d]++;
        TRY(fs_topo_builder_cable(&b, n + chip_id(s->dims, g), n + chip_id(s->dims, h), bps, lat));
      }
    }
  /* Optical ICI: one cable per circuit, read from the OCS ports. */
  for (int d = 0; d < 3; d++)
    for (int32_t p = 0; p < FACE; p++) {
      const int32_t *pe = pod->peer + (int64_t)(d * FACE + p) * P;
      for (int32_t a = 0; a < s->n_cubes; a++) {
        int32_t y = pe[plus_port(pod, s->cubes[a])];
        int32_t cb = y - C;
        if (y < 0 || cb < 0 || cb >= C || slot[cb] < 0) {
          fs_topo_builder_abort(&b);
          free(slot);
          return fs_err_set(err, FS_EINVAL, "slice %d: OCS %d port %d has no circuit into it",
                            s->id, d * FACE + p, plus_port(pod, s->cubes[a]));
        }
        int32_t la[3], lb[3], ga[3], gb[3];
        face_local(d, p, SIDE - 1, la);
        face_local(d, p, 0, lb);
        global_of(s, a, la, ga);
        global_of(s, slot[cb], lb, gb);
        TRY(fs_topo_builder_cable(&b, n + chip_id(s->dims, ga), n + chip_id(s->dims, gb), bps,
                                  lat));
      }
    }
  free(slot);
  slot = NULL;
  fs_topo *t = b.t;
  t->n_dims = 3;
  for (int d = 0; d < 3; d++) t->dims[d] = s->dims[d];
  if (s->twisted)
    snprintf(t->spec, sizeof(t->spec), "tpu_twisted:dims=%dx%dx%d,gbps=%g,latency_ns=%lld",
             s->dims[0], s->dims[1], s->dims[2], pod->p.ici_gbps, (long long)lat);
  else
    snprintf(t->spec, sizeof(t->spec), "torus:dims=%dx%dx%d,gbps=%g,host_gbps=%g,latency_ns=%lld",
             s->dims[0], s->dims[1], s->dims[2], pod->p.ici_gbps, 6 * pod->p.ici_gbps,
             (long long)lat);
  return fs_topo_builder_finish(&b, out, err);
oom:
  fs_topo_builder_abort(&b);
  free(slot);
  return fs_err_set(err, FS_ENOMEM, "out of memory building a tpu slice");
}

int fs_tpu_halving_cuts(const fs_topo *t, int64_t links[3], fs_err *err) {
  const int32_t *D = t->dims;
  int32_t n = t->n_hosts;
  if (t->n_dims != 3 || (int64_t)D[0] * D[1] * D[2] != n || t->n_nodes != 2 * n)
    return fs_err_set(err, FS_EINVAL, "%s: not a 3-D tpu slice graph", t->spec);
  links[0] = links[1] = links[2] = 0;
  for (int32_t l = 0; l < t->n_links; l += 2) {
    int32_t a = t->links[l].from - n, b = t->links[l].to - n;
    if (a < 0 || b < 0) continue; /* chip to its router */
    int32_t ga[3] = {a / (D[1] * D[2]), (a / D[2]) % D[1], a % D[2]};
    int32_t gb[3] = {b / (D[1] * D[2]), (b / D[2]) % D[1], b % D[2]};
    for (int d = 0; d < 3; d++) links[d] += (ga[d] < D[d] / 2) != (gb[d] < D[d] / 2);
  }
  return 0;
}

/* ---- reconfiguration ---- */

void fs_tpu_reconfig_diff(const fs_tpu_params *p, const int32_t *old_peer,
                          const int32_t *new_peer, fs_tpu_reconfig *out) {
  memset(out, 0, sizeof(*out));
  for (int32_t o = 0; o < NOCS; o++) {
    const int32_t *a = old_peer + (int64_t)o * p->ocs_ports,
                  *b = new_peer + (int64_t)o * p->ocs_ports;
    int touched = 0;
    for (int32_t q = 0; q < p->ocs_ports; q++) {
      if (a[q] == b[q]) continue;
      touched = 1;
      /* Count each circuit once, at its lower port. */
      if (a[q] > q) out->torn_down++;
      if (b[q] > q) out->set_up++;
    }
    out->ocs_touched += touched;
  }
  out->time_s = out->ocs_touched ? p->reconfig_s : 0;
}
