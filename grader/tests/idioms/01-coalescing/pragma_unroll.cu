// Idiom: #pragma unroll: each thread keeps four float4 loads of its row in flight per loop trip
// (a fixed-count inner loop the compiler unrolls), then the rest one by one.
// expect: lab pass
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;

__device__ float block_sum(float v) {
  __shared__ float warp_sums[64];
#pragma unroll
  for (int offset = 32; offset > 0; offset /= 2)
    if (offset < warpSize) v += __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(offset));
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  const int warps = (static_cast<int>(blockDim.x) + warpSize - 1) / warpSize;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? warp_sums[lane] : 0.0f;
#pragma unroll
    for (int offset = 32; offset > 0; offset /= 2)
      if (offset < warpSize) v += __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(offset));
  }
  return v;
}

__global__ void row_sum_float4(const float* __restrict__ m, float* __restrict__ sums, int n) {
  const float4* row = reinterpret_cast<const float4*>(m + static_cast<long long>(blockIdx.x) * n);
  const int count = n / 4, stride = blockDim.x;
  float s = 0.0f;
  int c = threadIdx.x;
  for (; c + (kUnroll - 1) * stride < count; c += kUnroll * stride) {
    float4 q[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) q[k] = row[c + k * stride];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) s += (q[k].x + q[k].y) + (q[k].z + q[k].w);
  }
  for (; c < count; c += stride) {
    const float4 q = row[c];
    s += (q.x + q.y) + (q.z + q.w);
  }
  s = block_sum(s);
  if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

__global__ void row_sum_scalar(const float* __restrict__ m, float* __restrict__ sums, int n) {
  const float* row = m + static_cast<long long>(blockIdx.x) * n;
  float s = 0.0f;
#pragma unroll 4
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
