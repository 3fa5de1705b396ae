// MmapFile: a read-only memory map of a whole file (RAII, move-only). The loaders view tensor
// data in place through it; the mapping lives as long as the object. Opening failures throw
// Error(IO) naming the path and the OS reason. An empty file maps to a null pointer, size 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace oxyd::loader {

class MmapFile {
 public:
  MmapFile() = default;
  /// Maps `path` read-only (PROT_READ, MAP_PRIVATE). Throws Error(IO) if it cannot.
  static MmapFile open(const std::string& path);
  ~MmapFile();
  MmapFile(MmapFile&& other) noexcept;
  MmapFile& operator=(MmapFile&& other) noexcept;
  MmapFile(const MmapFile&) = delete;
  MmapFile& operator=(const MmapFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }
  /// Drops the whole pages inside [p, p + n) from this process's memory (madvise DONTNEED);
  /// reading them again faults them back in from the file. For ranges no longer read, e.g.
  /// weights a backend has copied into its own layout. p must lie in this mapping.
  void release(const void* p, size_t n) const;

 private:
  void reset();
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace oxyd::loader
