/* Shared harness of the collective tests: lowers one collective on a star
 * (or a given topology and host list), runs it and reports finish time,
 * flow count, data-check verdict, bytes per rank and optionally every flow. */
#ifndef FABRICSIM_TESTS_COLL_HARNESS_H
#define FABRICSIM_TESTS_COLL_HARNESS_H

#include <stdint.h>

#include "fabricsim/coll.h"

/* Defined in src/coll/internal.h; only tests that lower their own
 * implementation need the full type. */
struct fs__coll_algo_impl;

/* Runs of at most this many ranks are tracked (checked by fs_coll_verify). */
#define COLL_RUN_MAX_TRACKED 64

/* One flow of the run, for tests of the schedule. */
typedef struct coll_flow {
  int32_t src, dst; /* first and last node of its route */
  double start_s, bytes;
} coll_flow;

/* What one run gives back. log and log_cap are inputs (zero them if no log
 * is wanted); everything else is output. */
typedef struct coll_run {
  double time_s;  /* finish time of the collective's done task */
  int64_t flows;  /* flows the lowering added */
  int verified;   /* 0 ok (or p too large to track), else FS_E* */
  char why[512];  /* fs_coll_verify's message if verified != 0 */
  double recv[COLL_RUN_MAX_TRACKED]; /* bytes received per rank, if tracked */
  coll_flow *log; /* optional: the first log_cap flows in item order */
  int32_t log_cap, log_n; /* log_n counts every flow, even past log_cap */
} coll_run;

/* Whether the star's switch can aggregate (algorithm inc needs it). */
typedef enum { COLL_SWITCH_PLAIN = 0, COLL_SWITCH_INC = 1 } coll_switch;

/* The star a test file runs on: every link's latency and rate, and its
 * switch. */
typedef struct coll_star {
  int64_t latency_ns;
  double gbps;
  coll_switch sw;
} coll_star;

/* Lowers prm for ranks on hosts[0..p) of t with shortest-path routing,
 * tracked if p <= COLL_RUN_MAX_TRACKED, and runs it. im is the
 * implementation to lower (NULL: the registered one, fs_coll_lower).
 * Returns 0, or the FS_E* code of the first step that failed with err set;
 * out is then only partly written. t is left unchanged. */
int coll_run_on(const fs_topo *t, const struct fs__coll_algo_impl *im, const fs_coll_params *prm,
                const int32_t *hosts, int32_t p, coll_run *out, fs_err *err);

/* The same on a fresh star of p hosts as star describes (rank i on
 * host i). */
int coll_run_star(const coll_star *star, const struct fs__coll_algo_impl *im,
                  const fs_coll_params *prm, int32_t p, coll_run *out, fs_err *err);

/* A closed form that is always 0, for deliberately broken implementations
 * whose time no test looks at. */
double coll_zero_model(const fs_coll_params *prm, int32_t p, int32_t chunks,
                       const fs_coll_cost *cost);

#endif
