/* Trace output: the Perfetto/Chrome JSON of a scenario parses, pairs every
 * begin with an end, and its slices carry the simulated times. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim/report.h"
#include "fabricsim/scenario.h"
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
