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
  int keep_expanded;   /* fs_route_cache_keep_expanded */
  fs_route **expanded; /* then: routes[i] before the transform (each its
                        * own allocation: routes[i].expanded points at it) */
  size_t expanded_cap;
};

void fs_route_cache_keep_expanded(fs_route_cache *c) { c->keep_expanded = 1; }

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
  for (size_t i = 0; i < c->len; i++) {
    fs_route_free(&c->routes[i]);
    if (i < c->expanded_cap && c->expanded[i]) {
      fs_route_free(c->expanded[i]);
      free(c->expanded[i]);
    }
  }
  free(c->routes);
  free(c->expanded);
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
  int keep = c->transform && c->keep_expanded;
  if (keep && c->expanded_cap < c->routes_cap) {
    fs_route **ne = realloc(c->expanded, c->routes_cap * sizeof(*ne));
    if (!ne) return fs_err_set(err, FS_ENOMEM, "out of memory routing");
    for (size_t i = c->expanded_cap; i < c->routes_cap; i++) ne[i] = NULL;
    c->expanded = ne;
    c->expanded_cap = c->routes_cap;
  }
  fs_route *r = &c->routes[c->len];
  fs_route_init(r);
  int rc;
  rc = fs_route_by_mode(c->router, c->mode, src, dst, c->seed, fs__mix64(c->key ^ key), r, err);
  fs_route *orig = NULL;
  if (!rc && c->transform) {
    fs_route q;
    fs_route_init(&q);
    if (keep && !(orig = malloc(sizeof(*orig)))) {
      rc = fs_err_set(err, FS_ENOMEM, "out of memory routing");
    } else if ((rc = c->transform(c->transform_ctx, r, &q, err))) {
      fs_route_free(&q);
      free(orig);
      orig = NULL;
    } else {
      if (keep) *orig = *r;
      else fs_route_free(r);
      *r = q;
      r->expanded = orig;
    }
  }
  if (rc || fs__u64map_put(&c->index, key, (int32_t)c->len)) {
    fs_route_free(r);
    if (orig) {
      fs_route_free(orig);
      free(orig);
    }
    return rc ? rc : fs_err_set(err, FS_ENOMEM, "out of memory routing");
  }
  if (keep) c->expanded[c->len] = orig;
  c->len++;
  *out = r;
  return 0;
}
