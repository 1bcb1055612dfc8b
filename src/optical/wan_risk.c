/* Risks on the optical WAN (docs/model-wan-risk.md): the reader of the WAN
 * file's risk keys, the table of independent risks (SRLGs and lone
 * fibres) with each one's failure rate and unavailability, the
 * availability of a path and of a protected pair, and SRLG-disjoint pairs
 * (two-step; Bhandari's exact fibre-disjoint pair for the two-step's trap).
 * Costs: a path's availability O(hops x risks per fibre log); a pair
 * O(V^2) Dijkstra or O(V E) Bellman-Ford. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/wan_risk.h"
#include "wan_risk_internal.h"

/* Hours in a mean year (365.25 days): cut rates are per year. */
#define HOURS_PER_YEAR 8766.0

fs_wan_reliability fs_wan_reliability_default(void) {
  /* docs/model-wan-risk.md cites each: Bellcore's 2.13 service-affecting
   * failures per 1,000 km per year of buried cable; MTTR 12 h; 1+1
   * switching in 50 ms (the SONET/SDH APS bound); the rest assumptions
   * the file may override. */
  fs_wan_reliability r = {2.13, 12, 50, 200, 2, 5};
  return r;
}

int fs_wan_prot_parse(const char *name, fs_wan_prot *out) {
  if (strcmp(name, "none") == 0) *out = FS_WAN_PROT_NONE;
  else if (strcmp(name, "1+1") == 0) *out = FS_WAN_PROT_1P1;
  else if (strcmp(name, "sbpp") == 0) *out = FS_WAN_PROT_SBPP;
  else return FS_EINVAL;
  return 0;
}

const char *fs_wan_prot_name(fs_wan_prot p) {
  return p == FS_WAN_PROT_1P1 ? "1+1" : p == FS_WAN_PROT_SBPP ? "sbpp" : "none";
}

void fs__wan_risk_free(struct fs_wan_risk *r) {
  if (!r) return;
  for (int32_t i = 0; i < r->n_srlgs; i++) free(r->srlgs[i].fibres);
  FS__FREE_ALL(r->srlgs, r);
}

/* ---- the file's keys ---- */

static int parse_srlgs(const fs__jctx *c, const cJSON *a, fs_wan *w, struct fs_wan_risk *r) {
  static const char *const keys[] = {"name", "fibres", "km", NULL};
  if (!cJSON_IsArray(a)) return fs__json_fail(c, "$.srlgs", a, "must be an array");
  int32_t n = cJSON_GetArraySize(a);
  if (n > 4096) return fs__json_fail(c, "$.srlgs", NULL, "at most 4096 groups, got %d", n);
  r->srlgs = fs__calloc((size_t)n + 1, sizeof(*r->srlgs));
  if (!r->srlgs) return fs_err_set(c->err, FS_ENOMEM, "out of memory");
  int32_t i = 0;
  int rc;
  for (const cJSON *s = a->child; s; s = s->next, i++) {
    char p[64], q[96];
    fs__json_path_idx(p, sizeof(p), "$.srlgs", (size_t)i);
    fs_wan_srlg *g = &r->srlgs[i];
    const char *name;
    r->n_srlgs = i + 1; /* owns g->fibres from here on */
    if ((rc = fs__json_expect_object(c, s, p, keys)) ||
        (rc = fs__json_str(c, s, p, "name", 1, NULL, &name)))
      return rc;
    fs__json_path_key(q, sizeof(q), p, "name");
    if (!name[0] || strlen(name) >= FS_WAN_NAME)
      return fs__json_fail(c, q, cJSON_GetObjectItemCaseSensitive(s, "name"),
                           "must be a non-empty name of at most %d characters", FS_WAN_NAME - 1);
    snprintf(g->name, sizeof(g->name), "%s", name);
    for (int32_t j = 0; j < i; j++)
      if (strcmp(r->srlgs[j].name, g->name) == 0)
        return fs__json_fail(c, q, cJSON_GetObjectItemCaseSensitive(s, "name"),
                             "duplicate SRLG name");
    const cJSON *fa = cJSON_GetObjectItemCaseSensitive(s, "fibres");
    fs__json_path_key(q, sizeof(q), p, "fibres");
    if (!fa) return fs__json_fail(c, q, NULL, "missing (required)");
    if (!cJSON_IsArray(fa) || cJSON_GetArraySize(fa) < 1)
      return fs__json_fail(c, q, fa, "must be a non-empty array of \"SITE-SITE\" fibres");
    if (cJSON_GetArraySize(fa) > w->n_fibres)
      return fs__json_fail(c, q, NULL, "at most %d fibres (the file's), got %d", w->n_fibres,
                           cJSON_GetArraySize(fa));
    g->fibres = fs__calloc((size_t)cJSON_GetArraySize(fa), sizeof(int32_t));
    if (!g->fibres) return fs_err_set(c->err, FS_ENOMEM, "out of memory");
    double longest = 0;
    for (const cJSON *f = fa->child; f; f = f->next) {
      char e[128];
      fs__json_path_idx(e, sizeof(e), q, (size_t)g->n_fibres);
      if (!cJSON_IsString(f)) return fs__json_fail(c, e, f, "must be a string \"SITE-SITE\"");
      fs_err e2 = {0, ""};
      int32_t id;
      if (fs_wan_fibre_parse(w, f->valuestring, &id, &e2))
        return fs__json_fail(c, e, f, "no such fibre");
      for (int32_t x = 0; x < g->n_fibres; x++)
        if (g->fibres[x] == id) return fs__json_fail(c, e, f, "fibre listed twice");
      g->fibres[g->n_fibres++] = id;
      longest = fmax(longest, w->fibres[id].km);
    }
    if ((rc = fs__json_num(c, s, p, "km", 0, longest, 1e-3, 1e6, &g->km))) return rc;
  }
  return 0;
}

static int parse_reliability(const fs__jctx *c, const cJSON *o, struct fs_wan_risk *r) {
  static const char *const keys[] = {"cuts_per_1000km_year", "repair_hours",   "switchover_ms",
                                     "sbpp_switchover_ms",   "restoration_s", "restart_minutes",
                                     NULL};
  const char *p = "$.reliability";
  fs_wan_reliability *x = &r->rel;
  int rc;
  if ((rc = fs__json_expect_object(c, o, p, keys)) ||
      (rc = fs__json_num(c, o, p, "cuts_per_1000km_year", 0, x->cuts_per_1000km_year, 0, 1e6,
                         &x->cuts_per_1000km_year)) ||
      (rc = fs__json_num(c, o, p, "repair_hours", 0, x->repair_hours, 1e-6, 1e6,
                         &x->repair_hours)) ||
      (rc = fs__json_num(c, o, p, "switchover_ms", 0, x->switchover_ms, 0, 1e9,
                         &x->switchover_ms)) ||
      (rc = fs__json_num(c, o, p, "sbpp_switchover_ms", 0, x->sbpp_switchover_ms, 0, 1e9,
                         &x->sbpp_switchover_ms)) ||
      (rc = fs__json_num(c, o, p, "restoration_s", 0, x->restoration_s, 0, 1e9,
                         &x->restoration_s)) ||
      (rc = fs__json_num(c, o, p, "restart_minutes", 0, x->restart_minutes, 0, 1e9,
                         &x->restart_minutes)))
    return rc;
  return 0;
}

int fs__wan_parse_risk(const fs__jctx *c, const cJSON *root, fs_wan *w) {
  const cJSON *sa = cJSON_GetObjectItemCaseSensitive(root, "srlgs");
  const cJSON *rel = cJSON_GetObjectItemCaseSensitive(root, "reliability");
  const cJSON *pr = cJSON_GetObjectItemCaseSensitive(root, "protection");
  if (!sa && !rel && !pr && !cJSON_GetObjectItemCaseSensitive(root, "checkpoint_minutes"))
    return 0;
  struct fs_wan_risk *r = fs__calloc(1, sizeof(*r));
  if (!r) return fs_err_set(c->err, FS_ENOMEM, "out of memory");
  w->risk = r; /* freed with w from here on */
  r->rel = fs_wan_reliability_default();
  int rc;
  if (sa && (rc = parse_srlgs(c, sa, w, r))) return rc;
  if (rel && (rc = parse_reliability(c, rel, r))) return rc;
  if (pr) {
    if (!cJSON_IsString(pr) || fs_wan_prot_parse(pr->valuestring, &r->protection))
      return fs__json_fail(c, "$.protection", pr, "must be \"none\", \"1+1\" or \"sbpp\"");
    r->has_protection = 1;
  }
  return fs__json_num(c, root, "$", "checkpoint_minutes", 0, 30, 1e-6, 1e9,
                      &r->checkpoint_minutes);
}

/* ---- the risk table ---- */

void fs_wan_risks_free(fs_wan_risks *r) {
  if (!r) return;
  FS__FREE_ALL(r->per_hour, r->unavail, r->km, r->srlg, r->fibre, r->fibre_start, r->fibre_risk,
               r);
}

int32_t fs_wan_risk_of_srlg(const fs_wan *w, const char *name) {
  if (!w->risk) return -1;
  for (int32_t i = 0; i < w->risk->n_srlgs; i++)
    if (strcmp(w->risk->srlgs[i].name, name) == 0) return i;
  return -1;
}

int fs_wan_risks_build(const fs_wan *w, fs_wan_risks **out, fs_err *err) {
  *out = NULL;
  int32_t G = w->risk ? w->risk->n_srlgs : 0, E = w->n_fibres;
  fs_wan_risks *r = fs__calloc(1, sizeof(*r));
  int32_t *groups_of = fs__calloc((size_t)E + 1, sizeof(int32_t)), links = 0;
  if (!r || !groups_of) goto oom;
  r->rel = w->risk ? w->risk->rel : fs_wan_reliability_default();
  for (int32_t g = 0; g < G; g++)
    for (int32_t x = 0; x < w->risk->srlgs[g].n_fibres; x++) groups_of[w->risk->srlgs[g].fibres[x]]++;
  int32_t n = G;
  for (int32_t f = 0; f < E; f++) {
    n += groups_of[f] == 0;
    links += groups_of[f] ? groups_of[f] : 1;
  }
  r->n = n;
  r->per_hour = fs__calloc((size_t)n + 1, sizeof(double));
  r->unavail = fs__calloc((size_t)n + 1, sizeof(double));
  r->km = fs__calloc((size_t)n + 1, sizeof(double));
  r->srlg = fs__calloc((size_t)n + 1, sizeof(int32_t));
  r->fibre = fs__calloc((size_t)n + 1, sizeof(int32_t));
  r->fibre_start = fs__calloc((size_t)E + 1, sizeof(int32_t));
  r->fibre_risk = fs__calloc((size_t)links + 1, sizeof(int32_t));
  if (!r->per_hour || !r->unavail || !r->km || !r->srlg || !r->fibre || !r->fibre_start ||
      !r->fibre_risk)
    goto oom;
  int32_t i = 0;
  for (; i < G; i++) {
    r->km[i] = w->risk->srlgs[i].km;
    r->srlg[i] = i;
    r->fibre[i] = -1;
  }
  for (int32_t f = 0; f < E; f++)
    if (!groups_of[f]) {
      r->km[i] = w->fibres[f].km;
      r->srlg[i] = -1;
      r->fibre[i++] = f;
    }
  for (i = 0; i < n; i++) {
    /* lambda = rate x km / 1000 per year; MTBF = 1 / lambda;
     * U = MTTR / (MTBF + MTTR) = lambda MTTR / (1 + lambda MTTR). */
    double lam = r->rel.cuts_per_1000km_year * r->km[i] / 1000.0 / HOURS_PER_YEAR;
    r->per_hour[i] = lam;
    r->unavail[i] = lam * r->rel.repair_hours / (1 + lam * r->rel.repair_hours);
  }
  /* CSR of each fibre's risks, ascending */
  for (int32_t f = 0; f < E; f++) r->fibre_start[f + 1] = r->fibre_start[f] + (groups_of[f] ? groups_of[f] : 1);
  memset(groups_of, 0, ((size_t)E + 1) * sizeof(int32_t));
  for (int32_t g = 0; g < G; g++)
    for (int32_t x = 0; x < w->risk->srlgs[g].n_fibres; x++) {
      int32_t f = w->risk->srlgs[g].fibres[x];
      r->fibre_risk[r->fibre_start[f] + groups_of[f]++] = g;
    }
  for (i = G; i < n; i++) r->fibre_risk[r->fibre_start[r->fibre[i]]] = i;
  free(groups_of);
  *out = r;
  return 0;
oom:
  free(groups_of);
  fs_wan_risks_free(r);
  return fs_err_set(err, FS_ENOMEM, "out of memory");
}

/* ---- availability ---- */

static int cmp_i32(const void *x, const void *y) {
  int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
  return (a > b) - (a < b);
}

/* Product of (1 - U) over the distinct risks of the given paths (NULL ones
 * skipped); NAN if out of memory. */
static double avail_of(const fs_wan_risks *r, const fs_wan_path *a, const fs_wan_path *b) {
  const fs_wan_path *ps[2] = {a, b};
  size_t n = 0;
  for (int k = 0; k < 2; k++)
    if (ps[k])
      for (int32_t i = 0; i < ps[k]->hops; i++)
        n += (size_t)(r->fibre_start[ps[k]->fibres[i] + 1] - r->fibre_start[ps[k]->fibres[i]]);
  int32_t *ids = fs__malloc(n + 1, sizeof(int32_t));
  if (!ids) return NAN;
  n = 0;
  for (int k = 0; k < 2; k++)
    if (ps[k])
      for (int32_t i = 0; i < ps[k]->hops; i++) {
        int32_t f = ps[k]->fibres[i];
        for (int32_t j = r->fibre_start[f]; j < r->fibre_start[f + 1]; j++) ids[n++] = r->fibre_risk[j];
      }
  qsort(ids, n, sizeof(int32_t), cmp_i32);
  double A = 1;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || ids[i] != ids[i - 1]) A *= 1 - r->unavail[ids[i]];
  free(ids);
  return A;
}

double fs_wan_path_availability(const fs_wan_risks *r, const fs_wan_path *p) {
  return avail_of(r, p, NULL);
}

double fs_wan_pair_availability(const fs_wan_risks *r, const fs_wan_path *work,
                                const fs_wan_path *backup) {
  /* P(W up or B up) = P(W up) + P(B up) - P(W up and B up), and W and B
   * both up exactly when every risk of W u B is up. */
  return avail_of(r, work, NULL) + avail_of(r, backup, NULL) - avail_of(r, work, backup);
}

static int fibres_share_risk(const fs_wan_risks *r, int32_t f, int32_t g) {
  for (int32_t i = r->fibre_start[f]; i < r->fibre_start[f + 1]; i++)
    for (int32_t j = r->fibre_start[g]; j < r->fibre_start[g + 1]; j++)
      if (r->fibre_risk[i] == r->fibre_risk[j]) return 1;
  return 0;
}

int fs_wan_srlg_disjoint(const fs_wan_risks *r, const fs_wan_path *a, const fs_wan_path *b) {
  for (int32_t i = 0; i < a->hops; i++)
    for (int32_t j = 0; j < b->hops; j++)
      if (fibres_share_risk(r, a->fibres[i], b->fibres[j])) return 0;
  return 1;
}

/* ---- disjoint pairs ---- */

static int32_t other_end(const fs_wan *w, int32_t f, int32_t v) {
  return w->fibres[f].a == v ? w->fibres[f].b : w->fibres[f].a;
}

/* Fills p from prev_fibre back from t (hops known); FS_ENOMEM or 0. */
static int path_from_prev(const fs_wan *w, const int32_t *prev_fibre, int32_t s, int32_t t,
                          fs_wan_path *p) {
  int32_t h = 0;
  for (int32_t v = t; v != s; v = other_end(w, prev_fibre[v], v)) h++;
  p->hops = h;
  p->nodes = fs__malloc((size_t)h + 1, sizeof(int32_t));
  p->fibres = fs__malloc((size_t)h + 1, sizeof(int32_t));
  if (!p->nodes || !p->fibres) {
    free(p->nodes), free(p->fibres);
    p->nodes = p->fibres = NULL;
    return FS_ENOMEM;
  }
  p->km = 0;
  int32_t v = t;
  p->nodes[h] = t;
  for (int32_t i = h - 1; i >= 0; i--) {
    p->fibres[i] = prev_fibre[v];
    v = other_end(w, prev_fibre[v], v);
    p->nodes[i] = v;
  }
  for (int32_t i = 0; i < h; i++) p->km += w->fibres[p->fibres[i]].km;
  return 0;
}

/* Dijkstra by km avoiding ban[fibre]; ties to fewer hops, then the lower
 * site id settled first. 1 found, 0 unreachable, FS_ENOMEM. */
static int shortest(const fs_wan *w, const uint8_t *ban, int32_t s, int32_t t, fs_wan_path *p) {
  int32_t V = w->n_sites;
  double *dist = fs__malloc((size_t)V, sizeof(double));
  int32_t *hops = fs__calloc((size_t)V, sizeof(int32_t)), *prev = fs__malloc((size_t)V, sizeof(int32_t));
  uint8_t *done = fs__calloc((size_t)V, 1);
  int rc = FS_ENOMEM;
  if (!dist || !hops || !prev || !done) goto out;
  for (int32_t v = 0; v < V; v++) dist[v] = INFINITY, prev[v] = -1;
  dist[s] = 0;
  for (;;) {
    int32_t u = -1;
    for (int32_t v = 0; v < V; v++)
      if (!done[v] && isfinite(dist[v]) &&
          (u < 0 || dist[v] < dist[u] || (dist[v] == dist[u] && hops[v] < hops[u])))
        u = v;
    if (u < 0) {
      rc = 0;
      goto out;
    }
    if (u == t) break;
    done[u] = 1;
    for (int32_t f = 0; f < w->n_fibres; f++) {
      if (ban && ban[f]) continue;
      if (w->fibres[f].a != u && w->fibres[f].b != u) continue;
      int32_t v = other_end(w, f, u);
      double nd = dist[u] + w->fibres[f].km;
      if (!done[v] && (nd < dist[v] || (nd == dist[v] && hops[u] + 1 < hops[v]))) {
        dist[v] = nd;
        hops[v] = hops[u] + 1;
        prev[v] = f;
      }
    }
  }
  rc = path_from_prev(w, prev, s, t, p) ? FS_ENOMEM : 1;
out:
  FS__FREE_ALL(dist, hops, prev, done);
  return rc;
}

/* Bans every fibre sharing a risk with path p. */
static void ban_risks_of(const fs_wan *w, const fs_wan_risks *r, const fs_wan_path *p, uint8_t *ban) {
  for (int32_t f = 0; f < w->n_fibres; f++)
    for (int32_t i = 0; i < p->hops && !ban[f]; i++) ban[f] = (uint8_t)fibres_share_risk(r, f, p->fibres[i]);
}

int fs__wan_backup_for(const fs_wan *w, const fs_wan_risks *r, const fs_wan_path *work,
                       fs_wan_path *backup) {
  uint8_t *ban = fs__calloc((size_t)w->n_fibres + 1, 1);
  if (!ban) return FS_ENOMEM;
  ban_risks_of(w, r, work, ban);
  int rc = shortest(w, ban, work->nodes[0], work->nodes[work->hops], backup);
  free(ban);
  return rc;
}

/* Bhandari (1999): P1 shortest; P1's arcs reversed with negative km; P2
 * by Bellman-Ford; fibres used both ways cancel; the remaining arcs are
 * the min-total-km pair of fibre-disjoint paths (a min-cost 2-flow). */
static int bhandari(const fs_wan *w, int32_t s, int32_t t, fs_wan_path *pa, fs_wan_path *pb) {
  int32_t V = w->n_sites, E = w->n_fibres;
  fs_wan_path p1 = {0, NULL, NULL, 0};
  int rc = shortest(w, NULL, s, t, &p1);
  if (rc <= 0) return rc;
  /* arc 2f: a->b, 2f+1: b->a; state per arc: 0 normal, 1 removed, 2 negative */
  uint8_t *st = fs__calloc((size_t)2 * E + 1, 1), *use = fs__calloc((size_t)2 * E + 1, 1);
  double *dist = fs__malloc((size_t)V, sizeof(double));
  int32_t *prev_arc = fs__malloc((size_t)V, sizeof(int32_t)), *walk = fs__malloc((size_t)V + 1, sizeof(int32_t));
  rc = FS_ENOMEM;
  if (!st || !use || !dist || !prev_arc || !walk) goto out;
  for (int32_t i = 0; i < p1.hops; i++) {
    int32_t f = p1.fibres[i], fwd = 2 * f + (w->fibres[f].a == p1.nodes[i] ? 0 : 1);
    st[fwd] = 1;
    st[fwd ^ 1] = 2;
    use[fwd] = 1;
  }
  for (int32_t v = 0; v < V; v++) dist[v] = INFINITY, prev_arc[v] = -1;
  dist[s] = 0;
  for (int32_t it = 0; it < V; it++) {
    int changed = 0;
    for (int32_t arc = 0; arc < 2 * E; arc++) {
      if (st[arc] == 1) continue;
      const fs_wan_fibre *fb = &w->fibres[arc / 2];
      int32_t u = arc & 1 ? fb->b : fb->a, v = arc & 1 ? fb->a : fb->b;
      double c = st[arc] == 2 ? -fb->km : fb->km;
      if (isfinite(dist[u]) && (!isfinite(dist[v]) || dist[u] + c < dist[v] - 1e-9 * (1 + fabs(dist[v])))) {
        dist[v] = dist[u] + c;
        prev_arc[v] = arc;
        changed = 1;
      }
    }
    if (!changed) break;
  }
  if (!isfinite(dist[t])) {
    rc = 0;
    goto out;
  }
  for (int32_t v = t, n = 0; v != s && n <= V; n++) {
    int32_t arc = prev_arc[v];
    if (use[arc ^ 1]) use[arc ^ 1] = 0; /* interlacing: both cancel */
    else use[arc] = 1;
    const fs_wan_fibre *fb = &w->fibres[arc / 2];
    v = arc & 1 ? fb->b : fb->a;
  }
  fs_wan_path *outp[2] = {pa, pb};
  for (int k = 0; k < 2; k++) {
    int32_t n = 0, v = s;
    walk[0] = s;
    int32_t prev[FS_WAN_MAX_SITES];
    while (v != t && n < V) {
      int32_t arc = -1;
      for (int32_t a = 0; a < 2 * E && arc < 0; a++) {
        const fs_wan_fibre *fb = &w->fibres[a / 2];
        if (use[a] && (a & 1 ? fb->b : fb->a) == v) arc = a;
      }
      if (arc < 0) break;
      use[arc] = 0;
      const fs_wan_fibre *fb = &w->fibres[arc / 2];
      int32_t nv = arc & 1 ? fb->a : fb->b;
      prev[nv] = arc / 2;
      walk[++n] = v = nv;
    }
    if (v != t) { /* cannot happen for a min-cost 2-flow; refuse rather than guess */
      rc = 0;
      goto out;
    }
    fs_wan_path *p = outp[k];
    p->hops = n;
    p->nodes = fs__malloc((size_t)n + 1, sizeof(int32_t));
    p->fibres = fs__malloc((size_t)n + 1, sizeof(int32_t));
    if (!p->nodes || !p->fibres) goto out;
    p->km = 0;
    for (int32_t i = 0; i <= n; i++) p->nodes[i] = walk[i];
    for (int32_t i = 0; i < n; i++) {
      p->fibres[i] = prev[walk[i + 1]];
      p->km += w->fibres[p->fibres[i]].km;
    }
  }
  rc = 1;
out:
  if (rc != 1) {
    free(pa->nodes), free(pa->fibres), free(pb->nodes), free(pb->fibres);
    pa->nodes = pa->fibres = pb->nodes = pb->fibres = NULL;
  }
  free(p1.nodes), free(p1.fibres);
  FS__FREE_ALL(st, use, dist, prev_arc, walk);
  return rc;
}

int fs_wan_disjoint_pair(const fs_wan *w, const fs_wan_risks *r, int32_t src, int32_t dst,
                         fs_wan_pair_method m, fs_wan_path *work, fs_wan_path *backup,
                         fs_err *err) {
  memset(work, 0, sizeof(*work));
  memset(backup, 0, sizeof(*backup));
  if (src < 0 || src >= w->n_sites || dst < 0 || dst >= w->n_sites || src == dst)
    return fs_err_set(err, FS_EINVAL, "disjoint pair: bad sites %d -> %d", src, dst);
  int rc;
  if (m == FS_WAN_PAIR_TWO_STEP) {
    rc = shortest(w, NULL, src, dst, work);
    if (rc == 1) rc = fs__wan_backup_for(w, r, work, backup);
  } else {
    rc = bhandari(w, src, dst, work, backup);
    if (rc == 1 && !fs_wan_srlg_disjoint(r, work, backup)) rc = 0;
    if (rc == 1 && backup->km < work->km) {
      fs_wan_path t = *work;
      *work = *backup;
      *backup = t;
    }
  }
  if (rc != 1) {
    free(work->nodes), free(work->fibres), free(backup->nodes), free(backup->fibres);
    memset(work, 0, sizeof(*work));
    memset(backup, 0, sizeof(*backup));
  }
  if (rc < 0) return fs_err_set(err, FS_ENOMEM, "out of memory finding a disjoint pair");
  return rc;
}
