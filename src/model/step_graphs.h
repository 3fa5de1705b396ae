// StepGraphs: when a forward pass is captured as one backend graph and replayed (backend.h
// graph_*: CUDA graphs, where a decode step's hundreds of small kernels otherwise cost more to
// launch than to run). Only decode steps qualify (every request one new token): their kernels
// depend on the shape alone (tokens, requests, block-table width, logits rows), and their data
// (token ids, positions, block tables, slot mappings) sit in the step's upload buffer, which is
// rewritten before each replay. The block table is padded to a power-of-two width
// (padded_table_width) so that a growing context changes the key only at each doubling.
// A key is captured on its (warmup + 1)-th step, the earlier ones running eagerly so that every
// workspace has reached the step's size first, and replayed from then on. A failed capture is not
// tried again (a step whose ops read the device back, as the default MoE expert loop does, fails
// its capture and runs eagerly); at most max_graphs are held. A free of device memory (the backend's
// graph_memory_epoch moved) drops every graph, since they may name the freed memory.
// Pure bookkeeping: Transformer::forward makes the backend calls (tests/model/step_graphs_test.cc).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include <functional>

#include "backend/backend.h"
#include "core/tensor.h"
#include "model/forward_batch.h"

namespace oxyd::model {

struct StepGraphKey {
  int64_t tokens = 0, reqs = 0, table_width = 0, logits = 0;
  auto tie() const { return std::tie(tokens, reqs, table_width, logits); }
  bool operator<(const StepGraphKey& o) const { return tie() < o.tie(); }
  bool operator==(const StepGraphKey& o) const { return tie() == o.tie(); }
};

/// The block-table width of a graph step: the smallest power of two ≥ width (1 for 0).
int64_t padded_table_width(int64_t width);

/// The key of a step that may run as a graph: a decode step (num_reqs ≥ 1, every request exactly
/// one token); nullopt otherwise.
std::optional<StepGraphKey> decode_step_key(const ForwardBatch& b);

class StepGraphs {
 public:
  enum class Action { EAGER, CAPTURE, REPLAY };
  struct Plan {
    Action action = Action::EAGER;
    int64_t graph = -1;  // REPLAY: the graph to run
  };

  explicit StepGraphs(int max_graphs = 64, int warmup = 1) : max_graphs_(max_graphs), warmup_(warmup) {}

  /// What to do for a step with `key` when the backend's memory epoch is `epoch`. Graphs held from
  /// another epoch are forgotten first, their ids appended to `release` for the caller to release.
  Plan plan(const StepGraphKey& key, uint64_t epoch, std::vector<int64_t>& release);
  /// The outcome of a CAPTURE plan: the graph's id, or -1 (that key then always runs eagerly).
  void captured(const StepGraphKey& key, int64_t graph);
  /// Forgets every graph, appending their ids to `release`.
  void clear(std::vector<int64_t>& release);

  int64_t held() const { return held_; }
  int64_t replays() const { return replays_; }
  int64_t captures() const { return captures_; }

 private:
  struct Entry {
    int64_t graph = -1;
    int seen = 0;
    bool failed = false;
  };
  std::map<StepGraphKey, Entry> entries_;
  uint64_t epoch_ = 0;
  int max_graphs_, warmup_;
  int64_t held_ = 0, replays_ = 0, captures_ = 0;
};

/// Runs a step with `key` on backend `be` as `graphs` plans it: `body` (the step's device work,
/// returning its logits) eagerly; or captured, then the graph replayed (a capture that fails, by
/// an exception or the backend's refusal, runs body again eagerly); or the held graph replayed
/// without calling body, returning `logits()` (the logits tensor body would return).
Tensor run_step_graph(StepGraphs& graphs, backend::Backend& be, const StepGraphKey& key,
                      const std::function<Tensor()>& body, const std::function<Tensor()>& logits);

/// Releases every graph `graphs` holds on `be`.
void release_step_graphs(StepGraphs& graphs, backend::Backend& be);

}  // namespace oxyd::model
