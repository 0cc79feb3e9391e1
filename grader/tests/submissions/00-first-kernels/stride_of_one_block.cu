// The grid-stride loop steps by blockDim.x instead of blockDim.x * gridDim.x: block b starts at
// b * blockDim.x and walks to the end, so the blocks' elements overlap and most elements get
// a*x[i] added once per block that reaches them.
// expect: lab fail
// expect: correctness.grid_stride_small_grids fail
// expect[emu]: correctness.grid_stride_small_grids fail "more than once"
// expect: correctness.tiny_sizes pass
// expect[emu]: sanitizer fail "cross-block race"
#include "gpulab/gpu.hpp"
#include "first_kernels.hpp"

__global__ void per_element(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void strided(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x) y[i] = a * x[i] + y[i];
}

void scale_add(int n, float a, const float* x, float* y) {
  gpulab::launch(per_element, (n + 255) / 256, 256, 0, n, a, x, y);
}

void scale_add_grid_stride(int n, float a, const float* x, float* y, int blocks, int threads) {
  gpulab::launch(strided, blocks, threads, 0, n, a, x, y);
}
