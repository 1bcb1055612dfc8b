/* Cost and power of the scale-out network from a per-part table
 * (docs/model.md, "Cost and power"): switch ports, NICs, copper cables,
 * optical transceivers by speed and reach, fiber by the metre. Servers,
 * GPUs and scale-up domains are not counted. O(links). */
#include <math.h>
#include <string.h>

#include "internal.h"

static const char *const part_names[FS_PART_COUNT] = {"switch_port", "nic", "dac",
                                                      "transceiver_sr", "transceiver_dr"};

const char *fs_cost_part_name(fs_cost_part_kind k) {
  return k >= 0 && k < FS_PART_COUNT ? part_names[k] : "?";
}

/* Estimates (USD street prices, W typical), not quotes: see docs/model.md for
 * the sources each row leans on. Rows: 100, 200, 400, 800 Gb/s. */
void fs_cost_defaults(fs_cost_table *c) {
  static const double gbps[] = {100, 200, 400, 800};
  static const fs_cost_part t[FS_PART_COUNT][4] = {
      /* switch port: box price and power shared over its ports, no optics */
      {{250, 5}, {400, 7}, {700, 12}, {1100, 18}},
      /* NIC (one port) */
      {{700, 15}, {1100, 20}, {1800, 25}, {2800, 30}},
      /* DAC cable, passive */
      {{80, 0}, {120, 0}, {200, 0}, {350, 0}},
      /* SR transceiver (multimode, <= 100 m) */
      {{100, 2.5}, {250, 5}, {500, 10}, {800, 15}},
      /* DR/FR transceiver (single-mode, <= 2 km) */
      {{200, 3.5}, {400, 5.5}, {700, 11}, {1100, 16}},
  };
  memset(c, 0, sizeof(*c));
  c->n_speeds = 4;
  for (int i = 0; i < 4; i++) {
    c->gbps[i] = gbps[i];
    for (int p = 0; p < FS_PART_COUNT; p++) c->part[p][i] = t[p][i];
  }
  c->fiber_usd_per_m = 1.5;
  c->access_m = 3;
  c->fabric_m = 30;
  c->global_m = 100;
  c->direct_m = 1;
  c->dac_max_m = 3;
  c->sr_max_m = 100;
  /* Optical parts (docs/model.md, "Optical fabrics"); all estimates but
   * the OCS power (Palomar's 108 W over its 136 ports, Poutievski et al.
   * 2022) and the chiplet rate (TeraPHY, 2.56 Tb/s). The OCS price is the
   * TPU v4 estimate's ($40,000 for 136 ports, src/optical/tpu_cost.c). */
  c->awgr_usd_per_port = 100;
  c->ocs_usd_per_port = 40000.0 / 136;
  c->ocs_watts_per_port = 108.0 / 136;
  c->optio_gbps = FS__OPTIO_GBPS;
  c->optio_usd = 1000;
  c->optio_pj_per_bit = 5;
}

/* The row for a link of `gbps`: the first at or above it; past the last,
 * the last scaled by speed. */
fs_cost_part fs_cost_price(const fs_cost_table *c, fs_cost_part_kind k, double gbps) {
  for (int32_t i = 0; i < c->n_speeds; i++)
    if (c->gbps[i] >= gbps) return c->part[k][i];
  fs_cost_part p = c->part[k][c->n_speeds - 1];
  double f = gbps / c->gbps[c->n_speeds - 1];
  return (fs_cost_part){p.usd * f, p.watts * f};
}

void fs_cost_add(fs_topo_cost *o, const fs_cost_table *c, fs_cost_part_kind k, double gbps,
                 int64_t n) {
  fs_cost_part p = fs_cost_price(c, k, gbps);
  o->part[k].count += n;
  o->part[k].usd += p.usd * (double)n;
  o->part[k].watts += p.watts * (double)n;
}

/* Optical I/O chiplets carrying `gbps` a GPU for n GPUs: whole chiplets
 * priced, the energy per bit at the full rate (lasers and serdes run
 * whether or not they carry data). */
static void add_optio(fs_topo_cost *o, const fs_cost_table *c, double gbps, int64_t n) {
  double chips = ceil(gbps / c->optio_gbps - 1e-9);
  if (chips < 1) chips = 1;
  o->optical_usd += (double)n * chips * c->optio_usd;
  o->optical_watts += (double)n * gbps * 1e9 * c->optio_pj_per_bit * 1e-12;
}

static void sum_totals(fs_topo_cost *o, const fs_cost_table *c) {
  o->fiber_usd = o->fiber_m * c->fiber_usd_per_m;
  o->usd = o->fiber_usd + o->optical_usd;
  o->watts = o->optical_watts;
  for (int p = 0; p < FS_PART_COUNT; p++) {
    o->usd += o->part[p].usd;
    o->watts += o->part[p].watts;
  }
}

/* awgr, sirius: what is bought is per host, not per logical link (those
 * are wavelengths or slots sharing one fibre): a NIC and a transceiver at
 * the port rate (WDM array or tunable laser, priced as a single-mode one:
 * an estimate), a grating port (passive: no power), and fibre to the
 * grating and back. sipml-ocs, sipml-ring: per GPU the optical I/O
 * chiplets of its gpu_gbps (SiP-ML's I/O is on package: no NIC, no
 * transceiver); sipml-ocs adds one OCS port and fabric_m of fibre per
 * circuit end, sipml-ring one direct_m segment of ring fibre per GPU (its
 * wavelength filters are on the chiplet). Returns 0 for any other family. */
static int optical_cost(const fs_topo *t, const fs_cost_table *c, fs_topo_cost *o) {
  int awgr = strcmp(t->family, "awgr") == 0, sirius = strcmp(t->family, "sirius") == 0;
  int socs = strcmp(t->family, "sipml-ocs") == 0, sring = strcmp(t->family, "sipml-ring") == 0;
  if ((!awgr && !sirius && !socs && !sring) || t->n_links == 0) return 0;
  int64_t n = t->n_hosts;
  if (socs || sring) {
    double gbps = t->links[0].capacity_bps / 1e9;
    add_optio(o, c, gbps, n);
    if (socs) {
      int64_t ports = t->n_links / 2 * 2 - 2 * n; /* two ends of each circuit */
      o->optical_usd += (double)ports * c->ocs_usd_per_port;
      o->optical_watts += (double)ports * c->ocs_watts_per_port;
      o->fiber_m = (double)ports * c->fabric_m;
    } else {
      o->fiber_m = (double)n * c->direct_m;
    }
    sum_totals(o, c);
    return 1;
  }
  /* awgr: a port carries its N - 1 channels; sirius: its host cable. */
  double gbps = t->links[0].capacity_bps / 1e9 * (awgr ? (double)(n - 1) : 1);
  fs_cost_add(o, c, FS_PART_NIC, gbps, n);
  fs_cost_add(o, c, FS_PART_XCVR_DR, gbps, n);
  o->fiber_m = 2 * c->fabric_m * (double)n;
  o->optical_usd = c->awgr_usd_per_port * (double)n;
  sum_totals(o, c);
  return 1;
}

/* A Lotus AWGR channel: between lower switches of two groups. */
static int lotus_channel(const fs_topo *t, const fs_node *a, const fs_node *b) {
  return a->kind == FS_NODE_SWITCH && b->kind == FS_NODE_SWITCH && a->tier == 1 &&
         b->tier == 1 && a->group != b->group && strcmp(t->family, "lotus") == 0;
}

/* Lotus's AWGR channels are wavelengths on shared fibres: each lower
 * switch has one WDM port (a switch port and a single-mode transceiver at
 * a channels' rate) and fibre to each of its two gratings, and each
 * grating 2a ports. Jupiter's block-to-block cables each pass an OCS: two
 * OCS ports. Optical I/O scale-up (scaleup=optical_io): each GPU's
 * chiplets at its scale-up rate. */
static void optical_extras(const fs_topo *t, const fs_cost_table *c, fs_topo_cost *o) {
  if (strcmp(t->family, "lotus") == 0) {
    /* from the graph, not the spec's parameters, so a file import of it
     * costs the same: a lower switch's channels to one neighbour group (a
     * of them) and its rate */
    int64_t lowers = 0, a = 0;
    int32_t first = -1;
    for (int32_t v = t->n_hosts; v < t->n_nodes; v++)
      lowers += t->nodes[v].kind == FS_NODE_SWITCH && t->nodes[v].tier == 1;
    for (int32_t l = 0; l < t->n_links && first < 0; l++)
      if (lotus_channel(t, &t->nodes[t->links[l].from], &t->nodes[t->links[l].to])) first = l;
    double ch = first >= 0 ? t->links[first].capacity_bps / 1e9 : 0;
    /* a: the channels from the first channel's source into its target's group */
    for (int32_t l = 0; first >= 0 && l < t->n_links; l++) {
      const fs_link *k = &t->links[l], *f = &t->links[first];
      a += k->from == f->from && t->nodes[k->to].group == t->nodes[f->to].group &&
           lotus_channel(t, &t->nodes[k->from], &t->nodes[k->to]);
    }
    fs_cost_add(o, c, FS_PART_SWITCH_PORT, (double)a * ch, 2 * lowers);
    fs_cost_add(o, c, FS_PART_XCVR_DR, (double)a * ch, 2 * lowers);
    o->fiber_m += 2 * c->fabric_m * (double)lowers;
    o->optical_usd += c->awgr_usd_per_port * (double)(2 * lowers);
  }
  if (strcmp(t->family, "jupiter") == 0) {
    int64_t inter = 0;
    for (int32_t l = 0; l < t->n_links; l += 2)
      inter += t->nodes[t->links[l].from].kind == FS_NODE_SWITCH &&
               t->nodes[t->links[l].to].kind == FS_NODE_SWITCH;
    o->optical_usd += (double)(2 * inter) * c->ocs_usd_per_port;
    o->optical_watts += (double)(2 * inter) * c->ocs_watts_per_port;
  }
  if (t->scaleup_optical && t->scaleup0 >= 0 && t->n_hosts > 0)
    for (int32_t e = t->out_start[0]; e < t->out_start[1]; e++) {
      const fs_link *k = &t->links[t->out_links[e]];
      if (t->nodes[k->to].kind == FS_NODE_SCALEUP)
        add_optio(o, c, k->capacity_bps / 1e9, t->n_hosts);
    }
}

void fs_topo_cost_compute(const fs_topo *t, fs_topo_cost *o) {
  const fs_cost_table *c = &t->cost;
  memset(o, 0, sizeof(*o));
  if (optical_cost(t, c, o)) return;
  int direct = strcmp(t->family, "torus") == 0 || strcmp(t->family, "ring") == 0 ||
               strcmp(t->family, "fullmesh") == 0;
  int dragonfly = strcmp(t->family, "dragonfly") == 0 || strcmp(t->family, "lotus") == 0;
  int32_t H = t->n_hosts;
  /* One pass over cables (the even link of each pair). */
  for (int32_t l = 0; l < t->n_links; l += 2) {
    const fs_link *k = &t->links[l];
    const fs_node *a = &t->nodes[k->from], *b = &t->nodes[k->to];
    double gbps = k->capacity_bps / 1e9;
    if (a->kind == FS_NODE_SCALEUP || b->kind == FS_NODE_SCALEUP) continue;
    if (k->from < H && b->kind == FS_NODE_NIC) continue; /* PCIe, inside the server */
    if (k->to < H && a->kind == FS_NODE_NIC) continue;
    if (lotus_channel(t, a, b)) continue; /* optical_extras */
    int a_end = k->from < H || a->kind == FS_NODE_NIC;
    int b_end = k->to < H || b->kind == FS_NODE_NIC;
    double m;
    if (direct) {
      /* A chip's router is on the chip: the host-router cable is on die. */
      if (a_end || b_end) continue;
      m = c->direct_m;
    } else if (a_end || b_end) {
      m = c->access_m;
    } else if (dragonfly && a->group != b->group) {
      m = c->global_m;
    } else {
      m = c->fabric_m;
    }
    /* Ends: a NIC for each endpoint (plain host or NIC node), a switch port
     * for each packet switch (chip routers excepted). */
    int ends[2] = {a_end, b_end};
    const fs_node *nd[2] = {a, b};
    for (int e = 0; e < 2; e++) {
      if (ends[e]) fs_cost_add(o, c, FS_PART_NIC, gbps, 1);
      else if (nd[e]->kind == FS_NODE_SWITCH && !direct) fs_cost_add(o, c, FS_PART_SWITCH_PORT, gbps, 1);
    }
    if (m <= c->dac_max_m) {
      fs_cost_add(o, c, FS_PART_DAC, gbps, 1);
    } else {
      fs_cost_add(o, c, m <= c->sr_max_m ? FS_PART_XCVR_SR : FS_PART_XCVR_DR, gbps, 2);
      o->fiber_m += m;
    }
  }
  optical_extras(t, c, o);
  sum_totals(o, c);
}

/* "cost": {"fiber_usd_per_m", "access_m", "fabric_m", "global_m",
 * "direct_m", "dac_max_m", "sr_max_m", "parts": [{"part", "gbps", "usd",
 * "watts"}]}: a part row replaces the row of that speed or adds one. */
int fs__cost_from_json(const fs__jctx *c, const cJSON *obj, const char *path, fs_topo *t) {
  if (!obj) return 0;
  char p[512];
  fs__json_path_key(p, sizeof(p), path, "cost");
  if (!cJSON_IsObject(obj)) return fs__json_fail(c, p, obj, "must be an object");
  static const char *const keys[] = {"fiber_usd_per_m", "access_m", "fabric_m", "global_m",
                                     "direct_m", "dac_max_m", "sr_max_m", "parts",
                                     "awgr_usd_per_port", "ocs_usd_per_port",
                                     "ocs_watts_per_port", "optio_gbps", "optio_usd",
                                     "optio_pj_per_bit", NULL};
  fs_cost_table *k = &t->cost;
  int rc;
  if ((rc = fs__json_expect_object(c, obj, p, keys)) ||
      (rc = fs__json_num(c, obj, p, "fiber_usd_per_m", 0, k->fiber_usd_per_m, 0, 1e9,
                         &k->fiber_usd_per_m)) ||
      (rc = fs__json_num(c, obj, p, "access_m", 0, k->access_m, 0, 1e6, &k->access_m)) ||
      (rc = fs__json_num(c, obj, p, "fabric_m", 0, k->fabric_m, 0, 1e6, &k->fabric_m)) ||
      (rc = fs__json_num(c, obj, p, "global_m", 0, k->global_m, 0, 1e6, &k->global_m)) ||
      (rc = fs__json_num(c, obj, p, "direct_m", 0, k->direct_m, 0, 1e6, &k->direct_m)) ||
      (rc = fs__json_num(c, obj, p, "dac_max_m", 0, k->dac_max_m, 0, 1e6, &k->dac_max_m)) ||
      (rc = fs__json_num(c, obj, p, "sr_max_m", 0, k->sr_max_m, 0, 1e6, &k->sr_max_m)) ||
      (rc = fs__json_num(c, obj, p, "awgr_usd_per_port", 0, k->awgr_usd_per_port, 0, 1e9,
                         &k->awgr_usd_per_port)) ||
      (rc = fs__json_num(c, obj, p, "ocs_usd_per_port", 0, k->ocs_usd_per_port, 0, 1e9,
                         &k->ocs_usd_per_port)) ||
      (rc = fs__json_num(c, obj, p, "ocs_watts_per_port", 0, k->ocs_watts_per_port, 0, 1e6,
                         &k->ocs_watts_per_port)) ||
      (rc = fs__json_num(c, obj, p, "optio_gbps", 0, k->optio_gbps, 1e-9, 1e7, &k->optio_gbps)) ||
      (rc = fs__json_num(c, obj, p, "optio_usd", 0, k->optio_usd, 0, 1e9, &k->optio_usd)) ||
      (rc = fs__json_num(c, obj, p, "optio_pj_per_bit", 0, k->optio_pj_per_bit, 0, 1e6,
                         &k->optio_pj_per_bit)))
    return rc;
  const cJSON *parts = cJSON_GetObjectItemCaseSensitive(obj, "parts");
  if (!parts) return 0;
  char pp[512];
  fs__json_path_key(pp, sizeof(pp), p, "parts");
  if (!cJSON_IsArray(parts)) return fs__json_fail(c, pp, parts, "must be an array");
  int n = cJSON_GetArraySize(parts);
  for (int i = 0; i < n; i++) {
    const cJSON *row = cJSON_GetArrayItem(parts, i);
    char pi[512];
    fs__json_path_idx(pi, sizeof(pi), pp, (size_t)i);
    static const char *const rkeys[] = {"part", "gbps", "usd", "watts", NULL};
    const char *name;
    double gbps, usd, watts;
    if (!cJSON_IsObject(row)) return fs__json_fail(c, pi, row, "must be an object");
    if ((rc = fs__json_expect_object(c, row, pi, rkeys)) ||
        (rc = fs__json_str(c, row, pi, "part", 1, NULL, &name)) ||
        (rc = fs__json_num(c, row, pi, "gbps", 1, 0, 1e-9, 1e7, &gbps)) ||
        (rc = fs__json_num(c, row, pi, "usd", 1, 0, 0, 1e12, &usd)) ||
        (rc = fs__json_num(c, row, pi, "watts", 1, 0, 0, 1e9, &watts)))
      return rc;
    int kind = -1;
    for (int q = 0; q < FS_PART_COUNT; q++)
      if (strcmp(name, part_names[q]) == 0) kind = q;
    if (kind < 0) {
      char pn[512];
      fs__json_path_key(pn, sizeof(pn), pi, "part");
      return fs__json_fail(c, pn, cJSON_GetObjectItemCaseSensitive(row, "part"),
                           "must be switch_port, nic, dac, transceiver_sr or transceiver_dr");
    }
    int32_t at = -1;
    for (int32_t s = 0; s < k->n_speeds; s++)
      if (k->gbps[s] == gbps) at = s;
    if (at < 0) {
      if (k->n_speeds == FS_COST_SPEEDS) {
        char pg[512];
        fs__json_path_key(pg, sizeof(pg), pi, "gbps");
        return fs__json_fail(c, pg, cJSON_GetObjectItemCaseSensitive(row, "gbps"),
                             "is one speed too many (at most %d)", FS_COST_SPEEDS);
      }
      /* A new speed: insert in order; its other parts start as the next
       * faster row's (or the last row's), so the table stays complete. */
      at = 0;
      while (at < k->n_speeds && k->gbps[at] < gbps) at++;
      int32_t from = at < k->n_speeds ? at : k->n_speeds - 1;
      for (int32_t s = k->n_speeds; s > at; s--) {
        k->gbps[s] = k->gbps[s - 1];
        for (int q = 0; q < FS_PART_COUNT; q++) k->part[q][s] = k->part[q][s - 1];
      }
      if (from >= at && at < k->n_speeds) from++;
      k->n_speeds++;
      k->gbps[at] = gbps;
      for (int q = 0; q < FS_PART_COUNT; q++) k->part[q][at] = k->part[q][from];
    }
    k->part[kind][at] = (fs_cost_part){usd, watts};
  }
  return 0;
}
