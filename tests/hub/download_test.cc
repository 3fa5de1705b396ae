// Robust transfer against the local fake hub: plain download, resume after a dropped connection
// (the server must see a Range request from the drop point and serve only the rest), resume of a
// .part left by a killed process, checksum mismatch rejected, 404, 500-then-success, retries
// giving up, a server that ignores Range, a full disk (/dev/full), progress lines on a slow link.
#include <gtest/gtest.h>

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "fake_hub.h"
#include "hub/content_hash.h"
#include "hub/download.h"
#include "hub/hub_api.h"
#include "hub_test_util.h"

namespace fs = std::filesystem;

namespace oxyd::hub {
namespace {

using testing::expect_error;
using testing::FakeHub;
using testing::random_bytes;
using testing::read_file;
using testing::git_blob_sha1;
using testing::sha256_hex;
using testing::TempDir;
using testing::write_file;

constexpr size_t kSize = 600 * 1024;

struct DownloadFixture : ::testing::Test {
  FakeHub hub;
  TempDir tmp;
  std::string content = random_bytes(kSize, 42);
  HubClient client{hub.endpoint(), ""};
  RetryPolicy fast{4, 0.01, 0.05};
  void SetUp() override {
    hub.add_repo({"ns/repo", "4f1c0e0b5a7d9e2c3b4a5f6e7d8c9b0a1f2e3d4c",
                  {{"m-Q4_K_M.gguf", content, true}, {"config.json", R"({"a":1})", false}}, ""});
  }
  DownloadRequest req(const std::string& path = "m-Q4_K_M.gguf") {
    const std::string& c = path == "config.json" ? std::string(R"({"a":1})") : content;
    const bool git = path == "config.json";
    return {client.file_url("ns/repo", "main", path), tmp / path, int64_t(c.size()),
            git ? "" : sha256_hex(c), path, git ? git_blob_sha1(c) : ""};
  }
  DownloadResult get(const DownloadRequest& r) {
    return download_file(client.http(), r, fast, nullptr, [&](const HttpResponse& resp) {
      throw_http_error(resp, r.display_name, hub.endpoint(), "ns/repo", false, true);
    });
  }
};

TEST_F(DownloadFixture, FollowsRedirectAndVerifies) {
  auto r = get(req());
  EXPECT_EQ(read_file(tmp / "m-Q4_K_M.gguf"), content);
  EXPECT_EQ(r.bytes_transferred, int64_t(kSize));
  EXPECT_FALSE(fs::exists(tmp / "m-Q4_K_M.gguf.part"));
  get(req("config.json"));  // a plain git file: no redirect, no sha256
  EXPECT_EQ(read_file(tmp / "config.json"), R"({"a":1})");
}

TEST_F(DownloadFixture, ResumesAfterDroppedConnection) {
  hub.drop_after_bytes = 200 * 1024;
  auto r = get(req());
  EXPECT_EQ(read_file(tmp / "m-Q4_K_M.gguf"), content);
  auto ranges = hub.ranges();
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].range, "");
  EXPECT_EQ(ranges[1].range, "bytes=" + std::to_string(200 * 1024) + "-");
  // Only the missing bytes crossed the wire the second time.
  EXPECT_EQ(hub.body_bytes_served.load(), int64_t(kSize));
  EXPECT_EQ(r.bytes_transferred, int64_t(kSize));
}

TEST_F(DownloadFixture, ResumesPartLeftByKilledProcess) {
  write_file(tmp / "m-Q4_K_M.gguf.part", content.substr(0, 123457));
  auto r = get(req());
  EXPECT_EQ(read_file(tmp / "m-Q4_K_M.gguf"), content);
  EXPECT_EQ(r.resumed_from, 123457);
  EXPECT_EQ(r.bytes_transferred, int64_t(kSize) - 123457);
  ASSERT_EQ(hub.ranges().size(), 1u);
  EXPECT_EQ(hub.ranges()[0].range, "bytes=123457-");
}

TEST_F(DownloadFixture, ChecksumMismatchIsRejected) {
  hub.corrupt_content = true;
  expect_error([&] { get(req()); }, ErrorCode::IO, {"checksum mismatch", sha256_hex(content), "discarded"});
  EXPECT_FALSE(fs::exists(tmp / "m-Q4_K_M.gguf"));
  EXPECT_FALSE(fs::exists(tmp / "m-Q4_K_M.gguf.part"));
  EXPECT_EQ(hub.file_requests.load(), 2);  // one clean retry from zero, then rejection
}

TEST_F(DownloadFixture, PlainGitFilesAreVerifiedByBlobId) {
  hub.corrupt_content = true;
  expect_error([&] { get(req("config.json")); }, ErrorCode::IO, {"checksum mismatch", "git blob id"});
  EXPECT_FALSE(fs::exists(tmp / "config.json"));
}

TEST(ContentHash, KnownVectors) {
  // FIPS 180-2 "abc"; `printf 'hello\n' | git hash-object --stdin`.
  ContentHash sha;
  sha.update("abc", 3);
  EXPECT_EQ(sha.hex_digest(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  ContentHash git(HashKind::GIT_BLOB_SHA1, 6);
  git.update("hello\n", 6);
  EXPECT_EQ(git.hex_digest(), "ce013625030ba8dba906f756967f9e9ca394464a");
  EXPECT_EQ(testing::git_blob_sha1("hello\n"), "ce013625030ba8dba906f756967f9e9ca394464a");
}

TEST_F(DownloadFixture, CorruptResumeBaseIsRedoneCleanly) {
  std::string bad = content.substr(0, 50000);
  bad[100] ^= 1;  // a .part whose bytes are not the file's
  write_file(tmp / "m-Q4_K_M.gguf.part", bad);
  get(req());
  EXPECT_EQ(read_file(tmp / "m-Q4_K_M.gguf"), content);
}

TEST_F(DownloadFixture, NotFoundIsExplained) {
  hub.not_found.insert("m-Q4_K_M.gguf");
  expect_error([&] { get(req()); }, ErrorCode::NOT_FOUND, {"m-Q4_K_M.gguf", "not found"});
  EXPECT_FALSE(fs::exists(tmp / "m-Q4_K_M.gguf"));
}

TEST_F(DownloadFixture, ServerErrorThenSuccess) {
  hub.fail_500 = 2;
  get(req());
  EXPECT_EQ(read_file(tmp / "m-Q4_K_M.gguf"), content);
  EXPECT_EQ(hub.file_requests.load(), 3);
}

TEST_F(DownloadFixture, GivesUpAfterRetries) {
  hub.fail_500 = 100;
  expect_error([&] { get(req()); }, ErrorCode::IO, {"giving up after 4 failed attempts", "HTTP 500", "rerun pull"});
}

TEST_F(DownloadFixture, ServerIgnoringRangeRestartsFromZero) {
  write_file(tmp / "m-Q4_K_M.gguf.part", content.substr(0, 70000));
  hub.ignore_range = true;
  get(req());
  EXPECT_EQ(read_file(tmp / "m-Q4_K_M.gguf"), content);
}

TEST_F(DownloadFixture, DiskFullIsReportedAsSuch) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  fs::create_symlink("/dev/full", tmp / "m-Q4_K_M.gguf.part");  // every write fails with ENOSPC
  expect_error([&] { get(req()); }, ErrorCode::IO, {"disk full while writing", "resumes where it stopped"});
  EXPECT_FALSE(fs::exists(tmp / "m-Q4_K_M.gguf"));
}

TEST_F(DownloadFixture, SlowLinkShowsPlainProgressLines) {
  hub.bytes_per_second = 800 * 1024;  // ~0.75 s for the file
  std::FILE* log = std::tmpfile();
  Progress progress(log, /*interactive=*/false, /*plain_interval_s=*/0.2);
  download_file(client.http(), req(), fast, &progress, [](const HttpResponse&) {});
  std::rewind(log);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), log));
  std::fclose(log);
  EXPECT_NE(text.find("downloading m-Q4_K_M.gguf (600 KiB)"), std::string::npos) << text;
  EXPECT_NE(text.find("% "), std::string::npos) << text;  // at least one periodic line
  EXPECT_NE(text.find("ETA"), std::string::npos) << text;
  EXPECT_NE(text.find("done m-Q4_K_M.gguf"), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos);  // no bar redraws in plain mode
}

TEST_F(DownloadFixture, TerminalShowsALiveBar) {
  hub.bytes_per_second = 2 * 1024 * 1024;  // ~0.3 s
  std::FILE* log = std::tmpfile();
  Progress progress(log, /*interactive=*/true);
  download_file(client.http(), req(), fast, &progress, [](const HttpResponse&) {});
  std::rewind(log);
  std::string text(1 << 16, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), log));
  std::fclose(log);
  EXPECT_GE(std::count(text.begin(), text.end(), '\r'), 2) << "the bar is redrawn in place";
  EXPECT_NE(text.find("\033[K"), std::string::npos);
  EXPECT_NE(text.find("] 100% 600 KiB / 600 KiB"), std::string::npos) << text;
  EXPECT_NE(text.find("/s  ETA"), std::string::npos);
  EXPECT_EQ(text.back(), '\n');  // the final state stays on screen
}

TEST(Progress, FormatsBinaryUnits) {
  EXPECT_EQ(format_bytes(17), "17 B");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(int64_t(576) << 20), "576 MiB");
  EXPECT_EQ(format_bytes(int64_t(5) << 30), "5.00 GiB");
}

TEST(HubApi, ParsesModelInfoAsTheHubSendsIt) {
  // Shape of GET /api/models/{repo}?blobs=true (huggingface_hub RepoSibling / BlobLfsInfo).
  RepoInfo r = parse_repo_info(R"({"_id":"x","id":"Qwen/Qwen3-4B-GGUF","sha":"abc","gated":false,
    "siblings":[{"rfilename":".gitattributes","blobId":"b1","size":1570},
                {"rfilename":"Qwen3-4B-Q4_K_M.gguf","blobId":"b2","size":2497280256,
                 "lfs":{"sha256":"7485FA1A2B3C4D5E6F708192A3B4C5D6E7F8091A2B3C4D5E6F708192A3B4C5D6","size":2497280256,"pointerSize":135}}]})",
                               "test");
  EXPECT_EQ(r.id, "Qwen/Qwen3-4B-GGUF");
  ASSERT_EQ(r.files.size(), 2u);
  EXPECT_EQ(r.files[0].sha256, "");
  EXPECT_EQ(r.files[1].size, 2497280256);
  EXPECT_EQ(r.files[1].sha256, "7485fa1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6");
  EXPECT_EQ(parse_repo_info(R"({"siblings":[],"gated":"manual"})", "t").gated, "manual");
  expect_error([] { parse_repo_info("[1]", "info for a/b"); }, ErrorCode::INVALID_ARGUMENT, {"info for a/b", "<root>"});
  expect_error([] { parse_repo_info(R"({"siblings":{}})", "t"); }, ErrorCode::INVALID_ARGUMENT, {"siblings"});
  expect_error([] { parse_repo_info(R"({"siblings":[{"rfilename":"a","lfs":{"sha256":"xyz"}}]})", "t"); },
               ErrorCode::INVALID_ARGUMENT, {"lfs.sha256", "64 hex"});
  expect_error([] { parse_repo_info("not json", "t"); }, ErrorCode::INVALID_ARGUMENT, {"not JSON"});
}

TEST(HubApi, TokenPrecedence) {
  TempDir tmp;
  write_file(tmp / "hf/token", "hf_from_file\n");
  testing::ScopedEnv a("HF_TOKEN", std::nullopt), b("HUGGING_FACE_HUB_TOKEN", std::nullopt),
      c("HF_TOKEN_PATH", std::nullopt), d("HF_HOME", tmp / "hf");
  EXPECT_EQ(hub_token_from_env(""), "hf_from_file");
  {
    testing::ScopedEnv e("HUGGING_FACE_HUB_TOKEN", "hf_legacy");
    EXPECT_EQ(hub_token_from_env(""), "hf_legacy");
    testing::ScopedEnv f("HF_TOKEN", "hf_env");
    EXPECT_EQ(hub_token_from_env(""), "hf_env");
    EXPECT_EQ(hub_token_from_env("hf_flag"), "hf_flag");
  }
  testing::ScopedEnv g("HF_HOME", tmp / "nowhere"), h("HOME", tmp / "nohome");
  EXPECT_EQ(hub_token_from_env(""), "");
  EXPECT_EQ(hub_endpoint_from_env().rfind("http", 0), 0u);
}

TEST(HubApi, ModelInfoRetriesThenExplainsFailures) {
  FakeHub hub;
  hub.add_repo({"ns/repo", "4f1c0e0b5a7d9e2c3b4a5f6e7d8c9b0a1f2e3d4c", {{"a-Q4_0.gguf", "xx", true}}, ""});
  HubClient client(hub.endpoint() + "/", "");
  client.set_retry({4, 0.01, 0.05});
  hub.fail_500_info = 2;
  RepoInfo info = client.model_info("ns/repo");
  EXPECT_EQ(info.files.at(0).sha256, sha256_hex("xx"));
  EXPECT_EQ(info.sha, "4f1c0e0b5a7d9e2c3b4a5f6e7d8c9b0a1f2e3d4c");
  expect_error([&] { client.model_info("ns/missing"); }, ErrorCode::NOT_FOUND, {"repository not found", "pass a token"});
  expect_error([&] { client.model_info("ns/repo", "v9"); }, ErrorCode::NOT_FOUND, {"revision not found"});
  EXPECT_EQ(client.model_info("ns/repo", "4f1c0e0b5a7d9e2c3b4a5f6e7d8c9b0a1f2e3d4c").files.size(), 1u);
  HubClient dead("http://127.0.0.1:1", "");
  dead.set_retry({2, 0.01, 0.01});
  expect_error([&] { dead.model_info("ns/repo"); }, ErrorCode::IO, {"cannot reach the hub", "HF_ENDPOINT"});
  EXPECT_EQ(client.read_range("ns/repo", "main", "a-Q4_0.gguf", 1, 5), "x");  // short at end of file
}

// Only failures that may go away are retried (issue 21: a DNS failure or a refused connection was
// retried for 31 s in silence); each retry of a metadata request is announced to the notifier.
TEST(HubApi, OnlyTransientFailuresAreRetriedAndEachRetryIsAnnounced) {
  auto curl_failure = [](int code) {
    HttpResponse r;
    r.curl_code = code;
    return r;
  };
  EXPECT_FALSE(is_transient(curl_failure(CURLE_COULDNT_RESOLVE_HOST)));
  EXPECT_FALSE(is_transient(curl_failure(CURLE_COULDNT_CONNECT)));
  EXPECT_TRUE(is_transient(curl_failure(CURLE_OPERATION_TIMEDOUT)));
  EXPECT_TRUE(is_transient(curl_failure(CURLE_RECV_ERROR)));
  EXPECT_TRUE(is_transient(curl_failure(CURLE_PARTIAL_FILE)));
  HttpResponse status;
  for (long code : {429L, 500L, 503L}) {
    status.status = code;
    EXPECT_TRUE(is_transient(status)) << code;
  }
  for (long code : {400L, 401L, 404L}) {
    status.status = code;
    EXPECT_FALSE(is_transient(status)) << code;
  }

  // A refused connection fails on the first attempt, without waiting for the backoff.
  HubClient dead("http://127.0.0.1:1", "");
  dead.set_retry({6, 5.0, 5.0});
  std::vector<std::string> notes;
  dead.set_notify([&](const std::string& line) { notes.push_back(line); });
  const auto t0 = std::chrono::steady_clock::now();
  expect_error([&] { dead.model_info("ns/repo"); }, ErrorCode::IO, {"cannot reach the hub", "HF_ENDPOINT"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 4.0);
  EXPECT_TRUE(notes.empty());

  FakeHub hub;
  hub.add_repo({"ns/repo", "4f1c0e0b5a7d9e2c3b4a5f6e7d8c9b0a1f2e3d4c", {{"a-Q4_0.gguf", "xx", true}}, ""});
  HubClient client(hub.endpoint(), "");
  client.set_retry({4, 0.01, 0.05});
  client.set_notify([&](const std::string& line) { notes.push_back(line); });
  hub.fail_500_info = 2;
  EXPECT_EQ(client.model_info("ns/repo").files.size(), 1u);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("model info for ns/repo: HTTP 500; retrying in 0.0 s (attempt 2 of 4)"), std::string::npos)
      << notes[0];
  EXPECT_NE(notes[1].find("(attempt 3 of 4)"), std::string::npos) << notes[1];
}

}  // namespace
}  // namespace oxyd::hub
