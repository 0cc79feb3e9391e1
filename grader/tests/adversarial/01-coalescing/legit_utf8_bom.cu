// A correct, coalesced solution saved by an editor that starts files with a UTF-8 byte order mark:
// it must compile and pass (the grader puts a #line directive in front, so the mark must go).
// defence: staging
// expect: lab pass
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

constexpr int kThreads = 256;

// One block per row: thread t adds columns t, t + 256, ... (neighbouring threads read neighbouring
// floats), then a tree in shared memory combines the 256 partial sums.
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
