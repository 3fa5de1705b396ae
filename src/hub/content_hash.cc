#include "hub/content_hash.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "core/error.h"

namespace oxyd::hub {

ContentHash::ContentHash(HashKind kind, int64_t size) : kind_(kind), size_(size) {
  ctx_ = EVP_MD_CTX_new();
  OXYD_CHECK(ctx_ != nullptr, "EVP_MD_CTX_new");
  reset();
}

ContentHash::~ContentHash() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void ContentHash::reset() {
  auto* c = static_cast<EVP_MD_CTX*>(ctx_);
  OXYD_CHECK(EVP_DigestInit_ex(c, kind_ == HashKind::SHA256 ? EVP_sha256() : EVP_sha1(), nullptr) == 1,
             "EVP_DigestInit_ex");
  if (kind_ == HashKind::GIT_BLOB_SHA1) {
    const std::string header = "blob " + std::to_string(size_) + std::string(1, '\0');
    EVP_DigestUpdate(c, header.data(), header.size());
  }
}

void ContentHash::update(const void* data, size_t size) {
  if (size) EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data, size);
}

std::string ContentHash::hex_digest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), md, &len);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  reset();
  return out;
}

std::string hash_file(const std::string& path, HashKind kind, int64_t limit) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw_error(ErrorCode::IO, "cannot open " + path + " to verify its checksum");
  std::error_code ec;
  const int64_t size = int64_t(std::filesystem::file_size(path, ec));
  ContentHash h(kind, limit < 0 ? size : std::min(limit, size));
  std::vector<char> buf(1 << 20);
  int64_t left = limit < 0 ? INT64_MAX : limit;
  while (left > 0) {
    size_t want = size_t(std::min<int64_t>(left, int64_t(buf.size())));
    size_t got = std::fread(buf.data(), 1, want, f);
    if (got == 0) break;
    h.update(buf.data(), got);
    left -= int64_t(got);
  }
  bool err = std::ferror(f);
  std::fclose(f);
  if (err) throw_error(ErrorCode::IO, "read error while hashing " + path);
  return h.hex_digest();
}

}  // namespace oxyd::hub
