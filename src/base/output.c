/* Output files written safely (include/fabricsim/output.h has the rules).
 *
 * The dangerous case this exists for: run as root, writing a temporary file
 * and renaming it over the target replaces whatever the target was, so
 * `--out /dev/null` would have put a regular file in place of /dev/null and
 * `--out link` a file in place of the link. Here the target is looked at
 * first (lstat), links are followed to the file they name, and only a
 * regular file (or nothing) is ever replaced by a rename; devices and pipes
 * are written through.
 *
 * The registry: the paths of temporary files (and created directories) not
 * yet committed, in creation order, each with the pid that made it. It is
 * changed only with the usual termination signals blocked, so a handler
 * calling fs_output_cleanup() always sees it whole. A handful of entries in
 * the usual run; one per rank (10^4) while a Chakra export is written. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "fabricsim/output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "base.h"

struct fs_output {
  FILE *f;
  char *path;   /* as given, for messages */
  char *target; /* the file the temporary file is renamed over; NULL when written through */
  char *tmp;    /* the temporary file (registered); NULL when written through */
};

struct fs_output_dir {
  char **made; /* directories this call created, parents first (registered) */
  int32_t n_made;
  size_t cap_made;
};

/* ---- the registry ----------------------------------------------------------- */

typedef struct reg_entry {
  char *path;
  pid_t pid;
  int is_dir;
} reg_entry;

static reg_entry *reg;
static size_t reg_n, reg_cap;

static void block_signals(sigset_t *old) {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGHUP);
  sigaddset(&s, SIGQUIT);
  sigaddset(&s, SIGPIPE);
  sigprocmask(SIG_BLOCK, &s, old);
}

static void restore_signals(const sigset_t *old) { sigprocmask(SIG_SETMASK, old, NULL); }

/* 0, or FS_ENOMEM (nothing registered). The registry borrows path. */
static int reg_add(char *path, int is_dir) {
  sigset_t old;
  block_signals(&old);
  int rc = fs__grow(&reg, &reg_cap, reg_n + 1, sizeof(*reg));
  if (!rc) reg[reg_n++] = (reg_entry){path, getpid(), is_dir};
  restore_signals(&old);
  return rc;
}

/* Forgets path (by address), keeping the others in creation order. */
static void reg_remove(const char *path) {
  sigset_t old;
  block_signals(&old);
  for (size_t i = reg_n; i-- > 0;)
    if (reg[i].path == path) {
      memmove(&reg[i], &reg[i + 1], (reg_n - i - 1) * sizeof(*reg));
      reg_n--;
      break;
    }
  restore_signals(&old);
}

/* Whether path is (the same file as) a registered file of this process. */
static int reg_has_file(const char *path) {
  struct stat a, b;
  if (stat(path, &a) != 0) return 0;
  pid_t me = getpid();
  for (size_t i = 0; i < reg_n; i++)
    if (reg[i].pid == me && !reg[i].is_dir && stat(reg[i].path, &b) == 0 &&
        a.st_dev == b.st_dev && a.st_ino == b.st_ino)
      return 1;
  return 0;
}

void fs_output_cleanup(void) {
  pid_t me = getpid();
  /* newest first: a directory's files go before the directory */
  for (size_t i = reg_n; i-- > 0;) {
    if (reg[i].pid != me) continue;
    if (reg[i].is_dir) rmdir(reg[i].path);
    else unlink(reg[i].path);
  }
}

/* ---- files -------------------------------------------------------------------- */

static void output_free(fs_output *o) {
  if (!o) return;
  FS__FREE_ALL(o->path, o->target, o->tmp, o);
}

/* Whether st is the file behind this process's stdout or stderr. */
static int is_std_stream(const struct stat *st, int *fd) {
  for (int k = 1; k <= 2; k++) {
    struct stat s;
    if (fstat(k, &s) == 0 && s.st_dev == st->st_dev && s.st_ino == st->st_ino) {
      *fd = k;
      return 1;
    }
  }
  return 0;
}

/* Opens o->path for writing through (no O_CREAT: it exists). fd_std >= 0:
 * a duplicate of that descriptor instead, at its own offset. */
static int open_through(fs_output *o, int fd_std, int truncate, fs_err *err) {
  int fd = fd_std >= 0 ? dup(fd_std)
                       : open(o->path, O_WRONLY | O_NOCTTY | (truncate ? O_TRUNC : 0));
  if (fd < 0)
    return fs_err_set(err, FS_EINVAL, "%s: cannot write: %s", o->path, strerror(errno));
  o->f = fdopen(fd, "w");
  if (!o->f) {
    close(fd);
    return fs_err_set(err, FS_ENOMEM, "%s: cannot write: %s", o->path, strerror(errno));
  }
  return 0;
}

/* Creates the temporary file beside o->target (with the old file's mode
 * and, as root, owner, if `old`), registers it and opens o->f. */
static int open_tmp(fs_output *o, const struct stat *old, fs_err *err) {
  size_t n = strlen(o->target) + 48;
  o->tmp = malloc(n);
  if (!o->tmp) return fs_err_set(err, FS_ENOMEM, "%s: out of memory", o->path);
  int fd = -1;
  for (int k = 0; k < 100 && fd < 0; k++) {
    if (k == 0) snprintf(o->tmp, n, "%s.tmp.%ld", o->target, (long)getpid());
    else snprintf(o->tmp, n, "%s.tmp.%ld.%d", o->target, (long)getpid(), k);
    fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY, 0666);
    if (fd < 0 && errno != EEXIST) break;
    /* NAME.tmp.PID is this process's: the file is already an output of this
     * run, however its path was spelled (issue 45: --out F --trace F) */
    if (fd < 0 && k == 0 && reg_has_file(o->tmp)) {
      free(o->tmp);
      o->tmp = NULL;
      return fs_err_set(err, FS_EINVAL, "%s: already an output of this run; give another file",
                        o->path);
    }
  }
  if (fd < 0) {
    int e = errno;
    free(o->tmp);
    o->tmp = NULL;
    /* a file we may write in a directory we may not: write it in place */
    if ((e == EACCES || e == EPERM) && old && access(o->target, W_OK) == 0) {
      free(o->target);
      o->target = NULL;
      return open_through(o, -1, 1, err);
    }
    return fs_err_set(err, FS_EINVAL, "%s: cannot write: %s", o->path, strerror(e));
  }
  if (old) {
    if (fchmod(fd, old->st_mode & 07777) != 0) { /* best effort, as cp -p */
    }
    if (geteuid() == 0 && fchown(fd, old->st_uid, old->st_gid) != 0) {
    }
  }
  if (reg_add(o->tmp, 0)) {
    close(fd);
    unlink(o->tmp);
    return fs_err_set(err, FS_ENOMEM, "%s: out of memory", o->path);
  }
  o->f = fdopen(fd, "w");
  if (!o->f) {
    close(fd);
    reg_remove(o->tmp);
    unlink(o->tmp);
    return fs_err_set(err, FS_ENOMEM, "%s: cannot write: %s", o->path, strerror(errno));
  }
  return 0;
}

/* What is at path (links followed) decides how it is written. */
static int open_existing(fs_output *o, const struct stat *st, int is_link, fs_err *err) {
  const char *p = o->path;
  int fd_std;
  if (S_ISREG(st->st_mode) && is_std_stream(st, &fd_std)) return open_through(o, fd_std, 0, err);
  if (S_ISCHR(st->st_mode) || S_ISFIFO(st->st_mode)) return open_through(o, -1, 0, err);
  if (S_ISDIR(st->st_mode)) return fs_err_set(err, FS_EINVAL, "%s: is a directory", p);
  if (S_ISBLK(st->st_mode))
    return fs_err_set(err, FS_EINVAL, "%s: is a block device; not writing over it", p);
  if (!S_ISREG(st->st_mode))
    return fs_err_set(err, FS_EINVAL, "%s: is not a regular file, a device or a pipe", p);
  if (access(p, W_OK) != 0)
    return fs_err_set(err, FS_EINVAL, "%s: cannot write: %s", p, strerror(errno));
  /* root may write anything: a file nobody may write is still not replaced */
  if (!(st->st_mode & 0222))
    return fs_err_set(err, FS_EINVAL, "%s: is read-only (mode %04o); not replacing it", p,
                      (unsigned)(st->st_mode & 07777));
  if (is_link) {
    char *real = realpath(p, NULL);
    if (!real) return fs_err_set(err, FS_EINVAL, "%s: cannot follow: %s", p, strerror(errno));
    o->target = real;
  } else if (!(o->target = strdup(p))) {
    return fs_err_set(err, FS_ENOMEM, "%s: out of memory", p);
  }
  return open_tmp(o, st, err);
}

int fs_output_open(const char *path, fs_output **out, fs_err *err) {
  *out = NULL;
  if (!path || !*path) return fs_err_set(err, FS_EINVAL, "an output file name is empty");
  fs_output *o = calloc(1, sizeof(*o));
  if (!o || !(o->path = strdup(path))) {
    free(o);
    return fs_err_set(err, FS_ENOMEM, "%s: out of memory", path);
  }
  struct stat ls, st;
  int rc;
  if (lstat(path, &ls) != 0) {
    if (errno != ENOENT) {
      rc = fs_err_set(err, FS_EINVAL, "%s: cannot write: %s", path, strerror(errno));
    } else if (!(o->target = strdup(path))) {
      rc = fs_err_set(err, FS_ENOMEM, "%s: out of memory", path);
    } else {
      rc = open_tmp(o, NULL, err);
    }
  } else if (S_ISLNK(ls.st_mode)) {
    if (stat(path, &st) != 0)
      rc = errno == ENOENT
               ? fs_err_set(err, FS_EINVAL,
                            "%s: a symbolic link to nothing; not writing through it", path)
               : fs_err_set(err, FS_EINVAL, "%s: cannot follow: %s", path, strerror(errno));
    else
      rc = open_existing(o, &st, 1, err);
  } else {
    rc = open_existing(o, &ls, 0, err);
  }
  if (rc) {
    output_free(o);
    return rc;
  }
  *out = o;
  return 0;
}

FILE *fs_output_file(fs_output *o) { return o->f; }

const char *fs_output_path(const fs_output *o) { return o->path; }

static void drop_tmp(fs_output *o) {
  if (!o->tmp) return;
  unlink(o->tmp);
  reg_remove(o->tmp);
  free(o->tmp);
  o->tmp = NULL;
}

int fs_output_close(fs_output *o, fs_err *err) {
  if (!o->f) return 0;
  errno = 0;
  int bad = fflush(o->f) != 0 || ferror(o->f);
  int e = errno;
  if (fclose(o->f) != 0 && !bad) bad = 1, e = errno;
  o->f = NULL;
  if (!bad) return 0;
  drop_tmp(o);
  return fs_err_set(err, FS_EIO, "%s: write failed: %s", o->path,
                    e ? strerror(e) : "error writing");
}

int fs_output_commit(fs_output *o, fs_err *err) {
  int rc = fs_output_close(o, err);
  if (!rc && o->tmp) {
    /* what was a regular file (or nothing) when opened must still be one */
    struct stat st;
    if (lstat(o->target, &st) == 0 && !S_ISREG(st.st_mode)) {
      rc = fs_err_set(err, FS_EIO, "%s: is no longer a regular file; left as it is", o->path);
    } else if (rename(o->tmp, o->target) != 0) {
      rc = fs_err_set(err, FS_EIO, "%s: cannot put in place: %s", o->path, strerror(errno));
    } else {
      reg_remove(o->tmp);
      free(o->tmp);
      o->tmp = NULL;
    }
  }
  drop_tmp(o);
  output_free(o);
  return rc;
}

void fs_output_abort(fs_output *o) {
  if (!o) return;
  if (o->f) fclose(o->f);
  drop_tmp(o);
  output_free(o);
}

/* ---- directories ---------------------------------------------------------------- */

/* mkdir -p: creates path and its missing parents, appending each to
 * d->made (parents first). `whole` is the directory asked for, for messages. */
static int make_dirs(fs_output_dir *d, const char *path, const char *whole, fs_err *err) {
  struct stat st;
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return 0;
    return fs_err_set(err, FS_EINVAL, "%s: %s is not a directory", whole, path);
  }
  if (errno != ENOENT)
    return fs_err_set(err, FS_EINVAL, "%s: cannot create: %s", whole, strerror(errno));
  char *p = strdup(path);
  if (!p) return fs_err_set(err, FS_ENOMEM, "%s: out of memory", whole);
  /* the parent: p without trailing slashes and its last component */
  size_t n = strlen(p);
  while (n > 1 && p[n - 1] == '/') p[--n] = '\0';
  char *slash = strrchr(p, '/');
  int rc = 0;
  if (slash && slash != p) {
    *slash = '\0';
    rc = make_dirs(d, p, whole, err);
    *slash = '/';
  }
  if (!rc && mkdir(p, 0777) != 0) {
    int e = errno;
    free(p);
    if (e == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return 0; /* not ours */
    return fs_err_set(err, FS_EINVAL, "%s: cannot create: %s", whole, strerror(e));
  }
  if (!rc && (rc = fs__grow(&d->made, &d->cap_made, (size_t)d->n_made + 1, sizeof(char *))) == 0)
    rc = reg_add(p, 1);
  if (rc) {
    if (rc == FS_ENOMEM) rc = fs_err_set(err, FS_ENOMEM, "%s: out of memory", whole);
    rmdir(p);
    free(p);
    return rc;
  }
  d->made[d->n_made++] = p;
  return 0;
}

int fs_output_dir_open(const char *dir, fs_output_dir **out, fs_err *err) {
  *out = NULL;
  if (!dir || !*dir) return fs_err_set(err, FS_EINVAL, "an output directory name is empty");
  fs_output_dir *d = calloc(1, sizeof(*d));
  if (!d) return fs_err_set(err, FS_ENOMEM, "%s: out of memory", dir);
  int rc = make_dirs(d, dir, dir, err);
  if (rc) {
    fs_output_dir_abort(d);
    return rc;
  }
  *out = d;
  return 0;
}

static void dir_free(fs_output_dir *d) {
  for (int32_t i = 0; i < d->n_made; i++) {
    reg_remove(d->made[i]);
    free(d->made[i]);
  }
  free(d->made);
  free(d);
}

void fs_output_dir_commit(fs_output_dir *d) {
  if (d) dir_free(d);
}

void fs_output_dir_abort(fs_output_dir *d) {
  if (!d) return;
  for (int32_t i = d->n_made; i-- > 0;) rmdir(d->made[i]);
  dir_free(d);
}
