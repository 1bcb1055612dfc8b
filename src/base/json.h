/* Strict, path-aware reading of cJSON trees. Every getter names the file, the
 * JSON path ($.flows[3].dst) and the offending value in its error, so the
 * CLI can print one precise line. Unknown and duplicate keys are errors. */
#ifndef FABRICSIM_JSON_H
#define FABRICSIM_JSON_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "fabricsim/err.h"

typedef struct fs__jctx {
  const char *file; /* label used in messages: a path or "--topo" */
  fs_err *err;
} fs__jctx;

/* Largest integer a JSON number (a double) carries exactly: 2^53. */
#define FS_JSON_INT_MAX 9007199254740992LL

/* Parses NUL-terminated text (len bytes). On a syntax error reports line and
 * column; a key repeated in any object of the tree is an error too. The caller cJSON_Delete()s *out. */
int fs__json_parse(const fs__jctx *c, const char *text, size_t len,
                   cJSON **out);

/* The offset of the first byte of s that does not start well-formed UTF-8,
 * or -1 if s is all UTF-8. */
int fs__utf8_bad(const char *s);

/* Sets an FS_EINVAL error "file: path: what, got VALUE". Returns the code. */
int fs__json_fail(const fs__jctx *c, const char *path, const cJSON *value,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Child path helpers: buf gets "path.key" or "path[i]". */
void fs__json_path_key(char *buf, size_t n, const char *path, const char *key);
void fs__json_path_idx(char *buf, size_t n, const char *path, size_t i);

/* obj must be an object whose keys are all in the NULL-terminated list
 * `allowed`, each at most once. */
int fs__json_expect_object(const fs__jctx *c, const cJSON *obj,
                           const char *path, const char *const *allowed);

/* Typed getters for obj[key]. When the key is absent: if `required`, an
 * error; otherwise *out = def. Integers must be integral and in [min, max];
 * numbers finite and in [min, max]. */
int fs__json_int(const fs__jctx *c, const cJSON *obj, const char *path,
                 const char *key, int required, int64_t def, int64_t min,
                 int64_t max, int64_t *out);
int fs__json_num(const fs__jctx *c, const cJSON *obj, const char *path,
                 const char *key, int required, double def, double min,
                 double max, double *out);
/* *out borrows the cJSON string (valid while the tree lives). */
int fs__json_str(const fs__jctx *c, const cJSON *obj, const char *path,
                 const char *key, int required, const char *def,
                 const char **out);
/* Integer check on a bare value (array element). */
int fs__json_int_value(const fs__jctx *c, const cJSON *v, const char *path,
                       int64_t min, int64_t max, int64_t *out);

#endif
