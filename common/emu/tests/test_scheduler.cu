// The emulator's semantics, each checked at warp size 32 and 64: index built-ins, barriers,
// warp collectives, atomics, shared memory, and every fault a kernel can commit.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <regex>
#include <string>
#include <vector>

#include "emu_test_util.hpp"
#include "gpulab/emu/metrics.hpp"

using gpulab::DeviceBuffer;
using gpulab::launch;

// ---- kernels ------------------------------------------------------------------------------

__global__ void write_coordinates(int* out) {
  const unsigned bx = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned tx = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  const unsigned g = bx * threads + tx;
  out[4 * g + 0] = static_cast<int>(threadIdx.x + 1000 * threadIdx.y + 1000000 * threadIdx.z);
  out[4 * g + 1] = static_cast<int>(blockIdx.x + 1000 * blockIdx.y + 1000000 * blockIdx.z);
  out[4 * g + 2] = static_cast<int>(blockDim.x + 1000 * blockDim.y + 1000000 * blockDim.z);
  out[4 * g + 3] = static_cast<int>(gridDim.x + 1000 * gridDim.y + 1000000 * gridDim.z);
}

__global__ void reverse_in_block(const int* in, int* out) {
  __shared__ int tile[256];
  const int t = static_cast<int>(threadIdx.x);
  tile[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = tile[blockDim.x - 1 - t];
}

__global__ void barrier_reductions(int* out) {
  const int t = static_cast<int>(threadIdx.x);
  out[0] = __syncthreads_count(t % 3 == 0);
  const int all = __syncthreads_and(t < 1000);
  const int any = __syncthreads_or(t == 77);
  const int none = __syncthreads_or(0);
  if (t == 0) {
    out[1] = all;
    out[2] = any;
    out[3] = none;
  }
}

__global__ void divergent_barrier(float* a) {
  if (threadIdx.x < 16) {
    a[threadIdx.x] = 1;
    __syncthreads();
  } else {
    __syncthreads();
    a[threadIdx.x] = 2;
  }
}

__global__ void early_exit_then_barrier(float* a, int n) {
  const int i = static_cast<int>(threadIdx.x);
  if (i >= n) return;
  a[i] = 1;
  __syncthreads();
}

__global__ void warp_sum_down(const int* in, int* out) {
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    v += __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(offset));
  if (gpulab::lane_id() == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / warpSize] = v;
}

__global__ void warp_sum_xor(const int* in, int* out) {
  int v = in[threadIdx.x];
  for (int m = warpSize / 2; m > 0; m /= 2) v += __shfl_xor_sync(gpulab::full_mask(), v, m);
  out[threadIdx.x] = v;
}

__global__ void inclusive_scan_up(const int* in, int* out) {
  int v = in[threadIdx.x];
  const int lane = gpulab::lane_id();
  for (int d = 1; d < warpSize; d *= 2) {
    const int other = __shfl_up_sync(gpulab::full_mask(), v, static_cast<unsigned>(d));
    if (lane >= d) v += other;
  }
  out[threadIdx.x] = v;
}

__global__ void broadcast_in_segments(int* out, int width) {
  const int lane = gpulab::lane_id();
  const int v = __shfl_sync(gpulab::full_mask(), lane * 10, 3, width);
  out[threadIdx.x] = v;
}

__global__ void vote(const int* in, unsigned long long* ballots, int* flags) {
  const int p = in[threadIdx.x];
  const unsigned long long b = __ballot_sync(gpulab::full_mask(), p > 0);
  const int any = __any_sync(gpulab::full_mask(), p > 0);
  const int all = __all_sync(gpulab::full_mask(), p > 0);
  if (gpulab::lane_id() == 0) {
    ballots[gpulab::warp_id()] = b;
    flags[2 * gpulab::warp_id()] = any;
    flags[2 * gpulab::warp_id() + 1] = all;
  }
}

__global__ void shuffle_after_early_exit(const float* in, float* out, int n) {
  const int i = static_cast<int>(threadIdx.x);
  if (i >= n) return;  // the classic bug: lane i+1 may be gone when lane i reads it
  float v = in[i];
  v += __shfl_down_sync(gpulab::full_mask(), v, 1);
  out[i] = v;
}

__global__ void hard_coded_mask(const int* in, int* out) {
  int v = in[threadIdx.x];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, static_cast<unsigned>(o));
  if (threadIdx.x % 32 == 0) atomicAdd(out, v);
}

__global__ void lane_waits_alone(int* out) {
  if (gpulab::lane_id() == 0) __syncwarp();
  __syncthreads();
  out[threadIdx.x] = 1;
}

__global__ void active_mask_in_branch(unsigned long long* out) {
  const int lane = gpulab::lane_id();
  if (lane % 2 == 0) out[threadIdx.x] = __activemask();
  else out[threadIdx.x] = 0;
}

__global__ void sum_dynamic_shared(const float* in, float* out) {
  float* buf = gpulab::dynamic_shared<float>();
  const unsigned t = threadIdx.x;
  buf[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (t < s) buf[t] += buf[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = buf[0];
}

__global__ void atomics(int* i, float* f, unsigned* u) {
  atomicAdd(&i[0], 1);
  atomicMax(&i[1], static_cast<int>(threadIdx.x));
  atomicMin(&i[2], static_cast<int>(threadIdx.x));
  atomicCAS(&i[3], 0, static_cast<int>(threadIdx.x) + 1);  // exactly one thread wins
  atomicExch(&i[4], 7);
  atomicAdd(f, 0.5f);
  atomicAdd(u, 2u);
}

__global__ void read_unwritten_shared(float* out, int write_first) {
  __shared__ float maybe_written[64];
  if (write_first) maybe_written[threadIdx.x] = 1.0f;  // (a variable never stored to is folded to 0)
  out[threadIdx.x] = maybe_written[threadIdx.x];
}

__global__ void deep_local_array(float* out, int n) {
  volatile float big[64 * 1024];  // 256 KiB: more than a fiber stack holds
  for (int i = 0; i < n; ++i) big[i * 1024] = static_cast<float>(i);
  out[0] = big[0];
}

__device__ __attribute__((noinline)) void deep_local_array_in_a_call(float* out, int n) {
  volatile float big[64 * 1024];  // its own frame: only the thread that calls it overflows
  for (int i = 0; i < n; ++i) big[i * 1024] = static_cast<float>(i);
  out[0] = big[0];
}

__global__ void deep_local_array_after_a_barrier(float* out, int n) {
  __syncthreads();  // thread 0 waits first: thread 1 then runs on a fiber of its own
  if (threadIdx.x == 1) deep_local_array_in_a_call(out, n);
}

// The first warp's lanes return without waiting; the second warp's shuffle: the threads before
// the first one that waits run as plain calls, the rest as fibers (scheduler.cpp, direct_main).
__global__ void only_later_threads_wait(int* order, int* out, int* ticket) {
  const int t = static_cast<int>(threadIdx.x);
  order[t] = atomicAdd(ticket, 1);
  int v = t;
  if (t >= warpSize) v += __shfl_down_sync(gpulab::full_mask(), t, 1);
  out[t] = v;
}

__global__ void store_far_out_of_bounds(float* out) { out[1ll << 40] = 1.0f; }

__global__ void fault_in_one_block(int* out, int bad_block) {
  if (static_cast<int>(blockIdx.x) >= bad_block && threadIdx.x < 4) {
    __syncthreads();  // divergent: threads >= 4 go to the other barrier
  } else {
    __syncthreads();
  }
  out[blockIdx.x] = 1;
}

__global__ void per_block_hash(const unsigned* in, unsigned* out) {
  __shared__ unsigned acc[128];
  const unsigned t = threadIdx.x;
  acc[t] = in[blockIdx.x * blockDim.x + t] * 2654435761u;
  __syncthreads();
  for (unsigned s = 64; s > 0; s /= 2) {
    if (t < s) acc[t] ^= acc[t + s] + s;
    __syncthreads();
  }
  const unsigned w = __shfl_sync(gpulab::full_mask(), acc[0], 0);
  if (t == 0) out[blockIdx.x] = w;
}

// ---- tests --------------------------------------------------------------------------------

class Emu : public EmuTest {};
INSTANTIATE_TEST_SUITE_P(WarpSizes, Emu, ::testing::Values(32, 64),
                         [](const auto& info) { return "warp" + std::to_string(info.param); });

TEST_P(Emu, IndexBuiltinsIn3D) {
  const dim3 grid(3, 2, 2), block(5, 4, 3);
  const int threads = 5 * 4 * 3, blocks = 3 * 2 * 2;
  DeviceBuffer<int> out(4 * threads * blocks);
  launch(write_coordinates, grid, block, 0, out.data());
  gpulab::synchronize();
  const auto h = out.download();
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t) {
      const int g = b * threads + t;
      EXPECT_EQ(h[4 * g + 0], t % 5 + 1000 * (t / 5 % 4) + 1000000 * (t / 20));
      EXPECT_EQ(h[4 * g + 1], b % 3 + 1000 * (b / 3 % 2) + 1000000 * (b / 6));
      EXPECT_EQ(h[4 * g + 2], 5 + 4000 + 3000000);
      EXPECT_EQ(h[4 * g + 3], 3 + 2000 + 2000000);
    }
}

TEST_P(Emu, SyncthreadsOrdersSharedMemory) {
  const int blocks = 3, threads = 256;
  std::vector<int> in(blocks * threads);
  std::iota(in.begin(), in.end(), 0);
  DeviceBuffer<int> d_in(in), d_out(in.size());
  launch(reverse_in_block, blocks, threads, 0, d_in.data(), d_out.data());
  const auto out = d_out.download();
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t) EXPECT_EQ(out[b * threads + t], b * threads + threads - 1 - t);
}

TEST_P(Emu, SyncthreadsCountAndOr) {
  DeviceBuffer<int> out(4);
  launch(barrier_reductions, 1, 100, 0, out.data());
  const auto h = out.download();
  EXPECT_EQ(h[0], 34);  // t = 0, 3, ..., 99
  EXPECT_EQ(h[1], 1);
  EXPECT_EQ(h[2], 1);
  EXPECT_EQ(h[3], 0);
}

TEST_P(Emu, DivergentBarrierIsAFaultNamingBothLines) {
  DeviceBuffer<float> a(32);
  launch(divergent_barrier, 1, 32, 0, a.data());
  const std::string msg = expect_fault("divergent-barrier");
  EXPECT_NE(msg.find("test_scheduler.cu:" + std::to_string(line_of("divergent_barrier", 1))), std::string::npos) << msg;
  EXPECT_NE(msg.find("test_scheduler.cu:" + std::to_string(line_of("divergent_barrier", 2))), std::string::npos) << msg;
}

TEST_P(Emu, ThreadThatReturnsBeforeABarrierIsAFault) {
  DeviceBuffer<float> a(64);
  launch(early_exit_then_barrier, 1, 64, 0, a.data(), 40);
  const std::string msg = expect_fault("exit-at-barrier");
  EXPECT_NE(msg.find("returned"), std::string::npos) << msg;
  // The rule, and why it seems to work on recent NVIDIA GPUs.
  EXPECT_NE(msg.find("every thread of the block reaches"), std::string::npos) << msg;
  EXPECT_NE(msg.find("undefined"), std::string::npos) << msg;
  EXPECT_NE(msg.find("since Volta count threads that have exited as arrived"), std::string::npos) << msg;
  EXPECT_NE(msg.find("test_scheduler.cu:" + std::to_string(line_of("early_exit_then_barrier", 1))), std::string::npos) << msg;
}

TEST_P(Emu, ShuffleDownReducesEachWarp) {
  const int threads = 256, blocks = 2, ws = GetParam();
  std::vector<int> in(threads * blocks);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int>(i % 7) - 3;
  DeviceBuffer<int> d_in(in), d_out(in.size() / ws);
  launch(warp_sum_down, blocks, threads, 0, d_in.data(), d_out.data());
  const auto out = d_out.download();
  for (std::size_t w = 0; w < out.size(); ++w)
    EXPECT_EQ(out[w], std::accumulate(in.begin() + w * ws, in.begin() + (w + 1) * ws, 0)) << "warp " << w;
}

TEST_P(Emu, ShuffleXorGivesEveryLaneTheSum) {
  const int ws = GetParam();
  std::vector<int> in(128);
  std::iota(in.begin(), in.end(), 1);
  DeviceBuffer<int> d_in(in), d_out(128);
  launch(warp_sum_xor, 1, 128, 0, d_in.data(), d_out.data());
  const auto out = d_out.download();
  for (int i = 0; i < 128; ++i) {
    const int w = i / ws;
    EXPECT_EQ(out[i], std::accumulate(in.begin() + w * ws, in.begin() + (w + 1) * ws, 0));
  }
}

TEST_P(Emu, ShuffleUpScansEachWarp) {
  const int ws = GetParam();
  std::vector<int> in(128, 1);
  DeviceBuffer<int> d_in(in), d_out(128);
  launch(inclusive_scan_up, 1, 128, 0, d_in.data(), d_out.data());
  const auto out = d_out.download();
  for (int i = 0; i < 128; ++i) EXPECT_EQ(out[i], i % ws + 1);
}

TEST_P(Emu, ShuffleWidthSplitsTheWarpIntoSegments) {
  DeviceBuffer<int> out(64);
  launch(broadcast_in_segments, 1, 64, 0, out.data(), 8);
  const auto h = out.download();
  const int ws = GetParam();
  for (int t = 0; t < 64; ++t) EXPECT_EQ(h[t], ((t % ws) / 8 * 8 + 3) * 10) << "thread " << t;
}

TEST_P(Emu, BallotAnyAll) {
  const int ws = GetParam();
  std::vector<int> in(128, 1);
  in[5] = 0;                                // warp 0: not all
  for (int i = 64; i < 128; ++i) in[i] = 0;  // last 64 threads: none
  DeviceBuffer<int> d_in(in), flags(2 * (128 / ws));
  DeviceBuffer<unsigned long long> ballots(128 / ws);
  launch(vote, 1, 128, 0, d_in.data(), ballots.data(), flags.data());
  const auto b = ballots.download();
  const auto f = flags.download();
  for (int w = 0; w < 128 / ws; ++w) {
    unsigned long long expect = 0;
    for (int l = 0; l < ws; ++l)
      if (in[w * ws + l] > 0) expect |= 1ull << l;
    EXPECT_EQ(b[w], expect) << "warp " << w;
    EXPECT_EQ(f[2 * w], expect != 0);
    EXPECT_EQ(f[2 * w + 1], expect == (ws == 64 ? ~0ull : (1ull << ws) - 1));
  }
}

TEST_P(Emu, ShuffleFromAnExitedLaneIsAFault) {
  DeviceBuffer<float> in(64), out(64);
  launch(shuffle_after_early_exit, 1, 64, 0, in.data(), out.data(), 40);
  const std::string msg = expect_fault("shuffle-inactive-lane");
  EXPECT_NE(msg.find("thread (39,0,0)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("reads lane " + std::to_string(40 % GetParam())), std::string::npos) << msg;
}

TEST_P(Emu, HardCodedThirtyTwoLaneMaskFailsOnlyOnWideWarps) {
  DeviceBuffer<int> in(std::vector<int>(64, 1)), out(std::vector<int>(1, 0));
  launch(hard_coded_mask, 1, 64, 0, in.data(), out.data());
  if (GetParam() == 32) {
    gpulab::synchronize();
    EXPECT_EQ(out.download()[0], 64);
  } else {
    // Lanes 0-31 read lanes 32-47, which the mask leaves out; lanes 32-63 are not in it.
    try {
      gpulab::synchronize();
      ADD_FAILURE() << "a 32-lane mask on a 64-lane warp must fault";
    } catch (const gpulab::Error& e) {
      EXPECT_NE(std::string(e.what()).find("gpulab::full_mask()"), std::string::npos) << e.what();
    }
  }
}

TEST_P(Emu, DeadlockIsReportedNotHung) {
  DeviceBuffer<int> out(64);
  launch(lane_waits_alone, 1, 64, 0, out.data());
  const std::string msg = expect_fault("deadlock");
  EXPECT_NE(msg.find("__syncwarp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("__syncthreads"), std::string::npos) << msg;
}

TEST_P(Emu, ActiveMaskIsTheConvergedGroup) {
  const int ws = GetParam();
  DeviceBuffer<unsigned long long> out(128);
  launch(active_mask_in_branch, 1, 128, 0, out.data());
  const auto h = out.download();
  unsigned long long even = 0;
  for (int l = 0; l < ws; l += 2) even |= 1ull << l;
  for (int t = 0; t < 128; ++t) EXPECT_EQ(h[t], t % 2 == 0 ? even : 0ull) << "thread " << t;
}

TEST_P(Emu, DynamicSharedMemory) {
  const int threads = 128, blocks = 3;
  std::vector<float> in(threads * blocks);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 10);
  DeviceBuffer<float> d_in(in), d_out(blocks);
  launch(sum_dynamic_shared, blocks, threads, threads * sizeof(float), d_in.data(), d_out.data());
  const auto out = d_out.download();
  for (int b = 0; b < blocks; ++b)
    EXPECT_FLOAT_EQ(out[b], std::accumulate(in.begin() + b * threads, in.begin() + (b + 1) * threads, 0.0f));
}

TEST_P(Emu, Atomics) {
  DeviceBuffer<int> i(std::vector<int>{0, -1, 1000000, 0, 0});
  DeviceBuffer<float> f(std::vector<float>{0.0f});
  DeviceBuffer<unsigned> u(std::vector<unsigned>{0u});
  launch(atomics, 4, 256, 0, i.data(), f.data(), u.data());
  const auto hi = i.download();
  EXPECT_EQ(hi[0], 1024);
  EXPECT_EQ(hi[1], 255);
  EXPECT_EQ(hi[2], 0);
  EXPECT_GE(hi[3], 1);
  EXPECT_EQ(hi[4], 7);
  EXPECT_FLOAT_EQ(f.download()[0], 512.0f);
  EXPECT_EQ(u.download()[0], 2048u);
}

TEST_P(Emu, UnwrittenSharedMemoryReadsAsNaN) {
  DeviceBuffer<float> out(64);
  launch(read_unwritten_shared, 2, 64, 0, out.data(), 0);
  for (float v : out.download()) EXPECT_TRUE(std::isnan(v));
}

TEST_P(Emu, LaunchConfigurationErrorsNameTheLaunchLine) {
  DeviceBuffer<int> out(8);
  const int line = __LINE__ + 2;
  try {
    launch(write_coordinates, 1, 2048, 0, out.data());
    FAIL() << "a 2048-thread block must be refused";
  } catch (const gpulab::Error& e) {
    EXPECT_NE(std::string(e.what()).find("test_scheduler.cu:" + std::to_string(line)), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("2048 threads"), std::string::npos) << e.what();
  }
}

TEST_P(Emu, AFaultIsStickyUntilSynchronizeReportsIt) {
  DeviceBuffer<float> a(32);
  DeviceBuffer<int> out(std::vector<int>(4, 0));
  launch(divergent_barrier, 1, 32, 0, a.data());
  launch(barrier_reductions, 1, 32, 0, out.data());  // skipped: a fault is pending
  EXPECT_THROW(gpulab::synchronize(), gpulab::Error);
  EXPECT_EQ(out.download()[0], 0);
  EXPECT_NO_THROW(gpulab::synchronize());  // reported once
}

TEST_P(Emu, ResultsAndFaultsDoNotDependOnTheNumberOfWorkers) {
  const int blocks = 37, threads = 128;
  std::vector<unsigned> in(blocks * threads);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned>(i * 7919u + 13u);
  std::vector<std::vector<unsigned>> results;
  std::vector<std::string> faults;
  for (int workers : {1, 2, 8}) {
    WorkerCount scoped(workers);
    DeviceBuffer<unsigned> d_in(in), d_out(blocks);
    launch(per_block_hash, blocks, threads, 0, d_in.data(), d_out.data());
    results.push_back(d_out.download());
    DeviceBuffer<int> out(blocks);
    launch(fault_in_one_block, blocks, 64, 0, out.data(), 11);
    faults.push_back(expect_fault("divergent-barrier"));
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
  EXPECT_EQ(faults[0], faults[1]);
  EXPECT_EQ(faults[0], faults[2]);
  EXPECT_NE(faults[0].find("block (11,0,0)"), std::string::npos) << faults[0];
}

using EmuDeathTest = Emu;
INSTANTIATE_TEST_SUITE_P(WarpSizes, EmuDeathTest, ::testing::Values(32, 64),
                         [](const auto& info) { return "warp" + std::to_string(info.param); });

TEST_P(EmuDeathTest, StackOverflowIsReportedWithTheThread) {
  ::testing::GTEST_FLAG(death_test_style) = "threadsafe";
  DeviceBuffer<float> out(1);
  EXPECT_DEATH(
      {
        launch(deep_local_array, 1, 2, 0, out.data(), 64);
        gpulab::synchronize();
      },
      "stack overflow in thread \\(0,0,0\\) of block \\(0,0,0\\).*GPULAB_EMU_STACK_KB");
}

TEST_P(EmuDeathTest, StackOverflowOfAThreadAfterTheFirstWaitNamesThatThread) {
  ::testing::GTEST_FLAG(death_test_style) = "threadsafe";
  DeviceBuffer<float> out(1);
  EXPECT_DEATH(
      {
        launch(deep_local_array_after_a_barrier, 1, 4, 0, out.data(), 64);
        gpulab::synchronize();
      },
      "stack overflow in thread \\(1,0,0\\) of block \\(0,0,0\\)");
}

TEST_P(Emu, ThreadsRunInOrderWhetherOrNotTheyWait) {
  const int warp = GetParam(), threads = 2 * warp;
  for (int workers : {1, 3}) {
    WorkerCount scoped(workers);
    DeviceBuffer<int> order(threads), out(threads), ticket(std::vector<int>{0});
    launch(only_later_threads_wait, 1, threads, 0, order.data(), out.data(), ticket.data());
    gpulab::synchronize();
    std::vector<int> want_order(threads), want(threads);
    std::iota(want_order.begin(), want_order.end(), 0);
    for (int t = 0; t < threads; ++t) want[t] = t < warp ? t : t + (t % warp == warp - 1 ? t : t + 1);
    EXPECT_EQ(order.download(), want_order) << "each thread runs to its first wait in thread order";
    EXPECT_EQ(out.download(), want);
  }
}

// A store far from any allocation is stopped before it happens (the traced build): a fault with
// the line, the thread and the distance to the nearest allocation, and the process carries on.
TEST_P(Emu, InvalidAddressIsReportedWithTheThread) {
  DeviceBuffer<float> out(1);
  launch(store_far_out_of_bounds, 1, 1, 0, out.data());
  if (!gpulab::emu::metrics_available()) GTEST_SKIP() << "untraced build: the CPU faults instead";
  const std::string what = expect_fault("not-device-memory");
  EXPECT_TRUE(std::regex_search(what, std::regex("test_scheduler\\.cu:[1-9][0-9]*: thread \\(0,0,0\\) of block \\(0,0,0\\) "
                                                  "writes 4 bytes at address 0x")))
      << what;
  EXPECT_NE(what.find("the nearest device allocation, 4 bytes, ends 4 TB (4398046511100 bytes) before it"), std::string::npos)
      << what;
  out.upload(std::vector<float>{2.0f});  // the process and the emulator still work
  EXPECT_EQ(out.download(), std::vector<float>{2.0f});
}

TEST_P(Emu, PlainCudaRuntimeCallsWork) {
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 64 * sizeof(float)), cudaSuccess);
  std::vector<float> h(64, 2.0f), back(64);
  EXPECT_EQ(cudaMemcpy(d, h.data(), 64 * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaFuncSetAttribute(divergent_barrier, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024), cudaSuccess);
  launch(divergent_barrier, 1, 32, 0, d);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  // Sticky, as on a GPU: every later call returns it, until cudaDeviceReset.
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaMemset(d, 0, 64 * sizeof(float)), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaMemset(d, 0, 64 * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(back.data(), d, 64 * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, std::vector<float>(64, 0.0f));
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

TEST(EmuLaunch, MoreThan48KiBOfDynamicSharedMemoryNeedsTheOptIn) {
  const int threads = 128;
  const std::size_t bytes = 64 * 1024;  // the kernel uses only threads floats of it
  DeviceBuffer<float> in(std::vector<float>(threads, 1.0f)), out(1);
  EXPECT_THROW(launch(sum_dynamic_shared, 1, threads, bytes, in.data(), out.data()), gpulab::Error);
  gpulab::set_max_dynamic_shared(sum_dynamic_shared, bytes);
  launch(sum_dynamic_shared, 1, threads, bytes, in.data(), out.data());
  EXPECT_FLOAT_EQ(out.download()[0], 128.0f);
  EXPECT_THROW(gpulab::set_max_dynamic_shared(sum_dynamic_shared, 1u << 30), gpulab::Error);
}
