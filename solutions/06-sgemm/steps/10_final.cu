// Step 10 - final: the reference solution (solutions/06-sgemm/sgemm.cu).
//
// Change vs step 09: the same algorithm (sgemm_tiled_kernel.cuh) with every tile size a
// template parameter, set to the shapes that measured fastest on the H200 (bench/sgemm_tune.cu,
// docs/results/sgemm-h200.md):
//   * 128 threads per 128 x 128 block instead of 256, each computing 8 x 16 outputs (128
//     accumulators, ~232 registers) instead of 8 x 8. Per k a thread now does 128 FMAs for 6
//     float4 shared loads (step 09: 64 for 4), so shared-memory instructions take a smaller
//     share of the issue slots; 2 blocks (8 warps) per SM are enough to hide latency because
//     each warp has 128 independent FMAs per k. (cuBLAS's own FP32 kernel on the H200 makes
//     the same trade: 254 registers, 8 warps per SM.)
//   * 64 x 64 tiles when the 128 x 128 tiles would be fewer than the SMs (1024^3: 64 tiles
//     for 132 SMs), so that every SM gets work.
//   * sizes that are not tile multiples run the same kernel with bounds-checked loads and
//     stores instead of falling back to step 03; blocks visit tiles in bands of rows.
#include "sgemm.hpp"
#include "steps.hpp"

void sgemm_step10_final(int M, int N, int K, float alpha, const float* A, const float* B,
                        float beta, float* C) {
  sgemm(M, N, K, alpha, A, B, beta, C);
}
