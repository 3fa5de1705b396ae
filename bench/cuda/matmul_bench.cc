// Decode-step kernels on the GPU: the gemv of every projection of a Llama-3.2-1B-shaped and a
// Qwen3-8B-shaped model (all layers' distinct weights, so the weights stream from HBM, not L2)
// in F16, Q8_0, Q6_K, Q4_K and MXFP4 at m = 1 and 8 (the integer formats timed with their
// activation quantization), reported as weight GB/s and % of the same GPU's device-to-device copy
// bandwidth measured in this run; paged decode attention (BF16 KV, 4k context) at batch 1/16/64
// as KV GB/s; a Q4_K weight at 1/16/64/256 rows (continuous-batching decode steps: chunked gemv,
// qgemm); and the batched (prefill) matmul through cuBLAS as TFLOP/s. Weights are a constant
// byte pattern: these kernels' speed does not depend on values.
// Run: build/bin/cuda_matmul_bench (main build) or build-gpu/cuda_matmul_bench (tools/gpu_check.sh).
#include <cstdio>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "backend/cuda/attention.h"
#include "backend/cuda/device.h"
#include "backend/cuda/gemm.h"
#include "backend/cuda/matmul.h"

using namespace oxyd;
using namespace oxyd::backend;
using namespace oxyd::backend::cuda;

namespace {

double time_ms(const Stream& stream, const std::function<void()>& f, int iters = 10) {
  for (int i = 0; i < 2; ++i) f();
  Event start, stop;
  start.record(stream);
  for (int i = 0; i < iters; ++i) f();
  stop.record(stream);
  stop.synchronize();
  return stop.elapsed_ms(start) / iters;
}

struct Shape {
  const char* name;
  int64_t hidden, q_out, kv_out, ff, vocab, layers;
};

struct Proj {
  const char* name;
  int64_t n, k;
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
  Workspace gemv_ws;  // the integer gemv's quantized activations
  double copy_gbs = 0;
  {
    const size_t big = size_t(1) << 30;
    DeviceBuffer a(big), c(big);
    memset_async(a.data(), 0, big, stream);
    const double ms = time_ms(stream, [&] { copy_device_to_device_async(c.data(), a.data(), big, stream); }, 20);
    copy_gbs = 2.0 * big / ms / 1e6;
    std::printf("device copy: %.1f GB/s (read + write)\n", copy_gbs);
  }

  const Shape shapes[] = {{"llama3.2-1b", 2048, 2048, 512, 8192, 128256, 16},
                          {"qwen3-8b", 4096, 4096, 1024, 12288, 151936, 36}};
  const DType dtypes[] = {DType::F16, DType::Q8_0, DType::Q6_K, DType::Q4_K, DType::MXFP4};
  std::printf("\n== gemv (decode): weight bytes streamed per call over all layers' weights\n");
  std::printf("%-12s %-6s %-8s %4s %12s %10s %10s %9s\n", "model", "dtype", "proj", "m", "[n, k]", "us/layer",
              "GB/s", "of copy");
  for (const Shape& s : shapes) {
    const Proj projs[] = {{"q", s.q_out, s.hidden},   {"k", s.kv_out, s.hidden}, {"v", s.kv_out, s.hidden},
                          {"o", s.hidden, s.q_out},   {"gate", s.ff, s.hidden},  {"up", s.ff, s.hidden},
                          {"down", s.hidden, s.ff}};
    for (DType dt : dtypes) {
      // One buffer per projection holding all layers' copies back to back.
      std::vector<DeviceBuffer> bufs;
      for (const Proj& p : projs) {
        bufs.emplace_back(size_t(dtype_row_bytes(dt, p.k) * p.n * s.layers));
        memset_async(bufs.back().data(), 0x11, bufs.back().size(), stream);
      }
      const int64_t lm_bytes = dtype_row_bytes(dt, s.hidden) * s.vocab;
      DeviceBuffer lm(static_cast<size_t>(lm_bytes));
      memset_async(lm.data(), 0x11, lm.size(), stream);
      DeviceBuffer x(size_t(8 * s.ff * 4)), y(size_t(8 * s.vocab * 4));
      memset_async(x.data(), 0, x.size(), stream);
      for (int64_t m : {1, 8}) {
        double step_ms = 0, step_bytes = 0;
        for (size_t pi = 0; pi < std::size(projs); ++pi) {
          const Proj& p = projs[pi];
          const int64_t wb = dtype_row_bytes(dt, p.k) * p.n;
          const Tensor tx = x.view(DType::F32, {m, p.k}), ty = y.view(DType::F32, {m, p.n});
          const double ms = time_ms(stream, [&] {
            for (int64_t l = 0; l < s.layers; ++l) {
              Tensor w(dt, static_cast<uint8_t*>(bufs[pi].data()) + l * wb, {p.n, p.k}, Device::CUDA);
              gemv(tx, w, ty, gemv_ws, stream);
            }
          });
          const double gbs = double(wb) * s.layers / ms / 1e6;
          std::printf("%-12s %-6s %-8s %4lld %12s %10.1f %10.1f %8.1f%%\n", s.name,
                      std::string(dtype_traits(dt).name).c_str(), p.name, (long long)m,
                      ("[" + std::to_string(p.n) + ", " + std::to_string(p.k) + "]").c_str(),
                      ms * 1e3 / s.layers, gbs, 100 * gbs / copy_gbs);
          step_ms += ms;
          step_bytes += double(wb) * s.layers;
        }
        const Tensor tx = x.view(DType::F32, {m, s.hidden}), ty = y.view(DType::F32, {m, s.vocab});
        const Tensor w(dt, lm.data(), {s.vocab, s.hidden}, Device::CUDA);
        const double lm_ms = time_ms(stream, [&] { gemv(tx, w, ty, gemv_ws, stream); });
        const double lm_gbs = double(lm_bytes) / lm_ms / 1e6;
        std::printf("%-12s %-6s %-8s %4lld %12s %10.1f %10.1f %8.1f%%\n", s.name,
                    std::string(dtype_traits(dt).name).c_str(), "lm_head", (long long)m,
                    ("[" + std::to_string(s.vocab) + ", " + std::to_string(s.hidden) + "]").c_str(),
                    lm_ms * 1e3, lm_gbs, 100 * lm_gbs / copy_gbs);
        step_ms += lm_ms;
        step_bytes += double(lm_bytes);
        const double gbs = step_bytes / step_ms / 1e6;
        std::printf("SUMMARY gemv %-12s %-5s m=%lld: all projections %.2f ms/step, %.1f GB/s, "
                    "%.1f%% of copy BW (matmul-only roofline %.0f steps/s)\n",
                    s.name, std::string(dtype_traits(dt).name).c_str(), (long long)m, step_ms, gbs,
                    100 * gbs / copy_gbs, 1e3 / step_ms);
      }
    }
  }

  std::printf("\n== paged decode attention (BF16 KV, block 16, 4096-token context)\n");
  std::printf("%-12s %6s %10s %10s %9s\n", "shape", "batch", "us", "KV GB/s", "of copy");
  struct AttnShape {
    const char* name;
    int64_t heads, kv_heads, head_dim;
  };
  for (const AttnShape& a : {AttnShape{"llama3.2-1b", 32, 8, 64}, AttnShape{"qwen3-8b", 32, 8, 128}}) {
    for (int64_t batch : {1, 16, 64}) {
      const int64_t ctx = 4096, bs = 16, blocks_per = ctx / bs, num_blocks = batch * blocks_per;
      const size_t cache_bytes = size_t(num_blocks * bs * a.kv_heads * a.head_dim * 2);
      DeviceBuffer kc(cache_bytes), vc(cache_bytes), q(size_t(batch * a.heads * a.head_dim * 4)),
          out(size_t(batch * a.heads * a.head_dim * 4));
      memset_async(kc.data(), 0, cache_bytes, stream);
      memset_async(vc.data(), 0, cache_bytes, stream);
      memset_async(q.data(), 0, q.size(), stream);
      std::vector<int32_t> qsl(size_t(batch + 1)), lens(static_cast<size_t>(batch), static_cast<int32_t>(ctx)),
          table(size_t(batch * blocks_per));
      for (int64_t r = 0; r <= batch; ++r) qsl[size_t(r)] = int32_t(r);
      for (size_t i = 0; i < table.size(); ++i) table[i] = int32_t((i * 7919) % table.size());
      DeviceBuffer dqsl(qsl.size() * 4), dlens(lens.size() * 4), dtable(table.size() * 4);
      copy_to_device(dqsl.data(), qsl.data(), qsl.size() * 4);
      copy_to_device(dlens.data(), lens.data(), lens.size() * 4);
      copy_to_device(dtable.data(), table.data(), table.size() * 4);
      AttentionParams p;
      p.q = q.view(DType::F32, {batch, a.heads, a.head_dim});
      p.k_cache = kc.view(DType::BF16, {num_blocks, bs, a.kv_heads, a.head_dim});
      p.v_cache = vc.view(DType::BF16, {num_blocks, bs, a.kv_heads, a.head_dim});
      p.query_start_loc = dqsl.view(DType::I32, {batch + 1});
      p.seq_lens = dlens.view(DType::I32, {batch});
      p.block_table = dtable.view(DType::I32, {batch, blocks_per});
      p.out = out.view(DType::F32, {batch, a.heads, a.head_dim});
      p.scale = 0.125f;
      Workspace ws;
      const double ms = time_ms(stream, [&] { paged_attention(p, ws, stream); });
      const double gbs = 2.0 * double(cache_bytes) / ms / 1e6;
      std::printf("%-12s %6lld %10.1f %10.1f %8.1f%%\n", a.name, (long long)batch, ms * 1e3, gbs,
                  100 * gbs / copy_gbs);
      std::printf("SUMMARY attention %s batch %lld ctx 4096: %.1f us/layer, %.1f%% of copy BW\n",
                  a.name, (long long)batch, ms * 1e3, 100 * gbs / copy_gbs);
    }
  }

  if (Gemm::available()) {
    // Continuous-batching decode steps: the Qwen3-8B up projection in Q4_K at 16 / 64 / 256 rows
    // (gemv 8 rows at a time, then qgemm), as weight GB/s. 8 copies (226 MB) so that the weight
    // streams from HBM, not the L2.
    std::printf("\n== batched decode matmul, Q4_K [12288, 4096] x 8 copies (Gemm::matmul: gemv / qgemm)\n");
    Gemm g;
    const int64_t n = 12288, k = 4096, copies = 8;
    const int64_t wbytes = dtype_row_bytes(DType::Q4_K, k) * n;
    DeviceBuffer w(size_t(wbytes * copies)), x(size_t(256 * k * 4)), y(size_t(256 * n * 4));
    memset_async(w.data(), 0x11, w.size(), stream);
    memset_async(x.data(), 0, x.size(), stream);
    for (int64_t m : {1, 16, 64, 256}) {
      const double ms = time_ms(stream, [&] {
        for (int64_t c = 0; c < copies; ++c) {
          const Tensor tw(DType::Q4_K, static_cast<uint8_t*>(w.data()) + c * wbytes, {n, k}, Device::CUDA);
          g.matmul(x.view(DType::F32, {m, k}), tw, y.view(DType::F32, {m, n}), stream);
        }
      }) / double(copies);
      const double gbs = double(wbytes) / ms / 1e6;
      std::printf("SUMMARY batched decode matmul Q4_K m=%lld: %.3f ms, weight %.1f GB/s (%.1f%% of copy BW), "
                  "%.1f TFLOP/s\n", (long long)m, ms, gbs, 100 * gbs / copy_gbs, 2.0 * m * n * k / ms / 1e9);
    }
  }

  if (Gemm::available()) {
    std::printf("\n== batched matmul (prefill, m = 2048) through cuBLAS\n");
    Gemm g;
    const int64_t m = 2048, n = 12288, k = 4096;
    DeviceBuffer x(size_t(m * k * 4)), y(size_t(m * n * 4)), xh(size_t(m * k * 2));
    memset_async(x.data(), 0, x.size(), stream);
    memset_async(xh.data(), 0, xh.size(), stream);
    for (DType dt : {DType::BF16, DType::Q4_K}) {
      DeviceBuffer w(size_t(dtype_row_bytes(dt, k) * n));
      memset_async(w.data(), 0x11, w.size(), stream);
      const Tensor tw(dt, w.data(), {n, k}, Device::CUDA);
      const double ms = time_ms(stream, [&] {
        if (dt == DType::BF16) g.gemm(xh.view(DType::BF16, {m, k}), tw, y.view(DType::F32, {m, n}), stream);
        else g.matmul(x.view(DType::F32, {m, k}), tw, y.view(DType::F32, {m, n}), stream);
      });
      const double tflops = 2.0 * m * n * k / ms / 1e9;
      std::printf("SUMMARY prefill matmul %s [%lld x %lld x %lld]: %.3f ms, %.1f TFLOP/s\n",
                  std::string(dtype_traits(dt).name).c_str(), (long long)m, (long long)n, (long long)k,
                  ms, tflops);
    }
  }
  return 0;
}
