// Two statements in the wrong order: the product is stored into y first, then "+ y[i]" reads
// the y just written, not the old one: y[i] ends up 2 a x[i] and the old y is lost.
// expect: lab fail
// expect: correctness fail "overwritten before it was read"
#include "gpulab/gpu.hpp"
#include "first_kernels.hpp"

__global__ void per_element(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = a * x[i];  // the old y[i] is gone from here on
    y[i] = y[i] + y[i];
  }
}

__global__ void strided(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}

void scale_add(int n, float a, const float* x, float* y) {
  gpulab::launch(per_element, (n + 255) / 256, 256, 0, n, a, x, y);
}

void scale_add_grid_stride(int n, float a, const float* x, float* y, int blocks, int threads) {
  gpulab::launch(strided, blocks, threads, 0, n, a, x, y);
}
