// ChatSession: history → chat template → Generation → streamed text. See repl_session.h.
#include "cli/repl_session.h"

#include <chrono>
#include <memory>
#include <utility>

#include "chat/chat_template.h"
#include "chat/output_parser.h"
#include "core/error.h"
#include "engine/generation.h"

namespace oxyd::cli {

ChatSession::ChatSession(engine::LLMEngine& model, SessionOptions opts) : model_(model), opts_(std::move(opts)) {
  opts_.sampling.validate(model_.config().vocab_size);
}

std::vector<int32_t> ChatSession::prompt_ids(const std::string& user) const {
  if (opts_.raw) return model_.encode_raw_prompt(user);
  if (!model_.has_chat_template())
    throw_error(ErrorCode::INVALID_ARGUMENT,
                model_.path() + ": no chat template (tokenizer.chat_template / tokenizer_config.json chat_template); "
                                "pass --chat-template FILE or --raw");
  chat::ChatTemplateInputs in;
  if (!opts_.system_prompt.empty()) in.messages.push_back({{"role", "system"}, {"content", opts_.system_prompt}});
  for (const auto& [role, content] : messages_) in.messages.push_back({{"role", role}, {"content", content}});
  in.messages.push_back({{"role", "user"}, {"content", user}});
  in.add_generation_prompt = true;
  return model_.encode_chat_prompt(model_.render_chat(std::move(in)));
}

TurnResult ChatSession::answer(const std::string& user, std::FILE* out, const volatile std::sig_atomic_t* stop) {
  using Clock = std::chrono::steady_clock;
  engine::GenerationParams p;
  p.prompt_ids = prompt_ids(user);
  if (p.prompt_ids.empty()) throw_error(ErrorCode::INVALID_ARGUMENT, "the prompt encodes to no tokens");
  p.sampling = opts_.sampling;
  p.max_tokens = opts_.max_tokens;
  // A harmony model (ModelConfig::harmony_chat): decode its channel markers and show what the
  // server sends as content (the final channel, preambles); reasoning and tool calls are not shown.
  std::unique_ptr<chat::OutputParser> harmony;
  if (model_.config().harmony_chat && !opts_.raw) {
    p.skip_special_tokens = false;
    chat::OutputFormat f;
    f.tools = chat::ToolSyntax::HARMONY;
    harmony = chat::make_output_parser(f, {});
  }
  const auto t0 = Clock::now();
  engine::Generation gen(model_, std::move(p), opts_.seed);

  TurnResult r;
  engine::GenerationChunk chunk;
  bool aborted = false;
  std::string error;
  for (;;) {
    // Short waits so a Ctrl-C (the handler only sets *stop) is noticed within ~50 ms.
    const auto next = gen.next(chunk, Clock::now() + std::chrono::milliseconds(50));
    if (stop != nullptr && *stop != 0 && !aborted) {
      gen.abort();  // the engine frees the request at its next step; the stream then ends with ABORT
      aborted = r.interrupted = true;
    }
    if (next == engine::Generation::Next::END) break;
    if (next == engine::Generation::Next::TIMEOUT) continue;
    std::string text = chunk.text;
    if (harmony) {
      chat::OutputEvents ev = harmony->feed(chunk.text);
      if (chunk.finish_reason != engine::FinishReason::NONE)
        for (chat::OutputEvent& e : harmony->finish()) ev.push_back(std::move(e));
      text.clear();
      for (const chat::OutputEvent& e : ev)
        if (e.kind == chat::OutputEvent::Kind::CONTENT) text += e.text;
    }
    if (!aborted && !text.empty()) {
      std::fwrite(text.data(), 1, text.size(), out);
      std::fflush(out);
      r.text += text;
    }
    if (chunk.finish_reason != engine::FinishReason::NONE) r.finish_reason = engine::finish_reason_name(chunk.finish_reason);
    if (chunk.finish_reason == engine::FinishReason::ERROR) error = chunk.error;
    chunk = {};
  }
  if (!error.empty()) throw_error(ErrorCode::INTERNAL, "the answer failed: " + error);
  if (r.interrupted) r.finish_reason = "abort";
  const double total_s = std::chrono::duration<double>(Clock::now() - t0).count();

  if (!opts_.raw) {
    messages_.emplace_back("user", user);
    messages_.emplace_back("assistant", r.text);
  }
  if (opts_.stats) {
    const double ttft = gen.time_to_first_token_s();
    const int32_t n = gen.num_completion_tokens();
    const double decode_s = ttft >= 0 ? total_s - ttft : 0;
    std::fprintf(stderr,
                 "\n[prompt %d tokens (%d cached) | first token %.3f s | %d tokens in %.3f s (%.1f tok/s decode) | %s]\n",
                 gen.num_prompt_tokens(), gen.num_cached_tokens(), ttft, n, total_s,
                 decode_s > 0 && n > 1 ? (n - 1) / decode_s : 0.0, r.finish_reason.c_str());
  }
  return r;
}

}  // namespace oxyd::cli
