/* fabricsim coll: one collective over a sweep of sizes on a topology, in
 * the style of nccl-tests (size, count, time, algbw, busbw), with the
 * algorithm's closed form beside the simulated time. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

enum { FS_ALGO_COUNT_MAX = 32 };

#include "../base/base.h"
#include "../base/json.h"
#include "cli.h"
#include "fabricsim/coll.h"
#include "fabricsim/html.h"

static void help(FILE *f) {
  fprintf(f,
          "usage: fabricsim coll --op OP --ranks N --topo SPEC [options]\n"
          "\n"
          "Simulates one collective over a sweep of sizes and prints, like\n"
          "nccl-tests, time, algorithm bandwidth and bus bandwidth.\n"
          "\n"
          "  --op OP            allreduce allgather reducescatter broadcast reduce\n"
          "                     alltoall sendrecv\n"
          "  --algo A           auto (default: chosen by --tune), ring tree rd rhd\n"
          "                     binomial bruck pairwise direct hier inc\n"
          "  --tune P           how auto chooses: nccl (default: NCCL's cost model,\n"
          "                     nothing simulated; also picks the protocol) or sim\n"
          "                     (simulate every algorithm, keep the fastest, cached\n"
          "                     per size bucket)\n"
          "  --ranks N          ranks on hosts 0..N-1 (or --ranks-file)\n"
          "  --ranks-file F     JSON array of host ids, one per rank\n"
          "  --topo SPEC        topology (e.g. fattree:k=8,gbps=100) or JSON file\n"
          "  --size A:B         sizes A, 2A, 4A ... B (suffixes K M G = 2^10..);\n"
          "                     --size S alone: that one size\n"
          "  --sizes L          comma-separated sizes\n"
          "                     (default --size 1K:1G)\n"
          "  -b A -e B -f F     nccl-tests' habit: sizes A, A F, A F^2 ... up to B\n"
          "                     (F > 1, default 2; -b and -e default to each other)\n"
          "  --chunks C         pipelining chunks (0 = algorithm default)\n"
          "  --channels K       parallel rings/trees (0: 1, or for a ring over whole\n"
          "                     scale-up servers one per GPU of a server)\n"
          "  --root R           root rank (broadcast, reduce, sendrecv)\n"
          "  --node-size G      ranks per scale-up node (hier)\n"
          "  --gamma S          reduction cost, seconds per byte (default 0)\n"
          "  --routing M        ecmp (default), spray, shortest; dor (torus, ring),\n"
          "                     minimal, valiant (dragonfly), railonly (rail-only)\n"
          "  --seed N           ECMP (and Valiant) seed (default 1)\n"
          "  --transport KIND   fluid (default), tcp or rdma (fabricsim sim --help)\n"
          "  --connections new|persistent  tcp: persistent (the default: NCCL\n"
          "                     connects once) or a new connection per message\n"
          "  --rate-control dcqcn|dctcp|ideal  rdma: DCQCN's rate control, tcp:\n"
          "                     DCTCP's, or max-min at once (ideal, the default;\n"
          "                     fabricsim sim --help)\n"
          FS__CLI_PACKET_BYTES_HELP
          "  --format F         table (default), json, csv\n"
          "  --report FILE.html also write a self-contained HTML report: busbw versus\n"
          "                     size with the closed form, per algorithm\n");
}


static int parse_int(const char *s, long lo, long hi, int32_t *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (!*s || *end || errno || v < lo || v > hi) return -1;
  *out = (int32_t)v;
  return 0;
}

typedef struct sizes {
  double *v;
  size_t n, cap;
} sizes;

static int add_size(sizes *z, double v) {
  if (fs__grow(&z->v, &z->cap, z->n + 1, sizeof(double))) return -1;
  z->v[z->n++] = v;
  return 0;
}

static int load_ranks(const char *path, int32_t **hosts, int32_t *p, fs_err *err) {
  char *text;
  size_t len;
  int rc = fs__read_file(path, &text, &len, err);
  if (rc) return rc;
  fs__jctx c = {path, err};
  cJSON *root = NULL;
  rc = fs__json_parse(&c, text, len, &root);
  free(text);
  if (rc) return rc;
  int n = cJSON_GetArraySize(root);
  if (!cJSON_IsArray(root) || n < 1) {
    rc = fs__json_fail(&c, "$", root, "must be a non-empty array of host ids");
    cJSON_Delete(root);
    return rc;
  }
  *hosts = malloc((size_t)n * sizeof(int32_t));
  if (!*hosts) {
    cJSON_Delete(root);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  int i = 0;
  for (cJSON *v = root->child; v; v = v->next, i++) {
    char path_i[32];
    int64_t h;
    snprintf(path_i, sizeof(path_i), "$[%d]", i);
    if ((rc = fs__json_int_value(&c, v, path_i, 0, INT32_MAX, &h))) break;
    (*hosts)[i] = (int32_t)h;
  }
  cJSON_Delete(root);
  if (rc) {
    free(*hosts);
    *hosts = NULL;
    return rc;
  }
  *p = n;
  return 0;
}

/* Latency and slowest link of the shortest path from host a to host b. */
static int path_cost(fs_router *r, const fs_topo *t, int32_t a, int32_t b, double *lat_s,
                     double *bps) {
  fs_route route;
  fs_route_init(&route);
  int rc = fs_route_shortest(r, a, b, &route, NULL);
  if (!rc) {
    *lat_s = (double)route.latency_ns * 1e-9;
    *bps = INFINITY;
    for (int32_t k = 0; k < route.n; k++)
      *bps = fmin(*bps, t->links[route.links[k]].capacity_bps);
  }
  fs_route_free(&route);
  return rc;
}

/* alpha, beta between rank 0 and rank 1 for the closed-form column: the
 * shortest path's latency and its slowest link (on GPU servers the path
 * between two GPUs of one server is their scale-up links, not their NICs). */
static fs_coll_cost cost_of(const fs_topo *t, fs_router *r, const fs_coll_group *g,
                            double gamma) {
  fs_coll_cost c = {0, 0, gamma};
  double lat, bps;
  if (g->p < 2 || path_cost(r, t, g->hosts[0], g->hosts[1], &lat, &bps)) return c;
  c.alpha_s = lat;
  c.beta_s_per_byte = isfinite(bps) && bps > 0 ? 8 / bps : 0;
  return c;
}

/* The closed form of a node-aware ring (ranks over whole scale-up servers
 * of G, K channels each through its own NIC: docs/model-coll-tune.md):
 * a step moves m / K per channel over the inter-server hop, ceil(K / G)
 * channels to a NIC, while a GPU's scale-up link carries the intra-server
 * hops of all channels, m in all; so beta = max(ceil(K / G) / K x the
 * inter-server hop's, the intra-server hop's), alpha the inter-server
 * hop's latency (channel 0 leaves server 0 from its last rank for the same
 * local GPU of server 1). Returns 0 and leaves *c alone when it does not
 * apply. */
static int ring_servers_cost(const fs_topo *t, fs_router *r, const fs_coll_group *g,
                             const fs_coll_params *prm, fs_coll_cost *c, int32_t *k_out) {
  if (prm->algo != FS_ALGO_RING || (prm->op != FS_COLL_ALLREDUCE &&
                                    prm->op != FS_COLL_ALLGATHER &&
                                    prm->op != FS_COLL_REDUCESCATTER))
    return 0;
  int32_t G = fs_coll_ring_server_size(t, g);
  if (G <= 1) return 0;
  int32_t K = fs_coll_ring_channels(prm, G);
  double a_in, b_in, a_out, b_out;
  if (path_cost(r, t, g->hosts[0], g->hosts[1], &a_in, &b_in) ||
      path_cost(r, t, g->hosts[G - 1], g->hosts[2 * G - 1], &a_out, &b_out))
    return 0;
  double per_nic = ceil((double)K / G) / K;
  c->alpha_s = fmax(a_in, a_out);
  c->beta_s_per_byte = fmax(per_nic * 8 / b_out, 8 / b_in);
  *k_out = K;
  return 1;
}

/* The table's header, printed with the first row so that a failing run
 * prints only its error. */
static void print_header(FILE *out, int fmt, const fs_coll_params *prm, int32_t ranks, const fs_topo *t,
                         const char *routing, const fs_coll_cost *c, fs_coll_tune_policy tune) {
  if (fmt == 0) {
    fprintf(out, "# fabricsim coll: %s, %d ranks on %s, routing %s\n", fs_coll_op_name(prm->op), ranks,
           t->spec, routing);
    fprintf(out, "# model: closed form with alpha %.4g us, beta %.4g ns/B (rank 0 <-> 1)%s\n",
           c->alpha_s * 1e6, c->beta_s_per_byte * 1e9,
           prm->algo != FS_ALGO_AUTO ? ""
           : tune == FS_TUNE_SIM ? "; algo: fastest simulated (--tune sim), * = from cache"
                                 : "; algo/proto: NCCL's cost model (--tune nccl)");
    fprintf(out, "#%13s %12s %6s %12s %10s %10s %12s  %s\n", "size(B)", "count", "type", "time(us)",
           "algbw", "busbw", "model(us)", prm->algo == FS_ALGO_AUTO && tune == FS_TUNE_NCCL ? "algo/proto" : "algo");
    fprintf(out, "#%13s %12s %6s %12s %10s %10s %12s\n", "", "(elements)", "", "", "(GB/s)", "(GB/s)",
           "");
  } else if (fmt == 1) {
    fprintf(out, "{\"op\":\"%s\",\"ranks\":%d,\"topology\":\"%s\",\"routing\":\"%s\",\"results\":[",
           fs_coll_op_name(prm->op), ranks, t->spec, routing);
  } else {
    fprintf(out, "size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,model_us,algo,chunks,flows,"
           "proto\n");
  }
}

/* The rows of --report, grouped by algorithm (auto may pick several). */
typedef struct coll_report {
  fs_html_coll_row *rows;
  fs_coll_algo *algo;
  size_t n;
  const char *op;
  int32_t ranks;
  const fs_topo *t;
} coll_report;

static int write_coll_report(FILE *f, void *ctx) {
  const coll_report *r = ctx;
  fs_html_coll_algo groups[FS_ALGO_COUNT_MAX];
  fs_html_coll_row *sorted = malloc((r->n ? r->n : 1) * sizeof(*sorted));
  if (!sorted) return FS_ENOMEM;
  int32_t ng = 0;
  size_t k = 0;
  fs_coll_algo seen[FS_ALGO_COUNT_MAX];
  for (size_t i = 0; i < r->n; i++) {
    int32_t g = 0;
    while (g < ng && seen[g] != r->algo[i]) g++;
    if (g < ng || ng == FS_ALGO_COUNT_MAX) continue;
    seen[ng] = r->algo[i];
    groups[ng] = (fs_html_coll_algo){fs_coll_algo_name(r->algo[i]), sorted + k, 0};
    for (size_t j = i; j < r->n; j++)
      if (r->algo[j] == r->algo[i]) sorted[k++] = r->rows[j], groups[ng].n++;
    ng++;
  }
  int rc = fs_html_coll_report(f, r->op, r->ranks, r->t, groups, ng);
  free(sorted);
  return rc;
}

int fs__cli_coll(int argc, char **argv) {
  const char *op_s = NULL, *algo_s = "auto", *topo_s = NULL, *ranks_file = NULL;
  const char *format = "table", *routing = "ecmp", *size_range = NULL, *size_list = NULL;
  const char *begin_s = NULL, *end_s = NULL, *factor_s = NULL;
  const char *tune_s = "nccl", *transport_s = NULL, *connections_s = NULL, *report = NULL;
  const char *rate_control = NULL, *pkt = NULL;
  int32_t ranks = 0;
  fs_coll_params prm;
  fs_coll_params_init(&prm);
  unsigned long long seed = 1;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      help(stdout);
      return 0;
    }
    if (a[0] != '-' || i + 1 >= argc)
      return fs__cli_usage("coll", "'%s' %s", a, a[0] == '-' ? "needs a value" : "is not an option");
    const char *v = argv[++i];
    char *end;
    if (strcmp(a, "--op") == 0) op_s = v;
    else if (strcmp(a, "--algo") == 0) algo_s = v;
    else if (strcmp(a, "--tune") == 0) tune_s = v;
    else if (strcmp(a, "--topo") == 0) topo_s = v;
    else if (strcmp(a, "--ranks-file") == 0) ranks_file = v;
    else if (strcmp(a, "--format") == 0) format = v;
    else if (strcmp(a, "--report") == 0) report = v;
    else if (strcmp(a, "--routing") == 0) routing = v;
    else if (strcmp(a, "--size") == 0) size_range = v;
    else if (strcmp(a, "--sizes") == 0) size_list = v;
    else if (strcmp(a, "-b") == 0 || strcmp(a, "--minbytes") == 0) begin_s = v;
    else if (strcmp(a, "-e") == 0 || strcmp(a, "--maxbytes") == 0) end_s = v;
    else if (strcmp(a, "-f") == 0 || strcmp(a, "--stepfactor") == 0) factor_s = v;
    else if (strcmp(a, "--transport") == 0) transport_s = v;
    else if (strcmp(a, "--connections") == 0) connections_s = v;
    else if (strcmp(a, "--rate-control") == 0) rate_control = v;
    else if (strcmp(a, "--packet-bytes") == 0) pkt = v;
    else if (strcmp(a, "--ranks") == 0) {
      if (parse_int(v, 1, 1 << 22, &ranks))
        return fs__cli_usage("coll", "--ranks must be an integer >= 1, got '%s'", v);
    } else if (strcmp(a, "--chunks") == 0) {
      if (parse_int(v, 0, 4096, &prm.chunks))
        return fs__cli_usage("coll", "--chunks must be in [0, 4096], got '%s'", v);
    } else if (strcmp(a, "--channels") == 0) {
      if (parse_int(v, 0, 64, &prm.channels))
        return fs__cli_usage("coll", "--channels must be in [0, 64], got '%s'", v);
    } else if (strcmp(a, "--root") == 0) {
      if (parse_int(v, 0, INT32_MAX, &prm.root))
        return fs__cli_usage("coll", "--root must be a rank >= 0, got '%s'", v);
    } else if (strcmp(a, "--node-size") == 0) {
      if (parse_int(v, 0, INT32_MAX, &prm.node_size))
        return fs__cli_usage("coll", "--node-size must be >= 0, got '%s'", v);
    } else if (strcmp(a, "--gamma") == 0) {
      prm.gamma_s_per_byte = strtod(v, &end);
      if (end == v || *end || !(prm.gamma_s_per_byte >= 0) || !isfinite(prm.gamma_s_per_byte))
        return fs__cli_usage("coll", "--gamma must be a number >= 0 (s/byte), got '%s'", v);
    } else if (strcmp(a, "--seed") == 0) {
      if (fs__cli_parse_seed(v, &seed))
        return fs__cli_usage("coll", "--seed must be a non-negative integer, got '%s'", v);
    } else {
      return fs__cli_usage("coll", "unknown option '%s'", a);
    }
  }
  if (!op_s) return fs__cli_usage("coll", "--op is required");
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_FLUID, &tp);
  int trc = fs__cli_transport("coll", transport_s, connections_s, rate_control, pkt, 1, &tp);
  if (trc) return trc;
  if (fs_coll_op_parse(op_s, &prm.op))
    return fs__cli_usage("coll", "unknown --op '%s' (allreduce, allgather, reducescatter, "
                         "broadcast, reduce, alltoall, sendrecv)", op_s);
  if (fs_coll_algo_parse(algo_s, &prm.algo))
    return fs__cli_usage("coll", "unknown --algo '%s' (auto, ring, tree, rd, rhd, binomial, "
                         "bruck, pairwise, direct, hier, inc)", algo_s);
  fs_coll_tune_policy tune;
  if (fs_coll_tune_policy_parse(tune_s, &tune))
    return fs__cli_usage("coll", "--tune must be nccl or sim, got '%s'", tune_s);
  if (!topo_s) return fs__cli_usage("coll", "--topo is required");
  if (!ranks && !ranks_file) return fs__cli_usage("coll", "--ranks or --ranks-file is required");
  if (ranks && ranks_file) return fs__cli_usage("coll", "give --ranks or --ranks-file, not both");
  fs_route_mode mode;
  if (fs_route_mode_parse(routing, &mode) || mode == FS_ROUTE_EXPLICIT)
    return fs__cli_usage("coll",
                         "--routing must be ecmp, spray, shortest, dor, minimal, valiant or "
                         "railonly, got '%s'",
                         routing);
  int fmt = strcmp(format, "table") == 0 ? 0 : strcmp(format, "json") == 0 ? 1
          : strcmp(format, "csv") == 0 ? 2 : -1;
  if (fmt < 0) return fs__cli_usage("coll", "--format must be table, json or csv, got '%s'", format);
  int nccl_style = begin_s || end_s || factor_s;
  if ((size_range != NULL) + (size_list != NULL) + nccl_style > 1)
    return fs__cli_usage("coll", "give one of --size, --sizes or -b/-e/-f");

  sizes z = {NULL, 0, 0};
  if (size_list) {
    char buf[4096];
    snprintf(buf, sizeof(buf), "%s", size_list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
      double v;
      if (fs__cli_parse_size(tok, &v) || !(v > 0)) {
        free(z.v);
        return fs__cli_usage("coll", "--sizes: '%s' is not a size > 0", tok);
      }
      add_size(&z, v);
    }
  } else if (nccl_style) {
    double lo, hi, f = 2;
    const char *b = begin_s ? begin_s : end_s, *e = end_s ? end_s : begin_s;
    if (!b) return fs__cli_usage("coll", "-f needs -b or -e");
    if (fs__cli_parse_size(b, &lo) || !(lo > 0))
      return fs__cli_usage("coll", "-b must be a size > 0, got '%s'", b);
    if (fs__cli_parse_size(e, &hi) || hi < lo)
      return fs__cli_usage("coll", "-e must be a size >= -b, got '%s'", e);
    if (factor_s && (fs__cli_parse_double(factor_s, 1, 1e9, &f) || !(f > 1)))
      return fs__cli_usage("coll", "-f must be a number > 1, got '%s'", factor_s);
    for (double v = lo; v <= hi * (1 + 1e-12) && z.n < 4096; v *= f) add_size(&z, floor(v));
  } else if (size_range && !strchr(size_range, ':')) {
    double v;
    if (fs__cli_parse_size(size_range, &v) || !(v > 0))
      return fs__cli_usage("coll", "--size must be a size > 0 or MIN:MAX, got '%s'", size_range);
    add_size(&z, v);
  } else {
    const char *range = size_range ? size_range : "1K:1G";
    char lo_s[64], hi_s[64];
    const char *colon = strchr(range, ':');
    double lo, hi;
    if (!colon || (size_t)(colon - range) >= sizeof(lo_s) || strlen(colon + 1) >= sizeof(hi_s))
      return fs__cli_usage("coll", "--size must be MIN:MAX, got '%s'", range);
    memcpy(lo_s, range, (size_t)(colon - range));
    lo_s[colon - range] = '\0';
    snprintf(hi_s, sizeof(hi_s), "%s", colon + 1);
    if (fs__cli_parse_size(lo_s, &lo) || fs__cli_parse_size(hi_s, &hi) || !(lo > 0) || hi < lo)
      return fs__cli_usage("coll", "--size must be MIN:MAX with 0 < MIN <= MAX, got '%s'", range);
    for (double v = lo; v <= hi * (1 + 1e-12) && z.n < 64; v *= 2) add_size(&z, v);
  }

  fs_output *report_out = NULL;
  if (report && fs__cli_output_open(report, &report_out)) {
    free(z.v);
    return 2;
  }
  fs_err err = {0, ""};
  fs_topo *t = NULL;
  fs_router *router = NULL;
  fs_coll_tuner *tuner = NULL;
  int32_t *hosts = NULL;
  coll_report rep = {NULL, NULL, 0, NULL, 0, NULL};
  int status = 0;
  int rc = fs_topo_from_spec(topo_s, &t, &err);
  if (!rc && fs_route_mode_check(mode, t, &err)) {
    status = fs__cli_usage("coll", "--routing %s: %s", routing, err.msg);
    goto out;
  }
  if (!rc && ranks_file) rc = load_ranks(ranks_file, &hosts, &ranks, &err);
  if (!rc && !ranks_file) {
    if (ranks > t->n_hosts) {
      rc = fs_err_set(&err, FS_EINVAL, "--ranks %d: the topology has only %d hosts", ranks,
                      t->n_hosts);
    } else if (!(hosts = malloc((size_t)ranks * sizeof(int32_t)))) {
      rc = fs_err_set(&err, FS_ENOMEM, "out of memory");
    } else {
      for (int32_t r = 0; r < ranks; r++) hosts[r] = r;
    }
  }
  fs_coll_group g = {ranks, hosts};
  if (!rc) {
    fs_coll_params q = prm;
    q.bytes = z.v[0];
    rc = fs_coll_params_check(&q, ranks, &err);
  }
  if (!rc) rc = fs_router_new(t, &router, &err);
  if (!rc) rc = fs_coll_tuner_new2(t, mode, seed, tune, &tuner, &err);
  if (rc) {
    status = fs__cli_fail(&err);
    goto out;
  }
  fs_coll_cost cost = cost_of(t, router, &g, prm.gamma_s_per_byte);
  if (report && (!(rep.rows = calloc(z.n, sizeof(*rep.rows))) ||
                 !(rep.algo = calloc(z.n, sizeof(*rep.algo))))) {
    status = fs__cli_fail(&(fs_err){FS_ENOMEM, "out of memory"});
    goto out;
  }
  char *json_buf = NULL;
  size_t json_len = 0;
  FILE *json_buf_file = fmt == 1 ? open_memstream(&json_buf, &json_len) : NULL;
  FILE *out = json_buf_file ? json_buf_file : stdout;
  int said_servers_ring = 0;
  for (size_t i = 0; i < z.n; i++) {
    fs_coll_params q = prm;
    q.bytes = z.v[i];
    int cached = 0, tuned = prm.algo == FS_ALGO_AUTO;
    fs_coll_proto proto = FS_PROTO_SIMPLE;
    if (tuned && (rc = fs_coll_tuner_choose2(tuner, &q, &g, &q.algo, &proto, &cached, &err)))
      break;
    /* The NCCL model's protocol (it steers the choice; the engine moves
     * bytes at the wire rate whatever it is); none for a named algorithm
     * or a simulated choice. */
    int show_proto = tuned && tune == FS_TUNE_NCCL;
    const char *proto_s = show_proto ? fs_coll_proto_name(proto) : "";
    if (tune == FS_TUNE_NCCL) cached = 0; /* only the group's shape was cached */
    fs_coll_result res;
    if ((rc = fs_coll_run2(t, mode, seed, &tp, &q, &g, &res, &err))) break;
    if (i == 0) print_header(out, fmt, &prm, ranks, t, routing, &cost, tune);
    double algbw = q.bytes / res.time_s / 1e9;
    double busbw = algbw * fs_coll_busbw_factor(q.op, ranks);
    fs_coll_cost qcost = cost;
    int32_t ring_k = 0;
    int servers_ring = ring_servers_cost(t, router, &g, &q, &qcost, &ring_k);
    if (servers_ring && fmt == 0 && !said_servers_ring++) /* once, when first used */
      fprintf(out, "# model for the ring over whole servers (%d channels, one NIC each): alpha %.4g "
              "us, beta %.4g ns/B\n", ring_k, qcost.alpha_s * 1e6, qcost.beta_s_per_byte * 1e9);
    double model = fs_coll_model_time(&q, ranks, &qcost);
    char mod[32];
    fs__fmt_num(mod, model * 1e6);
    if (report) {
      int ok = isfinite(model) && model > 0;
      rep.rows[rep.n] = (fs_html_coll_row){q.bytes, res.time_s, ok ? model : 0, busbw,
                                           ok ? q.bytes / model / 1e9 * fs_coll_busbw_factor(q.op, ranks) : 0};
      rep.algo[rep.n++] = res.algo;
    }
    if (fmt == 0)
      fprintf(out, "%14.0f %12.0f %6s %12.3f %10.3f %10.3f %12.3f  %s%s%s%s\n", q.bytes,
             floor(q.bytes / 4), "float", res.time_s * 1e6, algbw, busbw, model * 1e6,
             fs_coll_algo_name(res.algo), show_proto ? "/" : "", proto_s, cached ? "*" : "");
    else if (fmt == 1)
      fprintf(out, "%s\n{\"size_bytes\":%.0f,\"time_us\":%.6f,\"algbw_GBps\":%.6f,\"busbw_GBps\":%.6f,"
             "\"model_us\":%s,\"algo\":\"%s\",\"proto\":%s%s%s,\"cached\":%s,\"chunks\":%d,"
             "\"flows\":%lld}",
             i ? "," : "", q.bytes, res.time_s * 1e6, algbw, busbw, mod,
             fs_coll_algo_name(res.algo), show_proto ? "\"" : "", show_proto ? proto_s : "null",
             show_proto ? "\"" : "", cached ? "true" : "false", res.chunks, (long long)res.flows);
    else
      fprintf(out, "%.0f,%.0f,float,%.6f,%.6f,%.6f,%s,%s,%d,%lld,%s\n", q.bytes, floor(q.bytes / 4),
             res.time_s * 1e6, algbw, busbw, mod, fs_coll_algo_name(res.algo), res.chunks,
             (long long)res.flows, proto_s);
    fflush(out);
  }
  if (fmt == 1 && !rc) fprintf(out, "]}\n");
  if (json_buf_file) {
    /* JSON is only whole or nothing: printed once the sweep succeeded. */
    fclose(json_buf_file);
    if (!rc) fputs(json_buf, stdout);
    free(json_buf);
  }
  if (rc) status = fs__cli_fail(&err);
  if (!rc && report) {
    rep.op = fs_coll_op_name(prm.op);
    rep.ranks = ranks;
    rep.t = t;
    status = fs__cli_output_write(report_out, write_coll_report, &rep);
    report_out = NULL;
  }
out:
  fs_output_abort(report_out);
  free(rep.rows);
  free(rep.algo);
  fs_coll_tuner_free(tuner);
  fs_router_free(router);
  fs_topo_free(t);
  free(hosts);
  free(z.v);
  return status;
}
