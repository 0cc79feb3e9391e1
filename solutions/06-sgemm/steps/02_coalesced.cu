// Step 02 - coalesced: threadIdx.x picks the COLUMN of C instead of the row.
//
// Change vs step 01: swap the roles of x and y. Now the 32 threads of a warp share one row of
// A (one address: a broadcast) and read 32 consecutive floats of B and write 32 consecutive
// floats of C (4 sectors of 32 bytes per warp-wide access instead of 32).
// Why: global memory moves whole 32-byte sectors; step 01 used 4 of every 32 bytes it moved.
// Still 2 global loads per FMA, so it is bound by the L1/L2 bandwidth, not by arithmetic.
// Measured on the H200 (4096^3): 12.5x faster than step 01, 6.3 TFLOP/s.
#include "gpulab/gpu.hpp"
#include "steps.hpp"

namespace {

__global__ void coalesced_kernel(int M, int N, int K, float alpha, const float* A,
                                 const float* B, float beta, float* C) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  const int i = row * N + col;
  C[i] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[i];
}

}  // namespace

void sgemm_step02_coalesced(int M, int N, int K, float alpha, const float* A, const float* B,
                            float beta, float* C) {
  const dim3 block(32, 32);
  const dim3 grid((N + 31) / 32, (M + 31) / 32);
  gpulab::launch(coalesced_kernel, grid, block, 0, M, N, K, alpha, A, B, beta, C);
}
