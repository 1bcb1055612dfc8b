/* nccl-tests' conventions for a collective's size: its element types and
 * reduction operations by name, what its redop and root columns print,
 * and how it rounds a requested size into elements per rank (coll.h). The
 * source is nccl-tests itself (github.com/NVIDIA/nccl-tests, src/common.cu
 * and src/<test>.cu), read, not copied. */
#include <stdint.h>
#include <string.h>

#include "fabricsim/coll.h"

const char *fs_coll_dtype_name(fs_coll_dtype t) {
  switch (t) {
#define XX(name, str, size) \
  case FS_COLL_DT_##name: return str;
    FS_COLL_DTYPE_MAP(XX)
#undef XX
    case FS_COLL_N_DTYPES: break;
  }
  return "?";
}

int32_t fs_coll_dtype_size(fs_coll_dtype t) {
  switch (t) {
#define XX(name, str, size) \
  case FS_COLL_DT_##name: return size;
    FS_COLL_DTYPE_MAP(XX)
#undef XX
    case FS_COLL_N_DTYPES: break;
  }
  return 0;
}

int fs_coll_dtype_parse(const char *name, fs_coll_dtype *out) {
  /* NCCL's second names of the same types (nccl.h's ncclDataType_t) */
  static const struct {
    const char *alias;
    fs_coll_dtype t;
  } aliases[] = {{"char", FS_COLL_DT_INT8},      {"int", FS_COLL_DT_INT32},
                 {"float16", FS_COLL_DT_HALF},   {"float32", FS_COLL_DT_FLOAT},
                 {"float64", FS_COLL_DT_DOUBLE}};
  for (int i = 0; i < FS_COLL_N_DTYPES; i++)
    if (strcmp(name, fs_coll_dtype_name((fs_coll_dtype)i)) == 0) {
      *out = (fs_coll_dtype)i;
      return 0;
    }
  for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
    if (strcmp(name, aliases[i].alias) == 0) {
      *out = aliases[i].t;
      return 0;
    }
  return FS_EINVAL;
}

const char *fs_coll_redop_name(fs_coll_redop r) {
  switch (r) {
#define XX(name, str) \
  case FS_COLL_REDOP_##name: return str;
    FS_COLL_REDOP_MAP(XX)
#undef XX
    case FS_COLL_N_REDOPS: break;
  }
  return "?";
}

int fs_coll_redop_parse(const char *name, fs_coll_redop *out) {
  for (int i = 0; i < FS_COLL_N_REDOPS; i++)
    if (strcmp(name, fs_coll_redop_name((fs_coll_redop)i)) == 0) {
      *out = (fs_coll_redop)i;
      return 0;
    }
  return FS_EINVAL;
}

const char *fs_coll_redop_column(fs_coll_op op, fs_coll_redop r) {
  switch (op) {
    case FS_COLL_ALLREDUCE:
    case FS_COLL_REDUCESCATTER:
    case FS_COLL_REDUCE:
    case FS_COLL_SENDRECV: return fs_coll_redop_name(r);
    default: return "none";
  }
}

int fs_coll_rooted(fs_coll_op op) { return op == FS_COLL_BROADCAST || op == FS_COLL_REDUCE; }

void fs_coll_nccl_tests_size(fs_coll_op op, int32_t p, int32_t elt, double requested,
                             double *bytes, double *count) {
  uint64_t e = elt == 1 || elt == 2 || elt == 4 || elt == 8 ? (uint64_t)elt : 1;
  uint64_t ranks = p >= 1 ? (uint64_t)p : 1;
  uint64_t want = requested > 0 ? (uint64_t)requested : 0;
  uint64_t n = want / e;
  if (op == FS_COLL_ALLGATHER || op == FS_COLL_REDUCESCATTER || op == FS_COLL_ALLTOALL) {
    /* each rank's share, kept 16-byte aligned as nccl-tests does */
    uint64_t per = (n / ranks) & ~(16 / e - 1);
    *count = (double)per;
    *bytes = (double)(per * ranks * e);
  } else {
    *count = (double)n;
    *bytes = (double)(n * e);
  }
}
