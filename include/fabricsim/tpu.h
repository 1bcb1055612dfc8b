/* TPU v4 style pods (Jouppi et al., ISCA 2023; docs/model-tpu.md): cubes of
 * 4x4x4 chips wired electrically inside, whose 6 faces x 16 links go to 48
 * optical circuit switches (OCS), one per (dimension, face position). A job's
 * slice (x, y, z chips, multiples of 4) takes any free cubes; the OCSes join
 * their faces into a 3-D torus or twisted torus of that shape. Also: the
 * static (non-OCS) baseline where a slice needs a contiguous block of cubes,
 * and the optical share of the pod's cost and power.
 *
 * OCS ports: OCS o = dim * 16 + face position; cube c's "+" face uses port c
 * and its "-" face port n_cubes + c, so a pod needs 2 * n_cubes <= ports per
 * OCS (64 cubes, 136-port OCS in the paper). A circuit always joins a "+"
 * port to a "-" port. Sizes: <= 68 cubes, 48 OCSes, <= 4352 chips; every
 * operation is O(cubes * 48) or O(chips). */
#ifndef FABRICSIM_TPU_H
#define FABRICSIM_TPU_H

#include <stdint.h>

#include "fabricsim/err.h"
#include "fabricsim/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  FS_TPU_CUBE_SIDE = 4,  /* chips per cube edge */
  FS_TPU_CUBE_CHIPS = 64,
  FS_TPU_FACE_LINKS = 16, /* optical links per cube face = face positions */
  FS_TPU_N_OCS = 48,      /* 3 dimensions x 16 face positions */
  FS_TPU_FREE = -1,       /* cube_state values (>= 0: the slice holding it) */
  FS_TPU_BUSY = -2        /* failed, drained or held outside this model */
};

typedef struct fs_tpu_params {
  int32_t cubes;          /* cubes in the pod, 1..ocs_ports/2 (default 64) */
  int32_t ocs_ports;      /* ports per OCS (default 136, Palomar) */
  double ici_gbps;        /* per ICI link and direction (default 400) */
  int64_t ici_latency_ns; /* per hop (default 500, estimate) */
  double reconfig_s;      /* OCS reconfiguration delay (default 10 ms, MEMS) */
} fs_tpu_params;

/* The documented defaults (docs/model-tpu.md). Cannot fail. */
void fs_tpu_defaults(fs_tpu_params *p);

/* ---- slice shapes ---- */

/* Parses "XxYxZ" (three positive integers) into dims. Returns 0 or
 * FS_EINVAL naming the text; dims untouched on failure. */
int fs_tpu_shape_parse(const char *s, int32_t dims[3], fs_err *err);

/* Checks a slice shape: each dimension a positive multiple of 4; twisted
 * only for k x k x 2k and k x 2k x 2k in some order (the shapes the paper
 * and Cloud TPU allow). Returns 0 or FS_EINVAL naming the shape. */
int fs_tpu_shape_check(const int32_t dims[3], int twisted, fs_err *err);

/* The built order of a shape: dimensions sorted longest first, so the
 * host-order bisection of fs_topo_stats cuts the longest dimension (the
 * narrowest cut of a torus). Cannot fail. */
void fs_tpu_shape_canon(const int32_t dims[3], int32_t out[3]);

/* ---- the pod and its OCS configuration ---- */

typedef struct fs_tpu_slice {
  int32_t id;         /* >= 0, unique in its pod */
  int32_t dims[3];    /* chips, canonical order (fs_tpu_shape_canon) */
  int32_t cdims[3];   /* cubes per dimension = dims / 4 */
  int twisted;
  int32_t n_cubes;
  int32_t *cubes;     /* physical cube of slice cube (i * cdims[1] + j) * cdims[2] + k */
  int64_t circuits;   /* circuits it holds = 48 * n_cubes */
} fs_tpu_slice;

typedef struct fs_tpu_pod {
  fs_tpu_params p;
  int32_t *cube_state; /* per cube: FS_TPU_FREE, FS_TPU_BUSY or a slice id */
  /* OCS o, port q: peer[o * ocs_ports + q] = the port circuited to q, or -1. */
  int32_t *peer;
  int64_t circuits; /* established, over all OCSes */
  int32_t next_id;
} fs_tpu_pod;

/* A pod with every cube free and no circuit. Returns 0, FS_EINVAL (cubes or
 * ports out of range, ici_gbps, latency or reconfig_s invalid; named) or
 * FS_ENOMEM; on failure *out is untouched. */
int fs_tpu_pod_new(const fs_tpu_params *p, fs_tpu_pod **out, fs_err *err);
void fs_tpu_pod_free(fs_tpu_pod *pod); /* NULL is a no-op */

/* Marks a free cube busy. FS_EINVAL (pod unchanged) if out of range or not
 * free. */
int fs_tpu_pod_set_busy(fs_tpu_pod *pod, int32_t cube, fs_err *err);
/* Marks the cubes of a comma-separated list of ids ("3,7,12", the CLI's
 * --busy) busy, as fs_tpu_pod_set_busy does each; FS_EINVAL naming --busy
 * and the list if it is not one (cubes before the bad entry stay busy). */
int fs_tpu_pod_set_busy_list(fs_tpu_pod *pod, const char *list, fs_err *err);
/* Marks k distinct free cubes busy, chosen uniformly with the seeded rng.
 * FS_EINVAL (pod unchanged) if fewer than k cubes are free. */
int fs_tpu_pod_busy_random(fs_tpu_pod *pod, int32_t k, uint64_t seed, fs_err *err);
int32_t fs_tpu_pod_free_cubes(const fs_tpu_pod *pod);

/* Checks the invariants of the OCS configuration: every peer entry is -1 or
 * a port of the same OCS, symmetric (no port in two circuits), joins a "+"
 * port to a "-" port of cubes held by one slice, and the circuit count
 * matches. Returns 0 or FS_EINTERNAL naming the OCS and port. */
int fs_tpu_pod_check(const fs_tpu_pod *pod, fs_err *err);

/* ---- placement ---- */

/* With OCS any free cubes will do: the first n free cubes in id order.
 * Returns 1 and fills cubes[0..n), or 0 (cubes untouched) if fewer are free. */
int fs_tpu_place_ocs(const fs_tpu_pod *pod, int32_t n, int32_t *cubes);

/* The static baseline: the pod's cubes wired once as a grid[0] x grid[1] x
 * grid[2] torus of cubes (cube id = mixed radix, grid[0] most significant).
 * A slice of cdims cubes needs a contiguous block: any of the 6 axis orders
 * of cdims, any origin, wrapping around the grid. Returns 1 and fills
 * cubes[] in slice order (as fs_tpu_slice.cubes), or 0 (cubes untouched).
 * The scan order (axis orders, then origins in id order) is deterministic. */
int fs_tpu_place_static(const fs_tpu_pod *pod, const int32_t grid[3], const int32_t cdims[3],
                        int32_t *cubes);

/* The static grid for n cubes: the factorisation a >= b >= c of n with the
 * least a - c (64 -> 4x4x4). Cannot fail for n >= 1. */
void fs_tpu_static_grid(int32_t n, int32_t grid[3]);

/* ---- slices ---- */

/* Configures a slice of shape dims (any order; canonicalised) on the given
 * cubes (cubes[0..n) in slice order, n = product of dims / 64): for each
 * dimension d, face position and slice cube, one circuit from the cube's "+"
 * port to the "-" port of its + neighbour along d; the wrap-around neighbour
 * of a twisted slice is shifted (docs/model-tpu.md, "Twisted tori"). Refuses
 * (FS_EINVAL, pod unchanged) a bad shape, a wrong cube count, a cube out of
 * range, repeated or not free, or (FS_EINTERNAL) a port already in a circuit.
 * On success *out owns a copy of the cube list (fs_tpu_slice_clear); on
 * failure *out is zeroed. */
int fs_tpu_slice_add(fs_tpu_pod *pod, const int32_t dims[3], int twisted, const int32_t *cubes,
                     fs_tpu_slice *out, fs_err *err);
/* Tears the slice's circuits down and frees its cubes. FS_EINVAL (pod
 * unchanged) if the pod does not hold that slice. The slice stays valid. */
int fs_tpu_slice_remove(fs_tpu_pod *pod, const fs_tpu_slice *s, fs_err *err);
void fs_tpu_slice_clear(fs_tpu_slice *s); /* frees cubes; zeroes; safe on zeroed */

/* The chip-level graph of a slice, read back from the OCS circuits (not from
 * the shape): chips are hosts 0..n-1 numbered as the torus family (mixed
 * radix of the global coordinates, dims[0] most significant), chip i's
 * router is node n + i (host cable first, host_gbps = 6 links' worth), then
 * the electrical links inside cubes and one cable per circuit, all at
 * ici_gbps. An untwisted slice gets family "torus" and the torus spec (so
 * `dor` routing and the torus bisection formula apply); a twisted one family
 * "tpu_twisted" with a descriptive spec (not rebuildable by
 * fs_topo_from_spec; export it as JSON to keep it). Returns 0, FS_EINVAL (no
 * such slice in the pod, or a circuit that leaves it) or FS_ENOMEM. */
int fs_tpu_slice_topo(const fs_tpu_pod *pod, const fs_tpu_slice *s, fs_topo **out, fs_err *err);

/* Closed forms of an untwisted dims[0] x dims[1] x dims[2] torus (all
 * dimensions >= 3): router-to-router diameter sum floor(d/2), and the
 * bisection across the longest dimension in links, 2 * n / max(dims). */
int32_t fs_tpu_torus_diameter(const int32_t dims[3]);
int64_t fs_tpu_torus_bisection_links(const int32_t dims[3]);

/* Router-to-router cables of a slice graph (fs_tpu_slice_topo, dims its
 * t->dims) crossing the plane that halves each dimension d (coordinate <
 * dims[d]/2 against the rest): links[d]. The least of the three is the
 * axis-halving bisection, the torus's minimum bisection; a twisted torus's
 * true minimum may be lower (other balanced cuts are not searched). Returns
 * 0 or FS_EINVAL if t is not a 3-D slice graph. */
int fs_tpu_halving_cuts(const fs_topo *t, int64_t links[3], fs_err *err);

/* ---- reconfiguration ---- */

typedef struct fs_tpu_reconfig {
  int64_t torn_down, set_up; /* circuits only in the old / only in the new */
  int32_t ocs_touched;       /* OCSes with any change */
  double time_s;             /* reconfig_s if any circuit changed, else 0:
                                the OCSes switch in parallel */
} fs_tpu_reconfig;

/* Compares two configurations of the same pod (peer arrays of
 * 48 * ocs_ports entries). Cannot fail. */
void fs_tpu_reconfig_diff(const fs_tpu_params *p, const int32_t *old_peer,
                          const int32_t *new_peer, fs_tpu_reconfig *out);

/* ---- cost and power ---- */

typedef struct fs_tpu_cost_params {
  double chip_usd, chip_watts; /* per chip, everything but the optical fabric */
  double ocs_usd, ocs_watts;   /* per OCS */
  double xcvr_usd, xcvr_watts; /* per optical link end (transceiver) */
  double fiber_usd_per_m, fiber_m;
} fs_tpu_cost_params;

/* The documented estimates (docs/model-tpu.md, "Cost and power"). */
void fs_tpu_cost_defaults(fs_tpu_cost_params *c);

typedef struct fs_tpu_cost {
  int64_t chips, ocs, transceivers, fibers;
  double chips_usd, ocs_usd, xcvr_usd, fiber_usd, total_usd;
  double chips_w, ocs_w, xcvr_w, total_w;
  double share_usd, share_w;         /* (OCS + transceivers + fiber) / total */
  double ocs_share_usd, ocs_share_w; /* the OCS boxes alone / total */
  /* What the OCS adds to a pod whose racks are joined by optics anyway:
   * the OCS boxes and the fiber runs to them / total (the transceivers of
   * the inter-rack ICI links are there with or without OCS). */
  double incr_share_usd, incr_share_w;
  /* The system cost per chip at which the whole optical share would be
   * exactly 5 % of cost. */
  double chip_usd_at_5pct;
  /* The transceiver price and power at which the optical share would be
   * exactly 5% of cost and 3% of power (the paper's bounds); negative when
   * even free transceivers would not get there. */
  double xcvr_usd_at_5pct, xcvr_w_at_3pct;
} fs_tpu_cost;

/* Counts a pod of p->cubes cubes: 64 chips per cube, 48 OCSes, 96
 * transceivers and fibers per cube (one per optical face link; the OCS
 * itself has no transceivers), and prices them. Returns 0 or FS_EINVAL
 * naming a negative or non-finite parameter. */
int fs_tpu_cost_compute(const fs_tpu_params *p, const fs_tpu_cost_params *c, fs_tpu_cost *out,
                        fs_err *err);

/* ---- job mix ---- */

typedef struct fs_tpu_mix_result {
  int32_t jobs;
  int32_t fit_ocs, fit_static;      /* jobs admitted */
  int32_t fit_both;                 /* admitted by both */
  int64_t cubes_asked;              /* sum over jobs */
  int64_t cube_steps_ocs, cube_steps_static; /* sum over steps of cubes held */
  int32_t free_cubes;               /* of the pod at the start */
  int32_t mean_life;                /* steps, derived for offered load 1 */
  int64_t reconfigs;                /* OCS reconfigurations (admissions + departures) */
} fs_tpu_mix_result;

/* A loss system: one request per time step, shapes uniform among 4x4x4,
 * 4x4x8, 4x8x8, 8x8x8, 8x8x16 (1 to 16 cubes, mean 6.2), each holding its
 * cubes for a lifetime uniform in [1, 2L-1] steps with L = round(free cubes
 * / 6.2), so the offered load is the pod's free capacity. Departures come
 * first in a step, then the arrival is admitted or dropped, independently
 * in two copies of pod: with OCS (any free cubes; configured with
 * fs_tpu_slice_add and removed on departure) and static (contiguous block on
 * fs_tpu_static_grid). Same arrivals and lifetimes in both (seeded). The pod
 * is not changed. Returns 0, FS_EINVAL (jobs out of [0, 1e6], no free cube)
 * or FS_ENOMEM. */
int fs_tpu_mix_run(const fs_tpu_pod *pod, int32_t jobs, uint64_t seed, fs_tpu_mix_result *out,
                   fs_err *err);

#ifdef __cplusplus
}
#endif

#endif
