/* Error names and messages from the FS_ERRNO_MAP table. */
#include "fabricsim/err.h"

#include <stdio.h>

#include "base.h"

const char *fs_strerror(int code) {
  switch (code) {
    case FS_OK: return "success";
#define XX(name, value, desc) \
  case FS_##name: return desc;
    FS_ERRNO_MAP(XX)
#undef XX
  }
  return "unknown error";
}

const char *fs_err_name(int code) {
  switch (code) {
    case FS_OK: return "OK";
#define XX(name, value, desc) \
  case FS_##name: return #name;
    FS_ERRNO_MAP(XX)
#undef XX
  }
  return "EUNKNOWN";
}

int fs_err_is_input(int code) {
  return code == FS_EINVAL || code == FS_ERANGE || code == FS_ECYCLE;
}

int fs_err_setv(fs_err *err, int code, const char *fmt, va_list ap) {
  if (err) {
    err->code = code;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
  }
  return code;
}

int fs_err_set(fs_err *err, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fs_err_setv(err, code, fmt, ap);
  va_end(ap);
  return code;
}

void fs_err_fput_text(FILE *f, const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p;) {
    int n = fs__utf8_len(p);
    if (*p == '\n') fputs("\\n", f);
    else if (*p == '\t') fputs("\\t", f);
    else if (!n || *p < 0x20 || *p == 0x7f) fprintf(f, "\\x%02X", *p);
    else fwrite(p, 1, (size_t)n, f);
    p += n ? n : 1;
  }
}
