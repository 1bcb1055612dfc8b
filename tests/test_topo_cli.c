/* Tests of `fabricsim topo`: runs the built binary (test_cli_path()) through
 * popen and checks exit statuses, the text report and the JSON report. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "test.h"

/* The integer after "key:" at the start of a line of the text report, or -1. */
static long text_field(const char *out, const char *key) {
  size_t klen = strlen(key);
  for (const char *line = out; line && *line;) {
    if (strncmp(line, key, klen) == 0 && line[klen] == ':')
      return strtol(line + klen + 1, NULL, 10);
    line = strchr(line, '\n');
    if (line) line++;
  }
  return -1;
}

static double json_num(const cJSON *root, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
  if (!cJSON_IsNumber(v)) {
    test_fail(__FILE__, __LINE__, "JSON key \"%s\" missing or not a number", key);
    return -1;
  }
  return v->valuedouble;
}

TEST(test_topo_cli_text_report) {
  static char out[8192];
  int st = test_run_cli("topo fattree:k=4", "2>&1", out, sizeof(out));
  CHECK_EQ_INT(st, 0);
  CHECK(strstr(out, "hosts") != NULL);
  CHECK_EQ_INT(text_field(out, "hosts"), 16);
  CHECK_EQ_INT(text_field(out, "nodes"), 36);
  CHECK_EQ_INT(text_field(out, "switches"), 20);
  CHECK_EQ_INT(text_field(out, "cables"), 48);
  CHECK_EQ_INT(text_field(out, "diameter"), 6);
  CHECK_EQ_INT(text_field(out, "bisection"), 800);
  CHECK(strstr(out, "(tier1 8, tier2 8, tier3 4)") != NULL);
  CHECK(strstr(out, "fattree:k=4,gbps=100") != NULL);
  if (st != 0 || text_field(out, "hosts") != 16) fprintf(stderr, "  output:\n%s", out);
}

TEST(test_topo_cli_bad_spec_exits_2) {
  static char out[4096];
  CHECK_EQ_INT(test_run_cli("topo fattree:k=7", "2>&1", out, sizeof(out)), 2);
  CHECK(strstr(out, "$.k") != NULL);
  CHECK(strstr(out, "7") != NULL);
  CHECK_EQ_INT(test_run_cli("topo fattree:k=4,wat=1", "2>&1", out, sizeof(out)), 2);
  CHECK(strstr(out, "wat") != NULL);
  CHECK_EQ_INT(test_run_cli("topo no/such/topo.json", "2>&1", out, sizeof(out)), 2);
  CHECK(strstr(out, "no/such/topo.json") != NULL);
}

TEST(test_topo_cli_usage_errors) {
  static char out[4096];
  CHECK_EQ_INT(test_run_cli("topo --frobnicate fattree:k=4", "2>&1", out, sizeof(out)), 2);
  CHECK(strstr(out, "--frobnicate") != NULL);
  CHECK_EQ_INT(test_run_cli("topo --format xml fattree:k=4", "2>&1", out, sizeof(out)), 2);
  CHECK(strstr(out, "xml") != NULL);
  CHECK_EQ_INT(test_run_cli("topo --format", "2>&1", out, sizeof(out)), 2);
  CHECK_EQ_INT(test_run_cli("topo", "2>&1", out, sizeof(out)), 2);
  CHECK_EQ_INT(test_run_cli("topo star:hosts=2 star:hosts=3", "2>&1", out, sizeof(out)), 2);
  CHECK_EQ_INT(test_run_cli("topo --help", "2>&1", out, sizeof(out)), 0);
  CHECK(strstr(out, "usage: fabricsim topo") != NULL);
}

TEST(test_topo_cli_json_report) {
  static char out[8192];
  int st = test_run_cli("topo --format json "
                        "leafspine:leaves=4,spines=2,hosts_per_leaf=8,host_gbps=100,fabric_gbps=100",
                        "2>&1", out, sizeof(out));
  CHECK_EQ_INT(st, 0);
  cJSON *root = cJSON_Parse(out);
  if (!root) {
    test_fail(__FILE__, __LINE__, "output is not JSON:\n%s", out);
    return;
  }
  CHECK_EQ_INT(json_num(root, "hosts"), 32);
  CHECK_EQ_INT(json_num(root, "switches"), 6);
  CHECK_EQ_INT(json_num(root, "links"), 80);
  CHECK_EQ_INT(json_num(root, "diameter_hops"), 4);
  CHECK_REL(json_num(root, "bisection_gbps"), 400, 1e-12, "Gbps");
  CHECK_REL(json_num(root, "full_bisection_gbps"), 1600, 1e-12, "Gbps");
  CHECK_REL(json_num(root, "bisection_fraction"), 0.25, 1e-12, "");
  CHECK_REL(json_num(root, "avg_hops"), (2.0 * 7 + 4.0 * 24) / 31, 1e-12, "hops");
  const cJSON *fam = cJSON_GetObjectItemCaseSensitive(root, "family");
  CHECK(cJSON_IsString(fam) && strcmp(fam->valuestring, "leafspine") == 0);
  const cJSON *tiers = cJSON_GetObjectItemCaseSensitive(root, "switches_by_tier");
  CHECK_EQ_INT(json_num(tiers, "tier1"), 4);
  CHECK_EQ_INT(json_num(tiers, "tier2"), 2);
  const cJSON *speeds = cJSON_GetObjectItemCaseSensitive(root, "link_speeds_gbps");
  CHECK(cJSON_IsArray(speeds) && cJSON_GetArraySize(speeds) == 1);
  cJSON_Delete(root);

  /* One host: no pairs, no cut; the numbers that do not exist are null. */
  CHECK_EQ_INT(test_run_cli("topo --format=json star:hosts=1", "2>&1", out, sizeof(out)), 0);
  root = cJSON_Parse(out);
  CHECK(root != NULL);
  if (root) {
    CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(root, "oversubscription")));
    CHECK_EQ_INT(json_num(root, "diameter_hops"), 0);
    cJSON_Delete(root);
  }
}
