/* Placeholder until the subcommand lands (being written now). */
#include "cli.h"

int fs__cli_ocs_tpu(int argc, char **argv) {
  (void)argc;
  (void)argv;
  return fs__cli_usage("ocs tpu", "not built yet");
}
