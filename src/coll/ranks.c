/* The ranks of a collective read from a file (`fabricsim coll
 * --ranks-file`): a JSON array of host ids, rank i on the i-th. Only the
 * shape is checked here (a non-empty array of integers in [0, 2^31)):
 * whether they are distinct hosts of a topology is checked where the group
 * meets one. O(ranks) time and memory. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "../base/base.h"
#include "../base/json.h"
#include "fabricsim/coll.h"

int fs_coll_ranks_from_file(const char *path, int32_t **hosts, int32_t *p, fs_err *err) {
  char *text;
  size_t len;
  int rc = fs__read_file(path, &text, &len, err);
  if (rc) return rc;
  fs__jctx c = {path, err};
  cJSON *root = NULL;
  rc = fs__json_parse(&c, text, len, &root);
  free(text);
  if (rc) return rc;
  int n = cJSON_GetArraySize(root);
  if (!cJSON_IsArray(root) || n < 1) {
    rc = fs__json_fail(&c, "$", root, "must be a non-empty array of host ids");
    cJSON_Delete(root);
    return rc;
  }
  int32_t *h = malloc((size_t)n * sizeof(int32_t));
  if (!h) {
    cJSON_Delete(root);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  int i = 0;
  for (cJSON *v = root->child; v; v = v->next, i++) {
    char path_i[32];
    int64_t x;
    snprintf(path_i, sizeof(path_i), "$[%d]", i);
    if ((rc = fs__json_int_value(&c, v, path_i, 0, INT32_MAX, &x))) break;
    h[i] = (int32_t)x;
  }
  cJSON_Delete(root);
  if (rc) {
    free(h);
    return rc;
  }
  *hosts = h;
  *p = n;
  return 0;
}
