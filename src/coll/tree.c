/* Placeholder: tree, binomial are being written; they implement no op yet. */
#include "internal.h"

const fs__coll_algo_impl fs__coll_tree = {FS_ALGO_TREE, 0, NULL, NULL, NULL, NULL};
const fs__coll_algo_impl fs__coll_binomial = {FS_ALGO_BINOMIAL, 0, NULL, NULL, NULL, NULL};
