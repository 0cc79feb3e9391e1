// Correct, and each thread even reads consecutive addresses, as a CPU loop would: thread t handles
// elements 8t ... 8t + 7. But at each step the 32 threads of a warp read addresses 32 bytes apart,
// one sector each for 4 useful bytes: 12.5% of what is moved is used.
// expect[emu]: lab fail
// expect: correctness pass
// expect[emu]: sanitizer pass
// expect[emu]: performance.coalesced_global_loads fail "neighbouring threads read addresses 32 bytes apart"
// expect[emu]: performance.grid_stride_coalesced_loads pass
// expect[cuda]: performance.bandwidth_vs_copy fail "of the copy bandwidth"
#include "gpulab/gpu.hpp"
#include "first_kernels.hpp"

constexpr int kPerThread = 8;

__global__ void chunk_of_eight(int n, float a, const float* x, float* y) {
  const int first = (blockIdx.x * blockDim.x + threadIdx.x) * kPerThread;
  for (int k = 0; k < kPerThread; ++k) {
    const int i = first + k;
    if (i < n) y[i] = a * x[i] + y[i];
  }
}

__global__ void strided(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}

void scale_add(int n, float a, const float* x, float* y) {
  const int threads = 256, per_block = threads * kPerThread;
  gpulab::launch(chunk_of_eight, (n + per_block - 1) / per_block, threads, 0, n, a, x, y);
}

void scale_add_grid_stride(int n, float a, const float* x, float* y, int blocks, int threads) {
  gpulab::launch(strided, blocks, threads, 0, n, a, x, y);
}
