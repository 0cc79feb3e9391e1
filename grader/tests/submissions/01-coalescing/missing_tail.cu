// Launches n / 128 blocks: rows past the last full block are never summed.
// expect: lab fail
// expect: correctness fail "NaN"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  for (int c = 0; c < n; ++c) s += m[static_cast<long long>(r) * n + c];
  sums[r] = s;
}

void row_sum(const float* m, float* sums, int n) {
  if (n >= 128) gpulab::launch(rows, n / 128, 128, 0, m, sums, n);
}
