/* The packet backend (fabricsim/packet.h) against hand-computed cases: one
 * warm flow through a switch (its packets back to back, the last held
 * behind the one before it), a lone message on a new connection against
 * the tcp model (which ns-3 agrees with to ~13 ns, docs/validation.md; the
 * two agree exactly),
 * an incast's makespan against its bytes at line rate, a chain and a task
 * after it, the same output twice, and the refusals (rdma, spray, a
 * report of the fluid run) through the CLI with exit 2, naming the JSON
 * path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim/packet.h"
#include "fabricsim/scenario.h"
#include "packet_harness.h"
#include "test.h"

static const double C = 100e9 / 8; /* bytes per second of every link */
static const double LAT = 1e-6;    /* per link */
static const double P = 8960, H = 42;

fs_scenario *test_packet_scenario(const char *text, int packet) {
  fs_err err = {0, ""};
  fs_scenario *sc = NULL;
  if (fs_scenario_parse(text, strlen(text), "case.json", &sc, &err)) {
    test_fail(__FILE__, __LINE__, "parse: %s", err.msg);
    return NULL;
  }
  fs_sim_opts opts = {0};
  if (fs_scenario_run(sc, &opts, &err) || (packet && fs_packet_run(sc, &err))) {
    test_fail(__FILE__, __LINE__, "run: %s", err.msg);
    fs_scenario_free(sc);
    return NULL;
  }
  return sc;
}

#define PUT(...) (off += (size_t)snprintf(text + off, off < cap ? cap - off : 0, __VA_ARGS__))

size_t test_chained_a2a(char *text, size_t cap, size_t off) {
  for (int src = 0; src < 8; src++)
    for (int d = 0, prev = -1; d < 8; d++) {
      if (d == src) continue;
      PUT("%s{\"id\": \"m%d_%d\", \"src\": %d, \"dst\": %d, \"bytes\": 65536",
          src == 0 && prev < 0 ? "[" : ", ", src, d, src, d);
      if (prev >= 0) PUT(", \"after\": [\"m%d_%d\"]", src, prev);
      PUT("}");
      prev = d;
    }
  PUT("]");
  return off;
}

#undef PUT

double test_elephants_and_mice(const char *transport, int mice, long start_ns, int packet,
                               double *fct) {
  char text[4096];
  size_t cap = sizeof(text);
  int off = snprintf(text, cap,
                     "{\"topology\": {\"type\": \"star\", \"hosts\": 4, \"gbps\": 100,"
                     " \"latency_ns\": 1000}, \"routing\": {\"mode\": \"shortest\"},"
                     " \"transport\": %s,"
                     " \"flows\": [{\"id\": \"e1\", \"src\": 1, \"dst\": 0, \"bytes\": 8388608},"
                     " {\"id\": \"e2\", \"src\": 2, \"dst\": 0, \"bytes\": 8388608}",
                     transport);
  for (int k = 0; k < mice && off > 0 && (size_t)off < cap; k++) {
    off += snprintf(text + off, cap - (size_t)off,
                    ", {\"id\": \"m%d\", \"src\": 3, \"dst\": 0, \"bytes\": 16384", k);
    if ((size_t)off >= cap) break;
    if (k) off += snprintf(text + off, cap - (size_t)off, ", \"after\": [\"m%d\"]}", k - 1);
    else off += snprintf(text + off, cap - (size_t)off, ", \"start_ns\": %ld}", start_ns);
  }
  if (off > 0 && (size_t)off < cap) off += snprintf(text + off, cap - (size_t)off, "]}");
  CHECK(off > 0 && (size_t)off < cap);
  fs_scenario *sc = test_packet_scenario(text, packet);
  if (!sc) return NAN;
  for (int k = 0; k < mice; k++)
    fct[k] = fs_sim_finish_s(sc->sim, 2 + k) - fs_sim_start_s(sc->sim, 2 + k);
  double fin = fmax(fs_sim_finish_s(sc->sim, 0), fs_sim_finish_s(sc->sim, 1));
  fs_scenario_free(sc);
  return fin;
}

/* A star of `hosts` at 100 Gb/s, 1 us a link, tcp with 8960-byte segments
 * (persistent or not), the flows given. */
static char *star_case(int hosts, int persistent, const char *flows) {
  char *text = malloc(4096);
  snprintf(text, 4096,
           "{\"topology\": {\"type\": \"star\", \"hosts\": %d, \"gbps\": 100, \"latency_ns\": 1000},"
           " \"routing\": {\"mode\": \"shortest\"},"
           " \"transport\": {\"kind\": \"tcp\", \"mss_bytes\": 8960, \"header_bytes\": 42%s},"
           " \"flows\": [%s]}",
           hosts, persistent ? ", \"connections\": \"persistent\"" : "", flows);
  return text;
}

/* One warm flow of n segments through the star's switch, its window never
 * closing (10 segments take 7.2 us, the round trip 5.4): the source sends
 * them back to back; the last, shorter, leaves the switch right behind the
 * full one before it. FCT = (n - 1) F/C + lat + F/C + L/C + lat. */
TEST(test_packet_warm_flow_through_a_switch) {
  double bytes = 1 << 20;
  char flows[128];
  snprintf(flows, sizeof(flows), "{\"id\": \"a\", \"src\": 0, \"dst\": 1, \"bytes\": %.0f}", bytes);
  char *text = star_case(2, 1, flows);
  fs_scenario *sc = test_packet_scenario(text, 1);
  free(text);
  if (!sc) return;
  double n = ceil(bytes / P), full = P + H, last = bytes - (n - 1) * P + H;
  double want = (n - 1) * full / C + LAT + full / C + last / C + LAT;
  CHECK(n > 100); /* the case: many packets, the last one short */
  CHECK(last < full);
  CHECK_REL(fs_sim_finish_s(sc->sim, 0), want, 1e-12, "s (warm flow)");
  fs_scenario_free(sc);
}

/* A lone message on a new connection over a leaf-spine (4 hops): the
 * handshake, the first flight cut to 65535 bytes, slow start, the last
 * packet's store and forward. The tcp model times it as ns-3 does; the
 * packet backend must agree with it (the model's own fluid run: no flow
 * as packets). */
TEST(test_packet_lone_message_as_the_tcp_model) {
  static const double sizes[] = {16384, 65536, 1 << 20, 4 << 20};
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"topology\": {\"type\": \"leafspine\", \"leaves\": 2, \"spines\": 1,"
             " \"hosts_per_leaf\": 1, \"host_gbps\": 100, \"fabric_gbps\": 100,"
             " \"latency_ns\": 1000}, \"routing\": {\"mode\": \"shortest\"},"
             " \"transport\": {\"kind\": \"tcp\", \"mss_bytes\": 8960, \"header_bytes\": 42,"
             " \"packet_bytes\": 0},"
             " \"flows\": [{\"id\": \"a\", \"src\": 0, \"dst\": 1, \"bytes\": %.0f}]}",
             sizes[i]);
    fs_scenario *model = test_packet_scenario(text, 0), *pk = test_packet_scenario(text, 1);
    if (model && pk)
      CHECK_REL(fs_sim_finish_s(pk->sim, 0), fs_sim_finish_s(model->sim, 0), 1e-9,
                "s (packet backend against the tcp model)");
    fs_scenario_free(model);
    fs_scenario_free(pk);
  }
}

/* 8 senders of 1 MiB into one host: the receiver's link is busy from the
 * first packet's arrival to the last's, so the makespan is the bytes at
 * line rate plus the handshake and the first packet's way in, to within
 * the slow start's first round trips (< 5 %); DCTCP keeps it busy. A
 * chained flow starts when the last of its predecessors is done, and a
 * task after it when it is. */
TEST(test_packet_incast_chain_and_task) {
  char flows[2048];
  size_t off = 0;
  for (int s = 1; s <= 8; s++)
    off += (size_t)snprintf(flows + off, sizeof(flows) - off,
                            "{\"id\": \"i%d\", \"src\": %d, \"dst\": 0, \"bytes\": 1048576},", s, s);
  snprintf(flows + off, sizeof(flows) - off,
           "{\"id\": \"c\", \"src\": 0, \"dst\": 1, \"bytes\": 65536, \"after\": [\"i1\", \"i2\","
           " \"i3\", \"i4\", \"i5\", \"i6\", \"i7\", \"i8\"]}");
  char *text = star_case(9, 0, flows);
  char *with_task = malloc(strlen(text) + 256);
  strcpy(with_task, text);
  with_task[strlen(with_task) - 1] = '\0'; /* drop the last } */
  strcat(with_task, ", \"tasks\": [{\"id\": \"t\", \"host\": 1, \"duration_ns\": 5000, \"after\": [\"c\"]}]}");
  free(text);
  fs_scenario *sc = test_packet_scenario(with_task, 1);
  free(with_task);
  if (!sc) return;
  double wire = 8 * (1048576 + ceil(1048576 / P) * H);
  double last_in = 0;
  for (int32_t i = 0; i < 8; i++)
    if (fs_sim_finish_s(sc->sim, i) > last_in) last_in = fs_sim_finish_s(sc->sim, i);
  CHECK(last_in >= wire / C);
  CHECK(last_in <= wire / C * 1.05);
  CHECK_REL(fs_sim_start_s(sc->sim, 8), last_in, 1e-12, "s (chained flow's start)");
  CHECK(fs_sim_finish_s(sc->sim, 8) > fs_sim_start_s(sc->sim, 8));
  CHECK_REL(fs_sim_start_s(sc->sim, 9), fs_sim_finish_s(sc->sim, 8), 1e-12, "s (task's start)");
  CHECK_REL(fs_sim_finish_s(sc->sim, 9), fs_sim_finish_s(sc->sim, 8) + 5e-6, 1e-12,
            "s (task's end)");
  fs_scenario_free(sc);
}

/* The same scenario twice gives the same bytes out (RED's draws are
 * seeded); the refusals exit 2 naming the JSON path. */
TEST(test_packet_cli_deterministic_and_refusals) {
  char a[65536], b[65536];
  CHECK_EQ_INT(test_run_cli("sim validation/alltoall64k-same-order.json --backend packet "
                            "--format json",
                            "", a, sizeof(a)),
               0);
  CHECK_EQ_INT(test_run_cli("sim validation/alltoall64k-same-order.json --backend packet "
                            "--format json",
                            "", b, sizeof(b)),
               0);
  CHECK(strlen(a) > 1000 && strcmp(a, b) == 0);
  char out[4096];
  CHECK_EQ_INT(test_run_cli("sim validation/incast16.json --backend packet --transport fluid",
                            "2>&1", out, sizeof(out)),
               2);
  CHECK(strstr(out, "$.transport.kind") != NULL);
  CHECK_EQ_INT(test_run_cli("sim validation/incast16.json --backend packet --routing spray",
                            "2>&1", out, sizeof(out)),
               2);
  CHECK(strstr(out, "$.routing.mode") != NULL);
  CHECK_EQ_INT(test_run_cli("sim validation/incast16.json --backend packet --report x.html",
                            "2>&1", out, sizeof(out)),
               2);
  CHECK_EQ_INT(test_run_cli("sim validation/incast16.json --backend tcp", "2>&1", out, sizeof(out)),
               2);
  CHECK(strstr(out, "fluid, ns3 or packet") != NULL);
}
