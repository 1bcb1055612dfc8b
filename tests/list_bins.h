/* tests of the engine's per-link time bins, run in this order */
X(test_bins_one_flow_closed_form)
X(test_bins_off_by_default_and_bad_count)
X(test_bins_sum_to_link_bytes)
X(test_bins_include_pruned_links)
