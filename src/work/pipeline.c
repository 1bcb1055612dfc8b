/* Pipeline schedules (see pipeline.h). The interleaved order follows
 * Megatron-LM's schedule: on device s, warm-up (p - s - 1) * 2 + (v - 1) * p
 * forwards (at most m*v), then one forward one backward, then backwards;
 * the k-th forward runs chunk (k / p) mod v of micro-batch
 * (k / (p v)) p + k mod p, the k-th backward chunk v - 1 - (k / p) mod v of
 * the same micro-batch mapping. ZB-H1 as pipeline.h gives it. O(m v) per
 * device. */
#include "fabricsim/pipeline.h"

#include <string.h>

int fs_pipe_schedule_parse(const char *name, fs_pipe_schedule *out) {
  if (strcmp(name, "1f1b") == 0) *out = FS_PIPE_1F1B;
  else if (strcmp(name, "interleaved") == 0) *out = FS_PIPE_INTERLEAVED;
  else if (strcmp(name, "gpipe") == 0) *out = FS_PIPE_GPIPE;
  else if (strcmp(name, "zb-h1") == 0) *out = FS_PIPE_ZBH1;
  else return FS_EINVAL;
  return 0;
}

const char *fs_pipe_schedule_name(fs_pipe_schedule s) {
  switch (s) {
    case FS_PIPE_1F1B: return "1f1b";
    case FS_PIPE_INTERLEAVED: return "interleaved";
    case FS_PIPE_GPIPE: return "gpipe";
    case FS_PIPE_ZBH1: return "zb-h1";
  }
  return "?";
}

int fs_pipe_check(fs_pipe_schedule sch, int32_t p, int32_t m, int32_t v, fs_err *err) {
  if (p < 1) return fs_err_set(err, FS_EINVAL, "pipeline stages must be >= 1, got %d", p);
  if (m < 1) return fs_err_set(err, FS_EINVAL, "micro-batches must be >= 1, got %d", m);
  if (v < 1) return fs_err_set(err, FS_EINVAL, "virtual stages must be >= 1, got %d", v);
  if (sch != FS_PIPE_INTERLEAVED && v != 1)
    return fs_err_set(err, FS_EINVAL, "virtual stages > 1 need the interleaved schedule, got %d",
                      v);
  if (sch == FS_PIPE_INTERLEAVED && v < 2)
    return fs_err_set(err, FS_EINVAL, "the interleaved schedule needs virtual stages >= 2, got %d",
                      v);
  if (sch == FS_PIPE_INTERLEAVED && m % p != 0)
    return fs_err_set(err, FS_EINVAL,
                      "the interleaved schedule needs micro-batches (%d) to be a multiple of the "
                      "pipeline stages (%d)",
                      m, p);
  return 0;
}

int32_t fs_pipe_ops_per_device(fs_pipe_schedule sch, int32_t m, int32_t v) {
  return (sch == FS_PIPE_ZBH1 ? 3 : 2) * m * v;
}

static fs_pipe_op interleaved_op(int32_t k, int backward, int32_t p, int32_t v) {
  int32_t group = k / p;
  int32_t chunk = group % v;
  if (backward) chunk = v - 1 - chunk;
  fs_pipe_op op = {.backward = (uint8_t)backward, .mb = (k / (p * v)) * p + k % p, .chunk = chunk};
  return op;
}

int fs_pipe_order(fs_pipe_schedule sch, int32_t p, int32_t m, int32_t v, int32_t stage,
                  fs_pipe_op *out, fs_err *err) {
  int rc = fs_pipe_check(sch, p, m, v, err);
  if (rc) return rc;
  if (stage < 0 || stage >= p)
    return fs_err_set(err, FS_EINVAL, "stage %d outside [0, %d)", stage, p);
  int32_t n = 0;
  if (sch == FS_PIPE_GPIPE) {
    for (int32_t mb = 0; mb < m; mb++) out[n++] = (fs_pipe_op){.backward = 0, .mb = mb};
    for (int32_t mb = 0; mb < m; mb++) out[n++] = (fs_pipe_op){.backward = 1, .mb = mb};
    return 0;
  }
  if (sch == FS_PIPE_ZBH1) {
    for (int32_t x = 0; x < m + p - 1; x++) {
      int32_t b = x - (p - 1 - stage), w = x - (p - 1);
      if (x < m) out[n++] = (fs_pipe_op){.backward = 0, .mb = x};
      if (b >= 0 && b < m)
        out[n++] = (fs_pipe_op){.backward = 1, .part = FS_PIPE_INPUT_GRAD, .mb = b};
      if (w >= 0 && w < m)
        out[n++] = (fs_pipe_op){.backward = 1, .part = FS_PIPE_WEIGHT_GRAD, .mb = w};
    }
    return 0;
  }
  int32_t total = m * v;
  int32_t warmup = sch == FS_PIPE_1F1B ? p - stage - 1 : (p - stage - 1) * 2 + (v - 1) * p;
  if (warmup > total) warmup = total;
  int32_t f = 0, b = 0;
  for (; f < warmup; f++) out[n++] = interleaved_op(f, 0, p, v);
  while (f < total) {
    out[n++] = interleaved_op(f++, 0, p, v);
    out[n++] = interleaved_op(b++, 1, p, v);
  }
  while (b < total) out[n++] = interleaved_op(b++, 1, p, v);
  return 0;
}

int32_t fs_pipe_max_in_flight(const fs_pipe_op *ops, int32_t n) {
  int32_t live = 0, most = 0;
  for (int32_t i = 0; i < n; i++) {
    if (!ops[i].backward) live++;
    else if (ops[i].part != FS_PIPE_INPUT_GRAD) live--;
    if (live > most) most = live;
  }
  return most;
}

double fs_pipe_bubble_fraction(fs_pipe_schedule sch, int32_t p, int32_t m, int32_t v) {
  if (sch != FS_PIPE_INTERLEAVED) v = 1;
  /* ZB-H1 with equal F, B, W: (p - 1) T of bubble beside 3 m T of work */
  if (sch == FS_PIPE_ZBH1) v = 3;
  return (double)(p - 1) / ((double)v * m + p - 1);
}
