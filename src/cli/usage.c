/* How the CLI reports a failure: a usage error of a subcommand ("fabricsim
 * CMD: MSG (see 'fabricsim CMD --help')", exit 2) and a library error
 * ("fabricsim: MSG", exit 2 for bad input, 1 for an internal failure).
 * Apart from main.c so that the subcommands and the option parser, which
 * all call these, do not depend on the dispatcher that calls them. */
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"

int fs__cli_fail(const fs_err *err) {
  double lim = fs__cli_memory_limit();
  if (err->code == FS_ENOMEM && lim > 0) {
    fprintf(stderr,
            "fabricsim: %s: the run needs more than the %.2f GiB of memory it may use "
            "(--max-memory SIZE; %s)\n",
            err->msg[0] ? err->msg : fs_strerror(err->code), lim / (1024.0 * 1024 * 1024),
            fs__cli_memory_given() ? "as given" : "75% of this machine's by default");
    return 2;
  }
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
