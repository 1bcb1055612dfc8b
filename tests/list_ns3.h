/* the ns-3 backend's exchange file, results and refusals (no ns-3 needed) */
X(test_ns3_exchange_file_lists_nodes_links_paths_tasks_deps)
X(test_ns3_exchange_file_names_rdma_and_its_packets)
X(test_ns3_results_replace_times_and_busy)
X(test_ns3_bad_results_name_the_line_and_change_nothing)
X(test_ns3_refuses_spray_control_failures_and_other_transports)
X(test_ns3_writer_refuses_a_sprayed_flow)
X(test_ns3_cli_round_trip_and_refusals)
