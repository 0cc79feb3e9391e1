// The sanitizer and the memory metrics: each bug kind is reported at the right file:line, and
// the reports are the same whatever the number of workers and from run to run.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "emu_test_util.hpp"
#include "gpulab/emu/metrics.hpp"

using gpulab::DeviceBuffer;
using gpulab::launch;
namespace emu = gpulab::emu;

__global__ void reduce_missing_barrier(const float* in, float* out) {
  __shared__ float buf[128];
  buf[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
    // missing __syncthreads()
  }
  if (threadIdx.x == 0) out[blockIdx.x] = buf[0];
}

__global__ void reduce_correct(const float* in, float* out) {
  __shared__ float buf[128];
  buf[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = buf[0];
}

__global__ void store_one_past_the_end(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = 1.0f;  // i == n is one past the end
}

__global__ void read_unwritten_tile(float* out, int write) {
  __shared__ float tile[64];
  if (write) tile[threadIdx.x] = 1.0f;
  __syncthreads();
  out[threadIdx.x] = tile[(threadIdx.x + 1) % 64];
}

__global__ void warp_synchronous_with_syncwarp(float* out) {
  __shared__ float buf[64];
  buf[threadIdx.x] = static_cast<float>(threadIdx.x);
  __syncwarp();
  out[threadIdx.x] = buf[threadIdx.x ^ 1];  // neighbour in the same warp: ordered by __syncwarp
}

// Warp 0 folds the warps' values with __syncwarp between steps while the other warps go on; every
// thread returns `warp == 0 ? sums[0] : 0`. The optimiser makes that read a select of a load done in
// every thread (sums[0] is a valid address), which would race with warp 0's folding: the emulator
// must trace the load only where the source makes it (common/emu/passes/unspeculate_pass.cpp).
__device__ float fold_in_warp0(float v) {
  __shared__ float sums[64];
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  if (lane == 0) sums[warp] = v;
  __syncthreads();
  const int warps = static_cast<int>(blockDim.x) / warpSize;
  if (warp == 0)
    for (int half = warps / 2; half > 0; half /= 2) {
      if (lane < half) sums[lane] += sums[lane + half];
      __syncwarp();
    }
  return warp == 0 ? sums[0] : 0.0f;
}
__global__ void sum_of_warps(float* out) {
  const float s = fold_in_warp0(1.0f);
  if (threadIdx.x == 0) *out = s;
}

__global__ void read_host_memory(const float* host, float* out) {
  out[threadIdx.x] = host[threadIdx.x];
}

__global__ void strided(const float* in, float* out, int stride) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i * stride];
}

// Lanes 0-15 of the block load in round 0, every lane in round 1, with a barrier after each round
// and one load instruction for both (the loop is not unrolled).
__global__ void half_then_all(const float* in, float* out, int rounds) {
  const int t = static_cast<int>(threadIdx.x);
  float acc = 0;
#pragma unroll 1
  for (int r = 0; r < rounds; ++r) {
    if (r > 0 || t < 16) acc += in[t % 16 + 16 * r];
    __syncthreads();
  }
  out[t] = acc;
}

// Lane 0 alone stores in every round: its warp's lanes never made the same accesses, so the
// warp cannot be grouped into requests at any barrier before the block ends.
__global__ void lane0_stores_each_round(float* out, int rounds) {
  __shared__ float s[64];
  for (int r = 0; r < rounds; ++r) {
    s[threadIdx.x] = static_cast<float>(r);
    if (threadIdx.x == 0) out[r] = s[0];  // its own word: no race
    __syncthreads();
  }
}

__global__ void bank_conflicts(float* out, int pad) {
  __shared__ float tile[32 * 33];
  const int t = static_cast<int>(threadIdx.x);
  tile[t * (32 + pad) % (32 * 33)] = 1.0f;
  __syncthreads();
  out[t] = tile[t * (32 + pad) % (32 * 33)];
}

__global__ void float4_from_any_offset(const float* in, float* out, int offset) {
  const float4 v = reinterpret_cast<const float4*>(in + offset)[threadIdx.x];
  out[threadIdx.x] = v.x + v.y + v.z + v.w;
}

__global__ void race_kinds(float* out, int kind) {
  __shared__ float buf[64];
  buf[threadIdx.x] = 1.0f;
  __syncthreads();
  if (kind == 0) buf[0] = static_cast<float>(threadIdx.x);  // every thread writes word 0
  if (kind == 1) {                                          // thread 0 writes, thread 1 reads
    if (threadIdx.x == 0) buf[0] = 2.0f;
    if (threadIdx.x == 1) out[1] = buf[0];
  }
  if (kind == 2) {                                          // thread 0 reads, thread 1 writes
    if (threadIdx.x == 0) out[0] = buf[1];
    if (threadIdx.x == 1) buf[1] = 3.0f;
  }
  __syncthreads();
  out[threadIdx.x] += buf[threadIdx.x];
}

__global__ void lanes_store_one_word(float* out, int differ) {
  __shared__ int flag;
  flag = differ ? static_cast<int>(threadIdx.x) : 7;  // every lane of the (one) warp stores it
  __syncthreads();
  out[threadIdx.x] = static_cast<float>(flag);
}

__global__ void shared_overrun(float* out, int read) {
  __shared__ float small[32];
  __shared__ float after[32];
  if (!read) {
    small[threadIdx.x] = 1.0f;  // 64 threads, 32 elements
  } else {
    small[threadIdx.x % 32] = 1.0f;
    after[threadIdx.x % 32] = 2.0f;
    __syncthreads();
    out[threadIdx.x] = small[threadIdx.x % 32 + 1];  // threads 31 and 63 read small[32]
  }
}

__global__ void never_written_shared(float* out) {
  __shared__ float never[64];  // read, never written: not folded to 0 by the compiler
  out[threadIdx.x] = never[threadIdx.x];
}

__global__ void atomic_sum(const float* in, float* out) {
  atomicAdd(out, in[threadIdx.x]);
}

// Device memory shared by a block's threads: a counter incremented without atomics (threads of
// one key load, add and store it), the same with atomicAdd, one word every thread stores (the
// same value, or its own), and a value thread 0 stores and the others load after a barrier.
__global__ void global_counts(const int* keys, int* counts, int mode) {
  const int k = keys[threadIdx.x];
  if (mode == 0) counts[k] += 1;
  if (mode == 1) atomicAdd(&counts[k], 1);
  if (mode == 2) counts[0] = 7;
  if (mode == 3) counts[0] = static_cast<int>(threadIdx.x);
  if (mode == 4) {
    if (threadIdx.x == 0) counts[1] = 5;
    __syncthreads();
    counts[2 + threadIdx.x % 2] = counts[1];  // every thread loads 5 and stores it to word 2 or 3
  }
}

// Thread 0 stores byte 0 of a word; thread 1 then stores the whole word, the same value in byte 0
// and its own in the others (differ: a different value in byte 0 too).
__global__ void byte_then_word(unsigned* words, int differ) {
  if (threadIdx.x == 0) reinterpret_cast<unsigned char*>(words)[0] = 7;
  if (threadIdx.x == 1) words[0] = (differ ? 8u : 7u) | (threadIdx.x << 8);
}

// Each thread stores and then loads its own byte: four threads share each 4-byte word.
__global__ void own_bytes(unsigned char* out) {
  out[threadIdx.x] = static_cast<unsigned char>(threadIdx.x);
  out[threadIdx.x] = static_cast<unsigned char>(out[threadIdx.x] + 1);
}

class Sanitizer : public EmuTest {
 protected:
  void SetUp() override {
    EmuTest::SetUp();
    emu::reset_findings();
    emu::reset_metrics();
  }
  /// The findings of `kind` (and the line they name).
  static std::vector<emu::Finding> of_kind(const std::string& kind) {
    std::vector<emu::Finding> out;
    for (const auto& f : emu::findings())
      if (f.kind == kind) out.push_back(f);
    return out;
  }
};
INSTANTIATE_TEST_SUITE_P(WarpSizes, Sanitizer, ::testing::Values(32, 64),
                         [](const auto& info) { return "warp" + std::to_string(info.param); });

TEST_P(Sanitizer, MissingSyncthreadsInAReductionIsARaceAtItsLine) {
  DeviceBuffer<float> in(std::vector<float>(256, 1.0f)), out(2);
  launch(reduce_missing_barrier, 2, 128, 0, in.data(), out.data());
  gpulab::synchronize();
  const auto races = of_kind("race");
  ASSERT_FALSE(races.empty());
  EXPECT_EQ(races[0].line, line_of("reduce_missing_barrier", 1, "buf[threadIdx.x] +=")) << races[0].message;
  EXPECT_NE(races[0].message.find("block (0,0,0)"), std::string::npos) << races[0].message;
}

TEST_P(Sanitizer, EachKindOfRaceIsNamed) {
  const char* expected[] = {"write-write race", "read-after-write race", "read-write race"};
  for (int kind = 0; kind < 3; ++kind) {
    emu::reset_findings();
    DeviceBuffer<float> out(std::vector<float>(64, 0.0f));
    launch(race_kinds, 1, 64, 0, out.data(), kind);
    gpulab::synchronize();
    const auto races = of_kind("race");
    ASSERT_EQ(races.size(), 1u) << "kind " << kind;
    EXPECT_NE(races[0].message.find(expected[kind]), std::string::npos) << races[0].message;
  }
}

TEST_P(Sanitizer, RaceNamesBothAccesses) {
  DeviceBuffer<float> out(std::vector<float>(64, 0.0f));
  launch(race_kinds, 1, 64, 0, out.data(), 1);  // thread 0 writes buf[0], thread 1 reads it
  gpulab::synchronize();
  const auto races = of_kind("race");
  ASSERT_EQ(races.size(), 1u);
  const int write_line = line_of("race_kinds", 1, "buf[0] = 2.0f");
  EXPECT_EQ(races[0].line, line_of("race_kinds", 1, "out[1] = buf[0]")) << races[0].message;
  EXPECT_EQ(races[0].other_line, write_line) << races[0].message;
  EXPECT_NE(races[0].message.find("the other access is at " + races[0].other_file + ":" + std::to_string(write_line)),
            std::string::npos)
      << races[0].message;
}

TEST_P(Sanitizer, LanesOfAWarpStoringTheSameValueAreNotARace) {
  const int ws = GetParam();
  DeviceBuffer<float> out(static_cast<std::size_t>(ws));
  launch(lanes_store_one_word, 1, ws, 0, out.data(), 0);
  gpulab::synchronize();
  EXPECT_TRUE(of_kind("race").empty()) << of_kind("race")[0].message;
  for (float v : out.download()) EXPECT_EQ(v, 7.0f);
  // Different values from the lanes of one warp: a write-write race, naming the line.
  launch(lanes_store_one_word, 1, ws, 0, out.data(), 1);
  gpulab::synchronize();
  const auto races = of_kind("race");
  ASSERT_EQ(races.size(), 1u);
  EXPECT_NE(races[0].message.find("write-write race"), std::string::npos) << races[0].message;
  EXPECT_EQ(races[0].line, line_of("lanes_store_one_word", 1, "flag = differ")) << races[0].message;
}

TEST_P(Sanitizer, CorrectReductionHasNoFindings) {
  DeviceBuffer<float> in(std::vector<float>(256, 1.0f)), out(2);
  launch(reduce_correct, 2, 128, 0, in.data(), out.data());
  EXPECT_EQ(out.download(), std::vector<float>(2, 128.0f));
  EXPECT_TRUE(emu::findings().empty()) << emu::findings()[0].message;
}

TEST_P(Sanitizer, OutOfBoundsStoreNamesLineAndDistance) {
  DeviceBuffer<float> out(100);
  launch(store_one_past_the_end, 1, 128, 0, out.data(), 100);
  // The kernel stops before the store, as a GPU kernel stops at an illegal address; the fault and
  // the finding both name the line, the thread and the distance.
  const std::string fault = expect_fault("out-of-bounds");
  const int line = line_of("store_one_past_the_end", 1, "out[i] = 1.0f");
  EXPECT_NE(fault.find("test_sanitizer.cu:" + std::to_string(line) + ": thread (100,0,0) of block (0,0,0) writes 4 bytes at 0 bytes past the end"), std::string::npos) << fault;
  EXPECT_NE(fault.find("stopped before the access"), std::string::npos) << fault;
  const auto oob = of_kind("out-of-bounds");
  ASSERT_EQ(oob.size(), 1u);
  EXPECT_EQ(oob[0].line, line);
  EXPECT_NE(oob[0].message.find("thread (100,0,0)"), std::string::npos) << oob[0].message;
  EXPECT_NE(oob[0].message.find("0 bytes past the end of a 400-byte device allocation"), std::string::npos) << oob[0].message;
}

TEST_P(Sanitizer, ReadOfUnwrittenSharedMemoryIsReported) {
  DeviceBuffer<float> out(64);
  launch(read_unwritten_tile, 1, 64, 0, out.data(), 0);
  gpulab::synchronize();
  const auto u = of_kind("uninitialized-shared");
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].line, line_of("read_unwritten_tile", 1, "out[threadIdx.x] = tile"));
  emu::reset_findings();
  launch(read_unwritten_tile, 1, 64, 0, out.data(), 1);
  gpulab::synchronize();
  EXPECT_TRUE(emu::findings().empty());
}

TEST_P(Sanitizer, SyncwarpOrdersAccessesWithinAWarp) {
  DeviceBuffer<float> out(64);
  launch(warp_synchronous_with_syncwarp, 1, 64, 0, out.data());
  const auto h = out.download();
  for (int t = 0; t < 64; ++t) EXPECT_EQ(h[t], static_cast<float>(t ^ 1));
  EXPECT_TRUE(emu::findings().empty()) << emu::findings()[0].message;
}

TEST_P(Sanitizer, ALoadTheOptimiserSpeculatedIsNotARace) {
#if !defined(GPULAB_TEST_UNSPECULATE)
  GTEST_SKIP() << "built without common/emu/passes/unspeculate_pass.cpp (llvm-14-dev)";
#endif
  DeviceBuffer<float> out(1);
  launch(sum_of_warps, 1, 256, 0, out.data());
  EXPECT_EQ(out.download()[0], static_cast<float>(256 / GetParam()));
  EXPECT_TRUE(emu::findings().empty()) << emu::findings()[0].message;
}

TEST_P(Sanitizer, HostPointerPassedToAKernelIsReported) {
  std::vector<float> host(32, 1.0f);
  DeviceBuffer<float> out(32);
  launch(read_host_memory, 1, 32, 0, host.data(), out.data());
  const std::string fault = [] {
    try {
      gpulab::synchronize();
    } catch (const gpulab::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  }();
  EXPECT_NE(fault.find("stopped before the access"), std::string::npos) << fault;
  // Host heap memory may lie next to a device allocation (both come from the heap): then it is
  // reported as out of bounds of that allocation. Either way it is reported, at the right line.
  auto f = of_kind("not-device-memory");
  const auto oob = of_kind("out-of-bounds");
  f.insert(f.end(), oob.begin(), oob.end());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].line, line_of("read_host_memory", 1, "host[threadIdx.x]"));
}

TEST_P(Sanitizer, AlignedVectorLoadsAreFine) {
  DeviceBuffer<float> in(std::vector<float>(1024, 1.0f)), out(64);
  launch(float4_from_any_offset, 1, 64, 0, in.data(), out.data(), 4);
  gpulab::synchronize();
  EXPECT_TRUE(emu::findings().empty()) << emu::findings()[0].message;
}

// A float4 load from an address that is not a multiple of 16 faults on a GPU; the emulator's
// aligned vector load faults too, and the report says what happened.
TEST_P(Sanitizer, MisalignedVectorLoadStopsTheKernelAsAGpuWould) {
  // A GPU faults (misaligned address); the emulator stops the kernel before the load, says where,
  // and the process goes on.
  DeviceBuffer<float> in(std::vector<float>(1024, 1.0f)), out(64);
  launch(float4_from_any_offset, 1, 64, 0, in.data(), out.data(), 1);
  std::string what;
  try {
    gpulab::synchronize();
  } catch (const std::exception& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("misaligned"), std::string::npos) << what;
  EXPECT_NE(what.find("reads 16 bytes at an address 4 bytes past a multiple of 16"), std::string::npos) << what;
  EXPECT_NE(what.find("stopped before the access"), std::string::npos) << what;
}

TEST_P(Sanitizer, SectorsPerRequestFollowTheStride) {
  DeviceBuffer<float> in(std::vector<float>(64 * 256, 1.0f)), out(256);
  for (int stride : {1, 2, 4, 8, 32}) {
    emu::reset_metrics();
    launch(strided, 2, 128, 0, in.data(), out.data(), stride);
    gpulab::synchronize();
    const auto m = emu::metrics_by_line();
    const emu::LineMetrics* load = nullptr;
    for (const auto& l : m)
      if (!l.shared && !l.store) load = &l;
    ASSERT_NE(load, nullptr);
    EXPECT_DOUBLE_EQ(load->per_request(), std::min(32, 4 * stride)) << "stride " << stride;
    EXPECT_EQ(load->requests, 256 / 32) << "a 64-lane warp counts as two 32-lane requests";
    EXPECT_EQ(load->lane_stride_bytes, 4 * stride);
  }
}

TEST_P(Sanitizer, RequestsPairEachLanesKthExecutionAcrossBarriers) {
  // A request is the k-th execution of an instruction by each lane, over the whole block: lanes
  // 16-31's first load (round 1, in[16..31]) joins lanes 0-15's first (round 0, in[0..15]): 4
  // sectors, then lanes 0-15's second alone: 2. Requests formed barrier by barrier would give 2
  // and 2; the accesses are grouped early only where that cannot differ (docs/architecture.md).
  if (!emu::metrics_available()) GTEST_SKIP() << "untraced build";
  DeviceBuffer<float> in(std::vector<float>(64, 1.0f)), out(32);
  emu::reset_metrics();
  launch(half_then_all, 1, 32, 0, in.data(), out.data(), 2);
  gpulab::synchronize();
  EXPECT_EQ(out.download()[0], 2.0f);
  EXPECT_EQ(out.download()[31], 1.0f);
  const emu::LineMetrics* load = nullptr;
  for (const auto& l : emu::metrics_by_line())
    if (!l.shared && !l.store) load = &l;
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->requests, 2);
  EXPECT_EQ(load->lane_accesses, 48);
  EXPECT_EQ(load->units, 6) << "sectors: 4 for the lanes' first loads, 2 for lanes 0-15's second";
}

TEST_P(Sanitizer, TracingCostStaysLinearInTheBarriers) {
  // A warp that could not be grouped at a barrier is not walked again at every later one (that
  // was quadratic: 79 s here for these 40,000 barriers; linear, under half a second).
  if (!emu::metrics_available()) GTEST_SKIP() << "untraced build";
  const int rounds = 40000;
  DeviceBuffer<float> out(rounds);
  emu::reset_metrics();
  emu::reset_findings();
  const auto start = std::chrono::steady_clock::now();
  launch(lane0_stores_each_round, 1, 64, 0, out.data(), rounds);
  gpulab::synchronize();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::vector<float> got = out.download();
  int wrong = 0;
  for (int r = 0; r < rounds; ++r) wrong += got[static_cast<std::size_t>(r)] != static_cast<float>(r);
  EXPECT_EQ(wrong, 0);
  EXPECT_TRUE(emu::findings().empty()) << emu::findings().front().message;
  EXPECT_LT(seconds, 10.0) << "40,000 barriers of one block, traced";
  long long stores = 0;
  for (const auto& l : emu::metrics_by_line())
    if (!l.shared && l.store) stores += l.requests;
  EXPECT_EQ(stores, rounds);
}

TEST_P(Sanitizer, SharedWavefrontsCountBankConflicts) {
  DeviceBuffer<float> out(32);
  for (int pad : {0, 1}) {
    emu::reset_metrics();
    launch(bank_conflicts, 1, 32, 0, out.data(), pad);
    gpulab::synchronize();
    for (const auto& l : emu::metrics_by_line())
      if (l.shared && !l.store) {
        EXPECT_DOUBLE_EQ(l.per_request(), pad ? 1.0 : 32.0);
        EXPECT_EQ(l.bank_conflicts(), pad ? 0 : 31);
      }
  }
}

TEST_P(Sanitizer, ReportsAreIdenticalForAnyWorkerCountAndRun) {
  std::vector<std::string> reports;
  for (int workers : {1, 8, 1, 8}) {
    WorkerCount scoped(workers);
    emu::reset_metrics();
    emu::reset_findings();
    DeviceBuffer<float> in(std::vector<float>(128 * 37, 1.0f)), out(128 * 37);
    launch(reduce_missing_barrier, 37, 128, 0, in.data(), out.data());
    launch(strided, 37, 128, 0, in.data(), out.data(), 1);
    gpulab::synchronize();
    std::string r = emu::format_metrics(emu::metrics_by_line());
    // Launch numbers grow from run to run; compare the tables without them.
    for (auto p = r.find("launch "); p != std::string::npos; p = r.find("launch ", p + 1))
      r.erase(p, r.find(':', p) - p);
    for (const auto& f : emu::findings()) r += f.kind + " " + f.message + "\n";
    reports.push_back(r);
  }
  EXPECT_EQ(reports[0], reports[1]);
  EXPECT_EQ(reports[0], reports[2]);
  EXPECT_EQ(reports[0], reports[3]);
  EXPECT_NE(reports[0].find("race"), std::string::npos) << reports[0];
}

TEST_P(Sanitizer, WriteAndReadPastASharedArrayStopWithItsNameAndLine) {
  if (!emu::metrics_available()) GTEST_SKIP() << "untraced build";
  DeviceBuffer<float> out(64);
  launch(shared_overrun, 1, 64, 0, out.data(), 0);
  std::string what = expect_fault("shared-out-of-bounds");
  EXPECT_NE(what.find("test_sanitizer.cu:" + std::to_string(line_of("shared_overrun", 1, "small[threadIdx.x] = 1.0f")) +
                      ": thread (32,0,0) of block (0,0,0) writes 4 bytes at 0 bytes past the end of the 128-byte "
                      "__shared__ array 'small' (element 32 of 32)"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("hint: index a __shared__ array only within its declared size"), std::string::npos) << what;
  ASSERT_EQ(of_kind("shared-out-of-bounds").size(), 1u);
  emu::reset_findings();
  launch(shared_overrun, 1, 64, 0, out.data(), 1);
  what = expect_fault("shared-out-of-bounds");
  EXPECT_NE(what.find("test_sanitizer.cu:" + std::to_string(line_of("shared_overrun", 1, "out[threadIdx.x] = small")) +
                      ": thread (63,0,0) of block (0,0,0) reads 4 bytes at 0 bytes past the end of the 128-byte "
                      "__shared__ array 'small' (element 32 of 32)"),
            std::string::npos)
      << what;
}

TEST_P(Sanitizer, NeverWrittenSharedArrayIsReadNotFolded) {
  if (!emu::metrics_available()) GTEST_SKIP() << "untraced build";
  DeviceBuffer<float> out(64);
  launch(never_written_shared, 1, 64, 0, out.data());
  gpulab::synchronize();
  const auto u = of_kind("uninitialized-shared");
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].line, line_of("never_written_shared", 1, "out[threadIdx.x] = never"));
  EXPECT_EQ(u[0].count, 64);
  for (float v : out.download()) EXPECT_TRUE(std::isnan(v)) << "the poison, not a folded 0";
}

TEST_P(Sanitizer, AtomicAddIsOneAtomicNotALoadToo) {
  if (!emu::metrics_available()) GTEST_SKIP() << "untraced build";
  DeviceBuffer<float> in(std::vector<float>(32, 1.0f)), out(std::vector<float>(1, 0.0f));
  launch(atomic_sum, 1, 32, 0, in.data(), out.data());
  gpulab::synchronize();
  EXPECT_EQ(out.download()[0], 32.0f);
  const int line = line_of("atomic_sum", 1, "atomicAdd");
  int atomics = 0, loads = 0;
  for (const auto& m : emu::metrics_by_line()) {
    EXPECT_GT(m.line, 0) << "a row without a line";
    if (m.line != line) continue;
    atomics += m.atomic;
    loads += !m.atomic && !m.store;
  }
  EXPECT_EQ(atomics, 1);
  EXPECT_EQ(loads, 1) << "the line's one load is in[threadIdx.x]; the atomic's own read is not a second";
}

TEST_P(Sanitizer, ACounterIncrementedWithoutAtomicsIsARaceInDeviceMemory) {
  if (!emu::metrics_available()) GTEST_SKIP() << "untraced build";
  std::vector<int> keys(64);
  for (int i = 0; i < 64; ++i) keys[static_cast<std::size_t>(i)] = i % 4;  // 16 threads per key
  DeviceBuffer<int> k(keys), counts(std::vector<int>(4, 0));
  launch(global_counts, 1, 64, 0, k.data(), counts.data(), 0);
  gpulab::synchronize();
  // The emulator's lanes run one after another, so the counts come out right here...
  EXPECT_EQ(counts.download(), std::vector<int>(4, 16));
  // ... and the sanitizer says why a GPU loses increments.
  const auto races = of_kind("race");
  ASSERT_EQ(races.size(), 1u);
  EXPECT_NE(races[0].message.find("reads a device-memory word"), std::string::npos) << races[0].message;
  EXPECT_NE(races[0].message.find("read-after-write race"), std::string::npos) << races[0].message;
  EXPECT_NE(races[0].message.find("atomicAdd"), std::string::npos) << races[0].message;
  EXPECT_EQ(races[0].line, line_of("global_counts", 1, "counts[k] += 1")) << races[0].message;
}

TEST_P(Sanitizer, DeviceMemoryWithAtomicsOneValueOrABarrierIsNoRace) {
  DeviceBuffer<int> k(std::vector<int>(64, 0)), counts(std::vector<int>(4, 0));
  for (int mode : {1, 2, 4}) {
    emu::reset_findings();
    launch(global_counts, 1, 64, 0, k.data(), counts.data(), mode);
    gpulab::synchronize();
    const auto races = of_kind("race");
    EXPECT_TRUE(races.empty()) << "mode " << mode << ": " << races[0].message;
  }
  EXPECT_EQ(counts.download()[0], 7);
}

TEST_P(Sanitizer, ThreadsStoringTheirOwnValuesToOneDeviceWordRace) {
  if (!emu::metrics_available()) GTEST_SKIP() << "untraced build";
  DeviceBuffer<int> k(std::vector<int>(64, 0)), counts(std::vector<int>(4, 0));
  launch(global_counts, 1, 64, 0, k.data(), counts.data(), 3);
  gpulab::synchronize();
  const auto races = of_kind("race");
  ASSERT_EQ(races.size(), 1u);
  EXPECT_NE(races[0].message.find("write-write race"), std::string::npos) << races[0].message;
  EXPECT_NE(races[0].message.find("device-memory word"), std::string::npos) << races[0].message;
  EXPECT_EQ(races[0].line, line_of("global_counts", 1, "counts[0] = static_cast<int>")) << races[0].message;
}

TEST_P(Sanitizer, ThreadsOfOneDeviceWordsOwnBytesDoNotRace) {
  DeviceBuffer<unsigned char> out(std::vector<unsigned char>(64, 0));
  launch(own_bytes, 1, 64, 0, out.data());
  gpulab::synchronize();
  const auto races = of_kind("race");
  EXPECT_TRUE(races.empty()) << races[0].message;
  EXPECT_EQ(out.download()[63], 64);
}

TEST_P(Sanitizer, AStoreRacesOnlyOnTheBytesAnotherThreadStoredToo) {
  if (!emu::metrics_available()) GTEST_SKIP() << "untraced build";
  DeviceBuffer<unsigned> words(std::vector<unsigned>(1, 0));
  launch(byte_then_word, 1, 32, 0, words.data(), 0);  // byte 0 left as it was: no race
  gpulab::synchronize();
  EXPECT_TRUE(of_kind("race").empty()) << of_kind("race")[0].message;
  launch(byte_then_word, 1, 32, 0, words.data(), 1);  // byte 0 changed: a write-write race
  gpulab::synchronize();
  const auto races = of_kind("race");
  ASSERT_EQ(races.size(), 1u);
  EXPECT_NE(races[0].message.find("write-write race"), std::string::npos) << races[0].message;
}
