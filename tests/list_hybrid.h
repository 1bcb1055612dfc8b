/* tests of small tcp flows run as packets in the engine (test_hybrid.c), run in this order */
X(test_hybrid_small_flows_equal_the_packet_backend)
X(test_hybrid_mice_take_their_bytes_from_the_elephants)
X(test_hybrid_sent_dependency_and_packets_counted)
X(test_hybrid_refusals_and_determinism)
