/* Routes cached per (src, dst) pair. Training and collective traffic sends
 * many messages between the same pairs; a rank keeps one connection per
 * peer (NCCL: a queue pair per peer), so all of them hash alike under ECMP
 * and routing each pair once keeps building O(pairs) in routing work.
 * The pair src * 2^32 + dst indexes the routes through a u64 map. */
#include <stdlib.h>

#include "../base/base.h"
#include "fabricsim/route.h"

struct fs_route_cache {
  fs_router *router;
  fs_route_mode mode;
  uint64_t seed, key;
  fs__u64map index; /* pair -> routes[] */
  size_t len;
  fs_route *routes;
  size_t routes_cap;
  fs_route_transform_fn transform; /* applied to each route computed */
  void *transform_ctx;
};

void fs_route_cache_set_transform(fs_route_cache *c, fs_route_transform_fn fn, void *ctx) {
  c->transform = fn;
  c->transform_ctx = ctx;
}

int fs_route_cache_new(fs_router *r, fs_route_mode mode, uint64_t seed, uint64_t key,
                       fs_route_cache **out, fs_err *err) {
  fs_route_cache *c = calloc(1, sizeof(*c));
  if (!c) return fs_err_set(err, FS_ENOMEM, "out of memory");
  c->router = r;
  c->mode = mode;
  c->seed = seed;
  c->key = key;
  fs__u64map_init(&c->index);
  *out = c;
  return 0;
}

void fs_route_cache_free(fs_route_cache *c) {
  if (!c) return;
  for (size_t i = 0; i < c->len; i++) fs_route_free(&c->routes[i]);
  free(c->routes);
  fs__u64map_free(&c->index);
  free(c);
}

int fs_route_cache_get(fs_route_cache *c, int32_t src, int32_t dst, const fs_route **out,
                       fs_err *err) {
  uint64_t key = ((uint64_t)(uint32_t)src << 32 | (uint32_t)dst) + 1;
  int32_t known;
  if (fs__u64map_get(&c->index, key, &known)) {
    *out = &c->routes[known];
    return 0;
  }
  if (fs__grow(&c->routes, &c->routes_cap, c->len + 1, sizeof(fs_route)))
    return fs_err_set(err, FS_ENOMEM, "out of memory routing");
  fs_route *r = &c->routes[c->len];
  fs_route_init(r);
  int rc;
  rc = fs_route_by_mode(c->router, c->mode, src, dst, c->seed, fs__mix64(c->key ^ key), r, err);
  if (!rc && c->transform) {
    fs_route q;
    fs_route_init(&q);
    if ((rc = c->transform(c->transform_ctx, r, &q, err))) {
      fs_route_free(&q);
    } else {
      fs_route_free(r);
      *r = q;
    }
  }
  if (rc) {
    fs_route_free(r);
    return rc;
  }
  if (fs__u64map_put(&c->index, key, (int32_t)c->len)) {
    fs_route_free(r);
    return fs_err_set(err, FS_ENOMEM, "out of memory routing");
  }
  c->len++;
  *out = r;
  return 0;
}
