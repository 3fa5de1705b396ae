// A model whose vocab_size exceeds its tokenizer (issue 21 §5.4; padded_model.h): padded ids are
// never sampled unless logit_bias names them, so greedy equals the transformers golden of the
// unpadded model although the raw argmax is a padded id (shown by the logprobs); a named padded
// id can be sampled and decodes to nothing, as Hugging Face decodes such ids.
#include <random>

#include "padded_model.h"
#include "serving_util.h"

namespace oxyd::engine::test {
namespace {

namespace fs = std::filesystem;

class PaddedVocab : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("oxyd_padded_" + std::to_string(getpid()) + "_" + std::to_string(std::rand()));
    oxyd::test::write_padded_qwen2(dir_, OXYD_SOURCE_DIR);
    model_ = LLMEngine::create("padded", dir_.string(), tiny_options()).release();
  }
  static void TearDownTestSuite() {
    delete model_;
    fs::remove_all(dir_);
  }
  static inline fs::path dir_;
  static inline LLMEngine* model_ = nullptr;
};

TEST_F(PaddedVocab, GreedyIsTheGoldenAndNeverAPaddedId) {
  ASSERT_EQ(model_->config().vocab_size, oxyd::test::kPaddedRealVocab + oxyd::test::kPaddedRows);
  ASSERT_EQ(int64_t(model_->tokenizer().vocab_size()), oxyd::test::kPaddedRealVocab);
  const Golden g = load_golden("qwen2");
  for (size_t p = 0; p < g.prompts.size(); ++p) {
    GenerationParams gp = greedy_params(g.prompts[p], int32_t(g.greedy[p].size()));
    gp.sampling.logprobs = 1;
    Generation gen(*model_, gp, 0);
    std::vector<int32_t> tokens;
    int raw_top_padded = 0;
    GenerationChunk c;
    while (gen.next(c) == Generation::Next::CHUNK)
      for (const auto& t : c.tokens) {
        tokens.push_back(t.token);
        ASSERT_FALSE(t.top_logprobs.empty());
        raw_top_padded += t.top_logprobs[0].first >= oxyd::test::kPaddedRealVocab;
      }
    EXPECT_EQ(tokens, g.greedy[p]) << "prompt " << p;
    // Without the mask greedy would have picked these padded ids: the test can fail.
    EXPECT_GT(raw_top_padded, 0) << "prompt " << p;
  }
}

TEST_F(PaddedVocab, SamplingNeverPicksPaddingUnlessNamed) {
  const Golden g = load_golden("qwen2");
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    GenerationParams gp = greedy_params(g.prompts[0], 24);
    gp.sampling.temperature = 1.5f;
    gp.sampling.seed = seed;
    const Result r = run_one(*model_, gp);
    ASSERT_EQ(r.tokens.size(), 24u);
    for (int32_t t : r.tokens) EXPECT_LT(t, oxyd::test::kPaddedRealVocab) << "seed " << seed;
  }
  // Named in logit_bias: the request asked for it. It is sampled and adds no text.
  const int32_t pad = oxyd::test::kPaddedRealVocab + 3;
  GenerationParams gp = greedy_params(g.prompts[0], 4);
  gp.sampling.logit_bias = {{pad, 100.0f}};
  const Result r = run_one(*model_, gp);
  EXPECT_EQ(r.tokens, std::vector<int32_t>(4, pad));
  EXPECT_EQ(r.text, "");
  // Another padded id, not named, stays masked even then.
  gp.sampling.logit_bias = {{pad, -100.0f}};
  for (int32_t t : run_one(*model_, gp).tokens) EXPECT_LT(t, oxyd::test::kPaddedRealVocab);
}

TEST_F(PaddedVocab, PaddedIdsDecodeToNothing) {
  const tokenizer::Tokenizer& tok = model_->tokenizer();
  const Golden g = load_golden("qwen2");
  std::vector<int32_t> with_pad = g.greedy[0];
  with_pad.insert(with_pad.begin() + 3, oxyd::test::kPaddedRealVocab + 5);
  EXPECT_EQ(tok.decode(with_pad, true), tok.decode(g.greedy[0], true));
  EXPECT_EQ(tok.decode({oxyd::test::kPaddedRealVocab + oxyd::test::kPaddedRows - 1}, false), "");
}

}  // namespace
}  // namespace oxyd::engine::test
