// Text reports for `estimate` and `show`: the estimate of a local model (one column), of a remote
// repo (one row per variant, ★ on the recommended one, no invented accuracy column), and the
// `show` summary. Binary units, labelled (GiB = 2^30 bytes).
#pragma once

#include <string>

#include "hub/estimate.h"
#include "hub/hub_api.h"
#include "hub/model_meta.h"
#include "hub/store.h"

namespace oxyd::hub {

/// The local model a filesystem path names: a .gguf file (any shard of a split set) or a model
/// directory holding exactly one model. Throws Error(NOT_FOUND / INVALID_ARGUMENT) otherwise.
LocalModel local_model_for_path(const std::string& path);

/// The weights' bytes in memory: meta.weight_bytes plus p.packed_extra's figure for a GGUF.
int64_t resident_weight_bytes(const ModelMeta& meta, const EstimateParams& p);
/// Mixture of experts: the weight bytes one decode token reads (every tensor but the unselected
/// experts: expert bytes × (E − k) / E off the total); 0 for a dense model or unknown expert bytes.
int64_t active_weight_bytes(const ModelMeta& meta);

std::string render_local_estimate(const LocalModel& m, const ModelMeta& meta, const EstimateParams& p);

struct RemoteEstimateOptions {
  std::string repo, revision, variant;  // variant "" = every variant
  EstimateParams params;
};
/// Lists the repo, reads each variant's metadata (GGUF headers by Range requests) and renders the
/// table. Variants whose metadata cannot be read get a row saying why.
std::string remote_estimate(HubClient& hub, const RemoteEstimateOptions& o);

std::string render_show(const LocalModel& m, const ModelMeta& meta);

/// "4.02 B", "270 M".
std::string format_count(int64_t n);

}  // namespace oxyd::hub
