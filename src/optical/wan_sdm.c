/* The SDM model (docs/model-wan-sdm.md): core layouts and adjacency,
 * coupled-power crosstalk, band defaults and the ASE-limited reach per
 * band, the description a run uses, and the closed forms the dynamic
 * engine is checked against (Erlang B, Kaufman-Roberts, Student's t). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/wan_sdm.h"

const char *fs_wan_layout_name(fs_wan_layout l) {
  switch (l) {
    case FS_WAN_LAYOUT_SINGLE: return "single";
    case FS_WAN_LAYOUT_HEX7: return "hex7";
    case FS_WAN_LAYOUT_RING12: return "ring12";
    case FS_WAN_LAYOUT_HEX19: return "hex19";
  }
  return "?";
}

int fs_wan_layout_for_cores(int32_t cores, fs_wan_layout *out) {
  switch (cores) {
    case 1: *out = FS_WAN_LAYOUT_SINGLE; return 0;
    case 7: *out = FS_WAN_LAYOUT_HEX7; return 0;
    case 12: *out = FS_WAN_LAYOUT_RING12; return 0;
    case 19: *out = FS_WAN_LAYOUT_HEX19; return 0;
  }
  return FS_EINVAL;
}

/* Axial coordinates of the hexagonal cores: the centre, then each ring
 * walked around (ring r has 6r cores), so core numbers grow outwards. */
static int32_t hex_cells(int32_t rings, int32_t q[19], int32_t r[19]) {
  static const int32_t dq[6] = {1, 1, 0, -1, -1, 0}, dr[6] = {0, -1, -1, 0, 1, 1};
  int32_t n = 0;
  q[n] = 0;
  r[n++] = 0;
  for (int32_t ring = 1; ring <= rings; ring++) {
    int32_t cq = -ring, cr = ring; /* start ring steps along direction 4 */
    for (int32_t side = 0; side < 6; side++)
      for (int32_t s = 0; s < ring; s++) {
        q[n] = cq;
        r[n++] = cr;
        cq += dq[side];
        cr += dr[side];
      }
  }
  return n;
}

int32_t fs_wan_core_neighbours(fs_wan_layout l, int32_t core, int32_t *adj) {
  int32_t n = 0;
  if (l == FS_WAN_LAYOUT_RING12) {
    int32_t a = (core + 11) % 12, b = (core + 1) % 12;
    adj[n++] = a < b ? a : b;
    adj[n++] = a < b ? b : a;
    return n;
  }
  if (l != FS_WAN_LAYOUT_HEX7 && l != FS_WAN_LAYOUT_HEX19) return 0;
  int32_t q[19], r[19], cells = hex_cells(l == FS_WAN_LAYOUT_HEX7 ? 1 : 2, q, r);
  for (int32_t j = 0; j < cells; j++) {
    int32_t a = q[j] - q[core], b = r[j] - r[core];
    /* hexagonal distance 1: the cores one pitch apart */
    if (j != core && (abs(a) + abs(b) + abs(a + b)) == 2) adj[n++] = j;
  }
  return n;
}

double fs_wan_xt_h(double k, double bend_radius_m, double beta_per_m, double pitch_m) {
  return 2 * k * k * bend_radius_m / (beta_per_m * pitch_m);
}

double fs_wan_xt_h_pair(const fs_wan_sdm *s, int32_t a, int32_t b) {
  if (s->n_types <= 0) return s->h_per_m;
  double ba = s->type_beta_per_m[s->core_type[a]], bb = s->type_beta_per_m[s->core_type[b]];
  if (s->core_type[a] == s->core_type[b])
    return fs_wan_xt_h(s->coupling, s->bend_radius_m, ba, s->pitch_m);
  double x = (ba - bb) * s->corr_len_m;
  return 2 * s->coupling * s->coupling * s->corr_len_m / (1 + x * x);
}

double fs_wan_xt(int32_t n, double h_per_m, double len_m) {
  if (n <= 0) return 0;
  double e = exp(-(double)(n + 1) * 2 * h_per_m * len_m);
  return ((double)n - (double)n * e) / (1 + (double)n * e);
}

double fs_wan_xt_threshold_db(double bits) {
  /* docs/model-wan-sdm.md "Crosstalk thresholds" */
  if (bits == 1) return -14;
  if (bits == 2) return -18.5;
  if (bits == 3) return -21;
  if (bits == 4) return -25;
  return NAN;
}

int fs_wan_band_default(const char *name, double slot_ghz, fs_wan_band *out) {
  /* docs/model-wan-sdm.md "Bands": usable width, amplifier noise figure,
   * attenuation */
  static const struct {
    const char *name;
    double thz, nf, alpha;
  } def[] = {{"C", 4.8, 5, 0.20}, {"L", 4.8, 6, 0.21}, {"S", 6.0, 7, 0.23}};
  for (size_t i = 0; i < sizeof(def) / sizeof(def[0]); i++) {
    if (strcmp(name, def[i].name)) continue;
    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "%s", def[i].name);
    out->slots = (int32_t)floor(def[i].thz * 1000 / slot_ghz + 1e-9);
    out->nf_db = def[i].nf;
    out->alpha_db_km = def[i].alpha;
    return 0;
  }
  return FS_EINVAL;
}

double fs_wan_band_reach_km(double ref_km, const fs_wan_band *c_band, const fs_wan_band *b,
                            double span_km) {
  double d = (b->nf_db - c_band->nf_db) + (b->alpha_db_km - c_band->alpha_db_km) * span_km;
  return ref_km * pow(10, -d / 10);
}

int fs_wan_sdm_get(const fs_wan *w, int32_t cores, fs_wan_sdm *out, fs_err *err) {
  if (w->sdm) {
    *out = *w->sdm;
  } else {
    memset(out, 0, sizeof(*out));
    out->cores = 1;
    out->layout = FS_WAN_LAYOUT_SINGLE;
    out->span_km = 80;
    fs_wan_band_default("C", w->grid.ghz, &out->bands[0]);
    out->bands[0].slots = w->grid.units;
    for (int32_t m = 0; m < w->n_mods; m++) {
      out->bands[0].reach_km[m] = w->mods[m].reach_km;
      out->xt_threshold_db[m] = 0;
    }
    out->n_bands = 1;
    out->units = w->grid.units;
  }
  if (cores > 0 && out->n_types > 0 && cores != out->cores)
    return fs_err_set(err, FS_EINVAL,
                      "%d cores: the file's core types ($.sdm.core_types) are for %d", cores,
                      out->cores);
  if (cores > 0) {
    fs_wan_layout l;
    if (fs_wan_layout_for_cores(cores, &l))
      return fs_err_set(err, FS_EINVAL,
                        "%d cores: the crosstalk model has layouts for 1, 7, 12 and 19 cores",
                        cores);
    out->cores = cores;
    out->layout = l;
  }
  if (!w->sdm && out->cores > 1) {
    /* no "sdm" in the file: the parser's defaults (docs/model-wan-sdm.md) */
    out->coupling = 4e-4;
    out->bend_radius_m = 0.05;
    out->beta_per_m = 4e6;
    out->pitch_m = 45e-6;
    out->h_per_m = fs_wan_xt_h(out->coupling, out->bend_radius_m, out->beta_per_m, out->pitch_m);
    for (int32_t m = 0; m < w->n_mods; m++)
      out->xt_threshold_db[m] = fs_wan_xt_threshold_db(w->mods[m].bits);
  }
  for (int32_t m = 0; m < w->n_mods && out->cores > 1; m++)
    if (isnan(out->xt_threshold_db[m]))
      return fs_err_set(err, FS_EINVAL,
                        "format %s (%g bits per symbol) has no default crosstalk threshold; "
                        "give it in $.sdm.xt_threshold_db",
                        w->mods[m].name, w->mods[m].bits);
  return 0;
}

/* ---- closed forms ---- */

double fs_wan_erlang_b(double erlang, int32_t channels) {
  double b = 1;
  for (int32_t n = 1; n <= channels; n++) b = erlang * b / ((double)n + erlang * b);
  return b;
}

int fs_wan_kaufman_roberts(int32_t units, int32_t n, const double *erlang, const int32_t *b,
                           double *blocking) {
  if (units < 0 || n < 1) return FS_EINVAL;
  for (int32_t i = 0; i < n; i++)
    if (b[i] < 1 || !(erlang[i] >= 0)) return FS_EINVAL;
  double *q = fs__calloc((size_t)units + 1, sizeof(double));
  if (!q) return FS_ENOMEM;
  q[0] = 1;
  for (int32_t j = 1; j <= units; j++) {
    double s = 0;
    for (int32_t i = 0; i < n; i++)
      if (j >= b[i]) s += erlang[i] * b[i] * q[j - b[i]];
    q[j] = s / j;
    if (q[j] > 1e250) /* rescale: only the ratios matter */
      for (int32_t x = 0; x <= j; x++) q[x] *= 1e-250;
  }
  double total = 0;
  for (int32_t j = 0; j <= units; j++) total += q[j];
  for (int32_t i = 0; i < n; i++) {
    double s = 0;
    for (int32_t j = units - b[i] + 1; j <= units; j++)
      if (j >= 0) s += q[j];
    blocking[i] = s / total;
  }
  free(q);
  return 0;
}

double fs_wan_t975(int32_t dof) {
  /* two-sided 95 % quantiles of Student's t (any statistics table) */
  static const double t[30] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                               2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                               2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                               2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof < 1) return NAN;
  if (dof <= 30) return t[dof - 1];
  /* Cornish-Fisher expansion about the normal quantile (Abramowitz and
   * Stegun 26.7.5), within 1e-4 beyond 30 degrees of freedom */
  double z = 1.959963985, v = dof, z2 = z * z;
  return z + (z2 + 1) * z / (4 * v) + ((5 * z2 + 16) * z2 + 3) * z / (96 * v * v) +
         (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / (384 * v * v * v);
}
