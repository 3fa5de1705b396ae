// GgufWriter: builds a GGUF v3 (or v2) file from metadata and tensors of any DType, with the
// data section and every tensor aligned to general.alignment (default 32) and zero padding.
// Used by tests and conversion; it holds copies of the tensor bytes until written, except for
// tensors added with a fill function, whose bytes write() makes one tensor at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "loader/gguf_value.h"

namespace oxyd::loader {

class GgufWriter {
 public:
  /// version: 3 (default) or 2 (identical layout; only the version field differs).
  explicit GgufWriter(uint32_t alignment = 32, uint32_t version = 3);

  GgufMetadata& metadata() { return metadata_; }
  /// Adds a key (throws on a duplicate). `general.alignment` is managed by the writer.
  void add(std::string key, GgufValue value) { metadata_.add(std::move(key), std::move(value)); }
  template <typename T> void add_scalar(std::string key, T v) {
    add(std::move(key), GgufValue::scalar<T>(v));
  }
  void add_string(std::string key, std::string v) { add(std::move(key), GgufValue::string(std::move(v))); }

  /// shape in HF order (outermost first; written reversed as ne). `data` must hold exactly the
  /// tensor's bytes (rows × dtype_row_bytes); it is copied.
  void add_tensor(std::string name, DType dtype, const std::vector<int64_t>& shape,
                  std::span<const uint8_t> data);
  /// A tensor whose bytes are made when the file is written: `fill` gets a buffer of exactly the
  /// tensor's bytes to fill. write() holds one such buffer at a time (files larger than memory
  /// should not be copied whole); to_bytes() calls it too.
  using Fill = std::function<void(std::span<uint8_t>)>;
  void add_tensor_filled(std::string name, DType dtype, const std::vector<int64_t>& shape, Fill fill);

  std::vector<uint8_t> to_bytes() const;
  /// Writes the file; throws Error(IO) naming the path on failure.
  void write(const std::string& path) const;

 private:
  struct PendingTensor {
    std::string name;
    DType dtype;
    std::vector<int64_t> ne;
    std::vector<uint8_t> data;
    int64_t nbytes = 0;
    Fill fill;  // set: `data` is empty and made by fill at write time
  };
  /// Checks a new tensor and returns its byte count.
  int64_t check_tensor(const std::string& name, DType dtype, const std::vector<int64_t>& shape) const;
  /// Everything before the first tensor's bytes: header, metadata, tensor infos, padding.
  std::vector<uint8_t> header_bytes() const;
  uint32_t alignment_;
  uint32_t version_;
  GgufMetadata metadata_{"GgufWriter"};
  std::vector<PendingTensor> tensors_;
};

}  // namespace oxyd::loader
