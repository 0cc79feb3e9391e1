// Block loops (tools/perfmodel/twin_pass.cpp): a kernel without barriers, warp collectives or
// calls gets a copy that runs all the threads of a block in one call, one after another in the
// order the emulator runs them anyway. The emulator uses it in blocks nobody checks (this file is
// traced: blocks outside the sample of GPULAB_EMU_CHECKS=sample) and in every block of a file
// compiled without checks (block_loops_plain.cpp). Results must be exactly the same.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>

#include "block_loop_kernels.hpp"
#include "gpulab/emu/metrics.hpp"

namespace emu = gpulab::emu;

const void* plain_affine_kernel();
void plain_affine(const float* in, float* out, int n);
void plain_out_of_bounds(float* out);
void plain_restrict_chain(float* buf, int n);

namespace {

template <class K>
const void* key(K* kernel) {
  return reinterpret_cast<const void*>(kernel);
}

std::vector<float> inputs(int n) {
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = static_cast<float>((i * 7919) % 2003) * 0.37f - 300.0f;
  return h;
}

/// Restores the defaults whichever way a test ends.
struct Defaults {
  ~Defaults() {
    emu::set_check_sampling(false);
    emu::set_block_loops(true);
  }
};

long long loop_blocks() { return emu::check_coverage().loop_blocks; }

/// The output bytes of `run` (which fills `out`), with block loops on or off.
template <class T>
std::vector<T> run_once(bool loops, gpulab::DeviceBuffer<T>& out, const std::function<void()>& run) {
  emu::set_block_loops(loops);
  gpulab::fill_bytes(out.data(), 0xab, out.bytes());
  run();
  gpulab::synchronize();
  return out.download();
}

template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

}  // namespace

TEST(BlockLoops, OnlyKernelsWithoutBarriersWarpCollectivesOrCallsHaveOne) {
  for (const void* k : {key(bl_affine), key(bl_three_d), key(bl_local_array), key(bl_shared_own_slot),
                        key(bl_math), key(bl_guards), key(bl_wrapping_guard), key(bl_by_value),
                        key(bl_restrict_chain), key(bl_grid_stride)})
    EXPECT_TRUE(emu::has_block_loop(k));
  EXPECT_FALSE(emu::has_block_loop(key(bl_barrier)));
  EXPECT_FALSE(emu::has_block_loop(key(bl_shuffle)));
  EXPECT_FALSE(emu::has_block_loop(key(bl_atomic)));
  EXPECT_FALSE(emu::has_block_loop(key(bl_calls)));
  EXPECT_FALSE(emu::has_block_loop(key(bl_no_thread_index)));
  EXPECT_FALSE(emu::has_block_loop(key(bl_runtime_sized_local)));
  EXPECT_FALSE(emu::has_block_loop(key(bl_writes_index)));
  EXPECT_TRUE(emu::has_block_loop(plain_affine_kernel()));
}

TEST(BlockLoops, ComputeExactlyWhatTheThreadsComputeOneAfterAnother) {
  Defaults restore;
  emu::set_check_sampling(true);  // most blocks unchecked: they run as loops
  const int n = 300 * 256 + 77;   // a last block that is partly out of range
  const int blocks = (n + 255) / 256;
  const std::vector<float> h = inputs(n);
  gpulab::DeviceBuffer<float> in(h), out(n);
  const std::vector<std::pair<const char*, std::function<void()>>> kernels = {
      {"affine", [&] { gpulab::launch(bl_affine, blocks, 256, 0, in.data(), out.data(), n); }},
      {"local array", [&] { gpulab::launch(bl_local_array, blocks, 256, 0, in.data(), out.data(), n); }},
      {"shared, own slot", [&] { gpulab::launch(bl_shared_own_slot, blocks, 256, 0, in.data(), out.data(), n); }},
      {"math", [&] { gpulab::launch(bl_math, blocks, 256, 0, in.data(), out.data(), n); }},
      {"grid stride", [&] { gpulab::launch(bl_grid_stride, 37, 128, 0, in.data(), out.data(), n); }},
      {"guards", [&] { gpulab::launch(bl_guards, blocks, 256, 0, in.data(), out.data(), n, 0u, 40000u); }},
      {"guards, an index that wraps in block 1",
       [&] { gpulab::launch(bl_guards, blocks, 256, 0, in.data(), out.data(), n, 0xffffffffu - 300u, 5000u); }},
      {"a parameter by value, written by each thread",
       [&] {
         BlTaps f{{1, 2, 3, 4, 5, 6, 7}, 5};
         gpulab::launch(bl_by_value, blocks, 256, 0, f, in.data(), out.data(), n);
       }},
      {"a store's guard", [&] { gpulab::launch(bl_wrapping_guard, blocks, 256, 0, out.data(), n, 0u, 0xfffffff0u); }},
      // u < limit at each block's first thread (u = 2^32 - 128) and at its last (u = 127, after
      // the wrap), not in between: true at both ends, yet not for the whole block.
      {"a store's guard, true at both ends of each block but not between",
       [&] { gpulab::launch(bl_wrapping_guard, blocks, 256, 0, out.data(), n, 0xffffff80u, 0xfffffff0u); }},
  };
  for (const auto& [name, run] : kernels) {
    SCOPED_TRACE(name);
    const std::vector<float> threads = run_once(false, out, run);
    const long long before = loop_blocks();
    const std::vector<float> loops = run_once(true, out, run);
    EXPECT_GT(loop_blocks() - before, 30);  // all but the sampled blocks
    EXPECT_TRUE(same_bytes(threads, loops));
  }
  // Three dimensions, threads that return early (their elements keep the fill).
  const dim3 grid(3, 2, 2), block(5, 3, 4);
  gpulab::DeviceBuffer<int> ints(12 * 60);
  auto three_d = [&] { gpulab::launch(bl_three_d, grid, block, 0, ints.data()); };
  const std::vector<int> threads = run_once(false, ints, three_d);
  const long long before = loop_blocks();
  const std::vector<int> loops = run_once(true, ints, three_d);
  EXPECT_GT(loop_blocks() - before, 0);
  EXPECT_TRUE(same_bytes(threads, loops));
  EXPECT_EQ(loops[0], 0);                 // block 0, thread 0
  EXPECT_EQ(loops[2 + 5], 0xabababab);    // thread (2,1,0) returned
  EXPECT_EQ(loops[59], 59 * 1000 + 3);    // thread (4,2,3) of block 0
  EXPECT_EQ(loops[11 * 60 + 59], 59 * 1000 + 11 * 7 + 3);
}

TEST(BlockLoops, RunOnlyInBlocksNobodyChecks) {
  Defaults restore;
  const int blocks = 64, n = blocks * 256;
  gpulab::DeviceBuffer<float> in(inputs(n)), out(n);
  emu::set_check_sampling(false);  // every block of this traced file checked: no block loop
  emu::reset_metrics();
  long long before = loop_blocks();
  gpulab::launch(bl_affine, blocks, 256, 0, in.data(), out.data(), n);
  gpulab::synchronize();
  EXPECT_EQ(loop_blocks(), before);
  long long loads = 0;
  for (const auto& m : emu::metrics_by_line())
    if (!m.shared && !m.store) loads += m.requests;
  EXPECT_EQ(loads, blocks * (256 / 32));  // every warp's load measured

  emu::set_check_sampling(true);  // the first, the last and a few others checked
  before = loop_blocks();
  const emu::CheckCoverage c0 = emu::check_coverage();
  gpulab::launch(bl_affine, blocks, 256, 0, in.data(), out.data(), n);
  gpulab::synchronize();
  const emu::CheckCoverage c1 = emu::check_coverage();
  EXPECT_EQ(c1.loop_blocks - c0.loop_blocks, blocks - (c1.checked_blocks - c0.checked_blocks));
  EXPECT_GE(c1.checked_blocks - c0.checked_blocks, 2);
}

TEST(BlockLoops, RunInEveryBlockOfAFileWithoutChecks) {
  Defaults restore;
  emu::set_check_sampling(false);
  const int n = 100 * 256 + 3, blocks = (n + 255) / 256;
  gpulab::DeviceBuffer<float> in(inputs(n)), out(n);
  const std::vector<float> traced =
      run_once(true, out, [&] { gpulab::launch(bl_affine, blocks, 256, 0, in.data(), out.data(), n); });
  const long long before = loop_blocks();
  const std::vector<float> plain = run_once(true, out, [&] { plain_affine(in.data(), out.data(), n); });
  EXPECT_EQ(loop_blocks() - before, blocks);
  EXPECT_TRUE(same_bytes(traced, plain));
  const long long off = loop_blocks();
  const std::vector<float> without = run_once(false, out, [&] { plain_affine(in.data(), out.data(), n); });
  EXPECT_EQ(loop_blocks(), off);
  EXPECT_TRUE(same_bytes(traced, without));
}

TEST(BlockLoops, KeepTheThreadsOrderWhereRestrictPromisesOnlyOneThreadsAccesses) {
  Defaults restore;
  const int n = 40 * 256 + 9;
  const int workers = emu::workers();
  emu::set_workers(1);  // the chain also crosses blocks: one after another, in order
  gpulab::DeviceBuffer<float> buf(n);
  const std::vector<float> start = inputs(n);
  auto chain = [&](bool loops) {
    emu::set_block_loops(loops);
    buf.upload(start);
    plain_restrict_chain(buf.data(), n);
    gpulab::synchronize();
    return buf.download();
  };
  const std::vector<float> threads = chain(false);
  const long long before = loop_blocks();
  const std::vector<float> loops = chain(true);
  EXPECT_EQ(loop_blocks() - before, (n + 255) / 256);
  EXPECT_TRUE(same_bytes(threads, loops));
  EXPECT_EQ(threads[300], start[0] + 300.0f);  // a chain through the threads
  emu::set_workers(workers);
}

TEST(BlockLoops, TheSameForOneAndEightWorkers) {
  Defaults restore;
  const int workers = emu::workers();
  emu::set_check_sampling(true);
  const int n = 500 * 256 + 11, blocks = (n + 255) / 256;
  gpulab::DeviceBuffer<float> in(inputs(n)), out(n);
  std::vector<std::vector<float>> got;
  std::vector<emu::CheckCoverage> coverage;
  for (int w : {1, 8}) {
    emu::set_workers(w);
    const emu::CheckCoverage c0 = emu::check_coverage();
    got.push_back(run_once(true, out, [&] { gpulab::launch(bl_guards, blocks, 256, 0, in.data(), out.data(), n, 7u, 90000u); }));
    const emu::CheckCoverage c1 = emu::check_coverage();
    coverage.push_back({c1.checked_blocks - c0.checked_blocks, c1.blocks - c0.blocks, c1.loop_blocks - c0.loop_blocks});
  }
  emu::set_workers(workers);
  EXPECT_TRUE(same_bytes(got[0], got[1]));
  EXPECT_EQ(coverage[0].blocks, blocks);
  EXPECT_EQ(coverage[1].blocks, blocks);
  EXPECT_EQ(coverage[0].loop_blocks, coverage[0].blocks - coverage[0].checked_blocks);
  EXPECT_EQ(coverage[1].loop_blocks, coverage[1].blocks - coverage[1].checked_blocks);
  EXPECT_GT(coverage[0].loop_blocks, 400);
}

TEST(BlockLoopsDeathTest, ACrashInABlockLoopNamesItsBlock) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  gpulab::DeviceBuffer<float> out(16);
  EXPECT_DEATH(
      {
        gpulab::emu::set_workers(1);
        plain_out_of_bounds(out.data());
        gpulab::synchronize();
      },
      "invalid memory access \\(segmentation fault at address 0x[0-9a-f]+\\) in a thread of block \\(0,0,0\\).*"
      "an unchecked block, run as one loop over its threads.*GPULAB_EMU_BLOCK_LOOPS=0");
}
