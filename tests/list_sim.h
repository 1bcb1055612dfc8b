/* tests of the sim module, run in this order */
