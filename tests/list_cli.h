/* tests of the cli module, run in this order */
