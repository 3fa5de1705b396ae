// GgufValue and GgufMetadata: the typed key/value store of a GGUF header. A value is a scalar
// (u8…f64, bool), a string, or an array of any of those (arrays nest). Scalar arrays keep their
// raw little-endian payload, so a 150k-entry vocabulary score array is one allocation. The
// metadata getters convert between integer widths only when the value fits and otherwise throw
// Error(INVALID_ARGUMENT) naming the file, the key, the stored type and the expected one.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace oxyd::loader {

/// GGUF metadata value types (gguf_type in ggml), numbered as on disk.
enum class GgufType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6,
  BOOL = 7, STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
inline constexpr uint32_t kGgufNumTypes = 13;

std::string_view gguf_type_name(GgufType t);
/// Bytes of one scalar of type t on disk; 0 for STRING and ARRAY.
size_t gguf_scalar_size(GgufType t);
bool gguf_type_is_integer(GgufType t);

/// The GgufType a C++ scalar maps to (uint8_t → UINT8 … double → FLOAT64, bool → BOOL).
template <typename T> constexpr GgufType gguf_type_of() {
  if constexpr (std::is_same_v<T, bool>) return GgufType::BOOL;
  else if constexpr (std::is_same_v<T, uint8_t>) return GgufType::UINT8;
  else if constexpr (std::is_same_v<T, int8_t>) return GgufType::INT8;
  else if constexpr (std::is_same_v<T, uint16_t>) return GgufType::UINT16;
  else if constexpr (std::is_same_v<T, int16_t>) return GgufType::INT16;
  else if constexpr (std::is_same_v<T, uint32_t>) return GgufType::UINT32;
  else if constexpr (std::is_same_v<T, int32_t>) return GgufType::INT32;
  else if constexpr (std::is_same_v<T, uint64_t>) return GgufType::UINT64;
  else if constexpr (std::is_same_v<T, int64_t>) return GgufType::INT64;
  else if constexpr (std::is_same_v<T, float>) return GgufType::FLOAT32;
  else if constexpr (std::is_same_v<T, double>) return GgufType::FLOAT64;
  else static_assert(sizeof(T) == 0, "not a GGUF scalar type");
}

class GgufValue {
 public:
  GgufValue() = default;
  template <typename T> static GgufValue scalar(T v) {
    GgufValue g;
    g.type_ = gguf_type_of<T>();
    std::memcpy(&g.bits_, &v, sizeof(T));
    return g;
  }
  static GgufValue string(std::string s);
  /// Array of scalars of type T (T as in gguf_type_of).
  template <typename T> static GgufValue array(std::span<const T> items) {
    GgufValue g = make_array(gguf_type_of<T>(), items.size());
    g.raw_.resize(items.size_bytes());
    if (!items.empty()) std::memcpy(g.raw_.data(), items.data(), items.size_bytes());
    return g;
  }
  template <typename T> static GgufValue array(const std::vector<T>& items) {
    return array(std::span<const T>(items.data(), items.size()));
  }
  static GgufValue array(const std::vector<bool>& items);
  static GgufValue string_array(std::vector<std::string> items);
  /// Array whose elements are arrays (nested); every item must have type ARRAY.
  static GgufValue array_of_arrays(std::vector<GgufValue> items);
  /// Array of scalars from raw little-endian bytes (count * gguf_scalar_size(elem) bytes).
  static GgufValue raw_array(GgufType elem, uint64_t count, std::vector<uint8_t> raw);

  GgufType type() const { return type_; }
  bool is_array() const { return type_ == GgufType::ARRAY; }

  /// Scalar conversions: nullopt when the stored type does not convert to T or the value does
  /// not fit (integers ↔ integers in range, integers/floats → floating, bool → bool only).
  template <typename T> std::optional<T> to() const;
  const std::string& as_string() const { return str_; }  // valid when type() == STRING

  // Arrays.
  GgufType elem_type() const { return elem_type_; }
  uint64_t size() const { return count_; }
  const std::vector<std::string>& strings() const { return strs_; }   // ARRAY of STRING
  const std::vector<GgufValue>& items() const { return items_; }       // ARRAY of ARRAY
  /// The raw payload of a scalar array whose element type is exactly T, else empty span.
  template <typename T> std::span<const T> data() const {
    if (type_ != GgufType::ARRAY || elem_type_ != gguf_type_of<T>()) return {};
    return {reinterpret_cast<const T*>(raw_.data()), static_cast<size_t>(count_)};
  }
  const std::vector<uint8_t>& raw() const { return raw_; }
  /// Element i of any array as a value (a copy).
  GgufValue at(uint64_t i) const;

  /// Short human-readable form; arrays show at most max_items elements.
  std::string to_string(size_t max_items = 8) const;
  /// "UINT32", "STRING", "ARRAY[FLOAT32]".
  std::string type_string() const;
  bool operator==(const GgufValue& o) const;

 private:
  static GgufValue make_array(GgufType elem, uint64_t count);
  GgufType type_ = GgufType::UINT8;
  GgufType elem_type_ = GgufType::UINT8;
  uint64_t bits_ = 0;  // scalar bit pattern, little-endian in the low bytes
  uint64_t count_ = 0;
  std::string str_;
  std::vector<uint8_t> raw_;
  std::vector<std::string> strs_;
  std::vector<GgufValue> items_;
};

/// Ordered key → value map with typed getters. `source` (a file name) prefixes every error.
class GgufMetadata {
 public:
  GgufMetadata() = default;
  explicit GgufMetadata(std::string source) : source_(std::move(source)) {}

  const std::string& source() const { return source_; }
  void set_source(std::string s) { source_ = std::move(s); }
  /// Adds a key; throws Error(INVALID_ARGUMENT) if it already exists.
  void add(std::string key, GgufValue value);
  /// Replaces or adds.
  void set(const std::string& key, GgufValue value);
  const GgufValue* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }
  const std::vector<std::pair<std::string, GgufValue>>& entries() const { return kv_; }
  size_t size() const { return kv_.size(); }

  /// Typed getters. Without a default a missing key throws; with one it returns the default.
  /// A present key of the wrong type always throws. T: bool, integers, float, double, string.
  template <typename T> T get(std::string_view key) const;
  template <typename T> T get(std::string_view key, T def) const;
  /// Optional form: nullopt when missing; throws on a wrong type.
  template <typename T> std::optional<T> get_opt(std::string_view key) const;

  uint32_t get_u32(std::string_view k) const { return get<uint32_t>(k); }
  uint32_t get_u32(std::string_view k, uint32_t d) const { return get<uint32_t>(k, d); }
  int32_t get_i32(std::string_view k) const { return get<int32_t>(k); }
  int32_t get_i32(std::string_view k, int32_t d) const { return get<int32_t>(k, d); }
  uint64_t get_u64(std::string_view k) const { return get<uint64_t>(k); }
  uint64_t get_u64(std::string_view k, uint64_t d) const { return get<uint64_t>(k, d); }
  int64_t get_i64(std::string_view k) const { return get<int64_t>(k); }
  int64_t get_i64(std::string_view k, int64_t d) const { return get<int64_t>(k, d); }
  float get_f32(std::string_view k) const { return get<float>(k); }
  float get_f32(std::string_view k, float d) const { return get<float>(k, d); }
  double get_f64(std::string_view k) const { return get<double>(k); }
  double get_f64(std::string_view k, double d) const { return get<double>(k, d); }
  bool get_bool(std::string_view k) const { return get<bool>(k); }
  bool get_bool(std::string_view k, bool d) const { return get<bool>(k, d); }
  std::string get_string(std::string_view k) const { return get<std::string>(k); }
  std::string get_string(std::string_view k, const std::string& d) const {
    return get<std::string>(k, d);
  }
  /// ARRAY of STRING (throws if missing or another type).
  const std::vector<std::string>& get_string_array(std::string_view key) const;
  /// Any scalar array converted element-wise to T (throws if an element does not fit).
  template <typename T> std::vector<T> get_array(std::string_view key) const;
  /// A scalar or an array of scalars as a vector (llama.cpp's per-layer "scalar or array" keys:
  /// feed_forward_length, attention.head_count_kv…). A scalar becomes one element.
  template <typename T> std::vector<T> get_scalar_or_array(std::string_view key) const;

  /// general.architecture (required).
  std::string architecture() const { return get_string("general.architecture"); }

 private:
  [[noreturn]] void wrong_type(std::string_view key, const GgufValue& v,
                               std::string_view expected) const;
  [[noreturn]] void missing(std::string_view key) const;
  std::string source_;
  std::vector<std::pair<std::string, GgufValue>> kv_;
  std::map<std::string, size_t, std::less<>> index_;
};

}  // namespace oxyd::loader
