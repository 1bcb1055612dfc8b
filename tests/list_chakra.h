/* tests of the Chakra trace reader and writer (test_chakra.c), in order */
X(test_chakra_microbenchmarks_match_closed_forms)
X(test_chakra_train_round_trip)
X(test_chakra_bad_traces_exit_2)
X(test_chakra_reads_hand_encoded_trace)
X(test_chakra_export_follows_astra_sim_rules)
X(test_chakra_reads_old_zero_byte_controls)
X(test_chakra_algo_runs_the_asked_algorithm)
X(test_chakra_cli_algo)
