#include "core/kv_format.h"

#include <cctype>

#include "core/error.h"
#include "core/kv_quant.h"

namespace oxyd {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

int kv_format_bits(KvFormat f) {
  switch (f) {
    case KvFormat::Q8: return 8;
    case KvFormat::Q6: return 6;
    case KvFormat::Q5: return 5;
    case KvFormat::Q4: return 4;
    case KvFormat::Q3: return 3;
    case KvFormat::Q2: return 2;
    case KvFormat::F32:
    case KvFormat::F16:
    case KvFormat::BF16: break;
  }
  return 0;
}

DType kv_format_dtype(KvFormat f) {
  switch (f) {
    case KvFormat::F32: return DType::F32;
    case KvFormat::F16: return DType::F16;
    case KvFormat::BF16: return DType::BF16;
    default: break;
  }
  return DType::U8;
}

std::optional<KvFormat> kv_format_of_dtype(DType dtype) {
  if (dtype == DType::F32) return KvFormat::F32;
  if (dtype == DType::F16) return KvFormat::F16;
  if (dtype == DType::BF16) return KvFormat::BF16;
  return std::nullopt;
}

std::optional<KvFormat> kv_format_of_bits(int bits) {
  if (bits == 8) return KvFormat::Q8;
  if (bits == 6) return KvFormat::Q6;
  if (bits == 5) return KvFormat::Q5;
  if (bits == 4) return KvFormat::Q4;
  if (bits == 3) return KvFormat::Q3;
  if (bits == 2) return KvFormat::Q2;
  return std::nullopt;
}

int64_t kv_format_row_elems(KvFormat f, int64_t head_dim) {
  const int bits = kv_format_bits(f);
  return bits > 0 ? kv_quant_row_bytes(head_dim, bits) : head_dim;
}

int64_t kv_format_row_bytes(KvFormat f, int64_t head_dim) {
  const int bits = kv_format_bits(f);
  return bits > 0 ? kv_quant_row_bytes(head_dim, bits) : dtype_row_bytes(kv_format_dtype(f), head_dim);
}

std::string_view kv_format_name(KvFormat f) {
  switch (f) {
    case KvFormat::F32: return "F32";
    case KvFormat::F16: return "F16";
    case KvFormat::BF16: return "BF16";
    case KvFormat::Q8: return "Q8";
    case KvFormat::Q6: return "Q6";
    case KvFormat::Q5: return "Q5";
    case KvFormat::Q4: return "Q4";
    case KvFormat::Q3: return "Q3";
    case KvFormat::Q2: return "Q2";
  }
  return "?";
}

std::string kv_format_description(KvFormat f) {
  const int bits = kv_format_bits(f);
  if (bits == 0) return std::string(kv_format_name(f));
  const std::string mode = kv_quant_flag(f);
  return (mode[0] == 'q' ? "" : mode + " ") + std::to_string(bits) +
         (kv_quant_uniform(bits) ? "-bit uniform + f32 scale" : "-bit + f32 norm");
}

std::string kv_quant_flag(KvFormat f) {
  switch (f) {
    case KvFormat::Q8: return "lossless";
    case KvFormat::Q6: return "balanced";
    case KvFormat::Q5: return "aggressive";
    default: break;
  }
  const int bits = kv_format_bits(f);
  return bits > 0 ? "q" + std::to_string(bits) : "off";
}

KvFormat parse_kv_format(std::string_view dtype, std::string_view quant) {
  const std::string d = lower(dtype), q = lower(quant);
  std::optional<KvFormat> plain;
  if (d == "f16" || d == "float16") plain = KvFormat::F16;
  if (d == "bf16" || d == "bfloat16") plain = KvFormat::BF16;
  if (d == "f32" || d == "float32") plain = KvFormat::F32;
  if (!plain) throw_error(ErrorCode::INVALID_ARGUMENT, "--kv-dtype '" + std::string(dtype) + "': expected f16, bf16 or f32");
  if (q.empty() || q == "off" || q == "none") return *plain;
  for (KvFormat f : kKvQuantModes)
    if (q == kv_quant_flag(f)) return f;
  if (q.size() == 2 && q[0] == 'q')
    if (auto f = kv_format_of_bits(q[1] - '0')) return *f;
  throw_error(ErrorCode::INVALID_ARGUMENT, "--kv-quant '" + std::string(quant) + "': expected off, " + kv_quant_help() +
                                               ", or q2, q3, q4, q5, q6, q8 for that many bits");
}

std::string kv_quant_help() {
  std::string out;
  for (KvFormat f : kKvQuantModes)
    out += (out.empty() ? "" : ", ") + kv_quant_flag(f) + " (" + std::to_string(kv_format_bits(f)) + "-bit)";
  return out;
}

std::string kv_dtype_flag(KvFormat f) {
  switch (f) {
    case KvFormat::F32: return "f32";
    case KvFormat::F16: return "f16";
    default: break;
  }
  return "bf16";
}

}  // namespace oxyd
