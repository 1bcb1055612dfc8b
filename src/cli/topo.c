/* fabricsim topo: placeholder until the metrics land. */
#include <stdio.h>

#include "cli.h"

int fs__cli_topo(int argc, char **argv) {
  (void)argc;
  (void)argv;
  return 1;
}
