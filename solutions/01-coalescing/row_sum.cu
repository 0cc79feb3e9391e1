// Lab 01 reference: cooperative row sums. One block per row; neighbouring threads read
// neighbouring addresses, so each warp-wide load is one fully used 128-byte (or, with float4,
// 512-byte) request instead of 32 scattered sectors.
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

constexpr int kThreads = 256;

// Sum of `v` over the whole block, valid in thread 0. Warp shuffles first (no shared memory,
// no barrier), then one value per warp through shared memory. Works for any warpSize.
__device__ float block_sum(float v) {
  __shared__ float warp_sums[64];
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    v += __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(offset));
  const int lane = gpulab::lane_id(), warp = gpulab::warp_id();
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

// Rows start on 16-byte boundaries when n % 4 == 0: read them as float4, 16 bytes per thread.
__global__ void row_sum_cooperative_float4(const float* __restrict__ m, float* __restrict__ sums, int n) {
  const float4* row = reinterpret_cast<const float4*>(m + static_cast<long long>(blockIdx.x) * n);
  float s = 0.0f;
  for (int c = threadIdx.x; c < n / 4; c += blockDim.x) {
    const float4 q = row[c];
    s += (q.x + q.y) + (q.z + q.w);
  }
  s = block_sum(s);
  if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

// Any n: one float per thread per step.
__global__ void row_sum_cooperative(const float* __restrict__ m, float* __restrict__ sums, int n) {
  const float* row = m + static_cast<long long>(blockIdx.x) * n;
  float s = 0.0f;
  for (int c = threadIdx.x; c < n; c += blockDim.x) s += row[c];
  s = block_sum(s);
  if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  const bool aligned = reinterpret_cast<unsigned long long>(m) % 16 == 0;
  if (n % 4 == 0 && aligned)
    gpulab::launch(row_sum_cooperative_float4, n, kThreads, 0, m, sums, n);
  else
    gpulab::launch(row_sum_cooperative, n, kThreads, 0, m, sums, n);
}
