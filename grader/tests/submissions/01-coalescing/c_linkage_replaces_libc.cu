// The reference, plus an extern "C" function named like a function of the C library that the
// grader's own allow-list does not know (strsignal): the symbol rules read the names of every
// library the runner is linked with, so it is refused, while extern "C" kernels of other names
// are allowed (grader/tests/idioms/01-coalescing/extern_c_kernels.cu).
// expect: lab fail
// expect: correctness fail "a library the lab is linked with"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

constexpr int kThreads = 256;

// Sum of `v` over the whole block, valid in thread 0. Warp shuffles first (no shared memory,
// no barrier), then one value per warp through shared memory. Works for any warpSize.
__device__ float block_sum(float v) {
  __shared__ float warp_sums[64];
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    v += __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(offset));
  const int lane = gpulab::lane_id(), warp = gpulab::warp_id();
  const int warps = (static_cast<int>(blockDim.x) + warpSize - 1) / warpSize;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? warp_sums[lane] : 0.0f;
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
      v += __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(offset));
  }
  return v;
}

// Rows start on 16-byte boundaries when n % 4 == 0: read them as float4, 16 bytes per thread.
__global__ void row_sum_cooperative_float4(const float* __restrict__ m, float* __restrict__ sums, int n) {
  const float4* row = reinterpret_cast<const float4*>(m + static_cast<long long>(blockIdx.x) * n);
  float s = 0.0f;
  for (int c = threadIdx.x; c < n / 4; c += blockDim.x) {
    const float4 q = row[c];
    s += (q.x + q.y) + (q.z + q.w);
  }
  s = block_sum(s);
  if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

// Any n: one float per thread per step.
__global__ void row_sum_cooperative(const float* __restrict__ m, float* __restrict__ sums, int n) {
  const float* row = m + static_cast<long long>(blockIdx.x) * n;
  float s = 0.0f;
  for (int c = threadIdx.x; c < n; c += blockDim.x) s += row[c];
  s = block_sum(s);
  if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

}  // namespace

// A C-linkage function with the name of one of the C library's: the runner's other code (the
// harness, the emulator, the C++ runtime) would call this one instead.
extern "C" char* strsignal(int) {
  static char text[] = "no signal";
  return text;
}

void row_sum(const float* m, float* sums, int n) {
  const bool aligned = reinterpret_cast<unsigned long long>(m) % 16 == 0;
  if (n % 4 == 0 && aligned)
    gpulab::launch(row_sum_cooperative_float4, n, kThreads, 0, m, sums, n);
  else
    gpulab::launch(row_sum_cooperative, n, kThreads, 0, m, sums, n);
}
