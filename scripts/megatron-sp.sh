#!/bin/sh
# Reproduces Korthikanti et al. (MLSys 2023, arXiv 2205.05198) Table 5 with
# fabricsim: the end-to-end iteration time of their four Table 3
# configurations (22B, 175B, 530B, 1T on 8 to 512 A100s, no data
# parallelism) with full recomputation and with sequence parallelism plus
# selective recomputation ("present work", whose MFU and HFU they give).
# Runs `fabricsim train` on examples/megatron-sp/ and prints published vs
# simulated as a Markdown table (docs/validation.md).
# Usage: scripts/megatron-sp.sh [FABRICSIM]
set -eu
bin=${1:-build/fabricsim}
dir=examples/megatron-sp
echo "| model | GPUs | recomputation | published iteration (s) | simulated (s) | error | published MFU / HFU | simulated MFU / HFU |"
echo "|---|---:|---|---:|---:|---:|---:|---:|"
# name, published full-recompute and present-work iteration times (s),
# present-work MFU and HFU (%)
while read -r name gpus full present mfu hfu; do
  for mode in full selective; do
    out=$("$bin" train "$dir/gpt-$name-$mode.json" --no-compare --format json)
    it=$(printf '%s' "$out" | sed 's/.*"iteration_ns":\([0-9.e+-]*\).*/\1/')
    smfu=$(printf '%s' "$out" | sed 's/.*"mfu":\([0-9.e+-]*\).*/\1/')
    shfu=$(printf '%s' "$out" | sed 's/.*"hfu":\([0-9.e+-]*\).*/\1/')
    awk -v n="$name" -v g="$gpus" -v m="$mode" -v f="$full" -v p="$present" -v pm="$mfu" \
        -v ph="$hfu" -v it="$it" -v sm="$smfu" -v sh="$shfu" 'BEGIN {
      pub = (m == "full") ? f : p;
      s = it / 1e9;
      pubu = (m == "full") ? "-" : sprintf("%s%% / %s%%", pm, ph);
      printf "| %s | %d | %s | %.2f | %.2f | %+.1f%% | %s | %.1f%% / %.1f%% |\n",
             n, g, (m == "full") ? "full" : "selective + SP", pub, s, 100 * (s - pub) / pub,
             pubu, 100 * sm, 100 * sh }'
  done
done <<ROWS
22b 8 1.42 1.10 41.5 43.7
175b 64 18.13 13.75 51.4 52.8
530b 280 49.05 37.83 56.0 57.0
1t 512 94.42 71.49 56.3 57.0
ROWS
