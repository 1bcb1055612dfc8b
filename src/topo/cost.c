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

/* An AWGR is passive (no power) and priced per port, an estimate
 * (docs/model.md, "Optical fabrics"): not a part row, so it adds to the
 * total only. */
#define AWGR_USD_PER_PORT 100.0

/* awgr, sirius: what is bought is per host, not per logical link (those
 * are wavelengths or slots sharing one fibre): a NIC and a transceiver at
 * the port rate (WDM array or tunable laser, priced as a single-mode one:
 * an estimate), a grating port, and fibre to the grating and back. Returns
 * 0 for any other family. */
static int optical_cost(const fs_topo *t, const fs_cost_table *c, fs_topo_cost *o) {
  int awgr = strcmp(t->family, "awgr") == 0, sirius = strcmp(t->family, "sirius") == 0;
  if ((!awgr && !sirius) || t->n_links == 0) return 0;
  int64_t n = t->n_hosts;
  /* awgr: a port carries its N - 1 channels; sirius: its host cable. */
  double gbps = t->links[0].capacity_bps / 1e9 * (awgr ? (double)(n - 1) : 1);
  fs_cost_add(o, c, FS_PART_NIC, gbps, n);
  fs_cost_add(o, c, FS_PART_XCVR_DR, gbps, n);
  o->fiber_m = 2 * c->fabric_m * (double)n;
  o->fiber_usd = o->fiber_m * c->fiber_usd_per_m;
  o->usd = o->fiber_usd + AWGR_USD_PER_PORT * (double)n;
  for (int p = 0; p < FS_PART_COUNT; p++) {
    o->usd += o->part[p].usd;
    o->watts += o->part[p].watts;
  }
  return 1;
}

void fs_topo_cost_compute(const fs_topo *t, fs_topo_cost *o) {
  const fs_cost_table *c = &t->cost;
  memset(o, 0, sizeof(*o));
  if (optical_cost(t, c, o)) return;
  int direct = strcmp(t->family, "torus") == 0 || strcmp(t->family, "ring") == 0 ||
               strcmp(t->family, "fullmesh") == 0;
  int dragonfly = strcmp(t->family, "dragonfly") == 0;
  int32_t H = t->n_hosts;
  /* One pass over cables (the even link of each pair). */
  for (int32_t l = 0; l < t->n_links; l += 2) {
    const fs_link *k = &t->links[l];
    const fs_node *a = &t->nodes[k->from], *b = &t->nodes[k->to];
    double gbps = k->capacity_bps / 1e9;
    if (a->kind == FS_NODE_SCALEUP || b->kind == FS_NODE_SCALEUP) continue;
    if (k->from < H && b->kind == FS_NODE_NIC) continue; /* PCIe, inside the server */
    if (k->to < H && a->kind == FS_NODE_NIC) continue;
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
  o->fiber_usd = o->fiber_m * c->fiber_usd_per_m;
  o->usd = o->fiber_usd;
  for (int p = 0; p < FS_PART_COUNT; p++) {
    o->usd += o->part[p].usd;
    o->watts += o->part[p].watts;
  }
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
                                     "direct_m", "dac_max_m", "sr_max_m", "parts", NULL};
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
      (rc = fs__json_num(c, obj, p, "sr_max_m", 0, k->sr_max_m, 0, 1e6, &k->sr_max_m)))
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
