#include "core/dtype.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "core/error.h"

namespace oxyd {
namespace {

constexpr std::array<DTypeTraits, 26> kTraits = {{
    {DType::F32, "F32", 1, 4, false},
    {DType::F16, "F16", 1, 2, false},
    {DType::Q4_0, "Q4_0", 32, 18, true},
    {DType::Q4_1, "Q4_1", 32, 20, true},
    {DType::Q5_0, "Q5_0", 32, 22, true},
    {DType::Q5_1, "Q5_1", 32, 24, true},
    {DType::Q8_0, "Q8_0", 32, 34, true},
    {DType::Q8_1, "Q8_1", 32, 36, true},
    {DType::Q2_K, "Q2_K", 256, 84, true},
    {DType::Q3_K, "Q3_K", 256, 110, true},
    {DType::Q4_K, "Q4_K", 256, 144, true},
    {DType::Q5_K, "Q5_K", 256, 176, true},
    {DType::Q6_K, "Q6_K", 256, 210, true},
    {DType::Q8_K, "Q8_K", 256, 292, true},
    {DType::IQ4_NL, "IQ4_NL", 32, 18, true},
    {DType::IQ4_XS, "IQ4_XS", 256, 136, true},
    {DType::I8, "I8", 1, 1, false},
    {DType::I16, "I16", 1, 2, false},
    {DType::I32, "I32", 1, 4, false},
    {DType::I64, "I64", 1, 8, false},
    {DType::F64, "F64", 1, 8, false},
    {DType::BF16, "BF16", 1, 2, false},
    {DType::MXFP4, "MXFP4", 32, 17, true},
    {DType::F8_E4M3, "F8_E4M3", 1, 1, false},
    {DType::F8_E5M2, "F8_E5M2", 1, 1, false},
    {DType::U8, "U8", 1, 1, false},
}};
constexpr DTypeTraits kBool = {DType::BOOL, "BOOL", 1, 1, false};

const DTypeTraits* find(DType t) {
  if (t == DType::BOOL) return &kBool;
  for (const auto& tr : kTraits)
    if (tr.dtype == t) return &tr;
  return nullptr;
}

}  // namespace

const DTypeTraits& dtype_traits(DType t) {
  const DTypeTraits* tr = find(t);
  if (!tr) throw_error(ErrorCode::UNSUPPORTED, "unknown dtype id " + std::to_string(uint32_t(t)));
  return *tr;
}

std::string_view dtype_name(DType t) {
  const DTypeTraits* tr = find(t);
  return tr ? tr->name : std::string_view("unknown");
}

int64_t dtype_row_bytes(DType t, int64_t n) {
  const DTypeTraits& tr = dtype_traits(t);
  if (n < 0 || n % tr.block_elems != 0)
    throw_error(ErrorCode::INVALID_ARGUMENT,
                "a row of " + std::to_string(n) + " elements is not a multiple of the " +
                    std::string(tr.name) + " block size " + std::to_string(tr.block_elems));
  return n / tr.block_elems * tr.block_bytes;
}

std::optional<DType> dtype_from_ggml(uint32_t id) {
  if (id >= 1000) return std::nullopt;
  const DTypeTraits* tr = find(DType(id));
  if (!tr) return std::nullopt;
  return tr->dtype;
}

std::optional<DType> dtype_from_name(std::string_view name) {
  std::string up(name);
  std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return std::toupper(c); });
  if (up == kBool.name) return DType::BOOL;
  for (const auto& tr : kTraits)
    if (tr.name == up) return tr.dtype;
  return std::nullopt;
}

}  // namespace oxyd
