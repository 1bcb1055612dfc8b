/* The results database of a sweep (sweep.h), in SQLite.
 *
 * Tables: `sweep` (key, value): the definition's digest, so that a database
 * is resumed only by its own sweep; `points`: `point` (0-based index, the
 * key), one column per axis named by its path (numbers as REAL, other
 * values as their JSON text), `status` ('todo', 'done', 'failed'),
 * `error`, `wall_s` and the figures. Every result is one UPDATE in its own
 * transaction, and SQLite's journal makes each either wholly there or not
 * after a kill: a re-run redoes only the points still 'todo'. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../base/base.h"
#include "fabricsim/sweep.h"

struct fs_sweep_db {
  sqlite3 *db;
  const fs_sweep *sw;
  sqlite3_stmt *put;
  char file[256];
};

static int db_fail(fs_sweep_db *d, fs_err *err, const char *what) {
  return fs_err_set(err, FS_EIO, "%s: %s: %s", d->file, what, sqlite3_errmsg(d->db));
}

/* "name" with embedded quotes doubled: an SQL identifier. */
static void quote_id(char *buf, size_t n, const char *name) {
  size_t k = 0;
  if (k < n) buf[k++] = '"';
  for (const char *c = name; *c && k + 3 < n; c++) {
    if (*c == '"') buf[k++] = '"';
    buf[k++] = *c;
  }
  if (k < n) buf[k++] = '"';
  buf[k < n ? k : n - 1] = '\0';
}

static int exec(fs_sweep_db *d, const char *sql, fs_err *err) {
  if (sqlite3_exec(d->db, sql, NULL, NULL, NULL) != SQLITE_OK) return db_fail(d, err, sql);
  return 0;
}

/* Appends to a growing SQL text. */
typedef struct sbuf {
  char *s;
  size_t len, cap;
} sbuf;

static int sb_add(sbuf *b, const char *t) {
  size_t n = strlen(t);
  if (fs__grow(&b->s, &b->cap, b->len + n + 1, 1)) return FS_ENOMEM;
  memcpy(b->s + b->len, t, n + 1);
  b->len += n;
  return 0;
}

static int create(fs_sweep_db *d, fs_err *err) {
  const fs_sweep *sw = d->sw;
  sbuf b = {NULL, 0, 0};
  char id[400];
  int rc = sb_add(&b, "CREATE TABLE points (point INTEGER PRIMARY KEY");
  for (int32_t a = 0; a < fs_sweep_n_axes(sw) && !rc; a++) {
    quote_id(id, sizeof(id), fs_sweep_axis_path(sw, a));
    rc = sb_add(&b, ", ") || sb_add(&b, id);
  }
  rc = rc || sb_add(&b, ", status TEXT NOT NULL, error TEXT, wall_s REAL");
  for (int32_t k = 0; k < fs_sweep_n_figs(sw) && !rc; k++) {
    quote_id(id, sizeof(id), fs_sweep_fig_name(sw, k));
    rc = sb_add(&b, ", ") || sb_add(&b, id) || sb_add(&b, " REAL");
  }
  rc = rc || sb_add(&b, ")");
  if (rc) {
    free(b.s);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  if ((rc = exec(d, "BEGIN", err)) || (rc = exec(d, b.s, err))) {
    free(b.s);
    return rc;
  }
  free(b.s);
  /* every point, 'todo', with its axis values */
  b = (sbuf){NULL, 0, 0};
  rc = sb_add(&b, "INSERT INTO points VALUES (?");
  for (int32_t a = 0; a < fs_sweep_n_axes(sw) && !rc; a++) rc = sb_add(&b, ", ?");
  rc = rc || sb_add(&b, ", 'todo', NULL, NULL");
  for (int32_t k = 0; k < fs_sweep_n_figs(sw) && !rc; k++) rc = sb_add(&b, ", NULL");
  rc = rc || sb_add(&b, ")");
  sqlite3_stmt *ins = NULL;
  if (rc || sqlite3_prepare_v2(d->db, b.s, -1, &ins, NULL) != SQLITE_OK) {
    free(b.s);
    return rc ? fs_err_set(err, FS_ENOMEM, "out of memory") : db_fail(d, err, "insert");
  }
  free(b.s);
  for (int32_t p = 0; p < fs_sweep_n_points(sw) && !rc; p++) {
    sqlite3_reset(ins);
    sqlite3_bind_int(ins, 1, p);
    for (int32_t a = 0; a < fs_sweep_n_axes(sw) && !rc; a++) {
      char *v = fs_sweep_axis_value(sw, p, a), *end;
      if (!v) {
        rc = fs_err_set(err, FS_ENOMEM, "out of memory");
        break;
      }
      double x = strtod(v, &end);
      if (*v && !*end && isfinite(x)) sqlite3_bind_double(ins, 2 + a, x);
      else sqlite3_bind_text(ins, 2 + a, v, -1, SQLITE_TRANSIENT);
      free(v);
    }
    if (!rc && sqlite3_step(ins) != SQLITE_DONE) rc = db_fail(d, err, "insert");
  }
  sqlite3_finalize(ins);
  if (rc) return rc;
  char sql[160];
  snprintf(sql, sizeof(sql),
           "CREATE TABLE sweep (key TEXT PRIMARY KEY, value TEXT);"
           "INSERT INTO sweep VALUES ('digest', '%016llx')",
           (unsigned long long)fs_sweep_digest(sw));
  if ((rc = exec(d, sql, err))) return rc;
  return exec(d, "COMMIT", err);
}

int fs_sweep_db_open(const char *file, const fs_sweep *sw, fs_sweep_db **out, fs_err *err) {
  fs_sweep_db *d = calloc(1, sizeof(*d));
  if (!d) return fs_err_set(err, FS_ENOMEM, "out of memory");
  d->sw = sw;
  snprintf(d->file, sizeof(d->file), "%s", file);
  int rc = 0;
  /* SQLite writes FILE and FILE-journal: only ever a regular file (a
   * device or a link to nothing would be replaced or created beside) */
  struct stat st;
  if (lstat(file, &st) == 0) {
    if (stat(file, &st) != 0) {
      rc = fs_err_set(err, FS_EINVAL, "%s: a symbolic link to nothing; give the database itself",
                      file);
      goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
      rc = fs_err_set(err, FS_EINVAL, "%s: not a regular file; the sweep database must be one",
                      file);
      goto fail;
    }
  }
  if (sqlite3_open_v2(file, &d->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
      SQLITE_OK) {
    rc = db_fail(d, err, "cannot open");
    goto fail;
  }
  sqlite3_busy_timeout(d->db, 10000);
  sqlite3_stmt *q = NULL;
  if (sqlite3_prepare_v2(d->db, "SELECT value FROM sweep WHERE key = 'digest'", -1, &q, NULL) !=
      SQLITE_OK) {
    sqlite3_finalize(q);
    /* no sweep table: a new database, unless it holds something else */
    if ((rc = create(d, err))) goto fail;
  } else {
    char want[32];
    snprintf(want, sizeof(want), "%016llx", (unsigned long long)fs_sweep_digest(sw));
    int same = sqlite3_step(q) == SQLITE_ROW &&
               strcmp((const char *)sqlite3_column_text(q, 0), want) == 0;
    sqlite3_finalize(q);
    if (!same) {
      rc = fs_err_set(err, FS_EINVAL,
                      "%s: holds the results of another sweep (its base or axes differ); "
                      "give another --db",
                      file);
      goto fail;
    }
  }
  /* the update of one result */
  sbuf b = {NULL, 0, 0};
  char id[400];
  rc = sb_add(&b, "UPDATE points SET status = ?, error = ?, wall_s = ?");
  for (int32_t k = 0; k < fs_sweep_n_figs(sw) && !rc; k++) {
    quote_id(id, sizeof(id), fs_sweep_fig_name(sw, k));
    rc = sb_add(&b, ", ") || sb_add(&b, id) || sb_add(&b, " = ?");
  }
  rc = rc || sb_add(&b, " WHERE point = ?");
  if (rc || sqlite3_prepare_v2(d->db, b.s, -1, &d->put, NULL) != SQLITE_OK) {
    free(b.s);
    rc = rc ? fs_err_set(err, FS_ENOMEM, "out of memory") : db_fail(d, err, "update");
    goto fail;
  }
  free(b.s);
  *out = d;
  return 0;
fail:
  fs_sweep_db_close(d);
  return rc;
}

void fs_sweep_db_close(fs_sweep_db *d) {
  if (!d) return;
  sqlite3_finalize(d->put);
  sqlite3_close(d->db);
  free(d);
}

int32_t fs_sweep_db_todo(fs_sweep_db *d, int32_t *todo, fs_err *err) {
  sqlite3_stmt *q = NULL;
  if (sqlite3_prepare_v2(d->db, "SELECT point FROM points WHERE status = 'todo' ORDER BY point",
                         -1, &q, NULL) != SQLITE_OK)
    return db_fail(d, err, "select");
  int32_t n = 0;
  int st;
  while ((st = sqlite3_step(q)) == SQLITE_ROW && n < fs_sweep_n_points(d->sw))
    todo[n++] = sqlite3_column_int(q, 0);
  sqlite3_finalize(q);
  if (st != SQLITE_DONE && st != SQLITE_ROW) return db_fail(d, err, "select");
  return n;
}

int32_t fs_sweep_db_failed(fs_sweep_db *d, fs_err *err) {
  sqlite3_stmt *q = NULL;
  if (sqlite3_prepare_v2(d->db, "SELECT COUNT(*) FROM points WHERE status = 'failed'", -1, &q,
                         NULL) != SQLITE_OK)
    return db_fail(d, err, "select");
  int32_t n = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int(q, 0) : -1;
  sqlite3_finalize(q);
  return n < 0 ? db_fail(d, err, "select") : n;
}

int fs_sweep_db_put(fs_sweep_db *d, const fs_sweep_result *r, fs_err *err) {
  sqlite3_stmt *u = d->put;
  sqlite3_reset(u);
  sqlite3_bind_text(u, 1, r->ok ? "done" : "failed", -1, SQLITE_STATIC);
  if (r->ok) sqlite3_bind_null(u, 2);
  else sqlite3_bind_text(u, 2, r->error, -1, SQLITE_TRANSIENT);
  sqlite3_bind_double(u, 3, r->wall_s);
  int32_t nf = fs_sweep_n_figs(d->sw);
  for (int32_t k = 0; k < nf; k++) {
    if (r->ok && isfinite(r->fig[k])) sqlite3_bind_double(u, 4 + k, r->fig[k]);
    else sqlite3_bind_null(u, 4 + k);
  }
  sqlite3_bind_int(u, 4 + nf, r->point);
  if (sqlite3_step(u) != SQLITE_DONE) return db_fail(d, err, "update");
  return 0;
}

int fs_sweep_db_csv(fs_sweep_db *d, FILE *f, fs_err *err) {
  sqlite3_stmt *q = NULL;
  int rc = 0;
  if (sqlite3_prepare_v2(d->db, "SELECT * FROM points ORDER BY point", -1, &q, NULL) != SQLITE_OK) {
    rc = db_fail(d, err, "select");
  } else {
    int nc = sqlite3_column_count(q);
    for (int i = 0; i < nc; i++) {
      if (i) fputc(',', f);
      fs__csv_field(f, sqlite3_column_name(q, i));
    }
    fputc('\n', f);
    int st;
    while ((st = sqlite3_step(q)) == SQLITE_ROW) {
      for (int i = 0; i < nc; i++) {
        if (i) fputc(',', f);
        if (sqlite3_column_type(q, i) == SQLITE_FLOAT) {
          char num[40];
          fs__fmt_num(num, sqlite3_column_double(q, i));
          fputs(num, f);
        } else if (sqlite3_column_type(q, i) != SQLITE_NULL) {
          fs__csv_field(f, (const char *)sqlite3_column_text(q, i));
        }
      }
      fputc('\n', f);
    }
    if (st != SQLITE_DONE) rc = db_fail(d, err, "select");
  }
  sqlite3_finalize(q);
  return rc;
}
