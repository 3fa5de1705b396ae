// Prometheus metrics for GET /metrics (text exposition format 0.0.4): request counters and
// latency histograms recorded by the serving code, plus per-model engine gauges sampled at scrape
// time from AsyncEngine::stats(). Names are fixed (tests/e2e check them); every family gets its
// # HELP and # TYPE lines even before it has samples. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "engine/engine_core.h"

namespace oxyd::server {

/// What the scrape reads from one loaded model.
struct ModelGauges {
  std::string model;
  engine::EngineStats stats;
  int64_t weights_bytes = 0;
  int64_t kv_cache_bytes = 0;
  std::string kv_cache_dtype;  // "F32", "F16", "BF16": oxydllm_kv_cache_info's dtype label
};

class Metrics {
 public:
  Metrics();
  /// One finished HTTP request (any endpoint). status = the status it ended with: the HTTP status,
  /// or for a stream that failed after its 200 header the status of its error event; 499 when the
  /// client disconnected before the answer was complete.
  void count_request(const std::string& model, const std::string& endpoint, int status);
  /// One finished generation: its time to first token (< 0: none), decode speed (< 0: none),
  /// and the token counts.
  void observe_generation(const std::string& model, double ttft_s, double tokens_per_s, int64_t prompt_tokens,
                          int64_t completion_tokens);
  std::string render(const std::vector<ModelGauges>& models) const;

  static const std::vector<double>& ttft_buckets_ms();
  static const std::vector<double>& tps_buckets();

 private:
  struct Histogram {
    std::vector<int64_t> counts;  // per bucket, not cumulative; last = +Inf
    double sum = 0;
    int64_t count = 0;
  };
  static void observe(Histogram& h, const std::vector<double>& bounds, double v);
  static void render_histogram(std::string& out, const std::string& name, const std::map<std::string, Histogram>& hs,
                               const std::vector<double>& bounds);

  mutable std::mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, int64_t> requests_;
  std::map<std::string, Histogram> ttft_, tps_;
  std::map<std::string, int64_t> prompt_tokens_, generation_tokens_;
};

/// Prometheus label-value escaping (backslash, double quote, newline).
std::string prometheus_label(const std::string& v);

}  // namespace oxyd::server
