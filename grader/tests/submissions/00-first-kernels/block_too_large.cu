// Blocks of 2048 threads: more than any GPU allows (1024). The launch fails before any thread
// runs; gpulab::launch reports it at the line of the launch, as GPULAB_CHECK(cudaGetLastError())
// would after a <<<>>> launch.
// expect: lab fail
// expect: correctness fail "block_too_large.cu:21"
// expect: correctness fail "2048"
#include "gpulab/gpu.hpp"
#include "first_kernels.hpp"

__global__ void per_element(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void strided(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}

void scale_add(int n, float a, const float* x, float* y) {
  const int threads = 2048;
  gpulab::launch(per_element, (n + threads - 1) / threads, threads, 0, n, a, x, y);
}

void scale_add_grid_stride(int n, float a, const float* x, float* y, int blocks, int threads) {
  gpulab::launch(strided, blocks, threads, 0, n, a, x, y);
}
