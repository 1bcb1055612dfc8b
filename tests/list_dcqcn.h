/* tests of rdma under DCQCN (test_dcqcn.c), run in this order */
X(test_dcqcn_lone_flow_is_the_ideal_rdma_flow)
X(test_dcqcn_incast_keeps_the_port_busy)
X(test_dcqcn_short_message_waits_out_the_queue)
X(test_dcqcn_cuts_under_use_the_port)
X(test_dcqcn_never_beats_the_ideal_and_is_deterministic)
