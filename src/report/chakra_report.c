/* The output of `fabricsim chakra`: a replayed set of Chakra execution
 * traces, its node counts by kind, its makespan, each kind of collective
 * with the algorithm it ran and its bus bandwidth, and each rank's finish
 * time, as text or JSON. One line (or number) per rank and per kind of
 * collective: O(ranks + kinds). */
#include <stdio.h>

#include "../base/base.h"
#include "fabricsim/report.h"

/* nccl-tests' bus bandwidth of a kind in GB/s; 0 when nothing moved. */
static double busbw_gbps(const fs_chakra_coll *k) {
  if (k->op == FS_COLL_N_OPS || !(k->time_s > 0)) return 0;
  return k->bytes / k->time_s * fs_coll_busbw_factor(k->op, k->ranks) / 1e9;
}

/* what ran: the algorithm, or "none" for a synchronisation */
static const char *algo_of(const fs_chakra_coll *k) {
  return k->op == FS_COLL_N_OPS ? "none" : fs_coll_algo_name(k->algo);
}

/* who chose it */
static const char *by_of(const fs_chakra_coll *k) {
  return k->op == FS_COLL_N_OPS ? "-" : k->asked ? "--algo" : "nccl";
}

int fs_report_chakra_text(FILE *f, const fs_report_chakra *c) {
  const fs_chakra_stats *st = &c->stats;
  fprintf(f,
          "traces:     %s.<rank>.et, %d ranks, %lld nodes (%lld compute, %lld flows, %lld "
          "collectives, %lld control)\n",
          c->prefix, c->ranks, (long long)st->nodes, (long long)st->tasks, (long long)st->flows,
          (long long)st->collectives, (long long)st->controls);
  fprintf(f, "makespan:   %.3f us\n", c->makespan_s * 1e6);
  if (c->n_colls) {
    fprintf(f, "%-14s %14s %6s %8s %6s %-9s %-6s %12s %11s\n", "collective", "bytes", "ranks",
            "pg", "count", "algo", "by", "mean_us", "busbw_GBps");
    for (int32_t i = 0; i < c->n_colls; i++) {
      const fs_chakra_coll *k = &c->colls[i];
      fprintf(f, "%-14s %14.0f %6d %8s %6lld %-9s %-6s %12.3f %11.3f\n",
              fs_chakra_comm_type_name(k->comm_type), k->bytes, k->ranks,
              k->pg_name[0] ? k->pg_name : "-", (long long)k->count, algo_of(k), by_of(k),
              k->time_s * 1e6, busbw_gbps(k));
    }
  }
  fprintf(f, "rank  finish_us\n");
  for (int32_t r = 0; r < c->ranks; r++) fprintf(f, "%4d  %.3f\n", r, c->finish_s[r] * 1e6);
  return ferror(f) ? FS_EIO : 0;
}

int fs_report_chakra_json(FILE *f, const fs_report_chakra *c) {
  const fs_chakra_stats *st = &c->stats;
  char num[40], num2[40];
  fs__fmt_num(num, c->makespan_s * 1e9);
  fprintf(f,
          "{\"ranks\":%d,\"nodes\":%lld,\"tasks\":%lld,\"flows\":%lld,\"collectives\":%lld,"
          "\"controls\":%lld,\"makespan_ns\":%s,\"colls\":[",
          c->ranks, (long long)st->nodes, (long long)st->tasks, (long long)st->flows,
          (long long)st->collectives, (long long)st->controls, num);
  for (int32_t i = 0; i < c->n_colls; i++) {
    const fs_chakra_coll *k = &c->colls[i];
    fs__fmt_num(num, k->time_s * 1e9);
    fs__fmt_num(num2, busbw_gbps(k));
    fprintf(f, "%s{\"comm_type\":\"%s\",\"bytes\":%.0f,\"ranks\":%d,\"pg_name\":", i ? "," : "",
            fs_chakra_comm_type_name(k->comm_type), k->bytes, k->ranks);
    fs__fput_json_str(f, k->pg_name);
    fprintf(f, ",\"count\":%lld,\"algo\":\"%s\",\"by\":\"%s\",\"mean_ns\":%s,\"busbw_GBps\":%s}",
            (long long)k->count, algo_of(k), by_of(k), num, num2);
  }
  fprintf(f, "],\"rank_finish_ns\":[");
  for (int32_t r = 0; r < c->ranks; r++) {
    fs__fmt_num(num, c->finish_s[r] * 1e9);
    fprintf(f, "%s%s", r ? "," : "", num);
  }
  fprintf(f, "]}\n");
  return ferror(f) ? FS_EIO : 0;
}
