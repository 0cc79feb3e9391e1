// Idiom: the block size chosen by cudaOccupancyMaxPotentialBlockSize (the size that fills a
// multiprocessor best), so the kernel works for whatever size the device's limits give.
// expect: lab pass
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

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

// The block size the occupancy calculator suggests, at most 512 (a row of 16384 floats is 4096
// float4: more threads would each load too little).
int block_size_for(void (*kernel)(const float*, float*, int)) {
  int min_grid = 0, block = 0;
  if (cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, kernel, 0, 512) != cudaSuccess || block <= 0) return 256;
  return block;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  static const int vector_block = block_size_for(row_sum_float4);
  static const int scalar_block = block_size_for(row_sum_scalar);
  if (n % 4 == 0 && reinterpret_cast<unsigned long long>(m) % 16 == 0)
    row_sum_float4<<<n, vector_block>>>(m, sums, n);
  else
    row_sum_scalar<<<n, scalar_block>>>(m, sums, n);
}
