#include "hub/report.h"

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string_view>

#include "core/error.h"
#include "core/kv_format.h"
#include "hub/progress.h"
#include "hub/variants.h"
#include "loader/sentence_transformers.h"
#include "model/model_config.h"

namespace fs = std::filesystem;

namespace oxyd::hub {
namespace {

std::string pad(const std::string& s, size_t w) {
  // Width in characters, counting UTF-8 sequences once.
  size_t chars = 0;
  for (unsigned char c : s) chars += (c & 0xC0) != 0x80;
  return chars >= w ? s : s + std::string(w - chars, ' ');
}

std::string rpad(const std::string& s, size_t w) { return s.size() >= w ? s : std::string(w - s.size(), ' ') + s; }

std::string moe_note(const loader::ModelConfig& c) {
  if (c.num_experts <= 0) return "";
  return "; all " + std::to_string(c.num_experts) + " experts counted (" + std::to_string(c.num_experts_per_tok) +
         " active per token)";
}

}  // namespace

int64_t active_weight_bytes(const ModelMeta& meta) {
  const loader::ModelConfig& c = meta.config;
  if (c.num_experts <= 0 || meta.expert_weight_bytes <= 0 || c.num_experts_per_tok <= 0) return 0;
  const int64_t unused = meta.expert_weight_bytes / c.num_experts * (c.num_experts - c.num_experts_per_tok);
  return meta.weight_bytes - unused;
}

namespace {
// "safetensors", or "safetensors (awq, repacked at load to Q4_1)" for a quantized checkpoint.
std::string safetensors_format(const ModelMeta& meta) {
  return meta.quantization.empty() ? std::string("safetensors") : "safetensors (" + meta.quantization + ")";
}
}  // namespace

int64_t resident_weight_bytes(const ModelMeta& meta, const EstimateParams& p) {
  const int64_t w = meta.weight_bytes + meta.vector_f32_extra_bytes;
  if (!p.packed_extra || meta.gguf_tensors.empty()) return w;
  return w + p.packed_extra(meta.config, meta.gguf_tensors);
}

std::string format_count(int64_t n) {
  char b[32];
  if (n >= 1000000000) std::snprintf(b, sizeof b, "%.2f B", double(n) / 1e9);
  else if (n >= 1000000) std::snprintf(b, sizeof b, "%.1f M", double(n) / 1e6);
  else if (n >= 1000) std::snprintf(b, sizeof b, "%.1f K", double(n) / 1e3);
  else std::snprintf(b, sizeof b, "%lld", static_cast<long long>(n));
  return b;
}

LocalModel local_model_for_path(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (fs::is_regular_file(p, ec)) {
    fs::path dir = p.parent_path();
    for (auto& m : scan_model_dir(dir.string(), dir.filename().string(), ModelSource::STORE))
      for (const auto& w : m.weight_files)
        if (fs::path(w) == p) return m;
    throw_error(ErrorCode::INVALID_ARGUMENT, path + " is not a complete GGUF model (or a shard of one) or a safetensors model file");
  }
  if (fs::is_directory(p, ec)) {
    auto ms = scan_model_dir(p.string(), p.filename().string(), ModelSource::STORE);
    if (ms.size() == 1) return ms[0];
    if (ms.empty()) throw_error(ErrorCode::NOT_FOUND, path + " holds no complete model");
    std::string names;
    for (const auto& m : ms) names += "\n  " + m.weight_files.front();
    throw_error(ErrorCode::INVALID_ARGUMENT, path + " holds " + std::to_string(ms.size()) + " models; name a file:" + names);
  }
  throw_error(ErrorCode::NOT_FOUND, path + " does not exist");
}

namespace {
int64_t kv_per_token(const ModelMeta& meta, EstimateParams p, KvFormat f) {
  p.kv_format = f;
  return estimate_memory(meta.config, 0, p).kv_bytes_per_token;
}
}  // namespace

std::string render_local_estimate(const LocalModel& m, const ModelMeta& meta, const EstimateParams& flags) {
  const EstimateParams p = with_server_pool(meta.config, flags);
  MemoryEstimate e = estimate_memory(meta.config, resident_weight_bytes(meta, p), p, meta.tensor_types);
  std::ostringstream o;
  o << "  Model     " << m.id << "\n";
  o << "  File      " << m.weight_files.front() << (m.weight_files.size() > 1 ? " (+" + std::to_string(m.weight_files.size() - 1) + " more)" : "") << "\n";
  o << "  Arch      " << (meta.config.gguf_arch.empty() ? meta.config.model_type : meta.config.gguf_arch) << "\n";
  o << "  Format    " << (m.format == ModelFormat::GGUF ? meta.quantization : safetensors_format(meta)) << "\n\n";
  auto line = [&](const std::string& name, int64_t bytes, const std::string& note) {
    o << "  " << pad(name, 10) << rpad(format_bytes(bytes), 10) << "   " << note << "\n";
  };
  auto paren = [](const std::string& s) {
    std::string r = "(";
    r += s;
    r += ")";
    return r;
  };
  line("Weights", e.weight_bytes, paren(std::to_string(meta.num_tensors) + " tensors" + moe_note(meta.config)));
  if (const int64_t active = active_weight_bytes(meta); active > 0)
    line("Per token", active, "(weights one decode token reads: " + std::to_string(meta.config.num_experts_per_tok) +
                                  " of " + std::to_string(meta.config.num_experts) + " experts" +
                                  (meta.config.shared_expert_intermediate_size > 0 ? " + the shared expert" : "") +
                                  "; decode speed follows this, not the total)");
  line("KV cache", e.kv_bytes, paren(describe_kv(e, p)));
  if (p.kv_pool_tokens > 0)
    o << "  " << pad("", 10) << rpad(std::to_string(e.kv_bytes), 10) << "   (bytes: what `oxydllm start` with these "
      << "flags allocates)\n";
  {  // what one token costs in each cache format (issue 29): the unit a quantized cache divides
    std::string per = "(bytes of K+V per token over all layers: F16 " + std::to_string(kv_per_token(meta, p, KvFormat::F16));
    for (KvFormat f : kKvQuantModes)
      per += ", " + kv_quant_flag(f) + " " + std::string(kv_format_name(f)) + " " + std::to_string(kv_per_token(meta, p, f));
    o << "  " << pad("KV/token", 10) << rpad(std::to_string(e.kv_bytes_per_token) + " B", 10) << "   " << per << ")\n";
  }
  if (e.state_bytes) line("State", e.state_bytes, "(Gated DeltaNet recurrent + conv, f32: per sequence + prefix-cache snapshots)");
  line("Runtime", e.runtime_bytes,
       "(f32 activations of a " + std::to_string(std::min(p.max_batch_tokens, p.context_len * p.num_sequences)) +
           "-token step, logits, matmul scratch)");
  o << "  " << pad("", 10) << "──────────\n";
  line("Total", e.total(), "");
  if (!p.server_kv && meta.config.max_position_embeddings > 0 && p.context_len > meta.config.max_position_embeddings)
    o << "\n  note: --context-len " << p.context_len << " is beyond the model's trained context of "
      << meta.config.max_position_embeddings << " tokens\n";
  return o.str();
}

std::string remote_estimate(HubClient& hub, const RemoteEstimateOptions& opt) {
  RepoInfo info = hub.model_info(opt.repo, opt.revision);
  const std::string rev = info.sha.empty() ? (opt.revision.empty() ? "main" : opt.revision) : info.sha;
  std::vector<Variant> vs = list_variants(info);
  flag_unsupported_quants(vs);
  if (vs.empty()) throw_error(ErrorCode::NOT_FOUND, opt.repo + " has no GGUF or safetensors weights");
  int rec = default_variant(vs);
  if (!opt.variant.empty()) {
    int i = find_variant(vs, opt.variant);
    if (i < 0) throw_error(ErrorCode::NOT_FOUND, "variant '" + opt.variant + "' is not in " + opt.repo);
    vs = {vs[size_t(i)]};
    rec = rec >= 0 && vs[0].label == list_variants(info)[size_t(rec)].label ? 0 : -1;
  }
  const int64_t before = hub.bytes_received();
  std::ostringstream rows;
  std::string kv_line, arch;
  char buf[256];
  std::snprintf(buf, sizeof buf, "    %s%10s  %10s  %10s  %10s  %10s\n", pad("Variant", 22).c_str(), "Weights", "KV cache",
                "State", "Runtime", "Total");
  rows << buf;
  for (size_t i = 0; i < vs.size(); ++i) {
    const Variant& v = vs[i];
    const std::string star = int(i) == rec ? "★ " : "  ";
    if (!v.problem.empty()) {
      rows << "  " << star << pad(v.label, 22) << "unusable: " << v.problem << "\n";
      continue;
    }
    try {
      ModelMeta meta = read_remote_meta(hub, info, rev, v);
      const EstimateParams p = with_server_pool(meta.config, opt.params);
      MemoryEstimate e = estimate_memory(meta.config, resident_weight_bytes(meta, p), p, meta.tensor_types);
      if (kv_line.empty()) kv_line = describe_kv(e, p);
      if (arch.empty()) arch = meta.config.gguf_arch.empty() ? meta.config.model_type : meta.config.gguf_arch;
      std::snprintf(buf, sizeof buf, "%10s  %10s  %10s  %10s  %10s\n", format_bytes(e.weight_bytes).c_str(),
                    format_bytes(e.kv_bytes).c_str(), format_bytes(e.state_bytes).c_str(),
                    format_bytes(e.runtime_bytes).c_str(), format_bytes(e.total()).c_str());
      rows << "  " << star << pad(v.label, 22) << buf;
    } catch (const Error& err) {
      rows << "  " << star << pad(v.label, 22) << "cannot estimate: " << err.what() << "\n";
    }
  }
  std::ostringstream o;
  o << "  " << opt.repo << " @ " << rev.substr(0, 12) << (arch.empty() ? "" : "  (" + arch + ")") << "\n\n";
  o << rows.str() << "\n";
  o << "  ★ recommended | KV: " << (kv_line.empty() ? kv_format_name(opt.params) : kv_line) << "\n";
  o << "  read " << format_bytes(hub.bytes_received() - before) << " of headers and config (no weights)\n";
  return o.str();
}

std::string render_show(const LocalModel& m, const ModelMeta& meta) {
  const loader::ModelConfig& c = meta.config;
  std::ostringstream o;
  auto row = [&](const std::string& k, const std::string& v) { o << "  " << pad(k, 14) << v << "\n"; };
  row("Id", m.id);
  row("Architecture", (c.gguf_arch.empty() ? c.model_type : c.gguf_arch) + " (" + c.architecture + ", family " + c.family + ")");
  row("Parameters", format_count(meta.num_params));
  {
    const std::string task = model::model_task(c);
    std::string serves = task == "generate" ? "generate (chat and completions)"
                         : task == "embed"  ? "embed (/v1/embeddings)"
                                            : "rank (/v1/rerank)";
    if (task == "embed" && c.pooling_type >= 0)
      serves += std::string(", ") + loader::pooling_name(c.pooling_type) + " pooling" +
                (c.embedding_normalize ? ", L2-normalised" : "");
    row("Task", serves);
  }
  row("Context", std::to_string(c.max_position_embeddings));
  std::string geo = std::to_string(c.num_hidden_layers) + " layers, hidden " + std::to_string(c.hidden_size) + ", " +
                    std::to_string(c.num_attention_heads) + " q heads, " + std::to_string(c.num_key_value_heads) +
                    " kv heads, head_dim " + std::to_string(c.head_dim);
  if (c.global_head_dim > 0) geo += " (full layers " + std::to_string(c.global_head_dim) + ")";
  if (c.intermediate_size > 0) geo += ", intermediate " + std::to_string(c.intermediate_size);
  row("Geometry", geo);
  int64_t full = 0, sliding = 0, linear = 0;
  for (const auto& t : c.layer_types) {
    full += t == loader::kFullAttention;
    sliding += t == loader::kSlidingAttention;
    linear += t == loader::kLinearAttention;
  }
  std::string att = std::to_string(full) + " full";
  if (sliding) att += " + " + std::to_string(sliding) + " sliding (window " + std::to_string(c.sliding_window.value_or(0)) + ")";
  if (linear) att += " + " + std::to_string(linear) + " linear (Gated DeltaNet)";
  row("Attention", att);
  if (std::string_view(model::model_task(c)) == "generate") {  // what a token of context costs per cache format (issue 29)
    const EstimateParams p;
    std::string kv = std::to_string(kv_per_token(meta, p, p.kv_format)) + " B/token " +
                     std::string(kv_format_name(p.kv_format)) + " (default)";
    for (KvFormat f : kKvQuantModes)
      kv += ", " + kv_quant_flag(f) + " " + std::string(kv_format_name(f)) + " " + std::to_string(kv_per_token(meta, p, f));
    row("KV cache", kv);
  }
  if (c.num_experts > 0)
    row("MoE", std::to_string(c.num_experts) + " experts, " + std::to_string(c.num_experts_per_tok) +
                   " active, expert width " + std::to_string(c.moe_intermediate_size) +
                   (c.shared_expert_intermediate_size > 0
                        ? ", shared expert width " + std::to_string(c.shared_expert_intermediate_size)
                        : ""));
  std::string types;
  for (const auto& [t, n] : meta.tensor_types) types += (types.empty() ? "" : ", ") + t + " ×" + std::to_string(n);
  row("Quantization", (m.format == ModelFormat::GGUF ? meta.quantization : safetensors_format(meta)) + " (" + types + ")");
  row("Vocabulary", std::to_string(c.vocab_size));
  if (!c.unsupported_inputs.empty()) {
    std::string what;
    for (const auto& s : c.unsupported_inputs)
      what += "; " + s + " not supported (the " + (s == "images" ? "vision" : s) + " tower is not loaded)";
    row("Inputs", "text only" + what);
  }
  row("Tokenizer", meta.tokenizer_kind);
  row("Chat template", meta.has_chat_template ? "yes (" + meta.chat_template_source + ")" : "no");
  row("Location", source_name(m.source) + ": " + m.dir);
  for (size_t i = 0; i < m.weight_files.size() + m.aux_files.size(); ++i) {
    const std::string& f = i < m.weight_files.size() ? m.weight_files[i] : m.aux_files[i - m.weight_files.size()];
    std::error_code ec;
    row(i == 0 ? "Files" : "", fs::path(f).filename().string() + "  " + format_bytes(int64_t(fs::file_size(f, ec))));
  }
  return o.str();
}

}  // namespace oxyd::hub
