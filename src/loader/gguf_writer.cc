// GgufWriter serialization; see gguf_writer.h.
#include "loader/gguf_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "core/error.h"

namespace oxyd::loader {
namespace {

class Out {
 public:
  explicit Out(std::vector<uint8_t>& b) : b_(b) {}
  template <typename T> void put(T v) {
    size_t n = b_.size();
    b_.resize(n + sizeof(T));
    std::memcpy(b_.data() + n, &v, sizeof(T));
  }
  void raw(const void* p, size_t n) {
    const auto* c = static_cast<const uint8_t*>(p);
    b_.insert(b_.end(), c, c + n);
  }
  void str(const std::string& s) {
    put<uint64_t>(s.size());
    raw(s.data(), s.size());
  }
  void pad_to(uint64_t al) { b_.resize((b_.size() + al - 1) / al * al, 0); }
  size_t size() const { return b_.size(); }

 private:
  std::vector<uint8_t>& b_;
};

void put_value(Out& o, const GgufValue& v);

void put_array_body(Out& o, const GgufValue& v) {
  o.put<uint32_t>(static_cast<uint32_t>(v.elem_type()));
  o.put<uint64_t>(v.size());
  if (v.elem_type() == GgufType::STRING) {
    for (const auto& s : v.strings()) o.str(s);
  } else if (v.elem_type() == GgufType::ARRAY) {
    for (const auto& it : v.items()) put_array_body(o, it);
  } else {
    o.raw(v.raw().data(), v.raw().size());
  }
}

void put_value(Out& o, const GgufValue& v) {
  switch (v.type()) {
    case GgufType::STRING: o.str(v.as_string()); return;
    case GgufType::ARRAY: put_array_body(o, v); return;
    default: {
      // Scalars: the low gguf_scalar_size bytes of the little-endian bit pattern.
      uint64_t bits = 0;
      switch (v.type()) {
        case GgufType::FLOAT32: { float f = *v.to<float>(); std::memcpy(&bits, &f, 4); break; }
        case GgufType::FLOAT64: { double d = *v.to<double>(); std::memcpy(&bits, &d, 8); break; }
        case GgufType::BOOL: bits = *v.to<bool>() ? 1 : 0; break;
        case GgufType::INT8: case GgufType::INT16: case GgufType::INT32: case GgufType::INT64: {
          int64_t i = *v.to<int64_t>();
          std::memcpy(&bits, &i, 8);
          break;
        }
        default: bits = *v.to<uint64_t>(); break;
      }
      o.raw(&bits, gguf_scalar_size(v.type()));
    }
  }
}

}  // namespace

GgufWriter::GgufWriter(uint32_t alignment, uint32_t version)
    : alignment_(alignment), version_(version) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    throw Error(ErrorCode::INVALID_ARGUMENT,
                "GgufWriter: alignment " + std::to_string(alignment) + " is not a power of two");
  if (version != 2 && version != 3)
    throw Error(ErrorCode::INVALID_ARGUMENT,
                "GgufWriter: can write GGUF version 2 or 3, not " + std::to_string(version));
}

int64_t GgufWriter::check_tensor(const std::string& name, DType dtype, const std::vector<int64_t>& shape) const {
  if (shape.size() > 4)
    throw Error(ErrorCode::INVALID_ARGUMENT, "GgufWriter: tensor '" + name + "' has " +
                                                 std::to_string(shape.size()) + " dims (max 4)");
  if (static_cast<uint32_t>(dtype) >= 1000)
    throw Error(ErrorCode::INVALID_ARGUMENT, "GgufWriter: tensor '" + name + "' has dtype " +
                                                 std::string(dtype_name(dtype)) +
                                                 ", which GGUF cannot store");
  for (const auto& t : tensors_)
    if (t.name == name)
      throw Error(ErrorCode::INVALID_ARGUMENT, "GgufWriter: duplicate tensor '" + name + "'");
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
  int64_t cols = shape.empty() ? 1 : shape.back();
  return rows * dtype_row_bytes(dtype, cols);
}

void GgufWriter::add_tensor(std::string name, DType dtype, const std::vector<int64_t>& shape,
                            std::span<const uint8_t> data) {
  const int64_t nbytes = check_tensor(name, dtype, shape);
  if (static_cast<int64_t>(data.size()) != nbytes)
    throw Error(ErrorCode::INVALID_ARGUMENT,
                "GgufWriter: tensor '" + name + "' needs " + std::to_string(nbytes) +
                    " bytes for its shape and dtype but got " + std::to_string(data.size()));
  PendingTensor t{std::move(name), dtype, std::vector<int64_t>(shape.rbegin(), shape.rend()),
                  std::vector<uint8_t>(data.begin(), data.end()), nbytes, {}};
  tensors_.push_back(std::move(t));
}

void GgufWriter::add_tensor_filled(std::string name, DType dtype, const std::vector<int64_t>& shape, Fill fill) {
  if (!fill) throw Error(ErrorCode::INVALID_ARGUMENT, "GgufWriter: tensor '" + name + "' has no fill function");
  const int64_t nbytes = check_tensor(name, dtype, shape);
  tensors_.push_back(PendingTensor{std::move(name), dtype, std::vector<int64_t>(shape.rbegin(), shape.rend()), {},
                                   nbytes, std::move(fill)});
}

std::vector<uint8_t> GgufWriter::header_bytes() const {
  std::vector<uint8_t> buf;
  Out o(buf);
  GgufMetadata md = metadata_;
  if (const GgufValue* a = md.find("general.alignment")) {
    if (a->type() != GgufType::UINT32 || *a->to<uint32_t>() != alignment_)
      throw Error(ErrorCode::INVALID_ARGUMENT,
                  "GgufWriter: general.alignment in the metadata disagrees with the writer's "
                  "alignment; pass the alignment to the constructor instead");
  } else if (alignment_ != 32) {
    md.add("general.alignment", GgufValue::scalar<uint32_t>(alignment_));
  }
  o.raw("GGUF", 4);
  o.put<uint32_t>(version_);
  o.put<uint64_t>(tensors_.size());
  o.put<uint64_t>(md.size());
  for (const auto& [k, v] : md.entries()) {
    o.str(k);
    o.put<uint32_t>(static_cast<uint32_t>(v.type()));
    put_value(o, v);
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    o.str(t.name);
    o.put<uint32_t>(static_cast<uint32_t>(t.ne.size()));
    for (int64_t n : t.ne) o.put<uint64_t>(static_cast<uint64_t>(n));
    o.put<uint32_t>(static_cast<uint32_t>(t.dtype));
    o.put<uint64_t>(offset);
    offset += (static_cast<uint64_t>(t.nbytes) + alignment_ - 1) / alignment_ * alignment_;
  }
  o.pad_to(alignment_);
  return buf;
}

std::vector<uint8_t> GgufWriter::to_bytes() const {
  std::vector<uint8_t> buf = header_bytes();
  Out o(buf);
  for (const auto& t : tensors_) {
    if (t.fill) {
      const size_t at = buf.size();
      buf.resize(at + static_cast<size_t>(t.nbytes));
      t.fill(std::span<uint8_t>(buf.data() + at, static_cast<size_t>(t.nbytes)));
    } else {
      o.raw(t.data.data(), t.data.size());
    }
    o.pad_to(alignment_);
  }
  return buf;
}

// Streams the header, then each tensor (a filled one through a buffer reused across tensors).
void GgufWriter::write(const std::string& path) const {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw Error(ErrorCode::IO, "cannot create '" + path + "': " + std::strerror(errno));
  uint64_t total = 0;
  bool ok = true;
  int err = 0;
  auto put = [&](const uint8_t* p, size_t n) {
    if (ok && n > 0 && std::fwrite(p, 1, n, f) != n) ok = false, err = errno;
    total += n;
  };
  std::vector<uint8_t> buf = header_bytes(), pad(alignment_, 0);
  try {
    put(buf.data(), buf.size());
    for (const auto& t : tensors_) {
      const size_t n = static_cast<size_t>(t.nbytes);
      if (t.fill) {
        buf.resize(n);
        t.fill(std::span<uint8_t>(buf.data(), n));
        put(buf.data(), n);
      } else {
        put(t.data.data(), n);
      }
      put(pad.data(), static_cast<size_t>((alignment_ - total % alignment_) % alignment_));
    }
  } catch (...) {
    std::fclose(f);
    throw;
  }
  const int rc = std::fclose(f);
  if (rc != 0 && ok) ok = false, err = errno;
  if (!ok)
    throw Error(ErrorCode::IO, "cannot write " + std::to_string(total) + " bytes to '" + path +
                                   "': " + std::strerror(err));
}

}  // namespace oxyd::loader
