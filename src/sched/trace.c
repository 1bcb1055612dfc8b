/* Job traces (sched.h, docs/formats.md "Job traces"): read, checked and
 * turned into the job files `train` reads, one per distinct (model,
 * training, parallelism), so that a model and its parallelism mean exactly
 * what they mean there. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "../base/json.h"
#include "internal.h"

/* GPT-3's family (Brown et al. 2020, Table 2.1: layers, d_model, heads;
 * 2048 tokens), with the vocabulary padded to 51,200 as Megatron-LM does
 * and 13B's d_model 5,140 rounded to 5,120 (divisible by its 40 heads and
 * by tp 8), as examples/tenant-a.json has it. */
static const struct {
  const char *name;
  int layers, hidden, heads;
} presets[] = {
    {"gpt-350m", 24, 1024, 16}, {"gpt-1.3b", 24, 2048, 16}, {"gpt-2.7b", 32, 2560, 32},
    {"gpt-6.7b", 32, 4096, 32}, {"gpt-13b", 40, 5120, 40},  {"gpt-175b", 96, 12288, 96},
};
#define N_PRESETS ((int)(sizeof(presets) / sizeof(presets[0])))

/* The model object of a preset name, or NULL. */
static cJSON *preset_model(const char *name) {
  for (int i = 0; i < N_PRESETS; i++)
    if (strcmp(presets[i].name, name) == 0) {
      cJSON *m = cJSON_CreateObject();
      if (!m) return NULL;
      cJSON_AddNumberToObject(m, "layers", presets[i].layers);
      cJSON_AddNumberToObject(m, "hidden", presets[i].hidden);
      cJSON_AddNumberToObject(m, "heads", presets[i].heads);
      cJSON_AddNumberToObject(m, "seq_len", 2048);
      cJSON_AddNumberToObject(m, "vocab", 51200);
      return m;
    }
  return NULL;
}

void fs_sched_trace_free(fs_sched_trace *t) {
  if (!t) return;
  for (int32_t i = 0; i < t->n_jobs; i++)
    FS__FREE_ALL(t->jobs[i].model, t->jobs[i].training, t->jobs[i].parallelism);
  for (int32_t i = 0; i < t->n_specs; i++) fs_job_free(t->specs[i]);
  FS__FREE_ALL(t->jobs, t->specs, t->cluster, t->description);
  free(t);
}

/* err from fs_job_parse names a path of the job file we built; point it at
 * the trace's: $.model... -> $.jobs[i].model..., $.topology... ->
 * $.cluster.topology... */
static void repath(fs_err *err, const char *file, int32_t i) {
  char out[sizeof(err->msg)];
  size_t fl = strlen(file);
  const char *m = err->msg;
  if (strncmp(m, file, fl) != 0 || strncmp(m + fl, ": ", 2) != 0) return;
  const char *rest = m + fl + 2;
  static const char *const cl[] = {"$.topology", "$.hardware", "$.routing", "$.framework", NULL};
  for (int k = 0; cl[k]; k++)
    if (strncmp(rest, cl[k], strlen(cl[k])) == 0) {
      snprintf(out, sizeof(out), "%s: $.cluster.%s", file, rest + 2);
      memcpy(err->msg, out, sizeof(out));
      return;
    }
  if (strncmp(rest, "$.", 2) == 0)
    snprintf(out, sizeof(out), "%s: $.jobs[%d].%s", file, i, rest + 2);
  else
    snprintf(out, sizeof(out), "%s: $.jobs[%d]: %s", file, i, rest);
  memcpy(err->msg, out, sizeof(out));
}

typedef struct parse_ctx {
  fs__jctx c;
  const cJSON *cluster;
  fs_sched_trace *t;
  fs__strmap specs; /* key text -> spec index */
  char **keys;      /* owned key texts */
  int32_t n_keys;
  int64_t hosts;
} parse_ctx;

static char *print(const cJSON *v) { return v ? cJSON_PrintUnformatted(v) : NULL; }

/* The job file text of job i (its sections and the cluster's). */
static char *job_file_text(const parse_ctx *p, const fs_sched_job *j) {
  const cJSON *cl = p->cluster;
  const char *rt = cJSON_GetObjectItemCaseSensitive(cl, "routing") ? ",\"routing\":" : "";
  char *topo = print(cJSON_GetObjectItemCaseSensitive(cl, "topology"));
  char *hw = print(cJSON_GetObjectItemCaseSensitive(cl, "hardware"));
  char *ro = print(cJSON_GetObjectItemCaseSensitive(cl, "routing"));
  char *model = j->model;
  cJSON *pm = NULL;
  if (j->model[0] == '"') { /* a preset: checked before */
    cJSON *s = cJSON_Parse(j->model);
    pm = s ? preset_model(s->valuestring) : NULL;
    cJSON_Delete(s);
    model = print(pm);
  }
  size_t n = strlen(model ? model : "") + strlen(j->training ? j->training : "") +
             strlen(j->parallelism) + strlen(topo ? topo : "") + strlen(hw ? hw : "") +
             strlen(ro ? ro : "") + 256;
  char *out = malloc(n);
  if (out && model && topo && hw)
    snprintf(out, n,
             "{\"model\":%s,\"training\":%s,\"parallelism\":%s,\"hardware\":%s,\"topology\":%s,"
             "\"placement\":\"packed\"%s%s}",
             model, j->training, j->parallelism, hw, topo, rt, ro ? ro : "");
  else {
    free(out);
    out = NULL;
  }
  if (pm) {
    cJSON_Delete(pm);
    free(model);
  }
  FS__FREE_ALL(topo, hw, ro);
  return out;
}

/* The fields of $.jobs[i] into *j (sections as compact text). */
static int parse_job_fields(parse_ctx *p, const cJSON *o, int32_t i, fs_sched_job *j) {
  static const char *const keys[] = {"id",         "arrival_s", "model", "training",
                                     "parallelism", "gpus",     "iterations", NULL};
  const fs__jctx *c = &p->c;
  char P[64], Q[96];
  fs__json_path_idx(P, sizeof(P), "$.jobs", (size_t)i);
  const char *id;
  int rc;
  if ((rc = fs__json_expect_object(c, o, P, keys)) ||
      (rc = fs__json_str(c, o, P, "id", 0, NULL, &id)) ||
      (rc = fs__json_num(c, o, P, "arrival_s", 1, 0, 0, 1e12, &j->arrival_s)) ||
      (rc = fs__json_int(c, o, P, "gpus", 1, 0, 1, 1 << 30, &j->gpus)) ||
      (rc = fs__json_int(c, o, P, "iterations", 1, 0, 1, 1000000000000LL, &j->iterations)))
    return rc;
  if (id && (strlen(id) >= sizeof(j->id) || !id[0]))
    return fs__json_fail(c, (snprintf(Q, sizeof(Q), "%s.id", P), Q),
                         cJSON_GetObjectItemCaseSensitive(o, "id"),
                         "must be 1 to %d characters", (int)sizeof(j->id) - 1);
  if (id)
    snprintf(j->id, sizeof(j->id), "%s", id);
  else
    snprintf(j->id, sizeof(j->id), "job-%d", i);
  if (j->gpus > p->hosts)
    return fs__json_fail(c, (snprintf(Q, sizeof(Q), "%s.gpus", P), Q),
                         cJSON_GetObjectItemCaseSensitive(o, "gpus"),
                         "the job is larger than the cluster's %lld GPUs", (long long)p->hosts);
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "model");
  snprintf(Q, sizeof(Q), "%s.model", P);
  if (!m) return fs__json_fail(c, Q, NULL, "missing (a preset name or a model object)");
  if (cJSON_IsString(m)) {
    cJSON *pm = preset_model(m->valuestring);
    if (!pm) {
      char list[160] = "";
      for (int k = 0; k < N_PRESETS; k++)
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", k ? ", " : "",
                 presets[k].name);
      return fs__json_fail(c, Q, m, "unknown model preset (one of %s)", list);
    }
    cJSON_Delete(pm);
  } else if (!cJSON_IsObject(m)) {
    return fs__json_fail(c, Q, m, "must be a preset name or an object");
  }
  const cJSON *tr = cJSON_GetObjectItemCaseSensitive(o, "training");
  const cJSON *pa = cJSON_GetObjectItemCaseSensitive(o, "parallelism");
  if (tr && !cJSON_IsObject(tr))
    return fs__json_fail(c, (snprintf(Q, sizeof(Q), "%s.training", P), Q), tr,
                         "must be an object");
  if (pa && !cJSON_IsObject(pa))
    return fs__json_fail(c, (snprintf(Q, sizeof(Q), "%s.parallelism", P), Q), pa,
                         "must be an object");
  return fs__sched_fill_job(c, P, m, tr, pa, j);
}

/* The parallelism with dp from gpus (when absent) and the default training
 * (8 micro-batches of 1 per data-parallel rank), as compact text. */
int fs__sched_fill_job(const fs__jctx *c, const char *P, const cJSON *m, const cJSON *tr,
                       const cJSON *pa, fs_sched_job *j) {
  char Q[96];
  cJSON *par = pa ? cJSON_Duplicate(pa, 1) : cJSON_CreateObject();
  if (!par) return fs_err_set(c->err, FS_ENOMEM, "out of memory");
  int64_t f[3] = {1, 1, 1};
  static const char *const dims[3] = {"tp", "pp", "cp"};
  for (int k = 0; k < 3; k++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(par, dims[k]);
    if (v && cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble <= 1 << 30)
      f[k] = (int64_t)v->valuedouble;
  }
  int64_t per = f[0] * f[1] * f[2], dp = j->gpus / per;
  const cJSON *dv = cJSON_GetObjectItemCaseSensitive(par, "dp");
  if (!dv && (j->gpus % per != 0 || dp < 1)) {
    cJSON_Delete(par);
    return fs__json_fail(c, (snprintf(Q, sizeof(Q), "%s.gpus", P), Q), NULL,
                         "must be a multiple of tp x pp x cp = %lld, got %lld", (long long)per,
                         (long long)j->gpus);
  }
  if (dv && (!cJSON_IsNumber(dv) || dv->valuedouble * (double)per != (double)j->gpus)) {
    cJSON_Delete(par);
    return fs__json_fail(c, (snprintf(Q, sizeof(Q), "%s.parallelism.dp", P), Q), dv,
                         "tp x pp x cp x dp must be the job's %lld GPUs", (long long)j->gpus);
  }
  if (!dv) cJSON_AddNumberToObject(par, "dp", (double)dp);
  for (int k = 0; k < 2; k++) /* tp and pp default to 1 here (job files need them) */
    if (!cJSON_GetObjectItemCaseSensitive(par, dims[k])) cJSON_AddNumberToObject(par, dims[k], 1);
  j->parallelism = print(par);
  cJSON_Delete(par);
  j->model = print(m);
  if (tr) {
    j->training = print(tr);
  } else {
    char buf[96];
    snprintf(buf, sizeof(buf), "{\"global_batch\":%lld,\"micro_batch\":1}",
             (long long)(8 * (dv ? (int64_t)dv->valuedouble : dp)));
    j->training = strdup(buf);
  }
  if (!j->parallelism || !j->model || !j->training)
    return fs_err_set(c->err, FS_ENOMEM, "out of memory");
  return 0;
}

/* The distinct job of j: found, or built with fs_job_parse (errors
 * re-pathed to the trace's). */
static int spec_of(parse_ctx *p, int32_t i, fs_sched_job *j) {
  fs_sched_trace *t = p->t;
  size_t n = strlen(j->model) + strlen(j->training) + strlen(j->parallelism) + 3;
  char *key = malloc(n);
  if (!key) return fs_err_set(p->c.err, FS_ENOMEM, "out of memory");
  snprintf(key, n, "%s|%s|%s", j->model, j->training, j->parallelism);
  int32_t k = fs__strmap_get(&p->specs, key);
  if (k >= 0) {
    free(key);
    j->spec = k;
    return 0;
  }
  char *text = job_file_text(p, j);
  fs_job *job = NULL;
  int rc = text ? fs_job_parse(text, strlen(text), t->file, &job, p->c.err)
                : fs_err_set(p->c.err, FS_ENOMEM, "out of memory");
  free(text);
  if (rc) {
    free(key);
    repath(p->c.err, t->file, i);
    return rc;
  }
  fs_job **ns = realloc(t->specs, (size_t)(t->n_specs + 1) * sizeof(*ns));
  char **nk = realloc(p->keys, (size_t)(t->n_specs + 1) * sizeof(*nk));
  if (ns) t->specs = ns;
  if (nk) p->keys = nk;
  if (!ns || !nk || fs__strmap_put(&p->specs, key, t->n_specs, NULL)) {
    free(key);
    fs_job_free(job);
    return fs_err_set(p->c.err, FS_ENOMEM, "out of memory");
  }
  p->keys[p->n_keys++] = key;
  t->specs[t->n_specs] = job;
  j->spec = t->n_specs++;
  return 0;
}

static int parse_cluster(parse_ctx *p, const cJSON *root) {
  static const char *const keys[] = {"topology", "hardware", "routing", "ocs_reconfig_ms", NULL};
  const fs__jctx *c = &p->c;
  const cJSON *cl = cJSON_GetObjectItemCaseSensitive(root, "cluster");
  if (!cl) return fs__json_fail(c, "$.cluster", NULL, "missing (the topology and hardware)");
  if (!cJSON_IsObject(cl)) return fs__json_fail(c, "$.cluster", cl, "must be an object");
  double ms;
  int rc;
  if ((rc = fs__json_expect_object(c, cl, "$.cluster", keys)) ||
      (rc = fs__json_num(c, cl, "$.cluster", "ocs_reconfig_ms", 0, 10, 0, 1e6, &ms)))
    return rc;
  p->t->ocs_reconfig_s = ms * 1e-3;
  const cJSON *to = cJSON_GetObjectItemCaseSensitive(cl, "topology");
  if (!to) return fs__json_fail(c, "$.cluster.topology", NULL, "missing");
  if (!cJSON_GetObjectItemCaseSensitive(cl, "hardware"))
    return fs__json_fail(c, "$.cluster.hardware", NULL, "missing");
  fs_topo *topo = NULL;
  if ((rc = fs_topo_from_json_object(to, p->t->file, "$.cluster.topology", &topo, c->err)))
    return rc;
  p->hosts = topo->n_hosts;
  fs_topo_free(topo);
  p->cluster = cl;
  if (!(p->t->cluster = print(cl))) return fs_err_set(c->err, FS_ENOMEM, "out of memory");
  return 0;
}

static int by_arrival(const void *a, const void *b) {
  const fs_sched_job *x = a, *y = b;
  if (x->arrival_s != y->arrival_s) return x->arrival_s < y->arrival_s ? -1 : 1;
  return x->spec < y->spec ? -1 : x->spec > y->spec; /* (spec holds the index here) */
}

/* Sorts by arrival, stable (the trace's order on ties). */
void fs__sched_sort(fs_sched_trace *t) {
  int32_t *spec = malloc((size_t)t->n_jobs * sizeof(*spec));
  if (!spec) { /* fall back: insertion sort, stable, in place */
    for (int32_t i = 1; i < t->n_jobs; i++)
      for (int32_t k = i; k > 0 && t->jobs[k - 1].arrival_s > t->jobs[k].arrival_s; k--) {
        fs_sched_job x = t->jobs[k];
        t->jobs[k] = t->jobs[k - 1];
        t->jobs[k - 1] = x;
      }
    return;
  }
  for (int32_t i = 0; i < t->n_jobs; i++) {
    spec[i] = t->jobs[i].spec;
    t->jobs[i].spec = i;
  }
  qsort(t->jobs, (size_t)t->n_jobs, sizeof(*t->jobs), by_arrival);
  for (int32_t i = 0; i < t->n_jobs; i++) t->jobs[i].spec = spec[t->jobs[i].spec];
  free(spec);
}

/* Every job's whole-server rule, once the server size is known. */
static int check_servers(parse_ctx *p, const int32_t *where) {
  fs_sched_trace *t = p->t;
  t->gpus = p->hosts;
  t->gpus_per_server = t->n_specs ? t->specs[0]->hw.gpus_per_node : 1;
  int64_t G = t->gpus_per_server;
  for (int32_t i = 0; i < t->n_jobs; i++) {
    int64_t g = t->jobs[i].gpus;
    if ((g < G && G % g != 0) || (g > G && g % G != 0)) {
      char P[64];
      snprintf(P, sizeof(P), "$.jobs[%d].gpus", where[i]);
      return fs_err_set(p->c.err, FS_EINVAL,
                        "%s: %s: a job takes a part of one %lld-GPU server (a divisor of %lld) "
                        "or whole servers (a multiple), got %lld",
                        t->file, P, (long long)G, (long long)G, (long long)g);
    }
  }
  return 0;
}

static int parse_jobs(parse_ctx *p, const cJSON *root) {
  const fs__jctx *c = &p->c;
  fs_sched_trace *t = p->t;
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "jobs");
  if (!arr) return fs__json_fail(c, "$.jobs", NULL, "missing (an array of jobs)");
  int n = cJSON_GetArraySize(arr);
  if (!cJSON_IsArray(arr) || n < 1 || n > 1000000)
    return fs__json_fail(c, "$.jobs", arr, "must be an array of 1 to 1000000 jobs");
  if (!(t->jobs = calloc((size_t)n, sizeof(*t->jobs))))
    return fs_err_set(c->err, FS_ENOMEM, "out of memory");
  int32_t *where = malloc((size_t)n * sizeof(*where));
  if (!where) return fs_err_set(c->err, FS_ENOMEM, "out of memory");
  int rc = 0;
  int32_t i = 0;
  for (const cJSON *o = arr->child; o && !rc; o = o->next, i++) {
    char P[64];
    fs__json_path_idx(P, sizeof(P), "$.jobs", (size_t)i);
    t->n_jobs = i + 1;
    if (!cJSON_IsObject(o)) rc = fs__json_fail(c, P, o, "must be an object");
    if (!rc) rc = parse_job_fields(p, o, i, &t->jobs[i]);
    if (!rc) rc = spec_of(p, i, &t->jobs[i]);
    where[i] = i;
  }
  if (!rc) rc = check_servers(p, where);
  free(where);
  if (!rc) fs__sched_sort(t);
  return rc;
}

/* "generate": the generator's options, checked here so that errors name
 * the JSON path; the trace it makes replaces *t's contents. */
static int parse_generate(parse_ctx *p, const cJSON *root, const cJSON *g) {
  static const char *const keys[] = {"jobs", "gpus", "seed", "load", "oversubscription", NULL};
  const fs__jctx *c = &p->c;
  const char *P = "$.generate";
  int64_t jobs, gpus, seed, over;
  double load;
  int rc;
  if (cJSON_GetObjectItemCaseSensitive(root, "cluster") ||
      cJSON_GetObjectItemCaseSensitive(root, "jobs"))
    return fs__json_fail(c, P, g, "give either \"generate\" or \"cluster\" and \"jobs\"");
  if (!cJSON_IsObject(g)) return fs__json_fail(c, P, g, "must be an object");
  if ((rc = fs__json_expect_object(c, g, P, keys)) ||
      (rc = fs__json_int(c, g, P, "jobs", 1, 0, 1, 1000000, &jobs)) ||
      (rc = fs__json_int(c, g, P, "gpus", 0, 4096, 128, 65536, &gpus)) ||
      (rc = fs__json_int(c, g, P, "seed", 0, 1, 0, FS_JSON_INT_MAX, &seed)) ||
      (rc = fs__json_num(c, g, P, "load", 0, 0.8, 1e-3, 10, &load)) ||
      (rc = fs__json_int(c, g, P, "oversubscription", 0, 2, 1, 64, &over)))
    return rc;
  if (over & (over - 1))
    return fs__json_fail(c, "$.generate.oversubscription",
                         cJSON_GetObjectItemCaseSensitive(g, "oversubscription"),
                         "must be 1, 2, 4, 8, 16, 32 or 64");
  if (gpus % 64)
    return fs__json_fail(c, "$.generate.gpus", cJSON_GetObjectItemCaseSensitive(g, "gpus"),
                         "must be a multiple of 64 (a ToR of 8 8-GPU servers)");
  fs_sched_gen_opts o = {(int32_t)jobs, gpus, (uint64_t)seed, load, (int32_t)over};
  fs_sched_trace *gt = NULL;
  if ((rc = fs_sched_generate(&o, &gt, c->err))) return rc;
  fs_sched_trace *t = p->t;
  /* take the generated trace's contents; keep this file's name and
   * description */
  char *desc = t->description ? t->description : gt->description;
  if (t->description) free(gt->description);
  char file[sizeof(t->file)];
  memcpy(file, t->file, sizeof(file));
  fs_sched_kind k = t->scheduler;
  fs_sched_contention cm = t->contention;
  *t = *gt;
  memcpy(t->file, file, sizeof(file));
  t->description = desc;
  t->scheduler = k;
  t->contention = cm;
  free(gt);
  return 0;
}

int fs_sched_trace_parse(const char *text, size_t len, const char *file, fs_sched_trace **out,
                         fs_err *err) {
  fs_sched_trace *t = calloc(1, sizeof(*t));
  if (!t) return fs_err_set(err, FS_ENOMEM, "out of memory");
  snprintf(t->file, sizeof(t->file), "%s", file ? file : "trace");
  parse_ctx p = {{t->file, err}, NULL, t, {0}, NULL, 0, 0};
  fs__strmap_init(&p.specs);
  cJSON *root = NULL;
  static const char *const keys[] = {"description", "scheduler", "contention", "cluster", "jobs",
                                     "generate", NULL};
  const char *desc = NULL, *sched = NULL, *cont = NULL;
  int rc = fs__json_parse(&p.c, text, len, &root);
  if (!rc && !cJSON_IsObject(root)) rc = fs__json_fail(&p.c, "$", root, "must be an object");
  if (!rc) rc = fs__json_expect_object(&p.c, root, "$", keys);
  if (!rc) rc = fs__json_str(&p.c, root, "$", "description", 0, NULL, &desc);
  if (!rc && desc && !(t->description = strdup(desc)))
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
  if (!rc) rc = fs__json_str(&p.c, root, "$", "scheduler", 0, "fifo", &sched);
  if (!rc && fs_sched_kind_parse(sched, &t->scheduler))
    rc = fs__json_fail(&p.c, "$.scheduler", cJSON_GetObjectItemCaseSensitive(root, "scheduler"),
                       "must be fifo, sjf, oblivious, yu-bco, liu-ocs, random, ls, liu-sjf or liu-fifo");
  if (!rc) rc = fs__json_str(&p.c, root, "$", "contention", 0, "aligned", &cont);
  if (!rc && fs_sched_contention_parse(cont, &t->contention))
    rc = fs__json_fail(&p.c, "$.contention", cJSON_GetObjectItemCaseSensitive(root, "contention"),
                       "must be aligned or average");
  const cJSON *gen = root ? cJSON_GetObjectItemCaseSensitive(root, "generate") : NULL;
  if (!rc && gen) {
    rc = parse_generate(&p, root, gen);
  } else {
    if (!rc) rc = parse_cluster(&p, root);
    if (!rc) rc = parse_jobs(&p, root);
  }
  for (int32_t i = 0; i < p.n_keys; i++) free(p.keys[i]);
  free(p.keys);
  fs__strmap_free(&p.specs);
  cJSON_Delete(root);
  if (rc) {
    fs_sched_trace_free(t);
    return rc;
  }
  *out = t;
  return 0;
}

int fs_sched_trace_load(const char *path, fs_sched_trace **out, fs_err *err) {
  char *text;
  size_t len;
  int rc = fs__read_file(path, &text, &len, err);
  if (rc) return rc;
  rc = fs_sched_trace_parse(text, len, path, out, err);
  free(text);
  return rc;
}
