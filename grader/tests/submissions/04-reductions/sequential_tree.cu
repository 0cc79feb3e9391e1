// The lesson's intermediate step (solutions/04-reductions/steps/2_sequential_tree.cu): correct,
// sequential addressing and the first add during the load, but still a tree and an atomicAdd per
// 512 elements. It must fail performance on every back-end: the thresholds sit above it.
// expect: lab fail
// expect: correctness pass
// expect[emu]: sanitizer pass
// expect[emu]: performance fail "shared-memory wavefronts"
// expect[cuda]: performance fail "of CUB's speed"
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
