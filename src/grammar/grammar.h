// Constrained decoding: a request's grammar (JSON Schema, any JSON, regex, EBNF/GBNF, XGrammar
// structural tag) compiled against the model's vocabulary into a per-step token mask. A thin
// layer over XGrammar (cmake/xgrammar.cmake); its headers stay inside grammar/*.cc.
// The vocabulary is given as the bytes each token id adds to the text ("" = a special token,
// never allowed inside a grammar), so byte-level BPE, byte-fallback SentencePiece and plain
// vocabularies all reach XGrammar as raw bytes (its VocabType::RAW).
// Not family-aware: the caller passes the stop ids (EOS/EOT) that end a complete grammar.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace oxyd::grammar {

/// What a request constrains its output to.
struct GrammarSpec {
  enum class Kind { NONE, JSON_SCHEMA, JSON_OBJECT, REGEX, EBNF, STRUCTURAL_TAG };
  Kind kind = Kind::NONE;
  /// JSON_SCHEMA: the schema (JSON text); REGEX: the pattern; EBNF: the grammar (GBNF / XGrammar
  /// EBNF, start rule `root`); STRUCTURAL_TAG: XGrammar's structural-tag JSON (the object with
  /// "type": "structural_tag" and "format", see tool_grammar.h); JSON_OBJECT: unused.
  std::string text;
  /// JSON_SCHEMA: true = OpenAI strict (no property beyond `properties` unless the schema allows
  /// it); false = a property the schema does not forbid may appear.
  bool strict = true;
  /// Compile against the vocabulary where special tokens (not the stop ids) are their text: for
  /// grammars that write a format's special markers (a forced tool call's <|channel|>, [TOOL_CALLS]).
  bool special_text = false;
  bool empty() const { return kind == Kind::NONE; }
};

struct Vocabulary {
  std::vector<std::string> token_bytes;  // [num tokens] bytes of each id; "" = special
  std::vector<int32_t> stop_ids;         // ids that end a complete grammar (EOS/EOT)
  int32_t vocab_size = 0;                // logits row size (>= token_bytes.size(); the rest padding)
};

class CompiledGrammar;  // opaque, immutable, shared by every matcher of it

/// Compiles grammars for one vocabulary. Thread-safe; caches compiled grammars by text.
class GrammarCompiler {
 public:
  explicit GrammarCompiler(const Vocabulary& vocab);
  ~GrammarCompiler();
  GrammarCompiler(const GrammarCompiler&) = delete;
  GrammarCompiler& operator=(const GrammarCompiler&) = delete;
  /// Throws Error(INVALID_ARGUMENT) with XGrammar's reason for a schema/regex/grammar it cannot
  /// compile (the server turns it into an OpenAI-shaped 400).
  std::shared_ptr<const CompiledGrammar> compile(const GrammarSpec& spec) const;
  int32_t vocab_size() const { return vocab_size_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int32_t vocab_size_ = 0;
};

/// One request's position in its grammar. Not thread-safe (one per request, on the engine thread).
class Matcher {
 public:
  /// `stop_ids`: the request's ids that end it (empty: the vocabulary's). terminate_when_complete:
  /// the matcher is terminated as soon as the text can go no further (no stop id needed: the
  /// engine ends the request there), else only once a stop id is accepted.
  Matcher(std::shared_ptr<const CompiledGrammar> grammar, const std::vector<int32_t>& stop_ids,
          bool terminate_when_complete = false);
  ~Matcher();
  Matcher(const Matcher&) = delete;
  Matcher& operator=(const Matcher&) = delete;

  /// Sets logits[i] = -inf for every id the grammar does not allow next (padding ids included).
  /// Stop ids are allowed only where the grammar is complete. logits: [vocab_size].
  void apply_mask(std::span<float> logits);
  /// The next-token bitmask: bit i of words[i / 32] set = id i allowed. words: [(vocab_size+31)/32].
  void fill_bitmask(std::span<int32_t> words);
  /// The bitmask apply_mask reads (fill_bitmask's for this state, else computed now), in the same
  /// layout; ids >= vocab_size() are not allowed. Valid until the next accept or rollback.
  std::span<const int32_t> allowed_words();
  /// Advances by one sampled token; false (state unchanged) if the grammar does not allow it.
  bool accept(int32_t token);
  /// Advances by text (tests; jump-forward); false if rejected.
  bool accept_string(const std::string& text);
  /// Undoes the last n accepted tokens (preemption keeps the matcher; speculative decoding would
  /// use this). n <= max rollback (kept unlimited).
  void rollback(int32_t n);
  /// A stop token was accepted, or (terminate_when_complete) nothing may follow: the grammar is over.
  bool is_terminated() const;
  /// The text so far is a complete sentence of the grammar (a stop token may come next).
  bool is_completed() const;
  int32_t vocab_size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace oxyd::grammar
