// A correct grid-stride sum with one float per thread and loop trip (predicted at 0.59 of CUB on
// the H200, 0.565 measured there; the grade needs 0.8) with an #error that only nvcc sees: the
// bytes in flight come from nvcc's PTX, and without it the speed check said "no speed prediction"
// and passed. Two defences, each alone: the source-text rule refuses a test of __CUDACC__, and a
// prediction the hand-in denies fails.
// Now, besides, the emulator's grade fails a file that nvcc, here, refuses (gpu-compiler).
// defence: source-text,prediction-required,gpu-compiler
// defence[cuda]: none (on a GPU nvcc's compile is the program: nvcc itself refuses the file)
// needs: nvcc
// expect[emu]: lab fail
// expect[emu]: performance fail
// expect[cuda]: lab fail
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

#ifdef __CUDACC__
#error "no PTX for the grader"
#endif

namespace {

__device__ float block_sums[1024];
__device__ unsigned int blocks_done;

__device__ float warp_sum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down_sync(gpulab::full_mask(), v, offset);
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

}  // namespace

void reduce_sum(const float* x, int n, float* result) {
  const int blocks = (n + 1023) / 1024 < 1024 ? (n + 1023) / 1024 : 1024;
  reduce<<<blocks, 256>>>(x, n, result);
}
