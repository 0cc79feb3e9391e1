// Assumes 32 lanes: a 0xffffffff mask, offsets from 16 and `% 32`. Right on NVIDIA, wrong at 64.
// expect[emu]: lab fail
// expect[emu]: correctness fail "warp 64"
// expect[cuda]: lab fail
// expect[cuda]: correctness pass
// expect[cuda]: portability fail "warp size 64"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n) {
  __shared__ float partial[32];
  float s = 0;
  for (int c = threadIdx.x; c < n; c += blockDim.x) s += m[static_cast<long long>(blockIdx.x) * n + c];
  for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int w = 0; w < 8; ++w) t += partial[w];
    sums[blockIdx.x] = t;
  }
}

void row_sum(const float* m, float* sums, int n) { gpulab::launch(rows, n, 256, 0, m, sums, n); }
