// A C++ program against libfabricsim: every public header compiles as
// C++ and links (extern "C"); `make api-check` builds and runs it with the
// installed library: it builds a small fat-tree and reads it back.
#include <cstdio>

#include "fabricsim/chakra.h"
#include "fabricsim/coll.h"
#include "fabricsim/compute.h"
#include "fabricsim/err.h"
#include "fabricsim/html.h"
#include "fabricsim/netctl.h"
#include "fabricsim/ns3.h"
#include "fabricsim/ocs.h"
#include "fabricsim/output.h"
#include "fabricsim/packet.h"
#include "fabricsim/pipeline.h"
#include "fabricsim/report.h"
#include "fabricsim/route.h"
#include "fabricsim/routeopt.h"
#include "fabricsim/scenario.h"
#include "fabricsim/sim.h"
#include "fabricsim/sweep.h"
#include "fabricsim/symm.h"
#include "fabricsim/topo.h"
#include "fabricsim/topoopt.h"
#include "fabricsim/tpu.h"
#include "fabricsim/trace.h"
#include "fabricsim/train.h"
#include "fabricsim/wan.h"
#include "fabricsim/wan_risk.h"
#include "fabricsim/work.h"

int main() {
  fs_err err = {0, ""};
  fs_topo *t = nullptr;
  if (fs_topo_from_spec("fattree:k=4", &t, &err) != 0) {
    std::fprintf(stderr, "api-cpp: %s\n", err.msg);
    return 1;
  }
  std::printf("C++: fattree:k=4 has %d hosts; fs_strerror(FS_EINVAL) = \"%s\"\n", t->n_hosts,
              fs_strerror(FS_EINVAL));
  fs_topo_free(t);
  return 0;
}
