#!/usr/bin/env bash
# Builds oxydllm and runs the whole test suite (every ctest label). GPU tests skip visibly
# where no GPU is present. This is the README's second quick-start command and all of .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 900
