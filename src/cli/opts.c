/* One parser for every subcommand's options (opts.h): walks the command's
 * table for each argument, stores the value at the entry's offset in the
 * command's struct, and prints the help from the same table, so an option
 * is declared once and its help cannot drift from what is parsed.
 *
 * Accepted forms: `--opt value`, `--opt=value`, `-o value` (a short
 * alias), `--flag`, positionals (any argument not starting with '-', and
 * "-" itself). A value may start with '-' (`--seed -1` is a bad seed, not
 * an unknown option), as the per-command loops this replaced allowed.
 * Errors are one line through fs__cli_usage, exit status 2.
 *
 * Cost: a linear search of a table of at most ~30 entries per argument. */
#include <stdint.h>
#include <string.h>

#include "cli.h"
#include "opts.h"

enum { HELP_COL = 24, WIDTH = 79 };

/* Prints text word-wrapped to WIDTH columns, lines indented by indent;
 * the cursor is at column col (col <= indent, or 0 after a newline).
 * '\n' in text breaks the line. Ends with a newline. */
static void wrap(FILE *f, const char *text, int indent, int col) {
  int at = col, words = 0;
  for (const char *p = text; *p;) {
    if (*p == '\n') {
      fputc('\n', f);
      at = words = 0;
      p++;
      continue;
    }
    if (*p == ' ') {
      p++;
      continue;
    }
    int n = (int)strcspn(p, " \n");
    if (words && at + 1 + n > WIDTH) {
      fputc('\n', f);
      at = words = 0;
    }
    if (at < indent) {
      fprintf(f, "%*s", indent - at, "");
      at = indent;
    } else if (words) {
      fputc(' ', f);
      at++;
    }
    fwrite(p, 1, (size_t)n, f);
    at += n;
    words++;
    p += n;
  }
  fputc('\n', f);
}

/* One entry of a help list: the left part, then the text in its column
 * (or on the next line when the left part is too wide). */
static void help_item(FILE *f, const char *left, const char *text) {
  int n = fprintf(f, "%s", left);
  if (n >= HELP_COL - 1) {
    fputc('\n', f);
    n = 0;
  }
  wrap(f, text, HELP_COL, n);
}

static void opts_help(const fs__cmd *c, FILE *f) {
  fprintf(f, "usage: fabricsim %s %s\n\n", c->name, c->usage);
  wrap(f, c->about, 0, 0);
  fprintf(f, "\noptions:\n");
  for (const fs__opt *o = c->opts; o->name || o->alias; o++) {
    char left[96], alias[8] = "";
    if (o->alias) snprintf(alias, sizeof(alias), "-%c%s", o->alias, o->name ? ", " : "");
    snprintf(left, sizeof(left), "  %s%s%s%s", alias, o->name ? o->name : "", o->arg ? " " : "",
             o->arg ? o->arg : "");
    help_item(f, left, o->help);
  }
  help_item(f, "  -h, --help", "print this help");
  if (c->notes) fprintf(f, "\n%s", c->notes);
}

/* The entry arg names: "--name", "--name=value" or "-a"; *value is the
 * part after '=' or NULL. NULL if none. */
static const fs__opt *find(const fs__opt *opts, const char *arg, const char **value) {
  *value = NULL;
  if (arg[1] != '-') {
    for (const fs__opt *o = opts; o->name || o->alias; o++)
      if (o->alias && arg[1] == o->alias && !arg[2]) return o;
    return NULL;
  }
  size_t n = strcspn(arg, "=");
  for (const fs__opt *o = opts; o->name || o->alias; o++)
    if (o->name && strlen(o->name) == n && strncmp(o->name, arg, n) == 0) {
      if (arg[n] == '=') *value = arg + n + 1;
      return o;
    }
  return NULL;
}

/* Stores value into the field of o: 0, or -1 if it is not one. */
static int store(const fs__opt *e, void *field, const char *value) {
  long l;
  switch (e->kind) {
  case FS__OPT_FLAG:
    *(int *)field = 1;
    return 0;
  case FS__OPT_STR:
    *(const char **)field = value;
    return 0;
  case FS__OPT_LONG:
    return fs__cli_parse_long(value, (long)e->lo, (long)e->hi, (long *)field);
  case FS__OPT_INT32:
    if (fs__cli_parse_long(value, (long)e->lo, (long)e->hi, &l)) return -1;
    *(int32_t *)field = (int32_t)l;
    return 0;
  case FS__OPT_DOUBLE:
    return fs__cli_parse_double(value, e->lo, e->hi, (double *)field);
  case FS__OPT_FN:
    return e->fn(value, field);
  }
  return -1;
}

/* An argument that is no option: the next positional, if one is left. */
static int positional(const fs__cmd *c, void *o, const char *arg) {
  if (c->pos_max == 0) return fs__cli_usage(c->name, "unexpected argument '%s'", arg);
  const char **pos = (const char **)((char *)o + c->pos_off);
  int *n = (int *)((char *)o + c->npos_off);
  if (*n == c->pos_max && c->pos_max == 1)
    return fs__cli_usage(c->name, "one %s expected, got '%s' and '%s'", c->pos_desc, pos[0],
                         arg);
  if (*n == c->pos_max)
    return fs__cli_usage(c->name, "at most %d %ss, got '%s' too", c->pos_max, c->pos_desc, arg);
  pos[(*n)++] = arg;
  return -1;
}

/* The option as the user wrote it ("--out", "-o"), without "=value". */
static const char *spelled(const char *arg, char *buf, size_t n) {
  snprintf(buf, n, "%.*s", (int)strcspn(arg, "="), arg);
  return buf;
}

/* The values given so far, one per setting (field offset): a setting given
 * twice with two values, or by two options that set the same field
 * (--delay and --delay-ns), is a conflict, not "the last one wins". */
enum { MAX_GIVEN = 64 };
typedef struct given_opt {
  size_t off;
  const char *as, *value; /* the option as spelled, the value */
} given_opt;

static int note_given(const fs__cmd *c, given_opt *g, int *ng, size_t off, const char *as,
                      const char *value) {
  for (int k = 0; k < *ng; k++) {
    if (g[k].off != off) continue;
    if (strcmp(g[k].value, value) == 0) return -1; /* (the same value, however spelled) */
    if (strcmp(g[k].as, as) == 0)
      return fs__cli_usage(c->name, "%s given twice, '%s' and '%s'", as, g[k].value, value);
    return fs__cli_usage(c->name, "%s '%s' conflicts with %s '%s'", as, value, g[k].as,
                         g[k].value);
  }
  if (*ng < MAX_GIVEN) g[(*ng)++] = (given_opt){off, as, value};
  return -1;
}

int fs__opts_parse(const fs__cmd *c, void *o, int argc, char **argv) {
  given_opt given_list[MAX_GIVEN];
  char names[MAX_GIVEN][48];
  int ngiven = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *v;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      opts_help(c, stdout);
      return 0;
    }
    if (!a[0])
      return fs__cli_usage(c->name, "an empty argument ('') where %s or an option goes",
                           c->pos_max ? c->pos : "an option");
    if (a[0] != '-' || !a[1]) {
      int rc = positional(c, o, a);
      if (rc >= 0) return rc;
      continue;
    }
    const fs__opt *e = find(c->opts, a, &v);
    if (!e) return fs__cli_usage(c->name, "unknown option '%.*s'", (int)strcspn(a, "="), a);
    int given = v != NULL;
    char as[48];
    spelled(a, as, sizeof(as));
    if (!e->arg && given) return fs__cli_usage(c->name, "%s takes no value", as);
    if (e->arg && !given) {
      if (i + 1 >= argc) return fs__cli_usage(c->name, "%s needs a value (%s)", as, e->arg);
      v = argv[++i];
    }
    if (e->arg && !v[0]) return fs__cli_usage(c->name, "%s needs a value (%s), got ''", as, e->arg);
    if (e->arg) {
      snprintf(names[ngiven < MAX_GIVEN ? ngiven : MAX_GIVEN - 1], 48, "%s", as);
      int rc = note_given(c, given_list, &ngiven, e->key ? e->key(v) : e->off,
                          names[ngiven < MAX_GIVEN ? ngiven : MAX_GIVEN - 1], v);
      if (rc >= 0) return rc;
    }
    if (store(e, (char *)o + e->off, v))
      return fs__cli_usage(c->name, "%s, got '%s'", e->bad, v);
  }
  int n = c->pos_max ? *(const int *)((const char *)o + c->npos_off) : 0;
  if (n < c->pos_min) return fs__cli_usage(c->name, "missing %s", c->pos);
  return -1;
}

void fs__subs_help(const fs__sub *subs, FILE *f) {
  for (const fs__sub *s = subs; s->name; s++) {
    char left[96];
    snprintf(left, sizeof(left), "  %s%s%s", s->name, s->args ? " " : "", s->args ? s->args : "");
    help_item(f, left, s->summary);
  }
}

static void group_help(const fs__group *g, FILE *f) {
  fprintf(f, "usage: fabricsim %s SUB [ARGS]\n\n", g->name);
  wrap(f, g->about, 0, 0);
  fprintf(f, "\nsubcommands:\n");
  fs__subs_help(g->subs, f);
  char run[160];
  snprintf(run, sizeof(run),
           "Run 'fabricsim %s SUB --help' (or 'fabricsim help %s SUB') for the options of "
           "each.", g->name, g->name);
  fputc('\n', f);
  wrap(f, run, 0, 0);
}

int fs__group_run(const fs__group *g, int argc, char **argv) {
  if (argc < 1) {
    char list[160] = "";
    for (const fs__sub *s = g->subs; s->name; s++) {
      size_t len = strlen(list);
      snprintf(list + len, sizeof(list) - len, "%s%s", len ? (s[1].name ? ", " : " or ") : "",
               s->name);
    }
    return fs__cli_usage(g->name, "missing subcommand (%s)", list);
  }
  const char *sub = argv[0];
  for (const fs__sub *s = g->subs; s->name; s++)
    if (strcmp(sub, s->name) == 0) return s->run(argc - 1, argv + 1);
  if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
    group_help(g, stdout);
    return 0;
  }
  return fs__cli_usage(g->name, "unknown subcommand '%s'", sub);
}

int fs__opt_seed(const char *value, void *field) {
  return fs__cli_parse_seed(value, (unsigned long long *)field);
}
