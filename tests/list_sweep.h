/* tests of fabricsim sweep (test_sweep.c), run in this order */
X(test_sweep_grid_zip_and_figures)
X(test_sweep_resumes_after_kill)
X(test_sweep_bad_files_exit_2)
X(test_sweep_wan_points_are_wan_train)
X(test_sweep_wan_dynamic_points_are_wan_dynamic)
