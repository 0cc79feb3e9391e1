// Half-ported to 64 lanes: the mask is gpulab::full_mask() and the lanes and warps come from
// warpSize, but the shuffle offsets still start at 16. At 64 lanes lane 0 adds lanes 0-31 only:
// the sums of lanes 32-63 are dropped, about half of the input (README, "32-lane code on 64-lane
// wavefronts" measures it). The emulator cannot name a line here: no rule is broken, the
// arithmetic is wrong, and the exact integer-valued check says by how much.
// expect[emu]: lab fail
// expect[emu]: correctness fail "short by"
// expect[emu]: correctness fail "warp 64"
// Its speed: one 4-byte load per thread and loop trip (nvcc's PTX), too few bytes in flight to
// cover the DRAM's latency. The H200 measured 0.565 of CUB at 2^28 (the GPU grade needs 0.8); the
// emulator's grade predicts 0.59 from the bytes in flight (rubric, predicted_fraction_of_vendor).
// expect[emu]: performance fail "Little's law"
// needs: nvcc (the emulator's speed verdict reads the loads per trip from nvcc's PTX)
// expect[cuda]: performance fail "of the vendor library's speed"
// expect[cuda]: lab fail
// expect[cuda]: correctness pass
// expect[cuda]: portability fail "warp size 64"
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

__device__ float block_sums[1024];
__device__ unsigned int blocks_done;

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(gpulab::full_mask(), v, offset);
  return v;
}

__device__ float block_sum(float v) {
  __shared__ float warp_sums[256];
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = 0.0f;
  if (warp == 0) {
    for (int w = lane; w < static_cast<int>(blockDim.x / warpSize); w += warpSize) v += warp_sums[w];
    v = warp_sum(v);
  }
  return v;
}

__global__ void reduce(const float* x, int n, float* result) {
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
  v = block_sum(v);
  __shared__ bool last;
  if (threadIdx.x == 0) {
    block_sums[blockIdx.x] = v;
    __threadfence();
    last = atomicAdd(&blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  float w = 0.0f;
  for (int b = threadIdx.x; b < static_cast<int>(gridDim.x); b += blockDim.x) w += ((volatile float*)block_sums)[b];
  w = block_sum(w);
  if (threadIdx.x == 0) {
    *result = w;
    blocks_done = 0;
  }
}

void reduce_sum(const float* x, int n, float* result) {
  const int blocks = (n + 1023) / 1024 < 1024 ? (n + 1023) / 1024 : 1024;
  reduce<<<blocks, 256>>>(x, n, result);
}
