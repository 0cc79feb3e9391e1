// Lab 04, step 2 (the intermediate that places the thresholds): the stub's tree with two fixes
// from the lesson, and still one block per 512 elements.
//   - sequential addressing: at level s the first s threads add partial[tid + s]; the active
//     threads are whole warps, the idle warps skip the level (no divergence inside a warp once
//     s >= warpSize, and neighbouring lanes read neighbouring words: no bank conflicts);
//   - the first add during the load: each thread adds two elements, 256 threads cover 512.
// What it still pays: log2(256) = 8 levels, each with a barrier, per 512 elements; one atomicAdd
// per block onto *result (2^19 of them at n = 2^28), and the zeroing launch before it.
// Emulator: 90 shared-memory wavefronts per 1024 elements (the reference: 4.5). It must fail
// performance on every back-end: the thresholds sit above it (the verdict suite grades this file).
// expect: lab fail
// expect: correctness pass
// expect[emu]: sanitizer pass
// expect[emu]: performance fail "shared-memory wavefronts"
// expect[cuda]: performance fail "of the vendor library's speed"
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

namespace {

constexpr int kThreads = 256;

__global__ void zero_result(float* result) { *result = 0.0f; }

__global__ void reduce_sequential(const float* x, int n, float* result) {
  __shared__ float partial[kThreads];
  const int tid = threadIdx.x;
  const int i = blockIdx.x * (2 * kThreads) + tid;
  partial[tid] = (i < n ? x[i] : 0.0f) + (i + kThreads < n ? x[i + kThreads] : 0.0f);
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(result, partial[0]);
}

}  // namespace

void reduce_sum(const float* x, int n, float* result) {
  zero_result<<<1, 1>>>(result);
  reduce_sequential<<<(n + 2 * kThreads - 1) / (2 * kThreads), kThreads>>>(x, n, result);
}
