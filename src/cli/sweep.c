/* fabricsim sweep SWEEP.json --db FILE.sqlite [-j N] [--csv FILE]
 *
 * The coordinator (this process, or MPI rank 0) owns the database: it hands
 * out the points still to do and records each result as it comes. Workers
 * are forked processes talking over pipes (-j N), or MPI ranks (a build
 * with `make MPI=1` run under mpirun). A result is one fixed-size record,
 * smaller than PIPE_BUF, so a write is atomic. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef FS_MPI
#include <mpi.h>
#endif

#include "cli.h"
#include "opts.h"
#include "fabricsim/sweep.h"

_Static_assert(sizeof(fs_sweep_result) <= PIPE_BUF, "a result must fit one atomic pipe write");

/* What the command line gives; the initialiser holds the defaults. */
typedef struct cmdline {
  const char *in, *db, *csv;
  long jobs;
  int n_in;
} cmdline;

#define AT(f) offsetof(cmdline, f)
static const fs__opt sweep_opts[] = {
    FS__OPT_STR("--db", 0, AT(db), "FILE", "the results database (created if missing)"),
    FS__OPT_LONG(NULL, 'j', AT(jobs), "N", 1, 64, "-j must be in [1, 64]",
                 "points in parallel, in N worker processes (default 1)"),
    FS__OPT_STR("--csv", 0, AT(csv), "FILE", "also write the table as CSV ('-': stdout)"),
    FS__OPT_END};

static const fs__cmd sweep_cmd = {
    "sweep", "SWEEP.json --db FILE.sqlite [-j N] [--csv FILE]",
    "Runs every point of a parameter sweep (docs/formats.md, \"Sweeps\") and records the "
    "results in SQLite (table points: one column per axis, status, error, the figures). A "
    "re-run resumes: points done or failed are skipped.",
    "Under MPI (make MPI=1; mpirun -n N fabricsim sweep ...) rank 0 hands out\n"
    "the points and writes; ranks 1..N-1 run them.\n",
    sweep_opts, "SWEEP.json", "sweep file", 1, 1, AT(in), AT(n_in)};
#undef AT

typedef struct tally {
  int32_t done, failed, total;
  double t0;
  fs__cli_progress pr;
  double last;
} tally;

static void progress(tally *t, int force) {
  double e = fs__cli_progress_elapsed(&t->pr);
  if (!force && e - t->last < (t->pr.tty ? 0.2 : 10.0)) return;
  t->last = e;
  int32_t n = t->done + t->failed;
  double eta = n > 0 ? e / n * (t->total - n) : 0;
  fprintf(stderr, "%sfabricsim sweep: %d/%d points, %d failed, %.1f s, ETA %.0f s%s",
          t->pr.tty ? "\r" : "", n, t->total, t->failed, e, eta, t->pr.tty ? "   " : "\n");
  t->pr.printed = 1;
}

static int record(fs_sweep_db *db, tally *t, const fs_sweep_result *r, fs_err *err) {
  int rc = fs_sweep_db_put(db, r, err);
  if (r->ok) t->done++;
  else t->failed++;
  progress(t, 0);
  return rc;
}

/* One worker: reads point indices, writes results, until the pipe closes. */
static void worker(const fs_sweep *sw, int in, int out) {
  int32_t p;
  for (;;) {
    ssize_t n = read(in, &p, sizeof(p));
    if (n == 0) break;
    if (n != (ssize_t)sizeof(p)) {
      if (n < 0 && errno == EINTR) continue;
      break;
    }
    fs_sweep_result r;
    if (fs_sweep_run_point(sw, p, &r)) {
      memset(&r, 0, sizeof(r));
      r.point = p;
      snprintf(r.error, sizeof(r.error), "out of memory");
    }
    if (write(out, &r, sizeof(r)) != (ssize_t)sizeof(r)) break;
  }
}

typedef struct wk {
  pid_t pid;
  int to, from;  /* pipe ends: point indices out, results in */
  int32_t busy;  /* the point it runs, or -1 */
} wk;

static int run_forked(const fs_sweep *sw, fs_sweep_db *db, const int32_t *todo, int32_t n,
                      int32_t jobs, tally *t, fs_err *err) {
  wk w[64];
  int32_t nw = jobs < n ? jobs : n, next = 0, live = 0;
  int rc = 0;
  fflush(NULL);
  for (int32_t k = 0; k < nw; k++) {
    int a[2], b[2];
    if (pipe(a) || pipe(b)) return fs_err_set(err, FS_EIO, "sweep: pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) return fs_err_set(err, FS_EIO, "sweep: fork: %s", strerror(errno));
    if (pid == 0) {
      close(a[1]);
      close(b[0]);
      for (int32_t j = 0; j < k; j++) close(w[j].to), close(w[j].from);
      worker(sw, a[0], b[1]);
      _exit(0);
    }
    close(a[0]);
    close(b[1]);
    w[k] = (wk){pid, a[1], b[0], -1};
    live++;
  }
  for (int32_t k = 0; k < nw; k++) {
    if (next < n) {
      w[k].busy = todo[next++];
      if (write(w[k].to, &w[k].busy, sizeof(int32_t)) != (ssize_t)sizeof(int32_t)) w[k].busy = -1;
    }
    if (w[k].busy < 0) close(w[k].to), w[k].to = -1;
  }
  while (live > 0 && !rc) {
    struct pollfd pf[64];
    int32_t idx[64], np = 0;
    for (int32_t k = 0; k < nw; k++)
      if (w[k].from >= 0) pf[np] = (struct pollfd){w[k].from, POLLIN, 0}, idx[np++] = k;
    if (poll(pf, (nfds_t)np, -1) < 0) {
      if (errno == EINTR) continue;
      rc = fs_err_set(err, FS_EIO, "sweep: poll: %s", strerror(errno));
      break;
    }
    for (int32_t i = 0; i < np && !rc; i++) {
      if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      wk *x = &w[idx[i]];
      fs_sweep_result r;
      ssize_t got = read(x->from, &r, sizeof(r));
      if (got != (ssize_t)sizeof(r)) {
        /* the worker died: its point failed, the others go on */
        if (x->busy >= 0) {
          memset(&r, 0, sizeof(r));
          r.point = x->busy;
          snprintf(r.error, sizeof(r.error), "the worker process died");
          rc = record(db, t, &r, err);
        }
        close(x->from);
        x->from = -1;
        if (x->to >= 0) close(x->to), x->to = -1;
        live--;
        continue;
      }
      rc = record(db, t, &r, err);
      x->busy = -1;
      if (next < n && x->to >= 0) {
        x->busy = todo[next++];
        if (write(x->to, &x->busy, sizeof(int32_t)) != (ssize_t)sizeof(int32_t)) x->busy = -1;
      }
      if (x->busy < 0 && x->to >= 0) close(x->to), x->to = -1;
    }
  }
  for (int32_t k = 0; k < nw; k++) {
    if (w[k].to >= 0) close(w[k].to);
    if (w[k].from >= 0) close(w[k].from);
    if (rc) kill(w[k].pid, SIGTERM);
    waitpid(w[k].pid, NULL, 0);
  }
  return rc;
}

#ifdef FS_MPI
enum { TAG_POINT = 1, TAG_RESULT = 2 };

static void mpi_worker(const fs_sweep *sw) {
  for (;;) {
    int32_t p;
    MPI_Recv(&p, 1, MPI_INT32_T, 0, TAG_POINT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (p < 0) break;
    fs_sweep_result r;
    if (fs_sweep_run_point(sw, p, &r)) {
      memset(&r, 0, sizeof(r));
      r.point = p;
      snprintf(r.error, sizeof(r.error), "out of memory");
    }
    MPI_Send(&r, (int)sizeof(r), MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
  }
}

static int mpi_coordinator(fs_sweep_db *db, const int32_t *todo, int32_t n, int size, tally *t,
                           fs_err *err) {
  int32_t next = 0, out = 0, stop = -1;
  int rc = 0;
  for (int k = 1; k < size; k++) {
    if (next < n) {
      MPI_Send(&todo[next++], 1, MPI_INT32_T, k, TAG_POINT, MPI_COMM_WORLD);
      out++;
    } else {
      MPI_Send(&stop, 1, MPI_INT32_T, k, TAG_POINT, MPI_COMM_WORLD);
    }
  }
  while (out > 0) {
    fs_sweep_result r;
    MPI_Status st;
    MPI_Recv(&r, (int)sizeof(r), MPI_BYTE, MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &st);
    out--;
    if (!rc) rc = record(db, t, &r, err);
    if (next < n && !rc) {
      MPI_Send(&todo[next++], 1, MPI_INT32_T, st.MPI_SOURCE, TAG_POINT, MPI_COMM_WORLD);
      out++;
    } else {
      MPI_Send(&stop, 1, MPI_INT32_T, st.MPI_SOURCE, TAG_POINT, MPI_COMM_WORLD);
    }
  }
  return rc;
}
#endif

/* Whether paths a and b name one file: the same inode if both exist, else
 * the same name in the same directory (the directories resolved). */
static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  const char *na = strrchr(a, '/'), *nb = strrchr(b, '/');
  na = na ? na + 1 : a;
  nb = nb ? nb + 1 : b;
  if (strcmp(na, nb) != 0) return 0;
  char da[4096], db[4096];
  snprintf(da, sizeof(da), "%.*s", na > a ? (int)(na - a) : 1, na > a ? a : ".");
  snprintf(db, sizeof(db), "%.*s", nb > b ? (int)(nb - b) : 1, nb > b ? b : ".");
  return stat(da, &sa) == 0 && stat(db, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

int fs__cli_sweep(int argc, char **argv) {
  cmdline o = {.jobs = 1};
  int go = fs__opts_parse(&sweep_cmd, &o, argc, argv);
  if (go >= 0) return go;
  const char *in = o.in, *dbfile = o.db, *csv = o.csv;
  long jobs = o.jobs;
  if (!dbfile) return fs__cli_usage("sweep", "--db FILE.sqlite is required");
  if (o.csv && same_file(o.csv, dbfile))
    return fs__cli_usage("sweep", "--csv '%s' is the database --db '%s'; give another file",
                         o.csv, dbfile);
  int rank = 0, size = 1;
#ifdef FS_MPI
  MPI_Init(NULL, NULL);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
#endif
  fs_err err = {0, ""};
  fs_sweep *sw = NULL;
  fs_sweep_db *db = NULL;
  int32_t *todo = NULL;
  fs_output *csv_out = NULL;
  int rc = fs_sweep_load(in, &sw, &err);
  int status = 0, running = 0;
  if (rc) goto out;
#ifdef FS_MPI
  if (rank > 0) {
    mpi_worker(sw);
    goto out;
  }
#endif
  /* the CSV is opened before any point runs, so a bad path costs nothing */
  if (csv && strcmp(csv, "-") != 0 && fs__cli_output_open(csv, &csv_out)) {
    status = 2;
    goto out;
  }
  if ((rc = fs_sweep_db_open(dbfile, sw, &db, &err))) goto out;
  todo = malloc((size_t)fs_sweep_n_points(sw) * sizeof(int32_t));
  if (!todo) {
    rc = fs_err_set(&err, FS_ENOMEM, "out of memory");
    goto out;
  }
  int32_t n = fs_sweep_db_todo(db, todo, &err);
  if (n < 0) {
    rc = n;
    goto out;
  }
  running = 1; /* (an I/O failure from here on is the run's, not the input's: status 1) */
  tally t = {0, 0, n, 0, {0}, 0};
  fs__cli_progress_start(&t.pr, "sweep");
  if (fs_sweep_n_points(sw) > n)
    fprintf(stderr, "fabricsim sweep: resuming: %d of %d points already recorded\n",
            fs_sweep_n_points(sw) - n, fs_sweep_n_points(sw));
  if (size > 1) {
#ifdef FS_MPI
    rc = mpi_coordinator(db, todo, n, size, &t, &err);
#endif
  } else if (jobs > 1 && n > 1) {
    rc = run_forked(sw, db, todo, n, (int32_t)jobs, &t, &err);
  } else {
    for (int32_t i = 0; i < n && !rc; i++) {
      fs_sweep_result r;
      if ((rc = fs_sweep_run_point(sw, todo[i], &r))) {
        rc = fs_err_set(&err, rc, "out of memory");
        break;
      }
      rc = record(db, &t, &r, &err);
    }
  }
  progress(&t, 1);
  fs__cli_progress_end(&t.pr);
  if (!rc && csv_out) {
    if ((rc = fs_sweep_db_csv(db, fs_output_file(csv_out), &err)) == 0) {
      status = fs__cli_output_commit(csv_out);
      csv_out = NULL;
    }
  } else if (!rc && csv) {
    rc = fs_sweep_db_csv(db, stdout, &err);
    if (!rc && fflush(stdout) != 0) rc = fs_err_set(&err, FS_EIO, "stdout: write failed");
  }
  /* (the table is written; points that failed make the sweep's status 3,
   * docs/formats.md "Exit status") */
  int32_t failed = !rc && !status && db ? fs_sweep_db_failed(db, &err) : 0;
  if (failed < 0) rc = failed;
  else if (failed > 0) {
    fprintf(stderr, "fabricsim sweep: %d of %d points failed (their errors are in %s)\n", failed,
            fs_sweep_n_points(sw), dbfile);
    status = 3;
  }
out:
  fs_output_abort(csv_out);
  if (rc) status = fs__cli_fail(&err);
  if (rc == FS_EIO && running) status = 1;
#ifdef FS_MPI
  MPI_Finalize();
#endif
  fs_sweep_db_close(db);
  fs_sweep_free(sw);
  free(todo);
  (void)rank;
  return status;
}
