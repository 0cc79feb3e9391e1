// Keeps its running total and its count of finished warps in __device__ variables, which start at
// zero when the program loads, and never resets them: the first call is right, every later call
// counts past the last warp (so *result is never written: NaN) or adds onto the previous total.
// expect: lab fail
// expect: correctness.repeated_calls fail "NaN"
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

__device__ float total;       // 0 at load time, never reset
__device__ unsigned int done;  // 0 at load time, never reset

__global__ void reduce_warps(const float* x, int n, float* result) {
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down_sync(gpulab::full_mask(), v, offset);
  if (threadIdx.x % warpSize != 0) return;
  atomicAdd(&total, v);
  __threadfence();
  const unsigned warps = gridDim.x * ((blockDim.x + warpSize - 1) / warpSize);
  if (atomicAdd(&done, 1u) == warps - 1) *result = atomicAdd(&total, 0.0f);
}

void reduce_sum(const float* x, int n, float* result) {
  const int blocks = (n + 1023) / 1024 < 1024 ? (n + 1023) / 1024 : 1024;
  reduce_warps<<<blocks, 256>>>(x, n, result);
}
