// Idiom: a warp-synchronous tree in shared memory, each step separated by __syncwarp() (the
// Volta-and-later way to write the last steps of a reduction without block barriers).
// expect: lab pass
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

constexpr int kThreads = 256;

// The sum of v over the block, valid in thread 0: each warp folds its values in shared memory
// with __syncwarp between steps; the first warp then folds the warps' sums the same way.
__device__ float block_sum(float v) {
  __shared__ float values[kThreads];
  __shared__ float warp_sums[64];
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  const int base = warp * warpSize;
  values[threadIdx.x] = v;
  __syncwarp();
  for (int half = warpSize / 2; half > 0; half /= 2) {
    if (lane < half) values[base + lane] += values[base + lane + half];
    __syncwarp();
  }
  if (lane == 0) warp_sums[warp] = values[base];
  __syncthreads();
  const int warps = static_cast<int>(blockDim.x) / warpSize;
  if (warp == 0) {
    for (int half = warps / 2; half > 0; half /= 2) {
      if (lane < half) warp_sums[lane] += warp_sums[lane + half];
      __syncwarp();
    }
  }
  return warp == 0 ? warp_sums[0] : 0.0f;  // other warps must not read it while warp 0 folds
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
  // kThreads is a power of two: the warps of a block are too, for 32- and 64-lane warps.
  if (n % 4 == 0 && reinterpret_cast<unsigned long long>(m) % 16 == 0)
    row_sum_float4<<<n, kThreads>>>(m, sums, n);
  else
    row_sum_scalar<<<n, kThreads>>>(m, sums, n);
}
