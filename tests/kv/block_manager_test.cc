// kv::BlockManager against an independent brute-force model: blocks keyed by their FULL token
// prefix (no hashes, no serials, linear scans), an LRU as a plain vector. Same operations on both,
// then block ids, free counts, hits and evictions must agree; also with forced hash collisions.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "core/error.h"
#include "kv/block_manager.h"

namespace oxyd::kv {
namespace {

struct Model {
  struct B { int ref = 0; bool cached = false; std::vector<int32_t> key; int64_t stamp = 0; };
  int bs, W = 0;
  std::vector<B> blocks;
  std::vector<int32_t> lru;  // front = evicted first
  std::map<RequestId, std::vector<int32_t>> reqs;
  std::map<RequestId, int32_t> num_registered;
  int64_t evictions = 0, hit_tokens = 0, stamp = 0;

  Model(int n, int bs_) : bs(bs_), blocks(size_t(n)) { for (int i = 0; i < n; ++i) lru.push_back(i); }
  static std::vector<int32_t> key_of(std::span<const int32_t> t, int nblk, int bs, uint64_t salt) {
    std::vector<int32_t> k{int32_t(salt)};
    k.insert(k.end(), t.begin(), t.begin() + nblk * bs);
    return k;
  }
  int32_t find(const std::vector<int32_t>& key) {
    int32_t best = -1;
    for (size_t b = 0; b < blocks.size(); ++b)
      if (blocks[b].cached && blocks[b].key == key && (best < 0 || blocks[b].stamp < blocks[best].stamp)) best = int32_t(b);
    return best;
  }
  // Full attention: the longest run of cached blocks from the start. Window W: the largest k such
  // that the blocks holding positions [k*bs - W + 1, k*bs) are cached; earlier ones become -1.
  std::vector<int32_t> lookup(std::span<const int32_t> t, uint64_t salt) {
    const int n = t.empty() ? 0 : int((t.size() - 1) / bs);
    std::vector<int32_t> found;
    for (int i = 0; i < n; ++i) found.push_back(find(key_of(t, i + 1, bs, salt)));
    int best = 0;
    for (int k = 1; k <= n; ++k) {
      const int first = W ? std::max(0, k * bs - W + 1) / bs : 0;
      bool all = true;
      for (int j = first; j < k; ++j) all = all && found[j] >= 0;
      if (all) best = k;
      else if (!W) break;
    }
    std::vector<int32_t> ids;
    const int first = W ? std::max(0, best * bs - W + 1) / bs : 0;
    for (int j = 0; j < best; ++j) ids.push_back(j < first ? -1 : found[j]);
    hit_tokens += int64_t(ids.size()) * bs;
    return ids;
  }
  void remove_skipped(RequestId r, int ncomp) {
    if (!W) return;
    auto& ids = reqs[r];
    for (int i = std::min<int>(std::max(0, ncomp - W + 1) / bs, int(ids.size())) - 1; i >= 0; --i)
      if (ids[i] >= 0) { release(ids[i]); ids[i] = -1; }
  }
  void release(int32_t b) {
    if (--blocks[b].ref == 0) {
      if (blocks[b].cached) lru.push_back(b); else lru.insert(lru.begin(), b);
    }
  }
  bool allocate(RequestId r, std::span<const int32_t> t, int ncomp, int nnew, const std::vector<int32_t>* hit, uint64_t salt) {
    const bool is_new = !reqs.count(r);
    const int have = is_new ? (hit ? int(hit->size()) : 0) : int(reqs[r].size());
    const int need = std::max(0, (ncomp + nnew + bs - 1) / bs - have);
    int evictable = 0;
    if (hit) for (int32_t b : *hit) evictable += b >= 0 && blocks[b].ref == 0;
    if (need > int(lru.size()) - evictable) return false;
    auto& ids = reqs[r];
    if (hit) for (int32_t b : *hit) {
      if (b >= 0 && blocks[b].ref++ == 0) lru.erase(std::find(lru.begin(), lru.end(), b));
      ids.push_back(b);
    }
    for (int i = 0; i < need; ++i) {
      const int32_t b = lru.front();
      lru.erase(lru.begin());
      if (blocks[b].cached) ++evictions;
      blocks[b] = B{1, false, {}, 0};
      ids.push_back(b);
    }
    int& reg = num_registered[r];
    if (is_new && hit) reg = int(hit->size());
    const int full = std::min<int>(std::min<int>(ncomp + nnew, int(t.size())) / bs, int(ids.size()));
    for (; reg < full; ++reg) blocks[ids[reg]] = B{blocks[ids[reg]].ref, true, key_of(t, reg + 1, bs, salt), ++stamp};
    return true;
  }
  void free(RequestId r) {
    auto& ids = reqs[r];
    for (auto it = ids.rbegin(); it != ids.rend(); ++it)
      if (*it >= 0) release(*it);
    reqs.erase(r);
    num_registered.erase(r);
  }
};

BlockManager make(int n, int bs, HashFn fn = {}, int window = 0) {
  BlockManagerConfig c;
  c.num_blocks = n;
  c.block_size = bs;
  c.hash_fn = std::move(fn);
  c.sliding_window = window;
  return BlockManager(c);
}

std::vector<int32_t> seq(int n, int32_t start) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[i] = start + i;
  return v;
}

TEST(BlockManager, AllocateGrowAndFree) {
  auto m = make(8, 4);
  const auto t = seq(10, 100);
  ASSERT_TRUE(m.allocate_slots(1, t, 0, 10));
  EXPECT_EQ(m.block_ids(1).size(), 3u);
  EXPECT_EQ(m.num_free_blocks(), 5);
  EXPECT_EQ(m.num_cached_blocks(), 2);  // two full blocks hashed
  ASSERT_TRUE(m.allocate_slots(1, t, 10, 2));  // fits in the third block
  EXPECT_EQ(m.block_ids(1).size(), 3u);
  std::vector<int32_t> slots(3), table(5);
  fill_slot_mapping(m.block_ids(1), 4, 7, 3, slots.data());
  const auto ids = m.block_ids(1);
  EXPECT_EQ(slots, (std::vector<int32_t>{ids[1] * 4 + 3, ids[2] * 4 + 0, ids[2] * 4 + 1}));
  fill_block_table_row(ids, 5, table.data());
  EXPECT_EQ(table, (std::vector<int32_t>{ids[0], ids[1], ids[2], kNullBlock, kNullBlock}));
  EXPECT_THROW(fill_slot_mapping(ids, 4, 10, 3, slots.data()), Error);
  m.free(1);
  EXPECT_EQ(m.num_free_blocks(), 8);
  EXPECT_EQ(m.num_cached_blocks(), 2);  // still hashed in the LRU
  EXPECT_THROW(make(0, 4), Error);
}

TEST(BlockManager, NumBlocksForBudget) {
  // Qwen3-0.6B-like: 28 layers, 8 KV heads x 128, f16, block 16 → 2*28*16*8*128*2 = 1,835,008 B.
  EXPECT_EQ(num_blocks_for_budget(int64_t(1) << 30, 28, 16, 8, 128, 2.0), 585);
  EXPECT_EQ(num_blocks_for_budget(1835008, 28, 16, 8, 128, 2.0), 1);
  EXPECT_THROW(num_blocks_for_budget(1835007, 28, 16, 8, 128, 2.0), Error);
}

TEST(BlockManager, SharedPrefixRefCountsAndHitAfterFinish) {
  auto m = make(16, 4);
  auto a = seq(12, 0), b = seq(12, 0);
  b[10] = 999;  // same first two blocks, different third
  ASSERT_TRUE(m.allocate_slots(1, a, 0, 12));
  const auto hit = m.get_computed_blocks(b);
  EXPECT_EQ(hit.num_computed_tokens, 8);
  ASSERT_TRUE(m.allocate_slots(2, b, 8, 4, &hit));
  EXPECT_EQ(m.block_ids(2)[0], m.block_ids(1)[0]);
  EXPECT_EQ(m.block_ids(2)[1], m.block_ids(1)[1]);
  EXPECT_NE(m.block_ids(2)[2], m.block_ids(1)[2]);
  EXPECT_EQ(m.ref_count(m.block_ids(1)[0]), 2);
  m.free(1);
  EXPECT_EQ(m.ref_count(m.block_ids(2)[0]), 1);
  m.free(2);
  EXPECT_EQ(m.num_used_blocks(), 0);
  // Full prompt cached, but the last token must be recomputed for its logits: 2 of 3 blocks hit.
  const auto again = m.get_computed_blocks(a);
  EXPECT_EQ(again.num_computed_tokens, 8);
  auto a13 = a;
  a13.push_back(5);
  EXPECT_EQ(m.get_computed_blocks(a13).num_computed_tokens, 12);
  EXPECT_EQ(m.get_computed_blocks(a, /*salt=*/7).num_computed_tokens, 0);
  EXPECT_EQ(m.stats().num_queries, 4);
  EXPECT_EQ(m.stats().num_hit_tokens, 8 + 8 + 12);
}

TEST(BlockManager, LruEvictionOrderAndExhaustion) {
  auto m = make(4, 2);
  const auto a = seq(4, 0), b = seq(4, 50);
  ASSERT_TRUE(m.allocate_slots(1, a, 0, 4));
  ASSERT_TRUE(m.allocate_slots(2, b, 0, 4));
  EXPECT_FALSE(m.allocate_slots(3, seq(2, 90), 0, 2));  // pool full: nothing changes
  EXPECT_FALSE(m.has_request(3));
  const int32_t a0 = m.block_ids(1)[0], a1 = m.block_ids(1)[1], b1 = m.block_ids(2)[1];
  m.free(1);  // LRU: a1, a0
  m.free(2);  // LRU: a1, a0, b1, b0
  ASSERT_TRUE(m.allocate_slots(3, seq(2, 90), 0, 2));
  EXPECT_EQ(m.block_ids(3)[0], a1);  // a's tail evicted first
  EXPECT_EQ(m.stats().num_evictions, 1);
  EXPECT_EQ(m.get_computed_blocks(seq(5, 0)).num_computed_tokens, 2);  // a0 survives
  ASSERT_TRUE(m.allocate_slots(4, seq(4, 70), 0, 4));
  EXPECT_EQ(m.block_ids(4)[0], a0);
  EXPECT_EQ(m.block_ids(4)[1], b1);
  EXPECT_EQ(m.stats().num_evictions, 3);
}

// Recurrent-state models: a hit ends at the last matched block carrying a state snapshot; the
// snapshot pool is an LRU of its own, and a snapshot dies with its block's registration.
TEST(BlockManager, StateSnapshotsBoundHitsAndEvict) {
  BlockManagerConfig c;
  c.num_blocks = 8;
  c.block_size = 4;
  c.num_state_snapshots = 2;
  BlockManager m(c);
  EXPECT_TRUE(m.snapshots_at_block_ends());
  const auto a = seq(13, 0);
  ASSERT_TRUE(m.allocate_slots(1, a, 0, 12));
  EXPECT_EQ(m.get_computed_blocks(a).num_computed_tokens, 0);  // blocks cached, no snapshot: no hit
  EXPECT_EQ(m.take_state_snapshot(1, 6), -1);                  // not a block end
  const int32_t s8 = m.take_state_snapshot(1, 8);
  ASSERT_GE(s8, 0);
  EXPECT_EQ(m.take_state_snapshot(1, 8), -1);  // block 1 has one already
  ComputedBlocks hit = m.get_computed_blocks(a);
  EXPECT_EQ(hit.num_computed_tokens, 8);  // three blocks match, the snapshot is at the second's end
  EXPECT_EQ(hit.state_snapshot, s8);
  const int32_t s12 = m.take_state_snapshot(1, 12);
  ASSERT_GE(s12, 0);
  EXPECT_NE(s12, s8);
  hit = m.get_computed_blocks(a);
  EXPECT_EQ(hit.num_computed_tokens, 12);
  EXPECT_EQ(hit.state_snapshot, s12);
  EXPECT_EQ(m.get_computed_blocks(seq(9, 0)).state_snapshot, s8);  // a shorter prompt: the earlier one
  m.free(1);
  // Pool full (2): a third snapshot evicts the least recently used (s12 was used last by lookup
  // order above: s12, then s8 → s12 is older).
  const auto b = seq(5, 100);
  ASSERT_TRUE(m.allocate_slots(2, b, 0, 4));
  const int32_t sb = m.take_state_snapshot(2, 4);
  EXPECT_EQ(sb, s12);
  EXPECT_EQ(m.stats().num_state_snapshot_evictions, 1);
  EXPECT_EQ(m.get_computed_blocks(a).num_computed_tokens, 8);  // falls back to the snapshot at 8
  EXPECT_EQ(m.num_state_snapshots_held(), 2);
  // A registration dropped (the step failed) takes its snapshot with it.
  m.free(2, /*drop_cached=*/true);
  EXPECT_EQ(m.num_state_snapshots_held(), 1);
  EXPECT_EQ(m.get_computed_blocks(b).num_computed_tokens, 0);
  EXPECT_EQ(m.stats().num_state_snapshots, 3);
}

// Equal hashes for different content never produce a hit: a constant hash, and one that ignores the
// parent (so block [Y] after [X] and after [Z] collide) both give exactly the no-collision answers.
TEST(BlockManager, ForcedCollisionsNeverFalseHit) {
  const HashFn constant = [](const BlockHash&, std::span<const int32_t>, uint64_t) { return BlockHash{1, 2}; };
  const HashFn no_parent = [](const BlockHash&, std::span<const int32_t> t, uint64_t s) {
    return xxh3_block_hash({}, t, s);
  };
  for (const HashFn& fn : {constant, no_parent}) {
    auto m = make(16, 2, fn);
    const std::vector<int32_t> zy{5, 6, 7, 8, 0}, xy{1, 2, 7, 8, 0}, xw{1, 2, 3, 4, 0};
    ASSERT_TRUE(m.allocate_slots(1, zy, 0, 5));
    ASSERT_TRUE(m.allocate_slots(2, xy, 0, 5));
    const auto zy_ids = m.block_ids(1), xy_ids = m.block_ids(2);
    const std::vector<int32_t> zy_want(zy_ids.begin(), zy_ids.begin() + 2), xy_want(xy_ids.begin(), xy_ids.begin() + 2);
    m.free(1);
    m.free(2);
    EXPECT_EQ(m.get_computed_blocks(xy).block_ids, xy_want);  // [7,8] after [1,2], not after [5,6]
    EXPECT_EQ(m.get_computed_blocks(zy).block_ids, zy_want);
    EXPECT_EQ(m.get_computed_blocks(xw).num_computed_tokens, 2);  // [1,2] hits, [3,4] never stored
    EXPECT_EQ(m.get_computed_blocks(std::vector<int32_t>{9, 9, 7, 8, 0}).num_computed_tokens, 0);
  }
}

// Sliding window W=4, block_size 2: a token at position p reads [p-3, p].
TEST(BlockManager, SlidingWindowEarlyFreeAndWindowedHit) {
  auto m = make(8, 2, {}, 4);
  const auto t = seq(11, 0);
  ASSERT_TRUE(m.allocate_slots(1, t, 0, 10));
  EXPECT_EQ(m.num_used_blocks(), 5);
  m.remove_skipped_blocks(1, 10);  // next token 10 reads 7..10 → blocks 0..2 (pos 0..5) unneeded
  EXPECT_EQ(m.num_used_blocks(), 2);
  const auto ids = m.block_ids(1);
  EXPECT_EQ(ids[0], kNullBlock);
  EXPECT_EQ(ids[2], kNullBlock);
  EXPECT_NE(ids[3], kNullBlock);
  ASSERT_TRUE(m.allocate_slots(1, t, 10, 1));
  // Fill the pool: the 3 never-used blocks, then the 3 early-freed (hashed) ones are evicted.
  ASSERT_TRUE(m.allocate_slots(2, seq(10, 500), 0, 10));
  EXPECT_EQ(m.stats().num_evictions, 3);
  m.free(1);
  // Prefix 0..9 (5 blocks) asked by a 11-token prompt: a hit of 5 blocks needs only blocks 3,4
  // (positions 6..9 cover 10-3=7..9), which are still cached although blocks 0..2 are gone.
  const auto hit = m.get_computed_blocks(t);
  EXPECT_EQ(hit.num_computed_tokens, 10);
  EXPECT_EQ(hit.block_ids[2], kNullBlock);
  EXPECT_NE(hit.block_ids[3], kNullBlock);
  ASSERT_TRUE(m.allocate_slots(3, t, 10, 1, &hit));
  EXPECT_EQ(m.block_ids(3).size(), 6u);
  // With full attention the same eviction would leave no hit at all.
  auto f = make(8, 2);
  ASSERT_TRUE(f.allocate_slots(1, t, 0, 11));
  f.free(1);
  ASSERT_TRUE(f.allocate_slots(2, seq(10, 500), 0, 10));  // takes 5 (unhashed), 6, 7, evicts 4, 3
  EXPECT_EQ(f.get_computed_blocks(t).num_computed_tokens, 6);
}

// Many random admissions, decode steps and finishes on a small pool, mirrored on the model.
void random_ops(const HashFn& fn, uint32_t seed, int window = 0) {
  const int N = 24, BS = 4;
  auto m = make(N, BS, fn, window);
  Model ref(N, BS);
  ref.W = window;
  std::mt19937 rng(seed);
  std::vector<std::vector<int32_t>> prefixes;
  for (int p = 0; p < 4; ++p) prefixes.push_back(seq(int(rng() % 14), int32_t(p * 1000)));
  struct R { std::vector<int32_t> toks; int computed; uint64_t salt; };
  std::map<RequestId, R> running;
  RequestId next = 1;
  int windowed_hits = 0;  // hits that skipped out-of-window blocks
  for (int op = 0; op < 3000; ++op) {
    const int kind = int(rng() % 10);
    if (kind < 3) {  // admit
      R r;
      r.toks = prefixes[rng() % prefixes.size()];
      for (int n = int(rng() % 8) + 1; n > 0; --n) r.toks.push_back(int32_t(rng() % 3));
      r.salt = rng() % 5 == 0 ? 1 : 0;
      const auto hit = m.get_computed_blocks(r.toks, r.salt);
      const auto mhit = ref.lookup(r.toks, r.salt);
      ASSERT_EQ(hit.block_ids, mhit) << "op " << op;
      windowed_hits += std::count(mhit.begin(), mhit.end(), -1) > 0;
      r.computed = hit.num_computed_tokens;
      const int chunk = int(r.toks.size()) - r.computed;
      const bool ok = m.allocate_slots(next, r.toks, r.computed, chunk, &hit, r.salt);
      ASSERT_EQ(ok, ref.allocate(next, r.toks, r.computed, chunk, &mhit, r.salt)) << "op " << op;
      if (ok) { r.computed += chunk; running[next] = r; }
      ++next;
    } else if (kind < 8 && !running.empty()) {  // decode one token
      auto it = std::next(running.begin(), long(rng() % running.size()));
      it->second.toks.push_back(int32_t(rng() % 3));
      m.remove_skipped_blocks(it->first, it->second.computed);
      ref.remove_skipped(it->first, it->second.computed);
      const bool ok = m.allocate_slots(it->first, it->second.toks, it->second.computed, 1);
      ASSERT_EQ(ok, ref.allocate(it->first, it->second.toks, it->second.computed, 1, nullptr, it->second.salt));
      if (ok) ++it->second.computed;
      else { m.free(it->first); ref.free(it->first); running.erase(it); }  // preempt
    } else if (!running.empty()) {  // finish
      auto it = std::next(running.begin(), long(rng() % running.size()));
      m.free(it->first);
      ref.free(it->first);
      running.erase(it);
    }
    for (auto& [id, r] : running) {
      const auto ids = m.block_ids(id);
      ASSERT_EQ(std::vector<int32_t>(ids.begin(), ids.end()), ref.reqs[id]) << "op " << op;
    }
    ASSERT_EQ(m.num_free_blocks(), int(ref.lru.size()));
    ASSERT_EQ(m.stats().num_evictions, ref.evictions);
    ASSERT_EQ(m.stats().num_hit_tokens, ref.hit_tokens);
  }
  EXPECT_GT(ref.evictions, 50);
  EXPECT_GT(ref.hit_tokens, 500);
  if (window) {
    EXPECT_GT(windowed_hits, 20);
  }
}

TEST(BlockManager, RandomizedAgainstModel) {
  for (uint32_t s = 1; s <= 4; ++s) random_ops({}, s);
}
TEST(BlockManager, RandomizedAgainstModelSlidingWindow) {
  for (int w : {3, 4, 9}) random_ops({}, 11 + uint32_t(w), w);
}
TEST(BlockManager, RandomizedAgainstModelConstantHash) {
  random_ops([](const BlockHash&, std::span<const int32_t>, uint64_t) { return BlockHash{3, 3}; }, 7);
}
TEST(BlockManager, RandomizedAgainstModelParentlessHash) {
  random_ops([](const BlockHash&, std::span<const int32_t> t, uint64_t) { return xxh3_block_hash({}, t, 0); }, 8);
}

}  // namespace
}  // namespace oxyd::kv
