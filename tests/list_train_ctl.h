/* routing control inside fabricsim train */
X(test_train_optimized_routing_beats_ecmp)
X(test_train_failure_slowdown)
X(test_train_control_bad_input)
X(test_train_cluster_spray_isolates_tenants)
X(test_train_cluster_errors)
X(test_train_iterations_repeat)
X(test_train_iterations_learn_routes)
