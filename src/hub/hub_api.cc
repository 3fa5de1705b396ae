#include "hub/hub_api.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "core/error.h"
#include "core/json_parse.h"

namespace oxyd::hub {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

bool valid_part(const std::string& s) {
  if (s.empty() || s.size() > 96 || s == "." || s == "..") return false;
  for (unsigned char c : s)
    if (!(std::isalnum(c) || c == '-' || c == '_' || c == '.')) return false;
  if (s.find("..") != std::string::npos) return false;
  return !(s.front() == '.' || s.front() == '-' || s.back() == '.' || s.back() == '-');
}

}  // namespace

const RepoFile* RepoInfo::find(const std::string& path) const {
  for (const auto& f : files)
    if (f.path == path) return &f;
  return nullptr;
}

std::string hub_endpoint_from_env() {
  std::string e = env_or("HF_ENDPOINT", "https://huggingface.co");
  while (!e.empty() && e.back() == '/') e.pop_back();
  return e;
}

std::string hub_token_from_env(const std::string& flag_token) {
  if (!flag_token.empty()) return flag_token;
  std::string t = env_or("HF_TOKEN", env_or("HUGGING_FACE_HUB_TOKEN", ""));
  if (!t.empty()) return t;
  std::string path = env_or("HF_TOKEN_PATH", "");
  if (path.empty() && !env_or("HF_HOME", "").empty()) path = env_or("HF_HOME", "") + "/token";
  if (path.empty() && !env_or("HOME", "").empty()) path = env_or("HOME", "") + "/.cache/huggingface/token";
  std::ifstream in(path);
  if (in) std::getline(in, t);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  return t;
}

void check_repo_id(const std::string& repo) {
  auto slash = repo.find('/');
  bool ok = slash != std::string::npos && repo.find('/', slash + 1) == std::string::npos &&
            valid_part(repo.substr(0, slash)) && valid_part(repo.substr(slash + 1));
  if (!ok)
    throw_error(ErrorCode::INVALID_ARGUMENT,
                "'" + repo + "' is not a Hugging Face repo id: expected namespace/name "
                "(letters, digits, '-', '_', '.'), e.g. Qwen/Qwen3-4B-GGUF");
}

RepoInfo parse_repo_info(const std::string& body, const std::string& what) {
  nlohmann::json j;
  try {
    j = parse_json_bounded(body, what);
  } catch (const std::exception& e) {
    throw_error(ErrorCode::INVALID_ARGUMENT, what + ": the hub's answer is not JSON (" + e.what() + ")");
  }
  auto bad = [&](const std::string& field, const std::string& expected) {
    throw_error(ErrorCode::INVALID_ARGUMENT, what + ": field '" + field + "' should be " + expected);
  };
  if (!j.is_object()) bad("<root>", "an object");
  RepoInfo info;
  if (j.contains("id")) {
    if (!j["id"].is_string()) bad("id", "a string");
    info.id = j["id"];
  }
  if (j.contains("sha") && j["sha"].is_string()) info.sha = j["sha"];
  if (j.contains("gated")) {
    if (j["gated"].is_string()) info.gated = j["gated"];
    else if (j["gated"].is_boolean() && j["gated"].get<bool>()) info.gated = "auto";
  }
  if (!j.contains("siblings") || !j["siblings"].is_array()) bad("siblings", "an array of files");
  for (const auto& s : j["siblings"]) {
    if (!s.is_object() || !s.contains("rfilename") || !s["rfilename"].is_string())
      bad("siblings[].rfilename", "a string");
    RepoFile f;
    f.path = s["rfilename"];
    if (s.contains("size") && s["size"].is_number_integer()) f.size = s["size"];
    if (s.contains("lfs") && s["lfs"].is_object()) {
      const auto& l = s["lfs"];
      if (l.contains("sha256") && l["sha256"].is_string()) f.sha256 = l["sha256"];
      if (f.size < 0 && l.contains("size") && l["size"].is_number_integer()) f.size = l["size"];
      for (char& c : f.sha256) c = char(std::tolower(static_cast<unsigned char>(c)));
      if (f.sha256.size() != 64 || f.sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
        bad("siblings[" + f.path + "].lfs.sha256", "64 hex digits");
    } else if (s.contains("blobId") && s["blobId"].is_string()) {
      std::string oid = s["blobId"];
      for (char& c : oid) c = char(std::tolower(static_cast<unsigned char>(c)));
      if (oid.size() == 40 && oid.find_first_not_of("0123456789abcdef") == std::string::npos) f.git_oid = oid;
    }
    info.files.push_back(std::move(f));
  }
  return info;
}

HubClient::HubClient(std::string endpoint, std::string token)
    : endpoint_(std::move(endpoint)), token_(std::move(token)), http_(HttpOptions{token_}) {
  while (!endpoint_.empty() && endpoint_.back() == '/') endpoint_.pop_back();
}

std::string HubClient::file_url(const std::string& repo, const std::string& revision,
                                const std::string& path) const {
  return endpoint_ + "/" + repo + "/resolve/" + url_encode_path(revision.empty() ? "main" : revision) +
         "/" + url_encode_path(path);
}

HttpResponse HubClient::get_with_retry(const std::string& url, const std::string& what,
                                       const std::optional<std::pair<int64_t, int64_t>>& range) {
  for (int failures = 0;;) {
    HttpResponse r = range ? http_.get_range(url, range->first, range->second) : http_.get(url);
    bytes_received_ += int64_t(r.body.size());
    if (r.transfer_ok() && r.status >= 200 && r.status < 300) return r;
    if (!is_transient(r) || ++failures >= retry_.max_attempts) return r;
    const double delay = retry_.delay_s(failures, r.header("retry-after"));
    if (notify_) {
      char when[96];
      std::snprintf(when, sizeof when, "; retrying in %.1f s (attempt %d of %d)", delay, failures + 1,
                    retry_.max_attempts);
      notify_(what + ": " + (r.transfer_ok() ? "HTTP " + std::to_string(r.status) : r.curl_error) + when);
    }
    sleep_seconds(delay);
  }
}

RepoInfo HubClient::model_info(const std::string& repo, const std::string& revision) {
  check_repo_id(repo);
  std::string url = endpoint_ + "/api/models/" + repo;
  if (!revision.empty()) url += "/revision/" + url_encode_path(revision);
  url += "?blobs=true";
  std::string what = "model info for " + repo;
  HttpResponse r = get_with_retry(url, what, std::nullopt);
  if (!(r.transfer_ok() && r.status == 200)) throw_http_error(r, what, endpoint_, repo, has_token());
  RepoInfo info = parse_repo_info(r.body, what);
  if (info.id.empty()) info.id = repo;
  return info;
}

std::string HubClient::read_range(const std::string& repo, const std::string& revision,
                                  const std::string& path, int64_t first, int64_t count) {
  std::string what = "bytes " + std::to_string(first) + "+" + std::to_string(count) + " of " + repo + "/" + path;
  HttpResponse r = get_with_retry(file_url(repo, revision, path), what, std::make_pair(first, count));
  if (!r.transfer_ok() || (r.status != 206 && r.status != 200))
    throw_http_error(r, what, endpoint_, repo, has_token(), true);
  if (r.status == 200) {  // the server ignored Range: cut the window out of the full body
    if (int64_t(r.body.size()) <= first) return {};
    return r.body.substr(size_t(first), size_t(count));
  }
  if (int64_t(r.body.size()) > count) r.body.resize(size_t(count));
  return std::move(r.body);
}

std::string HubClient::read_small_file(const std::string& repo, const std::string& revision,
                                       const std::string& path) {
  std::string what = repo + "/" + path;
  HttpResponse r = get_with_retry(file_url(repo, revision, path), what, std::nullopt);
  if (!(r.transfer_ok() && r.status == 200)) throw_http_error(r, what, endpoint_, repo, has_token(), true);
  return std::move(r.body);
}

void throw_http_error(const HttpResponse& r, const std::string& what, const std::string& endpoint,
                      const std::string& repo, bool has_token, bool is_file) {
  if (!r.transfer_ok() && r.status == 0)
    throw_error(ErrorCode::IO, what + ": cannot reach the hub at " + endpoint + " (" + r.curl_error +
                                   "); check the network, or set HF_ENDPOINT to a reachable mirror");
  if (!r.transfer_ok())
    throw_error(ErrorCode::IO, what + ": transfer failed (" + r.curl_error + ")");
  std::string code = r.header("x-error-code");
  std::string repo_url = endpoint + "/" + repo;
  if (code == "GatedRepo" || ((r.status == 401 || r.status == 403) && code.empty() && has_token)) {
    if (code == "GatedRepo")
      throw_error(ErrorCode::INVALID_ARGUMENT,
                  what + ": this repo is gated; accept its licence at " + repo_url +
                      (has_token ? " with the account that owns the token you passed (HTTP " +
                                       std::to_string(r.status) + ": the token has no access yet)"
                                 : " and pass a token with --token or HF_TOKEN"));
    throw_error(ErrorCode::INVALID_ARGUMENT,
                what + ": access denied (HTTP " + std::to_string(r.status) +
                    "); the token was refused or lacks access to " + repo_url);
  }
  if (code == "RevisionNotFound")
    throw_error(ErrorCode::NOT_FOUND, what + ": revision not found in " + repo_url);
  if (code == "EntryNotFound" || (r.status == 404 && code.empty() && is_file))
    throw_error(ErrorCode::NOT_FOUND, what + ": file not found on the hub (HTTP 404)");
  if (r.status == 404 || code == "RepoNotFound")
    throw_error(ErrorCode::NOT_FOUND, what + ": repository not found at " + repo_url +
                                          (has_token ? "" : " (if it is private, pass a token with --token or HF_TOKEN)"));
  if (r.status == 401)
    throw_error(ErrorCode::INVALID_ARGUMENT,
                what + ": the hub requires authentication (HTTP 401); pass a token with --token or HF_TOKEN");
  if (r.status == 403)
    throw_error(ErrorCode::INVALID_ARGUMENT, what + ": access denied (HTTP 403) to " + repo_url);
  throw_error(ErrorCode::IO, what + ": the hub answered HTTP " + std::to_string(r.status) +
                                 (r.status >= 500 ? " (server error, retries exhausted); try again later" : ""));
}

}  // namespace oxyd::hub
