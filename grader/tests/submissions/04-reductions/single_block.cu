// One block of 1024 threads walks the whole array (grid-stride with a grid of one), shuffles,
// and writes *result: correct, and on the emulator its loads and shared traffic look as good as
// the reference's. But it runs on one SM of the GPU: the emulator's per-request counts pass it;
// its record of each launch's grid fails it (performance.spreads_over_the_gpu), and a GPU grade's
// timing does (the lesson's "What each back-end can see").
// expect[emu]: lab fail
// expect[emu]: correctness pass
// expect[emu]: performance.coalesced_loads pass
// expect[emu]: performance.shared_memory_work pass
// expect[emu]: performance.spreads_over_the_gpu fail "at most 1 of an H200's 132 multiprocessors"
// expect[cuda]: lab fail
// expect[cuda]: performance fail "of the vendor library's speed"
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

__global__ void reduce_one_block(const float* x, int n, float* result) {
  __shared__ float warp_sums[1024];
  float v = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) v += x[i];
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down_sync(gpulab::full_mask(), v, offset);
  if (threadIdx.x % warpSize == 0) warp_sums[threadIdx.x / warpSize] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.0f;
    for (int w = 0; w < static_cast<int>(blockDim.x / warpSize); ++w) t += warp_sums[w];
    *result = t;
  }
}

void reduce_sum(const float* x, int n, float* result) { reduce_one_block<<<1, 1024>>>(x, n, result); }
