/* `fabricsim ocs SUB ...`: optical circuit switching inside a data centre.
 * Each subcommand lives in its own file (ocs_topo.c, ocs_schedule.c,
 * ocs_tpu.c); this file only dispatches. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: fabricsim ocs SUB [ARGS]\n"
          "\n"
          "  topo       optimise circuits for a training job (TopoOpt style) and\n"
          "             compare with electrical fabrics at equal cost\n"
          "  schedule   decompose a traffic matrix into circuit configurations\n"
          "             (Birkhoff-von Neumann, Solstice) and time them\n"
          "  tpu        TPU-v4 style 4x4x4 cubes joined by OCS into slices\n"
          "\n"
          "Run 'fabricsim ocs SUB --help' for the options of each.\n");
}

int fs__cli_ocs(int argc, char **argv) {
  if (argc < 1) {
    usage(stderr);
    return 2;
  }
  const char *sub = argv[0];
  if (strcmp(sub, "topo") == 0) return fs__cli_ocs_topo(argc - 1, argv + 1);
  if (strcmp(sub, "schedule") == 0) return fs__cli_ocs_schedule(argc - 1, argv + 1);
  if (strcmp(sub, "tpu") == 0) return fs__cli_ocs_tpu(argc - 1, argv + 1);
  if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
    usage(stdout);
    return 0;
  }
  return fs__cli_usage("ocs", "unknown subcommand '%s'", sub);
}
