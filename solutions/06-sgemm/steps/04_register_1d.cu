// Step 04 - 1D register blocking: each thread computes 8 elements of one column of C.
//
// Change vs step 03: a block computes a 64 x 64 tile of C with 512 threads (64 x 64 / 8);
// the K loop walks in tiles of 8. Per k, a thread loads one value of B from shared memory
// into a register and reuses it for 8 FMAs (one per row it owns), reading the 8 values of A
// as broadcasts (all threads of a warp own the same 8 rows).
// Why: step 03 did 2 shared loads per FMA, so shared-memory bandwidth capped it. Here it is
// 9 shared loads per 8 FMAs, and the 8 accumulators are independent, which gives the
// scheduler instruction-level parallelism. Global traffic also halves again (64-wide tiles).
// Fast path: M, N multiples of 64 and K a multiple of 8; other sizes use step 03.
// Measured on the H200 (4096^3): +91%, 16.9 TFLOP/s.
#include "gpulab/gpu.hpp"
#include "steps.hpp"

namespace {

constexpr int kBM = 64, kBN = 64, kBK = 8, kTM = 8;
constexpr int kThreads = kBM * kBN / kTM;  // 512

__global__ void __launch_bounds__(kThreads)
    register_1d_kernel(int /*M: whole tiles*/, int N, int K, float alpha, const float* A,
                       const float* B, float beta, float* C) {
  __shared__ float As[kBM][kBK];
  __shared__ float Bs[kBK][kBN];
  const int t = threadIdx.x;
  const int col = t % kBN;         // the column of the tile this thread owns
  const int row0 = (t / kBN) * kTM;  // the first of its 8 rows
  const int block_row = blockIdx.y * kBM, block_col = blockIdx.x * kBN;
  A += static_cast<size_t>(block_row) * K;
  B += block_col;
  C += static_cast<size_t>(block_row) * N + block_col;

  float acc[kTM] = {};
  for (int k0 = 0; k0 < K; k0 += kBK) {
    // 512 threads copy 64 x 8 of A and 8 x 64 of B: one element each, coalesced.
    As[t / kBK][t % kBK] = A[(t / kBK) * K + k0 + t % kBK];
    Bs[t / kBN][t % kBN] = B[(k0 + t / kBN) * N + t % kBN];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      const float b = Bs[k][col];
#pragma unroll
      for (int i = 0; i < kTM; ++i) acc[i] += As[row0 + i][k] * b;
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    float* c = &C[(row0 + i) * N + col];
    *c = beta == 0.0f ? alpha * acc[i] : alpha * acc[i] + beta * *c;
  }
}

}  // namespace

void sgemm_step04_register_1d(int M, int N, int K, float alpha, const float* A,
                              const float* B, float beta, float* C) {
  if (M % kBM != 0 || N % kBN != 0 || K % kBK != 0) {
    sgemm_step03_smem_tiling(M, N, K, alpha, A, B, beta, C);
    return;
  }
  const dim3 grid(N / kBN, M / kBM);
  gpulab::launch(register_1d_kernel, grid, kThreads, 0, M, N, K, alpha, A, B, beta, C);
}
