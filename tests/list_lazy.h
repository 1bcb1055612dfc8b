/* tests/test_lazy.c */
X(test_lazy_plans_run_as_added_items)
X(test_lazy_bad_plans_refused)
X(test_lazy_train_same_results)
