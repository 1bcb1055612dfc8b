/* Space division multiplexing, multi-band spectrum and dynamic traffic on
 * the optical WAN (docs/model-wan-sdm.md): multi-core fibres (1, 7, 12 or
 * 19 cores in their standard layouts) with inter-core crosstalk from the
 * coupled-power theory, checked against each modulation format's
 * threshold; C, L and S bands with a reach per band from an ASE-limited
 * OSNR model; routing, spectrum and core assignment (RSCA) by first-fit,
 * crosstalk-aware or crosstalk-avoiding policies; and requests arriving as
 * a Poisson process with exponential holding times, with blocking,
 * bandwidth blocking, fragmentation and occupancy over independent seeds
 * (95 % confidence intervals), beside the Erlang B and Kaufman-Roberts
 * closed forms.
 *
 * Sizes in mind: tens of sites and fibres, up to 19 cores of up to a few
 * thousand units each, 10^5..10^6 requests per run. Occupancy is a bitset
 * per fibre and core; paths come from a table of k shortest paths built
 * once; departures wait in a binary heap. */
#ifndef FABRICSIM_WAN_SDM_H
#define FABRICSIM_WAN_SDM_H

#include <stdint.h>

#include "fabricsim/err.h"
#include "fabricsim/wan.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  FS_WAN_MAX_CORES = 19,
  FS_WAN_MAX_ADJ = 6,    /* most neighbours of a core in the layouts */
  FS_WAN_MAX_BANDS = 3,
  FS_WAN_MAX_RATES = 16,
  FS_WAN_MAX_CHANNELS = 16 /* fixed grid: wavelengths per request */
};

/* Core layouts (docs/model-wan-sdm.md "Core adjacency"). */
typedef enum fs_wan_layout {
  FS_WAN_LAYOUT_SINGLE = 0, /* 1 core: no neighbours */
  FS_WAN_LAYOUT_HEX7 = 1,   /* core 0 the centre (6 neighbours), 1..6 around it (3 each) */
  FS_WAN_LAYOUT_RING12 = 2, /* 12 cores on a ring, 2 neighbours each */
  FS_WAN_LAYOUT_HEX19 = 3   /* centre, an inner ring of 6, an outer ring of 12 */
} fs_wan_layout;
const char *fs_wan_layout_name(fs_wan_layout l); /* "single", "hex7", "ring12", "hex19" */
/* The layout of a core count (1, 7, 12, 19): 0, or FS_EINVAL. */
int fs_wan_layout_for_cores(int32_t cores, fs_wan_layout *out);
/* The cores adjacent to `core` in layout l, written to adj (room for
 * FS_WAN_MAX_ADJ), ascending; returns their count. */
int32_t fs_wan_core_neighbours(fs_wan_layout l, int32_t core, int32_t *adj);

/* ---- crosstalk (coupled-power theory) ---- */
/* Mean power-coupling coefficient per metre, h = 2 k^2 R / (beta Lambda):
 * coupling coefficient k (1/m), bend radius R (m), propagation constant
 * beta (1/m), core pitch Lambda (m). */
double fs_wan_xt_h(double k, double bend_radius_m, double beta_per_m, double pitch_m);
/* The mean power-coupling coefficient (1/m) of adjacent cores a and b of
 * s: h_per_m with homogeneous cores; else the bend formula with their
 * type's beta when of one type, or 2 k^2 d / (1 + (dbeta d)^2) when of two
 * (Koshiba et al., Opt. Express 19(26) B102, 2011: coupled-power theory
 * with an exponential autocorrelation of correlation length d). */
double fs_wan_xt_h_pair(const struct fs_wan_sdm *s, int32_t a, int32_t b);
/* Crosstalk (linear power ratio) on a core with n lit adjacent cores after
 * len_m metres: (n - n e^{-(n+1) 2 h L}) / (1 + n e^{-(n+1) 2 h L}); 0 when
 * n = 0. */
double fs_wan_xt(int32_t n, double h_per_m, double len_m);
/* The default crosstalk threshold (dB) of a format with `bits` per symbol:
 * 1 -14, 2 -18.5, 3 -21, 4 -25 (docs/model-wan-sdm.md); NAN for others. */
double fs_wan_xt_threshold_db(double bits);

/* ---- bands ---- */
typedef struct fs_wan_band {
  char name[4];         /* "C", "L", "S" */
  int32_t first, slots; /* units [first, first + slots) of every core */
  double nf_db;         /* amplifier noise figure */
  double alpha_db_km;   /* fibre attenuation */
  double reach_km[FS_WAN_MAX_MODS]; /* per entry of the file's modulation table */
} fs_wan_band;
/* A named band's defaults at slot width slot_ghz: C 4.8 THz, NF 5 dB,
 * 0.20 dB/km; L 4.8 THz, 6 dB, 0.21 dB/km; S 6.0 THz, 7 dB, 0.23 dB/km
 * (docs/model-wan-sdm.md). 0, or FS_EINVAL for another name. */
int fs_wan_band_default(const char *name, double slot_ghz, fs_wan_band *out);
/* The ASE-limited OSNR model: the reach of every format scales with the
 * number of spans whose noise stays within its OSNR margin, so band b
 * reaches ref_km x 10^(-D/10) where D = (NF_b - NF_C) + (alpha_b -
 * alpha_C) x span_km dB is its extra noise per span against the C band
 * whose reaches the modulation table gives. */
double fs_wan_band_reach_km(double ref_km, const fs_wan_band *c_band, const fs_wan_band *b,
                            double span_km);

/* ---- the file's SDM and traffic description ---- */
typedef struct fs_wan_traffic {
  int present;          /* the file has "traffic" */
  double load_erlang;   /* offered load: arrival rate x mean holding time */
  double holding_s;     /* mean holding time */
  int32_t n_rates;
  double rates_gbps[FS_WAN_MAX_RATES]; /* each request draws one uniformly */
  int64_t requests;     /* arrivals per seed (the first tenth warm the network up) */
  uint64_t seed;
  int32_t seeds;        /* independent runs per load */
  int32_t k;            /* candidate paths */
  int32_t policy;       /* an fs_wan_policy ("policy": first-fit when absent) */
} fs_wan_traffic;

typedef struct fs_wan_sdm {
  int32_t cores;
  fs_wan_layout layout;
  double coupling, bend_radius_m, beta_per_m, pitch_m;
  double h_per_m;   /* fs_wan_xt_h of the four above */
  /* Heterogeneous cores (Zhang et al. JLT 2022; Koshiba et al. 2011): core
   * c is of type core_type[c] with propagation constant
   * type_beta_per_m[type]; n_types 0: every core alike (h_per_m). Two
   * adjacent cores of one type couple by the bend formula with their
   * type's beta, of two types by 2 k^2 d / (1 + (dbeta d)^2), d the
   * correlation length (fs_wan_xt_h_pair). A trench around the cores
   * enters through a smaller coupling coefficient k. */
  int32_t n_types;
  int32_t core_type[FS_WAN_MAX_CORES];
  double type_beta_per_m[FS_WAN_MAX_CORES];
  double corr_len_m;
  double xt_threshold_db[FS_WAN_MAX_MODS]; /* per entry of the modulation table */
  double span_km;   /* amplifier spacing of the OSNR model */
  int32_t units;    /* units per core: the bands' slots end to end */
  int32_t n_bands;
  fs_wan_band bands[FS_WAN_MAX_BANDS];
  fs_wan_traffic traffic;
} fs_wan_sdm;

/* The description a run uses: the file's (w->sdm) or, without one, one
 * core and one C band of the file's grid; cores > 0 overrides the core
 * count (and layout). 0, or FS_EINVAL naming the core count when no
 * layout has it. */
int fs_wan_sdm_get(const fs_wan *w, int32_t cores, fs_wan_sdm *out, fs_err *err);

/* ---- routing, spectrum and core assignment ---- */
typedef enum fs_wan_policy {
  FS_WAN_POLICY_FIRST_FIT = 0, /* first path, band, core, slot with free spectrum; blocked if its XT fails */
  FS_WAN_POLICY_XT_AWARE = 1,  /* the first candidate in that order whose XT passes */
  FS_WAN_POLICY_XT_AVOID = 2   /* per path and band, the candidate overlapping the least spectrum on adjacent cores */
} fs_wan_policy;
/* "first-fit", "xt-aware", "xt-avoid": 0, or FS_EINVAL (*out untouched). */
int fs_wan_policy_parse(const char *name, fs_wan_policy *out);
const char *fs_wan_policy_name(fs_wan_policy p);

typedef enum fs_wan_sdm_status {
  FS_WAN_SDM_OK = 0,
  FS_WAN_SDM_BLOCKED_SPECTRUM, /* no free spectrum on any path in reach */
  FS_WAN_SDM_BLOCKED_XT,       /* free spectrum, but crosstalk forbids every candidate tried */
  FS_WAN_SDM_BLOCKED_REACH,    /* every path longer than every format's reach in every band */
  FS_WAN_SDM_BLOCKED_NOPATH    /* src and dst disconnected */
} fs_wan_sdm_status;
const char *fs_wan_sdm_status_name(fs_wan_sdm_status s); /* "ok", "spectrum", "crosstalk", ... */

/* The state of a network under RSCA: occupancy bitsets per fibre and core,
 * the owner of every unit, the live lightpaths. */
typedef struct fs_wan_rsca fs_wan_rsca;

/* A live lightpath: its path, band, format, and channels (flexgrid: one
 * block of `count` slots, guard included; fixed grid: one wavelength per
 * channel). */
typedef struct fs_wan_sdm_lp {
  int32_t src, dst, hops;
  const int32_t *fibres; /* hops fibre ids (owned by the state) */
  double km, gbps;
  int32_t band, mod, n_ch;
  int32_t core[FS_WAN_MAX_CHANNELS], first[FS_WAN_MAX_CHANNELS], count[FS_WAN_MAX_CHANNELS];
} fs_wan_sdm_lp;

/* A state for w with description s (copied), policy p, k candidate paths
 * per pair (Yen's, by km, built for every pair now). FS_EINVAL on k
 * outside [1, FS_WAN_MAX_K], FS_ENOMEM. Free with fs_wan_rsca_free. */
int fs_wan_rsca_new(const fs_wan *w, const fs_wan_sdm *s, fs_wan_policy p, int32_t k,
                    fs_wan_rsca **out, fs_err *err);
void fs_wan_rsca_free(fs_wan_rsca *r); /* NULL is a no-op */
/* Releases every lightpath (the path table stays). */
void fs_wan_rsca_reset(fs_wan_rsca *r);
/* Provisions a request of gbps between sites src != dst: all or nothing,
 * one lightpath on one path and band. *lp gets its id (>= 0) when OK, -1
 * otherwise. FS_WAN_SDM_BLOCKED_SPECTRUM too for a fixed-grid request
 * needing more than FS_WAN_MAX_CHANNELS wavelengths. */
fs_wan_sdm_status fs_wan_rsca_add(fs_wan_rsca *r, int32_t src, int32_t dst, double gbps,
                                  int32_t *lp);
void fs_wan_rsca_release(fs_wan_rsca *r, int32_t lp); /* lp must be live */
/* A dedicated slice (OSDL, Wang et al., Computer Networks 2022): units
 * [first, first + count) of every core of every fibre are kept for the
 * requests added in it; every other request is assigned outside it. count
 * 0 (or a range outside the units) removes it. Kept across resets. */
void fs_wan_rsca_set_slice(fs_wan_rsca *r, int32_t first, int32_t count);
/* fs_wan_rsca_add, in the slice when in_slice (and there is one). */
fs_wan_sdm_status fs_wan_rsca_add_to(fs_wan_rsca *r, int32_t src, int32_t dst, double gbps,
                                     int in_slice, int32_t *lp);
/* Lightpath lp: 0 and *out filled, or -1 if lp is not live. */
int fs_wan_rsca_lp(const fs_wan_rsca *r, int32_t lp, fs_wan_sdm_lp *out);
/* Crosstalk of lightpath lp now (dB, its worst channel; -INFINITY with no
 * lit neighbour) and its format's threshold (dB). -1 if lp is not live. */
int fs_wan_rsca_xt_db(const fs_wan_rsca *r, int32_t lp, double *xt_db, double *threshold_db);
/* Mean external fragmentation over the fibre-core-band triples with free
 * units: 1 - largest free block / free units (0 with none free). */
double fs_wan_rsca_fragmentation(const fs_wan_rsca *r);
/* Units in use (guard included) on core `core` of fibre f. */
int32_t fs_wan_rsca_used(const fs_wan_rsca *r, int32_t f, int32_t core);

/* ---- dynamic operation ---- */
typedef struct fs_wan_dyn_opts {
  fs_wan_policy policy;
  int32_t k;
  double load_erlang;
  int64_t requests; /* arrivals per seed, >= 10 */
  int32_t seeds;    /* >= 1; seed i runs with seed + i */
  uint64_t seed;
  /* Called now and then with the fraction done (NULL: none). */
  void (*progress)(void *ctx, double done);
  void *ctx;
  /* Demands that hold their lightpaths for the whole run (a training job's
   * ring), provisioned after each reset before the first arrival, in the
   * slice when fixed_in_slice; n_fixed 0: none. */
  const fs_wan_demand *fixed;
  int32_t n_fixed;
  int fixed_in_slice;
} fs_wan_dyn_opts;

/* One seed's run. Statistics count the arrivals after the first tenth
 * (warm-up); occupancy and fragmentation are sampled at arrivals (PASTA:
 * time averages), fragmentation at every 64th. */
typedef struct fs_wan_dyn_run {
  int64_t counted, blocked, blocked_xt, blocked_spectrum, blocked_reach;
  double offered_gbps, blocked_gbps;
  double pb, bbr;  /* blocked / counted; blocked_gbps / offered_gbps */
  double frag;     /* mean external fragmentation 1 - largest free block / free units */
  double band_occ[FS_WAN_MAX_BANDS]; /* mean fraction of units in use */
  double core_occ[FS_WAN_MAX_CORES];
  int64_t max_live;
  int32_t fixed_blocked; /* of o->fixed, not provisioned */
} fs_wan_dyn_run;

/* One load over seeds: means and 95 % confidence half-widths from the
 * t-distribution with seeds - 1 degrees of freedom (NAN with one seed).
 * analytic_pb / analytic_bbr: the Kaufman-Roberts (Erlang B with one rate)
 * closed form when the network is one fibre of one core on a fixed grid,
 * else NAN. */
typedef struct fs_wan_dyn_point {
  double load_erlang;
  int32_t seeds, cores, n_bands;
  int64_t requests;
  double pb, pb_ci, bbr, bbr_ci, frag, frag_ci;
  double band_occ[FS_WAN_MAX_BANDS], core_occ[FS_WAN_MAX_CORES];
  int64_t blocked_xt, blocked_spectrum, blocked_reach; /* summed over seeds */
  double analytic_pb, analytic_bbr;
  int32_t fixed_blocked; /* the most of o->fixed not provisioned in a seed */
} fs_wan_dyn_point;

/* Runs one seed on state r (reset first). FS_EINVAL on bad options. */
int fs_wan_dynamic_seed(fs_wan_rsca *r, const fs_wan_dyn_opts *o, uint64_t seed,
                        fs_wan_dyn_run *out, fs_err *err);
/* Runs o->seeds seeds on r and summarises them. */
int fs_wan_dynamic(fs_wan_rsca *r, const fs_wan_dyn_opts *o, fs_wan_dyn_point *out, fs_err *err);

/* ---- a training job's sites on multi-core fibres (a virtual network
 * embedding: docs/model-wan-sdm.md) ---- */
/* fs_wan_place_ring with every placement's ring pairs (after the file's
 * demands) assigned by RSCA on s's cores and bands under policy, each one
 * lightpath of job.gbps with its crosstalk checked; the cross-site phase
 * from their rates and path lengths. o->cut is not used. */
int fs_wan_place_ring_sdm(const fs_wan *w, const fs_wan_sdm *s, fs_wan_policy policy, int32_t k,
                          const fs_wan_prov_opts *o, fs_wan_place_result *r, fs_err *err);

/* ---- closed forms ---- */
/* Erlang B: blocking of `erlang` offered to `channels` servers (the stable
 * recursion B(0) = 1, B(n) = E B(n-1) / (n + E B(n-1))). */
double fs_wan_erlang_b(double erlang, int32_t channels);
/* Kaufman-Roberts: n classes offered erlang[i] each needing b[i] of
 * `units`; blocking[i] of each. 0, FS_EINVAL (b < 1, units < 0) or FS_ENOMEM. */
int fs_wan_kaufman_roberts(int32_t units, int32_t n, const double *erlang, const int32_t *b,
                           double *blocking);
/* Student's t quantile t_{0.975, dof} (dof >= 1); NAN for dof < 1. */
double fs_wan_t975(int32_t dof);

#ifdef __cplusplus
}
#endif

#endif
