/* The edge-colouring baseline for 2-tier Clos fabrics (docs/model-route.md,
 * "Edge colouring"): the flows between leaves are the edges of a bipartite
 * multigraph (source leaf -> destination leaf); by Koenig's theorem (1916)
 * its edges take Delta colours (Delta = the largest leaf degree) with no two
 * edges of a colour at one leaf, and colour x -> spine slot x gives every
 * up and down cable at most one flow of the phase. With more colours than
 * slots (spines x parallel cables), each leaf is split into copies of
 * degree <= slots first (de Werra 1971), so each slot gets floor or ceil of
 * deg / slots of a leaf's flows: the least possible max count per cable.
 *
 * Colouring: one edge at a time; when the free colours a at u and b at v
 * differ, the a/b alternating path from v is swapped (it cannot reach u in
 * a bipartite graph), freeing a at v. O(E (V + colours)) time, O(V colours)
 * memory; the benchmark (2048 flows, 64 + 64 leaves, 32 colours) takes well
 * under a millisecond. Phases that run in exactly the same concurrent sets
 * are coloured together; each further group of phases is rotated over the
 * slots by the offset that least loads what is already placed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "opt_internal.h"

int fs__routeopt_bipartite_colour(int32_t n_u, int32_t n_v, int32_t n_edges, const int32_t *eu,
                                  const int32_t *ev, int32_t colours, int32_t *colour) {
  size_t V = (size_t)n_u + (size_t)n_v;
  int32_t *at = fs__malloc(V * (size_t)(colours > 0 ? colours : 1) + 1, sizeof(int32_t));
  int32_t *deg = fs__calloc(V + 1, sizeof(int32_t));
  int32_t *path = fs__malloc((size_t)n_edges + 1, sizeof(int32_t));
  int rc = 0;
  if (!at || !deg || !path) {
    rc = FS_ENOMEM;
    goto out;
  }
  for (int32_t e = 0; e < n_edges; e++)
    if (++deg[eu[e]] > colours || ++deg[(size_t)n_u + (size_t)ev[e]] > colours) {
      rc = FS_EINVAL;
      goto out;
    }
  for (size_t i = 0; i < V * (size_t)colours; i++) at[i] = -1;
#define AT(x, c) at[(size_t)(x) * (size_t)colours + (size_t)(c)]
  for (int32_t e = 0; e < n_edges; e++) {
    int32_t u = eu[e], v = n_u + ev[e], a = 0, b = 0;
    while (AT(u, a) >= 0) a++; /* deg <= colours: a free colour exists */
    while (AT(v, b) >= 0) b++;
    if (AT(v, a) >= 0 && AT(u, b) < 0) {
      a = b; /* b is free at both ends */
    } else if (AT(v, a) >= 0) {
      /* swap a and b along the alternating path from v that starts with a */
      int32_t n = 0, x = v, c = a;
      for (int32_t g; (g = AT(x, c)) >= 0;) {
        path[n++] = g;
        x = x == eu[g] ? n_u + ev[g] : eu[g];
        c = c == a ? b : a;
      }
      for (int32_t i = 0; i < n; i++) {
        int32_t g = path[i];
        AT(eu[g], colour[g]) = -1;
        AT(n_u + ev[g], colour[g]) = -1;
      }
      for (int32_t i = 0; i < n; i++) {
        int32_t g = path[i];
        colour[g] = colour[g] == a ? b : a;
        AT(eu[g], colour[g]) = g;
        AT(n_u + ev[g], colour[g]) = g;
      }
    }
    colour[e] = a;
    AT(u, a) = e;
    AT(v, a) = e;
  }
#undef AT
out:
  FS__FREE_ALL(at, deg, path);
  return rc;
}

/* ---- the 2-tier Clos shape ------------------------------------------------ */

typedef struct clos {
  int32_t *role;    /* per node: 0 other, 1 leaf, 2 spine */
  int32_t *idx;     /* per node: index among leaves or spines */
  int32_t *slot;    /* per link: spine * c + cable for leaf<->spine links, else -1 */
  int32_t n_leaves, n_spines, c, slots;
} clos;

static void clos_free(clos *s) { FS__FREE_ALL(s->role, s->idx, s->slot); }

static int is_switch(const fs_topo *t, int32_t v) { return t->nodes[v].kind == FS_NODE_SWITCH; }

/* FS_EINVAL naming t and why it is not a 2-tier Clos. */
static int not_clos(const fs_topo *t, fs_err *err, const char *why) {
  return fs_err_set(err, FS_EINVAL,
                    "edgecolor needs a 2-tier Clos (leaf-spine) topology, not %s: %s",
                    t->spec[0] ? t->spec : t->family, why);
}

/* Classifies the switches and numbers the leaf-spine cables; FS_EINVAL if t
 * is not a 2-tier Clos (see fs_routeopt_edgecolor_check). O(V + E). */
static int clos_shape(const fs_topo *t, clos *s, fs_err *err) {
  memset(s, 0, sizeof(*s));
  size_t V = (size_t)t->n_nodes, L = (size_t)t->n_links;
  s->role = fs__calloc(V + 1, sizeof(int32_t));
  s->idx = fs__malloc(V + 1, sizeof(int32_t));
  s->slot = fs__malloc(L + 1, sizeof(int32_t));
  int32_t *cnt = fs__calloc(V + 1, sizeof(int32_t)), *spines = fs__malloc(V + 1, sizeof(int32_t));
  char why[256], na[64], nb[64], nc[64];
  int rc = 0;
  if (!s->role || !s->idx || !s->slot || !cnt || !spines) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  for (int32_t v = 0; v < t->n_nodes; v++) {
    s->idx[v] = -1;
    if (!is_switch(t, v)) continue;
    s->role[v] = 2;
    for (int32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++)
      if (!is_switch(t, t->links[t->out_links[i]].to)) s->role[v] = 1;
    if (s->role[v] == 2) spines[s->n_spines] = v;
    s->idx[v] = s->role[v] == 1 ? s->n_leaves++ : s->n_spines++;
  }
  if (s->n_leaves == 0 || s->n_spines == 0) {
    rc = not_clos(t, err, s->n_leaves ? "no spine switches (one switch tier)" : "no leaf switches");
    goto out;
  }
  for (size_t l = 0; l < L; l++) {
    const fs_link *lk = &t->links[l];
    s->slot[l] = -1;
    if (!is_switch(t, lk->from) || !is_switch(t, lk->to) || s->role[lk->from] != s->role[lk->to])
      continue;
    fs_topo_node_name(t, lk->from, na, sizeof(na));
    fs_topo_node_name(t, lk->to, nb, sizeof(nb));
    snprintf(why, sizeof(why), "%s %s and %s are cabled together%s",
             s->role[lk->from] == 1 ? "leaves" : "spines", na, nb,
             s->role[lk->from] == 1 ? "" : " (more than two tiers)");
    rc = not_clos(t, err, why);
    goto out;
  }
  /* every leaf: the same number c of cables to every spine; cable j of a
   * pair is its j-th link in link order, and its reverse the way down */
  for (int32_t v = 0; v < t->n_nodes; v++) {
    if (s->role[v] != 1) continue;
    for (int32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++) {
      int32_t l = t->out_links[i], w = t->links[l].to;
      if (s->role[w] == 2) s->slot[l] = cnt[w]++; /* the cable index for now */
    }
    int32_t lo = 0, hi = 0;
    for (int32_t i = 1; i < s->n_spines; i++) {
      if (cnt[spines[i]] < cnt[spines[lo]]) lo = i;
      if (cnt[spines[i]] > cnt[spines[hi]]) hi = i;
    }
    if (s->c == 0) s->c = cnt[spines[hi]];
    fs_topo_node_name(t, v, na, sizeof(na));
    fs_topo_node_name(t, spines[lo], nb, sizeof(nb));
    fs_topo_node_name(t, spines[hi], nc, sizeof(nc));
    if (cnt[spines[lo]] == 0)
      snprintf(why, sizeof(why), "leaf %s has no cable to spine %s", na, nb);
    else if (cnt[spines[lo]] != cnt[spines[hi]])
      snprintf(why, sizeof(why), "leaf %s has %d cables to spine %s but %d to spine %s", na,
               cnt[spines[lo]], nb, cnt[spines[hi]], nc);
    else if (cnt[spines[hi]] != s->c)
      snprintf(why, sizeof(why), "leaf %s has %d cables to each spine, an earlier leaf %d", na,
               cnt[spines[hi]], s->c);
    else
      why[0] = '\0';
    if (why[0]) {
      rc = not_clos(t, err, why);
      goto out;
    }
    for (int32_t i = 0; i < s->n_spines; i++) cnt[spines[i]] = 0;
  }
  s->slots = s->n_spines * s->c;
  for (size_t l = 0; l < L; l++) {
    const fs_link *lk = &t->links[l];
    if (s->slot[l] >= 0 && s->role[lk->from] == 1) {
      s->slot[l] = s->idx[lk->to] * s->c + s->slot[l];
      s->slot[lk->reverse] = s->slot[l];
    }
  }
out:
  free(cnt);
  free(spines);
  if (rc) clos_free(s);
  return rc;
}

int fs_routeopt_edgecolor_check(const fs_topo *t, fs_err *err) {
  clos s;
  int rc = clos_shape(t, &s, err);
  if (!rc) clos_free(&s);
  return rc;
}

/* ---- the baseline ------------------------------------------------------- */

/* Flow f's source and destination leaves (indices) from its first
 * candidate; both -1 if it never reaches a spine's tier (inside a leaf or
 * a server). */
static void flow_leaves(const fs_routeopt_problem *p, const clos *s, int32_t f, int32_t *a,
                        int32_t *b) {
  int32_t h;
  const int32_t *pl = fs_routeopt_path(p, f, 0, &h);
  *a = *b = -1;
  int up = 0;
  for (int32_t i = 0; i < h; i++) {
    const fs_link *lk = &p->t->links[pl[i]];
    if (s->role[lk->to] == 1 && *a < 0) *a = s->idx[lk->to];
    if (s->role[lk->to] == 1) *b = s->idx[lk->to];
    if (s->role[lk->to] == 2) up = 1;
  }
  if (!up || *a == *b) *a = *b = -1;
}

/* The candidate of flow f that goes up and down cable `slot` (leaf ->
 * spine -> leaf, the same cable index both ways), the first in candidate
 * order, or -1. */
static int32_t candidate_on(const fs_routeopt_problem *p, const clos *s, int32_t f, int32_t slot) {
  for (int32_t c = 0; c < p->n_paths[f]; c++) {
    int32_t h, n = 0, ok = 1;
    const int32_t *pl = fs_routeopt_path(p, f, c, &h);
    for (int32_t i = 0; i < h && ok; i++)
      if (s->slot[pl[i]] >= 0) ok = s->slot[pl[i]] == slot && ++n <= 2;
    if (ok && n == 2) return c;
  }
  return -1;
}

/* Loads of the placement so far, as greedy's proxy: demand / capacity per
 * (set, link). */
static void add_load(const fs_routeopt_problem *p, double *load, int32_t f, int32_t c, double sg) {
  int32_t h;
  const int32_t *pl = fs_routeopt_path(p, f, c, &h);
  for (int32_t k = 0; k < p->n_sets; k++) {
    if (!fs__routeopt_in_set(p, f, k)) continue;
    for (int32_t i = 0; i < h; i++)
      load[(size_t)k * (size_t)p->t->n_links + (size_t)pl[i]] +=
          sg * p->demand_bps[f] / p->t->links[pl[i]].capacity_bps;
  }
}

static double max_on(const fs_routeopt_problem *p, const double *load, int32_t f, int32_t c) {
  int32_t h;
  const int32_t *pl = fs_routeopt_path(p, f, c, &h);
  double mx = 0;
  for (int32_t k = 0; k < p->n_sets; k++) {
    if (!fs__routeopt_in_set(p, f, k)) continue;
    for (int32_t i = 0; i < h; i++)
      mx = fmax(mx, load[(size_t)k * (size_t)p->t->n_links + (size_t)pl[i]]);
  }
  return mx;
}

int fs__routeopt_edgecolor(fs_routeopt_problem *p, int32_t *choice, fs_err *err) {
  const fs_routeopt_traffic *tr = p->tr;
  clos s;
  int rc = clos_shape(p->t, &s, err);
  if (rc) return rc;
  size_t F = (size_t)p->n_flows, P = (size_t)tr->n_phases, K = (size_t)p->n_sets;
  int32_t *la = fs__malloc(F + 1, sizeof(int32_t)), *lb = fs__malloc(F + 1, sizeof(int32_t));
  int32_t *group = fs__malloc(P + 1, sizeof(int32_t)), *rep = fs__malloc(P + 1, sizeof(int32_t));
  uint8_t *member = fs__calloc(P * K + 1, 1);
  int32_t *ef = fs__malloc(F + 1, sizeof(int32_t)), *eu = fs__malloc(F + 1, sizeof(int32_t));
  int32_t *ev = fs__malloc(F + 1, sizeof(int32_t)), *col = fs__malloc(F + 1, sizeof(int32_t));
  int32_t *du = fs__calloc((size_t)s.n_leaves + 1, sizeof(int32_t));
  int32_t *dv = fs__calloc((size_t)s.n_leaves + 1, sizeof(int32_t));
  int32_t *base_u = fs__malloc((size_t)s.n_leaves + 1, sizeof(int32_t));
  int32_t *base_v = fs__malloc((size_t)s.n_leaves + 1, sizeof(int32_t));
  double *load = fs__calloc(K * (size_t)p->t->n_links + 1, sizeof(double));
  uint8_t *set_used = fs__calloc(K + 1, 1);
  if (!la || !lb || !group || !rep || !member || !ef || !eu || !ev || !col || !du || !dv ||
      !base_u || !base_v || !load || !set_used) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  /* flows that stay in a leaf or server keep their first (shortest) path */
  for (int32_t f = 0; f < p->n_flows; f++) {
    flow_leaves(p, &s, f, &la[f], &lb[f]);
    choice[f] = 0;
    if (la[f] < 0) add_load(p, load, f, 0, +1);
  }
  /* groups of phases with the same concurrent sets, in phase order */
  int32_t n_groups = 0;
  for (int32_t ph = 0; ph < tr->n_phases; ph++) {
    const fs_routeopt_job *j = &tr->jobs[tr->phases[ph].job];
    for (size_t k = (size_t)(ph - j->first_phase); k < K; k += (size_t)j->n_phases)
      member[(size_t)ph * K + k] = 1;
    group[ph] = -1;
    for (int32_t g = 0; g < n_groups && group[ph] < 0; g++)
      if (memcmp(member + (size_t)rep[g] * K, member + (size_t)ph * K, K) == 0) group[ph] = g;
    if (group[ph] < 0) {
      rep[n_groups] = ph;
      group[ph] = n_groups++;
    }
  }
  for (int32_t g = 0; g < n_groups; g++) {
    /* the group's inter-leaf flows and the leaves' degrees */
    int32_t ne = 0, delta = 0;
    memset(du, 0, (size_t)s.n_leaves * sizeof(int32_t));
    memset(dv, 0, (size_t)s.n_leaves * sizeof(int32_t));
    for (int32_t f = 0; f < p->n_flows; f++) {
      if (la[f] < 0 || group[tr->flows[f].phase] != g) continue;
      ef[ne++] = f;
      if (++du[la[f]] > delta) delta = du[la[f]];
      if (++dv[lb[f]] > delta) delta = dv[lb[f]];
    }
    if (ne == 0) continue;
    /* colours: Delta, or the slots with leaves split into copies of
     * degree <= slots (the i-th edge of a leaf goes to copy i / ncol) */
    int32_t ncol = delta < s.slots ? delta : s.slots, nu = 0, nv = 0;
    for (int32_t a = 0; a < s.n_leaves; a++) {
      base_u[a] = nu;
      nu += (du[a] + ncol - 1) / ncol;
      base_v[a] = nv;
      nv += (dv[a] + ncol - 1) / ncol;
      du[a] = dv[a] = 0;
    }
    for (int32_t e = 0; e < ne; e++) {
      int32_t f = ef[e];
      eu[e] = base_u[la[f]] + du[la[f]]++ / ncol;
      ev[e] = base_v[lb[f]] + dv[lb[f]]++ / ncol;
    }
    rc = fs__routeopt_bipartite_colour(nu, nv, ne, eu, ev, ncol, col);
    if (rc) {
      rc = fs_err_set(err, rc, rc == FS_ENOMEM ? "out of memory" : "edgecolor: degree above %d",
                      ncol);
      goto out;
    }
    /* the rotation of colours over slots that least loads the sets this
     * group shares with groups already placed (none: no rotation) */
    int shared = 0;
    for (size_t k = 0; k < K; k++)
      if (member[(size_t)rep[g] * K + k] && set_used[k]) shared = 1;
    int32_t best_off = 0;
    double best = INFINITY;
    for (int32_t off = 0; off < (shared ? s.slots : 1); off++) {
      for (int32_t e = 0; e < ne; e++) {
        int32_t c = candidate_on(p, &s, ef[e], (col[e] + off) % s.slots);
        if (c < 0) {
          rc = fs_err_set(err, FS_EINTERNAL, "edgecolor: flow %d has no path on spine cable %d",
                          ef[e], (col[e] + off) % s.slots);
          goto out;
        }
        choice[ef[e]] = c;
        add_load(p, load, ef[e], c, +1);
      }
      double mx = 0;
      for (int32_t e = 0; e < ne; e++) mx = fmax(mx, max_on(p, load, ef[e], choice[ef[e]]));
      if (mx < best - 1e-9) {
        best = mx;
        best_off = off;
      }
      for (int32_t e = 0; e < ne; e++) add_load(p, load, ef[e], choice[ef[e]], -1);
    }
    for (int32_t e = 0; e < ne; e++) {
      choice[ef[e]] = candidate_on(p, &s, ef[e], (col[e] + best_off) % s.slots);
      add_load(p, load, ef[e], choice[ef[e]], +1);
    }
    for (size_t k = 0; k < K; k++)
      if (member[(size_t)rep[g] * K + k]) set_used[k] = 1;
  }
out:
  clos_free(&s);
  FS__FREE_ALL(la, lb, group, rep, member, ef, eu, ev, col, du, dv, base_u, base_v, load, set_used);
  return rc;
}
