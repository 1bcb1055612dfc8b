/* Placeholder: rd, rhd are being written; they implement no op yet. */
#include "internal.h"

const fs__coll_algo_impl fs__coll_rd = {FS_ALGO_RD, 0, NULL, NULL, NULL, NULL};
const fs__coll_algo_impl fs__coll_rhd = {FS_ALGO_RHD, 0, NULL, NULL, NULL, NULL};
