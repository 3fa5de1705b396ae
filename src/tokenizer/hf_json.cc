// Tokenizer::from_hf_files: tokenizer.json (normalizer, pre_tokenizer, model, added_tokens,
// post_processor, decoder) + tokenizer_config.json (bos/eos/pad/unk names, chat template).
// Every unsupported or malformed field is reported with the file and its JSON path.
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "core/file_util.h"
#include "core/json_parse.h"
#include "tokenizer/bpe.h"
#include "tokenizer/hf_json_fast.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unigram.h"
#include "tokenizer/wordpiece.h"

namespace oxyd::tokenizer {

namespace {

using json = nlohmann::json;

constexpr int64_t kMaxIdSlack = 1 << 20;  // ids may exceed the entry count by this much

struct Ctx {
  std::string file;
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw_error(ErrorCode::INVALID_ARGUMENT, file + ": field '" + field + "': " + what);
  }
  const json& get(const json& obj, const char* key, const std::string& path) const {
    if (!obj.is_object() || !obj.contains(key)) fail(path + "." + key, "missing");
    return obj.at(key);
  }
  std::string str(const json& obj, const char* key, const std::string& path) const {
    const json& v = get(obj, key, path);
    if (!v.is_string()) fail(path + "." + key, "expected a string, found " + std::string(v.type_name()));
    return v.get<std::string>();
  }
  bool flag(const json& obj, const char* key, bool dflt, const std::string& path) const {
    if (!obj.is_object() || !obj.contains(key) || obj.at(key).is_null()) return dflt;
    const json& v = obj.at(key);
    if (!v.is_boolean()) fail(path + "." + key, "expected a boolean");
    return v.get<bool>();
  }
};

Pattern parse_pattern(const Ctx& c, const json& p, const std::string& path) {
  if (p.is_object() && p.contains("String") && p["String"].is_string())
    return Pattern::literal(p["String"].get<std::string>());
  if (p.is_object() && p.contains("Regex") && p["Regex"].is_string())
    return Pattern::regex(p["Regex"].get<std::string>(), c.file + ": field '" + path + "'");
  c.fail(path, "expected {\"String\": ...} or {\"Regex\": ...}");
}

// Standard base64 (RFC 4648, '=' padding optional); false on any other character.
bool base64_decode(std::string_view in, std::string& out) {
  uint32_t acc = 0;
  int bits = 0;
  size_t pad = 0;
  for (char ch : in) {
    int v;
    if (ch >= 'A' && ch <= 'Z') v = ch - 'A';
    else if (ch >= 'a' && ch <= 'z') v = ch - 'a' + 26;
    else if (ch >= '0' && ch <= '9') v = ch - '0' + 52;
    else if (ch == '+') v = 62;
    else if (ch == '/') v = 63;
    else if (ch == '=' && pad < 2) { ++pad; continue; }
    else return false;
    if (pad) return false;  // data after padding
    acc = (acc << 6) | uint32_t(v), bits += 6;
    if (bits >= 8) bits -= 8, out.push_back(char((acc >> bits) & 0xFF));
  }
  return true;
}

Normalizer parse_normalizer(const Ctx& c, const json& j, const std::string& path) {
  Normalizer n;
  if (j.is_null()) return n;
  std::string type = c.str(j, "type", path);
  using K = Normalizer::Kind;
  if (type == "Sequence") {
    n.kind = K::SEQUENCE;
    const json& list = c.get(j, "normalizers", path);
    if (!list.is_array()) c.fail(path + ".normalizers", "expected an array");
    for (size_t i = 0; i < list.size(); ++i)
      n.children.push_back(parse_normalizer(c, list[i], path + ".normalizers[" + std::to_string(i) + "]"));
  } else if (type == "NFC") n.kind = K::NFC;
  else if (type == "NFD") n.kind = K::NFD;
  else if (type == "NFKC") n.kind = K::NFKC;
  else if (type == "NFKD") n.kind = K::NFKD;
  else if (type == "Lowercase") n.kind = K::LOWERCASE;
  else if (type == "StripAccents") n.kind = K::STRIP_ACCENTS;
  else if (type == "Strip") {
    n.kind = K::STRIP;
    n.strip_left = c.flag(j, "strip_left", false, path);
    n.strip_right = c.flag(j, "strip_right", false, path);
  } else if (type == "Replace") {
    n.kind = K::REPLACE;
    n.pattern = parse_pattern(c, c.get(j, "pattern", path), path + ".pattern");
    n.content = c.str(j, "content", path);
  } else if (type == "Prepend") {
    n.kind = K::PREPEND;
    n.content = c.str(j, "prepend", path);
  } else if (type == "BertNormalizer") {
    n.kind = K::BERT;
    n.clean_text = c.flag(j, "clean_text", true, path);
    n.handle_chinese_chars = c.flag(j, "handle_chinese_chars", true, path);
    n.lowercase = c.flag(j, "lowercase", true, path);
    n.strip_accents = c.flag(j, "strip_accents", n.lowercase, path);
  } else if (type == "Precompiled") {  // SentencePiece's charsmap, base64 (XLM-R, T5, ALBERT ...)
    const json& cm = c.get(j, "precompiled_charsmap", path);
    if (cm.is_null() || (cm.is_string() && cm.get<std::string>().empty())) return n;  // an empty map: no-op
    if (!cm.is_string()) c.fail(path + ".precompiled_charsmap", "expected a base64 string");
    std::string blob;
    if (!base64_decode(cm.get<std::string>(), blob)) c.fail(path + ".precompiled_charsmap", "invalid base64");
    n.kind = K::PRECOMPILED;
    n.charsmap = std::make_shared<const CharsMap>(blob, c.file + ": field '" + path + ".precompiled_charsmap'");
  } else {
    c.fail(path + ".type", "unsupported normalizer '" + type + "'");
  }
  return n;
}

SplitBehavior parse_behavior(const Ctx& c, const json& j, const std::string& path) {
  std::string b = c.str(j, "behavior", path);
  if (b == "Removed") return SplitBehavior::REMOVED;
  if (b == "Isolated") return SplitBehavior::ISOLATED;
  if (b == "MergedWithPrevious") return SplitBehavior::MERGED_WITH_PREVIOUS;
  if (b == "MergedWithNext") return SplitBehavior::MERGED_WITH_NEXT;
  if (b == "Contiguous") return SplitBehavior::CONTIGUOUS;
  c.fail(path + ".behavior", "unknown split behavior '" + b + "'");
}

PreTokenizer::Prepend parse_prepend(const Ctx& c, const json& j, const std::string& path) {
  if (j.contains("prepend_scheme")) {
    std::string s = c.str(j, "prepend_scheme", path);
    if (s == "always") return PreTokenizer::Prepend::ALWAYS;
    if (s == "first") return PreTokenizer::Prepend::FIRST;
    if (s == "never") return PreTokenizer::Prepend::NEVER;
    c.fail(path + ".prepend_scheme", "expected always, first or never");
  }
  return c.flag(j, "add_prefix_space", true, path) ? PreTokenizer::Prepend::ALWAYS
                                                   : PreTokenizer::Prepend::NEVER;
}

PreTokenizer parse_pre_tokenizer(const Ctx& c, const json& j, const std::string& path) {
  PreTokenizer p;
  if (j.is_null()) return p;
  std::string type = c.str(j, "type", path);
  using K = PreTokenizer::Kind;
  if (type == "Sequence") {
    p.kind = K::SEQUENCE;
    const json& list = c.get(j, "pretokenizers", path);
    if (!list.is_array()) c.fail(path + ".pretokenizers", "expected an array");
    for (size_t i = 0; i < list.size(); ++i)
      p.children.push_back(parse_pre_tokenizer(c, list[i], path + ".pretokenizers[" + std::to_string(i) + "]"));
  } else if (type == "Split") {
    p.kind = K::SPLIT;
    p.pattern = parse_pattern(c, c.get(j, "pattern", path), path + ".pattern");
    p.behavior = parse_behavior(c, j, path);
    p.invert = c.flag(j, "invert", false, path);
  } else if (type == "ByteLevel") {
    p.kind = K::BYTE_LEVEL;
    p.add_prefix_space = c.flag(j, "add_prefix_space", true, path);
    p.use_regex = c.flag(j, "use_regex", true, path);
  } else if (type == "Metaspace") {
    p.kind = K::METASPACE;
    p.replacement = c.str(j, "replacement", path);
    p.prepend_scheme = parse_prepend(c, j, path);
    p.split = c.flag(j, "split", true, path);
  } else if (type == "Digits") {
    p.kind = K::DIGITS;
    p.individual_digits = c.flag(j, "individual_digits", false, path);
  } else if (type == "BertPreTokenizer") p.kind = K::BERT;
  else if (type == "Whitespace") p.kind = K::WHITESPACE;
  else if (type == "WhitespaceSplit") p.kind = K::WHITESPACE_SPLIT;
  else if (type == "Punctuation") {
    p.kind = K::PUNCTUATION;
    p.behavior = j.contains("behavior") ? parse_behavior(c, j, path) : SplitBehavior::ISOLATED;
  } else {
    c.fail(path + ".type", "unsupported pre-tokenizer '" + type + "'");
  }
  return p;
}

Decoder parse_decoder(const Ctx& c, const json& j, const std::string& path) {
  Decoder d;
  if (j.is_null()) return d;
  std::string type = c.str(j, "type", path);
  using K = Decoder::Kind;
  if (type == "Sequence") {
    d.kind = K::SEQUENCE;
    const json& list = c.get(j, "decoders", path);
    if (!list.is_array()) c.fail(path + ".decoders", "expected an array");
    for (size_t i = 0; i < list.size(); ++i)
      d.children.push_back(parse_decoder(c, list[i], path + ".decoders[" + std::to_string(i) + "]"));
  } else if (type == "ByteLevel") d.kind = K::BYTE_LEVEL;
  else if (type == "ByteFallback") d.kind = K::BYTE_FALLBACK;
  else if (type == "Fuse") d.kind = K::FUSE;
  else if (type == "Replace") {
    d.kind = K::REPLACE;
    const json& p = c.get(j, "pattern", path);
    if (!p.is_object() || !p.contains("String") || !p["String"].is_string())
      c.fail(path + ".pattern", "only {\"String\": ...} patterns are supported in decoders");
    d.pattern = p["String"].get<std::string>();
    d.content = c.str(j, "content", path);
  } else if (type == "Strip") {
    d.kind = K::STRIP;
    d.content = c.str(j, "content", path);
    d.strip_start = c.get(j, "start", path).get<size_t>();
    d.strip_stop = c.get(j, "stop", path).get<size_t>();
  } else if (type == "Metaspace") {
    d.kind = K::METASPACE;
    d.replacement = c.str(j, "replacement", path);
    d.prepend_first = parse_prepend(c, j, path) != PreTokenizer::Prepend::NEVER;
  } else if (type == "WordPiece") {
    d.kind = K::WORDPIECE;
    if (j.contains("prefix")) d.prefix = c.str(j, "prefix", path);
    d.cleanup = c.flag(j, "cleanup", true, path);
  } else if (type == "BPEDecoder") {
    d.kind = K::BPE;
    if (j.contains("suffix")) d.suffix = c.str(j, "suffix", path);
  } else {
    c.fail(path + ".type", "unsupported decoder '" + type + "'");
  }
  return d;
}

std::vector<std::pair<std::string, int32_t>> parse_vocab(const Ctx& c, const json& v,
                                                         const std::string& path) {
  if (!v.is_object()) c.fail(path, "expected an object {token: id}");
  std::vector<std::pair<std::string, int32_t>> out;
  out.reserve(v.size());
  // Ids are dense in real files; a bound keeps a malformed file from allocating gigabytes.
  const int64_t max_id = static_cast<int64_t>(v.size()) + kMaxIdSlack;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 ||
        it.value().get<int64_t>() > max_id)
      c.fail(path + "[\"" + it.key() + "\"]", "expected an integer id in [0, " + std::to_string(max_id) + "]");
    out.emplace_back(it.key(), it.value().get<int32_t>());
  }
  return out;
}

std::unique_ptr<Model> parse_unigram(const Ctx& c, const json& m) {
  const std::string path = "model";
  const json& v = c.get(m, "vocab", path);
  if (!v.is_array()) c.fail(path + ".vocab", "expected an array of [piece, score]");
  std::vector<std::pair<std::string, double>> pieces;
  pieces.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const json& e = v[i];
    if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number())
      c.fail(path + ".vocab[" + std::to_string(i) + "]", "expected [piece, score]");
    pieces.emplace_back(e[0].get<std::string>(), e[1].get<double>());
  }
  std::optional<int32_t> unk;
  if (m.contains("unk_id") && !m["unk_id"].is_null()) {
    if (!m["unk_id"].is_number_integer()) c.fail(path + ".unk_id", "expected an integer or null");
    unk = m["unk_id"].get<int32_t>();
  }
  return std::make_unique<Unigram>(std::move(pieces), unk, c.flag(m, "byte_fallback", false, path), c.file);
}

std::unique_ptr<Model> parse_model(const Ctx& c, const json& m, CapturedModel& cap) {
  const std::string path = "model";
  std::string type = m.contains("type") ? c.str(m, "type", path) : "BPE";
  if (type == "Unigram") return parse_unigram(c, m);
  if (!cap.error.empty()) c.fail(cap.error.substr(0, cap.error.find(':')), cap.error.substr(cap.error.find(':') + 2));
  std::vector<std::pair<std::string, int32_t>> vocab;
  if (cap.has_vocab) {
    const int64_t max_id = static_cast<int64_t>(cap.vocab.size()) + kMaxIdSlack;
    vocab.reserve(cap.vocab.size());
    for (auto& [tok, id] : cap.vocab) {
      if (id < 0 || id > max_id)
        c.fail(path + ".vocab[\"" + tok + "\"]", "expected an integer id in [0, " + std::to_string(max_id) + "]");
      vocab.emplace_back(std::move(tok), static_cast<int32_t>(id));
    }
    cap.vocab.clear();
  } else {
    vocab = parse_vocab(c, c.get(m, "vocab", path), path + ".vocab");
  }
  auto opt_str = [&](const char* key) -> std::string {
    return m.contains(key) && m[key].is_string() ? m[key].get<std::string>() : std::string();
  };
  if (type == "BPE") {
    BpeOptions o;
    if (m.contains("unk_token") && m["unk_token"].is_string()) o.unk_token = m["unk_token"].get<std::string>();
    o.fuse_unk = c.flag(m, "fuse_unk", false, path);
    o.byte_fallback = c.flag(m, "byte_fallback", false, path);
    o.ignore_merges = c.flag(m, "ignore_merges", false, path);
    o.continuing_subword_prefix = opt_str("continuing_subword_prefix");
    o.end_of_word_suffix = opt_str("end_of_word_suffix");
    if (m.contains("dropout") && !m["dropout"].is_null())
      c.fail(path + ".dropout", "BPE dropout is not supported for inference");
    if (cap.has_merges) return std::make_unique<Bpe>(std::move(vocab), cap.merges, std::move(o), c.file);
    const json& mj = c.get(m, "merges", path);
    if (!mj.is_array()) c.fail(path + ".merges", "expected an array");
    std::vector<std::pair<std::string, std::string>> merges;
    merges.reserve(mj.size());
    for (size_t i = 0; i < mj.size(); ++i) {
      const json& e = mj[i];
      if (e.is_string()) {
        const std::string& s = e.get_ref<const std::string&>();
        size_t sp = s.find(' ');
        if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
          c.fail(path + ".merges[" + std::to_string(i) + "]", "expected \"left right\", found '" + s + "'");
        merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
      } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
        merges.emplace_back(e[0].get<std::string>(), e[1].get<std::string>());
      } else {
        c.fail(path + ".merges[" + std::to_string(i) + "]", "expected a string or a pair of strings");
      }
    }
    return std::make_unique<Bpe>(std::move(vocab), merges, std::move(o), c.file);
  }
  if (type == "WordPiece") {
    size_t max_chars = m.contains("max_input_chars_per_word")
                           ? m["max_input_chars_per_word"].get<size_t>() : 100;
    std::string prefix = m.contains("continuing_subword_prefix") ? opt_str("continuing_subword_prefix") : "##";
    return std::make_unique<WordPiece>(std::move(vocab), c.str(m, "unk_token", path), prefix,
                                       max_chars, c.file);
  }
  c.fail(path + ".type", "unsupported model type '" + type + "' (supported: BPE, WordPiece, Unigram)");
}

// j[key] without copying it (json::value copies the whole subtree); null if absent.
const json& member(const json& j, const char* key) {
  static const json kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

// A tokenizer_config.json token entry: "text", {"content": "text"} or null.
std::string config_token(const json& cfg, const char* key) {
  if (!cfg.is_object() || !cfg.contains(key)) return "";
  const json& v = cfg[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return "";
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_hf_files(const std::string& tokenizer_json_path,
                                                    const std::string& tokenizer_config_path) {
  std::string tj = read_text_file(tokenizer_json_path);
  std::string cfg = tokenizer_config_path.empty() ? std::string() : read_text_file(tokenizer_config_path);
  return from_hf_json(tj, cfg, tokenizer_json_path);
}

std::unique_ptr<Tokenizer> Tokenizer::from_hf_json(std::string_view tokenizer_json,
                                                   std::string_view tokenizer_config,
                                                   const std::string& source) {
  Ctx c{source};
  CapturedModel cap;
  // Depth-bounded (core/json_parse.h), so the recursive parse_* below (nested Sequences) and
  // their growing JSON paths stay small.
  json j = parse_tokenizer_json(tokenizer_json, cap, source);
  if (!j.is_object()) c.fail("(root)", "expected a JSON object");
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  try {
    t->normalizer_ = parse_normalizer(c, member(j, "normalizer"), "normalizer");
    t->pre_tokenizer_ = parse_pre_tokenizer(c, member(j, "pre_tokenizer"), "pre_tokenizer");
    t->decoder_ = parse_decoder(c, member(j, "decoder"), "decoder");
    t->model_ = parse_model(c, c.get(j, "model", ""), cap);
    if (j.contains("added_tokens")) {
      const json& list = j["added_tokens"];
      if (!list.is_array()) c.fail("added_tokens", "expected an array");
      for (size_t i = 0; i < list.size(); ++i) {
        const json& e = list[i];
        std::string path = "added_tokens[" + std::to_string(i) + "]";
        AddedToken a;
        a.content = c.str(e, "content", path);
        const json& id = c.get(e, "id", path);
        if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
            id.get<int64_t>() > static_cast<int64_t>(t->model_->vocab().size() + list.size()) + kMaxIdSlack)
          c.fail(path + ".id", "expected a non-negative integer id near the vocabulary size");
        a.id = id.get<int32_t>();
        a.special = c.flag(e, "special", false, path);
        a.normalized = c.flag(e, "normalized", !a.special, path);
        a.lstrip = c.flag(e, "lstrip", false, path);
        a.rstrip = c.flag(e, "rstrip", false, path);
        a.single_word = c.flag(e, "single_word", false, path);
        t->added_.push_back(std::move(a));
      }
    }
    // Post-processor: the single-sequence template.
    std::function<void(const json&, const std::string&)> post = [&](const json& p, const std::string& path) {
      if (p.is_null()) return;
      std::string type = c.str(p, "type", path);
      if (type == "Sequence") {
        const json& list = c.get(p, "processors", path);
        for (size_t i = 0; i < list.size(); ++i) post(list[i], path + ".processors[" + std::to_string(i) + "]");
      } else if (type == "TemplateProcessing") {
        const json& single = c.get(p, "single", path);
        const json& specials = c.get(p, "special_tokens", path);
        t->template_.clear();
        for (size_t i = 0; i < single.size(); ++i) {
          const json& item = single[i];
          std::string ipath = path + ".single[" + std::to_string(i) + "]";
          TemplateItem ti;
          if (item.contains("Sequence")) {
            ti.is_sequence = true;
          } else if (item.contains("SpecialToken")) {
            std::string name = c.str(item["SpecialToken"], "id", ipath + ".SpecialToken");
            if (!specials.contains(name)) c.fail(path + ".special_tokens", "no entry for '" + name + "'");
            for (const json& id : c.get(specials[name], "ids", path + ".special_tokens." + name)) {
              if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > (int64_t{1} << 30))
                c.fail(path + ".special_tokens." + name + ".ids", "expected non-negative integer ids");
              ti.ids.push_back(id.get<int32_t>());
            }
          } else {
            c.fail(ipath, "expected Sequence or SpecialToken");
          }
          t->template_.push_back(std::move(ti));
        }
        t->pair_template_.clear();
        const json* pair = p.contains("pair") && p["pair"].is_array() ? &p["pair"] : nullptr;
        for (size_t i = 0; pair && i < pair->size(); ++i) {
          const json& item = (*pair)[i];
          const std::string ipath = path + ".pair[" + std::to_string(i) + "]";
          PairItem pi;
          const bool is_seq = item.contains("Sequence");
          const json& body = is_seq ? item["Sequence"] : item.contains("SpecialToken") ? item["SpecialToken"] : item;
          if (!is_seq && !item.contains("SpecialToken")) c.fail(ipath, "expected Sequence or SpecialToken");
          const std::string name = c.str(body, "id", ipath);
          if (body.contains("type_id") && body["type_id"].is_number_integer()) pi.type_id = body["type_id"].get<int32_t>();
          if (is_seq) {
            if (name != "A" && name != "B") c.fail(ipath + ".Sequence.id", "expected A or B");
            pi.seq = name == "A" ? 0 : 1;
          } else {
            if (!specials.contains(name)) c.fail(path + ".special_tokens", "no entry for '" + name + "'");
            for (const json& id : c.get(specials[name], "ids", path + ".special_tokens." + name))
              pi.ids.push_back(id.get<int32_t>());
          }
          t->pair_template_.push_back(std::move(pi));
        }
      } else if (type == "BertProcessing" || type == "RobertaProcessing") {
        const json& cls = c.get(p, "cls", path);
        const json& sep = c.get(p, "sep", path);
        t->template_.clear();
        t->template_.push_back({false, {cls.at(1).get<int32_t>()}});
        t->template_.push_back({true, {}});
        t->template_.push_back({false, {sep.at(1).get<int32_t>()}});
        // BERT: [CLS] A [SEP] B [SEP], types 0 0 0 1 1; RoBERTa: <s> A </s> </s> B </s>, all type 0.
        const int32_t cls_id = cls.at(1).get<int32_t>(), sep_id = sep.at(1).get<int32_t>();
        const int32_t tb = type == "BertProcessing" ? 1 : 0;
        t->pair_template_ = {{-1, {cls_id}, 0}, {0, {}, 0}, {-1, {sep_id}, 0}};
        if (type == "RobertaProcessing") t->pair_template_.push_back({-1, {sep_id}, 0});
        t->pair_template_.push_back({1, {}, tb});
        t->pair_template_.push_back({-1, {sep_id}, tb});
      } else if (type != "ByteLevel") {
        c.fail(path + ".type", "unsupported post-processor '" + type + "'");
      }
    };
    post(member(j, "post_processor"), "post_processor");
  } catch (const json::exception& e) {
    throw_error(ErrorCode::INVALID_ARGUMENT, source + ": malformed field: " + e.what());
  }
  bool seen_seq = false;
  for (const auto& item : t->template_) {
    if (item.is_sequence) seen_seq = true;
    else if (seen_seq) t->add_eos_ = true;
    else t->add_bos_ = true;
  }

  json cfg;
  const std::string cfg_source = source.substr(0, source.rfind('/') + 1) + "tokenizer_config.json";
  if (!tokenizer_config.empty()) cfg = parse_json_bounded(tokenizer_config, cfg_source);
  t->finish(source);
  auto id_of = [&](const char* key) {
    std::string name = config_token(cfg, key);
    return name.empty() ? -1 : t->token_to_id(name);
  };
  t->bos_id_ = id_of("bos_token");
  t->eos_id_ = id_of("eos_token");
  t->pad_id_ = id_of("pad_token");
  t->unk_id_ = id_of("unk_token");
  if (t->bos_id_ < 0 && t->add_bos_) t->bos_id_ = t->template_.front().ids.at(0);
  if (cfg.is_object() && cfg.contains("chat_template")) {
    const json& ct = cfg["chat_template"];
    if (ct.is_string()) {
      t->chat_template_ = ct.get<std::string>();
    } else if (ct.is_array()) {
      for (const json& e : ct)
        if (e.is_object() && e.value("name", "") == "default") t->chat_template_ = e.value("template", "");
      if (t->chat_template_.empty() && !ct.empty() && ct[0].is_object()) t->chat_template_ = ct[0].value("template", "");
    }
  }
  t->finish(source);  // again: eos/eot are known now
  return t;
}

}  // namespace oxyd::tokenizer
