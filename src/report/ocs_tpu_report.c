/* The outputs of `fabricsim ocs tpu`: a TPU v4 style slice's placement
 * with and without OCS, its circuits and reconfiguration, its graph's
 * diameter and bisection against the torus closed forms, an optional
 * collective and job mix, and the optical share of cost and power
 * (docs/model-tpu.md), as a table or JSON. The slice's cubes are the only
 * list: at most the pod's 64. */
#include <stdio.h>

#include "../base/base.h"
#include "fabricsim/report.h"

static void print_cubes(FILE *f, const int32_t *c, int32_t n) {
  for (int32_t i = 0; i < n; i++) fprintf(f, "%s%d", i ? "," : "", c[i]);
}

static void jnum(FILE *f, const char *key, double v, int comma) {
  char b[32];
  fs__fmt_num(b, v);
  fprintf(f, "\"%s\": %s%s", key, b, comma ? ", " : "");
}

int fs_report_ocs_tpu_table(FILE *f, const fs_report_ocs_tpu *r) {
  const fs_tpu_params *p = &r->p;
  const int32_t *shape = r->shape;
  int twisted = r->twisted;
  int32_t canon[3];
  fs_tpu_shape_canon(shape, canon);
  fprintf(f, "# fabricsim ocs tpu: pod of %d cubes (%d chips), %d OCS x %d ports, ICI %g Gb/s\n",
          p->cubes, p->cubes * FS_TPU_CUBE_CHIPS, FS_TPU_N_OCS, p->ocs_ports, p->ici_gbps);
  fprintf(f, "%-22s %dx%dx%d%s, %d cubes (built as %dx%dx%d)\n", "slice", shape[0], shape[1],
          shape[2], twisted ? " twisted torus" : " torus", r->need, canon[0], canon[1], canon[2]);
  fprintf(f, "%-22s %d of %d\n", "free cubes", r->free_cubes, p->cubes);
  fprintf(f, "%-22s ", "placement with OCS");
  if (r->placed_ocs) {
    fprintf(f, "fits: cubes ");
    print_cubes(f, r->slice.cubes, r->slice.n_cubes);
    fprintf(f, "\n");
  } else {
    fprintf(f, "does not fit (%d free cubes, needs %d)\n", r->free_cubes, r->need);
  }
  fprintf(f, "%-22s ", "placement static");
  if (r->placed_static) {
    fprintf(f, "fits: contiguous block of the %dx%dx%d cube torus: ", r->grid[0], r->grid[1],
            r->grid[2]);
    print_cubes(f, r->static_cubes, r->need);
    fprintf(f, "\n");
  } else {
    fprintf(f, "does not fit: no free contiguous block in the %dx%dx%d cube torus\n", r->grid[0],
            r->grid[1], r->grid[2]);
  }
  if (r->have_slice) {
    fprintf(f, "%-22s %lld (%d OCS x %d cubes), %lld ports in use, each in one circuit\n",
            "OCS circuits", (long long)r->slice.circuits, FS_TPU_N_OCS, r->slice.n_cubes,
            (long long)r->ports_used);
    fprintf(f, "%-22s %lld set up, %lld torn down, %d OCS touched, %.6g ms\n", "reconfiguration",
            (long long)r->rec.set_up, (long long)r->rec.torn_down, r->rec.ocs_touched,
            r->rec.time_s * 1e3);
  }
  if (r->have_stats) {
    fprintf(f, "%-22s %d (3-D torus closed form %d)\n", "diameter, ICI hops", r->diam_measured,
            r->diam_torus);
    fprintf(f, "%-22s %.6g Tb/s max-flow across dim 0, torus closed form %.6g Tb/s (%lld links)",
            "bisection", r->bis_measured_bps / 1e12, r->bis_torus_bps / 1e12,
            (long long)r->bis_torus_links);
    fprintf(f, "\n");
    fprintf(f, "%-22s %lld / %lld / %lld links across dims 0/1/2: min %lld, torus %lld (x%.4g)\n",
            "axis-halving cuts", (long long)r->cuts[0], (long long)r->cuts[1],
            (long long)r->cuts[2], (long long)r->cut_min, (long long)r->plain_min,
            (double)r->cut_min / (double)r->plain_min);
    fprintf(f, "%-22s %.4f hops between chips\n", "mean distance", r->st.avg_hops - 2);
    if (r->coll) {
      double algbw = r->cp.bytes / r->cr.time_s / 1e9;
      fprintf(f,
              "%-22s %s %s of %.6g B over %d chips (%s routing): %.6g ms, algbw %.4g GB/s, "
              "busbw %.4g GB/s\n",
              "collective", fs_coll_op_name(r->cp.op), fs_coll_algo_name(r->cr.algo), r->cp.bytes,
              r->st.hosts, fs_route_mode_name(r->mode), r->cr.time_s * 1e3, algbw,
              algbw * fs_coll_busbw_factor(r->cp.op, r->st.hosts));
    }
  }
  const fs_tpu_cost *c = &r->cost;
  fprintf(f, "%-22s %lld chips, %lld OCS, %lld transceivers, %lld fibers\n", "pod parts",
          (long long)c->chips, (long long)c->ocs, (long long)c->transceivers, (long long)c->fibers);
  fprintf(f, "%-22s %.4g M USD total: chips %.4g, OCS %.4g, transceivers %.4g, fiber %.4g\n",
          "cost (estimates)", c->total_usd / 1e6, c->chips_usd / 1e6, c->ocs_usd / 1e6,
          c->xcvr_usd / 1e6, c->fiber_usd / 1e6);
  fprintf(f, "%-22s %.4g kW total: chips %.4g, OCS %.4g, transceivers %.4g\n", "power (estimates)",
          c->total_w / 1e3, c->chips_w / 1e3, c->ocs_w / 1e3, c->xcvr_w / 1e3);
  fprintf(f,
          "%-22s cost %.2f%% (OCS boxes alone %.2f%%), power %.2f%% (OCS alone %.2f%%); paper: "
          "< 5%% and < 3%%\n",
          "optical share", 100 * c->share_usd, 100 * c->ocs_share_usd, 100 * c->share_w,
          100 * c->ocs_share_w);
  fprintf(f,
          "%-22s cost %.2f%%, power %.2f%% (OCS boxes and their fiber: the inter-rack "
          "transceivers are needed with or without OCS)\n",
          "OCS increment", 100 * c->incr_share_usd, 100 * c->incr_share_w);
  fprintf(f, "%-22s ", "break-even");
  if (c->xcvr_usd_at_5pct >= 0)
    fprintf(f, "%.4g USD per transceiver for 5%% of cost", c->xcvr_usd_at_5pct);
  else
    fprintf(f, "none for 5%% of cost (free transceivers: OCS and fiber alone are over 5%% of "
               "the rest)");
  if (c->xcvr_w_at_3pct >= 0)
    fprintf(f, ", %.4g W for 3%% of power", c->xcvr_w_at_3pct);
  else
    fprintf(f, ", none for 3%% of power (OCS alone exceeds it)");
  fprintf(f, "; every optical part under 5%% of cost from %.4g kUSD of system per chip\n",
          c->chip_usd_at_5pct / 1e3);
  if (r->mix) {
    const fs_tpu_mix_result *m = &r->mr;
    double steps = m->jobs > 0 ? (double)m->jobs : 1;
    fprintf(f, "%-22s %d requests, 1 per step, life 1..%d steps (load 1 on %d free cubes)\n",
            "job mix", m->jobs, 2 * m->mean_life - 1, m->free_cubes);
    fprintf(f, "%-22s admitted %d (%.1f%%), mean cubes busy %.1f%%, %lld OCS reconfigurations\n",
            "  with OCS", m->fit_ocs, 100.0 * m->fit_ocs / steps,
            100.0 * (double)m->cube_steps_ocs / steps / m->free_cubes, (long long)m->reconfigs);
    fprintf(f, "%-22s admitted %d (%.1f%%), mean cubes busy %.1f%%\n", "  static", m->fit_static,
            100.0 * m->fit_static / steps,
            100.0 * (double)m->cube_steps_static / steps / m->free_cubes);
  }
  return ferror(f) ? FS_EIO : 0;
}

int fs_report_ocs_tpu_json(FILE *f, const fs_report_ocs_tpu *r) {
  const fs_tpu_params *p = &r->p;
  const int32_t *shape = r->shape;
  int twisted = r->twisted;
  int32_t canon[3];
  fs_tpu_shape_canon(shape, canon);
  fprintf(f, "{\"pod\": {\"cubes\": %d, \"chips\": %d, \"ocs\": %d, \"ocs_ports\": %d, ", p->cubes,
          p->cubes * FS_TPU_CUBE_CHIPS, FS_TPU_N_OCS, p->ocs_ports);
  jnum(f, "ici_gbps", p->ici_gbps, 1);
  jnum(f, "reconfig_s", p->reconfig_s, 0);
  fprintf(f,
          "},\n \"slice\": {\"shape\": [%d, %d, %d], \"built\": [%d, %d, %d], \"twisted\": %s, "
          "\"cubes_needed\": %d, \"free_cubes\": %d",
          shape[0], shape[1], shape[2], canon[0], canon[1], canon[2], twisted ? "true" : "false",
          r->need, r->free_cubes);
  fprintf(f, ",\n  \"ocs_placement\": ");
  if (r->placed_ocs) {
    fprintf(f, "{\"cubes\": [");
    print_cubes(f, r->slice.cubes, r->slice.n_cubes);
    fprintf(f, "]}");
  } else {
    fprintf(f, "null");
  }
  fprintf(f, ",\n  \"static_placement\": ");
  if (r->placed_static) {
    fprintf(f, "{\"grid\": [%d, %d, %d], \"cubes\": [", r->grid[0], r->grid[1], r->grid[2]);
    print_cubes(f, r->static_cubes, r->need);
    fprintf(f, "]}");
  } else {
    fprintf(f, "null");
  }
  if (r->have_slice)
    fprintf(f,
            ",\n  \"circuits\": %lld, \"ports_used\": %lld, \"reconfig\": {\"set_up\": %lld, "
            "\"torn_down\": %lld, \"ocs_touched\": %d, ",
            (long long)r->slice.circuits, (long long)r->ports_used, (long long)r->rec.set_up,
            (long long)r->rec.torn_down, r->rec.ocs_touched);
  if (r->have_slice) {
    jnum(f, "time_s", r->rec.time_s, 0);
    fprintf(f, "}");
  }
  if (r->have_stats) {
    fprintf(f, ",\n  \"diameter_hops\": %d, \"torus_diameter_hops\": %d, ", r->diam_measured,
            r->diam_torus);
    jnum(f, "mean_hops", r->st.avg_hops - 2, 1);
    jnum(f, "bisection_bps", r->bis_measured_bps, 1);
    jnum(f, "torus_bisection_bps", r->bis_torus_bps, 1);
    fprintf(f,
            "\"torus_bisection_links\": %lld, \"halving_cut_links\": [%lld, %lld, %lld], "
            "\"halving_cut_min_links\": %lld",
            (long long)r->bis_torus_links, (long long)r->cuts[0], (long long)r->cuts[1],
            (long long)r->cuts[2], (long long)r->cut_min);
    if (r->coll) {
      fprintf(f, ",\n  \"collective\": {\"op\": \"%s\", \"algo\": \"%s\", \"routing\": \"%s\", ",
              fs_coll_op_name(r->cp.op), fs_coll_algo_name(r->cr.algo),
              fs_route_mode_name(r->mode));
      jnum(f, "bytes", r->cp.bytes, 1);
      jnum(f, "time_s", r->cr.time_s, 1);
      jnum(f, "busbw_factor", fs_coll_busbw_factor(r->cp.op, r->st.hosts), 0);
      fprintf(f, "}");
    }
  }
  const fs_tpu_cost *c = &r->cost;
  fprintf(f,
          "},\n \"cost\": {\"chips\": %lld, \"ocs\": %lld, \"transceivers\": %lld, \"fibers\": "
          "%lld, ",
          (long long)c->chips, (long long)c->ocs, (long long)c->transceivers, (long long)c->fibers);
  jnum(f, "chips_usd", c->chips_usd, 1);
  jnum(f, "ocs_usd", c->ocs_usd, 1);
  jnum(f, "transceivers_usd", c->xcvr_usd, 1);
  jnum(f, "fiber_usd", c->fiber_usd, 1);
  jnum(f, "total_usd", c->total_usd, 1);
  jnum(f, "chips_w", c->chips_w, 1);
  jnum(f, "ocs_w", c->ocs_w, 1);
  jnum(f, "transceivers_w", c->xcvr_w, 1);
  jnum(f, "total_w", c->total_w, 1);
  jnum(f, "optical_share_cost", c->share_usd, 1);
  jnum(f, "optical_share_power", c->share_w, 1);
  jnum(f, "ocs_share_cost", c->ocs_share_usd, 1);
  jnum(f, "ocs_share_power", c->ocs_share_w, 1);
  jnum(f, "ocs_increment_share_cost", c->incr_share_usd, 1);
  jnum(f, "ocs_increment_share_power", c->incr_share_w, 1);
  jnum(f, "chip_usd_at_5pct", c->chip_usd_at_5pct, 1);
  jnum(f, "transceiver_usd_at_5pct", c->xcvr_usd_at_5pct, 1);
  jnum(f, "transceiver_w_at_3pct", c->xcvr_w_at_3pct, 0);
  fprintf(f, "}");
  if (r->mix) {
    const fs_tpu_mix_result *m = &r->mr;
    fprintf(f,
            ",\n \"job_mix\": {\"jobs\": %d, \"free_cubes\": %d, \"mean_life\": %d, "
            "\"cubes_asked\": %lld, \"admitted_ocs\": %d, \"admitted_static\": %d, "
            "\"admitted_both\": %d, \"cube_steps_ocs\": %lld, \"cube_steps_static\": %lld, "
            "\"ocs_reconfigurations\": %lld}",
            m->jobs, m->free_cubes, m->mean_life, (long long)m->cubes_asked, m->fit_ocs,
            m->fit_static, m->fit_both, (long long)m->cube_steps_ocs,
            (long long)m->cube_steps_static, (long long)m->reconfigs);
  }
  fprintf(f, "}\n");
  return ferror(f) ? FS_EIO : 0;
}
