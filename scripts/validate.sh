#!/bin/sh
# Runs each validation case (validation/*.json, or the files given) with
# `fabricsim sim --backend ns3` (the packet-level reference) and with the
# fluid engine, and also with `--transport tcp` and `--transport rdma` when
# `fabricsim sim --help` lists --transport; when the ns-3 program has them,
# rdma with its own reference (`--backend ns3 --transport rdma`, RoCEv2
# with DCQCN; also `--rate-control dcqcn`, the fluid DCQCN model, against
# it) and tcp on persistent connections with its own
# (`--connections persistent`, warm DCTCP connections; also
# `--rate-control dctcp`, the fluid DCTCP model, against it; and that model
# on new connections, `tcp-dctcp`, against the ns3 run); fabricsim's own
# packet-level backend (`--backend packet`, new and warm; and under rdma,
# `packet-rdma`, against the RoCE run, beside `rdma-dcqcn-nopkt`, the DCQCN
# model without its messages run as packets) against ns-3; prints a markdown
# table: makespan per run, each variant's error against its reference (the
# DCTCP run on new connections unless it has its own), and the per-flow FCT error (FCT = finish - start; |x - ref| / ref, max
# and mean over the flows),
# then per variant the cases within issue 12's goal (5 % makespan, 10 %
# mean per-flow error).
#
#   scripts/validate.sh [CASE.json ...]     (needs `make ns3`)
#   FABRICSIM=path/to/fabricsim  KEEP=dir   (keep the JSON results in dir)
#   REUSE=dir   (take the ns-3 runs, and their wall times, from an earlier
#                KEEP=dir instead of running ns-3 again: fabricsim's
#                columns re-measured in seconds; FABRICSIM_NS3 still names
#                the program, which says what runs it had)
set -eu
cd "$(dirname "$0")/.."
bin=${FABRICSIM:-build/fabricsim}
[ -x "$bin" ] || { echo "validate: $bin not found: run make" >&2; exit 2; }
[ $# -gt 0 ] || set -- validation/*.json

variants="ns3 fluid"
if "$bin" sim --help | grep -q -- '--transport'; then
  variants="$variants tcp rdma"
  # the RoCE/DCQCN reference of rdma, when the ns-3 program has one
  ns3prog=${FABRICSIM_NS3:-$(dirname "$bin")/fabricsim-ns3}
  if grep -aq dcqcn "$ns3prog" 2>/dev/null; then
    variants="$variants ns3-rdma"
    # rdma under the fluid DCQCN model, against it too; without its small
    # messages run as packets; and fabricsim's packet backend under rdma
    if "$bin" sim --help | grep -q -- '--rate-control'; then
      variants="$variants rdma-dcqcn"
      if "$bin" sim --help | grep -q -- 'RoCEv2 under DCQCN'; then
        variants="$variants rdma-dcqcn-nopkt packet-rdma"
      fi
    fi
  fi
  # tcp on warm persistent connections and its reference, likewise
  if grep -aq "tcp persistent" "$ns3prog" 2>/dev/null; then
    variants="$variants tcp-persistent ns3-persistent"
    # and DCTCP's fluid model on them, against it too
    if "$bin" sim --help | grep -q -- 'dctcp'; then
      variants="$variants tcp-persistent-dctcp"
    fi
  fi
  # DCTCP's fluid model on new connections, against the ns3 run
  if "$bin" sim --help | grep -q -- 'dctcp'; then variants="$variants tcp-dctcp"; fi
  # tcp with the source's fair queue ("source_queue": "fq"), when the
  # binary knows the key
  if grep -aq source_queue "$bin"; then variants="$variants tcp-fq"; fi
  # the fluid tcp model alone, without its small flows run as packets
  # (--packet-bytes 0), new and warm
  if "$bin" sim --help | grep -q -- '--packet-bytes'; then
    variants="$variants tcp-nopkt"
    case " $variants " in *" ns3-persistent "*) variants="$variants tcp-persistent-nopkt" ;; esac
  fi
  # fabricsim's own packet-level backend, against ns-3 (new and warm)
  if "$bin" sim --help | grep -q -- 'ns3|packet'; then
    variants="$variants packet"
    case " $variants " in *" ns3-persistent "*) variants="$variants packet-persistent" ;; esac
  fi
fi

out=${KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/fabricsim-validate-XXXXXX")}
mkdir -p "$out"
for case in "$@"; do
  name=$(basename "$case" .json)
  for v in $variants; do
    file=$case
    case $v in
      ns3) opts="--backend ns3" ;;
      ns3-rdma) opts="--backend ns3 --transport rdma" ;;
      ns3-persistent) opts="--backend ns3 --transport tcp --connections persistent" ;;
      tcp-persistent) opts="--transport tcp --connections persistent" ;;
      tcp-nopkt) opts="--transport tcp --packet-bytes 0" ;;
      tcp-persistent-nopkt) opts="--transport tcp --connections persistent --packet-bytes 0" ;;
      tcp-persistent-dctcp) opts="--transport tcp --connections persistent --rate-control dctcp" ;;
      tcp-dctcp) opts="--transport tcp --rate-control dctcp" ;;
      rdma-dcqcn) opts="--transport rdma --rate-control dcqcn" ;;
      rdma-dcqcn-nopkt) opts="--transport rdma --rate-control dcqcn --packet-bytes 0" ;;
      packet-rdma) opts="--backend packet --transport rdma" ;;
      fluid) opts="--transport fluid" ;;
      packet) opts="--backend packet --transport tcp" ;;
      packet-persistent) opts="--backend packet --transport tcp --connections persistent" ;;
      tcp-fq)
        opts="--transport tcp"
        file=$out/$name.fq-case.json
        python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
t = d.get("transport", "tcp")
t = {"kind": t} if isinstance(t, str) else t
t["source_queue"] = "fq"
d["transport"] = t
json.dump(d, open(sys.argv[2], "w"))' "$case" "$file"
        ;;
      *) opts="--transport $v" ;;
    esac
    case $v in
      ns3*)
        if [ -n "${REUSE:-}" ] && [ -f "$REUSE/$name.$v.json" ]; then
          [ "$REUSE" = "$out" ] || cp "$REUSE/$name.$v.json" "$REUSE/$name.$v.time" "$out/"
          continue
        fi
        ;;
    esac
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    if ! "$bin" sim "$file" --format json $opts >"$out/$name.$v.json"; then
      echo "validate: $case: fabricsim sim $opts failed" >&2
      exit 1
    fi
    t1=$(date +%s.%N)
    echo "$t0 $t1" >"$out/$name.$v.time"
  done
  echo "$name" >>"$out/cases"
done

python3 - "$out" $variants <<'EOF'
import json
import sys

out, variants = sys.argv[1], sys.argv[2:]
refs = [v for v in variants if v.startswith("ns3")]
others = [v for v in variants if v not in refs]
# each variant's reference: rdma's is the RoCE/DCQCN run and tcp-persistent's
# the DCTCP run on warm connections when there are those, every other's the
# DCTCP run on new connections
own = {"rdma": "ns3-rdma", "rdma-dcqcn": "ns3-rdma", "rdma-dcqcn-nopkt": "ns3-rdma",
       "packet-rdma": "ns3-rdma", "tcp-persistent": "ns3-persistent",
       "tcp-persistent-dctcp": "ns3-persistent", "packet-persistent": "ns3-persistent",
       "tcp-persistent-nopkt": "ns3-persistent"}
ref_of = {v: own[v] if own.get(v) in refs else "ns3" for v in others}
cases = open(out + "/cases").read().split()


def load(name, v):
    with open("%s/%s.%s.json" % (out, name, v)) as f:
        d = json.load(f)
    t0, t1 = map(float, open("%s/%s.%s.time" % (out, name, v)).read().split())
    return d, t1 - t0


def fcts(d):
    return {f["id"]: f["fct_ns"] for f in d["flows"]}


# issue 12's goal: makespan within 5 % and mean per-flow error within 10 %
GOAL_MAKESPAN, GOAL_FCT_MEAN = 5.0, 10.0
met = {v: [] for v in others}
head = ["case", "flows"] + ["%s (us)" % r.replace("ns3", "ns-3") for r in refs]
for v in others:
    head += ["%s (us)" % v, "%s err" % v, "%s FCT err max" % v, "%s FCT err mean" % v]
head += ["ns-3 wall (s)"]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for name in cases:
    runs = {r: load(name, r)[0] for r in refs}
    _, wall = load(name, "ns3")
    row = [name, str(len(runs["ns3"]["flows"]))]
    row += ["%.1f" % (runs[r]["makespan_ns"] / 1e3) for r in refs]
    for v in others:
        ref = runs[ref_of[v]]
        ref_fct = fcts(ref)
        d, _ = load(name, v)
        err = (d["makespan_ns"] - ref["makespan_ns"]) / ref["makespan_ns"] * 100
        errs = []
        for fid, fct in fcts(d).items():
            r = ref_fct[fid]
            if r > 0:
                errs.append((fct - r) / r * 100)
        worst = max(errs, key=abs) if errs else 0.0
        mean = sum(abs(e) for e in errs) / len(errs) if errs else 0.0
        row += ["%.1f" % (d["makespan_ns"] / 1e3), "%+.1f%%" % err, "%+.1f%%" % worst,
                "%.1f%%" % mean]
        if abs(err) <= GOAL_MAKESPAN and mean <= GOAL_FCT_MEAN:
            met[v].append(name)
    row.append("%.2f" % wall)
    print("| " + " | ".join(row) + " |")
print()
for v in others:
    print("%s (against %s): %d of %d cases within %g %% makespan and %g %% mean per-flow error%s" %
          (v, ref_of[v], len(met[v]), len(cases), GOAL_MAKESPAN, GOAL_FCT_MEAN,
           "; not: " + ", ".join(c for c in cases if c not in met[v])
           if len(met[v]) < len(cases) else ""))
EOF
[ -n "${KEEP:-}" ] || rm -rf "$out"
