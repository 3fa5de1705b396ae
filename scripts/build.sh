#!/usr/bin/env bash
# Configures (once) and builds oxydllm into build/ (Release). Extra args go to cmake configure.
# OXYD_BUILD_TARGETS="a b" builds only those targets (start.sh: just the oxydllm binary).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
if [ ! -f build/CMakeCache.txt ]; then
  # ccache, where installed, makes rebuilds of an unchanged file (another clone, a clean build
  # directory) a cache hit; the build is the same without it.
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@"
fi
targets=()
for t in ${OXYD_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build build -j "$(nproc)" "${targets[@]}"
