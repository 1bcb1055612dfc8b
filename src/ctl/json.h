/* JSON input of the network controller shared by the file formats that can
 * ask for it (job files of `fabricsim train`, scenario files of `fabricsim
 * sim`): one strict reader of the "failures" array, so both formats accept
 * the same entries and give the same messages. Only the time key differs
 * (at_ms in job files, at_ns in scenario files). */
#ifndef FABRICSIM_CTL_JSON_H
#define FABRICSIM_CTL_JSON_H

#include "../base/json.h"
#include "fabricsim/netctl.h"
#include "fabricsim/topo.h"

/* How a failure's time is written: its key, the seconds per unit, whether
 * it must be an integer (scenario times are whole nanoseconds), and the
 * largest value accepted. */
typedef struct fs__ctl_time_key {
  const char *key;
  double unit_s;
  int integer;
  double max;
} fs__ctl_time_key;

/* Reads root["failures"], if present: an array of objects
 * {TIME_KEY: T, "cable": "a-b"} or {TIME_KEY: T, "switch": "name"}, names
 * resolved on t by fs_netctl_parse_target (a switch stands for all its
 * cables). Appends one fs_netctl_failure per cable to *failures (grown with
 * fs__grow, freed by the caller with free(); *n counts them). Returns 0
 * (also when the key is absent), FS_EINVAL with "file: $.failures[i]...:
 * what, got value" in c->err, or FS_ENOMEM; on failure the entries already
 * appended stay in *failures (counted by *n) for the caller to free. */
int fs__ctl_json_failures(const fs__jctx *c, const cJSON *root, const fs_topo *t,
                          const fs__ctl_time_key *at, fs_netctl_failure **failures,
                          int32_t *n);

#endif
