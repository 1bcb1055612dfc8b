/* tests of the packet backend (test_packet.c), run in this order */
X(test_packet_warm_flow_through_a_switch)
X(test_packet_lone_message_as_the_tcp_model)
X(test_packet_incast_chain_and_task)
X(test_packet_cli_deterministic_and_refusals)
