/* tests of the transport models (test_transport.c), run in this order */
X(test_transport_one_flow_headers_and_store_and_forward)
X(test_transport_slow_start_of_one_flow)
X(test_transport_small_messages_leave_fifo)
X(test_transport_shared_link_efficiency)
X(test_transport_two_flows_unequal_shares)
X(test_transport_bad_input_exits_2)
X(test_transport_handshake_waits_behind_a_switch_queue)
