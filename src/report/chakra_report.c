/* The output of `fabricsim chakra`: a replayed set of Chakra execution
 * traces, its node counts by kind, its makespan and each rank's finish
 * time, as text or JSON. One line (or number) per rank: O(ranks). */
#include <stdio.h>

#include "../base/base.h"
#include "fabricsim/report.h"

int fs_report_chakra_text(FILE *f, const fs_report_chakra *c) {
  const fs_chakra_stats *st = &c->stats;
  fprintf(f,
          "traces:     %s.<rank>.et, %d ranks, %lld nodes (%lld compute, %lld flows, %lld "
          "collectives, %lld control)\n",
          c->prefix, c->ranks, (long long)st->nodes, (long long)st->tasks, (long long)st->flows,
          (long long)st->collectives, (long long)st->controls);
  fprintf(f, "makespan:   %.3f us\n", c->makespan_s * 1e6);
  fprintf(f, "rank  finish_us\n");
  for (int32_t r = 0; r < c->ranks; r++) fprintf(f, "%4d  %.3f\n", r, c->finish_s[r] * 1e6);
  return ferror(f) ? FS_EIO : 0;
}

int fs_report_chakra_json(FILE *f, const fs_report_chakra *c) {
  const fs_chakra_stats *st = &c->stats;
  char num[40];
  fs__fmt_num(num, c->makespan_s * 1e9);
  fprintf(f,
          "{\"ranks\":%d,\"nodes\":%lld,\"tasks\":%lld,\"flows\":%lld,\"collectives\":%lld,"
          "\"controls\":%lld,\"makespan_ns\":%s,\"rank_finish_ns\":[",
          c->ranks, (long long)st->nodes, (long long)st->tasks, (long long)st->flows,
          (long long)st->collectives, (long long)st->controls, num);
  for (int32_t r = 0; r < c->ranks; r++) {
    fs__fmt_num(num, c->finish_s[r] * 1e9);
    fprintf(f, "%s%s", r ? "," : "", num);
  }
  fprintf(f, "]}\n");
  return ferror(f) ? FS_EIO : 0;
}
