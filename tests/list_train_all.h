/* tests of the all-traffic iteration, run in this order */
X(test_train_private_tp_links_equal_flows)
X(test_train_rail_symmetry_equals_expanded)
X(test_train_replica_shift_refused_for_rhd)
X(test_train_all_equals_isolated_without_shared_links)
X(test_train_cp_ring_closed_form)
X(test_train_dp_buckets_overlap_backward)
X(test_train_ep_contends_with_dp)
X(test_train_comm_bad_options_exit_2)
