/* fabricsim sim: load a scenario, simulate it, write JSON/CSV results.
 * Output goes to a temporary file renamed into place only on success, so a
 * failed run never leaves a partial output file. When a routing controller
 * ran (re-optimisation or failures), the JSON gets a "control" object
 * (appended to the report's top-level object, which is buffered for it)
 * and the summary two lines saying what the controller did. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"
#include "fabricsim/ns3.h"
#include "fabricsim/packet.h"
#include "fabricsim/html.h"
#include "fabricsim/report.h"
#include "fabricsim/scenario.h"

/* What the command line gives; the initialiser holds the defaults. */
typedef struct cmdline {
  const char *in, *out, *format, *routing, *seed, *transport, *connections, *rate_control;
  const char *pkt, *trace, *backend, *report;
  int summary, n_in;
} cmdline;

#define AT(f) offsetof(cmdline, f)
static const fs__opt sim_opts[] = {
    FS__OPT_STR("--out", 'o', AT(out), "FILE", "write results to FILE instead of stdout"),
    FS__OPT_STR("--format", 0, AT(format), "json|csv", "JSON (default) or one CSV row per flow"),
    FS__OPT_STR("--trace", 0, AT(trace), "FILE",
                "also write a Perfetto / Chrome trace (ui.perfetto.dev)"),
    FS__OPT_STR("--report", 0, AT(report), "FILE.html",
                "also write a self-contained HTML report (plots)"),
    FS__OPT_FLAG("--summary", 0, AT(summary),
                 "print a human summary on stdout (with --out, the results still go to FILE)"),
    FS__OPT_STR("--routing", 0, AT(routing), "MODE",
                "override the scenario: shortest|ecmp|spray|explicit, dor (torus, ring), "
                "minimal|valiant (dragonfly), railonly (rail-only), or optimized (periodic "
                "re-optimisation on the file's base routing, or ecmp; its interval etc. from "
                "the file or 1 ms, greedy). Another mode turns re-optimisation off; the "
                "scenario's failures always apply"),
    FS__OPT_STR("--seed", 0, AT(seed), "N", "override the ECMP hash seed"),
    FS__OPT_STR("--transport", 0, AT(transport), "KIND",
                "fluid (ideal max-min, the default), tcp (headers, store-and-forward, "
                "handshake, slow start, FIFO of small messages, DCTCP's use of shared links) "
                "or rdma (RoCEv2); overrides the file's \"transport\""),
    FS__OPT_STR("--connections", 0, AT(connections), "new|persistent",
                "tcp: open each flow's connection (the default here: a scenario's flows are "
                "independent transfers; train, coll and chakra default to persistent, as a "
                "collective library connects once) or reuse warm ones"),
    FS__OPT_STR("--rate-control", 0, AT(rate_control), "dcqcn|dctcp|ideal",
                "rdma: DCQCN's rate control (queues, ECN marks, cuts, slow recovery; 2-3x "
                "the cost); tcp: DCTCP's windows over the same queues (new connections: "
                "after the handshake and slow start); or max-min at once (ideal, the "
                "default)"),
    FS__OPT_STR("--packet-bytes", 0, AT(pkt), "N", FS__CLI_PACKET_BYTES_HELP),
    FS__OPT_STR("--backend", 0, AT(backend), "fluid|ns3|packet",
                "fluid (default): the max-min engine; ns3: the same routes run packet by "
                "packet in ns-3 (DCTCP; RoCEv2 with DCQCN under rdma; build it with 'make "
                "ns3'; FABRICSIM_NS3 names the program); packet: the ns-3 backend's set-up "
                "in fabricsim's own packet-level engine (tcp: DCTCP; rdma: RoCEv2 under "
                "DCQCN; seconds where ns-3 takes minutes); both single-path routing only, no "
                "control or failures"),
    FS__OPT_END};

static const fs__cmd sim_cmd = {
    "sim", "SCENARIO.json [options]",
    "Simulates the flows and tasks of a scenario on its topology with the fluid max-min "
    "engine and writes the results (docs/formats.md).",
    NULL, sim_opts, "SCENARIO.json", "scenario file", 1, 1, AT(in), AT(n_in)};
#undef AT

/* The ns-3 backend's program: $FABRICSIM_NS3, else fabricsim-ns3 next to
 * this executable (build/ after `make ns3`). */
static const char *ns3_program(char *buf, size_t cap) {
  const char *env = getenv("FABRICSIM_NS3");
  if (env && *env) return env;
  ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
  if (n <= 0) return "fabricsim-ns3";
  buf[n] = '\0';
  char *slash = strrchr(buf, '/');
  size_t dir = slash ? (size_t)(slash - buf) + 1 : 0;
  if (dir + sizeof("fabricsim-ns3") > cap) return "fabricsim-ns3";
  memcpy(buf + dir, "fabricsim-ns3", sizeof("fabricsim-ns3"));
  return buf;
}

/* kind: 0 JSON results, 1 CSV, 2 trace. */
static int write_kind(const fs_scenario *sc, FILE *f, int kind) {
  return kind == 1 ? fs_report_sim_csv(f, sc)
         : kind == 2 ? fs_report_sim_trace(f, sc)
                     : fs_report_sim_json(f, sc);
}

typedef struct results_ctx {
  const fs_scenario *sc;
  int kind;
} results_ctx;

static int results_fn(FILE *f, void *ctx) {
  const results_ctx *c = ctx;
  return write_kind(c->sc, f, c->kind);
}

/* Into o (freed), or on stdout if o is NULL. 0, or 1 after printing why. */
static int write_results(const fs_scenario *sc, fs_output *o, int kind) {
  results_ctx c = {sc, kind};
  if (o) return fs__cli_output_write(o, results_fn, &c);
  if (write_kind(sc, stdout, kind) || fflush(stdout) != 0) {
    fprintf(stderr, "fabricsim: writing results failed\n");
    return 1;
  }
  return 0;
}

static int sim_report(FILE *f, void *ctx) { return fs_html_sim_report(f, ctx); }

int fs__cli_sim(int argc, char **argv) {
  cmdline o = {.format = "json", .backend = "fluid"};
  int st = fs__opts_parse(&sim_cmd, &o, argc, argv);
  if (st >= 0) return st;
  const char *in = o.in, *out = o.out, *format = o.format, *routing = o.routing, *seed = o.seed;
  const char *trace = o.trace, *backend = o.backend, *report = o.report;
  int summary = o.summary;
  int fmt, go_fmt = fs__cli_format("sim", format, "json csv", &fmt);
  if (go_fmt >= 0) return go_fmt;
  if (strcmp(backend, "fluid") != 0 && strcmp(backend, "ns3") != 0 &&
      strcmp(backend, "packet") != 0)
    return fs__cli_usage("sim", "--backend must be fluid, ns3 or packet, got '%s'", backend);
  int ns3 = strcmp(backend, "ns3") == 0, packet = strcmp(backend, "packet") == 0;
  fs_route_mode mode = FS_ROUTE_ECMP;
  if (routing && strcmp(routing, "optimized") != 0 && fs_route_mode_parse(routing, &mode))
    return fs__cli_usage("sim",
                         "--routing must be shortest, ecmp, spray, explicit, optimized, dor, "
                         "minimal, valiant, railonly or lotus, got '%s'",
                         routing);
  unsigned long long seed_v = 0;
  if (seed && fs__cli_parse_seed(seed, &seed_v))
    return fs__cli_usage("sim", "--seed must be a non-negative integer, got '%s'", seed);

  fs_err err = {0, ""};
  fs_scenario *sc = NULL;
  if (report && (ns3 || packet))
    return fs__cli_usage("sim", "--report draws the fluid engine's run: not with --backend %s",
                         backend);
  fs__cli_progress ps;
  fs__cli_progress_start(&ps, "sim");
  int rc = fs_scenario_load(in, &sc, &err);
  if (rc) return fs__cli_fail(&err);
  if (routing && fs_scenario_set_routing(sc, routing, &err)) {
    fs_scenario_free(sc);
    return fs__cli_usage("sim", "--routing %s: %s", routing, err.msg);
  }
  if (seed) sc->seed = seed_v;
  if ((rc = fs__cli_transport("sim", o.transport, o.connections, o.rate_control, o.pkt, 0,
                              &sc->transport))) {
    fs_scenario_free(sc);
    return rc;
  }
  if ((ns3 && fs_ns3_check(sc, &err)) || (packet && fs_packet_check(sc, &err))) {
    fs_scenario_free(sc);
    return fs__cli_fail(&err);
  }
  /* every output is opened before the run, so a bad path costs nothing */
  fs_output *trace_out = NULL, *report_out = NULL, *out_out = NULL;
  if ((trace && fs__cli_output_open(trace, &trace_out)) ||
      (report && fs__cli_output_open(report, &report_out)) ||
      (out && fs__cli_output_open(out, &out_out))) {
    fs_output_abort(trace_out);
    fs_output_abort(report_out);
    fs_scenario_free(sc);
    return 2;
  }
  fs_sim_opts opts = {0};
  if (report) opts.link_bins = FS_HTML_LINK_BINS;
  opts.progress = fs__cli_progress_hook;
  opts.progress_ctx = &ps;
  rc = fs_scenario_run(sc, &opts, &err);
  if (rc == 0 && ns3) {
    char prog[4096];
    rc = fs_ns3_run(sc, ns3_program(prog, sizeof(prog)), &err);
  } else if (rc == 0 && packet) {
    rc = fs_packet_run(sc, &err);
  }
  fs__cli_progress_end(&ps);
  int status = rc ? fs__cli_fail(&err) : 0;
  if (status == 0 && trace_out) {
    status = write_results(sc, trace_out, 2);
    trace_out = NULL;
  }
  if (status == 0 && report_out) {
    status = fs__cli_output_write(report_out, sim_report, sc);
    report_out = NULL;
  }
  if (status == 0 && (out_out || !summary)) {
    status = write_results(sc, out_out, fmt == FS__FMT_CSV);
    out_out = NULL;
  }
  if (status == 0 && summary) {
    if (fs_report_sim_summary(stdout, sc)) status = 1;
    if (ns3) printf("backend:         ns-3 packet level (times above; engine counts are the routing run's)\n");
    if (packet)
      printf("backend:         packet level (times above; engine counts are the routing run's)\n");
    printf("wall time:       %.3f s\n", fs__cli_progress_elapsed(&ps));
  }
  fs_output_abort(trace_out);
  fs_output_abort(report_out);
  fs_output_abort(out_out);
  fs_scenario_free(sc);
  return status;
}
