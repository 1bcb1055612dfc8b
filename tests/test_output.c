/* Output files (fabricsim/output.h): what is replaced, what is written
 * through, what is refused, and that nothing is left behind on failure or
 * on a signal. Every file these tests make is in a private directory under
 * /tmp; the devices they write to are /dev/null and /dev/full, through
 * links, so a regression replaces a link in that directory, never a device. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fabricsim/output.h"
#include "test.h"

static void make_dir(char *dir, size_t n) {
  snprintf(dir, n, "%s", "/tmp/fabricsim-output-XXXXXX");
  if (!mkdtemp(dir)) {
    test_fail(__FILE__, __LINE__, "mkdtemp failed");
    dir[0] = '\0';
  }
}

/* Entries of dir other than . and .., and the first one's name in first. */
static int entries(const char *dir, char *first, size_t n) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int k = 0;
  if (first) first[0] = '\0';
  for (struct dirent *e; (e = readdir(d));) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (k++ == 0 && first) snprintf(first, n, "%s", e->d_name);
  }
  closedir(d);
  return k;
}

/* rm -r of the test's directory (files, links and directories only). */
static void remove_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    if (d) {
      for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char sub[4096];
        snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
        remove_tree(sub);
      }
      closedir(d);
    }
    rmdir(path);
  } else {
    unlink(path);
  }
}

static void put(const char *path, const char *text) {
  if (test_write_file(path, text)) test_fail(__FILE__, __LINE__, "cannot write %s", path);
}

/* The file's bytes (up to n-1) as a string; "" if unreadable. */
static void get(const char *path, char *buf, size_t n) {
  buf[0] = '\0';
  FILE *f = fopen(path, "rb");
  if (!f) return;
  size_t k = fread(buf, 1, n - 1, f);
  buf[k] = '\0';
  fclose(f);
}

static int write_and_commit(const char *path, const char *text, fs_err *err) {
  fs_output *o;
  int rc = fs_output_open(path, &o, err);
  if (rc) return rc;
  fputs(text, fs_output_file(o));
  return fs_output_commit(o, err);
}

TEST(test_output_regular_file_replaced_whole_keeping_its_mode) {
  char dir[64], p[128], buf[64], first[256];
  make_dir(dir, sizeof(dir));
  snprintf(p, sizeof(p), "%s/out.txt", dir);
  fs_err err = {0, ""};
  CHECK_OK(write_and_commit(p, "new file\n", &err), &err);
  get(p, buf, sizeof(buf));
  CHECK(strcmp(buf, "new file\n") == 0);
  chmod(p, 0640);
  fs_output *o;
  CHECK_OK(fs_output_open(p, &o, &err), &err);
  fputs("second", fs_output_file(o));
  fflush(fs_output_file(o));
  get(p, buf, sizeof(buf));
  CHECK(strcmp(buf, "new file\n") == 0); /* the old file until commit */
  CHECK_EQ_INT(entries(dir, NULL, 0), 2); /* and the temporary beside it */
  CHECK_OK(fs_output_commit(o, &err), &err);
  get(p, buf, sizeof(buf));
  CHECK(strcmp(buf, "second") == 0);
  struct stat st;
  CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0640);
  CHECK_EQ_INT(entries(dir, first, sizeof(first)), 1);
  /* abort: the old file as it was, no temporary */
  CHECK_OK(fs_output_open(p, &o, &err), &err);
  fputs("third", fs_output_file(o));
  fs_output_abort(o);
  get(p, buf, sizeof(buf));
  CHECK(strcmp(buf, "second") == 0);
  CHECK_EQ_INT(entries(dir, NULL, 0), 1);
  remove_tree(dir);
}

TEST(test_output_symlink_followed_and_kept) {
  char dir[64], link[128], target[128], buf[64];
  make_dir(dir, sizeof(dir));
  snprintf(link, sizeof(link), "%s/link", dir);
  snprintf(target, sizeof(target), "%s/target", dir);
  put(target, "old");
  CHECK(symlink("target", link) == 0);
  fs_err err = {0, ""};
  CHECK_OK(write_and_commit(link, "through the link", &err), &err);
  struct stat st;
  CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
  get(target, buf, sizeof(buf));
  CHECK(strcmp(buf, "through the link") == 0);
  CHECK_EQ_INT(entries(dir, NULL, 0), 2);
  remove_tree(dir);
}

TEST(test_output_refuses_dangling_links_directories_and_missing_dirs) {
  char dir[64], p[160];
  make_dir(dir, sizeof(dir));
  fs_output *o = (fs_output *)1;
  fs_err err = {0, ""};
  snprintf(p, sizeof(p), "%s/dangling", dir);
  CHECK(symlink("nowhere", p) == 0);
  CHECK_EQ_INT(fs_output_open(p, &o, &err), FS_EINVAL);
  CHECK(o == NULL && strstr(err.msg, "dangling") && strstr(err.msg, "link to nothing"));
  CHECK_EQ_INT(fs_output_open(dir, &o, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "is a directory") != NULL);
  snprintf(p, sizeof(p), "%s/no/such/file", dir);
  CHECK_EQ_INT(fs_output_open(p, &o, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "no/such/file: cannot write") != NULL);
  CHECK_EQ_INT(fs_output_open("", &o, &err), FS_EINVAL);
  CHECK_EQ_INT(entries(dir, NULL, 0), 1); /* the link, untouched; nothing created */
  remove_tree(dir);
}

/* A link to /dev/null: written through; the link and the device stay. */
TEST(test_output_device_written_through_never_replaced) {
  char dir[64], p[128];
  make_dir(dir, sizeof(dir));
  snprintf(p, sizeof(p), "%s/null", dir);
  CHECK(symlink("/dev/null", p) == 0);
  fs_err err = {0, ""};
  CHECK_OK(write_and_commit(p, "gone", &err), &err);
  struct stat st;
  CHECK(lstat(p, &st) == 0 && S_ISLNK(st.st_mode));
  CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
  CHECK_EQ_INT(entries(dir, NULL, 0), 1);
  /* a write error on a device: FS_EIO naming the file and the reason */
  snprintf(p, sizeof(p), "%s/full", dir);
  CHECK(symlink("/dev/full", p) == 0);
  fs_output *o;
  if (stat("/dev/full", &st) == 0 && fs_output_open(p, &o, &err) == 0) {
    for (int k = 0; k < 10000; k++) fputs("0123456789", fs_output_file(o));
    CHECK_EQ_INT(fs_output_commit(o, &err), FS_EIO);
    CHECK(strstr(err.msg, "write failed") != NULL);
  }
  remove_tree(dir);
}

/* A FIFO: written through to its reader (a child), not replaced. */
TEST(test_output_fifo_written_through) {
  char dir[64], p[128];
  make_dir(dir, sizeof(dir));
  snprintf(p, sizeof(p), "%s/fifo", dir);
  CHECK(mkfifo(p, 0600) == 0);
  int pfd[2];
  CHECK(pipe(pfd) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(pfd[0]);
    int fd = open(p, O_RDONLY);
    char buf[64];
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
    if (n > 0 && write(pfd[1], buf, (size_t)n) != n) _exit(1);
    _exit(0);
  }
  close(pfd[1]);
  fs_err err = {0, ""};
  CHECK_OK(write_and_commit(p, "piped", &err), &err);
  char got[64] = {0};
  ssize_t n = read(pfd[0], got, sizeof(got) - 1);
  close(pfd[0]);
  waitpid(pid, NULL, 0);
  CHECK(n == 5 && strcmp(got, "piped") == 0);
  struct stat st;
  CHECK(lstat(p, &st) == 0 && S_ISFIFO(st.st_mode));
  remove_tree(dir);
}

/* The handler's cleanup: temporaries not committed, and directories made
 * for them, go; committed files stay. */
TEST(test_output_cleanup_removes_what_is_not_committed) {
  char dir[64], sub[128], p[160], q[160];
  make_dir(dir, sizeof(dir));
  snprintf(sub, sizeof(sub), "%s/a/b", dir);
  fs_err err = {0, ""};
  fs_output_dir *d;
  CHECK_OK(fs_output_dir_open(sub, &d, &err), &err);
  snprintf(p, sizeof(p), "%s/kept", dir);
  snprintf(q, sizeof(q), "%s/trace.0.et", sub);
  CHECK_OK(write_and_commit(p, "kept", &err), &err);
  fs_output *o;
  CHECK_OK(fs_output_open(q, &o, &err), &err);
  fputs("partial", fs_output_file(o));
  CHECK_OK(fs_output_close(o, &err), &err);
  char first[256];
  fs_output_cleanup();
  CHECK_EQ_INT(entries(dir, first, sizeof(first)), 1);
  CHECK(strcmp(first, "kept") == 0);
  fs_output_abort(o); /* harmless after the cleanup */
  fs_output_dir_abort(d);
  CHECK_EQ_INT(entries(dir, NULL, 0), 1);
  /* a directory that exists is not removed by an abort */
  CHECK_OK(fs_output_dir_open(dir, &d, &err), &err);
  fs_output_dir_abort(d);
  struct stat st;
  CHECK(stat(dir, &st) == 0);
  /* a file in the way of a directory */
  CHECK_EQ_INT(fs_output_dir_open(p, &d, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "kept is not a directory") != NULL);
  snprintf(q, sizeof(q), "%s/kept/x", dir);
  CHECK_EQ_INT(fs_output_dir_open(q, &d, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "kept/x: cannot create: Not a directory") != NULL);
  remove_tree(dir);
}

/* ---- through the CLI ---- */

static int run(const char *args, char *out, size_t n) { return test_run_cli(args, "2>&1", out, n); }

TEST(test_output_cli_device_link_and_bad_paths) {
  char dir[64], cmd[512], out[4096], first[256];
  make_dir(dir, sizeof(dir));
  /* --out through a link to /dev/null: the link stays, nothing else made */
  snprintf(cmd, sizeof(cmd), "sim examples/demo.json --out %s/null", dir);
  char p[128];
  snprintf(p, sizeof(p), "%s/null", dir);
  CHECK(symlink("/dev/null", p) == 0);
  CHECK_EQ_INT(run(cmd, out, sizeof(out)), 0);
  struct stat st;
  CHECK(lstat(p, &st) == 0 && S_ISLNK(st.st_mode));
  CHECK_EQ_INT(entries(dir, NULL, 0), 1);
  /* bad paths: exit 2 before the run, one line naming the path */
  static const char *const bad[] = {
      "sim examples/demo.json --out %s",
      "sim examples/demo.json --trace %s/missing/t.json",
      "topo fattree:k=4 --export dot --out %s",
      "train examples/gpt-13b.json --trace %s/missing/t.json",
      "train examples/gpt-13b.json --export-chakra %s/null/x",
      "ocs topo examples/topoopt-moe.json --degree 4 --export %s/missing/x.json"};
  for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
    snprintf(cmd, sizeof(cmd), bad[k], dir);
    int st2 = run(cmd, out, sizeof(out));
    const char *nl = strchr(out, '\n');
    if (st2 != 2 || strncmp(out, "fabricsim: /tmp/fabricsim-output-", 33) != 0 || !nl ||
        nl[1])
      test_fail(__FILE__, __LINE__, "%s: want exit 2 and one line naming the path, got %d:\n%s",
                cmd, st2, out);
  }
  CHECK_EQ_INT(entries(dir, first, sizeof(first)), 1);
  /* a sweep's CSV is checked before any point runs: no database made */
  snprintf(cmd, sizeof(cmd), "sweep examples/sweep-demo.json --db %s/s.sqlite --csv %s/no/x.csv",
           dir, dir);
  CHECK_EQ_INT(run(cmd, out, sizeof(out)), 2);
  CHECK_EQ_INT(entries(dir, NULL, 0), 1);
  /* --db that is not a regular file */
  snprintf(cmd, sizeof(cmd), "sweep examples/sweep-demo.json --db %s/null", dir);
  CHECK_EQ_INT(run(cmd, out, sizeof(out)), 2);
  CHECK(strstr(out, "not a regular file") != NULL);
  /* a write error: exit 1, one line with the reason, nothing left */
  snprintf(p, sizeof(p), "%s/full", dir);
  if (stat("/dev/full", &st) == 0 && symlink("/dev/full", p) == 0) {
    snprintf(cmd, sizeof(cmd), "topo fattree:k=4 --export dot --out %s", p);
    CHECK_EQ_INT(run(cmd, out, sizeof(out)), 1);
    CHECK(strstr(out, "No space left on device") != NULL);
  }
  remove_tree(dir);
}

/* SIGINT in the middle of a run (a 2,048-GPU MoE iteration with a report
 * and a trace takes a minute): the process dies of the signal, the old
 * report is as it was and no temporary file or created directory is left. */
TEST(test_output_cli_interrupt_leaves_nothing_behind) {
  char dir[64], rep[128], cmd[1024], first[256], buf[64];
  make_dir(dir, sizeof(dir));
  snprintf(rep, sizeof(rep), "%s/report.html", dir);
  put(rep, "old report");
  static const int sigs[] = {SIGINT, SIGTERM};
  for (int k = 0; k < 2; k++) {
    snprintf(cmd, sizeof(cmd),
             "exec '%s' train examples/moe-railopt.json --report %s --trace %s/t.json "
             "--export-chakra %s/ck/new >/dev/null 2>&1",
             test_cli_path(), rep, dir, dir);
    pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
      _exit(127);
    }
    /* until the temporaries are there (the run has begun), at most 20 s */
    /* report.html, its and the trace's temporaries, ck/ */
    for (int w = 0; w < 400 && entries(dir, NULL, 0) < 4; w++)
      nanosleep(&(struct timespec){0, 50000000}, NULL);
    CHECK_EQ_INT(entries(dir, NULL, 0), 4);
    kill(pid, sigs[k]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == sigs[k]);
    CHECK_EQ_INT(entries(dir, first, sizeof(first)), 1);
    CHECK(strcmp(first, "report.html") == 0);
    get(rep, buf, sizeof(buf));
    CHECK(strcmp(buf, "old report") == 0);
  }
  remove_tree(dir);
}
