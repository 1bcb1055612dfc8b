/* Placeholder: hier are being written; they implement no op yet. */
#include "internal.h"

const fs__coll_algo_impl fs__coll_hier = {FS_ALGO_HIER, 0, NULL, NULL, NULL, NULL};
