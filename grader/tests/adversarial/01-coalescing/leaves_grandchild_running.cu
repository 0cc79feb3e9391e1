// Leaves a grandchild running (fork, the child exits, the grandchild sleeps holding the lab
// process's stdout and stderr): the grader must neither wait for it nor leave it behind.
// Otherwise a correct solution. (The grandchild gives up after two minutes in any case.)
// defence: symbols,sandbox
// expect: lab fail
// expect: correctness fail "no processes or threads"
#include <unistd.h>

#include <cstdlib>

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

void leave_grandchild() {
  if (fork() != 0) return;
  if (fork() != 0) std::abort();  // the child goes at once
  for (int i = 0; i < 1200; ++i) usleep(100000);
  std::abort();
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  static const bool left = (leave_grandchild(), true);
  (void)left;
  gpulab::launch(row_sum_block, n, kThreads, 0, m, sums, n);
}
