// Quantized checkpoint linears: discovery by suffix, sizes, and the one-time repack (see
// quant_checkpoint.h; layouts in core/quant_repack.h).
#include "loader/quant_checkpoint.h"

#include <algorithm>
#include <unordered_map>

#include "core/error.h"
#include "core/quant.h"
#include "core/quant_repack.h"

namespace oxyd::loader {
namespace {

bool ends_with(const std::string& s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

std::string shape_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

int64_t desc_bytes(const TensorDesc& t) {
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  return dtype_row_bytes(t.dtype, n);
}

[[noreturn]] void bad(const ModelConfig& c, const std::string& name, const std::vector<int64_t>& shape,
                      const std::string& want) {
  throw Error(ErrorCode::INVALID_ARGUMENT,
              c.source + ": quantized tensor '" + name + "' has shape " + shape_str(shape) + ", expected " + want);
}

// An int4 checkpoint's group size for `cols` inputs (-1 or 0: one group per row).
int64_t group_of(const QuantizationConfig& q, int64_t cols) { return q.group_size > 0 ? q.group_size : cols; }

// Views a tensor's values as f32 (scales are F16 / BF16 / F32 in the checkpoints).
std::vector<float> floats(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  dequantize_row(t.dtype, t.data, v.data(), t.numel());
  return v;
}

const int32_t* ints(const Tensor& t, const std::string& name) {
  if (t.dtype != DType::I32)
    throw Error(ErrorCode::INVALID_ARGUMENT, "quantized tensor '" + name + "' has dtype " +
                                                 std::string(dtype_name(t.dtype)) + ", expected I32");
  return t.ptr<int32_t>();
}

}  // namespace

std::vector<int64_t> QuantizedLinear::shape() const {
  return experts > 0 ? std::vector<int64_t>{experts, rows, cols} : std::vector<int64_t>{rows, cols};
}

std::string QuantizedLinear::bound_name() const {
  return experts > 0 && scheme != QuantScheme::FP8_BLOCK ? module : module + ".weight";
}

std::vector<QuantizedLinear> quantized_linears(const ModelConfig& c, const std::vector<TensorDesc>& tensors) {
  std::vector<QuantizedLinear> out;
  if (!c.quantization_config) return out;
  const QuantizationConfig& qc = *c.quantization_config;
  const bool fp8 = qc.quant_method == "fp8", awq = qc.quant_method == "awq", gptq = qc.quant_method == "gptq";
  if (!fp8 && !awq && !gptq) return out;
  if ((awq || gptq) && qc.bits != 4)
    throw Error(ErrorCode::UNSUPPORTED, c.source + ": quantization_config.bits = " + std::to_string(qc.bits) +
                                            " (" + qc.quant_method + "): only 4-bit weights are read");
  if (awq && !qc.version.empty() && qc.version != "gemm" && qc.version != "GEMM")
    throw Error(ErrorCode::UNSUPPORTED, c.source + ": quantization_config.version = '" + qc.version +
                                            "': only AutoAWQ's GEMM layout is read");
  std::unordered_map<std::string, const TensorDesc*> by_name;
  for (const TensorDesc& t : tensors) by_name.emplace(t.name, &t);
  auto need = [&](const std::string& name) -> const TensorDesc& {
    auto it = by_name.find(name);
    if (it == by_name.end())
      throw Error(ErrorCode::INVALID_ARGUMENT, c.source + ": quantized tensor '" + name + "' is missing");
    return *it->second;
  };
  auto check = [&](const TensorDesc& t, const std::vector<int64_t>& want) {
    if (t.shape != want) bad(c, t.name, t.shape, shape_str(want));
  };
  for (const TensorDesc& t : tensors) {
    QuantizedLinear q;
    if (fp8 && ends_with(t.name, ".weight_scale_inv")) {
      q.scheme = QuantScheme::FP8_BLOCK;
      q.module = t.name.substr(0, t.name.size() - 17);
      const TensorDesc& w = need(q.module + ".weight");
      if (w.dtype != DType::F8_E4M3 || (w.shape.size() != 2 && w.shape.size() != 3))
        bad(c, w.name, w.shape, "an F8_E4M3 matrix or stack of matrices");
      const int64_t br = qc.weight_block_size.empty() ? 128 : qc.weight_block_size[0];
      const int64_t bc = qc.weight_block_size.empty() ? 128 : qc.weight_block_size[1];
      q.experts = w.shape.size() == 3 ? w.shape[0] : 0;
      q.rows = w.shape[w.shape.size() - 2], q.cols = w.shape.back();
      std::vector<int64_t> want{(q.rows + br - 1) / br, (q.cols + bc - 1) / bc};
      if (q.experts) want.insert(want.begin(), q.experts);
      check(t, want);
      q.sources = {w.name, t.name};
      q.repacked = DType::Q8_0;
    } else if ((awq || gptq) && ends_with(t.name, ".qweight")) {
      q.scheme = awq ? QuantScheme::AWQ : QuantScheme::GPTQ;
      q.module = t.name.substr(0, t.name.size() - 8);
      if (t.shape.size() != 2 && t.shape.size() != 3) bad(c, t.name, t.shape, "a matrix or a stack of matrices");
      // AWQ: [in, out/8]; GPTQ: [in/8, out]; stacked experts: [E, ...] of either.
      q.experts = t.shape.size() == 3 ? t.shape[0] : 0;
      const int64_t a = t.shape[t.shape.size() - 2], b = t.shape.back();
      q.cols = awq ? a : a * 8;
      q.rows = awq ? b * 8 : b;
      const int64_t g = group_of(qc, q.cols), groups = (q.cols + g - 1) / g;
      auto stacked = [&](std::vector<int64_t> v) {
        if (q.experts) v.insert(v.begin(), q.experts);
        return v;
      };
      const TensorDesc& z = need(q.module + ".qzeros");
      const TensorDesc& s = need(q.module + ".scales");
      check(z, stacked({groups, q.rows / 8}));
      check(s, stacked({groups, q.rows}));
      q.sources = {t.name, z.name, s.name};
      if (gptq && by_name.count(q.module + ".g_idx")) {
        check(need(q.module + ".g_idx"), stacked({q.cols}));
        q.sources.push_back(q.module + ".g_idx");
      }
      // Without act-order a 32-block of inputs lies in one group when 32 divides the group size.
      q.repacked = (gptq && qc.desc_act) || g % 32 != 0 ? DType::Q8_0 : DType::Q4_1;
    } else {
      continue;
    }
    if (q.cols % 32 != 0)
      throw Error(ErrorCode::UNSUPPORTED, c.source + ": quantized module '" + q.module + "' has " +
                                              std::to_string(q.cols) + " inputs, not a multiple of 32");
    out.push_back(std::move(q));
  }
  return out;
}

int64_t repack_delta_bytes(const ModelConfig& c, const std::vector<TensorDesc>& tensors) {
  std::unordered_map<std::string, const TensorDesc*> by_name;
  for (const TensorDesc& t : tensors) by_name.emplace(t.name, &t);
  int64_t delta = 0;
  for (const QuantizedLinear& q : quantized_linears(c, tensors)) {
    delta += std::max<int64_t>(1, q.experts) * q.rows * dtype_row_bytes(q.repacked, q.cols);
    for (const std::string& s : q.sources) delta -= desc_bytes(*by_name.at(s));
  }
  return delta;
}

void repack_quantized_linear(const ModelConfig& c, const QuantizedLinear& q,
                             const std::function<Tensor(const std::string&)>& tensor, void* out) {
  const QuantizationConfig& qc = *c.quantization_config;
  auto* dst = static_cast<uint8_t*>(out);
  if (q.scheme == QuantScheme::FP8_BLOCK) {
    const Tensor w = tensor(q.module + ".weight"), s = tensor(q.module + ".weight_scale_inv");
    const std::vector<float> scale = floats(s);
    const int64_t br = qc.weight_block_size.empty() ? 128 : qc.weight_block_size[0];
    const int64_t bc = qc.weight_block_size.empty() ? 128 : qc.weight_block_size[1];
    const int64_t sc_per = ((q.rows + br - 1) / br) * ((q.cols + bc - 1) / bc);
    const int64_t out_per = q.rows * dtype_row_bytes(DType::Q8_0, q.cols);
    for (int64_t e = 0; e < std::max<int64_t>(1, q.experts); ++e)
      repack_fp8_block_q8_0(w.ptr<uint8_t>() + e * q.rows * q.cols, q.rows, q.cols, scale.data() + e * sc_per, br,
                            bc, dst + e * out_per);
    return;
  }
  const bool awq = q.scheme == QuantScheme::AWQ;
  const int64_t R = q.rows, C = q.cols, g = group_of(qc, C), G = (C + g - 1) / g;
  const int32_t* qw_all = ints(tensor(q.module + ".qweight"), q.module + ".qweight");
  const int32_t* qz_all = ints(tensor(q.module + ".qzeros"), q.module + ".qzeros");
  const std::vector<float> sc_all = floats(tensor(q.module + ".scales"));  // [E?, G, R]
  const Tensor gt = awq ? Tensor{} : tensor(q.module + ".g_idx");
  const int32_t* gi_all = gt.data ? ints(gt, q.module + ".g_idx") : nullptr;
  std::vector<uint8_t> vals(static_cast<size_t>(R * C)), zero(static_cast<size_t>(R * G));
  std::vector<float> scale(static_cast<size_t>(R * G));
  std::vector<int32_t> gidx(static_cast<size_t>(C));
  auto nib = [](int32_t word, int64_t i) { return uint8_t((uint32_t(word) >> (4 * i)) & 15u); };
  const bool plus_one = !awq && qc.checkpoint_format != "gptq_v2";
  const int64_t out_per = R * dtype_row_bytes(q.repacked, C);
  // Stacked experts: expert e is the e-th [.., ..] matrix of every source tensor, repacked alone.
  for (int64_t e = 0; e < std::max<int64_t>(1, q.experts); ++e) {
    const int32_t* qw = qw_all + e * (C * R / 8);
    const int32_t* qz = qz_all + e * (G * R / 8);
    const float* sc = sc_all.data() + e * (G * R);
    // Zeros (both layouts pack them along the outputs; AWQ in its GEMM order), scales → [R, G].
    for (int64_t gi = 0; gi < G; ++gi)
      for (int64_t w8 = 0; w8 < R / 8; ++w8)
        for (int64_t i = 0; i < 8; ++i) {
          const int64_t col = 8 * w8 + (awq ? kAwqOrder[i] : i);
          zero[col * G + gi] = uint8_t(nib(qz[gi * (R / 8) + w8], i) + (plus_one ? 1 : 0));
        }
    for (int64_t gi = 0; gi < G; ++gi)
      for (int64_t r = 0; r < R; ++r) scale[r * G + gi] = sc[gi * R + r];
    if (awq) {  // qweight [C, R/8]
      for (int64_t i = 0; i < C; ++i)
        for (int64_t w8 = 0; w8 < R / 8; ++w8)
          for (int64_t k = 0; k < 8; ++k) vals[(8 * w8 + kAwqOrder[k]) * C + i] = nib(qw[i * (R / 8) + w8], k);
    } else {  // qweight [C/8, R]
      for (int64_t r8 = 0; r8 < C / 8; ++r8)
        for (int64_t r = 0; r < R; ++r)
          for (int64_t j = 0; j < 8; ++j) vals[r * C + 8 * r8 + j] = nib(qw[r8 * R + r], j);
    }
    for (int64_t i = 0; i < C; ++i) {
      gidx[i] = gi_all ? gi_all[e * C + i] : int32_t(i / g);
      if (gidx[i] < 0 || gidx[i] >= G)
        throw Error(ErrorCode::INVALID_ARGUMENT, c.source + ": '" + q.module + ".g_idx' names group " +
                                                     std::to_string(gidx[i]) + " of " + std::to_string(G));
    }
    const Int4Groups w{R, C, G, vals.data(), zero.data(), scale.data(), gidx.data()};
    if (q.repacked == DType::Q4_1 && !int4_groups_block_aligned(w))
      throw Error(ErrorCode::INVALID_ARGUMENT, c.source + ": '" + q.module + ".g_idx' permutes the groups but " +
                                                   "quantization_config.desc_act is false");
    repack_int4(w, q.repacked, dst + e * out_per);
  }
}

}  // namespace oxyd::loader
