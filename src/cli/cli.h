/* The subcommands of the fabricsim CLI. Each takes the arguments after its
 * name and returns the process exit status: 0 success, 1 internal failure,
 * 2 bad input or usage. Only the CLI prints or exits. Each parses its
 * options with its table in opts.h; main.c dispatches to them. */
#ifndef FABRICSIM_CLI_H
#define FABRICSIM_CLI_H

#include <stdio.h>
#include <time.h>

#include "fabricsim/err.h"
#include "fabricsim/output.h"
#include "fabricsim/sim.h"

int fs__cli_topo(int argc, char **argv);
int fs__cli_sim(int argc, char **argv);
int fs__cli_coll(int argc, char **argv);
int fs__cli_train(int argc, char **argv);
int fs__cli_route(int argc, char **argv);
/* `fabricsim ocs SUB`: ocs.c dispatches to one file per subcommand. */
int fs__cli_ocs(int argc, char **argv);
int fs__cli_ocs_topo(int argc, char **argv);     /* ocs_topo.c */
int fs__cli_ocs_schedule(int argc, char **argv); /* ocs_schedule.c */
int fs__cli_ocs_tpu(int argc, char **argv);      /* ocs_tpu.c */
int fs__cli_wan(int argc, char **argv);          /* wan.c */
int fs__cli_wan_protect(int argc, char **argv);  /* wan_protect.c */
int fs__cli_wan_dynamic(int argc, char **argv);  /* wan_dynamic.c */
int fs__cli_sweep(int argc, char **argv);        /* sweep.c */
int fs__cli_chakra(int argc, char **argv);       /* chakra.c */
int fs__cli_jobs(int argc, char **argv);         /* jobs.c */

/* Jupiter's topology engineering for a job's own traffic between its
 * blocks (topo.c; `topo --demand-from-job`, `train --demand-from-job`):
 * *out is the job's jupiter topology with its block links engineered. */
struct fs_job;
struct fs_topo;
int fs__cli_jupiter_engineer(const struct fs_job *job, struct fs_topo **out, fs_err *err);

/* The progress line of long runs (progress.c): start it, pass
 * fs__cli_progress_hook with the state as fs_sim_opts.progress, end it. */
typedef struct fs__cli_progress {
  const char *cmd;
  struct timespec t0;
  double last;
  int tty, printed;
} fs__cli_progress;
void fs__cli_progress_start(fs__cli_progress *p, const char *cmd);
void fs__cli_progress_hook(void *ctx, const fs_sim_progress *sp);
void fs__cli_progress_end(fs__cli_progress *p);
double fs__cli_progress_elapsed(const fs__cli_progress *p); /* seconds since start */

/* The memory a run may use (memory.c): strips --max-memory SIZE (anywhere
 * in argv) and sets the limit, 75 % of the machine's physical memory by
 * default. 0, or 2 after a message. */
int fs__cli_memory_setup(int *argc, char **argv);
double fs__cli_memory_limit(void); /* bytes; 0: none */
int fs__cli_memory_given(void);    /* 1 if --max-memory was given */

/* Option values (args.c): the whole string must be a number in [lo, hi]
 * (doubles also finite). 0, or -1 with *out untouched. */
int fs__cli_parse_long(const char *s, long lo, long hi, long *out);
int fs__cli_parse_double(const char *s, double lo, double hi, double *out);
/* A seed: a non-negative decimal integer of 64 bits. 0 or -1. */
int fs__cli_parse_seed(const char *s, unsigned long long *out);
/* A size in bytes with an optional suffix K, M or G (2^10, 2^20, 2^30;
 * either case) and an optional B: 0, or -1 if s is not one. */
int fs__cli_parse_size(const char *s, double *out);

/* --transport KIND, --connections new|persistent, --rate-control
 * dcqcn|dctcp|ideal and --packet-bytes N (any may be NULL) over the file's
 * transport *tp: a different kind takes that kind's defaults, with
 * persistent connections if `persistent` (coll and train: NCCL opens its
 * connections once, at initialisation); the rules of which combine are
 * fs_transport_combine's. 0, or 2 after printing a usage error for cmd
 * naming the option to blame. */
int fs__cli_transport(const char *cmd, const char *kind, const char *connections,
                      const char *rate_control, const char *packet_bytes, int persistent,
                      fs_transport *tp);

/* The help of --packet-bytes (opts.h), shared by the commands that take it. */
#define FS__CLI_PACKET_BYTES_HELP                                                          \
  "tcp, and rdma under --rate-control dcqcn: flows of at most N bytes (suffixes K M G) " \
  "run packet by packet beside the fluid ones (default 256K; 0: none; docs/model.md "    \
  "\"Small flows as packets\")"

/* The transport options of the commands that run NCCL-style collectives
 * over persistent connections (coll, train), as entries of an option table
 * (opts.h) whose cmdline type T has the const char * fields transport,
 * connections, rate_control and pkt (passed to fs__cli_transport). */
#define FS__CLI_NCCL_TRANSPORT_OPTS(T)                                                          \
  FS__OPT_STR("--transport", 0, offsetof(T, transport), "KIND",                                 \
              "fluid (default), tcp or rdma: packet effects in the engine (fabricsim sim "      \
              "--help), over what a job file gives"),                                           \
      FS__OPT_STR("--connections", 0, offsetof(T, connections), "new|persistent",               \
                  "tcp: persistent (default: NCCL connects once) or a new connection per "      \
                  "message"),                                                                   \
      FS__OPT_STR("--rate-control", 0, offsetof(T, rate_control), "dcqcn|dctcp|ideal",          \
                  "rdma: DCQCN's rate control, tcp: DCTCP's, or max-min at once (ideal, the "   \
                  "default; fabricsim sim --help)"),                                            \
      FS__OPT_STR("--packet-bytes", 0, offsetof(T, pkt), "N", FS__CLI_PACKET_BYTES_HELP)

/* Output files (args.c), through fabricsim/output.h, which says what
 * happens to an existing file, a link, a device or a pipe. Every output a
 * command takes is opened before any work, so a path that cannot take it
 * fails at once. fs__cli_output_open: 0, or 2 after printing "fabricsim:
 * PATH: why". fs__cli_output_commit puts the file in place and frees o: 0,
 * or 1 after printing why (the old file, if any, untouched).
 * fs__cli_output_write writes the file through fn(f, ctx) (0 or an FS_E*
 * code) and commits it, or aborts it if fn fails: 0, or 1 after printing
 * why; o is freed either way. */
typedef int (*fs__cli_write_fn)(FILE *f, void *ctx);
int fs__cli_output_open(const char *path, fs_output **o);
int fs__cli_output_commit(fs_output *o);
int fs__cli_output_write(fs_output *o, fs__cli_write_fn fn, void *ctx);
/* After a report written on stdout (rc: its result, 0 or FS_EIO): flushes
 * stdout and returns 0, or 1 after printing "fabricsim: CMD: error writing
 * output" if the report or the flush failed. */
int fs__cli_stdout_done(const char *cmd, int rc);
/* --format, one vocabulary for every command: text (the human-readable
 * table; "table" is the same), json, csv. offered: the ones cmd has,
 * e.g. "text json csv". -1 with *fmt set, or 2 after a usage error that
 * lists them. */
enum { FS__FMT_TEXT = 0, FS__FMT_JSON = 1, FS__FMT_CSV = 2 };
int fs__cli_format(const char *cmd, const char *given, const char *offered, int *fmt);

/* One error line on stderr (usage.c): printf's format, then a newline;
 * control characters and bytes that are not UTF-8 in the text are written
 * as \n, \t or \xHH, so the line is one line of text whatever the user
 * gave. fs__cli_error_text writes text so, without the newline. */
void fs__cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fs__cli_error_text(const char *text);

/* Failures (usage.c). Prints "fabricsim: MSG" on stderr and returns the
 * exit status for err's code: 2 bad input, 1 internal failure. */
int fs__cli_fail(const fs_err *err);
/* Prints "fabricsim CMD: MSG (see 'fabricsim CMD --help')" (a usage
 * error) on stderr and returns 2. */
int fs__cli_usage(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
