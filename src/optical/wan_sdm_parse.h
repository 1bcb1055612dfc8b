/* The WAN file's SDM keys ("sdm", "bands", "traffic"), read by
 * wan_sdm_parse.c for fs_wan_from_json (wan.c), which calls it last: the
 * grid and the modulation table are known by then. */
#ifndef FABRICSIM_OPTICAL_WAN_SDM_PARSE_H
#define FABRICSIM_OPTICAL_WAN_SDM_PARSE_H

#include "../base/json.h"
#include "fabricsim/wan.h"

/* Sets w->sdm (NULL when the file has none of the three keys). Errors as
 * fs_wan_from_json's: FS_EINVAL naming the file, the JSON path, the value. */
int fs__wan_parse_sdm(const fs__jctx *c, const cJSON *root, fs_wan *w);

#endif
