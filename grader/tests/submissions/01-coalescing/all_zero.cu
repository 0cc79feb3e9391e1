// Writes zeros: passes a loose absolute tolerance on random data centred on zero, but not ours.
// expect: lab fail
// expect: correctness fail "row sums are wrong"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void zeros(float* sums, int n) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) sums[r] = 0.0f;
}

void row_sum(const float*, float* sums, int n) { gpulab::launch(zeros, (n + 255) / 256, 256, 0, sums, n); }
