/* tests of coll in nccl-tests' conventions (test_nccl_tests.c) */
X(test_nccl_tests_pasted_command_line)
X(test_nccl_tests_size_and_count_per_collective)
X(test_nccl_tests_datatype_changes_count)
X(test_nccl_tests_bad_values_exit_2)
X(test_nccl_tests_parse_script)
