// GGUF header decoding from a byte buffer (the format: ggml docs/gguf.md).
// A Reader walks the buffer; reading past its end either throws NeedMore (buffer is a prefix of a
// larger file) or a "truncated" Error. Counts are checked against the bytes that can still exist
// before anything is reserved, and nesting depth is bounded, so hostile input cannot make us
// allocate or recurse without limit.
#include <algorithm>
#include <limits>
#include <unordered_set>

#include "core/error.h"
#include "loader/gguf.h"

namespace oxyd::loader {
namespace {

// ggml types a GGUF may hold that oxydllm has no kernels for (gguf-py's GGMLQuantizationType),
// named in the load error so the user knows which file variant to pick instead.
const char* unsupported_ggml_type_name(uint32_t t) {
  switch (t) {
    case 16: return "IQ2_XXS";
    case 17: return "IQ2_XS";
    case 18: return "IQ3_XXS";
    case 19: return "IQ1_S";
    case 21: return "IQ3_S";
    case 22: return "IQ2_S";
    case 29: return "IQ1_M";
    case 34: return "TQ1_0";
    case 35: return "TQ2_0";
    case 40: return "NVFP4";
    case 41: return "Q1_0";
    default: return nullptr;
  }
}

constexpr uint32_t kMaxArrayDepth = 8;
constexpr uint64_t kMaxKeyBytes = 65535;
constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;       // key length, 1-byte key, type, u8 value
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 4 + 8;  // name, n_dims, type, offset

struct NeedMore {
  uint64_t bytes;
};

class Reader {
 public:
  Reader(std::span<const uint8_t> buf, const std::string& name, uint64_t file_size)
      : buf_(buf), name_(name), file_size_(file_size) {}

  uint64_t pos() const { return pos_; }
  uint64_t available() const { return buf_.size() - pos_; }
  /// Bytes that can still follow pos: known exactly when the file size is known.
  std::optional<uint64_t> remaining() const {
    if (file_size_) return file_size_ > pos_ ? file_size_ - pos_ : 0;
    return std::nullopt;
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorCode::INVALID_ARGUMENT, name_ + ": " + what);
  }

  // Ensures n bytes at pos exist.
  void need(uint64_t n, const std::string& what) const {
    uint64_t avail = buf_.size() - pos_;
    if (n <= avail) return;
    uint64_t end_known = file_size_ ? file_size_ : 0;
    if (end_known && (n > end_known - std::min(end_known, pos_)))
      fail(what + " at byte " + std::to_string(pos_) + " needs " + std::to_string(n) +
           " bytes but the file has only " +
           std::to_string(end_known - std::min(end_known, pos_)) + " left (truncated or corrupt)");
    if (partial()) {
      if (n > std::numeric_limits<uint64_t>::max() - pos_)
        fail(what + " at byte " + std::to_string(pos_) + " claims " + std::to_string(n) +
             " bytes, more than any file can hold");
      throw NeedMore{pos_ + n};
    }
    fail(what + " at byte " + std::to_string(pos_) + " needs " + std::to_string(n) +
         " bytes but only " + std::to_string(avail) + " are left (truncated or corrupt file)");
  }

  // The buffer is a prefix of a larger (or unknown-size) file.
  bool partial() const { return file_size_ == 0 || file_size_ > buf_.size(); }

  template <typename T> T read(const std::string& what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, buf_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::span<const uint8_t> bytes(uint64_t n, const std::string& what) {
    need(n, what);
    auto s = buf_.subspan(pos_, n);
    pos_ += n;
    return s;
  }

  std::string str(const std::string& what, uint64_t max_len = std::numeric_limits<uint64_t>::max()) {
    uint64_t len = read<uint64_t>(what + " length");
    if (len > max_len)
      fail(what + " at byte " + std::to_string(pos_ - 8) + " has length " + std::to_string(len) +
           ", more than the limit " + std::to_string(max_len));
    auto b = bytes(len, what + " (" + std::to_string(len) + " bytes)");
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  }

  // Element i of a string array: the common in-bounds case builds no message strings.
  std::string str_elem(const std::string& what, uint64_t i) {
    uint64_t avail = buf_.size() - pos_;
    if (avail >= 8) {
      uint64_t len;
      std::memcpy(&len, buf_.data() + pos_, 8);
      if (len <= avail - 8) {
        std::string s(reinterpret_cast<const char*>(buf_.data() + pos_ + 8), len);
        pos_ += 8 + len;
        return s;
      }
    }
    return str(what + "[" + std::to_string(i) + "]");  // slow path: exact error or NeedMore
  }

  // Rejects a count whose minimal encoding could not fit in what is left of the file.
  void check_count(uint64_t count, uint64_t min_item_bytes, const std::string& what) const {
    auto rem = remaining();
    uint64_t avail = rem ? *rem : (partial() ? std::numeric_limits<uint64_t>::max()
                                             : buf_.size() - pos_);
    if (min_item_bytes && count > avail / min_item_bytes)
      fail(what + " at byte " + std::to_string(pos_) + " claims " + std::to_string(count) +
           " items (at least " + std::to_string(min_item_bytes) + " bytes each) but only " +
           std::to_string(avail) + " bytes are left in the file");
  }

  const std::string& name() const { return name_; }

 private:
  std::span<const uint8_t> buf_;
  const std::string& name_;
  uint64_t file_size_;
  uint64_t pos_ = 0;
};

GgufType read_type(Reader& r, const std::string& what) {
  uint64_t at = r.pos();
  uint32_t t = r.read<uint32_t>(what + " type");
  if (t >= kGgufNumTypes)
    r.fail(what + " at byte " + std::to_string(at) + " has unknown value type " +
           std::to_string(t) + " (known: 0..12)");
  return static_cast<GgufType>(t);
}

GgufValue read_value(Reader& r, GgufType type, const std::string& what, uint32_t depth);

GgufValue read_array(Reader& r, const std::string& what, uint32_t depth) {
  if (depth >= kMaxArrayDepth)
    r.fail(what + ": arrays nested deeper than " + std::to_string(kMaxArrayDepth) + " levels");
  GgufType elem = read_type(r, what + " array element");
  uint64_t count = r.read<uint64_t>(what + " array length");
  size_t sz = gguf_scalar_size(elem);
  if (sz) {
    if (count > std::numeric_limits<uint64_t>::max() / sz)
      r.fail(what + ": array of " + std::to_string(count) + " elements overflows");
    auto b = r.bytes(count * sz, what + " array of " + std::to_string(count) + " " +
                                     std::string(gguf_type_name(elem)));
    if (elem == GgufType::BOOL)
      for (size_t i = 0; i < b.size(); ++i)
        if (b[i] > 1)
          r.fail(what + " element " + std::to_string(i) + ": BOOL byte " + std::to_string(b[i]) +
                 " is not 0 or 1");
    return GgufValue::raw_array(elem, count, std::vector<uint8_t>(b.begin(), b.end()));
  }
  if (elem == GgufType::STRING) {
    r.check_count(count, 8, what + " string array");
    std::vector<std::string> items;
    // Reserve only what the bytes at hand can hold (a prefix of unknown size checks no count).
    items.reserve(std::min<uint64_t>(count, r.available() / 8));
    for (uint64_t i = 0; i < count; ++i) items.push_back(r.str_elem(what, i));
    return GgufValue::string_array(std::move(items));
  }
  // ARRAY of ARRAY: each item is a type + length (12 bytes at least).
  r.check_count(count, 12, what + " nested array");
  std::vector<GgufValue> items;
  for (uint64_t i = 0; i < count; ++i)
    items.push_back(read_array(r, what + "[" + std::to_string(i) + "]", depth + 1));
  return GgufValue::array_of_arrays(std::move(items));
}

GgufValue read_value(Reader& r, GgufType type, const std::string& what, uint32_t depth) {
  switch (type) {
    case GgufType::UINT8: return GgufValue::scalar(r.read<uint8_t>(what));
    case GgufType::INT8: return GgufValue::scalar(r.read<int8_t>(what));
    case GgufType::UINT16: return GgufValue::scalar(r.read<uint16_t>(what));
    case GgufType::INT16: return GgufValue::scalar(r.read<int16_t>(what));
    case GgufType::UINT32: return GgufValue::scalar(r.read<uint32_t>(what));
    case GgufType::INT32: return GgufValue::scalar(r.read<int32_t>(what));
    case GgufType::UINT64: return GgufValue::scalar(r.read<uint64_t>(what));
    case GgufType::INT64: return GgufValue::scalar(r.read<int64_t>(what));
    case GgufType::FLOAT32: return GgufValue::scalar(r.read<float>(what));
    case GgufType::FLOAT64: return GgufValue::scalar(r.read<double>(what));
    case GgufType::BOOL: {
      uint64_t at = r.pos();
      uint8_t b = r.read<uint8_t>(what);
      if (b > 1)
        r.fail(what + " at byte " + std::to_string(at) + ": BOOL byte " + std::to_string(b) +
               " is not 0 or 1");
      return GgufValue::scalar(b != 0);
    }
    case GgufType::STRING: return GgufValue::string(r.str(what));
    case GgufType::ARRAY: return read_array(r, what, depth);
  }
  r.fail(what + ": unknown value type");
}

GgufTensorInfo read_tensor_info(Reader& r, uint64_t idx) {
  GgufTensorInfo t;
  uint64_t at = r.pos();
  t.name = r.str("tensor info #" + std::to_string(idx) + " name", 65535);
  const std::string what = "tensor '" + t.name + "' (info at byte " + std::to_string(at) + ")";
  if (t.name.empty()) r.fail(what + ": empty tensor name");
  t.n_dims = r.read<uint32_t>(what + " n_dims");
  if (t.n_dims > kGgufMaxDims)
    r.fail(what + ": n_dims " + std::to_string(t.n_dims) + " exceeds the GGUF maximum of " +
           std::to_string(kGgufMaxDims));
  // rows = ne[1]·ne[2]·…, checked on its own: with ne[0] = 0 the element count is 0 whatever the
  // other dims are, but a view of the tensor still multiplies them (core::Tensor::rows).
  int64_t rows = 1, numel = 1;
  for (uint32_t d = 0; d < t.n_dims; ++d) {
    uint64_t ne = r.read<uint64_t>(what + " ne[" + std::to_string(d) + "]");
    if (ne > uint64_t(std::numeric_limits<int64_t>::max()))
      r.fail(what + ": ne[" + std::to_string(d) + "] = " + std::to_string(ne) + " is negative");
    t.ne[d] = static_cast<int64_t>(ne);
    if ((d > 0 && __builtin_mul_overflow(rows, t.ne[d], &rows)) || __builtin_mul_overflow(numel, t.ne[d], &numel))
      r.fail(what + ": element count overflows 64 bits");
  }
  t.ggml_type = r.read<uint32_t>(what + " type");
  auto dt = dtype_from_ggml(t.ggml_type);
  if (!dt) {
    if (const char* name = unsupported_ggml_type_name(t.ggml_type))
      r.fail(what + ": ggml type " + std::to_string(t.ggml_type) + " (" + name +
             ") is not supported; use a Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_0, IQ4_XS or IQ4_NL variant of the model");
    r.fail(what + ": unknown or unsupported ggml type " + std::to_string(t.ggml_type));
  }
  t.dtype = *dt;
  const DTypeTraits& tr = dtype_traits(t.dtype);
  if (t.ne[0] % tr.block_elems != 0)
    r.fail(what + ": ne[0] = " + std::to_string(t.ne[0]) + " is not a multiple of the " +
           std::string(tr.name) + " block size " + std::to_string(tr.block_elems));
  int64_t row_bytes = 0, nbytes = 0;
  if (__builtin_mul_overflow(t.ne[0] / tr.block_elems, tr.block_bytes, &row_bytes) ||
      __builtin_mul_overflow(rows, row_bytes, &nbytes))
    r.fail(what + ": byte size overflows 64 bits");
  t.nbytes = static_cast<uint64_t>(nbytes);
  t.offset = r.read<uint64_t>(what + " offset");
  return t;
}

GgufHeader parse_header_or_need(Reader& r) {
  const std::string& name = r.name();
  GgufHeader h;
  h.metadata.set_source(name);
  auto magic = r.bytes(4, "magic");
  if (std::memcmp(magic.data(), "GGUF", 4) != 0)
    r.fail("not a GGUF file (magic bytes are not 'GGUF')");
  h.version = r.read<uint32_t>("version");
  if (h.version == 1)
    r.fail("GGUF version 1 is not supported (32-bit counts; reconvert the model with a current "
           "llama.cpp convert_hf_to_gguf.py)");
  if (h.version != 2 && h.version != 3) {
    uint32_t swapped = __builtin_bswap32(h.version);
    if (swapped == 2 || swapped == 3)
      r.fail("big-endian GGUF (version " + std::to_string(swapped) +
             ") is not supported; use a little-endian file");
    r.fail("unsupported GGUF version " + std::to_string(h.version) + " (expected 2 or 3)");
  }
  uint64_t n_tensors = r.read<uint64_t>("tensor count");
  uint64_t n_kv = r.read<uint64_t>("metadata count");
  r.check_count(n_kv, kMinKvBytes, "metadata count");
  for (uint64_t i = 0; i < n_kv; ++i) {
    uint64_t at = r.pos();
    std::string key = r.str("metadata key #" + std::to_string(i), kMaxKeyBytes);
    const std::string what = "metadata key '" + key + "' (at byte " + std::to_string(at) + ")";
    if (key.empty()) r.fail("metadata key #" + std::to_string(i) + " at byte " +
                            std::to_string(at) + " is empty");
    if (h.metadata.has(key)) r.fail("duplicate " + what);
    GgufType type = read_type(r, what);
    h.metadata.add(std::move(key), read_value(r, type, what, 0));
  }
  if (const GgufValue* a = h.metadata.find("general.alignment")) {
    if (a->type() != GgufType::UINT32)
      r.fail("metadata key 'general.alignment' has type " + a->type_string() +
             ", expected UINT32");
    uint32_t al = *a->to<uint32_t>();
    if (al == 0 || (al & (al - 1)) != 0)
      r.fail("general.alignment = " + std::to_string(al) + " is not a power of two");
    h.alignment = al;
  }
  r.check_count(n_tensors, kMinTensorInfoBytes, "tensor count");
  std::unordered_set<std::string> seen;
  h.tensors.reserve(std::min<uint64_t>(n_tensors, 4096));
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t = read_tensor_info(r, i);
    if (t.offset % h.alignment != 0)
      r.fail("tensor '" + t.name + "': data offset " + std::to_string(t.offset) +
             " is not a multiple of the alignment " + std::to_string(h.alignment));
    if (!seen.insert(t.name).second) r.fail("duplicate tensor name '" + t.name + "'");
    h.tensors.push_back(std::move(t));
  }
  h.header_bytes = r.pos();
  uint64_t al = h.alignment;
  h.data_offset = (h.header_bytes + al - 1) / al * al;
  for (const auto& t : h.tensors) {
    uint64_t end;
    if (__builtin_add_overflow(t.offset, t.nbytes, &end))
      r.fail("tensor '" + t.name + "': offset + size overflows 64 bits");
    h.data_bytes = std::max(h.data_bytes, end);
  }
  return h;
}

}  // namespace

GgufHeaderParse parse_gguf_header(std::span<const uint8_t> bytes, const std::string& name,
                                  uint64_t file_size) {
  if (file_size && bytes.size() > file_size) bytes = bytes.first(file_size);
  Reader r(bytes, name, file_size);
  GgufHeaderParse out;
  try {
    out.header = parse_header_or_need(r);
  } catch (const NeedMore& m) {
    out.bytes_needed = m.bytes;
    return out;
  }
  if (file_size) check_gguf_layout(*out.header, file_size, name);
  return out;
}

GgufHeader parse_gguf(std::span<const uint8_t> file, const std::string& name) {
  // file_size = buffer size: nothing is "partial", every short read is a truncation error.
  if (file.empty()) throw Error(ErrorCode::INVALID_ARGUMENT, name + ": empty file, not a GGUF");
  GgufHeaderParse p = parse_gguf_header(file, name, file.size());
  if (!p.header) throw Error(ErrorCode::INTERNAL, name + ": GGUF parser asked for more bytes");
  return std::move(*p.header);
}

void check_gguf_layout(const GgufHeader& h, uint64_t file_size, const std::string& name) {
  if (h.tensors.empty()) return;
  auto fail = [&](const std::string& m) { throw Error(ErrorCode::INVALID_ARGUMENT, name + ": " + m); };
  if (h.data_offset > file_size)
    fail("data section starts at byte " + std::to_string(h.data_offset) + " past the end of the " +
         std::to_string(file_size) + "-byte file (truncated)");
  uint64_t data_size = file_size - h.data_offset;
  std::vector<const GgufTensorInfo*> order;
  order.reserve(h.tensors.size());
  for (const auto& t : h.tensors) {
    if (t.offset > data_size || t.nbytes > data_size - t.offset)
      fail("tensor '" + t.name + "' (" + std::to_string(t.nbytes) + " bytes at data offset " +
           std::to_string(t.offset) + ") extends past the end of the file (data section has " +
           std::to_string(data_size) + " bytes; truncated download?)");
    order.push_back(&t);
  }
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  const GgufTensorInfo* a = nullptr;  // the non-empty tensor reaching furthest so far
  for (const GgufTensorInfo* b : order) {
    if (b->nbytes == 0) continue;
    if (a && a->offset + a->nbytes > b->offset)
      fail("tensors '" + a->name + "' [" + std::to_string(a->offset) + ", " +
           std::to_string(a->offset + a->nbytes) + ") and '" + b->name + "' [" +
           std::to_string(b->offset) + ", " + std::to_string(b->offset + b->nbytes) +
           ") overlap in the data section");
    if (!a || b->offset + b->nbytes > a->offset + a->nbytes) a = b;
  }
}

}  // namespace oxyd::loader
