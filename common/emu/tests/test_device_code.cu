// Every byte a kernel touches is traced: static data (`__device__` arrays), memcpy / memset in
// kernels, accesses of other sizes than 1-16 bytes, atomics written with compiler builtins, and
// host library functions refused in kernels (common/emu/passes/device_pass.cpp,
// common/emu/src/device_calls.cpp); and races between the blocks of a launch
// (common/emu/src/cross_block.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "emu_test_util.hpp"
#include "gpulab/emu/metrics.hpp"

using gpulab::DeviceBuffer;
using gpulab::launch;
namespace emu = gpulab::emu;

namespace {

constexpr int kRows = 64;
// A kernel file's static array: device memory on a GPU. Aligned to a sector, so that the sector
// counts below do not depend on where the linker happens to place it (16-byte placement made a
// 32-lane store touch 5 sectors instead of 4).
__device__ __align__(32) float g_stage[kRows * kRows];
__device__ int g_counter;

// Copies a row-major matrix into g_stage coalesced, then reads g_stage column-wise: the strided
// reads of the static array must show in the metrics.
__global__ void stage_then_read_columns(const float* m, float* out) {
  const int t = static_cast<int>(threadIdx.x);
  for (int r = 0; r < kRows; ++r) g_stage[r * kRows + t] = m[r * kRows + t];
  __syncthreads();
  float s = 0;
  for (int c = 0; c < kRows; ++c) s += g_stage[t * kRows + c];
  out[t] = s;
}

// Every thread of the block increments one static counter without atomics.
__global__ void static_counter_without_atomics(int* out) {
  g_counter = g_counter + 1;
  __syncthreads();
  if (threadIdx.x == 0) out[0] = g_counter;
}

__global__ void reads_warp_size(int* out) { out[threadIdx.x] = warpSize; }

__device__ float g_staged[32];
__device__ float g_from_host;
// Stages a row in a __device__ array for host code to read, and copies g_from_host out.
__global__ void stage_row(const float* in, float* out) {
  g_staged[threadIdx.x] = in[threadIdx.x];
  if (threadIdx.x == 0) out[0] = g_from_host;
}
// Host code that reads the staged row directly (on a GPU: a host copy of it, zeros).
void host_reads_staged_row(float* sum) {
  float s = 0.0f;
  for (int i = 0; i < 32; ++i) s += g_staged[i];
  *sum = s;
}
void host_writes_variable(float v) {
  g_from_host = v;
}

// Each thread copies its own row with memcpy: a strided read the metrics must see at that line.
__global__ void row_memcpy(const float* m, float* out, int n) {
  float row[kRows];
  std::memcpy(row, m + static_cast<long>(threadIdx.x) * n, sizeof(float) * static_cast<unsigned>(n));
  float s = 0;
  for (int c = 0; c < n; ++c) s += row[c];
  out[threadIdx.x] = s;
}

// memcpy of one element past the end of the buffer.
__global__ void memcpy_past_the_end(const float* in, float* out, int n) {
  if (threadIdx.x == 0) std::memcpy(out, in, sizeof(float) * static_cast<unsigned>(n + 1));
}

__global__ void memset_row(float* out, int n) {
  std::memset(out + static_cast<long>(threadIdx.x) * n, 0, sizeof(float) * static_cast<unsigned>(n));
}

__global__ void calls_strlen(const char* s, int* out) {
  out[threadIdx.x] = static_cast<int>(std::strlen(s));
}

__global__ void builtin_atomic(int* counter) { __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED); }

typedef float wide8 __attribute__((vector_size(32)));
__global__ void wide_copy(const wide8* in, wide8* out) { out[threadIdx.x] = in[threadIdx.x]; }

// A helper that stores and then throws: its entry block ends in `unreachable`, which the tracing
// would skip without the device pass.
[[noreturn]] __device__ __noinline__ void store_and_throw(float* p) {
  p[0] = 1.0f;
  throw 1;
}
__global__ void calls_a_throwing_helper(float* out) {
  try {
    store_and_throw(out + threadIdx.x);
  } catch (int) {
  }
}

// A histogram of keys updated without atomics by every block: a read-modify-write of one word by
// several blocks.
__global__ void histogram_without_atomics(const int* keys, int* bins, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n && threadIdx.x == 0) bins[keys[i]] = bins[keys[i]] + 1;
}
__global__ void histogram_with_atomics(const int* keys, int* bins, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) atomicAdd(&bins[keys[i]], 1);
}

// The "last block" sum: each block stores its partial sum, fences, counts itself in; the block
// that counts last reads every partial sum.
__global__ void last_block_sum(const float* in, float* partial, unsigned* count, float* out) {
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = in[blockIdx.x];
    __threadfence();
    last = atomicAdd(count, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    float s = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) s += partial[b];
    out[0] = s;
    *count = 0;
  }
}
// The same without the fence and the atomic: the last block by id reads the others' sums.
__global__ void highest_block_reads_the_others(const float* in, float* partial, float* out) {
  if (threadIdx.x == 0) partial[blockIdx.x] = in[blockIdx.x];
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) {
    float s = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) s += partial[b];
    out[0] = s;
  }
}
// Every block stores the same flag, nobody reads it.
__global__ void every_block_sets_a_flag(int* flag) { *flag = 1; }

class DeviceCode : public EmuTest {
 protected:
  void SetUp() override {
    EmuTest::SetUp();
    emu::reset_findings();
    emu::reset_metrics();
    if (!emu::metrics_available()) GTEST_SKIP() << "untraced build";
  }
  static std::vector<emu::Finding> of_kind(const std::string& kind) {
    std::vector<emu::Finding> out;
    for (const auto& f : emu::findings())
      if (f.kind == kind) out.push_back(f);
    return out;
  }
  /// The metrics row of `line` that is a global load (store) of the last launch.
  static const emu::LineMetrics* row(const std::vector<emu::LineMetrics>& all, int line, bool store) {
    const emu::LineMetrics* found = nullptr;
    for (const auto& m : all)
      if (m.line == line && !m.shared && !m.atomic && m.store == store) found = &m;
    return found;
  }
};
INSTANTIATE_TEST_SUITE_P(WarpSizes, DeviceCode, ::testing::Values(32, 64),
                         [](const auto& info) { return "warp" + std::to_string(info.param); });

TEST_P(DeviceCode, StaticArraysAreGlobalMemoryInTheMetrics) {
  std::vector<float> m(kRows * kRows, 1.0f);
  DeviceBuffer<float> d_m(m), out(kRows);
  launch(stage_then_read_columns, 1, kRows, 0, d_m.data(), out.data());
  EXPECT_EQ(out.download(), std::vector<float>(kRows, static_cast<float>(kRows)));
  const auto all = emu::metrics_by_line();
  const emu::LineMetrics* staged = row(all, line_of("stage_then_read_columns", 1, "g_stage[r * kRows + t] ="), true);
  const emu::LineMetrics* columns = row(all, line_of("stage_then_read_columns", 1, "s += g_stage"), false);
  ASSERT_NE(staged, nullptr) << "the stores into the __device__ array are global stores";
  ASSERT_NE(columns, nullptr) << "the loads of the __device__ array are global loads";
  EXPECT_DOUBLE_EQ(staged->per_request(), 4.0);   // 32 lanes, consecutive floats
  EXPECT_DOUBLE_EQ(columns->per_request(), 32.0);  // 32 lanes, a row apart
  EXPECT_TRUE(emu::findings().empty()) << emu::findings()[0].message;
}

TEST_P(DeviceCode, AStaticCounterIncrementedWithoutAtomicsIsARace) {
  DeviceBuffer<int> out(1);
  launch(static_counter_without_atomics, 1, 64, 0, out.data());
  gpulab::synchronize();
  const auto races = of_kind("race");
  ASSERT_FALSE(races.empty());
  EXPECT_EQ(races[0].line, line_of("static_counter_without_atomics", 1, "g_counter = g_counter + 1")) << races[0].message;
}

TEST_P(DeviceCode, HostCodeTouchingADeviceVariableIsAHostAccess) {
  DeviceBuffer<float> in(std::vector<float>(32, 1.0f)), out(1);
  // A symbol copy is the runtime's: no finding.
  const float two = 2.0f;
  ASSERT_EQ(cudaMemcpyToSymbol(g_from_host, &two, sizeof two), cudaSuccess);
  launch(stage_row, 1, 32, 0, in.data(), out.data());
  gpulab::synchronize();
  float back = 0.0f;
  ASSERT_EQ(cudaMemcpyFromSymbol(&back, g_from_host, sizeof back), cudaSuccess);
  EXPECT_EQ(back, 2.0f);
  EXPECT_TRUE(of_kind("host-access").empty()) << of_kind("host-access")[0].message;
  // Host code reading what the kernel staged: reported at its line, whichever side came first.
  float sum = 0.0f;
  host_reads_staged_row(&sum);
  EXPECT_EQ(sum, 32.0f);
  host_writes_variable(3.0f);  // before the next launch: reported when a kernel uses it
  launch(stage_row, 1, 32, 0, in.data(), out.data());
  gpulab::synchronize();
  const auto found = of_kind("host-access");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].line, line_of("host_reads_staged_row", 1, "s += g_staged")) << found[0].message;
  EXPECT_NE(found[0].message.find("'g_staged'"), std::string::npos) << found[0].message;
  EXPECT_NE(found[0].message.find("cudaMemcpyFromSymbol"), std::string::npos) << found[0].message;
  EXPECT_EQ(found[1].line, line_of("host_writes_variable", 1, "g_from_host = v")) << found[1].message;
}

TEST_P(DeviceCode, WarpSizeIsNotTraffic) {
  DeviceBuffer<int> out(32);
  launch(reads_warp_size, 1, 32, 0, out.data());
  gpulab::synchronize();
  for (const auto& m : emu::metrics_by_line()) EXPECT_TRUE(m.store) << "only the stores of out: " << m.line;
}

TEST_P(DeviceCode, MemcpyInAKernelIsTracedAtItsLine) {
  std::vector<float> m(kRows * kRows, 1.0f);
  DeviceBuffer<float> d_m(m), out(32);
  launch(row_memcpy, 1, 32, 0, d_m.data(), out.data(), kRows);
  EXPECT_EQ(out.download(), std::vector<float>(32, static_cast<float>(kRows)));
  const emu::LineMetrics* copy = row(emu::metrics_by_line(), line_of("row_memcpy", 1, "std::memcpy"), false);
  ASSERT_NE(copy, nullptr) << "the memcpy's loads are traced";
  EXPECT_DOUBLE_EQ(copy->per_request(), 32.0) << "each lane reads its own row: 32 sectors per request";
  EXPECT_EQ(copy->lane_stride_bytes, 4 * kRows);
}

TEST_P(DeviceCode, MemcpyPastTheEndStopsTheKernel) {
  DeviceBuffer<float> in(std::vector<float>(16, 1.0f)), out(16);
  launch(memcpy_past_the_end, 1, 32, 0, in.data(), out.data(), 16);
  const std::string what = expect_fault("out-of-bounds");
  EXPECT_NE(what.find(":" + std::to_string(line_of("memcpy_past_the_end", 1, "std::memcpy"))), std::string::npos) << what;
}

TEST_P(DeviceCode, MemsetInAKernelIsTracedAsStores) {
  DeviceBuffer<float> out(std::vector<float>(32 * 8, 1.0f));
  launch(memset_row, 1, 32, 0, out.data(), 8);
  EXPECT_EQ(out.download(), std::vector<float>(32 * 8, 0.0f));
  const emu::LineMetrics* set = row(emu::metrics_by_line(), line_of("memset_row", 1, "std::memset"), true);
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->lane_stride_bytes, 32);
}

TEST_P(DeviceCode, AHostLibraryCallInAKernelStopsIt) {
  DeviceBuffer<char> s(std::vector<char>{'a', 'b', 0});
  DeviceBuffer<int> out(32);
  launch(calls_strlen, 1, 32, 0, s.data(), out.data());
  const std::string what = expect_fault("host-function");
  EXPECT_NE(what.find("strlen"), std::string::npos) << what;
  EXPECT_NE(what.find(":" + std::to_string(line_of("calls_strlen", 1, "std::strlen"))), std::string::npos) << what;
}

TEST_P(DeviceCode, BuiltinAtomicsAndOddSizesAreTraced) {
  DeviceBuffer<int> counter(std::vector<int>(1, 0));
  launch(builtin_atomic, 1, 32, 0, counter.data());
  EXPECT_EQ(counter.download()[0], 32);
  int atomics = 0;
  for (const auto& m : emu::metrics_by_line()) atomics += m.atomic ? static_cast<int>(m.requests) : 0;
  EXPECT_EQ(atomics, 1) << "one warp-wide atomic request";
  emu::reset_metrics();
  DeviceBuffer<wide8> in(32), out(32);
  launch(wide_copy, 1, 32, 0, in.data(), out.data());
  gpulab::synchronize();
  long long loads = 0, stores = 0;
  for (const auto& m : emu::metrics_by_line()) (m.store ? stores : loads) += m.bytes_requested;
  EXPECT_EQ(loads, 32 * 32) << "every byte of the 32-byte vectors read";
  EXPECT_EQ(stores, 32 * 32);
}

TEST_P(DeviceCode, AHelperThatEndsInAThrowIsTraced) {
  // Traced, its first store is fine; the throw's store of the exception object (host memory, as
  // a GPU kernel has no exceptions) is what stops the kernel. Untraced, it ran without a word.
  DeviceBuffer<float> out(32);
  launch(calls_a_throwing_helper, 1, 32, 0, out.data());
  const std::string what = expect_fault("not-device-memory");
  EXPECT_NE(what.find(":" + std::to_string(line_of("store_and_throw", 1, "throw 1"))), std::string::npos) << what;
  EXPECT_EQ(out.download()[0], 1.0f);
}

TEST_P(DeviceCode, AHistogramWithoutAtomicsAcrossBlocksIsARaceEveryRun) {
  std::vector<int> keys(64 * 16);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<int>(i / 64 % 2);
  DeviceBuffer<int> k(keys);
  std::string first;
  for (int workers : {1, 4, 1, 4}) {
    WorkerCount count(workers);
    emu::reset_findings();
    DeviceBuffer<int> bins(std::vector<int>(2, 0));
    launch(histogram_without_atomics, 16, 64, 0, k.data(), bins.data(), 64 * 16);
    gpulab::synchronize();
    const auto races = of_kind("race");
    ASSERT_EQ(races.size(), 1u) << workers << " workers";
    EXPECT_EQ(races[0].line, line_of("histogram_without_atomics", 1, "bins[keys[i]] =")) << races[0].message;
    EXPECT_NE(races[0].message.find("cross-block race"), std::string::npos) << races[0].message;
    EXPECT_NE(races[0].message.find("block (0,0,0)"), std::string::npos) << races[0].message;
    if (first.empty()) first = races[0].message;
    EXPECT_EQ(races[0].message, first) << "the same finding whatever the workers";
  }
  emu::reset_findings();
  DeviceBuffer<int> bins(std::vector<int>(2, 0));
  launch(histogram_with_atomics, 16, 64, 0, k.data(), bins.data(), 64 * 16);
  EXPECT_EQ(bins.download(), (std::vector<int>{512, 512}));
  EXPECT_TRUE(emu::findings().empty()) << emu::findings()[0].message;
}

TEST_P(DeviceCode, TheLastBlockPatternAndSharedFlagsAreNoRace) {
  DeviceBuffer<float> in(std::vector<float>(32, 2.0f)), partial(32), out(1);
  DeviceBuffer<unsigned> count(std::vector<unsigned>(1, 0));
  for (int workers : {1, 4}) {
    WorkerCount w(workers);
    launch(last_block_sum, 32, 64, 0, in.data(), partial.data(), count.data(), out.data());
    EXPECT_EQ(out.download()[0], 64.0f);
  }
  DeviceBuffer<int> flag(1);
  launch(every_block_sets_a_flag, 32, 64, 0, flag.data());
  gpulab::synchronize();
  EXPECT_TRUE(emu::findings().empty()) << emu::findings()[0].message;
  // Without the fence and the atomic, a block reads what other blocks write: a race.
  launch(highest_block_reads_the_others, 32, 64, 0, in.data(), partial.data(), out.data());
  gpulab::synchronize();
  const auto races = of_kind("race");
  ASSERT_EQ(races.size(), 1u);
  EXPECT_NE(races[0].message.find("block (31,0,0) reads"), std::string::npos) << races[0].message;
  EXPECT_NE(races[0].message.find("which block (0,0,0) writes"), std::string::npos) << races[0].message;
  EXPECT_EQ(races[0].other_line, line_of("highest_block_reads_the_others", 1, "partial[blockIdx.x] =")) << races[0].message;
}

}  // namespace
