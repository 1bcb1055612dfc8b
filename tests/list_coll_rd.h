/* tests of the rd collective algorithms, run in this order */
