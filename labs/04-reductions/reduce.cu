// Lab 04: reductions. Read labs/04-reductions/README.md first.
//
// This file is correct but slow on purpose. It is the textbook's first shared-memory tree:
//   - one element per thread: a block of 256 threads reduces only 256 elements, so at
//     n = 2^28 the grid has a million blocks, each paying for a whole tree;
//   - interleaved addressing: at level s only threads with tid % (2s) == 0 add, so every warp
//     stays busy (half of its lanes idle, then 3/4, ...) through five levels, with a barrier
//     after each of the eight levels;
//   - one atomicAdd per block onto *result, which therefore needs a kernel that zeroes it first
//     (*result holds NaN before the call: an atomicAdd onto it gives NaN).
// Grade it with `./gpulab grade 04`: correct, but the emulator counts about 600 shared-memory
// wavefronts per 1024 elements where the reference needs fewer than 5.
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

namespace {

constexpr int kThreads = 256;  // threads per block; a power of two (the tree halves it)

// *result must start at zero before the blocks add into it.
__global__ void zero_result(float* result) { *result = 0.0f; }

// Block b sums x[b*256 .. b*256+255] in a shared tree and adds its sum into *result.
__global__ void reduce_interleaved(const float* x, int n, float* result) {
  __shared__ float partial[kThreads];
  const int tid = threadIdx.x;
  const int i = blockIdx.x * kThreads + tid;
  partial[tid] = i < n ? x[i] : 0.0f;
  __syncthreads();
  // TODO (README, "A tree in shared memory"): sequential addressing (the active threads are the
  // first s, reading partial[tid + s]) keeps whole warps idle instead of every warp half busy.
  for (int s = 1; s < kThreads; s *= 2) {
    if (tid % (2 * s) == 0) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  // TODO (README, "Warp shuffles"): once 2 * s <= warpSize, finish inside a warp with
  // __shfl_down_sync, offsets from warpSize / 2 down: never a literal 32.
  if (tid == 0) atomicAdd(result, partial[0]);
}

}  // namespace

// TODO (README, "Many elements per thread" and "Combining the blocks"): a grid-stride loop with
// float4 loads over a fixed number of blocks, then one launch that combines the blocks' sums
// (the last block to finish adds them up) instead of a zeroing kernel and a chain of atomics.
void reduce_sum(const float* x, int n, float* result) {
  zero_result<<<1, 1>>>(result);
  reduce_interleaved<<<(n + kThreads - 1) / kThreads, kThreads>>>(x, n, result);
}
