// Decoder stages; each mirrors the corresponding Hugging Face tokenizers decoder.
#include "tokenizer/decoders.h"

#include "tokenizer/byte_level.h"
#include "tokenizer/unicode.h"

namespace oxyd::tokenizer {

namespace {

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  std::string out;
  size_t prev = 0;
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + from.size())) {
    out.append(s, prev, pos - prev);
    out.append(to);
    prev = pos + from.size();
  }
  if (prev == 0) return;
  out.append(s, prev, std::string::npos);
  s.swap(out);
}

void byte_level(std::vector<std::string>& tokens) {
  std::string bytes;
  for (const auto& t : tokens) {
    size_t mark = bytes.size();
    bool ok = true;
    for (size_t i = 0; i < t.size();) {
      int b = char_to_byte(next_code_point(t, i));
      if (b < 0) {
        ok = false;
        break;
      }
      bytes.push_back(static_cast<char>(b));
    }
    if (!ok) {
      bytes.resize(mark);
      bytes.append(t);
    }
  }
  tokens.assign(1, utf8_lossy(bytes));
}

int parse_byte_token(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  int v = 0;
  for (int k = 3; k < 5; ++k) {
    char c = t[k];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                            : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

void byte_fallback(std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  out.reserve(tokens.size());
  std::string pending;
  auto flush = [&] {
    if (pending.empty()) return;
    if (is_valid_utf8(pending)) {
      out.push_back(pending);
    } else {
      for (size_t k = 0; k < pending.size(); ++k) out.emplace_back("\xEF\xBF\xBD");
    }
    pending.clear();
  };
  for (auto& t : tokens) {
    int b = parse_byte_token(t);
    if (b >= 0) {
      pending.push_back(static_cast<char>(b));
    } else {
      flush();
      out.push_back(std::move(t));
    }
  }
  flush();
  tokens.swap(out);
}

// Strips up to n leading / trailing occurrences of the character `content`.
void strip(std::string& t, const std::string& content, size_t start, size_t stop) {
  size_t b = 0, e = t.size();
  for (size_t k = 0; k < start && b + content.size() <= e && t.compare(b, content.size(), content) == 0; ++k)
    b += content.size();
  for (size_t k = 0; k < stop && e >= b + content.size() &&
                     t.compare(e - content.size(), content.size(), content) == 0;
       ++k)
    e -= content.size();
  t = t.substr(b, e - b);
}

void wordpiece_cleanup(std::string& s) {
  replace_all(s, " .", ".");
  replace_all(s, " ?", "?");
  replace_all(s, " !", "!");
  replace_all(s, " ,", ",");
  replace_all(s, " ' ", "'");
  replace_all(s, " n't", "n't");
  replace_all(s, " 'm", "'m");
  replace_all(s, " do not", " don't");
  replace_all(s, " 's", "'s");
  replace_all(s, " 've", "'ve");
  replace_all(s, " 're", "'re");
}

}  // namespace

void Decoder::decode_chain(std::vector<std::string>& tokens) const {
  switch (kind) {
    case Kind::NONE: return;
    case Kind::SEQUENCE:
      for (const auto& c : children) c.decode_chain(tokens);
      return;
    case Kind::BYTE_LEVEL: byte_level(tokens); return;
    case Kind::REPLACE:
      for (auto& t : tokens) replace_all(t, pattern, content);
      return;
    case Kind::BYTE_FALLBACK: byte_fallback(tokens); return;
    case Kind::FUSE: {
      std::string all;
      for (auto& t : tokens) all += t;
      tokens.assign(1, std::move(all));
      return;
    }
    case Kind::STRIP:
      for (auto& t : tokens) strip(t, content, strip_start, strip_stop);
      return;
    case Kind::METASPACE:
      for (size_t i = 0; i < tokens.size(); ++i) {
        // Hugging Face drops every replacement character of the first token, not only a leading one.
        replace_all(tokens[i], replacement, i == 0 && prepend_first ? "" : " ");
      }
      return;
    case Kind::WORDPIECE:
      for (size_t i = 0; i < tokens.size(); ++i) {
        std::string& t = tokens[i];
        if (i != 0) {
          if (t.compare(0, prefix.size(), prefix) == 0) t.erase(0, prefix.size());
          else t.insert(0, " ");
        }
        if (cleanup) wordpiece_cleanup(t);
      }
      return;
    case Kind::BPE:
      for (size_t i = 0; i < tokens.size(); ++i) {
        replace_all(tokens[i], suffix, i + 1 == tokens.size() ? "" : " ");
      }
      return;
  }
}

std::string run_decoder(const Decoder& d, std::vector<std::string> tokens) {
  std::string out;
  if (d.kind == Decoder::Kind::NONE) {
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i) out.push_back(' ');
      out += tokens[i];
    }
    return out;
  }
  d.decode_chain(tokens);
  for (auto& t : tokens) out += t;
  return out;
}

std::string Decoder::piece_bytes(std::string t) const {
  switch (kind) {
    case Kind::NONE: case Kind::FUSE: case Kind::STRIP: return t;
    case Kind::SEQUENCE:
      for (const auto& c : children) t = c.piece_bytes(std::move(t));
      return t;
    case Kind::BYTE_LEVEL: {
      std::string bytes;
      for (size_t i = 0; i < t.size();) {
        const int b = char_to_byte(next_code_point(t, i));
        if (b < 0) return t;  // not a byte-level piece (an added token's text): as is, as byte_level()
        bytes.push_back(static_cast<char>(b));
      }
      return bytes;
    }
    case Kind::REPLACE: replace_all(t, pattern, content); return t;
    case Kind::BYTE_FALLBACK: {
      const int b = parse_byte_token(t);
      return b >= 0 ? std::string(1, static_cast<char>(b)) : t;
    }
    case Kind::METASPACE: replace_all(t, replacement, " "); return t;
    case Kind::WORDPIECE:
      return t.compare(0, prefix.size(), prefix) == 0 ? t.substr(prefix.size()) : " " + t;
    case Kind::BPE:
      if (t.size() >= suffix.size() && t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0)
        return t.substr(0, t.size() - suffix.size()) + " ";
      return t;
  }
  return t;
}

}  // namespace oxyd::tokenizer
