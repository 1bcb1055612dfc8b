/* Tests of the family routings as routing modes (dor, minimal, valiant,
 * railonly): names round trip; each mode fits only its family; the route
 * cache (what collectives and training use) dispatches to the family
 * functions; a scenario on a torus with "dor" reports the dimension-order
 * paths worked out by hand; coll runs on a dragonfly with valiant, coll and
 * train on a rail-only fabric with railonly; a mode that does not fit the
 * topology exits 2 naming the option. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fabricsim/coll.h"
#include "fabricsim/route.h"
#include "fabricsim/topo.h"
#include "test.h"
#include "topo_oracle.h"

TEST(test_route_modes_parse_and_name) {
  static const char *const names[] = {"shortest", "ecmp",    "spray",   "explicit",
                                      "dor",      "minimal", "valiant", "railonly"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    fs_route_mode m = FS_ROUTE_ECMP;
    CHECK_EQ_INT(fs_route_mode_parse(names[i], &m), 0);
    CHECK_EQ_INT(m, (int)i);
    CHECK(strcmp(fs_route_mode_name(m), names[i]) == 0);
  }
  fs_route_mode m = FS_ROUTE_SPRAY;
  CHECK_EQ_INT(fs_route_mode_parse("ugal", &m), FS_EINVAL);
  CHECK_EQ_INT(m, FS_ROUTE_SPRAY);
}

TEST(test_route_modes_fit_their_family_only) {
  static const struct {
    const char *spec;
    int ok[8]; /* shortest ecmp spray explicit dor minimal valiant railonly */
  } cases[] = {
      {"fattree:k=4", {1, 1, 1, 1, 0, 0, 0, 0}},
      {"torus:dims=4x3", {1, 1, 1, 1, 1, 0, 0, 0}},
      {"ring:n=5", {1, 1, 1, 1, 1, 0, 0, 0}},
      {"fullmesh:n=4", {1, 1, 1, 1, 0, 0, 0, 0}},
      {"dragonfly:p=1", {1, 1, 1, 1, 0, 1, 1, 0}},
      {"railonly:servers=2,gpus_per_node=4", {1, 1, 1, 1, 0, 0, 0, 1}},
      {"clos:pods=2,edges_per_pod=2,hosts_per_edge=2", {1, 1, 1, 1, 0, 0, 0, 0}},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    fs_topo *t = oracle_spec(cases[i].spec);
    if (!t) continue;
    for (int m = 0; m < 8; m++) {
      fs_err err = {0, ""};
      int rc = fs_route_mode_check((fs_route_mode)m, t, &err);
      if ((rc == 0) != cases[i].ok[m])
        test_fail(__FILE__, __LINE__, "%s, mode %s: expected %s, got %d (%s)", cases[i].spec,
                  fs_route_mode_name((fs_route_mode)m), cases[i].ok[m] ? "fit" : "FS_EINVAL",
                  rc, err.msg);
      if (rc && (rc != FS_EINVAL || !strstr(err.msg, fs_route_mode_name((fs_route_mode)m)) ||
                 !strstr(err.msg, t->spec)))
        test_fail(__FILE__, __LINE__, "%s: message lacks the mode or the topology: %s",
                  cases[i].spec, err.msg);
    }
    fs_topo_free(t);
  }
}

/* Every pair of hosts through the cache against the family function. */
static void check_cache(const char *s, fs_route_mode mode) {
  fs_topo *t = oracle_spec(s);
  if (!t) return;
  fs_err err = {0, ""};
  fs_router *r = NULL;
  fs_route_cache *c = NULL;
  fs_route want;
  fs_route_init(&want);
  CHECK_OK(fs_router_new(t, &r, &err), &err);
  if (r) CHECK_OK(fs_route_cache_new(r, mode, 3, 7, &c, &err), &err);
  int32_t longer = 0, bad = 0;
  for (int32_t a = 0; c && a < t->n_hosts; a++)
    for (int32_t b = 0; b < t->n_hosts; b++) {
      if (a == b) continue;
      const fs_route *got = NULL;
      int rc = fs_route_cache_get(c, a, b, &got, &err);
      if (rc) {
        test_fail(__FILE__, __LINE__, "%s %s %d -> %d: %s", s, fs_route_mode_name(mode), a, b,
                  err.msg);
        continue;
      }
      int32_t d = fs_route_dist(r, a, b);
      if (mode == FS_ROUTE_DOR) rc = fs_route_torus_dor(r, a, b, &want, &err);
      else if (mode == FS_ROUTE_RAILONLY) rc = fs_route_railonly(r, a, b, &want, &err);
      else rc = fs_route_dragonfly(r, a, b, 0, 3, 0, &want, &err);
      CHECK_OK(rc, &err);
      if (mode == FS_ROUTE_VALIANT) {
        /* at most host, 2 local, 2 global, 2 local... in practice
         * host-rs-u-v-u'-v'-rd-host: 7 links; through another group it can
         * even be shorter than minimal (two global hops, no local one) */
        int32_t nodes[16];
        int32_t k = got->hops <= 7 ? fs_route_nodes(t, got, nodes) : -1;
        if ((k < 2 || nodes[0] != a || nodes[k - 1] != b) && bad++ < 3)
          test_fail(__FILE__, __LINE__, "%s valiant %d -> %d: not a walk of <= 7 hops", s, a,
                    b);
        longer += got->hops > want.hops;
        continue;
      }
      if (mode == FS_ROUTE_MINIMAL) {
        if (got->hops != want.hops && bad++ < 3)
          test_fail(__FILE__, __LINE__, "%s minimal %d -> %d: %d hops, want %d", s, a, b,
                    got->hops, want.hops);
        continue;
      }
      int same = got->n == want.n && got->hops == d;
      for (int32_t i = 0; same && i < got->n; i++) same = got->links[i] == want.links[i];
      if (!same && bad++ < 3)
        test_fail(__FILE__, __LINE__, "%s %s %d -> %d: cache route differs from the family's",
                  s, fs_route_mode_name(mode), a, b);
    }
  if (mode == FS_ROUTE_VALIANT) CHECK(longer > 0);
  fs_route_free(&want);
  fs_route_cache_free(c);
  fs_router_free(r);
  fs_topo_free(t);
}

TEST(test_route_modes_cache_dispatches_to_the_family) {
  check_cache("torus:dims=4x3x2", FS_ROUTE_DOR);
  check_cache("ring:n=6", FS_ROUTE_DOR);
  check_cache("railonly:servers=3,gpus_per_node=4", FS_ROUTE_RAILONLY);
  check_cache("dragonfly:p=2", FS_ROUTE_MINIMAL);
  check_cache("dragonfly:p=2", FS_ROUTE_VALIANT);
  check_cache("dragonfly:p=1,gpus_per_node=1", FS_ROUTE_VALIANT);
  /* GPU servers on a dragonfly: two GPUs of a server meet over NVLink */
  fs_topo *t = oracle_spec("dragonfly:p=2,gpus_per_node=2");
  fs_router *r = NULL;
  fs_err err = {0, ""};
  fs_route rt;
  fs_route_init(&rt);
  if (t) CHECK_OK(fs_router_new(t, &r, &err), &err);
  if (r) {
    CHECK_OK(fs_route_by_mode(r, FS_ROUTE_VALIANT, 0, 1, 1, 1, &rt, &err), &err);
    CHECK_EQ_INT(rt.hops, 2);
    CHECK_EQ_INT(fs_route_by_mode(r, FS_ROUTE_EXPLICIT, 0, 1, 1, 1, &rt, &err), FS_EINVAL);
  }
  fs_route_free(&rt);
  fs_router_free(r);
  fs_topo_free(t);
}

/* The scenario of tests/data/torus-dor.json on its 4x3 torus (chip x*3 + y,
 * router 12 + chip): 0 (0,0) -> 7 (2,1) goes + along x (2 either way: the
 * tie goes +) through chips 3, 6, then + along y to 7; 5 (1,2) -> 9 (3,0)
 * goes + along x through 8, 11, then along y the short way, 2 -> 0 by the
 * wrap-around, to 9. ECMP with seed 1 takes another path for the second. */
TEST(test_route_modes_scenario_torus_dor_paths) {
  static char out[65536];
  CHECK_EQ_INT(test_run_cli("sim tests/data/torus-dor.json", "2>&1", out, sizeof(out)), 0);
  CHECK(strstr(out, "\"routing\":{\"mode\":\"dor\",\"seed\":1}") != NULL);
  CHECK(strstr(out, "\"id\":\"a\"") && strstr(out, "\"path\":[0,12,15,18,19,7]"));
  CHECK(strstr(out, "\"id\":\"b\"") && strstr(out, "\"path\":[5,17,20,23,21,9]"));
  CHECK_EQ_INT(test_run_cli("sim tests/data/torus-dor.json --routing ecmp", "2>&1", out,
                            sizeof(out)),
               0);
  CHECK(strstr(out, "\"path\":[5,17,20,23,21,9]") == NULL);
}

TEST(test_route_modes_coll_and_misfits) {
  static char out[65536];
  int st = test_run_cli("coll --op allreduce --ranks 16 --topo dragonfly:p=2 --routing valiant "
                        "--sizes 1M,4M",
                        "2>&1", out, sizeof(out));
  if (st != 0 || !strstr(out, "routing valiant"))
    test_fail(__FILE__, __LINE__, "coll valiant: exit %d:\n%s", st, out);
  st = test_run_cli("coll --op alltoall --ranks 8 --topo railonly:servers=2,gpus_per_node=4 "
                    "--routing railonly --sizes 1M --format json",
                    "2>&1", out, sizeof(out));
  if (st != 0 || !strstr(out, "\"routing\":\"railonly\""))
    test_fail(__FILE__, __LINE__, "coll railonly: exit %d:\n%s", st, out);
  /* a training job routed scale-up first on its rail-only fabric */
  st = test_run_cli("train tests/data/train-railonly.json", "2>&1", out, sizeof(out));
  if (st != 0 || !strstr(out, "(railonly routing)"))
    test_fail(__FILE__, __LINE__, "train railonly: exit %d:\n%s", st, out);
  static const struct {
    const char *args, *want[3];
  } bad[] = {
      {"coll --op allreduce --ranks 4 --topo fattree:k=4 --routing dor",
       {"--routing dor", "torus or ring", "fattree:k=4"}},
      {"coll --op allreduce --ranks 4 --topo torus:dims=4x4 --routing valiant",
       {"--routing valiant", "dragonfly"}},
      {"coll --op allreduce --ranks 4 --topo torus:dims=4x4 --routing ugal", {"--routing", "ugal"}},
      {"sim tests/data/torus-dor.json --routing railonly", {"--routing railonly", "railonly"}},
      {"sim tests/data/torus-dor.json --routing minimal", {"--routing minimal", "dragonfly"}},
      {"sim tests/data/bad/routing-mode-misfit.json", {"$.routing.mode", "\"dor\""}},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    st = test_run_cli(bad[i].args, "2>&1", out, sizeof(out));
    int lines = 0;
    for (const char *p = out; *p; p++) lines += *p == '\n';
    if (st != 2 || lines != 1)
      test_fail(__FILE__, __LINE__, "'%s': exit %d (want 2), output:\n%s", bad[i].args, st, out);
    for (int k = 0; k < 3 && bad[i].want[k]; k++)
      if (!strstr(out, bad[i].want[k]))
        test_fail(__FILE__, __LINE__, "'%s': output lacks '%s':\n%s", bad[i].args,
                  bad[i].want[k], out);
  }
}
