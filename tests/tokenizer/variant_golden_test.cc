// Component coverage against the oracle: real vocabularies with other normalizers /
// pre-tokenizers / decoders / post-processors / added-token flags (tests/data/tokenizer/
// variants.json, goldens from Hugging Face tokenizers on the same modified tokenizer.json).
#include "golden_util.h"

namespace oxyd::tokenizer::testing {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

const nlohmann::json& variants() {
  static const nlohmann::json v = nlohmann::json::parse(slurp(data_dir() + "/variants.json"));
  return v;
}

std::vector<std::string> variant_names() {
  std::vector<std::string> out;
  for (auto it = variants().begin(); it != variants().end(); ++it) out.push_back(it.key());
  return out;
}

class VariantGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(VariantGolden, IdsAndTextMatchHuggingFace) {
  const auto& spec = variants()[GetParam()];
  const std::string base = spec["base"].get<std::string>();
  nlohmann::json j = nlohmann::json::parse(slurp(hf_dir(base) + "/tokenizer.json"));
  for (auto it = spec["override"].begin(); it != spec["override"].end(); ++it) j[it.key()] = it.value();
  auto tok = Tokenizer::from_hf_json(j.dump(), "", GetParam() + "/tokenizer.json");
  const auto& texts = corpus();
  std::ifstream f(data_dir() + "/variant_" + GetParam() + ".out.jsonl");
  std::string line;
  size_t n = 0, bad = 0;
  while (std::getline(f, line)) {
    auto g = nlohmann::json::parse(line);
    const std::string& text = texts.at(g["i"].get<size_t>());
    auto p = tok->encode(text, false, false);
    auto fi = tok->encode(text, true, true);
    std::string pt = tok->decode(g["p"].get<std::vector<int32_t>>(), false);
    std::string ft = tok->decode(g["f"].get<std::vector<int32_t>>(), true);
    bool ok = p == g["p"].get<std::vector<int32_t>>() && fi == g["f"].get<std::vector<int32_t>>() &&
              pt == g["pt"].get<std::string>() && ft == g["ft"].get<std::string>();
    if (!ok && ++bad <= 5) {
      ADD_FAILURE() << GetParam() << " corpus line " << g["i"] << " text=" << jdump(text)
                    << "\n plain ours " << show_ids(p) << "\n plain gold " << show_ids(g["p"].get<std::vector<int32_t>>())
                    << "\n full  ours " << show_ids(fi) << "\n full  gold " << show_ids(g["f"].get<std::vector<int32_t>>())
                    << "\n ptext ours " << jdump(pt) << "\n ptext gold " << jdump(g["pt"].get<std::string>())
                    << "\n ftext ours " << jdump(ft) << "\n ftext gold " << jdump(g["ft"].get<std::string>());
    }
    ++n;
  }
  EXPECT_GT(n, 600u);
  EXPECT_EQ(bad, 0u) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Variants, VariantGolden, ::testing::ValuesIn(variant_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace oxyd::tokenizer::testing
