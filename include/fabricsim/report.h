/* Writers of results, for people and for other tools: a scenario's JSON
 * (the default output of `fabricsim sim`), per-flow CSV, trace and summary;
 * a training iteration's summary, JSON and trace. Formats are in
 * docs/formats.md. All output is deterministic: same run, same bytes. */
#ifndef FABRICSIM_REPORT_H
#define FABRICSIM_REPORT_H

#include <stdio.h>

#include "fabricsim/scenario.h"
#include "fabricsim/train.h"

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
/* Perfetto / Chrome trace of job's iteration tr (after fs_train_run): one
 * track group per pipeline stage (its data-parallel rank 0 device):
 * compute, TP, EP slices, pipeline sends and DP collectives; then the mean
 * utilisation of each group of links (by the kinds of their ends). 0,
 * FS_ENOMEM or FS_EIO. */
int fs_report_train_trace(FILE *f, const fs_job *job, const fs_train *tr);

#ifdef __cplusplus
}
#endif

#endif
