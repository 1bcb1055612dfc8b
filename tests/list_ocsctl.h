/* tests of the OCS layer's controller (circuits during a run) */
X(test_ocsctl_circuit_takes_its_share)
X(test_ocsctl_reconfigures_only_when_it_pays)
X(test_ocsctl_topo_appends_a_cable_per_leaf_pair)
X(test_ocsctl_train_job)
