/* tests of the network controller (failures, periodic re-optimisation) */
X(test_netctl_reoptimisation_removes_collisions)
X(test_netctl_reconfiguration_cost)
X(test_netctl_switch_failure)
X(test_netctl_failure_disconnects)
