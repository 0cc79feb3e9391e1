// Idiom: vector types as values: a float4 accumulator built with make_float4, rows read through
// reinterpret_cast<const float4*>, and the four lanes of the vector added at the end.
// expect: lab pass
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

constexpr int kThreads = 256;

__device__ float block_sum(float v) {
  __shared__ float warp_sums[64];
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    v += __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(offset));
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  const int warps = (static_cast<int>(blockDim.x) + warpSize - 1) / warpSize;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? warp_sums[lane] : 0.0f;
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
      v += __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(offset));
  }
  return v;
}

__device__ inline float4 add4(float4 a, float4 b) { return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); }

__global__ void row_sum_float4(const float* __restrict__ m, float* __restrict__ sums, int n) {
  const float4* row = reinterpret_cast<const float4*>(m + static_cast<long long>(blockIdx.x) * n);
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  for (int c = threadIdx.x; c < n / 4; c += blockDim.x) acc = add4(acc, row[c]);
  const float s = block_sum((acc.x + acc.y) + (acc.z + acc.w));
  if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

__global__ void row_sum_scalar(const float* __restrict__ m, float* __restrict__ sums, int n) {
  const float* row = m + static_cast<long long>(blockIdx.x) * n;
  float2 acc = make_float2(0.0f, 0.0f);  // two chains of additions instead of one
  int c = threadIdx.x;
  for (; c + static_cast<int>(blockDim.x) < n; c += 2 * blockDim.x) {
    acc.x += row[c];
    acc.y += row[c + blockDim.x];
  }
  if (c < n) acc.x += row[c];
  const float s = block_sum(acc.x + acc.y);
  if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  if (n % 4 == 0 && reinterpret_cast<unsigned long long>(m) % 16 == 0)
    row_sum_float4<<<n, kThreads>>>(m, sums, n);
  else
    row_sum_scalar<<<n, kThreads>>>(m, sums, n);
}
