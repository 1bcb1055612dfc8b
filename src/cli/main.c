/* fabricsim command-line entry: dispatches to one subcommand per file. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fabricsim/output.h"

#define FABRICSIM_VERSION "0.1.0"

int fs__cli_fail(const fs_err *err) {
  fprintf(stderr, "fabricsim: %s\n", err->msg[0] ? err->msg : fs_strerror(err->code));
  return fs_err_is_input(err->code) || err->code == FS_EIO ? 2 : 1;
}

int fs__cli_usage(const char *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "fabricsim %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, " (see 'fabricsim %s --help')\n", cmd);
  return 2;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: fabricsim COMMAND [ARGS]\n"
          "\n"
          "commands:\n"
          "  topo SPEC              describe a topology (nodes, links, diameter,\n"
          "                         bisection bandwidth)\n"
          "  sim SCENARIO.json      simulate flows and tasks on a topology\n"
          "  train JOB.json         one training iteration: time, MFU, breakdown\n"
          "  coll --op OP ...       one collective over a sweep of sizes (nccl-tests\n"
          "                         style), its algorithm chosen or given\n"
          "  route --jobs F ...     compare routing optimisers on training traffic\n"
          "  ocs SUB ...            optical circuit switching: topology optimisation\n"
          "                         (topo), circuit schedules (schedule), TPU-v4\n"
          "                         style cube slices (tpu)\n"
          "  wan SUB ...            optical networks between data centres: lightpath\n"
          "                         provisioning (provision), cross-site training (train)\n"
          "  sweep SWEEP.json --db F  run a parameter sweep (-j N processes, or MPI)\n"
          "                         into SQLite; resumable\n"
          "  chakra PREFIX --topo S simulate MLCommons Chakra execution traces\n"
          "  version                print the version\n"
          "\n"
          "SPEC is a JSON file or an inline form, e.g. fattree:k=8,gbps=100\n"
          "Run 'fabricsim COMMAND --help' for the options of a command.\n");
}

/* An interrupt or a kill removes the temporary files of the outputs not
 * yet in place, then ends the process as the signal would have. */
static void on_fatal_signal(int sig) {
  fs_output_cleanup();
  signal(sig, SIG_DFL);
  raise(sig);
}

static void install_cleanup(void) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
  for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
    struct sigaction old, sa;
    /* a signal ignored by whoever started us (nohup) stays ignored */
    if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sigs[i], &sa, NULL);
  }
  atexit(fs_output_cleanup); /* an exit on a path that forgot an output */
}

int main(int argc, char **argv) {
  install_cleanup();
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "topo") == 0) return fs__cli_topo(argc - 2, argv + 2);
  if (strcmp(cmd, "sim") == 0) return fs__cli_sim(argc - 2, argv + 2);
  if (strcmp(cmd, "coll") == 0) return fs__cli_coll(argc - 2, argv + 2);
  if (strcmp(cmd, "train") == 0) return fs__cli_train(argc - 2, argv + 2);
  if (strcmp(cmd, "route") == 0) return fs__cli_route(argc - 2, argv + 2);
  if (strcmp(cmd, "ocs") == 0) return fs__cli_ocs(argc - 2, argv + 2);
  if (strcmp(cmd, "wan") == 0) return fs__cli_wan(argc - 2, argv + 2);
  if (strcmp(cmd, "sweep") == 0) return fs__cli_sweep(argc - 2, argv + 2);
  if (strcmp(cmd, "chakra") == 0) return fs__cli_chakra(argc - 2, argv + 2);
  if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
    printf("fabricsim %s\n", FABRICSIM_VERSION);
    return 0;
  }
  if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
    usage(stdout);
    return 0;
  }
  fprintf(stderr, "fabricsim: unknown command '%s'\n", cmd);
  usage(stderr);
  return 2;
}
