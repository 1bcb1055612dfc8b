/* tests of Sirius's cell-by-cell load balancing (spray on sirius) */
X(test_route_sirius_spray_splits_over_every_node)
X(test_route_sirius_spray_permutation_at_half_the_port)
