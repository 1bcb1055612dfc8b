/* tests of the report module, run in this order */
X(test_trace_of_scenario_matches_run)
X(test_trace_of_cluster_names_each_job)
