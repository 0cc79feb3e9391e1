// float4 loads over n / 4 vectors, and nothing for the n % 4 floats after the last one: every n
// that is not a multiple of 4 comes out short (by up to 3 elements).
// expect: lab fail
// expect: correctness fail "short by"
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

__global__ void zero_result(float* result) { *result = 0.0f; }

__global__ void reduce_vectors(const float4* x4, int n4, float* result) {
  __shared__ float warp_sums[256];
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
    const float4 q = x4[i];
    v += (q.x + q.y) + (q.z + q.w);
  }
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down_sync(gpulab::full_mask(), v, offset);
  if (threadIdx.x % warpSize == 0) warp_sums[threadIdx.x / warpSize] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.0f;
    for (int w = 0; w < static_cast<int>(blockDim.x / warpSize); ++w) t += warp_sums[w];
    atomicAdd(result, t);
  }
}

void reduce_sum(const float* x, int n, float* result) {
  zero_result<<<1, 1>>>(result);
  const int n4 = n / 4;
  const int blocks = (n4 + 1023) / 1024 > 0 ? ((n4 + 1023) / 1024 < 1024 ? (n4 + 1023) / 1024 : 1024) : 1;
  reduce_vectors<<<blocks, 256>>>(reinterpret_cast<const float4*>(x), n4, result);
}
