/* Tests of the sched module (test_sched.c). */
X(test_sched_fifo_sjf_hand)
X(test_sched_share_by_hand)
X(test_sched_shared_uplink_against_engine)
X(test_sched_incremental_equals_full)
X(test_sched_deterministic)
X(test_sched_bad_traces)
X(test_sched_html_report)
X(test_sched_sweep_points_are_jobs)
