// scale_add_grid_stride launches the caller's grid, as it must, but each thread handles only its
// own index: with fewer threads than elements the rest of y is never written.
// expect: lab fail
// expect: correctness.grid_stride_small_grids fail "never written"
// expect: correctness.grid_stride_small_grids fail "Grid-stride loops"
// expect: correctness.grid_stride_large_grids pass
// expect: correctness.tiny_sizes pass
#include "gpulab/gpu.hpp"
#include "first_kernels.hpp"

__global__ void per_element(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

void scale_add(int n, float a, const float* x, float* y) {
  gpulab::launch(per_element, (n + 255) / 256, 256, 0, n, a, x, y);
}

void scale_add_grid_stride(int n, float a, const float* x, float* y, int blocks, int threads) {
  gpulab::launch(per_element, blocks, threads, 0, n, a, x, y);  // one element per thread: not enough
}
