/* tests of the CLI's option table (src/cli/opts.c), run in this order */
X(test_cli_opts_equals_form_is_the_spaced_form)
X(test_cli_opts_errors_one_line_naming_the_option)
X(test_cli_opts_help_cmd_is_cmd_help)
X(test_cli_format_one_vocabulary)
