// PCRE2 wrapper for the pre-tokenizer split patterns of tokenizer.json (Oniguruma syntax in Hugging
// Face; the patterns used by real vocabularies are the common subset). Compiled once with UTF, UCP
// (so \s, \w, \d are Unicode-aware) and JIT; matching is thread-safe (per-thread match data).
// Inputs must be valid UTF-8 (the tokenizer sanitizes text before it reaches here).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oxyd::tokenizer {

class Regex {
 public:
  /// Throws oxyd::Error(INVALID_ARGUMENT) naming `where` if the pattern does not compile.
  Regex(const std::string& pattern, const std::string& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  /// Non-overlapping matches, left to right, as byte ranges [begin, end). An empty match advances
  /// by one character (as Oniguruma's find_iter does).
  void find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const;
  const std::string& pattern() const { return pattern_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string pattern_;
};

/// A split/replace pattern: a literal string or a regex. Literal "" never matches.
class Pattern {
 public:
  Pattern() = default;
  static Pattern literal(std::string s);
  static Pattern regex(const std::string& re, const std::string& where);
  void find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const;

 private:
  std::string literal_;
  std::shared_ptr<Regex> regex_;
};

}  // namespace oxyd::tokenizer
