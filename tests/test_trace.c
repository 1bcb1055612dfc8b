/* Trace output: the Perfetto/Chrome JSON of a scenario parses, pairs every
 * begin with an end, and its slices carry the simulated times. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim/report.h"
#include "fabricsim/scenario.h"
#include "fabricsim/train.h"
#include "test.h"

TEST(test_trace_of_scenario_matches_run) {
  const char *text =
      "{\"topology\": {\"type\": \"star\", \"hosts\": 3, \"gbps\": 10, \"latency_ns\": 100},"
      " \"flows\": [{\"id\": \"a\", \"src\": 0, \"dst\": 1, \"bytes\": 125000},"
      "             {\"id\": \"b\\\"q\", \"src\": 1, \"dst\": 2, \"bytes\": 1000, \"after\": [\"c\"]}],"
      " \"tasks\": [{\"id\": \"c\", \"host\": 1, \"duration_ns\": 7000, \"after\": [\"a\"]}]}";
  fs_scenario *sc = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_scenario_parse(text, strlen(text), "t.json", &sc, &err), &err);
  if (!sc) return;
  CHECK_OK(fs_scenario_run(sc, NULL, &err), &err);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK_OK(fs_report_sim_trace(f, sc), &err);
  fclose(f);
  cJSON *root = cJSON_Parse(buf);
  CHECK(root != NULL);
  const cJSON *ev = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
  int begins = 0, ends = 0;
  double a_begin = -1, a_end = -1;
  for (const cJSON *e = ev ? ev->child : NULL; e; e = e->next) {
    const char *ph = cJSON_GetObjectItemCaseSensitive(e, "ph")->valuestring;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    double ts = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "ts"));
    if (strcmp(ph, "b") == 0) begins++;
    if (strcmp(ph, "e") == 0) ends++;
    if (strcmp(name->valuestring, "a -> 1") == 0) {
      if (*ph == 'b') a_begin = ts;
      if (*ph == 'e') a_end = ts;
    }
  }
  CHECK_EQ_INT(begins, 3);
  CHECK_EQ_INT(ends, 3);
  CHECK_REL(a_begin + 1, 1, 1e-12, "us");
  /* 125000 B at 10 Gb/s = 100 us, plus two 100 ns links. */
  CHECK_REL(a_end, 100.2, 1e-9, "us");
  cJSON_Delete(root);
  free(buf);
  fs_scenario_free(sc);
}

/* Two jobs sharing a cluster (examples/tenant-a.json, 1 stage, and
 * tenant-b.json, 2 stages): the trace names each job's stages as its own
 * processes, every slice of a job ends within that job's iteration, and
 * the two jobs' async ids never meet (a viewer pairs begins and ends by
 * id). */
TEST(test_trace_of_cluster_names_each_job) {
  const char *files[2] = {"examples/tenant-a.json", "examples/tenant-b.json"};
  fs_job *jobs[2] = {NULL, NULL};
  fs_err err = {0, ""};
  for (int k = 0; k < 2; k++) CHECK_OK(fs_job_load(files[k], &jobs[k], &err), &err);
  if (!jobs[0] || !jobs[1]) goto out;
  fs_cluster *cl = NULL;
  fs_train_result res[2];
  CHECK_OK(fs_cluster_new(jobs, 2, NULL, &cl, &err), &err);
  if (!cl) goto out;
  CHECK_OK(fs_cluster_run(cl, res, &err), &err);
  const fs_train *trs[2] = {fs_cluster_job(cl, 0), fs_cluster_job(cl, 1)};
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK_OK(fs_report_cluster_trace(f, jobs, trs, 2), &err);
  fclose(f);
  cJSON *root = cJSON_Parse(buf);
  CHECK(root != NULL);
  const cJSON *ev = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
  int p0 = fs_train_stages(trs[0]), p1 = fs_train_stages(trs[1]), named[2] = {0, 0};
  double last[2] = {0, 0};
  long max_id0 = -1, min_id1 = -1;
  for (const cJSON *e = ev ? ev->child : NULL; e; e = e->next) {
    const char *ph = cJSON_GetObjectItemCaseSensitive(e, "ph")->valuestring;
    int pid = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "pid"));
    int job = pid < p0 ? 0 : pid < p0 + p1 ? 1 : -1;
    if (strcmp(ph, "M") == 0) {
      const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
      const cJSON *nm = cJSON_GetObjectItemCaseSensitive(args, "name");
      char want[64];
      snprintf(want, sizeof(want), "job %d (%s): stage", job + 1, job >= 0 ? files[job] : "");
      if (job >= 0 && nm && strstr(nm->valuestring, "thread") == NULL &&
          strncmp(nm->valuestring, want, strlen(want)) == 0)
        named[job]++;
      continue;
    }
    if (job < 0) continue;
    double ts = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "ts"));
    const cJSON *dur = cJSON_GetObjectItemCaseSensitive(e, "dur");
    double end = ts + (dur ? cJSON_GetNumberValue(dur) : 0);
    if (end > last[job]) last[job] = end;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
    if (id) {
      long v = (long)cJSON_GetNumberValue(id);
      if (job == 0 && v > max_id0) max_id0 = v;
      if (job == 1 && (min_id1 < 0 || v < min_id1)) min_id1 = v;
    }
  }
  CHECK_EQ_INT(named[0], p0);
  CHECK_EQ_INT(named[1], p1);
  for (int k = 0; k < 2; k++)
    if (!(last[k] > 0 && last[k] <= res[k].iter_s * 1e6 + 1e-3))
      test_fail(__FILE__, __LINE__, "job %d: a slice ends at %.3f us, its iteration at %.3f us",
                k + 1, last[k], res[k].iter_s * 1e6);
  CHECK(max_id0 >= 0 && min_id1 > max_id0);
  cJSON_Delete(root);
  free(buf);
  fs_cluster_free(cl);
out:
  for (int k = 0; k < 2; k++) fs_job_free(jobs[k]);
}
