#include "hub/sha256.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "core/error.h"

namespace oxyd::hub {

Sha256::Sha256() {
  ctx_ = EVP_MD_CTX_new();
  OXYD_CHECK(ctx_ != nullptr, "EVP_MD_CTX_new");
  reset();
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::reset() {
  OXYD_CHECK(EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) == 1,
             "EVP_DigestInit_ex(sha256)");
}

void Sha256::update(const void* data, size_t size) {
  if (size) EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data, size);
}

std::string Sha256::hex_digest() {
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

std::string sha256_file(const std::string& path, int64_t limit) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw_error(ErrorCode::IO, "cannot open " + path + " to verify its checksum");
  Sha256 h;
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
