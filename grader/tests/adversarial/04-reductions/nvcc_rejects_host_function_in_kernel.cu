// A correct grid-stride sum with one float per thread and loop trip (predicted at 0.59 of CUB on
// the H200, 0.565 measured there; the grade needs 0.8) and one call nvcc refuses in device code:
// std::max, a constexpr host function, in the loop's bound (clang runs it in a kernel; nvcc and
// so a GPU build refuse it without --expt-relaxed-constexpr). No macro: every compiler reads the
// same file, but nvcc's PTX, from which the bytes in flight are read, cannot be had, and the speed
// check used to say "no speed prediction" and pass. Now a prediction the hand-in denies fails.
// And the emulator's grade now fails a file that nvcc, here, refuses (a GPU build would), before it
// runs (gpu-compiler); without that, the prediction the hand-in denies fails (prediction-required).
// defence: prediction-required,gpu-compiler
// defence[cuda]: none (on a GPU nvcc's compile is the program: nvcc itself refuses the file)
// needs: nvcc
// expect[emu]: lab fail
// expect[emu]: correctness fail "does not compile for a GPU"
// expect[cuda]: correctness fail "does not compile"
#include <algorithm>

#include "gpulab/gpu.hpp"
#include "reduce.hpp"

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
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < std::max(n, 0); i += gridDim.x * blockDim.x) v += x[i];
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
