/* Node-aware rings (coll.h): a ring over whole scale-up servers gives each
 * channel its own rank order so that the channels cross between servers
 * through different NICs. Checked here: the orders' rail and NIC
 * properties by counting; the 32-GPU all-reduce of the bug report against
 * its bandwidth bound, computed from the topology's link rates, with the
 * bytes every NIC carries; the data tracker on every layout (and that it
 * catches a ring that names blocks by rank instead of ring position); the
 * flat ring kept where the ranks do not form servers; and training jobs
 * whose data-parallel rings become node-aware, with and without the
 * symmetry shortcuts. */
#include <stdlib.h>
#include <string.h>

#include "../src/coll/internal.h"
#include "coll_harness.h"
#include "fabricsim/coll.h"
#include "fabricsim/train.h"
#include "test.h"
#include "train_harness.h"

#define REPRO_SPEC "railopt:servers=4,gpus_per_node=8,host_gbps=200,nvlink_gbps=2400"

static fs_topo *topo_of(const char *spec) {
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_from_spec(spec, &t, &err), &err);
  return t;
}

/* Every channel's order is a permutation; with n even consecutive servers
 * are joined local GPU to the same local GPU; over G channels every local
 * GPU of every server leaves it once and enters it once. */
TEST(test_coll_ring_orders_rails_and_nics) {
  for (int32_t G = 2; G <= 8; G += 2)
    for (int32_t n = 2; n <= 5; n++) {
      int32_t p = n * G;
      int32_t *ord = malloc((size_t)p * sizeof(int32_t));
      int32_t *seen = calloc((size_t)p, sizeof(int32_t));
      int32_t *leaves = calloc((size_t)p, sizeof(int32_t)); /* per rank: channels it sends out of its server on */
      int32_t *enters = calloc((size_t)p, sizeof(int32_t));
      if (!ord || !seen || !leaves || !enters) {
        test_fail(__FILE__, __LINE__, "out of memory");
        free(ord), free(seen), free(leaves), free(enters);
        return;
      }
      for (int32_t k = 0; k < G; k++) {
        fs_coll_ring_order(p, G, k, ord);
        memset(seen, 0, (size_t)p * sizeof(int32_t));
        for (int32_t i = 0; i < p; i++) seen[ord[i]]++;
        for (int32_t r = 0; r < p; r++) CHECK_EQ_CTX(seen[r], 1, "order is a permutation");
        for (int32_t i = 0; i < p; i++) {
          int32_t a = ord[i], b = ord[(i + 1) % p];
          CHECK_EQ_CTX(a / G, i / G, "block j holds server j's ranks");
          if (a / G == b / G) continue;
          leaves[a]++;
          enters[b]++;
          /* same rail, except the wrap of an odd number of servers */
          if (n % 2 == 0 || i + 1 < p) CHECK_EQ_CTX(a % G, b % G, "crossing on one rail");
        }
      }
      for (int32_t r = 0; r < p; r++) {
        CHECK_EQ_CTX(leaves[r], 1, "a NIC sends for one channel");
        CHECK_EQ_CTX(enters[r], 1, "a NIC receives for one channel");
      }
      free(ord), free(seen), free(leaves), free(enters);
    }
  /* G = 1, G = p and G not dividing p: the ranks' order */
  int32_t ord[6];
  static const int32_t Gs[] = {0, 1, 4, 6};
  for (size_t i = 0; i < sizeof(Gs) / sizeof(Gs[0]); i++) {
    fs_coll_ring_order(6, Gs[i], 3, ord);
    for (int32_t r = 0; r < 6; r++) CHECK_EQ_CTX(ord[r], r, "flat order");
  }
}

/* Which groups are whole servers: consecutive runs of G ranks, each on a
 * scale-up switch of its own, more than one server. */
TEST(test_coll_ring_server_size) {
  fs_topo *t = topo_of(REPRO_SPEC);
  if (!t) return;
  int32_t h[32];
  for (int32_t r = 0; r < 32; r++) h[r] = r;
  CHECK_EQ_INT(fs_coll_ring_server_size(t, &(fs_coll_group){32, h}), 8);
  CHECK_EQ_INT(fs_coll_ring_server_size(t, &(fs_coll_group){24, h}), 8); /* 3 servers */
  CHECK_EQ_INT(fs_coll_ring_server_size(t, &(fs_coll_group){8, h}), 0);  /* one server */
  CHECK_EQ_INT(fs_coll_ring_server_size(t, &(fs_coll_group){12, h}), 0); /* 8 + 4 */
  /* tp 2's data-parallel group: every other GPU, 4 a server */
  for (int32_t r = 0; r < 16; r++) h[r] = 2 * r;
  CHECK_EQ_INT(fs_coll_ring_server_size(t, &(fs_coll_group){16, h}), 4);
  /* one GPU a server (tp 8's group) */
  for (int32_t r = 0; r < 4; r++) h[r] = 8 * r;
  CHECK_EQ_INT(fs_coll_ring_server_size(t, &(fs_coll_group){4, h}), 0);
  /* interleaved servers: runs of 1 */
  for (int32_t r = 0; r < 16; r++) h[r] = (r % 2) * 8 + r / 2;
  CHECK_EQ_INT(fs_coll_ring_server_size(t, &(fs_coll_group){16, h}), 0);
  /* two runs on one server: 0-3, 8-11, 4-7 */
  static const int32_t back[12] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7};
  CHECK_EQ_INT(fs_coll_ring_server_size(t, &(fs_coll_group){12, back}), 0);
  fs_topo_free(t);
  /* plain hosts: no scale-up switch */
  t = topo_of("leafspine:leaves=4,spines=2,hosts_per_leaf=8");
  if (!t) return;
  for (int32_t r = 0; r < 32; r++) h[r] = r;
  CHECK_EQ_INT(fs_coll_ring_server_size(t, &(fs_coll_group){32, h}), 0);
  fs_topo_free(t);
}

/* The link of node `from` to the first node of kind `to_kind`, -1 if none. */
static int32_t link_to_kind(const fs_topo *t, int32_t from, fs_node_kind to_kind) {
  for (int32_t e = t->out_start[from]; e < t->out_start[from + 1]; e++)
    if (t->nodes[t->links[t->out_links[e]].to].kind == to_kind) return t->out_links[e];
  return -1;
}

/* The bug report's all-reduce: 32 GPUs, 4 servers of 8, 200 Gb/s NICs,
 * 1 GiB, spraying. With G = 8 channels each on its own NIC the time is
 * bounded below by 2 (p-1)/p (S/G) / NIC rate (latencies add little: the
 * NIC hop is the pipeline's bottleneck), so busbw is G NICs' rate within
 * 2%. Every NIC carries 2 (p-1)/p S/G bytes each way; the rest of what a
 * GPU sends, (G-1)/G of it, goes over NVLink. */
TEST(test_coll_ring_rails_32_gpus_use_every_nic) {
  fs_topo *t = topo_of(REPRO_SPEC);
  if (!t) return;
  const int32_t p = 32;
  const double S = 1024.0 * 1024 * 1024;
  int32_t hosts[32];
  for (int32_t r = 0; r < p; r++) hosts[r] = r;
  fs_coll_group g = {p, hosts};
  int32_t G = fs_coll_ring_server_size(t, &g);
  CHECK_EQ_INT(G, t->gpus_per_node);
  /* the NIC's rate: the slower of PCIe and the NIC's cable to its rail */
  double nic_Bps = INFINITY;
  for (int32_t h = 0; h < p; h++) {
    int32_t nic = t->nic0 + h, pcie = link_to_kind(t, h, FS_NODE_NIC),
            up = link_to_kind(t, nic, FS_NODE_SWITCH);
    if (pcie < 0 || up < 0) {
      test_fail(__FILE__, __LINE__, "GPU %d has no NIC path", h);
      fs_topo_free(t);
      return;
    }
    nic_Bps = fmin(nic_Bps, fmin(t->links[pcie].capacity_bps, t->links[up].capacity_bps) / 8);
  }
  fs_coll_params prm;
  fs_coll_params_init(&prm);
  prm.op = FS_COLL_ALLREDUCE;
  prm.algo = FS_ALGO_RING;
  prm.bytes = S;
  fs_err err = {0, ""};
  fs_router *router = NULL;
  fs_sim *sim = NULL;
  fs_coll_tracker *tk = NULL;
  CHECK_OK(fs_router_new(t, &router, &err), &err);
  CHECK_OK(fs_sim_new(t, &sim, &err), &err);
  CHECK_OK(fs_coll_tracker_new(&tk, &err), &err);
  if (!router || !sim || !tk) goto out;
  fs_coll_lowering l;
  fs_coll_lowering_init(&l, sim, router, FS_ROUTE_SPRAY, 1);
  l.track = tk;
  CHECK_OK(fs_coll_lower(&prm, &g, &l, &err), &err);
  CHECK_OK(fs_sim_run(sim, NULL, &err), &err);
  CHECK_OK(fs_coll_verify(tk, sim, NULL, &err), &err);
  /* channels 0: G channels, 2 (p-1) steps of p flows each */
  CHECK_EQ_INT(l.n_flows, (int64_t)2 * (p - 1) * p * G);
  double T = fs_sim_finish_s(sim, l.done);
  double bound = 2.0 * (p - 1) / p * (S / G) / nic_Bps;
  CHECK(T >= bound * (1 - 1e-12));
  CHECK_REL(T, bound, 0.02, "s");
  double busbw = S / T * fs_coll_busbw_factor(FS_COLL_ALLREDUCE, p);
  CHECK_REL(busbw, G * nic_Bps, 0.02, "B/s");
  const fs_sim_link_stats *ls = fs_sim_links(sim);
  double per_nic = 2.0 * (p - 1) / p * S / G, sent = 2.0 * (p - 1) / p * S;
  for (int32_t h = 0; h < p; h++) {
    int32_t nic = t->nic0 + h;
    int32_t up = link_to_kind(t, nic, FS_NODE_SWITCH), nvl = link_to_kind(t, h, FS_NODE_SCALEUP);
    CHECK_REL(ls[up].bytes, per_nic, 1e-9, "B");                     /* NIC out */
    CHECK_REL(ls[t->links[up].reverse].bytes, per_nic, 1e-9, "B");   /* NIC in */
    CHECK_REL(ls[link_to_kind(t, h, FS_NODE_NIC)].bytes, per_nic, 1e-9, "B"); /* PCIe */
    CHECK_REL(ls[nvl].bytes, sent - per_nic, 1e-9, "B");             /* NVLink out */
  }
out:
  fs_coll_tracker_free(tk);
  fs_sim_free(sim);
  fs_router_free(router);
  fs_topo_free(t);
}

/* The data tracker on node-aware layouts: even and odd server counts,
 * 8 and 4 GPUs a server, channel counts below, at and above G. */
TEST(test_coll_ring_node_aware_data_checked) {
  fs_topo *t = topo_of(REPRO_SPEC);
  if (!t) return;
  int32_t all[32], every_other[16];
  for (int32_t r = 0; r < 32; r++) all[r] = r;
  for (int32_t r = 0; r < 16; r++) every_other[r] = 2 * r;
  struct { const int32_t *hosts; int32_t p, G; } layouts[] = {
      {all, 32, 8}, {all, 24, 8}, {every_other, 16, 4}, {every_other, 12, 4}};
  static const fs_coll_op ops[] = {FS_COLL_ALLREDUCE, FS_COLL_ALLGATHER, FS_COLL_REDUCESCATTER};
  static const int32_t channels[] = {0, 1, 3, 8, 9};
  for (size_t li = 0; li < sizeof(layouts) / sizeof(layouts[0]); li++) {
    fs_coll_group g = {layouts[li].p, layouts[li].hosts};
    CHECK_EQ_INT(fs_coll_ring_server_size(t, &g), layouts[li].G);
    for (size_t oi = 0; oi < 3; oi++)
      for (size_t ci = 0; ci < sizeof(channels) / sizeof(channels[0]); ci++) {
        fs_coll_params prm;
        fs_coll_params_init(&prm);
        prm.op = ops[oi];
        prm.algo = FS_ALGO_RING;
        prm.bytes = 3 << 20;
        prm.channels = channels[ci];
        prm.gamma_s_per_byte = 1e-12;
        int32_t K = fs_coll_ring_channels(&prm, layouts[li].G);
        coll_run run = {0};
        fs_err err = {0, ""};
        CHECK_OK(coll_run_on(t, NULL, &prm, g.hosts, g.p, &run, &err), &err);
        if (run.verified)
          test_fail(__FILE__, __LINE__, "%s p=%d G=%d channels=%d: %s", fs_coll_op_name(prm.op),
                    g.p, layouts[li].G, prm.channels, run.why);
        int32_t steps = prm.op == FS_COLL_ALLREDUCE ? 2 * (g.p - 1) : g.p - 1;
        CHECK_EQ_INT(run.flows, (int64_t)steps * g.p * K);
        double per_rank = fs_coll_busbw_factor(prm.op, g.p) * prm.bytes;
        for (int32_t r = 0; r < g.p; r++) CHECK_REL(run.recv[r], per_rank, 1e-12, "B");
      }
  }
  fs_topo_free(t);
}

/* A node-aware all-gather that names the block a position sends by rank
 * (r - t) instead of by ring position (ord[i - t]): right on the flat
 * ring, wrong once orders differ. The tracker must say so. */
static int by_rank_allgather(fs__cb *cb) {
  int32_t p = cb->p, G = fs_coll_ring_server_size(cb->t, cb->g), K = G > 1 ? G : 1;
  int rc = fs__cb_units(cb, p * K);
  int32_t *ord = malloc((size_t)p * sizeof(int32_t));
  int32_t *ready = malloc((size_t)p * K * sizeof(int32_t));
  int32_t *next = malloc((size_t)p * K * sizeof(int32_t));
  if (!ord || !ready || !next) rc = fs_err_set(cb->err, FS_ENOMEM, "out of memory");
  for (int32_t i = 0; !rc && i < p * K; i++) ready[i] = -1;
  for (int32_t t = 0; !rc && t < p - 1; t++) {
    for (int32_t k = 0; !rc && k < K; k++) {
      fs_coll_ring_order(p, G, k, ord);
      for (int32_t i = 0; !rc && i < p; i++) {
        int32_t r = ord[i], to = ord[(i + 1) % p], unit = (((r - t) % p + p) % p) * K + k;
        fs__msg m;
        rc = fs__cb_send(cb, r, to, &unit, 1, 0, &ready[r * K + k], 1, NULL, 0, &m);
        next[to * K + k] = m.ready;
      }
    }
    int32_t *tmp = ready;
    ready = next;
    next = tmp;
  }
  free(ord);
  free(ready);
  free(next);
  return rc;
}

TEST(test_coll_ring_tracker_catches_rank_named_blocks) {
  fs_topo *t = topo_of(REPRO_SPEC);
  if (!t) return;
  const fs__coll_algo_impl broken = {FS_ALGO_RING, FS__OP(FS_COLL_ALLGATHER), by_rank_allgather,
                                     coll_zero_model, NULL, NULL};
  int32_t hosts[32];
  for (int32_t r = 0; r < 32; r++) hosts[r] = r;
  fs_coll_params prm;
  fs_coll_params_init(&prm);
  prm.op = FS_COLL_ALLGATHER;
  prm.algo = FS_ALGO_RING;
  /* one server: flat order, the by-rank naming is right */
  coll_run run = {0};
  fs_err err = {0, ""};
  CHECK_OK(coll_run_on(t, &broken, &prm, hosts, 8, &run, &err), &err);
  CHECK_EQ_INT(run.verified, 0);
  /* four servers: caught */
  memset(&run, 0, sizeof(run));
  CHECK_OK(coll_run_on(t, &broken, &prm, hosts, 32, &run, &err), &err);
  CHECK(run.verified != 0);
  CHECK(strstr(run.why, "does not hold") != NULL || strstr(run.why, "ends with") != NULL);
  fs_topo_free(t);
}

/* Where the ranks are not whole servers, every channel runs the flat
 * ring: flow f of a step t goes from rank r to r + 1 in the order rank,
 * channel; channels 0 is one channel. One server, one GPU a server, ranks
 * interleaved over servers. */
TEST(test_coll_ring_flat_where_not_servers) {
  fs_topo *t = topo_of(REPRO_SPEC);
  if (!t) return;
  int32_t one_server[8], one_gpu[4], interleaved[16];
  for (int32_t r = 0; r < 8; r++) one_server[r] = r;
  for (int32_t r = 0; r < 4; r++) one_gpu[r] = 8 * r;
  for (int32_t r = 0; r < 16; r++) interleaved[r] = (r % 2) * 8 + r / 2;
  struct { const int32_t *hosts; int32_t p; } cases[] = {
      {one_server, 8}, {one_gpu, 4}, {interleaved, 16}};
  for (size_t ci = 0; ci < 3; ci++)
    for (int32_t K = 0; K <= 2; K++) {
      int32_t p = cases[ci].p, Keff = K > 0 ? K : 1;
      CHECK_EQ_INT(fs_coll_ring_server_size(t, &(fs_coll_group){p, cases[ci].hosts}), 0);
      fs_coll_params prm;
      fs_coll_params_init(&prm);
      prm.op = FS_COLL_ALLREDUCE;
      prm.algo = FS_ALGO_RING;
      prm.bytes = 1 << 20;
      prm.channels = K;
      int32_t n = 2 * (p - 1) * p * Keff;
      coll_flow *log = calloc((size_t)n, sizeof(*log));
      if (!log) {
        test_fail(__FILE__, __LINE__, "out of memory");
        break;
      }
      coll_run run = {0};
      run.log = log;
      run.log_cap = n;
      fs_err err = {0, ""};
      CHECK_OK(coll_run_on(t, NULL, &prm, cases[ci].hosts, p, &run, &err), &err);
      CHECK_EQ_INT(run.verified, 0);
      CHECK_EQ_INT(run.log_n, n);
      int bad = 0;
      for (int32_t f = 0; f < n && f < run.log_n && !bad; f++) {
        int32_t r = f / Keff % p;
        bad = log[f].src != cases[ci].hosts[r] || log[f].dst != cases[ci].hosts[(r + 1) % p];
        if (bad)
          test_fail(__FILE__, __LINE__, "case %zu channels %d: flow %d goes %d -> %d, want %d -> %d",
                    ci, K, f, log[f].src, log[f].dst, cases[ci].hosts[r],
                    cases[ci].hosts[(r + 1) % p]);
      }
      free(log);
    }
  fs_topo_free(t);
}

/* Training: a data-parallel group of whole servers gets the node-aware
 * ring (G channels), whose times are the same with and without the
 * symmetry shortcuts: tp 1 (4 GPUs a server, 4 servers: a one-server
 * shift does not map the snake onto itself and is refused; the job is
 * rebuilt with the two-server shift, which holds) and tp 2 (2 a server, 8
 * servers in 2 units: the topology allows a shift of one unit, 4 servers,
 * which holds, and the rail rotation, TP being lowered as flows). */
static fs_job *dp_job(int tp, int dp) {
  char text[2048];
  snprintf(text, sizeof(text),
           "{\"model\": {\"layers\": 4, \"hidden\": 1024, \"heads\": 16, \"seq_len\": 1024,"
           " \"vocab\": 32000},"
           " \"training\": {\"global_batch\": %d, \"micro_batch\": 1},"
           " \"parallelism\": {\"tp\": %d, \"pp\": 1, \"dp\": %d, \"algorithms\": {\"dp\": \"ring\"}},"
           " \"hardware\": {\"gpu_tflops\": 100, \"hbm_gib\": 80},"
           " \"topology\": {\"type\": \"railopt\", \"servers\": %d, \"servers_per_su\": 4,"
           " \"spines\": 4, \"host_gbps\": 100, \"gpus_per_node\": 4},"
           " \"routing\": {\"mode\": \"spray\"}}",
           dp, tp, dp, tp * dp / 4);
  return test_parse_job(text);
}

TEST(test_coll_ring_train_dp_node_aware_exact) {
  static const int tps[] = {1, 2};
  for (size_t i = 0; i < 2; i++) {
    fs_job *job = dp_job(tps[i], 16);
    if (!job) continue;
    fs_train_result a;
    fs_train_opts o = {.no_compare = 1};
    /* tp 2: TP lowered as flows (two data-parallel ranks a server), the
     * rail rotation too, each TP collective kept once per pair */
    if (test_train_symmetry_exact(job, &o, tps[i] == 1 ? 2 : 4, &a, NULL) == 0) {
      if (tps[i] == 1) CHECK(strstr(a.symmetry, "smaller replica shift refused") != NULL);
      CHECK(strstr(a.symmetry, tps[i] == 1 ? "stands for 2" : "stands for 4") != NULL);
      if (tps[i] == 2) CHECK(strstr(a.symmetry, "rail rotation") != NULL);
    }
    fs_job_free(job);
  }
}
