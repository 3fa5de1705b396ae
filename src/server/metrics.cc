// Metrics (see metrics.h). Histograms are stored per bucket and made cumulative when rendered.
#include "server/metrics.h"

#include <cmath>
#include <cstdio>

namespace oxyd::server {

namespace {

std::string num(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(int64_t(v));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void sample(std::string& out, const char* name, const std::string& labels, double v) {
  out += name;
  if (!labels.empty()) out += "{" + labels + "}";
  out += ' ';
  out += num(v);
  out += '\n';
}

std::string model_label(const std::string& m) { return "model=\"" + prometheus_label(m) + "\""; }

}  // namespace

std::string prometheus_label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

const std::vector<double>& Metrics::ttft_buckets_ms() {
  static const std::vector<double> b = {10, 25, 50, 100, 250, 500, 1000, 2500, 5000};
  return b;
}

const std::vector<double>& Metrics::tps_buckets() {
  static const std::vector<double> b = {1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500};
  return b;
}

Metrics::Metrics() = default;

void Metrics::observe(Histogram& h, const std::vector<double>& bounds, double v) {
  if (h.counts.empty()) h.counts.assign(bounds.size() + 1, 0);
  size_t i = 0;
  while (i < bounds.size() && v > bounds[i]) ++i;
  h.counts[i]++;
  h.sum += v;
  h.count++;
}

void Metrics::count_request(const std::string& model, const std::string& endpoint, int status) {
  std::lock_guard lock(mu_);
  requests_[{model, endpoint, status}]++;
}

void Metrics::observe_generation(const std::string& model, double ttft_s, double tokens_per_s, int64_t prompt_tokens,
                                 int64_t completion_tokens) {
  std::lock_guard lock(mu_);
  if (ttft_s >= 0) observe(ttft_[model], ttft_buckets_ms(), ttft_s * 1000.0);
  if (tokens_per_s >= 0) observe(tps_[model], tps_buckets(), tokens_per_s);
  prompt_tokens_[model] += prompt_tokens;
  generation_tokens_[model] += completion_tokens;
}

void Metrics::render_histogram(std::string& out, const std::string& name, const std::map<std::string, Histogram>& hs,
                               const std::vector<double>& bounds) {
  for (const auto& [model, h] : hs) {
    int64_t cum = 0;
    for (size_t i = 0; i <= bounds.size(); ++i) {
      cum += h.counts[i];
      const std::string le = i < bounds.size() ? num(bounds[i]) : "+Inf";
      sample(out, (name + "_bucket").c_str(), model_label(model) + ",le=\"" + le + "\"", double(cum));
    }
    sample(out, (name + "_sum").c_str(), model_label(model), h.sum);
    sample(out, (name + "_count").c_str(), model_label(model), double(h.count));
  }
}

std::string Metrics::render(const std::vector<ModelGauges>& models) const {
  std::string out;
  std::lock_guard lock(mu_);
  header(out, "oxydllm_requests_total", "counter", "HTTP requests by model, endpoint and the status they ended with: a stream that failed after its 200 header counts with its error event's status, a client that left before the end as 499.");
  for (const auto& [key, n] : requests_) {
    const auto& [model, endpoint, status] = key;
    sample(out, "oxydllm_requests_total",
           model_label(model) + ",endpoint=\"" + prometheus_label(endpoint) + "\",status=\"" + std::to_string(status) + "\"",
           double(n));
  }
  header(out, "oxydllm_ttft_milliseconds", "histogram", "Time from request submission to the first generated token.");
  render_histogram(out, "oxydllm_ttft_milliseconds", ttft_, ttft_buckets_ms());
  header(out, "oxydllm_tokens_per_second", "histogram", "Decode speed of one generation (tokens after the first / time).");
  render_histogram(out, "oxydllm_tokens_per_second", tps_, tps_buckets());
  header(out, "oxydllm_prompt_tokens_total", "counter", "Prompt tokens of finished generations.");
  for (const auto& [m, n] : prompt_tokens_) sample(out, "oxydllm_prompt_tokens_total", model_label(m), double(n));
  header(out, "oxydllm_generation_tokens_total", "counter", "Generated tokens of finished generations.");
  for (const auto& [m, n] : generation_tokens_) sample(out, "oxydllm_generation_tokens_total", model_label(m), double(n));

  struct Gauge {
    const char* name;
    const char* type;
    const char* help;
    double (*get)(const ModelGauges&);
  };
  static const Gauge gauges[] = {
      {"oxydllm_queue_depth", "gauge", "Requests waiting to be scheduled.",
       [](const ModelGauges& g) { return double(g.stats.num_waiting); }},
      {"oxydllm_running_requests", "gauge", "Requests being scheduled (prefill or decode).",
       [](const ModelGauges& g) { return double(g.stats.num_running); }},
      {"oxydllm_kv_blocks_used", "gauge", "KV-cache blocks held by requests.",
       [](const ModelGauges& g) { return double(g.stats.kv_blocks_used); }},
      {"oxydllm_kv_blocks_total", "gauge", "KV-cache blocks in the pool.",
       [](const ModelGauges& g) { return double(g.stats.kv_blocks_total); }},
      {"oxydllm_kv_cache_usage_ratio", "gauge", "kv_blocks_used / kv_blocks_total.",
       [](const ModelGauges& g) {
         return g.stats.kv_blocks_total > 0 ? double(g.stats.kv_blocks_used) / g.stats.kv_blocks_total : 0.0;
       }},
      {"oxydllm_prefix_cache_queries_total", "counter", "Prompt tokens looked up in the prefix cache.",
       [](const ModelGauges& g) { return double(g.stats.prefix_cache.num_query_tokens); }},
      {"oxydllm_prefix_cache_hits_total", "counter", "Prompt tokens served from the prefix cache.",
       [](const ModelGauges& g) { return double(g.stats.prefix_cache.num_hit_tokens); }},
      {"oxydllm_prefix_cache_state_snapshots_total", "counter",
       "Recurrent states (linear-attention models) kept at cached block ends for prefix hits.",
       [](const ModelGauges& g) { return double(g.stats.prefix_cache.num_state_snapshots); }},
      {"oxydllm_preemptions_total", "counter", "Requests set aside when the KV pool ran out (recomputed later).",
       [](const ModelGauges& g) { return double(g.stats.num_preemptions); }},
      {"oxydllm_model_weights_bytes", "gauge", "Bytes of model weights.",
       [](const ModelGauges& g) { return double(g.weights_bytes); }},
      {"oxydllm_kv_cache_allocated_bytes", "gauge", "Bytes allocated for the KV cache.",
       [](const ModelGauges& g) { return double(g.kv_cache_bytes); }},
  };
  for (const Gauge& gauge : gauges) {
    header(out, gauge.name, gauge.type, gauge.help);
    for (const ModelGauges& g : models) sample(out, gauge.name, model_label(g.model), gauge.get(g));
  }
  header(out, "oxydllm_kv_cache_info", "gauge", "The KV cache's element format (always 1).");
  for (const ModelGauges& g : models)
    sample(out, "oxydllm_kv_cache_info", model_label(g.model) + ",dtype=\"" + prometheus_label(g.kv_cache_dtype) + "\"", 1.0);
  return out;
}

}  // namespace oxyd::server
