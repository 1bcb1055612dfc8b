/* tests of the sim module, run in this order */
X(test_sim_one_flow_alone)
X(test_sim_incast_shares_equally)
X(test_sim_parking_lot)
X(test_sim_parking_lot_rates_change)
X(test_sim_staggered_arrival)
X(test_sim_chain_and_diamond_with_tasks)
X(test_sim_start_time_after_deps_and_zero_bytes)
X(test_sim_detects_cycle)
