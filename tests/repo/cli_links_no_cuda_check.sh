#!/usr/bin/env bash
# A CUDA build's oxydllm needs no CUDA library to start: the CUDA runtime is linked statically and
# cuBLAS is loaded at its first use (src/backend/cuda/CMakeLists.txt, gemm.cu). Linked, libcublas
# and libcublasLt (~600 MB) cost every start ~0.1 s and ~200 MB of resident memory, and a binary
# copied to a machine without the toolkit would not start at all.
# Usage: cli_links_no_cuda_check.sh BINARY
set -euo pipefail
bin=$1
needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
bad=$(grep -E '^lib(cudart|cublas|cublasLt|nccl|cuda)\.' <<<"$needed" || true)
if [[ -n "$bad" ]]; then
  echo "$bin links CUDA libraries it should load at run time instead:"
  echo "$bad"
  exit 1
fi
echo "$bin: no CUDA library among its $(wc -l <<<"$needed") NEEDED entries"
