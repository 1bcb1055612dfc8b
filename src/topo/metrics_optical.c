/* Closed forms of the optical families of zoo_optical.c (docs/model.md,
 * "Optical fabrics"): host-to-host hop statistics and the bisection across
 * the documented host order, what the BFS and the max-flow of metrics.c
 * measure (tests/test_topo_optical.c checks them against both). Plain
 * hosts only: with GPU servers the measured methods run instead.
 * sipml-ocs is a torus of GPUs and takes the torus's closed forms. */
#include <string.h>

#include "internal.h"

/* Built by the family's own builder with plain hosts, its parameters in
 * dims (zoo_optical.c). */
static int is(const fs_topo *t, const char *family, int32_t n_dims) {
  size_t len = strlen(family);
  return strcmp(t->family, family) == 0 && strncmp(t->spec, family, len) == 0 &&
         t->spec[len] == ':' && t->n_dims == n_dims && t->gpus_per_node <= 1;
}

/* Lotus: a host reaches, in 2 + the switch distance, the other p - 1 of
 * its lower switch (0), the (a - 1) p of its group (2: up and down, or two
 * AWGR channels), the a p of each group at ring distance 1 (1: one AWGR
 * channel), 2 (2: two channels) and >= 3 (3: up, the pair's optical cable,
 * down; the AWGR ring is no shorter). A group has 2 groups at each ring
 * distance below g / 2 and 1 at g / 2 (g even). */
static void lotus_hops(const fs_topo *t, fs_topo_stats *st) {
  double g = t->dims[0], a = t->dims[1], p = t->dims[2], H = g * a * p;
  double sum = 2 * (p - 1) + 4 * (a - 1) * p;
  int32_t diam = p > 1 ? 2 : 0, far = t->dims[0] / 2;
  if (a > 1) diam = 4;
  for (int32_t d = 1; d <= far; d++) {
    double groups = 2 * d == t->dims[0] ? 1 : 2;
    int32_t hops = d == 1 ? 3 : d == 2 ? 4 : 5;
    sum += groups * a * p * hops;
    if (hops > diam) diam = hops;
  }
  st->diameter_hops = diam;
  st->avg_hops = sum / (H - 1);
}

/* SiP-Ring: 2 + ceil(m / r) hops to the GPU m steps away round the ring
 * (the circulant of offsets 1..r), m = min(k, n - k). */
static void ring_hops(const fs_topo *t, fs_topo_stats *st) {
  int64_t n = t->dims[0], r = t->dims[1], sum = 0;
  for (int64_t k = 1; k < n; k++) {
    int64_t m = k < n - k ? k : n - k;
    sum += 2 + (m + r - 1) / r;
  }
  st->diameter_hops = (int32_t)(2 + (n / 2 + r - 1) / r);
  st->avg_hops = (double)sum / (double)(n - 1);
}

/* Jupiter: 2 hops inside a block, 3 to any other (every pair of blocks
 * has a direct link). */
static void jupiter_hops(const fs_topo *t, fs_topo_stats *st) {
  double B = t->dims[0], h = t->dims[1], H = B * h;
  st->diameter_hops = 3;
  st->avg_hops = (2 * (h - 1) + 3 * (H - h)) / (H - 1);
}

int fs__optical_hops(const fs_topo *t, fs_topo_stats *st) {
  if (is(t, "lotus", 3))
    lotus_hops(t, st);
  else if (is(t, "sipml-ring", 2))
    ring_hops(t, st);
  else if (is(t, "jupiter", 4))
    jupiter_hops(t, st);
  else
    return 0;
  return 1;
}

/* Whether the Lotus cut of groups [0, g/2) from the rest (g even) is
 * reached: every upper switch is fed by its a local links what its optical
 * cables across the cut carry (a local >= c global), and every lower
 * switch at a boundary of the ring can fill its a AWGR channels across
 * from its hosts and upper switches (p host + a local >= a awgr). Then the
 * max-flow is the cut or what the half's hosts send, whichever is less
 * (checked against the max-flow over a grid of g, a, p and rates in
 * tests/test_topo_fabrics.c); otherwise no closed form is claimed. */
static int lotus_fed(int64_t g, int64_t a, int64_t p, double host, double local, double global,
                     double awgr) {
  int64_t half = g / 2;
  if ((double)p * host + (double)a * local < (double)a * awgr * (1 - 1e-12)) return 0;
  for (int64_t i = 0; i < g; i++)
    for (int64_t u = 0; u < a; u++) {
      int64_t c = 0;
      for (int64_t j = 0; j < g; j++)
        c += j != i && (j < half) != (i < half) && ((j - i - 1 + g) % g) % a == u;
      if ((double)a * local < (double)c * global * (1 - 1e-12)) return 0;
    }
  return 1;
}

/* The cut of hosts [0, H/2) from the rest. Lotus (g even: groups [0, g/2)
 * from the others): the (g/2)^2 optical cables between the halves and the
 * a^2 AWGR channels at each of the two boundaries of the ring, or what
 * the half's hosts send, whichever is less; -1 unless g is even and the
 * switches are fed (lotus_fed). SiP-Ring: each of the two boundaries is crossed
 * by k circuits of offset k, r (r + 1) / 2 in all, or the half's GPUs.
 * Jupiter (uniform links, B even): the (B/2)^2 block pairs' links, or the
 * half's hosts. */
double fs__optical_bisection(const fs_topo *t) {
  int64_t H = t->n_hosts;
  if (H < 2) return -1;
  double host = t->links[0].capacity_bps, cut;
  if (is(t, "lotus", 3)) {
    int64_t g = t->dims[0], a = t->dims[1], p = t->dims[2];
    if (g % 2) return -1;
    /* cable order (zoo_optical.c): hosts, K(a, a) per group, optical, AWGR */
    int64_t local_at = H, global_at = H + g * a * a, awgr_at = global_at + g * (g - 1) / 2;
    double local = t->links[2 * local_at].capacity_bps;
    double global = t->links[2 * global_at].capacity_bps;
    double awgr = t->links[2 * awgr_at].capacity_bps;
    if (!lotus_fed(g, a, p, host, local, global, awgr)) return -1;
    cut = (double)(g / 2) * (double)(g / 2) * global + 2.0 * (double)(a * a) * awgr;
  } else if (is(t, "sipml-ring", 2)) {
    int64_t r = t->dims[1];
    cut = (double)(r * (r + 1)) * t->links[2 * H].capacity_bps;
  } else if (is(t, "jupiter", 4)) {
    int64_t B = t->dims[0];
    if (B % 2 || t->dims[3]) return -1;
    /* uniform: links per pair = the count between blocks 0 and 1 */
    int64_t x = (t->n_links / 2 - H) / (B * (B - 1) / 2);
    cut = (double)(B / 2) * (double)(B / 2) * (double)x * t->links[2 * H].capacity_bps;
  } else {
    return -1;
  }
  double hosts = (double)(H / 2) * host;
  return cut < hosts ? cut : hosts;
}
