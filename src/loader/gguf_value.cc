// GgufValue conversions and GgufMetadata getters; see gguf_value.h.
#include "loader/gguf_value.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.h"

namespace oxyd::loader {

std::string_view gguf_type_name(GgufType t) {
  static constexpr std::string_view kNames[] = {"UINT8",  "INT8",    "UINT16", "INT16", "UINT32",
                                                "INT32",  "FLOAT32", "BOOL",   "STRING", "ARRAY",
                                                "UINT64", "INT64",   "FLOAT64"};
  auto i = static_cast<uint32_t>(t);
  return i < kGgufNumTypes ? kNames[i] : std::string_view("UNKNOWN");
}

size_t gguf_scalar_size(GgufType t) {
  switch (t) {
    case GgufType::UINT8: case GgufType::INT8: case GgufType::BOOL: return 1;
    case GgufType::UINT16: case GgufType::INT16: return 2;
    case GgufType::UINT32: case GgufType::INT32: case GgufType::FLOAT32: return 4;
    case GgufType::UINT64: case GgufType::INT64: case GgufType::FLOAT64: return 8;
    default: return 0;
  }
}

bool gguf_type_is_integer(GgufType t) {
  switch (t) {
    case GgufType::UINT8: case GgufType::INT8: case GgufType::UINT16: case GgufType::INT16:
    case GgufType::UINT32: case GgufType::INT32: case GgufType::UINT64: case GgufType::INT64:
      return true;
    default: return false;
  }
}

namespace {

// A scalar decoded from its bit pattern: exactly one of the three is meaningful.
struct Decoded {
  enum Kind { SIGNED, UNSIGNED, FLOATING, BOOLEAN, OTHER } kind = OTHER;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
};

Decoded decode(GgufType t, uint64_t bits) {
  Decoded d;
  auto load = [&](auto v) { std::memcpy(&v, &bits, sizeof(v)); return v; };
  switch (t) {
    case GgufType::UINT8: d.kind = Decoded::UNSIGNED; d.u = load(uint8_t{}); break;
    case GgufType::UINT16: d.kind = Decoded::UNSIGNED; d.u = load(uint16_t{}); break;
    case GgufType::UINT32: d.kind = Decoded::UNSIGNED; d.u = load(uint32_t{}); break;
    case GgufType::UINT64: d.kind = Decoded::UNSIGNED; d.u = load(uint64_t{}); break;
    case GgufType::INT8: d.kind = Decoded::SIGNED; d.i = load(int8_t{}); break;
    case GgufType::INT16: d.kind = Decoded::SIGNED; d.i = load(int16_t{}); break;
    case GgufType::INT32: d.kind = Decoded::SIGNED; d.i = load(int32_t{}); break;
    case GgufType::INT64: d.kind = Decoded::SIGNED; d.i = load(int64_t{}); break;
    case GgufType::FLOAT32: d.kind = Decoded::FLOATING; d.f = load(float{}); break;
    case GgufType::FLOAT64: d.kind = Decoded::FLOATING; d.f = load(double{}); break;
    case GgufType::BOOL: d.kind = Decoded::BOOLEAN; d.u = load(uint8_t{}) != 0; break;
    default: break;
  }
  return d;
}

template <typename T> std::optional<T> convert(const Decoded& d) {
  if constexpr (std::is_same_v<T, bool>) {
    if (d.kind == Decoded::BOOLEAN) return d.u != 0;
    return std::nullopt;
  } else if constexpr (std::is_integral_v<T>) {
    using L = std::numeric_limits<T>;
    if (d.kind == Decoded::UNSIGNED) {
      if (d.u > static_cast<uint64_t>(L::max())) return std::nullopt;
      return static_cast<T>(d.u);
    }
    if (d.kind == Decoded::SIGNED) {
      if constexpr (std::is_unsigned_v<T>) {
        if (d.i < 0 || static_cast<uint64_t>(d.i) > static_cast<uint64_t>(L::max()))
          return std::nullopt;
      } else {
        if (d.i < static_cast<int64_t>(L::min()) || d.i > static_cast<int64_t>(L::max()))
          return std::nullopt;
      }
      return static_cast<T>(d.i);
    }
    return std::nullopt;
  } else {  // floating
    if (d.kind == Decoded::FLOATING) return static_cast<T>(d.f);
    if (d.kind == Decoded::UNSIGNED) return static_cast<T>(d.u);
    if (d.kind == Decoded::SIGNED) return static_cast<T>(d.i);
    return std::nullopt;
  }
}

}  // namespace

GgufValue GgufValue::string(std::string s) {
  GgufValue g;
  g.type_ = GgufType::STRING;
  g.str_ = std::move(s);
  return g;
}

GgufValue GgufValue::make_array(GgufType elem, uint64_t count) {
  GgufValue g;
  g.type_ = GgufType::ARRAY;
  g.elem_type_ = elem;
  g.count_ = count;
  return g;
}

GgufValue GgufValue::array(const std::vector<bool>& items) {
  GgufValue g = make_array(GgufType::BOOL, items.size());
  g.raw_.assign(items.begin(), items.end());
  return g;
}

GgufValue GgufValue::string_array(std::vector<std::string> items) {
  GgufValue g = make_array(GgufType::STRING, items.size());
  g.strs_ = std::move(items);
  return g;
}

GgufValue GgufValue::array_of_arrays(std::vector<GgufValue> items) {
  for (const auto& it : items)
    if (!it.is_array())
      throw Error(ErrorCode::INVALID_ARGUMENT, "a GGUF array of arrays got a non-array element");
  GgufValue g = make_array(GgufType::ARRAY, items.size());
  g.items_ = std::move(items);
  return g;
}

GgufValue GgufValue::raw_array(GgufType elem, uint64_t count, std::vector<uint8_t> raw) {
  size_t sz = gguf_scalar_size(elem);
  if (sz == 0 || raw.size() / sz != count || raw.size() % sz != 0)
    throw Error(ErrorCode::INTERNAL, "raw_array: payload size does not match count × type size");
  GgufValue g = make_array(elem, count);
  g.raw_ = std::move(raw);
  return g;
}

template <typename T> std::optional<T> GgufValue::to() const {
  if constexpr (std::is_same_v<T, std::string>) {
    if (type_ == GgufType::STRING) return str_;
    return std::nullopt;
  } else {
    return convert<T>(decode(type_, bits_));
  }
}

GgufValue GgufValue::at(uint64_t i) const {
  if (type_ != GgufType::ARRAY || i >= count_)
    throw Error(ErrorCode::INVALID_ARGUMENT, "GGUF array index " + std::to_string(i) +
                                                 " out of range (size " + std::to_string(count_) + ")");
  if (elem_type_ == GgufType::STRING) return string(strs_[i]);
  if (elem_type_ == GgufType::ARRAY) return items_[i];
  GgufValue g;
  g.type_ = elem_type_;
  size_t sz = gguf_scalar_size(elem_type_);
  std::memcpy(&g.bits_, raw_.data() + i * sz, sz);
  return g;
}

std::string GgufValue::type_string() const {
  if (type_ != GgufType::ARRAY) return std::string(gguf_type_name(type_));
  if (elem_type_ == GgufType::ARRAY && !items_.empty())
    return "ARRAY[" + items_[0].type_string() + "]";
  return "ARRAY[" + std::string(gguf_type_name(elem_type_)) + "]";
}

std::string GgufValue::to_string(size_t max_items) const {
  if (type_ == GgufType::STRING) {
    std::string s = "\"";
    for (char c : str_.substr(0, 200)) s += (c == '\n') ? std::string("\\n") : std::string(1, c);
    return s + (str_.size() > 200 ? "…\"" : "\"");
  }
  if (type_ == GgufType::ARRAY) {
    std::string s = "[";
    for (uint64_t i = 0; i < count_ && i < max_items; ++i)
      s += (i ? ", " : "") + at(i).to_string(max_items);
    if (count_ > max_items) s += ", … (" + std::to_string(count_) + " items)";
    return s + "]";
  }
  Decoded d = decode(type_, bits_);
  switch (d.kind) {
    case Decoded::SIGNED: return std::to_string(d.i);
    case Decoded::UNSIGNED: return std::to_string(d.u);
    case Decoded::BOOLEAN: return d.u ? "true" : "false";
    case Decoded::FLOATING: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.9g", d.f);
      return buf;
    }
    default: return "?";
  }
}

bool GgufValue::operator==(const GgufValue& o) const {
  if (type_ != o.type_) return false;
  if (type_ == GgufType::STRING) return str_ == o.str_;
  if (type_ != GgufType::ARRAY) return bits_ == o.bits_;
  return elem_type_ == o.elem_type_ && count_ == o.count_ && raw_ == o.raw_ && strs_ == o.strs_ &&
         items_ == o.items_;
}

// ---- GgufMetadata ---------------------------------------------------------------------------

void GgufMetadata::add(std::string key, GgufValue value) {
  if (index_.count(key))
    throw Error(ErrorCode::INVALID_ARGUMENT,
                source_ + ": duplicate metadata key '" + key + "'");
  index_.emplace(key, kv_.size());
  kv_.emplace_back(std::move(key), std::move(value));
}

void GgufMetadata::set(const std::string& key, GgufValue value) {
  auto it = index_.find(key);
  if (it != index_.end()) {
    kv_[it->second].second = std::move(value);
    return;
  }
  add(key, std::move(value));
}

const GgufValue* GgufMetadata::find(std::string_view key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &kv_[it->second].second;
}

void GgufMetadata::wrong_type(std::string_view key, const GgufValue& v,
                              std::string_view expected) const {
  throw Error(ErrorCode::INVALID_ARGUMENT, source_ + ": metadata key '" + std::string(key) +
                                               "' holds " + v.type_string() + " " +
                                               v.to_string(4) + ", expected " +
                                               std::string(expected));
}

void GgufMetadata::missing(std::string_view key) const {
  throw Error(ErrorCode::INVALID_ARGUMENT,
              source_ + ": required metadata key '" + std::string(key) + "' is missing");
}

namespace {
template <typename T> std::string expected_name() {
  if constexpr (std::is_same_v<T, std::string>) return "a STRING";
  else if constexpr (std::is_same_v<T, bool>) return "a BOOL";
  else if constexpr (std::is_floating_point_v<T>) return "a number";
  else
    return "an integer in [" + std::to_string(std::numeric_limits<T>::min()) + ", " +
           std::to_string(std::numeric_limits<T>::max()) + "]";
}
}  // namespace

template <typename T> std::optional<T> GgufMetadata::get_opt(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  std::optional<T> r = v->to<T>();
  if (!r) wrong_type(key, *v, expected_name<T>());
  return r;
}

template <typename T> T GgufMetadata::get(std::string_view key) const {
  std::optional<T> r = get_opt<T>(key);
  if (!r) missing(key);
  return *r;
}

template <typename T> T GgufMetadata::get(std::string_view key, T def) const {
  std::optional<T> r = get_opt<T>(key);
  return r ? *r : def;
}

const std::vector<std::string>& GgufMetadata::get_string_array(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) missing(key);
  if (!v->is_array() || v->elem_type() != GgufType::STRING)
    wrong_type(key, *v, "an ARRAY of STRING");
  return v->strings();
}

template <typename T> std::vector<T> GgufMetadata::get_array(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) missing(key);
  if (!v->is_array() || gguf_scalar_size(v->elem_type()) == 0)
    wrong_type(key, *v, "an ARRAY of " + expected_name<T>().substr(3));
  if constexpr (!std::is_same_v<T, bool>) {
    if (v->elem_type() == gguf_type_of<T>()) {  // exact type: one copy, no per-element checks
      std::span<const T> d = v->data<T>();
      return std::vector<T>(d.begin(), d.end());
    }
  }
  std::vector<T> out;
  out.reserve(v->size());
  for (uint64_t i = 0; i < v->size(); ++i) {
    std::optional<T> r = v->at(i).to<T>();
    if (!r)
      throw Error(ErrorCode::INVALID_ARGUMENT,
                  source_ + ": metadata key '" + std::string(key) + "' element " +
                      std::to_string(i) + " = " + v->at(i).to_string() + " is not " +
                      expected_name<T>());
    out.push_back(*r);
  }
  return out;
}

template <typename T>
std::vector<T> GgufMetadata::get_scalar_or_array(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) missing(key);
  if (v->is_array()) return get_array<T>(key);
  return {get<T>(key)};
}

#define OXYD_GGUF_INSTANTIATE(T)                                                          \
  template std::optional<T> GgufValue::to<T>() const;                                     \
  template std::optional<T> GgufMetadata::get_opt<T>(std::string_view) const;             \
  template T GgufMetadata::get<T>(std::string_view) const;                                \
  template T GgufMetadata::get<T>(std::string_view, T) const;
#define OXYD_GGUF_INSTANTIATE_ARRAY(T)                                                    \
  template std::vector<T> GgufMetadata::get_array<T>(std::string_view) const;             \
  template std::vector<T> GgufMetadata::get_scalar_or_array<T>(std::string_view) const;

OXYD_GGUF_INSTANTIATE(bool)
OXYD_GGUF_INSTANTIATE(uint8_t)
OXYD_GGUF_INSTANTIATE(int8_t)
OXYD_GGUF_INSTANTIATE(uint16_t)
OXYD_GGUF_INSTANTIATE(int16_t)
OXYD_GGUF_INSTANTIATE(uint32_t)
OXYD_GGUF_INSTANTIATE(int32_t)
OXYD_GGUF_INSTANTIATE(uint64_t)
OXYD_GGUF_INSTANTIATE(int64_t)
OXYD_GGUF_INSTANTIATE(float)
OXYD_GGUF_INSTANTIATE(double)
OXYD_GGUF_INSTANTIATE(std::string)
OXYD_GGUF_INSTANTIATE_ARRAY(bool)
OXYD_GGUF_INSTANTIATE_ARRAY(uint8_t)
OXYD_GGUF_INSTANTIATE_ARRAY(int8_t)
OXYD_GGUF_INSTANTIATE_ARRAY(uint16_t)
OXYD_GGUF_INSTANTIATE_ARRAY(int16_t)
OXYD_GGUF_INSTANTIATE_ARRAY(uint32_t)
OXYD_GGUF_INSTANTIATE_ARRAY(int32_t)
OXYD_GGUF_INSTANTIATE_ARRAY(uint64_t)
OXYD_GGUF_INSTANTIATE_ARRAY(int64_t)
OXYD_GGUF_INSTANTIATE_ARRAY(float)
OXYD_GGUF_INSTANTIATE_ARRAY(double)

}  // namespace oxyd::loader
