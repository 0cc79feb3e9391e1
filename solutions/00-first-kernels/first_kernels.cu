// Lab 00 reference: SAXPY two ways. One thread per element on a grid sized to n, and a
// grid-stride loop on the caller's grid. In both, neighbouring threads take neighbouring
// elements, so each warp-wide load of x or y is one fully used 128-byte request.
#include "gpulab/gpu.hpp"
#include "first_kernels.hpp"

namespace {

constexpr int kThreads = 256;

// Thread i of the grid handles element i; the threads of the last block past n do nothing.
__global__ void scale_add_per_element(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) y[i] = a * x[i] + y[i];
}

// Each thread starts at its global index and steps by the size of the whole grid: at every step
// the grid's threads cover one contiguous stretch of blockDim.x * gridDim.x elements. 64-bit
// indices: i + stride must not overflow when n is close to 2^31.
__global__ void scale_add_strided(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  const long long stride = static_cast<long long>(blockDim.x) * gridDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = a * x[i] + y[i];
}

}  // namespace

void scale_add(int n, float a, const float* x, float* y) {
  const int blocks = (n + kThreads - 1) / kThreads;  // rounded up: the last block may be partial
  gpulab::launch(scale_add_per_element, blocks, kThreads, 0, n, a, x, y);
}

void scale_add_grid_stride(int n, float a, const float* x, float* y, int blocks, int threads) {
  gpulab::launch(scale_add_strided, blocks, threads, 0, n, a, x, y);
}
