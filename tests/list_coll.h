/* tests of the coll module, run in this order */
X(test_coll_sim_equals_closed_form_on_star)
X(test_coll_ring_bytes_received)
X(test_coll_tracker_catches_broken_algorithm)
X(test_coll_bad_params)
X(test_coll_ring_oversubscription_factor)
X(test_coll_tuner_picks_fastest_and_caches)
