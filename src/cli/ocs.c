/* `fabricsim ocs SUB ...`: optical circuit switching inside a data centre.
 * Each subcommand lives in its own file (ocs_topo.c, ocs_schedule.c,
 * ocs_tpu.c) with its option table; this file only lists them for the
 * dispatcher (opts.h, fs__group_run). */
#include "cli.h"
#include "opts.h"

static const fs__sub ocs_subs[] = {
    {"topo", "JOB.json",
     "optimise circuits for a training job (TopoOpt style) and compare with electrical "
     "fabrics at equal cost",
     fs__cli_ocs_topo},
    {"schedule", "--matrix F",
     "decompose a traffic matrix into circuit configurations (Birkhoff-von Neumann, "
     "Solstice) and time them",
     fs__cli_ocs_schedule},
    {"tpu", "--shape XxYxZ", "TPU-v4 style 4x4x4 cubes joined by OCS into slices",
     fs__cli_ocs_tpu},
    {NULL, NULL, NULL, NULL}};

static const fs__group ocs_group = {
    "ocs", "Optical circuit switching inside a data centre (docs/model-ocs.md).", ocs_subs};

int fs__cli_ocs(int argc, char **argv) { return fs__group_run(&ocs_group, argc, argv); }
