// Bandwidth of the CUDA simple ops (rms_norm, layer_norm, softmax, rope, add, glu_fused) at sizes far past
// the L2 cache, against the same GPU's device-to-device copy in the same run (the hardware
// limit these memory-bound kernels can reach). Prints one table; not part of the test run.
// Run: build/bin/cuda_ops_bench (main build) or build-gpu/cuda_ops_bench (tools/gpu_check.sh).
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "backend/cuda/activation.h"
#include "backend/cuda/device.h"
#include "backend/cuda/elementwise.h"
#include "backend/cuda/layer_norm.h"
#include "backend/cuda/rms_norm.h"
#include "backend/cuda/rope.h"
#include "backend/cuda/softmax.h"

using namespace oxyd;
using namespace oxyd::backend;
using namespace oxyd::backend::cuda;

namespace {

// Mean milliseconds per call of f over `iters` calls after 3 warm-ups.
double time_ms(const Stream& stream, const std::function<void()>& f, int iters = 20) {
  for (int i = 0; i < 3; ++i) f();
  Event start, stop;
  start.record(stream);
  for (int i = 0; i < iters; ++i) f();
  stop.record(stream);
  stop.synchronize();
  return stop.elapsed_ms(start) / iters;
}

struct Row {
  std::string op, shape;
  double ms, bytes;
};

}  // namespace

int main() {
  if (!cuda_available()) {
    std::printf("no CUDA device: nothing to measure\n");
    return 0;
  }
  const DeviceInfo info = device_info(0);
  std::printf("device: %s (sm_%d%d, %d SMs, %.0f GiB)\n", info.name.c_str(), info.cc_major,
              info.cc_minor, info.num_sms, double(info.total_bytes) / (1 << 30));
  Stream stream;
  const size_t big = size_t(1) << 30;  // 1 GiB per operand: 20× an H200's 60 MB L2
  DeviceBuffer a(big), b(big), c(big);
  memset_async(a.data(), 0, big, stream);
  memset_async(b.data(), 0, big, stream);
  std::vector<Row> rows;

  const double copy_ms = time_ms(stream, [&] { copy_device_to_device_async(c.data(), a.data(), big, stream); });
  rows.push_back({"device copy (peer)", "1 GiB", copy_ms, 2.0 * big});

  {  // rms_norm over [32768, 8192] BF16 (x read twice from HBM at worst, counted once)
    const int64_t r = 32768, n = 8192;
    std::vector<float> w(n, 1.0f);
    DeviceBuffer dw(n * 4);
    copy_to_device(dw.data(), w.data(), n * 4);
    const Tensor x = a.view(DType::BF16, {r, n}), y = c.view(DType::BF16, {r, n});
    const Tensor tw = dw.view(DType::F32, {n});
    rows.push_back({"rms_norm bf16", "[32768, 8192]",
                    time_ms(stream, [&] { rms_norm(x, &tw, 1e-6f, y, stream); }), 2.0 * r * n * 2});
    const Tensor xf = a.view(DType::F32, {r / 2, n}), yf = c.view(DType::F32, {r / 2, n});
    rows.push_back({"rms_norm f32", "[16384, 8192]",
                    time_ms(stream, [&] { rms_norm(xf, &tw, 1e-6f, yf, stream); }), 2.0 * r / 2 * n * 4});
    rows.push_back({"layer_norm bf16 (no w/b)", "[32768, 8192]",
                    time_ms(stream, [&] { layer_norm(x, nullptr, nullptr, 1e-5f, y, stream); }), 2.0 * r * n * 2});
    const Tensor xh = a.view(DType::BF16, {r * 64, 128}), yh = c.view(DType::BF16, {r * 64, 128});
    rows.push_back({"rms_norm bf16 (head)", "[2097152, 128]",
                    time_ms(stream, [&] { rms_norm(xh, nullptr, 1e-6f, yh, stream); }), 2.0 * r * 64 * 128 * 2});
  }
  {  // softmax over vocabulary rows, F32
    const int64_t r = 1024, n = 151936;
    const Tensor x = a.view(DType::F32, {r, n}), y = c.view(DType::F32, {r, n});
    rows.push_back({"softmax f32", "[1024, 151936]",
                    time_ms(stream, [&] { softmax(x, 1.0f, y, stream); }), 2.0 * r * n * 4});
  }
  {  // add, BF16, same shape and broadcast
    const int64_t n = int64_t(big / 2);
    const Tensor x = a.view(DType::BF16, {n}), z = b.view(DType::BF16, {n}), y = c.view(DType::BF16, {n});
    rows.push_back({"add bf16", "[536870912]", time_ms(stream, [&] { add(x, z, y, stream); }), 3.0 * n * 2});
    const Tensor x2 = a.view(DType::BF16, {n / 4096, 4096}), v = b.view(DType::BF16, {4096});
    const Tensor y2 = c.view(DType::BF16, {n / 4096, 4096});
    rows.push_back({"mul bf16 (row bcast)", "[131072, 4096]",
                    time_ms(stream, [&] { mul(x2, v, y2, stream); }), 2.0 * n * 2});
  }
  {  // glu_fused SwiGLU, BF16 gate_up [16384, 2·14336]
    const int64_t r = 16384, ff = 14336;
    const Tensor gu = a.view(DType::BF16, {r, 2 * ff}), y = c.view(DType::BF16, {r, ff});
    rows.push_back({"swiglu fused bf16", "[16384, 2x14336]",
                    time_ms(stream, [&] { glu_fused(Activation::SILU, gu, y, stream); }), 3.0 * r * ff * 2});
  }
  {  // rope NEOX in place, BF16 [65536 tokens, 32 heads, 128]
    const int64_t t = 65536, h = 32, d = 128;
    std::vector<int32_t> pos(t);
    std::vector<float> inv_freq(d / 2);
    for (int64_t i = 0; i < t; ++i) pos[i] = int32_t(i);
    for (int64_t i = 0; i < d / 2; ++i) inv_freq[i] = float(std::pow(1e6, -2.0 * i / d));
    DeviceBuffer dpos(t * 4), dfreq(d / 2 * 4);
    copy_to_device(dpos.data(), pos.data(), t * 4);
    copy_to_device(dfreq.data(), inv_freq.data(), d / 2 * 4);
    const Tensor x = a.view(DType::BF16, {t, h, d});
    const Tensor tp = dpos.view(DType::I32, {t}), tf = dfreq.view(DType::F32, {d / 2});
    rows.push_back({"rope neox bf16 in place", "[65536, 32, 128]",
                    time_ms(stream, [&] { rope(x, tp, tf, nullptr, RopeStyle::NEOX, 1.0f, x, stream); }),
                    2.0 * t * h * d * 2});
  }
  stream.synchronize();

  const double peer_gbs = rows[0].bytes / rows[0].ms / 1e6;
  std::printf("\n%-26s %-18s %10s %10s %12s\n", "op", "shape", "us", "GB/s", "of copy BW");
  for (const Row& r : rows) {
    const double gbs = r.bytes / r.ms / 1e6;
    std::printf("%-26s %-18s %10.1f %10.1f %11.1f%%\n", r.op.c_str(), r.shape.c_str(), r.ms * 1e3,
                gbs, 100.0 * gbs / peer_gbs);
  }
  return 0;
}
