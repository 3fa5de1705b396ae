// EmbeddingQueue: requests from many threads, batched into packed passes, each get exactly the
// rows Transformer::embed gives their sequences alone (the tiny BERT of tests/data/archs/bert,
// whose own goldens tests/model/embed_test.cc checks against sentence-transformers), and a
// failing pass fails only its requests while the queue keeps serving.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <future>
#include <thread>
#include <vector>

#include "core/error.h"
#include "engine/embedding_queue.h"
#include "model/transformer.h"

namespace oxyd::engine {
namespace {

std::string bert_dir() { return (std::filesystem::path(OXYD_SOURCE_DIR) / "tests/data/archs/bert").string(); }

TEST(EmbeddingQueue, ConcurrentRequestsGetTheirOwnRows) {
  auto m = model::Transformer::load(bert_dir());
  auto ref = model::Transformer::load(bert_dir());  // the oracle runs outside the queue's thread
  EmbeddingQueue q(*m, 64, 100);                      // a small budget: several passes
  const int64_t D = m->embedding_size();
  std::vector<EmbeddingInput> inputs;
  for (int r = 0; r < 12; ++r) {
    EmbeddingInput in;
    for (int s = 0; s <= r % 3; ++s) {
      std::vector<int32_t> ids;
      for (int t = 0; t < 1 + (r * 7 + s * 5) % 30; ++t) ids.push_back(5 + (r * 31 + s * 17 + t * 3) % 300);
      in.ids.push_back(ids);
    }
    inputs.push_back(in);
  }
  std::vector<std::future<std::vector<float>>> futures(inputs.size());
  std::vector<std::thread> clients;
  for (size_t r = 0; r < inputs.size(); ++r) clients.emplace_back([&, r] { futures[r] = q.submit(inputs[r]); });
  for (auto& c : clients) c.join();
  for (size_t r = 0; r < inputs.size(); ++r) {
    const std::vector<float> got = futures[r].get();
    ASSERT_EQ(got.size(), inputs[r].ids.size() * size_t(D));
    for (size_t s = 0; s < inputs[r].ids.size(); ++s) {
      const std::vector<int32_t> starts{0, int32_t(inputs[r].ids[s].size())};
      const std::vector<float> want = ref->embed({inputs[r].ids[s], {}, starts});
      for (int64_t i = 0; i < D; ++i) EXPECT_NEAR(got[s * D + i], want[i], 1e-6) << "request " << r << " seq " << s;
    }
  }
  EXPECT_GE(q.num_steps(), 1);
  EXPECT_LE(q.num_steps(), int64_t(inputs.size()));
}

TEST(EmbeddingQueue, AFailingPassFailsOnlyItsRequests) {
  auto m = model::Transformer::load(bert_dir());
  EmbeddingQueue q(*m, 8192, 100);
  EmbeddingInput bad;
  bad.ids.push_back(std::vector<int32_t>(200, 7));  // past the 64-position table: encode throws
  auto f = q.submit(bad);
  EXPECT_THROW(f.get(), Error);
  EmbeddingInput ok;
  ok.ids.push_back({2, 10, 11, 3});
  EXPECT_EQ(q.submit(ok).get().size(), size_t(m->embedding_size()));
}

// A request still waiting at its deadline, or cancelled (its client left), is never run: its
// future fails saying why, and the requests around it are served.
TEST(EmbeddingQueue, ExpiredAndCancelledRequestsAreDroppedUnrun) {
  auto m = model::Transformer::load(bert_dir());
  EmbeddingQueue q(*m, 8192, 100);
  EmbeddingInput late, gone, ok;
  late.ids.push_back({2, 10, 3});
  late.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  gone.ids.push_back({2, 11, 3});
  gone.cancelled = std::make_shared<std::atomic<bool>>(true);
  ok.ids.push_back({2, 12, 3});
  ok.deadline = std::chrono::steady_clock::now() + std::chrono::hours(1);
  auto fl = q.submit(late), fg = q.submit(gone), fo = q.submit(ok);
  EXPECT_EQ(fo.get().size(), size_t(m->embedding_size()));
  try {
    fl.get();
    ADD_FAILURE() << "an expired request was run";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("deadline"), std::string::npos) << e.message();
  }
  try {
    fg.get();
    ADD_FAILURE() << "a cancelled request was run";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("cancelled"), std::string::npos) << e.message();
  }
  EXPECT_EQ(q.num_dropped(), 2);
}

}  // namespace
}  // namespace oxyd::engine
