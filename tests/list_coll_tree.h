/* tests of the tree collective algorithms, run in this order */
X(test_coll_tree_double_tree_shapes)
X(test_coll_tree_closed_forms_by_hand)
X(test_coll_tree_sim_equals_closed_form_sweep)
X(test_coll_tree_bytes_received)
X(test_coll_tree_edges_and_steps)
X(test_coll_tree_defaults_and_limits)
