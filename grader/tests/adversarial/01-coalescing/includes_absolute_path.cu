// Includes a file by absolute path outside the repository and the system's header directories
// (/dev/null: empty, so it compiles; the same directive could pull in any file of the machine).
// defence: includes
// expect: lab fail
// expect: correctness fail "includes /dev/null"
#include "/dev/null"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

constexpr int kThreads = 256;

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
