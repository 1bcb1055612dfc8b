/* What the files of the work module share: reading a topology the way a
 * job needs it, whether its hosts are plain endpoints on a switch or GPUs of
 * servers (GPU -> NIC -> fabric switch, GPU -> scale-up switch). Only node
 * kinds and links are read, so any family works. */
#ifndef FABRICSIM_WORK_INTERNAL_H
#define FABRICSIM_WORK_INTERNAL_H

#include "fabricsim/topo.h"

/* The fabric switch host h's traffic enters: a switch it links to, or the
 * switch behind its NIC; -1 if none. */
int32_t fs__work_leaf(const fs_topo *t, int32_t h);
/* Gb/s host h can send into the scale-out fabric: its links to switches,
 * and its NICs' links to switches; in a fabric without switches (awgr,
 * fullmesh), its links to the other hosts. */
double fs__work_fabric_gbps(const fs_topo *t, int32_t h);
/* GPUs per server when the topology models servers (hosts sharing a
 * scale-up switch: a neighbour that is no host, switch, NIC, OCS or WAN
 * node), with *gbps the capacity of host 0's link to it; 1 and 0 for plain
 * hosts. */
int32_t fs__work_server_gpus(const fs_topo *t, double *gbps);
/* Multiplies the capacity of every link between a host and its scale-up
 * switch (both directions) by eff: the payload rate of GPU-driven copies. */
void fs__work_scale_scaleup(fs_topo *t, double eff);

#endif
