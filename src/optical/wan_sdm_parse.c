/* The WAN file's SDM keys (docs/model-wan-sdm.md "File keys"): "sdm" (cores,
 * layout, the crosstalk parameters, thresholds per format), "bands" (names
 * or objects) and "traffic" (the dynamic load). Strict like the rest of the
 * file: unknown keys and out-of-range values name the JSON path and value. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/wan_sdm.h"
#include "wan_sdm_parse.h"

static int parse_cores(const fs__jctx *c, const cJSON *o, fs_wan_sdm *s) {
  int64_t cores;
  const char *layout;
  int rc;
  if ((rc = fs__json_int(c, o, "$.sdm", "cores", 0, 1, 1, FS_WAN_MAX_CORES, &cores)) ||
      (rc = fs__json_str(c, o, "$.sdm", "layout", 0, NULL, &layout)))
    return rc;
  if (fs_wan_layout_for_cores((int32_t)cores, &s->layout))
    return fs__json_fail(c, "$.sdm.cores", cJSON_GetObjectItemCaseSensitive(o, "cores"),
                         "the crosstalk model has layouts for 1 (single), 7 (hex7), 12 "
                         "(ring12) and 19 (hex19) cores");
  s->cores = (int32_t)cores;
  if (layout && strcmp(layout, fs_wan_layout_name(s->layout)))
    return fs__json_fail(c, "$.sdm.layout", cJSON_GetObjectItemCaseSensitive(o, "layout"),
                         "%d cores are laid out as \"%s\"", s->cores,
                         fs_wan_layout_name(s->layout));
  return 0;
}

static int parse_thresholds(const fs__jctx *c, const cJSON *o, const fs_wan *w, fs_wan_sdm *s) {
  for (int32_t m = 0; m < w->n_mods; m++) s->xt_threshold_db[m] = fs_wan_xt_threshold_db(w->mods[m].bits);
  const cJSON *t = o ? cJSON_GetObjectItemCaseSensitive(o, "xt_threshold_db") : NULL;
  if (t && !cJSON_IsObject(t))
    return fs__json_fail(c, "$.sdm.xt_threshold_db", t, "must be an object {FORMAT: dB}");
  for (const cJSON *e = t ? t->child : NULL; e; e = e->next) {
    char p[128];
    fs__json_path_key(p, sizeof(p), "$.sdm.xt_threshold_db", e->string);
    int32_t m = 0;
    while (m < w->n_mods && strcmp(w->mods[m].name, e->string)) m++;
    if (m == w->n_mods) return fs__json_fail(c, p, e, "no such modulation format");
    if (!cJSON_IsNumber(e) || !(e->valuedouble <= 0) || e->valuedouble < -100)
      return fs__json_fail(c, p, e, "must be a number of dB in [-100, 0]");
    s->xt_threshold_db[m] = e->valuedouble;
  }
  for (int32_t m = 0; m < w->n_mods && s->cores > 1; m++)
    if (isnan(s->xt_threshold_db[m]))
      return fs__json_fail(c, "$.sdm.xt_threshold_db", t,
                           "format \"%s\" (%g bits per symbol) has no default crosstalk "
                           "threshold: give it here",
                           w->mods[m].name, w->mods[m].bits);
  return 0;
}

/* Heterogeneous cores: "core_types" (one type id per core, 0-based),
 * "type_propagation_constants" (1/m, one per type), "correlation_length_m"
 * (default 0.05: Koshiba et al. 2011's example). */
static int parse_types(const fs__jctx *c, const cJSON *o, fs_wan_sdm *s) {
  const cJSON *ct = o ? cJSON_GetObjectItemCaseSensitive(o, "core_types") : NULL;
  const cJSON *tb = o ? cJSON_GetObjectItemCaseSensitive(o, "type_propagation_constants") : NULL;
  int rc;
  if ((rc = fs__json_num(c, o, "$.sdm", "correlation_length_m", 0, 0.05, 1e-6, 1e3,
                         &s->corr_len_m)))
    return rc;
  s->n_types = 0;
  if (!ct && !tb) return 0;
  if (!ct || !tb)
    return fs__json_fail(c, ct ? "$.sdm.type_propagation_constants" : "$.sdm.core_types",
                         NULL, "heterogeneous cores need both core_types and "
                         "type_propagation_constants");
  if (!cJSON_IsArray(tb) || cJSON_GetArraySize(tb) < 1 ||
      cJSON_GetArraySize(tb) > FS_WAN_MAX_CORES)
    return fs__json_fail(c, "$.sdm.type_propagation_constants", tb,
                         "must be an array of 1 to %d propagation constants (1/m)",
                         FS_WAN_MAX_CORES);
  int32_t nt = 0;
  for (const cJSON *e = tb->child; e; e = e->next, nt++) {
    char p[96];
    snprintf(p, sizeof(p), "$.sdm.type_propagation_constants[%d]", nt);
    if (!cJSON_IsNumber(e) || !(e->valuedouble >= 1) || !(e->valuedouble <= 1e9))
      return fs__json_fail(c, p, e, "must be a propagation constant in [1, 1e9] /m");
    s->type_beta_per_m[nt] = e->valuedouble;
  }
  if (!cJSON_IsArray(ct) || cJSON_GetArraySize(ct) != s->cores)
    return fs__json_fail(c, "$.sdm.core_types", ct, "must be an array of %d type ids, one per core",
                         s->cores);
  int32_t i = 0;
  for (const cJSON *e = ct->child; e; e = e->next, i++) {
    char p[64];
    snprintf(p, sizeof(p), "$.sdm.core_types[%d]", i);
    if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < 0 ||
        e->valuedouble >= nt)
      return fs__json_fail(c, p, e, "must be a type id in [0, %d]", nt - 1);
    s->core_type[i] = (int32_t)e->valuedouble;
  }
  s->n_types = nt;
  return 0;
}

static int parse_sdm(const fs__jctx *c, const cJSON *root, const fs_wan *w, fs_wan_sdm *s) {
  static const char *const keys[] = {"cores",         "layout",           "coupling_coefficient",
                                     "bend_radius_mm", "propagation_constant", "core_pitch_um",
                                     "span_km",       "xt_threshold_db",  "core_types",
                                     "type_propagation_constants", "correlation_length_m",
                                     NULL};
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "sdm");
  double r_mm, pitch_um;
  int rc;
  s->cores = 1;
  s->layout = FS_WAN_LAYOUT_SINGLE;
  if (o && ((rc = fs__json_expect_object(c, o, "$.sdm", keys)) || (rc = parse_cores(c, o, s))))
    return rc;
  /* Defaults: the parameter set of the XT-aware RSCA studies cited in
   * docs/model-wan-sdm.md (k 4e-4 /m, R 50 mm, beta 4e6 /m, pitch 45 um). */
  if ((rc = fs__json_num(c, o, "$.sdm", "coupling_coefficient", 0, 4e-4, 1e-12, 1,
                         &s->coupling)) ||
      (rc = fs__json_num(c, o, "$.sdm", "bend_radius_mm", 0, 50, 1e-3, 1e4, &r_mm)) ||
      (rc = fs__json_num(c, o, "$.sdm", "propagation_constant", 0, 4e6, 1, 1e9,
                         &s->beta_per_m)) ||
      (rc = fs__json_num(c, o, "$.sdm", "core_pitch_um", 0, 45, 1e-3, 1e4,
                         &pitch_um)) ||
      (rc = fs__json_num(c, o, "$.sdm", "span_km", 0, 80, 1, 1e4, &s->span_km)))
    return rc;
  s->bend_radius_m = r_mm * 1e-3;
  s->pitch_m = pitch_um * 1e-6;
  s->h_per_m = fs_wan_xt_h(s->coupling, s->bend_radius_m, s->beta_per_m, s->pitch_m);
  if ((rc = parse_types(c, o, s))) return rc;
  return parse_thresholds(c, o, w, s);
}

static int parse_band(const fs__jctx *c, const cJSON *e, const char *p, const fs_wan *w,
                      fs_wan_band *b) {
  static const char *const keys[] = {"name", "slots", "noise_figure_db", "attenuation_db_km",
                                     NULL};
  const char *name = cJSON_IsString(e) ? e->valuestring : NULL;
  int rc;
  char q[96];
  if (!name) {
    if ((rc = fs__json_expect_object(c, e, p, keys)) ||
        (rc = fs__json_str(c, e, p, "name", 1, NULL, &name)))
      return rc;
  }
  if (fs_wan_band_default(name, w->grid.ghz, b)) {
    fs__json_path_key(q, sizeof(q), p, "name");
    return fs__json_fail(c, cJSON_IsString(e) ? p : q,
                         cJSON_IsString(e) ? e : cJSON_GetObjectItemCaseSensitive(e, "name"),
                         "must be \"C\", \"L\" or \"S\"");
  }
  if (cJSON_IsString(e)) return 0;
  int64_t slots;
  if ((rc = fs__json_int(c, e, p, "slots", 0, b->slots, 1, FS_WAN_MAX_UNITS, &slots)) ||
      (rc = fs__json_num(c, e, p, "noise_figure_db", 0, b->nf_db, 0, 30, &b->nf_db)) ||
      (rc = fs__json_num(c, e, p, "attenuation_db_km", 0, b->alpha_db_km, 0.01, 10,
                         &b->alpha_db_km)))
    return rc;
  b->slots = (int32_t)slots;
  return 0;
}

static int parse_bands(const fs__jctx *c, const cJSON *root, const fs_wan *w, fs_wan_sdm *s) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "bands");
  fs_wan_band cref;
  fs_wan_band_default("C", w->grid.ghz, &cref);
  if (!a) {
    /* one C band: the file's grid */
    s->bands[0] = cref;
    s->bands[0].slots = w->grid.units;
    s->n_bands = 1;
  } else {
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1 ||
        cJSON_GetArraySize(a) > FS_WAN_MAX_BANDS)
      return fs__json_fail(c, "$.bands", a, "must be an array of 1 to 3 bands (\"C\", \"L\", \"S\")");
    int32_t i = 0;
    for (const cJSON *e = a->child; e; e = e->next, i++) {
      char p[64];
      fs__json_path_idx(p, sizeof(p), "$.bands", (size_t)i);
      int rc = parse_band(c, e, p, w, &s->bands[i]);
      if (rc) return rc;
      for (int32_t j = 0; j < i; j++)
        if (!strcmp(s->bands[j].name, s->bands[i].name))
          return fs__json_fail(c, p, e, "band listed twice");
    }
    s->n_bands = i;
  }
  s->units = 0;
  for (int32_t i = 0; i < s->n_bands; i++) {
    fs_wan_band *b = &s->bands[i];
    b->first = s->units;
    s->units += b->slots;
    /* the modulation table's reaches are the default C band's */
    for (int32_t m = 0; m < w->n_mods; m++)
      b->reach_km[m] = fs_wan_band_reach_km(w->mods[m].reach_km, &cref, b, s->span_km);
  }
  if (s->units > FS_WAN_MAX_UNITS)
    return fs__json_fail(c, "$.bands", NULL, "%d units per core in all, at most %d", s->units,
                         FS_WAN_MAX_UNITS);
  return 0;
}

static int parse_traffic(const fs__jctx *c, const cJSON *root, const fs_wan *w, fs_wan_sdm *s) {
  static const char *const keys[] = {"load_erlang", "holding_s", "rates_gbps", "requests",
                                     "seed",        "seeds",     "k",          "policy",
                                     NULL};
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "traffic");
  fs_wan_traffic *t = &s->traffic;
  int64_t req, seed, seeds, k;
  int rc;
  (void)w;
  t->present = o != NULL;
  if (o && (rc = fs__json_expect_object(c, o, "$.traffic", keys))) return rc;
  if ((rc = fs__json_num(c, o, "$.traffic", "load_erlang", 0, NAN, 1e-6, 1e7, &t->load_erlang)) ||
      (rc = fs__json_num(c, o, "$.traffic", "holding_s", 0, 1, 1e-9, 1e9, &t->holding_s)) ||
      (rc = fs__json_int(c, o, "$.traffic", "requests", 0, 100000, 10, 100000000, &req)) ||
      (rc = fs__json_int(c, o, "$.traffic", "seed", 0, 1, 0, FS_JSON_INT_MAX, &seed)) ||
      (rc = fs__json_int(c, o, "$.traffic", "seeds", 0, 5, 1, 1000, &seeds)) ||
      (rc = fs__json_int(c, o, "$.traffic", "k", 0, 3, 1, FS_WAN_MAX_K, &k)))
    return rc;
  /* the assignment policy, so a sweep can take it as an axis */
  const cJSON *pol = o ? cJSON_GetObjectItemCaseSensitive(o, "policy") : NULL;
  fs_wan_policy pv = FS_WAN_POLICY_FIRST_FIT;
  if (pol && (!cJSON_IsString(pol) || fs_wan_policy_parse(pol->valuestring, &pv)))
    return fs__json_fail(c, "$.traffic.policy", pol,
                         "must be \"first-fit\", \"xt-aware\" or \"xt-avoid\"");
  t->policy = (int32_t)pv;
  t->requests = req;
  t->seed = (uint64_t)seed;
  t->seeds = (int32_t)seeds;
  t->k = (int32_t)k;
  t->n_rates = 1;
  t->rates_gbps[0] = 100;
  const cJSON *r = o ? cJSON_GetObjectItemCaseSensitive(o, "rates_gbps") : NULL;
  if (!r) return 0;
  if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) < 1 || cJSON_GetArraySize(r) > FS_WAN_MAX_RATES)
    return fs__json_fail(c, "$.traffic.rates_gbps", r, "must be an array of 1 to %d rates",
                         FS_WAN_MAX_RATES);
  int32_t i = 0;
  for (const cJSON *e = r->child; e; e = e->next, i++) {
    char p[64];
    fs__json_path_idx(p, sizeof(p), "$.traffic.rates_gbps", (size_t)i);
    if (!cJSON_IsNumber(e) || !(e->valuedouble >= 1e-3) || e->valuedouble > 1e7)
      return fs__json_fail(c, p, e, "must be a rate in Gb/s in [0.001, 1e7]");
    t->rates_gbps[i] = e->valuedouble;
  }
  t->n_rates = i;
  return 0;
}

int fs__wan_parse_sdm(const fs__jctx *c, const cJSON *root, fs_wan *w) {
  if (!cJSON_GetObjectItemCaseSensitive(root, "sdm") &&
      !cJSON_GetObjectItemCaseSensitive(root, "bands") &&
      !cJSON_GetObjectItemCaseSensitive(root, "traffic"))
    return 0;
  fs_wan_sdm *s = fs__calloc(1, sizeof(*s));
  if (!s) return fs_err_set(c->err, FS_ENOMEM, "out of memory");
  w->sdm = s; /* freed by fs_wan_free, on failure too */
  int rc;
  if ((rc = parse_sdm(c, root, w, s)) || (rc = parse_bands(c, root, w, s)) ||
      (rc = parse_traffic(c, root, w, s)))
    return rc;
  return 0;
}
