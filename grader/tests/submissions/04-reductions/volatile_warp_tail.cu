// The classic warp-synchronous tail: a shared tree down to 64 values, then the first 32 threads
// finish through a volatile pointer with no barrier, trusting the 32 lanes to run in lock-step.
// Since Volta (independent thread scheduling) nothing guarantees that: a lane may read
// partial[tid + 16] before its neighbour has added into it. The emulator runs lanes one after
// the other between barriers, as the GPU may: the race is reported (at warp 32 and 64) and the
// sum comes out wrong.
// expect: lab fail
// expect[emu]: sanitizer fail "race"
// expect[emu]: correctness fail "reduce_sum"
// expect[cuda]: sanitizer fail "race"
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

__global__ void zero_result(float* result) { *result = 0.0f; }

__global__ void reduce_tree_volatile_tail(const float* x, int n, float* result) {
  __shared__ float partial[256];
  const int tid = threadIdx.x;
  const int i = blockIdx.x * 512 + tid;
  partial[tid] = (i < n ? x[i] : 0.0f) + (i + 256 < n ? x[i + 256] : 0.0f);
  __syncthreads();
  for (int s = 128; s > 32; s /= 2) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    volatile float* p = partial;
    p[tid] += p[tid + 32];
    p[tid] += p[tid + 16];
    p[tid] += p[tid + 8];
    p[tid] += p[tid + 4];
    p[tid] += p[tid + 2];
    p[tid] += p[tid + 1];
  }
  if (tid == 0) atomicAdd(result, partial[0]);
}

void reduce_sum(const float* x, int n, float* result) {
  zero_result<<<1, 1>>>(result);
  reduce_tree_volatile_tail<<<(n + 511) / 512, 256>>>(x, n, result);
}
