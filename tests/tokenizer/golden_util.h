// Shared helpers for the tokenizer golden tests: the committed corpus and the per-vocabulary
// golden records written by tools/gen_tokenizer_goldens.py (Hugging Face tokenizers as oracle).
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace oxyd::tokenizer::testing {

struct GoldenRecord {
  std::vector<int32_t> plain_ids;  // add_special=false, parse_special=false
  std::string plain_text;          // decode(plain_ids, skip_special=false)
  std::optional<std::vector<int32_t>> full_ids;  // add_special=true, parse_special=true
  std::string full_text;                         // decode(full_ids, skip_special=true)
};

inline std::string data_dir() { return std::string(OXYD_SOURCE_DIR) + "/tests/data/tokenizer"; }
inline std::string real_tokenizers() { return std::string(OXYD_TEST_DATA_DIR) + "/tokenizers"; }

inline std::string hex_decode(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

/// Corpus strings as raw bytes (invalid UTF-8 entries kept invalid: the tokenizer must cope).
inline const std::vector<std::string>& corpus() {
  static const std::vector<std::string> c = [] {
    std::vector<std::string> out;
    std::ifstream f(data_dir() + "/corpus.jsonl");
    std::string line;
    while (std::getline(f, line)) {
      auto j = nlohmann::json::parse(line);
      out.push_back(j.contains("t") ? j["t"].get<std::string>() : hex_decode(j["hex"].get<std::string>()));
    }
    return out;
  }();
  return c;
}

inline std::vector<GoldenRecord> load_golden(const std::string& vocab) {
  std::vector<GoldenRecord> out;
  std::ifstream f(data_dir() + "/" + vocab + ".out.jsonl");
  std::string line;
  const auto& texts = corpus();
  while (std::getline(f, line)) {
    auto j = nlohmann::json::parse(line);
    GoldenRecord r;
    r.plain_ids = j["p"].get<std::vector<int32_t>>();
    r.plain_text = j.contains("pt") ? j["pt"].get<std::string>() : utf8_lossy(texts.at(out.size()));
    if (j.contains("f")) {
      r.full_ids = j["f"].get<std::vector<int32_t>>();
      r.full_text = j.contains("ft") ? j["ft"].get<std::string>() : r.plain_text;
    }
    out.push_back(std::move(r));
  }
  return out;
}

inline std::string show_ids(const std::vector<int32_t>& ids, size_t max = 40) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size() && i < max; ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  if (ids.size() > max) s += ",...(" + std::to_string(ids.size()) + ")";
  return s + "]";
}

inline std::string jdump(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// Compares one tokenizer against one vocabulary's goldens; returns the number of mismatching
/// strings (details of the first few go to the gtest log).
/// What to compare for one string: everything, or a documented subset (see gguf_golden_test.cc).
enum class Compare { ALL, FULL_IDS_ONLY, PLAIN_ONLY, NONE };

inline size_t check_against_golden(const Tokenizer& tok, const std::string& vocab,
                                   const std::function<Compare(size_t)>& what = nullptr) {
  const auto& texts = corpus();
  auto golden = load_golden(vocab);
  EXPECT_EQ(golden.size(), texts.size()) << vocab;
  size_t bad = 0;
  for (size_t i = 0; i < golden.size() && i < texts.size(); ++i) {
    const auto& g = golden[i];
    const Compare c = what ? what(i) : Compare::ALL;
    if (c == Compare::NONE) continue;
    auto p = tok.encode(texts[i], false, false);
    std::string pt = tok.decode(g.plain_ids, false);
    bool ok = c == Compare::FULL_IDS_ONLY || (p == g.plain_ids && pt == g.plain_text);
    std::vector<int32_t> f;
    std::string ft;
    if (g.full_ids && c != Compare::PLAIN_ONLY) {
      f = tok.encode(texts[i], true, true);
      ft = tok.decode(*g.full_ids, true);
      ok = ok && f == *g.full_ids && (c == Compare::FULL_IDS_ONLY || ft == g.full_text);
    }
    if (!ok && ++bad <= 5) {
      std::string t = texts[i].size() > 200 ? texts[i].substr(0, 200) + "..." : texts[i];
      ADD_FAILURE() << vocab << " line " << i << " text=" << jdump(t)
                    << "\n plain  ours " << show_ids(p) << "\n plain  gold " << show_ids(g.plain_ids)
                    << "\n ptext  ours " << jdump(pt).substr(0, 300)
                    << "\n ptext  gold " << jdump(g.plain_text).substr(0, 300)
                    << (g.full_ids ? "\n full   ours " + show_ids(f) + "\n full   gold " + show_ids(*g.full_ids) +
                                         "\n ftext  ours " + jdump(ft).substr(0, 300) +
                                         "\n ftext  gold " + jdump(g.full_text).substr(0, 300)
                                   : std::string());
    }
  }
  return bad;
}

inline std::string hf_dir(const std::string& vocab) {
  if (vocab == "xlmr") return std::string(OXYD_SOURCE_DIR) + "/tests/data/archs/xlmr";  // the tiny XLM-R's
  return vocab == "minilm" || vocab == "unigram" ? data_dir() + "/" + vocab : real_tokenizers() + "/" + vocab;
}

/// Tokenizers are expensive to load (up to 33 MB of JSON): one per vocabulary per process.
inline const Tokenizer& hf_tokenizer(const std::string& vocab) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  auto& slot = cache[vocab];
  if (!slot) slot = Tokenizer::from_hf_files(hf_dir(vocab) + "/tokenizer.json", hf_dir(vocab) + "/tokenizer_config.json");
  return *slot;
}

/// The corpus texts that are valid JSON strings ("t" entries), in file order: the texts the
/// llama.cpp goldens of tools/gen_{ugm,rwkv,plamo2}_tokenizer_goldens.py and gguf_pre_test cover.
inline const std::vector<std::string>& corpus_texts() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> out;
    std::ifstream f(data_dir() + "/corpus.jsonl");
    std::string line;
    while (std::getline(f, line)) {
      auto j = nlohmann::json::parse(line);
      if (j.contains("t")) out.push_back(j["t"].get<std::string>());
    }
    return out;
  }();
  return v;
}

/// `tok` against a llama.cpp golden of every corpus_texts() text (data_dir()/golden): "p" the ids
/// as user text; "f" the ids with specials, stored by index where they differ from p plus
/// `f_suffix` (the tokens llama.cpp appends); with `decode`, "d" the decoding of p without control
/// tokens, stored where it differs from the text. Every text must match; prints the counts.
inline void expect_llamacpp_corpus(const Tokenizer& tok, const std::string& golden, bool decode,
                                   const std::vector<int32_t>& f_suffix = {}) {
  std::ifstream in(data_dir() + "/" + golden);
  const nlohmann::json g = nlohmann::json::parse(in);
  const auto& texts = corpus_texts();
  ASSERT_EQ(g["num_texts"].get<size_t>(), texts.size());
  size_t p_ok = 0, f_ok = 0, d_ok = 0, reported = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string k = std::to_string(i);
    const auto want_p = g["p"][i].get<std::vector<int32_t>>();
    std::vector<int32_t> want_f = want_p;
    want_f.insert(want_f.end(), f_suffix.begin(), f_suffix.end());
    if (g["f"].contains(k)) want_f = g["f"][k].get<std::vector<int32_t>>();
    const std::string want_d = decode && g["d"].contains(k) ? g["d"][k].get<std::string>() : texts[i];
    const auto got_p = tok.encode(texts[i], false, false);
    const auto got_f = tok.encode(texts[i], true, true);
    const std::string got_d = decode ? tok.decode(want_p, true) : texts[i];  // llama.cpp renders control tokens as nothing
    p_ok += got_p == want_p;
    f_ok += got_f == want_f;
    d_ok += got_d == want_d;
    if ((got_p != want_p || got_f != want_f || got_d != want_d) && ++reported <= 5)
      ADD_FAILURE() << golden << " text " << i << " " << jdump(texts[i].substr(0, 200)) << "\n ours p "
                    << show_ids(got_p) << "\n llama p " << show_ids(want_p) << "\n ours f " << show_ids(got_f)
                    << "\n llama f " << show_ids(want_f) << "\n ours d " << jdump(got_d).substr(0, 200)
                    << "\n llama d " << jdump(want_d).substr(0, 200);
  }
  std::printf("%s: %zu/%zu texts match llama.cpp as user text, %zu with specials%s\n", golden.c_str(), p_ok,
              texts.size(), f_ok, decode ? (", " + std::to_string(d_ok) + " decode").c_str() : "");
  EXPECT_EQ(p_ok, texts.size());
  EXPECT_EQ(f_ok, texts.size());
  EXPECT_EQ(d_ok, texts.size());
}

inline const std::vector<std::string>& all_vocabs() {
  static const std::vector<std::string> v = {"qwen3", "llama3", "llama3_1", "gemma3", "gptoss",
                                             "llama2", "deepseek_v3", "minilm", "unigram", "xlmr"};
  return v;
}

}  // namespace oxyd::tokenizer::testing
