/* A cluster with jobs arriving over time (docs/model-sched.md): a job
 * trace (arrival, model, parallelism, GPUs, iterations; docs/formats.md,
 * "Job traces") run on one fabric by a scheduler that orders the queue,
 * places each job in servers and shares the network among the jobs that
 * run side by side.
 *
 * Each distinct job (model, training, parallelism) is timed once, alone,
 * by the training engine (train.h) on the cluster's topology: its
 * iteration and the part of it spent waiting on traffic between servers.
 * While it runs beside others, its traffic between servers (its rings and
 * pipeline sends, routed on the fabric from where it is placed) shares the
 * links with theirs by weighted max-min (progressive filling), and only
 * its communication stretches. A change of the set of running jobs re-rates
 * only the jobs that share a link, directly or through others, with a job
 * that started or ended.
 *
 * Schedulers (fs_sched_kind): FIFO, shortest job first, a
 * contention-oblivious first fit, Yu et al. 2022's smallest job first with
 * balanced contention and overhead, and Liu et al. 2020's online OCS
 * scheduling (each ToR's circuits time-shared by the jobs crossing it,
 * shortest weighted remaining time first, a reconfiguration delay when a
 * ToR's circuits switch between jobs). docs/model-sched.md says where each
 * is simplified. */
#ifndef FABRICSIM_SCHED_H
#define FABRICSIM_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "fabricsim/err.h"
#include "fabricsim/work.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fs_sched_kind {
  FS_SCHED_FIFO = 0,   /* arrival order, head-of-line blocking, packed placement */
  FS_SCHED_SJF,        /* shortest estimated duration first (skips what does not fit) */
  FS_SCHED_OBLIVIOUS,  /* arrival order, first-fit servers, links ignored */
  FS_SCHED_YU_BCO,     /* Yu et al. MobiHoc 2022, SJF-BCO style */
  FS_SCHED_LIU_OCS,    /* Liu et al. KBS 2020, SWRTF on time-shared OCS circuits */
  /* the papers' baselines (docs/model-sched.md, "The papers' headline shapes") */
  FS_SCHED_RANDOM,     /* Yu's RAND: arrival order, head blocks, random free servers */
  FS_SCHED_LS,         /* Yu's LS: list scheduling, arrival order, any job that fits
                          starts, first-fit servers */
  FS_SCHED_LIU_SJF,    /* Liu's SJF: OCS circuits held by one job at a time, start to end,
                          shortest job first */
  FS_SCHED_LIU_FIFO,   /* Liu's Baraat (FIFO): the same circuits, arrival order */
  FS_SCHED_N
} fs_sched_kind;
/* "fifo", "sjf", "oblivious", "yu-bco", "liu-ocs", "random", "ls", "liu-sjf", "liu-fifo" */
const char *fs_sched_kind_name(fs_sched_kind k);
int fs_sched_kind_parse(const char *name, fs_sched_kind *out); /* 0 or FS_EINVAL */

/* How the communication of jobs sharing a link meets (docs/model-sched.md,
 * "Contention"): aligned, their communication phases coincide (identical
 * jobs started together; pessimistic for unrelated jobs): weighted
 * max-min of their communication speeds, an iteration C + M / s; average,
 * their phases interleave perfectly: weighted max-min of their mean rates
 * (bytes per iteration over the iteration), an iteration T / s, a link
 * slowing its jobs only when its mean load would exceed its capacity
 * (optimistic). */
typedef enum fs_sched_contention {
  FS_CONTENTION_ALIGNED = 0,
  FS_CONTENTION_AVERAGE
} fs_sched_contention;
const char *fs_sched_contention_name(fs_sched_contention c); /* "aligned", "average" */
int fs_sched_contention_parse(const char *name, fs_sched_contention *out); /* 0 or FS_EINVAL */

/* One job of a trace, as read (or generated). The three sections are kept
 * as compact JSON text so that a trace is written back as it was read. */
typedef struct fs_sched_job {
  char id[64];
  double arrival_s;
  int64_t gpus, iterations;
  char *model;       /* a preset name as a JSON string, or an object */
  char *training;    /* an object, or NULL: the default (docs/formats.md) */
  char *parallelism; /* an object (dp filled in from gpus when absent) */
  int32_t spec;      /* index of its distinct (model, training, parallelism) */
} fs_sched_job;

typedef struct fs_sched_trace {
  char file[256];
  char *description;  /* NULL if none */
  char *cluster;      /* the "cluster" section, compact JSON */
  int64_t gpus;       /* the cluster's GPUs (its topology's hosts) */
  int64_t gpus_per_server;
  double ocs_reconfig_s; /* liu-ocs: a circuit reconfiguration */
  fs_sched_kind scheduler; /* the file's "scheduler" (fifo if none): what a
                              sweep point or `jobs` without --scheduler runs */
  fs_sched_contention contention; /* the file's "contention" (aligned if none) */
  int32_t n_jobs;
  fs_sched_job *jobs;  /* in arrival order (stable on ties) */
  int32_t n_specs;
  fs_job **specs;      /* the distinct jobs as train reads them (owned) */
} fs_sched_trace;

/* Parses a trace (NUL-terminated text of len bytes; file labels errors),
 * validates every job as `train` would (each distinct one built with
 * fs_job_parse) and refuses a job larger than the cluster. A file may give
 * "generate" ({"jobs", "gpus", "seed", "load"}: fs_sched_generate's
 * options) instead of "cluster" and "jobs". FS_EINVAL with err "FILE:
 * $.jobs[3].gpus: what, got VALUE", or FS_ENOMEM. */
int fs_sched_trace_parse(const char *text, size_t len, const char *file, fs_sched_trace **out,
                         fs_err *err);
int fs_sched_trace_load(const char *path, fs_sched_trace **out, fs_err *err); /* FS_EIO too */
void fs_sched_trace_free(fs_sched_trace *t); /* NULL is a no-op */

/* The generator (docs/model-sched.md, "Generator"): n jobs on a cluster of
 * `gpus` GPUs (a multiple of 64 in [128, 65536]: 8-GPU servers, 8 per ToR,
 * a leaf-spine, 2:1 unless oversub says), sizes and durations drawn from the shape of published
 * cluster traces, Poisson arrivals at `load` (offered GPU-seconds per
 * available GPU-second), each distinct job timed alone by the engine to
 * turn its duration into iterations. Deterministic in seed. FS_EINVAL
 * naming the option, or FS_ENOMEM. */
typedef struct fs_sched_gen_opts {
  int32_t jobs;
  int64_t gpus;
  uint64_t seed;
  double load;    /* (0, 10]; 0: 0.8 */
  int32_t oversub; /* a ToR's host bandwidth over its uplinks: 1, 2, 4, 8,
                      16, 32 or 64 (64 / oversub spines); 0: 2 */
} fs_sched_gen_opts;
int fs_sched_generate(const fs_sched_gen_opts *o, fs_sched_trace **out, fs_err *err);

typedef struct fs_sched_opts {
  fs_sched_kind kind;
  int full_rerate; /* re-rate every running job at every change (checks the
                      incremental re-rate; same results) */
  void (*progress)(void *ctx, double done); /* fraction of jobs finished */
  void *ctx;
  fs_sched_contention contention; /* aligned unless set (liu-ocs: unused) */
} fs_sched_opts;

typedef struct fs_sched_job_result {
  double arrival_s, start_s, end_s;
  double jct_s, queue_s;  /* end - arrival, start - arrival */
  double iso_iter_s;      /* the job's iteration alone */
  double comm_s;          /* of which waiting on traffic between servers */
  double mean_iter_s;     /* (end - start - setup) / iterations */
  double setup_s;         /* liu-ocs: circuits set up at the start; liu-sjf, liu-fifo:
                             from its start until its circuits are up (waiting for
                             them, then the reconfiguration) */
  int32_t servers, leaves;/* where it ran: servers (a part of one for a
                             job smaller than a server), ToRs spanned */
  int32_t first_server;
} fs_sched_job_result;

typedef struct fs_sched_result {
  fs_sched_kind kind;
  fs_sched_contention contention;
  int32_t n_jobs;
  fs_sched_job_result *jobs; /* the trace's order */
  double jct_mean_s, jct_p99_s, queue_mean_s, queue_p99_s, makespan_s;
  double slowdown_mean;  /* mean over jobs of mean_iter_s / iso_iter_s */
  double gpu_util;       /* busy GPU-seconds / (GPUs x makespan) */
  double link_util_mean, link_util_max; /* fabric links (a switch at an end),
                                           bytes / (capacity x makespan) */
  int32_t max_running, profiles;
  int32_t bound;         /* yu-bco: the contention bound its search chose (at most
                            this many jobs across ToRs already on a ToR it takes),
                            -1: none (unbounded was best, or another scheduler) */
  int64_t events, rerates, rerated_jobs;
  double wall_s, profile_wall_s; /* the run; timing the distinct jobs alone */
} fs_sched_result;

/* A simulator of one trace: the distinct jobs' profiles are timed when
 * first needed and kept, so several schedulers share them. */
typedef struct fs_sched fs_sched;
int fs_sched_new(const fs_sched_trace *t, fs_sched **out, fs_err *err); /* t outlives it */
int fs_sched_run(fs_sched *s, const fs_sched_opts *o, fs_sched_result *out, fs_err *err);
void fs_sched_result_free(fs_sched_result *r); /* frees jobs; NULL is a no-op */
void fs_sched_free(fs_sched *s);               /* NULL is a no-op */

/* The fluid share model on its own (docs/model-sched.md, "Contention"):
 * n jobs with comm-phase demands dem[j * n_res + r] (bytes/s on resource
 * r while communicating) over resources of capacity cap[r]: weighted
 * max-min by progressive filling of each job's speed s_j in (0, 1]. Fills
 * s[0..n). 0 or FS_ENOMEM. */
int fs_sched_share(int32_t n, int32_t n_res, const double *dem, const double *cap, double *s,
                   fs_err *err);

#ifdef __cplusplus
}
#endif

#endif
