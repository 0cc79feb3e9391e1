// One thread per element on a grid rounded up, but no bounds check: the threads of the last,
// partly used block past n - 1 load x[i] and store y[i] outside the arrays. On the emulator the
// first load past the end stops the kernel (an out-of-bounds fault, with its line); on a GPU the
// loads read garbage and the stores land in the guard zone after y.
// expect: lab fail
// expect[emu]: correctness fail "no_bounds_check.cu:14"
// expect[emu]: correctness fail "out-of-bounds"
// expect[emu]: sanitizer fail "out-of-bounds"
#include "gpulab/gpu.hpp"
#include "first_kernels.hpp"

__global__ void per_element(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = a * x[i] + y[i];  // missing: if (i < n)
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
