/* fabricsim ocs topo: TopoOpt-style direct-connect topology for a job
 * (topoopt.h), its random and exact yardsticks, and one training iteration
 * (train.h) on each of them and on electrical fabrics of similar cost,
 * side by side with cost and power (docs/model-topoopt.md). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "fabricsim/report.h"
#include "fabricsim/topoopt.h"
#include "fabricsim/train.h"

/* --switch: patch or ocs. */
static int parse_switch(const char *v, void *field) {
  if (strcmp(v, "patch") && strcmp(v, "ocs")) return -1;
  *(const char **)field = v;
  return 0;
}

/* What the command line gives; the initialiser holds the defaults. */
typedef struct cmdline {
  const char *file, *format, *export, *compare, *sw;
  long degree, ar_rings, ls, seed;
  double gbps, tl;
  int exact, no_train, n_file;
} cmdline;

_Static_assert(FS_TOPOOPT_MAX_DEGREE == 64, "the messages of --degree and --ar-rings say 64");
#define AT(f) offsetof(cmdline, f)
static const fs__opt topo_opts[] = {
    FS__OPT_LONG("--degree", 0, AT(degree), "D", 1, FS_TOPOOPT_MAX_DEGREE,
                 "--degree: must be an integer in [1, 64]",
                 "optical ports per server (1..64), required"),
    FS__OPT_DOUBLE("--gbps", 0, AT(gbps), "B", 1e-3, 1e7,
                   "--gbps: must be a number in [0.001, 1e7]",
                   "per port (default: the job's nics_per_gpu x nic_gbps)"),
    FS__OPT_STR("--compare", 0, AT(compare), "LIST",
                "electrical fabrics of similar cost, comma-separated: fattree leafspine "
                "railopt railonly job (the job file's own topology), none (default "
                "fattree,leafspine,job)"),
    FS__OPT_FN("--switch", 0, AT(sw), "KIND", parse_switch, "--switch: must be patch or ocs",
               "patch (patch panel, default) or ocs: port price/power"),
    FS__OPT_FLAG("--exact", 0, AT(exact), "also the exact MILP optimum (<= 12 servers)"),
    FS__OPT_DOUBLE("--time-limit", 0, AT(tl), "S", 0.01, 1e6,
                   "--time-limit: must be seconds in [0.01, 1e6]",
                   "exact: seconds before giving up (default 60)"),
    FS__OPT_LONG("--ar-rings", 0, AT(ar_rings), "R", 0, FS_TOPOOPT_MAX_DEGREE,
                 "--ar-rings: must be an integer in [0, 64]",
                 "rings per all-reduce group (default: best of 0..D)"),
    FS__OPT_LONG("--ls-evals", 0, AT(ls), "N", 0, 100000000,
                 "--ls-evals: must be an integer >= 0",
                 "local-search evaluations (default by size, see docs)"),
    FS__OPT_LONG("--seed", 0, AT(seed), "S", 0, 2147483647L, "--seed: must be an integer >= 0",
                 "local search and random baseline seed (default 1)"),
    FS__OPT_FLAG("--no-train", 0, AT(no_train), "objective and cost only, no iteration simulation"),
    FS__OPT_STR("--export", 0, AT(export), "FILE",
                "write the optimised fabric as a \"file\" topology JSON"),
    FS__OPT_STR("--format", 0, AT(format), "text|json", "text (default; or table) or json"),
    FS__OPT_END};

static const fs__cmd topo_cmd = {
    "ocs topo", "JOB.json --degree D [options]",
    "Chooses the circuits of a direct-connect optical fabric for the job (each server D "
    "optical ports of B Gb/s through a patch panel or OCS): TotientPerms rings for the "
    "data-parallel all-reduce, greedy matching for the rest, local search; scores every "
    "topology by the time to carry the iteration's server traffic matrix with optimal "
    "multipath routing, and simulates one training iteration on each fabric, side by side "
    "with cost and power.",
    NULL, topo_opts, "JOB.json", "job file", 1, 1, AT(file), AT(n_file)};
#undef AT

/* A row of the comparison, filled here and printed by the report. */
typedef fs_report_ocs_topo_row row;

/* One iteration of job on topology t (borrowed), with the placement and
 * NIC speed t needs. */
static int train_on(const fs_job *job, fs_topo *t, fs_placement place, double nic_gbps,
                    fs__cli_progress *pr, double *iter_s, fs_err *err) {
  fs_job j = *job;
  j.topo = t;
  j.placement = place;
  j.hw.nic_gbps = nic_gbps / (double)j.hw.nics_per_gpu;
  int rc = fs_job_validate(&j, err);
  if (rc) return rc;
  fs_sim_opts so = {0};
  so.progress = fs__cli_progress_hook;
  so.progress_ctx = pr;
  fs_train_opts to = {.sim = &so};
  fs_train *tr = NULL;
  fs_train_result res;
  if ((rc = fs_train_new(&j, &to, &tr, err)) == 0) rc = fs_train_run(tr, &res, err);
  fs_train_free(tr);
  if (rc == 0) *iter_s = res.iter_s;
  return rc;
}

static void set_note(row *r, const fs_err *e) {
  snprintf(r->note, sizeof(r->note), "%s", e->msg[0] ? e->msg : fs_strerror(e->code));
}

static int direct_row(row *r, const char *name, const fs_topoopt_graph *g,
                      const fs_topoopt_traffic *tr, const fs_job *job, double gbps,
                      fs_topoopt_ocs_part ocs, const fs_cost_table *ct, int train,
                      fs__cli_progress *pr, fs_topo **keep, fs_err *err) {
  memset(r, 0, sizeof(*r));
  snprintf(r->name, sizeof(r->name), "%s", name);
  fs_topoopt_eval ev;
  int rc = fs_topoopt_evaluate(tr, g, gbps, &ev, err);
  if (rc) return rc;
  r->matrix_s = ev.time_s;
  fs_topo_cost c;
  fs_topoopt_cost(g, gbps, ct, ocs, &c, NULL, NULL);
  r->usd = c.usd;
  r->watts = c.watts;
  snprintf(r->desc, sizeof(r->desc), "%d servers, degree %d x %g Gb/s, %d circuits", g->n,
           g->degree, gbps, fs_topoopt_graph_circuits(g));
  r->iter_s = NAN;
  fs_topo *t = NULL;
  if ((rc = fs_topoopt_build_topo(g, job, gbps, 1000, &t, err))) return rc;
  if (train) {
    fs_err e = {0, ""};
    double nic = (double)job->hw.nics_per_gpu * job->hw.nic_gbps;
    if (train_on(job, t, FS_PLACE_PACKED, nic, pr, &r->iter_s, &e) == 0)
      r->trained = 1;
    else
      set_note(r, &e);
  }
  if (keep)
    *keep = t;
  else
    fs_topo_free(t);
  return 0;
}

/* Electrical candidates: the most per-GPU bandwidth whose cost stays within
 * budget (the cheapest, flagged, if none does). */
static int electrical_row(row *r, const char *fam, const fs_job *job, int32_t servers,
                          double budget, int train, fs__cli_progress *pr, fs_err *err) {
  memset(r, 0, sizeof(*r));
  snprintf(r->name, sizeof(r->name), "%s", fam);
  r->matrix_s = NAN;
  r->iter_s = NAN;
  int64_t G = job->hw.gpus_per_node, gpus = (int64_t)servers * G;
  double nic = (double)job->hw.nics_per_gpu * job->hw.nic_gbps;
  fs_server_params sv = fs_server_defaults((int32_t)G);
  if (G > 1) sv.nvlink_gbps = job->hw.nvlink_gbps;
  fs_topo *best = NULL;
  double best_bw = -1, best_usd = 0, best_host = 0;
  char best_desc[160] = "";
  int over = 0;
  for (int si = 0; si < 6; si++) {
    double host = nic / (double)(1 << si);
    int32_t spl = 1, hpl = (int32_t)G, max_spines = 1;
    if (strcmp(fam, "railopt") == 0) {
      /* One scalable unit up to 32 servers (SuperPOD), else units of 32
       * when that divides; spines from non-blocking down to 1. */
      spl = servers <= 32 || servers % 32 ? servers : 32;
      max_spines = spl;
    }
    if (strcmp(fam, "leafspine") == 0) {
      /* Servers per leaf: the largest divisor of the servers with at most
       * 32 GPUs on a leaf (a 64-port leaf at 1:1). */
      for (int32_t k = 1; k <= servers; k++)
        if (servers % k == 0 && k * G <= 32) spl = k;
      hpl = (int32_t)(spl * G);
      max_spines = hpl;
    }
    for (int32_t sp = max_spines; sp >= 1; sp--) {
      fs_topo *t = NULL;
      fs_err e = {0, ""};
      int rc;
      char desc[160];
      double bw;
      if (strcmp(fam, "railopt") == 0) {
        fs_railopt_params rp = {servers, spl, sp, 1, 0, host, host, 1000};
        rc = fs_topo_railopt(&rp, &sv, &t, &e);
        snprintf(desc, sizeof(desc), "%d rails x %d servers per unit, %d spines, %g Gb/s (%.3g:1)",
                 (int)G, spl, sp, host, (double)spl / sp);
        bw = fmin(host, sp * host / spl);
      } else if (strcmp(fam, "railonly") == 0) {
        fs_railonly_params rp = {servers, 0, host, 1000};
        rc = fs_topo_railonly(&rp, &sv, &t, &e);
        snprintf(desc, sizeof(desc), "%d rails, no spines, %g Gb/s", (int)G, host);
        bw = host;
      } else if (strcmp(fam, "fattree") == 0) {
        int32_t k = 2;
        while ((int64_t)k * k * k / 4 < gpus) k += 2;
        rc = fs_topo_fattree_servers(k, host, 1000, &sv, &t, &e);
        snprintf(desc, sizeof(desc), "k=%d, %g Gb/s per GPU", k, host);
        bw = host;
      } else {
        fs_leafspine_params lp = {servers / spl, sp, hpl, host, host, 1, 1000};
        rc = fs_topo_leafspine_servers(&lp, &sv, &t, &e);
        snprintf(desc, sizeof(desc), "%d leaves x %d GPUs, %d spines, %g Gb/s (%.3g:1)",
                 servers / spl, hpl, sp, host, (double)hpl / sp);
        bw = fmin(host, sp * host / hpl);
      }
      if (rc) {
        *err = e;
        fs_topo_free(best);
        return rc;
      }
      fs_topo_cost c;
      fs_topo_cost_compute(t, &c);
      int fits = c.usd <= budget;
      int take = 0;
      if (!best) take = 1;
      else if (fits && (over || bw > best_bw || (bw == best_bw && c.usd < best_usd))) take = 1;
      else if (!fits && over && c.usd < best_usd) take = 1;
      if (take) {
        fs_topo_free(best);
        best = t;
        best_bw = bw;
        best_usd = c.usd;
        best_host = host;
        over = !fits;
        r->usd = c.usd;
        r->watts = c.watts;
        snprintf(best_desc, sizeof(best_desc), "%s", desc);
      } else {
        fs_topo_free(t);
      }
    }
  }
  snprintf(r->desc, sizeof(r->desc), "%s%s", best_desc, over ? " [over budget]" : "");
  if (train) {
    fs_err e = {0, ""};
    int rail = strcmp(fam, "railopt") == 0 || strcmp(fam, "railonly") == 0;
    if (train_on(job, best, rail ? FS_PLACE_RAIL_ALIGNED : FS_PLACE_PACKED, best_host, pr,
                 &r->iter_s, &e) == 0)
      r->trained = 1;
    else
      set_note(r, &e);
  }
  fs_topo_free(best);
  return 0;
}

static int job_row(row *r, const fs_job *job, int train, fs__cli_progress *pr) {
  memset(r, 0, sizeof(*r));
  snprintf(r->name, sizeof(r->name), "job");
  snprintf(r->desc, sizeof(r->desc), "%s (the job file's, %s)", job->topo->family,
           fs_placement_name(job->placement));
  r->matrix_s = NAN;
  r->iter_s = NAN;
  fs_topo_cost c;
  fs_topo_cost_compute(job->topo, &c);
  r->usd = c.usd;
  r->watts = c.watts;
  if (train) {
    fs_err e = {0, ""};
    double nic = (double)job->hw.nics_per_gpu * job->hw.nic_gbps;
    if (train_on(job, job->topo, job->placement, nic, pr, &r->iter_s, &e) == 0)
      r->trained = 1;
    else
      set_note(r, &e);
  }
  return 0;
}

int fs__cli_ocs_topo(int argc, char **argv) {
  cmdline cl = {.format = "text", .compare = "fattree,leafspine,job", .sw = "patch",
               .degree = -1, .ar_rings = -1, .ls = -1, .seed = 1, .tl = 60};
  int go = fs__opts_parse(&topo_cmd, &cl, argc, argv);
  if (go >= 0) return go;
  const char *cmd = "ocs topo", *file = cl.file, *format = cl.format, *export = cl.export;
  const char *compare = cl.compare, *sw = cl.sw;
  long degree = cl.degree, ar_rings = cl.ar_rings, ls = cl.ls, seed = cl.seed;
  double gbps = cl.gbps, tl = cl.tl;
  int exact = cl.exact, train = !cl.no_train;
  int fmt, go_fmt = fs__cli_format(cmd, format, "text json", &fmt);
  if (go_fmt >= 0) return go_fmt;
  if (degree < 0) return fs__cli_usage(cmd, "missing --degree");
  if (ar_rings > degree)
    return fs__cli_usage(cmd, "--ar-rings must be at most --degree (%ld), got '%ld'", degree,
                         ar_rings);
  int want_ft = 0, want_ls = 0, want_ro = 0, want_rn = 0, want_job = 0;
  {
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", compare);
    for (char *tok = buf, *next; tok; tok = next) {
      next = strchr(tok, ',');
      if (next) *next++ = '\0';
      if (!*tok)
        return fs__cli_usage(cmd, "--compare: an empty name in the list, got '%s'", compare);
      if (strcmp(tok, "fattree") == 0) want_ft = 1;
      else if (strcmp(tok, "leafspine") == 0) want_ls = 1;
      else if (strcmp(tok, "railopt") == 0) want_ro = 1;
      else if (strcmp(tok, "railonly") == 0) want_rn = 1;
      else if (strcmp(tok, "job") == 0) want_job = 1;
      else if (strcmp(tok, "none") != 0)
        return fs__cli_usage(cmd, "--compare: unknown fabric \"%s\" (fattree, leafspine, "
                             "railopt, railonly, job, none)", tok);
    }
  }
  fs_err err = {0, ""};
  fs_job *job = NULL;
  fs_topoopt_traffic *tr = NULL;
  fs_topoopt_graph *g = NULL, *rg = NULL, *xg = NULL;
  fs_topo *opt_topo = NULL;
  int rc, status = 0;
  row rows[8];
  int nr = 0;
  /* the export is opened before the work (seconds of it), so a bad path costs nothing */
  fs_output *export_out = NULL;
  if (export && fs__cli_output_open(export, &export_out)) return 2;
  fs__cli_progress pr;
  fs__cli_progress_start(&pr, cmd);
  if ((rc = fs_job_load(file, &job, &err))) goto fail;
  if ((rc = fs_topoopt_traffic_from_job(job, &tr, &err))) goto fail;
  if (gbps == 0) gbps = (double)job->hw.nics_per_gpu * job->hw.nic_gbps;
  fs_topoopt_opts o;
  fs_topoopt_opts_init(&o, (int32_t)degree, gbps);
  o.seed = (uint64_t)seed;
  o.ar_rings = (int32_t)ar_rings;
  o.ls_evals = (int32_t)ls;
  o.time_limit_s = tl;
  fs_topoopt_ocs_part ocs =
      fs_topoopt_ocs_defaults(strcmp(sw, "ocs") == 0 ? FS_TOPOOPT_OCS : FS_TOPOOPT_PATCH_PANEL);
  fs_cost_table ct;
  fs_cost_defaults(&ct);
  if ((rc = fs_topoopt_optimize(tr, &o, &g, NULL, &err))) goto fail;
  if ((rc = direct_row(&rows[nr++], "topoopt", g, tr, job, gbps, ocs, &ct, train, &pr,
                       &opt_topo, &err)))
    goto fail;
  if ((rc = fs_topoopt_random(tr->n, (int32_t)degree, (uint64_t)seed, &rg, &err)) ||
      (rc = direct_row(&rows[nr++], "random", rg, tr, job, gbps, ocs, &ct, train, &pr, NULL,
                       &err)))
    goto fail;
  if (exact) {
    fs_topoopt_eval xe;
    fs_err e = {0, ""};
    int xrc = fs_topoopt_exact(tr, &o, &xg, &xe, &e);
    if (xrc == 0) {
      if ((rc = direct_row(&rows[nr++], "exact", xg, tr, job, gbps, ocs, &ct, train, &pr, NULL,
                           &err)))
        goto fail;
    } else if (xrc == FS_ERANGE) {
      row *r = &rows[nr++];
      memset(r, 0, sizeof(*r));
      snprintf(r->name, sizeof(r->name), "exact");
      snprintf(r->desc, sizeof(r->desc), "not run");
      r->iter_s = r->matrix_s = NAN;
      set_note(r, &e);
    } else {
      err = e;
      rc = xrc;
      goto fail;
    }
  }
  double budget = rows[0].usd;
  if (want_ft && (rc = electrical_row(&rows[nr++], "fattree", job, tr->n, budget, train, &pr,
                                      &err)))
    goto fail;
  if (want_ls && (rc = electrical_row(&rows[nr++], "leafspine", job, tr->n, budget, train, &pr,
                                      &err)))
    goto fail;
  if (want_ro && (rc = electrical_row(&rows[nr++], "railopt", job, tr->n, budget, train, &pr,
                                      &err)))
    goto fail;
  if (want_rn && (rc = electrical_row(&rows[nr++], "railonly", job, tr->n, budget, train, &pr,
                                      &err)))
    goto fail;
  if (want_job) job_row(&rows[nr++], job, train, &pr);
  fs__cli_progress_end(&pr);
  if (export_out) {
    if ((rc = fs_topo_export(opt_topo, "json", fs_output_file(export_out), &err))) goto fail;
    status = fs__cli_output_commit(export_out);
    export_out = NULL;
    if (status) goto out;
  }
  {
    fs_report_ocs_topo rep = {file, tr, g, gbps, sw, rows, nr};
    rc = fmt == FS__FMT_JSON ? fs_report_ocs_topo_json(stdout, &rep)
                                     : fs_report_ocs_topo_table(stdout, &rep);
    status = fs__cli_stdout_done(cmd, rc);
  }
  goto out;
fail:
  fs__cli_progress_end(&pr);
  status = fs__cli_fail(&err);
out:
  fs_output_abort(export_out);
  fs_topo_free(opt_topo);
  fs_topoopt_graph_free(g);
  fs_topoopt_graph_free(rg);
  fs_topoopt_graph_free(xg);
  fs_topoopt_traffic_free(tr);
  fs_job_free(job);
  return status;
}
