/* Automatic algorithm choice: simulate every algorithm that implements the
 * op on the real topology and keep the fastest, caching the answer per
 * (op, size bucket, group). NCCL's tuner predicts from a cost model; here
 * the engine is the model, so contention on the actual fabric counts. The
 * cache maps a hash of everything the choice depends on to the algorithm. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct fs_coll_tuner {
  const fs_topo *t;
  fs_route_mode mode;
  uint64_t seed;
  fs__u64map cache; /* tune_key -> algorithm */
};

int fs_coll_tuner_new(const fs_topo *t, fs_route_mode mode, uint64_t seed,
                      fs_coll_tuner **out, fs_err *err) {
  fs_coll_tuner *tu = calloc(1, sizeof(*tu));
  if (!tu) return fs_err_set(err, FS_ENOMEM, "out of memory");
  tu->t = t;
  tu->mode = mode;
  tu->seed = seed;
  fs__u64map_init(&tu->cache);
  *out = tu;
  return 0;
}

void fs_coll_tuner_free(fs_coll_tuner *tu) {
  if (!tu) return;
  fs__u64map_free(&tu->cache);
  free(tu);
}

/* The key covers everything the choice depends on besides the topology. */
static uint64_t tune_key(const fs_coll_params *prm, const fs_coll_group *g) {
  int bucket = (int)floor(log2(prm->bytes));
  uint64_t h = fs__mix64((uint64_t)prm->op * 1000003u + (uint64_t)(bucket + 64));
  h = fs__mix64(h ^ (uint64_t)g->p);
  for (int32_t r = 0; r < g->p; r++) h = fs__mix64(h ^ (uint64_t)(uint32_t)g->hosts[r]);
  h = fs__mix64(h ^ ((uint64_t)prm->chunks << 20) ^ ((uint64_t)prm->channels << 40) ^
                (uint64_t)prm->root ^ ((uint64_t)prm->node_size << 50));
  return fs__mix64(h ^ (uint64_t)llround(prm->gamma_s_per_byte * 1e15));
}

int fs_coll_tuner_choose(fs_coll_tuner *tu, const fs_coll_params *prm,
                         const fs_coll_group *g, fs_coll_algo *out, int *cached,
                         fs_err *err) {
  uint64_t key = tune_key(prm, g);
  int32_t known;
  if (fs__u64map_get(&tu->cache, key, &known)) {
    *out = (fs_coll_algo)known;
    if (cached) *cached = 1;
    return 0;
  }
  fs_coll_params q = *prm;
  q.algo = FS_ALGO_AUTO;
  fs_coll_result r;
  int rc = fs_coll_run(tu->t, tu->mode, tu->seed, &q, g, &r, err);
  if (rc) return rc;
  if (fs__u64map_put(&tu->cache, key, (int32_t)r.algo))
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  *out = r.algo;
  if (cached) *cached = 0;
  return 0;
}
