#!/usr/bin/env bash
# Configures (once) and builds oxydllm into build/ (Release). Extra args go to cmake configure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
fi
cmake --build build -j "$(nproc)"
