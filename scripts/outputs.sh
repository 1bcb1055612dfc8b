#!/bin/sh
# scripts/outputs.sh BIN DIR [full]: runs fabricsim BIN over every bundled
# example, every validation case, every transport variant, every subcommand
# and the bad inputs, and keeps what each run gave in DIR: stdout, stderr,
# the exit status and every file it wrote (reports, traces, exports). Two
# builds that give the same DIR (diff -r) have byte-identical outputs:
# scripts/same-outputs.sh compares a revision with the working tree.
#
# Lines that measure this machine, not the model (wall time, the progress
# line, sweep's wall_s column), are dropped. `full` adds the two runs of a
# minute or more each (gpt3-175b-8k, llama3-405b-128k).
set -eu
BIN=$(realpath "$1")
DIR=$2
FULL=${3:-}
cd "$(dirname "$0")/.."
rm -rf "$DIR"
mkdir -p "$DIR"
DIR=$(realpath "$DIR")
n=0
CR=$(printf '\r')
# what this machine measured: run times, peak memory
MACHINE='s/[0-9.]* s, peak RSS [0-9.]* [KMG]iB/T s, peak RSS M/g
s/optimiser [0-9.e-]* ms max/optimiser T ms max/g
s/"wall_s": *[0-9.e+-]*/"wall_s":T/g
s/"peak_rss_bytes": *[0-9]*/"peak_rss_bytes":M/g'

# run NAME ARGS...: ARGS may name @/FILE, a file in the run's own folder.
# (sh has no locals: its variables are _-prefixed, apart from the callers')
run() {
  _d="$DIR/$1"
  shift
  mkdir -p "$_d"
  _args=""
  for _a in "$@"; do
    _a=$(printf '%s' "$_a" | sed "s|@/|$_d/|g")
    _args="$_args '$_a'"
  done
  set +e
  eval "\"$BIN\" $_args" >"$_d/stdout" 2>"$_d/stderr.raw"
  echo $? >"$_d/status"
  set -e
  # machine-dependent lines: wall time, progress, sweep timings
  grep -v -e 'wall time' -e "$CR" -e '^fabricsim [a-z ]*: [0-9.]* s, simulated ' \
    -e '^fabricsim sweep: [0-9]*/[0-9]* points' "$_d/stderr.raw" \
    | sed "s|$_d/||g" >"$_d/stderr" || true
  rm -f "$_d/stderr.raw"
  for _out in "$_d"/*; do
    [ -f "$_out" ] || continue
    case $_out in
      *.et | */status) ;;
      *) sed -i -e '/wall time/d' -e "s|$DIR/||g" -e "$MACHINE" "$_out" ;;
    esac
    # (a sweep's CSV: the wall_s column, found by its header, whatever
    # the axes and figures around it)
    case $_out in *.csv)
      awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "wall_s") c = i; print; next }
                        { if (c) $c = "WALL"; print }' "$_out" >"$_out.w" && mv "$_out.w" "$_out" ;;
    esac
  done
  n=$((n + 1))
}

ex=examples
# ---- sim: scenarios under every transport and backend ----
for f in $ex/demo.json $ex/failure-demo.json $ex/issue-example.json validation/*.json \
         tests/data/torus-dor.json; do
  b=$(basename "$f" .json)
  run "sim-$b" sim "$f" --summary
  run "sim-$b-json" sim "$f" --out @/out.json
  run "sim-$b-tcp" sim "$f" --transport tcp --summary
  run "sim-$b-tcp-persistent" sim "$f" --transport tcp --connections persistent --summary
  run "sim-$b-dctcp" sim "$f" --transport tcp --rate-control dctcp --summary
  run "sim-$b-rdma" sim "$f" --transport rdma --summary
  run "sim-$b-dcqcn" sim "$f" --transport rdma --rate-control dcqcn --out @/out.json
  run "sim-$b-tcp-pkt" sim "$f" --transport tcp --packet-bytes 64K --summary
  run "sim-$b-dcqcn-pkt" sim "$f" --transport rdma --rate-control dcqcn --packet-bytes 64K --summary
  run "sim-$b-packet" sim "$f" --backend packet --transport tcp --summary
  run "sim-$b-packet-rdma" sim "$f" --backend packet --transport rdma --summary
done
for r in shortest ecmp spray; do run "sim-demo-$r" sim $ex/demo.json --routing $r --format csv; done
run sim-demo-optimized sim $ex/demo.json --routing optimized --summary
run sim-demo-seed sim $ex/demo.json --seed 7 --summary
run sim-demo-report sim $ex/demo.json --report @/r.html --trace @/t.json --out @/o.csv --format csv
run sim-failure-report sim $ex/failure-demo.json --report @/r.html
run sim-lotus-shuffle sim $ex/fabrics/sim-lotus-shuffle.json --summary
run topo-jupiter-te topo $ex/fabrics/jupiter-te.json
run topo-jupiter-te-job topo $ex/fabrics/gpt3-175b-jupiter.json --demand-from-job

# ---- optical fabrics against their papers (docs/model-optical-fabrics-validation.md) ----
val=$ex/fabrics/validation
for f in $val/*.json; do
  b=$(basename "$f" .json)
  # (the three of ~30-60 s each only with `full`)
  case $b in *-dp-railopt | sipml-gpt3-175b-ocs-ring | sipml-gpt3-175b-ring) [ "$FULL" = full ] || continue ;; esac
  run "train-val-$b" train "$f"
done
for f in $ex/fabrics/gpt3-175b-jupiter.json $val/jupiter-gpt3-175b-clos.json \
         $ex/fabrics/moe-2048-jupiter.json $val/jupiter-moe-2048-clos.json; do
  run "topo-val-$(basename "$f" .json)" topo "$f"
done
run topo-val-moe-2048-jupiter-te topo $ex/fabrics/moe-2048-jupiter.json --demand-from-job
run topo-val-sirius-1024 topo sirius:hosts=1024,port_gbps=200
run topo-val-fattree-16-200 topo fattree:k=16,gbps=200
run train-val-gpt3-175b-jupiter-te train $ex/fabrics/gpt3-175b-jupiter.json --demand-from-job
run train-val-moe-2048-jupiter-te train $ex/fabrics/moe-2048-jupiter.json --demand-from-job
i=0
for t in 'lotus:g=16,a=8,p=8|lotus' 'lotus:g=16,a=8,p=8,awgr_gbps=100|lotus' \
         'dragonfly:a=8,p=8,h=2,g=16|minimal' 'torus:dims=16x8x8,host_gbps=100|dor'; do
  i=$((i + 1))
  s=${t%|*}
  m=${t#*|}
  vn="coll-val-lotus-$i-${s%%:*}"
  run "$vn-ring" coll --op allreduce --algo ring --ranks 1024 --size 64M --topo "$s" --routing "$m"
  run "$vn-rhd" coll --op allreduce --algo rhd --ranks 1024 --size 64M --topo "$s" --routing "$m"
  run "$vn-ps16" coll --op allreduce --algo ps --ps-servers 16 --ranks 1024 --size 64M --topo "$s" --routing "$m"
  run "$vn-ps64" coll --op allreduce --algo ps --ps-servers 64 --ranks 1024 --size 64M --topo "$s" --routing "$m"
  run "$vn-a2a" coll --op alltoall --ranks 1024 --size 64M --topo "$s" --routing "$m"
done
for t in jupiter:blocks=8,hosts_per_block=128,host_gbps=200 \
         leafspine:leaves=8,spines=16,links_per_spine=8,hosts_per_leaf=128,host_gbps=200,fabric_gbps=200; do
  run "coll-val-${t%%:*}-ring" coll --op allreduce --algo ring --ranks 1024 --size 64M --topo "$t" --routing spray
  # (the leaf-spine's all-to-all takes ~30 s)
  [ "${t%%:*}" = jupiter ] || [ "$FULL" = full ] || continue
  run "coll-val-${t%%:*}-a2a" coll --op alltoall --ranks 1024 --size 64M --topo "$t" --routing spray
done

# ---- train: every job, the transports, the outputs ----
for f in $ex/gpt-13b*.json $ex/gpt3-175b.json $ex/gpt3-175b-railopt.json $ex/gpt3-175b-8k-railopt.json \
         $ex/llama3-405b-16k.json $ex/moe-railonly.json $ex/moe-railopt.json $ex/tenant-*.json \
         $ex/topoopt-moe.json $ex/megatron-table1/*.json $ex/megatron-sp/*.json \
         tests/data/train-railonly.json $ex/fabrics/gpt3-175b-*.json; do
  b=$(basename "$f" .json)
  case $f in */megatron-*) b="$(basename "$(dirname "$f")")-$b" ;; esac
  run "train-$b" train "$f"
  run "train-$b-json" train "$f" --format json
done
if [ "$FULL" = full ]; then
  run train-gpt3-175b-8k train $ex/gpt3-175b-8k.json
  run train-llama3-405b-128k train $ex/llama3-405b-128k.json
fi
for f in $ex/gpt-13b.json $ex/gpt-13b-optimized.json $ex/tenant-a.json; do
  b=$(basename "$f" .json)
  run "train-$b-tcp" train "$f" --transport tcp
  run "train-$b-tcp-new" train "$f" --transport tcp --connections new
  run "train-$b-dctcp" train "$f" --transport tcp --rate-control dctcp
  run "train-$b-rdma" train "$f" --transport rdma
  run "train-$b-dcqcn" train "$f" --transport rdma --rate-control dcqcn
  run "train-$b-dcqcn-pkt" train "$f" --transport rdma --rate-control dcqcn --packet-bytes 64K
  run "train-$b-isolated" train "$f" --comm isolated
  run "train-$b-free" train "$f" --free-comm
  run "train-$b-nosym" train "$f" --no-symmetry
  run "train-$b-tune-sim" train "$f" --tune sim
  run "train-$b-iter3" train "$f" --iterations 3 --buckets 2
done
run train-moe-dcqcn train $ex/moe-railonly.json --transport rdma --rate-control dcqcn
run train-two-tenants train $ex/tenant-a.json $ex/tenant-b.json
run train-two-tenants-json train $ex/tenant-a.json $ex/tenant-b.json --format json
run train-two-tenants-outputs train $ex/tenant-a.json $ex/tenant-b.json --report @/r.html \
  --trace @/t.json
run train-gpt-13b-outputs train $ex/gpt-13b.json --report @/r.html --trace @/t.json --export-chakra @/ck
run train-gpt-13b-ocs-report train $ex/gpt-13b-ocs.json --report @/r.html
run train-moe-report train $ex/moe-railonly.json --report @/r.html
run chakra-gpt-13b chakra "$DIR/train-gpt-13b-outputs/ck/trace" \
  --topo leafspine:leaves=8,spines=8,hosts_per_leaf=8,host_gbps=400,fabric_gbps=400
for f in tests/data/chakra/*.et; do
  case $f in *.0.et) ;; *) continue ;; esac
  b=$(basename "$f" .0.et)
  run "chakra-$b" chakra "${f%.0.et}" --topo star:hosts=16
done

# ---- coll: every operation and algorithm, the formats ----
for op in allreduce allgather reducescatter broadcast reduce alltoall sendrecv; do
  for algo in auto ring tree rd rhd binomial bruck pairwise direct hier inc; do
    run "coll-$op-$algo" coll --op $op --algo $algo --ranks 16 --topo fattree:k=4 --size 1K:16M
  done
done
run coll-nccl coll --op allreduce --ranks 64 --topo fattree:k=8 -b 8 -e 128M -f 2
run coll-json coll --op allreduce --ranks 32 --topo leafspine:leaves=4,spines=2,hosts_per_leaf=8 --format json
run coll-csv coll --op alltoall --algo pairwise --ranks 16 --topo star:hosts=16 --format csv
run coll-report coll --op allreduce --ranks 16 --topo fattree:k=4 --size 1K:1M --report @/r.html
run coll-tcp coll --op allreduce --ranks 16 --topo fattree:k=4 --size 64K:4M --transport tcp
run coll-dcqcn coll --op alltoall --ranks 16 --topo fattree:k=4 --size 64K:4M --transport rdma --rate-control dcqcn
run coll-tune-sim coll --op allreduce --ranks 16 --topo fattree:k=4 --tune sim --size 1K:16M
run coll-nccl-tests coll --op allgather --topo fattree:k=4 -g 16 -b 8 -e 16M -f 4 -d half -n 20 -w 5 --format nccl-tests
run coll-nccl-tests-all coll --op reduce --topo star:hosts=4 -g 4 -b 1K -e 1M -f 32 -d all -o all -r -1 -c 0 --format nccl-tests

# ---- topo: families, metrics, exports ----
for s in fattree:k=8,gbps=100 leafspine:leaves=8,spines=4,hosts_per_leaf=8,gpus_per_node=8 \
         leafspine:leaves=4,spines=2,hosts_per_leaf=8,host_gbps=400,fabric_gbps=400 \
         torus:dims=4x4x4 ring:n=8 star:hosts=16 dragonfly:a=4,p=2,h=2 awgr:hosts=16 \
         sirius:hosts=16 lotus:g=8,a=4,p=4 sipml-ocs:gpus=64,degree=4 \
         sipml-ring:gpus=64,reach=3 jupiter:blocks=4,hosts_per_block=8,gpus_per_node=4,scaleup=optical_io; do
  b=$(printf '%s' "$s" | tr ':,=' '___')
  run "topo-$b" topo "$s"
  run "topo-$b-json" topo "$s" --format json
  for e in dot graphml json; do run "topo-$b-$e" topo "$s" --export $e --out @/export.$e; done
done

# ---- route, ocs, wan, sweep ----
for f in $ex/jobs-4dp.json $ex/jobs-ring.json; do
  b=$(basename "$f" .json)
  run "route-$b" route --jobs "$f" --optimizer greedy,ecmp,spray,random \
    --topo leafspine:leaves=8,spines=8,hosts_per_leaf=8,host_gbps=400,fabric_gbps=400
done
run route-jobs-rail route --jobs $ex/jobs-rail.json --seeds 10 \
  --topo railopt:servers=16,servers_per_su=8,spines=4,gpus_per_node=8
run route-json route --jobs $ex/jobs-4dp.json --format json --report @/r.html \
  --topo leafspine:leaves=8,spines=8,hosts_per_leaf=8,host_gbps=400,fabric_gbps=400
for f in $ex/ocs-job.json $ex/ocs-matrix.json $ex/ocs-skewed.json; do
  b=$(basename "$f" .json)
  run "ocs-$b" ocs schedule --matrix "$f"
  run "ocs-$b-sweep" ocs schedule --matrix "$f" --sweep --report @/r.html
  run "ocs-$b-json" ocs schedule --matrix "$f" --format json --report @/r.html
done
run ocs-topo ocs topo $ex/topoopt-moe.json --degree 4 --export @/topo.json
run ocs-tpu ocs tpu --shape 8x8x16 --twisted
run ocs-tpu-json ocs tpu --shape 4x4x8 --format json
for f in $ex/wan-4dc.json $ex/wan-nsfnet-flex.json; do
  b=$(basename "$f" .json)
  run "wan-$b-provision" wan provision "$f"
  run "wan-$b-provision-json" wan provision "$f" --algo most-used --format json
done
run wan-train wan train $ex/wan-4dc.json --cut east-central --report @/r.html
run wan-provision-report wan provision $ex/wan-nsfnet-flex.json --report @/r.html
run wan-place wan place $ex/wan-nsfnet-job.json --aggregator
run wan-place-json wan place $ex/wan-nsfnet-job.json --sites 4 --format json
run sweep-demo sweep $ex/sweep-demo.json --db @/s.sqlite --csv @/s.csv
rm -f "$DIR/sweep-demo/s.sqlite"
run sweep-wan sweep $ex/sweep-wan.json --db @/s.sqlite --csv @/s.csv
rm -f "$DIR/sweep-wan/s.sqlite"
run sweep-wan-dynamic sweep $ex/sweep-wan-dynamic.json --db @/s.sqlite --csv @/s.csv
rm -f "$DIR/sweep-wan-dynamic/s.sqlite"
run sweep-ocs sweep $ex/sweep-ocs.json --db @/s.sqlite --csv @/s.csv
rm -f "$DIR/sweep-ocs/s.sqlite"
run wan-dynamic-report wan dynamic $ex/wan-erlang-link.json --loads 4:20:4 --requests 20000 \
  --report @/r.html
run wan-dynamic-het wan dynamic $ex/wan-nsfnet-sdm-het.json --loads 600:1300:700 --requests 10000
run wan-place-sdm wan place $ex/wan-nsfnet-osdl.json --sdm --policy xt-aware
run wan-dynamic-osdl wan dynamic $ex/wan-nsfnet-osdl.json --job slice --load 600 --requests 10000
run jobs-small jobs $ex/jobs-trace-small.json --scheduler all --report @/r.html
run jobs-small-json jobs $ex/jobs-trace-small.json --scheduler liu-ocs --format json
run jobs-yu2022 jobs $ex/jobs-yu2022.json --scheduler all
run jobs-yu2022-average jobs $ex/jobs-yu2022.json --scheduler all --contention average
run jobs-liu2020 jobs $ex/jobs-liu2020.json --scheduler all
run jobs-yu2022-json jobs $ex/jobs-yu2022.json --scheduler yu-bco --format json
run jobs-generate jobs --generate 50 --gpus 512 --seed 2 --load 4 -o @/t.json
run sweep-jobs sweep $ex/sweep-jobs.json --db @/s.sqlite --csv @/s.csv
rm -f "$DIR/sweep-jobs/s.sqlite"

# ---- bad inputs: the message and the status ----
for f in tests/data/bad/*.json; do run "bad-sim-$(basename "$f" .json)" sim "$f"; done
for f in tests/data/bad-jobs/*.json; do run "bad-train-$(basename "$f" .json)" train "$f"; done

echo "scripts/outputs.sh: $n runs of $BIN in $DIR"
