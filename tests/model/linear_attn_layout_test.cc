// model/linear_attn_layout.h: GGUF Gated DeltaNet tensors with tiled value heads restored to the
// Hugging Face order. The forward transform is written here from llama.cpp's converter
// (_LinearAttentionVReorderBase: value-head axis viewed as [Hk, r, per_head], its first two axes
// swapped), so the test checks that the load-time copies invert it, for whole rows (any dtype),
// columns in whole Q8_0 blocks (bytes equal to quantizing the HF rows) and columns that split a
// block (dequantized to F32).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/quant.h"
#include "model/linear_attn_layout.h"

namespace oxyd::model {
namespace {

// The converter's order: tiled position (vi, ki) holds HF head (ki, vi).
std::vector<int64_t> converter_source_heads(int64_t hk, int64_t hv) {
  const int64_t r = hv / hk;
  std::vector<int64_t> src;  // src[tiled position] = HF head
  for (int64_t vi = 0; vi < r; ++vi)
    for (int64_t ki = 0; ki < hk; ++ki) src.push_back(ki * r + vi);
  return src;
}

std::vector<float> random(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

TEST(LinearAttnLayout, RowsInvertTheConverter) {
  const int64_t hk = 2, hv = 6, per = 3, first = 4, tail = 2, cols = 5, rows = first + hv * per + tail;
  const auto hf = random(size_t(rows * cols), 1);
  const auto src = converter_source_heads(hk, hv);
  std::vector<float> gguf = hf;
  for (int64_t j = 0; j < hv; ++j)
    for (int64_t i = 0; i < per * cols; ++i) gguf[(first + j * per) * cols + i] = hf[(first + src[j] * per) * cols + i];
  ASSERT_NE(gguf, hf);
  Tensor t(DType::F32, gguf.data(), {rows, cols});
  std::vector<float> out(hf.size());
  rows_from_tiled(t, first, per, hk, hv, out.data());
  EXPECT_EQ(out, hf);
  std::vector<float> v(hv * 2), back(hv * 2), vin = random(size_t(hv * 2), 2);
  for (int64_t j = 0; j < hv; ++j)
    for (int64_t i = 0; i < 2; ++i) v[j * 2 + i] = vin[src[j] * 2 + i];
  vec_from_tiled(v.data(), 2, hk, hv, back.data());
  EXPECT_EQ(back, vin);
}

// ssm_out [rows, hv·dv]: the converter tiles its columns, then the file quantizes each row.
void check_cols(int64_t dv, bool whole_blocks) {
  const int64_t hk = 2, hv = 4, rows = 3, cols = hv * dv;
  const auto hf = random(size_t(rows * cols), 3);
  const auto src = converter_source_heads(hk, hv);
  std::vector<float> tiled(hf.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < hv; ++j)
      for (int64_t e = 0; e < dv; ++e) tiled[i * cols + j * dv + e] = hf[i * cols + src[j] * dv + e];
  const int64_t rb = dtype_row_bytes(DType::Q8_0, cols);
  std::vector<uint8_t> q(size_t(rows * rb));
  for (int64_t i = 0; i < rows; ++i) quantize_row(DType::Q8_0, tiled.data() + i * cols, q.data() + i * rb, cols);
  Tensor t(DType::Q8_0, q.data(), {rows, cols});
  ASSERT_EQ(cols_from_tiled_dtype(t, dv), whole_blocks ? DType::Q8_0 : DType::F32);
  if (whole_blocks) {  // each block lies in one head: the bytes of quantizing the HF rows
    std::vector<uint8_t> out(q.size()), want(q.size());
    cols_from_tiled(t, dv, hk, hv, out.data());
    for (int64_t i = 0; i < rows; ++i) quantize_row(DType::Q8_0, hf.data() + i * cols, want.data() + i * rb, cols);
    EXPECT_EQ(out, want);
    return;
  }
  std::vector<float> deq(hf.size()), want(hf.size()), out(hf.size());
  for (int64_t i = 0; i < rows; ++i) dequantize_row(DType::Q8_0, q.data() + i * rb, deq.data() + i * cols, cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < hv; ++j)
      for (int64_t e = 0; e < dv; ++e) want[i * cols + src[j] * dv + e] = deq[i * cols + j * dv + e];
  cols_from_tiled(t, dv, hk, hv, out.data());
  EXPECT_EQ(out, want);
}

TEST(LinearAttnLayout, ColumnsInWholeBlocksKeepTheFormat) { check_cols(64, true); }
TEST(LinearAttnLayout, ColumnsSplittingABlockAreDequantized) { check_cols(16, false); }

}  // namespace
}  // namespace oxyd::model
