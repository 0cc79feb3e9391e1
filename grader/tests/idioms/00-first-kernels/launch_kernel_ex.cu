// Idiom: CUDA 12's extensible launch API: cudaLaunchKernelEx with a cudaLaunchConfig_t (grid,
// block, dynamic shared bytes, stream, no extra attributes); the cudaError_t it returns is
// checked with GPULAB_CHECK.
// expect: lab pass
#include <cuda_runtime.h>

#include "gpulab/gpu.hpp"
#include "first_kernels.hpp"

namespace {

constexpr int kThreads = 256;

__global__ void scale_add_per_element(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void scale_add_strided(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  const long long stride = static_cast<long long>(blockDim.x) * gridDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = a * x[i] + y[i];
}

// One launch described by a cudaLaunchConfig_t; the launch's status is returned, not printed.
template <class Kernel>
cudaError_t launch_ex(Kernel kernel, int blocks, int threads, int n, float a, const float* x, float* y) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = 0;
  config.stream = nullptr;
  config.attrs = nullptr;
  config.numAttrs = 0;
  return cudaLaunchKernelEx(&config, kernel, n, a, x, y);
}

}  // namespace

void scale_add(int n, float a, const float* x, float* y) {
  const int blocks = (n + kThreads - 1) / kThreads;
  GPULAB_CHECK(launch_ex(scale_add_per_element, blocks, kThreads, n, a, x, y));
}

void scale_add_grid_stride(int n, float a, const float* x, float* y, int blocks, int threads) {
  GPULAB_CHECK(launch_ex(scale_add_strided, blocks, threads, n, a, x, y));
}
