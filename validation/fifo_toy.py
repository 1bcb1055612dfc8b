#!/usr/bin/env python3
"""A packet-level toy with FIFO ports, TCP's windows and (unless --no-ecn)
DCTCP, to tell which effects a case's reference times come from
(docs/validation.md, "Tenth session").

    fifo_toy.py [--persistent] [--no-ecn] SCENARIO.json FABRICSIM.json [REFERENCE.json]

Runs the scenario's flows as packets (its transport's mss_bytes and
header_bytes; 8960 and 42 if it has none) over the paths and link
capacities of FABRICSIM.json (`fabricsim sim --format json` of the same
scenario; a link no flow crosses has its reverse's capacity), every
link's latency the topology's latency_ns: store and forward at each hop,
a FIFO queue at each link's sender, a host's NIC serving its flows'
packets in turn (per-flow fair queue, as the ns-3 backend's hosts). Each
data packet is ACKed on arrival by a header-sized packet back along the
reverse path. A new connection (the default) first sends a SYN and waits
for the SYN-ACK; its first flight is the initial window of 10 segments
cut to the SYN's unscaled 65535-byte window, then each ACK opens the
window by a segment (slow start), or by 1/cwnd past ssthresh. DCTCP (as
the ns-3 backend sets it up): a switch port marks a packet CE when it
joins a queue of K packets or more (K = queue_k, 65 at 100 Gb/s, scaled
with the rate), with RED's gentle law between K and 2K (probability
1/50 at K to 1 at 2K, spread by RED's count) and always past 2K; a
host's queue marks a packet that waited more than K full packets' time;
the receiver echoes the mark on its ACK; the sender keeps DCTCP's alpha
(from 1, g = 1/16, once per window of data) and cuts its window to
cwnd (1 - alpha / 2) once a round trip when an echo comes. No loss:
queues are unbounded. --no-ecn: no marks (slow start for ever).
--persistent: warm connections, no handshake, each flow's window from
the start max(10, its path's bandwidth-delay product) in congestion
avoidance (the backend's warm-up). A flow starts at its start_ns once
its `after` flows have arrived whole. Prints the makespan and, against REFERENCE.json
(a fabricsim JSON output, e.g. of --backend ns3), its error and the mean
per-flow error on FCT.
"""
import collections
import heapq
import json
import math
import random
import sys

INIT_WINDOW = 10
DCTCP_G = 1.0 / 16


def simulate(sc, run, persistent, ecn=True):
    tr = sc.get("transport", {})
    mss, hdr = tr.get("mss_bytes", 8960), tr.get("header_bytes", 42)
    k100 = tr.get("queue_k", 65)
    lat = sc["topology"]["latency_ns"] * 1e-9
    rng = random.Random(1)
    cap = {(l["from"], l["to"]): l["capacity_gbps"] * 1e9 / 8 for l in run["links"]}
    for (u, v), c in list(cap.items()):
        cap.setdefault((v, u), c)
    flows = {f["id"]: f for f in sc["flows"]}
    path = {f["id"]: f["path"] for f in run["flows"]}
    after = {k: f.get("after", []) for k, f in flows.items()}
    dependents = collections.defaultdict(list)
    for k, deps in after.items():
        for d in deps:
            dependents[d].append(k)

    events, seq = [], [0]

    def push(t, *a):
        seq[0] += 1
        heapq.heappush(events, (t, seq[0]) + a)

    # per link: the packets it is sending or holds, as (start, end) of their
    # transmission, and RED's count of packets since its last mark
    port = collections.defaultdict(collections.deque)
    red_count = collections.Counter()
    # host -> its flows' (and their ACKs') packet queues, served in turn
    nic = collections.defaultdict(collections.OrderedDict)
    nic_busy = set()
    segs, sent, acked, got, start, finish = {}, {}, collections.Counter(), collections.Counter(), {}, {}
    cwnd, ssthresh, opened = {}, {}, set()
    alpha, win_end, win_acked, win_marked, recover = {}, {}, {}, {}, {}

    def k_pkts(link):
        return k100 * cap[link] * 8 / 100e9

    def nic_put(host, key, pkt, t):
        nic[host].setdefault(key, collections.deque()).append((t, pkt))
        if host not in nic_busy:
            nic_busy.add(host)
            push(t, "nic", host)

    def send_window(k, t):
        while sent[k] < len(segs[k]) and sent[k] - acked[k] < int(cwnd[k]):
            nic_put(path[k][0], k, ["data", k, segs[k][sent[k]], 0, sent[k]], t)
            sent[k] += 1

    def rtt_of(k):  # the backend's: a full packet and its ACK per hop
        p = path[k]
        return sum(2 * lat + (mss + 2 * hdr) / cap[(p[i], p[i + 1])] for i in range(len(p) - 1))

    def begin(k, t):
        start[k] = t
        nbytes, s = flows[k]["bytes"], []
        while nbytes > 0:
            x = min(mss, nbytes)
            s.append(x + hdr)
            nbytes -= x
        segs[k], sent[k] = s or [hdr], 0
        alpha[k], win_end[k], win_acked[k], win_marked[k], recover[k] = 1.0, 0, 0, 0, -1
        if persistent:  # warm: the backend's window, in congestion avoidance
            p = path[k]
            w = max(INIT_WINDOW, math.ceil(cap[(p[0], p[1])] * rtt_of(k) / mss))
            cwnd[k] = ssthresh[k] = float(w)
            opened.add(k)
            send_window(k, t)
        else:
            cwnd[k], ssthresh[k] = float(min(INIT_WINDOW, 65535 // mss) or 1), float("inf")
            nic_put(path[k][0], k, ["syn", k, hdr, 0, 0], t)

    def ready(k, t):
        push(max(t, flows[k].get("start_ns", 0) * 1e-9), "begin", k)

    def red_mark(link, t):
        q = port[link]
        while q and q[0][1] <= t:
            q.popleft()
        waiting = sum(1 for st, _ in q if st > t)
        kq = k_pkts(link)
        if waiting < kq:
            red_count[link] = 0
            return 0
        red_count[link] += 1
        if waiting >= 2 * kq:
            red_count[link] = 0
            return 1
        pb = 0.02 + 0.98 * (waiting - kq) / kq
        c = red_count[link]
        pa = 1.0 if c * pb >= 1 else pb / (1 - c * pb)
        if rng.random() < pa:
            red_count[link] = 0
            return 1
        return 0

    def on_ack(k, ece, t):
        acked[k] += 1
        if k not in opened:  # past the SYN's unscaled window
            opened.add(k)
            cwnd[k] = max(cwnd[k], INIT_WINDOW)
        if ecn:  # DCTCP's alpha, once per window of data
            win_acked[k] += 1
            win_marked[k] += ece
            if acked[k] >= win_end[k]:
                if win_acked[k]:
                    alpha[k] = (1 - DCTCP_G) * alpha[k] + DCTCP_G * win_marked[k] / win_acked[k]
                win_acked[k] = win_marked[k] = 0
                win_end[k] = sent[k] + 1
        if ece and acked[k] > recover[k]:  # a cut, once a round trip
            ssthresh[k] = max(2.0, cwnd[k] * (1 - alpha[k] / 2))
            cwnd[k] = ssthresh[k]
            recover[k] = sent[k]
        elif acked[k] > recover[k]:
            cwnd[k] += 1 if cwnd[k] < ssthresh[k] else 1 / cwnd[k]
        send_window(k, t)

    for k in flows:
        if not after[k]:
            ready(k, 0.0)
    while events:
        t, _, kind, *a = heapq.heappop(events)
        if kind == "begin":
            begin(a[0], t)
            continue
        if kind == "nic":  # the host sends the next queue's next packet
            host, queues = a[0], nic[a[0]]
            if not queues:
                nic_busy.discard(host)
                continue
            key, q = next(iter(queues.items()))
            t_in, pkt = q.popleft()
            queues.pop(key)
            if q:
                queues[key] = q  # to the back of the round
            typ, k = pkt[0], pkt[1]
            p = path[k] if typ in ("syn", "data") else path[k][::-1]
            c = cap[(p[0], p[1])]
            if ecn and typ == "data" and t - t_in > k_pkts((p[0], p[1])) * (mss + hdr) / c:
                pkt[3] = 1  # waited more than K packets' time at its host
            done = t + pkt[2] / c
            push(done, "nic", host)
            push(done + lat, "hop", pkt, 1)
            continue
        pkt, hop = a
        typ, k, size = pkt[0], pkt[1], pkt[2]
        p = path[k] if typ in ("syn", "data") else path[k][::-1]
        if hop < len(p) - 1:  # a switch: store, queue (marking), forward
            link = (p[hop], p[hop + 1])
            if ecn and typ == "data" and red_mark(link, t):
                pkt[3] = 1
            q = port[link]
            st = max(t, q[-1][1] if q else t)
            q.append((st, st + size / cap[link]))
            push(st + size / cap[link] + lat, "hop", pkt, hop + 1)
        elif typ == "syn":
            nic_put(p[-1], ("ack", k), ["synack", k, hdr, 0, 0], t)
        elif typ == "synack":
            send_window(k, t)
        elif typ == "data":
            got[k] += 1
            nic_put(p[-1], ("ack", k), ["ack", k, hdr, pkt[3], 0], t)
            if got[k] == len(segs[k]):
                finish[k] = t
                for d in dependents[k]:
                    if all(x in finish for x in after[d]):
                        ready(d, max(finish[x] for x in after[d]))
        else:
            on_ack(k, pkt[3], t)
    return start, finish


def main(argv):
    args = [a for a in argv[1:] if a not in ("--persistent", "--no-ecn")]
    if len(args) not in (2, 3):
        sys.exit("usage: fifo_toy.py [--persistent] [--no-ecn] SCENARIO.json FABRICSIM.json "
                 "[REFERENCE.json]")
    start, finish = simulate(json.load(open(args[0])), json.load(open(args[1])),
                             "--persistent" in argv, "--no-ecn" not in argv)
    makespan = max(finish.values())
    line = "makespan %.1f us" % (makespan * 1e6)
    if len(args) == 3:
        ref = json.load(open(args[2]))
        fct = {f["id"]: f["fct_ns"] for f in ref["flows"]}
        err = [abs((finish[k] - start[k]) * 1e9 - fct[k]) / fct[k] for k in finish if fct[k] > 0]
        line += ", reference %.1f us (%+.1f %%), mean per-flow error %.1f %%" % (
            ref["makespan_ns"] / 1e3, (makespan * 1e9 - ref["makespan_ns"]) / ref["makespan_ns"] * 100,
            100 * sum(err) / len(err))
    print(line)


if __name__ == "__main__":
    main(sys.argv)
