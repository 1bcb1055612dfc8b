/* fabricsim sim: placeholder. */
#include "cli.h"

int fs__cli_sim(int argc, char **argv) {
  (void)argc;
  (void)argv;
  return 1;
}
