// The op front ends reject bad input with an oxyd::Error that names the op and the argument,
// before any kernel runs: wrong dtype/shape/rank, mixed devices, CUDA (not wired), and batch
// metadata that would make attention read or write outside the cache.
#include <gtest/gtest.h>

#include <functional>

#include "core/error.h"
#include "op_test_util.h"
#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/elementwise.h"
#include "ops/rms_norm.h"
#include "ops/rope.h"
#include "ops/softmax.h"

namespace oxyd::test {
namespace {

void expect_error(const std::function<void()>& fn, ErrorCode code, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one mentioning \"" << needle << "\"";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}
const ErrorCode kInvalid = ErrorCode::INVALID_ARGUMENT;

TEST(OpsErrors, NormsElementwiseActivations) {
  HostTensor x(DType::F32, {4, 8}), y(x.t), w(DType::F32, {8}), w7(DType::F32, {7}), xb(DType::BF16, {4, 8});
  HostTensor y5(DType::F32, {5, 8}), v(DType::F32, {8}), v3(DType::F32, {3}), gu(DType::F32, {4, 15});
  expect_error([&] { ops::rms_norm(xb.t, &w.t, 1e-6f, y.t); }, kInvalid, "ops::rms_norm: x must be F32, got BF16");
  expect_error([&] { ops::rms_norm(x.t, &w7.t, 1e-6f, y.t); }, kInvalid, "weight");
  expect_error([&] { ops::rms_norm(x.t, &w.t, 1e-6f, y5.t); }, kInvalid, "y must have the shape of x");
  expect_error([&] { ops::rms_norm(x.t, &w.t, -1.0f, y.t); }, kInvalid, "eps");
  expect_error([&] { ops::layer_norm(x.t, &w.t, &w7.t, 1e-5f, y.t); }, kInvalid, "bias");
  expect_error([&] { ops::add(x.t, v3.t, y.t); }, kInvalid, "ops::add: b");
  expect_error([&] { ops::mul(x.t, y5.t, y.t); }, kInvalid, "ops::mul");
  expect_error([&] { ops::softcap(x.t, 0.0f, y.t); }, kInvalid, "cap");
  expect_error([&] { ops::softmax(x.t, y5.t); }, kInvalid, "ops::softmax");
  expect_error([&] { ops::glu_fused(ops::Activation::SILU, gu.t, y.t); }, kInvalid, "2 × the last dim of y");
  expect_error([&] { ops::glu(ops::Activation::SILU, x.t, y5.t, y.t); }, kInvalid, "up");
  Tensor no_data = x.t;
  no_data.data = nullptr;
  expect_error([&] { ops::scale(no_data, 2.0f, y.t); }, kInvalid, "no data pointer");
}

TEST(OpsErrors, DevicesAndCuda) {
  HostTensor x(DType::F32, {4, 8}), y(x.t);
  Tensor xc = x.t, yc = y.t;
  xc.device = yc.device = Device::CUDA;
  expect_error([&] { ops::softmax(xc, yc); }, ErrorCode::UNSUPPORTED, "CUDA backend is not wired");
  expect_error([&] { ops::softmax(xc, y.t); }, kInvalid, "different devices");
}

TEST(OpsErrors, Rope) {
  HostTensor x(DType::F32, {3, 2, 64}), y(x.t), pos(DType::I32, {3}), pos2(DType::I32, {2});
  HostTensor freq(DType::F32, {16}), big(DType::F32, {33}), ff(DType::F32, {8}), posf(DType::F32, {3});
  HostTensor huge(DType::F32, {1, 1, 2048}), hugepos(DType::I32, {1});
  const auto neox = ops::RopeStyle::NEOX;
  expect_error([&] { ops::rope(x.t, pos2.t, freq.t, nullptr, neox, 1, y.t); }, kInvalid, "positions");
  expect_error([&] { ops::rope(x.t, posf.t, freq.t, nullptr, neox, 1, y.t); }, kInvalid, "positions must be I32");
  expect_error([&] { ops::rope(x.t, pos.t, big.t, nullptr, neox, 1, y.t); }, kInvalid, "rot_dim");
  expect_error([&] { ops::rope(x.t, pos.t, freq.t, &ff.t, neox, 1, y.t); }, kInvalid, "freq_factors");
  expect_error([&] { ops::rope(huge.t, hugepos.t, freq.t, nullptr, neox, 1, huge.t); }, kInvalid, "head_dim must be ≤ 1024");
}

// A valid 2-request batch (block_size 4, 6 blocks) that each test breaks in one way.
struct AttnFixture {
  HostTensor q{DType::F32, {3, 4, 16}}, out{DType::F32, {3, 4, 16}};
  HostTensor kc{DType::F16, {6, 4, 2, 16}}, vc{DType::F16, {6, 4, 2, 16}};
  HostTensor qsl{DType::I32, {3}}, seq{DType::I32, {2}}, table{DType::I32, {2, 3}}, sinks{DType::F32, {4}};
  AttnFixture() {
    std::memset(q.buf.data(), 0, q.buf.size()), std::memset(kc.buf.data(), 0, kc.buf.size());
    std::memset(vc.buf.data(), 0, vc.buf.size());
    const int32_t qs[] = {0, 2, 3}, sl[] = {6, 9}, bt[] = {5, 0, -1, 1, 2, 3};
    std::copy(qs, qs + 3, qsl.i()), std::copy(sl, sl + 2, seq.i()), std::copy(bt, bt + 6, table.i());
  }
  ops::AttentionParams params() const {
    ops::AttentionParams p;
    p.q = q.t, p.out = out.t, p.k_cache = kc.t, p.v_cache = vc.t;
    p.query_start_loc = qsl.t, p.seq_lens = seq.t, p.block_table = table.t, p.scale = 0.25f;
    p.kv_format = KvFormat::F16;
    return p;
  }
};

TEST(OpsErrors, PagedAttention) {
  AttnFixture f;
  ops::paged_attention(f.params());  // the fixture itself is valid
  auto run = [&](auto mutate) {
    return [&f, mutate] {
      ops::AttentionParams p = f.params();
      mutate(p);
      ops::paged_attention(p);
    };
  };
  expect_error(run([&](ops::AttentionParams&) { f.table.i()[1] = 6; }), kInvalid, "block_table[1] = 6");
  f.table.i()[1] = 0;
  expect_error(run([&](ops::AttentionParams&) { f.seq.i()[0] = 1; }), kInvalid, "less than its query_len");
  expect_error(run([&](ops::AttentionParams&) { f.seq.i()[0] = 13; }), kInvalid, "exceeds max_blocks_per_req");
  f.seq.i()[0] = 6;
  expect_error(run([&](ops::AttentionParams&) { f.qsl.i()[2] = 4; }), kInvalid, "num_tokens");
  f.qsl.i()[2] = 3;
  expect_error(run([&](ops::AttentionParams& p) { p.out = p.q; }), kInvalid, "must not alias q");
  expect_error(run([&](ops::AttentionParams& p) { p.sinks = f.sinks.t, p.sinks.shape[0] = 3; }), kInvalid, "sinks");
  expect_error(run([&](ops::AttentionParams& p) { p.v_cache.dtype = DType::BF16; }), kInvalid, "v_cache must be F16");
  expect_error(run([&](ops::AttentionParams& p) { p.k_cache.dtype = p.v_cache.dtype = DType::Q8_0; }), kInvalid, "F32, F16 or BF16");
  expect_error(run([&](ops::AttentionParams& p) { p.q.shape[1] = 3, p.out.shape[1] = 3; }), kInvalid, "multiple of num_kv_heads");
  expect_error(run([&](ops::AttentionParams& p) { p.sliding_window = -1; }), kInvalid, "sliding_window");
  expect_error(run([&](ops::AttentionParams& p) { p.sliding_window = 4, p.causal = false; }), kInvalid,
               "needs causal");
  // With a window, blocks wholly before it are never read, so they may be unassigned (−1).
  f.table.i()[3] = -1;
  expect_error(run([&](ops::AttentionParams&) {}), kInvalid, "block_table[0] = -1");
  ops::AttentionParams p = f.params();
  p.sliding_window = 3;  // request 1: queries at position 8 see keys 6..8 → blocks 1, 2 only
  ops::paged_attention(p);
}

TEST(OpsErrors, ReshapeAndCache) {
  HostTensor k(DType::F32, {2, 2, 16}), v(k.t), kc(DType::BF16, {3, 4, 2, 16}), vc(kc.t), slots(DType::I32, {2});
  HostTensor k3(DType::F32, {2, 3, 16});
  slots.i()[0] = 0, slots.i()[1] = 12;  // 3 blocks · 4 = 12 slots → 12 is out of range
  expect_error([&] { ops::reshape_and_cache(k.t, v.t, kc.t, vc.t, slots.t, KvFormat::BF16); }, kInvalid, "slot_mapping[1] = 12");
  slots.i()[1] = -1;
  ops::reshape_and_cache(k.t, v.t, kc.t, vc.t, slots.t, KvFormat::BF16);  // negative = skip: fine
  expect_error([&] { ops::reshape_and_cache(k3.t, k3.t, kc.t, vc.t, slots.t, KvFormat::BF16); }, kInvalid, "num_kv_heads");
}

}  // namespace
}  // namespace oxyd::test
