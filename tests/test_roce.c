/* RoCEv2 under DCQCN packet by packet (src/sim/pktnet.c with cfg.roce):
 * the packet backend's `--transport rdma` and rdma messages as packets
 * beside DCQCN's fluid (docs/model.md, "The packet backend" and "Small
 * flows as packets"):
 * - a lone message: store and forward of its last packet at each switch,
 *   no ACK, no CNP (the closed form of the ideal rdma);
 * - a NIC serves its queue pairs round robin, a packet a turn;
 * - a port slower than the sender: without marks it is busy from the
 *   first packet on (closed form); with them its CNPs cut the sender,
 *   which then leaves the port idle (DCQCN's under-use), the same bytes
 *   twice;
 * - messages that all run as packets give the packet backend's times;
 *   mice beside two fluid elephants wait behind DCQCN's queue and take
 *   their bytes from the elephants. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim/scenario.h"
#include "fabricsim/sim.h"
#include "packet_harness.h"
#include "test.h"

static const double C = 100e9 / 8, LAT = 1e-6; /* bytes/s and s of a 100 Gb/s link */
static const double P = 4096, H = 62;           /* RoCE's payload and headers */

#define PUT(...) (off += (size_t)snprintf(text + off, off < cap ? cap - off : 0, __VA_ARGS__))

/* A star of `hosts` at 100 Gb/s, 1 us a link, rdma under DCQCN with the
 * given extra transport keys, the flows given. */
static fs_scenario *star_run(int hosts, const char *keys, const char *flows, int packet) {
  char text[4096];
  snprintf(text, sizeof(text),
           "{\"topology\": {\"type\": \"star\", \"hosts\": %d, \"gbps\": 100, \"latency_ns\": 1000},"
           " \"routing\": {\"mode\": \"shortest\"},"
           " \"transport\": {\"kind\": \"rdma\", \"rate_control\": \"dcqcn\"%s},"
           " \"flows\": [%s]}",
           hosts, keys, flows);
  return test_packet_scenario(text, packet);
}

/* 200,000 bytes from host 0 to a host on the other leaf of a leaf-spine
 * (4 links, 3 switches): its packets leave back to back, each stored and
 * forwarded at each switch. The engine (the message
 * runs as packets) and the packet backend agree; no ACK, no CNP. */
TEST(test_roce_lone_message_store_and_forward) {
  const char *text =
      "{\"topology\": {\"type\": \"leafspine\", \"leaves\": 2, \"spines\": 1, \"hosts_per_leaf\": 2,"
      " \"host_gbps\": 100, \"fabric_gbps\": 100, \"latency_ns\": 1000},"
      " \"routing\": {\"mode\": \"shortest\"},"
      " \"transport\": {\"kind\": \"rdma\", \"rate_control\": \"dcqcn\"},"
      " \"flows\": [{\"src\": 0, \"dst\": 3, \"bytes\": 200000}]}";
  double n = ceil(200000 / P), last = 200000 - (n - 1) * P + H;
  /* at each switch the short last packet waits for the full one before
   * it, so it leaves a full packet's time after that one's arrival */
  double want = ((n - 1) * (P + H) + last) / C + 4 * LAT + 3 * (P + H) / C;
  for (int packet = 0; packet < 2; packet++) {
    fs_scenario *sc = test_packet_scenario(text, packet);
    if (!sc) return;
    CHECK_REL(fs_sim_finish_s(sc->sim, 0), want, 1e-12, "s");
    if (!packet) CHECK_EQ_INT((int)fs_sim_get_counters(sc->sim).packets, (int)n);
    fs_scenario_free(sc);
  }
}

/* Host 0 sends 8 full packets to host 1 and 8 to host 2, both from t = 0.
 * Its NIC takes a queue pair's next packet into its device queue as it
 * sends one (the second message comes at the same instant, after): A1 A2
 * B1 A3 B2 ... B8, as the backend's NicPump turns too. So A's last packet
 * is the NIC's 14th and B's its 16th; each is then stored and forwarded
 * once at the switch, alone on its port. */
TEST(test_roce_nic_round_robin) {
  char flows[256];
  snprintf(flows, sizeof(flows),
           "{\"src\": 0, \"dst\": 1, \"bytes\": %d}, {\"src\": 0, \"dst\": 2, \"bytes\": %d}",
           8 * 4096, 8 * 4096);
  double pkt = (P + H) / C;
  for (int packet = 0; packet < 2; packet++) {
    fs_scenario *sc = star_run(3, "", flows, packet);
    if (!sc) return;
    CHECK_REL(fs_sim_finish_s(sc->sim, 0), 14 * pkt + pkt + 2 * LAT, 1e-12, "s (A)");
    CHECK_REL(fs_sim_finish_s(sc->sim, 1), 16 * pkt + pkt + 2 * LAT, 1e-12, "s (B)");
    fs_scenario_free(sc);
  }
}

/* One message of 2 MiB from host 0 to host 3 over a leaf-spine whose
 * fabric runs at 50 Gb/s: its queue builds at the first leaf's uplink.
 * kmin_kb/kmax_kb: the DCQCN keys (scaled by the port's rate). Returns
 * its finish; the packets sent in *packets. */
static double slow_uplink(double kmin_kb, double kmax_kb, int *packets) {
  char text[2048];
  size_t cap = sizeof(text), off = 0;
  PUT("{\"topology\": {\"type\": \"leafspine\", \"leaves\": 2, \"spines\": 1, \"hosts_per_leaf\": 2,"
      " \"host_gbps\": 100, \"fabric_gbps\": 50, \"latency_ns\": 1000},"
      " \"routing\": {\"mode\": \"shortest\"},"
      " \"transport\": {\"kind\": \"rdma\", \"rate_control\": \"dcqcn\","
      " \"packet_bytes\": 4194304, \"dcqcn\": {\"kmin_kb\": %g, \"kmax_kb\": %g}},"
      " \"flows\": [{\"src\": 0, \"dst\": 3, \"bytes\": 2097152}]}",
      kmin_kb, kmax_kb);
  fs_scenario *sc = test_packet_scenario(text, 1);
  if (!sc) return NAN;
  double fin = fs_sim_finish_s(sc->sim, 0);
  fs_scenario_free(sc);
  /* the packets: the engine's run with every flow as packets is the same */
  fs_scenario *eng = test_packet_scenario(text, 0);
  if (!eng) return NAN;
  CHECK_REL(fs_sim_finish_s(eng->sim, 0), fin, 1e-12, "s (engine, as packets)");
  *packets = (int)fs_sim_get_counters(eng->sim).packets;
  fs_scenario_free(eng);
  return fin;
}

TEST(test_roce_marks_cut_the_sender) {
  double n = 2097152 / P, C2 = C / 2, pkt = P + H;
  int quiet, marked;
  /* Kmin never reached: the uplink is busy from the first packet on, the
   * last one stored and forwarded at the spine and the second leaf */
  double want = pkt / C + LAT + n * pkt / C2 + LAT + pkt / C2 + LAT + pkt / C + LAT;
  double free_run = slow_uplink(1e6, 2e6, &quiet);
  CHECK_REL(free_run, want, 1e-12, "s (no marks)");
  CHECK_EQ_INT(quiet, (int)n);
  /* Kmin 40 KB at 100 Gb/s (20 KB at the uplink): its CNPs cut the
   * sender below the uplink's rate, which then idles */
  double cut = slow_uplink(40, 160, &marked);
  CHECK(marked > (int)n); /* CNPs */
  CHECK(cut > free_run * 1.01);
  int again;
  CHECK(slow_uplink(40, 160, &again) == cut && again == marked);
}

/* A 64 KiB all-to-all among 8 hosts of two leaves over one spine, each
 * sender chaining its messages in the same destination order: every
 * message runs as packets, so the engine gives the packet backend's
 * times to the bit; 16 data packets a message and a CNP for each one
 * marked, nothing else. */
TEST(test_roce_small_flows_equal_the_packet_backend) {
  size_t cap = 16384, off = 0;
  char *text = malloc(cap);
  if (!text) return;
  PUT("{\"topology\": {\"type\": \"leafspine\", \"leaves\": 2, \"spines\": 1,"
      " \"hosts_per_leaf\": 4, \"host_gbps\": 100, \"fabric_gbps\": 100, \"latency_ns\": 1000},"
      " \"routing\": {\"mode\": \"shortest\"},"
      " \"transport\": {\"kind\": \"rdma\", \"rate_control\": \"dcqcn\","
      " \"dcqcn\": {\"kmin_kb\": 40, \"kmax_kb\": 160}}, \"flows\": ");
  off = test_chained_a2a(text, cap, off);
  PUT("}");
  CHECK(off < cap);
  fs_scenario *eng = test_packet_scenario(text, 0), *pk = test_packet_scenario(text, 1);
  free(text);
  if (eng && pk) {
    int32_t n = fs_sim_n_items(eng->sim);
    CHECK_EQ_INT(n, 8 * 7);
    CHECK((int)fs_sim_get_counters(eng->sim).packets > 8 * 7 * 16); /* and some CNPs */
    for (int32_t i = 0; i < n; i++) {
      CHECK_REL(fs_sim_start_s(eng->sim, i), fs_sim_start_s(pk->sim, i), 1e-12, "s (start)");
      CHECK_REL(fs_sim_finish_s(eng->sim, i), fs_sim_finish_s(pk->sim, i), 1e-12, "s (finish)");
    }
  }
  fs_scenario_free(eng);
  fs_scenario_free(pk);
}

/* Hosts 1 and 2 send 8 MiB each to host 0 at line rate (fluid, under
 * DCQCN's model), host 3 a chain of 10 messages of 16 KiB to it from
 * 10 us on (packets); the engine's run (packet 0) or the packet
 * backend's. */
static double elephants_and_mice(int packet, double *fct) {
  return test_elephants_and_mice("{\"kind\": \"rdma\", \"rate_control\": \"dcqcn\"}", 10, 10000,
                                 packet, fct);
}

/* The receiver's port carries them all, so nothing ends before their
 * bytes at its rate. The elephants' queue grows at the port's rate until
 * their CNPs (behind it) cut them, then drains: the first four mice wait
 * behind it, longer each time, and those after it are as fast as a lone
 * one, as packet by packet (the sum within 20 %: DCQCN's fluid queue
 * drains ~20 us later than the packets', docs/validation.md). */
TEST(test_roce_mice_wait_behind_the_fluid_queue) {
  double fct[10], ref[10];
  double with = elephants_and_mice(0, fct);
  elephants_and_mice(1, ref);
  double lone = 5 * (P + H) / C + 2 * LAT; /* 4 packets, a store and forward */
  double e_wire = 2 * (8388608 + 8388608 / P * H), m_wire = 10 * (16384 + 4 * H);
  CHECK(with >= (e_wire + m_wire) / C);
  double sum = 0, sum_ref = 0;
  for (int k = 0; k < 10; k++) {
    if (k < 4) CHECK(fct[k] > 3 * lone && (k == 0 || fct[k] > fct[k - 1]));
    if (k < 4) CHECK(ref[k] > 3 * lone);
    if (k >= 5) CHECK_REL(fct[k], lone, 1e-9, "s (after the queue)");
    sum += fct[k];
    sum_ref += ref[k];
  }
  CHECK_REL(sum, sum_ref, 0.2, "s (the mice's FCTs against the packet backend)");
}
