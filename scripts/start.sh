#!/usr/bin/env bash
# Builds oxydllm and starts the server on 127.0.0.1:11313 (extra args go to `oxydllm start`).
# Until the server lands (the serving issue), it prints `oxydllm --help` instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
if build/bin/oxydllm start --help >/dev/null 2>&1 && [ -n "${OXYDLLM_HAVE_SERVER:-}" ]; then
  exec build/bin/oxydllm start "$@"
fi
exec build/bin/oxydllm --help
