// What standalone CUDA (and HIP) files include and write, on the emulator: cooperative groups,
// 16-bit floats, cache-hinted loads and stores, CUDA's min/max overloads, host variables named
// like the index built-ins, and the HIP spelling of the runtime.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <cuda/atomic>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>
#include <device_launch_parameters.h>
#include <gtest/gtest.h>
#include <hip/hip_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "emu_test_util.hpp"
#include "gpulab/emu/metrics.hpp"

namespace cg = cooperative_groups;
namespace emu = gpulab::emu;
using gpulab::DeviceBuffer;
using gpulab::launch;

// ---- kernels ------------------------------------------------------------------------------

/// Each tile of 16 (and each warp-sized tile of 8 inside it) sums its threads' values.
__global__ void tile_sums(const int* in, int* sums16, int* ranks, int* maxima8) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
  const int v = in[block.thread_rank()];
  const int sum = cg::reduce(tile, v, cg::plus<int>());
  if (tile.thread_rank() == 0) sums16[tile.meta_group_rank()] = sum;
  ranks[block.thread_rank()] = static_cast<int>(tile.thread_rank() + 100 * tile.meta_group_rank());
  cg::thread_block_tile<8> eighth = cg::tiled_partition<8>(tile);
  const int hi = cg::reduce(eighth, v, cg::greater<int>());
  const int lo = cg::reduce(eighth, v, cg::less<int>());
  if (eighth.thread_rank() == 0) maxima8[block.thread_rank() / 8] = hi * 1000 + lo;
  block.sync();
}

/// Shuffles inside a tile of 4: rotate by one, and a butterfly with shfl_xor.
__global__ void tile_shuffles(int* rotated, int* down, int* ballots) {
  auto tile = cg::tiled_partition<4>(cg::this_thread_block());
  const int r = static_cast<int>(threadIdx.x);
  rotated[r] = tile.shfl(r, static_cast<int>((tile.thread_rank() + 1) % 4));
  down[r] = tile.shfl_down(r, 1u) + tile.shfl_xor(r, 2u) * 1000;
  ballots[r] = static_cast<int>(tile.ballot(r % 2 == 0)) + (tile.any(r == 5) ? 100 : 0) + (tile.all(r < 1000) ? 1000 : 0);
  tile.sync();
}

/// Each hint on its own address: the compiler may not merge or drop any of these accesses.
__global__ void cache_hinted_copy(const float* in, float* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const float a = __ldg(in + i) + __ldcs(in + n + i) + __ldcg(in + 2 * n + i);
  const float b = __ldca(in + 3 * n + i) + __ldlu(in + 4 * n + i) + __ldcv(in + 5 * n + i);
  __stcs(out + i, a);
  __stcg(out + n + i, b);
  __stwb(out + 2 * n + i, a + b);
  __stwt(out + 3 * n + i, a - b);
}

/// Each thread writes where its rank in the grid says: its block's rank and its rank in the block.
__global__ void grid_ranks(unsigned long long* where, unsigned long long* sizes) {
  const cg::grid_group grid = cg::this_grid();
  where[grid.thread_rank()] = grid.block_rank() * 1000 + cg::this_thread_block().thread_rank();
  if (grid.thread_rank() == 0)
    sizes[0] = grid.num_threads() * 1000000 + grid.num_blocks() * 1000 + grid.dim_blocks().x * 10 + grid.dim_blocks().y;
}

__global__ void grid_sync_kernel(int* out) {
  out[threadIdx.x] = 1;
  cg::this_grid().sync();
  out[threadIdx.x] = 2;
}

__global__ void trap_kernel(int* out) {
  out[threadIdx.x] = 1;
  if (threadIdx.x == 3) __trap();
}

/// Scans over tiles of 8: inclusive and exclusive sums, and a running maximum.
__global__ void tile_scans(const int* in, int* inclusive, int* exclusive, int* running_max) {
  const auto tile = cg::tiled_partition<8>(cg::this_thread_block());
  const int v = in[threadIdx.x];
  inclusive[threadIdx.x] = cg::inclusive_scan(tile, v);
  exclusive[threadIdx.x] = cg::exclusive_scan(tile, v, cg::plus<int>());
  running_max[threadIdx.x] = cg::inclusive_scan(tile, v, cg::greater<int>());
}

/// Every thread of every block through cuda::atomic_ref: counts, a maximum, a CAS loop, floats.
__global__ void atomic_refs(unsigned* counters, float* sum, unsigned* exchanged) {
  const unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> count(counters[0]), top(counters[1]), cas(counters[2]);
  count.fetch_add(1u, cuda::memory_order_relaxed);
  top.fetch_max(id);
  unsigned seen = cas.load(cuda::memory_order_acquire);
  while (!cas.compare_exchange_weak(seen, seen + 2u)) {
  }
  cuda::atomic_ref<float, cuda::thread_scope_device>(*sum).fetch_add(0.5f);
  exchanged[id] = cuda::atomic_ref<unsigned, cuda::thread_scope_block>(counters[3]).exchange(id);
}

__global__ void fill_index(int* out, int base) { out[blockIdx.x * blockDim.x + threadIdx.x] = base + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); }

__global__ void half_math(const float* in, float* out) {
  const int i = static_cast<int>(threadIdx.x);
  const __half h = __float2half(in[i]);
  const __half two = __float2half(2.0f);
  out[i] = __half2float(__hfma(h, two, h * two));  // 4 * x in half precision
  const __nv_bfloat16 b = __float2bfloat16(in[i]);
  out[32 + i] = __bfloat162float(b + b);
}

__global__ void mixed_min_max(int* out, int n) {
  // min(int, unsigned) as CUDA has it: unsigned (so the comparison is unsigned).
  const unsigned a = min(n, blockDim.x);
  const unsigned b = max(static_cast<int>(threadIdx.x), 3u);
  out[threadIdx.x] = static_cast<int>(a * 1000 + b);
  if (threadIdx.x == 0) out[blockDim.x] = static_cast<int>(min(-1, 5u) == 5u);  // -1 as unsigned is large
}

/// What `extern __shared__ float f[]; extern __shared__ unsigned u[];` become (the `<<<>>>`
/// translation's rewrite; see docs/architecture.md): views of the one dynamic shared memory.
__global__ void dynamic_shared_views(unsigned* out) {
  float* const f = gpulab::dynamic_shared<float>();
  unsigned* const u = gpulab::dynamic_shared<unsigned>();
  f[threadIdx.x] = 1.0f + static_cast<float>(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = u[threadIdx.x];  // the same bytes, read as unsigned
}

__global__ void hip_indices(int* out) {
  out[hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x] = static_cast<int>(hipThreadIdx_x + 1000 * hipBlockIdx_x);
}

// ---- tests --------------------------------------------------------------------------------

/// Asynchronous copies (<cuda_pipeline.h>): thread t copies in[4t .. 4t+3] into its own words of
/// shared memory in two batches (first two floats, then two more), and reads its words before
/// any wait, after waiting for all but the last batch, and after waiting for all.
__global__ void async_copy_batches(const float* in, float* before, float* middle, float* after) {
  __shared__ __align__(16) float s[4 * 64];
  const int t = threadIdx.x;
  for (int k = 0; k < 4; ++k) s[4 * t + k] = -1.0f;
  __pipeline_memcpy_async(&s[4 * t], &in[4 * t], 8);
  __pipeline_commit();
  __pipeline_memcpy_async(&s[4 * t + 2], &in[4 * t + 2], 8);
  __pipeline_commit();
  before[t] = s[4 * t] + s[4 * t + 2];
  __pipeline_wait_prior(1);
  middle[t] = s[4 * t] + s[4 * t + 2];
  __pipeline_wait_prior(0);
  after[t] = s[4 * t] + s[4 * t + 2];
}

/// Each thread copies one float into s[t], waits, then reads its neighbour's s[t ^ 1]: with
/// `barrier`, after a __syncthreads (correct); without, a race.
__global__ void async_copy_neighbour(const float* in, float* out, int barrier) {
  __shared__ float s[64];
  const int t = threadIdx.x;
  __pipeline_memcpy_async(&s[t], &in[t], 4);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  if (barrier) __syncthreads();
  out[t] = s[t ^ 1];
}

/// A copy of `size` bytes to s + offset floats: 32 bytes, or 16 bytes to a 4-byte boundary, fault.
__global__ void async_copy_bad(const float* in, int size, int offset) {
  __shared__ __align__(16) float s[16];
  __pipeline_memcpy_async(&s[offset], in, static_cast<std::size_t>(size));
  __pipeline_commit();
  __pipeline_wait_prior(0);
}

/// Inside a branch taken by the threads whose index is not a multiple of 3: the coalesced group's
/// size, the caller's rank, rank 0's index, the next rank's index, and the ballot of odd indices.
__global__ void coalesced_in_branch(int* size, int* rank, int* first, int* next, unsigned long long* odd) {
  const int t = threadIdx.x;
  if (t % 3 != 0) {
    cg::coalesced_group g = cg::coalesced_threads();
    size[t] = static_cast<int>(g.size());
    rank[t] = static_cast<int>(g.thread_rank());
    first[t] = g.shfl(t, 0);
    next[t] = g.shfl_down(t, 1);
    odd[t] = g.ballot(t & 1);
  }
}

class CudaHeaders : public EmuTest {};
INSTANTIATE_TEST_SUITE_P(WarpSizes, CudaHeaders, ::testing::Values(32, 64),
                         [](const auto& info) { return "warp" + std::to_string(info.param); });

TEST_P(CudaHeaders, TiledPartitionReducesEachTile) {
  const int threads = 64;
  std::vector<int> in(threads);
  for (int i = 0; i < threads; ++i) in[i] = (i * 7) % 23 - 5;
  DeviceBuffer<int> d_in(in), sums(threads / 16), ranks(threads), maxima(threads / 8);
  launch(tile_sums, 1, threads, 0, d_in.data(), sums.data(), ranks.data(), maxima.data());
  gpulab::synchronize();
  const auto s = sums.download(), r = ranks.download(), m = maxima.download();
  for (int t = 0; t < threads / 16; ++t) {
    int expect = 0;
    for (int i = 0; i < 16; ++i) expect += in[t * 16 + i];
    EXPECT_EQ(s[t], expect) << "tile " << t;
  }
  for (int i = 0; i < threads; ++i) EXPECT_EQ(r[i], i % 16 + 100 * (i / 16));
  for (int t = 0; t < threads / 8; ++t) {
    int hi = in[t * 8], lo = in[t * 8];
    for (int i = 0; i < 8; ++i) hi = std::max(hi, in[t * 8 + i]), lo = std::min(lo, in[t * 8 + i]);
    EXPECT_EQ(m[t], hi * 1000 + lo) << "tile " << t;
  }
}

TEST_P(CudaHeaders, TileShufflesStayInsideTheTile) {
  DeviceBuffer<int> rotated(32), down(32), ballots(32);
  launch(tile_shuffles, 1, 32, 0, rotated.data(), down.data(), ballots.data());
  gpulab::synchronize();
  const auto a = rotated.download(), d = down.download(), b = ballots.download();
  for (int i = 0; i < 32; ++i) {
    const int base = i - i % 4;
    EXPECT_EQ(a[i], base + (i % 4 + 1) % 4) << i;
    const int below = i % 4 == 3 ? i : i + 1;  // shfl_down past the tile's end keeps its own value
    EXPECT_EQ(d[i], below + (i ^ 2) * 1000) << i;
    EXPECT_EQ(b[i], 0b0101 + (base == 4 ? 100 : 0) + 1000) << i;
  }
}

TEST_P(CudaHeaders, CacheHintedLoadsAndStoresAreTracedAccesses) {
  const int n = 100;
  std::vector<float> in(6 * n);
  for (int k = 0; k < 6 * n; ++k) in[k] = static_cast<float>(k);
  DeviceBuffer<float> d_in(in), out(4 * n);
  emu::reset_findings();
  emu::reset_metrics();
  launch(cache_hinted_copy, 2, 64, 0, d_in.data(), out.data(), n);
  gpulab::synchronize();
  const auto o = out.download();
  for (int i = 0; i < n; ++i) {
    const float a = 3.0f * i + 3.0f * n, b = 3.0f * i + 12.0f * n;
    EXPECT_EQ(o[i], a);
    EXPECT_EQ(o[n + i], b);
    EXPECT_EQ(o[2 * n + i], a + b);
    EXPECT_EQ(o[3 * n + i], a - b);
  }
  if (emu::metrics_available()) {
    long long loads = 0, stores = 0;
    for (const auto& m : emu::metrics_by_line()) (m.store ? stores : loads) += m.lane_accesses;
    EXPECT_EQ(loads, 6LL * n);
    EXPECT_EQ(stores, 4LL * n);
  }
  EXPECT_TRUE(emu::findings().empty());
}

TEST_P(CudaHeaders, CoalescedThreadsAreTheLanesInTheBranch) {
  const int threads = 128, ws = GetParam();
  DeviceBuffer<int> size(std::vector<int>(threads, -1)), rank(std::vector<int>(threads, -1)),
      first(std::vector<int>(threads, -1)), next(std::vector<int>(threads, -1));
  DeviceBuffer<unsigned long long> odd(std::vector<unsigned long long>(threads, 0));
  emu::reset_findings();
  launch(coalesced_in_branch, 1, threads, 0, size.data(), rank.data(), first.data(), next.data(), odd.data());
  gpulab::synchronize();
  const auto sz = size.download(), rk = rank.download(), fi = first.download(), nx = next.download();
  const auto od = odd.download();
  for (int base = 0; base < threads; base += ws) {
    std::vector<int> members;
    for (int t = base; t < base + ws; ++t)
      if (t % 3 != 0) members.push_back(t);
    unsigned long long odd_ranks = 0;
    for (std::size_t r = 0; r < members.size(); ++r)
      if (members[r] & 1) odd_ranks |= 1ull << r;
    for (std::size_t r = 0; r < members.size(); ++r) {
      const int t = members[r];
      EXPECT_EQ(sz[t], static_cast<int>(members.size())) << t;
      EXPECT_EQ(rk[t], static_cast<int>(r)) << t;
      EXPECT_EQ(fi[t], members[0]) << t;
      EXPECT_EQ(nx[t], r + 1 < members.size() ? members[r + 1] : t) << t;
      EXPECT_EQ(od[t], odd_ranks) << t;
    }
  }
  EXPECT_TRUE(emu::findings().empty());
}

TEST_P(CudaHeaders, AsyncCopiesLandAtTheWaitForTheirBatch) {
  std::vector<float> in(4 * 64);
  for (int k = 0; k < 4 * 64; ++k) in[k] = static_cast<float>(k);
  DeviceBuffer<float> d_in(in), before(64), middle(64), after(64);
  emu::reset_findings();
  launch(async_copy_batches, 1, 64, 0, d_in.data(), before.data(), middle.data(), after.data());
  gpulab::synchronize();
  const auto b = before.download(), m = middle.download(), a = after.download();
  for (int t = 0; t < 64; ++t) {
    EXPECT_EQ(b[t], -2.0f) << t;                       // neither batch has arrived
    EXPECT_EQ(m[t], in[4 * t] - 1.0f) << t;            // the first batch has, the second may not
    EXPECT_EQ(a[t], in[4 * t] + in[4 * t + 2]) << t;   // both
  }
  EXPECT_TRUE(emu::findings().empty());
}

TEST_P(CudaHeaders, AsyncCopiesNeedABarrierBeforeOtherThreadsRead) {
  std::vector<float> in(64);
  for (int k = 0; k < 64; ++k) in[k] = static_cast<float>(k);
  DeviceBuffer<float> d_in(in), out(64);
  emu::reset_findings();
  launch(async_copy_neighbour, 1, 64, 0, d_in.data(), out.data(), 1);
  gpulab::synchronize();
  const auto o = out.download();
  for (int t = 0; t < 64; ++t) EXPECT_EQ(o[t], in[t ^ 1]) << t;
  EXPECT_TRUE(emu::findings().empty());
  launch(async_copy_neighbour, 1, 64, 0, d_in.data(), out.data(), 0);
  gpulab::synchronize();
  bool race = false;
  for (const auto& f : emu::findings()) race = race || f.kind == "race";
  EXPECT_TRUE(race) << "a read of another thread's copy without a barrier after its wait is a race";
}

TEST_P(CudaHeaders, AsyncCopiesOfABadSizeOrAlignmentFault) {
  DeviceBuffer<float> d_in(std::vector<float>(16, 1.0f));
  launch(async_copy_bad, 1, 1, 0, d_in.data(), 32, 0);
  EXPECT_NE(expect_fault("async-copy").find("4, 8 or 16 bytes, not 32"), std::string::npos);
  launch(async_copy_bad, 1, 1, 0, d_in.data(), 16, 1);
  EXPECT_NE(expect_fault("misaligned").find("not aligned to its 16 bytes"), std::string::npos);
}

TEST_P(CudaHeaders, GridGroupRanksWithoutACooperativeLaunch) {
  const dim3 grid(3, 2), block(4, 2);
  DeviceBuffer<unsigned long long> where(48), sizes(1);
  emu::reset_findings();
  launch(grid_ranks, grid, block, 0, where.data(), sizes.data());
  gpulab::synchronize();
  const auto w = where.download();
  for (unsigned by = 0; by < 2; ++by)
    for (unsigned bx = 0; bx < 3; ++bx)
      for (unsigned ty = 0; ty < 2; ++ty)
        for (unsigned tx = 0; tx < 4; ++tx) {
          const unsigned long long block_rank = bx + 3 * by, in_block = tx + 4 * ty;
          EXPECT_EQ(w[block_rank * 8 + in_block], block_rank * 1000 + in_block);
        }
  EXPECT_EQ(sizes.download()[0], 48ull * 1000000 + 6 * 1000 + 3 * 10 + 2);
  EXPECT_TRUE(emu::findings().empty());
}

TEST_P(CudaHeaders, GridSyncStopsTheKernelSayingWhy) {
  DeviceBuffer<int> out(std::vector<int>(32, 0));
  launch(grid_sync_kernel, 2, 32, 0, out.data());
  const std::string what = expect_fault("unsupported");
  EXPECT_NE(what.find("cooperative launch"), std::string::npos) << what;
  EXPECT_NE(what.find("test_cuda_headers.cu:"), std::string::npos) << what;
}

TEST_P(CudaHeaders, CooperativeLaunchIsRefusedAsUnsupported) {
  int cooperative = -1;
  ASSERT_EQ(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, 0), cudaSuccess);
  EXPECT_EQ(cooperative, 0);
  DeviceBuffer<int> out(std::vector<int>(32, 0));
  int* p = out.data();
  void* args[] = {&p};
  EXPECT_EQ(cudaLaunchCooperativeKernel(grid_sync_kernel, 1, 32, args, 0, nullptr), cudaErrorNotSupported);
  EXPECT_EQ(cudaGetLastError(), cudaErrorNotSupported);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // not a fault of a kernel: nothing ran
  EXPECT_EQ(out.download()[0], 0);
}

TEST_P(CudaHeaders, TrapStopsTheKernel) {
  DeviceBuffer<int> out(std::vector<int>(32, 0));
  launch(trap_kernel, 1, 32, 0, out.data());
  const std::string what = expect_fault("trap");
  EXPECT_NE(what.find("__trap()"), std::string::npos) << what;
}

TEST_P(CudaHeaders, TileScansGiveEachRankItsPrefix) {
  const int threads = 64;
  std::vector<int> in(threads);
  for (int t = 0; t < threads; ++t) in[t] = (t * 7) % 11 - 3;
  DeviceBuffer<int> d_in(in), inc(threads), exc(threads), mx(threads);
  emu::reset_findings();
  launch(tile_scans, 1, threads, 0, d_in.data(), inc.data(), exc.data(), mx.data());
  gpulab::synchronize();
  const auto i = inc.download(), e = exc.download(), m = mx.download();
  for (int base = 0; base < threads; base += 8) {
    int sum = 0, top = in[base];
    for (int t = base; t < base + 8; ++t) {
      EXPECT_EQ(e[t], sum) << t;
      sum += in[t];
      top = std::max(top, in[t]);
      EXPECT_EQ(i[t], sum) << t;
      EXPECT_EQ(m[t], top) << t;
    }
  }
  EXPECT_TRUE(emu::findings().empty());
}

TEST_P(CudaHeaders, AtomicRefsAreAtomicsBetweenBlocks) {
  const int blocks = 4, threads = 64, n = blocks * threads;
  DeviceBuffer<unsigned> counters(std::vector<unsigned>{0, 0, 0, static_cast<unsigned>(n)}), exchanged(n);
  DeviceBuffer<float> sum(std::vector<float>(1, 0.0f));
  emu::reset_findings();
  launch(atomic_refs, blocks, threads, 0, counters.data(), sum.data(), exchanged.data());
  gpulab::synchronize();
  const auto c = counters.download();
  EXPECT_EQ(c[0], static_cast<unsigned>(n));
  EXPECT_EQ(c[1], static_cast<unsigned>(n - 1));
  EXPECT_EQ(c[2], 2u * n);
  EXPECT_EQ(sum.download()[0], 0.5f * n);
  // The exchanges form one chain: the first gets the initial n, then every id but the last one's
  // is handed out exactly once.
  std::vector<int> seen(n + 1, 0);
  for (unsigned v : exchanged.download()) ++seen[v];
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), n);
  for (const auto& f : emu::findings()) ADD_FAILURE() << f.kind << ": " << f.message;
}

TEST_P(CudaHeaders, LaunchKernelExRunsItsConfiguration) {
  DeviceBuffer<int> out(std::vector<int>(96, -1));
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(3);
  config.blockDim = dim3(32);
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributePriority;
  attribute[0].val.priority = 0;
  config.attrs = attribute;
  config.numAttrs = 1;
  ASSERT_EQ(cudaLaunchKernelEx(&config, fill_index, out.data(), 5), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto o = out.download();
  for (int k = 0; k < 96; ++k) EXPECT_EQ(o[k], 5 + k);
  config.blockDim = dim3(4096);  // more threads than a block may have
  EXPECT_EQ(cudaLaunchKernelEx(&config, fill_index, out.data(), 5), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
}

TEST(Float16, ConversionsRoundToNearestEven) {
  // Exact values, and the halfway cases between neighbours (ties to the even significand).
  EXPECT_EQ(__half_as_ushort(__float2half(1.0f)), 0x3c00);
  EXPECT_EQ(__half_as_ushort(__float2half(-2.0f)), 0xc000);
  EXPECT_EQ(__half_as_ushort(__float2half(65504.0f)), 0x7bff);  // largest finite
  EXPECT_EQ(__half_as_ushort(__float2half(1.0f + 1.0f / 2048)), 0x3c00);           // tie: to even (down)
  EXPECT_EQ(__half_as_ushort(__float2half(1.0f + 3.0f / 2048)), 0x3c02);           // tie: to even (up)
  EXPECT_EQ(__half_as_ushort(__float2half(1.0f + 1.0f / 2048 + 1e-7f)), 0x3c01);   // above the tie
  EXPECT_EQ(__half_as_ushort(__float2half(65519.0f)), 0x7bff);  // below the tie with infinity
  EXPECT_EQ(__half_as_ushort(__float2half(65520.0f)), 0x7c00);  // the tie: to even, infinity
  EXPECT_EQ(__half_as_ushort(__float2half(std::ldexp(1.0f, -24))), 0x0001);  // smallest subnormal
  EXPECT_EQ(__half_as_ushort(__float2half(std::ldexp(1.0f, -25))), 0x0000);  // tie with 0: even
  EXPECT_EQ(__half_as_ushort(__float2half(std::ldexp(3.0f, -25))), 0x0002);  // tie: to even
  EXPECT_EQ(__half_as_ushort(__float2half(-0.0f)), 0x8000);
  EXPECT_EQ(__half_as_ushort(__float2half(std::numeric_limits<float>::infinity())), 0x7c00);
  EXPECT_TRUE(__hisnan(__float2half(std::nanf(""))));
  EXPECT_EQ(__half2float(__ushort_as_half(0x0001)), std::ldexp(1.0f, -24));
  EXPECT_EQ(__half2float(__ushort_as_half(0x3555)), 0.333251953125f);
  EXPECT_EQ(__half2float(__float2half(0.1f)), 0.0999755859375f);
  // Every finite half converts to float and back unchanged.
  for (unsigned b = 0; b < 0x10000; ++b) {
    if ((b & 0x7c00) == 0x7c00) continue;
    const __half h = __ushort_as_half(static_cast<unsigned short>(b));
    ASSERT_EQ(__half_as_ushort(__float2half(__half2float(h))), b);
  }
  // Arithmetic rounds once: 2049 is not a half; 2048 + 1 rounds to even (2048), 2048 + 3 to 2052.
  EXPECT_EQ(__half2float(__hadd(__float2half(2048.0f), __float2half(1.0f))), 2048.0f);
  EXPECT_EQ(__half2float(__hadd(__float2half(2048.0f), __float2half(3.0f))), 2052.0f);
  EXPECT_EQ(__half2float(__float2half(1.5f) * __float2half(2.0f)), 3.0f);
  const float2 f = __half22float2(__floats2half2_rn(1.25f, -3.5f));
  EXPECT_EQ(f.x, 1.25f);
  EXPECT_EQ(f.y, -3.5f);
}

TEST(BFloat16, ConversionsRoundToNearestEven) {
  EXPECT_EQ(__bfloat16_as_ushort(__float2bfloat16(1.0f)), 0x3f80);
  EXPECT_EQ(__bfloat16_as_ushort(__float2bfloat16(1.0f + 1.0f / 256)), 0x3f80);  // tie: even (down)
  EXPECT_EQ(__bfloat16_as_ushort(__float2bfloat16(1.0f + 3.0f / 256)), 0x3f82);  // tie: even (up)
  EXPECT_EQ(__bfloat16_as_ushort(__float2bfloat16(std::numeric_limits<float>::max())), 0x7f80);  // rounds to inf
  EXPECT_EQ(__bfloat16_as_ushort(__float2bfloat16(std::numeric_limits<float>::denorm_min())), 0x0000);  // far below the smallest subnormal
  EXPECT_EQ(__bfloat162float(__float2bfloat16(3.14159265f)), 3.140625f);
  EXPECT_TRUE(__hisnan(__float2bfloat16(std::nanf(""))));
  // The bit-level rule every float must follow: the top 16 bits, rounded to nearest even.
  for (std::uint32_t x = 0; x < 0x7f800000u; x += 0x00012345u) {
    float f;
    std::memcpy(&f, &x, 4);
    const std::uint32_t expect = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    ASSERT_EQ(__bfloat16_as_ushort(__float2bfloat16(f)), expect) << std::hex << x;
  }
  EXPECT_EQ(__bfloat162float(__float2bfloat16(1.5f) + __float2bfloat16(2.25f)), 3.75f);
}

TEST_P(CudaHeaders, HalfAndBfloat16InKernels) {
  std::vector<float> in(32);
  for (int i = 0; i < 32; ++i) in[i] = 0.5f * static_cast<float>(i);
  DeviceBuffer<float> d_in(in), out(64);
  launch(half_math, 1, 32, 0, d_in.data(), out.data());
  gpulab::synchronize();
  const auto o = out.download();
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(o[i], 4 * in[i]);
    EXPECT_EQ(o[32 + i], 2 * in[i]);
  }
}

TEST_P(CudaHeaders, MinMaxTakeMixedSignedness) {
  DeviceBuffer<int> out(65);
  launch(mixed_min_max, 1, 64, 0, out.data(), 40);
  gpulab::synchronize();
  const auto o = out.download();
  for (int t = 0; t < 64; ++t) EXPECT_EQ(o[t], 40 * 1000 + std::max(t, 3));
  EXPECT_EQ(o[64], 1);
}

TEST_P(CudaHeaders, DynamicSharedViewsOfDifferentTypesAlias) {
  DeviceBuffer<unsigned> out(64);
  launch(dynamic_shared_views, 1, 64, 64 * sizeof(float), out.data());
  gpulab::synchronize();
  const auto o = out.download();
  for (unsigned t = 0; t < 64; ++t) {
    const float f = 1.0f + static_cast<float>(t);
    unsigned bits;
    std::memcpy(&bits, &f, 4);
    EXPECT_EQ(o[t], bits);
  }
}

TEST(HostCode, VariablesNamedLikeTheBuiltins) {
  // CUDA programs often name their launch configuration so: it must compile and mean the local.
  dim3 blockDim(16, 16);
  dim3 gridDim(4, 2);
  dim3 threadIdx(1, 2, 3);
  EXPECT_EQ(blockDim.x * blockDim.y, 256u);
  EXPECT_EQ(gridDim.x * gridDim.y * gridDim.z, 8u);
  EXPECT_EQ(threadIdx.z, 3u);
}

TEST(Hip, RuntimeNamesAndLaunchMapOntoTheEmulator) {
  hipDeviceReset();
  int* d = nullptr;
  ASSERT_EQ(hipMalloc(&d, 128 * sizeof(int)), hipSuccess);
  hipLaunchKernelGGL(hip_indices, dim3(2), dim3(64), 0, 0, d);
  EXPECT_EQ(hipGetLastError(), hipSuccess);
  EXPECT_EQ(hipDeviceSynchronize(), hipSuccess);
  std::vector<int> host(128);
  ASSERT_EQ(hipMemcpy(host.data(), d, 128 * sizeof(int), hipMemcpyDeviceToHost), hipSuccess);
  EXPECT_EQ(host[64 + 5], 1005);
  hipDeviceProp_t prop;
  ASSERT_EQ(hipGetDeviceProperties(&prop, 0), hipSuccess);
  EXPECT_EQ(prop.warpSize, emu::warp_size());
  // An invalid launch becomes the last error, not an exception.
  hipLaunchKernelGGL(hip_indices, dim3(1), dim3(4096), 0, 0, d);
  EXPECT_EQ(hipGetLastError(), hipErrorInvalidConfiguration);
  EXPECT_EQ(hipGetLastError(), hipSuccess);
  EXPECT_EQ(hipFree(d), hipSuccess);
}
