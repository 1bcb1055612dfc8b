/* Internal utilities shared by every module: growable arrays, a bump arena,
 * a seeded hash/RNG, string->index and uint64->index maps. None of it is
 * public API; names are fs__ (cross-file internal). */
#ifndef FABRICSIM_BASE_H
#define FABRICSIM_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- growable arrays ------------------------------------------------------
 * Grows *p (elements of size elem) so that it holds at least `need` elements.
 * Capacity doubles, so appends are amortised O(1). Returns 0, or FS_ENOMEM
 * with *p and *cap unchanged. */
/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * forms, no surrogates, nothing past U+10FFFF), or 0 (json.c). */
int fs__utf8_len(const unsigned char *p);
int fs__grow(void *p, size_t *cap, size_t need, size_t elem);

/* calloc/malloc that treat n*size overflow as failure. */
void *fs__calloc(size_t n, size_t size);
void *fs__malloc(size_t n, size_t size);

/* free() of every pointer listed (NULL ones included), in order: a struct's
 * arrays released in one line. FS__FREE_ALL(t->a, t->b, t) reads every
 * argument before the first free, so the struct itself may come last. */
void fs__free_all(void *const *ptrs, size_t n);
#define FS__FREE_ALL(...) \
  fs__free_all((void *const[]){__VA_ARGS__}, sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

/* ---- arena ----------------------------------------------------------------
 * Bump allocator for bulk state freed all at once (a topology, a simulation
 * run). Blocks are 64 KiB or the request size, whichever is larger. */
typedef struct fs__arena_block fs__arena_block;
typedef struct fs__arena {
  fs__arena_block *head;
  size_t used, size; /* of head */
  size_t total;      /* bytes obtained from malloc, for reports */
} fs__arena;

void fs__arena_init(fs__arena *a);
/* 16-byte aligned, zeroed memory; NULL on out of memory. */
void *fs__arena_alloc(fs__arena *a, size_t n, size_t size);
char *fs__arena_strdup(fs__arena *a, const char *s);
void fs__arena_free(fs__arena *a);

/* ---- record pool ------------------------------------------------------------
 * Records of one size in chunks that never move (a record's address holds
 * while others are taken), handed out by index and given back to a free
 * list (last in, first out), so memory follows the records in use, not all
 * ever used. A record taken holds what its last user left (or is unset). */
#define FS__POOL_CHUNK 1024
typedef struct fs__pool {
  size_t size;            /* bytes a record */
  void **chunk;
  int32_t n_chunks, used; /* chunks; records ever handed out */
  int32_t *free, n_free;  /* records given back (room for every record) */
} fs__pool;

void fs__pool_init(fs__pool *p, size_t size);
/* *k: a record's index. Returns 0 or FS_ENOMEM (the pool unchanged). */
int fs__pool_take(fs__pool *p, int32_t *k);
void fs__pool_put(fs__pool *p, int32_t k);
void fs__pool_free(fs__pool *p);
static inline void *fs__pool_at(const fs__pool *p, int32_t k) {
  return (char *)p->chunk[k / FS__POOL_CHUNK] + (size_t)(k % FS__POOL_CHUNK) * p->size;
}

/* ---- binary / 4-ary heap ------------------------------------------------------
 * One min-heap for every queue of the simulator (the engine's events, the
 * packet network's, the max-min fill's links, the tcp model's source fair
 * queues), libuv-style: entries ordered by (t, seq), the caller's seq making
 * ties deterministic (a push counter, an index; 0 everywhere: ordered on t
 * alone, ties in whatever order these operations leave them, themselves
 * deterministic). Entries are held by value (24 bytes), so a sift touches
 * one array; a and b are the owner's payload. Arity 2^lg: 4 (lg 2) halves
 * the depth for queues that are mostly pushed and popped; an owner that
 * reads its entries in array order keeps the arity it had, so that the order
 * stays as before. pos (optional, per value of a): each entry's slot, kept
 * as entries move, -1 once removed; for removals from the middle.
 * Costs: push, pop, remove O(2^lg log n). */
typedef struct fs__heap_ent {
  double t;
  uint64_t seq;
  int32_t a, b;
} fs__heap_ent;

typedef struct fs__heap {
  fs__heap_ent *e;
  size_t len, cap;
  int32_t *pos;
  unsigned lg;
} fs__heap;

static inline int fs__heap_before(const fs__heap_ent *x, const fs__heap_ent *y) {
  return (x->t < y->t) | ((x->t == y->t) & (x->seq < y->seq));
}
/* An empty heap of arity 2^lg (lg 1 or 2); pos: NULL or the owner's array. */
void fs__heap_init(fs__heap *h, unsigned lg, int32_t *pos);
void fs__heap_free(fs__heap *h);
/* Room for exactly n entries in all (if it has less). 0 or FS_ENOMEM (the
 * heap unchanged). */
int fs__heap_reserve(fs__heap *h, size_t n);
/* (The operations below are inline: the engine's event queue and the
 * max-min fill call them in their innermost loops. t_only, a constant at
 * each call: the order on t alone, no positions kept, for a heap whose
 * seq are all 0 (the same order, without comparing them).) */
static inline int fs__heap_lt_(const fs__heap_ent *x, const fs__heap_ent *y, int t_only) {
  return t_only ? x->t < y->t : fs__heap_before(x, y);
}

static inline void fs__heap_put_(fs__heap *h, size_t i, fs__heap_ent x, int t_only) {
  h->e[i] = x;
  if (!t_only && h->pos) h->pos[x.a] = (int32_t)i;
}

/* Puts x at slot i (its subtree being a heap) and moves it down. Of equal
 * children the first wins, and x stays above a child equal to it. */
static inline void fs__heap_down_(fs__heap *h, size_t i, fs__heap_ent x, int t_only) {
  size_t n = h->len;
  unsigned lg = h->lg;
  for (;;) {
    size_t c = (i << lg) + 1;
    if (c >= n) break;
    size_t best = c, end = c + ((size_t)1 << lg) < n ? c + ((size_t)1 << lg) : n;
    for (size_t j = c + 1; j < end; j++)
      best = fs__heap_lt_(&h->e[j], &h->e[best], t_only) ? j : best;
    if (!fs__heap_lt_(&h->e[best], &x, t_only)) break;
    fs__heap_put_(h, i, h->e[best], t_only);
    i = best;
  }
  fs__heap_put_(h, i, x, t_only);
}

/* Puts x at slot i and moves it up; the slot it ends in. */
static inline size_t fs__heap_up_(fs__heap *h, size_t i, fs__heap_ent x) {
  unsigned lg = h->lg;
  while (i > 0) {
    size_t p = (i - 1) >> lg;
    if (!fs__heap_before(&x, &h->e[p])) break;
    fs__heap_put_(h, i, h->e[p], 0);
    i = p;
  }
  fs__heap_put_(h, i, x, 0);
  return i;
}

/* 0 or FS_ENOMEM (the heap unchanged). */
static inline int fs__heap_push(fs__heap *h, fs__heap_ent x) {
  int rc;
  if (h->len == h->cap && (rc = fs__grow(&h->e, &h->cap, h->len + 1, sizeof(*h->e)))) return rc;
  fs__heap_up_(h, h->len++, x);
  return 0;
}

/* Removes the entry at slot i. */
static inline void fs__heap_remove(fs__heap *h, size_t i) {
  if (h->pos) h->pos[h->e[i].a] = -1;
  size_t n = --h->len;
  if (i == n) return;
  fs__heap_ent x = h->e[n];
  /* the last entry may belong above slot i (not at the top) */
  if (i && fs__heap_up_(h, i, x) != i) return;
  fs__heap_down_(h, i, x, 0);
}

/* Removes the top (the heap is not empty). */
static inline void fs__heap_pop(fs__heap *h) {
  fs__heap_remove(h, 0);
}

/* The entry at slot i became later (its key rose, e.g. a stale top re-keyed):
 * moves it down. */
static inline void fs__heap_sift_down(fs__heap *h, size_t i) {
  fs__heap_down_(h, i, h->e[i], 0);
}

/* Makes a heap of the len entries written into e (O(len)). */
static inline void fs__heap_build(fs__heap *h) {
  for (size_t i = (h->len >> h->lg) + 1; i-- > 0;)
    if (i < h->len) fs__heap_down_(h, i, h->e[i], 0);
}

/* The same three for a heap ordered on t alone (every seq 0, no pos): the
 * max-min fill's, the hottest. */
static inline void fs__heap_pop_t(fs__heap *h) {
  size_t n = --h->len;
  if (n) fs__heap_down_(h, 0, h->e[n], 1);
}
static inline void fs__heap_sift_down_t(fs__heap *h, size_t i) {
  fs__heap_down_(h, i, h->e[i], 1);
}
static inline void fs__heap_build_t(fs__heap *h) {
  for (size_t i = (h->len >> h->lg) + 1; i-- > 0;)
    if (i < h->len) fs__heap_down_(h, i, h->e[i], 1);
}

/* ---- hashing and random numbers --------------------------------------------
 * splitmix64 finaliser: a bijective 64-bit mix, used both for hashing
 * (ECMP, maps) and as the state step of the RNG. Deterministic everywhere. */
uint64_t fs__mix64(uint64_t x);
uint64_t fs__hash_str(const char *s);

typedef struct fs__rng {
  uint64_t s;
} fs__rng;
void fs__rng_seed(fs__rng *r, uint64_t seed);
uint64_t fs__rng_next(fs__rng *r);
/* Uniform in [0, n) without modulo bias; n > 0. */
uint64_t fs__rng_below(fs__rng *r, uint64_t n);
/* Uniform double in [0, 1). */
double fs__rng_unit(fs__rng *r);

/* ---- string -> int32 map ---------------------------------------------------
 * Open addressing, keys are borrowed (the caller keeps them alive). Used only
 * for lookups, never iterated, so it cannot leak hash order into output. */
typedef struct fs__strmap {
  const char **keys;
  int32_t *vals;
  size_t cap, len;
} fs__strmap;

void fs__strmap_init(fs__strmap *m);
void fs__strmap_free(fs__strmap *m);
/* Inserts key->val. Returns 0, 1 if the key was already present (the map is
 * unchanged and *old, if not NULL, receives its value) or FS_ENOMEM. */
int fs__strmap_put(fs__strmap *m, const char *key, int32_t val, int32_t *old);
/* Returns the value or -1 if absent. */
int32_t fs__strmap_get(const fs__strmap *m, const char *key);

/* ---- uint64 -> int32 map ---------------------------------------------------
 * Open addressing on mixed keys; any key value. Only looked up, never
 * iterated, so hash order never reaches output. A slot holds its key,
 * value and mark together: a probe of a table larger than the caches
 * costs one miss, not three. */
typedef struct fs__u64slot {
  uint64_t key;
  int32_t val;
  int32_t used;
} fs__u64slot;

typedef struct fs__u64map {
  fs__u64slot *slot;
  size_t cap, len;
} fs__u64map;

void fs__u64map_init(fs__u64map *m);
void fs__u64map_free(fs__u64map *m);
/* Inserts or overwrites key -> val. Returns 0 or FS_ENOMEM (map unchanged). */
int fs__u64map_put(fs__u64map *m, uint64_t key, int32_t val);
/* 1 and *val if present, else 0. */
int fs__u64map_get(const fs__u64map *m, uint64_t key, int32_t *val);

/* ---- misc ------------------------------------------------------------------ */
/* Seconds on the monotonic clock, for wall times (differences only). */
double fs__now_s(void);
/* Greatest common divisor of non-negative a and b (gcd(a, 0) = a). */
int32_t fs__gcd32(int32_t a, int32_t b);

/* Reads a whole file into a NUL-terminated buffer (caller frees). Fails with
 * FS_EIO naming the path, or FS_EINVAL if the file contains a NUL byte. */
struct fs_err;
int fs__read_file(const char *path, char **out, size_t *len, struct fs_err *err);
/* The same for any bytes (a NUL is data; the buffer is still terminated). */
int fs__read_binary(const char *path, char **out, size_t *len, struct fs_err *err);

/* Copies s into buf (size n, always terminated) with control characters,
 * quotes and backslashes escaped C-style, so user strings (ids, keys) can go
 * into one-line messages. Returns buf. */
char *fs__escape(char *buf, size_t n, const char *s);

/* Writes s to f as a JSON string literal (quotes, backslashes and control
 * characters escaped). */
void fs__fput_json_str(FILE *f, const char *s);

/* Writes s to f as one CSV field (RFC 4180): quoted, with its quotes
 * doubled, when it holds a comma, a quote or a line break. */
void fs__csv_field(FILE *f, const char *s);

/* Formats a double the way fabricsim outputs numbers: shortest of %.15g,
 * never "nan"/"inf" (those become null). buf must hold 32 bytes. */
void fs__fmt_num(char *buf, double v);

#endif
