/* tests of the TopoOpt-style optimiser (topoopt.h), run in this order */
X(test_topoopt_totient_rings_hamiltonian)
X(test_topoopt_objective_by_hand)
X(test_topoopt_degree_feasible)
X(test_topoopt_never_worse_than_random)
X(test_topoopt_reaches_exact_optimum)
X(test_topoopt_job_traffic_volumes)
X(test_topoopt_cli)
