// KvFormat: how the paged KV cache stores one head vector, the single knob behind `--kv-dtype` and
// `--kv-quant`. F32 / F16 / BF16 store head_dim elements of that type; Q4 / Q3 / Q2 (the modes
// lossless / balanced / aggressive) store core/kv_quant.h's quantized form, kv_quant_row_bytes
// bytes in a U8 tensor. Every layer that sizes, allocates, writes or reads the cache takes this
// type; nothing else says what the cache holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/dtype.h"

namespace oxyd {

enum class KvFormat : uint8_t { F32, F16, BF16, Q4, Q3, Q2, Q8, Q6, Q5 };

/// The server's and `estimate`'s default (tests/serving KvDtype.DefaultsAgree). Half precision (issue
/// 21 §5.7): half the bytes of F32; BF16 rather than F16 because it measured faster (prefill 2048
/// tokens 2.80 s vs F16's 3.09 s, decode within 1%: widening bf16 is a shift, f16 needs a
/// conversion; docs/performance-history.md "KV-cache format"). Tests that compare with float64
/// goldens token for token pass F32 (an F16/BF16 cache flips near-ties).
inline constexpr KvFormat kDefaultKvFormat = KvFormat::BF16;

/// 0 for F32 / F16 / BF16, else the code width (2..8).
int kv_format_bits(KvFormat f);
inline bool kv_format_quantized(KvFormat f) { return kv_format_bits(f) > 0; }
/// The element type of the cache tensors: F32 / F16 / BF16, or U8 for the quantized formats.
DType kv_format_dtype(KvFormat f);
/// The plain format storing `dtype` (F32 / F16 / BF16), nullopt for any other type.
std::optional<KvFormat> kv_format_of_dtype(DType dtype);
/// The quantized format of `bits` (2, 3, 4, 5, 6, 8), nullopt otherwise.
std::optional<KvFormat> kv_format_of_bits(int bits);
/// Last dimension of a cache tensor: head_dim elements, or the bytes of one quantized vector.
int64_t kv_format_row_elems(KvFormat f, int64_t head_dim);
/// Bytes of one K or V head vector of `head_dim` values.
int64_t kv_format_row_bytes(KvFormat f, int64_t head_dim);
/// "F32", "F16", "BF16", "Q8", "Q6", ... (what /v1/models and `show` report).
std::string_view kv_format_name(KvFormat f);
/// A longer name for estimates: "BF16", "lossless 8-bit uniform + f32 scale", "aggressive 5-bit uniform + f32 scale", "4-bit + f32 norm", ...
std::string kv_format_description(KvFormat f);
/// The CLI's two flags in one: `quant` off|none|"" → the plain `dtype` (f32|float32, f16|float16,
/// bf16|bfloat16), else lossless → Q8, balanced → Q6, aggressive → Q5, or q2..q6 / q8 for that
/// width (case-insensitive).
/// Error(INVALID_ARGUMENT) naming the flag (--kv-dtype / --kv-quant) otherwise; a bad --kv-dtype
/// is an error even when --kv-quant overrides it.
KvFormat parse_kv_format(std::string_view dtype, std::string_view quant);
/// The --kv-dtype spelling of a plain format ("f32", "f16", "bf16"); "bf16" for quantized ones.
std::string kv_dtype_flag(KvFormat f);
/// The --kv-quant mode of a quantized format ("lossless", "balanced", "aggressive", or "q4" for a
/// width no mode uses); "off" for a plain format.
std::string kv_quant_flag(KvFormat f);
/// "lossless (8-bit), balanced (6-bit), aggressive (5-bit)": the modes for --help and errors.
std::string kv_quant_help();
/// The formats of the three modes, in that order (`estimate` lists them).
inline constexpr KvFormat kKvQuantModes[3] = {KvFormat::Q8, KvFormat::Q6, KvFormat::Q5};

}  // namespace oxyd
