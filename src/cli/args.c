/* Strict number parsing for command-line options, shared by the
 * subcommands: the whole argument must be the number, in range. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "cli.h"

int fs__cli_parse_long(const char *s, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (!*s || *end || errno || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

int fs__cli_parse_double(const char *s, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (!*s || *end || errno || !isfinite(v) || !(v >= lo) || !(v <= hi)) return -1;
  *out = v;
  return 0;
}
