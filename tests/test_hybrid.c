/* Small tcp flows run as packets inside the fluid engine (transport
 * packet_bytes; docs/model.md, "Small flows as packets"):
 * - flows that all run as packets, with chains and a task, give the packet
 *   backend's times exactly (the same network, driven by the engine's DAG);
 * - mice beside a fluid elephant into one host: the elephant gives up the
 *   mice's bytes (its finish moves by their wire time at line rate, no
 *   link over capacity) and each mouse waits behind the elephant's queue;
 * - a dependency on a packet flow's bytes being sent fires when its last
 *   packet has left the NIC; the packets are counted;
 * - the refusals exit 2 naming the option or the JSON path; the same run
 *   twice gives the same bytes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim/packet.h"
#include "fabricsim/route.h"
#include "fabricsim/scenario.h"
#include "fabricsim/sim.h"
#include "fabricsim/topo.h"
#include "packet_harness.h"
#include "test.h"

static const double C = 100e9 / 8; /* bytes per second of every link */

/* Appends to text (of cap bytes) at off. */
#define PUT(...) (off += (size_t)snprintf(text + off, off < cap ? cap - off : 0, __VA_ARGS__))

/* A 64 KiB all-to-all among 8 hosts of two leaves (2 spines), each sender
 * chaining its messages in the same destination order, and a task on host
 * 0 after its last; every flow runs as packets. */
TEST(test_hybrid_small_flows_equal_the_packet_backend) {
  for (int persistent = 0; persistent < 2; persistent++) {
    size_t cap = 16384, off = 0;
    char *text = malloc(cap);
    if (!text) return;
    PUT("{\"topology\": {\"type\": \"leafspine\", \"leaves\": 2, \"spines\": 2,"
        " \"hosts_per_leaf\": 4, \"host_gbps\": 100, \"fabric_gbps\": 100, \"latency_ns\": 1000},"
        " \"routing\": {\"mode\": \"ecmp\", \"seed\": 3},"
        " \"transport\": {\"kind\": \"tcp\", \"mss_bytes\": 8960, \"header_bytes\": 42,"
        " \"connections\": \"%s\", \"packet_bytes\": 65536}, \"flows\": ",
        persistent ? "persistent" : "new");
    off = test_chained_a2a(text, cap, off);
    PUT(", \"tasks\": [{\"id\": \"t\", \"host\": 0, \"duration_ns\": 3000,"
        " \"after\": [\"m0_7\"]}]}");
    CHECK(off < cap);
    fs_scenario *eng = test_packet_scenario(text, 0), *pk = test_packet_scenario(text, 1);
    free(text);
    if (eng && pk) {
      int32_t n = fs_sim_n_items(eng->sim);
      CHECK_EQ_INT(n, 8 * 7 + 1);
      /* 8 segments each and their ACKs; a new connection's SYN, SYN-ACK and
       * ACK of it, its closing FIN (the receiver's) and the ACK of that */
      CHECK_EQ_INT((int)fs_sim_get_counters(eng->sim).packets, 8 * 7 * (16 + 5 * !persistent));
      for (int32_t i = 0; i < n; i++) {
        CHECK_REL(fs_sim_start_s(eng->sim, i), fs_sim_start_s(pk->sim, i), 1e-12, "s (start)");
        CHECK_REL(fs_sim_finish_s(eng->sim, i), fs_sim_finish_s(pk->sim, i), 1e-12, "s (finish)");
      }
    }
    fs_scenario_free(eng);
    fs_scenario_free(pk);
  }
}

/* Two warm 8 MiB flows into host 0 of a star (fluid) and a chain of
 * 16 KiB messages from host 3 beside them, from 200 us on (packets). */
static const char *const WARM_TCP =
    "{\"kind\": \"tcp\", \"connections\": \"persistent\", \"mss_bytes\": 8960,"
    " \"header_bytes\": 42, \"packet_bytes\": 65536}";

static double elephants_and_mice(int mice, int packet, double *fct) {
  return test_elephants_and_mice(WARM_TCP, mice, mice > 1 ? 200000 : 0, packet, fct);
}

TEST(test_hybrid_mice_take_their_bytes_from_the_elephants) {
  double fct[10], ref[10];
  double alone = elephants_and_mice(0, 0, NULL), with = elephants_and_mice(10, 0, fct);
  elephants_and_mice(10, 1, ref);
  double e_wire = 2 * (8388608 + ceil(8388608 / 8960.0) * 42), m_wire = 10 * (16384 + 2 * 42);
  /* the host's link carries them all: nothing finishes before their bytes
   * at line rate, and the elephants keep it full, so they give up the
   * mice's wire time */
  CHECK(with >= (e_wire + m_wire) / C);
  CHECK_REL(with - alone, m_wire / C, 0.1, "s (the mice's wire time)");
  /* the two warm windows exceed the pipe: the mice wait behind their
   * standing queue, as they do packet by packet (there ~8 % longer) */
  char text[1024];
  snprintf(text, sizeof(text),
           "{\"topology\": {\"type\": \"star\", \"hosts\": 4, \"gbps\": 100, \"latency_ns\": 1000},"
           " \"routing\": {\"mode\": \"shortest\"},"
           " \"transport\": {\"kind\": \"tcp\", \"connections\": \"persistent\", \"mss_bytes\": 8960,"
           " \"header_bytes\": 42, \"packet_bytes\": 65536},"
           " \"flows\": [{\"id\": \"m\", \"src\": 3, \"dst\": 0, \"bytes\": 16384}]}");
  fs_scenario *sc = test_packet_scenario(text, 0);
  if (!sc) return;
  double lone = fs_sim_finish_s(sc->sim, 0);
  fs_scenario_free(sc);
  double sum = 0, sum_ref = 0;
  for (int k = 0; k < 10; k++) {
    CHECK(fct[k] > 3 * lone);
    sum += fct[k];
    sum_ref += ref[k];
  }
  CHECK_REL(sum, sum_ref, 0.2, "s (the mice's FCTs against the packet backend)");
}

/* A warm 64 KiB flow (8 packets, its window 10) from host 0 of a star: its
 * packets leave back to back, so a task waiting for its bytes to be sent
 * starts at their wire time at line rate; 8 data packets and 8 ACKs. */
TEST(test_hybrid_sent_dependency_and_packets_counted) {
  fs_err err = {0, ""};
  fs_topo *t = NULL;
  CHECK_OK(fs_topo_star(2, 100, 1000, &t, &err), &err);
  if (!t) return;
  fs_router *r = NULL;
  fs_sim *s = NULL;
  CHECK_OK(fs_router_new(t, &r, &err), &err);
  CHECK_OK(fs_sim_new(t, &s, &err), &err);
  fs_transport tp;
  fs_transport_defaults(FS_TRANSPORT_TCP, &tp);
  tp.persistent = 1;
  tp.mss_bytes = 8960;
  tp.header_bytes = 42;
  CHECK(tp.packet_bytes >= 65536); /* the default runs it as packets */
  if (s) CHECK_OK(fs_sim_set_transport(s, &tp, &err), &err);
  fs_route rt;
  fs_route_init(&rt);
  if (r && s) {
    CHECK_OK(fs_route_shortest(r, 0, 1, &rt, &err), &err);
    int32_t f = fs_sim_add_flow(s, 0, 1, 65536, 0, &rt, &err);
    int32_t task = fs_sim_add_task(s, 0, 0, 1000, &err);
    CHECK(f >= 0 && task >= 0);
    CHECK_OK(fs_sim_add_dep_sent(s, f, task, &err), &err);
    CHECK_OK(fs_sim_run(s, NULL, &err), &err);
    double wire = 65536 + 8 * 42;
    CHECK_REL(fs_sim_start_s(s, task), wire / C, 1e-12, "s (sent: last packet out)");
    CHECK(fs_sim_finish_s(s, f) > fs_sim_start_s(s, task));
    CHECK_EQ_INT((int)fs_sim_get_counters(s).packets, 16);
  }
  fs_route_free(&rt);
  fs_sim_free(s);
  fs_router_free(r);
  fs_topo_free(t);
}

TEST(test_hybrid_refusals_and_determinism) {
  char out[4096];
  CHECK_EQ_INT(test_run_cli("sim validation/incast16.json --transport fluid --packet-bytes 64K",
                            "2>&1", out, sizeof(out)),
               2);
  CHECK(strstr(out, "--packet-bytes") != NULL);
  /* the ideal rdma has no queues for packets to meet */
  CHECK_EQ_INT(test_run_cli("sim validation/incast16.json --transport rdma --packet-bytes 64K",
                            "2>&1", out, sizeof(out)),
               2);
  CHECK(strstr(out, "--rate-control dcqcn") != NULL);
  CHECK_EQ_INT(test_run_cli("sim validation/incast16.json --transport tcp --packet-bytes -1",
                            "2>&1", out, sizeof(out)),
               2);
  CHECK(strstr(out, "'-1'") != NULL);
  const char *bad[] = {
      "{\"kind\": \"fluid\", \"packet_bytes\": 65536}",
      "{\"kind\": \"rdma\", \"packet_bytes\": 65536}",
      "{\"kind\": \"tcp\", \"queue_k\": 0, \"packet_bytes\": 65536}",
      "{\"kind\": \"tcp\", \"packet_bytes\": -5}",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"topology\": {\"type\": \"star\", \"hosts\": 2, \"gbps\": 100, \"latency_ns\": 1000},"
             " \"transport\": %s, \"flows\": [{\"src\": 0, \"dst\": 1, \"bytes\": 1000}]}",
             bad[i]);
    FILE *f = fopen("hybrid_bad.json", "w");
    if (!f) continue;
    fputs(text, f);
    fclose(f);
    CHECK_EQ_INT(test_run_cli("sim hybrid_bad.json", "2>&1", out, sizeof(out)), 2);
    CHECK(strstr(out, "$.transport.packet_bytes") != NULL);
  }
  remove("hybrid_bad.json");
  /* mice beside elephants: packets and fluid together, twice */
  char a[65536], b[65536];
  CHECK_EQ_INT(test_run_cli("sim validation/mice-elephants.json --transport tcp --format json", "",
                            a, sizeof(a)),
               0);
  CHECK_EQ_INT(test_run_cli("sim validation/mice-elephants.json --transport tcp --format json", "",
                            b, sizeof(b)),
               0);
  CHECK(strlen(a) > 1000 && strcmp(a, b) == 0);
}
