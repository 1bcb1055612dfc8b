/* Chakra execution traces: reading them into a simulation, writing one's
 * DAG (chakra.h). The messages are protobuf-c's, generated at build time
 * from schema/chakra_et.proto. */
#include "fabricsim/chakra.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "chakra_et.pb-c.h"
#include "fabricsim/coll.h"
#include "fabricsim/output.h"

typedef struct rank_trace {
  char file[300];
  Chakra__Node **nodes;
  size_t n, cap;
  fs__u64map index; /* node id + 1 -> position */
} rank_trace;

struct fs_chakra {
  rank_trace *r;
  int32_t n;
};

int32_t fs_chakra_ranks(const fs_chakra *c) { return c->n; }

void fs_chakra_free(fs_chakra *c) {
  if (!c) return;
  for (int32_t i = 0; i < c->n; i++) {
    for (size_t k = 0; k < c->r[i].n; k++) chakra__node__free_unpacked(c->r[i].nodes[k], NULL);
    free(c->r[i].nodes);
    fs__u64map_free(&c->r[i].index);
  }
  free(c->r);
  free(c);
}

/* ---- framing: varint32 length, then the message ---- */
static int read_varint(const uint8_t *p, size_t len, size_t *at, uint64_t *v) {
  *v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*at >= len) return -1;
    uint8_t b = p[(*at)++];
    *v |= (uint64_t)(b & 0x7F) << shift;
    if (!(b & 0x80)) return 0;
  }
  return -1;
}

/* Parses one rank's messages from memory into rt. */
static int parse_rank(rank_trace *rt, const uint8_t *p, size_t len, fs_err *err) {
  int rc = 0;
  size_t at = 0;
  int first = 1;
  while (at < len && !rc) {
    size_t start = at;
    uint64_t n;
    if (read_varint(p, len, &at, &n) || n > len - at) {
      rc = fs_err_set(err, FS_EINVAL, "%s: truncated message at byte %zu (length %llu, %zu left)",
                      rt->file, start, (unsigned long long)n, len - at);
      break;
    }
    if (first) { /* GlobalMetadata: checked, not used */
      Chakra__GlobalMetadata *g = chakra__global_metadata__unpack(NULL, (size_t)n, p + at);
      if (!g) rc = fs_err_set(err, FS_EINVAL, "%s: byte %zu: not a Chakra GlobalMetadata", rt->file, start);
      else chakra__global_metadata__free_unpacked(g, NULL);
      first = 0;
    } else {
      Chakra__Node *node = chakra__node__unpack(NULL, (size_t)n, p + at);
      int32_t dup;
      if (!node) {
        rc = fs_err_set(err, FS_EINVAL, "%s: byte %zu: not a Chakra Node", rt->file, start);
      } else if (fs__u64map_get(&rt->index, node->id + 1, &dup)) {
        rc = fs_err_set(err, FS_EINVAL, "%s: node id %llu appears twice", rt->file,
                        (unsigned long long)node->id);
        chakra__node__free_unpacked(node, NULL);
      } else if (fs__grow(&rt->nodes, &rt->cap, rt->n + 1, sizeof(*rt->nodes)) ||
                 fs__u64map_put(&rt->index, node->id + 1, (int32_t)rt->n)) {
        chakra__node__free_unpacked(node, NULL);
        rc = fs_err_set(err, FS_ENOMEM, "out of memory");
      } else {
        rt->nodes[rt->n++] = node;
      }
    }
    at += (size_t)n;
  }
  if (!rc && first) rc = fs_err_set(err, FS_EINVAL, "%s: empty (no GlobalMetadata)", rt->file);
  return rc;
}

static int load_rank(rank_trace *rt, fs_err *err) {
  char *buf = NULL;
  size_t len = 0;
  int rc = fs__read_binary(rt->file, &buf, &len, err);
  if (rc) return rc;
  rc = parse_rank(rt, (const uint8_t *)buf, len, err);
  free(buf);
  return rc;
}

int fs_chakra_parse(const void *data, size_t len, const char *label, fs_chakra **out,
                    fs_err *err) {
  fs_chakra *c = calloc(1, sizeof(*c));
  if (!c || !(c->r = calloc(1, sizeof(*c->r)))) {
    free(c);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  snprintf(c->r[0].file, sizeof(c->r[0].file), "%s", label ? label : "trace");
  fs__u64map_init(&c->r[0].index);
  c->n = 1;
  int rc = parse_rank(&c->r[0], data, len, err);
  if (rc) {
    fs_chakra_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

int fs_chakra_load(const char *prefix, fs_chakra **out, fs_err *err) {
  fs_chakra *c = calloc(1, sizeof(*c));
  if (!c) return fs_err_set(err, FS_ENOMEM, "out of memory");
  size_t cap = 0;
  int rc = 0;
  for (int32_t r = 0; r < (1 << 20) && !rc; r++) {
    char path[300];
    snprintf(path, sizeof(path), "%s.%d.et", prefix, r);
    FILE *f = fopen(path, "rb");
    if (!f) {
      if (r == 0) rc = fs_err_set(err, FS_EIO, "%s: cannot read (%s)", path, strerror(errno));
      break;
    }
    fclose(f);
    if (fs__grow(&c->r, &cap, (size_t)r + 1, sizeof(*c->r))) {
      rc = fs_err_set(err, FS_ENOMEM, "out of memory");
      break;
    }
    rank_trace *rt = &c->r[r];
    memset(rt, 0, sizeof(*rt));
    snprintf(rt->file, sizeof(rt->file), "%s", path);
    fs__u64map_init(&rt->index);
    c->n = r + 1;
    rc = load_rank(rt, err);
  }
  if (rc) {
    fs_chakra_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

/* ---- attributes ---- */
static const Chakra__AttributeProto *attr(const Chakra__Node *n, const char *name) {
  for (size_t i = 0; i < n->n_attr; i++)
    if (strcmp(n->attr[i]->name, name) == 0) return n->attr[i];
  return NULL;
}

/* An integer attribute (any integer encoding); 0 if present. */
static int attr_int(const Chakra__Node *n, const char *name, int64_t *v) {
  const Chakra__AttributeProto *a = attr(n, name);
  if (!a) return -1;
  switch (a->value_case) {
    case CHAKRA__ATTRIBUTE_PROTO__VALUE_INT32_VAL: *v = a->int32_val; return 0;
    case CHAKRA__ATTRIBUTE_PROTO__VALUE_INT64_VAL: *v = a->int64_val; return 0;
    case CHAKRA__ATTRIBUTE_PROTO__VALUE_UINT32_VAL: *v = a->uint32_val; return 0;
    case CHAKRA__ATTRIBUTE_PROTO__VALUE_UINT64_VAL: *v = (int64_t)a->uint64_val; return 0;
    case CHAKRA__ATTRIBUTE_PROTO__VALUE_SINT32_VAL: *v = a->sint32_val; return 0;
    case CHAKRA__ATTRIBUTE_PROTO__VALUE_SINT64_VAL: *v = a->sint64_val; return 0;
    case CHAKRA__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL: *v = (int64_t)a->double_val; return 0;
    default: return -1;
  }
}

static int attr_true(const Chakra__Node *n, const char *name) {
  const Chakra__AttributeProto *a = attr(n, name);
  return a && a->value_case == CHAKRA__ATTRIBUTE_PROTO__VALUE_BOOL_VAL && a->bool_val;
}

static const char *attr_str(const Chakra__Node *n, const char *name) {
  const Chakra__AttributeProto *a = attr(n, name);
  return a && a->value_case == CHAKRA__ATTRIBUTE_PROTO__VALUE_STRING_VAL ? a->string_val : "";
}

/* ---- reading into a simulation ---- */
typedef struct ends {
  int32_t entry, exit; /* items a dependency into / out of the node uses */
  uint8_t sent;        /* exit is a flow whose drain releases (a send) */
} ends;

typedef struct p2p {
  int32_t src, dst, rank, idx, seq;
  int64_t tag;
} p2p;

static int cmp_p2p(const void *a, const void *b) {
  const p2p *x = a, *y = b;
  if (x->src != y->src) return x->src < y->src ? -1 : 1;
  if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
  if (x->tag != y->tag) return x->tag < y->tag ? -1 : 1;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

typedef struct collm {
  const char *pg;
  int32_t k, rank, idx;
} collm;

static int cmp_coll(const void *a, const void *b) {
  const collm *x = a, *y = b;
  int c = strcmp(x->pg, y->pg);
  if (c) return c;
  if (x->k != y->k) return x->k < y->k ? -1 : 1;
  return (x->rank > y->rank) - (x->rank < y->rank);
}

const char *fs_chakra_comm_type_name(int64_t comm_type) {
  const ProtobufCEnumValue *v =
      comm_type < INT32_MIN || comm_type > INT32_MAX
          ? NULL
          : protobuf_c_enum_descriptor_get_value(&chakra__collective_comm_type__descriptor,
                                                 (int)comm_type);
  return v ? v->name : "UNKNOWN";
}

static int coll_op(int64_t type, fs_coll_op *op) {
  switch (type) {
    case CHAKRA__COLLECTIVE_COMM_TYPE__ALL_REDUCE: *op = FS_COLL_ALLREDUCE; return 0;
    case CHAKRA__COLLECTIVE_COMM_TYPE__ALL_GATHER: *op = FS_COLL_ALLGATHER; return 0;
    case CHAKRA__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER: *op = FS_COLL_REDUCESCATTER; return 0;
    case CHAKRA__COLLECTIVE_COMM_TYPE__ALL_TO_ALL: *op = FS_COLL_ALLTOALL; return 0;
    case CHAKRA__COLLECTIVE_COMM_TYPE__BROADCAST: *op = FS_COLL_BROADCAST; return 0;
    case CHAKRA__COLLECTIVE_COMM_TYPE__REDUCE: *op = FS_COLL_REDUCE; return 0;
    default: return -1;
  }
}

/* One collective of the trace: its kind (fs_chakra_result.colls) and the
 * items between which it runs. */
typedef struct coll_inst {
  int32_t kind, gate, done;
} coll_inst;

typedef struct builder {
  const fs_chakra *c;
  const fs_topo *t;
  fs_sim *sim;
  fs_router *router;
  fs_route_cache *routes;
  fs_route_mode mode;
  uint64_t seed;
  fs_coll_algo algo;
  ends **e; /* per rank, per node */
  fs_chakra_stats st;
  fs_chakra_coll *kinds;
  size_t n_kinds, cap_kinds;
  fs__u64map kind_of; /* hash of (type, size, pg, members) -> a kind with it */
  coll_inst *inst;
  size_t n_inst, cap_inst;
  fs_err *err;
} builder;

static int node_fail(builder *b, int32_t r, size_t i, const char *what) {
  return fs_err_set(b->err, FS_EINVAL, "%s: node %llu (\"%s\"): %s", b->c->r[r].file,
                    (unsigned long long)b->c->r[r].nodes[i]->id, b->c->r[r].nodes[i]->name, what);
}

static int32_t zero_task(builder *b, int32_t rank) {
  return fs_sim_add_task_s(b->sim, rank, 0, 0, b->err);
}

static int build_p2p(builder *b) {
  const fs_chakra *c = b->c;
  p2p *sends = NULL, *recvs = NULL;
  size_t ns = 0, nr = 0, cs = 0, cr = 0;
  int rc = 0;
  fs__u64map seen; /* (src, dst, tag) occurrences, per side */
  fs__u64map_init(&seen);
  for (int32_t r = 0; r < c->n && !rc; r++)
    for (size_t i = 0; i < c->r[r].n && !rc; i++) {
      const Chakra__Node *n = c->r[r].nodes[i];
      int send = n->type == CHAKRA__NODE_TYPE__COMM_SEND_NODE;
      if (!send && n->type != CHAKRA__NODE_TYPE__COMM_RECV_NODE) continue;
      int64_t peer, tag = 0;
      if (attr_int(n, send ? "comm_dst" : "comm_src", &peer) || peer < 0 || peer >= c->n) {
        rc = node_fail(b, r, i, send ? "a send needs comm_dst, a rank of the trace"
                                     : "a receive needs comm_src, a rank of the trace");
        break;
      }
      if (peer == r) {
        rc = node_fail(b, r, i, "sends to its own rank");
        break;
      }
      attr_int(n, "comm_tag", &tag);
      p2p x = {send ? r : (int32_t)peer, send ? (int32_t)peer : r, r, (int32_t)i, 0, tag};
      uint64_t key = fs__mix64(((uint64_t)(uint32_t)x.src << 32 | (uint32_t)x.dst) ^
                               fs__mix64((uint64_t)tag)) ^ (uint64_t)send;
      int32_t occ = 0;
      fs__u64map_get(&seen, key, &occ);
      x.seq = occ;
      if (fs__u64map_put(&seen, key, occ + 1) ||
          fs__grow(send ? &sends : &recvs, send ? &cs : &cr, (send ? ns : nr) + 1, sizeof(p2p))) {
        rc = fs_err_set(b->err, FS_ENOMEM, "out of memory");
        break;
      }
      if (send) sends[ns++] = x;
      else recvs[nr++] = x;
    }
  fs__u64map_free(&seen);
  if (!rc) {
    if (ns) qsort(sends, ns, sizeof(p2p), cmp_p2p);
    if (nr) qsort(recvs, nr, sizeof(p2p), cmp_p2p);
  }
  size_t i = 0, j = 0;
  while (!rc && (i < ns || j < nr)) {
    int k = i < ns && j < nr ? cmp_p2p(&sends[i], &recvs[j]) : i < ns ? -1 : 1;
    if (k) {
      const p2p *x = k < 0 ? &sends[i] : &recvs[j];
      rc = node_fail(b, x->rank, (size_t)x->idx,
                     k < 0 ? "a send without its receive (comm_dst, comm_tag)"
                           : "a receive without its send (comm_src, comm_tag)");
      break;
    }
    const p2p *s = &sends[i++], *v = &recvs[j++];
    const Chakra__Node *sn = c->r[s->rank].nodes[s->idx];
    int64_t bytes = 0;
    attr_int(sn, "comm_size", &bytes);
    /* under a byte: comm_size says 1 (ASTRA-sim's minimum), this the size */
    const Chakra__AttributeProto *exact = attr(sn, "fabricsim_bytes");
    double size = exact && exact->value_case == CHAKRA__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL
                      ? exact->double_val
                      : (double)bytes;
    if (attr_true(sn, "fabricsim_control")) {
      /* a dependency carried across ranks, no time of its own */
      int32_t a = zero_task(b, s->rank), z = a >= 0 ? zero_task(b, v->rank) : a;
      if (z < 0 || (rc = fs_sim_add_dep(b->sim, a, z, b->err))) {
        rc = z < 0 ? z : rc;
        break;
      }
      b->e[s->rank][s->idx] = (ends){a, a, 0};
      b->e[v->rank][v->idx] = (ends){z, z, 0};
      b->st.controls++;
      continue;
    }
    if (bytes < 0 || !(size >= 0)) {
      rc = node_fail(b, s->rank, (size_t)s->idx, "comm_size must be >= 0");
      break;
    }
    const fs_route *route;
    if ((rc = fs_route_cache_get(b->routes, s->src, s->dst, &route, b->err))) break;
    int32_t f = fs_sim_add_flow_ref(b->sim, s->src, s->dst, size, 0, route, b->err);
    if (f < 0) {
      rc = f;
      break;
    }
    b->e[s->rank][s->idx] = (ends){f, f, 1};
    b->e[v->rank][v->idx] = (ends){f, f, 0};
    b->st.flows++;
  }
  free(sends);
  free(recvs);
  return rc;
}

/* The kind of a collective (comm_type, comm_size, pg_name, members), made
 * on first sight; its index, or FS_ENOMEM. A hash collision falls back to
 * a scan, so two kinds never merge. */
static int32_t coll_kind(builder *b, const fs_chakra_coll *k) {
  uint64_t h = fs__mix64((uint64_t)k->comm_type ^ fs__mix64((uint64_t)k->bytes ^
                                                            fs__mix64((uint64_t)k->ranks)));
  for (const char *q = k->pg_name; *q; q++) h = fs__mix64(h ^ (uint8_t)*q);
  int32_t at;
  int known = fs__u64map_get(&b->kind_of, h + 1, &at);
#define SAME(x) ((x)->comm_type == k->comm_type && (x)->bytes == k->bytes && \
                 (x)->ranks == k->ranks && strcmp((x)->pg_name, k->pg_name) == 0)
  if (known) {
    if (SAME(&b->kinds[at])) return at;
    for (size_t i = 0; i < b->n_kinds; i++)
      if (SAME(&b->kinds[i])) return (int32_t)i;
  }
#undef SAME
  if (b->n_kinds >= INT32_MAX ||
      fs__grow(&b->kinds, &b->cap_kinds, b->n_kinds + 1, sizeof(*b->kinds)))
    return FS_ENOMEM;
  at = (int32_t)b->n_kinds;
  b->kinds[b->n_kinds++] = *k;
  if (!known && fs__u64map_put(&b->kind_of, h + 1, at)) return FS_ENOMEM;
  return at;
}

static int build_colls(builder *b) {
  const fs_chakra *c = b->c;
  collm *m = NULL;
  size_t nm = 0, cap = 0;
  int rc = 0;
  for (int32_t r = 0; r < c->n && !rc; r++) {
    fs__strmap groups; /* process group -> its slot in seen[] */
    fs__strmap_init(&groups);
    int32_t *seen = NULL, n_groups = 0; /* per group: collectives so far on this rank */
    size_t seen_cap = 0;
    for (size_t i = 0; i < c->r[r].n && !rc; i++) {
      const Chakra__Node *n = c->r[r].nodes[i];
      if (n->type != CHAKRA__NODE_TYPE__COMM_COLL_NODE) continue;
      const char *pg = attr_str(n, "pg_name");
      int32_t slot = fs__strmap_get(&groups, pg);
      if (slot < 0) {
        slot = n_groups;
        if (fs__grow(&seen, &seen_cap, (size_t)n_groups + 1, sizeof(int32_t)) ||
            fs__strmap_put(&groups, pg, slot, NULL)) {
          rc = fs_err_set(b->err, FS_ENOMEM, "out of memory");
          break;
        }
        seen[n_groups++] = 0;
      }
      if (fs__grow(&m, &cap, nm + 1, sizeof(*m))) {
        rc = fs_err_set(b->err, FS_ENOMEM, "out of memory");
        break;
      }
      m[nm++] = (collm){pg, seen[slot]++, r, (int32_t)i};
    }
    free(seen);
    fs__strmap_free(&groups);
  }
  if (!rc && nm) qsort(m, nm, sizeof(*m), cmp_coll);
  int32_t *hosts = fs__malloc((size_t)c->n + 1, sizeof(int32_t));
  if (!hosts && !rc) rc = fs_err_set(b->err, FS_ENOMEM, "out of memory");
  for (size_t i = 0; i < nm && !rc;) {
    size_t j = i;
    while (j < nm && strcmp(m[j].pg, m[i].pg) == 0 && m[j].k == m[i].k) j++;
    const Chakra__Node *n0 = c->r[m[i].rank].nodes[m[i].idx];
    int64_t type = 0, size = 0;
    if (attr_int(n0, "comm_type", &type)) {
      rc = node_fail(b, m[i].rank, (size_t)m[i].idx, "a collective needs comm_type");
      break;
    }
    attr_int(n0, "comm_size", &size);
    for (size_t x = i; x < j && !rc; x++) {
      const Chakra__Node *n = c->r[m[x].rank].nodes[m[x].idx];
      int64_t t2 = -1, s2 = -1;
      attr_int(n, "comm_type", &t2);
      attr_int(n, "comm_size", &s2);
      if (t2 != type || s2 != size)
        rc = node_fail(b, m[x].rank, (size_t)m[x].idx,
                       "its collective's members disagree on comm_type or comm_size");
      hosts[x - i] = m[x].rank;
    }
    if (rc) break;
    int32_t gate = zero_task(b, m[i].rank);
    if (gate < 0) {
      rc = gate;
      break;
    }
    int32_t done = gate;
    fs_coll_op op;
    /* An ALL_GATHER's comm_size is each rank's input, as ASTRA-sim reads it
     * (and PyTorch's execution traces record the input tensor): the
     * collective's nccl-tests size is that times the members, so a trace
     * moves the same bytes in both simulators. */
    double bytes = (double)size * (type == CHAKRA__COLLECTIVE_COMM_TYPE__ALL_GATHER
                                       ? (double)(j - i) : 1.0);
    fs_chakra_coll kind = {type, FS_COLL_N_OPS, bytes, (int32_t)(j - i), m[i].pg,
                           FS_ALGO_AUTO, 0, 0, 0};
    if (type == CHAKRA__COLLECTIVE_COMM_TYPE__BARRIER || size == 0 || j - i == 1) {
      /* nothing to move: a synchronisation of the members */
    } else if (coll_op(type, &op)) {
      rc = node_fail(b, m[i].rank, (size_t)m[i].idx,
                     "comm_type not supported (gather, scatter, reduce_scatter_block)");
      break;
    } else {
      fs_coll_params prm;
      fs_coll_params_init(&prm);
      prm.op = op;
      prm.bytes = bytes;
      fs_coll_group g = {(int32_t)(j - i), hosts};
      kind.op = op;
      kind.asked = b->algo != FS_ALGO_AUTO && fs_coll_supports(b->algo, op);
      if (kind.asked)
        prm.algo = b->algo;
      else if (fs_coll_nccl_choose(b->t, &prm, &g, &prm.algo, NULL, NULL, b->err))
        prm.algo = op == FS_COLL_ALLTOALL ? FS_ALGO_PAIRWISE : FS_ALGO_RING;
      kind.algo = prm.algo;
      fs_coll_lowering l;
      fs_coll_lowering_init(&l, b->sim, b->router, b->mode, b->seed);
      l.key = 0xC4A0 + (uint64_t)b->st.collectives;
      if (b->mode != FS_ROUTE_ECMP) l.routes = b->routes;
      l.after = &gate;
      l.n_after = 1;
      if ((rc = fs_coll_lower(&prm, &g, &l, b->err))) break;
      done = l.done;
    }
    int32_t at = coll_kind(b, &kind);
    if (at < 0 || fs__grow(&b->inst, &b->cap_inst, b->n_inst + 1, sizeof(*b->inst))) {
      rc = fs_err_set(b->err, FS_ENOMEM, "out of memory");
      break;
    }
    b->kinds[at].count++;
    b->inst[b->n_inst++] = (coll_inst){at, gate, done};
    for (size_t x = i; x < j; x++) b->e[m[x].rank][m[x].idx] = (ends){gate, done, 0};
    b->st.collectives++;
    i = j;
  }
  free(hosts);
  free(m);
  return rc;
}

static int build_deps(builder *b) {
  const fs_chakra *c = b->c;
  for (int32_t r = 0; r < c->n; r++)
    for (size_t i = 0; i < c->r[r].n; i++) {
      const Chakra__Node *n = c->r[r].nodes[i];
      ends to = b->e[r][i];
      for (int pass = 0; pass < 2; pass++) {
        size_t nd = pass ? n->n_ctrl_deps : n->n_data_deps;
        const uint64_t *d = pass ? n->ctrl_deps : n->data_deps;
        for (size_t k = 0; k < nd; k++) {
          int32_t at;
          if (!fs__u64map_get(&c->r[r].index, d[k] + 1, &at)) {
            char why[96];
            snprintf(why, sizeof(why), "depends on node %llu, which is not in the file",
                     (unsigned long long)d[k]);
            return node_fail(b, r, i, why);
          }
          ends from = b->e[r][at];
          if (from.exit == to.entry) continue; /* a send and its receive */
          int rc = from.sent ? fs_sim_add_dep_sent(b->sim, from.exit, to.entry, b->err)
                             : fs_sim_add_dep(b->sim, from.exit, to.entry, b->err);
          if (rc) return rc;
        }
      }
    }
  return 0;
}

void fs_chakra_result_free(fs_chakra_result *res) {
  if (!res) return;
  free(res->rank_finish_s);
  free(res->colls);
  memset(res, 0, sizeof(*res));
}

int fs_chakra_run2(const fs_chakra *c, const fs_topo *t, const fs_chakra_opts *o,
                   fs_chakra_result *res, fs_err *err) {
  memset(res, 0, sizeof(*res));
  if (c->n > t->n_hosts)
    return fs_err_set(err, FS_EINVAL, "%d ranks of traces but the topology has %d hosts", c->n,
                      t->n_hosts);
  builder b = {.c = c, .t = t, .mode = o->mode, .seed = o->seed, .algo = o->algo, .err = err};
  fs__u64map_init(&b.kind_of);
  int rc = 0;
  if ((rc = fs_sim_new(t, &b.sim, err)) ||
      (o->tp && (rc = fs_sim_set_transport(b.sim, o->tp, err))) ||
      (rc = fs_router_new(t, &b.router, err)) ||
      (rc = fs_route_cache_new(b.router, o->mode, o->seed, 0xC4A, &b.routes, err)))
    goto out;
  if (!(res->rank_finish_s = calloc((size_t)c->n, sizeof(double)))) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  if (!(b.e = calloc((size_t)c->n, sizeof(*b.e)))) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  for (int32_t r = 0; r < c->n; r++) {
    b.st.nodes += (int64_t)c->r[r].n;
    if (!(b.e[r] = calloc(c->r[r].n + 1, sizeof(ends)))) {
      rc = fs_err_set(err, FS_ENOMEM, "out of memory");
      goto out;
    }
    /* compute and everything else but communication: tasks */
    for (size_t i = 0; i < c->r[r].n; i++) {
      const Chakra__Node *n = c->r[r].nodes[i];
      if (n->type == CHAKRA__NODE_TYPE__COMM_SEND_NODE ||
          n->type == CHAKRA__NODE_TYPE__COMM_RECV_NODE ||
          n->type == CHAKRA__NODE_TYPE__COMM_COLL_NODE)
        continue;
      double dur = 0;
      const Chakra__AttributeProto *exact = attr(n, "fabricsim_duration_s");
      if (n->type == CHAKRA__NODE_TYPE__COMP_NODE)
        dur = exact && exact->value_case == CHAKRA__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL
                  ? exact->double_val
                  : (double)n->duration_micros * 1e-6;
      int32_t id = fs_sim_add_task_s(b.sim, r, 0, dur, err);
      if (id < 0) {
        rc = id;
        goto out;
      }
      b.e[r][i] = (ends){id, id, 0};
      b.st.tasks++;
    }
  }
  if ((rc = build_p2p(&b)) || (rc = build_colls(&b)) || (rc = build_deps(&b))) goto out;
  if ((rc = fs_sim_run(b.sim, NULL, err))) {
    if (rc == FS_ECYCLE) rc = fs_err_set(err, FS_EINVAL, "the traces' dependencies have a cycle");
    goto out;
  }
  res->makespan_s = fs_sim_makespan_s(b.sim);
  for (int32_t r = 0; r < c->n; r++) {
    double last = 0;
    for (size_t i = 0; i < c->r[r].n; i++) {
      double f = fs_sim_finish_s(b.sim, b.e[r][i].exit);
      if (f > last) last = f;
    }
    res->rank_finish_s[r] = last;
  }
  /* the gate is a zero-time task: it finishes when the last member is ready */
  for (size_t i = 0; i < b.n_inst; i++)
    b.kinds[b.inst[i].kind].time_s +=
        fs_sim_finish_s(b.sim, b.inst[i].done) - fs_sim_finish_s(b.sim, b.inst[i].gate);
  for (size_t k = 0; k < b.n_kinds; k++) b.kinds[k].time_s /= (double)b.kinds[k].count;
  res->stats = b.st;
  res->colls = b.kinds, b.kinds = NULL;
  res->n_colls = (int32_t)b.n_kinds;
out:
  if (rc) fs_chakra_result_free(res);
  if (b.e)
    for (int32_t r = 0; r < c->n; r++) free(b.e[r]);
  FS__FREE_ALL(b.e, b.kinds, b.inst);
  fs__u64map_free(&b.kind_of);
  fs_sim_free(b.sim);
  fs_route_cache_free(b.routes);
  fs_router_free(b.router);
  return rc;
}

int fs_chakra_run(const fs_chakra *c, const fs_topo *t, fs_route_mode mode, uint64_t seed,
                  const fs_transport *tp, double *rank_finish_s, double *makespan_s,
                  fs_chakra_stats *stats, fs_err *err) {
  fs_chakra_opts o = {mode, seed, tp, FS_ALGO_AUTO};
  fs_chakra_result res;
  int rc = fs_chakra_run2(c, t, &o, &res, err);
  if (rc) return rc;
  memcpy(rank_finish_s, res.rank_finish_s, (size_t)c->n * sizeof(double));
  *makespan_s = res.makespan_s;
  if (stats) *stats = res.stats;
  fs_chakra_result_free(&res);
  return 0;
}

/* ---- writing a simulation's DAG ---- */
typedef struct wnode {
  int32_t rank;
  uint64_t id;
  int type;           /* Chakra__NodeType */
  int32_t peer;       /* send: destination; receive: source */
  int64_t tag;
  double bytes, dur;
  uint8_t control;
  char name[48];
  uint64_t *deps;
  size_t n_deps, cap_deps;
} wnode;

typedef struct writer {
  wnode *w;
  size_t n, cap;
  uint64_t *next_id; /* per rank */
  fs__u64map ctrl;   /* (before node, after rank) -> the receive node carrying it */
} writer;

static int64_t new_node(writer *wr, int32_t rank, int type, const char *name) {
  if (fs__grow(&wr->w, &wr->cap, wr->n + 1, sizeof(*wr->w))) return FS_ENOMEM;
  wnode *x = &wr->w[wr->n];
  memset(x, 0, sizeof(*x));
  x->rank = rank;
  x->id = wr->next_id[rank]++;
  x->type = type;
  snprintf(x->name, sizeof(x->name), "%s", name);
  return (int64_t)wr->n++;
}

static int add_node_dep(writer *wr, size_t node, uint64_t on) {
  wnode *x = &wr->w[node];
  for (size_t k = 0; k < x->n_deps; k++)
    if (x->deps[k] == on) return 0;
  if (fs__grow(&x->deps, &x->cap_deps, x->n_deps + 1, sizeof(uint64_t))) return FS_ENOMEM;
  x->deps[x->n_deps++] = on;
  return 0;
}

static int write_msg(FILE *f, const ProtobufCMessage *m) {
  size_t n = protobuf_c_message_get_packed_size(m);
  uint8_t *buf = malloc(n + 10);
  if (!buf) return FS_ENOMEM;
  size_t k = 0;
  for (uint64_t v = n; ; v >>= 7) {
    buf[k++] = (uint8_t)((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
    if (v <= 0x7F) break;
  }
  protobuf_c_message_pack(m, buf + k);
  int rc = fwrite(buf, 1, k + n, f) == k + n ? 0 : FS_EIO;
  free(buf);
  return rc;
}

/* Rank `rank`'s trace into o's file (not closed here). */
static int write_rank(const writer *wr, int32_t rank, fs_output *o) {
  FILE *f = fs_output_file(o);
  Chakra__GlobalMetadata g = CHAKRA__GLOBAL_METADATA__INIT;
  g.version = (char *)"0.0.4";
  int rc = write_msg(f, &g.base);
  for (size_t i = 0; i < wr->n && !rc; i++) {
    const wnode *x = &wr->w[i];
    if (x->rank != rank) continue;
    Chakra__Node n = CHAKRA__NODE__INIT;
    Chakra__AttributeProto a[7], *ap[7];
    size_t na = 0;
    for (int k = 0; k < 7; k++) {
      chakra__attribute_proto__init(&a[k]);
      ap[k] = &a[k];
    }
    n.id = x->id;
    n.name = (char *)x->name;
    n.type = (Chakra__NodeType)x->type;
    n.n_data_deps = x->n_deps;
    n.data_deps = x->deps;
    a[na].name = (char *)"is_cpu_op";
    a[na].value_case = CHAKRA__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
    a[na++].bool_val = 0;
    if (x->type == CHAKRA__NODE_TYPE__COMP_NODE) {
      n.duration_micros = (uint64_t)llround(x->dur * 1e6);
      a[na].name = (char *)"fabricsim_duration_s";
      a[na].value_case = CHAKRA__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL;
      a[na++].double_val = x->dur;
    } else {
      int send = x->type == CHAKRA__NODE_TYPE__COMM_SEND_NODE;
      a[na].name = (char *)(send ? "comm_dst" : "comm_src");
      a[na].value_case = CHAKRA__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
      a[na++].int64_val = x->peer;
      /* ASTRA-sim refuses (asserts on) a message of 0 bytes: 1 at least,
       * the exact size beside it for fabricsim */
      int64_t whole = (int64_t)llround(x->bytes);
      a[na].name = (char *)"comm_size";
      a[na].value_case = CHAKRA__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
      a[na++].int64_val = whole < 1 ? 1 : whole;
      if (whole < 1 && !x->control) {
        a[na].name = (char *)"fabricsim_bytes";
        a[na].value_case = CHAKRA__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL;
        a[na++].double_val = x->bytes;
      }
      a[na].name = (char *)"comm_tag";
      a[na].value_case = CHAKRA__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
      a[na++].int64_val = x->tag;
      if (x->control) {
        a[na].name = (char *)"fabricsim_control";
        a[na].value_case = CHAKRA__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
        a[na++].bool_val = 1;
      }
    }
    n.n_attr = na;
    n.attr = ap;
    rc = write_msg(f, &n.base);
  }
  return rc;
}

/* Every rank's file written and closed before any is put in place, so a
 * failure (or an interrupt) leaves the old traces, not a mix. Committed
 * and aborted newest first: the output registry drops its newest entry in
 * O(1). */
static int write_ranks(const writer *wr, int32_t n_ranks, const char *prefix, fs_err *err) {
  fs_output **o = calloc((size_t)n_ranks + 1, sizeof(*o));
  if (!o) return fs_err_set(err, FS_ENOMEM, "out of memory");
  size_t cap = strlen(prefix) + 32;
  char *path = malloc(cap);
  int rc = path ? 0 : fs_err_set(err, FS_ENOMEM, "out of memory");
  int32_t n = 0;
  for (; n < n_ranks && !rc; n++) {
    snprintf(path, cap, "%s.%d.et", prefix, n);
    if ((rc = fs_output_open(path, &o[n], err))) break;
    if ((rc = write_rank(wr, n, o[n]))) {
      rc = rc == FS_ENOMEM ? fs_err_set(err, rc, "out of memory")
                           : fs_err_set(err, rc, "%s: write failed: %s", path, strerror(errno));
      n++;
      break;
    }
    rc = fs_output_close(o[n], err);
  }
  while (n-- > 0) {
    if (rc) fs_output_abort(o[n]);
    else rc = fs_output_commit(o[n], err);
  }
  free(path);
  free(o);
  return rc;
}

int fs_chakra_write_sim(const fs_sim *s, int32_t n_ranks, const char *prefix, fs_err *err) {
  if (fs_sim_n_plans(s))
    return fs_err_set(err, FS_EINVAL,
                      "chakra: the simulation made collectives' flows only as they ran (plan "
                      "instances); build it with every flow kept (fs_train_opts.keep_flows)");
  const fs_topo *t = fs_sim_topo(s);
  int32_t items = fs_sim_n_items(s);
  writer wr = {NULL, 0, 0, calloc((size_t)n_ranks + 1, sizeof(uint64_t)), {0}};
  fs__u64map_init(&wr.ctrl);
  /* per item: its node(s): a task's node, or a flow's send and receive */
  int64_t *first = fs__malloc((size_t)items + 1, sizeof(int64_t));
  int64_t n_ctrl = 0;
  int rc = 0;
  if (!wr.next_id || !first) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  for (int32_t i = 0; i < items && !rc; i++) {
    char name[48];
    if (fs_sim_item_kind(s, i) == FS_ITEM_TASK) {
      int32_t host;
      double dur;
      fs_sim_task_info(s, i, &host, &dur);
      if (host >= n_ranks) {
        rc = fs_err_set(err, FS_EINVAL, "item %d runs on node %d, not one of the %d ranks", i,
                        host, n_ranks);
        break;
      }
      snprintf(name, sizeof(name), "task%d", i);
      int64_t k = new_node(&wr, host, CHAKRA__NODE_TYPE__COMP_NODE, name);
      if (k < 0) {
        rc = fs_err_set(err, FS_ENOMEM, "out of memory");
        break;
      }
      wr.w[k].dur = dur;
      first[i] = k;
    } else {
      int32_t src, dst;
      fs_sim_flow_ends(s, i, &src, &dst);
      if (src >= n_ranks || dst >= n_ranks || t->nodes[src].kind != FS_NODE_HOST) {
        rc = fs_err_set(err, FS_EINVAL, "flow %d (%d -> %d) is not between ranks", i, src, dst);
        break;
      }
      snprintf(name, sizeof(name), "send%d", i);
      int64_t a = new_node(&wr, src, CHAKRA__NODE_TYPE__COMM_SEND_NODE, name);
      snprintf(name, sizeof(name), "recv%d", i);
      int64_t z = a >= 0 ? new_node(&wr, dst, CHAKRA__NODE_TYPE__COMM_RECV_NODE, name) : a;
      if (z < 0) {
        rc = fs_err_set(err, FS_ENOMEM, "out of memory");
        break;
      }
      wr.w[a].peer = dst, wr.w[z].peer = src;
      wr.w[a].tag = wr.w[z].tag = i;
      wr.w[a].bytes = wr.w[z].bytes = fs_sim_flow_bytes(s, i);
      first[i] = a; /* the receive is a + 1 */
    }
  }
  for (int64_t e = 0; e < fs_sim_n_deps(s) && !rc; e++) {
    int32_t before, after;
    int sent;
    fs_sim_dep(s, e, &before, &after, &sent);
    int bflow = fs_sim_item_kind(s, before) == FS_ITEM_FLOW;
    /* the node that completes the dependency, and the one it gates */
    size_t from = (size_t)first[before] + (bflow && !sent ? 1 : 0);
    size_t to = (size_t)first[after];
    if (wr.w[from].rank == wr.w[to].rank) {
      rc = add_node_dep(&wr, to, wr.w[from].id) ? FS_ENOMEM : 0;
      continue;
    }
    /* across ranks with no flow to carry it: one control message per
     * (node, destination rank) */
    uint64_t key = ((uint64_t)from << 24 | (uint64_t)(uint32_t)wr.w[to].rank) + 1;
    int32_t via;
    if (!fs__u64map_get(&wr.ctrl, key, &via)) {
      int32_t r0 = wr.w[from].rank, r1 = wr.w[to].rank;
      int64_t a = new_node(&wr, r0, CHAKRA__NODE_TYPE__COMM_SEND_NODE, "control");
      int64_t z = a >= 0 ? new_node(&wr, r1, CHAKRA__NODE_TYPE__COMM_RECV_NODE, "control") : a;
      if (z < 0 || z > INT32_MAX || fs__u64map_put(&wr.ctrl, key, (int32_t)z)) {
        rc = FS_ENOMEM;
        break;
      }
      wr.w[a].peer = r1, wr.w[z].peer = r0;
      /* ASTRA-sim matches a send to its receive by (source, destination,
       * tag, size) and asserts tag >= 0: after the flows' tags (their item
       * ids), one each, so no two messages of a pair share one */
      wr.w[a].tag = wr.w[z].tag = (int64_t)items + n_ctrl++;
      wr.w[a].control = wr.w[z].control = 1;
      if ((rc = add_node_dep(&wr, (size_t)a, wr.w[from].id))) break;
      via = (int32_t)z;
    }
    rc = add_node_dep(&wr, to, wr.w[via].id);
  }
  if (rc == FS_ENOMEM) rc = fs_err_set(err, FS_ENOMEM, "out of memory");
  if (!rc) rc = write_ranks(&wr, n_ranks, prefix, err);
out:
  for (size_t i = 0; i < wr.n; i++) free(wr.w[i].deps);
  FS__FREE_ALL(wr.w, wr.next_id, first);
  fs__u64map_free(&wr.ctrl);
  return rc;
}
