/* Optical wide-area network between data centres (docs/model-wan.md):
 * sites joined by fibres of given length, each fibre a fixed grid of W
 * wavelengths or a flexgrid of S spectrum slots; lightpaths provisioned by
 * routing and wavelength/spectrum assignment (RWA/RSA) over Yen's k
 * shortest paths (by km) with the continuity and contiguity constraints, a
 * modulation format chosen by path length (distance-adaptive), and
 * dedicated spectrum slices per job; and a training job's hierarchical
 * all-reduce across sites simulated on the provisioned capacity.
 *
 * Sizes in mind: tens to hundreds of sites and fibres, up to 10^4 demands,
 * a few hundred wavelengths or slots per fibre. Shortest paths are O(V^2)
 * Dijkstra; occupancy is a dense fibre x slot table. */
#ifndef FABRICSIM_WAN_H
#define FABRICSIM_WAN_H

#include <stdint.h>

#include "fabricsim/err.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  FS_WAN_NAME = 64,      /* longest site, slice or modulation name + 1 */
  FS_WAN_MAX_SITES = 1024,
  FS_WAN_MAX_UNITS = 4096, /* wavelengths or slots per fibre */
  FS_WAN_MAX_MODS = 16,
  FS_WAN_MAX_K = 64
};

/* Propagation delay in fibre (group index ~1.47: c / 1.47 ~ 204 km/ms). */
#define FS_WAN_US_PER_KM 5.0

typedef struct fs_wan_site {
  char name[FS_WAN_NAME];
  int32_t gpus;    /* 0: a transit site (no job ranks) */
  int32_t servers; /* informational */
} fs_wan_site;

typedef struct fs_wan_fibre {
  int32_t a, b; /* site ids, a != b; at most one fibre per pair */
  double km;
} fs_wan_fibre;

/* A modulation format: `bits` per symbol (the rate a unit of spectrum
 * carries scales with it) and its transparent reach. */
typedef struct fs_wan_mod {
  char name[16];
  double bits;
  double reach_km;
} fs_wan_mod;

typedef enum fs_wan_grid_kind { FS_WAN_FIXED = 0, FS_WAN_FLEX = 1 } fs_wan_grid_kind;

typedef struct fs_wan_grid {
  fs_wan_grid_kind kind;
  int32_t units;   /* fixed: wavelengths W; flex: slots S */
  double gbps;     /* fixed: a wavelength's rate with the most efficient format */
  double ghz;      /* fixed: channel spacing (50); flex: slot width (12.5) */
  int32_t guard;   /* flex: guard slots after each lightpath (default 1) */
} fs_wan_grid;

/* Spectrum [first, first + count) reserved for one job on a set of fibres
 * (all fibres when the file lists none). */
typedef struct fs_wan_slice {
  char name[FS_WAN_NAME];
  int32_t first, count;
  int32_t n_fibres;
  int32_t *fibres;
} fs_wan_slice;

typedef struct fs_wan_demand {
  int32_t src, dst; /* site ids, src != dst */
  double gbps;      /* > 0 */
  int32_t slice;    /* slice id, or -1: the unreserved spectrum */
  int32_t job;      /* 1 if generated from the job (its ring) */
} fs_wan_demand;

/* A training job data-parallel across the sites with gpus > 0 (in file
 * order: its ring of sites). */
typedef struct fs_wan_job {
  int present;
  double gbps;            /* WAN demand between ring neighbours */
  double bytes;           /* all-reduce size (gradient buffer) */
  int32_t gpus_per_site;  /* equal at every site with gpus */
  double gpu_gbps;        /* a GPU's link to its site switch */
  int64_t site_latency_ns;/* per link inside a site */
  int32_t slice;          /* -1: unreserved spectrum */
  /* The ring's sites in order (set by whoever places the job, e.g.
   * fs_wan_place_ring; the caller keeps the array alive); n_ring 0: the
   * sites with gpus in file order. */
  int32_t n_ring;
  const int32_t *ring;
} fs_wan_job;

typedef struct fs_wan {
  int32_t n_sites, n_fibres, n_mods, n_slices, n_demands;
  fs_wan_site *sites;
  fs_wan_fibre *fibres;
  fs_wan_mod mods[FS_WAN_MAX_MODS]; /* sorted by bits, most efficient last */
  fs_wan_grid grid;
  fs_wan_slice *slices;
  fs_wan_demand *demands; /* the file's demands (not the job's) */
  fs_wan_job job;
  struct fs_wan_risk *risk; /* NULL: no SRLGs, default reliability (wan_risk.h) */
  struct fs_wan_sdm *sdm; /* NULL: single core, C band (wan_sdm.h) */
} fs_wan;

/* ---- model ---- */

/* The default modulation table (docs/model-wan.md, estimates from the
 * distance-adaptive RSA literature): BPSK 4000 km, QPSK 2000 km, 8QAM
 * 1000 km, 16QAM 500 km with 1..4 bits per symbol. Writes up to max
 * entries and returns the count (4). */
int32_t fs_wan_default_mods(fs_wan_mod *mods, int32_t max);
/* The default grids: fixed 80 x 50 GHz at 400 Gb/s; flex 320 x 12.5 GHz
 * with one guard slot. Cannot fail. */
fs_wan_grid fs_wan_default_grid(fs_wan_grid_kind kind);

/* Most efficient format whose reach >= km: its index in w->mods, or -1
 * when the path is longer than every reach. */
int32_t fs_wan_mod_for_km(const fs_wan *w, double km);
/* Rate of one unit of spectrum with format m: fixed grid, a wavelength
 * carries grid.gbps * bits / bits of the most efficient format; flexgrid,
 * a slot carries slot_ghz * bits Gb/s (one symbol per second per Hz).
 * Returns 0 for an index outside the table. */
double fs_wan_unit_gbps(const fs_wan *w, int32_t m);

/* Parses a WAN file (docs/model-wan.md) from NUL-terminated text; `file`
 * labels errors. Strict: unknown keys, duplicate names or fibres, unknown
 * site or slice names, out-of-range values are FS_EINVAL naming the file,
 * the JSON path and the value; *out is untouched on failure. The caller
 * frees with fs_wan_free. */
int fs_wan_from_json(const char *text, const char *file, fs_wan **out, fs_err *err);
/* Reads and parses a file (FS_EIO naming it if unreadable). */
int fs_wan_from_file(const char *path, fs_wan **out, fs_err *err);
void fs_wan_free(fs_wan *w); /* NULL is a no-op */

/* Site id by name, -1 if none. Fibre id joining sites a and b (either
 * order), -1 if none. */
int32_t fs_wan_site_find(const fs_wan *w, const char *name);
int32_t fs_wan_fibre_find(const fs_wan *w, int32_t a, int32_t b);
/* Parses "A-B" (site names, the first '-' that splits two known names)
 * into a fibre id; FS_EINVAL naming the text when no such fibre. */
int fs_wan_fibre_parse(const fs_wan *w, const char *text, int32_t *fibre, fs_err *err);

/* The job's ring of sites in order (job.ring, or the sites with gpus in
 * file order) into ring (FS_WAN_MAX_SITES entries); returns the count (0
 * without a job). */
int32_t fs_wan_job_ring(const fs_wan *w, int32_t *ring);
/* The job's demands: one per pair of ring neighbours (sites with gpus in
 * file order; two sites: one pair), job->gbps each, in ring order. Returns
 * the count (0 without a job or with fewer than two job sites) and writes
 * up to max entries (out may be NULL with max 0: the count). */
int32_t fs_wan_job_demands(const fs_wan *w, fs_wan_demand *out, int32_t max);
/* What `wan provision` and `wan train` provision: the file's demands, then
 * the job's (fs_wan_job_demands), in one malloc'd array (the caller frees)
 * of *n entries; NULL when out of memory. */
fs_wan_demand *fs_wan_demands_with_job(const fs_wan *w, int32_t *n);
/* n demands of gbps each between two distinct sites of w drawn uniformly
 * with the rng seeded by seed (the same seed, the same demands; not the
 * job's, no slice), written to out[0..n). Cannot fail: w has at least two
 * sites (fs_wan_from_json checks it). */
void fs_wan_demands_random(const fs_wan *w, int32_t n, double gbps, uint64_t seed,
                           fs_wan_demand *out);

/* ---- paths ---- */
typedef struct fs_wan_path {
  int32_t hops;
  int32_t *nodes;  /* hops + 1 site ids */
  int32_t *fibres; /* hops fibre ids */
  double km;
} fs_wan_path;

/* Yen's algorithm: up to k loopless paths from src to dst in increasing km
 * (ties: fewer hops, then lower site ids in order), skipping fibre
 * `cut` (-1: none). *out gets *n <= k paths (0 if unreachable), freed with
 * fs_wan_paths_free. Fails with FS_EINVAL on bad ids or k outside
 * [1, FS_WAN_MAX_K], FS_ENOMEM; *out is NULL then. */
int fs_wan_k_shortest(const fs_wan *w, int32_t src, int32_t dst, int32_t k, int32_t cut,
                      fs_wan_path **out, int32_t *n, fs_err *err);
void fs_wan_paths_free(fs_wan_path *p, int32_t n);

/* ---- provisioning ---- */
typedef enum fs_wan_algo {
  FS_WAN_FIRST_FIT = 0, /* lowest-index free unit / block */
  FS_WAN_MOST_USED = 1  /* the unit (block) in use on the most fibres */
} fs_wan_algo;
/* "first-fit" or "most-used": 0, or FS_EINVAL with *out untouched. */
int fs_wan_algo_parse(const char *name, fs_wan_algo *out);
const char *fs_wan_algo_name(fs_wan_algo a);

typedef enum fs_wan_status {
  FS_WAN_OK = 0,
  FS_WAN_BLOCKED_SPECTRUM, /* some path in reach, but no free spectrum on any */
  FS_WAN_BLOCKED_REACH,    /* every path longer than the longest reach */
  FS_WAN_BLOCKED_NOPATH    /* src and dst disconnected */
} fs_wan_status;
const char *fs_wan_status_name(fs_wan_status s); /* "ok", "spectrum", ... */

typedef struct fs_wan_lightpath {
  int32_t demand;
  fs_wan_path path; /* owned by the plan */
  int32_t mod;
  int32_t first, count; /* units [first, first + count), guard included */
  int32_t guard;
  double line_gbps; /* what the units carry with this format */
  double gbps;      /* provisioned: the demand's share (<= line_gbps) */
} fs_wan_lightpath;

typedef struct fs_wan_prov_opts {
  fs_wan_algo algo;
  int32_t k;   /* candidate paths per demand, >= 1 */
  int32_t cut; /* fibre out of service, -1: none */
} fs_wan_prov_opts;

typedef struct fs_wan_plan {
  const fs_wan *w;
  fs_wan_prov_opts opts;
  int32_t n_demands;
  fs_wan_demand *demands;   /* copy */
  fs_wan_status *status;    /* per demand */
  int32_t *lp_first, *lp_n; /* per demand: its lightpaths */
  int32_t n_lps;
  size_t lps_cap;
  fs_wan_lightpath *lps;
  int32_t *owner;           /* [fibre * units + u]: lightpath id or -1 */
  int32_t blocked;
  double offered_gbps, blocked_gbps;
  int32_t restored;         /* after fs_wan_restore: lightpaths moved */
} fs_wan_plan;

/* Provisions the demands in order, each all-or-nothing on one path: the
 * first of its k shortest paths (cut fibre excluded) that is in reach of a
 * format and has free spectrum. A demand needs ceil(gbps / unit rate)
 * wavelengths (fixed grid: one lightpath each) or slots plus guard (flex:
 * one lightpath), free on every fibre of the path (continuity), adjacent
 * (contiguity, flex), inside its slice (or outside every slice). Blocked
 * demands are recorded, never an error. Fails only on bad options
 * (FS_EINVAL) or FS_ENOMEM; *out is then NULL. Free with fs_wan_plan_free. */
int fs_wan_provision(const fs_wan *w, const fs_wan_demand *d, int32_t n,
                     const fs_wan_prov_opts *o, fs_wan_plan **out, fs_err *err);

/* Fibre `cut` fails: the lightpaths crossing it are re-provisioned in
 * demand order on the k shortest paths avoiding it, their old spectrum
 * still held until all are placed (so no demand gets a path shorter than
 * its old one: docs/model-wan.md), then released. Untouched lightpaths
 * keep their spectrum; demands blocked before stay blocked. *out is a new
 * plan (before is unchanged). Errors as fs_wan_provision. */
int fs_wan_restore(const fs_wan_plan *before, int32_t cut, fs_wan_plan **out, fs_err *err);
void fs_wan_plan_free(fs_wan_plan *p); /* NULL is a no-op */

/* 0 if every lightpath holds its units on every fibre of its path in the
 * owner table and no unit is held by anything else (continuity, contiguity,
 * no unit used twice), slices respected; else FS_EINTERNAL saying which. */
int fs_wan_plan_check(const fs_wan_plan *p, fs_err *err);

/* ---- cross-site training ---- */
typedef struct fs_wan_train_result {
  int32_t sites, gpus_per_site;
  double bytes;
  /* phases: 0 reduce-scatter inside sites, 1 all-reduce across sites
   * (per rail, over the WAN), 2 all-gather inside sites */
  double phase_s[3];
  double model_s[3]; /* alpha-beta closed form; NAN where not applicable */
  double total_s, model_total_s;
  double wan_alpha_s, wan_gbps_min; /* slowest ring pair: latency, capacity */
  double wan_km_max;
  int32_t multihop; /* ring pairs without a direct lightpath (routed via sites) */
  int connected;    /* 0: some job sites cannot reach each other; times NAN */
  int64_t flows;
} fs_wan_train_result;

/* Simulates one hierarchical all-reduce of w->job.bytes (bytes > 0
 * overrides) over the plan's job lightpaths (fluid engine, sim.h): each
 * site a star of its GPUs (job.gpu_gbps, job.site_latency_ns per link),
 * site switches joined by one cable per ring pair whose capacity is the sum
 * of the pair's provisioned lightpath rates and latency 5 us/km x the
 * longest of their paths. Ring reduce-scatter in every site, ring
 * all-reduce per rail across sites, ring all-gather in every site (coll.h
 * lowering, one chunk). Fails with FS_EINVAL if the file has no job.
 * A disconnected job is a result (connected = 0), not an error. */
int fs_wan_train(const fs_wan_plan *p, double bytes, fs_wan_train_result *r, fs_err *err);
/* fs_wan_train's closed form only (model_s, model_total_s, the worst
 * cable; phase_s and total_s NAN): microseconds, for searches that time
 * many placements. Same failures. */
int fs_wan_train_model(const fs_wan_plan *p, double bytes, fs_wan_train_result *r,
                       fs_err *err);

/* The job's all-reduce through parameter servers at site agg (Li et al.,
 * IEEE Comm. Letters 2021: data-parallel training over an edge EON with
 * one aggregation point): p's job demands run from every worker site to
 * agg. Reduce-scatter inside sites, per rail a parameter-server all-reduce
 * of n/g with one server on agg's switch (coll.h `ps`), all-gather inside
 * sites; simulated (phase_s, total_s; no closed form). A worker whose
 * demand is blocked is a result (connected = 0, times NAN). FS_EINVAL
 * without a job or for a bad site. */
int fs_wan_train_ps(const fs_wan_plan *p, int32_t agg, double bytes, fs_wan_train_result *r,
                    fs_err *err);

/* ---- choosing the sites (docs/model-wan.md, "Choosing the sites") ---- */
enum { FS_WAN_PLACE_MAX = 64 }; /* sites a placed ring may have */

typedef struct fs_wan_place_result {
  int32_t k;                         /* sites in the ring */
  int32_t ring[FS_WAN_PLACE_MAX];    /* the chosen ring, in order */
  double model_s;                    /* its cross-site phase (closed form); INFINITY: none fits */
  int32_t baseline[FS_WAN_PLACE_MAX];/* the first k job sites in file order */
  double baseline_s;                 /* its cross-site phase, INFINITY if a pair is blocked */
  int64_t evaluated;                 /* placements timed */
  int exhaustive;                    /* every ring of the candidates was timed */
} fs_wan_place_result;

/* Chooses k of the job's candidate sites (those with gpus) and their ring
 * order for the job's cross-site all-reduce: each placement's ring pairs
 * provisioned after the file's demands (o: algorithm, k paths, cut) and
 * timed by the closed form's cross-site phase; a placement with a pair
 * blocked or beyond reach is not taken. With k equal to the candidates
 * and at most 8 of them every ring order is timed (exhaustive: the
 * optimum); otherwise a nearest-neighbour ring from every start site,
 * then 2-opt and swaps of a ring site for an unused candidate while they
 * improve (a local optimum). FS_EINVAL for no job, k < 2, k above the
 * candidates or FS_WAN_PLACE_MAX; FS_ENOMEM. */
int fs_wan_place_ring(const fs_wan *w, int32_t k, const fs_wan_prov_opts *o,
                      fs_wan_place_result *r, fs_err *err);

/* The aggregation point of a parameter-server all-reduce: every site
 * tried (the job's sites are the workers), each with the job's demands
 * from the workers to it provisioned after the file's, and timed by
 * fs_wan_train_ps; time_s INFINITY where a worker's demand is blocked.
 * best: the fastest site (-1 if none fits). */
typedef struct fs_wan_agg_result {
  int32_t n_sites, best;
  double time_s[FS_WAN_MAX_SITES];
} fs_wan_agg_result;
int fs_wan_place_aggregator(const fs_wan *w, const fs_wan_prov_opts *o, double bytes,
                            fs_wan_agg_result *r, fs_err *err);

#ifdef __cplusplus
}
#endif

#endif
