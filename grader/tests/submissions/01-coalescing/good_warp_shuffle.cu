// A correct cooperative version without vector loads: one block per row, shuffles, shared memory.
// expect: lab pass
// expect: correctness pass
// expect: performance pass
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n) {
  __shared__ float partial[64];
  float s = 0;
  for (int c = threadIdx.x; c < n; c += blockDim.x) s += m[static_cast<long long>(blockIdx.x) * n + c];
  for (int o = warpSize / 2; o > 0; o /= 2) s += __shfl_down_sync(gpulab::full_mask(), s, o);
  if (gpulab::lane_id() == 0) partial[gpulab::warp_id()] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int w = 0; w < (int)(blockDim.x + warpSize - 1) / warpSize; ++w) t += partial[w];
    sums[blockIdx.x] = t;
  }
}

void row_sum(const float* m, float* sums, int n) { gpulab::launch(rows, n, 128, 0, m, sums, n); }
