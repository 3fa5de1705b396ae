// Tokenizer::from_gguf: rebuilds the Hugging Face pipeline from a GGUF's tokenizer.ggml.* keys, as
// llama.cpp's convert_hf_to_gguf.py writes them. model gpt2 = byte-level BPE (pre-tokenizer chosen
// by tokenizer.ggml.pre), llama = SentencePiece BPE merged by score the way llama.cpp does (spm.h;
// a merge list in the file is ignored, as llama.cpp ignores it), bert = WordPiece (tokens stored
// with the converter's "▁word"/"suffix" spelling), t5 = Unigram as llama.cpp's UGM
// tokenizer (precompiled charsmap, its whitespace rules), rwkv = greedy longest byte match,
// plamo2 = PLaMo 2's integer-score lattice (plamo2.h). CONTROL/UNKNOWN
// tokens become special added tokens, USER_DEFINED plain added tokens (matched even in user text).
// The reference for a GGUF is llama.cpp's tokenizer on that file (tests/tokenizer/gguf_llamacpp_test.cc).
#include <algorithm>
#include <cctype>
#include <unordered_set>

#include "core/error.h"
#include "loader/gguf.h"
#include "tokenizer/bpe.h"
#include "tokenizer/llamacpp_pre.h"
#include "tokenizer/longest_match.h"
#include "tokenizer/plamo2.h"
#include "tokenizer/spm.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unigram.h"
#include "tokenizer/wordpiece.h"

namespace oxyd::tokenizer {

namespace {

constexpr int32_t kTypeNormal = 1, kTypeUnknown = 2, kTypeControl = 3, kTypeUserDefined = 4;
const char* kSpace = "\xE2\x96\x81";  // ▁

// Texts llama.cpp's vocabulary loader forces to CONTROL whatever the file says (its end-of-generation
// and fill-in-the-middle detection by token text; "this is probably a bug in the model"): e.g. Gemma
// 3's "</s>" is USER_DEFINED in the GGUF, yet llama.cpp never matches it in user text and drops it
// when decoding without specials. Matching that keeps us equal to llama.cpp on such files. (llama.cpp
// skips the FIM / EOT detection when the file names that id; those tokens are CONTROL in practice.)
bool llamacpp_forces_control(const std::string& t) {
  static const std::unordered_set<std::string> kTexts = {
      "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
      "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
      "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
      "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>", "[e~[",
      "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<PRE>", "\xE2\x96\x81<PRE>", "<|code_prefix|>",
      "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<SUF>", "\xE2\x96\x81<SUF>", "<|code_suffix|>",
      "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<MID>", "\xE2\x96\x81<MID>", "<|code_middle|>",
      "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]", "<|fim_repo|>", "<|repo_name|>",
      "<|prefix|>", "<|suffix|>", "<|middle|>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>",
      "<\xEF\xBD\x9C" "fim\xE2\x96\x81hole\xEF\xBD\x9C>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>",
      "<fim-repo>", "<REPO>", "<reponame>", "<|file_sep|>"};
  return kTexts.count(t) != 0;
}

PreTokenizer byte_level_no_regex() {
  PreTokenizer p;
  p.kind = PreTokenizer::Kind::BYTE_LEVEL;
  p.add_prefix_space = false;
  p.use_regex = false;
  return p;
}

// A SentencePiece vocabulary whose NORMAL pieces all have the same score (convert_hf_to_gguf.py
// writes -1000 for every piece when it has only tokenizer.json) says nothing about the merge order;
// llama.cpp then merges leftmost-first, which is not the model's tokenization ("capital" ->
// "ca"+"pital"...: 2 of the 3 llama_tok prompts differed from HF).
bool scores_carry_no_order(const std::vector<float>& scores, const std::vector<int32_t>& types) {
  size_t normal = 0;
  float first = 0.0f;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (types[i] != kTypeNormal) continue;
    if (normal++ == 0) first = scores[i];
    else if (scores[i] != first) return false;
  }
  return normal > 1;
}

// The order a SentencePiece BPE model keeps instead: its pieces are stored by decreasing score, so
// a lower id merges first (what the tokenizer.json merge list encodes too). Pieces made only of
// U+2581 go last: the BPE trainer never learns them (it splits on whitespace), they are manual
// additions that Llama and Mistral score -1e9 ("    return" -> "▁▁▁" "▁return", as HF).
std::vector<float> scores_from_ids(std::vector<float> scores, const std::vector<std::pair<std::string, int32_t>>& vocab,
                                   const std::vector<int32_t>& types) {
  for (size_t i = 0; i < vocab.size(); ++i) {
    if (types[i] != kTypeNormal) continue;
    const std::string& tok = vocab[i].first;
    bool spaces = tok.size() >= 6 && tok.size() % 3 == 0;
    for (size_t k = 0; spaces && k < tok.size(); k += 3) spaces = tok.compare(k, 3, kSpace) == 0;
    const float id = static_cast<float>(i);
    scores[i] = spaces ? -8388608.0f - id : -id;
  }
  return scores;
}

}  // namespace

// Builds one Tokenizer from a GGUF: the keys every model shares, then one method per
// tokenizer.ggml.model value.
class GgufTokenizerBuilder {
 public:
  explicit GgufTokenizerBuilder(const loader::GgufFile& gguf)
      : gguf_(gguf), src_(gguf.source()), model_(gguf.get_string("tokenizer.ggml.model")),
        t_(new Tokenizer()) {}

  std::unique_ptr<Tokenizer> build() {
    read_vocabulary();
    read_special_ids();
    if (model_ == "gpt2" || model_ == "gemma4") byte_level_bpe();
    else if (model_ == "llama") sentencepiece_bpe();
    else if (model_ == "bert") wordpiece();
    else if (model_ == "t5") unigram();
    else if (model_ == "rwkv") rwkv();
    else if (model_ == "plamo2") plamo2();
    else
      throw_error(ErrorCode::UNSUPPORTED, src_ + ": tokenizer.ggml.model: '" + model_ +
                                              "' is not supported (supported: gpt2, gemma4, llama, bert, t5, rwkv, plamo2)");
    if (t_->template_.size() == 1) t_->template_.clear();
    if (model_ != "bert") pair_from_flags();
    t_->finish(src_);
    return std::move(t_);
  }

 private:
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw_error(ErrorCode::INVALID_ARGUMENT, src_ + ": " + key + ": " + what);
  }

  int32_t id_key(const char* key) const {
    auto v = gguf_.get_opt<uint32_t>(key);
    if (!v) return -1;
    if (*v >= n_) fail(key, "id " + std::to_string(*v) + " is outside the vocabulary of " + std::to_string(n_));
    return static_cast<int32_t>(*v);
  }

  // A per-token array key (scores, types) must have one entry per token.
  template <typename T>
  std::vector<T> per_token(const char* key, std::vector<T> fallback) const {
    if (!gguf_.has(key)) return fallback;
    std::vector<T> v = gguf_.get_array<T>(key);
    if (v.size() != n_)
      fail(key, "has " + std::to_string(v.size()) + " entries, expected " + std::to_string(n_) + " (one per token)");
    return v;
  }

  // Tokens, their types, and the added tokens (CONTROL / UNKNOWN special, USER_DEFINED plain).
  void read_vocabulary() {
    const std::vector<std::string>& tokens = gguf_.get_string_array("tokenizer.ggml.tokens");
    n_ = tokens.size();
    if (n_ == 0) fail("tokenizer.ggml.tokens", "empty vocabulary");
    types_ = per_token<int32_t>("tokenizer.ggml.token_type", std::vector<int32_t>(n_, kTypeNormal));
    std::string name = gguf_.get_string("general.name", "");
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool phi3 = name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos;
    vocab_.reserve(n_);
    for (size_t i = 0; i < n_; ++i) {
      std::string tok = tokens[i];
      const int32_t type = llamacpp_forces_control(tok) ? kTypeControl : types_[i];
      if (type == kTypeUserDefined && model_ == "t5") {
        // The converter writes user-defined SentencePiece pieces with ▁ turned into spaces. For
        // "llama" the spaces stay: llama.cpp matches them in the raw text, and a run of ▁ in the
        // text can then never merge into them.
        std::string fixed;
        for (char c : tok) {
          if (c == ' ') fixed += kSpace;
          else fixed.push_back(c);
        }
        tok.swap(fixed);
      }
      if (type == kTypeControl || type == kTypeUnknown || type == kTypeUserDefined) {
        AddedToken a;
        a.content = tok;
        a.id = static_cast<int32_t>(i);
        a.special = type != kTypeUserDefined;
        // llama.cpp's per-model attribute rule (llama_vocab::impl::load, by general.name): Phi-3
        // files strip whitespace after every special token but <unk>, <s>, <|endoftext|>.
        a.rstrip = phi3 && tok != "<unk>" && tok != "<s>" && tok != "<|endoftext|>";
        t_->added_.push_back(a);
      }
      vocab_.emplace_back(std::move(tok), static_cast<int32_t>(i));
    }
  }

  void read_special_ids() {
    t_->bos_id_ = id_key("tokenizer.ggml.bos_token_id");
    t_->eos_id_ = id_key("tokenizer.ggml.eos_token_id");
    t_->unk_id_ = id_key("tokenizer.ggml.unknown_token_id");
    t_->pad_id_ = id_key("tokenizer.ggml.padding_token_id");
    t_->eot_id_ = id_key("tokenizer.ggml.eot_token_id");
    t_->chat_template_ = gguf_.get_string("tokenizer.chat_template", "");
    t_->add_bos_ = gguf_.get_bool("tokenizer.ggml.add_bos_token", model_ == "llama" || model_ == "bert");
    t_->add_eos_ = gguf_.get_bool("tokenizer.ggml.add_eos_token", model_ == "t5");  // llama.cpp's UGM default
  }

  void template_from_flags(int32_t first, int32_t last) {
    t_->template_.clear();
    if (first >= 0) t_->template_.push_back({false, {first}});
    t_->template_.push_back({true, {}});
    if (last >= 0) t_->template_.push_back({false, {last}});
  }
  // A cross-encoder's pair as llama.cpp's server formats a rerank input without a rerank template
  // (format_prompt_rerank): [bos] A [eos] [sep] B [eos] as add_bos / add_eos / add_sep say (RoBERTa's
  // and XLM-R's files: <s> A </s></s> B </s>), token type 0 throughout. BERT files keep the
  // [CLS] A [SEP] B [SEP] of encode_pair, types 0 then 1.
  void pair_from_flags() {
    int32_t eos = t_->eos_id_;
    const int32_t sep = id_key("tokenizer.ggml.seperator_token_id");
    if (eos < 0) eos = sep;
    using P = Tokenizer::PairItem;
    auto& pt = t_->pair_template_;
    pt.clear();
    if (t_->add_bos_ && t_->bos_id_ >= 0) pt.push_back(P{-1, {t_->bos_id_}, 0});
    pt.push_back(P{0, {}, 0});
    if (t_->add_eos_ && eos >= 0) pt.push_back(P{-1, {eos}, 0});
    if (gguf_.get_bool("tokenizer.ggml.add_sep_token", false) && sep >= 0) pt.push_back(P{-1, {sep}, 0});
    pt.push_back(P{1, {}, 0});
    if (t_->add_eos_ && eos >= 0) pt.push_back(P{-1, {eos}, 0});
  }
  void template_bos_eos() { template_from_flags(t_->add_bos_ ? t_->bos_id_ : -1, t_->add_eos_ ? t_->eos_id_ : -1); }

  // Spaces become U+2581 (after a prepended one when `prefix`), and back when decoding.
  void metaspace_normalizer_and_decoder(bool prefix, bool strip_decoded_prefix) {
    Normalizer replace;
    replace.kind = Normalizer::Kind::REPLACE;
    replace.pattern = Pattern::literal(" ");
    replace.content = kSpace;
    if (prefix) {
      Normalizer prepend;
      prepend.kind = Normalizer::Kind::PREPEND;
      prepend.content = kSpace;
      t_->normalizer_.kind = Normalizer::Kind::SEQUENCE;
      t_->normalizer_.children = {prepend, replace};
    } else {
      t_->normalizer_ = replace;
    }
    Decoder dr, db, df;
    dr.kind = Decoder::Kind::REPLACE;
    dr.pattern = kSpace;
    dr.content = " ";
    db.kind = Decoder::Kind::BYTE_FALLBACK;
    df.kind = Decoder::Kind::FUSE;
    t_->decoder_.kind = Decoder::Kind::SEQUENCE;
    t_->decoder_.children = {dr, db, df};
    if (strip_decoded_prefix) {
      Decoder ds;
      ds.kind = Decoder::Kind::STRIP;
      ds.content = " ";
      ds.strip_start = 1;
      t_->decoder_.children.push_back(ds);
    }
  }

  std::vector<std::pair<std::string, std::string>> merges(const std::string& pre_name) const {
    std::vector<std::pair<std::string, std::string>> out;
    if (pre_name == "kimi-k2" && !gguf_.has("tokenizer.ggml.merges")) return out;  // Kimi-K2 files may have none
    const auto& m = gguf_.get_string_array("tokenizer.ggml.merges");
    out.reserve(m.size());
    for (size_t i = 0; i < m.size(); ++i) {
      size_t sp = m[i].find(' ', 1);
      if (sp == std::string::npos) fail("tokenizer.ggml.merges[" + std::to_string(i) + "]", "expected \"left right\"");
      out.emplace_back(m[i].substr(0, sp), m[i].substr(sp + 1));
    }
    return out;
  }

  // Byte-level BPE (SentencePiece-style BPE for gemma4), pre-tokenized the way llama.cpp does for
  // the tokenizer.ggml.pre value (llamacpp_pre.h).
  void byte_level_bpe() {
    const std::string pre_name = model_ == "gemma4" ? "gemma4" : gguf_.get_string("tokenizer.ggml.pre", "default");
    const std::optional<LlamaCppPre> lp = llamacpp_pre(pre_name);
    if (!lp) {
      std::string known;
      for (const std::string& k : llamacpp_pre_names()) known += (known.empty() ? "" : ", ") + k;
      throw_error(ErrorCode::UNSUPPORTED, src_ + ": tokenizer.ggml.pre: pre-tokenizer '" + pre_name +
                                              "' is not supported (llama.cpp does not know it either; known: " +
                                              known + ")");
    }
    std::vector<std::pair<std::string, std::string>> m = merges(pre_name);
    BpeOptions o;
    o.ignore_merges = lp->ignore_merges;
    o.ignore_merges_newline_runs = lp->newline_runs_whole;
    o.byte_fallback = !lp->byte_encode;
    o.unknown_splits = true;  // llama.cpp's merge loop (bpe.h)
    const std::string where = src_ + ": tokenizer.ggml.pre '" + pre_name + "'";
    PreTokenizer seq;
    seq.kind = PreTokenizer::Kind::SEQUENCE;
    for (const char* e : lp->exprs) {
      PreTokenizer s;
      s.kind = PreTokenizer::Kind::SPLIT;
      s.pattern = lp->unicode_regex ? Pattern::regex(e, where) : llamacpp_pattern(e, where);
      s.behavior = SplitBehavior::ISOLATED;
      seq.children.push_back(std::move(s));
    }
    if (lp->byte_encode) seq.children.push_back(byte_level_no_regex());
    t_->pre_tokenizer_ = std::move(seq);
    if (lp->escape_whitespaces) metaspace_normalizer_and_decoder(false, false);
    else t_->decoder_.kind = Decoder::Kind::BYTE_LEVEL;
    t_->add_bos_ = lp->force_add_bos || gguf_.get_bool("tokenizer.ggml.add_bos_token", lp->add_bos);
    t_->model_ = std::make_unique<Bpe>(std::move(vocab_), m, std::move(o), src_ + ": tokenizer.ggml");
    template_bos_eos();
  }

  void sentencepiece_bpe() {
    const bool add_space_prefix = gguf_.get_bool("tokenizer.ggml.add_space_prefix", true);
    metaspace_normalizer_and_decoder(add_space_prefix, add_space_prefix);
    std::vector<float> scores = per_token<float>("tokenizer.ggml.scores", std::vector<float>(n_, 0.0f));
    if (scores_carry_no_order(scores, types_)) scores = scores_from_ids(std::move(scores), vocab_, types_);
    t_->model_ = std::make_unique<Spm>(std::move(vocab_), std::move(scores), t_->unk_id_, src_ + ": tokenizer.ggml");
    template_bos_eos();
  }

  void wordpiece() {
    // Undo the converter's spelling: "▁word" starts a word, "[X]" stays, anything else was "##x".
    for (auto& [tok, id] : vocab_) {
      if (tok.rfind(kSpace, 0) == 0) tok = tok.substr(3);
      else if (!(tok.size() >= 2 && tok.front() == '[' && tok.back() == ']')) tok = "##" + tok;
    }
    for (auto& a : t_->added_) a.content = vocab_[a.id].first;
    if (t_->unk_id_ < 0) fail("tokenizer.ggml.unknown_token_id", "required for a WordPiece vocabulary");
    std::string unk = vocab_[t_->unk_id_].first;
    t_->model_ = std::make_unique<WordPiece>(std::move(vocab_), unk, "##", 100, src_ + ": tokenizer.ggml");
    t_->normalizer_.kind = Normalizer::Kind::BERT;
    t_->normalizer_.strip_accents = true;
    t_->pre_tokenizer_.kind = PreTokenizer::Kind::BERT;
    t_->decoder_.kind = Decoder::Kind::WORDPIECE;
    int32_t cls = id_key("tokenizer.ggml.cls_token_id");
    int32_t sep = id_key("tokenizer.ggml.seperator_token_id");
    if (cls < 0) cls = t_->bos_id_;
    if (sep < 0) sep = t_->eos_id_;
    // llama.cpp's WPM tokenizer brackets every special-tokens encode as [CLS] … [SEP] whatever
    // add_bos / add_eos / add_sep say (its converter writes add_sep false for BERT files).
    template_from_flags(cls, sep);
  }

  // SentencePiece unigram, tokenized as llama.cpp's UGM tokenizer does (llama-vocab.cpp): each
  // piece between added tokens goes through the precompiled charsmap (when the file has one) and
  // the whitespace rules of add_space_prefix / remove_extra_whitespaces, then one Viterbi lattice
  // over the whole piece (no split at spaces) of the normal, user-defined and unused pieces
  // (user-defined scored 0), an unknown code point scoring the lowest normal score minus 10.
  void unigram() {
    std::string blob;
    if (const loader::GgufValue* v = gguf_.find("tokenizer.ggml.precompiled_charsmap"); v && v->size() > 0) {
      if (v->elem_type() == loader::GgufType::UINT8) {
        const auto d = v->data<uint8_t>();
        blob.assign(reinterpret_cast<const char*>(d.data()), d.size());
      } else if (v->elem_type() == loader::GgufType::INT8) {
        const auto d = v->data<int8_t>();
        blob.assign(reinterpret_cast<const char*>(d.data()), d.size());
      } else {
        fail("tokenizer.ggml.precompiled_charsmap", "expected an array of UINT8 or INT8");
      }
    }
    std::vector<float> scores = gguf_.get_array<float>("tokenizer.ggml.scores");
    if (scores.size() != n_) fail("tokenizer.ggml.scores", "expected one score per token");
    std::vector<std::pair<std::string, double>> pieces;
    std::vector<bool> matchable(n_);
    pieces.reserve(n_);
    std::optional<double> min_normal;
    constexpr int32_t kTypeUnused = 5;
    for (size_t i = 0; i < n_; ++i) {
      const int32_t type = types_[i];
      matchable[i] = type == kTypeNormal || type == kTypeUserDefined || type == kTypeUnused;
      if (type == kTypeNormal) min_normal = std::min<double>(min_normal.value_or(scores[i]), scores[i]);
      pieces.emplace_back(vocab_[i].first, type == kTypeUserDefined ? 0.0 : double(scores[i]));
    }
    std::optional<int32_t> unk;
    if (t_->unk_id_ >= 0) unk = t_->unk_id_;
    t_->model_ = std::make_unique<Unigram>(std::move(pieces), unk, false, src_ + ": tokenizer.ggml", &matchable,
                                           min_normal.value_or(0.0));
    const bool add_space_prefix = gguf_.get_bool("tokenizer.ggml.add_space_prefix", true);
    t_->normalizer_.kind = Normalizer::Kind::LLAMACPP_UGM;
    if (!blob.empty())
      t_->normalizer_.charsmap = std::make_shared<CharsMap>(blob, src_ + ": tokenizer.ggml.precompiled_charsmap");
    t_->normalizer_.ugm_prefix = add_space_prefix;
    t_->normalizer_.ugm_merge_spaces = gguf_.get_bool("tokenizer.ggml.remove_extra_whitespaces", false);
    t_->decoder_.kind = Decoder::Kind::METASPACE;
    t_->decoder_.prepend_first = add_space_prefix;
    template_bos_eos();
  }

  // RWKV "world": greedy longest match over the raw bytes of every token (the control "<s>"
  // included, so "<s>" in user text is id 0, as in llama.cpp); no normalizer, no pre-tokenizer,
  // no bos/eos added. Token texts are Python bytes reprs (unescape_rwkv_token).
  void rwkv() {
    std::vector<std::string> tokens(n_);
    for (size_t i = 0; i < n_; ++i) tokens[i] = unescape_rwkv_token(vocab_[i].first);
    for (auto& a : t_->added_) a.content = tokens[a.id];
    t_->model_ = std::make_unique<LongestMatch>(std::move(tokens), t_->unk_id_);
    t_->decoder_.kind = Decoder::Kind::FUSE;  // the bytes of each token, joined
    t_->add_bos_ = gguf_.get_bool("tokenizer.ggml.add_bos_token", false);
    t_->add_eos_ = gguf_.get_bool("tokenizer.ggml.add_eos_token", false);
    template_bos_eos();
  }

  // PLaMo 2: plamo2.h's lattice over the raw text pieces; byte tokens decode to their bytes.
  void plamo2() {
    std::vector<float> scores = per_token<float>("tokenizer.ggml.scores", std::vector<float>(n_, 0.0f));
    std::vector<bool> is_byte(n_);
    std::vector<std::string> tokens(n_);
    for (size_t i = 0; i < n_; ++i) is_byte[i] = types_[i] == 6, tokens[i] = vocab_[i].first;
    t_->model_ = std::make_unique<Plamo2>(std::move(tokens), scores, is_byte, src_ + ": tokenizer.ggml");
    Decoder db, df;
    db.kind = Decoder::Kind::BYTE_FALLBACK;
    df.kind = Decoder::Kind::FUSE;
    t_->decoder_.kind = Decoder::Kind::SEQUENCE;
    t_->decoder_.children = {db, df};
    template_bos_eos();
  }

  const loader::GgufFile& gguf_;
  const std::string src_;
  const std::string model_;
  std::unique_ptr<Tokenizer> t_;
  size_t n_ = 0;
  std::vector<int32_t> types_;
  std::vector<std::pair<std::string, int32_t>> vocab_;
};

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const loader::GgufFile& gguf) {
  return GgufTokenizerBuilder(gguf).build();
}

}  // namespace oxyd::tokenizer
