// Tells the compilers apart by a header only the CUDA Toolkit has (<nv/target>): where it is found
// (nvcc) the sum's loop reads four float4 per thread and trip (predicted at 1.04 of CUB), elsewhere
// (the emulator) one float (0.59), both on the same line. __has_include names no compiler, but
// answers differently for each; it is refused like the compilers' macros.
// defence: source-text
// needs: nvcc
// expect: lab fail
// expect: correctness fail "'__has_include'"
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

// One float per thread and trip (what runs), or four float4 loads per trip (what nvcc is shown),
// expanded on the same line, so that nvcc's PTX puts the wide loads where the emulator counted the
// narrow ones.
#define ONE_FLOAT_PER_TRIP(v, x, n) \
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i]
#define FOUR_FLOAT4_PER_TRIP(v, x, n)                                                            \
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; 16 * i + 15 < n; i += gridDim.x * blockDim.x) { \
    const float4* q = reinterpret_cast<const float4*>(x) + 4 * i;                                \
    const float4 a = q[0], b = q[1], c = q[2], d = q[3];                                         \
    v += a.x + a.y + a.z + a.w + b.x + b.y + b.z + b.w + c.x + c.y + c.z + c.w + d.x + d.y + d.z + d.w; \
  }
#if __has_include(<nv/target>)
#define SUM_LOOP FOUR_FLOAT4_PER_TRIP
#else
#define SUM_LOOP ONE_FLOAT_PER_TRIP
#endif

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
  SUM_LOOP(v, x, n);
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
