// One atomicAdd per block onto *result, which is never zeroed: *result holds NaN before the call
// (the contract says it may hold anything and must not be read), and NaN + anything is NaN.
// expect: lab fail
// expect: correctness fail "NaN"
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

__global__ void reduce_atomic(const float* x, int n, float* result) {
  __shared__ float warp_sums[256];
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down_sync(gpulab::full_mask(), v, offset);
  if (threadIdx.x % warpSize == 0) warp_sums[threadIdx.x / warpSize] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.0f;
    for (int w = 0; w < static_cast<int>(blockDim.x / warpSize); ++w) t += warp_sums[w];
    atomicAdd(result, t);  // reads *result: NaN before the call
  }
}

void reduce_sum(const float* x, int n, float* result) {
  const int blocks = (n + 1023) / 1024 < 1024 ? (n + 1023) / 1024 : 1024;
  reduce_atomic<<<blocks, 256>>>(x, n, result);
}
