/* fs_routeopt_optimize: the optimisers and baselines behind one call
 * (routeopt.h), each in its own file; spraying and random choice are a
 * line each. Depends on every strategy; no strategy calls back into it. */
#include <string.h>

#include "../base/base.h"
#include "opt_internal.h"


int fs_routeopt_optimize(fs_routeopt_problem *p, const fs_routeopt_opts *o, int32_t *choice,
                         fs_routeopt_stats *stats, fs_err *err) {
  fs_routeopt_stats st;
  memset(&st, 0, sizeof(st));
  double t0 = fs__now_s();
  int rc = 0;
  switch (o->kind) {
    case FS_ROUTEOPT_EXACT: rc = fs__routeopt_exact(p, o, choice, &st, err); break;
    case FS_ROUTEOPT_GREEDY: rc = fs__routeopt_greedy(p, choice, &st, err); break;
    case FS_ROUTEOPT_ECMP: rc = fs__routeopt_ecmp(p, o->seed, choice, err); break;
    case FS_ROUTEOPT_SPRAY:
      for (int32_t f = 0; f < p->n_flows; f++)
        choice[f] = p->n_paths[f] > 1 ? FS_ROUTEOPT_SPLIT : 0;
      break;
    case FS_ROUTEOPT_EDGECOLOR: rc = fs__routeopt_edgecolor(p, choice, err); break;
    case FS_ROUTEOPT_RANDOM: {
      fs__rng rng;
      fs__rng_seed(&rng, o->seed);
      for (int32_t f = 0; f < p->n_flows; f++)
        choice[f] = (int32_t)fs__rng_below(&rng, (uint64_t)p->n_paths[f]);
      break;
    }
    default: rc = fs_err_set(err, FS_EINVAL, "unknown optimiser %d", (int)o->kind);
  }
  st.time_s = fs__now_s() - t0;
  if (stats) *stats = st;
  return rc;
}
