/* Parameter sweeps (`fabricsim sweep`, docs/formats.md "Sweeps").
 *
 * A sweep file names a base job or scenario and axes: JSON paths into it
 * with the values to try, combined as a grid (every combination, the first
 * axis slowest) or zipped (the i-th value of every axis). Each point is the
 * base with its axis values set, run in-process as `fabricsim train` or
 * `sim` would, and reduced to a fixed set of figures. Results go to SQLite
 * (table `points`: one column per axis named by its path, status, error,
 * the figures); a re-run skips the points already done or failed, so a
 * killed sweep resumes where it stopped. */
#ifndef FABRICSIM_SWEEP_H
#define FABRICSIM_SWEEP_H

#include <stdint.h>
#include <stdio.h>

#include "fabricsim/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fs_sweep fs_sweep;

/* What each point runs: `train`, `sim`, `wan train` (a WAN file:
 * provisioning and the job's cross-site all-reduce), `wan dynamic` (a
 * WAN file's traffic: blocking at its load) or `jobs` (a job trace, or a
 * generated one, under its "scheduler": sched.h). */
typedef enum fs_sweep_kind {
  FS_SWEEP_TRAIN = 0,
  FS_SWEEP_SIM,
  FS_SWEEP_WAN_TRAIN,
  FS_SWEEP_WAN_DYNAMIC,
  FS_SWEEP_JOBS
} fs_sweep_kind;

enum { FS_SWEEP_MAX_FIGS = 16, FS_SWEEP_ERR = 480 };

/* What one point gives: ok, or the error that stopped it. */
typedef struct fs_sweep_result {
  int32_t point;
  int32_t ok;
  double wall_s;
  double fig[FS_SWEEP_MAX_FIGS];
  char error[FS_SWEEP_ERR];
} fs_sweep_result;

/* Loads and checks a sweep file: the base exists and parses, every axis is
 * a non-empty array whose path exists in the base (its last key may be new
 * in an existing object) and whose first value gives a point the parser
 * accepts at that path, zipped axes have one length. Errors name the file,
 * the JSON path and the value (FS_EINVAL: exit 2). */
int fs_sweep_load(const char *path, fs_sweep **out, fs_err *err);
void fs_sweep_free(fs_sweep *sw); /* NULL: no-op */

fs_sweep_kind fs_sweep_kind_of(const fs_sweep *sw);
int32_t fs_sweep_n_points(const fs_sweep *sw);
int32_t fs_sweep_n_axes(const fs_sweep *sw);
const char *fs_sweep_axis_path(const fs_sweep *sw, int32_t axis);
/* Point p's value on an axis as compact JSON text (the caller frees it),
 * NULL when out of memory. */
char *fs_sweep_axis_value(const fs_sweep *sw, int32_t point, int32_t axis);
/* A stable digest of the sweep's definition (base text and axes): a
 * database built for another sweep is refused. */
uint64_t fs_sweep_digest(const fs_sweep *sw);

int32_t fs_sweep_n_figs(const fs_sweep *sw);
const char *fs_sweep_fig_name(const fs_sweep *sw, int32_t fig);

/* Runs point p in this process; a point that fails (bad parallelism, a
 * stalled simulation, ...) gives ok = 0 and its message, not an error.
 * Returns 0, or FS_ENOMEM. */
int fs_sweep_run_point(const fs_sweep *sw, int32_t p, fs_sweep_result *out);

/* ---- the results database (SQLite) ---- */
typedef struct fs_sweep_db fs_sweep_db;

/* Opens or creates the database for sw: creates `points` and a `sweep`
 * table with the digest, or checks the digest of an existing one. */
int fs_sweep_db_open(const char *file, const fs_sweep *sw, fs_sweep_db **out, fs_err *err);
void fs_sweep_db_close(fs_sweep_db *db);
/* Points not yet done or failed, in order, into todo (n_points entries);
 * returns their count or a negative code. */
int32_t fs_sweep_db_todo(fs_sweep_db *db, int32_t *todo, fs_err *err);
/* How many points have failed (this run's and earlier runs'); or a
 * negative code. */
int32_t fs_sweep_db_failed(fs_sweep_db *db, fs_err *err);
/* Records one result in its own transaction. */
int fs_sweep_db_put(fs_sweep_db *db, const fs_sweep_result *r, fs_err *err);
/* Writes the table as CSV (a header, then one row per point) to f (the
 * caller opens and closes it: fabricsim/output.h for a file). 0, or an
 * FS_E* code with err set on a database failure. */
int fs_sweep_db_csv(fs_sweep_db *db, FILE *f, fs_err *err);

#ifdef __cplusplus
}
#endif

#endif
