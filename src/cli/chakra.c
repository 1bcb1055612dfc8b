/* fabricsim chakra TRACE_PREFIX --topo SPEC: simulates MLCommons Chakra
 * execution traces (PREFIX.<rank>.et) on a topology and prints each rank's
 * finish time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "cli.h"
#include "fabricsim/chakra.h"

static void help(FILE *f) {
  fprintf(f,
          "usage: fabricsim chakra TRACE_PREFIX --topo SPEC [options]\n"
          "\n"
          "Reads MLCommons Chakra execution traces TRACE_PREFIX.0.et, .1.et, ...\n"
          "(one per rank; rank r runs on host r) and simulates them: COMP nodes as\n"
          "compute, COMM_COLL nodes as collectives (algorithm by NCCL's model),\n"
          "COMM_SEND/RECV pairs as flows, data and control dependencies.\n"
          "\n"
          "  --topo SPEC          topology (inline spec or JSON file), required\n"
          "  --routing M          ecmp (default), spray, shortest\n"
          "  --seed N             ECMP seed (default 1)\n"
          "  --transport KIND     fluid (default), tcp or rdma\n"
          "  --connections new|persistent  tcp connections (default persistent)\n"
          "  --rate-control dcqcn|dctcp|ideal  rdma's or tcp's rate control (default ideal)\n"
          "  --packet-bytes N     tcp, rdma under dcqcn: flows of at most N bytes run as\n"
          "                       packets (default 256K; 0: none)\n"
          "  --format text|json   per-rank finish times (default text)\n");
}

int fs__cli_chakra(int argc, char **argv) {
  const char *prefix = NULL, *topo_s = NULL, *routing = "ecmp", *format = "text";
  const char *transport = NULL, *connections = NULL, *rate_control = NULL, *pkt = NULL;
  unsigned long long seed = 1;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      help(stdout);
      return 0;
    }
    if (a[0] != '-') {
      if (prefix) return fs__cli_usage("chakra", "one trace prefix, got '%s' and '%s'", prefix, a);
      prefix = a;
      continue;
    }
    if (i + 1 >= argc) return fs__cli_usage("chakra", "'%s' needs a value", a);
    const char *v = argv[++i];
    if (strcmp(a, "--topo") == 0) topo_s = v;
    else if (strcmp(a, "--routing") == 0) routing = v;
    else if (strcmp(a, "--format") == 0) format = v;
    else if (strcmp(a, "--transport") == 0) transport = v;
    else if (strcmp(a, "--connections") == 0) connections = v;
    else if (strcmp(a, "--rate-control") == 0) rate_control = v;
    else if (strcmp(a, "--packet-bytes") == 0) pkt = v;
    else if (strcmp(a, "--seed") == 0) {
      if (fs__cli_parse_seed(v, &seed))
        return fs__cli_usage("chakra", "--seed must be a non-negative integer, got '%s'", v);
    } else {
      return fs__cli_usage("chakra", "unknown option '%s'", a);
    }
  }
  if (!prefix) return fs__cli_usage("chakra", "missing TRACE_PREFIX");
  if (!topo_s) return fs__cli_usage("chakra", "--topo SPEC is required");
  int json = strcmp(format, "json") == 0;
  if (!json && strcmp(format, "text") != 0)
    return fs__cli_usage("chakra", "--format must be text or json, got '%s'", format);
  fs_route_mode mode;
  if (fs_route_mode_parse(routing, &mode) ||
      (mode != FS_ROUTE_ECMP && mode != FS_ROUTE_SPRAY && mode != FS_ROUTE_SHORTEST))
    return fs__cli_usage("chakra", "--routing must be ecmp, spray or shortest, got '%s'", routing);
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_FLUID, &tp);
  int rc = fs__cli_transport("chakra", transport, connections, rate_control, pkt, 1, &tp);
  if (rc) return rc;
  fs_err err = {0, ""};
  fs_topo *t = NULL;
  fs_chakra *c = NULL;
  double *fin = NULL, makespan = 0;
  fs_chakra_stats st;
  int status = 0;
  if ((rc = fs_topo_from_spec(topo_s, &t, &err)) || (rc = fs_chakra_load(prefix, &c, &err)))
    goto out;
  if (!(fin = calloc((size_t)fs_chakra_ranks(c), sizeof(double)))) {
    rc = fs_err_set(&err, FS_ENOMEM, "out of memory");
    goto out;
  }
  if ((rc = fs_chakra_run(c, t, mode, seed, &tp, fin, &makespan, &st, &err))) goto out;
  int32_t n = fs_chakra_ranks(c);
  if (json) {
    char num[40];
    fs__fmt_num(num, makespan * 1e9);
    printf("{\"ranks\":%d,\"nodes\":%lld,\"tasks\":%lld,\"flows\":%lld,\"collectives\":%lld,"
           "\"controls\":%lld,\"makespan_ns\":%s,\"rank_finish_ns\":[",
           n, (long long)st.nodes, (long long)st.tasks, (long long)st.flows,
           (long long)st.collectives, (long long)st.controls, num);
    for (int32_t r = 0; r < n; r++) {
      fs__fmt_num(num, fin[r] * 1e9);
      printf("%s%s", r ? "," : "", num);
    }
    printf("]}\n");
  } else {
    printf("traces:     %s.<rank>.et, %d ranks, %lld nodes (%lld compute, %lld flows, %lld "
           "collectives, %lld control)\n",
           prefix, n, (long long)st.nodes, (long long)st.tasks, (long long)st.flows,
           (long long)st.collectives, (long long)st.controls);
    printf("makespan:   %.3f us\n", makespan * 1e6);
    printf("rank  finish_us\n");
    for (int32_t r = 0; r < n; r++) printf("%4d  %.3f\n", r, fin[r] * 1e6);
  }
out:
  if (rc) status = fs__cli_fail(&err);
  free(fin);
  fs_chakra_free(c);
  fs_topo_free(t);
  return status;
}
