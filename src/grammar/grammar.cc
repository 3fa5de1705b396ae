// GrammarCompiler and Matcher over XGrammar (see grammar.h). The bitmask is XGrammar's: int32
// words, bit i of word i/32 set = token i allowed.
#include "grammar/grammar.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include <dlpack/dlpack.h>
#include <nlohmann/json.hpp>
#include <xgrammar/xgrammar.h>

#include "core/error.h"

namespace oxyd::grammar {

class CompiledGrammar {
 public:
  explicit CompiledGrammar(xgrammar::CompiledGrammar g) : g_(std::move(g)) {}
  xgrammar::CompiledGrammar g_;
};

namespace {

using json = nlohmann::ordered_json;

// XGrammar 0.2.8 writes a string with minLength / maxLength (and no pattern or format) as up to N
// characters of [^"\\\r\n]: other control characters (U+0001..U+001F) pass, which JSON forbids
// unescaped, so a sampled \x05 made output no JSON parser reads (issue 25, a random model under
// tool_choice "required"). The same bound as a pattern of the characters JSON allows unescaped
// has none (XGrammar's regex "." lets them through too). Values that are data (enum, const, default, examples) are left alone.
void bound_strings(json& s) {
  if (s.is_array()) {
    for (json& e : s) bound_strings(e);
    return;
  }
  if (!s.is_object()) return;
  const bool is_string = s.contains("type") && s["type"] == "string";
  if (is_string && !s.contains("pattern") && !s.contains("format") && (s.contains("minLength") || s.contains("maxLength"))) {
    const json lo = s.value("minLength", json(0)), hi = s.value("maxLength", json());
    auto count = [](const json& v) { return v.is_number_integer() && v.get<int64_t>() >= 0; };
    if (count(lo) && (hi.is_null() || count(hi))) {
      s["pattern"] = R"(^[^"\\\x00-\x1f]{)" + lo.dump() + "," + (hi.is_null() ? "" : hi.dump()) + "}$";
      s.erase("minLength");  // in the pattern now (XGrammar warns on both)
      s.erase("maxLength");
    }
  }
  for (auto it = s.begin(); it != s.end(); ++it)
    if (it.key() != "enum" && it.key() != "const" && it.key() != "default" && it.key() != "examples") bound_strings(it.value());
}

std::string fixed_schema(const std::string& text) {
  json s = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (s.is_discarded()) return text;  // XGrammar reports it
  bound_strings(s);
  return s.dump();
}

// The json_schema formats inside a structural tag, fixed the same way.
void fix_tag_schemas(json& t) {
  if (t.is_array()) {
    for (json& e : t) fix_tag_schemas(e);
  } else if (t.is_object()) {
    if (t.contains("type") && t["type"] == "json_schema" && t.contains("json_schema")) bound_strings(t["json_schema"]);
    for (auto it = t.begin(); it != t.end(); ++it)
      if (it.key() != "json_schema") fix_tag_schemas(it.value());
  }
}

std::string fixed_tag(const std::string& text) {
  json t = json::parse(text, nullptr, false);
  if (t.is_discarded()) return text;
  fix_tag_schemas(t);
  return t.dump();
}

}  // namespace

struct GrammarCompiler::Impl {
  explicit Impl(const Vocabulary& v)
      : info(v.token_bytes, xgrammar::VocabType::RAW, v.vocab_size, v.stop_ids, /*add_prefix_space=*/false),
        compiler(info, /*max_threads=*/2, /*cache_enabled=*/true) {}
  xgrammar::TokenizerInfo info;
  xgrammar::GrammarCompiler compiler;
  std::mutex mu;  // compiles one at a time (requests compile on their front-end threads)
};

GrammarCompiler::GrammarCompiler(const Vocabulary& vocab) {
  OXYD_CHECK(vocab.vocab_size >= int32_t(vocab.token_bytes.size()), "grammar: vocab_size below the token count");
  impl_ = std::make_unique<Impl>(vocab);
  vocab_size_ = vocab.vocab_size;
}

GrammarCompiler::~GrammarCompiler() = default;

std::shared_ptr<const CompiledGrammar> GrammarCompiler::compile(const GrammarSpec& s) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto& c = impl_->compiler;
  try {
    switch (s.kind) {
      case GrammarSpec::Kind::JSON_SCHEMA:
        // Compact separators as json.dumps writes them; any whitespace would let a weak model
        // spend its whole budget on blanks.
        return std::make_shared<CompiledGrammar>(c.CompileJSONSchema(
            fixed_schema(s.text), /*any_whitespace=*/false, std::nullopt, std::make_pair(std::string(", "), std::string(": ")),
            /*strict_mode=*/s.strict));
      case GrammarSpec::Kind::JSON_OBJECT:
        // OpenAI's json_object: a JSON object (not any JSON value).
        return std::make_shared<CompiledGrammar>(c.CompileJSONSchema(
            R"({"type": "object"})", false, std::nullopt, std::make_pair(std::string(", "), std::string(": ")),
            /*strict_mode=*/false));
      case GrammarSpec::Kind::REGEX: return std::make_shared<CompiledGrammar>(c.CompileRegex(s.text));
      case GrammarSpec::Kind::EBNF: return std::make_shared<CompiledGrammar>(c.CompileGrammar(s.text, "root"));
      case GrammarSpec::Kind::STRUCTURAL_TAG: return std::make_shared<CompiledGrammar>(c.CompileStructuralTag(fixed_tag(s.text)));
      case GrammarSpec::Kind::NONE: break;
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw_error(ErrorCode::INVALID_ARGUMENT, std::string("invalid grammar: ") + e.what());
  }
  throw_error(ErrorCode::INVALID_ARGUMENT, "grammar: no grammar given");
}

struct Matcher::Impl {
  // XGrammar's terminate_without_stop_token ends a grammar as soon as it is complete, also where
  // it could go on (free text, a tool call that may or may not come): a request with no stop id
  // then got one token (issue 25). Here the matcher waits for a stop id, and terminate_when_complete
  // ends it where it is complete and no other token may follow.
  Impl(const xgrammar::CompiledGrammar& g, const std::vector<int32_t>& stop, bool terminate_when_complete)
      : m(g, stop.empty() ? std::nullopt : std::optional<std::vector<int>>(std::vector<int>(stop.begin(), stop.end())),
          /*terminate_without_stop_token=*/false, /*max_rollback_tokens=*/-1),
        vocab_size(g.GetTokenizerInfo().GetVocabSize()),
        words(size_t(xgrammar::GetBitmaskSize(vocab_size))),
        terminate_when_complete(terminate_when_complete),
        stop_ids(stop.empty() ? g.GetTokenizerInfo().GetStopTokenIds() : std::vector<int32_t>(stop.begin(), stop.end())) {}
  // The mask fill_bitmask computed for the current state, reused by apply_mask (a worker fills
  // it during the forward pass, engine_core.cc); any accept or rollback drops it.
  bool mask_ready = false;
  void fill(int32_t* data) {
    int64_t shape[1] = {int64_t(words.size())};
    DLTensor t{};
    t.data = data;
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = 1;
    t.dtype = xgrammar::GetBitmaskDLType();
    t.shape = shape;
    t.strides = nullptr;
    t.byte_offset = 0;
    m.FillNextTokenBitmask(&t, 0);
  }
  // Complete, and nothing but a stop id allowed next.
  bool at_end() {
    if (!m.IsCompleted()) return false;
    fill(words.data());
    for (int32_t id : stop_ids)
      if (id >= 0 && id < vocab_size) words[size_t(id / 32)] &= ~int32_t(uint32_t(1) << (id % 32));
    return std::all_of(words.begin(), words.end(), [](int32_t w) { return w == 0; });
  }
  xgrammar::GrammarMatcher m;
  int32_t vocab_size;
  std::vector<int32_t> words;  // scratch for apply_mask
  bool terminate_when_complete;
  std::vector<int32_t> stop_ids;
  bool ended = false;  // terminate_when_complete and at_end() after the last accept
};

Matcher::Matcher(std::shared_ptr<const CompiledGrammar> g, const std::vector<int32_t>& stop_ids,
                 bool terminate_when_complete)
    : impl_(std::make_unique<Impl>(g->g_, stop_ids, terminate_when_complete)) {}

Matcher::~Matcher() = default;

void Matcher::fill_bitmask(std::span<int32_t> words) {
  OXYD_CHECK(words.size() == impl_->words.size(), "grammar: bitmask size");
  impl_->fill(impl_->words.data());
  std::copy(impl_->words.begin(), impl_->words.end(), words.begin());
  impl_->mask_ready = true;
}

std::span<const int32_t> Matcher::allowed_words() {
  if (!impl_->mask_ready) impl_->fill(impl_->words.data());
  impl_->mask_ready = true;
  return impl_->words;
}

void Matcher::apply_mask(std::span<float> logits) {
  if (!impl_->mask_ready) impl_->fill(impl_->words.data());
  impl_->mask_ready = false;
  const size_t n = std::min(logits.size(), size_t(impl_->vocab_size));
  for (size_t w = 0; w * 32 < n; ++w) {
    const uint32_t bits = uint32_t(impl_->words[w]);
    if (bits == 0xffffffffu) continue;
    const size_t e = std::min(n, w * 32 + 32);
    if (bits == 0) {  // most words of a constrained step: nothing allowed
      std::fill(logits.begin() + long(w * 32), logits.begin() + long(e), -INFINITY);
      continue;
    }
    for (size_t i = w * 32; i < e; ++i)
      if (!((bits >> (i - w * 32)) & 1u)) logits[i] = -INFINITY;
  }
  for (size_t i = n; i < logits.size(); ++i) logits[i] = -INFINITY;  // rows past the grammar's vocabulary
}

bool Matcher::accept(int32_t token) {
  if (token < 0 || token >= impl_->vocab_size) return false;
  impl_->mask_ready = false;
  const bool ok = impl_->m.AcceptToken(token);
  if (ok && impl_->terminate_when_complete && impl_->at_end()) impl_->ended = true;
  return ok;
}
bool Matcher::accept_string(const std::string& text) {
  impl_->mask_ready = false;
  const bool ok = impl_->m.AcceptString(text);
  if (ok && impl_->terminate_when_complete && impl_->at_end()) impl_->ended = true;
  return ok;
}
void Matcher::rollback(int32_t n) {
  impl_->m.Rollback(n);
  impl_->ended = false;
  impl_->mask_ready = false;
}
bool Matcher::is_terminated() const { return impl_->m.IsTerminated() || impl_->ended; }
bool Matcher::is_completed() const { return impl_->m.IsCompleted(); }
int32_t Matcher::vocab_size() const { return impl_->vocab_size; }

}  // namespace oxyd::grammar
