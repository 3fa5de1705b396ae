// DType: every element format a tensor can have, from GGUF (ids = ggml_type, so a GGUF tensor's
// type maps 1:1) or safetensors (formats GGUF lacks get ids ≥ 1000). A dtype is either a plain
// scalar (block of 1) or a quantized block format with a fixed element count and byte size;
// a row of n elements takes n / block_elems blocks (n must be a multiple).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace oxyd {

enum class DType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ4_NL = 20,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  BF16 = 30,
  MXFP4 = 39,
  // Not ggml types: safetensors-only formats.
  F8_E4M3 = 1000,
  F8_E5M2 = 1001,
  U8 = 1002,
  BOOL = 1003,
};

struct DTypeTraits {
  DType dtype;
  std::string_view name;   // GGUF / safetensors spelling, e.g. "Q4_K", "BF16"
  int64_t block_elems;     // elements per block (1 for scalars)
  int64_t block_bytes;     // bytes per block
  bool quantized;          // a block format (needs dequantization to read)
};

/// Traits of a dtype; throws Error(UNSUPPORTED) for an id we do not know.
const DTypeTraits& dtype_traits(DType t);
std::string_view dtype_name(DType t);
inline int64_t dtype_block_elems(DType t) { return dtype_traits(t).block_elems; }
inline int64_t dtype_block_bytes(DType t) { return dtype_traits(t).block_bytes; }
/// Bytes of a row of n elements; throws Error(INVALID_ARGUMENT) if n is not a multiple of the block.
int64_t dtype_row_bytes(DType t, int64_t n);
/// A ggml_type id from a GGUF file, if it is one we know.
std::optional<DType> dtype_from_ggml(uint32_t id);
/// "Q4_K", "bf16", "F8_E4M3" (case-insensitive) → dtype.
std::optional<DType> dtype_from_name(std::string_view name);

// Quantized block layouts (ggml-common.h, docs/architecture.md §9). Scales stored as uint16_t are IEEE f16.
inline constexpr int kQK4_0 = 32;
inline constexpr int kQK_K = 256;      // super-block size of the K-quants
inline constexpr int kKScaleBytes = 12;

#pragma pack(push, 1)
struct BlockQ4_0 { uint16_t d; uint8_t qs[16]; };
struct BlockQ4_1 { uint16_t d, m; uint8_t qs[16]; };
struct BlockQ5_0 { uint16_t d; uint8_t qh[4]; uint8_t qs[16]; };
struct BlockQ5_1 { uint16_t d, m; uint8_t qh[4]; uint8_t qs[16]; };
struct BlockQ8_0 { uint16_t d; int8_t qs[32]; };
struct BlockQ8_1 { uint16_t d, s; int8_t qs[32]; };
struct BlockQ2_K { uint8_t scales[16]; uint8_t qs[64]; uint16_t d, dmin; };
struct BlockQ3_K { uint8_t hmask[32]; uint8_t qs[64]; uint8_t scales[12]; uint16_t d; };
struct BlockQ4_K { uint16_t d, dmin; uint8_t scales[12]; uint8_t qs[128]; };
struct BlockQ5_K { uint16_t d, dmin; uint8_t scales[12]; uint8_t qh[32]; uint8_t qs[128]; };
struct BlockQ6_K { uint8_t ql[128]; uint8_t qh[64]; int8_t scales[16]; uint16_t d; };
struct BlockQ8_K { float d; int8_t qs[256]; int16_t bsums[16]; };
struct BlockIQ4_NL { uint16_t d; uint8_t qs[16]; };
struct BlockIQ4_XS { uint16_t d; uint16_t scales_h; uint8_t scales_l[4]; uint8_t qs[128]; };
struct BlockMXFP4 { uint8_t e; uint8_t qs[16]; };
#pragma pack(pop)

static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24 && sizeof(BlockQ8_0) == 34 && sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110 && sizeof(BlockQ4_K) == 144 && sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210 && sizeof(BlockQ8_K) == 292 && sizeof(BlockIQ4_NL) == 18);
static_assert(sizeof(BlockIQ4_XS) == 136 && sizeof(BlockMXFP4) == 17);

}  // namespace oxyd
