/* tests of the HTML reports, run in this order */
X(test_html_pieces_escape_and_degrade)
X(test_html_reports_well_formed_and_deterministic)
X(test_html_ocs_page_names_circuits_phases_and_bound)
X(test_html_bad_report_path_exits_2_naming_the_file)
X(test_html_large_topology_drawn_in_blocks)
X(test_html_one_colour_per_kind)
X(test_html_thousands_groups_digits)
