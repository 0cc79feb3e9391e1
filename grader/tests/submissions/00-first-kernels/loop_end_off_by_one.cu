// The grid-stride loop runs while i <= n: the thread that reaches i == n reads x[n] and y[n] and
// stores y[n], one past the end of both arrays. On the emulator the read of x[n] stops the kernel
// (an out-of-bounds fault, with its line); on a GPU it reads garbage and the store lands in the
// guard zone after y.
// expect: lab fail
// expect[emu]: correctness fail "loop_end_off_by_one.cu:19"
// expect[emu]: correctness fail "out-of-bounds"
// expect[emu]: correctness fail "guard the access with the array's bound"
// expect[emu]: sanitizer fail "out-of-bounds"
#include "gpulab/gpu.hpp"
#include "first_kernels.hpp"

__global__ void per_element(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void strided(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i <= n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}

void scale_add(int n, float a, const float* x, float* y) {
  gpulab::launch(per_element, (n + 255) / 256, 256, 0, n, a, x, y);
}

void scale_add_grid_stride(int n, float a, const float* x, float* y, int blocks, int threads) {
  gpulab::launch(strided, blocks, threads, 0, n, a, x, y);
}
