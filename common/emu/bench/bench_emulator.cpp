// What the emulator's mechanisms cost on this CPU. Run: build/emu/common/emu/tests/emu_bench
//   barrier_per_thread   one __syncthreads, per emulated thread (blocks of 256 threads)
//   shuffle_per_thread   one __shfl_down_sync, per emulated thread
//   transpose_1024       a tiled 1024 x 1024 transpose (1M threads): plain (0), traced (1), and
//                        traced during a watch (2: the grader's per-byte access bitmaps)
//   kernel/K/M           the five kernels of the emulator's speed table (K: 0 32x32 tiled transpose
//                        1024^2, 1 shared-memory block reduce 2^22, 2 shuffle reduce 2^22, 3 naive
//                        SGEMM 512^3, 4 16x16-tiled SGEMM 512^3, 5 a thread per element scaling
//                        2^22 floats, as labs 01 and 02 do), each run as (M) 0 plain C++ loops
//                        on the CPU (the CPU's own limit for that work), 1 the kernel compiled
//                        without instrumentation, 2 traced (metrics + sanitizer), 3 traced during a
//                        watch (what a graded call pays), 4 traced with sampled blocks
//                        (GPULAB_EMU_CHECKS=sample). Every mode's output is checked against
//                        the loops'. docs/results/emu-speed.sh runs it on one worker and writes the
//                        table (docs/results/emulator-speed.md).
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <string>
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


// ---- the speed table: kernels against plain loops --------------------------------------------

constexpr int kTransposeN = 1024, kReduceN = 1 << 22, kReduceBlocks = 256, kGemmN = 512, kScaleN = 1 << 22;
const char* const kKernelNames[] = {"transpose 32x32 1024^2", "block reduce 2^22", "shuffle reduce 2^22",
                                    "naive SGEMM 512^3", "tiled 16x16 SGEMM 512^3", "scale 2^22, a thread per element"};
const char* const kModeNames[] = {"plain C++ loops", "kernel, no checks", "kernel, traced", "kernel, traced + watched",
                                  "kernel, traced, sampled blocks"};

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

void loop_transpose(const float* in, float* out, int n) {
  for (int y0 = 0; y0 < n; y0 += 32)
    for (int x0 = 0; x0 < n; x0 += 32)
      for (int y = y0; y < y0 + 32; ++y)
        for (int x = x0; x < x0 + 32; ++x) out[x * n + y] = in[y * n + x];
}

float loop_sum(const float* in, int n, float scale) {
  float s = 0;
  for (int i = 0; i < n; ++i) s += in[i] * scale;
  return s;
}

void loop_scale(const float* in, float* out, int n) {
  for (int i = 0; i < n; ++i) out[i] = 2.0f * in[i];
}

void loop_sgemm(const float* a, const float* b, float* c, int n) {  // i-k-j: the inner loop vectorises
  for (int i = 0; i < n * n; ++i) c[i] = 0;
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      const float aik = a[i * n + k];
      for (int j = 0; j < n; ++j) c[i * n + j] += aik * b[k * n + j];
    }
}

// Largest |x - y| / (1 + |y|) over the outputs (sums: the block partials added up).
double output_error(int kernel, const std::vector<float>& got, const std::vector<float>& want) {
  if (kernel == 1 || kernel == 2) {
    double s = 0;
    for (float x : got) s += x;
    return std::abs(s - want[0]) / (1.0 + std::abs(want[0]));
  }
  double e = 0;
  for (std::size_t i = 0; i < want.size(); ++i) e = std::max(e, std::abs(double(got[i]) - want[i]) / (1.0 + std::abs(want[i])));
  return e;
}

void kernel_speed(benchmark::State& state) {
  const int kernel = static_cast<int>(state.range(0)), mode = static_cast<int>(state.range(1));
  const bool gemm = kernel == 3 || kernel == 4, reduce = kernel == 1 || kernel == 2, scale = kernel == 5;
  const int n = gemm ? kGemmN : reduce ? kReduceN : scale ? kScaleN : kTransposeN;
  const std::size_t in_size = reduce || scale ? std::size_t(n) : std::size_t(n) * n;
  const std::vector<float> a = random_floats(in_size, 1), b = random_floats(gemm ? in_size : 0, 2);
  const std::size_t out_size = reduce ? kReduceBlocks : scale ? std::size_t(n) : std::size_t(n) * n;
  std::vector<float> want(reduce ? 1 : out_size);
  // The loops' result, the reference for every mode.
  if (kernel == 0) loop_transpose(a.data(), want.data(), n);
  if (kernel == 1) want[0] = loop_sum(a.data(), n, 1.0f);
  if (kernel == 2) want[0] = loop_sum(a.data(), n, 1.0001f);
  if (gemm) loop_sgemm(a.data(), b.data(), want.data(), n);
  if (scale) loop_scale(a.data(), want.data(), n);

  gpulab::DeviceBuffer<float> da(a), db(gemm ? b : std::vector<float>(1)), dout(out_size);
  std::vector<float> host(out_size);
  const TwinKernels k = mode >= 2 ? traced_kernels() : plain_kernels();
  gpulab::emu::set_check_sampling(mode == 4);
  auto once = [&] {
    switch (kernel) {
      case 0: k.transpose(da.data(), dout.data(), n); break;
      case 1: k.block_reduce(da.data(), dout.data(), n, kReduceBlocks); break;
      case 2: k.reduce(da.data(), dout.data(), n, kReduceBlocks); break;
      case 3: k.sgemm_naive(da.data(), db.data(), dout.data(), n); break;
      case 4: k.sgemm_tiled(da.data(), db.data(), dout.data(), n); break;
      default: k.scale(da.data(), dout.data(), n); break;
    }
  };
  for (auto _ : state) {
    if (mode == 0) {
      if (kernel == 0) loop_transpose(a.data(), host.data(), n);
      if (kernel == 1) host[0] = loop_sum(a.data(), n, 1.0f);
      if (kernel == 2) host[0] = loop_sum(a.data(), n, 1.0001f);
      if (gemm) loop_sgemm(a.data(), b.data(), host.data(), n);
      if (scale) loop_scale(a.data(), host.data(), n);
      benchmark::DoNotOptimize(host.data());
      continue;
    }
    if (mode == 3) gpulab::emu::begin_watch();
    once();
    if (mode == 3) gpulab::emu::end_watch();
    gpulab::emu::reset_metrics();
  }
  if (mode != 0) host = dout.download();
  if (mode == 0 && reduce) host.assign(1, host[0]);
  const double err = output_error(kernel, host, want);
  gpulab::emu::set_check_sampling(false);
  if (err > 1e-3) state.SkipWithError(("output differs from the loops' by " + std::to_string(err)).c_str());
  state.SetLabel(std::string(kKernelNames[kernel]) + " | " + kModeNames[mode]);
}

void kernel_speed_args(benchmark::internal::Benchmark* b) {
  for (int kernel = 0; kernel < 6; ++kernel)
    for (int mode = 0; mode < 5; ++mode) b->Args({kernel, mode});
}

}  // namespace

BENCHMARK(barrier_per_thread)->Unit(benchmark::kMillisecond);
BENCHMARK(shuffle_per_thread)->Unit(benchmark::kMillisecond);
BENCHMARK(transpose_1024)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK(kernel_speed)->Apply(kernel_speed_args)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
