// Incremental SHA-256 over OpenSSL's EVP interface, used to verify downloads against the hub's
// LFS oid. Hex digests are lower case, as the hub writes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace oxyd::hub {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, size_t size);
  /// Finishes and returns 64 lower-case hex digits; the object restarts empty afterwards.
  std::string hex_digest();
  void reset();

 private:
  void* ctx_ = nullptr;  // EVP_MD_CTX*
};

/// SHA-256 of the first `limit` bytes of a file (-1: all); throws Error(IO) if unreadable.
std::string sha256_file(const std::string& path, int64_t limit = -1);

}  // namespace oxyd::hub
