// Block manager: ref counts, LRU free list, chained-hash prefix cache (see block_manager.h).
// A registered block records (tokens, salt, parent serial, parent hash); a lookup accepts it only
// when all match, walking from the first block, so equal hashes of different content never hit.
#include "kv/block_manager.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"

namespace oxyd::kv {

BlockHash xxh3_block_hash(const BlockHash& parent, std::span<const int32_t> tokens, uint64_t extra_key) {
  XXH3_state_t state;
  XXH3_128bits_reset(&state);
  XXH3_128bits_update(&state, &parent, sizeof(parent));
  XXH3_128bits_update(&state, &extra_key, sizeof(extra_key));
  XXH3_128bits_update(&state, tokens.data(), tokens.size_bytes());
  const XXH128_hash_t h = XXH3_128bits_digest(&state);
  return {h.low64, h.high64};
}

BlockManager::BlockManager(BlockManagerConfig config) : config_(std::move(config)) {
  if (config_.num_blocks <= 0 || config_.block_size <= 0 || config_.sliding_window < 0)
    throw_error(ErrorCode::INVALID_ARGUMENT,
                "kv::BlockManager: need num_blocks > 0, block_size > 0, sliding_window >= 0; got " +
                    std::to_string(config_.num_blocks) + ", " + std::to_string(config_.block_size) +
                    ", " + std::to_string(config_.sliding_window));
  if (config_.num_state_snapshots < 0 || (config_.num_state_snapshots > 0 && config_.sliding_window > 0))
    throw_error(ErrorCode::INVALID_ARGUMENT, "kv::BlockManager: state snapshots need num_state_snapshots >= 0 and "
                                             "no sliding window");
  if (!config_.hash_fn) config_.hash_fn = xxh3_block_hash;
  for (int32_t i = config_.num_state_snapshots - 1; i >= 0; --i) free_snaps_.push_back(i);
  snap_pos_.resize(size_t(config_.num_state_snapshots));
  snap_block_.assign(size_t(config_.num_state_snapshots), kNullBlock);
  blocks_.resize(size_t(config_.num_blocks));
  for (int32_t i = 0; i < config_.num_blocks; ++i) {
    blocks_[i].free_pos = free_list_.insert(free_list_.end(), i);
    blocks_[i].in_free = true;
  }
}

BlockHash BlockManager::hash_block(const BlockHash& parent, std::span<const int32_t> tokens,
                                   uint64_t salt) const {
  return config_.hash_fn(parent, tokens, salt);
}

int32_t BlockManager::take_free_block() {
  OXYD_CHECK(!free_list_.empty(), "kv: free list empty");
  const int32_t bid = free_list_.front();
  free_list_.pop_front();
  Block& b = blocks_[bid];
  b.in_free = false;
  if (b.hashed) {
    unhash(bid);
    ++stats_.num_evictions;
  }
  b.ref_cnt = 1;
  return bid;
}

void BlockManager::unhash(int32_t bid) {
  Block& b = blocks_[bid];
  auto& v = cached_[b.hash];
  v.erase(std::find(v.begin(), v.end(), bid));
  if (v.empty()) cached_.erase(b.hash);
  --num_cached_;
  drop_snapshot(bid);
  b.hashed = false;
  b.serial = 0;
  b.tokens.clear();
}

void BlockManager::drop_snapshot(int32_t bid) {
  Block& b = blocks_[bid];
  if (b.snapshot < 0) return;
  snap_lru_.erase(snap_pos_[size_t(b.snapshot)]);
  snap_block_[size_t(b.snapshot)] = kNullBlock;
  free_snaps_.push_back(b.snapshot);
  b.snapshot = -1;
}

int32_t BlockManager::take_state_snapshot(RequestId req, int32_t num_computed_tokens) {
  const int32_t bs = config_.block_size;
  if (!snapshots_at_block_ends() || num_computed_tokens <= 0 || num_computed_tokens % bs) return -1;
  const auto it = reqs_.find(req);
  const int32_t k = num_computed_tokens / bs;
  if (it == reqs_.end() || int32_t(it->second.serials.size()) < k) return -1;  // block k-1 not registered
  const int32_t bid = it->second.block_ids[size_t(k - 1)];
  if (bid == kNullBlock || !blocks_[bid].hashed || blocks_[bid].snapshot >= 0) return -1;
  if (free_snaps_.empty()) {
    drop_snapshot(snap_block_[size_t(snap_lru_.front())]);
    ++stats_.num_state_snapshot_evictions;
  }
  const int32_t id = free_snaps_.back();
  free_snaps_.pop_back();
  blocks_[bid].snapshot = id;
  snap_block_[size_t(id)] = bid;
  snap_pos_[size_t(id)] = snap_lru_.insert(snap_lru_.end(), id);
  ++stats_.num_state_snapshots;
  return id;
}

void BlockManager::touch(int32_t bid) {
  Block& b = blocks_[bid];
  if (b.in_free) {
    free_list_.erase(b.free_pos);
    b.in_free = false;
  }
  ++b.ref_cnt;
}

void BlockManager::release(int32_t bid, bool drop_cached) {
  Block& b = blocks_[bid];
  OXYD_CHECK(b.ref_cnt > 0, "kv: releasing a free block");
  if (--b.ref_cnt > 0) return;
  if (drop_cached && b.hashed) unhash(bid);
  b.free_pos = b.hashed ? free_list_.insert(free_list_.end(), bid) : free_list_.insert(free_list_.begin(), bid);
  b.in_free = true;
}

ComputedBlocks BlockManager::get_computed_blocks(std::span<const int32_t> token_ids, uint64_t salt) {
  ComputedBlocks out;
  ++stats_.num_queries;
  stats_.num_query_tokens += int64_t(token_ids.size());
  if (!config_.enable_prefix_caching || token_ids.empty()) return out;
  const int32_t bs = config_.block_size, W = config_.sliding_window;
  const int32_t max_blocks = int32_t((token_ids.size() - 1) / size_t(bs));
  std::vector<int32_t> match(size_t(max_blocks), kNullBlock);
  std::vector<BlockHash> hashes;
  int32_t best = 0, run = 0;
  for (int32_t i = 0; i < max_blocks; ++i) {
    const auto toks = token_ids.subspan(size_t(i) * bs, size_t(bs));
    const BlockHash parent = i ? hashes[i - 1] : BlockHash{};
    hashes.push_back(hash_block(parent, toks, salt));
    const auto it = cached_.find(hashes[i]);
    int32_t found = kNullBlock;
    // A copy carrying a state snapshot is preferred: the hit may end on it.
    for (size_t c = 0; it != cached_.end() && c < it->second.size(); ++c) {
      const Block& b = blocks_[it->second[c]];
      bool ok = b.salt == salt && std::equal(toks.begin(), toks.end(), b.tokens.begin(), b.tokens.end());
      // The parent's identity: exact (serial) when the parent matched in this walk. In a sliding
      // window, where parents are dropped before children, the 128-bit parent hash is trusted.
      if (ok && i > 0)
        ok = (match[i - 1] != kNullBlock && b.parent_serial == blocks_[match[i - 1]].serial) ||
             (W > 0 && b.parent_hash == parent);
      if (ok && i == 0) ok = b.parent_serial == 0;
      if (ok && found == kNullBlock) found = it->second[c];
      if (ok && (b.snapshot >= 0 || config_.num_state_snapshots == 0)) {
        found = it->second[c];
        break;
      }
    }
    const bool ok = found != kNullBlock;
    match[i] = found;
    run = ok ? run + 1 : 0;
    if (W == 0) {
      if (!ok) break;
      best = i + 1;
    } else {
      const int32_t k = i + 1;  // hit of k blocks: the token at k*bs attends back to k*bs - W + 1
      const int32_t first_needed = std::max(0, k * bs - W + 1) / bs;
      if (run >= k - first_needed) best = k;
    }
  }
  out.num_matched_tokens = best * bs;
  if (config_.num_state_snapshots > 0) {  // the state resumes from a snapshot: end the hit at one
    while (best > 0 && blocks_[match[size_t(best - 1)]].snapshot < 0) --best;
    if (best > 0) {
      out.state_snapshot = blocks_[match[size_t(best - 1)]].snapshot;
      snap_lru_.splice(snap_lru_.end(), snap_lru_, snap_pos_[size_t(out.state_snapshot)]);
    }
  }
  const int32_t first_needed = W ? std::max(0, best * bs - W + 1) / bs : 0;
  for (int32_t i = 0; i < best; ++i) {
    const int32_t bid = i < first_needed ? kNullBlock : match[i];
    out.block_ids.push_back(bid);
    out.serials.push_back(bid == kNullBlock ? 0 : blocks_[bid].serial);
    out.hashes.push_back(hashes[i]);
  }
  out.num_computed_tokens = best * bs;
  stats_.num_hit_tokens += out.num_computed_tokens;
  return out;
}

bool BlockManager::allocate_slots(RequestId req, std::span<const int32_t> token_ids,
                                  int32_t num_computed_tokens, int32_t num_new_tokens,
                                  const ComputedBlocks* computed, uint64_t salt) {
  OXYD_CHECK(num_computed_tokens >= 0 && num_new_tokens >= 0, "kv: negative token count");
  const int32_t bs = config_.block_size;
  auto it = reqs_.find(req);
  const bool is_new = it == reqs_.end();
  if (!is_new) OXYD_CHECK(computed == nullptr, "kv: computed blocks passed for a running request");
  if (computed)
    OXYD_CHECK(computed->num_computed_tokens == num_computed_tokens,
               "kv: num_computed_tokens differs from the prefix-cache hit");
  const int32_t num_required = (num_computed_tokens + num_new_tokens + bs - 1) / bs;
  const int32_t have = is_new ? (computed ? int32_t(computed->block_ids.size()) : 0)
                              : int32_t(it->second.block_ids.size());
  const int32_t num_new_blocks = std::max(0, num_required - have);
  int32_t evictable_hits = 0;  // hit blocks now in the free list are not free for new blocks
  if (computed)
    for (int32_t bid : computed->block_ids)
      if (bid != kNullBlock && blocks_[bid].ref_cnt == 0) ++evictable_hits;
  if (num_new_blocks > num_free_blocks() - evictable_hits) return false;

  if (is_new) {
    it = reqs_.emplace(req, ReqState{}).first;
    it->second.salt = salt;
    if (computed) {
      for (int32_t bid : computed->block_ids)
        if (bid != kNullBlock) touch(bid);
      it->second.block_ids = computed->block_ids;
      it->second.hashes = computed->hashes;
      it->second.serials = computed->serials;
    }
  }
  ReqState& st = it->second;
  for (int32_t i = 0; i < num_new_blocks; ++i) st.block_ids.push_back(take_free_block());
  if (config_.enable_prefix_caching)
    cache_full_blocks(st, token_ids, std::min(num_computed_tokens + num_new_tokens, int32_t(token_ids.size())));
  return true;
}

void BlockManager::cache_full_blocks(ReqState& st, std::span<const int32_t> token_ids, int32_t num_tokens) {
  const int32_t bs = config_.block_size;
  const int32_t num_full = std::min(num_tokens / bs, int32_t(st.block_ids.size()));
  for (int32_t i = int32_t(st.serials.size()); i < num_full && !st.chain_broken; ++i) {
    const auto toks = token_ids.subspan(size_t(i) * bs, size_t(bs));
    const BlockHash parent = i ? st.hashes[i - 1] : BlockHash{};
    if (int32_t(st.hashes.size()) <= i) st.hashes.push_back(hash_block(parent, toks, st.salt));
    const uint64_t parent_serial = i ? st.serials[i - 1] : 0;
    const int32_t bid = st.block_ids[i];
    if ((i && parent_serial == 0) || bid == kNullBlock) {
      st.chain_broken = true;
      break;
    }
    // Identical content already registered (another request computed the same prefix): share its
    // serial, so children registered by either request verify against both copies.
    uint64_t serial = 0;
    if (const auto hit = cached_.find(st.hashes[i]); hit != cached_.end())
      for (int32_t other : hit->second) {
        const Block& o = blocks_[other];
        if (o.salt == st.salt && o.parent_serial == parent_serial &&
            std::equal(toks.begin(), toks.end(), o.tokens.begin(), o.tokens.end())) {
          serial = o.serial;
          break;
        }
      }
    Block& b = blocks_[bid];
    b.hashed = true;
    b.hash = st.hashes[i];
    b.serial = serial ? serial : next_serial_++;
    b.parent_serial = parent_serial;
    b.parent_hash = parent;
    b.salt = st.salt;
    b.tokens.assign(toks.begin(), toks.end());
    cached_[b.hash].push_back(bid);
    ++num_cached_;
    st.serials.push_back(b.serial);
  }
}

void BlockManager::remove_skipped_blocks(RequestId req, int32_t num_computed_tokens) {
  const int32_t W = config_.sliding_window;
  auto it = reqs_.find(req);
  if (W == 0 || it == reqs_.end()) return;
  auto& ids = it->second.block_ids;
  const int32_t first_useful = std::max(0, num_computed_tokens - W + 1) / config_.block_size;
  for (int32_t i = std::min(first_useful, int32_t(ids.size())) - 1; i >= 0; --i) {
    if (ids[i] == kNullBlock) break;  // everything before was dropped on an earlier call
    release(ids[i]);
    ids[i] = kNullBlock;
  }
}

void BlockManager::free(RequestId req, bool drop_cached) {
  auto it = reqs_.find(req);
  if (it == reqs_.end()) return;
  const auto& ids = it->second.block_ids;
  for (auto b = ids.rbegin(); b != ids.rend(); ++b)
    if (*b != kNullBlock) release(*b, drop_cached);
  reqs_.erase(it);
}

std::span<const int32_t> BlockManager::block_ids(RequestId req) const {
  auto it = reqs_.find(req);
  return it == reqs_.end() ? std::span<const int32_t>{} : std::span<const int32_t>(it->second.block_ids);
}

int32_t num_blocks_for_budget(int64_t budget_bytes, int32_t num_layers, int32_t block_size,
                              int32_t num_key_value_heads, int32_t head_dim, double bytes_per_element) {
  const double block_bytes =
      2.0 * num_layers * double(block_size) * num_key_value_heads * head_dim * bytes_per_element;
  if (!(block_bytes > 0)) throw_error(ErrorCode::INVALID_ARGUMENT, "kv: block shape has zero bytes");
  const double n = std::floor(double(budget_bytes) / block_bytes);
  if (n < 1)
    throw_error(ErrorCode::OUT_OF_MEMORY, "KV cache budget of " + std::to_string(budget_bytes) +
                                              " bytes holds no block of " + std::to_string(int64_t(block_bytes)) +
                                              " bytes (" + std::to_string(num_layers) + " layers, block_size " +
                                              std::to_string(block_size) + ")");
  return int32_t(std::min(n, 2147483647.0));
}

void fill_slot_mapping(std::span<const int32_t> block_ids, int32_t block_size, int32_t start_pos,
                       int32_t num_tokens, int32_t* out) {
  OXYD_CHECK(start_pos >= 0 && (start_pos + num_tokens + block_size - 1) / block_size <= int32_t(block_ids.size()),
             "kv: slot_mapping past the request's blocks");
  for (int32_t t = 0; t < num_tokens; ++t) {
    const int32_t pos = start_pos + t;
    const int32_t bid = block_ids[size_t(pos / block_size)];
    OXYD_CHECK(bid != kNullBlock, "kv: slot_mapping into an out-of-window block");
    out[t] = bid * block_size + pos % block_size;
  }
}

void fill_block_table_row(std::span<const int32_t> block_ids, int32_t max_blocks, int32_t* out, int32_t pad) {
  OXYD_CHECK(int32_t(block_ids.size()) <= max_blocks, "kv: block table row wider than max_blocks");
  std::copy(block_ids.begin(), block_ids.end(), out);
  std::fill(out + block_ids.size(), out + max_blocks, pad);
}

}  // namespace oxyd::kv
