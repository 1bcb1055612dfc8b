#!/bin/sh
# Reproduces Narayanan et al. (SC'21) Table 1 and their GPT-3 175B statement
# with fabricsim: runs `fabricsim train` on every job of
# examples/megatron-table1/ and prints published vs simulated TFLOP/s per GPU
# (hardware FLOPs with recomputation, their eq. (3)) with the relative error,
# as a Markdown table (docs/validation.md), then where the simulated time
# goes on the reported device. Usage: scripts/megatron-table1.sh [FABRICSIM]
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
echo
echo "| model | iteration | compute | bubble + imbalance | exposed TP | exposed DP | exposed PP | compute rate, TFLOP/s |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for name in 1.7b 3.6b 7.5b 18.4b 39.1b 76.1b 145.6b 310.1b 529.6b 1008b 175b-1024; do
  out=$("$bin" train "$dir/gpt-$name.json" --no-compare --format json)
  field() { printf '%s' "$out" | sed "s/.*\"$1\":\([0-9.e+-]*\).*/\1/"; }
  awk -v n="$name" -v it="$(field iteration_ns)" -v c="$(field compute_ns)" \
      -v b="$(field bubble_ns)" -v tp="$(field exposed_tp_ns)" -v dp="$(field exposed_dp_ns)" \
      -v pp="$(field exposed_pp_ns)" -v hw="$(field hw_tflops_per_gpu)" 'BEGIN {
    printf "| %s | %.2f s | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f |\n", n, it / 1e9,
           100 * c / it, 100 * b / it, 100 * tp / it, 100 * dp / it, 100 * pp / it, hw * it / c }'
done
