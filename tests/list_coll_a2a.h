/* tests of the a2a collective algorithms, run in this order */
