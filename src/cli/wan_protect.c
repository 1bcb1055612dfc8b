/* fabricsim wan protect: survivability and risk on an optical WAN
 * (docs/model-wan-risk.md): provisions the file's demands and the job's
 * ring with no protection, 1+1 or shared backup path protection, routed
 * by km or by risk (or under an availability target), and prints per
 * scheme the blocking, the spectrum used against unprotected, each
 * demand's availability, the job's availability, iteration time and
 * expected completion time under failures, and, with --cut or --srlg,
 * what survives that failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "fabricsim/report.h"
#include "fabricsim/wan.h"
#include "fabricsim/wan_risk.h"

typedef struct opts {
  const char *file, *scheme, *routing, *cut, *srlg, *format;
  long k;
  double target, iterations, checkpoint;
  int n_file;
} opts;

#define AT(f) offsetof(opts, f)
static const fs__opt protect_opts[] = {
    FS__OPT_STR("--scheme", 0, AT(scheme), "S",
                "none, 1+1, sbpp or all (default: the file's \"protection\", else all)"),
    FS__OPT_STR("--routing", 0, AT(routing), "R",
                "km (default: the k shortest) or risk (the k most available of the 64 shortest)"),
    FS__OPT_DOUBLE("--availability-target", 0, AT(target), "A", 1e-9, 0.999999999999,
                   "--availability-target must be a number in (0, 1)",
                   "only working paths (pairs, protected) whose availability >= A"),
    FS__OPT_LONG("--k", 0, AT(k), "K", 1, FS_WAN_MAX_K, "--k must be an integer in [1, 64]",
                 "working candidates per demand (default 3)"),
    FS__OPT_STR("--cut", 0, AT(cut), "A-B", "the fibre between sites A and B fails"),
    FS__OPT_STR("--srlg", 0, AT(srlg), "NAME", "every fibre of the file's SRLG NAME fails"),
    FS__OPT_DOUBLE("--iterations", 0, AT(iterations), "N", 1, 1e12,
                   "--iterations must be a number in [1, 1e12]",
                   "the job's iterations for its completion time (default 100000)"),
    FS__OPT_DOUBLE("--checkpoint-minutes", 0, AT(checkpoint), "M", 1e-6, 1e9,
                   "--checkpoint-minutes must be a number in [1e-06, 1e9]",
                   "checkpoint interval (default the file's checkpoint_minutes, else 30)"),
    FS__OPT_STR("--format", 0, AT(format), "text|json", "text (default; or table) or json"),
    FS__OPT_END};

static const fs__cmd protect_cmd = {
    "wan protect", "WAN.json [options]",
    "Provisions the file's demands and the job's ring with no protection, 1+1 dedicated or "
    "shared backup path protection (SRLG-disjoint backups) and prints per scheme the "
    "blocking, the spectrum used and its ratio to unprotected, each demand's availability "
    "from the fibres' cut rates and SRLGs, and the job's availability, iteration time and "
    "expected completion time under failures; --cut or --srlg fails fibres and reports what "
    "survives.",
    NULL, protect_opts, "WAN.json", "WAN file", 1, 1, AT(file), AT(n_file)};
#undef AT

/* The fibres a --cut or --srlg names: their count, or -1 after a usage
 * error (status in *status). */
static int32_t failed_fibres(const fs_wan *w, const opts *o, int32_t *failed, char *label,
                             size_t n, int *status) {
  fs_err err = {0, ""};
  if (o->cut) {
    if (fs_wan_fibre_parse(w, o->cut, &failed[0], &err)) {
      *status = fs__cli_usage("wan protect", "--cut: %s", err.msg);
      return -1;
    }
    snprintf(label, n, "fibre %s-%s", w->sites[w->fibres[failed[0]].a].name,
             w->sites[w->fibres[failed[0]].b].name);
    return 1;
  }
  if (o->srlg) {
    int32_t g = fs_wan_risk_of_srlg(w, o->srlg);
    if (g < 0) {
      *status = fs__cli_usage("wan protect", "--srlg: no SRLG '%s' in the file", o->srlg);
      return -1;
    }
    const fs_wan_srlg *s = &w->risk->srlgs[g];
    memcpy(failed, s->fibres, (size_t)s->n_fibres * sizeof(int32_t));
    snprintf(label, n, "SRLG %s", s->name);
    return s->n_fibres;
  }
  return 0;
}

static int run(const opts *o, int json) {
  fs_err err = {0, ""};
  fs_wan *w = NULL;
  fs_wan_risks *r = NULL;
  fs_wan_demand *d = NULL;
  int32_t *failed = NULL, n = 0, nf = 0, ns = 0;
  fs_wan_pplan *plans[4] = {NULL, NULL, NULL, NULL};
  fs_wan_failure_result fails[3];
  fs_wan_job_risk jobs[3];
  fs_report_wan_protect_scheme rows[3];
  fs_wan_prot schemes[3];
  char label[2 * FS_WAN_NAME + 16] = "";
  int status = 0;
  memset(fails, 0, sizeof(fails));
  if (fs_wan_from_file(o->file, &w, &err)) return fs__cli_fail(&err);
  if (o->scheme && strcmp(o->scheme, "all") != 0) {
    ns = 1;
    if (fs_wan_prot_parse(o->scheme, &schemes[0])) {
      status = fs__cli_usage("wan protect", "--scheme must be none, 1+1, sbpp or all, got '%s'",
                             o->scheme);
      goto out;
    }
  } else if (!o->scheme && w->risk && w->risk->has_protection) {
    ns = 1;
    schemes[0] = w->risk->protection;
  } else {
    ns = 3;
    schemes[0] = FS_WAN_PROT_NONE, schemes[1] = FS_WAN_PROT_1P1, schemes[2] = FS_WAN_PROT_SBPP;
  }
  if (!(failed = calloc((size_t)w->n_fibres + 1, sizeof(int32_t))) || !(d = fs_wan_demands_with_job(w, &n))) {
    status = fs__cli_fail(&(fs_err){FS_ENOMEM, "out of memory"});
    goto out;
  }
  if ((nf = failed_fibres(w, o, failed, label, sizeof(label), &status)) < 0) goto out;
  if (fs_wan_risks_build(w, &r, &err)) {
    status = fs__cli_fail(&err);
    goto out;
  }
  fs_wan_protect_opts po = {FS_WAN_PROT_NONE,
                            o->routing && strcmp(o->routing, "risk") == 0 ? FS_WAN_ROUTE_RISK
                                                                          : FS_WAN_ROUTE_KM,
                            o->target, (int32_t)o->k};
  /* unprotected by the same routing: the base of the spectrum ratio */
  if (fs_wan_protect(w, r, d, n, &po, &plans[3], &err) || fs_wan_pplan_check(plans[3], &err)) {
    status = fs__cli_fail(&err);
    goto out;
  }
  for (int32_t i = 0; i < ns; i++) {
    po.scheme = schemes[i];
    fs_report_wan_protect_scheme *row = &rows[i];
    memset(row, 0, sizeof(*row));
    row->fail_iter_s = NAN;
    if (fs_wan_protect(w, r, d, n, &po, &plans[i], &err) || fs_wan_pplan_check(plans[i], &err)) {
      status = fs__cli_fail(&err);
      goto out;
    }
    row->plan = plans[i];
    if (w->job.present) {
      if (fs_wan_job_risk_eval(plans[i], o->iterations, o->checkpoint, &jobs[i], &err)) {
        status = fs__cli_fail(&err);
        goto out;
      }
      row->job = &jobs[i];
    }
    if (nf > 0) {
      if (fs_wan_fail(plans[i], failed, nf, &fails[i], &err) ||
          fs_wan_plan_check(fails[i].after, &err)) {
        status = fs__cli_fail(&err);
        goto out;
      }
      row->fail = &fails[i];
      fs_wan_train_result tr;
      if (w->job.present && fails[i].job_connected) {
        if (fs_wan_train(fails[i].after, 0, &tr, &err)) {
          status = fs__cli_fail(&err);
          goto out;
        }
        row->fail_iter_s = tr.connected ? tr.total_s : NAN;
      }
    }
  }
  fs_report_wan_protect rep = {o->file, w, r, ns, rows, nf > 0 ? label : NULL,
                               plans[3]->cells_used};
  status = fs__cli_stdout_done("wan protect", json ? fs_report_wan_protect_json(stdout, &rep)
                                                   : fs_report_wan_protect_table(stdout, &rep));
out:
  for (int i = 0; i < 3; i++) fs_wan_plan_free(fails[i].after);
  for (int i = 0; i < 4; i++) fs_wan_pplan_free(plans[i]);
  fs_wan_risks_free(r);
  free(failed);
  free(d);
  fs_wan_free(w);
  return status;
}

int fs__cli_wan_protect(int argc, char **argv) {
  opts o;
  memset(&o, 0, sizeof(o));
  o.format = "text";
  o.k = 3;
  o.iterations = 100000;
  int go = fs__opts_parse(&protect_cmd, &o, argc, argv);
  if (go >= 0) return go;
  if (o.routing && strcmp(o.routing, "km") != 0 && strcmp(o.routing, "risk") != 0)
    return fs__cli_usage("wan protect", "--routing must be km or risk, got '%s'", o.routing);
  if (o.scheme && strcmp(o.scheme, "all") != 0) {
    fs_wan_prot p;
    if (fs_wan_prot_parse(o.scheme, &p))
      return fs__cli_usage("wan protect", "--scheme must be none, 1+1, sbpp or all, got '%s'",
                           o.scheme);
  }
  if (o.cut && o.srlg) return fs__cli_usage("wan protect", "--cut and --srlg: give one failure");
  int fmt, go_fmt = fs__cli_format("wan protect", o.format, "text json", &fmt);
  if (go_fmt >= 0) return go_fmt;
  return run(&o, fmt == FS__FMT_JSON);
}
