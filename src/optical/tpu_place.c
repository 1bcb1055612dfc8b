/* Placing TPU slices into a pod's cubes (docs/model-tpu.md, "Placement"):
 * with OCS any free cubes; without, a contiguous block of a static torus of
 * cubes; and a seeded job mix admitted under both. Static search: 6 axis
 * orders x cubes origins x block size, at most 6 * 68 * 68 checks. */
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/tpu.h"

int fs_tpu_place_ocs(const fs_tpu_pod *pod, int32_t n, int32_t *cubes) {
  if (n < 0 || fs_tpu_pod_free_cubes(pod) < n) return 0;
  int32_t k = 0;
  for (int32_t c = 0; c < pod->p.cubes && k < n; c++)
    if (pod->cube_state[c] == FS_TPU_FREE) cubes[k++] = c;
  return 1;
}

void fs_tpu_static_grid(int32_t n, int32_t grid[3]) {
  int32_t best[3] = {n, 1, 1};
  for (int32_t c = 1; (int64_t)c * c * c <= n; c++) {
    if (n % c) continue;
    for (int32_t b = c; (int64_t)b * b <= n / c; b++) {
      if ((n / c) % b) continue;
      int32_t a = n / c / b;
      if (a - c < best[0] - best[2]) best[0] = a, best[1] = b, best[2] = c;
    }
  }
  memcpy(grid, best, sizeof(best));
}

/* Generic over the state array so the job mix can run on a plain copy. */
static int place_static_state(const int32_t *state, const int32_t grid[3], const int32_t cd[3],
                              int32_t *cubes) {
  static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  int32_t G = grid[0] * grid[1] * grid[2];
  for (int pi = 0; pi < 6; pi++) {
    const int *pm = perms[pi];
    /* Extent of the block along grid axis x is cd[pm[x]]. */
    int32_t ext[3] = {cd[pm[0]], cd[pm[1]], cd[pm[2]]};
    if (ext[0] > grid[0] || ext[1] > grid[1] || ext[2] > grid[2]) continue;
    for (int32_t o = 0; o < G; o++) {
      int32_t org[3] = {o / (grid[1] * grid[2]), (o / grid[2]) % grid[1], o % grid[2]};
      int ok = 1;
      int32_t n = cd[0] * cd[1] * cd[2];
      for (int32_t a = 0; a < n && ok; a++) {
        /* Slice cube a at slice coordinates s; grid axis x takes s[pm[x]]. */
        int32_t s[3] = {a / (cd[1] * cd[2]), (a / cd[2]) % cd[1], a % cd[2]}, g[3];
        for (int x = 0; x < 3; x++) g[x] = (org[x] + s[pm[x]]) % grid[x];
        int32_t c = (g[0] * grid[1] + g[1]) * grid[2] + g[2];
        if (state[c] != FS_TPU_FREE) ok = 0;
        else if (cubes) cubes[a] = c;
      }
      if (ok) return 1;
    }
  }
  return 0;
}

int fs_tpu_place_static(const fs_tpu_pod *pod, const int32_t grid[3], const int32_t cdims[3],
                        int32_t *cubes) {
  if ((int64_t)grid[0] * grid[1] * grid[2] != pod->p.cubes) return 0;
  int32_t n = cdims[0] * cdims[1] * cdims[2];
  int32_t *tmp = fs__malloc((size_t)n + 1, sizeof(*tmp));
  if (!tmp) return 0;
  int ok = place_static_state(pod->cube_state, grid, cdims, tmp);
  if (ok) memcpy(cubes, tmp, (size_t)n * sizeof(*cubes));
  free(tmp);
  return ok;
}

/* The job mix: Cloud TPU v4 slice shapes of 1 to 16 cubes (mean 6.2). */
static const int32_t mix_shapes[5][3] = {
    {4, 4, 4}, {4, 4, 8}, {4, 8, 8}, {8, 8, 8}, {8, 8, 16}};

typedef struct active {
  int32_t job, end;
  fs_tpu_slice s; /* OCS copy only */
} active;

int fs_tpu_mix_run(const fs_tpu_pod *pod, int32_t jobs, uint64_t seed, fs_tpu_mix_result *out,
                   fs_err *err) {
  if (jobs < 0 || jobs > 1000000)
    return fs_err_set(err, FS_EINVAL, "jobs-mix %d: must be in [0, 1000000]", jobs);
  int32_t nfree = fs_tpu_pod_free_cubes(pod);
  if (nfree < 1) return fs_err_set(err, FS_EINVAL, "jobs-mix: the pod has no free cube");
  memset(out, 0, sizeof(*out));
  out->jobs = jobs;
  out->free_cubes = nfree;
  /* Offered load 1: arrivals (1/step) x mean size (31/5 cubes) x mean life
   * L = free cubes. */
  int32_t L = (int32_t)(nfree * 5.0 / 31.0 + 0.5);
  if (L < 1) L = 1;
  out->mean_life = L;
  int32_t C = pod->p.cubes, grid[3];
  fs_tpu_static_grid(C, grid);
  fs_tpu_pod *ocs = NULL;
  int32_t *st = fs__malloc((size_t)C, sizeof(*st));
  int32_t *cubes = fs__malloc((size_t)C, sizeof(*cubes));
  active *ao = fs__calloc((size_t)C + 1, sizeof(*ao)), *as = fs__calloc((size_t)C + 1, sizeof(*as));
  int32_t no = 0, ns = 0, held_o = 0, held_s = 0;
  int rc = 0;
  if (!st || !cubes || !ao || !as) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  if ((rc = fs_tpu_pod_new(&pod->p, &ocs, err))) goto out;
  /* Both copies start from the pod's cubes; cubes held by its slices count
   * as busy here (their circuits are not copied). */
  for (int32_t c = 0; c < C; c++) {
    st[c] = pod->cube_state[c] == FS_TPU_FREE ? FS_TPU_FREE : FS_TPU_BUSY;
    ocs->cube_state[c] = st[c];
  }
  fs__rng r;
  fs__rng_seed(&r, seed);
  for (int32_t j = 0; j < jobs; j++) {
    /* Departures due at step j, in admission order (lists stay ordered). */
    int32_t k = 0;
    for (int32_t i = 0; i < no; i++) {
      if (ao[i].end <= j) {
        held_o -= ao[i].s.n_cubes;
        if ((rc = fs_tpu_slice_remove(ocs, &ao[i].s, err))) goto out;
        fs_tpu_slice_clear(&ao[i].s);
        out->reconfigs++;
      } else {
        ao[k++] = ao[i];
      }
    }
    no = k;
    k = 0;
    for (int32_t i = 0; i < ns; i++) {
      if (as[i].end <= j) {
        for (int32_t c = 0; c < C; c++)
          if (st[c] == as[i].job) st[c] = FS_TPU_FREE, held_s--;
      } else {
        as[k++] = as[i];
      }
    }
    ns = k;
    const int32_t *shape = mix_shapes[fs__rng_below(&r, 5)];
    int32_t life = 1 + (int32_t)fs__rng_below(&r, (uint64_t)(2 * L - 1));
    int32_t cd[3] = {shape[0] / 4, shape[1] / 4, shape[2] / 4}, n = cd[0] * cd[1] * cd[2];
    out->cubes_asked += n;
    int fit_o = 0;
    if (fs_tpu_place_ocs(ocs, n, cubes)) {
      if ((rc = fs_tpu_slice_add(ocs, shape, 0, cubes, &ao[no].s, err))) goto out;
      ao[no].job = j;
      ao[no].end = j + life;
      no++;
      held_o += n;
      out->fit_ocs++;
      out->reconfigs++;
      fit_o = 1;
    }
    int32_t c_canon[3];
    fs_tpu_shape_canon(shape, c_canon);
    for (int d = 0; d < 3; d++) c_canon[d] /= 4;
    if (place_static_state(st, grid, c_canon, cubes)) {
      for (int32_t a = 0; a < n; a++) st[cubes[a]] = j;
      as[ns].job = j;
      as[ns].end = j + life;
      ns++;
      held_s += n;
      out->fit_static++;
      out->fit_both += fit_o;
    }
    out->cube_steps_ocs += held_o;
    out->cube_steps_static += held_s;
  }
  rc = fs_tpu_pod_check(ocs, err);
out:
  if (ao)
    for (int32_t i = 0; i < no; i++) fs_tpu_slice_clear(&ao[i].s);
  FS__FREE_ALL(ao, as, cubes, st);
  fs_tpu_pod_free(ocs);
  return rc;
}
