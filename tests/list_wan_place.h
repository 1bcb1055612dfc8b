/* tests of choosing a cross-site job's sites (test_wan_place.c), in order */
X(test_wan_place_ring_follows_the_fibres)
X(test_wan_place_never_worse_than_the_file)
X(test_wan_place_aggregator_hand_computed)
X(test_wan_place_on_multicore_fibres)
