#!/usr/bin/env python3
"""scripts/layers.py: the boundaries of docs/architecture.md, checked.

- A module reaches another only through its public header
  (include/fabricsim/*.h): no `#include "../other/..."` except base's
  (base/base.h, base/json.h: the library's shared foundation).
- Dependencies run down the layers: a module includes only headers of its
  own layer's module or of lower layers, so the module graph has no cycle.
- The CLI uses the public API: no fs__ name of the library in src/cli/.
- No source file over 1,200 lines, no function over 150 lines.

Prints each violation on a line and exits 1 if there is any; 0 and a
summary line otherwise. Run from anywhere: paths are the repository's.
"""
import glob
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

# Lowest first. Modules on one line are peers: neither may use the other.
LAYERS = [
    ["base"],
    ["topo"],
    ["route"],
    ["sim"],
    ["ctl"],
    ["coll"],
    ["work", "scenario"],
    ["optical"],
    ["sched"],
    ["chakra", "sweep"],
    ["report"],
    ["cli"],
]

# Which module each public header belongs to.
OWNER = {
    "err": "base", "output": "base",
    "topo": "topo",
    "route": "route", "routeopt": "route", "symm": "route",
    "sim": "sim",
    "netctl": "ctl",
    "coll": "coll",
    "work": "work", "compute": "work", "pipeline": "work", "train": "work",
    "scenario": "scenario", "ns3": "scenario", "packet": "scenario",
    "ocs": "optical", "ocsctl": "ctl", "topoopt": "optical", "tpu": "optical", "wan": "optical",
    "wan_risk": "optical", "wan_sdm": "optical",
    "sched": "sched",
    "chakra": "chakra", "sweep": "sweep",
    "report": "report", "html": "report", "trace": "report",
}

# Known exceptions, each with why; printed on every run so they stay in
# sight. Remove an entry when its cause is fixed.
EXCEPTIONS = {}

MAX_FILE_LINES = 1200
MAX_FUNCTION_LINES = 150


def layer_of(mod):
    for i, row in enumerate(LAYERS):
        if mod in row:
            return i
    return None


def functions(path):
    """(name, first line, length) of each top-level function definition."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i = [], 0
    head = re.compile(r"^(?:static\s+)?(?:inline\s+)?(?:const\s+)?(?:unsigned\s+)?"
                      r"[a-z_0-9]+\s*\**\s*\**([a-z_0-9]+)\(")
    while i < len(lines):
        m = head.match(lines[i])
        if m and not lines[i].rstrip().endswith(";"):
            if lines[i].rstrip().endswith("}"):
                i += 1
                continue
            j = i
            while j < len(lines) and not lines[j].startswith("}"):
                if j > i and head.match(lines[j]):
                    break  # a prototype spread over lines, not a body
                j += 1
            if j < len(lines) and lines[j].startswith("}"):
                out.append((m.group(1), i + 1, j - i + 1))
                i = j + 1
                continue
        i += 1
    return out


def main():
    os.chdir(ROOT)
    bad = []
    headers = {os.path.basename(h)[:-2] for h in glob.glob("include/fabricsim/*.h")}
    for h in sorted(headers - set(OWNER)):
        bad.append("include/fabricsim/%s.h: no owner in scripts/layers.py" % h)
    sources = sorted(glob.glob("src/*/*.c") + glob.glob("src/*/*.h"))
    edges = set()
    for path in sources:
        mod = path.split("/")[1]
        if layer_of(mod) is None:
            bad.append("%s: module %s has no layer in scripts/layers.py" % (path, mod))
            continue
        text = open(path, encoding="utf-8").read()
        for m in re.finditer(r'#include "\.\./([a-z_]+)/([a-z_]+\.h)"', text):
            if (path, "%s/%s" % (m.group(1), m.group(2))) in EXCEPTIONS:
                continue
            if m.group(1) != mod and m.group(1) != "base":
                bad.append("%s: includes %s/%s, another module's private header"
                           % (path, m.group(1), m.group(2)))
        for m in re.finditer(r'#include "fabricsim/([a-z_]+)\.h"', text):
            owner = OWNER.get(m.group(1))
            if owner and owner != mod:
                edges.add((mod, owner, path))
    for h in sorted(headers & set(OWNER)):
        text = open("include/fabricsim/%s.h" % h, encoding="utf-8").read()
        for m in re.finditer(r'#include "fabricsim/([a-z_]+)\.h"', text):
            owner = OWNER.get(m.group(1))
            if owner and owner != OWNER[h]:
                edges.add((OWNER[h], owner, "include/fabricsim/%s.h" % h))
    for a, b, where in sorted(edges):
        la, lb = layer_of(a), layer_of(b)
        if lb is None or lb >= la:
            bad.append("%s: %s uses %s, which is not below it" % (where, a, b))
    for path in sorted(glob.glob("src/cli/*.c")):
        text = open(path, encoding="utf-8").read()
        for name in sorted(set(re.findall(r"\bfs__[a-z_0-9]+", text))):
            if not re.match(r"fs__(cli|opt|cmd|sub|group)", name):
                bad.append("%s: uses the library's internal %s" % (path, name))
    n_funcs = 0
    for path in sorted(glob.glob("src/*/*.c") + glob.glob("src/*/*.h")):
        n = sum(1 for _ in open(path, encoding="utf-8"))
        if n > MAX_FILE_LINES:
            bad.append("%s: %d lines (at most %d)" % (path, n, MAX_FILE_LINES))
        for name, line, length in functions(path):
            n_funcs += 1
            if length > MAX_FUNCTION_LINES:
                bad.append("%s:%d: %s is %d lines (at most %d)"
                           % (path, line, name, length, MAX_FUNCTION_LINES))
    for (where, what), why in sorted(EXCEPTIONS.items()):
        print("exception: %s includes %s: %s" % (where, what, why))
    for b in bad:
        print(b)
    mods = sorted({p.split("/")[1] for p in sources})
    print("layers: %d modules, %d dependencies between them, %d functions; %s"
          % (len(mods), len({(a, b) for a, b, _ in edges}), n_funcs,
             "%d violation(s)" % len(bad) if bad else "every rule holds"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
