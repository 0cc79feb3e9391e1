// The barriers are inside `if (threadIdx.x < 128)` of a 256-thread block: a branch every warp
// takes or skips as a whole, so no warp diverges, yet half the block never reaches the barriers.
// Undefined behaviour that a GPU may survive (the upper warps have exited); the emulator stops it.
// expect[emu]: lab fail
// expect[emu]: correctness fail "__syncthreads"
// expect[cuda]: lab fail
// expect[cuda]: portability fail "__syncthreads"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n) {
  __shared__ float buf[256];
  float s = 0;
  for (int c = threadIdx.x; c < n; c += blockDim.x) s += m[static_cast<long long>(blockIdx.x) * n + c];
  buf[threadIdx.x] = s;
  if (threadIdx.x < 128) {
    __syncthreads();
    buf[threadIdx.x] += buf[threadIdx.x + 128];
    __syncthreads();
    if (threadIdx.x == 0) {
      float t = 0;
      for (int i = 0; i < 128; ++i) t += buf[i];
      sums[blockIdx.x] = t;
    }
  }
}

void row_sum(const float* m, float* sums, int n) { gpulab::launch(rows, n, 256, 0, m, sums, n); }
