/* Pipeline-parallel schedules: the order in which each pipeline device runs
 * the forward and backward passes of the micro-batches over its model
 * chunks. GPipe (Huang et al. 2019): all forwards, then all backwards.
 * 1F1B / PipeDream-Flush (Narayanan et al. 2021): p-s-1 warm-up forwards on
 * stage s, then one forward one backward, then the remaining backwards.
 * Interleaved 1F1B (Narayanan et al. SC'21, Megatron-LM): each device holds v
 * model chunks; virtual stage c*p + s is chunk c of device s; micro-batches
 * go through the devices v times in groups of p.
 * ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024): the
 * backward split into B (input gradients, sent on at once) and W (weight
 * gradients, deferred into what would be bubble); stage s runs, for x = 0,
 * 1, ..., m + p - 2, F(x), B(x - (p - 1 - s)), W(x - (p - 1)), each when its
 * micro-batch is in [0, m): 1F1B's warm-up, the same p micro-batches in
 * flight, and a bubble of (p - 1)(T_F + T_B - T_W) instead of
 * (p - 1)(T_F + T_B + T_W) when T_W <= T_F and m >= p.
 *
 * The DAG around the order: forward (mb, k) follows forward (mb, k-1) on the
 * previous virtual stage; backward (mb, k) follows backward (mb, k+1) and
 * forward (mb, k); each device runs its ops one at a time in this order. */
#ifndef FABRICSIM_PIPELINE_H
#define FABRICSIM_PIPELINE_H

#include <stdint.h>

#include "fabricsim/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fs_pipe_schedule {
  FS_PIPE_1F1B = 0,
  FS_PIPE_INTERLEAVED,
  FS_PIPE_GPIPE,
  FS_PIPE_ZBH1
} fs_pipe_schedule;

/* "1f1b", "interleaved", "gpipe", "zb-h1". 0 or FS_EINVAL. */
int fs_pipe_schedule_parse(const char *name, fs_pipe_schedule *out);
const char *fs_pipe_schedule_name(fs_pipe_schedule s);

/* What part of its pass an op runs: the whole forward or backward, or one
 * half of a split backward (zero-bubble schedules). */
typedef enum fs_pipe_part {
  FS_PIPE_WHOLE = 0,
  FS_PIPE_INPUT_GRAD,  /* B: the input gradients, with the pass's communication */
  FS_PIPE_WEIGHT_GRAD  /* W: the weight gradients only, after its B on the device */
} fs_pipe_part;

typedef struct fs_pipe_op {
  uint8_t backward; /* 0 forward, 1 backward (B and W too) */
  uint8_t part;     /* fs_pipe_part */
  int32_t mb;       /* micro-batch */
  int32_t chunk;    /* model chunk on this device: virtual stage chunk*p + s */
} fs_pipe_op;

/* Checks (schedule, p stages, m micro-batches, v chunks per device):
 * p, m, v >= 1; v == 1 unless interleaved; interleaved needs v >= 2 and m a
 * multiple of p (Megatron-LM's constraint). */
int fs_pipe_check(fs_pipe_schedule sch, int32_t p, int32_t m, int32_t v, fs_err *err);

/* Ops a device runs: 2 m v, or 3 m v when the schedule splits the
 * backward. */
int32_t fs_pipe_ops_per_device(fs_pipe_schedule sch, int32_t m, int32_t v);

/* Writes the fs_pipe_ops_per_device ops device `stage` runs, in order, to
 * out. Returns 0 or FS_EINVAL (as fs_pipe_check). */
int fs_pipe_order(fs_pipe_schedule sch, int32_t p, int32_t m, int32_t v, int32_t stage,
                  fs_pipe_op *out, fs_err *err);

/* Micro-batches whose activations a device holds at most at once under the
 * order (forwards done whose backward, or W when split, has not run: W
 * still reads the layers' inputs), counted in model chunks: the
 * activation-memory multiplier of the schedule. */
int32_t fs_pipe_max_in_flight(const fs_pipe_op *ops, int32_t n);

/* The ideal bubble fraction with uniform stages and free communication:
 * (p-1)/(m+p-1) for GPipe and 1F1B, (p-1)/(v*m+p-1) for interleaved
 * (Narayanan et al. SC'21: the bubble time shrinks by v); for ZB-H1 with
 * T_F = T_B = T_W (Qi et al.'s case), (p-1)/(3m+p-1). */
double fs_pipe_bubble_fraction(fs_pipe_schedule sch, int32_t p, int32_t m, int32_t v);

#ifdef __cplusplus
}
#endif

#endif
