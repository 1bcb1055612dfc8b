/* Shared by the packet backend's tests (test_packet.c, which defines it)
 * and those of small flows as packets (test_hybrid.c). */
#ifndef FABRICSIM_TESTS_PACKET_HARNESS_H
#define FABRICSIM_TESTS_PACKET_HARNESS_H

#include "fabricsim/scenario.h"

/* A scenario from text, run by the engine, then (packet 1) again by the
 * packet backend, whose times replace the engine's. NULL (the test has
 * failed) on error. */
fs_scenario *test_packet_scenario(const char *text, int packet);

/* Writes at text + off (cap bytes in all) the flows of a 64 KiB
 * all-to-all among hosts 0-7, each sender chaining its messages in the same
 * destination order ("m<src>_<dst>"), as a JSON array "[...]"; returns the
 * new offset (>= cap: out of room). */
size_t test_chained_a2a(char *text, size_t cap, size_t off);

/* A star of 4 hosts at 100 Gb/s: hosts 1 and 2 send 8 MiB each to host 0
 * (fluid), host 3 a chain of `mice` messages of 16 KiB to it from
 * start_ns on (packets), under `transport` (a JSON object). The engine's
 * run (packet 0) or the packet backend's: returns the elephants' last
 * finish, the mice's FCTs in fct; NAN on error. */
double test_elephants_and_mice(const char *transport, int mice, long start_ns, int packet,
                               double *fct);

#endif
