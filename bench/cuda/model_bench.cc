// model_bench: a whole model on the GPU through the real serving path (issue 27's device
// benchmark): model::Transformer::load on the device, runner::ModelRunner with its paged KV cache,
// and engine::EngineCore's scheduler, batching and greedy sampling, one step() at a time. Measures
//   - the device-to-device copy bandwidth (read + write bytes / s), the roofline of decode;
//   - batch-1 decode tok/s after a prompt, and the share of that bandwidth it uses: bytes a decode
//     step reads (every weight but token_embd, of which one row unless the LM head is tied, plus
//     the KV cache at the mean context) × tok/s;
//   - prefill tok/s of one prompt of --prefill tokens (one step; the second of two runs);
//   - aggregate decode tok/s with --conc requests at once (the engine batches them into one step):
//     tokens / time of the steps in which every request, its first token already out, gets one.
// The model is a shaped random GGUF (shaped_model.h) written first into --dir and deleted at the
// end (--keep keeps it), or --model PATH. Prints the figures, then SUMMARY lines with issue 27's
// targets (batch-1 decode >= 80% of the roofline for the 8B shape; concurrency 64 >= 10x
// concurrency 1) marked met / missed. --device cpu runs the same harness on the CPU backend (a
// check of the harness, e.g. the tiny shape in ctest; its "copy bandwidth" is one thread's memcpy).
// Usage: cuda_model_bench --shape llama-1b|qwen3-8b|tiny --type F16|Q4_K [--device cuda|cpu]
//        [--model PATH] [--dir DIR] [--keep] [--prompt 128] [--decode 128] [--prefill 2048]
//        [--conc 1,16,64] [--gen 64] [--threads N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cuda/backend.h"
#include "backend/cuda/device.h"
#include "core/error.h"
#include "core/splitmix64.h"
#include "core/thread_pool.h"
#include "engine/engine_core.h"
#include "loader/gguf.h"
#include "model/transformer.h"
#include "runner/model_runner.h"
#include "shaped_model.h"

namespace {

using namespace oxyd;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Options {
  std::string shape, type, model, dir = "shaped-models";
  bool cuda = true, keep = false;
  int64_t prompt = 128, decode = 128, prefill = 2048, gen = 64;
  std::vector<int64_t> conc = {1, 16, 64};
  int threads = 0;
};

// Copy bandwidth in bytes per second, read and written bytes both counted (as bench/cuda/ops_bench).
double copy_bandwidth(bool cuda) {
  const int reps = 10;
  if (cuda) {
    using namespace backend::cuda;
    const size_t bytes = size_t(1) << 30;  // 1 GiB: far past any L2
    Stream s;
    DeviceBuffer a(bytes), b(bytes);
    memset_async(a.data(), 1, bytes, s);
    copy_device_to_device_async(b.data(), a.data(), bytes, s);
    Event e0, e1;
    e0.record(s);
    for (int i = 0; i < reps; ++i) copy_device_to_device_async(b.data(), a.data(), bytes, s);
    e1.record(s);
    e1.synchronize();
    return 2.0 * double(bytes) * reps / (double(e1.elapsed_ms(e0)) * 1e-3);
  }
  const size_t bytes = size_t(1) << 26;
  std::vector<char> a(bytes, 1), b(bytes, 0);
  std::memcpy(b.data(), a.data(), bytes);
  const double t = now_s();
  for (int i = 0; i < reps; ++i) {
    a[size_t(i)] = char(i);
    std::memcpy(b.data(), a.data(), bytes);
  }
  const double dt = now_s() - t;
  volatile char sink = b[bytes - 1];
  (void)sink;
  return 2.0 * double(bytes) * reps / dt;
}

// Weight bytes one decode step reads: every tensor, but only one row of token_embd when a separate
// output.weight is the LM head (a tied head reads the whole table).
int64_t decode_weight_bytes(const std::string& path) {
  const loader::GgufFile f = loader::GgufFile::open(path);
  const bool has_output = f.find_tensor("output.weight") != nullptr;
  int64_t total = 0;
  for (const loader::GgufTensorInfo& t : f.tensors())
    total += t.name == "token_embd.weight" && has_output ? int64_t(t.nbytes) / t.ne[1] : int64_t(t.nbytes);
  return total;
}

// The model's config as the loader read it must be the shape that was written.
void check_shape(const loader::ModelConfig& c, const bench::ModelShape& s) {
  const bool ok = c.num_hidden_layers == s.layers && c.hidden_size == s.hidden && c.num_attention_heads == s.heads &&
                  c.num_key_value_heads == s.kv_heads && c.head_dim == s.head_dim && c.intermediate_size == s.ffn &&
                  c.vocab_size == s.vocab && c.tie_word_embeddings == s.tied;
  if (!ok)
    throw_error(ErrorCode::INTERNAL, std::string("the loaded model's config is not the ") + s.name + " shape (layers " +
                                         std::to_string(c.num_hidden_layers) + ", hidden " + std::to_string(c.hidden_size) +
                                         ", vocab " + std::to_string(c.vocab_size) + ")");
}

// One batch of requests through EngineCore, stepped to the end.
struct RunResult {
  double first_step_s = 0;   // the step that prefilled (the whole prompt when it fits one step)
  double decode_s = 0;       // decode steps of the whole batch (see run)
  int64_t decode_tokens = 0, decode_steps = 0;
  double decode_tps() const {
    if (decode_steps == 0) throw_error(ErrorCode::INVALID_ARGUMENT, "no decode step of the whole batch: raise --gen");
    return double(decode_tokens) / decode_s;
  }
};

class Harness {
 public:
  Harness(model::Transformer& m, int64_t num_blocks, int32_t max_seqs, int32_t max_tokens_per_step)
      : runner_(m, num_blocks, kBlock, kDefaultKvFormat), core_(sched_config(max_seqs, max_tokens_per_step),
                                                                kv_config(num_blocks), runner_) {
    m.reserve_workspace(max_tokens_per_step, max_seqs);
  }
  static constexpr int32_t kBlock = 16;

  // n requests of `prompt` random ids each, `gen` greedy tokens each (no stop id: all of them).
  RunResult run(int64_t n, int64_t prompt, int64_t gen) {
    std::map<int64_t, int64_t> got;
    for (int64_t i = 0; i < n; ++i) {
      engine::EngineRequest r;
      r.request_id = next_id_++;
      for (int64_t j = 0; j < prompt; ++j)
        r.prompt_token_ids.push_back(int32_t(splitmix64_next(rng_) % uint64_t(runner_.vocab_size())));
      r.sampling.temperature = 0;
      r.max_tokens = int32_t(gen);
      if (!core_.add_request(r, 1)) throw_error(ErrorCode::INTERNAL, "engine queue full");
      got[r.request_id] = 0;
    }
    RunResult res;
    int64_t started = 0;
    for (bool first = true; core_.has_unfinished(); first = false) {
      const bool all_started = started == n;
      const double t = now_s();
      const std::vector<engine::RequestOutput> outs = core_.step();
      const double dt = now_s() - t;
      if (first) res.first_step_s = dt;
      int64_t step_tokens = 0;
      for (const engine::RequestOutput& o : outs) {
        if (o.finish_reason == engine::FinishReason::ERROR) throw_error(ErrorCode::INTERNAL, "request failed: " + o.error);
        if (got.at(o.request_id) == 0 && !o.new_tokens.empty()) ++started;
        got[o.request_id] += int64_t(o.new_tokens.size());
        step_tokens += int64_t(o.new_tokens.size());
      }
      // A decode step of the whole batch: every request had its first token before it and gets one
      // now (the prompts of a large batch take several steps, so its first requests end early).
      if (all_started && step_tokens == n) res.decode_s += dt, res.decode_tokens += n, ++res.decode_steps;
    }
    for (const auto& [id, k] : got)
      if (k != gen) throw_error(ErrorCode::INTERNAL, "request " + std::to_string(id) + " got " + std::to_string(k) +
                                                         " tokens, not " + std::to_string(gen));
    return res;
  }

 private:
  static sched::SchedulerConfig sched_config(int32_t max_seqs, int32_t max_tokens_per_step) {
    sched::SchedulerConfig sc;
    sc.max_num_seqs = max_seqs;
    sc.max_num_batched_tokens = max_tokens_per_step;
    sc.max_model_len = 1 << 20;  // the KV pool is the limit
    return sc;
  }
  static kv::BlockManagerConfig kv_config(int64_t num_blocks) {
    kv::BlockManagerConfig kc;
    kc.num_blocks = int32_t(num_blocks);
    kc.block_size = kBlock;
    kc.enable_prefix_caching = false;  // every prompt computed, as a first request's
    return kc;
  }
  runner::ModelRunner runner_;
  engine::EngineCore core_;
  int64_t next_id_ = 1;
  uint64_t rng_ = 12345;
};

std::vector<int64_t> parse_list(const std::string& s) {
  std::vector<int64_t> v;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');) v.push_back(std::atoll(x.c_str()));
  return v;
}

int main_impl(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) throw_error(ErrorCode::INVALID_ARGUMENT, a + " needs a value");
      return argv[++i];
    };
    if (a == "--shape") o.shape = val();
    else if (a == "--type") o.type = val();
    else if (a == "--model") o.model = val();
    else if (a == "--dir") o.dir = val();
    else if (a == "--keep") o.keep = true;
    else if (a == "--device") {
      const std::string d = val();
      if (d != "cuda" && d != "cpu") throw_error(ErrorCode::INVALID_ARGUMENT, "--device cuda|cpu, not " + d);
      o.cuda = d == "cuda";
    }
    else if (a == "--prompt") o.prompt = std::atoll(val().c_str());
    else if (a == "--decode") o.decode = std::atoll(val().c_str());
    else if (a == "--prefill") o.prefill = std::atoll(val().c_str());
    else if (a == "--gen") o.gen = std::atoll(val().c_str());
    else if (a == "--conc") o.conc = parse_list(val());
    else if (a == "--threads") o.threads = std::atoi(val().c_str());
    else throw_error(ErrorCode::INVALID_ARGUMENT, "unknown option " + a);
  }
  const bench::ModelShape* shape = bench::find_shape(o.shape);
  if (!shape || o.type.empty())
    throw_error(ErrorCode::INVALID_ARGUMENT, "--shape (" + bench::shape_names() + ") and --type (F16|Q4_K) are needed");
  if (o.prompt < 1 || o.decode < 2 || o.prefill < 1 || o.gen < 2 || o.conc.empty())
    throw_error(ErrorCode::INVALID_ARGUMENT, "--prompt, --prefill >= 1; --decode, --gen >= 2; --conc not empty");
  for (int64_t c : o.conc)
    if (c < 1) throw_error(ErrorCode::INVALID_ARGUMENT, "--conc: every concurrency >= 1");
  const std::string label = o.shape + " " + o.type + (o.cuda ? " cuda" : " cpu");
  if (o.threads > 0) ThreadPool::set_global_threads(o.threads);

  Device dev = Device::CPU;
  std::string dev_name = "CPU";
  if (o.cuda) {
    if (!backend::cuda::register_cuda_backend()) {
      std::printf("SUMMARY model %s: not run (no CUDA device)\n", label.c_str());
      return 1;
    }
    dev = Device::CUDA;
    dev_name = backend::cuda::device_info(0).name;
  }
  const double bw = copy_bandwidth(o.cuda);
  std::printf("device %s: copy bandwidth %.0f GB/s (%s, read + write)\n", dev_name.c_str(), bw / 1e9,
              o.cuda ? "device to device, 1 GiB" : "host memcpy, 64 MiB, one thread");

  std::string path = o.model;
  const bool generated = path.empty();
  if (generated) {
    std::filesystem::create_directories(o.dir);
    path = (std::filesystem::path(o.dir) / (o.shape + "-shaped-" + o.type + ".gguf")).string();
    const double t = now_s();
    const int64_t bytes = bench::write_shaped_gguf(path, *shape, bench::shaped_weight_type(o.type));
    std::printf("model %s: wrote %s (%.2f GB) in %.1f s\n", label.c_str(), path.c_str(), double(bytes) / 1e9,
                now_s() - t);
  }
  struct Remove {  // the generated file goes, whatever happens below
    std::string path;
    ~Remove() {
      if (!path.empty()) std::filesystem::remove(path);
    }
  } remove{generated && !o.keep ? path : ""};

  double t = now_s();
  std::unique_ptr<model::Transformer> m = model::Transformer::load(path, dev);
  check_shape(m->config(), *shape);
  const int64_t max_conc = *std::max_element(o.conc.begin(), o.conc.end());
  const int64_t tokens = std::max({max_conc * (o.prompt + o.gen), o.prompt + o.decode, o.prefill + 1});
  const int64_t num_blocks = (tokens + Harness::kBlock - 1) / Harness::kBlock + max_conc;
  Harness h(*m, num_blocks, int32_t(std::max<int64_t>(max_conc, 1)), int32_t(std::max<int64_t>(o.prefill, 256)));
  std::printf("model %s: loaded in %.1f s; KV pool %lld blocks of %d tokens (%s)\n", label.c_str(), now_s() - t,
              static_cast<long long>(num_blocks), Harness::kBlock, std::string(kv_format_name(kDefaultKvFormat)).c_str());
  h.run(1, 16, 4);  // warm-up: first kernels, library handles

  // Batch-1 decode and its share of the copy bandwidth.
  const RunResult d = h.run(1, o.prompt, o.decode);
  const double dec_tps = d.decode_tps();
  const int64_t wbytes = decode_weight_bytes(path);
  const double kv_bytes = double(m->kv_bytes_per_token(kDefaultKvFormat)) * (double(o.prompt) + double(o.decode) / 2);
  const double read = double(wbytes) + kv_bytes, frac = dec_tps * read / bw;
  std::printf("decode b1: %lld tokens after a %lld-token prompt: %.1f tok/s (%.2f ms/token); reads %.3f GB/token "
              "(weights %.3f, KV %.3f): %.0f GB/s = %.1f%% of copy bandwidth (roofline %.1f tok/s)\n",
              static_cast<long long>(d.decode_tokens), static_cast<long long>(o.prompt), dec_tps, 1e3 / dec_tps,
              read / 1e9, double(wbytes) / 1e9, kv_bytes / 1e9, dec_tps * read / 1e9, 100 * frac, bw / read);

  // The same decode with every step run eagerly, for what step graphs (model/step_graphs.h) give.
  const model::StepGraphs& sg = m->step_graphs();
  std::printf("decode b1 step graphs: %s, %lld captured, %lld replays\n",
              m->step_graphs_enabled() ? "on" : "off", static_cast<long long>(sg.captures()),
              static_cast<long long>(sg.replays()));
  if (m->step_graphs_enabled()) {
    m->enable_step_graphs(false);
    const double eager_tps = h.run(1, o.prompt, o.decode).decode_tps();
    m->enable_step_graphs(true);
    std::printf("decode b1 without step graphs: %.1f tok/s (graphs %.2fx)\n", eager_tps, dec_tps / eager_tps);
  }

  // Prefill: the second of two single-step prompts.
  h.run(1, o.prefill, 1);
  const RunResult p = h.run(1, o.prefill, 1);
  const double pre_tps = double(o.prefill) / p.first_step_s;
  std::printf("prefill %lld: %.3f s, %.0f tok/s\n", static_cast<long long>(o.prefill), p.first_step_s, pre_tps);

  // Concurrency: all requests batched by the engine; a short warm-up run at each size first.
  std::map<int64_t, double> agg;
  for (int64_t c : o.conc) {
    h.run(c, 16, 4);
    const RunResult r = h.run(c, o.prompt, o.gen);
    agg[c] = r.decode_tps();
    std::printf("concurrency %lld: %lld decode steps, %lld tokens, %.1f tok/s aggregate (%.2f ms/step)\n",
                static_cast<long long>(c), static_cast<long long>(r.decode_steps),
                static_cast<long long>(r.decode_tokens), agg[c], 1e3 * r.decode_s / double(r.decode_steps));
  }

  std::string conc_names, conc_vals;
  for (const auto& [c, v] : agg) {
    conc_names += (conc_names.empty() ? "c" : "/c") + std::to_string(c);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.0f", conc_vals.empty() ? "" : "/", v);
    conc_vals += buf;
  }
  std::printf("SUMMARY model %s: decode b1 %.1f tok/s = %.1f%% of copy-bandwidth roofline (%.1f tok/s); "
              "prefill %lld %.0f tok/s; %s %s tok/s\n",
              label.c_str(), dec_tps, 100 * frac, bw / read, static_cast<long long>(o.prefill), pre_tps,
              conc_names.c_str(), conc_vals.c_str());
  if (o.shape == "qwen3-8b")
    std::printf("SUMMARY target %s: batch-1 decode >= 80%% of roofline: %.1f%% %s\n", label.c_str(), 100 * frac,
                frac >= 0.8 ? "met" : "missed");
  if (agg.count(1) && agg.count(64))
    std::printf("SUMMARY target %s: c64 >= 10x c1: %.1fx %s\n", label.c_str(), agg[64] / agg[1],
                agg[64] >= 10 * agg[1] ? "met" : "missed");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return main_impl(argc, argv);
  } catch (const std::exception& e) {
    std::string args;
    for (int i = 1; i < argc; ++i) args += std::string(i > 1 ? " " : "") + argv[i];
    std::fflush(stdout);
    std::fprintf(stderr, "cuda_model_bench: %s\n", e.what());
    std::printf("SUMMARY model (%s): FAILED: %s\n", args.c_str(), e.what());
    return 1;
  }
}
