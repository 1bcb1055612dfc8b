/* Tests of the internal utilities: string map, RNG, arena, heap. */
#include <stdlib.h>
#include <string.h>

#include "../src/base/base.h"
#include "test.h"

TEST(test_strmap_put_get_duplicate) {
  fs__strmap m;
  fs__strmap_init(&m);
  char keys[500][16];
  for (int i = 0; i < 500; i++) {
    snprintf(keys[i], sizeof(keys[i]), "k%d", i);
    CHECK_EQ_INT(fs__strmap_put(&m, keys[i], i, NULL), 0);
  }
  for (int i = 0; i < 500; i++) CHECK_EQ_INT(fs__strmap_get(&m, keys[i]), i);
  int32_t old = -1;
  CHECK_EQ_INT(fs__strmap_put(&m, "k42", 9, &old), 1);
  CHECK_EQ_INT(old, 42);
  CHECK_EQ_INT(fs__strmap_get(&m, "nope"), -1);
  fs__strmap_free(&m);
}

TEST(test_rng_is_seeded_and_unbiased_enough) {
  fs__rng a, b;
  fs__rng_seed(&a, 1);
  fs__rng_seed(&b, 1);
  for (int i = 0; i < 100; i++) CHECK(fs__rng_next(&a) == fs__rng_next(&b));
  int counts[6] = {0};
  for (int i = 0; i < 60000; i++) counts[fs__rng_below(&a, 6)]++;
  /* Each bucket expects 10000 with sd ~91; 6 sd is a loose, honest bound. */
  for (int i = 0; i < 6; i++) CHECK(abs(counts[i] - 10000) < 550);
}

TEST(test_arena_alignment_and_zeroing) {
  fs__arena a;
  fs__arena_init(&a);
  for (int i = 1; i < 200; i++) {
    unsigned char *p = fs__arena_alloc(&a, (size_t)i * 97, 1);
    CHECK(p != NULL);
    CHECK(((uintptr_t)p & 15) == 0);
    int zero = 1;
    for (int j = 0; j < i * 97; j++) zero &= p[j] == 0;
    CHECK(zero);
    memset(p, 0xab, (size_t)i * 97);
  }
  fs__arena_free(&a);
}

/* The heap against a naive oracle (a plain array scanned for its least
 * (t, seq)), at both arities, with removals from the middle tracked by
 * pos; equal times (few distinct values) exercise the seq tie-break. */
TEST(test_heap_matches_a_scanned_array) {
  for (unsigned lg = 1; lg <= 2; lg++) {
    enum { N = 600 };
    int32_t pos[N];
    fs__heap_ent ref[N];
    int n_ref = 0;
    fs__heap h;
    fs__heap_init(&h, lg, pos);
    fs__rng r;
    fs__rng_seed(&r, 7 + lg);
    int32_t next = 0;
    for (int step = 0; step < 4000; step++) {
      uint64_t op = fs__rng_below(&r, 3);
      if ((op == 0 || !n_ref) && next < N) {
        fs__heap_ent x = {(double)fs__rng_below(&r, 20), (uint64_t)next, next, 0};
        CHECK_EQ_INT(fs__heap_push(&h, x), 0);
        ref[n_ref++] = x;
        next++;
      } else if (n_ref && op == 1) { /* pop: the least of the array */
        int best = 0;
        for (int i = 1; i < n_ref; i++) best = fs__heap_before(&ref[i], &ref[best]) ? i : best;
        CHECK_EQ_INT(h.e[0].a, ref[best].a);
        CHECK_EQ_INT(pos[h.e[0].a], 0);
        fs__heap_pop(&h);
        ref[best] = ref[--n_ref];
      } else if (n_ref) { /* remove a random one through pos */
        int k = (int)fs__rng_below(&r, (uint64_t)n_ref);
        int32_t a = ref[k].a;
        CHECK(pos[a] >= 0 && h.e[pos[a]].a == a);
        fs__heap_remove(&h, (size_t)pos[a]);
        CHECK_EQ_INT(pos[a], -1);
        ref[k] = ref[--n_ref];
      }
      CHECK_EQ_INT((int)h.len, n_ref);
    }
    for (size_t i = 0; i < h.len; i++) CHECK_EQ_INT(pos[h.e[i].a], (int)i);
    fs__heap_free(&h);
  }
}
