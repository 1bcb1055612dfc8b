/* The "failures" array of job and scenario files (json.h). One pass over
 * the entries; a switch costs its degree. The link buffer is sized by the
 * topology's largest out-degree, so no switch's cables are cut short. */
#include "json.h"

#include <stdio.h>
#include <stdlib.h>

#include "../base/base.h"

int fs__ctl_json_failures(const fs__jctx *c, const cJSON *root, const fs_topo *t,
                          const fs__ctl_time_key *at, fs_netctl_failure **failures,
                          int32_t *n) {
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
    int64_t at_i;
    const char *cable, *sw;
    if ((rc = fs__json_expect_object(c, e, path, keys))) break;
    if (at->integer) {
      rc = fs__json_int(c, e, path, at->key, 1, 0, 0, (int64_t)at->max, &at_i);
      at_v = (double)at_i;
    } else {
      rc = fs__json_num(c, e, path, at->key, 1, 0, 0, at->max, &at_v);
    }
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
