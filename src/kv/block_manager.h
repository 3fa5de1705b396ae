// Paged-KV block manager (docs/architecture.md §4): a pool of num_blocks block ids with ref counts, an LRU
// free list that keeps freed blocks hashed until they are evicted, and a prefix cache
// `hash → block` over chained block hashes. It holds NO device memory: the runner owns the
// [num_blocks, block_size, ...] K/V tensors and indexes them with the ids handed out here.
// Invariant: a prefix-cache hit returns a block only when its tokens, salt and parent's serial
// equal the query's (checked, never trusted on the hash), so by induction from the first block
// its whole prefix is the query's; a hash collision costs a longer scan, never wrong KV. The one
// exception: with sliding_window > 0 a block whose parent was dropped is accepted on its 128-bit
// (XXH3) parent hash. Hybrid full+sliding models use sliding_window = 0 (per-type block tables:
// not done). Models with a recurrent state (Gated DeltaNet layers): a block may carry a state
// snapshot (the state after its last token, an id into a pool the engine backs with memory); a hit
// must end at a block that carries one. Snapshots have their own LRU and die with their block.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

namespace oxyd::kv {

inline constexpr int32_t kNullBlock = -1;  // block-table entry of a block freed as out-of-window

/// 128-bit chained block hash.
struct BlockHash {
  uint64_t lo = 0, hi = 0;
  bool operator==(const BlockHash&) const = default;
};
struct BlockHashHasher {
  size_t operator()(const BlockHash& h) const { return size_t(h.lo ^ (h.hi * 0x9E3779B97F4A7C15ull)); }
};

/// H(parent_hash, token ids of a full block, extra key). Injectable so tests can force collisions.
using HashFn = std::function<BlockHash(const BlockHash& parent, std::span<const int32_t> tokens,
                                       uint64_t extra_key)>;
/// Default: XXH3-128 over (parent, tokens, extra_key).
BlockHash xxh3_block_hash(const BlockHash& parent, std::span<const int32_t> tokens, uint64_t extra_key);

struct BlockManagerConfig {
  int32_t num_blocks = 0;
  int32_t block_size = 16;
  /// 0 = full attention (also used for hybrid full+sliding models: one block table serves every
  /// layer, so nothing can be dropped early). > 0 = every attention layer is sliding-window with
  /// this window W: blocks entirely before position num_computed_tokens - W + 1 are freed early,
  /// and a prefix hit only needs the last W-1 tokens' blocks to still be cached.
  int32_t sliding_window = 0;
  bool enable_prefix_caching = true;
  /// > 0: the model keeps a recurrent state per request (linear_attention layers); at most this many
  /// state snapshots are kept at block ends (LRU), and a prefix hit ends at a block with one. With
  /// 0 such a model gets no hits (set enable_prefix_caching = false).
  int32_t num_state_snapshots = 0;
  HashFn hash_fn;  // empty → xxh3_block_hash
};

/// Result of a prefix-cache lookup, passed back to allocate_slots on admission.
struct ComputedBlocks {
  std::vector<int32_t> block_ids;  // kNullBlock where the window makes a block unnecessary
  std::vector<uint64_t> serials;   // identity of each matched block (parent-chain check)
  std::vector<BlockHash> hashes;
  int32_t num_computed_tokens = 0;  // = block_ids.size() * block_size
  int32_t state_snapshot = -1;      // with num_state_snapshots > 0: the snapshot at the hit's end
  int32_t num_matched_tokens = 0;   // cached blocks that matched, before ending at a snapshot
};

struct PrefixCacheStats {
  int64_t num_queries = 0;        // admissions looked up
  int64_t num_query_tokens = 0;   // tokens looked up
  int64_t num_hit_tokens = 0;     // tokens served from cache
  int64_t num_evictions = 0;      // hashed blocks whose hash was dropped to reuse the block
  int64_t num_state_snapshots = 0;          // recurrent-state snapshots taken
  int64_t num_state_snapshot_evictions = 0; // dropped by the snapshot LRU (not with their block)
};

using RequestId = int64_t;

/// Not thread-safe: owned by the engine thread.
class BlockManager {
 public:
  explicit BlockManager(BlockManagerConfig config);

  /// Longest cached prefix of `token_ids` in full blocks, leaving at least one token to compute
  /// (its logits are needed). Does not take references; counts one query.
  ComputedBlocks get_computed_blocks(std::span<const int32_t> token_ids, uint64_t cache_salt = 0);

  /// Makes room for tokens [num_computed_tokens, num_computed_tokens + num_new_tokens) of request
  /// `req`. `token_ids` are all tokens known so far (prompt + output); blocks that become full
  /// within it are hashed and registered (the forward of this same step writes their KV before any
  /// later lookup can reuse them). On a request's first call pass its `computed` blocks (may be
  /// null) and salt. Returns false and changes nothing when the pool cannot supply the blocks.
  bool allocate_slots(RequestId req, std::span<const int32_t> token_ids, int32_t num_computed_tokens,
                      int32_t num_new_tokens, const ComputedBlocks* computed = nullptr,
                      uint64_t cache_salt = 0);

  /// Sliding-window only (no-op otherwise): frees the request's blocks that no future token can
  /// attend to, given that tokens [0, num_computed_tokens) are computed. Call before allocate_slots.
  void remove_skipped_blocks(RequestId req, int32_t num_computed_tokens);

  /// Finish/abort/preempt: drop the request's references. Hashed blocks go to the LRU tail (the
  /// request's last block first, so its first block is evicted last); unhashed ones to the head.
  /// drop_cached: the request's forward failed, so blocks registered for it may never have been
  /// written; those no other request holds lose their hash (never served as a prefix hit).
  void free(RequestId req, bool drop_cached = false);

  /// num_state_snapshots > 0: called once the forward computed tokens [0, num_computed_tokens) of
  /// `req`. When that ends at a registered block with no snapshot, attaches one to it (evicting the
  /// least recently used snapshot when the pool is full) and returns its id: the caller copies the
  /// request's state into it now. Otherwise -1.
  int32_t take_state_snapshot(RequestId req, int32_t num_computed_tokens);
  /// Whether schedules should end prefill chunks at block ends (where snapshots are taken).
  bool snapshots_at_block_ends() const { return config_.enable_prefix_caching && config_.num_state_snapshots > 0; }
  int32_t num_state_snapshots() const { return config_.num_state_snapshots; }
  int32_t num_state_snapshots_held() const { return int32_t(snap_lru_.size()); }

  /// The request's block table row (kNullBlock for out-of-window blocks). Empty if unknown.
  std::span<const int32_t> block_ids(RequestId req) const;

  int32_t num_blocks() const { return config_.num_blocks; }
  int32_t block_size() const { return config_.block_size; }
  int32_t sliding_window() const { return config_.sliding_window; }
  int32_t num_free_blocks() const { return int32_t(free_list_.size()); }
  int32_t num_used_blocks() const { return config_.num_blocks - num_free_blocks(); }
  int32_t num_cached_blocks() const { return num_cached_; }
  double usage() const { return config_.num_blocks ? double(num_used_blocks()) / config_.num_blocks : 0; }
  const PrefixCacheStats& stats() const { return stats_; }
  int32_t ref_count(int32_t block_id) const { return blocks_[block_id].ref_cnt; }
  bool has_request(RequestId req) const { return reqs_.count(req) != 0; }

 private:
  struct Block {
    int32_t ref_cnt = 0;
    bool hashed = false;
    BlockHash hash;
    uint64_t serial = 0;  // content identity (same serial ⇔ same full prefix); 0 = not registered
    uint64_t parent_serial = 0;  // serial of the block before it in the chain (0 for the first)
    BlockHash parent_hash;
    uint64_t salt = 0;
    std::vector<int32_t> tokens;  // the block's token ids, checked on every hit
    std::list<int32_t>::iterator free_pos;
    bool in_free = false;
    int32_t snapshot = -1;  // state snapshot id at the block's end (recurrent-state models)
  };
  struct ReqState {
    std::vector<int32_t> block_ids;
    std::vector<BlockHash> hashes;   // chained hashes of the full blocks seen so far
    std::vector<uint64_t> serials;   // per registered block: its serial
    uint64_t salt = 0;
    bool chain_broken = false;       // an out-of-window block stopped registration
  };

  int32_t take_free_block();  // LRU head; evicts its hash
  void touch(int32_t block_id);
  void release(int32_t block_id, bool drop_cached = false);
  void unhash(int32_t block_id);  // drops the block's prefix-cache registration (and snapshot)
  void drop_snapshot(int32_t block_id);
  void cache_full_blocks(ReqState& st, std::span<const int32_t> token_ids, int32_t num_tokens);
  BlockHash hash_block(const BlockHash& parent, std::span<const int32_t> tokens, uint64_t salt) const;

  BlockManagerConfig config_;
  std::vector<Block> blocks_;
  std::list<int32_t> free_list_;  // front = evicted first
  // hash → registered blocks in registration order (several on a collision or a duplicate)
  std::unordered_map<BlockHash, std::vector<int32_t>, BlockHashHasher> cached_;
  int32_t num_cached_ = 0;
  std::unordered_map<RequestId, ReqState> reqs_;
  uint64_t next_serial_ = 1;
  PrefixCacheStats stats_;
  // State snapshots: free ids, and the held ones by last use (front = evicted first) with the
  // block each belongs to.
  std::vector<int32_t> free_snaps_;
  std::list<int32_t> snap_lru_;
  std::vector<std::list<int32_t>::iterator> snap_pos_;
  std::vector<int32_t> snap_block_;
};

/// Blocks that fit `budget_bytes` when every one of `num_layers` layers keeps K and V of
/// [block_size, num_key_value_heads, head_dim] at `bytes_per_element` (2 for f16/bf16). Throws
/// Error(OUT_OF_MEMORY) naming the numbers when not even one block fits.
int32_t num_blocks_for_budget(int64_t budget_bytes, int32_t num_layers, int32_t block_size,
                              int32_t num_key_value_heads, int32_t head_dim, double bytes_per_element);

/// slot_mapping for tokens at positions [start_pos, start_pos + num_tokens): block_id * block_size +
/// pos % block_size. `out` has num_tokens entries.
void fill_slot_mapping(std::span<const int32_t> block_ids, int32_t block_size, int32_t start_pos,
                       int32_t num_tokens, int32_t* out);

/// One block_table row padded with `pad` to max_blocks entries ([max_blocks] in `out`).
void fill_block_table_row(std::span<const int32_t> block_ids, int32_t max_blocks, int32_t* out,
                          int32_t pad = kNullBlock);

}  // namespace oxyd::kv
