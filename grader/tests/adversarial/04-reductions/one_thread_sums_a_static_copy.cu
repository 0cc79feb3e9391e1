// The sum of one thread, over a copy of x that a grid of 1024 blocks made first in a __device__
// array with the reference's loads (four float4 per thread and trip, neighbouring threads on
// neighbouring elements). The emulator traced device allocations only: the copy's coalesced loads
// were the call's only global loads, its launch the busiest; the one thread's four million reads
// of the static copy were not seen. A kernel file's static data is device memory now: the lone
// thread's loads are global traffic, one sector for four bytes, in a launch of one block.
// defence: static-data
// expect[emu]: performance.coalesced_loads fail "of the bytes moved are used"
// expect[emu]: performance.spreads_over_the_gpu fail "1 block(s)"
// expect[emu]: correctness pass
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

namespace {

constexpr int kCapacity = 4194320;  // the emulator's largest n, rounded up to a float4
__device__ float g_copy[kCapacity];

__global__ void copy_x(const float* x, int n) {
  const int stride = gridDim.x * blockDim.x;
  const int n4 = n / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4* c4 = reinterpret_cast<float4*>(g_copy);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n4; i += 4 * stride) {
    float4 q[4];
    for (int k = 0; k < 4; ++k) q[k] = x4[i + k * stride];
    for (int k = 0; k < 4; ++k) c4[i + k * stride] = q[k];
  }
  for (; i < n4; i += stride) c4[i] = x4[i];
  const int tail = blockIdx.x * blockDim.x + threadIdx.x;
  if (tail < n - 4 * n4) g_copy[4 * n4 + tail] = x[4 * n4 + tail];
}

__global__ void one_thread_sum(int n, float* result) {
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s += g_copy[i];
  *result = s;
}

}  // namespace

void reduce_sum(const float* x, int n, float* result) {
  if (n > kCapacity) return;  // (never at the emulator's sizes)
  copy_x<<<1024, 256>>>(x, n);
  one_thread_sum<<<1, 1>>>(n, result);
}
