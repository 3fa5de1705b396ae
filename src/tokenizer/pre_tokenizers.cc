// Pre-tokenizer implementations. split_ranges() reproduces NormalizedString::split of Hugging Face
// tokenizers: matches cover the text as (range, is_match) runs, then the delimiter behaviour folds
// them; empty pieces are dropped.
#include "tokenizer/pre_tokenizers.h"

#include <algorithm>

#include "tokenizer/byte_level.h"
#include "tokenizer/unicode.h"

namespace oxyd::tokenizer {

namespace {

struct Run {
  size_t b, e;
  bool is_match;
};

// Matches (non-overlapping, ordered) -> runs covering [0, n).
void to_runs(size_t n, const std::vector<std::pair<size_t, size_t>>& m, std::vector<Run>& runs) {
  runs.clear();
  if (n == 0) {
    runs.push_back({0, 0, false});
    return;
  }
  size_t prev = 0;
  for (auto [b, e] : m) {
    if (prev != b) runs.push_back({prev, b, false});
    runs.push_back({b, e, true});
    prev = e;
  }
  if (prev != n) runs.push_back({prev, n, false});
}

// Folds runs by behaviour; returns kept ranges (b, e) in order (removed ones dropped).
void fold(std::vector<Run>& runs, SplitBehavior behavior, bool invert,
          std::vector<std::pair<size_t, size_t>>& out) {
  out.clear();
  if (invert) {
    for (auto& r : runs) r.is_match = !r.is_match;
  }
  switch (behavior) {
    case SplitBehavior::ISOLATED:
      for (auto& r : runs) out.emplace_back(r.b, r.e);
      break;
    case SplitBehavior::REMOVED:
      for (auto& r : runs)
        if (!r.is_match) out.emplace_back(r.b, r.e);
      break;
    case SplitBehavior::CONTIGUOUS: {
      bool prev_match = false;
      for (auto& r : runs) {
        if (r.is_match == prev_match && !out.empty()) out.back().second = r.e;
        else out.emplace_back(r.b, r.e);
        prev_match = r.is_match;
      }
      break;
    }
    case SplitBehavior::MERGED_WITH_PREVIOUS: {
      bool prev_match = false;
      for (auto& r : runs) {
        if (r.is_match && !prev_match && !out.empty()) out.back().second = r.e;
        else out.emplace_back(r.b, r.e);
        prev_match = r.is_match;
      }
      break;
    }
    case SplitBehavior::MERGED_WITH_NEXT: {
      bool prev_match = false;
      for (size_t k = runs.size(); k-- > 0;) {
        const Run& r = runs[k];
        if (r.is_match && !prev_match && !out.empty()) out.back().first = r.b;
        else out.emplace_back(r.b, r.e);
        prev_match = r.is_match;
      }
      std::reverse(out.begin(), out.end());
      break;
    }
  }
}

// Every character satisfying pred is its own match.
template <typename Pred>
void char_matches(std::string_view text, Pred pred, std::vector<std::pair<size_t, size_t>>& m) {
  for (size_t i = 0; i < text.size();) {
    size_t start = i;
    char32_t c = next_code_point(text, i);
    if (pred(c)) m.emplace_back(start, i);
  }
}

bool is_bert_punc(char32_t c) {
  bool ascii_punct = (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) ||
                     (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
  return ascii_punct || is_punctuation(c);
}

// Splits each non-added piece with a matcher and behaviour.
template <typename Matcher>
void split_pieces(std::vector<Piece>& pieces, Matcher matcher, SplitBehavior behavior, bool invert) {
  std::vector<Piece> out;
  out.reserve(pieces.size() * 2);
  std::vector<std::pair<size_t, size_t>> m, ranges;
  std::vector<Run> runs;
  for (auto& p : pieces) {
    if (p.added_id >= 0) {
      out.push_back(std::move(p));
      continue;
    }
    m.clear();
    matcher(p.text, m);
    to_runs(p.text.size(), m, runs);
    fold(runs, behavior, invert, ranges);
    for (auto [b, e] : ranges) {
      if (b == e) continue;
      Piece q;
      q.text.assign(p.text, b, e - b);
      q.at_start = p.at_start && b == 0;
      out.push_back(std::move(q));
    }
  }
  pieces.swap(out);
}

void byte_level(std::vector<Piece>& pieces, const PreTokenizer& pt) {
  if (pt.add_prefix_space) {
    for (auto& p : pieces)
      if (p.added_id < 0 && (p.text.empty() || p.text[0] != ' ')) p.text.insert(0, " ");
  }
  if (pt.use_regex) {
    split_pieces(pieces, [](const std::string& t, auto& m) { gpt2_pattern().find_all(t, m); },
                 SplitBehavior::ISOLATED, false);
  }
  std::string mapped;
  for (auto& p : pieces) {
    if (p.added_id >= 0) continue;
    mapped.clear();
    bytes_to_chars(p.text, mapped);
    p.text.swap(mapped);
  }
}

void metaspace(std::vector<Piece>& pieces, const PreTokenizer& pt) {
  for (auto& p : pieces) {
    if (p.added_id >= 0) continue;
    std::string t;
    t.reserve(p.text.size() + 8);
    for (char c : p.text) {
      if (c == ' ') t.append(pt.replacement);
      else t.push_back(c);
    }
    bool starts = t.compare(0, pt.replacement.size(), pt.replacement) == 0;
    if (!starts && (pt.prepend_scheme == PreTokenizer::Prepend::ALWAYS ||
                    (pt.prepend_scheme == PreTokenizer::Prepend::FIRST && p.at_start))) {
      t.insert(0, pt.replacement);
    }
    p.text.swap(t);
  }
  if (pt.split) {
    Pattern lit = Pattern::literal(pt.replacement);
    split_pieces(pieces, [&](const std::string& t, auto& m) { lit.find_all(t, m); },
                 SplitBehavior::MERGED_WITH_NEXT, false);
  }
}

}  // namespace

const Pattern& gpt2_pattern() {
  static const Pattern p = Pattern::regex(
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)",
      "ByteLevel pre-tokenizer");
  return p;
}

void PreTokenizer::apply(std::vector<Piece>& pieces) const {
  switch (kind) {
    case Kind::NONE: return;
    case Kind::SEQUENCE:
      for (const auto& c : children) c.apply(pieces);
      return;
    case Kind::SPLIT:
      split_pieces(pieces, [&](const std::string& t, auto& m) { pattern.find_all(t, m); },
                   behavior, invert);
      return;
    case Kind::BYTE_LEVEL: byte_level(pieces, *this); return;
    case Kind::METASPACE: metaspace(pieces, *this); return;
    case Kind::DIGITS:
      split_pieces(pieces, [](const std::string& t, auto& m) { char_matches(t, is_numeric, m); },
                   individual_digits ? SplitBehavior::ISOLATED : SplitBehavior::CONTIGUOUS, false);
      return;
    case Kind::BERT:
      split_pieces(pieces, [](const std::string& t, auto& m) { char_matches(t, is_whitespace, m); },
                   SplitBehavior::REMOVED, false);
      split_pieces(pieces, [](const std::string& t, auto& m) { char_matches(t, is_bert_punc, m); },
                   SplitBehavior::ISOLATED, false);
      return;
    case Kind::WHITESPACE: {
      // tokenizers compiles \w+|[^\w\s]+ with Rust's regex crate, whose \w is UTS #18 "word"
      // (Alphabetic, marks, Nd, Pc, joiners) and \s is White_Space; spelled out for PCRE2.
#define OXYD_W R"(\p{L}\p{Nl}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}\x{24B6}-\x{24E9}\x{1F130}-\x{1F149}\x{1F150}-\x{1F169}\x{1F170}-\x{1F189})"
#define OXYD_S R"(\t\n\x{0B}\f\r\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})"
      static const Pattern words =
          Pattern::regex("[" OXYD_W "]+|[^" OXYD_W OXYD_S "]+", "Whitespace pre-tokenizer");
#undef OXYD_W
#undef OXYD_S
      split_pieces(pieces, [](const std::string& t, auto& m) { words.find_all(t, m); },
                   SplitBehavior::REMOVED, true);
      return;
    }
    case Kind::WHITESPACE_SPLIT:
      split_pieces(pieces, [](const std::string& t, auto& m) { char_matches(t, is_whitespace, m); },
                   SplitBehavior::REMOVED, false);
      return;
    case Kind::PUNCTUATION:
      split_pieces(pieces, [](const std::string& t, auto& m) { char_matches(t, is_bert_punc, m); },
                   behavior, false);
      return;
  }
}

}  // namespace oxyd::tokenizer
