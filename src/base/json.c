/* Strict JSON getters over cJSON; see json.h. Errors render the offending
 * value with cJSON itself, cut to 60 characters so one line stays one line. */
#include "json.h"

#include "base.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void render_value(const cJSON *v, char *buf, size_t n) {
  if (!v) {
    snprintf(buf, n, "nothing");
    return;
  }
  char *s = cJSON_PrintUnformatted(v);
  if (!s) {
    snprintf(buf, n, "?");
    return;
  }
  if (strlen(s) > 60) {
    memcpy(buf, s, 57);
    strcpy(buf + 57, "...");
  } else {
    snprintf(buf, n, "%s", s);
  }
  cJSON_free(s);
}

int fs__json_fail(const fs__jctx *c, const char *path, const cJSON *value,
                  const char *fmt, ...) {
  char what[256], val[72];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  if (value) {
    render_value(value, val, sizeof(val));
    return fs_err_set(c->err, FS_EINVAL, "%s: %s: %s, got %s", c->file, path,
                      what, val);
  }
  return fs_err_set(c->err, FS_EINVAL, "%s: %s: %s", c->file, path, what);
}

void fs__json_path_key(char *buf, size_t n, const char *path, const char *key) {
  char esc[128];
  snprintf(buf, n, "%s.%s", path, fs__escape(esc, sizeof(esc), key));
}

void fs__json_path_idx(char *buf, size_t n, const char *path, size_t i) {
  snprintf(buf, n, "%s[%zu]", path, i);
}

int fs__utf8_len(const unsigned char *p) {
  unsigned char b = p[0];
  if (b < 0x80) return 1;
  int n = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
  for (int i = 1; i < n; i++)
    if ((p[i] & 0xC0) != 0x80) return 0;
  if ((b == 0xE0 && p[1] < 0xA0) || (b == 0xED && p[1] > 0x9F) || (b == 0xF0 && p[1] < 0x90) ||
      (b == 0xF4 && p[1] > 0x8F))
    return 0;
  return n;
}

typedef struct keyed {
  const cJSON *it;
  int idx; /* position in the object */
} keyed;

static int cmp_key(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  int c = strcmp(x->it->string, y->it->string);
  return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/* The first key (in document order) that repeats an earlier one in its
 * object, anywhere in the tree: an error naming its path, whether or not the
 * reader ever looks at that object (issue 45: a job file read for its
 * topology alone). Objects of many keys are sorted, not scanned pairwise. */
static int no_duplicate_keys(const fs__jctx *c, const cJSON *v, const char *path, int depth) {
  if (depth > 1000) return 0; /* (cJSON refuses deeper nesting) */
  int n = 0;
  for (const cJSON *it = v->child; it; it = it->next) n++;
  if (cJSON_IsObject(v) && n > 1) {
    const cJSON *dup = NULL;
    if (n <= 32) {
      for (const cJSON *it = v->child; it && !dup; it = it->next)
        for (const cJSON *jt = v->child; jt != it; jt = jt->next)
          if (strcmp(jt->string, it->string) == 0) {
            dup = it;
            break;
          }
    } else {
      keyed *keys = malloc((size_t)n * sizeof(*keys));
      if (!keys) return fs_err_set(c->err, FS_ENOMEM, "%s: out of memory", c->file);
      int k = 0;
      for (const cJSON *it = v->child; it; it = it->next, k++) keys[k] = (keyed){it, k};
      qsort(keys, (size_t)n, sizeof(*keys), cmp_key);
      /* a repeat: equal to the one before it in sorted order; the first in
       * document order is the one of least position */
      int best = n;
      for (k = 1; k < n; k++)
        if (strcmp(keys[k - 1].it->string, keys[k].it->string) == 0 && keys[k].idx < best) {
          best = keys[k].idx;
          dup = keys[k].it;
        }
      free(keys);
    }
    if (dup) {
      char p[512];
      fs__json_path_key(p, sizeof(p), path, dup->string);
      return fs_err_set(c->err, FS_EINVAL, "%s: %s: duplicate key", c->file, p);
    }
  }
  size_t i = 0;
  for (const cJSON *it = v->child; it; it = it->next, i++) {
    if (!cJSON_IsObject(it) && !cJSON_IsArray(it)) continue;
    char p[512];
    if (cJSON_IsObject(v)) fs__json_path_key(p, sizeof(p), path, it->string);
    else fs__json_path_idx(p, sizeof(p), path, i);
    int rc = no_duplicate_keys(c, it, p, depth + 1);
    if (rc) return rc;
  }
  return 0;
}

int fs__utf8_bad(const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    int n = fs__utf8_len(p);
    if (!n) return (int)(p - (const unsigned char *)s);
    p += n;
  }
  return -1;
}

int fs__json_parse(const fs__jctx *c, const char *text, size_t len,
                   cJSON **out) {
  if (strlen(text) != len)
    return fs_err_set(c->err, FS_EINVAL, "%s: contains a NUL byte", c->file);
  /* JSON text is UTF-8 (RFC 8259): what is not would reach outputs (a
   * flow id copied into a JSON file) and make them invalid in turn */
  int line = 1, col = 1;
  for (const unsigned char *p = (const unsigned char *)text; *p;) {
    int n = fs__utf8_len(p);
    if (!n)
      return fs_err_set(c->err, FS_EINVAL,
                        "%s: line %d, column %d: byte 0x%02X is not UTF-8, which JSON text must be",
                        c->file, line, col, *p);
    if (*p == '\n') line++, col = 1;
    else col++;
    p += n;
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
  if (!root) {
    if (!end) end = text;
    if (end > text + len) end = text + len;
    line = col = 1;
    for (const char *p = text; p < end; p++) {
      if (*p == '\n') {
        line++;
        col = 1;
      } else {
        col++;
      }
    }
    char near[24];
    size_t k = 0;
    for (const char *p = end; *p && k < 16; p++)
      near[k++] = (*p == '\n' || *p == '\t' || (unsigned char)*p < 32) ? ' ' : *p;
    near[k] = '\0';
    if (end >= text + len)
      return fs_err_set(c->err, FS_EINVAL,
                        "%s: line %d, column %d: malformed JSON: unexpected end "
                        "of input", c->file, line, col);
    return fs_err_set(c->err, FS_EINVAL,
                      "%s: line %d, column %d: malformed JSON near '%s'",
                      c->file, line, col, near);
  }
  int rc = no_duplicate_keys(c, root, "$", 0);
  if (rc) {
    cJSON_Delete(root);
    return rc;
  }
  *out = root;
  return 0;
}

int fs__json_expect_object(const fs__jctx *c, const cJSON *obj,
                           const char *path, const char *const *allowed) {
  if (!cJSON_IsObject(obj))
    return fs__json_fail(c, path, obj, "must be an object");
  for (const cJSON *it = obj->child; it; it = it->next) {
    int ok = 0;
    for (const char *const *a = allowed; *a; a++)
      if (strcmp(*a, it->string) == 0) ok = 1;
    char p[512];
    fs__json_path_key(p, sizeof(p), path, it->string);
    if (!ok) {
      char list[256] = "";
      for (const char *const *a = allowed; *a; a++) {
        if (list[0]) strncat(list, ", ", sizeof(list) - strlen(list) - 1);
        strncat(list, *a, sizeof(list) - strlen(list) - 1);
      }
      return fs_err_set(c->err, FS_EINVAL, "%s: %s: unknown key (expected one of: %s)",
                        c->file, p, list);
    }
    for (const cJSON *jt = obj->child; jt != it; jt = jt->next)
      if (strcmp(jt->string, it->string) == 0)
        return fs_err_set(c->err, FS_EINVAL, "%s: %s: duplicate key", c->file,
                          p);
  }
  return 0;
}

int fs__json_int_value(const fs__jctx *c, const cJSON *v, const char *path,
                       int64_t min, int64_t max, int64_t *out) {
  if (!cJSON_IsNumber(v))
    return fs__json_fail(c, path, v, "must be an integer");
  double d = v->valuedouble;
  if (!isfinite(d))
    return fs__json_fail(c, path, NULL, "number too large to represent");
  if (d != floor(d)) return fs__json_fail(c, path, v, "must be an integer");
  /* (an inline spec's number keeps its text: 1e1 or 16.0 is no integer) */
  if (v->valuestring && strpbrk(v->valuestring, ".eE"))
    return fs__json_fail(c, path, NULL, "must be an integer, got %s", v->valuestring);
  if (fabs(d) > (double)FS_JSON_INT_MAX)
    return fs__json_fail(c, path, v, "must be at most 2^53 = %lld in magnitude",
                         (long long)FS_JSON_INT_MAX);
  if (d < (double)min || d > (double)max) {
    if (max >= FS_JSON_INT_MAX)
      return fs__json_fail(c, path, v, "must be >= %lld", (long long)min);
    return fs__json_fail(c, path, v, "must be an integer in [%lld, %lld]",
                         (long long)min, (long long)max);
  }
  *out = (int64_t)d;
  return 0;
}

int fs__json_int(const fs__jctx *c, const cJSON *obj, const char *path,
                 const char *key, int required, int64_t def, int64_t min,
                 int64_t max, int64_t *out) {
  char p[512];
  fs__json_path_key(p, sizeof(p), path, key);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) {
    if (required) return fs__json_fail(c, p, NULL, "required integer is missing");
    *out = def;
    return 0;
  }
  return fs__json_int_value(c, v, p, min, max, out);
}

int fs__json_num(const fs__jctx *c, const cJSON *obj, const char *path,
                 const char *key, int required, double def, double min,
                 double max, double *out) {
  char p[512];
  fs__json_path_key(p, sizeof(p), path, key);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) {
    if (required) return fs__json_fail(c, p, NULL, "required number is missing");
    *out = def;
    return 0;
  }
  if (cJSON_IsNumber(v) && !isfinite(v->valuedouble))
    return fs__json_fail(c, p, NULL, "number too large to represent");
  if (!cJSON_IsNumber(v)) return fs__json_fail(c, p, v, "must be a number");
  if (v->valuedouble < min || v->valuedouble > max)
    return fs__json_fail(c, p, v, "must be in [%g, %g]", min, max);
  *out = v->valuedouble;
  return 0;
}

int fs__json_str(const fs__jctx *c, const cJSON *obj, const char *path,
                 const char *key, int required, const char *def,
                 const char **out) {
  char p[512];
  fs__json_path_key(p, sizeof(p), path, key);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) {
    if (required) return fs__json_fail(c, p, NULL, "required string is missing");
    *out = def;
    return 0;
  }
  if (!cJSON_IsString(v)) return fs__json_fail(c, p, v, "must be a string");
  *out = v->valuestring;
  return 0;
}
