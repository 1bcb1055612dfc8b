/* Tests of the symm module (symmetry reduction). */
X(test_symm_builders_extend_and_verify)
X(test_symm_refuses_non_automorphisms)
X(test_symm_ring_rotation)
X(test_symm_quotient_matches_expanded_random)
X(test_symm_route_equivariance_spray_passes_ecmp_fails)
X(test_symm_pair_orbits_and_quotient_by_hand)
X(test_symm_large_railopt)
X(test_symm_spray_always_equivariant)
