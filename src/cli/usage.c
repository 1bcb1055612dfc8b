/* How the CLI reports a failure: a usage error of a subcommand ("fabricsim
 * CMD: MSG (see 'fabricsim CMD --help')", exit 2) and a library error
 * ("fabricsim: MSG", exit 2 for bad input, 1 for an internal failure).
 * Apart from main.c so that the subcommands and the option parser, which
 * all call these, do not depend on the dispatcher that calls them.
 * Every such line goes through fs__cli_error: whatever a user gave (a
 * value with a newline, a byte that is not UTF-8) is escaped, so the
 * message stays one line of text. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

void fs__cli_error_text(const char *text) { fs_err_fput_text(stderr, text); }

/* (A buffer on the stack: the message of a run refused for its memory must
 * not need memory; longer text is cut, the line still ends.) */
void fs__cli_error(const char *fmt, ...) {
  char text[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  fs__cli_error_text(text);
  fputc('\n', stderr);
}

int fs__cli_fail(const fs_err *err) {
  double lim = fs__cli_memory_limit();
  if (err->code == FS_ENOMEM && lim > 0) {
    fs__cli_error("fabricsim: %s: the run needs more than the %.2f GiB of memory it may use "
                  "(--max-memory SIZE; %s)",
                  err->msg[0] ? err->msg : fs_strerror(err->code), lim / (1024.0 * 1024 * 1024),
                  fs__cli_memory_given() ? "as given" : "75% of this machine's by default");
    return 2;
  }
  fs__cli_error("fabricsim: %s", err->msg[0] ? err->msg : fs_strerror(err->code));
  return fs_err_is_input(err->code) || err->code == FS_EIO ? 2 : 1;
}

int fs__cli_usage(const char *cmd, const char *fmt, ...) {
  char text[3072];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  fs__cli_error("fabricsim %s: %s (see 'fabricsim %s --help')", cmd, text, cmd);
  return 2;
}
