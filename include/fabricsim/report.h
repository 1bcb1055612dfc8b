/* Writers of results, for people and for other tools: a scenario's JSON
 * (the default output of `fabricsim sim`), per-flow CSV, trace and summary;
 * a training iteration's summary, JSON and trace; the tables and JSON of
 * the other subcommands (topo, route, ocs, wan, coll, chakra). Formats are
 * in docs/formats.md. All output is deterministic: same run, same bytes.
 * Each writes to a FILE * and leaves its inputs unchanged. */
#ifndef FABRICSIM_REPORT_H
#define FABRICSIM_REPORT_H

#include <stdio.h>

#include "fabricsim/chakra.h"
#include "fabricsim/coll.h"
#include "fabricsim/ocs.h"
#include "fabricsim/routeopt.h"
#include "fabricsim/scenario.h"
#include "fabricsim/sched.h"
#include "fabricsim/topoopt.h"
#include "fabricsim/tpu.h"
#include "fabricsim/train.h"
#include "fabricsim/wan.h"
#include "fabricsim/wan_risk.h"
#include "fabricsim/wan_sdm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each returns 0, or FS_EIO if writing failed. sc must have run. */
int fs_report_sim_json(FILE *f, const fs_scenario *sc);
int fs_report_sim_csv(FILE *f, const fs_scenario *sc);

/* Perfetto / Chrome trace of the run: one track group per host that sends
 * or computes, its tasks and its outgoing flows as slices. */
int fs_report_sim_trace(FILE *f, const fs_scenario *sc);

typedef struct fs_sim_summary {
  double makespan_s;
  double fct_mean_s, fct_p50_s, fct_p99_s, fct_max_s; /* flow completion */
  double max_link_util;      /* busiest link: bytes*8 / (capacity*makespan) */
  double total_bytes;
  int32_t flows, tasks, links_used;
} fs_sim_summary;

int fs_report_summarize(const fs_scenario *sc, fs_sim_summary *out);
int fs_report_sim_summary(FILE *f, const fs_scenario *sc);

/* `fabricsim train`: the summary a person reads (iteration time, throughput,
 * breakdown, the per-collective table) and its JSON, of job's result r.
 * 0, or FS_EIO if writing failed. */
int fs_report_train_text(FILE *f, const fs_job *job, const fs_train_result *r);
int fs_report_train_json(FILE *f, const fs_job *job, const fs_train_result *r);
/* Several jobs sharing a cluster (fs_cluster): each job's summary under a
 * header naming it and its GPUs, or {"jobs": [each job's JSON]}. 0, or
 * FS_EIO if writing failed (the jobs after a failed one not written). */
int fs_report_cluster_text(FILE *f, fs_job *const *jobs, int32_t n, const fs_train_result *res);
int fs_report_cluster_json(FILE *f, fs_job *const *jobs, int32_t n, const fs_train_result *res);
/* Perfetto / Chrome trace of job's iteration tr (after fs_train_run): one
 * track group per pipeline stage (its data-parallel rank 0 device):
 * compute, TP, EP slices, pipeline sends and DP collectives; then the mean
 * utilisation of each group of links (by the kinds of their ends). 0,
 * FS_ENOMEM or FS_EIO. */
int fs_report_train_trace(FILE *f, const fs_job *job, const fs_train *tr);
/* Several jobs sharing one cluster (fs_cluster_job's DAGs, n >= 1): each
 * job's stages as its own processes named "job K (FILE): stage S ...",
 * then one network process of the shared simulation's link groups. With
 * one job, fs_report_train_trace's bytes. */
int fs_report_cluster_trace(FILE *f, fs_job *const *jobs, const fs_train *const *trs,
                            int32_t n);

/* `fabricsim topo`: the topology t's size, switch tiers and radix, link
 * speeds, hop counts, bisection (against fs_topo_bisection_formula) and cost
 * estimate, from s (fs_topo_stats_compute) and c (fs_topo_cost_compute),
 * as aligned text or one JSON object. 0; FS_ENOMEM with err set and nothing
 * written; or FS_EIO (err set) if writing failed. */
int fs_report_topo_text(FILE *f, const fs_topo *t, const fs_topo_stats *s,
                        const fs_topo_cost *c, fs_err *err);
int fs_report_topo_json(FILE *f, const fs_topo *t, const fs_topo_stats *s,
                        const fs_topo_cost *c, fs_err *err);

/* `fabricsim route`: one column of the comparison, a routing's result. */
typedef struct fs_report_route_column {
  char name[24];       /* "greedy", "ecmp-worst", ... */
  int ok;              /* 0: not run, note says why */
  char note[512];
  fs_routeopt_metric m;
  double *job_s;       /* n_jobs: each job's time under this routing */
  double opt_time_s;   /* the optimiser's wall time */
  uint64_t seed;       /* shown for ecmp-* and random */
} fs_report_route_column;

typedef struct fs_report_route {
  const fs_routeopt_traffic *tr;
  const fs_topo *t;
  fs_routeopt_problem_opts po; /* the candidate paths */
  const fs_report_route_column *cols;
  int32_t n_cols;
  const double *ideal_s; /* n_jobs: each job's time on the non-blocking fabric */
  int32_t ecmp_seeds;    /* ECMP's sample, 0 if ECMP was not run */
  int timing;            /* also the optimisers' wall times */
} fs_report_route;

/* The metrics of each column side by side, a table or one JSON object;
 * the HTML page draws them (and the first 8 jobs' times) as bars. 0, or
 * FS_EIO if writing failed (html: also FS_ENOMEM). */
int fs_report_route_table(FILE *f, const fs_report_route *r);
int fs_report_route_json(FILE *f, const fs_report_route *r);
int fs_report_route_html(FILE *f, const fs_report_route *r);

/* `fabricsim ocs schedule`: one row, an algorithm's result at one delay. */
typedef struct fs_report_ocs_row {
  const char *algo; /* "bvn", "solstice", "static", "bvn+eps", "solstice+eps" */
  int hybrid;       /* with the EPS beside the circuits: the EPS columns */
  fs_ocs_result r;
} fs_report_ocs_row;

/* Which configurations a hybrid run leaves to the EPS (fs_ocs_params). */
typedef enum fs_report_eps_threshold {
  FS_REPORT_EPS_AUTO,  /* eps_balance */
  FS_REPORT_EPS_DELAY, /* live for less than the reconfiguration delay */
  FS_REPORT_EPS_FIXED  /* live for less than threshold_s */
} fs_report_eps_threshold;

typedef struct fs_report_ocs_schedule {
  const char *file;     /* the traffic file, as given */
  int32_t nodes, phases;
  fs_ocs_params p;      /* gbps, degree, all_stop, eps_residual_only; delay_s of one run */
  int hybrid;           /* hybrid rows present: eps_gbps and the threshold */
  double eps_gbps;
  fs_report_eps_threshold threshold;
  double threshold_s;
  const fs_report_ocs_row *rows; /* n_rows; the sweep: n_delays x n_rows, delay-major */
  int32_t n_rows;
  int32_t static_row;   /* the static row's index (vs_static), -1 if none */
  const double *delays_s; /* the sweep's n_delays delays */
  int32_t n_delays;
} fs_report_ocs_schedule;

/* The rows at one delay, a table or one JSON object; the sweep, one line
 * (or object) per delay. 0, or FS_EIO if writing failed. */
int fs_report_ocs_schedule_table(FILE *f, const fs_report_ocs_schedule *s);
int fs_report_ocs_schedule_json(FILE *f, const fs_report_ocs_schedule *s);
int fs_report_ocs_sweep_table(FILE *f, const fs_report_ocs_schedule *s);
int fs_report_ocs_sweep_json(FILE *f, const fs_report_ocs_schedule *s);
/* The schedule --report draws: algorithm `algo` (NULL: static only, nothing
 * drawn), each phase decomposed and executed in turn, its segments shifted
 * to start where the phase before it ended. */
typedef struct fs_report_ocs_drawing {
  const char *algo;
  const fs_ocs_seg *segs;
  size_t n_segs;
  const char *const *phase_names; /* n_phases (s->phases) */
  const double *phase_start_s, *phase_bound_s;
  const size_t *phase_first_seg; /* n_phases + 1: phase ph's segments are [first[ph], first[ph+1]) */
  double t_end;
} fs_report_ocs_drawing;
/* The HTML page of one delay's rows (the first 8) and the drawing, or of
 * the sweep (d NULL): completion against the delay per row. 0, FS_ENOMEM
 * or FS_EIO. */
int fs_report_ocs_schedule_html(FILE *f, const fs_report_ocs_schedule *s,
                                const fs_report_ocs_drawing *d);

/* `fabricsim ocs topo`: one fabric of the comparison. */
typedef struct fs_report_ocs_topo_row {
  char name[24];   /* "topoopt", "random", "exact", "fattree", ... */
  char desc[200];
  int trained;     /* iter_s is an iteration's time (else not run) */
  double iter_s, usd, watts;
  double matrix_s; /* the optimiser's objective, NaN for electrical fabrics */
  char note[600];  /* why a row was not run or trained, or "" */
} fs_report_ocs_topo_row;

typedef struct fs_report_ocs_topo {
  const char *file;             /* the job file, as given */
  const fs_topoopt_traffic *tr; /* the job's server matrices */
  const fs_topoopt_graph *g;    /* the TopoOpt fabric (rows[0]) */
  double gbps;                  /* per optical port */
  const char *sw;               /* "patch" or "ocs" */
  const fs_report_ocs_topo_row *rows; /* rows[0] is topoopt: the ratios' base */
  int32_t n_rows;
} fs_report_ocs_topo;

/* The fabric found and the rows, a table or one JSON object. 0, or FS_EIO
 * if writing failed. */
int fs_report_ocs_topo_table(FILE *f, const fs_report_ocs_topo *o);
int fs_report_ocs_topo_json(FILE *f, const fs_report_ocs_topo *o);

/* `fabricsim ocs tpu`: what was asked and found for one slice. */
typedef struct fs_report_ocs_tpu {
  fs_tpu_params p;
  int32_t shape[3]; /* chips, as asked */
  int twisted;
  int32_t grid[3];  /* the static pod's cube torus */
  int placed_ocs, placed_static, have_slice;
  int32_t need, free_cubes;
  int32_t *static_cubes; /* need: the static placement's cubes */
  fs_tpu_slice slice;    /* have_slice: the OCS placement */
  fs_tpu_reconfig rec;
  int64_t ports_used;
  int have_stats;        /* the slice's graph metrics below */
  fs_topo_stats st;
  int32_t diam_measured, diam_torus;
  double bis_measured_bps, bis_torus_bps;
  int64_t bis_torus_links;
  int64_t cuts[3], cut_min, plain_min; /* axis-halving cuts, links */
  fs_tpu_cost cost;
  int mix;               /* the job mix ran: mr */
  fs_tpu_mix_result mr;
  int coll;              /* a collective ran on the slice: cp, cr, mode */
  fs_coll_params cp;
  fs_coll_result cr;
  fs_route_mode mode;
} fs_report_ocs_tpu;

/* The slice, a table or one JSON object. 0, or FS_EIO if writing failed. */
int fs_report_ocs_tpu_table(FILE *f, const fs_report_ocs_tpu *r);
int fs_report_ocs_tpu_json(FILE *f, const fs_report_ocs_tpu *r);

/* `fabricsim wan provision`: every demand of plan p and its lightpaths, the
 * blocking and the spectrum used, a table or one JSON object. 0, or FS_EIO
 * if writing failed. */
int fs_report_wan_plan_table(FILE *f, const fs_wan_plan *p);
int fs_report_wan_plan_json(FILE *f, const fs_wan_plan *p);

/* `fabricsim wan train`: the job's all-reduce on the plan before any cut
 * and, after cutting fibre `cut`, on the restored plan. */
typedef struct fs_report_wan_train {
  const char *file;                 /* the WAN file, as given */
  const fs_wan_plan *before;        /* provisioned without the cut */
  const fs_wan_train_result *r0;    /* fs_wan_train on before */
  const fs_wan_plan *after;         /* fs_wan_restore's plan, NULL: no cut */
  const fs_wan_train_result *r1;    /* on after (unread if after is NULL) */
  int32_t cut;                      /* the fibre cut (with after) */
} fs_report_wan_train;

/* Per phase, simulated and closed form, and the slowdown the cut causes
 * (JSON also the plan before the cut). 0, or FS_EIO if writing failed. */
int fs_report_wan_train_table(FILE *f, const fs_report_wan_train *t);
int fs_report_wan_train_json(FILE *f, const fs_report_wan_train *t);

/* `fabricsim wan place`: the ring chosen and the file-order baseline, each
 * with its closed-form cross-site phase and, where it fits, its simulated
 * all-reduce (fs_wan_train on its plan). */
typedef struct fs_report_wan_place {
  const char *file;
  const fs_wan *w;
  const fs_wan_place_result *r;
  const fs_wan_train_result *chosen, *baseline; /* NULL: not simulated (a pair blocked) */
  const fs_wan_agg_result *agg; /* --aggregator: each site as the server, or NULL */
  int sdm;                      /* placed on multi-core fibres: the closed form only */
} fs_report_wan_place;
int fs_report_wan_place_table(FILE *f, const fs_report_wan_place *p);
int fs_report_wan_place_json(FILE *f, const fs_report_wan_place *p);

/* `fabricsim coll`: one collective over a sweep of sizes, nccl-tests
 * style. Rows are written as they are simulated (a long sweep shows its
 * progress; a failed one keeps its rows), so the format is a field and the
 * output a head, rows and a tail. */
typedef enum fs_report_coll_format {
  FS_REPORT_COLL_TABLE,
  FS_REPORT_COLL_JSON,
  FS_REPORT_COLL_CSV,
  FS_REPORT_COLL_NCCL_TESTS /* nccl-tests' own table, column for column */
} fs_report_coll_format;

/* What nccl-tests' header states of a run (its "# nThread ..." line), as
 * the command line gave it, and the ranks' hosts for its device lines. */
typedef struct fs_report_coll_nccl {
  int32_t nthreads, ngpus;      /* -t, -g (or 1 and the ranks) */
  double min_bytes, max_bytes;  /* -b, -e (or the sweep's ends) */
  double step;                  /* -f's factor, or -i's bytes */
  int step_is_factor;
  int32_t warmup, iters, agg_iters, check, graph, unalign;
  const char *noted;            /* the flags that change nothing here, or NULL */
  const int32_t *hosts;         /* rank -> host, ranks entries */
} fs_report_coll_nccl;

typedef struct fs_report_coll {
  fs_report_coll_format format;
  const fs_coll_params *prm; /* op; algo (AUTO: each row's is the tuner's) */
  int32_t ranks;
  const fs_topo *t;
  const char *routing;       /* as given */
  fs_coll_cost cost;         /* the closed form's, between ranks 0 and 1 */
  fs_coll_tune_policy tune;
  const fs_report_coll_nccl *nccl; /* FS_REPORT_COLL_NCCL_TESTS's header */
  /* The rows' bus bandwidths so far (GB/s) and their number, for
   * nccl-tests' "# Avg bus bandwidth" tail: set by fs_report_coll_row. */
  double busbw_sum;
  int64_t busbw_n;
} fs_report_coll;

typedef struct fs_report_coll_size {
  double bytes;      /* nccl-tests' size (fs_coll_nccl_tests_size); 0: not run */
  fs_coll_result res;
  double model_s;    /* the closed form's time */
  const char *proto; /* the NCCL model's protocol, NULL: not shown */
  int cached;        /* the algorithm came from the tuner's cache (marked *) */
  double count;      /* nccl-tests' count: elements per rank (coll.h) */
  const char *type;  /* the element type's name (fs_coll_dtype_name) */
  const char *redop; /* nccl-tests' redop column (fs_coll_redop_column) */
  int32_t root;      /* the root, -1 for an op without one (fs_coll_rooted) */
} fs_report_coll_size;

/* The header (the table's comment lines, JSON's opening, CSV's columns,
 * nccl-tests' header); the table's note on the closed form of a ring over
 * whole servers, with its channels and cost (nothing in the other
 * formats); one row (first: the sweep's first), which also adds its bus
 * bandwidth to c's sum; the tail (JSON's closing, nccl-tests' summary
 * lines). Each 0, or FS_EIO if writing failed. */
int fs_report_coll_head(FILE *f, const fs_report_coll *c);
int fs_report_coll_ring_model(FILE *f, const fs_report_coll *c, int32_t channels,
                              const fs_coll_cost *cost);
int fs_report_coll_row(FILE *f, fs_report_coll *c, const fs_report_coll_size *r, int first);
int fs_report_coll_tail(FILE *f, const fs_report_coll *c);
/* The HTML page of the sweep's n rows, one series per algorithm (the first
 * 32). 0, FS_ENOMEM or FS_EIO. */
int fs_report_coll_html(FILE *f, const fs_report_coll *c, const fs_report_coll_size *rows,
                        size_t n);

/* `fabricsim chakra`: a replay of Chakra traces (fs_chakra_run). */
typedef struct fs_report_chakra {
  const char *prefix;       /* the traces' path prefix, as given */
  int32_t ranks;
  fs_chakra_stats stats;
  double makespan_s;
  const double *finish_s;   /* ranks: when each rank finished */
  const fs_chakra_coll *colls; /* the kinds of collective, their algorithm and time */
  int32_t n_colls;
} fs_report_chakra;

/* The node counts, makespan, each kind of collective (the algorithm run,
 * whether --algo or NCCL's model chose it, mean time, bus bandwidth) and
 * each rank's finish, as text or one JSON object. 0, or FS_EIO if writing
 * failed. */
int fs_report_chakra_text(FILE *f, const fs_report_chakra *c);
int fs_report_chakra_json(FILE *f, const fs_report_chakra *c);

/* `fabricsim wan protect`: per protection scheme its plan (blocking,
 * spectrum, each demand's availability), the job's availability, iteration
 * time and expected completion time under failures, and a failure's
 * outcome. */
typedef struct fs_report_wan_protect_scheme {
  const fs_wan_pplan *plan;
  const fs_wan_job_risk *job;         /* NULL: the file has no job */
  const fs_wan_failure_result *fail;  /* NULL: no failure asked */
  double fail_iter_s;                 /* the job's iteration after it, NAN: not connected */
} fs_report_wan_protect_scheme;

typedef struct fs_report_wan_protect {
  const char *file;
  const fs_wan *w;
  const fs_wan_risks *risks;
  int32_t n_schemes;
  const fs_report_wan_protect_scheme *schemes;
  const char *failure; /* "fibre A-B", "SRLG NAME"; NULL: none */
  int64_t cells_none;  /* cells unprotected provisioning holds: the ratio's base */
} fs_report_wan_protect;

/* A table or one JSON object. 0, or FS_EIO if writing failed. */
int fs_report_wan_protect_table(FILE *f, const fs_report_wan_protect *r);
int fs_report_wan_protect_json(FILE *f, const fs_report_wan_protect *r);
/* `fabricsim wan dynamic`: per offered load, the requests counted, the
 * blocking probability and bandwidth blocking with their 95 % confidence
 * half-widths (and the Kaufman-Roberts closed form where it applies), the
 * blocking by cause, the fragmentation, the occupancy per band and per
 * core; as a table, JSON or CSV (one row per load). */
typedef struct fs_report_wan_dynamic {
  const char *file;
  const fs_wan *w;
  const fs_wan_sdm *s;   /* the description the run used */
  fs_wan_policy policy;
  int32_t k;
  int64_t requests;      /* arrivals per seed */
  uint64_t seed;
  int32_t n;
  const fs_wan_dyn_point *points;
  const char *job;      /* "shared", "slice": the job's ring held throughout; NULL: none */
  int32_t job_demands;  /* its ring's demands */
  int32_t slice_first, slice_count; /* the slice, with job "slice" */
} fs_report_wan_dynamic;
int fs_report_wan_dynamic_table(FILE *f, const fs_report_wan_dynamic *d);
int fs_report_wan_dynamic_json(FILE *f, const fs_report_wan_dynamic *d);
int fs_report_wan_dynamic_csv(FILE *f, const fs_report_wan_dynamic *d);
/* Its HTML page (fabricsim/html.h pieces): the table; with two loads or
 * more, blocking (and the closed form where there is one), bandwidth
 * blocking and fragmentation against the load; occupancy per band and per
 * core at the highest load. 0, FS_ENOMEM or FS_EIO. */
int fs_report_wan_dynamic_html(FILE *f, const fs_report_wan_dynamic *d);

/* `fabricsim jobs` (sched.h): per scheduler r[0..n) the job completion
 * times (mean, p99), queueing, makespan, slowdown, GPU and link
 * utilisation and the engine's counters, as a table (and each job, for a
 * trace of at most 20), JSON (every job) or CSV (one row per scheduler and
 * job). And a trace written as a trace file (docs/formats.md, "Job
 * traces"), the generator's output. 0, or FS_EIO if writing failed. */
int fs_report_sched_text(FILE *f, const fs_sched_trace *t, const fs_sched_result *r, int32_t n);
int fs_report_sched_json(FILE *f, const fs_sched_trace *t, const fs_sched_result *r, int32_t n);
int fs_report_sched_csv(FILE *f, const fs_sched_trace *t, const fs_sched_result *r, int32_t n);
int fs_report_sched_trace_json(FILE *f, const fs_sched_trace *t);
/* `fabricsim jobs --report F.html`: the schedulers' table, their mean JCT
 * as bars, their JCT CDFs and per scheduler a timeline, one row per job (the first 200 by
 * arrival): queued, circuits set up (liu-ocs), running. 0, FS_ENOMEM or
 * FS_EIO. */
int fs_report_sched_html(FILE *f, const fs_sched_trace *t, const fs_sched_result *r, int32_t n);

#ifdef __cplusplus
}
#endif

#endif
