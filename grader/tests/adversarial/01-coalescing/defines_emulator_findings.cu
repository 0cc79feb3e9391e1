// Defines the emulator's own sanitizer queries (gpulab::emu::findings, findings_total) in the
// submission so that they report nothing: the kernel's harmless-looking race (every thread sets a
// shared flag) would otherwise fail the sanitizer check.
// On a GPU back-end there is no emulator to fool: the code does not compile there.
// defence: symbols
// defence[cuda]: none
// expect: lab fail
// expect[emu]: correctness fail "no overriding the emulator or the grader"
// expect[cuda]: correctness fail "does not compile"
#include <vector>

#include "gpulab/emu/metrics.hpp"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace gpulab::emu {
std::vector<Finding> findings() { return {}; }
long long findings_total() { return 0; }
}  // namespace gpulab::emu

namespace {

constexpr int kThreads = 256;

__global__ void row_sum_block(const float* m, float* sums, int n) {
  __shared__ float part[kThreads];
  __shared__ int started;
  const int t = static_cast<int>(threadIdx.x);
  started = 1;  // every thread writes it in the same interval: a (benign-looking) race
  const float* row = m + static_cast<long long>(blockIdx.x) * n;
  float s = 0.0f;
  for (int c = t; c < n; c += kThreads) s += row[c];
  part[t] = s;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (t < stride) part[t] += part[t + stride];
    __syncthreads();
  }
  if (t == 0 && started) sums[blockIdx.x] = part[0];
}

}  // namespace

void row_sum(const float* m, float* sums, int n) { gpulab::launch(row_sum_block, n, kThreads, 0, m, sums, n); }
