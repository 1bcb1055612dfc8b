/* Private to the sched module: what its files share. */
#ifndef FABRICSIM_SCHED_INTERNAL_H
#define FABRICSIM_SCHED_INTERNAL_H

#include <stdint.h>

#include "../base/json.h"
#include "fabricsim/route.h"
#include "fabricsim/sched.h"
#include "fabricsim/train.h"

/* trace.c */
int fs__sched_fill_job(const fs__jctx *c, const char *P, const cJSON *m, const cJSON *tr,
                       const cJSON *pa, fs_sched_job *j);
void fs__sched_sort(fs_sched_trace *t);

/* A distinct job timed alone (profile.c). */
typedef struct fs__sched_prof {
  int done;
  double iter_s;  /* its iteration alone (train, packed in whole servers) */
  double comm_s;  /* of which exposed traffic between servers (dp, pp, ep, cp) */
  /* bytes one GPU of stage 0 sends per iteration, per kind (work.h) */
  double dp_wire, pp_wire, ep_wire, cp_wire;
  /* what it asked of its busiest link where it was timed, over the link's
   * capacity (at least 1): per M (aligned), per T (average); set by the
   * first run that places it across servers */
  int over_done;
  double over_aligned, over_average;
} fs__sched_prof;
int fs__sched_profile(const fs_job *job, fs__sched_prof *out, fs_err *err);

/* A job's bytes per link per iteration at a placement: host_of[g] for each
 * of its GPUs. links/bytes are malloc'd, n entries, ascending link id.
 * scratch: n_links doubles, zero on entry and on return. */
typedef struct fs__sched_load {
  int32_t n;
  int32_t *links;
  double *bytes;
} fs__sched_load;
int fs__sched_traffic(const fs_job *job, const fs__sched_prof *p, const int32_t *host_of,
                      fs_router *r, uint64_t key, double *scratch, fs__sched_load *out,
                      fs_err *err);

/* One component's progressive filling (share.c): jobs 0..n with their
 * demand lists dl[j] over resources, capacity cap[res]; fills s[j].
 * The buffer's active, frozen (doubles) and mark (int32) are indexed by
 * resource and zero on entry and return; its lists grow as needed. 0 or
 * FS_ENOMEM. */
typedef struct fs__sched_dem {
  int32_t n;
  const int32_t *res;
  double *dem; /* bytes/s */
} fs__sched_dem;
typedef struct fs__sched_fillbuf {
  int32_t *start, *res, *live, *jobs, *touched;
  size_t cap_start, cap_res, cap_live, cap_jobs, cap_touched;
  double *active, *frozen;
  int32_t *mark;
} fs__sched_fillbuf;
int fs__sched_fill(int32_t n, const fs__sched_dem *dl, const double *cap, double *s,
                   fs__sched_fillbuf *b);
void fs__sched_fillbuf_free(fs__sched_fillbuf *b); /* frees every array */

#endif
