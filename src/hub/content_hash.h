// Content hashes the hub publishes for a file, computed incrementally over OpenSSL EVP: the
// SHA-256 of the bytes (the LFS oid of weight files) or git's blob id, SHA-1 of
// "blob <size>\0" + bytes (the `blobId` of plain git files such as config.json). Hex digests
// are lower case, as the hub writes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace oxyd::hub {

enum class HashKind { SHA256, GIT_BLOB_SHA1 };

class ContentHash {
 public:
  /// For GIT_BLOB_SHA1, `size` is the whole file's size (it is part of the hashed header).
  explicit ContentHash(HashKind kind = HashKind::SHA256, int64_t size = 0);
  ~ContentHash();
  ContentHash(const ContentHash&) = delete;
  ContentHash& operator=(const ContentHash&) = delete;
  void update(const void* data, size_t size);
  /// Finishes and returns the lower-case hex digest; the object restarts empty afterwards.
  std::string hex_digest();
  void reset();
  HashKind kind() const { return kind_; }

 private:
  HashKind kind_;
  int64_t size_;
  void* ctx_ = nullptr;  // EVP_MD_CTX*
};

/// Hash of the first `limit` bytes of a file (-1: all); throws Error(IO) if unreadable.
std::string hash_file(const std::string& path, HashKind kind = HashKind::SHA256, int64_t limit = -1);
inline std::string sha256_file(const std::string& path) { return hash_file(path); }

}  // namespace oxyd::hub
