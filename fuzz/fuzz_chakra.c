/* libFuzzer target for the Chakra trace reader (`make fuzz`): each input is
 * one rank's .et bytes; those that parse are simulated on a 4-host star.
 * Besides ASan/UBSan findings it aborts when a failure is not an input
 * error (or out of memory) with a message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fabricsim/chakra.h"
#include "fabricsim/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int rc, const fs_err *err) {
  if (rc == 0) return;
  if ((rc != FS_EINVAL && rc != FS_ENOMEM && rc != FS_ECYCLE) || !err->msg[0]) {
    fprintf(stderr, "fuzz-chakra: bad failure %d: '%s'\n", rc, err->msg);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fs_err err = {0, ""};
  fs_chakra *c = NULL;
  int rc = fs_chakra_parse(data, size, "fuzz.0.et", &c, &err);
  check(rc, &err);
  if (rc) return 0;
  fs_topo *t = NULL;
  if (fs_topo_star(4, 100, 1000, &t, &err) == 0) {
    double fin[1], mk;
    fs_chakra_stats st;
    err = (fs_err){0, ""};
    check(fs_chakra_run(c, t, FS_ROUTE_ECMP, 1, NULL, fin, &mk, &st, &err), &err);
  }
  fs_topo_free(t);
  fs_chakra_free(c);
  return 0;
}
