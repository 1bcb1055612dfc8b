/* MLCommons Chakra execution traces (docs/formats.md, "Chakra traces").
 *
 * A trace is one file per rank, PREFIX.<rank>.et: a varint-length-prefixed
 * GlobalMetadata message, then length-prefixed Node messages (the framing
 * of Chakra's protoio). fabricsim reads COMP nodes as compute tasks,
 * COMM_COLL nodes as fabricsim collectives (the k-th collective of a
 * process group on every member rank is one collective), COMM_SEND /
 * COMM_RECV pairs (matched by source, destination and tag, in order) as
 * flows, and data and control dependencies as dependencies; rank r runs on
 * host r of the topology. It writes a simulation's DAG the same way. */
#ifndef FABRICSIM_CHAKRA_H
#define FABRICSIM_CHAKRA_H

#include <stdint.h>

#include "fabricsim/err.h"
#include "fabricsim/route.h"
#include "fabricsim/sim.h"
#include "fabricsim/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fs_chakra fs_chakra;

/* Reads PREFIX.0.et, PREFIX.1.et, ... (as many as exist, at least one).
 * Truncated or malformed files fail with FS_EINVAL naming the file and
 * the byte offset. */
int fs_chakra_load(const char *prefix, fs_chakra **out, fs_err *err);
/* One rank's trace from memory (label names it in messages): for tools and
 * the fuzzer. */
int fs_chakra_parse(const void *data, size_t len, const char *label, fs_chakra **out,
                    fs_err *err);
void fs_chakra_free(fs_chakra *c); /* NULL: no-op */
int32_t fs_chakra_ranks(const fs_chakra *c);

typedef struct fs_chakra_stats {
  int64_t nodes, tasks, flows, collectives, controls;
} fs_chakra_stats;

/* Builds the traces' DAG on topology t (rank r = host r) into a new
 * simulation and runs it: *rank_finish_s gets each rank's last finish
 * (ranks entries, caller-allocated), *makespan_s the last of all. Fails
 * with FS_EINVAL on traces that do not fit together (a send without its
 * receive, members of a collective that disagree on its type or size, more
 * ranks than hosts), naming the file and node. */
int fs_chakra_run(const fs_chakra *c, const fs_topo *t, fs_route_mode mode, uint64_t seed,
                  const fs_transport *tp, double *rank_finish_s, double *makespan_s,
                  fs_chakra_stats *stats, fs_err *err);

/* Writes the DAG of simulation s (built, run or not) as Chakra traces
 * PREFIX.<host>.et for hosts 0 .. n_ranks-1: tasks as COMP nodes, each flow
 * as a COMM_SEND on its source and a COMM_RECV on its destination (tag =
 * its item id), a dependency between items of one host as a data
 * dependency, and one between hosts with no flow to carry it as a zero-byte
 * send/receive marked with the attribute fabricsim_control (read back as a
 * dependency with no time of its own). Exact durations ride along in the
 * attribute fabricsim_duration_s (duration_micros is whole microseconds).
 * The files are written as fabricsim/output.h writes any output, and all
 * of them before any is put in place: on failure none is (err names the
 * file and the reason). */
int fs_chakra_write_sim(const fs_sim *s, int32_t n_ranks, const char *prefix, fs_err *err);

#ifdef __cplusplus
}
#endif

#endif
