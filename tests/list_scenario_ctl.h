/* routing control inside fabricsim sim scenarios */
X(test_scenario_failure_closed_form)
X(test_scenario_failure_under_dcqcn_and_dctcp)
X(test_scenario_failure_cli)
X(test_scenario_optimized_permutation)
X(test_scenario_set_routing)
X(test_scenario_ctl_bad_input)
X(test_scenario_ctl_example_deterministic)
X(test_scenario_optimized_leaves_explicit_paths)
