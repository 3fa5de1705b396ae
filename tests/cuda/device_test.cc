// CUDA runtime layer: the availability probe (runs everywhere, GPU or not), device query,
// device memory round trips (sync, async on streams, pinned, device-to-device), RAII moves,
// and errors surfacing as oxyd::Error with the CUDA error name and call site.
#include <gtest/gtest.h>

#include <numeric>
#include <thread>

#include "backend/cuda/device.h"
#include "core/error.h"
#include "cuda_test_util.h"

namespace oxyd::backend::cuda {
namespace {

// The one test that also runs without a GPU: the probe must answer false cleanly there.
TEST(CudaProbe, AnswersWithoutAborting) {
  const int n = device_count();
  EXPECT_GE(n, 0);
  EXPECT_EQ(cuda_available(), n > 0);
  try {
    (void)device_info(n);  // one past the last device (device 0 when there is none)
    FAIL() << "device_info past the last device must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::INVALID_ARGUMENT);
  }
}

TEST(CudaDevice, Query) {
  OXYD_REQUIRE_CUDA();
  const DeviceInfo info = device_info(0);
  EXPECT_FALSE(info.name.empty());
  EXPECT_GE(info.cc_major, 7);
  EXPECT_GT(info.num_sms, 0);
  EXPECT_GT(info.total_bytes, int64_t(1) << 30);
  EXPECT_GT(info.free_bytes, 0);
  EXPECT_LE(info.free_bytes, info.total_bytes);
  EXPECT_GE(info.max_threads_per_block, 1024);
  std::printf("device 0: %s, sm_%d%d, %d SMs, %.1f GiB (%.1f free), L2 %.0f MiB\n",
              info.name.c_str(), info.cc_major, info.cc_minor, info.num_sms,
              double(info.total_bytes) / (1 << 30), double(info.free_bytes) / (1 << 30),
              double(info.l2_bytes) / (1 << 20));
  EXPECT_NO_THROW(set_device(0));
}

TEST(CudaDevice, ErrorsCarryCudaNameAndCallSite) {
  OXYD_REQUIRE_CUDA();
  try {
    set_device(device_count() + 7);
    FAIL() << "set_device on a missing device must throw";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cudaErrorInvalidDevice"), std::string::npos) << msg;
    EXPECT_NE(msg.find("device.cu"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cudaSetDevice"), std::string::npos) << msg;
  }
  // The failed call leaves the runtime usable.
  EXPECT_NO_THROW(device_synchronize());
}

TEST(CudaMemory, OutOfMemoryIsAnError) {
  OXYD_REQUIRE_CUDA();
  try {
    DeviceBuffer huge(size_t(1) << 50);  // 1 PiB
    FAIL() << "a 1 PiB cudaMalloc must fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OUT_OF_MEMORY) << e.what();
  }
  DeviceBuffer ok(1024);  // and the device still allocates afterwards
  EXPECT_NE(ok.data(), nullptr);
}

TEST(CudaMemory, SyncRoundTrip) {
  OXYD_REQUIRE_CUDA();
  const size_t n = (size_t(1) << 20) + 3;  // odd size: no hidden alignment assumptions
  std::vector<uint8_t> src(n), back(n, 0);
  for (size_t i = 0; i < n; ++i) src[i] = uint8_t(i * 2654435761u >> 13);
  DeviceBuffer a(n), b(n);
  copy_to_device(a.data(), src.data(), n);
  copy_device_to_device(b.data(), a.data(), n);
  copy_to_host(back.data(), b.data(), n);
  EXPECT_EQ(src, back);
}

TEST(CudaMemory, MoveAndView) {
  OXYD_REQUIRE_CUDA();
  DeviceBuffer a(4096);
  void* p = a.data();
  DeviceBuffer b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.size(), 0u);
  DeviceBuffer c(16);
  c = std::move(b);  // frees c's old memory
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c.size(), 4096u);
  const Tensor t = c.view(DType::F32, {32, 32});
  EXPECT_EQ(t.device, Device::CUDA);
  EXPECT_EQ(t.data, p);
  EXPECT_EQ(t.nbytes(), 4096);
  EXPECT_THROW(c.view(DType::F32, {33, 32}), Error);
  DeviceBuffer empty(0);
  EXPECT_EQ(empty.data(), nullptr);
}

TEST(CudaStream, AsyncRoundTripOnTwoStreams) {
  OXYD_REQUIRE_CUDA();
  const size_t n = size_t(4) << 20;
  Stream s1, s2;
  ASSERT_NE(s1.handle(), s2.handle());
  PinnedBuffer h1(n), h2(n), back1(n), back2(n);
  for (size_t i = 0; i < n; ++i) {
    h1.as<uint8_t>()[i] = uint8_t(i * 7 + 1);
    h2.as<uint8_t>()[i] = uint8_t(i * 13 + 5);
  }
  DeviceBuffer d1(n), d2(n);
  copy_to_device_async(d1.data(), h1.data(), n, s1);
  copy_to_device_async(d2.data(), h2.data(), n, s2);
  memset_async(d2.data(), 0xab, 64, s2);  // ordered after s2's copy
  copy_to_host_async(back1.data(), d1.data(), n, s1);
  copy_to_host_async(back2.data(), d2.data(), n, s2);
  s1.synchronize();
  s2.synchronize();
  EXPECT_TRUE(s1.done());
  EXPECT_TRUE(s2.done());
  EXPECT_EQ(std::memcmp(back1.data(), h1.data(), n), 0);
  for (size_t i = 0; i < 64; ++i) ASSERT_EQ(back2.as<uint8_t>()[i], 0xab) << i;
  EXPECT_EQ(std::memcmp(back2.as<uint8_t>() + 64, h2.as<uint8_t>() + 64, n - 64), 0);

  Stream moved(std::move(s1));
  EXPECT_EQ(s1.handle(), nullptr);
  copy_to_host_async(back1.data(), d2.data(), n, moved);
  moved.synchronize();
  EXPECT_EQ(std::memcmp(back1.data(), back2.data(), n), 0);
}

// An event recorded on one stream orders a second stream's work after it, and times it.
TEST(CudaStream, EventOrdersStreamsAndTimes) {
  OXYD_REQUIRE_CUDA();
  const size_t n = size_t(64) << 20;  // 64 MiB: long enough that a missing wait would show
  Stream producer, consumer;
  PinnedBuffer src(n), back(n);
  for (size_t i = 0; i < n; i += 4096) src.as<uint8_t>()[i] = uint8_t(i >> 12);
  DeviceBuffer a(n), b(n);
  memset_async(b.data(), 0, n, consumer);
  consumer.synchronize();
  Event start, copied;
  start.record(producer);
  copy_to_device_async(a.data(), src.data(), n, producer);
  copied.record(producer);
  consumer.wait(copied);
  copy_device_to_device_async(b.data(), a.data(), n, consumer);
  copy_to_host_async(back.data(), b.data(), n, consumer);
  consumer.synchronize();
  for (size_t i = 0; i < n; i += 4096) ASSERT_EQ(back.as<uint8_t>()[i], uint8_t(i >> 12)) << i;
  copied.synchronize();
  const float ms = copied.elapsed_ms(start);
  EXPECT_GT(ms, 0.0f);
  std::printf("64 MiB host->device (pinned): %.3f ms, %.1f GB/s\n", ms, double(n) / ms / 1e6);
}

// Streams are usable from several host threads at once (one engine thread per model).
TEST(CudaStream, ConcurrentThreads) {
  OXYD_REQUIRE_CUDA();
  constexpr int kThreads = 4;
  constexpr size_t n = size_t(1) << 20;
  std::vector<int> ok(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &ok] {
      try {
        set_device(0);
        Stream s;
        std::vector<uint8_t> src(n, uint8_t(t + 1)), back(n, 0);
        DeviceBuffer d(n);
        for (int rep = 0; rep < 8; ++rep) {
          copy_to_device_async(d.data(), src.data(), n, s);
          copy_to_host_async(back.data(), d.data(), n, s);
          s.synchronize();
        }
        ok[t] = back == src;
      } catch (const Error& e) {
        std::fprintf(stderr, "thread %d: %s\n", t, e.what());
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(ok[t]) << "thread " << t;
}

}  // namespace
}  // namespace oxyd::backend::cuda
