/* The ns-3 backend without ns-3: the exchange file written for a small
 * scenario (checked line by line), result files read back into the
 * simulation (times, makespan, link busy time as the union of its flows'
 * intervals) and rejected (each error names the file and line, and leaves
 * the times as they were), the refusals (spray, routing control,
 * failures, RoCE packets ns-3 cannot carry), and the CLI round trip through a stand-in program (a shell
 * script that answers with fixed times), a missing program and one that
 * refuses its input. The real program is checked by `make ns3-test`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fabricsim/ns3.h"
#include "fabricsim/report.h"
#include "fabricsim/scenario.h"
#include "test.h"

/* Star of 3 hosts (switch = node 3; cables host i <-> switch are links
 * 2i (up) and 2i+1 (down)), 1 us per link: flows a (0 -> 1, 1000 B) and
 * b (2 -> 1, 0 B, after a), task t on host 1 after both. */
static const char *const STAR =
    "{\"topology\": {\"type\": \"star\", \"hosts\": 3, \"gbps\": 100, \"latency_ns\": 1000},"
    " \"routing\": {\"mode\": \"%s\"}%s,"
    " \"flows\": [{\"id\": \"a\", \"src\": 0, \"dst\": 1, \"bytes\": 1000},"
    "             {\"id\": \"b\", \"src\": 2, \"dst\": 1, \"bytes\": 0, \"start_ns\": 7,"
    "              \"after\": [\"a\"]}],"
    " \"tasks\": [{\"id\": \"t\", \"host\": 1, \"duration_ns\": 500, \"after\": [\"a\", \"b\"]}]}";

static fs_scenario *star(const char *mode, const char *extra, int run) {
  char text[1024];
  snprintf(text, sizeof(text), STAR, mode, extra);
  fs_err err = {0, ""};
  fs_scenario *sc = NULL;
  if (fs_scenario_parse(text, strlen(text), "star.json", &sc, &err)) {
    test_fail(__FILE__, __LINE__, "parse: %s", err.msg);
    return NULL;
  }
  fs_sim_opts opts = {0};
  if (run && fs_scenario_run(sc, &opts, &err)) {
    test_fail(__FILE__, __LINE__, "run: %s", err.msg);
    fs_scenario_free(sc);
    return NULL;
  }
  return sc;
}

/* The exchange file fs_ns3_write gives for sc (malloc'd; NULL after a
 * failed check). */
static char *exchange_file(const fs_scenario *sc) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  fs_err err = {0, ""};
  CHECK_OK(fs_ns3_write(f, sc, &err), &err);
  fclose(f);
  return buf;
}

TEST(test_ns3_exchange_file_lists_nodes_links_paths_tasks_deps) {
  fs_scenario *sc = star("shortest", "", 1);
  if (!sc) return;
  char *buf = exchange_file(sc);
  static const char *const want =
      "fabricsim-ns3 1\n"
      "nodes 4\n"
      "node 0 host\nnode 1 host\nnode 2 host\nnode 3 switch\n"
      "link 0 0 3 100000000000 1000 1\n"
      "link 1 3 0 100000000000 1000 0\n"
      "link 2 1 3 100000000000 1000 3\n"
      "link 3 3 1 100000000000 1000 2\n"
      "link 4 2 3 100000000000 1000 5\n"
      "link 5 3 2 100000000000 1000 4\n"
      "flow 0 0 1 1000 0 2 0 3 1 0 3\n"
      "flow 1 2 1 0 7 2 2 3 1 4 3\n"
      "task 2 1 0 500\n"
      "dep 0 1 done\n"
      "dep 0 2 done\n"
      "dep 1 2 done\n"
      "end\n";
  if (!buf || strcmp(buf, want) != 0)
    test_fail(__FILE__, __LINE__, "exchange file: expected\n%sgot\n%s", want, buf ? buf : "");
  free(buf);
  fs_scenario_free(sc);
}

/* rdma: the second line names the transport and its packet sizes (the
 * defaults: 4096-byte payload, 62 header bytes), and a third its DCQCN
 * settings when the scenario changed them; tcp with persistent connections
 * names those; tcp (new connections or persistent ones) writes its
 * segment, header bytes, initial window and K; the fluid engine nothing. */
TEST(test_ns3_exchange_file_names_rdma_and_its_packets) {
  static const char *const extra[] = {
      ", \"transport\": \"rdma\"",
      ", \"transport\": {\"kind\": \"rdma\", \"mss_bytes\": 1024, \"header_bytes\": 30}",
      ", \"transport\": \"tcp\"",
      ", \"transport\": {\"kind\": \"tcp\", \"connections\": \"persistent\"}",
      ", \"transport\": {\"kind\": \"rdma\", \"rate_control\": \"dcqcn\"}",
      ", \"transport\": {\"kind\": \"rdma\", \"dcqcn\": {\"kmin_kb\": 5, \"f\": 5}}",
      (", \"transport\": {\"kind\": \"tcp\", \"mss_bytes\": 8960, \"header_bytes\": 42, "
       "\"init_window\": 4, \"queue_k\": 20.5}"),
      ", \"transport\": \"fluid\""};
  static const char *const want[] = {
      "fabricsim-ns3 1\ntransport rdma 4096 62\nnodes 4\n",
      "fabricsim-ns3 1\ntransport rdma 1024 30\nnodes 4\n",
      "fabricsim-ns3 1\ntcp 8948 54 10 65\nnodes 4\n",
      "fabricsim-ns3 1\ntransport tcp persistent\ntcp 8948 54 10 65\nnodes 4\n",
      "fabricsim-ns3 1\ntransport rdma 4096 62\nnodes 4\n",
      "fabricsim-ns3 1\ntransport rdma 4096 62\ndcqcn 5 1600 0.20000000000000001 0.00390625 1 4 300 5 20 200 1000\nnodes 4\n",
      "fabricsim-ns3 1\ntcp 8960 42 4 20.5\nnodes 4\n",
      "fabricsim-ns3 1\nnodes 4\n"};
  for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
    fs_scenario *sc = star("shortest", extra[i], 1);
    if (!sc) continue;
    char *buf = exchange_file(sc);
    if (!buf || strncmp(buf, want[i], strlen(want[i])) != 0)
      test_fail(__FILE__, __LINE__, "case %zu: expected the file to begin\n%sgot\n%.80s", i,
                want[i], buf ? buf : "");
    free(buf);
    fs_scenario_free(sc);
  }
}

TEST(test_ns3_results_replace_times_and_busy) {
  fs_scenario *sc = star("shortest", "", 1);
  if (!sc) return;
  /* a: 100..2500, b: 2600..4600, t: 4600..5100 (ns). Link 3 (switch ->
   * host 1) carries both: busy 2400 + 2000; link 0 only a. */
  static const char res[] =
      "fabricsim-ns3-result 1\n"
      "item 0 100 2500\n"
      "item 2 4600 5100\n"
      "item 1 2600 4600\n"
      "makespan 5100\n"
      "end\n";
  fs_err err = {0, ""};
  CHECK_OK(fs_ns3_read(res, sizeof(res) - 1, "out.txt", sc, &err), &err);
  CHECK_REL(fs_sim_start_s(sc->sim, 0), 100e-9, 1e-12, "s");
  CHECK_REL(fs_sim_finish_s(sc->sim, 0), 2500e-9, 1e-12, "s");
  CHECK_REL(fs_sim_start_s(sc->sim, 1), 2600e-9, 1e-12, "s");
  CHECK_REL(fs_sim_finish_s(sc->sim, 2), 5100e-9, 1e-12, "s");
  CHECK_REL(fs_sim_makespan_s(sc->sim), 5100e-9, 1e-12, "s");
  const fs_sim_link_stats *ls = fs_sim_links(sc->sim);
  CHECK_REL(ls[0].busy_s, 2400e-9, 1e-12, "s");
  CHECK_REL(ls[3].busy_s, 4400e-9, 1e-12, "s");
  CHECK_REL(ls[4].busy_s, 2000e-9, 1e-12, "s");
  CHECK_EQ_INT(ls[1].busy_s == 0, 1);
  CHECK_REL(ls[0].bytes, 1000, 0, "B"); /* bytes stay the routes' */
  /* The reports print the new times. */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK_EQ_INT(fs_report_sim_json(f, sc), 0);
  fclose(f);
  CHECK(buf && strstr(buf, "\"makespan_ns\":5100,") != NULL);
  CHECK(buf && strstr(buf, "\"start_ns\":100,\"finish_ns\":2500,\"fct_ns\":2400") != NULL);
  free(buf);
  fs_scenario_free(sc);
}

TEST(test_ns3_bad_results_name_the_line_and_change_nothing) {
  fs_scenario *sc = star("shortest", "", 1);
  if (!sc) return;
  double before = fs_sim_makespan_s(sc->sim), a_fin = fs_sim_finish_s(sc->sim, 0);
  /* {result text, expected part of the message} */
  static const char *const cases[][2] = {
      {"nonsense\n", "out.txt:1: expected 'fabricsim-ns3-result 1'"},
      {"fabricsim-ns3-result 2\nend\n", "out.txt:1: expected"},
      {"fabricsim-ns3-result 1\nitem 0 1 2\nitem 1 1 2\n", "out.txt: truncated: no 'end' line"},
      {"fabricsim-ns3-result 1\nitem 0 1 2\nitem 2 1 2\nend\n", "out.txt: item 1 (of 3) has no times"},
      {"fabricsim-ns3-result 1\nitem 0 1 2\nitem 0 1 2\n", "out.txt:3: item 0 listed twice"},
      {"fabricsim-ns3-result 1\nitem 0 5 2\n", "out.txt:2: must be 'item I START_NS FINISH_NS'"},
      {"fabricsim-ns3-result 1\nitem 3 1 2\n", "with I in [0, 2]"},
      {"fabricsim-ns3-result 1\nitem 0 1 2x\n", "got 'item 0 1 2x'"},
      {"fabricsim-ns3-result 1\nflow 0 1 2\n", "out.txt:2: unknown line 'flow 0 1 2'"},
      {"fabricsim-ns3-result 1\nitem 0 1 2\nitem 1 1 2\nitem 2 1 2\nend\nitem 0 1 2\n",
       "out.txt:6: text after 'end'"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    fs_err err = {0, ""};
    const char *text = cases[i][0], *want = cases[i][1];
    int rc = fs_ns3_read(text, strlen(text), "out.txt", sc, &err);
    if (rc != FS_EINVAL || !strstr(err.msg, want))
      test_fail(__FILE__, __LINE__, "case %zu: expected FS_EINVAL with '%s', got %d '%s'", i,
                want, rc, err.msg);
  }
  CHECK_REL(fs_sim_makespan_s(sc->sim), before, 0, "s");
  CHECK_REL(fs_sim_finish_s(sc->sim, 0), a_fin, 0, "s");
  fs_scenario_free(sc);
}

TEST(test_ns3_refuses_spray_control_failures_and_other_transports) {
  static const struct {
    const char *mode, *extra, *want;
  } cases[] = {
      {"spray", "", "star.json: $.routing.mode: the ns-3 backend pins each flow to one path; "
                    "use shortest, ecmp or explicit, got \"spray\""},
      {"optimized", "", "star.json: $.routing.mode: the ns-3 backend has no routing control"},
      {"ecmp", ", \"failures\": [{\"at_ns\": 5, \"switch\": \"switch0\"}]",
       "star.json: $.failures: the ns-3 backend has no routing control, got 3 failed cable(s)"},
      {"ecmp", ", \"transport\": {\"kind\": \"rdma\", \"header_bytes\": 28}",
       "star.json: $.transport.header_bytes: the ns-3 backend's RoCE packets carry whole "
       "bytes, at least 30 of headers (PPP 2, IPv4 20, UDP 8), got 28"},
      {"ecmp", ", \"transport\": {\"kind\": \"rdma\", \"header_bytes\": 62.5}",
       "star.json: $.transport.header_bytes: the ns-3 backend's RoCE packets carry whole"},
      {"ecmp", ", \"transport\": {\"kind\": \"rdma\", \"mss_bytes\": 8960}",
       "star.json: $.transport.mss_bytes: the ns-3 backend's RoCE packets carry whole bytes, "
       "payload + headers at most 9002 (MTU 9000 + PPP 2), got 8960"},
      {"ecmp", ", \"transport\": {\"kind\": \"tcp\", \"header_bytes\": 40}",
       "star.json: $.transport.header_bytes: the ns-3 backend's TCP packets carry 42 bytes of "
       "headers (PPP 2, IPv4 20, TCP 20) or 54 (with timestamps), got 40"},
      {"ecmp", ", \"transport\": {\"kind\": \"tcp\", \"mss_bytes\": 8961, \"header_bytes\": 42}",
       "star.json: $.transport.mss_bytes: the ns-3 backend's TCP segments are whole bytes, "
       "segment + headers at most 9002 (MTU 9000 + PPP 2), got 8961"},
      {"ecmp", ", \"transport\": {\"kind\": \"tcp\", \"mss_bytes\": 1000.5}",
       "star.json: $.transport.mss_bytes: the ns-3 backend's TCP segments are whole bytes"},
      {"ecmp", ", \"transport\": {\"kind\": \"tcp\", \"init_window\": 2.5}",
       "star.json: $.transport.init_window: the ns-3 backend's initial window is a whole "
       "number of segments (at most 1e6), got 2.5"},
      {"ecmp", ", \"transport\": {\"kind\": \"tcp\", \"queue_k\": 0}",
       "star.json: $.transport.queue_k: the ns-3 backend's switch ports mark ECN at K > 0 "
       "packets"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    fs_scenario *sc = star(cases[i].mode, cases[i].extra, 0);
    if (!sc) continue;
    fs_err err = {0, ""};
    int rc = fs_ns3_check(sc, &err);
    if (rc != FS_EINVAL || !strstr(err.msg, cases[i].want))
      test_fail(__FILE__, __LINE__, "%s: expected FS_EINVAL with '%s', got %d '%s'",
                cases[i].mode, cases[i].want, rc, err.msg);
    fs_scenario_free(sc);
  }
  /* the fluid engine, tcp with new connections and rdma have it as reference */
  static const char *const fine[] = {"", ", \"transport\": \"tcp\"",
                                     ", \"transport\": \"fluid\"", ", \"transport\": \"rdma\"",
                                     ", \"transport\": {\"kind\": \"tcp\", \"connections\": \"persistent\"}",
                                     ", \"transport\": {\"kind\": \"rdma\", \"mss_bytes\": 8940}",
                                     (", \"transport\": {\"kind\": \"tcp\", \"mss_bytes\": 1460, "
                                      "\"header_bytes\": 42, \"init_window\": 4, \"queue_k\": 20}")};
  for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
    fs_scenario *sc = star("ecmp", fine[i], 0);
    if (!sc) continue;
    fs_err err = {0, ""};
    CHECK_OK(fs_ns3_check(sc, &err), &err);
    fs_scenario_free(sc);
  }
}

/* A flow spread over several paths is refused by the writer too (a
 * spraying run that skipped fs_ns3_check), before it writes anything. */
TEST(test_ns3_writer_refuses_a_sprayed_flow) {
  static const char text[] =
      "{\"topology\": {\"type\": \"leafspine\", \"leaves\": 2, \"spines\": 2,"
      " \"hosts_per_leaf\": 1}, \"routing\": {\"mode\": \"spray\"},"
      " \"flows\": [{\"src\": 0, \"dst\": 1, \"bytes\": 1000}]}";
  fs_err err = {0, ""};
  fs_scenario *sc = NULL;
  CHECK_OK(fs_scenario_parse(text, sizeof(text) - 1, "spray.json", &sc, &err), &err);
  if (!sc) return;
  fs_sim_opts opts = {0};
  CHECK_OK(fs_scenario_run(sc, &opts, &err), &err);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK_EQ_INT(fs_ns3_write(f, sc, &err), FS_EINVAL);
  fclose(f);
  CHECK(strstr(err.msg, "spray.json: $.flows[0]: the ns-3 backend pins each flow to one path, "
                        "but this one is routed over 2 paths (mode spray)") != NULL);
  CHECK_EQ_INT(len, 0);
  free(buf);
  fs_scenario_free(sc);
}

static int write_file(const char *path, const char *text, int exec) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs(text, f);
  if (fclose(f) != 0) return -1;
  return exec ? chmod(path, 0755) : 0;
}

TEST(test_ns3_cli_round_trip_and_refusals) {
  static char out[8192];
  char dir[64], scen[128], fake[128], refuse[128], args[512];
  snprintf(dir, sizeof(dir), "/tmp/fabricsim-ns3-XXXXXX");
  if (!mkdtemp(dir)) {
    test_fail(__FILE__, __LINE__, "mkdtemp failed");
    return;
  }
  char text[1024];
  snprintf(text, sizeof(text), STAR, "shortest", "");
  snprintf(scen, sizeof(scen), "%s/star.json", dir);
  snprintf(fake, sizeof(fake), "%s/fake-ns3", dir);
  snprintf(refuse, sizeof(refuse), "%s/refuse-ns3", dir);
  /* The stand-in checks it was given an exchange file, then answers. */
  CHECK_EQ_INT(write_file(scen, text, 0), 0);
  CHECK_EQ_INT(write_file(fake,
                          "#!/bin/sh\n"
                          "in=${1#--in=}; out=${2#--out=}\n"
                          "head -1 \"$in\" | grep -q '^fabricsim-ns3 1$' || exit 3\n"
                          "printf 'fabricsim-ns3-result 1\\nitem 0 0 3000\\nitem 1 3000 5000\\n"
                          "item 2 5000 5500\\nmakespan 5500\\nend\\n' >\"$out\"\n",
                          1),
               0);
  CHECK_EQ_INT(write_file(refuse, "#!/bin/sh\necho 'fabricsim-ns3: no' >&2\nexit 2\n", 1), 0);

  /* {program, options, exit status, part of the output} */
  const char *const cases[][4] = {
      {fake, "", "0", "\"makespan_ns\":5500,"},
      {fake, "", "0",
       "{\"id\":\"b\",\"src\":2,\"dst\":1,\"bytes\":0,\"start_ns\":3000,"
       "\"finish_ns\":5000,\"fct_ns\":2000,\"path\":[2,3,1]}"},
      {fake, "--format csv", "0", "a,0,1,1000,0,3000,3000,1,0 3 1\n"},
      {fake, "--summary", "0", "makespan:        5.5 us"},
      {fake, "--summary", "0", "backend:         ns-3"},
      {fake, "--routing spray", "2", "$.routing.mode: the ns-3 backend pins each flow to one path"},
      {refuse, "", "2", "fabricsim-ns3: no\n"},
      {refuse, "", "2", "refused the scenario (exit 2"},
      {"/no/such/fabricsim-ns3", "", "2",
       "fabricsim: --backend ns3: the ns-3 program '/no/such/fabricsim-ns3' is missing: run 'make ns3'"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    setenv("FABRICSIM_NS3", cases[i][0], 1);
    snprintf(args, sizeof(args), "sim '%s' --backend ns3 %s", scen, cases[i][1]);
    int st = test_run_cli(args, "2>&1", out, sizeof(out));
    if (st != atoi(cases[i][2]) || !strstr(out, cases[i][3]))
      test_fail(__FILE__, __LINE__, "'%s' with %s: expected exit %s and '%s', got %d:\n%s", args,
                cases[i][0], cases[i][2], cases[i][3], st, out);
  }
  snprintf(args, sizeof(args), "sim '%s' --backend omnet", scen);
  CHECK_EQ_INT(test_run_cli(args, "2>&1", out, sizeof(out)), 2);
  CHECK(strstr(out, "--backend must be fluid, ns3 or packet, got 'omnet'") != NULL);
  unsetenv("FABRICSIM_NS3");
  remove(scen);
  remove(fake);
  remove(refuse);
  rmdir(dir);
}
