/* Placeholder: inc are being written; they implement no op yet. */
#include "internal.h"

const fs__coll_algo_impl fs__coll_inc = {FS_ALGO_INC, 0, NULL, NULL, NULL, NULL};
