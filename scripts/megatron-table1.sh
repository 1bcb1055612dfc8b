#!/bin/sh
# Reproduces Narayanan et al. (SC'21) Table 1 and their GPT-3 175B statement
# with fabricsim: runs `fabricsim train` on every job of
# examples/megatron-table1/ and prints published vs simulated TFLOP/s per GPU
# (hardware FLOPs with recomputation, their eq. (3)) with the relative error,
# as a Markdown table (docs/validation.md). Usage: scripts/megatron-table1.sh [FABRICSIM]
set -eu
bin=${1:-build/fabricsim}
dir=examples/megatron-table1
echo "| model | GPUs | tp x pp x dp | published TFLOP/s (% of 312) | simulated TFLOP/s (HFU) | error |"
echo "|---|---:|---|---:|---:|---:|"
# file, published TFLOP/s per GPU, published % of peak
while read -r name pub pct; do
  f=$dir/gpt-$name.json
  out=$("$bin" train "$f" --no-compare --format json)
  sim=$(printf '%s' "$out" | sed 's/.*"hw_tflops_per_gpu":\([0-9.e+-]*\).*/\1/')
  hfu=$(printf '%s' "$out" | sed 's/.*"hfu":\([0-9.e+-]*\).*/\1/')
  par=$(sed -n 's/.*"\(tp\|pp\|dp\)": \([0-9]*\).*/\2/p' "$f" | tr '\n' ' ')
  awk -v n="$name" -v p="$pub" -v pc="$pct" -v s="$sim" -v u="$hfu" -v par="$par" 'BEGIN {
    split(par, a, " "); g = a[1] * a[2] * a[3];
    printf "| %s | %d | %d x %d x %d | %s (%s%%) | %.1f (%.1f%%) | %+.1f%% |\n",
           n, g, a[1], a[2], a[3], p, pc, s, 100 * u, 100 * (s - p) / p }'
done <<ROWS
1.7b 137 44
3.6b 138 44
7.5b 142 46
18.4b 135 43
39.1b 138 44
76.1b 140 45
145.6b 148 47
310.1b 155 50
529.6b 163 52
1008b 163 52
175b-1024 140 45
ROWS
