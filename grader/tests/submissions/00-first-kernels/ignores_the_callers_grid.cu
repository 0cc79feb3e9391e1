// scale_add_grid_stride ignores the grid it is given and launches one thread per element, as
// scale_add does: the results are right, but the contract asks for exactly the caller's grid
// (the point of the function is a loop that works on any grid). Only a traced emulator (clang)
// sees the launches' shapes: a GPU grade checks them in its emulator run where that is a clang
// build, and cannot where only g++ built it.
// expect[emu]: lab fail
// expect[emu]: correctness.grid_stride_small_grids fail "the contract asks for exactly the caller's grid, 3 block(s) of 64 threads"
// expect[emu]: correctness.tiny_sizes pass
#include "gpulab/gpu.hpp"
#include "first_kernels.hpp"

__global__ void per_element(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

void scale_add(int n, float a, const float* x, float* y) {
  gpulab::launch(per_element, (n + 255) / 256, 256, 0, n, a, x, y);
}

void scale_add_grid_stride(int n, float a, const float* x, float* y, int, int) {
  gpulab::launch(per_element, (n + 255) / 256, 256, 0, n, a, x, y);
}
