// Request-level behaviour on a real tiny model: stop strings that span tokens end the text right
// before the match and never leak, seeded sampling gives the same tokens alone and batched, bad
// requests fail with the numbers in the message, an abort mid-generation frees the KV blocks.
#include "core/error.h"
#include "serving_util.h"

namespace oxyd::engine::test {
namespace {

std::unique_ptr<LLMEngine> llama() { return LLMEngine::create("llama", arch_dir("llama"), tiny_options()); }

TEST(StopStrings, SpanningTokensNeverLeak) {
  const Golden g = load_golden("llama");
  auto m = llama();
  const tokenizer::Tokenizer& tok = m->tokenizer();
  for (size_t p = 0; p < g.prompts.size(); ++p) {
    const std::string full = tok.decode(g.greedy[p], /*skip_special=*/true);
    // A stop string from the middle of one token's text into the next ones.
    const std::string head = tok.decode({g.greedy[p].begin(), g.greedy[p].begin() + 10}, true);
    const std::string mid = tok.decode({g.greedy[p].begin() + 10, g.greedy[p].begin() + 13}, true);
    ASSERT_GE(mid.size(), 3u) << "prompt " << p;
    const std::string stop = full.substr(head.size() + 1, mid.size() - 1);
    const std::string expect = full.substr(0, full.find(stop));
    GenerationParams gp = greedy_params(g.prompts[p], 32);
    gp.stop = {"never-in-the-text", stop};
    const Result r = run_one(*m, gp);
    EXPECT_EQ(r.finish, engine::FinishReason::STOP);
    EXPECT_EQ(r.text, expect) << "stop " << stop;
    std::string streamed;
    for (const std::string& c : r.chunks) {
      streamed += c;
      EXPECT_EQ(streamed.find(stop), std::string::npos);
    }
    EXPECT_LE(r.num_completion_tokens, 32);
  }
  EXPECT_EQ(wait_idle(*m).kv_blocks_used, 0);
}

TEST(StopStrings, StopTokenIdEndsWithoutItsText) {
  const Golden g = load_golden("llama");
  auto m = llama();
  GenerationParams gp = greedy_params(g.prompts[0], 32);
  gp.stop_token_ids = {g.greedy[0][5]};
  const Result r = run_one(*m, gp);
  size_t first = 0;
  while (g.greedy[0][first] != g.greedy[0][5]) ++first;
  EXPECT_EQ(r.tokens, std::vector<int32_t>(g.greedy[0].begin(), g.greedy[0].begin() + long(first) + 1));
  EXPECT_EQ(r.finish, engine::FinishReason::STOP);
  const std::string before = m->tokenizer().decode({g.greedy[0].begin(), g.greedy[0].begin() + long(first)}, true);
  EXPECT_EQ(r.text, before);
}

TEST(Sampling, SeededAloneEqualsBatched) {
  const Golden g = load_golden("qwen3");
  auto m = LLMEngine::create("qwen3", arch_dir("qwen3"), tiny_options());
  auto sampled = [&](size_t p, uint64_t seed) {
    GenerationParams gp = greedy_params(g.prompts[p % 3], 24);
    gp.sampling.temperature = 1.0f;
    gp.sampling.top_p = 0.95f;
    gp.sampling.seed = seed;
    return gp;
  };
  const Result a = run_one(*m, sampled(0, 42)), b = run_one(*m, sampled(0, 42));
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_NE(run_one(*m, sampled(0, 43)).tokens, a.tokens);  // 24 draws from a ~flat tiny model
  std::vector<GenerationParams> ps;
  for (size_t i = 0; i < 10; ++i) ps.push_back(i == 4 ? sampled(0, 42) : sampled(i, 100 + i));
  const auto rs = run_batch(*m, ps);
  EXPECT_EQ(rs[4].tokens, a.tokens);
  for (size_t i = 0; i < ps.size(); ++i) EXPECT_EQ(rs[i].tokens, run_one(*m, ps[i]).tokens) << "request " << i;
}

TEST(Errors, PromptTooLongGivesBothNumbers) {
  auto m = llama();
  std::vector<int32_t> prompt(130, 5);
  try {
    Generation gen(*m, greedy_params(prompt, 4), 0);
    FAIL() << "expected INVALID_ARGUMENT";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::INVALID_ARGUMENT);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("128 tokens"), std::string::npos) << msg;
    EXPECT_NE(msg.find("130 tokens"), std::string::npos) << msg;
  }
  prompt.resize(128);  // == context: no room for a single token
  EXPECT_THROW(Generation(*m, greedy_params(prompt, 4), 0), Error);
}

TEST(Errors, BadRequestsThrowInvalidArgument) {
  auto m = llama();
  auto code = [&](GenerationParams p) {
    try {
      Generation gen(*m, std::move(p), 0);
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::INTERNAL;
  };
  EXPECT_EQ(code(greedy_params({}, 4)), ErrorCode::INVALID_ARGUMENT);
  EXPECT_EQ(code(greedy_params({1, 320}, 4)), ErrorCode::INVALID_ARGUMENT);  // vocab 320
  EXPECT_EQ(code(greedy_params({1, -1}, 4)), ErrorCode::INVALID_ARGUMENT);
  EXPECT_EQ(code(greedy_params({1, 2}, 0)), ErrorCode::INVALID_ARGUMENT);
  GenerationParams p = greedy_params({1, 2}, 4);
  p.sampling.top_p = -0.5f;
  EXPECT_EQ(code(p), ErrorCode::INVALID_ARGUMENT);
  EXPECT_EQ(wait_idle(*m).num_running, 0);
}

TEST(Errors, MaxTokensClampedToContext) {
  const Golden g = load_golden("llama");
  auto m = llama();
  Generation a(*m, greedy_params(g.prompts[0], -1), 0);
  EXPECT_EQ(a.max_tokens(), 128 - int32_t(g.prompts[0].size()));
  Generation b(*m, greedy_params(g.prompts[0], 100000), 0);
  EXPECT_EQ(b.max_tokens(), 128 - int32_t(g.prompts[0].size()));
  const Result r = drain(b);
  EXPECT_EQ(r.finish, engine::FinishReason::LENGTH);
  EXPECT_EQ(int32_t(r.tokens.size()), 128 - int32_t(g.prompts[0].size()));
  EXPECT_EQ(std::vector<int32_t>(r.tokens.begin(), r.tokens.begin() + 32), g.greedy[0]);
}

TEST(ChatTemplate, NoneOverrideAndErrors) {
  auto m = llama();  // tiny vocabulary: no template, no turn tokens → no fallback either
  EXPECT_FALSE(m->has_chat_template());
  chat::ChatTemplateInputs in;
  in.messages.push_back({{"role", "user"}, {"content", "hi"}});
  try {
    m->render_chat(in);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::INVALID_ARGUMENT);
    EXPECT_EQ(std::string(e.what()), "model llama has no chat template; pass --chat-template FILE or use /v1/completions");
  }
  ModelOptions o = tiny_options();
  o.chat_template = "{% if messages|length > 1 %}{{ raise_exception('one message only') }}{% endif %}"
                    "{{ bos_token }}[{{ messages[0]['content'] }}]{{ extra }}";
  auto t = LLMEngine::create("llama", arch_dir("llama"), o);
  ASSERT_TRUE(t->has_chat_template());
  in.kwargs["extra"] = "!";
  const int32_t bos_id = t->tokenizer().bos_id();
  const std::string bos = bos_id >= 0 ? t->tokenizer().id_to_token(bos_id) : "";
  EXPECT_EQ(t->render_chat(in), bos + "[hi]!");
  in.messages.push_back({{"role", "assistant"}, {"content", "yo"}});
  try {
    t->render_chat(in);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::INVALID_ARGUMENT);
    EXPECT_EQ(std::string(e.what()), "one message only");
  }
  o.chat_template = "{% for %}";
  EXPECT_THROW(LLMEngine::create("llama", arch_dir("llama"), o), Error);
}

TEST(Abort, MidGenerationFreesBlocks) {
  const Golden g = load_golden("llama");
  auto m = llama();
  // The tiny model can finish all 90 tokens before the abort lands when this thread is
  // descheduled (a loaded machine): retry, and require that some abort lands mid-generation.
  bool aborted_mid = false, saw_blocks_in_use = false;
  for (int attempt = 0; attempt < 20 && !aborted_mid; ++attempt) {
    {
      Generation gen(*m, greedy_params(g.prompts[1], 90), 0);
      GenerationChunk c;
      ASSERT_EQ(gen.next(c), Generation::Next::CHUNK);
      ASSERT_EQ(gen.next(c), Generation::Next::CHUNK);
      saw_blocks_in_use |= m->stats().kv_blocks_used > 0;
      gen.abort();
      Result rest = drain(gen);
      EXPECT_TRUE(rest.finish == engine::FinishReason::ABORT || rest.finish == engine::FinishReason::LENGTH)
          << int(rest.finish);
      aborted_mid = rest.finish == engine::FinishReason::ABORT && rest.tokens.size() + 2 < 90u;
    }
    EXPECT_EQ(wait_idle(*m).kv_blocks_used, 0);
  }
  EXPECT_TRUE(aborted_mid) << "no abort landed before the end of generation in 20 tries";
  EXPECT_TRUE(saw_blocks_in_use);
  {
    Generation dropped(*m, greedy_params(g.prompts[2], 80), 0);  // destroyed unread: aborted
  }
  EXPECT_EQ(wait_idle(*m).kv_blocks_used, 0);
  EXPECT_EQ(run_one(*m, greedy_params(g.prompts[0], 32)).tokens, g.greedy[0]);  // still serving
}

TEST(Generation, TimeoutThenUsage) {
  const Golden g = load_golden("llama");
  auto m = llama();
  Generation gen(*m, greedy_params(g.prompts[0], 32), 0);
  GenerationChunk c;
  (void)gen.next(c, std::chrono::steady_clock::now());  // CHUNK or TIMEOUT, never blocks
  const Result r = drain(gen);
  EXPECT_EQ(gen.num_prompt_tokens(), int32_t(g.prompts[0].size()));
  EXPECT_EQ(gen.num_completion_tokens(), 32);
  EXPECT_GE(gen.time_to_first_token_s(), 0.0);
  EXPECT_EQ(gen.next(c), Generation::Next::END);
  EXPECT_EQ(finish_reason_name(engine::FinishReason::LENGTH), "length");
  EXPECT_EQ(finish_reason_name(engine::FinishReason::ERROR), "error");
}

}  // namespace
}  // namespace oxyd::engine::test
