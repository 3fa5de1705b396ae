// StepGraphs (see step_graphs.h).
#include "model/step_graphs.h"

namespace oxyd::model {

int64_t padded_table_width(int64_t width) {
  int64_t p = 1;
  while (p < width) p *= 2;
  return p;
}

std::optional<StepGraphKey> decode_step_key(const ForwardBatch& b) {
  const int64_t R = b.num_reqs();
  if (R < 1 || b.num_tokens() != R || static_cast<int64_t>(b.query_start_loc.size()) != R + 1) return std::nullopt;
  for (int64_t r = 0; r < R; ++r)
    if (b.query_start_loc[r + 1] - b.query_start_loc[r] != 1) return std::nullopt;
  return StepGraphKey{b.num_tokens(), R, padded_table_width(b.max_blocks_per_req),
                      static_cast<int64_t>(b.logits_indices.size())};
}

void StepGraphs::clear(std::vector<int64_t>& release) {
  for (auto& [key, e] : entries_) {
    if (e.graph >= 0) release.push_back(e.graph);
    e.graph = -1;
    e.seen = 0;
  }
  held_ = 0;
}

StepGraphs::Plan StepGraphs::plan(const StepGraphKey& key, uint64_t epoch, std::vector<int64_t>& release) {
  if (epoch != epoch_) {  // memory was freed: every graph may name it
    clear(release);
    epoch_ = epoch;
  }
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    // Keys that are never captured stay few (one per batch size and width bucket); bound the
    // bookkeeping all the same.
    if (entries_.size() >= static_cast<size_t>(4 * max_graphs_)) return {};
    it = entries_.emplace(key, Entry{}).first;
  }
  Entry& e = it->second;
  if (e.failed) return {};
  if (e.graph >= 0) {
    ++replays_;
    return {Action::REPLAY, e.graph};
  }
  if (++e.seen > warmup_ && held_ < max_graphs_) return {Action::CAPTURE, -1};
  return {};
}

void StepGraphs::captured(const StepGraphKey& key, int64_t graph) {
  Entry& e = entries_[key];
  if (graph < 0) {
    e.failed = true;
    return;
  }
  e.graph = graph;
  ++held_;
  ++captures_;
}

Tensor run_step_graph(StepGraphs& graphs, backend::Backend& be, const StepGraphKey& key,
                      const std::function<Tensor()>& body, const std::function<Tensor()>& logits) {
  std::vector<int64_t> release;
  const uint64_t epoch = be.graph_memory_epoch();
  const StepGraphs::Plan plan = graphs.plan(key, epoch, release);
  for (int64_t id : release) be.graph_release(id);
  if (plan.action == StepGraphs::Action::REPLAY) {
    be.graph_replay(plan.graph);
    return logits();
  }
  if (plan.action == StepGraphs::Action::EAGER || !be.graph_capture_begin()) {
    if (plan.action == StepGraphs::Action::CAPTURE) graphs.captured(key, -1);
    return body();
  }
  Tensor out;
  bool threw = false;
  try {
    out = body();  // recorded, not run
  } catch (...) {
    threw = true;  // an op the graph cannot hold, or a real error: the eager run below tells
  }
  int64_t id = be.graph_capture_end();
  if (id >= 0 && (threw || be.graph_memory_epoch() != epoch)) {  // memory freed while recording
    be.graph_release(id);
    id = -1;
  }
  graphs.captured(key, id);
  if (id < 0) return body();
  be.graph_replay(id);
  return out;
}

void release_step_graphs(StepGraphs& graphs, backend::Backend& be) {
  std::vector<int64_t> release;
  graphs.clear(release);
  for (int64_t id : release) be.graph_release(id);
}

}  // namespace oxyd::model
