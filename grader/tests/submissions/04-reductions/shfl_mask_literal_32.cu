// Written for 32 lanes: the 0xffffffff mask, offsets from 16, `% 32` and `/ 32`. Right on NVIDIA;
// at 64 lanes the mask names half of the warp, and the emulator stops at the shuffle's line.
// expect[emu]: lab fail
// expect[emu]: correctness fail "shfl_mask_literal_32.cu:22"
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

__global__ void zero_result(float* result) { *result = 0.0f; }

__device__ float block_sum_32(float v) {
  __shared__ float warp_sums[8];  // 256 threads / 32
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  v = 0.0f;
  if (threadIdx.x < 32) {
    v = threadIdx.x < 8 ? warp_sums[threadIdx.x] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  return v;
}

__global__ void reduce(const float* x, int n, float* result) {
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
  v = block_sum_32(v);
  if (threadIdx.x == 0) atomicAdd(result, v);
}

void reduce_sum(const float* x, int n, float* result) {
  zero_result<<<1, 1>>>(result);
  const int blocks = (n + 1023) / 1024 < 1024 ? (n + 1023) / 1024 : 1024;
  reduce<<<blocks, 256>>>(x, n, result);
}
