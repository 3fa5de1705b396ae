#!/usr/bin/env bash
# Runs the CPU matmul benchmarks behind docs/performance.md: memory bandwidth, then batch-1
# matmul for the five priority formats three times (the machine is shared; compare medians and
# bests across runs), then the full table (every format, batch 1/16/64/512) once.
# Usage: bench/run_matmul_benches.sh [build_dir=build] > bench.txt   (build the *_bench targets first)
set -euo pipefail
B=${1:-build}
echo "== $(date -u) load: $(cut -d' ' -f1-3 /proc/loadavg)"
lscpu | grep -E 'Model name|^CPU\(s\)|Flags' | sed 's/\(Flags:.\{0,60\}\).*/\1 .../'
for i in 1 2 3; do "$B/bin/bandwidth_bench" 1 10; done
for i in 1 2 3; do
  echo "== batch-1 run $i, load: $(cut -d' ' -f1-3 /proc/loadavg)"
  "$B/bin/matmul_bench" --formats=Q4_0,Q8_0,Q4_K,Q6_K,BF16 --batches=1 --reps=10
done
echo "== full table, load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$B/bin/matmul_bench" --reps=3
echo "== done $(date -u) load: $(cut -d' ' -f1-3 /proc/loadavg)"
