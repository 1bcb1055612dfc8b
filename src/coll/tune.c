/* Automatic algorithm choice: simulate every algorithm that implements the
 * op on the real topology and keep the fastest, caching the answer per
 * (op, size bucket, group). NCCL's tuner predicts from a cost model; here
 * the engine is the model, so contention on the actual fabric counts. The
 * cache is a small open-addressing table keyed by a hash of the group; it is
 * only looked up, never iterated. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct tune_entry {
  uint64_t key;
  int32_t used;
  fs_coll_algo algo;
} tune_entry;

struct fs_coll_tuner {
  const fs_topo *t;
  fs_route_mode mode;
  uint64_t seed;
  tune_entry *table;
  size_t cap, len;
};

int fs_coll_tuner_new(const fs_topo *t, fs_route_mode mode, uint64_t seed,
                      fs_coll_tuner **out, fs_err *err) {
  fs_coll_tuner *tu = calloc(1, sizeof(*tu));
  if (!tu) return fs_err_set(err, FS_ENOMEM, "out of memory");
  tu->t = t;
  tu->mode = mode;
  tu->seed = seed;
  *out = tu;
  return 0;
}

void fs_coll_tuner_free(fs_coll_tuner *tu) {
  if (!tu) return;
  free(tu->table);
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

static tune_entry *slot(fs_coll_tuner *tu, uint64_t key) {
  size_t i = key & (tu->cap - 1);
  while (tu->table[i].used && tu->table[i].key != key) i = (i + 1) & (tu->cap - 1);
  return &tu->table[i];
}

static int remember(fs_coll_tuner *tu, uint64_t key, fs_coll_algo algo) {
  if ((tu->len + 1) * 2 > tu->cap) {
    size_t ncap = tu->cap ? tu->cap * 2 : 64;
    tune_entry *old = tu->table;
    size_t ocap = tu->cap;
    tu->table = calloc(ncap, sizeof(*tu->table));
    if (!tu->table) {
      tu->table = old;
      return FS_ENOMEM;
    }
    tu->cap = ncap;
    for (size_t i = 0; i < ocap; i++)
      if (old[i].used) *slot(tu, old[i].key) = old[i];
    free(old);
  }
  tune_entry *e = slot(tu, key);
  if (!e->used) tu->len++;
  *e = (tune_entry){key, 1, algo};
  return 0;
}

int fs_coll_tuner_choose(fs_coll_tuner *tu, const fs_coll_params *prm,
                         const fs_coll_group *g, fs_coll_algo *out, int *cached,
                         fs_err *err) {
  uint64_t key = tune_key(prm, g);
  if (tu->cap) {
    tune_entry *e = slot(tu, key);
    if (e->used) {
      *out = e->algo;
      if (cached) *cached = 1;
      return 0;
    }
  }
  fs_coll_params q = *prm;
  q.algo = FS_ALGO_AUTO;
  fs_coll_result r;
  int rc = fs_coll_run(tu->t, tu->mode, tu->seed, &q, g, &r, err);
  if (rc) return rc;
  if (remember(tu, key, r.algo)) return fs_err_set(err, FS_ENOMEM, "out of memory");
  *out = r.algo;
  if (cached) *cached = 0;
  return 0;
}
