// Leaves every 97th row unwritten (it keeps the grader's NaN poison).
// expect: lab fail
// expect: correctness fail "NaN"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n || r % 97 == 5) return;
  float s = 0;
  for (int c = 0; c < n; ++c) s += m[static_cast<long long>(r) * n + c];
  sums[r] = s;
}

void row_sum(const float* m, float* sums, int n) { gpulab::launch(rows, (n + 127) / 128, 128, 0, m, sums, n); }
