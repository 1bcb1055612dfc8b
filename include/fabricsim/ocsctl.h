/* Circuits that change while a training iteration runs (issue 47): an
 * optical circuit switch (OCS) layer beside a topology's electrical fabric,
 * and the controller that sets its circuits as the traffic changes.
 *
 * The layer: every leaf (tier-1 switch: a ToR, a rail switch, a fat-tree's
 * edge) has `ports` optical ports of `gbps` each into one OCS. A circuit
 * joins two leaves, both directions, and uses a port at each end; a leaf
 * pair may hold several. fs_ocsctl_topo appends to a topology one directed
 * link per ordered leaf pair (the circuits it may ever hold), after the
 * topology's own links, so every route found on the electrical topology is a
 * route of the augmented one. A flow between two leaves rides the circuit
 * while its pair has one lit (the links up to its leaf, the circuit, the
 * links down from the other leaf) and the electrical fabric otherwise: the
 * hybrid of c-Through and Helios (Wang et al.; Farrington et al.; SIGCOMM
 * 2010), at the leaves as Jupiter's OCS joins aggregation blocks.
 *
 * The controller (docs/model-ocs.md, "Circuits during an iteration"):
 *   static: one configuration for the run, set before it starts, from the
 *     bytes every flow of the iteration carries between leaves (training
 *     repeats, so the last iteration tells the next: the TopoOpt view).
 *   adaptive: starts from the static configuration; every interval it
 *     takes the traffic of the last interval (flows started in it or still
 *     in flight, as the routing controller does, netctl.h), builds the
 *     configuration that traffic wants, and estimates the time to carry it
 *     under the circuits lit now (T_stay) and under the new ones (T_go).
 *     It reconfigures only if reconfig_s + T_go < T_stay: a change that
 *     costs more than it saves is declined (and counted). A changed circuit
 *     is dark for reconfig_s (its traffic on the electrical fabric); the
 *     circuits kept carry on (a MEMS switch moves only the mirrors of the
 *     ports it changes).
 * Not safe for concurrent use. */
#ifndef FABRICSIM_OCSCTL_H
#define FABRICSIM_OCSCTL_H

#include <stdint.h>

#include "fabricsim/err.h"
#include "fabricsim/sim.h"
#include "fabricsim/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fs_ocsctl_policy {
  FS_OCSCTL_STATIC = 0, /* one configuration for the run */
  FS_OCSCTL_ADAPTIVE    /* reconfigures when it pays */
} fs_ocsctl_policy;
const char *fs_ocsctl_policy_name(fs_ocsctl_policy p); /* "static", "adaptive" */

typedef struct fs_ocsctl_opts {
  int32_t ports;       /* optical ports per leaf; 0: no OCS layer */
  double gbps;         /* per circuit and direction */
  int64_t latency_ns;  /* a circuit's latency (the fibre through the OCS) */
  double reconfig_s;   /* a changed circuit is dark this long */
  double interval_s;   /* adaptive: decisions this often (> 0) */
  fs_ocsctl_policy policy;
  char technology[16]; /* the preset the delay came from, "" if given */
} fs_ocsctl_opts;

/* No layer: ports 0; the rest as the job format's defaults (400 Gb/s,
 * 500 ns, MEMS, adaptive, interval 10 x the delay). */
void fs_ocsctl_opts_init(fs_ocsctl_opts *o);

/* The adaptive policy's interval when none is given: ten delays (a change
 * must be able to pay for itself within it), never under 1 ms (so
 * nanosecond switches do not tick every few nanoseconds). */
double fs_ocsctl_default_interval(double reconfig_s);

/* A switching technology's reconfiguration delay (docs/model-ocs.md,
 * "Reconfiguration delays"): "mems" 10 ms, "wss" 11.5 us (Mordia), "sip"
 * 25 us (an estimate), "laser" 3.84 ns (Sirius). 0, or FS_EINVAL if unknown. */
int fs_ocsctl_technology(const char *name, double *reconfig_s);

/* The leaves the layer joins: tier-1 fabric switches, in id order. Writes
 * up to max ids, returns their count. */
int32_t fs_ocsctl_leaves(const fs_topo *t, int32_t *leaves, int32_t max);

/* t with the layer's links appended (one per ordered leaf pair, capacity
 * o->gbps, latency o->latency_ns): same nodes and ids, t's links keep their
 * ids. Fails with FS_EINVAL (fewer than two leaves; a topology whose cables
 * are not consecutive link pairs) or FS_ENOMEM. */
int fs_ocsctl_topo(const fs_topo *t, const fs_ocsctl_opts *o, fs_topo **out, fs_err *err);

typedef struct fs_ocsctl_stats {
  int32_t leaves, ports;
  int32_t circuits_initial;  /* lit before the run (the static configuration) */
  int32_t decisions;         /* adaptive: intervals with traffic */
  int32_t reconfigs;         /* configurations changed during the run */
  int32_t declined;          /* a better configuration not taken: it cost more than it saved */
  int64_t circuits_set;      /* circuits set up during the run */
  int64_t flows_moved;       /* re-routes onto or off a circuit */
  double dark_s;             /* circuit-seconds dark while reconfiguring */
  double circuit_bytes;      /* bytes of flows whose last route was a circuit */
  double flow_bytes;         /* bytes of all flows between two leaves */
} fs_ocsctl_stats;

/* One change of a leaf pair's circuits: from `from` to `to` circuits,
 * decided at at_s, lit at lit_s (at_s + the delay when it grows). */
typedef struct fs_ocsctl_change {
  double at_s, lit_s;
  int32_t a, b; /* leaf node ids, a < b */
  int32_t from, to;
} fs_ocsctl_change;

typedef struct fs_ocsctl fs_ocsctl;

/* Attaches a controller to s (before its run). s's topology must be one
 * fs_ocsctl_topo built with the same options, its layer starting at link
 * first_link; its flows' routes single paths on the electrical links.
 * Indexes the flows between leaves, lights the static configuration (their
 * flows re-routed before they start) and, adaptive, arms the timer.
 * FS_EINVAL (bad options, a spread route) or FS_ENOMEM. */
int fs_ocsctl_new(fs_sim *s, int32_t first_link, const fs_ocsctl_opts *o, fs_ocsctl **out,
                  fs_err *err);
/* After the run: counts, and the changes in the order made (the static
 * configuration's circuits first, at time 0). */
void fs_ocsctl_stats_get(const fs_ocsctl *c, fs_ocsctl_stats *out);
int32_t fs_ocsctl_changes(const fs_ocsctl *c, const fs_ocsctl_change **out);
void fs_ocsctl_free(fs_ocsctl *c); /* NULL is a no-op */

/* root["ocs"], if present (job files, docs/formats.md): {"ports",
 * "gbps", "latency_ns", "technology" | "reconfig_us", "policy",
 * "interval_ms"}. Absent: o->ports = 0. FS_EINVAL naming the JSON path and
 * value, or FS_ENOMEM. */
struct cJSON;
int fs_ocsctl_from_json(const struct cJSON *root, const char *file, fs_ocsctl_opts *o,
                        fs_err *err);

#ifdef __cplusplus
}
#endif

#endif
