/* tests of the framework presets (achieved kernel efficiency) */
X(test_framework_gemm_tile_overhead)
X(test_framework_kernel_hbm_share)
X(test_framework_kernel_gaps)
X(test_framework_presets_defaults_and_overrides)
X(test_framework_bad_sections)
X(test_framework_expected_max_normal)
X(test_framework_stragglers_scale_compute)
X(test_framework_kv_heads_replicated_below_tp)
