/* Lazy lowering (sim.h "plans", src/sim/lazy.c): a plan instance, whose
 * items exist only while they run, gives bit for bit the run of the same
 * items added one by one (as the training module's eager copy of a
 * template adds them: items in order, then dependencies, then the after
 * edges to the start). Random programs of added flows, tasks,
 * dependencies and instances are built twice, eagerly and lazily, on
 * fabrics with and without pruned links, and every added item's times,
 * every link's bytes, busy time and bins, the counters and each instance's
 * latest finish must be equal (==, not to a tolerance). The training
 * module's results with and without keep_flows likewise. */
#include <stdlib.h>
#include <string.h>

#include "../src/base/base.h"
#include "fabricsim/route.h"
#include "fabricsim/sim.h"
#include "fabricsim/train.h"
#include "test.h"
#include "train_harness.h"

enum { MAX_ITEMS = 40, MAX_MEMBERS = 6 };

typedef struct rplan {
  fs_sim_plan_item items[MAX_ITEMS];
  int32_t deps[4 * MAX_ITEMS][3];
  int32_t n, n_deps, members;
} rplan;

/* A random plan: start (item 0), flows and tasks each depending on the
 * start or on one or two earlier items ("sent" on a flow now and then),
 * done (the last) joining every item nothing waits for. */
static void random_plan(fs__rng *g, rplan *p) {
  p->members = 2 + (int32_t)fs__rng_below(g, MAX_MEMBERS - 1);
  p->n = 3 + (int32_t)fs__rng_below(g, MAX_ITEMS - 3);
  p->n_deps = 0;
  int has_dep[MAX_ITEMS] = {0};
  p->items[0] = (fs_sim_plan_item){FS_ITEM_TASK, 0, 0, 0};
  for (int32_t i = 1; i < p->n - 1; i++) {
    fs_sim_plan_item *it = &p->items[i];
    if (fs__rng_below(g, 4)) {
      int32_t a = (int32_t)fs__rng_below(g, (uint64_t)p->members);
      int32_t b = (a + 1 + (int32_t)fs__rng_below(g, (uint64_t)p->members - 1)) % p->members;
      double sizes[] = {0, 1e3, 6e4, 1e6, 3e6};
      *it = (fs_sim_plan_item){FS_ITEM_FLOW, a, b, sizes[fs__rng_below(g, 5)]};
    } else {
      *it = (fs_sim_plan_item){FS_ITEM_TASK, (int32_t)fs__rng_below(g, (uint64_t)p->members), 0,
                               1e-6 * (double)fs__rng_below(g, 50)};
    }
    int32_t nd = 1 + (int32_t)fs__rng_below(g, 2);
    for (int32_t k = 0; k < nd; k++) {
      int32_t b = k == 0 && fs__rng_below(g, 3) == 0 ? 0 : (int32_t)fs__rng_below(g, (uint64_t)i);
      int sent = p->items[b].kind == FS_ITEM_FLOW && fs__rng_below(g, 3) == 0;
      p->deps[p->n_deps][0] = b;
      p->deps[p->n_deps][1] = i;
      p->deps[p->n_deps][2] = sent;
      p->n_deps++;
      has_dep[b] = 1;
    }
  }
  int32_t done = p->n - 1;
  p->items[done] = (fs_sim_plan_item){FS_ITEM_TASK, 0, 0, 2e-6};
  for (int32_t i = 0; i < done; i++)
    if (!has_dep[i]) {
      p->deps[p->n_deps][0] = i;
      p->deps[p->n_deps][1] = done;
      p->deps[p->n_deps][2] = 0;
      p->n_deps++;
    }
}

typedef struct twin {
  fs_sim *s[2];        /* eager, lazy */
  int32_t *id[2];      /* per program item: its id in each */
  int32_t n, cap;
  int32_t starts[2][64], dones[2][64]; /* per instance */
  int32_t first[64], last[64];         /* eager ids of each instance's items */
  int32_t n_inst;
} twin;

static void note(twin *w, int32_t a, int32_t b) {
  if (w->n == w->cap) {
    w->cap = w->cap ? 2 * w->cap : 64;
    w->id[0] = realloc(w->id[0], (size_t)w->cap * sizeof(int32_t));
    w->id[1] = realloc(w->id[1], (size_t)w->cap * sizeof(int32_t));
  }
  w->id[0][w->n] = a;
  w->id[1][w->n] = b;
  w->n++;
}

/* Plan p on hosts: eagerly into w->s[0] (the template copy's order),
 * lazily into w->s[1]; both after program items after[0..na). */
static void add_instance(twin *w, const rplan *rp, const fs_sim_plan *plan, const int32_t *hosts,
                         fs_route_cache *rc, const int32_t *after, int32_t na) {
  fs_err err = {0, ""};
  fs_sim *e = w->s[0];
  int32_t base = fs_sim_n_items(e);
  for (int32_t i = 0; i < rp->n; i++) {
    const fs_sim_plan_item *it = &rp->items[i];
    if (it->kind == FS_ITEM_FLOW) {
      const fs_route *r;
      CHECK_OK(fs_route_cache_get(rc, hosts[it->a], hosts[it->b], &r, &err), &err);
      CHECK(fs_sim_add_flow_ref(e, hosts[it->a], hosts[it->b], it->value, 0, r, &err) >= 0);
    } else {
      CHECK(fs_sim_add_task_s(e, hosts[it->a], 0, it->value, &err) >= 0);
    }
  }
  for (int32_t k = 0; k < rp->n_deps; k++) {
    int32_t a = base + rp->deps[k][0], b = base + rp->deps[k][1];
    CHECK_OK(rp->deps[k][2] ? fs_sim_add_dep_sent(e, a, b, &err) : fs_sim_add_dep(e, a, b, &err),
             &err);
  }
  int32_t st, dn;
  CHECK_OK(fs_sim_add_plan(w->s[1], plan, hosts, rc, &st, &dn, &err), &err);
  for (int32_t k = 0; k < na; k++) {
    CHECK_OK(fs_sim_add_dep(e, w->id[0][after[k]], base, &err), &err);
    CHECK_OK(fs_sim_add_dep(w->s[1], w->id[1][after[k]], st, &err), &err);
  }
  int32_t i = w->n_inst++;
  w->starts[0][i] = base;
  w->dones[0][i] = base + rp->n - 1;
  w->starts[1][i] = st;
  w->dones[1][i] = dn;
  w->first[i] = base;
  w->last[i] = base + rp->n;
  note(w, base, st);            /* (the program may depend on the start...) */
  note(w, base + rp->n - 1, dn); /* (...and on the done) */
}

/* One random program on spec with routing mode; compares the two runs. */
static void one_program(uint64_t seed, const char *spec, fs_route_mode mode) {
  fs__rng g;
  fs__rng_seed(&g, seed);
  fs_err err = {0, ""};
  fs_topo *t = NULL;
  fs_router *router = NULL;
  fs_route_cache *rc = NULL;
  CHECK_OK(fs_topo_from_spec(spec, &t, &err), &err);
  if (!t) return;
  CHECK_OK(fs_router_new(t, &router, &err), &err);
  CHECK_OK(fs_route_cache_new(router, mode, seed, 0, &rc, &err), &err);
  twin w;
  memset(&w, 0, sizeof(w));
  CHECK_OK(fs_sim_new(t, &w.s[0], &err), &err);
  CHECK_OK(fs_sim_new(t, &w.s[1], &err), &err);
  rplan rp[3];
  fs_sim_plan *plan[3] = {NULL, NULL, NULL};
  for (int k = 0; k < 3; k++) {
    random_plan(&g, &rp[k]);
    CHECK_OK(fs_sim_plan_new(rp[k].items, rp[k].n, (const int32_t(*)[3])rp[k].deps, rp[k].n_deps,
                             0, rp[k].n - 1, rp[k].members, &plan[k], &err),
             &err);
  }
  int32_t H = t->n_hosts, steps = 20 + (int32_t)fs__rng_below(&g, 30);
  for (int32_t step = 0; step < steps && plan[0] && plan[1] && plan[2]; step++) {
    uint64_t what = fs__rng_below(&g, 5);
    int32_t after[2], na = 0;
    for (int32_t k = 0; k < 2 && w.n; k++)
      if (fs__rng_below(&g, 2)) after[na++] = (int32_t)fs__rng_below(&g, (uint64_t)w.n);
    if (what == 0 && w.n_inst < 64) { /* an instance on distinct random hosts */
      const rplan *p = &rp[fs__rng_below(&g, 3)];
      fs_sim_plan *pl = plan[p - rp];
      int32_t hosts[MAX_MEMBERS];
      for (int32_t m = 0; m < p->members; m++) {
        int fresh;
        do {
          hosts[m] = (int32_t)fs__rng_below(&g, (uint64_t)H);
          fresh = 1;
          for (int32_t j = 0; j < m; j++) fresh &= hosts[j] != hosts[m];
        } while (!fresh);
      }
      add_instance(&w, p, pl, hosts, rc, after, na);
    } else if (what <= 2) { /* a flow */
      int32_t a = (int32_t)fs__rng_below(&g, (uint64_t)H), b = (a + 1) % H;
      const fs_route *r;
      CHECK_OK(fs_route_cache_get(rc, a, b, &r, &err), &err);
      double bytes = 1e4 * (double)(1 + fs__rng_below(&g, 300));
      int32_t x = fs_sim_add_flow_ref(w.s[0], a, b, bytes, 0, r, &err);
      int32_t y = fs_sim_add_flow_ref(w.s[1], a, b, bytes, 0, r, &err);
      for (int32_t k = 0; k < na; k++) {
        CHECK_OK(fs_sim_add_dep(w.s[0], w.id[0][after[k]], x, &err), &err);
        CHECK_OK(fs_sim_add_dep(w.s[1], w.id[1][after[k]], y, &err), &err);
      }
      note(&w, x, y);
    } else { /* a task */
      int32_t h = (int32_t)fs__rng_below(&g, (uint64_t)H);
      double d = 1e-6 * (double)fs__rng_below(&g, 80);
      int32_t x = fs_sim_add_task_s(w.s[0], h, 0, d, &err);
      int32_t y = fs_sim_add_task_s(w.s[1], h, 0, d, &err);
      for (int32_t k = 0; k < na; k++) {
        CHECK_OK(fs_sim_add_dep(w.s[0], w.id[0][after[k]], x, &err), &err);
        CHECK_OK(fs_sim_add_dep(w.s[1], w.id[1][after[k]], y, &err), &err);
      }
      note(&w, x, y);
    }
  }
  fs_sim_opts o = {0};
  o.link_bins = 16;
  CHECK_OK(fs_sim_run(w.s[0], &o, &err), &err);
  CHECK_OK(fs_sim_run(w.s[1], &o, &err), &err);
  for (int32_t i = 0; i < w.n; i++) {
    CHECK(fs_sim_start_s(w.s[0], w.id[0][i]) == fs_sim_start_s(w.s[1], w.id[1][i]));
    CHECK(fs_sim_finish_s(w.s[0], w.id[0][i]) == fs_sim_finish_s(w.s[1], w.id[1][i]));
  }
  for (int32_t i = 0; i < w.n_inst; i++) { /* the latest finish of its items (but done) */
    double last = -INFINITY;
    for (int32_t it = w.first[i]; it < w.last[i] - 1; it++)
      last = fmax(last, fs_sim_finish_s(w.s[0], it));
    CHECK(fs_sim_last_finish_s(w.s[1], w.starts[1][i]) == last);
  }
  CHECK(fs_sim_makespan_s(w.s[0]) == fs_sim_makespan_s(w.s[1]));
  const fs_sim_link_stats *la = fs_sim_links(w.s[0]), *lb = fs_sim_links(w.s[1]);
  for (int32_t l = 0; l < t->n_links; l++) {
    CHECK(la[l].bytes == lb[l].bytes);
    CHECK(la[l].busy_s == lb[l].busy_s);
  }
  fs_sim_link_bins ba, bb;
  int ra = fs_sim_get_link_bins(w.s[0], &ba), rb = fs_sim_get_link_bins(w.s[1], &bb);
  CHECK_EQ_INT(ra, rb);
  if (!ra && !rb && ba.n_bins == bb.n_bins)
    CHECK(memcmp(ba.bytes, bb.bytes, (size_t)ba.n_bins * ba.stride * sizeof(double)) == 0);
  fs_sim_counters ca = fs_sim_get_counters(w.s[0]), cb = fs_sim_get_counters(w.s[1]);
  CHECK_EQ_INT(ca.events, cb.events);
  CHECK_EQ_INT(ca.batches, cb.batches);
  CHECK_EQ_INT(ca.flows_rerated, cb.flows_rerated);
  CHECK_EQ_INT(ca.max_active, cb.max_active);
  CHECK_EQ_INT(ca.links_left_out, cb.links_left_out);
  for (int k = 0; k < 3; k++) fs_sim_plan_free(plan[k]);
  fs_sim_free(w.s[0]);
  fs_sim_free(w.s[1]);
  free(w.id[0]);
  free(w.id[1]);
  fs_route_cache_free(rc);
  fs_router_free(router);
  fs_topo_free(t);
}

TEST(test_lazy_plans_run_as_added_items) {
  static const struct {
    const char *spec;
    fs_route_mode mode;
  } fabrics[] = {
      {"fattree:k=4", FS_ROUTE_SPRAY},  /* links left out of the rating */
      {"fattree:k=4", FS_ROUTE_ECMP},   /* every link may bind */
      {"leafspine:leaves=3,spines=1,hosts_per_leaf=3", FS_ROUTE_SHORTEST}, /* 3:1 */
      {"star:hosts=6", FS_ROUTE_SHORTEST},
  };
  for (uint64_t seed = 1; seed <= 40; seed++)
    one_program(seed, fabrics[seed % 4].spec, fabrics[seed % 4].mode);
}

/* Plans that are not DAGs hanging from their start, instances on nodes
 * that do not exist, and runs a plan cannot take part in are refused. */
TEST(test_lazy_bad_plans_refused) {
  fs_err err = {0, ""};
  fs_sim_plan *p = NULL;
  fs_sim_plan_item ok[3] = {{FS_ITEM_TASK, 0, 0, 0}, {FS_ITEM_FLOW, 0, 1, 1e3},
                            {FS_ITEM_TASK, 0, 0, 0}};
  int32_t deps[3][3] = {{0, 1, 0}, {1, 2, 0}, {2, 1, 0}};
  CHECK_EQ_INT(fs_sim_plan_new(ok, 3, (const int32_t(*)[3])deps, 3, 0, 2, 2, &p, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "cycle") != NULL);
  CHECK_EQ_INT(fs_sim_plan_new(ok, 3, (const int32_t(*)[3])deps, 1, 0, 2, 2, &p, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "depends on nothing") != NULL);
  CHECK_EQ_INT(fs_sim_plan_new(ok, 3, (const int32_t(*)[3])deps, 2, 1, 2, 2, &p, &err), FS_EINVAL);
  CHECK_EQ_INT(fs_sim_plan_new(ok, 3, (const int32_t(*)[3])deps, 2, 0, 2, 1, &p, &err), FS_EINVAL);
  int32_t sent[2][3] = {{0, 1, 1}, {1, 2, 0}}; /* "sent" on the start, a task */
  CHECK_EQ_INT(fs_sim_plan_new(ok, 3, (const int32_t(*)[3])sent, 2, 0, 2, 2, &p, &err), FS_EINVAL);
  CHECK_OK(fs_sim_plan_new(ok, 3, (const int32_t(*)[3])deps, 2, 0, 2, 2, &p, &err), &err);
  fs_topo *t = NULL;
  fs_router *r = NULL;
  fs_route_cache *rc = NULL;
  fs_sim *s = NULL;
  CHECK_OK(fs_topo_from_spec("star:hosts=4", &t, &err), &err);
  CHECK_OK(fs_router_new(t, &r, &err), &err);
  CHECK_OK(fs_route_cache_new(r, FS_ROUTE_SHORTEST, 1, 0, &rc, &err), &err);
  CHECK_OK(fs_sim_new(t, &s, &err), &err);
  int32_t st, dn, far[2] = {0, 99};
  CHECK_EQ_INT(fs_sim_add_plan(s, p, far, rc, &st, &dn, &err), FS_EINVAL);
  int32_t hosts[2] = {0, 1};
  CHECK_OK(fs_sim_add_plan(s, p, hosts, rc, &st, &dn, &err), &err);
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  CHECK_OK(fs_sim_set_transport(s, &tp, &err), &err);
  CHECK_EQ_INT(fs_sim_run(s, NULL, &err), FS_EINVAL);
  CHECK(strstr(err.msg, "fluid") != NULL);
  fs_sim_free(s);
  fs_route_cache_free(rc);
  fs_router_free(r);
  fs_topo_free(t);
  fs_sim_plan_free(p);
}

/* The training module's results are the same with its templates as plan
 * instances (the default) and as added items (keep_flows), bit for bit. */
TEST(test_lazy_train_same_results) {
  /* (with and without the symmetry: templates under it, whole lowerings
   * without; ECMP's per-collective route caches on gpt-13b) */
  static const char *const jobs[] = {"examples/gpt3-175b-railopt.json",
                                     "examples/moe-railopt.json", "examples/gpt-13b.json",
                                     "examples/topoopt-moe.json"};
  for (size_t j = 0; j < 2 * sizeof(jobs) / sizeof(jobs[0]); j++) {
    if (j == 3) continue; /* (the MoE example without symmetry: 10 s; covered by the others) */
    fs_job *job = NULL;
    fs_err err = {0, ""};
    CHECK_OK(fs_job_load(jobs[j / 2], &job, &err), &err);
    if (!job) continue;
    fs_train_result r[2];
    for (int keep = 0; keep < 2; keep++) {
      fs_train_opts o = {.no_compare = 1, .keep_flows = keep, .no_symmetry = (int)(j % 2)};
      CHECK_EQ_INT(test_train_run(job, &o, &r[keep]), 0);
    }
    CHECK(r[0].iter_s == r[1].iter_s);
    CHECK(r[0].compute_s == r[1].compute_s && r[0].bubble_s == r[1].bubble_s);
    CHECK_EQ_INT(r[0].flows, r[1].flows);
    CHECK_EQ_INT(r[0].tasks, r[1].tasks);
    CHECK_EQ_INT(r[0].flows_represented, r[1].flows_represented);
    for (int k = 0; k < FS_PAR_N; k++) {
      CHECK_EQ_INT(r[0].kind[k].colls, r[1].kind[k].colls);
      CHECK(r[0].kind[k].bytes == r[1].kind[k].bytes);
      CHECK(r[0].kind[k].busy_s == r[1].kind[k].busy_s);
      CHECK(r[0].kind[k].wire_bytes == r[1].kind[k].wire_bytes);
      CHECK(r[0].kind[k].exposed_s == r[1].kind[k].exposed_s);
    }
    CHECK_EQ_INT(r[0].counters.events, r[1].counters.events);
    CHECK_EQ_INT(r[0].counters.flows_rerated, r[1].counters.flows_rerated);
    CHECK_EQ_INT(r[0].counters.max_active, r[1].counters.max_active);
    fs_job_free(job);
  }
}
