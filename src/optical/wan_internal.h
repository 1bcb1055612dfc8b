/* What the WAN files lend one another: the closed form of the cross-site
 * ring from the ring pairs' capacities and lengths, whichever model
 * (single core, or multi-core under RSCA) gave them (wan_train.c, for
 * wan_place.c), and a deep copy of a path (wan_rsa.c, for the protection
 * code). */
#ifndef FABRICSIM_OPTICAL_WAN_INTERNAL_H
#define FABRICSIM_OPTICAL_WAN_INTERNAL_H

#include "fabricsim/wan.h"

/* The cross-site all-reduce of the job's bytes n (job->bytes when n <= 0)
 * over a ring of S sites whose pair s -> s + 1 carries bps[s] bit/s over
 * km[s] of fibre (docs/model-wan.md, "Cross-site training", phase 2).
 * NAN for S < 2 or a pair without capacity. */
double fs__wan_ring_cross_site_s(const fs_wan_job *job, int32_t S, const double *bps,
                                 const double *km, double n);

/* *b = a copy of a with arrays of its own (free b->nodes and b->fibres).
 * 0, or FS_ENOMEM with b's arrays NULL. */
int fs__wan_path_dup(const fs_wan_path *a, fs_wan_path *b);

#endif
