/* fabricsim wan: lightpath provisioning on an optical WAN (provision) and
 * a job's cross-site all-reduce over the provisioned lightpaths, before
 * and after a fibre cut (train). docs/model-wan.md has the model, the file
 * format and examples. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "cli.h"
#include "opts.h"
#include "fabricsim/wan.h"

static int parse_algo(const char *v, void *field) {
  return fs_wan_algo_parse(v, (fs_wan_algo *)field) ? -1 : 0;
}

/* What the command line gives; the initialiser holds the defaults. */
typedef struct opts {
  const char *file, *cut, *format;
  fs_wan_algo algo;
  long k, random, seed;
  double gbps, bytes;
  int json, n_file;
} opts;

_Static_assert(FS_WAN_MAX_K == 64, "the message of --k says 64");
#define AT(f) offsetof(opts, f)
/* The options of both subcommands. */
#define WAN_COMMON_OPTS                                                                       \
  FS__OPT_FN("--algo", 0, AT(algo), "A", parse_algo, "--algo must be first-fit or most-used", \
             "first-fit (default) or most-used"),                                             \
      FS__OPT_LONG("--k", 0, AT(k), "K", 1, FS_WAN_MAX_K, "--k must be an integer in [1, 64]", \
                   "candidate paths per demand (default 3)"),                                 \
      FS__OPT_STR("--format", 0, AT(format), "F", "table (default) or json")

static const fs__opt provision_opts[] = {
    WAN_COMMON_OPTS,
    FS__OPT_STR("--cut", 0, AT(cut), "A-B",
                "the fibre between sites A and B fails before provisioning"),
    FS__OPT_LONG("--random", 0, AT(random), "N", 1, 1000000,
                 "--random must be an integer in [1, 1000000]",
                 "N random demands instead of the file's"),
    FS__OPT_DOUBLE("--gbps", 0, AT(gbps), "G", 1e-3, 1e7,
                   "--gbps must be a number in [0.001, 1e7]",
                   "rate of each random demand (default 100)"),
    FS__OPT_LONG("--seed", 0, AT(seed), "S", 0, 2147483647L,
                 "--seed must be a non-negative integer",
                 "seed of the random demands (default 1)"),
    FS__OPT_END};

static const fs__opt train_opts[] = {
    WAN_COMMON_OPTS,
    FS__OPT_STR("--cut", 0, AT(cut), "A-B",
                "the fibre between sites A and B fails: restoration after it"),
    FS__OPT_DOUBLE("--bytes", 0, AT(bytes), "B", 1, 1e15,
                   "--bytes must be a number in [1, 1e15]",
                   "all-reduce size (default the job's bytes)"),
    FS__OPT_END};

static const fs__cmd provision_cmd = {
    "wan provision", "WAN.json [options]",
    "Routes and assigns spectrum to the file's demands (and the job's ring demands) over the "
    "k shortest paths by km; prints every lightpath (path, km, modulation, wavelength or "
    "slots, rate) and the blocking.",
    NULL, provision_opts, "WAN.json", "WAN file", 1, 1, AT(file), AT(n_file)};

static const fs__cmd train_cmd = {
    "wan train", "WAN.json [options]",
    "Provisions the file's demands, then the job's, and simulates the job's hierarchical "
    "all-reduce across sites (per phase, beside its alpha-beta closed form); with --cut, "
    "restores the lightpaths crossing the cut fibre and reports the slowdown.",
    NULL, train_opts, "WAN.json", "WAN file", 1, 1, AT(file), AT(n_file)};
#undef AT

/* Parses the options of a subcommand (c's table) into o: -1 to go on, or
 * the exit status. */
static int parse_opts(const fs__cmd *c, int argc, char **argv, opts *o) {
  memset(o, 0, sizeof(*o));
  o->format = "table";
  o->algo = FS_WAN_FIRST_FIT;
  o->k = 3;
  o->seed = 1;
  o->gbps = 100;
  int go = fs__opts_parse(c, o, argc, argv);
  if (go >= 0) return go;
  o->json = strcmp(o->format, "json") == 0;
  if (!o->json && strcmp(o->format, "table") != 0)
    return fs__cli_usage(c->name, "--format must be table or json, got '%s'", o->format);
  return -1; /* go on */
}

/* The demands to provision: the file's (or random ones), then the job's. */
static fs_wan_demand *collect_demands(const fs_wan *w, const opts *o, int32_t *n) {
  int32_t nj = fs_wan_job_demands(w, NULL, 0);
  int32_t nf = o->random ? (int32_t)o->random : w->n_demands;
  fs_wan_demand *d = fs__calloc((size_t)(nf + nj) + 1, sizeof(*d));
  if (!d) return NULL;
  if (o->random) {
    fs__rng rng;
    fs__rng_seed(&rng, (uint64_t)o->seed);
    for (int32_t i = 0; i < nf; i++) {
      int32_t a = (int32_t)fs__rng_below(&rng, (uint64_t)w->n_sites);
      int32_t b = (int32_t)fs__rng_below(&rng, (uint64_t)w->n_sites - 1);
      if (b >= a) b++;
      fs_wan_demand x = {a, b, o->gbps, -1, 0};
      d[i] = x;
    }
  } else if (nf) {
    memcpy(d, w->demands, (size_t)nf * sizeof(*d));
  }
  fs_wan_job_demands(w, d + nf, nj);
  *n = nf + nj;
  return d;
}

static void path_str(const fs_wan *w, const fs_wan_path *p, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = '\0';
  for (int32_t i = 0; i <= p->hops && len + 1 < n; i++) {
    int k = snprintf(buf + len, n - len, "%s%s", i ? ">" : "", w->sites[p->nodes[i]].name);
    if (k < 0) break;
    len += (size_t)k;
  }
}

static void units_str(const fs_wan *w, const fs_wan_lightpath *lp, char *buf, size_t n) {
  if (w->grid.kind == FS_WAN_FIXED)
    snprintf(buf, n, "w%d", lp->first);
  else if (lp->count == 1)
    snprintf(buf, n, "s%d", lp->first);
  else
    snprintf(buf, n, "s%d-%d", lp->first, lp->first + lp->count - 1);
}

static void jnum(const char *key, double v, int comma) {
  char b[32];
  fs__fmt_num(b, v);
  printf("\"%s\": %s%s", key, b, comma ? ", " : "");
}

static double utilisation(const fs_wan_plan *p) {
  size_t cells = (size_t)p->w->n_fibres * p->w->grid.units, held = 0;
  for (size_t i = 0; i < cells; i++) held += p->owner[i] >= 0;
  return cells ? (double)held / (double)cells : 0;
}

static void grid_str(const fs_wan *w, char *buf, size_t n) {
  if (w->grid.kind == FS_WAN_FIXED)
    snprintf(buf, n, "fixed grid %d x %g GHz, %g Gb/s per wavelength (%s)", w->grid.units,
             w->grid.ghz, w->grid.gbps, w->mods[w->n_mods - 1].name);
  else
    snprintf(buf, n, "flexgrid %d x %g GHz slots, guard %d", w->grid.units, w->grid.ghz,
             w->grid.guard);
}

static void print_plan_table(const fs_wan_plan *p) {
  const fs_wan *w = p->w;
  char g[160];
  grid_str(w, g, sizeof(g));
  printf("# fabricsim wan provision: %d sites, %d fibres, %s\n", w->n_sites, w->n_fibres, g);
  printf("# %s, k = %d", fs_wan_algo_name(p->opts.algo), p->opts.k);
  if (p->opts.cut >= 0)
    printf(", fibre %s-%s cut", w->sites[w->fibres[p->opts.cut].a].name,
           w->sites[w->fibres[p->opts.cut].b].name);
  printf("\n%-6s %-16s %9s %-8s %-28s %8s %-6s %-9s %9s %9s\n", "demand", "sites", "gbps",
         "status", "path", "km", "mod", "units", "line gbps", "rate gbps");
  for (int32_t di = 0; di < p->n_demands; di++) {
    const fs_wan_demand *d = &p->demands[di];
    char sites[2 * FS_WAN_NAME + 2];
    snprintf(sites, sizeof(sites), "%s-%s%s", w->sites[d->src].name, w->sites[d->dst].name,
             d->job ? "*" : "");
    if (p->lp_n[di] == 0) {
      printf("%-6d %-16s %9g %-8s %-28s %8s %-6s %-9s %9s %9s\n", di, sites, d->gbps,
             fs_wan_status_name(p->status[di]), "-", "-", "-", "-", "-", "-");
      continue;
    }
    for (int32_t j = p->lp_first[di]; j < p->lp_first[di] + p->lp_n[di]; j++) {
      const fs_wan_lightpath *lp = &p->lps[j];
      char path[256], units[32];
      path_str(w, &lp->path, path, sizeof(path));
      units_str(w, lp, units, sizeof(units));
      printf("%-6d %-16s %9g %-8s %-28s %8g %-6s %-9s %9g %9g\n", di, sites, d->gbps, "ok", path,
             lp->path.km, w->mods[lp->mod].name, units, lp->line_gbps, lp->gbps);
    }
  }
  printf("demands %d, lightpaths %d, blocked %d (ratio %.4f), bandwidth blocked %.4f, "
         "spectrum used %.4f\n",
         p->n_demands, p->n_lps, p->blocked, p->n_demands ? (double)p->blocked / p->n_demands : 0,
         p->offered_gbps > 0 ? p->blocked_gbps / p->offered_gbps : 0, utilisation(p));
  printf("# * = the job's ring demand; units: wN wavelength N, sA-B slots A..B (guard included)\n");
}

static void print_plan_json(const fs_wan_plan *p, int close) {
  const fs_wan *w = p->w;
  printf("{\"algo\": \"%s\", \"k\": %d, \"grid\": \"%s\", \"units\": %d, \"cut\": ",
         fs_wan_algo_name(p->opts.algo), p->opts.k,
         w->grid.kind == FS_WAN_FIXED ? "fixed" : "flex", w->grid.units);
  if (p->opts.cut >= 0) {
    char c[2 * FS_WAN_NAME + 2];
    snprintf(c, sizeof(c), "%s-%s", w->sites[w->fibres[p->opts.cut].a].name,
             w->sites[w->fibres[p->opts.cut].b].name);
    fs__fput_json_str(stdout, c);
  } else {
    printf("null");
  }
  printf(",\n \"demands\": [");
  for (int32_t di = 0; di < p->n_demands; di++) {
    const fs_wan_demand *d = &p->demands[di];
    printf("%s\n  {\"src\": ", di ? "," : "");
    fs__fput_json_str(stdout, w->sites[d->src].name);
    printf(", \"dst\": ");
    fs__fput_json_str(stdout, w->sites[d->dst].name);
    printf(", ");
    jnum("gbps", d->gbps, 1);
    printf("\"job\": %s, \"status\": \"%s\", \"lightpaths\": [", d->job ? "true" : "false",
           fs_wan_status_name(p->status[di]));
    for (int32_t j = p->lp_first[di]; j < p->lp_first[di] + p->lp_n[di]; j++) {
      const fs_wan_lightpath *lp = &p->lps[j];
      printf("%s{\"path\": [", j > p->lp_first[di] ? ", " : "");
      for (int32_t i = 0; i <= lp->path.hops; i++) {
        if (i) printf(", ");
        fs__fput_json_str(stdout, w->sites[lp->path.nodes[i]].name);
      }
      printf("], ");
      jnum("km", lp->path.km, 1);
      printf("\"modulation\": ");
      fs__fput_json_str(stdout, w->mods[lp->mod].name);
      printf(", \"first\": %d, \"count\": %d, \"guard\": %d, ", lp->first, lp->count, lp->guard);
      jnum("line_gbps", lp->line_gbps, 1);
      jnum("gbps", lp->gbps, 0);
      printf("}");
    }
    printf("]}");
  }
  printf("],\n \"n_demands\": %d, \"lightpaths\": %d, \"blocked\": %d, ", p->n_demands, p->n_lps,
         p->blocked);
  jnum("blocking_ratio", p->n_demands ? (double)p->blocked / p->n_demands : 0, 1);
  jnum("bandwidth_blocking_ratio", p->offered_gbps > 0 ? p->blocked_gbps / p->offered_gbps : 0, 1);
  jnum("spectrum_utilisation", utilisation(p), 0);
  printf("}%s", close ? "\n" : "");
}

static int provision(const opts *o) {
  fs_err err = {0, ""};
  fs_wan *w = NULL;
  fs_wan_plan *p = NULL;
  fs_wan_demand *d = NULL;
  int status = 0;
  int32_t n = 0, cut = -1;
  if (fs_wan_from_file(o->file, &w, &err)) return fs__cli_fail(&err);
  if (o->cut && fs_wan_fibre_parse(w, o->cut, &cut, &err)) {
    status = fs__cli_usage("wan provision", "--cut: %s", err.msg);
    goto out;
  }
  if (!(d = collect_demands(w, o, &n))) {
    status = fs__cli_fail(&(fs_err){FS_ENOMEM, "out of memory"});
    goto out;
  }
  fs_wan_prov_opts po = {o->algo, (int32_t)o->k, cut};
  if (fs_wan_provision(w, d, n, &po, &p, &err) || fs_wan_plan_check(p, &err)) {
    status = fs__cli_fail(&err);
    goto out;
  }
  if (o->json)
    print_plan_json(p, 1);
  else
    print_plan_table(p);
out:
  fs_wan_plan_free(p);
  free(d);
  fs_wan_free(w);
  return status;
}

static const char *const phase_names[3] = {"reduce-scatter in sites", "all-reduce across sites",
                                           "all-gather in sites"};

static void ms(char *b, double s) {
  if (isfinite(s))
    snprintf(b, 32, "%.6g", s * 1e3);
  else
    snprintf(b, 32, "-");
}

static void print_train_table(const fs_wan_train_result *r, const fs_wan_plan *p,
                              const char *title) {
  char a[32], b[32];
  int32_t nj = 0, bj = 0;
  for (int32_t di = 0; di < p->n_demands; di++)
    if (p->demands[di].job) nj++, bj += p->status[di] != FS_WAN_OK;
  printf("%s\n", title);
  if (!r->connected) {
    printf("job sites disconnected: %d of %d ring demands blocked, all-reduce impossible\n", bj,
           nj);
    return;
  }
  printf("%-26s %14s %14s\n", "phase", "simulated ms", "closed form ms");
  for (int i = 0; i < 3; i++) {
    ms(a, r->phase_s[i]);
    ms(b, r->model_s[i]);
    printf("%-26s %14s %14s\n", phase_names[i], a, b);
  }
  ms(a, r->total_s);
  ms(b, r->model_total_s);
  printf("%-26s %14s %14s\n", "total", a, b);
  printf("WAN: %d ring demands (%d blocked: their traffic crosses other sites); slowest pair "
         "%g Gb/s, %g km, alpha %.6g ms\n",
         nj, bj, r->wan_gbps_min, r->wan_km_max, r->wan_alpha_s * 1e3);
}

static void print_train_json(const fs_wan_train_result *r) {
  printf("{\"connected\": %s, \"phases\": [", r->connected ? "true" : "false");
  for (int i = 0; i < 3; i++) {
    printf("%s{\"phase\": \"%s\", ", i ? ", " : "", phase_names[i]);
    jnum("sim_s", r->phase_s[i], 1);
    jnum("model_s", r->model_s[i], 0);
    printf("}");
  }
  printf("], ");
  jnum("total_s", r->total_s, 1);
  jnum("model_total_s", r->model_total_s, 1);
  jnum("wan_gbps_min", r->wan_gbps_min, 1);
  jnum("wan_km_max", r->wan_km_max, 1);
  jnum("wan_alpha_s", r->wan_alpha_s, 1);
  printf("\"multihop_pairs\": %d, \"flows\": %lld}", r->multihop, (long long)r->flows);
}

static int train(const opts *o) {
  fs_err err = {0, ""};
  fs_wan *w = NULL;
  fs_wan_plan *p = NULL, *q = NULL;
  fs_wan_demand *d = NULL;
  int status = 0;
  int32_t n = 0, cut = -1;
  fs_wan_train_result r0, r1;
  if (fs_wan_from_file(o->file, &w, &err)) return fs__cli_fail(&err);
  if (!w->job.present) {
    err.code = FS_EINVAL;
    snprintf(err.msg, sizeof(err.msg), "%s: $.job: missing (train needs a job)", o->file);
    status = fs__cli_fail(&err);
    goto out;
  }
  if (o->cut && fs_wan_fibre_parse(w, o->cut, &cut, &err)) {
    status = fs__cli_usage("wan train", "--cut: %s", err.msg);
    goto out;
  }
  if (!(d = collect_demands(w, o, &n))) {
    status = fs__cli_fail(&(fs_err){FS_ENOMEM, "out of memory"});
    goto out;
  }
  fs_wan_prov_opts po = {o->algo, (int32_t)o->k, -1};
  if (fs_wan_provision(w, d, n, &po, &p, &err) || fs_wan_plan_check(p, &err) ||
      fs_wan_train(p, o->bytes, &r0, &err)) {
    status = fs__cli_fail(&err);
    goto out;
  }
  if (cut >= 0 && (fs_wan_restore(p, cut, &q, &err) || fs_wan_plan_check(q, &err) ||
                   fs_wan_train(q, o->bytes, &r1, &err))) {
    status = fs__cli_fail(&err);
    goto out;
  }
  double slow = q && r0.connected && r1.connected ? r1.total_s / r0.total_s : NAN;
  char cutname[2 * FS_WAN_NAME + 2] = "";
  if (cut >= 0)
    snprintf(cutname, sizeof(cutname), "%s-%s", w->sites[w->fibres[cut].a].name,
             w->sites[w->fibres[cut].b].name);
  if (o->json) {
    printf("{\"file\": ");
    fs__fput_json_str(stdout, o->file);
    printf(", \"sites\": %d, \"gpus_per_site\": %d, ", r0.sites, r0.gpus_per_site);
    jnum("bytes", r0.bytes, 1);
    printf("\n \"provision\": ");
    print_plan_json(p, 0);
    printf(",\n \"before\": ");
    print_train_json(&r0);
    if (q) {
      printf(",\n \"cut\": ");
      fs__fput_json_str(stdout, cutname);
      printf(", \"restored_lightpaths\": %d, \"blocked_after\": %d,\n \"after\": ", q->restored,
             q->blocked);
      print_train_json(&r1);
      printf(",\n ");
      jnum("slowdown", slow, 0);
    }
    printf("}\n");
  } else {
    char g[160], title[512];
    grid_str(w, g, sizeof(g));
    printf("# fabricsim wan train: %d sites x %d GPUs, all-reduce %.6g bytes\n", r0.sites,
           r0.gpus_per_site, r0.bytes);
    printf("# %s, %s, k = %d; %d demands, %d blocked\n", g, fs_wan_algo_name(o->algo), (int)o->k,
           p->n_demands, p->blocked);
    print_train_table(&r0, p, "## before any cut");
    if (q) {
      snprintf(title, sizeof(title), "## after cutting fibre %s: %d lightpaths restored, %d demands blocked",
               cutname, q->restored, q->blocked);
      print_train_table(&r1, q, title);
      if (isfinite(slow))
        printf("slowdown x%.6g\n", slow);
      else
        printf("slowdown: infinite (the job's sites are disconnected)\n");
    }
  }
out:
  fs_wan_plan_free(p);
  fs_wan_plan_free(q);
  free(d);
  fs_wan_free(w);
  return status;
}

static int run_provision(int argc, char **argv) {
  opts o;
  int rc = parse_opts(&provision_cmd, argc, argv, &o);
  return rc >= 0 ? rc : provision(&o);
}

static int run_train(int argc, char **argv) {
  opts o;
  int rc = parse_opts(&train_cmd, argc, argv, &o);
  return rc >= 0 ? rc : train(&o);
}

static const fs__sub wan_subs[] = {
    {"provision", "WAN.json", "lightpath provisioning: routes, spectrum, blocking",
     run_provision},
    {"train", "WAN.json", "a job's cross-site all-reduce over the lightpaths, with fibre cuts",
     run_train},
    {NULL, NULL, NULL, NULL}};

static const fs__group wan_group = {
    "wan",
    "Optical networks between data centres (docs/model-wan.md): lightpath provisioning "
    "(RWA/RSA, first-fit and most-used, k-shortest paths, distance-adaptive modulation) and "
    "cross-site hierarchical all-reduce, with fibre cuts.",
    wan_subs};

int fs__cli_wan(int argc, char **argv) { return fs__group_run(&wan_group, argc, argv); }
