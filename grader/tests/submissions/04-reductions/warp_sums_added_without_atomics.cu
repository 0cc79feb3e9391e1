// Each warp reduces its part with shuffles, and its lane 0 adds the warp's sum to the result with a
// plain load and store (`*result += s`) instead of atomicAdd. On a GPU the warps of a block, and
// the blocks, add at the same time: sums are lost and the result is short. The emulator runs a
// block's warps one after another, so inside a block nothing is lost, and between blocks only when
// two worker threads collide (some runs, not others: no correctness verdict is stated for it
// there). Its sanitizer reports the race every run: a warp's lane 0 loads the result another warp
// of its block stored, with no __syncthreads between them.
// expect: lab fail
// expect[emu]: sanitizer fail "read-after-write race"
// expect[emu]: sanitizer fail "warp_sums_added_without_atomics.cu:"
// expect[cuda]: correctness fail
// (the cuda line: graded on the H200 on 2026-12-01: every correctness check fails, compute-sanitizer
// finds nothing (racecheck watches shared memory only), and the portability run, the emulator built
// by g++ without memory tracing, fails 4 checks when blocks on its 16 worker threads collide:
// docs/results/verdicts-h200.tsv)
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

__global__ void zero_result(float* result) { *result = 0.0f; }

__global__ void reduce_by_warps(const float* x, int n, float* result) {
  float s = 0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n; i += stride) s += x[i];
  for (int o = warpSize / 2; o > 0; o /= 2) s += __shfl_down_sync(gpulab::full_mask(), s, o);
  if (gpulab::lane_id() == 0) *result += s;  // BUG: warps race on one word (atomicAdd)
}

void reduce_sum(const float* x, int n, float* result) {
  zero_result<<<1, 1>>>(result);
  reduce_by_warps<<<1024, 256>>>(x, n, result);
}
