/* Output files, written so that no output replaces what it should not and
 * no failure or interrupt leaves a partial file behind. Every file
 * fabricsim writes (results, reports, traces, exports, Chakra traces, CSV)
 * goes through here.
 *
 * fs_output_open(path) looks at `path` before any work is done and decides
 * how it will be written:
 *   - nothing there yet, or a regular file: the output goes to a temporary
 *     file beside it (NAME.tmp.PID), renamed over it by fs_output_commit, so
 *     a reader never sees half a file and a failure leaves the old one as it
 *     was; a replaced file keeps its mode (and, run as root, its owner);
 *   - a symbolic link: followed; the file it points to is replaced as above
 *     and the link stays a link (a link to nothing is refused, as cp does);
 *   - a character device or a FIFO (/dev/null, a terminal, a named pipe),
 *     or the very file this process has as its stdout or stderr
 *     (/dev/stdout redirected to a file): written through, never replaced
 *     or truncated;
 *   - a directory, a block device, a socket, a file we may not write, a
 *     regular file whose mode has no write bit (even run as root), a file
 *     another output of this process has open (the same file twice):
 *     refused.
 * The temporary files not yet committed are remembered per process, so
 * fs_output_cleanup() (async-signal-safe) removes them from a signal
 * handler or at exit. That list is the one piece of global state here: a
 * signal handler has nothing else to reach it through. Not thread-safe:
 * open, commit and abort outputs from one thread. */
#ifndef FABRICSIM_OUTPUT_H
#define FABRICSIM_OUTPUT_H

#include <stdio.h>

#include "fabricsim/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fs_output fs_output;

/* Opens `path` for writing as above. 0 with *out set, or FS_EINVAL (the
 * path cannot take the output: err names it and says why; nothing is
 * created) or FS_ENOMEM. */
int fs_output_open(const char *path, fs_output **out, fs_err *err);

/* The stream to write to; valid until fs_output_close/commit/abort. */
FILE *fs_output_file(fs_output *o);

/* The path as it was given to fs_output_open. */
const char *fs_output_path(const fs_output *o);

/* Finishes writing (flush, close) but does not yet put the file in place:
 * for several files that must all be written before any replaces its old
 * one. 0, or FS_EIO with err naming the path and the system's reason; on
 * failure the temporary file is removed. Calling it twice is harmless. */
int fs_output_close(fs_output *o, fs_err *err);

/* Closes (if not yet) and puts the file in place (renames the temporary
 * file over the target). Frees o, whatever the result. 0, or FS_EIO with
 * err naming the path and the reason: then the temporary file is gone and
 * the old file, if any, is untouched. */
int fs_output_commit(fs_output *o, fs_err *err);

/* Gives up: closes, removes the temporary file, leaves the old file as it
 * was (a file written through keeps what was written). Frees o; NULL is a
 * no-op. */
void fs_output_abort(fs_output *o);

/* A directory outputs go into (e.g. one Chakra trace per rank). */
typedef struct fs_output_dir fs_output_dir;

/* Makes sure `dir` is a directory, creating it and any missing parents
 * (mode 0777 less the umask). 0, or FS_EINVAL (dir, or one of its parents,
 * is not a directory or cannot be created: err says which and why; what
 * this call created is removed again) or FS_ENOMEM. */
int fs_output_dir_open(const char *dir, fs_output_dir **out, fs_err *err);

/* Keeps the directories (after their files are committed); frees d. */
void fs_output_dir_commit(fs_output_dir *d);

/* Removes the directories this call created, if they are empty again;
 * frees d. NULL is a no-op. */
void fs_output_dir_abort(fs_output_dir *d);

/* Removes every temporary file (and every directory created) by this
 * process that was not committed. Async-signal-safe: a handler for SIGINT
 * or SIGTERM calls it, then re-raises the signal; harmless at exit. A
 * forked child never removes its parent's files. */
void fs_output_cleanup(void);

#ifdef __cplusplus
}
#endif

#endif
