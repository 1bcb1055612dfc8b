#!/bin/sh
# make bench: a 1000-point sweep of small scenarios (examples/demo.json,
# 40 flow sizes x 25 seeds) with -j 1 and -j 2; prints the wall times.
set -eu
cd "$(dirname "$0")/.."
d=$(mktemp -d /tmp/fabricsim-sweepbench-XXXXXX)
trap 'rm -rf "$d"' EXIT
sizes=""; i=1
while [ $i -le 40 ]; do sizes="$sizes${sizes:+, }$((i * 262144))"; i=$((i + 1)); done
seeds=""; i=1
while [ $i -le 25 ]; do seeds="$seeds${seeds:+, }$i"; i=$((i + 1)); done
cat > "$d/s.json" <<EOS
{"base": "$(pwd)/examples/demo.json",
 "axes": {"flows[0].bytes": [$sizes], "routing.seed": [$seeds]}}
EOS
for j in 1 2; do
  t0=$(date +%s.%N)
  build/fabricsim sweep "$d/s.json" --db "$d/j$j.sqlite" -j $j 2>/dev/null
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" -v j="$j" 'BEGIN { printf "sweep of 1000 points, -j %s: %.2f s\n", j, b - a }'
done
