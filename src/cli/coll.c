/* fabricsim coll: one collective over a sweep of sizes on a topology, in
 * the style of nccl-tests (size, count, time, algbw, busbw), with the
 * algorithm's closed form beside the simulated time; or, with --format
 * nccl-tests, nccl-tests' own table. nccl-tests' flags are accepted so a
 * pasted command line runs: the ones that shape the run (-b -e -f -i -t
 * -g -d -o -r -c) are used, the ones about timing a real GPU (iterations,
 * warm-ups, graphs ...) are noted as changing nothing in a deterministic
 * simulation. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "fabricsim/coll.h"
#include "fabricsim/report.h"

/* --gamma: a number >= 0, finite (s/byte). */
static int parse_gamma(const char *v, void *field) {
  return fs__cli_parse_double(v, 0, DBL_MAX, (double *)field); /* decimal, as every number */
}

/* What the command line gives; the initialiser holds the defaults. */
/* The flags of nccl-tests that time a real GPU run (iterations,
 * warm-ups, CUDA graphs, blocking, ...): accepted, with nccl-tests'
 * ranges, and named in a note; NOT_GIVEN until given. */
enum { NOT_GIVEN = -1 };
typedef struct nccl_flags {
  int32_t iters, warmup, agg, cycles, par_init, blocking, stream_null, timeout, graph, cputime,
      stamps, average, reg, cta, dev_impl, dev_ctas, memory, unalign, per_iter, iter_skip;
} nccl_flags;

/* --op / -o: a collective (allreduce ...) or, nccl-tests' --op, a
 * reduction operation (sum ... or all). */
typedef struct op_arg {
  const char *coll, *redop;
} op_arg;

typedef struct cmdline {
  const char *algo, *topo, *ranks_file, *format, *routing, *size_range, *size_list;
  const char *begin, *end, *factor, *step, *tune, *transport, *connections, *report;
  const char *rate_control, *pkt, *datatype, *root, *output_file;
  op_arg op;
  int32_t ranks, nthreads, ngpus, check;
  nccl_flags nf;
  fs_coll_params prm;
  unsigned long long seed;
} cmdline;

/* --op: a reduction operation's name (or all) goes to redop, anything
 * else to the collective (checked later, naming both vocabularies). */
static int parse_op(const char *v, void *field) {
  op_arg *a = field;
  fs_coll_redop r;
  if (strcmp(v, "all") == 0 || fs_coll_redop_parse(v, &r) == 0)
    a->redop = v;
  else
    a->coll = v;
  return 0;
}

#define AT(f) offsetof(cmdline, f)
/* --op's setting: the reduction's field for a reduction's name, else the
 * collective's, so `--op allreduce --op sum` sets each once. */
static size_t op_key(const char *v) {
  fs_coll_redop r;
  return strcmp(v, "all") == 0 || fs_coll_redop_parse(v, &r) == 0 ? AT(op.redop) : AT(op.coll);
}

static const fs__opt coll_opts[] = {
    FS__OPT_FN_KEYED("--op", 0, AT(op), "OP", parse_op, op_key, "", /* takes any word */
               "the collective: allreduce allgather reducescatter broadcast reduce alltoall "
               "sendrecv; or, as nccl-tests' --op, a reduction (as -o)"),
    FS__OPT_STR(NULL, 'o', AT(op.redop), "R",
                "nccl-tests' reduction: sum prod max min avg mulsum, or all (each in turn); "
                "default sum"),
    FS__OPT_STR("--datatype", 'd', AT(datatype), "T",
                "nccl-tests' element type: int8 uint8 int32 uint32 int64 uint64 half float "
                "double bfloat16 f8e4m3 f8e5m2 (NCCL's aliases char int float16 float32 "
                "float64), or all; default float. Sets count = bytes / element size and the "
                "rounding of sizes"),
    FS__OPT_STR("--algo", 0, AT(algo), "A",
                "auto (default: chosen by --tune), ring tree rd rhd binomial bruck pairwise "
                "direct hier inc"),
    FS__OPT_STR("--tune", 0, AT(tune), "P",
                "how auto chooses: nccl (default: NCCL's cost model, nothing simulated; also "
                "picks the protocol) or sim (simulate every algorithm, keep the fastest, "
                "cached per size bucket)"),
    FS__OPT_INT32("--ranks", 0, AT(ranks), "N", 1, 1 << 22, "--ranks must be an integer >= 1",
                  "ranks on hosts 0..N-1 (or --ranks-file)"),
    FS__OPT_STR("--ranks-file", 0, AT(ranks_file), "F", "JSON array of host ids, one per rank"),
    FS__OPT_STR("--topo", 0, AT(topo), "SPEC",
                "topology (e.g. fattree:k=8,gbps=100) or JSON file"),
    FS__OPT_STR("--size", 0, AT(size_range), "A:B",
                "sizes A, 2A, 4A ... B (suffixes K M G = 2^10..); --size S alone: that one "
                "size (default --size 1K:1G)"),
    FS__OPT_STR("--sizes", 0, AT(size_list), "L", "comma-separated sizes"),
    FS__OPT_STR("--minbytes", 'b', AT(begin), "A",
                "nccl-tests' habit, with -e and -f: sizes A, A F, A F^2 ... up to B (-b and "
                "-e default to each other)"),
    FS__OPT_STR("--maxbytes", 'e', AT(end), "B", "the largest size of -b/-e/-f"),
    FS__OPT_STR("--stepfactor", 'f', AT(factor), "F",
                "the factor of -b/-e/-f: F > 1 (without -f or -i: -i 1M, as nccl-tests)"),
    FS__OPT_STR("--stepbytes", 'i', AT(step), "I", "sizes A, A+I, A+2I ... up to B instead"),
    FS__OPT_INT32("--nthreads", 't', AT(nthreads), "T", 1, 1 << 22,
                  "-t must be an integer >= 1", "nccl-tests' threads per process (default 1)"),
    FS__OPT_INT32("--ngpus", 'g', AT(ngpus), "G", 1, 1 << 22, "-g must be an integer >= 1",
                  "nccl-tests' GPUs per thread: without --ranks, ranks = T x G; with it, "
                  "ranks must be a multiple of T x G (the processes)"),
    FS__OPT_INT32("--check", 'c', AT(check), "N", 0, INT32_MAX,
                  "-c must be an integer >= 0",
                  "nccl-tests' checks: 0 prints #wrong N/A, else 0 (default 1)"),
    FS__OPT_INT32("--chunks", 0, AT(prm.chunks), "C", 0, 4096, "--chunks must be in [0, 4096]",
                  "pipelining chunks (0 = algorithm default)"),
    FS__OPT_INT32("--channels", 0, AT(prm.channels), "K", 0, 64,
                  "--channels must be in [0, 64]",
                  "parallel rings/trees (0: 1, or for a ring over whole scale-up servers one "
                  "per GPU of a server)"),
    FS__OPT_STR("--root", 'r', AT(root), "R",
                "root rank (broadcast, reduce; sendrecv: the sender); -1: every rank in turn "
                "(broadcast, reduce), as nccl-tests"),
    FS__OPT_INT32("--node-size", 0, AT(prm.node_size), "G", 0, INT32_MAX,
                  "--node-size must be >= 0", "ranks per scale-up node (hier)"),
    FS__OPT_INT32("--ps-servers", 0, AT(prm.servers), "S", 0, INT32_MAX,
                  "--ps-servers must be >= 0",
                  "parameter servers of --algo ps, colocated on ranks floor(j p / S) "
                  "(0: every rank)"),
    FS__OPT_FN("--gamma", 0, AT(prm.gamma_s_per_byte), "S", parse_gamma,
               "--gamma must be a number >= 0 (s/byte)",
               "reduction cost, seconds per byte (default 0)"),
    FS__OPT_STR("--routing", 0, AT(routing), "M",
                "ecmp (default), spray, shortest; dor (torus, ring), minimal, valiant "
                "(dragonfly, sirius), railonly (rail-only), lotus"),
    FS__OPT_FN("--seed", 0, AT(seed), "N", fs__opt_seed, "--seed must be a non-negative integer",
               "ECMP (and Valiant) seed (default 1)"),
    FS__CLI_NCCL_TRANSPORT_OPTS(cmdline),
    FS__OPT_STR("--format", 0, AT(format), "F",
                "text (default; or table), json, csv, or nccl-tests: nccl-tests' own table"),
#define NCCL_FLAG(ln, sh, f, lo, hi, what)                                               \
  FS__OPT_INT32(ln, sh, AT(nf.f), "N", lo, hi, ln " must be an integer in [" #lo ", " #hi "]", \
                what)
    NCCL_FLAG("--iters", 'n', iters, 1, 2147483647, "nccl-tests' iterations (noted, no effect)"),
    NCCL_FLAG("--warmup_iters", 'w', warmup, 0, 2147483647, "warm-up iterations (noted)"),
    NCCL_FLAG("--agg_iters", 'm', agg, 1, 2147483647, "aggregated iterations (noted)"),
    NCCL_FLAG("--run_cycles", 'N', cycles, 0, 2147483647, "run cycles (noted; rows once)"),
    NCCL_FLAG("--parallel_init", 'p', par_init, 0, 1, "parallel init (noted)"),
    NCCL_FLAG("--blocking", 'z', blocking, 0, 3, "blocking collectives (noted)"),
    NCCL_FLAG("--stream_null", 'y', stream_null, 0, 1, "the null stream (noted)"),
    NCCL_FLAG("--timeout", 'T', timeout, 0, 2147483647, "timeout, s (noted)"),
    NCCL_FLAG("--cudagraph", 'G', graph, 0, 2147483647, "CUDA graph launches (noted)"),
    NCCL_FLAG("--report_cputime", 'C', cputime, 0, 1, "CPU time (noted; time is simulated)"),
    NCCL_FLAG("--report_timestamps", 'S', stamps, 0, 1, "timestamps (noted; none printed)"),
    NCCL_FLAG("--average", 'a', average, 0, 3, "the ranks' time average (noted)"),
    NCCL_FLAG("--local_register", 'R', reg, 0, 2, "buffer registration (noted)"),
    NCCL_FLAG("--cta_policy", 'x', cta, 0, 2, "CTA policy (noted)"),
    NCCL_FLAG("--device_implementation", 'D', dev_impl, 0, 2147483647,
              "device implementation (noted)"),
    NCCL_FLAG("--device_cta_count", 'V', dev_ctas, 1, 128, "device CTAs (noted)"),
    NCCL_FLAG("--memory", 'M', memory, 0, 1, "memory report (noted)"),
    NCCL_FLAG("--unalign", 'u', unalign, 0, 2147483647, "misalignment (noted)"),
    NCCL_FLAG("--per_iter_timing", 'I', per_iter, 0, 1, "per-iteration timing (noted)"),
    NCCL_FLAG("--per_iter_skip", 'K', iter_skip, 0, 2147483647, "per-iteration skip (noted)"),
#undef NCCL_FLAG
    FS__OPT_STR("--output_file", 'J', AT(output_file), "FILE",
                "nccl-tests' JSON file: refused (use --format json on stdout)"),
    FS__OPT_STR("--report", 0, AT(report), "FILE.html",
                "also write a self-contained HTML report: busbw versus size with the closed "
                "form, per algorithm"),
    FS__OPT_END};

static const fs__cmd coll_cmd = {
    "coll", "--op OP --ranks N --topo SPEC [options]",
    "Simulates one collective over a sweep of sizes and prints, like nccl-tests, time, "
    "algorithm bandwidth and bus bandwidth; --format nccl-tests prints nccl-tests' own table "
    "(docs/formats.md). nccl-tests' flags are accepted, so a pasted command line runs: -t -g "
    "-b -e -f -i -d -o -r -c shape the run, the timing ones (-n -w -m -G ...) are noted as "
    "changing nothing in a deterministic simulation.",
    NULL, coll_opts, NULL, NULL, 0, 0, 0, 0};
#undef AT

typedef struct sizes {
  double *v;
  size_t n, cap;
  /* the sweep as nccl-tests' header states it: its ends and step (a
   * factor, or bytes added; 0 bytes for a --sizes list) */
  double lo, hi, step;
  int step_is_factor;
} sizes;

static int add_size(sizes *z, double v) {
  if (z->n == z->cap) {
    size_t cap = z->cap ? 2 * z->cap : 8;
    double *grown = realloc(z->v, cap * sizeof(double));
    if (!grown) return -1;
    z->v = grown;
    z->cap = cap;
  }
  z->v[z->n++] = v;
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

/* The ranks file's hosts are distinct hosts of t: 0, or FS_EINVAL naming
 * the file, the entry and the host. */
static int ranks_on_topology(const char *file, const int32_t *hosts, int32_t n, const fs_topo *t,
                             fs_err *err) {
  int32_t *rank_of = malloc((size_t)t->n_hosts * sizeof(int32_t));
  if (!rank_of) return fs_err_set(err, FS_ENOMEM, "out of memory");
  for (int32_t h = 0; h < t->n_hosts; h++) rank_of[h] = -1;
  int rc = 0;
  for (int32_t r = 0; r < n && !rc; r++) {
    int32_t h = hosts[r];
    if (h < 0 || h >= t->n_hosts)
      rc = fs_err_set(err, FS_EINVAL, "%s: $[%d]: host %d is not one of the topology's hosts [0, %d)",
                      file, r, h, t->n_hosts);
    else if (rank_of[h] >= 0)
      rc = fs_err_set(err, FS_EINVAL, "%s: $[%d]: host %d is already rank %d's ($[%d])", file, r,
                      h, rank_of[h], rank_of[h]);
    else
      rank_of[h] = r;
  }
  free(rank_of);
  return rc;
}

/* The most sizes a sweep may have (a table row each). */
#define MAX_SIZES 4096
/* The largest size (the collectives' own bound, coll.h). */
#define MAX_BYTES 1e18

/* text as a size for option opt: 0, or 2 after a usage error naming both. */
static int size_arg(const char *opt, const char *text, double *v) {
  if (fs__cli_parse_size(text, v) || !(*v > 0))
    return fs__cli_usage("coll", "%s must be a size > 0 (suffixes K M G), got '%s'", opt, text);
  if (*v > MAX_BYTES)
    return fs__cli_usage("coll", "%s must be at most 1e18 bytes, got '%s' (%.4g bytes)", opt, text,
                         *v);
  return 0;
}

/* --sizes: every comma-separated item a size, none empty, any length. */
static int list_sizes(const char *list, sizes *z) {
  int32_t item = 1;
  for (const char *p = list;; item++) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char tok[64];
    if (len == 0)
      return fs__cli_usage("coll", "--sizes: item %d is empty in '%s'", item, list);
    if (len >= sizeof(tok))
      return fs__cli_usage("coll", "--sizes: item %d is not a size: '%.*s'", item, (int)len, p);
    memcpy(tok, p, len);
    tok[len] = '\0';
    double v;
    if (size_arg("--sizes", tok, &v)) return 2;
    if (z->n == MAX_SIZES)
      return fs__cli_usage("coll", "--sizes: more than %d sizes", MAX_SIZES);
    if (add_size(z, v)) return fs__cli_fail(&(fs_err){FS_ENOMEM, "out of memory"});
    if (!comma) return -1;
    p = comma + 1;
  }
}

/* -b/-e with -f or -i: A, A F, A F^2 ... (or A, A+I, A+2I ...) while
 * <= B, in whole bytes; neither -f nor -i: nccl-tests' default step, 1 MiB
 * added (src/common.cu: stepBytes). Each size must grow (a factor too
 * close to 1 would repeat a size) and there may be at most MAX_SIZES. */
static int geometric_sizes(const cmdline *o, sizes *z) {
  double lo, hi, f = 0, inc = 1 << 20;
  const char *b = o->begin ? o->begin : o->end, *e = o->end ? o->end : o->begin;
  const char *stepped = o->factor ? "-f/--stepfactor" : "-i/--stepbytes";
  const char *step = o->factor ? o->factor : o->step;
  if (!b) return fs__cli_usage("coll", "%s needs -b or -e", stepped);
  /* each value named by the option that gave it, in both spellings */
  if (size_arg(o->begin ? "-b/--minbytes" : "-e/--maxbytes", b, &lo) ||
      size_arg(o->end ? "-e/--maxbytes" : "-b/--minbytes", e, &hi))
    return 2;
  if (hi < lo)
    return fs__cli_usage("coll", "-e/--maxbytes must be a size >= -b/--minbytes, got '%s'", e);
  if (o->factor && o->step) return fs__cli_usage("coll", "give -f or -i, not both");
  if (o->factor && (fs__cli_parse_double(o->factor, 1, 1e9, &f) || !(f > 1)))
    return fs__cli_usage("coll", "-f/--stepfactor must be a number > 1, got '%s'", o->factor);
  if (o->step && size_arg("-i/--stepbytes", o->step, &inc)) return 2;
  z->lo = lo;
  z->hi = hi;
  z->step = f > 1 ? f : inc;
  z->step_is_factor = f > 1;
  for (double v = lo; v <= hi * (1 + 1e-12); v = f > 1 ? v * f : v + inc) {
    double x = floor(v);
    if (z->n && x <= z->v[z->n - 1])
      return fs__cli_usage("coll",
                           "%s %s does not grow the size past %.0f bytes (each step must add a "
                           "whole byte)",
                           stepped, step ? step : "1M", x);
    if (z->n == MAX_SIZES)
      return fs__cli_usage("coll", "-b %s -e %s %s %s gives more than %d sizes", b, e, stepped,
                           step ? step : "1M", MAX_SIZES);
    if (add_size(z, x)) return fs__cli_fail(&(fs_err){FS_ENOMEM, "out of memory"});
  }
  return -1;
}

/* The sizes of the sweep, from --sizes, -b/-e/-f or --size (default
 * 1K:1G) into z: -1, or 2 after a usage error (z freed by the caller). */
static int parse_sizes(const cmdline *o, sizes *z) {
  const char *size_range = o->size_range;
  if (o->size_list) {
    int rc = list_sizes(o->size_list, z);
    for (size_t i = 0; i < z->n; i++) {
      z->lo = i == 0 || z->v[i] < z->lo ? z->v[i] : z->lo;
      z->hi = i == 0 || z->v[i] > z->hi ? z->v[i] : z->hi;
    }
    return rc;
  }
  if (o->begin || o->end || o->factor || o->step) return geometric_sizes(o, z);
  if (size_range && !strchr(size_range, ':')) {
    double v;
    if (size_arg("--size", size_range, &v)) return 2;
    z->lo = z->hi = v;
    z->step = 1 << 20; /* what nccl-tests states for -b X -e X */
    return add_size(z, v) ? fs__cli_fail(&(fs_err){FS_ENOMEM, "out of memory"}) : -1;
  }
  const char *range = size_range ? size_range : "1K:1G";
  char lo_s[64], hi_s[64];
  const char *colon = strchr(range, ':');
  double lo, hi;
  if (!colon || (size_t)(colon - range) >= sizeof(lo_s) || strlen(colon + 1) >= sizeof(hi_s))
    return fs__cli_usage("coll", "--size must be MIN:MAX, got '%s'", range);
  memcpy(lo_s, range, (size_t)(colon - range));
  lo_s[colon - range] = '\0';
  snprintf(hi_s, sizeof(hi_s), "%s", colon + 1);
  if (size_arg("--size MIN", lo_s, &lo) || size_arg("--size MAX", hi_s, &hi)) return 2;
  if (hi < lo)
    return fs__cli_usage("coll", "--size must be MIN:MAX with MIN <= MAX, got '%s'", range);
  z->lo = lo;
  z->hi = hi;
  z->step = 2;
  z->step_is_factor = 1;
  for (double v = lo; v <= hi * (1 + 1e-12) && z->n < 64; v *= 2)
    if (add_size(z, v)) return fs__cli_fail(&(fs_err){FS_ENOMEM, "out of memory"});
  return -1;
}

/* What one run of the sweep shares between its sizes. */
typedef struct coll_run {
  const fs_topo *t;
  fs_router *router;
  fs_coll_tuner *tuner;
  fs_coll_group g;
  fs_coll_params prm;
  fs_transport tp;
  fs_route_mode mode;
  unsigned long long seed;
  fs_coll_tune_policy tune;
  int fmt; /* FS__FMT_TEXT, _JSON, _CSV, or FMT_NCCL_TESTS */
  fs_report_coll out; /* what the rows are printed with */
  fs_report_coll_size *rows; /* each size's, for --report (else NULL) */
  size_t n_rows;
  /* -d, -o, -r: one value each, or every one in turn (nccl-tests' all,
   * -r -1); the block of sizes being run is at dtype, redop, root */
  int all_dtypes, all_redops, all_roots;
  fs_coll_dtype dtype;
  fs_coll_redop redop;
  size_t printed; /* rows printed so far, over every block */
} coll_run;

/* --format nccl-tests, beside fs__cli_format's three */
enum { FMT_NCCL_TESTS = 3 };

/* Refuses, before building, a collective whose flows cannot fit in the
 * memory the run may use (--max-memory): its flow count
 * (fs_coll_flows_estimate) at FS_SIM_FLOW_BYTES each (sim.h), the engine's cost of a
 * flow measured on a 1,024-rank ring all-reduce (docs/performance.md). */
static int fits(const fs_coll_params *q, int32_t ranks, fs_err *err) {
  double lim = fs__cli_memory_limit(), GiB = 1024.0 * 1024 * 1024;
  int64_t flows = fs_coll_flows_estimate(q, ranks);
  if (!(lim > 0) || (double)flows * FS_SIM_FLOW_BYTES <= lim) return 0;
  return fs_err_set(err, FS_EINVAL,
                    "%s over %d ranks with %s lowers %lld flows, about %.1f GiB at %.0f B a "
                    "flow: more than the %.2f GiB this run may use (--max-memory SIZE; fewer "
                    "ranks%s)",
                    fs_coll_op_name(q->op), ranks, fs_coll_algo_name(q->algo), (long long)flows,
                    (double)flows * FS_SIM_FLOW_BYTES / GiB, FS_SIM_FLOW_BYTES, lim / GiB,
                    q->op == FS_COLL_ALLTOALL || q->op == FS_COLL_ALLGATHER
                        ? ", or --algo bruck: p lg p flows"
                        : "");
}

/* Simulates every size of z at r's type, operation and root and prints
 * its row on out (the header with the sweep's first row): 0, or an FS_E*
 * code with err set (rows printed so far stay). Each size is rounded as
 * nccl-tests rounds it (fs_coll_nccl_tests_size); one the rounding leaves
 * empty is not run: a row of no time. */
static int run_sizes(coll_run *r, const sizes *z, FILE *out, fs_err *err) {
  const fs_coll_params *prm = &r->prm;
  int32_t ranks = r->g.p;
  fs_coll_tune_policy tune = r->tune;
  int rc = 0, said_servers_ring = 0;
  r->out.cost = cost_of(r->t, r->router, &r->g, prm->gamma_s_per_byte);
  for (size_t i = 0; i < z->n; i++) {
    fs_coll_params q = *prm;
    double count;
    fs_coll_nccl_tests_size(q.op, ranks, fs_coll_dtype_size(r->dtype), z->v[i], &q.bytes, &count);
    int cached = 0, tuned = prm->algo == FS_ALGO_AUTO;
    fs_coll_proto proto = FS_PROTO_SIMPLE;
    fs_coll_result res = {q.algo, 0, 0, 0, 0};
    double model_s = 0;
    fs_coll_cost qcost = r->out.cost;
    int32_t ring_k = 0;
    int servers_ring = 0;
    if (q.bytes > 0) {
      if (tuned &&
          (rc = fs_coll_tuner_choose2(r->tuner, &q, &r->g, &q.algo, &proto, &cached, err)))
        break;
      if (tune == FS_TUNE_NCCL) cached = 0; /* only the group's shape was cached */
      if ((rc = fits(&q, ranks, err))) break;
      if ((rc = fs_coll_run2(r->t, r->mode, r->seed, &r->tp, &q, &r->g, &res, err))) break;
      servers_ring = ring_servers_cost(r->t, r->router, &r->g, &q, &qcost, &ring_k);
      model_s = fs_coll_model_time(&q, ranks, &qcost);
    }
    /* the header comes with the first row, so a failing run prints only its error */
    if (r->printed == 0) fs_report_coll_head(out, &r->out);
    if (servers_ring && !said_servers_ring++) /* once, when first used */
      fs_report_coll_ring_model(out, &r->out, ring_k, &qcost);
    /* The NCCL model's protocol (it steers the choice; the engine moves
     * bytes at the wire rate whatever it is); none for a named algorithm
     * or a simulated choice. */
    fs_report_coll_size row = {q.bytes,
                               res,
                               model_s,
                               tuned && tune == FS_TUNE_NCCL && q.bytes > 0
                                   ? fs_coll_proto_name(proto)
                                   : NULL,
                               cached,
                               count,
                               fs_coll_dtype_name(r->dtype),
                               fs_coll_redop_column(q.op, r->redop),
                               fs_coll_rooted(q.op) ? q.root : -1};
    if (r->rows) r->rows[r->n_rows++] = row;
    fs_report_coll_row(out, &r->out, &row, r->printed++ == 0);
    fflush(out);
  }
  return rc;
}

/* Every block of the sweep: each type (-d all: every one), each
 * reduction (-o all, for the ops that take one), each root (-r -1, for
 * the rooted ops), in nccl-tests' order (types, then operations, then
 * roots). 0 or an FS_E* code. */
static int run_blocks(coll_run *r, const sizes *z, FILE *out, fs_err *err) {
  fs_coll_op op = r->prm.op;
  int each_redop = r->all_redops && strcmp(fs_coll_redop_column(op, FS_COLL_REDOP_SUM), "none");
  int each_root = r->all_roots && fs_coll_rooted(op);
  fs_coll_dtype t0 = r->dtype, t1 = r->all_dtypes ? FS_COLL_N_DTYPES - 1 : r->dtype;
  fs_coll_redop o0 = r->redop, o1 = each_redop ? FS_COLL_N_REDOPS - 1 : r->redop;
  int32_t root0 = r->prm.root, root1 = each_root ? r->g.p - 1 : r->prm.root;
  int rc = 0;
  for (int t = (int)t0; t <= (int)t1 && !rc; t++)
    for (int o = (int)o0; o <= (int)o1 && !rc; o++)
      for (int32_t root = root0; root <= root1 && !rc; root++) {
        r->dtype = (fs_coll_dtype)t;
        r->redop = (fs_coll_redop)o;
        r->prm.root = root;
        rc = run_sizes(r, z, out, err);
      }
  return rc;
}

/* How many blocks run_blocks runs. */
static size_t n_blocks(const coll_run *r) {
  fs_coll_op op = r->prm.op;
  size_t n = r->all_dtypes ? FS_COLL_N_DTYPES : 1;
  if (r->all_redops && strcmp(fs_coll_redop_column(op, FS_COLL_REDOP_SUM), "none"))
    n *= FS_COLL_N_REDOPS;
  if (r->all_roots && fs_coll_rooted(op)) n *= (size_t)r->g.p;
  return n;
}

static int coll_html(FILE *f, void *ctx) {
  const coll_run *r = ctx;
  return fs_report_coll_html(f, &r->out, r->rows, r->n_rows);
}

/* The values of o checked and turned into r's settings (prm, tune,
 * mode, fmt, transport): -1, or 2 after a usage error. */
/* The timing flags of nccl-tests, short name and field, in its help's
 * order: those given are named in the note. */
static const struct {
  char sh;
  size_t off;
} timing_flags[] = {
#define F(c, f) {c, offsetof(nccl_flags, f)}
    F('n', iters),    F('m', agg),     F('w', warmup),      F('N', cycles),  F('p', par_init),
    F('z', blocking), F('y', stream_null), F('T', timeout), F('G', graph),   F('C', cputime),
    F('S', stamps),   F('a', average), F('R', reg),         F('x', cta),     F('D', dev_impl),
    F('V', dev_ctas), F('M', memory),  F('u', unalign),     F('I', per_iter), F('K', iter_skip),
#undef F
};

/* The given timing flags as "-n 20 -w 5 ..." into buf (empty if none). */
static void timing_note(const nccl_flags *nf, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t k = 0; k < sizeof(timing_flags) / sizeof(timing_flags[0]); k++) {
    int32_t v = *(const int32_t *)((const char *)nf + timing_flags[k].off);
    if (v == NOT_GIVEN || len >= size) continue;
    len += (size_t)snprintf(buf + len, size - len, "%s-%c %d", len ? " " : "", timing_flags[k].sh,
                            v);
  }
}

/* A flag's value when given, else nccl-tests' default. */
static int32_t or_default(int32_t v, int32_t def) { return v == NOT_GIVEN ? def : v; }

/* The values of o checked and turned into r's settings (prm, tune,
 * mode, fmt, transport, type, reduction, root): -1, or 2 after a usage
 * error. */
static int check_opts(cmdline *o, coll_run *r) {
  fs_transport_defaults(FS_TRANSPORT_FLUID, &r->tp);
  int trc = fs__cli_transport("coll", o->transport, o->connections, o->rate_control, o->pkt, 1,
                              &r->tp);
  if (trc) return trc;
  if (fs_coll_op_parse(o->op.coll, &r->prm.op))
    return fs__cli_usage("coll", "unknown --op '%s' (allreduce, allgather, reducescatter, "
                         "broadcast, reduce, alltoall, sendrecv; or a reduction: sum, prod, "
                         "max, min, avg, mulsum, all)", o->op.coll);
  if (fs_coll_algo_parse(o->algo, &r->prm.algo))
    return fs__cli_usage("coll", "unknown --algo '%s' (auto, ring, tree, rd, rhd, binomial, "
                         "bruck, pairwise, direct, hier, inc)", o->algo);
  if (fs_coll_tune_policy_parse(o->tune, &r->tune))
    return fs__cli_usage("coll", "--tune must be nccl or sim, got '%s'", o->tune);
  r->all_dtypes = strcmp(o->datatype, "all") == 0;
  if (!r->all_dtypes && fs_coll_dtype_parse(o->datatype, &r->dtype))
    return fs__cli_usage("coll", "-d must be int8, uint8, int32, uint32, int64, uint64, half, "
                         "float, double, bfloat16, f8e4m3, f8e5m2 or all, got '%s'",
                         o->datatype);
  r->all_redops = strcmp(o->op.redop, "all") == 0;
  if (!r->all_redops && fs_coll_redop_parse(o->op.redop, &r->redop))
    return fs__cli_usage("coll", "-o must be sum, prod, max, min, avg, mulsum or all, got '%s'",
                         o->op.redop);
  long root = 0;
  if (o->root && fs__cli_parse_long(o->root, -1, INT32_MAX, &root))
    return fs__cli_usage("coll", "--root must be a rank >= 0 or -1 (every rank), got '%s'",
                         o->root);
  r->all_roots = root == -1;
  r->prm.root = root == -1 ? 0 : (int32_t)root;
  if (o->output_file)
    return fs__cli_usage("coll", "-J/--output_file '%s' is not written: fabricsim coll prints "
                         "JSON on stdout with --format json", o->output_file);
  if (!o->topo) return fs__cli_usage("coll", "--topo is required");
  if (!o->ranks && !o->ranks_file && !o->nthreads && !o->ngpus)
    return fs__cli_usage("coll", "--ranks, --ranks-file or -g is required");
  if (o->ranks && o->ranks_file)
    return fs__cli_usage("coll", "give --ranks or --ranks-file, not both");
  /* nccl-tests' ranks: processes x threads (-t) x GPUs (-g) */
  long per_proc = (long)(o->nthreads ? o->nthreads : 1) * (o->ngpus ? o->ngpus : 1);
  if (!o->ranks && !o->ranks_file) {
    if (per_proc > (1 << 22))
      return fs__cli_usage("coll", "-t %d x -g %d is more than %d ranks", o->nthreads,
                           o->ngpus, 1 << 22);
    o->ranks = (int32_t)per_proc;
  } else if (o->ranks && (o->nthreads || o->ngpus) && o->ranks % per_proc)
    return fs__cli_usage("coll",
                         "--ranks %d is not a multiple of -t %d x -g %d (nccl-tests' ranks are "
                         "processes x threads x GPUs)",
                         o->ranks, o->nthreads ? o->nthreads : 1, o->ngpus ? o->ngpus : 1);
  if (fs_route_mode_parse(o->routing, &r->mode) || r->mode == FS_ROUTE_EXPLICIT)
    return fs__cli_usage("coll",
                         "--routing must be ecmp, spray, shortest, dor, minimal, valiant, "
                         "railonly or lotus, got '%s'",
                         o->routing);
  if (strcmp(o->format, "nccl-tests") == 0) {
    r->fmt = FMT_NCCL_TESTS;
  } else if (strcmp(o->format, "text") && strcmp(o->format, "table") &&
             strcmp(o->format, "json") && strcmp(o->format, "csv")) {
    return fs__cli_usage("coll", "--format must be text, json, csv or nccl-tests (table is "
                         "text), got '%s'", o->format);
  } else {
    int go = fs__cli_format("coll", o->format, "text json csv", &r->fmt);
    if (go >= 0) return go;
  }
  int nccl_style = o->begin || o->end || o->factor || o->step;
  if ((o->size_range != NULL) + (o->size_list != NULL) + nccl_style > 1)
    return fs__cli_usage("coll", "give one of --size, --sizes or -b/-e/-f/-i");
  return -1;
}

int fs__cli_coll(int argc, char **argv) {
  cmdline o = {.algo = "auto",
               .format = "text",
               .routing = "ecmp",
               .tune = "nccl",
               .seed = 1,
               .datatype = "float",
               .op = {NULL, "sum"},
               .check = 1,
               .nf = {NOT_GIVEN, NOT_GIVEN, NOT_GIVEN, NOT_GIVEN, NOT_GIVEN, NOT_GIVEN, NOT_GIVEN,
                      NOT_GIVEN, NOT_GIVEN, NOT_GIVEN, NOT_GIVEN, NOT_GIVEN, NOT_GIVEN, NOT_GIVEN,
                      NOT_GIVEN, NOT_GIVEN, NOT_GIVEN, NOT_GIVEN, NOT_GIVEN, NOT_GIVEN}};
  fs_coll_params_init(&o.prm);
  int go = fs__opts_parse(&coll_cmd, &o, argc, argv);
  if (go >= 0) return go;
  if (!o.op.coll) return fs__cli_usage("coll", "--op is required (the collective)");
  coll_run run = {.prm = o.prm, .seed = o.seed};
  if ((go = check_opts(&o, &run)) >= 0) return go;
  sizes z = {NULL, 0, 0, 0, 0, 0, 0};
  if ((go = parse_sizes(&o, &z)) >= 0) {
    free(z.v);
    return go;
  }

  const char *ranks_file = o.ranks_file, *report = o.report;
  int32_t ranks = o.ranks;
  fs_output *report_out = NULL;
  if (report && fs__cli_output_open(report, &report_out)) {
    free(z.v);
    return 2;
  }
  fs_err err = {0, ""};
  fs_topo *t = NULL;
  int32_t *hosts = NULL;
  int status = 0;
  int rc = fs_topo_from_spec(o.topo, &t, &err);
  if (!rc && fs_route_mode_check(run.mode, t, &err)) {
    status = fs__cli_usage("coll", "--routing %s: %s", o.routing, err.msg);
    goto out;
  }
  if (!rc && ranks_file) rc = fs_coll_ranks_from_file(ranks_file, &hosts, &ranks, &err);
  if (!rc && ranks_file) rc = ranks_on_topology(ranks_file, hosts, ranks, t, &err);
  int32_t per_proc = (o.nthreads ? o.nthreads : 1) * (o.ngpus ? o.ngpus : 1);
  if (!rc && ranks_file && (o.nthreads || o.ngpus) && ranks % per_proc)
    rc = fs_err_set(&err, FS_EINVAL,
                    "%s: %d ranks is not a multiple of -t %d x -g %d (nccl-tests' ranks are "
                    "processes x threads x GPUs)",
                    ranks_file, ranks, o.nthreads ? o.nthreads : 1, o.ngpus ? o.ngpus : 1);
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
  run.t = t;
  run.g = (fs_coll_group){ranks, hosts};
  /* the options checked against the ranks, naming the option */
  if (!rc && run.prm.root >= ranks) {
    status = fs__cli_usage("coll", "--root must be a rank in [0, %d), got '%d'", ranks,
                           run.prm.root);
    goto out;
  }
  if (!rc && run.prm.node_size > 0 && ranks % run.prm.node_size != 0) {
    status = fs__cli_usage("coll", "--node-size must divide the %d ranks into whole nodes, got '%d'",
                           ranks, run.prm.node_size);
    goto out;
  }
  if (!rc) {
    fs_coll_params q = run.prm;
    q.bytes = z.v[0];
    rc = fs_coll_params_check(&q, ranks, &err);
  }
  if (!rc) rc = fs_router_new(t, &run.router, &err);
  if (!rc) rc = fs_coll_tuner_new2(t, run.mode, run.seed, run.tune, &run.tuner, &err);
  if (rc) {
    status = fs__cli_fail(&err);
    goto out;
  }
  if (report && !(run.rows = calloc(z.n * n_blocks(&run), sizeof(*run.rows)))) {
    status = fs__cli_fail(&(fs_err){FS_ENOMEM, "out of memory"});
    goto out;
  }
  /* what nccl-tests' header says of the run: -t and -g as given (the
   * processes make up the rest of the ranks), else one thread of every
   * rank; its defaults for the flags not given */
  char note[256];
  timing_note(&o.nf, note, sizeof(note));
  int32_t nthreads = o.nthreads ? o.nthreads : 1;
  fs_report_coll_nccl nccl = {nthreads,
                              o.ngpus ? o.ngpus : (ranks % nthreads ? ranks : ranks / nthreads),
                              z.lo,
                              z.hi,
                              z.step,
                              z.step_is_factor,
                              or_default(o.nf.warmup, 1),
                              or_default(o.nf.iters, 20),
                              or_default(o.nf.agg, 1),
                              o.check,
                              or_default(o.nf.graph, 0),
                              or_default(o.nf.unalign, 0),
                              note[0] ? note : NULL,
                              hosts};
  if (!o.ngpus && ranks % nthreads) nccl.nthreads = 1;
  run.out = (fs_report_coll){(fs_report_coll_format)run.fmt, &run.prm, ranks, t, o.routing,
                             {0, 0, 0}, run.tune, &nccl, 0, 0};
  char *json_buf = NULL;
  size_t json_len = 0;
  FILE *json_buf_file = run.fmt == FS__FMT_JSON ? open_memstream(&json_buf, &json_len) : NULL;
  FILE *out = json_buf_file ? json_buf_file : stdout;
  rc = run_blocks(&run, &z, out, &err);
  if (!rc) fs_report_coll_tail(out, &run.out);
  if (json_buf_file) {
    /* JSON is only whole or nothing: printed once the sweep succeeded. */
    fclose(json_buf_file);
    if (!rc) fputs(json_buf, stdout);
    free(json_buf);
  }
  if (rc) status = fs__cli_fail(&err);
  if (!rc && report) {
    status = fs__cli_output_write(report_out, coll_html, &run);
    report_out = NULL;
  }
out:
  fs_output_abort(report_out);
  free(run.rows);
  fs_coll_tuner_free(run.tuner);
  fs_router_free(run.router);
  fs_topo_free(t);
  free(hosts);
  free(z.v);
  return status;
}
