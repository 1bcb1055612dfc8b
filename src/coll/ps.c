/* Parameter servers (Li et al., "Scaling Distributed Machine Learning with
 * the Parameter Server", OSDI 2014), colocated with the workers as BytePS
 * runs them (Jiang et al., OSDI 2020): S of the p ranks, rank
 * floor(j p / S) for server j, each own a 1/S shard of the buffer. An
 * all-reduce is every rank pushing shard j to server j, the server adding
 * each push into its shard as it arrives (gamma per byte, one task per
 * push), and, once every push is in, every rank pulling the shard back:
 * synchronous SGD's gradient push and weight pull. A server keeps its own
 * shard in place. Server j's link carries p - 1 pushes in and p - 1 pulls
 * out: the incast a parameter-server deployment must be sized for.
 *
 * Whole shards, no pipelining of the pulls behind the pushes: chunks and
 * channels are ignored. Named only (algorithm "ps"): a deployment, never
 * chosen by AUTO. Flows: 2 (p - 1) S at most. */
#include <stdlib.h>

#include "../base/base.h"
#include "internal.h"

static int32_t n_servers(const fs_coll_params *prm, int32_t p) {
  return prm->servers > 0 && prm->servers < p ? prm->servers : p;
}

static int32_t server_rank(int32_t j, int32_t S, int32_t p) {
  return (int32_t)((int64_t)j * p / S);
}

static int ps_lower(fs__cb *cb) {
  int32_t p = cb->p, S = n_servers(cb->prm, p);
  int rc = fs__cb_units(cb, S);
  if (rc) return rc;
  int32_t *ready = malloc((size_t)p * sizeof(int32_t));
  int32_t *join = malloc((size_t)S * sizeof(int32_t));
  if (!ready || !join) {
    rc = fs_err_set(cb->err, FS_ENOMEM, "out of memory lowering ps");
    goto out;
  }
  /* Push: every rank sends shard j to server j; server j's shard is
   * complete when every push has been added in. */
  for (int32_t j = 0; j < S && !rc; j++) {
    int32_t srv = server_rank(j, S, p), n = 0;
    for (int32_t r = 0; r < p && !rc; r++) {
      if (r == srv) continue;
      fs__msg m;
      rc = fs__cb_send(cb, r, srv, &j, 1, 1, NULL, 0, NULL, 0, &m);
      ready[n++] = m.ready;
    }
    if (!rc) {
      join[j] = fs__cb_join(cb, srv, ready, n);
      if (join[j] < 0) rc = join[j];
    }
  }
  /* Pull: every rank fetches the reduced shard j from its server. */
  for (int32_t j = 0; j < S && !rc; j++) {
    int32_t srv = server_rank(j, S, p);
    for (int32_t r = 0; r < p && !rc; r++) {
      if (r == srv) continue;
      fs__msg m;
      rc = fs__cb_send(cb, srv, r, &j, 1, 0, &join[j], 1, NULL, 0, &m);
    }
  }
out:
  FS__FREE_ALL(ready, join);
  return rc;
}

/* Closed form on a star (each rank one link up and one down): every push
 * crosses its server's down link, which carries p - 1 of them, more than
 * any rank's up link (S or S - 1), so all run at 1 / (p - 1) of the link and
 * end together after (p - 1) (n / S) beta and a path latency alpha; each
 * server adds its pushes in gamma n / S (in parallel: tasks do not
 * contend); the pulls mirror the pushes on the servers' up links:
 *   T = 2 (p - 1) (n / S) beta + 2 alpha + gamma n / S. */
static double ps_model(const fs_coll_params *prm, int32_t p, int32_t C,
                       const fs_coll_cost *cost) {
  (void)C;
  if (p < 2) return 0;
  double shard = prm->bytes / n_servers(prm, p);
  return 2 * (p - 1) * shard * cost->beta_s_per_byte + 2 * cost->alpha_s +
         shard * cost->gamma_s_per_byte;
}

const fs__coll_algo_impl fs__coll_ps = {
    FS_ALGO_PS, FS__OP(FS_COLL_ALLREDUCE), ps_lower, ps_model, NULL, NULL,
};
