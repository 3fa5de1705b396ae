// ChatSession: the conversation behind `oxydllm run` (one-shot and interactive). It keeps the
// messages (system prompt, user and assistant turns), re-renders the whole conversation through
// the model's chat template on every turn (the engine's prefix cache makes the repeated prefix
// cheap) and streams the answer through engine::Generation. It does no terminal I/O besides
// writing the answer text to `out` and --stats lines to stderr; repl.cc owns the terminal.
#pragma once

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/llm_engine.h"
#include "sample/sampler.h"

namespace oxyd::cli {

struct SessionOptions {
  bool raw = false;             // each prompt is a raw completion (BOS added), no template, no history
  bool stats = false;           // timings per answer on stderr
  int32_t max_tokens = -1;      // -1: up to the context
  sample::SamplingParams sampling;
  uint64_t seed = 0;
  std::string system_prompt;    // empty: none
};

/// What one answer did (for --stats and the tests' expectations).
struct TurnResult {
  std::string text;             // the answer as printed
  bool interrupted = false;     // stopped by *stop (Ctrl-C)
  std::string finish_reason;    // "stop" | "length" | "abort"
};

class ChatSession {
 public:
  ChatSession(engine::LLMEngine& model, SessionOptions opts);

  /// Answers `user`: renders the conversation plus this message, streams the answer to `out`
  /// (flushed per chunk) and appends both to the history (an interrupted answer is kept as far as
  /// it went). Polls `stop` (a signal handler's flag, may be null) and aborts the generation when
  /// it becomes non-zero. Throws oxyd::Error for a prompt that cannot be served (no template,
  /// context exceeded); the history is then left as it was.
  TurnResult answer(const std::string& user, std::FILE* out, const volatile std::sig_atomic_t* stop);

  void clear() { messages_.clear(); }
  void set_system_prompt(std::string s) { opts_.system_prompt = std::move(s); }
  const std::string& system_prompt() const { return opts_.system_prompt; }
  size_t num_turns() const { return messages_.size() / 2; }

 private:
  std::vector<int32_t> prompt_ids(const std::string& user) const;

  engine::LLMEngine& model_;
  SessionOptions opts_;
  std::vector<std::pair<std::string, std::string>> messages_;  // (role, content), user/assistant pairs
};

}  // namespace oxyd::cli
