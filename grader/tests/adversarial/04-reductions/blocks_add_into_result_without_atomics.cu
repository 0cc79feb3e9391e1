// The reference's grid-stride loop and block sum, then thread 0 of every block adds its block's
// sum into *result with a plain load and store (after a launch that sets it to 0), instead of an
// atomicAdd or the last-block hand-over. On a GPU the blocks run at the same time and sums are
// lost; the emulator runs blocks one after another on each worker, so the result is usually right
// there. The sanitizer's check between blocks finds the read-modify-write of one word by two
// blocks, the same way every run.
// defence: cross-block-races
// expect[emu]: sanitizer fail "cross-block race"
// expect[emu]: sanitizer fail "blocks_add_into_result_without_atomics.cu:"
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;

__device__ float warp_sum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    v += __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(offset));
  return v;
}

__device__ float block_sum(float v) {
  __shared__ float warp_sums[kThreads];
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  const int warps = (blockDim.x + warpSize - 1) / warpSize;
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = 0.0f;
  if (warp == 0) {
    for (int w = lane; w < warps; w += warpSize) v += warp_sums[w];
    v = warp_sum(v);
  }
  return v;
}

__global__ void set_zero(float* result) { *result = 0.0f; }

__global__ void add_block_sums(const float* x, int n, float* result) {
  const int stride = gridDim.x * blockDim.x;
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) v += x[i];
  v = block_sum(v);
  if (threadIdx.x == 0) *result = *result + v;
}

}  // namespace

void reduce_sum(const float* x, int n, float* result) {
  const int blocks = (n + kThreads * 4 - 1) / (kThreads * 4) < kMaxBlocks ? (n + kThreads * 4 - 1) / (kThreads * 4) : kMaxBlocks;
  set_zero<<<1, 1>>>(result);
  add_block_sums<<<blocks, kThreads>>>(x, n, result);
}
