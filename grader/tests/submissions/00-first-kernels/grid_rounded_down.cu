// The number of blocks is n / 256, rounded down: the last n % 256 elements have no thread, and for
// n < 256 the grid has no block at all.
// expect: lab fail
// expect: correctness fail "were covered"
// expect: correctness fail "rounding up"
#include "gpulab/gpu.hpp"
#include "first_kernels.hpp"

__global__ void per_element(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void strided(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}

void scale_add(int n, float a, const float* x, float* y) {
  if (n >= 256) gpulab::launch(per_element, n / 256, 256, 0, n, a, x, y);  // should be (n + 255) / 256
}

void scale_add_grid_stride(int n, float a, const float* x, float* y, int blocks, int threads) {
  gpulab::launch(strided, blocks, threads, 0, n, a, x, y);
}
