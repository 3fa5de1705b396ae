// A local stand-in for the Hugging Face hub, run inside the test process on 127.0.0.1 (a free
// port): `/api/models/{ns}/{name}[/revision/{rev}]` answers model info with siblings, sizes and
// lfs.sha256 as the real hub does with ?blobs=true; `/{ns}/{name}/resolve/{rev}/{path}` redirects
// LFS files to `/cdn/...`, which serves bytes with Range support. Switches inject failures.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace httplib {
class Server;
}

namespace oxyd::hub::testing {

struct FakeFile {
  std::string path;
  std::string content;
  bool lfs = true;  // LFS files are listed with lfs.sha256 and served through the CDN redirect
};

struct FakeRepo {
  std::string id;  // "ns/name"
  std::string sha = "4f1c0e0b5a7d9e2c3b4a5f6e7d8c9b0a1f2e3d4c";
  std::vector<FakeFile> files;
  std::string gated_token;  // non-empty: gated; downloads need "Authorization: Bearer <this>"
};

struct RangeLog {
  std::string path;
  std::string range;  // the Range header, "" when none
};

class FakeHub {
 public:
  FakeHub();
  ~FakeHub();
  std::string endpoint() const;
  void add_repo(FakeRepo repo);

  // Failure switches (apply to file downloads, not to model info unless stated).
  std::atomic<int64_t> drop_after_bytes{-1};  // one-shot: close the connection after N body bytes
  std::atomic<bool> corrupt_content{false};   // serve one flipped byte (the listed sha256 stays right)
  std::atomic<int> fail_500{0};               // the next N file requests answer 500
  std::atomic<int> fail_500_info{0};          // the next N model-info requests answer 500
  std::atomic<int64_t> bytes_per_second{0};   // slow link (0 = unlimited)
  std::atomic<bool> ignore_range{false};      // answer 200 with the whole file to Range requests
  std::set<std::string> not_found;            // repo file paths that answer 404 (set before use)

  // Observations.
  std::atomic<int64_t> body_bytes_served{0};  // file bytes written to sockets
  std::atomic<int> file_requests{0};
  std::vector<RangeLog> ranges() const;
  void reset_counters();

 private:
  void serve_file(std::shared_ptr<const FakeRepo> repo, const FakeFile& f, const void* req, void* res);
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const FakeRepo>> repos_;
  std::map<std::string, std::string> sha256_;  // "repo/path" → sha256 of the content (computed once)
  std::vector<RangeLog> ranges_;
};

std::string sha256_hex(const std::string& bytes);
/// git's blob id: SHA-1 of "blob <size>\0" + bytes.
std::string git_blob_sha1(const std::string& bytes);

}  // namespace oxyd::hub::testing
