/* Routing: which links a flow uses. shortest, ecmp and spray route over
 * equal-cost shortest paths (hop count), the family modes (dor, minimal,
 * valiant, railonly, lotus) along their family's rule; hosts never forward traffic. A route is a set of links
 * with the fraction of the flow each carries: 1.0 on every link of a single
 * path, or the even split of ideal packet spraying over all shortest paths.
 *
 * A router caches one distance table (uint16 per node) per destination
 * switch, built lazily by BFS; single-homed hosts reuse their switch's table,
 * so a fat-tree of 8192 hosts needs 512 tables (~10 MB). A router is not
 * safe for concurrent use: give each thread its own. */
#ifndef FABRICSIM_ROUTE_H
#define FABRICSIM_ROUTE_H

#include <stdint.h>

#include "fabricsim/err.h"
#include "fabricsim/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fs_route_mode {
  FS_ROUTE_SHORTEST = 0, /* one deterministic path: lowest link id per hop */
  FS_ROUTE_ECMP,         /* per-flow, per-hop seeded hash over next hops */
  FS_ROUTE_SPRAY,        /* even split over all shortest paths */
  FS_ROUTE_EXPLICIT,     /* the path given with the flow */
  /* Family routings (single paths; only on their family, see
   * fs_route_mode_check): */
  FS_ROUTE_DOR,          /* torus, ring: dimension order (fs_route_torus_dor) */
  FS_ROUTE_MINIMAL,      /* dragonfly minimal (fs_route_dragonfly) */
  FS_ROUTE_VALIANT,      /* dragonfly Valiant, seeded like ECMP */
  FS_ROUTE_RAILONLY,     /* rail-only, scale-up first (fs_route_railonly) */
  FS_ROUTE_LOTUS         /* lotus, its own rule (fs_route_lotus) */
} fs_route_mode;

/* "shortest", "ecmp", "spray", "explicit", "dor", "minimal", "valiant",
 * "railonly". Returns 0 or FS_EINVAL (*out untouched). */
int fs_route_mode_parse(const char *name, fs_route_mode *out);
const char *fs_route_mode_name(fs_route_mode mode);

/* 0 if `mode` can route on t: the first four on any topology, dor on a
 * torus or ring, minimal and valiant on a dragonfly, railonly on a rail-only
 * fabric (built by its family, not imported from a file). Otherwise
 * FS_EINVAL with err saying which topology the mode needs and what t is;
 * callers prefix the JSON path or option. */
int fs_route_mode_check(fs_route_mode mode, const fs_topo *t, fs_err *err);

typedef struct fs_route {
  int32_t *links;   /* link ids; for a single path, in path order */
  double *weights;  /* fraction of the flow's rate on each link, in (0, 1];
                       a quotient route (symm.h) may carry any finite > 0 */
  int32_t n, cap;   /* entries used / allocated */
  double n_paths;   /* paths the route spreads over (1 unless spraying) */
  int32_t hops;     /* links on each path */
  int64_t latency_ns; /* longest path's summed link latency */
  /* A quotient route (symm.h) stands for flow_orbit flows (0 otherwise);
   * `expanded` is one of their routes as the router gave it (set by a route
   * cache that transforms and keeps them, fs_route_cache_keep_expanded;
   * borrowed, never freed with this route, NULL otherwise). A transport
   * model (sim.h) times a flow by its packets' route, so it reads hops and
   * queues there. */
  int64_t flow_orbit;
  const struct fs_route *expanded;
} fs_route;

void fs_route_init(fs_route *r);
void fs_route_free(fs_route *r);

typedef struct fs_router fs_router;

int fs_router_new(const fs_topo *t, fs_router **out, fs_err *err);
void fs_router_free(fs_router *r); /* NULL is a no-op */

/* Hop count of the shortest path from node `from` to node `to` that forwards
 * only through switches; -1 if there is none. */
int32_t fs_route_dist(fs_router *r, int32_t from, int32_t to);

/* Number of equal-cost shortest paths from src to dst (a double: it can be
 * astronomically large on big graphs), 0 if unreachable. */
double fs_route_count_paths(fs_router *r, int32_t src, int32_t dst);

/* Each fills *out (its previous contents are replaced) and returns 0, or a
 * negative FS_E* code with err set (FS_EINVAL: no path, or src == dst). */
int fs_route_shortest(fs_router *r, int32_t src, int32_t dst, fs_route *out,
                      fs_err *err);
/* key identifies the flow (as a 5-tuple hash would); the same (seed, key)
 * always takes the same path, different seeds sample different paths. */
int fs_route_ecmp(fs_router *r, int32_t src, int32_t dst, uint64_t seed,
                  uint64_t key, fs_route *out, fs_err *err);
int fs_route_spray(fs_router *r, int32_t src, int32_t dst, fs_route *out,
                   fs_err *err);
/* Routes src -> dst with `mode` (any but explicit, which fails with
 * FS_EINVAL): seed and key as fs_route_ecmp (ECMP and Valiant use them).
 * Errors as the function of that mode. */
int fs_route_by_mode(fs_router *r, fs_route_mode mode, int32_t src, int32_t dst, uint64_t seed,
                     uint64_t key, fs_route *out, fs_err *err);
/* nodes[0..n) must be a walk along existing links (the lowest-id link is
 * used between two nodes joined by several cables). Need not be shortest. */
int fs_route_explicit(fs_router *r, const int32_t *nodes, int32_t n,
                      fs_route *out, fs_err *err);

/* The nodes of a single-path route, from its first link's source on:
 * route->hops + 1 ids written to nodes (which must have room). Returns the
 * count, or -1 if the route is not a single path. */
int32_t fs_route_nodes(const fs_topo *t, const fs_route *route, int32_t *nodes);

/* ---- routes cached per pair (one connection per peer) ---- */
typedef struct fs_route_cache fs_route_cache;

/* Routes with `mode` (any but explicit; key salts the ECMP and Valiant
 * hash so two caches can spread differently). The router must outlive the
 * cache; a family mode must fit its topology (fs_route_mode_check), else
 * every get fails. */
int fs_route_cache_new(fs_router *r, fs_route_mode mode, uint64_t seed, uint64_t key,
                       fs_route_cache **out, fs_err *err);
/* The route from src to dst, computed on first use; valid until the cache
 * is freed. Errors as fs_route_ecmp. */
int fs_route_cache_get(fs_route_cache *c, int32_t src, int32_t dst, const fs_route **out,
                       fs_err *err);
void fs_route_cache_free(fs_route_cache *c); /* NULL is a no-op */
/* A function every route the cache computes goes through before it is
 * kept (e.g. the symmetry quotient, symm.h): fills out (initialised) from
 * in, or returns a negative code with err set (the get then fails). Set it
 * before the first get; routes already cached are not transformed. */
typedef int (*fs_route_transform_fn)(void *ctx, const fs_route *in, fs_route *out, fs_err *err);
void fs_route_cache_set_transform(fs_route_cache *c, fs_route_transform_fn fn, void *ctx);
/* From now on the cache also keeps each route before its transform, as the
 * kept route's `expanded` (what a transport model reads; memory: one more
 * route per pair). */
void fs_route_cache_keep_expanded(fs_route_cache *c);

/* ---- family-aware routing (single paths; errors as fs_route_explicit, and
 * FS_EINVAL on a topology of another family or src == dst) ---- */

/* Torus (and ring) dimension-order routing: from the source chip's router
 * along dims[0] the shorter way round (ties: increasing coordinate), then
 * dims[1], ...; minimal in hops, deterministic, deadlock-free ordering
 * aside (no virtual channels are modeled). */
int fs_route_torus_dor(fs_router *r, int32_t src, int32_t dst, fs_route *out,
                       fs_err *err);

/* Dragonfly routing (Kim et al., ISCA 2008). Minimal (valiant = 0): at most
 * one local hop, one global hop between the two groups, one local hop; of
 * several global cables between the groups, those needing the fewest local
 * hops, one picked by hash of (seed, key). Valiant (valiant = 1): minimally
 * to a random intermediate group (from (seed, key); neither end's group),
 * then minimally to the destination; minimal inside a group or with only
 * two groups. Two GPUs of one server take the scale-up path, as in every
 * mode. */
/* Sirius: minimal (valiant = 0) is host, its node, dst's node, dst;
 * Valiant (valiant = 1) passes through one more node, uniform over the
 * other N - 2 by hash of (seed, key) (direct when N = 2). */
int fs_route_sirius(fs_router *r, int32_t src, int32_t dst, int valiant, uint64_t seed,
                    uint64_t key, fs_route *out, fs_err *err);
int fs_route_dragonfly(fs_router *r, int32_t src, int32_t dst, int valiant,
                       uint64_t seed, uint64_t key, fs_route *out, fs_err *err);

/* Rail-only, scale-up domain first: inside a server over NVLink; along a
 * rail GPU-NIC-rail-NIC-GPU; between rails first over NVLink to the
 * source server's NIC on the destination's rail (the PXN cable), then along
 * that rail (5 hops, as short as ECMP's, which may also cross at the
 * destination's server instead). */
/* Lotus (Lu et al., JETC 2021), routed by the groups' ring distance d:
 * inside a lower switch directly; inside a group up through an upper switch
 * (hash of seed and key over the a of them); d = 1 over the AWGR channel
 * between the two lower switches (3 hops); d = 2 over two AWGR channels
 * through a lower switch (hashed) of the group between them, the + side
 * when both are (4 hops); d >= 3 up, over the pair's optical cable, down
 * (5 hops). Every route is a shortest path. Two GPUs of one server take
 * the scale-up path, as in every mode. */
int fs_route_lotus(fs_router *r, int32_t src, int32_t dst, uint64_t seed, uint64_t key,
                   fs_route *out, fs_err *err);
int fs_route_railonly(fs_router *r, int32_t src, int32_t dst, fs_route *out,
                      fs_err *err);

#ifdef __cplusplus
}
#endif

#endif
