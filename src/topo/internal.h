/* What the files of the topo module share: the limits and the TRY macro of
 * the family constructors, and JSON parsing of a topology object (used by
 * the scenario parser too). The builder itself is public (topo.h). */
#ifndef FABRICSIM_TOPO_INTERNAL_H
#define FABRICSIM_TOPO_INTERNAL_H

#include <cjson/cJSON.h>

#include "../base/json.h"
#include "fabricsim/topo.h"

/* Shared by the family builders (families.c, zoo.c). Limits keep a typo
 * from asking for gigabytes: 4M nodes and 4M cables. */
enum { FS__MAX_NODES = 1 << 22, FS__MAX_CABLES = 1 << 22 };
#define MAX_NODES FS__MAX_NODES
#define MAX_CABLES FS__MAX_CABLES
#define MAX_GBPS 1e7
#define MAX_LATENCY_NS 1000000000000LL
#define TRY(expr)                    \
  do {                               \
    if ((rc = (expr)) < 0) goto oom; \
  } while (0)


/* One TeraPHY optical I/O chiplet (Wade et al., IEEE Micro 2020): 2.56 Tb/s
 * (the Intel / Ayar Labs demonstration's figure); its latency an estimate,
 * 10 ns of electronics and 2 m of fibre (docs/model.md, "Optical
 * fabrics"). */
#define FS__OPTIO_GBPS 2560.0
#define FS__OPTIO_LATENCY_NS 20

/* Keys of the GPU servers, accepted by every family that has servers. */
#define SERVER_KEYS \
  "gpus_per_node", "nvlink_gbps", "nvlink_latency_ns", "pcie_gbps", "pcie_latency_ns", "scaleup"

/* Spec parsing shared by spec.c and spec_optical.c: an error at
 * path.key naming its value (msg after it); the server keys into *sv. */
int fs__topo_fail_key(const fs__jctx *c, const cJSON *obj, const char *path, const char *key,
                      const char *msg);
int fs__topo_get_servers(const fs__jctx *c, const cJSON *obj, const char *path,
                         fs_server_params *sv);
/* The optical families (awgr, sirius, lotus, sipml-ocs, sipml-ring,
 * jupiter): *known = 0 for any other type (nothing done). */
int fs__topo_optical_from_json(const fs__jctx *c, const cJSON *obj, const char *path,
                               const char *type, fs_topo **out, fs_err *inner, int *known);
/* Closed forms of the optical families (metrics_optical.c): hop statistics
 * (1 when t is one of them and st is filled, else 0) and the bisection
 * across the host order (< 0: none). */
int fs__optical_hops(const fs_topo *t, fs_topo_stats *st);
double fs__optical_bisection(const fs_topo *t);

/* Parses the "cost" object of a topology (NULL: nothing to do) into t. */
int fs__cost_from_json(const fs__jctx *c, const cJSON *obj, const char *path, fs_topo *t);

/* The "file" family: nodes and links from the object at path. */
int fs__topo_file_from_json(const fs__jctx *c, const cJSON *obj, const char *path,
                            fs_topo **out);

/* Builds a topology from the object at `path` of a parsed document. */
int fs__topo_from_json(const fs__jctx *c, const cJSON *obj, const char *path,
                       fs_topo **out);

#endif
