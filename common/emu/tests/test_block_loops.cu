// Block loops (common/emu/passes/twin_pass.cpp): a kernel without barriers, warp collectives or
// calls gets a copy that runs all the threads of a block in one call, one after another in the
// order the emulator runs them anyway. The emulator uses it in blocks nobody checks (this file is
// traced: blocks outside the sample of GPULAB_EMU_CHECKS=sample) and in every block of a file
// compiled without checks (block_loops_plain.cpp). Results must be exactly the same.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "block_loop_kernels.hpp"
#include "gpulab/emu/metrics.hpp"

namespace emu = gpulab::emu;

const void* plain_affine_kernel();
void plain_affine(const float* in, float* out, int n);
void plain_out_of_bounds(float* out);
void plain_restrict_chain(float* buf, int n);
void plain_racy_phases(float* out, int blocks, int rounds);
void plain_kept_values(const float* in, float* out, int n, int rounds);
void plain_not_alike(const float* in, float* out, int n, int split);
const void* plain_dynamic_shared_kernel();
void plain_dynamic_shared(float* out, int blocks);
void plain_return_before_barrier(float* out, int blocks, int quit);
void plain_divergent_barriers(float* out, int blocks, int split);
void plain_loop_exit_kept(const float* in, float* out, int n);
void plain_odd_sized_array(const float* in, float* out, int n);
void plain_dot(const float* a, const float* b, float* c, int n);
void plain_in_place_after_barrier(float* buf, int blocks);
void plain_reads_neighbours(float* buf, int n, int span);
void plain_pointer_table(float* const* outs, const float* in, int n, int m);
void plain_stride_sum(const float* in, float* out, int n, int blocks);
void plain_stride_variety(int which, const float* in, const unsigned* lens, float* out, int n, int blocks);
void plain_warp_sum(const float* in, float* out, int n, int blocks, int threads);
void plain_warp_mix(const float* in, float* out, int n, int threads, int width);
void plain_warp_race(float* out, int blocks, int threads, int rounds);
void plain_shuffle(float* out, int blocks, int threads);
void plain_warp_narrow_mask(float* out, int blocks);
void plain_warp_faults(int which, float* out, int blocks);
void plain_order(int* tickets, int blocks, dim3 threads, int pattern, int steps);

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

using Runs = std::vector<std::pair<const char*, std::function<void()>>>;

/// Each of `runs` (filling `out`) computes the same bytes with block loops as without, and runs
/// more than `loops` blocks as loops.
void expect_the_same_with_block_loops(gpulab::DeviceBuffer<float>& out, const Runs& runs, long long loops) {
  for (const auto& [name, run] : runs) {
    SCOPED_TRACE(name);
    const std::vector<float> threads = run_once(false, out, run);
    const long long before = loop_blocks();
    const std::vector<float> with_loops = run_once(true, out, run);
    EXPECT_GT(loop_blocks() - before, loops);
    EXPECT_TRUE(same_bytes(threads, with_loops));
  }
}

}  // namespace

TEST(BlockLoops, OnlyKernelsWithoutAtomicsCallsOrCollectivesSomeThreadsSkipHaveOne) {
  for (const void* k : {key(bl_affine), key(bl_three_d), key(bl_local_array), key(bl_shared_own_slot),
                        key(bl_math), key(bl_guards), key(bl_wrapping_guard), key(bl_by_value),
                        key(bl_restrict_chain), key(bl_grid_stride), key(bl_dot), key(bl_reads_neighbours),
                        key(bl_pointer_table), key(bl_local_in_loop)})
    EXPECT_TRUE(emu::has_block_loop(k));
  // With __syncthreads: phase by phase.
  for (const void* k : {key(bl_barrier), key(bl_tile_transpose), key(bl_tree), key(bl_kept_values),
                        key(bl_racy_phases), key(bl_not_alike), key(bl_redefined_in_phase),
                        key(bl_barriers_at_one_place), key(bl_barrier_if), key(bl_return_before_barrier),
                        key(bl_divergent_barriers), key(bl_loop_exit_kept), key(bl_odd_sized_array)})
    EXPECT_TRUE(emu::has_block_loop(k));
  EXPECT_FALSE(emu::has_block_loop(key(bl_barrier_count)));
  EXPECT_FALSE(emu::has_block_loop(key(bl_one_place_uneven)));
  EXPECT_FALSE(emu::has_block_loop(key(bl_by_value_barrier)));
  // With warp collectives every thread reaches alike: phase by phase too.
  for (const void* k : {key(bl_shuffle), key(bl_warp_sum), key(bl_warp_scan), key(bl_warp_mix), key(bl_warp_exchange),
                        key(bl_warp_race), key(bl_warp_halves), key(bl_warp_narrow_mask), key(bl_order),
                        key(bl_warp_wild_offsets)})
    EXPECT_TRUE(emu::has_block_loop(k));
  for (const void* k : {key(bl_warp_literal_mask), key(bl_warp_two_faults), key(bl_warp_bad_width_no_mask),
                        key(bl_warp_crossed_masks)})
    EXPECT_TRUE(emu::has_block_loop(k));
  EXPECT_FALSE(emu::has_block_loop(key(bl_shuffle_first_warp)));
  EXPECT_FALSE(emu::has_block_loop(key(bl_shuffle_after_return)));
  EXPECT_FALSE(emu::has_block_loop(key(bl_atomic)));
  EXPECT_FALSE(emu::has_block_loop(key(bl_calls)));
  EXPECT_FALSE(emu::has_block_loop(key(bl_no_thread_index)));
  EXPECT_FALSE(emu::has_block_loop(key(bl_runtime_sized_local)));
  EXPECT_FALSE(emu::has_block_loop(key(bl_writes_index)));
  EXPECT_TRUE(emu::has_block_loop(plain_affine_kernel()));
  EXPECT_TRUE(emu::has_block_loop(plain_dynamic_shared_kernel()));
}

TEST(BlockLoops, ComputeExactlyWhatTheThreadsComputeOneAfterAnother) {
  Defaults restore;
  emu::set_check_sampling(true);  // most blocks unchecked: they run as loops
  const int n = 300 * 256 + 77;   // a last block that is partly out of range
  const int blocks = (n + 255) / 256;
  const std::vector<float> h = inputs(n);
  gpulab::DeviceBuffer<float> in(h), out(n);
  const Runs kernels = {
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
  expect_the_same_with_block_loops(out, kernels, 30);  // all but the sampled blocks
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

// ---- the jam copy: several threads' inner loops together ----

TEST(BlockLoops, RunThreadsLoopsTogetherOnlyWhereThePointersLieApart) {
  Defaults restore;
  const int workers = emu::workers();
  emu::set_workers(1);  // in place, a block reads what other blocks write: one after another
  const int n = 70;  // 5 x 5 blocks of 16 x 16, the last row and column partly outside
  const std::vector<float> ha = inputs(n * n), hb = inputs(n * n + 5);
  gpulab::DeviceBuffer<float> a(ha), b(hb), c(n * n);
  auto dims = [] { return std::make_pair(dim3(5, 5), dim3(16, 16)); };
  auto coverage = [] { return emu::check_coverage(); };
  for (const bool plain : {false, true}) {
    SCOPED_TRACE(plain ? "a plain file, every block a loop" : "a traced file, sampled blocks");
    emu::set_check_sampling(!plain);
    auto dot = [&](const float* x, const float* y, float* z) {
      if (plain)
        plain_dot(x, y, z, n);
      else
        gpulab::launch(bl_dot, dims().first, dims().second, 0, x, y, z, n);
    };
    // Apart: the jam copy runs.
    const emu::CheckCoverage before = coverage();
    expect_the_same_with_block_loops(c, {{"c apart from a and b", [&] { dot(a.data(), b.data(), c.data()); }}}, 0);
    EXPECT_GT(coverage().jam_blocks - before.jam_blocks, 0);
    EXPECT_EQ(coverage().jam_refused, before.jam_refused);
    // In place (c is a) and c inside b's allocation: the plain block loop runs instead.
    const emu::CheckCoverage middle = coverage();
    expect_the_same_with_block_loops(
        a,
        {{"c == a",
          [&] {
            a.upload(ha);
            dot(a.data(), b.data(), a.data());
          }},
         {"c == b + 5",
          [&] {
            b.upload(hb);
            a.upload(ha);
            dot(a.data(), b.data(), b.data() + 5);
            gpulab::synchronize();
            gpulab::copy_device_to_device(a.data(), b.data() + 5, a.bytes());  // the output, to compare
          }}},
        0);
    EXPECT_EQ(coverage().jam_blocks, middle.jam_blocks);
    EXPECT_GT(coverage().jam_refused - middle.jam_refused, 0);
  }
  // A local array written in the inner loop: one copy for the block loop's threads in turn.
  emu::set_check_sampling(true);
  const int m = 13, len = 40 * 256 + 3;
  gpulab::DeviceBuffer<float> in(inputs(len)), out(len);
  const emu::CheckCoverage before = coverage();
  expect_the_same_with_block_loops(
      out, {{"a local array in the loop", [&] { gpulab::launch(bl_local_in_loop, 41, 256, 0, in.data(), out.data(), len, m); }}},
      0);
  EXPECT_GT(coverage().jam_blocks - before.jam_blocks, 0);
  emu::set_workers(workers);
}

TEST(BlockLoops, RunThreadsLoopsInOrderWhereOneReadsWhatAnotherWrote) {
  Defaults restore;
  const int workers = emu::workers();
  emu::set_workers(1);  // the chain crosses blocks: one after another, in order
  const int n = 1000, span = 3;
  const std::vector<float> start = inputs(n);
  gpulab::DeviceBuffer<float> buf(n);
  std::vector<float> want = start;  // thread after thread, as the emulator runs them
  for (int i = 0; i < n; ++i) {
    float acc = 0;
    for (int k = 1; k <= span; ++k) acc += want[(i + n - k) % n] * 0.5f;
    want[i] = acc + 1.0f;
  }
  for (const bool loops : {false, true}) {
    SCOPED_TRACE(loops ? "block loops" : "threads");
    emu::set_block_loops(loops);
    buf.upload(start);
    plain_reads_neighbours(buf.data(), n, span);
    gpulab::synchronize();
    EXPECT_TRUE(same_bytes(buf.download(), want));
  }
  // Pointers read from memory: the jam copy knows nothing of where they point.
  const int m = 9;
  gpulab::DeviceBuffer<float> in(start), out0(n), out1(n);
  const std::vector<float*> table = {out0.data(), out1.data()};
  gpulab::DeviceBuffer<float*> outs(table);
  std::vector<std::vector<float>> got;
  for (const bool loops : {false, true}) {
    emu::set_block_loops(loops);
    gpulab::fill_bytes(out0.data(), 0, out0.bytes());
    gpulab::fill_bytes(out1.data(), 0, out1.bytes());
    plain_pointer_table(outs.data(), in.data(), n, m);
    gpulab::synchronize();
    got.push_back(out0.download());
    const std::vector<float> second = out1.download();
    got.back().insert(got.back().end(), second.begin(), second.end());
  }
  EXPECT_TRUE(same_bytes(got[0], got[1]));
  emu::set_workers(workers);
}

TEST(BlockLoops, RunGridStrideLoopsTogetherOnlyWhereEveryThreadOfTheBlockCountsAlike) {
  Defaults restore;
  const int blocks = 6, threads = 128, whole = 5 * blocks * threads;
  const std::vector<float> h = inputs(2 * whole + 200);
  gpulab::DeviceBuffer<float> in(h), out(blocks * 8);
  for (const bool plain : {false, true}) {
    SCOPED_TRACE(plain ? "a plain file, every block a loop" : "a traced file, sampled blocks");
    emu::set_check_sampling(!plain);
    auto sum = [&](const float* x, float* y, int n) {
      if (plain)
        plain_stride_sum(x, y, n, blocks);
      else
        gpulab::launch(bl_stride_sum, blocks, threads, 0, x, y, n);
    };
    // Runs sum(n) with block loops off and on (the same bytes), and returns how many of the blocks
    // run as loops the jam copy ran jammed, and how many it ran thread after thread.
    auto jammed_and_not = [&](int n) {
      const std::vector<float> threads_out = run_once(false, out, [&] { sum(in.data(), out.data(), n); });
      const emu::CheckCoverage before = emu::check_coverage();
      const long long loops_before = loop_blocks();
      const std::vector<float> loops_out = run_once(true, out, [&] { sum(in.data(), out.data(), n); });
      const emu::CheckCoverage after = emu::check_coverage();
      EXPECT_TRUE(same_bytes(threads_out, loops_out)) << "n = " << n;
      EXPECT_EQ(after.jam_blocks - before.jam_blocks + after.jam_refused - before.jam_refused,
                loop_blocks() - loops_before) << "n = " << n;
      return std::make_pair(after.jam_blocks - before.jam_blocks, after.jam_refused - before.jam_refused);
    };
    // Every thread sums 5 elements: every block jammed.
    const auto [all_jammed, none] = jammed_and_not(whole);
    EXPECT_GT(all_jammed, 0);
    EXPECT_EQ(none, 0);
    // 5 or 6 elements: the threads of block 3 count differently (those below 384 + 77 sum 6).
    // 300 elements for 768 threads: in block 2 some threads sum 1 and some none, and no thread of
    // blocks 3 to 5 enters the loop. Those blocks run thread after thread; the others jammed.
    const auto [jammed_6, not_6] = jammed_and_not(whole + 3 * threads + 77);
    const auto [jammed_300, not_300] = jammed_and_not(300);
    if (plain) {
      EXPECT_EQ(jammed_6, 5);
      EXPECT_EQ(not_6, 1);
      EXPECT_EQ(jammed_300, 2);
      EXPECT_EQ(not_300, 4);
    }
    // The output inside the input's allocation: the copy's pointer check refuses every block.
    gpulab::DeviceBuffer<float> both(h);
    float* inside = both.data() + 2 * whole + 100;  // (past what the sums read)
    std::vector<std::vector<float>> got;
    const emu::CheckCoverage before = emu::check_coverage();
    for (const bool loops : {false, true}) {
      emu::set_block_loops(loops);
      sum(both.data(), inside, whole);
      gpulab::synchronize();
      got.push_back(both.download());
    }
    EXPECT_TRUE(same_bytes(got[0], got[1]));
    EXPECT_EQ(emu::check_coverage().jam_blocks, before.jam_blocks);
    EXPECT_GT(emu::check_coverage().jam_refused - before.jam_refused, 0);
    // Loops the check runs as they are or handles (bl_stride_two, _bound, _pointer): the same bytes.
    const std::vector<unsigned> lens = {40, 3000, 7000, 5};
    gpulab::DeviceBuffer<unsigned> dlens(lens);
    gpulab::DeviceBuffer<float> wide(blocks * threads);
    for (int which = 0; which < 3; ++which)
      for (const int n : {whole, whole + 77, 300}) {
        SCOPED_TRACE("bl_stride variety " + std::to_string(which) + ", n = " + std::to_string(n));
        auto* kernel = which == 0 ? bl_stride_two : which == 1 ? bl_stride_bound : bl_stride_pointer;
        expect_the_same_with_block_loops(wide,
                                         {{"variety",
                                           [&] {
                                             if (plain)
                                               plain_stride_variety(which, in.data(), dlens.data(), wide.data(), n, blocks);
                                             else
                                               gpulab::launch(kernel, blocks, dim3(32, 4), 0, in.data(),
                                                              static_cast<const unsigned*>(dlens.data()), wide.data(), n);
                                           }}},
                                         0);
      }
  }
}

TEST(BlockLoops, WithBarriersComputeExactlyWhatTheThreadsComputeBetweenThem) {
  Defaults restore;
  emu::set_check_sampling(true);  // most blocks unchecked: they run as loops
  const int n = 90 * 256 + 77, blocks = (n + 255) / 256;
  const std::vector<float> h = inputs(n);
  gpulab::DeviceBuffer<float> in(h), out(n);
  const int side = 150;  // 10 x 10 tiles of 16 x 16, the last ones partly outside
  const Runs kernels = {
      {"a tile transposed through shared memory",
       [&] { gpulab::launch(bl_tile_transpose, dim3(10, 10), dim3(16, 16), 0, in.data(), out.data(), side); }},
      {"a tree, a barrier in a loop", [&] { gpulab::launch(bl_tree, blocks, 256, 0, in.data(), out.data(), n); }},
      {"a tree over 100 threads", [&] { gpulab::launch(bl_tree, 70, 100, 0, in.data(), out.data(), n); }},
      {"values kept across barriers", [&] { gpulab::launch(bl_kept_values, blocks, 256, 0, in.data(), out.data(), n, 5); }},
      {"values alike in every thread, and not", [&] { gpulab::launch(bl_not_alike, blocks, 256, 0, in.data(), out.data(), n, 77); }},
      {"a uniform value redefined in the phase that uses it",
       [&] { gpulab::launch(bl_redefined_in_phase, blocks, 256, 0, in.data(), out.data(), n, 8); }},
      {"a barrier on a uniform path, taken", [&] { gpulab::launch(bl_barrier_if, blocks, 256, 0, in.data(), out.data(), n, 6); }},
      {"a barrier on a uniform path, not taken",
       [&] { gpulab::launch(bl_barrier_if, blocks, 256, 0, in.data(), out.data(), n, 7); }},
      {"two barriers at one place", [&] { gpulab::launch(bl_barriers_at_one_place, 40, 256, 0, out.data()); }},
      {"a race between barriers, 3 phases", [&] { gpulab::launch(bl_racy_phases, 40, 256, 0, out.data(), 2); }},
      {"a race between barriers, 300 phases (more than the block's threads)",
       [&] { gpulab::launch(bl_racy_phases, 40, 96, 0, out.data(), 299); }},
      {"a value from a loop left at a different iteration in each thread, kept across a barrier",
       [&] { gpulab::launch(bl_loop_exit_kept, blocks, 256, 0, in.data(), out.data(), n); }},
      {"a local array of 24 bytes kept across barriers",
       [&] { gpulab::launch(bl_odd_sized_array, blocks, 256, 0, in.data(), out.data(), n); }},
      {"in place: reads of what earlier threads of the phase wrote",
       [&] {
         out.upload(h);
         const int workers = emu::workers();
         emu::set_workers(1);  // blocks in order: each writes the next one's first element
         gpulab::launch(bl_in_place_after_barrier, 89, 256, 0, static_cast<const float*>(out.data()), out.data());
         gpulab::synchronize();
         emu::set_workers(workers);
       }},
  };
  expect_the_same_with_block_loops(out, kernels, 30);  // all but the sampled blocks
  // In a file without checks: every block.
  emu::set_check_sampling(false);
  const Runs plain = {
      {"values kept across barriers", [&] { plain_kept_values(in.data(), out.data(), n, 7); }},
      {"a race between barriers", [&] { plain_racy_phases(out.data(), 50, 37); }},
      {"values alike in every thread, and not", [&] { plain_not_alike(in.data(), out.data(), n, 100); }},
      {"dynamic shared memory, poisoned before each block", [&] { plain_dynamic_shared(out.data(), 150); }},
      {"a value from a loop left at a different iteration in each thread, kept across a barrier",
       [&] { plain_loop_exit_kept(in.data(), out.data(), n); }},
      {"a local array of 24 bytes kept across barriers", [&] { plain_odd_sized_array(in.data(), out.data(), n); }},
      {"in place: reads of what earlier threads of the phase wrote",
       [&] {
         out.upload(h);
         const int workers = emu::workers();
         emu::set_workers(1);  // blocks in order: each writes the next one's first element
         plain_in_place_after_barrier(out.data(), 89);
         gpulab::synchronize();
         emu::set_workers(workers);
       }},
  };
  expect_the_same_with_block_loops(out, plain, 49);
}

TEST(BlockLoops, WithWarpCollectivesComputeExactlyWhatTheFibersCompute) {
  Defaults restore;
  const int warp = emu::warp_size();
  struct WarpBack {
    int lanes;
    ~WarpBack() { emu::set_warp_size(lanes); }
  } back{warp};
  const int n = 90 * 256 + 77, blocks = (n + 255) / 256;
  const std::vector<float> h = inputs(n);
  gpulab::DeviceBuffer<float> in(h), out(blocks * 256);  // (some write one element per thread)
  for (const int lanes : {32, 64}) {
    SCOPED_TRACE("warpSize " + std::to_string(lanes));
    emu::set_warp_size(lanes);
    emu::set_check_sampling(true);  // most blocks unchecked: they run as loops
    const Runs kernels = {
        {"a warp sum by down-shuffles, 256 threads", [&] { gpulab::launch(bl_warp_sum, 60, 256, 0, in.data(), out.data(), n); }},
        {"a warp sum by down-shuffles, 128 threads", [&] { gpulab::launch(bl_warp_sum, 60, 128, 0, in.data(), out.data(), n); }},
        {"a scan by up-shuffles", [&] { gpulab::launch(bl_warp_scan, blocks, 256, 0, in.data(), out.data(), n); }},
        {"a scan by up-shuffles, 100 threads (a partial last warp)",
         [&] { gpulab::launch(bl_warp_scan, (n + 99) / 100, 100, 0, in.data(), out.data(), n); }},
        {"every kind, whole warps", [&] { gpulab::launch(bl_warp_mix, blocks, 256, 0, in.data(), out.data(), n, lanes); }},
        {"every kind, segments of 8", [&] { gpulab::launch(bl_warp_mix, blocks, 256, 0, in.data(), out.data(), n, 8); }},
        {"lanes that talk through shared memory", [&] { gpulab::launch(bl_warp_exchange, blocks, 256, 0, out.data()); }},
        {"a race across shuffles and barriers", [&] { gpulab::launch(bl_warp_race, 40, 128, 0, out.data(), 7); }},
        {"a race across shuffles and barriers, 256 threads", [&] { gpulab::launch(bl_warp_race, 40, 256, 0, out.data(), 20); }},
        {"two masks at one shuffle", [&] { gpulab::launch(bl_warp_halves, blocks, 256, 0, out.data()); }},
        {"offsets no lane can use", [&] { gpulab::launch(bl_warp_wild_offsets, blocks, 256, 0, out.data()); }},
    };
    expect_the_same_with_block_loops(out, kernels, 30);  // all but the sampled blocks
    // (the last run's: every lane kept its own value four times)
    const std::vector<float> wild = out.download();
    for (int i = 0; i < blocks * 256; i += 97) EXPECT_EQ(wild[static_cast<std::size_t>(i)], 15.0f * static_cast<float>(i % 256));
    emu::set_check_sampling(false);
    const Runs plain = {
        {"a warp sum by down-shuffles", [&] { plain_warp_sum(in.data(), out.data(), n, 60, 256); }},
        {"every kind, segments of 16", [&] { plain_warp_mix(in.data(), out.data(), n, 128, 16); }},
        {"a race across shuffles and barriers", [&] { plain_warp_race(out.data(), 50, 192, 11); }},
    };
    expect_the_same_with_block_loops(out, plain, 49);
  }
}

TEST(BlockLoops, RunTheThreadsInTheFibersOrderWhateverTheStops) {
  Defaults restore;
  struct WarpBack {
    int lanes;
    ~WarpBack() { emu::set_warp_size(lanes); }
  } back{emu::warp_size()};
  std::mt19937 rng(7);
  int compared = 0;
  for (const int lanes : {32, 64})
    for (const dim3 threads : {dim3(256), dim3(130), dim3(100), dim3(64), dim3(33), dim3(31), dim3(7, 5), dim3(1)})
      for (int rep = 0; rep < 8; ++rep) {
        emu::set_warp_size(lanes);
        const int pattern = static_cast<int>(rng() & 0x7fffffffu), steps = 1 + static_cast<int>(rng() % 12);
        const int n = static_cast<int>(threads.x * threads.y), blocks = 3;
        gpulab::DeviceBuffer<int> tickets(static_cast<std::size_t>(blocks * n * steps));
        const std::function<void()> run = [&] { plain_order(tickets.data(), blocks, threads, pattern, steps); };
        SCOPED_TRACE("warpSize " + std::to_string(lanes) + ", " + std::to_string(n) + " threads, pattern " +
                     std::to_string(pattern) + ", " + std::to_string(steps) + " steps");
        const std::vector<int> fibers = run_once(false, tickets, run);
        const long long before = loop_blocks();
        const std::vector<int> loops = run_once(true, tickets, run);
        EXPECT_EQ(loop_blocks() - before, blocks);
        EXPECT_TRUE(same_bytes(fibers, loops));
        ++compared;
      }
  EXPECT_EQ(compared, 2 * 8 * 8);
}

namespace {
/// The fault the launches of `run` end with (their message), with block loops on or off.
std::string fault_of(bool loops, const std::function<void()>& run) {
  emu::set_block_loops(loops);
  run();
  try {
    gpulab::synchronize();
  } catch (const gpulab::Error& e) {
    return e.what();
  }
  return "(no fault)";
}

using FaultCases = std::vector<std::tuple<const char*, std::function<void()>, const char*>>;

/// Each case (a name, a run that faults, what the fibers' message says) faults with the same
/// message with block loops as without, and runs some blocks as loops.
void expect_the_same_faults(const FaultCases& cases) {
  for (const auto& [name, run, says] : cases) {
    SCOPED_TRACE(name);
    const std::string fibers = fault_of(false, run);
    const long long before = loop_blocks();
    const std::string loops = fault_of(true, run);
    EXPECT_GT(loop_blocks() - before, 0);
    EXPECT_NE(fibers.find(says), std::string::npos) << fibers;
    EXPECT_EQ(loops, fibers);
  }
}
}  // namespace

TEST(BlockLoops, ReportABarrierThatTheThreadsDisagreeOnAsTheFibersDo) {
  Defaults restore;
  gpulab::DeviceBuffer<float> out(8 * 256);
  const FaultCases cases = {
      {"thread 0 returns, thread 1 reaches the barrier", [&] { plain_return_before_barrier(out.data(), 8, 0); },
       "thread (1,0,0) of block (0,0,0) reached __syncthreads, but thread (0,0,0) of block (0,0,0) has already"
       " returned before it"},
      {"thread 200 returns while 200 wait", [&] { plain_return_before_barrier(out.data(), 8, 200); },
       "thread (200,0,0) of block (0,0,0) returned while 200 thread(s) of its block wait at __syncthreads"},
      {"two barriers", [&] { plain_divergent_barriers(out.data(), 8, 100); },
       "thread (100,0,0) of block (0,0,0) waits at this __syncthreads while 100 other thread(s) of its block wait"
       " at "},
  };
  expect_the_same_faults(cases);
}

TEST(BlockLoops, ReportAWarpCollectiveGoneWrongAsTheFibersDo) {
  Defaults restore;
  const int n = 8 * 256;
  const std::vector<float> h = inputs(n);
  gpulab::DeviceBuffer<float> in(h), out(n);
  const FaultCases cases = {
      {"a partial last warp: lane 3 reads lane 4", [&] { plain_shuffle(out.data(), 8, 100); },
       "thread (99,0,0) of block (0,0,0) (lane 3) reads lane 4 in a shuffle, but lane 4 has returned or does not"
       " exist (a partial last warp)"},
      {"a width of 3", [&] { plain_warp_mix(in.data(), out.data(), n, 128, 3); }, "shuffle width 3 must be a power of two"},
      {"lane 16 outside its mask", [&] { plain_warp_narrow_mask(out.data(), 8); },
       "thread (16,0,0) of block (0,0,0) (lane 16) calls __shfl*_sync with mask 0xffff, which does not include its"
       " own lane"},
      {"0xffffffff at 64 lanes a warp: lane 0 reads lane 32",
       [&] {
         emu::set_warp_size(64);
         plain_warp_faults(0, out.data(), 8);
         emu::set_warp_size(32);
       },
       "thread (0,0,0) of block (0,0,0) (lane 0) reads lane 32 in a shuffle, but lane 32 is not in the mask"
       " 0xffffffff"},
      {"two faults at one shuffle: the one the fibers meet first", [&] { plain_warp_faults(1, out.data(), 8); },
       "thread (0,0,0) of block (0,0,0) (lane 0) reads lane 20 in a shuffle, but lane 20 is not in the mask 0xffff"},
      {"a bad width and an empty mask: the width first", [&] { plain_warp_faults(2, out.data(), 8); },
       "shuffle width 3 must be a power of two"},
  };
  expect_the_same_faults(cases);
  // Masks that name each other but differ (undefined behaviour): the fibers deadlock at the
  // barrier after the ballot; a block loop cannot let lane 0 go on alone, and says so at the ballot.
  const std::string fibers = fault_of(false, [&] { plain_warp_faults(3, out.data(), 8); });
  const std::string loops = fault_of(true, [&] { plain_warp_faults(3, out.data(), 8); });
  EXPECT_NE(fibers.find("faulted (deadlock)"), std::string::npos) << fibers;
  EXPECT_NE(loops.find("faulted (deadlock)"), std::string::npos) << loops;
  EXPECT_NE(loops.find("lanes 1,2,3,4,5,6,7,8,... of warp 0 wait at __ballot_sync with mask 0xffffffff for lanes 0"),
            std::string::npos)
      << loops;
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
      "an unchecked block, run as loops over its threads.*GPULAB_EMU_BLOCK_LOOPS=0");
}
