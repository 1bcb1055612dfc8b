/* tests of the tree collective algorithms, run in this order */
