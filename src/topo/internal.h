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

/* Each returns 0 or FS_EINVAL with err naming `fam` and the parameter. */
int fs__check_gbps(const char *fam, double gbps, const char *gname, fs_err *err);
int fs__check_latency(const char *fam, int64_t latency_ns, const char *lname, fs_err *err);
int fs__check_common(const char *fam, double gbps, const char *gname, int64_t latency_ns,
                     fs_err *err);
int fs__check_size(const char *fam, int64_t nodes, int64_t cables, fs_err *err);
/* Validates sv (NULL = plain hosts) into *out; G must divide `per`. */
int fs__check_servers(const char *fam, const fs_server_params *sv, int64_t per,
                      const char *per_what, const char *why, fs_server_params *out,
                      fs_err *err);
/* Nodes and cables the servers add to `gpus` plain host ports. */
int64_t fs__server_nodes(const fs_server_params *sv, int64_t gpus);
int64_t fs__server_cables(const fs_server_params *sv, int64_t gpus);
/* After the fabric switches: NICs, scale-up switches, PCIe cables. */
int fs__add_servers_before(fs__topo_builder *b, const fs_server_params *sv, int32_t gpus);
/* The node behind host port i: the host itself, or its GPU's NIC. */
int32_t fs__port(const fs__topo_builder *b, int32_t i);
/* Last: the NVLink cables, and the server keys of the canonical spec. */
int fs__add_servers_after(fs__topo_builder *b, const fs_server_params *sv, int32_t gpus);

/* Parses the "cost" object of a topology (NULL: nothing to do) into t. */
int fs__cost_from_json(const fs__jctx *c, const cJSON *obj, const char *path, fs_topo *t);

/* The "file" family: nodes and links from the object at path. */
int fs__topo_file_from_json(const fs__jctx *c, const cJSON *obj, const char *path,
                            fs_topo **out);

/* Builds a topology from the object at `path` of a parsed document. */
int fs__topo_from_json(const fs__jctx *c, const cJSON *obj, const char *path,
                       fs_topo **out);

#endif
