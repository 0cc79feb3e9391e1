// docs/results/perfmodel/ladder/count_test.cu - the instruction-counting pass counts what the emulated
// threads execute: known counts from kernels whose work is plain to see.
//
//   1. each of 3 x 64 threads runs a loop of `iters` fused multiply-adds over two loaded floats:
//      exactly 3 * 64 * iters FMAs and 2 * 3 * 64 * iters loads of the loop (a data-dependent
//      trip count, so the compiler cannot fold it), plus a few per thread outside the loop;
//   2. the same launch with twice the iterations: the loop's counts double, the rest does not move;
//   3. a thread that returns at once (tid >= n) adds no FMA;
//   4. host code of this file run outside a launch is not counted.
// ctest runs it on 1 worker and on 4 (GPULAB_EMU_WORKERS): the exact counts hold on both.
// Exit 0 when every check holds; each failure prints what was expected and what was counted.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "gpulab/emu/metrics.hpp"
#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"

__global__ void fma_loop(const float* a, const float* b, float* out, int n, int iters) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  float s = 0.0f;
  for (int i = 0; i < iters; ++i) s = a[(t + i) % n] * b[i % n] + s;
  out[t] = s;
}

namespace {

int failures = 0;

void expect(bool ok, const char* what, long long want, long long got) {
  if (!ok) {
    std::printf("FAIL %s: expected %lld, counted %lld\n", what, want, got);
    ++failures;
  } else {
    std::printf("ok   %s: %lld\n", what, got);
  }
}

gpulab::emu::InstructionCounts run(const float* a, const float* b, float* out, int n, int threads, int iters) {
  gpulab::emu::reset_instruction_counts();
  fma_loop<<<(threads + 63) / 64, 64>>>(a, b, out, n, iters);
  gpulab::synchronize();
  return gpulab::emu::instruction_counts();
}

float host_work(const std::vector<float>& v) {  // compiled with the pass, run on the host
  float s = 0;
  for (float x : v) s = x * 1.5f + s;
  return s;
}

}  // namespace

int main() {
  namespace in = gpulab::emu::instr;
  const int n = 192, iters = 100;
  std::vector<float> h(n, 1.0f);
  auto* a = static_cast<float*>(gpulab::device_malloc(n * sizeof(float)));
  auto* b = static_cast<float*>(gpulab::device_malloc(n * sizeof(float)));
  auto* out = static_cast<float*>(gpulab::device_malloc(n * sizeof(float)));
  gpulab::copy_to_device(a, h.data(), n * sizeof(float));
  gpulab::copy_to_device(b, h.data(), n * sizeof(float));

  const auto c1 = run(a, b, out, n, n, iters);
  expect(c1[in::fma32] == 1LL * n * iters, "FMAs of 192 threads x 100 iterations", 1LL * n * iters, c1[in::fma32]);
  expect(c1[in::fp32] >= c1[in::fma32], "float instructions include the FMAs", c1[in::fma32], c1[in::fp32]);
  const auto c2 = run(a, b, out, n, n, 2 * iters);
  expect(c2[in::fma32] == 2LL * n * iters, "FMAs with twice the iterations", 2LL * n * iters, c2[in::fma32]);
  // Each iteration loads a[] and b[]: the loads of the second run exceed the first's by exactly
  // 2 per thread and extra iteration.
  expect(c2[in::load] - c1[in::load] == 2LL * n * iters, "loads added by 100 more iterations per thread",
         2LL * n * iters, c2[in::load] - c1[in::load]);
  expect(c2[in::total] > c1[in::total], "more work, more instructions", c1[in::total], c2[in::total]);

  const auto c3 = run(a, b, out, n, 2 * n, iters);  // 192 more threads, all returning at once
  expect(c3[in::fma32] == c1[in::fma32], "threads that return at once add no FMA", c1[in::fma32], c3[in::fma32]);
  expect(c3[in::total] > c1[in::total], "but their test and return count", c1[in::total], c3[in::total]);

  gpulab::emu::reset_instruction_counts();
  const float hs = host_work(h);
  const auto c4 = gpulab::emu::instruction_counts();
  expect(c4[in::total] == 0 && hs == 1.5f * n, "host code of the kernel file counts nothing", 0, c4[in::total]);

  gpulab::device_free(a);
  gpulab::device_free(b);
  gpulab::device_free(out);
  std::printf("%s\n", failures ? "FAILED" : "all counts as expected");
  return failures ? 1 : 0;
}
