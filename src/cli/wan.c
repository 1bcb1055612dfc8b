/* fabricsim wan: lightpath provisioning on an optical WAN (provision) and
 * a job's cross-site all-reduce over the provisioned lightpaths, before
 * and after a fibre cut (train). docs/model-wan.md has the model, the file
 * format and examples. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "fabricsim/html.h"
#include "fabricsim/report.h"
#include "fabricsim/wan.h"
#include "fabricsim/wan_sdm.h"

static int parse_algo(const char *v, void *field) {
  return fs_wan_algo_parse(v, (fs_wan_algo *)field) ? -1 : 0;
}

/* What the command line gives; the initialiser holds the defaults. */
typedef struct opts {
  const char *file, *cut, *format, *report;
  fs_wan_algo algo;
  long k, random, seed, sites;
  double gbps, bytes;
  int json, n_file, aggregator, sdm;
  const char *policy;
} opts;

_Static_assert(FS_WAN_MAX_K == 64, "the message of --k says 64");
#define AT(f) offsetof(opts, f)
/* The options of both subcommands. */
#define WAN_COMMON_OPTS                                                                       \
  FS__OPT_FN("--algo", 0, AT(algo), "A", parse_algo, "--algo must be first-fit or most-used", \
             "first-fit (default) or most-used"),                                             \
      FS__OPT_LONG("--k", 0, AT(k), "K", 1, FS_WAN_MAX_K, "--k must be an integer in [1, 64]", \
                   "candidate paths per demand (default 3)"),                                 \
      FS__OPT_STR("--format", 0, AT(format), "text|json", "text (default; or table) or json")
/* --report on provision and train */
#define WAN_REPORT_OPT                                                                     \
  FS__OPT_STR("--report", 0, AT(report), "FILE.html",                                      \
              "also write a self-contained HTML report: the lightpaths, each fibre's "     \
              "spectrum and use (and the job's all-reduce per phase)")

static const fs__opt provision_opts[] = {
    WAN_COMMON_OPTS,
    WAN_REPORT_OPT,
    FS__OPT_STR("--cut", 0, AT(cut), "A-B",
                "the fibre between sites A and B fails before provisioning"),
    FS__OPT_LONG("--random", 0, AT(random), "N", 1, 1000000,
                 "--random must be an integer in [1, 1000000]",
                 "N random demands instead of the file's"),
    FS__OPT_DOUBLE("--gbps", 0, AT(gbps), "G", 1e-3, 1e7,
                   "--gbps must be a number in [0.001, 1e7]",
                   "rate of each random demand (default 100)"),
    FS__OPT_LONG("--seed", 0, AT(seed), "S", 0, 2147483647L,
                 "--seed must be a non-negative integer",
                 "seed of the random demands (default 1)"),
    FS__OPT_END};

static const fs__opt train_opts[] = {
    WAN_COMMON_OPTS,
    WAN_REPORT_OPT,
    FS__OPT_STR("--cut", 0, AT(cut), "A-B",
                "the fibre between sites A and B fails: restoration after it"),
    FS__OPT_DOUBLE("--bytes", 0, AT(bytes), "B", 1, 1e15,
                   "--bytes must be a number in [1, 1e15]",
                   "all-reduce size (default the job's bytes)"),
    FS__OPT_END};

static const fs__opt place_opts[] = {
    WAN_COMMON_OPTS,
    FS__OPT_LONG("--sites", 0, AT(sites), "K", 2, FS_WAN_PLACE_MAX,
                 "--sites must be an integer in [2, 64]",
                 "sites the job's ring takes, chosen among the sites with gpus (default: all "
                 "of them, then only their order is chosen)"),
    FS__OPT_STR("--cut", 0, AT(cut), "A-B", "the fibre between sites A and B is out of service"),
    FS__OPT_DOUBLE("--bytes", 0, AT(bytes), "B", 1, 1e15,
                   "--bytes must be a number in [1, 1e15]",
                   "all-reduce size (default the job's bytes)"),
    FS__OPT_FLAG("--sdm", 0, AT(sdm),
                 "on the file's multi-core fibres and bands (\"sdm\", \"bands\"): every "
                 "placement's ring pairs assigned by RSCA with crosstalk checked, timed by the "
                 "closed form (not simulated); docs/model-wan-sdm.md"),
    FS__OPT_STR("--policy", 0, AT(policy), "P",
                "with --sdm: first-fit, xt-aware or xt-avoid (default the file's "
                "traffic.policy)"),
    FS__OPT_FLAG("--aggregator", 0, AT(aggregator),
                 "also a parameter server instead of the ring (Li et al. 2021's edge EON): the "
                 "job's sites push to and pull from one site, every site tried"),
    FS__OPT_END};

static const fs__cmd place_cmd = {
    "wan place", "WAN.json [options]",
    "Chooses the job's sites (--sites K of those with gpus) and the order of its ring for the "
    "cross-site all-reduce: every placement's ring pairs provisioned after the file's "
    "demands and timed by the closed form; every order when the candidates are few "
    "(exhaustive), else a local search. Prints the chosen ring against the file's order, "
    "each also simulated. docs/model-wan.md, \"Choosing the sites\".",
    NULL, place_opts, "WAN.json", "WAN file", 1, 1, AT(file), AT(n_file)};

static const fs__cmd provision_cmd = {
    "wan provision", "WAN.json [options]",
    "Routes and assigns spectrum to the file's demands (and the job's ring demands) over the "
    "k shortest paths by km; prints every lightpath (path, km, modulation, wavelength or "
    "slots, rate) and the blocking.",
    NULL, provision_opts, "WAN.json", "WAN file", 1, 1, AT(file), AT(n_file)};

static const fs__cmd train_cmd = {
    "wan train", "WAN.json [options]",
    "Provisions the file's demands, then the job's, and simulates the job's hierarchical "
    "all-reduce across sites (per phase, beside its alpha-beta closed form); with --cut, "
    "restores the lightpaths crossing the cut fibre and reports the slowdown.",
    NULL, train_opts, "WAN.json", "WAN file", 1, 1, AT(file), AT(n_file)};
#undef AT

/* Parses the options of a subcommand (c's table) into o: -1 to go on, or
 * the exit status. */
static int parse_opts(const fs__cmd *c, int argc, char **argv, opts *o) {
  memset(o, 0, sizeof(*o));
  o->format = "text";
  o->algo = FS_WAN_FIRST_FIT;
  o->k = 3;
  o->seed = -1; /* -1, 0: not given (1, 100) */
  o->gbps = 0;
  int go = fs__opts_parse(c, o, argc, argv);
  if (go >= 0) return go;
  if (!o->random && (o->seed >= 0 || o->gbps > 0))
    return fs__cli_usage(c->name, "%s is for --random demands", o->seed >= 0 ? "--seed" : "--gbps");
  if (o->seed < 0) o->seed = 1;
  if (!(o->gbps > 0)) o->gbps = 100;
  int fmt, go_fmt = fs__cli_format(c->name, o->format, "text json", &fmt);
  if (go_fmt >= 0) return go_fmt;
  o->json = fmt == FS__FMT_JSON;
  return -1; /* go on */
}

/* The demands to provision: the file's (or random ones), then the job's. */
static fs_wan_demand *collect_demands(const fs_wan *w, const opts *o, int32_t *n) {
  if (!o->random) return fs_wan_demands_with_job(w, n);
  int32_t nj = fs_wan_job_demands(w, NULL, 0), nf = (int32_t)o->random;
  fs_wan_demand *d = calloc((size_t)(nf + nj) + 1, sizeof(*d));
  if (!d) return NULL;
  fs_wan_demands_random(w, nf, o->gbps, (uint64_t)o->seed, d);
  fs_wan_job_demands(w, d + nf, nj);
  *n = nf + nj;
  return d;
}

/* The HTML page of a plan (and the job's all-reduce on it). */
typedef struct wan_page {
  const char *title;
  const fs_wan_plan *p, *after;
  const fs_wan_train_result *r0, *r1;
} wan_page;

static int wan_page_fn(FILE *f, void *ctx) {
  const wan_page *c = ctx;
  return fs_html_wan_report(f, c->title, c->p, c->r0, c->after, c->r1);
}

/* Writes the page into *out if there is one (*out then NULL): 0 or the
 * output's exit status. */
static int write_page(fs_output **out, const wan_page *pg) {
  if (!*out) return 0;
  fs_output *o = *out;
  *out = NULL;
  return fs__cli_output_write(o, wan_page_fn, (void *)pg);
}

static int provision(const opts *o) {
  fs_err err = {0, ""};
  fs_wan *w = NULL;
  fs_wan_plan *p = NULL;
  fs_wan_demand *d = NULL;
  int status = 0;
  int32_t n = 0, cut = -1;
  fs_output *page = NULL;
  if (fs_wan_from_file(o->file, &w, &err)) return fs__cli_fail(&err);
  if (o->cut && fs_wan_fibre_parse(w, o->cut, &cut, &err)) {
    status = fs__cli_usage("wan provision", "--cut: %s", err.msg);
    goto out;
  }
  if (o->report && fs__cli_output_open(o->report, &page)) {
    status = 2;
    goto out;
  }
  if (!(d = collect_demands(w, o, &n))) {
    status = fs__cli_fail(&(fs_err){FS_ENOMEM, "out of memory"});
    goto out;
  }
  fs_wan_prov_opts po = {o->algo, (int32_t)o->k, cut};
  if (fs_wan_provision(w, d, n, &po, &p, &err) || fs_wan_plan_check(p, &err)) {
    status = fs__cli_fail(&err);
    goto out;
  }
  status = fs__cli_stdout_done("wan provision", o->json ? fs_report_wan_plan_json(stdout, p)
                                                        : fs_report_wan_plan_table(stdout, p));
  if (!status) {
    char title[400];
    snprintf(title, sizeof(title), "fabricsim wan provision: %s", o->file);
    wan_page pg = {title, p, NULL, NULL, NULL};
    status = write_page(&page, &pg);
  }
out:
  fs_output_abort(page);
  fs_wan_plan_free(p);
  free(d);
  fs_wan_free(w);
  return status;
}

static int train(const opts *o) {
  fs_err err = {0, ""};
  fs_wan *w = NULL;
  fs_wan_plan *p = NULL, *q = NULL;
  fs_wan_demand *d = NULL;
  int status = 0;
  int32_t n = 0, cut = -1;
  fs_wan_train_result r0, r1;
  fs_output *page = NULL;
  if (fs_wan_from_file(o->file, &w, &err)) return fs__cli_fail(&err);
  if (!w->job.present) {
    err.code = FS_EINVAL;
    snprintf(err.msg, sizeof(err.msg), "%s: $.job: missing (train needs a job)", o->file);
    status = fs__cli_fail(&err);
    goto out;
  }
  if (o->cut && fs_wan_fibre_parse(w, o->cut, &cut, &err)) {
    status = fs__cli_usage("wan train", "--cut: %s", err.msg);
    goto out;
  }
  if (o->report && fs__cli_output_open(o->report, &page)) {
    status = 2;
    goto out;
  }
  if (!(d = collect_demands(w, o, &n))) {
    status = fs__cli_fail(&(fs_err){FS_ENOMEM, "out of memory"});
    goto out;
  }
  fs_wan_prov_opts po = {o->algo, (int32_t)o->k, -1};
  if (fs_wan_provision(w, d, n, &po, &p, &err) || fs_wan_plan_check(p, &err) ||
      fs_wan_train(p, o->bytes, &r0, &err)) {
    status = fs__cli_fail(&err);
    goto out;
  }
  if (cut >= 0 && (fs_wan_restore(p, cut, &q, &err) || fs_wan_plan_check(q, &err) ||
                   fs_wan_train(q, o->bytes, &r1, &err))) {
    status = fs__cli_fail(&err);
    goto out;
  }
  fs_report_wan_train rep = {o->file, p, &r0, q, &r1, cut};
  status = fs__cli_stdout_done("wan train", o->json ? fs_report_wan_train_json(stdout, &rep)
                                                    : fs_report_wan_train_table(stdout, &rep));
  if (!status) {
    char title[400];
    snprintf(title, sizeof(title), "fabricsim wan train: %s", o->file);
    wan_page pg = {title, p, q, &r0, q ? &r1 : NULL};
    status = write_page(&page, &pg);
  }
out:
  fs_output_abort(page);
  fs_wan_plan_free(p);
  fs_wan_plan_free(q);
  free(d);
  fs_wan_free(w);
  return status;
}

/* The simulated all-reduce of the job on ring[0..k) (NULL result: a pair
 * of it is blocked, nothing to simulate). 0 or -1 with err set. */
static int simulate_ring(const fs_wan *w, const int32_t *ring, int32_t k, double model_s,
                         const fs_wan_prov_opts *po, double bytes, fs_wan_train_result *r,
                         const fs_wan_train_result **out, fs_err *err) {
  *out = NULL;
  if (!(model_s < 1e300)) return 0;
  fs_wan w2 = *w;
  w2.job.n_ring = k;
  w2.job.ring = ring;
  opts none = {0};
  int32_t n = 0;
  fs_wan_demand *d = collect_demands(&w2, &none, &n);
  if (!d) return fs_err_set(err, FS_ENOMEM, "out of memory"), -1;
  fs_wan_plan *p = NULL;
  int rc = fs_wan_provision(&w2, d, n, po, &p, err) || fs_wan_train(p, bytes, r, err) ? -1 : 0;
  if (!rc) *out = r;
  fs_wan_plan_free(p);
  free(d);
  return rc;
}

static int place(const opts *o) {
  fs_err err = {0, ""};
  fs_wan *w = NULL;
  int status = 0;
  int32_t cut = -1;
  if (fs_wan_from_file(o->file, &w, &err)) return fs__cli_fail(&err);
  if (!w->job.present) {
    err.code = FS_EINVAL;
    snprintf(err.msg, sizeof(err.msg), "%s: $.job: missing (place needs a job)", o->file);
    status = fs__cli_fail(&err);
    goto out;
  }
  if (o->cut && fs_wan_fibre_parse(w, o->cut, &cut, &err)) {
    status = fs__cli_usage("wan place", "--cut: %s", err.msg);
    goto out;
  }
  int32_t k = (int32_t)o->sites;
  if (!k) {
    int32_t ring[FS_WAN_MAX_SITES];
    k = fs_wan_job_ring(w, ring);
  }
  fs_wan_prov_opts po = {o->algo, (int32_t)o->k, cut};
  fs_wan_place_result r;
  fs_wan_train_result tc, tb;
  const fs_wan_train_result *pc = NULL, *pb = NULL;
  if (o->policy && !o->sdm) {
    status = fs__cli_usage("wan place", "--policy is for --sdm");
    goto out;
  }
  if (o->sdm && (o->aggregator || cut >= 0)) {
    status = fs__cli_usage("wan place", "--sdm takes neither %s",
                           o->aggregator ? "--aggregator" : "--cut");
    goto out;
  }
  if (o->sdm) {
    fs_wan_sdm sd;
    fs_wan_policy pol;
    if (fs_wan_sdm_get(w, 0, &sd, &err)) {
      status = fs__cli_fail(&err);
      goto out;
    }
    pol = (fs_wan_policy)sd.traffic.policy;
    if (o->policy && fs_wan_policy_parse(o->policy, &pol)) {
      status = fs__cli_usage("wan place",
                             "--policy must be first-fit, xt-aware or xt-avoid, got '%s'",
                             o->policy);
      goto out;
    }
    if (fs_wan_place_ring_sdm(w, &sd, pol, k, &po, &r, &err)) {
      status =
          err.code == FS_EINVAL ? fs__cli_usage("wan place", "%s", err.msg) : fs__cli_fail(&err);
      goto out;
    }
  } else if (fs_wan_place_ring(w, k, &po, &r, &err)) {
    status = err.code == FS_EINVAL ? fs__cli_usage("wan place", "%s", err.msg) : fs__cli_fail(&err);
    goto out;
  }
  if (!o->sdm &&
      (simulate_ring(w, r.ring, r.k, r.model_s, &po, o->bytes, &tc, &pc, &err) ||
       simulate_ring(w, r.baseline, r.k, r.baseline_s, &po, o->bytes, &tb, &pb, &err))) {
    status = fs__cli_fail(&err);
    goto out;
  }
  fs_wan_agg_result *agg = NULL;
  if (o->aggregator) {
    if (!(agg = malloc(sizeof(*agg)))) {
      status = fs__cli_fail(&(fs_err){FS_ENOMEM, "out of memory"});
      goto out;
    }
    if (fs_wan_place_aggregator(w, &po, o->bytes, agg, &err)) {
      free(agg);
      status = fs__cli_fail(&err);
      goto out;
    }
  }
  fs_report_wan_place rep = {o->file, w, &r, pc, pb, agg, o->sdm};
  status = fs__cli_stdout_done("wan place", o->json ? fs_report_wan_place_json(stdout, &rep)
                                                    : fs_report_wan_place_table(stdout, &rep));
  free(agg);
out:
  fs_wan_free(w);
  return status;
}

static int run_place(int argc, char **argv) {
  opts o;
  int rc = parse_opts(&place_cmd, argc, argv, &o);
  return rc >= 0 ? rc : place(&o);
}

static int run_provision(int argc, char **argv) {
  opts o;
  int rc = parse_opts(&provision_cmd, argc, argv, &o);
  return rc >= 0 ? rc : provision(&o);
}

static int run_train(int argc, char **argv) {
  opts o;
  int rc = parse_opts(&train_cmd, argc, argv, &o);
  return rc >= 0 ? rc : train(&o);
}

static const fs__sub wan_subs[] = {
    {"provision", "WAN.json", "lightpath provisioning: routes, spectrum, blocking",
     run_provision},
    {"train", "WAN.json", "a job's cross-site all-reduce over the lightpaths, with fibre cuts",
     run_train},
    {"place", "WAN.json", "choose the job's sites and the order of its ring", run_place},
    {"protect", "WAN.json",
     "protection (none, 1+1, SBPP), SRLGs, availability, the job's completion time under "
     "failures",
     fs__cli_wan_protect},
    {"dynamic", "WAN.json",
     "requests arriving and leaving: blocking against load, multi-core fibres, bands",
     fs__cli_wan_dynamic},
    {NULL, NULL, NULL, NULL}};

static const fs__group wan_group = {
    "wan",
    "Optical networks between data centres (docs/model-wan.md): lightpath provisioning "
    "(RWA/RSA, first-fit and most-used, k-shortest paths, distance-adaptive modulation) and "
    "cross-site hierarchical all-reduce, with fibre cuts.",
    wan_subs};

int fs__cli_wan(int argc, char **argv) { return fs__group_run(&wan_group, argc, argv); }
