/* The optical share of a TPU v4 style pod's cost and power
 * (docs/model-tpu.md, "Cost and power"): part counts from the pod's
 * structure, prices and watts from documented estimates. O(1). */
#include <math.h>
#include <string.h>

#include "fabricsim/tpu.h"

/* Estimates, not quotes; docs/model-tpu.md gives the basis of each. */
void fs_tpu_cost_defaults(fs_tpu_cost_params *c) {
  c->chip_usd = 10000;  /* chip, HBM, board, host and rack share */
  c->chip_watts = 240;  /* 192 W chip max (Cloud TPU v4) + host/fans/conversion */
  c->ocs_usd = 40000;   /* 136-port MEMS OCS, ~300 USD/port */
  c->ocs_watts = 108;   /* Palomar OCS (Poutievski et al., SIGCOMM 2022) */
  c->xcvr_usd = 700;    /* 400G single-mode module, fs_cost_defaults' DR row */
  c->xcvr_watts = 11;   /* same row */
  c->fiber_usd_per_m = 1.5; /* fs_cost_defaults */
  c->fiber_m = 30;          /* fs_cost_defaults' fabric_m: rack to OCS row */
}

int fs_tpu_cost_compute(const fs_tpu_params *p, const fs_tpu_cost_params *c, fs_tpu_cost *o,
                        fs_err *err) {
  const struct {
    const char *name;
    double v;
  } in[] = {{"chip_usd", c->chip_usd},   {"chip_watts", c->chip_watts},
            {"ocs_usd", c->ocs_usd},     {"ocs_watts", c->ocs_watts},
            {"xcvr_usd", c->xcvr_usd},   {"xcvr_watts", c->xcvr_watts},
            {"fiber_usd_per_m", c->fiber_usd_per_m}, {"fiber_m", c->fiber_m}};
  for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
    if (!(in[i].v >= 0) || !isfinite(in[i].v))
      return fs_err_set(err, FS_EINVAL, "tpu cost: %s must be >= 0 and finite, got %g",
                        in[i].name, in[i].v);
  if (p->cubes < 1)
    return fs_err_set(err, FS_EINVAL, "tpu cost: cubes must be >= 1, got %d", p->cubes);
  memset(o, 0, sizeof(*o));
  o->chips = (int64_t)p->cubes * FS_TPU_CUBE_CHIPS;
  o->ocs = FS_TPU_N_OCS;
  /* One transceiver per optical face link (6 faces x 16), each with its
   * fiber run to an OCS port; the OCS is all-optical (no transceivers). */
  o->transceivers = (int64_t)p->cubes * 6 * FS_TPU_FACE_LINKS;
  o->fibers = o->transceivers;
  o->chips_usd = (double)o->chips * c->chip_usd;
  o->ocs_usd = (double)o->ocs * c->ocs_usd;
  o->xcvr_usd = (double)o->transceivers * c->xcvr_usd;
  o->fiber_usd = (double)o->fibers * c->fiber_m * c->fiber_usd_per_m;
  o->total_usd = o->chips_usd + o->ocs_usd + o->xcvr_usd + o->fiber_usd;
  o->chips_w = (double)o->chips * c->chip_watts;
  o->ocs_w = (double)o->ocs * c->ocs_watts;
  o->xcvr_w = (double)o->transceivers * c->xcvr_watts;
  o->total_w = o->chips_w + o->ocs_w + o->xcvr_w;
  double opt_usd = o->ocs_usd + o->xcvr_usd + o->fiber_usd, opt_w = o->ocs_w + o->xcvr_w;
  o->share_usd = o->total_usd > 0 ? opt_usd / o->total_usd : 0;
  o->share_w = o->total_w > 0 ? opt_w / o->total_w : 0;
  o->ocs_share_usd = o->total_usd > 0 ? o->ocs_usd / o->total_usd : 0;
  o->ocs_share_w = o->total_w > 0 ? o->ocs_w / o->total_w : 0;
  o->incr_share_usd = o->total_usd > 0 ? (o->ocs_usd + o->fiber_usd) / o->total_usd : 0;
  o->incr_share_w = o->ocs_share_w; /* (fiber draws nothing) */
  /* opt / (n Ch + opt) = 0.05  <=>  Ch = 19 opt / n */
  o->chip_usd_at_5pct = o->chips > 0 ? 0.95 / 0.05 * opt_usd / (double)o->chips : 0;
  /* Share s: (R + T x) / (Ch + R + T x) = s  <=>  x = (s/(1-s) Ch - R) / T,
   * R the rest of the optics (OCS boxes, fiber). */
  double T = (double)o->transceivers;
  o->xcvr_usd_at_5pct = (0.05 / 0.95 * o->chips_usd - o->ocs_usd - o->fiber_usd) / T;
  o->xcvr_w_at_3pct = (0.03 / 0.97 * o->chips_w - o->ocs_w) / T;
  return 0;
}
