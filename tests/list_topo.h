/* tests of the topo module, run in this order */
