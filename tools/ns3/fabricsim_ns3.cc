// fabricsim-ns3: the packet-level validation backend of `fabricsim sim
// --backend ns3` (docs/formats.md, "The ns-3 exchange file").
//
// Reads the exchange file fabricsim writes (nodes, directed links, flows with
// the path fabricsim routed them on, tasks, dependencies), builds the same
// network in ns-3 3.37 and runs the DAG: point-to-point links with the given
// rate and delay (one full-duplex channel per pair of opposite links), TCP
// DCTCP with ECN, a RED queue that marks at K packets on every switch
// port (K = k100 packets at 100 Gb/s, 65 by default, scaled linearly with
// the port rate), per-flow fair queues on host and NIC ports (fq, marking
// after K packets' time; --host-queue red|fifo for the alternatives), MTU
// 9000, segments of 8960 bytes (IP and TCP headers of 20 bytes each, no
// timestamps: ns-3 stamps in milliseconds), an ACK per segment, minimum
// RTO 1 ms, 16 MiB socket buffers, no drops (100000-packet queues). Each
// flow is its own TCP connection (a new one: the handshake is part of its
// time), from a source address S_f on its source host to a destination
// address D_f on its destination host (one /30 a flow); every
// node on the path gets the host route D_f -> the next link, and every node
// on the reverse path S_f -> the reverse link, so data follows exactly the
// given path and ACKs its reverse, and two flows of one host pair can take
// different paths. A flow starts (its BulkSend application is created) when
// its dependencies are done and its earliest start has come; it finishes
// when its receiver has all its bytes. With a "transport tcp persistent"
// line every flow's connection is opened and warmed before the run
// (OpenConnections); with "transport rdma" the flows are RoCEv2 queue pairs
// under DCQCN (the section "RoCEv2 with DCQCN" below). A task is a timer of its duration.
//
// Writes one line per item "item I START_NS FINISH_NS" and "makespan NS"
// (integer nanoseconds, ns-3's time resolution). Deterministic: fixed
// RngSeed and run. Exit 2 on bad input (naming the file, line and value),
// 1 if the simulation does not finish every item.
//
// Sizes: this is a validation tool for <= ~64 hosts and a few MiB per flow;
// the static routing tables grow with the flows crossing a node and are
// searched linearly per packet.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

using namespace ns3;

namespace {

constexpr uint32_t kMtu = 9000;
constexpr uint32_t kIpHeader = 20;
constexpr uint32_t kTcpHeader = 20; // no options: timestamps off (ns-3 stamps in ms)
constexpr uint32_t kSegment = kMtu - kIpHeader - kTcpHeader; // 8960
// a TCP packet's header bytes on the wire: PPP 2, IPv4 20, TCP 20, and 12
// more with the timestamp option
constexpr uint32_t kTcpWire = 2 + kIpHeader + kTcpHeader;
constexpr uint32_t kTimestampOption = 12;
constexpr uint16_t kPort = 5000;
// rdma: the headers ns-3 itself puts on a RoCE packet (PPP 2, IPv4 20, UDP
// 8); the rest of the header bytes (BTH, ICRC, Ethernet's) are UDP payload
constexpr uint32_t kRoceHeaders = 30;

struct Link {
  int32_t from, to;
  uint64_t bps;
  int64_t latency_ns;
  int32_t reverse = -1;     // the opposite link of the same cable (channel)
  Ptr<NetDevice> dev;       // transmitting device (on `from`)
  Ptr<QueueDisc> qdisc;     // its root queue disc
  uint32_t ifindex = 0;     // its Ipv4 interface on `from`
};

struct Item {
  bool is_flow = false;
  int32_t src = 0, dst = 0, host = 0;
  uint64_t bytes = 0;
  int64_t start_ns = 0, duration_ns = 0;
  std::vector<int32_t> links; // flow: its path's links
  int32_t waiting = 0;        // dependencies not yet done
  std::vector<int32_t> next;  // items that wait for this one
  bool started = false, done = false;
  int64_t t_start = -1, t_finish = -1;
  uint64_t received = 0;
  Ipv4Address saddr, daddr;
};

struct Rdma; // RoCEv2 with DCQCN: the hosts' NICs and queue pairs (below)

struct DcqcnParams {
  double kmin_kb = 400, kmax_kb = 1600; // RED marking band at 100 Gb/s, scaled with the rate
  double pmax = 0.2;                    // marking probability at Kmax
  double g = 1.0 / 256;                 // alpha's gain
  double alpha_us = 1;                  // alpha update period
  double dec_us = 4;                    // at most one rate decrease per this period
  double inc_us = 300;                  // rate increase timer
  int f = 1;                            // fast-recovery stages
  double ai_mbps100 = 20, hai_mbps100 = 200; // additive / hyper increase at 100 Gb/s
  double min_mbps = 1000;               // a queue pair's floor
  double cnp_us = 0;                    // a receiver's least spacing of CNPs per queue pair
};

struct Run {
  std::vector<int32_t> kinds; // node kinds: 1 host or NIC (FIFO ports), 0 switch (RED/ECN)
  std::vector<int32_t> hosts; // 1 for a host (an end of flows and tasks)
  std::vector<Link> links;
  std::vector<Item> items;
  NodeContainer nodes;
  int32_t remaining = 0;
  // "transport rdma PAYLOAD HEADER" in the exchange file: RoCEv2 with DCQCN
  // instead of DCTCP (packets of PAYLOAD bytes plus HEADER on the wire)
  bool rdma = false;
  uint32_t payload = 0, header = 0;
  Rdma *roce = nullptr;
  // "dcqcn KMIN KMAX PMAX G ALPHA DEC INC F AI HAI MIN": the scenario's
  // DCQCN settings (the --dcqcn-* options apply to files without one)
  bool has_dcqcn = false;
  DcqcnParams dcqcn;
  // "transport tcp persistent": every flow's connection is opened and warm
  // before the run, which starts t0_ns later (times are reported from it)
  bool persistent = false;
  // "tcp SEGMENT HEADER INITWIN K100": the scenario's packets, initial
  // window and marking threshold (the defaults and --k100 apply to files
  // without one); HEADER is kTcpWire, or with timestamps kTcpWire + 12
  bool has_tcp = false;
  uint32_t tcp_segment = kSegment, tcp_header = kTcpWire, tcp_iw = 10;
  double tcp_k100 = 65;
  uint32_t mtu = kMtu; // the IP packets' largest size on every device
  int64_t t0_ns = 0;
  std::vector<Ptr<Socket>> conn; // by item: the open connection
  std::vector<uint64_t> unsent;  // by item: bytes not yet written to it
  int32_t connecting = 0, connected = 0, refused = 0;
};

// The run's clock: ns-3's less the warm-up of persistent connections.
int64_t RunNs(const Run *r) { return Simulator::Now().GetNanoSeconds() - r->t0_ns; }

[[noreturn]] void bad(const std::string &file, int line, const std::string &what) {
  std::fprintf(stderr, "fabricsim-ns3: %s:%d: %s\n", file.c_str(), line, what.c_str());
  std::exit(2);
}

void Finish(Run *r, int32_t i);
void RdmaStart(Run *r, int32_t i);

// A persistent connection's message: written as its send buffer has room.
void FillConnection(Run *r, int32_t i) {
  Ptr<Socket> s = r->conn[i];
  while (r->unsent[i] > 0 && s->GetTxAvailable() > 0) {
    uint32_t n = (uint32_t)std::min<uint64_t>({r->unsent[i], s->GetTxAvailable(), 1u << 20});
    if (s->Send(Create<Packet>(n)) < 0) break;
    r->unsent[i] -= n;
  }
}

void OnTxRoom(Run *r, int32_t i, Ptr<Socket>, uint32_t) {
  if (r->unsent[i] > 0) FillConnection(r, i);
}

// Open: one byte sent is what makes it warm besides its window: the
// receiver's ACK of it carries its scaled receive window (the SYN-ACK's is
// never scaled, at most 65535 bytes, RFC 7323 2.2). The byte is not counted.
void OnConnected(Run *r, Ptr<Socket> s) {
  r->connected++;
  s->Send(Create<Packet>(1));
}

void OnConnectFailed(Run *r, Ptr<Socket>) { r->refused++; }

// The warm-up: every flow's connection opened at time 0 with a window that
// covers its path's bandwidth-delay product (it is in congestion avoidance
// there, DCTCP's state after earlier messages); the run starts at t0_ns.
void OpenConnections(Run *r) {
  r->conn.resize(r->items.size());
  r->unsent.assign(r->items.size(), 0);
  for (int32_t i = 0; i < (int32_t)r->items.size(); i++) {
    Item &it = r->items[i];
    if (!it.is_flow || it.bytes == 0) continue;
    double rtt_s = 0, c = (double)r->links[it.links.front()].bps;
    for (int32_t l : it.links)
      rtt_s += 2 * r->links[l].latency_ns * 1e-9 +
               8.0 * (r->mtu + 2 + r->tcp_header) / (double)r->links[l].bps;
    uint32_t w = (uint32_t)std::ceil(c * rtt_s / 8 / r->tcp_segment);
    if (w < r->tcp_iw) w = r->tcp_iw;
    Ptr<Socket> s = Socket::CreateSocket(r->nodes.Get(it.src), TcpSocketFactory::GetTypeId());
    s->SetAttribute("InitialCwnd", UintegerValue(w));
    s->SetAttribute("InitialSlowStartThreshold", UintegerValue(w * r->tcp_segment));
    s->Bind(InetSocketAddress(it.saddr, 0));
    s->SetConnectCallback(MakeBoundCallback(&OnConnected, r), MakeBoundCallback(&OnConnectFailed, r));
    s->SetSendCallback(MakeBoundCallback(&OnTxRoom, r, i));
    s->Connect(InetSocketAddress(it.daddr, kPort));
    r->conn[i] = s;
    r->connecting++;
  }
}

void StartItem(Run *r, int32_t i) {
  Item &it = r->items[i];
  it.started = true;
  it.t_start = RunNs(r);
  if (!it.is_flow) {
    Simulator::Schedule(NanoSeconds(it.duration_ns), &Finish, r, i);
    return;
  }
  if (it.bytes == 0) { // no packet: the path latency, as in the fluid engine
    int64_t lat = 0;
    for (int32_t l : it.links) lat += r->links[l].latency_ns;
    Simulator::Schedule(NanoSeconds(lat), &Finish, r, i);
    return;
  }
  if (r->rdma) {
    RdmaStart(r, i);
    return;
  }
  if (r->persistent) {
    r->unsent[i] = it.bytes;
    FillConnection(r, i);
    return;
  }
  BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(it.daddr, kPort));
  bulk.SetAttribute("MaxBytes", UintegerValue(it.bytes));
  bulk.SetAttribute("SendSize", UintegerValue(r->tcp_segment * 8));
  bulk.SetAttribute("Local", AddressValue(InetSocketAddress(it.saddr, 0)));
  ApplicationContainer app = bulk.Install(r->nodes.Get(it.src));
  app.Start(Seconds(0)); // relative to now: installed during the run
}

// Dependencies done: start now, or at the earliest start if it is later.
void Ready(Run *r, int32_t i) {
  int64_t now = RunNs(r);
  int64_t at = r->items[i].start_ns;
  Simulator::Schedule(NanoSeconds(at > now ? at - now : 0), &StartItem, r, i);
}

void Finish(Run *r, int32_t i) {
  Item &it = r->items[i];
  if (it.done) return;
  it.done = true;
  it.t_finish = RunNs(r);
  for (int32_t j : it.next)
    if (--r->items[j].waiting == 0) Ready(r, j);
  if (--r->remaining == 0) Simulator::Stop();
}

struct RxCtx {
  Run *run;
  int32_t item;
};

void OnRx(RxCtx *c, Ptr<const Packet> p, const Address &) {
  Item &it = c->run->items[c->item];
  it.received += p->GetSize();
  if (!it.done && it.received >= it.bytes) Finish(c->run, c->item);
}

// ---- RoCEv2 with DCQCN (a "transport rdma" line) ----
//
// No RDMA stack ships with ns-3, so this is the part of one that sets a
// flow's time: queue pairs that exist before the job (no handshake), each
// paced at its DCQCN rate and started at line rate, served round robin by
// their host's NIC at line rate; switch ports mark ECN with RED between
// Kmin and Kmax; a receiver answers a marked packet with a CNP; the sender
// reacts as DCQCN's reaction point (Zhu et al., "Congestion Control for
// Large-Scale RDMA Deployments", SIGCOMM 2015) with the timers and steps of
// NVIDIA's ConnectX firmware as the HPCC/SimAI ns-3 artifacts configure it
// (docs/formats.md, "The ns-3 backend"). PFC is off and nothing is dropped
// (100000-packet queues), so there are no retransmissions. Packets are UDP
// datagrams on the flow's address pair: data from S_f to D_f, CNPs back.


struct Qp {
  Ptr<Socket> tx;            // on S_f, connected to D_f
  uint64_t left = 0;         // payload bytes not yet sent
  double line = 0;           // its NIC's rate, bit/s
  double rate = 0, target = 0, alpha = 1;
  int stage = 0;             // rate-increase events since the last decrease
  bool cc = false;           // a CNP has come: the timers run
  bool cnp_alpha = false, cnp_dec = false;
  double next_ns = 0;        // when its pacer lets the next packet go
  EventId alpha_ev, dec_ev, inc_ev;
  // receiver side
  Ptr<Socket> rx;            // on D_f
  double last_cnp_ns = -1e18;
};

struct Nic {
  double bps = 0;
  std::vector<int32_t> active; // queue pairs with bytes to send
  size_t rr = 0;               // round-robin position in `active`
  double free_ns = 0;          // the NIC's wire is busy until then
  EventId wake;
};

struct Rdma {
  Run *run = nullptr;
  DcqcnParams prm;
  std::vector<Qp> qps;        // by item
  std::vector<Nic> nics;      // by node
};

double NowNs() { return (double)Simulator::Now().GetPicoSeconds() / 1e3; }

// A DCQCN period (microseconds, as the options give them) as an ns-3 delay.
Time Us(double us) { return NanoSeconds((int64_t)(us * 1e3)); }

double WireBits(const Run *r, uint64_t data) { return 8.0 * (double)(data + r->header); }

void NicPump(Rdma *d, int32_t node);

void NicArm(Rdma *d, int32_t node, double at_ns) {
  Nic &n = d->nics[node];
  double now = NowNs();
  if (n.wake.IsRunning()) Simulator::Cancel(n.wake);
  double dt_ps = at_ns > now ? std::ceil((at_ns - now) * 1e3) : 0;
  n.wake = Simulator::Schedule(PicoSeconds((int64_t)dt_ps), &NicPump, d, node);
}

// The NIC sends one packet of the next queue pair (round robin) whose pacer
// allows it, if its wire is free; then waits for the wire or the pacers.
void NicPump(Rdma *d, int32_t node) {
  Nic &n = d->nics[node];
  Run *r = d->run;
  double now = NowNs();
  if (n.active.empty()) return;
  if (n.free_ns > now + 1e-3) {
    NicArm(d, node, n.free_ns);
    return;
  }
  double soonest = 1e300;
  for (size_t k = 0; k < n.active.size(); k++) {
    size_t at = (n.rr + k) % n.active.size();
    Qp &q = d->qps[n.active[at]];
    if (q.next_ns > now + 1e-3) {
      soonest = std::min(soonest, q.next_ns);
      continue;
    }
    uint64_t data = std::min<uint64_t>(q.left, r->payload);
    Ptr<Packet> pkt = Create<Packet>((uint32_t)(data + r->header - kRoceHeaders));
    SocketIpTosTag ect; // ECT(0): RoCEv2 is ECN-capable
    ect.SetTos(0x02);
    pkt->AddPacketTag(ect);
    q.tx->Send(pkt);
    q.left -= data;
    double bits = WireBits(r, data);
    q.next_ns = std::max(q.next_ns, now) + bits / q.rate * 1e9;
    n.free_ns = std::max(n.free_ns, now) + bits / n.bps * 1e9;
    if (q.left == 0) {
      n.active.erase(n.active.begin() + (std::ptrdiff_t)at);
      n.rr = n.active.empty() ? 0 : at % n.active.size();
    } else {
      n.rr = (at + 1) % n.active.size();
    }
    if (!n.active.empty()) NicArm(d, node, n.free_ns);
    return;
  }
  NicArm(d, node, std::max(soonest, n.free_ns));
}

void DcqcnAlpha(Rdma *d, int32_t i) {
  Qp &q = d->qps[i];
  q.alpha = (1 - d->prm.g) * q.alpha + (q.cnp_alpha ? d->prm.g : 0);
  q.cnp_alpha = false;
  q.alpha_ev = Simulator::Schedule(Us(d->prm.alpha_us), &DcqcnAlpha, d, i);
}

void DcqcnIncrease(Rdma *d, int32_t i) {
  Qp &q = d->qps[i];
  const DcqcnParams &p = d->prm;
  double scale = q.line / 100e9;
  q.stage++;
  if (q.stage == p.f) q.target += p.ai_mbps100 * 1e6 * scale; // additive increase
  else if (q.stage > p.f) q.target += p.hai_mbps100 * 1e6 * scale; // hyper increase
  q.target = std::min(q.target, q.line);
  q.rate = std::min((q.rate + q.target) / 2, q.line); // and fast recovery below F
  q.inc_ev = Simulator::Schedule(Us(p.inc_us), &DcqcnIncrease, d, i);
}

// Every dec_us while CNPs come: cut the rate by alpha / 2, remember the
// rate before the cut as the target (unless the previous period cut too),
// restart the increase timer.
void DcqcnDecrease(Rdma *d, int32_t i) {
  Qp &q = d->qps[i];
  const DcqcnParams &p = d->prm;
  if (q.cnp_dec) {
    if (q.stage != 0) q.target = q.rate;
    q.rate = std::max(q.rate * (1 - q.alpha / 2), p.min_mbps * 1e6);
    q.stage = 0;
    q.cnp_dec = false;
    if (q.inc_ev.IsRunning()) Simulator::Cancel(q.inc_ev);
    q.inc_ev = Simulator::Schedule(Us(p.inc_us), &DcqcnIncrease, d, i);
  }
  q.dec_ev = Simulator::Schedule(Us(p.dec_us), &DcqcnDecrease, d, i);
}

struct QpCtx {
  Rdma *d;
  int32_t item;
};

// A CNP at the sender: the first starts alpha (at 1) and the timers, and cuts
// at once; later ones are counted by the next alpha and decrease periods.
void OnCnp(QpCtx *c, Ptr<Socket> sock) {
  while (sock->Recv()) {
    Qp &q = c->d->qps[c->item];
    q.cnp_alpha = q.cnp_dec = true;
    if (!q.cc) {
      q.cc = true;
      q.alpha = 1;
      DcqcnDecrease(c->d, c->item);
      q.alpha_ev = Simulator::Schedule(Us(c->d->prm.alpha_us), &DcqcnAlpha, c->d, c->item);
    }
  }
}

// Data at the receiver: count its payload, answer a CE mark with a CNP.
void OnRoceData(QpCtx *c, Ptr<Socket> sock) {
  Rdma *d = c->d;
  Run *r = d->run;
  Address from;
  Ptr<Packet> p;
  while ((p = sock->RecvFrom(from))) {
    Item &it = r->items[c->item];
    Qp &q = d->qps[c->item];
    it.received += p->GetSize() - (r->header - kRoceHeaders);
    SocketIpTosTag tos;
    double now = NowNs();
    if (p->PeekPacketTag(tos) && (tos.GetTos() & 0x3) == 0x3 &&
        now - q.last_cnp_ns >= d->prm.cnp_us * 1e3) {
      q.last_cnp_ns = now;
      // a CNP: BTH 12 + 16 reserved bytes, ICRC 4, Ethernet 18 (a 64-byte
      // frame less the headers ns-3 adds). ECN-capable, as the data: a RED
      // port marks what it would drop of a packet that is not, and a CNP
      // dropped on a congested reverse path is a cut the sender never makes
      // (RoCE deployments send CNPs in a class of their own, never dropped)
      Ptr<Packet> cnp = Create<Packet>(64 - kRoceHeaders + 2 + 12);
      SocketIpTosTag ect;
      ect.SetTos(0x02);
      cnp->AddPacketTag(ect);
      sock->SendTo(cnp, 0, from);
    }
    if (!it.done && it.received >= it.bytes) {
      for (EventId *e : {&q.alpha_ev, &q.dec_ev, &q.inc_ev})
        if (e->IsRunning()) Simulator::Cancel(*e);
      Finish(r, c->item);
    }
  }
}

void RdmaStart(Run *r, int32_t i) {
  Rdma *d = r->roce;
  Qp &q = d->qps[i];
  Item &it = r->items[i];
  q.left = it.bytes;
  q.rate = q.target = q.line;
  q.next_ns = NowNs();
  Nic &n = d->nics[it.src];
  n.active.push_back(i);
  if (!n.wake.IsRunning()) NicPump(d, it.src);
}

// The queue pairs' sockets (bound before the run: the pairs are persistent).
void RdmaBuild(Run *r, Rdma *d) {
  d->run = r;
  d->qps.resize(r->items.size());
  d->nics.resize(r->kinds.size());
  for (const Link &l : r->links)
    if (r->hosts[l.from]) d->nics[l.from].bps = std::max(d->nics[l.from].bps, (double)l.bps);
  TypeId udp = UdpSocketFactory::GetTypeId();
  for (int32_t i = 0; i < (int32_t)r->items.size(); i++) {
    Item &it = r->items[i];
    if (!it.is_flow || it.bytes == 0) continue;
    Qp &q = d->qps[i];
    q.line = (double)r->links[it.links.front()].bps;
    auto *ctx = new QpCtx{d, i}; // lives for the run, freed at exit
    q.rx = Socket::CreateSocket(r->nodes.Get(it.dst), udp);
    q.rx->SetIpRecvTos(true);
    q.rx->Bind(InetSocketAddress(it.daddr, kPort));
    q.rx->SetRecvCallback(MakeBoundCallback(&OnRoceData, ctx));
    q.tx = Socket::CreateSocket(r->nodes.Get(it.src), udp);
    q.tx->Bind(InetSocketAddress(it.saddr, kPort));
    q.tx->Connect(InetSocketAddress(it.daddr, kPort));
    q.tx->SetRecvCallback(MakeBoundCallback(&OnCnp, ctx));
  }
}

// DCQCN's settings in range: Kmax > Kmin >= 0, 0 < pmax, g <= 1, periods
// > 0, F >= 0, increases >= 0, a least rate > 0.
bool DcqcnOk(const DcqcnParams &p) {
  return p.kmin_kb >= 0 && p.kmax_kb > p.kmin_kb && p.pmax > 0 && p.pmax <= 1 && p.g > 0 &&
         p.g <= 1 && p.alpha_us > 0 && p.dec_us > 0 && p.inc_us > 0 && p.f >= 0 &&
         p.ai_mbps100 >= 0 && p.hai_mbps100 >= 0 && p.min_mbps > 0 && p.cnp_us >= 0;
}

// The exchange file (docs/formats.md). Every line is checked; ids must be
// consecutive from 0 in the order given.
void Parse(const std::string &file, Run *r) {
  std::ifstream in(file);
  if (!in) {
    std::fprintf(stderr, "fabricsim-ns3: %s: cannot read: %s\n", file.c_str(),
                 std::strerror(errno));
    std::exit(2);
  }
  std::string line;
  int ln = 0;
  bool header = false, end = false;
  int32_t n_nodes = -1;
  while (std::getline(in, line)) {
    ln++;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string kw;
    s >> kw;
    if (!header) {
      int v = 0;
      if (kw != "fabricsim-ns3" || !(s >> v) || v != 1)
        bad(file, ln, "expected the header 'fabricsim-ns3 1', got '" + line + "'");
      header = true;
      continue;
    }
    if (end) bad(file, ln, "text after 'end'");
    auto want = [&](bool ok) {
      std::string rest;
      if (!ok || (s >> rest)) bad(file, ln, "malformed '" + kw + "' line: '" + line + "'");
    };
    if (kw == "nodes") {
      want(static_cast<bool>(s >> n_nodes) && n_nodes > 0);
    } else if (kw == "node") {
      int32_t id;
      std::string kind;
      want(static_cast<bool>(s >> id >> kind));
      if (id != (int32_t)r->kinds.size() || id >= n_nodes)
        bad(file, ln, "node id " + std::to_string(id) + " out of order");
      if (kind != "host" && kind != "switch" && kind != "nic" && kind != "scaleup" &&
          kind != "ocs" && kind != "wan")
        bad(file, ln, "node kind must be host, switch, nic, scaleup, ocs or wan, got '" + kind + "'");
      r->kinds.push_back(kind == "host" || kind == "nic" ? 1 : 0);
      r->hosts.push_back(kind == "host" ? 1 : 0);
    } else if (kw == "link") {
      Link l;
      int32_t id;
      want(static_cast<bool>(s >> id >> l.from >> l.to >> l.bps >> l.latency_ns >> l.reverse));
      if (id != (int32_t)r->links.size()) bad(file, ln, "link id " + std::to_string(id) + " out of order");
      if (l.from < 0 || l.to < 0 || l.from >= n_nodes || l.to >= n_nodes || l.from == l.to)
        bad(file, ln, "link " + std::to_string(id) + ": bad end nodes");
      if (l.bps == 0 || l.latency_ns < 0) bad(file, ln, "link " + std::to_string(id) + ": bad rate or latency");
      r->links.push_back(l);
    } else if (kw == "flow") {
      Item it;
      int32_t id, k;
      it.is_flow = true;
      if (!(s >> id >> it.src >> it.dst >> it.bytes >> it.start_ns >> k) || k < 1 ||
          it.start_ns < 0)
        bad(file, ln, "malformed 'flow' line: '" + line + "'");
      std::vector<int32_t> path(k + 1);
      for (int32_t j = 0; j <= k; j++)
        if (!(s >> path[j])) bad(file, ln, "flow " + std::to_string(id) + ": short node path");
      for (int32_t j = 0; j < k; j++) {
        int32_t l;
        if (!(s >> l) || l < 0 || l >= (int32_t)r->links.size())
          bad(file, ln, "flow " + std::to_string(id) + ": bad link in its path");
        it.links.push_back(l);
      }
      want(true);
      if (id != (int32_t)r->items.size()) bad(file, ln, "item id " + std::to_string(id) + " out of order");
      if (r->links[it.links[0]].from != it.src || r->links[it.links[k - 1]].to != it.dst)
        bad(file, ln, "flow " + std::to_string(id) + ": path does not join its hosts");
      for (int32_t j = 0; j < k; j++)
        if (r->links[it.links[j]].from != path[j] || r->links[it.links[j]].to != path[j + 1])
          bad(file, ln, "flow " + std::to_string(id) + ": its links do not follow its node path");
      if (id >= (1 << 22)) bad(file, ln, "more than 2^22 flows (the 10.0.0.0/8 flow addresses)");
      r->items.push_back(it);
    } else if (kw == "task") {
      Item it;
      int32_t id;
      want(static_cast<bool>(s >> id >> it.host >> it.start_ns >> it.duration_ns) &&
           it.duration_ns >= 0 && it.start_ns >= 0);
      if (id != (int32_t)r->items.size()) bad(file, ln, "item id " + std::to_string(id) + " out of order");
      r->items.push_back(it);
    } else if (kw == "dep") {
      int32_t a, b;
      std::string kind;
      want(static_cast<bool>(s >> a >> b >> kind));
      int32_t n = (int32_t)r->items.size();
      if (a < 0 || b < 0 || a >= n || b >= n || a == b)
        bad(file, ln, "dep: unknown item or self-dependency: '" + line + "'");
      if (kind == "sent")
        bad(file, ln, "'sent' dependencies (start when a flow's last byte has left) are not "
                      "supported by the ns-3 backend");
      if (kind != "done") bad(file, ln, "dep kind must be done or sent, got '" + kind + "'");
      r->items[a].next.push_back(b);
      r->items[b].waiting++;
    } else if (kw == "transport") {
      std::string kind;
      s >> kind;
      if (kind == "tcp") {
        std::string conn;
        want(static_cast<bool>(s >> conn) && conn == "persistent");
        r->persistent = true;
      } else if (kind == "rdma") {
        want(static_cast<bool>(s >> r->payload >> r->header));
        if (r->payload < 1 || r->header < kRoceHeaders || r->payload + r->header - 2 > kMtu)
          bad(file, ln, "transport rdma: need PAYLOAD >= 1, HEADER >= " + std::to_string(kRoceHeaders) +
                            " (PPP 2 + IPv4 20 + UDP 8 are part of it) and PAYLOAD + HEADER - 2 <= " +
                            std::to_string(kMtu) + " (the MTU), got '" + line + "'");
        r->rdma = true;
      } else {
        bad(file, ln, "transport must be 'rdma PAYLOAD HEADER' or 'tcp persistent', got '" + line + "'");
      }
    } else if (kw == "tcp") {
      double k;
      want(static_cast<bool>(s >> r->tcp_segment >> r->tcp_header >> r->tcp_iw >> k));
      if (r->tcp_segment < 1 || r->tcp_iw < 1 || !(k > 0) ||
          (r->tcp_header != kTcpWire && r->tcp_header != kTcpWire + kTimestampOption) ||
          r->tcp_segment + r->tcp_header - 2 > kMtu)
        bad(file, ln, "tcp: need SEGMENT >= 1, HEADER " + std::to_string(kTcpWire) + " or " +
                          std::to_string(kTcpWire + kTimestampOption) +
                          " (with timestamps), SEGMENT + HEADER - 2 <= " + std::to_string(kMtu) +
                          " (the MTU), INITWIN >= 1 and K100 > 0, got '" + line + "'");
      r->tcp_k100 = k;
      r->has_tcp = true;
    } else if (kw == "dcqcn") {
      DcqcnParams &p = r->dcqcn;
      want(static_cast<bool>(s >> p.kmin_kb >> p.kmax_kb >> p.pmax >> p.g >> p.alpha_us >>
                             p.dec_us >> p.inc_us >> p.f >> p.ai_mbps100 >> p.hai_mbps100 >>
                             p.min_mbps));
      if (!DcqcnOk(p)) bad(file, ln, "dcqcn: a value is out of range: '" + line + "'");
      r->has_dcqcn = true;
    } else if (kw == "end") {
      want(true);
      end = true;
    } else {
      bad(file, ln, "unknown line '" + kw + "'");
    }
  }
  if (!header || !end) bad(file, ln, "truncated: no header or no 'end' line");
  if (r->has_tcp && r->rdma) bad(file, ln, "a 'tcp' line in an rdma run");
  if ((int32_t)r->kinds.size() != n_nodes) bad(file, ln, "fewer node lines than 'nodes' says");
  for (const Item &it : r->items) {
    int32_t h = it.is_flow ? it.src : it.host;
    if (h < 0 || h >= n_nodes || !r->hosts[h] ||
        (it.is_flow && (it.dst < 0 || it.dst >= n_nodes || !r->hosts[it.dst])))
      bad(file, ln, "an item's host is not a host node");
  }
}

// Every link's reverse must be the opposite direction of the same cable,
// with the same latency (an ns-3 point-to-point channel is full-duplex).
void CheckReverses(const std::string &file, Run *r) {
  int32_t n = (int32_t)r->links.size();
  for (int32_t i = 0; i < n; i++) {
    const Link &l = r->links[i];
    if (l.reverse < 0 || l.reverse >= n || l.reverse == i || r->links[l.reverse].reverse != i ||
        r->links[l.reverse].from != l.to || r->links[l.reverse].to != l.from ||
        r->links[l.reverse].latency_ns != l.latency_ns)
      bad(file, 0, "link " + std::to_string(i) + ": its reverse " + std::to_string(l.reverse) +
                       " is not the opposite direction of one cable with the same latency");
  }
}

void Build(Run *r, double k100, const std::string &host_queue) {
  r->nodes.Create((uint32_t)r->kinds.size());
  InternetStackHelper stack;
  Ipv4StaticRoutingHelper static_routing;
  stack.SetRoutingHelper(static_routing);
  stack.Install(r->nodes);

  Ipv4AddressHelper addr("100.64.0.0", "255.255.255.252");
  for (int32_t i = 0; i < (int32_t)r->links.size(); i++) {
    Link &l = r->links[i];
    if (l.reverse < i) continue; // built with its partner
    Link &b = r->links[l.reverse];
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("Mtu", UintegerValue(r->mtu));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(l.latency_ns)));
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    NetDeviceContainer d = p2p.Install(r->nodes.Get(l.from), r->nodes.Get(l.to));
    d.Get(0)->SetAttribute("DataRate", DataRateValue(DataRate(l.bps)));
    d.Get(1)->SetAttribute("DataRate", DataRateValue(DataRate(b.bps)));
    l.dev = d.Get(0);
    b.dev = d.Get(1);
    for (Link *x : {&l, &b}) {
      TrafficControlHelper tc;
      double k = k100 * (double)x->bps / 100e9;
      if (k < 1) k = 1;
      if (r->rdma) {
        // RoCE: the hosts' NICs pace and schedule their queue pairs (a FIFO
        // behind them holds at most a CNP); switch ports mark ECN with
        // RED between Kmin and Kmax on the instantaneous queue, in bytes
        const DcqcnParams &p = r->roce->prm;
        double scale = (double)x->bps / 100e9;
        if (r->kinds[x->from])
          tc.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("100000p"));
        else
          tc.SetRootQueueDisc("ns3::RedQueueDisc", "UseEcn", BooleanValue(true), "UseHardDrop",
                              BooleanValue(false), "Gentle", BooleanValue(false), "Wait",
                              BooleanValue(false), "MinTh", DoubleValue(p.kmin_kb * 1e3 * scale),
                              "MaxTh", DoubleValue(p.kmax_kb * 1e3 * scale), "LInterm",
                              DoubleValue(1.0 / p.pmax), "QW", DoubleValue(1.0), "MeanPktSize",
                              UintegerValue(r->payload + r->header - 2), "MaxSize",
                              StringValue("1000000000B"), "LinkBandwidth",
                              DataRateValue(DataRate(x->bps)), "LinkDelay",
                              TimeValue(NanoSeconds(x->latency_ns)));
      } else if (host_queue == "fifo" && r->kinds[x->from]) {
        tc.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("100000p"));
      } else if (host_queue == "fq" && r->kinds[x->from]) {
        // Per-flow queues served round robin (a host's fq): an ACK does not
        // wait behind the host's own bulk data. ECN-marks at the sojourn
        // time of K full packets; CoDel's own drop law never acts (1 s).
        double ce_s = k * (r->mtu + 2) * 8.0 / (double)x->bps;
        tc.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "UseEcn", BooleanValue(true), "CeThreshold",
                            TimeValue(Seconds(ce_s)), "Target", StringValue("1s"), "Interval",
                            StringValue("10s"), "MaxSize", StringValue("100000p"));
      } else {
        tc.SetRootQueueDisc("ns3::RedQueueDisc", "UseEcn", BooleanValue(true), "UseHardDrop",
                            BooleanValue(false), "MinTh", DoubleValue(k), "MaxTh", DoubleValue(k),
                            "QW", DoubleValue(1.0), "MeanPktSize", UintegerValue(r->mtu),
                            "MaxSize", StringValue("100000p"), "LinkBandwidth",
                            DataRateValue(DataRate(x->bps)), "LinkDelay",
                            TimeValue(NanoSeconds(x->latency_ns)));
      }
      x->qdisc = tc.Install(x->dev).Get(0);
    }
    addr.Assign(d);
    addr.NewNetwork();
    for (Link *x : {&l, &b})
      x->ifindex = (uint32_t)r->nodes.Get(x->from)->GetObject<Ipv4>()->GetInterfaceForDevice(x->dev);
  }

  // Flow f: S_f = 10.0.0.0 + 4f + 1 on the source's first link, D_f = S_f + 1
  // on the destination's last link, both with a /30 mask: TCP takes its
  // source address from the route (SetupEndpoint), and ns-3 picks the
  // interface address in the destination's subnet, so S_f and D_f must
  // share one that no other flow's addresses are in. Host routes along
  // the path.
  for (int32_t i = 0; i < (int32_t)r->items.size(); i++) {
    Item &it = r->items[i];
    if (!it.is_flow) continue;
    uint32_t base = Ipv4Address("10.0.0.0").Get();
    it.saddr = Ipv4Address(base + 4u * (uint32_t)i + 1u);
    it.daddr = Ipv4Address(base + 4u * (uint32_t)i + 2u);
    const Link &first = r->links[it.links.front()];
    const Link &last_rev = r->links[r->links[it.links.back()].reverse];
    Ptr<Ipv4> src_ip = r->nodes.Get(it.src)->GetObject<Ipv4>();
    Ptr<Ipv4> dst_ip = r->nodes.Get(it.dst)->GetObject<Ipv4>();
    src_ip->AddAddress(first.ifindex, Ipv4InterfaceAddress(it.saddr, Ipv4Mask("255.255.255.252")));
    dst_ip->AddAddress(last_rev.ifindex, Ipv4InterfaceAddress(it.daddr, Ipv4Mask("255.255.255.252")));
    for (int32_t l : it.links) {
      const Link &fw = r->links[l];
      const Link &bw = r->links[fw.reverse];
      static_routing.GetStaticRouting(r->nodes.Get(fw.from)->GetObject<Ipv4>())
          ->AddHostRouteTo(it.daddr, fw.ifindex);
      static_routing.GetStaticRouting(r->nodes.Get(bw.from)->GetObject<Ipv4>())
          ->AddHostRouteTo(it.saddr, bw.ifindex);
    }
    if (it.bytes == 0 || r->rdma) continue; // rdma: RdmaBuild's sockets
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(it.daddr, kPort));
    ApplicationContainer app = sink.Install(r->nodes.Get(it.dst));
    app.Start(Seconds(0));
    auto *ctx = new RxCtx{r, i}; // lives for the run, freed at exit
    app.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, ctx));
  }
}

} // namespace

int main(int argc, char **argv) {
  // Picoseconds: at nanoseconds ns-3 rounds every packet's serialization
  // (a 4158-byte RoCE packet at 100 Gb/s takes 332.64 ns, counted 333),
  // which adds up over a message (93 ns over 1 MiB). Before any Time exists.
  Time::SetResolution(Time::PS);
  std::string in, out;
  double k100 = 65;
  double max_s = 100;
  CommandLine cmd(__FILE__);
  cmd.Usage("Runs a fabricsim exchange file (docs/formats.md) in ns-3: DCTCP, RED/ECN, MTU 9000.");
  cmd.AddValue("in", "the exchange file fabricsim wrote", in);
  cmd.AddValue("out", "the result file (default: stdout)", out);
  cmd.AddValue("k100", "RED/ECN marking threshold K in packets at 100 Gb/s (scaled with the rate)", k100);
  cmd.AddValue("max-seconds", "give up after this much simulated time", max_s);
  bool verbose = false;
  std::string host_queue = "fq";
  cmd.AddValue("host-queue",
               "queue of host and NIC ports: fq (per-flow, ECN at K), red (as switches) or fifo",
               host_queue);
  cmd.AddValue("verbose", "print each queue's drops and ECN marks on stderr", verbose);
  Rdma roce; // used when the exchange file says "transport rdma"
  DcqcnParams &dq = roce.prm;
  cmd.AddValue("dcqcn-kmin", "rdma: RED/ECN Kmin in KB at 100 Gb/s (scaled with the rate)", dq.kmin_kb);
  cmd.AddValue("dcqcn-kmax", "rdma: RED/ECN Kmax in KB at 100 Gb/s (scaled with the rate)", dq.kmax_kb);
  cmd.AddValue("dcqcn-pmax", "rdma: marking probability at Kmax", dq.pmax);
  cmd.AddValue("dcqcn-g", "rdma: DCQCN's alpha gain g", dq.g);
  cmd.AddValue("dcqcn-alpha-us", "rdma: alpha update period, us", dq.alpha_us);
  cmd.AddValue("dcqcn-dec-us", "rdma: rate decrease period, us", dq.dec_us);
  cmd.AddValue("dcqcn-inc-us", "rdma: rate increase timer, us", dq.inc_us);
  cmd.AddValue("dcqcn-f", "rdma: fast recovery stages F", dq.f);
  cmd.AddValue("dcqcn-ai", "rdma: additive increase, Mb/s at 100 Gb/s", dq.ai_mbps100);
  cmd.AddValue("dcqcn-hai", "rdma: hyper increase, Mb/s at 100 Gb/s", dq.hai_mbps100);
  cmd.AddValue("dcqcn-min-rate", "rdma: a queue pair's least rate, Mb/s", dq.min_mbps);
  cmd.AddValue("dcqcn-cnp-us", "rdma: a receiver's least spacing of CNPs per queue pair, us", dq.cnp_us);
  cmd.Parse(argc, argv);
  if (in.empty()) {
    std::fprintf(stderr, "fabricsim-ns3: --in=FILE is required\n");
    return 2;
  }
  if (host_queue != "fq" && host_queue != "red" && host_queue != "fifo") {
    std::fprintf(stderr, "fabricsim-ns3: --host-queue must be fq, red or fifo, got '%s'\n",
                 host_queue.c_str());
    return 2;
  }
  if (!(k100 > 0) || !(max_s > 0)) {
    std::fprintf(stderr, "fabricsim-ns3: --k100 and --max-seconds must be > 0\n");
    return 2;
  }
  if (!DcqcnOk(dq)) {
    std::fprintf(stderr, "fabricsim-ns3: a --dcqcn-* value is out of range (Kmax > Kmin >= 0, "
                         "0 < pmax, g <= 1, periods > 0, F >= 0, steps >= 0, min rate > 0)\n");
    return 2;
  }

  RngSeedManager::SetSeed(1);
  RngSeedManager::SetRun(1);
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcp::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(kSegment));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(16u << 20));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(16u << 20));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(1)));
  Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MicroSeconds(1)));
  Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));

  Run r;
  Parse(in, &r);
  CheckReverses(in, &r);
  if (r.has_tcp) { // the scenario's packets, window and K (not --k100)
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(r.tcp_segment));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(r.tcp_iw));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp",
                       BooleanValue(r.tcp_header == kTcpWire + kTimestampOption));
    r.mtu = r.tcp_segment + r.tcp_header - 2;
    k100 = r.tcp_k100;
  }
  if (r.rdma) r.roce = &roce;
  if (r.has_dcqcn) { // the scenario's settings; the CNP spacing stays the option's
    double cnp_us = roce.prm.cnp_us;
    roce.prm = r.dcqcn;
    roce.prm.cnp_us = cnp_us;
  }
  Build(&r, k100, host_queue);
  if (r.rdma) RdmaBuild(&r, &roce);
  if (r.persistent) {
    // 1 ms of warm-up: the handshakes of every connection at once, once
    // the run has begun (the queue discs start with it)
    Simulator::Schedule(Seconds(0), &OpenConnections, &r);
    r.t0_ns = 1000000;
  }
  r.remaining = (int32_t)r.items.size();
  for (int32_t i = 0; i < (int32_t)r.items.size(); i++)
    if (r.items[i].waiting == 0) {
      if (r.t0_ns == 0) Ready(&r, i);
      else Simulator::Schedule(NanoSeconds(r.t0_ns), &Ready, &r, i);
    }
  if (r.persistent)
    Simulator::Schedule(NanoSeconds(r.t0_ns), +[](Run *run) {
      if (run->connected != run->connecting) {
        std::fprintf(stderr, "fabricsim-ns3: %d of %d connections not open after the warm-up "
                     "(%d refused)\n", run->connecting - run->connected, run->connecting,
                     run->refused);
        std::exit(1);
      }
      for (Item &it : run->items) it.received = 0; // the warm-up's byte
    }, &r);
  if (r.remaining > 0) {
    Simulator::Stop(Seconds(max_s));
    Simulator::Run();
  }
  if (r.remaining > 0) {
    std::fprintf(stderr, "fabricsim-ns3: %s: %d of %zu items unfinished after %g simulated s "
                         "(a dependency cycle or a stalled connection)\n",
                 in.c_str(), r.remaining, r.items.size(), max_s);
    Simulator::Destroy();
    return 1;
  }
  uint64_t dropped = 0;
  for (size_t i = 0; i < r.links.size(); i++)
    dropped += r.links[i].qdisc->GetStats().nTotalDroppedPackets +
               DynamicCast<PointToPointNetDevice>(r.links[i].dev)->GetQueue()->GetTotalDroppedPackets();
  if (dropped) // the set-up drops nothing (ECN marks instead): say so if it did
    std::fprintf(stderr, "fabricsim-ns3: warning: %llu packets dropped (--verbose: where)\n",
                 (unsigned long long)dropped);
  if (verbose)
    for (size_t i = 0; i < r.links.size(); i++) {
      const QueueDisc::Stats &st = r.links[i].qdisc->GetStats();
      uint32_t marks = st.nTotalMarkedPackets;
      uint32_t dev_drops =
          DynamicCast<PointToPointNetDevice>(r.links[i].dev)->GetQueue()->GetTotalDroppedPackets();
      if (st.nTotalDroppedPackets || marks || dev_drops)
        std::fprintf(stderr, "fabricsim-ns3: link %zu (%d -> %d): %u dropped, %u ECN-marked, %u dropped by the device\n",
                     i, r.links[i].from, r.links[i].to, st.nTotalDroppedPackets, marks, dev_drops);
    }
  FILE *f = out.empty() ? stdout : std::fopen(out.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "fabricsim-ns3: %s: cannot write: %s\n", out.c_str(), std::strerror(errno));
    return 1;
  }
  int64_t makespan = 0;
  std::fprintf(f, "fabricsim-ns3-result 1\n");
  for (int32_t i = 0; i < (int32_t)r.items.size(); i++) {
    const Item &it = r.items[i];
    if (it.t_finish > makespan) makespan = it.t_finish;
    std::fprintf(f, "item %d %lld %lld\n", i, (long long)it.t_start, (long long)it.t_finish);
  }
  std::fprintf(f, "makespan %lld\nend\n", (long long)makespan);
  int rc = 0;
  if (f != stdout ? std::fclose(f) != 0 : std::fflush(f) != 0) rc = 1;
  Simulator::Destroy();
  return rc;
}
