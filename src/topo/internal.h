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


/* Parses the "cost" object of a topology (NULL: nothing to do) into t. */
int fs__cost_from_json(const fs__jctx *c, const cJSON *obj, const char *path, fs_topo *t);

/* The "file" family: nodes and links from the object at path. */
int fs__topo_file_from_json(const fs__jctx *c, const cJSON *obj, const char *path,
                            fs_topo **out);

/* Builds a topology from the object at `path` of a parsed document. */
int fs__topo_from_json(const fs__jctx *c, const cJSON *obj, const char *path,
                       fs_topo **out);

#endif
