/* tests of the training iteration, run in this order */
X(test_train_free_comm_is_the_compute_schedule)
X(test_train_dp_allreduce_volume)
X(test_train_zero_stages_dp_volume)
X(test_train_zero3_beside_a_pipeline)
X(test_train_nic_speed_changes_only_communication)
