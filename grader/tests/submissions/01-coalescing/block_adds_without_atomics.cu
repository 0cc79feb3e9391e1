// A block per row whose threads add their partial sums straight into the row's result:
// `sums[row] += s` with a plain load and store, no atomicAdd, no reduction. On a GPU the lanes of
// a warp load sums[row] together, add and store together, so all but one partial sum of each
// load-store round is lost: the sums are wrong. The emulator runs a warp's lanes one after
// another, so each lane loads the previous lane's store and the sums come out right there; its
// sanitizer reports the race (a thread loads a device word another thread of its block stored to
// with no __syncthreads between them), so the emulator fails it as the GPU does, for a different
// check.
// expect[emu]: lab fail
// expect[emu]: sanitizer fail "read-after-write race"
// expect[emu]: sanitizer fail "block_adds_without_atomics.cu:"
// expect[emu]: correctness pass
// expect[cuda]: lab fail
// expect[cuda]: correctness fail
// (the cuda lines: graded on the H200 on 2026-12-01: every correctness check fails, by up to 5.9e6
// times the tolerance, compute-sanitizer finds nothing (its racecheck watches shared memory only),
// docs/results/verdicts-h200.tsv)
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows_added_in_place(const float* m, float* sums, int n) {
  float s = 0;
  for (int c = threadIdx.x; c < n; c += blockDim.x) s += m[static_cast<long long>(blockIdx.x) * n + c];
  if (threadIdx.x == 0) sums[blockIdx.x] = 0.0f;
  __syncthreads();
  sums[blockIdx.x] += s;  // BUG: the block's threads race on one word (atomicAdd, or a reduction)
}

void row_sum(const float* m, float* sums, int n) { gpulab::launch(rows_added_in_place, n, 256, 0, m, sums, n); }
