/* Chakra execution traces: ASTRA-sim-style microbenchmarks (one
 * collective per rank) against fabricsim's own collective and the
 * alpha-beta closed form; a training iteration written and read back gives
 * the same makespan; bad traces exit 2 naming the file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chakra_et.pb-c.h"
#include "fabricsim/chakra.h"
#include "fabricsim/coll.h"
#include "fabricsim/train.h"
#include "fabricsim/work.h"
#include "test.h"

static void put_msg(FILE *f, const ProtobufCMessage *m) {
  size_t n = protobuf_c_message_get_packed_size(m);
  uint8_t *buf = malloc(n + 10);
  size_t k = 0;
  for (uint64_t v = n;; v >>= 7) {
    buf[k++] = (uint8_t)((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
    if (v <= 0x7F) break;
  }
  protobuf_c_message_pack(m, buf + k);
  fwrite(buf, 1, k + n, f);
  free(buf);
}

/* Rank files PREFIX.<r>.et with one COMM_COLL node of `type` and `bytes`
 * (the shape of ASTRA-sim's microbenchmark traces). */
static void write_micro(const char *prefix, int32_t ranks, int type, int64_t bytes) {
  for (int32_t r = 0; r < ranks; r++) {
    char path[256];
    snprintf(path, sizeof(path), "%s.%d.et", prefix, r);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    Chakra__GlobalMetadata g = CHAKRA__GLOBAL_METADATA__INIT;
    g.version = (char *)"0.0.4";
    put_msg(f, &g.base);
    /* as ASTRA-sim's tutorial generators write them: node 1, is_cpu_op,
     * comm_type, comm_size, involved_dim */
    Chakra__Node n = CHAKRA__NODE__INIT;
    Chakra__AttributeProto a[4], *ap[4] = {&a[0], &a[1], &a[2], &a[3]};
    for (int k = 0; k < 4; k++) chakra__attribute_proto__init(&a[k]);
    protobuf_c_boolean dims[1] = {1};
    Chakra__BoolList bl = CHAKRA__BOOL_LIST__INIT;
    bl.n_values = 1;
    bl.values = dims;
    a[0].name = (char *)"is_cpu_op";
    a[0].value_case = CHAKRA__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
    a[0].bool_val = 0;
    a[1].name = (char *)"comm_type";
    a[1].value_case = CHAKRA__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
    a[1].int64_val = type;
    a[2].name = (char *)"comm_size";
    a[2].value_case = CHAKRA__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
    a[2].int64_val = bytes;
    a[3].name = (char *)"involved_dim";
    a[3].value_case = CHAKRA__ATTRIBUTE_PROTO__VALUE_BOOL_LIST;
    a[3].bool_list = &bl;
    n.id = 1;
    n.name = (char *)"All-Reduce";
    n.type = CHAKRA__NODE_TYPE__COMM_COLL_NODE;
    n.n_attr = 4;
    n.attr = ap;
    put_msg(f, &n.base);
    fclose(f);
  }
}

TEST(test_chakra_microbenchmarks_match_closed_forms) {
  static const struct {
    int type;
    fs_coll_op op;
    double factor; /* bytes each rank moves, in units of S (bandwidth term) */
  } cases[] = {
      {CHAKRA__COLLECTIVE_COMM_TYPE__ALL_REDUCE, FS_COLL_ALLREDUCE, 2.0 * 7 / 8},
      {CHAKRA__COLLECTIVE_COMM_TYPE__ALL_GATHER, FS_COLL_ALLGATHER, 7.0 / 8},
      {CHAKRA__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER, FS_COLL_REDUCESCATTER, 7.0 / 8},
      {CHAKRA__COLLECTIVE_COMM_TYPE__ALL_TO_ALL, FS_COLL_ALLTOALL, 7.0 / 8},
  };
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_from_spec("star:hosts=8,gbps=100", &t, &err), &err);
  if (!t) return;
  char prefix[96];
  snprintf(prefix, sizeof(prefix), "/tmp/fabricsim-chakra.%d", (int)getpid());
  double S = 64.0 * 1048576, B = 100e9 / 8;
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    write_micro(prefix, 8, cases[k].type, (int64_t)S);
    fs_chakra *c = NULL;
    CHECK_OK(fs_chakra_load(prefix, &c, &err), &err);
    if (!c) continue;
    CHECK_EQ_INT(fs_chakra_ranks(c), 8);
    double fin[8], mk = 0;
    fs_chakra_stats st;
    CHECK_OK(fs_chakra_run(c, t, FS_ROUTE_ECMP, 1, NULL, fin, &mk, &st, &err), &err);
    CHECK_EQ_INT(st.collectives, 1);
    /* fabricsim's own run of the collective NCCL's model picks */
    int32_t hosts[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    fs_coll_group g = {8, hosts};
    fs_coll_params prm;
    fs_coll_params_init(&prm);
    prm.op = cases[k].op;
    prm.bytes = S;
    CHECK_OK(fs_coll_nccl_choose(t, &prm, &g, &prm.algo, NULL, NULL, &err), &err);
    fs_coll_result res;
    CHECK_OK(fs_coll_run(t, FS_ROUTE_ECMP, 1, &prm, &g, &res, &err), &err);
    CHECK_REL(mk, res.time_s, 1e-12, "s (the same collective run alone)");
    /* alpha-beta: the bandwidth term dominates 64 MiB */
    CHECK_REL(mk, cases[k].factor * S / B, 0.03, "s (closed form)");
    for (int r = 0; r < 8; r++) CHECK(fin[r] <= mk && fin[r] > 0);
    fs_chakra_free(c);
  }
  for (int r = 0; r < 8; r++) {
    char path[128];
    snprintf(path, sizeof(path), "%s.%d.et", prefix, r);
    remove(path);
  }
  fs_topo_free(t);
}

/* A 13B GPT iteration (spraying, every rank) written as traces and read
 * back: the same DAG, so the same makespan. */
TEST(test_chakra_train_round_trip) {
  char *text = NULL;
  size_t len;
  fs_err err = {0, ""};
  FILE *f = fopen("examples/gpt-13b.json", "rb");
  CHECK(f != NULL);
  if (!f) return;
  text = malloc(1 << 16);
  len = fread(text, 1, (1 << 16) - 1, f);
  fclose(f);
  text[len] = '\0';
  char *r = strstr(text, "\"mode\": \"ecmp\"");
  if (r) memcpy(r, "\"mode\":\"spray\"", 14); /* same length */
  CHECK(r != NULL);
  fs_job *job = NULL;
  CHECK_OK(fs_job_parse(text, strlen(text), "gpt-13b-spray", &job, &err), &err);
  free(text);
  if (!job) return;
  fs_train_opts o = {0};
  o.no_compare = 1;
  o.no_symmetry = 1;
  o.tp_flows = 1;
  fs_train *tr = NULL;
  fs_train_result res;
  /* (lowered lazily, the export refuses: the DAG is not all there) */
  CHECK_OK(fs_train_new(job, &o, &tr, &err), &err);
  CHECK_OK(fs_train_run(tr, &res, &err), &err);
  CHECK_EQ_INT(fs_chakra_write_sim(fs_train_sim(tr), 4, "/tmp/fabricsim-chakra-none", &err),
               FS_EINVAL);
  CHECK(strstr(err.msg, "keep_flows") != NULL);
  fs_train_free(tr);
  tr = NULL;
  o.keep_flows = 1;
  CHECK_OK(fs_train_new(job, &o, &tr, &err), &err);
  CHECK_OK(fs_train_run(tr, &res, &err), &err);
  char prefix[96];
  snprintf(prefix, sizeof(prefix), "/tmp/fabricsim-chakra-rt.%d", (int)getpid());
  const fs_sim *s = fs_train_sim(tr);
  int32_t ranks = fs_sim_topo(s)->n_hosts;
  CHECK_OK(fs_chakra_write_sim(s, ranks, prefix, &err), &err);
  fs_chakra *c = NULL;
  CHECK_OK(fs_chakra_load(prefix, &c, &err), &err);
  if (c) {
    double *fin = calloc((size_t)ranks, sizeof(double)), mk = 0;
    fs_chakra_stats st;
    CHECK_OK(fs_chakra_run(c, job->topo, FS_ROUTE_SPRAY, 1, NULL, fin, &mk, &st, &err), &err);
    CHECK_REL(mk, fs_sim_makespan_s(s), 1e-12, "s (the iteration's simulation)");
    CHECK_EQ_INT(st.flows, res.flows);
    CHECK(st.controls > 0); /* cross-rank dependencies without a flow */
    free(fin);
    fs_chakra_free(c);
  }
  for (int32_t k = 0; k < ranks; k++) {
    char path[128];
    snprintf(path, sizeof(path), "%s.%d.et", prefix, k);
    remove(path);
  }
  fs_train_free(tr);
  fs_job_free(job);
}

TEST(test_chakra_bad_traces_exit_2) {
  char prefix[96], path[128], cmd[300], out[4096];
  snprintf(prefix, sizeof(prefix), "/tmp/fabricsim-chakra-bad.%d", (int)getpid());
  /* truncated: a valid trace cut in the middle of its node */
  write_micro(prefix, 2, CHAKRA__COLLECTIVE_COMM_TYPE__ALL_REDUCE, 1 << 20);
  snprintf(path, sizeof(path), "%s.1.et", prefix);
  FILE *f = fopen(path, "rb");
  char buf[256];
  size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
  if (f) fclose(f);
  f = fopen(path, "wb");
  if (f) fwrite(buf, 1, n - 3, f), fclose(f);
  snprintf(cmd, sizeof(cmd), "chakra %s --topo star:hosts=4", prefix);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 2);
  CHECK(strstr(out, path) && strstr(out, "truncated"));
  /* members that disagree */
  write_micro(prefix, 2, CHAKRA__COLLECTIVE_COMM_TYPE__ALL_REDUCE, 1 << 20);
  char p0[128];
  snprintf(p0, sizeof(p0), "%s.0", prefix);
  write_micro(p0, 1, CHAKRA__COLLECTIVE_COMM_TYPE__ALL_GATHER, 1 << 20);
  snprintf(cmd, sizeof(cmd), "mv %s.0.0.et %s.0.et", prefix, prefix);
  CHECK(system(cmd) == 0);
  snprintf(cmd, sizeof(cmd), "chakra %s --topo star:hosts=4", prefix);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 2);
  CHECK(strstr(out, "disagree") != NULL);
  /* more ranks than hosts */
  write_micro(prefix, 2, CHAKRA__COLLECTIVE_COMM_TYPE__ALL_REDUCE, 1 << 20);
  snprintf(cmd, sizeof(cmd), "chakra %s --topo star:hosts=1", prefix);
  CHECK(test_run_cli(cmd, "2>&1", out, sizeof(out)) != 0);
  snprintf(cmd, sizeof(cmd), "chakra /tmp/no-such-trace-%d --topo star:hosts=4", (int)getpid());
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1", out, sizeof(out)), 2);
  CHECK(strstr(out, ".0.et") != NULL);
  CHECK_EQ_INT(test_run_cli("chakra", "2>&1", out, sizeof(out)), 2);
  for (int r = 0; r < 2; r++) {
    snprintf(path, sizeof(path), "%s.%d.et", prefix, r);
    remove(path);
  }
}

/* A trace encoded by hand from the protobuf wire format (not by
 * protobuf-c): a one-rank all-reduce (a synchronisation alone) and a
 * 100 us compute node after it. */
TEST(test_chakra_reads_hand_encoded_trace) {
  fs_chakra *c = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_chakra_load("tests/data/chakra/allreduce-and-compute", &c, &err), &err);
  if (!c) return;
  fs_topo *t = NULL;
  CHECK_OK(fs_topo_star(2, 100, 1000, &t, &err), &err);
  double fin[1], mk = 0;
  fs_chakra_stats st;
  CHECK_OK(fs_chakra_run(c, t, FS_ROUTE_ECMP, 1, NULL, fin, &mk, &st, &err), &err);
  CHECK_EQ_INT(st.nodes, 2);
  CHECK_EQ_INT(st.collectives, 1);
  CHECK_REL(mk, 100e-6, 1e-12, "s");
  fs_topo_free(t);
  fs_chakra_free(c);
}
