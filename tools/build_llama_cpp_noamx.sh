#!/usr/bin/env bash
# A private copy of the installed llama-cpp-python package whose libggml-cpu.so is rebuilt without
# AMX, for bench/model_bench.py and bench/serving_bench.py (PYTHONPATH=build/pylib).
# Why: the wheel built with GGML_NATIVE=ON turns on ggml's AMX matmul on this CPU, and every
# llama_decode then segfaults in ggml_backend_amx_mul_mat (ggml-org/llama.cpp#20824). The rebuilt
# library keeps every other x86 path of -march=native on this machine (AVX2/FMA/F16C/BMI2, AVX-VNNI,
# AVX-512 F/BW/VL/DQ/VBMI/VNNI/BF16, OpenMP, the CPU_REPACK weight layouts); only AMX is off.
# The shared venv is not modified.
# Usage (repository root): tools/build_llama_cpp_noamx.sh LLAMA_CPP_SRC [VENV]
#   LLAMA_CPP_SRC: vendor/llama.cpp of the same llama-cpp-python sdist as the installed wheel
#   (pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36; tar xzf ...).
set -euo pipefail
src=${1:?usage: $0 LLAMA_CPP_SRC [VENV]}
venv=${2:-/work/venv}
work=$(mktemp -d /tmp/ggml_noamx.XXXXXX)
cp -r "$src/ggml" "$work/ggml"
touch "$work/ggml/ggml.pc.in"  # absent from the sdist; only feeds a pkg-config file
cmake -S "$work/ggml" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
  -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
  -DGGML_AVX_VNNI=ON -DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON \
  -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_BUILD_TESTS=OFF \
  -DGGML_BUILD_EXAMPLES=OFF -DGGML_CCACHE=OFF
flock /work/wt/build.lock ninja -C "$work/build" -j2 ggml-cpu
site=$("$venv/bin/python" -c 'import llama_cpp, os; print(os.path.dirname(llama_cpp.__file__))')
mkdir -p build/pylib
rm -rf build/pylib/llama_cpp
cp -r "$site" build/pylib/llama_cpp
for f in build/pylib/llama_cpp/lib/libggml-cpu.so*; do cp "$work/build/src/libggml-cpu.so."*.*.* "$f"; done
rm -rf "$work"
echo "build/pylib/llama_cpp: libggml-cpu without AMX"
