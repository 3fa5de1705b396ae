// GGUF reader (v2 and v3; v1 is rejected). parse_gguf_header() decodes a header from a byte
// buffer — a whole file, or the first bytes of a remote file, in which case it says how many
// bytes it needs. GgufFile maps a file (or every shard of a split set) and views tensors in place.
// Every count, length, dimension, type and offset is checked against the bytes that exist before
// anything is allocated from it; bad input throws Error(INVALID_ARGUMENT) naming the file, the
// item (key, tensor name or byte offset) and what was wrong.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"
#include "loader/gguf_value.h"
#include "loader/mmap_file.h"

namespace oxyd::loader {

inline constexpr uint32_t kGgufDefaultAlignment = 32;
inline constexpr int kGgufMaxDims = 4;

struct GgufTensorInfo {
  std::string name;
  uint32_t n_dims = 0;
  std::array<int64_t, kGgufMaxDims> ne{1, 1, 1, 1};  // GGML order: ne[0] is contiguous
  uint32_t ggml_type = 0;
  DType dtype = DType::F32;
  uint64_t offset = 0;    // relative to the data section of its file, multiple of alignment
  uint64_t nbytes = 0;    // exact data bytes (rows × row bytes)
  uint32_t file_idx = 0;  // shard index in a split set (0 for a single file)

  /// HF/PyTorch order: ne reversed, n_dims entries (a 0-d tensor is [1]).
  std::vector<int64_t> shape() const;
  int64_t numel() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

struct GgufHeader {
  uint32_t version = 3;
  GgufMetadata metadata;
  std::vector<GgufTensorInfo> tensors;
  uint32_t alignment = kGgufDefaultAlignment;  // general.alignment
  uint64_t header_bytes = 0;   // bytes up to the end of the last tensor info
  uint64_t data_offset = 0;    // absolute offset of the data section (header_bytes aligned up)
  uint64_t data_bytes = 0;     // end of the furthest tensor, relative to data_offset
};

/// Result of parsing a possibly incomplete buffer: either a header, or the total number of
/// bytes (from the start of the file) needed to make progress — a lower bound; fetch at least
/// that many and call again.
struct GgufHeaderParse {
  std::optional<GgufHeader> header;
  uint64_t bytes_needed = 0;
  bool complete() const { return header.has_value(); }
};

/// Parses the header in `bytes` (the start of a GGUF file called `name` in messages).
/// `file_size` (0 = unknown) is the size of the whole file: with it, lengths and counts that run
/// past the end of the file are errors instead of "need more bytes", and tensor extents are
/// checked against it.
GgufHeaderParse parse_gguf_header(std::span<const uint8_t> bytes, const std::string& name,
                                  uint64_t file_size = 0);

/// Parses a complete GGUF file held in memory and validates the tensor layout against its size.
GgufHeader parse_gguf(std::span<const uint8_t> file, const std::string& name);

/// Checks tensor extents against the file size and that no two tensors overlap.
void check_gguf_layout(const GgufHeader& h, uint64_t file_size, const std::string& name);

/// Recognizes "<prefix>-00002-of-00005.gguf"; returns {prefix, no (1-based), count}.
struct GgufSplitName {
  std::string prefix;
  uint32_t no = 0;
  uint32_t count = 0;
};
std::optional<GgufSplitName> parse_gguf_split_name(const std::string& path);
std::string gguf_split_path(const std::string& prefix, uint32_t no, uint32_t count);

/// A GGUF model: metadata (of the first shard) + the merged tensor list of all shards.
/// Immutable after open; safe to read from many threads. Tensor views point into the read-only
/// mapping: never write through them.
class GgufFile : public GgufMetadata {
 public:
  /// Maps `path`; for a split name ("-0000i-of-0000n.gguf") opens and checks every shard.
  static GgufFile open(const std::string& path);
  /// Parses a complete file held in memory (not owned: `bytes` must outlive the GgufFile).
  static GgufFile from_buffer(std::span<const uint8_t> bytes, const std::string& name);

  uint32_t version() const { return headers_.at(0).version; }
  uint32_t alignment() const { return headers_.at(0).alignment; }
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(std::string_view name) const;
  /// Raw bytes of a tensor.
  std::span<const uint8_t> tensor_data(const GgufTensorInfo& t) const;
  /// A Tensor view (shape in HF order = reversed ne) pointing into the mapping.
  Tensor view(const GgufTensorInfo& t) const;
  /// The shard files (one entry for a single file).
  const std::vector<std::string>& paths() const { return paths_; }
  size_t num_files() const { return headers_.size(); }
  const GgufHeader& header(size_t file_idx = 0) const { return headers_.at(file_idx); }
  /// Releases the whole pages of tensor bytes [p, p + n) that are no longer read (MmapFile::release).
  void release(const void* p, size_t n) const {
    for (const MmapFile& m : maps_) m.release(p, n);
  }

 private:
  void add_shard(GgufHeader h, std::span<const uint8_t> bytes, const std::string& path);
  std::vector<MmapFile> maps_;
  std::vector<std::span<const uint8_t>> bytes_;  // per shard: whole file
  std::vector<GgufHeader> headers_;
  std::vector<std::string> paths_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

}  // namespace oxyd::loader
