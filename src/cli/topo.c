/* fabricsim topo SPEC: builds a topology from a file or inline spec and
 * prints its size, link speeds, hop counts and bisection bandwidth (the
 * report module's fs_report_topo_text/json), or exports its graph. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "fabricsim/report.h"
#include "fabricsim/topo.h"
#include "fabricsim/topoopt.h"
#include "fabricsim/work.h"

/* What the command line gives; the initialiser holds the defaults. */
typedef struct cmdline {
  const char *spec, *format, *export, *out;
  int n_spec, te_job;
} cmdline;

#define AT(f) offsetof(cmdline, f)
static const fs__opt topo_opts[] = {
    FS__OPT_STR("--format", 0, AT(format), "text|json",
                "output format (default text)"),
    FS__OPT_STR("--export", 0, AT(export), "FMT",
                "write the graph instead (dot, graphml, or json: a \"file\" topology that "
                "rebuilds the same graph)"),
    FS__OPT_STR("--out", 0, AT(out), "FILE",
                "write the export to FILE instead of stdout"),
    FS__OPT_FLAG("--demand-from-job", 0, AT(te_job),
                 "SPEC is a training job on a jupiter topology: engineer its block-to-block "
                 "links for the job's traffic between blocks (docs/model.md, \"Optical "
                 "fabrics\")"),
    FS__OPT_END};

static const fs__cmd topo_cmd = {
    "topo", "SPEC [options]",
    "Describes a topology: node and link counts, switch radix, link speeds, host-to-host "
    "diameter and mean hop count, and the bisection bandwidth between hosts [0, n/2) and "
    "[n/2, n) in the documented host order.\n\n"
    "The report adds a cost and power estimate of the scale-out network from the per-part "
    "table of docs/model.md (override it under \"cost\").",
    "SPEC is a JSON file or an inline form, e.g.\n"
    "  fattree:k=8,gbps=100\n"
    "  leafspine:leaves=4,spines=2,hosts_per_leaf=8,host_gbps=400,fabric_gbps=400\n"
    "  clos:pods=8,edges_per_pod=4,hosts_per_edge=16,edge_oversubscription=2\n"
    "  clos:tiers=2,edges_per_pod=8,hosts_per_edge=32,edge_uplinks=8,edge_gbps=400\n"
    "  star:hosts=16,gbps=100\n"
    "  railopt:servers=64,gpus_per_node=8,servers_per_su=32\n"
    "  railonly:servers=32,gpus_per_node=8\n"
    "  torus:dims=8x8x8,gbps=400      ring:n=16      fullmesh:n=8\n"
    "  awgr:hosts=16                  sirius:hosts=16,slot_ns=100\n"
    "  lotus:g=8,a=4,p=4              jupiter:blocks=8,hosts_per_block=16\n"
    "  sipml-ocs:gpus=64,degree=4     sipml-ring:gpus=64,reach=2\n"
    "  dragonfly:p=4 (a=2p, h=p, g=a*h+1)\n"
    "  file:path=graph.json (a node/link list, as --export json writes)\n",
    topo_opts, "SPEC", "SPEC", 1, 1, AT(spec), AT(n_spec)};
#undef AT

/* Jupiter's topology engineering for a job (--demand-from-job, here and
 * in train): the job's bytes per iteration between its servers (packed
 * placement, the TopoOpt traffic of fs_topoopt_traffic_from_job) summed
 * into blocks of hosts_per_block GPUs, then fs_topo_jupiter_engineer on
 * the job's topology. */
int fs__cli_jupiter_engineer(const fs_job *job, fs_topo **out, fs_err *err) {
  fs_topoopt_traffic *tr = NULL;
  double *d = NULL;
  int rc = 0;
  if (!job->topo || strcmp(job->topo->family, "jupiter") != 0 || job->topo->n_dims != 4)
    return fs_err_set(err, FS_EINVAL, "%s: --demand-from-job needs a job on a jupiter topology",
                      job->file);
  rc = fs_topoopt_traffic_from_job(job, &tr, err);
  if (!rc) {
    int32_t B = job->topo->dims[0], hpb = job->topo->dims[1];
    int64_t G = job->hw.gpus_per_node > 0 ? job->hw.gpus_per_node : 1;
    d = calloc((size_t)B * (size_t)B, sizeof(double));
    if (!d) rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    for (int32_t u = 0; !rc && u < tr->n; u++)
      for (int32_t v = 0; v < tr->n; v++) {
        int64_t bu = (int64_t)u * G / hpb, bv = (int64_t)v * G / hpb;
        if (bu != bv && bu < B && bv < B)
          d[bu * B + bv] += tr->ar[(int64_t)u * tr->n + v] + tr->mp[(int64_t)u * tr->n + v];
      }
  }
  if (!rc) rc = fs_topo_jupiter_engineer(job->topo, d, out, err);
  free(d);
  fs_topoopt_traffic_free(tr);
  return rc;
}

static int engineer_for_job(const char *file, fs_topo **out, fs_err *err) {
  fs_job *job = NULL;
  int rc = fs_job_load(file, &job, err);
  if (!rc) rc = fs__cli_jupiter_engineer(job, out, err);
  fs_job_free(job);
  return rc;
}

int fs__cli_topo(int argc, char **argv) {
  cmdline o = {NULL, "text", NULL, NULL, 0, 0};
  int go = fs__opts_parse(&topo_cmd, &o, argc, argv);
  if (go >= 0) return go;
  const char *spec = o.spec, *format = o.format, *export = o.export, *outfile = o.out;
  int fmt, go_fmt = fs__cli_format("topo", format, "text json", &fmt);
  if (go_fmt >= 0) return go_fmt;
  if (export && strcmp(export, "dot") != 0 && strcmp(export, "graphml") != 0 &&
      strcmp(export, "json") != 0)
    return fs__cli_usage("topo", "--export must be dot, graphml or json, got '%s'", export);
  if (outfile && !export) return fs__cli_usage("topo", "--out goes with --export");

  /* the file is opened before the topology is built (which can be long) */
  fs_output *out = NULL;
  if (outfile && fs__cli_output_open(outfile, &out)) return 2;
  fs_err err = {0, ""};
  fs_topo *t = NULL;
  int rc = o.te_job ? engineer_for_job(spec, &t, &err) : fs_topo_from_spec(spec, &t, &err);
  if (rc) {
    fs_output_abort(out);
    return fs__cli_fail(&err);
  }
  if (export) {
    errno = 0;
    rc = fs_topo_export(t, export, out ? fs_output_file(out) : stdout, &err);
    int e = errno; /* (a failed write's reason) */
    fs_topo_free(t);
    if (rc == FS_EIO || (!rc && !out && (fflush(stdout) != 0 || ferror(stdout)))) {
      if (!e) e = errno;
      fprintf(stderr, "fabricsim: %s: write failed: %s\n", out ? fs_output_path(out) : "stdout",
              e ? strerror(e) : "I/O error");
      fs_output_abort(out);
      return 1;
    }
    if (rc) {
      fs_output_abort(out);
      return fs__cli_fail(&err);
    }
    return out ? fs__cli_output_commit(out) : 0;
  }
  fs_topo_stats st;
  fs_topo_cost cost;
  fs_topo_cost_compute(t, &cost);
  if (!(rc = fs_topo_stats_compute(t, &st, &err)))
    rc = fmt == FS__FMT_JSON ? fs_report_topo_json(stdout, t, &st, &cost, &err)
                                     : fs_report_topo_text(stdout, t, &st, &cost, &err);
  fs_topo_free(t);
  if (rc && rc != FS_EIO) return fs__cli_fail(&err);
  return fs__cli_stdout_done("topo", rc);
}
