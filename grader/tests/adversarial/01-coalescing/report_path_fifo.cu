// The --json report path is a FIFO that nobody reads (opening it for writing would block for ever): the grader must refuse it at once with exit status 2
// and say why, not hang, follow it or grade for nothing. The submission is a correct solution.
// defence: reports
// report: fifo
// Undefended, the grade blocks until the test stops it: 30 s show that as well as the default 120.
// limit: 30
// expect: exit 2 "FIFO"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

constexpr int kThreads = 256;

// One block per row; a tree in shared memory combines the threads' partial sums.
__global__ void row_sum_block(const float* m, float* sums, int n) {
  __shared__ float part[kThreads];
  const int t = static_cast<int>(threadIdx.x);
  const float* row = m + static_cast<long long>(blockIdx.x) * n;
  float s = 0.0f;
  for (int c = t; c < n; c += kThreads) s += row[c];
  part[t] = s;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (t < stride) part[t] += part[t + stride];
    __syncthreads();
  }
  if (t == 0) sums[blockIdx.x] = part[0];
}

}  // namespace

void row_sum(const float* m, float* sums, int n) { gpulab::launch(row_sum_block, n, kThreads, 0, m, sums, n); }
