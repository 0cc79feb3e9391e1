// Step 06 - float4 loads: move 16 bytes per instruction between global and shared memory.
//
// Change vs step 05: each thread copies one float4 of the A tile and one float4 of the B tile
// per K step (instead of 4 + 4 scalar loads and stores), reads its 8 values of B per k as two
// float4s, and writes C as float4s.
// Why: fewer load/store instructions for the same bytes leave more issue slots for FMAs, and a
// 16-byte access per lane is the widest there is. Requires 16-byte aligned pointers and rows
// that are multiples of 4 floats (checked on the host: other sizes take the step 03 path).
// Measured on the H200: +11%. The shared-memory side did not change: nvcc had already merged
// step 05's scalar shared loads into 16-byte ones (same instruction count in Nsight Compute).
// What is still slow: As is stored as As[m][k], so a thread's 8 values of A for one k lie in 8
// rows, 8 floats apart; the compiler reads whole rows of As instead (all 8 k at once) and keeps
// 64 values of A in registers: 149 registers, one block per SM (step 07).
#include "gpulab/gpu.hpp"
#include "steps.hpp"

namespace {

constexpr int kBM = 128, kBN = 128, kBK = 8, kTM = 8, kTN = 8;
constexpr int kThreads = (kBM / kTM) * (kBN / kTN);  // 256

__global__ void __launch_bounds__(kThreads)
    float4_loads_kernel(int /*M: whole tiles*/, int N, int K, float alpha, const float* A,
                        const float* B, float beta, float* C) {
  __align__(16) __shared__ float As[kBM][kBK];
  __align__(16) __shared__ float Bs[kBK][kBN];
  const int t = threadIdx.x;
  const int row0 = (t / (kBN / kTN)) * kTM;
  const int col0 = (t % (kBN / kTN)) * kTN;
  const int block_row = blockIdx.y * kBM, block_col = blockIdx.x * kBN;
  A += static_cast<size_t>(block_row) * K;
  B += block_col;
  C += static_cast<size_t>(block_row) * N + block_col;
  // This thread's float4 of each tile: A row a_row, k a_k..a_k+3; B row b_row, columns b_col..+3.
  const int a_row = t / (kBK / 4), a_k = (t % (kBK / 4)) * 4;
  const int b_row = t / (kBN / 4), b_col = (t % (kBN / 4)) * 4;

  float acc[kTM][kTN] = {};
  for (int k0 = 0; k0 < K; k0 += kBK) {
    *reinterpret_cast<float4*>(&As[a_row][a_k]) =
        *reinterpret_cast<const float4*>(&A[a_row * K + k0 + a_k]);
    *reinterpret_cast<float4*>(&Bs[b_row][b_col]) =
        *reinterpret_cast<const float4*>(&B[(k0 + b_row) * N + b_col]);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float a[kTM], b[kTN];
#pragma unroll
      for (int i = 0; i < kTM; ++i) a[i] = As[row0 + i][k];
#pragma unroll
      for (int j = 0; j < kTN; j += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&Bs[k][col0 + j]);
        b[j] = v.x, b[j + 1] = v.y, b[j + 2] = v.z, b[j + 3] = v.w;
      }
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
    for (int j = 0; j < kTN; j += 4) {
      float4* c = reinterpret_cast<float4*>(&C[(row0 + i) * N + col0 + j]);
      float4 out = make_float4(alpha * acc[i][j], alpha * acc[i][j + 1], alpha * acc[i][j + 2],
                               alpha * acc[i][j + 3]);
      if (beta != 0.0f) {  // beta == 0: C is never read
        const float4 old = *c;
        out.x += beta * old.x, out.y += beta * old.y, out.z += beta * old.z, out.w += beta * old.w;
      }
      *c = out;
    }
}

}  // namespace

void sgemm_step06_float4_loads(int M, int N, int K, float alpha, const float* A,
                               const float* B, float beta, float* C) {
  using sgemm_steps::aligned16;
  if (M % kBM != 0 || N % kBN != 0 || K % kBK != 0 || !aligned16(A) || !aligned16(B) ||
      !aligned16(C)) {
    sgemm_step03_smem_tiling(M, N, K, alpha, A, B, beta, C);
    return;
  }
  const dim3 grid(N / kBN, M / kBM);
  gpulab::launch(float4_loads_kernel, grid, kThreads, 0, M, N, K, alpha, A, B, beta, C);
}
