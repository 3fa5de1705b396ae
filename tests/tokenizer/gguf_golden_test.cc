// GGUF path against the same Hugging Face goldens: (1) gguf-py-written vocabulary files committed
// for Llama 2 and MiniLM, (2) every vocabulary converted at test time with our GgufWriter the way
// tools/gen_tokenizer_gguf.py does (checked equal to the gguf-py files where both exist), (3) the
// real Gemma 3 270M GGUF when present (tests/real_models.h).
// SentencePiece vocabularies (model "llama") are not compared with HF here: a GGUF is tokenized as
// llama.cpp tokenizes it, by piece score (these files carry -id, not SentencePiece's scores), so HF's
// merge ranks are no reference; gguf_llamacpp_test.cc checks them against llama.cpp itself.
// Unigram vocabularies (model "t5") neither: a GGUF is tokenized as llama.cpp's UGM tokenizer does
// (no split at spaces, its own whitespace rules: on 2,179 corpus texts HF's T5 converter and
// llama.cpp agree on 2,061), checked against llama.cpp in gguf_ugm_test.cc.
#include <cstdlib>
#include <filesystem>

#include "golden_util.h"
#include "loader/gguf.h"
#include "loader/gguf_writer.h"
#include "real_models.h"

namespace oxyd::tokenizer::testing {
namespace {

using loader::GgufFile;
using loader::GgufValue;
using json = nlohmann::json;

const char* kSpace = "\xE2\x96\x81";

json read_json(const std::string& path) {
  std::ifstream f(path);
  return json::parse(f);
}

bool looks_special(const std::string& t) {
  auto ends = [&](const std::string& suf) { return t.size() >= suf.size() && t.compare(t.size() - suf.size(), suf.size(), suf) == 0; };
  auto starts = [&](const std::string& pre) { return t.rfind(pre, 0) == 0; };
  return t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]" || (starts("<|") && ends("|>")) ||
         (starts("<\xEF\xBD\x9C") && ends("\xEF\xBD\x9C>")) || (starts("<unused") && ends(">"));
}

std::string replace_all(std::string s, const std::string& a, const std::string& b) {
  for (size_t p = s.find(a); p != std::string::npos; p = s.find(a, p + b.size())) s.replace(p, a.size(), b);
  return s;
}

// What tokenizer.json says about its added tokens: id -> (content, special).
using HfAdded = std::map<int32_t, std::pair<std::string, bool>>;

HfAdded hf_added(const std::string& name) {
  HfAdded out;
  json tj = read_json(hf_dir(name) + "/tokenizer.json");
  for (const json& a : tj["added_tokens"])
    out[a["id"].get<int32_t>()] = {a["content"].get<std::string>(), a.value("special", false)};
  return out;
}

// C++ mirror of tools/gen_tokenizer_gguf.py (tokenizer keys only).
loader::GgufWriter convert(const std::string& name) {
  const std::string dir = hf_dir(name);
  json tj = read_json(dir + "/tokenizer.json"), cfg = read_json(dir + "/tokenizer_config.json");
  const json& model = tj["model"];
  std::map<int32_t, std::string> rev;
  std::map<int32_t, float> unigram_scores;
  if (model["type"] == "Unigram") {
    for (size_t i = 0; i < model["vocab"].size(); ++i) {
      rev[static_cast<int32_t>(i)] = model["vocab"][i][0].get<std::string>();
      unigram_scores[static_cast<int32_t>(i)] = model["vocab"][i][1].get<float>();
    }
  } else {
    for (auto it = model["vocab"].begin(); it != model["vocab"].end(); ++it) rev[it.value().get<int32_t>()] = it.key();
  }
  std::map<int32_t, json> added;
  for (const json& a : tj["added_tokens"]) {
    added[a["id"].get<int32_t>()] = a;
    rev[a["id"].get<int32_t>()] = a["content"].get<std::string>();
  }
  const int32_t n = rev.rbegin()->first + 1;
  const std::string kind = model["type"] == "WordPiece" ? "bert" : model["type"] == "Unigram" ? "t5"
                           : model.value("byte_fallback", false) ? "llama" : "gpt2";
  std::string unk = model.contains("unk_token") && model["unk_token"].is_string() ? model["unk_token"].get<std::string>() : "";
  if (kind == "t5" && model["unk_id"].is_number_integer()) unk = rev[model["unk_id"].get<int32_t>()];
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  std::vector<float> scores;
  for (int32_t i = 0; i < n; ++i) {
    if (!rev.count(i)) {
      tokens.push_back("[PAD" + std::to_string(i) + "]");
      types.push_back(5);
      scores.push_back(-1000.0f);
      continue;
    }
    std::string t = rev[i];
    if (added.count(i)) {
      if (added[i].value("special", false) || looks_special(t)) {
        types.push_back((kind == "llama" || kind == "t5") && t == unk ? 2 : 3);
      } else {
        t = replace_all(t, kSpace, " ");
        types.push_back(4);
      }
      scores.push_back(-1000.0f);
    } else if (kind == "t5") {
      types.push_back(t.size() == 6 && t.rfind("<0x", 0) == 0 && t.back() == '>' ? 6 : 1);
      scores.push_back(unigram_scores[i]);
    } else if (kind == "llama" && t.size() == 6 && t.rfind("<0x", 0) == 0 && t.back() == '>') {
      types.push_back(6);
      scores.push_back(0.0f);
    } else {
      types.push_back(1);
      scores.push_back(-static_cast<float>(i));
    }
    if (kind == "bert" && !(t.size() >= 2 && t.front() == '[' && t.back() == ']')) t = t.rfind("##", 0) == 0 ? t.substr(2) : kSpace + t;
    tokens.push_back(t);
  }
  static const std::map<std::string, std::string> pre_names = {
      {"qwen3", "qwen2"}, {"llama3", "llama-bpe"}, {"llama3_1", "llama-bpe"}, {"gptoss", "gpt-4o"}, {"deepseek_v3", "deepseek-v3"}};
  loader::GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_string("tokenizer.ggml.model", kind);
  w.add_string("tokenizer.ggml.pre", pre_names.count(name) ? pre_names.at(name) : "default");
  w.add("tokenizer.ggml.tokens", GgufValue::string_array(tokens));
  w.add("tokenizer.ggml.token_type", GgufValue::array(types));
  if (kind == "t5") {
    w.add("tokenizer.ggml.scores", GgufValue::array(scores));
    const json& pt = tj["pre_tokenizer"];
    w.add_scalar("tokenizer.ggml.add_space_prefix", pt.value("prepend_scheme", "always") != "never");
  }
  if (kind == "llama") {
    w.add("tokenizer.ggml.scores", GgufValue::array(scores));
    bool prepend = false;
    const json& nz = tj["normalizer"];
    if (nz.value("type", "") == "Prepend") prepend = true;
    for (const json& c : nz.value("normalizers", json::array())) prepend |= c.value("type", "") == "Prepend";
    w.add_scalar("tokenizer.ggml.add_space_prefix", prepend);
  }
  if (kind == "llama" || kind == "gpt2") {
    std::vector<std::string> merges;
    for (const json& m : model["merges"]) merges.push_back(m.is_string() ? m.get<std::string>() : m[0].get<std::string>() + " " + m[1].get<std::string>());
    w.add("tokenizer.ggml.merges", GgufValue::string_array(merges));
  }
  std::map<std::string, int32_t> ids;
  for (auto& [i, t] : rev) ids.emplace(t, i);
  auto cfg_tok = [&](const char* key) -> std::string {
    if (!cfg.contains(key)) return "";
    const json& v = cfg[key];
    if (v.is_string()) return v.get<std::string>();
    if (v.is_object() && v.contains("content")) return v["content"].get<std::string>();
    return "";
  };
  const std::pair<const char*, const char*> keys[] = {
      {"bos_token", "tokenizer.ggml.bos_token_id"}, {"eos_token", "tokenizer.ggml.eos_token_id"},
      {"unk_token", "tokenizer.ggml.unknown_token_id"}, {"pad_token", "tokenizer.ggml.padding_token_id"},
      {"cls_token", "tokenizer.ggml.bos_token_id"}, {"sep_token", "tokenizer.ggml.seperator_token_id"},
      {"mask_token", "tokenizer.ggml.mask_token_id"}};
  for (auto [ck, gk] : keys) {
    std::string t = cfg_tok(ck);
    if (!t.empty() && ids.count(t)) w.metadata().set(gk, GgufValue::scalar<uint32_t>(static_cast<uint32_t>(ids[t])));
  }
  bool add_bos = false, add_eos = false;
  std::function<void(const json&)> flags = [&](const json& p) {
    if (p.is_null()) return;
    if (p["type"] == "Sequence") for (const json& c : p["processors"]) flags(c);
    if (p["type"] == "TemplateProcessing") {
      bool seen = false;
      for (const json& item : p["single"]) {
        if (item.contains("Sequence")) seen = true;
        else if (seen) add_eos = true;
        else add_bos = true;
      }
    }
  };
  flags(tj["post_processor"]);
  w.add_scalar("tokenizer.ggml.add_bos_token", add_bos);
  if (kind == "bert") w.add_scalar("tokenizer.ggml.add_sep_token", add_eos);
  w.add_scalar("tokenizer.ggml.add_eos_token", kind == "bert" ? false : add_eos);
  if (cfg.contains("chat_template") && cfg["chat_template"].is_string()) w.add_string("tokenizer.chat_template", cfg["chat_template"].get<std::string>());
  float zero = 0.0f;
  w.add_tensor("dummy", DType::F32, {1}, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(&zero), 4));
  return w;
}

// Documented differences between a GGUF and its tokenizer.json, per corpus string:
//  * a token the GGUF marks CONTROL but tokenizer.json calls non-special (convert_hf_to_gguf.py's
//    does_token_look_special: "<|fim_prefix|>", "<unused0>", "<｜User｜>"...): user text handling
//    differs on purpose, so only the parse_special=true ids are compared;
//  * an added token the GGUF does not contain at all (Gemma 3's "<image_soft_token>", id 262144,
//    past the real file's 262,144 tokens), or a GGUF special token HF has no added token for: only
//    the parse_special=false output is compared.
//  * a qwen2 pre-tokenizer GGUF is not NFC-normalized (llama.cpp does not normalize), while Qwen's
//    tokenizer.json is: strings that NFC changes are not compared.
std::function<Compare(size_t)> documented_differences(const HfAdded& hf, const Tokenizer& gg,
                                                      bool skip_nfc_sensitive, size_t* num_relaxed) {
  std::vector<std::string> special_differs, missing;
  for (const auto& [id, entry] : hf) {
    const auto& [content, special] = entry;
    if (static_cast<size_t>(id) >= gg.vocab_size()) missing.push_back(content);
    else if (special != gg.is_special(id)) special_differs.push_back(content);
  }
  // Special in the GGUF but no added token in tokenizer.json (llama.cpp's forced CONTROL texts such
  // as "</s>" in a vocabulary that has it as an ordinary piece): HF never matches it, so only the
  // user-text output is comparable.
  for (int32_t id = 0; id < static_cast<int32_t>(gg.vocab_size()); ++id)
    if (gg.is_special(id) && !hf.count(id)) missing.push_back(gg.id_to_token(id));
  auto kinds = std::make_shared<std::vector<Compare>>();
  for (const auto& text : corpus()) {
    std::string s = utf8_lossy(text);
    Compare c = Compare::ALL;
    for (const auto& t : special_differs)
      if (s.find(t) != std::string::npos) c = Compare::FULL_IDS_ONLY;
    for (const auto& t : missing)
      if (s.find(t) != std::string::npos) c = Compare::PLAIN_ONLY;
    if (skip_nfc_sensitive) {
      Normalizer nfc;
      nfc.kind = Normalizer::Kind::NFC;
      std::string n = s;
      nfc.apply(n);
      if (n != s) c = Compare::NONE;
    }
    kinds->push_back(c);
    *num_relaxed += c != Compare::ALL;
  }
  return [kinds](size_t i) { return (*kinds)[i]; };
}

void check_gguf(const Tokenizer& tok, const std::string& vocab, bool skip_nfc_sensitive = false) {
  size_t relaxed = 0;
  auto what = documented_differences(hf_added(vocab), tok, skip_nfc_sensitive, &relaxed);
  EXPECT_EQ(check_against_golden(tok, vocab, what), 0u) << vocab;
  std::printf("%s: %zu of %zu strings compared partially or not at all (documented GGUF differences)\n",
              vocab.c_str(), relaxed, corpus().size());
}

class GgufGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufGolden, ConvertedAtTestTimeMatchesHuggingFace) {
  auto bytes = convert(GetParam()).to_bytes();
  GgufFile f = GgufFile::from_buffer(bytes, GetParam() + ".gguf (converted in test)");
  if (f.get_string("tokenizer.ggml.model") == "llama")
    GTEST_SKIP() << "SentencePiece GGUF: llama.cpp is the reference (gguf_llamacpp_test.cc), see the header";
  if (f.get_string("tokenizer.ggml.model") == "t5")
    GTEST_SKIP() << "Unigram GGUF: llama.cpp's UGM is the reference (gguf_ugm_test.cc), see the header";
  auto tok = Tokenizer::from_gguf(f);
  check_gguf(*tok, GetParam(), f.get_string("tokenizer.ggml.pre", "") == "qwen2");
}

INSTANTIATE_TEST_SUITE_P(Vocabs, GgufGolden, ::testing::ValuesIn(all_vocabs()),
                         [](const auto& info) { return info.param; });

class GgufPyFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufPyFixture, GgufPyFileMatchesHuggingFaceAndOurConverter) {
  GgufFile f = GgufFile::open(data_dir() + "/gguf/" + GetParam() + ".gguf");
  auto tok = Tokenizer::from_gguf(f);
  // llama2.gguf is SentencePiece: checked against llama.cpp in gguf_llamacpp_test.cc instead.
  if (f.get_string("tokenizer.ggml.model") != "llama") check_gguf(*tok, GetParam());
  // The test-time converter writes the same tokenizer keys as gguf-py did.
  auto bytes = convert(GetParam()).to_bytes();
  GgufFile ours = GgufFile::from_buffer(bytes, "converted");
  size_t n = 0;
  for (const auto& [key, value] : f.entries()) {
    if (key.rfind("tokenizer.", 0) != 0) continue;
    const GgufValue* v = ours.find(key);
    ASSERT_NE(v, nullptr) << key;
    EXPECT_TRUE(*v == value) << key << ": gguf-py " << value.to_string() << " vs ours " << v->to_string();
    ++n;
  }
  EXPECT_GE(n, 6u);
}

INSTANTIATE_TEST_SUITE_P(Vocabs, GgufPyFixture, ::testing::Values("llama2", "minilm"),
                         [](const auto& info) { return info.param; });

TEST(RealGguf, Gemma3_270mVocabularyMatchesHuggingFace) {
  const std::string path = real_models::gemma3_270m_gguf();
  if (!real_models::have(path)) GTEST_SKIP() << real_models::missing(path);
  GgufFile f = GgufFile::open(path);
  auto tok = Tokenizer::from_gguf(f);
  // Same vocabulary as tests/data/tokenizers/gemma3, except that user-defined pieces keep the
  // GGUF's spelling with spaces (llama.cpp matches them in the raw text).
  ASSERT_EQ(f.get_string_array("tokenizer.ggml.tokens").size(), 262144u);
  json tj = read_json(hf_dir("gemma3") + "/tokenizer.json");
  std::map<int32_t, std::string> hf_tokens;
  for (auto it = tj["model"]["vocab"].begin(); it != tj["model"]["vocab"].end(); ++it) hf_tokens[it.value().get<int32_t>()] = it.key();
  for (const json& a : tj["added_tokens"]) hf_tokens[a["id"].get<int32_t>()] = a["content"].get<std::string>();
  size_t differ = 0;
  const auto& types = f.get_array<int32_t>("tokenizer.ggml.token_type");
  size_t respelled = 0;
  for (int32_t id = 0; id < 262144; ++id) {
    std::string want = hf_tokens[id];
    if (types[id] == 4 && want.find(kSpace) != std::string::npos) {
      want = replace_all(want, kSpace, " ");
      ++respelled;
    }
    differ += tok->id_to_token(id) != want;
  }
  EXPECT_EQ(differ, 0u);
  EXPECT_GT(respelled, 0u);
  EXPECT_EQ(tok->bos_id(), 2);
  EXPECT_EQ(tok->eos_id(), 1);
  EXPECT_TRUE(tok->is_end_of_generation(tok->token_to_id("<end_of_turn>")));
  // Ids and decode: against llama.cpp on this file in gguf_llamacpp_test.cc.
}

}  // namespace
}  // namespace oxyd::tokenizer::testing
