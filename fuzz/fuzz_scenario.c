/* libFuzzer target for the scenario, topology, training-job, routing-jobs,
 * OCS traffic and optical WAN parsers (`make fuzz`). Each input is parsed as
 * a scenario, as a topology, as a job, as a routing jobs file (on a fixed
 * fat-tree), as an OCS traffic file and as a WAN file; small scenarios and jobs that load are also simulated, so routing,
 * the collectives and the engine see odd but valid inputs too. Besides ASan/UBSan findings, it aborts when the library breaks
 * its own error contract: a failure must be an input error (or out of
 * memory) with a message naming the input. Build with -DFUZZ_ONE_LINE to
 * also require that every message is one line. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fabricsim/err.h"
#include "fabricsim/scenario.h"
#include "fabricsim/sim.h"
#include "fabricsim/topo.h"
#include "fabricsim/routeopt.h"
#include "fabricsim/ocs.h"
#include "fabricsim/train.h"
#include "fabricsim/wan.h"

/* Simulating is only worth it (and fast enough) on small scenarios. */
enum { MAX_ITEMS = 64, MAX_NODES = 2000 };

/* The builders accept up to 2^22 nodes and 2^25 cables: a 100-byte input
 * can ask for gigabytes and seconds of work, which libFuzzer reports as
 * out-of-memory or timeout without telling us anything new (large builds
 * run the same code as small ones). Inputs whose topology would exceed this
 * many cables are skipped. */
#define MAX_CABLES 200000.0

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_err(int rc, const fs_err *err, const char *what) {
  if (rc == 0) return;
  if (rc != FS_EINVAL && rc != FS_ERANGE && rc != FS_ECYCLE && rc != FS_ENOMEM) {
    fprintf(stderr, "%s: unexpected code %d (%s): %s\n", what, rc, fs_err_name(rc), err->msg);
    abort();
  }
  if (err->code != rc || strncmp(err->msg, "fuzz", 4) != 0) {
    fprintf(stderr, "%s: code %d but err {%d, \"%s\"} does not name the input\n", what, rc,
            err->code, err->msg);
    abort();
  }
#ifdef FUZZ_ONE_LINE
  if (strchr(err->msg, '\n')) {
    fprintf(stderr, "%s: message is not one line: %s\n", what, err->msg);
    abort();
  }
#endif
}

/* Cheap sanity of a finished run: times are finite, ordered and within the
 * makespan. */
static void check_run(const fs_scenario *sc) {
  double makespan = fs_sim_makespan_s(sc->sim);
  if (!(makespan >= 0) || isnan(makespan)) {
    fprintf(stderr, "makespan %g s\n", makespan);
    abort();
  }
  int32_t n = fs_sim_n_items(sc->sim);
  for (int32_t i = 0; i < n; i++) {
    double st = fs_sim_start_s(sc->sim, i), fin = fs_sim_finish_s(sc->sim, i);
    if (isnan(st) || isnan(fin) || st < 0 || fin < st || fin > makespan) {
      fprintf(stderr, "item %d: start %.17g s, finish %.17g s, makespan %.17g s\n", i, st, fin,
              makespan);
      abort();
    }
  }
}

static double num(const cJSON *obj, const char *key, double def) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsNumber(v) ? v->valuedouble : def;
}

/* Estimated cables of the topology in text (the object itself or its
 * "topology" member, as fs_topo_from_json_text reads it); 0 if none. */
static double cables(const char *text) {
  cJSON *root = cJSON_Parse(text);
  if (!root) return 0;
  const cJSON *t = root;
  if (!cJSON_GetObjectItemCaseSensitive(root, "type"))
    t = cJSON_GetObjectItemCaseSensitive(root, "topology");
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(t, "type");
  double n = 0;
  if (cJSON_IsString(type)) {
    if (strcmp(type->valuestring, "star") == 0) {
      n = num(t, "hosts", 0);
    } else if (strcmp(type->valuestring, "leafspine") == 0) {
      double leaves = num(t, "leaves", 0);
      n = leaves * num(t, "hosts_per_leaf", 0) +
          leaves * num(t, "spines", 0) * num(t, "links_per_spine", 1);
    } else if (strcmp(type->valuestring, "fattree") == 0) {
      double k = num(t, "k", 0);
      n = 0.75 * k * k * k;
    }
  }
  cJSON_Delete(root);
  return fabs(n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  if (cables(text) > MAX_CABLES) {
    free(text);
    return 0;
  }

  fs_scenario *sc = NULL;
  fs_err err = {0, ""};
  int rc = fs_scenario_parse(text, size, "fuzz", &sc, &err);
  check_err(rc, &err, "fs_scenario_parse");
  if (rc == 0) {
    if (sc->n_flows + sc->n_tasks <= MAX_ITEMS && sc->topo->n_nodes <= MAX_NODES) {
      fs_err rerr = {0, ""};
      rc = fs_scenario_run(sc, NULL, &rerr);
      check_err(rc, &rerr, "fs_scenario_run");
      if (rc == 0) check_run(sc);
    }
    fs_scenario_free(sc);
  }

  /* The text up to its first NUL, as a topology (or a scenario's topology). */
  fs_topo *t = NULL;
  fs_err terr = {0, ""};
  rc = fs_topo_from_json_text(text, "fuzz", &t, &terr);
  check_err(rc, &terr, "fs_topo_from_json_text");
  fs_topo_free(t);

  /* As a training job; small ones (<= 64 GPUs, <= 64 ops a device) run. */
  fs_job *job = NULL;
  fs_err jerr = {0, ""};
  rc = fs_job_parse(text, size, "fuzz", &job, &jerr);
  check_err(rc, &jerr, "fs_job_parse");
  if (rc == 0) {
    if (fs_job_gpus(job) <= 64 && 2 * fs_work_microbatches(job) * job->par.virtual_stages <= 64 &&
        job->topo->n_nodes <= MAX_NODES) {
      fs_train *tr = NULL;
      fs_train_result res;
      fs_err rerr = {0, ""};
      rc = fs_train_new(job, NULL, &tr, &rerr);
      if (rc == 0) rc = fs_train_run(tr, &res, &rerr);
      if (rc && rc != FS_ENOMEM) {
        fprintf(stderr, "training a job that validated failed: %s\n", rerr.msg);
        abort();
      }
      if (rc == 0 && !(res.iter_s > 0)) {
        fprintf(stderr, "iteration time %g s\n", res.iter_s);
        abort();
      }
      fs_train_free(tr);
    }
    fs_job_free(job);
  }

  /* As a routing jobs file on a fixed small fat-tree. */
  fs_topo *ft = NULL;
  fs_err ferr = {0, ""};
  if (fs_topo_fattree(4, 100, 1000, &ft, &ferr) == 0) {
    fs_routeopt_traffic traffic;
    fs_routeopt_traffic_init(&traffic);
    fs_err rerr = {0, ""};
    rc = fs_routeopt_traffic_from_json(text, "fuzz", ft, &traffic, &rerr);
    check_err(rc, &rerr, "fs_routeopt_traffic_from_json");
    fs_routeopt_traffic_free(&traffic);
    fs_topo_free(ft);
  }

  /* As an OCS traffic file (fabricsim ocs schedule --matrix). */
  fs_ocs_traffic otr = {0, 0, NULL};
  fs_err oerr = {0, ""};
  rc = fs_ocs_matrix_from_json(text, "fuzz", &otr, &oerr);
  check_err(rc, &oerr, "fs_ocs_matrix_from_json");
  fs_ocs_traffic_free(&otr);

  /* As an optical WAN file (fabricsim wan). */
  fs_wan *wan = NULL;
  fs_err werr = {0, ""};
  rc = fs_wan_from_json(text, "fuzz", &wan, &werr);
  check_err(rc, &werr, "fs_wan_from_json");
  fs_wan_free(wan);

  free(text);
  return 0;
}
