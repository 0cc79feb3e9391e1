// Idiom: a butterfly reduction with __shfl_xor_sync: after log2(warpSize) exchanges every lane
// holds the warp's sum (no lane has to be the one that reads it).
// expect: lab pass
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

constexpr int kThreads = 256;

__device__ float warp_all_sum(float v) {
  for (int mask = warpSize / 2; mask > 0; mask /= 2) v += __shfl_xor_sync(gpulab::full_mask(), v, mask);
  return v;
}

__device__ float block_sum(float v) {
  __shared__ float warp_sums[64];
  v = warp_all_sum(v);
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  const int warps = (static_cast<int>(blockDim.x) + warpSize - 1) / warpSize;
  if (lane == warp % warpSize) warp_sums[warp] = v;  // any lane has the sum: a different one per warp
  __syncthreads();
  return warp_all_sum(lane < warps ? warp_sums[lane] : 0.0f);
}

__global__ void row_sum_float4(const float* __restrict__ m, float* __restrict__ sums, int n) {
  const float4* row = reinterpret_cast<const float4*>(m + static_cast<long long>(blockIdx.x) * n);
  float s = 0.0f;
  for (int c = threadIdx.x; c < n / 4; c += blockDim.x) {
    const float4 q = row[c];
    s += (q.x + q.y) + (q.z + q.w);
  }
  s = block_sum(s);
  if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

__global__ void row_sum_scalar(const float* __restrict__ m, float* __restrict__ sums, int n) {
  const float* row = m + static_cast<long long>(blockIdx.x) * n;
  float s = 0.0f;
  for (int c = threadIdx.x; c < n; c += blockDim.x) s += row[c];
  s = block_sum(s);
  if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  if (n % 4 == 0 && reinterpret_cast<unsigned long long>(m) % 16 == 0)
    row_sum_float4<<<n, kThreads>>>(m, sums, n);
  else
    row_sum_scalar<<<n, kThreads>>>(m, sums, n);
}
