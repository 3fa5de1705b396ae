#!/bin/bash
# The engine's own bound on bench/serving_bench.py's "C=16 ÷ C=1" ratio, from model_decode_bench
# step timings (no server, no HTTP, no client): with its ~52-token prompts and 32 output tokens,
#   a C=1 request = P52 + 31·D1           (one prefill, 31 one-row decode steps)
#   a C=16 wave   = 16·P52 + 31·D16       (sixteen prefills, 31 sixteen-row decode steps)
#   bound         = 16 · request / wave
# P52: a 52-token prefill; D1, D16: a decode step of 1 and of 16 rows (logits for every row).
# Each prompt is prefilled alone, as the server's first steps of a wave batch them only partly.
# Usage (repository root, Release build): bench/serving_bound.sh MODEL.gguf... [--threads N] [--rounds R]
set -euo pipefail
threads=2 rounds=3 models=()
while (($#)); do
  case "$1" in
    --threads) threads="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    *) models+=("$1"); shift ;;
  esac
done
((${#models[@]})) || { echo "usage: $0 MODEL.gguf... [--threads N] [--rounds R]" >&2; exit 2; }
ids=$(seq 100 200 | tr '\n' ' ')
for m in "${models[@]}"; do
  for ((i = 0; i < rounds; ++i)); do
    printf 'prefill 52 %s\nprefill 52 %s\ndecode 31 %s\nbatch 16 31 %s\n' "$ids" "$ids" "$ids" "$ids" |
      build/bin/model_decode_bench "$m" --threads "$threads" 2>/dev/null | grep -v '^ready' |
      awk -v m="$(basename "$m")" '/^prefill/ {p = $3} /^decode/ {d = $3 / $2} /^batch/ {b = $4 / $3}
        END {req = p + 31 * d; wave = 16 * p + 31 * b
             printf "%s: P52 %.1f ms, D1 %.1f ms, D16 %.1f ms -> C=16/C=1 bound %.2f\n", m, p * 1e3, d * 1e3, b * 1e3, 16 * req / wave}'
  done
done
