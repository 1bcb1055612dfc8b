/* Sweep files and their points (sweep.h). */
#include "fabricsim/sweep.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/base.h"
#include "../base/json.h"
#include "fabricsim/scenario.h"
#include "fabricsim/sched.h"
#include "fabricsim/train.h"
#include "fabricsim/wan.h"
#include "fabricsim/wan_sdm.h"
#include "fabricsim/work.h"

enum { MAX_AXES = 16 };

typedef struct axis {
  char *path;         /* as written: "parallelism.tp", "flows[0].bytes" */
  const cJSON *values;
  int32_t n;
} axis;

struct fs_sweep {
  char file[256];
  fs_sweep_kind kind;
  cJSON *root;       /* the sweep file */
  cJSON *base;       /* the base job or scenario */
  char *base_text;   /* as read, for the digest */
  axis axes[MAX_AXES];
  int32_t n_axes, n_points;
  int zip, compare;
};

static const char *const train_figs[] = {
    "iteration_ms",   "tokens_per_s",   "model_tflops_per_gpu", "mfu",
    "hw_tflops_per_gpu", "hfu",         "compute_ms",           "bubble_ms",
    "exposed_tp_ms",  "exposed_dp_ms",  "exposed_pp_ms",        "exposed_ep_ms",
    "exposed_cp_ms",  "flows_simulated"};
static const char *const sim_figs[] = {"makespan_ms", "flows", "mean_fct_us", "max_fct_us"};
static const char *const wan_figs[] = {
    "allreduce_ms",   "allreduce_model_ms", "cross_site_ms", "demands",
    "blocked",        "blocked_gbps",       "lightpaths",    "spectrum_used"};

static const char *const dyn_figs[] = {
    "blocking",       "blocking_ci95", "bw_blocking",      "bw_blocking_ci95", "fragmentation",
    "blocked_xt",     "blocked_spectrum", "blocked_reach", "closed_form_blocking"};

static const char *const jobs_figs[] = {
    "jct_mean_s", "jct_p99_s",     "queue_mean_s",   "queue_p99_s",  "makespan_s",
    "slowdown",   "gpu_util",      "link_util_mean", "link_util_max"};

#define N_OF(a) ((int32_t)(sizeof(a) / sizeof((a)[0])))
/* The figure names of a kind and their count. */
static const char *const *figs_of(fs_sweep_kind k, int32_t *n) {
  switch (k) {
    case FS_SWEEP_TRAIN: *n = N_OF(train_figs); return train_figs;
    case FS_SWEEP_SIM: *n = N_OF(sim_figs); return sim_figs;
    case FS_SWEEP_WAN_TRAIN: *n = N_OF(wan_figs); return wan_figs;
    case FS_SWEEP_JOBS: *n = N_OF(jobs_figs); return jobs_figs;
    case FS_SWEEP_WAN_DYNAMIC: break;
  }
  *n = N_OF(dyn_figs);
  return dyn_figs;
}
#undef N_OF

fs_sweep_kind fs_sweep_kind_of(const fs_sweep *sw) { return sw->kind; }
int32_t fs_sweep_n_points(const fs_sweep *sw) { return sw->n_points; }
int32_t fs_sweep_n_axes(const fs_sweep *sw) { return sw->n_axes; }
const char *fs_sweep_axis_path(const fs_sweep *sw, int32_t a) { return sw->axes[a].path; }
int32_t fs_sweep_n_figs(const fs_sweep *sw) {
  int32_t n;
  figs_of(sw->kind, &n);
  return n;
}
const char *fs_sweep_fig_name(const fs_sweep *sw, int32_t k) {
  int32_t n;
  return figs_of(sw->kind, &n)[k];
}

void fs_sweep_free(fs_sweep *sw) {
  if (!sw) return;
  for (int32_t a = 0; a < sw->n_axes; a++) free(sw->axes[a].path);
  cJSON_Delete(sw->root);
  cJSON_Delete(sw->base);
  free(sw->base_text);
  free(sw);
}

/* Index of point p on axis a. */
static int32_t value_index(const fs_sweep *sw, int32_t p, int32_t a) {
  if (sw->zip) return p;
  for (int32_t b = sw->n_axes - 1; b > a; b--) p /= sw->axes[b].n;
  return p % sw->axes[a].n;
}

static const cJSON *axis_value(const fs_sweep *sw, int32_t p, int32_t a) {
  return cJSON_GetArrayItem(sw->axes[a].values, value_index(sw, p, a));
}

char *fs_sweep_axis_value(const fs_sweep *sw, int32_t p, int32_t a) {
  return cJSON_PrintUnformatted(axis_value(sw, p, a));
}

uint64_t fs_sweep_digest(const fs_sweep *sw) {
  uint64_t h = 0x5eedull;
  char *axes = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(sw->root, "axes"));
  const char *parts[3] = {sw->base_text, axes ? axes : "", sw->zip ? "zip" : "grid"};
  for (int i = 0; i < 3; i++)
    for (const unsigned char *c = (const unsigned char *)parts[i]; *c; c++)
      h = fs__mix64(h ^ *c);
  free(axes);
  return h;
}

/* Sets `path` ("a.b[2].c") in doc to a copy of v. The objects and arrays on
 * the way must exist; the last key may be new in an existing object. 0, or
 * FS_EINVAL with why (what is missing). */
static int set_path(cJSON *doc, const char *path, const cJSON *v, char *why, size_t n) {
  cJSON *cur = doc;
  const char *s = path;
  char key[128];
  while (*s) {
    if (*s == '[') {
      char *end;
      long i = strtol(s + 1, &end, 10);
      if (end == s + 1 || *end != ']' || i < 0)
        return snprintf(why, n, "a bad index at '%s'", s), FS_EINVAL;
      if (!cJSON_IsArray(cur) || i >= cJSON_GetArraySize(cur))
        return snprintf(why, n, "no element %ld there", i), FS_EINVAL;
      s = end + 1;
      if (*s == '.') s++;
      if (!*s) {
        cJSON *copy = cJSON_Duplicate(v, 1);
        if (!copy || !cJSON_ReplaceItemInArray(cur, (int)i, copy)) return FS_ENOMEM;
        return 0;
      }
      cur = cJSON_GetArrayItem(cur, (int)i);
      continue;
    }
    size_t k = strcspn(s, ".[");
    if (k == 0 || k >= sizeof(key)) return snprintf(why, n, "an empty or long key"), FS_EINVAL;
    memcpy(key, s, k);
    key[k] = '\0';
    s += k;
    if (*s == '.') s++;
    if (!cJSON_IsObject(cur)) return snprintf(why, n, "'%s' is not inside an object", key), FS_EINVAL;
    cJSON *next = cJSON_GetObjectItemCaseSensitive(cur, key);
    if (!*s) {
      cJSON *copy = cJSON_Duplicate(v, 1);
      if (!copy) return FS_ENOMEM;
      if (next) cJSON_ReplaceItemInObjectCaseSensitive(cur, key, copy);
      else cJSON_AddItemToObject(cur, key, copy);
      return 0;
    }
    if (!next) return snprintf(why, n, "the base has no '%s'", key), FS_EINVAL;
    cur = next;
  }
  return snprintf(why, n, "an empty path"), FS_EINVAL;
}

/* The point's document: the base with the axis values of point p (or, with
 * only >= 0, of that axis alone). */
static int point_doc(const fs_sweep *sw, int32_t p, int32_t only, cJSON **out, char *why,
                     size_t n, int32_t *bad_axis) {
  cJSON *doc = cJSON_Duplicate(sw->base, 1);
  if (!doc) return FS_ENOMEM;
  for (int32_t a = 0; a < sw->n_axes; a++) {
    if (only >= 0 && a != only) continue;
    int rc = set_path(doc, sw->axes[a].path, axis_value(sw, only >= 0 ? 0 : p, a), why, n);
    if (rc) {
      *bad_axis = a;
      cJSON_Delete(doc);
      return rc;
    }
  }
  *out = doc;
  return 0;
}

/* Parses a point's text as the base's kind, into job, scenario or WAN. */
/* (tr is NULL where a caller only checks a point: the trace is then freed) */
static int parse_point(const fs_sweep *sw, const char *text, const char *label, fs_job **job,
                       fs_scenario **sc, fs_wan **wan, fs_sched_trace **tr, fs_err *err) {
  if (sw->kind == FS_SWEEP_TRAIN) return fs_job_parse(text, strlen(text), label, job, err);
  if (sw->kind == FS_SWEEP_JOBS) {
    fs_sched_trace *t = NULL;
    int rc = fs_sched_trace_parse(text, strlen(text), label, &t, err);
    if (tr && !rc)
      *tr = t;
    else
      fs_sched_trace_free(t);
    return rc;
  }
  if (sw->kind == FS_SWEEP_WAN_TRAIN || sw->kind == FS_SWEEP_WAN_DYNAMIC)
    return fs_wan_from_json(text, label, wan, err);
  return fs_scenario_parse(text, strlen(text), label, sc, err);
}

static int check_axes(fs_sweep *sw, const char *P, fs_err *err) {
  fs__jctx c = {sw->file, err};
  const cJSON *axes = cJSON_GetObjectItemCaseSensitive(sw->root, "axes");
  if (!cJSON_IsObject(axes) || !axes->child)
    return fs__json_fail(&c, P, axes, "must be an object of at least one axis");
  for (const cJSON *a = axes->child; a; a = a->next) {
    char ap[300];
    snprintf(ap, sizeof(ap), "%s[\"%s\"]", P, a->string);
    if (sw->n_axes == MAX_AXES) return fs__json_fail(&c, ap, a, "at most %d axes", MAX_AXES);
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1)
      return fs__json_fail(&c, ap, a, "an axis must be a non-empty array of values");
    axis *x = &sw->axes[sw->n_axes];
    size_t pl = strlen(a->string) + 1;
    if (!(x->path = malloc(pl))) return fs_err_set(err, FS_ENOMEM, "out of memory");
    memcpy(x->path, a->string, pl);
    x->values = a;
    x->n = cJSON_GetArraySize(a);
    sw->n_axes++;
  }
  int64_t n = 1;
  for (int32_t a = 0; a < sw->n_axes; a++) {
    if (sw->zip && sw->axes[a].n != sw->axes[0].n) {
      char ap[300];
      snprintf(ap, sizeof(ap), "%s[\"%s\"]", P, sw->axes[a].path);
      return fs__json_fail(&c, ap, sw->axes[a].values,
                           "zipped axes need one length: %d values here, %d on \"%s\"",
                           sw->axes[a].n, sw->axes[0].n, sw->axes[0].path);
    }
    n = sw->zip ? sw->axes[0].n : n * sw->axes[a].n;
    if (n > 10000000) return fs__json_fail(&c, P, axes, "more than 10,000,000 points");
  }
  sw->n_points = (int32_t)n;
  /* Each axis alone on the base: its path must exist, and its first value
   * must not be refused at its own path (an unknown key, a wrong type);
   * other errors of a point are that point's. */
  for (int32_t a = 0; a < sw->n_axes; a++) {
    char why[200] = "", ap[300];
    snprintf(ap, sizeof(ap), "%s[\"%s\"]", P, sw->axes[a].path);
    cJSON *doc = NULL;
    int32_t bad = -1;
    int rc = point_doc(sw, 0, a, &doc, why, sizeof(why), &bad);
    if (rc == FS_ENOMEM) return fs_err_set(err, rc, "out of memory");
    if (rc) return fs__json_fail(&c, ap, sw->axes[a].values, "no such path in the base: %s", why);
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    if (!text) return fs_err_set(err, FS_ENOMEM, "out of memory");
    fs_err perr = {0, ""};
    fs_job *job = NULL;
    fs_scenario *sc = NULL;
    fs_wan *wan = NULL;
    char jp[160];
    snprintf(jp, sizeof(jp), "$.%s", sw->axes[a].path);
    rc = parse_point(sw, text, "point", &job, &sc, &wan, NULL, &perr);
    free(text);
    fs_job_free(job);
    fs_scenario_free(sc);
    fs_wan_free(wan);
    if (rc && strstr(perr.msg, jp) &&
        (strstr(perr.msg, "unknown key") || strstr(perr.msg, "must be")))
      return fs__json_fail(&c, ap, cJSON_GetArrayItem(sw->axes[a].values, 0),
                           "the base refuses this axis: %s", perr.msg);
  }
  return 0;
}

int fs_sweep_load(const char *path, fs_sweep **out, fs_err *err) {
  fs_sweep *sw = calloc(1, sizeof(*sw));
  if (!sw) return fs_err_set(err, FS_ENOMEM, "out of memory");
  snprintf(sw->file, sizeof(sw->file), "%s", path);
  fs__jctx c = {sw->file, err};
  char *text = NULL;
  size_t len;
  int rc = fs__read_file(path, &text, &len, err);
  if (!rc) rc = fs__json_parse(&c, text, len, &sw->root);
  free(text);
  static const char *const keys[] = {"description", "base", "command", "axes", "mode",
                                     "compare", NULL};
  const char *mode = "grid", *cmd = NULL;
  cJSON *cmp;
  if (rc || (rc = fs__json_expect_object(&c, sw->root, "$", keys)) ||
      (rc = fs__json_str(&c, sw->root, "$", "mode", 0, "grid", &mode)) ||
      (rc = fs__json_str(&c, sw->root, "$", "command", 0, NULL, &cmd)))
    goto fail;
  if (strcmp(mode, "grid") && strcmp(mode, "zip")) {
    rc = fs__json_fail(&c, "$.mode", cJSON_GetObjectItemCaseSensitive(sw->root, "mode"),
                       "must be \"grid\" or \"zip\"");
    goto fail;
  }
  sw->zip = strcmp(mode, "zip") == 0;
  cmp = cJSON_GetObjectItemCaseSensitive(sw->root, "compare");
  if (cmp && !cJSON_IsBool(cmp)) {
    rc = fs__json_fail(&c, "$.compare", cmp, "must be true or false");
    goto fail;
  }
  sw->compare = cJSON_IsTrue(cmp);
  /* the base: a file next to the sweep file, or inline */
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(sw->root, "base");
  if (cJSON_IsString(b)) {
    char bp[512];
    const char *slash = strrchr(path, '/');
    if (b->valuestring[0] == '/' || !slash)
      snprintf(bp, sizeof(bp), "%s", b->valuestring);
    else
      snprintf(bp, sizeof(bp), "%.*s/%s", (int)(slash - path), path, b->valuestring);
    fs_err ferr = {0, ""};
    if (fs__read_file(bp, &sw->base_text, &len, &ferr)) {
      rc = fs__json_fail(&c, "$.base", b, "cannot read it (%s)", ferr.msg);
      goto fail;
    }
    fs__jctx bc = {bp, err};
    if ((rc = fs__json_parse(&bc, sw->base_text, len, &sw->base))) goto fail;
  } else if (cJSON_IsObject(b)) {
    sw->base = cJSON_Duplicate(b, 1);
    sw->base_text = cJSON_PrintUnformatted(b);
    if (!sw->base || !sw->base_text) {
      rc = fs_err_set(err, FS_ENOMEM, "out of memory");
      goto fail;
    }
  } else {
    rc = fs__json_fail(&c, "$.base", b, "must be a job, scenario or WAN file name, or one inline");
    goto fail;
  }
  if (cmd && strcmp(cmd, "train") && strcmp(cmd, "sim") && strcmp(cmd, "wan train") &&
      strcmp(cmd, "wan dynamic") && strcmp(cmd, "jobs")) {
    rc = fs__json_fail(&c, "$.command", cJSON_GetObjectItemCaseSensitive(sw->root, "command"),
                       "must be \"train\", \"sim\", \"wan train\", \"wan dynamic\" or \"jobs\"");
    goto fail;
  }
  if (cmd)
    sw->kind = strcmp(cmd, "train") == 0         ? FS_SWEEP_TRAIN
               : strcmp(cmd, "sim") == 0         ? FS_SWEEP_SIM
               : strcmp(cmd, "wan train") == 0   ? FS_SWEEP_WAN_TRAIN
               : strcmp(cmd, "wan dynamic") == 0 ? FS_SWEEP_WAN_DYNAMIC
                                                 : FS_SWEEP_JOBS;
  else
    sw->kind = cJSON_GetObjectItemCaseSensitive(sw->base, "generate") ||
                       cJSON_GetObjectItemCaseSensitive(sw->base, "cluster")
                   ? FS_SWEEP_JOBS
               : cJSON_GetObjectItemCaseSensitive(sw->base, "model") ? FS_SWEEP_TRAIN
               : cJSON_GetObjectItemCaseSensitive(sw->base, "fibres") ? FS_SWEEP_WAN_TRAIN
                                                                      : FS_SWEEP_SIM;
  if ((rc = check_axes(sw, "$.axes", err))) goto fail;
  *out = sw;
  return 0;
fail:
  fs_sweep_free(sw);
  return rc;
}

static void figures_train(const fs_train_result *r, double *f) {
  f[0] = r->iter_s * 1e3;
  f[1] = r->tokens_per_s;
  f[2] = r->model_tflops_per_gpu;
  f[3] = r->mfu;
  f[4] = r->hw_tflops_per_gpu;
  f[5] = r->hfu;
  f[6] = r->compute_s * 1e3;
  f[7] = r->bubble_s * 1e3;
  f[8] = r->kind[FS_PAR_TP].exposed_s * 1e3;
  f[9] = r->kind[FS_PAR_DP].exposed_s * 1e3;
  f[10] = r->kind[FS_PAR_PP].exposed_s * 1e3;
  f[11] = r->kind[FS_PAR_EP].exposed_s * 1e3;
  f[12] = r->kind[FS_PAR_CP].exposed_s * 1e3;
  f[13] = (double)r->flows;
}

/* A WAN point as `fabricsim wan train` runs it (first-fit, k = 3, no cut):
 * the file's demands and the job's provisioned; the job's all-reduce
 * simulated when the file has a job (else its figures stay NAN). */
static int run_wan(const fs_wan *w, double *f, fs_err *err) {
  int32_t nd = 0;
  fs_wan_demand *d = fs_wan_demands_with_job(w, &nd);
  if (!d) return fs_err_set(err, FS_ENOMEM, "out of memory");
  fs_wan_prov_opts o = {FS_WAN_FIRST_FIT, 3, -1};
  fs_wan_plan *p = NULL;
  int rc = fs_wan_provision(w, d, nd, &o, &p, err);
  if (!rc && w->job.present) {
    fs_wan_train_result r;
    if (!(rc = fs_wan_train(p, 0, &r, err))) {
      f[0] = r.total_s * 1e3;
      f[1] = r.model_total_s * 1e3;
      f[2] = r.model_s[1] * 1e3;
    }
  }
  if (!rc) {
    int64_t used = 0, all = (int64_t)w->n_fibres * w->grid.units;
    for (int64_t i = 0; i < all; i++) used += p->owner[i] >= 0;
    f[3] = p->n_demands;
    f[4] = p->blocked;
    f[5] = p->blocked_gbps;
    f[6] = p->n_lps;
    f[7] = all ? (double)used / (double)all : 0;
  }
  fs_wan_plan_free(p);
  free(d);
  return rc;
}

/* A WAN point as `fabricsim wan dynamic` runs it with the file's traffic
 * (its load, policy, k, requests, seeds and seed; defaults 3 paths,
 * 100,000 arrivals, 5 seeds). A file without a load fails the point. */
static int run_wan_dynamic(const fs_wan *w, double *f, fs_err *err) {
  fs_wan_sdm s;
  int rc = fs_wan_sdm_get(w, 0, &s, err);
  if (rc) return rc;
  const fs_wan_traffic *t = &s.traffic;
  if (!(t->load_erlang > 0))
    return fs_err_set(err, FS_EINVAL, "no load: the point needs $.traffic.load_erlang");
  fs_wan_dyn_opts o = {(fs_wan_policy)t->policy, t->k ? t->k : 3, t->load_erlang,
                       t->requests ? t->requests : 100000, t->seeds ? t->seeds : 5,
                       t->present ? t->seed : 1, NULL, NULL, NULL, 0, 0};
  fs_wan_rsca *r = NULL;
  fs_wan_dyn_point p;
  if (!(rc = fs_wan_rsca_new(w, &s, o.policy, o.k, &r, err)) &&
      !(rc = fs_wan_dynamic(r, &o, &p, err))) {
    f[0] = p.pb;
    f[1] = p.pb_ci;
    f[2] = p.bbr;
    f[3] = p.bbr_ci;
    f[4] = p.frag;
    f[5] = (double)p.blocked_xt;
    f[6] = (double)p.blocked_spectrum;
    f[7] = (double)p.blocked_reach;
    f[8] = p.analytic_pb;
  }
  fs_wan_rsca_free(r);
  return rc;
}

/* A trace point as `fabricsim jobs` runs it under the file's "scheduler"
 * and "contention". */
static int run_jobs(const fs_sched_trace *t, double *f, fs_err *err) {
  fs_sched *s = NULL;
  fs_sched_result r;
  fs_sched_opts o = {t->scheduler, 0, NULL, NULL, t->contention};
  int rc = fs_sched_new(t, &s, err);
  if (!rc && !(rc = fs_sched_run(s, &o, &r, err))) {
    const double v[] = {r.jct_mean_s, r.jct_p99_s,  r.queue_mean_s,   r.queue_p99_s,
                        r.makespan_s, r.slowdown_mean, r.gpu_util, r.link_util_mean,
                        r.link_util_max};
    memcpy(f, v, sizeof(v));
    fs_sched_result_free(&r);
  }
  fs_sched_free(s);
  return rc;
}

static int figures_sim(const fs_scenario *sc, double *f) {
  const fs_sim *s = sc->sim;
  f[0] = fs_sim_makespan_s(s) * 1e3;
  f[1] = sc->n_flows;
  double sum = 0, mx = 0;
  for (int32_t i = 0; i < sc->n_flows; i++) {
    double fct = fs_sim_finish_s(s, i) - fs_sim_start_s(s, i);
    sum += fct;
    if (fct > mx) mx = fct;
  }
  f[2] = sc->n_flows ? sum / sc->n_flows * 1e6 : 0;
  f[3] = mx * 1e6;
  return 0;
}

int fs_sweep_run_point(const fs_sweep *sw, int32_t p, fs_sweep_result *out) {
  memset(out, 0, sizeof(*out));
  out->point = p;
  for (int k = 0; k < FS_SWEEP_MAX_FIGS; k++) out->fig[k] = NAN;
  char why[200] = "";
  cJSON *doc = NULL;
  int32_t bad = -1;
  int rc = point_doc(sw, p, -1, &doc, why, sizeof(why), &bad);
  if (rc == FS_ENOMEM) return rc;
  if (rc) {
    snprintf(out->error, sizeof(out->error), "axis %s: %s", sw->axes[bad].path, why);
    return 0;
  }
  char *text = cJSON_PrintUnformatted(doc);
  cJSON_Delete(doc);
  if (!text) return FS_ENOMEM;
  char label[300];
  snprintf(label, sizeof(label), "%s point %d", sw->file, p);
  fs_err err = {0, ""};
  fs_job *job = NULL;
  fs_scenario *sc = NULL;
  fs_wan *wan = NULL;
  fs_sched_trace *trace = NULL;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  rc = parse_point(sw, text, label, &job, &sc, &wan, &trace, &err);
  free(text);
  if (!rc && trace) {
    rc = run_jobs(trace, out->fig, &err);
  } else if (!rc && wan) {
    rc = sw->kind == FS_SWEEP_WAN_DYNAMIC ? run_wan_dynamic(wan, out->fig, &err)
                                          : run_wan(wan, out->fig, &err);
  } else if (!rc && job) {
    fs_train_opts opts = {0};
    opts.no_compare = !sw->compare;
    fs_train *tr = NULL;
    fs_train_result r;
    rc = fs_train_new(job, &opts, &tr, &err);
    if (!rc) rc = fs_train_run(tr, &r, &err);
    if (!rc) figures_train(&r, out->fig);
    fs_train_free(tr);
  } else if (!rc) {
    rc = fs_scenario_run(sc, NULL, &err);
    if (!rc) rc = figures_sim(sc, out->fig);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  out->wall_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  fs_job_free(job);
  fs_scenario_free(sc);
  fs_wan_free(wan);
  fs_sched_trace_free(trace);
  if (rc == FS_ENOMEM) return rc;
  out->ok = rc == 0;
  if (rc) snprintf(out->error, sizeof(out->error), "%.*s", (int)sizeof(out->error) - 1, err.msg);
  return 0;
}
