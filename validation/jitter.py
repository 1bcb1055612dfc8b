#!/usr/bin/env python3
"""How far a case's per-flow times are set by the case: the reference
against itself with start times moved by less than a packet's time.

    python3 validation/jitter.py CASE.json [--runs 4] [--jitter-ns 100] [--seed 1]
        [--reference ns3|packet|ns3-rdma|packet-rdma] [--fabricsim PATH] [--model tcp]
        [--keep DIR]

Runs the reference (`fabricsim sim --backend ns3`, the packet-level ns-3
run of scripts/validate.sh, which needs `make ns3`; or `--backend packet
--transport tcp`, fabricsim's own packet network; under rdma, RoCEv2 with
DCQCN: `ns3-rdma` and `packet-rdma`) on CASE and on --runs
copies of it whose flows that start at a time (no dependencies) start up
to --jitter-ns later (uniform, whole nanoseconds, seeded). Then prints:

- how many flows start at the same instant as another (the jitter
  orders them, where the case leaves the order to each simulator's
  tie-break, so their floor is the order's, not the dynamics');
- the noise floor: each reference run's mean per-flow FCT error against
  the mean FCT of the other runs (leave one out), and against the run of
  the case itself; their makespans;
- for each model (`--model`, repeatable; default `tcp`: `--transport
  tcp`; `fluid`; `tcp-dctcp`: `--transport tcp --rate-control dctcp`;
  `packet`: fabricsim's packet network; `rdma-dcqcn`: `--transport rdma
  --rate-control dcqcn`; `packet-rdma`), its makespan error and mean
  per-flow error against the case's reference run and against the mean of
  all the runs (the ensemble).

A case whose floor is near issue 12's 10 % mean per-flow error (2,000
staggered messages at ~80 % load: ~9-11 %) cannot be met flow by flow by
any model: where the packets' order at a port decides which flow goes
first, 100 ns decides it. The ensemble's mean is then the reference a
model can be held to. docs/validation.md, "Fourteenth session", has the
measurements.
"""
import argparse
import json
import os
import random
import statistics
import sys
import tempfile

from simrun import sim_json

MODELS = {
    "fluid": ["--transport", "fluid"],
    "tcp": ["--transport", "tcp"],
    "tcp-dctcp": ["--transport", "tcp", "--rate-control", "dctcp"],
    "packet": ["--backend", "packet", "--transport", "tcp"],
    "rdma-dcqcn": ["--transport", "rdma", "--rate-control", "dcqcn"],
    "packet-rdma": ["--backend", "packet", "--transport", "rdma"],
}
REFERENCES = {
    "ns3": ["--backend", "ns3"],
    "packet": MODELS["packet"],
    "ns3-rdma": ["--backend", "ns3", "--transport", "rdma"],
    "packet-rdma": MODELS["packet-rdma"],
}


def run(fabricsim, case, extra):
    out = sim_json(fabricsim, case, extra, "jitter.py")
    return out["makespan_ns"], {f["id"]: f["fct_ns"] for f in out["flows"]}


def mean_err(model, ref):
    ids = [i for i in ref if ref[i] > 0]
    return statistics.mean(abs(model[i] - ref[i]) / ref[i] for i in ids)


def jittered(sc, rng, jitter_ns):
    sc = json.loads(json.dumps(sc))
    for f in sc["flows"]:
        if not f.get("after"):
            f["start_ns"] = f.get("start_ns", 0) + rng.randrange(jitter_ns)
    return sc


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("case")
    ap.add_argument("--runs", type=int, default=4, help="jittered copies (default 4)")
    ap.add_argument("--jitter-ns", type=int, default=100, help="start times move by [0, J) ns")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--reference", choices=sorted(REFERENCES), default="ns3")
    ap.add_argument("--fabricsim", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                        "fabricsim"))
    ap.add_argument("--model", action="append", choices=sorted(MODELS),
                    help="a model to hold to the runs (repeatable; default tcp)")
    ap.add_argument("--keep", help="write the jittered cases here")
    a = ap.parse_args()
    if a.runs < 1 or a.jitter_ns < 1:
        sys.exit("jitter.py: --runs and --jitter-ns must be at least 1")
    with open(a.case) as f:
        sc = json.load(f)
    out = a.keep or tempfile.mkdtemp(prefix="fabricsim-jitter-")
    os.makedirs(out, exist_ok=True)
    ref_opts = REFERENCES[a.reference]
    rng = random.Random(a.seed)
    cases = [a.case]
    for i in range(a.runs):
        path = os.path.join(out, "jitter%d.json" % (i + 1))
        with open(path, "w") as f:
            json.dump(jittered(sc, rng, a.jitter_ns), f)
        cases.append(path)
    refs = []
    for c in cases:
        refs.append(run(a.fabricsim, c, ref_opts))
        print("jitter.py: %s done" % c, file=sys.stderr)
    starts = {}
    for f in sc["flows"]:
        if not f.get("after"):
            starts[f.get("start_ns", 0)] = starts.get(f.get("start_ns", 0), 0) + 1
    tied = sum(n for n in starts.values() if n > 1)
    if tied:
        print("%d flows start at the same instant as another: the case's runs order them as "
              "each simulator breaks the tie, the jittered ones by the jitter\n" % tied)
    fcts = [r[1] for r in refs]
    ids = list(fcts[0])
    ens = {i: statistics.mean(f[i] for f in fcts) for i in ids}
    print("| %s run | makespan (us) | mean per-flow error vs the others' mean | vs the case's run |"
          % a.reference)
    print("|---|---|---|---|")
    for k, (mk, f) in enumerate(refs):
        others = {i: statistics.mean(g[i] for j, g in enumerate(fcts) if j != k) for i in ids}
        own = "-" if k == 0 else "%.1f %%" % (100 * mean_err(f, fcts[0]))
        print("| %s | %.1f | %.1f %% | %s |" % ("case" if k == 0 else "jitter %d" % k, mk / 1e3,
                                                100 * mean_err(f, others), own))
    print()
    print("| model | makespan (us) | makespan error | mean per-flow error vs the case's run |"
          " vs the ensemble's mean |")
    print("|---|---|---|---|---|")
    for m in a.model or ["tcp"]:
        mk, f = run(a.fabricsim, a.case, MODELS[m])
        print("| %s | %.1f | %+.1f %% | %.1f %% | %.1f %% |" % (
            m, mk / 1e3, 100 * (mk - refs[0][0]) / refs[0][0], 100 * mean_err(f, fcts[0]),
            100 * mean_err(f, ens)))


if __name__ == "__main__":
    main()
