#!/usr/bin/env bash
# Builds and runs the CUDA tests (ctest label `gpu`) on a machine with an NVIDIA GPU, e.g. the
# lent H200, which has nvcc/CMake/ninja but none of the project's other packages and no network.
#
#   tools/gpu_check.sh prepare   # HERE, in the repo root: copies GoogleTest's source, the
#                                # nlohmann/json and xxHash headers and XGrammar's sdist (from
#                                # ~/.cache/oxydllm, where the top-level build keeps it) into
#                                # .gpu_deps/ (git-ignored, ~8 MB)
#   tools/gpu_check.sh           # THERE: builds tools/gpu_check/CMakeLists.txt for sm_90 only
#                                # (core, backend, backend/reference, backend/cpu, ops, loader,
#                                # model, sample, backend/cuda, tests/cuda, tests/cuda_model; for
#                                # the model bench kv, sched, runner, grammar, engine_core),
#                                # runs `ctest -L gpu` (kernels, then whole tiny models against
#                                # the CPU path), then bench/cuda/ops_bench.cc,
#                                # bench/cuda/matmul_bench.cc (gemv GB/s, decode attention,
#                                # prefill matmul) and bench/cuda/model_bench.cc (whole shaped
#                                # random models through the engine: batch-1 decode vs the copy-
#                                # bandwidth roofline, prefill 2k, concurrency 1/16/64); prints
#                                # device, build time, test results, the tables, and a closing
#                                # summary (the SUMMARY lines, with the targets met / missed)
#
# With the device tool: run(command="tools/gpu_check.sh", carry=[".gpu_deps"], timeout_s=540).
# Expect about 2-3 minutes of building on 16 cores (the CPU path is the whole-model oracle; XGrammar
# is built at configure time). Env: OXYD_CUDA_ARCH (default 90), BUILD_DIR (default build-gpu);
# OXYD_CHECK_BUDGET_S (default 450): the model bench starts no case past this many seconds from
# the start, so the script ends in about 8 minutes; OXYD_BENCH_MODELS (default "llama-1b:F16
# llama-1b:Q4_K qwen3-8b:Q4_K qwen3-8b:F16", run in that order, each file written, measured and
# deleted in turn under $BUILD_DIR/models; the 8B F16 file is 16 GB, its case the longest);
# OXYD_BENCH_8B_F16=0 leaves that case out. The log is also written to $OUT/gpu_check.log when
# $OUT is set.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
DEPS=$REPO/.gpu_deps

if [[ "${1:-}" == "prepare" ]]; then
  [[ -d /usr/src/googletest ]] || { echo "need /usr/src/googletest (Debian: apt-get install googletest)"; exit 1; }
  [[ -d /usr/include/nlohmann ]] || { echo "need /usr/include/nlohmann (apt-get install nlohmann-json3-dev)"; exit 1; }
  [[ -f /usr/include/xxhash.h ]] || { echo "need /usr/include/xxhash.h (apt-get install libxxhash-dev)"; exit 1; }
  xg=$(ls "${OXYD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/oxydllm}"/xgrammar-*.tar.gz 2>/dev/null | tail -1)
  [[ -n "$xg" ]] || { echo "need XGrammar's sdist in ~/.cache/oxydllm (configure the top-level build once)"; exit 1; }
  rm -rf "$DEPS" && mkdir -p "$DEPS/include"
  cp -r /usr/src/googletest "$DEPS/googletest"
  cp -r /usr/include/nlohmann "$DEPS/include/"
  cp /usr/include/xxhash.h "$DEPS/include/"
  cp "$xg" "$DEPS/"
  echo "prepared $DEPS ($(du -sh "$DEPS" | cut -f1)); carry it: carry=[\".gpu_deps\"]"
  exit 0
fi

if [[ -n "${OUT:-}" ]]; then exec > >(tee "$OUT/gpu_check.log") 2>&1; fi
export PATH=/usr/local/cuda/bin:$PATH
ARCH=${OXYD_CUDA_ARCH:-90}
BUILD=${BUILD_DIR:-$REPO/build-gpu}
echo "== device"
nvidia-smi -L || echo "nvidia-smi failed (no driver?)"
nvcc --version | tail -1
echo "== configure (sm_$ARCH)"
t0=$(date +%s)
mkdir -p "$BUILD"
cmake -S tools/gpu_check -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="$ARCH" -DCMAKE_CUDA_COMPILER="$(command -v nvcc)" \
  -DOXYD_GTEST_SRC="$DEPS/googletest" -DOXYD_JSON_INCLUDE="$DEPS/include" -DOXYD_XGRAMMAR_CACHE="$DEPS" \
  > "$BUILD/configure.log" 2>&1 || { cat "$BUILD/configure.log"; exit 1; }
grep -A3 'CMake Warning' "$BUILD/configure.log" || true
echo "configure took $(( $(date +%s) - t0 )) s"
model_bench=$(ninja -C "$BUILD" -t targets all 2>/dev/null | grep -q '^cuda_model_bench:' && echo cuda_model_bench || true)
echo "== build"
set +e
cmake --build "$BUILD" -j"$(nproc)" --target test_cuda test_cuda_model cuda_ops_bench cuda_matmul_bench \
  $model_bench > "$BUILD/build.log" 2>&1
build_rc=$?
set -e
grep -Ev '^\[[0-9]+/[0-9]+\] ' "$BUILD/build.log" || true  # warnings and errors only
[[ $build_rc -eq 0 ]] || { echo "build FAILED (rc $build_rc)"; exit 1; }
echo "build took $(( $(date +%s) - t0 )) s"
cd "$BUILD"
./test_cuda --gtest_filter=CudaDevice.Query 2>&1 | grep -E "^device|OK|FAILED" || true
echo "== ctest -L gpu"
set +e
ctest -L gpu --output-on-failure --timeout 300 -j4 -E '^Tiny/CudaModel'
rc_kernels=$?
echo "== whole models on the GPU vs the CPU path (tests/cuda_model)"
ctest -L gpu --output-on-failure --timeout 300 -j4 -R '^Tiny/CudaModel'
rc_models=$?
rc=$(( rc_kernels != 0 ? rc_kernels : rc_models ))
set -e
echo "== cuda_ops_bench (bandwidth of the simple ops vs device copy)"
timeout 120 ./cuda_ops_bench || echo "cuda_ops_bench FAILED or timed out"
echo "== cuda_matmul_bench (gemv, decode attention, prefill matmul)"
timeout 180 ./cuda_matmul_bench | tee matmul_bench.log || echo "cuda_matmul_bench FAILED or timed out"
echo "== cuda_model_bench (whole shaped random models through the engine)"
budget=${OXYD_CHECK_BUDGET_S:-450}
cases=${OXYD_BENCH_MODELS:-llama-1b:F16 llama-1b:Q4_K qwen3-8b:Q4_K qwen3-8b:F16}
[[ "${OXYD_BENCH_8B_F16:-1}" == 0 ]] && cases=${cases//qwen3-8b:F16/}
: > model_bench.log
set +e
for c in $cases; do
  [[ -n "$model_bench" ]] || { echo "SUMMARY model bench: not built (see the configure warning)" | tee -a model_bench.log; break; }
  left=$(( budget - ($(date +%s) - t0) ))
  if (( left < 45 )); then
    echo "SUMMARY model ${c%%:*} ${c##*:}: skipped (${left} s left of OXYD_CHECK_BUDGET_S=$budget)" | tee -a model_bench.log
    continue
  fi
  timeout $(( left < 200 ? left : 200 )) ./cuda_model_bench --shape "${c%%:*}" --type "${c##*:}" --dir "$BUILD/models" \
    2>&1 | tee -a model_bench.log
  bench_rc=${PIPESTATUS[0]}
  why=$( (( bench_rc == 124 )) && echo "timed out" || echo "exit $bench_rc")
  (( bench_rc == 0 )) || echo "SUMMARY model ${c%%:*} ${c##*:}: FAILED ($why)" | tee -a model_bench.log
  rm -rf "$BUILD/models"  # a killed run leaves its file
done
set -e
echo "== summary"
echo "kernel tests: $( [[ $rc_kernels -eq 0 ]] && echo passed || echo "FAILED (ctest rc $rc_kernels)" )"
echo "whole-model tests: $( [[ $rc_models -eq 0 ]] && echo passed || echo "FAILED (ctest rc $rc_models)" )"
echo "tests: $( [[ $rc -eq 0 ]] && echo passed || echo "FAILED (ctest rc $rc)" ); total $(( $(date +%s) - t0 )) s"
grep '^SUMMARY' matmul_bench.log || true
grep '^SUMMARY' model_bench.log || true
exit $rc
