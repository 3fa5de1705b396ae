// oxyd::tokenizer::Tokenizer — text <-> token ids, built from tokenizer.json +
// tokenizer_config.json (identical to Hugging Face `tokenizers`: byte-level BPE, SentencePiece BPE
// with byte fallback, WordPiece, Unigram) or from a GGUF's tokenizer.ggml.* metadata (identical to
// llama.cpp's tokenizer on that file, see gguf_vocab.cc; decode skips llama_detokenize's
// clean_spaces, as llama.cpp's own generated text does).
// Pipeline: added tokens -> normalizer -> pre-tokenizer -> model -> post-processor.
// Invalid UTF-8 input is replaced with U+FFFD (maximal subparts) before anything else, which is
// what Python's bytes.decode("utf-8", "replace") gives the reference. Thread-safe after loading.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/decoders.h"
#include "tokenizer/model.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/pre_tokenizers.h"

namespace oxyd::loader {
class GgufFile;
}

namespace oxyd::tokenizer {

/// "<start_of_image>", "<|vision_pad|>", "[audio]": a token of lowercase letters, digits, '_', '|'
/// or '-' in <> or [] naming image, audio, video or vision (a placeholder for a non-text input).
bool is_media_placeholder(std::string_view token);

class Tokenizer {
 public:
  /// Loads tokenizer.json and (optional, "" to skip) tokenizer_config.json. Errors name the file
  /// and the field.
  static std::unique_ptr<Tokenizer> from_hf_files(const std::string& tokenizer_json_path,
                                                  const std::string& tokenizer_config_path);
  /// From parsed JSON text (used by the above; `source` names the file in errors).
  static std::unique_ptr<Tokenizer> from_hf_json(std::string_view tokenizer_json,
                                                 std::string_view tokenizer_config,
                                                 const std::string& source);
  /// From a GGUF file's tokenizer.ggml.* keys (model gpt2 / llama / bert / t5), tokenizing as
  /// llama.cpp does on that file.
  static std::unique_ptr<Tokenizer> from_gguf(const loader::GgufFile& gguf);

  /// Text -> ids. add_special: apply the post-processor template (BOS/EOS, CLS/SEP).
  /// parse_special: match special tokens written in `text` (true only for text the engine itself
  /// rendered, e.g. a chat template; false for user content, where "<|im_end|>" stays plain text).
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;
  /// A (first, second) pair as the post-processor's pair template joins them: BERT's [CLS] a [SEP]
  /// b [SEP] (types 0, then 1), RoBERTa's <s> a </s></s> b </s> (types 0). Without a pair template
  /// (GGUF vocabularies): a's single encoding, then b's without the template tokens before it,
  /// types 0 then 1. User text: special tokens in it stay text. `types` (optional) gets the type ids.
  std::vector<int32_t> encode_pair(std::string_view a, std::string_view b, std::vector<int32_t>* types) const;
  /// Ids -> text. skip_special drops special tokens, and added tokens that stand for a non-text
  /// input (is_media_placeholder) whatever their flag. Out-of-range ids are skipped.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special = false) const;

  // Vocabulary queries. Ids are -1 when the vocabulary has no such token.
  size_t vocab_size() const;  // model vocabulary plus added tokens (max id + 1)
  int32_t token_to_id(std::string_view token) const;
  /// The bytes token `id` adds to generated text (Decoder::piece_bytes; an added token's content);
  /// "" for special tokens and ids outside the vocabulary. What grammar masks match against.
  std::string token_bytes(int32_t id) const;
  std::string id_to_token(int32_t id) const;
  bool is_special(int32_t id) const { return special_ids_.count(id) != 0; }  // incl. media placeholders
  int32_t bos_id() const { return bos_id_; }
  int32_t eos_id() const { return eos_id_; }
  int32_t eot_id() const { return eot_id_; }
  int32_t pad_id() const { return pad_id_; }
  int32_t unk_id() const { return unk_id_; }
  /// Ids that end a generation (eos, eot and the family's other end-of-turn tokens).
  bool is_end_of_generation(int32_t id) const { return eog_ids_.count(id) != 0; }
  const std::vector<int32_t>& end_of_generation_ids() const { return eog_list_; }
  /// Whether encode(add_special=true) prepends bos / appends eos.
  bool add_bos() const { return add_bos_; }
  bool add_eos() const { return add_eos_; }
  /// The chat template from tokenizer_config.json or tokenizer.chat_template ("" if none).
  const std::string& chat_template() const { return chat_template_; }

 private:
  friend class GgufTokenizerBuilder;  // gguf_vocab.cc: from_gguf, one method per tokenizer.ggml.model
  Tokenizer() = default;
  void finish(const std::string& source);  // builds matchers, eog set, checks ids

  Normalizer normalizer_;
  PreTokenizer pre_tokenizer_;
  std::unique_ptr<Model> model_;
  Decoder decoder_;
  std::vector<AddedToken> added_;
  AddedTokenMatcher raw_matcher_, normalized_matcher_;
  std::unordered_map<int32_t, size_t> added_by_id_;
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> added_by_content_;
  std::unordered_set<int32_t> special_ids_;
  // Post-processor for a single sequence: items in order; an empty item list stands for the text.
  struct TemplateItem {
    bool is_sequence = false;
    std::vector<int32_t> ids;
  };
  std::vector<TemplateItem> template_;
  struct PairItem {
    int seq = -1;  // 0: the first text, 1: the second, -1: the special tokens `ids`
    std::vector<int32_t> ids;
    int32_t type_id = 0;
  };
  std::vector<PairItem> pair_template_;  // empty: none in the file
  int32_t bos_id_ = -1, eos_id_ = -1, eot_id_ = -1, pad_id_ = -1, unk_id_ = -1;
  bool add_bos_ = false, add_eos_ = false;
  std::unordered_set<int32_t> eog_ids_;
  std::vector<int32_t> eog_list_;
  std::string chat_template_;
};

}  // namespace oxyd::tokenizer
