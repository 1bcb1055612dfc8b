#!/usr/bin/env python3
"""Reads nccl-tests' stdout (all_reduce_perf and the others) the way a
script written for nccl-tests does: '#' lines are comments except the few
it states facts on, a row is whitespace-split into its columns (size,
count, type, redop, root, then time, algbw, busbw, #wrong out of place and
again in place), and "# Avg bus bandwidth" is the summary.

    scripts/nccl-tests-parse.py [--check] [FILE ...]   (stdin without FILE)

Prints, per file, one JSON object: the test, ranks, rows and the average
bus bandwidth. --check also verifies what nccl-tests' source makes true of
its output (src/common.cu and each src/<test>.cu): algbw = size / time;
busbw = algbw x the test's factor; size = count x element size (x ranks
for all_gather, reduce_scatter, alltoall); the average is the mean of the
busbw columns (nccl-tests averages its out-of-place and in-place runs);
#wrong is 0 or N/A. Exit 0, or 1 naming the first failed check per file.
Python 3 standard library only, so it runs where nccl-tests runs.

fabricsim's `coll --format nccl-tests` is checked with it
(tests/test_nccl_tests.c), as is a sample of nccl-tests' own output
(tests/data/nccl-tests/).
"""
import json
import re
import sys

ELT = {"int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8,
       "half": 2, "float": 4, "double": 8, "bfloat16": 2, "f8e4m3": 1, "f8e5m2": 1}
# bus bandwidth factor per test, from nccl-tests' <test>GetBw
FACTOR = {
    "all_reduce_perf": lambda n: 2.0 * (n - 1) / n,
    "all_gather_perf": lambda n: (n - 1) / n,
    "reduce_scatter_perf": lambda n: (n - 1) / n,
    "alltoall_perf": lambda n: (n - 1) / n,
    "broadcast_perf": lambda n: 1.0,
    "reduce_perf": lambda n: 1.0,
    "sendrecv_perf": lambda n: 1.0,
}
PER_RANK = {"all_gather_perf", "reduce_scatter_perf", "alltoall_perf"}


def num(field):
    return None if field == "N/A" else float(field)


def half_unit(field):
    """Half the last printed digit of a number column: its rounding."""
    if "e" in field:
        mant, exp = field.split("e")
        return half_unit(mant) * 10 ** int(exp)
    return 0.5 * 10 ** -(len(field.split(".")[1]) if "." in field else 0)


def parse(lines):
    out = {"test": None, "ranks": 0, "rows": [], "avg_busbw": None, "out_of_bounds": None}
    for line in lines:
        line = line.rstrip("\n")
        if line.startswith("#"):
            m = re.match(r"#\s*Collective test starting:\s*(\S+)", line)
            if m:
                out["test"] = m.group(1)
            if re.match(r"#\s+Rank\s+\d+", line):
                out["ranks"] += 1
            m = re.match(r"#\s*Avg bus bandwidth\s*:\s*(\S+)", line)
            if m:
                out["avg_busbw"] = float(m.group(1))
            m = re.match(r"#\s*Out of bounds values\s*:\s*(\d+)", line)
            if m:
                out["out_of_bounds"] = int(m.group(1))
            continue
        f = line.split()
        if len(f) < 13:
            continue  # a blank line, or a warning nccl-tests printed
        out["rows"].append({
            "size": int(f[0]), "count": int(f[1]), "type": f[2], "redop": f[3],
            "root": int(f[4]),
            "out_of_place": {"time": num(f[5]), "algbw": num(f[6]), "busbw": num(f[7]),
                             "wrong": num(f[8]), "time_round": half_unit(f[5])},
            "in_place": {"time": num(f[9]), "algbw": num(f[10]), "busbw": num(f[11]),
                         "wrong": num(f[12]), "time_round": half_unit(f[9])},
        })
    return out


def close(a, b, tol):
    return abs(a - b) <= tol


def check(p):
    """The first broken rule of nccl-tests' output, or None."""
    if not p["rows"]:
        return "no result rows"
    if p["test"] not in FACTOR:
        return "unknown test %r" % p["test"]
    n = p["ranks"]
    if n < 1:
        return "no '#  Rank' lines"
    if p["avg_busbw"] is None:
        return "no '# Avg bus bandwidth' line"
    factor = FACTOR[p["test"]](n)
    bus = []
    for r in p["rows"]:
        elt = ELT.get(r["type"])
        if elt is None:
            return "size %d: unknown type %r" % (r["size"], r["type"])
        want = r["count"] * elt * (n if p["test"] in PER_RANK else 1)
        if r["size"] != want:
            return "size %d: count %d of %s gives %d" % (r["size"], r["count"], r["type"], want)
        for half in ("out_of_place", "in_place"):
            h = r[half]
            if h["wrong"] not in (None, 0):
                return "size %d: %s #wrong %g" % (r["size"], half, h["wrong"])
            # the columns are rounded (two decimals, fewer when wide): the
            # slack is what the rounding of time and algbw can make
            if h["time"] > 0:
                algbw = r["size"] / h["time"] / 1e3
                slack = 0.006 + algbw * (h["time_round"] / h["time"] + 0.001)
                if not close(h["algbw"], algbw, slack):
                    return "size %d: %s algbw %g, size / time %g" % (
                        r["size"], half, h["algbw"], algbw)
            # (each of the two is rounded to 0.005: algbw's error grows by
            # the factor)
            if not close(h["busbw"], h["algbw"] * factor,
                         0.0051 * (1 + factor) + 0.001 * h["busbw"]):
                return "size %d: %s busbw %g, algbw x %g = %g" % (
                    r["size"], half, h["busbw"], factor, h["algbw"] * factor)
            bus.append(h["busbw"])
    mean = sum(bus) / len(bus)
    if not close(p["avg_busbw"], mean, 0.006 + 1e-4 * mean):
        return "avg bus bandwidth %g, mean of the busbw columns %g" % (p["avg_busbw"], mean)
    return None


def main(argv):
    do_check = "--check" in argv
    files = [a for a in argv if a != "--check"]
    status = 0
    for name in files or ["-"]:
        f = sys.stdin if name == "-" else open(name, encoding="utf-8")
        with f:
            p = parse(f)
        summary = {"file": name, "test": p["test"], "ranks": p["ranks"],
                   "rows": len(p["rows"]), "avg_busbw": p["avg_busbw"]}
        if do_check:
            bad = check(p)
            summary["check"] = bad or "ok"
            if bad:
                status = 1
        print(json.dumps(summary, sort_keys=True))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
