/* Implementation of the internal utilities declared in base.h. */
#include "base.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fabricsim/err.h"

int fs__grow(void *p, size_t *cap, size_t need, size_t elem) {
  void **pp = (void **)p;
  if (need <= *cap) return 0;
  size_t ncap = *cap ? *cap : 8;
  while (ncap < need) {
    if (ncap > SIZE_MAX / 2) return FS_ENOMEM;
    ncap *= 2;
  }
  if (elem && ncap > SIZE_MAX / elem) return FS_ENOMEM;
  void *np = realloc(*pp, ncap * elem);
  if (!np) return FS_ENOMEM;
  *pp = np;
  *cap = ncap;
  return 0;
}

void fs__free_all(void *const *ptrs, size_t n) {
  for (size_t i = 0; i < n; i++) free(ptrs[i]);
}

void *fs__calloc(size_t n, size_t size) {
  if (n == 0 || size == 0) return calloc(1, 1);
  return calloc(n, size);
}

void *fs__malloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  size_t bytes = n * size;
  return malloc(bytes ? bytes : 1);
}

/* ---- record pool ---- */
void fs__pool_init(fs__pool *p, size_t size) {
  memset(p, 0, sizeof(*p));
  p->size = size;
}

int fs__pool_take(fs__pool *p, int32_t *k) {
  if (!p->n_free) {
    if (p->used == p->n_chunks * FS__POOL_CHUNK) { /* a chunk more */
      if (p->n_chunks >= INT32_MAX / FS__POOL_CHUNK - 1) return FS_ENOMEM;
      int32_t n = p->n_chunks + 1;
      void **ch = realloc(p->chunk, (size_t)n * sizeof(*ch));
      if (!ch) return FS_ENOMEM;
      p->chunk = ch;
      int32_t *fr = realloc(p->free, (size_t)n * FS__POOL_CHUNK * sizeof(int32_t));
      if (!fr) return FS_ENOMEM;
      p->free = fr;
      if (!(ch[n - 1] = fs__malloc(FS__POOL_CHUNK, p->size))) return FS_ENOMEM;
      p->n_chunks = n;
    }
    p->free[p->n_free++] = p->used++;
  }
  *k = p->free[--p->n_free];
  return 0;
}

void fs__pool_put(fs__pool *p, int32_t k) {
  p->free[p->n_free++] = k;
}

void fs__pool_free(fs__pool *p) {
  for (int32_t i = 0; i < p->n_chunks; i++) free(p->chunk[i]);
  free(p->chunk);
  free(p->free);
  fs__pool_init(p, p->size);
}

/* ---- heap ---- */
void fs__heap_init(fs__heap *h, unsigned lg, int32_t *pos) {
  memset(h, 0, sizeof(*h));
  h->lg = lg;
  h->pos = pos;
}

void fs__heap_free(fs__heap *h) {
  free(h->e);
  fs__heap_init(h, h->lg, h->pos);
}

int fs__heap_reserve(fs__heap *h, size_t n) {
  if (n <= h->cap) return 0;
  if (n > SIZE_MAX / sizeof(*h->e)) return FS_ENOMEM;
  fs__heap_ent *e = realloc(h->e, n * sizeof(*e));
  if (!e) return FS_ENOMEM;
  h->e = e;
  h->cap = n;
  return 0;
}

/* ---- arena ---- */
struct fs__arena_block {
  fs__arena_block *next;
  size_t pad; /* keeps data 16-byte aligned */
  unsigned char data[];
};

enum { ARENA_BLOCK = 64 * 1024 };

void fs__arena_init(fs__arena *a) { memset(a, 0, sizeof(*a)); }

void *fs__arena_alloc(fs__arena *a, size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  size_t bytes = n * size;
  if (bytes == 0) bytes = 1;
  bytes = (bytes + 15) & ~(size_t)15;
  if (!a->head || a->size - a->used < bytes) {
    size_t bsize = bytes > ARENA_BLOCK ? bytes : ARENA_BLOCK;
    fs__arena_block *b = malloc(sizeof(*b) + bsize);
    if (!b) return NULL;
    b->next = a->head;
    a->head = b;
    a->used = 0;
    a->size = bsize;
    a->total += sizeof(*b) + bsize;
  }
  void *p = a->head->data + a->used;
  a->used += bytes;
  memset(p, 0, bytes);
  return p;
}

char *fs__arena_strdup(fs__arena *a, const char *s) {
  size_t n = strlen(s) + 1;
  char *p = fs__arena_alloc(a, n, 1);
  if (p) memcpy(p, s, n);
  return p;
}

void fs__arena_free(fs__arena *a) {
  fs__arena_block *b = a->head;
  while (b) {
    fs__arena_block *next = b->next;
    free(b);
    b = next;
  }
  memset(a, 0, sizeof(*a));
}

/* ---- hashing ---- */
uint64_t fs__mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t fs__hash_str(const char *s) {
  /* FNV-1a, then mixed so that short keys spread over all 64 bits. */
  uint64_t h = 0xcbf29ce484222325ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
  return fs__mix64(h);
}

void fs__rng_seed(fs__rng *r, uint64_t seed) { r->s = seed; }

uint64_t fs__rng_next(fs__rng *r) {
  r->s += 0x9e3779b97f4a7c15ULL;
  uint64_t x = r->s;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t fs__rng_below(fs__rng *r, uint64_t n) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do x = fs__rng_next(r);
  while (x >= limit);
  return x % n;
}

double fs__rng_unit(fs__rng *r) {
  return (double)(fs__rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* ---- strmap ---- */
void fs__strmap_init(fs__strmap *m) { memset(m, 0, sizeof(*m)); }

void fs__strmap_free(fs__strmap *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof(*m));
}

static int strmap_rehash(fs__strmap *m, size_t ncap) {
  const char **keys = calloc(ncap, sizeof(*keys));
  int32_t *vals = calloc(ncap, sizeof(*vals));
  if (!keys || !vals) {
    free(keys);
    free(vals);
    return FS_ENOMEM;
  }
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->keys[i]) continue;
    size_t j = fs__hash_str(m->keys[i]) & (ncap - 1);
    while (keys[j]) j = (j + 1) & (ncap - 1);
    keys[j] = m->keys[i];
    vals[j] = m->vals[i];
  }
  free(m->keys);
  free(m->vals);
  m->keys = keys;
  m->vals = vals;
  m->cap = ncap;
  return 0;
}

int fs__strmap_put(fs__strmap *m, const char *key, int32_t val, int32_t *old) {
  if ((m->len + 1) * 2 > m->cap) {
    int rc = strmap_rehash(m, m->cap ? m->cap * 2 : 16);
    if (rc) return rc;
  }
  size_t j = fs__hash_str(key) & (m->cap - 1);
  while (m->keys[j]) {
    if (strcmp(m->keys[j], key) == 0) {
      if (old) *old = m->vals[j];
      return 1;
    }
    j = (j + 1) & (m->cap - 1);
  }
  m->keys[j] = key;
  m->vals[j] = val;
  m->len++;
  return 0;
}

int32_t fs__strmap_get(const fs__strmap *m, const char *key) {
  if (!m->cap) return -1;
  size_t j = fs__hash_str(key) & (m->cap - 1);
  while (m->keys[j]) {
    if (strcmp(m->keys[j], key) == 0) return m->vals[j];
    j = (j + 1) & (m->cap - 1);
  }
  return -1;
}

/* ---- u64map ---- */
void fs__u64map_init(fs__u64map *m) { memset(m, 0, sizeof(*m)); }

void fs__u64map_free(fs__u64map *m) {
  free(m->slot);
  memset(m, 0, sizeof(*m));
}

static size_t u64_slot(const fs__u64map *m, uint64_t key) {
  size_t i = fs__mix64(key) & (m->cap - 1);
  while (m->slot[i].used && m->slot[i].key != key) i = (i + 1) & (m->cap - 1);
  return i;
}

int fs__u64map_put(fs__u64map *m, uint64_t key, int32_t val) {
  if ((m->len + 1) * 2 > m->cap) {
    fs__u64map n = {NULL, m->cap ? m->cap * 2 : 64, 0};
    if (!(n.slot = calloc(n.cap, sizeof(*n.slot)))) return FS_ENOMEM;
    for (size_t i = 0; i < m->cap; i++)
      if (m->slot[i].used) n.slot[u64_slot(&n, m->slot[i].key)] = m->slot[i];
    n.len = m->len;
    fs__u64map_free(m);
    *m = n;
  }
  fs__u64slot *e = &m->slot[u64_slot(m, key)];
  if (!e->used) m->len++;
  *e = (fs__u64slot){key, val, 1};
  return 0;
}

int fs__u64map_get(const fs__u64map *m, uint64_t key, int32_t *val) {
  if (!m->cap) return 0;
  const fs__u64slot *e = &m->slot[u64_slot(m, key)];
  if (!e->used) return 0;
  *val = e->val;
  return 1;
}

/* ---- misc ---- */
double fs__now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int fs__read_binary(const char *path, char **out, size_t *len, fs_err *err) {
  FILE *f = fopen(path, "rb");
  if (!f) /* (ENOMEM: past the memory a run may use, which the CLI explains) */
    return fs_err_set(err, errno == ENOMEM ? FS_ENOMEM : FS_EIO, "%s: cannot open: %s", path,
                      strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    return fs_err_set(err, FS_EIO, "%s: cannot read: is a directory", path);
  }
  char *buf = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (fs__grow(&buf, &cap, n + 65536 + 1, 1)) {
      free(buf);
      fclose(f);
      return fs_err_set(err, FS_ENOMEM, "%s: out of memory reading", path);
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  int bad = ferror(f), e = errno;
  fclose(f);
  if (bad) {
    free(buf);
    return fs_err_set(err, FS_EIO, "%s: read error: %s", path, strerror(e));
  }
  buf[n] = '\0';
  *out = buf;
  if (len) *len = n;
  return 0;
}

int fs__read_file(const char *path, char **out, size_t *len, fs_err *err) {
  char *buf;
  size_t n;
  int rc = fs__read_binary(path, &buf, &n, err);
  if (rc) return rc;
  if (strlen(buf) != n) {
    free(buf);
    return fs_err_set(err, FS_EINVAL, "%s: contains a NUL byte; not a text file",
                      path);
  }
  *out = buf;
  if (len) *len = n;
  return 0;
}

void fs__csv_field(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\n\r")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

void fs__fmt_num(char *buf, double v) {
  if (!isfinite(v)) {
    strcpy(buf, "null");
    return;
  }
  if (v == 0) v = 0; /* no "-0" */
  snprintf(buf, 32, "%.15g", v);
}

char *fs__escape(char *buf, size_t n, const char *s) {
  size_t k = 0;
  for (; *s && k + 5 < n; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '\n') k += (size_t)snprintf(buf + k, n - k, "\\n");
    else if (c == '\t') k += (size_t)snprintf(buf + k, n - k, "\\t");
    else if (c == '"' || c == '\\') k += (size_t)snprintf(buf + k, n - k, "\\%c", c);
    else if (c < 0x20 || c == 0x7f) k += (size_t)snprintf(buf + k, n - k, "\\x%02x", c);
    else buf[k++] = (char)c;
  }
  if (*s && n > 4) {
    k = k < n - 4 ? k : n - 4;
    memcpy(buf + k, "...", 3);
    k += 3;
  }
  if (n) buf[k < n ? k : n - 1] = '\0';
  return buf;
}

void fs__fput_json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fputc('"', f);
}

int32_t fs__gcd32(int32_t a, int32_t b) {
  while (b) {
    int32_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}
