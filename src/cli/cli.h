/* The subcommands of the fabricsim CLI. Each takes the arguments after its
 * name and returns the process exit status: 0 success, 1 internal failure,
 * 2 bad input or usage. Only the CLI prints or exits. */
#ifndef FABRICSIM_CLI_H
#define FABRICSIM_CLI_H

#include "fabricsim/err.h"

int fs__cli_topo(int argc, char **argv);
int fs__cli_sim(int argc, char **argv);
int fs__cli_coll(int argc, char **argv);
int fs__cli_train(int argc, char **argv);
int fs__cli_route(int argc, char **argv);

/* Prints "fabricsim: MSG" on stderr and returns the exit status for code. */
int fs__cli_fail(const fs_err *err);
/* Prints "fabricsim: CMD: MSG" (usage error) and returns 2. */
int fs__cli_usage(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
