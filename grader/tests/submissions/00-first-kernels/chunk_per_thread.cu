// A grid-stride function written the CPU way: the caller's threads split the array into one
// contiguous chunk each. Correct on every grid, but neighbouring threads read addresses a whole
// chunk apart: each warp-wide load touches 32 sectors for 32 floats.
// expect[emu]: lab fail
// expect: correctness pass
// expect[emu]: sanitizer pass
// expect[emu]: performance.coalesced_global_loads pass
// expect[emu]: performance.grid_stride_coalesced_loads fail "12.5% of the bytes moved are used"
#include "gpulab/gpu.hpp"
#include "first_kernels.hpp"

__global__ void per_element(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void chunk_each(int n, float a, const float* x, float* y) {
  const long long threads = static_cast<long long>(blockDim.x) * gridDim.x;
  const long long chunk = (n + threads - 1) / threads;
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (long long i = t * chunk; i < (t + 1) * chunk && i < n; ++i) y[i] = a * x[i] + y[i];
}

void scale_add(int n, float a, const float* x, float* y) {
  gpulab::launch(per_element, (n + 255) / 256, 256, 0, n, a, x, y);
}

void scale_add_grid_stride(int n, float a, const float* x, float* y, int blocks, int threads) {
  gpulab::launch(chunk_each, blocks, threads, 0, n, a, x, y);
}
