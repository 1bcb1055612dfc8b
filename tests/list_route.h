/* tests of the route module, run in this order */
