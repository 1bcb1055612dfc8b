/* Tests of TPU v4 style pods (tpu.h): slices read back from the OCS circuits
 * against the zoo's torus builder (edge sets, degree, diameter, bisection
 * closed forms), twisted tori against a coordinate BFS written here, the OCS
 * port matching invariants (and that the checker catches a corruption),
 * placement invariants on random pods, a pod where only OCS can place a job,
 * the cost share by hand, and the CLI's bad input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim/tpu.h"
#include "test.h"
#include "topo_oracle.h"

static fs_tpu_pod *new_pod(int32_t cubes) {
  fs_tpu_params p;
  fs_tpu_defaults(&p);
  p.cubes = cubes;
  fs_tpu_pod *pod = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_tpu_pod_new(&p, &pod, &err), &err);
  return pod;
}

static int cmp_pair(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  return (*x > *y) - (*x < *y);
}

/* Sorted router-to-router cables of t as (min, max) keys, routers renumbered
 * from 0. Returns the count; *out is malloc'd. */
static int32_t router_edges(const fs_topo *t, int64_t **out) {
  int32_t n = t->n_hosts, k = 0;
  int64_t *e = malloc((size_t)t->n_links * sizeof(*e));
  for (int32_t l = 0; l < t->n_links; l++) {
    const fs_link *L = &t->links[l];
    if (L->from < n || L->to < n || L->from > L->to) continue;
    e[k++] = (int64_t)(L->from - n) * 1000000 + (L->to - n);
  }
  qsort(e, (size_t)k, sizeof(*e), cmp_pair);
  *out = e;
  return k;
}

/* Builds a slice of `shape` on cubes taken in reverse id order (so slice
 * cubes are not the pod's first ones) and returns its graph. */
static fs_topo *slice_graph(fs_tpu_pod *pod, const int32_t shape[3], int twisted,
                            fs_tpu_slice *s) {
  fs_err err = {0, ""};
  int32_t n = shape[0] / 4 * (shape[1] / 4) * (shape[2] / 4), cubes[64], k = 0;
  for (int32_t c = pod->p.cubes - 1; c >= 0 && k < n; c--)
    if (pod->cube_state[c] == FS_TPU_FREE) cubes[k++] = c;
  CHECK_EQ_INT(k, n);
  CHECK_OK(fs_tpu_slice_add(pod, shape, twisted, cubes, s, &err), &err);
  fs_topo *t = NULL;
  CHECK_OK(fs_tpu_slice_topo(pod, s, &t, &err), &err);
  return t;
}

TEST(test_tpu_slice_equals_torus) {
  static const int32_t shapes[][3] = {{4, 4, 4}, {4, 4, 8}, {8, 4, 4}, {4, 8, 12}, {8, 8, 8}};
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    char ctx[64];
    snprintf(ctx, sizeof(ctx), "%dx%dx%d", shapes[i][0], shapes[i][1], shapes[i][2]);
    fs_tpu_pod *pod = new_pod(64);
    /* A few busy cubes so the slice lands on scattered ids. */
    fs_err err = {0, ""};
    CHECK_OK(fs_tpu_pod_busy_random(pod, 20, 7 + i, &err), &err);
    fs_tpu_slice s;
    fs_topo *t = slice_graph(pod, shapes[i], 0, &s);
    int32_t c[3];
    fs_tpu_shape_canon(shapes[i], c);
    fs_direct_params dp = {3, {c[0], c[1], c[2]}, pod->p.ici_gbps, 6 * pod->p.ici_gbps,
                           pod->p.ici_latency_ns};
    fs_topo *ref = NULL;
    CHECK_OK(fs_topo_torus(&dp, &ref, &err), &err);
    CHECK(strcmp(t->family, "torus") == 0);
    CHECK(strcmp(t->spec, ref->spec) == 0);
    CHECK_EQ_CTX(t->n_hosts, ref->n_hosts, ctx);
    CHECK_EQ_CTX(t->n_links, ref->n_links, ctx);
    /* Same cables between the same (identically numbered) routers. */
    int64_t *ea, *eb;
    int32_t na = router_edges(t, &ea), nb = router_edges(ref, &eb);
    CHECK_EQ_CTX(na, nb, ctx);
    CHECK(na == nb && memcmp(ea, eb, (size_t)na * sizeof(*ea)) == 0);
    free(ea);
    free(eb);
    /* Degree 6 per chip router (plus its chip). */
    for (int32_t v = t->n_hosts; v < t->n_nodes; v++)
      CHECK_EQ_CTX(t->out_start[v + 1] - t->out_start[v], 7, ctx);
    fs_topo_stats st = oracle_stats_of(t);
    CHECK_EQ_CTX(st.diameter_hops - 2, c[0] / 2 + c[1] / 2 + c[2] / 2, ctx);
    CHECK_EQ_CTX(st.diameter_hops - 2, fs_tpu_torus_diameter(shapes[i]), ctx);
    CHECK_REL(st.bisection_bps,
              (double)(2 * c[0] * c[1] * c[2] / c[0]) * pod->p.ici_gbps * 1e9, 1e-9, "bit/s");
    CHECK_REL(st.bisection_bps, fs_topo_bisection_formula(t), 1e-9, "bit/s");
    CHECK_EQ_CTX(s.circuits, 48 * s.n_cubes, ctx);
    CHECK_OK(fs_tpu_pod_check(pod, &err), &err);
    fs_topo_free(ref);
    fs_topo_free(t);
    fs_tpu_slice_clear(&s);
    fs_tpu_pod_free(pod);
  }
}

/* The twisted torus by coordinates, as docs/model-tpu.md defines it (canonical
 * order): 2k x k x k shifts the wraps of dims 1 and 2 by k along dim 0;
 * 2k x 2k x k shifts the wrap of dim 2 by k along dims 0 and 1. */
static int32_t twisted_plus(const int32_t D[3], int32_t v, int d) {
  int32_t g[3] = {v / (D[1] * D[2]), (v / D[2]) % D[1], v % D[2]};
  int kind = D[0] == 2 * D[1] && D[1] == D[2] ? 1 : 2;
  int32_t k = D[2];
  g[d]++;
  if (g[d] == D[d]) {
    g[d] = 0;
    if (kind == 1 && d >= 1) g[0] = (g[0] + k) % D[0];
    if (kind == 2 && d == 2) g[0] = (g[0] + k) % D[0], g[1] = (g[1] + k) % D[1];
  }
  return (g[0] * D[1] + g[1]) * D[2] + g[2];
}

/* Router eccentricity max by BFS over the coordinate graph. */
static int32_t coord_diameter(const int32_t D[3]) {
  int32_t n = D[0] * D[1] * D[2], best = 0;
  int32_t *adj = malloc((size_t)n * 6 * sizeof(*adj)), *dist = malloc((size_t)n * sizeof(*dist)),
          *q = malloc((size_t)n * sizeof(*q));
  int32_t *deg = calloc((size_t)n, sizeof(*deg));
  for (int32_t v = 0; v < n; v++)
    for (int d = 0; d < 3; d++) {
      int32_t w = twisted_plus(D, v, d);
      adj[v * 6 + deg[v]++] = w;
      adj[w * 6 + deg[w]++] = v;
    }
  for (int32_t s = 0; s < n; s++) {
    for (int32_t v = 0; v < n; v++) dist[v] = -1;
    int32_t h = 0, tl = 0;
    dist[s] = 0;
    q[tl++] = s;
    while (h < tl) {
      int32_t v = q[h++];
      for (int32_t j = 0; j < 6; j++)
        if (dist[adj[v * 6 + j]] < 0) dist[adj[v * 6 + j]] = dist[v] + 1, q[tl++] = adj[v * 6 + j];
    }
    for (int32_t v = 0; v < n; v++)
      if (dist[v] > best) best = dist[v];
  }
  free(adj);
  free(dist);
  free(q);
  free(deg);
  return best;
}

TEST(test_tpu_twisted_diameter) {
  /* shape, documented router diameter (docs/model-tpu.md, measured there and
   * here by an independent BFS), untwisted diameter */
  static const struct {
    int32_t shape[3];
    int32_t diameter, plain;
  } cases[] = {{{4, 4, 8}, 6, 8}, {{4, 8, 8}, 6, 10}, {{8, 8, 16}, 12, 16}};
  fs_err err = {0, ""};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char ctx[64];
    snprintf(ctx, sizeof(ctx), "%dx%dx%d twisted", cases[i].shape[0], cases[i].shape[1],
             cases[i].shape[2]);
    fs_tpu_pod *pod = new_pod(64);
    fs_tpu_slice s;
    fs_topo *t = slice_graph(pod, cases[i].shape, 1, &s);
    CHECK(strcmp(t->family, "tpu_twisted") == 0);
    /* Edge set equals the coordinate definition. */
    int32_t n = t->n_hosts, k = 0;
    int64_t *want = malloc((size_t)n * 3 * sizeof(*want)), *got;
    for (int32_t v = 0; v < n; v++)
      for (int d = 0; d < 3; d++) {
        int32_t w = twisted_plus(s.dims, v, d), a = v < w ? v : w, b = v < w ? w : v;
        want[k++] = (int64_t)a * 1000000 + b;
      }
    qsort(want, (size_t)k, sizeof(*want), cmp_pair);
    int32_t ng = router_edges(t, &got);
    CHECK_EQ_CTX(ng, k, ctx);
    CHECK(ng == k && memcmp(got, want, (size_t)k * sizeof(*got)) == 0);
    free(got);
    free(want);
    for (int32_t v = n; v < t->n_nodes; v++)
      CHECK_EQ_CTX(t->out_start[v + 1] - t->out_start[v], 7, ctx);
    /* The BFS of 8x8x16 (1024 routers) takes ~0.1 s; stats only below. */
    if (n <= 512) {
      fs_topo_stats st = oracle_stats_of(t);
      CHECK_EQ_CTX(st.diameter_hops - 2, cases[i].diameter, ctx);
      /* Twisting adds cables across the cut of the long dimension. */
      CHECK(st.bisection_bps > (double)fs_tpu_torus_bisection_links(s.dims) * 400e9);
    }
    CHECK_EQ_CTX(coord_diameter(s.dims), cases[i].diameter, ctx);
    CHECK_EQ_CTX(fs_tpu_torus_diameter(s.dims), cases[i].plain, ctx);
    CHECK_OK(fs_tpu_pod_check(pod, &err), &err);
    fs_topo_free(t);
    fs_tpu_slice_clear(&s);
    fs_tpu_pod_free(pod);
  }
}

TEST(test_tpu_ocs_ports_and_reconfig) {
  fs_err err = {0, ""};
  fs_tpu_pod *pod = new_pod(64);
  int32_t P = pod->p.ocs_ports;
  size_t np = (size_t)FS_TPU_N_OCS * (size_t)P;
  int32_t *snap = malloc(np * sizeof(*snap)), *snap2 = malloc(np * sizeof(*snap2));
  static const int32_t shapes[][3] = {{8, 8, 16}, {4, 4, 8}, {8, 8, 8}, {4, 8, 8}, {4, 4, 4}};
  static const int tw[] = {1, 1, 0, 1, 0};
  fs_tpu_slice sl[5];
  int32_t used = 0;
  for (int i = 0; i < 5; i++) {
    int32_t n = shapes[i][0] / 4 * (shapes[i][1] / 4) * (shapes[i][2] / 4), cubes[64];
    CHECK(fs_tpu_place_ocs(pod, n, cubes));
    memcpy(snap, pod->peer, np * sizeof(*snap));
    CHECK_OK(fs_tpu_slice_add(pod, shapes[i], tw[i], cubes, &sl[i], &err), &err);
    used += n;
    fs_tpu_reconfig rc;
    fs_tpu_reconfig_diff(&pod->p, snap, pod->peer, &rc);
    CHECK_EQ_INT(rc.set_up, 48 * n);
    CHECK_EQ_INT(rc.torn_down, 0);
    CHECK_EQ_INT(rc.ocs_touched, 48);
    CHECK_REL(rc.time_s, pod->p.reconfig_s, 0, "s");
    /* Circuits of earlier slices are untouched: only the new cubes' ports
     * changed. */
    for (size_t q = 0; q < np; q++)
      if (snap[q] != pod->peer[q]) {
        int32_t port = (int32_t)(q % (size_t)P), cube = port % 64;
        CHECK_EQ_INT(pod->cube_state[cube], sl[i].id);
      }
  }
  CHECK_EQ_INT(used, 1 * 16 + 2 + 8 + 4 + 1);
  /* Every port in at most one circuit, counted here directly. */
  int64_t ends = 0;
  for (int32_t o = 0; o < FS_TPU_N_OCS; o++) {
    int32_t *cnt = calloc((size_t)P, sizeof(*cnt));
    for (int32_t q = 0; q < P; q++) {
      int32_t r = pod->peer[(size_t)o * P + q];
      if (r < 0) continue;
      CHECK_EQ_INT(pod->peer[(size_t)o * P + r], q);
      cnt[q]++;
      ends++;
    }
    for (int32_t q = 0; q < P; q++) CHECK(cnt[q] <= 1);
    free(cnt);
  }
  CHECK_EQ_INT(ends, 2 * 48 * used);
  CHECK_EQ_INT(pod->circuits, 48 * used);
  CHECK_OK(fs_tpu_pod_check(pod, &err), &err);
  /* The checker catches a port given a second circuit. */
  memcpy(snap, pod->peer, np * sizeof(*snap));
  int32_t q0 = sl[0].cubes[0], q1 = sl[1].cubes[0];
  pod->peer[q0] = pod->peer[q1];
  CHECK(fs_tpu_pod_check(pod, &err) == FS_EINTERNAL);
  memcpy(pod->peer, snap, np * sizeof(*snap));
  /* A busy or taken cube is refused and the pod unchanged. */
  fs_tpu_slice bad;
  int32_t four[4] = {sl[2].cubes[0], 60, 61, 62};
  static const int32_t s2[3] = {4, 8, 8};
  CHECK(fs_tpu_slice_add(pod, s2, 0, four, &bad, &err) == FS_EINVAL);
  CHECK(memcmp(snap, pod->peer, np * sizeof(*snap)) == 0);
  /* Swapping one slice for another: remove 8x8x8 then add 8x8x8 on other
   * cubes, timing both steps. */
  memcpy(snap, pod->peer, np * sizeof(*snap));
  CHECK_OK(fs_tpu_slice_remove(pod, &sl[2], &err), &err);
  memcpy(snap2, pod->peer, np * sizeof(*snap2));
  fs_tpu_reconfig rc;
  fs_tpu_reconfig_diff(&pod->p, snap, pod->peer, &rc);
  CHECK_EQ_INT(rc.torn_down, 48 * 8);
  CHECK_EQ_INT(rc.set_up, 0);
  CHECK_EQ_INT(pod->circuits, 48 * (used - 8));
  fs_tpu_reconfig_diff(&pod->p, pod->peer, pod->peer, &rc);
  CHECK_REL(rc.time_s, 0, 0, "s");
  CHECK_OK(fs_tpu_pod_check(pod, &err), &err);
  for (int i = 0; i < 5; i++) fs_tpu_slice_clear(&sl[i]);
  free(snap);
  free(snap2);
  fs_tpu_pod_free(pod);
}

/* Is `cubes` a (wrapping) contiguous block of grid g of extents e in some
 * axis order? Brute force over the cube set's coordinates. */
static int is_block(const int32_t g[3], const int32_t *cubes, int32_t n, const int32_t cd[3]) {
  int32_t in[256] = {0};
  for (int32_t a = 0; a < n; a++) in[cubes[a]] = 1;
  static const int pm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int p = 0; p < 6; p++) {
    int32_t e[3] = {cd[pm[p][0]], cd[pm[p][1]], cd[pm[p][2]]};
    if (e[0] > g[0] || e[1] > g[1] || e[2] > g[2]) continue;
    for (int32_t o = 0; o < g[0] * g[1] * g[2]; o++) {
      int32_t org[3] = {o / (g[1] * g[2]), (o / g[2]) % g[1], o % g[2]}, cnt = 0;
      for (int32_t x = 0; x < e[0]; x++)
        for (int32_t y = 0; y < e[1]; y++)
          for (int32_t z = 0; z < e[2]; z++) {
            int32_t c = (((org[0] + x) % g[0]) * g[1] + (org[1] + y) % g[1]) * g[2] +
                        (org[2] + z) % g[2];
            cnt += in[c];
          }
      if (cnt == n) return 1;
    }
  }
  return 0;
}

TEST(test_tpu_placement_invariants) {
  static const int32_t cds[][3] = {{1, 1, 1}, {2, 1, 1}, {2, 2, 1}, {2, 2, 2},
                                   {4, 2, 2}, {3, 1, 1}, {4, 4, 1}, {4, 4, 4}};
  fs_err err = {0, ""};
  int32_t grid[3];
  fs_tpu_static_grid(64, grid);
  CHECK(grid[0] == 4 && grid[1] == 4 && grid[2] == 4);
  fs_tpu_static_grid(32, grid);
  CHECK(grid[0] == 4 && grid[1] == 4 && grid[2] == 2);
  fs_tpu_static_grid(64, grid);
  for (uint64_t seed = 1; seed <= 30; seed++) {
    fs_tpu_pod *pod = new_pod(64);
    int32_t k = (int32_t)(seed * 7 % 60);
    CHECK_OK(fs_tpu_pod_busy_random(pod, k, seed, &err), &err);
    CHECK_EQ_INT(fs_tpu_pod_free_cubes(pod), 64 - k);
    for (size_t i = 0; i < sizeof(cds) / sizeof(cds[0]); i++) {
      int32_t n = cds[i][0] * cds[i][1] * cds[i][2], cubes[64], st[64];
      int ok = fs_tpu_place_ocs(pod, n, cubes);
      CHECK_EQ_INT(ok, 64 - k >= n);
      int sok = fs_tpu_place_static(pod, grid, cds[i], st);
      if (sok) CHECK(ok); /* static fits => OCS fits */
      for (int pass = 0; pass < 2; pass++) {
        const int32_t *c = pass ? st : cubes;
        if (!(pass ? sok : ok)) continue;
        for (int32_t a = 0; a < n; a++) {
          CHECK(c[a] >= 0 && c[a] < 64);
          CHECK_EQ_INT(pod->cube_state[c[a]], FS_TPU_FREE);
          for (int32_t b = 0; b < a; b++) CHECK(c[a] != c[b]);
        }
      }
      if (sok) CHECK(is_block(grid, st, n, cds[i]));
    }
    fs_tpu_pod_free(pod);
  }
  /* busy-random refuses more than the free cubes, pod unchanged */
  fs_tpu_pod *pod = new_pod(8);
  CHECK(fs_tpu_pod_busy_random(pod, 9, 1, &err) == FS_EINVAL);
  CHECK_EQ_INT(fs_tpu_pod_free_cubes(pod), 8);
  CHECK(fs_tpu_pod_set_busy(pod, 8, &err) == FS_EINVAL);
  CHECK_OK(fs_tpu_pod_set_busy(pod, 3, &err), &err);
  CHECK(fs_tpu_pod_set_busy(pod, 3, &err) == FS_EINVAL);
  /* a list: every id taken; a bad list names --busy and the list */
  CHECK_OK(fs_tpu_pod_set_busy_list(pod, "0,5", &err), &err);
  CHECK_EQ_INT(fs_tpu_pod_free_cubes(pod), 5);
  /* ids apart: a good id before the bad entry stays busy */
  static const char *const bad[] = {"", "1,", "2;4", "x", "-1", ",7"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    CHECK(fs_tpu_pod_set_busy_list(pod, bad[i], &err) == FS_EINVAL);
    CHECK(strstr(err.msg, "--busy") != NULL);
  }
  CHECK(fs_tpu_pod_set_busy_list(pod, "6,9", &err) == FS_EINVAL); /* 9: not a cube */
  fs_tpu_pod_free(pod);
}

TEST(test_tpu_only_ocs_fits_checkerboard) {
  /* Busy every cube of even x+y+z in the 4x4x4 cube torus: 32 cubes free,
   * no two of them adjacent, so a 2-cube slice (4x4x8) has no contiguous
   * block while OCS takes any two free cubes. */
  fs_err err = {0, ""};
  fs_tpu_pod *pod = new_pod(64);
  for (int32_t c = 0; c < 64; c++)
    if ((c / 16 + (c / 4) % 4 + c % 4) % 2 == 0) CHECK_OK(fs_tpu_pod_set_busy(pod, c, &err), &err);
  int32_t grid[3] = {4, 4, 4}, cd[3] = {2, 1, 1}, cubes[64];
  CHECK(!fs_tpu_place_static(pod, grid, cd, cubes));
  CHECK(fs_tpu_place_ocs(pod, 2, cubes));
  static const int32_t shape[3] = {4, 4, 8};
  fs_tpu_slice s;
  CHECK_OK(fs_tpu_slice_add(pod, shape, 1, cubes, &s, &err), &err);
  fs_topo *t = NULL;
  CHECK_OK(fs_tpu_slice_topo(pod, &s, &t, &err), &err);
  fs_topo_stats st = oracle_stats_of(t);
  CHECK_EQ_INT(st.diameter_hops - 2, 6);
  /* 1-cube slices fit both ways. */
  int32_t one[3] = {1, 1, 1};
  CHECK(fs_tpu_place_static(pod, grid, one, cubes));
  fs_topo_free(t);
  fs_tpu_slice_clear(&s);
  fs_tpu_pod_free(pod);
}

TEST(test_tpu_mix_invariants) {
  fs_err err = {0, ""};
  fs_tpu_pod *pod = new_pod(64);
  CHECK_OK(fs_tpu_pod_busy_random(pod, 6, 3, &err), &err);
  fs_tpu_mix_result a, b;
  CHECK_OK(fs_tpu_mix_run(pod, 300, 5, &a, &err), &err);
  CHECK_OK(fs_tpu_mix_run(pod, 300, 5, &b, &err), &err);
  CHECK(memcmp(&a, &b, sizeof(a)) == 0);
  CHECK_EQ_INT(a.jobs, 300);
  CHECK_EQ_INT(a.free_cubes, 58);
  CHECK_EQ_INT(a.mean_life, 9); /* round(58 * 5 / 31) */
  /* Never more cubes held than free, on average. */
  CHECK(a.cube_steps_ocs <= 58LL * 300 && a.cube_steps_static <= 58LL * 300);
  CHECK(a.fit_both <= a.fit_static && a.fit_both <= a.fit_ocs);
  CHECK(a.fit_ocs >= 1 && a.fit_ocs <= 300 && a.fit_static <= 300);
  /* Every admission and every departure so far reconfigured the OCSes. */
  CHECK(a.reconfigs >= a.fit_ocs && a.reconfigs <= 2 * a.fit_ocs);
  CHECK_EQ_INT(fs_tpu_pod_free_cubes(pod), 58); /* pod unchanged */
  CHECK(fs_tpu_mix_run(pod, -1, 5, &a, &err) == FS_EINVAL);
  fs_tpu_pod_free(pod);
}

TEST(test_tpu_halving_cuts) {
  /* Plain torus: 2 * n / D[d] links across each halving. Twisted 8x4x4
   * (2k x k x k, k = 4): across dim 0 also every wrap of dims 1 and 2
   * (16 + 16 * ... counted by hand below). */
  fs_err err = {0, ""};
  fs_tpu_pod *pod = new_pod(64);
  static const int32_t sh[3] = {4, 8, 12};
  fs_tpu_slice s;
  fs_topo *t = slice_graph(pod, sh, 0, &s);
  int64_t cut[3];
  CHECK_OK(fs_tpu_halving_cuts(t, cut, &err), &err);
  CHECK_EQ_INT(cut[0], 2 * 384 / 12);
  CHECK_EQ_INT(cut[1], 2 * 384 / 8);
  CHECK_EQ_INT(cut[2], 2 * 384 / 4);
  fs_topo_free(t);
  fs_tpu_slice_clear(&s);
  static const int32_t tw[3] = {4, 4, 8};
  t = slice_graph(pod, tw, 1, &s);
  CHECK_OK(fs_tpu_halving_cuts(t, cut, &err), &err);
  /* dim 0 (8 long): 2 * 16 plain cables + the 2 * 32 wraps of dims 1, 2,
   * each shifted by 4 = half of dim 0, so all of them cross. */
  CHECK_EQ_INT(cut[0], 32 + 64);
  /* dims 1, 2 (4 long): 2 * 32 as in the plain torus (the shift is along
   * dim 0 and does not change which half of dim 1 or 2 an end is in). */
  CHECK_EQ_INT(cut[1], 64);
  CHECK_EQ_INT(cut[2], 64);
  fs_topo_stats st = oracle_stats_of(t);
  CHECK_REL(st.bisection_bps, (double)cut[0] * 400e9, 1e-9, "bit/s");
  fs_topo_free(t);
  fs_tpu_slice_clear(&s);
  fs_tpu_pod_free(pod);
}

TEST(test_tpu_cost_by_hand) {
  fs_tpu_params p;
  fs_tpu_defaults(&p);
  p.cubes = 2;
  fs_tpu_cost_params c = {1000, 100, 10000, 50, 100, 2, 1, 10};
  fs_tpu_cost o;
  fs_err err = {0, ""};
  CHECK_OK(fs_tpu_cost_compute(&p, &c, &o, &err), &err);
  /* 2 cubes: 128 chips, 48 OCS, 2 * 6 * 16 = 192 transceivers and fibers. */
  CHECK_EQ_INT(o.chips, 128);
  CHECK_EQ_INT(o.ocs, 48);
  CHECK_EQ_INT(o.transceivers, 192);
  CHECK_REL(o.total_usd, 128000.0 + 480000 + 19200 + 1920, 1e-12, "USD");
  CHECK_REL(o.share_usd, (480000.0 + 19200 + 1920) / 629120, 1e-12, "");
  CHECK_REL(o.total_w, 12800.0 + 2400 + 384, 1e-12, "W");
  CHECK_REL(o.share_w, 2784.0 / 15584, 1e-12, "");
  CHECK_REL(o.ocs_share_usd, 480000.0 / 629120, 1e-12, "");
  /* the OCS increment: the boxes and their fiber, not the transceivers */
  CHECK_REL(o.incr_share_usd, (480000.0 + 1920) / 629120, 1e-12, "");
  CHECK_REL(o.incr_share_w, 2400.0 / 15584, 1e-12, "");
  /* the chip cost at which every optical part is 5 %: 19 x 501,120 / 128 */
  CHECK_REL(o.chip_usd_at_5pct, 19 * 501120.0 / 128, 1e-12, "USD");
  /* The break-even transceiver price gives exactly 5 % (negative here:
   * 48 OCS boxes alone exceed 5 % of 128 chips). */
  CHECK(o.xcvr_usd_at_5pct < 0);
  p.cubes = 64;
  fs_tpu_cost_defaults(&c);
  c.chip_usd = 20000; /* so the break-even price is positive */
  CHECK_OK(fs_tpu_cost_compute(&p, &c, &o, &err), &err);
  CHECK(o.xcvr_usd_at_5pct > 0 && o.xcvr_w_at_3pct > 0);
  CHECK_EQ_INT(o.chips, 4096);
  CHECK_EQ_INT(o.transceivers, 6144);
  c.xcvr_usd = o.xcvr_usd_at_5pct;
  c.xcvr_watts = o.xcvr_w_at_3pct;
  CHECK_OK(fs_tpu_cost_compute(&p, &c, &o, &err), &err);
  CHECK_REL(o.share_usd, 0.05, 1e-12, "");
  CHECK_REL(o.share_w, 0.03, 1e-12, "");
  c.ocs_usd = -1;
  CHECK(fs_tpu_cost_compute(&p, &c, &o, &err) == FS_EINVAL);
  CHECK(strstr(err.msg, "ocs_usd") != NULL);
}

TEST(test_tpu_shapes) {
  fs_err err = {0, ""};
  int32_t d[3];
  CHECK_OK(fs_tpu_shape_parse("8x8x16", d, &err), &err);
  CHECK(d[0] == 8 && d[1] == 8 && d[2] == 16);
  CHECK(fs_tpu_shape_parse("8x8", d, &err) == FS_EINVAL);
  CHECK(fs_tpu_shape_parse("8x8x16x", d, &err) == FS_EINVAL);
  CHECK(fs_tpu_shape_parse("8x-8x16", d, &err) == FS_EINVAL);
  static const int32_t ok_tw[][3] = {{4, 4, 8}, {8, 4, 4}, {4, 8, 8}, {16, 8, 16}};
  for (int i = 0; i < 4; i++) CHECK_OK(fs_tpu_shape_check(ok_tw[i], 1, &err), &err);
  static const int32_t bad_tw[][3] = {{4, 4, 4}, {8, 8, 8}, {4, 4, 12}, {4, 8, 16}};
  for (int i = 0; i < 4; i++) CHECK(fs_tpu_shape_check(bad_tw[i], 1, &err) == FS_EINVAL);
  static const int32_t bad[3] = {4, 6, 8};
  CHECK(fs_tpu_shape_check(bad, 0, &err) == FS_EINVAL);
  CHECK(strstr(err.msg, "multiple of 4") != NULL);
  fs_tpu_params p;
  fs_tpu_defaults(&p);
  p.cubes = 69; /* 2 * 69 > 136 ports */
  fs_tpu_pod *pod = NULL;
  CHECK(fs_tpu_pod_new(&p, &pod, &err) == FS_EINVAL);
  CHECK(pod == NULL);
}

TEST(test_tpu_cli) {
  char out[8192];
  CHECK_EQ_INT(test_run_cli("ocs tpu --shape 4x4x8 --twisted --busy 0,1,2 --jobs-mix 20",
                            "2>&1", out, sizeof(out)),
               0);
  CHECK(strstr(out, "twisted torus") != NULL);
  CHECK(strstr(out, "diameter, ICI hops     6 (3-D torus closed form 8)") != NULL);
  CHECK(strstr(out, "fits: cubes 3,4") != NULL);
  CHECK(strstr(out, "axis-halving cuts      96 / 64 / 64 links") != NULL);
  char again[8192];
  CHECK_EQ_INT(test_run_cli("ocs tpu --shape 4x4x8 --twisted --busy 0,1,2 --jobs-mix 20",
                            "2>&1", again, sizeof(again)),
               0);
  CHECK(strcmp(out, again) == 0);
  CHECK_EQ_INT(test_run_cli("ocs tpu --shape 8x4x4 --format json", "2>&1", out, sizeof(out)), 0);
  CHECK(strstr(out, "\"diameter_hops\": 8, \"torus_diameter_hops\": 8") != NULL);
  static const char *const bad[] = {
      "ocs tpu",
      "ocs tpu --shape 4x6x8",
      "ocs tpu --shape 8x8x8 --twisted",
      "ocs tpu --shape 4x4",
      "ocs tpu --shape 4x4x4 --busy 64",
      "ocs tpu --shape 4x4x4 --busy 1,1",
      "ocs tpu --shape 4x4x4 --busy 1,x",
      "ocs tpu --shape 4x4x4 --busy-random 65",
      "ocs tpu --shape 4x4x4 --cubes 100",
      "ocs tpu --shape 4x4x4 --cubes 0",
      "ocs tpu --shape 16x16x32",
      "ocs tpu --shape 4x4x4 --format xml",
      "ocs tpu --shape 4x4x4 --frobnicate 1",
      "ocs tpu --shape 4x4x4 --chip-usd -5",
      "ocs tpu --shape 4x4x4 --busy 1 --busy-random 2",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    int rc = test_run_cli(bad[i], "2>&1", out, sizeof(out));
    if (rc != 2) test_fail(__FILE__, __LINE__, "'%s': exit %d, want 2: %s", bad[i], rc, out);
    CHECK(strstr(out, "fabricsim") != NULL);
  }
}

/* A collective over the slice's chips: on 4x4x8 the twisted torus, whose
 * least halving cut is twice the plain one's, runs an all-to-all faster
 * (both with ideal spraying, so only the wiring differs); routing dor is
 * refused on a twisted slice, and collective options need --coll. */
TEST(test_tpu_cli_collective_on_slice) {
  char out[8192];
  double t[2];
  for (int tw = 0; tw < 2; tw++) {
    char args[256];
    snprintf(args, sizeof(args),
             "ocs tpu --shape 4x4x8%s --coll alltoall --bytes 1e8 --routing spray --format json",
             tw ? " --twisted" : "");
    CHECK_EQ_INT(test_run_cli(args, "2>/dev/null", out, sizeof(out)), 0);
    const char *p = strstr(out, "\"collective\": {\"op\": \"alltoall\"");
    CHECK(p != NULL);
    const char *ts = p ? strstr(p, "\"time_s\": ") : NULL;
    t[tw] = ts ? atof(ts + 10) : 0;
    CHECK(t[tw] > 0);
  }
  CHECK(t[1] < t[0] / 1.3);
  CHECK_EQ_INT(test_run_cli("ocs tpu --shape 4x4x8 --twisted --coll alltoall --routing dor",
                            "2>&1", out, sizeof(out)),
               2);
  CHECK(strstr(out, "a twisted slice is not a plain torus") != NULL);
  CHECK_EQ_INT(test_run_cli("ocs tpu --shape 4x4x8 --algo ring", "2>&1", out, sizeof(out)), 2);
  CHECK_EQ_INT(test_run_cli("ocs tpu --shape 4x4x8 --coll shuffle", "2>&1", out, sizeof(out)), 2);
}
