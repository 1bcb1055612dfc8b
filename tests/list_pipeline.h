/* tests of the pipeline schedules, run in this order */
X(test_pipeline_orders_are_permutations)
X(test_pipeline_zbh1_bubble)
X(test_pipeline_1f1b_and_gpipe_bubble)
X(test_pipeline_interleaved_shrinks_bubble_by_v)
X(test_pipeline_activations_in_flight)
