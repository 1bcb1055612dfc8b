/* Topology graph: a directed multigraph of hosts (GPUs/endpoints) and
 * switches. Each full-duplex cable is two directed links, each with its own
 * capacity and propagation latency. Hosts are node ids 0..n_hosts-1, numbered
 * leaf-major (fat-tree: pod-major, then edge switch, then port); switches
 * follow. Out-links of every node are kept in CSR form, ordered by link id,
 * so every traversal is deterministic.
 *
 * Sizes in mind: up to ~10^5 nodes and ~10^6 links; building is O(V + E). */
#ifndef FABRICSIM_TOPO_H
#define FABRICSIM_TOPO_H

#include <stdint.h>

#include "fabricsim/err.h"

typedef enum fs_node_kind {
  FS_NODE_HOST = 0, /* GPU or server endpoint: sources and sinks traffic */
  FS_NODE_SWITCH,   /* electrical packet switch */
  FS_NODE_NIC,      /* reserved for multi-NIC servers */
  FS_NODE_OCS,      /* reserved for optical circuit switches */
  FS_NODE_WAN       /* reserved for inter-datacentre sites */
} fs_node_kind;

/* Node capabilities (bits of fs_node.caps). */
#define FS_CAP_INC 1u /* switch can aggregate (SHARP / SwitchML style) */

typedef struct fs_node {
  fs_node_kind kind;
  int32_t tier;  /* 0 hosts, 1 leaf/edge, 2 spine/aggregation, 3 core */
  int32_t index; /* position within its tier (for names) */
  int32_t group; /* pod (fat-tree) or leaf (leaf-spine); -1 if none */
  uint32_t caps; /* FS_CAP_* */
} fs_node;

typedef struct fs_link {
  int32_t from, to;
  int32_t reverse; /* the other direction of the same cable */
  double capacity_bps;
  int64_t latency_ns;
} fs_link;

typedef struct fs_topo {
  char family[32]; /* "star", "leafspine", "fattree", ... */
  char spec[256];  /* canonical inline spec that rebuilds this topology */
  int32_t n_nodes, n_links, n_hosts;
  fs_node *nodes;
  fs_link *links;
  /* Out-links of node v: out_links[out_start[v] .. out_start[v+1]). */
  int32_t *out_start;
  int32_t *out_links;
} fs_topo;

/* ---- builders (each returns 0 and a new topology in *out, or a negative
 * FS_E* code with err naming the bad parameter and *out untouched) ---- */

/* All hosts on one switch. */
int fs_topo_star(int32_t hosts, double gbps, int64_t latency_ns,
                 fs_topo **out, fs_err *err);

typedef struct fs_leafspine_params {
  int32_t leaves, spines, hosts_per_leaf;
  double host_gbps, fabric_gbps; /* oversubscription = hpl*host / (spines*fabric) */
  int32_t links_per_spine;       /* parallel cables leaf<->spine, default 1 */
  int64_t latency_ns;
} fs_leafspine_params;
int fs_topo_leafspine(const fs_leafspine_params *p, fs_topo **out,
                      fs_err *err);

/* k-ary three-tier fat-tree (Al-Fares et al., SIGCOMM 2008): k pods, each of
 * k/2 edge and k/2 aggregation switches, (k/2)^2 core switches, k^3/4 hosts.
 * k must be even and >= 2. */
int fs_topo_fattree(int32_t k, double gbps, int64_t latency_ns, fs_topo **out,
                    fs_err *err);

/* Parses SPEC: a path to a JSON file holding a topology object, or an
 * inline "family:key=value,..." form such as
 * "fattree:k=8,gbps=100" or
 * "leafspine:leaves=4,spines=2,hosts_per_leaf=8,host_gbps=400,fabric_gbps=400".
 * Errors name the spec (or file), the key as a JSON path and the value. */
int fs_topo_from_spec(const char *spec, fs_topo **out, fs_err *err);

/* Parses a topology object from JSON text (the shape documented in
 * docs/formats.md); `file` labels errors. */
int fs_topo_from_json_text(const char *text, const char *file, fs_topo **out,
                           fs_err *err);

void fs_topo_free(fs_topo *t); /* NULL is a no-op */

/* Marks switches able to aggregate in the network: "none", "all", or "top"
 * (the highest switch tier). The spec key "inc" does the same. Returns 0 or
 * FS_EINVAL for another word. */
int fs_topo_mark_inc(fs_topo *t, const char *which);

/* "host3", "leaf1", "spine0", "edge2.1", "agg0.3", "core5", "switch". */
void fs_topo_node_name(const fs_topo *t, int32_t node, char *buf, int n);

/* ---- metrics ---- */
typedef struct fs_topo_stats {
  int32_t nodes, hosts, switches;
  int32_t cables; /* = links / 2 */
  int32_t links;  /* directed */
  int32_t max_radix;
  int32_t diameter_hops;    /* longest host-to-host shortest path */
  double avg_hops;          /* mean host-to-host shortest path over pairs */
  double bisection_bps;     /* max flow from hosts [0,n/2) to [n/2,n) */
  double host_injection_bps; /* sum of host up-link capacities */
} fs_topo_stats;

/* Computes all the fields. Cost: one BFS per distinct host attachment plus
 * one max-flow (Dinic) for the bisection. Fails only on out of memory, or
 * FS_EINVAL if some host cannot reach another (disconnected graph). */
int fs_topo_stats_compute(const fs_topo *t, fs_topo_stats *st, fs_err *err);

#endif
