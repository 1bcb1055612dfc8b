/* fabricsim sweep: points of a grid and of zipped axes, the SQLite table,
 * resuming after SIGKILL with no point lost or written twice, -j 2 equal
 * to -j 1, and bad sweep files exiting 2 with the JSON path. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "fabricsim/sweep.h"
#include "fabricsim/wan.h"
#include "fabricsim/wan_sdm.h"
#include "test.h"


static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *s = malloc(n + 1);
  if (s) memcpy(s, buf, n + 1);
  return s;
}

/* The CSV without its wall_s column (the 6th: point, 2 axes, status,
 * error, wall_s), the only one that varies between runs. */
static void drop_wall(char *csv) {
  char *out = csv;
  int field = 0, quoted = 0;
  for (const char *c = csv; *c; c++) {
    if (*c == '"') quoted = !quoted;
    if (*c == '\n' && !quoted) field = -1;
    int sep = *c == ',' && !quoted;
    if (sep) field++;
    /* drop field 5 and the comma that opens it */
    if (field == 5) continue;
    *out++ = *c;
    if (field < 0) field = 0;
  }
  *out = '\0';
}

static int db_count(const char *db, const char *where) {
  sqlite3 *h = NULL;
  int n = -1;
  char sql[200];
  snprintf(sql, sizeof(sql), "SELECT count(*) FROM points WHERE %s", where);
  if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(h, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
      n = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
  }
  sqlite3_close(h);
  return n;
}

TEST(test_sweep_grid_zip_and_figures) {
  char dir[] = "/tmp/fabricsim-sweep-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char sp[128], cmd[512], out[8192];
  snprintf(sp, sizeof(sp), "%s/zip.json", dir);
  /* zipped: 3 points; the scenario's flow sizes double, so its makespan
   * grows and the mean completion with it */
  CHECK(test_write_file(sp,
             "{\"base\": {\"topology\": {\"type\": \"star\", \"hosts\": 2, \"gbps\": 100,"
             " \"latency_ns\": 0},"
             " \"flows\": [{\"id\": \"a\", \"src\": 0, \"dst\": 1, \"bytes\": 1000}]},"
             " \"mode\": \"zip\", \"axes\": {\"flows[0].bytes\": [125000, 250000, 500000],"
             " \"description\": [\"x\", \"y\", \"z\"]}}") == 0);
  fs_sweep *sw = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_sweep_load(sp, &sw, &err), &err);
  if (!sw) return;
  CHECK_EQ_INT(fs_sweep_n_points(sw), 3);
  CHECK(fs_sweep_kind_of(sw) == FS_SWEEP_SIM);
  char *v = fs_sweep_axis_value(sw, 2, 1);
  CHECK(v && strcmp(v, "\"z\"") == 0);
  free(v);
  for (int32_t p = 0; p < 3; p++) {
    fs_sweep_result r;
    CHECK_OK(fs_sweep_run_point(sw, p, &r), &err);
    CHECK(r.ok);
    /* a star: two hops of 100 Gb/s, store-free fluid: bytes * 8 / 100e9 */
    double bytes = 125000.0 * (1 << p);
    CHECK_REL(r.fig[0], bytes * 8 / 100e9 * 1e3, 1e-9, "ms makespan");
    CHECK_REL(r.fig[1], 1, 0, "flows");
  }
  fs_sweep_free(sw);
  /* a grid of 2 x 3 train points, through the CLI: 6 rows, one failed
   * (8 x 4 x 4 GPUs exceed the 64 hosts) with its message */
  snprintf(sp, sizeof(sp), "%s/grid.json", dir);
  char cwd[256];
  CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
  char text[512];
  snprintf(text, sizeof(text),
           "{\"base\": \"%s/examples/gpt-13b.json\","
           " \"axes\": {\"parallelism.tp\": [4, 8], \"parallelism.pp\": [1, 2, 4]}}",
           cwd);
  CHECK(test_write_file(sp, text) == 0);
  snprintf(cmd, sizeof(cmd), "sweep %s --db %s/grid.sqlite --csv %s/grid.csv", sp, dir, dir);
  /* (a point failed: status 3, the table written, the count on stderr) */
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 3);
  CHECK(strstr(out, "1 of 6 points failed") != NULL);
  char db[160];
  snprintf(db, sizeof(db), "%s/grid.sqlite", dir);
  CHECK_EQ_INT(db_count(db, "1"), 6);
  CHECK_EQ_INT(db_count(db, "status = 'done'"), 5);
  CHECK_EQ_INT(db_count(db, "status = 'failed' AND \"parallelism.tp\" = 8 AND "
                            "\"parallelism.pp\" = 4 AND error LIKE '%parallelism.dp%'"),
               1);
  CHECK_EQ_INT(db_count(db, "iteration_ms > 0 AND mfu > 0 AND mfu < 1"), 5);
  snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
  CHECK(system(cmd) == 0);
}

/* Killed with SIGKILL part way, then re-run: every point exactly once,
 * the same figures as an uninterrupted run; -j 2 gives the same table. */
TEST(test_sweep_resumes_after_kill) {
  char dir[] = "/tmp/fabricsim-sweep-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char cwd[256], sp[128], text[512], cmd[1024], out[4096];
  CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
  snprintf(sp, sizeof(sp), "%s/s.json", dir);
  snprintf(text, sizeof(text),
           "{\"base\": \"%s/examples/gpt3-175b-railopt.json\", \"axes\": {"
           "\"training.global_batch\": [256, 512, 768, 1024, 1280, 1536],"
           "\"training.micro_batch\": [1, 2, 4, 8]}}",
           cwd);
  CHECK(test_write_file(sp, text) == 0);
  /* the reference, uninterrupted, one process */
  snprintf(cmd, sizeof(cmd), "sweep %s --db %s/ref.sqlite --csv %s/ref.csv", sp, dir, dir);
  /* (17 of these points fail: micro-batches that the interleaved schedule
   * cannot split, or memory past 80 GiB; status 3) */
  CHECK_EQ_INT(test_run_cli(cmd, "2>/dev/null", out, sizeof(out)), 3);
  /* killed (SIGKILL) once a few points are in */
  char db[160];
  snprintf(db, sizeof(db), "%s/k.sqlite", dir);
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, 1), dup2(null, 2);
    execl(test_cli_path(), "fabricsim", "sweep", sp, "--db", db, (char *)NULL);
    _exit(127);
  }
  int first = 0;
  for (int spin = 0; spin < 20000 && first < 3; spin++) {
    struct timespec ts = {0, 500000};
    nanosleep(&ts, NULL);
    int n = db_count(db, "status <> 'todo'");
    if (n > 0) first = n;
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  first = db_count(db, "status <> 'todo'");
  fprintf(stderr, "  (the kill left %d of 24 points recorded)\n", first);
  CHECK(first >= 1 && first < 24); /* killed part way, or nothing was resumed */
  snprintf(cmd, sizeof(cmd), "sweep %s --db %s/k.sqlite -j 2 --csv %s/k.csv", sp, dir, dir);
  CHECK_EQ_INT(test_run_cli(cmd, "2>/dev/null", out, sizeof(out)), 3);
  CHECK_EQ_INT(db_count(db, "1"), 24);
  CHECK_EQ_INT(db_count(db, "status = 'todo'"), 0);
  char p1[160], p2[160];
  snprintf(p1, sizeof(p1), "%s/ref.csv", dir);
  snprintf(p2, sizeof(p2), "%s/k.csv", dir);
  char *a = read_all(p1), *b = read_all(p2);
  CHECK(a && b);
  if (a && b) {
    drop_wall(a);
    drop_wall(b);
    CHECK(strcmp(a, b) == 0);
  }
  free(a);
  free(b);
  /* a database of another sweep is refused */
  snprintf(text, sizeof(text),
           "{\"base\": \"%s/examples/gpt-13b.json\", \"axes\": {\"parallelism.pp\": [1, 2]}}", cwd);
  CHECK(test_write_file(sp, text) == 0);
  snprintf(cmd, sizeof(cmd), "sweep %s --db %s/k.sqlite", sp, dir);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 2);
  CHECK(strstr(out, "another sweep") != NULL);
  snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
  CHECK(system(cmd) == 0);
}

TEST(test_sweep_bad_files_exit_2) {
  static const char *const bad[][2] = {
      {"\"axes\": {\"parallelism.tpp\": [4]}", "$.axes[\"parallelism.tpp\"]"},
      {"\"axes\": {\"nothere.tp\": [4]}", "$.axes[\"nothere.tp\"]"},
      {"\"axes\": {\"parallelism.tp\": []}", "$.axes[\"parallelism.tp\"]"},
      {"\"axes\": {\"parallelism.tp\": 4}", "$.axes[\"parallelism.tp\"]"},
      {"\"axes\": {}", "$.axes"},
      {"\"mode\": \"zip\", \"axes\": {\"parallelism.tp\": [4, 8], \"parallelism.pp\": [1]}",
       "$.axes[\"parallelism.pp\"]"},
      {"\"mode\": \"diagonal\", \"axes\": {\"parallelism.tp\": [4]}", "$.mode"},
      {"\"axes\": {\"parallelism.tp\": [\"four\"]}", "$.axes[\"parallelism.tp\"]"},
      {"\"axes\": {\"parallelism.tp\": [4]}, \"extra\": 1", "$.extra"},
  };
  char cwd[256], path[96], text[700], cmd[256], out[4096];
  CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
  snprintf(path, sizeof(path), "/tmp/fabricsim-badsweep.%d.json", (int)getpid());
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    snprintf(text, sizeof(text), "{\"base\": \"%s/examples/gpt-13b.json\", %s}", cwd, bad[i][0]);
    CHECK(test_write_file(path, text) == 0);
    snprintf(cmd, sizeof(cmd), "sweep %s --db /tmp/fabricsim-badsweep.%d.sqlite", path,
             (int)getpid());
    CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 2);
    if (!strstr(out, bad[i][1])) test_fail(__FILE__, __LINE__, "want %s in: %s", bad[i][1], out);
  }
  snprintf(text, sizeof(text), "{\"base\": \"no/such/job.json\", \"axes\": {\"a\": [1]}}");
  CHECK(test_write_file(path, text) == 0);
  snprintf(cmd, sizeof(cmd), "sweep %s --db /tmp/fabricsim-badsweep.%d.sqlite", path,
           (int)getpid());
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 2);
  CHECK(strstr(out, "$.base") != NULL);
  CHECK_EQ_INT(test_run_cli("sweep", "2>&1", out, sizeof(out)), 2);
  CHECK_EQ_INT(test_run_cli("sweep x.json", "2>&1", out, sizeof(out)), 2); /* no --db */
  remove(path);
  snprintf(path, sizeof(path), "/tmp/fabricsim-badsweep.%d.sqlite", (int)getpid());
  remove(path);
}

/* A sweep of WAN files (`"command": "wan train"`): each point is what
 * `fabricsim wan train` gives on the file with the axes set (the point of
 * 1600 Gb/s on 80 wavelengths is wan-4dc.json itself, timed here through
 * the library), and the cross-site phase shrinks as the job's demand per
 * ring pair grows while the spectrum holds it. */
TEST(test_sweep_wan_points_are_wan_train) {
  fs_sweep *sw = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_sweep_load("examples/sweep-wan.json", &sw, &err), &err);
  if (!sw) return;
  CHECK(fs_sweep_kind_of(sw) == FS_SWEEP_WAN_TRAIN);
  CHECK_EQ_INT(fs_sweep_n_points(sw), 8);
  CHECK(strcmp(fs_sweep_fig_name(sw, 2), "cross_site_ms") == 0);
  fs_sweep_result r[8];
  for (int32_t p = 0; p < 8; p++) {
    CHECK_OK(fs_sweep_run_point(sw, p, &r[p]), &err);
    CHECK(r[p].ok);
  }
  /* points 1, 3, 5, 7: 400, 800, 1600, 3200 Gb/s on 80 wavelengths */
  for (int32_t p = 3; p < 8; p += 2) CHECK(r[p].fig[2] < r[p - 2].fig[2]);
  fs_wan *w = NULL;
  CHECK_OK(fs_wan_from_file("examples/wan-4dc.json", &w, &err), &err);
  if (w) {
    fs_wan_demand d[16];
    int32_t nf = w->n_demands;
    memcpy(d, w->demands, (size_t)nf * sizeof(*d));
    int32_t nj = fs_wan_job_demands(w, d + nf, 16 - nf);
    fs_wan_prov_opts o = {FS_WAN_FIRST_FIT, 3, -1};
    fs_wan_plan *p = NULL;
    fs_wan_train_result t;
    CHECK_OK(fs_wan_provision(w, d, nf + nj, &o, &p, &err), &err);
    CHECK_OK(fs_wan_train(p, 0, &t, &err), &err);
    CHECK(r[5].fig[0] == t.total_s * 1e3);
    CHECK(r[5].fig[4] == p->blocked);
    fs_wan_plan_free(p);
    fs_wan_free(w);
  }
  fs_sweep_free(sw);
}

/* A `wan dynamic` sweep: each point is fs_wan_dynamic on the file with its
 * traffic set by the axes (the same seeds: the same figures, bit for bit),
 * and on one link of 16 channels the closed form (Erlang B) comes along. */
TEST(test_sweep_wan_dynamic_points_are_wan_dynamic) {
  fs_sweep *sw = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_sweep_load("tests/data/sweep-wan-dynamic-erlang.json", &sw, &err), &err);
  if (!sw) return;
  CHECK(fs_sweep_kind_of(sw) == FS_SWEEP_WAN_DYNAMIC);
  CHECK_EQ_INT(fs_sweep_n_points(sw), 2);
  fs_sweep_result r[2];
  for (int32_t p = 0; p < 2; p++) {
    CHECK_OK(fs_sweep_run_point(sw, p, &r[p]), &err);
    CHECK(r[p].ok);
  }
  fs_wan *w = NULL;
  CHECK_OK(fs_wan_from_file("examples/wan-erlang-link.json", &w, &err), &err);
  if (w) {
    fs_wan_sdm s;
    CHECK_OK(fs_wan_sdm_get(w, 0, &s, &err), &err);
    fs_wan_rsca *rs = NULL;
    CHECK_OK(fs_wan_rsca_new(w, &s, (fs_wan_policy)s.traffic.policy, s.traffic.k ? s.traffic.k : 3,
                             &rs, &err),
             &err);
    for (int32_t p = 0; p < 2 && rs; p++) {
      fs_wan_dyn_opts o = {(fs_wan_policy)s.traffic.policy, s.traffic.k ? s.traffic.k : 3,
                           p ? 16.0 : 8.0, 20000, 3, s.traffic.present ? s.traffic.seed : 1,
                           NULL, NULL, NULL, 0, 0};
      fs_wan_dyn_point pt;
      CHECK_OK(fs_wan_dynamic(rs, &o, &pt, &err), &err);
      CHECK(r[p].fig[0] == pt.pb);
      CHECK(r[p].fig[1] == pt.pb_ci);
      CHECK(r[p].fig[8] == pt.analytic_pb && pt.analytic_pb > 0);
    }
    fs_wan_rsca_free(rs);
    fs_wan_free(w);
  }
  CHECK(r[1].fig[0] > r[0].fig[0]); /* more load, more blocking */
  fs_sweep_free(sw);
}
