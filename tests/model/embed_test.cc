// Encoders and decoder embedders through Transformer::encode / embed against
// tools/gen_tiny_embedders.py's goldens (sentence-transformers in float64 on a right-padded batch):
// BERT (token types), RoBERTa (position offset, CLS pooling), XLM-R, Qwen3-Embedding-style
// decoder (last-token pooling) and a BERT cross-encoder (classification logits). Each golden
// is checked with every sequence in one packed batch and with each sequence alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "loader/sentence_transformers.h"
#include "model/transformer.h"

namespace oxyd::model {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path dir(const std::string& name) { return fs::path(OXYD_SOURCE_DIR) / "tests/data/archs" / name; }

json golden(const std::string& name) {
  std::ifstream f(dir(name) / "goldens.json");
  return json::parse(f);
}

double cosine(const float* a, const std::vector<double>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < b.size(); ++i) ab += a[i] * b[i], aa += double(a[i]) * a[i], bb += b[i] * b[i];
  return ab / std::sqrt(aa * bb);
}

struct Packed {
  std::vector<int32_t> ids, types, starts{0};
  EncodeBatch batch() const { return {ids, types, starts}; }
};

Packed pack(const json& seqs, bool with_types) {
  Packed p;
  for (const json& s : seqs) {
    for (int v : s["ids"]) p.ids.push_back(v);
    if (with_types)
      for (int v : s["types"]) p.types.push_back(v);
    p.starts.push_back(static_cast<int32_t>(p.ids.size()));
  }
  return p;
}

class Embedder : public ::testing::TestWithParam<std::string> {};

TEST_P(Embedder, HiddenStatesAndEmbeddingsMatchSentenceTransformers) {
  const json g = golden(GetParam());
  auto m = Transformer::load(dir(GetParam()).string());
  if (g.contains("label_ids")) m->set_rank_label_ids(g["label_ids"].get<std::vector<int32_t>>());
  const bool with_types = !g["sequences"][0]["types"].is_null();
  const int64_t H = m->config().hidden_size, D = m->embedding_size();
  ASSERT_EQ(m->max_input_tokens(), g["max_len"].get<int64_t>());
  const Packed all = pack(g["sequences"], with_types);
  // Token states of the whole batch (the reranker's golden has none).
  if (!g["sequences"][0]["hidden"].empty()) {
    const Tensor X = m->encode(all.batch());
    double worst = 0;
    int64_t row = 0;
    for (const json& s : g["sequences"]) {
      const std::vector<double> h = s["hidden"];
      for (size_t i = 0; i < h.size(); ++i) worst = std::max(worst, std::fabs(X.ptr<float>()[row * H + i] - h[i]));
      row += static_cast<int64_t>(h.size()) / H;
    }
    EXPECT_LT(worst, 2e-5) << "largest |hidden - oracle|";
    std::printf("%s: largest |hidden - oracle| %.2e\n", GetParam().c_str(), worst);
  }
  const std::vector<float> batched = m->embed(all.batch());
  ASSERT_EQ(batched.size(), g["sequences"].size() * size_t(D));
  for (size_t s = 0; s < g["sequences"].size(); ++s) {
    SCOPED_TRACE("sequence " + std::to_string(s));
    const std::vector<double> want = g["sequences"][s]["embedding"];
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(batched[s * D + i], want[i], 2e-5 * std::max(1.0, std::fabs(want[i])));
    if (D > 1) {
      EXPECT_GT(cosine(&batched[s * D], want), 0.99999);
    }
    // The same sequence alone gives the same vector as in the batch.
    const Packed one = pack(json::array({g["sequences"][s]}), with_types);
    const std::vector<float> single = m->embed(one.batch());
    for (int64_t i = 0; i < D; ++i) EXPECT_NEAR(single[i], batched[s * D + i], 1e-5 * std::max(1.0f, std::fabs(single[i])));
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, Embedder,
                         ::testing::Values("bert", "roberta", "xlmr", "qwen3_embed", "bert_rerank", "roberta_rerank",
                                           "qwen3_rerank"));

// llama.cpp's converter's bert GGUFs (F32, F16) of the tiny BERT against llama.cpp's own
// embeddings (llama-cpp-python) and sentence-transformers' of the same ids
// (tools/gen_tiny_embedders.py --llama-cpp). llama.cpp's vectors are within 2e-7 (1 - cosine) of
// sentence-transformers' on these weights.
TEST(EmbedGguf, BertGgufMatchesLlamaCppAndSentenceTransformers) {
  std::ifstream f(dir("bert") / "gguf_goldens.json");
  const json g = json::parse(f);
  auto hf = Transformer::load(dir("bert").string());
  for (const char* type : {"F32", "F16"}) {
    SCOPED_TRACE(type);
    auto m = Transformer::load((dir("bert") / ("model-" + std::string(type) + ".gguf")).string());
    EXPECT_EQ(m->config().pooling_type, loader::POOLING_MEAN);
    EXPECT_TRUE(m->config().embedding_normalize);
    const int64_t D = m->embedding_size();
    double worst_st = 1, worst_lc = 1;
    for (size_t i = 0; i < g["ids"].size(); ++i) {
      const std::vector<int32_t> ids = g["ids"][i], starts{0, int32_t(ids.size())};
      const std::vector<float> got = m->embed({ids, {}, starts}), ref = hf->embed({ids, {}, starts});
      const std::vector<double> st = g["sentence_transformers"][i], lc = g["llama_cpp"][type][i];
      worst_st = std::min(worst_st, cosine(got.data(), st));
      worst_lc = std::min(worst_lc, cosine(got.data(), lc));
      if (std::string(type) == "F32") {
        for (int64_t k = 0; k < D; ++k) EXPECT_NEAR(got[k], ref[k], 1e-5) << "GGUF vs safetensors, text " << i;
      }
    }
    EXPECT_GT(worst_st, std::string(type) == "F32" ? 0.99999 : 0.9999);
    EXPECT_GT(worst_lc, std::string(type) == "F32" ? 0.99999 : 0.9999);
    std::printf("bert %s GGUF: 1 - min cosine vs sentence-transformers %.2e, vs llama.cpp %.2e\n", type,
                1 - worst_st, 1 - worst_lc);
  }
}

// llama.cpp's converter's GGUFs (F32, F16) of the tiny Qwen3-Embedding (qwen3, pooling_type last),
// RoBERTa (bert, pooling_type CLS, position rows before pad_token_id + 1 dropped) and XLM-R (the
// same, mean pooling, a SentencePiece vocabulary written as "t5") against
// llama.cpp's embeddings of the same ids (llama-cpp-python) and sentence-transformers'.
class EmbedGgufTwin : public ::testing::TestWithParam<std::string> {};

TEST_P(EmbedGgufTwin, MatchesLlamaCppAndSentenceTransformers) {
  std::ifstream f(dir(GetParam()) / "gguf_goldens.json");
  const json g = json::parse(f);
  auto hf = Transformer::load(dir(GetParam()).string());
  for (const char* type : {"F32", "F16"}) {
    SCOPED_TRACE(type);
    auto m = Transformer::load((dir(GetParam()) / ("model-" + std::string(type) + ".gguf")).string());
    EXPECT_EQ(m->config().pooling_type, hf->config().pooling_type);
    EXPECT_EQ(m->is_encoder(), hf->is_encoder());
    EXPECT_EQ(m->max_input_tokens(), hf->max_input_tokens());
    double worst_st = 1, worst_lc = 1, worst_hf = 1;
    for (size_t i = 0; i < g["ids"].size(); ++i) {
      const std::vector<int32_t> ids = g["ids"][i], starts{0, int32_t(ids.size())};
      const std::vector<float> got = m->embed({ids, {}, starts}), ref = hf->embed({ids, {}, starts});
      const std::vector<double> st = g["sentence_transformers"][i], lc = g["llama_cpp"][type][i];
      worst_st = std::min(worst_st, cosine(got.data(), st));
      worst_lc = std::min(worst_lc, cosine(got.data(), lc));
      worst_hf = std::min(worst_hf, cosine(got.data(), std::vector<double>(ref.begin(), ref.end())));
    }
    const double bound = std::string(type) == "F32" ? 0.99999 : 0.9999;
    EXPECT_GT(worst_st, bound);
    EXPECT_GT(worst_lc, bound);
    EXPECT_GT(worst_hf, bound);
    std::printf("%s %s GGUF: 1 - min cosine vs sentence-transformers %.2e, vs llama.cpp %.2e\n", GetParam().c_str(),
                type, 1 - worst_st, 1 - worst_lc);
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, EmbedGgufTwin, ::testing::Values("qwen3_embed", "roberta", "xlmr"));

// llama.cpp's converter's GGUFs (F32, F16) of the tiny Qwen3-Reranker: pooling_type rank, the
// head's [yes, no] rows as cls.output, its "rerank" chat template. Oracles: the model card's code
// in float64 (goldens.json: [no, yes] logits of each prompt-formatted pair) and llama.cpp's output
// on the same ids (gguf_goldens.json: softmax over [yes, no], P(yes) first). Scores are ~1e-5 on
// random weights, so the log-odds log(P(yes) / P(no)) are compared.
TEST(EmbedGguf, Qwen3RerankerMatchesTheModelCardAndLlamaCpp) {
  std::ifstream f(dir("qwen3_rerank") / "gguf_goldens.json");
  const json g = json::parse(f);
  auto hf = Transformer::load(dir("qwen3_rerank").string());
  for (const char* type : {"F32", "F16"}) {
    SCOPED_TRACE(type);
    auto m = Transformer::load((dir("qwen3_rerank") / ("model-" + std::string(type) + ".gguf")).string());
    ASSERT_TRUE(m->can_rank());
    EXPECT_EQ(m->config().pooling_type, loader::POOLING_RANK);
    EXPECT_EQ(m->embedding_size(), 2);
    EXPECT_EQ(m->config().rank_score_label, 0);  // [yes, no]: the first is scored
    EXPECT_TRUE(m->config().rank_label_tokens.empty());
    // The template's prompt, split where the model card splits it (special tokens outside).
    EXPECT_EQ(m->config().rank_prompt.prefix, hf->config().rank_prompt.prefix);
    EXPECT_EQ(m->config().rank_prompt.body, hf->config().rank_prompt.body);
    EXPECT_EQ(m->config().rank_prompt.suffix, hf->config().rank_prompt.suffix);
    double worst_hf = 0, worst_lc = 0;
    for (size_t i = 0; i < g["ids"].size(); ++i) {
      const std::vector<int32_t> ids = g["ids"][i], starts{0, int32_t(ids.size())};
      const std::vector<float> got = m->embed({ids, {}, starts});  // [yes, no] logits
      ASSERT_EQ(got.size(), 2u);
      const double ours = double(got[0]) - got[1];
      const std::vector<double> card = g["transformers_no_yes"][i], lc = g["llama_cpp"][type][i];
      worst_hf = std::max(worst_hf, std::abs(ours - (card[1] - card[0])));
      worst_lc = std::max(worst_lc, std::abs(ours - std::log(lc[0] / lc[1])));
    }
    // llama.cpp's own log-odds are 1.5e-3 (F32) and 2.7e-3 (F16) off the float64 model card.
    const bool f32 = std::string(type) == "F32";
    EXPECT_LT(worst_hf, f32 ? 1e-4 : 1e-2);
    EXPECT_LT(worst_lc, f32 ? 5e-3 : 1e-2);
    std::printf("qwen3_rerank %s GGUF: max |log-odds error| vs the model card %.2e, vs llama.cpp %.2e\n", type,
                worst_hf, worst_lc);
  }
}

// llama.cpp's converter's GGUFs (F32, F16) of the tiny RoBERTa cross-encoder: bert, the head as
// cls / cls.output, and no pooling_type key (llama.cpp needs --reranking): read as a reranker. Its
// logit for each golden pair against transformers' (float64) and llama.cpp's with rank pooling
// asked for (gguf_goldens.json), which is 2e-4 off transformers in F32.
TEST(EmbedGguf, RobertaCrossEncoderIsARerankerMatchingTransformersAndLlamaCpp) {
  std::ifstream f(dir("roberta_rerank") / "gguf_goldens.json");
  const json g = json::parse(f);
  for (const char* type : {"F32", "F16"}) {
    SCOPED_TRACE(type);
    auto m = Transformer::load((dir("roberta_rerank") / ("model-" + std::string(type) + ".gguf")).string());
    ASSERT_TRUE(m->can_rank());
    EXPECT_EQ(m->config().pooling_type, loader::POOLING_RANK);
    EXPECT_EQ(m->embedding_size(), 1);
    EXPECT_EQ(m->config().position_offset, 0);  // the converter dropped the first pad + 1 rows
    double worst_hf = 0, worst_lc = 0;
    for (size_t i = 0; i < g["ids"].size(); ++i) {
      const std::vector<int32_t> ids = g["ids"][i], starts{0, int32_t(ids.size())};
      const std::vector<float> got = m->embed({ids, {}, starts});
      ASSERT_EQ(got.size(), 1u);
      worst_hf = std::max(worst_hf, std::abs(double(got[0]) - g["transformers"][i].get<double>()));
      worst_lc = std::max(worst_lc, std::abs(double(got[0]) - g["llama_cpp"][type][i].get<double>()));
    }
    const bool f32 = std::string(type) == "F32";
    EXPECT_LT(worst_hf, f32 ? 1e-5 : 2e-3);
    EXPECT_LT(worst_lc, f32 ? 1e-3 : 2e-3);
    std::printf("roberta_rerank %s GGUF: max |logit error| vs transformers %.2e, vs llama.cpp %.2e\n", type,
                worst_hf, worst_lc);
  }
}

TEST(EmbedConfig, SentenceTransformersPipelineIsRead) {
  auto bert = Transformer::load(dir("bert").string());
  EXPECT_EQ(bert->config().pooling_type, loader::POOLING_MEAN);
  EXPECT_TRUE(bert->config().embedding_normalize);
  EXPECT_TRUE(bert->is_encoder());
  EXPECT_TRUE(bert->can_embed());
  EXPECT_EQ(bert->config().position_offset, 0);
  auto roberta = Transformer::load(dir("roberta").string());
  EXPECT_EQ(roberta->config().pooling_type, loader::POOLING_CLS);
  EXPECT_FALSE(roberta->config().embedding_normalize);
  EXPECT_EQ(roberta->config().position_offset, 2);  // pad_token_id 1 + 1
  auto qwen = Transformer::load(dir("qwen3_embed").string());
  EXPECT_EQ(qwen->config().pooling_type, loader::POOLING_LAST);
  EXPECT_FALSE(qwen->is_encoder());
  EXPECT_EQ(qwen->config().embedding_prompts.at("query"), "Instruct: Given a query, retrieve passages\nQuery:");
  auto rerank = Transformer::load(dir("bert_rerank").string());
  EXPECT_TRUE(rerank->can_rank());
  EXPECT_EQ(rerank->embedding_size(), 1);
  // A Qwen3ForCausalLM whose README says Qwen3-Reranker: scored on its "no" / "yes" logits.
  auto qr = Transformer::load(dir("qwen3_rerank").string());
  EXPECT_TRUE(qr->can_rank());
  EXPECT_EQ(qr->config().pooling_type, loader::POOLING_RANK);
  EXPECT_EQ(qr->config().rank_label_tokens, (std::vector<std::string>{"no", "yes"}));
  EXPECT_EQ(qr->embedding_size(), 2);
  const std::vector<int32_t> ids{5, 6}, starts{0, 2};
  EXPECT_THROW(qr->embed({ids, {}, starts}), Error);  // label ids not resolved yet
  EXPECT_FALSE(Transformer::load(dir("qwen3").string())->can_rank());  // no README: a generator
}

TEST(EmbedErrors, TooLongEmptyAndGenerateAreRejected) {
  auto m = Transformer::load(dir("bert").string());
  std::vector<int32_t> ids(static_cast<size_t>(m->max_input_tokens() + 1), 7), starts{0, int32_t(ids.size())};
  try {
    m->embed({ids, {}, starts});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("more than this model's 64"), std::string::npos) << e.what();
  }
  std::vector<int32_t> two{7, 8}, bad_starts{0, 0, 2}, types{0, 5}, ok_starts{0, 2};
  EXPECT_THROW(m->embed({two, {}, bad_starts}), Error);
  EXPECT_THROW(m->embed({two, types, ok_starts}), Error);  // type 5 outside the 2-row table
  KvCache cache = m->make_kv_cache(1, 16);
  std::vector<int32_t> pos{0}, qsl{0, 1}, lens{1}, table{0}, slots{0}, logits{0};
  ForwardBatch fb{std::span<const int32_t>(two).first(1), pos, qsl, lens, table, 1, slots, logits, {}, {}};
  try {
    m->forward(fb, cache);
    FAIL() << "expected UNSUPPORTED";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::UNSUPPORTED);
  }
}

}  // namespace
}  // namespace oxyd::model
