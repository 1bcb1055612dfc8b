/* Survivability and risk on the optical WAN (docs/model-wan-risk.md):
 * shared-risk link groups (SRLGs), each fibre's failure rate from its length
 * and a cut rate per 1,000 km per year, its unavailability MTTR / (MTBF +
 * MTTR); the availability of a path (its risks counted once), of a 1+1 pair
 * (exact over independent risks) and of a shared-backup (SBPP) pair;
 * SRLG-disjoint pairs (two-step, and Bhandari's exact link-disjoint pair
 * for the two-step's trap); provisioning with no protection, 1+1 dedicated
 * or shared backup path protection, routed by km, by risk or by km under an
 * availability target; a failure (a fibre or an SRLG) and what survives it;
 * and a training job's iteration time and expected completion time under
 * failures, with and without protection.
 *
 * Sizes in mind: those of wan.h (tens of sites, up to 10^4 demands, a few
 * hundred slots); risks = SRLGs + fibres in no group. */
#ifndef FABRICSIM_WAN_RISK_H
#define FABRICSIM_WAN_RISK_H

#include <stdint.h>

#include "fabricsim/err.h"
#include "fabricsim/wan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fs_wan_prot {
  FS_WAN_PROT_NONE = 0, /* one path; restoration after a failure */
  FS_WAN_PROT_1P1 = 1,  /* working + dedicated SRLG-disjoint backup, both lit */
  FS_WAN_PROT_SBPP = 2  /* backup spectrum shared by demands whose working paths share no risk */
} fs_wan_prot;
/* "none", "1+1", "sbpp": 0, or FS_EINVAL with *out untouched. */
int fs_wan_prot_parse(const char *name, fs_wan_prot *out);
const char *fs_wan_prot_name(fs_wan_prot p);

/* The failure and recovery figures (docs/model-wan-risk.md cites each). */
typedef struct fs_wan_reliability {
  double cuts_per_1000km_year; /* default 2.13 (Bellcore buried cable) */
  double repair_hours;         /* MTTR, default 12 */
  double switchover_ms;        /* 1+1 protection switching, default 50 */
  double sbpp_switchover_ms;   /* SBPP: cross-connects set along the backup, default 200 */
  double restoration_s;        /* re-routing an unprotected lightpath, default 2 */
  double restart_minutes;      /* a crashed job back from its checkpoint, default 5 */
} fs_wan_reliability;
fs_wan_reliability fs_wan_reliability_default(void);

typedef struct fs_wan_srlg {
  char name[FS_WAN_NAME];
  int32_t n_fibres;
  int32_t *fibres;
  double km; /* the shared stretch whose cut fails them all; default the longest fibre */
} fs_wan_srlg;

/* The WAN file's risk keys ("srlgs", "reliability", "protection",
 * "checkpoint_minutes"); fs_wan.risk, NULL when the file has none. */
struct fs_wan_risk {
  int32_t n_srlgs;
  fs_wan_srlg *srlgs;
  fs_wan_reliability rel;
  int has_protection;       /* the file names a scheme */
  fs_wan_prot protection;
  double checkpoint_minutes; /* default 30 */
};

/* The independent risks of a WAN: the file's SRLGs (in file order), then
 * one per fibre in no group. A fibre in groups fails exactly when one of
 * them does. */
typedef struct fs_wan_risks {
  int32_t n;
  double *per_hour;     /* failure rate: cuts/1000km/yr x km / 1000 / 8766 h */
  double *unavail;      /* MTTR / (MTBF + MTTR) */
  double *km;
  int32_t *srlg;        /* the group's index, or -1 */
  int32_t *fibre;       /* the lone fibre's id, or -1 */
  int32_t *fibre_start; /* CSR: risks of fibre f at fibre_risk[fibre_start[f]..[f+1]) */
  int32_t *fibre_risk;
  fs_wan_reliability rel;
} fs_wan_risks;

/* Builds the risk table of w (its reliability figures, or the defaults).
 * FS_ENOMEM only; free with fs_wan_risks_free. */
int fs_wan_risks_build(const fs_wan *w, fs_wan_risks **out, fs_err *err);
void fs_wan_risks_free(fs_wan_risks *r); /* NULL is a no-op */
/* The risk index of SRLG name, -1 if none. */
int32_t fs_wan_risk_of_srlg(const fs_wan *w, const char *name);

/* Availability of a path: the product of (1 - U) over its distinct risks. */
double fs_wan_path_availability(const fs_wan_risks *r, const fs_wan_path *p);
/* 1+1: P(working up or backup up) = A_W + A_B - A_(W u B), exact for
 * independent risks whether or not the paths share one. */
double fs_wan_pair_availability(const fs_wan_risks *r, const fs_wan_path *work,
                                const fs_wan_path *backup);
/* 1 if the two paths share no risk. */
int fs_wan_srlg_disjoint(const fs_wan_risks *r, const fs_wan_path *a, const fs_wan_path *b);

typedef enum fs_wan_pair_method {
  FS_WAN_PAIR_TWO_STEP = 0, /* shortest path, then the shortest avoiding its risks */
  FS_WAN_PAIR_BHANDARI = 1  /* min-total-km fibre-disjoint pair (exact), kept if SRLG-disjoint */
} fs_wan_pair_method;
/* An SRLG-disjoint pair by km from src to dst, the shorter first: 1 and
 * both paths filled (caller frees their arrays), 0 if the method finds
 * none, or FS_EINVAL / FS_ENOMEM (negative) with err set. */
int fs_wan_disjoint_pair(const fs_wan *w, const fs_wan_risks *r, int32_t src, int32_t dst,
                         fs_wan_pair_method m, fs_wan_path *work, fs_wan_path *backup,
                         fs_err *err);

/* ---- provisioning with protection ---- */
typedef enum fs_wan_routing {
  FS_WAN_ROUTE_KM = 0,  /* the k shortest by km, in order */
  FS_WAN_ROUTE_RISK = 1 /* of the FS_WAN_MAX_K shortest, the k most available */
} fs_wan_routing;

typedef struct fs_wan_protect_opts {
  fs_wan_prot scheme;
  fs_wan_routing routing;
  double target; /* > 0: only working paths with availability >= target */
  int32_t k;     /* working candidates tried per demand */
} fs_wan_protect_opts;

/* One route of a demand and the units it holds (fixed grid: wavelengths,
 * any; flexgrid: one block of adjacent slots, guard included). */
typedef struct fs_wan_route {
  fs_wan_path path; /* hops 0: none */
  int32_t mod;
  int32_t n_units;
  int32_t *units;
  double unit_gbps;
} fs_wan_route;

typedef struct fs_wan_pdemand {
  fs_wan_status status;
  int no_pair;          /* blocked because no SRLG-disjoint pair was found */
  int below_target;     /* blocked: paths in reach, none meeting the availability target */
  fs_wan_route work, backup;
  double availability;  /* per scheme: path, 1+1 or SBPP (conservative) */
  int32_t work_cells, backup_cells; /* fibre x unit cells held */
} fs_wan_pdemand;

typedef struct fs_wan_pplan {
  const fs_wan *w;
  const fs_wan_risks *risks;
  fs_wan_protect_opts opts;
  int32_t n_demands;
  fs_wan_demand *demands; /* copy */
  fs_wan_pdemand *d;
  int32_t blocked;
  int64_t cells_used;     /* distinct fibre x unit cells held (shared backup once) */
  int64_t cells_working, cells_backup;
  int8_t *cell;           /* [fibre * units + u]: 0 free, 1 working / dedicated, 2 shared backup */
  int32_t words;          /* 64-bit words of a risk bitset: (risks->n + 63) / 64 */
  uint64_t *share;        /* SBPP: [cell * words]: its sharers' working risks (else NULL) */
} fs_wan_pplan;

/* Provisions the demands in order (docs/model-wan-risk.md): each the first
 * of its candidate working paths in reach with spectrum (and, protected,
 * an SRLG-disjoint backup in reach with spectrum: two-step on each
 * candidate, then Bhandari's pair), first-fit; SBPP backups take the
 * block needing the fewest new cells. Computes every demand's
 * availability. Blocked demands are results. FS_EINVAL on bad options,
 * FS_ENOMEM; *out NULL then. */
int fs_wan_protect(const fs_wan *w, const fs_wan_risks *r, const fs_wan_demand *d, int32_t n,
                   const fs_wan_protect_opts *o, fs_wan_pplan **out, fs_err *err);
void fs_wan_pplan_free(fs_wan_pplan *p); /* NULL is a no-op */
/* 0 if no cell is held twice except shared backups of demands whose
 * working paths share no risk, pairs are SRLG-disjoint and in reach, and
 * the cell counts add up; else FS_EINTERNAL saying which. */
int fs_wan_pplan_check(const fs_wan_pplan *p, fs_err *err);

/* The working lightpaths as an fs_wan_plan (for fs_wan_train). */
int fs_wan_pplan_working(const fs_wan_pplan *p, fs_wan_plan **out, fs_err *err);

/* ---- a failure ---- */
typedef struct fs_wan_failure_result {
  int32_t affected;  /* provisioned demands whose working path crosses a failed fibre */
  int32_t survived;  /* of them: switched to the backup or restored */
  int32_t lost;
  int job_connected; /* every job ring pair still served */
  fs_wan_plan *after; /* the lightpaths in service after it (caller frees) */
} fs_wan_failure_result;

/* The fibres `failed` (n of them) fail at once: without protection the
 * affected demands are re-routed in demand order on the k shortest paths
 * avoiding them (old spectrum still held); 1+1 switches to the backup
 * unless it failed too; SBPP activates backups in demand order, a backup
 * cell already taken by an earlier one loses. FS_ENOMEM only. */
int fs_wan_fail(const fs_wan_pplan *p, const int32_t *failed, int32_t n,
                fs_wan_failure_result *out, fs_err *err);

/* ---- the job ---- */
typedef struct fs_wan_job_risk {
  int provisioned;      /* every ring pair provisioned */
  double availability;  /* all ring pairs up */
  int exact;            /* availability by enumerating the relevant risks (<= 20) */
  double fails_per_hour;/* failures of risks on the job's working paths */
  double iter_s;        /* fs_wan_train's total on the working paths */
  double iterations;
  double checkpoint_minutes;
  double base_hours;    /* iterations x iter_s */
  double lost_per_hour; /* sum over risks of rate x cost (hours lost per hour of work) */
  double jct_hours;     /* base x (1 + lost_per_hour) */
} fs_wan_job_risk;

/* The job's connectivity availability and its expected completion time for
 * `iterations` iterations under failures (docs/model-wan-risk.md): each
 * failure of a risk on a job working path costs, protected, the switchover;
 * unprotected, the restoration (the repair when restoration cannot
 * reconnect the job) + the restart + half a checkpoint interval of
 * recomputation. checkpoint_minutes > 0 overrides the file's. FS_EINVAL
 * without a job. */
int fs_wan_job_risk_eval(const fs_wan_pplan *p, double iterations, double checkpoint_minutes,
                         fs_wan_job_risk *out, fs_err *err);

#ifdef __cplusplus
}
#endif

#endif
