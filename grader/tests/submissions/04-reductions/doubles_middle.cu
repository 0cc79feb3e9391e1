// The first add during the load, with the array split in two halves: thread i adds x[i] and
// x[i + n/2] for i < (n+1)/2. For odd n the halves overlap: x[n/2] is added twice (and for n = 1
// thread 0 adds x[0] to itself).
// expect: lab fail
// expect: correctness fail "over by"
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

__global__ void zero_result(float* result) { *result = 0.0f; }

__global__ void reduce_halves(const float* x, int n, float* result) {
  __shared__ float partial[256];
  const int tid = threadIdx.x;
  const int half = (n + 1) / 2;
  const int i = blockIdx.x * 256 + tid;
  partial[tid] = i < half ? x[i] + x[i + n / 2] : 0.0f;
  __syncthreads();
  for (int s = 128; s > 0; s /= 2) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(result, partial[0]);
}

void reduce_sum(const float* x, int n, float* result) {
  zero_result<<<1, 1>>>(result);
  reduce_halves<<<((n + 1) / 2 + 255) / 256, 256>>>(x, n, result);
}
