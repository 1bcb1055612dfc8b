/* Private to the sched module: the simulator and one run's state. */
#ifndef FABRICSIM_SCHED_STATE_H
#define FABRICSIM_SCHED_STATE_H

#include "../base/base.h"
#include "internal.h"

/* The schedulers whose ToRs reach each other through OCS circuits
 * (liu-ocs time-shares them; liu-sjf and liu-fifo give them to one job at
 * a time). */
static inline int fs__sched_ocs(fs_sched_kind k) {
  return k == FS_SCHED_LIU_OCS || k == FS_SCHED_LIU_SJF || k == FS_SCHED_LIU_FIFO;
}

struct fs_sched {
  const fs_sched_trace *t;
  const fs_topo *topo;   /* the first distinct job's (every job's is the same) */
  fs_router *router;
  int64_t G;             /* GPUs per server */
  int32_t n_srv, n_leaf;
  int32_t *leaf_of;      /* server -> ToR */
  int32_t *leaf_start, *leaf_srv; /* the servers of each ToR, ascending */
  double *cap;           /* link capacity, bytes/s */
  fs__sched_prof *prof;  /* per distinct job, timed when first needed */
  double prof_wall_s;
  int32_t profiles;
};

enum { JS_FUTURE = 0, JS_QUEUED, JS_SETUP, JS_RUNNING, JS_DONE };

/* A job during a run. */
typedef struct fs__sched_js {
  int st;
  double rem;       /* iterations left */
  double rate;      /* iterations per second now */
  double start, end, act_at, setup;
  int32_t *srv, n_srv; /* its servers */
  int32_t *leaf, n_leaf;
  fs__sched_load load; /* bytes per link per iteration */
  double *dem;         /* per load link: bytes/s while communicating alone */
  int32_t n_res;       /* resources it contends on: links, or ToRs (liu-*) */
  int hold;            /* liu-sjf, liu-fifo: it holds its ToRs' circuits */
  const int32_t *res;
} fs__sched_js;

/* A resource's running jobs (a small vector). */
typedef struct fs__sched_vec {
  int32_t *v, n, cap;
} fs__sched_vec;

typedef struct fs__sched_prio {
  double key;
  int32_t j;
} fs__sched_prio;

typedef struct fs__sched_run {
  fs_sched *s;
  const fs_sched_opts *o;
  fs__sched_js *js;
  int64_t *free;         /* free GPUs per server */
  int32_t *leaf_full;    /* fully free servers per ToR */
  int32_t *leaf_jobs;    /* running jobs spanning several ToRs, per ToR */
  int32_t full_total;
  int32_t *n_free;       /* servers with f free GPUs, f = 0..G */
  double *key;           /* a queued job's key */
  struct leaf_key *leaf_keys;
  int32_t n_res;
  fs__sched_vec *on;     /* per resource: its running jobs */
  /* re-rate scratch */
  int32_t *comp, *stamp, *rstamp, cur;
  double *sp;
  fs__sched_fillbuf fb; /* (liu-ocs: fb.frozen holds each ToR's time left) */
  fs__sched_dem *dl;
  fs__sched_prio *prio;
  double *scratch;       /* n_links, for traffic */
  int32_t *run, nrun, max_running; /* jobs setting up or running */
  int64_t events, rerates, rerated_jobs;
  fs__rng rng;           /* random: the servers drawn */
  int32_t bound;         /* yu-bco: the largest contention a placement may take */
  int32_t bound_used;    /* yu-bco: the largest it took */
  double now;            /* the event's time (liu-sjf, liu-fifo: when circuits are taken) */
} fs__sched_run;

int fs__sched_profile_spec(fs_sched *s, int32_t spec, fs_err *err);
int fs__sched_vec_add(fs__sched_vec *v, int32_t x); /* 0 or FS_ENOMEM */
void fs__sched_vec_del(fs__sched_vec *v, int32_t x);
double fs__sched_iso(const fs__sched_run *R, int32_t j);  /* its iteration alone */
double fs__sched_comm(const fs__sched_run *R, int32_t j); /* its exposed traffic */
/* Re-rates the running jobs connected to seeds (jobs) and rseeds
 * (resources freed), or all of them with full_rerate. 0 or FS_ENOMEM. */
int fs__sched_rerate(fs__sched_run *R, const int32_t *seeds, int32_t ns, const int32_t *rseeds,
                     int32_t nrs); /* 0 or FS_ENOMEM */
int fs__sched_activate(fs__sched_run *R, int32_t j); /* 0 or FS_ENOMEM */
int fs__sched_leaves(fs_sched *s, fs_err *err);
int fs__sched_place(fs__sched_run *R, fs_sched_kind kind, int32_t j); /* 0 or -1: no room */
void fs__sched_unplace(fs__sched_run *R, int32_t j);

#endif
