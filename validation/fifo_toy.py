#!/usr/bin/env python3
"""A packet-level toy with nothing but FIFO switch ports, to tell which
effects a case's reference times come from (docs/validation.md, "Tenth
session").

    fifo_toy.py SCENARIO.json FABRICSIM.json [REFERENCE.json]

Runs the scenario's flows as packets (its transport's mss_bytes and
header_bytes; 8960 and 42 if it has none) over the paths and link
capacities of FABRICSIM.json (`fabricsim sim --format json` of the same
scenario), every link's latency the topology's latency_ns: store and
forward at each hop, a FIFO queue at each link's sender, a host's NIC
serving its flows' packets in turn (per-flow fair queue, as the ns-3
backend's hosts). No handshake, no congestion control, no ACKs: every
window covers its whole message, as warm connections' do for messages of
a few packets. A flow starts at its start_ns once its `after` flows have
arrived whole. Prints the makespan and, against REFERENCE.json (a
fabricsim JSON output, e.g. of --backend ns3 --connections persistent),
its error and the mean per-flow error on FCT.
"""
import collections
import heapq
import json
import sys


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit("usage: fifo_toy.py SCENARIO.json FABRICSIM.json [REFERENCE.json]")
    sc = json.load(open(argv[1]))
    run = json.load(open(argv[2]))
    tr = sc.get("transport", {})
    mss, hdr = tr.get("mss_bytes", 8960), tr.get("header_bytes", 42)
    lat = sc["topology"]["latency_ns"] * 1e-9
    cap = {(l["from"], l["to"]): l["capacity_gbps"] * 1e9 / 8 for l in run["links"]}
    flows = {f["id"]: f for f in sc["flows"]}
    path = {f["id"]: f["path"] for f in run["flows"]}
    after = {k: f.get("after", []) for k, f in flows.items()}
    dependents = collections.defaultdict(list)
    for k, deps in after.items():
        for d in deps:
            dependents[d].append(k)

    events, seq = [], [0]

    def push(t, kind, *a):
        seq[0] += 1
        heapq.heappush(events, (t, seq[0], kind) + a)

    free_at = collections.defaultdict(float)  # link -> when its sender is free
    nic = collections.defaultdict(collections.deque)  # host -> flows with packets left
    nic_busy = set()
    left, arrived, total, start, finish = {}, collections.Counter(), {}, {}, {}

    def packets(nbytes):
        out = []
        while nbytes > 0:
            s = min(mss, nbytes)
            out.append(s + hdr)
            nbytes -= s
        return out or [hdr]

    def begin(k, t):
        start[k] = t
        left[k] = collections.deque(packets(flows[k]["bytes"]))
        total[k] = len(left[k])
        src = path[k][0]
        nic[src].append(k)
        if src not in nic_busy:
            nic_busy.add(src)
            push(t, "nic", src)

    def ready(k, t):
        push(max(t, flows[k].get("start_ns", 0) * 1e-9), "begin", k)

    for k in flows:
        if not after[k]:
            ready(k, 0.0)
    while events:
        t, _, kind, *a = heapq.heappop(events)
        if kind == "begin":
            begin(a[0], t)
        elif kind == "nic":  # the host sends the next flow's next packet
            src = a[0]
            if not nic[src]:
                nic_busy.discard(src)
                continue
            k = nic[src].popleft()
            size = left[k].popleft()
            if left[k]:
                nic[src].append(k)
            p = path[k]
            done = t + size / cap[(p[0], p[1])]
            push(done, "nic", src)
            push(done + lat, "hop", k, 1, size)
        else:  # a packet has arrived at hop a[1] of its path
            k, hop, size = a
            p = path[k]
            if hop == len(p) - 1:
                arrived[k] += 1
                if arrived[k] == total[k]:
                    finish[k] = t
                    for d in dependents[k]:
                        if all(x in finish for x in after[d]):
                            ready(d, max(finish[x] for x in after[d]))
                continue
            link = (p[hop], p[hop + 1])
            free_at[link] = max(t, free_at[link]) + size / cap[link]
            push(free_at[link] + lat, "hop", k, hop + 1, size)
    makespan = max(finish.values())
    line = "makespan %.1f us" % (makespan * 1e6)
    if len(argv) == 4:
        ref = json.load(open(argv[3]))
        fct = {f["id"]: f["fct_ns"] for f in ref["flows"]}
        err = [abs((finish[k] - start[k]) * 1e9 - fct[k]) / fct[k] for k in finish if fct[k] > 0]
        line += ", reference %.1f us (%+.1f %%), mean per-flow error %.1f %%" % (
            ref["makespan_ns"] / 1e3, (makespan * 1e9 - ref["makespan_ns"]) / ref["makespan_ns"] * 100,
            100 * sum(err) / len(err))
    print(line)


if __name__ == "__main__":
    main(sys.argv)
