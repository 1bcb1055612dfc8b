/* tests of node-aware rings (coll.h), run in this order */
X(test_coll_ring_orders_rails_and_nics)
X(test_coll_ring_server_size)
X(test_coll_ring_rails_32_gpus_use_every_nic)
X(test_coll_ring_node_aware_data_checked)
X(test_coll_ring_tracker_catches_rank_named_blocks)
X(test_coll_ring_flat_where_not_servers)
X(test_coll_ring_train_dp_node_aware_exact)
