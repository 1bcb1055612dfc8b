/* fabricsim command-line entry: only the dispatcher. The table of
 * commands below gives each its entry point and its line in the command
 * list; each command parses its own options (opts.h) in its own file, and
 * usage.c reports failures, so nothing here is called back.
 * `fabricsim help CMD [SUB]` runs `fabricsim CMD [SUB] --help`: the two
 * cannot differ. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fabricsim/output.h"
#include "opts.h"

#define FABRICSIM_VERSION "0.1.0"

static const fs__sub commands[] = {
    {"topo", "SPEC", "describe a topology (nodes, links, diameter, bisection bandwidth)",
     fs__cli_topo},
    {"sim", "SCENARIO.json", "simulate flows and tasks on a topology", fs__cli_sim},
    {"train", "JOB.json", "one training iteration: time, MFU, breakdown", fs__cli_train},
    {"coll", "--op OP ...",
     "one collective over a sweep of sizes (nccl-tests style), its algorithm chosen or given",
     fs__cli_coll},
    {"route", "--jobs F ...", "compare routing optimisers on training traffic", fs__cli_route},
    {"ocs", "SUB ...",
     "optical circuit switching: topology optimisation (topo), circuit schedules (schedule), "
     "TPU-v4 style cube slices (tpu)",
     fs__cli_ocs},
    {"wan", "SUB ...",
     "optical networks between data centres: lightpath provisioning (provision), cross-site "
     "training (train)",
     fs__cli_wan},
    {"sweep", "SWEEP.json --db F",
     "run a parameter sweep (-j N processes, or MPI) into SQLite; resumable", fs__cli_sweep},
    {"jobs", "TRACE.json",
     "jobs arriving over time on one cluster under a scheduler: completion times, queueing, "
     "utilisation",
     fs__cli_jobs},
    {"chakra", "PREFIX --topo S", "simulate MLCommons Chakra execution traces", fs__cli_chakra},
    {NULL, NULL, NULL, NULL}};

static void usage(FILE *f) {
  fprintf(f, "usage: fabricsim COMMAND [ARGS] [--max-memory SIZE]\n\ncommands:\n");
  fs__subs_help(commands, f);
  fprintf(f, "  version               print the version\n"
             "  help [COMMAND [SUB]]  this list, or the help of a command\n"
             "\n"
             "SPEC is a JSON file or an inline form, e.g. fattree:k=8,gbps=100\n"
             "Run 'fabricsim COMMAND --help' (or 'fabricsim help COMMAND') for the options\n"
             "of a command.\n"
             "--max-memory SIZE (any command): the memory a run may use (suffixes K M G;\n"
             "0: no limit); past it the run is refused with exit 2. Default: 75%% of this\n"
             "machine's physical memory.\n");
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

static const fs__sub *find(const char *name) {
  for (const fs__sub *c = commands; c->name; c++)
    if (strcmp(name, c->name) == 0) return c;
  return NULL;
}

/* A bad command line is one line, as every command's usage error is. */
static int unknown(const char *cmd) {
  fs__cli_error("fabricsim: unknown command '%s' (see 'fabricsim --help')", cmd);
  return 2;
}

/* `help CMD [SUB ...]`: CMD's run with its arguments and --help last. */
static int help(int argc, char **argv) {
  if (argc < 1) {
    usage(stdout);
    return 0;
  }
  const fs__sub *c = find(argv[0]);
  if (!c) return unknown(argv[0]);
  char *args[8];
  int n = 0;
  for (int i = 1; i < argc && n < 6; i++) args[n++] = argv[i];
  args[n++] = "--help";
  args[n] = NULL;
  return c->run(n, args);
}

int main(int argc, char **argv) {
  install_cleanup();
  if (fs__cli_memory_setup(&argc, argv)) return 2;
  if (argc < 2) {
    fprintf(stderr, "fabricsim: missing command (see 'fabricsim --help')\n");
    return 2;
  }
  const char *cmd = argv[1];
  const fs__sub *c = find(cmd);
  if (c) return c->run(argc - 2, argv + 2);
  if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
    printf("fabricsim %s\n", FABRICSIM_VERSION);
    return 0;
  }
  if (strcmp(cmd, "help") == 0) return help(argc - 2, argv + 2);
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
    usage(stdout);
    return 0;
  }
  return unknown(cmd);
}
