/* Independent oracles for topology and routing tests: slow, obvious
 * implementations (BFS by scanning every link, brute-force min cut,
 * exhaustive path DFS) that share no code with metrics.c or paths.c. */
#ifndef FABRICSIM_TOPO_ORACLE_H
#define FABRICSIM_TOPO_ORACLE_H

#include <stdint.h>

#include "fabricsim/topo.h"

/* Builds a topology from an inline spec or file; on failure records a test
 * failure naming the spec and returns NULL. */
fs_topo *oracle_spec(const char *s);
/* fs_topo_stats_compute, recording a failure if it fails. */
fs_topo_stats oracle_stats_of(const fs_topo *t);
/* dist[] from src by BFS scanning all links at every step; through_hosts 0
 * expands no host but src (routing's rule), 1 is plain BFS (what metrics.c
 * does for multi-homed plain hosts). dist and q hold n_nodes entries. */
void oracle_bfs(const fs_topo *t, int32_t src, int through_hosts, int32_t *dist, int32_t *q);
/* Host-to-host diameter and mean over ordered pairs, from that BFS. */
void oracle_hops(const fs_topo *t, int through_hosts, int *diameter, double *avg);
/* Min cut with hosts [0,H/2) on the source side, over every subset of the
 * other nodes (at most 20 of them). */
double oracle_min_cut(const fs_topo *t);
/* Walks of exactly `hops` links from v to dst forwarding only through
 * non-hosts: the number of shortest paths when hops is the distance. */
double oracle_path_count(const fs_topo *t, int32_t v, int32_t dst, int hops);

#endif
