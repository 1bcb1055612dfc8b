/* Collectives on the replica-shift quotient (training module internal).
 *
 * Under the replica shift, member k of a gradient group maps to member
 * k + shift (mod n), and a ring collective maps onto itself: its flows form
 * orbits of n / shift flows that max-min gives the same times. A template
 * is the collective lowered once (fs_coll_lower into a scratch simulation)
 * and written in member terms; building it checks that the shift is an
 * automorphism of the lowering's DAG (items matched by kind, members +
 * shift, bytes or duration and occurrence; the start and done tasks are
 * fixed points), and keeps one item per orbit: the one whose source (flow)
 * or host (task) member is below shift, with every dependency on another
 * member's item redirected to its orbit's representative (which finishes
 * at the same time). Instantiating it on a group of hosts adds only those
 * items, so a collective over n members costs shift / n of its flows.
 * docs/model-alltraffic.md ("Replica shift"). */
#ifndef FABRICSIM_WORK_QCOLL_H
#define FABRICSIM_WORK_QCOLL_H

#include <stdint.h>

#include "fabricsim/coll.h"
#include "fabricsim/route.h"
#include "fabricsim/sim.h"

typedef struct fs__qcoll fs__qcoll;

/* Lowers prm (algo not AUTO) over g on topology t and builds the template
 * for `shift` (which must divide g->p); routes play no part in a template
 * (the lowering routes by shortest path). Returns 0; FS_EINVAL with err
 * saying which item has no image (the lowering is not shift-invariant, so
 * the caller must simulate the whole group); FS_ENOMEM. */
int fs__qcoll_new(const fs_topo *t, fs_router *router, uint64_t seed,
                  const fs_coll_params *prm, const fs_coll_group *g, int32_t shift,
                  fs__qcoll **out, fs_err *err);
/* 1 if q was built for this collective, group size and shift, on a group
 * whose ring server size (fs_coll_ring_server_size; 0 for other
 * algorithms) is ring_g. */
int fs__qcoll_matches(const fs__qcoll *q, const fs_coll_params *prm, int32_t n,
                      int32_t ring_g, int32_t shift);
/* Adds the representatives on `hosts` (n of them, the template's member
 * order) to sim, routed by `routes`; the start waits for after[0..n_after).
 * *first is the first item added, *done the done task. 0 or a negative
 * code (sim then holds a partial copy). */
int fs__qcoll_add(const fs__qcoll *q, fs_sim *sim, fs_route_cache *routes, const int32_t *hosts,
                  const int32_t *after, int32_t n_after, int32_t *first, int32_t *done,
                  fs_err *err);
/* The same as fs__qcoll_add, lazily: a plan instance (sim.h "plans"), whose
 * items exist only while they run; exactly the same run. *flows and *tasks:
 * what the instance will make (its start and done among the tasks). */
int fs__qcoll_add_lazy(fs__qcoll *q, fs_sim *sim, fs_route_cache *routes, const int32_t *hosts,
                       const int32_t *after, int32_t n_after, int32_t *first, int32_t *done,
                       int64_t *flows, int64_t *tasks, fs_err *err);
/* Adds to *sum, in the template's order, the bytes of the flows of the
 * instance on hosts whose route leaves node me: what the eager copy's
 * flows from me carry. */
int fs__qcoll_wire_bytes(const fs__qcoll *q, fs_route_cache *routes, const fs_topo *t,
                         const int32_t *hosts, int32_t me, double *sum, fs_err *err);
void fs__qcoll_free(fs__qcoll *q); /* NULL is a no-op */

#endif
