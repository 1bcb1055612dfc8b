/* Shared between wan.c and wan_risk*.c only: the reader of the WAN file's
 * risk keys, called from fs_wan_from_json, and its free. */
#ifndef FABRICSIM_WAN_RISK_INTERNAL_H
#define FABRICSIM_WAN_RISK_INTERNAL_H

#include "../base/json.h"
#include "fabricsim/wan.h"

/* Reads "srlgs", "reliability", "protection", "checkpoint_minutes" of root
 * into w->risk (left NULL when none is present); errors name the JSON path
 * and the value. */
int fs__wan_parse_risk(const fs__jctx *c, const cJSON *root, fs_wan *w);
void fs__wan_risk_free(struct fs_wan_risk *r);

struct fs_wan_risks;
/* The shortest path by km sharing no risk with work (two-step's second
 * step, wan_risk.c): 1 (backup filled), 0 none, or FS_ENOMEM. */
int fs__wan_backup_for(const fs_wan *w, const struct fs_wan_risks *r, const fs_wan_path *work,
                       fs_wan_path *backup);

struct fs_wan_pplan;
struct fs_wan_route;
/* An fs_wan_plan whose demand di is served by routes[di] (NULL: not
 * served), for fs_wan_train and fs_wan_plan_check (wan_risk_eval.c). */
int fs__wan_plan_of_routes(const struct fs_wan_pplan *p, const struct fs_wan_route *const *routes,
                           fs_wan_plan **out, fs_err *err);

#endif
