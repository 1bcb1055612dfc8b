/* tests of the report module, run in this order */
X(test_trace_of_scenario_matches_run)
