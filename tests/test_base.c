/* Tests of the internal utilities: string map, RNG. */
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
