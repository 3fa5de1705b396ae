// Greedy sampling under a grammar reads the row through the matcher's bitmask instead of writing
// a masked copy (sampler.cc argmax_allowed): it must pick what argmax over the masked row picks
// (the lowest id of the largest allowed logit), step after step of a JSON grammar, with ties,
// -inf and NaN logits, over the Qwen3 vocabulary (151,669 ids, not a multiple of 32).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "engine/grammar_vocab.h"
#include "grammar/grammar.h"
#include "sample/sampler.h"
#include "tokenizer/tokenizer.h"

namespace oxyd::grammar {
namespace {

int32_t first_max(const std::vector<float>& x) {  // std::max_element's id, NaN never the max
  int32_t best = 0;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] > x[size_t(best)] || std::isnan(x[size_t(best)])) best = int32_t(i);
  return best;
}

TEST(GreedyMask, BitmaskArgmaxEqualsTheMaskedRows) {
  const std::string dir = std::string(OXYD_TEST_DATA_DIR) + "/tokenizers/qwen3";
  auto tok = tokenizer::Tokenizer::from_hf_files(dir + "/tokenizer.json", dir + "/tokenizer_config.json");
  const Vocabulary v = engine::grammar_vocabulary(*tok, int32_t(tok->vocab_size()));
  GrammarCompiler compiler(v);
  const auto g = compiler.compile({GrammarSpec::Kind::JSON_SCHEMA,
                                   R"({"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}},
                                       "b":{"type":"integer"}},"required":["a","b"]})", false});
  const int32_t vocab = int32_t(v.vocab_size) + 37;  // the model's padded rows, past the grammar's
  std::mt19937 rng(7);
  for (int run = 0; run < 4; ++run) {
    sample::SamplingParams p;
    p.temperature = 0;
    sample::RequestSampler s(p, vocab, {}, 1);
    s.set_grammar(std::make_unique<Matcher>(g, tok->end_of_generation_ids()));
    Matcher oracle(g, tok->end_of_generation_ids());
    for (int step = 0; step < 40 && !oracle.is_terminated(); ++step) {
      std::vector<float> row(static_cast<size_t>(vocab));
      std::uniform_int_distribution<int> level(0, run == 0 ? 3 : 1000);  // run 0: mostly ties
      for (float& x : row) x = float(level(rng));
      for (int k = 0; k < 2000; ++k)
        row[size_t(rng() % uint32_t(vocab))] = k % 2 ? -INFINITY : std::nanf("");
      row[size_t(vocab - 1)] = 5000;  // a padded row beats every real one: never picked
      std::vector<float> masked = row;
      oracle.apply_mask(masked);
      const int32_t want = first_max(masked);
      const int32_t got = s.sample(row).token;
      ASSERT_EQ(got, want) << "run " << run << " step " << step;
      ASSERT_TRUE(oracle.accept(want));
    }
  }
}

}  // namespace
}  // namespace oxyd::grammar
