/* fabricsim ocs schedule: a traffic job (one or more matrices) scheduled on
 * OCS circuits by BvN, Solstice and a static configuration, timed with the
 * reconfiguration delay (docs/model-ocs.md), optionally with an electrical
 * packet switch beside the circuits (hybrid rows bvn+eps, solstice+eps), and
 * optionally swept over the delay from 1 ns to 100 ms. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "fabricsim/ocs.h"
#include "fabricsim/report.h"

static int parse_delay(const char *s, double *out_s) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || errno || !isfinite(v) || v < 0) return -1;
  double unit;
  if (strcmp(end, "ns") == 0) unit = 1e-9;
  else if (strcmp(end, "us") == 0) unit = 1e-6;
  else if (strcmp(end, "ms") == 0) unit = 1e-3;
  else if (strcmp(end, "s") == 0) unit = 1;
  else return -1;
  if (v * unit > 3600) return -1;
  *out_s = v * unit;
  return 0;
}

#define N_SWEEP 17
/* Rows: the pure algorithms, then the hybrid versions of bvn and solstice. */
#define N_KINDS (FS_OCS_N_ALGOS + 2)

static fs_ocs_algo kind_algo(int k) {
  return k < FS_OCS_N_ALGOS ? (fs_ocs_algo)k : k == FS_OCS_N_ALGOS ? FS_OCS_BVN : FS_OCS_SOLSTICE;
}

static const char *kind_name(int k) {
  return k < FS_OCS_N_ALGOS ? fs_ocs_algo_name((fs_ocs_algo)k)
         : k == FS_OCS_N_ALGOS ? "bvn+eps"
                               : "solstice+eps";
}


/* Runs row kind k at delay_s: pure kinds without the EPS, hybrid ones with
 * it and the threshold rule. */
static int run_kind(const fs_ocs_plan *plan, const fs_ocs_params *base, int k, double delay_s,
                    double eps_gbps, double thr_s, int thr_mode, fs_ocs_result *res,
                    fs_err *err) {
  fs_ocs_params q = *base;
  q.delay_s = delay_s;
  if (k >= FS_OCS_N_ALGOS) {
    q.eps_gbps = eps_gbps;
    q.eps_balance = thr_mode == FS_REPORT_EPS_AUTO;
    q.eps_threshold_s = thr_mode == FS_REPORT_EPS_DELAY   ? delay_s
                        : thr_mode == FS_REPORT_EPS_FIXED ? thr_s
                                                          : 0;
  }
  return fs_ocs_plan_run(plan, &q, kind_algo(k), res, err);
}

/* --report: the first decomposing algorithm asked for (bvn, else
 * solstice), each phase stuffed, decomposed, scheduled and executed in
 * turn as fs_ocs_run does, its circuits' segments shifted by the phases
 * before it, with each phase's start and own bound; the table's rows as
 * the summary. The sweep's page (draw NULL) is its rows. */
typedef struct ocs_report_ctx {
  const fs_report_ocs_schedule *s;
  const fs_report_ocs_drawing *d;
} ocs_report_ctx;

static int ocs_report_fn(FILE *f, void *ctx) {
  const ocs_report_ctx *c = ctx;
  return fs_report_ocs_schedule_html(f, c->s, c->d);
}

static int ocs_report(fs_output *o, const fs_ocs_traffic *tr, const fs_ocs_params *p,
                      const int *want, const fs_report_ocs_schedule *s) {
  fs_ocs_algo algo = want[FS_OCS_BVN] ? FS_OCS_BVN : FS_OCS_SOLSTICE;
  int draw = want[FS_OCS_BVN] || want[FS_OCS_SOLSTICE];
  fs_err err = {0, ""};
  size_t nn = (size_t)tr->n * (size_t)tr->n, np = (size_t)tr->n_phases;
  int64_t *stuffed = malloc((nn ? nn : 1) * sizeof(int64_t));
  const char **names = malloc((np + 1) * sizeof(*names));
  double *start = malloc((np + 1) * sizeof(double)), *bound = malloc((np + 1) * sizeof(double));
  size_t *first = calloc(np + 1, sizeof(size_t));
  fs_ocs_seg *all = NULL;
  size_t n_all = 0;
  double off = 0;
  int rc = stuffed && names && start && bound && first ? 0 : FS_ENOMEM;
  for (int32_t ph = 0; !rc && ph < tr->n_phases; ph++) {
    names[ph] = tr->phases[ph].name;
    start[ph] = off;
    bound[ph] = 0;
    first[ph] = n_all;
    if (!draw) continue;
    fs_ocs_decomp d = {0};
    fs_ocs_schedule sch = {0};
    fs_ocs_result r;
    fs_ocs_seg *segs = NULL;
    size_t n_segs = 0;
    fs_ocs_stuff(tr->n, tr->phases[ph].bytes, stuffed);
    sch.n = tr->n;
    sch.n_ocs = p->degree;
    if (!(rc = fs_ocs_decompose(algo, tr->n, stuffed, &d, &err)) &&
        !(rc = fs_ocs_schedule_from_decomp(p, &d, &sch, &err)) &&
        !(rc = fs_ocs_execute(p, &sch, tr->phases[ph].bytes, &r, &segs, &n_segs, &err))) {
      fs_ocs_seg *grown = realloc(all, (n_all + n_segs + 1) * sizeof(*all));
      if (!grown) {
        rc = FS_ENOMEM;
      } else {
        all = grown;
        for (size_t i = 0; i < n_segs; i++) {
          all[n_all] = segs[i];
          all[n_all].t0_s += off;
          all[n_all++].t1_s += off;
        }
        bound[ph] = r.lower_bound_s;
        off += r.completion_s;
      }
    }
    free(segs);
    fs_ocs_schedule_free(&sch);
    fs_ocs_decomp_free(&d);
  }
  if (!rc) first[np] = n_all;
  free(stuffed);
  int st;
  if (rc) {
    fprintf(stderr, "fabricsim: %s: cannot draw the schedule: %s\n", fs_output_path(o),
            err.msg[0] ? err.msg : fs_strerror(rc));
    fs_output_abort(o);
    st = fs_err_is_input(rc) ? 2 : 1;
  } else {
    fs_report_ocs_drawing dr = {draw ? fs_ocs_algo_name(algo) : NULL, all, n_all, names, start,
                                bound, first, off};
    ocs_report_ctx c = {s, &dr};
    st = fs__cli_output_write(o, ocs_report_fn, &c);
  }
  free(all);
  free(names);
  free(start);
  free(bound);
  free(first);
  return st;
}

/* --delay-ns: nanoseconds in [0, 3.6e12], into seconds. */
static int parse_delay_ns(const char *v, void *field) {
  double ns;
  if (fs__cli_parse_double(v, 0, 3.6e12, &ns)) return -1;
  *(double *)field = ns * 1e-9;
  return 0;
}

static int parse_delay_opt(const char *v, void *field) { return parse_delay(v, field); }

/* --degree: an integer in [1, 64]. */
static int parse_degree(const char *v, void *field) {
  double dg;
  if (fs__cli_parse_double(v, 1, 64, &dg) || dg != floor(dg)) return -1;
  *(int32_t *)field = (int32_t)dg;
  return 0;
}

/* --eps-threshold as given: the rule (an fs_report_eps_threshold: the
 * balance rule, the delay, or a fixed time, 0 = none), its time, and
 * whether it was given. */
typedef struct threshold {
  int mode, given;
  double s;
} threshold;

static int parse_threshold(const char *v, void *field) {
  threshold *t = field;
  if (strcmp(v, "auto") == 0) {
    t->mode = FS_REPORT_EPS_AUTO;
  } else if (strcmp(v, "delay") == 0) {
    t->mode = FS_REPORT_EPS_DELAY;
  } else if (strcmp(v, "0") == 0) {
    t->mode = FS_REPORT_EPS_FIXED;
    t->s = 0;
  } else if (parse_delay(v, &t->s)) {
    return -1;
  } else {
    t->mode = FS_REPORT_EPS_FIXED;
  }
  t->given = 1;
  return 0;
}

/* What the command line gives; the initialiser holds the defaults. */
typedef struct cmdline {
  const char *file, *format, *algo, *report;
  fs_ocs_params p;
  int sweep;
  threshold thr;
  double eps_gbps;
} cmdline;

#define AT(f) offsetof(cmdline, f)
static const fs__opt schedule_opts[] = {
    FS__OPT_STR("--matrix", 0, AT(file), "FILE",
                "traffic: {\"nodes\": N, \"matrix\": [[bytes...]...]}, or {\"nodes\": N, "
                "\"pattern\": P, \"bytes\": B, \"seed\": S} with P one of alltoall ring "
                "pipeline permutation random skewed, or {\"nodes\": N, \"phases\": [{...}, "
                "...]} run one after another"),
    FS__OPT_DOUBLE("--gbps", 0, AT(p.gbps), "R", 1e-6, 1e6,
                   "--gbps must be a rate in [1e-6, 1e6] Gb/s",
                   "circuit rate in Gb/s (default 100)"),
    FS__OPT_FN("--delay", 0, AT(p.delay_s), "T", parse_delay_opt,
               "--delay must be a time >= 0 with unit ns, us, ms or s (at most 1 h)",
               "reconfiguration delay with unit ns, us, ms or s (default 10ms)"),
    FS__OPT_FN("--delay-ns", 0, AT(p.delay_s), "D", parse_delay_ns,
               "--delay-ns must be nanoseconds in [0, 3.6e12]", "the same in nanoseconds"),
    FS__OPT_FN("--degree", 0, AT(p.degree), "D", parse_degree,
               "--degree must be an integer in [1, 64]",
               "optical ports per node = parallel OCSes (default 1)"),
    FS__OPT_FLAG("--all-stop", 0, AT(p.all_stop),
                 "a reconfiguring OCS darkens every circuit, not only the changed ones "
                 "(Solstice's model)"),
    FS__OPT_STR("--algo", 0, AT(algo), "A", "bvn, solstice, static or all (default all)"),
    FS__OPT_DOUBLE("--eps-gbps", 0, AT(eps_gbps), "E", 0, 1e6,
                   "--eps-gbps must be a rate in [0, 1e6] Gb/s (0 = no EPS)",
                   "hybrid: every node also has an electrical packet switch port of E Gb/s "
                   "(default 0 = none); adds the rows bvn+eps and solstice+eps (c-Through / "
                   "Helios style)"),
    FS__OPT_FN("--eps-threshold", 0, AT(thr), "T", parse_threshold,
               "--eps-threshold must be auto, delay, 0 or a time >= 0 with unit ns, us, ms or "
               "s (at most 1 h)",
               "which configurations go to the EPS instead: auto (default: the smallest ones "
               "while that lowers max(circuit time, EPS time), Solstice's balance), delay "
               "(those live for less than the reconfiguration delay), a time with unit ns, "
               "us, ms or s (those live for less), or 0 (none)"),
    FS__OPT_FLAG("--eps-residual-only", 0, AT(p.eps_residual_only),
                 "the EPS carries only pairs with no circuit left in the schedule (default: "
                 "also pairs whose circuit is dark or not yet up)"),
    FS__OPT_FLAG("--sweep", 0, AT(sweep), "the delay sweep 1 ns .. 100 ms (half decades)"),
    FS__OPT_STR("--format", 0, AT(format), "text|json", "text (default; or table) or json"),
    FS__OPT_STR("--report", 0, AT(report), "FILE.html",
                "also write a self-contained HTML report: completion against the lower "
                "bound and the circuit schedule over time with its configurations (bvn, else "
                "solstice); with --sweep, completion against the delay"),
    FS__OPT_END};

static const fs__cmd schedule_cmd = {
    "ocs schedule", "--matrix FILE.json [options]",
    "Decomposes each traffic matrix of the job into circuit configurations and times them on "
    "OCS circuits, paying the reconfiguration delay per slot; compares with one static "
    "configuration (multi-hop) and the lower bound max(row sum, column sum) / (degree * "
    "rate). docs/model-ocs.md.",
    NULL, schedule_opts, NULL, NULL, 0, 0, 0, 0};
#undef AT

/* What a run of the schedules needs, set from the command line. */
typedef struct sched {
  const fs_ocs_traffic *tr;
  const fs_ocs_plan *plan;
  fs_report_ocs_schedule out; /* what the report says beside the rows */
  int want[N_KINDS];
  int32_t n_rows; /* wanted */
  int fmt, thr_mode; /* fmt 0 table, 1 JSON */
  double eps_gbps, thr_s;
} sched;

/* One delay: each wanted row timed and printed, and the report written
 * into *report_out if there is one (*report_out then NULL). 0, the
 * report's exit status (1 after printing why), or -1 with err set. */
static int run_single(const sched *sc, fs_output **report_out, fs_err *err) {
  fs_report_ocs_row rows[N_KINDS];
  fs_report_ocs_schedule s = sc->out;
  s.rows = rows;
  for (int a = 0; a < N_KINDS; a++) {
    if (!sc->want[a]) continue;
    if (a == FS_OCS_STATIC) s.static_row = s.n_rows;
    fs_report_ocs_row *row = &rows[s.n_rows++];
    row->algo = kind_name(a);
    row->hybrid = a >= FS_OCS_N_ALGOS;
    if (run_kind(sc->plan, &sc->out.p, a, sc->out.p.delay_s, sc->eps_gbps, sc->thr_s,
                 sc->thr_mode, &row->r, err))
      return -1;
  }
  int rc = sc->fmt == 0 ? fs_report_ocs_schedule_table(stdout, &s)
                        : fs_report_ocs_schedule_json(stdout, &s);
  if (fs__cli_stdout_done("ocs schedule", rc)) return 1;
  if (*report_out) {
    fs_output *o = *report_out;
    *report_out = NULL;
    return ocs_report(o, sc->tr, &sc->out.p, sc->want, &s);
  }
  return 0;
}

/* The delay sweep, 1 ns .. 100 ms, and its page into *report_out if there
 * is one (*report_out then NULL): 0, 1 after printing why an output
 * failed, or -1 with err set. */
static int run_sweep(const sched *sc, fs__cli_progress *prog, fs_output **report_out,
                     fs_err *err) {
  /* Half-decade steps: 1, 3.16, 10, ... ns up to 100 ms. */
  double delays[N_SWEEP];
  fs_report_ocs_row rows[N_SWEEP][N_KINDS];
  fs_report_ocs_schedule s = sc->out;
  s.rows = &rows[0][0];
  s.delays_s = delays;
  s.n_delays = N_SWEEP;
  for (int k = 0; k < N_SWEEP; k++) {
    delays[k] = 1e-9 * pow(10.0, k / 2.0);
    int32_t n = 0;
    for (int a = 0; a < N_KINDS; a++) {
      if (!sc->want[a]) continue;
      /* the rows of each delay packed at the front, n_rows apart */
      fs_report_ocs_row *row = &rows[0][0] + (size_t)k * (size_t)sc->n_rows + n++;
      row->algo = kind_name(a);
      row->hybrid = a >= FS_OCS_N_ALGOS;
      if (run_kind(sc->plan, &sc->out.p, a, delays[k], sc->eps_gbps, sc->thr_s, sc->thr_mode,
                   &row->r, err))
        return -1;
    }
    fs_sim_progress sp = {0, k + 1, N_SWEEP, 0};
    fs__cli_progress_hook(prog, &sp);
  }
  s.n_rows = sc->n_rows;
  int rc = sc->fmt == 0 ? fs_report_ocs_sweep_table(stdout, &s)
                        : fs_report_ocs_sweep_json(stdout, &s);
  int st = fs__cli_stdout_done("ocs schedule", rc);
  if (st || !*report_out) return st;
  fs_output *o = *report_out;
  *report_out = NULL;
  ocs_report_ctx c = {&s, NULL};
  return fs__cli_output_write(o, ocs_report_fn, &c);
}

int fs__cli_ocs_schedule(int argc, char **argv) {
  cmdline o = {.format = "text", .algo = "all",
               .p = {100, FS_OCS_DEFAULT_DELAY_S, 1, 0, 0, 0, 0, 0},
               .thr = {FS_REPORT_EPS_AUTO, 0, 0}};
  int go = fs__opts_parse(&schedule_cmd, &o, argc, argv);
  if (go >= 0) return go;
  const char *file = o.file, *format = o.format, *algo = o.algo, *report = o.report;
  fs_ocs_params p = o.p;
  int sweep = o.sweep, thr_mode = o.thr.mode, thr_given = o.thr.given;
  double eps_gbps = o.eps_gbps, thr_s = o.thr.s;
  if (!file) return fs__cli_usage("ocs schedule", "--matrix is required");
  int hyb = eps_gbps > 0;
  if (!hyb && (thr_given || p.eps_residual_only))
    return fs__cli_usage("ocs schedule", "--eps-threshold and --eps-residual-only need "
                                         "--eps-gbps > 0 (an EPS to carry the traffic)");
  int fmt, go_fmt = fs__cli_format("ocs schedule", format, "text json", &fmt);
  if (go_fmt >= 0) return go_fmt;
  int want[N_KINDS] = {0};
  fs_ocs_algo one;
  if (strcmp(algo, "all") == 0) {
    for (int a = 0; a < FS_OCS_N_ALGOS; a++) want[a] = 1;
  } else if (fs_ocs_algo_parse(algo, &one) == 0) {
    want[one] = 1;
  } else {
    return fs__cli_usage("ocs schedule",
                         "--algo must be bvn, solstice, static or all, got '%s'", algo);
  }
  if (hyb) {
    want[FS_OCS_N_ALGOS] = want[FS_OCS_BVN];
    want[FS_OCS_N_ALGOS + 1] = want[FS_OCS_SOLSTICE];
  }
  fs_err err = {0, ""};
  fs_ocs_traffic tr;
  if (fs_ocs_matrix_from_file(file, &tr, &err)) return fs__cli_fail(&err);
  fs_output *report_out = NULL;
  if (report && fs__cli_output_open(report, &report_out)) {
    fs_ocs_traffic_free(&tr);
    return 2;
  }
  int status = 0;
  fs__cli_progress prog;
  fs__cli_progress_start(&prog, "ocs schedule");
  unsigned mask = 0;
  for (int a = 0; a < FS_OCS_N_ALGOS; a++)
    if (want[a]) mask |= 1u << a;
  /* decompositions once: they do not depend on the delay */
  fs_ocs_plan *plan = NULL;
  if (fs_ocs_plan_new(&tr, p.degree, mask, &plan, &err)) goto fail;
  sched c = {&tr, plan, {0}, {0}, 0, fmt, thr_mode, eps_gbps, thr_s};
  c.out = (fs_report_ocs_schedule){.file = file, .nodes = tr.n, .phases = tr.n_phases, .p = p,
                                   .hybrid = hyb, .eps_gbps = eps_gbps,
                                   .threshold = (fs_report_eps_threshold)thr_mode,
                                   .threshold_s = thr_s, .static_row = -1};
  memcpy(c.want, want, sizeof(want));
  for (int a = 0; a < N_KINDS; a++) c.n_rows += want[a];
  int rc = sweep ? run_sweep(&c, &prog, &report_out, &err) : run_single(&c, &report_out, &err);
  if (rc < 0) goto fail;
  status = rc;
  goto out;
fail:
  status = fs__cli_fail(&err);
out:
  fs_output_abort(report_out);
  fs__cli_progress_end(&prog);
  fs_ocs_plan_free(plan);
  fs_ocs_traffic_free(&tr);
  return status;
}
