#!/usr/bin/env bash
# Configures (once) and builds oxydllm into build/ (Release). Extra args go to cmake configure.
# OXYD_BUILD_TARGETS="a b" builds only those targets (start.sh: just the oxydllm binary).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
fi
targets=()
for t in ${OXYD_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build build -j "$(nproc)" "${targets[@]}"
