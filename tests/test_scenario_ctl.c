/* Routing control inside `fabricsim sim` scenarios: timed failures against
 * the engine's closed form (a flow that loses its spine stands still for
 * the detection delay), periodic re-optimisation of an ECMP-colliding
 * permutation against line rate, the scenario keys' errors, and byte-stable
 * output. Scenario texts are written to a private temporary directory. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fabricsim/scenario.h"
#include "test.h"

#define CAP 12.5e9  /* bytes/s: 100 Gb/s */
#define X 1.0e9     /* bytes: 80 ms alone at CAP */
#define T_FAIL 0.020
#define T_DETECT 0.030

/* A 2x2 leaf-spine, one host per leaf (host0 = node 0, host1 = 1, leaf0 =
 * 2, leaf1 = 3, spine0 = 4, spine1 = 5), no latency; `routing` and
 * `failures` are spliced in, `path` too (a flow key, or ""). */
static void two_by_two(char *buf, size_t n, const char *routing, const char *failures,
                       const char *path) {
  snprintf(buf, n,
           "{\"topology\": {\"type\": \"leafspine\", \"leaves\": 2, \"spines\": 2, "
           "\"hosts_per_leaf\": 1, \"host_gbps\": 100, \"fabric_gbps\": 100, \"latency_ns\": 0},"
           " \"routing\": %s%s%s,"
           " \"flows\": [{\"id\": \"a\", \"src\": 0, \"dst\": 1, \"bytes\": 1000000000%s}]}",
           routing, failures ? ", \"failures\": " : "", failures ? failures : "", path);
}

static char tmpdir[64];

static const char *tmp_file(const char *name, const char *text) {
  static char path[8][160];
  static int next;
  if (!tmpdir[0]) {
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/fabricsim-scenctl-XXXXXX");
    if (!mkdtemp(tmpdir)) {
      tmpdir[0] = 0;
      return NULL;
    }
  }
  char *p = path[next++ % 8];
  snprintf(p, 160, "%s/%s", tmpdir, name);
  FILE *f = fopen(p, "w");
  if (!f) return NULL;
  fputs(text, f);
  fclose(f);
  return p;
}

static void tmp_remove(const char *path) {
  if (path) remove(path);
}

static const cJSON *get(const cJSON *o, const char *k) {
  return cJSON_GetObjectItemCaseSensitive(o, k);
}

static double num(const cJSON *o, const char *k) {
  const cJSON *v = get(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* The library: the flow loses spine0 at 20 ms (shortest routing puts it
 * there), is re-routed at 50 ms and finishes X/CAP + 30 ms; the same with
 * one cable, with an explicit path through spine0, and without failures
 * (X/CAP: the reference the delay is measured against). */
TEST(test_scenario_failure_closed_form) {
  static const struct {
    const char *routing, *failures, *path;
    int cables;
    double want_s;
  } cases[] = {
      {"{\"mode\": \"shortest\", \"detect_ns\": 30000000}",
       "[{\"at_ns\": 20000000, \"switch\": \"spine0\"}]", "", 2, X / CAP + T_DETECT},
      {"{\"mode\": \"shortest\", \"detect_ns\": 30000000}",
       "[{\"at_ns\": 20000000, \"cable\": \"leaf1-spine0\"}]", "", 1, X / CAP + T_DETECT},
      {"{\"mode\": \"ecmp\", \"detect_ns\": 30000000}",
       "[{\"at_ns\": 20000000, \"switch\": \"spine0\"}]", ", \"path\": [0, 2, 4, 3, 1]", 2,
       X / CAP + T_DETECT},
      /* the failure comes after the flow: it still happens, nothing moves */
      {"{\"mode\": \"shortest\", \"detect_ns\": 30000000}",
       "[{\"at_ns\": 90000000, \"switch\": \"spine0\"}]", "", 2, X / CAP},
      {"{\"mode\": \"shortest\"}", NULL, "", 0, X / CAP},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char text[1024];
    two_by_two(text, sizeof(text), cases[i].routing, cases[i].failures, cases[i].path);
    fs_err err = {0, ""};
    fs_scenario *sc = NULL;
    CHECK_OK(fs_scenario_parse(text, strlen(text), "f.json", &sc, &err), &err);
    if (!sc) continue;
    CHECK_EQ_INT(fs_scenario_has_control(sc), cases[i].failures != NULL);
    CHECK_OK(fs_scenario_run(sc, NULL, &err), &err);
    CHECK_REL(fs_sim_finish_s(sc->sim, 0), cases[i].want_s, 1e-12, "s");
    int moved = cases[i].want_s > X / CAP * 1.01;
    CHECK_EQ_INT(sc->controlled, cases[i].failures != NULL);
    CHECK_EQ_INT(sc->control.cables_failed, cases[i].cables); /* even after the flow ended */
    CHECK_EQ_INT(sc->control.failure_reroutes, moved);
    CHECK_EQ_INT(sc->control.flows_rerouted, moved);
    CHECK_EQ_INT(sc->control.reopts, 0);
    CHECK_EQ_INT(sc->flows[0].moved, moved);
    CHECK_REL(sc->flows[0].n_paths, 1, 0, "paths");
    /* the final route goes up to the spine that is left */
    const int32_t *links;
    const double *w;
    int32_t n;
    fs_sim_flow_route(sc->sim, 0, &links, &w, &n);
    CHECK_EQ_INT(n, 4);
    if (n == 4) CHECK_EQ_INT(sc->topo->links[links[1]].to, moved ? 5 : 4);
    fs_scenario_free(sc);
  }
}

/* Runs scenario text (its transport spliced in before the closing brace)
 * in a child with an alarm, so that a run that never ends fails here
 * rather than hangs: flow 0's finish (or, all_flows, the makespan), NAN
 * if the run failed or did not end. */
static double run_in_child(const char *scenario, const char *transport, int all_flows) {
  size_t n = strlen(scenario);
  char *text = malloc(n + strlen(transport) + 32);
  if (!text) return NAN;
  memcpy(text, scenario, n);
  while (n > 0 && text[n - 1] != '}') n--;
  if (n == 0) {
    free(text);
    return NAN;
  }
  sprintf(text + n - 1, ", \"transport\": %s}", transport);
  int fd[2];
  if (pipe(fd)) {
    free(text);
    return NAN;
  }
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    alarm(60);
    fs_err err = {0, ""};
    fs_scenario *sc = NULL;
    double t = NAN;
    if (!fs_scenario_parse(text, strlen(text), "f.json", &sc, &err) &&
        !fs_scenario_run(sc, NULL, &err))
      t = all_flows ? fs_sim_makespan_s(sc->sim) : fs_sim_finish_s(sc->sim, 0);
    if (write(fd[1], &t, sizeof(t)) != (ssize_t)sizeof(t)) _exit(1);
    _exit(0);
  }
  free(text);
  close(fd[1]);
  double t = NAN;
  if (pid < 0 || read(fd[0], &t, sizeof(t)) != (ssize_t)sizeof(t)) t = NAN;
  close(fd[0]);
  int st = 0;
  if (pid > 0) waitpid(pid, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? t : NAN;
}

/* Failures under the DCQCN and the DCTCP models (their queues and rates).
 * The flow of the closed form above, alone, queues nowhere: it finishes
 * when it does under the same transport with max-min rates, the
 * stand-still included. examples/failure-demo.json (32 flows, a spine
 * lost and re-routed): the run ends, never before its max-min run. (A
 * failed link's empty port once let out 0 / 0: DCTCP's windows went NaN
 * and the demo never ended.) */
TEST(test_scenario_failure_under_dcqcn_and_dctcp) {
  static const char *const pairs[][2] = {
      {"{\"kind\": \"tcp\", \"connections\": \"persistent\", \"rate_control\": \"dctcp\"}",
       "{\"kind\": \"tcp\", \"connections\": \"persistent\"}"},
      {"{\"kind\": \"tcp\", \"rate_control\": \"dctcp\"}", "{\"kind\": \"tcp\"}"},
      {"{\"kind\": \"rdma\", \"rate_control\": \"dcqcn\"}", "{\"kind\": \"rdma\"}"},
  };
  char lone[1024];
  two_by_two(lone, sizeof(lone), "{\"mode\": \"shortest\", \"detect_ns\": 30000000}",
             "[{\"at_ns\": 20000000, \"switch\": \"spine0\"}]", "");
  char *demo = NULL;
  FILE *f = fopen("examples/failure-demo.json", "rb");
  CHECK(f != NULL);
  if (f) {
    demo = calloc(1, 1 << 16);
    if (demo && fread(demo, 1, (1 << 16) - 1, f) == 0) demo[0] = 0;
    fclose(f);
  }
  for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
    double model = run_in_child(lone, pairs[i][0], 0), ideal = run_in_child(lone, pairs[i][1], 0);
    CHECK(ideal > X / CAP + T_DETECT);
    CHECK_REL(model, ideal, 1e-6, "s");
    if (!demo) continue;
    model = run_in_child(demo, pairs[i][0], 1), ideal = run_in_child(demo, pairs[i][1], 1);
    CHECK(ideal > 0);
    CHECK(model >= ideal * (1 - 1e-9)); /* (NAN: no) */
  }
  free(demo);
}

/* A run with timers (routing re-optimised every ms) under the DCQCN and
 * DCTCP models ends once its flows do, not before its max-min run: an
 * incast of three. (The models' step, scheduled at INFINITY when nothing
 * was due, once kept such a run from ever being idle: the controller
 * re-armed its timer for ever.) */
TEST(test_scenario_optimized_under_dcqcn_and_dctcp_ends) {
  static const char *const scenario =
      "{\"topology\": {\"type\": \"leafspine\", \"leaves\": 2, \"spines\": 2, "
      "\"hosts_per_leaf\": 2, \"host_gbps\": 100, \"fabric_gbps\": 100, \"latency_ns\": 1000},"
      " \"routing\": {\"mode\": \"optimized\", \"base\": \"ecmp\", \"seed\": 1,"
      " \"interval_ns\": 1000000},"
      " \"flows\": [{\"id\": \"a\", \"src\": 0, \"dst\": 2, \"bytes\": 100000000},"
      " {\"id\": \"b\", \"src\": 1, \"dst\": 2, \"bytes\": 100000000},"
      " {\"id\": \"c\", \"src\": 3, \"dst\": 2, \"bytes\": 50000000}]}";
  static const char *const pairs[][2] = {
      {"{\"kind\": \"rdma\", \"rate_control\": \"dcqcn\"}", "{\"kind\": \"rdma\"}"},
      {"{\"kind\": \"tcp\", \"rate_control\": \"dctcp\"}", "{\"kind\": \"tcp\"}"},
  };
  for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
    double model = run_in_child(scenario, pairs[i][0], 1);
    double ideal = run_in_child(scenario, pairs[i][1], 1);
    CHECK(ideal >= 250e6 / CAP); /* the receiver's port carries it all */
    CHECK(model >= ideal * (1 - 1e-9)); /* (NAN: no) */
  }
}

/* The same through `fabricsim sim`: JSON (final path, control counts),
 * CSV (final path) and the summary line. */
TEST(test_scenario_failure_cli) {
  char text[1024], cmd[512];
  two_by_two(text, sizeof(text), "{\"mode\": \"shortest\", \"detect_ns\": 30000000}",
             "[{\"at_ns\": 20000000, \"switch\": \"spine0\"}]", "");
  const char *in = tmp_file("fail.json", text);
  CHECK(in != NULL);
  if (!in) return;
  static char out[1 << 16];
  snprintf(cmd, sizeof(cmd), "sim %s", in);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0);
  cJSON *root = cJSON_Parse(out);
  CHECK(root != NULL);
  if (root) {
    CHECK_REL(num(root, "makespan_ns"), (X / CAP + T_DETECT) * 1e9, 1e-12, "ns");
    const cJSON *f0 = cJSON_GetArrayItem(get(root, "flows"), 0);
    CHECK_REL(num(f0, "finish_ns"), (X / CAP + T_DETECT) * 1e9, 1e-12, "ns");
    char *path = cJSON_PrintUnformatted(get(f0, "path"));
    CHECK(path && strcmp(path, "[0,2,5,3,1]") == 0);
    free(path);
    const cJSON *c = get(root, "control");
    CHECK(cJSON_IsObject(c));
    CHECK(cJSON_IsFalse(get(c, "optimized")));
    CHECK_EQ_INT(num(c, "cables_failed"), 2);
    CHECK_EQ_INT(num(c, "failure_reroutes"), 1);
    CHECK_EQ_INT(num(c, "flows_rerouted"), 1);
    CHECK_EQ_INT(num(c, "flows_moved"), 1);
    CHECK_EQ_INT(num(c, "reopts"), 0);
    CHECK_EQ_INT(num(c, "detect_ns"), 30000000);
    cJSON_Delete(root);
  }
  snprintf(cmd, sizeof(cmd), "sim %s --format csv", in);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0);
  CHECK(strstr(out, "\na,0,1,1000000000,0,110000000,110000000,1,0 2 5 3 1\n") != NULL);
  snprintf(cmd, sizeof(cmd), "sim %s --summary", in);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0);
  CHECK(strstr(out, "failures:        2 cables failed, detected after 30000 us: 1 flows "
                    "re-routed around them\n") != NULL);
  CHECK(strstr(out, "re-optimising") == NULL);
  /* no failure, no control object: the output is as before */
  two_by_two(text, sizeof(text), "{\"mode\": \"shortest\"}", NULL, "");
  const char *plain = tmp_file("plain.json", text);
  snprintf(cmd, sizeof(cmd), "sim %s", plain);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0);
  CHECK(strstr(out, "\"control\"") == NULL);
  CHECK(strstr(out, "\"makespan_ns\":80000000,") != NULL);
  tmp_remove(in);
  tmp_remove(plain);
}

/* 16 hosts on 4 leaves send to the same host index one leaf over, on a
 * non-blocking 4-spine leaf-spine: line rate needs every flow on its own
 * spine path. ECMP (seed 1) collides; re-optimising every interval I
 * (greedy) must end within I (+ the hold R of a moved flow in flight) of
 * line rate, since from the first re-optimisation on every flow runs
 * alone, and must leave no fabric link shared. */
static void permutation(char *buf, size_t n, const char *routing) {
  size_t used = (size_t)snprintf(
      buf, n,
      "{\"topology\": {\"type\": \"leafspine\", \"leaves\": 4, \"spines\": 4, "
      "\"hosts_per_leaf\": 4, \"host_gbps\": 100, \"fabric_gbps\": 100, \"latency_ns\": 0}, "
      "\"routing\": %s, \"flows\": [",
      routing);
  for (int i = 0; i < 16 && used < n; i++)
    used += (size_t)snprintf(buf + used, n - used,
                             "%s{\"src\": %d, \"dst\": %d, \"bytes\": 125000000}", i ? ", " : "",
                             i, (i + 4) % 16);
  if (used < n) snprintf(buf + used, n - used, "]}");
}

#define PERM_LINE_S (125e6 / CAP) /* 10 ms */

static double run_text(const char *text, fs_scenario **keep) {
  fs_err err = {0, ""};
  fs_scenario *sc = NULL;
  CHECK_OK(fs_scenario_parse(text, strlen(text), "perm.json", &sc, &err), &err);
  if (!sc) return -1;
  CHECK_OK(fs_scenario_run(sc, NULL, &err), &err);
  double m = fs_sim_makespan_s(sc->sim);
  if (keep)
    *keep = sc;
  else
    fs_scenario_free(sc);
  return m;
}

TEST(test_scenario_optimized_permutation) {
  char text[4096];
  permutation(text, sizeof(text), "{\"mode\": \"ecmp\", \"seed\": 1}");
  double ecmp = run_text(text, NULL);
  CHECK(ecmp > PERM_LINE_S * 1.5); /* the premise: ECMP collides */
  static const struct {
    int64_t interval_ns, reconfig_ns;
  } cases[] = {{1000000, 0}, {1000000, 100000}, {500000, 0}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char routing[256];
    snprintf(routing, sizeof(routing),
             "{\"mode\": \"optimized\", \"base\": \"ecmp\", \"seed\": 1, \"interval_ns\": %lld, "
             "\"reconfig_ns\": %lld}",
             (long long)cases[i].interval_ns, (long long)cases[i].reconfig_ns);
    permutation(text, sizeof(text), routing);
    fs_scenario *sc = NULL;
    double opt = run_text(text, &sc);
    if (!sc) continue;
    double bound = PERM_LINE_S + (double)(cases[i].interval_ns + cases[i].reconfig_ns) * 1e-9;
    CHECK(opt >= PERM_LINE_S * (1 - 1e-12));
    if (!(opt <= bound * (1 + 1e-12)))
      test_fail(__FILE__, __LINE__, "case %zu: makespan %.9g s above line rate + interval %.9g s",
                i, opt, bound);
    CHECK(sc->control.reopts > 0);
    CHECK(sc->control.pairs_moved > 0);
    CHECK_EQ_INT(sc->control.failure_reroutes, 0);
    CHECK(sc->control.flows_held <= sc->control.flows_rerouted);
    /* every fabric (switch-to-switch) link carries at most one final route */
    const fs_topo *t = sc->topo;
    int *use = calloc((size_t)t->n_links, sizeof(int));
    int64_t moved = 0;
    for (int32_t f = 0; f < sc->n_flows && use; f++) {
      const int32_t *links;
      const double *w;
      int32_t n;
      fs_sim_flow_route(sc->sim, f, &links, &w, &n);
      for (int32_t k = 0; k < n; k++) use[links[k]]++;
      moved += sc->flows[f].moved;
    }
    for (int32_t l = 0; l < t->n_links && use; l++)
      if (use[l] > 1) test_fail(__FILE__, __LINE__, "case %zu: link %d carries %d flows", i, l, use[l]);
    CHECK(moved > 0 && moved <= sc->control.flows_rerouted);
    free(use);
    fs_scenario_free(sc);
  }
  /* `--routing optimized` turns an ECMP file into the first case */
  permutation(text, sizeof(text), "{\"mode\": \"ecmp\", \"seed\": 1}");
  const char *in = tmp_file("perm.json", text);
  char cmd[256];
  static char out[1 << 16];
  snprintf(cmd, sizeof(cmd), "sim %s --routing optimized", in);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0);
  cJSON *root = cJSON_Parse(out);
  CHECK(root != NULL);
  if (root) {
    CHECK(num(root, "makespan_ns") <= (PERM_LINE_S + 1e-3) * 1e9 * (1 + 1e-12));
    const cJSON *c = get(root, "control");
    CHECK(cJSON_IsTrue(get(c, "optimized")));
    CHECK(cJSON_IsString(get(c, "optimizer")) &&
          strcmp(get(c, "optimizer")->valuestring, "greedy") == 0);
    CHECK_EQ_INT(num(c, "interval_ns"), 1000000);
    CHECK(num(c, "reopts") > 0);
    cJSON_Delete(root);
  }
  /* and `--routing ecmp` turns the optimized file back into plain ECMP */
  permutation(text, sizeof(text), "{\"mode\": \"optimized\", \"seed\": 1}");
  const char *opt_in = tmp_file("perm-opt.json", text);
  snprintf(cmd, sizeof(cmd), "sim %s --routing ecmp", opt_in);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 0);
  CHECK(strstr(out, "\"control\"") == NULL);
  root = cJSON_Parse(out);
  CHECK_REL(root ? num(root, "makespan_ns") : -1, ecmp * 1e9, 1e-12, "ns");
  cJSON_Delete(root);
  tmp_remove(in);
  tmp_remove(opt_in);
}

/* fs_scenario_set_routing keeps the file's base when it can and refuses
 * what the topology cannot route. */
TEST(test_scenario_set_routing) {
  char text[1024];
  two_by_two(text, sizeof(text), "{\"mode\": \"shortest\"}", NULL, "");
  fs_err err = {0, ""};
  fs_scenario *sc = NULL;
  CHECK_OK(fs_scenario_parse(text, strlen(text), "f.json", &sc, &err), &err);
  if (!sc) return;
  CHECK_EQ_INT(fs_scenario_has_control(sc), 0);
  CHECK_OK(fs_scenario_set_routing(sc, "optimized", &err), &err);
  CHECK_EQ_INT(sc->optimized, 1);
  CHECK_EQ_INT(sc->mode, FS_ROUTE_SHORTEST);
  CHECK_EQ_INT(sc->interval_ns, 1000000);
  CHECK_EQ_INT(sc->optimizer, FS_ROUTEOPT_GREEDY);
  CHECK_EQ_INT(fs_scenario_has_control(sc), 1);
  CHECK_EQ_INT(fs_scenario_set_routing(sc, "dor", &err), FS_EINVAL);
  CHECK(strstr(err.msg, "torus") != NULL);
  CHECK_EQ_INT(sc->optimized, 1); /* unchanged */
  CHECK_EQ_INT(fs_scenario_set_routing(sc, "magic", &err), FS_EINVAL);
  CHECK_OK(fs_scenario_set_routing(sc, "explicit", &err), &err);
  CHECK_EQ_INT(sc->optimized, 0);
  CHECK_OK(fs_scenario_set_routing(sc, "optimized", &err), &err);
  CHECK_EQ_INT(sc->mode, FS_ROUTE_ECMP); /* explicit cannot be the base */
  fs_scenario_free(sc);
}

/* Bad control input: exit 2, one line naming the file, the JSON path and
 * the value. */
TEST(test_scenario_ctl_bad_input) {
  static const struct {
    const char *routing, *failures, *want[3];
  } cases[] = {
      {"{\"mode\": \"ecmp\"}", "[{\"at_ns\": 1, \"switch\": \"spine9\"}]",
       {"$.failures[0].switch: no switch named 'spine9'", "got \"spine9\""}},
      {"{\"mode\": \"ecmp\"}", "[{\"at_ns\": 1, \"switch\": \"host0\"}]",
       {"$.failures[0].switch: no switch named 'host0'"}},
      {"{\"mode\": \"ecmp\"}", "[{\"at_ns\": 1, \"cable\": \"leaf0-spine0\", \"switch\": \"spine0\"}]",
       {"$.failures[0]: needs exactly one of \"cable\" and \"switch\""}},
      {"{\"mode\": \"ecmp\"}", "[{\"at_ns\": 1, \"cable\": \"leaf0-leaf1\"}]",
       {"$.failures[0].cable: no cable joins leaf0 and leaf1"}},
      {"{\"mode\": \"ecmp\"}", "[{\"at_ns\": 1.5, \"switch\": \"spine0\"}]",
       {"$.failures[0].at_ns: must be an integer", "got 1.5"}},
      {"{\"mode\": \"ecmp\"}", "[{\"at_ms\": 1, \"switch\": \"spine0\"}]",
       {"$.failures[0].at_ms: unknown key", "at_ns"}},
      {"{\"mode\": \"ecmp\"}", "[{\"switch\": \"spine0\"}]", {"$.failures[0].at_ns"}},
      {"{\"mode\": \"ecmp\"}", "{\"at_ns\": 1}", {"$.failures: must be an array"}},
      {"{\"mode\": \"ecmp\", \"interval_ns\": 1000}", NULL,
       {"$.routing.interval_ns: only applies with \"mode\": \"optimized\"", "got 1000"}},
      {"{\"mode\": \"spray\", \"optimizer\": \"greedy\"}", NULL,
       {"$.routing.optimizer: only applies with \"mode\": \"optimized\""}},
      {"{\"mode\": \"optimized\", \"optimizer\": \"exact\"}", NULL,
       {"$.routing.optimizer: must be greedy", "got \"exact\""}},
      {"{\"mode\": \"optimized\", \"base\": \"dor\"}", NULL,
       {"$.routing.base: must be ecmp, shortest or spray", "got \"dor\""}},
      {"{\"mode\": \"optimized\", \"interval_ns\": 0}", NULL,
       {"$.routing.interval_ns: must be", "got 0"}},
      {"{\"mode\": \"optimized\", \"interval_ms\": 1}", NULL, {"$.routing.interval_ms: unknown key"}},
      {"{\"mode\": \"optimised\"}", NULL,
       {"$.routing.mode: unknown routing mode", "optimized", "got \"optimised\""}},
      {"{\"mode\": \"ecmp\", \"detect_ns\": -1}", NULL, {"$.routing.detect_ns: must be >= 0"}},
  };
  static char out[4096];
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char text[1024], cmd[256];
    two_by_two(text, sizeof(text), cases[i].routing, cases[i].failures, "");
    const char *in = tmp_file("bad.json", text);
    if (!in) {
      test_fail(__FILE__, __LINE__, "cannot write a temporary file");
      return;
    }
    snprintf(cmd, sizeof(cmd), "sim %s --out %s/out.json", in, tmpdir);
    int st = test_run_cli(cmd, "2>&1", out, sizeof(out));
    int lines = 0;
    for (const char *p = out; *p; p++) lines += *p == '\n';
    if (st != 2 || lines != 1 || !strstr(out, in))
      test_fail(__FILE__, __LINE__, "case %zu: exit %d (want 2, one line naming %s):\n%s", i,
                st, in, out);
    for (int k = 0; k < 3 && cases[i].want[k]; k++)
      if (!strstr(out, cases[i].want[k]))
        test_fail(__FILE__, __LINE__, "case %zu: output lacks '%s':\n%s", i, cases[i].want[k],
                  out);
    char o[128];
    snprintf(o, sizeof(o), "%s/out.json", tmpdir);
    CHECK(access(o, F_OK) != 0); /* no output file */
    tmp_remove(in);
  }
  /* Both spines fail: the flow has nowhere to go. Found while simulating,
   * still an input error: exit 2 naming the file and the hosts. */
  char text[1024], cmd[256];
  two_by_two(text, sizeof(text), "{\"mode\": \"ecmp\"}",
             "[{\"at_ns\": 1000, \"switch\": \"spine0\"}, {\"at_ns\": 1000, \"switch\": \"spine1\"}]",
             "");
  const char *in = tmp_file("cut.json", text);
  snprintf(cmd, sizeof(cmd), "sim %s", in);
  int st = test_run_cli(cmd, "2>&1", out, sizeof(out));
  CHECK_EQ_INT(st, 2);
  CHECK(strstr(out, "routing control: after the link failures at 1e-06 s no path is left from "
                    "host0 to host1") != NULL);
  CHECK(strstr(out, in) != NULL);
  tmp_remove(in);
  /* an unknown --routing names the choices, optimized among them */
  snprintf(cmd, sizeof(cmd), "sim examples/failure-demo.json --routing optimised");
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 2);
  CHECK(strstr(out, "--routing must be") != NULL && strstr(out, "optimized") != NULL);
}

/* The example: the spine failure slows it down, every cable of spine1
 * counts, and two runs (with re-optimisation on) write the same bytes. */
TEST(test_scenario_ctl_example_deterministic) {
  static char a[1 << 17], b[1 << 17];
  const char *cmd = "sim examples/failure-demo.json --routing optimized";
  CHECK_EQ_INT(test_run_cli(cmd, "2>/dev/null", a, sizeof(a)), 0);
  CHECK_EQ_INT(test_run_cli(cmd, "2>/dev/null", b, sizeof(b)), 0);
  CHECK(a[0] && strcmp(a, b) == 0);
  CHECK(strlen(a) < sizeof(a) - 1);
  fs_err err = {0, ""};
  fs_scenario *sc = NULL;
  CHECK_OK(fs_scenario_load("examples/failure-demo.json", &sc, &err), &err);
  if (!sc) return;
  CHECK_EQ_INT(sc->n_failures, 4); /* spine1 has one cable per leaf */
  CHECK_OK(fs_scenario_run(sc, NULL, &err), &err);
  double failed = fs_sim_makespan_s(sc->sim);
  CHECK_EQ_INT(sc->control.cables_failed, 4);
  CHECK(sc->control.failure_reroutes > 0);
  free(sc->failures);
  sc->failures = NULL;
  sc->n_failures = 0;
  CHECK_OK(fs_scenario_run(sc, NULL, &err), &err);
  CHECK_EQ_INT(sc->controlled, 0);
  CHECK(failed > fs_sim_makespan_s(sc->sim));
  fs_scenario_free(sc);
  if (tmpdir[0]) rmdir(tmpdir);
}

/* Flows with an explicit path are pinned: re-optimisation neither moves
 * nor counts them, so two flows forced through one spine stay there and
 * share it (each at half rate: 2 x 10 ms), exactly as without control. */
TEST(test_scenario_optimized_leaves_explicit_paths) {
  static const char *const fmt =
      "{\"topology\": {\"type\": \"leafspine\", \"leaves\": 2, \"spines\": 2, "
      "\"hosts_per_leaf\": 2, \"host_gbps\": 100, \"fabric_gbps\": 100, \"latency_ns\": 0}, "
      "\"routing\": %s, \"flows\": ["
      "{\"src\": 0, \"dst\": 2, \"bytes\": 125000000, \"path\": [0, 4, 6, 5, 2]}, "
      "{\"src\": 1, \"dst\": 3, \"bytes\": 125000000, \"path\": [1, 4, 6, 5, 3]}]}";
  char text[1024];
  snprintf(text, sizeof(text), fmt,
           "{\"mode\": \"optimized\", \"base\": \"ecmp\", \"interval_ns\": 1000000}");
  fs_scenario *sc = NULL;
  double opt = run_text(text, &sc);
  CHECK_REL(opt, 2 * 125e6 / CAP, 1e-9, "s");
  if (sc) {
    CHECK_EQ_INT(sc->control.pairs_moved, 0);
    CHECK_EQ_INT(sc->control.flows_rerouted, 0);
    CHECK_EQ_INT(sc->flows[0].moved + sc->flows[1].moved, 0);
    fs_scenario_free(sc);
  }
}
