/* `make bench`: fixed, seeded workloads through topology -> ECMP routing ->
 * fluid engine, printing one line of figures per case (wall time, events,
 * re-rating work, peak RSS, makespan). Goals are printed, never enforced.
 *
 * Each case runs in a forked child so that its peak RSS (ru_maxrss is a
 * high-water mark of the whole process) is its own and not the largest of
 * the cases before it. `--no-fork` runs in-process, which is handier under
 * perf or callgrind. `--digest` prints a hash of all simulated times, to check
 * that an engine change is bit-identical. Arguments that are not options
 * select cases by name. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fabricsim/coll.h"
#include "fabricsim/route.h"
#include "fabricsim/sim.h"
#include "fabricsim/topo.h"
#include "fabricsim/train.h"

#define MIB (1024.0 * 1024.0)

enum { TOPO_FATTREE, TOPO_LEAFSPINE, TOPO_STAR, TOPO_RING };
enum { PAT_PERMUTATION, PAT_ALL_TO_ALL, PAT_COLL, PAT_TRAIN, PAT_STAGGERED, PAT_COLL_RUN, PAT_TOPO };

typedef struct bench_case {
  const char *name;
  const char *what; /* one line for the listing */
  int topo;
  int32_t k;               /* fat-tree arity */
  fs_leafspine_params ls;  /* leaf-spine shape */
  int pattern;
  int32_t rounds;          /* permutation rounds */
  int64_t round_gap_ns;    /* PAT_PERMUTATION: 0 = a host's round r+1 flow waits
                            * for its round r flow; > 0 = no dependencies, round
                            * r starts at r * round_gap_ns */
  int32_t n_flows;         /* PAT_STAGGERED: random pairs ... */
  int64_t window_ns;       /* ... starting uniformly in [0, window_ns) */
  double bytes;            /* per flow */
  double goal_s;           /* on topo + route + run wall; reported, not enforced */
  double goal_mib;         /* on peak RSS, when > 0; reported, not enforced */
  int extra;               /* profiling variant: runs only when named */
  fs_coll_op op;           /* PAT_COLL: one collective of `bytes` */
  fs_coll_algo algo;
  int32_t ranks;           /* on hosts 0..ranks-1 */
  const char *job;         /* PAT_TRAIN: a job file; PAT_TOPO: a topology spec */
  fs_transport_kind transport; /* not fluid: also run under fluid; the goal is the
                                * wall-time ratio to it (<= ratio_goal) */
  double ratio_goal;
  int dcqcn;               /* rdma: under DCQCN's rate control; tcp: DCTCP's on
                            * persistent connections (2: on new ones) */
} bench_case;

/* B5's flow size: 8,000 flows arrive over 5 ms on 128 hosts (62.5 per host,
 * 12.5 GB/s host links), so 0.8 MB per flow loads each host link ~80 % on
 * average. Measured: ~1,280 flows in flight on average over 1-5 ms and
 * 1,569 at the peak (max_active, printed for this case); 0.7 MB gives ~850
 * and 1 MB ~2,200 (the load nears 100 % and flows pile up). Overridable
 * with -DB5_BYTES=... for such sweeps. */
#ifndef B5_BYTES
#define B5_BYTES 800000.0
#endif

/* Hosts, links and ECMP are the paper-standard shapes of the brief; the
 * small variants keep the same traffic but fit under callgrind. */
static const bench_case cases[] = {
    {.name = "B1", .what = "fat-tree k=16, 16 rounds of permutation, 16 MiB, chained",
     .topo = TOPO_FATTREE, .k = 16, .pattern = PAT_PERMUTATION, .rounds = 16,
     .bytes = 16 * MIB, .goal_s = 1.0},
    {.name = "B2", .what = "fat-tree k=32, one permutation, 16 MiB, all at t=0",
     .topo = TOPO_FATTREE, .k = 32, .pattern = PAT_PERMUTATION, .rounds = 1,
     .bytes = 16 * MIB, .goal_s = 1.0},
    {.name = "B3", .what = "leaf-spine 16x16 hosts, 8 spines (2:1), all-to-all 1 MiB",
     .topo = TOPO_LEAFSPINE, .ls = {16, 8, 16, 100, 100, 1, 1000}, .pattern = PAT_ALL_TO_ALL,
     .rounds = 1, .bytes = MIB, .goal_s = 5.0},
    {.name = "B4", .what = "fat-tree k=16, 16 rounds of permutation, 16 MiB, round r at r ms, no deps",
     .topo = TOPO_FATTREE, .k = 16, .pattern = PAT_PERMUTATION, .rounds = 16,
     .round_gap_ns = 1000000, .bytes = 16 * MIB, .goal_s = 1.0},
    {.name = "B5", .what = "fat-tree k=8, 8000 random flows of 0.8 MB starting in [0, 5 ms)",
     .topo = TOPO_FATTREE, .k = 8, .pattern = PAT_STAGGERED, .n_flows = 8000,
     .window_ns = 5000000, .bytes = B5_BYTES, .goal_s = 2.0, .goal_mib = 64},
    {.name = "X3", .what = "B3 (leaf-spine all-to-all, 65,280 flows) under --transport tcp",
     .topo = TOPO_LEAFSPINE, .ls = {16, 8, 16, 100, 100, 1, 1000}, .pattern = PAT_ALL_TO_ALL,
     .rounds = 1, .bytes = MIB, .transport = FS_TRANSPORT_TCP, .ratio_goal = 2},
    {.name = "X5", .what = "B5 (8,000 staggered flows) under --transport tcp",
     .topo = TOPO_FATTREE, .k = 8, .pattern = PAT_STAGGERED, .n_flows = 8000,
     .window_ns = 5000000, .bytes = B5_BYTES, .transport = FS_TRANSPORT_TCP, .ratio_goal = 2},
    {.name = "P3", .what = "B3 with 64 KiB messages under --transport tcp: every flow as packets (packet_bytes)",
     .topo = TOPO_LEAFSPINE, .ls = {16, 8, 16, 100, 100, 1, 1000}, .pattern = PAT_ALL_TO_ALL,
     .rounds = 1, .bytes = 64 * 1024, .transport = FS_TRANSPORT_TCP},
    {.name = "Q3", .what = "B3 with 64 KiB messages under rdma with DCQCN: every message as RoCE packets",
     .topo = TOPO_LEAFSPINE, .ls = {16, 8, 16, 100, 100, 1, 1000}, .pattern = PAT_ALL_TO_ALL,
     .rounds = 1, .bytes = 64 * 1024, .transport = FS_TRANSPORT_RDMA, .dcqcn = 1},
    {.name = "R3", .what = "B3 (leaf-spine all-to-all, 65,280 flows) under rdma with DCQCN",
     .topo = TOPO_LEAFSPINE, .ls = {16, 8, 16, 100, 100, 1, 1000}, .pattern = PAT_ALL_TO_ALL,
     .rounds = 1, .bytes = MIB, .transport = FS_TRANSPORT_RDMA, .dcqcn = 1, .extra = 1},
    {.name = "R5", .what = "B5 (8,000 staggered flows) under rdma with DCQCN",
     .topo = TOPO_FATTREE, .k = 8, .pattern = PAT_STAGGERED, .n_flows = 8000,
     .window_ns = 5000000, .bytes = B5_BYTES, .transport = FS_TRANSPORT_RDMA, .dcqcn = 1},
    {.name = "D5", .what = "B5 (8,000 staggered flows) under tcp with DCTCP, persistent connections",
     .topo = TOPO_FATTREE, .k = 8, .pattern = PAT_STAGGERED, .n_flows = 8000,
     .window_ns = 5000000, .bytes = B5_BYTES, .transport = FS_TRANSPORT_TCP, .dcqcn = 1},
    {.name = "N5", .what = "B5 (8,000 staggered flows) under tcp with DCTCP, new connections",
     .topo = TOPO_FATTREE, .k = 8, .pattern = PAT_STAGGERED, .n_flows = 8000,
     .window_ns = 5000000, .bytes = B5_BYTES, .transport = FS_TRANSPORT_TCP, .dcqcn = 2},
    {.name = "C1", .what = "ring all-reduce 1 GiB, 1024 ranks, fat-tree k=16",
     .topo = TOPO_FATTREE, .k = 16, .pattern = PAT_COLL, .rounds = 1, .bytes = 1024 * MIB,
     .goal_s = 1.0, .op = FS_COLL_ALLREDUCE, .algo = FS_ALGO_RING, .ranks = 1024},
    {.name = "C2", .what = "tree all-reduce 1 GiB, 1024 ranks, fat-tree k=16",
     .topo = TOPO_FATTREE, .k = 16, .pattern = PAT_COLL, .rounds = 1, .bytes = 1024 * MIB,
     .goal_s = 1.0, .op = FS_COLL_ALLREDUCE, .algo = FS_ALGO_TREE, .ranks = 1024},
    {.name = "C3", .what = "pairwise all-to-all 256 MiB, 256 ranks, fat-tree k=16",
     .topo = TOPO_FATTREE, .k = 16, .pattern = PAT_COLL, .rounds = 1, .bytes = 256 * MIB,
     .goal_s = 1.0, .op = FS_COLL_ALLTOALL, .algo = FS_ALGO_PAIRWISE, .ranks = 256},
    {.name = "C4", .what = "direct all-to-all 256 MiB, 256 ranks, fat-tree k=16",
     .topo = TOPO_FATTREE, .k = 16, .pattern = PAT_COLL, .rounds = 1, .bytes = 256 * MIB,
     .goal_s = 1.0, .op = FS_COLL_ALLTOALL, .algo = FS_ALGO_DIRECT, .ranks = 256},
    {.name = "C5", .what = "`coll` ring all-reduce 1 GiB, 1024 ranks, star (fs_coll_run: rank rotation)",
     .topo = TOPO_STAR, .pattern = PAT_COLL_RUN, .bytes = 1024 * MIB, .goal_s = 0.1,
     .goal_mib = 64, .op = FS_COLL_ALLREDUCE, .algo = FS_ALGO_RING, .ranks = 1024},
    {.name = "C6", .what = "`coll` ring all-reduce 1 MiB, 1024 ranks, ring topology (rank rotation)",
     .topo = TOPO_RING, .pattern = PAT_COLL_RUN, .bytes = MIB, .goal_s = 0.1, .goal_mib = 64,
     .op = FS_COLL_ALLREDUCE, .algo = FS_ALGO_RING, .ranks = 1024},
    {.name = "S1", .what = "`topo` summary of a 10^6-host torus (100x100x100): hop statistics in closed form",
     .pattern = PAT_TOPO, .goal_s = 5.0, .job = "torus:dims=100x100x100"},
    {.name = "S2", .what = "`topo` summary of a 10^6-host leaf-spine (4096 leaves of 256, 64 spines)",
     .pattern = PAT_TOPO, .goal_s = 5.0, .job = "leafspine:leaves=4096,spines=64,hosts_per_leaf=256"},
    {.name = "S3", .what = "`topo` summary of a k=128 fat-tree (524,288 hosts): closed form",
     .pattern = PAT_TOPO, .goal_s = 5.0, .job = "fattree:k=128"},
    {.name = "T1", .what = "train GPT-3 175B, 1024 GPUs (tp 8, pp 8 interleaved, dp 16), rail-optimized with NVLink, spray, all traffic",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 2.0, .goal_mib = 512,
     .job = "examples/gpt3-175b-railopt.json"},
    {.name = "T2", .what = "train GPT-3 175B, 8192 GPUs (dp 128), rail-optimized with NVLink, spray, all traffic",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 5.0, .goal_mib = 1024,
     .job = "examples/gpt3-175b-8k-railopt.json"},
    {.name = "T1e", .what = "T1 as before issue 11: fat-tree k=16 without NVLink, ECMP (no symmetry)",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 2.0, .goal_mib = 512,
     .job = "examples/gpt3-175b.json"},
    {.name = "T2e", .what = "T2 as before issue 11: fat-tree k=32 without NVLink, ECMP (no symmetry)",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 5.0, .goal_mib = 1024,
     .job = "examples/gpt3-175b-8k.json"},
    {.name = "T3", .what = "train Llama 3 405B, 16,384 GPUs (tp 8, pp 16, dp 128), 3-tier Clos, spray, all traffic",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 10.0, .goal_mib = 2048,
     .job = "examples/llama3-405b-16k.json"},
    {.name = "T4", .what = "train Llama 3 405B, 131,072 GPUs (dp 1024); only when named (~50 s, ~7.6 GiB)",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 60.0, .goal_mib = 8192,
     .job = "examples/llama3-405b-128k.json", .extra = 1},
    {.name = "T5", .what = "train 64-expert MoE, 2048 GPUs (tp 2, pp 4, dp 256, ep 8 across servers), rail-optimized",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 5.0,
     .job = "examples/moe-railopt.json"},
    {.name = "F1", .what = "train GPT-3 175B, 1024 GPUs on awgr, 1023 wavelength channels a GPU, ECMP (issue 47: < 10 s)",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 10.0,
     .job = "examples/fabrics/gpt3-175b-awgr.json"},
    {.name = "F2", .what = "train GPT-3 175B, 1024 GPUs on sirius, Valiant (issue 47: < 10 s)",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 10.0,
     .job = "examples/fabrics/gpt3-175b-sirius.json"},
    {.name = "F3", .what = "train GPT-3 175B, 1024 GPUs on lotus, its routing (MoE: spray) (issue 47: < 10 s)",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 10.0,
     .job = "examples/fabrics/gpt3-175b-lotus.json"},
    {.name = "F4", .what = "train GPT-3 175B, 1024 GPUs on sipml-ocs, degree 8 (4-D torus), ECMP (issue 47: < 10 s)",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 10.0,
     .job = "examples/fabrics/gpt3-175b-sipml-ocs.json"},
    {.name = "F5", .what = "train GPT-3 175B, 1024 GPUs on sipml-ring, reach 2, ECMP (issue 47: < 10 s)",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 10.0,
     .job = "examples/fabrics/gpt3-175b-sipml-ring.json"},
    {.name = "F6", .what = "train GPT-3 175B, 1024 GPUs on jupiter, 8/16 blocks, spray (issue 47: < 10 s)",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 10.0,
     .job = "examples/fabrics/gpt3-175b-jupiter.json"},
    {.name = "F7", .what = "train GPT-3 175B, 1024 GPUs on jupiter with optical I/O scale-up, spray (issue 47: < 10 s)",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 10.0,
     .job = "examples/fabrics/gpt3-175b-jupiter-optio.json"},
    {.name = "M1", .what = "train 64-expert MoE, 2048 GPUs on awgr, 1023 wavelength channels a GPU, ECMP; only when named",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 10.0,
     .job = "examples/fabrics/moe-2048-awgr.json", .extra = 1},
    {.name = "M2", .what = "train 64-expert MoE, 2048 GPUs on sirius, Valiant; only when named",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 10.0,
     .job = "examples/fabrics/moe-2048-sirius.json", .extra = 1},
    {.name = "M3", .what = "train 64-expert MoE, 2048 GPUs on lotus, its routing (MoE: spray); only when named",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 10.0,
     .job = "examples/fabrics/moe-2048-lotus.json", .extra = 1},
    {.name = "M4", .what = "train 64-expert MoE, 2048 GPUs on sipml-ocs, degree 8 (4-D torus), ECMP; only when named",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 10.0,
     .job = "examples/fabrics/moe-2048-sipml-ocs.json", .extra = 1},
    {.name = "M5", .what = "train 64-expert MoE, 2048 GPUs on sipml-ring, reach 2, ECMP; only when named",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 10.0,
     .job = "examples/fabrics/moe-2048-sipml-ring.json", .extra = 1},
    {.name = "M6", .what = "train 64-expert MoE, 2048 GPUs on jupiter, 8/16 blocks, spray; only when named",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 10.0,
     .job = "examples/fabrics/moe-2048-jupiter.json", .extra = 1},
    {.name = "M7", .what = "train 64-expert MoE, 2048 GPUs on jupiter with optical I/O scale-up, spray; only when named",
     .topo = TOPO_FATTREE, .pattern = PAT_TRAIN, .goal_s = 10.0,
     .job = "examples/fabrics/moe-2048-jupiter-optio.json", .extra = 1},
    {.name = "B1s", .what = "B1 on fat-tree k=8 (profiling size)",
     .topo = TOPO_FATTREE, .k = 8, .pattern = PAT_PERMUTATION, .rounds = 16,
     .bytes = 16 * MIB, .extra = 1},
    {.name = "B2s", .what = "B2 on fat-tree k=16 (profiling size)",
     .topo = TOPO_FATTREE, .k = 16, .pattern = PAT_PERMUTATION, .rounds = 1,
     .bytes = 16 * MIB, .extra = 1},
    {.name = "B3s", .what = "B3 on leaf-spine 8x8 hosts, 4 spines (profiling size)",
     .topo = TOPO_LEAFSPINE, .ls = {8, 4, 8, 100, 100, 1, 1000}, .pattern = PAT_ALL_TO_ALL,
     .rounds = 1, .bytes = MIB, .extra = 1},
    {.name = "B4s", .what = "B4 on fat-tree k=8 (profiling size)",
     .topo = TOPO_FATTREE, .k = 8, .pattern = PAT_PERMUTATION, .rounds = 16,
     .round_gap_ns = 1000000, .bytes = 16 * MIB, .extra = 1},
    {.name = "B5s", .what = "B5 with 2000 flows over [0, 1.25 ms) (profiling size)",
     .topo = TOPO_FATTREE, .k = 8, .pattern = PAT_STAGGERED, .n_flows = 2000,
     .window_ns = 1250000, .bytes = B5_BYTES, .extra = 1},
};
enum { N_CASES = (int)(sizeof(cases) / sizeof(cases[0])) };

typedef struct bench_result {
  int32_t hosts;
  int64_t flows;
  int64_t represented; /* PAT_TRAIN: flows the simulated ones stand for */
  double topo_s, route_s, run_s;
  fs_sim_counters ctr;
  double rss_mib;
  double makespan_s;
  uint64_t digest; /* of every item's start and finish time, bit for bit */
  double fluid_total_s; /* transport cases: the same flows under fluid */
} bench_result;

/* splitmix64 (Steele, Lea, Flood 2014): a local generator so the traffic
 * is fixed by the seed alone, whatever the library's own RNG becomes. */
static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in [0, n) by rejection, so no residue is favoured. */
static uint32_t below(uint64_t *state, uint32_t n) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do x = splitmix64(state);
  while (x >= limit);
  return (uint32_t)(x % n);
}

/* A random permutation with no fixed points (n >= 2): Fisher-Yates, then
 * each fixed point i is swapped with a random other j. The swap cannot make
 * a new fixed point: p[j] != i because p[i] == i, and p[j] != j before. */
static void derangement(uint64_t *state, int32_t *p, int32_t n) {
  for (int32_t i = 0; i < n; i++) p[i] = i;
  for (int32_t i = n - 1; i > 0; i--) {
    int32_t j = (int32_t)below(state, (uint32_t)i + 1);
    int32_t t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
  for (int32_t i = 0; i < n; i++) {
    if (p[i] != i) continue;
    int32_t j = (int32_t)below(state, (uint32_t)n - 1);
    if (j >= i) j++;
    p[i] = p[j];
    p[j] = i;
  }
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double peak_rss_mib(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru)) return -1;
  return (double)ru.ru_maxrss / 1024.0; /* Linux reports KiB */
}

static int show_digest;        /* --digest: set once by main before any case runs */
static const char *dump_dir;   /* --dump DIR: likewise */

/* Writes every item's start and finish time (exact, %a) to DIR/CASE.times,
 * so that two engines can be compared item by item to a tolerance. */
static int dump_times(const char *name, const fs_sim *sim) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s.times", dump_dir, name);
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return 1;
  }
  int32_t n = fs_sim_n_items(sim);
  for (int32_t i = 0; i < n; i++)
    fprintf(f, "%a %a\n", fs_sim_start_s(sim, i), fs_sim_finish_s(sim, i));
  return fclose(f) ? 1 : 0;
}

/* FNV-1a over the bit patterns of every item's start and finish time: two
 * engines that agree bit for bit on every item print the same digest. */
static uint64_t sim_digest(const fs_sim *sim) {
  uint64_t h = 0xcbf29ce484222325ull;
  int32_t n = fs_sim_n_items(sim);
  for (int32_t i = 0; i < n; i++) {
    double t[2] = {fs_sim_start_s(sim, i), fs_sim_finish_s(sim, i)};
    unsigned char b[sizeof(t)];
    memcpy(b, t, sizeof(t));
    for (size_t k = 0; k < sizeof(b); k++) h = (h ^ b[k]) * 0x100000001b3ull;
  }
  return h;
}

static int fail(const char *name, const char *step, const fs_err *err) {
  fprintf(stderr, "fabricsim-bench: %s: %s: %s\n", name, step, err->msg);
  return 1;
}

/* Routes one flow with ECMP (seed 1, key = flow index) and adds it. */
static int32_t add_ecmp_flow(fs_router *rt, fs_sim *sim, fs_route *route,
                             int32_t src, int32_t dst, double bytes, int64_t start_ns,
                             int64_t index, fs_err *err) {
  int rc = fs_route_ecmp(rt, src, dst, 1, (uint64_t)index, route, err);
  if (rc) return rc;
  return fs_sim_add_flow(sim, src, dst, bytes, start_ns, route, err);
}

/* Permutation rounds: a fresh derangement per round. Chained (round_gap_ns
 * 0): a host's round r+1 flow waits for its round r flow, prev[h] holds that
 * round r item. Otherwise round r starts at r * round_gap_ns, independently. */
static int add_permutations(const bench_case *c, fs_router *rt, fs_sim *sim,
                            int32_t n, int64_t *flows, fs_err *err) {
  int32_t *perm = malloc((size_t)n * sizeof(*perm));
  int32_t *prev = malloc((size_t)n * sizeof(*prev));
  fs_route route;
  fs_route_init(&route);
  int rc = 0;
  if (!perm || !prev) {
    rc = fs_err_set(err, FS_ENOMEM, "out of memory for %d hosts", n);
    goto done;
  }
  uint64_t rng = 0x5EED2024u;
  int64_t index = 0;
  for (int32_t r = 0; r < c->rounds; r++) {
    derangement(&rng, perm, n);
    for (int32_t h = 0; h < n; h++, index++) {
      int32_t id = add_ecmp_flow(rt, sim, &route, h, perm[h], c->bytes,
                                 (int64_t)r * c->round_gap_ns, index, err);
      if (id < 0) {
        rc = id;
        goto done;
      }
      if (r > 0 && c->round_gap_ns == 0 && (rc = fs_sim_add_dep(sim, prev[h], id, err))) goto done;
      prev[h] = id;
    }
  }
  *flows = index;
done:
  fs_route_free(&route);
  free(perm);
  free(prev);
  return rc;
}

/* Every ordered pair of distinct hosts, source-major, all at t = 0. */
static int add_all_to_all(const bench_case *c, fs_router *rt, fs_sim *sim,
                          int32_t n, int64_t *flows, fs_err *err) {
  fs_route route;
  fs_route_init(&route);
  int64_t index = 0;
  int rc = 0;
  for (int32_t s = 0; s < n && !rc; s++)
    for (int32_t d = 0; d < n && !rc; d++) {
      if (s == d) continue;
      int32_t id = add_ecmp_flow(rt, sim, &route, s, d, c->bytes, 0, index++, err);
      if (id < 0) rc = id;
    }
  *flows = index;
  fs_route_free(&route);
  return rc;
}

/* Staggered arrivals: n_flows random pairs (src != dst), each starting at a
 * uniform random nanosecond of [0, window_ns), drawn in that order from a
 * fixed seed. */
static int add_staggered(const bench_case *c, fs_router *rt, fs_sim *sim, int32_t n,
                         int64_t *flows, fs_err *err) {
  fs_route route;
  fs_route_init(&route);
  uint64_t rng = 0x5EED2025u;
  int rc = 0;
  int32_t i;
  for (i = 0; i < c->n_flows && !rc; i++) {
    int32_t src = (int32_t)below(&rng, (uint32_t)n);
    int32_t dst = (int32_t)below(&rng, (uint32_t)n - 1);
    if (dst >= src) dst++;
    int64_t start_ns = (int64_t)below(&rng, (uint32_t)c->window_ns);
    int32_t id = add_ecmp_flow(rt, sim, &route, src, dst, c->bytes, start_ns, i, err);
    if (id < 0) rc = id;
  }
  *flows = i;
  fs_route_free(&route);
  return rc;
}

/* One collective lowered into flows with ECMP (ranks on hosts 0..N-1). */
static int add_collective(const bench_case *c, fs_router *rt, fs_sim *sim, int64_t *flows,
                          fs_err *err) {
  int32_t *hosts = malloc((size_t)c->ranks * sizeof(int32_t));
  if (!hosts) return 1;
  for (int32_t r = 0; r < c->ranks; r++) hosts[r] = r;
  fs_coll_group g = {c->ranks, hosts};
  fs_coll_params prm;
  fs_coll_params_init(&prm);
  prm.op = c->op;
  prm.algo = c->algo;
  prm.bytes = c->bytes;
  fs_coll_lowering l;
  memset(&l, 0, sizeof(l));
  l.sim = sim;
  l.router = rt;
  l.mode = FS_ROUTE_ECMP;
  l.seed = 1;
  int rc = fs_coll_lower(&prm, &g, &l, err);
  *flows = l.n_flows;
  free(hosts);
  return rc;
}

/* A training iteration through the library (fabricsim train's path). */
static int run_train(const bench_case *c, bench_result *res) {
  fs_err err = {0};
  fs_job *job = NULL;
  fs_train *tr = NULL;
  fs_train_result r;
  double t0 = now_s();
  int rc = fs_job_load(c->job, &job, &err);
  double t1 = now_s();
  /* the one all-traffic simulation only: no second, isolated run */
  fs_train_opts o = {.no_compare = 1};
  if (!rc) rc = fs_train_new(job, &o, &tr, &err);
  double t2 = now_s();
  if (!rc) rc = fs_train_run(tr, &r, &err);
  double t3 = now_s();
  if (rc) {
    fail(c->name, "train", &err);
  } else {
    res->hosts = job->topo->n_hosts;
    res->flows = r.flows;
    res->represented = r.flows_represented;
    res->topo_s = t1 - t0;
    res->route_s = t2 - t1;
    res->run_s = t3 - t2;
    res->ctr = r.counters;
    res->makespan_s = r.iter_s;
    res->rss_mib = peak_rss_mib();
  }
  fs_train_free(tr);
  fs_job_free(job);
  return rc ? 1 : 0;
}

/* A collective as `fabricsim coll` runs it (fs_coll_run: with the rank
 * rotation where it applies), ranks on hosts 0..ranks-1 of a star or ring
 * of that many hosts at 100 Gb/s, 1 us a link. */
static int run_coll(const bench_case *c, bench_result *res) {
  fs_err err = {0};
  fs_topo *t = NULL;
  memset(res, 0, sizeof(*res));
  double t0 = now_s();
  int rc = c->topo == TOPO_STAR ? fs_topo_star(c->ranks, 100, 1000, &t, &err)
                                : fs_topo_ring(c->ranks, 100, 100, 1000, &t, &err);
  double t1 = now_s();
  int32_t *hosts = malloc((size_t)c->ranks * sizeof(int32_t));
  fs_coll_result r;
  if (!rc && !hosts) rc = fs_err_set(&err, FS_ENOMEM, "out of memory");
  if (!rc) {
    for (int32_t i = 0; i < c->ranks; i++) hosts[i] = i;
    fs_coll_params prm;
    fs_coll_params_init(&prm);
    prm.op = c->op, prm.algo = c->algo, prm.bytes = c->bytes;
    fs_coll_group g = {c->ranks, hosts};
    rc = fs_coll_run(t, FS_ROUTE_ECMP, 1, &prm, &g, &r, &err);
  }
  double t2 = now_s();
  if (rc) {
    fail(c->name, "coll", &err);
  } else {
    res->hosts = t->n_hosts;
    res->flows = r.flows;
    res->topo_s = t1 - t0;
    res->run_s = t2 - t1;
    res->ctr.events = r.events;
    res->makespan_s = r.time_s;
    res->rss_mib = peak_rss_mib();
  }
  free(hosts);
  fs_topo_free(t);
  return rc ? 1 : 0;
}

/* A topology summary as `fabricsim topo` computes it: building, then
 * fs_topo_stats_compute (counts, hop statistics, bisection). */
static int run_topo(const bench_case *c, bench_result *res) {
  fs_err err = {0};
  fs_topo *t = NULL;
  fs_topo_stats st;
  memset(res, 0, sizeof(*res));
  double t0 = now_s();
  int rc = fs_topo_from_spec(c->job, &t, &err);
  double t1 = now_s();
  if (!rc) rc = fs_topo_stats_compute(t, &st, &err);
  double t2 = now_s();
  if (rc) {
    fail(c->name, "topo", &err);
  } else {
    res->hosts = t->n_hosts;
    res->topo_s = t1 - t0;
    res->run_s = t2 - t1;
    res->rss_mib = peak_rss_mib();
  }
  fs_topo_free(t);
  return rc ? 1 : 0;
}

static int run_flows(const bench_case *c, fs_transport_kind kind, bench_result *res);

static int run_case(const bench_case *c, bench_result *res) {
  if (c->pattern == PAT_TOPO) return run_topo(c, res);
  if (c->pattern == PAT_TRAIN) return run_train(c, res);
  if (c->pattern == PAT_COLL_RUN) return run_coll(c, res);
  if (c->transport == FS_TRANSPORT_FLUID) return run_flows(c, FS_TRANSPORT_FLUID, res);
  bench_result base;
  if (run_flows(c, FS_TRANSPORT_FLUID, &base)) return 1;
  int rc = run_flows(c, c->transport, res);
  res->fluid_total_s = base.topo_s + base.route_s + base.run_s;
  return rc;
}

static int run_flows(const bench_case *c, fs_transport_kind kind, bench_result *res) {
  fs_err err = {0};
  fs_topo *topo = NULL;
  fs_router *rt = NULL;
  fs_sim *sim = NULL;
  int rc = 1;
  memset(res, 0, sizeof(*res));

  double t0 = now_s();
  int brc = c->topo == TOPO_FATTREE ? fs_topo_fattree(c->k, 100, 1000, &topo, &err)
                                    : fs_topo_leafspine(&c->ls, &topo, &err);
  if (brc) return fail(c->name, "topology", &err);
  double t1 = now_s();
  if (fs_router_new(topo, &rt, &err)) {
    fail(c->name, "router", &err);
    goto done;
  }
  fs_transport tp;
  fs_transport_defaults(kind, &tp);
  tp.dcqcn = kind != FS_TRANSPORT_FLUID && c->dcqcn;
  if (tp.dcqcn && kind == FS_TRANSPORT_TCP) tp.persistent = c->dcqcn == 1;
  if (fs_sim_new(topo, &sim, &err) || fs_sim_set_transport(sim, &tp, &err)) {
    fail(c->name, "sim", &err);
    goto done;
  }
  res->hosts = topo->n_hosts;
  if (c->pattern == PAT_COLL)
    brc = add_collective(c, rt, sim, &res->flows, &err);
  else if (c->pattern == PAT_PERMUTATION)
    brc = add_permutations(c, rt, sim, topo->n_hosts, &res->flows, &err);
  else if (c->pattern == PAT_STAGGERED)
    brc = add_staggered(c, rt, sim, topo->n_hosts, &res->flows, &err);
  else
    brc = add_all_to_all(c, rt, sim, topo->n_hosts, &res->flows, &err);
  if (brc) {
    fail(c->name, "routing", &err);
    goto done;
  }
  double t2 = now_s();
  if (fs_sim_run(sim, NULL, &err)) {
    fail(c->name, "run", &err);
    goto done;
  }
  double t3 = now_s();
  res->topo_s = t1 - t0;
  res->route_s = t2 - t1;
  res->run_s = t3 - t2;
  res->ctr = fs_sim_get_counters(sim);
  res->makespan_s = fs_sim_makespan_s(sim);
  if (show_digest) res->digest = sim_digest(sim);
  if (dump_dir && dump_times(c->name, sim)) goto done;
  res->rss_mib = peak_rss_mib();
  rc = 0;
done:
  fs_sim_free(sim);
  fs_router_free(rt);
  fs_topo_free(topo);
  return rc;
}

static void print_header(void) {
  printf("%-4s %6s %8s %7s %8s %8s %9s %8s %10s %11s %8s %10s  %s\n", "case",
         "hosts", "flows", "topo_s", "route_s", "run_s", "events", "batches",
         "events/s", "rerated", "rss_MiB", "makespan", "goal (all wall)");
}

static void print_result(const bench_case *c, const bench_result *r) {
  double total = r->topo_s + r->route_s + r->run_s;
  double eps = r->run_s > 0 ? (double)r->ctr.events / r->run_s : 0;
  char goal[96];
  if (c->transport != FS_TRANSPORT_FLUID && !(c->ratio_goal > 0))
    snprintf(goal, sizeof(goal), "- (x%.2f of fluid's %.3f s)", total / r->fluid_total_s,
             r->fluid_total_s);
  else if (c->transport != FS_TRANSPORT_FLUID)
    snprintf(goal, sizeof(goal), "<= %gx fluid: %s (x%.2f of %.3f s)", c->ratio_goal,
             total <= c->ratio_goal * r->fluid_total_s ? "met" : "MISSED",
             total / r->fluid_total_s, r->fluid_total_s);
  else if (c->goal_s > 0 && c->goal_mib > 0)
    snprintf(goal, sizeof(goal), "< %g s, < %g MiB: %s (%.3f s)", c->goal_s, c->goal_mib,
             total < c->goal_s && r->rss_mib < c->goal_mib ? "met" : "MISSED", total);
  else if (c->goal_s > 0)
    snprintf(goal, sizeof(goal), "< %g s: %s (%.3f s)", c->goal_s,
             total < c->goal_s ? "met" : "MISSED", total);
  else
    snprintf(goal, sizeof(goal), "- (%.3f s)", total);
  printf("%-4s %6d %8lld %7.3f %8.3f %8.3f %9llu %8llu %10.3g %11llu %8.1f %8.2fms  %s\n",
         c->name, r->hosts, (long long)r->flows, r->topo_s, r->route_s, r->run_s,
         (unsigned long long)r->ctr.events, (unsigned long long)r->ctr.batches, eps,
         (unsigned long long)r->ctr.flows_rerated, r->rss_mib, r->makespan_s * 1e3,
         goal);
  if (c->pattern == PAT_TRAIN)
    printf("     flows represented %lld (simulated %lld, at most %lld in flight), GPUs %d\n",
           (long long)r->represented, (long long)r->flows, (long long)r->ctr.max_active,
           r->hosts);
  if (c->pattern == PAT_STAGGERED) /* the size was chosen for this figure */
    printf("     max_active %lld\n", (long long)r->ctr.max_active);
  if (show_digest && c->pattern != PAT_TRAIN)
    printf("     digest %016llx\n", (unsigned long long)r->digest);
  fflush(stdout);
}

/* In a child, so the RSS figure belongs to this case alone. */
static int run_isolated(const bench_case *c, int fork_each) {
  bench_result r;
  if (!fork_each) {
    if (run_case(c, &r)) return 1;
    print_result(c, &r);
    return 0;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fabricsim-bench: fork");
    return 1;
  }
  if (pid == 0) {
    int rc = run_case(c, &r);
    if (!rc) print_result(c, &r);
    _exit(rc ? 1 : 0);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) {
    perror("fabricsim-bench: waitpid");
    return 1;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "fabricsim-bench: %s failed (status %d)\n", c->name, status);
    return 1;
  }
  return 0;
}

static int selected(const bench_case *c, int argc, char **argv, int any_filter) {
  if (!any_filter) return !c->extra;
  for (int i = 1; i < argc; i++)
    if (argv[i][0] != '-' && strcmp(argv[i], c->name) == 0) return 1;
  return 0;
}

int main(int argc, char **argv) {
  int fork_each = 1, any_filter = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--no-fork") == 0) {
      fork_each = 0;
    } else if (strcmp(argv[i], "--digest") == 0) {
      show_digest = 1;
    } else if (strcmp(argv[i], "--dump") == 0 && i + 1 < argc) {
      dump_dir = argv[++i];
    } else if (strcmp(argv[i], "--list") == 0 || strcmp(argv[i], "-h") == 0 ||
               strcmp(argv[i], "--help") == 0) {
      printf("usage: fabricsim-bench [--no-fork] [--digest] [--dump DIR] [CASE...]\n"
             "  --digest  also print a hash of every item's start and finish time\n"
             "            (equal digests = bit-identical simulated times)\n"
             "  --dump    write every item's start and finish time to DIR/CASE.times\n");
      for (int k = 0; k < N_CASES; k++)
        printf("  %-4s %s%s\n", cases[k].name, cases[k].what,
               cases[k].extra ? " [only when named]" : "");
      return 0;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "fabricsim-bench: unknown option %s (try --list)\n", argv[i]);
      return 2;
    } else {
      int known = 0;
      for (int k = 0; k < N_CASES; k++) known |= strcmp(argv[i], cases[k].name) == 0;
      if (!known) {
        fprintf(stderr, "fabricsim-bench: unknown case %s (try --list)\n", argv[i]);
        return 2;
      }
      any_filter = 1;
    }
  }
  print_header();
  int failures = 0;
  for (int k = 0; k < N_CASES; k++)
    if (selected(&cases[k], argc, argv, any_filter))
      failures += run_isolated(&cases[k], fork_each);
  return failures ? 1 : 0;
}
