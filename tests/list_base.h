/* tests of the base module, run in this order */
X(test_strmap_put_get_duplicate)
X(test_rng_is_seeded_and_unbiased_enough)
X(test_arena_alignment_and_zeroing)
X(test_heap_matches_a_scanned_array)
