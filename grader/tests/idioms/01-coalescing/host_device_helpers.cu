// Idiom: __host__ __device__ helpers (and constexpr ones) shared by host and device code: the same
// functions size the launch on the host and index the rows in the kernel.
// expect: lab pass
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

constexpr int kThreads = 256;

__host__ __device__ constexpr bool is_multiple(long long value, long long of) { return value % of == 0; }
__host__ __device__ inline int vectors_per_row(int n, int width) { return n / width; }
__host__ __device__ inline float horizontal_sum(float4 q) { return (q.x + q.y) + (q.z + q.w); }

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

__global__ void row_sum_float4(const float* __restrict__ m, float* __restrict__ sums, int n) {
  const int per_row = vectors_per_row(n, 4);
  const float4* row = reinterpret_cast<const float4*>(m) + static_cast<long long>(blockIdx.x) * per_row;
  float s = 0.0f;
  for (int c = threadIdx.x; c < per_row; c += blockDim.x) s += horizontal_sum(row[c]);
  s = block_sum(s);
  if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

__global__ void row_sum_scalar(const float* __restrict__ m, float* __restrict__ sums, int n) {
  const float* row = m + static_cast<long long>(blockIdx.x) * vectors_per_row(n, 1);
  float s = 0.0f;
  for (int c = threadIdx.x; c < n; c += blockDim.x) s += row[c];
  s = block_sum(s);
  if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  static_assert(is_multiple(kThreads, 64), "a block is whole warps of 32 and of 64 lanes");
  if (is_multiple(n, 4) && is_multiple(reinterpret_cast<long long>(m), 16))
    row_sum_float4<<<n, kThreads>>>(m, sums, n);
  else
    row_sum_scalar<<<n, kThreads>>>(m, sums, n);
}
