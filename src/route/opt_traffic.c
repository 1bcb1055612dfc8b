/* The routing optimiser's traffic model: jobs of phases of flows, built
 * from ring collectives or given flows, and the jobs file that places them
 * on a topology (docs/model-route.md). Arrays grow by doubling; a jobs file
 * of J jobs of p ranks costs O(J p) to read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "../base/json.h"
#include "opt_internal.h"

void fs_routeopt_traffic_init(fs_routeopt_traffic *tr) { memset(tr, 0, sizeof(*tr)); }

void fs_routeopt_traffic_free(fs_routeopt_traffic *tr) {
  FS__FREE_ALL(tr->jobs, tr->phases, tr->flows, tr->rank_hosts);
  memset(tr, 0, sizeof(*tr));
}

/* Room for one more job, phase, n flows and p ranks; nothing is appended. */
static int reserve(fs_routeopt_traffic *tr, int32_t n, int32_t p) {
  if (fs__grow(&tr->jobs, &tr->cap_jobs, (size_t)tr->n_jobs + 1, sizeof(fs_routeopt_job)) ||
      fs__grow(&tr->phases, &tr->cap_phases, (size_t)tr->n_phases + 1, sizeof(fs_routeopt_phase)) ||
      fs__grow(&tr->flows, &tr->cap_flows, (size_t)tr->n_flows + (size_t)n,
               sizeof(fs_routeopt_flow)) ||
      fs__grow(&tr->rank_hosts, &tr->cap_ranks, (size_t)tr->n_rank_hosts + (size_t)p,
               sizeof(int32_t)))
    return FS_ENOMEM;
  return 0;
}

static void push_job(fs_routeopt_traffic *tr, const char *name, const char *coll,
                     const int32_t *hosts, int32_t p, double bytes, int32_t repeat) {
  fs_routeopt_job *j = &tr->jobs[tr->n_jobs];
  memset(j, 0, sizeof(*j));
  snprintf(j->name, sizeof(j->name), "%s", name);
  snprintf(j->collective, sizeof(j->collective), "%s", coll);
  j->first_phase = tr->n_phases;
  j->n_phases = 1;
  j->first_rank = tr->n_rank_hosts;
  j->n_ranks = p;
  j->bytes = bytes;
  if (p > 0) memcpy(tr->rank_hosts + tr->n_rank_hosts, hosts, (size_t)p * sizeof(int32_t));
  tr->n_rank_hosts += p;
  fs_routeopt_phase *ph = &tr->phases[tr->n_phases];
  ph->job = tr->n_jobs;
  ph->first_flow = tr->n_flows;
  ph->n_flows = 0;
  ph->repeat = repeat;
  tr->n_jobs++;
  tr->n_phases++;
}

int fs_routeopt_traffic_add_ring(fs_routeopt_traffic *tr, const char *name, const char *collective,
                                 const int32_t *hosts, int32_t p, double bytes, fs_err *err) {
  int32_t repeat;
  if (strcmp(collective, "allreduce") == 0)
    repeat = 2 * (p - 1);
  else if (strcmp(collective, "allgather") == 0 || strcmp(collective, "reducescatter") == 0)
    repeat = p - 1;
  else
    return fs_err_set(err, FS_EINVAL,
                      "job %s: collective '%s' (expected allreduce, allgather, reducescatter)",
                      name, collective);
  if (p < 2)
    return fs_err_set(err, FS_EINVAL, "job %s: a ring needs 2 or more ranks, got %d", name, p);
  if (!(bytes > 0)) return fs_err_set(err, FS_EINVAL, "job %s: bytes must be > 0", name);
  for (int32_t i = 0; i < p; i++)
    for (int32_t k = 0; k < i; k++)
      if (hosts[i] == hosts[k])
        return fs_err_set(err, FS_EINVAL, "job %s: ranks %d and %d are both on host %d", name, k,
                          i, hosts[i]);
  if (reserve(tr, p, p)) return fs_err_set(err, FS_ENOMEM, "out of memory");
  push_job(tr, name, collective, hosts, p, bytes, repeat);
  fs_routeopt_phase *ph = &tr->phases[tr->n_phases - 1];
  for (int32_t r = 0; r < p; r++) {
    fs_routeopt_flow *f = &tr->flows[tr->n_flows++];
    f->src = hosts[r];
    f->dst = hosts[(r + 1) % p];
    f->bytes = bytes / p;
    f->phase = tr->n_phases - 1;
    ph->n_flows++;
  }
  return 0;
}

int fs_routeopt_traffic_add_phase_job(fs_routeopt_traffic *tr, const char *name,
                                      const fs_routeopt_flow *flows, int32_t n, int32_t repeat,
                                      fs_err *err) {
  if (n < 1 || repeat < 1)
    return fs_err_set(err, FS_EINVAL, "job %s: needs >= 1 flow and repeat >= 1", name);
  double total = 0;
  for (int32_t i = 0; i < n; i++) {
    if (flows[i].src == flows[i].dst || !(flows[i].bytes >= 0))
      return fs_err_set(err, FS_EINVAL, "job %s: flow %d: src == dst or bytes < 0", name, i);
    total += flows[i].bytes;
  }
  if (reserve(tr, n, 0)) return fs_err_set(err, FS_ENOMEM, "out of memory");
  push_job(tr, name, "custom", NULL, 0, total, repeat);
  fs_routeopt_phase *ph = &tr->phases[tr->n_phases - 1];
  for (int32_t i = 0; i < n; i++) {
    fs_routeopt_flow *f = &tr->flows[tr->n_flows++];
    *f = flows[i];
    f->phase = tr->n_phases - 1;
    ph->n_flows++;
  }
  return 0;
}

int fs_routeopt_traffic_add_phase(fs_routeopt_traffic *tr, const fs_routeopt_flow *flows,
                                  int32_t n, int32_t repeat, fs_err *err) {
  if (tr->n_jobs == 0 || strcmp(tr->jobs[tr->n_jobs - 1].collective, "custom") != 0)
    return fs_err_set(err, FS_EINVAL, "a phase can only be added to a job of explicit flows");
  fs_routeopt_job *j = &tr->jobs[tr->n_jobs - 1];
  if (n < 1 || repeat < 1)
    return fs_err_set(err, FS_EINVAL, "job %s: needs >= 1 flow and repeat >= 1", j->name);
  double total = 0;
  for (int32_t i = 0; i < n; i++) {
    if (flows[i].src == flows[i].dst || !(flows[i].bytes >= 0))
      return fs_err_set(err, FS_EINVAL, "job %s: flow %d: src == dst or bytes < 0", j->name, i);
    total += flows[i].bytes;
  }
  /* phases of a job are consecutive: its job is the last, so is its phase */
  if (reserve(tr, n, 0)) return fs_err_set(err, FS_ENOMEM, "out of memory");
  j = &tr->jobs[tr->n_jobs - 1];
  fs_routeopt_phase *ph = &tr->phases[tr->n_phases];
  ph->job = tr->n_jobs - 1;
  ph->first_flow = tr->n_flows;
  ph->n_flows = n;
  ph->repeat = repeat;
  for (int32_t i = 0; i < n; i++) {
    fs_routeopt_flow *f = &tr->flows[tr->n_flows++];
    *f = flows[i];
    f->phase = tr->n_phases;
  }
  tr->n_phases++;
  j->n_phases++;
  j->bytes += total;
  return 0;
}

/* ---- jobs file ------------------------------------------------------------ */

/* Picks p free hosts by policy into out and marks them used; -1 if fewer
 * than p are free. */
static int place(const fs_topo *t, const char *policy, int32_t p, uint64_t seed, uint8_t *used,
                 int32_t *out) {
  int32_t n = t->n_hosts, nfree = 0;
  int32_t *pool = fs__malloc((size_t)(n > 0 ? n : 1), sizeof(*pool));
  if (!pool) return FS_ENOMEM;
  int32_t g = t->gpus_per_node > 1 ? t->gpus_per_node : 1;
  if (strcmp(policy, "rail") == 0) {
    /* rail-major: GPU index within the server first, so a job's ranks share
     * a rail (their NICs sit on one rail switch) as long as it can */
    for (int32_t r = 0; r < g; r++)
      for (int32_t h = r; h < n; h += g)
        if (!used[h]) pool[nfree++] = h;
  } else {
    for (int32_t h = 0; h < n; h++)
      if (!used[h]) pool[nfree++] = h;
  }
  if (nfree < p) {
    free(pool);
    return -1;
  }
  if (strcmp(policy, "random") == 0) {
    fs__rng rng;
    fs__rng_seed(&rng, seed);
    for (int32_t i = 0; i < p; i++) {
      int32_t k = i + (int32_t)fs__rng_below(&rng, (uint64_t)(nfree - i));
      int32_t x = pool[i];
      pool[i] = pool[k];
      pool[k] = x;
    }
  }
  for (int32_t i = 0; i < p; i++) {
    out[i] = pool[i];
    used[pool[i]] = 1;
  }
  free(pool);
  return 0;
}

static int parse_job(const fs__jctx *c, const cJSON *jo, const char *path, int32_t idx,
                     const fs_topo *t, uint64_t seed, uint8_t *used, fs_routeopt_traffic *tr) {
  static const char *const keys[] = {"name",       "ranks", "placement", "size",
                                     "collective", "algo",  "bytes",     NULL};
  int rc = fs__json_expect_object(c, jo, path, keys);
  if (rc) return rc;
  const char *name, *coll, *algo, *policy;
  char defname[32], sub[160];
  snprintf(defname, sizeof(defname), "job%d", idx);
  double bytes;
  int64_t size;
  if ((rc = fs__json_str(c, jo, path, "name", 0, defname, &name)) ||
      (rc = fs__json_str(c, jo, path, "collective", 0, "allreduce", &coll)) ||
      (rc = fs__json_str(c, jo, path, "algo", 0, "ring", &algo)) ||
      (rc = fs__json_str(c, jo, path, "placement", 0, "packed", &policy)) ||
      (rc = fs__json_num(c, jo, path, "bytes", 1, 0, 1, 1e18, &bytes)) ||
      (rc = fs__json_int(c, jo, path, "size", 0, 0, 2, INT32_MAX, &size)))
    return rc;
  if (strlen(name) >= sizeof(tr->jobs[0].name)) {
    fs__json_path_key(sub, sizeof(sub), path, "name");
    return fs__json_fail(c, sub, cJSON_GetObjectItemCaseSensitive(jo, "name"),
                         "must be shorter than 64 characters");
  }
  /* (the jobs' names label their rows: each once; jobs parsed so far are
   * tr->jobs[0 .. n_jobs), one per job before this one) */
  for (int32_t k = 0; k < tr->n_jobs; k++)
    if (strcmp(tr->jobs[k].name, name) == 0) {
      fs__json_path_key(sub, sizeof(sub), path, "name");
      return fs__json_fail(c, sub, cJSON_GetObjectItemCaseSensitive(jo, "name"),
                           "job names must differ: $.jobs[%d] has it too", k);
    }
  if (strcmp(coll, "allreduce") && strcmp(coll, "allgather") && strcmp(coll, "reducescatter")) {
    fs__json_path_key(sub, sizeof(sub), path, "collective");
    return fs__json_fail(c, sub, cJSON_GetObjectItemCaseSensitive(jo, "collective"),
                         "must be allreduce, allgather or reducescatter");
  }
  if (strcmp(algo, "ring")) {
    fs__json_path_key(sub, sizeof(sub), path, "algo");
    return fs__json_fail(c, sub, cJSON_GetObjectItemCaseSensitive(jo, "algo"),
                         "must be ring (the only algorithm modelled so far)");
  }
  const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(jo, "ranks");
  const cJSON *pl = cJSON_GetObjectItemCaseSensitive(jo, "placement");
  int32_t p;
  int32_t *hosts = NULL;
  if (ranks) {
    fs__json_path_key(sub, sizeof(sub), path, "ranks");
    if (pl || cJSON_GetObjectItemCaseSensitive(jo, "size"))
      return fs__json_fail(c, sub, NULL, "give either ranks or placement and size, not both");
    if (!cJSON_IsArray(ranks) || cJSON_GetArraySize(ranks) < 2)
      return fs__json_fail(c, sub, ranks, "must be an array of 2 or more host ids");
    p = cJSON_GetArraySize(ranks);
    hosts = fs__malloc((size_t)p, sizeof(*hosts));
    if (!hosts) return fs_err_set(c->err, FS_ENOMEM, "out of memory");
    int32_t i = 0;
    for (const cJSON *v = ranks->child; v; v = v->next, i++) {
      char vp[192];
      int64_t h;
      fs__json_path_idx(vp, sizeof(vp), sub, (size_t)i);
      if ((rc = fs__json_int_value(c, v, vp, 0, t->n_hosts - 1, &h))) goto out;
      if (used[h]) {
        rc = fs__json_fail(c, vp, v, "host already used by this or an earlier job");
        goto out;
      }
      used[h] = 1;
      hosts[i] = (int32_t)h;
    }
  } else {
    fs__json_path_key(sub, sizeof(sub), path, "size");
    if (!cJSON_GetObjectItemCaseSensitive(jo, "size"))
      return fs__json_fail(c, path, NULL, "needs ranks, or size (with an optional placement)");
    if (strcmp(policy, "packed") && strcmp(policy, "random") && strcmp(policy, "rail")) {
      fs__json_path_key(sub, sizeof(sub), path, "placement");
      return fs__json_fail(c, sub, pl, "must be packed, random or rail");
    }
    p = (int32_t)size;
    if (p > t->n_hosts)
      return fs__json_fail(c, sub, cJSON_GetObjectItemCaseSensitive(jo, "size"),
                           "more ranks than hosts (%d in %s)", t->n_hosts, t->spec);
    hosts = fs__malloc((size_t)p, sizeof(*hosts));
    if (!hosts) return fs_err_set(c->err, FS_ENOMEM, "out of memory");
    rc = place(t, policy, p, fs__mix64(seed ^ (uint64_t)idx), used, hosts);
    if (rc == FS_ENOMEM) {
      rc = fs_err_set(c->err, FS_ENOMEM, "out of memory");
      goto out;
    }
    if (rc) {
      rc = fs__json_fail(c, sub, cJSON_GetObjectItemCaseSensitive(jo, "size"),
                         "more ranks than free hosts (%d hosts in %s)", t->n_hosts, t->spec);
      goto out;
    }
  }
  rc = fs_routeopt_traffic_add_ring(tr, name, coll, hosts, p, bytes, c->err);
out:
  free(hosts);
  return rc;
}

int fs_routeopt_traffic_from_json(const char *text, const char *file, const fs_topo *t,
                                  fs_routeopt_traffic *tr, fs_err *err) {
  fs__jctx c = {file, err};
  cJSON *root = NULL;
  int rc = fs__json_parse(&c, text, strlen(text), &root);
  if (rc) return rc;
  static const char *const keys[] = {"jobs", "seed", NULL};
  uint8_t *used = NULL;
  int64_t seed;
  if ((rc = fs__json_expect_object(&c, root, "$", keys)) ||
      (rc = fs__json_int(&c, root, "$", "seed", 0, 1, 0, FS_JSON_INT_MAX, &seed)))
    goto out;
  const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(root, "jobs");
  if (!cJSON_IsArray(jobs) || cJSON_GetArraySize(jobs) < 1) {
    rc = fs__json_fail(&c, "$.jobs", jobs, "must be a non-empty array of jobs");
    goto out;
  }
  used = calloc((size_t)(t->n_hosts > 0 ? t->n_hosts : 1), 1);
  if (!used) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  int32_t i = 0;
  for (const cJSON *jo = jobs->child; jo; jo = jo->next, i++) {
    char path[32];
    fs__json_path_idx(path, sizeof(path), "$.jobs", (size_t)i);
    if ((rc = parse_job(&c, jo, path, i, t, (uint64_t)seed, used, tr))) goto out;
  }
out:
  free(used);
  cJSON_Delete(root);
  if (rc) fs_routeopt_traffic_free(tr);
  return rc;
}

int fs_routeopt_traffic_from_file(const char *path, const fs_topo *t, fs_routeopt_traffic *tr,
                                  fs_err *err) {
  char *text;
  size_t len;
  int rc = fs__read_file(path, &text, &len, err);
  if (rc) return rc;
  rc = fs_routeopt_traffic_from_json(text, path, t, tr, err);
  free(text);
  return rc;
}
