// backend::cpu::matmul / get_rows and their ops/ front ends against backend::reference (float64
// over oxyd::dequantize_row), for every weight format × every ISA variant this CPU runs × several
// m, k, n. Weights are random bytes with sane scale fields, so every bit pattern of the quantized
// values is exercised. Tolerances are derived once per format (see Tolerance below).
#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/isa.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/matmul/pack.h"
#include "backend/reference/get_rows.h"
#include "backend/reference/matmul.h"
#include "core/error.h"
#include "core/half.h"
#include "core/quant.h"
#include "core/thread_pool.h"
#include "ops/embedding.h"
#include "ops/matmul.h"

namespace oxyd {
namespace {

// Host ids as the I32 tensor ops::embedding takes.
Tensor host_ids(const std::vector<int32_t>& ids) {
  return Tensor(DType::I32, const_cast<int32_t*>(ids.data()), {static_cast<int64_t>(ids.size())});
}

using backend::cpu::Isa;

const DType kFormats[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q4_0,   DType::Q4_1,   DType::Q5_0,
                          DType::Q5_1, DType::Q8_0, DType::Q2_K, DType::Q3_K,   DType::Q4_K,   DType::Q5_K,
                          DType::Q6_K, DType::IQ4_NL, DType::IQ4_XS, DType::MXFP4};

// How the fast path may differ from the exact f64 product. Quantized weights meet activations
// rounded to 8 bits per block of `act_block` (Q8_0-like 32 or Q8_K-like 256): x̃ = round(x/d)·d,
// d = amax_block/127, so |x − x̃| ≤ amax_block/254 and |Σ w(x − x̃)| ≤ Σ_i |w_i|·amax_block(i)/254;
// per 32 d is stored as f16 (ggml's Q8_0): |q|·|d − d̃| ≤ 127·d·2^-11 adds amax_block/2048.
// BF16 may meet bf16-rounded activations: |x − x̃| ≤ 2^-8|x| (8 significant bits, round to
// nearest; 2^-9 held only where k averaged it, not at k = 1). Everything also carries f32
// accumulation error, bounded generously by 1e-5·Σ|x||w| for these k.
struct Tolerance {
  int act_block;    // 0: activations used exactly (f32)
  double rel_bf16;  // extra factor of Σ|x||w| (bf16 activations)
};

Tolerance tolerance(DType t) {
  switch (t) {
    case DType::F32: case DType::F16: return {0, 0.0};
    case DType::BF16: return {0, 1.0 / 256};
    case DType::Q2_K: case DType::Q3_K: case DType::Q4_K: case DType::Q5_K: case DType::Q6_K:
    case DType::IQ4_XS: return {256, 0.0};
    default: return {32, 0.0};
  }
}

void set_f16(uint8_t* p, float v) {
  const uint16_t h = f32_to_f16(v);
  std::memcpy(p, &h, 2);
}

// Random weight bytes [n, k] of dtype t: quantized values are uniform random bits; every scale
// field gets a finite value of a realistic size.
std::vector<uint8_t> random_weights(DType t, int64_t n, int64_t k, std::mt19937& rng) {
  const int64_t row_bytes = dtype_row_bytes(t, k);
  std::vector<uint8_t> w(size_t(n * row_bytes));
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::uniform_real_distribution<float> scale(0.002f, 0.02f);
  std::uniform_int_distribution<int> byte(0, 255);
  if (t == DType::F32 || t == DType::F16 || t == DType::BF16) {
    for (int64_t i = 0; i < n * k; ++i) {
      const float v = normal(rng);
      if (t == DType::F32) std::memcpy(&w[size_t(i * 4)], &v, 4);
      else {
        const uint16_t h = t == DType::F16 ? f32_to_f16(v) : f32_to_bf16(v);
        std::memcpy(&w[size_t(i * 2)], &h, 2);
      }
    }
    return w;
  }
  for (auto& b : w) b = uint8_t(byte(rng));
  const int64_t bb = dtype_block_bytes(t), nblocks = int64_t(w.size()) / bb;
  auto sgn = [&] { return byte(rng) & 1 ? 1.0f : -1.0f; };
  for (int64_t i = 0; i < nblocks; ++i) {
    uint8_t* b = &w[size_t(i * bb)];
    switch (t) {
      case DType::Q4_0: case DType::Q5_0: case DType::Q8_0: case DType::IQ4_NL: case DType::IQ4_XS:
        set_f16(b, sgn() * scale(rng) * (t == DType::IQ4_NL || t == DType::IQ4_XS ? 0.1f : 1.0f));
        break;
      case DType::Q4_1: case DType::Q5_1:
        set_f16(b, scale(rng));
        set_f16(b + 2, -8.0f * scale(rng));
        break;
      case DType::Q4_K: case DType::Q5_K:
        set_f16(b, scale(rng) * 0.1f);
        set_f16(b + 2, scale(rng) * 0.1f);
        break;
      case DType::Q2_K:
        set_f16(b + 80, scale(rng) * 0.3f);
        set_f16(b + 82, scale(rng) * 0.3f);
        break;
      case DType::Q3_K: set_f16(b + 108, sgn() * scale(rng) * 0.1f); break;
      case DType::Q6_K: set_f16(b + 208, sgn() * scale(rng) * 0.01f); break;
      case DType::MXFP4: b[0] = uint8_t(118 + byte(rng) % 8); break;
      default: ADD_FAILURE() << "no generator for " << dtype_name(t);
    }
  }
  return w;
}

std::vector<float> random_x(int64_t m, int64_t k, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(size_t(m * k));
  for (auto& v : x) v = normal(rng);
  // A few outliers, as real activations have: they stretch the per-block Q8 scale.
  for (int64_t i = 0; i < m * k; i += 97) x[size_t(i)] *= 8.0f;
  return x;
}

std::vector<Isa> isas() {
  std::vector<Isa> out;
  for (Isa i : {Isa::SCALAR, Isa::AVX2, Isa::AVX512})
    if (backend::cpu::isa_supported(i)) out.push_back(i);
  return out;
}

struct IsaGuard {
  ~IsaGuard() { backend::cpu::set_isa_override(std::nullopt); }
};

using backend::cpu::PackLayout;

// A packed copy (matmul/pack.h) of w in `layout`, registered with the CPU backend for a tensor
// whose data are rows with every scale NaN, so that any read of the original rows shows in the results.
struct PackedWeight {
  Buffer packed;
  std::vector<uint8_t> poison;
  Tensor tensor;
  backend::PreparedHandle handle;
  PackedWeight(const Tensor& w, PackLayout layout)
      : packed(size_t(backend::cpu::matmul_packed_bytes(w.dtype, w.rows(), w.cols()))),
        poison(size_t(w.nbytes()), 0xFF), tensor(w) {
    backend::cpu::matmul_pack(w, layout, packed.data());
    tensor.data = poison.data();
    handle = backend::cpu::cpu_backend().register_prepared(tensor, packed.data(), uint8_t(layout));
  }
};

// The packed kernels this CPU can run, each with the ISA that runs it: (AVX2, AVX2 layout) on an
// AVX2 CPU with BMI2, (AVX512, AVX512 layout) on the AVX-512 matmul path (VNNI, BF16, VBMI).
std::vector<std::pair<Isa, PackLayout>> packed_paths() {
  std::vector<std::pair<Isa, PackLayout>> out;
  for (auto [isa, layout] : {std::pair{Isa::AVX2, PackLayout::AVX2}, std::pair{Isa::AVX512, PackLayout::AVX512}}) {
    if (!backend::cpu::isa_supported(isa)) continue;
    backend::cpu::ScopedIsa force(isa);
    if (backend::cpu::packed_kernel_layout() == layout) out.emplace_back(isa, layout);
  }
  return out;
}

// x_edit, when given, alters the random activations before the product (edge cases); packed (not
// NONE): matmul reads a copy of the weights packed in that layout (the formats of MatmulPacked).
void check_matmul(DType t, Isa isa, int64_t m, int64_t k, int64_t n, uint32_t seed,
                  void (*x_edit)(std::vector<float>&, int64_t m, int64_t k) = nullptr,
                  PackLayout packed = PackLayout::NONE) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> wb = random_weights(t, n, k, rng);
  std::vector<float> x = random_x(m, k, rng);
  if (x_edit) x_edit(x, m, k);
  std::vector<float> y(size_t(m * n), std::nanf("")), ref(size_t(m * n));
  Tensor tw(t, wb.data(), {n, k}), tx(DType::F32, x.data(), {m, k});
  Tensor ty(DType::F32, y.data(), {m, n}), tref(DType::F32, ref.data(), {m, n});
  backend::reference::matmul(tx, tw, tref);
  IsaGuard guard;
  backend::cpu::set_isa_override(isa);
  if (packed != PackLayout::NONE) {
    const PackedWeight pw(tw, packed);
    backend::cpu::matmul(tx, pw.tensor, ty);
  } else {
    backend::cpu::matmul(tx, tw, ty);
  }

  // Bound per output (i, j), from the dequantized weights.
  std::vector<float> wf(static_cast<size_t>(k));
  const Tolerance tol = tolerance(t);
  int bad = 0;
  for (int64_t j = 0; j < n; ++j) {
    dequantize_row(t, wb.data() + j * tw.row_bytes(), wf.data(), k);
    for (int64_t i = 0; i < m; ++i) {
      const float* xr = &x[size_t(i * k)];
      double abs_sum = 0, quant_bound = 0;
      for (int64_t b0 = 0; b0 < k; b0 += std::max(tol.act_block, 1)) {
        const int64_t b1 = std::min(k, b0 + std::max(tol.act_block, 1));
        double amax = 0, wsum = 0;
        for (int64_t e = b0; e < b1; ++e) {
          abs_sum += std::fabs(double(xr[e]) * wf[size_t(e)]);
          amax = std::max(amax, double(std::fabs(xr[e])));
          wsum += std::fabs(wf[size_t(e)]);
        }
        if (tol.act_block) quant_bound += wsum * amax * (1.0 / 254.0 + (tol.act_block == 32 ? 1.0 / 2048.0 : 0.0));
      }
      const double bound = quant_bound + (tol.rel_bf16 + 1e-5) * abs_sum + 1e-30;
      const double err = std::fabs(double(y[size_t(i * n + j)]) - double(ref[size_t(i * n + j)]));
      if (!(err <= bound) && bad++ < 5)
        ADD_FAILURE() << dtype_name(t) << " " << backend::cpu::isa_name(isa) << " m=" << m << " k=" << k
                      << " n=" << n << " y[" << i << "," << j << "]=" << y[size_t(i * n + j)] << " ref "
                      << ref[size_t(i * n + j)] << " err " << err << " > bound " << bound;
    }
  }
}

class MatmulFormat : public ::testing::TestWithParam<DType> {};

TEST_P(MatmulFormat, MatchesReferenceOnEveryIsa) {
  const DType t = GetParam();
  const int64_t be = dtype_block_elems(t);
  // (m, k, n): k multiples of 256 and n odd-ish; plus a k that is only a multiple of the 32-block.
  std::vector<std::tuple<int64_t, int64_t, int64_t>> cases = {
      {1, 256, 37}, {3, 512, 67}, {16, 768, 33}, {67, 1024, 29}, {1, 2304, 130}};
  if (be <= 32) cases.push_back({5, 160, 19});  // a partial group of 4 blocks
  if (be == 1) {
    cases.push_back({3, 100, 7});    // float formats: a k with masked tails
    cases.push_back({20, 100, 21});  // ... at a batch that takes the AMX path for BF16
  }
  cases.push_back({2, 512, 1000});               // many column chunks over the threads
  cases.push_back({130, 256, 45});               // prefill-sized m (AMX paths where present)
  uint32_t seed = 1;
  for (Isa isa : isas())
    for (auto [m, k, n] : cases) {
      SCOPED_TRACE(testing::Message() << backend::cpu::isa_name(isa) << " m=" << m << " k=" << k << " n=" << n);
      check_matmul(t, isa, m, k, n, seed++);
    }
}

// Batched-decode sizes, where the AVX-512 path takes the AMX-INT8 tile kernel on CPUs with it or
// the VNNI panel kernel (m ≥ 8, in 16/8/4/2/1-row groups, n in 16-row weight panels with a clamped
// tail) — run with each kernel forced so all stay covered on every CPU.
struct AmxGuard {
  ~AmxGuard() {
    backend::cpu::set_matmul_amx(true);
    backend::cpu::set_matmul_panel(true);
  }
};

// The batched-decode kernel choices on AVX-512: AMX-INT8 tiles (CPUs with AMX), the VNNI 16-row
// panel kernel (m ≥ 8), or the VNNI row-dot kernels. Each run forces one of them where it applies.
enum class Batched { AMX, PANEL, ROWDOT };
const char* batched_name(Batched b) { return b == Batched::AMX ? "amx" : b == Batched::PANEL ? "panel" : "rowdot"; }
void use_batched(Batched b) {
  backend::cpu::set_matmul_amx(b == Batched::AMX);
  backend::cpu::set_matmul_panel(b != Batched::ROWDOT);
}
constexpr Batched kBatched[] = {Batched::AMX, Batched::PANEL, Batched::ROWDOT};

// Formats with a batched kernel of their own on AVX-512: the 32-block ones (AMX-INT8 and panel)
// and Q4_K/Q5_K/Q6_K (panel). `k32` is scaled to a multiple of the block (K-quants: 256).
bool has_batched_kernel(DType t) {
  return dtype_block_elems(t) == 32 || t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K;
}
int64_t block_k(DType t, int64_t k32) { return dtype_block_elems(t) == 32 ? k32 : (k32 + 255) / 256 * 256; }

TEST_P(MatmulFormat, BatchedDecodeShapesMatchReference) {
  const DType t = GetParam();
  if (!has_batched_kernel(t) || !backend::cpu::isa_supported(Isa::AVX512)) GTEST_SKIP() << "batched kernels on AVX-512";
  const std::tuple<int64_t, int64_t, int64_t> cases[] = {
      {4, 96, 45},   {5, 640, 61},  {16, 2048, 100}, {17, 96, 16},  {33, 640, 45},
      {64, 160, 61}, {100, 96, 33}, {127, 640, 100}, {130, 96, 17}, {8, 2048, 1}, {6, 96, 33}, {390, 96, 17}};
  AmxGuard amx_guard;
  uint32_t seed = 100;
  for (Batched kern : kBatched) {
    use_batched(kern);
    for (auto [m, k, n] : cases) {
      SCOPED_TRACE(testing::Message() << batched_name(kern) << " m=" << m << " k=" << block_k(t, k) << " n=" << n);
      check_matmul(t, Isa::AVX512, m, block_k(t, k), n, seed++);
    }
  }
}

// The AMX-INT8, VNNI panel and VNNI row-dot kernels multiply the same 8-bit codes, so their block
// sums are equal integers and the outputs may differ only by f32 summation order (≤ 1e-5·Σ|x||w|
// here), far tighter than the quantization bound the reference comparison allows.
TEST_P(MatmulFormat, BatchedKernelsAgreeWithRowDotToRounding) {
  const DType t = GetParam();
  if (!has_batched_kernel(t) || !backend::cpu::isa_supported(Isa::AVX512)) GTEST_SKIP() << "batched kernels on AVX-512";
  const int64_t m = 20, k = block_k(t, 640), n = 45;
  std::mt19937 rng(11);
  std::vector<uint8_t> wb = random_weights(t, n, k, rng);
  std::vector<float> x = random_x(m, k, rng), y0(size_t(m * n)), y1(size_t(m * n));
  std::vector<float> wf(static_cast<size_t>(k));
  Tensor tw(t, wb.data(), {n, k}), tx(DType::F32, x.data(), {m, k});
  AmxGuard amx_guard;
  use_batched(Batched::ROWDOT);
  backend::cpu::matmul(tx, tw, Tensor(DType::F32, y0.data(), {m, n}));
  for (Batched kern : {Batched::AMX, Batched::PANEL}) {
    use_batched(kern);
    backend::cpu::matmul(tx, tw, Tensor(DType::F32, y1.data(), {m, n}));
    for (int64_t j = 0; j < n; ++j) {
      dequantize_row(t, wb.data() + j * tw.row_bytes(), wf.data(), k);
      for (int64_t i = 0; i < m; ++i) {
        double abs_sum = 0;
        for (int64_t e = 0; e < k; ++e) abs_sum += std::fabs(double(x[size_t(i * k + e)]) * wf[size_t(e)]);
        EXPECT_LE(std::fabs(double(y1[size_t(i * n + j)]) - y0[size_t(i * n + j)]), 1e-5 * abs_sum + 1e-30)
            << batched_name(kern) << " y[" << i << "," << j << "] " << y1[size_t(i * n + j)] << " row-dot "
            << y0[size_t(i * n + j)];
      }
    }
  }
}

TEST_P(MatmulFormat, BatchedDecodeEdgeActivations) {
  const DType t = GetParam();
  if (!has_batched_kernel(t) || !backend::cpu::isa_supported(Isa::AVX512)) GTEST_SKIP() << "batched kernels on AVX-512";
  AmxGuard amx_guard;
  for (Batched kern : kBatched) {
    use_batched(kern);
    SCOPED_TRACE(testing::Message() << batched_name(kern));
    // An all-zero activation row (scale 0) between live ones, and a zero block in another row.
    check_matmul(t, Isa::AVX512, 9, block_k(t, 640), 45, 7, [](std::vector<float>& x, int64_t, int64_t k) {
      std::fill(x.begin() + 2 * k, x.begin() + 3 * k, 0.0f);
      std::fill(x.begin() + 4 * k + 64, x.begin() + 4 * k + 96, 0.0f);
    });
    // Rows of huge and small magnitude next to ordinary ones (per-block scales far apart; the small
    // ones keep the f16 scale normal, as the tolerance assumes).
    check_matmul(t, Isa::AVX512, 20, block_k(t, 320), 33, 8, [](std::vector<float>& x, int64_t m, int64_t k) {
      for (int64_t i = 0; i < m; ++i)
        for (int64_t e = 0; e < k; ++e) x[size_t(i * k + e)] *= i % 3 == 0 ? 3e4f : i % 3 == 1 ? 1e-2f : 1.0f;
    });
  }
}

// The formats with a packed layout (matmul/pack.h).
class MatmulPacked : public ::testing::TestWithParam<DType> {};

// Weights packed at load (matmul/pack.h: AVX-512 without AMX, or AVX2) go through the packed
// kernel at every m, including the single-row decode that otherwise takes the row-dot kernels.
TEST_P(MatmulPacked, PackedWeightsMatchReference) {
  const DType t = GetParam();
  const auto paths = packed_paths();
  if (paths.empty()) GTEST_SKIP() << "no packed matmul kernel (AVX2 with BMI2, or AVX-512 VNNI) on this CPU";
  const std::tuple<int64_t, int64_t, int64_t> cases[] = {
      {1, 640, 45}, {1, 96, 1},    {2, 2048, 33}, {3, 96, 16},   {5, 640, 100}, {8, 96, 17},
      {16, 640, 64}, {17, 96, 15}, {33, 640, 45}, {100, 160, 33}, {1, 512, 1000}, {130, 96, 31}};
  for (auto [isa, layout] : paths) {
    if (!backend::cpu::packable(t, layout)) continue;
    SCOPED_TRACE(testing::Message() << "isa " << backend::cpu::isa_name(isa));
    uint32_t seed = 300;
    for (auto [m, k, n] : cases) {
      SCOPED_TRACE(testing::Message() << "m=" << m << " k=" << block_k(t, k) << " n=" << n);
      check_matmul(t, isa, m, block_k(t, k), n, seed++, nullptr, layout);
    }
    // Zero and far-apart activation rows, as in BatchedDecodeEdgeActivations.
    check_matmul(t, isa, 9, block_k(t, 640), 45, 7, [](std::vector<float>& x, int64_t, int64_t k) {
      std::fill(x.begin() + 2 * k, x.begin() + 3 * k, 0.0f);
    }, layout);
    check_matmul(t, isa, 20, block_k(t, 320), 33, 8, [](std::vector<float>& x, int64_t m, int64_t k) {
      for (int64_t i = 0; i < m; ++i)
        for (int64_t e = 0; e < k; ++e) x[size_t(i * k + e)] *= i % 3 == 0 ? 3e4f : i % 3 == 1 ? 1e-2f : 1.0f;
    }, layout);
  }
}

// Random weights [n, k] of type t (w views them) and random activations x [m, k], from `seed`.
struct RandomCase {
  std::vector<uint8_t> wb;
  std::vector<float> x;
  Tensor w;
  RandomCase(DType t, int64_t m, int64_t k, int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    wb = random_weights(t, n, k, rng);
    x = random_x(m, k, rng);
    w = Tensor(t, wb.data(), {n, k});
  }
};

// x [m, k] · w on the current ISA, all rows at once, and each row alone: every row alone must give
// bit-identical outputs (batch invariance). `all` gets the batched result.
void batch_matches_rows_alone(const Tensor& w, float* x, int64_t m, std::vector<float>& all) {
  const int64_t k = w.cols(), n = w.rows();
  all.assign(static_cast<size_t>(m * n), 0.0f);
  std::vector<float> one(static_cast<size_t>(n));
  backend::cpu::matmul(Tensor(DType::F32, x, {m, k}), w, Tensor(DType::F32, all.data(), {m, n}));
  for (int64_t i = 0; i < m; ++i) {
    backend::cpu::matmul(Tensor(DType::F32, x + i * k, {1, k}), w, Tensor(DType::F32, one.data(), {1, n}));
    for (int64_t j = 0; j < n; ++j) ASSERT_EQ(one[size_t(j)], all[size_t(i * n + j)]) << "row " << i << " col " << j;
  }
}

// On packed weights every row is computed by the same code whatever else is in the batch, so a
// row alone and the same row among 20 give bit-identical outputs (batch invariance). The AVX-512
// packed kernel's equal the unpacked panel kernel's, and the AVX2 kernel's equal the AVX-512 one's
// where both run (same integer sums, same summation order).
TEST_P(MatmulPacked, PackedRowsAreBatchInvariantAndEqualAcrossKernels) {
  const DType t = GetParam();
  const auto paths = packed_paths();
  if (paths.empty()) GTEST_SKIP() << "no packed matmul kernel (AVX2 with BMI2, or AVX-512 VNNI) on this CPU";
  const int64_t m = 20, k = block_k(t, 640), n = 45;
  RandomCase c(t, m, k, n, 12);
  const Tensor& tw = c.w;
  float* xs = c.x.data();
  std::vector<std::vector<float>> results;
  for (auto [isa, layout] : paths) {
    if (!backend::cpu::packable(t, layout)) continue;
    SCOPED_TRACE(testing::Message() << "isa " << backend::cpu::isa_name(isa));
    const PackedWeight pw(tw, layout);
    IsaGuard guard;
    backend::cpu::set_isa_override(isa);
    std::vector<float> all;
    batch_matches_rows_alone(pw.tensor, xs, m, all);
    if (HasFatalFailure()) return;
    if (layout == PackLayout::AVX512 && t != DType::F32 && t != DType::BF16) {  // floats: no panel kernel
      std::vector<float> panel(static_cast<size_t>(m * n));
      AmxGuard amx_guard;
      use_batched(Batched::PANEL);
      backend::cpu::set_matmul_amx(false);
      backend::cpu::matmul(Tensor(DType::F32, xs, {m, k}), tw, Tensor(DType::F32, panel.data(), {m, n}));
      for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], panel[i]) << "element " << i;
    }
    results.push_back(std::move(all));
  }
  for (size_t p = 1; p < results.size(); ++p)
    for (size_t i = 0; i < results[0].size(); ++i)
      ASSERT_EQ(results[p][i], results[0][i]) << "AVX2 vs AVX-512 packed kernel, element " << i;
}

// Either layout's rows come back exactly (the unpacking is portable, whatever the CPU).
TEST_P(MatmulPacked, GetRowsOfPackedTableMatchReference) {
  const DType t = GetParam();
  std::mt19937 rng(9);
  const int64_t vocab = 37, dim = block_k(t, 96);  // a partial last group of 16 rows
  std::vector<uint8_t> wb = random_weights(t, vocab, dim, rng);
  const std::vector<int32_t> ids = {0, 36, 15, 16, 31, 32, 7, 7, 1};
  const int64_t num = int64_t(ids.size());
  std::vector<float> ref(size_t(num * dim));
  const Tensor table(t, wb.data(), {vocab, dim});
  backend::reference::get_rows(table, ids.data(), num, Tensor(DType::F32, ref.data(), {num, dim}));
  for (PackLayout layout : {PackLayout::AVX512, PackLayout::AVX2}) {
    if (!backend::cpu::packable(t, layout)) continue;
    SCOPED_TRACE(testing::Message() << "layout " << int(layout));
    std::vector<float> out(size_t(num * dim));
    const PackedWeight pw(table, layout);
    ops::embedding(pw.tensor, host_ids(ids), Tensor(DType::F32, out.data(), {num, dim}));
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], ref[i]) << "element " << i;
  }
}

// The AVX2 kernels on the file's rows (the float formats, Q2_K, Q3_K, MXFP4 and the others when
// unpacked) compute each output alone: a row alone and the same row among 20 give bit-identical
// outputs, with an odd n so the float tile's two-weight-row and one-weight-row paths both run.
TEST_P(MatmulFormat, Avx2RowDotRowsAreBatchInvariant) {
  const DType t = GetParam();
  if (!backend::cpu::isa_supported(Isa::AVX2)) GTEST_SKIP() << "no AVX2";
  const int64_t m = 20, k = block_k(t, 640), n = 45;
  RandomCase c(t, m, k, n, 21);
  IsaGuard guard;
  backend::cpu::set_isa_override(Isa::AVX2);
  std::vector<float> all;
  batch_matches_rows_alone(c.w, c.x.data(), m, all);
}

// The threads split the output columns into chunks claimed at run time, which shrink as the work
// runs out; every column must be computed exactly once and by the same code, so any thread count
// gives the 1-thread result bit for bit: file rows and, where this CPU packs the format, the packed
// copy. n = 3000 (no multiple of 16) makes several chunks at every m, also at m = 1 where a chunk
// is ≥ 256 KiB of weights.
TEST_P(MatmulFormat, EveryThreadCountGivesTheSameResult) {
  const DType t = GetParam();
  const int64_t k = block_k(t, 256), n = 3000, m_max = 17;
  RandomCase c(t, m_max, k, n, 31);
  const Tensor& tw = c.w;
  std::optional<PackedWeight> pw;
  if (backend::cpu::matmul_packs(t)) pw.emplace(tw, backend::cpu::matmul_pack_layout(t));
  struct Restore {
    ~Restore() { ThreadPool::set_global_threads(int(std::thread::hardware_concurrency())); }
  } restore;
  for (const Tensor* w : {&tw, pw ? static_cast<const Tensor*>(&pw->tensor) : nullptr}) {
    if (!w) continue;
    for (int64_t m : {1, 3, 17}) {
      std::vector<float> one_thread;
      for (int threads : {1, 2, 3, 5}) {
        SCOPED_TRACE(testing::Message() << (w == &tw ? "file rows" : "packed") << ", m " << m << ", threads "
                                        << threads);
        ThreadPool::set_global_threads(threads);
        std::vector<float> y(size_t(m * n), std::nanf(""));
        backend::cpu::matmul(Tensor(DType::F32, c.x.data(), {m, k}), *w,
                             Tensor(DType::F32, y.data(), {m, n}));
        if (threads == 1) {
          one_thread = y;
          for (size_t i = 0; i < y.size(); ++i) ASSERT_FALSE(std::isnan(y[i])) << "element " << i << " unwritten";
        } else {
          for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], one_thread[i]) << "element " << i;
        }
      }
    }
  }
}

// The weight as the loader leaves it on this CPU (packed where matmul_pack_layout says, on the best
// ISA and default kernel switches): every row of a batch equals the row alone, at batch sizes on
// both sides of every size where a kernel used to be swapped for another (AVX-512: row-dot below 8
// rows, panel from 8, AMX-INT8 from 4-6 to 383, AMX-BF16 from 16 / 128 / 384), so a decode step
// alone and the same step among others give the same logits.
TEST_P(MatmulFormat, LoadedWeightRowsAreBatchInvariantAtEverySize) {
  const DType t = GetParam();
  const int64_t k = block_k(t, 512), n = 40;
  RandomCase c(t, 400, k, n, 41);
  std::optional<PackedWeight> pw;
  if (backend::cpu::matmul_packs(t)) pw.emplace(c.w, backend::cpu::matmul_pack_layout(t));
  const Tensor& w = pw ? pw->tensor : c.w;
  for (int64_t m : {3, 4, 7, 8, 16, 130, 400}) {
    SCOPED_TRACE(testing::Message() << "m " << m << (pw ? ", packed" : ", file rows"));
    std::vector<float> all;
    batch_matches_rows_alone(w, c.x.data(), m, all);
    if (HasFatalFailure()) return;
  }
}

TEST_P(MatmulFormat, GetRowsMatchesReference) {
  const DType t = GetParam();
  std::mt19937 rng(7);
  const int64_t vocab = 50, dim = 512;
  std::vector<uint8_t> wb = random_weights(t, vocab, dim, rng);
  const std::vector<int32_t> ids = {0, 49, 7, 7, 23, 1, 48, 30, 12};
  const int64_t num = int64_t(ids.size());
  std::vector<float> out(size_t(num * dim)), ref(size_t(num * dim));
  Tensor table(t, wb.data(), {vocab, dim});
  backend::reference::get_rows(table, ids.data(), num, Tensor(DType::F32, ref.data(), {num, dim}));
  ops::embedding(table, host_ids(ids), Tensor(DType::F32, out.data(), {num, dim}));
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], ref[i]) << "element " << i;
}

// matmul_grouped (the experts of a MoE layer) against one matmul per group on the same rows: the
// results must be bit-identical (same kernel, same summation, whatever the grouping), empty groups
// are skipped, and both lists share the prepared rows. lists[l][g] is list l's weight of group g.
void grouped_matches_per_group(const std::vector<std::vector<Tensor>>& lists, const std::vector<int64_t>& offsets,
                               uint32_t seed) {
  const int64_t G = int64_t(offsets.size()) - 1, N = offsets.back(), k = lists[0][0].cols();
  std::mt19937 rng(seed);
  std::vector<float> x = random_x(N, k, rng);
  std::vector<std::vector<float>> got(lists.size()), want(lists.size());
  std::vector<std::vector<const Tensor*>> ptrs(lists.size());
  std::vector<backend::cpu::MatmulGroupList> gl;
  for (size_t l = 0; l < lists.size(); ++l) {
    const int64_t n = lists[l][0].rows();
    got[l].assign(size_t(N * n), -1.0f);
    want[l].assign(size_t(N * n), -2.0f);
    for (const Tensor& w : lists[l]) ptrs[l].push_back(&w);
    gl.push_back({ptrs[l].data(), Tensor(DType::F32, got[l].data(), {N, n})});
    for (int64_t g = 0; g < G; ++g) {
      const int64_t r0 = offsets[size_t(g)], m = offsets[size_t(g) + 1] - r0;
      if (m > 0)
        backend::cpu::matmul(Tensor(DType::F32, x.data() + r0 * k, {m, k}), lists[l][size_t(g)],
                             Tensor(DType::F32, want[l].data() + r0 * n, {m, n}));
    }
  }
  backend::cpu::matmul_grouped(Tensor(DType::F32, x.data(), {N, k}), offsets.data(), G, gl.data(), int(gl.size()));
  for (size_t l = 0; l < lists.size(); ++l)
    for (size_t i = 0; i < got[l].size(); ++i) ASSERT_EQ(got[l][i], want[l][i]) << "list " << l << " element " << i;
}

// Group sizes of a decode step (one row each, some experts idle) and of a prefill chunk.
const std::vector<std::vector<int64_t>> kGroupOffsets = {{0, 1, 1, 2, 3, 3}, {0, 3, 3, 4, 10, 12, 29}};

TEST_P(MatmulFormat, GroupedEqualsOneMatmulPerGroup) {
  const DType t = GetParam();
  const int64_t k = block_k(t, 256);
  for (Isa isa : isas()) {
    SCOPED_TRACE(testing::Message() << "isa " << backend::cpu::isa_name(isa));
    IsaGuard guard;
    backend::cpu::set_isa_override(isa);
    for (const auto& off : kGroupOffsets) {
      const size_t G = off.size() - 1;
      std::mt19937 rng(static_cast<uint32_t>(G));
      std::vector<std::vector<uint8_t>> bytes;
      std::vector<std::vector<Tensor>> lists(2);
      for (size_t l = 0; l < 2; ++l)
        for (size_t g = 0; g < G; ++g) {
          const int64_t n = l == 0 ? 48 : 80;  // lists of different widths (as gate/up vs down are)
          bytes.push_back(random_weights(t, n, k, rng));
          lists[l].push_back(Tensor(t, bytes.back().data(), {n, k}));
        }
      grouped_matches_per_group(lists, off, 7);
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(MatmulPacked, GroupedReadsThePackedCopies) {
  const DType t = GetParam();
  const auto paths = packed_paths();
  if (paths.empty()) GTEST_SKIP() << "no packed matmul kernel on this CPU";
  const int64_t k = block_k(t, 256), n = 64;
  const auto& off = kGroupOffsets[1];
  for (auto [isa, layout] : paths) {
    if (!backend::cpu::packable(t, layout)) continue;
    SCOPED_TRACE(testing::Message() << "isa " << backend::cpu::isa_name(isa));
    std::mt19937 rng(3);
    std::vector<std::vector<uint8_t>> bytes;
    std::vector<std::unique_ptr<PackedWeight>> packed;
    std::vector<std::vector<Tensor>> lists(1);
    for (size_t g = 0; g + 1 < off.size(); ++g) {
      bytes.push_back(random_weights(t, n, k, rng));
      packed.push_back(std::make_unique<PackedWeight>(Tensor(t, bytes.back().data(), {n, k}), layout));
      lists[0].push_back(packed.back()->tensor);
    }
    IsaGuard guard;
    backend::cpu::set_isa_override(isa);
    grouped_matches_per_group(lists, off, 9);
    if (HasFatalFailure()) return;
  }
}

// MXFP4's e8m0 scales over their range (e = 0 is 2^-128, below f32's normal range; the random
// weights above use 118..125 only): the packed kernels convert them each their own way (AVX-512
// vscalefps, AVX2 an exponent shift), and must equal the unpacked panel kernel bit for bit and the
// reference within the activation quantization's bound. The top exponents are left out: their
// products overflow f32 on every path alike.
TEST(MatmulPackedMxfp4, EveryScaleExponentMatchesAcrossKernels) {
  const auto paths = packed_paths();
  if (paths.empty()) GTEST_SKIP() << "no packed matmul kernel on this CPU";
  const DType t = DType::MXFP4;
  const int64_t m = 5, k = 640, n = 40, nb = k / 32;
  std::mt19937 rng(21);
  std::vector<uint8_t> wb = random_weights(t, n, k, rng);
  constexpr uint8_t kExps[] = {0, 1, 2, 3, 40, 100, 126, 127, 128, 129, 150, 180, 200};
  for (int64_t j = 0; j < n; ++j)
    for (int64_t b = 0; b < nb; ++b)  // rows 0..12: one exponent each; the others mix them per block
      wb[size_t(j * nb + b) * 17] = kExps[j < 13 ? j : (j * 7 + b * 3) % 13];
  std::vector<float> x = random_x(m, k, rng), ref(size_t(m * n)), bound(size_t(m * n));
  const Tensor tw(t, wb.data(), {n, k}), tx(DType::F32, x.data(), {m, k});
  backend::reference::matmul(tx, tw, Tensor(DType::F32, ref.data(), {m, n}));
  std::vector<float> wf(static_cast<size_t>(k));
  for (int64_t j = 0; j < n; ++j) {
    dequantize_row(t, wb.data() + j * tw.row_bytes(), wf.data(), k);
    for (int64_t i = 0; i < m; ++i) {
      double b = 0;
      for (int64_t blk = 0; blk < nb; ++blk) {
        double amax = 0, wsum = 0;
        for (int64_t e = 32 * blk; e < 32 * blk + 32; ++e) {
          amax = std::max(amax, double(std::fabs(x[size_t(i * k + e)])));
          wsum += std::fabs(wf[size_t(e)]);
        }
        b += wsum * amax * (1.0 / 254.0 + 1.0 / 2048.0);
      }
      bound[size_t(i * n + j)] = float(b * 1.001 + 1e-40);
    }
  }
  std::vector<std::vector<float>> results;
  for (auto [isa, layout] : paths) {
    SCOPED_TRACE(testing::Message() << "isa " << backend::cpu::isa_name(isa));
    const PackedWeight pw(tw, layout);
    IsaGuard guard;
    backend::cpu::set_isa_override(isa);
    std::vector<float> y(size_t(m * n), std::nanf(""));
    backend::cpu::matmul(tx, pw.tensor, Tensor(DType::F32, y.data(), {m, n}));
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_LE(std::fabs(double(y[i]) - double(ref[i])), double(bound[i]))
          << "output " << i << " (row " << i % size_t(n) << "): " << y[i] << " vs reference " << ref[i];
    if (layout == PackLayout::AVX512) {
      std::vector<float> panel(y.size());
      AmxGuard amx_guard;
      use_batched(Batched::PANEL);
      backend::cpu::set_matmul_amx(false);
      backend::cpu::matmul(tx, tw, Tensor(DType::F32, panel.data(), {m, n}));
      for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], panel[i]) << "packed vs file-row panel, output " << i;
    }
    results.push_back(std::move(y));
  }
  for (size_t p = 1; p < results.size(); ++p)
    for (size_t i = 0; i < results[0].size(); ++i)
      ASSERT_EQ(results[p][i], results[0][i]) << "AVX2 vs AVX-512 packed kernel, output " << i;
}

INSTANTIATE_TEST_SUITE_P(AllFormats, MatmulFormat, ::testing::ValuesIn(kFormats),
                         [](const testing::TestParamInfo<DType>& p) { return std::string(dtype_name(p.param)); });
INSTANTIATE_TEST_SUITE_P(PackableFormats, MatmulPacked,
                         ::testing::Values(DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0,
                                           DType::IQ4_NL, DType::MXFP4, DType::Q4_K, DType::Q5_K, DType::Q6_K,
                                           DType::IQ4_XS, DType::F32, DType::BF16),
                         [](const testing::TestParamInfo<DType>& p) { return std::string(dtype_name(p.param)); });

// The float layouts take any k (the other tests use multiples of 256): BF16's pairs with an odd
// k end in a half pair, F32's has no blocks at all.
TEST(MatmulPackedFloat, AnyDepth) {
  const auto paths = packed_paths();
  for (auto [isa, layout] : paths) {
    if (layout != PackLayout::AVX512) continue;
    for (DType t : {DType::F32, DType::BF16}) {
      uint32_t seed = 40;
      for (int64_t k : {1, 2, 3, 31, 33, 97, 383})
        for (auto [m, n] : {std::pair<int64_t, int64_t>{1, 5}, {7, 45}, {13, 16}}) {
          SCOPED_TRACE(testing::Message() << dtype_name(t) << " m=" << m << " k=" << k << " n=" << n);
          check_matmul(t, isa, m, k, n, seed++, nullptr, layout);
        }
    }
  }
}

TEST(MatmulOps, LeadingDimsFlatten) {
  std::mt19937 rng(3);
  std::vector<uint8_t> wb = random_weights(DType::Q4_0, 9, 64, rng);
  std::vector<float> x = random_x(6, 64, rng), y(6 * 9), ref(6 * 9);
  Tensor tw(DType::Q4_0, wb.data(), {9, 64});
  ops::matmul(Tensor(DType::F32, x.data(), {2, 3, 64}), tw, Tensor(DType::F32, y.data(), {2, 3, 9}));
  backend::reference::matmul(Tensor(DType::F32, x.data(), {6, 64}), tw, Tensor(DType::F32, ref.data(), {6, 9}));
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], ref[i], 0.05 * std::fabs(ref[i]) + 0.05);
}

TEST(MatmulOps, RejectsBadInput) {
  std::vector<float> x(4 * 64), y(4 * 8);
  std::vector<uint8_t> w(8 * 36 * 2);
  auto code = [](auto fn) {
    try {
      fn();
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::INTERNAL;
  };
  Tensor tx(DType::F32, x.data(), {4, 64}), ty(DType::F32, y.data(), {4, 8});
  // k mismatch
  EXPECT_EQ(code([&] { ops::matmul(tx, Tensor(DType::Q8_0, w.data(), {8, 32}), ty); }), ErrorCode::INVALID_ARGUMENT);
  // k not a multiple of the block
  EXPECT_EQ(code([&] { ops::matmul(Tensor(DType::F32, x.data(), {4, 48}), Tensor(DType::Q8_0, w.data(), {8, 48}), ty); }),
            ErrorCode::INVALID_ARGUMENT);
  // unsupported weight dtype
  EXPECT_EQ(code([&] { ops::matmul(tx, Tensor(DType::I32, w.data(), {8, 64}), ty); }), ErrorCode::UNSUPPORTED);
  // non-F32 activations
  EXPECT_EQ(code([&] { ops::matmul(Tensor(DType::F16, x.data(), {4, 64}), Tensor(DType::Q8_0, w.data(), {8, 64}), ty); }),
            ErrorCode::INVALID_ARGUMENT);
  // embedding id out of range
  const std::vector<int32_t> ids = {0, 8};
  std::vector<float> out(2 * 64);
  EXPECT_EQ(code([&] { ops::embedding(Tensor(DType::Q8_0, w.data(), {8, 64}), host_ids(ids), Tensor(DType::F32, out.data(), {2, 64})); }),
            ErrorCode::INVALID_ARGUMENT);
  const std::vector<int32_t> neg = {-1};
  EXPECT_EQ(code([&] { ops::embedding(Tensor(DType::Q8_0, w.data(), {8, 64}), host_ids(neg), Tensor(DType::F32, out.data(), {1, 64})); }),
            ErrorCode::INVALID_ARGUMENT);
}

// matmul_same_x (a layer's q/k/v, gate/up) gives each output exactly what matmul gives it, and
// checks every pair as matmul does.
TEST(MatmulSameX, EqualsSeparateMatmulsAndChecksEveryPair) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  const int64_t m = 3, k = 256;
  std::vector<float> x(size_t(m * k)), wf(size_t(40 * k));
  for (float& v : x) v = dist(rng);
  for (float& v : wf) v = dist(rng);
  std::vector<uint8_t> wq(size_t(24 * dtype_row_bytes(DType::Q4_K, k)));
  for (int64_t r = 0; r < 24; ++r)
    quantize_row(DType::Q4_K, wf.data() + r * k, wq.data() + r * dtype_row_bytes(DType::Q4_K, k), k);
  const Tensor tx(DType::F32, x.data(), {m, k});
  const Tensor w1(DType::Q4_K, wq.data(), {24, k}), w2(DType::F32, wf.data(), {16, k});
  std::vector<float> y1(size_t(m * 24)), y2(size_t(m * 16)), r1(y1.size()), r2(y2.size());
  const Tensor t1(DType::F32, y1.data(), {m, 24}), t2(DType::F32, y2.data(), {m, 16});
  ops::matmul_same_x(tx, {{&w1, &t1}, {&w2, &t2}});
  ops::matmul(tx, w1, Tensor(DType::F32, r1.data(), {m, 24}));
  ops::matmul(tx, w2, Tensor(DType::F32, r2.data(), {m, 16}));
  EXPECT_EQ(std::memcmp(y1.data(), r1.data(), y1.size() * 4), 0);
  EXPECT_EQ(std::memcmp(y2.data(), r2.data(), y2.size() * 4), 0);
  const Tensor bad(DType::F32, y2.data(), {m, 15});  // the second pair's shape is wrong
  EXPECT_THROW(ops::matmul_same_x(tx, {{&w1, &t1}, {&w2, &bad}}), Error);
  const Tensor over(DType::F32, x.data(), {m, 16});  // an output on top of x
  EXPECT_THROW(ops::matmul_same_x(tx, {{&w2, &over}}), Error);
}

TEST(MatmulIsa, ForcingNeverRaisesAboveWhatTheCpuHas) {
  EXPECT_TRUE(backend::cpu::isa_supported(backend::cpu::detected_isa()));
  IsaGuard guard;
  for (Isa i : {Isa::SCALAR, Isa::AVX2, Isa::AVX512}) {
    backend::cpu::set_isa_override(i);
    EXPECT_LE(int(backend::cpu::active_isa()), int(i));
    EXPECT_LE(int(backend::cpu::active_isa()), int(backend::cpu::detected_isa()));
  }
}

}  // namespace
}  // namespace oxyd
