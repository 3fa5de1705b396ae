// Tokenizer encode/decode pipeline and vocabulary queries; loaders live in hf_json.cc and
// gguf_vocab.cc.
#include "tokenizer/tokenizer.h"

#include <algorithm>

#include "core/error.h"
#include "tokenizer/unicode.h"

namespace oxyd::tokenizer {

bool is_media_placeholder(std::string_view t) {
  const bool angle = t.size() > 2 && t.front() == '<' && t.back() == '>';
  const bool square = t.size() > 2 && t.front() == '[' && t.back() == ']';
  if (!angle && !square) return false;
  for (char c : t.substr(1, t.size() - 2))
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '|' || c == '-')) return false;
  for (std::string_view w : {"image", "audio", "video", "vision"})
    if (t.find(w) != std::string_view::npos) return true;
  return false;
}

void Tokenizer::finish(const std::string& source) {
  OXYD_CHECK(model_ != nullptr, source + ": no model");
  added_by_id_.clear();
  added_by_content_.clear();
  special_ids_.clear();
  // Specials first, then the others: the order tokenizers gives its tries.
  std::vector<size_t> raw_idx, norm_idx;
  std::vector<std::string> raw_pat, norm_pat;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < added_.size(); ++i) {
      const AddedToken& t = added_[i];
      if (t.special != (pass == 0) || t.content.empty()) continue;
      if (t.id < 0) {
        throw_error(ErrorCode::INVALID_ARGUMENT,
                    source + ": added token '" + t.content + "' has no valid id");
      }
      added_by_id_.emplace(t.id, i);
      added_by_content_.emplace(t.content, t.id);
      if (t.special) special_ids_.insert(t.id);
      if (t.normalized) {
        std::string p = t.content;
        normalizer_.apply(p);
        norm_idx.push_back(i);
        norm_pat.push_back(std::move(p));
      } else {
        raw_idx.push_back(i);
        raw_pat.push_back(t.content);
      }
    }
  }
  for (const TemplateItem& item : template_) {
    for (int32_t id : item.ids) {
      if (id < 0 || static_cast<size_t>(id) >= vocab_size()) {
        throw_error(ErrorCode::INVALID_ARGUMENT, source + ": post_processor: template token id " +
                                                     std::to_string(id) + " is outside the vocabulary");
      }
    }
  }
  raw_matcher_.build(&added_, std::move(raw_idx), raw_pat);
  normalized_matcher_.build(&added_, std::move(norm_idx), norm_pat);
  // A placeholder for a non-text input is never text: skipped with the specials when decoding
  // (issue 21: Gemma 3's <start_of_image> is special in its tokenizer.json but USER_DEFINED in its
  // GGUF, so it reached sampled output). Matching in text is unchanged (llama.cpp matches it).
  for (const AddedToken& t : added_)
    if (!t.special && is_media_placeholder(t.content)) special_ids_.insert(t.id);

  eog_ids_.clear();
  eog_list_.clear();
  auto add_eog = [&](int32_t id) {
    if (id >= 0 && eog_ids_.insert(id).second) eog_list_.push_back(id);
  };
  static const char* kEotNames[] = {"<|eot_id|>", "<|im_end|>", "<end_of_turn>", "<|end|>",
                                    "<|return|>", "<EOT>"};
  // Harmony (a vocabulary with both <|return|> and <|call|>): <|end|> closes one message inside
  // the assistant's turn (the analysis channel before the final one), so it never ends
  // generation; the turn ends with <|return|> or <|call|> (openai-harmony's
  // stop_tokens_for_assistant_actions; tests/data/chat/harmony_goldens.jsonl). llama.cpp drops
  // <|end|> from its EOG set the same way.
  const int32_t ret_id = token_to_id("<|return|>"), call_id = token_to_id("<|call|>");
  const bool harmony = ret_id >= 0 && is_special(ret_id) && call_id >= 0 && is_special(call_id);
  const int32_t harmony_end = harmony ? token_to_id("<|end|>") : -1;
  if (harmony_end >= 0 && eot_id_ == harmony_end) eot_id_ = ret_id;
  if (eot_id_ < 0) {
    for (const char* name : kEotNames) {
      int32_t id = token_to_id(name);
      if (id >= 0 && id != harmony_end && is_special(id)) {
        eot_id_ = id;
        break;
      }
    }
  }
  add_eog(eos_id_);
  add_eog(eot_id_);
  static const char* kEogNames[] = {"<|eot_id|>", "<|eom_id|>", "<|im_end|>", "<|endoftext|>",
                                    "<end_of_turn>", "<|return|>", "<|call|>", "<|end_of_text|>",
                                    "<EOT>"};
  for (const char* name : kEogNames) {
    int32_t id = token_to_id(name);
    if (id >= 0 && is_special(id)) add_eog(id);
  }
  if (harmony_end >= 0 && eog_ids_.erase(harmony_end))  // an eos_token_id of <|end|> as well
    eog_list_.erase(std::find(eog_list_.begin(), eog_list_.end(), harmony_end));
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special,
                                       bool parse_special) const {
  std::vector<Piece> pieces(1);
  pieces[0].text = utf8_lossy(text);
  pieces[0].at_start = true;
  raw_matcher_.split(pieces, parse_special);
  for (auto it = pieces.begin(); it != pieces.end();) {
    if (it->added_id < 0) {
      normalizer_.apply(it->text);
      if (it->text.empty()) {
        it = pieces.erase(it);
        continue;
      }
    }
    ++it;
  }
  normalized_matcher_.split(pieces, parse_special);
  pre_tokenizer_.apply(pieces);

  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  for (const Piece& p : pieces) {
    if (p.added_id >= 0) ids.push_back(p.added_id);
    else model_->tokenize(p.text, ids);
  }
  if (!add_special || template_.empty()) return ids;
  std::vector<int32_t> out;
  out.reserve(ids.size() + 4);
  for (const TemplateItem& item : template_) {
    if (item.is_sequence) out.insert(out.end(), ids.begin(), ids.end());
    else out.insert(out.end(), item.ids.begin(), item.ids.end());
  }
  return out;
}

std::vector<int32_t> Tokenizer::encode_pair(std::string_view a, std::string_view b,
                                            std::vector<int32_t>* types) const {
  const std::vector<int32_t> ia = encode(a, false, false), ib = encode(b, false, false);
  std::vector<int32_t> out, ty;
  auto put = [&](const std::vector<int32_t>& ids, int32_t type) {
    out.insert(out.end(), ids.begin(), ids.end());
    ty.insert(ty.end(), ids.size(), type);
  };
  if (!pair_template_.empty()) {
    for (const PairItem& item : pair_template_) put(item.seq < 0 ? item.ids : item.seq == 0 ? ia : ib, item.type_id);
  } else {
    bool seen = false;
    for (const TemplateItem& item : template_) put(item.is_sequence ? ia : item.ids, 0);
    for (const TemplateItem& item : template_) {
      seen = seen || item.is_sequence;
      if (seen) put(item.is_sequence ? ib : item.ids, 1);
    }
    if (template_.empty()) put(ia, 0), put(ib, 1);
  }
  if (types) *types = std::move(ty);
  return out;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    auto it = added_by_id_.find(id);
    if (it != added_by_id_.end()) {
      if (skip_special && special_ids_.count(id)) continue;
      tokens.push_back(added_[it->second].content);
      continue;
    }
    std::string_view t = model_->vocab().token(id);
    if (t.empty()) continue;
    tokens.emplace_back(t);
  }
  return run_decoder(decoder_, std::move(tokens));
}

size_t Tokenizer::vocab_size() const {
  size_t n = model_->vocab().size();
  for (const auto& t : added_) n = std::max(n, static_cast<size_t>(t.id) + 1);
  return n;
}

int32_t Tokenizer::token_to_id(std::string_view token) const {
  auto it = added_by_content_.find(token);
  if (it != added_by_content_.end()) return it->second;
  return model_->vocab().find(token);
}

std::string Tokenizer::token_bytes(int32_t id) const {
  if (auto it = added_by_id_.find(id); it != added_by_id_.end())
    return special_ids_.count(id) ? std::string() : decoder_.piece_bytes(added_[it->second].content);  // decoded too, as decode() does
  std::string_view t = model_->vocab().token(id);
  return t.empty() ? std::string() : decoder_.piece_bytes(std::string(t));
}

std::string Tokenizer::id_to_token(int32_t id) const {
  auto it = added_by_id_.find(id);
  if (it != added_by_id_.end()) return added_[it->second].content;
  return std::string(model_->vocab().token(id));
}

}  // namespace oxyd::tokenizer
