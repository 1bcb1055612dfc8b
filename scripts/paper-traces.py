#!/usr/bin/env python3
"""Writes the job traces of docs/model-sched.md, "The papers' headline shapes".

  python3 scripts/paper-traces.py yu2022 [--seed S] [--spines N] [--uplink-gbps X]
                                   [--nic-gbps Y] OUT.json
  python3 scripts/paper-traces.py liu2020 [--seed S] [--nic-gbps Y] [--gap S]
                                    [--reconfig-ms D] OUT.json

The default seeds (2022, 2020) and options write examples/jobs-yu2022.json
and examples/jobs-liu2020.json byte for byte; other seeds give the same
setting with other draws (the tables' spread over seeds 1-5), the options
the variants docs/model-sched.md quotes: Yu's uplinks per ToR and their
speed (default 1 x 100 Gb/s), every GPU's NIC (100 Gb/s; Liu's fabric
stays non-blocking, 4 spines of 4 x the NIC speed), Liu's mean gap
between arrivals (30 s; the same draws scaled) and reconfiguration delay
(10 ms). Every job is GPT-3
1.3B (Brown et al. 2020, Table 2.1), data parallel only (one ring
all-reduce per iteration), on H100 servers (8 GPUs, 989 TFLOP/s, NVLink
3,600 Gb/s) with one 100 Gb/s NIC per GPU: alone, its iteration is about
0.69 s of which 0.39 s waits on the ring between servers (57 %,
communication-heavy). The job sizes, iterations, arrivals and fabrics are
ours, chosen to the papers' descriptions (the papers' own numbers were not
reachable; docs/model-sched.md says what was).
"""
import json
import random
import sys

HW = {"gpu_tflops": 989, "mfu_matmul": 0.5, "hbm_gib": 80, "gpus_per_node": 8,
      "nvlink_gbps": 3600, "nic_gbps": 100}


def hw(nic):
    return dict(HW, nic_gbps=nic)


def yu2022(seed, spines=1, uplink=100, nic=100):
    # 16 ToRs of two 8-GPU servers with ONE 100 Gb/s uplink each: the ToR
    # plays the paper's multi-GPU server with one NIC, shared by the jobs
    # whose rings cross it (contention); a job spanning more ToRs crosses
    # more uplinks (overhead). All jobs at t = 0: the paper's offline
    # makespan problem.
    rnd = random.Random(seed)
    jobs = []
    for i in range(40):
        g = rnd.choice([8, 16, 16, 24, 32, 32, 48, 64])
        it = rnd.choice([500, 1000, 1500, 2000, 3000])
        jobs.append({"id": f"j{i:02d}-dp{g}", "arrival_s": 0, "model": "gpt-1.3b",
                     "gpus": g, "iterations": it})
    return {
        "description": "Yu et al. 2022 (SJF-BCO) setting, docs/model-sched.md: 40 ring "
                       "all-reduce jobs (GPT-3 1.3B, data parallel, 8-64 GPUs) all at t = 0 "
                       "on 256 GPUs, 16 ToRs of two servers, one 100 Gb/s uplink per ToR "
                       "(16:1). Written by scripts/paper-traces.py yu2022 --seed %d. Run: "
                       "fabricsim jobs examples/jobs-yu2022.json --scheduler all" % seed,
        "cluster": {"topology": {"type": "leafspine", "leaves": 16, "spines": spines,
                                 "hosts_per_leaf": 16, "host_gbps": nic,
                                 "fabric_gbps": uplink},
                    "hardware": hw(nic)},
        "jobs": jobs}


def liu2020(seed, nic=100, gap=30.0, reconfig_ms=10):
    # 16 ToRs of two servers on a non-blocking fabric (4 x 400 Gb/s up per
    # 16 x 100 Gb/s down): a job's iteration alone is what it gets on its
    # own circuits; liu-* schedulers put jobs spanning ToRs on the ToRs'
    # OCS circuits (10 ms MEMS reconfiguration). Poisson arrivals, mean 30 s
    # apart: the circuits of a ToR are wanted by several jobs at once.
    rnd = random.Random(seed)
    jobs, t = [], 0.0
    for i in range(40):
        g = rnd.choice([16, 24, 32, 32, 48, 64])
        it = rnd.choice([200, 500, 1000, 2000])
        jobs.append({"id": f"j{i:02d}-dp{g}", "arrival_s": round(t, 3), "model": "gpt-1.3b",
                     "gpus": g, "iterations": it})
        t += rnd.expovariate(1 / gap)
    return {
        "description": "Liu et al. 2020 (SWRTF on OCS) setting, docs/model-sched.md: 40 ring "
                       "all-reduce jobs (GPT-3 1.3B, data parallel, 16-64 GPUs), Poisson "
                       "arrivals 30 s apart on average, 256 GPUs in 16 ToRs of two servers "
                       "whose circuits (10 ms reconfiguration) join the ToRs. Written by "
                       "scripts/paper-traces.py liu2020 --seed %d. Run: fabricsim jobs "
                       "examples/jobs-liu2020.json --scheduler all" % seed,
        "cluster": {"topology": {"type": "leafspine", "leaves": 16, "spines": 4,
                                 "hosts_per_leaf": 16, "host_gbps": nic,
                                 "fabric_gbps": 4 * nic},
                    "hardware": hw(nic), "ocs_reconfig_ms": reconfig_ms},
        "jobs": jobs}


def main(argv):
    args = list(argv)
    opts = {}
    names = {"--seed": int, "--spines": int, "--uplink-gbps": float, "--nic-gbps": float,
             "--gap": float, "--reconfig-ms": float}
    for name, conv in names.items():
        if name in args:
            i = args.index(name)
            if i + 1 >= len(args):
                sys.stderr.write(__doc__)
                return 2
            opts[name] = conv(args[i + 1])
            del args[i:i + 2]
    if len(args) != 2 or args[0] not in ("yu2022", "liu2020"):
        sys.stderr.write(__doc__)
        return 2
    which, out = args
    num = lambda v: int(v) if v == int(v) else v  # 100, not 100.0, in the JSON
    if which == "yu2022":
        if "--gap" in opts or "--reconfig-ms" in opts:
            sys.stderr.write(__doc__)
            return 2
        trace = yu2022(opts.get("--seed", 2022), opts.get("--spines", 1),
                       num(opts.get("--uplink-gbps", 100)), num(opts.get("--nic-gbps", 100)))
    else:
        if "--spines" in opts or "--uplink-gbps" in opts:
            sys.stderr.write(__doc__)
            return 2
        trace = liu2020(opts.get("--seed", 2020), num(opts.get("--nic-gbps", 100)),
                        opts.get("--gap", 30.0), num(opts.get("--reconfig-ms", 10)))
    with open(out, "w") as f:
        f.write("{\n")
        f.write('  "description": %s,\n' % json.dumps(trace["description"]))
        f.write('  "cluster": %s,\n' % json.dumps(trace["cluster"]))
        f.write('  "jobs": [\n')
        f.write(",\n".join("    " + json.dumps(j) for j in trace["jobs"]))
        f.write("\n  ]\n}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
