// Coalesced and correct, on one block: warp w of a single 1024-thread block sums rows w, w + 32,
// ... (its lanes read neighbouring floats, a shuffle adds them up). Every load request uses all
// its sectors, so the per-request count is perfect, but one multiprocessor of the GPU does all
// the work: on a GPU the time is that of one SM's bytes in flight. The emulator's grade predicts
// the bandwidth from them (nvcc's PTX) and from the grid at the GPU grade's size (1 block at n
// and at n / 4: a fixed grid).
// expect: correctness pass
// expect: lab fail
// expect[emu]: performance.coalesced_global_loads pass
// expect[emu]: performance.predicted_fraction_of_copy fail "(bound by bytes in flight)"
// expect[emu]: performance.predicted_fraction_of_copy fail "1 block(s) here and 1 at the GPU's size"
// needs: nvcc (the emulator's speed verdict reads the loads per trip from nvcc's PTX)
// expect[cuda]: performance fail "of the copy kernel's"
// (the cuda line: graded on the H200 on 2026-12-01, 40.6 GB/s = 0.0104 of copy at n = 16384,
// predicted 40.2 GB/s = 0.0104 here; docs/results/verdicts-h200.tsv)
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows_by_warps(const float* m, float* sums, int n) {
  const int warps = static_cast<int>(blockDim.x) / warpSize;
  for (int r = gpulab::warp_id(); r < n; r += warps) {
    float s = 0;
    for (int c = gpulab::lane_id(); c < n; c += warpSize) s += m[static_cast<long long>(r) * n + c];
    for (int o = warpSize / 2; o > 0; o /= 2) s += __shfl_down_sync(gpulab::full_mask(), s, o);
    if (gpulab::lane_id() == 0) sums[r] = s;
  }
}

void row_sum(const float* m, float* sums, int n) { gpulab::launch(rows_by_warps, 1, 1024, 0, m, sums, n); }
