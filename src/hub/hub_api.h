// The Hugging Face hub's HTTP API as pull/estimate use it: model info with the file list
// (`/api/models/{repo}[/revision/{rev}]?blobs=true` → siblings with size and lfs.sha256) and file
// URLs (`/{repo}/resolve/{rev}/{path}`). The endpoint comes from HF_ENDPOINT (mirrors, the tests'
// local hub). HTTP failures become oxyd::Error with a message that says what to do.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hub/http_client.h"
#include "hub/retry.h"

namespace oxyd::hub {

struct RepoFile {
  std::string path;    // repo-relative, '/'-separated
  int64_t size = -1;   // bytes; -1 when the hub did not say
  std::string sha256;   // LFS oid (lower-case hex), empty for plain git files
  std::string git_oid;  // plain git files: the blob id (SHA-1 of "blob <size>\0" + bytes)
};

struct RepoInfo {
  std::string id;        // "namespace/name" as the hub spells it
  std::string sha;       // commit the listing describes (downloads are pinned to it)
  std::string gated;     // "" (not gated), "auto" or "manual"
  std::vector<RepoFile> files;

  const RepoFile* find(const std::string& path) const;
};

/// Endpoint without a trailing slash: HF_ENDPOINT, else https://huggingface.co.
std::string hub_endpoint_from_env();
/// --token, else HF_TOKEN, else HUGGING_FACE_HUB_TOKEN, else the token file `hf auth login`
/// writes (HF_TOKEN_PATH, else $HF_HOME/token, else ~/.cache/huggingface/token), else "".
std::string hub_token_from_env(const std::string& flag_token);

/// Validates "namespace/name" (hub rules: [A-Za-z0-9._-], no "..", no leading/trailing '.'/'-');
/// throws Error(INVALID_ARGUMENT) naming the id otherwise.
void check_repo_id(const std::string& repo);

/// Parses a model-info JSON body; throws Error(INVALID_ARGUMENT) naming the field on bad shape.
RepoInfo parse_repo_info(const std::string& json_body, const std::string& what);

class HubClient {
 public:
  HubClient(std::string endpoint, std::string token);

  /// Model info with file sizes and LFS hashes. revision "" = the default branch.
  RepoInfo model_info(const std::string& repo, const std::string& revision = "");
  std::string file_url(const std::string& repo, const std::string& revision,
                       const std::string& path) const;
  /// Bytes [first, first+count) of a repo file (fewer at end of file). For GGUF headers.
  std::string read_range(const std::string& repo, const std::string& revision,
                         const std::string& path, int64_t first, int64_t count);
  /// Whole small file (config.json) into memory.
  std::string read_small_file(const std::string& repo, const std::string& revision,
                              const std::string& path);

  HttpClient& http() { return http_; }
  void set_retry(const RetryPolicy& p) { retry_ = p; }
  /// Receives one line per retry of a metadata request ("...; retrying in 2.0 s (attempt 2 of 6)"),
  /// so a user waiting on a slow or failing hub sees why. Unset: silent.
  void set_notify(std::function<void(const std::string&)> notify) { notify_ = std::move(notify); }
  const RetryPolicy& retry() const { return retry_; }
  const std::string& token() const { return token_; }
  const std::string& endpoint() const { return endpoint_; }
  bool has_token() const { return !token_.empty(); }
  /// Total bytes of response bodies received by this client (remote-estimate accounting).
  int64_t bytes_received() const { return bytes_received_; }

 private:
  HttpResponse get_with_retry(const std::string& url, const std::string& what,
                              const std::optional<std::pair<int64_t, int64_t>>& range);
  std::string endpoint_, token_;
  HttpClient http_;
  RetryPolicy retry_;
  std::function<void(const std::string&)> notify_;
  int64_t bytes_received_ = 0;
};

/// Throws the Error that explains a failed hub response: gated (401/403 with accept-the-licence
/// advice), not found, auth, server error. `what` names the request ("model info for X").
[[noreturn]] void throw_http_error(const HttpResponse& r, const std::string& what,
                                   const std::string& endpoint, const std::string& repo,
                                   bool has_token, bool is_file = false);

}  // namespace oxyd::hub
