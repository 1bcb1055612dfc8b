/* TopoOpt-style circuit choice for one job (topoopt.h): the job's server
 * traffic matrix, TotientPerms rings, greedy degree-capped matching, spare
 * port filling, seeded local search, the random baseline, the fabric and
 * its cost. Matrices are dense n x n (n <= a few hundred servers); the
 * greedy is O(n^2) per circuit, O(n^3 d) in all; every local-search step
 * costs one LP (topoopt_lp.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/topo.h"
#include "fabricsim/topoopt.h"

/* A builder step that fails only for memory: to the function's oom label. */
#define TRY(expr)                    \
  do {                               \
    if ((rc = (expr)) < 0) goto oom; \
  } while (0)

/* ---- traffic -------------------------------------------------------------- */

int fs_topoopt_traffic_new(int32_t n, fs_topoopt_traffic **out, fs_err *err) {
  if (n < 2 || n > FS_TOPOOPT_MAX_SERVERS)
    return fs_err_set(err, FS_EINVAL, "topoopt: servers must be in [2, %d], got %d",
                      FS_TOPOOPT_MAX_SERVERS, n);
  fs_topoopt_traffic *t = fs__calloc(1, sizeof(*t));
  if (!t) return fs_err_set(err, FS_ENOMEM, "out of memory");
  t->n = n;
  t->ar = fs__calloc((size_t)n * (size_t)n, sizeof(double));
  t->mp = fs__calloc((size_t)n * (size_t)n, sizeof(double));
  t->group_start = fs__calloc(1, sizeof(int32_t));
  if (!t->ar || !t->mp || !t->group_start) {
    fs_topoopt_traffic_free(t);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  *out = t;
  return 0;
}

void fs_topoopt_traffic_free(fs_topoopt_traffic *t) {
  if (!t) return;
  FS__FREE_ALL(t->ar, t->mp, t->group_start, t->group_servers, t->group_bytes, t);
}

double fs_topoopt_traffic_total(const fs_topoopt_traffic *t) {
  double s = 0;
  for (size_t i = 0; i < (size_t)t->n * (size_t)t->n; i++) s += t->ar[i] + t->mp[i];
  return s;
}

/* Appends a group (no matrix change); an identical server sequence already
 * listed only adds its bytes. */
static int push_group(fs_topoopt_traffic *t, const int32_t *s, int32_t m, double bytes,
                      fs_err *err) {
  for (int32_t g = 0; g < t->n_groups; g++) {
    int32_t a = t->group_start[g], len = t->group_start[g + 1] - a;
    if (len == m && memcmp(t->group_servers + a, s, (size_t)m * sizeof(int32_t)) == 0) {
      t->group_bytes[g] += bytes;
      return 0;
    }
  }
  int32_t total = t->group_start[t->n_groups];
  int32_t *st = realloc(t->group_start, (size_t)(t->n_groups + 2) * sizeof(int32_t));
  if (!st) return fs_err_set(err, FS_ENOMEM, "out of memory");
  t->group_start = st;
  int32_t *sv = realloc(t->group_servers, (size_t)(total + m) * sizeof(int32_t));
  if (!sv) return fs_err_set(err, FS_ENOMEM, "out of memory");
  t->group_servers = sv;
  double *gb = realloc(t->group_bytes, (size_t)(t->n_groups + 1) * sizeof(double));
  if (!gb) return fs_err_set(err, FS_ENOMEM, "out of memory");
  t->group_bytes = gb;
  memcpy(sv + total, s, (size_t)m * sizeof(int32_t));
  gb[t->n_groups] = bytes;
  st[t->n_groups + 1] = total + m;
  t->n_groups++;
  return 0;
}

int fs_topoopt_traffic_add_group(fs_topoopt_traffic *t, const int32_t *servers, int32_t m,
                                 double bytes, fs_err *err) {
  if (m < 2 || m > t->n)
    return fs_err_set(err, FS_EINVAL, "topoopt: a ring group needs 2 to %d servers, got %d",
                      t->n, m);
  if (!(bytes >= 0) || !isfinite(bytes))
    return fs_err_set(err, FS_EINVAL, "topoopt: ring bytes must be >= 0, got %g", bytes);
  for (int32_t i = 0; i < m; i++) {
    if (servers[i] < 0 || servers[i] >= t->n)
      return fs_err_set(err, FS_EINVAL, "topoopt: ring server %d out of [0, %d)", servers[i],
                        t->n);
    for (int32_t j = 0; j < i; j++)
      if (servers[j] == servers[i])
        return fs_err_set(err, FS_EINVAL, "topoopt: server %d twice in one ring", servers[i]);
  }
  int rc = push_group(t, servers, m, bytes, err);
  if (rc) return rc;
  int32_t n = t->n;
  for (int32_t i = 0; i < m; i++) {
    int32_t a = servers[i], b = servers[(i + 1) % m];
    if (m == 2 && i == 1) b = servers[0];
    t->ar[(size_t)a * n + b] += bytes;
  }
  return 0;
}

/* Ring of the GPUs gpus[0..k) in order, each sending `bytes` to the next:
 * matrix entries between different servers, and the server-level group
 * (servers in order of first appearance). */
static int gpu_ring(fs_topoopt_traffic *t, const int32_t *gpus, int32_t k, int64_t G,
                    double bytes, int32_t *scratch, fs_err *err) {
  if (k < 2 || bytes <= 0) return 0;
  int32_t n = t->n, m = 0;
  for (int32_t i = 0; i < k; i++) {
    int32_t a = (int32_t)(gpus[i] / G), b = (int32_t)(gpus[(i + 1) % k] / G);
    if (a != b) t->ar[(size_t)a * n + b] += bytes;
    int seen = 0;
    for (int32_t j = 0; j < m && !seen; j++) seen = scratch[j] == a;
    if (!seen) scratch[m++] = a;
  }
  return m >= 2 ? push_group(t, scratch, m, bytes, err) : 0;
}

int fs_topoopt_traffic_from_job(const fs_job *job, fs_topoopt_traffic **out, fs_err *err) {
  int64_t G = job->hw.gpus_per_node, gpus = fs_job_gpus(job);
  if (G < 1) return fs_err_set(err, FS_EINVAL, "%s: $.hardware.gpus_per_node: must be >= 1",
                               job->file);
  int64_t n = (gpus + G - 1) / G;
  if (n < 2 || n > FS_TOPOOPT_MAX_SERVERS)
    return fs_err_set(err, FS_EINVAL,
                      "%s: $.parallelism: the job spans %lld servers of %lld GPUs; a "
                      "direct-connect fabric needs 2 to %d",
                      job->file, (long long)n, (long long)G, FS_TOPOOPT_MAX_SERVERS);
  fs_topoopt_traffic *t;
  int rc = fs_topoopt_traffic_new((int32_t)n, &t, err);
  if (rc) return rc;
  const int64_t tp = job->par.tp, dp = job->par.dp, pp = job->par.pp, ep = job->par.ep;
  const int64_t v = job->par.virtual_stages;
  int32_t *ring = fs__malloc((size_t)dp, sizeof(int32_t));
  int32_t *scratch = fs__malloc((size_t)dp, sizeof(int32_t));
  if (!ring || !scratch) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto done;
  }
  const double mb = (double)fs_work_microbatches(job), ppb = fs_work_pp_bytes(job);
  for (int32_t s = 0; s < pp && !rc; s++) {
    fs_work_comm c;
    fs_work_comm_stage(job, s, &c);
    double dense = c.kind[FS_PAR_DP].wire_bytes - c.dp_expert.wire_bytes;
    for (int32_t j = 0; j < tp && !rc; j++) {
      fs_rank_coords rc0 = {j, 0, s, 0, 0, 0};
      /* Dense gradients: one ring over the dp ranks, in rank order. */
      for (int32_t r = 0; r < dp; r++) {
        rc0.dp = r;
        ring[r] = fs_job_gpu_of(job, &rc0);
      }
      if ((rc = gpu_ring(t, ring, (int32_t)dp, G, dense, scratch, err))) break;
      /* Expert gradients: rings over the ranks holding the same experts. */
      for (int32_t e = 0; e < ep && ep > 1 && !rc; e++) {
        int32_t k = 0;
        for (int32_t r = e; r < dp; r += (int32_t)ep) {
          rc0.dp = r;
          ring[k++] = fs_job_gpu_of(job, &rc0);
        }
        rc = gpu_ring(t, ring, k, G, c.dp_expert.wire_bytes, scratch, err);
      }
      for (int32_t r = 0; r < dp && !rc; r++) {
        rc0.dp = r;
        rc0.pp = s;
        int32_t me = fs_job_gpu_of(job, &rc0);
        int32_t su = (int32_t)(me / G);
        /* Pipeline: each chunk but the last sends forward, each but the
         * first backward, once per micro-batch (as fs_work_comm_stage). */
        for (int64_t k = 0; k < v && pp > 1; k++) {
          int64_t ch = k * pp + s;
          fs_rank_coords o = rc0;
          if (ch < pp * v - 1) {
            o.pp = (int32_t)((s + 1) % pp);
            int32_t sv = (int32_t)(fs_job_gpu_of(job, &o) / G);
            if (sv != su) t->mp[(size_t)su * n + sv] += mb * ppb;
          }
          if (ch > 0) {
            o.pp = (int32_t)((s + pp - 1) % pp);
            int32_t sv = (int32_t)(fs_job_gpu_of(job, &o) / G);
            if (sv != su) t->mp[(size_t)su * n + sv] += mb * ppb;
          }
        }
        /* Expert all-to-all: the ep ranks of one expert-data-parallel
         * group, (n-1)/n of the buffer split evenly over the peers. */
        if (ep > 1 && c.kind[FS_PAR_EP].wire_bytes > 0) {
          int32_t base = (int32_t)(r - r % ep);
          for (int32_t q = base; q < base + ep; q++) {
            if (q == r) continue;
            fs_rank_coords o = rc0;
            o.dp = q;
            int32_t sv = (int32_t)(fs_job_gpu_of(job, &o) / G);
            if (sv != su)
              t->mp[(size_t)su * n + sv] += c.kind[FS_PAR_EP].wire_bytes / (double)(ep - 1);
          }
        }
        /* Tied embeddings: first and last stage exchange the gradient. */
        if (c.emb.wire_bytes > 0 && (s == 0 || s == pp - 1)) {
          fs_rank_coords o = rc0;
          o.pp = (int32_t)(s == 0 ? pp - 1 : 0);
          int32_t sv = (int32_t)(fs_job_gpu_of(job, &o) / G);
          if (sv != su) t->mp[(size_t)su * n + sv] += c.emb.wire_bytes;
        }
      }
    }
  }
done:
  free(ring);
  free(scratch);
  if (rc) {
    fs_topoopt_traffic_free(t);
    return rc;
  }
  *out = t;
  return 0;
}

/* ---- graphs ---------------------------------------------------------------- */

int fs_topoopt_graph_new(int32_t n, int32_t degree, fs_topoopt_graph **out, fs_err *err) {
  if (n < 2 || n > FS_TOPOOPT_MAX_SERVERS)
    return fs_err_set(err, FS_EINVAL, "topoopt: servers must be in [2, %d], got %d",
                      FS_TOPOOPT_MAX_SERVERS, n);
  if (degree < 1 || degree > FS_TOPOOPT_MAX_DEGREE)
    return fs_err_set(err, FS_EINVAL, "topoopt: degree must be in [1, %d], got %d",
                      FS_TOPOOPT_MAX_DEGREE, degree);
  fs_topoopt_graph *g = fs__calloc(1, sizeof(*g));
  if (!g || !(g->mult = fs__calloc((size_t)n * (size_t)n, sizeof(int32_t)))) {
    free(g);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  g->n = n;
  g->degree = degree;
  *out = g;
  return 0;
}

void fs_topoopt_graph_free(fs_topoopt_graph *g) {
  if (!g) return;
  free(g->mult);
  free(g);
}

int fs_topoopt_graph_check(const fs_topoopt_graph *g, fs_err *err) {
  int32_t n = g->n;
  for (int32_t u = 0; u < n; u++) {
    int32_t deg = 0;
    for (int32_t v = 0; v < n; v++) {
      int32_t x = g->mult[(size_t)u * n + v];
      if (x < 0) return fs_err_set(err, FS_EINVAL, "topoopt: %d circuits %d-%d", x, u, v);
      if (x != g->mult[(size_t)v * n + u])
        return fs_err_set(err, FS_EINVAL, "topoopt: circuits %d-%d not symmetric", u, v);
      if (u == v && x)
        return fs_err_set(err, FS_EINVAL, "topoopt: server %d has a circuit to itself", u);
      deg += x;
    }
    if (deg > g->degree)
      return fs_err_set(err, FS_EINVAL, "topoopt: server %d has %d circuits, degree is %d", u,
                        deg, g->degree);
  }
  return 0;
}

int32_t fs_topoopt_graph_circuits(const fs_topoopt_graph *g) {
  int32_t c = 0;
  for (int32_t u = 0; u < g->n; u++)
    for (int32_t v = u + 1; v < g->n; v++) c += g->mult[(size_t)u * g->n + v];
  return c;
}

static void add_circuit(fs_topoopt_graph *g, int32_t *deg, int32_t u, int32_t v, int32_t k) {
  g->mult[(size_t)u * g->n + v] += k;
  g->mult[(size_t)v * g->n + u] += k;
  deg[u] += k;
  deg[v] += k;
}

/* ---- TotientPerms ------------------------------------------------------------ */

int32_t fs_topoopt_totient_strides(int32_t m, int32_t r, int32_t *strides) {
  if (m < 2 || r < 1) return 0;
  int32_t half = m / 2, avail = 0;
  for (int32_t k = 1; k <= half; k++) avail += fs__gcd32(k, m) == 1;
  if (r > avail) r = avail;
  int32_t got = 0;
  for (int32_t i = 0; i < r; i++) {
    /* Target m^(i/r): stride 1, then geometric, so a hop on each ring
     * covers a different scale of ring distance (few hops between any two
     * servers of the group, as Chord-like circulants do). */
    double target = i == 0 ? 1 : pow((double)m, (double)i / (double)r);
    int32_t best = -1;
    double bd = 0;
    for (int32_t k = 1; k <= half; k++) {
      if (fs__gcd32(k, m) != 1) continue;
      int used = 0;
      for (int32_t j = 0; j < got && !used; j++) used = strides[j] == k;
      if (used) continue;
      double dd = fabs((double)k - target);
      if (best < 0 || dd < bd) best = k, bd = dd;
    }
    strides[got++] = best;
  }
  return got;
}

/* ---- heuristic ------------------------------------------------------------------ */

void fs_topoopt_opts_init(fs_topoopt_opts *o, int32_t degree, double gbps) {
  memset(o, 0, sizeof(*o));
  o->degree = degree;
  o->gbps = gbps;
  o->seed = 1;
  o->ar_rings = -1;
  o->ls_evals = -1;
}

static int check_opts(const fs_topoopt_opts *o, fs_err *err) {
  if (o->degree < 1 || o->degree > FS_TOPOOPT_MAX_DEGREE)
    return fs_err_set(err, FS_EINVAL, "topoopt: degree must be in [1, %d], got %d",
                      FS_TOPOOPT_MAX_DEGREE, o->degree);
  return fs_topo_check_gbps("topoopt", o->gbps, "gbps", err);
}

/* Both directions' bytes between u and v. */
static double pair_w(const fs_topoopt_traffic *t, int32_t u, int32_t v) {
  size_t n = (size_t)t->n;
  return t->ar[u * n + v] + t->ar[v * n + u] + t->mp[u * n + v] + t->mp[v * n + u];
}

static int32_t find(int32_t *p, int32_t x) {
  while (p[x] != x) x = p[x] = p[p[x]];
  return x;
}

/* Spare ports: pair servers with free ports, joining components first,
 * then the pair with the fewest circuits, then the most traffic. Extra
 * capacity never lowers the objective. */
static void fill_spare(const fs_topoopt_traffic *t, fs_topoopt_graph *g, int32_t *deg,
                       int32_t *par) {
  int32_t n = g->n, d = g->degree;
  for (;;) {
    for (int32_t i = 0; i < n; i++) par[i] = i;
    for (int32_t u = 0; u < n; u++)
      for (int32_t v = u + 1; v < n; v++)
        if (g->mult[(size_t)u * n + v]) par[find(par, u)] = find(par, v);
    int32_t bu = -1, bv = -1, bjoin = 0, bm = 0;
    double bw = 0;
    for (int32_t u = 0; u < n; u++) {
      if (deg[u] >= d) continue;
      for (int32_t v = u + 1; v < n; v++) {
        if (deg[v] >= d) continue;
        int join = find(par, u) != find(par, v);
        int32_t m = g->mult[(size_t)u * n + v];
        double w = pair_w(t, u, v);
        if (bu < 0 || join > bjoin || (join == bjoin && (m < bm || (m == bm && w > bw)))) {
          bu = u, bv = v, bjoin = join, bm = m, bw = w;
        }
      }
    }
    if (bu >= 0) {
      add_circuit(g, deg, bu, bv, 1);
      continue;
    }
    /* One server u left with >= 2 free ports: split the circuit a-b that
     * carries the least traffic per circuit into a-u and u-b. */
    int32_t u = -1;
    for (int32_t x = 0; x < n && u < 0; x++)
      if (deg[x] + 2 <= d) u = x;
    if (u < 0) return;
    int32_t sa = -1, sb = -1;
    double sw = 0;
    for (int32_t a = 0; a < n; a++)
      for (int32_t c = a + 1; c < n; c++) {
        int32_t m = g->mult[(size_t)a * n + c];
        if (a == u || c == u || m == 0) continue;
        double w = pair_w(t, a, c) / m;
        if (sa < 0 || w < sw) sa = a, sb = c, sw = w;
      }
    if (sa < 0) return;
    add_circuit(g, deg, sa, sb, -1);
    add_circuit(g, deg, sa, u, 1);
    add_circuit(g, deg, u, sb, 1);
  }
}

/* One candidate: r rings per group, then matching, then spare ports. */
static void construct(const fs_topoopt_traffic *t, int32_t r, fs_topoopt_graph *g,
                      int32_t *deg, int32_t *order, int32_t *par) {
  int32_t n = g->n, d = g->degree;
  memset(g->mult, 0, (size_t)n * (size_t)n * sizeof(int32_t));
  memset(deg, 0, (size_t)n * sizeof(int32_t));
  g->n_rings = 0;
  /* Groups by bytes, heaviest first (index breaks ties). */
  for (int32_t i = 0; i < t->n_groups; i++) order[i] = i;
  for (int32_t i = 1; i < t->n_groups; i++)
    for (int32_t j = i; j > 0 && t->group_bytes[order[j]] > t->group_bytes[order[j - 1]]; j--) {
      int32_t x = order[j];
      order[j] = order[j - 1];
      order[j - 1] = x;
    }
  int32_t strides[FS_TOPOOPT_MAX_DEGREE];
  for (int32_t oi = 0; oi < t->n_groups && r > 0; oi++) {
    int32_t gi = order[oi], a = t->group_start[gi], m = t->group_start[gi + 1] - a;
    const int32_t *s = t->group_servers + a;
    int32_t need = m == 2 ? 1 : 2;
    int32_t ns = fs_topoopt_totient_strides(m, r, strides);
    /* Fewer distinct strides than rings: repeat them (parallel circuits). */
    for (int32_t i = 0; i < r; i++) {
      int32_t k = strides[i % ns];
      int fits = 1;
      for (int32_t j = 0; j < m && fits; j++) fits = deg[s[j]] + need <= d;
      if (!fits) break;
      for (int32_t j = 0; j < (m == 2 ? 1 : m); j++) add_circuit(g, deg, s[j], s[(j + k) % m], 1);
      if (g->n_rings < FS_TOPOOPT_MAX_RINGS) {
        g->ring_group[g->n_rings] = gi;
        g->ring_stride[g->n_rings++] = k;
      }
    }
  }
  /* Greedy b-matching: the pair with the most traffic per circuit it would
   * then have (w / (x + 1)), both ends with a free port. */
  for (;;) {
    int32_t bu = -1, bv = -1;
    double bs = 0;
    for (int32_t u = 0; u < n; u++) {
      if (deg[u] >= d) continue;
      for (int32_t v = u + 1; v < n; v++) {
        if (deg[v] >= d) continue;
        double sc = pair_w(t, u, v) / (double)(g->mult[(size_t)u * n + v] + 1);
        if (sc > bs) bs = sc, bu = u, bv = v;
      }
    }
    if (bu < 0) break;
    add_circuit(g, deg, bu, bv, 1);
  }
  fill_spare(t, g, deg, par);
}

/* Lexicographic: less demand left without a path, then less time. */
static int better(const fs_topoopt_eval *a, const fs_topoopt_eval *b) {
  if (a->unserved_frac < b->unserved_frac - 1e-12) return 1;
  if (a->unserved_frac > b->unserved_frac + 1e-12) return 0;
  return a->time_s < b->time_s * (1 - 1e-9);
}

/* Circuits listed with multiplicity (u < v), in index order. */
static int32_t list_edges(const fs_topoopt_graph *g, int32_t *eu, int32_t *ev) {
  int32_t k = 0, n = g->n;
  for (int32_t u = 0; u < n; u++)
    for (int32_t v = u + 1; v < n; v++)
      for (int32_t c = 0; c < g->mult[(size_t)u * n + v]; c++) eu[k] = u, ev[k++] = v;
  return k;
}

static void set_pair(fs_topoopt_graph *g, int32_t u, int32_t v, int32_t delta) {
  g->mult[(size_t)u * g->n + v] += delta;
  g->mult[(size_t)v * g->n + u] += delta;
}

/* Swap circuits i and j of the list: (a-b, c-e) -> (a-c, b-e) (variant 0)
 * or (a-e, b-c); keeps every degree. Returns 0 if it would make a self
 * circuit or change nothing. */
static int swap(fs_topoopt_graph *g, const int32_t *eu, const int32_t *ev, int32_t i, int32_t j,
                int variant, int undo) {
  int32_t a = eu[i], b = ev[i], c = eu[j], e = ev[j];
  int32_t q1 = variant ? e : c, q2 = variant ? c : e;
  if (a == q1 || b == q2) return 0;
  if ((a == c && b == e) || (a == e && b == c)) return 0;
  int32_t s = undo ? -1 : 1;
  set_pair(g, a, b, -s);
  set_pair(g, c, e, -s);
  set_pair(g, a, q1, s);
  set_pair(g, b, q2, s);
  return 1;
}

typedef struct ls_state {
  const fs_topoopt_traffic *t;
  const fs_topoopt_opts *o;
  int32_t *eu, *ev;
  int64_t *moves;
  size_t moves_cap;
  int32_t budget;
  fs__rng rng;
} ls_state;

/* First-improvement descent over all swaps in a seeded order (a sample
 * of `budget` when the neighbourhood is larger), until a full pass finds
 * nothing or the budget is spent. */
static int descend(ls_state *s, fs_topoopt_graph *g, fs_topoopt_eval *cur, fs_err *err) {
  int improved = 1;
  while (improved && s->budget > 0) {
    improved = 0;
    int32_t k = list_edges(g, s->eu, s->ev);
    int64_t np = (int64_t)k * (k - 1);
    if (np <= 0) return 0;
    int64_t take = np < s->budget ? np : s->budget;
    if (fs__grow(&s->moves, &s->moves_cap, (size_t)take, sizeof(int64_t)))
      return fs_err_set(err, FS_ENOMEM, "out of memory");
    if (take == np) {
      for (int64_t i = 0; i < np; i++) s->moves[i] = i;
      for (int64_t i = np - 1; i > 0; i--) {
        int64_t j = (int64_t)fs__rng_below(&s->rng, (uint64_t)i + 1), x = s->moves[i];
        s->moves[i] = s->moves[j];
        s->moves[j] = x;
      }
    } else {
      for (int64_t i = 0; i < take; i++)
        s->moves[i] = (int64_t)fs__rng_below(&s->rng, (uint64_t)np);
    }
    for (int64_t m = 0; m < take && s->budget > 0 && !improved; m++) {
      /* code -> (i, j, variant) with i < j */
      int64_t code = s->moves[m] >> 1, pairs_left = code;
      int variant = (int)(s->moves[m] & 1);
      int32_t i = 0;
      while (pairs_left >= k - 1 - i) pairs_left -= k - 1 - i, i++;
      int32_t j = (int32_t)(i + 1 + pairs_left);
      if (!swap(g, s->eu, s->ev, i, j, variant, 0)) continue;
      fs_topoopt_eval e;
      s->budget--;
      int rc = fs_topoopt_evaluate(s->t, g, s->o->gbps, &e, err);
      if (rc) return rc;
      if (better(&e, cur)) {
        *cur = e;
        improved = 1;
      } else {
        swap(g, s->eu, s->ev, i, j, variant, 1);
      }
    }
  }
  return 0;
}

/* Iterated local search: descend, keep the best graph, kick the best with
 * two random swaps, descend again, until the budget is spent. */
static int local_search(const fs_topoopt_traffic *t, const fs_topoopt_opts *o,
                        fs_topoopt_graph *g, fs_topoopt_eval *best, int32_t budget,
                        fs_err *err) {
  size_t nn = (size_t)g->n * (size_t)g->n;
  int32_t E = g->n * g->degree / 2 + 1;
  ls_state s = {t, o, NULL, NULL, NULL, 0, budget, {0}};
  int32_t *keep = fs__malloc(nn, sizeof(int32_t));
  s.eu = fs__malloc((size_t)E, sizeof(int32_t));
  s.ev = fs__malloc((size_t)E, sizeof(int32_t));
  int rc = 0;
  if (!keep || !s.eu || !s.ev) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto out;
  }
  fs__rng_seed(&s.rng, o->seed);
  memcpy(keep, g->mult, nn * sizeof(int32_t));
  fs_topoopt_eval cur = *best;
  while (s.budget > 0) {
    if ((rc = descend(&s, g, &cur, err))) goto out;
    if (better(&cur, best)) {
      *best = cur;
      memcpy(keep, g->mult, nn * sizeof(int32_t));
    } else {
      memcpy(g->mult, keep, nn * sizeof(int32_t));
    }
    if (s.budget <= 0) break;
    int32_t k = list_edges(g, s.eu, s.ev);
    if (k < 2) break;
    for (int kick = 0; kick < 2; kick++) {
      k = list_edges(g, s.eu, s.ev);
      int32_t i = (int32_t)fs__rng_below(&s.rng, (uint64_t)k);
      int32_t j = (int32_t)fs__rng_below(&s.rng, (uint64_t)k);
      if (i != j)
        swap(g, s.eu, s.ev, i < j ? i : j, i < j ? j : i, (int)fs__rng_below(&s.rng, 2), 0);
    }
    s.budget--;
    if ((rc = fs_topoopt_evaluate(t, g, o->gbps, &cur, err))) goto out;
  }
  memcpy(g->mult, keep, nn * sizeof(int32_t));
out:
  FS__FREE_ALL(keep, s.eu, s.ev, s.moves);
  return rc;
}

int fs_topoopt_optimize(const fs_topoopt_traffic *t, const fs_topoopt_opts *o,
                        fs_topoopt_graph **out, fs_topoopt_eval *ev, fs_err *err) {
  int rc = check_opts(o, err);
  if (rc) return rc;
  int32_t n = t->n, d = o->degree;
  fs_topoopt_graph *g = NULL, *cand = NULL;
  int32_t *deg = fs__malloc((size_t)n, sizeof(int32_t));
  int32_t *par = fs__malloc((size_t)n, sizeof(int32_t));
  int32_t *order = fs__malloc((size_t)t->n_groups + 1, sizeof(int32_t));
  if (!deg || !par || !order) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    goto fail;
  }
  if ((rc = fs_topoopt_graph_new(n, d, &g, err)) || (rc = fs_topoopt_graph_new(n, d, &cand, err)))
    goto fail;
  /* Rings per group: the given count, or every count 0..d (a 2-server
   * group's ring takes one port, a larger one two) keeping the best. */
  int32_t r_lo = o->ar_rings >= 0 ? o->ar_rings : 0, r_hi = o->ar_rings >= 0 ? o->ar_rings : d;
  fs_topoopt_eval best = {INFINITY, 0, 0, 1};
  int have = 0;
  for (int32_t r = r_lo; r <= r_hi; r++) {
    construct(t, r, cand, deg, order, par);
    fs_topoopt_eval e;
    if ((rc = fs_topoopt_evaluate(t, cand, o->gbps, &e, err))) goto fail;
    if (!have || better(&e, &best)) {
      best = e;
      have = 1;
      fs_topoopt_graph *x = g;
      g = cand;
      cand = x;
    }
  }
  int32_t budget = o->ls_evals >= 0 ? o->ls_evals : (n <= 16 ? 4000 : n <= 64 ? 60 : 0);
  if (budget > 0 && (rc = local_search(t, o, g, &best, budget, err))) goto fail;
  fs_topoopt_graph_free(cand);
  FS__FREE_ALL(deg, par, order);
  *out = g;
  if (ev) *ev = best;
  return 0;
fail:
  fs_topoopt_graph_free(g);
  fs_topoopt_graph_free(cand);
  FS__FREE_ALL(deg, par, order);
  return rc;
}

/* ---- random baseline --------------------------------------------------------------- */

int fs_topoopt_random(int32_t n, int32_t degree, uint64_t seed, fs_topoopt_graph **out,
                      fs_err *err) {
  fs_topoopt_graph *g;
  int rc = fs_topoopt_graph_new(n, degree, &g, err);
  if (rc) return rc;
  int64_t k = (int64_t)n * degree;
  int32_t *stub = fs__malloc((size_t)k, sizeof(int32_t));
  int32_t *deg = fs__calloc((size_t)n, sizeof(int32_t));
  if (!stub || !deg) {
    free(stub);
    free(deg);
    fs_topoopt_graph_free(g);
    return fs_err_set(err, FS_ENOMEM, "out of memory");
  }
  for (int64_t i = 0; i < k; i++) stub[i] = (int32_t)(i / degree);
  fs__rng rng;
  fs__rng_seed(&rng, seed);
  for (int64_t i = k - 1; i > 0; i--) {
    int64_t j = (int64_t)fs__rng_below(&rng, (uint64_t)i + 1);
    int32_t x = stub[i];
    stub[i] = stub[j];
    stub[j] = x;
  }
  for (int64_t i = 0; i + 1 < k; i += 2)
    if (stub[i] != stub[i + 1]) add_circuit(g, deg, stub[i], stub[i + 1], 1);
  free(stub);
  free(deg);
  *out = g;
  return 0;
}

/* ---- the fabric ------------------------------------------------------------------------ */

int fs_topoopt_build_topo(const fs_topoopt_graph *g, const fs_job *job, double gbps,
                          int64_t latency_ns, fs_topo **out, fs_err *err) {
  int rc = fs_topo_check_link("topoopt", gbps, "gbps", latency_ns, err);
  if (rc) return rc;
  if ((rc = fs_topoopt_graph_check(g, err))) return rc;
  int32_t n = g->n;
  int64_t G = job->hw.gpus_per_node;
  double nic = (double)job->hw.nics_per_gpu * job->hw.nic_gbps;
  if ((rc = fs_topo_check_gbps("topoopt", nic, "nics_per_gpu x nic_gbps", err))) return rc;
  fs_server_params sv = fs_server_defaults((int32_t)G);
  if (G > 1) sv.nvlink_gbps = job->hw.nvlink_gbps;
  if (job->topo && job->topo->gpus_per_node > 1 && job->topo->nic0 >= 0) {
    /* Keep the job's own PCIe links (GPU 0 -> NIC 0). */
    const fs_topo *jt = job->topo;
    for (int32_t e = jt->out_start[0]; e < jt->out_start[1]; e++) {
      const fs_link *l = &jt->links[jt->out_links[e]];
      if (l->to == jt->nic0)
        sv.pcie_gbps = l->capacity_bps / 1e9, sv.pcie_latency_ns = l->latency_ns;
    }
  }
  fs_server_params svc;
  int64_t hosts = (int64_t)n * G;
  if ((rc = fs_topo_servers_check("topoopt", &sv, hosts, "GPUs", "", &svc, err))) return rc;
  int64_t nodes = hosts + n + fs_topo_servers_nodes(&svc, hosts);
  int64_t cables = hosts + fs_topoopt_graph_circuits(g) + fs_topo_servers_cables(&svc, hosts);
  if ((rc = fs_topo_check_size("topoopt", nodes, cables, err))) return rc;
  fs_topo_builder b;
  if ((rc = fs_topo_builder_init(&b, "topoopt", (int32_t)nodes, (int32_t)(2 * cables), err)))
    return rc;
  for (int32_t h = 0; h < hosts; h++)
    TRY(fs_topo_builder_node(&b, FS_NODE_HOST, 0, h, (int32_t)(h / G)));
  int32_t sw0 = (int32_t)hosts;
  for (int32_t s = 0; s < n; s++) TRY(fs_topo_builder_node(&b, FS_NODE_SWITCH, 1, s, s));
  TRY(fs_topo_builder_servers_begin(&b, &svc, (int32_t)hosts));
  for (int32_t h = 0; h < hosts; h++)
    TRY(fs_topo_builder_cable(&b, fs_topo_builder_port(&b, h), sw0 + (int32_t)(h / G), nic * 1e9,
                              latency_ns));
  for (int32_t u = 0; u < n; u++)
    for (int32_t v = u + 1; v < n; v++)
      for (int32_t c = 0; c < g->mult[(size_t)u * n + v]; c++)
        TRY(fs_topo_builder_cable(&b, sw0 + u, sw0 + v, gbps * 1e9, latency_ns));
  snprintf(b.t->spec, sizeof(b.t->spec), "topoopt:servers=%d,degree=%d,gbps=%g,circuits=%d",
           n, g->degree, gbps, fs_topoopt_graph_circuits(g));
  TRY(fs_topo_builder_servers_end(&b, &svc, (int32_t)hosts));
  return fs_topo_builder_finish(&b, out, err);
oom:
  fs_topo_builder_abort(&b);
  return fs_err_set(err, FS_ENOMEM, "out of memory building topoopt");
}

/* ---- cost ------------------------------------------------------------------------------ */

/* Estimates per port (docs/model-topoopt.md gives the sources): a robotic
 * fiber patch panel (Telescent-class, ~1000 ports) and a MEMS OCS
 * (Google Apollo/Palomar-class, 136 ports). */
fs_topoopt_ocs_part fs_topoopt_ocs_defaults(fs_topoopt_switch kind) {
  if (kind == FS_TOPOOPT_OCS) return (fs_topoopt_ocs_part){520, 0.8};
  return (fs_topoopt_ocs_part){100, 0.1};
}

void fs_topoopt_cost(const fs_topoopt_graph *g, double gbps, const fs_cost_table *c,
                     fs_topoopt_ocs_part ocs, fs_topo_cost *o, double *ocs_usd,
                     double *ocs_watts) {
  memset(o, 0, sizeof(*o));
  int64_t ports = (int64_t)g->n * g->degree, circ = fs_topoopt_graph_circuits(g);
  /* Every port is bought: a NIC port, its transceiver and its OCS port. A
   * circuit's fiber runs server -> OCS -> server (2 x fabric_m). */
  fs_cost_add(o, c, FS_PART_NIC, gbps, ports);
  fs_cost_add(o, c, c->fabric_m <= c->sr_max_m ? FS_PART_XCVR_SR : FS_PART_XCVR_DR, gbps, ports);
  o->fiber_m = 2 * c->fabric_m * (double)circ;
  o->fiber_usd = o->fiber_m * c->fiber_usd_per_m;
  double ou = ocs.usd_per_port * (double)ports, ow = ocs.watts_per_port * (double)ports;
  o->usd = o->fiber_usd + ou;
  o->watts = ow;
  for (int p = 0; p < FS_PART_COUNT; p++) {
    o->usd += o->part[p].usd;
    o->watts += o->part[p].watts;
  }
  if (ocs_usd) *ocs_usd = ou;
  if (ocs_watts) *ocs_watts = ow;
}
