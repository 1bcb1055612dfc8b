/* The "transport" key of scenario and job files (docs/formats.md), shared by
 * their parsers. */
#ifndef FABRICSIM_SIM_TRANSPORT_JSON_H
#define FABRICSIM_SIM_TRANSPORT_JSON_H

#include <cjson/cJSON.h>

#include "../base/json.h"
#include "fabricsim/sim.h"

/* root["transport"]: absent = fluid; "tcp" (a kind's defaults); or
 * {"kind", "connections": "new"|"persistent", "mss_bytes", "header_bytes",
 * "init_window", "efficiency", "queue_k", "source_queue": "fq"|"none"} over
 * the kind's defaults. Errors name
 * $.transport... and the value. */
int fs__transport_json(const fs__jctx *c, const cJSON *root, fs_transport *out);

#endif
