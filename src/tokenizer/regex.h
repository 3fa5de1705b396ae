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
  /// How the pattern and the text are read. UNICODE: UTF-8, Unicode-aware \s \w \d, \p{..}
  /// from utf8proc (tokenizer.json patterns). UTF8_ASCII_CLASSES: UTF-8 code points, but \s \w \d
  /// ASCII only and `$` only at the very end (ECMAScript std::wregex, as llama.cpp runs patterns
  /// without a Unicode category). BYTES: one byte per character, ASCII classes, `$` at the end
  /// (std::regex on llama.cpp's one-byte-per-code-point "collapsed" text).
  enum class Syntax { UNICODE, UTF8_ASCII_CLASSES, BYTES };
  /// Throws oxyd::Error(INVALID_ARGUMENT) naming `where` if the pattern does not compile.
  Regex(const std::string& pattern, const std::string& where, Syntax syntax = Syntax::UNICODE);
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
  Syntax syntax_;
};

/// A matcher with its own idea of a match (llama.cpp's hand-written splitters, or a regex run on
/// a transformed copy of the text): non-overlapping [begin, end) byte ranges of `text`, in order.
class Matcher {
 public:
  virtual ~Matcher() = default;
  virtual void find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const = 0;
};

/// A split/replace pattern: a literal string or a regex. Literal "" never matches.
class Pattern {
 public:
  Pattern() = default;
  static Pattern literal(std::string s);
  static Pattern regex(const std::string& re, const std::string& where);
  static Pattern custom(std::shared_ptr<const Matcher> m);
  void find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const;

 private:
  std::string literal_;
  std::shared_ptr<Regex> regex_;
  std::shared_ptr<const Matcher> custom_;
};

}  // namespace oxyd::tokenizer
