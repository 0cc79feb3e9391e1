// One float per thread and loop trip, plus a loop that never runs: eight independent float4 loads
// per trip behind a condition no input meets (n < 0). nvcc must keep the dead loop (n is known
// only at run time), so the PTX has a loop of 128 bytes per trip, the most of any; a prediction
// from the PTX alone would credit the hand-in with enough bytes in flight. The emulator's
// grade weighs each loop by the loads the measured call actually issued from its lines: the dead
// loop issued none, and the real one (4 bytes per trip) is predicted at 0.59 of CUB, below 0.8.
// Correct at 32 and 64 lanes (offsets from warpSize).
// expect: correctness pass
// expect[emu]: lab fail
// expect[emu]: performance fail "Little's law"
// needs: nvcc (the emulator's speed verdict reads the loads per trip from nvcc's PTX)
// expect[cuda]: lab fail
// expect[cuda]: performance fail "of the vendor library's speed"
// (the cuda lines: graded on the H200 on 2026-12-01, 0.564 of CUB at 2^28, reading at 0.625 of the
// copy kernel's bandwidth; docs/results/verdicts-h200.tsv)
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

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
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
  if (n < 0) {  // never: eight float4 loads per trip that only the PTX sees
    const float4* x4 = reinterpret_cast<const float4*>(x);
    const int stride = gridDim.x * blockDim.x;
    for (int i = threadIdx.x; i < -n; i += 8 * stride) {
      float4 q[8];
      for (int k = 0; k < 8; ++k) q[k] = x4[i + k * stride];
      for (int k = 0; k < 8; ++k) v += q[k].x + q[k].y + q[k].z + q[k].w;
    }
  }
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

void reduce_sum(const float* x, int n, float* result) {
  const int blocks = (n + 1023) / 1024 < 1024 ? (n + 1023) / 1024 : 1024;
  reduce<<<blocks, 256>>>(x, n, result);
}
