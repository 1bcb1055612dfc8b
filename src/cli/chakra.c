/* fabricsim chakra TRACE_PREFIX --topo SPEC: simulates MLCommons Chakra
 * execution traces (PREFIX.<rank>.et) on a topology and prints the
 * algorithm each kind of collective ran and each rank's finish time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "fabricsim/chakra.h"
#include "fabricsim/report.h"

/* What the command line gives; the initialiser holds the defaults. */
typedef struct cmdline {
  const char *prefix, *topo, *routing, *format, *algo;
  const char *transport, *connections, *rate_control, *pkt;
  unsigned long long seed;
  int n_prefix;
} cmdline;

#define AT(f) offsetof(cmdline, f)
static const fs__opt chakra_opts[] = {
    FS__OPT_STR("--topo", 0, AT(topo), "SPEC", "topology (inline spec or JSON file), required"),
    FS__OPT_STR("--routing", 0, AT(routing), "M", "ecmp (default), spray, shortest"),
    FS__OPT_STR("--algo", 0, AT(algo), "A",
                "the collectives' algorithm, as coll --algo: auto (default: NCCL's cost "
                "model), ring tree rd rhd binomial bruck pairwise direct hier inc ps; a "
                "collective it does not implement keeps NCCL's choice (printed per kind)"),
    FS__OPT_FN("--seed", 0, AT(seed), "N", fs__opt_seed,
               "--seed must be a non-negative integer", "ECMP seed (default 1)"),
    FS__OPT_STR("--transport", 0, AT(transport), "KIND", "fluid (default), tcp or rdma"),
    FS__OPT_STR("--connections", 0, AT(connections), "new|persistent",
                "tcp connections (default persistent: a collective library connects once; sim's "
                "independent flows default to new)"),
    FS__OPT_STR("--rate-control", 0, AT(rate_control), "dcqcn|dctcp|ideal",
                "rdma's or tcp's rate control (default ideal)"),
    FS__OPT_STR("--packet-bytes", 0, AT(pkt), "N",
                "tcp, rdma under dcqcn: flows of at most N bytes run as packets (default "
                "256K; 0: none)"),
    FS__OPT_STR("--format", 0, AT(format), "text|json", "per-rank finish times (default text)"),
    FS__OPT_END};

static const fs__cmd chakra_cmd = {
    "chakra", "TRACE_PREFIX --topo SPEC [options]",
    "Reads MLCommons Chakra execution traces TRACE_PREFIX.0.et, .1.et, ... (one per rank; "
    "rank r runs on host r) and simulates them: COMP nodes as compute, COMM_COLL nodes as "
    "collectives (algorithm by --algo or NCCL's model, printed for each kind of "
    "collective with its mean time and bus bandwidth), COMM_SEND/RECV pairs as flows, data "
    "and control dependencies.",
    NULL, chakra_opts, "TRACE_PREFIX", "trace prefix", 1, 1, AT(prefix), AT(n_prefix)};
#undef AT

int fs__cli_chakra(int argc, char **argv) {
  cmdline o = {.routing = "ecmp", .format = "text", .algo = "auto", .seed = 1};
  int rc = fs__opts_parse(&chakra_cmd, &o, argc, argv);
  if (rc >= 0) return rc;
  const char *prefix = o.prefix, *topo_s = o.topo, *routing = o.routing, *format = o.format;
  unsigned long long seed = o.seed;
  if (!topo_s) return fs__cli_usage("chakra", "--topo SPEC is required");
  int fmt, go_fmt = fs__cli_format("chakra", format, "text json", &fmt);
  if (go_fmt >= 0) return go_fmt;
  int json = fmt == FS__FMT_JSON;
  fs_route_mode mode;
  if (fs_route_mode_parse(routing, &mode) ||
      (mode != FS_ROUTE_ECMP && mode != FS_ROUTE_SPRAY && mode != FS_ROUTE_SHORTEST))
    return fs__cli_usage("chakra", "--routing must be ecmp, spray or shortest, got '%s'", routing);
  fs_coll_algo algo;
  if (fs_coll_algo_parse(o.algo, &algo))
    return fs__cli_usage("chakra", "unknown --algo '%s' (auto, ring, tree, rd, rhd, binomial, "
                         "bruck, pairwise, direct, hier, inc, ps)", o.algo);
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_FLUID, &tp);
  rc = fs__cli_transport("chakra", o.transport, o.connections, o.rate_control, o.pkt, 1, &tp);
  if (rc) return rc;
  fs_err err = {0, ""};
  fs_topo *t = NULL;
  fs_chakra *c = NULL;
  fs_chakra_result res = {0};
  int status = 0;
  if ((rc = fs_topo_from_spec(topo_s, &t, &err)) || (rc = fs_chakra_load(prefix, &c, &err)))
    goto out;
  fs_chakra_opts ro = {mode, seed, &tp, algo};
  if ((rc = fs_chakra_run2(c, t, &ro, &res, &err))) goto out;
  fs_report_chakra rep = {prefix,        fs_chakra_ranks(c), res.stats, res.makespan_s,
                          res.rank_finish_s, res.colls,     res.n_colls};
  status = fs__cli_stdout_done("chakra", json ? fs_report_chakra_json(stdout, &rep)
                                              : fs_report_chakra_text(stdout, &rep));
out:
  if (rc) status = fs__cli_fail(&err);
  fs_chakra_result_free(&res);
  fs_chakra_free(c);
  fs_topo_free(t);
  return status;
}
