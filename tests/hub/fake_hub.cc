#include "fake_hub.h"

#include <httplib.h>
#include <openssl/evp.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>

namespace oxyd::hub::testing {

std::string sha256_hex(const std::string& bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

std::string git_blob_sha1(const std::string& bytes) {
  const std::string blob = "blob " + std::to_string(bytes.size()) + std::string(1, '\0') + bytes;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(blob.data(), blob.size(), md, &len, EVP_sha1(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

namespace {

void error(httplib::Response& res, int status, const std::string& code, const std::string& msg) {
  res.status = status;
  if (!code.empty()) res.set_header("X-Error-Code", code);
  res.set_header("X-Error-Message", msg);
  res.set_content(nlohmann::json{{"error", msg}}.dump(), "application/json");
}

}  // namespace

FakeHub::FakeHub() : server_(std::make_unique<httplib::Server>()) {
  auto& s = *server_;
  s.Get(R"(/api/models/([^/]+)/([^/]+)(?:/revision/([^/]+))?)", [this](const httplib::Request& req, httplib::Response& res) {
    if (fail_500_info > 0) {
      --fail_500_info;
      return error(res, 500, "", "Internal Error");
    }
    std::string id = std::string(req.matches[1]) + "/" + std::string(req.matches[2]);
    std::lock_guard<std::mutex> lk(mu_);
    auto it = repos_.find(id);
    if (it == repos_.end()) return error(res, 401, "RepoNotFound", "Repository not found");
    const FakeRepo& r = *it->second;
    std::string rev = req.matches[3];
    if (!rev.empty() && rev != "main" && rev != r.sha) return error(res, 404, "RevisionNotFound", "Invalid rev id: " + rev);
    nlohmann::json sib = nlohmann::json::array();
    for (const auto& f : r.files) {
      // As the hub: blobId is the git blob id of what git stores (the pointer file for LFS).
      const std::string& sha = sha256_[r.id + "/" + f.path];
      const std::string pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:" + sha +
                                  "\nsize " + std::to_string(f.content.size()) + "\n";
      nlohmann::json e = {{"rfilename", f.path}, {"blobId", git_blob_sha1(f.lfs ? pointer : f.content)},
                          {"size", f.content.size()}};
      if (f.lfs) e["lfs"] = {{"sha256", sha}, {"size", f.content.size()}, {"pointerSize", pointer.size()}};
      sib.push_back(e);
    }
    nlohmann::json j = {{"_id", "65f0c0ffee"}, {"id", r.id},       {"modelId", r.id}, {"sha", r.sha},
                        {"private", false},    {"disabled", false}, {"siblings", sib}};
    j["gated"] = r.gated_token.empty() ? nlohmann::json(false) : nlohmann::json("manual");
    res.set_content(j.dump(), "application/json");
  });

  s.Get(R"(/([^/]+)/([^/]+)/resolve/([^/]+)/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    std::string id = std::string(req.matches[1]) + "/" + std::string(req.matches[2]);
    std::string rev = req.matches[3], path = req.matches[4];
    std::shared_ptr<const FakeRepo> rp;
    {
      std::lock_guard<std::mutex> lk(mu_);
      auto it = repos_.find(id);
      if (it == repos_.end()) return error(res, 401, "RepoNotFound", "Repository not found");
      rp = it->second;
    }
    const FakeRepo& repo = *rp;
    if (rev != "main" && rev != repo.sha) return error(res, 404, "RevisionNotFound", "Invalid rev id");
    if (!repo.gated_token.empty()) {
      std::string auth = req.get_header_value("Authorization");
      if (auth.empty())
        return error(res, 401, "GatedRepo", "Access to model " + id + " is restricted. You must have access to it and be authenticated to access it. Please log in.");
      if (auth != "Bearer " + repo.gated_token)
        return error(res, 403, "GatedRepo", "Access to model " + id + " is restricted and you are not in the authorized list.");
    }
    if (fail_500 > 0) {
      --fail_500;
      ++file_requests;
      return error(res, 500, "", "Internal Error");
    }
    if (not_found.count(path)) return error(res, 404, "EntryNotFound", path + " does not exist on \"main\"");
    for (const auto& f : repo.files)
      if (f.path == path) {
        if (f.lfs) {
          res.set_header("X-Linked-Size", std::to_string(f.content.size()));
          res.set_header("X-Linked-Etag", "\"" + sha256_hex(f.content) + "\"");
          res.set_header("X-Repo-Commit", repo.sha);
          res.set_redirect("/cdn/" + id + "/" + path, 302);
          // A body, as the hub sends; httplib must not apply the request's Range to it.
          const_cast<httplib::Request&>(req).ranges.clear();
          res.set_content("Found. Redirecting to /cdn/" + id + "/" + path, "text/plain");
          return;
        }
        return serve_file(rp, f, &req, &res);
      }
    error(res, 404, "EntryNotFound", path + " does not exist");
  });

  s.Get(R"(/cdn/([^/]+)/([^/]+)/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    std::string id = std::string(req.matches[1]) + "/" + std::string(req.matches[2]);
    std::string path = req.matches[3];
    std::shared_ptr<const FakeRepo> rp;
    {
      std::lock_guard<std::mutex> lk(mu_);
      auto it = repos_.find(id);
      if (it == repos_.end()) return error(res, 404, "", "no such object");
      rp = it->second;
    }
    for (const auto& f : rp->files)
      if (f.path == path) return serve_file(rp, f, &req, &res);
    error(res, 404, "", "no such object");
  });

  port_ = s.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeHub::~FakeHub() {
  server_->stop();
  thread_.join();
}

std::string FakeHub::endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

void FakeHub::add_repo(FakeRepo repo) {
  std::lock_guard<std::mutex> lk(mu_);
  std::string id = repo.id;
  for (const auto& f : repo.files) sha256_[id + "/" + f.path] = sha256_hex(f.content);
  repos_[id] = std::make_shared<const FakeRepo>(std::move(repo));
}

std::vector<RangeLog> FakeHub::ranges() const {
  std::lock_guard<std::mutex> lk(mu_);
  return ranges_;
}

void FakeHub::reset_counters() {
  std::lock_guard<std::mutex> lk(mu_);
  ranges_.clear();
  body_bytes_served = 0;
  file_requests = 0;
}

// Range is handled here, not by httplib (0.11 does not clamp a range that runs past the end):
// one "bytes=a-b" / "bytes=a-" range, clamped; a start at or past the end answers 416.
void FakeHub::serve_file(std::shared_ptr<const FakeRepo> repo, const FakeFile& f, const void* req_ptr,
                         void* res_ptr) {
  auto& req = *const_cast<httplib::Request*>(static_cast<const httplib::Request*>(req_ptr));
  auto& res = *static_cast<httplib::Response*>(res_ptr);
  ++file_requests;
  const std::string range_header = req.get_header_value("Range");
  {
    std::lock_guard<std::mutex> lk(mu_);
    ranges_.push_back({f.path, range_header});
  }
  req.ranges.clear();  // keep httplib from applying the range a second time
  // The repo stays alive (shared) for as long as httplib streams from it; corruption copies.
  std::shared_ptr<const std::string> content(repo, &f.content);
  if (corrupt_content && !f.content.empty()) {
    auto bad = std::make_shared<std::string>(f.content);
    (*bad)[bad->size() / 2] ^= 0x5a;
    content = bad;
  }
  size_t first = 0, last = content->size() ? content->size() - 1 : 0;
  if (!range_header.empty() && !ignore_range) {
    unsigned long long a = 0, b = 0;
    int n = std::sscanf(range_header.c_str(), "bytes=%llu-%llu", &a, &b);
    if (n < 1 || a >= content->size()) {
      res.status = 416;
      res.set_header("Content-Range", "bytes */" + std::to_string(content->size()));
      return;
    }
    first = size_t(a);
    if (n == 2) last = std::min<size_t>(size_t(b), content->size() - 1);
    res.status = 206;
    res.set_header("Content-Range", "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" +
                                        std::to_string(content->size()));
  }
  struct State {
    int64_t sent = 0;
    int64_t drop_at = -1;
  };
  auto st = std::make_shared<State>();
  st->drop_at = drop_after_bytes.exchange(-1);
  const int64_t bps = bytes_per_second;
  const size_t len = content->empty() ? 0 : last - first + 1;
  res.set_content_provider(len, "application/octet-stream",
                           [this, content, st, bps, first](size_t offset, size_t length, httplib::DataSink& sink) {
                             const char* base = content->data() + first;
                             size_t n = std::min<size_t>(length, 16384);
                             if (st->drop_at >= 0 && st->sent + int64_t(n) >= st->drop_at) {
                               size_t part = size_t(std::max<int64_t>(0, st->drop_at - st->sent));
                               if (part) sink.write(base + offset, part);
                               body_bytes_served += int64_t(part);
                               return false;  // drops the connection mid-body
                             }
                             if (bps > 0) std::this_thread::sleep_for(std::chrono::duration<double>(double(n) / double(bps)));
                             if (!sink.write(base + offset, n)) return false;
                             st->sent += int64_t(n);
                             body_bytes_served += int64_t(n);
                             return true;
                           });
}

}  // namespace oxyd::hub::testing
