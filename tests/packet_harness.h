/* Shared by the packet backend's tests (test_packet.c, which defines it)
 * and those of small flows as packets (test_hybrid.c). */
#ifndef FABRICSIM_TESTS_PACKET_HARNESS_H
#define FABRICSIM_TESTS_PACKET_HARNESS_H

#include "fabricsim/scenario.h"

/* A scenario from text, run by the engine, then (packet 1) again by the
 * packet backend, whose times replace the engine's. NULL (the test has
 * failed) on error. */
fs_scenario *test_packet_scenario(const char *text, int packet);

#endif
