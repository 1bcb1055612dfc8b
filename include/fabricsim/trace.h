/* Chrome / Perfetto trace-event JSON writer (the "JSON Array/Object
 * Format" that chrome://tracing and ui.perfetto.dev open). Processes and
 * threads become track groups and tracks; complete events ("X") are slices;
 * counters ("C") draw a value over time. Times are given in seconds and
 * written in microseconds with nanosecond precision. Output streams as it
 * goes, so traces of millions of slices need no memory. */
#ifndef FABRICSIM_TRACE_H
#define FABRICSIM_TRACE_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fs_trace {
  FILE *f;
  long events;
} fs_trace;

void fs_trace_begin(fs_trace *t, FILE *f);
/* Names a process (track group) and a thread (track); sort_index orders
 * tracks in the viewer. */
void fs_trace_process(fs_trace *t, int pid, const char *name, int sort_index);
void fs_trace_thread(fs_trace *t, int pid, int tid, const char *name, int sort_index);
/* A slice [start_s, start_s + dur_s) on track (pid, tid). */
void fs_trace_slice(fs_trace *t, int pid, int tid, const char *name, const char *cat,
                    double start_s, double dur_s);
/* An async slice: may overlap others of the same track, which a thread's
 * slices may not; the viewer stacks them on a track named `cat` of
 * process pid. id must be unique among overlapping slices. */
void fs_trace_async(fs_trace *t, int pid, const char *name, const char *cat, long id,
                    double start_s, double dur_s);
/* A counter sample: series `name` of process pid takes `value` at time_s. */
void fs_trace_counter(fs_trace *t, int pid, const char *name, double time_s, double value);
/* Closes the JSON; returns 0 or FS_EIO if writing failed. */
int fs_trace_end(fs_trace *t);

#ifdef __cplusplus
}
#endif

#endif
