#include "hub/download.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/error.h"
#include "hub/content_hash.h"

namespace oxyd::hub {
namespace {

// "bytes 100-199/200" → 100; -1 when absent or malformed.
int64_t content_range_start(const std::string& v) {
  if (v.rfind("bytes ", 0) != 0) return -1;
  char* end = nullptr;
  long long start = std::strtoll(v.c_str() + 6, &end, 10);
  return end && *end == '-' ? int64_t(start) : -1;
}

[[noreturn]] void throw_disk_full(const std::string& path, int64_t need) {
  int64_t free_b = free_disk_bytes(std::filesystem::path(path).parent_path().string());
  throw_error(ErrorCode::IO,
              "disk full while writing " + path + ": " + format_bytes(need) + " still to write, " +
                  (free_b >= 0 ? format_bytes(free_b) : std::string("unknown")) +
                  " free on that filesystem. Free some space (or choose another store with "
                  "--models-dir) and rerun: the download resumes where it stopped");
}

class PartFile {
 public:
  explicit PartFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw_error(ErrorCode::IO, "cannot open " + path + " for writing: " + std::strerror(errno));
  }
  ~PartFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  int64_t size() const {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw_error(ErrorCode::IO, "cannot stat " + path_);
    return int64_t(st.st_size);
  }
  void truncate_to(int64_t n) {
    if (::ftruncate(fd_, n) != 0) throw_error(ErrorCode::IO, "cannot truncate " + path_ + ": " + std::strerror(errno));
  }
  // Appends at offset; returns errno (0 = ok).
  int write_at(int64_t offset, const char* data, size_t n) {
    while (n > 0) {
      ssize_t w = ::pwrite(fd_, data, n, offset);
      if (w < 0) {
        if (errno == EINTR) continue;
        return errno;
      }
      data += w;
      n -= size_t(w);
      offset += w;
    }
    return 0;
  }
  void hash_prefix(ContentHash& h, int64_t n) {
    std::vector<char> buf(1 << 20);
    for (int64_t off = 0; off < n;) {
      ssize_t r = ::pread(fd_, buf.data(), size_t(std::min<int64_t>(n - off, int64_t(buf.size()))), off);
      if (r <= 0) throw_error(ErrorCode::IO, "cannot read back " + path_ + " to resume it");
      h.update(buf.data(), size_t(r));
      off += r;
    }
  }
  void sync_and_close() {
    if (::fsync(fd_) != 0) throw_error(ErrorCode::IO, "fsync " + path_ + ": " + std::strerror(errno));
    ::close(fd_);
    fd_ = -1;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

void sync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

int64_t free_disk_bytes(const std::string& path) {
  struct statvfs s {};
  if (::statvfs(path.empty() ? "." : path.c_str(), &s) != 0) return -1;
  return int64_t(s.f_bavail) * int64_t(s.f_frsize);
}

DownloadResult download_file(HttpClient& http, const DownloadRequest& req, const RetryPolicy& retry,
                             Progress* progress, const HttpFailure& on_failure) {
  const std::string part_path = req.dest_path + kPartSuffix;
  const std::string dir = std::filesystem::path(req.dest_path).parent_path().string();
  const std::string name = req.display_name.empty() ? req.dest_path : req.display_name;
  PartFile part(part_path);
  int64_t offset = part.size();
  if (req.expected_size >= 0 && offset > req.expected_size) {  // stale or foreign: start over
    part.truncate_to(0);
    offset = 0;
  }
  DownloadResult res;
  res.resumed_from = offset;
  if (req.expected_size >= 0) {
    int64_t free_b = free_disk_bytes(dir);
    if (free_b >= 0 && free_b < req.expected_size - offset) throw_disk_full(req.dest_path, req.expected_size - offset);
  }

  // The sha256 (LFS oid) when the hub gives one, else the git blob id (needs the size).
  const bool git = req.expected_sha256.empty() && !req.expected_git_oid.empty() && req.expected_size >= 0;
  const std::string expected = git ? req.expected_git_oid : req.expected_sha256;
  const bool hashing = !expected.empty();
  ContentHash hash(git ? HashKind::GIT_BLOB_SHA1 : HashKind::SHA256, req.expected_size);
  if (hashing && offset > 0) part.hash_prefix(hash, offset);

  if (progress) progress->begin(name, req.expected_size, offset);
  int failures = 0;
  bool redone_after_mismatch = false;
  bool finished = false;  // the server ended a 2xx body normally (needed when the size is unknown)
  for (;;) {
    const bool complete = req.expected_size >= 0 ? offset == req.expected_size : finished;
    if (!complete) {
      const int64_t start_offset = offset;
      int write_errno = 0;
      bool bad_range = false;
      BodySink sink = [&](const HttpResponse& head, const char* data, size_t n) {
        if (head.status == 200 && offset > 0 && offset == start_offset) {
          // The server ignored our Range and sends the whole file: restart the part file.
          part.truncate_to(0);
          offset = 0;
          hash.reset();
        } else if (head.status == 206 && offset == start_offset &&
                   content_range_start(head.header("content-range")) != start_offset) {
          bad_range = true;
          return false;
        }
        if ((write_errno = part.write_at(offset, data, n)) != 0) return false;
        if (hashing) hash.update(data, n);
        offset += int64_t(n);
        res.bytes_transferred += int64_t(n);
        if (progress) progress->update(offset);
        return true;
      };
      HttpResponse r = http.get_stream(req.url, offset, sink);
      if (write_errno == ENOSPC || write_errno == EDQUOT) throw_disk_full(req.dest_path, req.expected_size - offset);
      if (write_errno) throw_error(ErrorCode::IO, "cannot write " + part_path + ": " + std::strerror(write_errno));
      const bool progressed = offset > start_offset;
      if (r.transfer_ok() && r.status >= 200 && r.status < 300) {
        finished = true;
        if (req.expected_size < 0 || offset == req.expected_size) continue;  // loop checks completeness
        if (offset > req.expected_size)
          throw_error(ErrorCode::IO, name + ": the server sent more bytes than the hub listed (" +
                                         std::to_string(offset) + " > " + std::to_string(req.expected_size) + ")");
        // Short body without an error: treat like a dropped connection below.
      } else if (r.status == 416 || bad_range) {
        part.truncate_to(0);  // our offset is not what the server has: start clean
        offset = 0;
        hash.reset();
      } else if (!is_transient(r) && r.transfer_ok()) {
        if (progress) progress->end(false);
        if (offset == 0) std::filesystem::remove(part_path);  // leave no empty leftovers
        on_failure(r);
        throw_error(ErrorCode::IO, name + ": HTTP " + std::to_string(r.status));
      } else if (!is_transient(r)) {
        if (progress) progress->end(false);
        throw_error(ErrorCode::IO, name + ": transfer failed: " + r.curl_error);
      }
      failures = progressed ? 1 : failures + 1;
      if (failures >= retry.max_attempts) {
        if (progress) progress->end(false);
        std::string why = r.transfer_ok() ? "HTTP " + std::to_string(r.status) : r.curl_error;
        throw_error(ErrorCode::IO, name + ": giving up after " + std::to_string(failures) +
                                       " failed attempts (last: " + why + "); rerun pull to resume from " +
                                       format_bytes(offset));
      }
      double delay = retry.delay_s(failures, r.header("retry-after"));
      if (progress) {
        char msg[64];
        std::snprintf(msg, sizeof msg, "; retrying in %.1f s", delay);
        progress->note(name + ": " + (r.transfer_ok() ? "HTTP " + std::to_string(r.status) : r.curl_error) +
                       " at " + format_bytes(offset) + msg);
      }
      sleep_seconds(delay);
      continue;
    }
    // Complete: verify before the file may count as present.
    if (hashing) {
      std::string got = hash.hex_digest();
      if (got != expected) {
        part.truncate_to(0);
        offset = 0;
        finished = false;
        if (!redone_after_mismatch) {  // a corrupt resume base is possible: one clean retry
          redone_after_mismatch = true;
          if (progress) progress->note(name + ": checksum mismatch, downloading it again from the start");
          continue;
        }
        if (progress) progress->end(false);
        std::filesystem::remove(part_path);
        throw_error(ErrorCode::IO, name + ": checksum mismatch: the hub lists " + (git ? "git blob id " : "sha256 ") + expected +
                                       " but the downloaded bytes hash to " + got +
                                       "; the file was discarded (nothing was installed)");
      }
    }
    break;
  }
  if (progress) progress->end(true);
  part.sync_and_close();
  if (::rename(part_path.c_str(), req.dest_path.c_str()) != 0)
    throw_error(ErrorCode::IO, "cannot rename " + part_path + " to " + req.dest_path + ": " + std::strerror(errno));
  sync_dir(dir);
  return res;
}

}  // namespace oxyd::hub
