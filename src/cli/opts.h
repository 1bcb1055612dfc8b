/* The option table of the CLI (opts.c): each subcommand declares its
 * options once, as a static table of fs__opt entries (long name, short
 * alias, kind of value, where it goes, the value's placeholder, the help
 * line, the range and the message of a bad value), and one parser walks
 * it; the same table prints the command's help. The model is git's
 * parse-options: data, not a chain of strcmp.
 *
 * The values land in the command's own options struct, at the offset the
 * entry gives, so a table is a static constant beside the command (no
 * pointers into a stack frame) and the struct's initialiser holds the
 * defaults. Tables are a few dozen entries: a linear search per argument
 * costs nothing next to the simulation it starts. */
#ifndef FABRICSIM_CLI_OPTS_H
#define FABRICSIM_CLI_OPTS_H

#include <stddef.h>
#include <stdio.h>

typedef enum fs__opt_kind {
  FS__OPT_FLAG,   /* no value: the int at off becomes 1 */
  FS__OPT_STR,    /* the value as given, into the const char * at off */
  FS__OPT_LONG,   /* a whole decimal long in [lo, hi] (fs__cli_parse_long) */
  FS__OPT_INT32,  /* the same, into an int32_t */
  FS__OPT_DOUBLE, /* a whole finite double in [lo, hi] (fs__cli_parse_double) */
  FS__OPT_FN      /* fn(value, field): 0, or -1 for a bad value (field untouched) */
} fs__opt_kind;

typedef int (*fs__opt_fn)(const char *value, void *field);
/* Which setting a value sets, as the offset of its field, for an option
 * whose value decides where it goes (coll's --op: a collective or a
 * reduction); NULL: the entry's off. */
typedef size_t (*fs__opt_key)(const char *value);

typedef struct fs__opt {
  const char *name; /* "--out", or NULL for an option with a short name only */
  char alias;       /* 'o' for -o, or 0; a table ends with !name && !alias */
  fs__opt_kind kind;
  size_t off;       /* offset of the field in the command's options struct */
  const char *arg;  /* the value's placeholder in help and messages; NULL: a flag */
  const char *help; /* one paragraph, wrapped when printed; '\n' breaks a line */
  double lo, hi;    /* LONG, INT32, DOUBLE: the accepted range */
  fs__opt_fn fn;    /* FN: converts and checks the value */
  /* A bad value's message, to which ", got 'VALUE'" is added: it names the
   * option and what it must be. */
  const char *bad;
  fs__opt_key key; /* NULL, or where a value goes (repeats are judged per setting) */
} fs__opt;

/* Table entries: ln the long name ("--out" or NULL), sh the short alias
 * (0 for none), off = offsetof(the command's struct, field). */
#define FS__OPT_FLAG(ln, sh, off, help) {ln, sh, FS__OPT_FLAG, off, NULL, help, 0, 0, NULL, NULL, NULL}
#define FS__OPT_STR(ln, sh, off, arg, help) {ln, sh, FS__OPT_STR, off, arg, help, 0, 0, NULL, NULL, NULL}
#define FS__OPT_LONG(ln, sh, off, arg, lo, hi, bad, help) \
  {ln, sh, FS__OPT_LONG, off, arg, help, lo, hi, NULL, bad, NULL}
#define FS__OPT_INT32(ln, sh, off, arg, lo, hi, bad, help) \
  {ln, sh, FS__OPT_INT32, off, arg, help, lo, hi, NULL, bad, NULL}
#define FS__OPT_DOUBLE(ln, sh, off, arg, lo, hi, bad, help) \
  {ln, sh, FS__OPT_DOUBLE, off, arg, help, lo, hi, NULL, bad, NULL}
#define FS__OPT_FN(ln, sh, off, arg, fn, bad, help) \
  {ln, sh, FS__OPT_FN, off, arg, help, 0, 0, fn, bad, NULL}
/* An FN option whose value decides which setting it is (key). */
#define FS__OPT_FN_KEYED(ln, sh, off, arg, fn, key, bad, help) \
  {ln, sh, FS__OPT_FN, off, arg, help, 0, 0, fn, bad, key}
#define FS__OPT_END {NULL, 0, FS__OPT_FLAG, 0, NULL, NULL, 0, 0, NULL, NULL, NULL}

/* A subcommand: its name in messages ("ocs schedule"), its usage line,
 * what it does, its options and its positional arguments. */
typedef struct fs__cmd {
  const char *name;  /* "sim", "ocs schedule" */
  const char *usage; /* after "fabricsim NAME ": "SCENARIO.json [options]" */
  const char *about; /* what it does: paragraphs ("\n\n" between), wrapped */
  const char *notes; /* printed as is after the options, or NULL */
  const fs__opt *opts;
  /* Positional arguments, stored in the const char * array at pos_off
   * (pos_max entries) with their count in the int at npos_off: at least
   * pos_min, at most pos_max (0: none taken). Messages name one as pos
   * when it is missing ("missing JOB.json") and in words, pos_desc, when
   * there is one too many ("one job file expected, got 'a' and 'b'"). */
  const char *pos, *pos_desc;
  int pos_min, pos_max;
  size_t pos_off, npos_off;
} fs__cmd;

/* Parses argv against c's table into the struct o (which holds the
 * defaults): `--opt value`, `--opt=value`, a short alias `-o value`,
 * flags, positionals. Returns -1 when the command should go on; 0 after
 * printing the help (--help, -h: usage line, paragraph, options, notes)
 * on stdout; 2 after printing a one-line
 * usage error on stderr ("fabricsim CMD: ... (see 'fabricsim CMD
 * --help')"): an unknown option, a missing or bad value, a value given to
 * a flag, a positional too many or missing. Fields of options not given
 * keep their defaults; on error o may be partly filled. */
int fs__opts_parse(const fs__cmd *c, void *o, int argc, char **argv);

/* A command made of subcommands (fabricsim itself, ocs, wan). */
typedef struct fs__sub {
  const char *name;    /* NULL ends a list */
  const char *args;    /* shown after the name in the list */
  const char *summary; /* one paragraph, wrapped */
  int (*run)(int argc, char **argv);
} fs__sub;

typedef struct fs__group {
  const char *name;  /* "ocs" */
  const char *about; /* one paragraph, wrapped */
  const fs__sub *subs;
} fs__group;

/* The list of subs, one entry each: name and args, then the summary. */
void fs__subs_help(const fs__sub *subs, FILE *f);
/* Runs the subcommand argv[0] with the rest. Nothing given: the group's
 * help (usage line, paragraph, the list of subcommands) on stderr, 2;
 * --help, -h or help: the help on stdout, 0; an unknown one: a usage
 * error, 2. Otherwise the subcommand's exit status. */
int fs__group_run(const fs__group *g, int argc, char **argv);

/* An FS__OPT_FN parser shared by commands: an unsigned long long seed
 * (fs__cli_parse_seed). */
int fs__opt_seed(const char *value, void *field);

#endif
