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

#include "fabricsim/coll.h"
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

/* How fs_chakra_run2 runs the traces. */
typedef struct fs_chakra_opts {
  fs_route_mode mode;      /* ecmp, spray or shortest */
  uint64_t seed;           /* ECMP's */
  const fs_transport *tp;  /* NULL: fluid */
  fs_coll_algo algo;       /* the collectives' algorithm; FS_ALGO_AUTO: NCCL's choice
                              (fs_coll_nccl_choose), as is any collective algo does
                              not implement (fs_coll_supports) */
} fs_chakra_opts;

/* The trace's collectives of one kind: those with the same comm_type,
 * comm_size, pg_name and member count. */
typedef struct fs_chakra_coll {
  int64_t comm_type;   /* Chakra's CollectiveCommType */
  fs_coll_op op;       /* FS_COLL_N_OPS: nothing moved (barrier, 0 bytes, one member) */
  double bytes;        /* comm_size */
  int32_t ranks;       /* members */
  const char *pg_name; /* "" when none; points into the fs_chakra */
  fs_coll_algo algo;   /* the algorithm run (FS_ALGO_AUTO when nothing moved) */
  int asked;           /* 1: fs_chakra_opts.algo; 0: NCCL's choice */
  int64_t count;       /* how many such collectives */
  double time_s;       /* their mean time from all members ready to the last byte */
} fs_chakra_coll;

typedef struct fs_chakra_result {
  double makespan_s;
  double *rank_finish_s; /* one per rank */
  fs_chakra_stats stats;
  fs_chakra_coll *colls; /* by pg_name, then order in the group */
  int32_t n_colls;
} fs_chakra_result;

/* Chakra's name of a CollectiveCommType ("ALL_REDUCE", ...; "UNKNOWN"
 * for a value it does not define). */
const char *fs_chakra_comm_type_name(int64_t comm_type);

/* fs_chakra_run with options, and what each kind of collective ran (its
 * algorithm and mean time). *res is filled on success (free it with
 * fs_chakra_result_free) and zeroed on failure. */
int fs_chakra_run2(const fs_chakra *c, const fs_topo *t, const fs_chakra_opts *o,
                   fs_chakra_result *res, fs_err *err);
void fs_chakra_result_free(fs_chakra_result *res); /* NULL: no-op */

/* Writes the DAG of simulation s (built, run or not) as Chakra traces
 * PREFIX.<host>.et for hosts 0 .. n_ranks-1: tasks as COMP nodes, each flow
 * as a COMM_SEND on its source and a COMM_RECV on its destination (tag =
 * its item id), a dependency between items of one host as a data
 * dependency, and one between hosts with no flow to carry it as a one-byte
 * send/receive (tag = the item count + its index) marked with the
 * attribute fabricsim_control (read back as a dependency with no time of
 * its own). Every comm_size is >= 1 and every comm_tag >= 0, unique per
 * file set: what ASTRA-sim runs. Exact values ride along in attributes:
 * fabricsim_duration_s (duration_micros is whole microseconds) and, for a
 * flow of under one byte, fabricsim_bytes.
 * The files are written as fabricsim/output.h writes any output, and all
 * of them before any is put in place: on failure none is (err names the
 * file and the reason). */
int fs_chakra_write_sim(const fs_sim *s, int32_t n_ranks, const char *prefix, fs_err *err);

#ifdef __cplusplus
}
#endif

#endif
