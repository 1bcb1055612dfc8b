/* tests of the hier collective algorithms, run in this order */
