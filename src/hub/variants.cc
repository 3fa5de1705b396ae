#include "hub/variants.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <set>

namespace oxyd::hub {
namespace {

std::string upper(std::string s) {
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}
std::string basename(const std::string& p) {
  auto s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

// Every quant token seen in GGUF repo file names (llama.cpp file types, unsloth's *_XL, TQ, MXFP4).
constexpr std::array<const char*, 44> kQuantTokens = {
    "IQ1_S",  "IQ1_M",  "IQ2_XXS", "IQ2_XS",  "IQ2_S",   "IQ2_M",  "IQ3_XXS", "IQ3_XS", "IQ3_S",
    "IQ3_M",  "IQ4_NL", "IQ4_XS",  "Q2_K_S",  "Q2_K_L",  "Q2_K_XL", "Q2_K",   "Q3_K_S", "Q3_K_M",
    "Q3_K_L", "Q3_K_XL", "Q4_K_S", "Q4_K_M",  "Q4_K_L",  "Q4_K_XL", "Q4_K",   "Q4_0",   "Q4_1",
    "Q5_K_S", "Q5_K_M", "Q5_K_L",  "Q5_K_XL", "Q5_K",    "Q5_0",    "Q5_1",   "Q6_K",   "Q6_K_XL",
    "Q8_0",   "Q8_K_XL", "BF16",   "F16",     "F32",     "MXFP4",   "TQ1_0",  "TQ2_0"};

bool is_sep(char c) { return c == '-' || c == '.' || c == '_'; }

int64_t sum_sizes(const std::vector<RepoFile>& files) {
  int64_t t = 0;
  for (const auto& f : files) t += std::max<int64_t>(0, f.size);
  return t;
}

}  // namespace

std::optional<GgufShard> parse_gguf_shard(const std::string& path) {
  // ...-00001-of-00003.gguf : "-" 5 digits "-of-" 5 digits ".gguf" = 20 characters.
  const std::string l = lower(path);
  if (!ends_with(l, ".gguf") || l.size() < 20) return std::nullopt;
  std::string tail = l.substr(l.size() - 20);
  auto digits = [](const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
  };
  if (tail[0] != '-' || tail.substr(6, 4) != "-of-" || !digits(tail.substr(1, 5)) ||
      !digits(tail.substr(10, 5)))
    return std::nullopt;
  GgufShard s{path.substr(0, path.size() - 20), std::stoi(tail.substr(1, 5)), std::stoi(tail.substr(10, 5))};
  if (s.index < 1 || s.count < 1 || s.index > s.count) return std::nullopt;
  return s;
}

std::string quant_label_from_filename(const std::string& path) {
  std::string name = upper(basename(path));
  if (ends_with(name, ".GGUF")) name.resize(name.size() - 5);
  std::string best;
  size_t best_pos = std::string::npos;
  for (const char* tok : kQuantTokens) {
    std::string t = tok;
    for (size_t pos = name.find(t); pos != std::string::npos; pos = name.find(t, pos + 1)) {
      bool left = pos == 0 || is_sep(name[pos - 1]);
      size_t end = pos + t.size();
      bool right = end == name.size() || is_sep(name[end]);
      if (left && right && (t.size() > best.size() || (t.size() == best.size() && pos < best_pos))) {
        best = t;
        best_pos = pos;
      }
    }
  }
  return best;
}

bool is_model_aux_file(const std::string& path) {
  if (path.find('/') != std::string::npos) return false;  // only top-level files
  static const std::set<std::string> kNames = {
      "config.json",          "generation_config.json", "tokenizer.json",
      "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
      "tokenizer.model",      "vocab.json",             "merges.txt",
      "chat_template.jinja",  "chat_template.json",     "model.safetensors.index.json"};
  return kNames.count(path) || ends_with(lower(path), ".tiktoken");
}

std::vector<Variant> list_variants(const RepoInfo& info) {
  std::vector<Variant> out;

  // safetensors: top-level weight files (never consolidated*.safetensors, Mistral's duplicate).
  Variant st;
  st.label = "safetensors";
  for (const auto& f : info.files) {
    const std::string l = lower(f.path);
    if (f.path.find('/') == std::string::npos && ends_with(l, ".safetensors") &&
        l.rfind("consolidated", 0) != 0) {
      st.files.push_back(f);
      st.weight_bytes += std::max<int64_t>(0, f.size);
    }
  }
  if (!st.files.empty()) {
    std::vector<RepoFile> aux;
    for (const auto& f : info.files)
      if (is_model_aux_file(f.path)) aux.push_back(f);
    if (!info.find("config.json")) st.problem = "config.json missing";
    std::sort(st.files.begin(), st.files.end(), [](auto& a, auto& b) { return a.path < b.path; });
    st.files.insert(st.files.begin(), aux.begin(), aux.end());
    st.total_bytes = sum_sizes(st.files);
    out.push_back(std::move(st));
  }

  // GGUF groups keyed by path without shard suffix.
  std::map<std::string, Variant> groups;
  std::map<std::string, std::set<int>> seen_shards;
  std::map<std::string, int> shard_count;
  for (const auto& f : info.files) {
    const std::string l = lower(f.path);
    if (!ends_with(l, ".gguf") || lower(basename(f.path)).rfind("mmproj", 0) == 0) continue;
    auto shard = parse_gguf_shard(f.path);
    std::string key = shard ? shard->base : f.path.substr(0, f.path.size() - 5);
    Variant& v = groups[key];
    v.is_gguf = true;
    v.stem = basename(key);
    v.files.push_back(f);
    v.weight_bytes += std::max<int64_t>(0, f.size);
    if (shard) {
      seen_shards[key].insert(shard->index);
      if (shard_count.count(key) && shard_count[key] != shard->count)
        v.problem = "shards disagree on their count";
      shard_count[key] = shard->count;
    }
  }
  std::map<std::string, int> label_uses;
  for (auto& [key, v] : groups) {
    std::sort(v.files.begin(), v.files.end(), [](auto& a, auto& b) { return a.path < b.path; });
    if (shard_count.count(key) && v.problem.empty()) {
      int n = shard_count[key];
      for (int i = 1; i <= n; ++i)
        if (!seen_shards[key].count(i)) {
          v.problem = "shard " + std::to_string(i) + " of " + std::to_string(n) + " missing";
          break;
        }
      if (v.problem.empty() && int(v.files.size()) != n) v.problem = "duplicate shards";
    }
    v.label = quant_label_from_filename(v.files.front().path);
    if (v.label.empty()) v.label = v.stem;
    v.total_bytes = sum_sizes(v.files);
    label_uses[upper(v.label)]++;
  }
  std::vector<Variant> ggufs;
  for (auto& [key, v] : groups) {
    if (label_uses[upper(v.label)] > 1) v.label = key;  // two groups of one quant: use their paths
    ggufs.push_back(std::move(v));
  }
  std::stable_sort(ggufs.begin(), ggufs.end(),
                   [](const Variant& a, const Variant& b) { return a.weight_bytes < b.weight_bytes; });
  for (auto& v : ggufs) out.push_back(std::move(v));
  return out;
}

void flag_unsupported_quants(std::vector<Variant>& vs) {
  for (Variant& v : vs) {
    const std::string q = upper(v.label);
    const bool unsupported = q.rfind("IQ1_", 0) == 0 || q.rfind("IQ2_", 0) == 0 || q.rfind("IQ3_", 0) == 0 ||
                             q == "TQ1_0" || q == "TQ2_0";
    if (v.is_gguf && unsupported && v.problem.empty())
      v.problem = v.label + " weights are not supported (no kernels); Q2_K, Q3_K_M or IQ4_XS are the smallest that are";
  }
}

int default_variant(const std::vector<Variant>& vs) {
  auto usable = [&](size_t i) { return vs[i].problem.empty(); };
  static const std::array<const char*, 8> kPreferred = {"Q4_K_M", "Q4_K_S", "Q4_K", "Q4_0",
                                                        "Q4_1",   "IQ4_NL", "IQ4_XS", "Q5_K_M"};
  for (const char* want : kPreferred)
    for (size_t i = 0; i < vs.size(); ++i)
      if (usable(i) && vs[i].is_gguf && upper(vs[i].label) == want) return int(i);
  // Next: the smallest GGUF whose quant is at least 4 bits wide (list is sorted by size).
  static const std::array<const char*, 16> kWider = {"Q4_K_L", "Q4_K_XL", "Q5_K_S", "Q5_K",  "Q5_0",
                                                     "Q5_1",   "Q5_K_L",  "Q5_K_XL", "Q6_K", "Q6_K_XL",
                                                     "Q8_0",   "Q8_K_XL", "BF16",    "F16",  "F32", "MXFP4"};
  for (size_t i = 0; i < vs.size(); ++i)
    if (usable(i) && vs[i].is_gguf &&
        std::find(kWider.begin(), kWider.end(), upper(vs[i].label)) != kWider.end())
      return int(i);
  for (size_t i = 0; i < vs.size(); ++i)
    if (usable(i) && !vs[i].is_gguf) return int(i);
  for (size_t i = 0; i < vs.size(); ++i)
    if (usable(i)) return int(i);
  return -1;
}

int find_variant(const std::vector<Variant>& vs, const std::string& name) {
  const std::string want = upper(name);
  for (size_t i = 0; i < vs.size(); ++i)
    if (upper(vs[i].label) == want) return int(i);
  for (size_t i = 0; i < vs.size(); ++i)
    if (vs[i].is_gguf && upper(vs[i].stem) == want) return int(i);
  return -1;
}

}  // namespace oxyd::hub
