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

#include "../base/base.h"
#include "cli.h"
#include "opts.h"
#include "fabricsim/html.h"
#include "fabricsim/ocs.h"

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

static void fmt_time(char *buf, size_t n, double s) {
  if (!isfinite(s)) snprintf(buf, n, "-");
  else snprintf(buf, n, "%.6g", s * 1e3);
}

static void fmt_delay(char *buf, size_t n, double s) {
  if (s == 0) snprintf(buf, n, "0");
  else if (s < 1e-6) snprintf(buf, n, "%.3g ns", s * 1e9);
  else if (s < 1e-3) snprintf(buf, n, "%.3g us", s * 1e6);
  else if (s < 1) snprintf(buf, n, "%.3g ms", s * 1e3);
  else snprintf(buf, n, "%.3g s", s);
}

static void jnum(const char *key, double v, int comma) {
  char b[32];
  fs__fmt_num(b, v);
  printf("\"%s\": %s%s", key, b, comma ? ", " : "");
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

/* --eps-threshold: the balance rule, the delay, or a fixed time (0 = none). */
enum { THR_AUTO, THR_DELAY, THR_FIXED };

/* Runs row kind k at delay_s: pure kinds without the EPS, hybrid ones with
 * it and the threshold rule. */
static int run_kind(const fs_ocs_plan *plan, const fs_ocs_params *base, int k, double delay_s,
                    double eps_gbps, double thr_s, int thr_mode, fs_ocs_result *res,
                    fs_err *err) {
  fs_ocs_params q = *base;
  q.delay_s = delay_s;
  if (k >= FS_OCS_N_ALGOS) {
    q.eps_gbps = eps_gbps;
    q.eps_balance = thr_mode == THR_AUTO;
    q.eps_threshold_s = thr_mode == THR_DELAY ? delay_s : thr_mode == THR_FIXED ? thr_s : 0;
  }
  return fs_ocs_plan_run(plan, &q, kind_algo(k), res, err);
}

static void fmt_share(char *buf, size_t n, const fs_ocs_result *r) {
  double tot = r->circuit_bytes + r->eps_bytes;
  snprintf(buf, n, "%.1f%%", tot > 0 ? 100 * r->eps_bytes / tot : 0.0);
}

/* --report: the first decomposing algorithm asked for (bvn, else
 * solstice), each phase stuffed, decomposed, scheduled and executed in
 * turn as fs_ocs_run does, its circuits' segments shifted by the phases
 * before it; the table's completions as the summary. */
typedef struct ocs_report_ctx {
  const char *title, *note;
  const char **kv;
  int32_t n_kv, n;
  fs_ocs_seg *segs;
  size_t n_segs;
  double t_end;
} ocs_report_ctx;

static int ocs_report_fn(FILE *f, void *ctx) {
  const ocs_report_ctx *c = ctx;
  return fs_html_ocs_report(f, c->title, c->kv, c->n_kv, c->segs, c->n_segs, c->n, c->t_end,
                            c->note);
}

static int ocs_report(fs_output *o, const char *file, const fs_ocs_traffic *tr,
                      const fs_ocs_params *p, const int *want, const fs_ocs_result *res) {
  fs_ocs_algo algo = want[FS_OCS_BVN] ? FS_OCS_BVN : FS_OCS_SOLSTICE;
  int draw = want[FS_OCS_BVN] || want[FS_OCS_SOLSTICE];
  fs_err err = {0, ""};
  size_t nn = (size_t)tr->n * (size_t)tr->n;
  int64_t *stuffed = malloc((nn ? nn : 1) * sizeof(int64_t));
  fs_ocs_seg *all = NULL;
  size_t n_all = 0;
  double off = 0;
  int rc = stuffed ? 0 : FS_ENOMEM;
  for (int32_t ph = 0; draw && !rc && ph < tr->n_phases; ph++) {
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
        off += r.completion_s;
      }
    }
    free(segs);
    fs_ocs_schedule_free(&sch);
    fs_ocs_decomp_free(&d);
  }
  free(stuffed);
  if (rc) {
    free(all);
    fprintf(stderr, "fabricsim: %s: cannot draw the schedule: %s\n", fs_output_path(o),
            err.msg[0] ? err.msg : fs_strerror(rc));
    fs_output_abort(o);
    return fs_err_is_input(rc) ? 2 : 1;
  }
  char vals[N_KINDS][64], keys[N_KINDS][40];
  const char *kv[2 * N_KINDS];
  int32_t nkv = 0;
  for (int a = 0; a < N_KINDS; a++) {
    if (!want[a]) continue;
    snprintf(keys[nkv], sizeof(keys[nkv]), "%s completion", kind_name(a));
    snprintf(vals[nkv], sizeof(vals[nkv]), "%.6g ms (%d reconfigurations)",
             res[a].completion_s * 1e3, res[a].n_reconfig);
    kv[2 * nkv] = keys[nkv];
    kv[2 * nkv + 1] = vals[nkv];
    nkv++;
  }
  char title[400], note[160];
  snprintf(title, sizeof(title), "fabricsim ocs schedule: %s", file);
  if (draw)
    snprintf(note, sizeof(note), "%s schedule, %g Gb/s circuits, degree %d, delay %g ms.",
             fs_ocs_algo_name(algo), p->gbps, p->degree, p->delay_s * 1e3);
  else
    snprintf(note, sizeof(note), "static only: one configuration, no schedule to draw.");
  ocs_report_ctx c = {title, note, kv, nkv, tr->n, all, n_all, off};
  int st = fs__cli_output_write(o, ocs_report_fn, &c);
  free(all);
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

/* --eps-threshold as given: the rule, its time, and whether it was given. */
typedef struct threshold {
  int mode, given;
  double s;
} threshold;

static int parse_threshold(const char *v, void *field) {
  threshold *t = field;
  if (strcmp(v, "auto") == 0) {
    t->mode = THR_AUTO;
  } else if (strcmp(v, "delay") == 0) {
    t->mode = THR_DELAY;
  } else if (strcmp(v, "0") == 0) {
    t->mode = THR_FIXED;
    t->s = 0;
  } else if (parse_delay(v, &t->s)) {
    return -1;
  } else {
    t->mode = THR_FIXED;
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
    FS__OPT_STR("--format", 0, AT(format), "F", "table (default) or json"),
    FS__OPT_STR("--report", 0, AT(report), "FILE.html",
                "also write a self-contained HTML report: the circuit schedule over time "
                "(bvn, else solstice; not with --sweep)"),
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
  const char *file;
  const fs_ocs_traffic *tr;
  const fs_ocs_plan *plan;
  fs_ocs_params p;
  int want[N_KINDS];
  int hyb, fmt, thr_mode; /* fmt 0 table, 1 JSON */
  double eps_gbps, thr_s;
  char thr_txt[48];
} sched;

/* One delay: each wanted row timed and printed, and the report written
 * into *report_out if there is one (*report_out then NULL). 0, the
 * report's exit status (1 after printing why), or -1 with err set. */
static int run_single(const sched *sc, fs_output **report_out, fs_err *err) {
  const fs_ocs_params p = sc->p;
  const int *want = sc->want;
  const fs_ocs_plan *plan = sc->plan;
  const fs_ocs_traffic *tr = sc->tr;
  const char *file = sc->file, *thr_txt = sc->thr_txt;
  double eps_gbps = sc->eps_gbps, thr_s = sc->thr_s;
  int thr_mode = sc->thr_mode, fmt = sc->fmt, hyb = sc->hyb;
  fs_ocs_result res[N_KINDS];
  for (int a = 0; a < N_KINDS; a++)
    if (want[a] &&
        run_kind(plan, &p, a, p.delay_s, eps_gbps, thr_s, thr_mode, &res[a], err))
      return -1;
  char dl[32];
  fmt_delay(dl, sizeof(dl), p.delay_s);
  if (fmt == 0) {
    printf("# fabricsim ocs schedule: %s, %d nodes, %d phase%s, %g Gb/s circuits, degree %d,\n"
           "# reconfiguration delay %s (%s dark); times in ms\n",
           file, tr->n, tr->n_phases, tr->n_phases > 1 ? "s" : "", p.gbps, p.degree, dl,
           p.all_stop ? "all circuits" : "changed circuits");
    if (hyb)
      printf("# hybrid rows: EPS port of %g Gb/s per node beside the circuits, threshold %s, "
             "%s\n",
             eps_gbps, thr_txt,
             p.eps_residual_only ? "EPS carries pairs with no circuit left"
                                 : "EPS carries every pair without a live circuit");
    printf(hyb ? "%-12s %13s %13s %9s %12s %12s %9s %7s %10s %9s %10s %6s\n"
               : "%-9s %13s %13s %9s %12s %12s %9s %7s %10s\n",
           "algo", "completion", "schedule", "reconfigs", "reconfig", "lower_bound",
           "vs_bound", "util", "vs_static", "eps_share", "eps_busy", "to_eps");
    for (int a = 0; a < N_KINDS; a++) {
      if (!want[a]) continue;
      const fs_ocs_result *r = &res[a];
      char c1[32], c2[32], c3[32], c4[32], vs[32];
      fmt_time(c1, sizeof(c1), r->completion_s);
      fmt_time(c2, sizeof(c2), r->schedule_s);
      fmt_time(c3, sizeof(c3), r->reconfig_s);
      fmt_time(c4, sizeof(c4), r->lower_bound_s);
      if (want[FS_OCS_STATIC] && r->completion_s > 0)
        snprintf(vs, sizeof(vs), "%.3fx", res[FS_OCS_STATIC].completion_s / r->completion_s);
      else
        snprintf(vs, sizeof(vs), "-");
      printf(hyb ? "%-12s %13s %13s %9d %12s %12s %9.3f %7.3f %10s"
                 : "%-9s %13s %13s %9d %12s %12s %9.3f %7.3f %10s",
             kind_name(a), c1, c2, r->n_reconfig, c3, c4,
             r->lower_bound_s > 0 ? r->completion_s / r->lower_bound_s : 1.0, r->util, vs);
      if (hyb && a >= FS_OCS_N_ALGOS) {
        char sh[32], eb[32];
        fmt_share(sh, sizeof(sh), r);
        fmt_time(eb, sizeof(eb), r->eps_busy_s);
        printf(" %9s %10s %6d", sh, eb, r->n_to_eps);
      } else if (hyb) {
        printf(" %9s %10s %6s", "-", "-", "-");
      }
      printf("\n");
    }
    printf("# vs_bound = completion / lower bound; vs_static = static completion / this one\n");
    if (hyb)
      printf("# hybrid lower bound = max line sum / (degree * rate + EPS rate); eps_share = "
             "bytes on the EPS; eps_busy = time the EPS carries (ms); to_eps = "
             "configurations left to the EPS\n");
  } else {
    printf("{\"matrix\": ");
    fs__fput_json_str(stdout, file);
    printf(", \"nodes\": %d, \"phases\": %d, ", tr->n, tr->n_phases);
    jnum("gbps", p.gbps, 1);
    jnum("delay_s", p.delay_s, 1);
    printf("\"degree\": %d, \"all_stop\": %s,", p.degree, p.all_stop ? "true" : "false");
    if (hyb) {
      printf(" ");
      jnum("eps_gbps", eps_gbps, 1);
      if (thr_mode == THR_AUTO) printf("\"eps_threshold\": \"auto\", ");
      else jnum("eps_threshold_s", thr_mode == THR_DELAY ? p.delay_s : thr_s, 1);
      printf("\"eps_residual_only\": %s,", p.eps_residual_only ? "true" : "false");
    }
    printf("\n \"results\": [");
    int first = 1;
    for (int a = 0; a < N_KINDS; a++) {
      if (!want[a]) continue;
      const fs_ocs_result *r = &res[a];
      printf("%s\n  {\"algo\": \"%s\", ", first ? "" : ",", kind_name(a));
      first = 0;
      jnum("completion_s", r->completion_s, 1);
      jnum("schedule_s", r->schedule_s, 1);
      printf("\"reconfigurations\": %d, ", r->n_reconfig);
      jnum("reconfig_s", r->reconfig_s, 1);
      jnum("lower_bound_s", r->lower_bound_s, 1);
      jnum("util", r->util, 1);
      jnum("delivered_bytes", r->delivered_bytes, 1);
      jnum("undelivered_bytes", r->undelivered_bytes, a >= FS_OCS_N_ALGOS);
      if (a >= FS_OCS_N_ALGOS) {
        jnum("circuit_bytes", r->circuit_bytes, 1);
        jnum("eps_bytes", r->eps_bytes, 1);
        jnum("eps_busy_s", r->eps_busy_s, 1);
        printf("\"configurations_to_eps\": %d", r->n_to_eps);
      }
      printf("}");
    }
    printf("]}\n");
  }
  if (*report_out) {
    fs_output *o = *report_out;
    *report_out = NULL;
    return ocs_report(o, file, tr, &p, want, res);
  }
  return 0;
}

/* The delay sweep, 1 ns .. 100 ms: 0, or -1 with err set. */
static int run_sweep(const sched *sc, fs__cli_progress *prog, fs_err *err) {
  const fs_ocs_params p = sc->p;
  const int *want = sc->want;
  const fs_ocs_plan *plan = sc->plan;
  const fs_ocs_traffic *tr = sc->tr;
  const char *file = sc->file, *thr_txt = sc->thr_txt;
  double eps_gbps = sc->eps_gbps, thr_s = sc->thr_s;
  int thr_mode = sc->thr_mode, fmt = sc->fmt, hyb = sc->hyb;
  /* Half-decade steps: 1, 3.16, 10, ... ns up to 100 ms. */
  double delays[N_SWEEP];
  fs_ocs_result res[N_SWEEP][N_KINDS];
  for (int k = 0; k < N_SWEEP; k++) {
    delays[k] = 1e-9 * pow(10.0, k / 2.0);
    for (int a = 0; a < N_KINDS; a++)
      if (want[a] &&
          run_kind(plan, &p, a, delays[k], eps_gbps, thr_s, thr_mode, &res[k][a], err))
        return -1;
    fs_sim_progress sp = {0, k + 1, N_SWEEP, 0};
    fs__cli_progress_hook(prog, &sp);
  }
  if (fmt == 0) {
    printf("# fabricsim ocs schedule --sweep: %s, %d nodes, %d phase%s, %g Gb/s, degree %d,\n"
           "# %s dark; job completion time in ms (configurations in brackets)\n",
           file, tr->n, tr->n_phases, tr->n_phases > 1 ? "s" : "", p.gbps, p.degree,
           p.all_stop ? "all circuits" : "changed circuits");
    if (hyb)
      printf("# +eps: EPS port of %g Gb/s per node, threshold %s, %s; then the share of "
             "bytes on the EPS\n",
             eps_gbps, thr_txt, p.eps_residual_only ? "residual only" : "spill");
    printf("%-10s", "delay");
    for (int a = 0; a < N_KINDS; a++)
      if (want[a]) printf(" %22s", kind_name(a));
    printf(" %12s %*s\n", "lower_bound", hyb ? 12 : 9, "best");
    for (int k = 0; k < N_SWEEP; k++) {
      char dl[32];
      fmt_delay(dl, sizeof(dl), delays[k]);
      printf("%-10s", dl);
      int best = -1;
      double lb = 0;
      for (int a = 0; a < N_KINDS; a++) {
        if (!want[a]) continue;
        const fs_ocs_result *r = &res[k][a];
        char c[32], cell[96];
        fmt_time(c, sizeof(c), r->completion_s);
        if (a >= FS_OCS_N_ALGOS) {
          char sh[32];
          fmt_share(sh, sizeof(sh), r);
          snprintf(cell, sizeof(cell), "%s [%d] %s", c, r->n_reconfig, sh);
        } else {
          snprintf(cell, sizeof(cell), "%s [%d]", c, r->n_reconfig);
          lb = r->lower_bound_s; /* the pure OCS bound */
        }
        printf(" %22s", cell);
        if (best < 0 || r->completion_s < res[k][best].completion_s) best = a;
      }
      char c[32];
      fmt_time(c, sizeof(c), lb);
      printf(" %12s %*s\n", c, hyb ? 12 : 9, kind_name(best));
    }
  } else {
    printf("{\"matrix\": ");
    fs__fput_json_str(stdout, file);
    printf(", \"nodes\": %d, \"phases\": %d, ", tr->n, tr->n_phases);
    jnum("gbps", p.gbps, 1);
    printf("\"degree\": %d, \"all_stop\": %s,", p.degree, p.all_stop ? "true" : "false");
    if (hyb) {
      printf(" ");
      jnum("eps_gbps", eps_gbps, 1);
      if (thr_mode == THR_AUTO) printf("\"eps_threshold\": \"auto\", ");
      else if (thr_mode == THR_DELAY) printf("\"eps_threshold\": \"delay\", ");
      else jnum("eps_threshold_s", thr_s, 1);
      printf("\"eps_residual_only\": %s,", p.eps_residual_only ? "true" : "false");
    }
    printf("\n \"sweep\": [");
    for (int k = 0; k < N_SWEEP; k++) {
      printf("%s\n  {", k ? "," : "");
      jnum("delay_s", delays[k], 1);
      printf("\"results\": [");
      int first = 1;
      for (int a = 0; a < N_KINDS; a++) {
        if (!want[a]) continue;
        const fs_ocs_result *r = &res[k][a];
        printf("%s{\"algo\": \"%s\", ", first ? "" : ", ", kind_name(a));
        first = 0;
        jnum("completion_s", r->completion_s, 1);
        printf("\"reconfigurations\": %d, ", r->n_reconfig);
        jnum("lower_bound_s", r->lower_bound_s, a >= FS_OCS_N_ALGOS);
        if (a >= FS_OCS_N_ALGOS) {
          jnum("eps_bytes", r->eps_bytes, 1);
          jnum("eps_busy_s", r->eps_busy_s, 1);
          printf("\"configurations_to_eps\": %d", r->n_to_eps);
        }
        printf("}");
      }
      printf("]}");
    }
    printf("]}\n");
  }
  return 0;
}

int fs__cli_ocs_schedule(int argc, char **argv) {
  cmdline o = {.format = "table", .algo = "all",
               .p = {100, FS_OCS_DEFAULT_DELAY_S, 1, 0, 0, 0, 0, 0},
               .thr = {THR_AUTO, 0, 0}};
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
  int fmt = strcmp(format, "table") == 0 ? 0 : strcmp(format, "json") == 0 ? 1 : -1;
  if (fmt < 0)
    return fs__cli_usage("ocs schedule", "--format must be table or json, got '%s'", format);
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
  if (report && sweep)
    return fs__cli_usage("ocs schedule", "--report draws one schedule: not with --sweep");
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
  sched c = {file, &tr, plan, p, {0}, hyb, fmt, thr_mode, eps_gbps, thr_s, ""};
  memcpy(c.want, want, sizeof(want));
  if (thr_mode == THR_AUTO) snprintf(c.thr_txt, sizeof(c.thr_txt), "auto (balance)");
  else if (thr_mode == THR_DELAY) snprintf(c.thr_txt, sizeof(c.thr_txt), "= the delay");
  else fmt_delay(c.thr_txt, sizeof(c.thr_txt), thr_s);
  int rc = sweep ? run_sweep(&c, &prog, &err) : run_single(&c, &report_out, &err);
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
