/* The sections of job and scenario files that ask for routing control
 * (netctl.h): "routing" and "failures", one strict reader each, so both
 * formats accept the same entries and give the same messages; only their
 * time keys differ (job files in ms and us, scenario files in whole ns).
 * Failures: one pass over the entries; a switch costs its degree. The link
 * buffer is sized by the topology's largest out-degree, so no switch's
 * cables are cut short. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "../base/json.h"
#include "fabricsim/netctl.h"
#include "fabricsim/ocsctl.h"

/* A time of key k under obj (path), in k's unit: an integer or a number in
 * [min, max], k->def when absent and not required. */
static int time_value(const fs__jctx *c, const cJSON *obj, const char *path,
                      const fs_netctl_time_key *k, int required, double *out) {
  if (!k->integer) return fs__json_num(c, obj, path, k->key, required, k->def, k->min, k->max, out);
  int64_t v;
  int rc = fs__json_int(c, obj, path, k->key, required, (int64_t)k->def, (int64_t)k->min,
                        (int64_t)k->max, &v);
  if (!rc) *out = (double)v;
  return rc;
}

static int read_failures(const fs__jctx *c, const cJSON *root, const fs_topo *t,
                    const fs_netctl_time_key *at, fs_netctl_failure **failures, int32_t *n) {
  const char *keys[] = {at->key, "cable", "switch", NULL};
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "failures");
  if (!arr) return 0;
  if (!cJSON_IsArray(arr)) return fs__json_fail(c, "$.failures", arr, "must be an array");
  int32_t max_deg = 1;
  for (int32_t v = 0; v < t->n_nodes; v++)
    if (t->out_start[v + 1] - t->out_start[v] > max_deg)
      max_deg = t->out_start[v + 1] - t->out_start[v];
  int32_t *links = fs__malloc((size_t)max_deg, sizeof(int32_t));
  if (!links) return fs_err_set(c->err, FS_ENOMEM, "%s: out of memory", c->file);
  int rc = 0;
  char path[64];
  size_t i = 0, cap = (size_t)*n;
  for (const cJSON *e = arr->child; e && !rc; e = e->next, i++) {
    fs__json_path_idx(path, sizeof(path), "$.failures", i);
    double at_v;
    const char *cable, *sw;
    if ((rc = fs__json_expect_object(c, e, path, keys))) break;
    rc = time_value(c, e, path, at, 1, &at_v);
    if (rc || (rc = fs__json_str(c, e, path, "cable", 0, NULL, &cable)) ||
        (rc = fs__json_str(c, e, path, "switch", 0, NULL, &sw)))
      break;
    if (!cable == !sw) {
      rc = fs__json_fail(c, path, e, "needs exactly one of \"cable\" and \"switch\"");
      break;
    }
    const char *key = cable ? "cable" : "switch";
    fs_err inner = {0, ""};
    int32_t got = fs_netctl_parse_target(t, cable ? cable : sw, links, max_deg, &inner);
    if (got < 0) {
      char p2[80];
      snprintf(p2, sizeof(p2), "%s.%s", path, key);
      rc = fs__json_fail(c, p2, cJSON_GetObjectItemCaseSensitive(e, key), "%s", inner.msg);
      break;
    }
    if (fs__grow(failures, &cap, (size_t)*n + (size_t)got, sizeof(**failures))) {
      rc = fs_err_set(c->err, FS_ENOMEM, "%s: out of memory", c->file);
      break;
    }
    for (int32_t k = 0; k < got; k++)
      (*failures)[(*n)++] = (fs_netctl_failure){at_v * at->unit_s, links[k]};
  }
  free(links);
  return rc;
}

int fs_netctl_failures_from_json(const struct cJSON *root, const char *file, const fs_topo *t,
                                 const fs_netctl_time_key *at, fs_netctl_failure **failures,
                                 int32_t *n, fs_err *err) {
  fs__jctx c = {file, err};
  return read_failures(&c, root, t, at, failures, n);
}

int fs_netctl_base_mode_ok(fs_route_mode m) {
  return m == FS_ROUTE_ECMP || m == FS_ROUTE_SHORTEST || m == FS_ROUTE_SPRAY;
}

/* The modes the format takes, for the message of a bad one. */
static int mode_fail(const fs__jctx *c, const cJSON *v, int known, int allow_explicit) {
  return fs__json_fail(c, "$.routing.mode", v,
                       "%s (expected shortest, ecmp, spray, %soptimized, dor, minimal, valiant, "
                       "railonly or lotus)",
                       known ? "explicit routing needs flows with paths, which this file has not"
                             : "unknown routing mode",
                       allow_explicit ? "explicit, " : "");
}

int fs_netctl_routing_from_json(const struct cJSON *root, const char *file,
                                const fs_netctl_routing_format *fmt, fs_netctl_routing *out,
                                fs_err *err) {
  fs__jctx cx = {file, err}, *c = &cx;
  out->mode = FS_ROUTE_ECMP;
  out->seed = 1;
  out->optimized = 0;
  out->optimizer = FS_ROUTEOPT_GREEDY;
  out->interval = fmt->interval.def;
  out->reconfig = fmt->reconfig.def;
  out->detect = fmt->detect.def;
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "routing");
  if (!r) return 0;
  const char *keys[] = {"mode",          "seed",           "base",          fmt->interval.key,
                        "optimizer",     fmt->reconfig.key, fmt->detect.key, NULL};
  const char *P = "$.routing";
  int rc = fs__json_expect_object(c, r, P, keys);
  if (rc) return rc;
  const char *mode, *base, *opt;
  int64_t seed;
  if ((rc = fs__json_str(c, r, P, "mode", 0, "ecmp", &mode)) ||
      (rc = fs__json_int(c, r, P, "seed", 0, 1, 0, FS_JSON_INT_MAX, &seed)) ||
      (rc = fs__json_str(c, r, P, "base", 0, "ecmp", &base)) ||
      (rc = time_value(c, r, P, &fmt->interval, 0, &out->interval)) ||
      (rc = fs__json_str(c, r, P, "optimizer", 0, "greedy", &opt)) ||
      (rc = time_value(c, r, P, &fmt->reconfig, 0, &out->reconfig)) ||
      (rc = time_value(c, r, P, &fmt->detect, 0, &out->detect)))
    return rc;
  out->optimized = strcmp(mode, "optimized") == 0;
  const char *opt_only[] = {"base", fmt->interval.key, "optimizer", fmt->reconfig.key, NULL};
  for (int i = 0; !out->optimized && opt_only[i]; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, opt_only[i]);
    if (v) {
      char p[64];
      fs__json_path_key(p, sizeof(p), P, opt_only[i]);
      return fs__json_fail(c, p, v, "only applies with \"mode\": \"optimized\"");
    }
  }
  const char *mkey = out->optimized ? "base" : "mode";
  const cJSON *mval = cJSON_GetObjectItemCaseSensitive(r, mkey);
  if (out->optimized) {
    if (fs_route_mode_parse(base, &out->mode) || !fs_netctl_base_mode_ok(out->mode))
      return fs__json_fail(c, "$.routing.base", mval,
                           "must be ecmp, shortest or spray (the routing before the first "
                           "re-optimisation)");
    if (fs_routeopt_kind_parse(opt, &out->optimizer) || out->optimizer == FS_ROUTEOPT_EXACT)
      return fs__json_fail(c, "$.routing.optimizer",
                           cJSON_GetObjectItemCaseSensitive(r, "optimizer"),
                           "must be greedy, ecmp, random, spray or edgecolor (exact is too "
                           "slow to run inside a simulation)");
  } else if (fs_route_mode_parse(mode, &out->mode)) {
    return mode_fail(c, mval, 0, fmt->allow_explicit);
  } else if (out->mode == FS_ROUTE_EXPLICIT && !fmt->allow_explicit) {
    return mode_fail(c, mval, 1, 0);
  }
  fs_err inner = {0, ""};
  if (fmt->topo && fs_route_mode_check(out->mode, fmt->topo, &inner)) {
    char p[64];
    fs__json_path_key(p, sizeof(p), P, mkey);
    return fs__json_fail(c, p, mval, "%s", inner.msg);
  }
  out->seed = (uint64_t)seed;
  return 0;
}

/* root["ocs"]: the OCS layer of a job (ocsctl.h; docs/formats.md). */
int fs_ocsctl_from_json(const cJSON *root, const char *file, fs_ocsctl_opts *o, fs_err *err) {
  fs__jctx cx = {file, err}, *c = &cx;
  fs_ocsctl_opts_init(o);
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "ocs");
  if (!r) return 0;
  static const char *const keys[] = {"ports",       "gbps",   "latency_ns",  "technology",
                                     "reconfig_us", "policy", "interval_ms", NULL};
  const char *P = "$.ocs", *tech, *policy;
  int64_t ports, lat;
  double us, ms;
  int rc;
  if ((rc = fs__json_expect_object(c, r, P, keys)) ||
      (rc = fs__json_int(c, r, P, "ports", 1, 0, 1, 4096, &ports)) ||
      (rc = fs__json_num(c, r, P, "gbps", 0, o->gbps, 1e-3, 1e7, &o->gbps)) ||
      (rc = fs__json_int(c, r, P, "latency_ns", 0, o->latency_ns, 0, 1000000000, &lat)) ||
      (rc = fs__json_str(c, r, P, "technology", 0, NULL, &tech)) ||
      (rc = fs__json_num(c, r, P, "reconfig_us", 0, -1, 0, 1e9, &us)) ||
      (rc = fs__json_str(c, r, P, "policy", 0, "adaptive", &policy)) ||
      (rc = fs__json_num(c, r, P, "interval_ms", 0, -1, 1e-6, 1e9, &ms)))
    return rc;
  o->ports = (int32_t)ports;
  o->latency_ns = lat;
  if (tech && us >= 0)
    return fs__json_fail(c, "$.ocs.reconfig_us", cJSON_GetObjectItemCaseSensitive(r, "reconfig_us"),
                         "give either technology or reconfig_us, not both");
  if (tech && fs_ocsctl_technology(tech, &o->reconfig_s))
    return fs__json_fail(c, "$.ocs.technology", cJSON_GetObjectItemCaseSensitive(r, "technology"),
                         "must be mems, wss, sip or laser");
  if (tech) snprintf(o->technology, sizeof(o->technology), "%s", tech);
  if (us >= 0) {
    o->reconfig_s = us * 1e-6;
    o->technology[0] = 0;
  }
  if (!strcmp(policy, "static"))
    o->policy = FS_OCSCTL_STATIC;
  else if (!strcmp(policy, "adaptive"))
    o->policy = FS_OCSCTL_ADAPTIVE;
  else
    return fs__json_fail(c, "$.ocs.policy", cJSON_GetObjectItemCaseSensitive(r, "policy"),
                         "must be static or adaptive");
  if (ms >= 0 && o->policy == FS_OCSCTL_STATIC)
    return fs__json_fail(c, "$.ocs.interval_ms", cJSON_GetObjectItemCaseSensitive(r, "interval_ms"),
                         "only applies with \"policy\": \"adaptive\"");
  o->interval_s = ms >= 0 ? ms * 1e-3 : fs_ocsctl_default_interval(o->reconfig_s);
  return 0;
}
