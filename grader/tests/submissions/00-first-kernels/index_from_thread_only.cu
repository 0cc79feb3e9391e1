// The index comes from threadIdx.x alone: every block works on the same first 256 elements (each
// adding its a*x[i] again) and the elements past 255 are never written.
// expect: lab fail
// expect: correctness fail "never written"
// expect: correctness fail "blockIdx.x as well as threadIdx.x"
// expect[emu]: sanitizer fail "cross-block race"
#include "gpulab/gpu.hpp"
#include "first_kernels.hpp"

__global__ void per_element(int n, float a, const float* x, float* y) {
  const int i = threadIdx.x;  // should be blockIdx.x * blockDim.x + threadIdx.x
  if (i < n) y[i] = a * x[i] + y[i];
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
