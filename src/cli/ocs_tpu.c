/* fabricsim ocs tpu: a TPU v4 style slice of 4x4x4 cubes joined by OCS
 * (docs/model-tpu.md): where it goes in the pod with and without OCS, its
 * circuits and reconfiguration, its graph's diameter and bisection against
 * the torus closed forms, a seeded job mix, and the optical share of cost
 * and power. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "cli.h"
#include "opts.h"
#include "fabricsim/coll.h"
#include "fabricsim/report.h"
#include "fabricsim/tpu.h"

/* --reconfig-ms: milliseconds in [0, 1e9], into seconds. */
static int parse_reconfig_ms(const char *v, void *field) {
  double ms;
  if (fs__cli_parse_double(v, 0, 1e9, &ms)) return -1;
  *(double *)field = ms * 1e-3;
  return 0;
}

/* What the command line gives; the initialiser holds the defaults. */
typedef struct cmdline {
  const char *shape, *busy, *format, *coll, *algo, *routing;
  double coll_bytes;
  long busy_random, mix, seed;
  int twisted;
  fs_tpu_params p;
  fs_tpu_cost_params cp;
} cmdline;

#define AT(f) offsetof(cmdline, f)
static const fs__opt tpu_opts[] = {
    FS__OPT_STR("--shape", 0, AT(shape), "XxYxZ", "slice shape in chips, e.g. 8x8x16"),
    FS__OPT_FLAG("--twisted", 0, AT(twisted), "twisted torus (k x k x 2k or k x 2k x 2k only)"),
    FS__OPT_INT32("--cubes", 0, AT(p.cubes), "N", 1, 50000, "--cubes must be a positive integer",
                  "cubes in the pod (default 64; at most ports/2)"),
    FS__OPT_STR("--busy", 0, AT(busy), "LIST",
                "comma-separated cube ids already taken (e.g. 0,5,9)"),
    FS__OPT_LONG("--busy-random", 0, AT(busy_random), "K", 0, 50000,
                 "--busy-random must be a non-negative integer",
                 "K cubes taken, chosen with --seed"),
    FS__OPT_LONG("--jobs-mix", 0, AT(mix), "N", 0, 1000000,
                 "--jobs-mix must be an integer in [0, 1000000]",
                 "also run N random slice requests (4x4x4 .. 8x8x16, one per step, random "
                 "lifetimes, offered load 1) with and without OCS and print the admission "
                 "rates"),
    FS__OPT_LONG("--seed", 0, AT(seed), "S", 0, 2147483647L,
                 "--seed must be a non-negative integer",
                 "seed of --busy-random and --jobs-mix (default 1)"),
    FS__OPT_DOUBLE("--ici-gbps", 0, AT(p.ici_gbps), "G", 1e-3, 1e7,
                   "--ici-gbps must be in (0, 1e7]", "ICI link rate per direction (default 400)"),
    FS__OPT_FN("--reconfig-ms", 0, AT(p.reconfig_s), "T", parse_reconfig_ms,
               "--reconfig-ms must be in [0, 1e9]", "OCS reconfiguration delay (default 10)"),
    FS__OPT_DOUBLE("--chip-usd", 0, AT(cp.chip_usd), "X", 0, 1e12,
                   "--chip-usd must be a number in [0, 1e12]",
                   "cost estimate: a chip and all but the optical fabric, USD (the defaults "
                   "of these six in docs/model-tpu.md)"),
    FS__OPT_DOUBLE("--chip-watts", 0, AT(cp.chip_watts), "X", 0, 1e12,
                   "--chip-watts must be a number in [0, 1e12]",
                   "its power, W"),
    FS__OPT_DOUBLE("--ocs-usd", 0, AT(cp.ocs_usd), "X", 0, 1e12,
                   "--ocs-usd must be a number in [0, 1e12]",
                   "price of an OCS, USD"),
    FS__OPT_DOUBLE("--ocs-watts", 0, AT(cp.ocs_watts), "X", 0, 1e12,
                   "--ocs-watts must be a number in [0, 1e12]",
                   "its power, W"),
    FS__OPT_DOUBLE("--xcvr-usd", 0, AT(cp.xcvr_usd), "X", 0, 1e12,
                   "--xcvr-usd must be a number in [0, 1e12]",
                   "price of a transceiver (an optical link end), USD"),
    FS__OPT_DOUBLE("--xcvr-watts", 0, AT(cp.xcvr_watts), "X", 0, 1e12,
                   "--xcvr-watts must be a number in [0, 1e12]",
                   "its power, W"),
    FS__OPT_STR("--coll", 0, AT(coll), "OP",
                "also run collective OP (allreduce, alltoall, allgather, ...) over every chip "
                "of the slice on the fluid engine"),
    FS__OPT_DOUBLE("--bytes", 0, AT(coll_bytes), "B", 1, 1e15, "--bytes must be in [1, 1e15]",
                   "its size (nccl-tests convention; default 1e9)"),
    FS__OPT_STR("--algo", 0, AT(algo), "A",
                "its algorithm (default ring for reductions and gathers, direct for "
                "all-to-all); routing: dimension order on a torus, ECMP on a twisted one"),
    FS__OPT_STR("--routing", 0, AT(routing), "M",
                "override: ecmp, spray, shortest (or dor, plain only)"),
    FS__OPT_STR("--format", 0, AT(format), "text|json", "text (default; or table) or json"),
    FS__OPT_END};

static const fs__cmd tpu_cmd = {
    "ocs tpu", "--shape XxYxZ [options]",
    "Places a slice of XxYxZ TPU chips (multiples of 4: whole 4x4x4 cubes) in a TPU v4 style "
    "pod, configures the 48 OCSes to make it a 3-D torus (or twisted torus), checks the graph "
    "against the torus closed forms and prints the optical share of the pod's cost and power "
    "(docs/model-tpu.md).",
    NULL, tpu_opts, NULL, NULL, 0, 0, 0, 0};
#undef AT

typedef fs_report_ocs_tpu result; /* filled here, printed by the report */

/* --coll, --algo, --bytes (bytes: its value or the default) and --routing
 * into *prm and *want_mode: -1, or 2 after a usage error. */
static int coll_opts(const cmdline *o, double bytes, fs_coll_params *prm,
                     fs_route_mode *want_mode) {
  const char *C = "ocs tpu", *coll = o->coll, *algo = o->algo, *routing = o->routing;
  fs_coll_params_init(prm);
  if (coll) {
    if (fs_coll_op_parse(coll, &prm->op))
      return fs__cli_usage(C, "--coll: unknown collective '%s'", coll);
    prm->algo = prm->op == FS_COLL_ALLTOALL ? FS_ALGO_DIRECT : FS_ALGO_RING;
    if (algo && fs_coll_algo_parse(algo, &prm->algo))
      return fs__cli_usage(C, "--algo: unknown algorithm '%s'", algo);
    prm->bytes = bytes;
  } else if (algo || o->coll_bytes >= 0 || routing) {
    return fs__cli_usage(C, "--algo, --bytes and --routing need --coll");
  }
  if (routing && (fs_route_mode_parse(routing, want_mode) ||
                  (*want_mode != FS_ROUTE_ECMP && *want_mode != FS_ROUTE_SPRAY &&
                   *want_mode != FS_ROUTE_SHORTEST && *want_mode != FS_ROUTE_DOR)))
    return fs__cli_usage(C, "--routing must be ecmp, spray, shortest or dor, got '%s'", routing);
  return -1;
}

int fs__cli_ocs_tpu(int argc, char **argv) {
  const char *C = "ocs tpu";
  /* coll_bytes -1: --bytes not given (1e9) */
  cmdline o = {.format = "text", .coll_bytes = -1, .busy_random = -1, .mix = -1, .seed = 1};
  fs_tpu_defaults(&o.p);
  fs_tpu_cost_defaults(&o.cp);
  int go = fs__opts_parse(&tpu_cmd, &o, argc, argv);
  if (go >= 0) return go;
  const char *shape_s = o.shape, *busy = o.busy, *format = o.format, *coll = o.coll;
  fs_route_mode want_mode = FS_ROUTE_EXPLICIT; /* none given */
  double coll_bytes = o.coll_bytes < 0 ? 1e9 : o.coll_bytes;
  long busy_random = o.busy_random, mix = o.mix, seed = o.seed;
  int twisted = o.twisted;
  fs_tpu_params p = o.p;
  fs_tpu_cost_params cp = o.cp;
  if (!shape_s) return fs__cli_usage(C, "--shape is required (e.g. --shape 8x8x16)");
  fs_coll_params coll_prm;
  if ((go = coll_opts(&o, coll_bytes, &coll_prm, &want_mode)) >= 0) return go;
  int fmt, go_fmt = fs__cli_format(C, format, "text json", &fmt);
  if (go_fmt >= 0) return go_fmt;
  if (busy && busy_random >= 0)
    return fs__cli_usage(C, "--busy and --busy-random are exclusive");
  fs_err err = {0, ""};
  int32_t shape[3];
  /* the library's messages, with the option to blame */
  if (fs_tpu_shape_parse(shape_s, shape, &err))
    return fs__cli_usage(C, "--shape: %s", err.msg);
  if (fs_tpu_shape_check(shape, twisted, &err))
    return fs__cli_usage(C, "--shape%s: %s", twisted ? " with --twisted" : "", err.msg);
  fs_tpu_pod *pod = NULL;
  int32_t *before = NULL, *cubes = NULL;
  fs_topo *t = NULL;
  result r;
  memset(&r, 0, sizeof(r));
  r.cp = coll_prm;
  int status = 0;
  if (fs_tpu_pod_new(&p, &pod, &err)) goto fail;
  if ((busy && fs_tpu_pod_set_busy_list(pod, busy, &err)) ||
      (busy_random >= 0 &&
       fs_tpu_pod_busy_random(pod, (int32_t)busy_random, (uint64_t)seed, &err))) {
    status = err.code == FS_EINVAL
                 ? fs__cli_usage(C, "%s: %s", busy ? "--busy" : "--busy-random", err.msg)
                 : fs__cli_fail(&err);
    goto out;
  }
  r.need = shape[0] / 4 * (shape[1] / 4) * (shape[2] / 4);
  if (r.need > p.cubes) {
    fs_err_set(&err, FS_EINVAL, "shape %dx%dx%d needs %d cubes, the pod has %d (--cubes)",
               shape[0], shape[1], shape[2], r.need, p.cubes);
    goto fail;
  }
  r.free_cubes = fs_tpu_pod_free_cubes(pod);
  fs_tpu_static_grid(p.cubes, r.grid);
  size_t np = (size_t)FS_TPU_N_OCS * (size_t)p.ocs_ports;
  before = malloc(np * sizeof(*before));
  cubes = malloc(((size_t)r.need + 1) * sizeof(*cubes));
  r.static_cubes = malloc(((size_t)r.need + 1) * sizeof(*r.static_cubes));
  if (!before || !cubes || !r.static_cubes) {
    fs_err_set(&err, FS_ENOMEM, "out of memory");
    goto fail;
  }
  /* The mix runs on the pod as the user left it, before this slice. */
  if (mix >= 0 && r.free_cubes > 0) {
    if (fs_tpu_mix_run(pod, (int32_t)mix, (uint64_t)seed, &r.mr, &err)) goto fail;
    r.mix = 1;
  }
  int32_t cd[3];
  fs_tpu_shape_canon(shape, cd);
  for (int d = 0; d < 3; d++) cd[d] /= 4;
  r.placed_static = fs_tpu_place_static(pod, r.grid, cd, r.static_cubes);
  r.placed_ocs = fs_tpu_place_ocs(pod, r.need, cubes);
  if (r.placed_ocs) {
    memcpy(before, pod->peer, np * sizeof(*before));
    if (fs_tpu_slice_add(pod, shape, twisted, cubes, &r.slice, &err) ||
        fs_tpu_pod_check(pod, &err))
      goto fail;
    r.have_slice = 1;
    fs_tpu_reconfig_diff(&p, before, pod->peer, &r.rec);
    for (size_t q = 0; q < np; q++) r.ports_used += pod->peer[q] >= 0;
    fs__cli_progress pr;
    fs__cli_progress_start(&pr, "ocs tpu");
    if (fs_tpu_slice_topo(pod, &r.slice, &t, &err) || fs_topo_stats_compute(t, &r.st, &err))
      goto fail;
    if (fs__cli_progress_elapsed(&pr) > 1.0)
      fprintf(stderr, "fabricsim ocs tpu: graph metrics of %d chips took %.1f s\n", t->n_hosts,
              fs__cli_progress_elapsed(&pr));
    r.have_stats = 1;
    r.diam_measured = r.st.diameter_hops - 2; /* minus the two chip-router cables */
    r.diam_torus = fs_tpu_torus_diameter(r.slice.dims);
    r.bis_measured_bps = r.st.bisection_bps;
    r.bis_torus_links = fs_tpu_torus_bisection_links(r.slice.dims);
    r.bis_torus_bps = (double)r.bis_torus_links * p.ici_gbps * 1e9;
    if (fs_tpu_halving_cuts(t, r.cuts, &err)) goto fail;
    r.cut_min = r.cuts[0] < r.cuts[1] ? r.cuts[0] : r.cuts[1];
    if (r.cuts[2] < r.cut_min) r.cut_min = r.cuts[2];
    r.plain_min = r.bis_torus_links;
    if (coll) {
      /* Every chip, in chip order; dimension-order routing where the
       * slice is a plain torus, ECMP over shortest paths when twisted. */
      int32_t n = t->n_hosts;
      int32_t *ids = malloc((size_t)n * sizeof(int32_t));
      if (!ids) {
        fs_err_set(&err, FS_ENOMEM, "out of memory");
        goto fail;
      }
      for (int32_t i = 0; i < n; i++) ids[i] = i;
      fs_coll_group g = {n, ids};
      fs_err merr = {0, ""};
      r.mode = fs_route_mode_check(FS_ROUTE_DOR, t, &merr) == 0 ? FS_ROUTE_DOR : FS_ROUTE_ECMP;
      if (want_mode != FS_ROUTE_EXPLICIT) {
        if (fs_route_mode_check(want_mode, t, &merr)) {
          free(ids);
          fs_err_set(&err, FS_EINVAL, "--routing: %s (a twisted slice is not a plain torus)",
                     merr.msg);
          goto fail;
        }
        r.mode = want_mode;
      }
      int crc = fs_coll_run(t, r.mode, (uint64_t)seed, &r.cp, &g, &r.cr, &err);
      free(ids);
      if (crc) goto fail;
      r.coll = 1;
    }
  }
  if (fs_tpu_cost_compute(&p, &cp, &r.cost, &err)) goto fail;
  r.p = p;
  memcpy(r.shape, shape, sizeof(r.shape));
  r.twisted = twisted;
  status = fs__cli_stdout_done(C, fmt == 0 ? fs_report_ocs_tpu_table(stdout, &r)
                                           : fs_report_ocs_tpu_json(stdout, &r));
  goto out;
fail:
  status = fs__cli_fail(&err);
out:
  fs_topo_free(t);
  fs_tpu_slice_clear(&r.slice);
  free(r.static_cubes);
  free(cubes);
  free(before);
  fs_tpu_pod_free(pod);
  return status;
}
