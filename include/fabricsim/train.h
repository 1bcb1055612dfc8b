/* One training iteration of a job (work.h) as a DAG in the fluid engine,
 * and where its time goes.
 *
 * The unit of the DAG is a device: the tp GPUs of one (pipeline stage,
 * data-parallel rank), which run in lock step. Each device runs its pipeline
 * schedule (pipeline.h); an op (forward or backward of a micro-batch on a
 * model chunk) is a compute task (FLOPs / achieved throughput) followed by
 * its tensor-parallel communication (and expert all-to-alls, ZeRO-3
 * gathers), whose durations come from simulating those collectives alone on
 * their group (TP inside a server: a switch at NVLink speed). Pipeline
 * sends are real flows between the devices' GPUs, one per TP rank, on the
 * topology; data-parallel gradient reductions are real collectives
 * (coll.h) over each TP rank's data-parallel group, launched per model
 * chunk as its last backward ends (overlap on) or after the device's last
 * op (overlap off).
 *
 * Communication modes (fs_train_comm, docs/model-alltraffic.md):
 *   all (default): every kind of traffic is in the one simulation. TP
 *     collectives are lowered into flows over the device's GPUs (NVLink
 *     inside a server, the fabric when a TP group spans servers), EP
 *     all-to-alls and ZeRO-3 gathers into flows over their groups; so TP
 *     contends with pipeline sends on NVLink, EP with DP on rails and
 *     spines. One exact shortcut: a TP group whose links no other flow of
 *     the simulation can use (its GPUs' scale-up links, when no other kind
 *     has a pair of GPUs inside one server) runs its collectives as tasks of
 *     the time simulated alone on those same links, which max-min makes
 *     identical. A topology without scale-up links keeps TP on an NVLink
 *     star, timed alone, and says so (tp is then not congestion-aware).
 *   isolated: TP and EP collectives and ZeRO-3 gathers timed alone per
 *     distinct collective (cached) and pasted in as tasks; only pipeline and
 *     data-parallel traffic contend (the model before the all-traffic one,
 *     kept for comparison). */
#ifndef FABRICSIM_TRAIN_H
#define FABRICSIM_TRAIN_H

#include <stdint.h>
#include <stdio.h>

#include "fabricsim/sim.h"
#include "fabricsim/work.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fs_train_comm {
  FS_COMM_ALL = 0,  /* every kind of traffic in the one simulation */
  FS_COMM_ISOLATED  /* TP, EP, ZeRO-3 timed alone (for comparison) */
} fs_train_comm;
const char *fs_train_comm_name(fs_train_comm c); /* "all", "isolated" */
int fs_train_comm_parse(const char *name, fs_train_comm *out); /* 0 or FS_EINVAL */

typedef struct fs_train_opts {
  int free_comm;      /* every communication takes zero time (what-if) */
  fs_train_comm comm; /* FS_COMM_ALL unless set */
  int no_compare;     /* comm all: skip the second, isolated run that the
                         report compares against */
  int no_symmetry;    /* simulate every rail and replica even where the
                         symmetry shortcuts are exact */
  int no_replica_shift; /* keep the rail rotation, not the replica shift */
  int tp_flows;       /* lower TP as flows even on private links (checks
                         the private-links shortcut) */
  fs_coll_tune_policy tune; /* how "auto" picks algorithms: FS_TUNE_NCCL
                               (default: NCCL's cost model) or FS_TUNE_SIM
                               (the fastest simulated alone) */
  int32_t max_buckets; /* DP collectives per model chunk at most (0: 4) */
  int32_t iterations;  /* simulated back to back (0: 1); the report is the
                          last one's (steady state) */
  const fs_sim_opts *sim; /* progress / observer hooks, optional */
  double max_memory_bytes; /* > 0: refuse (FS_EINVAL) before building an
                              iteration whose flows certainly need more, at
                              FS_SIM_FLOW_BYTES a flow (fs_train_new) */
  int keep_flows;     /* keep every flow as an item of fs_train_sim (what a
                         report, a trace or a Chakra export reads). By
                         default the collectives simulated through their
                         templates are plan instances (sim.h "plans"): the
                         same results, their flows made only while they
                         run, so memory follows the flows in flight */
} fs_train_opts;

/* Per kind of communication: collectives issued, bytes in the nccl-tests
 * size convention, summed duration, and the time it kept the critical
 * device waiting (exposed). */
typedef struct fs_train_kind {
  int64_t colls;
  double bytes;
  double busy_s;    /* summed durations of its collectives */
  double wire_bytes;/* bytes the device's TP-rank-0 GPU put on the wire */
  double exposed_s; /* on the reported device */
  fs_coll_algo algo;/* algorithm used (the tuner's choice for auto) */
} fs_train_kind;

typedef struct fs_train_result {
  double iter_s;        /* the last simulated iteration */
  int32_t iterations;   /* simulated back to back */
  double first_iter_s, mean_iter_s;
  double tokens_per_s;
  double model_tflops_per_gpu;
  double mfu;
  /* Hardware FLOPs (model FLOPs plus the recomputation, fs_work_hw_flops)
   * per second and GPU, and their share of the peak (HFU). */
  double hw_tflops_per_gpu;
  double hfu;
  int32_t device_stage; /* the device the breakdown describes: stage, dp 0 */
  double compute_s;     /* its compute */
  double bubble_s;      /* its idle time the schedule has even with free
                           communication (pipeline bubble) */
  fs_train_kind kind[FS_PAR_N];
  int64_t flows, tasks;
  fs_sim_counters counters;
  fs_netctl_stats ctl; /* routing control, when the job has any */
  double baseline_iter_s; /* then: the iteration without it (base routing,
                             no failures, no re-optimisation); else 0 */
  /* With an OCS layer (job->ocs.ports > 0): its controller's counts, the
   * iteration without the layer (electrical only) and, adaptive, with its
   * static configuration throughout; else 0. */
  fs_ocsctl_stats ocs;
  double ocs_off_iter_s, ocs_static_iter_s;
  fs_train_comm comm;
  /* Kinds whose contention the simulation models (bit 1u << FS_TRAIN_*). */
  uint32_t congestion_aware;
  int tp_private;          /* TP ran by the exact private-links shortcut */
  double isolated_iter_s;  /* comm all: the same job with comm isolated
                              (0 if not run: no_compare, or comm isolated) */
  int64_t flows_represented; /* flows the expanded model has: the simulated
                                ones plus those a shortcut stands for */
  double wall_s;           /* building and running the main simulation */
  int32_t cluster_jobs;    /* 0 for a job alone; in a cluster of n jobs, n:
                              counters, wall_s and peak_rss_bytes are then
                              the cluster's one simulation's, shared */
  char symmetry[400];      /* the symmetry used, or why none ("" if moot) */
  int64_t peak_rss_bytes;  /* the process's peak resident set after it */
} fs_train_result;

/* Traffic kinds of fs_train_result.congestion_aware, in report order. */
enum { FS_TRAIN_TP = 0, FS_TRAIN_SP, FS_TRAIN_CP, FS_TRAIN_EP, FS_TRAIN_PP, FS_TRAIN_DP,
       FS_TRAIN_KINDS };
const char *fs_train_kind_name(int k); /* "tp", "sp", "cp", "ep", "pp", "dp" */

typedef struct fs_train fs_train;

/* Builds the iteration's DAG for job (which must outlive it). Returns 0 or
 * a negative code with err set. */
int fs_train_new(const fs_job *job, const fs_train_opts *opts, fs_train **out, fs_err *err);
/* Runs the iteration and fills *out (FS_EINVAL for a cluster's job). */
int fs_train_run(fs_train *tr, fs_train_result *out, fs_err *err);
void fs_train_free(fs_train *tr);

/* ---- several jobs sharing one cluster (multi-tenant) ----
 * The jobs run their iterations at the same time on the first job's
 * topology (every job must give the same one, and the same server size,
 * routing and failures, which are the cluster's), placed one after another
 * in whole servers, each with its own placement policy inside its share
 * (sets jobs[k]->gpu_offset). Their pipeline and data-parallel traffic
 * contend in one simulation; routing control (mode "optimized",
 * failures) sees all of it. Fails with FS_EINVAL naming the job file and
 * what differs or does not fit, or FS_ENOMEM. The jobs must outlive the
 * cluster. */
typedef struct fs_cluster fs_cluster;
int fs_cluster_new(fs_job *const *jobs, int32_t n, const fs_train_opts *opts, fs_cluster **out,
                   fs_err *err);
/* results[0..n): each job's iteration (its last item's end), breakdown and,
 * with routing control, the cluster's control counts and each job's
 * iteration in the same cluster without control. */
int fs_cluster_run(fs_cluster *c, fs_train_result *results, fs_err *err);
/* Job k's DAG (for its trace), valid until the cluster is freed. */
const fs_train *fs_cluster_job(const fs_cluster *c, int32_t k);
void fs_cluster_free(fs_cluster *c); /* NULL is a no-op */

/* The summary, its JSON and the trace are report's (fabricsim/report.h).
 * The iteration's simulation (its DAG; results after fs_train_run). */
const fs_sim *fs_train_sim(const fs_train *tr);
/* The OCS layer's controller (its changes, ocsctl.h), NULL without one. */
const fs_ocsctl *fs_train_ocs(const fs_train *tr);

/* The iteration as a timeline (what the trace draws, for reports): per
 * pipeline stage, its data-parallel rank 0 device's forward and backward
 * compute, its TP and EP time (the exposed part after each op), its
 * pipeline sends (TP rank 0) and its DP collectives (TP rank 0 rail, with
 * their bytes). Valid after fs_train_run (or fs_cluster_run for a
 * cluster's job). *out is malloc'd (the caller frees it); 0, or FS_ENOMEM
 * with *out NULL. */
typedef enum fs_train_seg_kind {
  FS_TRAIN_SEG_FWD = 0,
  FS_TRAIN_SEG_BWD,
  FS_TRAIN_SEG_TP,
  FS_TRAIN_SEG_EP,
  FS_TRAIN_SEG_PP,
  FS_TRAIN_SEG_DP,
  FS_TRAIN_SEG_KINDS
} fs_train_seg_kind;
typedef struct fs_train_segment {
  int32_t stage, kind; /* kind: fs_train_seg_kind */
  int32_t mb, chunk;   /* compute, TP, EP: the op's micro-batch and chunk; else -1 */
  double start_s, dur_s;
  double bytes;        /* PP: the send's; DP: the collective's (nccl-tests size); else 0 */
  int64_t id;          /* PP, DP: its index among the iteration's sends or DP collectives
                          (every TP rank's: stable from run to run); else -1 */
} fs_train_segment;
int fs_train_segments(const fs_train *tr, fs_train_segment **out, int64_t *n);
int32_t fs_train_stages(const fs_train *tr); /* pipeline stages */

#ifdef __cplusplus
}
#endif

#endif
