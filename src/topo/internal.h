/* What the files of the topo module share: an incremental builder that the
 * family constructors use, and JSON parsing of a topology object (used by
 * the scenario parser too). */
#ifndef FABRICSIM_TOPO_INTERNAL_H
#define FABRICSIM_TOPO_INTERNAL_H

#include <cjson/cJSON.h>

#include "../base/json.h"
#include "fabricsim/topo.h"

typedef struct fs__topo_builder {
  fs_topo *t;
  int32_t node_cap, link_cap;
} fs__topo_builder;

/* Starts a topology of `family` with room for the given counts (a hint). */
int fs__tb_init(fs__topo_builder *b, const char *family, int32_t nodes_hint,
                int32_t links_hint, fs_err *err);
/* Appends a node; returns its id or a negative FS_E* code. */
int32_t fs__tb_node(fs__topo_builder *b, fs_node_kind kind, int32_t tier,
                    int32_t index, int32_t group);
/* Appends a cable a<->b: two directed links with the same capacity/latency. */
int fs__tb_cable(fs__topo_builder *b, int32_t a, int32_t c, double bps,
                 int64_t latency_ns);
/* Builds the CSR adjacency, counts hosts (which must be nodes 0..h-1) and
 * hands the topology over in *out. The builder is empty afterwards. */
int fs__tb_finish(fs__topo_builder *b, fs_topo **out, fs_err *err);
void fs__tb_abort(fs__topo_builder *b);

/* Builds a topology from the object at `path` of a parsed document. */
int fs__topo_from_json(const fs__jctx *c, const cJSON *obj, const char *path,
                       fs_topo **out);

#endif
