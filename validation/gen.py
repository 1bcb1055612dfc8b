#!/usr/bin/env python3
"""Writes the validation scenarios (validation/*.json) that
scripts/validate.sh runs with the fluid engine and with ns-3.

Every case uses 100 Gb/s links with 1 us latency. The files are committed;
run this again (python3 validation/gen.py) after changing a case.
"""
import json
import os

KIB = 1024
MIB = 1024 * 1024
HERE = os.path.dirname(os.path.abspath(__file__))


def star(hosts):
    return {"type": "star", "hosts": hosts, "gbps": 100, "latency_ns": 1000}


def leafspine(leaves, spines, hosts_per_leaf):
    return {"type": "leafspine", "leaves": leaves, "spines": spines,
            "hosts_per_leaf": hosts_per_leaf, "host_gbps": 100, "fabric_gbps": 100,
            "latency_ns": 1000}


def fattree(k):
    return {"type": "fattree", "k": k, "gbps": 100, "latency_ns": 1000}


def flow(fid, src, dst, size, after=None):
    f = {"id": fid, "src": src, "dst": dst, "bytes": size}
    if after:
        f["after"] = after
    return f


# The tcp model's packet sizes set to the ns-3 backend's: MTU 9000 without
# TCP timestamps (ns-3 stamps in milliseconds, so the backend turns them
# off): 8960 bytes of payload, 40 of IP+TCP and 2 of PPP per packet. The
# file's transport is tcp; `fabricsim sim --transport fluid` (or rdma)
# overrides it.
TRANSPORT = {"kind": "tcp", "mss_bytes": 8960, "header_bytes": 42}


def scenario(description, topology, flows, mode="ecmp"):
    return {"description": description, "topology": topology,
            "routing": {"mode": mode, "seed": 1}, "transport": TRANSPORT,
            "flows": flows}


def incast(sizes):
    n = len(sizes)
    return [flow("s%d" % i, i, n, s) for i, s in enumerate(sizes)]


def permutation(hosts, shift):
    return [flow("p%d" % i, i, (i * 5 + shift) % hosts, 4 * MIB) for i in range(hosts)]


def alltoall(hosts, size):
    return [flow("a%d-%d" % (i, j), i, j, size)
            for i in range(hosts) for j in range(hosts) if i != j]


def ring_allreduce(ranks, step_bytes):
    """2(N-1) steps; in step s rank r sends one chunk to r+1 once it has the
    chunk of step s-1 from r-1 and its own send of step s-1 is done."""
    flows = []
    for s in range(2 * (ranks - 1)):
        for r in range(ranks):
            after = None
            if s:
                after = ["r%d.%d" % (s - 1, (r - 1) % ranks), "r%d.%d" % (s - 1, r)]
            flows.append(flow("r%d.%d" % (s, r), r, (r + 1) % ranks, step_bytes, after))
    return flows


def pingpong(a, b, size, rounds):
    flows = []
    for k in range(rounds):
        src, dst = (a, b) if k % 2 == 0 else (b, a)
        flows.append(flow("m%d" % k, src, dst, size, ["m%d" % (k - 1)] if k else None))
    return flows


def twojobs():
    # 1 spine, 3 leaves of 2 hosts: job A (leaf 0 -> leaf 2) and job B
    # (leaf 1 -> leaf 2, two rounds) share the spine's link down to leaf 2.
    flows = [flow("A.0", 0, 4, 2 * MIB), flow("A.1", 1, 5, 2 * MIB)]
    for rnd in range(2):
        for i, (src, dst) in enumerate(((2, 4), (3, 5))):
            after = ["B%d.%d" % (rnd - 1, i)] if rnd else None
            flows.append(flow("B%d.%d" % (rnd, i), src, dst, 1 * MIB, after))
    return flows


def alltoall_ordered(hosts, size, rotated):
    """Each sender sends one message at a time (each after its previous):
    to 0, 1, 2, ... (the same order for all) or to i+1, i+2, ... (rotated)."""
    flows = []
    for i in range(hosts):
        prev = None
        for k in range(1, hosts):
            j = (i + k) % hosts if rotated else (k - 1 if k - 1 < i else k)
            fid = "a%d-%d" % (i, j)
            flows.append(flow(fid, i, j, size, [prev] if prev else None))
            prev = fid
    return flows


def mice_elephants(chains):
    """Two 8 MiB flows and 30 messages of 16 KiB to host 8 of a star:
    from hosts 2..7, all at once (5 a host, through the source FIFO), or
    as 3 chains of 10 (each message after the previous) from hosts 2..4."""
    flows = [flow("E0", 0, 8, 8 * MIB), flow("E1", 1, 8, 8 * MIB)]
    if not chains:
        return flows + [flow("m%d" % i, 2 + i % 6, 8, 16 * KIB) for i in range(30)]
    for c in range(3):
        for i in range(10):
            after = ["c%d.%d" % (c, i - 1)] if i else None
            flows.append(flow("c%d.%d" % (c, i), 2 + c, 8, 16 * KIB, after))
    return flows


def staggered(hosts, n, size, window_ns, seed):
    """n messages between random distinct hosts, each starting at a uniform
    random ns of [0, window_ns) (Python's random.Random(seed): the file
    does not change with the Python version, as the algorithm is fixed)."""
    import random
    rng = random.Random(seed)
    flows = []
    for i in range(n):
        s = rng.randrange(hosts)
        d = rng.randrange(hosts - 1)
        d += d >= s
        f = flow("f%d" % i, s, d, size)
        f["start_ns"] = rng.randrange(window_ns)
        flows.append(f)
    return flows


def star400(hosts):
    return {"type": "star", "hosts": hosts, "gbps": 400, "latency_ns": 500}


# staggered-fattree8's messages; incast6-mixed-rtt is a piece of them
STAGGERED = staggered(128, 2000, 800000, 1250000, 7)

CASES = {
    "incast16": scenario("16->1 incast, 1 MiB each, one switch", star(17),
                         incast([MIB] * 16)),
    "incast16-unequal": scenario("16->1 incast, sizes 128 KiB .. 2 MiB, one switch", star(17),
                                 incast([(i + 1) * 128 * KIB for i in range(16)])),
    "permutation-fattree4": scenario("permutation i -> 5i+3 mod 16, 4 MiB each, fat-tree k=4, ECMP",
                                     fattree(4), permutation(16, 3)),
    "alltoall-oversub": scenario("all-to-all of 256 KiB on a 2:1 oversubscribed leaf-spine "
                                 "(4 leaves x 4 hosts, 2 spines), ECMP",
                                 leafspine(4, 2, 4), alltoall(16, 256 * KIB)),
    "ring-64k": scenario("ring all-reduce, 8 hosts, 64 KiB steps (14 steps), leaf-spine 2x4",
                         leafspine(2, 2, 4), ring_allreduce(8, 64 * KIB)),
    "ring-1m": scenario("ring all-reduce, 8 hosts, 1 MiB steps (14 steps), leaf-spine 2x4",
                        leafspine(2, 2, 4), ring_allreduce(8, MIB)),
    "ring-8m": scenario("ring all-reduce, 8 hosts, 8 MiB steps (14 steps), leaf-spine 2x4",
                        leafspine(2, 2, 4), ring_allreduce(8, 8 * MIB)),
    "pingpong-64k": scenario("ping-pong: 20 chained 64 KiB messages between leaves",
                             leafspine(2, 2, 4), pingpong(0, 4, 64 * KIB, 20)),
    "twojobs-spine": scenario("two jobs share a spine's down-link: A 2 x 2 MiB, B 2 rounds "
                              "of 2 x 1 MiB, 1 spine, 3 leaves x 2 hosts",
                              leafspine(3, 1, 2), twojobs()),
    "alltoall64k-same-order": scenario("64 KiB all-to-all, 16 hosts, one message at a time, "
                                       "every sender in the order 0, 1, 2, ...",
                                       leafspine(2, 2, 8), alltoall_ordered(16, 64 * KIB, False)),
    "alltoall64k-rotated": scenario("64 KiB all-to-all, 16 hosts, one message at a time, "
                                    "sender i in the order i+1, i+2, ...",
                                    leafspine(2, 2, 8), alltoall_ordered(16, 64 * KIB, True)),
    # Added 2026-12-04 to see how far the model carries beyond the cases
    # it was built on (docs/validation.md).
    "mice-elephants": scenario("2 x 8 MiB and 30 x 16 KiB (5 from each of 6 hosts) to one host",
                               star(9), mice_elephants(False)),
    "mice-chains": scenario("2 x 8 MiB and 3 chains of 10 x 16 KiB to one host", star(9),
                            mice_elephants(True)),
    "incast8-400g": scenario("8->1 incast, 1 MiB each, one switch, 400 Gb/s, 500 ns", star400(9),
                             incast([MIB] * 8)),
    "incast32-64k": scenario("32->1 incast, 64 KiB each, one switch", star(33),
                             incast([64 * KIB] * 32)),
    "ring-256k-4to1": scenario("ring all-reduce, 8 hosts, 256 KiB steps, leaf-spine 2x4, "
                               "one spine (4:1)", leafspine(2, 1, 4),
                               ring_allreduce(8, 256 * KIB)),
    "alltoall-fattree4-128k": scenario("all-to-all of 128 KiB, 16 hosts, fat-tree k=4, ECMP",
                                       fattree(4), alltoall(16, 128 * KIB)),
    "pingpong-1m": scenario("ping-pong: 10 chained 1 MiB messages between leaves",
                            leafspine(2, 2, 4), pingpong(0, 4, MIB, 10)),
    # Added 2026-12-05: arrivals at scale, as bench B5s (~80 % mean load
    # of a host link), where the DCTCP model's steps fall between arrivals.
    "staggered-fattree8": scenario("2000 messages of 0.8 MB between random hosts, starting "
                                   "uniformly over 1.25 ms, fat-tree k=8 (128 hosts), ECMP",
                                   fattree(8), STAGGERED),
    # Added 2026-12-06 (fifteenth session): a small, repeatable piece of
    # staggered-fattree8 (ns-3 holds its per-flow times to 0.0 % when
    # their starts move by < 100 ns), where flows of unequal round trips
    # share one FIFO port.
    "incast6-mixed-rtt": scenario("staggered-fattree8's 6 messages to host 7 that start in its "
                                  "first 140 us: one from the host's edge switch (2 hops), five "
                                  "from other pods (6 hops), 0.8 MB each, fat-tree k=8, ECMP",
                                  fattree(8),
                                  [f for f in STAGGERED
                                   if f["dst"] == 7 and f["start_ns"] < 140000]),
    # Added 2026-12-06 (seventeenth session): a flow alone on its links
    # whose ACKs cross a port others keep queued; its slow start's round
    # trips take that queue (docs/model.md, "Slow start").
    "ack-queue": scenario("D (host 2 -> 3, 1 MiB) at 1 ms, alone on its links, while A and B "
                          "(hosts 0, 1 -> 2, 10 MiB) keep DCTCP's queue at host 2's port, "
                          "which D's ACKs cross; one switch",
                          star(4), [flow("A", 0, 2, 10 * MIB), flow("B", 1, 2, 10 * MIB),
                                    dict(flow("D", 2, 3, MIB), start_ns=1000000)]),
    # Added 2026-12-06 (seventeenth session): validation/random.py's
    # scenario r020 (seed 7), two long flows that merge at a core port and
    # twelve messages that join them there or further on; the messages'
    # bytes stay queued at the ports after the merge (docs/validation.md,
    # "Seventeenth session").
    "mice-elephants-fattree4": scenario(
        "2 x 4 MiB to host 4 from other pods (they merge at a core port) and 12 messages of "
        "16 or 64 KiB to it over the first 200 us, fat-tree k=4, ECMP",
        fattree(4),
        [flow("E0", 12, 4, 4 * MIB), flow("E1", 10, 4, 4 * MIB)] +
        [dict(flow("m%d" % i, src, 4, size * KIB), start_ns=t)
         for i, (src, size, t) in enumerate([(3, 16, 85454), (5, 64, 27815), (6, 16, 65141),
                                             (1, 16, 72592), (7, 16, 25623), (11, 64, 147253),
                                             (14, 16, 199227), (8, 16, 116194), (0, 64, 160570),
                                             (13, 16, 181595), (15, 64, 118579),
                                             (2, 64, 133104)])]),
}


def main():
    for name, case in CASES.items():
        with open(os.path.join(HERE, name + ".json"), "w") as f:
            json.dump(case, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
