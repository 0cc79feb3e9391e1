// What the emulator's mechanisms cost on this CPU. Run: build/emu/common/emu/tests/emu_bench
//   barrier_per_thread   one __syncthreads, per emulated thread (blocks of 256 threads)
//   shuffle_per_thread   one __shfl_down_sync, per emulated thread
//   transpose_1024       a tiled 1024 x 1024 transpose (1M threads): plain (0), traced (1), and
//                        traced during a watch (2: the grader's per-byte access bitmaps)
#include <benchmark/benchmark.h>

#include <vector>

#include "gpulab/emu/metrics.hpp"
#include "gpulab/emu/watch.hpp"
#include "twin_kernels.hpp"

namespace {

void barrier_per_thread(benchmark::State& state) {
  const int blocks = 8, threads = 256, rounds = 50;
  gpulab::DeviceBuffer<float> out(blocks * threads);
  const TwinKernels k = plain_kernels();
  for (auto _ : state) k.barriers(out.data(), blocks, threads, rounds);
  state.SetItemsProcessed(state.iterations() * blocks * threads * rounds * 2);  // 2 barriers a round
}

void shuffle_per_thread(benchmark::State& state) {
  const int blocks = 8, threads = 256, rounds = 50;
  gpulab::DeviceBuffer<float> out(blocks * threads);
  const TwinKernels k = plain_kernels();
  for (auto _ : state) k.shuffles(out.data(), blocks, threads, rounds);
  state.SetItemsProcessed(state.iterations() * blocks * threads * rounds);
}

void transpose_1024(benchmark::State& state) {
  const int n = 1024;
  const bool traced = state.range(0) != 0, watched = state.range(0) == 2;
  gpulab::DeviceBuffer<float> in(std::vector<float>(n * n, 1.0f)), out(n * n);
  const TwinKernels k = traced ? traced_kernels() : plain_kernels();
  for (auto _ : state) {
    if (watched) gpulab::emu::begin_watch();  // fresh bitmaps each time, as for a graded call
    k.transpose(in.data(), out.data(), n);
    if (watched) gpulab::emu::end_watch();
    gpulab::emu::reset_metrics();
  }
  state.SetLabel(watched ? "traced, watched" : traced ? "traced (metrics + sanitizer)" : "plain");
  state.SetItemsProcessed(state.iterations() * n * n);
}

}  // namespace

BENCHMARK(barrier_per_thread)->Unit(benchmark::kMillisecond);
BENCHMARK(shuffle_per_thread)->Unit(benchmark::kMillisecond);
BENCHMARK(transpose_1024)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
