// safetensors reader: one file ([u64 header_len][JSON header][data]) or a sharded model
// (model.safetensors.index.json weight_map). Tensors are viewed in place through the mmap.
// The header is validated in full before use: header length vs file size, JSON object shape,
// known dtype, shape × dtype = byte range, ranges inside the data buffer and not overlapping,
// no duplicate names; every defect is Error(INVALID_ARGUMENT) naming the file and tensor.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"
#include "loader/mmap_file.h"

namespace oxyd::loader {

/// Largest JSON header accepted (the safetensors library's own limit).
inline constexpr uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;

struct SafetensorsTensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;  // row-major; empty = scalar
  uint64_t begin = 0;          // byte range in the data buffer (after the header)
  uint64_t end = 0;
  uint32_t file_idx = 0;       // shard index
  uint64_t nbytes() const { return end - begin; }
  int64_t numel() const;
};

struct SafetensorsHeader {
  std::vector<SafetensorsTensorInfo> tensors;   // in file order of data offsets
  std::map<std::string, std::string> metadata;  // "__metadata__"
  uint64_t data_offset = 0;                     // 8 + header length
  uint64_t data_bytes = 0;                      // size of the data buffer
};

/// safetensors dtype name ("BF16", "F8_E4M3", …) → DType; nullopt if unknown.
std::optional<DType> safetensors_dtype(std::string_view name);

/// Parses and validates a complete file held in memory.
SafetensorsHeader parse_safetensors(std::span<const uint8_t> file, const std::string& name);

/// For remote reads: how many leading bytes of the file hold the header (8 + its length), or
/// nullopt if `prefix` has fewer than 8 bytes. Validates the length against file_size if given.
std::optional<uint64_t> safetensors_header_size(std::span<const uint8_t> prefix,
                                                const std::string& name, uint64_t file_size = 0);
/// Parses a header from the first header_size bytes; tensor ranges are checked against
/// file_size (the whole remote file).
SafetensorsHeader parse_safetensors_header(std::span<const uint8_t> bytes, const std::string& name,
                                           uint64_t file_size);

/// A safetensors model: one file or every shard of an index. Immutable after open.
class SafetensorsFile {
 public:
  /// `path`: a .safetensors file, a *.safetensors.index.json, or a directory holding
  /// model.safetensors.index.json or model.safetensors.
  static SafetensorsFile open(const std::string& path);
  /// A complete file in memory (not owned: `bytes` must outlive the object).
  static SafetensorsFile from_buffer(std::span<const uint8_t> bytes, const std::string& name);

  const std::vector<SafetensorsTensorInfo>& tensors() const { return tensors_; }
  const SafetensorsTensorInfo* find_tensor(std::string_view name) const;
  std::span<const uint8_t> tensor_data(const SafetensorsTensorInfo& t) const;
  /// Tensor view into the mapping (read-only memory). Throws for more than 4 dims.
  Tensor view(const SafetensorsTensorInfo& t) const;
  /// Releases the whole pages of tensor bytes [p, p + n) that are no longer read (MmapFile::release).
  void release(const void* p, size_t n) const {
    for (const MmapFile& m : maps_) m.release(p, n);
  }
  /// __metadata__ of the first shard (e.g. {"format": "pt"}).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::vector<std::string>& paths() const { return paths_; }

 private:
  void add_file(SafetensorsHeader h, std::span<const uint8_t> bytes, const std::string& path);
  std::vector<MmapFile> maps_;
  std::vector<std::span<const uint8_t>> bytes_;
  std::vector<uint64_t> data_offsets_;
  std::vector<std::string> paths_;
  std::vector<SafetensorsTensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> index_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace oxyd::loader
