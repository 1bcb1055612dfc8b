/* tests of RoCE packet by packet (test_roce.c), run in this order */
X(test_roce_lone_message_store_and_forward)
X(test_roce_nic_round_robin)
X(test_roce_marks_cut_the_sender)
X(test_roce_small_flows_equal_the_packet_backend)
X(test_roce_mice_wait_behind_the_fluid_queue)
