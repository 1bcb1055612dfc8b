/* tests of the route module, run in this order */
X(test_route_fattree_path_counts)
X(test_route_leafspine_multi_cable_counts)
X(test_route_ecmp_deterministic_and_seeded)
X(test_route_ecmp_spreads_uniformly)
X(test_route_spray_weights_conserve_flow)
X(test_route_explicit_validates)
X(test_route_spray_permutation_is_full_bisection)
