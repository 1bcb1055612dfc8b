/* The built-in packet-level backend of `fabricsim sim --backend packet`: a
 * scenario routed by fabricsim is run again packet by packet, with the
 * rules of the ns-3 backend's set-up (docs/model.md, "The packet
 * backend"): store and forward at every hop, FIFO switch ports that mark
 * ECN with RED's gentle law at K, hosts that serve their flows' packets in
 * turn and mark past K packets' sojourn, TCP with DCTCP (a handshake, the
 * SYN's unscaled first flight and slow start on new connections; the
 * backend's warm window on persistent ones), an ACK per packet. No loss,
 * no delayed ACKs, no timers. Its item times replace the simulation's, so
 * the usual reports print them; seconds where ns-3 takes minutes, for a
 * check of a fluid result at small scale without ns-3.
 *
 * Like the ns-3 backend it pins each flow to one path and has no routing
 * control; it runs the tcp transport only. */
#ifndef FABRICSIM_PACKET_H
#define FABRICSIM_PACKET_H

#include "fabricsim/err.h"
#include "fabricsim/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Before fs_scenario_run: 0, or FS_EINVAL (naming the file, the JSON path
 * and the value) if the scenario's transport is not tcp, or it asks for
 * routing control ($.routing.mode optimized, $.failures) or spraying
 * ($.routing.mode spray). sc is not changed. */
int fs_packet_check(const fs_scenario *sc, fs_err *err);

/* After fs_scenario_run: runs sc's flows and tasks packet by packet on the
 * routes fabricsim chose and replaces every item's times (and each link's
 * busy time: the union of [start, finish] of the flows crossing it) with
 * the packet run's. FS_EINVAL if a flow is routed over several paths
 * (naming $.flows[i]) or a dependency waits for a flow's bytes to be sent
 * rather than arrive; FS_ENOMEM. On error sc is unchanged. Deterministic:
 * RED's random marks come from a fixed seed. */
int fs_packet_run(fs_scenario *sc, fs_err *err);

#ifdef __cplusplus
}
#endif

#endif
