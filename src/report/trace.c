/* Trace-event JSON writer (trace.h). Strings are escaped for JSON; numbers
 * use %.3f microseconds (1 ns resolution), which keeps files byte-stable. */
#include "fabricsim/trace.h"

#include "../base/base.h"
#include "fabricsim/err.h"

static void sep(fs_trace *t) { fputs(t->events++ ? ",\n" : "\n", t->f); }

void fs_trace_begin(fs_trace *t, FILE *f) {
  t->f = f;
  t->events = 0;
  fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
}

void fs_trace_process(fs_trace *t, int pid, const char *name, int sort_index) {
  sep(t);
  fprintf(t->f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":", pid);
  fs__fput_json_str(t->f, name);
  fputs("}}", t->f);
  sep(t);
  fprintf(t->f,
          "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"args\":{\"sort_index\":%d}}",
          pid, sort_index);
}

void fs_trace_thread(fs_trace *t, int pid, int tid, const char *name, int sort_index) {
  sep(t);
  fprintf(t->f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":",
          pid, tid);
  fs__fput_json_str(t->f, name);
  fputs("}}", t->f);
  sep(t);
  fprintf(t->f,
          "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,\"tid\":%d,"
          "\"args\":{\"sort_index\":%d}}",
          pid, tid, sort_index);
}

void fs_trace_slice(fs_trace *t, int pid, int tid, const char *name, const char *cat,
                    double start_s, double dur_s) {
  sep(t);
  fputs("{\"ph\":\"X\",\"name\":", t->f);
  fs__fput_json_str(t->f, name);
  fputs(",\"cat\":", t->f);
  fs__fput_json_str(t->f, cat);
  fprintf(t->f, ",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f}", pid, tid, start_s * 1e6,
          dur_s * 1e6);
}

void fs_trace_async(fs_trace *t, int pid, const char *name, const char *cat, long id,
                    double start_s, double dur_s) {
  for (int end = 0; end < 2; end++) {
    sep(t);
    fprintf(t->f, "{\"ph\":\"%c\",\"name\":", end ? 'e' : 'b');
    fs__fput_json_str(t->f, name);
    fputs(",\"cat\":", t->f);
    fs__fput_json_str(t->f, cat);
    fprintf(t->f, ",\"id\":%ld,\"pid\":%d,\"ts\":%.3f}", id, pid,
            (start_s + (end ? dur_s : 0)) * 1e6);
  }
}

void fs_trace_counter(fs_trace *t, int pid, const char *name, double time_s, double value) {
  sep(t);
  fputs("{\"ph\":\"C\",\"name\":", t->f);
  fs__fput_json_str(t->f, name);
  fprintf(t->f, ",\"pid\":%d,\"ts\":%.3f,\"args\":{\"value\":%.6g}}", pid, time_s * 1e6, value);
}

int fs_trace_end(fs_trace *t) {
  fputs("\n]}\n", t->f);
  return ferror(t->f) ? FS_EIO : 0;
}
