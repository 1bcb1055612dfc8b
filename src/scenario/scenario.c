/* Scenario loading and running (see scenario.h). Parsing is strict: every
 * object's keys are checked, ids must be unique across flows and tasks, and
 * every reference is resolved before anything runs, so a bad file fails
 * with one precise message and no output. Strings (ids) live in an arena
 * that is freed with the scenario. Routing control (re-optimisation,
 * failures) is netctl's; this file reads its keys and attaches it, then
 * recounts the paths of the flows it moved (O(route size^2) per moved
 * spread flow, O(route size) per other flow). */
#include "fabricsim/scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "../base/json.h"

struct fs_scenario_mem {
  fs__arena arena;
  fs__strmap ids; /* id -> item */
};

void fs_scenario_free(fs_scenario *sc) {
  if (!sc) return;
  fs_sim_free(sc->sim);
  fs_router_free(sc->router);
  fs_topo_free(sc->topo);
  free(sc->deps);
  free(sc->failures);
  if (sc->mem) {
    fs__strmap_free(&sc->mem->ids);
    fs__arena_free(&sc->mem->arena);
    free(sc->mem);
  }
  free(sc);
}

static int oom(const fs__jctx *c) {
  return fs_err_set(c->err, FS_ENOMEM, "%s: out of memory", c->file);
}

/* "routing": netctl's reader, in the scenario's unit (whole nanoseconds). */
static int parse_routing(const fs__jctx *c, fs_scenario *sc, const cJSON *root) {
  const fs_netctl_routing_format fmt = {
      {"interval_ns", 1e-9, 1, 1, (double)FS_JSON_INT_MAX, 1000000}, /* 1 ms, as job files */
      {"reconfig_ns", 1e-9, 1, 0, (double)FS_JSON_INT_MAX, 0},
      {"detect_ns", 1e-9, 1, 0, (double)FS_JSON_INT_MAX, 0},
      1,
      sc->topo};
  fs_netctl_routing r;
  int rc = fs_netctl_routing_from_json(root, c->file, &fmt, &r, c->err);
  if (rc) return rc;
  sc->mode = r.mode;
  sc->seed = r.seed;
  sc->optimized = r.optimized;
  sc->optimizer = r.optimizer;
  sc->interval_ns = (int64_t)r.interval;
  sc->reconfig_ns = (int64_t)r.reconfig;
  sc->detect_ns = (int64_t)r.detect;
  return 0;
}

/* Registers an id (given or defaulted) for item `item`. */
static int register_id(const fs__jctx *c, fs_scenario *sc, const cJSON *obj,
                       const char *path, const char *prefix, int32_t index,
                       int32_t item, const char **out) {
  const char *id;
  int rc = fs__json_str(c, obj, path, "id", 0, NULL, &id);
  if (rc) return rc;
  char buf[32];
  if (!id) {
    snprintf(buf, sizeof(buf), "%s%d", prefix, index);
    id = buf;
  } else if (!*id) {
    char p[512];
    fs__json_path_key(p, sizeof(p), path, "id");
    return fs__json_fail(c, p, cJSON_GetObjectItemCaseSensitive(obj, "id"),
                         "must not be empty");
  }
  char *copy = fs__arena_strdup(&sc->mem->arena, id);
  if (!copy) return oom(c);
  int32_t old;
  rc = fs__strmap_put(&sc->mem->ids, copy, item, &old);
  if (rc < 0) return oom(c);
  if (rc == 1) {
    char p[512];
    fs__json_path_key(p, sizeof(p), path, "id");
    char esc[128];
    return fs_err_set(c->err, FS_EINVAL, "%s: %s: duplicate id \"%s\"%s (already used by %s[%d])",
                      c->file, p, fs__escape(esc, sizeof(esc), id),
                      id == buf ? ", the default id of an item without one," : "",
                      old < sc->n_flows ? "$.flows" : "$.tasks",
                      old < sc->n_flows ? old : old - sc->n_flows);
  }
  *out = copy;
  return 0;
}

static int parse_host(const fs__jctx *c, const fs_scenario *sc, const cJSON *obj,
                      const char *path, const char *key, int32_t *out) {
  int64_t v;
  int rc = fs__json_int(c, obj, path, key, 1, 0, 0, sc->topo->n_hosts - 1, &v);
  *out = (int32_t)v;
  return rc;
}

static int parse_path(const fs__jctx *c, fs_scenario *sc, const cJSON *obj,
                      const char *path, fs_scenario_flow *f) {
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(obj, "path");
  if (!p) return 0;
  char pp[512];
  fs__json_path_key(pp, sizeof(pp), path, "path");
  int n = cJSON_GetArraySize(p);
  if (!cJSON_IsArray(p) || n < 2)
    return fs__json_fail(c, pp, p, "must be an array of at least two node ids");
  f->path = fs__arena_alloc(&sc->mem->arena, (size_t)n, sizeof(int32_t));
  if (!f->path) return oom(c);
  int i = 0;
  for (const cJSON *v = p->child; v; v = v->next, i++) {
    char ip[540];
    int64_t node;
    fs__json_path_idx(ip, sizeof(ip), pp, (size_t)i);
    int rc = fs__json_int_value(c, v, ip, 0, sc->topo->n_nodes - 1, &node);
    if (rc) return rc;
    f->path[i] = (int32_t)node;
  }
  f->path_len = n;
  if (f->path[0] != f->src || f->path[n - 1] != f->dst)
    return fs__json_fail(c, pp, p, "must start at src (%d) and end at dst (%d)", f->src,
                         f->dst);
  fs_route r;
  fs_route_init(&r);
  fs_err inner = {0, ""};
  int rc = fs_route_explicit(sc->router, f->path, n, &r, &inner);
  fs_route_free(&r);
  if (rc) return fs_err_set(c->err, rc, "%s: %s: %s", c->file, pp, inner.msg);
  return 0;
}

static int parse_flow(const fs__jctx *c, fs_scenario *sc, const cJSON *obj,
                      const char *path, int32_t i) {
  static const char *const keys[] = {"id", "src", "dst", "bytes", "start_ns",
                                     "after", "path", NULL};
  fs_scenario_flow *f = &sc->flows[i];
  int64_t bytes;
  int rc;
  if ((rc = fs__json_expect_object(c, obj, path, keys)) ||
      (rc = register_id(c, sc, obj, path, "flow", i, i, &f->id)) ||
      (rc = parse_host(c, sc, obj, path, "src", &f->src)) ||
      (rc = parse_host(c, sc, obj, path, "dst", &f->dst)) ||
      (rc = fs__json_int(c, obj, path, "bytes", 1, 0, 0, FS_JSON_INT_MAX, &bytes)) ||
      (rc = fs__json_int(c, obj, path, "start_ns", 0, 0, 0, FS_JSON_INT_MAX, &f->start_ns)))
    return rc;
  if (f->src == f->dst) {
    char p[512];
    fs__json_path_key(p, sizeof(p), path, "dst");
    return fs__json_fail(c, p, cJSON_GetObjectItemCaseSensitive(obj, "dst"),
                         "must differ from src (a flow crosses the network)");
  }
  f->bytes = (double)bytes;
  f->n_paths = 1;
  return parse_path(c, sc, obj, path, f);
}

static int parse_task(const fs__jctx *c, fs_scenario *sc, const cJSON *obj,
                      const char *path, int32_t j) {
  static const char *const keys[] = {"id", "host", "duration_ns", "start_ns", "after", NULL};
  fs_scenario_task *t = &sc->tasks[j];
  int rc;
  if ((rc = fs__json_expect_object(c, obj, path, keys)) ||
      (rc = register_id(c, sc, obj, path, "task", j, sc->n_flows + j, &t->id)) ||
      (rc = parse_host(c, sc, obj, path, "host", &t->host)) ||
      (rc = fs__json_int(c, obj, path, "duration_ns", 1, 0, 0, FS_JSON_INT_MAX,
                         &t->duration_ns)) ||
      (rc = fs__json_int(c, obj, path, "start_ns", 0, 0, 0, FS_JSON_INT_MAX, &t->start_ns)))
    return rc;
  return 0;
}

/* Resolves "after" of one item once all ids are known. */
static int parse_after(const fs__jctx *c, fs_scenario *sc, const cJSON *obj,
                       const char *path, int32_t item, size_t *deps_cap) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, "after");
  if (!a) return 0;
  char ap[512];
  fs__json_path_key(ap, sizeof(ap), path, "after");
  if (!cJSON_IsArray(a)) return fs__json_fail(c, ap, a, "must be an array of ids");
  size_t i = 0;
  for (const cJSON *v = a->child; v; v = v->next, i++) {
    char ip[540];
    fs__json_path_idx(ip, sizeof(ip), ap, i);
    if (!cJSON_IsString(v)) return fs__json_fail(c, ip, v, "must be an id string");
    int32_t before = fs__strmap_get(&sc->mem->ids, v->valuestring);
    if (before < 0) return fs__json_fail(c, ip, v, "unknown id");
    if (before == item) return fs__json_fail(c, ip, v, "an item cannot wait for itself");
    for (const cJSON *w = a->child; w != v; w = w->next)
      if (strcmp(w->valuestring, v->valuestring) == 0)
        return fs__json_fail(c, ip, v, "duplicate id in after");
    if (fs__grow(&sc->deps, deps_cap, (size_t)sc->n_deps + 1, sizeof(*sc->deps)))
      return oom(c);
    sc->deps[sc->n_deps][0] = before;
    sc->deps[sc->n_deps][1] = item;
    sc->n_deps++;
  }
  return 0;
}

static int parse_items(const fs__jctx *c, fs_scenario *sc, const cJSON *root) {
  const cJSON *flows = cJSON_GetObjectItemCaseSensitive(root, "flows");
  const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(root, "tasks");
  if (!flows) return fs__json_fail(c, "$.flows", NULL, "required array is missing");
  if (!cJSON_IsArray(flows)) return fs__json_fail(c, "$.flows", flows, "must be an array");
  if (tasks && !cJSON_IsArray(tasks))
    return fs__json_fail(c, "$.tasks", tasks, "must be an array");
  int nf = cJSON_GetArraySize(flows), nt = tasks ? cJSON_GetArraySize(tasks) : 0;
  sc->flows = fs__arena_alloc(&sc->mem->arena, (size_t)nf, sizeof(*sc->flows));
  sc->tasks = fs__arena_alloc(&sc->mem->arena, (size_t)nt, sizeof(*sc->tasks));
  if (!sc->flows || !sc->tasks) return oom(c);
  sc->n_flows = nf;
  sc->n_tasks = nt;
  char p[512];
  int rc;
  int32_t i = 0;
  for (const cJSON *f = flows->child; f; f = f->next, i++) {
    fs__json_path_idx(p, sizeof(p), "$.flows", (size_t)i);
    if ((rc = parse_flow(c, sc, f, p, i))) return rc;
  }
  i = 0;
  for (const cJSON *t = tasks ? tasks->child : NULL; t; t = t->next, i++) {
    fs__json_path_idx(p, sizeof(p), "$.tasks", (size_t)i);
    if ((rc = parse_task(c, sc, t, p, i))) return rc;
  }
  size_t cap = 0;
  i = 0;
  for (const cJSON *f = flows->child; f; f = f->next, i++) {
    fs__json_path_idx(p, sizeof(p), "$.flows", (size_t)i);
    if ((rc = parse_after(c, sc, f, p, i, &cap))) return rc;
  }
  i = 0;
  for (const cJSON *t = tasks ? tasks->child : NULL; t; t = t->next, i++) {
    fs__json_path_idx(p, sizeof(p), "$.tasks", (size_t)i);
    if ((rc = parse_after(c, sc, t, p, nf + i, &cap))) return rc;
  }
  return 0;
}

int fs_scenario_parse(const char *text, size_t len, const char *file,
                      fs_scenario **out, fs_err *err) {
  fs__jctx c = {file, err};
  cJSON *root = NULL;
  int rc = fs__json_parse(&c, text, len, &root);
  if (rc) return rc;
  fs_scenario *sc = calloc(1, sizeof(*sc));
  if (!sc || !(sc->mem = calloc(1, sizeof(*sc->mem)))) {
    free(sc);
    cJSON_Delete(root);
    return oom(&c);
  }
  snprintf(sc->file, sizeof(sc->file), "%s", file);
  fs__arena_init(&sc->mem->arena);
  fs__strmap_init(&sc->mem->ids);
  static const char *const keys[] = {"topology",    "routing",  "flows",     "tasks",
                                     "description", "failures", "transport", NULL};
  /* Failure times are whole nanoseconds, like every scenario time. */
  static const fs_netctl_time_key at = {"at_ns", 1e-9, 1, 0, (double)FS_JSON_INT_MAX, 0};
  const cJSON *topo = cJSON_GetObjectItemCaseSensitive(root, "topology");
  const char *desc;
  if ((rc = fs__json_expect_object(&c, root, "$", keys)) ||
      (rc = fs__json_str(&c, root, "$", "description", 0, NULL, &desc)))
    goto fail;
  if (!topo) {
    rc = fs__json_fail(&c, "$.topology", NULL, "required object is missing");
    goto fail;
  }
  if ((rc = fs_topo_from_json_object(topo, file, "$.topology", &sc->topo, err))) goto fail;
  if ((rc = fs_router_new(sc->topo, &sc->router, err))) goto fail;
  if ((rc = parse_routing(&c, sc, root))) goto fail;
  if ((rc = fs_transport_from_json(root, file, &sc->transport, err))) goto fail;
  if ((rc = fs_netctl_failures_from_json(root, file, sc->topo, &at, &sc->failures,
                                         &sc->n_failures, err)))
    goto fail;
  if ((rc = parse_items(&c, sc, root))) goto fail;
  if (sc->mode == FS_ROUTE_EXPLICIT)
    for (int32_t i = 0; i < sc->n_flows; i++)
      if (!sc->flows[i].path) {
        char p[64];
        snprintf(p, sizeof(p), "$.flows[%d].path", i);
        rc = fs__json_fail(&c, p, NULL, "required when routing mode is explicit");
        goto fail;
      }
  cJSON_Delete(root);
  *out = sc;
  return 0;
fail:
  cJSON_Delete(root);
  fs_scenario_free(sc);
  return rc;
}

int fs_scenario_load(const char *path, fs_scenario **out, fs_err *err) {
  char *text;
  size_t len;
  int rc = fs__read_file(path, &text, &len, err);
  if (rc) return rc;
  rc = fs_scenario_parse(text, len, path, out, err);
  free(text);
  return rc;
}

static const char *item_id(const fs_scenario *sc, int32_t item) {
  return item < sc->n_flows ? sc->flows[item].id : sc->tasks[item - sc->n_flows].id;
}

static int cycle_error(const fs_scenario *sc, fs_err *err) {
  int32_t cyc[16];
  int32_t n = fs_sim_cycle(sc->sim, cyc, 16);
  int32_t shown = n < 16 ? n : 16;
  char msg[400] = "";
  size_t used = 0;
  for (int32_t i = 0; i <= shown && used < sizeof(msg) - 40; i++) {
    int32_t it = cyc[i % shown];
    char esc[48];
    used += (size_t)snprintf(msg + used, sizeof(msg) - used, "%s%s", i ? " -> " : "",
                             fs__escape(esc, sizeof(esc), item_id(sc, it)));
  }
  if (n > shown) snprintf(msg + used, sizeof(msg) - used, " ...");
  int32_t first = cyc[shown > 1 ? 1 : 0]; /* waits for the one before it */
  return fs_err_set(err, FS_ECYCLE, "%s: $.%s[%d].after: dependency cycle: %s", sc->file,
                    first < sc->n_flows ? "flows" : "tasks",
                    first < sc->n_flows ? first : first - sc->n_flows, msg);
}

int fs_scenario_set_routing(fs_scenario *sc, const char *name, fs_err *err) {
  if (strcmp(name, "optimized") == 0) {
    if (!sc->optimized && !fs_netctl_base_mode_ok(sc->mode)) sc->mode = FS_ROUTE_ECMP;
    sc->optimized = 1;
    return 0;
  }
  fs_route_mode m;
  if (fs_route_mode_parse(name, &m))
    return fs_err_set(err, FS_EINVAL,
                      "unknown routing mode '%s' (expected shortest, ecmp, spray, explicit, "
                      "optimized, dor, minimal, valiant, railonly or lotus)",
                      name);
  int rc = fs_route_mode_check(m, sc->topo, err);
  if (rc) return rc;
  sc->mode = m;
  sc->optimized = 0;
  return 0;
}

int fs_scenario_has_control(const fs_scenario *sc) {
  return sc->optimized || sc->n_failures > 0;
}

/* FNV-1a over a route's links and weights: tells whether the controller
 * changed it (a 64-bit collision would hide one move in ~10^19). */
static uint64_t route_hash(const int32_t *links, const double *w, int32_t n) {
  uint64_t h = 1469598103934665603ull;
  for (int32_t k = 0; k < n; k++) {
    uint64_t bits;
    memcpy(&bits, &w[k], sizeof(bits));
    uint64_t v[2] = {(uint64_t)(uint32_t)links[k], bits};
    for (int j = 0; j < 2; j++)
      for (int b = 0; b < 64; b += 8) h = (h ^ ((v[j] >> b) & 0xff)) * 1099511628211ull;
  }
  return h;
}

static uint64_t flow_route_hash(const fs_sim *s, int32_t item) {
  const int32_t *links;
  const double *w;
  int32_t n;
  fs_sim_flow_route(s, item, &links, &w, &n);
  return route_hash(links, w, n);
}

/* Paths from src reaching link k of a route (the links of a spread route
 * form a DAG of shortest or candidate paths); memo[k] < 0 until known. */
static double paths_to(const fs_topo *t, const int32_t *links, int32_t n, int32_t src,
                       int32_t k, double *memo) {
  if (memo[k] >= 0) return memo[k];
  memo[k] = 0; /* a cycle, which a route should not have, adds nothing */
  int32_t from = t->links[links[k]].from;
  double p = from == src ? 1 : 0;
  for (int32_t j = 0; j < n; j++)
    if (t->links[links[j]].to == from) p += paths_to(t, links, n, src, j, memo);
  return memo[k] = p;
}

/* After a run with a controller: marks the flows it moved and recounts the
 * paths of their final routes. */
static int recount_moved(fs_scenario *sc, const uint64_t *first_hash, fs_err *err) {
  double *memo = NULL;
  size_t cap = 0;
  for (int32_t i = 0; i < sc->n_flows; i++) {
    fs_scenario_flow *f = &sc->flows[i];
    const int32_t *links;
    const double *w;
    int32_t n;
    fs_sim_flow_route(sc->sim, i, &links, &w, &n);
    f->moved = route_hash(links, w, n) != first_hash[i];
    if (!f->moved) continue;
    int single = 1;
    for (int32_t k = 0; k < n && single; k++) single = w[k] == 1.0;
    if (single) {
      f->n_paths = 1;
      continue;
    }
    if (fs__grow(&memo, &cap, (size_t)n, sizeof(double))) {
      free(memo);
      return fs_err_set(err, FS_ENOMEM, "%s: out of memory counting paths", sc->file);
    }
    for (int32_t k = 0; k < n; k++) memo[k] = -1;
    double np = 0;
    for (int32_t k = 0; k < n; k++)
      if (sc->topo->links[links[k]].to == f->dst)
        np += paths_to(sc->topo, links, n, f->src, k, memo);
    f->n_paths = np;
  }
  free(memo);
  return 0;
}

int fs_scenario_run(fs_scenario *sc, const fs_sim_opts *opts, fs_err *err) {
  fs_sim_free(sc->sim);
  sc->sim = NULL;
  int rc = fs_sim_new(sc->topo, &sc->sim, err);
  if (!rc) rc = fs_sim_set_transport(sc->sim, &sc->transport, err);
  if (rc) return rc;
  fs_route route;
  fs_route_init(&route);
  for (int32_t i = 0; i < sc->n_flows && !rc; i++) {
    fs_scenario_flow *f = &sc->flows[i];
    fs_err inner = {0, ""};
    if (f->path)
      rc = fs_route_explicit(sc->router, f->path, f->path_len, &route, &inner);
    else if (sc->mode == FS_ROUTE_EXPLICIT)
      rc = fs_err_set(&inner, FS_EINVAL, "required when routing mode is explicit");
    else
      rc = fs_route_by_mode(sc->router, sc->mode, f->src, f->dst, sc->seed,
                            fs__hash_str(f->id), &route, &inner);
    if (rc) {
      rc = fs_err_set(err, rc, "%s: $.flows[%d]%s: %s", sc->file, i,
                      f->path || sc->mode == FS_ROUTE_EXPLICIT ? ".path" : "", inner.msg);
      break;
    }
    f->n_paths = route.n_paths;
    f->moved = 0;
    int32_t id = fs_sim_add_flow(sc->sim, f->src, f->dst, f->bytes, f->start_ns, &route, err);
    if (id < 0) rc = id;
  }
  fs_route_free(&route);
  for (int32_t j = 0; j < sc->n_tasks && !rc; j++) {
    const fs_scenario_task *t = &sc->tasks[j];
    int32_t id = fs_sim_add_task(sc->sim, t->host, t->start_ns, t->duration_ns, err);
    if (id < 0) rc = id;
  }
  for (int32_t d = 0; d < sc->n_deps && !rc; d++)
    rc = fs_sim_add_dep(sc->sim, sc->deps[d][0], sc->deps[d][1], err);
  if (rc) return rc;
  sc->controlled = fs_scenario_has_control(sc);
  memset(&sc->control, 0, sizeof(sc->control));
  if (!sc->controlled) {
    rc = fs_sim_run(sc->sim, opts, err);
    return rc == FS_ECYCLE ? cycle_error(sc, err) : rc;
  }
  fs_netctl_opts co;
  fs_netctl_opts_init(&co);
  co.mode = sc->mode;
  co.seed = sc->seed;
  co.interval_s = sc->optimized ? (double)sc->interval_ns * 1e-9 : 0;
  co.optimizer = sc->optimizer;
  co.reconfig_s = (double)sc->reconfig_ns * 1e-9;
  co.failures = sc->failures;
  co.n_failures = sc->n_failures;
  co.detect_s = (double)sc->detect_ns * 1e-9;
  fs_netctl *ctl = NULL;
  uint64_t *first_hash = fs__malloc((size_t)sc->n_flows + 1, sizeof(uint64_t));
  /* Items are flows first: a flow with an explicit path is pinned. */
  uint8_t *pinned = calloc((size_t)sc->n_flows + (size_t)sc->n_tasks + 1, 1);
  if (!first_hash || !pinned) {
    free(first_hash);
    free(pinned);
    return fs_err_set(err, FS_ENOMEM, "%s: out of memory", sc->file);
  }
  for (int32_t i = 0; i < sc->n_flows; i++) pinned[i] = sc->flows[i].path != NULL;
  co.pinned = pinned;
  for (int32_t i = 0; i < sc->n_flows; i++) first_hash[i] = flow_route_hash(sc->sim, i);
  if ((rc = fs_netctl_new(sc->sim, &co, &ctl, err))) {
    fs_err e = *err;
    fs_err_set(err, rc, "%s: routing control: %s", sc->file, e.msg);
  } else if ((rc = fs_sim_run(sc->sim, opts, err))) {
    if (rc == FS_ECYCLE) {
      rc = cycle_error(sc, err);
    } else if (rc != FS_ENOMEM) {
      fs_err e = *err;
      fs_err_set(err, rc, "%s: routing control: %s", sc->file, e.msg);
    }
  } else {
    fs_netctl_stats_get(ctl, &sc->control);
    rc = recount_moved(sc, first_hash, err);
  }
  fs_netctl_free(ctl);
  free(first_hash);
  free(pinned);
  return rc;
}
