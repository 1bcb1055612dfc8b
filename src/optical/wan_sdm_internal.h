/* The RSCA state shared by wan_sdm_rsca.c (assignment) and wan_sdm_dyn.c
 * (the dynamic engine, which reads the occupancy for its statistics). */
#ifndef FABRICSIM_OPTICAL_WAN_SDM_INTERNAL_H
#define FABRICSIM_OPTICAL_WAN_SDM_INTERNAL_H

#include "fabricsim/wan_sdm.h"

typedef struct fs__rpath {
  int32_t hops;
  int32_t *fibres;
  double km;
} fs__rpath;

typedef struct fs__rlp {
  int32_t live, src, dst, path, band, mod, n_ch;
  double gbps;
  int32_t core[FS_WAN_MAX_CHANNELS], first[FS_WAN_MAX_CHANNELS], count[FS_WAN_MAX_CHANNELS];
} fs__rlp;

struct fs_wan_rsca {
  const fs_wan *w;
  fs_wan_sdm s;
  fs_wan_policy policy;
  int32_t k, N, F, C, U, W; /* sites, fibres, cores, units and 64-bit words per core */
  int32_t *npaths;          /* [src * N + dst] */
  fs__rpath *paths;         /* [(src * N + dst) * k + j]; dst < src share src < dst's arrays */
  uint64_t *occ;            /* [(f * C + c) * W + word]: units in use */
  int32_t *owner;           /* [(f * C + c) * U + u]: lightpath id or -1 */
  int32_t deg[FS_WAN_MAX_CORES], adj[FS_WAN_MAX_CORES][FS_WAN_MAX_ADJ];
  double *xt_tab;           /* [f * (FS_WAN_MAX_ADJ + 1) + n]: fs_wan_xt over fibre f */
  int hetero;               /* cores of several types: hpair, not xt_tab */
  double hpair[FS_WAN_MAX_CORES][FS_WAN_MAX_ADJ]; /* h of core c and its j-th neighbour */
  double thr[FS_WAN_MAX_MODS]; /* linear crosstalk thresholds */
  fs__rlp *lps;
  int32_t lps_cap, n_live;
  int32_t *free_ids, n_free;
  int32_t *fmark, fstamp;   /* per fibre: on the candidate's path */
  int32_t *lseen, lstamp;   /* per lightpath: already checked */
  int64_t *band_core_used;  /* [band * C + core]: units in use over all fibres */
  /* A slice: units [slice_first, slice_first + slice_count) of every core
   * are kept for requests added in it (fs_wan_rsca_add_to, in_slice 1);
   * the others never use them. slice_count 0: none. */
  int32_t slice_first, slice_count, in_slice;
};

/* Bits [first, first + count) of a bitset: any set, and how many. */
int fs__bits_any(const uint64_t *b, int32_t first, int32_t count);
int32_t fs__bits_count(const uint64_t *b, int32_t first, int32_t count);

#endif
