// One file from the hub to disk, robustly: bytes go to `<dest>.part`, a rerun (after a dropped
// connection or a killed process) resumes it with an HTTP Range request, transient failures are
// retried with backoff, the sha256 of the whole file is checked against the hub's LFS oid, and
// only a verified file is renamed (atomically) to its final name. A full disk is reported as such.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "hub/http_client.h"
#include "hub/progress.h"
#include "hub/retry.h"

namespace oxyd::hub {

struct DownloadRequest {
  std::string url;
  std::string dest_path;        // final path; its directory must exist
  int64_t expected_size = -1;   // -1: unknown (then only the transfer's own length is checked)
  std::string expected_sha256;  // LFS oid; "" for plain git files
  std::string display_name;
  std::string expected_git_oid; // plain git files: blob id (checked when there is no sha256)
};

struct DownloadResult {
  int64_t bytes_transferred = 0;  // received over the network in this call
  int64_t resumed_from = 0;       // bytes already in the .part file when the call started
};

/// Called with a non-transient failed response; must throw (explains gated/404/... errors).
using HttpFailure = std::function<void(const HttpResponse&)>;

/// Downloads req.url to req.dest_path as described above. Throws Error(IO) after retries run out,
/// on a checksum mismatch (sha256, or the git blob id for plain files) (the partial file is deleted: a rerun starts clean) or on a full disk.
DownloadResult download_file(HttpClient& http, const DownloadRequest& req, const RetryPolicy& retry,
                             Progress* progress, const HttpFailure& on_failure);

/// Suffix of in-progress files; discovery and listing ignore such files.
inline constexpr const char* kPartSuffix = ".part";

/// Free bytes on the filesystem holding `path` (-1 if unknown).
int64_t free_disk_bytes(const std::string& path);

}  // namespace oxyd::hub
