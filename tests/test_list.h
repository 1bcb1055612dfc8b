/* The registry of tests: each module keeps its own X(name) list. */
#include "list_base.h"
#include "list_topo.h"
#include "list_route.h"
#include "list_sim.h"
#include "list_coll.h"
#include "list_cli.h"
