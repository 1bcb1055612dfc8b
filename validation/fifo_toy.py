#!/usr/bin/env python3
"""A packet-level toy with FIFO ports and TCP's windows but no congestion
signal, to tell which effects a case's reference times come from
(docs/validation.md, "Tenth session").

    fifo_toy.py [--persistent] SCENARIO.json FABRICSIM.json [REFERENCE.json]

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
window by a segment (slow start, for ever: no ECN, no loss; queues are
unbounded). --persistent: warm connections, no handshake, every window
covers its whole message. A flow starts at its start_ns once its `after`
flows have arrived whole. Prints the makespan and, against REFERENCE.json
(a fabricsim JSON output, e.g. of --backend ns3), its error and the mean
per-flow error on FCT.
"""
import collections
import heapq
import json
import sys

INIT_WINDOW = 10


def simulate(sc, run, persistent):
    tr = sc.get("transport", {})
    mss, hdr = tr.get("mss_bytes", 8960), tr.get("header_bytes", 42)
    lat = sc["topology"]["latency_ns"] * 1e-9
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

    free_at = collections.defaultdict(float)  # link -> when its sender is free
    # host -> its flows' (and their ACKs') packet queues, served in turn
    nic = collections.defaultdict(collections.OrderedDict)
    nic_busy = set()
    segs, sent, cwnd, opened, got, start, finish = {}, {}, {}, set(), collections.Counter(), {}, {}

    def nic_put(host, key, pkt, t):
        nic[host].setdefault(key, collections.deque()).append(pkt)
        if host not in nic_busy:
            nic_busy.add(host)
            push(t, "nic", host)

    def send_window(k, t):
        while sent[k] < len(segs[k]) and sent[k] - got_acks[k] < cwnd[k]:
            nic_put(path[k][0], k, ("data", k, segs[k][sent[k]]), t)
            sent[k] += 1

    got_acks = collections.Counter()

    def begin(k, t):
        start[k] = t
        nbytes, s = flows[k]["bytes"], []
        while nbytes > 0:
            x = min(mss, nbytes)
            s.append(x + hdr)
            nbytes -= x
        segs[k], sent[k] = s or [hdr], 0
        if persistent:
            cwnd[k] = float("inf")
            send_window(k, t)
        else:
            cwnd[k] = min(INIT_WINDOW, 65535 // mss) or 1
            nic_put(path[k][0], k, ("syn", k, hdr), t)

    def ready(k, t):
        push(max(t, flows[k].get("start_ns", 0) * 1e-9), "begin", k)

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
            pkt = q.popleft()
            queues.pop(key)
            if q:
                queues[key] = q  # to the back of the round
            typ, k, size = pkt
            p = path[k] if typ in ("syn", "data") else path[k][::-1]
            done = t + size / cap[(p[0], p[1])]
            push(done, "nic", host)
            push(done + lat, "hop", pkt, 1)
            continue
        pkt, hop = a
        typ, k, size = pkt
        p = path[k] if typ in ("syn", "data") else path[k][::-1]
        if hop < len(p) - 1:  # a switch: store, queue, forward
            link = (p[hop], p[hop + 1])
            free_at[link] = max(t, free_at[link]) + size / cap[link]
            push(free_at[link] + lat, "hop", pkt, hop + 1)
        elif typ == "syn":
            nic_put(p[-1], ("ack", k), ("synack", k, hdr), t)
        elif typ == "synack":
            send_window(k, t)
        elif typ == "data":
            got[k] += 1
            nic_put(p[-1], ("ack", k), ("ack", k, hdr), t)
            if got[k] == len(segs[k]):
                finish[k] = t
                for d in dependents[k]:
                    if all(x in finish for x in after[d]):
                        ready(d, max(finish[x] for x in after[d]))
        else:  # an ACK: slow start opens the window by a segment
            got_acks[k] += 1
            if k not in opened:  # past the SYN's unscaled window
                opened.add(k)
                cwnd[k] = max(cwnd[k], INIT_WINDOW)
            cwnd[k] += 1
            send_window(k, t)
    return start, finish


def main(argv):
    args = [a for a in argv[1:] if a != "--persistent"]
    if len(args) not in (2, 3):
        sys.exit("usage: fifo_toy.py [--persistent] SCENARIO.json FABRICSIM.json [REFERENCE.json]")
    start, finish = simulate(json.load(open(args[0])), json.load(open(args[1])),
                             "--persistent" in argv)
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
