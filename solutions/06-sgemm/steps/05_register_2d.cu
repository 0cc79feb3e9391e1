// Step 05 - 2D register blocking: each thread computes an 8 x 8 block of C.
//
// Change vs step 04: a block computes a 128 x 128 tile with 256 threads, each owning 8 rows
// x 8 columns (64 accumulators). Per k, a thread loads 8 values of A and 8 of B from shared
// memory into registers and does their 64 products (an outer product).
// Why: step 04 did 9 shared loads per 8 FMAs; this does 16 per 64, four times fewer, and the
// block tile is twice as wide, halving global traffic per FLOP again (each element of a tile
// is reused 128 times). Arithmetic intensity per thread is what makes a GEMM compute-bound.
// What is still slow (Nsight Compute on the H200, docs/results/sgemm-h200.md): global loads
// are scalar (4 + 4 instructions per thread per tile); to serve the A values the compiler loads
// whole rows of As (8 consecutive k, 16 bytes at a time) and keeps all 64 of them live, so the
// kernel needs 166 registers and only one block (8 warps) fits on an SM; and the 16 lanes that
// read B do so 32 bytes apart, which costs 40% extra shared-memory wavefronts (bank
// conflicts). Steps 06, 07 and 09 remove these one at a time.
// Fast path: M, N multiples of 128, K a multiple of 8; other sizes use step 03.
// Measured on the H200 (4096^3): +26%, 21.4 TFLOP/s.
#include "gpulab/gpu.hpp"
#include "steps.hpp"

namespace {

constexpr int kBM = 128, kBN = 128, kBK = 8, kTM = 8, kTN = 8;
constexpr int kThreads = (kBM / kTM) * (kBN / kTN);  // 256

__global__ void __launch_bounds__(kThreads)
    register_2d_kernel(int /*M: whole tiles*/, int N, int K, float alpha, const float* A,
                       const float* B, float beta, float* C) {
  __shared__ float As[kBM][kBK];
  __shared__ float Bs[kBK][kBN];
  const int t = threadIdx.x;
  const int row0 = (t / (kBN / kTN)) * kTM;  // first of this thread's 8 rows in the tile
  const int col0 = (t % (kBN / kTN)) * kTN;  // first of its 8 columns
  const int block_row = blockIdx.y * kBM, block_col = blockIdx.x * kBN;
  A += static_cast<size_t>(block_row) * K;
  B += block_col;
  C += static_cast<size_t>(block_row) * N + block_col;

  float acc[kTM][kTN] = {};
  for (int k0 = 0; k0 < K; k0 += kBK) {
    // 1024 elements of each tile, 4 per thread; consecutive threads read consecutive floats.
#pragma unroll
    for (int i = 0; i < kBM * kBK / kThreads; ++i) {
      const int e = t + i * kThreads;
      As[e / kBK][e % kBK] = A[(e / kBK) * K + k0 + e % kBK];
      Bs[e / kBN][e % kBN] = B[(k0 + e / kBN) * N + e % kBN];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float a[kTM], b[kTN];
#pragma unroll
      for (int i = 0; i < kTM; ++i) a[i] = As[row0 + i][k];
#pragma unroll
      for (int j = 0; j < kTN; ++j) b[j] = Bs[k][col0 + j];
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kTM; ++i)
#pragma unroll
    for (int j = 0; j < kTN; ++j) {
      float* c = &C[(row0 + i) * N + col0 + j];
      *c = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *c;
    }
}

}  // namespace

void sgemm_step05_register_2d(int M, int N, int K, float alpha, const float* A,
                              const float* B, float beta, float* C) {
  if (M % kBM != 0 || N % kBN != 0 || K % kBK != 0) {
    sgemm_step03_smem_tiling(M, N, K, alpha, A, B, beta, C);
    return;
  }
  const dim3 grid(N / kBN, M / kBM);
  gpulab::launch(register_2d_kernel, grid, kThreads, 0, M, N, K, alpha, A, B, beta, C);
}
