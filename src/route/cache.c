/* Routes cached per (src, dst) pair. Training and collective traffic sends
 * many messages between the same pairs; a rank keeps one connection per
 * peer (NCCL: a queue pair per peer), so all of them hash alike under ECMP
 * and routing each pair once keeps building O(pairs) in routing work.
 * Open addressing on src * 2^32 + dst + 1; only looked up, never iterated. */
#include <stdlib.h>

#include "../base/base.h"
#include "fabricsim/route.h"

struct fs_route_cache {
  fs_router *router;
  fs_route_mode mode;
  uint64_t seed, key;
  uint64_t *keys; /* 0 = empty */
  int32_t *idx;
  size_t cap, len;
  fs_route *routes;
  size_t routes_cap;
};

int fs_route_cache_new(fs_router *r, fs_route_mode mode, uint64_t seed, uint64_t key,
                       fs_route_cache **out, fs_err *err) {
  fs_route_cache *c = calloc(1, sizeof(*c));
  if (!c) return fs_err_set(err, FS_ENOMEM, "out of memory");
  c->router = r;
  c->mode = mode;
  c->seed = seed;
  c->key = key;
  *out = c;
  return 0;
}

void fs_route_cache_free(fs_route_cache *c) {
  if (!c) return;
  for (size_t i = 0; i < c->len; i++) fs_route_free(&c->routes[i]);
  free(c->routes);
  free(c->keys);
  free(c->idx);
  free(c);
}

static int rehash(fs_route_cache *c) {
  size_t ncap = c->cap ? c->cap * 2 : 256;
  uint64_t *nk = calloc(ncap, sizeof(uint64_t));
  int32_t *ni = malloc(ncap * sizeof(int32_t));
  if (!nk || !ni) {
    free(nk);
    free(ni);
    return FS_ENOMEM;
  }
  for (size_t i = 0; i < c->cap; i++) {
    if (!c->keys[i]) continue;
    size_t j = fs__mix64(c->keys[i]) & (ncap - 1);
    while (nk[j]) j = (j + 1) & (ncap - 1);
    nk[j] = c->keys[i];
    ni[j] = c->idx[i];
  }
  free(c->keys);
  free(c->idx);
  c->keys = nk;
  c->idx = ni;
  c->cap = ncap;
  return 0;
}

int fs_route_cache_get(fs_route_cache *c, int32_t src, int32_t dst, const fs_route **out,
                       fs_err *err) {
  uint64_t key = ((uint64_t)(uint32_t)src << 32 | (uint32_t)dst) + 1;
  if ((c->len + 1) * 2 > c->cap && rehash(c))
    return fs_err_set(err, FS_ENOMEM, "out of memory routing");
  size_t j = fs__mix64(key) & (c->cap - 1);
  while (c->keys[j] && c->keys[j] != key) j = (j + 1) & (c->cap - 1);
  if (c->keys[j]) {
    *out = &c->routes[c->idx[j]];
    return 0;
  }
  if (fs__grow(&c->routes, &c->routes_cap, c->len + 1, sizeof(fs_route)))
    return fs_err_set(err, FS_ENOMEM, "out of memory routing");
  fs_route *r = &c->routes[c->len];
  fs_route_init(r);
  int rc;
  rc = fs_route_by_mode(c->router, c->mode, src, dst, c->seed, fs__mix64(c->key ^ key), r, err);
  if (rc) {
    fs_route_free(r);
    return rc;
  }
  c->keys[j] = key;
  c->idx[j] = (int32_t)c->len++;
  *out = r;
  return 0;
}
