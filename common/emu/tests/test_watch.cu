// The watch (gpulab/emu/watch.hpp): the evidence the grader reads about one call of a student's
// host function - which bytes kernels read and wrote, the traffic and launches, host copies into
// device memory with their file:line, and host code that dereferenced device memory (this file is
// a traced kernel file, like a student's).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emu_test_util.hpp"
#include "gpulab/emu/metrics.hpp"
#include "gpulab/emu/watch.hpp"

using gpulab::DeviceBuffer;
using gpulab::launch;
namespace emu = gpulab::emu;

// ---- kernels ------------------------------------------------------------------------------

/// out[i] = in[i % (n/2)] + in[i % (n/2)]: reads the first half of `in`, each element twice.
__global__ void read_first_half_twice(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i % (n / 2)] + in[i % (n / 2)];
}

__global__ void write_even_elements(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && i % 2 == 0) out[i] = 1.0f;
}

__global__ void copy_floats(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

__global__ void count_into(int* counter) { atomicAdd(counter, 1); }

/// Does nothing with memory: the decoy a cheating submission launches.
__global__ void decoy(float*) {}

// A block sum: shuffles inside each warp (log2(warpSize) of them), one barrier, then warp 0 adds
// the warps' sums with one more round of shuffles.
__global__ void block_sum(const float* in, float* out) {
  __shared__ float warp_sums[64];
  float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down_sync(gpulab::full_mask(), v, o);
  if (threadIdx.x % warpSize == 0) warp_sums[threadIdx.x / warpSize] = v;
  __syncthreads();
  if (threadIdx.x >= warpSize) return;
  v = threadIdx.x < blockDim.x / warpSize ? warp_sums[threadIdx.x] : 0.0f;
  for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down_sync(gpulab::full_mask(), v, o);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// ---- host code of a "student's" file --------------------------------------------------------

/// Computes on the host what a kernel should have computed, and puts it in place with a copy.
void cheat_with_a_copy(const float* d_in, float* d_out, int n, int& line) {
  std::vector<float> h(static_cast<std::size_t>(n));
  gpulab::copy_to_host(h.data(), d_in, h.size() * sizeof(float));
  for (float& x : h) x *= 2.0f;
  launch(decoy, 1, 32, 0, d_out);
  gpulab::copy_to_device(d_out, h.data(), h.size() * sizeof(float)); line = __LINE__;
}

class Watch : public EmuTest {
 protected:
  void SetUp() override {
    EmuTest::SetUp();
    emu::reset_findings();
    emu::reset_metrics();
  }
  void TearDown() override {
    emu::end_watch();
    EmuTest::TearDown();
  }
  static std::vector<emu::Finding> of_kind(const std::string& kind) {
    std::vector<emu::Finding> out;
    for (const auto& f : emu::findings())
      if (f.kind == kind) out.push_back(f);
    return out;
  }
};
INSTANTIATE_TEST_SUITE_P(WarpSizes, Watch, ::testing::Values(32, 64),
                         [](const auto& info) { return "warp" + std::to_string(info.param); });

#define REQUIRE_TRACING() \
  if (!emu::watch_available()) GTEST_SKIP() << "no access tracing in this build (not clang)"

TEST_P(Watch, IsAvailableExactlyWhenAccessesAreTraced) {
  EXPECT_EQ(emu::watch_available(), emu::metrics_available());
  if (emu::watch_available()) return;
  // Without tracing (a g++ build) the kernel queries cannot know: 0 means "not measured".
  DeviceBuffer<float> in(std::vector<float>(256, 1.0f)), out(256);
  emu::begin_watch();
  launch(copy_floats, 2, 128, 0, in.data(), out.data(), 256);
  emu::end_watch();
  EXPECT_EQ(out.download(), std::vector<float>(256, 1.0f));
  EXPECT_EQ(emu::kernel_launches(), 1) << "launches are counted in every build";
  EXPECT_EQ(emu::kernel_written_bytes(out.data(), out.bytes()), 0u);
  EXPECT_EQ(emu::kernel_load_sectors(), 0);
}

TEST_P(Watch, ReadBytesCountEachByteOnce) {
  REQUIRE_TRACING();
  const int n = 1000;
  DeviceBuffer<float> in(std::vector<float>(n, 1.0f)), out(n);
  emu::begin_watch();
  launch(read_first_half_twice, (n + 127) / 128, 128, 0, in.data(), out.data(), n);
  emu::end_watch();
  EXPECT_EQ(emu::kernel_read_bytes(in.data(), in.bytes()), in.bytes() / 2);
  EXPECT_EQ(emu::kernel_read_bytes(in.data() + n / 2, in.bytes() / 2), 0u);
  EXPECT_EQ(emu::kernel_read_bytes(in.data() + 10, 40), 40u) << "a sub-range counts its own bytes";
  EXPECT_EQ(emu::kernel_written_bytes(out.data(), out.bytes()), out.bytes());
  EXPECT_EQ(emu::kernel_read_bytes(out.data(), out.bytes()), 0u);
  EXPECT_EQ(emu::kernel_written_bytes(in.data(), in.bytes()), 0u);
  EXPECT_EQ(emu::kernel_launches(), 1);
  EXPECT_EQ(out.download(), std::vector<float>(n, 2.0f));
}

TEST_P(Watch, WrittenBytesAreTheBytesKernelsStored) {
  REQUIRE_TRACING();
  WorkerCount workers(4);  // blocks on several workers mark one bitmap
  const int n = 64 * 1024;
  DeviceBuffer<float> out(n);
  emu::begin_watch();
  launch(write_even_elements, n / 256, 256, 0, out.data(), n);
  emu::end_watch();
  EXPECT_EQ(emu::kernel_written_bytes(out.data(), out.bytes()), out.bytes() / 2);
  EXPECT_EQ(emu::kernel_written_bytes(out.data(), 4), 4u);
  EXPECT_EQ(emu::kernel_written_bytes(out.data() + 1, 4), 0u);
  EXPECT_EQ(emu::kernel_written_bytes(out.data(), out.bytes() + 1), 0u) << "past the allocation: 0";
}

TEST_P(Watch, AtomicsCountAsReadAndWritten) {
  REQUIRE_TRACING();
  DeviceBuffer<int> counter(std::vector<int>{0});
  emu::begin_watch();
  launch(count_into, 2, 64, 0, counter.data());
  emu::end_watch();
  EXPECT_EQ(emu::kernel_read_bytes(counter.data(), 4), 4u);
  EXPECT_EQ(emu::kernel_written_bytes(counter.data(), 4), 4u);
  EXPECT_EQ(counter.download(), std::vector<int>{128});
}

TEST_P(Watch, TrafficIsTheMetricsSectorsAndLaunchesAreCounted) {
  REQUIRE_TRACING();
  const int n = 4096;
  DeviceBuffer<float> in(std::vector<float>(n, 3.0f)), out(n);
  emu::begin_watch();
  launch(copy_floats, n / 128, 128, 0, in.data(), out.data(), n);
  launch(copy_floats, n / 128, 128, 0, in.data(), out.data(), n);
  emu::end_watch();
  EXPECT_EQ(emu::kernel_launches(), 2);
  EXPECT_EQ(emu::kernel_load_sectors(), 2 * n * 4 / 32);  // contiguous floats: 4 per lane, 32 per sector
  EXPECT_EQ(emu::kernel_store_sectors(), 2 * n * 4 / 32);
  long long loads = 0, stores = 0;
  for (const auto& m : emu::metrics_by_line())
    if (!m.shared) (m.store ? stores : loads) += m.units;
  EXPECT_EQ(emu::kernel_load_sectors(), loads);
  EXPECT_EQ(emu::kernel_store_sectors(), stores);
}

TEST_P(Watch, EachLaunchShapeAndItsSectorsAreRecordedInOrder) {
  REQUIRE_TRACING();
  WorkerCount workers(4);  // the sectors of a launch come from blocks on several workers
  const int n = 4096;
  DeviceBuffer<float> in(std::vector<float>(n, 3.0f)), out(n);
  emu::begin_watch();
  launch(copy_floats, n / 128, 128, 0, in.data(), out.data(), n);      // 32 blocks of 128
  launch(copy_floats, 1, 256, 0, in.data(), out.data(), 256);           // 1 block, 256 floats
  emu::end_watch();
  const std::vector<emu::LaunchShape> shapes = emu::launch_shapes();
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0].blocks, 32);
  EXPECT_EQ(shapes[0].threads_per_block, 128);
  EXPECT_EQ(shapes[0].sectors, 2 * n * 4 / 32);  // its loads and stores
  EXPECT_EQ(shapes[1].blocks, 1);
  EXPECT_EQ(shapes[1].threads_per_block, 256);
  EXPECT_EQ(shapes[1].sectors, 2 * 256 * 4 / 32);
  EXPECT_EQ(shapes[0].sectors + shapes[1].sectors, emu::kernel_load_sectors() + emu::kernel_store_sectors());
  emu::begin_watch();
  EXPECT_TRUE(emu::launch_shapes().empty()) << "a new watch starts with no launches";
  emu::end_watch();
}

// Block 0 copies everything; the other blocks return at once.
__global__ void copy_in_block_zero(const float* in, float* out, int n) {
  if (blockIdx.x != 0) return;
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = in[i];
}

TEST_P(Watch, EachLaunchRecordsItsBusiestBlocksSectors) {
  // How evenly a launch's blocks share its sectors: a grid of 32 blocks that all copy their part,
  // and one whose block 0 copies it all. Blocks end on several workers.
  REQUIRE_TRACING();
  WorkerCount workers(4);
  const int n = 4096;
  DeviceBuffer<float> in(std::vector<float>(n, 3.0f)), out(n);
  emu::begin_watch();
  launch(copy_floats, n / 128, 128, 0, in.data(), out.data(), n);
  launch(copy_in_block_zero, n / 128, 128, 0, in.data(), out.data(), n);
  launch(copy_floats, 1, 128, 0, in.data(), out.data(), 128);
  emu::end_watch();
  const std::vector<emu::LaunchShape> shapes = emu::launch_shapes();
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[0].max_block_sectors, 2 * 128 * 4 / 32) << "each block copies 128 floats";
  EXPECT_EQ(shapes[1].max_block_sectors, shapes[1].sectors) << "block 0 moves every sector";
  EXPECT_EQ(shapes[1].sectors, 2 * n * 4 / 32);
  EXPECT_EQ(shapes[2].max_block_sectors, 2 * 128 * 4 / 32) << "the last launch's, read while it is the last";
}

TEST_P(Watch, EachLaunchHasItsOwnCountsForAPerformanceModel) {
  // Two launches with different traffic: each launch's counts are its own, not the watch's.
  REQUIRE_TRACING();
  WorkerCount workers(4);
  const int warp = GetParam(), blocks = 4, threads = 128, n = blocks * threads;
  DeviceBuffer<float> in(std::vector<float>(n, 1.0f)), out(n), sums(blocks);
  emu::begin_watch();
  launch(copy_floats, blocks, threads, 0, in.data(), out.data(), n);
  launch(block_sum, blocks, threads, 48, in.data(), sums.data());
  emu::end_watch();
  const std::vector<emu::LaunchShape> shapes = emu::launch_shapes();
  ASSERT_EQ(shapes.size(), 2u);
  const emu::LaunchCounts& copy = shapes[0].counts;
  const long long warps = static_cast<long long>(blocks) * threads / warp;
  // Global requests as the metrics count them: per 32 lanes at either warp size.
  const long long requests = static_cast<long long>(n) / 32;
  EXPECT_EQ(copy.global_load_requests, requests);
  EXPECT_EQ(copy.global_store_requests, requests);
  EXPECT_EQ(copy.global_load_sectors, n * 4 / 32);
  EXPECT_EQ(copy.global_load_lines, n * 4 / 128);  // a warp's contiguous floats: whole 128-byte lines
  EXPECT_EQ(copy.global_store_lines, n * 4 / 128);
  EXPECT_EQ(copy.shared_requests, 0);
  EXPECT_EQ(copy.barriers, 0);
  EXPECT_EQ(copy.shuffles, 0);
  EXPECT_EQ(shapes[0].dynamic_shared_bytes, 0);
  const emu::LaunchCounts& sum = shapes[1].counts;
  EXPECT_EQ(shapes[1].dynamic_shared_bytes, 48);
  EXPECT_EQ(sum.barriers, blocks);
  EXPECT_EQ(sum.global_load_requests, requests);
  EXPECT_EQ(sum.global_store_sectors, blocks);  // one float per block, a sector each
  // Shared: each warp's lane 0 stores its sum (a request per warp), then the first warp loads.
  EXPECT_EQ(sum.shared_requests, warps + blocks);
  EXPECT_EQ(sum.shared_load_requests, blocks);  // the first warp's one load per block
  EXPECT_GE(sum.shared_load_wavefronts, sum.shared_load_requests);
  EXPECT_LE(sum.shared_load_wavefronts, sum.shared_wavefronts);
  EXPECT_GE(sum.shared_load_lanes, static_cast<long long>(blocks) * (threads / warp));
  EXPECT_LE(sum.shared_load_lanes_under_global, sum.shared_load_lanes);
  EXPECT_EQ(shapes[0].counts.global_load_sectors + shapes[1].counts.global_load_sectors, emu::kernel_load_sectors());
}

TEST_P(Watch, BarriersAndShufflesAreCountedPerBlockAndPerWarp) {
  // Counted in every build (they need no access tracing).
  const int warp = GetParam(), blocks = 3, threads = 128, warps = threads / warp;
  int log2_warp = 0;
  for (int w = warp; w > 1; w /= 2) ++log2_warp;
  DeviceBuffer<float> in(std::vector<float>(blocks * threads, 1.0f)), out(blocks);
  emu::begin_watch();
  launch(block_sum, blocks, threads, 0, in.data(), out.data());
  emu::end_watch();
  EXPECT_EQ(out.download(), std::vector<float>(blocks, static_cast<float>(threads)));
  EXPECT_EQ(emu::kernel_barriers(), blocks);
  EXPECT_EQ(emu::kernel_shuffles(), static_cast<long long>(blocks) * (warps + 1) * log2_warp);
  emu::begin_watch();
  emu::end_watch();
  EXPECT_EQ(emu::kernel_barriers(), 0);
  EXPECT_EQ(emu::kernel_shuffles(), 0);
}

TEST_P(Watch, BeginWatchClearsThePreviousOne) {
  REQUIRE_TRACING();
  const int n = 256;
  DeviceBuffer<float> in(std::vector<float>(n, 1.0f)), out(n);
  emu::begin_watch();
  launch(copy_floats, 2, 128, 0, in.data(), out.data(), n);
  gpulab::copy_to_device(out.data(), in.data(), 4);
  emu::end_watch();
  emu::begin_watch();
  emu::end_watch();
  EXPECT_EQ(emu::kernel_launches(), 0);
  EXPECT_EQ(emu::kernel_load_sectors(), 0);
  EXPECT_EQ(emu::kernel_read_bytes(in.data(), in.bytes()), 0u);
  EXPECT_EQ(emu::kernel_written_bytes(out.data(), out.bytes()), 0u);
  EXPECT_TRUE(emu::host_writes().empty());
}

TEST_P(Watch, AHostCopyIntoTheOutputIsAHostWriteWithItsLine) {
  const int n = 300;
  DeviceBuffer<float> in(std::vector<float>(n, 1.5f)), out(n);
  int line = 0;
  emu::begin_watch();
  cheat_with_a_copy(in.data(), out.data(), n, line);
  emu::end_watch();
  EXPECT_EQ(out.download(), std::vector<float>(n, 3.0f));
  EXPECT_EQ(emu::kernel_launches(), 1);
  if (emu::watch_available()) {
    EXPECT_EQ(emu::kernel_written_bytes(out.data(), out.bytes()), 0u) << "the decoy wrote nothing";
    EXPECT_EQ(emu::kernel_read_bytes(in.data(), in.bytes()), 0u);
  }
  const auto writes = emu::host_writes();
  ASSERT_EQ(writes.size(), 1u) << "copy_to_host is not a write into device memory";
  EXPECT_EQ(writes[0].dst, reinterpret_cast<std::uintptr_t>(out.data()));
  EXPECT_EQ(writes[0].bytes, out.bytes());
  EXPECT_EQ(writes[0].how, "copy_to_device");
  EXPECT_EQ(writes[0].file, __FILE__);
  EXPECT_EQ(writes[0].line, line);
}

TEST_P(Watch, NoKernelMeansNoLaunches) {
  DeviceBuffer<float> out(64);
  emu::begin_watch();
  gpulab::fill_bytes(out.data(), 0, out.bytes()); const int line = __LINE__;
  emu::end_watch();
  EXPECT_EQ(emu::kernel_launches(), 0);
  EXPECT_EQ(emu::kernel_load_sectors() + emu::kernel_store_sectors(), 0);
  const auto writes = emu::host_writes();
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].how, "fill_bytes");
  EXPECT_EQ(writes[0].line, line);
  EXPECT_EQ(writes[0].bytes, out.bytes());
}

TEST_P(Watch, CudaRuntimeShimCopiesAreHostWrites) {
  const int n = 32;
  std::vector<float> h(n, 7.0f), back(n);
  float* d = nullptr;
  float* d2 = nullptr;
  ASSERT_EQ(cudaMalloc(&d, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d2, n * sizeof(float)), cudaSuccess);
  emu::begin_watch();
  cudaMemcpy(d, h.data(), n * sizeof(float), cudaMemcpyHostToDevice); const int l1 = __LINE__;
  cudaMemset(d2, 0, sizeof(float)); const int l2 = __LINE__;
  cudaMemcpyAsync(d2 + 1, d, sizeof(float), cudaMemcpyDeviceToDevice); const int l3 = __LINE__;
  cudaMemcpy(back.data(), d, sizeof(float), cudaMemcpyDeviceToHost);  // into the host: not listed
  emu::end_watch();
  EXPECT_EQ(back[0], 7.0f);
  const auto w = emu::host_writes();
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].how, "cudaMemcpy");
  EXPECT_EQ(w[0].line, l1);
  EXPECT_EQ(w[0].file, __FILE__);
  EXPECT_EQ(w[0].bytes, n * sizeof(float));
  EXPECT_EQ(w[1].how, "cudaMemset");
  EXPECT_EQ(w[1].line, l2);
  EXPECT_EQ(w[2].how, "cudaMemcpyAsync (device to device)");
  EXPECT_EQ(w[2].line, l3);
  EXPECT_EQ(w[2].dst, reinterpret_cast<std::uintptr_t>(d2 + 1));
  // Small constant-size copies run in the library, not as traced loads in this file.
  EXPECT_TRUE(emu::host_accesses().empty());
  EXPECT_TRUE(of_kind("host-access").empty());
  cudaFree(d);
  cudaFree(d2);
}

TEST_P(Watch, ARowByRowUploadIsOneHostWrite) {
  DeviceBuffer<float> out(16 * 8);
  std::vector<float> row(8, 1.0f);
  emu::begin_watch();
  for (int r = 0; r < 16; ++r) gpulab::copy_to_device(out.data() + 8 * r, row.data(), 8 * sizeof(float));
  emu::end_watch();
  const auto w = emu::host_writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].bytes, out.bytes());
}

TEST_P(Watch, HostCodeDereferencingDevicememoryIsSeenAndReported) {
  REQUIRE_TRACING();
  DeviceBuffer<float> sums(std::vector<float>(8, 2.0f));
  emu::label_device_memory(sums.data(), "sums");
  float* d = sums.data();
  emu::begin_watch();
  float total = 0;
  int read_line = 0, write_line = 0;
  for (int i = 0; i < 3; ++i) {
    total += d[i + 5]; read_line = __LINE__;
  }
  d[0] = total; write_line = __LINE__;
  emu::end_watch();
  EXPECT_EQ(total, 6.0f) << "host code is not stopped: on the emulator the access works";
  EXPECT_EQ(sums.download()[0], 6.0f);
  const auto acc = emu::host_accesses();
  ASSERT_EQ(acc.size(), 2u);
  EXPECT_EQ(acc[0].line, read_line);
  EXPECT_FALSE(acc[0].store);
  EXPECT_EQ(acc[0].count, 3);
  EXPECT_EQ(acc[0].file, __FILE__);
  EXPECT_EQ(acc[1].line, write_line);
  EXPECT_TRUE(acc[1].store);
  EXPECT_EQ(acc[1].count, 1);
  const auto f = of_kind("host-access");
  ASSERT_EQ(f.size(), 2u);
  const std::string read = f[0].line == read_line ? f[0].message : f[1].message;
  EXPECT_EQ(read, std::string(__FILE__) + ":" + std::to_string(read_line) +
                      ": host code read device memory directly (4 bytes at sums + 20): on a GPU the host "
                      "cannot dereference a device pointer (illegal address). Copy it with "
                      "gpulab::copy_to_host / cudaMemcpy first. (seen 3 times)");
}

TEST_P(Watch, HostAccessIsAFindingWithoutAWatchToo) {
  REQUIRE_TRACING();
  emu::begin_watch();  // an empty watch, ended: no host accesses recorded by the tests before
  emu::end_watch();
  DeviceBuffer<int> flags(std::vector<int>(4, 1));
  const int* d = flags.data();
  const int v = d[2]; const int line = __LINE__;
  EXPECT_EQ(v, 1);
  const auto f = of_kind("host-access");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].line, line);
  EXPECT_NE(f[0].message.find("host code read device memory directly (4 bytes at offset 8 of a 16-byte device "
                              "allocation)"),
            std::string::npos)
      << f[0].message;
  EXPECT_TRUE(emu::host_accesses().empty()) << "no watch: nothing recorded for it";
}

TEST_P(Watch, ARunWithoutAWatchIsUnaffected) {
  const int n = 1000;
  DeviceBuffer<float> in(std::vector<float>(n, 1.0f)), a(n), b(n);
  std::string tables[2];
  for (int watched = 0; watched < 2; ++watched) {
    emu::reset_metrics();
    if (watched) emu::begin_watch();
    launch(read_first_half_twice, (n + 127) / 128, 128, 0, in.data(), (watched ? b : a).data(), n);
    if (watched) emu::end_watch();
    tables[watched] = emu::format_metrics(emu::metrics_by_line());
    tables[watched].erase(0, tables[watched].find('\n'));  // the launch number differs
  }
  EXPECT_EQ(a.download(), b.download());
  EXPECT_EQ(tables[0], tables[1]);
  EXPECT_FALSE(emu::watch_active());
  // After end_watch, nothing more is recorded.
  const long long launches = emu::kernel_launches();
  launch(copy_floats, 8, 128, 0, in.data(), a.data(), n);
  gpulab::copy_to_device(a.data(), b.data(), 4);
  EXPECT_EQ(emu::kernel_launches(), launches);
  EXPECT_TRUE(emu::host_writes().empty());
  if (emu::watch_available()) {
    EXPECT_EQ(emu::kernel_read_bytes(in.data(), in.bytes()), in.bytes() / 2);
    EXPECT_EQ(emu::kernel_written_bytes(a.data(), a.bytes()), 0u) << "a was written outside the watch";
  }
  EXPECT_TRUE(emu::findings().empty()) << emu::findings()[0].message;
}

TEST_P(Watch, FreedAllocationsForgetTheirBits) {
  REQUIRE_TRACING();
  const int n = 256;
  DeviceBuffer<float> in(std::vector<float>(n, 1.0f));
  emu::begin_watch();
  std::uintptr_t freed = 0;
  {
    DeviceBuffer<float> tmp(n);
    launch(copy_floats, 2, 128, 0, in.data(), tmp.data(), n);
    freed = reinterpret_cast<std::uintptr_t>(tmp.data());
    EXPECT_EQ(emu::kernel_written_bytes(tmp.data(), tmp.bytes()), tmp.bytes());
  }
  DeviceBuffer<float> again(n);  // may reuse the address
  emu::end_watch();
  EXPECT_EQ(emu::kernel_written_bytes(reinterpret_cast<const void*>(freed), 4), 0u);
  EXPECT_EQ(emu::kernel_written_bytes(again.data(), again.bytes()), 0u);
}
