// Helpers for the hub tests: temp dirs (removed at scope exit), file reads/writes, a tiny GGUF
// built with the loader's GgufWriter, scoped environment variables, and expect_error.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace oxyd::hub::testing {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "oxyd_hub_XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string str() const { return path.string(); }
  std::string operator/(const std::string& rel) const { return (path / rel).string(); }
};

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {};
  return std::string(std::istreambuf_iterator<char>(f), {});
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), std::streamsize(bytes.size()));
}

/// Sets (or unsets, with nullopt) an environment variable for the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// A valid GGUF (llama architecture metadata) of about `bytes` bytes whose tensor data is a
/// pseudo-random sequence seeded by `seed`, so two files of one size differ.
std::string tiny_gguf(int64_t bytes, uint32_t seed, const std::string& arch = "llama");
/// Pseudo-random bytes.
std::string random_bytes(size_t n, uint32_t seed);

template <typename Fn>
void expect_error(Fn&& fn, ErrorCode code, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "expected an oxyd::Error, nothing was thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << "message '" << e.what() << "' lacks '" << p << "'";
  }
}

/// Every regular file / link under dir (relative paths), for "nothing written outside" checks.
std::vector<std::string> all_files(const std::string& dir);

}  // namespace oxyd::hub::testing
