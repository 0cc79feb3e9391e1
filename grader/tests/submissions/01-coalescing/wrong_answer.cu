// Off by one: each row sum also adds the first element of the next row.
// expect: lab fail
// expect: correctness fail "row sums are wrong"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  float s = 0;
  for (int c = 0; c <= n && r * n + c < n * n; ++c) s += m[r * n + c];
  sums[r] = s;
}

void row_sum(const float* m, float* sums, int n) { gpulab::launch(rows, (n + 127) / 128, 128, 0, m, sums, n); }
