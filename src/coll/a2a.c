/* Placeholder: bruck, pairwise, direct are being written; they implement no op yet. */
#include "internal.h"

const fs__coll_algo_impl fs__coll_bruck = {FS_ALGO_BRUCK, 0, NULL, NULL, NULL, NULL};
const fs__coll_algo_impl fs__coll_pairwise = {FS_ALGO_PAIRWISE, 0, NULL, NULL, NULL, NULL};
const fs__coll_algo_impl fs__coll_direct = {FS_ALGO_DIRECT, 0, NULL, NULL, NULL, NULL};
