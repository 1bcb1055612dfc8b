/* fabricsim error codes and the error record every fallible call fills.
 * Codes come from one X-macro table so the enum, fs_strerror() and
 * fs_err_name() can never drift apart (libuv's UV_ERRNO_MAP idea). */
#ifndef FABRICSIM_ERR_H
#define FABRICSIM_ERR_H

#include <stdarg.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* XX(name, value, description). Bad input is FS_EINVAL/FS_ECYCLE/FS_ERANGE
 * (the CLI exits 2); the rest are failures of the machine or of us (exit 1). */
#define FS_ERRNO_MAP(XX)                                   \
  XX(EINVAL, -1, "invalid input")                          \
  XX(ERANGE, -2, "value out of range")                     \
  XX(ECYCLE, -3, "dependency cycle")                       \
  XX(ENOMEM, -4, "out of memory")                          \
  XX(EIO, -5, "input/output error")                        \
  XX(EINTERNAL, -6, "internal error")

enum {
  FS_OK = 0,
#define XX(name, value, desc) FS_##name = (value),
  FS_ERRNO_MAP(XX)
#undef XX
};

/* Filled by a failing call: `code` is the negative FS_E* value it returned
 * and `msg` one line naming the input (file, JSON path, value). A call that
 * succeeds leaves the record untouched. */
typedef struct fs_err {
  int code;
  char msg[512];
} fs_err;

const char *fs_strerror(int code);
const char *fs_err_name(int code);
/* Writes text to f as one line of UTF-8 (without a newline): a newline or
 * tab as \n or \t, another control character or a byte that does not
 * begin a well-formed UTF-8 sequence as \xHH, so a message quoting what a
 * user gave (a value with a newline, a file name that is not UTF-8) stays
 * one line a terminal and a log read right. */
void fs_err_fput_text(FILE *f, const char *text);

/* True for codes caused by the user's input (CLI exit status 2). */
int fs_err_is_input(int code);

/* Sets err (if not NULL) and returns code, so callers can write
 * `return fs_err_set(err, FS_EINVAL, "...")`. */
int fs_err_set(fs_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int fs_err_setv(fs_err *err, int code, const char *fmt, va_list ap);

#ifdef __cplusplus
}
#endif

#endif
