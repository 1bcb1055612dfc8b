/* Strict number parsing for command-line options, shared by the
 * subcommands: the whole argument must be the number, in range. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fabricsim/output.h"

/* Whether s starts as a decimal integer does: a digit, or '-' and a digit
 * if neg (strtol alone would take " 5" and "+5"). */
static int starts_decimal(const char *s, int neg) {
  if (neg && *s == '-') s++;
  return isdigit((unsigned char)*s);
}

int fs__cli_parse_long(const char *s, long lo, long hi, long *out) {
  char *end;
  if (!starts_decimal(s, 1)) return -1;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (!*s || *end || errno || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

int fs__cli_parse_seed(const char *s, unsigned long long *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (!starts_decimal(s, 0) || *end || errno) return -1;
  *out = v;
  return 0;
}

/* A decimal number at the start of s (-? digits, a fraction, an
 * exponent), read into *v: the end of it, or NULL. strtod alone would take
 * 0x10, inf, nan, " 5" and "+5" too. */
static const char *decimal(const char *s, double *v) {
  const char *q = s;
  if (*q == '-') q++;
  if (!isdigit((unsigned char)*q)) return NULL;
  while (isdigit((unsigned char)*q) || *q == '.') q++;
  if ((*q == 'e' || *q == 'E') && (isdigit((unsigned char)q[1]) ||
                                   ((q[1] == '+' || q[1] == '-') && isdigit((unsigned char)q[2]))))
    for (q += 2; isdigit((unsigned char)*q);) q++;
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return end == q && !errno && isfinite(*v) ? q : NULL; /* (1.2.3: strtod stops early) */
}

int fs__cli_parse_double(const char *s, double lo, double hi, double *out) {
  double v;
  const char *end = decimal(s, &v);
  if (!end || *end || !(v >= lo) || !(v <= hi)) return -1;
  *out = v;
  return 0;
}

int fs__cli_parse_size(const char *s, double *out) {
  double v;
  const char *end = decimal(s, &v);
  if (!end) return -1;
  double mul = 1;
  if (*end == 'K' || *end == 'k') mul = 1024.0, end++;
  else if (*end == 'M' || *end == 'm') mul = 1024.0 * 1024, end++;
  else if (*end == 'G' || *end == 'g') mul = 1024.0 * 1024 * 1024, end++;
  if (*end == 'B' || *end == 'b') end++;
  if (*end) return -1;
  *out = v * mul;
  return 0;
}

int fs__cli_transport(const char *cmd, const char *kind, const char *connections,
                      const char *rate_control, const char *packet_bytes, int persistent,
                      fs_transport *tp) {
  /* each setting's option and the value given (NULL: not given), by key */
  static const char *const flags[] = {"--transport", "--connections", "--rate-control", NULL,
                                      NULL,          "--packet-bytes"};
  const char *value[] = {kind, connections, rate_control, NULL, NULL, packet_bytes};
  unsigned given = 0;
  for (int key = FS_TK_KIND; key <= FS_TK_PACKET_BYTES; key++)
    if (value[key]) given |= 1u << key;
  if (!given) return 0;
  if (kind) {
    fs_transport_kind k;
    if (fs_transport_kind_parse(kind, &k))
      return fs__cli_usage(cmd, "--transport must be fluid, tcp or rdma, got '%s'", kind);
    if (k != tp->kind) {
      fs_transport_defaults(k, tp);
      if (persistent) tp->persistent = 1;
    }
  }
  if (connections) {
    if (strcmp(connections, "new") != 0 && strcmp(connections, "persistent") != 0)
      return fs__cli_usage(cmd, "--connections must be new or persistent, got '%s'",
                           connections);
    tp->persistent = connections[0] == 'p';
  }
  if (rate_control && strcmp(rate_control, "dcqcn") != 0 && strcmp(rate_control, "dctcp") != 0 &&
      strcmp(rate_control, "ideal") != 0)
    return fs__cli_usage(cmd, "--rate-control must be dcqcn, dctcp or ideal, got '%s'",
                         rate_control);
  if (packet_bytes) {
    double v;
    if (fs__cli_parse_size(packet_bytes, &v) || !(v >= 0) || !(v <= 1e15))
      return fs__cli_usage(cmd, "--packet-bytes must be a size >= 0 (suffixes K M G), got '%s'",
                           packet_bytes);
    tp->packet_bytes = v;
  }
  if (connections && tp->kind == FS_TRANSPORT_FLUID)
    return fs__cli_usage(cmd, "--connections %s: connections are tcp's and rdma's, and the "
                         "transport is fluid (give --transport tcp or rdma)", connections);
  fs_transport_key bad;
  fs_err why = {0, ""};
  if (fs_transport_combine(tp, rate_control, given, &bad, &why) == 0) return 0;
  if (flags[bad] && value[bad])
    return fs__cli_usage(cmd, "%s %s: %s", flags[bad], value[bad], why.msg);
  return fs__cli_usage(cmd, "the transport's %s: %s", fs_transport_key_name(bad), why.msg);
}

int fs__cli_output_open(const char *path, fs_output **o) {
  fs_err err = {0, ""};
  if (fs_output_open(path, o, &err)) {
    fs__cli_error("fabricsim: %s", err.msg);
    return 2;
  }
  return 0;
}

int fs__cli_output_commit(fs_output *o) {
  fs_err err = {0, ""};
  if (fs_output_commit(o, &err)) {
    fs__cli_error("fabricsim: %s", err.msg);
    return 1;
  }
  return 0;
}

int fs__cli_output_write(fs_output *o, fs__cli_write_fn fn, void *ctx) {
  errno = 0;
  int rc = fn(fs_output_file(o), ctx);
  if (rc) {
    int e = errno; /* a failed write's reason, when that is what failed */
    fs__cli_error("fabricsim: %s: write failed: %s", fs_output_path(o),
            rc == FS_EIO && e ? strerror(e) : fs_strerror(rc));
    fs_output_abort(o);
    return 1;
  }
  return fs__cli_output_commit(o);
}

int fs__cli_stdout_done(const char *cmd, int rc) {
  if (rc || fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "fabricsim: %s: error writing output\n", cmd);
    return 1;
  }
  return 0;
}

int fs__cli_format(const char *cmd, const char *given, const char *offered, int *fmt) {
  static const char *const names[] = {"text", "json", "csv"};
  int want = strcmp(given, "table") == 0 ? FS__FMT_TEXT : -1;
  for (int k = 0; k < 3 && want < 0; k++)
    if (strcmp(given, names[k]) == 0) want = k;
  if (want >= 0 && strstr(offered, names[want])) {
    *fmt = want;
    return -1;
  }
  char list[64] = "";
  int n = 0, total = 0;
  for (int k = 0; k < 3; k++) total += strstr(offered, names[k]) != NULL;
  for (int k = 0; k < 3; k++)
    if (strstr(offered, names[k])) {
      size_t len = strlen(list);
      snprintf(list + len, sizeof(list) - len, "%s%s", n == 0 ? "" : n + 1 == total ? " or " : ", ",
               names[k]);
      n++;
    }
  return fs__cli_usage(cmd, "--format must be %s%s, got '%s'", list,
                       strstr(offered, "text") ? " (table is text)" : "", given);
}
