// Coalesced and correct, with a grid that grows with n: one block per row is launched, but every
// block other than block 0 returns at once, and block 0's warps share out all the rows. The grid
// alone says the whole GPU is busy; the emulator also counts the sectors of each block: one block
// moves them all, at n = 512 and at 1024, so at the GPU grade's size one SM reads the whole matrix
// (the busiest block bounds the time, whatever the grid).
// expect: correctness pass
// expect: lab fail
// expect[emu]: performance.coalesced_global_loads pass
// expect[emu]: performance.predicted_fraction_of_copy fail "the busiest block sets the time"
// needs: nvcc (the emulator's speed verdict reads the loads per trip from nvcc's PTX)
// expect[cuda]: performance fail "of the copy kernel's"
// (the cuda line: graded on the H200 on 2026-12-01, 10.4 GB/s = 0.00265 of copy at n = 16384,
// predicted 10.4 GB/s = 0.0027 here; docs/results/verdicts-h200.tsv)
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows_in_block_zero(const float* m, float* sums, int n) {
  if (blockIdx.x != 0) return;
  const int warps = static_cast<int>(blockDim.x) / warpSize;
  for (int r = gpulab::warp_id(); r < n; r += warps) {
    float s = 0;
    for (int c = gpulab::lane_id(); c < n; c += warpSize) s += m[static_cast<long long>(r) * n + c];
    for (int o = warpSize / 2; o > 0; o /= 2) s += __shfl_down_sync(gpulab::full_mask(), s, o);
    if (gpulab::lane_id() == 0) sums[r] = s;
  }
}

void row_sum(const float* m, float* sums, int n) { gpulab::launch(rows_in_block_zero, n, 256, 0, m, sums, n); }
