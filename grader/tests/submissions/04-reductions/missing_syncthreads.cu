// The barrier inside the tree's loop is missing: at level s a thread reads partial[tid + s]
// while the thread that owns it may not have added its own pair yet.
// expect: lab fail
// expect[emu]: sanitizer fail "race"
// expect[cuda]: sanitizer fail "race"
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

__global__ void zero_result(float* result) { *result = 0.0f; }

__global__ void reduce_racy(const float* x, int n, float* result) {
  __shared__ float partial[256];
  const int tid = threadIdx.x;
  const int i = blockIdx.x * 256 + tid;
  partial[tid] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int s = 128; s > 0; s /= 2) {
    if (tid < s) partial[tid] += partial[tid + s];
    // missing: __syncthreads();
  }
  if (tid == 0) atomicAdd(result, partial[0]);
}

void reduce_sum(const float* x, int n, float* result) {
  zero_result<<<1, 1>>>(result);
  reduce_racy<<<(n + 255) / 256, 256>>>(x, n, result);
}
