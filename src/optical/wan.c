/* The optical WAN model: defaults (modulation table, grids), the strict
 * JSON reader of WAN files, lookups, the job's ring of demands and seeded
 * random demands.
 * Parsing is O(sites^2 + fibres + demands) (name lookups are linear scans
 * over at most FS_WAN_MAX_SITES sites, bounded and deterministic). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "../base/json.h"
#include "fabricsim/wan.h"
#include "wan_risk_internal.h"
#include "wan_sdm_parse.h"

int32_t fs_wan_default_mods(fs_wan_mod *mods, int32_t max) {
  /* docs/model-wan.md: the reach table of distance-adaptive RSA studies
   * (Bocoi et al., OFC 2009, as used by Christodoulopoulos et al., JLT
   * 2011); estimates, not measurements. */
  static const fs_wan_mod def[] = {
      {"BPSK", 1, 4000}, {"QPSK", 2, 2000}, {"8QAM", 3, 1000}, {"16QAM", 4, 500}};
  int32_t n = 0;
  for (; n < 4 && n < max; n++) mods[n] = def[n];
  return 4;
}

fs_wan_grid fs_wan_default_grid(fs_wan_grid_kind kind) {
  fs_wan_grid g;
  memset(&g, 0, sizeof(g));
  g.kind = kind;
  if (kind == FS_WAN_FIXED) {
    g.units = 80; /* C band, ITU-T G.694.1 50 GHz grid: ~4 THz / 50 GHz */
    g.gbps = 400;
    g.ghz = 50;
  } else {
    g.units = 320; /* the same 4 THz in 12.5 GHz slots */
    g.ghz = 12.5;
    g.guard = 1;
  }
  return g;
}

int32_t fs_wan_mod_for_km(const fs_wan *w, double km) {
  for (int32_t m = w->n_mods - 1; m >= 0; m--)
    if (w->mods[m].reach_km >= km) return m;
  return -1;
}

double fs_wan_unit_gbps(const fs_wan *w, int32_t m) {
  if (m < 0 || m >= w->n_mods) return 0;
  if (w->grid.kind == FS_WAN_FIXED) return w->grid.gbps * w->mods[m].bits / w->mods[w->n_mods - 1].bits;
  return w->grid.ghz * w->mods[m].bits;
}

void fs_wan_free(fs_wan *w) {
  if (!w) return;
  for (int32_t i = 0; i < w->n_slices; i++) free(w->slices[i].fibres);
  fs__wan_risk_free(w->risk);
  free(w->sdm);
  FS__FREE_ALL(w->sites, w->fibres, w->slices, w->demands, w);
}

int32_t fs_wan_site_find(const fs_wan *w, const char *name) {
  for (int32_t i = 0; i < w->n_sites; i++)
    if (strcmp(w->sites[i].name, name) == 0) return i;
  return -1;
}

int32_t fs_wan_fibre_find(const fs_wan *w, int32_t a, int32_t b) {
  for (int32_t i = 0; i < w->n_fibres; i++) {
    const fs_wan_fibre *f = &w->fibres[i];
    if ((f->a == a && f->b == b) || (f->a == b && f->b == a)) return i;
  }
  return -1;
}

int fs_wan_fibre_parse(const fs_wan *w, const char *text, int32_t *fibre, fs_err *err) {
  char buf[2 * FS_WAN_NAME + 2], esc[160];
  if (strlen(text) < sizeof(buf)) {
    /* Names may contain '-': try every split point, first match wins. */
    for (const char *d = strchr(text, '-'); d; d = strchr(d + 1, '-')) {
      size_t la = (size_t)(d - text);
      memcpy(buf, text, la);
      buf[la] = '\0';
      int32_t a = fs_wan_site_find(w, buf), b = fs_wan_site_find(w, d + 1);
      if (a < 0 || b < 0) continue;
      int32_t f = fs_wan_fibre_find(w, a, b);
      if (f >= 0) {
        *fibre = f;
        return 0;
      }
    }
  }
  return fs_err_set(err, FS_EINVAL, "no fibre '%s' (expected SITE-SITE of a fibre in the file)",
                    fs__escape(esc, sizeof(esc), text));
}

int32_t fs_wan_job_ring(const fs_wan *w, int32_t *ring) {
  if (!w->job.present) return 0;
  if (w->job.n_ring > 0) {
    memcpy(ring, w->job.ring, (size_t)w->job.n_ring * sizeof(int32_t));
    return w->job.n_ring;
  }
  int32_t n = 0;
  for (int32_t i = 0; i < w->n_sites; i++)
    if (w->sites[i].gpus > 0) ring[n++] = i;
  return n;
}

int32_t fs_wan_job_demands(const fs_wan *w, fs_wan_demand *out, int32_t max) {
  int32_t ring[FS_WAN_MAX_SITES];
  int32_t n = fs_wan_job_ring(w, ring);
  if (n < 2) return 0;
  int32_t pairs = n == 2 ? 1 : n;
  for (int32_t i = 0; i < pairs && i < max; i++) {
    fs_wan_demand d = {ring[i], ring[(i + 1) % n], w->job.gbps, w->job.slice, 1};
    out[i] = d;
  }
  return pairs;
}

fs_wan_demand *fs_wan_demands_with_job(const fs_wan *w, int32_t *n) {
  int32_t nj = fs_wan_job_demands(w, NULL, 0), nf = w->n_demands;
  fs_wan_demand *d = calloc((size_t)(nf + nj) + 1, sizeof(*d));
  if (!d) return NULL;
  if (nf) memcpy(d, w->demands, (size_t)nf * sizeof(*d));
  fs_wan_job_demands(w, d + nf, nj);
  *n = nf + nj;
  return d;
}

void fs_wan_demands_random(const fs_wan *w, int32_t n, double gbps, uint64_t seed,
                           fs_wan_demand *out) {
  fs__rng rng;
  fs__rng_seed(&rng, seed);
  for (int32_t i = 0; i < n; i++) {
    /* b is drawn from the other n_sites - 1 sites, so src != dst */
    int32_t a = (int32_t)fs__rng_below(&rng, (uint64_t)w->n_sites);
    int32_t b = (int32_t)fs__rng_below(&rng, (uint64_t)w->n_sites - 1);
    if (b >= a) b++;
    fs_wan_demand x = {a, b, gbps, -1, 0};
    out[i] = x;
  }
}

/* ---- JSON ---- */

static int get_name(const fs__jctx *c, const cJSON *obj, const char *path, const char *key,
                    char *dst, size_t n) {
  const char *s;
  int rc = fs__json_str(c, obj, path, key, 1, NULL, &s);
  if (rc) return rc;
  if (!s[0] || strlen(s) >= n) {
    char p[256];
    fs__json_path_key(p, sizeof(p), path, key);
    return fs__json_fail(c, p, cJSON_GetObjectItemCaseSensitive(obj, key),
                         "must be a non-empty name of at most %zu characters", n - 1);
  }
  snprintf(dst, n, "%s", s);
  return 0;
}

/* A site named by obj[key], which must exist. */
static int get_site(const fs__jctx *c, const fs_wan *w, const cJSON *obj, const char *path,
                    const char *key, int32_t *out) {
  const char *s;
  int rc = fs__json_str(c, obj, path, key, 1, NULL, &s);
  if (rc) return rc;
  *out = fs_wan_site_find(w, s);
  if (*out < 0) {
    char p[256];
    fs__json_path_key(p, sizeof(p), path, key);
    return fs__json_fail(c, p, cJSON_GetObjectItemCaseSensitive(obj, key), "unknown site");
  }
  return 0;
}

static int get_slice(const fs__jctx *c, const fs_wan *w, const cJSON *obj, const char *path,
                     int32_t *out) {
  const char *s;
  *out = -1;
  int rc = fs__json_str(c, obj, path, "slice", 0, NULL, &s);
  if (rc || !s) return rc;
  for (int32_t i = 0; i < w->n_slices; i++)
    if (strcmp(w->slices[i].name, s) == 0) *out = i;
  if (*out < 0) {
    char p[256];
    fs__json_path_key(p, sizeof(p), path, "slice");
    return fs__json_fail(c, p, cJSON_GetObjectItemCaseSensitive(obj, "slice"), "unknown slice");
  }
  return 0;
}

/* An array at obj[key] (absent: NULL when optional). */
static int get_array(const fs__jctx *c, const cJSON *obj, const char *path, const char *key,
                     int required, size_t max, const cJSON **out) {
  char p[256];
  fs__json_path_key(p, sizeof(p), path, key);
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
  *out = NULL;
  if (!a) return required ? fs__json_fail(c, p, NULL, "missing (required)") : 0;
  if (!cJSON_IsArray(a)) return fs__json_fail(c, p, a, "must be an array");
  if ((size_t)cJSON_GetArraySize(a) > max)
    return fs__json_fail(c, p, NULL, "at most %zu entries, got %d", max, cJSON_GetArraySize(a));
  *out = a;
  return 0;
}

static int parse_sites(const fs__jctx *c, const cJSON *root, fs_wan *w) {
  static const char *const keys[] = {"name", "gpus", "servers", NULL};
  const cJSON *a;
  int rc = get_array(c, root, "$", "sites", 1, FS_WAN_MAX_SITES, &a);
  if (rc) return rc;
  int32_t n = cJSON_GetArraySize(a);
  if (n < 2) return fs__json_fail(c, "$.sites", NULL, "needs at least 2 sites, got %d", n);
  w->sites = fs__calloc((size_t)n, sizeof(*w->sites));
  if (!w->sites) return fs_err_set(c->err, FS_ENOMEM, "out of memory");
  int32_t i = 0;
  for (const cJSON *s = a->child; s; s = s->next, i++) {
    char p[64];
    fs__json_path_idx(p, sizeof(p), "$.sites", (size_t)i);
    int64_t g, sv;
    if ((rc = fs__json_expect_object(c, s, p, keys)) ||
        (rc = get_name(c, s, p, "name", w->sites[i].name, FS_WAN_NAME)) ||
        (rc = fs__json_int(c, s, p, "gpus", 0, 0, 0, 1 << 20, &g)) ||
        (rc = fs__json_int(c, s, p, "servers", 0, 0, 0, 1 << 20, &sv)))
      return rc;
    if (fs_wan_site_find(w, w->sites[i].name) >= 0) {
      char q[96];
      fs__json_path_key(q, sizeof(q), p, "name");
      return fs__json_fail(c, q, cJSON_GetObjectItemCaseSensitive(s, "name"),
                           "duplicate site name");
    }
    w->sites[i].gpus = (int32_t)g;
    w->sites[i].servers = (int32_t)sv;
    w->n_sites = i + 1;
  }
  return 0;
}

static int parse_fibres(const fs__jctx *c, const cJSON *root, fs_wan *w) {
  static const char *const keys[] = {"a", "b", "km", NULL};
  const cJSON *a;
  int rc = get_array(c, root, "$", "fibres", 1, 1 << 16, &a);
  if (rc) return rc;
  int32_t n = cJSON_GetArraySize(a);
  if (n < 1) return fs__json_fail(c, "$.fibres", NULL, "needs at least one fibre");
  w->fibres = fs__calloc((size_t)n, sizeof(*w->fibres));
  if (!w->fibres) return fs_err_set(c->err, FS_ENOMEM, "out of memory");
  int32_t i = 0;
  for (const cJSON *f = a->child; f; f = f->next, i++) {
    char p[64], q[96];
    fs__json_path_idx(p, sizeof(p), "$.fibres", (size_t)i);
    fs_wan_fibre *fb = &w->fibres[i];
    if ((rc = fs__json_expect_object(c, f, p, keys)) || (rc = get_site(c, w, f, p, "a", &fb->a)) ||
        (rc = get_site(c, w, f, p, "b", &fb->b)) ||
        (rc = fs__json_num(c, f, p, "km", 1, 0, 1e-3, 1e6, &fb->km)))
      return rc;
    fs__json_path_key(q, sizeof(q), p, "b");
    if (fb->a == fb->b)
      return fs__json_fail(c, q, cJSON_GetObjectItemCaseSensitive(f, "b"),
                           "a fibre must join two different sites");
    w->n_fibres = i; /* search the earlier ones only */
    if (fs_wan_fibre_find(w, fb->a, fb->b) >= 0)
      return fs__json_fail(c, q, cJSON_GetObjectItemCaseSensitive(f, "b"),
                           "duplicate fibre between these sites");
    w->n_fibres = i + 1;
  }
  return 0;
}

static int parse_grid(const fs__jctx *c, const cJSON *root, fs_wan *w) {
  const cJSON *g = cJSON_GetObjectItemCaseSensitive(root, "grid");
  w->grid = fs_wan_default_grid(FS_WAN_FIXED);
  if (!g) return 0;
  const char *type;
  int rc = fs__json_str(c, g, "$.grid", "type", 1, NULL, &type);
  if (rc) return rc;
  int64_t u, guard;
  if (strcmp(type, "fixed") == 0) {
    static const char *const keys[] = {"type", "wavelengths", "gbps", "ghz", NULL};
    if ((rc = fs__json_expect_object(c, g, "$.grid", keys)) ||
        (rc = fs__json_int(c, g, "$.grid", "wavelengths", 0, w->grid.units, 1, FS_WAN_MAX_UNITS,
                           &u)) ||
        (rc = fs__json_num(c, g, "$.grid", "gbps", 0, w->grid.gbps, 1e-3, 1e6, &w->grid.gbps)) ||
        (rc = fs__json_num(c, g, "$.grid", "ghz", 0, w->grid.ghz, 1e-3, 1e6, &w->grid.ghz)))
      return rc;
    w->grid.units = (int32_t)u;
    return 0;
  }
  if (strcmp(type, "flex") == 0) {
    static const char *const keys[] = {"type", "slots", "slot_ghz", "guard_slots", NULL};
    w->grid = fs_wan_default_grid(FS_WAN_FLEX);
    if ((rc = fs__json_expect_object(c, g, "$.grid", keys)) ||
        (rc = fs__json_int(c, g, "$.grid", "slots", 0, w->grid.units, 1, FS_WAN_MAX_UNITS, &u)) ||
        (rc = fs__json_num(c, g, "$.grid", "slot_ghz", 0, w->grid.ghz, 1e-3, 1e6,
                           &w->grid.ghz)) ||
        (rc = fs__json_int(c, g, "$.grid", "guard_slots", 0, w->grid.guard, 0, 64, &guard)))
      return rc;
    w->grid.units = (int32_t)u;
    w->grid.guard = (int32_t)guard;
    return 0;
  }
  return fs__json_fail(c, "$.grid.type", cJSON_GetObjectItemCaseSensitive(g, "type"),
                       "must be \"fixed\" or \"flex\"");
}

static int cmp_mod(const void *x, const void *y) {
  const fs_wan_mod *a = x, *b = y;
  return (a->bits > b->bits) - (a->bits < b->bits);
}

static int parse_mods(const fs__jctx *c, const cJSON *root, fs_wan *w) {
  static const char *const keys[] = {"name", "bits", "reach_km", NULL};
  const cJSON *a;
  int rc = get_array(c, root, "$", "modulations", 0, FS_WAN_MAX_MODS, &a);
  if (rc) return rc;
  if (!a) {
    w->n_mods = fs_wan_default_mods(w->mods, FS_WAN_MAX_MODS);
    return 0;
  }
  if (cJSON_GetArraySize(a) < 1)
    return fs__json_fail(c, "$.modulations", NULL, "needs at least one format");
  int32_t i = 0;
  for (const cJSON *m = a->child; m; m = m->next, i++) {
    char p[64];
    fs__json_path_idx(p, sizeof(p), "$.modulations", (size_t)i);
    fs_wan_mod *md = &w->mods[i];
    if ((rc = fs__json_expect_object(c, m, p, keys)) ||
        (rc = get_name(c, m, p, "name", md->name, sizeof(md->name))) ||
        (rc = fs__json_num(c, m, p, "bits", 1, 0, 1e-3, 64, &md->bits)) ||
        (rc = fs__json_num(c, m, p, "reach_km", 1, 0, 1e-3, 1e6, &md->reach_km)))
      return rc;
    for (int32_t j = 0; j < i; j++) {
      char q[96];
      if (strcmp(w->mods[j].name, md->name) == 0 || w->mods[j].bits == md->bits) {
        fs__json_path_key(q, sizeof(q), p, strcmp(w->mods[j].name, md->name) == 0 ? "name" : "bits");
        return fs__json_fail(c, q, cJSON_GetObjectItemCaseSensitive(m, q + strlen(p) + 1),
                             "duplicate format (names and bits must be distinct)");
      }
    }
  }
  w->n_mods = i;
  qsort(w->mods, (size_t)w->n_mods, sizeof(w->mods[0]), cmp_mod);
  return 0;
}

static int parse_slices(const fs__jctx *c, const cJSON *root, fs_wan *w) {
  static const char *const keys[] = {"name", "first", "count", "fibres", NULL};
  const cJSON *a;
  int rc = get_array(c, root, "$", "slices", 0, 256, &a);
  if (rc || !a) return rc;
  int32_t n = cJSON_GetArraySize(a);
  w->slices = fs__calloc((size_t)n + 1, sizeof(*w->slices));
  if (!w->slices) return fs_err_set(c->err, FS_ENOMEM, "out of memory");
  int32_t i = 0;
  for (const cJSON *s = a->child; s; s = s->next, i++) {
    char p[64], q[96];
    fs__json_path_idx(p, sizeof(p), "$.slices", (size_t)i);
    fs_wan_slice *sl = &w->slices[i];
    int64_t first, count;
    w->n_slices = i + 1; /* owns sl->fibres from here on */
    if ((rc = fs__json_expect_object(c, s, p, keys)) ||
        (rc = get_name(c, s, p, "name", sl->name, FS_WAN_NAME)) ||
        (rc = fs__json_int(c, s, p, "first", 1, 0, 0, w->grid.units - 1, &first)) ||
        (rc = fs__json_int(c, s, p, "count", 1, 0, 1, w->grid.units - first, &count)))
      return rc;
    sl->first = (int32_t)first;
    sl->count = (int32_t)count;
    for (int32_t j = 0; j < i; j++)
      if (strcmp(w->slices[j].name, sl->name) == 0) {
        fs__json_path_key(q, sizeof(q), p, "name");
        return fs__json_fail(c, q, cJSON_GetObjectItemCaseSensitive(s, "name"),
                             "duplicate slice name");
      }
    const cJSON *fa;
    if ((rc = get_array(c, s, p, "fibres", 0, (size_t)w->n_fibres, &fa))) return rc;
    sl->n_fibres = fa ? cJSON_GetArraySize(fa) : w->n_fibres;
    sl->fibres = fs__calloc((size_t)sl->n_fibres + 1, sizeof(int32_t));
    if (!sl->fibres) return fs_err_set(c->err, FS_ENOMEM, "out of memory");
    if (!fa) {
      for (int32_t f = 0; f < w->n_fibres; f++) sl->fibres[f] = f;
    } else {
      int32_t j = 0;
      fs__json_path_key(q, sizeof(q), p, "fibres");
      for (const cJSON *f = fa->child; f; f = f->next, j++) {
        char r[128];
        fs__json_path_idx(r, sizeof(r), q, (size_t)j);
        if (!cJSON_IsString(f)) return fs__json_fail(c, r, f, "must be a string \"SITE-SITE\"");
        fs_err e2 = {0, ""};
        if (fs_wan_fibre_parse(w, f->valuestring, &sl->fibres[j], &e2))
          return fs__json_fail(c, r, f, "no such fibre");
        for (int32_t x = 0; x < j; x++)
          if (sl->fibres[x] == sl->fibres[j]) return fs__json_fail(c, r, f, "fibre listed twice");
      }
    }
    /* Two slices may not claim the same unit of the same fibre. */
    for (int32_t j = 0; j < i; j++) {
      const fs_wan_slice *o = &w->slices[j];
      if (o->first >= sl->first + sl->count || sl->first >= o->first + o->count) continue;
      for (int32_t x = 0; x < sl->n_fibres; x++)
        for (int32_t y = 0; y < o->n_fibres; y++)
          if (sl->fibres[x] == o->fibres[y])
            return fs__json_fail(c, p, NULL, "overlaps slice \"%s\" on fibre %s-%s", o->name,
                                 w->sites[w->fibres[sl->fibres[x]].a].name,
                                 w->sites[w->fibres[sl->fibres[x]].b].name);
    }
  }
  return 0;
}

static int parse_demands(const fs__jctx *c, const cJSON *root, fs_wan *w) {
  static const char *const keys[] = {"src", "dst", "gbps", "slice", NULL};
  const cJSON *a;
  int rc = get_array(c, root, "$", "demands", 0, 1 << 20, &a);
  if (rc || !a) return rc;
  int32_t n = cJSON_GetArraySize(a);
  w->demands = fs__calloc((size_t)n + 1, sizeof(*w->demands));
  if (!w->demands) return fs_err_set(c->err, FS_ENOMEM, "out of memory");
  int32_t i = 0;
  for (const cJSON *d = a->child; d; d = d->next, i++) {
    char p[64];
    fs__json_path_idx(p, sizeof(p), "$.demands", (size_t)i);
    fs_wan_demand *dm = &w->demands[i];
    if ((rc = fs__json_expect_object(c, d, p, keys)) || (rc = get_site(c, w, d, p, "src", &dm->src)) ||
        (rc = get_site(c, w, d, p, "dst", &dm->dst)) ||
        (rc = fs__json_num(c, d, p, "gbps", 1, 0, 1e-3, 1e7, &dm->gbps)) ||
        (rc = get_slice(c, w, d, p, &dm->slice)))
      return rc;
    if (dm->src == dm->dst) {
      char q[96];
      fs__json_path_key(q, sizeof(q), p, "dst");
      return fs__json_fail(c, q, cJSON_GetObjectItemCaseSensitive(d, "dst"),
                           "must differ from src");
    }
    w->n_demands = i + 1;
  }
  return 0;
}

static int parse_job(const fs__jctx *c, const cJSON *root, fs_wan *w) {
  static const char *const keys[] = {"gbps",     "bytes",           "gpus_per_site",
                                     "gpu_gbps", "site_latency_ns", "slice", NULL};
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, "job");
  fs_wan_job *jb = &w->job;
  jb->slice = -1;
  if (!j) return 0;
  int64_t gps;
  int rc;
  if ((rc = fs__json_expect_object(c, j, "$.job", keys)) ||
      (rc = fs__json_num(c, j, "$.job", "gbps", 1, 0, 1e-3, 1e7, &jb->gbps)) ||
      (rc = fs__json_num(c, j, "$.job", "bytes", 0, 1 << 30, 1, 1e15, &jb->bytes)) ||
      (rc = fs__json_int(c, j, "$.job", "gpus_per_site", 0, 0, 0, 1 << 16, &gps)) ||
      (rc = fs__json_num(c, j, "$.job", "gpu_gbps", 0, 400, 1e-3, 1e7, &jb->gpu_gbps)) ||
      (rc = fs__json_int(c, j, "$.job", "site_latency_ns", 0, 1000, 0, 1000000000LL,
                         &jb->site_latency_ns)) ||
      (rc = get_slice(c, w, j, "$.job", &jb->slice)))
    return rc;
  /* Ranks: gpus_per_site overrides the sites' gpus (then every site
   * trains); otherwise the sites with gpus, which must agree. */
  if (gps > 0) {
    for (int32_t s = 0; s < w->n_sites; s++) w->sites[s].gpus = (int32_t)gps;
  } else {
    for (int32_t s = 0; s < w->n_sites; s++) {
      if (!w->sites[s].gpus) continue;
      if (!gps) gps = w->sites[s].gpus;
      if (w->sites[s].gpus != gps) {
        char p[64];
        snprintf(p, sizeof(p), "$.sites[%d].gpus", s);
        return fs__json_fail(c, p, NULL,
                             "every site of the job needs the same GPU count (%lld), got %d",
                             (long long)gps, w->sites[s].gpus);
      }
    }
    if (!gps)
      return fs__json_fail(c, "$.job", NULL,
                           "no site has gpus; give sites \"gpus\" or the job \"gpus_per_site\"");
  }
  jb->gpus_per_site = (int32_t)gps;
  jb->present = 1;
  return 0;
}

int fs_wan_from_json(const char *text, const char *file, fs_wan **out, fs_err *err) {
  static const char *const keys[] = {"sites",  "fibres",  "grid", "modulations",
                                     "slices", "demands", "job",
                                     "srlgs", "reliability", "protection", "checkpoint_minutes", /* wan_risk.c */
                                     "sdm",    "bands",   "traffic", /* wan_sdm_parse.c */
                                     NULL};
  fs__jctx c = {file ? file : "wan", err};
  cJSON *root = NULL;
  int rc = fs__json_parse(&c, text, strlen(text), &root);
  if (rc) return rc;
  fs_wan *w = fs__calloc(1, sizeof(*w));
  if (!w) {
    cJSON_Delete(root);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  if ((rc = fs__json_expect_object(&c, root, "$", keys)) || (rc = parse_sites(&c, root, w)) ||
      (rc = parse_fibres(&c, root, w)) || (rc = parse_grid(&c, root, w)) ||
      (rc = parse_mods(&c, root, w)) || (rc = parse_slices(&c, root, w)) ||
      (rc = parse_demands(&c, root, w)) || (rc = parse_job(&c, root, w)) ||
      (rc = fs__wan_parse_risk(&c, root, w)) ||
      (rc = fs__wan_parse_sdm(&c, root, w))) {
    cJSON_Delete(root);
    fs_wan_free(w);
    return rc;
  }
  cJSON_Delete(root);
  *out = w;
  return 0;
}

int fs_wan_from_file(const char *path, fs_wan **out, fs_err *err) {
  char *text = NULL;
  size_t len = 0;
  int rc = fs__read_file(path, &text, &len, err);
  if (rc) return rc;
  rc = fs_wan_from_json(text, path, out, err);
  free(text);
  return rc;
}
