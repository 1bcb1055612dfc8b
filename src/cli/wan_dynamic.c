/* fabricsim wan dynamic: requests arriving and leaving on an optical WAN
 * with multi-core fibres and several bands (docs/model-wan-sdm.md), the
 * blocking per offered load over independent seeds. The file's "traffic"
 * gives the defaults; the flags override them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "fabricsim/report.h"
#include "fabricsim/wan_sdm.h"

typedef struct range {
  double a, b, step;
} range;

/* "A:B:STEP", 0 < A <= B, STEP > 0, at most 1000 points; each a plain
 * decimal (fs__cli_parse_double: no hex, no inf). */
static int parse_loads(const char *v, void *field) {
  range r;
  char part[3][64];
  const char *p = v;
  for (int i = 0; i < 3; i++) {
    size_t len = strcspn(p, ":");
    if (len >= sizeof(part[i]) || (i < 2) != (p[len] == ':')) return -1;
    memcpy(part[i], p, len);
    part[i][len] = '\0';
    p += len + (i < 2);
  }
  if (fs__cli_parse_double(part[0], 1e-6, 1e7, &r.a) ||
      fs__cli_parse_double(part[1], 1e-6, 1e7, &r.b) ||
      fs__cli_parse_double(part[2], 1e-9, 1e7, &r.step) || !(r.b >= r.a) ||
      (r.b - r.a) / r.step > 999)
    return -1;
  *(range *)field = r;
  return 0;
}

static int parse_policy(const char *v, void *field) {
  return fs_wan_policy_parse(v, (fs_wan_policy *)field) ? -1 : 0;
}

typedef struct opts {
  const char *file, *format;
  range loads;
  double load;
  long requests, seeds, seed, cores, k;
  fs_wan_policy policy; /* -1 until --policy: then the file's traffic.policy */
  int n_file;
  const char *report, *job;
} opts;

#define AT(f) offsetof(opts, f)
static const fs__opt dyn_opts[] = {
    FS__OPT_DOUBLE("--load", 0, AT(load), "E", 1e-6, 1e7, "--load must be a number of Erlang in [1e-06, 1e7]",
                   "offered load in Erlang (default the file's traffic.load_erlang)"),
    FS__OPT_FN("--loads", 0, AT(loads), "A:B:STEP", parse_loads,
               "--loads must be A:B:STEP with 0 < A <= B, STEP > 0 and at most 1000 loads",
               "a sweep of offered loads, A to B by STEP"),
    FS__OPT_LONG("--requests", 0, AT(requests), "N", 10, 100000000L,
                 "--requests must be an integer in [10, 100000000]",
                 "arrivals per seed, the first tenth a warm-up (default the file's, or 100000)"),
    FS__OPT_LONG("--seeds", 0, AT(seeds), "S", 1, 1000, "--seeds must be an integer in [1, 1000]",
                 "independent runs per load for the 95 % confidence intervals (default 5)"),
    FS__OPT_LONG("--seed", 0, AT(seed), "S", 0, 2147483647L, "--seed must be a non-negative integer",
                 "first seed; run i uses seed + i (default 1)"),
    FS__OPT_STR("--job", 0, AT(job), "shared|slice",
                "the file's training job holds its ring's lightpaths throughout, on the "
                "spectrum every request shares or in its dedicated slice (the job's \"slice\": "
                "its units on every fibre and core, kept from the other requests; OSDL); the "
                "blocking is the other tenants'"),
    FS__OPT_STR("--report", 0, AT(report), "FILE.html",
                "also write a self-contained HTML report: blocking and fragmentation against "
                "the load (with the closed form where there is one), occupancy per band and "
                "core"),
    FS__OPT_FN("--policy", 0, AT(policy), "P", parse_policy,
               "--policy must be first-fit, xt-aware or xt-avoid",
               "first-fit (default), xt-aware or xt-avoid (docs/model-wan-sdm.md)"),
    FS__OPT_LONG("--cores", 0, AT(cores), "C", 1, 19, "--cores must be 1, 7, 12 or 19",
                 "cores per fibre instead of the file's (1, 7, 12 or 19)"),
    FS__OPT_LONG("--k", 0, AT(k), "K", 1, FS_WAN_MAX_K, "--k must be an integer in [1, 64]",
                 "candidate paths per request (default the file's, or 3)"),
    FS__OPT_STR("--format", 0, AT(format), "text|json|csv", "text (default; or table), json or csv"),
    FS__OPT_END};

static const fs__cmd dyn_cmd = {
    "wan dynamic", "WAN.json [options]",
    "Requests between random site pairs arrive as a Poisson process and hold their lightpath "
    "for an exponential time; each is routed with spectrum and core assignment on arrival "
    "(k shortest paths, bands, cores, crosstalk checked against its format's threshold) and "
    "released on departure. Prints per offered load the blocking probability and bandwidth "
    "blocking with 95 % confidence intervals over the seeds (and the Kaufman-Roberts / "
    "Erlang B closed form on a one-fibre, one-core fixed grid), the blocking by cause, the "
    "spectrum fragmentation and the occupancy per band and core.",
    NULL, dyn_opts, "WAN.json", "WAN file", 1, 1, AT(file), AT(n_file)};
#undef AT

/* The progress line: the fraction of arrivals done. */
static void progress(void *ctx, double done) {
  fs__cli_progress *p = ctx;
  double e = fs__cli_progress_elapsed(p);
  if (e < 1.0 || e - p->last < (p->tty ? 0.2 : 10.0)) return;
  p->last = e;
  p->printed = 1;
  fprintf(stderr, "%sfabricsim %s: %.1f s, %.0f %% of the arrivals%s", p->tty ? "\r" : "", p->cmd,
          e, done * 100, p->tty ? "   " : "\n");
}

static int dyn_page(FILE *f, void *ctx) { return fs_report_wan_dynamic_html(f, ctx); }

static int run(const opts *o, int fmt) {
  fs_err err = {0, ""};
  fs_wan *w = NULL;
  fs_wan_rsca *r = NULL;
  fs_wan_dyn_point *pts = NULL;
  fs_wan_sdm s;
  fs_output *page = NULL;
  fs_wan_demand job_d[FS_WAN_MAX_SITES];
  int status = 0;
  if (fs_wan_from_file(o->file, &w, &err)) return fs__cli_fail(&err);
  if (fs_wan_sdm_get(w, (int32_t)o->cores, &s, &err)) {
    status = fs__cli_usage("wan dynamic", "--cores: %s", err.msg);
    goto out;
  }
  double load = o->load > 0 ? o->load : s.traffic.load_erlang;
  int32_t n = 1;
  if (o->loads.step > 0) n = (int32_t)floor((o->loads.b - o->loads.a) / o->loads.step + 1e-9) + 1;
  else if (!(load > 0)) {
    status = fs__cli_usage("wan dynamic",
                           "%s: no load: give --load, --loads or $.traffic.load_erlang", o->file);
    goto out;
  }
  fs_wan_policy pol = (int)o->policy >= 0 ? o->policy : (fs_wan_policy)s.traffic.policy;
  fs_wan_dyn_opts d = {pol,
                       (int32_t)(o->k ? o->k : (s.traffic.k ? s.traffic.k : 3)),
                       load,
                       o->requests ? o->requests : (s.traffic.requests ? s.traffic.requests : 100000),
                       (int32_t)(o->seeds ? o->seeds : (s.traffic.seeds ? s.traffic.seeds : 5)),
                       o->seed >= 0 ? (uint64_t)o->seed : (s.traffic.present ? s.traffic.seed : 1),
                       progress,
                       NULL,
                       NULL,
                       0,
                       0};
  fs__cli_progress pr;
  fs__cli_progress_start(&pr, "wan dynamic");
  d.ctx = &pr;
  if (!(pts = calloc((size_t)n, sizeof(*pts)))) {
    status = fs__cli_fail(&(fs_err){FS_ENOMEM, "out of memory"});
    goto out;
  }
  if (o->report && fs__cli_output_open(o->report, &page)) {
    status = 2;
    goto out;
  }
  if (fs_wan_rsca_new(w, &s, pol, d.k, &r, &err)) {
    status = fs__cli_fail(&err);
    goto out;
  }
  if (o->job) {
    int slice = strcmp(o->job, "slice") == 0;
    if (!w->job.present) {
      status = fs__cli_usage("wan dynamic", "--job: %s: $.job: missing", o->file);
      goto out;
    }
    if (slice && w->job.slice < 0) {
      status = fs__cli_usage("wan dynamic", "--job slice: %s: $.job.slice: missing (the job "
                             "has no slice to hold)", o->file);
      goto out;
    }
    d.n_fixed = fs_wan_job_demands(w, job_d, FS_WAN_MAX_SITES);
    d.fixed = job_d;
    d.fixed_in_slice = slice;
    if (slice)
      fs_wan_rsca_set_slice(r, w->slices[w->job.slice].first, w->slices[w->job.slice].count);
  }
  for (int32_t i = 0; i < n; i++) {
    if (o->loads.step > 0) d.load_erlang = o->loads.a + i * o->loads.step;
    if (fs_wan_dynamic(r, &d, &pts[i], &err)) {
      status = fs__cli_fail(&err);
      goto out;
    }
  }
  fs__cli_progress_end(&pr);
  fs_report_wan_dynamic rep = {o->file, w, &s, pol, d.k, d.requests, d.seed, n, pts,
                               o->job, d.n_fixed, 0, 0};
  if (o->job && d.fixed_in_slice) {
    rep.slice_first = w->slices[w->job.slice].first;
    rep.slice_count = w->slices[w->job.slice].count;
  }
  int wr = fmt == FS__FMT_JSON  ? fs_report_wan_dynamic_json(stdout, &rep)
           : fmt == FS__FMT_CSV ? fs_report_wan_dynamic_csv(stdout, &rep)
                                : fs_report_wan_dynamic_table(stdout, &rep);
  status = fs__cli_stdout_done("wan dynamic", wr);
  if (!status && page) {
    fs_output *pg = page;
    page = NULL;
    status = fs__cli_output_write(pg, dyn_page, &rep);
  }
out:
  fs_output_abort(page);
  free(pts);
  fs_wan_rsca_free(r);
  fs_wan_free(w);
  return status;
}

int fs__cli_wan_dynamic(int argc, char **argv) {
  opts o;
  memset(&o, 0, sizeof(o));
  o.format = "text";
  o.seed = -1;
  o.policy = (fs_wan_policy)-1;
  int go = fs__opts_parse(&dyn_cmd, &o, argc, argv);
  if (go >= 0) return go;
  if (o.load > 0 && o.loads.step > 0)
    return fs__cli_usage("wan dynamic", "--load and --loads: give one");
  if (o.job && strcmp(o.job, "shared") && strcmp(o.job, "slice"))
    return fs__cli_usage("wan dynamic", "--job must be shared or slice, got '%s'", o.job);
  if (o.cores && o.cores != 1 && o.cores != 7 && o.cores != 12 && o.cores != 19)
    return fs__cli_usage("wan dynamic", "--cores must be 1, 7, 12 or 19, got '%ld'", o.cores);
  int fmt, go_fmt = fs__cli_format("wan dynamic", o.format, "text json csv", &fmt);
  if (go_fmt >= 0) return go_fmt;
  return run(&o, fmt);
}
