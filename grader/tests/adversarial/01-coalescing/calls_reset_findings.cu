// Calls the emulator's bookkeeping from the submission: after its racy kernel has run, it clears
// the sanitizer's findings (gpulab::emu::reset_findings), so the race is never reported.
// defence: symbols
// expect: lab fail
// expect: correctness fail "no grader internals"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace gpulab::emu {
void reset_findings();  // declared in gpulab/emu/metrics.hpp
}

namespace {

constexpr int kThreads = 256;

__global__ void row_sum_block(const float* m, float* sums, int n) {
  __shared__ float part[kThreads];
  __shared__ int started;
  const int t = static_cast<int>(threadIdx.x);
  started = 1;  // every thread writes it in the same interval: a race
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

void row_sum(const float* m, float* sums, int n) {
  gpulab::launch(row_sum_block, n, kThreads, 0, m, sums, n);
  gpulab::emu::reset_findings();
}
