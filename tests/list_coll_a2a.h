/* tests of the a2a collective algorithms, run in this order */
X(test_coll_a2a_sim_equals_closed_form_every_p)
X(test_coll_a2a_closed_forms_by_hand)
X(test_coll_a2a_simulated_by_hand)
X(test_coll_a2a_bytes_received)
X(test_coll_a2a_flow_counts)
X(test_coll_a2a_tracker_catches_misdelivery)
