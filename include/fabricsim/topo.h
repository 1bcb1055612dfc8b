/* Topology graph: a directed multigraph of hosts (GPUs/endpoints) and
 * switches. Each full-duplex cable is two directed links, each with its own
 * capacity and propagation latency. Hosts are node ids 0..n_hosts-1, numbered
 * leaf-major (fat-tree: pod-major, then edge switch, then port); switches
 * follow. Out-links of every node are kept in CSR form, ordered by link id,
 * so every traversal is deterministic.
 *
 * GPU servers. With gpus_per_node G > 1 every host port of a family becomes
 * one GPU with its own NIC: GPU -- PCIe -- NIC -- fabric switch, and the G
 * consecutive GPUs of a server also hang off one scale-up switch
 * (NVLink/NVSwitch) by one link each. The GPUs are the hosts 0..N-1 (server
 * of GPU i: i / G); the fabric switches keep the ids they have with plain
 * hosts; NIC of GPU i is node nic0 + i and the scale-up switch of server s is
 * node scaleup0 + s. Hosts never forward, so traffic between two GPUs of a
 * server takes the 2-hop scale-up path and all other traffic leaves through
 * the sender's own NIC. docs/formats.md lists the link order.
 *
 * Sizes in mind: up to ~10^5 nodes and ~10^6 links; building is O(V + E). */
#ifndef FABRICSIM_TOPO_H
#define FABRICSIM_TOPO_H

#include <stdint.h>
#include <stdio.h>

#include "fabricsim/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fs_node_kind {
  FS_NODE_HOST = 0, /* GPU or server endpoint: sources and sinks traffic */
  FS_NODE_SWITCH,   /* electrical packet switch of the scale-out fabric */
  FS_NODE_NIC,      /* a GPU's network interface: forwards GPU <-> fabric */
  FS_NODE_OCS,      /* reserved for optical circuit switches */
  FS_NODE_WAN,      /* reserved for inter-datacentre sites */
  FS_NODE_SCALEUP   /* a server's scale-up switch (NVSwitch): joins its GPUs */
} fs_node_kind;

/* Node capabilities (bits of fs_node.caps). */
#define FS_CAP_INC 1u /* switch can aggregate (SHARP / SwitchML style) */

typedef struct fs_node {
  fs_node_kind kind;
  int32_t tier;  /* 0 hosts, NICs, scale-up; 1 leaf/edge, 2 spine/agg, 3 core */
  int32_t index; /* position within its tier (for names); NIC: its GPU;
                    scale-up switch: its server */
  int32_t group; /* pod (fat-tree) or leaf (leaf-spine); -1 if none. A NIC
                    or scale-up switch has its (first) GPU's group */
  uint32_t caps; /* FS_CAP_* */
} fs_node;

typedef struct fs_link {
  int32_t from, to;
  int32_t reverse; /* the other direction of the same cable */
  double capacity_bps;
  int64_t latency_ns;
} fs_link;

/* The per-part price and power table of the cost estimate (docs/model.md,
 * "Cost and power"). Row i of every part is for links of gbps[i]; a link
 * uses the first row at or above its speed (beyond the last: the last row
 * scaled by speed). */
enum { FS_COST_SPEEDS = 8 };
typedef struct fs_cost_part {
  double usd, watts;
} fs_cost_part;
typedef enum fs_cost_part_kind {
  FS_PART_SWITCH_PORT = 0, /* one port of a packet switch (share of the box) */
  FS_PART_NIC,             /* one network adapter port */
  FS_PART_DAC,             /* a direct-attach copper cable (both ends) */
  FS_PART_XCVR_SR,         /* multimode optical transceiver, <= sr_max_m */
  FS_PART_XCVR_DR,         /* single-mode optical transceiver, longer reach */
  FS_PART_COUNT
} fs_cost_part_kind;
typedef struct fs_cost_table {
  int32_t n_speeds;
  double gbps[FS_COST_SPEEDS];
  fs_cost_part part[FS_PART_COUNT][FS_COST_SPEEDS];
  double fiber_usd_per_m;
  double access_m; /* host or NIC to its first switch */
  double fabric_m; /* switch to switch */
  double global_m; /* dragonfly global links */
  double direct_m; /* chip to chip (torus, ring, fullmesh) */
  double dac_max_m, sr_max_m; /* reach of copper, of multimode optics */
  /* Optical parts without a speed row (docs/model.md, "Optical fabrics"):
   * a passive grating port; an OCS port (MEMS or silicon photonic) and its
   * share of the box's power; an optical I/O chiplet (TeraPHY), its rate
   * and its energy per bit. */
  double awgr_usd_per_port;
  double ocs_usd_per_port, ocs_watts_per_port;
  double optio_gbps, optio_usd, optio_pj_per_bit;
} fs_cost_table;

typedef struct fs_topo {
  char family[32]; /* "star", "leafspine", "fattree", ... */
  char spec[512];  /* canonical inline spec that rebuilds this topology */
  int32_t n_nodes, n_links, n_hosts;
  fs_node *nodes;
  fs_link *links;
  /* Out-links of node v: out_links[out_start[v] .. out_start[v+1]). */
  int32_t *out_start;
  int32_t *out_links;
  /* GPU servers: G (1 for plain hosts), and the first NIC and scale-up
   * switch ids (-1 when G = 1): NIC of GPU i = nic0 + i, scale-up switch of
   * server s = i / G is scaleup0 + s. */
  int32_t gpus_per_node;
  int32_t nic0, scaleup0;
  /* Family parameters for the closed forms (torus dims, ...); 0 if unused. */
  int32_t dims[8], n_dims;
  /* 1 when the scale-up links are optical I/O (spec key scaleup=optical_io):
   * their chiplets count in the cost and power. */
  int32_t scaleup_optical;
  fs_cost_table cost; /* the defaults unless the spec's "cost" overrides */
} fs_topo;

/* ---- builders (each returns 0 and a new topology in *out, or a negative
 * FS_E* code with err naming the bad parameter and *out untouched) ---- */

/* What a server is made of (docs/model.md, "Scale-up domains"). */
typedef struct fs_server_params {
  int32_t gpus_per_node;     /* G >= 1; 1 = plain hosts (the rest unused) */
  double nvlink_gbps;        /* GPU <-> scale-up switch, per direction */
  int64_t nvlink_latency_ns; /* per NVLink link (2 per GPU-to-GPU path) */
  double pcie_gbps;          /* GPU <-> its NIC, per direction */
  int64_t pcie_latency_ns;
  /* 1: the scale-up links are optical I/O chiplets (TeraPHY; spec key
   * scaleup=optical_io), priced and powered in the cost (t->cost's optio_*
   * rows); 0: electrical NVLink, outside the cost. */
  int32_t optical_io;
} fs_server_params;

/* The documented defaults (H100 SXM server) for G GPUs per server:
 * nvlink 3600 Gb/s and 250 ns, PCIe Gen5 x16 512 Gb/s and 250 ns. */
fs_server_params fs_server_defaults(int32_t gpus_per_node);

/* The *_servers builders take the server make-up; sv == NULL or
 * sv->gpus_per_node == 1 builds plain hosts, exactly as the plain builders.
 * The GPU count must be a multiple of G (leaf-spine: hosts_per_leaf must
 * be, so a server's NICs sit on one leaf; a fat-tree server may span edge
 * switches when G does not divide k/2). */

/* All hosts on one switch. */
int fs_topo_star(int32_t hosts, double gbps, int64_t latency_ns,
                 fs_topo **out, fs_err *err);
int fs_topo_star_servers(int32_t gpus, double gbps, int64_t latency_ns,
                         const fs_server_params *sv, fs_topo **out,
                         fs_err *err);

typedef struct fs_leafspine_params {
  int32_t leaves, spines, hosts_per_leaf;
  double host_gbps, fabric_gbps; /* oversubscription = hpl*host / (spines*fabric) */
  int32_t links_per_spine;       /* parallel cables leaf<->spine, default 1 */
  int64_t latency_ns;
} fs_leafspine_params;
int fs_topo_leafspine(const fs_leafspine_params *p, fs_topo **out,
                      fs_err *err);
int fs_topo_leafspine_servers(const fs_leafspine_params *p,
                              const fs_server_params *sv, fs_topo **out,
                              fs_err *err);

/* k-ary three-tier fat-tree (Al-Fares et al., SIGCOMM 2008): k pods, each of
 * k/2 edge and k/2 aggregation switches, (k/2)^2 core switches, k^3/4 hosts.
 * k must be even and >= 2. */
int fs_topo_fattree(int32_t k, double gbps, int64_t latency_ns, fs_topo **out,
                    fs_err *err);
int fs_topo_fattree_servers(int32_t k, double gbps, int64_t latency_ns,
                            const fs_server_params *sv, fs_topo **out,
                            fs_err *err);

/* General two- or three-tier folded Clos with oversubscription per tier
 * (family "clos"; a k-ary fat-tree is tiers 3, pods k, and k/2 for
 * edges_per_pod, hosts_per_edge, edge_uplinks and agg_uplinks).
 * Three tiers: `pods` pods of edges_per_pod edge switches (hosts_per_edge
 * hosts each) and edge_uplinks aggregation switches; every edge switch has
 * one cable to every aggregation switch of its pod; aggregation switch a of
 * every pod has one cable to each of the agg_uplinks core switches of plane
 * a (core a * agg_uplinks + j), so cores = edge_uplinks * agg_uplinks, each
 * of radix `pods`. Two tiers: one pod, no cores; the aggregation switches
 * are the spines (agg_uplinks 0, agg_gbps unused). Oversubscription:
 * edge tier hosts_per_edge * host_gbps : edge_uplinks * edge_gbps, and
 * aggregation tier edges_per_pod * edge_gbps : agg_uplinks * agg_gbps.
 * radix > 0 bounds every switch's ports. Numbering as fs_topo_fattree. */
typedef struct fs_clos_params {
  int32_t tiers;           /* 2 or 3 */
  int32_t pods;            /* >= 1; 1 with two tiers */
  int32_t edges_per_pod;   /* edge (leaf) switches per pod */
  int32_t hosts_per_edge;
  int32_t edge_uplinks;    /* = aggregation switches per pod (spines) */
  int32_t agg_uplinks;     /* three tiers: core switches per plane */
  int32_t radix;           /* ports per switch, 0 = unbounded */
  double host_gbps;        /* host (or NIC) <-> edge */
  double edge_gbps;        /* edge <-> aggregation (spine) */
  double agg_gbps;         /* aggregation <-> core */
  int64_t latency_ns;
} fs_clos_params;
int fs_topo_clos(const fs_clos_params *p, const fs_server_params *sv, fs_topo **out,
                 fs_err *err);

/* Rail-optimized multi-plane fabric (NVIDIA DGX SuperPOD style): servers of
 * G = gpus_per_node GPUs in scalable units (SUs) of servers_per_su; GPU i of
 * every server of an SU hangs (through its NIC) off rail switch i of the
 * SU, and every rail switch has one cable to each of `spines` spines
 * (links_per_spine parallel cables). Leaves: su * G + rail. Radix > 0
 * bounds every switch's ports (more hosts than ports is an error). */
typedef struct fs_railopt_params {
  int32_t servers, servers_per_su, spines, links_per_spine;
  int32_t radix; /* ports per switch, 0 = unbounded: a rail switch needs
                    servers_per_su + spines * links_per_spine, a spine
                    rail switches * links_per_spine */
  double host_gbps, fabric_gbps;
  int64_t latency_ns;
} fs_railopt_params;
int fs_topo_railopt(const fs_railopt_params *p, const fs_server_params *sv,
                    fs_topo **out, fs_err *err);

/* Rail-only (Wang et al., 2023): one switch per rail joins GPU i of every
 * server; no spines. Traffic between rails crosses the scale-up domain: each
 * scale-up switch also has a cable to each NIC of its server (PXN: NVLink
 * to the GPU on the destination's rail, then that GPU's NIC), so a GPU
 * reaches another rail in 5 hops GPU-scaleup-NIC-rail-NIC-GPU. radix > 0
 * bounds the rail switch's ports (servers <= radix); gpus_per_node >= 2. */
typedef struct fs_railonly_params {
  int32_t servers, radix;
  double host_gbps;
  int64_t latency_ns;
} fs_railonly_params;
int fs_topo_railonly(const fs_railonly_params *p, const fs_server_params *sv,
                     fs_topo **out, fs_err *err);

/* Direct networks of chips: each chip is a host (the endpoint) with its own
 * router (a tier-1 switch, index = chip) by one host_gbps cable; routers
 * are cabled among themselves with gbps cables. torus: n_dims in [1, 6],
 * each dimension >= 2, wrap-around; a dimension of size 2 gets one cable
 * between its two routers, not two. Chip id = mixed radix of the
 * coordinates, dims[0] most significant. ring = 1-D torus (n >= 2);
 * fullmesh: a cable between every two of n >= 2 routers. */
typedef struct fs_direct_params {
  int32_t n_dims;
  int32_t dims[6];
  double gbps, host_gbps;
  int64_t latency_ns;
} fs_direct_params;
int fs_topo_torus(const fs_direct_params *p, fs_topo **out, fs_err *err);
int fs_topo_ring(int32_t n, double gbps, double host_gbps, int64_t latency_ns,
                 fs_topo **out, fs_err *err);
int fs_topo_fullmesh(int32_t n, double gbps, double host_gbps, int64_t latency_ns,
                     fs_topo **out, fs_err *err);

/* Optical fabrics over arrayed waveguide grating routers (docs/model.md,
 * "Optical fabrics"). awgr (Grani et al., HPCA 2017): hosts into one passive
 * N x N AWGR; wavelength routing gives every ordered pair its own channel,
 * so hosts are cabled directly to each other, one channel_gbps cable a pair
 * (no switch node: the grating does not switch, and no host forwards).
 * sirius (Ballani et al., SIGCOMM 2020): each host has a node (tier 1
 * switch, group = index = node, which forwards for Valiant load balancing)
 * by a port_gbps cable of no latency (in-node); nodes are meshed by cables
 * of port_gbps / (N - 1), the time-averaged share of a slot cycle, each of
 * latency_ns + the mean wait for the pair's slot, (N - 1) * slot_ns / 2. */
typedef struct fs_awgr_params {
  int32_t hosts;
  double channel_gbps;
  int64_t latency_ns;
  /* Wavelengths the grating and lasers have: at least hosts - 1 (an N-port
   * AWGR reaches the other N - 1 ports on N - 1 wavelengths); 0: exactly
   * that. */
  int32_t wavelengths;
} fs_awgr_params;
int fs_topo_awgr(const fs_awgr_params *p, fs_topo **out, fs_err *err);
typedef struct fs_sirius_params {
  int32_t nodes;
  double port_gbps;
  int64_t latency_ns, slot_ns;
} fs_sirius_params;
int fs_topo_sirius(const fs_sirius_params *p, fs_topo **out, fs_err *err);
/* Mean wait for a pair's slot plus the fibre: the latency of a sirius
 * node-to-node cable. */
int64_t fs_sirius_hop_ns(int32_t nodes, int64_t latency_ns, int64_t slot_ns);

/* Lotus (Lu et al., ACM JETC 2021; docs/model.md, "Optical fabrics"): g
 * groups (g >= 3), each a complete bipartite graph K(a, a) of electrical
 * switches: a lower switches (tier 1, p hosts each) and a upper switches
 * (tier 2); one optical cable of global_gbps between each pair of groups,
 * group i's to group j on its upper switch ((j - i - 1) mod g) mod a; and
 * an AWGR between each pair of adjacent groups (i, i + 1 mod g) whose
 * wavelengths join every lower switch of one to every lower switch of the
 * other by an awgr_gbps channel. Hosts group-major, then lower switches
 * (index = group * a + x), then upper ones. */
typedef struct fs_lotus_params {
  int32_t g, a, p;
  double host_gbps, local_gbps, global_gbps, awgr_gbps;
  int64_t latency_ns, global_latency_ns;
} fs_lotus_params;
int fs_topo_lotus(const fs_lotus_params *p, const fs_server_params *sv, fs_topo **out,
                  fs_err *err);

/* SiP-ML (Khani et al., SIGCOMM 2021), the circuits fixed for the run: each
 * GPU (a host with its on-package router, tier 1, as the torus family) has
 * gpu_gbps of silicon-photonic I/O. sipml-ocs: `degree` (even) ports into
 * SiP circuit switches, configured as a (degree / 2)-dimensional torus of
 * the GPUs (dims as balanced as gpus allows, each >= 3), gpu_gbps / degree
 * a circuit. sipml-ring: GPUs on a fibre ring, each reaching the `degree`
 * (= r) nearest on either side by its own wavelengths, gpu_gbps / (2 r) a
 * neighbour, the k-th neighbour's latency k * latency_ns. */
typedef struct fs_sipml_params {
  int32_t gpus, degree;
  double gpu_gbps;
  int64_t latency_ns;
} fs_sipml_params;
int fs_topo_sipml_ocs(const fs_sipml_params *p, fs_topo **out, fs_err *err);
int fs_topo_sipml_ring(const fs_sipml_params *p, fs_topo **out, fs_err *err);

/* Jupiter (Poutievski et al., SIGCOMM 2022): aggregation blocks (one
 * non-blocking switch each, tier 2, hosts_per_block hosts) joined directly
 * through OCS, no spine: block i and j get links[i * blocks + j] parallel
 * cables of uplink_gbps (NULL: fs_jupiter_uniform). A block uses at most
 * `uplinks` ports. Hosts block-major, then the blocks. */
typedef struct fs_jupiter_params {
  int32_t blocks, hosts_per_block, uplinks;
  double host_gbps, uplink_gbps;
  int64_t latency_ns;
  const int32_t *links; /* blocks x blocks, symmetric, zero diagonal; or NULL */
} fs_jupiter_params;
int fs_topo_jupiter(const fs_jupiter_params *p, const fs_server_params *sv, fs_topo **out,
                    fs_err *err);
/* Uniform block-to-block links: floor(uplinks / (blocks - 1)) a pair. */
void fs_jupiter_uniform(int32_t blocks, int32_t uplinks, int32_t *links);
/* Traffic-aware topology engineering (docs/model.md, "Optical fabrics"):
 * integer link counts links[i * B + j] (symmetric) for the block-to-block
 * demand[i * B + j] (any unit, >= 0; a pair's need is the larger
 * direction), block i using at most uplinks[i] ports. Every pair first
 * gets one link when every block has B - 1 ports (the mesh stays
 * connected), then links go one at a time to the pair of largest
 * demand / links among pairs with a spare port at both ends (ties: fewer
 * links, then lower i, then lower j), until no pair has one. 0, or
 * FS_EINVAL (B outside [2, 64], a negative demand, uplinks outside
 * [0, 4096]) / FS_ENOMEM. */
int fs_jupiter_engineer(int32_t blocks, const int32_t *uplinks, const double *demand,
                        int32_t *links, fs_err *err);
/* A jupiter topology t (built by fs_topo_jupiter, uniform or engineered)
 * rebuilt with its links engineered for demand (blocks x blocks, as
 * fs_jupiter_engineer): the same blocks, hosts, rates, latencies, servers
 * and cost table. FS_EINVAL if t is no jupiter. */
int fs_topo_jupiter_engineer(const fs_topo *t, const double *demand, fs_topo **out,
                             fs_err *err);

/* Dragonfly (Kim et al., ISCA 2008): g groups of a routers, fully meshed
 * inside a group (local links); p hosts per router; h global links per
 * router. Each pair of groups gets floor(a*h / (g-1)) >= 1 global cables,
 * laid out "consecutively": global port j of group i (router j / h) serves
 * the groups in the order i+1, i+2, ... (mod g); g <= a*h + 1. The
 * balanced default is a = 2p = 2h, g = a*h + 1 (one cable per group pair).
 * Routers: tier 1, group = its group, index = group * a + r. */
typedef struct fs_dragonfly_params {
  int32_t a, p, h, g;
  double host_gbps, local_gbps, global_gbps;
  int64_t latency_ns, global_latency_ns;
} fs_dragonfly_params;
int fs_topo_dragonfly(const fs_dragonfly_params *p, const fs_server_params *sv,
                      fs_topo **out, fs_err *err);

/* Parses SPEC: a path to a JSON file holding a topology object, or an
 * inline "family:key=value,..." form such as
 * "fattree:k=8,gbps=100" or
 * "leafspine:leaves=4,spines=2,hosts_per_leaf=8,host_gbps=400,fabric_gbps=400"
 * or, with GPU servers, "fattree:k=32,gpus_per_node=8,nvlink_gbps=3600".
 * Errors name the spec (or file), the key as a JSON path and the value. */
int fs_topo_from_spec(const char *spec, fs_topo **out, fs_err *err);

/* Parses a topology object from JSON text (the shape documented in
 * docs/formats.md); `file` labels errors. */
int fs_topo_from_json_text(const char *text, const char *file, fs_topo **out,
                           fs_err *err);
/* The same from the object obj at `path` of a parsed document
 * (cjson/cJSON.h): the "topology" section of job and scenario files. */
struct cJSON;
int fs_topo_from_json_object(const struct cJSON *obj, const char *file, const char *path,
                             fs_topo **out, fs_err *err);

void fs_topo_free(fs_topo *t); /* NULL is a no-op */

/* Marks switches able to aggregate in the network: "none", "all", or "top"
 * (the highest switch tier). The spec key "inc" does the same. Returns 0 or
 * FS_EINVAL for another word. */
int fs_topo_mark_inc(fs_topo *t, const char *which);

/* "host3", "leaf1", "spine0", "edge2.1", "agg0.3", "core5", "switch";
 * with G > 1: "gpu3", "nic3", "scaleup0". */
void fs_topo_node_name(const fs_topo *t, int32_t node, char *buf, int n);
/* The class of a node in the same words: "gpu" or "host", "nic",
 * "scaleup", "tier1" (a fabric switch by its tier), "ocs", "wan": what
 * reports group links by ("nic -> tier1"). */
void fs_topo_node_class(const fs_topo *t, int32_t node, char *buf, int n);
/* The node named `name` (as fs_topo_node_name writes it), or -1. O(nodes). */
int32_t fs_topo_node_find(const fs_topo *t, const char *name);

/* A copy of t without the cables of which a direction is marked in
 * down[0..n_links): same nodes and ids, same family and parameters (so
 * names stay), links renumbered; link_map (n_links entries, may be NULL)
 * gets the original id of each new link. For routing around failures:
 * routes found on the copy map back through link_map. 0 or FS_ENOMEM. */
int fs_topo_without_cables(const fs_topo *t, const uint8_t *down, fs_topo **out,
                           int32_t *link_map, fs_err *err);

/* ---- metrics ---- */
typedef struct fs_topo_stats {
  int32_t nodes, hosts, switches; /* switches: of the fabric (FS_NODE_SWITCH) */
  int32_t cables; /* = links / 2 */
  int32_t links;  /* directed */
  int32_t max_radix;        /* over fabric switches */
  int32_t diameter_hops;    /* longest host-to-host shortest path */
  double avg_hops;          /* mean host-to-host shortest path over pairs */
  double bisection_bps;     /* max flow from hosts [0,n/2) to [n/2,n) */
  /* What the hosts can push into the scale-out fabric: per host, its links
   * to anything but a scale-up switch, a link to a NIC counting at most
   * what that NIC sends on (min(PCIe, NIC up-links)). With plain hosts:
   * the sum of host up-link capacities. */
  double host_injection_bps;
  /* GPU servers (plain hosts: G = 1, servers = hosts, no NICs, no scale-up) */
  int32_t gpus_per_node, servers, nics, scaleup_switches;
  double scaleup_bps; /* sum of GPU -> scale-up switch link capacities */
  /* The most the bisection cut could carry through the scale-out fabric:
   * the lesser of what hosts [0,n/2) can inject and [n/2,n) receive, each
   * counted as host_injection_bps is (0 with fewer than 2 hosts). */
  double full_bisection_bps;
} fs_topo_stats;

/* Computes all the fields. Cost: one BFS over the switches per group of
 * hosts attached alike (a leaf or edge switch, with or without servers)
 * plus one max-flow (Dinic) for the bisection. Hop counts never forward
 * through a GPU, as routing does; a graph with multi-homed plain hosts (none
 * of the families) gets plain BFS distances instead, one BFS per distinct
 * host attachment. Fails only on out of memory, or FS_EINVAL if some host
 * cannot reach another (disconnected graph); *st is written only on
 * success. */
int fs_topo_stats_compute(const fs_topo *t, fs_topo_stats *st, fs_err *err);

/* The bisection (bit/s, across the documented host order) that the
 * family's closed form predicts, or a negative value for families without
 * one (docs/model.md): fat-tree k^3/8 * link, Clos (even pods, or one pod
 * of even edges_per_pod), torus cut across dims[0] (even), ring 2 links (1
 * for n = 2). */
double fs_topo_bisection_formula(const fs_topo *t);

/* ---- cost and power ---- */
void fs_cost_defaults(fs_cost_table *c);

typedef struct fs_cost_line {
  int64_t count;      /* parts */
  double usd, watts;  /* totals */
} fs_cost_line;
typedef struct fs_topo_cost {
  fs_cost_line part[FS_PART_COUNT];
  double fiber_m, fiber_usd;
  /* Optical parts without a row (gratings, OCS ports, optical I/O
   * chiplets): in the totals too. */
  double optical_usd, optical_watts;
  double usd, watts; /* totals */
} fs_topo_cost;
/* The price and power of one part for a link of `gbps`: the table's first
 * row at or above it; past the last row, the last scaled by speed. */
fs_cost_part fs_cost_price(const fs_cost_table *c, fs_cost_part_kind k, double gbps);
/* Adds n parts of kind k at that speed to o->part[k] (totals are the
 * caller's to sum). */
void fs_cost_add(fs_topo_cost *o, const fs_cost_table *c, fs_cost_part_kind k, double gbps,
                 int64_t n);
/* Counts the parts of the scale-out network (GPUs, servers and their
 * scale-up domains excluded) and prices them with t->cost. Cannot fail. */
void fs_topo_cost_compute(const fs_topo *t, fs_topo_cost *out);
const char *fs_cost_part_name(fs_cost_part_kind k); /* "switch_port", ... */

/* ---- building a topology node by node ----
 * The family constructors build with it, and so do other modules' fabrics
 * (TopoOpt's, TPU v4 slices, the WAN's sites). Nodes get ids in the order
 * they are added; hosts must come first (ids 0 .. hosts-1). */
typedef struct fs_topo_builder {
  fs_topo *t;
  int32_t node_cap, link_cap;
} fs_topo_builder;

/* Starts a topology of `family` with room for the given counts (a hint). */
int fs_topo_builder_init(fs_topo_builder *b, const char *family, int32_t nodes_hint,
                         int32_t links_hint, fs_err *err);
/* Appends a node; returns its id or a negative FS_E* code. */
int32_t fs_topo_builder_node(fs_topo_builder *b, fs_node_kind kind, int32_t tier,
                             int32_t index, int32_t group);
/* Appends a cable a<->b: two directed links with the same capacity/latency. */
int fs_topo_builder_cable(fs_topo_builder *b, int32_t a, int32_t c, double bps,
                          int64_t latency_ns);
/* Builds the CSR adjacency, counts hosts (which must be nodes 0..h-1) and
 * hands the topology over in *out. The builder is empty afterwards. */
int fs_topo_builder_finish(fs_topo_builder *b, fs_topo **out, fs_err *err);
/* Into an empty builder: t's nodes (capabilities too) and its cables but
 * those with a direction marked in down (NULL: none), in t's link order
 * (asymmetric rates and latencies kept), and t's spec and parameters.
 * link_map as fs_topo_without_cables. For topologies derived from t (one
 * with failed cables, one with an OCS layer appended). 0 or FS_ENOMEM. */
int fs_topo_builder_copy(fs_topo_builder *b, const fs_topo *t, const uint8_t *down,
                         int32_t *link_map);
void fs_topo_builder_abort(fs_topo_builder *b);

/* Checks of a family's parameters, for a builder's caller: each returns 0
 * or FS_EINVAL with err naming `fam` and the parameter (gbps in (0, 1e7],
 * latency in [0, 1e12] ns, at most 4M nodes and 4M cables). */
int fs_topo_check_gbps(const char *fam, double gbps, const char *gname, fs_err *err);
int fs_topo_check_latency(const char *fam, int64_t latency_ns, const char *lname, fs_err *err);
int fs_topo_check_link(const char *fam, double gbps, const char *gname, int64_t latency_ns,
                       fs_err *err);
int fs_topo_check_size(const char *fam, int64_t nodes, int64_t cables, fs_err *err);
/* GPU servers (gpus_per_node > 1: a NIC per GPU, a scale-up switch per
 * server). Validates sv (NULL = plain hosts) into *out; G must divide `per`,
 * the GPUs `per_what` names, for the reason `why` ("" or "; ..."). */
int fs_topo_servers_check(const char *fam, const fs_server_params *sv, int64_t per,
                          const char *per_what, const char *why, fs_server_params *out,
                          fs_err *err);
/* Nodes and cables the servers add to `gpus` plain host ports. */
int64_t fs_topo_servers_nodes(const fs_server_params *sv, int64_t gpus);
int64_t fs_topo_servers_cables(const fs_server_params *sv, int64_t gpus);
/* After the fabric switches: NICs, scale-up switches, PCIe cables. */
int fs_topo_builder_servers_begin(fs_topo_builder *b, const fs_server_params *sv, int32_t gpus);
/* The node behind host port i: the host itself, or its GPU's NIC. */
int32_t fs_topo_builder_port(const fs_topo_builder *b, int32_t i);
/* Last: the NVLink cables, and the server keys of the canonical spec. */
int fs_topo_builder_servers_end(fs_topo_builder *b, const fs_server_params *sv, int32_t gpus);

/* ---- export ---- */
/* Writes the graph as "dot", "graphml" or "json" (a "file" topology object
 * that fs_topo_from_json_text rebuilds identically). Returns 0, FS_EINVAL
 * for another format, or FS_EIO on a write error. */
int fs_topo_export(const fs_topo *t, const char *format, FILE *f, fs_err *err);

#ifdef __cplusplus
}
#endif

#endif
