// tokenizer.json path against Hugging Face tokenizers goldens: every corpus string, every
// vocabulary, ids and decoded text must be identical.
#include <chrono>

#include "golden_util.h"

namespace oxyd::tokenizer::testing {
namespace {

class HfGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(HfGolden, IdsAndTextMatchHuggingFace) {
  auto t0 = std::chrono::steady_clock::now();
  const Tokenizer& tok = hf_tokenizer(GetParam());
  auto t1 = std::chrono::steady_clock::now();
  size_t bad = check_against_golden(tok, GetParam());
  auto t2 = std::chrono::steady_clock::now();
  EXPECT_EQ(bad, 0u) << GetParam() << ": strings differing from the oracle";
  std::printf("%s: load %.2fs, check %.2fs\n", GetParam().c_str(),
              std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count());
}

INSTANTIATE_TEST_SUITE_P(Vocabs, HfGolden, ::testing::ValuesIn(all_vocabs()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace oxyd::tokenizer::testing
