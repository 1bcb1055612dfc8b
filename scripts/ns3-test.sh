#!/bin/sh
# The ns-3 backend's checks (`make ns3-test`, run by CI): a few seconds of
# small cases against closed forms and the fluid engine.
#   scripts/ns3-test.sh [path/to/fabricsim]   (needs `make ns3`)
set -eu
cd "$(dirname "$0")/.."
bin=${1:-build/fabricsim}
dir=$(mktemp -d "${TMPDIR:-/tmp}/fabricsim-ns3-test-XXXXXX")
trap 'rm -rf "$dir"' EXIT

# One 1 MiB flow over 2 hops (star), a 0-byte flow and a task after it.
cat >"$dir/one.json" <<'EOF'
{"topology": {"type": "star", "hosts": 3, "gbps": 100, "latency_ns": 1000},
 "routing": {"mode": "shortest"},
 "flows": [{"id": "a", "src": 0, "dst": 1, "bytes": 1048576},
           {"id": "z", "src": 0, "dst": 2, "bytes": 0, "start_ns": 500},
           {"id": "b", "src": 2, "dst": 0, "bytes": 65536, "after": ["t"]}],
 "tasks": [{"id": "t", "host": 2, "duration_ns": 7000, "after": ["z"]}]}
EOF
# Two cross-leaf flows pinned on one spine, then on two: path pinning.
for spines in same different; do
  s2=6; [ "$spines" = different ] && s2=7
  cat >"$dir/pin-$spines.json" <<EOF
{"topology": {"type": "leafspine", "leaves": 2, "spines": 2, "hosts_per_leaf": 2,
              "host_gbps": 100, "latency_ns": 1000},
 "routing": {"mode": "explicit"},
 "flows": [{"id": "p", "src": 0, "dst": 2, "bytes": 4194304, "path": [0, 4, 6, 5, 2]},
           {"id": "q", "src": 1, "dst": 3, "bytes": 4194304, "path": [1, 4, $s2, 5, 3]}]}
EOF
done

for c in one pin-same pin-different; do
  "$bin" sim "$dir/$c.json" --backend ns3 >"$dir/$c.ns3.json"
  "$bin" sim "$dir/$c.json" >"$dir/$c.fluid.json"
done
for c in incast16 ring-64k; do
  "$bin" sim "validation/$c.json" --backend ns3 >"$dir/$c.ns3.json"
  "$bin" sim "validation/$c.json" >"$dir/$c.fluid.json"
done
"$bin" sim validation/ring-64k.json --backend ns3 >"$dir/ring-64k.again.json"

# rdma (RoCEv2, DCQCN): a lone 1 MiB message and one of 1 MiB + 1000 B (a
# short last packet) across a leaf-spine; incast16 against the model;
# determinism.
for extra in 0 1000; do
  cat >"$dir/roce-$extra.json" <<EOF
{"topology": {"type": "leafspine", "leaves": 2, "spines": 2, "hosts_per_leaf": 2,
              "host_gbps": 100, "latency_ns": 1000},
 "routing": {"mode": "ecmp", "seed": 1}, "transport": "rdma",
 "flows": [{"id": "a", "src": 0, "dst": 2, "bytes": $((1048576 + extra))}]}
EOF
  "$bin" sim "$dir/roce-$extra.json" --backend ns3 >"$dir/roce-$extra.ns3.json"
  "$bin" sim "$dir/roce-$extra.json" >"$dir/roce-$extra.fluid.json"
  "$bin" sim "$dir/roce-$extra.json" --backend packet >"$dir/roce-$extra.packet.json"
done
"$bin" sim validation/incast16.json --backend ns3 --transport rdma >"$dir/roce-incast16.ns3.json"
"$bin" sim validation/incast16.json --backend ns3 --transport rdma >"$dir/roce-incast16.again.json"
"$bin" sim validation/incast16.json --transport rdma >"$dir/roce-incast16.fluid.json"

# rdma packet by packet: fabricsim's packet backend (RoCEv2 under DCQCN)
# and DCQCN's model with its 64 KiB messages as packets (the default), on
# a 64 KiB all-to-all in one destination order, against ns-3's RoCE run
"$bin" sim validation/alltoall64k-same-order.json --backend ns3 --transport rdma \
  >"$dir/roce-a2a.ns3.json"
"$bin" sim validation/alltoall64k-same-order.json --backend packet --transport rdma \
  >"$dir/roce-a2a.packet.json"
"$bin" sim validation/alltoall64k-same-order.json --transport rdma --rate-control dcqcn \
  >"$dir/roce-a2a.dcqcn.json"

# rdma under the fluid DCQCN model where DCQCN under-uses the links (two
# flows collide on ECMP uplinks; max-min is 34 % faster than ns-3)
"$bin" sim validation/permutation-fattree4.json --backend ns3 --transport rdma >"$dir/roce-perm.ns3.json"
"$bin" sim validation/permutation-fattree4.json --transport rdma --rate-control dcqcn >"$dir/roce-perm.dcqcn.json"

# tcp on warm persistent connections: the 1 MiB flow of one.json, and the
# 64 KiB ping-pong against the model.
"$bin" sim "$dir/one.json" --backend ns3 --transport tcp --connections persistent >"$dir/one.warm.json"
"$bin" sim validation/pingpong-64k.json --backend ns3 --connections persistent >"$dir/pp.warm.ns3.json"
"$bin" sim validation/pingpong-64k.json --connections persistent >"$dir/pp.warm.fluid.json"

# tcp's settings reach ns-3 (a 'tcp' line): a 1 MiB message with an
# initial window of 4 segments and the timestamp option (54 header bytes,
# the model's default), against the model, and with a window of 10
for iw in 4 10; do
  cat >"$dir/iw$iw.json" <<EOF
{"topology": {"type": "star", "hosts": 2, "gbps": 100, "latency_ns": 1000},
 "routing": {"mode": "shortest"}, "transport": {"kind": "tcp", "init_window": $iw},
 "flows": [{"id": "a", "src": 0, "dst": 1, "bytes": 1048576}]}
EOF
  "$bin" sim "$dir/iw$iw.json" --backend ns3 >"$dir/iw$iw.ns3.json"
  "$bin" sim "$dir/iw$iw.json" >"$dir/iw$iw.fluid.json"
done

# tcp on warm connections under the fluid DCTCP model: a 16 KiB message
# sent at 0.99 ms behind two 8 MiB flows into one port waits out their
# standing queue (the tcp model too, since the eighth session; max-min
# alone would give it a third of the port at once)
cat >"$dir/mouse.json" <<'EOF'
{"topology": {"type": "star", "hosts": 4, "gbps": 100, "latency_ns": 1000},
 "routing": {"mode": "shortest"}, "transport": {"kind": "tcp", "connections": "persistent"},
 "flows": [{"id": "a", "src": 0, "dst": 3, "bytes": 8388608},
           {"id": "b", "src": 1, "dst": 3, "bytes": 8388608},
           {"id": "m", "src": 2, "dst": 3, "bytes": 16384, "start_ns": 990000}]}
EOF
"$bin" sim "$dir/mouse.json" --backend ns3 >"$dir/mouse.ns3.json"
"$bin" sim "$dir/mouse.json" --rate-control dctcp >"$dir/mouse.dctcp.json"
# (the fluid tcp model alone: the message as a fluid flow; and by default,
# the message as packets beside the fluid long flows)
"$bin" sim "$dir/mouse.json" --packet-bytes 0 >"$dir/mouse.fluid.json"
"$bin" sim "$dir/mouse.json" >"$dir/mouse.tcp.json"
# Two long flows into one port, the second 200 us later: the older one's
# window grew while it was alone (DCTCP's unequal shares between flows of
# unequal age; the model's window growth exact over its long steps)
cat >"$dir/age.json" <<'EOF'
{"topology": {"type": "star", "hosts": 3, "gbps": 100, "latency_ns": 1000},
 "routing": {"mode": "shortest"}, "transport": {"kind": "tcp", "connections": "persistent"},
 "flows": [{"id": "a", "src": 0, "dst": 2, "bytes": 8388608},
           {"id": "b", "src": 1, "dst": 2, "bytes": 8388608, "start_ns": 200000}]}
EOF
"$bin" sim "$dir/age.json" --backend ns3 >"$dir/age.ns3.json"
"$bin" sim "$dir/age.json" --rate-control dctcp >"$dir/age.dctcp.json"
"$bin" sim "$dir/age.json" >"$dir/age.fluid.json"
# the same on new connections: the message's handshake and data each wait
# out the standing queue DCTCP's slow-started long flows left
sed 's/"persistent"/"new"/' "$dir/mouse.json" >"$dir/mnew.json"
"$bin" sim "$dir/mnew.json" --backend ns3 >"$dir/mnew.ns3.json"
"$bin" sim "$dir/mnew.json" --rate-control dctcp >"$dir/mnew.dctcp.json"
"$bin" sim "$dir/mnew.json" >"$dir/mnew.tcp.json"

# The program refuses 'sent' dependencies and a path that misses its hosts (exit 2).
ns3=$(dirname "$bin")/fabricsim-ns3

# rdma both ways across a 4:1 leaf-spine (8 x 1 MiB each way over a 200 Gb/s
# spine link): the CNPs cross a port RED marks at, and are marked, not
# dropped (the program run --verbose, which lists each queue's drops)
python3 - "$dir/bidi.json" <<'PY'
import json, sys
fl = []
for i in range(8):
    fl.append({"id": "a%d" % i, "src": i, "dst": 8 + i, "bytes": 1048576})
    fl.append({"id": "b%d" % i, "src": 8 + i, "dst": i, "bytes": 1048576})
json.dump({"topology": {"type": "leafspine", "leaves": 2, "spines": 1, "hosts_per_leaf": 8,
                        "host_gbps": 100, "fabric_gbps": 200, "latency_ns": 1000},
           "routing": {"mode": "ecmp", "seed": 1}, "transport": "rdma", "flows": fl},
          open(sys.argv[1], "w"))
PY
printf '#!/bin/sh\nexec "%s" "$@" --verbose\n' "$(cd "$(dirname "$ns3")" && pwd)/$(basename "$ns3")" \
  >"$dir/ns3-verbose"
chmod +x "$dir/ns3-verbose"
FABRICSIM_NS3="$dir/ns3-verbose" "$bin" sim "$dir/bidi.json" --backend ns3 >"$dir/bidi.ns3.json" \
  2>"$dir/bidi.err"
printf 'fabricsim-ns3 1\nnodes 3\nnode 0 host\nnode 1 host\nnode 2 switch\n%s\n%s\n%s\n%s\n%s\n%s\nend\n' \
  'link 0 0 2 100000000000 1000 1' 'link 1 2 0 100000000000 1000 0' \
  'link 2 1 2 100000000000 1000 3' 'link 3 2 1 100000000000 1000 2' \
  'flow 0 0 1 1000 0 2 0 2 1 0 3' 'flow 1 1 0 1000 0 2 1 2 0 2 1' >"$dir/ok.txt"
sed 's/^end$/dep 0 1 sent\nend/' "$dir/ok.txt" >"$dir/sent.txt"
sed 's/^flow 1 1 0 1000 0 2 1 2 0 2 1$/flow 1 1 0 1000 0 2 1 2 0 2 3/' "$dir/ok.txt" >"$dir/offpath.txt"
# 2 MiB from host 0 and from host 1 to host 2 over RoCE, one switch: the
# marks need a queue beyond Kmin (400 KB), which this incast builds
printf 'fabricsim-ns3 1\ntransport rdma 4096 62\nnodes 4\nnode 0 host\nnode 1 host\nnode 2 host\nnode 3 switch\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\nend\n' \
  'link 0 0 3 100000000000 1000 1' 'link 1 3 0 100000000000 1000 0' \
  'link 2 1 3 100000000000 1000 3' 'link 3 3 1 100000000000 1000 2' \
  'link 4 2 3 100000000000 1000 5' 'link 5 3 2 100000000000 1000 4' \
  'flow 0 0 2 2097152 0 2 0 3 2 0 5' 'flow 1 1 2 2097152 0 2 1 3 2 2 5' >"$dir/roce2.txt"
sed 's/^transport rdma 4096 62$/transport rdma 4096 20/' "$dir/roce2.txt" >"$dir/roce-hdr.txt"
# the same incast under DCQCN's paper settings (a 'dcqcn' line), and a bad one
sed 's/^transport rdma 4096 62$/transport rdma 4096 62\ndcqcn 5 200 0.01 0.00390625 55 55 55 5 20 200 1000/' \
  "$dir/roce2.txt" >"$dir/roce-paper.txt"
sed 's/^transport rdma 4096 62$/transport rdma 4096 62\ndcqcn 500 200 0.01 0.00390625 55 55 55 5 20 200 1000/' \
  "$dir/roce2.txt" >"$dir/roce-baddq.txt"
st=0
"$ns3" --in="$dir/roce2.txt" --out="$dir/roce2.out" --verbose 2>"$dir/roce2.err" || st=$?
echo "$st" >"$dir/roce2.status"
sed 's/^nodes 3$/tcp 8960 41 10 65\nnodes 3/' "$dir/ok.txt" >"$dir/tcp-hdr.txt"
for c in ok sent offpath roce-hdr roce-paper roce-baddq tcp-hdr; do
  st=0
  "$ns3" --in="$dir/$c.txt" --out="$dir/$c.out" 2>"$dir/$c.err" || st=$?
  echo "$st" >"$dir/$c.status"
done

python3 - "$dir" <<'EOF'
import json
import math
import sys

d = sys.argv[1]
passed = failed = 0


def load(name):
    with open("%s/%s.json" % (d, name)) as f:
        return json.load(f)


def item(run, iid):
    for x in run["flows"] + run["tasks"]:
        if x["id"] == iid:
            return x
    raise KeyError(iid)


def check(name, ok, detail):
    global passed, failed
    print("%s %s: %s" % ("ok  " if ok else "FAIL", name, detail))
    if ok:
        passed += 1
    else:
        failed += 1


# Closed form of one flow: handshake (SYN, SYN-ACK: 2 hops each way), then
# every segment's bytes plus 42 header bytes (IP 20, TCP 20, PPP 2) at the
# rate on the first link, 2 latencies, and the last packet again on the
# second link (store and forward).
one = load("one.ns3")
rate, lat, seg, hdr, size = 100e9, 1000.0, 8960, 42, 1048576
pkts = math.ceil(size / seg)
last = size - (pkts - 1) * seg + hdr
want = 2 * (2 * lat) + 8 * (size + pkts * hdr) / rate * 1e9 + 2 * lat + 8 * last / rate * 1e9
got = item(one, "a")["fct_ns"]
check("one 1 MiB flow over 2 hops vs closed form", abs(got - want) / want < 0.02,
      "ns-3 %.0f ns, closed form %.0f ns (%+.2f%%)" % (got, want, (got - want) / want * 100))
z, t, b = item(one, "z"), item(one, "t"), item(one, "b")
check("0-byte flow takes its path latency, task its duration",
      z["start_ns"] == 500 and z["finish_ns"] == 2500 and t["start_ns"] == 2500
      and t["finish_ns"] == 9500 and b["start_ns"] == 9500,
      "z %g..%g, t %g..%g, b from %g" % (z["start_ns"], z["finish_ns"], t["start_ns"],
                                       t["finish_ns"], b["start_ns"]))
same, diff = load("pin-same.ns3")["makespan_ns"], load("pin-different.ns3")["makespan_ns"]
alone = 8 * 4194304 / 100e9 * 1e9
check("pinned paths: two flows on one spine take ~2x, on two spines ~1x",
      1.8 < same / alone < 2.3 and 0.95 < diff / alone < 1.15,
      "one spine %.0f ns, two %.0f ns, a flow alone ~%.0f ns" % (same, diff, alone))
for c in ("pin-same", "pin-different"):
    paths = [f["path"] for f in load(c + ".ns3")["flows"]]
    check("%s: ns-3 reports the given paths" % c,
          paths == [f["path"] for f in load(c + ".fluid")["flows"]], str(paths))
ns3, fluid = load("incast16.ns3")["makespan_ns"], load("incast16.fluid")["makespan_ns"]
check("incast16 makespan within 5% of the fluid one", abs(ns3 - fluid) / fluid < 0.05,
      "ns-3 %.0f ns, fluid %.0f ns (%+.2f%%)" % (ns3, fluid, (ns3 - fluid) / fluid * 100))
a, b = load("ring-64k.ns3"), load("ring-64k.again")
check("deterministic: two ns-3 runs give the same output", a == b,
      "makespan %.0f and %.0f ns" % (a["makespan_ns"], b["makespan_ns"]))
def status(c):
    return int(open("%s/%s.status" % (d, c)).read()), open("%s/%s.err" % (d, c)).read().strip()


st, msg = status("ok")
check("a hand-written exchange file runs", st == 0, "exit %d %s" % (st, msg))
st, msg = status("sent")
check("'sent' dependencies are refused (exit 2)", st == 2 and "'sent' dependencies" in msg,
      "exit %d: %s" % (st, msg))
st, msg = status("offpath")
check("a path whose links do not join its hosts is refused (exit 2)",
      st == 2 and "flow 1: path does not join its hosts" in msg, "exit %d: %s" % (st, msg))

# rdma: every packet 4096 + 62 bytes at line rate, 4 latencies, and the last
# packet once more on each of the 3 later hops, a full packet's time there
# even when it is short (it leaves each switch right behind the full one
# before it): exact, since ns-3 runs in picoseconds.
for extra in (0, 1000):
    size = 1048576 + extra
    pkts = math.ceil(size / 4096)
    want = 8 * (size + pkts * 62) / rate * 1e9 + 4 * lat + 3 * 8 * 4158 / rate * 1e9
    got = load("roce-%d.ns3" % extra)["makespan_ns"]
    model = load("roce-%d.fluid" % extra)["makespan_ns"]
    pk = load("roce-%d.packet" % extra)["makespan_ns"]
    check("rdma: a lone %d-byte message across a leaf-spine vs closed form" % size,
          abs(got - want) < 2 and abs(model - want) < 2 and abs(pk - want) < 2,
          "ns-3 %.0f ns, --transport rdma %.2f ns, --backend packet %.2f ns, closed form %.2f ns"
          % (got, model, pk, want))
ns3, fluid = load("roce-incast16.ns3")["makespan_ns"], load("roce-incast16.fluid")["makespan_ns"]
check("rdma: incast16 makespan within 5% of --transport rdma", abs(ns3 - fluid) / fluid < 0.05,
      "ns-3 %.0f ns, model %.0f ns (%+.2f%%)" % (ns3, fluid, (ns3 - fluid) / fluid * 100))
check("rdma: deterministic", load("roce-incast16.ns3") == load("roce-incast16.again"),
      "two runs of incast16")
st, msg = status("roce2")
check("rdma: an incast of 2 x 2 MiB marks ECN at the switch port (DCQCN acts), drops nothing",
      st == 0 and "link 5 (3 -> 2): 0 dropped" in msg and "ECN-marked" in msg,
      "exit %d: %s" % (st, msg))
# A warm connection: the closed form above without the handshake, in the
# packets of --transport tcp's defaults (8948-byte segments, 54 header
# bytes with timestamps), which its 'tcp' line gives ns-3.
got = item(load("one.warm"), "a")["fct_ns"]
size, seg, hdr = 1048576, 8948, 54
pkts = math.ceil(size / seg)
last = size - (pkts - 1) * seg + hdr
want_warm = 8 * (size + pkts * hdr) / rate * 1e9 + 2 * lat + 8 * last / rate * 1e9
check("tcp, persistent: one 1 MiB flow vs closed form without the handshake",
      abs(got - want_warm) / want_warm < 0.02,
      "ns-3 %.0f ns, closed form %.0f ns (%+.2f%%)" % (got, want_warm,
                                                      (got - want_warm) / want_warm * 100))
ns3, fluid = load("pp.warm.ns3")["makespan_ns"], load("pp.warm.fluid")["makespan_ns"]
check("tcp, persistent: 64 KiB ping-pong within 1% of --transport tcp --connections persistent",
      abs(ns3 - fluid) / fluid < 0.01,
      "ns-3 %.0f ns, model %.0f ns (%+.2f%%)" % (ns3, fluid, (ns3 - fluid) / fluid * 100))
with open("%s/bidi.err" % d) as f:
    err = f.readlines()
queues = [x for x in err if "ECN-marked" in x]
check("rdma: CNPs across a port RED marks at are marked, not dropped",
      queues and all(": 0 dropped," in x for x in queues) and
      not any("warning" in x for x in err),
      "%d queues marked: %s" % (len(queues), "; ".join(x.strip() for x in queues[:2])))
ref = load("roce-a2a.ns3")
fct = {x["id"]: x["fct_ns"] for x in ref["flows"]}
for v in ("packet", "dcqcn"):
    run = load("roce-a2a." + v)
    mk = (run["makespan_ns"] - ref["makespan_ns"]) / ref["makespan_ns"]
    per = sum(abs(x["fct_ns"] - fct[x["id"]]) / fct[x["id"]] for x in run["flows"]) / len(fct)
    check("rdma: a 64 KiB all-to-all in one order, %s within 3%% makespan and 5%% mean per-flow "
          "of ns-3" % ("the packet backend" if v == "packet" else
                       "--rate-control dcqcn (its messages as packets)"),
          abs(mk) < 0.03 and per < 0.05,
          "ns-3 %.0f ns, %s %.0f ns (%+.2f%%), per flow %.2f%%" %
          (ref["makespan_ns"], v, run["makespan_ns"], 100 * mk, 100 * per))
ns3, fluid = load("roce-perm.ns3")["makespan_ns"], load("roce-perm.dcqcn")["makespan_ns"]
check("rdma: a permutation whose flows DCQCN cuts, --rate-control dcqcn within 5% of ns-3",
      abs(ns3 - fluid) / ns3 < 0.05,
      "ns-3 %.0f ns, model %.0f ns (%+.2f%%)" % (ns3, fluid, (fluid - ns3) / ns3 * 100))


def makespan_txt(name):
    with open("%s/%s.out" % (d, name)) as f:
        return [int(x.split()[1]) for x in f if x.startswith("makespan")][0]


st, msg = status("roce-paper")
check("rdma: a 'dcqcn' line sets the settings (another makespan than the defaults')",
      st == 0 and makespan_txt("roce-paper") != makespan_txt("roce2"),
      "exit %d: %s" % (st, msg))
st, msg = status("roce-baddq")
check("rdma: a 'dcqcn' line out of range is refused (exit 2)",
      st == 2 and "dcqcn: a value is out of range" in msg, "exit %d: %s" % (st, msg))
st, msg = status("roce-hdr")
check("rdma: a header too small for PPP, IPv4 and UDP is refused (exit 2)",
      st == 2 and "HEADER >= 30" in msg, "exit %d: %s" % (st, msg))
ns3 = item(load("mouse.ns3"), "m")["fct_ns"]
dctcp, ideal = item(load("mouse.dctcp"), "m")["fct_ns"], item(load("mouse.fluid"), "m")["fct_ns"]
check("tcp, persistent: a short message behind DCTCP's standing queue, --rate-control dctcp "
      "and the fluid tcp model (--packet-bytes 0; its queue climbed to DCTCP's mean) within 5% "
      "of ns-3",
      abs(dctcp - ns3) / ns3 < 0.05 and abs(ideal - ns3) / ns3 < 0.05,
      "ns-3 %.0f ns, dctcp %.0f ns (%+.2f%%), tcp %.0f ns (%+.2f%%)" %
      (ns3, dctcp, (dctcp - ns3) / ns3 * 100, ideal, (ideal - ns3) / ns3 * 100))
pk = item(load("mouse.tcp"), "m")["fct_ns"]
check("tcp, persistent: the same message as packets beside the fluid long flows (the default) "
      "within 10% of ns-3 (its packets wait the model's mean queue, not the sawtooth's phase)",
      abs(pk - ns3) / ns3 < 0.10, "ns-3 %.0f ns, tcp %.0f ns (%+.2f%%)" % (ns3, pk, (pk - ns3) / ns3 * 100))
ns3 = item(load("mnew.ns3"), "m")["fct_ns"]
dctcp, tcp = item(load("mnew.dctcp"), "m")["fct_ns"], item(load("mnew.tcp"), "m")["fct_ns"]
check("tcp, new connections: the same message, --rate-control dctcp and the tcp model (SYN and "
      "data each wait DCTCP's mean queue) within 10% of ns-3",
      abs(dctcp - ns3) / ns3 < 0.10 and abs(tcp - ns3) / ns3 < 0.10,
      "ns-3 %.0f ns, dctcp %.0f ns (%+.2f%%), tcp %.0f ns (%+.2f%%)" %
      (ns3, dctcp, (dctcp - ns3) / ns3 * 100, tcp, (tcp - ns3) / ns3 * 100))
ns3 = item(load("age.ns3"), "a")["fct_ns"]
dctcp, ideal = item(load("age.dctcp"), "a")["fct_ns"], item(load("age.fluid"), "a")["fct_ns"]
check("tcp, persistent: the older of two flows into one port, --rate-control dctcp within 2% "
      "of ns-3 (max-min shares evenly: over 10% later)",
      abs(dctcp - ns3) / ns3 < 0.02 and ideal > ns3 * 1.1,
      "ns-3 %.0f ns, dctcp %.0f ns (%+.2f%%), max-min %.0f ns" % (ns3, dctcp,
                                                                 (dctcp - ns3) / ns3 * 100, ideal))
st, msg = status("tcp-hdr")
check("tcp: a header other than 42 or 54 bytes is refused (exit 2)",
      st == 2 and "HEADER 42 or 54" in msg, "exit %d: %s" % (st, msg))
ns3, fluid = load("iw4.ns3")["makespan_ns"], load("iw4.fluid")["makespan_ns"]
check("tcp: a 1 MiB message, initial window 4, timestamps, within 0.5% of --transport tcp",
      abs(ns3 - fluid) / ns3 < 0.005,
      "ns-3 %.0f ns, model %.0f ns (%+.2f%%)" % (ns3, fluid, (fluid - ns3) / ns3 * 100))
ns10 = load("iw10.ns3")["makespan_ns"]
check("tcp: the scenario's initial window reaches ns-3 (4 segments slower than 10)",
      ns3 > ns10 * 1.02, "ns-3 %.0f ns with 4, %.0f ns with 10" % (ns3, ns10))
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
EOF
