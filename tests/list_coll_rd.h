/* tests of the rd collective algorithms, run in this order */
X(test_coll_rd_sim_equals_closed_form_every_p)
X(test_coll_rd_closed_forms_by_hand)
X(test_coll_rd_bytes_received)
X(test_coll_rd_flow_counts)
X(test_coll_rd_partner_schedule)
